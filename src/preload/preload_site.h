/* Allocation sites and the hints file of `paddiser run` (preload_site.c).
 * An object is named by the code that allocated it, "<module>+0x<offset>"
 * (the module's file name and the return address's offset in it: the same
 * in every run whatever ASLR did), plus "#k" in preload_alloc.c. */
#ifndef PD_PRELOAD_SITE_H
#define PD_PRELOAD_SITE_H

#include <stddef.h>

#include "paddiser.h"

#define PDP_SITE_MAX 112
#define PDP_NAME_MAX (PDP_SITE_MAX + 16)

/* Once, before anything is tracked (with pdp_busy set): this library's own
 * address range and a first backtrace (which loads the unwinder then, not
 * inside a hook). */
void pdp_site_setup(void);

/* The site of an allocation whose hook was called from caller. Frames in
 * the C library, libstdc++ and libgfortran are skipped (strdup, operator
 * new): the site is the first frame outside them. Returns 0, or -1 when
 * the allocation is the runtime's own (a frame inside this library). */
int pdp_site_of(void *caller, char *site, size_t len);

/* PADDISER_RUN_HINTS=FILE: lines "<glob> <pattern> [elem_size] [stride]",
 * the glob matched (fnmatch) against the object's name and its site, the
 * first matching line wins; pattern stream, stride, stencil, random or
 * unknown; '#' starts a comment. Bad lines are reported and skipped. */
void pdp_hints_load(const char *path);
/* 1 and *out when a line matches, else 0 (pattern unknown = random). */
int pdp_hint_for(const char *name, const char *site, pd_access_hint *out);

#endif
