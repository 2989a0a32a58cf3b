/* Tests of pd_plan (src/lib/planner.c): hand-checked instances, edge cases,
 * invalid arguments, and seeded property tests against brute force. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "common/util.h"
#include "paddiser.h"

/* ---- linear instances: T_i(r) = a_i - c_i r, bytes_i(r) = ceil(s_i r) ---- */

typedef struct {
    double a[8], c[8];
    double s[8];
} linear_ctx;

static double lin_time(void *ctx, int i, double r)
{
    linear_ctx *l = ctx;
    return l->a[i] - l->c[i] * r;
}

static size_t lin_bytes(void *ctx, int i, double r)
{
    linear_ctx *l = ctx;
    return (size_t)ceil(l->s[i] * r - 1e-9);
}

typedef struct {
    double share[64], time[64];
    size_t bytes[64];
    pd_plan_result res;
} result_buf;

static pd_plan_result *result_init(result_buf *rb)
{
    memset(rb, 0, sizeof *rb);
    rb->res.share = rb->share;
    rb->res.bytes = rb->bytes;
    rb->res.time = rb->time;
    return &rb->res;
}

static void check_consistent(const pd_plan_problem *p, const pd_plan_result *r)
{
    size_t used = 0;
    double mk = 0;
    for (int i = 0; i < p->ntasks; i++) {
        used += r->bytes[i];
        if (r->time[i] > mk)
            mk = r->time[i];
        assert_true(r->share[i] >= 0 && r->share[i] <= 1);
    }
    assert_int_equal(used, r->used);
    assert_true(r->used <= p->capacity);
    assert_true(fabs(mk - r->makespan) < 1e-12);
}

/* T0: 10 8 6 4 2, T1: 6 5 4 3 2 on the grid 0, .25, .5, .75, 1; 25 bytes a step. */
static void test_greedy_hand_checked(void **state)
{
    (void)state;
    linear_ctx l = {.a = {10, 6}, .c = {8, 4}, .s = {100, 100}};
    pd_plan_problem p = {.ntasks = 2, .time = lin_time, .bytes = lin_bytes, .ctx = &l, .capacity = 100};
    result_buf rb;
    pd_plan_result *r = result_init(&rb);
    assert_int_equal(pd_plan(PD_PLANNER_GREEDY, &p, 0.25, r), PD_OK);
    /* 10->8->6 (task 0), tie at 6 goes to task 0 (lower id) ->4, then task 1
     * 6->5, capacity spent. */
    assert_true(fabs(r->share[0] - 0.75) < 1e-12);
    assert_true(fabs(r->share[1] - 0.25) < 1e-12);
    assert_int_equal(r->bytes[0], 75);
    assert_int_equal(r->bytes[1], 25);
    assert_true(fabs(r->time[0] - 4) < 1e-12);
    assert_true(fabs(r->time[1] - 5) < 1e-12);
    assert_true(fabs(r->makespan - 5) < 1e-12);
    assert_int_equal(r->used, 100);
    check_consistent(&p, r);
}

static void test_exact_hand_checked(void **state)
{
    (void)state;
    linear_ctx l = {.a = {10, 6}, .c = {8, 4}, .s = {100, 100}};
    pd_plan_problem p = {.ntasks = 2, .time = lin_time, .bytes = lin_bytes, .ctx = &l, .capacity = 100};
    result_buf rb;
    pd_plan_result *r = result_init(&rb);
    assert_int_equal(pd_plan(PD_PLANNER_EXACT, &p, 0.25, r), PD_OK);
    /* Continuous optimum 14/3 needs 66.7 + 33.3 bytes; whole bytes allow
     * 67 + 33: T0 = 10 - 8 * .665 = 4.68, T1 = 6 - 4 * .33 = 4.68. */
    assert_true(fabs(r->makespan - 4.68) < 1e-6);
    assert_true(fabs(r->share[0] - 0.665) < 1e-6);
    assert_true(fabs(r->share[1] - 0.33) < 1e-6);
    assert_int_equal(r->bytes[0], 67);
    assert_int_equal(r->bytes[1], 33);
    check_consistent(&p, r);
}

