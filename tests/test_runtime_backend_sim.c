/* Tests of the simulated two-tier backend (src/lib/backend_sim.c). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "lib/backend.h"

#define PG 4096u

static void *page(uintptr_t i) { return (void *)(0x10000000u + i * PG); }

static void test_capacity_enforced(void **state)
{
    (void)state;
    pd_backend *b = pd_backend_sim_create(3 * PG);
    assert_non_null(b);
    assert_string_equal(b->name, "sim");
    assert_int_equal(b->fast_free(b), 3 * PG);

    pd_migrate_stats st = {0};
    assert_int_equal(b->place(b, page(0), 8 * PG, 1, &st), 0);
    assert_int_equal(st.pages_requested, 8);
    assert_int_equal(st.pages_moved, 8);
    assert_int_equal(b->fast_free(b), 3 * PG);

    void *want[5] = {page(0), page(1), page(2), page(3), page(4)};
    pd_migrate_stats mv = {0};
    assert_int_equal(b->move(b, want, 5, 0, &mv), -ENOMEM);
    assert_int_equal(mv.pages_requested, 5);
    assert_int_equal(mv.pages_moved, 3);
    assert_int_equal(mv.pages_failed, 2);
    assert_int_equal(mv.enomem, 2);
    assert_int_equal(mv.bytes_moved, 3 * PG);
    assert_int_equal(b->fast_free(b), 0);

    int tier[6];
    void *q[6] = {page(0), page(2), page(3), page(7), page(100), (char *)page(1) + 17};
    assert_int_equal(b->query(b, q, 6, tier), 0);
    assert_int_equal(tier[0], 0);
    assert_int_equal(tier[1], 0);
    assert_int_equal(tier[2], 1);
    assert_int_equal(tier[3], 1);
    assert_int_equal(tier[4], -ENOENT); /* never placed */
    assert_int_equal(tier[5], 0);       /* address inside a fast page */

    /* Moving one back frees room for another; already-there counts as moved. */
    pd_migrate_stats back = {0};
    assert_int_equal(b->move(b, want, 1, 1, &back), 0);
    assert_int_equal(b->fast_free(b), PG);
    pd_migrate_stats again = {0};
    assert_int_equal(b->move(b, want + 1, 3, 0, &again), 0);
    assert_int_equal(again.pages_moved, 3);
    assert_int_equal(again.bytes_moved, PG); /* only page 3 really moved */
    assert_int_equal(b->fast_free(b), 0);
    b->destroy(b);
}

static void test_bad_arguments(void **state)
{
    (void)state;
    pd_backend *b = pd_backend_sim_create(PG);
    pd_migrate_stats st = {0};
    assert_int_equal(b->place(b, (char *)page(0) + 1, PG, 0, &st), -EINVAL);
    assert_int_equal(b->place(b, page(0), PG, 7, &st), -EINVAL);
    assert_int_equal(b->move(b, NULL, 2, 0, &st), -EINVAL);
    void *odd = (char *)page(0) + 5;
    assert_int_equal(b->move(b, &odd, 1, 0, &st), -ENOMEM);
    assert_int_equal(st.efault, 1);
    b->destroy(b);
}

static void test_many_pages(void **state)
{
    (void)state;
    /* Crosses several table growths. */
    pd_backend *b = pd_backend_sim_create(5000 * (size_t)PG);
    pd_migrate_stats st = {0};
    assert_int_equal(b->place(b, page(0), 20000 * (size_t)PG, 0, &st), -ENOMEM);
    assert_int_equal(st.pages_moved, 5000);
    assert_int_equal(st.enomem, 15000);
    assert_int_equal(b->fast_free(b), 0);
    int tier[2];
    void *q[2] = {page(4999), page(5000)};
    b->query(b, q, 2, tier);
    assert_int_equal(tier[0], 0);
    assert_int_equal(tier[1], 1);
    b->destroy(b);
}

/* promote: hottest first into a full fast tier; room comes from the cold
 * list, coldest first, and a page in both lists only for a hotter one. */
