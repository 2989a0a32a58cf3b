/* Allocation hooks of `paddiser run`: blocks of at least
 * PADDISER_RUN_MIN_BYTES (1 MiB) from malloc, calloc, realloc,
 * posix_memalign, aligned_alloc, memalign, valloc, pvalloc, reallocarray
 * and anonymous private writable mmap are the runtime's data objects,
 * named by allocation site (preload_site.h) plus "#k", the k-th live block
 * of that site (the smallest k free): the site's block of the next input,
 * freed and allocated again, gets the same name and with it the same
 * object id and history (pd_object_register revives an unregistered name).
 *
 * The real allocator is glibc's own (__libc_malloc and friends, exported by
 * libc.so.6 for exactly this), so malloc needs no dlsym bootstrap; mmap,
 * munmap and mremap come from dlsym(RTLD_NEXT), with the raw system call
 * while that is being resolved. A block is unregistered before its memory
 * goes back (the sampler must not keep its pages). Allocations inside the
 * runtime (pdp_busy, or a frame of this library: its own threads), before
 * the runtime runs, and below the threshold pass straight through; a free
 * of a block that cannot be tracked (usable size below the threshold) costs
 * one malloc_usable_size, of a large one a hash lookup under a mutex that
 * nothing holds while calling the runtime.
 *
 * A freed tracked block from the malloc family is kept (still allocated in
 * glibc, its pages resident where they are) for the next tracked
 * allocation it fits: a program that frees and allocates the same arrays
 * between instances gets its pages back, placed as they were, without
 * first touches. Otherwise whether glibc trims its heap top in between,
 * and the blocks come back as fresh pages, depends on a few KiB of
 * anything else in the process (docs/runtime.md, "Freed blocks kept for
 * reuse"). At most PADDISER_RUN_KEEP_FREED bytes are kept, a larger block
 * is shrunk to what is asked, and kept blocks go back to glibc as a
 * tracked allocation that none of them fits would otherwise take the
 * program's tracked memory past its own peak. */
#include <errno.h>
#include <dlfcn.h>
#include <malloc.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "paddiser.h"
#include "lib/runtime_internal.h" /* rt_object_register_owned */
#include "preload/preload.h"
#include "preload/preload_site.h"

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);
extern void *__libc_memalign(size_t, size_t);
extern void *__libc_valloc(size_t);
extern void *__libc_pvalloc(size_t);

/* ---- the table of tracked blocks --------------------------------------- */

enum { EMPTY = 0, DELETED = 1, K_BITS = 4096 };

typedef struct {
    uintptr_t addr; /* EMPTY, DELETED or the block's address */
    size_t size;
    int id;         /* the runtime's object id; -1 while being registered */
    int k;
    int is_map;     /* from mmap (munmap/mremap find it by range) */
    char site[PDP_SITE_MAX];
} tracked;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static tracked *tab;
static size_t cap, filled; /* slots, slots not EMPTY */
/* Read without the lock on the fast paths (free, munmap). */
static size_t nblocks, nmaps;
static int k_overflow = K_BITS;
/* pdp_opts()->min_bytes, read by every hook: a copy here saves a call. */
static size_t min_bytes = (size_t)1 << 20;

static int wanted_size(size_t n);

static size_t slot_of(uintptr_t addr, size_t c)
{
    return (size_t)(((uint64_t)(addr >> 4) * 0x9E3779B97F4A7C15ull) >> 20) & (c - 1);
}

static long find_locked(uintptr_t addr)
{
    if (!cap)
        return -1;
    for (size_t i = slot_of(addr, cap), n = 0; n < cap; i = (i + 1) & (cap - 1), n++) {
        if (tab[i].addr == EMPTY)
            return -1;
        if (tab[i].addr == addr)
            return (long)i;
    }
    return -1;
}

