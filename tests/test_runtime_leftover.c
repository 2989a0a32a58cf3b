/* rt_fill_leftover (src/lib/placement.c): the capacity a plan left goes on
 * by benefit, one RT_GRID step at a time to the longest task whose step
 * fits. It now takes everything at once where every task's whole curve
 * fits, and asks a task for its next step's bytes only when it took one:
 * `paddiser run` sync points spent most of their time there (GAP's tc,
 * 2656 regions, 0.36 - 0.61 ms a sync point before, 0.085 ms after). The
 * result must be the step-by-step loop's to the bit, since every process
 * of a plan across processes fills alike: checked against that loop, kept
 * here as the reference, on random problems. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "lib/placement.h"

#define MAXT 48

typedef struct {
    double t[MAXT][RT_GRID + 1];
    size_t b[MAXT][RT_GRID + 1];
    long bytes_calls;
} curves;

static double time_cb(void *ctx, int task, double r)
{
    const curves *c = ctx;
    if (r <= 0)
        return c->t[task][0];
    if (r >= 1)
        return c->t[task][RT_GRID];
    double x = r * RT_GRID;
    int k = (int)x;
    return c->t[task][k] + (c->t[task][k + 1] - c->t[task][k]) * (x - k);
}

static size_t bytes_cb(void *ctx, int task, double r)
{
    curves *c = ctx;
    c->bytes_calls++;
    if (r <= 0)
        return 0;
    int k = (int)ceil(r * RT_GRID - 1e-9);
    return c->b[task][k > RT_GRID ? RT_GRID : k];
}

/* The loop as it was until 2026-12-05: every step asks every task. */
static void reference_fill(const pd_plan_problem *prob, pd_plan_result *res)
{
    size_t used = 0;
    for (int i = 0; i < prob->ntasks; i++)
        used += res->bytes[i];
    for (;;) {
        int best = -1;
        double best_share = 0;
        size_t best_bytes = 0;
        for (int i = 0; i < prob->ntasks; i++) {
            if (res->share[i] >= 1.0 - 1e-12)
                continue;
            int k = (int)floor(res->share[i] * RT_GRID + 1e-9) + 1;
            double r = k >= RT_GRID ? 1.0 : (double)k / RT_GRID;
            size_t b = prob->bytes(prob->ctx, i, r);
            if (b < res->bytes[i])
                b = res->bytes[i];
            if (b - res->bytes[i] > prob->capacity - (used < prob->capacity ? used : prob->capacity))
                continue;
            if (best < 0 || res->time[i] > res->time[best]) {
                best = i;
                best_share = r;
                best_bytes = b;
            }
        }
        if (best < 0)
            break;
        used += best_bytes - res->bytes[best];
        res->share[best] = best_share;
        res->bytes[best] = best_bytes;
        double t = prob->time(prob->ctx, best, best_share);
        if (t < res->time[best])
            res->time[best] = t;
    }
    double m = 0;
    for (int i = 0; i < prob->ntasks; i++)
        m = res->time[i] > m ? res->time[i] : m;
    if (prob->ntasks > 0 && m < res->makespan)
        res->makespan = m;
    res->used = used;
}

static uint64_t rng = 88172645463325252ull;
static uint64_t next_u64(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}
static double unit(void) { return (double)(next_u64() >> 11) / 9007199254740992.0; }

/* A problem: non-increasing times and non-decreasing bytes on the grid (as
 * the runtime's curves are), a plan at random grid shares holding at
 * least their bytes, and a capacity from what the plan uses to past what
 * every task's whole curve needs. */
static int random_problem(curves *c, double *share, size_t *bytes, double *times, size_t *capacity)
{
    int n = 1 + (int)(next_u64() % MAXT);
    size_t used = 0, whole = 0;
    for (int i = 0; i < n; i++) {
        double t = 1 + 10 * unit(), flat = unit() < 0.3 ? 0 : 1; /* some curves stay flat */
        size_t b = 0;
        for (int k = 0; k <= RT_GRID; k++) {
            c->t[i][k] = t;
            c->b[i][k] = b;
            t -= flat * unit() * 0.2;
            b += (size_t)(next_u64() % 3) * 4096; /* steps of 0 to 2 pages */
        }
        int k = (int)(next_u64() % (RT_GRID + 1));
        share[i] = k >= RT_GRID ? 1.0 : (double)k / RT_GRID;
        bytes[i] = c->b[i][k] + (next_u64() % 4 == 0 ? 4096 : 0);
        times[i] = c->t[i][k] * (next_u64() % 5 == 0 ? 1.1 : 1.0);
        used += bytes[i];
        whole += c->b[i][RT_GRID] > bytes[i] ? c->b[i][RT_GRID] - bytes[i] : 0;
    }
    *capacity = used + (size_t)(unit() * 1.2 * (double)whole);
    if (next_u64() % 8 == 0)
        *capacity = used > 4096 ? used - 4096 : 0; /* over capacity already */
    return n;
}

static void test_fill_matches_the_step_by_step_loop(void **state)
{
    (void)state;
    static curves c;
    int whole_fits = 0, constrained = 0;
    long calls_ref = 0, calls_new = 0;
    for (int round = 0; round < 2000; round++) {
        double s0[MAXT], t0[MAXT], s1[MAXT], t1[MAXT];
        size_t b0[MAXT], b1[MAXT], cap;
        int n = random_problem(&c, s0, b0, t0, &cap);
        memcpy(s1, s0, sizeof s0);
        memcpy(b1, b0, sizeof b0);
        memcpy(t1, t0, sizeof t0);
        double makespan = 0;
        for (int i = 0; i < n; i++)
            makespan = t0[i] > makespan ? t0[i] : makespan;
        pd_plan_problem prob = {n, time_cb, bytes_cb, &c, cap};
        pd_plan_result ref = {s0, b0, t0, makespan, 0}, got = {s1, b1, t1, makespan, 0};
        c.bytes_calls = 0;
        reference_fill(&prob, &ref);
        calls_ref += c.bytes_calls;
        c.bytes_calls = 0;
        rt_fill_leftover(&prob, &got);
        calls_new += c.bytes_calls;
        int all_full = 1;
        for (int i = 0; i < n; i++) {
            assert_true(s0[i] == s1[i]);
            assert_true(b0[i] == b1[i]);
            assert_true(t0[i] == t1[i]);
            all_full &= s0[i] >= 1.0 - 1e-12;
        }
        assert_true(ref.makespan == got.makespan);
        assert_true(ref.used == got.used);
        all_full ? whole_fits++ : constrained++;
    }
    /* both paths were taken, and the bytes were asked far less often */
    assert_true(whole_fits > 100);
    assert_true(constrained > 100);
    assert_true(calls_new * 4 < calls_ref);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fill_matches_the_step_by_step_loop),
    };
    return cmocka_run_group_tests_name("runtime_leftover", tests, NULL, NULL);
}
