/* The profile store's heat (PADDISER_PROFILE_STORE, profile_store.h): a
 * run keeps each task's heat by input; a later run smooths its first
 * instance's counts with the stored heat, and with
 * PADDISER_PROFILE_STORE_THIN=on samples that instance thinly (its spells
 * arm a slice of the samples, not every one), its thin counts weighed as
 * such, so its first profile is still sound. Task times come from a fake
 * clock; the sampler's faults are real (mprotect). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "common/util.h"
#include "lib/page_sampler.h"
#include "lib/perf.h"
#include "lib/runtime_internal.h"
#include "paddiser.h"

#define MB (1024ul * 1024ul)

static double fake_now;
static double fake_clock(void) { return fake_now; }
static unsigned char *buf; /* 16 MB: task 0 reads the first half, task 1 the second */
static char dir[] = "/tmp/pd_heat_store_XXXXXX";
static char path[sizeof dir + 16];

static int setup(void **state)
{
    (void)state;
    buf = aligned_alloc(2 * MB, 16 * MB);
    assert_non_null(buf);
    memset(buf, 0, 16 * MB);
    memcpy(dir, "/tmp/pd_heat_store_XXXXXX", sizeof dir);
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/store.json", dir);
    setenv("PADDISER_MIGRATE_BW", "1e15", 1);
    pd_perf_set_clock(fake_clock);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    pd_finalize();
    pd_perf_set_clock(NULL);
    unsetenv("PADDISER_MIGRATE_BW");
    unsetenv("PADDISER_PROFILE_STORE_THIN");
    unlink(path);
    char lock[sizeof path + 8];
    snprintf(lock, sizeof lock, "%s.lock", path);
    unlink(lock);
    rmdir(dir);
    free(buf);
    buf = NULL;
    return 0;
}

/* A run with the store at `store` ("" for none), the table registered at
 * `size` bytes. */
static void run(const char *store, size_t size)
{
    pd_finalize();
    setenv("PADDISER_PROFILE_STORE", store, 1);
    pd_options o;
    pd_options_default(&o);
    o.backend = PD_BACKEND_SIM;
    o.fast_capacity = 6 * MB;
    assert_int_equal(pd_init(&o), PD_OK);
    unsetenv("PADDISER_PROFILE_STORE");
    pd_access_hint random = {PD_PATTERN_RANDOM, 1, 8, 0};
    assert_int_equal(pd_object_register("table", buf, size, &random), 0);
}

static void sweep(unsigned char *p, size_t len)
{
    for (size_t i = 0; i < len; i += 4096)
        ((volatile unsigned char *)p)[i] += 1;
}

/* Two phases; in each, every task reads its half of the first `size`
 * bytes, task 0 twice as long as task 1 (2 and 1 ms a phase). */
static void instance(size_t size)
{
    for (int phase = 0; phase < 2; phase++)
        for (int task = 0; task < 2; task++) {
            assert_int_equal(pd_task_begin(task), PD_OK);
            sweep(buf + (size_t)task * size / 2, size / 2);
            fake_now += task == 0 ? 0.002 : 0.001;
            assert_int_equal(pd_task_end(task), PD_OK);
        }
    assert_int_equal(pd_sync_point(), PD_OK);
}

static pd_sampler_stats stats(void)
{
    pd_sampler_stats st;
    pd_sampler_get_stats(&st);
    return st;
}

/* Every region of the task's heat lies in its own half, and its object
 * total is not 0. */
static void heat_in_own_half(int id)
{
    rt_task *t = rt_task_find(id);
    assert_non_null(t);
    assert_true(t->nhot > 0);
    for (size_t i = 0; i < t->nhot; i++) {
        double mid = t->hot[i].off_frac + t->hot[i].len_frac / 2;
        if (id == 0)
            assert_true(mid < 0.5);
        else
            assert_true(mid > 0.5);
    }
    assert_true(t->nacc > 0 && t->last_acc[0] > 0);
}