static void test_promote_demotes_for_hotter_pages(void **state)
{
    (void)state;
    pd_backend *b = pd_backend_sim_create(4 * PG);
    assert_non_null(b->promote);
    pd_migrate_stats st = {0};
    void *old[4] = {page(10), page(11), page(12), page(13)};
    assert_int_equal(b->move(b, old, 4, PD_TIER_FAST, &st), 0);
    assert_int_equal(b->fast_free(b), 0);

    /* Plan, hottest first: 0, 1, 11, 2, 13; 10 and 12 left it. Cold list:
     * 12 (dropped), then the plan reversed: 13, 2, 11, 1, 0. */
    void *want[5] = {page(0), page(1), page(11), page(2), page(13)};
    void *cold[6] = {page(12), page(13), page(2), page(11), page(1), page(0)};
    pd_migrate_stats pro = {0}, dem = {0};
    assert_int_equal(b->promote(b, want, 5, cold, 6, &pro, &dem), -ENOMEM);
    int tier[8];
    void *q[8] = {page(0), page(1), page(2), page(10), page(11), page(12), page(13), page(3)};
    assert_int_equal(b->query(b, q, 8, tier), 0);
    assert_int_equal(tier[0], PD_TIER_FAST);
    assert_int_equal(tier[1], PD_TIER_FAST);
    assert_int_equal(tier[2], PD_TIER_SLOW); /* the coldest refused page is not worth 11 */
    assert_int_equal(tier[3], PD_TIER_FAST); /* not in the cold list: kept */
    assert_int_equal(tier[4], PD_TIER_FAST); /* hotter than every refused page */
    assert_int_equal(tier[5], PD_TIER_SLOW); /* dropped: went first */
    assert_int_equal(tier[6], PD_TIER_SLOW); /* planned but colder than 1: displaced */
    assert_int_equal(tier[7], -ENOENT);
    assert_int_equal(dem.pages_moved, 2);
    assert_int_equal(dem.bytes_moved, 2 * PG);
    assert_int_equal(pro.pages_requested, 5);
    assert_int_equal(pro.pages_moved, 3);   /* 0, 1 moved, 11 already there */
    assert_int_equal(pro.bytes_moved, 2 * PG);
    assert_int_equal(pro.pages_failed, 2);  /* 2 refused, 13 displaced */
    assert_int_equal(pro.enomem, 2);
    assert_int_equal(b->fast_free(b), 0);

    /* Room enough: no demotion. */
    pd_backend *big = pd_backend_sim_create(16 * PG);
    pd_migrate_stats p2 = {0}, d2 = {0};
    assert_int_equal(big->promote(big, want, 5, cold, 6, &p2, &d2), 0);
    assert_int_equal(p2.pages_moved, 5);
    assert_int_equal(d2.pages_requested, 0);
    void *bad = (char *)page(0) + 1;
    assert_int_equal(big->promote(big, &bad, 1, NULL, 0, &p2, NULL), -ENOMEM);
    assert_int_equal(p2.efault, 1);
    assert_int_equal(big->promote(big, NULL, 1, NULL, 0, &p2, NULL), -EINVAL);
    big->destroy(big);
    b->destroy(b);
}

/* release: a range the runtime stopped managing gives its fast capacity
 * back and is forgotten (freed memory whose address may be reused); the
 * pages left keep their tiers as their runs are cut, and a range far
 * larger than every run forgets them all. */
