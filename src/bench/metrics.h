/* Metrics of one repetition, read from the file parser.file names:
 *  - with parser.parser_script and a python3 on PATH: the script's
 *    parse(file_path) is called and must return a dict;
 *  - otherwise natively: a JSON object (dotted metric names reach into
 *    nested objects), else "key=value" lines (last one wins). */
#ifndef PD_BENCH_METRICS_H
#define PD_BENCH_METRICS_H

#include <stddef.h>

#include "common/util.h"

/* Fills values[i] (heap strings, NULL when absent) for each of the n metric
 * names from the file's text. Returns how many were found. */
size_t pd_metrics_from_text(const char *text, const char *const *names, size_t n, char **values);

/* Reads path and parses it. python_parser: path of a Python file defining
 * parse(), or NULL. log_path: where a parser script's stderr goes. Returns
 * the number of metrics found, or < 0 with err (file missing, parser failed). */
int pd_metrics_parse_file(const char *path, const char *python_parser, const char *log_path,
                          const char *const *names, size_t n, char **values, char *err, size_t errlen);
/* Same; context_json (or NULL) is a JSON object whose keys become globals of
 * the parser script before it is loaded, as IOPS provides them (vars, env,
 * execution_id, execution_dir, workdir, log_dir, repetition, repetitions);
 * os_env is always set from the environment. The parser script gets
 * timeout_s (<= 0: no bound); past it, or on SIGINT/SIGTERM, it is stopped
 * and PD_PROC_TIMED_OUT or PD_PROC_INTERRUPTED (proc.h) is returned with
 * err. Its stderr goes straight to log_path (removed when empty); what
 * parse() returns is read up to 64 MiB. */
int pd_metrics_parse_file_ctx(const char *path, const char *python_parser, const char *log_path,
                              const char *context_json, double timeout_s, const char *const *names, size_t n,
                              char **values, char *err, size_t errlen);

/* Path of an executable found on PATH (heap), or NULL. */
char *pd_find_in_path(const char *prog);

#endif
