/* Tests of the independent placement scorer (src/sim/scorer.c): phases
 * scored on their own, migration charged, queueing before saturation,
 * media granularity, memory-mode fills, calibration, presets, variants. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "sim/profile.h"
#include "sim/scorer.h"
#include "sim/tier.h"

#define NEAR(a, b, rel) assert_true(fabs((double)(a) - (double)(b)) <= (rel) * fabs((double)(b)) + 1e-15)

/* ntasks tasks, one object of `pages` pages each; phase ph gives task t
 * acc[ph][t] line reads on every page of its object and time time_s[ph][t]. */
static pd_sim_profile *phased(int ntasks, int nphases, int pages, pd_pattern pat,
                              const double acc[][4], const double time_s[][4])
{
    pd_sim_profile *p = pd_sim_profile_new("synth", "base", ntasks);
    assert_non_null(p);
    for (int t = 0; t < ntasks; t++) {
        char name[16];
        snprintf(name, sizeof name, "obj%d", t);
        assert_int_equal(pd_sim_profile_add_object(p, name, (size_t)pages * PD_SIM_PAGE, pat, 8), t);
    }
    assert_int_equal(pd_sim_profile_alloc_counts(p), 0);
    for (int ph = 0; ph < nphases; ph++) {
        pd_sim_phase_task *row = pd_sim_profile_add_phase(p);
        assert_non_null(row);
        for (int t = 0; t < ntasks; t++) {
            const pd_sim_object *o = &p->objects[t];
            row[t].time_s = time_s[ph][t];
            for (size_t g = o->page_base; g < o->page_base + o->npages; g++) {
                row[t].reads[p->page_region[g]] += (uint64_t)acc[ph][t];
                p->tasks[t].reads[g] += (uint64_t)acc[ph][t];
            }
            p->tasks[t].time_s += time_s[ph][t];
        }
    }
    return p;
}

static double *filled(const pd_sim_profile *p, double v)
{
    double *f = malloc(p->npages * sizeof *f);
    for (size_t g = 0; g < p->npages; g++)
        f[g] = v;
    return f;
}

static double score(const pd_score_machine *m, const pd_sim_profile *p, double v, int mm,
                    size_t moved)
{
    double *f = filled(p, v);
    pd_score_result r = {0};
    assert_int_equal(pd_score(m, p, f, mm, moved, &r), 0);
    free(f);
    return r.makespan;
}

static void test_presets_and_variants(void **state)
{
    (void)state;
    pd_score_machine m, v;
    for (const char *const *n = pd_sim_preset_names; *n; n++) {
        assert_int_equal(pd_score_machine_preset(*n, &m), 0);
        pd_sim_machine planner;
        assert_int_equal(pd_sim_machine_preset(*n, &planner), 0); /* same names on both sides */
    }
    assert_int_equal(pd_score_machine_preset("optane", &m), 0);
    assert_true(m.tier[PD_SIM_SLOW].media_bytes == 256);
    assert_int_equal(pd_score_machine_preset("hbm", &m), -1);
    assert_int_equal(pd_score_machine_preset(NULL, &m), -1);
    assert_int_equal(pd_score_machine_preset("cxl", &m), 0);
    pd_score_variant(&m, 0, &v);
    assert_memory_equal(&m, &v, sizeof m);
    pd_score_variant(&m, 2, &v);
    NEAR(v.tier[PD_SIM_SLOW].lat_seq_ns, 1.3 * m.tier[PD_SIM_SLOW].lat_seq_ns, 1e-12);
    NEAR(v.tier[PD_SIM_FAST].lat_seq_ns, m.tier[PD_SIM_FAST].lat_seq_ns, 1e-12);
    for (int k = 0; k < PD_SCORE_NVARIANTS; k++)
        assert_string_not_equal(pd_score_variant_name(k), "?");
}

/* The migration throughput is the cited 4 KiB move_pages rate (3.31 GB/s)
 * capped by the slow tier's write bandwidth, on every preset; the band runs
 * from 1 GB/s to 11 GB/s (the cited THP rate) and moves nothing else. */