static int grow_locked(void)
{
    size_t live = nblocks + nmaps, ncap = 64;
    while (ncap < 4 * (live + 1))
        ncap *= 2;
    tracked *n = __libc_calloc(ncap, sizeof *n);
    if (!n)
        return -1;
    for (size_t i = 0; i < cap; i++)
        if (tab[i].addr > DELETED) {
            size_t j = slot_of(tab[i].addr, ncap);
            while (n[j].addr != EMPTY)
                j = (j + 1) & (ncap - 1);
            n[j] = tab[i];
        }
    __libc_free(tab);
    tab = n;
    cap = ncap;
    filled = live;
    return 0;
}

/* Bytes of the tracked blocks and mappings, and the most there ever were:
 * kept blocks never take the program's memory above that (reuse_kept). */
static size_t live_bytes, peak_live;

static void remove_locked(long i)
{
    live_bytes -= tab[i].size;
    tab[i].addr = DELETED;
    if (tab[i].is_map)
        __atomic_store_n(&nmaps, nmaps - 1, __ATOMIC_RELAXED);
    else
        __atomic_store_n(&nblocks, nblocks - 1, __ATOMIC_RELAXED);
}

static int k_in_use_locked(const char *site, int k)
{
    for (size_t i = 0; i < cap; i++)
        if (tab[i].addr > DELETED && tab[i].k == k && !strcmp(tab[i].site, site))
            return 1;
    return 0;
}

/* The smallest k no live block of site has. */
static int choose_k_locked(const char *site)
{
    uint64_t used[K_BITS / 64] = {0};
    for (size_t i = 0; i < cap; i++)
        if (tab[i].addr > DELETED && tab[i].k < K_BITS && !strcmp(tab[i].site, site))
            used[tab[i].k / 64] |= 1ull << (tab[i].k % 64);
    for (int w = 0; w < K_BITS / 64; w++)
        if (~used[w])
            return w * 64 + __builtin_ctzll(~used[w]);
    return k_overflow++; /* thousands of live blocks of one site: unique, not stable */
}

/* Registers [p, p+n) under site#k (k < 0: the smallest free one; else k
 * unless another live block of site has it). Call with pdp_busy set. */
static void track(void *p, size_t n, const char *site, int is_map, int k)
{
    pthread_mutex_lock(&lock);
    long slot = -1;
    if ((filled + 1) * 4 <= cap * 3 || grow_locked() == 0) {
        if (k < 0 || k_in_use_locked(site, k))
            k = choose_k_locked(site);
        size_t i = slot_of((uintptr_t)p, cap);
        while (tab[i].addr > DELETED)
            i = (i + 1) & (cap - 1);
        if (tab[i].addr == EMPTY)
            filled++;
        tab[i] = (tracked){.addr = (uintptr_t)p, .size = n, .id = -1, .k = k, .is_map = is_map};
        live_bytes += n;
        if (live_bytes > peak_live)
            peak_live = live_bytes;
        snprintf(tab[i].site, sizeof tab[i].site, "%s", site);
        if (is_map)
            __atomic_store_n(&nmaps, nmaps + 1, __ATOMIC_RELAXED);
        else
            __atomic_store_n(&nblocks, nblocks + 1, __ATOMIC_RELAXED);
        slot = (long)i;
    }
    pthread_mutex_unlock(&lock);
    if (slot < 0) {
        pdp_log(1, "no room to track %zu bytes at %p: not registered", n, p);
        return;
    }
    char name[PDP_NAME_MAX];
    snprintf(name, sizeof name, "%s#%d", site, k);
    pd_access_hint hint = {PD_PATTERN_UNKNOWN, 0, 0, 0};
    int hinted = pdp_hint_for(name, site, &hint);
    /* the allocator just gave p: no /proc/self/maps check (objects.c) */
    int id = rt_object_register_owned(name, p, n, hinted ? &hint : NULL);
    pthread_mutex_lock(&lock);
    long i = find_locked((uintptr_t)p);
    if (i >= 0) {
        if (id >= 0)
            tab[i].id = id;
        else
            remove_locked(i);
    }
    pthread_mutex_unlock(&lock);
    if (id >= 0) {
        pdp_out_object(id, name, n);
        static const char *const patterns[] = {"unknown", "stream", "stride", "stencil", "random"};
        pdp_log(1, "register %s: %zu bytes at %p (object %d, pattern %s)", name, n, p, id,
                patterns[(unsigned)hint.pattern <= PD_PATTERN_RANDOM ? hint.pattern : 0]);
    } else {
        pdp_log(1, "%s: %zu bytes at %p not registered: %s", name, n, p, pd_strerror(id));
    }
}

