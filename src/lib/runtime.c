/* Runtime lifecycle, options, queries and the per-task CSV. */
#include <errno.h>
#include <math.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/csv.h"
#include "common/util.h"
#include "lib/mem_sampler.h"
#include "lib/page_sampler.h"
#include "lib/placement.h"
#include "lib/profile_store.h"
#include "lib/runtime_internal.h"

rt_state rt = {.lock = PTHREAD_MUTEX_INITIALIZER};

int rt_env_off(const char *name)
{
    const char *v = getenv(name);
    return v && (!strcmp(v, "off") || !strcmp(v, "0"));
}

int rt_env_on(const char *name)
{
    const char *v = getenv(name);
    return v && (!strcmp(v, "on") || !strcmp(v, "1"));
}

void rt_message(const char *fmt, ...)
{
    const char *quiet = getenv("PADDISER_QUIET");
    if (quiet && *quiet && strcmp(quiet, "0") != 0)
        return;
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    fprintf(stderr, "paddiser: %s\n", line);
}

int rt_ready_locked(void)
{
    if (rt.initialized)
        return 1;
    if (rt.forked_from && !rt.fork_noticed) {
        rt.fork_noticed = 1;
        rt_message("this process is a fork() child of process %ld, whose runtime stays there: pd_* calls "
                   "return PD_ESTATE (not initialized) here until pd_init starts one of this process's own",
                   rt.forked_from);
    }
    return 0;
}

/* ---- fork() ----------------------------------------------------------------
 * The child of a fork() has only the forking thread: a lock that another
 * thread held at the fork would stay locked for ever (pd_task_begin hung in
 * every child of tests/test_runtime_fork.c), the re-arm ticker is gone and
 * sampled pages may be protected. prepare takes every lock of the runtime in its fixed order
 * (rt.lock, the sampler's, the counters', the PMU sampler's; backends are
 * only entered under rt.lock) so none is held mid-update; the child gets the runtime turned
 * off: every sampled page read-write, the SIGSEGV action from before pd_init
 * back, and calls answer PD_ESTATE as before pd_init, which starts a runtime
 * of the child's own (the parent's state is released then). Not a working
 * copy: its tasks, plans, backend budget and per-task CSV are the parent's. */
static void fork_prepare(void)
{
    pthread_mutex_lock(&rt.lock);
    pd_sampler_fork_prepare();
    pd_perf_fork_prepare();
    pd_mem_sampler_fork_prepare();
}

static void fork_parent(void)
{
    pd_mem_sampler_fork_parent();
    pd_perf_fork_release();
    pd_sampler_fork_parent();
    pthread_mutex_unlock(&rt.lock);
}

static void fork_child(void)
{
    pd_mem_sampler_fork_child();
    pd_perf_fork_release();
    pd_sampler_fork_child();
    rt.forked_from = 0;
    rt.fork_noticed = 0;
    if (rt.initialized) {
        rt.initialized = 0;
        rt.sampling = 0; /* the child has no sampler */
        rt.pmu_period = 0;
        rt.inherited = 1;
        rt.forked_from = (long)getppid();
    }
    pthread_mutex_unlock(&rt.lock);
}

static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;
static int atfork_rc;
static void atfork_register(void) { atfork_rc = pthread_atfork(fork_prepare, fork_parent, fork_child); }

/* The runtime's state, freed (the sampler is stopped separately): at
 * pd_finalize, and in a fork() child at pd_init (the parent's copy). */
static void release_state_locked(void)
{
    for (int i = 0; i < rt.ntasks; i++)
        if (rt.tasks[i]->active && rt.tasks[i]->session.hw) {
            /* counters opened by a task that never ended */
            pd_perf_sample tmp;
            pd_perf_end(&rt.tasks[i]->session, &tmp);
        }
    rt_tasks_free();
    rt_objects_free();
    rt_profile_reset();
    rt_migrate_reset();
    if (rt.backend)
        rt.backend->destroy(rt.backend);
    rt.backend = NULL;
    pd_model_free(rt.model); /* plain C (native trees): fine from an exit handler */
    rt.model = NULL;
}

