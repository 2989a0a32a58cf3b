/* Loading what the HTML report shows from a run directory (shared/notes
 * rundir.md): results.csv / __iops_resource_summary.csv tables, per-execution
 * __iops_params.json and __iops_status.json, trace time series of one
 * repetition, and paddiser_tasks.csv. Nothing here aborts on bad input: a
 * file that cannot be used is reported through the returned error text. */
#ifndef PD_REPORT_DATA_H
#define PD_REPORT_DATA_H

#include <stdbool.h>
#include <stddef.h>

#include "common/util.h"

/* Sorted (strcmp) names of the entries of dir that start with prefix; when
 * dirs_only, only directories, else only regular files. Returns the count
 * (0 when dir is unreadable); *names is NULL-terminated, free with
 * pd_rep_names_free. */
size_t pd_rep_list(const char *dir, const char *prefix, bool dirs_only, char ***names);
void pd_rep_names_free(char **names);

/* One execution: exec_NNNN, its variables from __iops_params.json (in file
 * order, values as text: numbers printed as JSON would) and its repetitions. */
typedef struct {
    char *id;
    char **keys, **vals;
    size_t nvars;
    bool has_params;
    char **reps; /* repetition_NNN directory names, sorted */
    size_t nreps;
    size_t n_succeeded, n_failed, n_other; /* from __iops_status.json */
    double duration_sum;                   /* of repetitions with a duration */
    size_t n_duration;
} pd_rep_exec;

typedef struct {
    pd_rep_exec *execs;
    size_t nexecs;
    char **vars; /* union of params keys, first-seen order */
    size_t nvars;
    size_t n_bad_params; /* params files present but unreadable */
    char *exec_root;     /* where the exec_NNNN directories are: run_dir, or run_dir/runs (IOPS); NULL: none */
} pd_rep_run;

/* Scans run_dir/exec_*, or run_dir/runs/exec_* as IOPS lays them out
 * (missing dirs simply give an empty run). */
void pd_rep_run_load(const char *run_dir, pd_rep_run *run);
void pd_rep_run_free(pd_rep_run *run);

/* A results.csv-shaped table: execution_id,repetition,<vars>,<metrics>
 * (IOPS's flattened layout is read as that: pd_iops_results_to_short).
 * Metric columns are those holding numbers only (empty cells allowed, at least
 * one number); other non-variable columns are listed in skipped. */
typedef struct {
    char **vars;
    size_t nvars;
    char **metrics;
    size_t nmetrics;
    char **skipped;
    size_t nskipped;
    size_t nrows;
    char **exec_ids;  /* [row] */
    long *reps;       /* [row], 0 when unparsable */
    char **var_vals;  /* [row * nvars + v] */
    double *vals;     /* [row * nmetrics + m], NaN when empty/missing */
} pd_rep_table;

/* Loads path. Variables are the columns named in vars (those absent from the
 * file are dropped). Returns 0, or -1 with err (missing file, no
 * execution_id/repetition columns, ...). */
int pd_rep_table_load(const char *path, char *const *vars, size_t nvars, pd_rep_table *t,
                      char *err, size_t errlen);
void pd_rep_table_free(pd_rep_table *t);
int pd_rep_table_metric(const pd_rep_table *t, const char *name);
int pd_rep_table_var(const pd_rep_table *t, const char *name);

/* Column names after execution_id,repetition that two headers share as a
 * common prefix: the variables when no params file names them. When
 * path_a has IOPS's flattened layout, its vars.NAME columns' names, and
 * *flat (may be NULL) is set true. */
size_t pd_rep_common_prefix_vars(const char *path_a, const char *path_b, char ***vars, bool *flat);

/* Distinct values of variable v in table order; sorted numerically when all
 * are numbers (*numeric set). Returns count; free with pd_rep_names_free. */
size_t pd_rep_distinct(const pd_rep_table *t, size_t v, char ***vals, bool *numeric);

/* One time series (x = seconds since the repetition's first sample). */
typedef struct {
    char *name;
    double *t, *y;
    size_t n, cap;
    size_t n_raw; /* points before downsampling (n when not downsampled) */
} pd_rep_ts;

typedef struct {
    pd_rep_ts *s;
    size_t n;
} pd_rep_tsset;

typedef struct {
    pd_rep_tsset cpu;       /* per host: mean over cores of user+system % */
    pd_rep_tsset mem;       /* per host: (mem_total - mem_available) in GiB */
    pd_rep_tsset gpu_util;  /* per GPU: utilization_gpu_pct */
    pd_rep_tsset gpu_power; /* per GPU: power_draw_w */
    pd_rep_tsset io;        /* per host/source and direction: MiB/s */
    size_t ncpu_files, ngpu_files, nio_files;
    size_t nbad_rows; /* rows skipped as malformed, all files together */
    pd_str problems;  /* files that could not be read, one per line */
} pd_rep_traces;

/* Loads every __iops_{,gpu_,io_}trace_*.csv in rep_dir, streaming: the
 * files are never held whole. With buckets > 0 each series is downsampled as
 * it is read, exactly as pd_rep_downsample(buckets) would (n_raw keeps the
 * full count), so memory does not grow with the trace; the plain call keeps
 * every point. */
void pd_rep_traces_load_reduced(const char *rep_dir, size_t buckets, pd_rep_traces *tr);
void pd_rep_traces_load(const char *rep_dir, pd_rep_traces *tr);
void pd_rep_traces_free(pd_rep_traces *tr);
bool pd_rep_dir_has_traces(const char *rep_dir);

/* Reduces (x,y) to at most 2*buckets+2 points: first, last, and the min and
 * max of each x bucket, in x order (so spikes survive). Returns n when n is
 * already small (copying). Caller frees *ox, *oy (NULL when nothing is
 * kept). */
size_t pd_rep_downsample(const double *x, const double *y, size_t n, size_t buckets, double **ox,
                         double **oy);

/* paddiser_tasks.csv: per-task times of each policy (first-seen order). */
typedef struct {
    char *policy;
    char **tasks;
    double *time_s, *dram_share, *dram_bytes; /* NaN when the cell is bad */
    size_t n;
} pd_rep_policy;

typedef struct {
    pd_rep_policy *p;
    size_t n;
    size_t nbad_rows;
} pd_rep_tasks;

int pd_rep_tasks_load(const char *path, pd_rep_tasks *tasks, char *err, size_t errlen);
void pd_rep_tasks_free(pd_rep_tasks *tasks);

/* Mean and sample stddev (n-1; 0 when n < 2) of the finite values. */
size_t pd_rep_mean_sd(const double *v, size_t n, double *mean, double *sd);

#endif