static void untrack_object(const tracked *e)
{
    if (e->id < 0)
        return;
    int rc = pd_object_unregister(e->id);
    pdp_log(1, "unregister %s#%d (object %d)%s%s", e->site, e->k, e->id, rc ? ": " : "", rc ? pd_strerror(rc) : "");
}

/* Takes the block at p out of the table (into *out): 1, or 0 if untracked. */
static int take(void *p, tracked *out)
{
    pthread_mutex_lock(&lock);
    long i = find_locked((uintptr_t)p);
    if (i >= 0 && !tab[i].is_map) {
        *out = tab[i];
        remove_locked(i);
    } else {
        i = -1;
    }
    pthread_mutex_unlock(&lock);
    return i >= 0;
}

enum { MAX_PIECES = 32 };

/* Takes the mappings overlapping [a, a+len) out of the table and
 * unregisters them; returns how many were kept in out (at most max; the
 * rest stay unregistered). */
static int take_range(uintptr_t a, size_t len, tracked *out, int max)
{
    int n = 0;
    tracked extra;
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < cap; i++) {
        tracked *e = &tab[i];
        if (e->addr <= DELETED || !e->is_map || e->addr >= a + len || a >= e->addr + e->size)
            continue;
        tracked *dst = n < max ? &out[n++] : &extra;
        *dst = *e;
        remove_locked((long)i);
        if (dst == &extra) { /* cannot be restored: unregister now (no runtime call under the lock otherwise) */
            pthread_mutex_unlock(&lock);
            untrack_object(&extra);
            pthread_mutex_lock(&lock);
        }
    }
    pthread_mutex_unlock(&lock);
    for (int i = 0; i < n; i++)
        untrack_object(&out[i]);
    return n;
}

/* After [a, a+len) was unmapped (done) or the call failed (!done): what is
 * left of each taken mapping comes back under its name (of a mapping cut in
 * two, the larger piece). */
static void restore_range(uintptr_t a, size_t len, const tracked *t, int n, int done)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    uintptr_t end = a + ((len + page - 1) & ~(page - 1));
    for (int i = 0; i < n; i++) {
        uintptr_t lo = t[i].addr, hi = t[i].addr + t[i].size;
        if (done) {
            size_t head = a > lo ? a - lo : 0, tail = hi > end ? hi - end : 0;
            if (head >= tail) {
                hi = lo + head;
            } else {
                lo = end;
            }
        }
        if (hi > lo && hi - lo >= min_bytes && pdp_running())
            track((void *)lo, hi - lo, t[i].site, 1, t[i].k);
    }
}

/* ---- freed blocks kept for reuse ----------------------------------------- */

enum { MAX_KEPT = 64 };

typedef struct {
    void *p;
    size_t usable; /* malloc_usable_size when kept */
    uint64_t seq;  /* when kept: the oldest goes first to make room */
    int k;         /* the object it was: site#k */
    char site[PDP_SITE_MAX];
} kept_block;

static kept_block kept[MAX_KEPT];
static size_t nkept, kept_bytes, keep_cap; /* nkept: read without the lock first */
static uint64_t kept_seq;
/* For -v's summary at exit. */
static unsigned long n_kept, n_reused, n_given_back;
static size_t bytes_reused;

static int kept_index_locked(const void *p)
{
    for (size_t i = 0; i < nkept; i++)
        if (kept[i].p == p)
            return (int)i;
    return -1;
}

