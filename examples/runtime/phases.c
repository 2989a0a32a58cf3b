/* A multi-phase OpenMP program integrated with libpaddiser exactly as
 * docs/runtime.md ("Using it") tells a user to (issue #11 item 9).
 *
 * Per input (a sequence of inputs of different sizes, the last one a
 * revisit of an earlier size), its arrays are allocated and filled, then
 * registered by name with their access hints. Each input runs for several
 * instances; an instance has four barrier-delimited phases, one task per
 * OpenMP thread (pd_task_begin(-1) at the instance's start, pd_task_end(-1)
 * at its end, pd_task_pause(-1) / pd_task_resume(-1) around every barrier
 * between; `omp for nowait` inside each phase):
 *
 *   1. stream triad a = b + 0.5 c            schedule(static)
 *   2. 5-point stencil grid -> grid_out,     thread t does a (t + 1)-weighted
 *      --sweeps times (default 4)            share of the rows: unbalanced
 *   3. CSR SpMV y = A x over an irregular,   schedule(dynamic): which rows a
 *      input-dependent graph (heavy-tailed   thread gets changes from one
 *      row lengths, half of the columns      instance to the next
 *      random): a gather through x
 *   4. reduction of a, grid_out and y        schedule(static)
 *
 * then a sync point. Before the sync point after an input's last instance
 * the next input replaces it: every object is unregistered, its memory
 * freed, the next input's memory allocated and registered again under the
 * same name, which gives the object its id back with its history
 * ("Typed API" in docs/runtime.md; the sync point profiles the instance
 * with the sizes it ran with and plans with the new ones).
 *
 * All values are small integers or halves, so every sum is exact in double
 * whatever the order: the checksums (sums of a, grid_out and y) are the
 * same with and without the runtime and for any thread count, and each is
 * checked against a serial reference computed when the input is built.
 *
 * Per instance it prints one line of key=value pairs: the input, the
 * measured makespan (wall time of the instance's parallel region, and the
 * slowest thread's time between its task begins and ends, which is what the
 * runtime predicts), the makespan pd_plan_query predicted for it (queried
 * after the previous sync point), the bytes the sync point after it moved
 * (pd_profile_info.bytes_moved), the time spent in runtime calls between
 * instances, and the most time a thread spent inside pd_task_begin and
 * pd_task_end (part of the wall time, in no task's time), and whether the
 * sampler armed pages in it (sampled=1; from pd_profile_info's
 * instances_sampled). The last line sums up. --no-runtime makes no runtime
 * call at all (the baseline of the overhead measurement in
 * bench/phases_bench.c).
 *
 *   build/examples/runtime/phases [--mib M] [--scales LIST] [--reps K]
 *       [--threads N] [--passes P] [--degree D] [--sweeps S] [--no-runtime]
 *
 * The backend and the fast capacity come from the environment
 * (PADDISER_BACKEND=sim PADDISER_FAST_CAPACITY=<bytes>), as for any program
 * using pd_options_default. */
#include <getopt.h>
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "paddiser.h"

#define MAX_INPUTS 16
#define MAX_THREADS 256
#define NOBJ 10
#define GRID_COLS 1024
#define PAD 8 /* doubles between two threads' partial sums: no false sharing */
#define MIB (1024.0 * 1024.0)

typedef struct {
    double mib;          /* footprint asked for */
    size_t n;            /* vector length = grid cells = graph rows */
    size_t rows, cols;   /* the grid */
    size_t nnz;
    double *a, *b, *c;   /* triad */
    double *grid, *grid_out;
    uint32_t *rowptr, *col;
    float *val;
    double *x, *y;
    double expect[3];    /* serial reference: sum of a, grid_out, y */
} input_t;

/* Objects in registration order, with their hints. */
static const char *const obj_name[NOBJ] = {"a", "b", "c", "grid", "grid_out", "rowptr", "col", "val", "x", "y"};

