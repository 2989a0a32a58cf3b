/* Thermostat-style page sampling (see page_sampler.h). */
#include "lib/page_sampler.h"
#include "common/util.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#define TLS_IE __attribute__((tls_model("initial-exec")))

typedef struct {
    size_t n;
    uintptr_t *page; /* sorted, for the handler's binary search */
    int *object;
    uintptr_t *region;
    size_t *region_len;
    atomic_uchar *armed;     /* 1 = protected (or a handler is restoring it) */
    unsigned char *disabled; /* mprotect failed or object dropped: never armed again */
    size_t ndisabled;        /* how many are (under S.lock, as disabled is set) */
    /* (sample, task) -> count, open addressing, keys claimed with CAS. */
    size_t hcap;
    _Atomic uint64_t *hkey;
    _Atomic uint64_t *hcount;
    _Atomic uint64_t *hwait;  /* summed ns from arming (or task start) to the fault */
    _Atomic uint64_t *armed_ns; /* per sample: when the last pass armed it */
    _Atomic uint32_t *weight;   /* per sample: what one of its faults counts (the
                                   slice factor of the spell that armed it) */
} sample_table;

static struct {
    int running;
    int no_protect; /* fed by pd_sampler_record only: nothing is ever protected */
    pthread_mutex_t lock; /* table swaps, arm/disarm, re-arm passes */
    pthread_cond_t wake;
    pthread_t ticker;
    int stop_ticker;
    unsigned period_ms;
    unsigned seed;
    int rotate;
    uint64_t rotate_rng; /* the redrawn pages' choice */
    uint64_t rotations;  /* tables redrawn (pd_sampler_get_stats) */
    size_t max_samples;
    size_t min_per_object;
    size_t region_bytes;
    double budget;
    double last_end;   /* monotonic seconds: the last re-arm pass ended */
    double last_pass;  /* seconds the last re-arm pass took */
    uint64_t faults_at_pass; /* S.faults when it ended */
    double fault_cost; /* seconds per sampled fault (arm, trap, handler, restore), calibrated */
    double allowance;  /* seconds of sampling cost per instance before the budget applies, at most */
    double allowance_frac; /* ... and at most this share of the previous instance (< 0: no bound) */
    double inst_allowance; /* this instance's */
    double inst_passes; /* this instance (since the counts were reset): pass seconds,
                           arming and disarming */
    double share;      /* long-run bound: sampled instances' cost over all instances' time */
    int inst_sampled;  /* this instance may arm (pd_sampler_instance_begin) */
    double cost_total; /* cost of the sampled instances that ended */
    double wall_total; /* time of all instances that ended */
    double last_cost;  /* the last sampled instance's cost */
    double last_wall;  /* the last instance's time */
    /* What a sampled instance costs the program beyond its measured cost
     * (pd_sampler_note_wall_excess): the ratios wall excess / measured
     * cost of the last sampled instances, and their median (1 without any),
     * which the share multiplies the measured costs by. */
    double wall_ratio[PD_SAMPLER_WALL_RATIOS];
    unsigned nwall_ratios;
    double wall_factor;
    uint64_t instances, instances_sampled;
    /* Thinned spells: a sampled instance's spell of activity arms only the
     * samples i with (i + spell_off) % spell_k == 0, each fault counting
     * spell_k (an unbiased count: every sample is in the slice with
     * probability 1 / spell_k, the offset being random). */
    double spell_frac;   /* < 0: no thinning */
    int inst_thin;       /* this instance's spells may be thinned */
    double last_whole;   /* the last sampled instance's cost, had it armed whole */
    double spell_floor;
    double spell_cap;    /* every sampled instance: thinned past this share (< 0: none) */
    /* The next instance's, where the caller knows what it may afford
     * (pd_sampler_thin_next); < 0: the configured ones. */
    double next_frac, next_floor;
    double inst_frac, inst_floor; /* the instance's (one of the two) */
    double inst_begin;   /* monotonic seconds: the instance's first task began */
    double inst_end;     /* ... its last spell ended (the last disarm), 0: none yet */
    unsigned spell_k, spell_off;
    double sample_cost;  /* seconds an armed sample costs a spell (arming, faults, disarm) */
    double spell_cost0;  /* the instance's cost when this spell began */
    uint64_t spell_armed; /* samples this spell armed */
    uint64_t spells, spells_thinned;
    unsigned max_k;
    uint64_t slice_rng;
    _Atomic uint64_t weighted; /* faults, each counted with its weight */
    uint64_t inst_weighted_base; /* S.weighted when the instance began */
    uint64_t inst_faults_base; /* S.faults when it began */
    _Atomic uintptr_t scratch; /* calibration page: the handler only restores it */
    uint64_t mprotect_calls; /* arming and disarming calls (under lock) */
    struct sigaction previous;
    int installed;     /* our SIGSEGV action was installed (over S.previous) */
    int handler_lost;  /* ... and replaced since: nothing is armed again */
    char lost_line[256]; /* what replaced it, as notify was told */
    void (*notify)(const char *line);
    _Atomic(sample_table *) table;
    atomic_int armed;
    atomic_int inflight; /* handlers running: a table is freed only at 0 */
    atomic_uint swaps;   /* sample tables replaced (set_ranges, stop) */
    /* A fault's cost outside the handler (trap, signal frame, return),
     * calibrated; the calibration fault's handler time. */
    _Atomic uint64_t trap_ns, scratch_handler_ns;
    _Atomic uint64_t faults, rearms, passes, skipped, lost, mprotect_failures, chained;
} S = {.lock = PTHREAD_MUTEX_INITIALIZER, .wake = PTHREAD_COND_INITIALIZER};

static __thread int thread_task TLS_IE = PD_SAMPLER_NO_TASK;
static __thread uint64_t thread_task_since TLS_IE; /* ns: the task began on this thread */
/* The last fault this thread retried as stale (see on_segv), and the table
 * swap count then. */
static __thread uintptr_t retried_addr TLS_IE;
static __thread unsigned retried_swaps TLS_IE;

/* Test hook (pd_sampler_set_clock): NULL, the monotonic clock. Every
 * time the sampler reads (faults and arming in ns, instance lengths, pass
 * costs and the share's budget in seconds) comes from it. Atomic: the
 * ticker thread and the signal handler read it while a test sets it. */
typedef uint64_t (*clock_fn)(void);
static _Atomic(clock_fn) clock_override;

static double now_s(void)
{
    clock_fn fn = atomic_load_explicit(&clock_override, memory_order_relaxed);
    return fn ? (double)fn() * 1e-9 : pd_monotonic();
}

static uint64_t mono_ns(void)
{
    clock_fn fn = atomic_load_explicit(&clock_override, memory_order_relaxed);
    if (fn)
        return fn();
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts); /* async-signal-safe */
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The time this thread spent handling sampled faults (pd_busy_ring in
 * page_sampler.h): a wait to first touch is counted net of it. */
static __thread pd_busy_ring thread_busy TLS_IE;

uint64_t pd_busy_ring_since(const pd_busy_ring *r, uint64_t since, uint64_t now)
{
    unsigned k = 0; /* faults, newest first, that began at or after since */
    while (k < r->len && r->at[(r->head + PD_BUSY_RING - 1 - k) % PD_BUSY_RING] >= since)
        k++;
    if (!k)
        return 0;
    unsigned oldest = (r->head + PD_BUSY_RING - k) % PD_BUSY_RING;
    uint64_t busy = r->total - r->before[oldest];
    if (k == PD_BUSY_RING && now > r->at[oldest]) {
        /* older faults fell out of the ring: the same busy share before it */
        double share = (double)busy / (double)(now - r->at[oldest]);
        busy += (uint64_t)((share < 1 ? share : 1) * (double)(r->at[oldest] - since));
    }
    return busy;
}