static void test_zero_capacity(void **state)
{
    (void)state;
    linear_ctx l = {.a = {10, 6, 7}, .c = {8, 4, 1}, .s = {100, 100, 10}};
    pd_plan_problem p = {.ntasks = 3, .time = lin_time, .bytes = lin_bytes, .ctx = &l, .capacity = 0};
    for (int w = 0; w < 2; w++) {
        result_buf rb;
        pd_plan_result *r = result_init(&rb);
        assert_int_equal(pd_plan(w ? PD_PLANNER_EXACT : PD_PLANNER_GREEDY, &p, 0, r), PD_OK);
        for (int i = 0; i < 3; i++) {
            assert_true(r->share[i] == 0);
            assert_int_equal(r->bytes[i], 0);
            assert_true(r->time[i] == l.a[i]);
        }
        assert_true(r->makespan == 10);
        assert_int_equal(r->used, 0);
    }
}

static void test_capacity_exceeds_data(void **state)
{
    (void)state;
    linear_ctx l = {.a = {10, 6, 7}, .c = {8, 4, 1}, .s = {100, 100, 10}};
    pd_plan_problem p = {.ntasks = 3, .time = lin_time, .bytes = lin_bytes, .ctx = &l, .capacity = 1 << 20};
    result_buf rb;
    pd_plan_result *r = result_init(&rb);
    /* Greedy: the longest task ends at share 1 (task 2: 6), and stops. */
    assert_int_equal(pd_plan(PD_PLANNER_GREEDY, &p, 0, r), PD_OK);
    assert_true(fabs(r->makespan - 6) < 1e-12);
    assert_true(r->share[2] == 1);
    check_consistent(&p, r);
    /* Exact: the same makespan, least bytes: task 0 needs (10-6)/8 = .5,
     * task 1 needs 0. */
    r = result_init(&rb);
    assert_int_equal(pd_plan(PD_PLANNER_EXACT, &p, 0, r), PD_OK);
    assert_true(fabs(r->makespan - 6) < 1e-12);
    assert_true(fabs(r->share[0] - 0.5) < 1e-12);
    assert_true(r->share[1] == 0);
    assert_true(r->share[2] == 1);
    assert_int_equal(r->used, 50 + 10);
    check_consistent(&p, r);
}

/* A task with no accesses: flat time, no bytes. It must not take memory
 * nor stop the others from getting it. */
static void test_task_without_accesses(void **state)
{
    (void)state;
    linear_ctx l = {.a = {3, 10}, .c = {0, 8}, .s = {0, 100}};
    pd_plan_problem p = {.ntasks = 2, .time = lin_time, .bytes = lin_bytes, .ctx = &l, .capacity = 50};
    for (int w = 0; w < 2; w++) {
        result_buf rb;
        pd_plan_result *r = result_init(&rb);
        assert_int_equal(pd_plan(w ? PD_PLANNER_EXACT : PD_PLANNER_GREEDY, &p, 0.05, r), PD_OK);
        assert_true(r->share[0] == 0);
        assert_int_equal(r->bytes[0], 0);
        assert_true(fabs(r->share[1] - 0.5) < 1e-9);
        assert_true(fabs(r->makespan - 6) < 1e-9);
        check_consistent(&p, r);
    }
    /* Share-1 time of the idle task is the lower bound: everything fits. */
    l.a[0] = 7;
    p.capacity = 1000;
    result_buf rb;
    pd_plan_result *r = result_init(&rb);
    assert_int_equal(pd_plan(PD_PLANNER_EXACT, &p, 0.05, r), PD_OK);
    assert_true(fabs(r->makespan - 7) < 1e-9);
    assert_true(fabs(r->share[1] - 3.0 / 8) < 1e-9);
}

/* Ties: identical tasks, capacity for three steps; the greedy always raises
 * the lower task id first among equals. */
