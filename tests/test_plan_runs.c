/* Tests of a plan kept as ranked runs (src/lib/plan_runs.c): random plans
 * over a window of pages against a per-page model of the lowest rank any
 * pushed span gives each page. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <math.h>
#include <cmocka.h>

#include "lib/page_runs.h"
#include "lib/placement.h"
#include "lib/plan_runs.h"

#define WIN 200
#define MAXREC 64
#define BASE ((uintptr_t)0x40000000u)

static uintptr_t pg(size_t i) { return BASE + i * RT_PAGE; }

/* p := p less drop, through rt_plan_runs_subtract's out. */
static int subtract_in_place(rt_plan_runs *p, const rt_runs *drop)
{
    rt_plan_runs out = {0};
    if (rt_plan_runs_subtract(p, drop, &out) != 0) {
        rt_plan_runs_free(&out);
        return -1;
    }
    rt_plan_runs_free(p);
    *p = out;
    return 0;
}

/* What the test pushed, kept apart from the module: pages [a, a + n),
 * page a + k ranking (first + k + 0.5) / len, or `rank` where len == 0. */
typedef struct {
    size_t a, n, first, len;
    double rank;
} rec;

typedef struct {
    rt_plan_runs p;
    rec r[MAXREC];
    size_t nr;
} plan;

static double rec_rank(const rec *r, size_t i)
{
    if (!r->len)
        return r->rank;
    return ((double)(r->first + (i - r->a)) + 0.5) / (double)r->len;
}

/* Empty spans are no run for either side, so p.n and nr stay in step and
 * a sequence's first run index is its first record index. */
static void push_seq(plan *t, size_t a, size_t n, size_t first)
{
    assert_int_equal(rt_plan_runs_push(&t->p, pg(a), pg(a + n), first), 0);
    if (n)
        t->r[t->nr++] = (rec){a, n, first, 1, 0};
    assert_int_equal(t->p.n, t->nr);
}

static void push_rank(plan *t, size_t a, size_t n, double rank)
{
    assert_int_equal(rt_plan_runs_push_rank(&t->p, pg(a), pg(a + n), rank), 0);
    if (n)
        t->r[t->nr++] = (rec){a, n, 0, 0, rank};
    assert_int_equal(t->p.n, t->nr);
}

static void seal(plan *t, size_t from, size_t len)
{
    rt_plan_runs_seal(&t->p, from, len);
    for (size_t i = from; i < t->nr; i++)
        t->r[i].len = len;
}

/* The model: each page's lowest rank over the records holding it. */
static void model(const plan *t, double *m)
{
    for (size_t i = 0; i < WIN; i++)
        m[i] = INFINITY;
    for (size_t k = 0; k < t->nr; k++)
        for (size_t i = t->r[k].a; i < t->r[k].a + t->r[k].n; i++)
            m[i] = fmin(m[i], rec_rank(&t->r[k], i));
}

/* Runs non-empty, page-aligned, inside the window, sorted and disjoint;
 * got[i] := the rank of page i (INFINITY where no run holds it). */
static void plan_ranks(const rt_plan_runs *p, double *got)
{
    for (size_t i = 0; i < WIN; i++)
        got[i] = INFINITY;
    for (size_t k = 0; k < p->n; k++) {
        const rt_plan_run *r = &p->v[k];
        assert_true(r->lo < r->hi);
        assert_int_equal((r->lo - BASE) % RT_PAGE, 0);
        assert_int_equal((r->hi - BASE) % RT_PAGE, 0);
        assert_true(r->lo >= BASE && r->hi <= pg(WIN));
        if (k)
            assert_true(p->v[k - 1].hi <= r->lo);
        for (uintptr_t a = r->lo; a < r->hi; a += RT_PAGE)
            got[(a - BASE) / RT_PAGE] = rt_plan_run_rank(r, a);
    }
}

/* After unique: the model's pages, each at the model's rank (near a
 * crossing rounding may pick the other of two nearly equal ranks, but
 * always that of a span that holds the page). */
static void assert_unique_as_model(const plan *t, double *got)
{
    double m[WIN];
    model(t, m);
    plan_ranks(&t->p, got);
    for (size_t i = 0; i < WIN; i++) {
        assert_int_equal(!!isinf(got[i]), !!isinf(m[i]));
        if (isinf(m[i]))
            continue;
        assert_true(fabs(got[i] - m[i]) <= 1e-12 * m[i]);
        int from_holder = 0;
        for (size_t k = 0; k < t->nr; k++)
            from_holder |= i >= t->r[k].a && i < t->r[k].a + t->r[k].n && rec_rank(&t->r[k], i) == got[i];
        assert_true(from_holder);
    }
}

