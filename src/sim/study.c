/* Placement study driver (see study.h). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "common/util.h"
#include "lib/page_select.h"
#include "sim/exec_model.h"
#include "sim/features.h"
#include "sim/study.h"
#include "sim/workload.h"
#include "paddiser.h"

pd_sim_profile *pd_sim_get_profile(const char *workload, const char *input, const char *dir,
                                   int refresh, int reps, char *err, size_t errlen)
{
    const pd_workload *w = pd_workload_find(workload);
    if (!w) {
        snprintf(err, errlen, "unknown workload '%s' (spgemm, bfs, stencil, dmrg)", workload);
        return NULL;
    }
    char path[4096] = "";
    if (dir) {
        if (pd_mkdir_p(dir, 0755) != 0) {
            snprintf(err, errlen, "cannot create profile directory %s: %s", dir, strerror(errno));
            return NULL;
        }
        snprintf(path, sizeof path, "%s/%s-%s.json", dir, workload, input);
        struct stat sb;
        if (!refresh && stat(path, &sb) == 0)
            return pd_sim_profile_load(path, err, errlen);
    }
    pd_sim_profile *p = pd_wl_profile(w, input, reps, err, errlen);
    if (p && dir && pd_sim_profile_save(p, path, err, errlen) != 0) {
        pd_sim_profile_free(p);
        return NULL;
    }
    return p;
}

void pd_sim_results_free(pd_sim_result *res)
{
    for (int k = 0; k < PD_SIM_NPOLICIES; k++) {
        pd_sim_placement_free(&res[k].place);
        pd_sim_outcome_free(&res[k].out);
    }
}

int pd_sim_compare(const pd_sim_machine *m, const pd_sim_profile *p, double cap_frac,
                   const pd_sim_policy_opts *o, pd_sim_result *res, char *err, size_t errlen)
{
    memset(res, 0, PD_SIM_NPOLICIES * sizeof *res);
    if (!(cap_frac >= 0 && cap_frac <= 1)) {
        snprintf(err, errlen, "capacity fraction must be in [0, 1], got %g", cap_frac);
        return -1;
    }
    size_t cap = (size_t)(cap_frac * (double)pd_sim_footprint(p));
    for (int k = 0; k < PD_SIM_NPOLICIES; k++) {
        if (pd_sim_place((pd_sim_policy)k, p, m, cap, o, &res[k].place, err, errlen) != 0 ||
            pd_sim_evaluate(m, p, &res[k].place, &res[k].out) != 0) {
            if (!err[0])
                snprintf(err, errlen, "%s: evaluation failed", pd_sim_policy_name((pd_sim_policy)k));
            pd_sim_results_free(res);
            return -1;
        }
    }
    return 0;
}

int pd_sim_runtime_makespan(const pd_sim_machine *m, const pd_sim_profile *p, size_t cap,
                            pd_planner_kind planner, double *fast, double *makespan,
                            double *predicted, char *err, size_t errlen)
{
    const pd_workload *w = pd_workload_find(p->workload);
    double pred;
    if (!w) {
        snprintf(err, errlen, "profile of unknown workload '%s'", p->workload);
        return -1;
    }
    if (pd_wl_runtime_placement(w, p->input, cap, planner, p, fast, &pred, err, errlen) != 0)
        return -1;
    pd_sim_placement pl = {.fast = fast};
    pd_sim_outcome out;
    if (pd_sim_evaluate(m, p, &pl, &out) != 0) {
        snprintf(err, errlen, "evaluation failed");
        return -1;
    }
    *makespan = out.makespan;
    if (predicted)
        *predicted = pred;
    pd_sim_outcome_free(&out);
    return 0;
}

double pd_sim_gain(double t_policy, double t_base)
{
    return t_base > 0 ? 1.0 - t_policy / t_base : 0;
}

void pd_sim_tasks_csv(FILE *f, const pd_sim_profile *p, const pd_sim_result *res, int with_header)
{
    if (with_header)
        fprintf(f, "policy,task,time_s,dram_share,dram_bytes\n");
    for (int k = 0; k < PD_SIM_NPOLICIES; k++)
        for (int t = 0; t < p->ntasks; t++)
            fprintf(f, "%s,%d,%.9g,%.6f,%zu\n", pd_sim_policy_name((pd_sim_policy)k), t,
                    res[k].out.task_time[t], res[k].out.task_share[t],
                    res[k].place.task_bytes[t]);
}

/* ---- the sweep --------------------------------------------------------------- */

/* Results indexed [tier][workload][input][cap][policy]. */
typedef struct {
    double makespan, cov, predicted;
} cell;

#define AT(c, ti, wi, ii, ci, k)                                                                 \
    (&(c)[((((size_t)(ti) * cfg->nworkloads + (wi)) * cfg->ninputs + (ii)) * cfg->ncaps + (ci)) * \
              PD_SIM_NPOLICIES +                                                                 \
          (k)])

