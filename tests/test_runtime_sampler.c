/* Tests of the Thermostat-style page sampler (src/lib/page_sampler.c):
 * counts land on touched regions only, per task, re-arming counts again, and
 * faults that are not ours keep their old behaviour (crash or chained). */
#include <math.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "common/util.h"
#include "lib/page_sampler.h"

#define MB (1024ul * 1024ul)

static unsigned char *map_buf(size_t len)
{
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(p != MAP_FAILED);
    return p;
}

static void touch_region(unsigned char *base, size_t off, size_t len)
{
    for (size_t i = 0; i < len; i += 4096)
        ((volatile unsigned char *)base)[off + i] += 1;
}

/* cmocka installs its own SIGSEGV handler around each test body (and
 * restores it afterwards), so the sampler is started inside the body, on top
 * of cmocka's handler, which then receives the faults that are not ours. */
static void start(unsigned period_ms, size_t max_samples)
{
    pd_sampler_stop();
    /* one sample per 2 MB region, as Thermostat: these tests place pages by region */
    pd_sampler_config cfg = {.seed = 7, .max_samples = max_samples, .period_ms = period_ms, .min_per_object = 1};
    assert_int_equal(pd_sampler_start(&cfg), 0);
}

static void fake_clock_off(void);

static int teardown(void **state)
{
    (void)state;
    pd_sampler_stop();
    fake_clock_off();
    pd_sampler_set_thread_task(PD_SAMPLER_NO_TASK);
    return 0;
}

static void test_counts_touched_regions_only(void **state)
{
    (void)state;
    start(0, 0);
    size_t len = 8 * MB;
    unsigned char *buf = map_buf(len);
    pd_sampler_range r = {buf, len, 3};
    assert_int_equal(pd_sampler_set_ranges(&r, 1), 0);
    assert_int_equal(pd_sampler_nsamples(), 4); /* one page per 2 MB region */

    pd_sampler_set_thread_task(5);
    pd_sampler_arm();
    touch_region(buf, 0, 2 * MB);      /* region 0 */
    touch_region(buf, 4 * MB, 2 * MB); /* region 2 */
    pd_sampler_rearm();
    touch_region(buf, 4 * MB, 2 * MB); /* region 2 again, next interval */
    pd_sampler_disarm();

    for (size_t i = 0; i < 4; i++) {
        pd_sample_info info;
        assert_int_equal(pd_sampler_sample(i, &info), 0);
        assert_int_equal(info.object, 3);
        assert_int_equal(info.region_len, 2 * MB);
        size_t region = (size_t)((unsigned char *)info.region - buf) / (2 * MB);
        assert_true((unsigned char *)info.page >= (unsigned char *)info.region);
        assert_true((unsigned char *)info.page + 4096 <= (unsigned char *)info.region + info.region_len);
        uint64_t expect = region == 0 ? 1 : region == 2 ? 2 : 0;
        assert_int_equal(pd_sampler_count(i, 5), expect);
        assert_int_equal(pd_sampler_count(i, 6), 0); /* other task */
    }
    /* Disarmed: touching does not count, and nothing is left protected. */
    touch_region(buf, 0, len);
    pd_sampler_stats st;
    pd_sampler_get_stats(&st);
    assert_int_equal(st.faults, 3);
    assert_int_equal(st.lost, 0);

    pd_sampler_reset_counts();
    assert_int_equal(pd_sampler_count(0, 5), 0);
    munmap(buf, len);
}

struct seen {
    size_t n;
    uint64_t total;
};

static void collect(void *ctx, size_t sample, int slot, uint64_t count)
{
    struct seen *s = ctx;
    (void)sample;
    assert_true(slot == 1 || slot == PD_SAMPLER_NO_TASK);
    s->n++;
    s->total += count;
}

static void test_unaligned_small_objects_and_foreach(void **state)
{
    (void)state;
    start(0, 0);
    unsigned char *buf = map_buf(4 * MB);
    /* 3 KB object: no page fully inside, so no sample; 1 MB + 100 bytes
     * object starting mid-page: one sample, fully inside it. */
    pd_sampler_range r[2] = {{buf + 100, 3000, 0}, {buf + 2 * MB + 100, MB, 1}};
    assert_int_equal(pd_sampler_set_ranges(r, 2), 0);
    assert_int_equal(pd_sampler_nsamples(), 1);
    pd_sample_info info;
    assert_int_equal(pd_sampler_sample(0, &info), 0);
    assert_int_equal(info.object, 1);
    assert_true((uintptr_t)info.page >= (uintptr_t)(buf + 2 * MB + 100));
    assert_true((uintptr_t)info.page + 4096 <= (uintptr_t)(buf + 3 * MB + 100));

    pd_sampler_arm();
    pd_sampler_set_thread_task(1);
    touch_region(buf, 2 * MB + 4096, MB - 8192);
    ((volatile unsigned char *)info.page)[0] = 1; /* at least the sample page */
    pd_sampler_set_thread_task(PD_SAMPLER_NO_TASK);
    pd_sampler_disarm();
    struct seen s = {0};
    pd_sampler_foreach(collect, &s);
    assert_int_equal(s.n, 1);
    assert_int_equal(s.total, 1);
    assert_int_equal(pd_sampler_set_ranges(NULL, 1), -22);
    munmap(buf, 4 * MB);
}

static void test_budget_grows_regions(void **state)
{
    (void)state;
    size_t len = 64 * MB;
    unsigned char *buf = map_buf(len);
    start(0, 8);
    pd_sampler_range r = {buf, len, 0};
    assert_int_equal(pd_sampler_set_ranges(&r, 1), 0);
    assert_int_equal(pd_sampler_nsamples(), 8);
    assert_int_equal(pd_sampler_region_bytes(), 8 * MB);
    munmap(buf, len);
}