static void unkeep_locked(size_t i)
{
    kept_bytes -= kept[i].usable;
    kept[i] = kept[nkept - 1];
    __atomic_store_n(&nkept, nkept - 1, __ATOMIC_RELAXED); /* read without the lock too */
}

/* Takes the block kept longest out of the list (nkept > 0): its address. */
static void *unkeep_oldest_locked(void)
{
    size_t old = 0;
    for (size_t i = 1; i < nkept; i++)
        if (kept[i].seq < kept[old].seq)
            old = i;
    void *p = kept[old].p;
    unkeep_locked(old);
    return p;
}

/* The program freed (or reallocated) a block that is kept, that is, freed
 * already: glibc would stop it as a double free, and so does this. */
static void check_not_kept(void *p, const char *call)
{
    if (!__atomic_load_n(&nkept, __ATOMIC_RELAXED))
        return;
    pthread_mutex_lock(&lock);
    int i = kept_index_locked(p);
    pthread_mutex_unlock(&lock);
    if (i >= 0) {
        pdp_log(0, "%s(%p): the block was freed already (double free); aborting", call, p);
        abort();
    }
}

static void release_kept(void *const *gone, int n)
{
    __atomic_fetch_add(&n_given_back, (unsigned long)n, __ATOMIC_RELAXED);
    for (int i = 0; i < n; i++) {
        pdp_log(1, "give back kept block %p", gone[i]);
        __libc_free(gone[i]);
    }
}

/* Keeps the freed block p (untracked already): 1, or 0 when it is not
 * kept (then the caller frees it). The oldest kept blocks make room. Its
 * pages are left as they are: MADV_FREE would let memory pressure take
 * them, but on this project's VM writing a page after it costs 5.6 us
 * (no fault counted), half the first touch it saves (bench/run_alloc.sh,
 * docs/runtime.md "Freed blocks kept for reuse"). */
static int keep_freed(void *p, const char *site, int k)
{
    size_t usable = malloc_usable_size(p);
    if (!keep_cap || usable > keep_cap)
        return 0;
    void *gone[MAX_KEPT];
    int ngone = 0;
    pthread_mutex_lock(&lock);
    while (nkept && (nkept == MAX_KEPT || kept_bytes + usable > keep_cap))
        gone[ngone++] = unkeep_oldest_locked();
    kept[nkept] = (kept_block){.p = p, .usable = usable, .seq = ++kept_seq, .k = k};
    snprintf(kept[nkept].site, sizeof kept[nkept].site, "%s", site);
    kept_bytes += usable;
    __atomic_fetch_add(&n_kept, 1, __ATOMIC_RELAXED);
    __atomic_store_n(&nkept, nkept + 1, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&lock);
    release_kept(gone, ngone);
    pdp_log(1, "keep freed block %p (%zu bytes) for reuse", p, usable);
    return 1;
}

/* Between two kept blocks that both hold a request, and are both of its
 * site (same) or both not: whether a serves it before b. */
static int kept_before(const kept_block *a, const kept_block *b, int same)
{
    if (same && a->k != b->k)
        return a->k < b->k;
    return a->usable < b->usable;
}

/* A kept block for a tracked allocation of n bytes aligned to align from
 * site (NULL: unknown): of those that hold n, one of the same site (the
 * object's own memory again, so its pages are where its plan put them;
 * the lowest k first, as the new block takes the lowest k free), else the
 * smallest; shrunk in place to n when it is more than an eighth larger
 * (glibc's realloc splits a heap chunk, mremaps a mapped one: the head's
 * pages stay). NULL when none holds n: then the oldest kept blocks go back
 * to glibc until the tracked blocks, the kept ones and the n bytes asked
 * for fit in the most the tracked blocks ever took (or nothing is kept),
 * so keeping never raises the program's peak. */
