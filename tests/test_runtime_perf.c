/* Tests of the feature layer (src/lib/perf.c): the software fallback on a
 * machine without counters (or PADDISER_PERF=off), and the hardware path's
 * arithmetic through an injected fake counter source. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "lib/perf.h"

static volatile double sink;

static void burn(void)
{
    double x = 0;
    for (int i = 0; i < 2000000; i++)
        x += i * 0.5;
    sink = x;
}

static void test_fallback_forced_off(void **state)
{
    (void)state;
    setenv("PADDISER_PERF", "off", 1);
    pd_perf_set_source(NULL); /* re-probe */
    assert_int_equal(pd_perf_hw_available(), 0);
    assert_string_equal(pd_perf_reason(), "hardware counters unavailable: disabled by PADDISER_PERF=off");

    pd_perf_session s;
    pd_perf_sample out;
    pd_perf_begin(&s);
    burn();
    pd_perf_end(&s, &out);
    assert_int_equal(out.hw_used, 0);
    assert_true(out.wall_s > 0);
    assert_true(out.sw.cpu_s > 0);
    assert_true(out.sw.page_faults >= 0);

    double f[PD_NFEATURES];
    pd_perf_features(&out, 1000.0, f);
    assert_true(f[PD_FEAT_IPC] > 0 && f[PD_FEAT_IPC] <= 1.0); /* CPU utilisation */
    assert_true(f[PD_FEAT_LLC_MPKI] > 0);                     /* sampled accesses / ms */
    assert_true(f[PD_FEAT_LLC_MPKI] == f[PD_FEAT_L3_LD_MISS]);
    assert_true(f[PD_FEAT_VEC_INS] == 0);
    /* The model gets no proxies: every input missing. */
    double in[PD_NFEATURES];
    pd_perf_model_inputs(&out, in);
    for (int i = 0; i < PD_NFEATURES; i++)
        assert_true(isnan(in[i]));
    unsetenv("PADDISER_PERF");
}

static void test_probe_on_this_machine(void **state)
{
    (void)state;
    unsetenv("PADDISER_PERF");
    pd_perf_set_source(NULL);
    /* Either path is fine; the reason must match it. */
    if (pd_perf_hw_available())
        assert_string_equal(pd_perf_reason(), "");
    else
        assert_non_null(strstr(pd_perf_reason(), "hardware counters unavailable: perf_event_open(instructions): "));
}

/* Fake source: returns fixed counts; handles are counted to check pairing. */
static int fake_open;

static void *fake_start(void *ctx)
{
    (void)ctx;
    fake_open++;
    return &fake_open;
}

static int fake_stop(void *ctx, void *handle, pd_hw_counts *out)
{
    const pd_hw_counts *want = ctx;
    assert_ptr_equal(handle, &fake_open);
    fake_open--;
    *out = *want;
    return 0;
}

static void test_fake_counters_arithmetic(void **state)
{
    (void)state;
    pd_hw_counts c;
    memset(&c, 0, sizeof c);
    c.value[PD_EV_INSTRUCTIONS] = 2000000;
    c.value[PD_EV_CYCLES] = 4000000;
    c.value[PD_EV_LLC_MISSES] = 10000;
    c.value[PD_EV_LLC_LOADS] = 30000;
    c.value[PD_EV_LLC_LOAD_MISSES] = 8000;
    c.value[PD_EV_L1D_PREFETCH_MISSES] = 4000;
    c.value[PD_EV_STALLED_BACKEND] = 1000000;
    c.value[PD_EV_BRANCH_MISSES] = 2000;
    c.valid = (1u << PD_NEVENTS) - 1;
    pd_counter_source src = {"fake", fake_start, fake_stop, &c};
    setenv("PADDISER_PERF", "off", 1); /* an injected source wins over the env */
    pd_perf_set_source(&src);
    assert_int_equal(pd_perf_hw_available(), 1);
    assert_string_equal(pd_perf_reason(), "");

    pd_perf_session s;
    pd_perf_sample one, two;
    pd_perf_begin(&s);
    assert_int_equal(fake_open, 1);
    pd_perf_end(&s, &one);
    assert_int_equal(fake_open, 0);
    assert_int_equal(one.hw_used, 1);
    two = one;
    pd_perf_sample_add(&two, &one); /* an instance in two pieces */

    double f[PD_NFEATURES];
    pd_perf_features(&two, 0, f);
    assert_float_equal(f[PD_FEAT_LLC_MPKI], 5.0, 1e-12);   /* 20000 / 4000 kinstr */
    assert_float_equal(f[PD_FEAT_IPC], 0.5, 1e-12);
    assert_float_equal(f[PD_FEAT_PRF_MISS], 2.0, 1e-12);
    assert_float_equal(f[PD_FEAT_MEM_WCY], 0.25, 1e-12);
    assert_float_equal(f[PD_FEAT_L2_LD_MISS], 15.0, 1e-12);
    assert_float_equal(f[PD_FEAT_BR_MSP], 1.0, 1e-12);
    assert_float_equal(f[PD_FEAT_VEC_INS], 0.0, 1e-12);
    assert_float_equal(f[PD_FEAT_L3_LD_MISS], 4.0, 1e-12);

    double in[PD_NFEATURES];
    pd_perf_model_inputs(&two, in);
    assert_float_equal(in[PD_FEAT_LLC_MPKI], 5.0, 1e-12);
    assert_float_equal(in[PD_FEAT_MEM_WCY], 0.25, 1e-12);
    assert_true(isnan(in[PD_FEAT_VEC_INS])); /* no generic event */

    /* A missing event gives a zero feature, not garbage; missing for the model. */
    c.valid &= ~(1u << PD_EV_STALLED_BACKEND);
    pd_perf_begin(&s);
    pd_perf_end(&s, &one);
    pd_perf_features(&one, 0, f);
    assert_float_equal(f[PD_FEAT_MEM_WCY], 0.0, 1e-12);
    assert_float_equal(f[PD_FEAT_IPC], 0.5, 1e-12);
    pd_perf_model_inputs(&one, in);
    assert_true(isnan(in[PD_FEAT_MEM_WCY]));
    assert_float_equal(in[PD_FEAT_IPC], 0.5, 1e-12);

    pd_perf_set_source(NULL);
    unsetenv("PADDISER_PERF");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fallback_forced_off),
        cmocka_unit_test(test_probe_on_this_machine),
        cmocka_unit_test(test_fake_counters_arithmetic),
    };
    return cmocka_run_group_tests_name("runtime_perf", tests, NULL, NULL);
}
