/* The sync point: turn the instance that just ended into a profile, estimate
 * the next instance, predict every task's time curve, plan, and move pages.
 *
 * Prediction for a task (docs/runtime.md, "Prediction"):
 *   s      = sum_o est_acc[o] / sum_o base_acc[o]   (Eq. 1 per object, with
 *            alpha relative to its value at registration: sampled counts are
 *            already memory-level, so the tabulated cache-line alpha divides
 *            out and only the online refinement remains; by registered bytes
 *            when nothing was sampled)
 *   sigma  = 1 + m * (L - 1): slow-only / DRAM-only time ratio, L the
 *            access-weighted slow/fast latency ratio of the task's objects'
 *            patterns, m the memory-bound fraction (MEM_WCY with hardware
 *            counters, else PADDISER_MEM_BOUND, default 0.5)
 *   base measured at DRAM access share r0: t_base = T_dram_b * (sigma - (sigma-1) r0)
 *   T_dram = s * T_dram_b,  T_slow = s * sigma * T_dram_b
 *   T(r)   = Eq. 2 with the model (pd_time_table_build: every task's curve in
 *            one model call; hardware features, NaN where not measured),
 *            clamped to [T_dram, T_slow] and made non-increasing in r on a
 *            2% grid.
 * bytes(r): page_select.h curve over the task's sampled regions (every page
 * of a region carries its sample's count, weighted by est/measured of its
 * object); the pages chosen are the same hottest-first regions. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "lib/page_sampler.h"
#include "lib/page_select.h"
#include "lib/runtime_internal.h"

#define PAGE ((size_t)PD_SAMPLE_PAGE)
#define GRID RT_GRID

static double env_double(const char *name, double dflt, double lo, double hi)
{
    const char *v = getenv(name);
    double d;
    if (v && *v && pd_parse_double(v, &d) && d >= lo && d <= hi)
        return d;
    return dflt;
}

/* Slow/fast latency ratio by pattern (the paper's Optane numbers:
 * sequential 2.08x, random 3.77x). */
static double pattern_ratio(const rt_object *o)
{
    switch (o->alpha.hint.pattern) {
    case PD_PATTERN_STREAM:
    case PD_PATTERN_STRIDE:
    case PD_PATTERN_STENCIL:
        return env_double("PADDISER_SLOW_RATIO_SEQ", 2.08, 1.0, 100.0);
    default:
        return env_double("PADDISER_SLOW_RATIO_RANDOM", 3.77, 1.0, 100.0);
    }
}

/* ---- profile collection ------------------------------------------------------ */

typedef struct {
    size_t sample;
    int slot;
    uint64_t count;
} raw_count;

typedef struct {
    raw_count *v;
    size_t n, cap;
    int oom;
} raw_list;

static void collect_cb(void *ctx, size_t sample, int slot, uint64_t count)
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
    l->v[l->n++] = (raw_count){sample, slot, count};
}

static int cmp_hot_desc(const void *a, const void *b)
{
    double x = ((const rt_hot *)a)->accesses, y = ((const rt_hot *)b)->accesses;
    return x < y ? 1 : x > y ? -1 : 0;
}

static int add_hot(rt_task *t, size_t *cap, rt_hot h)
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

/* Fast-tier share of the task's sampled accesses under the current placement. */
static double measured_share(const rt_task *t, const raw_list *l, int slot)
{
    if (!rt.backend)
        return 1.0; /* one memory: everything is served by DRAM */
    double fast = 0, all = 0;
    for (size_t i = 0; i < l->n; i++) {
        if (l->v[i].slot != slot)
            continue;
        pd_sample_info info;
        int tier;
        if (pd_sampler_sample(l->v[i].sample, &info) != 0)
            continue;
        if (rt.backend->query(rt.backend, &info.page, 1, &tier) != 0)
            continue;
        double a = (double)l->v[i].count * (double)((info.region_len + PAGE - 1) / PAGE);
        all += a;
        if (tier == PD_TIER_FAST)
            fast += a;
    }
    (void)t;
    if (all > 0)
        return fast / all;
    size_t total = rt_objects_total_bytes();
    return total ? (double)rt.fast_bytes / (double)total : 0.0;
}


