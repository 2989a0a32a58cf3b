/* Mechanistic execution model of task-parallel code on a two-tier memory.
 * Deliberately not the planner's Eq. 2: it works from the accesses
 * themselves, so Eq. 2 predictions can be checked against it.
 *
 * For task i, object o, tier t with line reads R and writes W:
 *   latency-bound    L = (R + W) * lat_t(pattern) / MLP(pattern)
 *   bandwidth-bound  B = 64 R / BWread_t + 64 W / BWwrite_t
 *   mem_{i,t}     += max(L, B);   busy_{i,t} += B
 *   T_i = compute_i + sum_t u_t * mem_{i,t}
 * u_t >= 1 is the tier's loaded-latency stretch: tasks running at the same
 * time share the tier's bandwidth, and when their demand sum_i busy_{i,t} /
 * T_i exceeds 1 (the tier busy more than 100 % of the time) u_t grows until
 * the tier delivers exactly its peak (fixed point, solved by bisection).
 * Tasks start together; when one finishes the others continue with the
 * bandwidth it freed (phases, one per task completion). */
#ifndef PD_SIM_EXEC_MODEL_H
#define PD_SIM_EXEC_MODEL_H

#include "sim/profile.h"
#include "sim/tier.h"

/* Per task and object: line accesses on each tier, by kind. */
enum { PD_SIM_FR = 0, PD_SIM_FW, PD_SIM_SR, PD_SIM_SW, PD_SIM_NSLOTS };

typedef struct {
    int ntasks, nobjects;
    double *v; /* [ntasks][nobjects][PD_SIM_NSLOTS] */
} pd_sim_split;

#define PD_SIM_SPLIT_AT(s, task, obj) (&(s)->v[((size_t)(task) * (s)->nobjects + (obj)) * PD_SIM_NSLOTS])

int pd_sim_split_init(pd_sim_split *s, const pd_sim_profile *p);
void pd_sim_split_free(pd_sim_split *s);
/* fast[g]: fraction of page g's accesses served by fast memory (0/1 for a
 * placement, the hit rate for a DRAM cache); the rest go to slow memory.
 * probe[g] (NULL = none): fraction of accesses that also read fast memory
 * before going to slow memory (the tag check of a memory-mode miss). */
void pd_sim_split_from_pages(pd_sim_split *s, const pd_sim_profile *p, const double *fast,
                             const double *probe);

/* Memory-level parallelism and latency class of an access pattern. */
double pd_sim_pattern_mlp(pd_pattern pat);
double pd_sim_pattern_latency(const pd_sim_tier *t, pd_pattern pat);

/* Runs all tasks together. task_time[ntasks] receives each task's finish
 * time (s); returns the makespan. */
double pd_sim_execute(const pd_sim_machine *m, const pd_sim_profile *p, const pd_sim_split *s,
                      double *task_time);
/* One task's time when `sharers` tasks with the same demand share each
 * tier (the planner's per-task view); split_task = PD_SIM_SPLIT_AT(s, task, 0). */
double pd_sim_task_time_shared(const pd_sim_machine *m, const pd_sim_profile *p, int task,
                               const double *split_task, int sharers);
/* Stretch factors u[t] of the first phase, all tasks running. */
int pd_sim_phase0_stretch(const pd_sim_machine *m, const pd_sim_profile *p, const pd_sim_split *s,
                          double u[PD_SIM_NTIERS]);
/* One task's time under fixed stretch factors (the planner's per-task view
 * at a reference operating point). */
double pd_sim_task_time_at(const pd_sim_machine *m, const pd_sim_profile *p, int task,
                           const double *split_task, const double u[PD_SIM_NTIERS]);
/* Memory time of a task alone (no contention), for feature derivation. */
double pd_sim_task_memtime(const pd_sim_machine *m, const pd_sim_profile *p,
                           const double *split_task);

/* Coefficient of variation (stddev / mean) of x[n]; 0 for n < 2 or mean 0. */
double pd_sim_cov(const double *x, int n);

#endif
