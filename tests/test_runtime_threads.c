/* Concurrency of the runtime, for ThreadSanitizer (make check-tsan) as much
 * as for the plain suite: plain pthreads (no OpenMP, so no libgomp
 * annotations are involved) beginning and ending tasks with page sampling,
 * a 1 ms re-arm tick and a sim backend, while another thread queries
 * everything; sample tables replaced while threads fault on their pages;
 * pd_finalize racing a task that begins. Assertions are on results only. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include <cmocka.h>

#include "lib/page_sampler.h"
#include "paddiser.h"

#define MB (1024ul * 1024ul)
#define THREADS 4
#define INSTANCES 6
#define PART (1 * MB) /* 256 pages per thread */

static int teardown(void **state)
{
    (void)state;
    pd_finalize();
    return 0;
}

static struct {
    unsigned char *buf;
    int obj;
    pthread_barrier_t round;
    int errors; /* __atomic */
    int stop;   /* __atomic: the observer's end */
} W;

static void error_if(int bad)
{
    if (bad)
        __atomic_add_fetch(&W.errors, 1, __ATOMIC_RELAXED);
}

static void touch(int me)
{
    volatile unsigned char *p = W.buf + (size_t)me * PART;
    for (size_t i = 0; i < PART; i += 4096)
        p[i]++;
}

static void *worker(void *arg)
{
    int me = (int)(intptr_t)arg;
    for (int inst = 0; inst < INSTANCES; inst++) {
        for (int spell = 0; spell < 2; spell++) { /* two begin/end spells per instance */
            error_if(pd_task_begin(me) != PD_OK);
            touch(me);
            pd_task_profile tp;
            double acc;
            int rc = pd_task_profile_get(me, &tp);
            error_if(rc != PD_OK);
            error_if(pd_object_accesses(W.obj, me, &acc) != PD_OK);
            touch(me);
            error_if(pd_task_end(me) != PD_OK);
        }
        pthread_barrier_wait(&W.round);
        if (me == 0)
            error_if(pd_sync_point() != PD_OK);
        pthread_barrier_wait(&W.round);
    }
    return NULL;
}

/* Queries everything while the tasks run and the plans change. */
static void *observer(void *arg)
{
    (void)arg;
    int tiers[64];
    while (!__atomic_load_n(&W.stop, __ATOMIC_ACQUIRE)) {
        pd_profile_info info;
        pd_task_plan plan[THREADS];
        double makespan, acc;
        error_if(pd_profile_info_get(&info) != PD_OK);
        error_if(pd_plan_query(plan, THREADS, &makespan) < 0);
        error_if(pd_object_accesses(W.obj, -1, &acc) != PD_OK);
        error_if(pd_object_page_tiers(W.obj, tiers, 64) < 0);
    }
    return NULL;
}

static void test_pthread_tasks_with_ticker_and_queries(void **state)
{
    (void)state;
    setenv("PADDISER_SAMPLE_PERIOD_MS", "1", 1);
    setenv("PADDISER_SAMPLE_BUDGET_PCT", "0", 1); /* every re-arm is due */
    setenv("PADDISER_QUIET", "1", 1);
    W.buf = aligned_alloc(2 * MB, THREADS * PART);
    assert_non_null(W.buf);
    memset(W.buf, 0, THREADS * PART);
    pd_options o;
    pd_options_default(&o);
    o.backend = PD_BACKEND_SIM;
    o.fast_capacity = THREADS * PART / 2; /* half fits: plans move pages */
    assert_int_equal(pd_init(&o), PD_OK);
    W.obj = pd_object_register("parts", W.buf, THREADS * PART, NULL);
    assert_true(W.obj >= 0);
    W.errors = 0;
    W.stop = 0;
    assert_int_equal(pthread_barrier_init(&W.round, NULL, THREADS), 0);
    pthread_t th[THREADS], obs;
    assert_int_equal(pthread_create(&obs, NULL, observer, NULL), 0);
    for (int t = 0; t < THREADS; t++)
        assert_int_equal(pthread_create(&th[t], NULL, worker, (void *)(intptr_t)t), 0);
    for (int t = 0; t < THREADS; t++)
        pthread_join(th[t], NULL);
    __atomic_store_n(&W.stop, 1, __ATOMIC_RELEASE);
    pthread_join(obs, NULL);
    pthread_barrier_destroy(&W.round);
    assert_int_equal(W.errors, 0);

    pd_profile_info info;
    assert_int_equal(pd_profile_info_get(&info), PD_OK);
    assert_int_equal(info.instances, INSTANCES);
    assert_int_equal(info.sampling, 1);
    assert_true(info.sampled_faults > 0);
    for (int t = 0; t < THREADS; t++) {
        pd_task_profile tp;
        assert_int_equal(pd_task_profile_get(t, &tp), PD_OK);
        assert_int_equal(tp.instances, INSTANCES);
    }
    assert_int_equal(pd_finalize(), PD_OK);
    free(W.buf);
    unsetenv("PADDISER_SAMPLE_PERIOD_MS");
    unsetenv("PADDISER_SAMPLE_BUDGET_PCT");
}

