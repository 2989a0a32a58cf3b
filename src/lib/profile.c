/* Sync point, first half: the instance that just ended becomes a profile
 * per task (time, features, sampled accesses per object, sampled regions
 * hottest first), the base of tasks and objects seen for the first time, and
 * an alpha refinement for objects whose alpha is learnt online. Then the
 * next instance is planned (placement.c). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "lib/page_sampler.h"
#include "lib/placement.h"
#include "lib/runtime_internal.h"

typedef struct {
    size_t sample;
    int slot;
    uint64_t count;
    double wait_s; /* summed time to first touch */
} raw_count;

typedef struct {
    raw_count *v;
    size_t n, cap;
    int oom;
} raw_list;

/* The last sampled instance's counts and its sample table's generation:
 * in an instance the sampler skipped, the tasks' fast-tier shares are those
 * counts weighed against where the pages are now (the plan may have moved
 * them since). */
static raw_list last_counts;
static unsigned last_generation;

void rt_profile_reset(void)
{
    free(last_counts.v);
    memset(&last_counts, 0, sizeof last_counts);
}

static void collect_cb(void *ctx, size_t sample, int slot, uint64_t count, double wait_s)
{
    raw_list *l = ctx;
    if (slot < 0 || l->oom)
        return;
    if (l->n == l->cap) {
        size_t ncap = l->cap ? l->cap * 2 : 256;
        raw_count *p = realloc(l->v, ncap * sizeof *p);
        if (!p) {
            l->oom = 1;
            return;
        }
        l->v = p;
        l->cap = ncap;
    }
    l->v[l->n++] = (raw_count){sample, slot, count, wait_s};
}

static int cmp_hot_desc(const void *a, const void *b)
{
    double x = ((const rt_hot *)a)->accesses, y = ((const rt_hot *)b)->accesses;
    return x < y ? 1 : x > y ? -1 : 0;
}

void rt_hot_sort_hottest(rt_hot *h, size_t n)
{
    if (n)
        qsort(h, n, sizeof *h, cmp_hot_desc);
}

int rt_hot_push(rt_task *t, size_t *cap, rt_hot h)
{
    if (t->nhot == *cap) {
        size_t ncap = *cap ? *cap * 2 : 64;
        rt_hot *p = realloc(t->hot, ncap * sizeof *p);
        if (!p)
            return -1;
        t->hot = p;
        *cap = ncap;
    }
    t->hot[t->nhot++] = h;
    return 0;
}

/* Touches per counted interval of a sample. A fault says only that the page
 * was touched since it was armed; for objects accessed at random, the time
 * from arming to that first touch is about 1 / (the task's access rate), so
 * interval / wait estimates the touches in an interval (at least 1, at most
 * PD_TOUCH_CAP). Streamed objects are touched in bursts at any time of an
 * interval, where the wait says nothing: 1. A PMU sample is one load: 1. */
#define PD_TOUCH_CAP 1024.0

/* PADDISER_SAMPLE_RATE=off: count touched intervals only. */
static int rate_weighting(void)
{
    return !rt_env_off("PADDISER_SAMPLE_RATE");
}
static double touches_per_interval(const rt_object *o, const raw_count *c, double interval_s)
{
    pd_pattern p = o->alpha.hint.pattern;
    if (rt.pmu_period || (p != PD_PATTERN_RANDOM && p != PD_PATTERN_UNKNOWN) || !(interval_s > 0) ||
        c->count == 0 || !rate_weighting())
        return 1.0;
    double wait = c->wait_s / (double)c->count;
    if (!(wait > 0))
        return PD_TOUCH_CAP;
    double m = interval_s / wait;
    return m < 1 ? 1 : m > PD_TOUCH_CAP ? PD_TOUCH_CAP : m;
}

/* The accesses one count of a sample stands for. A fault: a touched
 * interval of its page, which stands for every page of its region. A PMU
 * sample: one sampled load in its region, which stands for a period of loads. */
static double count_scale(const pd_sample_info *info)
{
    if (rt.pmu_period)
        return (double)rt.pmu_period;
    return (double)((info->region_len + RT_PAGE - 1) / RT_PAGE);
}

