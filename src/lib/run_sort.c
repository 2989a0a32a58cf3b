/* Natural merge sort: the sync point's page lists are built region by
 * region in address order, so they hold few ascending runs; merging those
 * costs a few passes where qsort would sort every page again. */
#include "lib/run_sort.h"

#include <stdlib.h>
#include <string.h>

/* dst[lo, hi) := the stable merge of src[lo, mid) and src[mid, hi). */
static void merge(const char *src, char *dst, size_t lo, size_t mid, size_t hi, size_t size,
                  int (*cmp)(const void *, const void *))
{
    size_t i = lo, j = mid, o = lo;
    while (i < mid && j < hi) {
        /* the left element first on ties: stable */
        size_t k = cmp(src + j * size, src + i * size) < 0 ? j++ : i++;
        memcpy(dst + o++ * size, src + k * size, size);
    }
    if (i < mid)
        memcpy(dst + o * size, src + i * size, (mid - i) * size);
    else if (j < hi)
        memcpy(dst + o * size, src + j * size, (hi - j) * size);
}

void rt_sort_runs(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
    if (n < 2)
        return;
    char *v = base;
    size_t runs = 1;
    for (size_t i = 1; i < n; i++)
        if (cmp(v + i * size, v + (i - 1) * size) < 0)
            runs++;
    if (runs == 1)
        return;
    size_t *start = malloc((runs + 1) * sizeof *start);
    char *tmp = malloc(n * size);
    if (!start || !tmp) {
        free(start);
        free(tmp);
        qsort(base, n, size, cmp);
        return;
    }
    size_t k = 0;
    start[k++] = 0;
    for (size_t i = 1; i < n; i++)
        if (cmp(v + i * size, v + (i - 1) * size) < 0)
            start[k++] = i;
    start[runs] = n;
    char *src = v, *dst = tmp;
    while (runs > 1) {
        /* pairs of neighbouring runs; an odd last run is copied as it is */
        size_t merged = 0;
        for (size_t r = 0; r < runs; r += 2) {
            size_t lo = start[r], mid = start[r + 1], hi = r + 2 <= runs ? start[r + 2] : mid;
            merge(src, dst, lo, mid, hi, size, cmp);
            start[merged++] = lo;
        }
        start[merged] = n;
        runs = merged;
        char *swap = src;
        src = dst;
        dst = swap;
    }
    if (src != v)
        memcpy(v, src, n * size);
    free(start);
    free(tmp);
}
