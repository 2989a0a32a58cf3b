/* Allocation failures inside a sync point (issue #11: never a crash, nothing
 * lost). A sync point that replans and moves pages is run once for each of
 * its allocations, that allocation failing: the call answers PD_OK or
 * PD_ENOMEM and leaves the runtime usable. The next sync point, with memory
 * back, answers PD_OK, the object's pages answer the tier query, the fast
 * pages stay within the capacity, and the hot pages are fast again (a
 * failure mid-move leaves the placement unknown, and the next replan then
 * submits every page). Two such sync points: after the first instance, and
 * after the object was reallocated for a new input (the new pages adopted,
 * the old ones forgotten, the placement kept). The same for a
 * reallocation (pd_object_update), a registration and a first instance's
 * task calls: a call that answers PD_ENOMEM can be made again, and a
 * placement that ran out of memory is made again at the next sync point.
 * Sim backend, real page sampling, task times from a fake clock.
 *
 * The failures come from this program's own malloc, calloc and realloc,
 * which the library's calls resolve to; only the calling thread is
 * counted. They and free count the blocks alive too: after pd_finalize,
 * none of the runtime's may be left, failure or not. Not under a
 * sanitizer, which brings its own. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "lib/perf.h"
#include "paddiser.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define UNDER_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
#define UNDER_SANITIZER 1
#endif
#endif

#define MB (1024ul * 1024ul)
#define CAPACITY (6 * MB)

#ifndef UNDER_SANITIZER
static long fail_at = -1; /* the allocation that fails, counted from 1; -1: none */
static long calls;        /* allocations counted since armed */
static int armed;
static pthread_t armed_thread;

extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t n);
extern void __libc_free(void *p);

static long live; /* blocks these functions handed out that free has not taken back */

static int fail_now(void)
{
    if (!armed || !pthread_equal(pthread_self(), armed_thread))
        return 0;
    return ++calls == fail_at;
}

static void *counted(void *p)
{
    if (p)
        __atomic_add_fetch(&live, 1, __ATOMIC_RELAXED);
    return p;
}

void *malloc(size_t n) { return fail_now() ? NULL : counted(__libc_malloc(n)); }
void *calloc(size_t n, size_t size) { return fail_now() ? NULL : counted(__libc_calloc(n, size)); }
void *realloc(void *p, size_t n)
{
    if (fail_now())
        return NULL;
    void *q = __libc_realloc(p, n);
    if (!p && q)
        __atomic_add_fetch(&live, 1, __ATOMIC_RELAXED);
    else if (p && !n && !q) /* glibc freed p */
        __atomic_sub_fetch(&live, 1, __ATOMIC_RELAXED);
    return q;
}

void free(void *p)
{
    if (p)
        __atomic_sub_fetch(&live, 1, __ATOMIC_RELAXED);
    __libc_free(p);
}

static double fake_now;
static double fake_clock(void) { return fake_now; }
static unsigned char *buf, *buf2; /* 16 MB each */
static unsigned char *cur;        /* the object's memory now */
static int first_touch_start;     /* the object starts where first touch put it, not slow */

static void sweep(unsigned char *p, size_t len)
{
    for (size_t i = 0; i < len; i += 64)
        ((volatile unsigned char *)p)[i] += 1;
}

/* Task 0 sweeps the object's first 2 MB, task 1 its last 12 MB eight
 * times. */
static void instance(void)
{
    assert_int_equal(pd_task_begin(0), PD_OK);
    sweep(cur, 2 * MB);
    fake_now += 0.1;
    assert_int_equal(pd_task_end(0), PD_OK);
    for (int k = 0; k < 8; k++) {
        assert_int_equal(pd_task_begin(1), PD_OK);
        sweep(cur + 4 * MB, 12 * MB);
        fake_now += 0.1;
        assert_int_equal(pd_task_end(1), PD_OK);
    }
}

/* A fresh runtime, one 16 MB object starting on the slow tier (or where
 * first touch put it), and, with `first_instance`, one instance; with
 * `realloc_input`, then a sync point, the object moved to other memory (a
 * new input) and an instance there. Every plan is applied (moves free, no
 * noise floor), so the sync point after this replans. In the test body,
 * not a cmocka setup: cmocka's SIGSEGV handler would take the page
 * sampler's faults. */
