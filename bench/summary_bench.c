/* Benchmark of the run summary and of the shared CSV reader on a synthetic
 * run (docs/summary.md, "Performance"). Not part of `make check`: timings
 * belong here, not in unit tests.
 *
 *   summary_bench gen DIR [REPS]  write a run of REPS repetitions (default 100:
 *                                 10 executions x 10), each with one host of
 *                                 128 cores x 300 CPU samples, 4 GPUs x 300
 *                                 and 2 I/O sources x 300 (about 2.4 MB)
 *   summary_bench load DIR        pd_csv_load every trace, compute nothing
 *   summary_bench stream DIR      pd_csv_reader over every trace, compute nothing
 *   summary_bench summary DIR     pd_summary_write (OMP_NUM_THREADS applies)
 *
 * Timed modes run RUNS times (env, default 3) and print the best and the
 * median wall time; the first run also warms the page cache. */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bench/summary.h"
#include "common/csv.h"
#include "common/util.h"

#define CORES 128
#define SAMPLES 300
#define GPUS 4
#define IO_SOURCES 2
#define REPS_PER_EXEC 10

static uint64_t rng_state = 0x9E3779B97F4A7C15ULL;

static uint32_t rnd(uint32_t n)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state % n);
}

static int write_or_die(const char *path, pd_str *s)
{
    if (s->oom || pd_write_file(path, s->data, s->len) != 0) {
        fprintf(stderr, "summary_bench: cannot write %s: %s\n", path, strerror(errno));
        return -1;
    }
    pd_str_clear(s);
    return 0;
}

static int gen_repetition(const char *dir, double t0, pd_str *s)
{
    char path[4200]; /* dir is at most 4095 bytes */
    const char *host = "node01";
    pd_str_append(s, "timestamp,hostname,core,cpu_user_pct,cpu_system_pct,cpu_idle_pct,"
                     "mem_total_kb,mem_available_kb\n");
    for (int t = 0; t < SAMPLES; t++) {
        unsigned long avail = 64000000UL + rnd(32000000);
        for (int c = 0; c < CORES; c++) {
            unsigned user = rnd(1000), sys = rnd(1000 - user);
            pd_str_printf(s, "%.3f,%s,%d,%u.%u,%u.%u,%u.%u,128000000,%lu\n", t0 + t, host, c,
                          user / 10, user % 10, sys / 10, sys % 10, (1000 - user - sys) / 10,
                          (1000 - user - sys) % 10, avail);
        }
    }
    snprintf(path, sizeof path, "%s/__iops_trace_%s_4242.csv", dir, host);
    if (write_or_die(path, s) != 0)
        return -1;

    pd_str_append(s, "timestamp,hostname,gpu_index,gpu_name,utilization_gpu_pct,"
                     "utilization_mem_pct,memory_used_mib,memory_total_mib,temperature_c,"
                     "power_draw_w,clock_sm_mhz,clock_mem_mhz\n");
    for (int t = 0; t < SAMPLES; t++)
        for (int g = 0; g < GPUS; g++)
            pd_str_printf(s, "%.1f,%s,%d,NVIDIA A100-SXM4-80GB,%u,%u,%u,81920,%u,%u.%02u,1410,1215\n",
                          t0 + t + 0.5, host, g, rnd(101), rnd(101), 20000 + rnd(60000),
                          40 + rnd(40), 60 + rnd(340), rnd(100));
    snprintf(path, sizeof path, "%s/__iops_gpu_trace_%s_4242.csv", dir, host);
    if (write_or_die(path, s) != 0)
        return -1;

    pd_str_append(s, "timestamp,hostname,source,device,path,interval_s,read_bytes,write_bytes,"
                     "read_ops,write_ops\n");
    for (int t = 0; t < SAMPLES; t++) {
        pd_str_printf(s, "%.1f,%s,block,nvme0n1,/scratch/run,1.002,%u,%u,%u,%u\n", t0 + t + 1.1,
                      host, rnd(1u << 30), rnd(1u << 29), rnd(8192), rnd(4096));
        pd_str_printf(s, "%.1f,%s,nfs,server:/export,/data/input,1.002,%u,%u,%u,%u\n",
                      t0 + t + 1.1, host, rnd(1u << 27), rnd(1u << 20), rnd(1000), rnd(100));
    }
    snprintf(path, sizeof path, "%s/__iops_io_trace_%s_4242.csv", dir, host);
    return write_or_die(path, s);
}

static int gen(const char *run_dir, int reps)
{
    pd_str s = {0};
    char dir[4096];
    for (int i = 0; i < reps; i++) {
        int exec = i / REPS_PER_EXEC + 1, rep = i % REPS_PER_EXEC + 1;
        if (rep == 1) {
            snprintf(dir, sizeof dir, "%s/exec_%04d", run_dir, exec);
            if (pd_mkdir_p(dir, 0755) != 0) {
                fprintf(stderr, "summary_bench: cannot create %s: %s\n", dir, strerror(errno));
                return 1;
            }
            pd_str_printf(&s, "{\"block_size\": \"%dM\", \"nodes\": 1, \"ratio\": 0.%d}", exec,
                          exec);
            snprintf(dir, sizeof dir, "%s/exec_%04d/__iops_params.json", run_dir, exec);
            if (write_or_die(dir, &s) != 0)
                return 1;
        }
        snprintf(dir, sizeof dir, "%s/exec_%04d/repetition_%03d", run_dir, exec, rep);
        if (pd_mkdir_p(dir, 0755) != 0 || gen_repetition(dir, 1705123456.123 + i * 1000.0, &s) != 0) {
            fprintf(stderr, "summary_bench: cannot write %s\n", dir);
            pd_str_free(&s);
            return 1;
        }
    }
    pd_str_free(&s);
    return 0;
}

