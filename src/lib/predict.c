/* Prediction of each task for the next instance (docs/runtime.md):
 *   s      = sum_o est_acc[o] / sum_o base_acc[o]   (Eq. 1 per object, with
 *            alpha relative to its value at registration: sampled counts are
 *            already memory-level, so the tabulated cache-line alpha divides
 *            out and only the online refinement remains; by registered bytes
 *            when nothing was sampled)
 *   sigma  = 1 + m * (L - 1): slow-only / DRAM-only time ratio, L the
 *            access-weighted slow/fast latency ratio of the task's objects'
 *            patterns, m the memory-bound fraction (MEM_WCY with hardware
 *            counters, PADDISER_MEM_BOUND when set, else learned from the
 *            task's instances at different DRAM shares, learn_mem_bound;
 *            the prior 0.5 until they tell)
 *            (1 without a backend: one memory)
 *   T_dram = the median over the task's instances of the input it will run
 *            (same object sizes) since its time last shifted (the last
 *            RT_WINDOW, and older ones within the noise of those, up to
 *            RT_WINDOW_MAX), each brought to its DRAM-only time by its
 *            measured DRAM share r0:
 *            t / (sigma - (sigma-1) r0); for an input not seen yet, the
 *            curve through the inputs it ran (new_input_dram_time), or with
 *            one input an earlier run's curve (profile_store.h), else the
 *            median over its last RT_WINDOW instances of any input, each
 *            also divided by its own s, times s (robust_dram_time)
 *   T_slow = sigma * T_dram
 *   T(r)   = Eq. 2 with the model's f (hardware features, NaN where not
 *            measured), f on the grid once per task (its features are its
 *            base instance's; refresh_f_grids),
 *            clamped to [T_dram, T_slow] and made non-increasing in r on a
 *            2% grid.
 * bytes(r): page_select.h curve over the task's sampled regions (every page
 * of a region carries its sample's count, weighted by est/measured of its
 * object); plan_pages.c picks the same hottest-first regions. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "lib/cache_reach.h"
#include "lib/page_sampler.h"
#include "lib/placement.h"
#include "lib/profile_store.h"
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

/* Eq. 2's f of every task whose grid is not known yet (new task, other
 * base features, other model), in one model call for all of them. f
 * depends on the features and r only, and the features are the base
 * instance's, so a task's f is computed once and later sync points
 * tabulate times without the model (it was most of a sync point's cost). */
static int f_grid_current(const rt_task *t)
{
    return t->f_grid_valid && t->f_grid_model == (const void *)rt.model &&
           memcmp(t->f_grid_in, t->base_model_in, sizeof t->f_grid_in) == 0;
}

static int refresh_f_grids(task_pred *p, int n)
{
    size_t need = 0;
    for (int i = 0; i < n; i++)
        need += !f_grid_current(p[i].task);
    if (!need)
        return PD_OK;
    size_t rows = need * (RT_GRID + 1);
    double(*feat)[PD_NFEATURES] = malloc(rows * sizeof *feat);
    double *r = malloc(rows * sizeof *r), *f = malloc(rows * sizeof *f);
    int rc = feat && r && f ? PD_OK : PD_ENOMEM;
    size_t row = 0;
    for (int i = 0; i < n && rc == PD_OK; i++) {
        rt_task *t = p[i].task;
        if (f_grid_current(t))
            continue;
        t->f_grid_valid = 0;
        for (int k = 0; k <= RT_GRID; k++, row++) {
            memcpy(feat[row], t->base_model_in, sizeof feat[row]);
            r[row] = k == RT_GRID ? 1.0 : (double)k / RT_GRID;
        }
    }
    if (rc == PD_OK)
        rc = pd_model_predict_batch(rt.model, rows, (const double(*)[PD_NFEATURES])feat, r, NULL, NULL, f, NULL);
    row = 0;
    for (int i = 0; i < n && rc == PD_OK; i++) {
        rt_task *t = p[i].task;
        if (t->f_grid_valid)
            continue;
        memcpy(t->f_grid, f + row, sizeof t->f_grid);
        memcpy(t->f_grid_in, t->base_model_in, sizeof t->f_grid_in);
        t->f_grid_model = rt.model;
        t->f_grid_valid = 1;
        row += RT_GRID + 1;
    }
    free(feat);
    free(r);
    free(f);
    return rc;
}

/* Every task's T(r) on the grid (Eq. 2 with its f grid). */
int rt_tabulate_curves(task_pred *p, int n)
{
    if (n <= 0)
        return PD_OK;
    int rc = refresh_f_grids(p, n);
    for (int i = 0; i < n && rc == PD_OK; i++) {
        task_pred *tp = &p[i];
        double lo = tp->t_dram, hi = tp->t_slow, run = INFINITY;
        for (int k = 0; k <= RT_GRID; k++) {
            double r = k == RT_GRID ? 1.0 : (double)k / RT_GRID;
            double v = pd_model_eq2(lo, hi, r, tp->task->f_grid[k]);
            if (!isfinite(v))
                v = hi - (hi - lo) * r;
            v = v < lo ? lo : v > hi ? hi : v;
            run = v < run ? v : run; /* the planners need a non-increasing curve */
            tp->curve[k] = run;
        }
    }
    return rc;
}