static void prepare(int realloc_input, int first_instance)
{
    pd_perf_set_clock(fake_clock);
    setenv("PADDISER_SAMPLE_BUDGET_PCT", "0", 1);
    setenv("PADDISER_MIGRATE_BW", "1e15", 1);
    setenv("PADDISER_MIN_GAIN", "0", 1);
    if (first_touch_start)
        unsetenv("PADDISER_START_TIER");
    else
        setenv("PADDISER_START_TIER", "slow", 1);
    setenv("PADDISER_QUIET", "1", 1);
    memset(buf, 0, 16 * MB);
    memset(buf2, 0, 16 * MB);
    cur = buf;
    pd_options o;
    pd_options_default(&o);
    o.backend = PD_BACKEND_SIM;
    o.fast_capacity = CAPACITY;
    assert_int_equal(pd_init(&o), PD_OK);
    pd_access_hint stream = {PD_PATTERN_STREAM, 1, 64, 0};
    assert_int_equal(pd_object_register("grid", buf, 16 * MB, &stream), 0);
    if (!first_instance)
        return;
    instance();
    if (!realloc_input)
        return;
    assert_int_equal(pd_sync_point(), PD_OK);
    cur = buf2;
    assert_int_equal(pd_object_update(0, buf2, 16 * MB), PD_OK);
    instance();
}

/* What runs with one allocation failing. */
enum step { SYNC_POINT, REALLOCATION, TASK_CALLS, REGISTRATION };

/* An instance whose task calls may fail: each answers PD_OK or PD_ENOMEM
 * (a task that did not begin is not ended); the first failure's code. */
static int instance_may_fail(void)
{
    int first = PD_OK;
    for (int k = 0; k < 9; k++) {
        int t = k == 0 ? 0 : 1;
        int rc = pd_task_begin(t);
        if (rc == PD_OK) {
            sweep(t == 0 ? cur : cur + 4 * MB, t == 0 ? 2 * MB : 12 * MB);
            fake_now += 0.1;
            rc = pd_task_end(t);
        }
        if (rc != PD_OK && rc != PD_ENOMEM)
            fail_msg("a task call answered %d", rc);
        first = first == PD_OK ? rc : first;
    }
    return first;
}

/* `step` with allocation `at` failing (-1: none); its result. The
 * allocations it made land in *n. After a failed reallocation the object
 * is still where it was, and the update is made again. */
static int armed_step(enum step step, long at, long *n)
{
    calls = 0;
    fail_at = at;
    armed_thread = pthread_self();
    armed = 1;
    pd_access_hint stream = {PD_PATTERN_STREAM, 1, 64, 0};
    int rc = step == SYNC_POINT     ? pd_sync_point()
             : step == REALLOCATION ? pd_object_update(0, buf2, 16 * MB)
             : step == REGISTRATION ? pd_object_register("other", buf2, 16 * MB, &stream)
                                    : instance_may_fail();
    armed = 0;
    fail_at = -1;
    *n = calls;
    if (step == REALLOCATION) {
        if (rc == PD_ENOMEM)
            assert_int_equal(pd_object_update(0, buf2, 16 * MB), PD_OK);
        cur = buf2;
    }
    if (step == REGISTRATION) {
        if (rc == PD_ENOMEM)
            rc = pd_object_register("other", buf2, 16 * MB, &stream);
        assert_int_equal(rc, 1);
        rc = PD_OK;
    }
    return rc;
}

static void finish(void)
{
    pd_finalize();
    pd_perf_set_clock(NULL);
}

/* After the failure: another instance and a sync point with memory back. */
static void check_recovers(long at, int rc)
{
    if (rc != PD_OK && rc != PD_ENOMEM)
        fail_msg("allocation %ld failed: the sync point answered %d", at, rc);
    instance();
    if (pd_sync_point() != PD_OK)
        fail_msg("allocation %ld failed: the next sync point did not recover", at);
    int tiers[4096];
    size_t fast = 0;
    for (int id = 0; id < 2; id++) { /* the object, and the one a registration added */
        int got = pd_object_page_tiers(id, tiers, 4096);
        if (got == PD_ENOTFOUND && id == 1)
            break;
        assert_int_equal(got, 4096);
        for (int i = 0; i < 4096; i++) {
            assert_true(tiers[i] == PD_PAGE_FAST || tiers[i] == PD_PAGE_SLOW);
            fast += tiers[i] == PD_PAGE_FAST ? 4096 : 0;
        }
    }
    if (fast > CAPACITY)
        fail_msg("allocation %ld failed: %zu fast bytes over the capacity", at, fast);
    if (!fast) /* the replan places the hot pages again */
        fail_msg("allocation %ld failed: no page fast after the next sync point", at);
}

