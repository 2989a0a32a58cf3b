/* The numa backend's fast-memory budget (fast_capacity) over a fake kernel
 * injected at the system-call seam: pages freed by the application
 * (EFAULT/ENOENT) give their budget back, release() forgets a range, a
 * budget-short move re-counts, 100 reallocation cycles end where they
 * started, concurrent callers keep one consistent count; and through the
 * public API, register/unregister/update cycles with freed objects do not
 * lose budget. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "test_tiers_fixture.h"

#include <errno.h>
#include <numaif.h>
#include <pthread.h>
#include <stdint.h>

#include "lib/backend.h"
#include "lib/backend_numa.h"
#include "lib/perf.h"
#include "lib/runtime_internal.h"
#include "paddiser.h"

#define NP 4096
#define PAGE ((size_t)sysconf(_SC_PAGESIZE))

/* Fake kernel: NP pages from base, a node each (-1: not mapped, EFAULT;
 * -2: mapped, not present, ENOENT), a count of pages on node 0 kept as it
 * goes, and the most it ever held. Only called under the backend's lock. */
static struct {
    uintptr_t base;
    int node[NP];
    int nfast, max_fast, fast_limit;
    int query_calls, move_calls;
} fk;

static long fk_index(void *p)
{
    uintptr_t a = (uintptr_t)p;
    if (a < fk.base || (a - fk.base) % PAGE || (a - fk.base) / PAGE >= NP)
        return -1;
    return (long)((a - fk.base) / PAGE);
}

static void fk_set(long i, int node)
{
    fk.nfast += (node == 0) - (fk.node[i] == 0);
    fk.node[i] = node;
    if (fk.nfast > fk.max_fast)
        fk.max_fast = fk.nfast;
}

