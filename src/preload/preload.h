/* libpaddiser-preload.so internals (issue #14, `paddiser run`): what the
 * hook modules share. Nothing here is exported: the only symbols the
 * preload library exports are the interposed entry points (malloc, GOMP_*,
 * ompt_start_tool, MPI_*), each marked PDP_HOOK. */
#ifndef PD_PRELOAD_H
#define PD_PRELOAD_H

#include <stddef.h>

#define PDP_HOOK __attribute__((visibility("default")))

/* Options, read once from the environment that `paddiser run` sets. */
typedef struct {
    size_t min_bytes;   /* PADDISER_RUN_MIN_BYTES: allocations tracked from this size (1 MiB) */
    int sync_every;     /* PADDISER_RUN_SYNC_EVERY: parallel regions per sync point (1) */
    int verbose;        /* PADDISER_RUN_VERBOSE: one line per hook decision on stderr */
} pdp_options;

const pdp_options *pdp_opts(void);

/* 1 while the runtime runs and hooks may call it. Starts it on the first
 * call (the library constructor calls it; a hook that runs earlier, e.g. a
 * malloc from another library's constructor, gets 0 and passes through).
 * Never starts it inside a hook that is already busy. */
int pdp_active(void);

/* Per-thread re-entrancy guard: set while a hook is inside the runtime, so
 * the runtime's own allocations (and the loader's) pass straight through. */
extern __thread int pdp_busy;

/* One line on stderr, "paddiser run: ...", when verbose (or always for
 * warnings: level 0). */
void pdp_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
