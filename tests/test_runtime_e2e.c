/* End to end through the runtime with the simulated backend: a base
 * instance where task 1 does much more memory work than task 0, then the
 * plan must give task 1 more fast memory, the sim backend must hold exactly
 * the planned hot pages within capacity, and a second instance (resized
 * input) re-plans and writes the per-task CSV. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "common/csv.h"
#include "lib/perf.h"
#include "lib/runtime_internal.h"
#include "paddiser.h"

#define MB (1024ul * 1024ul)

static void sweep(unsigned char *p, size_t len, int passes)
{
    for (int k = 0; k < passes; k++)
        for (size_t i = 0; i < len; i += 64)
            ((volatile unsigned char *)p)[i] += 1;
}

/* Task durations come from a fake clock that the work advances, so the
 * planner's input does not depend on how busy the machine is. */
static double fake_now;
static double fake_clock(void) { return fake_now; }

/* Task 0: one pass over 2 MB (1 ms). Task 1: 12 passes over 12 MB (3 ms
 * each), with task boundaries between passes, so its samples count several
 * intervals. */
static void run_instance(unsigned char *buf)
{
    assert_int_equal(pd_task_begin(0), PD_OK);
    sweep(buf, 2 * MB, 1);
    fake_now += 0.001;
    assert_int_equal(pd_task_end(0), PD_OK);
    for (int k = 0; k < 12; k++) {
        assert_int_equal(pd_task_begin(1), PD_OK);
        sweep(buf + 4 * MB, 12 * MB, 1);
        fake_now += 0.003;
        assert_int_equal(pd_task_end(1), PD_OK);
    }
}

static int fast_pages_in(unsigned char *lo, size_t len)
{
    int n = 0;
    for (size_t off = 0; off < len; off += 4096) {
        void *p = lo + off;
        int tier;
        assert_int_equal(rt.backend->query(rt.backend, &p, 1, &tier), 0);
        n += tier == PD_TIER_FAST;
    }
    return n;
}