static void test_migration_bandwidth_per_preset(void **state)
{
    (void)state;
    pd_score_machine m, v;
    for (const char *const *n = pd_sim_preset_names; *n; n++) {
        assert_int_equal(pd_score_machine_preset(*n, &m), 0);
        NEAR(m.migrate_gbs, 3.31, 1e-12); /* no preset's write bandwidth is below it */
        NEAR(m.migrate_gbs, pd_score_migrate_gbs(&m.tier[PD_SIM_SLOW]), 1e-12);
        pd_score_variant(&m, 9, &v);
        NEAR(v.migrate_gbs, 1.0, 1e-12);
        pd_score_variant(&m, 10, &v);
        NEAR(v.migrate_gbs, 11.0, 1e-12);
        v.migrate_gbs = m.migrate_gbs;
        assert_memory_equal(&m, &v, sizeof m);
    }
    pd_score_tier slow = {400, 400, 2, 1.5, 64, 0, 0}; /* a tier slower to write than the copy */
    NEAR(pd_score_migrate_gbs(&slow), 1.5, 1e-12);
    assert_string_equal(pd_score_variant_name(9), "migration 1 GB/s");
    assert_string_equal(pd_score_variant_name(10), "migration 11 GB/s");
    assert_string_equal(pd_score_variant_name(PD_SCORE_NVARIANTS), "?");
}

/* Two tasks, two phases, each task slow in one of them: the barrier makes
 * the makespan the sum of the phase maxima, not the larger task total. */
static void test_phases_sum_their_slowest_task(void **state)
{
    (void)state;
    pd_score_machine m;
    assert_int_equal(pd_score_machine_preset("dram", &m), 0);
    m.kappa = 0;
    const double acc[2][4] = {{0, 0}, {0, 0}}; /* compute only */
    const double t[2][4] = {{3e-3, 1e-3}, {1e-3, 3e-3}};
    pd_sim_profile *p = phased(2, 2, 4, PD_PATTERN_STREAM, acc, t);
    double mk = score(&m, p, 1, 0, 0);
    NEAR(mk, 6e-3, 1e-9); /* collapsed barriers would say 4 ms */
    pd_sim_profile_free(p);
}

static void test_migration_is_charged(void **state)
{
    (void)state;
    pd_score_machine m;
    assert_int_equal(pd_score_machine_preset("cxl", &m), 0);
    const double acc[1][4] = {{100, 100}};
    const double t[1][4] = {{1e-3, 1e-3}};
    pd_sim_profile *p = phased(2, 1, 8, PD_PATTERN_STREAM, acc, t);
    double *f = filled(p, 1);
    pd_score_result r0 = {0}, r1 = {0};
    assert_int_equal(pd_score(&m, p, f, 0, 0, &r0), 0);
    assert_int_equal(pd_score(&m, p, f, 0, 1000, &r1), 0);
    NEAR(r1.migrate_s, 1000.0 * PD_SIM_PAGE / (m.migrate_gbs * 1e9), 1e-12);
    NEAR(r1.migrate_s, 1000.0 * 4096 / 3.31e9, 1e-12); /* 1.24 ms for 1000 pages */
    NEAR(r1.makespan - r0.makespan, r1.migrate_s, 1e-9);
    double g0[] = {0, 1, 0}, g1[] = {1, 1, 1};
    assert_int_equal(pd_score_moved_pages(g0, g1, 3), 2);
    free(f);
    pd_sim_profile_free(p);
}

/* Below saturation the queueing model already stretches latency; the
 * saturating one does not. Slow memory is slower than fast, fast everywhere
 * is the floor, and on the DRAM control placement does not matter. */
static void test_contention_and_order(void **state)
{
    (void)state;
    double acc[1][4], t[1][4];
    for (int k = 0; k < 4; k++)
        acc[0][k] = 2000, t[0][k] = 1e-4;
    pd_sim_profile *p = phased(4, 1, 64, PD_PATTERN_STREAM, acc, t);
    pd_score_machine m, sat;
    assert_int_equal(pd_score_machine_preset("optane", &m), 0);
    pd_score_variant(&m, 5, &sat);
    double q_fast = score(&m, p, 1, 0, 0), s_fast = score(&sat, p, 1, 0, 0);
    assert_true(q_fast > s_fast * 1.001);
    assert_true(score(&m, p, 0, 0, 0) > q_fast * 1.5);
    assert_true(score(&m, p, 0.5, 0, 0) < score(&m, p, 0, 0, 0));
    pd_score_machine d;
    assert_int_equal(pd_score_machine_preset("dram", &d), 0);
    NEAR(score(&d, p, 0, 0, 0), score(&d, p, 1, 0, 0), 1e-9);
    pd_sim_profile_free(p);
}

