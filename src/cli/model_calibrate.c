/* Stencil alpha micro-benchmark. alpha = memory-level line transfers per
 * element access. Without hardware counters, memory time is measured as the
 * difference between a sweep over a big grid (far beyond the caches) and the
 * same number of accesses over a grid that stays in L2 (compute only):
 *   stream sum:   1 access per element, known alpha_stream = E / 64, which
 *                 calibrates the memory time of one line, t_line;
 *   5-point 2-D stencil (rows of 32 KiB, so three rows stay cached):
 *                 5 accesses per point; alpha = mem time per access / t_line.
 * Minimum of --reps runs per kernel; one thread. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/model_calibrate.h"
#include "common/util.h"
#include "lib/estimate.h"

#define ROW_BYTES (32 * 1024)
#define SMALL_ROWS 4

static volatile uint64_t sink; /* keeps the sums alive */

#define LANES(E) ((E) < 8 ? 1 : (E) / 8)
/* One kernel pair per element type T of E bytes (lanes of 8 B above 8 B). */
#define KERNELS(NAME, T, E)                                                                        \
    typedef struct { T v[LANES(E)]; } NAME##_elem;                                                 \
    static uint64_t NAME##_load(const NAME##_elem *p)                                              \
    {                                                                                              \
        uint64_t s = 0;                                                                            \
        for (int l = 0; l < LANES(E); l++)                                                         \
            s += p->v[l];                                                                          \
        return s;                                                                                  \
    }                                                                                              \
    static double NAME##_stream(const void *buf, size_t nelem, int sweeps)                         \
    {                                                                                              \
        const NAME##_elem *a = buf;                                                                \
        double t0 = pd_monotonic();                                                                \
        uint64_t s = 0;                                                                            \
        for (int k = 0; k < sweeps; k++)                                                           \
            for (size_t i = 0; i < nelem; i++)                                                     \
                s += NAME##_load(&a[i]);                                                           \
        sink += s;                                                                                 \
        return pd_monotonic() - t0;                                                                \
    }                                                                                              \
    static double NAME##_stencil(const void *buf, size_t rows, size_t w, int sweeps)               \
    {                                                                                              \
        const NAME##_elem *a = buf;                                                                \
        double t0 = pd_monotonic();                                                                \
        uint64_t s = 0;                                                                            \
        for (int k = 0; k < sweeps; k++)                                                           \
            for (size_t i = 1; i + 1 < rows; i++)                                                  \
                for (size_t j = 1; j + 1 < w; j++)                                                 \
                    s += NAME##_load(&a[(i - 1) * w + j]) + NAME##_load(&a[(i + 1) * w + j]) +     \
                         NAME##_load(&a[i * w + j - 1]) + NAME##_load(&a[i * w + j + 1]) +         \
                         NAME##_load(&a[i * w + j]);                                               \
        sink += s;                                                                                 \
        return pd_monotonic() - t0;                                                                \
    }

KERNELS(e1, uint8_t, 1)
KERNELS(e2, uint16_t, 2)
KERNELS(e4, uint32_t, 4)
KERNELS(e8, uint64_t, 8)
KERNELS(e16, uint64_t, 16)
KERNELS(e32, uint64_t, 32)
KERNELS(e64, uint64_t, 64)

typedef struct {
    size_t elem;
    double (*stream)(const void *, size_t, int);
    double (*stencil)(const void *, size_t, size_t, int);
} kernel_set;

static const kernel_set kernels[] = {
    {1, e1_stream, e1_stencil},    {2, e2_stream, e2_stencil},    {4, e4_stream, e4_stencil},
    {8, e8_stream, e8_stencil},    {16, e16_stream, e16_stencil}, {32, e32_stream, e32_stencil},
    {64, e64_stream, e64_stencil},
};

static double min_of(double a, double b) { return a < b ? a : b; }

