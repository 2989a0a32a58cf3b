/* Tests of src/common/duration.c: the progress lines' duration format and
 * the ETA from the mean time per finished step. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "common/duration.h"

static void check(double s, const char *want)
{
    char buf[32];
    pd_fmt_duration(buf, sizeof buf, s);
    assert_string_equal(buf, want);
}

static void test_format(void **state)
{
    (void)state;
    check(0, "0.0 s");
    check(12.34, "12.3 s");
    check(59.9, "59.9 s");
    check(60, "1m00s");
    check(125, "2m05s");
    check(3599, "59m59s");
    check(3600, "1h00m");
    check(3 * 3600 + 7 * 60 + 30, "3h07m");
    check(-1, "0.0 s"); /* a clock step back never prints a negative time */
}

static void test_eta(void **state)
{
    (void)state;
    assert_true(pd_eta_s(5, 0, 10) < 0);                 /* nothing done: no estimate */
    assert_float_equal(pd_eta_s(10, 2, 10), 40, 1e-9);   /* 5 s a step, 8 left */
    assert_float_equal(pd_eta_s(10, 10, 10), 0, 1e-9);   /* all done */
    assert_float_equal(pd_eta_s(10, 12, 10), 0, 1e-9);   /* more than planned (a search added none) */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_format),
        cmocka_unit_test(test_eta),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
