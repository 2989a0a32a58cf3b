/* Which pages a plan puts on the fast tier (internal; the sync point's
 * plan step, between the planner's bytes per task and the moves of
 * migrate.c): each task's hottest sampled regions up to its planned bytes,
 * each page once; the room left kept where pages are fast already, then
 * filled by benefit; kept pages no sample saw displaced by sampled ones
 * that pay for it; and hot-first on the same information instead where it
 * is predicted faster. All as runs of pages (page_runs.h, plan_runs.h):
 * the cost follows the regions, not the fast memory's size in pages. Runs
 * with rt.lock held. */
#ifndef PD_LIB_PLAN_PAGES_H
#define PD_LIB_PLAN_PAGES_H

#include <stddef.h>

#include "lib/page_runs.h"
#include "lib/placement.h"
#include "lib/plan_runs.h"

/* The plan for the tasks p[0..n) with bytes[i] planned for task i, within
 * budget_pages: the pages as ranked runs (sel: promotion order) and as a
 * set (fast), both empty on entry. covered: the placed pages that objects
 * still cover, kept where the plan leaves room; NULL when the placement is
 * unknown (then nothing is kept). rt.last_decision receives the plan's and
 * hot-first's predicted makespans. Returns 1 if hot-first's set is the
 * plan, 0 if the tasks' plans are, -1 out of memory (sel and fast are
 * freed by the caller either way). */
int rt_plan_pages(task_pred *p, int n, const size_t *bytes, size_t budget_pages, const rt_runs *covered,
                  rt_plan_runs *sel, rt_runs *fast);

/* Fast share of a task's next-instance accesses if exactly the pages of
 * fast (normalized) were on the fast tier: its sampled regions weighted as
 * in its bytes curve; a task with nothing sampled gets the fast share of
 * all registered pages (total_pages). *fast_bytes: the fast bytes inside
 * its regions. */
double rt_share_under_runs(const task_pred *tp, const rt_runs *fast, size_t total_pages, size_t *fast_bytes);

#endif