static void test_skewed_task_gets_more_dram(void **state)
{
    (void)state;
    /* in a private directory: the runtime creates the CSV (with a header),
     * and a name freed in shared /tmp could be taken before it does */
    char csv_dir[] = "/tmp/paddiser_tasks_XXXXXX";
    assert_non_null(mkdtemp(csv_dir));
    char csv_path[sizeof csv_dir + 16];
    snprintf(csv_path, sizeof csv_path, "%s/tasks.csv", csv_dir);
    setenv("PADDISER_TASKS_CSV", csv_path, 1);
    setenv("PADDISER_POLICY", "lb", 1);
    /* m given: the first plan counts its gain whole (with m the prior it
     * counts 18%, docs/runtime.md "gain versus cost", and waits) */
    setenv("PADDISER_MEM_BOUND", "0.5", 1);

    pd_perf_set_clock(fake_clock);
    unsigned char *buf = aligned_alloc(2 * MB, 16 * MB);
    assert_non_null(buf);
    memset(buf, 0, 16 * MB);
    pd_options o;
    pd_options_default(&o);
    o.backend = PD_BACKEND_SIM;
    o.fast_capacity = 6 * MB;
    o.planner = PD_PLANNER_GREEDY;
    assert_int_equal(pd_init(&o), PD_OK);
    pd_access_hint stream = {PD_PATTERN_STREAM, 1, 64, 0};
    int obj = pd_object_register("grid", buf, 16 * MB, &stream);
    assert_true(obj >= 0);
    /* Registered pages stay where first touch put them: the sim backend
     * fills the fast tier in registration order, the object's first 6 MB. */
    assert_int_equal(fast_pages_in(buf, 6 * MB), 6 * MB / 4096);
    assert_int_equal(fast_pages_in(buf + 6 * MB, 10 * MB), 0);

    run_instance(buf);
    assert_int_equal(pd_sync_point(), PD_OK);

    pd_task_profile p0, p1;
    assert_int_equal(pd_task_profile_get(0, &p0), PD_OK);
    assert_int_equal(pd_task_profile_get(1, &p1), PD_OK);
    assert_true(p1.accesses > p0.accesses);
    assert_float_equal(p0.last_time, 0.001, 1e-12);
    assert_float_equal(p1.last_time, 0.036, 1e-12);

    pd_task_plan plan[4];
    double makespan = 0;
    assert_int_equal(pd_plan_query(plan, 4, &makespan), 2);
    const pd_task_plan *t0 = plan[0].task == 0 ? &plan[0] : &plan[1];
    const pd_task_plan *t1 = plan[0].task == 1 ? &plan[0] : &plan[1];
    assert_int_equal(t0->task, 0);
    assert_int_equal(t1->task, 1);
    assert_true(t1->dram_bytes > t0->dram_bytes);
    assert_true(t1->dram_share > t0->dram_share);
    assert_true(t0->dram_bytes + t1->dram_bytes <= 6 * MB);
    assert_true(makespan >= t1->predicted_time && makespan >= t0->predicted_time);

    /* The sim backend holds the chosen pages: within capacity, task 1's in
     * its own range, the untouched 2-4 MB range stays slow. */
    pd_profile_info info;
    assert_int_equal(pd_profile_info_get(&info), PD_OK);
    assert_string_equal(info.backend, "sim");
    assert_int_equal(info.fast_capacity, 6 * MB);
    assert_int_equal(info.pages_failed, 0);
    int f0 = fast_pages_in(buf, 2 * MB), fgap = fast_pages_in(buf + 2 * MB, 2 * MB);
    int f1 = fast_pages_in(buf + 4 * MB, 12 * MB);
    assert_int_equal(fgap, 0);
    assert_int_equal((size_t)f0 * 4096, t0->dram_bytes);
    assert_int_equal((size_t)f1 * 4096, t1->dram_bytes);
    assert_true(rt.backend->fast_free(rt.backend) == 6 * MB - (size_t)(f0 + f1) * 4096);

    /* Instance 2: the input shrinks to half; the estimate follows (Eq. 1). */
    assert_int_equal(pd_object_update(obj, buf, 8 * MB), PD_OK);
    pd_task_plan replanned[4];
    assert_int_equal(pd_plan_query(replanned, 4, NULL), 2);
    for (int i = 0; i < 2; i++) {
        int same = replanned[i].task == plan[0].task ? 0 : 1;
        assert_true(replanned[i].predicted_time < plan[same].predicted_time);
    }
    assert_int_equal(pd_task_begin(0), PD_OK);
    sweep(buf, 2 * MB, 1);
    fake_now += 0.001;
    assert_int_equal(pd_task_end(0), PD_OK);
    assert_int_equal(pd_task_begin(1), PD_OK);
    sweep(buf + 4 * MB, 4 * MB, 3);
    fake_now += 0.012;
    assert_int_equal(pd_task_end(1), PD_OK);
    assert_int_equal(pd_sync_point(), PD_OK);
    assert_int_equal(pd_task_profile_get(1, &p1), PD_OK);
    assert_int_equal(p1.instances, 2);
    /* A last instance without a sync point still reaches the CSV. */
    assert_int_equal(pd_task_begin(0), PD_OK);
    fake_now += 0.005;
    assert_int_equal(pd_task_end(0), PD_OK);
    assert_int_equal(pd_finalize(), PD_OK);

    char err[256];
    pd_csv *csv = pd_csv_load(csv_path, err, sizeof err);
    assert_non_null(csv);
    const char *cols[] = {"policy", "task", "time_s", "dram_share", "dram_bytes"};
    assert_int_equal(csv->header.nfields, 5);
    for (int i = 0; i < 5; i++)
        assert_string_equal(csv->header.fields[i], cols[i]);
    assert_int_equal(csv->nrows, 2);
    for (size_t r = 0; r < 2; r++) {
        assert_string_equal(pd_csv_get(csv, r, 0), "lb");
        double want = atoi(pd_csv_get(csv, r, 1)) == 0 ? 0.005 : 0.012;
        assert_float_equal(atof(pd_csv_get(csv, r, 2)), want, 1e-9);
        assert_true(atof(pd_csv_get(csv, r, 3)) >= 0 && atof(pd_csv_get(csv, r, 3)) <= 1);
    }
    pd_csv_free(csv);
    assert_int_equal(unlink(csv_path), 0);
    assert_int_equal(rmdir(csv_dir), 0);
    unsetenv("PADDISER_TASKS_CSV");
    unsetenv("PADDISER_POLICY");
    unsetenv("PADDISER_MEM_BOUND");
    pd_perf_set_clock(NULL);
    free(buf);
}

