/* Simulated two-tier memory: remembers a tier per page (keyed by page
 * address) and enforces the fast-tier capacity, so the runtime's placement
 * decisions can be checked on machines without a slow tier. No page is
 * really moved. Thread-safe (one mutex). */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "common/util.h"
#include "lib/backend.h"

typedef struct {
    uintptr_t *keys; /* page address + 1 (0 = empty slot) */
    unsigned char *tier;
    size_t cap, used; /* slots; cap is a power of two */
    size_t fast_pages;
    size_t capacity_pages;
    size_t page;
    pthread_mutex_t lock;
} sim_state;

static size_t hash_page(uintptr_t key, size_t mask)
{
    uint64_t h = (uint64_t)key * 0x9E3779B97F4A7C15ull;
    return (size_t)(h >> 17) & mask;
}

/* Slot of page key, or the empty slot where it would go. */
static size_t find_slot(const sim_state *s, uintptr_t key)
{
    size_t mask = s->cap - 1, i = hash_page(key, mask);
    while (s->keys[i] && s->keys[i] != key)
        i = (i + 1) & mask;
    return i;
}

static int grow(sim_state *s)
{
    size_t ncap = s->cap ? s->cap * 2 : 1024;
    uintptr_t *nk = calloc(ncap, sizeof *nk);
    unsigned char *nt = calloc(ncap, 1);
    if (!nk || !nt) {
        free(nk);
        free(nt);
        return -1;
    }
    sim_state old = *s;
    s->keys = nk;
    s->tier = nt;
    s->cap = ncap;
    for (size_t i = 0; i < old.cap; i++) {
        if (!old.keys[i])
            continue;
        size_t j = find_slot(s, old.keys[i]);
        s->keys[j] = old.keys[i];
        s->tier[j] = old.tier[i];
    }
    free(old.keys);
    free(old.tier);
    return 0;
}

/* Sets one page's tier; counts the outcome in st. Caller holds the lock. */
static void set_page(sim_state *s, uintptr_t page, int tier, pd_migrate_stats *st)
{
    st->pages_requested++;
    if ((s->used + 1) * 2 > s->cap && grow(s) != 0) {
        st->pages_failed++;
        st->enomem++;
        return;
    }
    uintptr_t key = page + 1;
    size_t i = find_slot(s, key);
    int known = s->keys[i] != 0;
    int cur = known ? s->tier[i] : -1;
    if (cur == tier) {
        st->pages_moved++;
        return;
    }
    if (tier == PD_TIER_FAST && s->fast_pages >= s->capacity_pages) {
        st->pages_failed++;
        st->enomem++;
        if (!known) { /* a new page that does not fit starts on the slow tier */
            s->keys[i] = key;
            s->tier[i] = PD_TIER_SLOW;
            s->used++;
        }
        return;
    }
    if (!known) {
        s->keys[i] = key;
        s->used++;
    }
    if (cur == PD_TIER_FAST)
        s->fast_pages--;
    if (tier == PD_TIER_FAST)
        s->fast_pages++;
    s->tier[i] = (unsigned char)tier;
    st->pages_moved++;
    st->bytes_moved += s->page;
}

/* First touch of a page never seen: fast while room is left, else slow. A
 * known page stays where it is. Caller holds the lock. */
static void first_touch_page(sim_state *s, uintptr_t page, pd_migrate_stats *st)
{
    if (!s->cap || !s->keys[find_slot(s, page + 1)]) {
        pd_migrate_stats quiet = {0}; /* a first touch is not a move */
        set_page(s, page, s->fast_pages < s->capacity_pages ? PD_TIER_FAST : PD_TIER_SLOW, &quiet);
    }
    st->pages_requested++;
}

static int sim_place(pd_backend *b, void *addr, size_t len, int tier, pd_migrate_stats *st)
{
    sim_state *s = b->state;
    if ((tier != PD_TIER_FAST && tier != PD_TIER_SLOW && tier != PD_PLACE_FIRST_TOUCH) || !st ||
        ((uintptr_t)addr % s->page) != 0)
        return -EINVAL;
    pthread_mutex_lock(&s->lock);
    for (size_t off = 0; off < len; off += s->page) {
        if (tier == PD_PLACE_FIRST_TOUCH)
            first_touch_page(s, (uintptr_t)addr + off, st);
        else
            set_page(s, (uintptr_t)addr + off, tier, st);
    }
    pthread_mutex_unlock(&s->lock);
    return st->pages_failed ? -ENOMEM : 0;
}

