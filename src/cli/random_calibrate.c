/* `paddiser model calibrate-random`: how the cost of a random access grows
 * as the randomly read data outgrows the last-level cache (the table behind
 * the runtime's random-access reach, src/lib/cache_reach.h; docs/model.md).
 *
 * The kernel is the common random pattern: every thread streams its own
 * index and value arrays (as a CSR matrix-vector product streams columns
 * and values) and gathers from one shared array x of S bytes at random. Its
 * time per gathered element, at sizes S from 1/16 to 16 times the LLC (x
 * written first, so its pages exist), the fastest of --reps runs taken in
 * turn over the sizes; each row's
 * cost is that time over the largest size's, where nearly every gather
 * misses every cache. The streams compete for the cache as they do in a real
 * program, so the cost turns up well before S reaches the LLC's size. */
#include "cli/random_calibrate.h"

#include <getopt.h>
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/cliopt.h"
#include "common/util.h"
#include "lib/cache_reach.h"

#define CMD "paddiser model calibrate-random"
#define RC_MAX (1L << 22)
/* sizes 2^(k/2) times the LLC, k = RC_K_MIN .. RC_K_MAX: 1/16 .. 16 */
#define RC_K_MIN (-8)
#define RC_K_MAX 8

static void usage(FILE *out)
{
    fprintf(out, "usage: paddiser model calibrate-random -o OUT.csv [options]\n"
                 "Measures the random-access cost table (time of a random gather against the\n"
                 "size of the gathered array, 1/16 to 16 times the last-level cache;\n"
                 "models/random_cost.csv): the runtime reads it through PADDISER_RANDOM_TABLE.\n"
                 "options:\n"
                 "  -o, --output OUT.csv   where to write the table\n"
                 "      --llc-kib N        last-level cache size (default: PADDISER_LLC_BYTES, else sysfs)\n"
                 "      --max-mib N        largest gathered array (default: 16 times the LLC,\n"
                 "                         at most a quarter of the memory)\n"
                 "      --accesses N       gathers per run, in thousands (default 4096)\n"
                 "      --reps N           runs of every size, in turn; the fastest is kept (default 5)\n"
                 "      --threads N        threads gathering at once (default: OpenMP's)\n"
                 "  -h, --help             this help\n"
                 "Integer values are in 1..%ld.\n",
                 RC_MAX);
}

/* Seconds per gathered element (per thread), one run, with x of n doubles:
 * the index streams hold raw 32-bit random numbers, scaled to 0..n-1 by a
 * multiply and a shift, so one set of streams serves every size. */
static double gather_once(const double *x, size_t n, uint32_t *const *idx, double *const *val, size_t per,
                          int threads, double *sink)
{
    double t0 = pd_monotonic(), total = 0;
#pragma omp parallel num_threads(threads) reduction(+ : total)
    {
        int p = omp_get_thread_num();
        const uint32_t *ix = idx[p];
        const double *v = val[p];
        double acc = 0;
        for (size_t i = 0; i < per; i++)
            acc += v[i] * x[(uint64_t)ix[i] * n >> 32];
        total += acc;
    }
    double t = pd_monotonic() - t0;
    *sink += total;
    return t / (double)per;
}

