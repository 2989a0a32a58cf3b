/* Task instances: begin/end from any thread (OpenMP threads concurrently),
 * per-task perf measurement, sampler arming, default task ids. */
#include <omp.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "lib/mem_sampler.h"
#include "lib/page_sampler.h"
#include "lib/profile_store.h"
#include "lib/runtime_internal.h"

/* Weak: the OpenMP runtime is the program's. libpaddiser-preload.so is
 * linked without one (a gcc program runs on libgomp, a clang one on
 * libomp, and a second runtime loaded beside it took the GOMP_* calls of a
 * gcc program under a clang-built preload); without any, thread 0. */
#pragma weak omp_get_thread_num

/* One task per MPI rank when launched by an MPI starter, else one per
 * OpenMP thread. */
static int default_task_id(void)
{
    static const char *vars[] = {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"};
    for (size_t i = 0; i < PD_ARRAY_LEN(vars); i++) {
        const char *v = getenv(vars[i]);
        long rank;
        if (v && pd_parse_long(v, &rank) && rank >= 0 && rank <= 0x7fffffffL)
            return (int)rank;
    }
    return omp_get_thread_num ? omp_get_thread_num() : 0;
}

rt_task *rt_task_find(int id)
{
    for (int i = 0; i < rt.ntasks; i++)
        if (rt.tasks[i]->id == id)
            return rt.tasks[i];
    return NULL;
}

static int task_slot(const rt_task *t)
{
    for (int i = 0; i < rt.ntasks; i++)
        if (rt.tasks[i] == t)
            return i;
    return -1;
}

static int grow_one(double **a, size_t old, size_t n)
{
    double *p = realloc(*a, n * sizeof *p);
    if (!p)
        return -1;
    for (size_t i = old; i < n; i++)
        p[i] = 0;
    *a = p;
    return 0;
}

int rt_task_grow_arrays(rt_task *t)
{
    size_t n = rt.nobjects ? rt.nobjects : 1;
    if (t->nacc >= n)
        return PD_OK;
    if (grow_one(&t->base_acc, t->nacc, n) || grow_one(&t->last_acc, t->nacc, n) ||
        grow_one(&t->est_acc, t->nacc, n) || grow_one(&t->hot_acc, t->nacc, n))
        return PD_ENOMEM;
    t->nacc = n;
    return PD_OK;
}

static rt_task *task_new(int id)
{
    if (rt.ntasks >= RT_MAX_TASKS)
        return NULL;
    rt_task *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->id = id;
    t->ran_share = 0;
    t->mem_bound = NAN; /* no fit yet: the prior */
    t->mem_bound_se = NAN;
    rt.tasks[rt.ntasks++] = t;
    return t;
}

/* With rt.lock held: the task a begin (ending 0: created on first use, must
 * be idle) or an end (ending 1: must exist and be active) acts on, or the
 * error code to return. */
static int task_for_locked(int id, int ending, rt_task **out)
{
    if (!rt_ready_locked())
        return PD_ESTATE;
    rt_task *t = rt_task_find(id);
    if (!t) {
        if (ending)
            return PD_ENOTFOUND;
        if (!(t = task_new(id)))
            return rt.ntasks >= RT_MAX_TASKS ? PD_EINVAL : PD_ENOMEM;
    }
    if ((t->active != 0) != ending)
        return PD_ESTATE;
    *out = t;
    return PD_OK;
}

/* With PADDISER_PROFILE_STORE_THIN=on: an instance that must be sampled
 * for a profile (the first) while an earlier run heated its input
 * (profile_store.h): its heat is the prior the instance's counts are
 * smoothed with (heat.c), so the instance need not arm every sample in
 * every spell, whose cost is unbounded by its length (60 ms on a 48 ms
 * first instance of the phases bench). Its spells arm the slice its
 * elapsed time affords at the sampling allowance's share, plus that share
 * of the stored instance time (at most the allowance). Off by default: in
 * the simulator a thinned first instance's heat is noisier than a whole
 * one's, and with the stored heat as its prior it placed bfs within the
 * noise of a whole first instance, not better
 * (docs/runtime-measurements.md, "The profile store", *Placement, in the
 * simulator*). */
static void thin_by_store(void)
{
    if (!rt_env_on("PADDISER_PROFILE_STORE_THIN"))
        return;
    uint64_t input = rt_input_signature(0);
    double was = rt_store_instance_s(input);
    if (!(was > 0 && rt.store_thin_frac > 0))
        return;
    /* Every task this run knows must have a stored heat of the input: a
     * thin profile without one is ruinous (in the simulator's emulation,
     * bfs placed 195% slower than hot-first). A task seen first in this
     * instance is caught after it (thin_blind, heat.c). */
    for (int s = 0; s < rt.ntasks; s++)
        if (!rt_store_has_heat(rt.tasks[s]->id, input))
            return;
    pd_sampler_thin_next(rt.store_thin_frac, fmin(rt.store_thin_frac * was, rt.store_thin_cap));
    rt.inst_store_thin = 1;
}

int pd_task_begin(int task_id)
{
    int id = task_id < 0 ? default_task_id() : task_id;
    pthread_mutex_lock(&rt.lock);
    rt_task *t;
    int rc = task_for_locked(id, 0, &t);
    if (rc != PD_OK) {
        pthread_mutex_unlock(&rt.lock);
        return rc;
    }
    int opened = !rt.instance_open;
    if (opened) {
        /* First task of an instance: objects may have changed since the last
         * sync point; re-plan and rebuild the sample table now. Without the
         * table the instance would run unsampled and its profile be lost:
         * out of memory, the task does not begin (PD_ENOMEM), and the next
         * begin tries again. */
        if (rt.plan_stale)
            rt_replan_locked(0);
        if (rt_sampler_sync_ranges() == PD_ENOMEM) {
            pthread_mutex_unlock(&rt.lock);
            return PD_ENOMEM;
        }
        rt.instance_open = 1;
        rt.inst_store_thin = 0;
        int force = rt_profile_missing();
        if (force && rt.sampling && !rt.pmu_period)
            thin_by_store();
        rt.inst_sampled = rt.sampling && (rt.pmu_period || pd_sampler_instance_begin(force));
    }
    t->active = 1;
    t->paused = 0;
    t->paused_s = 0;
    int first_spell = !t->ran; /* the task's first begin in this instance */
    if (!t->ran)
        memset(&t->cur, 0, sizeof t->cur);
    t->ran = 1;
    rt.active++;
    int slot = task_slot(t);
    if (rt.inst_sampled) {
        /* A sampled instance is sampled whole: every spell of activity (a
         * phase between barriers: the first begin while no task runs) arms
         * every sample, so objects touched only in later phases have a
         * profile too, and every task from its first begin (at most tasks x
         * samples faults per spell). Later begins start a new counting
         * interval when the overhead budget allows. The long-run share
         * (pd_sampler_instance_begin) bounds what whole instances cost. */
        if (rt.active == 1)
            pd_sampler_arm();
        else if (first_spell)
            pd_sampler_rearm();
        else
            pd_sampler_rearm_if_due(); /* task boundary: a new counting interval */
    }
    unsigned epoch = rt.epoch;
    int pmu = rt.pmu_period != 0;
    pthread_mutex_unlock(&rt.lock);

    /* Counters open on this thread, outside the lock, into a local session
     * that is then handed to the task under the lock: t is the runtime's
     * (a pd_finalize on another thread may read and free it meanwhile). */
    pd_sampler_set_thread_task(slot);
    if (pmu)
        pd_mem_sampler_thread_begin(slot);
    pd_perf_session session;
    pd_perf_begin(&session);
    pthread_mutex_lock(&rt.lock);
    int live = rt.initialized && rt.epoch == epoch && t->active;
    if (live)
        t->session = session;
    pthread_mutex_unlock(&rt.lock);
    if (!live) { /* finalized meanwhile: the instance was dropped */
        pd_perf_sample unused;
        pd_perf_end(&session, &unused);
    }
    return PD_OK;
}

int pd_task_end(int task_id) { return rt_task_end_waited(task_id, 0); }

/* A pause is a wait the application marks itself, as `paddiser run`'s
 * barrier hooks time theirs: the task stays active, so rt.active stays
 * above 0 and the sampler stays armed. Ending and beginning the task
 * around every barrier of the phases example ended a spell of activity
 * each time, and the next begin armed every sample again: 12 spells and
 * about 7800 protection changes in its first instance. */
static int task_pause_locked(int id, int pause, double now)
{
    rt_task *t;
    int rc = task_for_locked(id, 1, &t);
    if (rc != PD_OK)
        return rc;
    if (t->paused == pause)
        return PD_ESTATE;
    t->paused = pause;
    if (pause)
        t->pause_t0 = now;
    else if (now > t->pause_t0)
        t->paused_s += now - t->pause_t0;
    return PD_OK;
}

static int task_pause(int task_id, int pause)
{
    int id = task_id < 0 ? default_task_id() : task_id;
    double now = pd_perf_wall();
    pthread_mutex_lock(&rt.lock);
    int rc = task_pause_locked(id, pause, now);
    pthread_mutex_unlock(&rt.lock);
    return rc;
}

int pd_task_pause(int task_id) { return task_pause(task_id, 1); }

int pd_task_resume(int task_id) { return task_pause(task_id, 0); }

int rt_task_end_waited(int task_id, double waited_s)
{
    int id = task_id < 0 ? default_task_id() : task_id;
    pthread_mutex_lock(&rt.lock);
    rt_task *t;
    int rc = task_for_locked(id, 1, &t);
    if (rc != PD_OK) {
        pthread_mutex_unlock(&rt.lock);
        return rc;
    }
    /* The session belongs to this task and only its owner ends it. */
    pd_perf_sample s;
    double now = pd_perf_wall();
    pd_perf_end(&t->session, &s);
    /* its pauses, one still open up to now: waits like the barriers' */
    waited_s += t->paused_s + (t->paused && now > t->pause_t0 ? now - t->pause_t0 : 0);
    t->paused = 0;
    if (waited_s > 0) { /* its barrier waits: no part of the task's time */
        s.wall_s = waited_s < s.wall_s ? s.wall_s - waited_s : 0;
        /* nor of its CPU time, at most the wait (a barrier spins a while) */
        s.sw.cpu_s = waited_s < s.sw.cpu_s ? s.sw.cpu_s - waited_s : 0;
    }
    pd_perf_sample_add(&t->cur, &s);
    /* The task's load samples are in the table before a sync point can read it. */
    if (rt.pmu_period)
        pd_mem_sampler_thread_end();
    t->active = 0;
    rt.active--;
    if (rt.sampling && rt.active == 0)
        pd_sampler_disarm(); /* nothing protected between instances (MPI copies) */
    pthread_mutex_unlock(&rt.lock);
    pd_sampler_set_thread_task(PD_SAMPLER_NO_TASK);
    return PD_OK;
}

int pd_sync_point(void)
{
    pthread_mutex_lock(&rt.lock);
    int rc;
    if (!rt_ready_locked() || rt.active > 0)
        rc = PD_ESTATE;
    else
        rc = rt_sync_locked(1);
    pthread_mutex_unlock(&rt.lock);
    return rc;
}

void rt_tasks_free(void)
{
    for (int i = 0; i < rt.ntasks; i++) {
        rt_task *t = rt.tasks[i];
        free(t->base_acc);
        free(t->last_acc);
        free(t->est_acc);
        free(t->hot);
        rt_heat_free(t);
        free(t);
        rt.tasks[i] = NULL;
    }
    rt.ntasks = 0;
}