static void test_no_sampling_still_plans(void **state)
{
    (void)state;
    static unsigned char buf[4 * MB] __attribute__((aligned(4096)));
    pd_options o;
    pd_options_default(&o);
    o.backend = PD_BACKEND_SIM;
    o.fast_capacity = 2 * MB;
    o.sampling = 0;
    assert_int_equal(pd_init(&o), PD_OK);
    assert_true(pd_object_register("b", buf, sizeof buf, NULL) >= 0);
    for (int t = 0; t < 2; t++) {
        assert_int_equal(pd_task_begin(t), PD_OK);
        sweep(buf + (size_t)t * 2 * MB, 2 * MB, 1);
        assert_int_equal(pd_task_end(t), PD_OK);
    }
    assert_int_equal(pd_sync_point(), PD_OK);
    pd_task_plan plan[2];
    assert_int_equal(pd_plan_query(plan, 2, NULL), 2);
    assert_true(plan[0].dram_bytes + plan[1].dram_bytes <= 2 * MB);
    /* Without samples the input scale is the registered bytes: a quarter of
     * the object, a quarter of the predicted DRAM-only time. */
    assert_int_equal(pd_object_update(0, buf, sizeof buf / 4), PD_OK);
    pd_task_plan small[2];
    assert_int_equal(pd_plan_query(small, 2, NULL), 2);
    for (int i = 0; i < 2; i++)
        assert_true(small[i].predicted_time < 0.3 * plan[i].predicted_time ||
                    small[i].predicted_time < 1e-9);
    assert_int_equal(pd_finalize(), PD_OK);
}

/* The last sync point moved every planned page, the two tasks' plan fits
 * the 4 MB fast tier, and exactly the planned pages are fast: nothing
 * stale holds capacity. */
static void plan_holds_the_fast_tier(void)
{
    pd_profile_info info;
    assert_int_equal(pd_profile_info_get(&info), PD_OK);
    assert_int_equal(info.pages_failed, 0);
    pd_task_plan plan[2];
    assert_int_equal(pd_plan_query(plan, 2, NULL), 2);
    size_t planned = plan[0].dram_bytes + plan[1].dram_bytes;
    assert_true(planned > 0 && planned <= 4 * MB);
    assert_int_equal(rt.backend->fast_free(rt.backend), 4 * MB - planned);
}

/* The next input is smaller (the object is resized before the sync point,
 * the order that plans once per instance): fast pages the object no longer
 * covers are given back, so the new plan's pages all fit. */
static void test_shrink_releases_fast_pages(void **state)
{
    (void)state;
    pd_perf_set_clock(fake_clock);
    unsigned char *buf = aligned_alloc(2 * MB, 16 * MB);
    assert_non_null(buf);
    memset(buf, 0, 16 * MB);
    pd_options o;
    pd_options_default(&o);
    o.backend = PD_BACKEND_SIM;
    o.fast_capacity = 4 * MB;
    assert_int_equal(pd_init(&o), PD_OK);
    int id = pd_object_register("b", buf, 16 * MB, NULL);
    assert_true(id >= 0);
    for (int it = 0; it < 3; it++) {
        size_t size = (16 * MB) >> it, half = size / 2;
        for (int t = 0; t < 2; t++) {
            assert_int_equal(pd_task_begin(t), PD_OK);
            sweep(buf + (size_t)t * half, half, 1);
            fake_now += t ? 0.004 : 0.001; /* task 1 is the slow one */
            assert_int_equal(pd_task_end(t), PD_OK);
        }
        assert_int_equal(pd_object_update(id, buf, half), PD_OK);
        assert_int_equal(pd_sync_point(), PD_OK);
        plan_holds_the_fast_tier();
    }
    assert_int_equal(pd_finalize(), PD_OK);
    pd_perf_set_clock(NULL);
    free(buf);
}

/* Skewed instances over the 16 MB at buf (task 1 the slow one), each
 * followed by a sync point. */
static void skewed_instances(unsigned char *buf, int count)
{
    for (int it = 0; it < count; it++) {
        for (int t = 0; t < 2; t++) {
            assert_int_equal(pd_task_begin(t), PD_OK);
            sweep(buf + (size_t)t * 8 * MB, 8 * MB, 1);
            fake_now += t ? 0.004 : 0.001;
            assert_int_equal(pd_task_end(t), PD_OK);
        }
        assert_int_equal(pd_sync_point(), PD_OK);
    }
}

/* The runtime on the fake clock, the sim backend with 4 MB fast. */
static void start_sim_4mb(void)
{
    pd_perf_set_clock(fake_clock);
    pd_options o;
    pd_options_default(&o);
    o.backend = PD_BACKEND_SIM;
    o.fast_capacity = 4 * MB;
    assert_int_equal(pd_init(&o), PD_OK);
}

