/* OpenMP parallel regions as runtime tasks (preload_regions.h): the region
 * table, each thread's task in the open region, and the sync point every
 * pdp_opts()->sync_every regions. Both OpenMP layers (libgomp hooks, OMPT)
 * report here, so the rules are the same for gcc, clang and gfortran code. */
#include <dlfcn.h>
#include <limits.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#include "lib/runtime_internal.h" /* RT_MAX_TASKS */
#include "paddiser.h"
#include "preload/preload.h"
#include "preload/preload_regions.h"

#define MAX_REGIONS (RT_MAX_TASKS / PDP_REGION_THREADS)
_Static_assert(MAX_REGIONS >= 1, "task ids of one region exceed the runtime's task slots");

/* Append-only: codes[i] is written before nregions publishes it, so
 * lookups read without the lock. */
static const void *codes[MAX_REGIONS];
static unsigned char wanted[MAX_REGIONS]; /* PADDISER_RUN_REGIONS lets it be tasks */
static atomic_int nregions;
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;

static atomic_uint open_inst;  /* the outermost region instance open now, 0: none */
static atomic_uint last_inst;  /* instance numbers handed out */
static atomic_long regions_done; /* tracked regions closed */
static atomic_int syncs;       /* sync points run */

/* Time spent in the runtime's calls from here, for the summary at exit
 * (PADDISER_RUN_VERBOSE=1): what `paddiser run` adds to each region. */
static atomic_llong task_ns, sync_ns;
static atomic_long task_calls;

/* Regions too short to pay for being tracked (PADDISER_RUN_REGION_COST_PCT):
 * what the runtime's calls cost each region against its own time. GAP's
 * tc verifies with libstdc++'s parallel set_intersection, thousands of
 * regions of tens of us, and each tracked one cost about 0.6 ms of task
 * calls and sync point: its verification ran 17 times slower. */
#define REGION_TRIAL 3 /* instances after the first before a region is judged */
static char names[MAX_REGIONS][160];
static atomic_llong region_task_ns[MAX_REGIONS]; /* its threads' task calls, summed */
static atomic_uchar untracked[MAX_REGIONS];
/* An untracked region may grow (a later, larger input): its instances are
 * counted, and the one numbered retry_at is tracked again to see. Still
 * too short, the next try is at twice its number, so a region that stays
 * short pays for about log2(instances) tracked ones in all (2656
 * instances, untracked at the 4th: 9). */
static atomic_long opened[MAX_REGIONS];   /* instances begun, tracked or not */
static atomic_long retry_at[MAX_REGIONS]; /* the untracked region's next tracked one */
static atomic_int regions_retracked;
static atomic_uchar ever_untracked[MAX_REGIONS], ever_retracked[MAX_REGIONS];

/* The untracked region r's next try: at twice the instances it has begun. */
static void retry_later(int r) { atomic_store(&retry_at[r], 2 * atomic_load(&opened[r])); }
static struct {
    long long wall_ns, cost_ns; /* summed over its instances after the first */
    long n;                     /* instances closed */
} trial[MAX_REGIONS];           /* under table_lock */
static atomic_llong open_t0, open_task_ns0; /* the open instance's start, its region's task_ns then */
static atomic_int open_members;             /* threads that began a task in it */
static atomic_int regions_untracked;

static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Warnings printed once per process (bits). */
enum { WARN_TABLE = 1, WARN_CONCURRENT = 2, WARN_THREADS = 4, WARN_TASK = 8, WARN_SYNC = 16, WARN_HYBRID = 32 };
static atomic_int warned;

static int warn_first(int bit) { return !(atomic_fetch_or(&warned, bit) & bit); }

/* This thread's part in the open region. initial-exec: the preload library
 * is loaded at startup, so its TLS is static and reading it never calls
 * malloc (which another hook may be interposing). */
