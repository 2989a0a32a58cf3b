/* Tests of src/sim: tier presets, the execution model (hand-checked cases,
 * bandwidth sharing, monotonicity), policies (capacity, memory-mode
 * conflicts), profile files, the workload harness and an end-to-end
 * comparison on an imbalanced synthetic workload. */
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

#include "common/csv.h"
#include "common/util.h"
#include "sim/exec_model.h"
#include "sim/policies.h"
#include "sim/profile.h"
#include "sim/study.h"
#include "sim/tier.h"
#include "sim/workload.h"

#define NEAR(a, b, rel) assert_true(fabs((double)(a) - (double)(b)) <= (rel) * fabs((double)(b)) + 1e-15)

static void test_tier_presets(void **state)
{
    (void)state;
    pd_sim_machine m;
    assert_int_equal(pd_sim_machine_preset("optane", &m), 0);
    const pd_sim_tier *f = &m.tier[PD_SIM_FAST], *s = &m.tier[PD_SIM_SLOW];
    NEAR(s->lat_seq_ns / f->lat_seq_ns, 2.08, 1e-9);
    NEAR(s->lat_rand_ns / f->lat_rand_ns, 3.77, 1e-9);
    NEAR(f->bw_read_gbs / s->bw_read_gbs, 3.87, 1e-9);
    NEAR(f->bw_write_gbs / s->bw_write_gbs, 4.74, 1e-9);
    assert_int_equal(pd_sim_machine_preset("cxl", &m), 0);
    NEAR(m.tier[1].lat_seq_ns - m.tier[0].lat_seq_ns, 85, 1e-9);
    NEAR(m.tier[1].bw_read_gbs / m.tier[0].bw_read_gbs, 0.5, 1e-9);
    assert_int_equal(pd_sim_machine_preset("dram", &m), 0);
    assert_memory_equal(&m.tier[0], &m.tier[1], sizeof m.tier[0]);
    assert_int_equal(pd_sim_machine_preset("hbm", &m), -1);
    assert_int_equal(pd_sim_machine_preset(NULL, &m), -1);
}

/* ntasks tasks, one object each of `pages` pages, `acc` line reads per page. */
static pd_sim_profile *synthetic(int ntasks, const int *pages, const double *acc, pd_pattern pat,
                                 const double *compute)
{
    pd_sim_profile *p = pd_sim_profile_new("synth", "base", ntasks);
    assert_non_null(p);
    for (int t = 0; t < ntasks; t++) {
        char name[16];
        snprintf(name, sizeof name, "obj%d", t);
        assert_true(pd_sim_profile_add_object(p, name, (size_t)pages[t] * PD_SIM_PAGE, pat, 8) == t);
    }
    assert_int_equal(pd_sim_profile_alloc_counts(p), 0);
    for (int t = 0; t < ntasks; t++) {
        const pd_sim_object *o = &p->objects[t];
        for (size_t g = o->page_base; g < o->page_base + o->npages; g++)
            p->tasks[t].reads[g] = (uint64_t)acc[t];
        p->tasks[t].compute_s = compute ? compute[t] : 0;
        p->tasks[t].time_s = p->tasks[t].compute_s;
    }
    return p;
}

static double run_fast_frac(const pd_sim_machine *m, pd_sim_profile *p, double frac, double *times)
{
    double *fast = malloc(p->npages * sizeof *fast);
    for (size_t g = 0; g < p->npages; g++)
        fast[g] = frac;
    pd_sim_split s;
    assert_int_equal(pd_sim_split_init(&s, p), 0);
    pd_sim_split_from_pages(&s, p, fast, NULL);
    double mk = pd_sim_execute(m, p, &s, times);
    pd_sim_split_free(&s);
    free(fast);
    return mk;
}