void pd_busy_ring_add(pd_busy_ring *r, uint64_t began, uint64_t busy)
{
    r->at[r->head] = began;
    r->before[r->head] = r->total;
    r->head = (r->head + 1) % PD_BUSY_RING;
    if (r->len < PD_BUSY_RING)
        r->len++;
    r->total += busy;
}

void pd_sampler_set_clock(uint64_t (*ns)(void)) { atomic_store(&clock_override, ns); }

void pd_sampler_set_thread_task(int slot)
{
    thread_task = slot;
    thread_task_since = mono_ns();
}
int pd_sampler_thread_task(void) { return thread_task; }

/* ---- counting (signal context) --------------------------------------------- */

static uint64_t count_key(size_t sample, int slot)
{
    uint64_t code = (slot < 0 || slot >= PD_SAMPLER_MAX_TASKS) ? PD_SAMPLER_MAX_TASKS : (uint64_t)slot;
    return (uint64_t)sample * (PD_SAMPLER_MAX_TASKS + 1) + code + 1;
}

static size_t key_hash(uint64_t key, size_t mask)
{
    return (size_t)((key * 0x9E3779B97F4A7C15ull) >> 20) & mask;
}

static void count_add(sample_table *t, size_t sample, int slot, uint64_t wait_ns, uint64_t weight)
{
    uint64_t key = count_key(sample, slot);
    size_t mask = t->hcap - 1, i = key_hash(key, mask);
    for (size_t probes = 0; probes < t->hcap; probes++, i = (i + 1) & mask) {
        uint64_t k = atomic_load_explicit(&t->hkey[i], memory_order_acquire);
        if (k == 0) {
            uint64_t zero = 0;
            if (atomic_compare_exchange_strong(&t->hkey[i], &zero, key))
                k = key;
            else
                k = zero; /* someone claimed it: maybe for our key */
        }
        if (k == key) {
            atomic_fetch_add_explicit(&t->hcount[i], weight, memory_order_relaxed);
            atomic_fetch_add_explicit(&t->hwait[i], wait_ns * weight, memory_order_relaxed);
            return;
        }
    }
    atomic_fetch_add_explicit(&S.lost, 1, memory_order_relaxed);
}

static long find_sample(const sample_table *t, uintptr_t page)
{
    size_t lo = 0, hi = t->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->page[mid] < page)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < t->n && t->page[lo] == page ? (long)lo : -1;
}

/* The sample whose region holds addr: regions are disjoint and, like the
 * pages they contain, sorted. */
static long find_region(const sample_table *t, uintptr_t addr)
{
    size_t lo = 0, hi = t->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->region[mid] <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo > 0 && addr - t->region[lo - 1] < t->region_len[lo - 1] ? (long)lo - 1 : -1;
}

int pd_sampler_record(uintptr_t addr, int slot)
{
    atomic_fetch_add(&S.inflight, 1); /* the table is not freed under us */
    sample_table *t = atomic_load(&S.table);
    long idx = t ? find_region(t, addr) : -1;
    int counted = idx >= 0 && !t->disabled[idx];
    if (counted)
        count_add(t, (size_t)idx, slot, 0, 1);
    atomic_fetch_sub(&S.inflight, 1);
    return counted;
}

/* Hands a fault that is not ours to whoever handled SIGSEGV before us. */
static void chain(int sig, siginfo_t *si, void *uc)
{
    atomic_fetch_add_explicit(&S.chained, 1, memory_order_relaxed);
    const struct sigaction *p = &S.previous;
    if ((p->sa_flags & SA_SIGINFO) && p->sa_sigaction) {
        p->sa_sigaction(sig, si, uc);
        return;
    }
    if (p->sa_handler != SIG_DFL && p->sa_handler != SIG_IGN) {
        p->sa_handler(sig);
        return;
    }
    /* Default action: reinstate it; the faulting instruction runs again and
     * the process dies of SIGSEGV as it would have without us. A SIGSEGV sent
     * with kill() does not repeat, so send it again. */
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, NULL);
    if (si->si_code <= 0)
        raise(sig);
}

static void on_segv(int sig, siginfo_t *si, void *uc)
{
    int saved_errno = errno;
    uint64_t entered = mono_ns();
    atomic_fetch_add(&S.inflight, 1);
    sample_table *t = atomic_load(&S.table);
    uintptr_t page = (uintptr_t)si->si_addr & ~(uintptr_t)(PD_SAMPLE_PAGE - 1);
    if (si->si_code == SEGV_ACCERR && page && page == atomic_load(&S.scratch)) {
        mprotect((void *)page, PD_SAMPLE_PAGE, PROT_READ | PROT_WRITE);
        atomic_store(&S.scratch_handler_ns, mono_ns() - entered);
        atomic_fetch_sub(&S.inflight, 1);
        errno = saved_errno;
        return;
    }
    if (t && si->si_code == SEGV_ACCERR) {
        long idx = find_sample(t, page);
        if (idx >= 0) {
            /* Restore first, then clear armed (the re-arm pass relies on
             * armed == 0 meaning the page is read-write). */
            mprotect((void *)page, PD_SAMPLE_PAGE, PROT_READ | PROT_WRITE);
            unsigned char one = 1;
            if (atomic_compare_exchange_strong(&t->armed[idx], &one, 0)) {
                /* Time to first touch since the page (or the task) was
                 * armed, less this thread's fault handling meanwhile:
                 * short for a page the task touches often. */
                uint64_t since = atomic_load_explicit(&t->armed_ns[idx], memory_order_relaxed);
                if (thread_task_since > since)
                    since = thread_task_since;
                uint64_t wait = entered > since ? entered - since : 0;
                uint64_t busy = pd_busy_ring_since(&thread_busy, since, entered);
                wait = wait > busy ? wait - busy : 0;
                uint32_t w = atomic_load_explicit(&t->weight[idx], memory_order_relaxed);
                count_add(t, (size_t)idx, thread_task, wait, w ? w : 1);
                atomic_fetch_add_explicit(&S.faults, 1, memory_order_relaxed);
                atomic_fetch_add_explicit(&S.weighted, w ? w : 1, memory_order_relaxed);
                pd_busy_ring_add(&thread_busy, entered,
                                 mono_ns() - entered + atomic_load_explicit(&S.trap_ns, memory_order_relaxed));
            }
            atomic_fetch_sub(&S.inflight, 1);
            errno = saved_errno;
            return;
        }
    }
    /* A fault on a page of a table that was replaced (and unprotected)
     * between the fault and the load above is stale: the access works now.
     * Retry the instruction once per address and table swap; a page that
     * faults again is not ours. */
    unsigned swaps = atomic_load(&S.swaps);
    if (si->si_code == SEGV_ACCERR && swaps != 0 &&
        ((uintptr_t)si->si_addr != retried_addr || swaps != retried_swaps)) {
        retried_addr = (uintptr_t)si->si_addr;
        retried_swaps = swaps;
        atomic_fetch_sub(&S.inflight, 1);
        errno = saved_errno;
        return;
    }
    atomic_fetch_sub(&S.inflight, 1);
    errno = saved_errno;
    chain(sig, si, uc);
}