static void *reuse_kept(size_t n, size_t align, const char *site)
{
    if (!__atomic_load_n(&nkept, __ATOMIC_RELAXED) || !wanted_size(n))
        return NULL;
    void *gone[MAX_KEPT], *p = NULL;
    size_t usable = 0;
    int ngone = 0;
    pthread_mutex_lock(&lock);
    long best = -1;
    int best_same = 0;
    for (size_t i = 0; i < nkept; i++) {
        const kept_block *k = &kept[i];
        if (k->usable < n || (align && (uintptr_t)k->p % align))
            continue;
        int same = site && !strcmp(k->site, site);
        if (best < 0 || same > best_same || (same == best_same && kept_before(k, &kept[best], same))) {
            best = (long)i;
            best_same = same;
        }
    }
    if (best >= 0) {
        p = kept[best].p;
        usable = kept[best].usable;
        unkeep_locked((size_t)best);
    } else {
        size_t bound = peak_live > live_bytes + n ? peak_live : live_bytes + n;
        while (nkept && live_bytes + kept_bytes + n > bound)
            gone[ngone++] = unkeep_oldest_locked();
    }
    pthread_mutex_unlock(&lock);
    release_kept(gone, ngone);
    if (!p)
        return NULL;
    if (usable - n > n / 8) {
        /* a shrink fails only without memory; then the block serves whole */
        void *q = __libc_realloc(p, n);
        if (q)
            p = q;
        if (align && (uintptr_t)p % align) { /* moved, and not aligned as asked: allocate afresh */
            __libc_free(p);
            return NULL;
        }
    }
    pdp_log(1, "reuse kept block %p for %zu bytes (%zu kept)", p, n, usable);
    __atomic_fetch_add(&n_reused, 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&bytes_reused, n, __ATOMIC_RELAXED);
    return p;
}

/* At exit, with PADDISER_RUN_VERBOSE=1: what keeping freed blocks did. */
__attribute__((destructor)) static void kept_summary(void)
{
    unsigned long kept_total = __atomic_load_n(&n_kept, __ATOMIC_RELAXED);
    if (kept_total)
        pdp_log(1, "freed blocks: %lu kept, %lu reused (%.1f MiB), %lu given back, %zu still kept", kept_total,
                __atomic_load_n(&n_reused, __ATOMIC_RELAXED),
                (double)__atomic_load_n(&bytes_reused, __ATOMIC_RELAXED) / 1048576.0,
                __atomic_load_n(&n_given_back, __ATOMIC_RELAXED), __atomic_load_n(&nkept, __ATOMIC_RELAXED));
}

/* The fork() child: the parent's blocks are the parent's objects. */
static void fork_prepare(void) { pthread_mutex_lock(&lock); }
static void fork_parent(void) { pthread_mutex_unlock(&lock); }
static void fork_child(void) { pthread_mutex_unlock(&lock); }

void pdp_alloc_forget(void)
{
    if (tab)
        memset(tab, 0, cap * sizeof *tab);
    filled = nblocks = nmaps = 0;
    live_bytes = peak_live = 0;
}

/* ---- mmap, munmap, mremap ------------------------------------------------ */

typedef void *(*mmap_fn)(void *, size_t, int, int, int, off_t);
typedef int (*munmap_fn)(void *, size_t);
typedef void *(*mremap_fn)(void *, size_t, size_t, int, ...);

static mmap_fn real_mmap;
static munmap_fn real_munmap;
static mremap_fn real_mremap;
static __thread int resolving __attribute__((tls_model("initial-exec")));

/* dlsym(RTLD_NEXT, name) once; NULL while this thread is inside dlsym (it
 * may map memory itself): the caller then makes the system call. */
static void *next_symbol(void **slot, const char *name)
{
    void *f = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
    if (f || resolving)
        return f;
    resolving = 1;
    int was_busy = pdp_busy;
    pdp_busy = 1;
    f = dlsym(RTLD_NEXT, name);
    pdp_busy = was_busy;
    resolving = 0;
    __atomic_store_n(slot, f, __ATOMIC_RELEASE);
    return f;
}