static void test_ticker_rearms(void **state)
{
    (void)state;
    start(1, 0);
    unsigned char *buf = map_buf(2 * MB);
    pd_sampler_range r = {buf, 2 * MB, 0};
    assert_int_equal(pd_sampler_set_ranges(&r, 1), 0);
    pd_sampler_set_thread_task(0);
    pd_sampler_arm();
    /* Keep touching until the ticker has re-armed at least twice: no timing
     * assertion, only that periodic re-arming happens. */
    for (int i = 0; i < 20000 && pd_sampler_count(0, 0) < 3; i++) {
        touch_region(buf, 0, 2 * MB);
        usleep(200);
    }
    pd_sampler_disarm();
    assert_true(pd_sampler_count(0, 0) >= 3);
    munmap(buf, 2 * MB);
}

static void test_drop_object_unprotects_at_once(void **state)
{
    (void)state;
    start(0, 0);
    unsigned char *buf = map_buf(4 * MB);
    pd_sampler_range r[2] = {{buf, 2 * MB, 0}, {buf + 2 * MB, 2 * MB, 1}};
    assert_int_equal(pd_sampler_set_ranges(r, 2), 0);
    pd_sampler_set_thread_task(0);
    pd_sampler_arm();
    pd_sampler_stats st;
    pd_sampler_get_stats(&st);
    assert_int_equal(st.samples_enabled, 2);
    pd_sampler_drop_object(0);
    pd_sampler_drop_object(0); /* twice: still one sample fewer */
    pd_sampler_get_stats(&st);
    assert_int_equal(st.samples_enabled, 1);
    int pfd[2];
    assert_int_equal(pipe(pfd), 0);
    /* A system call may read every page of the dropped object now. */
    for (size_t off = 0; off < 2 * MB; off += 4096) {
        assert_int_equal(write(pfd[1], buf + off, 8), 8);
        char tmp[8];
        assert_int_equal(read(pfd[0], tmp, 8), 8);
    }
    close(pfd[0]);
    close(pfd[1]);
    touch_region(buf, 0, 4 * MB);
    pd_sampler_rearm(); /* never re-arms the dropped sample */
    touch_region(buf, 0, 4 * MB);
    pd_sampler_disarm();
    for (size_t i = 0; i < 2; i++) {
        pd_sample_info info;
        assert_int_equal(pd_sampler_sample(i, &info), 0);
        assert_int_equal(pd_sampler_count(i, 0), info.object == 0 ? 0 : 2);
    }
    munmap(buf, 4 * MB);
}

/* The protection of the page at p, from /proc/self/maps ("rw-p" -> "rw"). */
static void page_prot(const void *p, char out[3])
{
    FILE *f = fopen("/proc/self/maps", "r");
    assert_non_null(f);
    char line[512];
    out[0] = 0;
    while (fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        char perm[8];
        if (sscanf(line, "%lx-%lx %7s", &lo, &hi, perm) == 3 && (uintptr_t)p >= lo && (uintptr_t)p < hi) {
            out[0] = perm[0], out[1] = perm[1], out[2] = 0;
            break;
        }
    }
    fclose(f);
    assert_true(out[0] != 0);
}

/* The disarm unprotects each object's samples with one call over its span
 * (src/lib/page_sampler.c, disarm_locked; a call per sample before): every
 * sampled page is read-write after it, and memory between two objects that belongs to neither (here a
 * read-only page) keeps its protection. */
static void test_disarm_spans_stay_inside_objects(void **state)
{
    (void)state;
    start(0, 0);
    unsigned char *buf = map_buf(4 * MB + 4096);
    unsigned char *gap = buf + 2 * MB;
    assert_int_equal(mprotect(gap, 4096, PROT_READ), 0);
    pd_sampler_range r[2] = {{buf, 2 * MB, 0}, {gap + 4096, 2 * MB, 1}};
    pd_sampler_config cfg = {.seed = 7, .period_ms = 0, .min_per_object = 64};
    pd_sampler_stop();
    assert_int_equal(pd_sampler_start(&cfg), 0);
    assert_int_equal(pd_sampler_set_ranges(r, 2), 0);
    assert_true(pd_sampler_nsamples() >= 128);
    pd_sampler_set_thread_task(0);
    pd_sampler_arm();
    touch_region(buf, 0, MB); /* some samples fire (restored), the rest stay armed */
    pd_sampler_stats before, after;
    pd_sampler_get_stats(&before);
    pd_sampler_disarm();
    pd_sampler_get_stats(&after);
    assert_int_equal(after.protect_calls - before.protect_calls, 2); /* one per object */
    char prot[3];
    for (size_t i = 0; i < pd_sampler_nsamples(); i++) {
        pd_sample_info info;
        assert_int_equal(pd_sampler_sample(i, &info), 0);
        page_prot(info.page, prot);
        assert_string_equal(prot, "rw");
    }
    page_prot(gap, prot);
    assert_string_equal(prot, "r-");
    /* no fault left anywhere in the objects: a system call reads them all */
    int pfd[2];
    assert_int_equal(pipe(pfd), 0);
    for (size_t off = 0; off < 4 * MB + 4096; off += 4096) {
        assert_int_equal(write(pfd[1], buf + off, 8), 8);
        char tmp[8];
        assert_int_equal(read(pfd[0], tmp, 8), 8);
    }
    close(pfd[0]);
    close(pfd[1]);
    munmap(buf, 4 * MB + 4096);
}

