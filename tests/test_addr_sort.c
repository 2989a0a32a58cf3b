/* rt_sort_by_address (src/lib/addr_sort.c), the sync point's sort of page
 * lists: the same order as qsort on every shape of input (sorted,
 * reversed, a few long runs, many short ones, duplicates, page addresses
 * far apart), and stable, which qsort need not be. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "lib/addr_sort.h"

typedef struct {
    uintptr_t key; /* first: rt_sort_by_address sorts by it */
    size_t pos; /* where it was before sorting */
} item;

static int cmp_key(const void *a, const void *b)
{
    const item *x = a, *y = b;
    return x->key < y->key ? -1 : x->key > y->key;
}

static int cmp_key_pos(const void *a, const void *b)
{
    int c = cmp_key(a, b);
    if (c)
        return c;
    const item *x = a, *y = b;
    return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/* Sorts v by key with rt_sort_by_address and checks it against qsort by (key,
 * original position): equal keys stay in their order. */
static void check(item *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        v[i].pos = i;
    item *want = malloc((n ? n : 1) * sizeof *want);
    assert_non_null(want);
    memcpy(want, v, n * sizeof *v);
    qsort(want, n, sizeof *want, cmp_key_pos);
    rt_sort_by_address(v, n, sizeof *v, cmp_key);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(v[i].key, want[i].key);
        assert_int_equal(v[i].pos, want[i].pos);
    }
    free(want);
}

static void test_shapes(void **state)
{
    (void)state;
    enum { N = 5000 };
    item *v = malloc(N * sizeof *v);
    assert_non_null(v);
    check(v, 0);
    v[0].key = 7;
    check(v, 1);
    for (size_t i = 0; i < N; i++)
        v[i].key = i; /* sorted */
    check(v, N);
    for (size_t i = 0; i < N; i++)
        v[i].key = N - i; /* reversed: N runs of one */
    check(v, N);
    for (size_t i = 0; i < N; i++)
        v[i].key = (i % 3) * 10000 + i; /* three interleaved sequences: runs of one */
    check(v, N);
    for (size_t i = 0; i < N; i++)
        v[i].key = (i / 700 % 2 ? 0 : 100000) + i % 700 * 4096; /* regions, hottest first */
    check(v, N);
    srand(11);
    for (int round = 0; round < 50; round++) {
        size_t n = (size_t)(rand() % N);
        for (size_t i = 0; i < n; i++)
            v[i].key = (uintptr_t)(rand() % 64); /* many duplicates */
        check(v, n);
        size_t i = 0;
        while (i < n) { /* random ascending runs */
            size_t len = 1 + (size_t)(rand() % 300);
            uintptr_t base = (uintptr_t)(rand() % 100000);
            for (size_t k = 0; k < len && i < n; k++, i++)
                v[i].key = base + k * (uintptr_t)(rand() % 3);
        }
        check(v, n);
        /* pages of mappings far apart (heap, mmap'd arrays, stacks), in
         * random order: keys that differ in many bits, radix's most passes */
        for (size_t j = 0; j < n; j++)
            v[j].key = ((uintptr_t)(rand() % 4) << 44) + ((uintptr_t)(rand() % 100000) << 12);
        check(v, n);
    }
    free(v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_shapes)};
    return cmocka_run_group_tests_name("addr_sort", tests, NULL, NULL);
}
