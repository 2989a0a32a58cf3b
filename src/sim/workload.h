/* Harness for the evaluation workloads: real OpenMP task-parallel kernels
 * (wl_*.c) that register their data objects and mark their tasks, run once
 * uninstrumented per repetition to time every task (thread CPU time, robust
 * to a shared machine), and once instrumented to count, per task and per
 * page of every object, the 64 B lines they read and write (the kernel knows
 * what it touches: a contiguous range counts the lines it covers, a gather
 * one line). The result is a pd_sim_profile. */
#ifndef PD_SIM_WORKLOAD_H
#define PD_SIM_WORKLOAD_H

#include <stddef.h>
#include <stdint.h>

#include "sim/profile.h"
#include "common/util.h"

typedef struct pd_wl_ctx {
    pd_sim_profile *prof;  /* objects; counters allocated only while counting */
    int counting;          /* 1 in the instrumented run */
    double *task_cpu;      /* [ntasks] thread CPU seconds of the current run */
    void **obj_addr;       /* [nobjects] base address of each object */
    double checksum;       /* kernels store a result digest (keeps work live) */
    int runtime;           /* 1: also drive libpaddiser (objects, task marks) */
    int *rt_id;            /* [nobjects] libpaddiser object ids */
    int rt_errors;         /* failed pd_task_begin/end calls */
    /* phases (pd_wl_sync) */
    int phase;             /* current phase of this run */
    int phase_open;        /* a task ran since the last sync */
    int phase_cap;         /* rows allocated in phase_cpu */
    double *phase_cpu;     /* [phase_cap][ntasks] thread CPU seconds per phase */
    uint64_t *region_seen; /* [ntasks][nregions] counts already given to phases */
    int oom;               /* a phase could not be recorded */
} pd_wl_ctx;

typedef struct {
    const char *name;
    const char *desc;
    /* Builds the input (named "tiny", "base", "in1", "in2", "in3"), calls
     * pd_wl_tasks and pd_wl_object; NULL + err on failure. */
    void *(*setup)(pd_wl_ctx *ctx, const char *input, char *err, size_t errlen);
    /* One complete run; repeatable. Marks tasks with pd_wl_task_begin/end. */
    void (*run)(void *state, pd_wl_ctx *ctx);
    void (*teardown)(void *state);
    /* Checks the last run's result against a serial recomputation: 0, or -1
     * with err. */
    int (*verify)(void *state, char *err, size_t errlen);
} pd_workload;

extern const pd_workload pd_wl_spgemm, pd_wl_bfs, pd_wl_stencil, pd_wl_dmrg;
/* NULL-terminated list of all workloads, and lookup by name. */
extern const pd_workload *const pd_workloads[];
const pd_workload *pd_workload_find(const char *name);
/* Input names every workload accepts, NULL-terminated (tiny is for tests). */
extern const char *const pd_wl_inputs[];
/* Index of input in pd_wl_inputs or -1. */
int pd_wl_input_index(const char *input);

/* ---- called by kernels during setup -------------------------------------- */
/* Page-aligned allocations for the registered objects, so that profile page
 * k of an object is the k-th real page of it (the runtime and its backends
 * work on real pages). pd_wl_zalloc zeroes. Free with free(). */
void *pd_wl_alloc(size_t bytes);
void *pd_wl_zalloc(size_t bytes);
int pd_wl_tasks(pd_wl_ctx *ctx, const char *workload, const char *input, int ntasks);
/* Returns the object id (>= 0) or -1. */
int pd_wl_object(pd_wl_ctx *ctx, const char *name, void *addr, size_t bytes, pd_pattern pat,
                 size_t elem_size);
/* A kernel's objects, registered in order by pd_wl_objects; each id lands in *id. */
typedef struct {
    const char *name;
    void *addr;
    size_t bytes;
    pd_pattern pattern;
    size_t elem_size;
    int *id;
} pd_wl_object_spec;
/* 0, or -1 at the first object that fails (so no kernel keeps an id of -1). */
int pd_wl_objects(pd_wl_ctx *ctx, const pd_wl_object_spec *objs, size_t n);

/* ---- called by kernels while running -------------------------------------- */
double pd_wl_task_begin(pd_wl_ctx *ctx, int task);
void pd_wl_task_end(pd_wl_ctx *ctx, int task, double started);
/* A barrier: ends the current phase (called by one thread, between
 * parallel regions). What runs after the last sync is a phase of its own. */
void pd_wl_sync(pd_wl_ctx *ctx);