static void test_exec_hand_checked(void **state)
{
    (void)state;
    pd_sim_machine m;
    pd_sim_machine_preset("optane", &m);
    /* one stream task, 1000 pages x 1000 lines = 1e6 line reads on DRAM:
     * latency-bound 1e6 * 81 ns / 16 = 5.0625 ms > bandwidth 64 MB / 34 GB/s */
    int pages[] = {1000};
    double acc[] = {1000}, comp[] = {0.001}, t[1];
    pd_sim_profile *p = synthetic(1, pages, acc, PD_PATTERN_STREAM, comp);
    NEAR(run_fast_frac(&m, p, 1.0, t), 0.001 + 1e6 * 81e-9 / 16, 1e-9);
    /* all on PMem: latency-bound 1e6 * 168.48 ns / 16 = 10.53 ms > 7.29 ms of bandwidth */
    NEAR(run_fast_frac(&m, p, 0.0, t), 0.001 + 1e6 * 81e-9 * 2.08 / 16, 1e-9);
    /* the same as writes: 64 MB at 26/4.74 GB/s = 11.67 ms is bandwidth-bound */
    memcpy(p->tasks[0].writes, p->tasks[0].reads, p->npages * sizeof(uint64_t));
    memset(p->tasks[0].reads, 0, p->npages * sizeof(uint64_t));
    NEAR(run_fast_frac(&m, p, 0.0, t), 0.001 + 64e6 / (26e9 / 4.74), 1e-9);
    /* half the pages' accesses on each tier: the tiers add up */
    NEAR(run_fast_frac(&m, p, 0.5, t), 0.001 + 0.5e6 * 81e-9 / 16 + 32e6 / (26e9 / 4.74), 1e-9);
    pd_sim_profile_free(p);
    /* random pattern: latency class random, MLP 4 */
    p = synthetic(1, pages, acc, PD_PATTERN_RANDOM, comp);
    NEAR(run_fast_frac(&m, p, 0.0, t), 0.001 + 1e6 * 81e-9 * 3.77 / 4, 1e-9);
    pd_sim_profile_free(p);
}

static void test_exec_bandwidth_sharing(void **state)
{
    (void)state;
    pd_sim_machine m;
    pd_sim_machine_preset("optane", &m);
    /* 8 identical stream tasks on DRAM: alone 5.06 ms latency-bound, together
     * they need 8 x 64 MB at 34 GB/s = 15.06 ms: bandwidth-bound */
    int pages[8];
    double acc[8], t[8];
    for (int i = 0; i < 8; i++)
        pages[i] = 1000, acc[i] = 1000;
    pd_sim_profile *p = synthetic(8, pages, acc, PD_PATTERN_STREAM, NULL);
    double mk = run_fast_frac(&m, p, 1.0, t);
    NEAR(mk, 8 * 64e6 / 34e9, 1e-6);
    for (int i = 0; i < 8; i++)
        NEAR(t[i], mk, 1e-9);
    pd_sim_profile_free(p);
    /* two tasks, one 4x shorter: the long one speeds up once alone, so it
     * finishes before the bandwidth-bound estimate and after its solo time */
    int pg2[] = {4000, 1000};
    double acc2[] = {1000, 1000}, t2[2];
    pd_sim_machine m1 = m;
    pd_sim_machine_scale_bw(&m1, 0.1); /* 3.4 GB/s DRAM: both contend */
    p = synthetic(2, pg2, acc2, PD_PATTERN_STREAM, NULL);
    run_fast_frac(&m1, p, 1.0, t2);
    double solo_long = 4e6 * 64 / 3.4e9, both = 5e6 * 64 / 3.4e9;
    assert_true(t2[1] < t2[0]);
    NEAR(t2[0], both, 1e-6); /* the tier is saturated throughout: all bytes at peak */
    assert_true(t2[0] > solo_long);
    pd_sim_profile_free(p);
}

static void test_exec_monotone_in_share(void **state)
{
    (void)state;
    const char *presets[] = {"optane", "cxl"};
    pd_pattern pats[] = {PD_PATTERN_STREAM, PD_PATTERN_RANDOM, PD_PATTERN_STENCIL};
    for (size_t k = 0; k < 2; k++)
        for (size_t q = 0; q < 3; q++) {
            pd_sim_machine m;
            pd_sim_machine_preset(presets[k], &m);
            int pages[] = {300, 100, 50};
            double acc[] = {500, 2000, 100}, comp[] = {0.002, 0.001, 0.0}, t[3];
            pd_sim_profile *p = synthetic(3, pages, acc, pats[q], comp);
            double prev = INFINITY;
            for (int s = 0; s <= 20; s++) {
                double mk = run_fast_frac(&m, p, s / 20.0, t);
                assert_true(mk <= prev * (1 + 1e-12));
                prev = mk;
            }
            pd_sim_profile_free(p);
        }
}

