/* libpaddiser: load-balance-aware data placement on heterogeneous memory.
 *
 * Design (PPoPP'23 "Merchandiser", see docs/): the application registers its
 * data objects and marks task instances; the runtime profiles each task on a
 * base input, estimates per-object accesses for new inputs by access pattern,
 * predicts every task's time under any fast-memory (DRAM) share, and gives
 * fast memory so that all tasks finish early (min-makespan), then migrates
 * the chosen pages through a backend (real NUMA tiers, or a simulated tier).
 *
 * Errors: every call returns a pd_status (0 = ok, < 0 = error); nothing
 * aborts the application. pd_strerror() gives a message. */
#ifndef PADDISER_H
#define PADDISER_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Marks the exported API: the library is built with -fvisibility=hidden. */
#ifndef PD_API
#if defined(__GNUC__) || defined(__clang__)
#define PD_API __attribute__((visibility("default")))
#else
#define PD_API
#endif
#endif

/* Library version (semantic versioning; the SONAME is libpaddiser.so.MAJOR). */
#define PD_VERSION_MAJOR 0
#define PD_VERSION_MINOR 2
#define PD_VERSION_PATCH 0
#define PD_VERSION_STRING "0.2.0"

/* The version of the library actually linked (may differ from the header's
 * PD_VERSION_STRING when a newer shared library is installed). */
PD_API const char *pd_version(void);

typedef enum {
    PD_OK = 0,
    PD_EINVAL = -1,       /* bad argument */
    PD_ENOMEM = -2,       /* allocation failed */
    PD_ESTATE = -3,       /* call out of order (e.g. task_end without begin) */
    PD_ENOTFOUND = -4,    /* unknown object / task id */
    PD_EUNSUPPORTED = -5, /* feature not available on this machine */
    PD_EIO = -6,          /* system call or file error (errno kept) */
} pd_status;

PD_API const char *pd_strerror(int status);

/* ---- access patterns ---------------------------------------------------- */

typedef enum {
    PD_PATTERN_UNKNOWN = 0, /* treated as random */
    PD_PATTERN_STREAM,      /* A[i] = B[i] + C[i], reductions, transposes */
    PD_PATTERN_STRIDE,      /* A[i * s] */
    PD_PATTERN_STENCIL,     /* A[i-1] + A[i+1] */
    PD_PATTERN_RANDOM,      /* A[B[i]], pointer chasing */
} pd_pattern;

typedef struct {
    pd_pattern pattern;
    size_t elem_size;     /* bytes per element (stream/stride); 0 means 8 */
    size_t stride;        /* elements between accesses (stride); 0 means 1 */
    int input_dependent;  /* stencil whose shape depends on the input: alpha refined online */
} pd_access_hint;

/* ---- runtime lifecycle --------------------------------------------------- */

typedef enum {
    PD_BACKEND_AUTO = 0, /* real NUMA tiers when a slow node exists, else none */
    PD_BACKEND_NONE,     /* plan only, never move pages */
    PD_BACKEND_SIM,      /* simulated two-tier memory (page placement recorded) */
    PD_BACKEND_NUMA,     /* move_pages/mbind between a fast and a slow NUMA node */
} pd_backend_kind;

typedef enum {
    PD_PLANNER_EXACT = 0, /* binary search on the makespan (default) */
    PD_PLANNER_GREEDY,    /* the paper's Algorithm 1, 5% steps */
} pd_planner_kind;

/* Transparent huge pages of registered objects. The kernel migrates a THP as
 * a whole: moving one 4 KB page of it moves 2 MB (docs/runtime.md). */
typedef enum {
    PD_THP_AUTO = 0, /* as OFF with the numa backend; otherwise THP is left alone */
    PD_THP_OFF,      /* madvise(MADV_NOHUGEPAGE) each registered object (its whole pages)
                        and split the huge pages already there: placement is page-exact */
    PD_THP_KEEP,     /* leave THP on; plans place whole 2 MB units (aligned) */
} pd_thp_mode;

typedef struct {
    pd_backend_kind backend;
    pd_planner_kind planner;
    size_t fast_capacity;   /* bytes of fast memory to distribute; 0 = discover/all */
    int fast_node;          /* NUMA node ids; -1 = discover */
    int slow_node;
    const char *model_path; /* performance model file; NULL = shipped default */
    int sampling;           /* 1 = page-sample accesses (default), 0 = off */
    pd_thp_mode thp;        /* PD_THP_AUTO by default */
} pd_options;