/* ---- arming ------------------------------------------------------------------ */

static uint64_t next_random(uint64_t *state);

static void protect_sample(sample_table *t, size_t i)
{
    if (mprotect((void *)t->page[i], PD_SAMPLE_PAGE, PROT_NONE) != 0) {
        /* e.g. ENOMEM when the VMA count limit is reached: give this one up */
        atomic_store(&t->armed[i], 0);
        t->disabled[i] = 1; /* armed only while enabled: newly disabled */
        t->ndisabled++;
        atomic_fetch_add(&S.mprotect_failures, 1);
    }
}

/* Samples [a, b) are adjacent pages that this pass marked armed: one
 * mprotect for the run (dense samples of small objects are adjacent, and a
 * call costs about as much for one page as for many). */
static void protect_run(sample_table *t, size_t a, size_t b)
{
    uint64_t now_ns = mono_ns();
    for (size_t i = a; i < b; i++)
        atomic_store_explicit(&t->armed_ns[i], now_ns, memory_order_relaxed);
    if (b - a == 1 || mprotect((void *)t->page[a], (b - a) * PD_SAMPLE_PAGE, PROT_NONE) != 0)
        for (size_t i = a; i < b; i++)
            protect_sample(t, i);
    S.mprotect_calls++;
}

/* The sampling cost of the instance so far: its passes, and its faults at
 * the calibrated cost. */
static double inst_cost_locked(void)
{
    return S.inst_passes + (double)(atomic_load(&S.faults) - S.inst_faults_base) * S.fault_cost;
}

/* What the instance's faults counted on average: 1 unless spells armed
 * slices (each fault of a slice of 1 in k counts k). A thinned instance
 * that took no fault counts at its slice's k: its zero counts are as
 * uncertain as its faults would have been. */
static double inst_weight_locked(void)
{
    uint64_t f = atomic_load(&S.faults) - S.inst_faults_base;
    uint64_t w = atomic_load(&S.weighted) - S.inst_weighted_base;
    if (!f)
        return S.inst_sampled && S.spell_k > 1 ? (double)S.spell_k : 1.0;
    return w > f ? (double)w / (double)f : 1.0;
}

/* Earliest time the next budgeted pass may start: the last pass and the
 * faults since it (each also costs its arming and restore) must stay
 * within the budget's share of the time elapsed. */
static double due_time(void)
{
    if (S.budget < 0)
        return 0; /* unlimited: always due */
    /* Within an instance's allowance every pass is due. */
    if (inst_cost_locked() < S.inst_allowance)
        return 0;
    double faults = (double)(atomic_load(&S.faults) - S.faults_at_pass);
    return S.last_end + (S.last_pass + faults * S.fault_cost) / S.budget;
}

static int adjacent(const sample_table *t, size_t i)
{
    return i > 0 && t->page[i] == t->page[i - 1] + PD_SAMPLE_PAGE;
}

static int handler_check_locked(void);
static void slice_widen_locked(sample_table *t);
static void disarm_spans_locked(sample_table *t);

static void rearm_locked(void)
{
    sample_table *t = atomic_load(&S.table);
    if (!t || !atomic_load(&S.armed) || S.no_protect || !S.inst_sampled || !handler_check_locked())
        return;
    double t0 = now_s();
    slice_widen_locked(t);
    size_t run = 0, run_len = 0;
    for (size_t i = 0; i < t->n; i++) {
        unsigned char zero = 0;
        if (t->disabled[i] || (i + S.spell_off) % S.spell_k != 0 ||
            !atomic_compare_exchange_strong(&t->armed[i], &zero, 1)) {
            if (run_len)
                protect_run(t, run, run + run_len);
            run_len = 0;
            continue;
        }
        if (run_len && !adjacent(t, i)) {
            protect_run(t, run, run + run_len);
            run_len = 0;
        }
        if (!run_len)
            run = i;
        run_len++;
        atomic_store_explicit(&t->weight[i], S.spell_k, memory_order_relaxed);
        atomic_fetch_add_explicit(&S.rearms, 1, memory_order_relaxed);
        S.spell_armed++;
    }
    if (run_len)
        protect_run(t, run, run + run_len);
    double t1 = now_s();
    S.last_pass = t1 - t0;
    S.inst_passes += S.last_pass;
    S.last_end = t1;
    S.faults_at_pass = atomic_load(&S.faults);
    atomic_fetch_add_explicit(&S.passes, 1, memory_order_relaxed);
}

/* Unprotects the armed samples: one call per object, from its first armed
 * sample to its last. The pages between are the object's, read-write since
 * its registration checked them (or restored by a fault): a span costs one
 * call and one TLB shootdown where a call per sample cost one each, most of
 * a sampled instance's disarm (640 calls an end of activity on the phases
 * example, 10 now). A handler may be restoring one of them at the same
 * time: both make it read-write. */
static void disarm_locked(void)
{
    atomic_store(&S.armed, 0);
    sample_table *t = atomic_load(&S.table);
    if (t)
        disarm_spans_locked(t);
}

static void disarm_spans_locked(sample_table *t)
{
    /* Its cost is the sampler's too: timed only when something is armed. */
    double t0 = 0;
    for (size_t i = 0; i < t->n;) {
        /* the object's samples [i, end): strata of one range tile it, so
         * each begins where the previous ended */
        size_t end = i + 1;
        while (end < t->n && t->object[end] == t->object[i] &&
               t->region[end] == t->region[end - 1] + t->region_len[end - 1])
            end++;
        size_t first = end, last = end;
        for (size_t k = i; k < end; k++)
            if (atomic_load(&t->armed[k])) {
                if (first == end)
                    first = k;
                last = k;
            }
        if (first < end) {
            if (!t0)
                t0 = now_s();
            mprotect((void *)t->page[first], (size_t)(t->page[last] - t->page[first]) + PD_SAMPLE_PAGE,
                     PROT_READ | PROT_WRITE);
            for (size_t k = first; k <= last; k++)
                atomic_store(&t->armed[k], 0);
            S.mprotect_calls++;
        }
        i = end;
    }
    if (t0)
        S.inst_passes += now_s() - t0;
}

/* ---- our SIGSEGV action replaced -------------------------------------------- */

static int handler_ours(const struct sigaction *sa)
{
    return (sa->sa_flags & SA_SIGINFO) && sa->sa_sigaction == on_segv;
}

/* An action installed after ours (sigaction() or signal() by the
 * application or a library) receives the faults of protected samples on
 * valid memory. Checked before every re-arm pass, at every skipped one and
 * at every tick: once ours is gone, every sample is unprotected at once and
 * none is armed again until pd_sampler_stop. Returns 1 while ours is in
 * place. (Interposing sigaction() would catch it at once, but the library
 * exports nothing besides its API.) */
