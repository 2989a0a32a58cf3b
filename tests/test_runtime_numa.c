/* The runtime on the numa backend, with the backend's system calls replaced
 * by a fake two-node kernel over a real buffer (fixture /sys tree with a
 * slow node): THP handling at registration (MADV_NOHUGEPAGE, seen in
 * /proc/self/smaps), plan-exact placement, and a re-plan on a full fast node:
 * pages leaving the plan go out first, then the new hot pages come in by
 * demoting colder planned ones, with statistics. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "test_tiers_fixture.h"
#include "thp_smaps.h"

#include <errno.h>
#include <numaif.h>
#include <stdint.h>
#include <sys/mman.h>

#include "lib/backend_numa.h"
#include "lib/perf.h"
#include "lib/runtime_internal.h"
#include "paddiser.h"

#define MB (1024ul * 1024ul)
#define PG 4096ul
#define NPAGES 4096 /* the 16 MiB buffer */

static struct {
    uintptr_t base;
    int node[NPAGES];
    int fast_limit; /* pages node 0 holds at most; < 0: no limit */
    int log_node[64], log_count[64], nlog, logging;
    long queried; /* pages asked about (move_pages without nodes) while logging */
} fk;

static long idx(void *p)
{
    uintptr_t a = (uintptr_t)p;
    if (a < fk.base || a >= fk.base + NPAGES * PG || (a - fk.base) % PG)
        return -1;
    return (long)((a - fk.base) / PG);
}

static int on_fast(void)
{
    int n = 0;
    for (int i = 0; i < NPAGES; i++)
        n += fk.node[i] == 0;
    return n;
}

static long fake_move_pages(void *ctx, unsigned long count, void **pages, const int *nodes, int *status, int flags)
{
    (void)ctx;
    (void)flags;
    if (!nodes && fk.logging)
        fk.queried += (long)count;
    if (nodes && fk.logging && fk.nlog < 64) {
        fk.log_node[fk.nlog] = nodes[0];
        fk.log_count[fk.nlog++] = (int)count;
    }
    long not_moved = 0;
    for (unsigned long k = 0; k < count; k++) {
        long i = idx(pages[k]);
        if (i < 0) {
            status[k] = -EFAULT;
            continue;
        }
        if (!nodes || fk.node[i] == nodes[k]) {
            status[k] = fk.node[i];
            continue;
        }
        if (nodes[k] == 0 && fk.fast_limit >= 0 && on_fast() >= fk.fast_limit) {
            status[k] = -ENOMEM;
            not_moved++;
            continue;
        }
        fk.node[i] = nodes[k];
        status[k] = nodes[k];
    }
    return not_moved;
}

static long fake_mbind(void *ctx, void *addr, unsigned long len, int mode, const unsigned long *mask,
                       unsigned long maxnode, unsigned flags)
{
    (void)ctx;
    (void)mode;
    (void)maxnode;
    int node = mask[0] & 1 ? 0 : 1;
    for (uintptr_t a = (uintptr_t)addr; a < (uintptr_t)addr + len; a += PG) {
        long i = idx((void *)a);
        if (i >= 0 && (flags & MPOL_MF_MOVE))
            fk.node[i] = node;
    }
    return 0;
}

static const pd_numa_syscalls fake_sys = {fake_move_pages, fake_mbind, NULL};

static double fake_now;
static double fake_clock(void) { return fake_now; }

static void sweep(unsigned char *p, size_t len, int passes)
{
    for (int k = 0; k < passes; k++)
        for (size_t i = 0; i < len; i += 64)
            ((volatile unsigned char *)p)[i] += 1;
}

static void task(int id, unsigned char *p, size_t len, int passes, double seconds)
{
    for (int k = 0; k < passes; k++) {
        assert_int_equal(pd_task_begin(id), PD_OK);
        sweep(p, len, 1);
        fake_now += seconds / passes;
        assert_int_equal(pd_task_end(id), PD_OK);
    }
}

static int fast_in(unsigned char *buf, size_t off, size_t len)
{
    int n = 0;
    for (size_t i = off / PG; i < (off + len) / PG; i++)
        n += fk.node[i] == 0;
    return n;
}