static size_t span_len(unsigned *seed, size_t a)
{
    size_t len = (size_t)(rand_r(seed) % 30);
    return a + len > WIN ? WIN - a : len;
}

/* Sequences of a few spans each (first counting on through the sequence),
 * between them spans of one rank; ranks below 1 cross the sequences. */
static void random_plan(unsigned *seed, plan *t)
{
    int seqs = rand_r(seed) % 5;
    for (int s = 0; s <= seqs; s++) {
        int consts = rand_r(seed) % 3;
        for (int c = 0; c < consts; c++) {
            static const double fixed[] = {1.5, 2.0};
            size_t a = (size_t)(rand_r(seed) % WIN);
            double rank = rand_r(seed) % 2 ? fixed[rand_r(seed) % 2] : 0.01 + (double)(rand_r(seed) % 1000) / 500.0;
            push_rank(t, a, span_len(seed, a), rank);
        }
        if (s == seqs)
            break;
        size_t from = t->nr, count = 0;
        int spans = 1 + rand_r(seed) % 4;
        for (int k = 0; k < spans; k++) {
            size_t a = (size_t)(rand_r(seed) % WIN), n = span_len(seed, a);
            push_seq(t, a, n, count);
            count += n;
        }
        seal(t, from, count);
    }
}

/* Random drop set, as test_page_runs.c builds it. */
static void random_drop(unsigned *seed, rt_runs *d, unsigned char *bits)
{
    int spans = rand_r(seed) % 8;
    for (int k = 0; k < spans; k++) {
        size_t a = (size_t)(rand_r(seed) % WIN), n = span_len(seed, a);
        assert_int_equal(rt_runs_add(d, pg(a), pg(a + n)), 0);
        for (size_t i = a; i < a + n; i++)
            bits[i] = 1;
    }
    assert_int_equal(rt_runs_normalize(d), 0);
}

static void test_random_plans_match_model(void **state)
{
    (void)state;
    for (unsigned trial = 0; trial < 500; trial++) {
        unsigned seed = 11 + trial;
        plan t = {0};
        random_plan(&seed, &t);
        double got[WIN], m[WIN];
        assert_int_equal(rt_plan_runs_unique(&t.p), 0);
        assert_unique_as_model(&t, got);
        model(&t, m);

        /* its pages, as a set of runs */
        rt_runs pages = {0};
        assert_int_equal(rt_plan_runs_pages(&t.p, &pages), 0);
        size_t total = 0;
        for (size_t i = 0; i < WIN; i++) {
            total += !isinf(m[i]);
            assert_int_equal(rt_runs_count(&pages, pg(i), pg(i + 1)), !isinf(m[i]));
        }
        assert_int_equal(rt_runs_pages(&pages), total);
        assert_int_equal(rt_plan_runs_npages(&t.p), total);
        for (int q = 0; q < 20; q++) {
            size_t lo = (size_t)(rand_r(&seed) % WIN), hi = lo + (size_t)(rand_r(&seed) % 60), want = 0;
            for (size_t i = lo; i < hi && i < WIN; i++)
                want += !isinf(m[i]);
            assert_int_equal(rt_runs_count(&pages, pg(lo), pg(hi)), want);
        }

        /* less a drop set: the other pages keep their ranks exactly */
        rt_runs drop = {0};
        unsigned char dropped[WIN] = {0};
        random_drop(&seed, &drop, dropped);
        assert_int_equal(subtract_in_place(&t.p, &drop), 0);
        double after[WIN];
        plan_ranks(&t.p, after);
        for (size_t i = 0; i < WIN; i++) {
            if (dropped[i])
                assert_true(isinf(after[i]));
            else if (isinf(got[i]))
                assert_true(isinf(after[i]));
            else
                assert_true(after[i] == got[i]);
        }
        rt_runs_free(&drop);
        rt_runs_free(&pages);
        rt_plan_runs_free(&t.p);
    }
}

/* rt_plan_runs_by_rank against a sort of every page of every run by
 * (rank, address), the order the sync point used to build: on random
 * plans as pushed (runs overlapping, a page in several) and after unique
 * and a drop; and its early stop. */
typedef struct {
    uintptr_t page;
    double rank;
} ranked;

