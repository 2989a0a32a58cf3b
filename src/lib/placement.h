/* Internal interface between the sync-point modules:
 *   profile.c    the instance that ended -> per-task profile (rt_sync_locked)
 *   predict.c    per-task estimate, T(r) and bytes(r) curves
 *   plan_pages.c hottest regions up to the planned bytes -> the plan's pages
 *   migrate.c    the plan against the placement -> backend moves
 *   placement.c  planning (per process or across processes: rt_replan_locked)
 * All run with rt.lock held. */
#ifndef PD_LIB_PLACEMENT_H
#define PD_LIB_PLACEMENT_H

#include <stddef.h>

#include "lib/page_runs.h"
#include "lib/page_sampler.h"
#include "lib/page_select.h"
#include "lib/runtime_internal.h"

#define RT_PAGE ((size_t)PD_SAMPLE_PAGE)

/* One task's prediction for the next instance. */
typedef struct {
    rt_task *task;
    double t_dram, t_slow;
    double curve[RT_GRID + 1]; /* non-increasing T(k / RT_GRID) */
    double *factor;            /* per object: estimated / last measured accesses */
    pd_bytes_curve bytes;      /* hottest-first bytes(r) */
} task_pred;

/* pd_plan_problem context of a per-process plan. */
typedef struct {
    task_pred *p;
    int n;
    double fallback_bytes; /* bytes(r=1) of a task with no sampled accesses */
} plan_ctx;

/* placement.c: the capacity a plan left, by benefit (Algorithm 1 on from
 * the plan: the longest task whose next RT_GRID step fits takes it). */
void rt_fill_leftover(const pd_plan_problem *prob, pd_plan_result *res);

/* predict.c */
void rt_predict_times(task_pred *tp);        /* t_dram, t_slow, est_acc, factor */
/* The instance that just ended joins the task's history (profile.c, after
 * the bases and alpha of this sync point are set). */
void rt_record_instance(rt_task *t);
int rt_build_bytes_curve(task_pred *tp);
int rt_tabulate_curves(task_pred *p, int n); /* curve[] of all, one model call */
/* The task's inputs: their bytes and the median DRAM-only time of their
 * recent instances (what a new input's time is read from), at most max;
 * how many (profile_store.c keeps them across runs). */
int rt_task_input_points(rt_task *t, double *bytes, double *dram_s, int max);
/* m as the task's instances taught it in this run (a fit, not given), and
 * its posterior sd: 1, else 0 (profile_store.c keeps it for the next run's
 * prior). */
int rt_task_mem_bound_learned(const rt_task *t, double *m, double *sd);
/* The factor by which a visit's first instance runs slower than the rest
 * of its visit, learned from the task's recorded visits (1 without any;
 * *known, may be NULL, 0 then). */
double rt_visit_warmup(const rt_task *t, double sigma, int *known);
double rt_hot_weight(const task_pred *tp, const rt_hot *h);
double rt_time_cb(void *plan_ctx, int task, double r);
size_t rt_bytes_cb(void *plan_ctx, int task, double r);

/* objects.c: the registered objects' pages as normalized runs (added to
 * out). 0, or -1 out of memory. */
int rt_objects_cover(rt_runs *out);

/* migrate.c: moves the plan's difference to the current placement, unless
 * the predicted gain over the horizon does not pay for the moves or stays
 * within the noise floor (then the placement stays), or hot-first on the
 * same heat is predicted faster (then hot-first is what moves). In both
 * cases *kept is 1 and kept_share/kept_bytes/kept_time (n each) receive
 * what each task runs under instead of the plan. */
int rt_migrate(task_pred *p, int n, const size_t *bytes, int *kept, double *kept_share, size_t *kept_bytes,
               double *kept_time);
void rt_migrate_reset(void); /* forget the fast pages of earlier plans */
/* Objects registered or moved since: their pages stay where first touch put
 * them, and the fast ones join the runtime's fast set (at the next sync
 * point or plan, so that pages touched since registration count). */
int rt_migrate_adopt(void);
/* Pages of [addr, addr+len) are no longer on the fast tier (placed slow
 * again at registration or update): the next plan promotes them anew. */
void rt_migrate_forget(const void *addr, size_t len);
size_t rt_plan_capacity(void);

/* migrate_cost.c */
double rt_migrate_seconds_per_page(void);  /* measured, or PADDISER_MIGRATE_BW, or the prior */
void rt_migrate_cost_record(size_t pages_moved, double seconds);
void rt_input_run_record(void);            /* at each sync point, after the instance */
int rt_plan_horizon(void);                 /* instances a new placement is expected to serve */
/* The visits the horizon keeps (the profile store's first), oldest first,
 * and the one running now, which the run's end ends: at most
 * RT_VISITS_KEPT, the newest, into len; how many. */
int rt_visits_at_end(int *len);
double rt_min_gain_share(void);            /* PADDISER_MIN_GAIN, default 2% */
/* Share of a predicted gain to trust, from the tasks' m and its standard
 * error (NaN: not learned): 1, or less while an m is uncertain. */
double rt_gain_trust(const double *m, const double *se, int n);
/* rt_gain_trust of the tasks p[0..n): a learned m at its fit's
 * uncertainty, the prior at the prior's, a given m whole. NaN out of
 * memory. */
double rt_tasks_gain_trust(const task_pred *p, int n);

#endif
