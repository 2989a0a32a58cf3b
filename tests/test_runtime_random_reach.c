/* A machine whose sysfs names no cache (some VMs, a fake tree here): objects
 * hinted random scale with their bytes alone on a new input, and the
 * runtime says why, once, on stderr. Its own program: the LLC is read once
 * per process (cache_reach.c). Fake clock, no backend, as
 * test_runtime_predict.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "common/util.h"
#include "lib/cache_reach.h"
#include "lib/perf.h"
#include "paddiser.h"
#include "test_tiers_fixture.h"

#define MB (1024ul * 1024ul)

static double fake_now;
static double fake_clock(void) { return fake_now; }

static void instance(double d)
{
    assert_int_equal(pd_task_begin(0), PD_OK);
    fake_now += d;
    assert_int_equal(pd_task_end(0), PD_OK);
    assert_int_equal(pd_sync_point(), PD_OK);
}

static void test_no_llc_scales_linearly_and_says_why(void **state)
{
    (void)state;
    char err_path[300];
    fx_begin(); /* an empty /sys */
    unsetenv("PADDISER_LLC_BYTES");
    unsetenv("PADDISER_QUIET");
    snprintf(err_path, sizeof err_path, "%s/stderr", fixture_root);
    fflush(stderr);
    int saved = dup(2);
    assert_non_null(freopen(err_path, "w", stderr));

    unsigned char *buf = aligned_alloc(4096, 8 * MB);
    assert_non_null(buf);
    pd_perf_set_clock(fake_clock);
    pd_options o;
    pd_options_default(&o);
    o.backend = PD_BACKEND_NONE;
    o.sampling = 0;
    assert_int_equal(pd_init(&o), PD_OK);
    pd_access_hint random8 = {PD_PATTERN_RANDOM, 8, 1, 0};
    assert_int_equal(pd_object_register("x", buf, 1 * MB, &random8), 0);
    for (int i = 0; i < 3; i++)
        instance(0.010);
    assert_int_equal(pd_object_update(0, buf, 4 * MB), PD_OK);
    pd_task_plan p;
    assert_int_equal(pd_plan_query(&p, 1, NULL), 1);
    assert_float_equal(p.predicted_time, 0.040, 1e-9); /* 4x the bytes: 4x */
    assert_int_equal(pd_random_llc_bytes(), 0);
    assert_int_equal(pd_object_update(0, buf, 2 * MB), PD_OK);
    assert_int_equal(pd_plan_query(&p, 1, NULL), 1); /* asked again: told once */
    pd_finalize();
    pd_perf_set_clock(NULL);
    free(buf);

    fflush(stderr);
    assert_int_equal(dup2(saved, 2), 2);
    close(saved);
    char *text = pd_read_file(err_path, NULL);
    assert_non_null(text);
    const char *line = "no last-level cache size in sysfs (cpu0/cache/index*/size): objects hinted random scale "
                       "with their bytes alone on a new input; set PADDISER_LLC_BYTES to the cache's size";
    const char *at = strstr(text, line);
    if (!at)
        fail_msg("stderr has no notice:\n%s", text);
    assert_null(strstr(at + 1, line));
    free(text);
    fx_end();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_llc_scales_linearly_and_says_why),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
