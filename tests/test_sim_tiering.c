/* Tests of the tiering baselines (src/sim/tiering.c): capacity, seeds,
 * a hot set found from samples, TPP's recency, HeMem's whole units,
 * MEMTIS's split of a skewed unit, Colloid's held-back capacity. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "sim/profile.h"
#include "sim/tier.h"
#include "sim/tiering.h"

typedef int (*baseline_fn)(const pd_sim_profile *, size_t, const pd_sim_baseline_opts *, double *);

/* One task, one object of `pages` pages and `nphases` phases; access(ph, g)
 * line reads of page g in phase ph. Regions are one page wide when pages
 * <= 64, so the phases see page detail. */
static pd_sim_profile *profile(size_t pages, int nphases, double (*access)(int ph, size_t g))
{
    pd_sim_profile *p = pd_sim_profile_new("synth", "base", 1);
    assert_non_null(p);
    assert_int_equal(pd_sim_profile_add_object(p, "a", pages * PD_SIM_PAGE, PD_PATTERN_RANDOM, 8), 0);
    assert_int_equal(pd_sim_profile_alloc_counts(p), 0);
    for (int ph = 0; ph < nphases; ph++) {
        pd_sim_phase_task *row = pd_sim_profile_add_phase(p);
        assert_non_null(row);
        row->time_s = 1e-3;
        for (size_t g = 0; g < pages; g++) {
            uint64_t a = (uint64_t)access(ph, g);
            row->reads[p->page_region[g]] += a;
            p->tasks[0].reads[g] += a;
        }
    }
    return p;
}

static size_t count_fast(const double *fast, size_t n, size_t lo, size_t hi)
{
    size_t k = 0;
    for (size_t g = lo; g < hi && g < n; g++)
        k += fast[g] > 0.5;
    return k;
}

/* The last quarter of 64 pages is 100x hotter than the rest. */
static double hot_tail(int ph, size_t g)
{
    (void)ph;
    return g >= 48 ? 2000 : 20;
}

/* Only the last quarter is touched (TPP sees recency, not frequency). */
static double only_tail(int ph, size_t g)
{
    (void)ph;
    return g >= 48 ? 2000 : 0;
}

static void test_capacity_seed_and_hot_set(void **state)
{
    (void)state;
    pd_sim_profile *tail = profile(64, 8, only_tail), *skew = profile(64, 8, hot_tail);
    const baseline_fn fns[] = {pd_sim_tpp, pd_sim_damon};
    const char *names[] = {"tpp", "damon"};
    double a[64], b[64];
    for (size_t k = 0; k < 2; k++) {
        const pd_sim_profile *p = k == 0 ? tail : skew;
        pd_sim_baseline_opts o = {.seed = 3};
        assert_int_equal(fns[k](p, 16, &o, a), 0);
        assert_int_equal(fns[k](p, 16, &o, b), 0);
        assert_memory_equal(a, b, sizeof a); /* deterministic for a seed */
        assert_true(count_fast(a, 64, 0, 64) <= 16);
        size_t hot = count_fast(a, 64, 48, 64);
        if (hot < 12)
            fail_msg("%s: %zu of the 16 hot pages in fast memory", names[k], hot);
        assert_int_equal(fns[k](p, 0, &o, a), 0);
        assert_int_equal(count_fast(a, 64, 0, 64), 0);
    }
    pd_sim_profile_free(tail);
    pd_sim_profile_free(skew);
}

/* Hot in the first half of the phases on pages 0..15 (which first touch
 * put in fast memory), then hot on pages 48..63: TPP follows the recency. */
static double moving(int ph, size_t g)
{
    if (ph < 8)
        return g < 16 ? 2000 : 0;
    return g >= 48 ? 2000 : 0;
}

static void test_tpp_follows_recency(void **state)
{
    (void)state;
    pd_sim_profile *p = profile(64, 16, moving);
    double fast[64];
    pd_sim_baseline_opts o = {.seed = 1};
    assert_int_equal(pd_sim_tpp(p, 16, &o, fast), 0);
    assert_true(count_fast(fast, 64, 48, 64) >= 10);
    assert_true(count_fast(fast, 64, 0, 16) <= 6);
    pd_sim_profile_free(p);
}

/* 1024 pages = two 2 MiB units; the second is hot, and a quarter of its
 * hotness is enough for MEMTIS to split it when it sits on a few pages. */
static double second_unit(int ph, size_t g)
{
    (void)ph;
    return g >= 512 ? 400 : 4;
}

static double skewed_unit(int ph, size_t g)
{
    (void)ph;
    return g >= 512 && g < 512 + 32 ? 40000 : 4;
}

static void test_hemem_units_and_memtis_split(void **state)
{
    (void)state;
    pd_sim_profile *p = profile(1024, 6, second_unit);
    double *fast = malloc(1024 * sizeof *fast);
    pd_sim_baseline_opts o = {.seed = 2};
    assert_int_equal(pd_sim_hemem(p, 600, &o, fast), 0);
    assert_int_equal(count_fast(fast, 1024, 512, 1024), 512); /* the hot unit, whole */
    assert_int_equal(count_fast(fast, 1024, 0, 512), 0);
    assert_int_equal(pd_sim_hemem(p, 500, &o, fast), 0); /* a unit does not fit: nothing moves */
    assert_int_equal(count_fast(fast, 1024, 0, 1024), 0);
    pd_sim_profile_free(p);
    p = profile(1024, 6, skewed_unit);
    assert_int_equal(pd_sim_memtis(p, 64, &o, fast), 0);
    assert_true(count_fast(fast, 1024, 512, 512 + 32) >= 28); /* split: the hot subpages, at 4 KiB */
    assert_true(count_fast(fast, 1024, 0, 1024) <= 64);
    free(fast);
    pd_sim_profile_free(p);
}

/* Colloid on equal tiers never holds capacity back; on a slow tier it
 * fills what it may. */
static void test_colloid(void **state)
{
    (void)state;
    pd_sim_profile *p = profile(64, 16, hot_tail);
    double fast[64];
    size_t held = 99;
    pd_sim_baseline_opts o = {.seed = 1};
    pd_sim_machine m;
    assert_int_equal(pd_sim_machine_preset("optane", &m), 0);
    assert_int_equal(pd_sim_colloid(p, &m, 16, &o, fast, &held), 0);
    assert_int_equal(held, 0);
    assert_int_equal(count_fast(fast, 64, 0, 64), 16);
    assert_true(count_fast(fast, 64, 48, 64) >= 12);
    /* a fast tier far slower than the slow one: it declines to use it */
    m.tier[PD_SIM_FAST].lat_seq_ns = m.tier[PD_SIM_FAST].lat_rand_ns = 10 * m.tier[PD_SIM_SLOW].lat_seq_ns;
    assert_int_equal(pd_sim_colloid(p, &m, 16, &o, fast, &held), 0);
    assert_true(held > 0);
    assert_int_equal(count_fast(fast, 64, 0, 64) + held, 16);
    pd_sim_profile_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_capacity_seed_and_hot_set),
        cmocka_unit_test(test_tpp_follows_recency),
        cmocka_unit_test(test_hemem_units_and_memtis_split),
        cmocka_unit_test(test_colloid),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