void pd_options_default(pd_options *opt)
{
    if (!opt)
        return;
    memset(opt, 0, sizeof *opt);
    opt->backend = PD_BACKEND_AUTO;
    opt->planner = PD_PLANNER_EXACT;
    opt->fast_capacity = 0;
    opt->fast_node = -1;
    opt->slow_node = -1;
    opt->model_path = NULL;
    opt->sampling = 1;
}

/* Environment overrides, so unmodified applications can be studied under
 * several policies: PADDISER_BACKEND, PADDISER_PLANNER, PADDISER_FAST_CAPACITY,
 * PADDISER_SAMPLING. A bad value is reported and ignored. */
static void apply_env(pd_options *o)
{
    const char *v;
    if ((v = getenv("PADDISER_BACKEND")) && *v) {
        if (!strcmp(v, "auto")) o->backend = PD_BACKEND_AUTO;
        else if (!strcmp(v, "none")) o->backend = PD_BACKEND_NONE;
        else if (!strcmp(v, "sim")) o->backend = PD_BACKEND_SIM;
        else if (!strcmp(v, "numa")) o->backend = PD_BACKEND_NUMA;
        else rt_message("PADDISER_BACKEND=%s ignored (expected auto, none, sim or numa)", v);
    }
    if ((v = getenv("PADDISER_PLANNER")) && *v) {
        if (!strcmp(v, "exact")) o->planner = PD_PLANNER_EXACT;
        else if (!strcmp(v, "greedy")) o->planner = PD_PLANNER_GREEDY;
        else rt_message("PADDISER_PLANNER=%s ignored (expected exact or greedy)", v);
    }
    if ((v = getenv("PADDISER_FAST_CAPACITY")) && *v) {
        unsigned long long n;
        if (pd_parse_u64(v, &n)) o->fast_capacity = (size_t)n;
        else rt_message("PADDISER_FAST_CAPACITY=%s ignored (expected bytes)", v);
    }
    if ((v = getenv("PADDISER_SAMPLING")) && *v) {
        if (!strcmp(v, "0") || !strcmp(v, "off")) o->sampling = 0;
        else if (!strcmp(v, "1") || !strcmp(v, "on")) o->sampling = 1;
        else rt_message("PADDISER_SAMPLING=%s ignored (expected on or off)", v);
    }
    if ((v = getenv("PADDISER_THP")) && *v) {
        if (!strcmp(v, "auto")) o->thp = PD_THP_AUTO;
        else if (!strcmp(v, "off")) o->thp = PD_THP_OFF;
        else if (!strcmp(v, "keep")) o->thp = PD_THP_KEEP;
        else rt_message("PADDISER_THP=%s ignored (expected auto, off or keep)", v);
    }
}

static unsigned env_unsigned(const char *name, unsigned dflt)
{
    const char *v = getenv(name);
    unsigned long long n;
    if (v && *v && pd_parse_u64(v, &n) && n <= 0xffffffffull)
        return (unsigned)n;
    return dflt;
}

/* PADDISER_SAMPLE_SHARE_PCT: the long-run share of the program's time that
 * sampled instances may cost (default 2; 0 = every instance sampled, also the
 * default under PADDISER_SAMPLE_BUDGET_PCT=0, the measurement setting, whose
 * value budget_pct is). */
static double sample_share(unsigned budget_pct)
{
    unsigned dflt = budget_pct ? 2 : 0;
    unsigned pct = env_unsigned("PADDISER_SAMPLE_SHARE_PCT", dflt);
    return pct ? pct / 100.0 : -1;
}

/* PADDISER_SAMPLER: where the access profile comes from. auto: PMU load
 * sampling where the PMU allows, else page protection; pmu: PMU only (no
 * page is ever protected, no profile without a PMU); mprotect: page
 * protection only. Returns the PMU sampler's period when it was started,
 * else 0 with *use_mprotect saying whether to protect pages instead. */
