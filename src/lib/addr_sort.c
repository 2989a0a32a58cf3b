/* Sorting the sync point's page lists by address: a radix sort over the
 * bits the addresses differ in. It replaced a natural merge sort of the
 * lists' ascending runs (one region after another), which took about
 * log2(runs) comparison passes where this takes two to four, with no
 * comparator call. */
#include "lib/addr_sort.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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
 * stable counting sort. */
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
        qsort(base, n, size, cmp);
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