/* What a random access costs at this input against the base input: the
 * factor Eq. 1's estimate of every object hinted random takes in a task's
 * time (cache_reach.h). The randomly read bytes are the sum over those
 * objects, which share the cache; unknown patterns (everything under
 * `paddiser run` without a hints file) keep the linear scale, as a streamed
 * array would wrongly take the factor. PADDISER_RANDOM_REACH=off: 1 (bench
 * comparisons). */
static double random_reach(int sampled)
{
    double now = 0, base = 0;
    for (size_t o = 0; o < rt.nobjects; o++) {
        const rt_object *ob = &rt.objects[o];
        if (ob->used && ob->base_size && ob->alpha.hint.pattern == PD_PATTERN_RANDOM) {
            now += (double)(sampled ? ob->sampled_size : ob->size);
            base += (double)ob->base_size;
        }
    }
    if (!(base > 0) || rt_env_off("PADDISER_RANDOM_REACH"))
        return 1.0;
    static int told; /* once a process: the reason random objects scale linearly */
    if (!pd_random_llc_bytes() && !told) {
        told = 1;
        rt_message("no last-level cache size in sysfs (cpu0/cache/index*/size): objects hinted random scale "
                   "with their bytes alone on a new input; set PADDISER_LLC_BYTES to the cache's size");
    }
    return pd_random_cost_ratio(now, base);
}

/* Eq. 1 scale of the task's input (the objects' sizes now, or with sampled
 * the sizes its last instance ran with) against its base input, random
 * objects' estimates weighed by random_reach; L gets the access-weighted
 * slow/fast latency ratio of its objects. est (may be NULL) receives the
 * per-object estimates of accesses (without the reach). */
static double task_scale(const rt_task *t, int sampled, double *est, double *L)
{
    double est_sum = 0, base_sum = 0, lat_w = 0, lat_sum = 0;
    double reach = random_reach(sampled);
    for (size_t o = 0; o < t->nacc && o < rt.nobjects; o++) {
        const rt_object *ob = &rt.objects[o];
        if (est)
            est[o] = 0;
        if (!ob->used || !ob->base_size)
            continue;
        double alpha = ob->alpha0 > 0 ? ob->alpha.alpha / ob->alpha0 : 1.0;
        double e = pd_estimate_accesses(t->base_acc[o], ob->base_size, sampled ? ob->sampled_size : ob->size, alpha);
        if (est)
            est[o] = e; /* accesses, as sampled: what alpha's refinement compares */
        est_sum += ob->alpha.hint.pattern == PD_PATTERN_RANDOM ? e * reach : e;
        base_sum += t->base_acc[o];
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
            const rt_object *ob = &rt.objects[o];
            if (ob->used && ob->base_size) {
                double sz = (double)(sampled ? ob->sampled_size : ob->size);
                now += ob->alpha.hint.pattern == PD_PATTERN_RANDOM ? sz * reach : sz;
                base += (double)ob->base_size;
                lat_w += sz;
                lat_sum += sz * pattern_ratio(ob);
            }
        }
        if (base > 0)
            scale = now / base;
    }
    *L = lat_w > 0 ? lat_sum / lat_w : env_double("PADDISER_SLOW_RATIO_RANDOM", 3.77, 1.0, 100.0);
    return scale;
}

/* The prior of m without counters, and its spread: the paper's
 * memory-bound middle, 0.5 +- 0.25. PADDISER_MEM_BOUND fixes m (no
 * learning). */
#define MEM_BOUND_PRIOR 0.5
#define MEM_BOUND_PRIOR_SD 0.25

/* m when it is not learned: MEM_WCY with hardware counters, else
 * PADDISER_MEM_BOUND when set. 0 when neither gives it. */
static int mem_bound_given(const rt_task *t, double *m)
{
    if (t->base_model_in[PD_FEAT_MEM_WCY] > 0) { /* NaN without counters */
        *m = fmin(1.0, t->base_model_in[PD_FEAT_MEM_WCY]);
        return 1;
    }
    const char *v = getenv("PADDISER_MEM_BOUND");
    double d;
    if (v && *v && pd_parse_double(v, &d) && d >= 0 && d <= 1) {
        *m = d;
        return 1;
    }
    return 0;
}

/* The prior of m: what an earlier run learned for the task (the profile
 * store), its sd at least MEM_BOUND_STORED_SD_MIN so that this run's own
 * instances can still move it; else 0.5 +- 0.25. */
#define MEM_BOUND_STORED_SD_MIN 0.05
static void mem_bound_prior(const rt_task *t, double *mean, double *sd)
{
    double m, s;
    if (rt_store_mem_bound(t->id, &m, &s)) {
        *mean = m;
        *sd = fmax(s, MEM_BOUND_STORED_SD_MIN);
        return;
    }
    *mean = MEM_BOUND_PRIOR;
    *sd = MEM_BOUND_PRIOR_SD;
}

int rt_task_mem_bound_learned(const rt_task *t, double *m, double *sd)
{
    double given, pm, ps;
    if (mem_bound_given(t, &given) || !isfinite(t->mem_bound_se) || !isfinite(t->mem_bound))
        return 0;
    mem_bound_prior(t, &pm, &ps);
    double se2 = t->mem_bound_se * t->mem_bound_se, pv = ps * ps;
    *m = t->mem_bound;
    *sd = pv + se2 > 0 ? sqrt(pv * se2 / (pv + se2)) : 0; /* the normal posterior's */
    return 1;
}

