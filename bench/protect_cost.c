/* What arming and disarming the page sampler's samples costs on this machine
 * (docs/runtime-measurements.md, "What the samples per object trade"): a
 * spell protects each sample page with its own mprotect (samples are one
 * page per stratum, never adjacent in a large object), and the end of the
 * spell unprotects each object's span with one call, which merges the
 * mappings the protection split. Here: an anonymous mapping of MIB MiB,
 * written whole, with every SPACING-th page a sample; per round, one
 * mprotect per sample to PROT_NONE, then one call over the whole mapping
 * back to read-write. With THREADS > 1, other threads keep reading the
 * mapping's unprotected pages meanwhile, as an application's tasks do, so
 * each call also pays its TLB shootdown to their cores. With PRESPLIT 1,
 * each sample page is first given its own mapping (MADV_HUGEPAGE on the page
 * of a MADV_NOHUGEPAGE mapping: a flag that changes nothing on a 4 KiB
 * mapping but keeps it from merging with its neighbours), so protecting it
 * neither splits nor merges mappings, and each sample is unprotected by its
 * own call: what the sampler does not do (docs/runtime-measurements.md,
 * "What the samples per object trade"). Prints the median over rounds of the
 * cost per arming call and per sample unprotected.
 * Timings: a benchmark, not a test.
 *   make bench-protect-cost [PROTECT_COST_ARGS="MIB SPACING ROUNDS THREADS PRESPLIT"]
 *   (default 256 512 20 2 0: 128 samples, as the phases example's big objects) */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "bench_stats.h"
#include "common/util.h"

#define PAGE 4096u

static unsigned char *buf;
static size_t npages, spacing;
static atomic_int stop;

/* Reads the pages between samples (never a sample page: those fault). */
static void *reader(void *arg)
{
    size_t off = (size_t)(uintptr_t)arg;
    unsigned long sum = 0;
    size_t first = 1 + off % (spacing - 1); /* samples are the multiples of spacing */
    while (!atomic_load_explicit(&stop, memory_order_relaxed))
        for (size_t p = first; p < npages; p += spacing)
            sum += ((volatile unsigned char *)buf)[p * PAGE];
    return (void *)(uintptr_t)sum;
}

/* The project's strict parser, and a lower bound. */
static int parse(const char *s, long lo, long *out)
{
    long v;
    if (!pd_parse_long(s, &v) || v < lo)
        return -1;
    *out = v;
    return 0;
}

int main(int argc, char **argv)
{
    long mib = 256, sp = 512, rounds = 20, threads = 2, presplit = 0;
    if (argc > 6 || (argc > 1 && parse(argv[1], 1, &mib)) || (argc > 2 && parse(argv[2], 2, &sp)) ||
        (argc > 3 && parse(argv[3], 1, &rounds)) || (argc > 4 && parse(argv[4], 1, &threads)) || threads > 64 ||
        (argc > 5 && parse(argv[5], 0, &presplit)) || presplit > 1) {
        fprintf(stderr, "usage: %s [MIB >= 1] [SPACING >= 2 pages] [ROUNDS >= 1] [THREADS 1..64] [PRESPLIT 0|1]\n",
                argv[0]);
        return 2;
    }
    size_t bytes = (size_t)mib << 20;
    npages = bytes / PAGE;
    spacing = (size_t)sp;
    size_t nsamples = (npages + spacing - 1) / spacing;
    buf = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    double *arm = malloc((size_t)rounds * sizeof *arm), *disarm = malloc((size_t)rounds * sizeof *disarm);
    if (buf == MAP_FAILED || !arm || !disarm) {
        perror("protect_cost");
        return 1;
    }
    /* 4 KiB pages, as the sampler's splits leave them (a huge page would
     * be split by the first call and that cost charged to it) */
    madvise(buf, bytes, MADV_NOHUGEPAGE);
    memset(buf, 1, bytes);
    for (size_t p = 0; presplit && p < npages; p += spacing)
        if (madvise(buf + p * PAGE, PAGE, MADV_HUGEPAGE) != 0) {
            perror("madvise");
            return 1;
        }
    pthread_t tid[64];
    int started = 0;
    for (long t = 1; t < threads; t++)
        if (pthread_create(&tid[started], NULL, reader, (void *)(uintptr_t)t) == 0)
            started++;
    for (long r = 0; r < rounds; r++) {
        double t0 = pd_monotonic();
        for (size_t p = 0; p < npages; p += spacing)
            if (mprotect(buf + p * PAGE, PAGE, PROT_NONE) != 0) {
                perror("mprotect");
                return 1;
            }
        double t1 = pd_monotonic();
        for (size_t p = 0; presplit && p < npages; p += spacing)
            if (mprotect(buf + p * PAGE, PAGE, PROT_READ | PROT_WRITE) != 0) {
                perror("mprotect");
                return 1;
            }
        if (!presplit && mprotect(buf, bytes, PROT_READ | PROT_WRITE) != 0) {
            perror("mprotect");
            return 1;
        }
        double t2 = pd_monotonic();
        arm[r] = (t1 - t0) / (double)nsamples;
        disarm[r] = (t2 - t1) / (double)nsamples;
    }
    atomic_store(&stop, 1);
    for (int t = 0; t < started; t++)
        pthread_join(tid[t], NULL);
    printf("protect_cost: %ld MiB, %zu samples (every %zu pages), %ld rounds, %d reading threads besides, %s\n", mib,
           nsamples, spacing, rounds, started,
           presplit ? "each sample its own mapping beforehand" : "samples split from their mapping by the arming");
    double arm_s = bench_median(arm, (size_t)rounds), disarm_s = bench_median(disarm, (size_t)rounds);
    printf("  arm:    %.2f us a call (one page to PROT_NONE), median over rounds\n", arm_s * 1e6);
    printf(presplit ? "  disarm: %.2f us a sample (one call a sample back to read-write)\n"
                    : "  disarm: %.2f us a sample (one call over the mapping back to read-write)\n",
           disarm_s * 1e6);
    printf("  a spell arming and disarming %zu samples: %.3f ms\n", nsamples,
           (arm_s + disarm_s) * (double)nsamples * 1e3);
    free(arm);
    free(disarm);
    munmap(buf, bytes);
    return 0;
}
