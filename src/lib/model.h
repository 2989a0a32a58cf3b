/* Performance model (Eq. 2 of the design):
 *   T_hybrid = T_slow - (T_slow - T_dram) * r * f(features, r)
 * f is a gradient-boosting regression over the 8 PMC features and r. */
#ifndef PD_LIB_MODEL_H
#define PD_LIB_MODEL_H

#include <stddef.h>

/* LLC_MPKI, IPC, PRF_Miss, MEM_WCY, L2_LD_Miss, BR_MSP, VEC_INS, L3_LD_Miss */
#define PD_NFEATURES 8

typedef struct pd_model pd_model;

/* path NULL = the shipped default model. NULL + err on failure. */
pd_model *pd_model_load(const char *path, char *err, size_t errlen);
void pd_model_free(pd_model *m);
/* The correlation function f(features, r), clamped so that T stays in
 * [T_dram, T_slow]. */
double pd_model_f(const pd_model *m, const double feat[PD_NFEATURES], double r);
double pd_model_predict(const pd_model *m, double t_dram, double t_slow,
                        const double feat[PD_NFEATURES], double r);

#endif