static uint64_t start_pmu_sampler(int *use_mprotect)
{
    enum { AUTO, PMU, MPROTECT } mode = AUTO;
    const char *v = getenv("PADDISER_SAMPLER");
    if (v && *v) {
        if (!strcmp(v, "pmu")) mode = PMU;
        else if (!strcmp(v, "mprotect")) mode = MPROTECT;
        else if (strcmp(v, "auto")) rt_message("PADDISER_SAMPLER=%s ignored (expected auto, pmu or mprotect)", v);
    }
    *use_mprotect = mode != PMU;
    if (mode == MPROTECT)
        return 0;
    pd_mem_event ev;
    char why[400] = "";
    unsigned period = env_unsigned("PADDISER_PMU_PERIOD", PD_MEM_PERIOD);
    if (pd_mem_event_discover(&ev, why, sizeof why) == 0 && pd_mem_sampler_start(&ev, period, why, sizeof why) == 0) {
        *use_mprotect = 0;
        return pd_mem_sampler_period();
    }
    if (mode == AUTO)
        rt_message("PMU load sampling unavailable (%s): sampling accesses by page protection (mprotect) instead", why);
    else
        rt_message("PADDISER_SAMPLER=pmu: PMU load sampling unavailable (%s): per-object accesses not measured", why);
    return 0;
}

static int open_backend(void)
{
    const pd_options *o = &rt.opt;
    rt.backend = NULL;
    rt.backend_note[0] = '\0';
    switch (o->backend) {
    case PD_BACKEND_NONE:
        snprintf(rt.backend_name, sizeof rt.backend_name, "none");
        return PD_OK;
    case PD_BACKEND_SIM: {
        /* Capacity 0 means "all": every registered byte fits. */
        rt.backend = pd_backend_sim_create(o->fast_capacity ? o->fast_capacity : (size_t)-1 / 2);
        if (!rt.backend)
            return PD_ENOMEM;
        snprintf(rt.backend_name, sizeof rt.backend_name, "sim");
        return PD_OK;
    }
    case PD_BACKEND_AUTO:
    case PD_BACKEND_NUMA:
        errno = 0;
        rt.backend = pd_backend_numa_create(o->fast_node, o->slow_node, o->fast_capacity);
        if (rt.backend) {
            snprintf(rt.backend_name, sizeof rt.backend_name, "numa");
            return PD_OK;
        }
        snprintf(rt.backend_name, sizeof rt.backend_name, "none");
        snprintf(rt.backend_note, sizeof rt.backend_note, "no slow memory tier (%s): planning only, pages are not moved",
                 errno == ENODEV || errno == 0 ? "no NUMA node besides the fast one" : strerror(errno));
        if (o->backend == PD_BACKEND_NUMA)
            return errno == ENODEV || errno == 0 ? PD_EUNSUPPORTED : PD_EIO;
        rt_message("%s", rt.backend_note);
        return PD_OK;
    }
    return PD_EINVAL;
}

/* The sampler stopped by itself: its SIGSEGV action was replaced. */
static void sampler_notice(const char *line) { rt_message("%s", line); }

