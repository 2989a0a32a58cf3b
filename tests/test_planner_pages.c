/* Tests of src/lib/page_select.c: bytes(r) curves from page hotness, hottest
 * page selection, and the curves driving pd_plan. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "common/util.h"
#include "lib/page_select.h"
#include "paddiser.h"

#define PG 4096

static void test_curve_hand_checked(void **state)
{
    (void)state;
    /* runs: 5 (2 pages), 3 (1 page), 1 (1 page); 14 accesses, page 1 untouched */
    const uint64_t counts[] = {5, 0, 1, 5, 3};
    pd_bytes_curve c;
    assert_int_equal(pd_bytes_curve_from_counts(&c, counts, 5, PG), PD_OK);
    assert_int_equal(c.nruns, 3);
    assert_int_equal(c.total, 14);
    assert_int_equal(pd_bytes_curve_touched(&c), 4);
    assert_int_equal(pd_bytes_curve_pages(&c, 0), 0);
    assert_int_equal(pd_bytes_curve_pages(&c, -1), 0);
    assert_int_equal(pd_bytes_curve_pages(&c, 1.0 / 14), 1);
    assert_int_equal(pd_bytes_curve_pages(&c, 5.0 / 14), 1);
    assert_int_equal(pd_bytes_curve_pages(&c, 6.0 / 14), 2);
    assert_int_equal(pd_bytes_curve_pages(&c, 10.0 / 14), 2);
    assert_int_equal(pd_bytes_curve_pages(&c, 0.72), 3);
    assert_int_equal(pd_bytes_curve_pages(&c, 13.0 / 14), 3);
    assert_int_equal(pd_bytes_curve_pages(&c, 0.99), 4);
    assert_int_equal(pd_bytes_curve_pages(&c, 1), 4);
    assert_int_equal(pd_bytes_curve_pages(&c, 7), 4);
    assert_int_equal(pd_bytes_curve_bytes(&c, 0.5), 2 * PG);
    assert_true(pd_bytes_curve_share(&c, 0) == 0);
    assert_true(pd_bytes_curve_share(&c, PG - 1) == 0);
    assert_true(fabs(pd_bytes_curve_share(&c, PG) - 5.0 / 14) < 1e-15);
    assert_true(fabs(pd_bytes_curve_share(&c, 3 * PG + 5) - 13.0 / 14) < 1e-15);
    assert_true(pd_bytes_curve_share(&c, 100 * PG) == 1);
    pd_bytes_curve_free(&c);
    pd_bytes_curve_free(&c); /* idempotent */

    /* the same curve from a histogram (unordered, repeated and empty bins) */
    const uint64_t hc[] = {1, 5, 3, 5, 0, 9};
    const size_t hn[] = {1, 1, 1, 1, 7, 0};
    assert_int_equal(pd_bytes_curve_from_histogram(&c, hc, hn, 6, PG), PD_OK);
    assert_int_equal(c.nruns, 3);
    assert_int_equal(c.total, 14);
    assert_int_equal(pd_bytes_curve_pages(&c, 6.0 / 14), 2);
    assert_int_equal(pd_bytes_curve_pages(&c, 0.72), 3);
    pd_bytes_curve_free(&c);
}

static void test_curve_edge_cases(void **state)
{
    (void)state;
    pd_bytes_curve c;
    const uint64_t zeros[] = {0, 0, 0};
    assert_int_equal(pd_bytes_curve_from_counts(&c, zeros, 3, PG), PD_OK);
    assert_int_equal(pd_bytes_curve_pages(&c, 0.5), 0);
    assert_int_equal(pd_bytes_curve_pages(&c, 1), 0);
    assert_true(pd_bytes_curve_share(&c, PG) == 0);
    pd_bytes_curve_free(&c);
    assert_int_equal(pd_bytes_curve_from_counts(&c, NULL, 0, PG), PD_OK);
    assert_int_equal(pd_bytes_curve_bytes(&c, 1), 0);
    pd_bytes_curve_free(&c);
    assert_int_equal(pd_bytes_curve_from_counts(&c, zeros, 3, 0), PD_EINVAL);
    assert_int_equal(pd_bytes_curve_from_counts(&c, NULL, 3, PG), PD_EINVAL);
    assert_int_equal(pd_bytes_curve_from_counts(NULL, zeros, 3, PG), PD_EINVAL);
    assert_int_equal(pd_bytes_curve_from_histogram(&c, NULL, NULL, 2, PG), PD_EINVAL);
    const uint64_t big[] = {UINT64_MAX / 2, UINT64_MAX / 2, 5};
    assert_int_equal(pd_bytes_curve_from_counts(&c, big, 3, PG), PD_EINVAL); /* total overflows */
}

