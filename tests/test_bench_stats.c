/* The benchmarks' small statistics (bench/bench_stats.h): the median's
 * distribution-free 95% confidence interval, whose order statistics come
 * from the binomial distribution of the values under the median. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "../bench/bench_stats.h"

/* 1 .. n in a scrambled order, so the interval must sort a copy. */
static void scrambled(double *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        v[i] = (double)((i * 7) % n + 1);
}

static void test_median_ci95_order_statistics(void **state)
{
    (void)state;
    double v[40], lo, hi;
    /* n = 10: P(B <= 1) = 11/1024 <= 2.5% < P(B <= 2) = 56/1024, so the
     * 2nd smallest and the 2nd largest (coverage 97.9%) */
    scrambled(v, 10);
    assert_int_equal(bench_median_ci95(v, 10, &lo, &hi), 1);
    assert_float_equal(lo, 2, 0);
    assert_float_equal(hi, 9, 0);
    assert_float_equal(v[1], 8, 0); /* left as it was */
    /* n = 20: P(B <= 5) = 2.07% <= 2.5% < P(B <= 6) = 5.77%: the 6th */
    scrambled(v, 20);
    assert_int_equal(bench_median_ci95(v, 20, &lo, &hi), 1);
    assert_float_equal(lo, 6, 0);
    assert_float_equal(hi, 15, 0);
    /* n = 6: only the extremes (P(B <= 0) = 1/64) */
    scrambled(v, 6);
    assert_int_equal(bench_median_ci95(v, 6, &lo, &hi), 1);
    assert_float_equal(lo, 1, 0);
    assert_float_equal(hi, 6, 0);
}

static void test_median_ci95_needs_six_values(void **state)
{
    (void)state;
    double v[5] = {3, 1, 2, 5, 4}, lo = 0, hi = 0;
    /* n = 5: even the extremes leave P(B <= 0) = 1/32 > 2.5% */
    assert_int_equal(bench_median_ci95(v, 5, &lo, &hi), 0);
    assert_true(isnan(lo) && isnan(hi));
    assert_int_equal(bench_median_ci95(v, 0, &lo, &hi), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_median_ci95_order_statistics),
        cmocka_unit_test(test_median_ci95_needs_six_values),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
