/* Sorting page lists by address (internal). */
#ifndef PD_ADDR_SORT_H
#define PD_ADDR_SORT_H

#include <stddef.h>

/* Sorts n elements of `size` bytes by the address (uintptr_t) each one
 * starts with, stably, by radix: what cmp would order first by that
 * address. O(n) per pass, a few passes; O(n) for a list already in order.
 * cmp serves only when the radix buffer cannot be allocated: qsort then,
 * not stable, which is the same order for a cmp that compares every field
 * (the sync point's do). */
void rt_sort_by_address(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *));

#endif
