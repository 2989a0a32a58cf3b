/* Thermostat-style page sampling in user space.
 *
 * For every registered range, one 4 KB page per region (2 MB, larger when the
 * sample budget would be exceeded), but at least min_per_object pages per
 * range (every page of a smaller one), one at a seeded random offset in each
 * of equal strata, is protected PROT_NONE (adjacent samples with one
 * mprotect). The first access to it raises SIGSEGV; the handler
 * (async-signal-safe: atomics, clock_gettime and a preallocated sorted table)
 * counts it for the faulting thread's current task with the time since
 * arming, restores read-write and leaves the page open until the next re-arm
 * (a periodic tick, or a task boundary, within the overhead budget). A
 * sample count is therefore "intervals in which the page was touched"; scaled
 * by the pages its region holds it estimates the region's accesses.
 *
 * Faults that are not on a sampled page are passed to the previous SIGSEGV
 * handler (or the default action), so real crashes still crash. A SIGSEGV
 * action installed after ours stops sampling for good (see
 * pd_sampler_stopped): it is noticed at the next re-arm, skipped re-arm or
 * tick, and every sample is unprotected then.
 *
 * Caveat: while armed, a system call that reads or writes a sampled page
 * (read(2) into a registered buffer, MPI shared-memory copies) gets EFAULT
 * instead of a signal. The runtime arms only while a task instance runs. */
#ifndef PD_LIB_PAGE_SAMPLER_H
#define PD_LIB_PAGE_SAMPLER_H

#include <stddef.h>
#include <stdint.h>

#define PD_SAMPLE_PAGE 4096u
#define PD_SAMPLE_REGION (2u << 20)
#define PD_SAMPLE_MIN_PER_OBJECT 64
#define PD_SAMPLER_MAX_TASKS 4096 /* task slots that get their own counts */
#define PD_SAMPLER_NO_TASK (-1)

typedef struct {
    void *addr;
    size_t len;
    int object;
} pd_sampler_range;

typedef struct {
    void *page;        /* the sampled 4 KB page */
    int object;
    void *region;      /* the part of the object this page stands for */
    size_t region_len;
} pd_sample_info;

typedef struct {
    unsigned seed;       /* page choice; 0 = 1 */
    size_t max_samples;  /* budget over all ranges; 0 = 16384 */
    size_t min_per_object; /* samples of an object at least (all its pages when
                              it has fewer); 0 = PD_SAMPLE_MIN_PER_OBJECT */
    unsigned period_ms;  /* re-arm tick; 0 = no tick (re-arm at task boundaries only) */
    double budget;       /* overhead bound: after a re-arm pass that took d seconds
                            and was followed by F sampled faults of c seconds each
                            (calibrated at start), the next budgeted pass waits
                            until (d + F c) / budget after it; 0 = 0.02;
                            < 0 = unlimited (every pass is due) */
    double allowance_s;  /* sampling cost (passes + faults) per instance, from
                            pd_sampler_reset_counts to the next, before the budget
                            applies: short instances are still sampled in every
                            phase; 0 = 0.02 s, < 0 = none */
    double allowance_frac; /* ... but at most this fraction of the previous
                              instance's length (reset to reset), so the
                              allowance is a share of the instance, not a
                              fixed cost that dominates short instances (it
                              was +18-20% on 50 ms instances); 0 = 0.02,
                              < 0 = the fixed allowance_s alone. The first
                              instance (no length yet) gets allowance_s. */
    double share;        /* long-run bound on the sampling cost: an instance is
                            sampled (pd_sampler_instance_begin) only while the
                            measured cost of the sampled instances so far,
                            plus one more like the last, stays within this
                            share of all instances' time; 0 = 0.02, < 0 = every
                            instance is sampled */
    double spell_frac;   /* the first or a forced instance's spells of activity
                            arm a thinned slice of the samples so that the
                            instance's sampling cost stays within this fraction
                            of its elapsed time, plus spell_floor_s (the
                            runtime's: PADDISER_SAMPLE_SPELL_PCT, off by
                            default); 0 or < 0 = every spell arms every sample
                            (no thinning) */
    double spell_floor_s; /* 0 = 0.001 */
    double spell_cap;    /* any sampled instance (whole ones too): once arming
                            every sample in a spell would take the
                            instance's sampling cost past this fraction of
                            its elapsed time, plus spell_floor_s and one
                            whole spell, the spell arms a slice (1 in k, k up
                            to 65536, each fault counting k), so an instance
                            of thousands of barriers (thousands of spells)
                            is not slowed without bound; the runtime's:
                            PADDISER_SAMPLE_CAP_PCT, off by default; 0, < 0
                            or >= 1 = no cap */
    int rotate;          /* each sampled instance after the first draws every
                            sample's page afresh within its stratum (the
                            region it stands for stays), so that across
                            instances a region's heat and the measured share
                            rest on several of its pages, not one; the
                            runtime's: on unless PADDISER_SAMPLE_ROTATE=off */
    int no_protect;      /* counts come only from pd_sampler_record (the PMU
                            sampler, mem_sampler.h): no SIGSEGV handler, no
                            re-arm thread, no page is ever protected */
    void (*notify)(const char *line); /* told once, with one line, when sampling
                              stops by itself (pd_sampler_stopped); called
                              from the thread that noticed, with the
                              sampler's lock held: it must not call the
                              sampler. NULL: nobody is told. */
} pd_sampler_config;