typedef struct {
    int task;      /* its task id, -1: none */
    int running;   /* between pd_task_begin and pd_task_end */
    unsigned inst; /* the instance the task belongs to */
    int depth;     /* team bodies entered and not left (> 1: nested) */
    long long wait_t0;   /* the barrier it waits in began (ns), 0: none */
    long long waited_ns; /* its task's barrier waits so far */
} member_state;
static __thread member_state me __attribute__((tls_model("initial-exec"))) = {-1, 0, 0, 0, 0, 0};

__thread const void *pdp_gomp_fn __attribute__((tls_model("initial-exec")));

/* PADDISER_RUN_REGIONS (--regions): comma-separated globs; when set, a
 * region is tasks only if one matches its name, "<module>+0x<offset>" (the
 * module's file name, the code's offset in it: the same in every run, as
 * --verbose prints it), or its symbol when the module exports one. The
 * others run untracked: their time counts in no task. */
static int region_matches(const char *name, const char *sym)
{
    const char *list = getenv("PADDISER_RUN_REGIONS");
    if (!list || !*list)
        return 1;
    char glob[256];
    for (const char *p = list; *p;) {
        size_t n = strcspn(p, ",");
        if (n > 0 && n < sizeof glob) {
            memcpy(glob, p, n);
            glob[n] = '\0';
            if (fnmatch(glob, name, 0) == 0 || (sym && fnmatch(glob, sym, 0) == 0))
                return 1;
        }
        p += n;
        if (*p == ',')
            p++;
    }
    return 0;
}

/* A new region: whether it is wanted, and (verbose) what it is. */
static void describe(int region, const void *code)
{
    Dl_info info;
    const char *file = "?", *sym = NULL;
    uintptr_t off = (uintptr_t)code, mod_off = (uintptr_t)code;
    if (dladdr(code, &info) && info.dli_fname) {
        file = info.dli_fname;
        mod_off = (uintptr_t)code - (uintptr_t)info.dli_fbase;
        off = mod_off;
        if (info.dli_sname && info.dli_saddr) {
            sym = info.dli_sname;
            off = (uintptr_t)code - (uintptr_t)info.dli_saddr;
        }
    }
    const char *base = strrchr(file, '/') ? strrchr(file, '/') + 1 : file;
    char *name = names[region];
    snprintf(name, sizeof names[region], "%s+%#lx", base, (unsigned long)mod_off);
    wanted[region] = (unsigned char)region_matches(name, sym);
    if (wanted[region])
        pdp_log(1, "region %d: %s (%s+%#lx), code %p in %s: tasks %d..%d", region, name, sym ? sym : "-",
                (unsigned long)off, code, file, region * PDP_REGION_THREADS,
                region * PDP_REGION_THREADS + PDP_REGION_THREADS - 1);
    else
        pdp_log(1, "region %d: %s, code %p: not in PADDISER_RUN_REGIONS, untracked", region, name, code);
}

/* The index of the region at code, a new one on first sight; -1 when the
 * table is full. */
static int region_index(const void *code)
{
    int n = atomic_load_explicit(&nregions, memory_order_acquire);
    for (int i = 0; i < n; i++)
        if (codes[i] == code)
            return i;
    pthread_mutex_lock(&table_lock);
    n = atomic_load_explicit(&nregions, memory_order_relaxed);
    int idx = -1;
    for (int i = 0; i < n && idx < 0; i++)
        if (codes[i] == code)
            idx = i;
    if (idx < 0 && n < MAX_REGIONS) {
        codes[n] = code;
        describe(n, code); /* wanted[n] before nregions publishes it */
        atomic_store_explicit(&nregions, n + 1, memory_order_release);
        idx = n;
    }
    pthread_mutex_unlock(&table_lock);
    if (idx < 0 && warn_first(WARN_TABLE))
        pdp_log(0, "more than %d distinct parallel regions: the others run untracked (not tasks)", MAX_REGIONS);
    return idx;
}