/* Random accesses on Optane move 256 B per 64 B line: with the media
 * granularity of DRAM the same bandwidth-bound run is faster. */
static void test_media_granularity(void **state)
{
    (void)state;
    double acc[1][4], t[1][4];
    for (int k = 0; k < 4; k++)
        acc[0][k] = 5000, t[0][k] = 1e-5;
    pd_sim_profile *p = phased(4, 1, 64, PD_PATTERN_RANDOM, acc, t);
    pd_score_machine m, fine;
    assert_int_equal(pd_score_machine_preset("optane", &m), 0);
    fine = m;
    fine.tier[PD_SIM_SLOW].media_bytes = 64;
    assert_true(score(&m, p, 0, 0, 0) > 1.2 * score(&fine, p, 0, 0, 0));
    pd_sim_profile_free(p);
}

/* Memory mode at hit rate h pays a tag probe for every miss and a fill:
 * slower than a placement that serves the same share from fast memory;
 * at h = 1 the two agree. */
static void test_memory_mode_costs(void **state)
{
    (void)state;
    double acc[1][4], t[1][4];
    for (int k = 0; k < 2; k++)
        acc[0][k] = 3000, t[0][k] = 1e-4;
    pd_sim_profile *p = phased(2, 1, 16, PD_PATTERN_STREAM, acc, t);
    pd_score_machine m;
    assert_int_equal(pd_score_machine_preset("optane", &m), 0);
    assert_true(score(&m, p, 0.5, 1, 0) > score(&m, p, 0.5, 0, 0));
    NEAR(score(&m, p, 1, 1, 0), score(&m, p, 1, 0, 0), 1e-9);
    pd_sim_profile_free(p);
}

/* Without queueing, one compute-bound task all in DRAM takes exactly its
 * measured time (the compute time is calibrated to it). */
static void test_calibration_reproduces_measurement(void **state)
{
    (void)state;
    const double acc[1][4] = {{50}};
    const double t[1][4] = {{2e-3}};
    pd_sim_profile *p = phased(1, 1, 4, PD_PATTERN_RANDOM, acc, t);
    pd_score_machine m;
    assert_int_equal(pd_score_machine_preset("optane", &m), 0);
    m.kappa = 0;
    NEAR(score(&m, p, 1, 0, 0), 2e-3, 1e-9);
    assert_true(score(&m, p, 0, 0, 0) > 2e-3);
    pd_sim_profile_free(p);
}

/* A profile saved with phases loads with the same phases; a version-1
 * profile (no phases) loads as one phase of the whole run. */
