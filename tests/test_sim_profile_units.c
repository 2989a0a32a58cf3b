/* Compressed profiles (issue #12, item 7): a profile's unit may be coarser
 * than 4 KiB (pd_sim_profile_set_unit, pd_sim_profile_coarsen), so that its
 * memory scales with the footprint over 2 MiB; version-3 files carry the
 * unit; versions 1 and 2 still load; the scorer and the baselines work on
 * units (capacity, migration bytes). */
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

#include "sim/baselines.h"
#include "sim/policies.h"
#include "sim/profile.h"
#include "sim/scorer.h"
#include "sim/tier.h"

#define GIB (1UL << 30)
#define MIB (1UL << 20)
#define NTASKS 8
#define NOBJ 4

/* NTASKS tasks over NOBJ objects of bytes / NOBJ each, at `unit`: task t
 * works on its eighth of every object (uneven counts), and touches the
 * rest a little; two phases split each task's counts 3:2 (region sums). */
static pd_sim_profile *synth(size_t bytes, size_t unit)
{
    pd_sim_profile *p = pd_sim_profile_new("synth", "big", NTASKS);
    assert_non_null(p);
    assert_int_equal(pd_sim_profile_set_unit(p, unit), 0);
    const pd_pattern pats[NOBJ] = {PD_PATTERN_STREAM, PD_PATTERN_RANDOM, PD_PATTERN_STENCIL, PD_PATTERN_STRIDE};
    for (int o = 0; o < NOBJ; o++) {
        char name[8];
        snprintf(name, sizeof name, "o%d", o);
        assert_int_equal(pd_sim_profile_add_object(p, name, bytes / NOBJ, pats[o], 8), o);
    }
    assert_int_equal(pd_sim_profile_alloc_counts(p), 0);
    size_t lines = unit / PD_SIM_LINE;
    for (int t = 0; t < NTASKS; t++) {
        p->tasks[t].time_s = 1.0 + 0.1 * t;
        p->tasks[t].compute_s = 0.5;
        for (int o = 0; o < NOBJ; o++) {
            const pd_sim_object *ob = &p->objects[o];
            for (size_t k = 0; k < ob->npages; k++) {
                int mine = k * NTASKS / ob->npages == (size_t)t;
                uint64_t r = mine ? lines * (1 + (k * 7 + (size_t)t * 13) % 5) : (k % 64 == 0);
                p->tasks[t].reads[ob->page_base + k] = r;
                p->tasks[t].writes[ob->page_base + k] = r / 4;
            }
        }
    }
    for (int ph = 0; ph < 2; ph++) {
        pd_sim_phase_task *row = pd_sim_profile_add_phase(p);
        assert_non_null(row);
        for (int t = 0; t < NTASKS; t++) {
            row[t].time_s = p->tasks[t].time_s * (ph ? 0.4 : 0.6);
            for (size_t g = 0; g < p->npages; g++) {
                uint64_t r = p->tasks[t].reads[g], w = p->tasks[t].writes[g];
                uint64_t r0 = r * 3 / 5, w0 = w * 3 / 5;
                row[t].reads[p->page_region[g]] += ph ? r - r0 : r0;
                row[t].writes[p->page_region[g]] += ph ? w - w0 : w0;
            }
        }
    }
    return p;
}

static double task_sum(const uint64_t *c, size_t n)
{
    double s = 0;
    for (size_t g = 0; g < n; g++)
        s += (double)c[g];
    return s;
}

/* Memory scales with the units: 1 GiB at 4 KiB holds 8 tasks x 262144
 * pages x 16 B = 32 MiB of counts; at 2 MiB under 1 MiB; a 128 GiB
 * footprint at 2 MiB about 8.5 MiB (it would be 4 GiB at 4 KiB). */
static void test_memory_scales_with_units(void **state)
{
    (void)state;
    pd_sim_profile *small = synth(GIB, PD_SIM_PAGE);
    assert_int_equal(small->npages, GIB / PD_SIM_PAGE);
    size_t b4k = pd_sim_profile_bytes(small);
    assert_true(b4k >= (size_t)NTASKS * (GIB / PD_SIM_PAGE) * 16);
    pd_sim_profile *c = synth(GIB, 2 * MIB);
    assert_int_equal(c->npages, 512);
    assert_int_equal(pd_sim_footprint(c), GIB);
    assert_true(pd_sim_profile_bytes(c) < MIB);
    assert_true(pd_sim_profile_bytes(c) * 256 < b4k);
    pd_sim_profile *big = synth(128 * GIB, 2 * MIB);
    assert_int_equal(big->npages, 65536);
    assert_int_equal(pd_sim_footprint(big), 128 * GIB);
    assert_true(pd_sim_profile_bytes(big) < 10 * MIB);
    if (getenv("PD_PRINT_PROFILE_BYTES")) /* the figures of docs/sim.md */
        printf("profile bytes: 1 GiB @4 KiB %zu, 1 GiB @2 MiB %zu, 128 GiB @2 MiB %zu\n", b4k,
               pd_sim_profile_bytes(c), pd_sim_profile_bytes(big));
    pd_sim_profile_free(small);
    pd_sim_profile_free(c);
    pd_sim_profile_free(big);
}

