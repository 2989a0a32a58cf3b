/* Placement policies (see policies.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "lib/page_select.h"
#include "sim/baselines.h"
#include "sim/features.h"
#include "sim/policies.h"
#include "sim/workload.h" /* pd_wl_rand / pd_wl_uniform */

static const char *const policy_names[PD_SIM_NPOLICIES] = {
    "first-touch", "hot-first", "memory-mode", "greedy", "exact", "hot-exact",
};

const char *pd_sim_policy_name(pd_sim_policy pol)
{
    return (int)pol >= 0 && pol < PD_SIM_NPOLICIES ? policy_names[pol] : "?";
}

int pd_sim_policy_parse(const char *name, pd_sim_policy *out)
{
    for (int i = 0; name && i < PD_SIM_NPOLICIES; i++)
        if (!strcmp(name, policy_names[i])) {
            *out = (pd_sim_policy)i;
            return 0;
        }
    return -1;
}

void pd_sim_placement_free(pd_sim_placement *pl)
{
    free(pl->fast), free(pl->probe), free(pl->task_share), free(pl->task_bytes);
    memset(pl, 0, sizeof *pl);
}

/* ---- first-touch --------------------------------------------------------- */

/* The kernels initialise their objects in allocation order, so first touch
 * fills DRAM with the pages of the first objects, in address order. */
static void first_touch(const pd_sim_profile *p, size_t cap_pages, pd_sim_placement *pl)
{
    for (size_t g = 0; g < p->npages && g < cap_pages; g++)
        pl->fast[g] = 1;
}

/* ---- hot-first ------------------------------------------------------------- */

int pd_sim_cmp_ranked_desc(const void *a, const void *b)
{
    const pd_sim_ranked *x = a, *y = b;
    if (x->hot != y->hot)
        return x->hot < y->hot ? 1 : -1;
    if (x->tie != y->tie)
        return x->tie < y->tie ? 1 : -1;
    return x->page < y->page ? -1 : x->page > y->page;
}

/* Hot-first (Memory Optimizer-like): pages ranked by accessed-bit hotness,
 * the same scanner model as the tiering baselines
 * (pd_sim_accessed_bit_hotness: scans spread over the phases, a page seen
 * with probability 1 - exp(-lambda), lambda against the phase's
 * 90th-percentile touched page, so only the hottest pages saturate), ties
 * broken at random as with the real scanners; exact (hot-exact) ranks by
 * the true counts instead. */
static int hot_first(const pd_sim_profile *p, size_t cap_pages, const pd_sim_policy_opts *o,
                     int exact, pd_sim_placement *pl)
{
    size_t n = p->npages;
    double *hot = malloc(n * sizeof *hot);
    pd_sim_ranked *rk = malloc(n * sizeof *rk);
    int rc = -1;
    if (!hot || !rk)
        goto out;
    if (exact)
        pd_sim_page_totals(p, hot);
    else if (pd_sim_accessed_bit_hotness(p, o->seed, o->scans, o->sample_frac, hot) != 0)
        goto out;
    uint64_t seed = o->seed * 2654435761ULL + 17;
    for (size_t g = 0; g < n; g++)
        rk[g] = (pd_sim_ranked){hot[g], exact ? 0 : pd_wl_uniform(&seed), g};
    qsort(rk, n, sizeof *rk, pd_sim_cmp_ranked_desc);
    for (size_t k = 0; k < n && k < cap_pages; k++)
        pl->fast[rk[k].page] = 1;
    rc = 0;
out:
    free(hot), free(rk);
    return rc;
}

/* ---- memory mode ---------------------------------------------------------- */

int pd_sim_direct_mapped_hits(const double *freq, const size_t *set, size_t npages,
                              size_t nsets, double *hit)
{
    if (nsets == 0) {
        for (size_t g = 0; g < npages; g++)
            hit[g] = 0;
        return 0;
    }
    double *load = calloc(nsets, sizeof *load);
    if (!load)
        return -1; /* not "no hits": that would be a wrong result, silently */
    for (size_t g = 0; g < npages; g++)
        load[set[g]] += freq[g];
    for (size_t g = 0; g < npages; g++)
        hit[g] = load[set[g]] > 0 ? freq[g] / load[set[g]] : 1.0;
    free(load);
    return 0;
}