static int handler_check_locked(void)
{
    if (!S.installed)
        return 1;
    if (S.handler_lost) {
        atomic_store(&S.armed, 0); /* nothing was protected since */
        return 0;
    }
    struct sigaction cur;
    if (sigaction(SIGSEGV, NULL, &cur) != 0 || handler_ours(&cur))
        return 1;
    disarm_locked();
    S.handler_lost = 1;
    char now[64];
    if (!(cur.sa_flags & SA_SIGINFO) && cur.sa_handler == SIG_DFL)
        snprintf(now, sizeof now, "the default action");
    else if (!(cur.sa_flags & SA_SIGINFO) && cur.sa_handler == SIG_IGN)
        snprintf(now, sizeof now, "SIG_IGN");
    else
        snprintf(now, sizeof now, "the handler at %p",
                 (cur.sa_flags & SA_SIGINFO) ? (void *)(uintptr_t)cur.sa_sigaction : (void *)(uintptr_t)cur.sa_handler);
    snprintf(S.lost_line, sizeof S.lost_line,
             "page sampling stopped: its SIGSEGV handler was replaced by %s (sigaction() or signal() "
             "after pd_init); sampled pages unprotected, placement goes on without access samples",
             now);
    if (S.notify)
        S.notify(S.lost_line);
    return 0;
}

/* Installs ours over the current action, which S.previous keeps. */
static int install_handler_locked(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_segv;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGSEGV, &sa, &S.previous) != 0)
        return -errno;
    S.installed = 1;
    return 0;
}

/* Puts back the action ours replaced, unless ours was replaced since. */
static void restore_previous_locked(void)
{
    struct sigaction cur;
    if (S.installed && sigaction(SIGSEGV, NULL, &cur) == 0 && handler_ours(&cur))
        sigaction(SIGSEGV, &S.previous, NULL);
    S.installed = 0;
}

void pd_sampler_drop_object(int object)
{
    pthread_mutex_lock(&S.lock);
    sample_table *t = atomic_load(&S.table);
    for (size_t i = 0; t && i < t->n; i++) {
        if (t->object[i] != object)
            continue;
        t->ndisabled += !t->disabled[i];
        t->disabled[i] = 1; /* re-arm passes skip it from now on */
        unsigned char one = 1;
        if (atomic_compare_exchange_strong(&t->armed[i], &one, 0))
            mprotect((void *)t->page[i], PD_SAMPLE_PAGE, PROT_READ | PROT_WRITE);
    }
    pthread_mutex_unlock(&S.lock);
}

/* Rearm only when the overhead budget allows; otherwise count the skipped
 * pass (and still check that the SIGSEGV action is ours). */
static void rearm_if_due_locked(void)
{
    if (now_s() >= due_time()) {
        rearm_locked();
    } else {
        atomic_fetch_add_explicit(&S.skipped, 1, memory_order_relaxed);
        handler_check_locked();
    }
}

/* Kept as a count: a thinned spell asks at every pass. */
static size_t samples_enabled(const sample_table *t)
{
    return t ? t->n - t->ndisabled : 0;
}

#define PD_SPELL_K_MAX 64u
/* The cap's slices go on thinning: 1 in 65536 arms a sample in a spell
 * about as rarely as skipping it, and still unbiased (each sample is in
 * the slice with probability 1 / k, whatever the table's size). */
#define PD_SPELL_K_CAP 65536u

/* The slice factor the instance affords now: the smallest power of two k
 * (at most PD_SPELL_K_MAX) for which the cost so far plus a pass over 1 in
 * k samples stays within spell_frac of the instance's elapsed time plus
 * spell_floor; then, in any sampled instance, doubled on (up to
 * PD_SPELL_K_CAP) while that pass would take the cost past spell_cap of
 * the elapsed time plus the floor and one whole pass. 1 without either. */
static unsigned slice_factor_locked(const sample_table *t, double cost)
{
    unsigned k = 1;
    if (!S.inst_sampled || S.no_protect || !t)
        return k;
    double elapsed = now_s() - S.inst_begin;
    double full = (double)samples_enabled(t) * S.sample_cost;
    if (S.inst_frac > 0 && S.inst_thin) {
        double room = S.inst_frac * elapsed + S.inst_floor - cost;
        while (k < PD_SPELL_K_MAX && full / k > room)
            k *= 2;
    }
    if (S.spell_cap > 0) {
        /* an instance always affords its first whole spell */
        double room = S.spell_cap * elapsed + S.spell_floor + full - cost;
        while (k < PD_SPELL_K_CAP && full / k > room)
            k *= 2;
    }
    return k;
}

/* The slice of 1 in k samples at a random offset. */
static void slice_draw_locked(unsigned k)
{
    S.spell_k = k;
    S.spell_off = k > 1 ? (unsigned)(next_random(&S.slice_rng) % k) : 0;
}

/* A new spell of activity: the slice of the samples it arms. Whole spells
 * cost the same whatever the instance's length (every sample armed, then
 * faulted by every task: 4.7x a 61 ms instance of the phases example), so
 * the slice is cut to what the instance's elapsed time affords: the cost
 * so far plus this spell's (the samples it arms at the cost an armed sample
 * had in the last measured spell) within spell_frac of the time since the
 * instance's first task began, plus spell_floor. A slice of 1 in k (k a
 * power of two, at most PD_SPELL_K_MAX) at a random offset: each fault
 * counts k, so a sample's expected count is what arming it in every spell
 * would give. */
static void spell_begin_locked(void)
{
    sample_table *t = atomic_load(&S.table);
    double cost = inst_cost_locked();
    /* What the spell that ended cost per sample it armed (its faults and
     * its disarm included); an instance's last spell is not measured. */
    if (S.spell_armed > 0 && cost > S.spell_cost0)
        S.sample_cost = (cost - S.spell_cost0) / (double)S.spell_armed;
    S.spell_cost0 = cost;
    S.spell_armed = 0;
    S.spells++;
    unsigned k = slice_factor_locked(t, cost);
    slice_draw_locked(k);
    if (k > 1)
        S.spells_thinned++;
    if (k > S.max_k)
        S.max_k = k;
}

/* Within a spell, a later pass widens the slice as the elapsed time comes
 * to afford it (a long spell would otherwise keep the thin slice its start
 * could afford). The new slice is a new draw: everything armed is
 * unprotected first (one call per object), so that no sample keeps being
 * counted at the old slice's weight outside the new one. */
static void slice_widen_locked(sample_table *t)
{
    if (S.spell_k <= 1)
        return;
    unsigned k = slice_factor_locked(t, inst_cost_locked());
    if (k >= S.spell_k)
        return;
    disarm_spans_locked(t);
    slice_draw_locked(k);
}

void pd_sampler_arm(void)
{
    pthread_mutex_lock(&S.lock);
    if (S.running) {
        atomic_store(&S.armed, 1);
        spell_begin_locked();
        rearm_locked();
        pthread_cond_signal(&S.wake);
    }
    pthread_mutex_unlock(&S.lock);
}

void pd_sampler_disarm(void)
{
    pthread_mutex_lock(&S.lock);
    S.inst_end = now_s(); /* no task runs: the instance's time so far */
    disarm_locked();
    pthread_mutex_unlock(&S.lock);
}

void pd_sampler_arm_if_due(void)
{
    pthread_mutex_lock(&S.lock);
    if (S.running) {
        atomic_store(&S.armed, 1);
        rearm_if_due_locked();
        pthread_cond_signal(&S.wake);
    }
    pthread_mutex_unlock(&S.lock);
}

int pd_sampler_armed(void) { return atomic_load(&S.armed); }

void pd_sampler_rearm(void)
{
    pthread_mutex_lock(&S.lock);
    rearm_locked();
    pthread_mutex_unlock(&S.lock);
}

void pd_sampler_rearm_if_due(void)
{
    pthread_mutex_lock(&S.lock);
    rearm_if_due_locked();
    pthread_mutex_unlock(&S.lock);
}