/* Fills defaults (AUTO backend, EXACT planner, discover nodes, sampling on). */
PD_API void pd_options_default(pd_options *opt);
/* opt may be NULL for defaults. Idempotent: a second init returns PD_ESTATE. */
PD_API int pd_init(const pd_options *opt);
PD_API int pd_finalize(void);

/* ---- data objects -------------------------------------------------------- */

/* Registers [addr, addr+size) under a name; returns the object id (>= 0) or
 * an error. hint may be NULL (unknown pattern). The name of an object that
 * was unregistered brings that object back (same id, its history kept): free,
 * unregister, allocate and register again for the next input. The memory
 * may be freed before the unregistration, but only between instances: no
 * task may run while a registered object's memory is gone (the sampler
 * would protect pages of whatever is mapped there next). */
PD_API int pd_object_register(const char *name, void *addr, size_t size, const pd_access_hint *hint);
/* The object was reallocated or resized for a new input. */
PD_API int pd_object_update(int id, void *addr, size_t size);
PD_API int pd_object_unregister(int id);

/* Paper API: objects is an array of object base pointers terminated by NULL,
 * sizes[i] the size in bytes of objects[i]. Registers them all with unknown
 * pattern; returns objects on success, NULL on error (errno = EINVAL/ENOMEM).
 * objects[i] is the same object at every call (by position, named
 * "LB_HM_object<i>"): a call with new pointers, before the next input's
 * instance, is that input's objects and keeps their history; a new block
 * may reuse another object's old memory. */
PD_API void *LB_HM_config(void *objects, int *sizes);
/* The same with size_t sizes, for objects of 2 GiB and more (int sizes
 * cannot hold them). */
PD_API void *LB_HM_config_sizes(void *objects, const size_t *sizes);

/* ---- tasks ---------------------------------------------------------------- */

/* Marks one task instance. task_id < 0 picks the default: the MPI rank when
 * running under MPI (OMPI_COMM_WORLD_RANK / PMI_RANK / PMIX_RANK), else the
 * OpenMP thread number. Begin and end may come from different OpenMP threads
 * at once (one thread per task at a time); a task may begin and end several
 * times in one instance (its times add up). The first complete instance of every task is the base input
 * profile; later instances are estimated, predicted and planned. PD_ENOMEM
 * from pd_task_begin: out of memory opening an instance; the task has not
 * begun, and a later begin tries again. */
PD_API int pd_task_begin(int task_id);
PD_API int pd_task_end(int task_id);
/* The running task's thread waits (an OpenMP barrier between two phases, a
 * lock another task holds) without ending the task: the time until
 * pd_task_resume is no part of the task's wall or CPU time, as if it had
 * ended and begun again, but the instance's sampling goes on through it
 * (a task end while no other task runs stops it, and the next begin
 * starts it again at a cost of one protection change per sampled page).
 * Between the two, as inside a task, no system call may read or write
 * registered memory. A task ended while paused ends at its pause.
 * PD_ESTATE when the task is not running or already paused (pause), or not
 * paused (resume); PD_ENOTFOUND for a task that never began. */
PD_API int pd_task_pause(int task_id);
PD_API int pd_task_resume(int task_id);

/* All tasks of one instance reached the synchronisation point: the runtime
 * estimates, predicts and plans for the next instance and migrates pages. */
PD_API int pd_sync_point(void);

/* ---- planning across processes (MPI) ------------------------------------------ */

/* Ranks that share one fast memory (one node) plan it together when the
 * application gives the runtime a way to gather data: fn(ctx, send, recv,
 * bytes) must collect `bytes` from each of the nprocs processes into recv
 * (process p's block at recv + p * bytes, the same order everywhere) and
 * return 0 - MPI_Allgather on a node communicator does exactly this. Then
 * pd_sync_point is collective over those processes: every one tabulates its
 * tasks' curves (up to 8 tasks per process), all run the same planner over all
 * tasks with the smallest fast capacity any of them sees, and each moves its
 * own pages. Plans then change only at pd_sync_point. fn NULL switches back to
 * planning per process. Call after pd_init. */
