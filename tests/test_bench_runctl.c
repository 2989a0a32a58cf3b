/* The pure parts of bench's run control and find (issue #16): the program a
 * rendered command starts (src/bench/runctl.c), whether it exists, IOPS's
 * loose filter match and the status roll-up of `paddiser find`
 * (src/bench/find.c), and the log levels (src/bench/runlog.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "bench/find.h"
#include "bench/runctl.h"
#include "bench/runlog.h"

static const char *prog(const char *cmd)
{
    static char buf[256];
    pd_command_program(cmd, buf, sizeof buf);
    return buf;
}

static void test_command_program(void **state)
{
    (void)state;
    assert_string_equal(prog("ior -t 1m"), "ior");
    assert_string_equal(prog("  \n\tmpirun -n 4 ./a.out"), "mpirun");
    assert_string_equal(prog("OMP_NUM_THREADS=4 LC_ALL=C /opt/bin/stream"), "/opt/bin/stream");
    assert_string_equal(prog("A=1"), "");         /* assignments only */
    assert_string_equal(prog(""), "");
    assert_string_equal(prog("$MEMBW_BIN -n 4"), ""); /* expanded by the shell: not checkable */
    assert_string_equal(prog("'my prog' x"), "");
    assert_string_equal(prog("(cd x && make)"), "");
    assert_string_equal(prog("ls>out"), "");
    assert_string_equal(prog("1A=2 x"), "1A=2"); /* not a valid name: a word, not an assignment */
}

static void test_program_exists(void **state)
{
    (void)state;
    assert_true(pd_program_exists("printf"));  /* builtins and keywords */
    assert_true(pd_program_exists("cd"));
    assert_true(pd_program_exists("["));
    assert_true(pd_program_exists("sh"));      /* on PATH */
    assert_true(pd_program_exists("/bin/sh")); /* an executable file */
    assert_false(pd_program_exists("/etc/passwd")); /* not executable */
    assert_false(pd_program_exists("/nonexistent/tool"));
    assert_false(pd_program_exists("no-such-program-pd16"));
    assert_true(pd_program_exists("./built-by-the-script")); /* relative: not checked */
}

static void test_value_matches(void **state)
{
    (void)state;
    assert_true(pd_find_value_matches("4", "4"));
    assert_true(pd_find_value_matches("4.0", "4"));
    assert_true(pd_find_value_matches("1000.0", "1e3"));
    assert_true(pd_find_value_matches("True", "true"));
    assert_true(pd_find_value_matches("False", " FALSE "));
    assert_false(pd_find_value_matches("True", "1")); /* IOPS: booleans are not numbers here */
    assert_false(pd_find_value_matches("a", "A"));
    assert_true(pd_find_value_matches("b c", "b c"));
    assert_false(pd_find_value_matches("4", "5"));
}

static void test_rollup(void **state)
{
    (void)state;
    const char *a[] = {"SUCCEEDED", "RUNNING", "FAILED"};
    assert_string_equal(pd_find_rollup(a, 3), "RUNNING");
    const char *b[] = {"SUCCEEDED", "PENDING", "FAILED"};
    assert_string_equal(pd_find_rollup(b, 3), "PENDING");
    const char *c[] = {"SUCCEEDED", "ERROR", "TIMEOUT"};
    assert_string_equal(pd_find_rollup(c, 3), "FAILED");
    const char *d[] = {"SUCCEEDED", "TIMEOUT", "CANCELLED"};
    assert_string_equal(pd_find_rollup(d, 3), "TIMEOUT");
    const char *e[] = {"CANCELLED", "SUCCEEDED"};
    assert_string_equal(pd_find_rollup(e, 2), "CANCELLED");
    const char *f[] = {"SUCCEEDED", "SUCCEEDED"};
    assert_string_equal(pd_find_rollup(f, 2), "SUCCEEDED");
    const char *g[] = {"SUCCEEDED", "SKIPPED"};
    assert_string_equal(pd_find_rollup(g, 2), "UNKNOWN");
    assert_string_equal(pd_find_rollup(NULL, 0), "PENDING"); /* no repetition yet */
}

static void test_log_levels(void **state)
{
    (void)state;
    int l = -1;
    assert_true(pd_log_level_parse("debug", &l));
    assert_int_equal(l, PD_LOG_DEBUG);
    assert_true(pd_log_level_parse("WARNING", &l));
    assert_int_equal(l, PD_LOG_WARNING);
    assert_false(pd_log_level_parse("WARN", &l));
    assert_string_equal(pd_log_level_name(PD_LOG_ERROR), "ERROR");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_command_program), cmocka_unit_test(test_program_exists),
        cmocka_unit_test(test_value_matches),   cmocka_unit_test(test_rollup),
        cmocka_unit_test(test_log_levels),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
