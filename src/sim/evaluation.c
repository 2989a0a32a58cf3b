/* The placement study (pd_sim_study, see study.h): libpaddiser as shipped
 * against every baseline, all scored by the independent scorer
 * (scorer.h), never by the model any planner planned with. Per repeat the
 * workloads are profiled afresh; every policy places from what it can
 * see (the runtime and the baselines: their own sampling; the oracles:
 * exact counts and the planners' model); every placement is scored at the
 * nominal machine and at each sensitivity variant. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/duration.h"
#include "common/util.h"
#include "sim/baselines.h"
#include "sim/policies.h"
#include "sim/scorer.h"
#include "sim/study.h"
#include "sim/workload.h"

/* The contract's policy names, in the CSV's order. */
typedef enum {
    EV_RUNTIME = 0, EV_GREEDY_ORACLE, EV_EXACT_ORACLE, EV_HOT_FIRST, EV_HOT_EXACT, EV_TPP,
    EV_HEMEM, EV_MEMTIS, EV_DAMON, EV_COLLOID, EV_MEMORY_MODE, EV_FIRST_TOUCH, EV_NPOLICIES
} ev_policy;

static const char *const ev_names[EV_NPOLICIES] = {
    "runtime", "greedy-oracle", "exact-oracle", "hot-first", "hot-exact", "tpp",
    "hemem",   "memtis",        "damon",        "colloid",   "memory-mode", "first-touch",
};

/* One placement: fast[npages], whether it is memory mode's hit rates,
 * and what the policy itself predicted (oracles only; else 0). */
typedef struct {
    double *fast;
    int mm;
    double predicted;
    size_t held_back; /* colloid: capacity it leaves unused on purpose */
} ev_placement;

/* Placement of a pd_sim_place policy. */
static int sim_place(pd_sim_policy pol, const pd_sim_profile *p, const pd_sim_machine *m,
                     size_t cap, const pd_sim_policy_opts *o, ev_placement *out, char *err,
                     size_t errlen)
{
    pd_sim_placement pl;
    if (pd_sim_place(pol, p, m, cap, o, &pl, err, errlen) != 0)
        return -1;
    memcpy(out->fast, pl.fast, p->npages * sizeof *out->fast);
    out->mm = pl.probe != NULL;
    out->predicted = pl.predicted_makespan;
    pd_sim_placement_free(&pl);
    return 0;
}

/* Every policy ends with one rule for capacity it leaves free: pages
 * that first touch put in fast memory stay there (no migration) while
 * room is left. Colloid's held-back capacity is a decision, not left over. */
static void keep_first_touch(const pd_sim_profile *p, size_t cap_pages, double *fast)
{
    size_t used = 0;
    for (size_t g = 0; g < p->npages; g++)
        used += fast[g] > 0.5;
    for (size_t g = 0; g < p->npages && g < cap_pages && used < cap_pages; g++)
        if (fast[g] <= 0.5)
            fast[g] = 1, used++;
}

/* What the runtime really moved. By default it leaves registered pages
 * where first touch put them and moves the difference to its plan, like
 * every policy here; with PADDISER_START_TIER=slow, registration moved
 * every first-touch fast page out and the sync point moved the plan's
 * pages in, so a first-touch page it plans moved twice. */
static size_t runtime_moved_pages(const double *first_touch, const double *fast, size_t npages)
{
    if (!pd_wl_runtime_starts_slow())
        return pd_score_moved_pages(first_touch, fast, npages);
    size_t n = 0;
    for (size_t g = 0; g < npages; g++)
        n += (first_touch[g] > 0.5) + (fast[g] > 0.5);
    return n;
}

