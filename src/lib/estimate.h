/* Access estimation for new inputs (Eq. 1 of the design):
 *   esti_acc = prof_acc * (size_new / size_base) * alpha
 * alpha captures cache-line effects per access pattern. */
#ifndef PD_LIB_ESTIMATE_H
#define PD_LIB_ESTIMATE_H

#include <stddef.h>

#include "paddiser.h"

#define PD_CACHE_LINE 64

typedef struct {
    pd_access_hint hint;
    double alpha;        /* current alpha (1 until known) */
    unsigned refinements;/* online updates so far (random / input-dependent stencil) */
} pd_alpha_state;

/* Initial alpha for a hint: tabulated for stream/stride, the offline
 * micro-benchmark value for input-independent stencils, 1 otherwise. */
void pd_alpha_init(pd_alpha_state *st, const pd_access_hint *hint);
/* Cache-line alpha for stream/stride accesses. */
double pd_alpha_stream_stride(size_t elem_size, size_t stride);
double pd_estimate_accesses(double prof_acc, size_t size_base, size_t size_new, double alpha);
/* Online refinement from a sampled measurement of this instance. */
void pd_alpha_refine(pd_alpha_state *st, double estimated, double measured);

#endif
