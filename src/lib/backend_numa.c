/* numa backend: pages move between a fast and a slow NUMA node with mbind(2)
 * and move_pages(2) (libnuma). See backend_numa.h for the conventions.
 *
 * The kernel's move_pages aborts a call at the first group of pages it cannot
 * migrate and leaves the later status slots untouched, so every status slot
 * starts as a sentinel, and pages still holding it are queried again to learn
 * where they are. */
#include "lib/backend_numa.h"

#include <errno.h>
#include <limits.h>
#include <numaif.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/sysroot.h"
#include "common/util.h"
#include "paddiser_tiers.h"

#define STATUS_UNSET INT_MIN
#define MASK_WORDS 16 /* nodemask for mbind: node ids below 1023 */

typedef struct {
    int fast_node, slow_node;
    size_t capacity; /* fast-memory budget in bytes; 0 = none (kernel decides, nothing charged) */
    size_t page_size;
    pd_numa_syscalls sys;
    /* Charged pages (the budget's use): asked onto the fast node, seen there,
     * not released. A set of page numbers + 1 (0 = empty slot), open
     * addressing; cap is a power of two, at most half full. */
    uintptr_t *charged;
    size_t charged_cap, ncharged;
    int recounted;        /* the current call re-counted already */
    pthread_mutex_t lock; /* every op: budget checks and charges of concurrent callers */
    /* Every op takes the lock through op_lock, which counts it: the fast
     * runs first touch's place found on a range (with a budget, which
     * queries every page to charge the fast ones) answer fast_runs on the
     * same range when it is the very next op, instead of asking the kernel
     * a second time (the runtime asks both, one after the other, for each
     * new object). */
    unsigned long ops;
    uintptr_t adopted_lo;
    size_t adopted_npages;
    unsigned long adopted_op; /* 0: nothing kept */
    uintptr_t *adopted_runs;  /* lo, hi pairs */
    size_t adopted_n, adopted_cap;
} numa_state;

static void op_lock(numa_state *s)
{
    pthread_mutex_lock(&s->lock);
    s->ops++;
}

/* [lo, hi) onto the kept runs, extending the last one when adjacent; 0 or
 * -1 out of memory (the runs are then not kept). */
static int adopted_add(numa_state *s, uintptr_t lo, uintptr_t hi)
{
    if (s->adopted_n && s->adopted_runs[2 * s->adopted_n - 1] == lo) {
        s->adopted_runs[2 * s->adopted_n - 1] = hi;
        return 0;
    }
    if (s->adopted_n == s->adopted_cap) {
        size_t ncap = s->adopted_cap ? 2 * s->adopted_cap : 64;
        uintptr_t *v = realloc(s->adopted_runs, 2 * ncap * sizeof *v);
        if (!v)
            return -1;
        s->adopted_runs = v;
        s->adopted_cap = ncap;
    }
    s->adopted_runs[2 * s->adopted_n] = lo;
    s->adopted_runs[2 * s->adopted_n + 1] = hi;
    s->adopted_n++;
    return 0;
}

static const char backend_name[] = "numa";

static long sys_move_pages(void *ctx, unsigned long count, void **pages, const int *nodes, int *status, int flags)
{
    (void)ctx;
    return move_pages(0, count, pages, nodes, status, flags);
}

static long sys_mbind(void *ctx, void *addr, unsigned long len, int mode, const unsigned long *nodemask,
                      unsigned long maxnode, unsigned flags)
{
    (void)ctx;
    return mbind(addr, len, mode, nodemask, maxnode, flags);
}

static const pd_numa_syscalls real_syscalls = {sys_move_pages, sys_mbind, NULL};

static numa_state *state_of(pd_backend *b) { return (numa_state *)b->state; }

static int tier_node(const numa_state *s, int tier)
{
    return tier == PD_TIER_FAST ? s->fast_node : tier == PD_TIER_SLOW ? s->slow_node : -1;
}

static uintptr_t page_key(const numa_state *s, const void *page) { return (uintptr_t)page / s->page_size + 1; }

static size_t key_home(uintptr_t key, size_t mask) { return (size_t)(((uint64_t)key * 0x9E3779B97F4A7C15ull) >> 20) & mask; }

/* Slot holding key, or the empty slot where it would go. */
static size_t key_slot(const numa_state *s, uintptr_t key)
{
    size_t mask = s->charged_cap - 1, i = key_home(key, mask);
    while (s->charged[i] && s->charged[i] != key)
        i = (i + 1) & mask;
    return i;
}

