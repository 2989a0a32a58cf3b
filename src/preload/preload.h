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
    int region_cost_pct; /* PADDISER_RUN_REGION_COST_PCT: a region whose tracking costs
                            more than this share of its time runs untracked (10; 0: never) */
    size_t keep_freed;  /* PADDISER_RUN_KEEP_FREED: bytes of freed tracked blocks kept for
                           the next allocation they fit (an eighth of RAM; 0: none) */
} pdp_options;

const pdp_options *pdp_opts(void);

/* 1 while the runtime runs and hooks may call it. Starts it on the first
 * call when the library constructor has not yet (an OpenMP region in
 * another library's constructor); never inside a busy hook, and while
 * another thread is starting it, 0 (that caller passes through). The
 * allocation hooks use pdp_running() instead. */
int pdp_active(void);

/* 1 while the runtime runs; never starts it. The allocation hooks use this
 * one: a malloc from another library's constructor (or from the loader,
 * which may hold its own lock then) must not start the runtime. */
int pdp_running(void);

/* Per-thread re-entrancy guard: set while a hook is inside the runtime, so
 * the runtime's own allocations (and the loader's) pass straight through.
 * initial-exec: reading it never allocates (a preloaded library's TLS is in
 * the static block), so the malloc hook may read it on any thread. */
extern __thread int pdp_busy __attribute__((tls_model("initial-exec")));

/* ---- sync points (the OpenMP and MPI hooks) -------------------------------
 * pdp_sync(): pd_sync_point() with pdp_busy set, then pdp_after_sync();
 * returns pd_sync_point's status. A hook that calls pd_sync_point() itself
 * calls pdp_after_sync() right after it, on the same thread: it appends the
 * sync point's line to $PADDISER_RUN_OUT/plan.log (instance, predicted
 * makespan, bytes moved, hot-first decision; nothing without
 * PADDISER_RUN_OUT). Both are safe with pdp_busy set or not. */
int pdp_sync(void);
void pdp_after_sync(void);

/* preload_mpi.c, only in libpaddiser-preload-mpi.so (weak: NULL in the
 * plain library): 1 while the MPI layer runs the rank's task. Then the
 * rank is the task and the node's sync points are the MPI layer's alone:
 * an OpenMP region's end taking one would call the node's gather on this
 * rank alone, so regions are not tasks then (preload_regions.c). */
int pdp_mpi_running(void) __attribute__((weak, visibility("hidden")));

/* ---- between preload_main.c and the allocation and output modules -------- */
/* preload_alloc.c: before pd_init (fork handlers first, so that ours run
 * after the runtime's in the parent's prepare), the real mmap, the hints. */
void pdp_alloc_setup(void);
/* preload_alloc.c: the fork() child forgets the parent's tracked blocks. */
void pdp_alloc_forget(void);
/* preload_out.c: PADDISER_RUN_OUT=DIR: DIR/tasks.csv through the runtime's
 * PADDISER_TASKS_CSV (unless set), DIR/plan.log opened for appending. */
void pdp_out_setup(void);
/* preload_out.c: an object registered (id >= 0) under name with size bytes. */
void pdp_out_object(int id, const char *name, size_t size);
/* preload_out.c: at exit, before pd_finalize: DIR/objects.csv. */
void pdp_out_finish(void);

/* One line on stderr, "paddiser run: ...", when verbose (or always for
 * warnings: level 0). */
void pdp_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
