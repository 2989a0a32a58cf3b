/* Tests of src/lib/estimate.c: alpha tables (hand-computed), Eq. 1, stencil
 * table loading, online refinement. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "lib/estimate.h"

static char table_path[64];

static void near(double got, double want)
{
    if (fabs(got - want) > 1e-12)
        fail_msg("got %.15g, want %.15g", got, want);
}

static void test_alpha_stream_stride_values(void **state)
{
    (void)state;
    near(pd_alpha_stream_stride(8, 1), 8.0 / 64);   /* 8 doubles per line */
    near(pd_alpha_stream_stride(0, 0), 8.0 / 64);   /* defaults: 8 B, stride 1 */
    near(pd_alpha_stream_stride(1, 1), 1.0 / 64);
    near(pd_alpha_stream_stride(4, 4), 16.0 / 64);  /* span 16 */
    near(pd_alpha_stream_stride(8, 4), 32.0 / 64);  /* span 32 */
    near(pd_alpha_stream_stride(8, 8), 1);          /* span 64: a line each */
    near(pd_alpha_stream_stride(8, 1000), 1);       /* far apart: still one line */
    near(pd_alpha_stream_stride(64, 1), 1);
    near(pd_alpha_stream_stride(128, 1), 2);        /* two lines per element */
    /* not divisible: rounded up to a size dividing the line */
    near(pd_alpha_stream_stride(3, 1), 4.0 / 64);
    near(pd_alpha_stream_stride(12, 1), 16.0 / 64);
    near(pd_alpha_stream_stride(24, 2), 1);         /* span 48 -> 64 */
    near(pd_alpha_stream_stride(16, 3), 1);
    near(pd_alpha_stream_stride(100, 3), 2);        /* 100 B -> 128 B -> 2 lines */
    near(pd_alpha_stream_stride(6, 5), 32.0 / 64);  /* span 30 -> 32 */
    /* tabulated and computed paths agree */
    near(pd_alpha_stream_stride(2, 64), 1);          /* span 128 */
    near(pd_alpha_stream_stride(2, 31), 64.0 / 64);  /* span 62 -> 64 */
    near(pd_alpha_stream_stride(2, 65), 1);
}

static void test_estimate_accesses(void **state)
{
    (void)state;
    near(pd_estimate_accesses(1000, 100, 200, 0.5), 1000);
    near(pd_estimate_accesses(1000, 400, 100, 1), 250);
    near(pd_estimate_accesses(1000, 0, 100, 1), 0);   /* no base size */
    near(pd_estimate_accesses(-5, 10, 100, 1), 0);
    near(pd_estimate_accesses(NAN, 10, 100, 1), 0);
    near(pd_estimate_accesses(10, 10, 100, 0), 0);
    near(pd_estimate_accesses(10, 10, 0, 1), 0);      /* object gone */
}

static void test_alpha_init_by_pattern(void **state)
{
    (void)state;
    pd_alpha_state st;
    pd_access_hint h = {.pattern = PD_PATTERN_STREAM, .elem_size = 4};
    pd_alpha_init(&st, &h);
    near(st.alpha, 4.0 / 64);
    assert_int_equal(st.refinements, 0);
    h = (pd_access_hint){.pattern = PD_PATTERN_STRIDE, .elem_size = 8, .stride = 2};
    pd_alpha_init(&st, &h);
    near(st.alpha, 16.0 / 64);
    h = (pd_access_hint){.pattern = PD_PATTERN_STREAM, .elem_size = 8, .stride = 5};
    pd_alpha_init(&st, &h); /* stream ignores the stride */
    near(st.alpha, 8.0 / 64);
    h = (pd_access_hint){.pattern = PD_PATTERN_RANDOM, .elem_size = 8};
    pd_alpha_init(&st, &h);
    near(st.alpha, 1);
    pd_alpha_init(&st, NULL);
    near(st.alpha, 1);
    assert_int_equal(st.hint.pattern, PD_PATTERN_UNKNOWN);
    h = (pd_access_hint){.pattern = PD_PATTERN_STENCIL, .elem_size = 8, .input_dependent = 1};
    pd_alpha_init(&st, &h);
    near(st.alpha, 1);
    /* input-independent stencil: the table from PADDISER_STENCIL_TABLE */
    h = (pd_access_hint){.pattern = PD_PATTERN_STENCIL, .elem_size = 8};
    pd_alpha_init(&st, &h);
    near(st.alpha, 0.08);
    assert_string_equal(pd_stencil_table_source(), table_path);
    near(pd_alpha_stencil(0), 0.08);
    near(pd_alpha_stencil(3), 0.02);   /* rounded to 4 B */
    near(pd_alpha_stencil(256), 2.4);  /* 4 lines of the 64 B value */
}

static void test_online_patterns(void **state)
{
    (void)state;
    pd_access_hint h = {.pattern = PD_PATTERN_STREAM};
    assert_false(pd_alpha_is_online(&h));
    h.pattern = PD_PATTERN_STRIDE;
    assert_false(pd_alpha_is_online(&h));
    h.pattern = PD_PATTERN_STENCIL;
    assert_false(pd_alpha_is_online(&h));
    h.input_dependent = 1;
    assert_true(pd_alpha_is_online(&h));
    h.pattern = PD_PATTERN_RANDOM;
    assert_true(pd_alpha_is_online(&h));
    h.pattern = PD_PATTERN_UNKNOWN;
    assert_true(pd_alpha_is_online(&h));
    assert_true(pd_alpha_is_online(NULL));
}

