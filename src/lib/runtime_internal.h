/* Process-global state of the placement runtime, shared by its modules:
 *   runtime.c    init/finalize, options, queries, per-task CSV
 *   objects.c    data-object registry (typed API and LB_HM_config)
 *   tasks.c      task slots, task instance begin/end, default task id
 *   profile.c, predict.c, placement.c, plan_pages.c, migrate.c
 *                (placement.h, plan_pages.h): the sync point: profile,
 *                estimate and predict, plan bytes, plan pages, move pages
 * Everything is guarded by rt.lock except what the SIGSEGV handler touches
 * (page_sampler.c keeps that lock-free). */
#ifndef PD_LIB_RUNTIME_INTERNAL_H
#define PD_LIB_RUNTIME_INTERNAL_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/backend.h"
#include "lib/estimate.h"
#include "lib/model.h"
#include "lib/perf.h"
#include "paddiser.h"

#define RT_MAX_TASKS 4096 /* == PD_SAMPLER_MAX_TASKS */
#define RT_GRID 50        /* time curves are tabulated at r = k / RT_GRID */
#define RT_XCHG_TASKS 8   /* tasks per process in a cross-process plan */

/* What every process contributes to a cross-process plan (pd_set_allgather):
 * its tasks' time and bytes curves on the grid. All processes run the same
 * planner on the gathered blocks (in gather order), so they agree. */
typedef struct {
    uint64_t nonce;   /* finds this process's own block */
    int32_t ntasks;   /* -1: not taking part this time (plans alone) */
    int32_t pad;
    uint64_t capacity; /* fast bytes this process sees; the plan uses the minimum */
    struct {
        int32_t id;
        int32_t pad;
        double t[RT_GRID + 1];
        uint64_t b[RT_GRID + 1];
    } task[RT_XCHG_TASKS];
} rt_xchg;

typedef struct {
    int used;
    char *name;
    void *addr;
    size_t size;
    pd_alpha_state alpha;
    double alpha0;        /* alpha at registration (see placement.c) */
    size_t base_size;     /* size during the base instance (0: no base yet) */
    void *sampled_addr;   /* range of the current/last instance (the sample */
    size_t sampled_size;  /* table's, when sampling) */
    int rebinding;        /* LB_HM_config is moving it with others in one call */
    int adopt;            /* registered or moved: its fast pages are not known yet */
    int place_tier;       /* how the next adoption places it: PD_PLACE_FIRST_TOUCH, or
                           * PD_TIER_SLOW where the slow start's placement ran out of memory */
} rt_object;

/* One completed instance of a task, as the robust estimates need it. */
#define RT_HISTORY 32 /* instances kept per task */
#define RT_WINDOW 3   /* most recent ones (of the same input if any) a prediction rests on, */
#define RT_WINDOW_MAX 16 /* ... and at most, older ones of the same input within their noise */
typedef struct {
    uint64_t input; /* rt_input_signature of the sizes it ran with */
    double time;    /* wall time, seconds */
    double r0;      /* its measured DRAM share */
    double scale;   /* Eq. 1 scale of its input against the base input */
    int perturbed;  /* ran sampled while most instances are not (its time is the
                       page sampler's too): kept only until an unperturbed one */
    int visit_first; /* the first instance after another input ran (predict.c,
                        rt_visit_warmup): a visit's first is often slower */
    int sampled;     /* the page sampler armed pages in it while it arms none in
                        most instances (perturbed or not): its time has costs
                        the others' lack, so a warm-up ratio compares it only
                        with instances sampled alike */
} rt_instance;

/* The recent instances of one input of a task, kept while it runs others:
 * the first instance of a new input is predicted from the inputs around it
 * (predict.c, new_input_dram_time). */
#define RT_INPUTS 16     /* inputs a task keeps (least recently run goes) */
#define RT_INPUT_KEEP 5  /* most recent instances kept per input */
typedef struct {
    uint64_t input;      /* rt_input_signature */
    double scale;        /* its size (predict.c task_input_bytes), as last recorded */
    double time[RT_INPUT_KEEP], r0[RT_INPUT_KEEP];
    int first[RT_INPUT_KEEP]; /* rt_instance.visit_first */
    int n, next;         /* ring of its instances */
    unsigned long stamp; /* when it last ran (task's instance clock) */
} rt_input_times;