static void test_ties_deterministic(void **state)
{
    (void)state;
    linear_ctx l = {.a = {4, 4}, .c = {4, 4}, .s = {4, 4}};
    pd_plan_problem p = {.ntasks = 2, .time = lin_time, .bytes = lin_bytes, .ctx = &l, .capacity = 3};
    result_buf rb;
    pd_plan_result *r = result_init(&rb);
    assert_int_equal(pd_plan(PD_PLANNER_GREEDY, &p, 0.25, r), PD_OK);
    /* 0 -> .25 (t 3), 1 -> .25, 0 -> .5 (t 2), then task 1 (t 3) needs 1 byte, none left */
    assert_true(r->share[0] == 0.5);
    assert_true(r->share[1] == 0.25);
    assert_true(r->makespan == 3);
    /* Exact: makespan 3 needs only 2 bytes (one step each). */
    r = result_init(&rb);
    assert_int_equal(pd_plan(PD_PLANNER_EXACT, &p, 0.25, r), PD_OK);
    assert_true(r->makespan == 3);
    assert_int_equal(r->used, 2);
}

/* Non-monotone curves are clamped: time by running minimum, bytes by running
 * maximum; the reported share is the first one reaching the clamped time, so
 * its time is the callback's own. */
static double bumpy_time(void *ctx, int i, double r)
{
    (void)ctx;
    (void)i;
    static const double t[] = {10, 8, 9, 6, 7}; /* grid .25 */
    return t[(int)lround(r * 4)];
}

static size_t bumpy_bytes(void *ctx, int i, double r)
{
    (void)ctx;
    (void)i;
    static const size_t b[] = {0, 10, 5, 30, 40}; /* dips at .5 */
    return b[(int)lround(r * 4)];
}

static void test_non_monotone_clamped(void **state)
{
    (void)state;
    pd_plan_problem p = {.ntasks = 1, .time = bumpy_time, .bytes = bumpy_bytes, .capacity = 35};
    for (int w = 0; w < 2; w++) {
        result_buf rb;
        pd_plan_result *r = result_init(&rb);
        /* exact refines between grid points with linear interpolation; on this
         * grid its callback times clamp back to grid values */
        assert_int_equal(pd_plan(w ? PD_PLANNER_EXACT : PD_PLANNER_GREEDY, &p, 0.25, r), PD_OK);
        assert_true(fabs(r->share[0] - 0.75) < 1e-12);
        assert_int_equal(r->bytes[0], 30);
        assert_true(r->time[0] == 6);
    }
    /* capacity 12: clamped bytes at .5 are 10, time stays 8 -> share .25 */
    p.capacity = 12;
    result_buf rb;
    pd_plan_result *r = result_init(&rb);
    assert_int_equal(pd_plan(PD_PLANNER_GREEDY, &p, 0.25, r), PD_OK);
    assert_true(r->share[0] == 0.25);
    assert_true(r->time[0] == 8);
    assert_int_equal(r->bytes[0], 10);
}

static double nan_time(void *ctx, int i, double r)
{
    (void)ctx;
    (void)i;
    return r > 0.5 ? NAN : 1;
}

static void test_invalid_arguments(void **state)
{
    (void)state;
    linear_ctx l = {.a = {10}, .c = {8}, .s = {100}};
    pd_plan_problem p = {.ntasks = 1, .time = lin_time, .bytes = lin_bytes, .ctx = &l, .capacity = 10};
    result_buf rb;
    pd_plan_result *r = result_init(&rb);
    assert_int_equal(pd_plan(PD_PLANNER_EXACT, NULL, 0, r), PD_EINVAL);
    assert_int_equal(pd_plan(PD_PLANNER_EXACT, &p, 0, NULL), PD_EINVAL);
    assert_int_equal(pd_plan((pd_planner_kind)7, &p, 0, r), PD_EINVAL);
    assert_int_equal(pd_plan(PD_PLANNER_EXACT, &p, -0.1, r), PD_EINVAL);
    assert_int_equal(pd_plan(PD_PLANNER_EXACT, &p, 1.5, r), PD_EINVAL);
    assert_int_equal(pd_plan(PD_PLANNER_EXACT, &p, NAN, r), PD_EINVAL);
    assert_int_equal(pd_plan(PD_PLANNER_EXACT, &p, 1e-7, r), PD_EINVAL);
    pd_plan_problem q = p;
    q.ntasks = -1;
    assert_int_equal(pd_plan(PD_PLANNER_GREEDY, &q, 0, r), PD_EINVAL);
    q = p;
    q.time = NULL;
    assert_int_equal(pd_plan(PD_PLANNER_GREEDY, &q, 0, r), PD_EINVAL);
    q = p;
    q.bytes = NULL;
    assert_int_equal(pd_plan(PD_PLANNER_GREEDY, &q, 0, r), PD_EINVAL);
    q = p;
    q.time = nan_time;
    assert_int_equal(pd_plan(PD_PLANNER_GREEDY, &q, 0, r), PD_EINVAL);
    pd_plan_result bad = *r;
    bad.time = NULL;
    assert_int_equal(pd_plan(PD_PLANNER_EXACT, &p, 0, &bad), PD_EINVAL);
    /* step 1: just the two ends */
    assert_int_equal(pd_plan(PD_PLANNER_GREEDY, &p, 1, r), PD_OK);
    assert_true(r->share[0] == 0); /* 100 bytes do not fit in 10 */
    /* no tasks: fine, empty plan */
    q = p;
    q.ntasks = 0;
    r->makespan = 99;
    assert_int_equal(pd_plan(PD_PLANNER_EXACT, &q, 0, r), PD_OK);
    assert_true(r->makespan == 0);
    assert_int_equal(r->used, 0);
}

