/* Workload harness: object/task bookkeeping, line counting, profiling driver. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <math.h>

#include "common/util.h"
#include "paddiser.h"

#include "sim/exec_model.h"
#include "sim/workload.h"

const pd_workload *const pd_workloads[] = {&pd_wl_spgemm, &pd_wl_bfs, &pd_wl_stencil,
                                           &pd_wl_dmrg, NULL};
/* "large": a footprint of at least 1 GiB (issue #12 item 7; docs/sim.md,
 * Scale), not part of the default study. */
const char *const pd_wl_inputs[] = {"tiny", "base", "in1", "in2", "in3", "large", NULL};

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

void *pd_wl_alloc(size_t bytes)
{
    void *p = NULL;
    return posix_memalign(&p, PD_SIM_PAGE, bytes ? bytes : 1) == 0 ? p : NULL;
}

void *pd_wl_zalloc(size_t bytes)
{
    void *p = pd_wl_alloc(bytes);
    if (p)
        memset(p, 0, bytes);
    return p;
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
    if (ctx->runtime) {
        int *ids = realloc(ctx->rt_id, (size_t)(id + 1) * sizeof *ids);
        if (!ids)
            return -1;
        ctx->rt_id = ids;
        pd_access_hint h = {.pattern = pat, .elem_size = elem_size, .stride = 1};
        ids[id] = pd_object_register(name, addr, bytes, &h);
        if (ids[id] < 0)
            return -1;
    }
    return id;
}

int pd_wl_objects(pd_wl_ctx *ctx, const pd_wl_object_spec *objs, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        const pd_wl_object_spec *o = &objs[k];
        if ((*o->id = pd_wl_object(ctx, o->name, o->addr, o->bytes, o->pattern, o->elem_size)) < 0)
            return -1;
    }
    return 0;
}