static int memory_mode(const pd_sim_profile *p, size_t cap_pages, const pd_sim_policy_opts *o,
                       pd_sim_placement *pl)
{
    size_t n = p->npages;
    double *tot = malloc(n * sizeof *tot);
    size_t *set = calloc(n ? n : 1, sizeof *set);
    pl->probe = calloc(n, sizeof *pl->probe);
    if (!tot || !set || !pl->probe) {
        free(tot), free(set);
        return -1;
    }
    pd_sim_page_totals(p, tot);
    /* physical frames are handed out in no useful order: random frame per page */
    uint64_t seed = o->seed * 0x9e3779b97f4a7c15ULL + 3;
    for (size_t g = 0; g < n; g++)
        set[g] = cap_pages ? (size_t)(pd_wl_rand(&seed) % cap_pages) : 0;
    int rc = pd_sim_direct_mapped_hits(tot, set, n, cap_pages, pl->fast);
    for (size_t g = 0; g < n; g++)
        pl->probe[g] = 1 - pl->fast[g];
    free(tot), free(set);
    return rc;
}

/* ---- planners -------------------------------------------------------------- */

#define GRID 200

typedef struct {
    double table[GRID + 1]; /* predicted time at r = k / GRID */
} time_curve;

typedef struct {
    time_curve *tc;
    pd_bytes_curve *bc;
} plan_ctx;

static double curve_time(void *ctx, int task, double r)
{
    const time_curve *c = &((plan_ctx *)ctx)->tc[task];
    if (r <= 0)
        return c->table[0];
    if (r >= 1)
        return c->table[GRID];
    double x = r * GRID;
    int k = (int)x;
    double f = x - k;
    return c->table[k] * (1 - f) + c->table[k + 1] * f;
}

static size_t curve_bytes(void *ctx, int task, double r)
{
    return pd_bytes_curve_bytes(&((plan_ctx *)ctx)->bc[task], r);
}

/* Time curve of one task: its hottest pages (not yet fast) first, on top of
 * the pages already in fast memory, at fixed tier stretch factors u. */
/* Eq. 2 curve: T_dram / T_slow of the task from the execution model at the
 * reference contention, f from the model over the profile's features. */
static int eq2_time_curve(const pd_sim_profile *p, const pd_sim_machine *m, int task,
                          const size_t *page_obj, const double u[2], const pd_model *model,
                          time_curve *tc)
{
    double *split = calloc((size_t)p->nobjects * PD_SIM_NSLOTS, sizeof *split);
    if (!split)
        return -1;
    const pd_sim_task *tk = &p->tasks[task];
    for (size_t g = 0; g < p->npages; g++) {
        double *sl = split + page_obj[g] * PD_SIM_NSLOTS;
        sl[PD_SIM_FR] += (double)tk->reads[g];
        sl[PD_SIM_FW] += (double)tk->writes[g];
    }
    double t_dram = pd_sim_task_time_at(m, p, task, split, u);
    for (int o = 0; o < p->nobjects; o++) {
        double *sl = split + (size_t)o * PD_SIM_NSLOTS;
        sl[PD_SIM_SR] = sl[PD_SIM_FR], sl[PD_SIM_SW] = sl[PD_SIM_FW];
        sl[PD_SIM_FR] = sl[PD_SIM_FW] = 0;
    }
    double t_slow = pd_sim_task_time_at(m, p, task, split, u);
    free(split);
    double feat[PD_SIM_NFEATURES], r[GRID + 1];
    if (pd_sim_task_features(p, task, t_dram, feat) != 0) {
        for (int k = 0; k <= GRID; k++)
            tc->table[k] = t_dram;
        return 0;
    }
    for (int k = 0; k <= GRID; k++)
        r[k] = (double)k / GRID;
    if (pd_model_predict_many(model, t_dram, t_slow, feat, r, GRID + 1, NULL, tc->table) != PD_OK)
        return -1;
    for (int k = 1; k <= GRID; k++)
        if (tc->table[k] > tc->table[k - 1])
            tc->table[k] = tc->table[k - 1];
    return 0;
}

