/* Measures what page sampling costs an application: the same sweeps over a
 * registered buffer with sampling off and on, for several re-arm periods.
 * Prints one line per setting (run by `make bench-runtime-sampler`).
 *
 *   sampler_overhead [MB] [sweeps] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "paddiser.h"

#define MB (1024ul * 1024ul)

/* Process CPU time (all threads, user + system: the handler, mprotect and
 * the re-arm thread included); less disturbed by other load than wall time. */
static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* per_sweep: one task instance per sweep (arming/disarming cost per
 * instance), else one instance for all sweeps (periodic re-arm cost). */
static int per_sweep = 1;

static double run(double *a, size_t n, int sweeps, int sampling, const char *period, unsigned long long *faults)
{
    setenv("PADDISER_SAMPLE_PERIOD_MS", period, 1);
    pd_options o;
    pd_options_default(&o);
    o.backend = PD_BACKEND_NONE;
    o.sampling = sampling;
    if (pd_init(&o) != PD_OK || pd_object_register("a", a, n * sizeof *a, NULL) < 0)
        return -1;
    double t0 = now();
    if (!per_sweep)
        pd_task_begin(0);
    for (int s = 0; s < sweeps; s++) {
        if (per_sweep)
            pd_task_begin(0);
        for (size_t i = 0; i < n; i++)
            a[i] = a[i] * 0.999 + 1.0;
        if (per_sweep)
            pd_task_end(0);
    }
    if (!per_sweep)
        pd_task_end(0);
    double t = now() - t0;
    pd_sync_point();
    pd_profile_info info;
    pd_profile_info_get(&info);
    *faults = info.sampled_faults;
    pd_finalize();
    return t;
}

int main(int argc, char **argv)
{
    size_t mb = argc > 1 ? (size_t)atol(argv[1]) : 256;
    int sweeps = argc > 2 ? atoi(argv[2]) : 10;
    if (mb == 0 || sweeps < 1) {
        fprintf(stderr, "usage: sampler_overhead [MB>=1] [sweeps>=1]\n");
        return 2;
    }
    setenv("PADDISER_QUIET", "1", 1);
    size_t n = mb * MB / sizeof(double);
    double *a = aligned_alloc(2 * MB, n * sizeof *a);
    if (!a)
        return 1;
    memset(a, 0, n * sizeof *a);
    unsigned long long faults = 0;
    run(a, n, 1, 0, "10", &faults); /* warm up: first touch, page tables */
  for (per_sweep = 1; per_sweep >= 0; per_sweep--) {
    printf("%s\n", per_sweep ? "== one task instance per sweep" : "== one task instance for all sweeps");
    /* Best of 5 for every setting: the machine is shared. */
    double base = 1e30;
    for (int r = 0; r < 5; r++) {
        double t = run(a, n, sweeps, 0, "10", &faults);
        base = t < base ? t : base;
    }
    printf("buffer %zu MB, %d sweeps, best of 5, process CPU time: sampling off %.4f s\n", mb, sweeps, base);
    const char *periods[] = {"100", "10", "1", "0"};
    for (size_t i = 0; i < sizeof periods / sizeof *periods; i++) {
        double best = 1e30;
        for (int r = 0; r < 5; r++) {
            double t = run(a, n, sweeps, 1, periods[i], &faults);
            best = t < best ? t : best;
        }
        printf("sampling on, re-arm period %s ms%s: %.4f s (%+.2f%%), %llu sampled faults, %.2f us per fault\n",
               periods[i], periods[i][0] == '0' ? " (task boundaries only)" : "", best,
               100.0 * (best - base) / base, faults, faults ? (best - base) * 1e6 / (double)faults : 0.0);
    }
  }
    free(a);
    return 0;
}
