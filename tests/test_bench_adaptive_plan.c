/* Tests of src/bench/adaptive_plan.c: the values each probe tries, the
 * round-robin order, where and why each probe stops (IOPS 3.5.8's
 * AdaptivePlanner semantics). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "bench/adaptive_plan.h"

static pd_bench_var make_var(pd_var_type type, pd_val initial, const char *stop_when)
{
    pd_bench_var v = {.name = "x", .type = type};
    v.adaptive.set = true;
    v.adaptive.initial = initial;
    v.adaptive.stop_when.text = (char *)stop_when;
    return v;
}

/* Reports one repetition of probe i with metric bw and the exit code. */
static void report(pd_adapt_plan *p, size_t i, double bw, int exit_code)
{
    static const char *names[] = {"bw"};
    pd_val vals[1] = {pd_val_float(bw)};
    pd_adapt_result r = {.metric_names = names, .metric_values = vals, .nmetrics = 1, .exit_code = exit_code,
                         .status = exit_code ? "FAILED" : "SUCCEEDED", .execution_time = 1.5};
    char err[200];
    assert_int_equal(pd_adapt_report(p, i, &r, err, sizeof err), 0);
}

static long long cur(const pd_adapt_plan *p, size_t i)
{
    assert_int_equal(p->probes[i].current.kind, PD_VAL_INT);
    return p->probes[i].current.i;
}

/* Two probes, factor 2, two repetitions, run one at a time as IOPS's
 * sequential runner does (next, run, report): probe 0 measures bw = 64/x
 * and stops when bw < 10 (at 8); probe 1 measures 128/x but its second
 * repetition at 4 exits 1, and an exit code also stops it. Repetitions are
 * handed out round-robin, one at a time. */
static void test_factor_two_probes_round_robin(void **state)
{
    (void)state;
    pd_bench_var v = make_var(PD_VT_INT, pd_val_int(1), "exit_code != 0 or bw < 10");
    v.adaptive.has_factor = true;
    v.adaptive.factor = 2;
    pd_adapt_plan p;
    assert_int_equal(pd_adapt_init(&p, &v, 2, 2), 0);
    pd_str order = {0};
    int rep;
    for (long i; (i = pd_adapt_next(&p, &rep)) >= 0;) {
        long long x = cur(&p, (size_t)i);
        pd_str_printf(&order, "%ld:%lld/%d ", i, x, rep);
        report(&p, (size_t)i, (i == 0 ? 64.0 : 128.0) / (double)x, i == 1 && x == 4 && rep == 2);
    }
    assert_string_equal(order.data, "0:1/1 1:1/1 0:1/2 1:1/2 0:2/1 1:2/1 0:2/2 1:2/2 0:4/1 1:4/1 0:4/2 1:4/2 "
                                    "0:8/1 0:8/2 ");
    assert_int_equal(p.probes[0].stop, PD_ADAPT_CONDITION_MET);
    assert_int_equal(p.probes[0].found.i, 4);
    assert_int_equal(p.probes[0].failed.i, 8);
    assert_int_equal(pd_adapt_iterations(&p, 0), 4);
    assert_int_equal(p.probes[1].stop, PD_ADAPT_CONDITION_MET);
    assert_int_equal(p.probes[1].found.i, 2);
    assert_int_equal(p.probes[1].failed.i, 4);
    assert_int_equal(pd_adapt_iterations(&p, 1), 3);
    assert_string_equal(pd_adapt_stop_name(p.probes[1].stop), "condition_met");
    pd_str_free(&order);
    pd_adapt_free(&p);
}

/* A probe whose repetitions were all handed out waits for them: nothing
 * more until the last one is reported (IOPS's next_tests in parallel). */
static void test_waits_for_pending_repetitions(void **state)
{
    (void)state;
    pd_bench_var v = make_var(PD_VT_INT, pd_val_int(10), "bw < 0");
    v.adaptive.has_increment = true;
    v.adaptive.increment = 5;
    pd_adapt_plan p;
    assert_int_equal(pd_adapt_init(&p, &v, 1, 2), 0);
    int rep;
    assert_int_equal(pd_adapt_next(&p, &rep), 0);
    assert_int_equal(rep, 1);
    assert_int_equal(pd_adapt_next(&p, &rep), 0);
    assert_int_equal(rep, 2);
    assert_int_equal(pd_adapt_next(&p, &rep), -1);
    report(&p, 0, 1, 0);
    assert_int_equal(pd_adapt_next(&p, &rep), -1);
    report(&p, 0, 1, 0);
    assert_int_equal(cur(&p, 0), 15);
    assert_int_equal(pd_adapt_next(&p, &rep), 0);
    assert_int_equal(rep, 1);
    pd_adapt_free(&p);
}