/* Every __iops_*trace_*.csv under run_dir/exec_* /repetition_* /. */
typedef struct {
    char **paths;
    size_t n, cap;
} path_list;

static void list_push(path_list *l, const char *path)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 64;
        l->paths = realloc(l->paths, l->cap * sizeof *l->paths);
        if (!l->paths) {
            fprintf(stderr, "summary_bench: out of memory\n");
            exit(1);
        }
    }
    l->paths[l->n++] = pd_strdup(path);
}

static void walk(const char *dir, int depth, path_list *out)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        char path[4096];
        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (depth < 2 && (strncmp(e->d_name, "exec_", 5) == 0 || strncmp(e->d_name, "repetition_", 11) == 0))
            walk(path, depth + 1, out);
        else if (depth == 2 && strncmp(e->d_name, "__iops_", 7) == 0 && strstr(e->d_name, "trace_") &&
                 strcmp(e->d_name + strlen(e->d_name) - 4, ".csv") == 0)
            list_push(out, path);
    }
    closedir(d);
}

/* One timed pass; returns the number of fields seen (kept live) or -1. */
static long long pass_load(const path_list *l)
{
    long long fields = 0;
    for (size_t i = 0; i < l->n; i++) {
        char err[512];
        pd_csv *c = pd_csv_load(l->paths[i], err, sizeof err);
        if (!c) {
            fprintf(stderr, "summary_bench: %s\n", err);
            return -1;
        }
        for (size_t r = 0; r < c->nrows; r++)
            fields += (long long)c->rows[r].nfields;
        pd_csv_free(c);
    }
    return fields;
}

static long long pass_stream(const path_list *l)
{
    long long fields = 0;
    for (size_t i = 0; i < l->n; i++) {
        char err[512];
        pd_csv_reader *r = pd_csv_reader_open(l->paths[i], 0, err, sizeof err);
        if (!r) {
            fprintf(stderr, "summary_bench: %s\n", err);
            return -1;
        }
        pd_csv_row row;
        int rc;
        while ((rc = pd_csv_reader_next(r, &row, err, sizeof err)) > 0)
            fields += (long long)row.nfields;
        pd_csv_reader_close(r);
        if (rc < 0) {
            fprintf(stderr, "summary_bench: %s\n", err);
            return -1;
        }
    }
    return fields;
}

static const char *run_dir_arg;

static long long pass_summary(const path_list *l)
{
    (void)l;
    char err[512];
    if (pd_summary_write(run_dir_arg, err, sizeof err) != 1) {
        fprintf(stderr, "summary_bench: %s\n", err);
        return -1;
    }
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int timed(const char *mode, const char *run_dir, long long (*pass)(const path_list *))
{
    path_list l = {0};
    walk(run_dir, 0, &l);
    if (l.n == 0) {
        fprintf(stderr, "summary_bench: no traces under %s (run `summary_bench gen %s` first)\n",
                run_dir, run_dir);
        return 1;
    }
    double bytes = 0;
    for (size_t i = 0; i < l.n; i++) {
        struct stat st;
        if (stat(l.paths[i], &st) == 0)
            bytes += (double)st.st_size;
    }
    const char *env = getenv("RUNS");
    int runs = env ? atoi(env) : 3;
    if (runs < 1 || runs > 100)
        runs = 3;
    double t[100];
    long long fields = 0;
    for (int i = 0; i < runs; i++) {
        double start = pd_monotonic();
        fields = pass(&l);
        t[i] = pd_monotonic() - start;
        if (fields < 0)
            return 1;
    }
    qsort(t, (size_t)runs, sizeof *t, cmp_double);
    printf("%-8s %zu files, %.1f MB: best %.3f s, median %.3f s (%d runs)", mode, l.n, bytes / 1e6,
           t[0], t[runs / 2], runs);
    if (fields > 0)
        printf(", %lld fields", fields);
    printf("\n");
    for (size_t i = 0; i < l.n; i++)
        free(l.paths[i]);
    free(l.paths);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: summary_bench gen DIR [REPS] | load DIR | stream DIR | summary DIR\n");
        return 2;
    }
    const char *mode = argv[1], *dir = argv[2];
    run_dir_arg = dir;
    if (strcmp(mode, "gen") == 0) {
        int reps = argc > 3 ? atoi(argv[3]) : 100;
        if (reps < 1) {
            fprintf(stderr, "summary_bench: REPS must be a positive number\n");
            return 2;
        }
        return gen(dir, reps);
    }
    if (strcmp(mode, "load") == 0)
        return timed(mode, dir, pass_load);
    if (strcmp(mode, "stream") == 0)
        return timed(mode, dir, pass_stream);
    if (strcmp(mode, "summary") == 0)
        return timed(mode, dir, pass_summary);
    fprintf(stderr, "summary_bench: unknown mode '%s'\n", mode);
    return 2;
}