static void test_profile_phases_round_trip(void **state)
{
    (void)state;
    const double acc[2][4] = {{7, 9}, {0, 3}};
    const double t[2][4] = {{1e-3, 2e-3}, {3e-3, 4e-3}};
    pd_sim_profile *p = phased(2, 2, 130, PD_PATTERN_STRIDE, acc, t);
    assert_true(p->nregions >= 2 * 2 && p->nregions <= 2 * PD_SIM_REGIONS_PER_OBJECT);
    char path[] = "/tmp/pd_scorer_XXXXXX", err[256] = "";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(pd_sim_profile_save(p, path, err, sizeof err), 0);
    pd_sim_profile *q = pd_sim_profile_load(path, err, sizeof err);
    assert_non_null(q);
    assert_int_equal(q->nphases, 2);
    for (int ph = 0; ph < 2; ph++)
        for (int k = 0; k < 2; k++) {
            NEAR(PD_SIM_PHASE(q, ph, k)->time_s, t[ph][k], 1e-9);
            assert_memory_equal(PD_SIM_PHASE(q, ph, k)->reads, PD_SIM_PHASE(p, ph, k)->reads,
                                p->nregions * sizeof(uint64_t));
        }
    FILE *f = fopen(path, "w");
    fprintf(f, "{\"format\": \"paddiser-sim-profile\", \"version\": 1, \"workload\": \"w\", \"input\": \"i\","
               " \"objects\": [{\"name\": \"a\", \"bytes\": 8192}],"
               " \"tasks\": [{\"id\": 0, \"time_s\": 0.5, \"compute_s\": 0.1, \"pages\": [[0, 1, 4, 2]]}]}");
    fclose(f);
    pd_sim_profile *v1 = pd_sim_profile_load(path, err, sizeof err);
    assert_non_null(v1);
    assert_int_equal(v1->nphases, 1);
    NEAR(PD_SIM_PHASE(v1, 0, 0)->time_s, 0.5, 1e-12);
    assert_int_equal(PD_SIM_PHASE(v1, 0, 0)->reads[v1->page_region[1]], 4);
    assert_int_equal(PD_SIM_PHASE(v1, 0, 0)->writes[v1->page_region[1]], 2);
    f = fopen(path, "w");
    fprintf(f, "{\"format\": \"paddiser-sim-profile\", \"version\": 2, \"workload\": \"w\", \"input\": \"i\","
               " \"objects\": [{\"name\": \"a\", \"bytes\": 8192}],"
               " \"tasks\": [{\"id\": 0, \"time_s\": 0.5, \"compute_s\": 0.1, \"pages\": []}],"
               " \"phases\": [[{\"time_s\": 0.5, \"regions\": [[99, 1, 0]]}]]}");
    fclose(f);
    assert_null(pd_sim_profile_load(path, err, sizeof err));
    assert_non_null(strstr(err, "region entry 0"));
    unlink(path);
    pd_sim_profile_free(v1);
    pd_sim_profile_free(q);
    pd_sim_profile_free(p);
}

/* The scorer's all-fast instance over the measured one (the sum over
 * phases of each phase's slowest task). Where the measured time covers
 * the modelled memory time, the scorer reproduces it (ratio 1); where the
 * tasks ran faster than the model's memory time (a machine faster than
 * the model), measured times half as long make the ratio twice as large;
 * without measured times it is 1. */
static void test_time_ratio(void **state)
{
    (void)state;
    pd_score_machine m;
    assert_int_equal(pd_score_machine_preset("optane", &m), 0);
    const double acc[2][4] = {{100, 200}, {300, 50}};
    const double slow[2][4] = {{2.0, 4.0}, {3.0, 1.0}}; /* seconds: far beyond memory */
    pd_sim_profile *p = phased(2, 2, 8, PD_PATTERN_RANDOM, acc, slow);
    assert_float_equal(pd_score_time_ratio(&m, p), 1.0, 1e-3);
    pd_sim_profile_free(p);
    const double t1[2][4] = {{2e-9, 4e-9}, {3e-9, 1e-9}}; /* slowest: 4 + 3 ns */
    const double th[2][4] = {{1e-9, 2e-9}, {1.5e-9, 0.5e-9}};
    const double t0[2][4] = {{0, 0}, {0, 0}};
    p = phased(2, 2, 8, PD_PATTERN_RANDOM, acc, t1);
    double fast = score(&m, p, 1.0, 0, 0);
    assert_true(fast > 7e-9);
    double r = pd_score_time_ratio(&m, p);
    assert_true(fabs(r - fast / 7e-9) <= 1e-9 * r); /* (cmocka compares floats in single precision) */
    pd_sim_profile_free(p);
    p = phased(2, 2, 8, PD_PATTERN_RANDOM, acc, th);
    assert_true(fabs(pd_score_time_ratio(&m, p) - 2 * r) <= 1e-4 * r);
    pd_sim_profile_free(p);
    p = phased(2, 2, 8, PD_PATTERN_RANDOM, acc, t0);
    assert_float_equal(pd_score_time_ratio(&m, p), 1.0, 0);
    pd_sim_profile_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_presets_and_variants),
        cmocka_unit_test(test_phases_sum_their_slowest_task),
        cmocka_unit_test(test_migration_is_charged),
        cmocka_unit_test(test_migration_bandwidth_per_preset),
        cmocka_unit_test(test_contention_and_order),
        cmocka_unit_test(test_media_granularity),
        cmocka_unit_test(test_memory_mode_costs),
        cmocka_unit_test(test_calibration_reproduces_measurement),
        cmocka_unit_test(test_profile_phases_round_trip),
        cmocka_unit_test(test_time_ratio),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
