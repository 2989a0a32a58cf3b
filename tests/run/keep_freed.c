/* tests/run_alloc.sh, kept blocks: a program that frees a large block and
 * allocates one of the same size again, as per-input arrays are. Under
 * `paddiser run` the second block is the first one's memory, resident:
 * rewriting it takes (almost) no page faults, and calloc's block is zero.
 * Prints, on stdout, what does not depend on the allocator (checksums);
 * on stderr, "faults N" for each rewrite, which the test compares, and
 * whether two same-sized objects freed and allocated again in the other
 * order got their own memory back ("same site yes").
 * "keep_freed double" frees its block twice (a bug the test must see
 * stopped). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#define MIB ((size_t)1 << 20)

static void *volatile escape;

static long minor_faults(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_minflt;
}

/* One site: the same object each time. */
static __attribute__((noinline)) unsigned char *array(size_t n)
{
    unsigned char *p = malloc(n);
    escape = p;
    return p;
}

/* Another site: another object. */
static __attribute__((noinline)) unsigned char *other_array(size_t n)
{
    unsigned char *p = malloc(n);
    escape = p;
    return p;
}

static unsigned long fill(unsigned char *p, size_t n, int v)
{
    unsigned long s = 0;
    for (size_t i = 0; i < n; i += 512) {
        p[i] = (unsigned char)(v + i / 512);
        s += p[i];
    }
    return s;
}

int main(int argc, char **argv)
{
    size_t n = 8 * MIB;
    unsigned long sum = 0;
    if (argc > 1 && !strcmp(argv[1], "double")) { /* a program's bug: freed twice */
        unsigned char *a = array(n);
        free(a);
        free((void *)escape);
        return 0;
    }
    for (int input = 0; input < 3; input++) {
        unsigned char *a = array(n);
        if (!a)
            return 1;
        long before = minor_faults();
        sum += fill(a, n, input);
        fprintf(stderr, "faults %ld\n", minor_faults() - before);
        free(a);
    }
    /* calloc of a block that held data: zero, whoever served it */
    unsigned char *z = calloc(1, n);
    if (!z)
        return 1;
    for (size_t i = 0; i < n; i++)
        if (z[i]) {
            printf("calloc byte %zu is %d\n", i, z[i]);
            return 1;
        }
    free(z);
    /* a larger block than any freed one (the kept one goes back: kept and
     * asked would pass the peak), then the first size again: the larger
     * block, shrunk in place, its pages resident */
    unsigned char *big = array(2 * n);
    sum += fill(big, 2 * n, 7);
    free(big);
    unsigned char *a = array(n);
    long before = minor_faults();
    sum += fill(a, n, 9);
    fprintf(stderr, "faults %ld\n", minor_faults() - before);
    free(a);
    /* two objects of one size, freed, then allocated in the other order:
     * each gets its own memory back (on stderr: "same site yes") */
    unsigned char *x = array(n), *y = other_array(n);
    sum += fill(x, n, 1) + fill(y, n, 2);
    uintptr_t ox = (uintptr_t)x, oy = (uintptr_t)y;
    free(x);
    free(y);
    y = other_array(n);
    x = array(n);
    fprintf(stderr, "same site %s\n", (uintptr_t)x == ox && (uintptr_t)y == oy ? "yes" : "no");
    sum += fill(x, n, 3) + fill(y, n, 4);
    free(x);
    free(y);
    printf("sum %lu\n", sum);
    return 0;
}