typedef int (*pd_allgather_fn)(void *ctx, const void *send, void *recv, size_t bytes);
PD_API int pd_set_allgather(pd_allgather_fn fn, void *ctx, int nprocs);

/* ---- plan query ------------------------------------------------------------ */

typedef struct {
    int task;
    double dram_share;     /* fraction of the task's accesses served by fast memory */
    size_t dram_bytes;     /* fast-memory bytes given to the task */
    double predicted_time; /* seconds, under this plan */
    /* How far to trust predicted_time: the median of the task's most recent
     * instances (up to 3, more while they agree) of this very input (same
     * object sizes) when there are any, or its last instance alone where
     * the input's times drift (predicted_from 1), else of other inputs
     * scaled by Eq. 1. */
    int predicted_from;    /* instances the prediction rests on */
    int same_input;        /* 1: they ran this input; 0: other inputs, scaled */
    double predicted_cv;   /* their robust relative spread (1.4826 MAD / median);
                              NaN with fewer than 2 */
    /* The memory-bound fraction m behind T_slow = (1 + m (L - 1)) T_dram:
     * MEM_WCY with hardware counters, PADDISER_MEM_BOUND when set, else
     * learned from the task's instances at different DRAM shares (the prior
     * 0.5 until they tell). mem_bound_se: the fit's standard error, NaN
     * while m is not learned. */
    double mem_bound;
    double mem_bound_se;
} pd_task_plan;

/* Copies up to max task plans of this process's tasks; returns their number
 * (>= 0) or an error. makespan (may be NULL) receives the predicted makespan
 * (over all processes' tasks with pd_set_allgather). */
PD_API int pd_plan_query(pd_task_plan *out, int max, double *makespan);

/* ---- profiling and runtime state queries ------------------------------------ */

typedef struct {
    int initialized;
    int hw_counters;             /* 1: perf_event_open hardware counters feed the features */
    char counters_note[200];     /* "hardware counters unavailable: <reason>" when hw_counters == 0 */
    int sampling;                /* 1: pages are sampled (0: see sampling_note) */
    size_t samples;              /* sampled 4 KB pages */
    size_t region_bytes;         /* object bytes each sample stands for (2 MB or more) */
    unsigned long long sampled_faults;
    char backend[16];            /* "none", "sim" or "numa" */
    char backend_note[200];      /* why AUTO ended with no backend, etc. */
    int model_loaded;            /* 0: linear interpolation between T_dram and T_slow */
    int instances;               /* sync points passed */
    size_t fast_capacity;        /* bytes the planner distributes */
    size_t pages_moved, pages_failed; /* by the last migration */
    size_t bytes_moved;          /* by the last migration: bytes that really moved */
    size_t pages_demoted, bytes_demoted; /* last migration: moved to slow memory to make
                                    room for hotter planned pages (fast memory short) */
    char thp[8];                 /* "off" (objects advised MADV_NOHUGEPAGE), "keep"
                                    (2 MB units) or "system" (left alone: no pages move) */
    size_t thp_off_bytes;        /* registered bytes advised MADV_NOHUGEPAGE */
    char thp_note[160];          /* what could not be done (madvise failed, ...) */
    /* The last sync point's gain-versus-cost rule (docs/runtime.md): a new
     * plan that differs from the placement is applied only if its predicted
     * gain beats the noise floor and, over the horizon, the cost of its moves. */
    int plan_decided;            /* 1: a plan differed from the placement */
    int plan_kept;               /* 1: it did not pay, the placement stayed */
    double plan_current_s;       /* predicted makespan under the placement */
    double plan_planned_s;       /* predicted makespan under the new plan */
    double plan_cost_s;          /* its moves: pages x migrate_s_per_page */
    double plan_min_gain_s;      /* noise floor the gain had to beat */
    int plan_horizon;            /* instances the gain was counted over */
    double migrate_s_per_page;   /* measured (median of recent moves), PADDISER_MIGRATE_BW,
                                    or the prior 4 KiB at 1 GB/s */
    /* The last plan against hot-first on the same sampled heat (hottest
     * pages first, whatever the task): a plan predicted slower is never
     * applied, hot-first is. */
    int plan_hot_first;          /* 1: hot-first replaced the planner's plan */
    double plan_model_s;         /* predicted makespan of the planner's plan */
    double plan_hot_first_s;     /* predicted makespan of hot-first (NaN: not compared,
                                    e.g. with PD_THP_KEEP) */
    char sampling_note[256];     /* why sampling is 0: off by option, unavailable, or stopped
                                    because the SIGSEGV handler was replaced ("" while it runs) */
    char sampler[12];            /* what feeds the access samples: "pmu" (PMU load sampling,
                                    no page protection), "mprotect" (page protection) or "off" */
    /* Page protection samples whole instances while their measured cost
     * (times the wall factor PADDISER_SAMPLE_WALL_FACTOR describes) stays
     * within PADDISER_SAMPLE_SHARE_PCT of the program's time (default 2%); an
     * instance it skips arms nothing and keeps the last sampled profile. */
    int instances_sampled;       /* instances the sampler armed pages in */
    double sampling_cost_s;      /* their measured cost: arming, disarming, faults */
    double sampling_wall_s;      /* time of all instances (first task's begin to last task's end) */
} pd_profile_info;