int pd_init(const pd_options *opt)
{
    pthread_once(&atfork_once, atfork_register);
    pthread_mutex_lock(&rt.lock);
    if (rt.initialized) {
        pthread_mutex_unlock(&rt.lock);
        return PD_ESTATE;
    }
    if (atfork_rc)
        rt_message("pthread_atfork: %s: a fork() child may hang in the runtime", strerror(atfork_rc));
    if (rt.inherited) {
        release_state_locked(); /* a fork() child: the parent's runtime */
        rt.inherited = 0;
    }
    rt.forked_from = 0;
    pd_options o;
    if (opt)
        o = *opt;
    else
        pd_options_default(&o);
    if ((unsigned)o.backend > PD_BACKEND_NUMA || (unsigned)o.planner > PD_PLANNER_GREEDY ||
        (o.sampling != 0 && o.sampling != 1) || o.fast_node < -1 || o.slow_node < -1 ||
        (unsigned)o.thp > PD_THP_KEEP) {
        pthread_mutex_unlock(&rt.lock);
        return PD_EINVAL;
    }
    apply_env(&o);
    rt.opt = o;
    rt.opt.model_path = NULL; /* not kept: the caller owns the string */

    int rc = open_backend();
    if (rc != PD_OK) {
        pthread_mutex_unlock(&rt.lock);
        return rc;
    }
    rt_thp_init();
    if (!pd_perf_hw_available())
        rt_message("%s; using software features (CPU time, page faults, context switches, sampled accesses)",
                   pd_perf_reason());

    /* A NULL path always gives a model (the f = 1 fallback at worst, with
     * its own notice); an explicit path that does not load is an error. */
    char err[256] = "";
    rt.model = pd_model_load(o.model_path, err, sizeof err);
    if (!rt.model) {
        rt_message("performance model %s: %s", o.model_path ? o.model_path : "(default)", err[0] ? err : "out of memory");
        if (rt.backend)
            rt.backend->destroy(rt.backend);
        rt.backend = NULL;
        pthread_mutex_unlock(&rt.lock);
        return o.model_path ? PD_EIO : PD_ENOMEM;
    }

    rt_store_load(); /* a notice, never an error: without it sizes alone */

    rt.sampling = 0;
    rt.pmu_period = 0;
    snprintf(rt.sampling_note, sizeof rt.sampling_note, "off (pd_options.sampling = 0 or PADDISER_SAMPLING=off)");
    int use_mprotect = 0;
    if (o.sampling) {
        rt.pmu_period = start_pmu_sampler(&use_mprotect);
        if (!rt.pmu_period && !use_mprotect)
            snprintf(rt.sampling_note, sizeof rt.sampling_note,
                     "PADDISER_SAMPLER=pmu and no PMU load sampling: per-object accesses not measured");
    }
    if (rt.pmu_period || use_mprotect) {
        /* read once: each sets more than one field below */
        unsigned budget_pct = env_unsigned("PADDISER_SAMPLE_BUDGET_PCT", 1);
        unsigned allowance_ms = env_unsigned("PADDISER_SAMPLE_ALLOWANCE_MS", 0);
        unsigned allowance_pct = env_unsigned("PADDISER_SAMPLE_ALLOWANCE_PCT", 2);
        pd_sampler_config cfg = {
            .seed = env_unsigned("PADDISER_SAMPLE_SEED", 12345),
            .max_samples = env_unsigned("PADDISER_SAMPLE_MAX", 16384),
            .min_per_object = env_unsigned("PADDISER_SAMPLE_MIN_PER_OBJECT", PD_SAMPLE_MIN_PER_OBJECT),
            .period_ms = env_unsigned("PADDISER_SAMPLE_PERIOD_MS", 10),
            /* 0 = unlimited */
            .budget = budget_pct ? budget_pct / 100.0 : -1,
            /* 0 (the default) = none: past its first arming pass an
             * instance re-arms at the budget alone. The fixed 20 ms it was
             * until 2026-12-06 went to the first instance, whose length is
             * not known: half of its sampling cost on the phases example,
             * and the simulator's placements were better without it
             * (docs/runtime-measurements.md, *No fixed allowance*). */
            .allowance_s = allowance_ms ? allowance_ms / 1000.0 : -1,
            /* 0 = the fixed allowance alone */
            .allowance_frac = allowance_pct ? allowance_pct / 100.0 : -1,
            /* 0 = every instance sampled */
            .share = sample_share(budget_pct),
            /* 0 (the default: a thin first profile placed bfs worse in the
             * simulator, docs/runtime.md "Overhead bound"), or the
             * measurement setting: every spell arms every sample */
            .spell_frac = budget_pct ? env_unsigned("PADDISER_SAMPLE_SPELL_PCT", 0) / 100.0 : 0,
            /* plus the per-instance allowance where one is set, else 20 ms
             * (what the thinning options were measured with): a first
             * instance of a few ms is still sampled whole where that costs
             * under 20 ms */
            .spell_floor_s = (allowance_ms ? allowance_ms : 20) / 1000.0,
            /* off by default: at 75% it cut GAP's sssp first trial (a
             * barrier per bucket, thousands a trial, each a whole spell)
             * from 4.7 s to 0.9 s, but it also thinned the simulator's bfs
             * profile, which then placed worse than hot-first
             * (docs/runtime.md, "Overhead bound", part 1) */
            .spell_cap = budget_pct ? env_unsigned("PADDISER_SAMPLE_CAP_PCT", 0) / 100.0 : 0,
            .rotate = !rt_env_off("PADDISER_SAMPLE_ROTATE"),
            .no_protect = rt.pmu_period != 0, /* the sample table only: PMU samples are charged to it */
            .notify = sampler_notice,
        };
        /* the sampling allowance's share (or the spell share where one is
         * set); none in the measurement setting (no budget) */
        rt.store_thin_frac = cfg.spell_frac > 0 ? cfg.spell_frac : cfg.budget > 0 ? fmax(cfg.allowance_frac, 0) : 0;
        rt.store_thin_cap = cfg.spell_floor_s;
        int src = pd_sampler_start(&cfg);
        if (src == 0) {
            rt.sampling = 1;
            rt.sampling_note[0] = '\0';
        } else {
            snprintf(rt.sampling_note, sizeof rt.sampling_note,
                     "page sampling unavailable (%s): per-object accesses not measured", strerror(-src));
            rt_message("%s", rt.sampling_note);
            if (rt.pmu_period)
                pd_mem_sampler_stop();
            rt.pmu_period = 0;
        }
    }
    rt.allgather = NULL;
    rt.allgather_ctx = NULL;
    rt.nprocs = 0;
    rt.nonce = ((uint64_t)getpid() << 32) ^ (uint64_t)(pd_now() * 1e6) ^ (uint64_t)(uintptr_t)&o;
    rt.ntasks = 0;
    rt.active = 0;
    rt.instance_open = 0;
    rt.instances = 0;
    rt.makespan = 0;
    rt.capacity = 0;
    rt.fast_bytes = 0;
    rt.ranges_dirty = 1;
    rt.plan_stale = 0;
    memset(&rt.last_migration, 0, sizeof rt.last_migration);
    memset(&rt.last_demoted, 0, sizeof rt.last_demoted);
    memset(&rt.last_decision, 0, sizeof rt.last_decision);
    rt.last_decision.model_s = rt.last_decision.hot_first_s = NAN; /* no plan yet */
    rt.nmove_s = rt.move_next = 0; /* a new backend: its moves are measured anew */
    rt.input_run = 0;
    rt.last_ran_input = 0;
    /* an earlier run's visits (the profile store): the horizon of this
     * run's first visit starts from them */
    rt.nvisits = rt_store_visits(rt.visit_len, RT_VISITS_KEPT);
    rt.visit_next = rt.nvisits % RT_VISITS_KEPT;
    rt.adopt_pending = 0;
    rt.start_slow = 0;
    const char *start = getenv("PADDISER_START_TIER");
    if (start && !strcmp(start, "slow"))
        rt.start_slow = 1;
    else if (start && *start && strcmp(start, "first-touch"))
        rt_message("PADDISER_START_TIER=%s ignored (expected first-touch or slow)", start);
    rt.epoch++;
    rt.initialized = 1;
    pthread_mutex_unlock(&rt.lock);
    return PD_OK;
}