/* Room for `more` charges, so that no charge fails after pages moved. */
static int charged_reserve(numa_state *s, size_t more)
{
    if (!s->capacity || (s->ncharged + more) * 2 <= s->charged_cap)
        return 0;
    size_t ncap = s->charged_cap ? s->charged_cap : 1024;
    while ((s->ncharged + more) * 2 > ncap)
        ncap *= 2;
    uintptr_t *nk = calloc(ncap, sizeof *nk);
    if (!nk) {
        errno = ENOMEM;
        return -1;
    }
    uintptr_t *old = s->charged;
    size_t ocap = s->charged_cap;
    s->charged = nk;
    s->charged_cap = ncap;
    for (size_t i = 0; i < ocap; i++)
        if (old[i])
            s->charged[key_slot(s, old[i])] = old[i];
    free(old);
    return 0;
}

static int is_charged(const numa_state *s, const void *page)
{
    return s->ncharged && s->charged[key_slot(s, page_key(s, page))] != 0;
}

/* Callers reserved room (charged_reserve). */
static void charge(numa_state *s, const void *page)
{
    if (!s->capacity)
        return;
    size_t i = key_slot(s, page_key(s, page));
    if (!s->charged[i]) {
        s->charged[i] = page_key(s, page);
        s->ncharged++;
    }
}

static void uncharge(numa_state *s, const void *page)
{
    if (!s->ncharged)
        return;
    size_t mask = s->charged_cap - 1, i = key_slot(s, page_key(s, page));
    if (!s->charged[i])
        return;
    s->charged[i] = 0;
    s->ncharged--;
    /* Backward shift: later keys of the probe run move up into the hole. */
    for (size_t j = (i + 1) & mask; s->charged[j]; j = (j + 1) & mask) {
        size_t home = key_home(s->charged[j], mask);
        int stays = i <= j ? (home > i && home <= j) : (home > i || home <= j);
        if (!stays) {
            s->charged[i] = s->charged[j];
            s->charged[j] = 0;
            i = j;
        }
    }
}

/* Current node of each page (or -errno), in batches. 0 or -1 with errno.
 * A charged page seen anywhere but on the fast node (moved away, freed, never
 * there) is uncharged: every query reconciles the budget. */
static int query_nodes(numa_state *s, void **pages, size_t n, int *where)
{
    for (size_t off = 0; off < n; off += PD_NUMA_BATCH) {
        size_t cnt = n - off < PD_NUMA_BATCH ? n - off : PD_NUMA_BATCH;
        for (size_t i = 0; i < cnt; i++)
            where[off + i] = STATUS_UNSET;
        if (s->sys.move_pages(s->sys.ctx, cnt, pages + off, NULL, where + off, 0) < 0)
            return -1;
        for (size_t i = 0; i < cnt; i++)
            if (where[off + i] == STATUS_UNSET)
                where[off + i] = -EFAULT; /* the kernel said nothing: treat as unmapped */
        for (size_t i = 0; i < cnt && s->ncharged; i++)
            if (where[off + i] != s->fast_node)
                uncharge(s, pages[off + i]);
    }
    return 0;
}

static size_t charged_bytes(const numa_state *s) { return s->ncharged * s->page_size; }

static size_t budget_pages(const numa_state *s)
{
    if (!s->capacity)
        return SIZE_MAX;
    return s->capacity > charged_bytes(s) ? (s->capacity - charged_bytes(s)) / s->page_size : 0;
}

/* Asks the kernel where every charged page is; query_nodes uncharges those
 * no longer on the fast node (freed, demoted by the kernel, never there). */
static int recount_locked(numa_state *s)
{
    s->recounted = 1;
    size_t n = s->ncharged;
    if (!n)
        return 0;
    void **pages = malloc(n * sizeof *pages);
    int *where = malloc(n * sizeof *where);
    int rc = -1;
    if (pages && where) {
        size_t k = 0;
        for (size_t i = 0; i < s->charged_cap; i++)
            if (s->charged[i])
                pages[k++] = (void *)((s->charged[i] - 1) * s->page_size);
        rc = query_nodes(s, pages, k, where);
    } else {
        errno = ENOMEM;
    }
    free(pages);
    free(where);
    return rc;
}

/* Moves up to PD_NUMA_BATCH pages to node. outcome[i]: 1 = migrated now,
 * 0 = already there, -errno = final failure. 0 or -1 (hard error, errno). */