/* The memory-bound fraction of the task: given (mem_bound_given), else
 * what its instances at different DRAM shares say (learn_mem_bound), the
 * prior until they say enough. se (may be NULL): the fit's standard error,
 * NaN unless m is learned. */
static double task_mem_bound(const rt_task *t, double *se)
{
    double m;
    if (se)
        *se = NAN;
    if (mem_bound_given(t, &m))
        return m;
    if (se)
        *se = t->mem_bound_se;
    double pm, ps;
    mem_bound_prior(t, &pm, &ps);
    return isfinite(t->mem_bound) ? t->mem_bound : pm;
}

/* sigma = slow-only / DRAM-only time of the task. */
static double task_sigma(const rt_task *t, double L)
{
    if (!rt.backend)
        return 1.0; /* one memory: no slow tier to be slower on */
    return 1.0 + task_mem_bound(t, NULL) * (L - 1.0);
}

static const rt_instance *recent(const rt_task *t, int i);

/* m from the task's own instances: Eq. 2's linear end says an instance at
 * DRAM share r takes T_dram (1 + c (1 - r)), c = m (L - 1). Within each
 * visit (the consecutive instances of one input; their times over their
 * mean, so inputs of any size pool), the slope of time against 1 - r
 * gives c; its standard error, from the
 * residuals, says how much to trust it, and m is the prior moved towards
 * the fit by the weight prior_var / (prior_var + se^2) (a normal prior and
 * likelihood). So a handful of noisy instances at nearly one share leaves
 * the prior, and a task whose time really does not depend on its share
 * (the sim backend, a tier no slower than DRAM) learns m near 0. */
static void learn_mem_bound(rt_task *t, double L)
{
    double given;
    if (mem_bound_given(t, &given) || !(L > 1.0))
        return;
    double x[RT_HISTORY], z[RT_HISTORY], sxx = 0, sxz = 0, xbar_all = 0;
    int groups = 0, pts = 0;
    /* By visit, not by input: a revisited input may run in another regime
     * (on this project's VM up to 2x), which pooled with its earlier visits
     * at another placement reads as a share effect. On the phases bench
     * with long instances, the revisit of the first input ran 1.35x
     * slower at a lower share and taught m 0.03 - 0.08 where it was 0,
     * and 64 MiB moved on an unchanged input in every run. */
    for (int i = t->nhist - 1; i >= 0;) { /* oldest first */
        int members[RT_HISTORY], k = 0;
        double sy = 0, sx = 0;
        uint64_t input = recent(t, i)->input;
        do {
            const rt_instance *h = recent(t, i);
            members[k++] = i--;
            sy += h->time;
            sx += 1.0 - h->r0;
        } while (i >= 0 && recent(t, i)->input == input && !recent(t, i)->visit_first);
        if (k < 2)
            continue;
        double ybar = sy / k, xbar = sx / k;
        for (int q = 0; q < k; q++, pts++) {
            const rt_instance *h = recent(t, members[q]);
            x[pts] = (1.0 - h->r0) - xbar;
            z[pts] = h->time / ybar - 1.0;
            sxx += x[pts] * x[pts];
            sxz += x[pts] * z[pts];
            xbar_all += xbar;
        }
        groups++;
    }
    int dof = pts - groups - 1; /* one mean per visit, one slope */
    if (dof < 1 || sxx < 1e-3) /* too few instances, or no spread in their shares */
        return;
    xbar_all /= pts;
    double b = sxz / sxx, rss = 0;
    for (int q = 0; q < pts; q++)
        rss += (z[q] - b * x[q]) * (z[q] - b * x[q]);
    double se_b = sqrt(rss / dof / sxx);
    /* z = c (x_raw - xbar) / (1 + c xbar): slope b = c / (1 + c xbar) */
    double den = fmax(1.0 - b * xbar_all, 0.05);
    double m_hat = b / den / (L - 1.0), se_m = se_b / (den * den) / (L - 1.0);
    double pm, ps;
    mem_bound_prior(t, &pm, &ps);
    double pv = ps * ps, w = pv / (pv + se_m * se_m);
    double m = pm + w * (m_hat - pm);
    t->mem_bound = m < 0 ? 0 : m > 1 ? 1 : m;
    t->mem_bound_se = se_m;
}

/* The size of the task's input: the bytes of the objects it accessed in
 * its base instance (all objects when it accessed none), with the sizes its
 * last instance ran with (sampled) or the sizes now. Deterministic, unlike
 * Eq. 1's scale, which moves with the sampled counts and refined alphas. */
static double task_input_bytes(const rt_task *t, int sampled)
{
    double all = 0, used = 0;
    for (size_t o = 0; o < rt.nobjects; o++) {
        const rt_object *ob = &rt.objects[o];
        if (!ob->used)
            continue;
        double sz = (double)(sampled ? ob->sampled_size : ob->size);
        all += sz;
        if (o < t->nacc && t->base_acc[o] > 0)
            used += sz;
    }
    return used > 0 ? used : all;
}

/* The instance in the task's table of inputs: its input's entry (a new
 * one, or the least recently run one's slot when the table is full). */
