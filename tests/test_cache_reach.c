/* The random-access cost table (src/lib/cache_reach.c): parsing, the
 * interpolation on log size, the shipped table against its built-in copy,
 * and the ratio the runtime scales a random object by, with the LLC from a
 * fake sysfs tree (test_tiers_fixture.h), from PADDISER_LLC_BYTES, or
 * unknown. The table and the LLC are read once per process, so each
 * configuration runs in a child. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "lib/cache_reach.h"
#include "test_tiers_fixture.h"

static const char good[] = "bytes_over_llc,cost,method\n"
                           "0.25,0.2,x\n"
                           "1,0.5,x\n"
                           "4,1,x\n";

static void test_parse_and_interpolate(void **state)
{
    (void)state;
    pd_random_table t;
    char err[256];
    assert_int_equal(pd_random_table_parse_text(good, &t, err, sizeof err), 0);
    assert_int_equal(t.n, 3);
    /* the rows themselves */
    assert_float_equal(pd_random_table_cost(&t, 0.25), 0.2, 1e-12);
    assert_float_equal(pd_random_table_cost(&t, 1), 0.5, 1e-12);
    /* halfway on log size between 1 and 4 (2x): halfway in cost */
    assert_float_equal(pd_random_table_cost(&t, 2), 0.75, 1e-12);
    /* beyond the ends: the end rows */
    assert_float_equal(pd_random_table_cost(&t, 0.01), 0.2, 1e-12);
    assert_float_equal(pd_random_table_cost(&t, 100), 1, 1e-12);
}

static void expect_bad(const char *text, const char *needle)
{
    pd_random_table t;
    char err[256] = "";
    assert_true(pd_random_table_parse_text(text, &t, err, sizeof err) < 0);
    if (!strstr(err, needle))
        fail_msg("error '%s' does not say '%s'", err, needle);
}

static void test_bad_tables_are_refused_with_a_reason(void **state)
{
    (void)state;
    expect_bad("size,cost\n1,1\n2,1\n", "needs columns bytes_over_llc,cost");
    expect_bad("bytes_over_llc,cost\n1,1\n", "needs 2 to 64 rows, has 1");
    expect_bad("bytes_over_llc,cost\n1,1\n0.5,1\n", "row 3: bytes_over_llc 0.5 does not grow");
    expect_bad("bytes_over_llc,cost\n1,1\n1,1\n", "does not grow");
    expect_bad("bytes_over_llc,cost\n1,0\n2,1\n", "row 2: bytes_over_llc and cost must be positive numbers");
    expect_bad("bytes_over_llc,cost\n1,1\n2,nan\n", "row 3");
    expect_bad("bytes_over_llc,cost\n1,1\n2,x\n", "row 3");
    /* costs no cache and memory could give, whose ratio overflows */
    expect_bad("bytes_over_llc,cost\n1,1e-300\n2,1e300\n", "costs from 1e-300 to 1e+300");
    expect_bad("bytes_over_llc,cost\n1,1\n2,20000\n", "within 10000 times");
}

/* The shipped table parses, its cost grows from the small sizes to the
 * largest (1), and the built-in copy is that table, value for value. */
static void test_shipped_table_is_the_builtin_one(void **state)
{
    (void)state;
    pd_random_table t, b;
    char err[256];
    assert_int_equal(pd_random_table_parse(PD_SOURCE_DIR "/models/random_cost.csv", &t, err, sizeof err), 0);
    pd_random_table_builtin(&b);
    assert_int_equal(t.n, b.n);
    for (int i = 0; i < t.n; i++) {
        assert_float_equal(t.frac[i], b.frac[i], 1e-9 * t.frac[i]);
        assert_float_equal(t.cost[i], b.cost[i], 1e-9 * t.cost[i]);
    }
    assert_float_equal(t.cost[t.n - 1], 1, 1e-12);
    assert_true(t.cost[0] < 0.5 * t.cost[t.n - 1]);
}

/* In a child, with the environment given: the ratio between 8 MiB and 2
 * MiB randomly read, and the LLC read; exit 0 when they are as expected.
 * The table is fixture_root/table.csv. */
static int child_ratio(const char *sys_root, const char *llc_env, double want_ratio, size_t want_llc)
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        char table[512];
        snprintf(table, sizeof table, "%s/table.csv", fixture_root);
        setenv("PADDISER_RANDOM_TABLE", table, 1);
        setenv("PADDISER_SYS_ROOT", sys_root, 1);
        if (llc_env)
            setenv("PADDISER_LLC_BYTES", llc_env, 1);
        else
            unsetenv("PADDISER_LLC_BYTES");
        double r = pd_random_cost_ratio(8.0 * 1048576, 2.0 * 1048576);
        int ok = fabs(r - want_ratio) < 1e-12 && pd_random_llc_bytes() == want_llc &&
                 !strcmp(pd_random_table_source(), table);
        if (!ok)
            fprintf(stderr, "ratio %.15g (want %.15g), llc %zu (want %zu), table %s\n", r, want_ratio,
                    pd_random_llc_bytes(), want_llc, pd_random_table_source());
        _exit(ok ? 0 : 1);
    }
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 99;
}

static void test_ratio_reads_the_llc_and_the_table(void **state)
{
    (void)state;
    fx_begin();
    fx_put("table.csv", good);
    /* cpu0 lists a 32 KiB L1 and an 8 MiB L3: the LLC is the larger */
    fx_put("devices/system/cpu/cpu0/cache/index0/size", "32K\n");
    fx_put("devices/system/cpu/cpu0/cache/index3/size", "8192K\n");
    /* 8 MiB LLC: 2 MiB is 0.25 of it (cost 0.2), 8 MiB is 1 (0.5) */
    assert_int_equal(child_ratio(fixture_root, NULL, 0.5 / 0.2, 8u << 20), 0);
    /* PADDISER_LLC_BYTES wins: 2 MiB LLC, 2 MiB is 1 (0.5), 8 MiB is 4 (1) */
    assert_int_equal(child_ratio(fixture_root, "2097152", 1 / 0.5, 2u << 20), 0);
    /* no cache in sysfs and none given: nothing to scale by */
    char nothing[300];
    snprintf(nothing, sizeof nothing, "%s/nothing", fixture_root);
    assert_int_equal(child_ratio(nothing, NULL, 1, 0), 0);
    /* a bad PADDISER_LLC_BYTES is ignored for sysfs's */
    assert_int_equal(child_ratio(fixture_root, "lots", 0.5 / 0.2, 8u << 20), 0);
    fx_end();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_and_interpolate),
        cmocka_unit_test(test_bad_tables_are_refused_with_a_reason),
        cmocka_unit_test(test_shipped_table_is_the_builtin_one),
        cmocka_unit_test(test_ratio_reads_the_llc_and_the_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
