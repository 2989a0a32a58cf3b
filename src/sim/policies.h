/* Placement policies under a fast-memory capacity. Each yields, per page,
 * the fraction of its accesses that fast memory serves:
 *   first-touch  pages in allocation / first-touch order until DRAM is full
 *   hot-first    global hotness from random page sampling of accessed bits
 *                (Memory-Optimizer-like), hottest first regardless of task
 *   memory-mode  all data in slow memory, DRAM a direct-mapped page-granular
 *                cache of the fast capacity; conflicts from random physical
 *                frames; a miss probes DRAM, then reads slow memory
 *   hot-exact    hot-first on the exact global counts (an ablation: how much
 *                of hot-first's loss is sampling, how much is ignoring tasks)
 *   greedy/exact the paper's Algorithm 1 / the exact min-makespan planner
 *                (pd_plan) over per-task time curves predicted by the
 *                execution model, then each task's hottest pages (page_select) */
#ifndef PD_SIM_POLICIES_H
#define PD_SIM_POLICIES_H

#include <stddef.h>
#include <stdint.h>

#include "lib/model.h"
#include "sim/exec_model.h"
#include "sim/profile.h"
#include "sim/tier.h"

typedef enum {
    PD_SIM_FIRST_TOUCH = 0,
    PD_SIM_HOT_FIRST,
    PD_SIM_MEMORY_MODE,
    PD_SIM_GREEDY,
    PD_SIM_EXACT,
    PD_SIM_HOT_EXACT, /* ablation: hot-first with exact global counts (no sampling) */
    PD_SIM_NPOLICIES
} pd_sim_policy;

const char *pd_sim_policy_name(pd_sim_policy pol);
/* -1 when unknown. */
int pd_sim_policy_parse(const char *name, pd_sim_policy *out);

typedef struct {
    double *fast;        /* [npages] */
    double *probe;       /* [npages], memory mode only (else NULL) */
    size_t fast_bytes;   /* bytes placed in fast memory (memory mode: cache size) */
    double *task_share;  /* [ntasks] share of the task's accesses on fast pages */
    size_t *task_bytes;  /* [ntasks] bytes the planner gave the task; others: fast bytes it touches */
    double predicted_makespan; /* planners: the plan's prediction; others 0 */
} pd_sim_placement;

typedef struct {
    uint64_t seed;        /* hot-first sampling and memory-mode frames */
    int scans;            /* hot-first: accessed-bit scans (0 = 64) */
    double sample_frac;   /* hot-first: pages sampled per scan (0 = 0.25) */
    double step;          /* planners: share step (0 = 0.05) */
    int rounds;           /* planners: re-planning rounds for capacity left by shared pages (0 = 1) */
    /* planners: plan on this profile (e.g. estimated from the base input,
     * same objects and pages) instead of the evaluated one; NULL = same */
    const pd_sim_profile *plan_on;
    /* planners: predict the time curves with Eq. 2 and this model (T_dram and
     * T_slow from the execution model, features from the profile) instead
     * of the execution model itself; NULL = execution model */
    const pd_model *eq2;
} pd_sim_policy_opts;

/* A page ranked by hotness, ties broken by `tie`, then by page index;
 * pd_sim_cmp_ranked_desc sorts the hottest first (qsort). */
typedef struct {
    double hot, tie;
    size_t page;
} pd_sim_ranked;
int pd_sim_cmp_ranked_desc(const void *a, const void *b);

/* capacity in bytes. 0 or -1 with err. Free with pd_sim_placement_free. */
int pd_sim_place(pd_sim_policy pol, const pd_sim_profile *p, const pd_sim_machine *m,
                 size_t capacity, const pd_sim_policy_opts *opts, pd_sim_placement *out,
                 char *err, size_t errlen);
void pd_sim_placement_free(pd_sim_placement *pl);

/* Direct-mapped cache hit rate per page under the independent reference
 * model: a page's hit rate is its share of the accesses to its cache set.
 * set[g] is the cache set of page g; freq[g] its accesses. With no sets
 * every hit rate is 0. 0, or -1 when out of memory. */
int pd_sim_direct_mapped_hits(const double *freq, const size_t *set, size_t npages,
                               size_t nsets, double *hit);

/* Evaluation of a placement: split + execution model. */
typedef struct {
    double makespan;
    double cov;
    double mean;
    double *task_time;   /* [ntasks] */
    double *task_share;  /* [ntasks] measured fast share of accesses */
} pd_sim_outcome;

int pd_sim_evaluate(const pd_sim_machine *m, const pd_sim_profile *p, const pd_sim_placement *pl,
                    pd_sim_outcome *out);
void pd_sim_outcome_free(pd_sim_outcome *o);

#endif