static void test_direct_mapped_conflicts(void **state)
{
    (void)state;
    double freq[] = {1, 1, 3, 1, 5, 0};
    size_t set[] = {0, 0, 1, 1, 2, 2};
    double hit[6];
    assert_int_equal(pd_sim_direct_mapped_hits(freq, set, 6, 3, hit), 0);
    NEAR(hit[0], 0.5, 1e-12);
    NEAR(hit[1], 0.5, 1e-12);
    NEAR(hit[2], 0.75, 1e-12);
    NEAR(hit[3], 0.25, 1e-12);
    NEAR(hit[4], 1.0, 1e-12); /* alone with an untouched page */
    assert_int_equal(pd_sim_direct_mapped_hits(freq, set, 6, 0, hit), 0);
    for (int g = 0; g < 6; g++)
        NEAR(hit[g], 0.0, 1e-12);
}

static void test_policies_respect_capacity(void **state)
{
    (void)state;
    pd_sim_machine m;
    pd_sim_machine_preset("optane", &m);
    int pages[] = {120, 40, 40, 40};
    double acc[] = {400, 900, 900, 900};
    pd_sim_profile *p = synthetic(4, pages, acc, PD_PATTERN_RANDOM, NULL);
    size_t caps[] = {0, 10 * PD_SIM_PAGE, 100 * PD_SIM_PAGE + 100, 240 * PD_SIM_PAGE, 1000 * PD_SIM_PAGE};
    for (int k = 0; k < PD_SIM_NPOLICIES; k++)
        for (size_t c = 0; c < PD_ARRAY_LEN(caps); c++) {
            pd_sim_placement pl;
            char err[256] = "";
            assert_int_equal(pd_sim_place((pd_sim_policy)k, p, &m, caps[c], NULL, &pl, err, sizeof err), 0);
            assert_true(pl.fast_bytes <= caps[c]);
            size_t pages_fast = 0;
            for (size_t g = 0; g < p->npages; g++) {
                assert_true(pl.fast[g] >= 0 && pl.fast[g] <= 1);
                if (k != PD_SIM_MEMORY_MODE && pl.fast[g] > 0)
                    pages_fast++;
            }
            assert_true(pages_fast * PD_SIM_PAGE <= caps[c]);
            if (k == PD_SIM_FIRST_TOUCH || k == PD_SIM_HOT_FIRST)
                assert_int_equal(pages_fast, caps[c] / PD_SIM_PAGE < p->npages ? caps[c] / PD_SIM_PAGE : p->npages);
            pd_sim_placement_free(&pl);
        }
    /* memory mode: a cache as large as the data still conflicts (random frames) */
    pd_sim_placement pl;
    char err[256] = "";
    assert_int_equal(pd_sim_place(PD_SIM_MEMORY_MODE, p, &m, p->npages * PD_SIM_PAGE, NULL, &pl, err, sizeof err), 0);
    double mean = 0;
    for (size_t g = 0; g < p->npages; g++)
        mean += pl.fast[g] / p->npages, NEAR(pl.probe[g], 1 - pl.fast[g], 1e-12);
    assert_true(mean > 0.3 && mean < 0.95);
    pd_sim_placement_free(&pl);
    pd_sim_profile_free(p);
}

/* Planning on Eq. 2 curves (f = 1 here): capacity kept, and the heavy task
 * of the imbalanced case still gets more DRAM than under hot-first. */
