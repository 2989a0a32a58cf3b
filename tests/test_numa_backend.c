/* numa backend (src/lib/backend_numa.c): construction against fixture sysfs
 * trees, and migration through a fake kernel injected at the system-call
 * seam: per-page EBUSY / ENOMEM / EFAULT, batching, demotion order, budget. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "test_tiers_fixture.h"

#include <errno.h>
#include <numaif.h>
#include <stdint.h>

#include "lib/backend.h"
#include "lib/backend_numa.h"

#define FAKE_PAGES 4096
#define PAGE ((size_t)sysconf(_SC_PAGESIZE))

/* A fake kernel: FAKE_PAGES pages from base; node per page. */
typedef struct {
    uintptr_t base;
    int node[FAKE_PAGES];
    int mapped[FAKE_PAGES];  /* 0: -EFAULT, 1: present, 2: mapped but not present (-ENOENT) */
    int busy_left[FAKE_PAGES];
    int fast_limit;          /* pages node 0 can hold; < 0 unlimited */
    int boost;               /* after a refusal, node 0 keeps this many more pages free */
    int boosted;
    int abort_on_enomem;     /* like the kernel: stop, -1/ENOMEM, later slots untouched */
    int abort_on_busy;       /* like the kernel: stop, return pages not migrated, slots untouched */
    int fail_errno;          /* whole call fails with this errno */
    int move_calls, query_calls, max_count;
    int mbind_calls, mbind_mode, mbind_node;
    unsigned mbind_flags;
} fake_kernel;

static fake_kernel fk;

static long page_index(void *p)
{
    uintptr_t a = (uintptr_t)p;
    if (a < fk.base || (a - fk.base) % PAGE)
        return -1;
    size_t i = (a - fk.base) / PAGE;
    return i < FAKE_PAGES ? (long)i : -1;
}

static int on_fast(void)
{
    int n = 0;
    for (int i = 0; i < FAKE_PAGES; i++)
        n += fk.mapped[i] == 1 && fk.node[i] == 0;
    return n;
}