static void test_budget_skips_early_rearm(void **state)
{
    (void)state;
    pd_sampler_stop();
    /* Budget 1e-9: after a pass of d > 0 s the next is due d * 1e9 s later. */
    pd_sampler_config cfg = {.seed = 7, .period_ms = 0, .budget = 1e-9, .min_per_object = 1, .allowance_s = -1};
    assert_int_equal(pd_sampler_start(&cfg), 0);
    unsigned char *buf = map_buf(8 * MB);
    pd_sampler_range r = {buf, 8 * MB, 0};
    assert_int_equal(pd_sampler_set_ranges(&r, 1), 0);
    pd_sampler_set_thread_task(0);
    pd_sampler_arm(); /* the first pass is always due */
    touch_region(buf, 0, 8 * MB);
    pd_sampler_rearm_if_due(); /* too soon: skipped */
    touch_region(buf, 0, 8 * MB);
    pd_sampler_disarm();
    pd_sampler_stats st;
    pd_sampler_get_stats(&st);
    assert_int_equal(st.skipped, 1);
    assert_int_equal(st.faults, 4); /* one interval for each of the 4 samples */
    /* a new spell of activity is not armed either until the budget allows */
    pd_sampler_arm_if_due();
    assert_true(pd_sampler_armed());
    touch_region(buf, 0, 8 * MB);
    pd_sampler_disarm();
    pd_sampler_get_stats(&st);
    assert_int_equal(st.skipped, 2);
    assert_int_equal(st.faults, 4);
    munmap(buf, 8 * MB);
}


/* ---- adaptive density (default floor of PD_SAMPLE_MIN_PER_OBJECT) ---------- */

static void start_dense(size_t max_samples)
{
    pd_sampler_stop();
    pd_sampler_config cfg = {.seed = 7, .max_samples = max_samples, .period_ms = 0};
    assert_int_equal(pd_sampler_start(&cfg), 0);
}

static long sample_of_page(const void *page)
{
    for (size_t i = 0; i < pd_sampler_nsamples(); i++) {
        pd_sample_info info;
        assert_int_equal(pd_sampler_sample(i, &info), 0);
        if (info.page == page)
            return (long)i;
    }
    return -1;
}

static void test_small_objects_get_every_page(void **state)
{
    (void)state;
    start_dense(0);
    unsigned char *buf = map_buf(8 * MB);
    /* 3 pages, 40 pages (unaligned end), 1024 pages */
    pd_sampler_range r[3] = {{buf, 3 * 4096, 0}, {buf + MB, 40 * 4096 + 100, 1}, {buf + 4 * MB, 4 * MB, 2}};
    assert_int_equal(pd_sampler_set_ranges(r, 3), 0);
    assert_int_equal(pd_sampler_nsamples(), 3 + 40 + PD_SAMPLE_MIN_PER_OBJECT);
    size_t covered[3] = {0}, samples[3] = {0};
    for (size_t i = 0; i < pd_sampler_nsamples(); i++) {
        pd_sample_info info;
        assert_int_equal(pd_sampler_sample(i, &info), 0);
        const pd_sampler_range *o = &r[info.object];
        /* the page lies in its region, the region in its object */
        assert_true((uintptr_t)info.page >= (uintptr_t)info.region);
        assert_true((uintptr_t)info.page + 4096 <= (uintptr_t)info.region + info.region_len);
        assert_true((uintptr_t)info.region >= (uintptr_t)o->addr);
        assert_true((uintptr_t)info.region + info.region_len <= (uintptr_t)o->addr + o->len);
        covered[info.object] += info.region_len;
        samples[info.object]++;
    }
    /* the regions tile each object: every byte is stood for once */
    for (int o = 0; o < 3; o++)
        assert_int_equal(covered[o], r[o].len);
    /* every page of the small ones is its own sample */
    for (size_t p = 0; p < 3; p++)
        assert_true(sample_of_page(buf + p * 4096) >= 0);
    for (size_t p = 0; p < 40; p++)
        assert_true(sample_of_page(buf + MB + p * 4096) >= 0);
    assert_int_equal(samples[2], PD_SAMPLE_MIN_PER_OBJECT);
    munmap(buf, 8 * MB);
}

static void test_dense_budget_shrinks_floor(void **state)
{
    (void)state;
    start_dense(40);
    unsigned char *buf = map_buf(8 * MB);
    pd_sampler_range r[4] = {{buf, MB, 0}, {buf + 2 * MB, MB, 1}, {buf + 4 * MB, MB, 2}, {buf + 6 * MB, MB, 3}};
    assert_int_equal(pd_sampler_set_ranges(r, 4), 0);
    /* the floor halves until the objects need at most half the budget */
    assert_true(pd_sampler_nsamples() <= 40);
    assert_int_equal(pd_sampler_nsamples(), 4 * 4);
    munmap(buf, 8 * MB);
}

/* Touches the first byte of pages [first, first + n) of buf. */
static void touch_pages(unsigned char *buf, size_t first, size_t n)
{
    for (size_t p = first; p < first + n; p++)
        ((volatile unsigned char *)buf)[p * 4096] += 1;
}

struct waits {
    size_t n, negative;
    uint64_t total;
};

static void collect_waits(void *ctx, size_t sample, int slot, uint64_t count, double wait_s)
{
    struct waits *w = ctx;
    (void)sample;
    assert_true(slot == 1 || slot == 2);
    w->n++;
    w->total += count;
    w->negative += !(wait_s >= 0);
}

/* 64 pages, each its own sample (adjacent: one mprotect arms them all). */
static unsigned char *sample_64_pages(void)
{
    start_dense(0);
    unsigned char *buf = map_buf(64 * 4096);
    pd_sampler_range r = {buf, 64 * 4096, 0};
    assert_int_equal(pd_sampler_set_ranges(&r, 1), 0);
    assert_int_equal(pd_sampler_nsamples(), 64);
    return buf;
}

/* Known pages at known frequencies from known tasks: the counts (intervals
 * touched) rank them, per task, and adjacent samples are armed together. */
