/* Simulated two-tier memory: remembers a tier per page and enforces the
 * fast-tier capacity, so the runtime's placement decisions can be checked
 * on machines without a slow tier. No page is really moved. Thread-safe
 * (one mutex).
 *
 * The tiers are kept as sorted runs of pages (an interval map), not per
 * page: registering, placing or releasing a range costs what its runs
 * cost, not what its pages do. With a table of single pages, registering
 * the phases example's 2 GiB input took 88 - 96 ms, most of it inserting
 * 262144 pages one by one. A call that names single pages (move, promote)
 * works on a sorted copy of the pages it names, then writes what changed
 * back into the runs in one merge. */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/util.h"
#include "lib/addr_sort.h"
#include "lib/backend.h"

enum { UNKNOWN = -1, ERASE = 2 }; /* a page never placed; a segment that forgets its pages */

typedef struct {
    uintptr_t lo, hi; /* [lo, hi), page-aligned */
    int tier;         /* PD_TIER_FAST or PD_TIER_SLOW (ERASE only in segments) */
} run;

typedef struct {
    run *runs; /* sorted, disjoint; neighbours that touch have different tiers */
    size_t n;
    size_t fast_pages;
    size_t capacity_pages;
    size_t page;
    pthread_mutex_t lock;
} sim_state;

