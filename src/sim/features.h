/* The 8 Eq. 2 features of a task, derived from its access profile (there
 * are no hardware counters here; docs/sim.md lists the derivations). */
#ifndef PD_SIM_FEATURES_H
#define PD_SIM_FEATURES_H

#include "sim/profile.h"

#define PD_SIM_NFEATURES 8

/* t_dram: the task's all-DRAM time under the execution model. Returns -1
 * when the task has no accesses (features undefined), else 0. */
int pd_sim_task_features(const pd_sim_profile *p, int task, double t_dram,
                         double feat[PD_SIM_NFEATURES]);

#endif