static void test_plan_on_eq2_curves(void **state)
{
    (void)state;
    pd_sim_machine m;
    pd_sim_machine_preset("optane", &m);
    int pages[] = {200, 30, 30, 30};
    double acc[] = {600, 1500, 1500, 1500}, comp[] = {0.0005, 0.0005, 0.0005, 0.0005};
    pd_sim_profile *p = synthetic(4, pages, acc, PD_PATTERN_RANDOM, comp);
    pd_model *lin = pd_model_fallback();
    assert_non_null(lin);
    pd_sim_policy_opts o = {.eq2 = lin};
    size_t cap = (size_t)(0.35 * (double)pd_sim_footprint(p));
    char err[256] = "";
    pd_sim_placement pl, hot;
    assert_int_equal(pd_sim_place(PD_SIM_EXACT, p, &m, cap, &o, &pl, err, sizeof err), 0);
    assert_int_equal(pd_sim_place(PD_SIM_HOT_FIRST, p, &m, cap, NULL, &hot, err, sizeof err), 0);
    assert_true(pl.fast_bytes <= cap);
    assert_true(pl.task_share[0] > hot.task_share[0]);
    pd_sim_outcome a, b;
    assert_int_equal(pd_sim_evaluate(&m, p, &pl, &a), 0);
    assert_int_equal(pd_sim_evaluate(&m, p, &hot, &b), 0);
    assert_true(a.makespan < b.makespan);
    pd_sim_outcome_free(&a);
    pd_sim_outcome_free(&b);
    pd_sim_placement_free(&pl);
    pd_sim_placement_free(&hot);
    pd_model_free(lin);
    pd_sim_profile_free(p);
}

static void test_policy_names(void **state)
{
    (void)state;
    for (int k = 0; k < PD_SIM_NPOLICIES; k++) {
        pd_sim_policy pol;
        assert_int_equal(pd_sim_policy_parse(pd_sim_policy_name((pd_sim_policy)k), &pol), 0);
        assert_int_equal(pol, k);
    }
    pd_sim_policy pol;
    assert_int_equal(pd_sim_policy_parse("lru", &pol), -1);
}

/* One heavy task with lukewarm pages, three light ones with hot pages:
 * hot-first feeds the light tasks and leaves the heavy one on PMem. */
static void test_end_to_end_imbalanced(void **state)
{
    (void)state;
    pd_sim_machine m;
    pd_sim_machine_preset("optane", &m);
    int pages[] = {200, 30, 30, 30};
    double acc[] = {600, 1500, 1500, 1500}, comp[] = {0.0005, 0.0005, 0.0005, 0.0005};
    pd_sim_profile *p = synthetic(4, pages, acc, PD_PATTERN_RANDOM, comp);
    char err[256] = "";
    pd_sim_result res[PD_SIM_NPOLICIES];
    assert_int_equal(pd_sim_compare(&m, p, 0.35, NULL, res, err, sizeof err), 0);
    double ex = res[PD_SIM_EXACT].out.makespan, gr = res[PD_SIM_GREEDY].out.makespan;
    double hot = res[PD_SIM_HOT_FIRST].out.makespan;
    assert_true(ex <= gr * (1 + 1e-9));
    assert_true(gr < hot);
    assert_true(pd_sim_gain(ex, hot) > 0.10);
    assert_true(res[PD_SIM_EXACT].out.cov < res[PD_SIM_HOT_FIRST].out.cov);
    /* the heavy task gets most of the fast memory */
    assert_true(res[PD_SIM_EXACT].out.task_share[0] > res[PD_SIM_HOT_FIRST].out.task_share[0]);
    pd_sim_results_free(res);
    pd_sim_profile_free(p);
}

/* DRAM + DRAM control: placement cannot matter (memory mode still pays its
 * tag reads). */
static void test_dram_control_ties(void **state)
{
    (void)state;
    pd_sim_machine m;
    pd_sim_machine_preset("dram", &m);
    int pages[] = {200, 30, 30, 30};
    double acc[] = {600, 1500, 1500, 1500}, comp[] = {0.0005, 0.0005, 0.0005, 0.0005};
    pd_sim_profile *p = synthetic(4, pages, acc, PD_PATTERN_RANDOM, comp);
    char err[256] = "";
    pd_sim_result res[PD_SIM_NPOLICIES];
    assert_int_equal(pd_sim_compare(&m, p, 0.3, NULL, res, err, sizeof err), 0);
    double ref = res[PD_SIM_FIRST_TOUCH].out.makespan;
    NEAR(res[PD_SIM_HOT_FIRST].out.makespan, ref, 1e-9);
    NEAR(res[PD_SIM_GREEDY].out.makespan, ref, 1e-9);
    NEAR(res[PD_SIM_EXACT].out.makespan, ref, 1e-9);
    assert_true(res[PD_SIM_MEMORY_MODE].out.makespan >= ref);
    pd_sim_results_free(res);
    pd_sim_profile_free(p);
}