static void obj_list(const input_t *in, void *addr[NOBJ], size_t size[NOBJ], pd_access_hint hint[NOBJ])
{
    const pd_access_hint stream8 = {PD_PATTERN_STREAM, sizeof(double), 1, 0};
    const pd_access_hint stream4 = {PD_PATTERN_STREAM, 4, 1, 0};
    const pd_access_hint stencil = {PD_PATTERN_STENCIL, sizeof(double), 1, 0};
    const pd_access_hint random8 = {PD_PATTERN_RANDOM, sizeof(double), 1, 0};
    void *p[NOBJ] = {in->a, in->b, in->c, in->grid, in->grid_out, in->rowptr, in->col, in->val, in->x, in->y};
    size_t s[NOBJ] = {in->n * 8, in->n * 8, in->n * 8, in->n * 8, in->n * 8, (in->n + 1) * 4,
                      in->nnz * 4, in->nnz * 4, in->n * 8, in->n * 8};
    pd_access_hint h[NOBJ] = {stream8, stream8, stream8, stencil, stream8, stream4, stream4, stream4, random8, stream8};
    for (int k = 0; k < NOBJ; k++) {
        addr[k] = p[k];
        size[k] = s[k];
        hint[k] = h[k];
    }
}

static uint64_t splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static void input_free(input_t *in)
{
    free(in->a);
    free(in->b);
    free(in->c);
    free(in->grid);
    free(in->grid_out);
    free(in->rowptr);
    free(in->col);
    free(in->val);
    free(in->x);
    free(in->y);
    memset(in, 0, sizeof *in);
}

/* Builds an input of about `mib` MiB: the sizes, the graph (seeded by the
 * size, so a revisited size is the same input) and the reference sums. */
static int input_build(input_t *in, double mib, int degree)
{
    memset(in, 0, sizeof *in);
    in->mib = mib;
    size_t per_row = 7 * sizeof(double) + 4 + (size_t)degree * 8; /* 7 vectors, rowptr, col + val */
    size_t n = (size_t)(mib * MIB) / per_row;
    in->cols = n / 4 < GRID_COLS ? (n / 4 > 4 ? n / 4 : 4) : GRID_COLS;
    in->rows = n / in->cols;
    if (in->rows < 3) {
        fprintf(stderr, "phases: %.3g MiB is too small an input\n", mib);
        return -1;
    }
    n = in->n = in->rows * in->cols;
    /* Row lengths: 1 + (degree - 1) / (2 sqrt(u)), mean about `degree`,
     * heavy-tailed (a few rows 32x the mean). */
    in->rowptr = malloc((n + 1) * sizeof *in->rowptr);
    if (!in->rowptr)
        return -1;
    uint64_t seed = 0x5eed0000ull ^ (uint64_t)n, s = seed;
    size_t nnz = 0, cap = (size_t)degree * 32;
    in->rowptr[0] = 0;
    for (size_t i = 0; i < n; i++) {
        double u = ((double)(splitmix64(&s) >> 11) + 1.0) / 9007199254740993.0;
        size_t d = 1 + (size_t)((degree - 1) * 0.5 / sqrt(u));
        nnz += d < cap ? d : cap;
        if (nnz > UINT32_MAX) {
            fprintf(stderr, "phases: %.3g MiB has too many edges for 32-bit offsets\n", mib);
            return -1;
        }
        in->rowptr[i + 1] = (uint32_t)nnz;
    }
    in->nnz = nnz;
    in->a = malloc(n * sizeof(double));
    in->b = malloc(n * sizeof(double));
    in->c = malloc(n * sizeof(double));
    in->grid = malloc(n * sizeof(double));
    in->grid_out = malloc(n * sizeof(double));
    in->x = malloc(n * sizeof(double));
    in->y = malloc(n * sizeof(double));
    in->col = malloc(nnz * sizeof *in->col);
    in->val = malloc(nnz * sizeof *in->val);
    if (!in->a || !in->b || !in->c || !in->grid || !in->grid_out || !in->x || !in->y || !in->col || !in->val)
        return -1;
    double sum_a = 0, sum_y = 0, sum_out = 0;
    /* Every array is written here, outputs with -1 (which the instance
     * overwrites): an output left to the first instance (or zeroed, which
     * the compiler may turn into calloc) page-faults in that instance and
     * makes it several times longer than the next ones. */
    for (size_t i = 0; i < n; i++) {
        in->a[i] = -1;
        in->b[i] = (double)(i % 7);
        in->c[i] = (double)(i % 5);
        in->grid[i] = (double)((i * 7) % 13);
        in->grid_out[i] = -1;
        in->x[i] = (double)(i % 16);
        in->y[i] = -1;
        sum_a += in->b[i] + 0.5 * in->c[i];
    }
    /* Columns: half near the row (a band), half anywhere. */
    for (size_t i = 0; i < n; i++) {
        double yi = 0;
        for (uint32_t k = in->rowptr[i]; k < in->rowptr[i + 1]; k++) {
            uint64_t r = splitmix64(&s);
            size_t j = (r & 1) ? (size_t)((r >> 1) % n) : (i + n + (size_t)((r >> 1) % 64) - 32) % n;
            in->col[k] = (uint32_t)j;
            in->val[k] = (float)(1 + k % 3);
            yi += in->val[k] * in->x[j];
        }
        sum_y += yi;
    }
    for (size_t r = 0; r < in->rows; r++)
        for (size_t q = 0; q < in->cols; q++) {
            size_t i = r * in->cols + q;
            const double *g = in->grid;
            int edge = r == 0 || r == in->rows - 1 || q == 0 || q == in->cols - 1;
            sum_out += edge ? g[i] : g[i - in->cols] + g[i + in->cols] + g[i - 1] + g[i + 1] - 4 * g[i];
        }
    in->expect[0] = sum_a;
    in->expect[1] = sum_out;
    in->expect[2] = sum_y;
    return 0;
}