static void test_frequency_ranks_pages_per_task(void **state)
{
    (void)state;
    unsigned char *buf = sample_64_pages();
    pd_sampler_stats st0;
    pd_sampler_get_stats(&st0);
    pd_sampler_arm();
    for (int interval = 0; interval < 5; interval++) {
        pd_sampler_set_thread_task(1);
        touch_pages(buf, 0, 16); /* task 1: hot pages, every interval */
        if (interval < 2)
            touch_pages(buf, 16, 16); /* task 1: warm pages, 2 intervals */
        pd_sampler_set_thread_task(2);
        if (interval % 2 == 0)
            touch_pages(buf, 32, 16); /* task 2: 3 intervals */
        pd_sampler_set_thread_task(PD_SAMPLER_NO_TASK);
        pd_sampler_rearm();
    }
    pd_sampler_disarm();
    for (size_t p = 0; p < 64; p++) {
        long i = sample_of_page(buf + p * 4096);
        assert_true(i >= 0);
        uint64_t want1 = p < 16 ? 5 : p < 32 ? 2 : 0, want2 = p >= 32 && p < 48 ? 3 : 0;
        assert_int_equal(pd_sampler_count((size_t)i, 1), want1);
        assert_int_equal(pd_sampler_count((size_t)i, 2), want2);
    }
    pd_sampler_stats st;
    pd_sampler_get_stats(&st);
    assert_int_equal(st.faults - st0.faults, 5 * 16 + 2 * 16 + 3 * 16);
    /* the same counts come with their summed times to first touch */
    struct waits w = {0};
    pd_sampler_foreach_wait(collect_waits, &w);
    assert_int_equal(w.n, 16 + 16 + 16);
    assert_int_equal(w.total, 5 * 16 + 2 * 16 + 3 * 16);
    assert_true(w.negative == 0);
    /* 64 adjacent pages: one call to arm them all, one per touched run to
     * re-arm, far fewer than one per page */
    assert_true(st.protect_calls - st0.protect_calls <= 1 + 5 * 2 + 1);
    munmap(buf, 64 * 4096);
}

/* The ring of a thread's fault-handling time: faults that began at or after
 * `since` count whole; when older ones fell out of the full ring, the
 * ring's busy share of its own span stands for the time before it. */
static void test_busy_ring_counts_faults_since(void **state)
{
    (void)state;
    pd_busy_ring r = {0};
    assert_int_equal(pd_busy_ring_since(&r, 0, 100), 0);
    for (uint64_t k = 1; k <= 9; k++)
        pd_busy_ring_add(&r, 100 * k, 10); /* faults at 100 .. 900, 10 ns each */
    assert_int_equal(pd_busy_ring_since(&r, 250, 1000), 7 * 10);  /* 300 .. 900 */
    assert_int_equal(pd_busy_ring_since(&r, 300, 1000), 7 * 10);  /* one at since counts */
    assert_int_equal(pd_busy_ring_since(&r, 901, 1000), 0);
    assert_int_equal(pd_busy_ring_since(&r, 0, 1000), 9 * 10);     /* not full: exact */

    pd_busy_ring full = {0};
    for (uint64_t k = 0; k < 40; k++)
        pd_busy_ring_add(&full, 1000 + 100 * k, 50); /* 1000 .. 4900 */
    /* the ring keeps 1800 .. 4900: 1600 ns busy over 5000 - 1800 = 3200 ns,
     * half of it, so [0, 1800) is charged 900 */
    assert_int_equal(pd_busy_ring_since(&full, 0, 5000), 1600 + 900);
    assert_int_equal(pd_busy_ring_since(&full, 1800, 5000), 1600);
    assert_int_equal(pd_busy_ring_since(&full, 4850, 5000), 50);
}

static void sum_waits(void *ctx, size_t sample, int slot, uint64_t count, double wait_s)
{
    (void)sample;
    (void)count;
    if (slot == 1)
        *(double *)ctx += wait_s;
}

/* The fake nanosecond clock of the tests that set it (pd_sampler_set_clock):
 * every reading is fake_tick_ns (TICK_NS unless a test sets another) after
 * the one before, so the work between two readings takes one tick. Atomic:
 * the signal handler reads it. The teardown restores the real clock. */
enum { TICK_NS = 1000000 };
static _Atomic uint64_t fake_ns, fake_tick_ns = TICK_NS;
static uint64_t fake_clock_ns(void)
{
    uint64_t tick = atomic_load(&fake_tick_ns);
    return atomic_fetch_add(&fake_ns, tick) + tick;
}
static void fake_clock_off(void)
{
    pd_sampler_set_clock(NULL);
    atomic_store(&fake_tick_ns, TICK_NS);
}

/* The wait recorded for one sample (slot 1). */
struct page_wait {
    size_t sample;
    double wait_s;
};
static void wait_of_sample(void *ctx, size_t sample, int slot, uint64_t count, double wait_s)
{
    (void)count;
    struct page_wait *w = ctx;
    if (slot == 1 && sample == w->sample)
        w->wait_s = wait_s;
}

/* A task that touches 64 armed pages back to back takes 64 faults in a row.
 * On a clock where each reading is one tick after the last, the handler
 * reads it on entry and on exit, nothing else reads it between the faults,
 * and page k's fault enters 2k + 1 ticks after the arming pass ends: it
 * waited k faults. Counted from its stamp, the waits would sum to about
 * 64^2 = 4096 ticks. Net of the thread's fault handling (a tick each, plus
 * the calibrated trap: real, 10 - 20 us on this project's VM, not a tick),
 * what is left is the task's own progress, k + 1 ticks for page k less k
 * traps (plus the ticks between the stamp and the pass's end), and past
 * the ring's 32 faults the ring's busy share stands for the older ones
 * (pd_busy_ring_since, checked on its own above), replayed here. The
 * stamp itself is read off page 0's wait, which no fault precedes; it
 * must lie within the arming call. No real time is measured, so the sums
 * are exact. */