static void remember_input(rt_task *t, const rt_instance *in)
{
    rt_input_times *e = NULL;
    for (int i = 0; i < t->ninputs && !e; i++)
        if (t->inputs[i].input == in->input)
            e = &t->inputs[i];
    if (!e) {
        if (t->ninputs < RT_INPUTS) {
            e = &t->inputs[t->ninputs++];
        } else {
            e = &t->inputs[0];
            for (int i = 1; i < RT_INPUTS; i++)
                if (t->inputs[i].stamp < e->stamp)
                    e = &t->inputs[i];
        }
        memset(e, 0, sizeof *e);
        e->input = in->input;
    }
    e->scale = task_input_bytes(t, 1);
    e->time[e->next] = in->time;
    e->r0[e->next] = in->r0;
    e->first[e->next] = in->visit_first;
    e->next = (e->next + 1) % RT_INPUT_KEEP;
    if (e->n < RT_INPUT_KEEP)
        e->n++;
    e->stamp = ++t->input_clock;
}

static const rt_instance *recent(const rt_task *t, int i);

/* The task's history without its perturbed instances, oldest first. */
static void drop_perturbed(rt_task *t)
{
    rt_instance keep[RT_HISTORY];
    int n = 0;
    for (int i = t->nhist - 1; i >= 0; i--)
        if (!recent(t, i)->perturbed)
            keep[n++] = *recent(t, i);
    memcpy(t->hist, keep, (size_t)n * sizeof *keep);
    t->nhist = n;
    t->hist_next = n % RT_HISTORY;
}

/* The instance ran with pages protected while the sampler skips most
 * instances (pd_sampler_instance_begin), and its sampling cost was more than
 * RT_PERTURBED_SHARE of its time: its faults, TLB shootdowns and split huge
 * pages are in its time (2.5x on the phases example when every spell armed
 * every sample), and a prediction resting on it would expect every instance
 * to pay them. A sampled instance whose spells armed thin slices
 * (PADDISER_SAMPLE_SPELL_PCT) costs about as little as its noise and counts
 * like any other. */
#define RT_PERTURBED_SHARE 0.05
static int instance_sampled(void)
{
    return rt.sampling && rt.inst_sampled && !rt.pmu_period && pd_sampler_duty_cycled();
}

static int instance_perturbed(void)
{
    return instance_sampled() && pd_sampler_instance_cost_share() > RT_PERTURBED_SHARE;
}

void rt_record_instance(rt_task *t)
{
    double L, scale = task_scale(t, 1, NULL, &L);
    /* its time without the sampler's faults (profile.c) */
    rt_instance in = {rt_input_signature(1), t->last_time - t->last_sampler_s, t->last_r0, scale,
                      instance_perturbed(), 0, instance_sampled()};
    in.visit_first = !t->ran_before || t->prev_input != in.input;
    t->prev_input = in.input;
    t->ran_before = 1;
    if (!(in.time > 0) || !(in.r0 >= 0) || !(in.scale > 0) || !isfinite(in.time))
        return; /* nothing to learn from (a task that took no time) */
    /* Perturbed instances count only while the task has nothing better:
     * one is dropped when an unperturbed one is kept, and they all go when
     * the first unperturbed one comes (where every instance is sampled, all
     * are perturbed alike and all count). */
    int clean = 0;
    for (int i = 0; i < t->nhist; i++)
        clean += !recent(t, i)->perturbed;
    if (in.perturbed && clean > 0)
        return;
    if (!in.perturbed && clean < t->nhist)
        drop_perturbed(t);
    t->hist[t->hist_next] = in;
    t->hist_next = (t->hist_next + 1) % RT_HISTORY;
    if (t->nhist < RT_HISTORY)
        t->nhist++;
    if (!in.perturbed) /* a new input's first instance is predicted from these */
        remember_input(t, &in);
    if (rt.backend)
        learn_mem_bound(t, L);
}

/* The task's i-th most recent instance (0: the last), i < nhist. */
static const rt_instance *recent(const rt_task *t, int i)
{
    return &t->hist[(t->hist_next - 1 - i + RT_HISTORY) % RT_HISTORY];
}

/* v[0..n) (most recent first, n > na): how many of them belong to the
 * current regime (robust_dram_time), anchored on the na most recent. Keeps
 * the order of v; the accepted ones move to its front. raw: where the
 * anchors are all visits' firsts (anchors_raw), their median as
 * measured, before the warm-up factor settled them (NAN: none). The factor is
 * learned from a few visits and is not the same for every visit (on the
 * phases example a new input's first ran a few percent slower than the
 * rest of its visit, a revisited input's not at all, and a factor of 1.11
 * from two visits once predicted a revisit's second instance 14.8% low:
 * docs/runtime-measurements.md, *A revisit's first and its older
 * visits*), so the
 * anchor's level is only known between the two: an older instance within
 * the noise of that span joins. */
static int stable_window(double *v, int n, int na, double raw)
{
    double a[RT_WINDOW_MAX], d[RT_WINDOW_MAX];
    memcpy(a, v, (size_t)na * sizeof *a);
    double anchor = pd_median(a, (size_t)na);
    double lo = anchor, hi = anchor;
    if (isfinite(raw)) {
        lo = fmin(anchor, raw);
        hi = fmax(anchor, raw);
    }
    for (int i = 0; i + 1 < n; i++)
        d[i] = fabs(v[i] - v[i + 1]);
    /* consecutive differences of N(0, s^2) noise: |d| has median 0.954 s */
    double tol = 3.0 * pd_median(d, (size_t)(n - 1)) / 0.954;
    int k = na, misses = 0;
    for (int i = na; i < n && misses < 2; i++) {
        if (v[i] >= lo - tol && v[i] <= hi + tol) {
            v[k++] = v[i];
            misses = 0;
        } else {
            misses++;
        }
    }
    return k;
}