static int move_batch(numa_state *s, void **pages, size_t n, int node, int *outcome)
{
    int where[PD_NUMA_BATCH], status[PD_NUMA_BATCH], nodes[PD_NUMA_BATCH];
    void *todo[PD_NUMA_BATCH];
    size_t idx[PD_NUMA_BATCH], ntodo = 0;

    if (query_nodes(s, pages, n, where))
        return -1;
    int to_fast = node == s->fast_node;
    if (to_fast && charged_reserve(s, n))
        return -1;
    size_t allowed = to_fast ? budget_pages(s) : SIZE_MAX;
    if (to_fast && s->capacity && !s->recounted) {
        /* Short of budget: first make sure the charges are still real. */
        size_t want = 0;
        for (size_t i = 0; i < n; i++)
            want += where[i] >= 0 && (where[i] != node || !is_charged(s, pages[i]));
        if (want > allowed && recount_locked(s) == 0)
            allowed = budget_pages(s);
    }
    for (size_t i = 0; i < n; i++) {
        if (where[i] == node) {
            outcome[i] = 0;
            /* Already there: it uses the budget too, if the budget has room. */
            if (to_fast && allowed && !is_charged(s, pages[i])) {
                if (allowed != SIZE_MAX)
                    allowed--;
                charge(s, pages[i]);
            }
        } else if (where[i] < 0)
            outcome[i] = where[i] == -ENOENT ? -EFAULT : where[i];
        else if (allowed == 0)
            outcome[i] = -ENOMEM; /* the fast-memory budget is spent */
        else {
            if (allowed != SIZE_MAX)
                allowed--;
            idx[ntodo++] = i;
        }
    }

    for (int attempt = 0; ntodo > 0; attempt++) {
        for (size_t k = 0; k < ntodo; k++) {
            todo[k] = pages[idx[k]];
            nodes[k] = node;
            status[k] = STATUS_UNSET;
        }
        long r = s->sys.move_pages(s->sys.ctx, ntodo, todo, nodes, status, MPOL_MF_MOVE);
        int call_errno = r < 0 ? errno : 0;
        if (r < 0 && call_errno != ENOMEM && call_errno != EBUSY && call_errno != EAGAIN)
            return -1; /* refused as a whole: EPERM, EINVAL, ENODEV, ENOSYS */

        /* Pages the kernel did not report on: ask where they are now. */
        size_t nunset = 0;
        void *unset_pages[PD_NUMA_BATCH];
        size_t unset_k[PD_NUMA_BATCH];
        for (size_t k = 0; k < ntodo; k++)
            if (status[k] == STATUS_UNSET) {
                unset_k[nunset] = k;
                unset_pages[nunset++] = todo[k];
            }
        if (nunset) {
            int now[PD_NUMA_BATCH];
            if (query_nodes(s, unset_pages, nunset, now))
                return -1;
            for (size_t u = 0; u < nunset; u++) {
                int st = now[u];
                if (st >= 0 && st != node)
                    st = call_errno == ENOMEM ? -ENOMEM : -EBUSY; /* not attempted or transient */
                status[unset_k[u]] = st;
            }
        }

        size_t nretry = 0;
        int last = attempt >= PD_NUMA_EBUSY_RETRIES;
        for (size_t k = 0; k < ntodo; k++) {
            size_t i = idx[k];
            int st = status[k];
            if (st == node) {
                outcome[i] = 1;
                if (to_fast)
                    charge(s, pages[i]);
                else
                    uncharge(s, pages[i]);
            } else if ((st == -EBUSY || st == -EAGAIN || st >= 0) && !last) {
                idx[nretry++] = i;
            } else if (st == -EBUSY || st == -EAGAIN) {
                outcome[i] = -EBUSY;
            } else if (st >= 0) {
                outcome[i] = -EIO; /* the kernel left it elsewhere without a reason */
            } else {
                outcome[i] = st == -ENOENT ? -EFAULT : st;
                if (st == -EFAULT || st == -ENOENT)
                    uncharge(s, pages[i]); /* gone (freed) or not present: holds no fast memory */
            }
        }
        ntodo = nretry;
    }
    return 0;
}

/* Moves n pages to node in batches; outcome as in move_batch. */
static int move_all(numa_state *s, void **pages, size_t n, int node, int *outcome)
{
    for (size_t off = 0; off < n; off += PD_NUMA_BATCH) {
        size_t cnt = n - off < PD_NUMA_BATCH ? n - off : PD_NUMA_BATCH;
        if (move_batch(s, pages + off, cnt, node, outcome + off))
            return -1;
    }
    return 0;
}

