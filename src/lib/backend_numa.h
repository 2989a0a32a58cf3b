/* The numa backend's extras beyond the pd_backend interface (backend.h):
 * promotion with demotion of cold pages, and a seam for the two system calls
 * so that tests can inject per-page outcomes without a tiered machine.
 *
 * Conventions of the numa backend's place/move/query: they return 0 when the
 * call went through (per-page outcomes are in pd_migrate_stats: a page that
 * cannot be moved is counted, never fatal) and -1 with errno on a hard
 * failure (bad tier, the kernel refused the call as a whole: EPERM, ENOSYS).
 * Statistics: pages_moved counts pages now on the requested tier (already
 * there included); bytes_moved counts only pages that were migrated by this
 * call. ebusy / enomem / efault / other_errors count pages by their final
 * outcome (EBUSY after PD_NUMA_EBUSY_RETRIES retries; efault also counts
 * -ENOENT, a page not present); pages_failed is their sum.
 * query() gives PD_TIER_FAST / PD_TIER_SLOW, -ENOENT/-EFAULT for pages not
 * present/mapped, or -EXDEV for a page on a third node.
 *
 * Budget (fast_capacity > 0): a page is charged while it was asked onto the
 * fast node (move, promote, place), is there, and was not released; at most
 * fast_capacity bytes are charged by move and promote (place charges without
 * refusing). Whenever the backend learns that a charged page is elsewhere
 * (any query, a move to slow, EFAULT/ENOENT: freed or not present) it is
 * uncharged. A move to the fast node that the budget would refuse first
 * re-counts (once per call): every charged page is queried, so what the
 * kernel moved away or the application freed cannot shrink the budget
 * forever. fast_free() re-counts too. Pages the process has on the fast node
 * that this backend was never asked for are not counted (the kernel's
 * ENOMEM limits those). Thread-safe: one mutex per backend, held for a whole
 * call, so concurrent callers see one consistent budget. */
#ifndef PD_LIB_BACKEND_NUMA_H
#define PD_LIB_BACKEND_NUMA_H

#include <stddef.h>

#include "lib/backend.h"

#define PD_NUMA_BATCH 1024        /* pages per move_pages call */
#define PD_NUMA_EBUSY_RETRIES 3   /* extra attempts for busy pages */
#define PD_NUMA_DEMOTE_ROUNDS 4   /* demote-then-retry rounds of a promotion */
#define PD_NUMA_PROBE 64          /* planned pages given up before the kernel shows it reuses room */

typedef struct {
    /* Same contract as move_pages(2) for the calling process (pid 0):
     * nodes == NULL queries. Returns < 0 with errno, or pages not migrated. */
    long (*move_pages)(void *ctx, unsigned long count, void **pages, const int *nodes, int *status, int flags);
    /* Same contract as mbind(2). */
    long (*mbind)(void *ctx, void *addr, unsigned long len, int mode, const unsigned long *nodemask,
                  unsigned long maxnode, unsigned flags);
    void *ctx;
} pd_numa_syscalls;

/* Replaces a numa backend's system calls (tests); NULL restores libnuma's.
 * Returns -1 (EINVAL) when b is not a numa backend. */
int pd_backend_numa_set_syscalls(pd_backend *b, const pd_numa_syscalls *sys);

/* The node pair a numa backend moves between. */
int pd_backend_numa_nodes(const pd_backend *b, int *fast_node, int *slow_node);

/* Moves n pages to fast memory. Where the fast node is full (per-page ENOMEM
 * from the kernel, or the fast_capacity budget given at creation is spent),
 * demotes candidates to slow memory, coldest first (demote[0] is the coldest;
 * pages not on the fast node are skipped), as many as pages were refused
 * (twice that in the next round, and so on), then retries those pages; at
 * most PD_NUMA_DEMOTE_ROUNDS rounds. promote[] is hottest first: a page in
 * both lists is demoted only for a hotter refused page and then counts as
 * refused (see pd_backend.promote, which this implements for numa). Promotion
 * outcomes go to st, demotions to demoted (either may be NULL). */
int pd_backend_numa_promote(pd_backend *b, void **promote, size_t n, void **demote, size_t m,
                            pd_migrate_stats *st, pd_migrate_stats *demoted);

/* Re-counts the budget now: queries every charged page (batches of
 * PD_NUMA_BATCH) and uncharges those not on the fast node. 0 or -1 with
 * errno (EINVAL: not a numa backend; the kernel's errno). */
int pd_backend_numa_recount(pd_backend *b);

/* Bytes charged against fast_capacity now (0 without a budget), without a
 * re-count. */
size_t pd_backend_numa_charged(pd_backend *b);

#endif