/* A visit: the instances a task runs of one input before it runs another.
 * Its first instance can be slower than the rest (the input's pages, caches
 * and TLB are cold, its arrays were just allocated), and so again on every
 * later visit of an input: on the phases example 1.02x the next ones with
 * --passes 3 (docs/runtime-measurements.md), more with shorter instances.
 * The factor is the median, over the task's recorded visits (at most the
 * last RT_WARMUP_VISITS), of the first instance's DRAM-only time over the
 * median of the visit's next instances (at least two) sampled alike (the
 * page sampler armed in all of them or in none). A visit whose first
 * instance was not recorded (sampled while most are not, or dropped as
 * perturbed) gives none: its next instances are not marked as a first. 1
 * without any, and *known 0 (1 when it is learned or turned off; known may
 * be NULL).
 * Predictions divide a visit's first out of the times they rest on and
 * multiply a new visit's first back in; while none is known, a prediction
 * of an instance that continues a visit leaves a visit's first out once
 * the visit has a later instance (robust_dram_time). */
#define RT_WARMUP_VISITS 8
#define RT_WARMUP_MIN 0.5
#define RT_WARMUP_MAX 3.0

/* An instance's time at DRAM share r0 brought to its DRAM-only time. */
static double dram_only(double time, double r0, double sigma)
{
    return time / (sigma - (sigma - 1.0) * r0);
}

static double dram_time_of(const rt_instance *h, double sigma) { return dram_only(h->time, h->r0, sigma); }

/* The same, a visit's first instance brought to what the visit's later
 * ones take (warmup: rt_visit_warmup's factor). */
static double settled_dram(double time, double r0, int visit_first, double sigma, double warmup)
{
    return dram_only(time, r0, sigma) / (visit_first ? warmup : 1.0);
}

/* later, recorded right after in (or after instances that all do), is of
 * in's visit: the same input, and no new visit began with it. */
static int continues_visit(const rt_instance *in, const rt_instance *later)
{
    return later->input == in->input && !later->visit_first;
}

double rt_visit_warmup(const rt_task *t, double sigma, int *known)
{
    int ignored;
    if (!known)
        known = &ignored;
    *known = 1;
    if (rt_env_off("PADDISER_VISIT_WARMUP")) /* no factor, every time as it came (bench comparisons) */
        return 1.0;
    *known = 0;
    double ratio[RT_WARMUP_VISITS];
    int nr = 0;
    /* PADDISER_VISIT_WARMUP_ALIKE=off: a visit's next instances count
     * whether the sampler armed in them or not (bench comparisons) */
    int alike = !rt_env_off("PADDISER_VISIT_WARMUP_ALIKE");
    /* newest first: i is a visit's first; its next ones are i-1, i-2, ... */
    for (int i = 0; i < t->nhist && nr < RT_WARMUP_VISITS; i++) {
        const rt_instance *f = recent(t, i);
        if (!f->visit_first || f->perturbed)
            continue;
        double v[RT_WINDOW];
        int n = 0;
        for (int k = i - 1; k >= 0 && n < RT_WINDOW; k--) {
            const rt_instance *h = recent(t, k);
            if (!continues_visit(f, h))
                break;
            /* like with like: a first the sampler armed pages in (a run's
             * first, sampled whole for the profile) against unsampled
             * instances would count the sampler's unmeasured wall cost as
             * warm-up (1.27 from one such visit on a random gather, which
             * then predicted the next input's second instance 21% low:
             * bench/pattern_accuracy.c) */
            if (!h->perturbed && (h->sampled == f->sampled || !alike))
                v[n++] = dram_time_of(h, sigma);
        }
        if (n < 2)
            continue;
        double rest = pd_median(v, (size_t)n);
        if (rest > 0)
            ratio[nr++] = dram_time_of(f, sigma) / rest;
    }
    if (nr == 0)
        return 1.0;
    *known = 1;
    double w = pd_median(ratio, (size_t)nr);
    return w < RT_WARMUP_MIN ? RT_WARMUP_MIN : w > RT_WARMUP_MAX ? RT_WARMUP_MAX : w;
}

/* How a task's DRAM-only time grows with its input, read from the inputs
 * it ran: an input's time is rarely proportional to its size (caches and
 * TLB reach hold a small input's working set, a large one's not; fixed
 * costs weigh on a small one). One point per input: its size
 * (task_input_bytes) and the median DRAM-only time of its recent
 * instances. Sizes, not Eq. 1's scale: the scale moves with sampled counts
 * and refined alphas, and on bench/predict_bench's inputs interpolating on
 * it was worse than Eq. 1's linear scale alone (docs/runtime.md). */
typedef struct {
    double log_s, log_t;
    int n;
} input_point;

static int by_log_s(const void *a, const void *b)
{
    double x = ((const input_point *)a)->log_s, y = ((const input_point *)b)->log_s;
    return (x > y) - (x < y);
}