static void test_profile_round_trip(void **state)
{
    (void)state;
    int pages[] = {3, 2};
    double acc[] = {7, 11};
    pd_sim_profile *p = synthetic(2, pages, acc, PD_PATTERN_STENCIL, (double[]){0.25, 0.5});
    p->tasks[1].writes[0] = 5; /* task 1 writes a page of object 0 */
    char path[] = "/tmp/pd_sim_profile_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    char err[512] = "";
    assert_int_equal(pd_sim_profile_save(p, path, err, sizeof err), 0);
    pd_sim_profile *q = pd_sim_profile_load(path, err, sizeof err);
    assert_non_null(q);
    assert_string_equal(q->workload, "synth");
    assert_int_equal(q->ntasks, 2);
    assert_int_equal(q->nobjects, 2);
    assert_int_equal(q->npages, 5);
    assert_int_equal(q->objects[1].pattern, PD_PATTERN_STENCIL);
    for (int t = 0; t < 2; t++) {
        NEAR(q->tasks[t].compute_s, p->tasks[t].compute_s, 1e-12);
        assert_memory_equal(q->tasks[t].reads, p->tasks[t].reads, 5 * sizeof(uint64_t));
        assert_memory_equal(q->tasks[t].writes, p->tasks[t].writes, 5 * sizeof(uint64_t));
    }
    pd_sim_profile_free(q);
    pd_sim_profile_free(p);
    /* bad files name what is wrong */
    static const struct { const char *text, *msg; } bad[] = {
        {"{\"format\": \"other\"}", "paddiser-sim-profile"},
        {"{\"format\": \"paddiser-sim-profile\", \"version\": 1, \"objects\": [{\"name\": \"a\", \"bytes\": 4096, \"pattern\": \"zigzag\"}], \"tasks\": [{}]}", "zigzag"},
        {"{\"format\": \"paddiser-sim-profile\", \"version\": 1, \"objects\": [{\"name\": \"a\", \"bytes\": 4096}], \"tasks\": [{\"time_s\": 1, \"compute_s\": 1, \"pages\": [[0, 1, 1, 1]]}]}", "beyond object a"},
        {"{\"format\": \"paddiser-sim-profile\", \"version\": 1, \"objects\": [{\"name\": \"a\", \"bytes\": 4096}], \"tasks\": [{\"time_s\": -1, \"compute_s\": 1, \"pages\": []}]}", "time_s"},
        {"{\"format\": \"paddiser-sim-profile\", \"version\": 4}", "version"},
        {"{\"format\": \"paddiser-sim-profile\", \"version\": 1, \"objects\": [{\"name\": \"big\", \"bytes\": 9000000000000000}], \"tasks\": [{}]}", "exceed"},
        {"not json", "line 1"},
    };
    for (size_t k = 0; k < PD_ARRAY_LEN(bad); k++) {
        assert_int_equal(pd_write_file(path, bad[k].text, strlen(bad[k].text)), 0);
        err[0] = 0;
        assert_null(pd_sim_profile_load(path, err, sizeof err));
        if (!strstr(err, bad[k].msg))
            fail_msg("case %zu: '%s' lacks '%s'", k, err, bad[k].msg);
    }
    assert_null(pd_sim_profile_load("/nonexistent/p.json", err, sizeof err));
    assert_non_null(strstr(err, "/nonexistent/p.json"));
    unlink(path);
}