/* Index of the first run ending after addr. */
static size_t run_after(const sim_state *s, uintptr_t addr)
{
    size_t lo = 0, hi = s->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->runs[mid].hi <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static int tier_of(const sim_state *s, uintptr_t page)
{
    size_t i = run_after(s, page);
    return i < s->n && s->runs[i].lo <= page ? s->runs[i].tier : UNKNOWN;
}

static void emit(run *out, size_t *n, uintptr_t lo, uintptr_t hi, int tier)
{
    if (lo >= hi || tier == ERASE)
        return;
    if (*n && out[*n - 1].hi == lo && out[*n - 1].tier == tier)
        out[*n - 1].hi = hi;
    else
        out[(*n)++] = (run){lo, hi, tier};
}

/* Room a merge of m segments may need: each can split one run in two. */
static size_t merge_room(const sim_state *s, size_t m) { return s->n + 2 * m + 1; }

/* The runs overlaid by seg[0..m) (sorted, disjoint), written to out (room
 * for merge_room(s, m)), which becomes the state's (or is freed when m is
 * 0); the fast pages are counted again from the result. The runs before
 * the first segment are copied whole. */
static void merge(sim_state *s, const run *seg, size_t m, run *out)
{
    if (!m) { /* nothing changed: the runs stay as they are */
        free(out);
        return;
    }
    size_t i = run_after(s, seg[0].lo), n = i;
    if (i)
        memcpy(out, s->runs, i * sizeof *out);
    run cur = {0, 0, 0};
    int have = 0; /* cur: what is left of runs[i - 1] past the last segment */
    for (size_t g = 0; g < m; g++) {
        for (;;) {
            if (!have) {
                if (i == s->n)
                    break;
                cur = s->runs[i++];
                have = 1;
            }
            if (cur.lo >= seg[g].hi)
                break; /* the next segment's business */
            emit(out, &n, cur.lo, cur.lo < seg[g].lo ? (cur.hi < seg[g].lo ? cur.hi : seg[g].lo) : cur.lo, cur.tier);
            if (cur.hi > seg[g].hi) {
                cur.lo = seg[g].hi; /* its tail outlives the segment */
                break;
            }
            have = 0;
        }
        emit(out, &n, seg[g].lo, seg[g].hi, seg[g].tier);
    }
    if (have)
        emit(out, &n, cur.lo, cur.hi, cur.tier);
    for (; i < s->n; i++)
        emit(out, &n, s->runs[i].lo, s->runs[i].hi, s->runs[i].tier);
    free(s->runs);
    s->runs = out;
    s->n = n;
    size_t fast = 0;
    for (size_t k = 0; k < n; k++)
        if (out[k].tier == PD_TIER_FAST)
            fast += (out[k].hi - out[k].lo) / s->page;
    s->fast_pages = fast;
}

/* The pieces of [lo, hi) in address order, each with its tier (UNKNOWN for
 * pages never placed): at most twice the runs it overlaps, plus one. */
typedef struct {
    uintptr_t lo, hi;
    int tier;
} piece;

static piece *pieces_of(const sim_state *s, uintptr_t lo, uintptr_t hi, size_t *np)
{
    size_t first = run_after(s, lo), last = first;
    while (last < s->n && s->runs[last].lo < hi)
        last++;
    piece *p = malloc((2 * (last - first) + 1) * sizeof *p);
    if (!p)
        return NULL;
    size_t n = 0;
    uintptr_t at = lo;
    for (size_t i = first; i < last; i++) {
        uintptr_t a = s->runs[i].lo > lo ? s->runs[i].lo : lo, b = s->runs[i].hi < hi ? s->runs[i].hi : hi;
        if (at < a)
            p[n++] = (piece){at, a, UNKNOWN};
        p[n++] = (piece){a, b, s->runs[i].tier};
        at = b;
    }
    if (at < hi)
        p[n++] = (piece){at, hi, UNKNOWN};
    *np = n;
    return p;
}

/* A range to one tier, as page by page in address order would: a page
 * already there counts as moved; a page that does not fit in the fast tier
 * fails (enomem) and, if never placed, starts on the slow tier. First
 * touch (PD_PLACE_FIRST_TOUCH) places only pages never placed, fast while
 * room is left, and counts them as requested, not moved. */
static int place_range(sim_state *s, uintptr_t lo, uintptr_t hi, int tier, pd_migrate_stats *st)
{
    size_t np = 0, pg = s->page;
    piece *p = pieces_of(s, lo, hi, &np);
    run *seg = p ? malloc((2 * np + 1) * sizeof *seg) : NULL;
    run *out = seg ? malloc(merge_room(s, 2 * np) * sizeof *out) : NULL;
    size_t pages = (hi - lo) / pg;
    if (!out) {
        free(p);
        free(seg);
        st->pages_requested += pages;
        st->pages_failed += pages;
        st->enomem += pages;
        return -1;
    }
    size_t m = 0, room = s->capacity_pages > s->fast_pages ? s->capacity_pages - s->fast_pages : 0;
    pd_migrate_stats loc = {0};
    loc.pages_requested = pages;
    for (size_t k = 0; k < np; k++) {
        size_t len = (p[k].hi - p[k].lo) / pg;
        if (tier == PD_PLACE_FIRST_TOUCH) {
            if (p[k].tier != UNKNOWN)
                continue;
            size_t take = len < room ? len : room;
            seg[m++] = (run){p[k].lo, p[k].lo + take * pg, PD_TIER_FAST};
            seg[m++] = (run){p[k].lo + take * pg, p[k].hi, PD_TIER_SLOW};
            room -= take;
        } else if (p[k].tier == tier) {
            loc.pages_moved += len;
        } else if (tier == PD_TIER_SLOW) {
            room += p[k].tier == PD_TIER_FAST ? len : 0;
            seg[m++] = (run){p[k].lo, p[k].hi, PD_TIER_SLOW};
            loc.pages_moved += len;
            loc.bytes_moved += len * pg;
        } else {
            size_t take = len < room ? len : room;
            seg[m++] = (run){p[k].lo, p[k].lo + take * pg, PD_TIER_FAST};
            if (p[k].tier == UNKNOWN)
                seg[m++] = (run){p[k].lo + take * pg, p[k].hi, PD_TIER_SLOW};
            room -= take;
            loc.pages_moved += take;
            loc.bytes_moved += take * pg;
            loc.pages_failed += len - take;
            loc.enomem += len - take;
        }
    }
    size_t keep = 0; /* empty segments out: merge wants them sorted and non-empty */
    for (size_t k = 0; k < m; k++)
        if (seg[k].lo < seg[k].hi)
            seg[keep++] = seg[k];
    merge(s, seg, keep, out);
    free(p);
    free(seg);
    pd_migrate_stats_add(st, &loc);
    return 0;
}

/* Single pages named by a call, sorted and unique, each with its tier
 * before the call (was) and as the call leaves it (now). */
typedef struct {
    uintptr_t page;
    int was, now;
} touched;

static int cmp_touched(const void *a, const void *b)
{
    uintptr_t x = ((const touched *)a)->page, y = ((const touched *)b)->page;
    return x < y ? -1 : x > y;
}

typedef struct {
    touched *v;
    size_t n;
    run *seg, *out; /* allocated before anything changes: the write-back cannot fail */
} page_txn;

/* The page-aligned entries of a[0..na) and b[0..nb). 0 or -1 (ENOMEM). */
static int txn_begin(const sim_state *s, page_txn *t, void *const *a, size_t na, void *const *b, size_t nb)
{
    memset(t, 0, sizeof *t);
    size_t cap = na + nb;
    t->v = malloc((cap ? cap : 1) * sizeof *t->v);
    t->seg = malloc((cap ? cap : 1) * sizeof *t->seg);
    t->out = malloc(merge_room(s, cap) * sizeof *t->out);
    if (!t->v || !t->seg || !t->out) {
        free(t->v);
        free(t->seg);
        free(t->out);
        return -1;
    }
    for (size_t i = 0; i < cap; i++) {
        uintptr_t p = (uintptr_t)(i < na ? a[i] : b[i - na]);
        if (p % s->page == 0)
            t->v[t->n++] = (touched){p, 0, 0};
    }
    rt_sort_by_address(t->v, t->n, sizeof *t->v, cmp_touched);
    size_t k = 0;
    for (size_t i = 0; i < t->n; i++)
        if (k == 0 || t->v[k - 1].page != t->v[i].page)
            t->v[k++] = t->v[i];
    t->n = k;
    for (size_t i = 0, r = t->n ? run_after(s, t->v[0].page) : 0; i < t->n; i++) {
        while (r < s->n && s->runs[r].hi <= t->v[i].page)
            r++;
        t->v[i].was = t->v[i].now = r < s->n && s->runs[r].lo <= t->v[i].page ? s->runs[r].tier : UNKNOWN;
    }
    return 0;
}

static touched *txn_find(page_txn *t, uintptr_t page)
{
    size_t lo = 0, hi = t->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->v[mid].page < page)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < t->n && t->v[lo].page == page ? &t->v[lo] : NULL;
}