static int build_time_curve(const pd_sim_profile *p, const pd_sim_machine *m, int task,
                            const uint64_t *counts, const pd_bytes_curve *bc,
                            const size_t *page_obj, const double *base_fast, const double u[2],
                            const pd_model *eq2, time_curve *tc)
{
    if (eq2)
        return eq2_time_curve(p, m, task, page_obj, u, eq2, tc);
    size_t n = p->npages;
    size_t *order = malloc(n * sizeof *order);
    double *split = calloc((size_t)p->nobjects * PD_SIM_NSLOTS, sizeof *split);
    if (!order || !split) {
        free(order), free(split);
        return -1;
    }
    size_t touched = pd_select_hottest(counts, n, n, order);
    const pd_sim_task *tk = &p->tasks[task];
    for (size_t g = 0; g < n; g++) {
        double *sl = split + page_obj[g] * PD_SIM_NSLOTS;
        int f = base_fast[g] > 0;
        sl[f ? PD_SIM_FR : PD_SIM_SR] += (double)tk->reads[g];
        sl[f ? PD_SIM_FW : PD_SIM_SW] += (double)tk->writes[g];
    }
    size_t done = 0;
    for (int k = 0; k <= GRID; k++) {
        size_t want = pd_bytes_curve_pages(bc, (double)k / GRID);
        if (want > touched)
            want = touched;
        for (; done < want; done++) {
            size_t g = order[done];
            double *sl = split + page_obj[g] * PD_SIM_NSLOTS;
            sl[PD_SIM_SR] -= (double)tk->reads[g];
            sl[PD_SIM_SW] -= (double)tk->writes[g];
            sl[PD_SIM_FR] += (double)tk->reads[g];
            sl[PD_SIM_FW] += (double)tk->writes[g];
        }
        tc->table[k] = pd_sim_task_time_at(m, p, task, split, u);
        if (k > 0 && tc->table[k] > tc->table[k - 1]) /* keep the curve non-increasing */
            tc->table[k] = tc->table[k - 1];
    }
    free(order), free(split);
    return 0;
}

/* Tier stretch factors at a reference operating point: the hot-first
 * placement of the same capacity, all tasks running. */
static int reference_stretch(const pd_sim_profile *p, const pd_sim_machine *m, size_t cap_pages,
                             const pd_sim_policy_opts *o, double u[2])
{
    pd_sim_placement ref = {0};
    pd_sim_split s = {0};
    int rc = -1;
    ref.fast = calloc(p->npages, sizeof *ref.fast);
    if (ref.fast && hot_first(p, cap_pages, o, 0, &ref) == 0 && pd_sim_split_init(&s, p) == 0) {
        pd_sim_split_from_pages(&s, p, ref.fast, NULL);
        rc = pd_sim_phase0_stretch(m, p, &s, u);
    }
    pd_sim_split_free(&s);
    free(ref.fast);
    return rc;
}

/* One planning round over the pages not yet in fast memory; adds the
 * selected pages to pl->fast. *added = pages added, *used = bytes planned. */
