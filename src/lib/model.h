/* Performance model (Eq. 2 of the design):
 *   T_hybrid = T_slow - (T_slow - T_dram) * r * f(features, r)
 * f is a gradient-boosting regression over the 8 PMC features and r,
 * trained with xgboost and evaluated natively (no xgboost call when loading
 * or predicting: safe after fork() and in exit handlers). A loaded model is
 * read-only; predictions on it may run from several threads at once. */
#ifndef PD_LIB_MODEL_H
#define PD_LIB_MODEL_H

#include <stddef.h>

#include "common/util.h"
#include "paddiser.h"

/* LLC_MPKI, IPC, PRF_Miss, MEM_WCY, L2_LD_Miss, BR_MSP, VEC_INS, L3_LD_Miss */
#define PD_NFEATURES 8

typedef struct pd_model pd_model;

/* Regression inputs, in this order: the 8 features, then r. */
#define PD_MODEL_NINPUTS (PD_NFEATURES + 1)
extern const char *const pd_model_input_names[PD_MODEL_NINPUTS];

/* path NULL = the shipped default model: $PADDISER_MODEL, else
 * models/default_model.json of the source tree, else the copy embedded in
 * the library, else the fallback f = 1 (one warning line on stderr) - so a
 * NULL path never fails but for lack of memory. An explicit path that does
 * not load gives NULL + err. */
pd_model *pd_model_load(const char *path, char *err, size_t errlen);
/* Loads a model from memory (xgboost 1.x JSON or UBJSON: a gbtree,
 * reg:squarederror, 9 inputs, numerical splits). Malformed models are
 * refused with a message naming what is wrong. */
pd_model *pd_model_load_buffer(const void *buf, size_t len, const char *source, char *err, size_t errlen);
/* The model that predicts f = 1 (T linear in r between T_slow and T_dram). */
pd_model *pd_model_fallback(void);
int pd_model_is_fallback(const pd_model *m);
/* Where the model came from: a path, "embedded" or "fallback (f = 1)". */
const char *pd_model_source(const pd_model *m);
/* Writes the model (xgboost JSON for *.json, UBJSON otherwise); uses
 * xgboost: defined in src/train/model_train.c, so it is in the internal
 * archive (CLI, tests) but not in libpaddiser. */
int pd_model_save(const pd_model *m, const char *path, char *err, size_t errlen);
void pd_model_free(pd_model *m);
/* The correlation function f(features, r), clamped so that T stays in
 * [T_dram, T_slow]. */
double pd_model_f(const pd_model *m, const double feat[PD_NFEATURES], double r);
double pd_model_predict(const pd_model *m, double t_dram, double t_slow,
                        const double feat[PD_NFEATURES], double r);
/* Eq. 2 with a given f: T_slow - (T_slow - T_dram) r f, kept in
 * [T_dram, T_slow]. f depends on the features and r only, so a caller that
 * keeps f per task tabulates new times without a model call. */
double pd_model_eq2(double t_dram, double t_slow, double r, double f);
/* Both in one model call for n shares (a task's whole curve: use this when
 * tabulating, one pass over the trees instead of n calls). f_out or t_out may be NULL.
 * PD_OK, PD_EINVAL or PD_ENOMEM; on a model error the values are f = 1. */
int pd_model_predict_many(const pd_model *m, double t_dram, double t_slow, const double feat[PD_NFEATURES],
                          const double *r, size_t n, double *f_out, double *t_out);

/* Any n rows at once (e.g. every task's curve at every grid share: one
 * call for the whole plan; ~0.5 us per row with the default model, rows
 * evaluated in interleaved groups of 8). Row i: features feat[i] (NULL = all missing), share r[i], times
 * t_dram[i] / t_slow[i]. f_out or t_out may be NULL; t_dram / t_slow may be
 * NULL when t_out is. */
int pd_model_predict_batch(const pd_model *m, size_t n, const double (*feat)[PD_NFEATURES], const double *r,
                           const double *t_dram, const double *t_slow, double *f_out, double *t_out);

