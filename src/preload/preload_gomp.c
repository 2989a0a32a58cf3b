/* GCC's libgomp (gcc and gfortran -fopenmp) has no OMPT, so its entry points
 * are interposed: every way a parallel region starts (GOMP_parallel, the
 * GOMP_parallel_loop_* family, GOMP_parallel_sections, GOMP_parallel_reductions
 * and the old GOMP_parallel_start/_end ABI) runs the outlined function
 * through a trampoline that begins the thread's task before the body and
 * ends it at the region's implicit barrier; the barriers a thread can wait
 * in inside the region (GOMP_barrier, the ends of worksharing loops and
 * sections, their cancel variants) pause its task around the wait.
 *
 * The prototypes are libgomp's external ABI (libgomp_g.h in GCC's sources,
 * not installed by Debian), declared here from its documentation.
 *
 * When the GOMP_* functions come from LLVM's libomp (it exports them for
 * GCC-built code), every hook passes straight through: libomp reports the
 * same regions to the OMPT tool (preload_ompt.c), and a region is counted
 * once. */
#include <dlfcn.h>
#include <omp.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

#include "preload/preload.h"
#include "preload/preload_regions.h"

/* The program's own OpenMP runtime answers (the library links none): these
 * hooks run inside its teams, where it is loaded. */
#pragma weak omp_get_thread_num

typedef void (*gomp_fn)(void *);

/* The real entry points, resolved once (dlsym RTLD_NEXT). */
static struct {
    void (*parallel)(gomp_fn, void *, unsigned, unsigned);
    unsigned (*parallel_reductions)(gomp_fn, void *, unsigned, unsigned);
    void (*parallel_start)(gomp_fn, void *, unsigned);
    void (*parallel_end)(void);
    void (*loop_static)(gomp_fn, void *, unsigned, long, long, long, long, unsigned);
    void (*loop_dynamic)(gomp_fn, void *, unsigned, long, long, long, long, unsigned);
    void (*loop_guided)(gomp_fn, void *, unsigned, long, long, long, long, unsigned);
    void (*loop_runtime)(gomp_fn, void *, unsigned, long, long, long, unsigned);
    void (*loop_nonmonotonic_dynamic)(gomp_fn, void *, unsigned, long, long, long, long, unsigned);
    void (*loop_nonmonotonic_guided)(gomp_fn, void *, unsigned, long, long, long, long, unsigned);
    void (*loop_nonmonotonic_runtime)(gomp_fn, void *, unsigned, long, long, long, unsigned);
    void (*loop_maybe_nonmonotonic_runtime)(gomp_fn, void *, unsigned, long, long, long, unsigned);
    void (*loop_static_start)(gomp_fn, void *, unsigned, long, long, long, long);
    void (*loop_dynamic_start)(gomp_fn, void *, unsigned, long, long, long, long);
    void (*loop_guided_start)(gomp_fn, void *, unsigned, long, long, long, long);
    void (*loop_runtime_start)(gomp_fn, void *, unsigned, long, long, long);
    void (*sections)(gomp_fn, void *, unsigned, unsigned, unsigned);
    void (*sections_start)(gomp_fn, void *, unsigned, unsigned);
    void (*barrier)(void);
    bool (*barrier_cancel)(void);
    void (*loop_end)(void);
    bool (*loop_end_cancel)(void);
    void (*sections_end)(void);
    bool (*sections_end_cancel)(void);
} real;

static int provider_is_libomp; /* the GOMP_* functions are libomp's */
static pthread_once_t resolve_once = PTHREAD_ONCE_INIT;

#define RESOLVE(field, name) (*(void **)&real.field = dlsym(RTLD_NEXT, name))

/* libomp, unlike libgomp, exports __kmpc_fork_call. */
static int is_libomp(void *fn)
{
    Dl_info info;
    if (!fn || !dladdr(fn, &info) || !info.dli_fname)
        return 0;
    void *h = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
    if (!h)
        return 0;
    int yes = dlsym(h, "__kmpc_fork_call") != NULL;
    dlclose(h);
    return yes;
}

