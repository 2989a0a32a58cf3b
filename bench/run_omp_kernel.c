/* An unmodified OpenMP program for bench/run_omp_overhead.sh (issue #14:
 * `paddiser run` overhead on parallel regions of 50 ms or more). Each round
 * runs two distinct regions over three arrays of MB MiB each: a triad
 * repeated PASSES times (one worksharing loop and its barrier per pass) and
 * a dynamic-schedule reduction (PASSES terms per element). Prints the timed
 * loop's length (regions and whatever runs between them, e.g. sync points),
 * the shortest and the median region length, the loop's CPU time (all
 * threads; steadier than its length on a loaded machine when idle threads
 * sleep: OMP_WAIT_POLICY=passive) and a checksum.
 *   run_omp_kernel [MB [PASSES [ROUNDS]]]     defaults 32 4 10 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

/* CPU seconds of the whole process (all threads), user + system. */
static double cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_sec +
           1e-6 * (double)ru.ru_stime.tv_usec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    long mb = argc > 1 ? atol(argv[1]) : 32;
    int passes = argc > 2 ? atoi(argv[2]) : 4;
    int rounds = argc > 3 ? atoi(argv[3]) : 10;
    if (mb < 1 || passes < 1 || rounds < 1) {
        fprintf(stderr, "usage: %s [MB [PASSES [ROUNDS]]]\n", argv[0]);
        return 2;
    }
    long n = mb * (1L << 20) / (long)sizeof(double);
    double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b), *c = malloc(n * sizeof *c);
    double *region_s = malloc(2 * (size_t)rounds * sizeof *region_s);
    if (!a || !b || !c || !region_s)
        return 1;
#pragma omp parallel for
    for (long i = 0; i < n; i++) {
        a[i] = 0;
        b[i] = (double)(i % 1000);
        c[i] = (double)(i % 7);
    }
    double sum = 0;
    double t0 = omp_get_wtime(), c0 = cpu_s();
    for (int r = 0; r < rounds; r++) {
        double s0 = omp_get_wtime();
#pragma omp parallel
        for (int p = 0; p < passes; p++) {
#pragma omp for
            for (long i = 0; i < n; i++)
                a[i] = b[i] + (0.5 + p) * c[i];
        }
        double s1 = omp_get_wtime();
        double part = 0;
#pragma omp parallel for schedule(dynamic, 65536) reduction(+ : part)
        for (long i = 0; i < n; i++)
            for (int p = 0; p < passes; p++)
                part += a[i] * (b[i] + p) + c[i];
        double s2 = omp_get_wtime();
        sum += part;
        region_s[2 * r] = s1 - s0;
        region_s[2 * r + 1] = s2 - s1;
    }
    double loop_s = omp_get_wtime() - t0, loop_cpu_s = cpu_s() - c0;
    qsort(region_s, 2 * (size_t)rounds, sizeof *region_s, cmp_double);
    printf("loop_s %.6f min_region_ms %.2f median_region_ms %.2f regions %d threads %d cpu_s %.6f checksum %.6e\n",
           loop_s, 1e3 * region_s[0], 1e3 * region_s[rounds], 2 * rounds, omp_get_max_threads(), loop_cpu_s, sum);
    free(a);
    free(b);
    free(c);
    free(region_s);
    return 0;
}
