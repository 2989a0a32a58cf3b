/* Cost of the allocation hooks of `paddiser run` (bench/run_alloc.sh):
 * run as is and under paddiser run, it prints ns per malloc+free pair of
 *   small: 64 bytes, with one tracked 64 MiB block alive (free then looks
 *          at the block's usable size, and the hash when it is large);
 *   mid:   256 KiB (under the 1 MiB threshold);
 *   large: 2 MiB (a registration and an unregistration each, first page
 *          touched);
 *   whole: 16 MiB, every page written: what a program's per-input array
 *          costs between instances (under paddiser run the freed block is
 *          kept and the next one reuses its pages; alone glibc reuses or
 *          trims its heap top as its thresholds fall).
 * A plain C program: it knows nothing of paddiser. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static volatile char sink;

static double pairs(size_t bytes, long n, size_t stride)
{
    double t0 = now();
    for (long i = 0; i < n; i++) {
        char *p = malloc(bytes);
        if (!p)
            abort();
        for (size_t at = 0; at < bytes; at += stride)
            p[at] = (char)i;
        sink = p[0];
        free(p);
    }
    return (now() - t0) / (double)n * 1e9;
}

int main(int argc, char **argv)
{
    long scale = argc > 1 ? atol(argv[1]) : 1;
    if (scale < 1)
        scale = 1;
    char *keep = malloc(64u << 20); /* one tracked block alive throughout */
    if (!keep)
        return 1;
    memset(keep, 1, 64u << 20);
    double small = pairs(64, 2000000 * scale, 64);
    double mid = pairs(256u << 10, 200000 * scale, 256u << 10);
    double large = pairs(2u << 20, 2000 * scale, 2u << 20);
    double whole = pairs(16u << 20, 100 * scale, 4096);
    printf("small_ns %.1f\nmid_ns %.1f\nlarge_ns %.1f\nwhole_ns %.1f\n", small, mid, large, whole);
    free(keep);
    return 0;
}
