/* ThreadSanitizer annotations for GCC's OpenMP runtime (TSan builds only,
 * linked into every binary of build-tsan/ by mk/tsan.mk).
 *
 * libgomp is not instrumented: TSan does not see the happens-before edges of
 * its fork, join and barriers (futexes and plain stores inside libgomp), so
 * every value handed from a parallel region to the code after it (a
 * reduction, an array filled by the workers, memory they freed) is reported
 * as a race. Rather than suppress reports (which would hide real races of
 * code run by OpenMP threads), this file interposes the libgomp entry points
 * that GCC-compiled code calls (the project's and libxgboost's: an
 * executable's definition wins over libgomp's) and tells TSan what they
 * guarantee:
 *   - fork: the encountering thread's work happens before the region body
 *     on every thread of the team;
 *   - join: every thread's body happens before the code after the region;
 *   - barriers (explicit, and the implicit one ending a worksharing loop)
 *     order everything before them on any thread before everything after;
 *   - critical sections and GOMP_atomic_* (the lock used for atomics the
 *     hardware lacks, and for some reductions) act as one mutex.
 * Then it calls libgomp's own function. Nothing else changes.
 *
 * Not modelled (not used by the project; a report involving them would be a
 * false positive, see docs/tsan.md): explicit tasks (GOMP_task, taskwait,
 * taskgroup), ordered, sections, single copyprivate, cancellation, locks of
 * omp_set_lock (those are pthread mutexes underneath only sometimes). Barriers
 * share one sync object, so with two teams running at once (nested or
 * concurrent parallel regions) one team's barrier also orders the other's
 * accesses: a race across teams could be missed, never invented. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

void __tsan_acquire(void *addr);
void __tsan_release(void *addr);

typedef void (*body_fn)(void *);

static char barrier_sync, critical_sync, atomic_sync;

static void *real(const char *name)
{
    void *f = dlsym(RTLD_NEXT, name);
    if (!f) {
        fprintf(stderr, "gomp_annotate: %s not found in libgomp\n", name);
        abort();
    }
    return f;
}

/* libgomp's function, looked up once (threads may race to do it: same result). */
#define REAL(name, type) \
    static __typeof__(type) real_##name; \
    __typeof__(type) real_fn = __atomic_load_n(&real_##name, __ATOMIC_RELAXED); \
    if (!real_fn) \
        __atomic_store_n(&real_##name, real_fn = (type)real(#name), __ATOMIC_RELAXED)

/* Fork/join: the region's body runs through this trampoline on every thread. */
typedef struct {
    body_fn fn;
    void *data;
    char sync;
} region;

static void region_body(void *arg)
{
    region *r = arg;
    __tsan_acquire(&r->sync);
    r->fn(r->data);
    __tsan_release(&r->sync);
}

#define FORK(r, fn, data) \
    region r = {fn, data, 0}; \
    __tsan_release(&r.sync)
#define JOIN(r) __tsan_acquire(&r.sync)

/* One declaration per entry point, each with libgomp's signature (libgomp_g.h). */
#define PARALLEL_LOOP(name) \
    void name(body_fn fn, void *data, unsigned nthreads, long start, long end, long incr, long chunk, \
              unsigned flags) \
    { \
        REAL(name, void (*)(body_fn, void *, unsigned, long, long, long, long, unsigned)); \
        FORK(r, fn, data); \
        real_fn(region_body, &r, nthreads, start, end, incr, chunk, flags); \
        JOIN(r); \
    }
#define PARALLEL_LOOP_RUNTIME(name) \
    void name(body_fn fn, void *data, unsigned nthreads, long start, long end, long incr, unsigned flags) \
    { \
        REAL(name, void (*)(body_fn, void *, unsigned, long, long, long, unsigned)); \
        FORK(r, fn, data); \
        real_fn(region_body, &r, nthreads, start, end, incr, flags); \
        JOIN(r); \
    }

void GOMP_parallel(body_fn fn, void *data, unsigned nthreads, unsigned flags)
{
    REAL(GOMP_parallel, void (*)(body_fn, void *, unsigned, unsigned));
    FORK(r, fn, data);
    real_fn(region_body, &r, nthreads, flags);
    JOIN(r);
}

PARALLEL_LOOP(GOMP_parallel_loop_static)
PARALLEL_LOOP(GOMP_parallel_loop_dynamic)
PARALLEL_LOOP(GOMP_parallel_loop_guided)
PARALLEL_LOOP(GOMP_parallel_loop_nonmonotonic_dynamic)
PARALLEL_LOOP(GOMP_parallel_loop_nonmonotonic_guided)
PARALLEL_LOOP_RUNTIME(GOMP_parallel_loop_runtime)
PARALLEL_LOOP_RUNTIME(GOMP_parallel_loop_nonmonotonic_runtime)
PARALLEL_LOOP_RUNTIME(GOMP_parallel_loop_maybe_nonmonotonic_runtime)

/* Barriers: arrive (release), wait in libgomp, leave (acquire). */
#define BARRIER(name, ret, type) \
    ret name(void) \
    { \
        REAL(name, type); \
        __tsan_release(&barrier_sync); \
        ret v = (ret)real_fn(); \
        __tsan_acquire(&barrier_sync); \
        return v; \
    }
#define BARRIER_VOID(name) \
    void name(void) \
    { \
        REAL(name, void (*)(void)); \
        __tsan_release(&barrier_sync); \
        real_fn(); \
        __tsan_acquire(&barrier_sync); \
    }

BARRIER_VOID(GOMP_barrier)
BARRIER_VOID(GOMP_loop_end)
BARRIER(GOMP_barrier_cancel, bool, bool (*)(void))
BARRIER(GOMP_loop_end_cancel, bool, bool (*)(void))

/* Mutual exclusion: acquire after entering, release before leaving. */
#define LOCK_PAIR(start, end, sync) \
    void start(void) \
    { \
        REAL(start, void (*)(void)); \
        real_fn(); \
        __tsan_acquire(&sync); \
    } \
    void end(void) \
    { \
        REAL(end, void (*)(void)); \
        __tsan_release(&sync); \
        real_fn(); \
    }

LOCK_PAIR(GOMP_critical_start, GOMP_critical_end, critical_sync)
LOCK_PAIR(GOMP_atomic_start, GOMP_atomic_end, atomic_sync)

void GOMP_critical_name_start(void **name)
{
    REAL(GOMP_critical_name_start, void (*)(void **));
    real_fn(name);
    __tsan_acquire(name);
}

void GOMP_critical_name_end(void **name)
{
    REAL(GOMP_critical_name_end, void (*)(void **));
    __tsan_release(name);
    real_fn(name);
}