/* One page to a tier, counted in st; the state's fast count follows. */
static void txn_set(sim_state *s, touched *e, int tier, pd_migrate_stats *st)
{
    st->pages_requested++;
    if (e->now == tier) {
        st->pages_moved++;
        return;
    }
    if (tier == PD_TIER_FAST && s->fast_pages >= s->capacity_pages) {
        st->pages_failed++;
        st->enomem++;
        if (e->now == UNKNOWN) /* a new page that does not fit starts on the slow tier */
            e->now = PD_TIER_SLOW;
        return;
    }
    if (e->now == PD_TIER_FAST)
        s->fast_pages--;
    if (tier == PD_TIER_FAST)
        s->fast_pages++;
    e->now = tier;
    st->pages_moved++;
    st->bytes_moved += s->page;
}

/* What changed, written back into the runs; frees the transaction. */
static void txn_commit(sim_state *s, page_txn *t)
{
    size_t m = 0;
    for (size_t i = 0; i < t->n; i++) {
        if (t->v[i].now == t->v[i].was)
            continue;
        uintptr_t p = t->v[i].page;
        if (m && t->seg[m - 1].hi == p && t->seg[m - 1].tier == t->v[i].now)
            t->seg[m - 1].hi = p + s->page;
        else
            t->seg[m++] = (run){p, p + s->page, t->v[i].now};
    }
    merge(s, t->seg, m, t->out);
    free(t->v);
    free(t->seg);
}

static int sim_place(pd_backend *b, void *addr, size_t len, int tier, pd_migrate_stats *st)
{
    sim_state *s = b->state;
    if ((tier != PD_TIER_FAST && tier != PD_TIER_SLOW && tier != PD_PLACE_FIRST_TOUCH) || !st ||
        ((uintptr_t)addr % s->page) != 0)
        return -EINVAL;
    uintptr_t lo = (uintptr_t)addr;
    size_t pages = len / s->page + (len % s->page != 0);
    if (pages > (UINTPTR_MAX - lo) / s->page)
        return -EINVAL; /* the range wraps around the address space */
    if (!pages)
        return st->pages_failed ? -ENOMEM : 0;
    pthread_mutex_lock(&s->lock);
    int rc = place_range(s, lo, lo + pages * s->page, tier, st);
    pthread_mutex_unlock(&s->lock);
    return rc || st->pages_failed ? -ENOMEM : 0;
}

static void count_misaligned(pd_migrate_stats *st)
{
    st->pages_requested++;
    st->pages_failed++;
    st->efault++;
}

/* Out of memory before any page was decided: every page failed, none moved. */
static int refuse_all(pd_migrate_stats *st, size_t n)
{
    if (st) {
        st->pages_requested += n;
        st->pages_failed += n;
        st->enomem += n;
    }
    return -ENOMEM;
}