/* Exponents of time against size that extrapolation may use: at most
 * half or one and a half times as steep as the size grows (a measured
 * steeper curve is more likely noise over a short span than physics). */
#define SCALE_EXP_MIN 0.5
#define SCALE_EXP_MAX 1.5
/* Inputs closer than this in size are one point for the exponent. */
#define SCALE_SPAN_MIN 0.223 /* log(1.25) */

/* The task's inputs as points (log size, log median DRAM-only time). */
static int own_input_points(const rt_task *t, double sigma, double warmup, input_point *pt)
{
    int np = 0;
    for (int i = 0; i < t->ninputs; i++) {
        const rt_input_times *e = &t->inputs[i];
        double v[RT_INPUT_KEEP];
        if (e->n == 0 || !(e->scale > 0))
            continue;
        for (int k = 0; k < e->n; k++)
            v[k] = settled_dram(e->time[k], e->r0[k], e->first[k], sigma, warmup);
        double med = pd_median(v, (size_t)e->n);
        if (!(med > 0))
            continue;
        pt[np++] = (input_point){log(e->scale), log(med), e->n};
    }
    return np;
}

static double curve_at(input_point *pt, int np, double x, int *used);

/* The first switch of a task that has run one input: the stored curve of
 * an earlier run (profile_store.h) grown from the size the task ran to
 * size_next, times this run's own time at it. NAN without a store curve. */
static double stored_growth(const rt_task *t, const input_point *own, int np, double x, int *used)
{
    const rt_store_task *st = rt_store_find(t->id);
    if (!st || np < 1)
        return NAN;
    input_point sp[RT_INPUTS];
    for (int i = 0; i < st->n; i++)
        sp[i] = (input_point){log(st->bytes[i]), log(st->dram_s[i]), 1};
    /* the own input nearest in size anchors it */
    const input_point *a = &own[0];
    for (int i = 1; i < np; i++)
        if (fabs(own[i].log_s - x) < fabs(a->log_s - x))
            a = &own[i];
    int u;
    double to = curve_at(sp, st->n, x, &u), from = curve_at(sp, st->n, a->log_s, &u);
    if (!(to > 0) || !(from > 0))
        return NAN;
    *used = a->n;
    return exp(a->log_t) * to / from;
}

int rt_task_input_points(rt_task *t, double *bytes, double *dram_s, int max)
{
    double L;
    task_scale(t, 0, NULL, &L);
    double sigma = task_sigma(t, L);
    input_point pt[RT_INPUTS];
    int np = own_input_points(t, sigma, rt_visit_warmup(t, sigma, NULL), pt);
    int n = 0;
    for (int i = 0; i < np && n < max; i++, n++)
        bytes[n] = exp(pt[i].log_s), dram_s[n] = exp(pt[i].log_t);
    return n;
}

/* DRAM-only time of the first instance of an input the task has not run
 * (size_next: its task_input_bytes), from the inputs it has run: between
 * two of them, interpolated on log time against log size (a power law
 * between neighbours); outside their range, the nearest one's time scaled
 * by the least-squares exponent over all of them (clamped to
 * SCALE_EXP_MIN..MAX, 1 while their sizes span less than 25 %), curve_at.
 * With fewer than two inputs of different sizes, an earlier run's curve
 * (stored_growth); without one NAN: then the caller scales by Eq. 1 alone.
 * *used: the instances it rests on. */
static double new_input_dram_time(const rt_task *t, double size_next, double sigma, double warmup, int *used)
{
    input_point pt[RT_INPUTS];
    *used = 0;
    if (!(size_next > 0))
        return NAN;
    int np = own_input_points(t, sigma, warmup, pt);
    double d = curve_at(pt, np, log(size_next), used);
    return isfinite(d) ? d : stored_growth(t, pt, np, log(size_next), used);
}

/* The curve through the points at log size x: between two of them, a
 * power law between the neighbours; outside, the nearest one scaled by the
 * least-squares exponent over all (clamped to SCALE_EXP_MIN..MAX, 1 while
 * their sizes span less than 25 %). NAN with fewer than two points of
 * different sizes. pt is sorted in place. */
static double curve_at(input_point *pt, int np, double x, int *used)
{
    *used = 0;
    if (np < 2)
        return NAN;
    qsort(pt, (size_t)np, sizeof pt[0], by_log_s);
    if (pt[np - 1].log_s - pt[0].log_s < 0.02) /* one scale: nothing to learn a shape from */
        return NAN;
    for (int i = 0; i + 1 < np; i++) {
        const input_point *a = &pt[i], *b = &pt[i + 1];
        if (x >= a->log_s && x <= b->log_s && b->log_s - a->log_s > 1e-9) {
            double w = (x - a->log_s) / (b->log_s - a->log_s);
            *used = a->n + b->n;
            return exp(a->log_t + w * (b->log_t - a->log_t));
        }
    }
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (int i = 0; i < np; i++) {
        sx += pt[i].log_s;
        sy += pt[i].log_t;
    }
    double xbar = sx / np, ybar = sy / np;
    for (int i = 0; i < np; i++) {
        sxx += (pt[i].log_s - xbar) * (pt[i].log_s - xbar);
        sxy += (pt[i].log_s - xbar) * (pt[i].log_t - ybar);
    }
    double b = 1.0;
    if (pt[np - 1].log_s - pt[0].log_s >= SCALE_SPAN_MIN && sxx > 0)
        b = fmin(SCALE_EXP_MAX, fmax(SCALE_EXP_MIN, sxy / sxx));
    const input_point *near = x < pt[0].log_s ? &pt[0] : &pt[np - 1];
    for (int i = 0; i < np; i++)
        *used += pt[i].n;
    return exp(near->log_t + b * (x - near->log_s));
}