/* 16 MB registered as "data", written once. */
static unsigned char *data_object(void)
{
    unsigned char *buf = aligned_alloc(4096, 16 * MB);
    assert_non_null(buf);
    memset(buf, 0, 16 * MB);
    assert_true(pd_object_register("data", buf, 16 * MB, NULL) >= 0);
    return buf;
}

/* A freed temporary gives the sim tier's capacity back: a program's first
 * object took the whole fast tier at its first touch and was freed (a
 * graph builder's arrays), and the plan for the data that came after it
 * must still fit (before, every promotion failed with ENOMEM). */
static void test_freed_object_gives_capacity_back(void **state)
{
    (void)state;
    start_sim_4mb();
    unsigned char *tmp = aligned_alloc(4096, 8 * MB);
    assert_non_null(tmp);
    int tid = pd_object_register("builder", tmp, 8 * MB, NULL);
    assert_true(tid >= 0);
    assert_int_equal(rt.backend->fast_free(rt.backend), 0); /* first touch took it all */
    assert_int_equal(pd_object_unregister(tid), PD_OK);
    free(tmp);
    assert_int_equal(rt.backend->fast_free(rt.backend), 4 * MB);

    unsigned char *buf = data_object();
    skewed_instances(buf, 2);
    plan_holds_the_fast_tier();
    assert_int_equal(pd_finalize(), PD_OK);
    pd_perf_set_clock(NULL);
    free(buf);
}

/* Moves the fast tier refuses (someone else's memory fills it): the tasks
 * run where their pages are, so the plan query says the share they have,
 * none, and predicts their time at it, not at the plan's share. */
static void test_refused_moves_predict_what_is_placed(void **state)
{
    (void)state;
    start_sim_4mb();
    /* the sim tier's pages are addresses: these are never registered */
    pd_migrate_stats st = {0};
    assert_int_equal(rt.backend->place(rt.backend, (void *)(uintptr_t)0x100000000000ull, 4 * MB, PD_TIER_FAST, &st), 0);
    assert_int_equal(rt.backend->fast_free(rt.backend), 0);

    unsigned char *buf = data_object();
    skewed_instances(buf, 2);
    pd_profile_info info;
    assert_int_equal(pd_profile_info_get(&info), PD_OK);
    assert_true(info.pages_failed > 0);
    assert_int_equal(info.pages_moved, 0);
    pd_task_plan plan[2];
    double makespan = 0;
    assert_int_equal(pd_plan_query(plan, 2, &makespan), 2);
    double slowest = 0;
    for (int i = 0; i < 2; i++) {
        assert_true(plan[i].dram_share < 1e-9);
        assert_int_equal(plan[i].dram_bytes, 0);
        slowest = plan[i].predicted_time > slowest ? plan[i].predicted_time : slowest;
    }
    assert_float_equal(makespan, slowest, 1e-12);
    assert_int_equal(pd_finalize(), PD_OK);
    pd_perf_set_clock(NULL);
    free(buf);
}

static int teardown(void **state)
{
    (void)state;
    pd_perf_set_clock(NULL);
    pd_finalize();
    return 0;
}

int main(void)
{
    setenv("PADDISER_QUIET", "1", 1);
    /* These tests are about what a plan holds: moves cost nothing here, so
     * the gain-versus-cost rule (test_runtime_migrate_rule.c) applies every
     * plan that gains at all. */
    setenv("PADDISER_MIGRATE_BW", "1e15", 1);
    /* Their instances take no real time (a fake clock times the tasks), so
     * a spell's slice of the samples (PADDISER_SAMPLE_SPELL_PCT, which
     * follows the real clock) would be the thinnest: every spell arms
     * every sample, and the pages each task touched are all seen. */
    setenv("PADDISER_SAMPLE_SPELL_PCT", "0", 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_skewed_task_gets_more_dram, teardown),
        cmocka_unit_test_teardown(test_no_sampling_still_plans, teardown),
        cmocka_unit_test_teardown(test_shrink_releases_fast_pages, teardown),
        cmocka_unit_test_teardown(test_freed_object_gives_capacity_back, teardown),
        cmocka_unit_test_teardown(test_refused_moves_predict_what_is_placed, teardown),
    };
    return cmocka_run_group_tests_name("runtime_e2e", tests, NULL, NULL);
}