/* Runtime calls, counted when they fail (none should). */
static int use_rt = 1;
static int rt_errors;

/* Each thread's time inside pd_task_begin and pd_task_end this instance:
 * the runtime's cost that no task time holds (arming page samples, a
 * re-plan or a new sample table at an instance's first begin). */
static double call_s[MAX_THREADS * PAD];

/* One task call of this thread, made at time t (the runtime's task -1):
 * its time goes to call_s, a failure to rt_errors. Returns the time after
 * it. */
static double task_call(int (*call)(int), double t)
{
    if (call(-1) != PD_OK) {
#pragma omp atomic
        rt_errors++;
    }
    double after = omp_get_wtime();
    call_s[omp_get_thread_num() * PAD] += after - t;
    return after;
}

static double task_begin(void)
{
    double t = omp_get_wtime();
    return use_rt ? task_call(pd_task_begin, t) : t;
}

/* PHASES_END_AT_BARRIERS=1: the task ends before each barrier inside the
 * instance and begins again after it, as this example did before
 * pd_task_pause (bench comparisons: phases_bench --compare). */
static int end_at_barriers;

/* A barrier between two phases of the instance: the thread's work since
 * *t0 stops there, and its task pauses while it waits (no part of its
 * time; the instance's page sampling goes on) and resumes after it.
 * Returns the work's time; *t0 becomes the time work starts again. */
static double wait_at_barrier(double *t0)
{
    double now = omp_get_wtime(), dt = now - *t0;
    if (use_rt)
        task_call(end_at_barriers ? pd_task_end : pd_task_pause, now);
#pragma omp barrier
    double t = omp_get_wtime();
    *t0 = use_rt ? task_call(end_at_barriers ? pd_task_begin : pd_task_resume, t) : t;
    return dt;
}

static double task_end(double t0)
{
    double now = omp_get_wtime(), dt = now - t0;
    if (use_rt)
        task_call(pd_task_end, now);
    return dt;
}

