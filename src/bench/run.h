/* A `paddiser bench` run: the run directory (layout in notes/rundir.md),
 * the repetitions to execute, their status files, results.csv, and the
 * executors (local fork/exec, SLURM sbatch) that run them. */
#ifndef PD_BENCH_RUN_H
#define PD_BENCH_RUN_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "bench/budget.h"
#include "bench/config.h"
#include "bench/control.h"
#include "bench/study.h"

/* TIMED_OUT: ran past benchmark.timeout (or SLURM's time limit); counts as failed. */
typedef enum {
    PD_TASK_PENDING,
    PD_TASK_RUNNING,
    PD_TASK_SUCCEEDED,
    PD_TASK_FAILED,
    PD_TASK_CANCELLED,
    PD_TASK_TIMED_OUT
} pd_task_state;

/* results.csv's columns (docs/bench.md, "results.csv"): IOPS's flattened
 * layout (benchmark.*, execution.*, vars.*, labels.*, metadata.*,
 * metrics.*; the default), or the short one (execution_id as exec_NNNN,
 * repetition, the variables, the metrics). UNSET: the option was not
 * given (a resumed run keeps its results.csv's layout; a new run: IOPS). */
typedef enum { PD_RESULTS_UNSET, PD_RESULTS_IOPS, PD_RESULTS_SHORT } pd_results_layout;

typedef struct pd_bench_task {
    size_t exec_idx; /* index into the matrix */
    int exec_id;
    int repetition;
    char *dir;            /* repetition directory (heap: a study may plan millions) */
    pd_task_state state;
    int exit_code;        /* -1 when unknown */
    double start, end;
    char job_id[64];      /* SLURM job id, or "" */
    long pid;             /* local executor: child pid while running */
    double started_mono;  /* local executor: monotonic start, for benchmark.timeout */
    double term_sent;     /* local executor: monotonic time the timeout's SIGTERM went, 0 before */
    int unknown_polls;    /* slurm: polls in a row where no tool knew the job */
    pd_val *values;       /* variables of this repetition */
    char *parser_file;
    char **metrics;       /* cfg->nmetrics values, the union of all scripts' (NULL = missing) */
    size_t script_idx;    /* which script (pd_bench_script_at) */
    bool has_post;        /* post_<script>.sh runs after a successful script */
    char *parser_context; /* JSON globals for the parser_script */
    const char *error;    /* why it failed when not its exit code (static text, runctl.c), or NULL */
    bool cached;          /* taken from benchmark.cache_file, not run (cache.h) */
    bool not_in_cache;    /* --cache-only and not in the cache: skipped (CANCELLED, not counted) */
} pd_bench_task;

typedef struct {
    const char *config_path;
    const char *workdir;   /* overrides benchmark.workdir */
    int executor;          /* -1: from config, else pd_executor_kind */
    int parallel;          /* 0: from config */
    bool resume;
    const char *resume_dir; /* NULL: latest run_NNN in workdir */
    bool dry_run;
    bool json;             /* --json (with --dry-run): the listing as JSON on stdout */
    bool quiet;
    bool progress;         /* --progress, or stderr a terminal: elapsed and ETA on the progress lines */
    pd_bench_control ctl; /* --fail-fast, --max-fail, --log-file, ... (control.h) */
    const char *machine;     /* --machine (or IOPS_MACHINE): machines: entry to merge */
    bool resolve;            /* --resolve: print the merged study and stop */
    bool use_cache;          /* --use-cache: take measured repetitions from benchmark.cache_file */
    bool cache_only;         /* --cache-only: only those; run nothing */
    double max_core_hours;   /* --max-core-hours (0: benchmark.max_core_hours) */
    double *time_estimates;  /* --time-estimate seconds (dry run), or NULL */
    size_t ntime_estimates;
    pd_results_layout results_layout; /* --results-layout */
} pd_bench_options;

typedef struct pd_bench_run {
    pd_bench_config cfg;
    pd_bench_matrix matrix;
    char run_dir[PATH_MAX];
    char **script_files;            /* run_<script>.sh of each script (pd_bench_script_at order) */
    char *python_parser;            /* run_dir/__iops_parser.py when a parser_script is set */
    char **extra_python_parsers;    /* scripts[1..]: run_dir/__iops_parser_<name>.py, or NULL */
    pd_bench_task *tasks;
    size_t ntasks;
    size_t done;    /* finished (this invocation + skipped) */
    bool quiet;
    bool progress;           /* elapsed and ETA on each [n/N] line */
    double progress_t0;      /* pd_monotonic() when this invocation started running */
    size_t progress_done0;   /* done then (skipped, cached): not counted in the ETA's mean */
    const char *executor_name;
    double results_written_at; /* monotonic time of the last results.csv write */
    pd_results_layout results_layout; /* results.csv's (never UNSET once the run is set up) */
    size_t unsaved_status;     /* status files that could not be written */
    pd_bench_control ctl;      /* run control (runctl.h) and the log's options (runlog.h) */
    size_t failed_now;         /* repetitions that failed in this invocation */
    bool stop_starting;        /* --fail-fast/--max-fail reached: start no more repetitions */
    pd_str programs_checked;   /* runctl.c: "\nNAME=0|1" per program checked */
    struct pd_runlog *log;     /* the run's log file (runlog.h), or NULL */
    pd_bench_budget budget;    /* max_core_hours (budget.h) */
    struct pd_bench_cache *cache; /* benchmark.cache_file, open (cache.h), or NULL */
    bool use_cache;            /* read it (--use-cache / --cache-only), not only write it */
    struct pd_status_rollup *rollup; /* __iops_status_rollup.json (status_rollup.h), or NULL */
    struct json_t *adaptive_results; /* search_method adaptive, at the end: IOPS's adaptive_results (owned) */
    size_t total_expected;           /* the index's total_expected when not ntasks (adaptive: IOPS's estimate) */
} pd_bench_run;