static void *call_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    mmap_fn f = (mmap_fn)next_symbol((void **)&real_mmap, "mmap");
    return f ? f(addr, len, prot, flags, fd, off) : (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
}

static int call_munmap(void *addr, size_t len)
{
    munmap_fn f = (munmap_fn)next_symbol((void **)&real_munmap, "munmap");
    return f ? f(addr, len) : (int)syscall(SYS_munmap, addr, len);
}

static void *call_mremap(void *old, size_t old_size, size_t new_size, int flags, void *new_addr)
{
    mremap_fn f = (mremap_fn)next_symbol((void **)&real_mremap, "mremap");
    return f ? f(old, old_size, new_size, flags, new_addr)
             : (void *)syscall(SYS_mremap, old, old_size, new_size, flags, new_addr);
}

void pdp_alloc_setup(void)
{
    min_bytes = pdp_opts()->min_bytes;
    keep_cap = pdp_opts()->keep_freed;
    pthread_atfork(fork_prepare, fork_parent, fork_child);
    (void)next_symbol((void **)&real_mmap, "mmap");
    (void)next_symbol((void **)&real_munmap, "munmap");
    (void)next_symbol((void **)&real_mremap, "mremap");
    pdp_site_setup();
    const char *hints = getenv("PADDISER_RUN_HINTS");
    if (hints && *hints)
        pdp_hints_load(hints);
}

/* ---- the hooks ----------------------------------------------------------- */

#define CALLER() __builtin_return_address(0)

static int wanted_size(size_t n) { return n >= min_bytes && !pdp_busy && pdp_running(); }

static void after_alloc(void *p, size_t n, void *caller, int is_map)
{
    if (!p || !wanted_size(n))
        return;
    int saved = errno;
    pdp_busy = 1;
    char site[PDP_SITE_MAX];
    if (pdp_site_of(caller, site, sizeof site) == 0)
        track(p, n, site, is_map, -1);
    pdp_busy = 0;
    errno = saved;
}

/* Before the memory at p goes back: its object is unregistered. Returns
 * 1 when the block is kept for reuse (then it does not go back). */
static int before_free(void *p)
{
    if (!p || (!__atomic_load_n(&nblocks, __ATOMIC_RELAXED) && !__atomic_load_n(&nkept, __ATOMIC_RELAXED)) ||
        malloc_usable_size(p) < min_bytes)
        return 0;
    tracked e;
    if (!take(p, &e)) {
        check_not_kept(p, "free");
        return 0;
    }
    if (pdp_busy)
        return 0;
    int saved = errno;
    pdp_busy = 1;
    untrack_object(&e);
    int kept_it = pdp_running() && keep_freed(p, e.site, e.k);
    pdp_busy = 0;
    errno = saved;
    return kept_it;
}

/* A tracked allocation from a kept block (NULL: none fits), for the
 * allocation site of caller. */
static inline void *from_kept(size_t n, size_t align, void *caller)
{
    if (!__atomic_load_n(&nkept, __ATOMIC_RELAXED) || !wanted_size(n)) /* the common case: one load */
        return NULL;
    int saved = errno;
    char site[PDP_SITE_MAX];
    pdp_busy = 1; /* finding the site may allocate (the unwinder, once) */
    int known = pdp_site_of(caller, site, sizeof site) == 0;
    pdp_busy = 0;
    void *p = reuse_kept(n, align, known ? site : NULL);
    errno = saved;
    return p;
}

PDP_HOOK void *malloc(size_t n)
{
    void *p = from_kept(n, 0, CALLER());
    if (!p)
        p = __libc_malloc(n);
    after_alloc(p, n, CALLER(), 0);
    return p;
}

PDP_HOOK void *calloc(size_t m, size_t n)
{
    size_t bytes;
    void *p = NULL;
    if (!__builtin_mul_overflow(m, n, &bytes) && (p = from_kept(bytes, 0, CALLER())))
        memset(p, 0, bytes); /* a kept block holds what it held */
    if (!p)
        p = __libc_calloc(m, n);
    if (p) /* m * n did not overflow: calloc checked */
        after_alloc(p, m * n, CALLER(), 0);
    return p;
}