/* How many instances the window anchors on, of an input's instances
 * v[0..n) (most recent first; first[i]: v[i] began a visit) before an
 * instance that starts a visit (starts) or continues the visit v[0] is in:
 * at most RT_WINDOW, and within a visit no more than the visit has run. A
 * new visit of an input may run in another regime than its last one (the
 * machine drifted between them: on this project's VM a revisited input's
 * times moved by up to 2x), so its older visits join the window only
 * through stable_window's noise test against the current visit's own
 * instances, as any shift is followed. */
static int window_anchor(const unsigned char *first, int n, int starts)
{
    int k = 0;
    if (starts)
        k = n;
    else
        while (k < n && !first[k++])
            ;
    return k < RT_WINDOW ? k : RT_WINDOW;
}

/* The median of the anchors raw[0..na) as measured, where every one of
 * them is a visit's first that the warm-up factor settled (first[i]): the
 * visit's second instance, whose prediction has nothing else of the visit
 * to rest on. NAN otherwise, or where the factor is 1 (stable_window).
 * Once the visit has a later instance, that instance says where the visit
 * runs, and a span reaching from the anchors' median to the first as
 * measured would let older visits of another level join the window
 * (test_visit_first_span_ends_with_the_visits_next_instance).
 * PADDISER_VISIT_FIRST_SPAN=off: the settled value alone (bench
 * comparisons). */
static double anchors_raw(const double *raw, const unsigned char *first, int na, double warmup)
{
    int all = na > 0;
    for (int i = 0; i < na; i++)
        all &= first[i];
    if (!all || warmup == 1.0 || na > RT_WINDOW_MAX || rt_env_off("PADDISER_VISIT_FIRST_SPAN"))
        return NAN;
    double a[RT_WINDOW_MAX];
    memcpy(a, raw, (size_t)na * sizeof *a);
    return pd_median(a, (size_t)na);
}

/* The window's estimate of v[0..n): the median of the instances
 * stable_window keeps, anchored on na. v is left as it was. */
static double window_estimate(const double *v, int n, int na)
{
    double c[RT_WINDOW_MAX];
    memcpy(c, v, (size_t)n * sizeof *c);
    if (n > na)
        n = stable_window(c, n, na, NAN);
    return pd_median(c, (size_t)n);
}

/* Which estimate of an input's next instance its own history favours. The
 * window's median removes noise that is independent from one instance to
 * the next; where instance times drift with the machine (a VM whose host
 * load comes and goes: on this project's 2-core VM the median of an
 * input's previous instances had 1.16 - 1.90x the previous instance's
 * error on the phases example in every batch of a session,
 * docs/runtime-measurements.md, *The input's own replay*), the last
 * instance is the better guess. So each
 * prediction first replays the last RT_BACKTEST instances of the input:
 * what each estimate, from the instances before, would have said of it.
 * The last instance is used when its median relative error there is below
 * RT_BACKTEST_MARGIN times the window's; with fewer than RT_BACKTEST_MIN
 * replays, or no clear winner, the window. Nothing is stored: the replay
 * reads the same history the prediction does. */
#define RT_BACKTEST 4
#define RT_BACKTEST_MIN 3
#define RT_BACKTEST_MARGIN 0.9
static int last_instance_favoured(const double *v, const unsigned char *first, int n)
{
    if (rt_env_off("PADDISER_PREDICT_REPLAY")) /* the window always (bench comparisons) */
        return 0;
    double ew[RT_BACKTEST], el[RT_BACKTEST];
    int nb = 0;
    for (int j = 0; j < RT_BACKTEST && j + 1 < n; j++) {
        if (!(v[j] > 0))
            continue;
        int na = window_anchor(first + j + 1, n - j - 1, first[j]);
        ew[nb] = fabs(window_estimate(v + j + 1, n - j - 1, na) - v[j]) / v[j];
        el[nb] = fabs(v[j + 1] - v[j]) / v[j];
        nb++;
    }
    if (nb < RT_BACKTEST_MIN)
        return 0;
    return pd_median(el, (size_t)nb) < RT_BACKTEST_MARGIN * pd_median(ew, (size_t)nb);
}

/* DRAM-only time of the task's next instance, from its recent instances of
 * the input it will run (each brought to DRAM-only time by its measured
 * share): the median of the instances since that input's time last shifted.
 * The last RT_WINDOW instances anchor it (their median); older ones join,
 * most recent first, up to RT_WINDOW_MAX, while they lie within three
 * noise sigmas of the anchor, the sigma read from the differences of
 * consecutive instances (a shift moves one difference, not their median);
 * the first two in a row outside end the window. So a stable input's
 * prediction rests on up to RT_WINDOW_MAX instances (the naive "previous
 * instance" predictor's error is about sqrt(2) noise sigmas, this one's
 * about sqrt(1 + pi / 2n)), and a shift is followed within two instances,
 * as with the anchor alone (a long fixed window followed the regimes of
 * this VM's times too slowly: docs/runtime.md, bench-predict). For an
 * input not seen yet: from the inputs around it (new_input_dram_time) once
 * the task ran two of different scales; before that, the median over the
 * last RT_WINDOW instances of any input, each divided by its own Eq. 1
 * scale, times scale_next (the next input's). Medians, not the first
 * instance: one slow or fast instance (a first touch, a noisy neighbour, a
 * sampling burst) moves nothing; except where the input's own history says
 * its times drift, so that its last instance predicts the next better than
 * the window (last_instance_favoured). NAN without history. */
