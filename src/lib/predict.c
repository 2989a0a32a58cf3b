/* Prediction of each task for the next instance (docs/runtime.md):
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
 * object); migrate.c picks the same hottest-first regions. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "lib/page_sampler.h"
#include "lib/placement.h"
#include "lib/runtime_internal.h"

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

/* Per-page weight of a sampled region for the next instance. */
double rt_hot_weight(const task_pred *tp, const rt_hot *h)
{
    return h->touches * tp->factor[h->object];
}

double rt_time_cb(void *vctx, int task, double r)
{
    plan_ctx *c = vctx;
    const task_pred *tp = &c->p[task];
    if (r <= 0)
        return tp->curve[0];
    if (r >= 1)
        return tp->curve[RT_GRID];
    double x = r * RT_GRID;
    int k = (int)x;
    double frac = x - k;
    return tp->curve[k] + (tp->curve[k + 1] - tp->curve[k]) * frac;
}

size_t rt_bytes_cb(void *vctx, int task, double r)
{
    plan_ctx *c = vctx;
    const task_pred *tp = &c->p[task];
    if (r <= 0)
        return 0;
    if (tp->bytes.total == 0) /* nothing sampled: an even share of all bytes */
        return (size_t)ceil((r > 1 ? 1 : r) * c->fallback_bytes / (double)RT_PAGE) * RT_PAGE;
    return pd_bytes_curve_bytes(&tp->bytes, r);
}

/* Counts are integers in page_select: weights keep 1/256 resolution. */
#define WEIGHT_SCALE 256.0

int rt_build_bytes_curve(task_pred *tp)
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
        double w = rt_hot_weight(tp, h);
        size_t np = (size_t)ceil(h->len_frac * (double)o->size / (double)RT_PAGE);
        if (!o->used || !(w > 0) || np == 0)
            continue;
        double scaled = w * WEIGHT_SCALE;
        count[k] = scaled >= 1.8e19 ? (uint64_t)1.8e19 : scaled < 1 ? 1 : (uint64_t)llround(scaled);
        pages[k] = np;
        k++;
    }
    int rc = pd_bytes_curve_from_histogram(&tp->bytes, count, pages, k, RT_PAGE);
    free(count);
    free(pages);
    return rc;
}

/* Every task's T(r) on the grid, in one model call. */
int rt_tabulate_curves(task_pred *p, int n)
{
    if (n <= 0)
        return PD_OK;
    double *td = calloc((size_t)n, sizeof *td), *ts = calloc((size_t)n, sizeof *ts);
    double(*feat)[PD_NFEATURES] = calloc((size_t)n, sizeof *feat);
    pd_time_table tt = {0};
    int rc = td && ts && feat ? PD_OK : PD_ENOMEM;
    for (int i = 0; i < n && rc == PD_OK; i++) {
        td[i] = p[i].t_dram;
        ts[i] = p[i].t_slow;
        memcpy(feat[i], p[i].task->base_model_in, sizeof feat[i]);
    }
    if (rc == PD_OK)
        rc = pd_time_table_build(&tt, rt.model, n, td, ts, (const double(*)[PD_NFEATURES])feat, RT_GRID + 1);
    for (int i = 0; i < n && rc == PD_OK; i++) {
        task_pred *tp = &p[i];
        double lo = tp->t_dram, hi = tp->t_slow, run = INFINITY;
        for (int k = 0; k <= RT_GRID; k++) {
            double r = (double)k / RT_GRID;
            double v = tt.t[(size_t)i * (RT_GRID + 1) + k];
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

void rt_predict_times(task_pred *tp)
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