static long fake_move_pages(void *ctx, unsigned long count, void **pages, const int *nodes, int *status, int flags)
{
    (void)ctx;
    (void)flags;
    nodes ? fk.move_calls++ : fk.query_calls++;
    long not_moved = 0;
    for (unsigned long k = 0; k < count; k++) {
        long i = fk_index(pages[k]);
        if (i < 0 || fk.node[i] == -1) {
            status[k] = -EFAULT;
        } else if (fk.node[i] == -2) {
            status[k] = -ENOENT;
        } else if (!nodes || fk.node[i] == nodes[k]) {
            status[k] = fk.node[i];
        } else if (nodes[k] == 0 && fk.fast_limit >= 0 && fk.nfast >= fk.fast_limit) {
            status[k] = -ENOMEM;
            not_moved++;
        } else {
            fk_set(i, nodes[k]);
            status[k] = nodes[k];
        }
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
    for (uintptr_t a = (uintptr_t)addr; a < (uintptr_t)addr + len; a += PAGE) {
        long i = fk_index((void *)a);
        if (i >= 0 && fk.node[i] >= 0 && (flags & MPOL_MF_MOVE))
            fk_set(i, node);
    }
    return 0;
}

static const pd_numa_syscalls fake_sys = {fake_move_pages, fake_mbind, NULL};

static void *pg(int i) { return (void *)(fk.base + (size_t)i * PAGE); }

/* Pages [first, first+n) as an array (static: one list at a time). */
static void **range(int first, int n)
{
    static void *v[NP];
    for (int i = 0; i < n; i++)
        v[i] = pg(first + i);
    return v;
}

/* Maps (node 1) or frees (-1) pages [first, first+n). */
static void fk_map(int first, int n, int node)
{
    for (int i = first; i < first + n; i++)
        fk_set(i, node);
}

/* Every page mapped on `node` (-1: none mapped), no limit. */
static void fk_reset(uintptr_t base, int node)
{
    memset(&fk, 0, sizeof fk);
    fk.base = base;
    fk.fast_limit = -1;
    for (int i = 0; i < NP; i++)
        fk.node[i] = node;
    fk.nfast = fk.max_fast = node == 0 ? NP : 0;
}

static pd_backend *budget_backend(size_t capacity_pages)
{
    fk_reset((uintptr_t)1 << 32, 1);
    return fx_numa_backend(capacity_pages * PAGE, &fake_sys);
}

/* A charged page that turns out freed (EFAULT) or not present (ENOENT) on a
 * move gives its budget back. */
static void test_efault_uncharges(void **state)
{
    (void)state;
    pd_backend *b = budget_backend(4);
    pd_migrate_stats st = {0};
    assert_int_equal(b->move(b, range(0, 4), 4, PD_TIER_FAST, &st), 0);
    assert_int_equal(st.pages_moved, 4);
    assert_int_equal(pd_backend_numa_charged(b), 4 * PAGE);
    fk_map(0, 1, -1); /* freed */
    fk_map(1, 1, -2); /* replaced by an untouched mapping */
    pd_migrate_stats out = {0};
    assert_int_equal(b->move(b, range(0, 2), 2, PD_TIER_SLOW, &out), 0);
    assert_int_equal(out.efault, 2);
    assert_int_equal(pd_backend_numa_charged(b), 2 * PAGE);

    /* The EFAULT of the move call itself (freed between query and move) is
     * covered by the query already; a plain query also reconciles. */
    fk_map(2, 1, -1);
    int tiers[1];
    assert_int_equal(b->query(b, range(2, 1), 1, tiers), 0);
    assert_int_equal(tiers[0], -EFAULT);
    assert_int_equal(pd_backend_numa_charged(b), PAGE);
    assert_int_equal(b->fast_free(b), 3 * PAGE);
    b->destroy(b);
}

/* Pages freed without anyone telling the backend: a move the budget would
 * refuse re-counts first (one batched query), and then fits. */
static void test_budget_short_recounts(void **state)
{
    (void)state;
    pd_backend *b = budget_backend(64);
    pd_migrate_stats st = {0};
    assert_int_equal(b->move(b, range(0, 64), 64, PD_TIER_FAST, &st), 0);
    assert_int_equal(st.pages_moved, 64);
    assert_int_equal(pd_backend_numa_charged(b), 64 * PAGE);
    fk_map(0, 64, -1);
    int q = fk.query_calls;
    pd_migrate_stats st2 = {0};
    assert_int_equal(b->move(b, range(256, 64), 64, PD_TIER_FAST, &st2), 0);
    assert_int_equal(st2.pages_moved, 64);
    assert_int_equal(st2.enomem, 0);
    assert_int_equal(fk.query_calls - q, 2); /* the batch's own query and the re-count */
    assert_int_equal(pd_backend_numa_charged(b), 64 * PAGE);

    /* Budget really spent: refused, and the re-count happens once per call. */
    q = fk.query_calls;
    pd_migrate_stats st3 = {0};
    assert_int_equal(b->move(b, range(512, 2 * PD_NUMA_BATCH), 2 * PD_NUMA_BATCH, PD_TIER_FAST, &st3), 0);
    assert_int_equal(st3.enomem, 2 * PD_NUMA_BATCH);
    assert_int_equal(fk.query_calls - q, 3);
    assert_int_equal(pd_backend_numa_recount(b), 0);
    assert_int_equal(pd_backend_numa_charged(b), 64 * PAGE);
    b->destroy(b);
}

/* Freed memory whose address is reused by other data on the fast node: a
 * query sees a page there, so only release() can give the budget back. */
static void test_release_forgets_reused_range(void **state)
{
    (void)state;
    pd_backend *b = budget_backend(64);
    assert_non_null(b->release);
    pd_migrate_stats st = {0};
    assert_int_equal(b->move(b, range(0, 64), 64, PD_TIER_FAST, &st), 0);
    /* (the pages stay on node 0: someone else's memory now) */
    pd_migrate_stats refused = {0};
    assert_int_equal(b->move(b, range(256, 64), 64, PD_TIER_FAST, &refused), 0);
    assert_int_equal(refused.enomem, 64);

    assert_int_equal(b->release(b, (char *)pg(0) + 100, 10 * PAGE), 0); /* pages 0..10 */
    assert_int_equal(pd_backend_numa_charged(b), 53 * PAGE);
    assert_int_equal(b->release(b, pg(0), 64 * PAGE), 0);
    assert_int_equal(pd_backend_numa_charged(b), 0);
    assert_int_equal(b->release(b, pg(0), 0), 0);
    errno = 0;
    assert_int_equal(b->release(b, NULL, PAGE), -1);
    assert_int_equal(errno, EINVAL);
    pd_migrate_stats again = {0};
    assert_int_equal(b->move(b, range(256, 64), 64, PD_TIER_FAST, &again), 0);
    assert_int_equal(again.pages_moved, 64);

    /* A range larger than the set of charges is walked through the set. */
    assert_int_equal(b->release(b, pg(0), (size_t)1 << 40), 0);
    assert_int_equal(pd_backend_numa_charged(b), 0);
    assert_int_equal(b->fast_free(b), 64 * PAGE);
    b->destroy(b);
}

/* place() charges what it puts on the fast node and uncharges what it takes
 * off; pages already on the fast node count when asked for (budget room). */
static void test_place_and_already_there(void **state)
{
    (void)state;
    pd_backend *b = budget_backend(16);
    pd_migrate_stats st = {0};
    assert_int_equal(b->place(b, pg(0), 8 * PAGE, PD_TIER_FAST, &st), 0);
    assert_int_equal(pd_backend_numa_charged(b), 8 * PAGE);
    assert_int_equal(b->place(b, pg(0), 4 * PAGE, PD_TIER_SLOW, &st), 0);
    assert_int_equal(pd_backend_numa_charged(b), 4 * PAGE);
    fk_map(100, 20, 0); /* on node 0 without the backend */
    pd_migrate_stats m = {0};
    assert_int_equal(b->move(b, range(100, 20), 20, PD_TIER_FAST, &m), 0);
    assert_int_equal(m.pages_moved, 20); /* they are there */
    assert_int_equal(pd_backend_numa_charged(b), 16 * PAGE);
    assert_int_equal(b->fast_free(b), 0);
    b->destroy(b);
}

/* Objects reallocated per input: promote the hot part, free the object
 * (half the time telling the backend, half the time not), allocate the
 * next one elsewhere. The budget left at the end is the budget at start. */
static void test_100_reallocation_cycles(void **state)
{
    (void)state;
    enum { CAP = 64, OBJ = 256 };
    pd_backend *b = budget_backend(CAP);
    size_t start = b->fast_free(b);
    assert_int_equal(start, CAP * PAGE);
    for (int k = 0; k < 100; k++) {
        int first = (k % 8) * OBJ;
        fk_map(first, OBJ, 1);
        assert_int_equal(b->place(b, pg(first), OBJ * PAGE, PD_TIER_SLOW, NULL), 0);
        pd_migrate_stats st = {0}, dem = {0};
        assert_int_equal(pd_backend_numa_promote(b, range(first, CAP), CAP, NULL, 0, &st, &dem), 0);
        assert_int_equal(st.pages_moved, CAP);
        assert_int_equal(st.enomem, 0);
        assert_int_equal(pd_backend_numa_charged(b), CAP * PAGE);
        if (k % 2)
            b->release(b, pg(first), OBJ * PAGE);
        fk_map(first, OBJ, -1); /* freed */
    }
    assert_int_equal(b->fast_free(b), start);
    assert_int_equal(pd_backend_numa_charged(b), 0);
    b->destroy(b);
}

/* Concurrent callers: in each round every thread asks for its own pages at
 * once under a budget of half their sum, then moves them out or frees them.
 * Each round exactly the budget gets in, the fast node never holds more,
 * and the count ends consistent. */
enum { THREADS = 4, PER = 48, ROUNDS = 150, CCAP = 96 };

static pd_backend *shared_b;
static int thread_errors;
static size_t admitted[ROUNDS];
static pthread_barrier_t round_start, round_end;

static void *worker(void *arg)
{
    int t = (int)(intptr_t)arg, first = 512 + t * 256;
    void *mine[PER];
    for (int i = 0; i < PER; i++)
        mine[i] = pg(first + i);
    for (int r = 0; r < ROUNDS; r++) {
        pd_migrate_stats in = {0}, out = {0};
        pthread_barrier_wait(&round_start);
        if (shared_b->move(shared_b, mine, PER, PD_TIER_FAST, &in) != 0 || in.pages_moved + in.enomem != PER)
            __atomic_add_fetch(&thread_errors, 1, __ATOMIC_RELAXED);
        __atomic_add_fetch(&admitted[r], in.pages_moved, __ATOMIC_RELAXED);
        pthread_barrier_wait(&round_end);
        int tiers[PER];
        if (shared_b->query(shared_b, mine, PER, tiers) != 0)
            __atomic_add_fetch(&thread_errors, 1, __ATOMIC_RELAXED);
        if (r % 3 == 2) {
            /* Freed and mapped again (as the kernel would): the fake's
             * state is touched only under the backend's lock, so through
             * release and a place of the new mapping. */
            shared_b->release(shared_b, mine[0], PER * PAGE);
            if (shared_b->place(shared_b, mine[0], PER * PAGE, PD_TIER_SLOW, NULL) != 0)
                __atomic_add_fetch(&thread_errors, 1, __ATOMIC_RELAXED);
        } else if (shared_b->move(shared_b, mine, PER, PD_TIER_SLOW, &out) != 0 || out.pages_moved != PER) {
            __atomic_add_fetch(&thread_errors, 1, __ATOMIC_RELAXED);
        }
    }
    return NULL;
}

static void test_concurrent_callers(void **state)
{
    (void)state;
    shared_b = budget_backend(CCAP);
    thread_errors = 0;
    memset(admitted, 0, sizeof admitted);
    pthread_barrier_init(&round_start, NULL, THREADS);
    pthread_barrier_init(&round_end, NULL, THREADS);
    pthread_t th[THREADS];
    for (int t = 0; t < THREADS; t++)
        assert_int_equal(pthread_create(&th[t], NULL, worker, (void *)(intptr_t)t), 0);
    for (int t = 0; t < THREADS; t++)
        pthread_join(th[t], NULL);
    pthread_barrier_destroy(&round_start);
    pthread_barrier_destroy(&round_end);
    assert_int_equal(thread_errors, 0);
    for (int r = 0; r < ROUNDS; r++)
        assert_int_equal(admitted[r], CCAP);
    assert_int_equal(fk.max_fast, CCAP);
    assert_int_equal(fk.nfast, 0);
    assert_int_equal(pd_backend_numa_charged(shared_b), 0);
    assert_int_equal(shared_b->fast_free(shared_b), CCAP * PAGE);
    shared_b->destroy(shared_b);
}

/* ---- through the public API ---------------------------------------------- */

static double fake_now;
static double fake_clock(void) { return fake_now; }

static void sweep(unsigned char *p, size_t len)
{
    for (size_t i = 0; i < len; i += 64)
        ((volatile unsigned char *)p)[i] += 1;
}

static void task(int id, unsigned char *p, size_t len, int passes)
{
    for (int k = 0; k < passes; k++) {
        assert_int_equal(pd_task_begin(id), PD_OK);
        sweep(p, len);
        fake_now += 0.001;
        assert_int_equal(pd_task_end(id), PD_OK);
    }
}

static int fast_pages(int first, int n)
{
    int on = 0;
    for (int i = first; i < first + n; i++)
        on += fk.node[i] == 0;
    return on;
}

/* An object reallocated per instance in one of 4 slots of a real 16 MiB
 * buffer, freed (fake kernel: EFAULT) after each instance: registered,
 * moved by pd_object_update (realloc), unregistered, and again. Every
 * instance gets its whole plan on the fast node (and keeps first-touched
 * pages in the room the plan leaves), and at the end nothing is charged. */
static void test_runtime_reallocation_cycles(void **state)
{
    (void)state;
    enum { SLOT = 1024, CYCLES = 24 };
    const size_t cap = 2ul << 20;
    unsigned char *buf = aligned_alloc(2ul << 20, NP * PAGE);
    assert_non_null(buf);
    memset(buf, 0, NP * PAGE);
    fk_reset((uintptr_t)buf, -1);
    fx_two_node();
    pd_perf_set_clock(fake_clock);
    pd_options o;
    pd_options_default(&o);
    o.backend = PD_BACKEND_NUMA;
    o.fast_capacity = cap;
    o.planner = PD_PLANNER_GREEDY;
    assert_int_equal(pd_init(&o), PD_OK);
    assert_int_equal(pd_backend_numa_set_syscalls(rt.backend, &fake_sys), 0);
    size_t start = rt.backend->fast_free(rt.backend);
    assert_int_equal(start, cap);

    int id = -1;
    for (int k = 0; k < CYCLES; k++) {
        int slot = k % 4;
        unsigned char *obj = buf + (size_t)slot * SLOT * PAGE;
        fk_map(slot * SLOT, SLOT, 0); /* new memory, touched on the local node */
        if (k % 2)
            assert_int_equal(pd_object_update(id, obj, SLOT * PAGE), PD_OK);
        else
            assert_true((id = pd_object_register("grid", obj, SLOT * PAGE, NULL)) >= 0);
        assert_int_equal(fast_pages(slot * SLOT, SLOT), 0);
        task(0, obj, SLOT * PAGE / 4, 1);
        task(1, obj + SLOT * PAGE / 4, 3 * SLOT * PAGE / 4, 12);
        assert_int_equal(pd_sync_point(), PD_OK);
        pd_task_plan plan[2];
        assert_int_equal(pd_plan_query(plan, 2, NULL), 2);
        size_t planned = plan[0].dram_bytes + plan[1].dram_bytes;
        assert_true(planned > 0 && planned <= cap);
        /* the plan, and first-touched pages kept in the room it leaves */
        size_t fast = (size_t)fast_pages(slot * SLOT, SLOT) * PAGE;
        assert_true(fast >= planned && fast <= cap);
        assert_int_equal(pd_backend_numa_charged(rt.backend), fast);
        fk_map(slot * SLOT, SLOT, -1); /* freed */
        if (k % 2) {
            assert_int_equal(pd_object_unregister(id), PD_OK);
            id = -1;
        }
    }
    if (id >= 0)
        assert_int_equal(pd_object_unregister(id), PD_OK);
    assert_int_equal(pd_backend_numa_charged(rt.backend), 0);
    assert_int_equal(rt.backend->fast_free(rt.backend), start);
    assert_int_equal(pd_finalize(), PD_OK);
    free(buf);
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
    (void)fx_single_node; /* the fixture's, unused here */
    /* Registered pages start on the slow node here: these tests are about
     * promotion, demotion and the budget from there (the default start,
     * first touch, is checked in the QEMU guest and with the sim backend). */
    setenv("PADDISER_START_TIER", "slow", 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_efault_uncharges, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_budget_short_recounts, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_release_forgets_reused_range, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_place_and_already_there, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_100_reallocation_cycles, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_concurrent_callers, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_runtime_reallocation_cycles, fx_setup, fx_teardown),
    };
    return cmocka_run_group_tests_name("numa_budget", tests, NULL, NULL);
}
