/* Ranked runs of a plan; see plan_runs.h. */
#include "lib/plan_runs.h"

#include <stdlib.h>

#include "lib/placement.h"

static int push_run(rt_plan_runs *p, rt_plan_run r)
{
    if (r.lo >= r.hi)
        return 0;
    if (p->n == p->cap) {
        size_t ncap = p->cap ? 2 * p->cap : 64;
        rt_plan_run *nv = realloc(p->v, ncap * sizeof *nv);
        if (!nv)
            return -1;
        p->v = nv;
        p->cap = ncap;
    }
    p->v[p->n++] = r;
    return 0;
}

int rt_plan_runs_push(rt_plan_runs *p, uintptr_t lo, uintptr_t hi, size_t first)
{
    return push_run(p, (rt_plan_run){lo, hi, first, 1, 0});
}

int rt_plan_runs_push_rank(rt_plan_runs *p, uintptr_t lo, uintptr_t hi, double rank)
{
    return push_run(p, (rt_plan_run){lo, hi, 0, 0, rank});
}

void rt_plan_runs_seal(rt_plan_runs *p, size_t from, size_t len)
{
    for (size_t i = from; i < p->n; i++)
        p->v[i].len = len;
}

/* The same expression as a per-page plan computes, so the same value. */
double rt_plan_run_rank(const rt_plan_run *r, uintptr_t page)
{
    if (!r->len)
        return r->rank;
    return ((double)(r->first + (page - r->lo) / RT_PAGE) + 0.5) / (double)r->len;
}

/* r restricted to [lo, hi) (inside it). */
static rt_plan_run clip(rt_plan_run r, uintptr_t lo, uintptr_t hi)
{
    if (r.len)
        r.first += (lo - r.lo) / RT_PAGE;
    r.lo = lo;
    r.hi = hi;
    return r;
}

/* Emits the pages [a, b) that both a and b hold, each under the lower
 * rank (a's on a tie). Ranks of a sequence grow with the page, so a's
 * rank minus b's is monotonic over the overlap: one switch at most, found
 * by bisection. */
static int resolve(rt_plan_runs *out, rt_plan_run x, rt_plan_run y, uintptr_t a, uintptr_t b)
{
    uintptr_t last = b - RT_PAGE;
    int x_first = rt_plan_run_rank(&x, a) <= rt_plan_run_rank(&y, a);
    int x_last = rt_plan_run_rank(&x, last) <= rt_plan_run_rank(&y, last);
    if (x_first == x_last)
        return push_run(out, clip(x_first ? x : y, a, b));
    /* the first page where the winner is no longer the first page's */
    size_t lo = 1, hi = (b - a) / RT_PAGE - 1;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        uintptr_t pg = a + mid * RT_PAGE;
        int xw = rt_plan_run_rank(&x, pg) <= rt_plan_run_rank(&y, pg);
        if (xw == x_first)
            lo = mid + 1;
        else
            hi = mid;
    }
    uintptr_t cut = a + lo * RT_PAGE;
    if (push_run(out, clip(x_first ? x : y, a, cut)) != 0)
        return -1;
    return push_run(out, clip(x_first ? y : x, cut, b));
}

static int cmp_lo(const void *a, const void *b)
{
    const rt_plan_run *x = a, *y = b;
    if (x->lo != y->lo)
        return x->lo < y->lo ? -1 : 1;
    return x->hi < y->hi ? -1 : x->hi > y->hi;
}