static double thread_cpu(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Room for phase `ph`'s row of per-task CPU times. 0 or -1. */
static int phase_room(pd_wl_ctx *ctx, int ph)
{
    if (ph < ctx->phase_cap)
        return 0;
    int cap = ctx->phase_cap ? 2 * ctx->phase_cap : 16;
    while (cap <= ph)
        cap *= 2;
    size_t nt = (size_t)ctx->prof->ntasks;
    double *c = realloc(ctx->phase_cpu, (size_t)cap * nt * sizeof *c);
    if (!c)
        return -1;
    memset(c + (size_t)ctx->phase_cap * nt, 0, (size_t)(cap - ctx->phase_cap) * nt * sizeof *c);
    ctx->phase_cpu = c;
    ctx->phase_cap = cap;
    return 0;
}

/* The counting run's accesses since the last sync become a profile phase:
 * region totals now, less what earlier phases took (region_seen). */
static int record_phase_counts(pd_wl_ctx *ctx)
{
    pd_sim_profile *p = ctx->prof;
    size_t nr = p->nregions;
    if (!ctx->region_seen &&
        !(ctx->region_seen = calloc((size_t)p->ntasks * nr * 2, sizeof(uint64_t))))
        return -1;
    pd_sim_phase_task *row = pd_sim_profile_add_phase(p);
    if (!row)
        return -1;
    for (int t = 0; t < p->ntasks; t++) {
        uint64_t *seen_r = ctx->region_seen + (size_t)t * nr * 2, *seen_w = seen_r + nr;
        for (size_t g = 0; g < p->npages; g++) {
            row[t].reads[p->page_region[g]] += p->tasks[t].reads[g];
            row[t].writes[p->page_region[g]] += p->tasks[t].writes[g];
        }
        for (size_t r = 0; r < nr; r++) {
            row[t].reads[r] -= seen_r[r];
            row[t].writes[r] -= seen_w[r];
            seen_r[r] += row[t].reads[r];
            seen_w[r] += row[t].writes[r];
        }
    }
    return 0;
}

void pd_wl_sync(pd_wl_ctx *ctx)
{
    if (ctx->counting && record_phase_counts(ctx) != 0)
        ctx->oom = 1;
    ctx->phase++;
    ctx->phase_open = 0;
    if (phase_room(ctx, ctx->phase) != 0)
        ctx->oom = 1;
}

double pd_wl_task_begin(pd_wl_ctx *ctx, int task)
{
    if (ctx->runtime && pd_task_begin(task) != PD_OK)
        __atomic_add_fetch(&ctx->rt_errors, 1, __ATOMIC_RELAXED);
    __atomic_store_n(&ctx->phase_open, 1, __ATOMIC_RELAXED);
    return thread_cpu();
}

void pd_wl_task_end(pd_wl_ctx *ctx, int task, double started)
{
    /* one thread runs a given task at a time, so no atomics are needed */
    double dt = thread_cpu() - started;
    ctx->task_cpu[task] += dt;
    if (ctx->phase < ctx->phase_cap)
        ctx->phase_cpu[(size_t)ctx->phase * ctx->prof->ntasks + task] += dt;
    if (ctx->runtime && pd_task_end(task) != PD_OK)
        __atomic_add_fetch(&ctx->rt_errors, 1, __ATOMIC_RELAXED);
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
int pd_wl_calibrate_compute(pd_sim_profile *p)
{
    pd_sim_machine dram;
    pd_sim_machine_preset("dram", &dram);
    double *split = calloc((size_t)p->nobjects * PD_SIM_NSLOTS, sizeof *split);
    if (!split)
        return -1; /* compute = measured time would be wrong, silently */
    for (int t = 0; t < p->ntasks; t++) {
        memset(split, 0, (size_t)p->nobjects * PD_SIM_NSLOTS * sizeof *split);
        for (int o = 0; o < p->nobjects; o++) {
            const pd_sim_object *ob = &p->objects[o];
            for (size_t g = ob->page_base; g < ob->page_base + ob->npages; g++) {
                split[o * PD_SIM_NSLOTS + PD_SIM_FR] += (double)p->tasks[t].reads[g];
                split[o * PD_SIM_NSLOTS + PD_SIM_FW] += (double)p->tasks[t].writes[g];
            }
        }
        double mem = pd_sim_task_memtime(&dram, p, split);
        double c = p->tasks[t].time_s - mem;
        p->tasks[t].compute_s = c > 0.1 * p->tasks[t].time_s ? c : 0.1 * p->tasks[t].time_s;
    }
    free(split);
    return 0;
}

/* Frees what pd_wl_tasks and pd_wl_object allocated into ctx. */
static void wl_ctx_free(pd_wl_ctx *ctx)
{
    pd_sim_profile_free(ctx->prof);
    free(ctx->task_cpu);
    free(ctx->obj_addr);
    free(ctx->rt_id);
    free(ctx->phase_cpu);
    free(ctx->region_seen);
    memset(ctx, 0, sizeof *ctx);
}

/* One run with its phases: a fresh phase count, and what ran after the
 * last sync closed as a phase. 0, or -1 when a phase could not be recorded. */
static int run_phased(const pd_workload *w, void *st, pd_wl_ctx *ctx)
{
    ctx->phase = 0;
    ctx->phase_open = 0;
    ctx->oom = phase_room(ctx, 0) != 0;
    if (ctx->phase_cpu)
        memset(ctx->phase_cpu, 0, (size_t)ctx->phase_cap * ctx->prof->ntasks * sizeof(double));
    if (ctx->counting && ctx->region_seen)
        memset(ctx->region_seen, 0, (size_t)ctx->prof->ntasks * ctx->prof->nregions * 2 * sizeof(uint64_t));
    w->run(st, ctx);
    if (ctx->phase_open)
        pd_wl_sync(ctx);
    return ctx->oom ? -1 : 0;
}

pd_sim_profile *pd_wl_profile(const pd_workload *w, const char *input, int reps, char *err,
                              size_t errlen)
{
    if (pd_wl_input_index(input) < 0) {
        snprintf(err, errlen, "workload %s: unknown input '%s' (tiny, base, in1, in2, in3, large)",
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
        wl_ctx_free(&ctx);
        return NULL;
    }
    if (reps < 1)
        reps = 1;
    for (int t = 0; t < p->ntasks; t++)
        p->tasks[t].time_s = -1;
    double *phase_best = NULL; /* [nphases][ntasks]: min over runs */
    int nphases = -1;
    for (int r = 0; r < reps; r++) {
        memset(ctx.task_cpu, 0, (size_t)p->ntasks * sizeof(double));
        if (run_phased(w, st, &ctx) != 0 ||
            (nphases >= 0 && ctx.phase != nphases)) {
            snprintf(err, errlen, ctx.oom ? "workload %s: out of memory recording phases"
                                          : "workload %s: run %d had %d phases, run 1 had %d",
                     w->name, r + 1, ctx.phase, nphases);
            goto fail;
        }
        size_t cells = (size_t)ctx.phase * (size_t)p->ntasks;
        if (nphases < 0) {
            nphases = ctx.phase;
            if (!(phase_best = malloc((cells ? cells : 1) * sizeof *phase_best))) {
                snprintf(err, errlen, "workload %s: out of memory", w->name);
                goto fail;
            }
            memcpy(phase_best, ctx.phase_cpu, cells * sizeof *phase_best);
        }
        for (size_t k = 0; k < cells; k++)
            phase_best[k] = fmin(phase_best[k], ctx.phase_cpu[k]);
        for (int t = 0; t < p->ntasks; t++)
            if (p->tasks[t].time_s < 0 || ctx.task_cpu[t] < p->tasks[t].time_s)
                p->tasks[t].time_s = ctx.task_cpu[t];
    }
    if (pd_sim_profile_alloc_counts(p) != 0) {
        snprintf(err, errlen, "workload %s: out of memory for counters", w->name);
        goto fail;
    }
    ctx.counting = 1;
    if (run_phased(w, st, &ctx) != 0 || p->nphases != nphases) {
        snprintf(err, errlen, ctx.oom ? "workload %s: out of memory recording phases"
                                      : "workload %s: the counting run had %d phases, the timed ones %d",
                 w->name, p->nphases, nphases);
        goto fail;
    }
    for (int ph = 0; ph < nphases; ph++)
        for (int t = 0; t < p->ntasks; t++)
            PD_SIM_PHASE(p, ph, t)->time_s = phase_best[(size_t)ph * p->ntasks + t];
    free(phase_best);
    phase_best = NULL;
    w->teardown(st);
    if (pd_wl_calibrate_compute(p) != 0) {
        snprintf(err, errlen, "workload %s: out of memory calibrating compute times", w->name);
        wl_ctx_free(&ctx);
        return NULL;
    }
    ctx.prof = NULL; /* the caller's */
    wl_ctx_free(&ctx);
    return p;
fail:
    free(phase_best);
    w->teardown(st);
    wl_ctx_free(&ctx);
    return NULL;
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
    } else if (!err[0]) {
        snprintf(err, errlen, "workload %s: setup failed", w->name);
    }
    wl_ctx_free(&ctx);
    return rc;
}

void pd_wl_sampling_free(pd_wl_sampling *s)
{
    for (int o = 0; s->names && o < s->nobjects; o++)
        free(s->names[o]);
    free(s->names), free(s->exact), free(s->sampled), free(s->obj_tv);
    memset(s, 0, sizeof *s);
}

/* Total-variation distance between two non-negative vectors as
 * distributions: 0 same shares, 1 disjoint. */
static double tv_distance(const double *a, const double *b, size_t n, size_t stride)
{
    double sa = 0, sb = 0, d = 0;
    for (size_t i = 0; i < n; i++)
        sa += a[i * stride], sb += b[i * stride];
    if (sa <= 0 || sb <= 0)
        return sa <= 0 && sb <= 0 ? 0 : 1;
    for (size_t i = 0; i < n; i++)
        d += fabs(a[i * stride] / sa - b[i * stride] / sb);
    return d / 2;
}

/* One instance of w under libpaddiser (initialised by the caller): setup with
 * the objects registered, every task marked, one sync point. *state is the
 * kernel's state for rt_instance_end, even on failure; layout, when given,
 * must have this run's objects and pages. */
/* The instance itself and its sync point. */
static int rt_run(const pd_workload *w, void *state, pd_wl_ctx *ctx, char *err, size_t errlen)
{
    w->run(state, ctx);
    if (ctx->rt_errors) {
        snprintf(err, errlen, "%s: %d pd_task_begin/end calls failed", w->name, ctx->rt_errors);
        return -1;
    }
    int st = pd_sync_point();
    if (st != PD_OK) {
        snprintf(err, errlen, "pd_sync_point: %s", pd_strerror(st));
        return -1;
    }
    return 0;
}

static int rt_setup(const pd_workload *w, const char *input, const pd_sim_profile *layout, pd_wl_ctx *ctx,
                    void **state, char *err, size_t errlen)
{
    *ctx = (pd_wl_ctx){.runtime = 1};
    *state = w->setup(ctx, input, err, errlen);
    if (!*state) {
        if (!err[0])
            snprintf(err, errlen, "workload %s: setup failed", w->name);
        return -1;
    }
    if (layout && (ctx->prof->nobjects != layout->nobjects || ctx->prof->npages != layout->npages)) {
        snprintf(err, errlen, "%s/%s: the profile's objects differ from this run's", w->name, input);
        return -1;
    }
    return 0;
}

/* Where the runtime's backend holds the layout's pages now (1 = fast). */
static int rt_fast_pages(const pd_sim_profile *layout, const pd_wl_ctx *ctx, int *tiers, double *fast, char *err,
                         size_t errlen)
{
    /* Objects are page-aligned: the runtime's page k of an object is profile
     * page k (pd_object_page_tiers, with no task running). */
    for (int o = 0; o < layout->nobjects; o++) {
        const pd_sim_object *ob = &layout->objects[o];
        int n = pd_object_page_tiers(ctx->rt_id[o], tiers + ob->page_base, ob->npages);
        if (n < 0 || (size_t)n != ob->npages) {
            snprintf(err, errlen, "pd_object_page_tiers(%s): %s", ob->name,
                     n < 0 ? pd_strerror(n) : "page count differs from the profile's");
            return -1;
        }
    }
    for (size_t g = 0; g < layout->npages; g++)
        fast[g] = tiers[g] == PD_PAGE_FAST;
    return 0;
}

static int rt_instance(const pd_workload *w, const char *input, const pd_sim_profile *layout,
                       pd_wl_ctx *ctx, void **state, char *err, size_t errlen)
{
    if (rt_setup(w, input, layout, ctx, state, err, errlen) != 0)
        return -1;
    return rt_run(w, *state, ctx, err, errlen);
}

static void rt_instance_end(const pd_workload *w, void *state, pd_wl_ctx *ctx)
{
    pd_finalize(); /* before the objects are freed */
    if (state)
        w->teardown(state);
    wl_ctx_free(ctx);
}

/* The simulator's runs of the runtime are each scored on what that run
 * learns, as the baselines are: a profile store the user set
 * (PADDISER_PROFILE_STORE) would carry one case's curve and m into the
 * next, and take the simulator's tasks into the user's file. Off for the
 * call (store_off), then as it was (store_restore). */
static char *store_off(void)
{
    const char *v = getenv("PADDISER_PROFILE_STORE");
    char *saved = v ? pd_strdup(v) : NULL;
    if (v)
        unsetenv("PADDISER_PROFILE_STORE");
    return saved;
}

static void store_restore(char *saved)
{
    if (saved)
        setenv("PADDISER_PROFILE_STORE", saved, 1);
    free(saved);
}

int pd_wl_sampling_check(const pd_workload *w, const char *input, pd_wl_sampling *out, char *err,
                         size_t errlen)
{
    memset(out, 0, sizeof *out);
    pd_sim_profile *exact = pd_wl_profile(w, input, 1, err, errlen);
    if (!exact)
        return -1;
    pd_options opt;
    pd_options_default(&opt);
    opt.backend = PD_BACKEND_NONE;
    opt.sampling = 1;
    char *store = store_off();
    int st = pd_init(&opt);
    if (st != PD_OK) {
        snprintf(err, errlen, "pd_init: %s", pd_strerror(st));
        pd_sim_profile_free(exact);
        store_restore(store);
        return -1;
    }
    pd_wl_ctx ctx;
    void *state;
    int rc = -1;
    if (rt_instance(w, input, exact, &ctx, &state, err, errlen) != 0)
        goto done;
    int no = exact->nobjects, nt = exact->ntasks;
    out->nobjects = no, out->ntasks = nt;
    out->exact = calloc((size_t)no * nt, sizeof(double));
    out->sampled = calloc((size_t)no * nt, sizeof(double));
    out->obj_tv = calloc((size_t)no, sizeof(double));
    out->names = calloc((size_t)no, sizeof(char *));
    for (int o = 0; out->names && o < no; o++)
        out->names[o] = pd_strdup(exact->objects[o].name);
    if (!out->exact || !out->sampled || !out->obj_tv || !out->names) {
        snprintf(err, errlen, "out of memory");
        goto done;
    }
    for (int o = 0; o < no; o++)
        for (int t = 0; t < nt; t++) {
            const pd_sim_object *ob = &exact->objects[o];
            double e = 0;
            for (size_t g = ob->page_base; g < ob->page_base + ob->npages; g++)
                e += (double)exact->tasks[t].reads[g] + (double)exact->tasks[t].writes[g];
            out->exact[o * nt + t] = e;
            if ((st = pd_object_accesses(ctx.rt_id[o], t, &out->sampled[o * nt + t])) != PD_OK) {
                snprintf(err, errlen, "pd_object_accesses(%s, task %d): %s", ob->name, t, pd_strerror(st));
                goto done;
            }
        }
    for (int o = 0; o < no; o++)
        out->obj_tv[o] = tv_distance(out->exact + (size_t)o * nt, out->sampled + (size_t)o * nt, (size_t)nt, 1);
    out->tv = tv_distance(out->exact, out->sampled, (size_t)no * nt, 1);
    pd_profile_info info;
    if (pd_profile_info_get(&info) == PD_OK) {
        out->samples = info.samples;
        out->faults = info.sampled_faults;
    }
    rc = 0;
done:
    rt_instance_end(w, state, &ctx);
    store_restore(store);
    if (rc != 0)
        pd_wl_sampling_free(out);
    pd_sim_profile_free(exact);
    return rc;
}

int pd_wl_runtime_starts_slow(void)
{
    const char *start = getenv("PADDISER_START_TIER");
    return start && !strcmp(start, "slow");
}

int pd_wl_runtime_placement(const pd_workload *w, const char *input, size_t capacity,
                            pd_planner_kind planner, const pd_sim_profile *layout, double *fast,
                            double *predicted, pd_wl_runtime_decision *decision, char *err, size_t errlen)
{
    if (decision)
        *decision = (pd_wl_runtime_decision){0};
    for (size_t g = 0; g < layout->npages; g++)
        fast[g] = 0;
    *predicted = 0;
    if (layout->page_bytes != PD_SIM_PAGE) {
        snprintf(err, errlen, "%s/%s: the runtime places 4 KiB pages; this profile's unit is %zu bytes", w->name,
                 input, layout->page_bytes);
        return -1;
    }
    if (capacity < PD_SIM_PAGE)
        return 0; /* the runtime reads 0 as "all": nothing to place */
    /* The sim backend serves every access from DRAM: the instance the
     * runtime measures is the profile's all-DRAM one, not one run at first
     * touch's emulated placement on a slow tier (taken so, its DRAM-only
     * time, and every gain it weighs against the moves, came out too
     * small). For the study and `sim runtime` alike; a value the user set
     * is kept. */
    int set_dram_times = !getenv("PADDISER_TIMES_DRAM_ONLY");
    if (set_dram_times)
        setenv("PADDISER_TIMES_DRAM_ONLY", "1", 1);
    char *store = store_off();
    pd_options opt;
    pd_options_default(&opt);
    opt.backend = PD_BACKEND_SIM;
    opt.planner = planner;
    opt.fast_capacity = capacity;
    opt.sampling = 1;
    int st = pd_init(&opt);
    if (st != PD_OK) {
        snprintf(err, errlen, "pd_init: %s", pd_strerror(st));
        if (set_dram_times)
            unsetenv("PADDISER_TIMES_DRAM_ONLY");
        store_restore(store);
        return -1;
    }
    pd_wl_ctx ctx = {.runtime = 1};
    void *state = NULL;
    int rc = -1;
    int *tiers = malloc(layout->npages * sizeof *tiers);
    if (!tiers) {
        snprintf(err, errlen, "out of memory");
        goto done;
    }
    if (rt_setup(w, input, layout, &ctx, &state, err, errlen) != 0 ||
        rt_fast_pages(layout, &ctx, tiers, fast, err, errlen) != 0)
        goto done;
    /* The study charges every policy the pages that differ from its first
     * touch (the first capacity pages in layout order); the runtime starts
     * from the sim backend's first touch, which must be the same pages. */
    size_t cap_pages = capacity / PD_SIM_PAGE;
    int first_touch = !pd_wl_runtime_starts_slow();
    for (size_t g = 0; first_touch && g < layout->npages; g++)
        if ((fast[g] > 0.5) != (g < cap_pages)) {
            snprintf(err, errlen, "%s/%s: the runtime's first touch differs from the study's at page %zu", w->name,
                     input, g);
            goto done;
        }
    if (rt_run(w, state, &ctx, err, errlen) != 0)
        goto done;
    if (pd_plan_query(NULL, 0, predicted) < 0)
        *predicted = 0;
    pd_profile_info info;
    if (decision && pd_profile_info_get(&info) == PD_OK)
        *decision = (pd_wl_runtime_decision){.decided = info.plan_decided,
                                             .kept = info.plan_kept,
                                             .hot_first = info.plan_hot_first,
                                             .current_s = info.plan_current_s,
                                             .planned_s = info.plan_planned_s,
                                             .cost_s = info.plan_cost_s,
                                             .pages_moved = info.pages_moved};
    if (rt_fast_pages(layout, &ctx, tiers, fast, err, errlen) != 0)
        goto done;
    rc = 0;
done:
    rt_instance_end(w, state, &ctx);
    free(tiers);
    if (set_dram_times)
        unsetenv("PADDISER_TIMES_DRAM_ONLY");
    store_restore(store);
    return rc;
}
