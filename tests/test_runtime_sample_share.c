/* Page sampling under the long-run share (PADDISER_SAMPLE_SHARE_PCT): whole
 * instances are sampled while their measured cost fits the share of the
 * program's time; a skipped instance protects no page, keeps the last
 * sampled profile, and so plans and moves nothing new when neither the
 * input nor the times change. Task times come from a fake clock (the same
 * every instance); sampling costs are real and instances last
 * microseconds, so after the first sampled instance a 1% share is spent.
 * Where a test needs the time between instances, or instances of a given
 * length, the sampler's clock is a fake one too (pd_sampler_set_clock). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "lib/page_sampler.h"
#include "lib/perf.h"
#include "lib/runtime_internal.h"
#include "paddiser.h"

#define MB (1024ul * 1024ul)

static double fake_now;
static double fake_clock(void) { return fake_now; }
/* The sampler's own clock, where a test sets one (pd_sampler_set_clock):
 * each reading 1 us after the last, from a second past the real clock
 * (what the sampler read before stays behind it). */
static _Atomic uint64_t sampler_ns;
static uint64_t sampler_clock(void) { return atomic_fetch_add(&sampler_ns, 1000) + 1000; }
static void sampler_clock_on(void)
{
    atomic_store(&sampler_ns, (uint64_t)((pd_monotonic() + 1) * 1e9));
    pd_sampler_set_clock(sampler_clock);
}
static unsigned char *buf;

static void sweep(unsigned char *p, size_t len)
{
    for (size_t i = 0; i < len; i += 4096)
        ((volatile unsigned char *)p)[i] += 1;
}

static void start(const char *share_pct)
{
    setenv("PADDISER_SAMPLE_SHARE_PCT", share_pct, 1);
    setenv("PADDISER_MIGRATE_BW", "1e15", 1);
    pd_perf_set_clock(fake_clock);
    buf = aligned_alloc(2 * MB, 16 * MB);
    assert_non_null(buf);
    memset(buf, 0, 16 * MB);
    pd_options o;
    pd_options_default(&o);
    o.backend = PD_BACKEND_SIM;
    o.fast_capacity = 6 * MB;
    assert_int_equal(pd_init(&o), PD_OK);
    pd_access_hint random = {PD_PATTERN_RANDOM, 1, 8, 0};
    assert_int_equal(pd_object_register("table", buf, 16 * MB, &random), 0);
}

static int teardown(void **state)
{
    (void)state;
    pd_finalize();
    pd_perf_set_clock(NULL);
    pd_sampler_set_clock(NULL);
    unsetenv("PADDISER_SAMPLE_SHARE_PCT");
    unsetenv("PADDISER_MIGRATE_BW");
    unsetenv("PADDISER_SAMPLE_ALLOWANCE_MS");
    unsetenv("PADDISER_SAMPLE_PERIOD_MS");
    free(buf);
    buf = NULL;
    return 0;
}

/* Microseconds an instance lasts on top of its sweeps, added to the
 * sampler's fake clock (sampler_clock_on: set it first) in its first task's
 * first phase (the long-run share counts instances' time from their first
 * task); 0: as long as its sweeps. */
static uint64_t instance_us;
/* Task seconds (fake clock) a sampled instance's first task takes on top
 * of its work: the sampler's wall cost beyond what it measures. */
static double sampled_extra_s;

/* One instance of two tasks, each touching its half in two phases; the
 * first task's work is twice the second's (times from the fake clock). */
static void instance_slowed(double slow)
{
    for (int phase = 0; phase < 2; phase++)
        for (int task = 0; task < 2; task++) {
            assert_int_equal(pd_task_begin(task), PD_OK);
            if (phase == 0 && task == 0) {
                if (instance_us)
                    atomic_fetch_add(&sampler_ns, instance_us * 1000);
                if (rt.inst_sampled)
                    fake_now += sampled_extra_s;
            }
            sweep(buf + (size_t)task * 8 * MB, 8 * MB);
            fake_now += (task == 0 ? 0.02 : 0.01) * slow;
            assert_int_equal(pd_task_end(task), PD_OK);
        }
    assert_int_equal(pd_sync_point(), PD_OK);
}

static void instance(void) { instance_slowed(1.0); }

