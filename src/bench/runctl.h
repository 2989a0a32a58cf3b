/* Run control of `paddiser bench` beyond what the study file says:
 * stopping after failures (--fail-fast, --max-fail N), failing a
 * repetition whose metrics are missing (--fail-on-missing-metric), and
 * checking, before anything runs, that the program the study's command
 * starts exists. run.c calls these as hooks; the log options are
 * runlog.h's. */
#ifndef PD_BENCH_RUNCTL_H
#define PD_BENCH_RUNCTL_H

#include <stdbool.h>
#include <stddef.h>

#include "bench/run.h"

/* The program a command starts: its first word, after leading VAR=value
 * assignments; "" when the command is empty or its first word is one the
 * shell expands ($, quotes, globs, redirections: not checkable). buf gets
 * the word. */
void pd_command_program(const char *command, char *buf, size_t len);

/* Whether prog can be started by bash in dir: a builtin or keyword, a path
 * (with a '/'; relative ones are not checked: they may be made by the run)
 * that is an executable file, or a name found on PATH. */
bool pd_program_exists(const char *prog);

/* Render-time check of one execution's rendered command (called for its
 * first repetition). A missing program is an error in errors (local
 * executor: nothing runs) or a warning on stderr (slurm: the compute nodes'
 * PATH may differ; --dry-run: it may be checked elsewhere), once per
 * program. 0, or -1 when it is an error. */
int pd_bench_check_command(pd_bench_run *run, const pd_bench_exec *ex, const char *command, bool dry_run,
                           pd_str *errors);

/* After a repetition's final state is known (pd_bench_task_finished): the
 * missing-metric rule, the log's line for it, then the failure count and
 * the --max-fail stop. */
void pd_bench_control_finished(pd_bench_run *run, pd_bench_task *t);

/* After the executor returned: says on stderr (and in the log) that the run
 * stopped early and how to go on. */
void pd_bench_control_report(pd_bench_run *run, const char *config_path);

/* Frees what the checks kept. */
void pd_bench_control_free(pd_bench_run *run);

#endif