static void tally(const numa_state *s, const int *outcome, size_t n, pd_migrate_stats *st)
{
    if (!st)
        return;
    st->pages_requested += n;
    for (size_t i = 0; i < n; i++) {
        int o = outcome[i];
        if (o >= 0) {
            st->pages_moved++;
            if (o == 1)
                st->bytes_moved += s->page_size;
            continue;
        }
        st->pages_failed++;
        if (o == -EBUSY)
            st->ebusy++;
        else if (o == -ENOMEM)
            st->enomem++;
        else if (o == -EFAULT)
            st->efault++;
        else
            st->other_errors++;
    }
}

static int numa_move(pd_backend *b, void **pages, size_t n, int tier, pd_migrate_stats *st)
{
    numa_state *s = state_of(b);
    int node = tier_node(s, tier);
    if (node < 0 || (n && !pages)) {
        errno = EINVAL;
        return -1;
    }
    if (n == 0)
        return 0;
    int *outcome = malloc(n * sizeof *outcome);
    if (!outcome)
        return -1;
    op_lock(s);
    s->recounted = 0;
    int rc = move_all(s, pages, n, node, outcome);
    if (rc == 0)
        tally(s, outcome, n, st);
    pthread_mutex_unlock(&s->lock);
    free(outcome);
    return rc;
}

/* Addresses of the pages of [addr, addr+len) from page `first`, at most max. */
static size_t range_pages(const numa_state *s, void *addr, size_t npages, size_t first, void **out, size_t max)
{
    size_t cnt = npages - first < max ? npages - first : max;
    for (size_t i = 0; i < cnt; i++)
        out[i] = (char *)addr + (first + i) * s->page_size;
    return cnt;
}

/* Pages of the range resident on node. -1 on error. */
static long count_on_node(numa_state *s, void *addr, size_t npages, int node, int *where_scratch)
{
    void *pages[PD_NUMA_BATCH];
    long on = 0;
    for (size_t off = 0; off < npages; off += PD_NUMA_BATCH) {
        size_t cnt = range_pages(s, addr, npages, off, pages, PD_NUMA_BATCH);
        if (query_nodes(s, pages, cnt, where_scratch))
            return -1;
        for (size_t i = 0; i < cnt; i++)
            on += where_scratch[i] == node;
    }
    return on;
}

/* Initial placement: a preferred-node policy on the range (pages not yet
 * touched fault in on that node, or fall back when it is full) and migration
 * of the pages already present. Pages not yet present are neither moved nor
 * failed. The fast-memory budget is charged, not enforced, here: placed on
 * the fast tier, every page of the range found there is charged. */
static int place_locked(numa_state *s, void *addr, size_t npages, int node, pd_migrate_stats *st)
{
    int where[PD_NUMA_BATCH];
    long on_before = count_on_node(s, addr, npages, node, where);
    if (on_before < 0)
        return -1;
    if (node == s->fast_node && charged_reserve(s, npages))
        return -1;

    unsigned long mask[MASK_WORDS] = {0};
    mask[node / 64] |= 1UL << (node % 64);
    if (s->sys.mbind(s->sys.ctx, addr, npages * s->page_size, MPOL_PREFERRED, mask, (unsigned long)node + 2,
                     MPOL_MF_MOVE) < 0)
        return -1;

    pd_migrate_stats local = {0};
    void *pages[PD_NUMA_BATCH];
    local.pages_requested = npages;
    for (size_t off = 0; off < npages; off += PD_NUMA_BATCH) {
        size_t cnt = range_pages(s, addr, npages, off, pages, PD_NUMA_BATCH);
        if (query_nodes(s, pages, cnt, where)) /* uncharges what is not on the fast node */
            return -1;
        for (size_t i = 0; i < cnt; i++) {
            if (where[i] == node) {
                local.pages_moved++;
                if (node == s->fast_node)
                    charge(s, pages[i]);
            } else if (where[i] >= 0) {
                local.pages_failed++; /* MPOL_MF_MOVE could not move it (busy, or shared) */
                local.other_errors++;
            }
        }
    }
    if (local.pages_moved > (size_t)on_before)
        local.bytes_moved = (local.pages_moved - (size_t)on_before) * s->page_size;
    if (st) {
        st->pages_requested += local.pages_requested;
        st->pages_moved += local.pages_moved;
        st->pages_failed += local.pages_failed;
        st->bytes_moved += local.bytes_moved;
        st->other_errors += local.other_errors;
    }
    return 0;
}