static int sim_move(pd_backend *b, void **pages, size_t n, int tier, pd_migrate_stats *st)
{
    sim_state *s = b->state;
    if ((tier != PD_TIER_FAST && tier != PD_TIER_SLOW) || !st || (n && !pages))
        return -EINVAL;
    size_t failed0 = st->pages_failed;
    pthread_mutex_lock(&s->lock);
    page_txn t;
    if (txn_begin(s, &t, pages, n, NULL, 0) != 0) {
        pthread_mutex_unlock(&s->lock);
        return refuse_all(st, n);
    }
    for (size_t i = 0; i < n; i++) {
        uintptr_t p = (uintptr_t)pages[i];
        if (p % s->page)
            count_misaligned(st);
        else
            txn_set(s, txn_find(&t, p), tier, st);
    }
    txn_commit(s, &t);
    pthread_mutex_unlock(&s->lock);
    return st->pages_failed > failed0 ? -ENOMEM : 0;
}

/* Exact capacity: each demotion frees one slot, so the candidates go one by
 * one, each followed by the hottest page still refused. */
static int sim_promote(pd_backend *b, void **pages, size_t n, void **cold, size_t m, pd_migrate_stats *st,
                       pd_migrate_stats *demoted)
{
    sim_state *s = b->state;
    if ((n && !pages) || (m && !cold))
        return -EINVAL;
    signed char *state = malloc(n ? n : 1); /* 2 moved now, 1 already fast, 0 refused, -1 bad address */
    unsigned char *displaced = calloc(n ? n : 1, 1);
    /* pages by address, built only once a page is refused and a demotion
     * is tried: promoting 512 MiB that fit, its sort was a fifth of the
     * sync point */
    pd_page_pos *ix = NULL;
    if (!state || !displaced) {
        free(state);
        free(displaced);
        return refuse_all(st, n);
    }
    pd_migrate_stats dem = {0};
    pthread_mutex_lock(&s->lock);
    page_txn t;
    if (txn_begin(s, &t, pages, n, cold, m) != 0) {
        pthread_mutex_unlock(&s->lock);
        free(state);
        free(displaced);
        return refuse_all(st, n);
    }
    for (size_t i = 0; i < n; i++) {
        pd_migrate_stats one = {0};
        if ((uintptr_t)pages[i] % s->page) {
            state[i] = -1;
            continue;
        }
        txn_set(s, txn_find(&t, (uintptr_t)pages[i]), PD_TIER_FAST, &one);
        state[i] = one.pages_moved ? (one.bytes_moved ? 2 : 1) : 0;
    }
    size_t hottest = 0; /* first refused page */
    for (size_t c = 0; c < m; c++) {
        while (hottest < n && (state[hottest] != 0 || displaced[hottest]))
            hottest++;
        if (hottest == n)
            break;
        uintptr_t p = (uintptr_t)cold[c];
        if (p % s->page)
            continue;
        touched *e = txn_find(&t, p);
        if (e->now != PD_TIER_FAST)
            continue;
        if (!ix && !(ix = pd_page_index(pages, n)))
            break; /* out of memory: the refused pages stay refused */
        long at = pd_page_index_find(ix, n, cold[c]);
        if (at >= 0 && ((size_t)at <= hottest || displaced[at]))
            continue;
        txn_set(s, e, PD_TIER_SLOW, &dem);
        if (at >= 0) {
            displaced[at] = 1;
            state[at] = 0;
        }
        pd_migrate_stats one = {0};
        txn_set(s, txn_find(&t, (uintptr_t)pages[hottest]), PD_TIER_FAST, &one);
        state[hottest] = one.pages_moved ? 2 : 0;
    }
    txn_commit(s, &t);
    pthread_mutex_unlock(&s->lock);

    size_t failed = 0;
    for (size_t i = 0; i < n; i++)
        failed += state[i] <= 0;
    if (st) {
        st->pages_requested += n;
        st->pages_failed += failed;
        for (size_t i = 0; i < n; i++) {
            if (state[i] > 0) {
                st->pages_moved++;
                st->bytes_moved += state[i] == 2 ? s->page : 0;
            } else if (state[i] == 0) {
                st->enomem++;
            } else {
                st->efault++;
            }
        }
    }
    if (demoted)
        pd_migrate_stats_add(demoted, &dem); /* dem counts only what txn_set counts */
    free(state);
    free(displaced);
    free(ix);
    return failed ? -ENOMEM : 0;
}