/* Calls into the runtime run with the re-entrancy guard set, so the
 * runtime's own allocations pass the allocation hooks. */
static int task_call(int begin)
{
    int saved = pdp_busy;
    pdp_busy = 1;
    long long t0 = now_ns();
    int rc;
    if (begin) {
        me.wait_t0 = me.waited_ns = 0;
        rc = pd_task_begin(me.task);
    } else {
        if (me.wait_t0) /* it ends in a barrier (OMPT: the region's own) */
            me.waited_ns += t0 - me.wait_t0;
        rc = rt_task_end_waited(me.task, 1e-9 * (double)me.waited_ns);
        me.wait_t0 = me.waited_ns = 0;
    }
    long long d = now_ns() - t0;
    atomic_fetch_add_explicit(&task_ns, d, memory_order_relaxed);
    atomic_fetch_add_explicit(&region_task_ns[me.task / PDP_REGION_THREADS], d, memory_order_relaxed);
    atomic_fetch_add_explicit(&task_calls, 1, memory_order_relaxed);
    pdp_busy = saved;
    if (rc != PD_OK && warn_first(WARN_TASK))
        pdp_log(0, "task %d %s: %s (further task errors are not reported)", me.task, begin ? "begin" : "end",
                pd_strerror(rc));
    me.running = begin && rc == PD_OK;
    return rc;
}

/* The one place the region layer runs the sync point (the lead may route
 * it through a shared wrapper). */
static long long region_sync(long region_count)
{
    int saved = pdp_busy;
    pdp_busy = 1;
    long long t0 = now_ns();
    int rc = pdp_sync(); /* + the plan-log line (--out) */
    atomic_fetch_add(&sync_ns, now_ns() - t0);
    pd_profile_info info;
    int instances = pd_profile_info_get(&info) == PD_OK ? info.instances : -1;
    pdp_busy = saved;
    int n = atomic_fetch_add(&syncs, 1) + 1;
    if (rc != PD_OK && rc != PD_ESTATE && warn_first(WARN_SYNC))
        pdp_log(0, "sync point after region %ld: %s", region_count, pd_strerror(rc));
    pdp_log(1, "sync point %d after %ld region(s): %s, %d instance(s)", n, region_count,
            rc == PD_OK ? "ok" : pd_strerror(rc), instances);
    return now_ns() - t0;
}

/* A tracked instance of the untracked region r (its retry_at-th) took
 * wall_ns, and the runtime's calls cost_ns: under half the bound now, the
 * region is tracked again, judged anew after REGION_TRIAL more instances;
 * else the next try is at twice this instance's number. Half: a region
 * near the bound would otherwise be tracked again and dropped again. */
static void region_retried(int r, long long wall_ns, long long cost_ns, int pct)
{
    if ((double)cost_ns * 200.0 > (double)pct * (double)wall_ns) {
        retry_later(r);
        return;
    }
    pthread_mutex_lock(&table_lock);
    trial[r].n = 1; /* this instance stands for the first */
    trial[r].wall_ns = trial[r].cost_ns = 0;
    pthread_mutex_unlock(&table_lock);
    atomic_store(&untracked[r], 0);
    if (!atomic_exchange(&ever_retracked[r], 1))
        atomic_fetch_add(&regions_retracked, 1);
    pdp_log(1, "region %s: an instance of %.0f us, the runtime's calls %.0f us (under half of "
               "PADDISER_RUN_REGION_COST_PCT=%d%%): tracked again",
            names[r], 1e-3 * (double)wall_ns, 1e-3 * (double)cost_ns, pct);
}

/* The instance of region r that closed took wall_ns, and the runtime's
 * calls cost_ns of it or after it (its threads' task calls over their
 * number, the sync point). From its REGION_TRIAL-th instance after the
 * first (sampled whole, a cost paid once), a region whose calls cost more
 * than PADDISER_RUN_REGION_COST_PCT of its time runs untracked: no task,
 * no sync point, but for the tries region_retried judges. */