/* A sampled region's accesses for one task, as fractions of its object's
 * size, so the hotness survives reallocation and resizing. */
typedef struct {
    int object;
    double off_frac, len_frac;
    uint64_t count;   /* sampled intervals of the region's page */
    double touches;   /* count, times the touches per interval estimated from
                         the time to first touch (random/unknown objects) */
    double accesses;  /* touches * pages of the region */
} rt_hot;

/* A task's heat of one input, kept while it runs others (heat.c). */
#define RT_HEAT_INPUTS 4
typedef struct {
    uint64_t input;
    rt_hot *hot;
    size_t nhot;
    double *acc; /* per object: the totals hot sums to */
    size_t nacc;
    int n;       /* instances it averages */
    int whole;   /* whole (not thinned) instances of this run among them */
    unsigned long stamp;
} rt_heat_entry;

typedef struct {
    int id;
    int active;
    int paused;           /* between pd_task_pause and pd_task_resume */
    double pause_t0;      /* when it paused (the task clock, pd_perf_wall) */
    double paused_s;      /* its pauses since its begin */
    pd_perf_session session;
    pd_perf_sample cur;   /* this instance so far */
    int ran;              /* ran in the current instance */
    int instances;

    int have_base;
    double base_time, base_r0;
    double base_sampler_s; /* what the page sampler's faults cost base_time */
    double base_feat[PD_NFEATURES];
    double base_model_in[PD_NFEATURES]; /* NaN = not measured */
    /* Eq. 2's f on the share grid for these inputs (predict.c): the
     * features are the base instance's, so the model runs once a task. */
    double f_grid[RT_GRID + 1];
    unsigned char f_grid_in[PD_NFEATURES * sizeof(double)];
    const void *f_grid_model;
    int f_grid_valid;
    size_t nacc;          /* length of the per-object arrays below */
    double *base_acc;     /* [nacc] */

    rt_instance hist[RT_HISTORY]; /* ring, hist_next the oldest once full */
    int nhist, hist_next;
    uint64_t prev_input;  /* rt_input_signature of the last instance it ran */
    int ran_before;       /* ... which exists */
    rt_input_times inputs[RT_INPUTS]; /* per input, for new inputs' predictions */
    int ninputs;
    unsigned long input_clock;
    double mem_bound;     /* m of sigma = 1 + m (L - 1), learned from its
                             instances at different shares (predict.c) */
    double mem_bound_se;  /* the fit's standard error (NaN: no fit, the prior) */
    double pred_mem_bound, pred_mem_se; /* m the last prediction used, its se (NaN: not learned) */
    double pred_mem_sd;   /* its uncertainty as the gain trust counts it: the fit's se,
                             the prior's sd while m is the prior, NaN when m is given */
    double pred_cv;       /* robust CV of what the last prediction rests on (NaN: < 2) */
    int pred_n;           /* instances it rests on */
    int pred_same_input;  /* 1: they ran the predicted input itself */

    double last_time, last_r0;
    double last_sampler_s; /* what the page sampler's faults cost last_time (profile.c) */
    double counts_interval_s; /* its mean interval in the last sampled instance (profile.c) */
    double last_feat[PD_NFEATURES];
    int last_hw;
    double *last_acc;     /* [nacc] */
    double *est_acc;      /* [nacc] estimate for the planned instance */
    rt_hot *hot;          /* heat of input hot_input, hottest first (heat.c) */
    size_t nhot;
    uint64_t hot_input;   /* rt_input_signature the heat belongs to */
    int hot_n;            /* instances of it the heat averages */
    int hot_whole;        /* ... whole (not thinned) ones of this run among them: a heat
                             with none is not written to the profile store */
    int thin_blind;       /* its last sampled instance was thinned for the store
                             while the store had no heat of it: that profile was
                             dropped, and the next instance is sampled whole */
    double *hot_acc;      /* [nacc] per object: the accesses hot sums to */
    rt_heat_entry heat_mem[RT_HEAT_INPUTS]; /* other inputs' heat */
    unsigned long heat_clock;

    /* plan in effect for the next / current instance */
    int planned;
    double plan_share, plan_time;
    size_t plan_bytes;
    /* what the last completed instance ran under (for the CSV) */
    double ran_share;
    size_t ran_bytes;
} rt_task;