static void resolve(void)
{
    int saved = pdp_busy;
    pdp_busy = 1; /* dlsym and dlopen may allocate */
    RESOLVE(parallel, "GOMP_parallel");
    RESOLVE(parallel_reductions, "GOMP_parallel_reductions");
    RESOLVE(parallel_start, "GOMP_parallel_start");
    RESOLVE(parallel_end, "GOMP_parallel_end");
    RESOLVE(loop_static, "GOMP_parallel_loop_static");
    RESOLVE(loop_dynamic, "GOMP_parallel_loop_dynamic");
    RESOLVE(loop_guided, "GOMP_parallel_loop_guided");
    RESOLVE(loop_runtime, "GOMP_parallel_loop_runtime");
    RESOLVE(loop_nonmonotonic_dynamic, "GOMP_parallel_loop_nonmonotonic_dynamic");
    RESOLVE(loop_nonmonotonic_guided, "GOMP_parallel_loop_nonmonotonic_guided");
    RESOLVE(loop_nonmonotonic_runtime, "GOMP_parallel_loop_nonmonotonic_runtime");
    RESOLVE(loop_maybe_nonmonotonic_runtime, "GOMP_parallel_loop_maybe_nonmonotonic_runtime");
    RESOLVE(loop_static_start, "GOMP_parallel_loop_static_start");
    RESOLVE(loop_dynamic_start, "GOMP_parallel_loop_dynamic_start");
    RESOLVE(loop_guided_start, "GOMP_parallel_loop_guided_start");
    RESOLVE(loop_runtime_start, "GOMP_parallel_loop_runtime_start");
    RESOLVE(sections, "GOMP_parallel_sections");
    RESOLVE(sections_start, "GOMP_parallel_sections_start");
    RESOLVE(barrier, "GOMP_barrier");
    RESOLVE(barrier_cancel, "GOMP_barrier_cancel");
    RESOLVE(loop_end, "GOMP_loop_end");
    RESOLVE(loop_end_cancel, "GOMP_loop_end_cancel");
    RESOLVE(sections_end, "GOMP_sections_end");
    RESOLVE(sections_end_cancel, "GOMP_sections_end_cancel");
    provider_is_libomp = is_libomp((void *)real.parallel);
    if (provider_is_libomp)
        pdp_log(1, "GOMP_* entry points are LLVM libomp's: its regions are found through OMPT");
    pdp_busy = saved;
}

/* The real function, or a clear stop: a GOMP entry point was called, so its
 * library is loaded and has it, unless a symbol version is missing. */