/* Each allocation of `step` fails in turn, after prepare(realloc_input)
 * and, before a reallocation, a sync point. The task calls are the first
 * instance's (the tasks are made then). A failed sync point or task call
 * must say so; a reallocation whose placement ran out of memory answers
 * PD_OK, its placement made again at the next sync point. */
static void each_allocation_fails(enum step step, int realloc_input)
{
    buf = aligned_alloc(2 * MB, 16 * MB);
    buf2 = aligned_alloc(2 * MB, 16 * MB);
    assert_true(buf && buf2);
    /* how many allocations the step makes; a sync point must replan (the
     * first moves pages; after the reallocation, first touch has put the
     * new memory on the fast tier, and the rule keeps it there) */
    long total, live0 = live;
    prepare(realloc_input, step != TASK_CALLS);
    if (step == REALLOCATION || step == REGISTRATION)
        assert_int_equal(pd_sync_point(), PD_OK);
    assert_int_equal(armed_step(step, -1, &total), PD_OK);
    if (step == SYNC_POINT) {
        pd_profile_info info;
        assert_int_equal(pd_profile_info_get(&info), PD_OK);
        assert_true(info.plan_decided);
        assert_true(realloc_input || first_touch_start || info.pages_moved > 0);
    }
    assert_true(total > 0);
    finish();
    assert_int_equal(live, live0); /* pd_finalize frees what the runtime allocated */
    /* Each failure twice: the second run must leave no block behind (the
     * first may make a static the failure path needs, once). */
    int enomem = 0;
    for (long at = 1; at <= total; at++)
        for (int again = 0; again < 2; again++) {
            long n;
            live0 = live;
            prepare(realloc_input, step != TASK_CALLS);
            if (step == REALLOCATION || step == REGISTRATION)
                assert_int_equal(pd_sync_point(), PD_OK);
            int rc = armed_step(step, at, &n);
            enomem += rc == PD_ENOMEM;
            check_recovers(at, rc);
            finish();
            if (again && live != live0)
                fail_msg("allocation %ld failed: %+ld blocks not freed after pd_finalize", at, live - live0);
        }
    if (step == SYNC_POINT || step == TASK_CALLS)
        assert_true(enomem > 0); /* failures are reported, not only survived */
    free(buf);
    free(buf2);
    buf = buf2 = NULL;
}

#endif /* UNDER_SANITIZER */

static void test_first_replan(void **state)
{
    (void)state;
#ifdef UNDER_SANITIZER
    skip();
#else
    each_allocation_fails(SYNC_POINT, 0);
#endif
}

/* The same where first touch placed the object (the default): the sync
 * point adopts its fast pages first. */
static void test_first_replan_after_first_touch(void **state)
{
    (void)state;
#ifdef UNDER_SANITIZER
    skip();
#else
    first_touch_start = 1;
    each_allocation_fails(SYNC_POINT, 0);
    first_touch_start = 0;
#endif
}

static void test_replan_after_reallocation(void **state)
{
    (void)state;
#ifdef UNDER_SANITIZER
    skip();
#else
    each_allocation_fails(SYNC_POINT, 1);
#endif
}

static void test_reallocation(void **state)
{
    (void)state;
#ifdef UNDER_SANITIZER
    skip();
#else
    each_allocation_fails(REALLOCATION, 0);
#endif
}

static void test_task_calls(void **state)
{
    (void)state;
#ifdef UNDER_SANITIZER
    skip();
#else
    each_allocation_fails(TASK_CALLS, 0);
#endif
}

static void test_registration(void **state)
{
    (void)state;
#ifdef UNDER_SANITIZER
    skip();
#else
    each_allocation_fails(REGISTRATION, 0);
#endif
}

/* A failed test leaves the runtime initialised: the next one starts clean. */
static int teardown(void **state)
{
    (void)state;
#ifndef UNDER_SANITIZER
    first_touch_start = 0;
#endif
    pd_finalize();
    pd_perf_set_clock(NULL);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_first_replan, teardown),
        cmocka_unit_test_teardown(test_first_replan_after_first_touch, teardown),
        cmocka_unit_test_teardown(test_replan_after_reallocation, teardown),
        cmocka_unit_test_teardown(test_reallocation, teardown),
        cmocka_unit_test_teardown(test_task_calls, teardown),
        cmocka_unit_test_teardown(test_registration, teardown),
    };
    return cmocka_run_group_tests_name("runtime_alloc_fail", tests, NULL, NULL);
}
