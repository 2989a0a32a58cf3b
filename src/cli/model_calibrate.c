/* Stencil alpha micro-benchmark. alpha = memory-level line transfers per
 * element access of a 5-point 2-D stencil. Two methods:
 *
 * cache-sim (default): the stencil's address stream runs through an LRU
 *   model of this machine's last-level cache (geometry from sysfs,
 *   /sys/devices/system/cpu/cpu0/cache/index3, or --llc-kib/--ways), and
 *   line fills are counted. Cache, rows and grid are scaled down together by
 *   --scale (same geometry ratios, fewer simulated accesses).
 *
 * timing: without hardware counters, memory time is measured as the
 * difference between a sweep over a big grid (far beyond the caches) and the
 * same number of accesses over a grid that stays in L2 (compute only):
 *   stream sum:   1 access per element, known alpha_stream = E / 64, which
 *                 calibrates the memory time of one line, t_line;
 *   5-point 2-D stencil (rows of 32 KiB, so three rows stay cached):
 *                 5 accesses per point; alpha = mem time per access / t_line.
 * Minimum of --reps runs per kernel; one thread. Hardware prefetching and
 * out-of-order overlap hide most memory time from such scalar loops, so on
 * many machines (and on shared VMs) this gives noise: see docs/model.md. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/model_calibrate.h"
#include "common/cliopt.h"
#include "common/sysroot.h"
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

static int calibrate_timing(const char *outp, long mib, long reps)
{
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
    pd_str_append(&out, "elem_size,alpha,alpha_stream,stream_ns_per_line,stencil_mem_ns_per_access,method\n");
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
        pd_str_printf(&out, "%zu,%.6g,%.6g,%.4g,%.4g,timing mib=%ld\n", E, alpha, a_stream, t_line * 1e9,
                      mem_per_access * 1e9, (long)(big >> 20));
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

/* ---- trace-driven LLC model ------------------------------------------------ */

typedef struct {
    uint64_t *tag; /* [sets * ways], UINT64_MAX = empty */
    uint32_t *age; /* [sets * ways], larger = more recent */
    size_t sets;
    int ways;
    uint32_t clock;
    uint64_t fills;
} lru_cache;

static void cache_touch(lru_cache *c, uint64_t line)
{
    size_t set = (size_t)(line % c->sets);
    uint64_t *t = c->tag + set * c->ways;
    uint32_t *a = c->age + set * c->ways;
    int victim = 0;
    c->clock++;
    for (int w = 0; w < c->ways; w++) {
        if (t[w] == line) {
            a[w] = c->clock;
            return;
        }
        if (a[w] < a[victim])
            victim = w;
    }
    t[victim] = line;
    a[victim] = c->clock;
    c->fills++;
}

double pd_alpha_cache_sim(size_t elem, size_t row_bytes, size_t grid_bytes, size_t cache_bytes, int ways,
                          int stream)
{
    if (elem == 0 || row_bytes < 3 * elem || grid_bytes < 3 * row_bytes || ways < 1 ||
        cache_bytes < (size_t)ways * PD_CACHE_LINE)
        return -1;
    lru_cache c = {.sets = cache_bytes / ((size_t)ways * PD_CACHE_LINE), .ways = ways};
    c.tag = malloc(c.sets * ways * sizeof *c.tag);
    c.age = calloc(c.sets * ways, sizeof *c.age);
    if (!c.tag || !c.age) {
        free(c.tag);
        free(c.age);
        return -1;
    }
    memset(c.tag, 0xff, c.sets * ways * sizeof *c.tag);
    size_t w = row_bytes / elem, rows = grid_bytes / row_bytes;
    double accesses = 0;
#define LINE(i, j) (((uint64_t)((i) * w + (j)) * elem) / PD_CACHE_LINE)
    if (stream) {
        for (size_t k = 0; k < rows * w; k++) {
            uint64_t first = (uint64_t)k * elem / PD_CACHE_LINE, last = ((uint64_t)k * elem + elem - 1) / PD_CACHE_LINE;
            for (uint64_t l = first; l <= last; l++)
                cache_touch(&c, l);
        }
        accesses = (double)(rows * w);
    } else {
        for (size_t i = 1; i + 1 < rows; i++)
            for (size_t j = 1; j + 1 < w; j++) {
                /* element-sized accesses: an element spans elem / 64 lines when > 64 B */
                size_t idx[5][2] = {{i - 1, j}, {i + 1, j}, {i, j - 1}, {i, j + 1}, {i, j}};
                for (int p = 0; p < 5; p++) {
                    uint64_t first = LINE(idx[p][0], idx[p][1]);
                    uint64_t last = (((uint64_t)(idx[p][0] * w + idx[p][1]) * elem) + elem - 1) / PD_CACHE_LINE;
                    for (uint64_t l = first; l <= last; l++)
                        cache_touch(&c, l);
                }
            }
        accesses = 5.0 * (double)(rows - 2) * (double)(w - 2);
    }
#undef LINE
    free(c.tag);
    free(c.age);
    return (double)c.fills / accesses;
}

#define CMD "paddiser model calibrate-stencil"
#define CAL_MAX (1L << 22) /* the largest value of the integer options */

