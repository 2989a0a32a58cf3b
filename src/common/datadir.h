/* Where the shipped data files (default_model.json, stencil_alpha.csv) live:
 * $PADDISER_DATADIR, else PREFIX/share/paddiser as configured at build time.
 * Never the source tree: an installed program must not pick up whatever file
 * sits in the checkout it was built from. */
#ifndef PD_COMMON_DATADIR_H
#define PD_COMMON_DATADIR_H

#include <stddef.h>

const char *pd_datadir(void);

/* pd_datadir()/name into out; returns 0, or -1 when it does not fit. */
int pd_datadir_file(const char *name, char *out, size_t outlen);

#endif