static void test_waits_net_of_fault_handling(void **state)
{
    (void)state;
    unsigned char *buf = sample_64_pages();
    pd_sampler_stats st;
    pd_sampler_get_stats(&st);
    uint64_t trap_ns = (uint64_t)(st.trap_s * 1e9 + 0.5);
    /* a second past the real clock: the thread's ring of real faults (earlier
     * tests) holds none after arming */
    atomic_store(&fake_ns, (uint64_t)((pd_monotonic() + 1) * 1e9));
    pd_sampler_set_clock(fake_clock_ns);
    pd_sampler_reset_counts();
    pd_sampler_set_thread_task(1);
    uint64_t before_arm = atomic_load(&fake_ns);
    pd_sampler_arm();
    uint64_t after_arm = atomic_load(&fake_ns);
    touch_pages(buf, 0, 64);
    pd_sampler_disarm();
    pd_sampler_set_thread_task(PD_SAMPLER_NO_TASK);
    pd_sampler_set_clock(NULL);

    struct page_wait w0 = {(size_t)sample_of_page(buf), -1};
    pd_sampler_foreach_wait(wait_of_sample, &w0);
    uint64_t armed = after_arm + TICK_NS - (uint64_t)(w0.wait_s * 1e9 + 0.5);
    assert_true(armed > before_arm && armed <= after_arm);
    pd_busy_ring ring = {0};
    uint64_t want = 0, from_arming = 0;
    for (uint64_t k = 0; k < 64; k++) {
        uint64_t entered = after_arm + (2 * k + 1) * TICK_NS;
        uint64_t busy = pd_busy_ring_since(&ring, armed, entered);
        from_arming += entered - armed;
        want += entered - armed > busy ? entered - armed - busy : 0;
        pd_busy_ring_add(&ring, entered, TICK_NS + trap_ns);
    }
    double waits = 0;
    pd_sampler_foreach_wait(sum_waits, &waits);
    assert_true(fabs(waits * 1e9 - (double)want) < 64); /* ns rounding of 64 sums */
    /* about half of what counting from the stamp gives: for the first 32
     * pages k + 1 ticks, (2k + 1) / 2 for each later one, plus the stamp's
     * few ticks before the pass ended */
    assert_true(waits * 1e9 < 0.55 * (double)from_arming);
    munmap(buf, 64 * 4096);
}

/* Within an instance's allowance every re-arm is due, whatever the budget;
 * reset_counts starts a new instance (and allowance). */
static void test_allowance_before_budget(void **state)
{
    (void)state;
    pd_sampler_stop();
    pd_sampler_config cfg = {.seed = 7, .period_ms = 0, .budget = 1e-9, .min_per_object = 1, .allowance_s = 10,
                             .allowance_frac = -1};
    assert_int_equal(pd_sampler_start(&cfg), 0);
    unsigned char *buf = map_buf(2 * MB);
    pd_sampler_range r = {buf, 2 * MB, 0};
    assert_int_equal(pd_sampler_set_ranges(&r, 1), 0);
    pd_sampler_set_thread_task(0);
    pd_sampler_arm();
    for (int i = 0; i < 3; i++) {
        touch_region(buf, 0, 2 * MB);
        pd_sampler_rearm_if_due();
    }
    pd_sampler_disarm();
    assert_int_equal(pd_sampler_count(0, 0), 3);
    pd_sampler_stats st;
    pd_sampler_get_stats(&st);
    assert_int_equal(st.skipped, 0);
    pd_sampler_reset_counts();
    assert_int_equal(pd_sampler_count(0, 0), 0);
    munmap(buf, 2 * MB);
}

/* The allowance is a share of the previous instance's length: the first
 * instance gets the whole allowance_s (every re-arm due), an instance
 * after one that lasted microseconds gets about nothing (with a share of
 * 1e-9: femtoseconds), so the budget decides at once. */
static void test_allowance_is_a_share_of_the_instance(void **state)
{
    (void)state;
    pd_sampler_stop();
    pd_sampler_config cfg = {.seed = 7, .period_ms = 0, .budget = 1e-9, .min_per_object = 1, .allowance_s = 10,
                             .allowance_frac = 1e-9};
    assert_int_equal(pd_sampler_start(&cfg), 0);
    unsigned char *buf = map_buf(2 * MB);
    pd_sampler_range r = {buf, 2 * MB, 0};
    assert_int_equal(pd_sampler_set_ranges(&r, 1), 0);
    pd_sampler_set_thread_task(0);
    for (int inst = 0; inst < 2; inst++) {
        pd_sampler_stats st0, st;
        pd_sampler_get_stats(&st0);
        pd_sampler_arm();
        for (int i = 0; i < 3; i++) {
            touch_region(buf, 0, 2 * MB);
            pd_sampler_rearm_if_due();
        }
        pd_sampler_disarm();
        pd_sampler_get_stats(&st);
        if (inst == 0) { /* no length known yet: the whole allowance */
            assert_int_equal(pd_sampler_count(0, 0), 3);
            assert_int_equal(st.skipped - st0.skipped, 0);
        } else { /* the first pass costs more than the share: the rest are skipped */
            assert_int_equal(pd_sampler_count(0, 0), 1);
            assert_int_equal(st.skipped - st0.skipped, 3);
        }
        pd_sampler_reset_counts();
    }
    munmap(buf, 2 * MB);
}

static void sum_counts(void *ctx, size_t sample, int slot, uint64_t count)
{
    (void)sample;
    if (slot == 0) {
        uint64_t *s = ctx;
        s[0] += count;
        s[1]++;
    }
}

/* One instance of n spells, each touching every page of buf: the summed
 * counts of task 0 and how many samples have one, in s[0] and s[1]. */
static void spells(unsigned char *buf, int n, uint64_t s[2])
{
    assert_int_equal(pd_sampler_instance_begin(0), 1);
    for (int i = 0; i < n; i++) {
        pd_sampler_arm();
        touch_region(buf, 0, 2 * MB);
        pd_sampler_disarm();
    }
    s[0] = s[1] = 0;
    pd_sampler_foreach(sum_counts, s);
}

/* A spell the instance cannot afford whole arms a slice of 1 in k samples
 * at a random offset, and each of their faults counts k: the summed count of
 * a touch of every page is the samples' number, as with every sample armed.
 * Offsets differ between spells, so other samples are seen. Once the
 * elapsed time affords it, a later pass in the spell widens the slice (a
 * new draw, the old slice unprotected first). */