PD_API int pd_profile_info_get(pd_profile_info *out);

typedef struct {
    int task;
    int instances;            /* instances this task ran in */
    double base_time;         /* seconds, base instance */
    double last_time;         /* seconds, last completed instance */
    double features[8];       /* last instance: LLC_MPKI, IPC, PRF_Miss, MEM_WCY,
                                 L2_LD_Miss, BR_MSP, VEC_INS, L3_LD_Miss (or proxies) */
    int hw_counters;          /* features come from hardware counters */
    double accesses;          /* last instance, sampled and scaled, all objects */
} pd_task_profile;

/* Profile of one task (task id as given to pd_task_begin). */
PD_API int pd_task_profile_get(int task, pd_task_profile *out);
/* Sampled, scaled accesses of an object in the last completed instance, by
 * one task (task >= 0) or all tasks (task < 0). */
PD_API int pd_object_accesses(int object, int task, double *out);

/* Where the runtime's backend holds an object's pages now. */
enum { PD_PAGE_FAST = 0, PD_PAGE_SLOW = 1, PD_PAGE_UNKNOWN = -1 /* e.g. not resident yet */ };
/* Page k of an object is the 4 KB page at (addr rounded down to 4 KB) +
 * k * 4096, for every page its registered range [addr, addr + size) touches.
 * Writes PD_PAGE_FAST, PD_PAGE_SLOW or PD_PAGE_UNKNOWN for the first min(pages, max_pages)
 * pages into tier_out (NULL allowed when max_pages is 0) and returns the
 * object's page count (>= 0, at most INT_MAX), or: PD_ESTATE before pd_init, PD_ENOTFOUND for
 * an unknown object, PD_EINVAL for a NULL tier_out with max_pages > 0,
 * PD_EUNSUPPORTED without a backend (PD_BACKEND_NONE or none found: pages
 * never move), PD_EIO when the backend cannot tell. Call it with no task
 * running for a consistent picture (pages move at sync points). */
PD_API int pd_object_page_tiers(int object, int *tier_out, size_t max_pages);

/* ---- planners (pure functions, usable without the runtime) ------------------ */

typedef struct {
    int ntasks;
    /* Predicted time of task i when a fraction r in [0,1] of its accesses hit
     * fast memory. Must be non-increasing in r. */
    double (*time)(void *ctx, int task, double r);
    /* Fast-memory bytes task i needs to reach access share r (hottest pages
     * first). Non-decreasing in r, bytes(ctx, i, 0) == 0. */
    size_t (*bytes)(void *ctx, int task, double r);
    void *ctx;
    size_t capacity; /* fast-memory bytes available to all tasks together */
} pd_plan_problem;

typedef struct {
    double *share;  /* [ntasks], caller-allocated */
    size_t *bytes;  /* [ntasks] */
    double *time;   /* [ntasks] */
    double makespan;
    size_t used;    /* sum of bytes, <= capacity */
} pd_plan_result;

/* step: share increment of the greedy (0 = 0.05); the exact planner uses it as
 * the share resolution of its per-task search. */
PD_API int pd_plan(pd_planner_kind which, const pd_plan_problem *problem, double step, pd_plan_result *out);

#ifdef __cplusplus
}
#endif

#endif