static void test_increment_float_max_iterations(void **state)
{
    (void)state;
    pd_bench_var v = make_var(PD_VT_FLOAT, pd_val_float(0.5), "bw > 1000");
    v.adaptive.has_increment = true;
    v.adaptive.increment = 3;
    v.adaptive.max_iterations = 2;
    pd_adapt_plan p;
    int rep;
    assert_int_equal(pd_adapt_init(&p, &v, 1, 1), 0);
    assert_int_equal(pd_adapt_next(&p, &rep), 0);
    report(&p, 0, 1, 0);
    assert_true(p.probes[0].current.f == 3.5);
    assert_int_equal(pd_adapt_next(&p, &rep), 0);
    report(&p, 0, 1, 0);
    assert_int_equal(pd_adapt_next(&p, &rep), -1);
    assert_int_equal(p.probes[0].stop, PD_ADAPT_MAX_ITERATIONS);
    assert_true(p.probes[0].found.f == 3.5);
    assert_int_equal(p.probes[0].failed.kind, PD_VAL_NONE);
    assert_int_equal(pd_adapt_iterations(&p, 0), 3);
    pd_adapt_free(&p);
}

/* step_expr sees previous and the iteration count after the value passed;
 * stop_when sees metrics as a dict and previous. */
static void test_step_expr_and_metrics_dict(void **state)
{
    (void)state;
    pd_bench_var v = make_var(PD_VT_INT, pd_val_int(1), "metrics['bw'] < 0 or previous >= 14");
    v.adaptive.step_expr.text = "{{ previous * 3 + iteration }}";
    pd_adapt_plan p;
    int rep;
    assert_int_equal(pd_adapt_init(&p, &v, 1, 1), 0);
    long long seen[4];
    int n = 0;
    while (pd_adapt_next(&p, &rep) == 0 && n < 4) {
        seen[n++] = cur(&p, 0);
        report(&p, 0, 5, 0);
    }
    assert_int_equal(n, 3);
    assert_int_equal(seen[0], 1);
    assert_int_equal(seen[1], 4);  /* 1 * 3 + 1 */
    assert_int_equal(seen[2], 14); /* 4 * 3 + 2 */
    assert_int_equal(p.probes[0].stop, PD_ADAPT_CONDITION_MET);
    assert_int_equal(p.probes[0].failed.i, 14);
    pd_adapt_free(&p);
}

/* An evaluation error counts as met; a constraint violation stops a probe
 * at its value without a failed value. */
static void test_eval_error_and_violation(void **state)
{
    (void)state;
    pd_bench_var v = make_var(PD_VT_INT, pd_val_int(3), "nope > 1");
    v.adaptive.has_increment = true;
    v.adaptive.increment = 1;
    pd_adapt_plan p;
    int rep;
    assert_int_equal(pd_adapt_init(&p, &v, 2, 1), 0);
    assert_int_equal(pd_adapt_next(&p, &rep), 0);
    report(&p, 0, 1, 0);
    assert_int_equal(p.probes[0].stop, PD_ADAPT_CONDITION_MET);
    assert_int_equal(p.probes[0].failed.i, 3);
    assert_int_equal(p.probes[0].found.kind, PD_VAL_NONE);
    assert_int_equal(pd_adapt_iterations(&p, 0), 1);
    pd_adapt_violation(&p, 1);
    assert_int_equal(pd_adapt_next(&p, &rep), -1);
    assert_string_equal(pd_adapt_stop_name(p.probes[1].stop), "constraint_violation");
    assert_int_equal(p.probes[1].failed.kind, PD_VAL_NONE);
    pd_adapt_free(&p);
}

/* stop_when is Python: "is None" / "is not None" as IOPS's examples write
 * it (execution_time is None when unknown, exit_code too). */
static void test_stop_when_is_not_none(void **state)
{
    (void)state;
    pd_bench_var v = make_var(PD_VT_FLOAT, pd_val_float(8), "execution_time is not None and previous < 2");
    v.adaptive.has_factor = true;
    v.adaptive.factor = 0.5;
    pd_adapt_plan p;
    int rep;
    assert_int_equal(pd_adapt_init(&p, &v, 1, 1), 0);
    double seen[5];
    int n = 0;
    while (pd_adapt_next(&p, &rep) == 0 && n < 5) {
        seen[n++] = p.probes[0].current.f;
        report(&p, 0, 1, 0);
    }
    assert_int_equal(n, 4);
    assert_true(seen[3] == 1.0);
    assert_true(p.probes[0].found.f == 2.0 && p.probes[0].failed.f == 1.0);
    pd_adapt_free(&p);

    /* exit_code None (no exit code known) and a status: not stopped */
    v = make_var(PD_VT_INT, pd_val_int(1), "exit_code is not None and exit_code != 0 or status is None");
    v.adaptive.has_increment = true;
    v.adaptive.increment = 1;
    v.adaptive.max_iterations = 1;
    assert_int_equal(pd_adapt_init(&p, &v, 1, 1), 0);
    assert_int_equal(pd_adapt_next(&p, &rep), 0);
    pd_adapt_result r = {.exit_code = -1, .no_exit_code = true, .status = "SUCCEEDED", .execution_time = -1};
    char err[200];
    assert_int_equal(pd_adapt_report(&p, 0, &r, err, sizeof err), 0);
    assert_int_equal(p.probes[0].stop, PD_ADAPT_MAX_ITERATIONS);
    pd_adapt_free(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_factor_two_probes_round_robin),
        cmocka_unit_test(test_waits_for_pending_repetitions),
        cmocka_unit_test(test_increment_float_max_iterations),
        cmocka_unit_test(test_step_expr_and_metrics_dict),
        cmocka_unit_test(test_eval_error_and_violation),
        cmocka_unit_test(test_stop_when_is_not_none),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