static int by_rank_then_page(const void *a, const void *b)
{
    const ranked *x = a, *y = b;
    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    return x->page < y->page ? -1 : x->page > y->page;
}

typedef struct {
    uintptr_t v[MAXREC * 30];
    size_t n, stop_at;
} emitted;

static int note_page(void *ctx, uintptr_t page)
{
    emitted *e = ctx;
    assert_true(e->n < MAXREC * 30);
    e->v[e->n++] = page;
    return e->stop_at && e->n == e->stop_at ? 7 : 0;
}

static void assert_by_rank_is_the_sort(const rt_plan_runs *p)
{
    static ranked want[MAXREC * 30];
    size_t n = 0;
    for (size_t i = 0; i < p->n; i++)
        for (uintptr_t a = p->v[i].lo; a < p->v[i].hi; a += RT_PAGE)
            want[n++] = (ranked){a, rt_plan_run_rank(&p->v[i], a)};
    qsort(want, n, sizeof *want, by_rank_then_page);
    emitted got = {.n = 0};
    assert_int_equal(rt_plan_runs_by_rank(p, note_page, &got), 0);
    assert_int_equal(got.n, n);
    for (size_t i = 0; i < n; i++)
        assert_true(got.v[i] == want[i].page);
    if (n > 2) { /* stopped by emit: its answer, nothing after */
        emitted part = {.stop_at = n / 2};
        assert_int_equal(rt_plan_runs_by_rank(p, note_page, &part), 7);
        assert_int_equal(part.n, n / 2);
    }
}

static void test_pages_by_rank_are_the_sort(void **state)
{
    (void)state;
    for (unsigned trial = 0; trial < 500; trial++) {
        unsigned seed = 911 + trial;
        plan t = {0};
        random_plan(&seed, &t);
        assert_by_rank_is_the_sort(&t.p);
        assert_int_equal(rt_plan_runs_unique(&t.p), 0);
        assert_by_rank_is_the_sort(&t.p);
        rt_runs drop = {0};
        unsigned char dropped[WIN] = {0};
        random_drop(&seed, &drop, dropped);
        assert_int_equal(subtract_in_place(&t.p, &drop), 0);
        assert_by_rank_is_the_sort(&t.p);
        rt_runs_free(&drop);
        rt_plan_runs_free(&t.p);
    }
    rt_plan_runs none = {0};
    emitted e = {.n = 0};
    assert_int_equal(rt_plan_runs_by_rank(&none, note_page, &e), 0);
    assert_int_equal(e.n, 0);
}

/* Holder of page i after unique. */
static const rt_plan_run *holder(const rt_plan_runs *p, size_t i)
{
    for (size_t k = 0; k < p->n; k++)
        if (p->v[k].lo <= pg(i) && pg(i) < p->v[k].hi)
            return &p->v[k];
    fail_msg("page %zu held by no run", i);
    return NULL;
}

/* Two sequences crossing inside their overlap, the later-starting one
 * winning first and then the other, in either order of pushing. */
static void test_crossing_splits_overlap(void **state)
{
    (void)state;
    double got[WIN];
    for (int order = 0; order < 2; order++) {
        plan t = {0};
        /* long: (k + 0.5) / 100; short on [40, 60): (k - 39.5) / 20, lower
         * iff 4k < 198, so the short one takes 40..49 */
        size_t a[2] = {0, 40}, n[2] = {100, 20};
        for (int s = 0; s < 2; s++) {
            push_seq(&t, a[s ^ order], n[s ^ order], 0);
            seal(&t, (size_t)s, n[s ^ order]);
        }
        assert_int_equal(rt_plan_runs_unique(&t.p), 0);
        assert_unique_as_model(&t, got);
        assert_int_equal(holder(&t.p, 39)->len, 100);
        assert_int_equal(holder(&t.p, 40)->len, 20);
        assert_int_equal(holder(&t.p, 49)->len, 20);
        assert_int_equal(holder(&t.p, 50)->len, 100);
        assert_true(got[50] == 50.5 / 100);
        rt_plan_runs_free(&t.p);
    }
    /* the lower-starting run winning first: short [20, 60) at (k - 19.5) / 40,
     * long [30, 130) at (k + 270.5) / 400; short lower iff 9k <= 465.5 */
    plan t = {0};
    push_seq(&t, 20, 40, 0);
    seal(&t, 0, 40);
    push_seq(&t, 30, 100, 300);
    seal(&t, 1, 400);
    assert_int_equal(rt_plan_runs_unique(&t.p), 0);
    assert_unique_as_model(&t, got);
    assert_int_equal(holder(&t.p, 51)->len, 40);
    assert_int_equal(holder(&t.p, 52)->len, 400);
    assert_int_equal(holder(&t.p, 59)->len, 400);
    rt_plan_runs_free(&t.p);
}