/* Coarsening keeps every task's and object's counts exactly, each phase's
 * to rounding, the times, objects and footprint. */
static void test_coarsen_keeps_counts(void **state)
{
    (void)state;
    pd_sim_profile *p = synth(64 * MIB, PD_SIM_PAGE);
    char err[256] = "";
    pd_sim_profile *q = pd_sim_profile_coarsen(p, 2 * MIB, err, sizeof err);
    assert_non_null(q);
    assert_int_equal(q->page_bytes, 2 * MIB);
    assert_int_equal(q->npages, 32);
    assert_int_equal(pd_sim_footprint(q), pd_sim_footprint(p));
    assert_int_equal(q->nphases, 2);
    for (int t = 0; t < NTASKS; t++) {
        assert_true(task_sum(q->tasks[t].reads, q->npages) == task_sum(p->tasks[t].reads, p->npages));
        assert_true(task_sum(q->tasks[t].writes, q->npages) == task_sum(p->tasks[t].writes, p->npages));
        assert_true(q->tasks[t].time_s == p->tasks[t].time_s);
        for (int o = 0; o < NOBJ; o++)
            assert_true(task_sum(q->tasks[t].reads + q->objects[o].page_base, q->objects[o].npages) ==
                        task_sum(p->tasks[t].reads + p->objects[o].page_base, p->objects[o].npages));
        for (int ph = 0; ph < 2; ph++) {
            const pd_sim_phase_task *a = PD_SIM_PHASE(p, ph, t), *b = PD_SIM_PHASE(q, ph, t);
            assert_true(a->time_s == b->time_s);
            double ra = task_sum(a->reads, p->nregions), rb = task_sum(b->reads, q->nregions);
            assert_true(fabs(ra - rb) <= (double)q->nregions);
        }
    }
    /* a unit that is not a multiple, or not a power of two */
    assert_null(pd_sim_profile_coarsen(q, PD_SIM_PAGE, err, sizeof err));
    assert_non_null(strstr(err, "multiple"));
    assert_null(pd_sim_profile_coarsen(p, 3 * PD_SIM_PAGE, err, sizeof err));
    assert_int_equal(pd_sim_profile_set_unit(q, 4 * MIB), -1); /* objects already added */
    pd_sim_profile_free(p);
    pd_sim_profile_free(q);
}