/* Appends rows to $PADDISER_TASKS_CSV (several MPI ranks may share the file:
 * one locked append per process, header only into an empty file). */
static int write_tasks_csv(const char *path)
{
    const char *policy = getenv("PADDISER_POLICY");
    if (!policy)
        policy = rt.opt.planner == PD_PLANNER_GREEDY ? "greedy" : "exact";
    pd_str rows = {0};
    for (int i = 0; i < rt.ntasks; i++) {
        rt_task *t = rt.tasks[i];
        if (!t->instances)
            continue;
        pd_csv_put_field(&rows, policy);
        pd_str_printf(&rows, ",%d,%.9g,%.6g,%zu\n", t->id, t->last_time, t->ran_share, t->ran_bytes);
    }
    if (rows.oom) {
        pd_str_free(&rows);
        return PD_ENOMEM;
    }
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) {
        rt_message("cannot write PADDISER_TASKS_CSV %s: %s", path, strerror(errno));
        pd_str_free(&rows);
        return PD_EIO;
    }
    int rc = PD_OK;
    flock(fd, LOCK_EX);
    struct stat st;
    pd_str out = {0};
    if (fstat(fd, &st) == 0 && st.st_size == 0)
        pd_str_append(&out, "policy,task,time_s,dram_share,dram_bytes\n");
    if (rows.data)
        pd_str_append(&out, rows.data);
    if (out.oom) {
        rc = PD_ENOMEM;
    } else if (out.len && write(fd, out.data, out.len) != (ssize_t)out.len) {
        rt_message("cannot write PADDISER_TASKS_CSV %s: %s", path, strerror(errno));
        rc = PD_EIO;
    }
    flock(fd, LOCK_UN);
    close(fd);
    pd_str_free(&out);
    pd_str_free(&rows);
    return rc;
}