/* ---- sampler: tables replaced while threads fault on their pages -------- */

#define SWAP_PAGES 128

static struct {
    unsigned char *buf;
    int stop;    /* __atomic */
    int started; /* __atomic: faulters past their first pass */
} F;

static void *faulter(void *arg)
{
    int slot = (int)(intptr_t)arg;
    pd_sampler_set_thread_task(slot);
    int first = 1;
    while (!__atomic_load_n(&F.stop, __ATOMIC_ACQUIRE)) {
        for (size_t p = (size_t)slot; p < SWAP_PAGES; p += 2) /* its own pages */
            ((volatile unsigned char *)F.buf)[p * 4096] += 1;
        if (first)
            __atomic_add_fetch(&F.started, 1, __ATOMIC_RELEASE);
        first = 0;
    }
    pd_sampler_set_thread_task(PD_SAMPLER_NO_TASK);
    return NULL;
}

static void test_sampler_tables_swapped_while_faulting(void **state)
{
    (void)state;
    pd_sampler_config cfg = {.seed = 3, .period_ms = 1, .budget = -1, .min_per_object = 16};
    assert_int_equal(pd_sampler_start(&cfg), 0);
    F.buf = mmap(NULL, SWAP_PAGES * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(F.buf != MAP_FAILED);
    F.stop = 0;
    F.started = 0;
    pd_sampler_range r[2] = {{F.buf, SWAP_PAGES / 2 * 4096, 0}, {F.buf + SWAP_PAGES / 2 * 4096, SWAP_PAGES / 2 * 4096, 1}};
    assert_int_equal(pd_sampler_set_ranges(r, 2), 0);
    pd_sampler_arm();
    pthread_t th[2];
    for (int t = 0; t < 2; t++)
        assert_int_equal(pthread_create(&th[t], NULL, faulter, (void *)(intptr_t)t), 0);
    /* The rounds race the faulters only once both run: on a loaded machine
     * a new thread may not run before the 50 rounds (a few ms) are over. */
    for (int w = 0; w < 20000 && __atomic_load_n(&F.started, __ATOMIC_ACQUIRE) < 2; w++)
        nanosleep(&(struct timespec){0, 1000000}, NULL); /* up to 20 s: a hang guard */
    assert_int_equal(__atomic_load_n(&F.started, __ATOMIC_ACQUIRE), 2);
    for (int round = 0; round < 50; round++) {
        /* new tables (other seeds' pages), dropped objects, re-arms, reads */
        assert_int_equal(pd_sampler_set_ranges(r, 1 + round % 2), 0);
        pd_sampler_rearm();
        if (round % 5 == 0)
            pd_sampler_drop_object(1);
        pd_sampler_stats st;
        pd_sampler_get_stats(&st);
        (void)pd_sampler_count(0, 0);
        if (round % 10 == 9)
            pd_sampler_reset_counts();
    }
    __atomic_store_n(&F.stop, 1, __ATOMIC_RELEASE);
    for (int t = 0; t < 2; t++)
        pthread_join(th[t], NULL);
    pd_sampler_stats st;
    pd_sampler_get_stats(&st);
    assert_true(st.faults > 0);
    assert_int_equal(st.chained, 0); /* every fault was a sample's */
    pd_sampler_stop();
    munmap(F.buf, SWAP_PAGES * 4096);
}

/* ---- pd_finalize while a task begins on another thread -------------------- */

static void *begin_and_end(void *arg)
{
    (void)arg;
    /* Either before finalize (PD_OK, then PD_ESTATE from end) or after
     * (PD_ESTATE): never a crash, never a race on the task. */
    int rc = pd_task_begin(7);
    error_if(rc != PD_OK && rc != PD_ESTATE);
    rc = pd_task_end(7);
    error_if(rc != PD_OK && rc != PD_ESTATE);
    return NULL;
}

static void test_finalize_races_task_begin(void **state)
{
    (void)state;
    setenv("PADDISER_QUIET", "1", 1);
    W.errors = 0;
    for (int round = 0; round < 20; round++) {
        pd_options o;
        pd_options_default(&o);
        o.backend = PD_BACKEND_NONE;
        o.sampling = 0;
        assert_int_equal(pd_init(&o), PD_OK);
        pthread_t th;
        assert_int_equal(pthread_create(&th, NULL, begin_and_end, NULL), 0);
        int rc = pd_finalize();
        assert_true(rc == PD_OK || rc == PD_ESTATE);
        pthread_join(th, NULL);
    }
    assert_int_equal(W.errors, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_pthread_tasks_with_ticker_and_queries, teardown),
        cmocka_unit_test(test_sampler_tables_swapped_while_faulting),
        cmocka_unit_test_teardown(test_finalize_races_task_begin, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