PDP_HOOK void free(void *p)
{
    if (!before_free(p))
        __libc_free(p);
}

static void *realloc_from(void *p, size_t n, void *caller)
{
    if (!p) {
        void *q = from_kept(n, 0, caller);
        if (!q)
            q = __libc_realloc(NULL, n);
        after_alloc(q, n, caller, 0);
        return q;
    }
    tracked e;
    int had = __atomic_load_n(&nblocks, __ATOMIC_RELAXED) && malloc_usable_size(p) >= min_bytes &&
              take(p, &e);
    if (!had && __atomic_load_n(&nkept, __ATOMIC_RELAXED) && malloc_usable_size(p) >= min_bytes)
        check_not_kept(p, "realloc");
    if (!had || pdp_busy) {
        void *q = __libc_realloc(p, n);
        if (q && !had)
            after_alloc(q, n, caller, 0);
        return q;
    }
    /* A tracked block: its object leaves before the old memory may go,
     * and comes back under the same name (same id) at the new one. */
    pdp_busy = 1;
    untrack_object(&e);
    pdp_busy = 0;
    void *q = __libc_realloc(p, n);
    int saved = errno;
    void *at = q ? q : n ? p : NULL; /* failed: p is still there; n == 0: freed */
    size_t size = q ? n : e.size;
    if (at && size >= min_bytes && pdp_running()) {
        pdp_busy = 1;
        track(at, size, e.site, 0, e.k);
        pdp_busy = 0;
    }
    errno = saved;
    return q;
}

PDP_HOOK void *realloc(void *p, size_t n) { return realloc_from(p, n, CALLER()); }

PDP_HOOK void *reallocarray(void *p, size_t m, size_t n)
{
    size_t bytes;
    if (__builtin_mul_overflow(m, n, &bytes)) {
        errno = ENOMEM;
        return NULL;
    }
    return realloc_from(p, bytes, CALLER());
}

/* glibc's memalign takes any alignment (rounding it up to a power of two);
 * a kept block serves a power of two only. */
static void *memalign_from(size_t align, size_t n, void *caller)
{
    void *p = align && !(align & (align - 1)) ? from_kept(n, align, caller) : NULL;
    return p ? p : __libc_memalign(align, n);
}

PDP_HOOK void *memalign(size_t align, size_t n)
{
    void *p = memalign_from(align, n, CALLER());
    after_alloc(p, n, CALLER(), 0);
    return p;
}

PDP_HOOK void *aligned_alloc(size_t align, size_t n)
{
    void *p = memalign_from(align, n, CALLER());
    after_alloc(p, n, CALLER(), 0);
    return p;
}

PDP_HOOK int posix_memalign(void **out, size_t align, size_t n)
{
    /* A power of two multiple of sizeof(void *), as glibc checks. */
    if (align % sizeof(void *) || (align & (align - 1)) || !align)
        return EINVAL;
    int saved = errno;
    void *p = memalign_from(align, n, CALLER());
    errno = saved;
    if (!p)
        return ENOMEM;
    *out = p;
    after_alloc(p, n, CALLER(), 0);
    return 0;
}

PDP_HOOK void *valloc(size_t n)
{
    void *p = from_kept(n, (size_t)sysconf(_SC_PAGESIZE), CALLER());
    if (!p)
        p = __libc_valloc(n);
    after_alloc(p, n, CALLER(), 0);
    return p;
}

PDP_HOOK void *pvalloc(size_t n)
{
    /* n rounded up to whole pages, as glibc does (0: one page) */
    size_t page = (size_t)sysconf(_SC_PAGESIZE), whole = n ? (n + page - 1) & ~(page - 1) : page;
    void *p = whole >= n ? from_kept(whole, page, CALLER()) : NULL;
    if (!p)
        p = __libc_pvalloc(n);
    after_alloc(p, n, CALLER(), 0);
    return p;
}

