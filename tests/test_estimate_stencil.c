/* Tests of the stencil alpha micro-benchmark (trace-driven LLC model in
 * src/cli/model_calibrate.c) and of the shipped table in models/. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <math.h>
#include <stdlib.h>
#include <cmocka.h>

#include "cli/model_calibrate.h"
#include "lib/estimate.h"

static void test_stream_is_exact(void **state)
{
    (void)state;
    /* every line is filled once: elem / 64 per access (whole lines above 64 B) */
    for (size_t e = 1; e <= 64; e *= 2)
        assert_true(fabs(pd_alpha_cache_sim(e, 1024, 64 * 1024, 8192, 4, 1) - (double)e / 64) < 1e-12);
    assert_true(fabs(pd_alpha_cache_sim(128, 1024, 64 * 1024, 8192, 4, 1) - 2) < 1e-12);
}

static void test_stencil_rows_fit_or_not(void **state)
{
    (void)state;
    for (size_t e = 1; e <= 64; e *= 4) {
        /* three 1 KiB rows fit an 8 KiB cache: each line once per sweep for 5
         * accesses, e / 320, plus the edges (first/last rows and columns) */
        double fit = pd_alpha_cache_sim(e, 1024, 64 * 1024, 8192, 4, 0);
        assert_true(fit >= (double)e / 320 && fit < 1.2 * (double)e / 320);
        /* 4 KiB rows do not: the row above is gone when it is needed, about
         * three fills per line */
        double nofit = pd_alpha_cache_sim(e, 4096, 64 * 1024, 8192, 4, 0);
        assert_true(nofit > 2.5 * (double)e / 320 && nofit < 3.2 * (double)e / 320);
    }
}

static void test_bad_geometry(void **state)
{
    (void)state;
    assert_true(pd_alpha_cache_sim(0, 1024, 65536, 8192, 4, 0) < 0);
    assert_true(pd_alpha_cache_sim(8, 16, 65536, 8192, 4, 0) < 0);   /* row < 3 elements */
    assert_true(pd_alpha_cache_sim(8, 1024, 2048, 8192, 4, 0) < 0);  /* grid < 3 rows */
    assert_true(pd_alpha_cache_sim(8, 1024, 65536, 128, 4, 0) < 0);  /* cache < one set */
    assert_true(pd_alpha_cache_sim(8, 1024, 65536, 8192, 0, 0) < 0);
}

/* The table shipped in models/ parses and agrees with the model's e / 320
 * within the edge effects. */
static void test_shipped_table(void **state)
{
    (void)state;
    double tab[7];
    char err[256];
    assert_int_equal(pd_stencil_table_parse(PD_SOURCE_DIR "/models/stencil_alpha.csv", tab, err, sizeof err), PD_OK);
    for (int k = 0; k < 7; k++) {
        double e = (double)(1 << k);
        assert_true(tab[k] >= e / 320 && tab[k] < 1.1 * e / 320);
    }
    /* the built-in copy is that table, value for value */
    double builtin[7];
    pd_stencil_table_builtin(builtin);
    for (int k = 0; k < 7; k++)
        assert_true(fabs(builtin[k] - tab[k]) < 1e-12);
    /* without PADDISER_STENCIL_TABLE the runtime reads the data directory's
     * table, never the source tree's on its own */
    unsetenv("PADDISER_STENCIL_TABLE");
    setenv("PADDISER_DATADIR", PD_SOURCE_DIR "/models", 1);
    assert_true(fabs(pd_alpha_stencil(8) - tab[3]) < 1e-12);
    assert_string_equal(pd_stencil_table_source(), PD_SOURCE_DIR "/models/stencil_alpha.csv");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stream_is_exact),
        cmocka_unit_test(test_stencil_rows_fit_or_not),
        cmocka_unit_test(test_bad_geometry),
        cmocka_unit_test(test_shipped_table),
    };
    return cmocka_run_group_tests_name("estimate_stencil", tests, NULL, NULL);
}
