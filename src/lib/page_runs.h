/* A set of pages as sorted, disjoint runs (internal): what a sync point
 * needs to know of a set of many pages (how many of them fall in a range,
 * whether one is in it) at the cost of its runs, not of its pages. */
#ifndef PD_LIB_PAGE_RUNS_H
#define PD_LIB_PAGE_RUNS_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    uintptr_t lo, hi; /* [lo, hi), page-aligned */
} rt_span;

typedef struct {
    rt_span *v;
    size_t n, cap;
    size_t *pre; /* after rt_runs_normalize: pages in the runs before run i, n + 1 entries */
} rt_runs;

/* Adds [lo, hi) (page-aligned; empty is ignored), joining the last run when
 * it touches or overlaps it. 0, or -1 out of memory. */
int rt_runs_add(rt_runs *r, uintptr_t lo, uintptr_t hi);
/* Adds every run of src to r (not normalized). 0, or -1 out of memory. */
int rt_runs_add_all(rt_runs *r, const rt_runs *src);
/* Sorts the runs, joins those that touch or overlap and counts them up:
 * the queries below want it. 0, or -1 out of memory. */
int rt_runs_normalize(rt_runs *r);
size_t rt_runs_pages(const rt_runs *r);
/* Pages p of the set with lo <= p < hi. */
size_t rt_runs_count(const rt_runs *r, uintptr_t lo, uintptr_t hi);
/* Index of the first run ending after addr (r->n if none). */
size_t rt_runs_after(const rt_runs *r, uintptr_t addr);
/* out := a less b's pages, both normalized; out is normalized. 0 or -1. */
int rt_runs_subtract(const rt_runs *a, const rt_runs *b, rt_runs *out);
void rt_runs_free(rt_runs *r);

/* Whether pages asked about mostly in ascending order are in a normalized
 * set: each question moves forward, a question below the last one
 * searches again. */
typedef struct {
    const rt_runs *r;
    size_t at;
    uintptr_t last;
} rt_runs_cursor;

rt_runs_cursor rt_runs_cursor_at(const rt_runs *r);
int rt_runs_cursor_has(rt_runs_cursor *c, uintptr_t page);

#endif