static int cmp_desc(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x < y) - (x > y);
}

static uint64_t rng_state = 99;
static uint64_t rng(void)
{
    return pd_splitmix64(&rng_state);
}

/* Random counts over several radix digits against a qsort reference. */
static void test_curve_random_vs_reference(void **state)
{
    (void)state;
    enum { N = 5000 };
    static uint64_t counts[N], sorted[N];
    static size_t idx[N];
    for (int round = 0; round < 6; round++) {
        int bits = round < 2 ? 8 : round < 4 ? 20 : 40;
        for (int i = 0; i < N; i++)
            counts[i] = rng() % 5 == 0 ? 0 : rng() & ((1ULL << bits) - 1);
        memcpy(sorted, counts, sizeof counts);
        qsort(sorted, N, sizeof *sorted, cmp_desc);
        pd_bytes_curve c;
        assert_int_equal(pd_bytes_curve_from_counts(&c, counts, N, PG), PD_OK);
        uint64_t total = 0;
        size_t touched = 0;
        for (int i = 0; i < N; i++) {
            total += sorted[i];
            touched += sorted[i] > 0;
        }
        assert_int_equal(c.total, total);
        assert_int_equal(pd_bytes_curve_touched(&c), touched);
        size_t prev = 0;
        for (int k = 0; k <= 100; k++) {
            double r = k / 100.0;
            size_t p = pd_bytes_curve_pages(&c, r);
            assert_true(p >= prev); /* monotone */
            prev = p;
            /* the reference: shortest sorted prefix reaching r of the accesses */
            uint64_t acc = 0;
            size_t m = 0;
            while (r > 0 && m < touched && (double)acc < r * (double)total * (1 - 1e-12))
                acc += sorted[m++];
            assert_int_equal(p, m);
            assert_true(pd_bytes_curve_share(&c, p * PG) >= r * (1 - 1e-9));
        }
        /* hottest selection = the sorted prefix, ties by index */
        size_t got = pd_select_hottest(counts, N, 700, idx);
        assert_int_equal(got, touched < 700 ? touched : 700);
        for (size_t i = 0; i < got; i++) {
            assert_int_equal(counts[idx[i]], sorted[i]);
            if (i && counts[idx[i]] == counts[idx[i - 1]])
                assert_true(idx[i] > idx[i - 1]);
        }
        pd_bytes_curve_free(&c);
    }
}

