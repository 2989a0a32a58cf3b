/* Access estimation for new inputs (Eq. 1 of the design):
 *   esti_acc = prof_acc * (size_new / size_base) * alpha
 * alpha captures cache-line effects per access pattern: memory-level
 * accesses (64 B line transfers) per program-level element access. See
 * docs/model.md for the tables. */
#ifndef PD_LIB_ESTIMATE_H
#define PD_LIB_ESTIMATE_H

#include <stddef.h>

#include "paddiser.h"

#define PD_CACHE_LINE 64

#define PD_ALPHA_WINDOW 16 /* refinements the online alpha is the median of */

typedef struct {
    pd_access_hint hint;
    double alpha;        /* current alpha (1 until known) */
    unsigned refinements;/* online updates so far (random / input-dependent stencil) */
    double target[PD_ALPHA_WINDOW]; /* the last refinements' targets (a ring) */
} pd_alpha_state;

/* Initial alpha for a hint: tabulated for stream/stride, the offline
 * micro-benchmark value for input-independent stencils, 1 otherwise. */
void pd_alpha_init(pd_alpha_state *st, const pd_access_hint *hint);
/* Cache-line alpha for stream/stride accesses (elem_size 0 means 8, stride
 * 0 means 1): span = elem*stride rounded up to a divisor of 64; span < 64
 * gives span/64, else lines per element (ceil(rounded elem / 64)). */
double pd_alpha_stream_stride(size_t elem_size, size_t stride);
/* 0 when prof_acc <= 0, size_base == 0 or alpha <= 0 (or non-finite). */
double pd_estimate_accesses(double prof_acc, size_t size_base, size_t size_new, double alpha);
/* Online refinement from a sampled measurement of this instance: a no-op
 * for stream/stride and input-independent stencils; otherwise the target
 * alpha * measured / estimated (bounded to [PD_ALPHA_MIN, PD_ALPHA_MAX])
 * joins the last PD_ALPHA_WINDOW targets and alpha becomes their median:
 * the first call replaces the initial guess, and one sampled count off by
 * a factor of ten (they ranged 57k-598k for one input) moves nothing.
 * Non-finite or non-positive estimates and negative measurements are
 * ignored. */
void pd_alpha_refine(pd_alpha_state *st, double estimated, double measured);

#define PD_ALPHA_MIN (1.0 / 64)
#define PD_ALPHA_MAX 64.0

/* 1 when the hint's alpha is refined online (random, unknown, NULL hint,
 * input-dependent stencil). */
int pd_alpha_is_online(const pd_access_hint *hint);
/* alpha of an input-independent stencil on elements of elem_size bytes (0
 * means 8), from the micro-benchmark table: $PADDISER_STENCIL_TABLE, else
 * stencil_alpha.csv in the data directory (common/datadir.h), else the
 * built-in copy of that table. */
double pd_alpha_stencil(size_t elem_size);
/* The built-in table (the copy of models/stencil_alpha.csv). */
void pd_stencil_table_builtin(double out[7]);
/* Where the stencil table came from ("built-in" or a path). */
const char *pd_stencil_table_source(void);
/* Reads a stencil table CSV (columns elem_size,alpha; one row for each
 * elem_size 1,2,4,...,64) into out[log2(elem_size)]. PD_OK or an error with
 * a message in err. */
int pd_stencil_table_parse(const char *path, double out[7], char *err, size_t errlen);

#endif