/* coarse[((w * ninputs + i) * ncaps + c) * 2 + {0 greedy, 1 exact}], likewise
 * from_base: exact and greedy planned on the base input's estimated profile
 * (first tier; 0 where the input is the base or no base was profiled), and
 * eq2: exact on Eq. 2 curves {0 the model, 1 f = 1}. PAIR points at the two. */
#define PAIR(a, wi, ii, ci) (&(a)[(((size_t)(wi) * cfg->ninputs + (ii)) * cfg->ncaps + (ci)) * 2])

/* Mean, min and max of gains over inputs and capacities. */
typedef struct {
    double sum, min, max;
    int n;
} gain_stat;

#define GAIN_STAT_INIT {0, INFINITY, -INFINITY, 0}

static void gain_add(gain_stat *g, double v)
{
    g->sum += v, g->n++;
    g->min = fmin(g->min, v), g->max = fmax(g->max, v);
}

static double gain_mean(const gain_stat *g)
{
    return g->sum / g->n;
}
/* One example per workload (first tier, first input, capacity nearest 30%):
 * per-task times and DRAM shares of a few policies. */
typedef struct {
    int ntasks;
    double cap;
    double time[3][64], share[3][64]; /* hot-first, memory-mode, exact */
} task_example;

static const int example_pols[3] = {PD_SIM_HOT_FIRST, PD_SIM_MEMORY_MODE, PD_SIM_EXACT};