/* Installs the SIGSEGV handler and starts the re-arm thread. */
int pd_sampler_start(const pd_sampler_config *cfg);
/* Disarms, restores the previous handler (unless ours was replaced since),
 * frees everything. */
void pd_sampler_stop(void);
int pd_sampler_running(void);
/* 1 when a running sampler stopped sampling because its SIGSEGV action was
 * replaced; why (may be NULL) gets the line notify was given, or "". */
int pd_sampler_stopped(char *why, size_t len);

/* pthread_atfork handlers (the runtime registers them): prepare takes the
 * sampler's lock, parent releases it; child leaves the child without a
 * sampler (every sample unprotected, the previous SIGSEGV action back,
 * pd_sampler_start possible again). */
void pd_sampler_fork_prepare(void);
void pd_sampler_fork_parent(void);
void pd_sampler_fork_child(void);

/* Replaces the sampled ranges (disarms first). 0, or -errno. */
int pd_sampler_set_ranges(const pd_sampler_range *ranges, size_t n);
/* Stops sampling one range at once (unregistered, moved or freed memory must
 * not stay protected): its samples are unprotected and never re-armed. */
void pd_sampler_drop_object(int object);
/* A new spell of activity: protect every sample, or the slice of them the
 * instance affords (spell_frac), and start counting / unprotect all (stop
 * counting). */
void pd_sampler_arm(void);
void pd_sampler_disarm(void);
int pd_sampler_armed(void);
/* Same as arm, unless the overhead budget says it is too soon: then the
 * sampler counts as armed but pages stay open until a due re-arm. */
void pd_sampler_arm_if_due(void);
/* Re-protect the samples that fired since the last re-arm. */
void pd_sampler_rearm(void);
/* Same, unless the overhead budget says it is too soon (task boundaries). */
void pd_sampler_rearm_if_due(void);

/* Charges one access at addr to the sample whose region holds it, for task
 * slot (the PMU sampler's entry point; lock-free, like the fault handler).
 * Returns 1 when counted, 0 when addr is in no sampled region (outside every
 * registered object, or an object without samples or dropped). */
int pd_sampler_record(uintptr_t addr, int slot);

/* The calling thread's task slot (faults are counted for it). */
void pd_sampler_set_thread_task(int slot);
int pd_sampler_thread_task(void);

/* A thread's time handling sampled faults, for waits net of it. A task
 * that runs into armed pages takes one fault every ~10 us (trap, handler,
 * restore and its TLB shootdown, on this project's VM), so the k-th page
 * it first touches after arming waited about k faults longer than its own
 * progress says: on the simulator's bfs the randomly read `level` (64
 * pages) showed waits of 100 - 300 us, as long as the task's whole
 * counting interval, and its touches per interval (interval / wait) came
 * out near 2 where the task reads each page hundreds of times. The ring
 * holds when each of the thread's last PD_BUSY_RING faults began and the
 * busy time before it; total is the busy time so far. One per thread, in
 * initial-exec TLS (the handler's): the library's TLS grew from 48 to 576
 * bytes, and a dlopen of libpaddiser.so (python3 ctypes) still loads. */
#define PD_BUSY_RING 32
typedef struct {
    uint64_t at[PD_BUSY_RING];     /* ns: a fault began */
    uint64_t before[PD_BUSY_RING]; /* total then */
    uint64_t total;
    unsigned head, len;
} pd_busy_ring;
/* Records a fault that began at `began` and kept the thread `busy` ns. */
void pd_busy_ring_add(pd_busy_ring *r, uint64_t began, uint64_t busy);
/* The busy time of the faults that began in [since, now); where the ring
 * is full and its oldest fault began after since, the ring's busy share of
 * its own span stands for the time before it. */
uint64_t pd_busy_ring_since(const pd_busy_ring *r, uint64_t since, uint64_t now);
/* Test hook: the sampler's clock in nanoseconds (NULL restores
 * CLOCK_MONOTONIC): arming, task switches and the fault handler, and the
 * instances' lengths, the passes' costs and the fault-cost calibration
 * that the budget and the share weigh. A test can then give faults, work
 * and the time between instances exact durations; set it before
 * pd_sampler_start for a calibration on it too. Called in the signal
 * handler: the hook must be async-signal-safe. */
void pd_sampler_set_clock(uint64_t (*ns)(void));

