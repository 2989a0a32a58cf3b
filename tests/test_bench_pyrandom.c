/* Tests of src/bench/pyrandom.c against CPython 3.11's random module (Debian
 * 12's python3). Every expected value was printed by the python3 command in
 * the comment above it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "bench/pyrandom.h"

static void expect_u32(int64_t seed, const uint32_t *want, size_t n)
{
    pd_pyrandom r;
    pd_pyrandom_seed(&r, seed);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(pd_pyrandom_u32(&r), want[i]);
}

/* python3 -c 'import random; r=random.Random(S); print([r.getrandbits(32) for _ in range(3)])'
 * for S = 42, 0, -5 (seeded as |S|) and 123456789012 (two 32-bit key words) */
static void test_seed_and_outputs(void **state)
{
    (void)state;
    expect_u32(42, (const uint32_t[]){2746317213U, 478163327U, 107420369U}, 3);
    expect_u32(0, (const uint32_t[]){3626764237U, 1654615998U}, 2);
    expect_u32(-5, (const uint32_t[]){2675342405U, 1097127993U}, 2);
    expect_u32(123456789012LL, (const uint32_t[]){1619264890U, 2798649831U}, 2);
}

/* python3 -c 'import random; r=random.Random(42); print([repr(r.random()) for _ in range(2)])' */
static void test_random(void **state)
{
    (void)state;
    pd_pyrandom r;
    pd_pyrandom_seed(&r, 42);
    assert_true(pd_pyrandom_random(&r) == 0.6394267984578837);
    assert_true(pd_pyrandom_random(&r) == 0.025010755222666936);
}

/* python3 -c 'import random; r=random.Random(1); print([r.getrandbits(k) for k in (1,7,33,64)])'
 * python3 -c 'import random; r=random.Random(7); print([r._randbelow(n) for n in (1,2,3,10,1000,2**40+3)])' */
static void test_getrandbits_and_below(void **state)
{
    (void)state;
    pd_pyrandom r;
    pd_pyrandom_seed(&r, 1);
    assert_int_equal(pd_pyrandom_getrandbits(&r, 1), 0);
    assert_int_equal(pd_pyrandom_getrandbits(&r, 7), 72);
    assert_int_equal(pd_pyrandom_getrandbits(&r, 33), 7934667487ULL);
    assert_int_equal(pd_pyrandom_getrandbits(&r, 64), 1164115433906158532ULL);
    pd_pyrandom_seed(&r, 7);
    const uint64_t n[] = {1, 2, 3, 10, 1000, (1ULL << 40) + 3};
    const uint64_t want[] = {0, 0, 1, 0, 74, 803563169809ULL};
    for (size_t i = 0; i < 6; i++)
        assert_int_equal(pd_pyrandom_below(&r, n[i]), want[i]);
}

static void expect_sample(int64_t seed, size_t n, size_t k, const size_t *want)
{
    pd_pyrandom r;
    size_t out[64];
    pd_pyrandom_seed(&r, seed);
    assert_int_equal(pd_pyrandom_sample(&r, n, k, out), 0);
    for (size_t i = 0; i < k; i++)
        assert_int_equal(out[i], want[i]);
}

/* python3 -c 'import random; r=random.Random(S); print(r.sample(range(N), K))'
 * (S, N, K) = (42, 32, 5) and (9, 100, 10): n > setsize, the set branch;
 * (42, 16, 4) and (9, 80, 30): the pool branch */
static void test_sample(void **state)
{
    (void)state;
    expect_sample(42, 32, 5, (const size_t[]){7, 1, 17, 15, 14});
    expect_sample(42, 16, 4, (const size_t[]){3, 0, 11, 4});
    expect_sample(9, 100, 10, (const size_t[]){59, 78, 47, 34, 17, 23, 86, 0, 43, 64});
    expect_sample(9, 80, 30,
                  (const size_t[]){59, 78, 47, 34, 17, 23, 0, 43, 64, 79, 10, 42, 5, 48, 21,
                                   57, 54, 69, 62, 15, 3, 7, 8, 32, 55, 37, 4, 49, 44, 24});
}

/* python3 -c 'import random; r=random.Random(3); x=list(range(10)); r.shuffle(x); print(x)'
 * python3 -c 'import random; r=random.Random(3); x=list(range(10)); print([r.choice(x) for _ in range(5)])' */
static void test_shuffle_and_choice(void **state)
{
    (void)state;
    pd_pyrandom r;
    int x[10] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
    const int want[10] = {1, 5, 6, 0, 9, 4, 7, 2, 8, 3};
    pd_pyrandom_seed(&r, 3);
    pd_pyrandom_shuffle(&r, x, 10, sizeof x[0]);
    for (size_t i = 0; i < 10; i++)
        assert_int_equal(x[i], want[i]);
    const uint64_t choices[5] = {3, 9, 8, 2, 5}; /* choice(seq) is seq[_randbelow(len(seq))] */
    pd_pyrandom_seed(&r, 3);
    for (size_t i = 0; i < 5; i++)
        assert_int_equal(pd_pyrandom_below(&r, 10), choices[i]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_seed_and_outputs),
        cmocka_unit_test(test_random),
        cmocka_unit_test(test_getrandbits_and_below),
        cmocka_unit_test(test_sample),
        cmocka_unit_test(test_shuffle_and_choice),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