static void *ticker_main(void *arg)
{
    (void)arg;
    /* The ticker never takes faults on sampled pages itself: no task. */
    sigset_t all;
    sigfillset(&all);
    sigdelset(&all, SIGSEGV);
    pthread_sigmask(SIG_BLOCK, &all, NULL);
    pthread_mutex_lock(&S.lock);
    while (!S.stop_ticker) {
        if (!atomic_load(&S.armed)) {
            pthread_cond_wait(&S.wake, &S.lock);
            continue;
        }
        /* Sleep the period; when the budget puts the next pass further
         * off, still wake every period (to check the SIGSEGV action) and
         * exactly when the pass is due. */
        double wait = (double)S.period_ms * 1e-3;
        double left = due_time() - now_s();
        if (left > wait && left - wait < wait)
            wait = left - wait;
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        long ns = (long)(wait * 1e9);
        until.tv_sec += ns / 1000000000L;
        until.tv_nsec += ns % 1000000000L;
        until.tv_sec += until.tv_nsec / 1000000000L;
        until.tv_nsec %= 1000000000L;
        if (pthread_cond_timedwait(&S.wake, &S.lock, &until) != ETIMEDOUT)
            continue;
        if (now_s() >= due_time())
            rearm_locked();
        else
            handler_check_locked();
    }
    pthread_mutex_unlock(&S.lock);
    return NULL;
}

/* ---- table ---------------------------------------------------------------------- */

static void table_free(sample_table *t)
{
    if (!t)
        return;
    free(t->page);
    free(t->object);
    free(t->region);
    free(t->region_len);
    free(t->armed);
    free(t->disabled);
    free(t->hkey);
    free(t->hcount);
    free(t->hwait);
    free(t->armed_ns);
    free(t->weight);
    free(t);
}

static uint64_t next_random(uint64_t *state)
{
    /* xorshift64*: page choice only, not security */
    uint64_t x = *state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    return x * 0x2545F4914F6CDD1Dull;
}

typedef struct {
    uintptr_t page, region;
    size_t region_len;
    int object;
} sample_tmp;

static int cmp_sample(const void *a, const void *b)
{
    uintptr_t x = ((const sample_tmp *)a)->page, y = ((const sample_tmp *)b)->page;
    return x < y ? -1 : x > y;
}

/* Whole pages inside a range: only they can be sampled (a page shared with
 * other data would count, and trap, foreign accesses). */
static size_t range_pages(const pd_sampler_range *r, uintptr_t *first)
{
    uintptr_t lo = (uintptr_t)r->addr, hi = lo + r->len;
    uintptr_t f = (lo + PD_SAMPLE_PAGE - 1) & ~(uintptr_t)(PD_SAMPLE_PAGE - 1);
    uintptr_t l = hi & ~(uintptr_t)(PD_SAMPLE_PAGE - 1);
    if (first)
        *first = f;
    return l > f ? (size_t)((l - f) / PD_SAMPLE_PAGE) : 0;
}

/* Samples of one range: one per region, but at least min_per (all pages of
 * a smaller range), at most one per page. */
static size_t range_samples(const pd_sampler_range *r, size_t region, size_t min_per)
{
    size_t pages = range_pages(r, NULL);
    size_t by_region = r->len / region + (r->len % region != 0);
    size_t n = by_region > min_per ? by_region : min_per;
    return n < pages ? n : pages;
}

static size_t total_samples(const pd_sampler_range *r, size_t n, size_t region, size_t min_per)
{
    size_t total = 0;
    for (size_t i = 0; i < n; i++)
        total += range_samples(&r[i], region, min_per);
    return total;
}

/* Fits the budget: first fewer samples per small object (the floor), then
 * larger regions for big ones. */
static void fit_budget(const pd_sampler_range *r, size_t n, size_t *region, size_t *min_per)
{
    while (*min_per > 1 && total_samples(r, n, SIZE_MAX, *min_per) > S.max_samples / 2)
        *min_per /= 2;
    while (total_samples(r, n, *region, *min_per) > S.max_samples && *region < SIZE_MAX / 4)
        *region *= 2;
}

/* An empty table of k samples (counts, arming state and weights zero), or
 * NULL without memory. */
static sample_table *table_alloc(size_t k)
{
    sample_table *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->n = k;
    size_t m = k ? k : 1;
    t->page = calloc(m, sizeof *t->page);
    t->object = calloc(m, sizeof *t->object);
    t->region = calloc(m, sizeof *t->region);
    t->region_len = calloc(m, sizeof *t->region_len);
    t->armed = calloc(m, sizeof *t->armed);
    t->disabled = calloc(m, 1);
    /* Room for a few tasks per sample before counts are dropped. */
    t->hcap = 1024;
    while (t->hcap < 8 * k)
        t->hcap *= 2;
    t->hkey = calloc(t->hcap, sizeof *t->hkey);
    t->hcount = calloc(t->hcap, sizeof *t->hcount);
    t->hwait = calloc(t->hcap, sizeof *t->hwait);
    t->armed_ns = calloc(m, sizeof *t->armed_ns);
    t->weight = calloc(m, sizeof *t->weight);
    if (!t->weight || !t->page || !t->object || !t->region || !t->region_len || !t->armed || !t->disabled || !t->hkey ||
        !t->hcount || !t->hwait || !t->armed_ns) {
        table_free(t);
        return NULL;
    }
    return t;
}

/* A table like old whose every sample is a whole page drawn afresh within
 * its stratum (its region: table_build's strata hold whole pages p0 .. p1 -
 * 1, the first and last also the object's partial head and tail). Strata
 * do not overlap and are in address order, so the pages stay sorted for the
 * handler's search. Only the page array is new: everything else (objects,
 * regions, disabled samples, arming state, counts) is old's, shared, since
 * a sample still stands for the same region (counts not yet reset still
 * belong to it). Free the old table with table_free_shell once swapped.
 * NULL without memory. */
static sample_table *table_redrawn(const sample_table *old, uint64_t *rng)
{
    sample_table *t = malloc(sizeof *t);
    uintptr_t *page = malloc((old->n ? old->n : 1) * sizeof *page);
    if (!t || !page) {
        free(t);
        free(page);
        return NULL;
    }
    *t = *old;
    t->page = page;
    for (size_t i = 0; i < old->n; i++) {
        uintptr_t f = (old->region[i] + PD_SAMPLE_PAGE - 1) & ~(uintptr_t)(PD_SAMPLE_PAGE - 1);
        uintptr_t l = (old->region[i] + old->region_len[i]) & ~(uintptr_t)(PD_SAMPLE_PAGE - 1);
        size_t pages = l > f ? (size_t)((l - f) / PD_SAMPLE_PAGE) : 0;
        page[i] = pages > 1 ? f + (uintptr_t)(next_random(rng) % pages) * PD_SAMPLE_PAGE : old->page[i];
    }
    return t;
}

/* What a table redrawn from t leaves of it to free: its page array. */
static void table_free_shell(sample_table *t)
{
    if (t) {
        free(t->page);
        free(t);
    }
}