static int plan_round(pd_sim_policy pol, const pd_sim_profile *p, const pd_sim_machine *m,
                      size_t capacity, const pd_sim_policy_opts *o, const double u[2],
                      const size_t *page_obj, pd_sim_placement *pl, size_t *added, double *pred,
                      char *err, size_t errlen)
{
    int nt = p->ntasks, rc = -1, curves = 0;
    size_t n = p->npages;
    uint64_t **counts = calloc((size_t)nt, sizeof *counts);
    pd_bytes_curve *bc = calloc((size_t)nt, sizeof *bc);
    time_curve *tc = calloc((size_t)nt, sizeof *tc);
    pd_task_pages *tp = calloc((size_t)nt, sizeof *tp);
    size_t **sel = calloc((size_t)nt, sizeof *sel), *nsel = calloc((size_t)nt, sizeof *nsel);
    double *share = calloc((size_t)nt, sizeof *share), *time = calloc((size_t)nt, sizeof *time);
    size_t *bytes = calloc((size_t)nt, sizeof *bytes);
    *added = 0;
    if (!counts || !bc || !tc || !tp || !sel || !nsel || !share || !time || !bytes)
        goto oom;
    for (int t = 0; t < nt; t++) {
        counts[t] = malloc(n * sizeof(uint64_t));
        if (!counts[t])
            goto oom;
        for (size_t g = 0; g < n; g++)
            counts[t][g] = pl->fast[g] > 0 ? 0 : p->tasks[t].reads[g] + p->tasks[t].writes[g];
        if (pd_bytes_curve_from_counts(&bc[t], counts[t], n, p->page_bytes) != PD_OK)
            goto oom;
        curves = t + 1;
        if (build_time_curve(p, m, t, counts[t], &bc[t], page_obj, pl->fast, u, o->eq2, &tc[t]) != 0)
            goto oom;
        tp[t].counts = counts[t];
        tp[t].npages = n;
    }
    plan_ctx ctx = {tc, bc};
    pd_plan_problem prob = {.ntasks = nt, .time = curve_time, .bytes = curve_bytes, .ctx = &ctx,
                            .capacity = capacity};
    pd_plan_result res = {.share = share, .bytes = bytes, .time = time};
    int st = pd_plan(pol == PD_SIM_GREEDY ? PD_PLANNER_GREEDY : PD_PLANNER_EXACT, &prob, o->step,
                     &res);
    if (st != PD_OK) {
        snprintf(err, errlen, "%s planner failed: %s", pd_sim_policy_name(pol), pd_strerror(st));
        goto out;
    }
    st = pd_select_plan(tp, nt, bytes, p->page_bytes, sel, nsel);
    if (st != PD_OK) {
        snprintf(err, errlen, "page selection failed: %s", pd_strerror(st));
        goto out;
    }
    for (int t = 0; t < nt; t++) {
        for (size_t k = 0; k < nsel[t]; k++)
            if (pl->fast[sel[t][k]] == 0) {
                pl->fast[sel[t][k]] = 1;
                (*added)++;
            }
        pl->task_bytes[t] += nsel[t] * p->page_bytes;
        free(sel[t]);
    }
    *pred = res.makespan;
    rc = 0;
    goto out;
oom:
    snprintf(err, errlen, "%s: out of memory", pd_sim_policy_name(pol));
out:
    for (int t = 0; counts && t < nt; t++)
        free(counts[t]);
    for (int t = 0; t < curves; t++)
        pd_bytes_curve_free(&bc[t]);
    free(counts), free(bc), free(tc), free(tp), free(sel), free(nsel);
    free(share), free(time), free(bytes);
    return rc;
}

/* The planners return the least bytes reaching their makespan, and pay
 * for shared pages once per task; fast memory left idle helps nobody, so
 * what is left goes to the hottest remaining pages (all tasks' accesses). */
static int fill_leftover(const pd_sim_profile *p, size_t cap_pages, pd_sim_placement *pl)
{
    size_t n = p->npages, used = 0;
    for (size_t g = 0; g < n; g++)
        used += pl->fast[g] > 0;
    if (used >= cap_pages)
        return 0;
    double *tot = malloc(n * sizeof *tot);
    pd_sim_ranked *rk = malloc(n * sizeof *rk);
    if (!tot || !rk) {
        free(tot), free(rk);
        return -1;
    }
    pd_sim_page_totals(p, tot);
    size_t k = 0;
    for (size_t g = 0; g < n; g++)
        if (pl->fast[g] == 0 && tot[g] > 0)
            rk[k++] = (pd_sim_ranked){.hot = tot[g], .tie = 0, .page = g};
    qsort(rk, k, sizeof *rk, pd_sim_cmp_ranked_desc);
    for (size_t j = 0; j < k && used < cap_pages; j++, used++)
        pl->fast[rk[j].page] = 1;
    free(tot), free(rk);
    return 0;
}

