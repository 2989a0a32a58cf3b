/* Page-placement backends behind the runtime. The planner decides which pages
 * of which object belong in fast memory; a backend makes it so:
 *   sim  (src/lib/backend_sim.c, issue #4): records a tier per page, enforces capacity
 *   numa (src/lib/backend_numa.c, issue #6): mbind + move_pages between two NUMA nodes
 * Tier 0 is fast memory (DRAM), tier 1 the slow tier (CXL/PMem). */
#ifndef PD_LIB_BACKEND_H
#define PD_LIB_BACKEND_H

#include <stddef.h>
#include <stdint.h>

enum { PD_TIER_FAST = 0, PD_TIER_SLOW = 1 };
/* place only: leave the range where first touch put it; the backend takes
 * note (numa: charges the pages it finds on the fast node to its budget;
 * sim: puts pages it has never seen where a kernel's first touch would,
 * fast while room is left, then slow). Nothing moves. */
enum { PD_PLACE_FIRST_TOUCH = 2 };

typedef struct {
    size_t pages_requested;
    size_t pages_moved;     /* now on the requested tier (already there counts) */
    size_t pages_failed;
    size_t bytes_moved;
    size_t ebusy, enomem, efault, other_errors; /* per-page move_pages status */
} pd_migrate_stats;

typedef struct pd_backend pd_backend;
struct pd_backend {
    const char *name;
    /* Initial placement of a page-aligned range on a tier (mbind for numa). */
    int (*place)(pd_backend *b, void *addr, size_t len, int tier, pd_migrate_stats *st);
    /* Moves n pages (page-aligned addresses) to tier; per-page outcome in st. */
    int (*move)(pd_backend *b, void **pages, size_t n, int tier, pd_migrate_stats *st);
    /* Where each page lives now: tier index, or a negative errno per page. */
    int (*query)(pd_backend *b, void **pages, size_t n, int *tier_out);
    /* Bytes of fast memory currently free for this process's placements. */
    size_t (*fast_free)(pd_backend *b);
    void (*destroy)(pd_backend *b);
    void *state;
    /* Optional (NULL: the backend has none; callers then use move). Moves
     * pages[0..n), hottest first, to the fast tier. Where fast memory is
     * short (ENOMEM, budget), demotes pages of cold[0..m) that are on the
     * fast tier, coldest (cold[0]) first, and retries the refused pages.
     * A page in both lists is demoted only to make room for a hotter page
     * (one before it in pages[]); it then counts as failed (enomem) in st
     * and is not promoted again by this call. st: the promotions, demoted:
     * the demotions (either may be NULL). Returns as move. */
    int (*promote)(pd_backend *b, void **pages, size_t n, void **cold, size_t m, pd_migrate_stats *st,
                   pd_migrate_stats *demoted);
    /* Optional (NULL: nothing to give back). The caller stops managing the
     * pages of [addr, addr+len) (object unregistered, moved, shrunk; the
     * memory may be freed or reused at the same address): the backend no
     * longer counts them against its fast-memory budget. Moves nothing.
     * 0, or -1 with errno (EINVAL). */
    int (*release)(pd_backend *b, void *addr, size_t len);
    /* Optional (NULL: ask query page by page). Calls fn(ctx, lo, hi) for
     * each run [lo, hi) of pages of [addr, addr+len) (addr page-aligned)
     * on the fast tier, in address order; fn must not call the backend.
     * 0; 1 when fn returned nonzero (it stops there); -EINVAL. */
    int (*fast_runs)(pd_backend *b, void *addr, size_t len, int (*fn)(void *ctx, uintptr_t lo, uintptr_t hi),
                     void *ctx);
};

/* Position of each page of a list by address, to ask "is this page also in
 * that list, and where" (promote's rule for pages in both lists). */
typedef struct {
    const void *page;
    size_t at;
} pd_page_pos;
/* Sorted copy of pages[0..n) with positions (malloc; NULL on ENOMEM, n == 0
 * gives a valid empty index). For duplicates the first position wins. */
pd_page_pos *pd_page_index(void *const *pages, size_t n);
/* Position of page in the list, or -1. */
long pd_page_index_find(const pd_page_pos *ix, size_t n, const void *page);

/* a += b, every count. */
void pd_migrate_stats_add(pd_migrate_stats *a, const pd_migrate_stats *b);
/* Whether a backend call's answer (a negative errno, or -1 with errno set)
 * says it ran out of memory: worth trying again later. */
int pd_backend_out_of_memory(int rc);
/* fast_capacity in bytes. */
pd_backend *pd_backend_sim_create(size_t fast_capacity);
/* NULL with errno = ENODEV when the machine has no slow tier. */
pd_backend *pd_backend_numa_create(int fast_node, int slow_node, size_t fast_capacity);

#endif