int cmd_model_calibrate_stencil(int argc, char **argv)
{
    const char *outp = NULL;
    long mib = 256, reps = 3;
    for (int i = 1; i < argc; i++) {
        long *dst = !strcmp(argv[i], "--mib") ? &mib : !strcmp(argv[i], "--reps") ? &reps : NULL;
        if ((!strcmp(argv[i], "-o") || dst) && i + 1 >= argc) {
            fprintf(stderr, "paddiser model calibrate-stencil: %s needs a value\n", argv[i]);
            return 2;
        }
        if (!strcmp(argv[i], "-o"))
            outp = argv[++i];
        else if (dst) {
            if (!pd_parse_long(argv[++i], dst) || *dst < 1 || *dst > 65536) {
                fprintf(stderr, "paddiser model calibrate-stencil: %s: '%s' is not an integer in 1..65536\n",
                        argv[i - 1], argv[i]);
                return 2;
            }
        } else {
            fprintf(stderr, "paddiser model calibrate-stencil: unknown argument '%s'\n", argv[i]);
            return 2;
        }
    }
    if (!outp) {
        fprintf(stderr, "paddiser model calibrate-stencil: need -o OUT.csv\n");
        return 2;
    }
    size_t big = (size_t)mib << 20, small = (size_t)SMALL_ROWS * ROW_BYTES;
    unsigned char *buf = malloc(big), *sbuf = malloc(small);
    if (!buf || !sbuf) {
        fprintf(stderr, "paddiser model calibrate-stencil: cannot allocate %ld MiB\n", mib);
        free(buf);
        free(sbuf);
        return 1;
    }
    for (size_t i = 0; i < big; i++)
        buf[i] = (unsigned char)(i * 131);
    for (size_t i = 0; i < small; i++)
        sbuf[i] = (unsigned char)(i * 7);
    pd_str out = {0};
    pd_str_append(&out, "elem_size,alpha,alpha_stream,stream_ns_per_line,stencil_mem_ns_per_access\n");
    printf("elem  alpha(stencil)  alpha(stream)  t_line(ns)\n");
    for (size_t k = 0; k < PD_ARRAY_LEN(kernels); k++) {
        const kernel_set *ks = &kernels[k];
        size_t E = ks->elem, w = ROW_BYTES / E, rows = big / ROW_BYTES;
        size_t n_big = big / E, n_small = small / E;
        int sweeps_small = (int)(n_big / n_small);
        double ts = INFINITY, tsc = INFINITY, tst = INFINITY, tstc = INFINITY;
        for (long r = 0; r < reps; r++) {
            ts = min_of(ts, ks->stream(buf, n_big, 1));
            tsc = min_of(tsc, ks->stream(sbuf, n_small, sweeps_small) * (double)n_big /
                                  ((double)n_small * sweeps_small));
            tst = min_of(tst, ks->stencil(buf, rows, w, 1));
            double pts_small = (double)(SMALL_ROWS - 2) * (double)(w - 2);
            double pts_big = (double)(rows - 2) * (double)(w - 2);
            int sw = (int)ceil(pts_big / pts_small);
            tstc = min_of(tstc, ks->stencil(sbuf, SMALL_ROWS, w, sw) * pts_big / (pts_small * sw));
        }
        double a_stream = pd_alpha_stream_stride(E, 1);
        double lines = (double)n_big * a_stream;
        double t_line = (ts - tsc) / lines;
        double accesses = 5.0 * (double)(rows - 2) * (double)(w - 2);
        double mem_per_access = (tst - tstc) / accesses;
        double alpha = t_line > 0 ? mem_per_access / t_line : NAN;
        /* Timing noise can push the difference below zero: floor at a line
         * per 5 * (64 / E) accesses, a perfectly cached stencil. */
        double floor_alpha = a_stream / 5;
        if (!(alpha >= floor_alpha))
            alpha = floor_alpha;
        printf("%4zu  %14.4f  %13.4f  %10.2f\n", E, alpha, a_stream, t_line * 1e9);
        pd_str_printf(&out, "%zu,%.6g,%.6g,%.4g,%.4g\n", E, alpha, a_stream, t_line * 1e9,
                      mem_per_access * 1e9);
    }
    free(buf);
    free(sbuf);
    int rc = out.oom ? -1 : pd_write_file_atomic(outp, out.data, out.len);
    pd_str_free(&out);
    if (rc != 0) {
        perror(outp);
        return 1;
    }
    printf("table written to %s\n", outp);
    return 0;
}