static char *tmp_path(void)
{
    static char path[64];
    snprintf(path, sizeof path, "/tmp/pd-profile-units-XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    return path;
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static int file_has(const char *path, const char *needle)
{
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    return strstr(buf, needle) != NULL;
}

/* Version 3 carries the unit and loads back equal; a 4 KiB profile is
 * still written as version 2; bad units are refused. */
static void test_version3_round_trip(void **state)
{
    (void)state;
    char err[512] = "";
    const char *path = tmp_path();
    pd_sim_profile *p = synth(256 * MIB, 2 * MIB);
    assert_int_equal(pd_sim_profile_save(p, path, err, sizeof err), 0);
    assert_true(file_has(path, "\"version\":3"));
    assert_true(file_has(path, "\"page_size\":2097152"));
    pd_sim_profile *q = pd_sim_profile_load(path, err, sizeof err);
    assert_non_null(q);
    assert_int_equal(q->page_bytes, 2 * MIB);
    assert_int_equal(q->npages, p->npages);
    assert_int_equal(q->nphases, 2);
    for (int t = 0; t < NTASKS; t++) {
        assert_memory_equal(q->tasks[t].reads, p->tasks[t].reads, p->npages * sizeof(uint64_t));
        assert_memory_equal(q->tasks[t].writes, p->tasks[t].writes, p->npages * sizeof(uint64_t));
        for (int ph = 0; ph < 2; ph++)
            assert_memory_equal(PD_SIM_PHASE(q, ph, t)->reads, PD_SIM_PHASE(p, ph, t)->reads,
                                p->nregions * sizeof(uint64_t));
    }
    pd_sim_profile_free(q);
    pd_sim_profile_free(p);

    p = synth(4 * MIB, PD_SIM_PAGE);
    assert_int_equal(pd_sim_profile_save(p, path, err, sizeof err), 0);
    assert_true(file_has(path, "\"version\":2"));
    assert_true(file_has(path, "\"page_size\":4096"));
    pd_sim_profile_free(p);

    const char *body = "\"workload\":\"w\",\"input\":\"i\",\"objects\":[{\"name\":\"a\",\"bytes\":8388608}],"
                       "\"tasks\":[{\"id\":0,\"time_s\":1,\"compute_s\":0,\"pages\":[[0,1,5,0]]}]}";
    const struct {
        int version;
        long page;
        const char *want; /* NULL: loads */
    } cases[] = {{3, 2097152, NULL}, {3, 4096, NULL}, {1, 4096, NULL},     {2, 8192, "page_size must be 4096"},
                 {3, 3000, "power of two"}, {3, 2048, "power of two"}, {3, 1L << 31, "power of two"},
                 {4, 4096, "unsupported profile version"}};
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        char text[1024];
        snprintf(text, sizeof text, "{\"format\":\"paddiser-sim-profile\",\"version\":%d,\"page_size\":%ld,%s",
                 cases[k].version, cases[k].page, body);
        write_text(path, text);
        q = pd_sim_profile_load(path, err, sizeof err);
        if (!cases[k].want) {
            assert_non_null(q);
            assert_int_equal(q->page_bytes, (size_t)cases[k].page);
            assert_int_equal(q->npages, 8388608 / cases[k].page);
            assert_true(q->tasks[0].reads[1] == 5);
            pd_sim_profile_free(q);
        } else {
            assert_null(q);
            assert_non_null(strstr(err, cases[k].want));
        }
    }
    unlink(path);
}

/* The scorer and a baseline on a 128 GiB profile of 2 MiB units: slow
 * memory is slower than fast, migration is charged per unit's bytes, and
 * HeMem's placement fits the capacity in units. */
static void test_scorer_and_baselines_on_units(void **state)
{
    (void)state;
    pd_sim_profile *p = synth(128 * GIB, 2 * MIB);
    pd_score_machine m;
    assert_int_equal(pd_score_machine_preset("optane", &m), 0);
    double *fast = calloc(p->npages, sizeof *fast);
    assert_non_null(fast);
    pd_score_result slow = {0}, all = {0};
    assert_int_equal(pd_score(&m, p, fast, 0, 0, &slow), 0);
    for (size_t g = 0; g < p->npages; g++)
        fast[g] = 1;
    assert_int_equal(pd_score(&m, p, fast, 0, 10, &all), 0);
    assert_true(all.makespan - all.migrate_s < slow.makespan);
    assert_true(fabs(all.migrate_s - 10.0 * 2 * MIB / (m.migrate_gbs * 1e9)) < 1e-12);
    size_t cap = p->npages / 4;
    pd_sim_bl_opts o = {.seed = 1, .stats = NULL};
    assert_int_equal(pd_sim_bl_hemem(p, cap, &o, fast), 0);
    double used = 0;
    for (size_t g = 0; g < p->npages; g++)
        used += fast[g];
    assert_true(used <= (double)cap + 1e-9);
    assert_true(used > 0);
    free(fast);
    pd_sim_profile_free(p);
}

/* Every policy places a 128 GiB profile of 2 MiB units within the
 * capacity (in units), and the scorer scores each placement. */
static void test_every_policy_on_units(void **state)
{
    (void)state;
    pd_sim_profile *p = synth(128 * GIB, 2 * MIB);
    pd_sim_machine pm;
    pd_score_machine sm;
    assert_int_equal(pd_sim_machine_preset("cxl", &pm), 0);
    assert_int_equal(pd_score_machine_preset("cxl", &sm), 0);
    size_t cap = pd_sim_footprint(p) / 4, cap_units = cap / p->page_bytes;
    char err[256] = "";
    for (int k = 0; k < PD_SIM_NPOLICIES; k++) {
        pd_sim_policy_opts o = {.seed = 1, .rounds = 3};
        pd_sim_placement pl = {0};
        assert_int_equal(pd_sim_place((pd_sim_policy)k, p, &pm, cap, &o, &pl, err, sizeof err), 0);
        double used = 0;
        for (size_t g = 0; g < p->npages; g++)
            used += pl.fast[g];
        if (k != PD_SIM_MEMORY_MODE) /* memory mode's fast[] are hit rates */
            assert_true(used <= (double)cap_units + 1e-9);
        assert_true(pl.fast_bytes <= cap);
        pd_score_result r = {0};
        assert_int_equal(pd_score(&sm, p, pl.fast, k == PD_SIM_MEMORY_MODE, 0, &r), 0);
        assert_true(r.makespan > 0 && isfinite(r.makespan));
        pd_sim_placement_free(&pl);
    }
    double *fast = calloc(p->npages, sizeof *fast);
    size_t held = 0;
    pd_sim_bl_opts bo = {.seed = 1};
    int (*const bl[])(const pd_sim_profile *, size_t, const pd_sim_bl_opts *, double *) = {
        pd_sim_bl_tpp, pd_sim_bl_hemem, pd_sim_bl_memtis, pd_sim_bl_damon};
    for (size_t b = 0; b <= sizeof bl / sizeof *bl; b++) {
        if (b < sizeof bl / sizeof *bl)
            assert_int_equal(bl[b](p, cap_units, &bo, fast), 0);
        else
            assert_int_equal(pd_sim_bl_colloid(p, &pm, cap_units, &bo, fast, &held), 0);
        double used = 0;
        for (size_t g = 0; g < p->npages; g++)
            used += fast[g];
        assert_true(used <= (double)cap_units + 1e-9);
    }
    free(fast);
    pd_sim_profile_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_memory_scales_with_units),
        cmocka_unit_test(test_coarsen_keeps_counts),
        cmocka_unit_test(test_version3_round_trip),
        cmocka_unit_test(test_scorer_and_baselines_on_units),
        cmocka_unit_test(test_every_policy_on_units),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
