/* Cost of draining one PMU sample ring (src/lib/mem_sampler.c) on this
 * machine's CPU: a full ring (PD_MEM_RING_PAGES data pages of 16-byte
 * samples: PD_MEM_SAMPLE_TYPE in the layout of linux/perf_event.h) of
 * addresses at random in 16 registered objects of MIB in all (one in ten
 * in the gaps between them), parsed into the page sampler's table with its
 * default density (1 GiB: 1024 samples; 32 GiB: the whole budget of 16384).
 * Prints, per size, the median and maximum time per ring and per record
 * over the rounds. No PMU is involved: this is the software side of a
 * drain only. Timings: a benchmark, not a test.
 *   make bench-mem-drain [MEM_DRAIN_BENCH_ARGS="ROUNDS MIB..."]   (default 200 1024 32768) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "lib/mem_sampler.h"
#include "lib/page_sampler.h"

#define NOBJ 16

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int run(int rounds, size_t mib)
{
    /* Address ranges only: the parser never touches the objects. */
    size_t per = mib / NOBJ << 20;
    uintptr_t base = (uintptr_t)1 << 44;
    pd_sampler_config cfg = {.seed = 1, .no_protect = 1};
    pd_sampler_range r[NOBJ];
    for (int i = 0; i < NOBJ; i++)
        r[i] = (pd_sampler_range){(void *)(base + (uintptr_t)i * 2 * per), per, i};
    if (pd_sampler_start(&cfg) != 0 || pd_sampler_set_ranges(r, NOBJ) != 0) {
        fprintf(stderr, "mem_drain_bench: page sampler did not start\n");
        return 1;
    }
    size_t size = (size_t)PD_MEM_RING_PAGES * pd_page_size(), n = size / 16;
    unsigned char *ring = malloc(size);
    double *t = malloc((size_t)rounds * sizeof *t);
    if (!ring || !t) {
        free(ring);
        free(t);
        pd_sampler_stop();
        return 1;
    }
    uint64_t rng = 42;
    for (size_t k = 0; k < n; k++) {
        struct perf_event_header h = {PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, 16};
        uint64_t x = pd_splitmix64(&rng), obj = x % NOBJ, off = (x >> 8) % per;
        uint64_t addr = base + obj * 2 * per + off + (k % 10 == 9 ? per : 0); /* every 10th in a gap */
        memcpy(ring + k * 16, &h, 8);
        memcpy(ring + k * 16 + 8, &addr, 8);
    }
    pd_mem_stats st = {0};
    /* An untimed round first: the count table's pages are touched once. */
    pd_mem_ring_parse(ring, size, 0, size, PD_MEM_SAMPLE_TYPE, 0, &st);
    pd_sampler_reset_counts();
    memset(&st, 0, sizeof st);
    for (int i = 0; i < rounds; i++) {
        double t0 = pd_monotonic();
        pd_mem_ring_parse(ring, size, (uint64_t)i * size, (uint64_t)(i + 1) * size, PD_MEM_SAMPLE_TYPE, i % 4, &st);
        t[i] = pd_monotonic() - t0;
        if (i % 16 == 15)
            pd_sampler_reset_counts(); /* as sync points do */
    }
    qsort(t, (size_t)rounds, sizeof *t, cmp_double);
    printf("ring %zu KB, %zu records, %zu table samples: drain median %.1f us (%.1f ns/record), max %.1f us; "
           "charged %llu, outside %llu\n",
           size >> 10, n, pd_sampler_nsamples(), t[rounds / 2] * 1e6, t[rounds / 2] * 1e9 / (double)n,
           t[rounds - 1] * 1e6, (unsigned long long)st.charged, (unsigned long long)st.outside);
    pd_sampler_stop();
    free(ring);
    free(t);
    return 0;
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 200;
    if (rounds < 1) {
        fprintf(stderr, "usage: mem_drain_bench [ROUNDS >= 1] [MIB >= %d]...\n", NOBJ);
        return 2;
    }
    static const size_t dflt[] = {1024, 32768};
    int nsizes = argc > 2 ? argc - 2 : 2;
    for (int i = 0; i < nsizes; i++) {
        size_t mib = argc > 2 ? (size_t)atol(argv[2 + i]) : dflt[i];
        if (mib < NOBJ) {
            fprintf(stderr, "usage: mem_drain_bench [ROUNDS >= 1] [MIB >= %d]...\n", NOBJ);
            return 2;
        }
        if (run(rounds, mib) != 0)
            return 1;
    }
    return 0;
}