static void test_release_gives_capacity_back(void **state)
{
    (void)state;
    pd_backend *b = pd_backend_sim_create(64 * PG);
    assert_non_null(b->release);
    pd_migrate_stats st = {0};
    assert_int_equal(b->place(b, page(0), 64 * PG, PD_PLACE_FIRST_TOUCH, &st), 0); /* all fast */
    assert_int_equal(b->fast_free(b), 0);
    void *want[8] = {page(1000), page(1001), page(1002), page(1003), page(1004), page(1005), page(1006), page(1007)};
    pd_migrate_stats refused = {0};
    assert_int_equal(b->move(b, want, 8, PD_TIER_FAST, &refused), -ENOMEM);
    assert_int_equal(refused.enomem, 8);

    /* pages 0..10 (an unaligned start rounds down), then the rest */
    assert_int_equal(b->release(b, (char *)page(0) + 100, 10 * PG), 0);
    assert_int_equal(b->fast_free(b), 11 * PG);
    int tier[3];
    void *q[3] = {page(5), page(11), page(63)};
    assert_int_equal(b->query(b, q, 3, tier), 0);
    assert_int_equal(tier[0], -ENOENT); /* forgotten */
    assert_int_equal(tier[1], PD_TIER_FAST);
    assert_int_equal(tier[2], PD_TIER_FAST);
    assert_int_equal(b->release(b, page(11), 53 * PG), 0);
    assert_int_equal(b->fast_free(b), 64 * PG);
    pd_migrate_stats again = {0};
    assert_int_equal(b->move(b, want, 8, PD_TIER_FAST, &again), 0);
    assert_int_equal(again.pages_moved, 8);
    assert_int_equal(b->release(b, page(0), 0), 0);
    errno = 0;
    assert_int_equal(b->release(b, NULL, PG), -1);
    assert_int_equal(errno, EINVAL);

    /* Many pages, every third one released one at a time: the others are
     * all still found with their tiers (each release cuts a run in two). */
    pd_backend *big = pd_backend_sim_create(3000 * (size_t)PG);
    pd_migrate_stats bst = {0};
    assert_int_equal(big->place(big, page(0), 9000 * (size_t)PG, PD_PLACE_FIRST_TOUCH, &bst), 0);
    for (uintptr_t i = 0; i < 9000; i += 3)
        assert_int_equal(big->release(big, page(i), PG), 0);
    assert_int_equal(big->fast_free(big), 1000 * (size_t)PG); /* pages 0..2999 were fast */
    for (uintptr_t i = 0; i < 9000; i++) {
        int t;
        void *one = page(i);
        assert_int_equal(big->query(big, &one, 1, &t), 0);
        assert_int_equal(t, i % 3 == 0 ? -ENOENT : i < 3000 ? PD_TIER_FAST : PD_TIER_SLOW);
    }
    /* a range past every page */
    assert_int_equal(big->release(big, page(0), (size_t)1 << 40), 0);
    assert_int_equal(big->fast_free(big), 3000 * (size_t)PG);
    void *q2[2] = {page(1), page(8999)};
    assert_int_equal(big->query(big, q2, 2, tier), 0);
    assert_int_equal(tier[0], -ENOENT);
    assert_int_equal(tier[1], -ENOENT);
    big->destroy(big);
    b->destroy(b);
}

/* The backend against a model of its contract, page by page: random
 * places (fast, slow, first touch), moves, promotions, queries and
 * releases over a window of pages, with duplicates, misaligned addresses
 * and a small capacity, must give the same return codes, counts and tiers
 * after every call. The model is a tier per page and nothing else, so it
 * checks that keeping runs instead of pages changed no outcome. */
#define WIN 96

typedef struct {
    int tier[WIN]; /* -1: never placed */
    size_t fast, cap;
} page_model;

static void model_set(page_model *m, size_t i, int tier, pd_migrate_stats *st)
{
    st->pages_requested++;
    if (m->tier[i] == tier) {
        st->pages_moved++;
        return;
    }
    if (tier == PD_TIER_FAST && m->fast >= m->cap) {
        st->pages_failed++;
        st->enomem++;
        if (m->tier[i] < 0)
            m->tier[i] = PD_TIER_SLOW;
        return;
    }
    m->fast -= m->tier[i] == PD_TIER_FAST;
    m->fast += tier == PD_TIER_FAST;
    m->tier[i] = tier;
    st->pages_moved++;
    st->bytes_moved += PG;
}

static int model_place(page_model *m, size_t first, size_t n, int tier, pd_migrate_stats *st)
{
    for (size_t i = first; i < first + n; i++) {
        if (tier != PD_PLACE_FIRST_TOUCH) {
            model_set(m, i, tier, st);
            continue;
        }
        st->pages_requested++;
        if (m->tier[i] < 0) {
            pd_migrate_stats quiet = {0};
            model_set(m, i, m->fast < m->cap ? PD_TIER_FAST : PD_TIER_SLOW, &quiet);
        }
    }
    return st->pages_failed ? -ENOMEM : 0;
}

static size_t index_of(void *p) { return ((uintptr_t)p - (uintptr_t)page(0)) / PG; }
static int misaligned(void *p) { return ((uintptr_t)p - (uintptr_t)page(0)) % PG != 0; }