/* Every task's predicted time curve, tabulated once for the planner:
 * npoints shares r_k = k / (npoints - 1) per task (21 matches the 5% grid;
 * more points help the exact planner between grid points), all in one
 * model call. pd_time_table_cb is a pd_plan_problem.time callback (ctx =
 * the table) interpolating linearly between the points. feat NULL: f = 1. */
typedef struct {
    int ntasks, npoints;
    double *t; /* [ntasks * npoints] */
} pd_time_table;

int pd_time_table_build(pd_time_table *tt, const pd_model *m, int ntasks, const double *t_dram,
                        const double *t_slow, const double (*feat)[PD_NFEATURES], int npoints);
double pd_time_table_cb(void *ctx, int task, double r);
void pd_time_table_free(pd_time_table *tt);

/* ---- training (src/train/model_train.c) ---------------------------------- */
/* Everything below is defined in src/train, which is linked into the CLI and
 * the tests (libpaddiser_internal.a, with xgboost) but not into the runtime
 * library libpaddiser.{a,so}, so that applications need no libxgboost. */

/* Training data CSV, agreed with the simulator (`paddiser sim`): */
#define PD_MODEL_CSV_HEADER \
    "region,placement,llc_mpki,ipc,prf_miss,mem_wcy,l2_ld_miss,br_msp,vec_ins,l3_ld_miss,r,t_dram,t_slow,t_hybrid"

typedef struct {
    size_t n;
    char **region;                 /* [n] code region names */
    char **placement;              /* [n] */
    double (*feat)[PD_NFEATURES];  /* [n] (NaN = missing) */
    double *r, *t_dram, *t_slow, *t_hybrid;
} pd_model_data;

/* Loads a CSV with the columns of PD_MODEL_CSV_HEADER (any order, extra
 * columns ignored). Empty or "nan" features are missing values; r and the
 * times must be numbers. PD_OK or an error naming file, row and column. */
int pd_model_data_load(const char *path, pd_model_data *d, char *err, size_t errlen);
void pd_model_data_free(pd_model_data *d);

/* Appends d as CSV (header PD_MODEL_CSV_HEADER, then the rows with use[i];
 * use NULL = all) to out; missing features are empty cells. PD_OK or
 * PD_ENOMEM. */
int pd_model_data_write(pd_str *out, const pd_model_data *d, const unsigned char *use);

/* Regression target f = (t_slow - t_hybrid) / ((t_slow - t_dram) * r), or
 * NaN where undefined (r <= 0, t_slow <= t_dram, non-finite). */
double pd_model_target_f(double r, double t_dram, double t_slow, double t_hybrid);

typedef struct {
    int rounds;     /* boosting rounds; 0 = 150 */
    int max_depth;  /* 0 = 4 */
    double eta;     /* learning rate; 0 = 0.1 */
    int nthread;    /* 0 = 1 */
    unsigned seed;
} pd_model_train_opts;

/* Trains f on the rows with use[i] (NULL = all) where f is defined. */
pd_model *pd_model_train(const pd_model_data *d, const unsigned char *use, const pd_model_train_opts *opt,
                         char *err, size_t errlen);

typedef struct {
    size_t rows;          /* evaluated rows (f defined) */
    double mape_t;        /* mean |T_pred - t_hybrid| / t_hybrid, in percent */
    double r2_f;          /* coefficient of determination of f */
    double mape_t_linear; /* the same two for the f = 1 baseline */
    double r2_f_linear;
} pd_model_metrics;

/* Metrics on rows with use[i] (NULL = all); PD_EINVAL when none qualify. */
int pd_model_evaluate(const pd_model *m, const pd_model_data *d, const unsigned char *use, pd_model_metrics *out);

/* Held-out split by code region (so no region is in both sets): held[i] = 1
 * for the rows of round(frac * regions) regions chosen with seed (at least
 * one region each side when there are two or more). */
int pd_model_split_regions(const pd_model_data *d, double frac, unsigned seed, unsigned char *held);

/* Synthetic training data (docs/model.md): nregions code regions with
 * random latent memory behaviour, their 8 features, and nplacements shares
 * each; times from a mechanistic model of two memory tiers. Appends CSV
 * (with header) to out. */
int pd_model_gen_synthetic(pd_str *out, int nregions, int nplacements, unsigned seed);

#endif