static void calibrate_usage(FILE *out)
{
    fprintf(out, "usage: paddiser model calibrate-stencil -o OUT.csv [options]\n"
                 "Measures the stencil alpha table (line transfers per element access of a 5-point\n"
                 "2-D stencil, elements of 1 to 64 bytes; models/stencil_alpha.csv).\n"
                 "options:\n"
                 "  -o, --output OUT.csv   where to write the table\n"
                 "      --method M         cache-sim (default: an LRU model of the last-level cache)\n"
                 "                         or timing (big vs cached sweeps, noisy)\n"
                 "      --llc-kib N        cache-sim: last-level cache size (default: from sysfs)\n"
                 "      --ways N           cache-sim: its associativity (default: from sysfs)\n"
                 "      --row-kib N        cache-sim: stencil row size (default 256)\n"
                 "      --scale N          cache-sim: simulate cache, rows and grid at 1/N (default 16)\n"
                 "      --mib N            timing: size of the big grid (default 256)\n"
                 "      --reps N           timing: runs per kernel, the minimum is kept (default 3)\n"
                 "  -h, --help             this help\n"
                 "Integer values are in 1..%ld.\n",
                 CAL_MAX);
}

int cmd_model_calibrate_stencil(int argc, char **argv)
{
    const char *outp = NULL, *method = "cache-sim";
    long mib = 256, reps = 3, row_kib = 256, llc_kib = 0, ways = 0, scale = 16;
    enum { OPT_METHOD = 1000, OPT_MIB, OPT_REPS, OPT_ROW_KIB, OPT_LLC_KIB, OPT_WAYS, OPT_SCALE };
    static const struct option longopts[] = {
        {"output", required_argument, NULL, 'o'},        {"method", required_argument, NULL, OPT_METHOD},
        {"mib", required_argument, NULL, OPT_MIB},       {"reps", required_argument, NULL, OPT_REPS},
        {"row-kib", required_argument, NULL, OPT_ROW_KIB}, {"llc-kib", required_argument, NULL, OPT_LLC_KIB},
        {"ways", required_argument, NULL, OPT_WAYS},     {"scale", required_argument, NULL, OPT_SCALE},
        {"help", no_argument, NULL, 'h'},                {NULL, 0, NULL, 0},
    };
    int c;
    optind = 0;
    while ((c = pd_opt_next(CMD, argc, argv, "o:h", longopts)) != -1) {
        long *dst = c == OPT_MIB       ? &mib
                    : c == OPT_REPS    ? &reps
                    : c == OPT_ROW_KIB ? &row_kib
                    : c == OPT_LLC_KIB ? &llc_kib
                    : c == OPT_WAYS    ? &ways
                    : c == OPT_SCALE   ? &scale
                                       : NULL;
        if (dst) {
            if (!pd_opt_long_of(CMD, longopts, c, optarg, 1, CAL_MAX, dst))
                return 2;
        } else if (c == 'o') {
            outp = optarg;
        } else if (c == OPT_METHOD) {
            method = optarg;
            if (strcmp(method, "cache-sim") && strcmp(method, "timing")) {
                fprintf(stderr, CMD ": --method: '%s' is not cache-sim or timing\n", method);
                return 2;
            }
        } else if (c == 'h') {
            calibrate_usage(stdout);
            return 0;
        } else {
            return 2;
        }
    }
    if (optind < argc)
        return pd_opt_error(CMD, "unexpected argument '%s'", argv[optind]);
    if (!outp)
        return pd_opt_error(CMD, "need -o OUT.csv");
    if (!strcmp(method, "timing"))
        return calibrate_timing(outp, mib, reps);
    size_t llc = llc_kib ? (size_t)llc_kib << 10 : pd_sys_size("devices/system/cpu/cpu0/cache/index3/size");
    long w = ways ? ways : (long)pd_sys_size("devices/system/cpu/cpu0/cache/index3/ways_of_associativity");
    if (!llc || w < 1) {
        fprintf(stderr, "paddiser model calibrate-stencil: no last-level cache in sysfs "
                        "(cpu0/cache/index3); give --llc-kib and --ways\n");
        return 2;
    }
    size_t cache = llc / (size_t)scale, row = ((size_t)row_kib << 10) / (size_t)scale, grid = 2 * cache;
    if (grid < 3 * row)
        grid = 3 * row;
    pd_str out = {0};
    pd_str_append(&out, "elem_size,alpha,alpha_stream,method\n");
    printf("LLC %zu KiB, %ld-way; 5-point stencil rows of %ld KiB; simulated at 1/%ld scale\n", llc >> 10, w,
           row_kib, scale);
    printf("elem  alpha(stencil)  alpha(stream, check)\n");
    int status = 0;
    for (size_t E = 1; E <= 64; E *= 2) {
        double a = pd_alpha_cache_sim(E, row, grid, cache, (int)w, 0);
        double s = pd_alpha_cache_sim(E, row, grid, cache, (int)w, 1);
        if (a < 0 || s < 0) {
            fprintf(stderr, "paddiser model calibrate-stencil: bad geometry (rows %zu B, cache %zu B) or no memory\n",
                    row, cache);
            status = 2;
            break;
        }
        printf("%4zu  %14.6f  %14.6f\n", E, a, s);
        pd_str_printf(&out, "%zu,%.6g,%.6g,cache-sim llc=%zuK ways=%ld row=%ldK scale=1/%ld\n", E, a, s,
                      llc >> 10, w, row_kib, scale);
    }
    if (status == 0 && (out.oom || pd_write_file_atomic(outp, out.data, out.len) != 0)) {
        perror(outp);
        status = 1;
    }
    if (status == 0)
        printf("table written to %s\n", outp);
    pd_str_free(&out);
    return status;
}
