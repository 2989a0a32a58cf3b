/* Small statistics shared by the prediction benchmarks (predict_bench.c,
 * phases_bench.c). Header-only: each benchmark is one translation unit
 * linked against libpaddiser_internal.a (pd_median). */
#ifndef PD_BENCH_STATS_H
#define PD_BENCH_STATS_H

#include <math.h>
#include <stddef.h>

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

#endif