static void region_account(int r, long long wall_ns, long long cost_ns, int retrial)
{
    int pct = pdp_opts()->region_cost_pct;
    if (pct <= 0)
        return;
    if (retrial) {
        region_retried(r, wall_ns, cost_ns, pct);
        return;
    }
    /* two application threads may close instances of one region at once */
    pthread_mutex_lock(&table_lock);
    long k = trial[r].n++;
    if (k > 0) { /* the first instance: sampled whole, a cost paid once */
        trial[r].wall_ns += wall_ns;
        trial[r].cost_ns += cost_ns;
    }
    double wall = (double)trial[r].wall_ns, cost = (double)trial[r].cost_ns;
    pthread_mutex_unlock(&table_lock);
    if (k < REGION_TRIAL || cost * 100.0 <= (double)pct * wall || atomic_load(&untracked[r]))
        return;
    retry_later(r); /* before the open path can see it untracked */
    if (atomic_exchange(&untracked[r], 1))
        return;
    /* regions, not decisions: one tracked again and dropped again counts once */
    int first = !atomic_exchange(&ever_untracked[r], 1) && atomic_fetch_add(&regions_untracked, 1) == 0;
    pdp_log(first ? 0 : 1,
            "region %s: %ld instance(s) of %.0f us, the runtime's calls %.0f us each (more than "
            "PADDISER_RUN_REGION_COST_PCT=%d%%): untracked from now on%s",
            names[r], k, 1e-3 * wall / (double)k, 1e-3 * cost / (double)k, pct,
            first && pdp_opts()->verbose < 1 ? " (others like it: --verbose)" : "");
}

int pdp_team_open(const void *code, pdp_team *team)
{
    if (me.depth > 0 || !pdp_active())
        return 0;
    if (pdp_mpi_running && pdp_mpi_running()) { /* hybrid: the rank is the task */
        if (warn_first(WARN_HYBRID))
            pdp_log(1, "MPI ranks are the tasks: OpenMP regions are part of their rank's task");
        return 0;
    }
    int region = region_index(code);
    if (region < 0 || !wanted[region])
        return 0;
    long count = atomic_fetch_add_explicit(&opened[region], 1, memory_order_relaxed) + 1;
    int retrial = atomic_load_explicit(&untracked[region], memory_order_relaxed);
    if (retrial && count < atomic_load_explicit(&retry_at[region], memory_order_relaxed))
        return 0;
    unsigned inst = atomic_fetch_add(&last_inst, 1) + 1;
    if (inst == 0) /* wrapped: 0 means none */
        inst = atomic_fetch_add(&last_inst, 1) + 1;
    unsigned none = 0;
    if (!atomic_compare_exchange_strong(&open_inst, &none, inst)) {
        if (warn_first(WARN_CONCURRENT))
            pdp_log(0, "parallel regions begun from several threads at once: only one at a time is tracked");
        return 0;
    }
    if (retrial) /* one try at a time; region_retried sets the next */
        atomic_store(&retry_at[region], LONG_MAX);
    team->region = region;
    team->inst = inst;
    team->retrial = retrial;
    atomic_store(&open_task_ns0, atomic_load(&region_task_ns[region]));
    atomic_store(&open_members, 0);
    atomic_store(&open_t0, now_ns());
    return 1;
}

void pdp_team_close(const pdp_team *team)
{
    if (me.task >= 0 && me.running) /* its end was not reported (e.g. cancelled) */
        task_call(0);
    if (me.depth == 0)
        me.task = -1;
    /* read before the next instance may open */
    long long wall = now_ns() - atomic_load(&open_t0);
    int members = atomic_load(&open_members);
    long long calls = atomic_load(&region_task_ns[team->region]) - atomic_load(&open_task_ns0);
    unsigned inst = team->inst;
    atomic_compare_exchange_strong(&open_inst, &inst, 0u);
    long n = atomic_fetch_add(&regions_done, 1) + 1;
    long long sync = n % pdp_opts()->sync_every == 0 ? region_sync(n) : 0;
    region_account(team->region, wall, calls / (members > 0 ? members : 1) + sync, team->retrial);
}

