/* A fast-memory plan as ranked runs of pages (internal): what a replan
 * builds, keeps once per page and hands on, at the cost of its regions,
 * not of its pages. A plan's page ranks its promotion order (lower first).
 * The pages of a task's plan run through its sampled regions in one
 * sequence, page k of the sequence ranking (k + 0.5) / its length, so a run
 * holds consecutive pages of one sequence; pages a fill or the keep rule
 * added share one rank. */
#ifndef PD_LIB_PLAN_RUNS_H
#define PD_LIB_PLAN_RUNS_H

#include <stddef.h>
#include <stdint.h>

#include "lib/page_runs.h"

typedef struct {
    uintptr_t lo, hi; /* pages [lo, hi), page-aligned */
    size_t first;     /* page lo's place in its sequence */
    size_t len;       /* the sequence's length: page lo + k ranks (first + k + 0.5) / len; */
    double rank;      /* 0: every page ranks `rank` */
} rt_plan_run;

typedef struct {
    rt_plan_run *v;
    size_t n, cap;
} rt_plan_runs;

/* Adds [lo, hi) (page-aligned; empty is ignored) as pages first, first + 1,
 * ... of a sequence whose length is set later (rt_plan_runs_seal). 0, or
 * -1 out of memory. */
int rt_plan_runs_push(rt_plan_runs *p, uintptr_t lo, uintptr_t hi, size_t first);
/* Adds [lo, hi) with one rank for every page. */
int rt_plan_runs_push_rank(rt_plan_runs *p, uintptr_t lo, uintptr_t hi, double rank);
/* Sets the sequence length of runs [from, p->n) to len. */
void rt_plan_runs_seal(rt_plan_runs *p, size_t from, size_t len);
double rt_plan_run_rank(const rt_plan_run *r, uintptr_t page);
/* Sorts the runs by address and keeps each page once, at its lowest rank
 * (where two runs overlap, the one ranking lower takes each page; two
 * sequences cross at most once, so an overlap splits in two at most). The
 * runs come out disjoint and in address order. 0, or -1 out of memory. */
int rt_plan_runs_unique(rt_plan_runs *p);
/* The plan's pages added to out, normalized (unique first). 0 or -1. */
int rt_plan_runs_pages(const rt_plan_runs *p, rt_runs *out);
/* out := p less the pages of drop (normalized), in p's order, ranks
 * unchanged (rt_runs_subtract for a plan). 0 or -1. */
int rt_plan_runs_subtract(const rt_plan_runs *p, const rt_runs *drop, rt_plan_runs *out);
/* Calls emit(ctx, page) for every page of p in promotion order: by rank,
 * then by address (the order of a sort of every page by that pair), by
 * merging the runs, whose pages rank in address order within each run:
 * O(pages x log runs), no list of every page to sort. Stops at emit's
 * nonzero answer and returns it; 0 when every page was emitted, -1 out of
 * memory. */
int rt_plan_runs_by_rank(const rt_plan_runs *p, int (*emit)(void *ctx, uintptr_t page), void *ctx);
size_t rt_plan_runs_npages(const rt_plan_runs *p);
void rt_plan_runs_free(rt_plan_runs *p);

#endif