size_t pd_sampler_nsamples(void);
size_t pd_sampler_region_bytes(void);
int pd_sampler_sample(size_t i, pd_sample_info *out);
/* Count of sample i for task slot (PD_SAMPLER_NO_TASK: faults outside tasks). */
uint64_t pd_sampler_count(size_t i, int slot);
/* Calls fn for every (sample, task slot, count > 0). */
void pd_sampler_foreach(void (*fn)(void *ctx, size_t sample, int slot, uint64_t count), void *ctx);
/* Same, with the summed time from arming (or from the task's start on the
 * faulting thread, if later) to each counted fault, less the faulting
 * thread's handling of sampled faults meanwhile (pd_busy_ring): count /
 * wait estimates how often the task touches the page while it runs. */
void pd_sampler_foreach_wait(void (*fn)(void *ctx, size_t sample, int slot, uint64_t count, double wait_s),
                             void *ctx);
void pd_sampler_reset_counts(void);
/* The counts of the instance so far, summed, over the faults behind them:
 * 1 when every spell armed every sample, k on average when spells armed a
 * slice of 1 in k (each fault then counts k; a thinned instance without a
 * fault: its last slice's k). The counts' noise grows with it. */
double pd_sampler_count_weight(void);
/* The instance so far: its sampling cost (passes, faults at the calibrated
 * cost) over the time since its first task began; 0 when it is not sampled. */
double pd_sampler_instance_cost_share(void);
/* At an instance's start (its first task begin): 1 when this instance is
 * sampled, 0 when the long-run share (pd_sampler_config.share) is spent and
 * nothing may be armed in it. `force` samples it whatever the cost (a task or
 * object with no profile yet). The instance ends at pd_sampler_reset_counts;
 * its time, for the share, runs from here to the last pd_sampler_disarm
 * before that (its last task's end), or to the reset if there was none. */
int pd_sampler_instance_begin(int force);
/* After pd_sampler_reset_counts ended a sampled instance: how much longer
 * it took than the caller predicted for it unsampled (the runtime: its
 * makespan over the plan's, for an instance that continued its input).
 * Faults and arming passes are all the sampler measures; the program also
 * loses what the protection changes cost its other threads (TLB shootdowns,
 * refills) and what the faults do to its caches. The share then counts
 * every sampled instance's measured cost times the median of the last
 * PD_SAMPLER_WALL_RATIOS ratios excess / measured cost, each within
 * [PD_SAMPLER_WALL_MIN, PD_SAMPLER_WALL_MAX]: never less than measured, so
 * noise in the predictions can only make the sampler sample less. Ignored
 * for an instance that cost nothing measured, or excess_s not finite. */
#define PD_SAMPLER_WALL_RATIOS 8
#define PD_SAMPLER_WALL_MIN 1.0
#define PD_SAMPLER_WALL_MAX 10.0
void pd_sampler_note_wall_excess(double excess_s);
/* The next instance that begins, if it is one whose spells are thinned (the
 * first, a forced one), thins them to `frac` of its elapsed time plus
 * floor_s instead of the configured spell_frac / spell_floor_s, where the
 * caller knows what it can afford (the runtime: an earlier run's heat and
 * instance length, profile_store.h). frac <= 0: as configured. */
void pd_sampler_thin_next(double frac, double floor_s);
/* Changes whenever the sample table is replaced: sample indices kept from
 * an earlier instance name the same pages while it is unchanged. */
unsigned pd_sampler_table_generation(void);
/* 1 while page protection samples some instances and skips others (a share
 * is set): a sampled instance's time is not like the others'. */
int pd_sampler_duty_cycled(void);

typedef struct {
    uint64_t faults;        /* sampled faults counted */
    uint64_t rearms;        /* pages re-protected */
    uint64_t passes;        /* re-arm passes */
    uint64_t skipped;       /* boundary re-arms skipped by the budget */
    uint64_t lost;          /* counts dropped (count table full) */
    uint64_t mprotect_failures;
    uint64_t chained;       /* foreign faults passed on */
    uint64_t protect_calls; /* mprotect calls arming/disarming (adjacent samples share one) */
    double fault_cost_s;    /* calibrated cost of one sampled fault */
    double trap_s;          /* ... its part outside the handler (the kernel's
                               trap and return), added to the thread's busy time */
    uint64_t instances;     /* instances begun (pd_sampler_instance_begin) */
    uint64_t instances_sampled;
    double cost_s;          /* measured cost of the sampled instances: arming and
                               disarming passes, faults at fault_cost_s */
    double wall_factor;     /* what the share multiplies cost_s by
                               (pd_sampler_note_wall_excess; 1 without) */
    double wall_s;          /* time of all ended instances, reset to reset */
    uint64_t spells;        /* spells of activity armed (pd_sampler_arm) */
    uint64_t spells_thinned; /* ... with a slice of the samples */
    unsigned max_thinning;  /* the largest slice factor used */
    size_t samples_enabled; /* samples of the table still armed by passes (not
                               dropped with their object, no mprotect failure) */
    uint64_t rotations;     /* tables whose pages were drawn afresh (rotate) */
} pd_sampler_stats;
void pd_sampler_get_stats(pd_sampler_stats *st);

#endif