void pdp_member_begin(const pdp_team *team, unsigned thread_num)
{
    if (++me.depth != 1 || !team)
        return;
    if (thread_num >= PDP_REGION_THREADS) {
        if (warn_first(WARN_THREADS))
            pdp_log(0, "threads %d and up of a parallel region are not tasks (at most %d per region)",
                    PDP_REGION_THREADS, PDP_REGION_THREADS);
        return;
    }
    if (me.running) /* a task left open by a region that ended abnormally */
        task_call(0);
    me.task = team->region * PDP_REGION_THREADS + (int)thread_num;
    me.inst = team->inst;
    atomic_fetch_add(&open_members, 1);
    if (task_call(1) != PD_OK)
        me.task = -1;
}

void pdp_member_end(void)
{
    if (me.depth == 1) {
        if (me.task >= 0 && me.running)
            task_call(0);
        me.task = -1;
    }
    if (me.depth > 0)
        me.depth--;
}

/* Only the tracked team's own barriers: inside a nested team (depth > 1)
 * the thread's outer task keeps running, since the nested region's join
 * barrier ends without a resume under OMPT (see preload_ompt.c). The task
 * pauses: the wait is timed here and left out of its time when it ends
 * (rt_task_end_waited), with no runtime call. Ending and beginning the
 * task around every barrier cost GAP's sssp (a barrier per bucket,
 * thousands a trial) +35% on its later trials and, in its first, sampled
 * whole, a spell of activity armed whole per barrier: 4.6 s against
 * 0.06 s alone. A barrier is no place for system calls on the program's
 * buffers, so samples may stay armed through it. */
void pdp_barrier_enter(void)
{
    if (me.depth == 1 && me.task >= 0 && me.running && !me.wait_t0)
        me.wait_t0 = now_ns();
}

/* The end of a barrier the task is not waiting in (libomp reports the
 * end of a region's own barrier when the thread starts its next region)
 * is nothing. */
void pdp_barrier_leave(void)
{
    if (me.depth == 1 && me.task >= 0 && me.running && me.wait_t0) {
        me.waited_ns += now_ns() - me.wait_t0;
        me.wait_t0 = 0;
    }
}

/* A barrier that may be the region's own (its join): the task ends there,
 * since the thread may report nothing more before the team closes (libomp
 * reports a worker's implicit-task end when it starts its next region),
 * and begins again after it if the instance is still open. */
void pdp_join_barrier_enter(void)
{
    if (me.depth == 1 && me.task >= 0 && me.running)
        task_call(0);
}

void pdp_join_barrier_leave(void)
{
    if (me.depth == 1 && me.task >= 0 && !me.running && atomic_load(&open_inst) == me.inst)
        task_call(1);
}

/* At exit, with PADDISER_RUN_VERBOSE=1: what the regions cost. Task calls
 * run on every thread at once, so their sum is thread time; sync points
 * run on the thread that ended the region while the others wait. */
__attribute__((destructor)) static void regions_summary(void)
{
    long n = atomic_load(&regions_done);
    if (n == 0)
        return;
    pdp_log(1, "%ld region(s), %d sync point(s) in %.6f s; %ld task begin/end call(s) in %.6f s (all threads); "
               "%d region(s) untracked as too short, %d tracked again",
            n, atomic_load(&syncs), 1e-9 * (double)atomic_load(&sync_ns), atomic_load(&task_calls),
            1e-9 * (double)atomic_load(&task_ns), atomic_load(&regions_untracked),
            atomic_load(&regions_retracked));
}
