/* Workload harness: object/task bookkeeping, line counting, profiling driver. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sim/exec_model.h"
#include "sim/workload.h"

const pd_workload *const pd_workloads[] = {&pd_wl_spgemm, &pd_wl_bfs, &pd_wl_stencil,
                                           &pd_wl_dmrg, NULL};
const char *const pd_wl_inputs[] = {"tiny", "base", "in1", "in2", "in3", NULL};

const pd_workload *pd_workload_find(const char *name)
{
    for (int i = 0; name && pd_workloads[i]; i++)
        if (!strcmp(pd_workloads[i]->name, name))
            return pd_workloads[i];
    return NULL;
}

int pd_wl_input_index(const char *input)
{
    for (int i = 0; input && pd_wl_inputs[i]; i++)
        if (!strcmp(pd_wl_inputs[i], input))
            return i;
    return -1;
}

int pd_wl_tasks(pd_wl_ctx *ctx, const char *workload, const char *input, int ntasks)
{
    if (ctx->prof)
        return -1;
    ctx->prof = pd_sim_profile_new(workload, input, ntasks);
    ctx->task_cpu = calloc((size_t)ntasks, sizeof(double));
    return ctx->prof && ctx->task_cpu ? 0 : -1;
}

int pd_wl_object(pd_wl_ctx *ctx, const char *name, void *addr, size_t bytes, pd_pattern pat,
                 size_t elem_size)
{
    if (!ctx->prof)
        return -1;
    int id = pd_sim_profile_add_object(ctx->prof, name, bytes, pat, elem_size);
    if (id < 0)
        return -1;
    void **a = realloc(ctx->obj_addr, (size_t)(id + 1) * sizeof *a);
    if (!a)
        return -1;
    a[id] = addr;
    ctx->obj_addr = a;
    return id;
}

static double thread_cpu(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

double pd_wl_task_begin(pd_wl_ctx *ctx, int task)
{
    (void)ctx;
    (void)task;
    return thread_cpu();
}

void pd_wl_task_end(pd_wl_ctx *ctx, int task, double started)
{
    /* one thread runs a given task at a time, so no atomics are needed */
    ctx->task_cpu[task] += thread_cpu() - started;
}

void pd_wl_count_range(pd_wl_ctx *ctx, int task, int obj, size_t off, size_t len, int write)
{
    const pd_sim_object *o = &ctx->prof->objects[obj];
    uint64_t *cnt = write ? ctx->prof->tasks[task].writes : ctx->prof->tasks[task].reads;
    const size_t lines_per_page = PD_SIM_PAGE / PD_SIM_LINE;
    size_t first = off / PD_SIM_LINE, last = (off + len - 1) / PD_SIM_LINE;
    if (last >= o->npages * lines_per_page) /* clamp a range past the end (kernel bug guard) */
        last = o->npages * lines_per_page - 1;
    while (first <= last) {
        size_t page = first / lines_per_page;
        size_t page_last = (page + 1) * lines_per_page - 1;
        size_t end = page_last < last ? page_last : last;
        cnt[o->page_base + page] += end - first + 1;
        first = end + 1;
    }
}

/* This machine has one DRAM tier, so the model is calibrated on it: the
 * compute time is the measured time less the memory time the model charges
 * for the task's accesses on uncontended DRAM, floored at a tenth of the
 * measured time (caches here hide part of the counted traffic). */
void pd_wl_calibrate_compute(pd_sim_profile *p)
{
    pd_sim_machine dram;
    pd_sim_machine_preset("dram", &dram);
    double *split = calloc((size_t)p->nobjects * PD_SIM_NSLOTS, sizeof *split);
    for (int t = 0; t < p->ntasks; t++) {
        double mem = 0;
        if (split) {
            memset(split, 0, (size_t)p->nobjects * PD_SIM_NSLOTS * sizeof *split);
            for (int o = 0; o < p->nobjects; o++) {
                const pd_sim_object *ob = &p->objects[o];
                for (size_t g = ob->page_base; g < ob->page_base + ob->npages; g++) {
                    split[o * PD_SIM_NSLOTS + PD_SIM_FR] += (double)p->tasks[t].reads[g];
                    split[o * PD_SIM_NSLOTS + PD_SIM_FW] += (double)p->tasks[t].writes[g];
                }
            }
            mem = pd_sim_task_memtime(&dram, p, split);
        }
        double c = p->tasks[t].time_s - mem;
        p->tasks[t].compute_s = c > 0.1 * p->tasks[t].time_s ? c : 0.1 * p->tasks[t].time_s;
    }
    free(split);
}

pd_sim_profile *pd_wl_profile(const pd_workload *w, const char *input, int reps, char *err,
                              size_t errlen)
{
    if (pd_wl_input_index(input) < 0) {
        snprintf(err, errlen, "workload %s: unknown input '%s' (tiny, base, in1, in2, in3)",
                 w->name, input ? input : "");
        return NULL;
    }
    pd_wl_ctx ctx = {0};
    void *st = w->setup(&ctx, input, err, errlen);
    pd_sim_profile *p = ctx.prof;
    if (!st || !p) {
        if (st)
            w->teardown(st);
        if (!st && !err[0])
            snprintf(err, errlen, "workload %s: setup failed", w->name);
        pd_sim_profile_free(p);
        free(ctx.task_cpu);
        free(ctx.obj_addr);
        return NULL;
    }
    if (reps < 1)
        reps = 1;
    for (int t = 0; t < p->ntasks; t++)
        p->tasks[t].time_s = -1;
    for (int r = 0; r < reps; r++) {
        memset(ctx.task_cpu, 0, (size_t)p->ntasks * sizeof(double));
        w->run(st, &ctx);
        for (int t = 0; t < p->ntasks; t++)
            if (p->tasks[t].time_s < 0 || ctx.task_cpu[t] < p->tasks[t].time_s)
                p->tasks[t].time_s = ctx.task_cpu[t];
    }
    if (pd_sim_profile_alloc_counts(p) != 0) {
        snprintf(err, errlen, "workload %s: out of memory for counters", w->name);
        w->teardown(st);
        pd_sim_profile_free(p);
        free(ctx.task_cpu);
        free(ctx.obj_addr);
        return NULL;
    }
    ctx.counting = 1;
    w->run(st, &ctx);
    pd_wl_calibrate_compute(p);
    w->teardown(st);
    free(ctx.task_cpu);
    free(ctx.obj_addr);
    return p;
}

int pd_wl_verify(const pd_workload *w, const char *input, char *err, size_t errlen)
{
    pd_wl_ctx ctx = {0};
    void *st = w->setup(&ctx, input, err, errlen);
    int rc = -1;
    if (st) {
        w->run(st, &ctx);
        rc = w->verify(st, err, errlen);
        w->teardown(st);
    }
    pd_sim_profile_free(ctx.prof);
    free(ctx.task_cpu);
    free(ctx.obj_addr);
    return rc;
}