/* One run covering another: the outer one before, the lower inside, the
 * outer one again after; and an outer run ranking lower everywhere. */
static void test_covering_runs(void **state)
{
    (void)state;
    double got[WIN];
    plan t = {0};
    push_rank(&t, 10, 80, 1.5);
    push_seq(&t, 30, 20, 0);
    seal(&t, 1, 20);
    assert_int_equal(rt_plan_runs_unique(&t.p), 0);
    assert_unique_as_model(&t, got);
    assert_true(got[10] == 1.5 && got[29] == 1.5 && got[50] == 1.5 && got[89] == 1.5);
    assert_true(got[30] == 0.5 / 20 && got[49] == 19.5 / 20);
    assert_true(isinf(got[9]) && isinf(got[90]));
    rt_plan_runs_free(&t.p);

    plan u = {0};
    push_seq(&u, 0, 100, 0);
    seal(&u, 0, 100);
    push_rank(&u, 30, 20, 2.0);
    push_rank(&u, 0, 100, 2.0); /* same span, sorted by lo then hi */
    assert_int_equal(rt_plan_runs_unique(&u.p), 0);
    assert_unique_as_model(&u, got);
    for (size_t i = 0; i < 100; i++)
        assert_int_equal(holder(&u.p, i)->len, 100);
    rt_plan_runs_free(&u.p);
}

static void test_edges(void **state)
{
    (void)state;
    rt_plan_runs e = {0};
    rt_runs out = {0};
    assert_int_equal(rt_plan_runs_unique(&e), 0);
    assert_int_equal(e.n, 0);
    assert_int_equal(rt_plan_runs_pages(&e, &out), 0);
    assert_int_equal(rt_runs_pages(&out), 0);
    assert_int_equal(subtract_in_place(&e, &out), 0);
    assert_int_equal(e.n, 0);
    /* empty spans are no run; sealing none is harmless */
    assert_int_equal(rt_plan_runs_push(&e, pg(3), pg(3), 0), 0);
    assert_int_equal(rt_plan_runs_push_rank(&e, pg(5), pg(5), 1.0), 0);
    rt_plan_runs_seal(&e, 0, 7);
    assert_int_equal(e.n, 0);
    rt_plan_runs_free(&e);
    rt_runs_free(&out);

    /* one run: unique (n < 2) leaves it as pushed */
    rt_plan_runs one = {0};
    assert_int_equal(rt_plan_runs_push(&one, pg(4), pg(12), 2), 0);
    rt_plan_runs_seal(&one, 0, 10);
    assert_int_equal(rt_plan_runs_unique(&one), 0);
    assert_int_equal(one.n, 1);
    assert_true(one.v[0].lo == pg(4) && one.v[0].hi == pg(12));
    assert_true(rt_plan_run_rank(&one.v[0], pg(4)) == 2.5 / 10);
    assert_true(rt_plan_run_rank(&one.v[0], pg(11)) == 9.5 / 10);
    /* dropping its middle: two runs, ranks where they were */
    rt_runs d = {0};
    assert_int_equal(rt_runs_add(&d, pg(6), pg(8)), 0);
    assert_int_equal(rt_runs_normalize(&d), 0);
    assert_int_equal(subtract_in_place(&one, &d), 0);
    assert_int_equal(one.n, 2);
    assert_true(one.v[0].hi == pg(6) && one.v[1].lo == pg(8));
    assert_true(rt_plan_run_rank(&one.v[1], pg(8)) == 6.5 / 10);
    /* dropping all of it */
    rt_runs_free(&d);
    assert_int_equal(rt_runs_add(&d, pg(0), pg(20)), 0);
    assert_int_equal(rt_runs_normalize(&d), 0);
    assert_int_equal(subtract_in_place(&one, &d), 0);
    assert_int_equal(one.n, 0);
    rt_runs_free(&d);
    rt_plan_runs_free(&one);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_plans_match_model),
        cmocka_unit_test(test_pages_by_rank_are_the_sort),
        cmocka_unit_test(test_crossing_splits_overlap),
        cmocka_unit_test(test_covering_runs),
        cmocka_unit_test(test_edges),
    };
    return cmocka_run_group_tests_name("plan_runs", tests, NULL, NULL);
}