/* The k-th variable (a cfg index) in the order IOPS lists them in its files
 * (pd_bench_matrix.var_order). */
static inline size_t pd_bench_var_at(const pd_bench_run *run, size_t k)
{
    return run->matrix.var_order ? run->matrix.var_order[k] : k;
}

/* Runs a study end to end. Returns the exit status: 0 all succeeded,
 * 1 some repetitions failed, 2 configuration/usage error, 130 (SIGINT) or
 * 143 (SIGTERM) interrupted. */
int pd_bench_main(const pd_bench_options *opt);

/* Executor callbacks into the run. */
void pd_bench_task_started(pd_bench_run *run, pd_bench_task *t);
void pd_bench_task_finished(pd_bench_run *run, pd_bench_task *t);

/* The script file a task runs: run_<script>.sh. */
const char *pd_bench_task_script(const pd_bench_run *run, const pd_bench_task *t);

/* Writes the repetition's __iops_status.json; a succeeded repetition's
 * metrics go in it too ("metrics", as IOPS writes them), so that --resume
 * takes them from there instead of running its parser again. */
int pd_bench_write_status(const pd_bench_task *t, const pd_bench_run *run);
/* The same for an executor, with a warning on stderr when it fails (and
 * the run then exits 1: --resume trusts these files). */
void pd_bench_task_status(pd_bench_run *run, const pd_bench_task *t);

/* Executors: run the tasks whose state is PENDING, at most parallel at
 * once. Return 0, or 128 + the signal when interrupted (running tasks are
 * cancelled and marked so). A task running longer than benchmark.timeout ends TIMED_OUT. */
int pd_exec_local(pd_bench_run *run, int parallel);
int pd_exec_slurm(pd_bench_run *run, int parallel, double poll_interval_s);
/* --resume, before a repetition that did not succeed runs again: ends what
 * its previous attempt left running (paddiser killed with -9). Local: the
 * process group __paddiser_launch.json records, when its leader is alive
 * with the recorded start time on this host; SLURM: the job id in
 * __iops_status.json, scancelled when squeue lists it pending or running.
 * Says on stderr what it ended or could not check. */
void pd_bench_end_local_attempt(const pd_bench_task *t);
void pd_bench_end_slurm_attempt(const pd_bench_run *run, const pd_bench_task *t, const char *job_id);
/* What a task ending in state s counts as in the totals: failed for
 * FAILED and TIMED_OUT. */
bool pd_task_failed(pd_task_state s);

/* What an executor plugs into the shared scheduling loop (pd_exec_run). */
typedef struct {
    /* Starts t, already marked started: 0, or -1 (said why on stderr) when
     * it could not be started; the loop then marks it failed. */
    int (*start)(pd_bench_run *run, pd_bench_task *t, void *ctx);
    /* Waits until something may have finished (or a signal came) and
     * finishes the tasks that did, decrementing *running for each. */
    void (*collect)(pd_bench_run *run, int *running, void *ctx);
    /* Cancels every running task and marks it so. */
    void (*cancel)(pd_bench_run *run, void *ctx);
    void *ctx;
} pd_executor;

/* The loop: 0 when every pending task ran, 128 + the signal (130, 143)
 * when interrupted. */
int pd_exec_run(pd_bench_run *run, int parallel, const pd_executor *ex);

/* The sbatch command line for a task (argv, NULL-terminated, heap strings):
 * sbatch --parsable --job-name=<name> --chdir=<dir> --output=<dir>/stdout
 * --error=<dir>/stderr [--time=M:SS] <dir>/run_<script>.sh; --time from
 * benchmark.timeout unless the script's #SBATCH lines set a time limit.
 * Free with pd_free_argv. */
char **pd_slurm_submit_argv(const pd_bench_run *run, const pd_bench_task *t);
void pd_free_argv(char **argv);
/* Maps a SLURM job state (COMPLETED, FAILED, CANCELLED+, TIMEOUT, ...) to a
 * task state; PENDING when the job is not finished. */
pd_task_state pd_slurm_state(const char *state);

#endif
