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
                            double *predicted, pd_wl_runtime_decision *decision, char *err, size_t errlen)
{
    const pd_workload *w = pd_workload_find(p->workload);
    double pred;
    if (!w) {
        snprintf(err, errlen, "profile of unknown workload '%s'", p->workload);
        return -1;
    }
    if (pd_wl_runtime_placement(w, p->input, cap, planner, p, fast, &pred, decision, err, errlen) != 0)
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
