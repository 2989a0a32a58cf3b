/* tests/run_alloc.sh: an unmodified program that allocates through every
 * interposed call, large and small, for three "inputs" (freed, then
 * allocated again from the same sites). Prints one checksum per input, the
 * same with and without paddiser run. */
#define _GNU_SOURCE /* mremap, reallocarray */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define MIB (1u << 20)

static double fill(double *a, size_t n, double v)
{
    double s = 0;
    for (size_t i = 0; i < n; i++) {
        a[i] = v + (double)(i % 1000);
        s += a[i];
    }
    return s;
}

/* Every block escapes through here: clang -O1 otherwise removes an
 * allocation whose only uses it can see (aligned_alloc, memalign and valloc
 * here, filled and summed: check-clang got 7 objects of 10). */
static void *volatile escape;

/* One call site for several live blocks: they are site#0, site#1. */
static __attribute__((noinline)) double *block(size_t n)
{
    double *p = malloc(n * sizeof(double));
    if (p) /* not a tail call: the return address stays in block() */
        p[0] = 0;
    return p;
}

int main(void)
{
    for (int input = 0; input < 3; input++) {
        size_t n = (size_t)(2 + input) * MIB / sizeof(double);
        double sum = 0;
        double *pair[2];
        for (int k = 0; k < 2; k++) { /* two live blocks of one site: #0 and #1 */
            pair[k] = block(n);
            sum += fill(pair[k], n, k);
        }
        double *c = calloc(n, sizeof(double));
        escape = c;
        sum += c[n - 1];
        double *r = malloc(n * sizeof(double));
        sum += fill(r, n, 3);
        r = realloc(r, 2 * n * sizeof(double)); /* grows: same object, new range */
        sum += fill(r + n, n, 4) + r[0];
        r = realloc(r, 1000);                   /* below the threshold: leaves the runtime */
        sum += r[1];
        void *pm = NULL;
        if (posix_memalign(&pm, 4096, 3 * MIB))
            return 1;
        memset(pm, 5, 3 * MIB);
        double *al = aligned_alloc(64, 2 * MIB);
        escape = al;
        double *me = memalign(256, 2 * MIB);
        escape = me;
        double *va = valloc(2 * MIB);
        escape = va;
        sum += fill(al, 2 * MIB / sizeof(double), 6) + fill(me, 2 * MIB / sizeof(double), 7) +
               fill(va, 2 * MIB / sizeof(double), 8);
        double *ra = reallocarray(NULL, n, sizeof(double));
        escape = ra;
        sum += fill(ra, n, 9);
        char *small = malloc(64);
        snprintf(small, 64, "input %d", input);
        /* An anonymous mapping: a part unmapped, then grown with mremap. */
        size_t mlen = 4 * MIB;
        char *m = mmap(NULL, mlen, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED)
            return 1;
        memset(m, 1, mlen);
        if (munmap(m + 3 * MIB, MIB))
            return 1;
        m = mremap(m, 3 * MIB, 6 * MIB, MREMAP_MAYMOVE);
        if (m == MAP_FAILED)
            return 1;
        memset(m + 3 * MIB, 2, 3 * MIB);
        for (size_t i = 0; i < 6 * MIB; i += 4096)
            sum += m[i];
        printf("%s: %.1f\n", small, sum);
        munmap(m, 6 * MIB);
        free(small);
        free(ra);
        free(va);
        free(me);
        free(al);
        free(pm);
        free(r);
        free(c);
        free(pair[0]);
        free(pair[1]);
    }
    return 0;
}