static void test_thinned_spells_count_unbiased(void **state)
{
    (void)state;
    pd_sampler_stop();
    pd_sampler_config cfg = {.seed = 7, .period_ms = 0, .min_per_object = 64, .spell_frac = 1e-9,
                             .spell_floor_s = 1e-9, .share = -1};
    assert_int_equal(pd_sampler_start(&cfg), 0);
    unsigned char *buf = map_buf(2 * MB);
    pd_sampler_range r = {buf, 2 * MB, 0};
    assert_int_equal(pd_sampler_set_ranges(&r, 1), 0);
    size_t n = pd_sampler_nsamples();
    assert_int_equal(n, 64);
    pd_sampler_set_thread_task(0);
    int seen[64] = {0}, distinct = 0;
    uint64_t s[2];
    for (int spell = 0; spell < 16; spell++) {
        spells(buf, 1, s);
        assert_int_equal(s[0], 64); /* one fault, counted 64 times */
        assert_int_equal(s[1], 1);
        assert_float_equal(pd_sampler_count_weight(), 64.0, 1e-12);
        for (size_t i = 0; i < n; i++)
            if (pd_sampler_count(i, 0) && !seen[i]++)
                distinct++;
        pd_sampler_reset_counts();
    }
    assert_true(distinct > 4);
    pd_sampler_stats st;
    pd_sampler_get_stats(&st);
    assert_int_equal(st.spells, 16);
    assert_int_equal(st.spells_thinned, 16);
    assert_int_equal(st.max_thinning, 64);

    /* Affordable at once: every sample armed, each fault counts 1. */
    pd_sampler_stop();
    cfg.spell_frac = 1;
    cfg.spell_floor_s = 10;
    assert_int_equal(pd_sampler_start(&cfg), 0);
    assert_int_equal(pd_sampler_set_ranges(&r, 1), 0);
    spells(buf, 1, s);
    assert_int_equal(s[0], 64);
    assert_int_equal(s[1], 64);
    assert_float_equal(pd_sampler_count_weight(), 1.0, 1e-12);
    pd_sampler_reset_counts();

    /* Widened within the spell: thin at its start (no time elapsed, a floor
     * of nothing), whole after 1 s at spell_frac 0.02 (20 ms, against a
     * whole spell's 64 samples armed and faulted). On the fake clock, 1 us
     * a reading from the sampler's start (its fault-cost calibration too):
     * a fault costs microseconds, the instance's start and its arming are
     * readings apart, and the second is added to the clock, not slept. */
    pd_sampler_stop();
    cfg.spell_frac = 0.02;
    cfg.spell_floor_s = 1e-9;
    atomic_store(&fake_ns, (uint64_t)((pd_monotonic() + 1) * 1e9));
    atomic_store(&fake_tick_ns, 1000);
    pd_sampler_set_clock(fake_clock_ns);
    assert_int_equal(pd_sampler_start(&cfg), 0);
    assert_int_equal(pd_sampler_set_ranges(&r, 1), 0);
    assert_int_equal(pd_sampler_instance_begin(0), 1);
    pd_sampler_arm();
    touch_region(buf, 0, 2 * MB);
    s[0] = s[1] = 0;
    pd_sampler_foreach(sum_counts, s);
    assert_int_equal(s[0], 64);
    assert_true(s[1] < 64);
    atomic_fetch_add(&fake_ns, 1000000000);
    pd_sampler_rearm();
    touch_region(buf, 0, 2 * MB);
    pd_sampler_disarm();
    s[0] = s[1] = 0;
    pd_sampler_foreach(sum_counts, s);
    assert_int_equal(s[0], 128);
    assert_int_equal(s[1], 64);
    pd_sampler_reset_counts();
    fake_clock_off();
    munmap(buf, 2 * MB);
}

/* The cap (spell_cap): a spell that would take the instance's sampling
 * cost past that share of its elapsed time, plus the floor and one whole
 * spell, arms a slice, past spell_frac's 1 in 64 where it must. A whole
 * spell costs the same however short it is: GAP's sssp (a barrier per
 * bucket, thousands a trial) took 4.7 s for its 0.06 s first trial armed
 * whole at every barrier. Here the first spell is whole; with a cap of
 * next to nothing every later one arms 1 in 65536 (of 64 samples, at most
 * one), each fault counting 65536; with room to spare, none is thinned. */
static void test_cap_thins_spells_past_its_share(void **state)
{
    (void)state;
    pd_sampler_stop();
    pd_sampler_config cfg = {.seed = 7, .period_ms = 0, .min_per_object = 64, .spell_cap = 1e-9,
                             .spell_floor_s = 1e-9, .share = -1};
    assert_int_equal(pd_sampler_start(&cfg), 0);
    unsigned char *buf = map_buf(2 * MB);
    pd_sampler_range r = {buf, 2 * MB, 0};
    assert_int_equal(pd_sampler_set_ranges(&r, 1), 0);
    assert_int_equal(pd_sampler_nsamples(), 64);
    pd_sampler_set_thread_task(0);
    uint64_t s[2];
    spells(buf, 17, s);
    /* the first spell's 64 faults count 1 each; the 16 others' 65536 each */
    assert_true(s[0] >= 64);
    assert_int_equal((s[0] - 64) % 65536, 0);
    assert_true((s[0] - 64) / 65536 <= 16);
    pd_sampler_stats st;
    pd_sampler_get_stats(&st);
    assert_int_equal(st.spells, 17);
    assert_int_equal(st.spells_thinned, 16);
    assert_int_equal(st.max_thinning, 65536);
    assert_true(st.faults <= 64 + 16);
    pd_sampler_reset_counts();

    /* Room to spare: every spell whole, every fault counting 1. */
    pd_sampler_stop();
    cfg.spell_cap = 0.99;
    cfg.spell_floor_s = 10;
    assert_int_equal(pd_sampler_start(&cfg), 0);
    assert_int_equal(pd_sampler_set_ranges(&r, 1), 0);
    spells(buf, 17, s);
    assert_int_equal(s[0], 64 * 17);
    pd_sampler_get_stats(&st);
    assert_int_equal(st.spells_thinned, 0);
    assert_int_equal(st.max_thinning, 1);
    pd_sampler_reset_counts();
    munmap(buf, 2 * MB);
}