static unsigned char *start(size_t capacity, pd_thp_mode thp)
{
    fx_two_node();
    unsigned char *buf = aligned_alloc(2 * MB, 16 * MB);
    assert_non_null(buf);
    memset(buf, 0, 16 * MB);
    memset(&fk, 0, sizeof fk);
    fk.base = (uintptr_t)buf;
    fk.fast_limit = -1; /* every page starts on node 0, where it was touched */
    pd_perf_set_clock(fake_clock);
    /* Task times are fake, instance lengths real (microseconds): an
     * allowance that is a share of the instance's length would sample
     * nothing past each task's first begin. These tests are about where
     * pages go, so every phase is sampled (the fixed allowance). */
    setenv("PADDISER_SAMPLE_ALLOWANCE_PCT", "0", 1);
    /* Nor is the sampling budget their subject: it is real time (the cost
     * of the protection passes) against fake task times, so on a busy
     * machine it skipped the passes that tell a 12-pass range from a
     * 1-pass one, and the demotion order came out of ties. */
    setenv("PADDISER_SAMPLE_BUDGET_PCT", "0", 1);
    pd_options o;
    pd_options_default(&o);
    o.backend = PD_BACKEND_NUMA;
    o.fast_capacity = capacity;
    o.planner = PD_PLANNER_GREEDY;
    o.thp = thp;
    assert_int_equal(pd_init(&o), PD_OK);
    assert_string_equal(rt.backend->name, "numa");
    assert_int_equal(pd_backend_numa_set_syscalls(rt.backend, &fake_sys), 0);
    return buf;
}

static void test_register_turns_thp_off(void **state)
{
    (void)state;
    unsigned char *buf = start(10 * MB, PD_THP_AUTO);
    /* A page-unaligned object: only its whole pages are advised. */
    assert_true(pd_object_register("grid", buf + 100, 16 * MB - 100, NULL) >= 0);
    thp_smaps sm;
    assert_int_equal(thp_smaps_read(buf + PG, 16 * MB - 2 * PG, &sm), 0);
    assert_true(sm.vmas >= 1);
    assert_true(sm.all_nh);
    assert_int_equal(sm.anon_huge_kb, 0);
    assert_false(sm.any_eligible);
    pd_profile_info info;
    assert_int_equal(pd_profile_info_get(&info), PD_OK);
    assert_string_equal(info.thp, "off");
    assert_int_equal(info.thp_off_bytes, 16 * MB - PG);
    assert_string_equal(info.thp_note, "");
    assert_int_equal(on_fast(), 0); /* placed on the slow node */
    assert_int_equal(pd_finalize(), PD_OK);
    free(buf);
}

/* Node 0 full after the first plan; the second moves task 0 to new pages
 * and gives task 1 a new hot range while keeping its old one, colder. */
static void test_full_fast_node_demotes_colder_planned_pages(void **state)
{
    (void)state;
    unsigned char *buf = start(10 * MB, PD_THP_AUTO);
    assert_true(pd_object_register("grid", buf, 16 * MB, NULL) >= 0);
    task(0, buf, 2 * MB, 12, 0.012);
    task(1, buf + 4 * MB, 4 * MB, 12, 0.012);
    assert_int_equal(pd_sync_point(), PD_OK);
    pd_task_plan plan[2];
    assert_int_equal(pd_plan_query(plan, 2, NULL), 2);
    size_t planned = plan[0].dram_bytes + plan[1].dram_bytes;
    assert_int_equal((size_t)on_fast() * PG, planned);
    assert_int_equal(fast_in(buf, 0, 2 * MB) + fast_in(buf, 4 * MB, 4 * MB), on_fast());
    int old_fast = fast_in(buf, 4 * MB, 4 * MB);
    assert_true(old_fast > 0);
    assert_int_equal(fast_in(buf, 0, 2 * MB), 512); /* task 0's whole range */

    fk.fast_limit = on_fast(); /* the rest of node 0 is someone else's now */
    fk.logging = 1;
    task(0, buf + 2 * MB, 2 * MB, 12, 0.012);
    task(1, buf + 4 * MB, 4 * MB, 1, 0.001);
    task(1, buf + 10 * MB, 4 * MB, 12, 0.012);
    assert_int_equal(pd_sync_point(), PD_OK);
    fk.logging = 0;

    pd_profile_info info;
    assert_int_equal(pd_profile_info_get(&info), PD_OK);
    int new_fast = fast_in(buf, 10 * MB, 4 * MB), old_now = fast_in(buf, 4 * MB, 4 * MB);
    int t0_old = fast_in(buf, 0, 2 * MB), t0_new = fast_in(buf, 2 * MB, 2 * MB);
    print_message("fast pages: task 0 old %d new %d, task 1 old %d (was %d) new %d; demoted %zu, failed %zu\n",
                  t0_old, t0_new, old_now, old_fast, new_fast, info.pages_demoted, info.pages_failed);
    /* Pages leaving the plan went out before anything came in. */
    assert_true(fk.nlog >= 2);
    assert_int_equal(fk.log_node[0], 1);
    assert_int_equal(fk.log_count[0], 512); /* task 0's old range */
    assert_int_equal(fk.log_node[1], 0);
    assert_int_equal(t0_old, 0);
    /* Node 0 stays full with the best-ranked planned pages: ranks within
     * each task's plan (task 1: new hot range first, then the old one)
     * below 1536 / (planned pages), so a shortfall trims both tasks alike;
     * the room came from task 1's old range. */
    assert_int_equal(on_fast(), fk.fast_limit);
    assert_int_equal(new_fast, 1024);
    pd_task_plan again[2];
    assert_int_equal(pd_plan_query(again, 2, NULL), 2);
    double p0 = (double)(again[0].task == 0 ? again[0] : again[1]).dram_bytes / PG;
    double p1 = (double)(again[0].task == 1 ? again[0] : again[1]).dram_bytes / PG;
    double kept = fk.fast_limit / (p0 + p1);
    print_message("planned pages: task 0 %.0f, task 1 %.0f; kept fraction %.3f\n", p0, p1, kept);
    assert_true(p1 > 1024); /* the new range and some of the old one */
    assert_true(fabs(t0_new - kept * p0) <= 2);
    assert_true(fabs(new_fast + old_now - kept * p1) <= 2);
    assert_true(info.pages_demoted > 0);
    assert_int_equal(info.bytes_demoted, info.pages_demoted * PG);
    assert_int_equal(old_fast - old_now, (int)info.pages_demoted);
    assert_int_equal(t0_new + old_now + new_fast, on_fast());
    /* Displaced planned pages count as failed; nothing else failed. */
    assert_true(info.pages_failed >= info.pages_demoted);
    assert_int_equal(pd_finalize(), PD_OK);
    free(buf);
}

