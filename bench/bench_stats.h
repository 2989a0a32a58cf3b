/* Small statistics shared by the prediction benchmarks (predict_bench.c,
 * phases_bench.c). Header-only: each benchmark is one translation unit
 * linked against libpaddiser_internal.a (pd_median). */
#ifndef PD_BENCH_STATS_H
#define PD_BENCH_STATS_H

#include <gsl/gsl_cdf.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"

/* Median of v[0..n) (sorts v in place); NaN when n is 0. */
static inline double bench_median(double *v, size_t n)
{
    return n ? pd_median(v, n) : NAN;
}

/* Smallest and largest of v[0..n) (INFINITY and -INFINITY when n is 0). */
static inline void bench_range(const double *v, size_t n, double *lo, double *hi)
{
    *lo = INFINITY;
    *hi = -INFINITY;
    for (size_t i = 0; i < n; i++) {
        *lo = v[i] < *lo ? v[i] : *lo;
        *hi = v[i] > *hi ? v[i] : *hi;
    }
}

/* Coefficient of variation (sample standard deviation over the mean);
 * NaN with fewer than 2 values. */
static inline double bench_cv(const double *v, size_t n)
{
    if (n < 2)
        return NAN;
    double m = 0, s = 0;
    for (size_t i = 0; i < n; i++)
        m += v[i];
    m /= (double)n;
    for (size_t i = 0; i < n; i++)
        s += (v[i] - m) * (v[i] - m);
    return sqrt(s / (double)(n - 1)) / m;
}

/* A distribution-free 95% confidence interval of the median of v[0..n)
 * (v is left as it was): the k-th smallest and k-th largest values, k the
 * largest with P(B <= k - 1) <= 2.5%, B ~ Binomial(n, 1/2) (the number of
 * values under the true median). Its coverage is at least 95%: 97.9% for
 * n = 10, 95.9% for n = 20. 0 with lo and hi NaN where n < 6 (no k) or
 * out of memory, else 1. */
static inline int bench_median_ci95(const double *v, size_t n, double *lo, double *hi)
{
    *lo = *hi = NAN;
    if (n < 6)
        return 0;
    size_t k = 0;
    while (k + 1 < n && gsl_cdf_binomial_P((unsigned)k, 0.5, (unsigned)n) <= 0.025)
        k++; /* P(B <= k - 1) <= 2.5% for the k reached */
    double *c = malloc(n * sizeof *c);
    if (!c || k == 0) {
        free(c);
        return 0;
    }
    memcpy(c, v, n * sizeof *c);
    pd_median(c, n); /* sorts c */
    *lo = c[k - 1];
    *hi = c[n - k];
    free(c);
    return 1;
}

#endif
