/* Sets of pages as runs; see page_runs.h. */
#include "lib/page_runs.h"

#include <stdlib.h>

#include "lib/addr_sort.h"
#include "lib/placement.h"

int rt_runs_add(rt_runs *r, uintptr_t lo, uintptr_t hi)
{
    if (lo >= hi)
        return 0;
    if (r->n && lo >= r->v[r->n - 1].lo && lo <= r->v[r->n - 1].hi) {
        if (hi > r->v[r->n - 1].hi)
            r->v[r->n - 1].hi = hi;
        return 0;
    }
    if (r->n == r->cap) {
        size_t ncap = r->cap ? 2 * r->cap : 64;
        rt_span *nv = realloc(r->v, ncap * sizeof *nv);
        if (!nv)
            return -1;
        r->v = nv;
        r->cap = ncap;
    }
    r->v[r->n++] = (rt_span){lo, hi};
    return 0;
}

int rt_runs_add_all(rt_runs *r, const rt_runs *src)
{
    for (size_t i = 0; i < src->n; i++)
        if (rt_runs_add(r, src->v[i].lo, src->v[i].hi) != 0)
            return -1;
    return 0;
}

static int cmp_span(const void *a, const void *b)
{
    const rt_span *x = a, *y = b;
    if (x->lo != y->lo)
        return x->lo < y->lo ? -1 : 1;
    return x->hi < y->hi ? -1 : x->hi > y->hi;
}

int rt_runs_normalize(rt_runs *r)
{
    rt_sort_by_address(r->v, r->n, sizeof *r->v, cmp_span);
    size_t k = 0;
    for (size_t i = 0; i < r->n; i++) {
        if (k && r->v[i].lo <= r->v[k - 1].hi) {
            if (r->v[i].hi > r->v[k - 1].hi)
                r->v[k - 1].hi = r->v[i].hi;
        } else {
            r->v[k++] = r->v[i];
        }
    }
    r->n = k;
    free(r->pre);
    r->pre = malloc((k + 1) * sizeof *r->pre);
    if (!r->pre)
        return -1;
    r->pre[0] = 0;
    for (size_t i = 0; i < k; i++)
        r->pre[i + 1] = r->pre[i] + (r->v[i].hi - r->v[i].lo) / RT_PAGE;
    return 0;
}

size_t rt_runs_pages(const rt_runs *r) { return r->pre ? r->pre[r->n] : 0; }

size_t rt_runs_after(const rt_runs *r, uintptr_t addr)
{
    size_t lo = 0, hi = r->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (r->v[mid].hi <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static uintptr_t page_up(uintptr_t a)
{
    uintptr_t up = (a + RT_PAGE - 1) & ~(uintptr_t)(RT_PAGE - 1);
    return up < a ? ~(uintptr_t)(RT_PAGE - 1) : up;
}

size_t rt_runs_count(const rt_runs *r, uintptr_t lo, uintptr_t hi)
{
    lo = page_up(lo); /* the first page starting at or after lo */
    hi = page_up(hi); /* pages starting before hi */
    if (lo >= hi || !r->pre)
        return 0;
    size_t i = rt_runs_after(r, lo), k = i, b = r->n; /* k: the first run starting at or after hi */
    while (k < b) {
        size_t mid = k + (b - k) / 2;
        if (r->v[mid].lo < hi)
            k = mid + 1;
        else
            b = mid;
    }
    if (i >= k)
        return 0;
    size_t n = r->pre[k] - r->pre[i];
    if (r->v[i].lo < lo)
        n -= (lo - r->v[i].lo) / RT_PAGE;
    if (r->v[k - 1].hi > hi)
        n -= (r->v[k - 1].hi - hi) / RT_PAGE;
    return n;
}

int rt_runs_subtract(const rt_runs *a, const rt_runs *b, rt_runs *out)
{
    size_t j = 0;
    for (size_t i = 0; i < a->n; i++) {
        uintptr_t at = a->v[i].lo, end = a->v[i].hi;
        while (j < b->n && b->v[j].hi <= at)
            j++;
        for (size_t k = j; k < b->n && b->v[k].lo < end && at < end; k++) {
            if (b->v[k].lo > at && rt_runs_add(out, at, b->v[k].lo) != 0)
                return -1;
            if (b->v[k].hi > at)
                at = b->v[k].hi;
        }
        if (at < end && rt_runs_add(out, at, end) != 0)
            return -1;
    }
    return rt_runs_normalize(out);
}

void rt_runs_free(rt_runs *r)
{
    free(r->v);
    free(r->pre);
    r->v = NULL;
    r->pre = NULL;
    r->n = r->cap = 0;
}

rt_runs_cursor rt_runs_cursor_at(const rt_runs *r) { return (rt_runs_cursor){r, 0, 0}; }

int rt_runs_cursor_has(rt_runs_cursor *c, uintptr_t page)
{
    if (page < c->last)
        c->at = rt_runs_after(c->r, page);
    c->last = page;
    while (c->at < c->r->n && c->r->v[c->at].hi <= page)
        c->at++;
    return c->at < c->r->n && c->r->v[c->at].lo <= page;
}
