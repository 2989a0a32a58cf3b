/* STREAM-style triad a[i] = b[i] + s * c[i] with OpenMP: the kernel of the
 * paddiser bench demo. Threads come from OMP_NUM_THREADS.
 *   membw-triad -n ELEMENTS [-r REPEATS] [-o OUT.json]
 * Writes {"elements":..,"threads":..,"best_time_s":..,"bandwidth_mbs":..}
 * (bandwidth of the best repeat, 3 arrays x 8 bytes per element, MiB/s) to
 * OUT.json, or to stdout. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    long n = 0, repeats = 10;
    const char *out = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-n") && i + 1 < argc)
            n = strtol(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "-r") && i + 1 < argc)
            repeats = strtol(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "-o") && i + 1 < argc)
            out = argv[++i];
        else {
            fprintf(stderr, "usage: %s -n ELEMENTS [-r REPEATS] [-o OUT.json]\n", argv[0]);
            return 2;
        }
    }
    if (n < 1 || repeats < 1) {
        fprintf(stderr, "membw-triad: -n and -r must be positive\n");
        return 2;
    }
    double *a = malloc((size_t)n * sizeof *a), *b = malloc((size_t)n * sizeof *b), *c = malloc((size_t)n * sizeof *c);
    if (!a || !b || !c) {
        fprintf(stderr, "membw-triad: cannot allocate 3 x %ld doubles\n", n);
        return 1;
    }
#pragma omp parallel for schedule(static)
    for (long i = 0; i < n; i++) { /* first touch by the computing threads */
        a[i] = 0.0;
        b[i] = 1.0;
        c[i] = 2.0;
    }
    const double s = 3.0;
    double best = 1e30;
    for (long r = 0; r < repeats; r++) {
        double t0 = omp_get_wtime();
#pragma omp parallel for schedule(static)
        for (long i = 0; i < n; i++)
            a[i] = b[i] + s * c[i];
        double dt = omp_get_wtime() - t0;
        if (dt < best)
            best = dt;
    }
    /* Check the result so the loop cannot be optimised away. */
    if (a[n / 2] != 7.0) {
        fprintf(stderr, "membw-triad: wrong result %f\n", a[n / 2]);
        return 1;
    }
    double mibs = 3.0 * 8.0 * (double)n / (1024.0 * 1024.0) / best;
    FILE *f = out ? fopen(out, "w") : stdout;
    if (!f) {
        perror(out);
        return 1;
    }
    fprintf(f, "{\"elements\": %ld, \"threads\": %d, \"best_time_s\": %.9f, \"bandwidth_mbs\": %.1f}\n", n,
            omp_get_max_threads(), best, mibs);
    if (out)
        fclose(f);
    printf("triad n=%ld threads=%d best=%.6fs bandwidth=%.1f MiB/s\n", n, omp_get_max_threads(), best, mibs);
    free(a);
    free(b);
    free(c);
    return 0;
}