/* First touch stays (PD_PLACE_FIRST_TOUCH): no policy, no move; the pages
 * of the range found on the fast node are charged to the budget (charged,
 * not enforced, as at place). */
static int adopt_locked(numa_state *s, void *addr, size_t npages, pd_migrate_stats *st)
{
    if (st)
        st->pages_requested += npages;
    /* Without a budget nothing is charged: no query (the runtime asks
     * fast_runs next in any case; a 1 GiB input was 262144 pages queried
     * twice) */
    if (!s->capacity)
        return 0;
    if (charged_reserve(s, npages))
        return -1;
    int where[PD_NUMA_BATCH];
    void *pages[PD_NUMA_BATCH];
    s->adopted_n = 0;
    s->adopted_op = 0;
    int keep = 1;
    for (size_t off = 0; off < npages; off += PD_NUMA_BATCH) {
        size_t cnt = range_pages(s, addr, npages, off, pages, PD_NUMA_BATCH);
        if (query_nodes(s, pages, cnt, where))
            return -1;
        for (size_t i = 0; i < cnt; i++)
            if (where[i] == s->fast_node) {
                charge(s, pages[i]);
                keep = keep && adopted_add(s, (uintptr_t)pages[i], (uintptr_t)pages[i] + s->page_size) == 0;
            }
    }
    if (keep) { /* for fast_runs, if it is the next op */
        s->adopted_lo = (uintptr_t)addr;
        s->adopted_npages = npages;
        s->adopted_op = s->ops;
    }
    return 0;
}

static int numa_place(pd_backend *b, void *addr, size_t len, int tier, pd_migrate_stats *st)
{
    numa_state *s = state_of(b);
    if (tier == PD_PLACE_FIRST_TOUCH && addr && (uintptr_t)addr % s->page_size == 0) {
        size_t npages = (len + s->page_size - 1) / s->page_size;
        op_lock(s);
        int rc = npages ? adopt_locked(s, addr, npages, st) : 0;
        pthread_mutex_unlock(&s->lock);
        return rc;
    }
    int node = tier_node(s, tier);
    if (node < 0 || node >= MASK_WORDS * 64 - 1 || !addr || (uintptr_t)addr % s->page_size) {
        errno = EINVAL;
        return -1;
    }
    size_t npages = (len + s->page_size - 1) / s->page_size;
    if (npages == 0)
        return 0;
    op_lock(s);
    int rc = place_locked(s, addr, npages, node, st);
    pthread_mutex_unlock(&s->lock);
    return rc;
}

static int numa_query(pd_backend *b, void **pages, size_t n, int *tier_out)
{
    numa_state *s = state_of(b);
    if (n && (!pages || !tier_out)) {
        errno = EINVAL;
        return -1;
    }
    op_lock(s);
    int rc = query_nodes(s, pages, n, tier_out);
    pthread_mutex_unlock(&s->lock);
    if (rc)
        return -1;
    for (size_t i = 0; i < n; i++) {
        int w = tier_out[i];
        tier_out[i] = w == s->fast_node ? PD_TIER_FAST : w == s->slow_node ? PD_TIER_SLOW : w < 0 ? w : -EXDEV;
    }
    return 0;
}

/* The fast runs of a range, a batch of move_pages queries at a time: what
 * the runtime's adoption of a new object asked page by page, listing each
 * fast page as a run of its own (a 1 GiB input first touched on the fast
 * node: 262144 runs to sort and merge). The lock is held for a batch's
 * query only; fn runs outside it, so it may not call the backend (the
 * interface's rule) but never waits on it. A run that crosses a batch is
 * reported once. */
