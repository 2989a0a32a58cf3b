/* What drawing the sampled pages afresh costs a sampled instance
 * (page_sampler.c, rotation; docs/runtime.md, "Page sampling"): the time
 * from the end of one instance to the start of the next (the counts reset,
 * then pd_sampler_instance_begin) with every instance sampled, rotation on
 * and off, on one object of MIB MiB with up to SAMPLES samples. Nothing is
 * armed: what is timed is the new table (allocation, the redraw, the swap)
 * against none. Prints the median over rounds of both and their difference.
 * Timings: a benchmark, not a test.
 *   make bench-rotate-cost [ROTATE_COST_ARGS="MIB SAMPLES ROUNDS"]
 *   (default 4096 16384 200: the sampler's default budget, filled) */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "bench_stats.h"
#include "common/util.h"
#include "lib/page_sampler.h"

static double per_instance(void *buf, size_t len, size_t samples, int rotate, int rounds, size_t *ntab)
{
    pd_sampler_config cfg = {.seed = 7, .max_samples = samples, .min_per_object = 64, .period_ms = 0, .share = -1,
                             .rotate = rotate};
    if (pd_sampler_start(&cfg) != 0)
        return -1;
    pd_sampler_range r = {buf, len, 0};
    if (pd_sampler_set_ranges(&r, 1) != 0)
        return -1;
    *ntab = pd_sampler_nsamples();
    double *t = calloc((size_t)rounds, sizeof *t);
    pd_sampler_instance_begin(0); /* the first keeps the built table */
    for (int i = 0; i < rounds; i++) {
        double t0 = pd_monotonic();
        pd_sampler_reset_counts();
        pd_sampler_instance_begin(0);
        t[i] = pd_monotonic() - t0;
    }
    double med = bench_median(t, (size_t)rounds);
    free(t);
    pd_sampler_stop();
    return med;
}

int main(int argc, char **argv)
{
    size_t mib = argc > 1 ? strtoul(argv[1], NULL, 10) : 4096;
    size_t samples = argc > 2 ? strtoul(argv[2], NULL, 10) : 16384;
    int rounds = argc > 3 ? atoi(argv[3]) : 200;
    if (mib < 1 || samples < 1 || rounds < 1) {
        fprintf(stderr, "usage: rotate_cost [MIB SAMPLES ROUNDS]\n");
        return 2;
    }
    size_t len = mib << 20;
    /* never touched: the sampler only needs the range */
    void *buf = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (buf == MAP_FAILED) {
        perror("mmap");
        return 1;
    }
    size_t n_on = 0, n_off = 0;
    double on = per_instance(buf, len, samples, 1, rounds, &n_on);
    double off = per_instance(buf, len, samples, 0, rounds, &n_off);
    if (on < 0 || off < 0) {
        fprintf(stderr, "rotate_cost: the sampler did not start\n");
        return 1;
    }
    printf("%zu MiB, %zu samples: between two sampled instances %.1f us with rotation, %.1f us without "
           "(median of %d); the redraw %.1f us\n",
           mib, n_on, on * 1e6, off * 1e6, rounds, (on - off) * 1e6);
    munmap(buf, len);
    return 0;
}