static void test_select_hand_checked(void **state)
{
    (void)state;
    const uint64_t counts[] = {5, 0, 1, 5, 3};
    size_t idx[5];
    assert_int_equal(pd_select_hottest(counts, 5, 3, idx), 3);
    assert_int_equal(idx[0], 0);
    assert_int_equal(idx[1], 3);
    assert_int_equal(idx[2], 4);
    assert_int_equal(pd_select_hottest(counts, 5, 10, idx), 4); /* never the untouched page */
    assert_int_equal(idx[3], 2);
    assert_int_equal(pd_select_hottest(counts, 5, 0, idx), 0);
    assert_int_equal(pd_select_hottest(NULL, 5, 3, idx), 0);

    const uint64_t other[] = {1, 2};
    pd_task_pages tasks[3] = {{counts, 5}, {other, 2}, {NULL, 0}};
    size_t bytes[3] = {2 * PG + 100, 0, 5 * PG};
    size_t *sel[3], nsel[3];
    assert_int_equal(pd_select_plan(tasks, 3, bytes, PG, sel, nsel), PD_OK);
    assert_int_equal(nsel[0], 2);
    assert_int_equal(sel[0][0], 0);
    assert_int_equal(sel[0][1], 3);
    assert_int_equal(nsel[1], 0);
    assert_null(sel[1]);
    assert_int_equal(nsel[2], 0);
    for (int i = 0; i < 3; i++)
        free(sel[i]);
    assert_int_equal(pd_select_plan(tasks, 3, bytes, 0, sel, nsel), PD_EINVAL);
    assert_int_equal(pd_select_plan(tasks, -1, bytes, PG, sel, nsel), PD_EINVAL);
    pd_task_pages bad = {NULL, 4};
    assert_int_equal(pd_select_plan(&bad, 1, bytes, PG, sel, nsel), PD_EINVAL);
}

/* Curves from pages drive the planner; the selected pages fit the capacity
 * and serve at least each task's planned share. */
typedef struct {
    pd_bytes_curve *curves;
    double t_dram[4], t_slow[4];
} page_ctx;

static double page_time(void *ctx, int i, double r)
{
    page_ctx *p = ctx;
    return p->t_slow[i] - (p->t_slow[i] - p->t_dram[i]) * r;
}

static size_t page_bytes(void *ctx, int i, double r)
{
    page_ctx *p = ctx;
    return pd_bytes_curve_cb(p->curves, i, r);
}

static void test_curves_drive_plan(void **state)
{
    (void)state;
    enum { NT = 4, NP = 2000 };
    static uint64_t counts[NT][NP];
    pd_bytes_curve curves[NT];
    page_ctx ctx = {.curves = curves, .t_dram = {1, 2, 1, 3}, .t_slow = {4, 5, 3, 6}};
    for (int i = 0; i < NT; i++) {
        for (int p = 0; p < NP; p++) /* skewed: a few hot pages */
            counts[i][p] = rng() % 10 == 0 ? 50 + rng() % 1000 : rng() % 8;
        assert_int_equal(pd_bytes_curve_from_counts(&curves[i], counts[i], NP, PG), PD_OK);
    }
    pd_plan_problem prob = {.ntasks = NT, .time = page_time, .bytes = page_bytes, .ctx = &ctx,
                            .capacity = (size_t)NP * PG};
    for (int w = 0; w < 2; w++) {
        double share[NT], time[NT];
        size_t bytes[NT];
        pd_plan_result res = {.share = share, .bytes = bytes, .time = time};
        assert_int_equal(pd_plan(w ? PD_PLANNER_EXACT : PD_PLANNER_GREEDY, &prob, 0.05, &res), PD_OK);
        assert_true(res.used <= prob.capacity);
        pd_task_pages tasks[NT];
        for (int i = 0; i < NT; i++)
            tasks[i] = (pd_task_pages){counts[i], NP};
        size_t *sel[NT], nsel[NT], pages = 0;
        assert_int_equal(pd_select_plan(tasks, NT, bytes, PG, sel, nsel), PD_OK);
        for (int i = 0; i < NT; i++) {
            uint64_t acc = 0;
            for (size_t k = 0; k < nsel[i]; k++)
                acc += counts[i][sel[i][k]];
            assert_true((double)acc >= share[i] * (double)curves[i].total * (1 - 1e-9));
            pages += nsel[i];
            free(sel[i]);
        }
        assert_true(pages * PG <= prob.capacity);
    }
    for (int i = 0; i < NT; i++)
        pd_bytes_curve_free(&curves[i]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_curve_hand_checked),
        cmocka_unit_test(test_curve_edge_cases),
        cmocka_unit_test(test_curve_random_vs_reference),
        cmocka_unit_test(test_select_hand_checked),
        cmocka_unit_test(test_curves_drive_plan),
    };
    return cmocka_run_group_tests_name("planner_pages", tests, NULL, NULL);
}