static int trackable_map(int prot, int flags)
{
    return (flags & MAP_ANONYMOUS) && (flags & MAP_PRIVATE) && (prot & PROT_WRITE) &&
           !(flags & (MAP_STACK | MAP_GROWSDOWN));
}

static void *mmap_from(void *addr, size_t len, int prot, int flags, int fd, off_t off, void *caller)
{
    tracked t[MAX_PIECES];
    int n = 0, busy = pdp_busy;
    /* MAP_FIXED replaces what was there: as if it were unmapped first. */
    if ((flags & MAP_FIXED) && __atomic_load_n(&nmaps, __ATOMIC_RELAXED) && !busy) {
        pdp_busy = 1;
        n = take_range((uintptr_t)addr, len, t, MAX_PIECES);
        pdp_busy = 0;
    }
    void *p = call_mmap(addr, len, prot, flags, fd, off);
    int saved = errno;
    if (n) {
        pdp_busy = 1;
        restore_range((uintptr_t)addr, len, t, n, p != MAP_FAILED);
        pdp_busy = 0;
    }
    if (p != MAP_FAILED && trackable_map(prot, flags))
        after_alloc(p, len, caller, 1);
    errno = saved;
    return p;
}

PDP_HOOK void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    return mmap_from(addr, len, prot, flags, fd, off, CALLER());
}

PDP_HOOK void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    return mmap_from(addr, len, prot, flags, fd, off, CALLER());
}

PDP_HOOK int munmap(void *addr, size_t len)
{
    if (!__atomic_load_n(&nmaps, __ATOMIC_RELAXED) || pdp_busy)
        return call_munmap(addr, len);
    tracked t[MAX_PIECES];
    pdp_busy = 1;
    int n = take_range((uintptr_t)addr, len, t, MAX_PIECES);
    pdp_busy = 0;
    int rc = call_munmap(addr, len);
    int saved = errno;
    if (n) {
        pdp_busy = 1;
        restore_range((uintptr_t)addr, len, t, n, rc == 0);
        pdp_busy = 0;
    }
    errno = saved;
    return rc;
}

PDP_HOOK void *mremap(void *old, size_t old_size, size_t new_size, int flags, ...)
{
    void *new_addr = NULL;
    if (flags & MREMAP_FIXED) {
        va_list ap;
        va_start(ap, flags);
        new_addr = va_arg(ap, void *);
        va_end(ap);
    }
    if (!__atomic_load_n(&nmaps, __ATOMIC_RELAXED) || pdp_busy)
        return call_mremap(old, old_size, new_size, flags, new_addr);
    tracked t[MAX_PIECES], gone[MAX_PIECES];
    pdp_busy = 1;
    int n = take_range((uintptr_t)old, old_size, t, MAX_PIECES), ngone = 0;
    if (flags & MREMAP_FIXED) /* the target range is unmapped first */
        ngone = take_range((uintptr_t)new_addr, new_size, gone, MAX_PIECES);
    pdp_busy = 0;
    void *q = call_mremap(old, old_size, new_size, flags, new_addr);
    int saved = errno;
    pdp_busy = 1;
    if (q == MAP_FAILED) {
        restore_range((uintptr_t)old, old_size, t, n, 0);
        restore_range((uintptr_t)new_addr, new_size, gone, ngone, 0);
    } else {
        /* The mapping that began at old moved to q under its name; the
         * rest of what was taken keeps what is left outside. */
        for (int i = 0; i < n; i++)
            if (t[i].addr == (uintptr_t)old && new_size >= min_bytes && pdp_running())
                track(q, new_size, t[i].site, 1, t[i].k);
        restore_range((uintptr_t)old, old_size, t, n, 1);
        restore_range((uintptr_t)new_addr, new_size, gone, ngone, 1);
    }
    pdp_busy = 0;
    errno = saved;
    return q;
}