/* The same with each task's time per phase given, without its sync point. */
static void instance_tasks(double t0, double t1)
{
    for (int phase = 0; phase < 2; phase++)
        for (int task = 0; task < 2; task++) {
            assert_int_equal(pd_task_begin(task), PD_OK);
            sweep(buf + (size_t)task * 8 * MB, 8 * MB);
            fake_now += task == 0 ? t0 : t1;
            assert_int_equal(pd_task_end(task), PD_OK);
        }
}

static void instance_times(double t0, double t1)
{
    instance_tasks(t0, t1);
    assert_int_equal(pd_sync_point(), PD_OK);
}

static void test_skipped_instances_keep_profile_and_move_nothing(void **state)
{
    (void)state;
    start("1");
    pd_profile_info info;
    unsigned long long faults_after_first = 0;
    for (int i = 0; i < 12; i++) {
        instance();
        assert_int_equal(pd_profile_info_get(&info), PD_OK);
        if (i == 0) {
            assert_int_equal(info.instances_sampled, 1);
            assert_true(info.sampled_faults > 0); /* both phases, both tasks */
            faults_after_first = info.sampled_faults;
        } else {
            /* skipped: nothing armed, nothing counted, nothing moved */
            assert_int_equal(info.instances_sampled, 1);
            assert_int_equal(info.sampled_faults, faults_after_first);
            if (i >= 4)
                assert_int_equal(info.bytes_moved, 0);
        }
    }
    assert_true(info.sampling_cost_s > 0);
    assert_true(info.sampling_wall_s > 0);
    /* The profile kept from the sampled instance still plans: the slower
     * task gets the fast memory. */
    pd_task_plan plan[2];
    double makespan = 0;
    assert_int_equal(pd_plan_query(plan, 2, &makespan), 2);
    assert_true(isfinite(makespan) && makespan > 0);
    assert_true(plan[0].dram_bytes > plan[1].dram_bytes);
}

/* The sampled instance's time carries the sampler's cost (2.5x on the
 * phases example; here it is made 3x): once an unsampled instance ran, the
 * predictions forget it, and the next instance is predicted at the
 * unsampled time (0.04 s for task 0), not pulled towards 0.12 s. */
static void test_sampled_instance_time_is_left_out(void **state)
{
    (void)state;
    start("1");
    instance_slowed(3.0);
    instance();
    pd_task_plan plan[2];
    double makespan = 0;
    assert_int_equal(pd_plan_query(plan, 2, &makespan), 2);
    assert_float_equal(makespan, 0.04, 0.004);
    pd_profile_info info;
    assert_int_equal(pd_profile_info_get(&info), PD_OK);
    assert_int_equal(info.instances_sampled, 1);
}

/* The sampler's clock for a whole test: 1 us a reading, no ticker thread
 * (its readings would move the clock by when it gets the CPU), so what a
 * sampled instance costs is a count of readings, not this machine's load. */
static void sampler_clock_whole_test(void)
{
    setenv("PADDISER_SAMPLE_PERIOD_MS", "0", 1);
    sampler_clock_on();
}

/* Where the share affords every instance (50% of 50 ms here), all are sampled
 * alike and all count: a shift in the times is followed, not frozen at the
 * first instance's. */
static double shifted_run(const char *share_pct)
{
    sampler_clock_whole_test();
    start(share_pct);
    instance_us = 50000; /* 50 ms an instance: a sampled one costs a few readings a fault */
    for (int i = 0; i < 6; i++)
        instance_slowed(i < 2 ? 1.0 : 2.0);
    instance_us = 0;
    pd_profile_info info;
    assert_int_equal(pd_profile_info_get(&info), PD_OK);
    assert_int_equal(info.instances_sampled, 6);
    pd_task_plan plan[2];
    double makespan = 0;
    assert_int_equal(pd_plan_query(plan, 2, &makespan), 2);
    teardown(NULL);
    return makespan;
}

static void test_all_sampled_instances_count(void **state)
{
    (void)state;
    double none_perturbed = shifted_run("0"), all_perturbed = shifted_run("50");
    assert_true(none_perturbed > 0.06); /* the shifted time, not the first's */
    /* the same shifted prediction (the sampled heat differs a little) */
    assert_float_equal(all_perturbed, none_perturbed, 0.1 * none_perturbed);
}