/* The planners see tasks independently: a page several tasks use is paid
 * for by each of them, so a plan can leave capacity unused. Further rounds
 * re-plan the leftover with the chosen pages already fast (opts.rounds). */
static int planned(pd_sim_policy pol, const pd_sim_profile *p, const pd_sim_machine *m,
                   size_t capacity, const pd_sim_policy_opts *o, pd_sim_placement *pl, char *err,
                   size_t errlen)
{
    size_t n = p->npages, cap_pages = capacity / p->page_bytes, used = 0;
    size_t *page_obj = malloc(n * sizeof *page_obj);
    double u[2];
    if (!page_obj || reference_stretch(p, m, cap_pages, o, u) != 0) {
        free(page_obj);
        snprintf(err, errlen, "%s: out of memory", pd_sim_policy_name(pol));
        return -1;
    }
    for (int ob = 0; ob < p->nobjects; ob++)
        for (size_t k = 0; k < p->objects[ob].npages; k++)
            page_obj[p->objects[ob].page_base + k] = (size_t)ob;
    /* Eq. 2 curves describe a task from scratch: one round, then the fill */
    int rounds = o->eq2 ? 1 : o->rounds > 0 ? o->rounds : 1;
    pd_sim_split s = {0};
    if (pd_sim_split_init(&s, p) != 0) {
        free(page_obj);
        snprintf(err, errlen, "%s: out of memory", pd_sim_policy_name(pol));
        return -1;
    }
    /* The curves hold the tiers' contention fixed; a plan that moves much
     * traffic to one tier changes it. Re-plan with the contention the plan
     * itself causes (never lowering it, so this settles) a few times. */
    for (int iter = 0; iter < 3; iter++) {
        memset(pl->fast, 0, n * sizeof *pl->fast);
        memset(pl->task_bytes, 0, (size_t)p->ntasks * sizeof *pl->task_bytes);
        used = 0;
        for (int r = 0; r < rounds && used < cap_pages; r++) {
            size_t added = 0;
            double pred = 0;
            if (plan_round(pol, p, m, (cap_pages - used) * p->page_bytes, o, u, page_obj,
                           pl, &added, &pred, err, errlen) != 0) {
                free(page_obj);
                pd_sim_split_free(&s);
                return -1;
            }
            if (r == 0 || added)
                pl->predicted_makespan = pred;
            used += added;
            if (!added)
                break;
        }
        double u2[2];
        pd_sim_split_from_pages(&s, p, pl->fast, NULL);
        if (pd_sim_phase0_stretch(m, p, &s, u2) != 0)
            break;
        if (u2[0] <= u[0] * 1.01 && u2[1] <= u[1] * 1.01)
            break;
        u[0] = fmax(u[0], u2[0]);
        u[1] = fmax(u[1], u2[1]);
    }
    pd_sim_split_free(&s);
    free(page_obj);
    return fill_leftover(p, cap_pages, pl);
}

/* ---- entry points ------------------------------------------------------------ */