/* The last sync point's migration decision. */
typedef struct {
    int decided;        /* a plan differed from the placement: the rule ran */
    int kept;           /* 1: the placement stayed, the plan was not applied */
    double current_s;   /* predicted makespan, current placement */
    double planned_s;   /* predicted makespan, the new plan */
    double cost_s;      /* pages to move x seconds per page */
    double min_gain_s;  /* the gain a plan must beat: noise floor */
    int horizon;        /* instances the gain is counted over */
    size_t pages;       /* pages the plan would move */
    double model_s;     /* predicted makespan of the planner's plan (with its fills) */
    double hot_first_s; /* ... of hot-first on the same heat (NaN: not compared) */
    int hot_first;      /* 1: hot-first was predicted faster and replaced the plan */
    int reused;         /* 1: nothing it rests on changed: the last decision,
                           its rule re-evaluated on the new predictions (migrate.c) */
} rt_plan_decision;

typedef struct {
    pthread_mutex_t lock;
    int initialized;
    unsigned epoch;   /* pd_init count: a task pointer from before is stale */
    pd_options opt;
    pd_backend *backend;
    char backend_name[16];
    char backend_note[200];
    pd_model *model;
    int sampling;     /* the sampler was started (it may have stopped since: pd_sampler_stopped) */
    char sampling_note[200]; /* why not, when not started */
    uint64_t pmu_period; /* loads per sample when PMU load samples feed the sample
                            table (mem_sampler.c); 0: faults do (page_sampler.c) */
    /* A first (or forced) instance whose input an earlier run heated (the
     * profile store) is thinned to this share of its elapsed time, plus
     * the share of the stored instance time up to store_thin_cap seconds
     * (tasks.c); 0: sampled as any first instance. */
    double store_thin_frac, store_thin_cap;
    int inst_store_thin; /* the open instance was thinned for the store (tasks.c) */

    rt_object *objects;
    size_t nobjects, cap_objects;
    int ranges_dirty; /* sampler table must be rebuilt before arming */
    int start_slow;   /* PADDISER_START_TIER=slow: registration moves pages to the slow tier */
    int adopt_pending; /* some object has adopt set */
    int plan_stale;   /* objects changed since the last plan */
    unsigned layout_gen; /* bumped when objects or any task's heat change: a
                            sync point's reused decision (migrate.c) rests on them */

    rt_task *tasks[RT_MAX_TASKS];
    int ntasks;
    int active;       /* tasks currently between begin and end */
    int instance_open; /* a task began since the last sync point */
    int inst_sampled;  /* the open instance is sampled (pd_sampler_instance_begin):
                          its counts make the tasks' profiles; one that is not
                          leaves them as the last sampled instance made them */
    int instances;

    pd_allgather_fn allgather; /* cross-process planning, NULL = this process alone */
    void *allgather_ctx;
    int nprocs;
    uint64_t nonce;

    double makespan;
    size_t capacity;
    size_t fast_bytes; /* registered bytes placed on the fast tier */
    pd_migrate_stats last_migration;
    pd_migrate_stats last_demoted; /* demoted for room during the last promotion */

    /* gain-versus-cost rule (migrate.c, migrate_cost.c) */
#define RT_MOVE_SAMPLES 8
    double move_s[RT_MOVE_SAMPLES]; /* measured seconds per moved page, ring */
    int nmove_s, move_next;
    uint64_t last_ran_input; /* rt_input_signature of the last instance */
    int input_run;           /* consecutive instances of that input */
#define RT_VISITS_KEPT 8
    int visit_len[RT_VISITS_KEPT]; /* the last visits' lengths in instances, ring */
    int nvisits, visit_next;
    rt_plan_decision last_decision;

    /* A fork() child gets the parent's runtime turned off (runtime.c). */
    int inherited;     /* the parent's state is still here: pd_init releases it */
    long forked_from;  /* pid of the parent that ran the runtime (0: not a child) */
    int fork_noticed;  /* the child said once why calls return PD_ESTATE */

    pd_thp_mode thp;      /* in effect: OFF, KEEP, or AUTO = left alone */
    size_t thp_off_bytes; /* bytes advised MADV_NOHUGEPAGE */
    char thp_note[160];
} rt_state;