static int sim_query(pd_backend *b, void **pages, size_t n, int *tier_out)
{
    sim_state *s = b->state;
    if (n && (!pages || !tier_out))
        return -EINVAL;
    pthread_mutex_lock(&s->lock);
    for (size_t i = 0; i < n; i++) {
        int t = tier_of(s, (uintptr_t)pages[i] & ~(uintptr_t)(s->page - 1));
        tier_out[i] = t == UNKNOWN ? -ENOENT : t; /* never placed */
    }
    pthread_mutex_unlock(&s->lock);
    return 0;
}

static size_t sim_fast_free(pd_backend *b)
{
    sim_state *s = b->state;
    pthread_mutex_lock(&s->lock);
    size_t free_pages = s->capacity_pages > s->fast_pages ? s->capacity_pages - s->fast_pages : 0;
    pthread_mutex_unlock(&s->lock);
    return free_pages * s->page;
}

/* The runtime stops managing [addr, addr+len) (an object unregistered or
 * moved: its memory may be freed and the address reused): its pages are
 * forgotten and give their fast-tier capacity back. Without this, a
 * program's freed temporaries kept the simulated fast tier full for good
 * and every later promotion failed with ENOMEM (GAP's PageRank under
 * `paddiser run`: the graph builder's 512 MiB arrays, freed, held all of
 * it). */
static int sim_release(pd_backend *b, void *addr, size_t len)
{
    sim_state *s = b->state;
    uintptr_t lo = (uintptr_t)addr & ~(uintptr_t)(s->page - 1), end = (uintptr_t)addr + len;
    if ((!addr && len) || end < (uintptr_t)addr) {
        errno = EINVAL;
        return -1;
    }
    size_t npages = len ? (size_t)((end - lo + s->page - 1) / s->page) : 0;
    if (npages > (UINTPTR_MAX - lo) / s->page)
        npages = (UINTPTR_MAX - lo) / s->page; /* the last page of the address space cannot be named */
    pthread_mutex_lock(&s->lock);
    if (!npages || !s->n) {
        pthread_mutex_unlock(&s->lock);
        return 0;
    }
    run seg = {lo, lo + npages * s->page, ERASE};
    run *out = malloc(merge_room(s, 1) * sizeof *out);
    if (!out) {
        pthread_mutex_unlock(&s->lock);
        errno = ENOMEM;
        return -1;
    }
    merge(s, &seg, 1, out);
    pthread_mutex_unlock(&s->lock);
    return 0;
}

/* The fast runs of a range, straight from the map: what the runtime's
 * adoption of a new object asked page by page (8 - 9.5 ms of a sync point
 * after registering a 1 - 2 GiB input). */
static int sim_fast_runs(pd_backend *b, void *addr, size_t len, int (*fn)(void *ctx, uintptr_t lo, uintptr_t hi),
                         void *ctx)
{
    sim_state *s = b->state;
    uintptr_t lo = (uintptr_t)addr;
    size_t pages = len / s->page + (len % s->page != 0);
    if (!fn || lo % s->page || pages > (UINTPTR_MAX - lo) / s->page)
        return -EINVAL;
    uintptr_t hi = lo + pages * s->page;
    int rc = 0;
    pthread_mutex_lock(&s->lock);
    for (size_t i = run_after(s, lo); i < s->n && s->runs[i].lo < hi && !rc; i++)
        if (s->runs[i].tier == PD_TIER_FAST)
            rc = fn(ctx, s->runs[i].lo > lo ? s->runs[i].lo : lo, s->runs[i].hi < hi ? s->runs[i].hi : hi) != 0;
    pthread_mutex_unlock(&s->lock);
    return rc;
}

static void sim_destroy(pd_backend *b)
{
    if (!b)
        return;
    sim_state *s = b->state;
    pthread_mutex_destroy(&s->lock);
    free(s->runs);
    free(s);
    free(b);
}

pd_backend *pd_backend_sim_create(size_t fast_capacity)
{
    pd_backend *b = calloc(1, sizeof *b);
    sim_state *s = calloc(1, sizeof *s);
    if (!b || !s) {
        free(b);
        free(s);
        errno = ENOMEM;
        return NULL;
    }
    s->page = pd_page_size();
    s->capacity_pages = fast_capacity / s->page;
    pthread_mutex_init(&s->lock, NULL);
    b->name = "sim";
    b->place = sim_place;
    b->move = sim_move;
    b->query = sim_query;
    b->fast_free = sim_fast_free;
    b->destroy = sim_destroy;
    b->promote = sim_promote;
    b->release = sim_release;
    b->fast_runs = sim_fast_runs;
    b->state = s;
    return b;
}
