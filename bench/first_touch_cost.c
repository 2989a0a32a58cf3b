/* What a fresh page's first touch costs on this machine: an anonymous
 * private mapping of MIB MiB (no huge pages), written whole once (every
 * page faults in, zeroed by the kernel) and once more (no fault); the
 * difference over the pages is a first touch's fault. It prices the pages
 * a program gets fresh where it could have reused them, as GAP's
 * per-trial arrays under the runtime when glibc trims the heap top
 * (docs/runtime-measurements.md, *The heap under the runtime*). Prints the
 * median and range over ROUNDS mappings. Timings: a benchmark, not a test.
 *   make bench-first-touch [FIRST_TOUCH_ARGS="MIB ROUNDS"]   (default 32 9) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "bench_stats.h"

int main(int argc, char **argv)
{
    long mib = argc > 1 ? atol(argv[1]) : 32, rounds = argc > 2 ? atol(argv[2]) : 9;
    if (mib < 1 || rounds < 1 || rounds > 1000) {
        fprintf(stderr, "usage: %s [MIB >= 1] [ROUNDS 1..1000]\n", argv[0]);
        return 2;
    }
    size_t len = (size_t)mib << 20, page = (size_t)sysconf(_SC_PAGESIZE), pages = len / page;
    double *us = calloc((size_t)rounds, sizeof *us);
    if (!us)
        return 1;
    for (long r = 0; r < rounds; r++) {
        char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) {
            perror("first_touch_cost: mmap");
            return 1;
        }
        madvise(p, len, MADV_NOHUGEPAGE);
        double t0 = pd_monotonic();
        memset(p, 1, len);
        double t1 = pd_monotonic();
        memset(p, 2, len);
        double t2 = pd_monotonic();
        us[r] = ((t1 - t0) - (t2 - t1)) / (double)pages * 1e6;
        munmap(p, len);
    }
    double lo, hi;
    bench_range(us, (size_t)rounds, &lo, &hi);
    printf("first_touch_cost: %ld MiB (%zu pages of %zu B), %ld rounds: a first touch's fault %.2f us (%.2f .. %.2f)\n",
           mib, pages, page, rounds, bench_median(us, (size_t)rounds), lo, hi);
    free(us);
    return 0;
}