static sample_table *table_build(const pd_sampler_range *r, size_t n, size_t *region_out)
{
    size_t region = PD_SAMPLE_REGION, min_per = S.min_per_object;
    fit_budget(r, n, &region, &min_per);
    *region_out = region;
    size_t cap = total_samples(r, n, region, min_per);
    if (cap > S.max_samples)
        cap = S.max_samples; /* more objects than samples: the later get none */
    sample_tmp *tmp = calloc(cap ? cap : 1, sizeof *tmp);
    if (!tmp)
        return NULL;
    uint64_t rng = S.seed ? S.seed : 1;
    size_t k = 0;
    for (size_t i = 0; i < n && k < cap; i++) {
        uintptr_t first, lo = (uintptr_t)r[i].addr, hi = lo + r[i].len;
        size_t pages = range_pages(&r[i], &first);
        size_t ns = range_samples(&r[i], region, min_per);
        if (ns > cap - k)
            ns = cap - k;
        /* Stratified: the whole pages are cut into ns strata of (almost)
         * equal page counts, one random page in each; a stratum's region
         * stands for its pages (the first and last also for the object's
         * partial head and tail pages). */
        for (size_t j = 0; j < ns; j++) {
            size_t p0 = j * pages / ns, p1 = (j + 1) * pages / ns;
            tmp[k].page = first + (uintptr_t)(p0 + next_random(&rng) % (p1 - p0)) * PD_SAMPLE_PAGE;
            uintptr_t rs = j == 0 ? lo : first + (uintptr_t)p0 * PD_SAMPLE_PAGE;
            uintptr_t re = j + 1 == ns ? hi : first + (uintptr_t)p1 * PD_SAMPLE_PAGE;
            tmp[k].region = rs;
            tmp[k].region_len = (size_t)(re - rs);
            tmp[k].object = r[i].object;
            k++;
        }
    }
    qsort(tmp, k, sizeof *tmp, cmp_sample);
    sample_table *t = table_alloc(k);
    if (!t) {
        free(tmp);
        return NULL;
    }
    for (size_t i = 0; i < k; i++) {
        t->page[i] = tmp[i].page;
        t->object[i] = tmp[i].object;
        t->region[i] = tmp[i].region;
        t->region_len[i] = tmp[i].region_len;
    }
    free(tmp);
    return t;
}

/* Puts t in the old table's place and returns the old one once no handler
 * that loaded it is still reading it, for the caller to free. */
static sample_table *table_swap_locked(sample_table *t)
{
    sample_table *old = atomic_exchange(&S.table, t);
    atomic_fetch_add(&S.swaps, 1);
    while (atomic_load(&S.inflight) > 0)
        sched_yield();
    return old;
}

int pd_sampler_set_ranges(const pd_sampler_range *ranges, size_t n)
{
    if (n && !ranges)
        return -EINVAL;
    pthread_mutex_lock(&S.lock);
    if (!S.running) {
        pthread_mutex_unlock(&S.lock);
        return -ENODEV;
    }
    int was_armed = atomic_load(&S.armed);
    disarm_locked();
    size_t region = PD_SAMPLE_REGION;
    sample_table *t = table_build(ranges, n, &region);
    if (!t) {
        pthread_mutex_unlock(&S.lock);
        return -ENOMEM;
    }
    table_free(table_swap_locked(t));
    S.region_bytes = region;
    if (was_armed) {
        atomic_store(&S.armed, 1);
        rearm_locked();
    }
    pthread_mutex_unlock(&S.lock);
    return 0;
}

/* ---- lifecycle -------------------------------------------------------------------- */

/* Seconds one sampled fault costs the application: protect a page, trap on
 * it, restore it in the handler. The least of a few rounds (others' load
 * only adds). A fallback of 10 us when no page can be had. */