/* What the program does outside its tasks between instances (here 0.25 s
 * of setting up the next input, four times: twice after the last task's end
 * and before the sync point, as the phases example does, twice after the
 * sync point) is no instance's time: the share stays a share of the
 * instances' time, and no gap lets it sample a later instance whole at that
 * instance's cost. The gaps are 0.25 s on the sampler's clock (a fake one
 * from the second instance on; its instances last a few readings of it),
 * against a first instance that cost real faults: 2% of the gaps, 20 ms,
 * would afford it again. */
static void test_time_between_instances_is_not_theirs(void **state)
{
    (void)state;
    start("2");
    instance();
    sampler_clock_on();
    pd_profile_info info;
    for (int i = 0; i < 4; i++) {
        if (i % 2)
            atomic_fetch_add(&sampler_ns, 250000000);
        instance_tasks(0.02, 0.01);
        if (i % 2 == 0)
            atomic_fetch_add(&sampler_ns, 250000000);
        assert_int_equal(pd_sync_point(), PD_OK);
        assert_int_equal(pd_profile_info_get(&info), PD_OK);
        assert_int_equal(info.instances_sampled, 1);
    }
    assert_true(info.sampling_wall_s > 0);
    assert_true(info.sampling_wall_s < 0.25); /* five short instances, no gap */
}

/* The first instance's re-arm passes while task 0 sweeps its half eight
 * times in one spell, a tick (pd_sampler_rearm_if_due, what the ticker
 * thread calls every period) after each sweep: the ticker itself is off
 * (period 0), so the count does not depend on when a thread gets the CPU;
 * allowance_ms NULL: the default. */
static uint64_t first_instance_passes(const char *allowance_ms)
{
    if (allowance_ms)
        setenv("PADDISER_SAMPLE_ALLOWANCE_MS", allowance_ms, 1);
    setenv("PADDISER_SAMPLE_PERIOD_MS", "0", 1);
    start("2");
    assert_int_equal(pd_task_begin(0), PD_OK);
    for (int i = 0; i < 8; i++) {
        sweep(buf, 8 * MB);
        pd_sampler_rearm_if_due();
    }
    assert_int_equal(pd_task_end(0), PD_OK);
    pd_sampler_stats st;
    pd_sampler_get_stats(&st);
    teardown(NULL);
    return st.passes;
}

/* No fixed allowance by default (PADDISER_SAMPLE_ALLOWANCE_MS unset): past
 * its first arming pass, the first instance re-arms at the 1% budget alone,
 * each pass waiting 100 times what the last one and its faults cost. With
 * the 20 ms allowance it had until 2026-12-06, every tick re-armed until the
 * instance's sampling had cost 20 ms: here, most of the eight. */
static void test_first_instance_has_no_fixed_allowance(void **state)
{
    (void)state;
    uint64_t none = first_instance_passes(NULL), fixed = first_instance_passes("20");
    assert_true(fixed >= 3);
    assert_true(none < fixed);
}

/* 24 instances of 30 ms (the sampler's fake clock) under a 10% share, each
 * sampled one made 1 s longer in task time than the others (the task
 * clock, fake too): what its plan predicted falls 1 s short, against a
 * measured sampling cost of a few microseconds a fault. Returns how many were sampled; *factor the share's wall
 * factor at the end. PADDISER_SAMPLE_WALL_FACTOR=wall (NULL: unset). */
static unsigned long long wall_run(const char *wall, double *factor)
{
    if (wall)
        setenv("PADDISER_SAMPLE_WALL_FACTOR", wall, 1);
    sampler_clock_whole_test();
    start("10");
    instance_us = 30000;
    sampled_extra_s = 1.0;
    for (int i = 0; i < 24; i++)
        instance();
    instance_us = 0;
    sampled_extra_s = 0;
    pd_sampler_stats st;
    pd_sampler_get_stats(&st);
    *factor = st.wall_factor;
    pd_profile_info info;
    assert_int_equal(pd_profile_info_get(&info), PD_OK);
    teardown(NULL);
    unsetenv("PADDISER_SAMPLE_WALL_FACTOR");
    return info.instances_sampled;
}

/* The share counts what a sampled instance cost the program in wall time,
 * learned from the instances the plan predicted: here far more than the
 * faults and passes measured, so the factor reaches its bound (10) and
 * fewer instances are sampled than on the measured cost alone. */