extern rt_state rt;

/* objects.c */
void rt_objects_free(void);
/* pd_object_register for memory the caller has just been given by the
 * allocator (libpaddiser-preload.so's malloc and mmap hooks): the same,
 * without reading /proc/self/maps to check that the range is the process's
 * own writable memory (it is, by construction), which was most of a
 * registration's cost (about 25 us of 41 us per 2 MiB malloc + free). */
int rt_object_register_owned(const char *name, void *addr, size_t size, const pd_access_hint *hint);
/* The bytes of the whole pages the registered objects touch (a page two
 * objects share counts for each): what placed pages are a share of. */
size_t rt_objects_total_bytes(void);
/* Which input the objects hold: a hash of every registered object's
 * position and size (sampled: the sizes the last instance ran with), so a
 * reallocated input of the same sizes is the same input. */
uint64_t rt_input_signature(int sampled);
int rt_sampler_sync_ranges(void); /* instance start: object sizes, sample table */

/* tasks.c */
rt_task *rt_task_find(int id);
/* pd_task_end, with waited_s seconds of the span since its pd_task_begin
 * left out of the task's time: the waits of `paddiser run`'s OpenMP
 * barriers, which pause a task without ending it (a pause that ended and
 * began the task cost two runtime calls and, in a sampled instance, a
 * whole arming pass per barrier). */
int rt_task_end_waited(int task_id, double waited_s);
void rt_tasks_free(void);
int rt_task_grow_arrays(rt_task *t); /* per-object arrays to rt.nobjects */

/* profile.c: appends a region to t->hot (cap: its allocated length) */
int rt_hot_push(rt_task *t, size_t *cap, rt_hot h);
void rt_hot_sort_hottest(rt_hot *h, size_t n); /* by accesses, the most first */

/* heat.c: at a sync point, t->hot holds the instance's regions and old the
 * heat before (taken over); blends them when they are the same input (or
 * with the remembered heat of the input that ran), keeps old's heat
 * otherwise. At planning, rt_heat_select brings the heat of the next input
 * when it is remembered. */
int rt_heat_merge(rt_task *t, size_t *cap, rt_hot *old, size_t nold, uint64_t ran, double noise);
void rt_heat_select(rt_task *t, uint64_t next);
void rt_heat_free(rt_task *t);

/* placement.c */
int rt_sync_locked(int plan); /* plan: also re-plan and migrate */
int rt_profile_missing(void); /* a task or object has no profile: sample the next instance */
void rt_profile_reset(void);  /* forget the last sampled instance's counts */
/* collective: called by every process at once (pd_sync_point), so a
 * cross-process plan may be exchanged; otherwise such a plan is kept. */
int rt_replan_locked(int collective);

/* thp.c: transparent huge pages of registered objects (pd_thp_mode) */
#define RT_THP_UNIT ((size_t)2 << 20)
void rt_thp_init(void);                  /* rt.thp from rt.opt.thp and the backend */
void rt_thp_prepare(void *addr, size_t size); /* at register / update */

/* runtime.c */
void rt_message(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* 1 when the environment variable `name` is "off" or "0": the switches
 * that turn one mechanism off for comparisons (PADDISER_SAMPLE_RATE,
 * PADDISER_VISIT_WARMUP, PADDISER_PREDICT_REPLAY, PADDISER_DISPLACE_KEPT). */
int rt_env_off(const char *name);
int rt_env_on(const char *name); /* NAME=on|1 */
/* rt.lock held: 1 when the runtime is initialized; 0 otherwise, and in a
 * fork() child of a running runtime it says once why (calls then return
 * PD_ESTATE). */
int rt_ready_locked(void);

#endif