static void test_profile_predict_from_base(void **state)
{
    (void)state;
    int pb[] = {2}, pn[] = {4}, po[] = {3, 3};
    double ab[] = {10}, an[] = {1}, ao[] = {1, 1};
    pd_sim_profile *base = synthetic(1, pb, ab, PD_PATTERN_STREAM, (double[]){0.5});
    pd_sim_profile *shape = synthetic(1, pn, an, PD_PATTERN_STREAM, NULL);
    base->tasks[0].reads[1] = 30; /* the second half is hotter */
    char err[256] = "";
    pd_sim_profile *p = pd_sim_profile_predict(base, shape, err, sizeof err);
    assert_non_null(p);
    /* twice the size: each base page spreads over two new pages, total doubles */
    uint64_t want[] = {10, 10, 30, 30};
    assert_memory_equal(p->tasks[0].reads, want, sizeof want);
    NEAR(p->tasks[0].compute_s, 1.0, 1e-12); /* 0.5 x (80 / 40) */
    pd_sim_profile_free(p);
    pd_sim_profile *other = synthetic(2, po, ao, PD_PATTERN_STREAM, NULL);
    assert_null(pd_sim_profile_predict(base, other, err, sizeof err));
    assert_non_null(strstr(err, "differ"));
    pd_sim_profile_free(other);
    pd_sim_profile_free(shape);
    pd_sim_profile_free(base);
}

static void test_count_range_pages(void **state)
{
    (void)state;
    pd_wl_ctx ctx = {0};
    assert_int_equal(pd_wl_tasks(&ctx, "t", "tiny", 1), 0);
    static char buf[3 * PD_SIM_PAGE];
    assert_int_equal(pd_wl_object(&ctx, "buf", buf, sizeof buf, PD_PATTERN_STREAM, 8), 0);
    assert_int_equal(pd_sim_profile_alloc_counts(ctx.prof), 0);
    ctx.counting = 1;
    pd_wl_rd_range(&ctx, 0, 0, 4032, 128);   /* lines 63 and 64: one per page */
    pd_wl_wr_range(&ctx, 0, 0, 0, 3 * PD_SIM_PAGE); /* 64 lines per page */
    pd_wl_rd(&ctx, 0, 0, 2 * PD_SIM_PAGE + 5);
    uint64_t *r = ctx.prof->tasks[0].reads, *w = ctx.prof->tasks[0].writes;
    assert_int_equal(r[0], 1);
    assert_int_equal(r[1], 1);
    assert_int_equal(r[2], 1);
    assert_int_equal(w[0], 64);
    assert_int_equal(w[2], 64);
    pd_sim_profile_free(ctx.prof);
    free(ctx.task_cpu);
    free(ctx.obj_addr);
}

static void test_workloads_tiny(void **state)
{
    (void)state;
    for (int k = 0; pd_workloads[k]; k++) {
        char err[256] = "";
        pd_sim_profile *p = pd_wl_profile(pd_workloads[k], "tiny", 1, err, sizeof err);
        if (!p)
            fail_msg("%s: %s", pd_workloads[k]->name, err);
        assert_int_equal(p->ntasks, 8);
        for (int t = 0; t < p->ntasks; t++) {
            assert_true(pd_sim_task_accesses(p, t) > 0);
            assert_true(p->tasks[t].time_s >= 0);
            assert_true(p->tasks[t].compute_s >= 0.1 * p->tasks[t].time_s - 1e-15);
        }
        if (!strcmp(p->workload, "stencil")) {
            /* tiny: 16x16 planes (32 lines), slab 0 is 2 planes, 2 sweeps */
            uint64_t wsum = 0;
            for (size_t g = 0; g < p->npages; g++)
                wsum += p->tasks[0].writes[g];
            assert_int_equal(wsum, 2 * 2 * 32);
        }
        pd_sim_profile_free(p);
    }
    char err[256] = "";
    for (int k = 0; pd_workloads[k]; k++)
        if (pd_wl_verify(pd_workloads[k], "tiny", err, sizeof err) != 0)
            fail_msg("%s: %s", pd_workloads[k]->name, err);
    assert_null(pd_wl_profile(&pd_wl_bfs, "huge", 1, err, sizeof err));
    assert_non_null(strstr(err, "huge"));
}

/* The workloads drive libpaddiser: objects registered, tasks marked, one
 * sync point; the sampled accesses come back per object and task. */
