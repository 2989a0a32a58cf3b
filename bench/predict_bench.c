/* Prediction quality of the runtime on a multi-phase OpenMP program with
 * several inputs in one process (issue #11), against the naive predictor
 * "the previous instance of the same input took this long".
 *
 * The program is integrated exactly as docs/runtime.md tells a user to:
 * one task per OpenMP thread (parallel + pd_task_begin + for nowait +
 * pd_task_end), two phases per instance (a stream triad, then a random
 * gather through an index array: the graph-kernel pattern), a sync point per
 * instance, and every input's arrays freed and allocated again, handed to
 * LB_HM_config_sizes with the new pointers (objects by position). Thread t
 * owns a (t + 1)-weighted slice, so the tasks are unequal.
 *
 * Per instance: the makespan the runtime predicts for it (pd_plan_query
 * after the input is configured), the measured makespan (slowest task's
 * work over both phases, timed by this program between pd_task_begin and
 * pd_task_end, as the runtime times a task), and the naive prediction.
 * Prints the median |error| of both predictors over instances of an input
 * seen before, the runtime's error on the first instance of each input, and
 * the coefficient of variation of the runtime's predictions for an
 * unchanged input once warmed up (from its third instance on; the naive
 * predictor's CV over the same instances for comparison). A benchmark, not
 * a test: the numbers depend on this machine.
 *
 *   make bench-predict [PREDICT_BENCH_ARGS="--mib 64,128,256 --rounds 4 --reps 3"]
 * Options: --threads N, --mib LIST (footprint per input), --rounds R (passes
 * over the inputs), --reps K (instances per input per pass), --backend
 * none|sim, --fast-mib M (sim: fast capacity), --passes P (sweeps of each
 * phase per instance, default 1: longer instances, steadier times), --csv
 * FILE (one row per instance). */
#include <getopt.h>
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_stats.h"
#include "common/util.h"
#include "paddiser.h"

#define MAX_INPUTS 16
#define MAX_THREADS 64
#define MIB (1024.0 * 1024.0)

typedef struct {
    size_t n;        /* elements of each array */
    double *x, *y, *z;
    uint32_t *idx;   /* random gather indices into x */
} input_arrays;

/* Footprint: 3 double arrays + one uint32 index array = 28 bytes/element. */
static int input_alloc(input_arrays *in, double mib, uint64_t seed)
{
    in->n = (size_t)(mib * MIB / 28.0);
    in->x = aligned_alloc(4096, (in->n * sizeof(double) + 4095) / 4096 * 4096);
    in->y = aligned_alloc(4096, (in->n * sizeof(double) + 4095) / 4096 * 4096);
    in->z = aligned_alloc(4096, (in->n * sizeof(double) + 4095) / 4096 * 4096);
    in->idx = aligned_alloc(4096, (in->n * sizeof(uint32_t) + 4095) / 4096 * 4096);
    if (!in->x || !in->y || !in->z || !in->idx)
        return -1;
    uint64_t s = seed;
    for (size_t i = 0; i < in->n; i++) {
        in->x[i] = 1.0;
        in->y[i] = (double)(i & 7);
        in->z[i] = 0.5;
        in->idx[i] = (uint32_t)(pd_splitmix64(&s) % in->n);
    }
    return 0;
}

static void input_free(input_arrays *in)
{
    free(in->x);
    free(in->y);
    free(in->z);
    free(in->idx);
    memset(in, 0, sizeof *in);
}

/* Slice of thread t of nt, weighted t + 1. */
static void slice(size_t n, int t, int nt, size_t *lo, size_t *hi)
{
    double total = nt * (nt + 1) / 2.0, before = t * (t + 1) / 2.0;
    *lo = (size_t)((double)n * before / total);
    *hi = (size_t)((double)n * (before + t + 1) / total);
}

static double run_instance(input_arrays *in, int nt, int passes, double *task_time)
{
    double sink = 0;
    memset(task_time, 0, (size_t)nt * sizeof *task_time);
    /* phase 1: triad over each task's slice */
#pragma omp parallel num_threads(nt)
    {
        int me = omp_get_thread_num();
        size_t lo, hi;
        slice(in->n, me, nt, &lo, &hi);
        pd_task_begin(-1);
        double t0 = omp_get_wtime();
        for (int p = 0; p < passes; p++)
            for (size_t i = lo; i < hi; i++)
                in->z[i] = in->x[i] + 0.5 * in->y[i] + p;
        task_time[me] += omp_get_wtime() - t0;
        pd_task_end(-1);
    }
    /* phase 2: random gather through idx (reads x anywhere) */
#pragma omp parallel num_threads(nt) reduction(+ : sink)
    {
        int me = omp_get_thread_num();
        size_t lo, hi;
        slice(in->n, me, nt, &lo, &hi);
        pd_task_begin(-1);
        double t0 = omp_get_wtime();
        double s = 0;
        for (int p = 0; p < passes; p++)
            for (size_t i = lo; i < hi; i++)
                s += in->x[in->idx[i]];
        task_time[me] += omp_get_wtime() - t0;
        pd_task_end(-1);
        sink += s;
    }
    double mk = 0;
    for (int t = 0; t < nt; t++)
        mk = task_time[t] > mk ? task_time[t] : mk;
    return sink > -1 ? mk : -mk; /* keeps the gather alive */
}