static int sim_move(pd_backend *b, void **pages, size_t n, int tier, pd_migrate_stats *st)
{
    sim_state *s = b->state;
    if ((tier != PD_TIER_FAST && tier != PD_TIER_SLOW) || !st || (n && !pages))
        return -EINVAL;
    size_t failed0 = st->pages_failed;
    pthread_mutex_lock(&s->lock);
    for (size_t i = 0; i < n; i++) {
        uintptr_t p = (uintptr_t)pages[i];
        if (p % s->page) {
            st->pages_requested++;
            st->pages_failed++;
            st->efault++;
            continue;
        }
        set_page(s, p, tier, st);
    }
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
    pd_page_pos *ix = pd_page_index(pages, n);
    if (!state || !displaced || !ix) {
        free(state);
        free(displaced);
        free(ix);
        return -ENOMEM;
    }
    pd_migrate_stats dem = {0};
    pthread_mutex_lock(&s->lock);
    for (size_t i = 0; i < n; i++) {
        pd_migrate_stats one = {0};
        if ((uintptr_t)pages[i] % s->page) {
            state[i] = -1;
            continue;
        }
        set_page(s, (uintptr_t)pages[i], PD_TIER_FAST, &one);
        state[i] = one.pages_moved ? (one.bytes_moved ? 2 : 1) : 0;
    }
    size_t hottest = 0; /* first refused page */
    for (size_t c = 0; c < m; c++) {
        while (hottest < n && (state[hottest] != 0 || displaced[hottest]))
            hottest++;
        if (hottest == n)
            break;
        uintptr_t p = (uintptr_t)cold[c];
        if (p % s->page || !s->cap)
            continue;
        size_t slot = find_slot(s, p + 1);
        if (!s->keys[slot] || s->tier[slot] != PD_TIER_FAST)
            continue;
        long at = pd_page_index_find(ix, n, cold[c]);
        if (at >= 0 && ((size_t)at <= hottest || displaced[at]))
            continue;
        set_page(s, p, PD_TIER_SLOW, &dem);
        if (at >= 0) {
            displaced[at] = 1;
            state[at] = 0;
        }
        pd_migrate_stats one = {0};
        set_page(s, (uintptr_t)pages[hottest], PD_TIER_FAST, &one);
        state[hottest] = one.pages_moved ? 2 : 0;
    }
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
    if (demoted) {
        demoted->pages_requested += dem.pages_requested;
        demoted->pages_moved += dem.pages_moved;
        demoted->bytes_moved += dem.bytes_moved;
        demoted->pages_failed += dem.pages_failed;
        demoted->enomem += dem.enomem;
    }
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
        uintptr_t p = (uintptr_t)pages[i] & ~(uintptr_t)(s->page - 1);
        if (!s->cap) {
            tier_out[i] = -ENOENT;
            continue;
        }
        size_t j = find_slot(s, p + 1);
        tier_out[i] = s->keys[j] ? s->tier[j] : -ENOENT; /* never placed */
    }
    pthread_mutex_unlock(&s->lock);
    return 0;
}

static size_t sim_fast_free(pd_backend *b)
{
    sim_state *s = b->state;
    pthread_mutex_lock(&s->lock);
    size_t free_pages = s->capacity_pages - s->fast_pages;
    pthread_mutex_unlock(&s->lock);
    return free_pages * s->page;
}

/* Empties slot i of the linear-probing table: later entries of its probe
 * run move back into the hole (backward-shift deletion), so every key stays
 * reachable from its home slot without tombstones. Caller holds the lock. */
static void remove_slot(sim_state *s, size_t i)
{
    size_t mask = s->cap - 1;
    if (s->tier[i] == PD_TIER_FAST)
        s->fast_pages--;
    s->keys[i] = 0;
    s->used--;
    for (size_t j = (i + 1) & mask; s->keys[j]; j = (j + 1) & mask) {
        size_t home = hash_page(s->keys[j], mask);
        /* j's entry may fill the hole unless its home lies cyclically in (i, j] */
        int stays = i <= j ? (home > i && home <= j) : (home > i || home <= j);
        if (stays)
            continue;
        s->keys[i] = s->keys[j];
        s->tier[i] = s->tier[j];
        s->keys[j] = 0;
        i = j;
    }
}

/* The runtime stops managing [addr, addr+len) (an object unregistered or
 * moved: its memory may be freed and the address reused): its pages are
 * forgotten and give their fast-tier capacity back. Without this, a
 * program's freed temporaries kept the simulated fast tier full for good
 * and every later promotion failed with ENOMEM (GAP's PageRank under
 * `paddiser run`: the graph builder's 512 MiB arrays, freed, held all of
 * it). A range larger than the table is walked through the table. */
static int sim_release(pd_backend *b, void *addr, size_t len)
{
    sim_state *s = b->state;
    uintptr_t lo = (uintptr_t)addr & ~(uintptr_t)(s->page - 1), end = (uintptr_t)addr + len;
    if ((!addr && len) || end < (uintptr_t)addr) {
        errno = EINVAL;
        return -1;
    }
    size_t npages = len ? (size_t)((end - lo + s->page - 1) / s->page) : 0;
    pthread_mutex_lock(&s->lock);
    if (!s->cap || !npages) {
        pthread_mutex_unlock(&s->lock);
        return 0;
    }
    if (npages <= s->used) {
        for (size_t k = 0; k < npages; k++) {
            size_t i = find_slot(s, lo + k * s->page + 1);
            if (s->keys[i])
                remove_slot(s, i);
        }
    } else {
        /* a removal shifts later entries back into slot i: look at i again */
        for (size_t i = 0; i < s->cap;) {
            uintptr_t key = s->keys[i];
            if (key && key - 1 >= lo && key - 1 - lo < (uintptr_t)npages * s->page)
                remove_slot(s, i);
            else
                i++;
        }
    }
    pthread_mutex_unlock(&s->lock);
    return 0;
}

static void sim_destroy(pd_backend *b)
{
    if (!b)
        return;
    sim_state *s = b->state;
    pthread_mutex_destroy(&s->lock);
    free(s->keys);
    free(s->tier);
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
    b->state = s;
    return b;
}