static void test_runtime_sampling_check(void **state)
{
    (void)state;
    char err[256] = "";
    pd_wl_sampling s;
    setenv("PADDISER_QUIET", "1", 1);
    if (pd_wl_sampling_check(&pd_wl_stencil, "tiny", &s, err, sizeof err) != 0)
        fail_msg("sampling check: %s", err);
    assert_int_equal(s.nobjects, 3);
    assert_int_equal(s.ntasks, 8);
    assert_string_equal(s.names[0], "grid_a");
    for (int o = 0; o < s.nobjects; o++)
        assert_true(s.obj_tv[o] >= 0 && s.obj_tv[o] <= 1);
    double e = 0;
    for (int k = 0; k < s.nobjects * s.ntasks; k++)
        e += s.exact[k], assert_true(s.sampled[k] >= 0);
    assert_true(e > 0);
    pd_wl_sampling_free(&s);
    /* the runtime is finalised: a second check works */
    assert_int_equal(pd_wl_sampling_check(&pd_wl_bfs, "tiny", &s, err, sizeof err), 0);
    pd_wl_sampling_free(&s);
}

/* libpaddiser's own placement through the simulated backend: within the
 * capacity, and nothing placed without capacity. */
static void test_runtime_placement(void **state)
{
    (void)state;
    char err[256] = "";
    setenv("PADDISER_QUIET", "1", 1);
    pd_sim_profile *p = pd_wl_profile(&pd_wl_stencil, "tiny", 1, err, sizeof err);
    assert_non_null(p);
    double *fast = malloc(p->npages * sizeof *fast), pred = -1;
    size_t cap = p->npages / 2 * PD_SIM_PAGE;
    pd_wl_runtime_decision dec = {.decided = -1};
    if (pd_wl_runtime_placement(&pd_wl_stencil, "tiny", cap, PD_PLANNER_EXACT, p, fast, &pred, &dec, err, sizeof err) != 0)
        fail_msg("runtime placement: %s", err);
    size_t n = 0;
    for (size_t g = 0; g < p->npages; g++)
        n += fast[g] > 0;
    assert_true(n * PD_SIM_PAGE <= cap);
    assert_true(pred >= 0);
    /* the decision of its one sync point: a plan that moved pages moved
     * at most the capacity's in (and as many out) */
    assert_true(dec.decided == 0 || dec.decided == 1);
    if (dec.decided && !dec.kept)
        assert_true(dec.pages_moved <= 2 * (cap / PD_SIM_PAGE));
    if (dec.decided)
        assert_true(dec.current_s >= 0 && dec.planned_s >= 0 && dec.cost_s >= 0);
    assert_int_equal(pd_wl_runtime_placement(&pd_wl_stencil, "tiny", 100, PD_PLANNER_GREEDY, p, fast, &pred, NULL, err, sizeof err), 0);
    for (size_t g = 0; g < p->npages; g++)
        assert_true(fast[g] == 0);
    free(fast);
    pd_sim_profile_free(p);
}

/* The study charges every row's moves at the presets' cited throughput
 * (or --migrate-gbs), tells the runtime that throughput through
 * PADDISER_MIGRATE_BW while it runs, and leaves the variable as it was. */
static void study_migration_rows(double gbs_cfg, double gbs_want)
{
    char dir[] = "/tmp/pd_sim_study_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char csv[sizeof dir + 16];
    snprintf(csv, sizeof csv, "%s/r.csv", dir);
    const char *wl[] = {"stencil"}, *in[] = {"tiny"}, *tiers[] = {"cxl"};
    double caps[] = {0.5};
    pd_sim_study_cfg cfg = {.workloads = wl, .nworkloads = 1, .inputs = in, .ninputs = 1, .tiers = tiers,
                            .ntiers = 1, .caps = caps, .ncaps = 1, .profile_dir = dir, .reps = 1,
                            .repeats = 1, .csv_path = csv, .command = "test", .migrate_gbs = gbs_cfg};
    char err[512] = "";
    assert_int_equal(pd_sim_study(&cfg, err, sizeof err), 0);
    pd_csv *c = pd_csv_load(csv, err, sizeof err);
    assert_non_null(c);
    int cm = pd_csv_col(c, "migrate_s"), cp = pd_csv_col(c, "moved_pages");
    assert_true(cm >= 0 && cp >= 0 && c->nrows >= 10);
    size_t moving = 0;
    for (size_t i = 0; i < c->nrows; i++) {
        double mig, moved;
        assert_true(pd_parse_double(pd_csv_get(c, i, cm), &mig));
        assert_true(pd_parse_double(pd_csv_get(c, i, cp), &moved));
        NEAR(mig, moved * PD_SIM_PAGE / (gbs_want * 1e9), 1e-6);
        moving += moved > 0;
    }
    assert_true(moving > 0);
    pd_csv_free(c);
    unlink(csv);
    char cmd[sizeof dir + 16];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}