static double robust_dram_time(rt_task *t, double scale_next, double sigma)
{
    uint64_t next = rt_input_signature(0);
    /* a visit's first instances weigh as the rest would have; the next
     * instance, if it starts a visit, as a first */
    int known;
    double warmup = rt_visit_warmup(t, sigma, &known);
    int starts = !(t->ran_before && t->prev_input == next);
    double ahead = starts ? warmup : 1.0;
    double v[RT_WINDOW_MAX], raw[RT_WINDOW_MAX];
    unsigned char first[RT_WINDOW_MAX];
    int n = 0;
    /* Until a factor is known, a visit's first cannot be brought to what
     * the rest of its visit takes: for an instance that continues a visit,
     * it stands for its visit only while nothing else of the visit has run
     * (on the phases example, the first visit after the sampled instance:
     * its third instance was predicted 8.0 and 9.5 % high with it in the
     * window, in two batches; docs/runtime-measurements.md, *A visit's
     * first instance before the warm-up factor is known*). For one that starts
     * a visit, firsts are kept: they are what it is.
     * PADDISER_VISIT_FIRST_OUT=off keeps them in (bench comparisons). */
    int first_out = !known && !starts && !rt_env_off("PADDISER_VISIT_FIRST_OUT");
    for (int i = 0; i < t->nhist && n < RT_WINDOW_MAX; i++) {
        const rt_instance *h = recent(t, i);
        if (first_out && h->visit_first && i > 0 && continues_visit(h, recent(t, i - 1)))
            continue;
        if (h->input == next) {
            first[n] = (unsigned char)h->visit_first;
            raw[n] = dram_time_of(h, sigma);
            v[n++] = settled_dram(h->time, h->r0, h->visit_first, sigma, warmup);
        }
    }
    t->pred_same_input = n > 0;
    double unit = 1.0;
    if (n == 0) {
        int used;
        double d = new_input_dram_time(t, task_input_bytes(t, 0), sigma, warmup, &used);
        if (isfinite(d)) {
            t->pred_n = used;
            t->pred_cv = NAN; /* several inputs' times: no one spread */
            return ahead * d;
        }
        for (int i = 0; i < t->nhist && n < RT_WINDOW; i++) {
            const rt_instance *h = recent(t, i);
            v[n++] = settled_dram(h->time, h->r0, h->visit_first, sigma, warmup) / h->scale;
        }
        unit = scale_next;
    }
    /* of the input itself: the window or, where the input's own replay
     * favours it, its last instance */
    int last = t->pred_same_input && last_instance_favoured(v, first, n);
    double newest = n > 0 ? v[0] : NAN; /* before stable_window reorders v */
    int na = t->pred_same_input ? window_anchor(first, n, starts) : RT_WINDOW;
    if (n > na)
        n = stable_window(v, n, na, t->pred_same_input ? anchors_raw(raw, first, na, warmup) : NAN);
    t->pred_n = last ? 1 : n;
    t->pred_cv = NAN;
    if (n == 0)
        return NAN;
    double med = pd_median(v, (size_t)n);
    if (n >= 2 && med > 0) {
        double dev[RT_WINDOW_MAX];
        for (int i = 0; i < n; i++)
            dev[i] = fabs(v[i] - med);
        t->pred_cv = 1.4826 * pd_median(dev, (size_t)n) / med; /* MAD, as a normal sigma */
    }
    return ahead * unit * (last ? newest : med);
}

void rt_predict_times(task_pred *tp)
{
    rt_task *t = tp->task;
    double L, scale = task_scale(t, 0, t->est_acc, &L);
    for (size_t o = 0; o < t->nacc && o < rt.nobjects; o++) {
        const rt_object *ob = &rt.objects[o];
        /* the heat's per-object totals (its input's, heat.c) to this estimate */
        tp->factor[o] = ob->used && ob->base_size && t->hot_acc[o] > 0 ? t->est_acc[o] / t->hot_acc[o] : 1.0;
    }
    double sigma = task_sigma(t, L);
    t->pred_mem_bound = task_mem_bound(t, &t->pred_mem_se);
    double given;
    double prior_m, prior_sd;
    mem_bound_prior(t, &prior_m, &prior_sd);
    t->pred_mem_sd = mem_bound_given(t, &given) ? NAN : isfinite(t->pred_mem_se) ? t->pred_mem_se : prior_sd;
    double t_dram = robust_dram_time(t, scale, sigma);
    if (!isfinite(t_dram)) /* no usable instance yet: the base instance alone */
        t_dram = scale * dram_only(t->base_time - t->base_sampler_s, t->base_r0, sigma);
    tp->t_dram = t_dram;
    tp->t_slow = sigma * t_dram;
}