static int place(ev_policy k, const pd_sim_profile *p, const pd_sim_machine *m, size_t cap,
                 uint64_t seed, const double *runtime_fast, ev_placement *out, char *err,
                 size_t errlen)
{
    size_t cap_pages = cap / p->page_bytes;
    pd_sim_policy_opts o = {.seed = seed, .rounds = 3};
    pd_sim_bl_opts bo = {.seed = seed};
    int rc = 0;
    out->mm = 0, out->predicted = 0, out->held_back = 0;
    memset(out->fast, 0, p->npages * sizeof *out->fast);
    switch (k) {
    case EV_RUNTIME: memcpy(out->fast, runtime_fast, p->npages * sizeof *out->fast); break;
    case EV_GREEDY_ORACLE: rc = sim_place(PD_SIM_GREEDY, p, m, cap, &o, out, err, errlen); break;
    case EV_EXACT_ORACLE: rc = sim_place(PD_SIM_EXACT, p, m, cap, &o, out, err, errlen); break;
    case EV_HOT_FIRST: rc = sim_place(PD_SIM_HOT_FIRST, p, m, cap, &o, out, err, errlen); break;
    case EV_HOT_EXACT: rc = sim_place(PD_SIM_HOT_EXACT, p, m, cap, &o, out, err, errlen); break;
    case EV_MEMORY_MODE: rc = sim_place(PD_SIM_MEMORY_MODE, p, m, cap, &o, out, err, errlen); break;
    case EV_FIRST_TOUCH: rc = sim_place(PD_SIM_FIRST_TOUCH, p, m, cap, &o, out, err, errlen); break;
    case EV_TPP: rc = pd_sim_bl_tpp(p, cap_pages, &bo, out->fast); break;
    case EV_HEMEM: rc = pd_sim_bl_hemem(p, cap_pages, &bo, out->fast); break;
    case EV_MEMTIS: rc = pd_sim_bl_memtis(p, cap_pages, &bo, out->fast); break;
    case EV_DAMON: rc = pd_sim_bl_damon(p, cap_pages, &bo, out->fast); break;
    case EV_COLLOID: rc = pd_sim_bl_colloid(p, m, cap_pages, &bo, out->fast, &out->held_back); break;
    default: rc = -1;
    }
    if (rc != 0) {
        if (!err[0])
            snprintf(err, errlen, "%s: out of memory", ev_names[k]);
        return -1;
    }
    /* The runtime's placement is what its backend holds: the first-touch
     * pages it kept are in it, those it moved out must not come back. */
    if (!out->mm && out->held_back == 0 && k != EV_RUNTIME)
        keep_first_touch(p, cap_pages, out->fast);
    return 0;
}

/* ---- results ------------------------------------------------------------------ */

typedef struct {
    double makespan[PD_SCORE_NVARIANTS];
    double cov, migrate_s, predicted;
} ev_cell;

typedef struct {
    const pd_sim_study_cfg *cfg;
    int nrep;
    const pd_score_machine *sm; /* [tier] the nominal scorer machines */
    ev_cell *cells; /* [tier][workload][input][cap][policy][repeat] */
} ev_table;

static ev_cell *cell_at(const ev_table *t, int ti, int w, int i, int c, int k, int r)
{
    const pd_sim_study_cfg *g = t->cfg;
    size_t idx = ((((((size_t)ti * g->nworkloads + w) * g->ninputs + i) * g->ncaps + c) * EV_NPOLICIES + k) *
                  t->nrep) + r;
    return &t->cells[idx];
}

/* Gain of the runtime against policy k for one repeat and variant, the
 * mean over inputs and capacities. */
static double mean_gain(const ev_table *t, int ti, int w, int k, int r, int v)
{
    double s = 0;
    int n = 0;
    for (int i = 0; i < t->cfg->ninputs; i++)
        for (int c = 0; c < t->cfg->ncaps; c++) {
            s += pd_sim_gain(cell_at(t, ti, w, i, c, EV_RUNTIME, r)->makespan[v],
                             cell_at(t, ti, w, i, c, k, r)->makespan[v]);
            n++;
        }
    return n ? s / n : 0;
}

/* Student-t 97.5% quantiles for n - 1 = 1..30 degrees of freedom. */
static double t975(int df)
{
    static const double q[] = {12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
                               2.201,  2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
                               2.080,  2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042};
    return df < 1 ? NAN : df <= 30 ? q[df - 1] : 1.96;
}

typedef struct {
    double mean, half; /* 95% CI = mean +- half (NAN with one repeat) */
    double lo, hi;     /* sensitivity band: min and max over variants of the mean over repeats */
} ev_stat;

