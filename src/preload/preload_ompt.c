/* LLVM's libomp (clang -fopenmp; Debian's libomp-dev) finds this OMPT tool
 * through the exported ompt_start_tool. Its callbacks map onto the region
 * layer (preload_regions.h):
 *   parallel_begin (encountering thread)  the region, by the construct's
 *       return address codeptr_ra (OMPT does not pass the outlined
 *       function; for GCC-built code calling libomp's GOMP_* entry points,
 *       the outlined function the hook saw: pdp_gomp_fn), opens; its
 *       instance rides in parallel_data;
 *   implicit_task begin                   the thread's task begins;
 *   sync_region begin (any barrier kind)  the task pauses: for the region's
 *       implicit barrier this is its end;
 *   sync_region end                       it resumes, except at the end of
 *       the region's own barrier: libomp reports that one with no
 *       parallel_data, and for worker threads only when they are woken for
 *       the next region, long after the join;
 *   implicit_task end                     nothing left to time;
 *   parallel_end (encountering thread)    the region closes, sync point.
 * The task and parallel flags filter out the initial task and teams. */
#include <stddef.h>
#include <stdint.h>

#include "preload/ompt_abi.h"
#include "preload/preload.h"
#include "preload/preload_regions.h"

/* parallel_data of a tracked region: instance << 32 | retrial << 31 |
 * region + 1; 0 untracked. */
#define RETRIAL_BIT 0x80000000u
static uint64_t pack(const pdp_team *t)
{
    return (uint64_t)t->inst << 32 | (t->retrial ? RETRIAL_BIT : 0u) | (uint32_t)(t->region + 1);
}

static int unpack(const pdp_ompt_data_t *d, pdp_team *t)
{
    if (!d || !d->value)
        return 0;
    t->region = (int)((uint32_t)d->value & ~RETRIAL_BIT) - 1;
    t->retrial = ((uint32_t)d->value & RETRIAL_BIT) != 0;
    t->inst = (unsigned)(d->value >> 32);
    return 1;
}

static void on_parallel_begin(pdp_ompt_data_t *encountering_task_data, const pdp_ompt_frame_t *encountering_task_frame,
                              pdp_ompt_data_t *parallel_data, unsigned int requested_parallelism, int flags,
                              const void *codeptr_ra)
{
    pdp_team team;
    if (!parallel_data)
        return;
    parallel_data->value = 0;
    const void *code = pdp_gomp_fn ? pdp_gomp_fn : codeptr_ra;
    pdp_gomp_fn = NULL;
    if (!(flags & PDP_OMPT_PARALLEL_LEAGUE) && pdp_team_open(code, &team))
        parallel_data->value = pack(&team);
}

static void on_parallel_end(pdp_ompt_data_t *parallel_data, pdp_ompt_data_t *encountering_task_data, int flags,
                            const void *codeptr_ra)
{
    pdp_team team;
    if (!unpack(parallel_data, &team))
        return;
    parallel_data->value = 0;
    pdp_team_close(&team);
}

static void on_implicit_task(int endpoint, pdp_ompt_data_t *parallel_data, pdp_ompt_data_t *task_data,
                             unsigned int actual_parallelism, unsigned int index, int flags)
{
    if (flags & PDP_OMPT_TASK_INITIAL)
        return;
    if (endpoint == PDP_OMPT_SCOPE_BEGIN) {
        pdp_team team;
        pdp_member_begin(unpack(parallel_data, &team) ? &team : NULL, index);
    } else if (endpoint == PDP_OMPT_SCOPE_END) {
        pdp_member_end();
    }
}

static void on_sync_region(int kind, int endpoint, pdp_ompt_data_t *parallel_data, pdp_ompt_data_t *task_data,
                           const void *codeptr_ra)
{
    switch (kind) {
    case PDP_OMPT_SYNC_BARRIER:
    case PDP_OMPT_SYNC_BARRIER_IMPLICIT:
    case PDP_OMPT_SYNC_BARRIER_EXPLICIT:
    case PDP_OMPT_SYNC_BARRIER_IMPLEMENTATION:
    case PDP_OMPT_SYNC_BARRIER_IMPLICIT_WORKSHARE:
    case PDP_OMPT_SYNC_BARRIER_IMPLICIT_PARALLEL:
        break;
    default:
        return; /* taskwait, taskgroup, reduction: the thread keeps working */
    }
    /* the region's own barrier, or one that may be (the deprecated kind) */
    int join = kind == PDP_OMPT_SYNC_BARRIER_IMPLICIT_PARALLEL || kind == PDP_OMPT_SYNC_BARRIER_IMPLICIT;
    if (endpoint == PDP_OMPT_SCOPE_BEGIN)
        join ? pdp_join_barrier_enter() : pdp_barrier_enter();
    else if (endpoint == PDP_OMPT_SCOPE_END && parallel_data && kind != PDP_OMPT_SYNC_BARRIER_IMPLICIT_PARALLEL)
        join ? pdp_join_barrier_leave() : pdp_barrier_leave();
}

static int set_callback(pdp_ompt_set_callback_t set, int event, pdp_ompt_callback_t cb)
{
    return set(event, cb) >= PDP_OMPT_SET_SOMETIMES_PAIRED;
}

static int tool_initialize(pdp_ompt_function_lookup_t lookup, int initial_device_num, pdp_ompt_data_t *tool_data)
{
    pdp_ompt_set_callback_t set = (pdp_ompt_set_callback_t)lookup("ompt_set_callback");
    if (!set)
        return 0;
    int ok = set_callback(set, PDP_OMPT_CALLBACK_PARALLEL_BEGIN, (pdp_ompt_callback_t)on_parallel_begin) &&
             set_callback(set, PDP_OMPT_CALLBACK_PARALLEL_END, (pdp_ompt_callback_t)on_parallel_end) &&
             set_callback(set, PDP_OMPT_CALLBACK_IMPLICIT_TASK, (pdp_ompt_callback_t)on_implicit_task);
    if (!ok) {
        pdp_log(0, "the OpenMP runtime's OMPT lacks parallel or implicit-task callbacks: regions are not tasks");
        return 0;
    }
    /* The whole barrier, or at least its waiting part. */
    if (!set_callback(set, PDP_OMPT_CALLBACK_SYNC_REGION, (pdp_ompt_callback_t)on_sync_region) &&
        !set_callback(set, PDP_OMPT_CALLBACK_SYNC_REGION_WAIT, (pdp_ompt_callback_t)on_sync_region))
        pdp_log(0, "the OpenMP runtime's OMPT reports no barriers: task times include barrier waits");
    pdp_log(1, "OMPT tool active: parallel regions of the LLVM OpenMP runtime are tasks");
    return 1;
}

static void tool_finalize(pdp_ompt_data_t *tool_data) {}

PDP_HOOK pdp_ompt_start_tool_result_t *ompt_start_tool(unsigned int omp_version, const char *runtime_version)
{
    static pdp_ompt_start_tool_result_t result = {tool_initialize, tool_finalize, {0}};
    if (!pdp_active())
        return NULL; /* no runtime: no tool, no callbacks */
    pdp_log(1, "OMPT: %s (OpenMP %u)", runtime_version ? runtime_version : "?", omp_version);
    return &result;
}