/* ---- property tests --------------------------------------------------- */

#define MAXT 8
#define MAXK 21

static uint64_t rng_state;
static uint64_t rng(void)
{
    /* splitmix64: fixed seed, same instances every run */
    return pd_splitmix64(&rng_state);
}
static double urand(void) { return (double)(rng() >> 11) / (double)(1ULL << 53); }

/* Random curves tabulated on a fine grid (1/20) and read piecewise-linearly
 * (time) / by ceiling to the next fine point (bytes). */
typedef struct {
    double t[MAXT][MAXK];
    size_t b[MAXT][MAXK];
} table_ctx;

static double tab_time(void *ctx, int i, double r)
{
    table_ctx *c = ctx;
    double x = r * 20;
    int k = (int)floor(x);
    if (k >= 20)
        return c->t[i][20];
    double f = x - k;
    return c->t[i][k] * (1 - f) + c->t[i][k + 1] * f;
}

static size_t tab_bytes(void *ctx, int i, double r)
{
    table_ctx *c = ctx;
    int k = (int)ceil(r * 20 - 1e-9);
    return c->b[i][k < 0 ? 0 : k > 20 ? 20 : k];
}

static void random_instance(table_ctx *c, int n, int monotone)
{
    for (int i = 0; i < n; i++) {
        double t = 1 + 9 * urand();
        size_t b = 0;
        int idle = urand() < 0.1; /* a task without accesses */
        for (int k = 0; k <= 20; k++) {
            if (k > 0 && !idle) {
                double d = urand() < 0.2 ? 0 : urand() * t * 0.15; /* plateaus too */
                t = monotone || urand() < 0.8 ? t - d : t + d;
                if (t < 0.1)
                    t = 0.1;
                b += (size_t)(urand() * 100);
            }
            c->t[i][k] = t;
            c->b[i][k] = k == 0 ? 0 : b;
        }
    }
}

/* Least makespan over all grid assignments (clamped monotone curves as the
 * planner reads them). */
static double brute_force(table_ctx *c, int n, int K, size_t cap)
{
    double tc[MAXT][MAXK];
    size_t bc[MAXT][MAXK];
    for (int i = 0; i < n; i++)
        for (int k = 0; k <= K; k++) {
            double r = k >= K ? 1.0 : k * (1.0 / K);
            tc[i][k] = tab_time(c, i, r);
            bc[i][k] = k ? tab_bytes(c, i, r) : 0;
            if (k && tc[i][k] > tc[i][k - 1])
                tc[i][k] = tc[i][k - 1];
            if (k && bc[i][k] < bc[i][k - 1])
                bc[i][k] = bc[i][k - 1];
        }
    int idx[MAXT] = {0};
    double best = INFINITY;
    for (;;) {
        size_t used = 0;
        double mk = 0;
        for (int i = 0; i < n; i++) {
            used += bc[i][idx[i]];
            if (tc[i][idx[i]] > mk)
                mk = tc[i][idx[i]];
        }
        if (used <= cap && mk < best)
            best = mk;
        int i = 0;
        while (i < n && ++idx[i] > K)
            idx[i++] = 0;
        if (i == n)
            break;
    }
    return best;
}