int cmd_model_calibrate_random(int argc, char **argv)
{
    const char *outp = NULL;
    long llc_kib = 0, max_mib = 0, kacc = 4096, reps = 5, threads = 0;
    enum { OPT_LLC = 1000, OPT_MAX, OPT_ACC, OPT_REPS, OPT_THREADS };
    static const struct option longopts[] = {
        {"output", required_argument, NULL, 'o'},      {"llc-kib", required_argument, NULL, OPT_LLC},
        {"max-mib", required_argument, NULL, OPT_MAX}, {"accesses", required_argument, NULL, OPT_ACC},
        {"reps", required_argument, NULL, OPT_REPS},   {"threads", required_argument, NULL, OPT_THREADS},
        {"help", no_argument, NULL, 'h'},              {NULL, 0, NULL, 0},
    };
    int c;
    optind = 0;
    while ((c = pd_opt_next(CMD, argc, argv, "o:h", longopts)) != -1) {
        long *dst = c == OPT_LLC       ? &llc_kib
                    : c == OPT_MAX     ? &max_mib
                    : c == OPT_ACC     ? &kacc
                    : c == OPT_REPS    ? &reps
                    : c == OPT_THREADS ? &threads
                                       : NULL;
        if (dst) {
            if (!pd_opt_long_of(CMD, longopts, c, optarg, 1, RC_MAX, dst))
                return 2;
        } else if (c == 'o') {
            outp = optarg;
        } else if (c == 'h') {
            usage(stdout);
            return 0;
        } else {
            return 2;
        }
    }
    if (optind < argc)
        return pd_opt_error(CMD, "unexpected argument '%s'", argv[optind]);
    if (!outp)
        return pd_opt_error(CMD, "need -o OUT.csv");
    size_t llc = llc_kib ? (size_t)llc_kib << 10 : pd_random_llc_bytes();
    if (!llc) {
        fprintf(stderr, CMD ": no cache size in sysfs (cpu0/cache/index*/size); give --llc-kib\n");
        return 2;
    }
    size_t max_bytes = max_mib ? (size_t)max_mib << 20 : 16 * llc;
    long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
    if (!max_mib && pages > 0 && psz > 0 && max_bytes > (size_t)pages * (size_t)psz / 4)
        max_bytes = (size_t)pages * (size_t)psz / 4;
    int nt = threads ? (int)threads : omp_get_max_threads();
    size_t per = (size_t)kacc * 1000 / (size_t)nt;
    if (per < 1024)
        per = 1024;
    /* the sizes: every 2^(k/2) LLC that fits under max_bytes (x of at least 64 elements) */
    size_t sizes[RC_K_MAX - RC_K_MIN + 1];
    int ns = 0;
    for (int k = RC_K_MIN; k <= RC_K_MAX; k++) {
        size_t s = (size_t)((double)llc * pow(2.0, k / 2.0)) / 8 * 8;
        if (s <= max_bytes && s >= 64 * sizeof(double) && s / sizeof(double) <= UINT32_MAX)
            sizes[ns++] = s;
    }
    if (ns < 2) {
        fprintf(stderr, CMD ": --max-mib %zu MiB leaves fewer than two sizes between 1/16 and 16 times the LLC (%zu KiB)\n",
                max_bytes >> 20, llc >> 10);
        return 2;
    }
    uint32_t **idx = calloc((size_t)nt, sizeof *idx);
    double **val = calloc((size_t)nt, sizeof *val);
    double *x = malloc(sizes[ns - 1]);
    int ok = idx && val && x;
    for (int p = 0; ok && p < nt; p++) {
        idx[p] = malloc(per * sizeof **idx);
        val[p] = malloc(per * sizeof **val);
        ok = idx[p] && val[p];
        uint64_t s = 0x9E3779B97F4A7C15ull ^ (uint64_t)(p + 1) * 0xBF58476D1CE4E5B9ull;
        for (size_t i = 0; ok && i < per; i++) {
            val[p][i] = 1.0;
            idx[p][i] = (uint32_t)(pd_splitmix64(&s) >> 32);
        }
    }
    int status = 0;
    if (!ok) {
        fprintf(stderr, CMD ": cannot allocate %zu MiB for the gathered array and %zu KiB of streams a thread\n",
                sizes[ns - 1] >> 20, per * 12 >> 10);
        status = 1;
    }
    double ns_at[RC_K_MAX - RC_K_MIN + 1], sink = 0;
    if (ok) {
        size_t n_all = sizes[ns - 1] / sizeof(double);
        for (size_t i = 0; i < n_all; i++)
            x[i] = (double)(i & 1023);
        printf("LLC %zu KiB; %d threads gathering %zu elements each, fastest of %ld runs\n", llc >> 10, nt, per,
               reps);
        /* the sizes in turn, every run: a spell of noise from elsewhere on
         * the machine then slows one run of every size, not every run of one */
        for (int i = 0; i < ns; i++)
            ns_at[i] = INFINITY;
        for (long r = 0; r < reps; r++)
            for (int i = 0; i < ns; i++)
                ns_at[i] = fmin(ns_at[i], 1e9 * gather_once(x, sizes[i] / sizeof(double), idx, val, per, nt, &sink));
        printf("%12s %10s %12s\n", "x (KiB)", "x / LLC", "ns / gather");
        for (int i = 0; i < ns; i++)
            printf("%12zu %10.4f %12.3f\n", sizes[i] >> 10, (double)sizes[i] / (double)llc, ns_at[i]);
    }
    pd_str out = {0};
    if (ok) {
        pd_str_append(&out, "bytes_over_llc,cost,ns_per_gather,method\n");
        for (int i = 0; i < ns; i++)
            pd_str_printf(&out, "%.6g,%.6g,%.4g,gather llc=%zuK threads=%d\n", (double)sizes[i] / (double)llc,
                          ns_at[i] / ns_at[ns - 1], ns_at[i], llc >> 10, nt);
        /* the table must load as the runtime reads it */
        char err[256];
        pd_random_table tab;
        if (!out.oom && pd_random_table_parse_text(out.data, &tab, err, sizeof err) != 0) {
            fprintf(stderr, CMD ": the measured table does not load (%s): times too noisy, run it again\n", err);
            status = 1;
        } else if (out.oom || pd_write_file_atomic(outp, out.data, out.len) != 0) {
            perror(outp);
            status = 1;
        } else {
            printf("table written to %s (checksum %g)\n", outp, sink);
        }
    }
    pd_str_free(&out);
    for (int p = 0; idx && val && p < nt; p++) {
        free(idx[p]);
        free(val[p]);
    }
    free(idx);
    free(val);
    free(x);
    return status;
}