static int numa_fast_runs(pd_backend *b, void *addr, size_t len, int (*fn)(void *ctx, uintptr_t lo, uintptr_t hi),
                          void *ctx)
{
    numa_state *s = state_of(b);
    uintptr_t lo = (uintptr_t)addr;
    size_t npages = len / s->page_size + (len % s->page_size != 0);
    if (!fn || lo % s->page_size || npages > (UINTPTR_MAX - lo) / s->page_size)
        return -EINVAL;
    op_lock(s);
    if (s->adopted_op && s->adopted_op + 1 == s->ops && s->adopted_lo == lo && s->adopted_npages == npages) {
        /* what place found a moment ago, nothing done between: fn under
         * the lock (it may not call the backend) */
        int rc = 0;
        for (size_t i = 0; i < s->adopted_n && !rc; i++)
            rc = fn(ctx, s->adopted_runs[2 * i], s->adopted_runs[2 * i + 1]) != 0;
        s->adopted_op = 0;
        pthread_mutex_unlock(&s->lock);
        return rc;
    }
    s->adopted_op = 0;
    pthread_mutex_unlock(&s->lock);
    void *pages[PD_NUMA_BATCH];
    int where[PD_NUMA_BATCH];
    uintptr_t open = 0, end = 0; /* the run not yet reported: [open, end), open == end: none */
    for (size_t off = 0; off < npages; off += PD_NUMA_BATCH) {
        size_t cnt = range_pages(s, addr, npages, off, pages, PD_NUMA_BATCH);
        op_lock(s);
        int qrc = query_nodes(s, pages, cnt, where);
        pthread_mutex_unlock(&s->lock);
        if (qrc)
            return errno ? -errno : -EIO;
        for (size_t i = 0; i < cnt; i++) {
            uintptr_t p = (uintptr_t)pages[i];
            if (where[i] == s->fast_node) {
                if (open == end) /* the range's pages are consecutive */
                    open = p;
                end = p + s->page_size;
                continue;
            }
            if (open != end && fn(ctx, open, end))
                return 1;
            open = end = 0;
        }
    }
    if (open != end && fn(ctx, open, end))
        return 1;
    return 0;
}

static size_t node_mem_free(int node)
{
    char rel[64], path[4096];
    snprintf(rel, sizeof rel, "devices/system/node/node%d/meminfo", node);
    char *text = pd_read_file(pd_sys_path(path, sizeof path, rel), NULL);
    if (!text)
        return 0;
    size_t bytes = 0;
    const char *p = strstr(text, "MemFree:");
    unsigned long long kb;
    if (p && sscanf(p, "MemFree: %llu", &kb) == 1)
        bytes = (size_t)(kb * 1024ULL);
    free(text);
    return bytes;
}

/* With a budget: what is left of it after a re-count (a failed re-count
 * leaves the charges as they were). */
static size_t numa_fast_free(pd_backend *b)
{
    numa_state *s = state_of(b);
    if (!s->capacity)
        return node_mem_free(s->fast_node);
    op_lock(s);
    recount_locked(s);
    size_t left = s->capacity > charged_bytes(s) ? s->capacity - charged_bytes(s) : 0;
    pthread_mutex_unlock(&s->lock);
    return left;
}

/* Forgets the charges of [addr, addr+len): the caller stops managing it (it
 * may be freed, or reused by other memory at the same address). */
static int numa_release(pd_backend *b, void *addr, size_t len)
{
    numa_state *s = state_of(b);
    if (!addr && len) {
        errno = EINVAL;
        return -1;
    }
    uintptr_t lo = (uintptr_t)addr & ~(uintptr_t)(s->page_size - 1);
    uintptr_t end = (uintptr_t)addr + len;
    if (end < (uintptr_t)addr) {
        errno = EINVAL;
        return -1;
    }
    size_t npages = len ? (end - lo + s->page_size - 1) / s->page_size : 0;
    op_lock(s);
    uintptr_t *keys = NULL;
    if (npages > s->charged_cap && s->ncharged)
        keys = malloc(s->ncharged * sizeof *keys);
    if (keys) {
        /* A range larger than the set: walk the set (keys collected first,
         * since uncharging shifts them). */
        uintptr_t kfirst = lo / s->page_size + 1, kend = kfirst + npages;
        size_t k = 0;
        for (size_t i = 0; i < s->charged_cap; i++)
            if (s->charged[i] >= kfirst && s->charged[i] < kend)
                keys[k++] = s->charged[i];
        for (size_t i = 0; i < k; i++)
            uncharge(s, (void *)((keys[i] - 1) * s->page_size));
        free(keys);
    } else {
        for (size_t i = 0; i < npages && s->ncharged; i++)
            uncharge(s, (void *)(lo + i * s->page_size));
    }
    pthread_mutex_unlock(&s->lock);
    return 0;
}

static void numa_destroy(pd_backend *b)
{
    if (!b)
        return;
    numa_state *s = state_of(b);
    pthread_mutex_destroy(&s->lock);
    free(s->adopted_runs);
    free(s->charged);
    free(s);
    free(b);
}

static int is_numa(const pd_backend *b) { return b && b->name == backend_name; }

