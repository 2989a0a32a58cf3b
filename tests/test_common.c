/* Tests of src/common: CSV parsing/writing, strict number parsing, strings. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "common/csv.h"
#include "common/sysroot.h"
#include "common/util.h"

static void test_csv_quotes_and_short_rows(void **state)
{
    (void)state;
    char err[128];
    pd_csv *c = pd_csv_parse("a,b,c\n1,\"x, \"\"y\"\"\",3\r\n\n4,5\n", err, sizeof err);
    assert_non_null(c);
    assert_int_equal(c->nrows, 2);
    assert_int_equal(pd_csv_col(c, "b"), 1);
    assert_int_equal(pd_csv_col(c, "zz"), -1);
    assert_string_equal(pd_csv_get(c, 0, 1), "x, \"y\"");
    assert_string_equal(pd_csv_get(c, 1, 1), "5");
    assert_null(pd_csv_get(c, 1, 2)); /* short row */
    pd_csv_free(c);
}

static void test_csv_errors(void **state)
{
    (void)state;
    char err[128];
    assert_null(pd_csv_parse("", err, sizeof err));
    assert_non_null(strstr(err, "empty"));
    assert_null(pd_csv_parse("a\n\"open", err, sizeof err));
    assert_non_null(strstr(err, "unterminated"));
    assert_null(pd_csv_load("/nonexistent/x.csv", err, sizeof err));
    assert_non_null(strstr(err, "/nonexistent/x.csv"));
}

static void test_csv_put_field(void **state)
{
    (void)state;
    pd_str s = {0};
    pd_csv_put_field(&s, "plain");
    pd_str_append(&s, ",");
    pd_csv_put_field(&s, "a,\"b\"");
    assert_string_equal(s.data, "plain,\"a,\"\"b\"\"\"");
    pd_str_free(&s);
}

static void test_parse_numbers(void **state)
{
    (void)state;
    double d;
    long l;
    unsigned long long u;
    assert_true(pd_parse_double(" 1.5 ", &d));
    assert_true(d == 1.5);
    assert_false(pd_parse_double("[N/A]", &d));
    assert_false(pd_parse_double("1.5x", &d));
    assert_true(pd_parse_long("-42", &l));
    assert_int_equal(l, -42);
    assert_false(pd_parse_u64("-1", &u));
    assert_true(pd_parse_u64("18446744073709551615", &u));
    assert_true(u == 18446744073709551615ULL);
}

static void test_sysroot_override(void **state)
{
    (void)state;
    char buf[256];
    unsetenv("PADDISER_PROC_ROOT");
    assert_string_equal(pd_proc_path(buf, sizeof buf, "stat"), "/proc/stat");
    setenv("PADDISER_PROC_ROOT", "/tmp/fake", 1);
    assert_string_equal(pd_proc_path(buf, sizeof buf, "self/mountstats"), "/tmp/fake/self/mountstats");
    unsetenv("PADDISER_PROC_ROOT");
    setenv("PADDISER_SYS_ROOT", "/tmp/fs", 1);
    assert_string_equal(pd_sys_path(buf, sizeof buf, "block"), "/tmp/fs/block");
    unsetenv("PADDISER_SYS_ROOT");
}

static void test_str_and_trim(void **state)
{
    (void)state;
    pd_str s = {0};
    for (int i = 0; i < 1000; i++)
        pd_str_printf(&s, "%d,", i);
    assert_int_equal(s.len, strlen(s.data));
    char *t = pd_str_take(&s);
    assert_memory_equal(t, "0,1,2,", 6);
    free(t);
    char buf[] = "  hi there \n";
    assert_string_equal(pd_trim(buf), "hi there");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_csv_quotes_and_short_rows),
        cmocka_unit_test(test_csv_errors),
        cmocka_unit_test(test_csv_put_field),
        cmocka_unit_test(test_parse_numbers),
        cmocka_unit_test(test_sysroot_override),
        cmocka_unit_test(test_str_and_trim),
    };
    return cmocka_run_group_tests_name("common", tests, NULL, NULL);
}
