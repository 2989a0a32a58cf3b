/* Python's random module, bit for bit (CPython 3.11, Lib/random.py and
 * Modules/_randommodule.c): the MT19937 generator as random.seed(int) seeds
 * it, random(), getrandbits(), _randbelow(), choice's index, sample()'s two
 * algorithms and shuffle(). IOPS draws its random search and its execution
 * order from random.Random(benchmark.random_seed); this lets paddiser give
 * the same executions the same numbers and run them in the same order. */
#ifndef PD_BENCH_PYRANDOM_H
#define PD_BENCH_PYRANDOM_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    uint32_t mt[624];
    int index;
} pd_pyrandom;

/* random.seed(seed) for an int seed: init_by_array over the 32-bit words of
 * |seed|, least significant first ([0] for 0). */
void pd_pyrandom_seed(pd_pyrandom *r, int64_t seed);

/* One 32-bit output of the generator (genrand_uint32). */
uint32_t pd_pyrandom_u32(pd_pyrandom *r);

/* random.random(): 53 random bits in [0, 1). */
double pd_pyrandom_random(pd_pyrandom *r);

/* random.getrandbits(k), 0 <= k <= 64. */
uint64_t pd_pyrandom_getrandbits(pd_pyrandom *r, unsigned k);

/* random._randbelow(n) (the getrandbits rejection loop): 0 <= x < n; 0 when
 * n is 0. */
uint64_t pd_pyrandom_below(pd_pyrandom *r, uint64_t n);

/* random.sample(range(n), k) into out[0..k): the indices sample() picks, in
 * the order it returns them (sample(population, k)[i] is
 * population[out[i]]). k <= n. Returns 0, or -1 when out of memory. */
int pd_pyrandom_sample(pd_pyrandom *r, size_t n, size_t k, size_t *out);

/* random.shuffle(x) for x = items[0..n) of size bytes each. */
void pd_pyrandom_shuffle(pd_pyrandom *r, void *items, size_t n, size_t size);

#endif
