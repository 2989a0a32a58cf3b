/* The run metadata IOPS 3.5.8's own tools read (`iops find`, `iops
 * report`), written by paddiser bench, and the reading side: IOPS run
 * directories (with their runs/ level) for --summarize and the report.
 * What IOPS writes and reads is described in docs/bench.md ("Compatibility
 * with IOPS"); tests/bench_iops_meta.sh checks it against committed IOPS
 * 3.5.8 fixtures. Every file is written like the status file: a temporary
 * created exclusively (never through a link), renamed over the old name. */
#ifndef PD_BENCH_IOPS_META_H
#define PD_BENCH_IOPS_META_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "bench/run.h"
#include "common/csv.h"

#define PD_IOPS_INDEX_FILE "__iops_index.json"
#define PD_IOPS_RUN_METADATA_FILE "__iops_run_metadata.json"
#define PD_IOPS_RESULTS_FILE "__iops_results.csv"
/* The IOPS version whose file formats these are. */
#define PD_IOPS_VERSION "3.5.8"

/* The status IOPS writes for a state: PENDING, RUNNING, SUCCEEDED, FAILED,
 * CANCELLED, TIMEOUT. */
const char *pd_iops_status_name(pd_task_state s);
/* A status file's "status" back to a state: IOPS's names, and paddiser's
 * lower-case ones of older run directories (succeeded, timed_out, ...).
 * ERROR counts as failed. Returns false for anything else. */
bool pd_iops_status_parse(const char *status, pd_task_state *s);

/* A repetition's __iops_status.json object: IOPS's fields (status, error,
 * end_time, cached, duration_seconds, metrics, submission_time, job_start)
 * plus paddiser's (exit_code, start, end, duration_s, executor, job_id). */
json_t *pd_iops_status_object(const pd_bench_task *t, const pd_bench_run *run);

/* A metric's text as a typed JSON value (an integer or a real when the text
 * is one written the way Python prints it, so that it reads back the same;
 * a string otherwise), and back. pd_iops_metric_text returns NULL for
 * null or a value it does not know (free the result). */
json_t *pd_iops_metric_json(const char *text);
char *pd_iops_metric_text(const json_t *v);
/* A variable's value as JSON (None: null), as IOPS writes values. */
json_t *pd_iops_val_json(const pd_val *v);

/* run_dir/__iops_index.json: benchmark, total_expected, repetitions and
 * every execution's path, params and command (commands[e] is the command of
 * matrix execution e's first repetition, or NULL). 0, or -1 with errno. */
int pd_iops_write_index(const pd_bench_run *run, char *const *commands);
/* run_dir/__iops_run_metadata.json, for `iops report` and `iops find`'s
 * header: start and end are the run's wall-clock times (end 0: unknown). */
int pd_iops_write_run_metadata(const pd_bench_run *run, double start, double end);
/* IOPS's first results columns, before vars.*: benchmark.* and execution.*
 * (the CSV's and the SQLite sink's). */
#define PD_IOPS_RESULTS_NHEAD 7
extern const char *const pd_iops_results_head[PD_IOPS_RESULTS_NHEAD];
/* IOPS's flattened results layout, the rows IOPS 3.5.8's CSV sink writes
 * (iops/results/writer.py): benchmark.name, benchmark.description,
 * execution.{execution_id,repetition,repetitions,workdir,execution_dir},
 * vars.* (IOPS's variable order), labels.* (command.labels),
 * metadata.executor_status, metadata.returncode, metrics.*. The header
 * line, and a repetition's row (run.c writes the succeeded ones to
 * results.csv, or to __iops_results.csv beside a short results.csv). */
void pd_iops_results_header(const pd_bench_run *run, pd_str *out);
void pd_iops_results_row(const pd_bench_run *run, const pd_bench_task *t, pd_str *out);
/* The run directory's file that holds the flattened rows, which
 * __iops_run_metadata.json names for `iops report` and --summarize:
 * results.csv itself, or __iops_results.csv when results.csv has the short
 * layout. */
const char *pd_iops_results_file(pd_results_layout layout);

/* Where a run directory keeps its exec_NNNN directories: run_dir itself
 * (paddiser's layout) or run_dir/runs (IOPS's). Returns true and the path
 * in buf, or false when neither has any exec_NNNN directory. */
bool pd_iops_exec_root(const char *run_dir, char *buf, size_t len);
/* The message for a directory that holds no run (no exec_NNNN directory,
 * neither at its top nor under runs/), naming the run_NNN directories it
 * holds, if any, to pass instead. */
void pd_iops_no_run_message(const char *dir, char *buf, size_t len);

/* IOPS's flattened results (execution.execution_id, execution.repetition,
 * vars.*, metrics.*) as results.csv-shaped text: execution_id as exec_NNNN,
 * repetition, the variables, the metrics; rows whose
 * metadata.executor_status is not SUCCEEDED are left out. NULL when csv is
 * not in that layout (or out of memory). */
char *pd_iops_results_to_short(const pd_csv *csv);

#endif