/* wsel < 0: all workloads together. */
static ev_stat gain_stat(const ev_table *t, int ti, int wsel, int k)
{
    ev_stat s = {0, NAN, INFINITY, -INFINITY};
    int w0 = wsel < 0 ? 0 : wsel, w1 = wsel < 0 ? t->cfg->nworkloads : wsel + 1;
    for (int v = 0; v < PD_SCORE_NVARIANTS; v++) {
        double sum = 0, sq = 0;
        for (int r = 0; r < t->nrep; r++) {
            double g = 0;
            for (int w = w0; w < w1; w++)
                g += mean_gain(t, ti, w, k, r, v) / (w1 - w0);
            sum += g, sq += g * g;
        }
        double mean = sum / t->nrep;
        if (v == 0) {
            s.mean = mean;
            if (t->nrep > 1) {
                double var = fmax(0, (sq - t->nrep * mean * mean) / (t->nrep - 1));
                s.half = t975(t->nrep - 1) * sqrt(var / t->nrep);
            }
        }
        s.lo = fmin(s.lo, mean), s.hi = fmax(s.hi, mean);
    }
    return s;
}

static void print_stat(FILE *f, ev_stat s)
{
    if (isnan(s.half))
        fprintf(f, " %+.1f%% {%+.1f..%+.1f} |", 100 * s.mean, 100 * s.lo, 100 * s.hi);
    else
        fprintf(f, " %+.1f%% ±%.1f {%+.1f..%+.1f} |", 100 * s.mean, 100 * s.half, 100 * s.lo, 100 * s.hi);
}