static double calibrate_fault_cost(void)
{
    void *p = mmap(NULL, PD_SAMPLE_PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return 10e-6;
    ((volatile char *)p)[0] = 0;
    atomic_store(&S.scratch, (uintptr_t)p);
    double best = 1, trap = 1;
    for (int i = 0; i < 8; i++) {
        double t0 = now_s();
        if (mprotect(p, PD_SAMPLE_PAGE, PROT_NONE) != 0)
            break;
        double t1 = now_s();
        ((volatile char *)p)[0] += 1;
        double t2 = now_s(), d = t2 - t0;
        best = d < best ? d : best;
        /* the touch less the handler's part of it */
        double out = t2 - t1 - (double)atomic_load(&S.scratch_handler_ns) * 1e-9;
        trap = out < trap ? out : trap;
    }
    atomic_store(&S.trap_ns, trap > 0 && trap < 1 ? (uint64_t)(trap * 1e9) : 0);
    atomic_store(&S.scratch, 0);
    munmap(p, PD_SAMPLE_PAGE);
    return best < 1 ? best : 10e-6;
}

int pd_sampler_start(const pd_sampler_config *cfg)
{
    pthread_mutex_lock(&S.lock);
    if (S.running) {
        pthread_mutex_unlock(&S.lock);
        return -EALREADY;
    }
    S.seed = cfg && cfg->seed ? cfg->seed : 1;
    S.rotate = cfg && cfg->rotate && !(cfg->no_protect);
    S.rotate_rng = (uint64_t)S.seed * 0xBF58476D1CE4E5B9ull + 7;
    S.rotations = 0;
    S.max_samples = cfg && cfg->max_samples ? cfg->max_samples : 16384;
    S.min_per_object = cfg && cfg->min_per_object ? cfg->min_per_object : PD_SAMPLE_MIN_PER_OBJECT;
    S.no_protect = cfg && cfg->no_protect;
    S.period_ms = S.no_protect ? 0 : cfg ? cfg->period_ms : 10; /* no re-arm tick without protection */
    S.region_bytes = PD_SAMPLE_REGION;
    S.budget = cfg && cfg->budget < 0 ? -1 : cfg && cfg->budget > 0 && cfg->budget <= 1 ? cfg->budget : 0.02;
    S.last_end = 0;
    S.last_pass = 0;
    S.faults_at_pass = 0;
    S.allowance = cfg && cfg->allowance_s < 0 ? 0 : cfg && cfg->allowance_s > 0 ? cfg->allowance_s : 0.02;
    S.allowance_frac = cfg && cfg->allowance_frac < 0 ? -1 : cfg && cfg->allowance_frac > 0 ? cfg->allowance_frac : 0.02;
    S.share = cfg && cfg->share < 0 ? -1 : cfg && cfg->share > 0 && cfg->share <= 1 ? cfg->share : 0.02;
    S.spell_frac = cfg && cfg->spell_frac > 0 && cfg->spell_frac <= 1 ? cfg->spell_frac : -1;
    S.spell_floor = cfg && cfg->spell_floor_s > 0 ? cfg->spell_floor_s : 0.001;
    S.spell_cap = cfg && cfg->spell_cap > 0 && cfg->spell_cap < 1 ? cfg->spell_cap : -1;
    S.inst_frac = S.spell_frac;
    S.inst_floor = S.spell_floor;
    S.next_frac = S.next_floor = -1;
    S.spell_k = 1;
    S.spell_off = 0;
    S.spell_cost0 = 0;
    S.spell_armed = 0;
    S.spells = S.spells_thinned = 0;
    S.max_k = 1;
    S.slice_rng = (uint64_t)S.seed * 0x9E3779B97F4A7C15ull + 1;
    atomic_store(&S.weighted, 0);
    S.inst_weighted_base = 0;
    S.inst_allowance = S.allowance;
    S.inst_begin = now_s();
    S.inst_end = 0;
    S.inst_passes = 0;
    S.inst_faults_base = 0;
    S.inst_sampled = 1; /* callers that never begin instances sample them all */
    S.cost_total = S.wall_total = S.last_cost = S.last_wall = S.last_whole = 0;
    S.nwall_ratios = 0;
    S.wall_factor = 1;
    S.inst_thin = 1; /* callers that never begin instances: as a first one */
    S.instances = S.instances_sampled = 0;
    atomic_store(&S.passes, 0);
    atomic_store(&S.skipped, 0);
    atomic_store(&S.faults, 0);
    atomic_store(&S.rearms, 0);
    atomic_store(&S.lost, 0);
    atomic_store(&S.mprotect_failures, 0);
    atomic_store(&S.chained, 0);
    S.mprotect_calls = 0;
    S.handler_lost = 0;
    S.lost_line[0] = '\0';
    S.notify = cfg ? cfg->notify : NULL;

    int irc = S.no_protect ? 0 : install_handler_locked(); /* PMU samples: no handler */
    if (irc != 0) {
        pthread_mutex_unlock(&S.lock);
        return irc;
    }
    S.fault_cost = S.no_protect ? 0 : calibrate_fault_cost();
    /* Until a spell is measured: arming is about one mprotect, a fault about
     * one more and the trap. */
    S.sample_cost = 2 * S.fault_cost;
    S.stop_ticker = 0;
    S.running = 1;
    if (S.period_ms > 0) {
        int rc = pthread_create(&S.ticker, NULL, ticker_main, NULL);
        if (rc != 0) {
            restore_previous_locked();
            S.running = 0;
            pthread_mutex_unlock(&S.lock);
            return -rc;
        }
    }
    pthread_mutex_unlock(&S.lock);
    return 0;
}

void pd_sampler_stop(void)
{
    pthread_mutex_lock(&S.lock);
    if (!S.running) {
        pthread_mutex_unlock(&S.lock);
        return;
    }
    disarm_locked();
    S.stop_ticker = 1;
    pthread_cond_broadcast(&S.wake);
    int had_ticker = S.period_ms > 0;
    pthread_mutex_unlock(&S.lock);
    if (had_ticker)
        pthread_join(S.ticker, NULL);

    pthread_mutex_lock(&S.lock);
    restore_previous_locked();
    table_free(table_swap_locked(NULL));
    S.running = 0;
    pthread_mutex_unlock(&S.lock);
}

int pd_sampler_running(void)
{
    pthread_mutex_lock(&S.lock);
    int r = S.running;
    pthread_mutex_unlock(&S.lock);
    return r;
}

int pd_sampler_stopped(char *why, size_t len)
{
    pthread_mutex_lock(&S.lock);
    int lost = S.running && S.handler_lost;
    if (why && len)
        snprintf(why, len, "%s", lost ? S.lost_line : "");
    pthread_mutex_unlock(&S.lock);
    return lost;
}

/* ---- fork ----------------------------------------------------------------------- */

void pd_sampler_fork_prepare(void) { pthread_mutex_lock(&S.lock); }

void pd_sampler_fork_parent(void) { pthread_mutex_unlock(&S.lock); }

/* Only the forking thread lives on in the child: no ticker, no handler in
 * flight (a count of them is stale), waiters on S.wake that are gone. The
 * child gets no sampler: every sample unprotected, the SIGSEGV action from
 * before pd_sampler_start back (unless replaced since), the table freed
 * (glibc's malloc works in fork handlers), pd_sampler_start possible again. */
void pd_sampler_fork_child(void)
{
    atomic_store(&S.inflight, 0);
    pthread_cond_init(&S.wake, NULL);
    if (S.running) {
        disarm_locked();
        restore_previous_locked();
        table_free(table_swap_locked(NULL)); /* inflight was just reset: no wait */
        S.running = 0;
    }
    thread_task = PD_SAMPLER_NO_TASK;
    pthread_mutex_unlock(&S.lock);
}

/* ---- queries ------------------------------------------------------------------------ */

size_t pd_sampler_nsamples(void)
{
    pthread_mutex_lock(&S.lock);
    sample_table *t = atomic_load(&S.table);
    size_t n = t ? t->n : 0;
    pthread_mutex_unlock(&S.lock);
    return n;
}

size_t pd_sampler_region_bytes(void)
{
    pthread_mutex_lock(&S.lock);
    size_t r = S.region_bytes;
    pthread_mutex_unlock(&S.lock);
    return r;
}

int pd_sampler_sample(size_t i, pd_sample_info *out)
{
    pthread_mutex_lock(&S.lock);
    sample_table *t = atomic_load(&S.table);
    if (!t || i >= t->n || !out) {
        pthread_mutex_unlock(&S.lock);
        return -EINVAL;
    }
    out->page = (void *)t->page[i];
    out->object = t->object[i];
    out->region = (void *)t->region[i];
    out->region_len = t->region_len[i];
    pthread_mutex_unlock(&S.lock);
    return 0;
}

uint64_t pd_sampler_count(size_t i, int slot)
{
    uint64_t c = 0;
    pthread_mutex_lock(&S.lock);
    sample_table *t = atomic_load(&S.table);
    if (t && i < t->n) {
        uint64_t key = count_key(i, slot);
        size_t mask = t->hcap - 1, h = key_hash(key, mask);
        for (size_t p = 0; p < t->hcap; p++, h = (h + 1) & mask) {
            uint64_t k = atomic_load(&t->hkey[h]);
            if (k == 0)
                break;
            if (k == key) {
                c = atomic_load(&t->hcount[h]);
                break;
            }
        }
    }
    pthread_mutex_unlock(&S.lock);
    return c;
}

void pd_sampler_foreach_wait(void (*fn)(void *ctx, size_t sample, int slot, uint64_t count, double wait_s),
                             void *ctx)
{
    pthread_mutex_lock(&S.lock);
    sample_table *t = atomic_load(&S.table);
    for (size_t h = 0; t && h < t->hcap; h++) {
        uint64_t k = atomic_load(&t->hkey[h]);
        uint64_t c = atomic_load(&t->hcount[h]);
        if (!k || !c)
            continue;
        uint64_t code = (k - 1) % (PD_SAMPLER_MAX_TASKS + 1);
        size_t sample = (size_t)((k - 1) / (PD_SAMPLER_MAX_TASKS + 1));
        fn(ctx, sample, code == PD_SAMPLER_MAX_TASKS ? PD_SAMPLER_NO_TASK : (int)code, c,
           (double)atomic_load(&t->hwait[h]) * 1e-9);
    }
    pthread_mutex_unlock(&S.lock);
}

/* pd_sampler_foreach: the same walk, without the waits. */
struct count_visit {
    void (*fn)(void *ctx, size_t sample, int slot, uint64_t count);
    void *ctx;
};

static void visit_count(void *ctx, size_t sample, int slot, uint64_t count, double wait_s)
{
    (void)wait_s;
    struct count_visit *v = ctx;
    v->fn(v->ctx, sample, slot, count);
}

void pd_sampler_foreach(void (*fn)(void *ctx, size_t sample, int slot, uint64_t count), void *ctx)
{
    struct count_visit v = {fn, ctx};
    pd_sampler_foreach_wait(visit_count, &v);
}

void pd_sampler_reset_counts(void)
{
    pthread_mutex_lock(&S.lock);
    sample_table *t = atomic_load(&S.table);
    /* Only the entries in use (the table is 8x the samples), and plain
     * stores before the key's release: a sequentially consistent store per
     * entry cost 0.3 ms of a 1.2 ms sync point at 16384 samples. */
    for (size_t h = 0; t && h < t->hcap; h++) {
        if (!atomic_load_explicit(&t->hkey[h], memory_order_relaxed))
            continue;
        atomic_store_explicit(&t->hcount[h], 0, memory_order_relaxed);
        atomic_store_explicit(&t->hwait[h], 0, memory_order_relaxed);
        atomic_store_explicit(&t->hkey[h], 0, memory_order_release);
    }
    /* The instance that ends: its measured cost (passes, faults) if it was
     * sampled, and its time, for the long-run share. */
    double now = now_s();
    /* An instance's time runs from its first task to its last task's end
     * (the last disarm), not to here: what the program does outside its
     * tasks between instances (setting up its next input before the sync
     * point, serial work after it) is no instance's time. Counted from sync
     * point to sync point, the phases example's input building (0.6 - 1.5 s
     * between visits) let the share sample a later visit's first instance
     * whole, at its instances' cost. */
    double len = (S.inst_end > S.inst_begin ? S.inst_end : now) - S.inst_begin;
    if (S.inst_sampled) {
        S.last_cost = inst_cost_locked();
        S.cost_total += S.last_cost;
        /* What it would have cost whole: its faults counted k times on
         * average, so about k times the samples armed and faulted. */
        S.last_whole = S.last_cost * inst_weight_locked();
    }
    S.last_wall = len;
    S.wall_total += S.last_wall;
    S.inst_sampled = 1; /* until pd_sampler_instance_begin says otherwise */
    /* A new instance: a new allowance, a share of the last one's length. */
    S.inst_allowance = S.allowance;
    if (S.allowance_frac > 0 && S.allowance_frac * len < S.inst_allowance)
        S.inst_allowance = S.allowance_frac * len;
    S.inst_passes = 0;
    S.inst_faults_base = atomic_load(&S.faults);
    S.inst_weighted_base = atomic_load(&S.weighted);
    S.inst_begin = now; /* pd_sampler_instance_begin sets it again */
    S.inst_end = 0;
    S.spell_armed = 0;  /* a spell is measured within its instance */
    pthread_mutex_unlock(&S.lock);
}

void pd_sampler_note_wall_excess(double excess_s)
{
    pthread_mutex_lock(&S.lock);
    /* only for a sampled instance that cost something measurable */
    if (isfinite(excess_s) && S.last_cost > 0 && S.instances_sampled > 0) {
        double r = excess_s / S.last_cost;
        r = r < PD_SAMPLER_WALL_MIN ? PD_SAMPLER_WALL_MIN : r > PD_SAMPLER_WALL_MAX ? PD_SAMPLER_WALL_MAX : r;
        S.wall_ratio[S.nwall_ratios++ % PD_SAMPLER_WALL_RATIOS] = r;
        unsigned n = S.nwall_ratios < PD_SAMPLER_WALL_RATIOS ? S.nwall_ratios : PD_SAMPLER_WALL_RATIOS;
        double v[PD_SAMPLER_WALL_RATIOS];
        memcpy(v, S.wall_ratio, n * sizeof *v);
        S.wall_factor = pd_median(v, n);
    }
    pthread_mutex_unlock(&S.lock);
}

double pd_sampler_instance_cost_share(void)
{
    pthread_mutex_lock(&S.lock);
    double wall = now_s() - S.inst_begin;
    double share = S.inst_sampled && wall > 0 ? inst_cost_locked() / wall : 0;
    pthread_mutex_unlock(&S.lock);
    return share;
}

double pd_sampler_count_weight(void)
{
    pthread_mutex_lock(&S.lock);
    double w = inst_weight_locked();
    pthread_mutex_unlock(&S.lock);
    return w;
}

unsigned pd_sampler_table_generation(void) { return atomic_load(&S.swaps); }

int pd_sampler_duty_cycled(void)
{
    pthread_mutex_lock(&S.lock);
    int on = S.running && !S.no_protect && S.share >= 0;
    pthread_mutex_unlock(&S.lock);
    return on;
}

void pd_sampler_thin_next(double frac, double floor_s)
{
    pthread_mutex_lock(&S.lock);
    S.next_frac = frac > 0 && frac <= 1 ? frac : -1;
    S.next_floor = floor_s > 0 ? floor_s : 0.001;
    pthread_mutex_unlock(&S.lock);
}

int pd_sampler_instance_begin(int force)
{
    pthread_mutex_lock(&S.lock);
    S.instances++;
    /* Every instance's time begins at its first task (inst_begin, below),
     * the first's too, not when the sampler started: the program's setup
     * before it (reading or building its input) is no instance's time.
     * Counted as one, GAP's PageRank at scale 21 (3.5 s of graph building
     * before 50 ms instances) had its first 8 - 10 instances sampled whole,
     * +15-30% on its trials. */
    /* Sampled while the sampled instances' cost, with one more like the
     * last, stays within the share of all instances' time (with one more
     * like the last). An instance is sampled whole or not at all: every
     * task's profile in it comes from the same sample set, and an instance
     * that samples nothing changes no heat, so its plan stays put. */
    int first = S.instances_sampled == 0;
    int sampled = force || S.share < 0 || S.no_protect || first ||
                  S.wall_factor * (S.cost_total + S.last_whole) <= S.share * (S.wall_total + S.last_wall);
    S.inst_sampled = sampled;
    /* The instances the share did not choose (the first, one forced by a
     * task or object without a profile, every one without a share) arm the
     * slices their elapsed time affords; one the share chose can afford a
     * whole instance like the last, and arms every sample. */
    S.inst_thin = sampled && (first || force || S.share < 0);
    S.inst_frac = S.next_frac > 0 ? S.next_frac : S.spell_frac;
    S.inst_floor = S.next_frac > 0 ? S.next_floor : S.spell_floor;
    S.next_frac = S.next_floor = -1;
    /* A later sampled instance samples other pages of the same regions
     * (the first keeps table_build's draw). Only while nothing is armed:
     * between instances, with the counts of the last one already read. A
     * table that cannot be had leaves the old one. */
    sample_table *cur = atomic_load(&S.table);
    if (sampled && !first && S.rotate && cur && !atomic_load(&S.armed)) {
        sample_table *t = table_redrawn(cur, &S.rotate_rng);
        if (t) {
            table_free_shell(table_swap_locked(t));
            S.rotations++;
        }
    }
    if (sampled)
        S.instances_sampled++;
    S.inst_begin = now_s();
    pthread_mutex_unlock(&S.lock);
    return sampled;
}

void pd_sampler_get_stats(pd_sampler_stats *st)
{
    st->faults = atomic_load(&S.faults);
    st->rearms = atomic_load(&S.rearms);
    st->passes = atomic_load(&S.passes);
    st->skipped = atomic_load(&S.skipped);
    st->lost = atomic_load(&S.lost);
    st->mprotect_failures = atomic_load(&S.mprotect_failures);
    st->chained = atomic_load(&S.chained);
    pthread_mutex_lock(&S.lock);
    st->protect_calls = S.mprotect_calls;
    st->fault_cost_s = S.fault_cost;
    st->trap_s = (double)atomic_load(&S.trap_ns) * 1e-9;
    st->instances = S.instances;
    st->instances_sampled = S.instances_sampled;
    st->cost_s = S.cost_total;
    st->wall_factor = S.wall_factor;
    st->wall_s = S.wall_total;
    st->spells = S.spells;
    st->spells_thinned = S.spells_thinned;
    st->max_thinning = S.max_k;
    st->samples_enabled = samples_enabled(atomic_load(&S.table));
    st->rotations = S.rotations;
    pthread_mutex_unlock(&S.lock);
}