int pd_finalize(void)
{
    pthread_mutex_lock(&rt.lock);
    if (!rt.initialized) {
        pthread_mutex_unlock(&rt.lock);
        return PD_ESTATE;
    }
    int rc = PD_OK;
    if (rt.active > 0) {
        rt_message("pd_finalize with %d task(s) still running: their instance is dropped", rt.active);
        rc = PD_ESTATE;
    } else if (rt.instance_open) {
        /* The last instance ended without a sync point: keep its profile
         * (for the CSV and queries); no plan is needed any more. */
        rt_sync_locked(0);
    }
    const char *csv = getenv("PADDISER_TASKS_CSV");
    if (csv && *csv) {
        int wrc = write_tasks_csv(csv);
        if (rc == PD_OK)
            rc = wrc;
    }
    if (rt.pmu_period) {
        pd_mem_sampler_stop(); /* every thread's event (their rings were drained at task ends) */
        pd_mem_stats ms;
        pd_mem_sampler_get_stats(&ms);
        if (ms.lost)
            rt_message("PMU load sampling: the kernel dropped %llu of %llu samples (rings full); "
                       "a larger PADDISER_PMU_PERIOD samples less often",
                       (unsigned long long)ms.lost, (unsigned long long)(ms.lost + ms.samples));
    }
    if (rt.sampling)
        pd_sampler_stop();
    rt_store_save(); /* not an error of the run: a notice says why not */
    rt.sampling = 0;
    rt.pmu_period = 0;
    release_state_locked();
    rt.initialized = 0;
    pthread_mutex_unlock(&rt.lock);
    return rc;
}

int pd_plan_query(pd_task_plan *out, int max, double *makespan)
{
    if (max < 0 || (max > 0 && !out))
        return PD_EINVAL;
    pthread_mutex_lock(&rt.lock);
    if (!rt_ready_locked()) {
        pthread_mutex_unlock(&rt.lock);
        return PD_ESTATE;
    }
    if (rt.plan_stale && rt.active == 0)
        rt_replan_locked(0);
    int n = 0;
    for (int i = 0; i < rt.ntasks; i++) {
        rt_task *t = rt.tasks[i];
        if (!t->planned)
            continue;
        if (n < max)
            out[n] = (pd_task_plan){t->id,          t->plan_share,      t->plan_bytes, t->plan_time,
                                    t->pred_n,      t->pred_same_input, t->pred_cv,    t->pred_mem_bound,
                                    t->pred_mem_se};
        n++;
    }
    if (makespan)
        *makespan = rt.makespan;
    pthread_mutex_unlock(&rt.lock);
    return n;
}