static void test_stored_heat_thins_the_first_instance_and_keeps_its_profile(void **state)
{
    (void)state;
    /* Run A: no store yet, its first instance armed whole. */
    run(path, 16 * MB);
    instance(16 * MB);
    pd_sampler_stats a = stats();
    assert_int_equal(a.spells_thinned, 0);
    assert_true(a.faults > 0);
    instance(16 * MB);
    instance(16 * MB);
    assert_int_equal(pd_finalize(), PD_OK);
    size_t len = 0;
    char *text = pd_read_file(path, &len);
    assert_non_null(text);
    assert_non_null(strstr(text, "\"heat\""));
    assert_non_null(strstr(text, "\"hot\""));
    assert_non_null(strstr(text, "\"wall_s\""));
    free(text);

    /* Run B, the same input, without the thinning asked for: armed whole,
     * its heat the stored one smoothed with its own */
    run(path, 16 * MB);
    instance(16 * MB);
    assert_int_equal(stats().spells_thinned, 0);
    assert_int_equal(rt_task_find(0)->hot_n, 2); /* A's one sampled instance and B's */
    heat_in_own_half(0);
    heat_in_own_half(1);
    assert_int_equal(pd_finalize(), PD_OK);

    /* Run B', asking for it: its first instance thinned to what the stored
     * instance time affords, far fewer faults than A's ... */
    setenv("PADDISER_PROFILE_STORE_THIN", "on", 1);
    run(path, 16 * MB);
    instance(16 * MB);
    pd_sampler_stats b = stats();
    assert_true(b.spells_thinned > 0);
    assert_true(b.max_thinning > 1);
    assert_true(b.faults < a.faults);
    /* ... and the profile as sound: each task's heat in its own half, and
     * the slower task planned the fast memory */
    heat_in_own_half(0);
    heat_in_own_half(1);
    pd_task_plan plan[2];
    double makespan = 0;
    assert_int_equal(pd_plan_query(plan, 2, &makespan), 2);
    assert_true(plan[0].dram_bytes > plan[1].dram_bytes);
    /* B's heat merged into the store, which a run C reads as B read A's */
    assert_int_equal(pd_finalize(), PD_OK);
    run(path, 16 * MB);
    instance(16 * MB);
    assert_true(stats().spells_thinned > 0);
    heat_in_own_half(0);

    /* Without the store the same run arms its first instance whole. */
    run("", 16 * MB);
    instance(16 * MB);
    assert_int_equal(stats().spells_thinned, 0);
}

/* A stored heat belongs to the objects at the sizes it was taken at: a run
 * whose table is another size samples its first instance whole, thinning
 * asked for or not. */
static void test_stored_heat_of_other_sizes_is_not_used(void **state)
{
    (void)state;
    run(path, 16 * MB);
    instance(16 * MB);
    instance(16 * MB);
    assert_int_equal(pd_finalize(), PD_OK);
    setenv("PADDISER_PROFILE_STORE_THIN", "on", 1);
    run(path, 12 * MB);
    instance(12 * MB);
    assert_int_equal(stats().spells_thinned, 0);
    heat_in_own_half(0);
    heat_in_own_half(1);
}

/* A store whose heat does not parse (an object past its totals) is
 * reported and left alone: not read, not written over. */
static void test_bad_heat_leaves_the_store_alone(void **state)
{
    (void)state;
    const char *bad = "{\"format\": \"paddiser-profile-store\", \"version\": 1, \"tasks\": [{\"task\": 0, "
                      "\"inputs\": [], \"heat\": [{\"input\": \"00000000000000ab\", \"n\": 1, \"wall_s\": 0.1, "
                      "\"acc\": [1], \"hot\": [[3, 0, 0.5, 1, 1, 1]]}]}]}\n";
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(bad, f);
    fclose(f);
    setenv("PADDISER_PROFILE_STORE_THIN", "on", 1);
    run(path, 16 * MB);
    instance(16 * MB);
    assert_int_equal(stats().spells_thinned, 0);
    instance(16 * MB);
    assert_int_equal(pd_finalize(), PD_OK);
    size_t len = 0;
    char *text = pd_read_file(path, &len);
    assert_non_null(text);
    assert_string_equal(text, bad);
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_stored_heat_thins_the_first_instance_and_keeps_its_profile, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_stored_heat_of_other_sizes_is_not_used, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_heat_leaves_the_store_alone, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
