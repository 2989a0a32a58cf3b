/* Tests of sets of pages kept as runs (src/lib/page_runs.c): random sets
 * over a window of pages against a bitmap of the same pages. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "lib/page_runs.h"
#include "lib/placement.h"

#define WIN 200
#define BASE ((uintptr_t)0x40000000u)

static uintptr_t pg(size_t i) { return BASE + i * RT_PAGE; }

/* A random set: spans added in any order, overlapping and touching. */
static void random_set(unsigned *seed, rt_runs *r, unsigned char *bits)
{
    int spans = rand_r(seed) % 12;
    for (int k = 0; k < spans; k++) {
        size_t a = (size_t)(rand_r(seed) % WIN), len = (size_t)(rand_r(seed) % 30);
        if (a + len > WIN)
            len = WIN - a;
        assert_int_equal(rt_runs_add(r, pg(a), pg(a + len)), 0);
        for (size_t i = a; i < a + len; i++)
            bits[i] = 1;
    }
    assert_int_equal(rt_runs_normalize(r), 0);
}

static void assert_normalized_as(const rt_runs *r, const unsigned char *bits)
{
    size_t total = 0;
    for (size_t i = 0; i < WIN; i++)
        total += bits[i];
    assert_int_equal(rt_runs_pages(r), total);
    for (size_t k = 0; k < r->n; k++) {
        assert_true(r->v[k].lo < r->v[k].hi);
        if (k)
            assert_true(r->v[k - 1].hi < r->v[k].lo); /* disjoint, not touching */
    }
}

static void test_count_and_subtract_match_bitmap(void **state)
{
    (void)state;
    for (unsigned trial = 0; trial < 500; trial++) {
        unsigned seed = 7 + trial;
        rt_runs a = {0}, b = {0}, d = {0};
        unsigned char ba[WIN] = {0}, bb[WIN] = {0};
        random_set(&seed, &a, ba);
        random_set(&seed, &b, bb);
        assert_normalized_as(&a, ba);
        assert_normalized_as(&b, bb);
        for (int q = 0; q < 50; q++) {
            /* ranges with unaligned ends count the pages that start in them */
            uintptr_t lo = BASE + (uintptr_t)(rand_r(&seed) % (WIN * RT_PAGE + RT_PAGE));
            uintptr_t hi = lo + (uintptr_t)(rand_r(&seed) % (60 * RT_PAGE));
            size_t want = 0;
            for (size_t i = 0; i < WIN; i++)
                want += ba[i] && pg(i) >= lo && pg(i) < hi;
            assert_int_equal(rt_runs_count(&a, lo, hi), want);
            size_t at = rt_runs_after(&a, lo);
            assert_true(at == a.n || a.v[at].hi > lo);
            assert_true(at == 0 || a.v[at - 1].hi <= lo);
        }
        assert_int_equal(rt_runs_subtract(&a, &b, &d), 0);
        unsigned char bd[WIN];
        for (size_t i = 0; i < WIN; i++)
            bd[i] = ba[i] && !bb[i];
        assert_normalized_as(&d, bd);
        for (size_t i = 0; i < WIN; i++)
            assert_int_equal(rt_runs_count(&d, pg(i), pg(i) + 1), bd[i]);
        /* both sets added to one: their union */
        rt_runs u = {0};
        assert_int_equal(rt_runs_add_all(&u, &a), 0);
        assert_int_equal(rt_runs_add_all(&u, &b), 0);
        assert_int_equal(rt_runs_normalize(&u), 0);
        unsigned char bu[WIN];
        for (size_t i = 0; i < WIN; i++)
            bu[i] = ba[i] || bb[i];
        assert_normalized_as(&u, bu);
        rt_runs_free(&a);
        rt_runs_free(&b);
        rt_runs_free(&d);
        rt_runs_free(&u);
    }
}

/* The cursor answers as the set does, for pages asked mostly in
 * ascending order with now and then a step back. */
static void test_cursor_matches_bitmap(void **state)
{
    (void)state;
    for (unsigned trial = 0; trial < 200; trial++) {
        unsigned seed = 99 + trial;
        rt_runs a = {0};
        unsigned char ba[WIN] = {0};
        random_set(&seed, &a, ba);
        rt_runs_cursor c = rt_runs_cursor_at(&a);
        size_t i = 0;
        for (int q = 0; q < 400; q++) {
            i = rand_r(&seed) % 10 == 0 ? (size_t)(rand_r(&seed) % WIN) : (i + (size_t)(rand_r(&seed) % 3)) % WIN;
            assert_int_equal(rt_runs_cursor_has(&c, pg(i)), ba[i]);
        }
        rt_runs_free(&a);
    }
}

static void test_empty_sets(void **state)
{
    (void)state;
    rt_runs e = {0}, out = {0};
    assert_int_equal(rt_runs_pages(&e), 0);
    assert_int_equal(rt_runs_count(&e, 0, UINTPTR_MAX), 0); /* not normalized yet: empty */
    assert_int_equal(rt_runs_add(&e, pg(3), pg(3)), 0);    /* an empty span is no run */
    assert_int_equal(rt_runs_normalize(&e), 0);
    assert_int_equal(e.n, 0);
    assert_int_equal(rt_runs_count(&e, BASE, UINTPTR_MAX), 0);
    assert_int_equal(rt_runs_subtract(&e, &e, &out), 0);
    assert_int_equal(rt_runs_pages(&out), 0);
    /* the top of the address space: counting up to it does not wrap */
    rt_runs top = {0};
    uintptr_t last = ~(uintptr_t)(RT_PAGE - 1) - RT_PAGE;
    assert_int_equal(rt_runs_add(&top, last, last + RT_PAGE), 0);
    assert_int_equal(rt_runs_normalize(&top), 0);
    assert_int_equal(rt_runs_count(&top, last, UINTPTR_MAX), 1);
    /* less a span up to the end of the address space (rt_migrate_forget's,
     * where addr + len wraps): nothing left */
    rt_runs to_end = {0}, none = {0};
    assert_int_equal(rt_runs_add(&to_end, last, UINTPTR_MAX), 0);
    assert_int_equal(rt_runs_normalize(&to_end), 0);
    assert_int_equal(rt_runs_subtract(&top, &to_end, &none), 0);
    assert_int_equal(none.n, 0);
    rt_runs_free(&to_end);
    rt_runs_free(&none);
    rt_runs_free(&top);
    rt_runs_free(&e);
    rt_runs_free(&out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_count_and_subtract_match_bitmap),
        cmocka_unit_test(test_cursor_matches_bitmap),
        cmocka_unit_test(test_empty_sets),
    };
    return cmocka_run_group_tests_name("page_runs", tests, NULL, NULL);
}