/* The long-run share decides per instance: the first is sampled, then one
 * whose cost (one more like the last sampled one) would exceed the share of
 * all instances' time arms nothing (a touch counts nothing), unless forced;
 * with no share (< 0) every instance is sampled. */
static void test_share_skips_whole_instances(void **state)
{
    (void)state;
    for (int unlimited = 0; unlimited < 2; unlimited++) {
        pd_sampler_stop();
        pd_sampler_config cfg = {.seed = 7, .period_ms = 0, .min_per_object = 1, .share = unlimited ? -1 : 1e-9};
        assert_int_equal(pd_sampler_start(&cfg), 0);
        unsigned char *buf = map_buf(2 * MB);
        pd_sampler_range r = {buf, 2 * MB, 0};
        assert_int_equal(pd_sampler_set_ranges(&r, 1), 0);
        pd_sampler_set_thread_task(0);
        const int force[4] = {0, 0, 0, 1};
        for (int inst = 0; inst < 4; inst++) {
            pd_sampler_stats st0, st;
            pd_sampler_get_stats(&st0);
            int sampled = pd_sampler_instance_begin(force[inst]);
            assert_int_equal(sampled, unlimited || inst == 0 || force[inst]);
            pd_sampler_arm();
            touch_region(buf, 0, 2 * MB);
            pd_sampler_disarm();
            pd_sampler_get_stats(&st);
            assert_int_equal(pd_sampler_count(0, 0), sampled ? 1 : 0);
            assert_int_equal(st.rearms - st0.rearms, sampled ? 1 : 0);
            pd_sampler_reset_counts();
        }
        pd_sampler_stats st;
        pd_sampler_get_stats(&st);
        assert_int_equal(st.instances, 4);
        assert_int_equal(st.instances_sampled, unlimited ? 4 : 2);
        assert_true(st.cost_s > 0);
        assert_true(st.wall_s > 0);
        munmap(buf, 2 * MB);
    }
}

/* The program's time before its first instance (its setup) is no
 * instance's time: the share does not grow with it. 300 ms of setup at a
 * share of 0.1% would afford 0.3 ms of sampling; counted from the first
 * instance only, the second instance (a fraction of a millisecond of work,
 * much of it the first one's sampling) is skipped. On the fake clock, 1 us
 * a reading from the sampler's start (its fault-cost calibration
 * included): the first instance's 16 faults and pass cost tens of us, its
 * time about as much, and the setup is 300 ms added to the clock. */
static void test_share_counts_from_the_first_instance(void **state)
{
    (void)state;
    pd_sampler_stop();
    atomic_store(&fake_ns, (uint64_t)((pd_monotonic() + 1) * 1e9));
    atomic_store(&fake_tick_ns, 1000);
    pd_sampler_set_clock(fake_clock_ns);
    pd_sampler_config cfg = {.seed = 7, .period_ms = 0, .min_per_object = 1, .share = 1e-3};
    assert_int_equal(pd_sampler_start(&cfg), 0);
    unsigned char *buf = map_buf(64 * 1024);
    pd_sampler_range r = {buf, 64 * 1024, 0};
    assert_int_equal(pd_sampler_set_ranges(&r, 1), 0);
    atomic_fetch_add(&fake_ns, 300000000); /* the setup */
    pd_sampler_set_thread_task(0);
    for (int inst = 0; inst < 2; inst++) {
        assert_int_equal(pd_sampler_instance_begin(0), inst == 0);
        pd_sampler_arm();
        touch_region(buf, 0, 64 * 1024);
        pd_sampler_disarm();
        pd_sampler_reset_counts();
    }
    pd_sampler_stats st;
    pd_sampler_get_stats(&st);
    fake_clock_off();
    assert_int_equal(st.instances_sampled, 1);
    assert_true(st.cost_s > 0);
    assert_true(st.wall_s < 0.01); /* the two instances, not the setup */
    munmap(buf, 64 * 1024);
}

/* A pointer into a PROT_NONE page that the sampler does not own. */
static volatile int *bad_pointer(void)
{
    void *p = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : (volatile int *)p;
}

/* Status of a child that writes through a bad pointer, with the default
 * SIGSEGV action underneath, with or without the sampler on top. */
static int crash_child(int with_sampler)
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        pd_sampler_stop();
        signal(SIGSEGV, SIG_DFL);
        if (with_sampler) {
            static unsigned char buf[4 * MB];
            pd_sampler_config cfg = {.seed = 1, .period_ms = 0};
            pd_sampler_range r = {buf, sizeof buf, 0};
            if (pd_sampler_start(&cfg) != 0 || pd_sampler_set_ranges(&r, 1) != 0)
                _exit(3);
            pd_sampler_arm();
            buf[MB] = 1; /* our faults still work in the child */
        }
        *bad_pointer() = 1;
        _exit(0);
    }
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    return st;
}

static void test_real_segfault_still_crashes(void **state)
{
    (void)state;
    int with = crash_child(1);
    int without = crash_child(0); /* the behaviour without the sampler */
    assert_int_equal(with, without);
    assert_true(WIFSIGNALED(with) && WTERMSIG(with) == SIGSEGV);
}

static void previous_handler(int sig, siginfo_t *si, void *uc)
{
    (void)sig;
    (void)si;
    (void)uc;
    _exit(42);
}

static void test_chains_to_previous_handler(void **state)
{
    (void)state;
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        pd_sampler_stop();
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = previous_handler;
        sa.sa_flags = SA_SIGINFO;
        sigaction(SIGSEGV, &sa, NULL);
        pd_sampler_config cfg = {.seed = 1, .period_ms = 0};
        if (pd_sampler_start(&cfg) != 0)
            _exit(3);
        *bad_pointer() = 1;
        _exit(0);
    }
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 42);
}