static void test_share_counts_sampling_wall_cost(void **state)
{
    (void)state;
    double on_factor, off_factor;
    unsigned long long on = wall_run(NULL, &on_factor), off = wall_run("off", &off_factor);
    print_message("sampled %llu with the wall factor, %llu without\n", on, off);
    assert_float_equal(on_factor, PD_SAMPLER_WALL_MAX, 0);
    assert_float_equal(off_factor, 1.0, 0);
    assert_true(on >= 2); /* the first, and one the share chose, whose excess taught the factor */
    assert_true(on < off);
}

/* PADDISER_SAMPLE_SHARE_PCT=0: every instance is sampled. */
static void test_share_zero_samples_every_instance(void **state)
{
    (void)state;
    start("0");
    pd_profile_info info;
    unsigned long long faults = 0;
    for (int i = 0; i < 4; i++) {
        instance();
        assert_int_equal(pd_profile_info_get(&info), PD_OK);
        assert_int_equal(info.instances_sampled, i + 1);
        assert_true(info.sampled_faults > faults);
        faults = info.sampled_faults;
    }
}

/* A sync point whose inputs did not change reuses the last decision
 * instead of redoing the page-level work (rt.last_decision.reused; 2 ms ->
 * 0.07 ms a sync point on the phases example), and gives it up as soon as
 * something it rests on changes: here the times, task 1 becoming the
 * slower one, after which the fast memory goes to task 1. */
static void test_unchanged_decision_reused_until_times_change(void **state)
{
    (void)state;
    start("1");
    pd_profile_info info;
    int reused = 0;
    for (int i = 0; i < 8; i++) {
        instance_times(0.02, 0.01);
        assert_int_equal(pd_profile_info_get(&info), PD_OK);
        if (i >= 4) {
            assert_int_equal(rt.last_decision.reused, 1);
            assert_int_equal(info.bytes_moved, 0);
        }
        reused += rt.last_decision.reused;
    }
    assert_true(reused >= 4);
    pd_task_plan plan[2];
    assert_int_equal(pd_plan_query(plan, 2, NULL), 2);
    const pd_task_plan *t0 = plan[0].task == 0 ? &plan[0] : &plan[1];
    const pd_task_plan *t1 = plan[0].task == 1 ? &plan[0] : &plan[1];
    assert_true(t0->dram_bytes > t1->dram_bytes);
    int fresh = 0;
    unsigned long long moved = 0;
    for (int i = 0; i < 4; i++) {
        instance_times(0.01, 0.08);
        assert_int_equal(pd_profile_info_get(&info), PD_OK);
        fresh += !rt.last_decision.reused;
        moved += info.bytes_moved;
    }
    assert_true(fresh >= 1);
    assert_true(moved > 0);
    assert_int_equal(pd_plan_query(plan, 2, NULL), 2);
    t0 = plan[0].task == 0 ? &plan[0] : &plan[1];
    t1 = plan[0].task == 1 ? &plan[0] : &plan[1];
    assert_true(t1->dram_bytes > t0->dram_bytes);
}

/* An object that changes (a new input) voids the stored decision: the
 * plan for it is decided afresh. */
static void test_object_change_voids_reused_decision(void **state)
{
    (void)state;
    start("1");
    for (int i = 0; i < 6; i++)
        instance();
    assert_int_equal(rt.last_decision.reused, 1);
    assert_int_equal(pd_object_update(0, buf, 12 * MB), PD_OK);
    pd_task_plan plan[2];
    assert_int_equal(pd_plan_query(plan, 2, NULL), 2); /* plans the new input */
    assert_int_equal(rt.last_decision.reused, 0);
}

int main(void)
{
    setenv("PADDISER_QUIET", "1", 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_skipped_instances_keep_profile_and_move_nothing, teardown),
        cmocka_unit_test_teardown(test_sampled_instance_time_is_left_out, teardown),
        cmocka_unit_test(test_all_sampled_instances_count),
        cmocka_unit_test_teardown(test_time_between_instances_is_not_theirs, teardown),
        cmocka_unit_test_teardown(test_share_zero_samples_every_instance, teardown),
        cmocka_unit_test_teardown(test_first_instance_has_no_fixed_allowance, teardown),
        cmocka_unit_test_teardown(test_unchanged_decision_reused_until_times_change, teardown),
        cmocka_unit_test_teardown(test_object_change_voids_reused_decision, teardown),
        cmocka_unit_test(test_share_counts_sampling_wall_cost),
    };
    return cmocka_run_group_tests_name("runtime_sample_share", tests, NULL, NULL);
}
