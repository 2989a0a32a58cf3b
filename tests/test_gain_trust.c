/* rt_gain_trust (src/lib/migrate_cost.c): how much of a plan's predicted
 * gain the gain-versus-cost rule counts while the tasks' memory-bound
 * fractions m are learned from few, noisy instances (issue #11: pages moved
 * on an unchanged input when a refit of m from noise changed the curves). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "lib/placement.h"

static void test_unlearned_and_certain_m_count_whole(void **state)
{
    (void)state;
    /* the prior (se NaN), and m = 0 (no slow-tier penalty: no gain anyway) */
    double m[] = {0.5, 0.0}, se[] = {NAN, 0.3};
    assert_float_equal(rt_gain_trust(m, se, 2), 1.0, 1e-12);
    /* well learned: 0.5 +- 0.02 counts (0.5 - 1.645 * 0.02) / 0.5 */
    double m2[] = {0.5}, se2[] = {0.02};
    assert_float_equal(rt_gain_trust(m2, se2, 1), (0.5 - 1.645 * 0.02) / 0.5, 1e-12);
    assert_float_equal(rt_gain_trust(NULL, NULL, 0), 1.0, 1e-12);
}

static void test_noisy_m_counts_nothing(void **state)
{
    (void)state;
    /* refit from noise: 0.25 +- 0.2 could be 0, so its gain could be none;
     * the least certain task decides */
    double m[] = {0.6, 0.25}, se[] = {0.01, 0.2};
    assert_float_equal(rt_gain_trust(m, se, 2), 0.0, 1e-12);
    double m2[] = {0.6, 0.4}, se2[] = {0.01, 0.1};
    assert_float_equal(rt_gain_trust(m2, se2, 2), (0.4 - 0.1645) / 0.4, 1e-12);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unlearned_and_certain_m_count_whole),
        cmocka_unit_test(test_noisy_m_counts_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