/* Rows [lo, hi) of thread t of nt, thread t weighted t + 1. */
static void weighted_rows(size_t rows, int t, int nt, size_t *lo, size_t *hi)
{
    double total = nt * (nt + 1) / 2.0, before = t * (t + 1) / 2.0;
    *lo = (size_t)((double)rows * before / total);
    *hi = t == nt - 1 ? rows : (size_t)((double)rows * (before + t + 1) / total);
}

/* One instance; returns the wall time of its parallel region, fills each
 * thread's task time (sum of its begin..end spells) and the three sums. */
static double run_instance(const input_t *in, int nt, int passes, int sweeps, double *task_s, double sums[3])
{
    static double partial[MAX_THREADS * PAD];
    const size_t n = in->n, cols = in->cols, rows = in->rows;
    double *restrict a = in->a, *restrict out = in->grid_out, *restrict y = in->y;
    const double *restrict b = in->b, *restrict c = in->c, *restrict g = in->grid, *restrict x = in->x;
    const uint32_t *restrict rp = in->rowptr, *restrict col = in->col;
    const float *restrict val = in->val;
    double t_start = omp_get_wtime();
#pragma omp parallel num_threads(nt)
    {
        int me = omp_get_thread_num(), nth = omp_get_num_threads();
        double mine = 0;
        call_s[me * PAD] = 0;
        double t0 = task_begin();
        /* 1: stream triad */
        for (int p = 0; p < passes; p++) {
#pragma omp for schedule(static) nowait
            for (size_t i = 0; i < n; i++)
                a[i] = b[i] + 0.5 * c[i];
            mine += wait_at_barrier(&t0);
        }
        /* 2: 5-point stencil, unequal row shares */
        for (int p = 0; p < passes; p++) {
            size_t lo, hi;
            weighted_rows(rows, me, nth, &lo, &hi);
            for (int sweep = 0; sweep < sweeps; sweep++)
            for (size_t r = lo; r < hi; r++) {
                size_t base = r * cols;
                if (r == 0 || r == rows - 1) {
                    memcpy(out + base, g + base, cols * sizeof *out);
                    continue;
                }
                out[base] = g[base];
                for (size_t q = 1; q < cols - 1; q++) {
                    size_t i = base + q;
                    out[i] = g[i - cols] + g[i + cols] + g[i - 1] + g[i + 1] - 4 * g[i];
                }
                out[base + cols - 1] = g[base + cols - 1];
            }
            mine += wait_at_barrier(&t0);
        }
        /* 3: SpMV over the irregular graph, dynamic schedule */
        for (int p = 0; p < passes; p++) {
#pragma omp for schedule(dynamic, 256) nowait
            for (size_t i = 0; i < n; i++) {
                double s = 0;
                for (uint32_t k = rp[i]; k < rp[i + 1]; k++)
                    s += val[k] * x[col[k]];
                y[i] = s;
            }
            mine += wait_at_barrier(&t0);
        }
        /* 4: reduction; per-thread partial sums combined in thread order */
        for (int p = 0; p < passes; p++) {
            double sa = 0, so = 0, sy = 0;
#pragma omp for schedule(static) nowait
            for (size_t i = 0; i < n; i++) {
                sa += a[i];
                so += out[i];
                sy += y[i];
            }
            partial[me * PAD] = sa;
            partial[me * PAD + 1] = so;
            partial[me * PAD + 2] = sy;
            if (p + 1 < passes)
                mine += wait_at_barrier(&t0);
        }
        mine += task_end(t0); /* the region's own barrier follows */
        task_s[me] = mine;
    }
    double wall = omp_get_wtime() - t_start;
    sums[0] = sums[1] = sums[2] = 0;
    for (int t = 0; t < nt; t++)
        for (int k = 0; k < 3; k++)
            sums[k] += partial[t * PAD + k];
    return wall;
}

/* Unregisters every object (before its memory is freed). */
static int unregister_all(const int ids[NOBJ])
{
    for (int k = 0; k < NOBJ; k++) {
        int rc = pd_object_unregister(ids[k]);
        if (rc != PD_OK) {
            fprintf(stderr, "phases: pd_object_unregister(%s): %s\n", obj_name[k], pd_strerror(rc));
            return -1;
        }
    }
    return 0;
}