/* The task's mean interval: its run time, less what the sampler's faults
 * cost it (sampler_s), over the most intervals any of its pages was touched
 * in (0 when nothing was counted). The waits it is divided by are net of
 * the thread's sampled faults (page_sampler.h, pd_busy_ring), so the
 * interval is too: both in the task's own progress. */
static double task_interval_s(const rt_task *t, const raw_list *l, int slot, double sampler_s)
{
    uint64_t intervals = 0;
    for (size_t i = 0; i < l->n; i++)
        if (l->v[i].slot == slot && l->v[i].count > intervals)
            intervals = l->v[i].count;
    return intervals ? (t->cur.wall_s - sampler_s) / (double)intervals : 0;
}

/* The sampled object a count belongs to, or NULL (gone, or never sampled). */
static const rt_object *count_object(const raw_count *c, pd_sample_info *info)
{
    if (pd_sampler_sample(c->sample, info) != 0 || info->object < 0 || (size_t)info->object >= rt.nobjects)
        return NULL;
    const rt_object *o = &rt.objects[info->object];
    return o->used && o->sampled_size ? o : NULL;
}

/* Fast-tier share of the task's sampled accesses under the current
 * placement, each count weighed as the heat weighs it (touches per
 * interval, pages of its region): the share the task's curve is read at,
 * so that an instance's time is brought to DRAM-only at the share its
 * predictions use. Counts weighed by pages alone made the phases
 * example's first instance 0.52 - 0.58 fast where its heat said 0.07 - 0.11
 * (its randomly read vector, on the slow tier, is touched about a
 * thousand times an interval), and predicted the next instance 1.4x
 * slower than the same placement ran it. interval_s: the task's mean
 * interval in the instance the counts are from (task_interval_s). */
static double measured_share(const raw_list *l, int slot, double interval_s)
{
    /* One memory: everything is served by DRAM. PADDISER_TIMES_DRAM_ONLY:
     * the tiers are emulated (the sim backend on one memory) and the
     * caller wants plans for a real slow tier (sim study): the measured
     * times are DRAM-only times, whatever the emulated placement. */
    if (!rt.backend || rt_env_on("PADDISER_TIMES_DRAM_ONLY"))
        return 1.0;
    double fast = 0, all = 0;
    for (size_t i = 0; i < l->n; i++) {
        if (l->v[i].slot != slot)
            continue;
        pd_sample_info info;
        int tier;
        const rt_object *o = count_object(&l->v[i], &info);
        if (!o || rt.backend->query(rt.backend, &info.page, 1, &tier) != 0)
            continue;
        double a = (double)l->v[i].count * touches_per_interval(o, &l->v[i], interval_s) * count_scale(&info);
        all += a;
        if (tier == PD_TIER_FAST)
            fast += a;
    }
    if (all > 0)
        return fast / all;
    /* Placed pages of objects unregistered since the last plan still count
     * in fast_bytes until the next one moves them out: a share is at most 1. */
    size_t total = rt_objects_total_bytes();
    return total ? fmin(1.0, (double)rt.fast_bytes / (double)total) : 0.0;
}

/* What the page sampler's faults cost the task in this instance: its
 * faults (its counts over their mean weight) at the calibrated cost of one
 * (protect, trap, handler, restore), at most half its time (the calibration
 * is one idle measurement). The faults are in the task's time, which the
 * predictions want without them: a sampled first instance of the phases
 * example took 1.4x the next, unsampled one. A PMU sample costs the task no
 * fault: 0. */
static double sampler_cost_s(const rt_task *t, const raw_list *l, int slot, double weight, double fault_cost)
{
    if (rt.pmu_period || !(weight > 0))
        return 0;
    double counts = 0;
    for (size_t i = 0; i < l->n; i++)
        if (l->v[i].slot == slot)
            counts += (double)l->v[i].count;
    double cost = counts / weight * fault_cost;
    return isfinite(cost) && cost > 0 ? fmin(cost, 0.5 * t->cur.wall_s) : 0;
}