/* One line access at byte offset off of object obj (no-op unless counting). */
static inline void pd_wl_rd(pd_wl_ctx *ctx, int task, int obj, size_t off)
{
    if (ctx->counting)
        ctx->prof->tasks[task].reads[ctx->prof->objects[obj].page_base + off / PD_SIM_PAGE]++;
}
static inline void pd_wl_wr(pd_wl_ctx *ctx, int task, int obj, size_t off)
{
    if (ctx->counting)
        ctx->prof->tasks[task].writes[ctx->prof->objects[obj].page_base + off / PD_SIM_PAGE]++;
}
/* The lines covering [off, off + len). */
void pd_wl_count_range(pd_wl_ctx *ctx, int task, int obj, size_t off, size_t len, int write);
static inline void pd_wl_rd_range(pd_wl_ctx *ctx, int task, int obj, size_t off, size_t len)
{
    if (ctx->counting && len)
        pd_wl_count_range(ctx, task, obj, off, len, 0);
}
static inline void pd_wl_wr_range(pd_wl_ctx *ctx, int task, int obj, size_t off, size_t len)
{
    if (ctx->counting && len)
        pd_wl_count_range(ctx, task, obj, off, len, 1);
}

/* ---- driver --------------------------------------------------------------- */
/* Runs w on input: reps timed runs (task time = min over runs) and one
 * counting run. NULL + err on failure. */
pd_sim_profile *pd_wl_profile(const pd_workload *w, const char *input, int reps, char *err,
                              size_t errlen);

/* compute_s = measured time - modelled uncontended DRAM memory time,
 * at least 10 % of the measured time. */
int pd_wl_calibrate_compute(pd_sim_profile *p); /* 0, or -1 when out of memory */

/* Sets up w on input, runs it once uninstrumented and verifies the result. */
int pd_wl_verify(const pd_workload *w, const char *input, char *err, size_t errlen);

/* The runtime's sampled accesses against the exact counts of one run. */
typedef struct {
    int nobjects, ntasks;
    char **names;     /* [nobjects] */
    double *exact;    /* [nobjects][ntasks] line accesses */
    double *sampled;  /* [nobjects][ntasks] pd_object_accesses */
    double *obj_tv;   /* [nobjects] total-variation distance of the task shares */
    double tv;        /* over all (object, task) cells */
    size_t samples;   /* sampled pages */
    unsigned long long faults;
} pd_wl_sampling;

/* Runs w on input once under libpaddiser (no backend, sampling on): objects
 * registered with their patterns, tasks marked, one sync point; compares
 * pd_object_accesses with the exact counts of a counting run of the same
 * input. 0 or -1 with err. Free with pd_wl_sampling_free. */
int pd_wl_sampling_check(const pd_workload *w, const char *input, pd_wl_sampling *out, char *err,
                         size_t errlen);
void pd_wl_sampling_free(pd_wl_sampling *s);

/* The runtime under PADDISER_START_TIER=slow: registration moves every
 * page to the slow tier (by default pages stay where first touch put them). */
int pd_wl_runtime_starts_slow(void);

/* What the runtime decided at the sync point of pd_wl_runtime_placement
 * (pd_profile_info's plan_* fields): whether a plan differed from where
 * the pages were, whether the gain-versus-cost rule kept the placement,
 * whether hot-first's set replaced the planner's plan, the predicted
 * makespans under the placement and under the plan, the moves' cost, and
 * the pages that moved. */
typedef struct {
    int decided, kept, hot_first;
    double current_s, planned_s, cost_s;
    size_t pages_moved;
} pd_wl_runtime_decision;

/* The runtime's own placement, end to end: runs w on input under
 * libpaddiser with the simulated backend of `capacity` bytes and the given
 * planner (page sampling, Eq. 1/2 prediction, plan, page moves at the sync
 * point after the first instance), then reads which pages the backend holds
 * in fast memory: fast[layout->npages] (layout: the exact profile of the same
 * workload and input). *predicted: the runtime's predicted makespan;
 * decision (may be NULL): what it decided there. */
int pd_wl_runtime_placement(const pd_workload *w, const char *input, size_t capacity,
                            pd_planner_kind planner, const pd_sim_profile *layout, double *fast,
                            double *predicted, pd_wl_runtime_decision *decision, char *err, size_t errlen);

/* Deterministic per-workload random numbers (splitmix64). */
static inline uint64_t pd_wl_rand(uint64_t *s)
{
    return pd_splitmix64(s);
}
static inline double pd_wl_uniform(uint64_t *s)
{
    return (double)(pd_wl_rand(s) >> 11) * (1.0 / 9007199254740992.0);
}

#endif
