/* Python's random module, bit for bit: see pyrandom.h. The generator is the
 * reference MT19937 (Matsumoto and Nishimura) as CPython's
 * Modules/_randommodule.c seeds and reads it; the algorithms above it follow
 * Lib/random.py of CPython 3.11. */
#include "bench/pyrandom.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { MT_N = 624, MT_M = 397 };

static void init_genrand(pd_pyrandom *r, uint32_t s)
{
    r->mt[0] = s;
    for (int i = 1; i < MT_N; i++)
        r->mt[i] = 1812433253U * (r->mt[i - 1] ^ (r->mt[i - 1] >> 30)) + (uint32_t)i;
    r->index = MT_N;
}

static void init_by_array(pd_pyrandom *r, const uint32_t *key, size_t len)
{
    uint32_t *mt = r->mt;
    init_genrand(r, 19650218U);
    size_t i = 1, j = 0;
    for (size_t k = MT_N > len ? MT_N : len; k; k--) {
        mt[i] = (mt[i] ^ ((mt[i - 1] ^ (mt[i - 1] >> 30)) * 1664525U)) + key[j] + (uint32_t)j;
        i++;
        j++;
        if (i >= MT_N) {
            mt[0] = mt[MT_N - 1];
            i = 1;
        }
        if (j >= len)
            j = 0;
    }
    for (size_t k = MT_N - 1; k; k--) {
        mt[i] = (mt[i] ^ ((mt[i - 1] ^ (mt[i - 1] >> 30)) * 1566083941U)) - (uint32_t)i;
        i++;
        if (i >= MT_N) {
            mt[0] = mt[MT_N - 1];
            i = 1;
        }
    }
    mt[0] = 0x80000000U;
}

void pd_pyrandom_seed(pd_pyrandom *r, int64_t seed)
{
    /* the absolute value without overflow for INT64_MIN */
    uint64_t a = seed < 0 ? (uint64_t)0 - (uint64_t)seed : (uint64_t)seed;
    uint32_t key[2] = {(uint32_t)a, (uint32_t)(a >> 32)};
    init_by_array(r, key, key[1] ? 2 : 1);
}

uint32_t pd_pyrandom_u32(pd_pyrandom *r)
{
    static const uint32_t mag01[2] = {0x0U, 0x9908b0dfU};
    uint32_t *mt = r->mt, y;
    if (r->index >= MT_N) {
        int kk;
        for (kk = 0; kk < MT_N - MT_M; kk++) {
            y = (mt[kk] & 0x80000000U) | (mt[kk + 1] & 0x7fffffffU);
            mt[kk] = mt[kk + MT_M] ^ (y >> 1) ^ mag01[y & 1U];
        }
        for (; kk < MT_N - 1; kk++) {
            y = (mt[kk] & 0x80000000U) | (mt[kk + 1] & 0x7fffffffU);
            mt[kk] = mt[kk + (MT_M - MT_N)] ^ (y >> 1) ^ mag01[y & 1U];
        }
        y = (mt[MT_N - 1] & 0x80000000U) | (mt[0] & 0x7fffffffU);
        mt[MT_N - 1] = mt[MT_M - 1] ^ (y >> 1) ^ mag01[y & 1U];
        r->index = 0;
    }
    y = mt[r->index++];
    y ^= y >> 11;
    y ^= (y << 7) & 0x9d2c5680U;
    y ^= (y << 15) & 0xefc60000U;
    y ^= y >> 18;
    return y;
}

double pd_pyrandom_random(pd_pyrandom *r)
{
    uint32_t a = pd_pyrandom_u32(r) >> 5, b = pd_pyrandom_u32(r) >> 6;
    return ((double)a * 67108864.0 + (double)b) * (1.0 / 9007199254740992.0);
}

uint64_t pd_pyrandom_getrandbits(pd_pyrandom *r, unsigned k)
{
    if (k == 0)
        return 0;
    if (k > 64)
        k = 64;
    if (k <= 32)
        return pd_pyrandom_u32(r) >> (32 - k);
    /* CPython fills 32-bit words least significant first, the last one
     * shifted down to the bits left */
    uint64_t lo = pd_pyrandom_u32(r), hi = pd_pyrandom_u32(r) >> (64 - k);
    return lo | hi << 32;
}

static unsigned bit_length(uint64_t n)
{
    unsigned k = 0;
    for (; n; n >>= 1)
        k++;
    return k;
}

uint64_t pd_pyrandom_below(pd_pyrandom *r, uint64_t n)
{
    if (n == 0)
        return 0;
    unsigned k = bit_length(n); /* n, not n - 1: Python's choice for n = 1 */
    uint64_t x = pd_pyrandom_getrandbits(r, k);
    while (x >= n)
        x = pd_pyrandom_getrandbits(r, k);
    return x;
}

static int cmp_size(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return (x > y) - (x < y);
}

int pd_pyrandom_sample(pd_pyrandom *r, size_t n, size_t k, size_t *out)
{
    if (k > n)
        k = n;
    /* Python compares the size of an n-list with that of a k-set:
     * setsize = 21, plus 4 ** ceil(log(3k, 4)) when k > 5 */
    double setsize = 21;
    if (k > 5)
        setsize += pow(4.0, ceil(log((double)k * 3) / log(4.0)));
    if ((double)n <= setsize) {
        size_t *pool = malloc((n ? n : 1) * sizeof *pool);
        if (!pool)
            return -1;
        for (size_t i = 0; i < n; i++)
            pool[i] = i;
        for (size_t i = 0; i < k; i++) {
            size_t j = (size_t)pd_pyrandom_below(r, n - i);
            out[i] = pool[j];
            pool[j] = pool[n - i - 1]; /* the last unselected one fills the hole */
        }
        free(pool);
        return 0;
    }
    /* the set branch: redraw indices already taken; a sorted copy stands in
     * for Python's set (k is small next to n here) */
    size_t *taken = malloc((k ? k : 1) * sizeof *taken);
    if (!taken)
        return -1;
    for (size_t i = 0; i < k; i++) {
        size_t j;
        do
            j = (size_t)pd_pyrandom_below(r, n);
        while (i > 0 && bsearch(&j, taken, i, sizeof *taken, cmp_size));
        out[i] = j;
        size_t pos = i;
        while (pos > 0 && taken[pos - 1] > j) {
            taken[pos] = taken[pos - 1];
            pos--;
        }
        taken[pos] = j;
    }
    free(taken);
    return 0;
}

void pd_pyrandom_shuffle(pd_pyrandom *r, void *items, size_t n, size_t size)
{
    unsigned char *p = items, tmp[64];
    for (size_t i = n; i-- > 1;) {
        size_t j = (size_t)pd_pyrandom_below(r, i + 1);
        /* swap in chunks so any element size works without allocating */
        for (size_t off = 0; off < size; off += sizeof tmp) {
            size_t c = size - off < sizeof tmp ? size - off : sizeof tmp;
            memcpy(tmp, p + i * size + off, c);
            memcpy(p + i * size + off, p + j * size + off, c);
            memcpy(p + j * size + off, tmp, c);
        }
    }
}
