/* Run-level summary __iops_resource_summary.csv (issue #3), computed from the
 * traces under run_dir/exec_NNNN/repetition_NNN/ exactly as
 * shared/spec/summary-metrics.md defines. User variables of an execution are
 * read from run_dir/exec_NNNN/__iops_params.json: one flat JSON object, keys
 * in the study's variable order, values numbers or strings.
 * Column list, units and number formatting: docs/summary.md. */
#ifndef PD_BENCH_SUMMARY_H
#define PD_BENCH_SUMMARY_H

#include <stdbool.h>
#include <stddef.h>

/* Writes run_dir/__iops_resource_summary.csv. Returns 1 when written, 0 when
 * there were no sample files at all (no summary, per the spec), -1 on error
 * with a message in err. */
int pd_summary_write(const char *run_dir, char *err, size_t errlen);

/* `paddiser bench --summarize RUN_DIR` (argv[0] is the command name; the
 * RUN_DIR may also be given bare or as --summarize=RUN_DIR). Returns the
 * process exit status: 0 written or nothing to summarize, 1 failed, 2 usage. */
int pd_summary_main(int argc, char **argv);

/* An ordered list of (name, formatted value) pairs: the metrics of one
 * repetition, or the variables of one execution. Zero-initialise. */
typedef struct {
    char *key;
    char *value;
} pd_summary_kv;

typedef struct {
    pd_summary_kv *items;
    size_t n, cap;
    bool oom; /* set once an insertion failed */
} pd_summary_kvs;

/* Appends key=value, or replaces the value when key is already there. */
void pd_summary_kvs_set(pd_summary_kvs *kv, const char *key, const char *value);
/* Value of key, or NULL. */
const char *pd_summary_kvs_get(const pd_summary_kvs *kv, const char *key);
void pd_summary_kvs_free(pd_summary_kvs *kv);

/* Metrics of one kind over a set of trace files (every host and attempt of a
 * repetition), appended to out in the spec's order, formatted as written to
 * the CSV. Unreadable files, files without the needed header columns and
 * malformed rows are skipped. Returns 0, or -1 when out of memory. */
int pd_summary_cpu_metrics(const char *const *paths, size_t n, pd_summary_kvs *out);
int pd_summary_gpu_metrics(const char *const *paths, size_t n, pd_summary_kvs *out);
int pd_summary_io_metrics(const char *const *paths, size_t n, pd_summary_kvs *out);

/* All metrics of one repetition directory, from every __iops_trace_*.csv,
 * __iops_gpu_trace_*.csv and __iops_io_trace_*.csv in it. A sampler whose
 * wrapper (__iops_runtime_sampler.sh, __iops_runtime_gpu_sampler.sh,
 * __iops_runtime_io_sampler.sh) is there but which wrote no trace reports its
 * counter columns as 0. Returns the number of sample files found (0 with out
 * still empty: no row for this repetition), or -1 with err. */
int pd_summary_repetition_metrics(const char *rep_dir, pd_summary_kvs *out, char *err,
                                  size_t errlen);

/* Variables of exec_dir/__iops_params.json, in file order, values rendered
 * like Python's str() (2, 0.5, 2.0, True, strings as is; null as empty).
 * Returns 1 when read, 0 when the file is missing or is not a JSON object
 * (reason in err; out untouched), -1 when out of memory. */
int pd_summary_read_params(const char *exec_dir, pd_summary_kvs *out, char *err, size_t errlen);

/* Renders a double like Python's repr(): shortest round-trip digits, "2.0"
 * for integral values, exponent form below 1e-4 and from 1e16. */
void pd_summary_format_py_float(double v, char *buf, size_t len);

#endif
