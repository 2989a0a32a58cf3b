/* The page sampler's waits to first touch on this machine's real clock
 * (docs/runtime-measurements.md, "Waits to first touch net of the sampler's own
 * faults"): a task touches 64 armed pages back to back, so it takes 64
 * sampled faults in a row. Counted from arming, page k would have waited
 * k faults, and the waits would sum to about 32 times the loop. Net of the
 * thread's own fault handling (what the sampler records), they are the
 * task's progress between the touches, a small part of the loop. Each
 * round arms the pages, times the loop, and sums the recorded waits;
 * prints the median, least and largest of waits / loop over the rounds.
 * tests/test_runtime_sampler.c checks the same arithmetic on a fake clock;
 * this is the real-time figure. Timings: a benchmark, not a test.
 *   make bench-fault-waits [FAULT_WAITS_ARGS=ROUNDS]   (default 50) */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "bench_stats.h"
#include "common/util.h"
#include "lib/page_sampler.h"

#define PAGE 4096u
#define PAGES 64u

static void sum_waits(void *ctx, size_t sample, int slot, uint64_t count, double wait_s)
{
    (void)sample;
    (void)count;
    if (slot == 1)
        *(double *)ctx += wait_s;
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 50;
    if (rounds < 1) {
        fprintf(stderr, "usage: %s [ROUNDS >= 1]\n", argv[0]);
        return 2;
    }
    pd_sampler_config cfg = {.seed = 7, .period_ms = 0}; /* every page a sample, no tick */
    if (pd_sampler_start(&cfg) != 0) {
        fprintf(stderr, "fault_waits: the page sampler did not start\n");
        return 1;
    }
    unsigned char *buf = mmap(NULL, PAGES * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (buf == MAP_FAILED) {
        perror("fault_waits: mmap");
        return 1;
    }
    for (size_t p = 0; p < PAGES; p++)
        buf[p * PAGE] = 0;
    pd_sampler_range r = {buf, PAGES * PAGE, 0};
    if (pd_sampler_set_ranges(&r, 1) != 0 || pd_sampler_nsamples() != PAGES) {
        fprintf(stderr, "fault_waits: expected %u samples, got %zu\n", PAGES, pd_sampler_nsamples());
        return 1;
    }
    double *ratio = calloc((size_t)rounds, sizeof *ratio), *loop_us = calloc((size_t)rounds, sizeof *loop_us);
    if (!ratio || !loop_us)
        return 1;
    for (int i = 0; i < rounds; i++) {
        pd_sampler_reset_counts();
        pd_sampler_set_thread_task(1);
        pd_sampler_arm();
        double t0 = pd_monotonic();
        for (size_t p = 0; p < PAGES; p++)
            ((volatile unsigned char *)buf)[p * PAGE] += 1;
        double loop = pd_monotonic() - t0;
        pd_sampler_disarm();
        pd_sampler_set_thread_task(PD_SAMPLER_NO_TASK);
        double waits = 0;
        pd_sampler_foreach_wait(sum_waits, &waits);
        ratio[i] = waits / loop;
        loop_us[i] = loop * 1e6;
    }
    pd_sampler_stats st;
    pd_sampler_get_stats(&st);
    double lo, hi, llo, lhi;
    bench_range(ratio, (size_t)rounds, &lo, &hi);
    bench_range(loop_us, (size_t)rounds, &llo, &lhi);
    printf("fault_waits: %d rounds of %u sampled faults in a row (a calibrated fault %.1f us, its trap %.1f us)\n",
           rounds, PAGES, st.fault_cost_s * 1e6, st.trap_s * 1e6);
    printf("  loop: median %.0f us (%.0f .. %.0f)\n", bench_median(loop_us, (size_t)rounds), llo, lhi);
    printf("  recorded waits / loop: median %.2f (%.2f .. %.2f); counted from arming it would be about %.1f\n",
           bench_median(ratio, (size_t)rounds), lo, hi, (PAGES - 1) / 2.0);
    munmap(buf, PAGES * PAGE);
    pd_sampler_stop();
    free(ratio);
    free(loop_us);
    return 0;
}