static void write_markdown(FILE *f, const pd_sim_study_cfg *cfg, const cell *cells,
                           const double *coarse, const double *from_base, const double *eq2,
                           const char *model_source, const task_example *ex, const double *rtm,
                           int base_idx, pd_sim_profile **profs)
{
    time_t now = time(NULL);
    char stamp[64];
    strftime(stamp, sizeof stamp, "%Y-%m-%d %H:%M UTC", gmtime(&now));
    fprintf(f, "# Simulated heterogeneous-memory placement results\n\n");
    fprintf(f, "Generated %s by `%s` (see docs/sim.md for the models). Do not edit by hand.\n\n",
            stamp, cfg->command ? cfg->command : "paddiser sim study");
    fprintf(f, "Each workload is a real OpenMP kernel profiled on this machine (8 tasks; inputs: ");
    for (int i = 0; i < cfg->ninputs; i++)
        fprintf(f, "%s%s", i ? ", " : "", cfg->inputs[i]);
    fprintf(f, "). Makespans come from the mechanistic execution model; the planners (greedy = "
               "the paper's Algorithm 1, exact = min-makespan, both pd_plan, share step 5%%) plan "
               "on per-task time curves of that model with tier contention held at a reference "
               "point, then re-plan with the contention their plan causes and the capacity shared "
               "pages left. Capacity is the fast-memory size as a "
               "fraction of the workload's footprint. Gain vs X = 1 - T/T_X (makespan "
               "reduction), averaged over inputs; CoV = stddev/mean of per-task times. "
               "hot-exact is hot-first on exact global counts (no sampling): the gain against it "
               "is what load balance alone brings.\n\n");
    /* footprints */
    fprintf(f, "| workload | input | tasks | objects | footprint MiB | measured task times ms (min..max) |\n");
    fprintf(f, "|---|---|---:|---:|---:|---|\n");
    for (int w = 0; w < cfg->nworkloads; w++)
        for (int i = 0; i < cfg->ninputs; i++) {
            const pd_sim_profile *p = profs[w * cfg->ninputs + i];
            double lo = INFINITY, hi = 0;
            for (int t = 0; t < p->ntasks; t++) {
                lo = fmin(lo, p->tasks[t].time_s);
                hi = fmax(hi, p->tasks[t].time_s);
            }
            fprintf(f, "| %s | %s | %d | %d | %.1f | %.2f..%.2f |\n", p->workload, p->input,
                    p->ntasks, p->nobjects, pd_sim_footprint(p) / 1048576.0, lo * 1e3, hi * 1e3);
        }
    fprintf(f, "\n");
    for (int ti = 0; ti < cfg->ntiers; ti++) {
        pd_sim_machine m;
        pd_sim_machine_preset(cfg->tiers[ti], &m);
        fprintf(f, "## %s: %s\n\n", m.name, m.desc);
        /* summary over capacities and inputs */
        fprintf(f, "Mean (max) makespan gain over all capacities and inputs:\n\n");
        fprintf(f, "| workload | exact vs first-touch | exact vs hot-first | exact vs memory-mode | "
                   "greedy vs hot-first | greedy vs memory-mode | exact vs greedy | exact vs hot-exact | CoV hot-first | CoV memory-mode | CoV greedy | CoV exact |\n");
        fprintf(f, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        for (int w = 0; w < cfg->nworkloads; w++) {
            static const int pairs[][2] = {{PD_SIM_EXACT, PD_SIM_FIRST_TOUCH}, {PD_SIM_EXACT, PD_SIM_HOT_FIRST},
                                           {PD_SIM_EXACT, PD_SIM_MEMORY_MODE}, {PD_SIM_GREEDY, PD_SIM_HOT_FIRST},
                                           {PD_SIM_GREEDY, PD_SIM_MEMORY_MODE}, {PD_SIM_EXACT, PD_SIM_GREEDY},
                                           {PD_SIM_EXACT, PD_SIM_HOT_EXACT}};
            fprintf(f, "| %s |", cfg->workloads[w]);
            for (size_t q = 0; q < PD_ARRAY_LEN(pairs); q++) {
                gain_stat g = GAIN_STAT_INIT;
                for (int i = 0; i < cfg->ninputs; i++)
                    for (int c = 0; c < cfg->ncaps; c++)
                        gain_add(&g, pd_sim_gain(AT(cells, ti, w, i, c, pairs[q][0])->makespan,
                                                 AT(cells, ti, w, i, c, pairs[q][1])->makespan));
                fprintf(f, " %.1f%% (%.1f%%) |", 100 * gain_mean(&g), 100 * g.max);
            }
            static const int covs[] = {PD_SIM_HOT_FIRST, PD_SIM_MEMORY_MODE, PD_SIM_GREEDY, PD_SIM_EXACT};
            for (size_t q = 0; q < PD_ARRAY_LEN(covs); q++) {
                double sum = 0;
                int n = 0;
                for (int i = 0; i < cfg->ninputs; i++)
                    for (int c = 0; c < cfg->ncaps; c++)
                        sum += AT(cells, ti, w, i, c, covs[q])->cov, n++;
                fprintf(f, " %.3f |", sum / n);
            }
            fprintf(f, "\n");
        }
        fprintf(f, "\n");
        for (int w = 0; w < cfg->nworkloads; w++) {
            fprintf(f, "### %s on %s\n\n", cfg->workloads[w], m.name);
            fprintf(f, "| capacity |");
            for (int k = 0; k < PD_SIM_NPOLICIES; k++)
                fprintf(f, " %s ms |", pd_sim_policy_name((pd_sim_policy)k));
            fprintf(f, " CoV ft / hot / mm / greedy / exact | exact vs ft | exact vs hot | exact vs mm | "
                       "greedy vs hot | greedy vs mm | exact vs greedy | exact pred. err |\n|---:|");
            for (int k = 0; k < PD_SIM_NPOLICIES; k++)
                fprintf(f, "---:|");
            fprintf(f, "---|---:|---:|---:|---:|---:|---:|---:|\n");
            for (int c = 0; c < cfg->ncaps; c++) {
                double ms[PD_SIM_NPOLICIES] = {0}, cv[PD_SIM_NPOLICIES] = {0};
                double g[6] = {0}, perr = 0;
                for (int i = 0; i < cfg->ninputs; i++) {
                    const cell *x = AT(cells, ti, w, i, c, 0);
                    for (int k = 0; k < PD_SIM_NPOLICIES; k++) {
                        ms[k] += x[k].makespan / cfg->ninputs;
                        cv[k] += x[k].cov / cfg->ninputs;
                    }
                    g[0] += pd_sim_gain(x[PD_SIM_EXACT].makespan, x[PD_SIM_FIRST_TOUCH].makespan);
                    g[1] += pd_sim_gain(x[PD_SIM_EXACT].makespan, x[PD_SIM_HOT_FIRST].makespan);
                    g[2] += pd_sim_gain(x[PD_SIM_EXACT].makespan, x[PD_SIM_MEMORY_MODE].makespan);
                    g[3] += pd_sim_gain(x[PD_SIM_GREEDY].makespan, x[PD_SIM_HOT_FIRST].makespan);
                    g[4] += pd_sim_gain(x[PD_SIM_GREEDY].makespan, x[PD_SIM_MEMORY_MODE].makespan);
                    g[5] += pd_sim_gain(x[PD_SIM_EXACT].makespan, x[PD_SIM_GREEDY].makespan);
                    perr += fabs(x[PD_SIM_EXACT].predicted / x[PD_SIM_EXACT].makespan - 1);
                }
                fprintf(f, "| %.0f%% |", 100 * cfg->caps[c]);
                for (int k = 0; k < PD_SIM_NPOLICIES; k++)
                    fprintf(f, " %.2f |", ms[k] * 1e3);
                fprintf(f, " %.2f / %.2f / %.2f / %.2f / %.2f |", cv[0], cv[1], cv[2], cv[3], cv[4]);
                for (int q = 0; q < 6; q++)
                    fprintf(f, " %.1f%% |", 100 * g[q] / cfg->ninputs);
                fprintf(f, " %.1f%% |\n", 100 * perr / cfg->ninputs);
            }
            fprintf(f, "\n");
        }
        if (ti == 0 && rtm && base_idx >= 0) {
            fprintf(f, "### libpaddiser end to end (%s, input base)\n\n", m.name);
            fprintf(f, "The runtime itself placing the workload: `pd_init` with the simulated "
                       "backend and the capacity, objects registered with their patterns, tasks "
                       "marked, one instance profiled (page sampling: one 4 KB page per 2 MB "
                       "region and at least 64 per object, counts of touched intervals; Eq. 1/Eq. 2 "
                       "with the shipped model; "
                       "pd_plan), pages moved at the sync point; the pages the backend then holds "
                       "in fast memory are evaluated by the execution model (`paddiser sim "
                       "runtime`). Makespan in ms.\n\n");
            fprintf(f, "| workload | capacity | runtime, exact | runtime, greedy | sim exact | hot-first | memory-mode |\n");
            fprintf(f, "|---|---:|---:|---:|---:|---:|---:|\n");
            for (int w = 0; w < cfg->nworkloads; w++)
                for (int c = 0; c < cfg->ncaps; c++) {
                    const double *r = &rtm[((size_t)w * cfg->ncaps + c) * 2];
                    if (r[0] <= 0)
                        continue;
                    fprintf(f, "| %s | %.0f%% | %.2f | %.2f | %.2f | %.2f | %.2f |\n", cfg->workloads[w],
                            100 * cfg->caps[c], r[0] * 1e3, r[1] * 1e3,
                            AT(cells, 0, w, base_idx, c, PD_SIM_EXACT)->makespan * 1e3,
                            AT(cells, 0, w, base_idx, c, PD_SIM_HOT_FIRST)->makespan * 1e3,
                            AT(cells, 0, w, base_idx, c, PD_SIM_MEMORY_MODE)->makespan * 1e3);
                }
            fprintf(f, "\nAt these sizes (2-13 MiB objects, runs of a few ms) the sampler sees which "
                       "task touches which part of an object, but a sample counts the intervals "
                       "its page was touched in, not the accesses: a randomly accessed page "
                       "touched thousands of times per interval counts as much as a streamed one "
                       "touched once, so hot random data (BFS's level, SpGEMM's B) is "
                       "under-ranked. See docs/sim.md and docs/runtime.md.\n\n");
        }
        if (ti == 0 && ex) {
            fprintf(f, "### per-task times, one example per workload (%s, input %s)\n\n", m.name,
                    cfg->inputs[0]);
            fprintf(f, "Task time in ms (DRAM share of the task's accesses). The makespan is the "
                       "largest time; load-balanced placement shortens the critical task at the "
                       "expense of tasks that have slack.\n\n");
            for (int w = 0; w < cfg->nworkloads; w++) {
                const task_example *e = &ex[w];
                fprintf(f, "%s at %.0f%% capacity:\n\n| task |", cfg->workloads[w], 100 * e->cap);
                for (int q = 0; q < 3; q++)
                    fprintf(f, " %s |", pd_sim_policy_name((pd_sim_policy)example_pols[q]));
                fprintf(f, "\n|---:|---:|---:|---:|\n");
                for (int t = 0; t < e->ntasks; t++) {
                    fprintf(f, "| %d |", t);
                    for (int q = 0; q < 3; q++)
                        fprintf(f, " %.2f (%.0f%%) |", e->time[q][t] * 1e3, 100 * e->share[q][t]);
                    fprintf(f, "\n");
                }
                fprintf(f, "\n");
            }
        }
        if (ti == 0 && from_base) {
            fprintf(f, "### planning from the base input (%s)\n\n", m.name);
            fprintf(f, "For the new inputs, the planners either see the input's own profile (as "
                       "in the tables above) or, as the runtime does, the base input's profile "
                       "estimated for the new sizes (Eq. 1: per-object counts scaled by size, "
                       "page hotness stretched over the new pages, compute scaled by accesses). "
                       "Gain vs hot-first (which observes the actual run), mean / min over the new "
                       "inputs and capacities.\n\n");
            fprintf(f, "| workload | exact, own profile | exact, from base | greedy, from base | exact from base vs own |\n|---|---:|---:|---:|---:|\n");
            for (int w = 0; w < cfg->nworkloads; w++) {
                gain_stat g[4] = {GAIN_STAT_INIT, GAIN_STAT_INIT, GAIN_STAT_INIT, GAIN_STAT_INIT};
                for (int i = 0; i < cfg->ninputs; i++)
                    for (int c = 0; c < cfg->ncaps; c++) {
                        const double *fb = PAIR(from_base, w, i, c);
                        if (fb[1] <= 0)
                            continue;
                        double hot = AT(cells, 0, w, i, c, PD_SIM_HOT_FIRST)->makespan;
                        double own = AT(cells, 0, w, i, c, PD_SIM_EXACT)->makespan;
                        gain_add(&g[0], pd_sim_gain(own, hot));
                        gain_add(&g[1], pd_sim_gain(fb[1], hot));
                        gain_add(&g[2], pd_sim_gain(fb[0], hot));
                        gain_add(&g[3], pd_sim_gain(fb[1], own));
                    }
                if (g[0].n == 0)
                    continue;
                fprintf(f, "| %s |", cfg->workloads[w]);
                for (int q = 0; q < 4; q++)
                    fprintf(f, " %.1f%% / %.1f%% |", 100 * gain_mean(&g[q]), 100 * g[q].min);
                fprintf(f, "\n");
            }
            fprintf(f, "\n");
        }
        if (ti == 0 && eq2) {
            fprintf(f, "### planning on Eq. 2 curves (%s)\n\n", m.name);
            fprintf(f, "The planners above use the execution model's own per-task curves. Here "
                       "the exact planner uses the runtime's Eq. 2 instead: T_dram and T_slow of "
                       "each task from the execution model, f from the performance model (%s) "
                       "over the profile-derived features, or f = 1 (time linear in r). The "
                       "placement is evaluated by the execution model. Gain vs hot-first, mean / "
                       "min over inputs and capacities.\n\n", model_source);
            fprintf(f, "| workload | exact, execution-model curves | exact, Eq. 2 model | exact, Eq. 2 f = 1 |\n|---|---:|---:|---:|\n");
            for (int w = 0; w < cfg->nworkloads; w++) {
                gain_stat g[3] = {GAIN_STAT_INIT, GAIN_STAT_INIT, GAIN_STAT_INIT};
                for (int i = 0; i < cfg->ninputs; i++)
                    for (int c = 0; c < cfg->ncaps; c++) {
                        const double *e = PAIR(eq2, w, i, c);
                        double hot = AT(cells, 0, w, i, c, PD_SIM_HOT_FIRST)->makespan;
                        gain_add(&g[0], pd_sim_gain(AT(cells, 0, w, i, c, PD_SIM_EXACT)->makespan, hot));
                        gain_add(&g[1], pd_sim_gain(e[0], hot));
                        gain_add(&g[2], pd_sim_gain(e[1], hot));
                    }
                fprintf(f, "| %s |", cfg->workloads[w]);
                for (int q = 0; q < 3; q++)
                    fprintf(f, " %.1f%% / %.1f%% |", 100 * gain_mean(&g[q]), 100 * g[q].min);
                fprintf(f, "\n");
            }
            fprintf(f, "\n");
        }
        if (ti == 0 && coarse) {
            double st = cfg->opts.step > 0 ? cfg->opts.step : 0.05;
            fprintf(f, "### exact vs greedy by planner step (%s)\n\n", m.name);
            fprintf(f, "Makespan gain of the exact planner over the greedy, mean / max / min over "
                       "inputs and capacities. On the share grid both reach the same predicted "
                       "makespan; the exact planner also refines between grid points, which pays "
                       "off when a grid step of the critical task does not fit the capacity left. "
                       "Negative values are where the planners' per-task curves (contention held "
                       "at a reference point, shared pages paid by every task) mislead it.\n\n");
            fprintf(f, "| workload | step %.2f | step %.2f |\n|---|---:|---:|\n", st, cfg->coarse_step);
            for (int w = 0; w < cfg->nworkloads; w++) {
                gain_stat g[2] = {GAIN_STAT_INIT, GAIN_STAT_INIT};
                for (int i = 0; i < cfg->ninputs; i++)
                    for (int c = 0; c < cfg->ncaps; c++) {
                        const double *cc = PAIR(coarse, w, i, c);
                        gain_add(&g[0], pd_sim_gain(AT(cells, 0, w, i, c, PD_SIM_EXACT)->makespan,
                                                    AT(cells, 0, w, i, c, PD_SIM_GREEDY)->makespan));
                        gain_add(&g[1], pd_sim_gain(cc[1], cc[0]));
                    }
                fprintf(f, "| %s |", cfg->workloads[w]);
                for (int q = 0; q < 2; q++)
                    fprintf(f, " %.1f%% / %.1f%% / %.1f%% |", 100 * gain_mean(&g[q]), 100 * g[q].max,
                            100 * g[q].min);
                fprintf(f, "\n");
            }
            fprintf(f, "\n");
        }
    }
}

/* The execution model's makespan of policy k's placement under options o. */
static int placed_makespan(pd_sim_policy k, const pd_sim_profile *p, const pd_sim_machine *m,
                           size_t cap, const pd_sim_policy_opts *o, double *makespan, char *err,
                           size_t errlen)
{
    pd_sim_placement pl;
    pd_sim_outcome out;
    if (pd_sim_place(k, p, m, cap, o, &pl, err, errlen) != 0)
        return -1;
    int bad = pd_sim_evaluate(m, p, &pl, &out);
    pd_sim_placement_free(&pl);
    if (bad) {
        snprintf(err, errlen, "evaluation failed");
        return -1;
    }
    *makespan = out.makespan;
    pd_sim_outcome_free(&out);
    return 0;
}

int pd_sim_study(const pd_sim_study_cfg *cfg, char *err, size_t errlen)
{
    int rc = -1, nprof = cfg->nworkloads * cfg->ninputs;
    size_t ncells = (size_t)cfg->ntiers * nprof * cfg->ncaps * PD_SIM_NPOLICIES;
    pd_sim_profile **profs = calloc((size_t)nprof, sizeof *profs);
    cell *cells = calloc(ncells ? ncells : 1, sizeof *cells);
    double *coarse = cfg->coarse_step > 0 ? calloc((size_t)nprof * cfg->ncaps * 2, sizeof *coarse) : NULL;
    double *from_base = calloc((size_t)nprof * cfg->ncaps * 2 + 1, sizeof *from_base);
    int base_idx = -1;
    for (int i = 0; i < cfg->ninputs; i++)
        if (!strcmp(cfg->inputs[i], "base"))
            base_idx = i;
    pd_sim_profile *predicted = NULL;
    FILE *csv = NULL;
    task_example *ex = calloc((size_t)cfg->nworkloads + 1, sizeof *ex);
    /* rtm[(w * ncaps + c) * 2 + {exact, greedy}]: libpaddiser's placement,
     * at up to four capacities nearest 10, 30, 50, 70 % */
    double *rtm = cfg->runtime ? calloc((size_t)cfg->nworkloads * cfg->ncaps * 2 + 1, sizeof *rtm) : NULL;
    unsigned char rt_cap[256] = {0};
    for (int q = 0; q < 4 && cfg->ncaps <= 256; q++) {
        int best = 0;
        for (int c = 1; c < cfg->ncaps; c++)
            if (fabs(cfg->caps[c] - (0.1 + 0.2 * q)) < fabs(cfg->caps[best] - (0.1 + 0.2 * q)))
                best = c;
        rt_cap[best] = 1;
    }
    int ex_cap = 0;
    for (int c = 1; c < cfg->ncaps; c++)
        if (fabs(cfg->caps[c] - 0.3) < fabs(cfg->caps[ex_cap] - 0.3))
            ex_cap = c;
    pd_model *model = NULL, *linear = NULL;
    double *eq2 = NULL;
    if (cfg->eq2) {
        model = pd_model_load(cfg->model_path, err, errlen);
        linear = pd_model_fallback();
        eq2 = calloc((size_t)nprof * cfg->ncaps * 2 + 1, sizeof *eq2);
        if (!model || !linear || !eq2) {
            if (!model && cfg->model_path)
                goto out; /* err names the model file */
            snprintf(err, errlen, "out of memory");
            goto out;
        }
    }
    if (!profs || !cells || !from_base || !ex || (cfg->coarse_step > 0 && !coarse) ||
        (cfg->runtime && !rtm)) {
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    for (int ti = 0; ti < cfg->ntiers; ti++) {
        pd_sim_machine m;
        if (pd_sim_machine_preset(cfg->tiers[ti], &m) != 0) {
            snprintf(err, errlen, "unknown tier preset '%s' (optane, cxl, dram)", cfg->tiers[ti]);
            goto out;
        }
    }
    for (int w = 0; w < cfg->nworkloads; w++)
        for (int i = 0; i < cfg->ninputs; i++) {
            if (cfg->verbose)
                fprintf(stderr, "sim study: profile %s/%s\n", cfg->workloads[w], cfg->inputs[i]);
            profs[w * cfg->ninputs + i] = pd_sim_get_profile(cfg->workloads[w], cfg->inputs[i],
                                                             cfg->profile_dir, cfg->refresh,
                                                             cfg->reps, err, errlen);
            if (!profs[w * cfg->ninputs + i])
                goto out;
        }
    if (cfg->csv_path) {
        csv = fopen(cfg->csv_path, "w");
        if (!csv) {
            snprintf(err, errlen, "cannot write %s: %s", cfg->csv_path, strerror(errno));
            goto out;
        }
        fprintf(csv, "tier,workload,input,capacity,policy,makespan_s,cov,mean_s,predicted_makespan_s,fast_bytes\n");
    }
    for (int ti = 0; ti < cfg->ntiers; ti++) {
        pd_sim_machine m;
        pd_sim_machine_preset(cfg->tiers[ti], &m);
        for (int w = 0; w < cfg->nworkloads; w++)
            for (int i = 0; i < cfg->ninputs; i++) {
                const pd_sim_profile *p = profs[w * cfg->ninputs + i];
                pd_sim_profile_free(predicted);
                predicted = NULL;
                if (ti == 0 && base_idx >= 0 && i != base_idx) {
                    predicted = pd_sim_profile_predict(profs[w * cfg->ninputs + base_idx], p, err, errlen);
                    if (!predicted)
                        goto out;
                }
                if (cfg->verbose)
                    fprintf(stderr, "sim study: %s %s/%s\n", m.name, p->workload, p->input);
                for (int c = 0; c < cfg->ncaps; c++) {
                    pd_sim_result res[PD_SIM_NPOLICIES];
                    if (pd_sim_compare(&m, p, cfg->caps[c], &cfg->opts, res, err, errlen) != 0)
                        goto out;
                    size_t cap = (size_t)(cfg->caps[c] * (double)pd_sim_footprint(p));
                    if (rtm && ti == 0 && i == base_idx && rt_cap[c]) {
                        double *fast = malloc(p->npages * sizeof *fast);
                        int bad = !fast;
                        if (bad)
                            snprintf(err, errlen, "out of memory");
                        for (int q = 0; !bad && q < 2; q++)
                            bad = pd_sim_runtime_makespan(&m, p, cap, q ? PD_PLANNER_GREEDY : PD_PLANNER_EXACT,
                                                          fast, &rtm[((size_t)w * cfg->ncaps + c) * 2 + q],
                                                          NULL, err, errlen) != 0;
                        free(fast);
                        if (bad) {
                            pd_sim_results_free(res);
                            goto out;
                        }
                    }
                    if (ti == 0 && i == 0 && c == ex_cap && p->ntasks <= 64) {
                        ex[w].ntasks = p->ntasks;
                        ex[w].cap = cfg->caps[c];
                        for (int q = 0; q < 3; q++)
                            for (int t = 0; t < p->ntasks; t++) {
                                ex[w].time[q][t] = res[example_pols[q]].out.task_time[t];
                                ex[w].share[q][t] = res[example_pols[q]].out.task_share[t];
                            }
                    }
                    for (int k = 0; k < PD_SIM_NPOLICIES; k++) {
                        cell *x = AT(cells, ti, w, i, c, k);
                        x->makespan = res[k].out.makespan;
                        x->cov = res[k].out.cov;
                        x->predicted = res[k].place.predicted_makespan;
                        if (csv)
                            fprintf(csv, "%s,%s,%s,%.2f,%s,%.9g,%.6f,%.9g,%.9g,%zu\n", m.name,
                                    p->workload, p->input, cfg->caps[c],
                                    pd_sim_policy_name((pd_sim_policy)k), x->makespan, x->cov,
                                    res[k].out.mean, x->predicted, res[k].place.fast_bytes);
                    }
                    pd_sim_results_free(res);
                    /* the planners again: on the base input's estimate, on Eq. 2
                     * curves, at the coarse step (first tier only) */
                    for (int q = 0; predicted && q < 2; q++) {
                        pd_sim_policy_opts o = cfg->opts;
                        o.plan_on = predicted;
                        if (placed_makespan(q ? PD_SIM_EXACT : PD_SIM_GREEDY, p, &m, cap, &o,
                                            &PAIR(from_base, w, i, c)[q], err, errlen) != 0)
                            goto out;
                    }
                    for (int q = 0; eq2 && ti == 0 && q < 2; q++) {
                        pd_sim_policy_opts o = cfg->opts;
                        o.eq2 = q ? linear : model;
                        if (placed_makespan(PD_SIM_EXACT, p, &m, cap, &o, &PAIR(eq2, w, i, c)[q], err,
                                            errlen) != 0)
                            goto out;
                    }
                    for (int q = 0; coarse && ti == 0 && q < 2; q++) {
                        pd_sim_policy_opts o = cfg->opts;
                        o.step = cfg->coarse_step;
                        if (placed_makespan(q ? PD_SIM_EXACT : PD_SIM_GREEDY, p, &m, cap, &o,
                                            &PAIR(coarse, w, i, c)[q], err, errlen) != 0)
                            goto out;
                    }
                }
            }
    }
    if (cfg->md_path) {
        char *text = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&text, &len);
        if (!f) {
            snprintf(err, errlen, "out of memory");
            goto out;
        }
        const char *src = model ? pd_model_source(model) : "";
        if (strstr(src, "models/")) /* no absolute path of this checkout in the docs */
            src = strstr(src, "models/");
        write_markdown(f, cfg, cells, coarse, base_idx >= 0 && cfg->ninputs > 1 ? from_base : NULL, eq2,
                       src, ex, rtm, base_idx, profs);
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
    free(profs);
    free(cells);
    free(coarse);
    free(from_base);
    free(eq2);
    free(ex);
    free(rtm);
    pd_model_free(model);
    pd_model_free(linear);
    pd_sim_profile_free(predicted);
    return rc;
}

/* ---- model-training data -------------------------------------------------------- */

static double task_time_with(const pd_sim_machine *m, const pd_sim_profile *p, int t,
                             const double *fast, double *split, double *r_out)
{
    memset(split, 0, (size_t)p->nobjects * PD_SIM_NSLOTS * sizeof *split);
    double acc = 0, facc = 0;
    for (int o = 0; o < p->nobjects; o++) {
        const pd_sim_object *ob = &p->objects[o];
        double *sl = split + (size_t)o * PD_SIM_NSLOTS;
        for (size_t g = ob->page_base; g < ob->page_base + ob->npages; g++) {
            double r = (double)p->tasks[t].reads[g], w = (double)p->tasks[t].writes[g];
            double f = fast ? fast[g] : 0;
            sl[PD_SIM_FR] += f * r, sl[PD_SIM_FW] += f * w;
            sl[PD_SIM_SR] += (1 - f) * r, sl[PD_SIM_SW] += (1 - f) * w;
            acc += r + w, facc += f * (r + w);
        }
    }
    if (r_out)
        *r_out = acc > 0 ? facc / acc : 0;
    return pd_sim_task_time_shared(m, p, t, split, p->ntasks);
}

int pd_sim_gen_training(const pd_sim_machine *m, pd_sim_profile *const *profiles, int nprofiles,
                        int nplacements, uint64_t seed, const char *path,
                        pd_sim_training_stats *stats, char *err, size_t errlen)
{
    pd_sim_training_stats st = {0};
    FILE *f = fopen(path, "w");
    if (!f) {
        snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
        return -1;
    }
    fprintf(f, "region,placement,llc_mpki,ipc,prf_miss,mem_wcy,l2_ld_miss,br_msp,vec_ins,l3_ld_miss,r,t_dram,t_slow,t_hybrid\n");
    int rc = 0;
    for (int pi = 0; pi < nprofiles && rc == 0; pi++) {
        const pd_sim_profile *p = profiles[pi];
        double *split = calloc((size_t)p->nobjects * PD_SIM_NSLOTS, sizeof *split);
        double *fast = malloc(p->npages * sizeof *fast), *ones = malloc(p->npages * sizeof *ones);
        size_t *order = malloc(p->npages * sizeof *order);
        uint64_t *cnt = malloc(p->npages * sizeof *cnt);
        if (!split || !fast || !ones || !order || !cnt) {
            snprintf(err, errlen, "out of memory");
            rc = -1;
        }
        for (int t = 0; t < p->ntasks && rc == 0; t++) {
            const pd_sim_task *tk = &p->tasks[t];
            for (size_t g = 0; g < p->npages; g++)
                ones[g] = 1;
            double t_dram = task_time_with(m, p, t, ones, split, NULL);
            double t_slow = task_time_with(m, p, t, NULL, split, NULL);
            double feat[PD_SIM_NFEATURES];
            if (pd_sim_task_features(p, t, t_dram, feat) != 0)
                continue;
            for (size_t g = 0; g < p->npages; g++)
                cnt[g] = tk->reads[g] + tk->writes[g];
            size_t nt = pd_select_hottest(cnt, p->npages, p->npages, order);
            uint64_t s = seed + (uint64_t)pi * 1000 + (uint64_t)t;
            for (int k = 0; k < nplacements; k++) {
                /* half hottest-first prefixes, half random page subsets */
                double frac = (k / 2 + 1.0) / (nplacements / 2 + 1.0);
                for (size_t g = 0; g < p->npages; g++)
                    fast[g] = 0;
                if (k % 2 == 0) {
                    for (size_t a = 0; a < (size_t)(frac * nt); a++)
                        fast[order[a]] = 1;
                } else {
                    for (size_t g = 0; g < p->npages; g++)
                        fast[g] = pd_wl_uniform(&s) < frac;
                }
                double r;
                double th = task_time_with(m, p, t, fast, split, &r);
                fprintf(f, "%s/%s/task%d,%s%.2f,", p->workload, p->input, t,
                        k % 2 == 0 ? "hot" : "rand", frac);
                for (int q = 0; q < 8; q++)
                    fprintf(f, "%.6g,", feat[q]);
                fprintf(f, "%.6f,%.9g,%.9g,%.9g\n", r, t_dram, t_slow, th);
                double lin = t_slow - (t_slow - t_dram) * r, e = th > 0 ? fabs(lin / th - 1) : 0;
                st.rows++;
                st.linear_mape += e;
                st.linear_max = fmax(st.linear_max, e);
            }
        }
        free(split), free(fast), free(ones), free(order), free(cnt);
    }
    int bad = ferror(f);
    if ((fclose(f) != 0 || bad) && rc == 0) {
        snprintf(err, errlen, "cannot write %s", path);
        rc = -1;
    }
    if (st.rows)
        st.linear_mape /= (double)st.rows;
    if (stats)
        *stats = st;
    return rc;
}