/* The task's per-object accesses and heat from this instance's counts. */
static int task_counts(rt_task *t, int slot, const raw_list *l, uint64_t ran, double weight, double sampler_s)
{
    int rc = PD_OK;
    rt.layout_gen++; /* new heat */
    memset(t->last_acc, 0, t->nacc * sizeof *t->last_acc);
    /* The heat so far, to smooth this instance's with (heat.c). */
    rt_hot *old = t->hot;
    size_t nold = t->nhot;
    t->nhot = 0;
    size_t cap = 0;
    t->hot = NULL;
    /* kept: the instance's share is read with it (measured_share) */
    double interval_s = t->counts_interval_s = task_interval_s(t, l, slot, sampler_s);
    for (size_t i = 0; i < l->n; i++) {
        if (l->v[i].slot != slot)
            continue;
        pd_sample_info info;
        const rt_object *o = count_object(&l->v[i], &info);
        if (!o)
            continue;
        double touches = (double)l->v[i].count * touches_per_interval(o, &l->v[i], interval_s);
        double acc = touches * count_scale(&info);
        t->last_acc[info.object] += acc;
        rt_hot h = {info.object,
                    (double)((uintptr_t)info.region - (uintptr_t)o->sampled_addr) / (double)o->sampled_size,
                    (double)info.region_len / (double)o->sampled_size, l->v[i].count, touches, acc};
        if (rt_hot_push(t, &cap, h) != 0) {
            rc = PD_ENOMEM;
            break;
        }
    }
    if (rc == PD_OK) {
        if (rt_heat_merge(t, &cap, old, nold, ran, weight) != 0)
            rc = PD_ENOMEM;
    } else {
        free(old);
    }
    if (rc != PD_OK)
        return rc;
    rt_hot_sort_hottest(t->hot, t->nhot);
    return PD_OK;
}

/* The next instance must be sampled whatever the share: some task or
 * object has no profile yet. */
int rt_profile_missing(void)
{
    for (size_t o = 0; o < rt.nobjects; o++)
        if (rt.objects[o].used && !rt.objects[o].base_size)
            return 1;
    for (int s = 0; s < rt.ntasks; s++)
        if (!rt.tasks[s]->have_base)
            return 1;
    return 0;
}

/* A sampled instance: how much longer its makespan was than the plan
 * predicted for it, which rests on the unsampled instances where there are
 * any (what the sampler cost the program in wall time, with the
 * prediction's noise). NaN unless every task that ran had a plan. Before
 * the tasks' ran flags are cleared. */
static double sampled_excess_s(void)
{
    double measured = 0, predicted = 0;
    int n = 0;
    for (int s = 0; s < rt.ntasks; s++) {
        const rt_task *t = rt.tasks[s];
        if (!t->ran)
            continue;
        if (!t->planned || !(t->plan_time > 0) || !isfinite(t->plan_time) || !(t->last_time > 0))
            return NAN;
        measured = fmax(measured, t->last_time);
        predicted = fmax(predicted, t->plan_time);
        n++;
    }
    return n ? measured - predicted : NAN;
}