int rt_plan_runs_unique(rt_plan_runs *p)
{
    if (p->n < 2)
        return 0;
    qsort(p->v, p->n, sizeof *p->v, cmp_lo);
    rt_plan_runs out = {0}, tail = {0};
    int rc = 0;
    for (size_t i = 0; i < p->n && rc == 0; i++) {
        rt_plan_run r = p->v[i];
        /* the pieces so far that reach past r.lo: a suffix, as out is in
         * address order and r starts at or after every run before it */
        size_t s = out.n;
        while (s > 0 && out.v[s - 1].hi > r.lo)
            s--;
        if (s == out.n) {
            rc = push_run(&out, r);
            continue;
        }
        tail.n = 0;
        for (size_t k = s; k < out.n && rc == 0; k++)
            rc = push_run(&tail, out.v[k]);
        out.n = s;
        uintptr_t at = r.lo; /* r's pages before `at` are emitted */
        for (size_t k = 0; k < tail.n && rc == 0; k++) {
            rt_plan_run q = tail.v[k];
            if (q.lo < r.lo)
                rc = push_run(&out, clip(q, q.lo, q.hi < r.lo ? q.hi : r.lo));
            uintptr_t a = q.lo > r.lo ? q.lo : r.lo, b = q.hi < r.hi ? q.hi : r.hi;
            if (rc == 0 && a < b) {
                if (at < a)
                    rc = push_run(&out, clip(r, at, a));
                if (rc == 0)
                    rc = resolve(&out, q, r, a, b);
                at = b;
            } else if (rc == 0 && q.lo >= r.hi && at < r.hi) {
                rc = push_run(&out, clip(r, at, r.hi));
                at = r.hi;
            }
            uintptr_t from = q.lo > r.hi ? q.lo : r.hi;
            if (rc == 0 && from < q.hi)
                rc = push_run(&out, clip(q, from, q.hi));
        }
        if (rc == 0 && at < r.hi)
            rc = push_run(&out, clip(r, at, r.hi));
    }
    free(tail.v);
    if (rc != 0) {
        free(out.v);
        return -1;
    }
    free(p->v);
    *p = out;
    return 0;
}

int rt_plan_runs_pages(const rt_plan_runs *p, rt_runs *out)
{
    for (size_t i = 0; i < p->n; i++)
        if (rt_runs_add(out, p->v[i].lo, p->v[i].hi) != 0)
            return -1;
    return rt_runs_normalize(out);
}

int rt_plan_runs_subtract(const rt_plan_runs *p, const rt_runs *drop, rt_plan_runs *out)
{
    for (size_t i = 0; i < p->n; i++) {
        rt_plan_run r = p->v[i];
        uintptr_t at = r.lo;
        for (size_t k = rt_runs_after(drop, r.lo); k < drop->n && drop->v[k].lo < r.hi; k++) {
            if (drop->v[k].lo > at && push_run(out, clip(r, at, drop->v[k].lo)) != 0)
                return -1;
            at = drop->v[k].hi;
        }
        if (at < r.hi && push_run(out, clip(r, at, r.hi)) != 0)
            return -1;
    }
    return 0;
}

/* A run's next page in the merge: its rank, its address, the run. */
typedef struct {
    double rank;
    uintptr_t page;
    size_t run;
} rank_head;

static int head_before(const rank_head *a, const rank_head *b)
{
    return a->rank < b->rank || (a->rank == b->rank && a->page < b->page);
}

static void sift_down(rank_head *h, size_t n, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, m = i;
        if (l < n && head_before(&h[l], &h[m]))
            m = l;
        if (l + 1 < n && head_before(&h[l + 1], &h[m]))
            m = l + 1;
        if (m == i)
            return;
        rank_head t = h[i];
        h[i] = h[m];
        h[m] = t;
        i = m;
    }
}

int rt_plan_runs_by_rank(const rt_plan_runs *p, int (*emit)(void *ctx, uintptr_t page), void *ctx)
{
    rank_head *h = malloc((p->n ? p->n : 1) * sizeof *h);
    if (!h)
        return -1;
    size_t n = 0;
    for (size_t i = 0; i < p->n; i++)
        if (p->v[i].lo < p->v[i].hi)
            h[n++] = (rank_head){rt_plan_run_rank(&p->v[i], p->v[i].lo), p->v[i].lo, i};
    for (size_t i = n / 2; i-- > 0;)
        sift_down(h, n, i);
    int rc = 0;
    while (n > 0 && rc == 0) {
        rc = emit(ctx, h[0].page);
        const rt_plan_run *r = &p->v[h[0].run];
        uintptr_t next = h[0].page + RT_PAGE;
        if (next < r->hi) {
            h[0].page = next;
            h[0].rank = rt_plan_run_rank(r, next);
        } else {
            h[0] = h[--n];
        }
        sift_down(h, n, 0);
    }
    free(h);
    return rc;
}

size_t rt_plan_runs_npages(const rt_plan_runs *p)
{
    size_t n = 0;
    for (size_t i = 0; i < p->n; i++)
        n += (p->v[i].hi - p->v[i].lo) / RT_PAGE;
    return n;
}

void rt_plan_runs_free(rt_plan_runs *p)
{
    free(p->v);
    p->v = NULL;
    p->n = p->cap = 0;
}