int pd_profile_info_get(pd_profile_info *out)
{
    if (!out)
        return PD_EINVAL;
    memset(out, 0, sizeof *out);
    int hw = pd_perf_hw_available();
    out->hw_counters = hw;
    snprintf(out->counters_note, sizeof out->counters_note, "%s", pd_perf_reason());
    pthread_mutex_lock(&rt.lock);
    out->initialized = rt.initialized;
    if (rt.initialized) {
        snprintf(out->sampling_note, sizeof out->sampling_note, "%s", rt.sampling_note);
        out->sampling = rt.sampling && !pd_sampler_stopped(out->sampling_note, sizeof out->sampling_note);
        snprintf(out->sampler, sizeof out->sampler, "%s",
                 !out->sampling ? "off" : rt.pmu_period ? "pmu" : "mprotect");
        if (rt.sampling) {
            pd_sampler_stats st;
            pd_sampler_get_stats(&st);
            out->samples = pd_sampler_nsamples();
            out->region_bytes = pd_sampler_region_bytes();
            out->sampled_faults = st.faults;
            out->instances_sampled = rt.pmu_period ? rt.instances : (int)st.instances_sampled;
            out->sampling_cost_s = st.cost_s;
            out->sampling_wall_s = st.wall_s;
        }
        snprintf(out->backend, sizeof out->backend, "%s", rt.backend_name);
        snprintf(out->backend_note, sizeof out->backend_note, "%s", rt.backend_note);
        out->model_loaded = rt.model && !pd_model_is_fallback(rt.model);
        out->instances = rt.instances;
        out->fast_capacity = rt.capacity;
        out->pages_moved = rt.last_migration.pages_moved;
        out->pages_failed = rt.last_migration.pages_failed;
        out->bytes_moved = rt.last_migration.bytes_moved;
        out->pages_demoted = rt.last_demoted.pages_moved;
        out->bytes_demoted = rt.last_demoted.bytes_moved;
        out->plan_decided = rt.last_decision.decided;
        out->plan_kept = rt.last_decision.kept;
        out->plan_current_s = rt.last_decision.current_s;
        out->plan_planned_s = rt.last_decision.planned_s;
        out->plan_cost_s = rt.last_decision.cost_s;
        out->plan_min_gain_s = rt.last_decision.min_gain_s;
        out->plan_horizon = rt.last_decision.horizon;
        out->plan_hot_first = rt.last_decision.hot_first;
        out->plan_model_s = rt.last_decision.model_s;
        out->plan_hot_first_s = rt.last_decision.hot_first_s;
        out->migrate_s_per_page = rt_migrate_seconds_per_page();
        snprintf(out->thp, sizeof out->thp, "%s",
                 rt.thp == PD_THP_OFF ? "off" : rt.thp == PD_THP_KEEP ? "keep" : "system");
        out->thp_off_bytes = rt.thp_off_bytes;
        snprintf(out->thp_note, sizeof out->thp_note, "%s", rt.thp_note);
    }
    pthread_mutex_unlock(&rt.lock);
    return PD_OK;
}

int pd_task_profile_get(int task, pd_task_profile *out)
{
    if (!out || task < 0)
        return PD_EINVAL;
    pthread_mutex_lock(&rt.lock);
    int rc = PD_OK;
    rt_task *t = rt_ready_locked() ? rt_task_find(task) : NULL;
    if (!rt.initialized) {
        rc = PD_ESTATE;
    } else if (!t) {
        rc = PD_ENOTFOUND;
    } else {
        memset(out, 0, sizeof *out);
        out->task = t->id;
        out->instances = t->instances;
        out->base_time = t->base_time;
        out->last_time = t->last_time;
        memcpy(out->features, t->last_feat, sizeof out->features);
        out->hw_counters = t->last_hw;
        for (size_t o = 0; o < t->nacc; o++)
            out->accesses += t->last_acc[o];
    }
    pthread_mutex_unlock(&rt.lock);
    return rc;
}

int pd_object_accesses(int object, int task, double *out)
{
    if (!out || object < 0)
        return PD_EINVAL;
    pthread_mutex_lock(&rt.lock);
    int rc = PD_OK;
    if (!rt_ready_locked()) {
        rc = PD_ESTATE;
    } else if ((size_t)object >= rt.nobjects || !rt.objects[object].used) {
        rc = PD_ENOTFOUND;
    } else {
        double sum = 0;
        int found = task < 0;
        for (int i = 0; i < rt.ntasks; i++) {
            rt_task *t = rt.tasks[i];
            if (task >= 0 && t->id != task)
                continue;
            found = 1;
            if ((size_t)object < t->nacc)
                sum += t->last_acc[object];
        }
        if (!found)
            rc = PD_ENOTFOUND;
        *out = sum;
    }
    pthread_mutex_unlock(&rt.lock);
    return rc;
}