int pd_backend_numa_set_syscalls(pd_backend *b, const pd_numa_syscalls *sys)
{
    if (!is_numa(b) || (sys && (!sys->move_pages || !sys->mbind))) {
        errno = EINVAL;
        return -1;
    }
    numa_state *s = state_of(b);
    op_lock(s);
    s->sys = sys ? *sys : real_syscalls;
    pthread_mutex_unlock(&s->lock);
    return 0;
}

int pd_backend_numa_recount(pd_backend *b)
{
    if (!is_numa(b)) {
        errno = EINVAL;
        return -1;
    }
    numa_state *s = state_of(b);
    op_lock(s);
    int rc = recount_locked(s);
    pthread_mutex_unlock(&s->lock);
    return rc;
}

size_t pd_backend_numa_charged(pd_backend *b)
{
    if (!is_numa(b))
        return 0;
    numa_state *s = state_of(b);
    op_lock(s);
    size_t bytes = charged_bytes(s);
    pthread_mutex_unlock(&s->lock);
    return bytes;
}

int pd_backend_numa_nodes(const pd_backend *b, int *fast_node, int *slow_node)
{
    if (!is_numa(b)) {
        errno = EINVAL;
        return -1;
    }
    const numa_state *s = b->state;
    if (fast_node)
        *fast_node = s->fast_node;
    if (slow_node)
        *slow_node = s->slow_node;
    return 0;
}

static int promote_locked(numa_state *s, void **promote, size_t n, void **demote, size_t m, pd_migrate_stats *st,
                          pd_migrate_stats *demoted);

int pd_backend_numa_promote(pd_backend *b, void **promote, size_t n, void **demote, size_t m,
                            pd_migrate_stats *st, pd_migrate_stats *demoted)
{
    if (!is_numa(b) || (n && !promote) || (m && !demote)) {
        errno = EINVAL;
        return -1;
    }
    numa_state *s = state_of(b);
    if (n == 0)
        return 0;
    op_lock(s);
    s->recounted = 0;
    int rc = promote_locked(s, promote, n, demote, m, st, demoted);
    pthread_mutex_unlock(&s->lock);
    return rc;
}

static int promote_locked(numa_state *s, void **promote, size_t n, void **demote, size_t m, pd_migrate_stats *st,
                          pd_migrate_stats *demoted)
{
    int *outcome = malloc(n * sizeof *outcome);
    void **refused = malloc(n * sizeof *refused);
    size_t *refused_at = malloc(n * sizeof *refused_at);
    int *scratch = malloc(n * sizeof *scratch);
    unsigned char *displaced = calloc(n, 1);
    pd_page_pos *ix = NULL;
    int rc = -1;
    if (!outcome || !refused || !refused_at || !scratch || !displaced)
        goto out;
    if (move_all(s, promote, n, s->fast_node, outcome))
        goto out;

    size_t cursor = 0; /* next demotion candidate, coldest first */
    int probed = 0;    /* planned pages were given up once, and it helped */
    for (int round = 0; round < PD_NUMA_DEMOTE_ROUNDS; round++) {
        size_t nref = 0;
        for (size_t i = 0; i < n; i++)
            if (outcome[i] == -ENOMEM && !displaced[i]) {
                refused_at[nref] = i;
                refused[nref++] = promote[i];
            }
        if (nref == 0 || cursor >= m)
            break;
        if (!ix && !(ix = pd_page_index(promote, n)))
            goto out;

        /* Pick candidates that really sit on the fast node: as many as pages
         * were refused, doubling each round, since a kernel that refused keeps
         * more free than that (its watermarks rise after fallbacks). */
        void *victims[PD_NUMA_BATCH];
        long victim_at[PD_NUMA_BATCH];
        int where[PD_NUMA_BATCH], vout[PD_NUMA_BATCH];
        size_t freed = 0, want = nref << round, displaced_now = 0, paired = 0, planned_picked = 0;
        int capped = 0;
        while (freed < want && cursor < m && !capped) {
            size_t cnt = m - cursor < PD_NUMA_BATCH ? m - cursor : PD_NUMA_BATCH;
            if (query_nodes(s, demote + cursor, cnt, where))
                goto out;
            size_t nv = 0, used = 0;
            for (; used < cnt && freed + nv < want; used++) {
                if (where[used] != s->fast_node)
                    continue;
                /* Each victim makes room for the hottest refused page not
                 * yet paired; a planned page only for a hotter one. */
                long at = pd_page_index_find(ix, n, demote[cursor + used]);
                if (at >= 0 && !probed && planned_picked >= PD_NUMA_PROBE) {
                    capped = 1; /* the rest in a later round, if the probe helped */
                    break;
                }
                if (at >= 0 && (displaced[at] || paired >= nref || refused_at[paired] >= (size_t)at))
                    continue;
                paired++;
                planned_picked += at >= 0;
                victim_at[nv] = at;
                victims[nv++] = demote[cursor + used];
            }
            cursor += used;
            if (nv == 0)
                continue;
            if (move_batch(s, victims, nv, s->slow_node, vout))
                goto out;
            tally(s, vout, nv, demoted);
            for (size_t v = 0; v < nv; v++) {
                freed += vout[v] == 1;
                if (vout[v] == 1 && victim_at[v] >= 0) {
                    displaced_now++;
                    displaced[victim_at[v]] = 1;
                    outcome[victim_at[v]] = -ENOMEM;
                }
            }
        }
        if (freed == 0)
            break; /* nothing could be made room for */

        if (move_all(s, refused, nref, s->fast_node, scratch))
            goto out;
        size_t admitted = 0;
        for (size_t r = 0; r < nref; r++)
            admitted += scratch[r] >= 0;
        for (size_t r = 0; r < nref; r++)
            outcome[refused_at[r]] = scratch[r];
        /* Planned pages were given up (at first at most PD_NUMA_PROBE of
         * them) and the kernel still took none: more would only lose more (freed frames can sit on per-CPU free lists
         * that its watermark check does not count; docs/numa.md). */
        if (admitted == 0 && displaced_now)
            break;
        probed |= displaced_now > 0;
    }
    tally(s, outcome, n, st);
    rc = 0;
out:
    free(outcome);
    free(refused);
    free(refused_at);
    free(scratch);
    free(displaced);
    free(ix);
    return rc;
}