/* Registers the input's objects under their names; ids[] gets their ids. */
static int register_all(const input_t *in, int ids[NOBJ])
{
    void *addr[NOBJ];
    size_t size[NOBJ];
    pd_access_hint hint[NOBJ];
    obj_list(in, addr, size, hint);
    for (int k = 0; k < NOBJ; k++) {
        ids[k] = pd_object_register(obj_name[k], addr[k], size[k], &hint[k]);
        if (ids[k] < 0) {
            fprintf(stderr, "phases: pd_object_register(%s): %s\n", obj_name[k], pd_strerror(ids[k]));
            return -1;
        }
    }
    return 0;
}

static int parse_list(const char *s, double *out, int max)
{
    int n = 0;
    char *end;
    while (*s && n < max) {
        double v = strtod(s, &end);
        if (end == s || !(v > 0))
            return -1;
        out[n++] = v;
        if (*end && *end != ',')
            return -1;
        s = *end == ',' ? end + 1 : end;
    }
    return *s ? -1 : n;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: phases [--mib M] [--scales LIST] [--reps K] [--threads N] [--passes P]\n"
               "              [--degree D] [--sweeps S] [--no-runtime]\n"
               "  --mib M        footprint of the largest input in MiB (default 256)\n"
               "  --scales LIST  the inputs, in order, as fractions of M (default 0.5,1,0.75,0.5)\n"
               "  --reps K       instances per input (default 6)\n"
               "  --threads N    OpenMP threads = tasks (default: OpenMP's)\n"
               "  --passes P     sweeps of every phase per instance (default 1)\n"
               "  --degree D     mean row length of the graph (default 8)\n"
               "  --sweeps S     stencil sweeps per pass, the unbalanced phase (default 4)\n"
               "  --no-runtime   make no libpaddiser call (baseline)\n"
               "env: PHASES_END_AT_BARRIERS=1 ends each task at every barrier inside an\n"
               "  instance and begins it again, instead of pd_task_pause / pd_task_resume\n");
}

