/* Sorting lists that are mostly ascending runs (internal). */
#ifndef PD_RUN_SORT_H
#define PD_RUN_SORT_H

#include <stddef.h>

/* Sorts n elements of `size` bytes by cmp, stably, like qsort. Page
 * selections are concatenations of address-ordered regions, so this finds
 * the ascending runs and merges them: O(n log r) for r runs instead of
 * O(n log n), and O(n) for a list already in order. Falls back to qsort
 * when the merge buffer cannot be allocated. */
void rt_sort_runs(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *));

/* Sorts n elements of `size` bytes by the address (uintptr_t) each one
 * starts with, stably, by radix: what cmp would order first by that
 * address. cmp serves only when the buffer cannot be allocated (then
 * rt_sort_runs, as stable). O(n) per pass, a few passes. */
void rt_sort_by_address(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *));

#endif
