/* In-guest check of the numa backend on a real two-node kernel (QEMU, node 1
 * CPU-less with HMAT values). Built static; run as part of the initramfs'
 * /init. Prints what it sees and one "guest_numa: ok" / "guest_numa: FAIL"
 * line; exit status 0 on success.
 *   1. tier discovery: two nodes, node 1 CPU-less and slower per HMAT;
 *   2. place an object on the slow node (mbind), fault it in, query where
 *      each page is with move_pages(2) directly;
 *   3. move every other page to the fast node; query again; stats;
 *   4. promotion with demotion under a fast-memory budget. */
#include <errno.h>
#include <stdint.h>
#include <numaif.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "lib/backend.h"
#include "lib/backend_numa.h"
#include "paddiser_tiers.h"

static int failures;

#define CHECK(cond, ...)                                                                                               \
    do {                                                                                                               \
        if (!(cond)) {                                                                                                 \
            failures++;                                                                                                \
            printf("guest_numa: check failed (%s:%d): %s: ", __FILE__, __LINE__, #cond);                              \
            printf(__VA_ARGS__);                                                                                       \
            printf("\n");                                                                                              \
        }                                                                                                              \
    } while (0)

/* Node of each page by the raw system call, independent of the backend. */
static int count_on_node(void **pages, size_t n, int node)
{
    int *status = malloc(n * sizeof *status);
    if (!status || move_pages(0, n, pages, NULL, status, 0) < 0) {
        printf("guest_numa: move_pages query failed: %s\n", strerror(errno));
        free(status);
        return -1;
    }
    int on = 0;
    for (size_t i = 0; i < n; i++)
        on += status[i] == node;
    free(status);
    return on;
}

/* fast_runs on every other page fast: each run one even page, in order. */
typedef struct {
    uintptr_t base;
    size_t ps;
    int runs, wrong;
} fast_runs_seen;

static int note_fast_run(void *ctx, uintptr_t lo, uintptr_t hi)
{
    fast_runs_seen *f = ctx;
    f->wrong += lo != f->base + 2 * (size_t)f->runs * f->ps || hi != lo + f->ps;
    f->runs++;
    return 0;
}

static void print_stats(const char *what, const pd_migrate_stats *st)
{
    printf("guest_numa: %s: requested=%zu moved=%zu bytes=%zu failed=%zu ebusy=%zu enomem=%zu efault=%zu other=%zu\n",
           what, st->pages_requested, st->pages_moved, st->bytes_moved, st->pages_failed, st->ebusy, st->enomem,
           st->efault, st->other_errors);
}

static void check_tiers(void)
{
    pd_tiers t;
    char err[512];
    if (pd_tiers_discover(&t, err, sizeof err)) {
        CHECK(0, "discovery failed: %s", err);
        return;
    }
    for (int i = 0; i < t.nnodes; i++) {
        const pd_tier_node *n = &t.node[i];
        printf("guest_numa: node %d cpus=%d cpuless=%d mem=%lluMiB tier=%d hmat=%d read_lat=%luns write_lat=%luns "
               "read_bw=%luMB/s write_bw=%luMB/s\n",
               n->id, n->ncpus, n->cpuless, n->mem_total >> 20, n->tier, n->has_hmat, n->read_latency_ns,
               n->write_latency_ns, n->read_bw_mbps, n->write_bw_mbps);
    }
    printf("guest_numa: tiers=%d fast=%d slow=%d (%s)\n", t.ntiers, t.fast_node, t.slow_node, t.reason);
    CHECK(t.nnodes == 2, "nnodes=%d", t.nnodes);
    const pd_tier_node *n0 = pd_tiers_node(&t, 0), *n1 = pd_tiers_node(&t, 1);
    CHECK(n0 && n1, "nodes 0 and 1 missing");
    if (!n0 || !n1)
        return;
    CHECK(!n0->cpuless && n1->cpuless, "cpuless flags %d %d", n0->cpuless, n1->cpuless);
    CHECK(n0->mem_total > 0 && n1->mem_total > 0, "memory sizes");
    CHECK(n1->has_hmat && n0->has_hmat, "HMAT access0 values missing");
    CHECK(n1->read_latency_ns > n0->read_latency_ns, "read latency %lu vs %lu", n1->read_latency_ns,
          n0->read_latency_ns);
    CHECK(n1->read_bw_mbps < n0->read_bw_mbps, "read bandwidth %lu vs %lu", n1->read_bw_mbps, n0->read_bw_mbps);
    CHECK(t.fast_node == 0 && t.slow_node == 1, "pair %d/%d", t.fast_node, t.slow_node);
}

/* The kernel's own ENOMEM: fill node 0 with a filler preferring node 0 until
 * allocations spill to node 1 (node 0 at its watermark), then promote an
 * object from node 1 with the filler's pages as demotion candidates. The
 * kernel refuses (ENOMEM, no OOM kill: migration allocates __GFP_THISNODE),
 * the backend demotes the coldest filler pages and retries. */
static void check_kernel_enomem(size_t ps)
{
    pd_backend *b = pd_backend_numa_create(0, 1, 0);
    CHECK(b != NULL, "backend");
    if (!b)
        return;
    enum { HOT = 4096 }; /* 16 MiB: more than node 0's reserve between watermarks */
    size_t filler_len = (size_t)700 << 20, hot_len = HOT * ps;
    char *hot = mmap(NULL, hot_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    char *filler = mmap(NULL, filler_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(hot != MAP_FAILED && filler != MAP_FAILED, "mmap");
    if (hot == MAP_FAILED || filler == MAP_FAILED)
        return;
    /* Base pages: with THP one named page would move its whole 2 MiB page
     * (docs/numa.md), and the coldest-first check below counts pages. */
    madvise(hot, hot_len, MADV_NOHUGEPAGE);
    madvise(filler, filler_len, MADV_NOHUGEPAGE);
    pd_migrate_stats st = {0};
    CHECK(b->place(b, hot, hot_len, PD_TIER_SLOW, &st) == 0, "place hot");
    memset(hot, 0x77, hot_len);
    CHECK(b->place(b, filler, filler_len, PD_TIER_FAST, &st) == 0, "place filler");

    size_t nfill = filler_len / ps, touched = 0;
    int spilled = 0;
    for (size_t i = 0; i < nfill && !spilled; i++) {
        filler[i * ps] = 1;
        touched++;
        if (i % 256 == 255) {
            void *p = filler + i * ps;
            int node = -1;
            if (move_pages(0, 1, &p, NULL, &node, 0) == 0 && node == 1)
                spilled = 1;
        }
    }
    void **fill_pages = malloc(touched * sizeof *fill_pages);
    void **hot_pages = malloc(HOT * sizeof *hot_pages);
    if (!fill_pages || !hot_pages) {
        CHECK(0, "malloc");
        return;
    }
    for (size_t i = 0; i < touched; i++)
        fill_pages[i] = filler + i * ps;
    for (size_t i = 0; i < HOT; i++)
        hot_pages[i] = hot + i * ps;
    int fill0 = count_on_node(fill_pages, touched, 0);
    printf("guest_numa: filler: %zu pages touched, %d on node 0, spilled to node 1: %s, node 0 MemFree %zu KiB\n",
           touched, fill0, spilled ? "yes" : "no", b->fast_free(b) >> 10);
    CHECK(spilled, "node 0 never filled up");

    pd_migrate_stats plain = {0};
    CHECK(b->move(b, hot_pages, HOT, PD_TIER_FAST, &plain) == 0, "move without demotion: %s", strerror(errno));
    print_stats("move to full node 0", &plain);
    CHECK(plain.enomem > 0, "the kernel did not refuse a full node 0");

    pd_migrate_stats pro = {0}, dem = {0};
    CHECK(pd_backend_numa_promote(b, hot_pages, HOT, fill_pages, touched, &pro, &dem) == 0, "promote: %s",
          strerror(errno));
    print_stats("promote with demotion", &pro);
    print_stats("demoted filler", &dem);
    int hot0 = count_on_node(hot_pages, HOT, 0);
    printf("guest_numa: after promote: %d/%d hot pages on node 0\n", hot0, HOT);
    CHECK(hot0 == HOT && pro.pages_moved == HOT && pro.enomem == 0, "hot pages on node 0: %d", hot0);
    /* More than refused may go: the kernel keeps its watermarks (boosted
     * after fallbacks) free, so a retry round can be refused again. */
    CHECK(dem.pages_moved >= plain.enomem && dem.pages_moved <= ((1u << PD_NUMA_DEMOTE_ROUNDS) - 1) * plain.enomem,
          "demoted %zu for %zu refused", dem.pages_moved, plain.enomem);
    /* Coldest first: the demoted pages are a prefix of the candidate order. */
    int first_kept = -1, later_on_1 = 0;
    int *where = malloc(touched * sizeof *where);
    if (where && move_pages(0, touched, fill_pages, NULL, where, 0) == 0) {
        for (size_t i = 0; i < touched; i++) {
            if (where[i] == 0 && first_kept < 0)
                first_kept = (int)i;
            else if (where[i] != 0 && first_kept >= 0)
                later_on_1++;
        }
    }
    printf("guest_numa: filler after promote: pages #0..#%d on node 1, %d later pages off node 0 (spilled %zu)\n",
           first_kept - 1, later_on_1, touched - (size_t)fill0);
    CHECK(first_kept >= (int)dem.pages_moved && later_on_1 <= (int)(touched - (size_t)fill0),
          "demotion was not coldest-first (first kept #%d, demoted %zu, later off node 0 %d)", first_kept,
          dem.pages_moved, later_on_1);
    free(where);
    free(fill_pages);
    free(hot_pages);
    munmap(filler, filler_len);
    munmap(hot, hot_len);
    b->destroy(b);
}

int main(void)
{
    check_tiers();

    pd_backend *b = pd_backend_numa_create(-1, -1, 0);
    CHECK(b != NULL, "pd_backend_numa_create: %s", strerror(errno));
    if (!b) {
        printf("guest_numa: FAIL\n");
        return 1;
    }
    enum { NPAGES = 256 };
    size_t ps = (size_t)sysconf(_SC_PAGESIZE), len = NPAGES * ps;
    char *obj = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(obj != MAP_FAILED, "mmap");
    if (obj == MAP_FAILED)
        return 1;
    void *pages[NPAGES];
    for (size_t i = 0; i < NPAGES; i++)
        pages[i] = obj + i * ps;

    /* Half the object is touched before placement (migrated by mbind's
     * MPOL_MF_MOVE), half after (faults in under the policy). */
    memset(obj, 0x5a, len / 2);
    pd_migrate_stats place_st = {0};
    CHECK(b->place(b, obj, len, PD_TIER_SLOW, &place_st) == 0, "place: %s", strerror(errno));
    print_stats("place slow", &place_st);
    memset(obj + len / 2, 0xa5, len / 2);
    int on1 = count_on_node(pages, NPAGES, 1);
    printf("guest_numa: after place: %d/%d pages on node 1\n", on1, NPAGES);
    CHECK(on1 == NPAGES, "placed pages on node 1: %d", on1);
    CHECK(place_st.bytes_moved == (NPAGES / 2) * ps, "place migrated %zu bytes", place_st.bytes_moved);

    /* Every other page to the fast node. */
    void *sel[NPAGES / 2], *rest[NPAGES / 2];
    for (size_t i = 0; i < NPAGES / 2; i++) {
        sel[i] = pages[2 * i];
        rest[i] = pages[2 * i + 1];
    }
    pd_migrate_stats mv = {0};
    CHECK(b->move(b, sel, NPAGES / 2, PD_TIER_FAST, &mv) == 0, "move: %s", strerror(errno));
    print_stats("move fast", &mv);
    int sel0 = count_on_node(sel, NPAGES / 2, 0), rest1 = count_on_node(rest, NPAGES / 2, 1);
    printf("guest_numa: after move: %d/%d selected pages on node 0, %d/%d others still on node 1\n", sel0,
           NPAGES / 2, rest1, NPAGES / 2);
    CHECK(sel0 == NPAGES / 2 && rest1 == NPAGES / 2, "placement after move");
    CHECK(mv.pages_moved == NPAGES / 2 && mv.bytes_moved == (NPAGES / 2) * ps && mv.pages_failed == 0,
          "move stats");
    int tiers[NPAGES];
    CHECK(b->query(b, pages, NPAGES, tiers) == 0, "query");
    for (size_t i = 0; i < NPAGES; i++)
        CHECK(tiers[i] == (i % 2 ? PD_TIER_SLOW : PD_TIER_FAST), "query page %zu: %d", i, tiers[i]);
    /* The same answer as runs, from the real kernel: every even page a run
     * of its own, in order. */
    fast_runs_seen fr = {(uintptr_t)obj, ps, 0, 0};
    CHECK(b->fast_runs && b->fast_runs(b, obj, len, note_fast_run, &fr) == 0, "fast_runs");
    printf("guest_numa: fast_runs: %d runs, %d of them wrong\n", fr.runs, fr.wrong);
    CHECK(fr.runs == NPAGES / 2 && fr.wrong == 0, "fast_runs: %d runs, %d wrong", fr.runs, fr.wrong);
    b->destroy(b);

    /* Promotion with demotion: a 16-page fast budget, full, then 8 hot pages
     * in: the 8 coldest fast pages (by the caller's order) go to node 1. */
    pd_backend *lim = pd_backend_numa_create(0, 1, 16 * ps);
    CHECK(lim != NULL, "budget backend");
    if (lim) {
        pd_migrate_stats fill = {0}, pro = {0}, dem = {0};
        CHECK(lim->move(lim, rest, 16, PD_TIER_FAST, &fill) == 0, "fill");
        CHECK(fill.pages_moved == 16 && lim->fast_free(lim) == 0, "budget fill: moved %zu free %zu",
              fill.pages_moved, lim->fast_free(lim));
        void *cold[16];
        for (int i = 0; i < 16; i++)
            cold[i] = rest[15 - i]; /* coldest first: rest[15] .. rest[0] */
        CHECK(pd_backend_numa_promote(lim, rest + 16, 8, cold, 16, &pro, &dem) == 0, "promote");
        print_stats("promote", &pro);
        print_stats("demote", &dem);
        CHECK(pro.pages_moved == 8 && dem.pages_moved == 8, "promote %zu demote %zu", pro.pages_moved,
              dem.pages_moved);
        CHECK(count_on_node(rest + 16, 8, 0) == 8, "promoted pages on node 0");
        CHECK(count_on_node(rest + 8, 8, 1) == 8, "coldest 8 demoted to node 1");
        CHECK(count_on_node(rest, 8, 0) == 8, "warmer 8 kept on node 0");
        lim->destroy(lim);
    }

    check_kernel_enomem(ps);

    /* The data survived all the moves. */
    int intact = 1;
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)obj[i] != (i < len / 2 ? 0x5a : 0xa5)) {
            intact = 0;
            break;
        }
    CHECK(intact, "object contents changed by migration");
    munmap(obj, len);

    printf("guest_numa: %s (%d failed checks)\n", failures ? "FAIL" : "ok", failures);
    return failures ? 1 : 0;
}