static int logged_pages(void)
{
    int n = 0;
    for (int i = 0; i < fk.nlog; i++)
        n += fk.log_count[i];
    return n;
}

/* A sync point submits only what changes: with the same input and the same
 * times, the second and third plans move nothing and submit no page
 * (before, every registered page was submitted each time and the backend
 * asked the kernel about each). When one task's hot range moves, only the
 * pages that change tier are submitted, not the 4096 registered ones. */
static void test_sync_point_submits_only_changes(void **state)
{
    (void)state;
    unsigned char *buf = start(6 * MB, PD_THP_AUTO);
    assert_true(pd_object_register("grid", buf, 16 * MB, NULL) >= 0);
    int before[NPAGES];
    for (int round = 0; round < 3; round++) {
        memcpy(before, fk.node, sizeof before);
        fk.nlog = 0;
        fk.queried = 0;
        fk.logging = 1;
        task(0, buf, 2 * MB, 12, 0.012);
        task(1, buf + 4 * MB, 4 * MB, 12, 0.012);
        assert_int_equal(pd_sync_point(), PD_OK);
        fk.logging = 0;
        int changed = 0;
        for (int i = 0; i < NPAGES; i++)
            changed += fk.node[i] != before[i];
        print_message("round %d: %d pages changed tier, %d submitted in %d calls, %ld asked about, %d on fast\n",
                      round, changed, logged_pages(), fk.nlog, fk.queried, on_fast());
        if (round == 0)
            assert_true(on_fast() > 0);
        else {
            assert_int_equal(changed, 0);
            assert_int_equal(logged_pages(), 0);
            /* What is still asked about: the tier of the sampled regions,
             * for each instance's measured DRAM share (profile.c), a few
             * dozen here; before, the 4096 registered pages and more. */
            assert_true(fk.queried < NPAGES / 16);
        }
    }
    /* task 0 now works on the next 2 MB: its old pages go, its new ones come */
    memcpy(before, fk.node, sizeof before);
    int fast_before = on_fast();
    fk.nlog = 0;
    fk.queried = 0;
    fk.logging = 1;
    task(0, buf + 2 * MB, 2 * MB, 12, 0.012);
    task(1, buf + 4 * MB, 4 * MB, 12, 0.012);
    assert_int_equal(pd_sync_point(), PD_OK);
    fk.logging = 0;
    int changed = 0;
    for (int i = 0; i < NPAGES; i++)
        changed += fk.node[i] != before[i];
    print_message("moved range: %d pages changed tier, %d submitted, %ld asked about, %d on fast (was %d)\n", changed,
                  logged_pages(), fk.queried, on_fast(), fast_before);
    assert_true(changed > 0);
    assert_int_equal(logged_pages(), changed);
    assert_true(fk.queried < changed + NPAGES / 16); /* the backend asks about each page it moves */
    assert_true(fast_in(buf, 2 * MB, 2 * MB) > 0);
    assert_int_equal(pd_finalize(), PD_OK);
    free(buf);
}

