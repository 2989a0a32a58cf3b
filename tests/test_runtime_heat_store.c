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
#include <jansson.h>

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
static void instance_of(size_t size, int ntasks)
{
    for (int phase = 0; phase < 2; phase++)
        for (int task = 0; task < ntasks; task++) {
            assert_int_equal(pd_task_begin(task), PD_OK);
            if (task < 2)
                sweep(buf + (size_t)task * size / 2, size / 2);
            else /* a third task (instance3): the first quarter */
                sweep(buf, size / 4);
            fake_now += task == 0 ? 0.002 : 0.001;
            assert_int_equal(pd_task_end(task), PD_OK);
        }
    assert_int_equal(pd_sync_point(), PD_OK);
}

static void instance(size_t size) { instance_of(size, 2); }

/* A run of three instances of instance() whose heat the store then holds. */
static void fill_store(size_t size)
{
    run(path, size);
    for (int i = 0; i < 3; i++)
        instance(size);
    assert_int_equal(pd_finalize(), PD_OK);
}

static pd_sampler_stats stats(void)
{
    pd_sampler_stats st;
    pd_sampler_get_stats(&st);
    return st;
}

/* Task `id`'s stored heat, as compact JSON text (to free). */
/* The store file, parsed (to json_decref), and task `id`'s "heat" in it. */
static json_t *load_store(int id, json_t **heat)
{
    json_error_t jerr;
    json_t *doc = json_load_file(path, 0, &jerr);
    assert_non_null(doc);
    json_t *tasks = json_object_get(doc, "tasks");
    *heat = NULL;
    for (size_t i = 0; i < json_array_size(tasks); i++)
        if (json_integer_value(json_object_get(json_array_get(tasks, i), "task")) == id)
            *heat = json_object_get(json_array_get(tasks, i), "heat");
    assert_non_null(*heat);
    return doc;
}