/* The pages of a table, in sample order. */
static void table_pages(uintptr_t *page, pd_sample_info *info, size_t n)
{
    assert_int_equal(pd_sampler_nsamples(), n);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(pd_sampler_sample(i, &info[i]), 0);
        page[i] = (uintptr_t)info[i].page;
    }
}

/* With rotate, each sampled instance after the first samples other pages of
 * the same strata: regions and objects stay, the pages stay whole pages
 * inside their regions and in address order, and the new pages count.
 * Without it (or in an instance the share skips), the pages stay. */
static void test_rotate_redraws_pages_within_their_regions(void **state)
{
    (void)state;
    pd_sampler_stop();
    /* 8 strata of 32 pages in a 1 MiB object that begins mid-page (the
     * first and last strata also hold its partial pages); every instance
     * sampled (share < 0) */
    pd_sampler_config cfg = {.seed = 7, .min_per_object = 8, .period_ms = 0, .share = -1, .rotate = 1};
    assert_int_equal(pd_sampler_start(&cfg), 0);
    unsigned char *buf = map_buf(2 * MB);
    pd_sampler_range r = {buf + 100, MB, 4};
    assert_int_equal(pd_sampler_set_ranges(&r, 1), 0);
    enum { N = 8 };
    uintptr_t first[N], now[N];
    pd_sample_info info0[N], info[N];
    table_pages(first, info0, N);
    assert_int_equal(pd_sampler_instance_begin(0), 1); /* the first: table_build's draw */
    table_pages(now, info, N);
    assert_memory_equal(first, now, sizeof first);
    int moved = 0;
    for (int inst = 0; inst < 6; inst++) {
        pd_sampler_reset_counts();
        uintptr_t before[N];
        memcpy(before, now, sizeof now);
        assert_int_equal(pd_sampler_instance_begin(0), 1);
        table_pages(now, info, N);
        for (size_t i = 0; i < N; i++) {
            assert_int_equal(info[i].object, 4);
            assert_ptr_equal(info[i].region, info0[i].region);
            assert_int_equal(info[i].region_len, info0[i].region_len);
            assert_int_equal(now[i] % 4096, 0);
            assert_true(now[i] >= (uintptr_t)info[i].region);
            assert_true(now[i] + 4096 <= (uintptr_t)info[i].region + info[i].region_len);
            assert_true(now[i] >= (uintptr_t)buf + 100 && now[i] + 4096 <= (uintptr_t)buf + 100 + MB);
            if (i > 0)
                assert_true(now[i] > now[i - 1]);
            moved += now[i] != before[i];
        }
        /* the drawn pages are the ones armed and counted */
        pd_sampler_set_thread_task(2);
        pd_sampler_arm();
        ((volatile unsigned char *)now[3])[0] += 1;
        pd_sampler_disarm();
        pd_sampler_set_thread_task(PD_SAMPLER_NO_TASK);
        assert_int_equal(pd_sampler_count(3, 2), 1);
        assert_int_equal(pd_sampler_count(4, 2), 0);
    }
    /* 32 pages a stratum: nearly every redraw moves nearly every page */
    assert_true(moved > 6 * N / 2);
    pd_sampler_stats st;
    pd_sampler_get_stats(&st);
    assert_int_equal(st.rotations, 6);

    /* off: the pages stay */
    pd_sampler_stop();
    cfg.rotate = 0;
    assert_int_equal(pd_sampler_start(&cfg), 0);
    assert_int_equal(pd_sampler_set_ranges(&r, 1), 0);
    table_pages(first, info0, N);
    for (int inst = 0; inst < 3; inst++) {
        pd_sampler_reset_counts();
        assert_int_equal(pd_sampler_instance_begin(0), 1);
    }
    table_pages(now, info, N);
    assert_memory_equal(first, now, sizeof first);
    pd_sampler_get_stats(&st);
    assert_int_equal(st.rotations, 0);
    munmap(buf, 2 * MB);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_counts_touched_regions_only, teardown),
        cmocka_unit_test_teardown(test_unaligned_small_objects_and_foreach, teardown),
        cmocka_unit_test_teardown(test_budget_grows_regions, teardown),
        cmocka_unit_test_teardown(test_ticker_rearms, teardown),
        cmocka_unit_test_teardown(test_drop_object_unprotects_at_once, teardown),
        cmocka_unit_test_teardown(test_disarm_spans_stay_inside_objects, teardown),
        cmocka_unit_test_teardown(test_budget_skips_early_rearm, teardown),
        cmocka_unit_test_teardown(test_allowance_before_budget, teardown),
        cmocka_unit_test_teardown(test_allowance_is_a_share_of_the_instance, teardown),
        cmocka_unit_test_teardown(test_share_skips_whole_instances, teardown),
        cmocka_unit_test_teardown(test_share_counts_from_the_first_instance, teardown),
        cmocka_unit_test_teardown(test_thinned_spells_count_unbiased, teardown),
        cmocka_unit_test_teardown(test_cap_thins_spells_past_its_share, teardown),
        cmocka_unit_test_teardown(test_small_objects_get_every_page, teardown),
        cmocka_unit_test_teardown(test_rotate_redraws_pages_within_their_regions, teardown),
        cmocka_unit_test_teardown(test_dense_budget_shrinks_floor, teardown),
        cmocka_unit_test_teardown(test_frequency_ranks_pages_per_task, teardown),
        cmocka_unit_test(test_busy_ring_counts_faults_since),
        cmocka_unit_test_teardown(test_waits_net_of_fault_handling, teardown),
        cmocka_unit_test_teardown(test_real_segfault_still_crashes, teardown),
        cmocka_unit_test_teardown(test_chains_to_previous_handler, teardown),
    };
    return cmocka_run_group_tests_name("runtime_sampler", tests, NULL, NULL);
}