#define REAL(field)                                                                                               \
    (pthread_once(&resolve_once, resolve), real.field ? real.field : (missing(#field), real.field))

static void missing(const char *what)
{
    pdp_log(0, "libgomp entry point for %s not found: cannot continue", what);
    abort();
}

/* What every thread of a tracked team runs instead of the outlined function:
 * the trampoline lives on the encountering thread's stack (or, for the old
 * ABI, in its thread-local storage) until the team has joined. */
typedef struct {
    gomp_fn fn;
    void *data;
    pdp_team team;
} trampoline_arg;

static void trampoline(void *p)
{
    trampoline_arg *t = p;
    pdp_member_begin(&t->team, omp_get_thread_num ? (unsigned)omp_get_thread_num() : 0u);
    t->fn(t->data);
    pdp_member_end();
}

/* 1 when the region is tracked: then run the team on trampoline with t. */
static int open_region(gomp_fn fn, void *data, trampoline_arg *t)
{
    pthread_once(&resolve_once, resolve);
    if (provider_is_libomp || pdp_busy)
        return 0;
    t->fn = fn;
    t->data = data;
    return pdp_team_open((const void *)fn, &t->team);
}

/* An untracked region goes straight through; with libomp underneath, the
 * OMPT tool learns which outlined function it runs (pdp_gomp_fn). */
#define PASS(fn, call)                                                                                            \
    do {                                                                                                          \
        const void *saved_ = pdp_gomp_fn;                                                                         \
        if (provider_is_libomp)                                                                                   \
            pdp_gomp_fn = (const void *)(fn);                                                                     \
        call;                                                                                                     \
        pdp_gomp_fn = saved_;                                                                                     \
    } while (0)

PDP_HOOK void GOMP_parallel(gomp_fn fn, void *data, unsigned num_threads, unsigned flags)
{
    trampoline_arg t;
    if (!open_region(fn, data, &t)) {
        PASS(fn, REAL(parallel)(fn, data, num_threads, flags));
        return;
    }
    REAL(parallel)(trampoline, &t, num_threads, flags);
    pdp_team_close(&t.team);
}

PDP_HOOK unsigned GOMP_parallel_reductions(gomp_fn fn, void *data, unsigned num_threads, unsigned flags)
{
    trampoline_arg t;
    unsigned r;
    if (!open_region(fn, data, &t)) {
        PASS(fn, r = REAL(parallel_reductions)(fn, data, num_threads, flags));
        return r;
    }
    r = REAL(parallel_reductions)(trampoline, &t, num_threads, flags);
    pdp_team_close(&t.team);
    return r;
}

/* The combined parallel loops differ only in their loop arguments. */
#define PARALLEL_LOOP(name, field)                                                                                \
    PDP_HOOK void name(gomp_fn fn, void *data, unsigned num_threads, long start, long end, long incr, long chunk, \
                       unsigned flags)                                                                            \
    {                                                                                                             \
        trampoline_arg t;                                                                                         \
        if (!open_region(fn, data, &t)) {                                                                         \
            PASS(fn, REAL(field)(fn, data, num_threads, start, end, incr, chunk, flags));                         \
            return;                                                                                               \
        }                                                                                                         \
        REAL(field)(trampoline, &t, num_threads, start, end, incr, chunk, flags);                                 \
        pdp_team_close(&t.team);                                                                                  \
    }

#define PARALLEL_LOOP_RUNTIME(name, field)                                                                        \
    PDP_HOOK void name(gomp_fn fn, void *data, unsigned num_threads, long start, long end, long incr,             \
                       unsigned flags)                                                                            \
    {                                                                                                             \
        trampoline_arg t;                                                                                         \
        if (!open_region(fn, data, &t)) {                                                                         \
            PASS(fn, REAL(field)(fn, data, num_threads, start, end, incr, flags));                                \
            return;                                                                                               \
        }                                                                                                         \
        REAL(field)(trampoline, &t, num_threads, start, end, incr, flags);                                        \
        pdp_team_close(&t.team);                                                                                  \
    }

PARALLEL_LOOP(GOMP_parallel_loop_static, loop_static)
PARALLEL_LOOP(GOMP_parallel_loop_dynamic, loop_dynamic)
PARALLEL_LOOP(GOMP_parallel_loop_guided, loop_guided)
PARALLEL_LOOP(GOMP_parallel_loop_nonmonotonic_dynamic, loop_nonmonotonic_dynamic)
PARALLEL_LOOP(GOMP_parallel_loop_nonmonotonic_guided, loop_nonmonotonic_guided)
PARALLEL_LOOP_RUNTIME(GOMP_parallel_loop_runtime, loop_runtime)
PARALLEL_LOOP_RUNTIME(GOMP_parallel_loop_nonmonotonic_runtime, loop_nonmonotonic_runtime)
PARALLEL_LOOP_RUNTIME(GOMP_parallel_loop_maybe_nonmonotonic_runtime, loop_maybe_nonmonotonic_runtime)

PDP_HOOK void GOMP_parallel_sections(gomp_fn fn, void *data, unsigned num_threads, unsigned count, unsigned flags)
{
    trampoline_arg t;
    if (!open_region(fn, data, &t)) {
        PASS(fn, REAL(sections)(fn, data, num_threads, count, flags));
        return;
    }
    REAL(sections)(trampoline, &t, num_threads, count, flags);
    pdp_team_close(&t.team);
}

/* ---- the old ABI (GCC before 4.9): *_start starts the team, the compiled
 * code then calls the outlined function on the encountering thread itself,
 * and GOMP_parallel_end joins. The trampoline argument lives in the
 * encountering thread's TLS until then; old_depth pairs each start with its
 * end, and old_tracked is the depth of the tracked one (0: none). */
static __thread trampoline_arg old_arg __attribute__((tls_model("initial-exec")));
static __thread int old_depth __attribute__((tls_model("initial-exec")));
static __thread int old_tracked __attribute__((tls_model("initial-exec")));

/* Before the real start: the function the team should run. */
static gomp_fn old_start(gomp_fn fn, void *data, void **team_data)
{
    old_depth++;
    *team_data = data;
    if (old_tracked || !open_region(fn, data, &old_arg))
        return fn;
    old_tracked = old_depth;
    *team_data = &old_arg;
    return trampoline;
}

/* After the real start: the encountering thread, thread 0 of the team, is
 * about to run the body itself. */
static void old_started(void)
{
    if (old_tracked == old_depth)
        pdp_member_begin(&old_arg.team, 0);
}

PDP_HOOK void GOMP_parallel_start(gomp_fn fn, void *data, unsigned num_threads)
{
    void *team_data;
    gomp_fn run = old_start(fn, data, &team_data);
    PASS(fn, REAL(parallel_start)(run, team_data, num_threads));
    old_started();
}

#define PARALLEL_LOOP_START(name, field)                                                                          \
    PDP_HOOK void name(gomp_fn fn, void *data, unsigned num_threads, long start, long end, long incr, long chunk) \
    {                                                                                                             \
        void *team_data;                                                                                          \
        gomp_fn run = old_start(fn, data, &team_data);                                                            \
        PASS(fn, REAL(field)(run, team_data, num_threads, start, end, incr, chunk));                              \
        old_started();                                                                                            \
    }

PARALLEL_LOOP_START(GOMP_parallel_loop_static_start, loop_static_start)
PARALLEL_LOOP_START(GOMP_parallel_loop_dynamic_start, loop_dynamic_start)
PARALLEL_LOOP_START(GOMP_parallel_loop_guided_start, loop_guided_start)

PDP_HOOK void GOMP_parallel_loop_runtime_start(gomp_fn fn, void *data, unsigned num_threads, long start, long end,
                                               long incr)
{
    void *team_data;
    gomp_fn run = old_start(fn, data, &team_data);
    PASS(fn, REAL(loop_runtime_start)(run, team_data, num_threads, start, end, incr));
    old_started();
}

PDP_HOOK void GOMP_parallel_sections_start(gomp_fn fn, void *data, unsigned num_threads, unsigned count)
{
    void *team_data;
    gomp_fn run = old_start(fn, data, &team_data);
    PASS(fn, REAL(sections_start)(run, team_data, num_threads, count));
    old_started();
}

PDP_HOOK void GOMP_parallel_end(void)
{
    int tracked = old_depth > 0 && old_tracked == old_depth;
    if (tracked)
        pdp_member_end(); /* thread 0 arrives at the implicit barrier */
    REAL(parallel_end)();
    if (old_depth > 0)
        old_depth--;
    if (tracked) {
        old_tracked = 0;
        pdp_team_close(&old_arg.team);
    }
}

/* ---- barriers inside a region: the task pauses while the thread waits. */

PDP_HOOK void GOMP_barrier(void)
{
    pdp_barrier_enter();
    REAL(barrier)();
    pdp_barrier_leave();
}

PDP_HOOK bool GOMP_barrier_cancel(void)
{
    pdp_barrier_enter();
    bool cancelled = REAL(barrier_cancel)();
    pdp_barrier_leave();
    return cancelled;
}

PDP_HOOK void GOMP_loop_end(void)
{
    pdp_barrier_enter();
    REAL(loop_end)();
    pdp_barrier_leave();
}

PDP_HOOK bool GOMP_loop_end_cancel(void)
{
    pdp_barrier_enter();
    bool cancelled = REAL(loop_end_cancel)();
    pdp_barrier_leave();
    return cancelled;
}

PDP_HOOK void GOMP_sections_end(void)
{
    pdp_barrier_enter();
    REAL(sections_end)();
    pdp_barrier_leave();
}

PDP_HOOK bool GOMP_sections_end_cancel(void)
{
    pdp_barrier_enter();
    bool cancelled = REAL(sections_end_cancel)();
    pdp_barrier_leave();
    return cancelled;
}
