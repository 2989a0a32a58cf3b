/* Hottest-pages-first placement within each task's share (design step 6).
 *
 * A task's pages carry sampled access counts. Its bytes(r) curve - the fast
 * memory it needs so that a fraction r of its accesses hit fast memory - is
 * the size of the shortest hottest-first prefix of its pages holding r of
 * the accesses. pd_plan_problem.bytes is built from these curves; after
 * planning, pd_select_hottest picks the pages for each task's bytes. Pages
 * with no sampled access are never selected (they serve no accesses). */
#ifndef PD_LIB_PAGE_SELECT_H
#define PD_LIB_PAGE_SELECT_H

#include <stddef.h>
#include <stdint.h>

/* Pages grouped by access count, hottest first (runs of equal counts). */
typedef struct {
    size_t nruns;
    uint64_t *count;   /* [nruns] access count of each page in run j, descending, > 0 */
    uint64_t *cum_acc; /* [nruns] accesses of runs 0..j */
    size_t *cum_pages; /* [nruns] pages of runs 0..j */
    uint64_t total;    /* all sampled accesses of the task */
    size_t page_size;
} pd_bytes_curve;

/* From per-page counts (any order). PD_OK, PD_EINVAL (c NULL, counts NULL
 * with npages > 0, page_size 0, total overflow), PD_ENOMEM. */
int pd_bytes_curve_from_counts(pd_bytes_curve *c, const uint64_t *counts, size_t npages, size_t page_size);
/* From a hotness histogram: npages[j] pages were sampled count[j] times
 * each (bins in any order, repeated counts merge, zero bins ignored). */
int pd_bytes_curve_from_histogram(pd_bytes_curve *c, const uint64_t *count, const size_t *npages, size_t nbins,
                                  size_t page_size);
void pd_bytes_curve_free(pd_bytes_curve *c);

/* Pages (bytes) of the shortest hottest-first prefix holding a fraction r of
 * the accesses: 0 for r <= 0 or no accesses; all touched pages for r >= 1. */
size_t pd_bytes_curve_pages(const pd_bytes_curve *c, double r);
size_t pd_bytes_curve_bytes(const pd_bytes_curve *c, double r);
/* Inverse: access share served by the hottest floor(bytes / page_size) pages. */
double pd_bytes_curve_share(const pd_bytes_curve *c, size_t bytes);
/* Touched pages (count > 0). */
size_t pd_bytes_curve_touched(const pd_bytes_curve *c);

/* pd_plan_problem.bytes adapter: ctx is an array of pd_bytes_curve, one per task. */
size_t pd_bytes_curve_cb(void *ctx, int task, double r);

/* Indexes of the hottest pages (count > 0), at most max_pages, hottest first,
 * ties by lower index. out_idx holds npages entries. Returns how many (0
 * also when out of memory: pd_select_plan reports that). */
size_t pd_select_hottest(const uint64_t *counts, size_t npages, size_t max_pages, size_t *out_idx);

/* One task's pages for pd_select_plan. */
typedef struct {
    const uint64_t *counts; /* [npages] sampled accesses */
    size_t npages;
} pd_task_pages;

/* For every task i, the hottest pages fitting bytes[i] (floor(bytes[i] /
 * page_size) pages): sel[i] gets a malloc'ed index array (free each), nsel[i]
 * its length. PD_OK, PD_EINVAL, PD_ENOMEM (nothing left allocated). */
int pd_select_plan(const pd_task_pages *tasks, int ntasks, const size_t *bytes, size_t page_size,
                   size_t **sel, size_t *nsel);

#endif