static int model_move(page_model *m, void **pages, size_t n, int tier, pd_migrate_stats *st)
{
    size_t failed0 = st->pages_failed;
    for (size_t i = 0; i < n; i++) {
        if (misaligned(pages[i])) {
            st->pages_requested++;
            st->pages_failed++;
            st->efault++;
        } else {
            model_set(m, index_of(pages[i]), tier, st);
        }
    }
    return st->pages_failed > failed0 ? -ENOMEM : 0;
}

/* promote's contract (backend.h), one page at a time. */
static int model_promote(page_model *m, void **pages, size_t n, void **cold, size_t nc, pd_migrate_stats *st,
                         pd_migrate_stats *demoted)
{
    signed char state[4 * WIN];
    unsigned char displaced[4 * WIN] = {0};
    for (size_t i = 0; i < n; i++) {
        pd_migrate_stats one = {0};
        if (misaligned(pages[i])) {
            state[i] = -1;
            continue;
        }
        model_set(m, index_of(pages[i]), PD_TIER_FAST, &one);
        state[i] = one.pages_moved ? (one.bytes_moved ? 2 : 1) : 0;
    }
    size_t hottest = 0;
    for (size_t c = 0; c < nc; c++) {
        while (hottest < n && (state[hottest] != 0 || displaced[hottest]))
            hottest++;
        if (hottest == n)
            break;
        if (misaligned(cold[c]) || m->tier[index_of(cold[c])] != PD_TIER_FAST)
            continue;
        long at = -1;
        for (size_t i = 0; i < n && at < 0; i++)
            if (pages[i] == cold[c])
                at = (long)i;
        if (at >= 0 && ((size_t)at <= hottest || displaced[at]))
            continue;
        model_set(m, index_of(cold[c]), PD_TIER_SLOW, demoted);
        if (at >= 0) {
            displaced[at] = 1;
            state[at] = 0;
        }
        pd_migrate_stats one = {0};
        model_set(m, index_of(pages[hottest]), PD_TIER_FAST, &one);
        state[hottest] = one.pages_moved ? 2 : 0;
    }
    size_t failed = 0;
    for (size_t i = 0; i < n; i++) {
        failed += state[i] <= 0;
        st->pages_requested++;
        if (state[i] > 0) {
            st->pages_moved++;
            st->bytes_moved += state[i] == 2 ? PG : 0;
        } else {
            st->pages_failed++;
            if (state[i] == 0)
                st->enomem++;
            else
                st->efault++;
        }
    }
    return failed ? -ENOMEM : 0;
}

static void assert_same_stats(const pd_migrate_stats *a, const pd_migrate_stats *b)
{
    assert_int_equal(a->pages_requested, b->pages_requested);
    assert_int_equal(a->pages_moved, b->pages_moved);
    assert_int_equal(a->pages_failed, b->pages_failed);
    assert_int_equal(a->bytes_moved, b->bytes_moved);
    assert_int_equal(a->enomem, b->enomem);
    assert_int_equal(a->efault, b->efault);
}

static void *random_page(unsigned *seed)
{
    void *p = page((uintptr_t)(rand_r(seed) % WIN));
    return rand_r(seed) % 40 == 0 ? (char *)p + 8 : p; /* now and then misaligned */
}

/* fast_runs' answer as a bitmap over the window. */
typedef struct {
    unsigned char fast[WIN];
    uintptr_t last_hi;
    int calls, unordered;
} run_seen;

static int mark_run(void *ctx, uintptr_t lo, uintptr_t hi)
{
    run_seen *r = ctx;
    r->unordered |= r->calls && lo < r->last_hi;
    r->calls++;
    r->last_hi = hi;
    for (uintptr_t p = lo; p < hi; p += PG)
        r->fast[index_of((void *)p)] = 1;
    return 0;
}

static int stop_at_first(void *ctx, uintptr_t lo, uintptr_t hi)
{
    (void)lo;
    (void)hi;
    ++*(int *)ctx;
    return 1;
}