static char *stored_heat_text(int id)
{
    json_t *heat, *doc = load_store(id, &heat);
    char *text = json_dumps(heat, JSON_COMPACT);
    assert_non_null(text);
    json_decref(doc);
    return text;
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
    char *heat_b = stored_heat_text(0);

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
    /* B' ran no whole instance: its heat (the stored one smoothed with a
     * thin slice's, which is biased) is not written; the store keeps B's,
     * which a run C reads and thins by as B' did */
    assert_int_equal(pd_finalize(), PD_OK);
    char *heat_b2 = stored_heat_text(0);
    assert_string_equal(heat_b2, heat_b);
    free(heat_b);
    free(heat_b2);
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

/* No two of the task's regions are one region (regions of one heat never
 * overlap). */
static void no_region_twice(int id)
{
    rt_task *t = rt_task_find(id);
    assert_non_null(t);
    assert_true(t->nhot > 0);
    for (size_t i = 0; i < t->nhot; i++)
        for (size_t j = i + 1; j < t->nhot; j++)
            if (t->hot[i].object == t->hot[j].object)
                assert_true(fabs(t->hot[i].off_frac - t->hot[j].off_frac) >=
                            0.5 * fmin(t->hot[i].len_frac, t->hot[j].len_frac));
}

/* Task 0's stored regions of its first stored input: their count, after
 * `edit` (when given) rewrote them in the file. */
static size_t stored_rows(void (*edit)(json_t *hot))
{
    json_t *heat, *doc = load_store(0, &heat);
    json_t *hot = json_object_get(json_array_get(heat, 0), "hot");
    assert_non_null(hot);
    size_t n = json_array_size(hot);
    if (edit) {
        edit(hot);
        assert_int_equal(json_dump_file(doc, path, JSON_COMPACT), 0);
    }
    json_decref(doc);
    return n;
}

/* What a store written before regions were matched within half their
 * length holds: beside each region, a faded copy whose offset differs in
 * the 11th digit. */
static void add_faded_copies(json_t *hot)
{
    size_t n = json_array_size(hot);
    for (size_t i = 0; i < n; i++) {
        json_t *r = json_array_get(hot, i);
        json_array_append_new(hot, json_pack("[I,f,f,i,f,f]", json_integer_value(json_array_get(r, 0)),
                                             json_number_value(json_array_get(r, 1)) + 3e-11,
                                             json_number_value(json_array_get(r, 2)), 0,
                                             json_number_value(json_array_get(r, 4)) / 4,
                                             json_number_value(json_array_get(r, 5)) / 4));
    }
}

/* A stored region is the same region when a later run samples it again,
 * although the store keeps its offset to 10 digits (a 12 MB table's pages
 * are not decimal fractions of it): the later heat holds it once, and runs
 * after runs do not pile copies of it up in the store. A store that holds
 * such copies is read with each region once. */
static void test_stored_regions_are_matched_not_copied(void **state)
{
    (void)state;
    fill_store(12 * MB);
    size_t rows_a = stored_rows(NULL);
    assert_true(rows_a > 0);
    for (int r = 0; r < 3; r++) {
        run(path, 12 * MB);
        instance(12 * MB);
        no_region_twice(0);
        no_region_twice(1);
        assert_int_equal(rt_task_find(0)->hot_n, 2 + r);
        instance(12 * MB);
        assert_int_equal(pd_finalize(), PD_OK);
        /* the same sweep each run: the same regions, not more */
        assert_int_equal(stored_rows(NULL), rows_a);
    }
    assert_int_equal(stored_rows(add_faded_copies), rows_a);
    run(path, 12 * MB);
    instance(12 * MB);
    no_region_twice(0);
    assert_int_equal(pd_finalize(), PD_OK);
    assert_int_equal(stored_rows(NULL), rows_a);
}

/* The two tasks of instance(), and a third that reads the first quarter. */
static void instance3(size_t size) { instance_of(size, 3); }

/* A run with a task the store does not know (one thread more than the
 * stored run): the thinned first instance gives that task no profile (a
 * thin slice alone is none), the next instance is sampled whole, and then
 * the task has its heat; the known tasks keep theirs throughout. */
static void test_task_unknown_to_the_store_is_sampled_whole_next(void **state)
{
    (void)state;
    fill_store(16 * MB);

    setenv("PADDISER_PROFILE_STORE_THIN", "on", 1);
    run(path, 16 * MB);
    instance3(16 * MB);
    uint64_t thinned = stats().spells_thinned;
    assert_true(thinned > 0);
    heat_in_own_half(0);
    heat_in_own_half(1);
    rt_task *t2 = rt_task_find(2);
    assert_non_null(t2);
    assert_int_equal(t2->thin_blind, 1);
    assert_int_equal(t2->nhot, 0);
    assert_int_equal(t2->have_base, 0);

    instance3(16 * MB); /* sampled, and whole: task 2 has no stored heat */
    assert_int_equal(stats().spells_thinned, thinned);
    t2 = rt_task_find(2);
    assert_int_equal(t2->thin_blind, 0);
    assert_true(t2->nhot > 0);
    assert_int_equal(t2->have_base, 1);
    for (size_t i = 0; i < t2->nhot; i++)
        assert_true(t2->hot[i].off_frac + t2->hot[i].len_frac <= 0.25 + 1e-9);
    assert_int_equal(pd_finalize(), PD_OK);
    free(stored_heat_text(2)); /* its whole instance's heat was stored */
}

static const rt_hot *region_at(const rt_task *t, double off)
{
    for (size_t i = 0; i < t->nhot; i++)
        if (t->hot[i].object == 0 && fabs(t->hot[i].off_frac - off) < 1e-9)
            return &t->hot[i];
    return NULL;
}

/* A thinned instance's counts (each spell arms 1 in k samples; here k =
 * 64) only blend with the heat before, at their weight: a hot region it
 * did not arm is no sign that the region cooled, and one slice's hit,
 * k times a spell's intervals, no sign that it heated. (Taken as Poisson
 * counts, the first was dropped and the second replaced the heat before.) */
static void test_thinned_counts_blend_at_their_weight(void **state)
{
    (void)state;
    rt_task t;
    memset(&t, 0, sizeof t);
    const uint64_t input = 0xabc;
    double last = 1280, before = 1020;
    t.nacc = 1;
    t.last_acc = &last;
    t.hot_acc = calloc(1, sizeof *t.hot_acc);
    assert_non_null(t.hot_acc);
    t.hot_acc[0] = before;
    t.hot_input = input;
    t.hot_n = 3; /* three instances before: the newest weighs 1 / (1 + 3 * 64) */
    rt_hot *old = malloc(3 * sizeof *old);
    assert_non_null(old);
    old[0] = (rt_hot){0, 0.00, 0.25, 1000, 1000, 1000}; /* hot, not armed now */
    old[1] = (rt_hot){0, 0.25, 0.25, 10, 10, 10};       /* hit by the slice now */
    old[2] = (rt_hot){0, 0.50, 0.25, 10, 10, 10};
    size_t cap = 1;
    t.hot = malloc(sizeof *t.hot);
    assert_non_null(t.hot);
    t.hot[0] = (rt_hot){0, 0.25, 0.25, 1280, 1280, 1280};
    t.nhot = 1;
    assert_int_equal(rt_heat_merge(&t, &cap, old, 3, input, 64), 0);
    double w = 1.0 / (1 + 3 * 64);
    assert_int_equal(t.nhot, 3);
    const rt_hot *a = region_at(&t, 0), *b = region_at(&t, 0.25), *c = region_at(&t, 0.5);
    assert_non_null(a);
    assert_non_null(b);
    assert_non_null(c);
    assert_ptr_equal(a, &t.hot[0]); /* still the hottest */
    /* the object's total is the blended one; each region its blended share */
    double total = w * 1280 + (1 - w) * before;
    assert_true(fabs(last - total) < 1e-9 * total);
    double sum = (1 - w) * 1000 + (w * 1280 + (1 - w) * 10) + (1 - w) * 10;
    assert_true(fabs(a->accesses - (1 - w) * 1000 * total / sum) < 1e-6 * total);
    assert_true(fabs(b->accesses - (w * 1280 + (1 - w) * 10) * total / sum) < 1e-6 * total);
    assert_int_equal(t.hot_n, 4);
    free(t.hot);
    t.last_acc = NULL;
    rt_heat_free(&t);
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
        cmocka_unit_test_setup_teardown(test_stored_regions_are_matched_not_copied, setup, teardown),
        cmocka_unit_test(test_thinned_counts_blend_at_their_weight),
        cmocka_unit_test_setup_teardown(test_task_unknown_to_the_store_is_sampled_whole_next, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