int main(int argc, char **argv)
{
    const char *eab = getenv("PHASES_END_AT_BARRIERS");
    end_at_barriers = eab && !strcmp(eab, "1");
    double mib = 256, scales[MAX_INPUTS] = {0.5, 1, 0.75, 0.5};
    int ninputs = 4, reps = 6, nt = omp_get_max_threads(), passes = 1, degree = 8, sweeps = 4;
    static const struct option longopts[] = {
        {"mib", required_argument, NULL, 'm'},     {"scales", required_argument, NULL, 's'},
        {"reps", required_argument, NULL, 'k'},    {"threads", required_argument, NULL, 't'},
        {"passes", required_argument, NULL, 'p'},  {"degree", required_argument, NULL, 'd'},
        {"no-runtime", no_argument, NULL, 'n'},    {"help", no_argument, NULL, 'h'},
        {"sweeps", required_argument, NULL, 'w'},
        {NULL, 0, NULL, 0},
    };
    int opt_c;
    while ((opt_c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (opt_c) {
        case 'm':
            mib = atof(optarg);
            break;
        case 's':
            ninputs = parse_list(optarg, scales, MAX_INPUTS);
            break;
        case 'k':
            reps = atoi(optarg);
            break;
        case 't':
            nt = atoi(optarg);
            break;
        case 'p':
            passes = atoi(optarg);
            break;
        case 'd':
            degree = atoi(optarg);
            break;
        case 'w':
            sweeps = atoi(optarg);
            break;
        case 'n':
            use_rt = 0;
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
    }
    if (!(mib > 0) || ninputs < 1 || reps < 1 || nt < 1 || nt > MAX_THREADS || passes < 1 || sweeps < 1 || degree < 1 ||
        degree > 1000 || optind != argc) {
        usage(stderr);
        return 2;
    }

    if (use_rt) {
        pd_options opt;
        pd_options_default(&opt); /* backend and capacity from PADDISER_* */
        int rc = pd_init(&opt);
        if (rc != PD_OK) {
            fprintf(stderr, "phases: pd_init: %s\n", pd_strerror(rc));
            return 1;
        }
    }
    printf("phases: runtime %s, %d threads, %d inputs x %d instances, %d pass%s, degree %d, %d stencil sweeps\n",
           use_rt ? "on" : "off", nt, ninputs, reps, passes, passes == 1 ? "" : "es", degree, sweeps);

    input_t in;
    if (input_build(&in, mib * scales[0], degree) != 0) {
        fprintf(stderr, "phases: cannot build the first input (%.3g MiB)\n", mib * scales[0]);
        return 1;
    }
    int ids[NOBJ], first_ids[NOBJ];
    if (use_rt && register_all(&in, ids) != 0)
        return 1;
    memcpy(first_ids, ids, sizeof ids);
    double seen_mib[MAX_INPUTS];
    int seen_count[MAX_INPUTS], nseen = 0;
    double task_s[MAX_THREADS], work_s = 0, rt_s = 0;
    int instance = 0, verified = 0, ids_kept = 1, planned_tasks = 0;
    int sampled_so_far = 0; /* the sampler's count, to say whether an instance was sampled */
    for (int v = 0; v < ninputs; v++) {
        int which = -1;
        for (int q = 0; q < nseen; q++)
            if (seen_mib[q] == in.mib)
                which = q;
        if (which < 0) {
            which = nseen++;
            seen_mib[which] = in.mib;
            seen_count[which] = 0;
        }
        printf("input: visit=%d input_mib=%.3f elements=%zu nnz=%zu footprint_bytes=%zu ids=", v, in.mib, in.n,
               in.nnz, in.n * 7 * sizeof(double) + (in.n + 1) * 4 + in.nnz * 8);
        for (int k = 0; k < NOBJ; k++)
            printf("%s%d", k ? "," : "", use_rt ? ids[k] : -1);
        printf("\n");
        for (int j = 0; j < reps; j++, instance++) {
            double predicted = NAN, t0 = omp_get_wtime();
            char mem_bound[256] = "";
            if (use_rt) {
                pd_task_plan plan[MAX_THREADS];
                double mk = NAN;
                int np = pd_plan_query(plan, MAX_THREADS, &mk);
                if (np > 0) {
                    predicted = mk;
                    planned_tasks = np;
                }
                /* the memory-bound fraction behind each task's curve */
                size_t at = 0;
                for (int q = 0; q < np && q < MAX_THREADS && at < sizeof mem_bound; q++)
                    at += (size_t)snprintf(mem_bound + at, sizeof mem_bound - at, "%s%.3f", q ? "," : " mem_bound=",
                                           plan[q].mem_bound);
            }
            double query_s = omp_get_wtime() - t0, sums[3];
            double wall = run_instance(&in, nt, passes, sweeps, task_s, sums);
            double makespan = 0, calls = 0;
            char tasks[512] = " task_s=";
            for (int t = 0, at = 8; t < nt && at < (int)sizeof tasks - 16; t++)
                at += snprintf(tasks + at, sizeof tasks - (size_t)at, "%s%.6f", t ? "," : "", task_s[t]);
            for (int t = 0; t < nt; t++) {
                makespan = task_s[t] > makespan ? task_s[t] : makespan;
                calls = call_s[t * PAD] > calls ? call_s[t * PAD] : calls;
            }
            int ok = sums[0] == in.expect[0] && sums[1] == in.expect[1] && sums[2] == in.expect[2];
            verified += ok;
            char checksum[128];
            snprintf(checksum, sizeof checksum, "%.1f,%.1f,%.1f", sums[0], sums[1], sums[2]);
            /* The next input replaces this one before the sync point. */
            double reg_s = 0;
            if (j == reps - 1 && v + 1 < ninputs) {
                double r0 = omp_get_wtime();
                if (use_rt && unregister_all(ids) != 0)
                    return 1;
                reg_s = omp_get_wtime() - r0;
                input_free(&in);
                if (input_build(&in, mib * scales[v + 1], degree) != 0) {
                    fprintf(stderr, "phases: cannot build input %d (%.3g MiB)\n", v + 1, mib * scales[v + 1]);
                    return 1;
                }
                r0 = omp_get_wtime();
                if (use_rt && register_all(&in, ids) != 0)
                    return 1;
                reg_s += omp_get_wtime() - r0;
                if (use_rt && memcmp(ids, first_ids, sizeof ids) != 0)
                    ids_kept = 0;
            }
            double sync_s = 0;
            size_t moved = 0;
            char decision[160] = "";
            int sampled = 0;
            if (use_rt) {
                double s0 = omp_get_wtime();
                int rc = pd_sync_point();
                sync_s = omp_get_wtime() - s0;
                if (rc != PD_OK) {
                    fprintf(stderr, "phases: pd_sync_point: %s\n", pd_strerror(rc));
                    return 1;
                }
                pd_profile_info info;
                if (pd_profile_info_get(&info) == PD_OK) {
                    moved = info.bytes_moved;
                    /* counted at the instance's first task, so by now */
                    sampled = info.instances_sampled > sampled_so_far;
                    sampled_so_far = info.instances_sampled;
                    /* the gain-versus-cost rule's decision (docs/runtime.md) */
                    snprintf(decision, sizeof decision,
                             " plan_decided=%d plan_kept=%d plan_hot_first=%d plan_current_s=%.6g plan_planned_s=%.6g",
                             info.plan_decided, info.plan_kept, info.plan_hot_first, info.plan_current_s,
                             info.plan_planned_s);
                }
            }
            work_s += wall;
            rt_s += query_s + reg_s + sync_s;
            printf("instance=%d visit=%d input_mib=%.3f occurrence=%d rep=%d wall_s=%.6f task_makespan_s=%.6f "
                   "predicted_s=%.6g moved_bytes=%zu sync_s=%.6f reg_s=%.6f query_s=%.6f task_calls_s=%.6f checksum=%s "
                   "ok=%d sampled=%d%s%s%s\n",
                   instance, v, seen_mib[which], seen_count[which], j, wall, makespan, predicted, moved, sync_s,
                   reg_s, use_rt ? query_s : 0.0, calls, checksum, ok, sampled, decision, mem_bound, tasks);
            fflush(stdout);
            seen_count[which]++;
        }
    }
    pd_profile_info info;
    memset(&info, 0, sizeof info);
    if (use_rt)
        pd_profile_info_get(&info);
    printf("summary: instances=%d verified=%d runtime_errors=%d ids_kept=%d work_s=%.6f runtime_s=%.6f "
           "total_s=%.6f rt_instances=%d planned_tasks=%d backend=%s sampler=%s samples=%zu sampled_faults=%llu "
           "fast_capacity=%zu instances_sampled=%d sampling_cost_s=%.6f sampling_wall_s=%.6f\n",
           instance, verified, rt_errors, use_rt ? ids_kept : -1, work_s, rt_s, work_s + rt_s, info.instances,
           planned_tasks, use_rt ? info.backend : "off", use_rt ? info.sampler : "off", info.samples, info.sampled_faults,
           info.fast_capacity, info.instances_sampled, info.sampling_cost_s, info.sampling_wall_s);
    if (use_rt) {
        /* Sampled accesses of each object in the last instance: which
         * phases the profile saw. */
        printf("accesses:");
        for (int k = 0; k < NOBJ; k++) {
            double acc = 0;
            if (pd_object_accesses(ids[k], -1, &acc) != PD_OK)
                acc = NAN;
            printf(" %s=%.0f", obj_name[k], acc);
        }
        printf("\n");
        pd_finalize();
    }
    input_free(&in);
    return verified == instance && rt_errors == 0 ? 0 : 1;
}