int rt_sync_locked(int plan)
{
    if (!rt.instance_open)
        return PD_ESTATE; /* no task ran since the last sync point */
    raw_list l = {0};
    if (rt.sampling)
        pd_sampler_foreach(collect_cb, &l);
    if (l.oom) {
        free(l.v);
        return PD_ENOMEM;
    }
    int rc = PD_OK;
    for (int slot = 0; slot < rt.ntasks; slot++) {
        rt_task *t = rt.tasks[slot];
        if (!t->ran)
            continue;
        if (rt_task_grow_arrays(t) != PD_OK) {
            rc = PD_ENOMEM;
            break;
        }
        memset(t->last_acc, 0, t->nacc * sizeof *t->last_acc);
        t->nhot = 0;
        size_t cap = 0;
        free(t->hot);
        t->hot = NULL;
        for (size_t i = 0; i < l.n; i++) {
            if (l.v[i].slot != slot)
                continue;
            pd_sample_info info;
            if (pd_sampler_sample(l.v[i].sample, &info) != 0 || info.object < 0 ||
                (size_t)info.object >= rt.nobjects)
                continue;
            const rt_object *o = &rt.objects[info.object];
            if (!o->used || !o->sampled_size)
                continue;
            /* The sample stands for every page of its region. */
            double acc = (double)l.v[i].count * (double)((info.region_len + PAGE - 1) / PAGE);
            t->last_acc[info.object] += acc;
            rt_hot h = {info.object,
                        (double)((uintptr_t)info.region - (uintptr_t)o->sampled_addr) / (double)o->sampled_size,
                        (double)info.region_len / (double)o->sampled_size, l.v[i].count, acc};
            if (add_hot(t, &cap, h) != 0) {
                rc = PD_ENOMEM;
                break;
            }
        }
        if (t->nhot)
            qsort(t->hot, t->nhot, sizeof *t->hot, cmp_hot_desc);

        double total_acc = 0, touched = 0;
        for (size_t o = 0; o < t->nacc; o++)
            total_acc += t->last_acc[o];
        for (size_t i = 0; i < t->nhot; i++)
            touched += t->hot[i].len_frac * (double)rt.objects[t->hot[i].object].sampled_size;
        t->last_time = t->cur.wall_s;
        pd_perf_features(&t->cur, total_acc, t->last_feat);
        t->last_hw = t->cur.hw_used;
        t->last_r0 = measured_share(t, &l, slot);
        if (t->planned) {
            t->ran_share = t->plan_share;
            t->ran_bytes = t->plan_bytes;
        } else {
            t->ran_share = t->last_r0;
            /* the share r0 of the task's touched regions, about */
            t->ran_bytes = (size_t)(t->last_r0 * touched) / PAGE * PAGE;
        }
        if (!t->have_base) {
            t->have_base = 1;
            t->base_time = t->last_time;
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
    for (int s = 0; s < rt.ntasks; s++)
        rt.tasks[s]->ran = 0;
    free(l.v);
    if (rt.sampling)
        pd_sampler_reset_counts();
    rt.instance_open = 0;
    rt.instances++;
    if (rc != PD_OK || !plan)
        return rc;
    return rt_replan_locked(1);
}

/* ---- prediction and planning ---------------------------------------------------- */

typedef struct {
    rt_task *task;
    double t_dram, t_slow;
    double curve[GRID + 1]; /* non-increasing T(k / GRID) */
    double *factor;         /* per object: estimated / last measured accesses */
    pd_bytes_curve bytes;   /* hottest-first bytes(r) */
} task_pred;

typedef struct {
    task_pred *p;
    int n;
    double fallback_bytes; /* bytes(r=1) of a task with no sampled accesses */
} plan_ctx;

/* Per-page weight of a sampled region for the next instance. */
static double hot_weight(const task_pred *tp, const rt_hot *h)
{
    return (double)h->count * tp->factor[h->object];
}

static double time_for_share(void *vctx, int task, double r)
{
    plan_ctx *c = vctx;
    const task_pred *tp = &c->p[task];
    if (r <= 0)
        return tp->curve[0];
    if (r >= 1)
        return tp->curve[GRID];
    double x = r * GRID;
    int k = (int)x;
    double frac = x - k;
    return tp->curve[k] + (tp->curve[k + 1] - tp->curve[k]) * frac;
}

static size_t bytes_cb(void *vctx, int task, double r)
{
    plan_ctx *c = vctx;
    const task_pred *tp = &c->p[task];
    if (r <= 0)
        return 0;
    if (tp->bytes.total == 0) /* nothing sampled: an even share of all bytes */
        return (size_t)ceil((r > 1 ? 1 : r) * c->fallback_bytes / (double)PAGE) * PAGE;
    return pd_bytes_curve_bytes(&tp->bytes, r);
}

/* Counts are integers in page_select: weights keep 1/256 resolution. */
#define WEIGHT_SCALE 256.0

static int build_bytes_curve(task_pred *tp)
{
    const rt_task *t = tp->task;
    size_t n = t->nhot ? t->nhot : 1;
    uint64_t *count = calloc(n, sizeof *count);
    size_t *pages = calloc(n, sizeof *pages);
    if (!count || !pages) {
        free(count);
        free(pages);
        return PD_ENOMEM;
    }
    size_t k = 0;
    for (size_t i = 0; i < t->nhot; i++) {
        const rt_hot *h = &t->hot[i];
        const rt_object *o = &rt.objects[h->object];
        double w = hot_weight(tp, h);
        size_t np = (size_t)ceil(h->len_frac * (double)o->size / (double)PAGE);
        if (!o->used || !(w > 0) || np == 0)
            continue;
        double scaled = w * WEIGHT_SCALE;
        count[k] = scaled >= 1.8e19 ? (uint64_t)1.8e19 : scaled < 1 ? 1 : (uint64_t)llround(scaled);
        pages[k] = np;
        k++;
    }
    int rc = pd_bytes_curve_from_histogram(&tp->bytes, count, pages, k, PAGE);
    free(count);
    free(pages);
    return rc;
}

/* Every task's T(r) on the grid, in one model call. */
static int tabulate_curves(task_pred *p, int n)
{
    double *td = malloc((size_t)n * sizeof *td), *ts = malloc((size_t)n * sizeof *ts);
    double(*feat)[PD_NFEATURES] = malloc((size_t)n * sizeof *feat);
    pd_time_table tt = {0};
    int rc = td && ts && feat ? PD_OK : PD_ENOMEM;
    for (int i = 0; i < n && rc == PD_OK; i++) {
        td[i] = p[i].t_dram;
        ts[i] = p[i].t_slow;
        memcpy(feat[i], p[i].task->base_model_in, sizeof feat[i]);
    }
    if (rc == PD_OK)
        rc = pd_time_table_build(&tt, rt.model, n, td, ts, (const double(*)[PD_NFEATURES])feat, GRID + 1);
    for (int i = 0; i < n && rc == PD_OK; i++) {
        task_pred *tp = &p[i];
        double lo = tp->t_dram, hi = tp->t_slow, run = INFINITY;
        for (int k = 0; k <= GRID; k++) {
            double r = (double)k / GRID;
            double v = tt.t[(size_t)i * (GRID + 1) + k];
            if (!isfinite(v))
                v = hi - (hi - lo) * r;
            v = v < lo ? lo : v > hi ? hi : v;
            run = v < run ? v : run; /* the planners need a non-increasing curve */
            tp->curve[k] = run;
        }
    }
    pd_time_table_free(&tt);
    free(td);
    free(ts);
    free(feat);
    return rc;
}

static void predict_task(task_pred *tp)
{
    rt_task *t = tp->task;
    double est_sum = 0, base_sum = 0, lat_w = 0, lat_sum = 0;
    for (size_t o = 0; o < t->nacc && o < rt.nobjects; o++) {
        rt_object *ob = &rt.objects[o];
        t->est_acc[o] = 0;
        tp->factor[o] = 1.0;
        if (!ob->used || !ob->base_size)
            continue;
        double alpha = ob->alpha0 > 0 ? ob->alpha.alpha / ob->alpha0 : 1.0;
        t->est_acc[o] = pd_estimate_accesses(t->base_acc[o], ob->base_size, ob->size, alpha);
        est_sum += t->est_acc[o];
        base_sum += t->base_acc[o];
        if (t->last_acc[o] > 0)
            tp->factor[o] = t->est_acc[o] / t->last_acc[o];
        lat_w += t->base_acc[o];
        lat_sum += t->base_acc[o] * pattern_ratio(ob);
    }
    double scale = 1.0;
    if (base_sum > 0) {
        scale = est_sum / base_sum;
    } else {
        /* Nothing sampled: scale by registered bytes. */
        double now = 0, base = 0;
        for (size_t o = 0; o < rt.nobjects; o++) {
            rt_object *ob = &rt.objects[o];
            if (ob->used && ob->base_size) {
                now += (double)ob->size;
                base += (double)ob->base_size;
                lat_w += (double)ob->size;
                lat_sum += (double)ob->size * pattern_ratio(ob);
            }
        }
        if (base > 0)
            scale = now / base;
    }
    double L = lat_w > 0 ? lat_sum / lat_w : env_double("PADDISER_SLOW_RATIO_RANDOM", 3.77, 1.0, 100.0);
    double m = env_double("PADDISER_MEM_BOUND", 0.5, 0.0, 1.0);
    if (t->base_model_in[PD_FEAT_MEM_WCY] > 0) /* NaN without counters */
        m = fmin(1.0, t->base_model_in[PD_FEAT_MEM_WCY]);
    double sigma = 1.0 + m * (L - 1.0);
    double t_dram_b = t->base_time / (sigma - (sigma - 1.0) * t->base_r0);
    tp->t_dram = scale * t_dram_b;
    tp->t_slow = scale * sigma * t_dram_b;
}

/* ---- page selection and migration ------------------------------------------------ */

typedef struct {
    void **v;
    size_t n, cap;
} page_list;

static int page_push(page_list *l, uintptr_t p)
{
    if (l->n == l->cap) {
        size_t ncap = l->cap ? l->cap * 2 : 1024;
        void **np = realloc(l->v, ncap * sizeof *np);
        if (!np)
            return -1;
        l->v = np;
        l->cap = ncap;
    }
    l->v[l->n++] = (void *)p;
    return 0;
}

static int cmp_ptr(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t) * (void *const *)a, y = (uintptr_t) * (void *const *)b;
    return x < y ? -1 : x > y;
}

static int in_sorted(const page_list *l, uintptr_t p)
{
    size_t lo = 0, hi = l->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if ((uintptr_t)l->v[mid] < p)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < l->n && (uintptr_t)l->v[lo] == p;
}

static const task_pred *sort_tp; /* qsort context; rt.lock is held */

static int cmp_weight_desc(const void *a, const void *b)
{
    const rt_hot *h = sort_tp->task->hot;
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    double wx = hot_weight(sort_tp, &h[x]), wy = hot_weight(sort_tp, &h[y]);
    if (wx != wy)
        return wx < wy ? 1 : -1;
    return x < y ? -1 : x > y; /* ties: the order of the hot list */
}

/* Pages of a task's hottest regions (by next-instance weight, the order of
 * its bytes curve) up to its planned bytes. page_select's pd_select_plan
 * wants one count per page; a region's pages share one sample, so the walk
 * is per region here, O(samples) instead of O(pages). */
static int select_task_pages(const task_pred *tp, size_t budget, page_list *fast)
{
    const rt_task *t = tp->task;
    if (!t->nhot || !budget)
        return 0;
    size_t *order = malloc(t->nhot * sizeof *order);
    if (!order)
        return -1;
    for (size_t i = 0; i < t->nhot; i++)
        order[i] = i;
    sort_tp = tp;
    qsort(order, t->nhot, sizeof *order, cmp_weight_desc);
    sort_tp = NULL;
    size_t used = 0;
    int rc = 0;
    for (size_t j = 0; j < t->nhot && used < budget && rc == 0; j++) {
        const rt_hot *h = &t->hot[order[j]];
        const rt_object *o = &rt.objects[h->object];
        if (!o->used || hot_weight(tp, h) <= 0)
            continue;
        uintptr_t lo = (uintptr_t)o->addr + (uintptr_t)(h->off_frac * (double)o->size);
        uintptr_t hi = (uintptr_t)o->addr + (uintptr_t)((h->off_frac + h->len_frac) * (double)o->size);
        if (hi > (uintptr_t)o->addr + o->size)
            hi = (uintptr_t)o->addr + o->size;
        for (uintptr_t p = lo & ~(uintptr_t)(PAGE - 1); p < hi && used < budget; p += PAGE) {
            if (page_push(fast, p) != 0) {
                rc = -1;
                break;
            }
            used += PAGE;
        }
    }
    free(order);
    return rc;
}

static void stats_add(pd_migrate_stats *a, const pd_migrate_stats *b)
{
    a->pages_requested += b->pages_requested;
    a->pages_moved += b->pages_moved;
    a->pages_failed += b->pages_failed;
    a->bytes_moved += b->bytes_moved;
    a->ebusy += b->ebusy;
    a->enomem += b->enomem;
    a->efault += b->efault;
    a->other_errors += b->other_errors;
}

static void move_chunked(page_list *l, int tier, pd_migrate_stats *total, size_t *ok_pages)
{
    const size_t chunk = 4096;
    for (size_t i = 0; i < l->n; i += chunk) {
        size_t n = l->n - i < chunk ? l->n - i : chunk;
        pd_migrate_stats st = {0};
        rt.backend->move(rt.backend, l->v + i, n, tier, &st);
        stats_add(total, &st);
        if (ok_pages)
            *ok_pages += st.pages_moved;
    }
}

static int migrate(task_pred *p, int n, const pd_plan_result *res)
{
    page_list fast = {0}, slow = {0};
    int rc = PD_OK;
    for (int i = 0; i < n && rc == PD_OK; i++)
        if (select_task_pages(&p[i], res->bytes[i], &fast) != 0)
            rc = PD_ENOMEM;
    if (rc == PD_OK) {
        if (fast.n)
            qsort(fast.v, fast.n, sizeof *fast.v, cmp_ptr);
        size_t k = 0;
        for (size_t i = 0; i < fast.n; i++) /* tasks may share regions */
            if (k == 0 || fast.v[k - 1] != fast.v[i])
                fast.v[k++] = fast.v[i];
        fast.n = k;
        for (size_t o = 0; o < rt.nobjects && rc == PD_OK; o++) {
            const rt_object *ob = &rt.objects[o];
            if (!ob->used)
                continue;
            uintptr_t lo = (uintptr_t)ob->addr & ~(uintptr_t)(PAGE - 1);
            for (uintptr_t pg = lo; pg < (uintptr_t)ob->addr + ob->size; pg += PAGE)
                if (!in_sorted(&fast, pg) && page_push(&slow, pg) != 0) {
                    rc = PD_ENOMEM;
                    break;
                }
        }
    }
    if (rc == PD_OK) {
        pd_migrate_stats total = {0};
        size_t fast_ok = 0;
        move_chunked(&slow, PD_TIER_SLOW, &total, NULL); /* cold out first: frees room */
        move_chunked(&fast, PD_TIER_FAST, &total, &fast_ok);
        rt.last_migration = total;
        rt.fast_bytes = fast_ok * PAGE;
        if (total.pages_failed)
            rt_message("migration: %zu of %zu pages not moved (enomem %zu, ebusy %zu, efault %zu, other %zu)",
                       total.pages_failed, total.pages_requested, total.enomem, total.ebusy, total.efault,
                       total.other_errors);
    }
    free(fast.v);
    free(slow.v);
    return rc;
}

static size_t plan_capacity(void)
{
    size_t total = rt_objects_total_bytes();
    size_t cap;
    if (rt.opt.fast_capacity)
        cap = rt.opt.fast_capacity;
    else if (rt.backend)
        cap = rt.backend->fast_free(rt.backend) + rt.fast_bytes;
    else
        cap = total;
    return cap < total ? cap : total;
}

/* ---- planning across processes ------------------------------------------------------ */

typedef struct {
    const double *t;   /* [GRID + 1] */
    const uint64_t *b; /* [GRID + 1] */
} grid_task;

static double grid_time(void *vctx, int task, double r)
{
    const grid_task *g = &((const grid_task *)vctx)[task];
    if (r <= 0)
        return g->t[0];
    if (r >= 1)
        return g->t[GRID];
    double x = r * GRID;
    int k = (int)x;
    return g->t[k] + (g->t[k + 1] - g->t[k]) * (x - k);
}

/* Bytes at the next grid share: a step function at or above the curve, the
 * same on every process. */
static size_t grid_bytes(void *vctx, int task, double r)
{
    const grid_task *g = &((const grid_task *)vctx)[task];
    if (r <= 0)
        return 0;
    int k = (int)ceil(r * GRID - 1e-9);
    return (size_t)g->b[k > GRID ? GRID : k];
}

/* Gathers every process's curves and plans all tasks; fills share/bytes/
 * times for this process's n tasks (p order). PD_EUNSUPPORTED when this
 * process cannot take part (it then plans alone). */
static int plan_across(task_pred *p, int n, plan_ctx *ctx, double *share, size_t *bytes, double *times,
                       double *makespan)
{
    size_t np = (size_t)rt.nprocs;
    rt_xchg *mine = calloc(1, sizeof *mine);
    rt_xchg *all = calloc(np, sizeof *all);
    if (!mine || !all) {
        free(mine);
        free(all);
        return PD_ENOMEM;
    }
    mine->nonce = rt.nonce;
    mine->capacity = rt.capacity;
    mine->ntasks = n <= RT_XCHG_TASKS ? n : -1;
    for (int i = 0; i < n && mine->ntasks >= 0; i++) {
        mine->task[i].id = p[i].task->id;
        for (int k = 0; k <= GRID; k++) {
            mine->task[i].t[k] = p[i].curve[k];
            mine->task[i].b[k] = k ? bytes_cb(ctx, i, (double)k / GRID) : 0;
        }
    }
    /* Even a process that cannot take part must join the collective call. */
    int rc = rt.allgather(rt.allgather_ctx, mine, all, sizeof *mine) == 0 ? PD_OK : PD_EIO;
    int self = -1, total = 0;
    uint64_t cap = UINT64_MAX;
    for (size_t q = 0; q < np && rc == PD_OK; q++) {
        if (all[q].nonce == rt.nonce && all[q].ntasks == mine->ntasks)
            self = (int)q;
        if (all[q].ntasks < 0)
            continue;
        if (all[q].ntasks > RT_XCHG_TASKS) {
            rc = PD_EINVAL;
            break;
        }
        total += all[q].ntasks;
        if (all[q].capacity < cap)
            cap = all[q].capacity;
    }
    if (rc == PD_OK && (self < 0 || mine->ntasks < 0))
        rc = PD_EUNSUPPORTED;
    grid_task *g = NULL;
    double *gs = NULL, *gt = NULL;
    size_t *gb = NULL;
    if (rc == PD_OK && total > 0) {
        g = calloc((size_t)total, sizeof *g);
        gs = calloc((size_t)total, sizeof *gs);
        gt = calloc((size_t)total, sizeof *gt);
        gb = calloc((size_t)total, sizeof *gb);
        if (!g || !gs || !gt || !gb)
            rc = PD_ENOMEM;
    }
    int first_mine = 0;
    if (rc == PD_OK && total > 0) {
        int k = 0;
        for (size_t q = 0; q < np; q++) {
            if ((int)q == self)
                first_mine = k;
            for (int i = 0; i < all[q].ntasks; i++, k++)
                g[k] = (grid_task){all[q].task[i].t, all[q].task[i].b};
        }
        rt.capacity = (size_t)cap;
        pd_plan_problem prob = {total, grid_time, grid_bytes, g, (size_t)cap};
        pd_plan_result res = {gs, gb, gt, 0, 0};
        rc = pd_plan(rt.opt.planner, &prob, 0.0, &res);
        if (rc == PD_OK) {
            for (int i = 0; i < n; i++) {
                share[i] = gs[first_mine + i];
                bytes[i] = gb[first_mine + i];
                times[i] = gt[first_mine + i];
            }
            *makespan = res.makespan;
        }
    }
    free(g);
    free(gs);
    free(gt);
    free(gb);
    free(mine);
    free(all);
    return rc;
}

int pd_set_allgather(pd_allgather_fn fn, void *ctx, int nprocs)
{
    if (fn && nprocs < 1)
        return PD_EINVAL;
    pthread_mutex_lock(&rt.lock);
    int rc = PD_OK;
    if (!rt.initialized) {
        rc = PD_ESTATE;
    } else {
        rt.allgather = fn;
        rt.allgather_ctx = fn ? ctx : NULL;
        rt.nprocs = fn ? nprocs : 0;
    }
    pthread_mutex_unlock(&rt.lock);
    return rc;
}

int rt_replan_locked(int collective)
{
    if (rt.allgather && !collective)
        return PD_OK; /* cross-process plans change only at sync points */
    rt.plan_stale = 0;
    int n = 0;
    for (int s = 0; s < rt.ntasks; s++)
        if (rt.tasks[s]->have_base)
            n++;
    if (n == 0 && !rt.allgather)
        return PD_OK;
    size_t m = n ? (size_t)n : 1;
    task_pred *p = calloc(m, sizeof *p);
    double *share = calloc(m, sizeof *share);
    size_t *bytes = calloc(m, sizeof *bytes);
    double *times = calloc(m, sizeof *times);
    int rc = p && share && bytes && times ? PD_OK : PD_ENOMEM;
    int k = 0;
    for (int s = 0; s < rt.ntasks && rc == PD_OK; s++) {
        rt_task *t = rt.tasks[s];
        if (!t->have_base)
            continue;
        if (rt_task_grow_arrays(t) != PD_OK || !(p[k].factor = calloc(t->nacc, sizeof(double)))) {
            rc = PD_ENOMEM;
            break;
        }
        p[k].task = t;
        predict_task(&p[k]);
        if (build_bytes_curve(&p[k]) != PD_OK) {
            rc = PD_ENOMEM;
            break;
        }
        k++;
    }
    if (rc == PD_OK && n > 0)
        rc = tabulate_curves(p, n);
    if (rc != PD_OK && rt.allgather) {
        /* Keep the collective call matched: take part with nothing. */
        n = 0;
        rc = PD_OK;
    }
    if (rc == PD_OK) {
        plan_ctx ctx = {p, n, n ? (double)rt_objects_total_bytes() / n : 0};
        rt.capacity = plan_capacity();
        pd_plan_result res = {share, bytes, times, 0, 0};
        int prc = PD_EUNSUPPORTED;
        if (rt.allgather) {
            prc = plan_across(p, n, &ctx, share, bytes, times, &res.makespan);
            if (prc != PD_OK && prc != PD_EUNSUPPORTED)
                rt_message("planning across %d processes failed (%s): planning this process alone", rt.nprocs,
                           pd_strerror(prc));
            else if (prc == PD_EUNSUPPORTED && n > RT_XCHG_TASKS)
                rt_message("%d tasks in this process, at most %d take part in a plan across processes: planning alone",
                           n, RT_XCHG_TASKS);
        }
        if (prc != PD_OK && n > 0) {
            rt.capacity = plan_capacity();
            pd_plan_problem prob = {n, time_for_share, bytes_cb, &ctx, rt.capacity};
            prc = pd_plan(rt.opt.planner, &prob, 0.0, &res);
            if (prc != PD_OK)
                rt_message("planner failed: %s", pd_strerror(prc));
        } else if (n == 0) {
            prc = PD_OK;
        }
        rc = prc;
        if (rc == PD_OK && n > 0) {
            for (int i = 0; i < n; i++) {
                p[i].task->planned = 1;
                p[i].task->plan_share = share[i];
                p[i].task->plan_bytes = bytes[i];
                p[i].task->plan_time = times[i];
            }
            rt.makespan = res.makespan;
            if (rt.backend)
                rc = migrate(p, n, &res);
        }
    }
    for (size_t i = 0; p && i < m; i++) {
        free(p[i].factor);
        pd_bytes_curve_free(&p[i].bytes);
    }
    free(p);
    free(share);
    free(bytes);
    free(times);
    return rc;
}
