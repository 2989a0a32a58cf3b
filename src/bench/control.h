/* The options of `paddiser bench` that control a run beyond the study file
 * (runctl.h: stopping after failures, missing metrics, the program check;
 * runlog.h: the log file). Its own header so that run.h can hold them
 * without depending on those modules. */
#ifndef PD_BENCH_CONTROL_H
#define PD_BENCH_CONTROL_H

#include <stdbool.h>

typedef struct {
    long max_fail;             /* stop starting repetitions after this many failed (0: never); --fail-fast is 1 */
    bool missing_metric_fails; /* --fail-on-missing-metric */
    bool no_program_check;     /* --no-program-check */
    const char *log_file;      /* --log-file, or NULL: RUN_DIR/paddiser.log */
    int log_level;             /* pd_log_level (runlog.h); 0 is DEBUG, the default is INFO */
    bool log_level_set;
    int argc;                  /* the command line, for the log */
    char **argv;
} pd_bench_control;

#endif