static void test_property_small_vs_brute_force(void **state)
{
    (void)state;
    rng_state = 42;
    static table_ctx c;
    for (int inst = 0; inst < 400; inst++) {
        int n = 1 + (int)(rng() % 4);
        int monotone = inst % 4 != 0;
        random_instance(&c, n, monotone);
        size_t total = 0;
        for (int i = 0; i < n; i++)
            total += c.b[i][20];
        size_t cap = (size_t)(urand() * 1.2 * (double)total);
        pd_plan_problem p = {.ntasks = n, .time = tab_time, .bytes = tab_bytes, .ctx = &c, .capacity = cap};
        result_buf g, e;
        pd_plan_result *rg = result_init(&g), *re = result_init(&e);
        assert_int_equal(pd_plan(PD_PLANNER_GREEDY, &p, 0.25, rg), PD_OK);
        assert_int_equal(pd_plan(PD_PLANNER_EXACT, &p, 0.25, re), PD_OK);
        check_consistent(&p, rg);
        check_consistent(&p, re);
        double bf = brute_force(&c, n, 4, cap);
        /* the greedy is makespan-optimal on its grid (docs/planner.md) */
        assert_true(fabs(rg->makespan - bf) < 1e-9);
        assert_true(re->makespan <= bf + 1e-9);
        /* greedy times are the callback's own at the reported shares */
        for (int i = 0; i < n; i++) {
            assert_true(fabs(rg->time[i] - tab_time(&c, i, rg->share[i])) < 1e-9);
            assert_int_equal(rg->bytes[i], rg->share[i] ? tab_bytes(&c, i, rg->share[i]) : 0);
        }
    }
}

static void test_property_larger_instances(void **state)
{
    (void)state;
    rng_state = 7;
    static table_ctx c;
    int refined_better = 0;
    for (int inst = 0; inst < 300; inst++) {
        int n = 1 + (int)(rng() % MAXT);
        random_instance(&c, n, inst % 3 != 0);
        size_t total = 0;
        for (int i = 0; i < n; i++)
            total += c.b[i][20];
        size_t cap = (size_t)(urand() * (double)total);
        pd_plan_problem p = {.ntasks = n, .time = tab_time, .bytes = tab_bytes, .ctx = &c, .capacity = cap};
        double steps[] = {0.05, 0.1, 0.2, 0.3};
        double step = steps[inst % 4];
        result_buf g, e;
        pd_plan_result *rg = result_init(&g), *re = result_init(&e);
        assert_int_equal(pd_plan(PD_PLANNER_GREEDY, &p, step, rg), PD_OK);
        assert_int_equal(pd_plan(PD_PLANNER_EXACT, &p, step, re), PD_OK);
        check_consistent(&p, rg);
        check_consistent(&p, re);
        assert_true(re->makespan <= rg->makespan + 1e-12);
        /* reported times and bytes are the callbacks' own at the shares */
        for (int i = 0; i < n; i++) {
            assert_true(fabs(re->time[i] - tab_time(&c, i, re->share[i])) < 1e-9);
            assert_true(fabs(rg->time[i] - tab_time(&c, i, rg->share[i])) < 1e-9);
            assert_int_equal(re->bytes[i], re->share[i] > 0 ? tab_bytes(&c, i, re->share[i]) : 0);
        }
        if (re->makespan < rg->makespan - 1e-9)
            refined_better++;
    }
    /* coarse steps leave room between grid points: exact must use it */
    assert_true(refined_better > 20);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_greedy_hand_checked),
        cmocka_unit_test(test_exact_hand_checked),
        cmocka_unit_test(test_zero_capacity),
        cmocka_unit_test(test_capacity_exceeds_data),
        cmocka_unit_test(test_task_without_accesses),
        cmocka_unit_test(test_ties_deterministic),
        cmocka_unit_test(test_non_monotone_clamped),
        cmocka_unit_test(test_invalid_arguments),
        cmocka_unit_test(test_property_small_vs_brute_force),
        cmocka_unit_test(test_property_larger_instances),
    };
    return cmocka_run_group_tests_name("planner", tests, NULL, NULL);
}