static void test_matches_page_model(void **state)
{
    (void)state;
    for (unsigned trial = 0; trial < 40; trial++) {
        unsigned seed = 1000 + trial;
        page_model m = {.cap = (size_t)(rand_r(&seed) % (WIN / 2))};
        for (size_t i = 0; i < WIN; i++)
            m.tier[i] = -1;
        pd_backend *b = pd_backend_sim_create(m.cap * PG);
        assert_non_null(b);
        for (int step = 0; step < 400; step++) {
            pd_migrate_stats got = {0}, want = {0}, gdem = {0}, wdem = {0};
            int op = rand_r(&seed) % 6, rg = 0, rw = 0;
            if (op <= 1) { /* a range to a tier, or first touch */
                size_t first = (size_t)(rand_r(&seed) % WIN), n = (size_t)(rand_r(&seed) % (WIN - first + 1));
                int tier = rand_r(&seed) % 3;
                size_t len = n * PG - (n && rand_r(&seed) % 4 == 0 ? 100 : 0); /* a length short of a page */
                rg = b->place(b, page(first), len, tier, &got);
                rw = model_place(&m, first, n, tier, &want);
            } else if (op == 2) {
                void *pages[WIN];
                size_t n = (size_t)(rand_r(&seed) % WIN);
                for (size_t i = 0; i < n; i++)
                    pages[i] = random_page(&seed);
                int tier = rand_r(&seed) % 2;
                rg = b->move(b, pages, n, tier, &got);
                rw = model_move(&m, pages, n, tier, &want);
            } else if (op == 3) { /* as the runtime calls it: dropped pages, then the plan reversed */
                void *pages[WIN], *cold[3 * WIN];
                size_t n = (size_t)(rand_r(&seed) % WIN), nc = (size_t)(rand_r(&seed) % WIN);
                for (size_t i = 0; i < n; i++)
                    pages[i] = random_page(&seed);
                for (size_t i = 0; i < nc; i++)
                    cold[i] = random_page(&seed);
                for (size_t i = n; i-- > 0;)
                    cold[nc++] = pages[i];
                rg = b->promote(b, pages, n, cold, nc, &got, &gdem);
                rw = model_promote(&m, pages, n, cold, nc, &want, &wdem);
            } else if (op == 4) {
                size_t first = (size_t)(rand_r(&seed) % WIN), n = (size_t)(rand_r(&seed) % (WIN - first + 1));
                rg = b->release(b, page(first), n * PG);
                for (size_t i = first; i < first + n; i++) {
                    m.fast -= m.tier[i] == PD_TIER_FAST;
                    m.tier[i] = -1;
                }
            }
            assert_int_equal(rg, rw);
            assert_same_stats(&got, &want);
            assert_same_stats(&gdem, &wdem);
            assert_int_equal(b->fast_free(b), (m.cap - m.fast) * PG);
            void *all[WIN + 1];
            int tier[WIN + 1];
            for (size_t i = 0; i <= WIN; i++)
                all[i] = page(i);
            assert_int_equal(b->query(b, all, WIN + 1, tier), 0);
            for (size_t i = 0; i < WIN; i++)
                assert_int_equal(tier[i], m.tier[i] < 0 ? -ENOENT : m.tier[i]);
            assert_int_equal(tier[WIN], -ENOENT);
            /* the fast runs of a part of the window, its length short of a page */
            size_t first = (size_t)(rand_r(&seed) % WIN), n = (size_t)(rand_r(&seed) % (WIN - first + 1));
            run_seen seen = {{0}, 0, 0, 0};
            assert_int_equal(b->fast_runs(b, page(first), n * PG - (n ? 1 : 0), mark_run, &seen), 0);
            assert_false(seen.unordered);
            for (size_t i = 0; i < WIN; i++)
                assert_int_equal(seen.fast[i], i >= first && i < first + n && m.tier[i] == PD_TIER_FAST);
        }
        int stops = 0;
        void *all_pages = page(0);
        assert_int_equal(b->fast_runs(b, all_pages, WIN * PG, stop_at_first, &stops), m.fast ? 1 : 0);
        assert_int_equal(stops, m.fast ? 1 : 0);
        assert_int_equal(b->fast_runs(b, (char *)page(0) + 1, PG, stop_at_first, &stops), -EINVAL);
        b->destroy(b);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_capacity_enforced),
        cmocka_unit_test(test_bad_arguments),
        cmocka_unit_test(test_many_pages),
        cmocka_unit_test(test_promote_demotes_for_hotter_pages),
        cmocka_unit_test(test_release_gives_capacity_back),
        cmocka_unit_test(test_matches_page_model),
    };
    return cmocka_run_group_tests_name("runtime_backend_sim", tests, NULL, NULL);
}