static int numa_promote_op(pd_backend *b, void **pages, size_t n, void **cold, size_t m, pd_migrate_stats *st,
                           pd_migrate_stats *demoted)
{
    return pd_backend_numa_promote(b, pages, n, cold, m, st, demoted);
}

/* Node entry with memory, or NULL. */
static const pd_tier_node *memory_node(const pd_tiers *t, int id)
{
    const pd_tier_node *n = pd_tiers_node(t, id);
    return n && n->mem_total ? n : NULL;
}

pd_backend *pd_backend_numa_create(int fast_node, int slow_node, size_t fast_capacity)
{
    pd_tiers *t = malloc(sizeof *t);
    if (!t)
        return NULL;
    char err[256];
    if (pd_tiers_discover(t, err, sizeof err)) {
        free(t);
        errno = EIO; /* unreadable sysfs: the caller may retry with the sim backend */
        return NULL;
    }
    int fast = fast_node >= 0 ? fast_node : t->fast_node;
    int slow = slow_node;
    if (slow < 0) {
        if (fast == t->fast_node)
            slow = t->slow_node;
        else {
            /* An explicit fast node: the first memory node slower than it. */
            const pd_tier_node *f = memory_node(t, fast);
            for (int i = 0; f && i < t->nnodes && slow < 0; i++)
                if (&t->node[i] != f && t->node[i].mem_total && pd_tiers_is_slower(&t->node[i], f))
                    slow = t->node[i].id;
        }
    }
    int ok = slow >= 0 && fast != slow && memory_node(t, fast) && memory_node(t, slow) &&
             fast < MASK_WORDS * 64 - 1 && slow < MASK_WORDS * 64 - 1;
    int same = slow >= 0 && fast == slow;
    free(t);
    if (!ok) {
        errno = same ? EINVAL : ENODEV;
        return NULL;
    }

    pd_backend *b = calloc(1, sizeof *b);
    numa_state *s = calloc(1, sizeof *s);
    if (!b || !s) {
        free(b);
        free(s);
        errno = ENOMEM;
        return NULL;
    }
    s->page_size = pd_page_size();
    s->fast_node = fast;
    s->slow_node = slow;
    s->capacity = fast_capacity;
    s->sys = real_syscalls;
    pthread_mutex_init(&s->lock, NULL);
    b->name = backend_name;
    b->place = numa_place;
    b->move = numa_move;
    b->query = numa_query;
    b->fast_free = numa_fast_free;
    b->destroy = numa_destroy;
    b->promote = numa_promote_op;
    b->release = numa_release;
    b->fast_runs = numa_fast_runs;
    b->state = s;
    return b;
}
