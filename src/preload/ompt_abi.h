/* The few OMPT (OpenMP 5.0 tools interface) types and constants the
 * preload's tool uses, declared from the specification (section 4 of
 * OpenMP 5.0), with a pdp_ prefix: omp-tools.h comes with clang or
 * libomp-dev only, outside gcc's include path. tests/run_omp_clang.sh
 * checks every value and signature here against the installed
 * omp-tools.h. */
#ifndef PD_PRELOAD_OMPT_ABI_H
#define PD_PRELOAD_OMPT_ABI_H

#include <stdint.h>

typedef union {
    uint64_t value;
    void *ptr;
} pdp_ompt_data_t;

typedef struct pdp_ompt_frame_t pdp_ompt_frame_t; /* only passed through */

typedef void (*pdp_ompt_interface_fn_t)(void);
typedef pdp_ompt_interface_fn_t (*pdp_ompt_function_lookup_t)(const char *interface_function_name);
typedef void (*pdp_ompt_callback_t)(void);

typedef int (*pdp_ompt_initialize_t)(pdp_ompt_function_lookup_t lookup, int initial_device_num,
                                     pdp_ompt_data_t *tool_data);
typedef void (*pdp_ompt_finalize_t)(pdp_ompt_data_t *tool_data);

typedef struct {
    pdp_ompt_initialize_t initialize;
    pdp_ompt_finalize_t finalize;
    pdp_ompt_data_t tool_data;
} pdp_ompt_start_tool_result_t;

/* ompt_callbacks_t */
enum {
    PDP_OMPT_CALLBACK_PARALLEL_BEGIN = 3,
    PDP_OMPT_CALLBACK_PARALLEL_END = 4,
    PDP_OMPT_CALLBACK_IMPLICIT_TASK = 7,
    PDP_OMPT_CALLBACK_SYNC_REGION_WAIT = 16,
    PDP_OMPT_CALLBACK_SYNC_REGION = 23,
};

/* ompt_set_result_t */
enum {
    PDP_OMPT_SET_ERROR = 0,
    PDP_OMPT_SET_NEVER = 1,
    PDP_OMPT_SET_IMPOSSIBLE = 2,
    PDP_OMPT_SET_SOMETIMES = 3,
    PDP_OMPT_SET_SOMETIMES_PAIRED = 4,
    PDP_OMPT_SET_ALWAYS = 5,
};

typedef int (*pdp_ompt_set_callback_t)(int event, pdp_ompt_callback_t callback);

/* ompt_scope_endpoint_t */
enum { PDP_OMPT_SCOPE_BEGIN = 1, PDP_OMPT_SCOPE_END = 2 };

/* ompt_sync_region_t (5.0 names; 8 and 9 are 5.1's split of the implicit
 * barrier into worksharing and parallel ones) */
enum {
    PDP_OMPT_SYNC_BARRIER = 1,
    PDP_OMPT_SYNC_BARRIER_IMPLICIT = 2,
    PDP_OMPT_SYNC_BARRIER_EXPLICIT = 3,
    PDP_OMPT_SYNC_BARRIER_IMPLEMENTATION = 4,
    PDP_OMPT_SYNC_TASKWAIT = 5,
    PDP_OMPT_SYNC_TASKGROUP = 6,
    PDP_OMPT_SYNC_REDUCTION = 7,
    PDP_OMPT_SYNC_BARRIER_IMPLICIT_WORKSHARE = 8,
    PDP_OMPT_SYNC_BARRIER_IMPLICIT_PARALLEL = 9,
};

/* ompt_task_flag_t, ompt_parallel_flag_t (the bits used) */
enum { PDP_OMPT_TASK_INITIAL = 0x1, PDP_OMPT_TASK_IMPLICIT = 0x2 };
#define PDP_OMPT_PARALLEL_LEAGUE 0x40000000

/* Callback signatures. */
typedef void (*pdp_ompt_callback_parallel_begin_t)(pdp_ompt_data_t *encountering_task_data,
                                                   const pdp_ompt_frame_t *encountering_task_frame,
                                                   pdp_ompt_data_t *parallel_data, unsigned int requested_parallelism,
                                                   int flags, const void *codeptr_ra);
typedef void (*pdp_ompt_callback_parallel_end_t)(pdp_ompt_data_t *parallel_data,
                                                 pdp_ompt_data_t *encountering_task_data, int flags,
                                                 const void *codeptr_ra);
typedef void (*pdp_ompt_callback_implicit_task_t)(int endpoint, pdp_ompt_data_t *parallel_data,
                                                  pdp_ompt_data_t *task_data, unsigned int actual_parallelism,
                                                  unsigned int index, int flags);
typedef void (*pdp_ompt_callback_sync_region_t)(int kind, int endpoint, pdp_ompt_data_t *parallel_data,
                                                pdp_ompt_data_t *task_data, const void *codeptr_ra);

#endif