static void write_markdown(FILE *f, const ev_table *t, pd_sim_profile **profs)
{
    const pd_sim_study_cfg *cfg = t->cfg;
    time_t now = time(NULL);
    char stamp[64];
    strftime(stamp, sizeof stamp, "%Y-%m-%d %H:%M UTC", gmtime(&now));
    fprintf(f, "# Simulated heterogeneous-memory placement results\n\n");
    fprintf(f, "Generated %s by `%s` (docs/sim.md has the models and their sources). Do not edit by hand.\n\n",
            stamp, cfg->command ? cfg->command : "paddiser sim study");
    fprintf(f, "**The headline is libpaddiser as shipped** (`runtime`: the kernel run under the runtime "
               "with the simulated backend, its own page sampling, Eq. 1/Eq. 2 and the exact planner; the "
               "pages the backend holds after the sync point are what is scored). Every placement is "
               "scored by the independent scorer (src/sim/scorer.c: per-phase barriers, queueing "
               "contention, compute/memory overlap, media granularity, write-bandwidth fall, "
               "memory-mode fills and write-backs, migration charged to the instance), never by the "
               "model a planner planned with. The baselines see sampled information only; the oracles "
               "see exact counts and plan on the planners' model (an upper-bound view, not the headline).\n\n");
    fprintf(f, "Cells: mean makespan gain of `runtime` over the column's policy, 1 - T_runtime / T_policy, "
               "over inputs (");
    for (int i = 0; i < cfg->ninputs; i++)
        fprintf(f, "%s%s", i ? ", " : "", cfg->inputs[i]);
    fprintf(f, ") and fast-memory capacities (");
    for (int c = 0; c < cfg->ncaps; c++)
        fprintf(f, "%s%.0f%%", c ? ", " : "", 100 * cfg->caps[c]);
    fprintf(f, " of the footprint); ± is the 95%% confidence half-width over %d repeat%s (each a fresh "
               "profiling run and fresh sampling seeds); {lo..hi} is the sensitivity band: the same mean "
               "under each scorer variant (",
            t->nrep, t->nrep == 1 ? "" : "s");
    for (int v = 1; v < PD_SCORE_NVARIANTS; v++)
        fprintf(f, "%s%s", v > 1 ? ", " : "", pd_score_variant_name(v));
    fprintf(f, "). Positive = the runtime is faster.\n\n");
    fprintf(f, "| workload | input | tasks | phases | objects | footprint MiB |\n|---|---|---:|---:|---:|---:|\n");
    for (int w = 0; w < cfg->nworkloads; w++)
        for (int i = 0; i < cfg->ninputs; i++) {
            const pd_sim_profile *p = profs[w * cfg->ninputs + i];
            fprintf(f, "| %s | %s | %d | %d | %d | %.1f |\n", p->workload, p->input, p->ntasks,
                    p->nphases, p->nobjects, pd_sim_footprint(p) / 1048576.0);
        }
    fprintf(f, "\n");
    for (int ti = 0; ti < cfg->ntiers; ti++) {
        fprintf(f, "## %s\n\n### libpaddiser (runtime) vs each policy\n\n| workload |", cfg->tiers[ti]);
        for (int k = 1; k < EV_NPOLICIES; k++)
            fprintf(f, " vs %s |", ev_names[k]);
        fprintf(f, "\n|---|");
        for (int k = 1; k < EV_NPOLICIES; k++)
            fprintf(f, "---:|");
        fprintf(f, "\n");
        int wins = 0, losses = 0;
        for (int w = -1; w < cfg->nworkloads; w++) {
            fprintf(f, "| %s |", w < 0 ? "**all**" : cfg->workloads[w]);
            for (int k = 1; k < EV_NPOLICIES; k++) {
                ev_stat s = gain_stat(t, ti, w, k);
                print_stat(f, s);
                if (w < 0 && k != EV_GREEDY_ORACLE && k != EV_EXACT_ORACLE && !isnan(s.half)) {
                    wins += s.mean - s.half > 0;
                    losses += s.mean + s.half < 0;
                }
            }
            fprintf(f, "\n");
        }
        fprintf(f, "\nOver all workloads the runtime is significantly faster (95%% interval above 0) than "
                   "%d of the %d non-oracle baselines and significantly slower than %d.\n\n",
                wins, EV_NPOLICIES - 3, losses);
        fprintf(f, "Migration is charged to the one scored instance at the scorer's migration bandwidth "
                   "(%.2f GB/s, 4 KiB pages; docs/sim.md); at these input sizes (instances of a few ms) it weighs heavily against every policy "
                   "that moves pages, and first touch (which moves none) is hard to beat where the first "
                   "objects allocated are the hot ones.\n\n",
                t->sm[ti].migrate_gbs);
        fprintf(f, "### Makespan per policy, ms (nominal scorer; mean over inputs, capacities, repeats)\n\n| workload |");
        for (int k = 0; k < EV_NPOLICIES; k++)
            fprintf(f, " %s |", ev_names[k]);
        fprintf(f, " exact-oracle: its prediction vs the score | runtime: migration share of its makespan |\n|---|");
        for (int k = 0; k <= EV_NPOLICIES + 1; k++)
            fprintf(f, "---:|");
        fprintf(f, "\n");
        for (int w = 0; w < cfg->nworkloads; w++) {
            fprintf(f, "| %s |", cfg->workloads[w]);
            double err = 0, mig = 0;
            int n = 0;
            for (int k = 0; k < EV_NPOLICIES; k++) {
                double s = 0;
                for (int i = 0; i < cfg->ninputs; i++)
                    for (int c = 0; c < cfg->ncaps; c++)
                        for (int r = 0; r < t->nrep; r++) {
                            const ev_cell *x = cell_at(t, ti, w, i, c, k, r);
                            s += x->makespan[0];
                            if (k == EV_EXACT_ORACLE && x->predicted > 0)
                                err += fabs(x->predicted / x->makespan[0] - 1), n++;
                            if (k == EV_RUNTIME && x->makespan[0] > 0)
                                mig += x->migrate_s / x->makespan[0];
                        }
                fprintf(f, " %.3f |", 1e3 * s / (cfg->ninputs * cfg->ncaps * t->nrep));
            }
            if (n)
                fprintf(f, " %.0f%% mean abs. error |", 100 * err / n);
            else
                fprintf(f, " - |");
            fprintf(f, " %.0f%% |\n", 100 * mig / (cfg->ninputs * cfg->ncaps * t->nrep));
        }
        fprintf(f, "\n");
    }
}

/* ---- the sweep ---------------------------------------------------------------- */