int pd_sim_place(pd_sim_policy pol, const pd_sim_profile *p, const pd_sim_machine *m,
                 size_t capacity, const pd_sim_policy_opts *opts, pd_sim_placement *out,
                 char *err, size_t errlen)
{
    pd_sim_policy_opts o = opts ? *opts : (pd_sim_policy_opts){0};
    memset(out, 0, sizeof *out);
    if (!p || !m || (int)pol < 0 || pol >= PD_SIM_NPOLICIES) {
        snprintf(err, errlen, "bad policy or profile");
        return -1;
    }
    size_t cap_pages = capacity / p->page_bytes;
    out->fast = calloc(p->npages, sizeof *out->fast);
    out->task_share = calloc((size_t)p->ntasks, sizeof *out->task_share);
    out->task_bytes = calloc((size_t)p->ntasks, sizeof *out->task_bytes);
    if (!out->fast || !out->task_share || !out->task_bytes) {
        snprintf(err, errlen, "out of memory");
        pd_sim_placement_free(out);
        return -1;
    }
    int rc;
    switch (pol) {
    case PD_SIM_FIRST_TOUCH: first_touch(p, cap_pages, out); rc = 0; break;
    case PD_SIM_HOT_FIRST: rc = hot_first(p, cap_pages, &o, 0, out); break;
    case PD_SIM_HOT_EXACT: rc = hot_first(p, cap_pages, &o, 1, out); break;
    case PD_SIM_MEMORY_MODE: rc = memory_mode(p, cap_pages, &o, out); break;
    default:
        if (o.plan_on && (o.plan_on->npages != p->npages || o.plan_on->ntasks != p->ntasks)) {
            snprintf(err, errlen, "the planning profile's pages or tasks differ from the evaluated one's");
            rc = -1;
            break;
        }
        rc = planned(pol, o.plan_on ? o.plan_on : p, m, capacity, &o, out, err, errlen);
        break;
    }
    if (rc != 0) {
        if (!err[0])
            snprintf(err, errlen, "%s: out of memory", pd_sim_policy_name(pol));
        pd_sim_placement_free(out);
        return -1;
    }
    if (pol == PD_SIM_MEMORY_MODE) {
        out->fast_bytes = cap_pages * p->page_bytes;
    } else {
        for (size_t g = 0; g < p->npages; g++)
            if (out->fast[g] > 0)
                out->fast_bytes += p->page_bytes;
    }
    {
        int planner = pol == PD_SIM_GREEDY || pol == PD_SIM_EXACT;
        for (int t = 0; t < p->ntasks; t++) {
            double fb = 0, acc = 0, fastacc = 0;
            for (size_t g = 0; g < p->npages; g++) {
                double a = (double)p->tasks[t].reads[g] + (double)p->tasks[t].writes[g];
                if (a > 0)
                    fb += out->fast[g] * (double)p->page_bytes;
                acc += a;
                fastacc += a * out->fast[g];
            }
            if (!planner)
                out->task_bytes[t] = (size_t)fb;
            out->task_share[t] = acc > 0 ? fastacc / acc : 0;
        }
    }
    return 0;
}

int pd_sim_evaluate(const pd_sim_machine *m, const pd_sim_profile *p, const pd_sim_placement *pl,
                    pd_sim_outcome *out)
{
    memset(out, 0, sizeof *out);
    pd_sim_split s;
    if (pd_sim_split_init(&s, p) != 0)
        return -1;
    out->task_time = calloc((size_t)p->ntasks, sizeof(double));
    out->task_share = calloc((size_t)p->ntasks, sizeof(double));
    if (!out->task_time || !out->task_share) {
        pd_sim_split_free(&s);
        pd_sim_outcome_free(out);
        return -1;
    }
    pd_sim_split_from_pages(&s, p, pl->fast, pl->probe);
    out->makespan = pd_sim_execute(m, p, &s, out->task_time);
    if (out->makespan < 0) {
        pd_sim_split_free(&s);
        pd_sim_outcome_free(out);
        return -1;
    }
    out->cov = pd_sim_cov(out->task_time, p->ntasks);
    for (int t = 0; t < p->ntasks; t++) {
        out->mean += out->task_time[t] / p->ntasks;
        double f = 0, all = 0;
        for (int o = 0; o < p->nobjects; o++) {
            const double *sl = PD_SIM_SPLIT_AT(&s, t, o);
            double slow = sl[PD_SIM_SR] + sl[PD_SIM_SW];
            double fast = sl[PD_SIM_FR] + sl[PD_SIM_FW];
            /* memory-mode probes are extra fast reads, not served accesses */
            all += slow + fast;
            f += fast;
        }
        if (pl->probe) {
            double probes = 0, acc = 0;
            for (size_t g = 0; g < p->npages; g++) {
                double a = (double)p->tasks[t].reads[g] + (double)p->tasks[t].writes[g];
                probes += a * pl->probe[g];
                acc += a;
            }
            f -= probes;
            all = acc;
        }
        out->task_share[t] = all > 0 ? f / all : 0;
    }
    pd_sim_split_free(&s);
    return 0;
}

void pd_sim_outcome_free(pd_sim_outcome *o)
{
    free(o->task_time), free(o->task_share);
    memset(o, 0, sizeof *o);
}