static void test_study_migration_charge(void **state)
{
    (void)state;
    unsetenv("PADDISER_MIGRATE_BW");
    study_migration_rows(0, 3.31);
    assert_null(getenv("PADDISER_MIGRATE_BW")); /* set for the runtime, then removed */
    setenv("PADDISER_MIGRATE_BW", "123", 1);
    study_migration_rows(2.0, 2.0);
    assert_string_equal(getenv("PADDISER_MIGRATE_BW"), "123"); /* the user's is kept */
    unsetenv("PADDISER_MIGRATE_BW");
}

static void test_gen_training(void **state)
{
    (void)state;
    pd_sim_machine m;
    pd_sim_machine_preset("optane", &m);
    int pages[] = {50, 20};
    double acc[] = {100, 300};
    pd_sim_profile *p = synthetic(2, pages, acc, PD_PATTERN_RANDOM, (double[]){0.001, 0.002});
    char path[] = "/tmp/pd_sim_train_XXXXXX";
    int fd = mkstemp(path);
    close(fd);
    char err[256] = "";
    pd_sim_training_stats st;
    assert_int_equal(pd_sim_gen_training(&m, &p, 1, 10, 1, path, &st, err, sizeof err), 0);
    assert_int_equal(st.rows, 20);
    assert_true(st.linear_mape >= 0 && st.linear_mape <= st.linear_max);
    pd_csv *c = pd_csv_load(path, err, sizeof err);
    assert_non_null(c);
    assert_int_equal(c->header.nfields, 14);
    assert_int_equal(pd_csv_col(c, "region"), 0);
    assert_int_equal(pd_csv_col(c, "t_hybrid"), 13);
    assert_int_equal(c->nrows, 20);
    int cr = pd_csv_col(c, "r"), cd = pd_csv_col(c, "t_dram"), cs = pd_csv_col(c, "t_slow"),
        ch = pd_csv_col(c, "t_hybrid");
    for (size_t i = 0; i < c->nrows; i++) {
        double r, td, ts, th;
        assert_true(pd_parse_double(pd_csv_get(c, i, cr), &r));
        assert_true(pd_parse_double(pd_csv_get(c, i, cd), &td));
        assert_true(pd_parse_double(pd_csv_get(c, i, cs), &ts));
        assert_true(pd_parse_double(pd_csv_get(c, i, ch), &th));
        assert_true(r >= 0 && r <= 1);
        assert_true(td <= th * (1 + 1e-9) && th <= ts * (1 + 1e-9));
    }
    pd_csv_free(c);
    unlink(path);
    pd_sim_profile_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tier_presets),
        cmocka_unit_test(test_exec_hand_checked),
        cmocka_unit_test(test_exec_bandwidth_sharing),
        cmocka_unit_test(test_exec_monotone_in_share),
        cmocka_unit_test(test_direct_mapped_conflicts),
        cmocka_unit_test(test_policies_respect_capacity),
        cmocka_unit_test(test_plan_on_eq2_curves),
        cmocka_unit_test(test_policy_names),
        cmocka_unit_test(test_end_to_end_imbalanced),
        cmocka_unit_test(test_dram_control_ties),
        cmocka_unit_test(test_profile_round_trip),
        cmocka_unit_test(test_profile_predict_from_base),
        cmocka_unit_test(test_count_range_pages),
        cmocka_unit_test(test_workloads_tiny),
        cmocka_unit_test(test_runtime_sampling_check),
        cmocka_unit_test(test_runtime_placement),
        cmocka_unit_test(test_gen_training),
        cmocka_unit_test(test_study_migration_charge),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
