/* The run's log file (--log-file, --log-level): the version, host, command
 * line, start and end times of every invocation on a run directory (a
 * --resume appends to it), and one line per repetition event. Lines look
 * like IOPS's: "2026-12-04 05:13:37 | INFO  | message". The file is
 * created without following a link (O_NOFOLLOW | O_CREAT | O_EXCL); an
 * existing one (a --resume) is appended to when it is a regular file and
 * not a link. */
#ifndef PD_BENCH_RUNLOG_H
#define PD_BENCH_RUNLOG_H

#include <stdbool.h>

#include "bench/run.h"

typedef enum { PD_LOG_DEBUG, PD_LOG_INFO, PD_LOG_WARNING, PD_LOG_ERROR, PD_LOG_CRITICAL } pd_log_level;

#define PD_RUNLOG_DEFAULT_NAME "paddiser.log"

/* DEBUG, INFO, WARNING, ERROR, CRITICAL (any case). */
bool pd_log_level_parse(const char *name, int *level);
const char *pd_log_level_name(int level);

/* Opens the log (run->ctl.log_file, relative to the current directory, or
 * RUN_DIR/paddiser.log) and writes the invocation's header. 0, or -1 after
 * saying why on stderr. */
int pd_runlog_open(pd_bench_run *run, const char *config_path, bool resume, double started);
/* A line at level (dropped below --log-level; nothing without a log). */
void pd_runlog(pd_bench_run *run, int level, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void pd_runlog_task_started(pd_bench_run *run, const pd_bench_task *t);
void pd_runlog_task_finished(pd_bench_run *run, const pd_bench_task *t);
/* The end time, the totals and the exit status; closes the log. */
void pd_runlog_close(pd_bench_run *run, int status, double started);

#endif