static void test_refine(void **state)
{
    (void)state;
    pd_alpha_state st;
    pd_access_hint h = {.pattern = PD_PATTERN_RANDOM};
    pd_alpha_init(&st, &h);
    pd_alpha_refine(&st, 100, 50);   /* first: replaces the guess */
    near(st.alpha, 0.5);
    pd_alpha_refine(&st, 100, 100);  /* estimate was right: unchanged */
    near(st.alpha, 0.5);
    pd_alpha_refine(&st, 100, 200);  /* target 1.0: median of .5, .5, 1 */
    near(st.alpha, 0.5);
    assert_int_equal(st.refinements, 3);
    pd_alpha_refine(&st, 0, 10);     /* ignored */
    pd_alpha_refine(&st, NAN, 10);
    pd_alpha_refine(&st, 10, -1);
    pd_alpha_refine(&st, 10, INFINITY);
    near(st.alpha, 0.5);
    assert_int_equal(st.refinements, 3);
    pd_alpha_refine(&st, 1, 1e12);   /* bounded target: .5 .5 1 64 */
    near(st.alpha, 0.75);
    pd_alpha_refine(&st, 1e12, 0);   /* 1/64 .5 .5 1 64 */
    near(st.alpha, 0.5);
    for (int i = 0; i < PD_ALPHA_WINDOW; i++) /* the window forgets: all 1.0 now */
        pd_alpha_refine(&st, st.alpha, 1.0);
    near(st.alpha, 1.0);
    /* stream: tabulated, never refined */
    h = (pd_access_hint){.pattern = PD_PATTERN_STREAM, .elem_size = 8};
    pd_alpha_init(&st, &h);
    pd_alpha_refine(&st, 100, 1000);
    near(st.alpha, 0.125);
    assert_int_equal(st.refinements, 0);
}

/* Sampled counts of one input spread by a factor of ten (lognormal noise,
 * sigma 0.6): alpha converges to the true value and stays near it. */
static void test_refine_converges_under_noise(void **state)
{
    (void)state;
    pd_alpha_state st;
    pd_access_hint h = {.pattern = PD_PATTERN_RANDOM};
    pd_alpha_init(&st, &h);
    const double truth = 2.0, base = 1000;
    uint64_t s = 7;
    double last[10];
    for (int i = 0; i < 40; i++) {
        /* Box-Muller from a fixed generator: the same noise every run */
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        double u1 = ((s >> 11) + 0.5) / 9007199254740992.0;
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        double u2 = ((s >> 11) + 0.5) / 9007199254740992.0;
        double noise = exp(0.6 * sqrt(-2 * log(u1)) * cos(2 * M_PI * u2));
        pd_alpha_refine(&st, base * st.alpha, base * truth * noise);
        if (i >= 30)
            last[i - 30] = st.alpha;
    }
    double m = 0, v = 0;
    for (int i = 0; i < 10; i++)
        m += last[i] / 10;
    for (int i = 0; i < 10; i++)
        v += (last[i] - m) * (last[i] - m) / 9;
    print_message("alpha over the last 10 refinements: mean %.3f (truth %.1f), CV %.1f%%\n", m, truth,
                  100 * sqrt(v) / m);
    assert_true(m > truth / 1.5 && m < truth * 1.5);
    assert_true(sqrt(v) / m < 0.25);
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void test_stencil_table_errors(void **state)
{
    (void)state;
    char path[] = "/tmp/pd_stencil_badXXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    double tab[7];
    char err[256];
    write_file(path, "elem,alpha\n8,0.1\n");
    assert_int_equal(pd_stencil_table_parse(path, tab, err, sizeof err), PD_EINVAL);
    assert_non_null(strstr(err, "elem_size,alpha"));
    write_file(path, "elem_size,alpha\n1,.01\n2,.02\n4,.04\n8,-1\n");
    assert_int_equal(pd_stencil_table_parse(path, tab, err, sizeof err), PD_EINVAL);
    assert_non_null(strstr(err, "row 5"));
    write_file(path, "elem_size,alpha\n1,.01\n2,.02\n4,1e300\n");
    assert_int_equal(pd_stencil_table_parse(path, tab, err, sizeof err), PD_EINVAL);
    assert_non_null(strstr(err, "row 4"));
    assert_non_null(strstr(err, "alpha <= 2"));
    write_file(path, "elem_size,alpha\n12,0.1\n");
    assert_int_equal(pd_stencil_table_parse(path, tab, err, sizeof err), PD_EINVAL);
    write_file(path, "elem_size,alpha\n1,.01\n2,.02\n");
    assert_int_equal(pd_stencil_table_parse(path, tab, err, sizeof err), PD_EINVAL);
    assert_non_null(strstr(err, "one row for each"));
    unlink(path);
    assert_int_equal(pd_stencil_table_parse(path, tab, err, sizeof err), PD_EIO);
    assert_non_null(strstr(err, path));
}

int main(void)
{
    /* The stencil table loads once per process: point it at a fixture. */
    snprintf(table_path, sizeof table_path, "/tmp/pd_stencil_XXXXXX");
    int fd = mkstemp(table_path);
    if (fd < 0)
        return 1;
    const char *tab = "elem_size,alpha\n1,0.01\n2,0.015\n4,0.02\n8,0.08\n16,0.1\n32,0.3\n64,0.6\n";
    if (write(fd, tab, strlen(tab)) != (ssize_t)strlen(tab))
        return 1;
    close(fd);
    setenv("PADDISER_STENCIL_TABLE", table_path, 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_alpha_stream_stride_values),
        cmocka_unit_test(test_estimate_accesses),
        cmocka_unit_test(test_alpha_init_by_pattern),
        cmocka_unit_test(test_online_patterns),
        cmocka_unit_test(test_refine),
        cmocka_unit_test(test_refine_converges_under_noise),
        cmocka_unit_test(test_stencil_table_errors),
    };
    int rc = cmocka_run_group_tests_name("estimate", tests, NULL, NULL);
    unlink(table_path);
    return rc;
}