/* PD_THP_KEEP: no advice, and the plan is whole 2 MB units. */
static void test_keep_plans_2mb_units(void **state)
{
    (void)state;
    unsigned char *buf = start(5 * MB, PD_THP_KEEP);
    assert_true(pd_object_register("grid", buf, 16 * MB, NULL) >= 0);
    thp_smaps sm;
    assert_int_equal(thp_smaps_read(buf, 16 * MB, &sm), 0);
    assert_false(sm.all_nh);
    task(0, buf, 2 * MB, 1, 0.001);
    task(1, buf + 4 * MB, 8 * MB, 12, 0.012);
    assert_int_equal(pd_sync_point(), PD_OK);
    pd_profile_info info;
    assert_int_equal(pd_profile_info_get(&info), PD_OK);
    assert_string_equal(info.thp, "keep");
    assert_int_equal(info.thp_off_bytes, 0);
    int fast = on_fast();
    assert_true(fast > 0 && (size_t)fast * PG <= 5 * MB);
    for (int u = 0; u < NPAGES / 512; u++) { /* each 2 MB unit all fast or all slow */
        int n = fast_in(buf, (size_t)u * 2 * MB, 2 * MB);
        assert_true(n == 0 || n == 512);
    }
    assert_int_equal(pd_finalize(), PD_OK);
    free(buf);
}

/* Other backends move no real pages: AUTO leaves THP alone; OFF and the
 * environment still apply. */
static void test_thp_modes_with_sim(void **state)
{
    (void)state;
    size_t len = 8 * MB;
    for (int mode = 0; mode < 3; mode++) {
        unsigned char *buf = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        assert_true(buf != MAP_FAILED);
        pd_options o;
        pd_options_default(&o);
        o.backend = PD_BACKEND_SIM;
        o.thp = mode == 1 ? PD_THP_OFF : PD_THP_AUTO;
        if (mode == 2)
            setenv("PADDISER_THP", "off", 1);
        assert_int_equal(pd_init(&o), PD_OK);
        unsetenv("PADDISER_THP");
        assert_true(pd_object_register("x", buf, len, NULL) >= 0);
        thp_smaps sm;
        assert_int_equal(thp_smaps_read(buf, len, &sm), 0);
        pd_profile_info info;
        assert_int_equal(pd_profile_info_get(&info), PD_OK);
        if (mode == 0) {
            assert_string_equal(info.thp, "system");
            assert_false(sm.all_nh);
            assert_int_equal(info.thp_off_bytes, 0);
        } else {
            assert_string_equal(info.thp, "off");
            assert_true(sm.all_nh);
            assert_int_equal(info.thp_off_bytes, len);
        }
        assert_int_equal(pd_finalize(), PD_OK);
        munmap(buf, len);
    }
    pd_options bad;
    pd_options_default(&bad);
    bad.thp = (pd_thp_mode)7;
    assert_int_equal(pd_init(&bad), PD_EINVAL);
}

static int setup(void **state)
{
    (void)state;
    fx_begin();
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    pd_finalize();
    pd_perf_set_clock(NULL);
    fx_end();
    return 0;
}

int main(void)
{
    /* Where a plan's pages go, not whether a plan pays for its moves
     * (test_runtime_migrate_rule.c): every plan that gains at all is
     * applied, whatever the sampled heat of a slow (sanitised) run. */
    setenv("PADDISER_MIGRATE_BW", "1e15", 1);
    setenv("PADDISER_MIN_GAIN", "0", 1);
    /* m fixed: fake or emulated times do not depend on the share, and a
     * learned m near 0 would flatten every curve (test_runtime_mem_bound.c) */
    setenv("PADDISER_MEM_BOUND", "0.5", 1);
    setenv("PADDISER_QUIET", "1", 1);
    /* Registered pages start on the slow node here: these tests are about
     * promotion, demotion and the budget from there (the default start,
     * first touch, is checked in the QEMU guest and with the sim backend). */
    setenv("PADDISER_START_TIER", "slow", 1);
    (void)fx_single_node;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_register_turns_thp_off, setup, teardown),
        cmocka_unit_test_setup_teardown(test_full_fast_node_demotes_colder_planned_pages, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sync_point_submits_only_changes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_keep_plans_2mb_units, setup, teardown),
        cmocka_unit_test_setup_teardown(test_thp_modes_with_sim, setup, teardown),
    };
    return cmocka_run_group_tests_name("runtime_numa", tests, NULL, NULL);
}