static int parse_list(const char *s, double *out, int max)
{
    int n = 0;
    char *end;
    while (*s && n < max) {
        double v = strtod(s, &end);
        if (end == s || !(v >= 1))
            return -1;
        out[n++] = v;
        s = *end == ',' ? end + 1 : end;
        if (*end && *end != ',')
            return -1;
    }
    return *s ? -1 : n;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: predict_bench [--threads N] [--mib LIST] [--rounds R] [--reps K]\n"
               "                     [--backend none|sim] [--fast-mib M] [--passes P] [--csv FILE]\n");
}

int main(int argc, char **argv)
{
    int nt = 2, rounds = 4, reps = 3, passes = 1;
    double mib[MAX_INPUTS] = {64, 128, 256};
    int ninputs = 3;
    double fast_mib = 0;
    pd_backend_kind backend = PD_BACKEND_NONE;
    const char *csv_path = NULL;
    static const struct option longopts[] = {
        {"threads", required_argument, NULL, 't'}, {"mib", required_argument, NULL, 'm'},
        {"rounds", required_argument, NULL, 'r'},  {"reps", required_argument, NULL, 'k'},
        {"backend", required_argument, NULL, 'b'}, {"fast-mib", required_argument, NULL, 'f'},
        {"csv", required_argument, NULL, 'c'},     {"help", no_argument, NULL, 'h'},
        {"passes", required_argument, NULL, 'p'},
        {NULL, 0, NULL, 0},
    };
    int c;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (c) {
        case 't':
            nt = atoi(optarg);
            break;
        case 'm':
            ninputs = parse_list(optarg, mib, MAX_INPUTS);
            break;
        case 'r':
            rounds = atoi(optarg);
            break;
        case 'k':
            reps = atoi(optarg);
            break;
        case 'b':
            if (!strcmp(optarg, "none"))
                backend = PD_BACKEND_NONE;
            else if (!strcmp(optarg, "sim"))
                backend = PD_BACKEND_SIM;
            else {
                fprintf(stderr, "predict_bench: --backend none|sim, not '%s'\n", optarg);
                return 2;
            }
            break;
        case 'f':
            fast_mib = atof(optarg);
            break;
        case 'c':
            csv_path = optarg;
            break;
        case 'p':
            passes = atoi(optarg);
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
    }
    if (nt < 1 || nt > MAX_THREADS || ninputs < 1 || rounds < 1 || reps < 1 || passes < 1 ||
        optind != argc) {
        usage(stderr);
        return 2;
    }
    FILE *csv = NULL;
    if (csv_path && !(csv = fopen(csv_path, "w"))) {
        perror(csv_path);
        return 1;
    }
    if (csv)
        fprintf(csv, "instance,input_mib,occurrence,predicted_s,measured_s,naive_s\n");

    pd_options opt;
    pd_options_default(&opt);
    opt.backend = backend;
    if (fast_mib > 0)
        opt.fast_capacity = (size_t)(fast_mib * MIB);
    int rc = pd_init(&opt);
    if (rc != PD_OK) {
        fprintf(stderr, "predict_bench: pd_init: %s\n", pd_strerror(rc));
        return 1;
    }

    int total = rounds * ninputs * reps;
    double *pred = calloc((size_t)total, sizeof *pred), *meas = calloc((size_t)total, sizeof *meas);
    double *naive = calloc((size_t)total, sizeof *naive);
    int *which = calloc((size_t)total, sizeof *which), *occ = calloc((size_t)total, sizeof *occ);
    double last[MAX_INPUTS];
    int seen[MAX_INPUTS] = {0};
    double task_time[MAX_THREADS];
    if (!pred || !meas || !naive || !which || !occ)
        return 1;
    input_arrays in = {0};
    double moved_same = 0; /* bytes migrated at sync points between instances of one input */
    double *moved_at = calloc((size_t)reps, sizeof *moved_at); /* ... by the instance before (j) */
    if (!moved_at)
        return 1;
    int k = 0;
    for (int r = 0; r < rounds; r++) {
        for (int i = 0; i < ninputs; i++) {
            /* the next input: free everything, allocate, configure */
            input_free(&in);
            if (input_alloc(&in, mib[i], 42u + (uint64_t)i) != 0) {
                fprintf(stderr, "predict_bench: out of memory for %.0f MiB\n", mib[i]);
                return 1;
            }
            void *objs[] = {in.x, in.y, in.z, in.idx, NULL};
            size_t sizes[] = {in.n * sizeof(double), in.n * sizeof(double), in.n * sizeof(double),
                              in.n * sizeof(uint32_t)};
            if (!LB_HM_config_sizes(objs, sizes)) {
                perror("predict_bench: LB_HM_config_sizes");
                return 1;
            }
            for (int j = 0; j < reps; j++, k++) {
                double mk = -1;
                pd_task_plan plan[MAX_THREADS];
                int np = pd_plan_query(plan, MAX_THREADS, &mk);
                pred[k] = np > 0 ? mk : NAN;
                if (getenv("PREDICT_BENCH_DEBUG"))
                    for (int q = 0; q < np && q < MAX_THREADS; q++) {
                        pd_task_profile tp;
                        pd_task_profile_get(plan[q].task, &tp);
                        fprintf(stderr, "  [%d] task %d predicted %.4f (from %d, same %d, cv %.3f) last %.4f\n", k,
                                plan[q].task, plan[q].predicted_time, plan[q].predicted_from, plan[q].same_input,
                                plan[q].predicted_cv, tp.last_time);
                    }
                naive[k] = seen[i] ? last[i] : NAN;
                meas[k] = fabs(run_instance(&in, nt, passes, task_time));
                which[k] = i;
                occ[k] = seen[i];
                last[i] = meas[k];
                seen[i]++;
                if ((rc = pd_sync_point()) != PD_OK) {
                    fprintf(stderr, "predict_bench: pd_sync_point: %s\n", pd_strerror(rc));
                    return 1;
                }
                pd_profile_info info;
                if (j > 0 && pd_profile_info_get(&info) == PD_OK) { /* same input as the instance before */
                    moved_same += info.bytes_moved;
                    moved_at[j] += info.bytes_moved;
                }
                if (csv)
                    fprintf(csv, "%d,%g,%d,%.9g,%.9g,%.9g\n", k, mib[i], occ[k], pred[k], meas[k], naive[k]);
            }
        }
    }
    pd_finalize();
    input_free(&in);
    if (csv)
        fclose(csv);

    /* later instances of an input: both predictors */
    double *e_rt = calloc((size_t)total, sizeof(double)), *e_nv = calloc((size_t)total, sizeof(double));
    double *e_first = calloc((size_t)total, sizeof(double)), *v = calloc((size_t)total, sizeof(double));
    size_t nl = 0, nf = 0;
    for (int j = 0; j < total; j++) {
        if (!isfinite(pred[j]))
            continue;
        double e = (pred[j] - meas[j]) / meas[j];
        if (occ[j] == 0) {
            e_first[nf++] = e;
        } else {
            e_rt[nl] = fabs(e);
            e_nv[nl++] = fabs(naive[j] - meas[j]) / meas[j];
        }
    }
    double mfirst_abs = 0;
    {
        double *a = calloc(nf ? nf : 1, sizeof *a);
        for (size_t j = 0; j < nf; j++)
            a[j] = fabs(e_first[j]);
        mfirst_abs = bench_median(a, nf);
        free(a);
    }
    double lo, hi;
    bench_range(e_first, nf, &lo, &hi);
    double mrt = bench_median(e_rt, nl), mnv = bench_median(e_nv, nl);
    printf("predict_bench: %d threads, inputs", nt);
    for (int i = 0; i < ninputs; i++)
        printf(" %g", mib[i]);
    printf(" MiB, %d rounds x %d reps, %d pass%s, backend %s\n", rounds, reps, passes, passes == 1 ? "" : "es",
           backend == PD_BACKEND_SIM ? "sim" : "none");
    printf("  later instances (%zu): median |error| runtime %.1f%%, naive previous-instance %.1f%% (ratio %.2f)\n",
           nl, 100 * mrt, 100 * mnv, mrt / mnv);
    printf("  first instance of an input (%zu): median |error| %.1f%%, range %+.1f%% .. %+.1f%%\n", nf,
           100 * mfirst_abs, 100 * lo, 100 * hi);
    if (backend != PD_BACKEND_NONE && reps > 1) {
        printf("  migrated between instances of an unchanged input: %.1f MiB in %d sync points\n",
               moved_same / MIB, rounds * ninputs * (reps - 1));
        printf("  ... by the input's instance it follows (MiB over %d visits):", rounds * ninputs);
        for (int j = 1; j < reps; j++)
            printf(" %d: %.1f", j + 1, moved_at[j] / MIB);
        printf("\n");
    }
    for (int i = 0; i < ninputs; i++) {
        size_t n = 0, nn = 0;
        double *w = calloc((size_t)total, sizeof *w), msum = 0;
        for (int j = 0; j < total; j++)
            if (which[j] == i && occ[j] >= 2 && isfinite(pred[j])) {
                v[n] = pred[j];
                w[nn++] = naive[j];
                n++;
            }
        for (int j = 0; j < total; j++)
            if (which[j] == i)
                msum += meas[j];
        printf("  input %g MiB: mean measured %.4f s; CV of predictions once warmed up (%zu) runtime %.1f%%, "
               "naive %.1f%%\n",
               mib[i], msum / (rounds * reps), n, 100 * bench_cv(v, n), 100 * bench_cv(w, nn));
        free(w);
    }
    free(e_rt);
    free(e_nv);
    free(e_first);
    free(v);
    free(pred);
    free(moved_at);
    free(meas);
    free(naive);
    free(which);
    free(occ);
    return 0;
}