int rt_sync_locked(int plan)
{
    if (!rt.instance_open)
        return PD_ESTATE; /* no task ran since the last sync point */
    /* Without sampling at all the profiles come from the (empty) counts as
     * always; an instance the sampler skipped leaves them as they were. */
    int observed = !rt.sampling || rt.inst_sampled;
    raw_list l = {0};
    double weight = 1; /* what a fault counts, on average (thinned spells) */
    if (rt.sampling && rt.inst_sampled) {
        pd_sampler_foreach_wait(collect_cb, &l);
        weight = pd_sampler_count_weight();
    }
    if (l.oom) {
        free(l.v);
        return PD_ENOMEM;
    }
    /* Before the measured shares: objects registered since this instance
     * began ran where first touch put them. */
    int rc = rt_migrate_adopt();
    uint64_t ran = rt_input_signature(1); /* the input this instance ran */
    double fault_cost = 0; /* seconds a sampled fault costs (calibrated once) */
    if (observed && rt.sampling) {
        pd_sampler_stats st;
        pd_sampler_get_stats(&st);
        fault_cost = st.fault_cost_s;
    }
    for (int slot = 0; slot < rt.ntasks && rc == PD_OK; slot++) {
        rt_task *t = rt.tasks[slot];
        if (!t->ran)
            continue;
        if (rt_task_grow_arrays(t) != PD_OK) {
            rc = PD_ENOMEM;
            break;
        }
        /* a task or object left without a profile makes the next
         * instance sampled (rt_profile_missing) */
        double sampler_s = observed && rt.sampling ? sampler_cost_s(t, &l, slot, weight, fault_cost) : 0;
        if (observed && (rc = task_counts(t, slot, &l, ran, weight, sampler_s)) != PD_OK)
            break;

        double total_acc = 0, touched = 0;
        for (size_t o = 0; o < t->nacc; o++)
            total_acc += t->last_acc[o];
        for (size_t i = 0; i < t->nhot; i++)
            touched += t->hot[i].len_frac * (double)rt.objects[t->hot[i].object].sampled_size;
        t->last_time = t->cur.wall_s;
        t->last_sampler_s = sampler_s;
        pd_perf_features(&t->cur, total_acc, t->last_feat);
        t->last_hw = t->cur.hw_used;
        /* An instance the sampler skipped ran at the share its plan (or the
         * placement kept) gave it, as the prediction for it assumed; with
         * no plan yet, the last sampled counts against where the pages are
         * now, or else the share last measured. */
        if (observed) /* task_counts set counts_interval_s */
            t->last_r0 = measured_share(&l, slot, t->counts_interval_s);
        else if (t->planned)
            t->last_r0 = t->plan_share;
        else if (last_counts.n && last_generation == pd_sampler_table_generation())
            t->last_r0 = measured_share(&last_counts, slot, t->counts_interval_s);
        if (t->planned) {
            t->ran_share = t->plan_share;
            t->ran_bytes = t->plan_bytes;
        } else {
            t->ran_share = t->last_r0;
            /* the share r0 of the task's touched regions, about */
            t->ran_bytes = (size_t)(t->last_r0 * touched) / RT_PAGE * RT_PAGE;
        }
        if (!t->have_base && observed && !t->thin_blind) {
            t->have_base = 1;
            t->base_time = t->last_time;
            t->base_sampler_s = t->last_sampler_s;
            t->base_r0 = t->last_r0;
            memcpy(t->base_feat, t->last_feat, sizeof t->base_feat);
            pd_perf_model_inputs(&t->cur, t->base_model_in);
            memcpy(t->base_acc, t->last_acc, t->nacc * sizeof *t->base_acc);
        }
        t->instances++;
    }
    /* Objects seen for the first time: this instance is their base. Objects
     * with input-dependent alpha: refine from estimate vs measurement. */
    for (size_t o = 0; o < rt.nobjects && rc == PD_OK; o++) {
        rt_object *ob = &rt.objects[o];
        if (!ob->used || !ob->sampled_size)
            continue;
        if (!observed)
            continue;
        double est = 0, meas = 0;
        for (int s = 0; s < rt.ntasks; s++) {
            rt_task *t = rt.tasks[s];
            if (!t->ran || o >= t->nacc)
                continue;
            if (!ob->base_size)
                t->base_acc[o] = t->last_acc[o];
            est += t->est_acc[o];
            meas += t->last_acc[o];
        }
        if (!ob->base_size)
            ob->base_size = ob->sampled_size;
        else if (pd_alpha_is_online(&ob->alpha.hint) && est > 0 && meas > 0)
            pd_alpha_refine(&ob->alpha, est, meas);
    }
    /* page protection's wall cost, learned where the plan predicted the
     * instance (PADDISER_SAMPLE_WALL_FACTOR=off: the measured cost alone) */
    double excess = rt.sampling && rt.inst_sampled && !rt.pmu_period && rc == PD_OK &&
                            !rt_env_off("PADDISER_SAMPLE_WALL_FACTOR")
                        ? sampled_excess_s()
                        : NAN;
    for (int s = 0; s < rt.ntasks; s++) {
        if (rt.tasks[s]->ran && rc == PD_OK)
            rt_record_instance(rt.tasks[s]);
        rt.tasks[s]->ran = 0;
    }
    if (rt.sampling && rt.inst_sampled) {
        free(last_counts.v);
        last_counts = l;
        last_generation = pd_sampler_table_generation();
    } else {
        free(l.v);
    }
    if (rt.sampling)
        pd_sampler_reset_counts();
    rt_input_run_record();
    /* only an instance that continued its input: a new input's first is
     * predicted from other inputs, with errors of 20% and more */
    if (rt.input_run >= 2 && isfinite(excess))
        pd_sampler_note_wall_excess(excess);
    rt.instance_open = 0;
    rt.instances++;
    if (rc != PD_OK || !plan)
        return rc;
    return rt_replan_locked(1);
}