static int write_csv_row(FILE *csv, const pd_sim_profile *p, const char *tier, double cap, int k,
                         int r, const ev_cell *x, size_t moved, size_t fast_pages)
{
    return fprintf(csv, "%s,%s,%.2f,%s,%s,%d,%.9g,%.6f,%.9g,%zu,%zu\n", p->workload, tier, cap,
                   p->input, ev_names[k], r, x->makespan[0], x->cov, x->migrate_s, moved,
                   fast_pages) < 0;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* One progress line per profile step: the full study is minutes of silence
 * otherwise. The ETA assumes the remaining steps cost the mean so far. */
static void progress(int done, int total, double t0, int r, const char *wl, const char *input)
{
    double el = now_s() - t0;
    char e[32], eta[48] = "";
    pd_fmt_duration(e, sizeof e, el);
    if (done > 0) {
        char rest[32];
        pd_fmt_duration(rest, sizeof rest, el / done * (total - done));
        snprintf(eta, sizeof eta, ", ETA %s", rest);
    }
    if (wl)
        fprintf(stderr, "sim study: [%d/%d] repeat %d, %s/%s (elapsed %s%s)\n", done + 1, total, r, wl, input, e,
                eta);
    else
        fprintf(stderr, "sim study: %d/%d steps done in %s\n", done, total, e);
}

int pd_sim_study(const pd_sim_study_cfg *cfg, char *err, size_t errlen)
{
    double t0 = now_s();
    int step = 0;
    int nrep = cfg->repeats > 0 ? cfg->repeats : 1, nprof = cfg->nworkloads * cfg->ninputs, rc = -1;
    int set_bw = 0; /* the study set PADDISER_MIGRATE_BW */
    ev_table t = {cfg, nrep, NULL, NULL};
    size_t ncells = (size_t)cfg->ntiers * nprof * cfg->ncaps * EV_NPOLICIES * nrep;
    t.cells = calloc(ncells ? ncells : 1, sizeof *t.cells);
    pd_sim_profile **profs = calloc((size_t)nprof, sizeof *profs);
    pd_sim_machine *pm = calloc((size_t)cfg->ntiers + 1, sizeof *pm);
    pd_score_machine *sm = calloc((size_t)cfg->ntiers + 1, sizeof *sm);
    t.sm = sm;
    double *ft = NULL, *rt = NULL, *task_time = NULL;
    ev_placement pl = {0};
    FILE *csv = NULL;
    char dir[4096];
    if (!t.cells || !profs || !pm || !sm) {
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    for (int ti = 0; ti < cfg->ntiers; ti++)
        if (pd_sim_machine_preset(cfg->tiers[ti], &pm[ti]) != 0 ||
            pd_score_machine_preset(cfg->tiers[ti], &sm[ti]) != 0) {
            snprintf(err, errlen, "unknown tier preset '%s' (optane, cxl, cxl-slow, dram)", cfg->tiers[ti]);
            goto out;
        } else if (cfg->migrate_gbs > 0) {
            sm[ti].migrate_gbs = cfg->migrate_gbs;
        }
    /* The sim backend's moves cost nothing, so the runtime would measure
     * free migration and move whatever gains anything. On the machine it
     * would measure what the scorer charges: tell it (PADDISER_MIGRATE_BW,
     * as a measured figure; the runtime knows no tier, and the presets
     * share one rate), per profile in the runtime's own time
     * (pd_score_time_ratio). A value the user set is kept. */
    set_bw = cfg->ntiers > 0 && !getenv("PADDISER_MIGRATE_BW");
    if (cfg->csv_path) {
        if (!(csv = fopen(cfg->csv_path, "w"))) {
            snprintf(err, errlen, "cannot write %s: %s", cfg->csv_path, strerror(errno));
            goto out;
        }
        fprintf(csv, "workload,tier,capacity,input,policy,repeat,makespan_s,cov,migrate_s,moved_pages,fast_pages\n");
    }
    for (int r = 0; r < nrep; r++)
        for (int w = 0; w < cfg->nworkloads; w++)
            for (int i = 0; i < cfg->ninputs; i++) {
                /* repeat 0 uses the profile directory itself, repeat r its r<r>/ */
                const char *pdir = cfg->profile_dir;
                if (pdir && r > 0) {
                    snprintf(dir, sizeof dir, "%s/r%d", cfg->profile_dir, r);
                    pdir = dir;
                }
                if (cfg->verbose)
                    progress(step, nrep * nprof, t0, r, cfg->workloads[w], cfg->inputs[i]);
                step++;
                pd_sim_profile *p = pd_sim_get_profile(cfg->workloads[w], cfg->inputs[i], pdir,
                                                       cfg->refresh, cfg->reps, err, errlen);
                if (!p)
                    goto out;
                pd_sim_profile_free(profs[w * cfg->ninputs + i]);
                profs[w * cfg->ninputs + i] = p; /* the markdown describes the last repeat's */
                free(ft), free(rt), free(pl.fast), free(task_time);
                ft = malloc(p->npages * sizeof *ft), rt = malloc(p->npages * sizeof *rt);
                pl.fast = malloc(p->npages * sizeof *pl.fast);
                task_time = malloc((size_t)p->ntasks * sizeof *task_time);
                if (!ft || !rt || !pl.fast || !task_time) {
                    snprintf(err, errlen, "out of memory");
                    goto out;
                }
                const pd_workload *wl = pd_workload_find(p->workload);
                if (set_bw) /* the scorer's moves' cost, in the runtime's time */
                    pd_score_tell_runtime_migrate_bw(&sm[0], p);
                for (int c = 0; c < cfg->ncaps; c++) {
                    size_t cap = (size_t)(cfg->caps[c] * (double)pd_sim_footprint(p));
                    double pred;
                    /* the runtime knows no tier: one placement serves every tier */
                    if (pd_wl_runtime_placement(wl, p->input, cap, PD_PLANNER_EXACT, p, rt, &pred, NULL, err,
                                                errlen) != 0)
                        goto out;
                    for (int ti = 0; ti < cfg->ntiers; ti++) {
                        uint64_t seed = 1 + (uint64_t)r;
                        if (place(EV_FIRST_TOUCH, p, &pm[ti], cap, seed, rt, &pl, err, errlen) != 0)
                            goto out;
                        memcpy(ft, pl.fast, p->npages * sizeof *ft);
                        for (int k = 0; k < EV_NPOLICIES; k++) {
                            if (place((ev_policy)k, p, &pm[ti], cap, seed, rt, &pl, err, errlen) != 0)
                                goto out;
                            size_t moved = pl.mm ? 0 : pd_score_moved_pages(ft, pl.fast, p->npages);
                            if (k == EV_RUNTIME)
                                moved = runtime_moved_pages(ft, pl.fast, p->npages);
                            size_t fast_pages = 0;
                            for (size_t g = 0; !pl.mm && g < p->npages; g++)
                                fast_pages += pl.fast[g] > 0.5;
                            ev_cell *x = cell_at(&t, ti, w, i, c, k, r);
                            x->predicted = pl.predicted;
                            for (int v = 0; v < PD_SCORE_NVARIANTS; v++) {
                                pd_score_machine mv;
                                pd_score_variant(&sm[ti], v, &mv);
                                pd_score_result res = {.task_time = task_time};
                                if (pd_score(&mv, p, pl.fast, pl.mm, moved, &res) != 0) {
                                    snprintf(err, errlen, "out of memory scoring %s", ev_names[k]);
                                    goto out;
                                }
                                x->makespan[v] = res.makespan;
                                if (v == 0)
                                    x->cov = res.cov, x->migrate_s = res.migrate_s;
                            }
                            if (csv && write_csv_row(csv, p, cfg->tiers[ti], cfg->caps[c], k, r, x, moved,
                                                     fast_pages)) {
                                snprintf(err, errlen, "cannot write %s", cfg->csv_path);
                                goto out;
                            }
                        }
                    }
                }
            }
    if (cfg->verbose)
        progress(step, nrep * nprof, t0, 0, NULL, NULL);
    if (cfg->md_path) {
        char *text = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&text, &len);
        if (!f) {
            snprintf(err, errlen, "out of memory");
            goto out;
        }
        write_markdown(f, &t, profs);
        int bad = ferror(f);
        bad |= fclose(f) != 0;
        if (bad)
            snprintf(err, errlen, "out of memory writing %s", cfg->md_path);
        else if ((bad = pd_write_file_atomic(cfg->md_path, text, len) != 0))
            snprintf(err, errlen, "cannot write %s: %s", cfg->md_path, strerror(errno));
        free(text);
        if (bad)
            goto out;
    }
    rc = 0;
out:
    if (csv && (ferror(csv) | (fclose(csv) != 0)) && rc == 0) {
        snprintf(err, errlen, "cannot write %s", cfg->csv_path);
        rc = -1;
    }
    for (int k = 0; profs && k < nprof; k++)
        pd_sim_profile_free(profs[k]);
    free(profs), free(t.cells), free(pm), free(sm), free(ft), free(rt), free(pl.fast), free(task_time);
    if (set_bw)
        unsetenv("PADDISER_MIGRATE_BW");
    return rc;
}
