/* The placement comparison: profiles (cached on disk), all policies at a
 * fast-memory capacity, the study behind docs/results.md, and
 * model-training data for the Eq. 2 model. */
#ifndef PD_SIM_STUDY_H
#define PD_SIM_STUDY_H

#include <stdio.h>

#include "sim/policies.h"
#include "sim/profile.h"
#include "sim/tier.h"
#include "sim/workload.h"

/* <dir>/<workload>-<input>.json, profiled (reps timed runs) when missing or
 * refresh; dir NULL = no cache. NULL + err on failure. */
pd_sim_profile *pd_sim_get_profile(const char *workload, const char *input, const char *dir,
                                   int refresh, int reps, char *err, size_t errlen);

typedef struct {
    pd_sim_placement place;
    pd_sim_outcome out;
} pd_sim_result;

/* All policies at capacity = cap_frac * footprint. res[PD_SIM_NPOLICIES];
 * free with pd_sim_results_free. 0 or -1 with err. */
int pd_sim_compare(const pd_sim_machine *m, const pd_sim_profile *p, double cap_frac,
                   const pd_sim_policy_opts *o, pd_sim_result *res, char *err, size_t errlen);
void pd_sim_results_free(pd_sim_result *res);

/* libpaddiser placing p's workload itself (sim backend, cap bytes, planner;
 * pd_wl_runtime_placement) and the execution model's makespan of that
 * placement. fast[p->npages] is scratch; predicted (may be NULL) gets the
 * runtime's own prediction, decision (may be NULL) what it decided.
 * 0 or -1 with err. */
int pd_sim_runtime_makespan(const pd_sim_machine *m, const pd_sim_profile *p, size_t cap,
                            pd_planner_kind planner, double *fast, double *makespan,
                            double *predicted, pd_wl_runtime_decision *decision, char *err, size_t errlen);

/* Makespan reduction of `policy` against `base`: 1 - T_policy / T_base. */
double pd_sim_gain(double t_policy, double t_base);

/* Per-task rows (policy,task,time_s,dram_share,dram_bytes) of the run-dir
 * contract's paddiser_tasks.csv; header when with_header. */
void pd_sim_tasks_csv(FILE *f, const pd_sim_profile *p, const pd_sim_result *res, int with_header);

/* The study (src/sim/evaluation.c): libpaddiser as shipped and every
 * baseline, scored by the independent scorer at each sensitivity variant,
 * `repeats` times (fresh profiles, fresh seeds). */
typedef struct {
    const char **workloads; int nworkloads;
    const char **inputs; int ninputs;
    const char **tiers; int ntiers;
    double *caps; int ncaps;
    const char *profile_dir; /* repeat r > 0 caches in <dir>/r<r> */
    int refresh, reps;
    int repeats;           /* >= 1 */
    const char *md_path;   /* markdown (docs/results.md); NULL = none */
    const char *csv_path;  /* workload,tier,capacity,input,policy,repeat,makespan_s,cov,...; NULL = none */
    const char *command;   /* shown in the markdown as how to regenerate */
    double migrate_gbs;    /* > 0: every tier's migration throughput (else the presets') */
    int verbose;
} pd_sim_study_cfg;

int pd_sim_study(const pd_sim_study_cfg *cfg, char *err, size_t errlen);

/* Model-training CSV (header region,placement,llc_mpki,ipc,prf_miss,mem_wcy,
 * l2_ld_miss,br_msp,vec_ins,l3_ld_miss,r,t_dram,t_slow,t_hybrid): one code
 * region per workload task and input, nplacements placements each. */
typedef struct {
    size_t rows;
    double linear_mape, linear_max; /* Eq. 2 with f = 1 (linear in r) vs t_hybrid */
} pd_sim_training_stats;

int pd_sim_gen_training(const pd_sim_machine *m, pd_sim_profile *const *profiles, int nprofiles,
                        int nplacements, uint64_t seed, const char *path,
                        pd_sim_training_stats *stats, char *err, size_t errlen);

#endif
