/* Per-task-instance performance features.
 *
 * Hardware path: perf_event_open counters on the calling thread (generic
 * PERF_TYPE_HARDWARE / PERF_TYPE_HW_CACHE events), turned into the 8 model
 * features (model.h order). Fallback path (no PMU, PADDISER_PERF=off, or a
 * restricted perf_event_paranoid): the kernel's per-thread software accounting
 * (CPU time, page faults, context switches) plus the sampled access rate, put
 * into the same 8 slots as proxies (docs/runtime.md has the mapping).
 *
 * The counter source is injectable (pd_perf_set_source) so that tests can
 * feed known counts through the hardware path's arithmetic. */
#ifndef PD_LIB_PERF_H
#define PD_LIB_PERF_H

#include <stdint.h>

#include "lib/model.h"

enum {
    PD_FEAT_LLC_MPKI = 0,
    PD_FEAT_IPC,
    PD_FEAT_PRF_MISS,
    PD_FEAT_MEM_WCY,
    PD_FEAT_L2_LD_MISS,
    PD_FEAT_BR_MSP,
    PD_FEAT_VEC_INS,
    PD_FEAT_L3_LD_MISS,
};

/* Hardware events the features are computed from. */
enum {
    PD_EV_INSTRUCTIONS = 0,
    PD_EV_CYCLES,
    PD_EV_LLC_MISSES,        /* PERF_COUNT_HW_CACHE_MISSES */
    PD_EV_LLC_LOADS,         /* HW_CACHE LL / READ / ACCESS */
    PD_EV_LLC_LOAD_MISSES,   /* HW_CACHE LL / READ / MISS */
    PD_EV_L1D_PREFETCH_MISSES, /* HW_CACHE L1D / PREFETCH / MISS */
    PD_EV_STALLED_BACKEND,   /* PERF_COUNT_HW_STALLED_CYCLES_BACKEND */
    PD_EV_BRANCH_MISSES,
    PD_NEVENTS
};

typedef struct {
    uint64_t value[PD_NEVENTS];
    unsigned valid; /* bit e set when value[e] was counted */
} pd_hw_counts;

typedef struct {
    double cpu_s;        /* thread CPU time (task-clock) */
    double page_faults;  /* minor + major */
    double ctx_switches; /* voluntary + involuntary */
} pd_sw_counts;

/* A hardware counter source: start() opens counters on the calling thread
 * and returns a handle (NULL on failure); stop() reads them into out,
 * releases the handle and returns 0 (or < 0). */
typedef struct {
    const char *name;
    void *(*start)(void *ctx);
    int (*stop)(void *ctx, void *handle, pd_hw_counts *out);
    void *ctx;
} pd_counter_source;

/* Probes the hardware counters once (honours PADDISER_PERF=off). Returns 1
 * when hardware counters will be used, 0 for the software fallback. */
int pd_perf_init(void);
/* Why hardware counters are not used ("" when they are). */
const char *pd_perf_reason(void);
int pd_perf_hw_available(void);
/* Test hook: replaces the perf_event_open source (NULL restores it) and
 * re-probes. The source stays owned by the caller. */
void pd_perf_set_source(const pd_counter_source *src);
/* pthread_atfork handlers (the runtime registers them): the probe state's
 * lock, taken before fork and released in the parent and the child. */
void pd_perf_fork_prepare(void);
void pd_perf_fork_release(void);

/* Test hook: the wall clock task times are measured with (NULL restores the
 * monotonic clock), so tests can give tasks exact durations. */
void pd_perf_set_clock(double (*clock)(void));
/* The wall clock task times are measured with (the test clock when set). */
double pd_perf_wall(void);

/* One measurement of a task instance on the calling thread. */
typedef struct {
    void *hw;        /* source handle, NULL on the fallback path */
    pd_sw_counts sw0;
    double wall0;
} pd_perf_session;

typedef struct {
    double wall_s;
    pd_hw_counts hw;
    int hw_used;     /* hw holds counted values */
    pd_sw_counts sw; /* deltas */
} pd_perf_sample;

void pd_perf_begin(pd_perf_session *s);
void pd_perf_end(pd_perf_session *s, pd_perf_sample *out);
/* Adds b into a (a task instance measured in several begin/end pieces). */
void pd_perf_sample_add(pd_perf_sample *a, const pd_perf_sample *b);

/* The 8 features of one sample, as reported to the user. sampled_accesses is
 * the page sampler's scaled access estimate for the task (fallback path's
 * memory intensity). Unmeasured features are 0. */
void pd_perf_features(const pd_perf_sample *s, double sampled_accesses, double feat[PD_NFEATURES]);
/* The model's inputs: the hardware features, NaN (missing) where an event
 * was not counted, and all NaN on the fallback path (the software proxies
 * are not the quantities the model was trained on). */
void pd_perf_model_inputs(const pd_perf_sample *s, double in[PD_NFEATURES]);

#endif