static long fake_move_pages(void *ctx, unsigned long count, void **pages, const int *nodes, int *status, int flags)
{
    (void)ctx;
    if (fk.fail_errno) {
        errno = fk.fail_errno;
        return -1;
    }
    if ((int)count > fk.max_count)
        fk.max_count = (int)count;
    if (!nodes)
        fk.query_calls++;
    else {
        fk.move_calls++;
        assert_int_equal(flags, MPOL_MF_MOVE);
    }
    long not_moved = 0;
    for (unsigned long k = 0; k < count; k++) {
        long i = page_index(pages[k]);
        if (i < 0 || fk.mapped[i] == 0) {
            status[k] = -EFAULT;
            continue;
        }
        if (fk.mapped[i] == 2) {
            status[k] = -ENOENT;
            continue;
        }
        if (!nodes || fk.node[i] == nodes[k]) {
            status[k] = fk.node[i];
            continue;
        }
        if (fk.busy_left[i] > 0) {
            fk.busy_left[i]--;
            if (fk.abort_on_busy)
                return (long)(count - k);
            status[k] = -EBUSY;
            not_moved++;
            continue;
        }
        if (nodes[k] == 0 && fk.fast_limit >= 0 && on_fast() >= fk.fast_limit - (fk.boosted ? fk.boost : 0)) {
            fk.boosted = 1;
            if (fk.abort_on_enomem) {
                errno = ENOMEM;
                return -1;
            }
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
    fk.mbind_calls++;
    fk.mbind_mode = mode;
    fk.mbind_flags = flags;
    fk.mbind_node = -1;
    for (unsigned long n = 0; n + 1 < maxnode; n++)
        if (mask[n / 64] & (1UL << (n % 64)))
            fk.mbind_node = (int)n;
    long first = page_index(addr);
    assert_true(first >= 0);
    for (size_t i = (size_t)first; i < (size_t)first + len / PAGE && i < FAKE_PAGES; i++)
        if (fk.mapped[i] == 1 && (flags & MPOL_MF_MOVE))
            fk.node[i] = fk.mbind_node;
    return 0;
}

static const pd_numa_syscalls fake_sys = {fake_move_pages, fake_mbind, NULL};

static void *pg(int i) { return (void *)(fk.base + (size_t)i * PAGE); }

/* Fresh fake kernel, all pages present on node `node`, and a backend 0/1. */
static pd_backend *fake_backend(int node, size_t capacity)
{
    memset(&fk, 0, sizeof fk);
    fk.base = (uintptr_t)1 << 32;
    fk.fast_limit = -1;
    for (int i = 0; i < FAKE_PAGES; i++) {
        fk.node[i] = node;
        fk.mapped[i] = 1;
    }
    return fx_numa_backend(capacity, &fake_sys);
}

static void test_create_needs_slow_tier(void **state)
{
    (void)state;
    fx_single_node();
    errno = 0;
    assert_null(pd_backend_numa_create(-1, -1, 0));
    assert_int_equal(errno, ENODEV);
    assert_null(pd_backend_numa_create(0, 1, 0)); /* node 1 does not exist */
    assert_int_equal(errno, ENODEV);

    fx_two_node();
    pd_backend *b = pd_backend_numa_create(-1, -1, 0);
    assert_non_null(b);
    assert_string_equal(b->name, "numa");
    int fast = -1, slow = -1;
    assert_int_equal(pd_backend_numa_nodes(b, &fast, &slow), 0);
    assert_int_equal(fast, 0);
    assert_int_equal(slow, 1);
    /* Without a budget, free fast memory is the node's MemFree. */
    assert_true(b->fast_free(b) == 4ULL * 1024 * 1024 * 1024);
    b->destroy(b);

    b = pd_backend_numa_create(0, 1, 1 << 20);
    assert_non_null(b);
    assert_int_equal(b->fast_free(b), 1 << 20);
    b->destroy(b);

    assert_null(pd_backend_numa_create(1, 1, 0));
    assert_int_equal(errno, EINVAL);
    assert_null(pd_backend_numa_create(0, 5, 0));
    assert_int_equal(errno, ENODEV);
    fx_put("devices/system/node/node1/cpulist", "bad\n");
    assert_null(pd_backend_numa_create(-1, -1, 0));
    assert_int_equal(errno, EIO);

    pd_backend other = {.name = "sim"};
    assert_int_equal(pd_backend_numa_set_syscalls(&other, &fake_sys), -1);
    assert_int_equal(errno, EINVAL);
}

static void test_move_and_query(void **state)
{
    (void)state;
    pd_backend *b = fake_backend(1, 0);
    void *pages[8];
    for (int i = 0; i < 8; i++)
        pages[i] = pg(i);
    fk.node[7] = 0; /* already fast */
    pd_migrate_stats st = {0};
    assert_int_equal(b->move(b, pages, 8, PD_TIER_FAST, &st), 0);
    assert_int_equal(st.pages_requested, 8);
    assert_int_equal(st.pages_moved, 8);
    assert_int_equal(st.bytes_moved, 7 * PAGE); /* page 7 did not move */
    assert_int_equal(st.pages_failed, 0);
    for (int i = 0; i < 8; i++)
        assert_int_equal(fk.node[i], 0);

    int tiers[9];
    void *q[9] = {pg(0), pg(8), (void *)8, pg(1), pg(2), pg(3), pg(4), pg(5), pg(6)};
    fk.node[6] = 3; /* a third node */
    assert_int_equal(b->query(b, q, 9, tiers), 0);
    assert_int_equal(tiers[0], PD_TIER_FAST);
    assert_int_equal(tiers[1], PD_TIER_SLOW);
    assert_int_equal(tiers[2], -EFAULT);
    assert_int_equal(tiers[8], -EXDEV);

    errno = 0;
    assert_int_equal(b->move(b, pages, 8, 7, &st), -1);
    assert_int_equal(errno, EINVAL);
    b->destroy(b);
}

static void test_ebusy_retried_then_counted(void **state)
{
    (void)state;
    pd_backend *b = fake_backend(1, 0);
    void *pages[4] = {pg(0), pg(1), pg(2), pg(3)};
    fk.busy_left[1] = 1;                         /* busy on the first try only */
    fk.busy_left[2] = PD_NUMA_EBUSY_RETRIES;     /* succeeds on the last attempt */
    fk.busy_left[3] = PD_NUMA_EBUSY_RETRIES + 1; /* never within the bound */
    pd_migrate_stats st = {0};
    assert_int_equal(b->move(b, pages, 4, PD_TIER_FAST, &st), 0);
    assert_int_equal(st.pages_moved, 3);
    assert_int_equal(st.ebusy, 1);
    assert_int_equal(st.pages_failed, 1);
    assert_int_equal(fk.move_calls, PD_NUMA_EBUSY_RETRIES + 1);
    assert_int_equal(fk.node[3], 1);
    assert_int_equal(fk.busy_left[3], 0);
    b->destroy(b);
}

static void test_unmapped_pages_counted_not_fatal(void **state)
{
    (void)state;
    pd_backend *b = fake_backend(0, 0);
    fk.mapped[1] = 0; /* not mapped */
    fk.mapped[2] = 2; /* mapped, never touched */
    void *pages[4] = {pg(0), pg(1), pg(2), pg(3)};
    pd_migrate_stats st = {0};
    assert_int_equal(b->move(b, pages, 4, PD_TIER_SLOW, &st), 0);
    assert_int_equal(st.pages_moved, 2);
    assert_int_equal(st.efault, 2);
    assert_int_equal(st.pages_failed, 2);
    assert_int_equal(st.bytes_moved, 2 * PAGE);
    assert_int_equal(fk.node[3], 1);
    b->destroy(b);
}

static void test_batches_of_1024(void **state)
{
    (void)state;
    pd_backend *b = fake_backend(1, 0);
    enum { N = 2500 };
    void **pages = malloc(N * sizeof *pages);
    for (int i = 0; i < N; i++)
        pages[i] = pg(i);
    pd_migrate_stats st = {0};
    assert_int_equal(b->move(b, pages, N, PD_TIER_FAST, &st), 0);
    assert_int_equal(st.pages_moved, N);
    assert_int_equal(st.bytes_moved, N * PAGE);
    assert_int_equal(fk.max_count, PD_NUMA_BATCH);
    assert_int_equal(fk.move_calls, 3);
    assert_int_equal(fk.query_calls, 3);
    free(pages);
    b->destroy(b);
}

static void test_whole_call_refused(void **state)
{
    (void)state;
    pd_backend *b = fake_backend(1, 0);
    void *pages[2] = {pg(0), pg(1)};
    fk.fail_errno = EPERM;
    pd_migrate_stats st = {0};
    errno = 0;
    assert_int_equal(b->move(b, pages, 2, PD_TIER_FAST, &st), -1);
    assert_int_equal(errno, EPERM);
    assert_int_equal(st.pages_requested, 0);
    b->destroy(b);
}

/* The kernel's way with transient failures: the call stops at a busy page and
 * returns how many were not migrated; the untouched slots are retried. */
static void test_kernel_busy_abort_retried(void **state)
{
    (void)state;
    pd_backend *b = fake_backend(1, 0);
    fk.abort_on_busy = 1;
    fk.busy_left[2] = 1;
    fk.busy_left[5] = 2;
    void *pages[8];
    for (int i = 0; i < 8; i++)
        pages[i] = pg(i);
    pd_migrate_stats st = {0};
    assert_int_equal(b->move(b, pages, 8, PD_TIER_FAST, &st), 0);
    assert_int_equal(st.pages_moved, 8);
    assert_int_equal(st.pages_failed, 0);
    assert_int_equal(st.bytes_moved, 8 * PAGE);
    assert_int_equal(fk.move_calls, 4); /* stop at 2, stop at 5, stop at 5, done */
    b->destroy(b);
}

/* The kernel's way: the call fails with ENOMEM and the later status slots
 * stay untouched; pages that did move are still counted as moved. */
static void test_kernel_enomem_abort(void **state)
{
    (void)state;
    pd_backend *b = fake_backend(1, 0);
    fk.fast_limit = 2;
    fk.abort_on_enomem = 1;
    void *pages[5] = {pg(0), pg(1), pg(2), pg(3), pg(4)};
    pd_migrate_stats st = {0};
    assert_int_equal(b->move(b, pages, 5, PD_TIER_FAST, &st), 0);
    assert_int_equal(st.pages_moved, 2);
    assert_int_equal(st.enomem, 3);
    assert_int_equal(st.pages_failed, 3);
    assert_int_equal(on_fast(), 2);
    b->destroy(b);
}

/* Fast node full: the coldest candidates that are on the fast node are
 * demoted, in the caller's order, just enough, then the pages are promoted. */
static void test_promote_demotes_coldest_first(void **state)
{
    (void)state;
    pd_backend *b = fake_backend(1, 0);
    fk.fast_limit = 4;
    for (int i = 10; i < 14; i++)
        fk.node[i] = 0; /* fast node full with pages 10..13 */
    void *promote[3] = {pg(0), pg(1), pg(2)};
    /* coldness order: 20 (already slow: skipped), 12, 10, 13, 11 */
    void *demote[5] = {pg(20), pg(12), pg(10), pg(13), pg(11)};
    pd_migrate_stats st = {0}, dem = {0};
    assert_int_equal(pd_backend_numa_promote(b, promote, 3, demote, 5, &st, &dem), 0);
    assert_int_equal(st.pages_requested, 3);
    assert_int_equal(st.pages_moved, 3);
    assert_int_equal(st.enomem, 0);
    assert_int_equal(st.bytes_moved, 3 * PAGE);
    assert_int_equal(dem.pages_moved, 3);
    assert_int_equal(fk.node[12], 1);
    assert_int_equal(fk.node[10], 1);
    assert_int_equal(fk.node[13], 1);
    assert_int_equal(fk.node[11], 0); /* warmest candidate kept */
    for (int i = 0; i < 3; i++)
        assert_int_equal(fk.node[i], 0);
    b->destroy(b);
}

/* A kernel that raises its watermarks after refusing (watermark boost):
 * demoting just as many as were refused never gets in; doubling does. */
static void test_promote_escalates_demotion(void **state)
{
    (void)state;
    pd_backend *b = fake_backend(1, 0);
    fk.fast_limit = 100;
    fk.boost = 40;
    for (int i = 100; i < 200; i++)
        fk.node[i] = 0;
    void *promote[10], *demote[100];
    for (int i = 0; i < 10; i++)
        promote[i] = pg(i);
    for (int i = 0; i < 100; i++)
        demote[i] = pg(100 + i);
    pd_migrate_stats st = {0}, dem = {0};
    assert_int_equal(pd_backend_numa_promote(b, promote, 10, demote, 100, &st, &dem), 0);
    assert_int_equal(st.pages_moved, 10);
    assert_int_equal(st.enomem, 0);
    assert_int_equal(dem.pages_moved, 10 + 20 + 40); /* rounds of 1x, 2x, 4x the refused */
    for (int i = 100; i < 200; i++)
        assert_int_equal(fk.node[i], i < 170 ? 1 : 0);
    b->destroy(b);
}

static void test_promote_runs_out_of_candidates(void **state)
{
    (void)state;
    pd_backend *b = fake_backend(1, 0);
    fk.fast_limit = 2;
    fk.node[10] = fk.node[11] = 0;
    void *promote[4] = {pg(0), pg(1), pg(2), pg(3)};
    void *demote[1] = {pg(10)};
    pd_migrate_stats st = {0}, dem = {0};
    assert_int_equal(pd_backend_numa_promote(b, promote, 4, demote, 1, &st, &dem), 0);
    assert_int_equal(st.pages_moved, 1);
    assert_int_equal(st.enomem, 3);
    assert_int_equal(dem.pages_moved, 1);
    assert_int_equal(fk.node[11], 0);
    b->destroy(b);
}

/* Through the pd_backend op, pages in both lists: a planned page goes only
 * for a hotter one, counts as refused, and is not promoted back. */
static void test_promote_op_displaces_only_colder_planned_pages(void **state)
{
    (void)state;
    pd_backend *b = fake_backend(1, 0);
    assert_non_null(b->promote);
    fk.fast_limit = 4;
    fk.node[10] = fk.node[11] = fk.node[12] = fk.node[13] = 0;
    void *want[5] = {pg(0), pg(1), pg(11), pg(2), pg(13)};
    void *cold[6] = {pg(12), pg(13), pg(2), pg(11), pg(1), pg(0)};
    pd_migrate_stats st = {0}, dem = {0};
    assert_int_equal(b->promote(b, want, 5, cold, 6, &st, &dem), 0);
    assert_int_equal(fk.node[0], 0);
    assert_int_equal(fk.node[1], 0);
    assert_int_equal(fk.node[11], 0);
    assert_int_equal(fk.node[10], 0); /* not a candidate */
    assert_int_equal(fk.node[12], 1); /* dropped: first */
    assert_int_equal(fk.node[13], 1); /* planned, colder: displaced */
    assert_int_equal(fk.node[2], 1);  /* the coldest refused one */
    assert_int_equal(dem.pages_moved, 2);
    assert_int_equal(st.pages_moved, 3);
    assert_int_equal(st.enomem, 2);
    assert_int_equal(st.bytes_moved, 2 * PAGE);
    assert_int_equal(on_fast(), 4);
    b->destroy(b);
}

/* A kernel that takes nothing back after planned pages made room (its
 * freed frames are not counted free yet): no second round of displacing. */
static void test_promote_stops_displacing_when_nothing_gets_in(void **state)
{
    (void)state;
    pd_backend *b = fake_backend(1, 0);
    fk.fast_limit = 8;
    fk.boost = 8; /* after the first refusal node 0 takes nothing */
    for (int i = 10; i < 18; i++)
        fk.node[i] = 0;
    void *want[10], *cold[8];
    for (int i = 0; i < 2; i++)
        want[i] = pg(i);
    for (int i = 0; i < 8; i++) {
        want[2 + i] = pg(10 + i);
        cold[i] = pg(17 - i);
    }
    pd_migrate_stats st = {0}, dem = {0};
    assert_int_equal(b->promote(b, want, 10, cold, 8, &st, &dem), 0);
    assert_int_equal(dem.pages_moved, 2); /* one round, as many as refused */
    assert_int_equal(fk.node[17], 1);
    assert_int_equal(fk.node[16], 1);
    assert_int_equal(fk.node[15], 0);
    assert_int_equal(st.pages_moved, 6);
    assert_int_equal(st.enomem, 4);
    b->destroy(b);

    /* Many refused: at first only PD_NUMA_PROBE planned pages are risked. */
    b = fake_backend(1, 0);
    enum { HOT = 100, OLD = 200 };
    fk.fast_limit = OLD;
    fk.boost = OLD;
    void *w2[HOT + OLD], *c2[OLD];
    for (int i = 0; i < HOT; i++)
        w2[i] = pg(i);
    for (int i = 0; i < OLD; i++) {
        fk.node[1000 + i] = 0;
        w2[HOT + i] = pg(1000 + i);
        c2[i] = pg(1000 + OLD - 1 - i);
    }
    pd_migrate_stats st2 = {0}, dem2 = {0};
    assert_int_equal(b->promote(b, w2, HOT + OLD, c2, OLD, &st2, &dem2), 0);
    assert_int_equal(dem2.pages_moved, PD_NUMA_PROBE);
    assert_int_equal(st2.pages_moved, OLD - PD_NUMA_PROBE);
    b->destroy(b);
}

/* A fast_capacity budget below what the node has: the backend refuses past
 * it (ENOMEM), and demotion gives the budget back. */
static void test_budget_enforced_and_freed_by_demotion(void **state)
{
    (void)state;
    pd_backend *b = fake_backend(1, 3 * PAGE);
    void *pages[5] = {pg(0), pg(1), pg(2), pg(3), pg(4)};
    pd_migrate_stats st = {0};
    assert_int_equal(b->move(b, pages, 5, PD_TIER_FAST, &st), 0);
    assert_int_equal(st.pages_moved, 3);
    assert_int_equal(st.enomem, 2);
    assert_int_equal(b->fast_free(b), 0);

    void *want[2] = {pg(3), pg(4)};
    void *cold[3] = {pg(1), pg(0), pg(2)};
    pd_migrate_stats pst = {0}, dem = {0};
    assert_int_equal(pd_backend_numa_promote(b, want, 2, cold, 3, &pst, &dem), 0);
    assert_int_equal(pst.pages_moved, 2);
    assert_int_equal(dem.pages_moved, 2);
    assert_int_equal(fk.node[1], 1);
    assert_int_equal(fk.node[0], 1);
    assert_int_equal(fk.node[2], 0);
    assert_int_equal(b->fast_free(b), 0);

    pd_migrate_stats back = {0};
    void *out[1] = {pg(2)};
    assert_int_equal(b->move(b, out, 1, PD_TIER_SLOW, &back), 0);
    assert_int_equal(b->fast_free(b), PAGE);
    b->destroy(b);
}

static void test_place_uses_preferred_policy(void **state)
{
    (void)state;
    pd_backend *b = fake_backend(0, 0);
    fk.mapped[3] = 2; /* not yet touched */
    pd_migrate_stats st = {0};
    assert_int_equal(b->place(b, pg(0), 8 * PAGE, PD_TIER_SLOW, &st), 0);
    assert_int_equal(fk.mbind_calls, 1);
    assert_int_equal(fk.mbind_mode, MPOL_PREFERRED);
    assert_int_equal(fk.mbind_node, 1);
    assert_true(fk.mbind_flags & MPOL_MF_MOVE);
    assert_int_equal(st.pages_requested, 8);
    assert_int_equal(st.pages_moved, 7);
    assert_int_equal(st.pages_failed, 0);
    assert_int_equal(st.bytes_moved, 7 * PAGE);

    errno = 0;
    assert_int_equal(b->place(b, (char *)pg(0) + 1, PAGE, PD_TIER_SLOW, &st), -1);
    assert_int_equal(errno, EINVAL);
    b->destroy(b);
}

/* The real system calls on this machine: a single node means the backend
 * cannot be created from the real /sys; with the 2-node fixture it can,
 * and the real move_pages query of our own pages answers node 0. */
static void test_real_syscalls_query(void **state)
{
    (void)state;
    fx_two_node();
    pd_backend *b = pd_backend_numa_create(-1, -1, 0);
    assert_non_null(b);
    size_t n = 4;
    char *mem = aligned_alloc(PAGE, n * PAGE);
    memset(mem, 1, n * PAGE);
    void *pages[4];
    int tiers[4];
    for (size_t i = 0; i < n; i++)
        pages[i] = mem + i * PAGE;
    assert_int_equal(b->query(b, pages, n, tiers), 0);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(tiers[i], PD_TIER_FAST); /* node 0 */
    free(mem);
    b->destroy(b);
}

/* fast_runs' answer, checked as it comes: in address order, each run
 * maximal (not touching the one before), inside the range asked. */
typedef struct {
    unsigned char fast[FAKE_PAGES];
    uintptr_t last_hi;
    int runs, stop_after;
} runs_seen;

static int note_run(void *ctx, uintptr_t lo, uintptr_t hi)
{
    runs_seen *r = ctx;
    assert_true(lo < hi && lo % PAGE == 0 && hi % PAGE == 0);
    assert_true(lo > r->last_hi || r->runs == 0); /* ordered, and not adjacent to the last */
    r->last_hi = hi;
    for (uintptr_t a = lo; a < hi; a += PAGE) {
        long i = page_index((void *)a);
        assert_true(i >= 0);
        r->fast[i] = 1;
    }
    return ++r->runs == r->stop_after;
}

/* First touch stays (PD_PLACE_FIRST_TOUCH): nothing moves and no policy
 * is set; with a budget, the pages found on the fast node are charged to
 * it; without one, nothing is asked of the kernel at all. */
static void test_first_touch_charges_what_is_fast_and_moves_nothing(void **state)
{
    (void)state;
    pd_backend *b = fake_backend(1, 64 * PAGE);
    for (int i = 0; i < 8; i++)
        fk.node[i] = 0;
    fk.mapped[7] = 2; /* not present yet (on no node): not charged */
    pd_migrate_stats st = {0};
    assert_int_equal(b->place(b, pg(0), 16 * PAGE, PD_PLACE_FIRST_TOUCH, &st), 0);
    /* the runtime's next call, the same range's fast runs: what place
     * found, without asking the kernel again */
    runs_seen seen = {0};
    assert_int_equal(b->fast_runs(b, pg(0), 16 * PAGE, note_run, &seen), 0);
    assert_int_equal(fk.query_calls, 1);
    assert_int_equal(seen.runs, 1); /* pages 0 - 6: 7 is absent */
    for (int i = 0; i < 16; i++)
        assert_int_equal(seen.fast[i], i < 7);
    assert_int_equal(st.pages_requested, 16);
    assert_int_equal(st.pages_moved + st.pages_failed + st.bytes_moved, 0);
    assert_int_equal(fk.move_calls + fk.mbind_calls, 0);
    assert_int_equal(pd_backend_numa_charged(b), 7 * PAGE);
    for (int i = 0; i < 16; i++)
        assert_int_equal(fk.node[i], i < 8 ? 0 : 1);
    /* once only, and only as the next call: asked again, or after another
     * call in between, the kernel answers */
    runs_seen again = {0};
    assert_int_equal(b->fast_runs(b, pg(0), 16 * PAGE, note_run, &again), 0);
    assert_int_equal(fk.query_calls, 2);
    assert_int_equal(b->place(b, pg(0), 16 * PAGE, PD_PLACE_FIRST_TOUCH, &st), 0);
    void *one = pg(10);
    assert_int_equal(b->move(b, &one, 1, PD_TIER_FAST, &st), 0); /* page 10 fast now */
    int calls = fk.query_calls;
    runs_seen moved = {0};
    assert_int_equal(b->fast_runs(b, pg(0), 16 * PAGE, note_run, &moved), 0);
    assert_int_equal(fk.query_calls, calls + 1);
    assert_int_equal(moved.fast[10], 1);
    /* another range than place's: asked */
    assert_int_equal(b->place(b, pg(0), 16 * PAGE, PD_PLACE_FIRST_TOUCH, &st), 0);
    calls = fk.query_calls;
    runs_seen other = {0};
    assert_int_equal(b->fast_runs(b, pg(0), 8 * PAGE, note_run, &other), 0);
    assert_int_equal(fk.query_calls, calls + 1);
    b->destroy(b);

    b = fake_backend(0, 0);
    pd_migrate_stats none = {0};
    assert_int_equal(b->place(b, pg(0), 2048 * PAGE, PD_PLACE_FIRST_TOUCH, &none), 0);
    assert_int_equal(none.pages_requested, 2048);
    assert_int_equal(fk.move_calls + fk.mbind_calls + fk.query_calls, 0);
    b->destroy(b);
}

/* The fast runs of a range are what a page-by-page query says is on the
 * fast node, as maximal runs, a batch of PD_NUMA_BATCH pages a call: runs
 * that cross a batch's end, unmapped and absent pages and a third node
 * ending a run, a range that is not a whole number of pages. */
static void test_fast_runs_are_the_querys_fast_pages(void **state)
{
    (void)state;
    pd_backend *b = fake_backend(1, 0);
    assert_non_null(b->fast_runs);
    uint64_t x = 12345;
    for (int pattern = 0; pattern < 6; pattern++) {
        for (int i = 0; i < FAKE_PAGES; i++) {
            x = x * 6364136223846793005ull + 1442695040888963407ull;
            /* runs of a few pages to a few hundred, some across 1024 */
            int on = pattern == 0 ? 0 : pattern == 1 ? 1 : (int)((x >> 33) % 100) < 10 * pattern;
            if (pattern >= 2 && i > 0 && (x >> 20) % 16 != 0)
                on = fk.node[i - 1] == 0; /* mostly continue the last page's tier */
            fk.node[i] = on ? 0 : 1;
            fk.mapped[i] = 1;
        }
        fk.node[1023] = fk.node[1024] = fk.node[1025] = 0; /* across the first batch's end */
        if (pattern >= 3) {
            fk.mapped[1500] = 0;     /* unmapped: -EFAULT */
            fk.mapped[1501] = 2;     /* not present: -ENOENT */
            fk.node[1502] = 3;       /* a third node */
            fk.node[1499] = fk.node[1503] = 0;
        }
        size_t first = pattern % 2 ? 7 : 0, n = FAKE_PAGES - first - (pattern == 4 ? 300 : 0);
        int tiers[FAKE_PAGES];
        void *pages[FAKE_PAGES];
        for (size_t i = 0; i < n; i++)
            pages[i] = pg((int)(first + i));
        assert_int_equal(b->query(b, pages, n, tiers), 0);
        runs_seen seen = {0};
        int calls = fk.query_calls;
        /* the last page partly: it is the range's all the same */
        assert_int_equal(b->fast_runs(b, pg((int)first), n * PAGE - (pattern == 5 ? PAGE / 2 : 0), note_run, &seen),
                         0);
        assert_int_equal(fk.query_calls - calls, (int)((n + PD_NUMA_BATCH - 1) / PD_NUMA_BATCH));
        int runs = 0;
        for (size_t i = 0; i < n; i++) {
            assert_int_equal(seen.fast[first + i], tiers[i] == PD_TIER_FAST);
            runs += tiers[i] == PD_TIER_FAST && (i == 0 || tiers[i - 1] != PD_TIER_FAST);
        }
        for (size_t i = 0; i < FAKE_PAGES; i++)
            if (i < first || i >= first + n)
                assert_int_equal(seen.fast[i], 0);
        assert_int_equal(seen.runs, runs);
        if (pattern == 1)
            assert_int_equal(runs, 1); /* the whole range, once, across four batches */
    }

    /* fn's nonzero answer stops it at that run */
    runs_seen two = {.stop_after = 2};
    assert_int_equal(b->fast_runs(b, pg(0), FAKE_PAGES * PAGE, note_run, &two), 1);
    assert_int_equal(two.runs, 2);
    /* bad arguments; a query the kernel refuses says so */
    runs_seen none = {0};
    assert_int_equal(b->fast_runs(b, (char *)pg(0) + 8, PAGE, note_run, &none), -EINVAL);
    assert_int_equal(b->fast_runs(b, pg(0), PAGE, NULL, NULL), -EINVAL);
    fk.fail_errno = ENOMEM;
    assert_int_equal(b->fast_runs(b, pg(0), PAGE, note_run, &none), -ENOMEM);
    assert_int_equal(none.runs, 0);
    b->destroy(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_create_needs_slow_tier, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_move_and_query, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_ebusy_retried_then_counted, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_unmapped_pages_counted_not_fatal, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_batches_of_1024, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_whole_call_refused, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_kernel_busy_abort_retried, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_kernel_enomem_abort, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_promote_demotes_coldest_first, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_promote_escalates_demotion, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_promote_runs_out_of_candidates, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_promote_op_displaces_only_colder_planned_pages, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_promote_stops_displacing_when_nothing_gets_in, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_budget_enforced_and_freed_by_demotion, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_place_uses_preferred_policy, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_real_syscalls_query, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_first_touch_charges_what_is_fast_and_moves_nothing, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_fast_runs_are_the_querys_fast_pages, fx_setup, fx_teardown),
    };
    return cmocka_run_group_tests_name("numa_backend", tests, NULL, NULL);
}
