/* Natural merge sort: the sync point's page lists are built region by
 * region in address order, so they hold few ascending runs; merging those
 * costs a few passes where qsort would sort every page again. */
#include "lib/run_sort.h"

#include <stdint.h>
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

static uintptr_t key_at(const char *v, size_t i, size_t size)
{
    uintptr_t k;
    memcpy(&k, v + i * size, sizeof k);
    return k;
}

/* One counting-sort pass: each element to its digit's next slot. The
 * sync point's lists are pages (one address) and plan pages (an address
 * and a rank): fixed-size copies for those, which the compiler inlines,
 * where a memcpy call per element was most of the pass. */
static void scatter(const char *src, char *dst, size_t n, size_t size, uintptr_t lo, unsigned d, size_t mask,
                    size_t *count)
{
    typedef struct {
        uintptr_t w[2];
    } two_words;
    for (size_t i = 0; i < n; i++) {
        size_t b = ((key_at(src, i, size) - lo) >> d) & mask;
        char *to = dst + count[b]++ * size;
        const char *from = src + i * size;
        if (size == sizeof(uintptr_t))
            memcpy(to, from, sizeof(uintptr_t));
        else if (size == sizeof(two_words))
            memcpy(to, from, sizeof(two_words));
        else
            memcpy(to, from, size);
    }
}

/* LSD radix sort by the uintptr_t each element starts with, over only the
 * bits in which the keys differ from the smallest (a page list spans a few
 * hundred MiB of 4 KiB pages: two or three passes of 11 bits), each pass a
 * stable counting sort. Where merging a selection's runs took ~log2(runs)
 * comparison passes, this takes a fixed few, with no comparator call. */
void rt_sort_by_address(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
    if (n < 2)
        return;
    char *v = base;
    uintptr_t lo = key_at(v, 0, size);
    int sorted = 1;
    for (size_t i = 1; i < n; i++) {
        uintptr_t k = key_at(v, i, size);
        sorted &= k >= key_at(v, i - 1, size);
        lo = k < lo ? k : lo;
    }
    if (sorted)
        return;
    uintptr_t spread = 0;
    for (size_t i = 0; i < n; i++)
        spread |= key_at(v, i, size) - lo;
    unsigned shift = 0, top = 0;
    while (!((spread >> shift) & 1))
        shift++; /* spread != 0: not all keys are equal (they were unsorted) */
    for (uintptr_t s = spread; s; s >>= 1)
        top++;
    enum { DIGIT = 11, BUCKETS = 1 << DIGIT };
    size_t *count = malloc(BUCKETS * sizeof *count);
    char *tmp = malloc(n * size);
    if (!count || !tmp) {
        free(count);
        free(tmp);
        rt_sort_runs(base, n, size, cmp);
        return;
    }
    char *src = v, *dst = tmp;
    for (unsigned d = shift; d < top; d += DIGIT) {
        memset(count, 0, BUCKETS * sizeof *count);
        for (size_t i = 0; i < n; i++)
            count[((key_at(src, i, size) - lo) >> d) & (BUCKETS - 1)]++;
        size_t sum = 0;
        for (size_t b = 0; b < BUCKETS; b++) {
            size_t c = count[b];
            count[b] = sum;
            sum += c;
        }
        scatter(src, dst, n, size, lo, d, BUCKETS - 1, count);
        char *swap = src;
        src = dst;
        dst = swap;
    }
    if (src != v)
        memcpy(v, src, n * size);
    free(count);
    free(tmp);
}
