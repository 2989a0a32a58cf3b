/* `paddiser model calibrate-stencil`: the offline micro-benchmark behind the
 * stencil alpha table (docs/model.md#stencil-alpha). */
#ifndef PD_CLI_MODEL_CALIBRATE_H
#define PD_CLI_MODEL_CALIBRATE_H

#include <stddef.h>

int cmd_model_calibrate_stencil(int argc, char **argv);

/* Trace-driven measurement: line fills per element access of a 5-point 2-D
 * stencil sweep (rows of row_bytes, grid of grid_bytes, elements of elem
 * bytes) through a set-associative LRU cache of cache_bytes / ways / 64 B
 * lines, cold at the start. stream = 1 runs a plain streaming sweep instead
 * (one access per element; the result must be elem / 64). < 0 on bad
 * geometry or no memory. */
double pd_alpha_cache_sim(size_t elem, size_t row_bytes, size_t grid_bytes, size_t cache_bytes, int ways,
                          int stream);

#endif
