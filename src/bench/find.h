/* `paddiser find`: the executions of a run directory, filtered by variable
 * values and status, printed the way IOPS 3.5.8's `iops find` prints them
 * (luanteylo/iops:iops/results/find.py), and its watch mode: a status
 * table refreshed until every execution has finished. It reads what
 * `paddiser bench` (or IOPS) wrote: __iops_index.json,
 * __iops_run_metadata.json, exec_NNNN/__iops_params.json and each
 * repetition's __iops_status.json. */
#ifndef PD_BENCH_FIND_H
#define PD_BENCH_FIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

typedef struct {
    const char *path;            /* run directory, workdir of run_NNN, or one exec_NNNN */
    const char *const *filters;  /* VAR=VALUE */
    size_t nfilters;
    const char *status;          /* --status, or NULL */
    const char *hide;            /* --hide COL1,COL2, or NULL */
    bool show_command;
    bool full;                   /* no truncation of values at 30 characters */
    bool watch;
    double interval_s;           /* watch: seconds between refreshes */
} pd_find_options;

/* IOPS's loose match of a stored value's text against a filter's: equal
 * texts, the same boolean (true/false, any case), or equal numbers. */
bool pd_find_value_matches(const char *actual, const char *expected);

/* The status of an execution from its repetitions' statuses: RUNNING when
 * one runs, else PENDING when one waits, else FAILED when one failed (or
 * ERROR), else TIMEOUT, else CANCELLED, SUCCEEDED when all did, UNKNOWN
 * otherwise (IOPS's roll-up, with paddiser's TIMEOUT and CANCELLED). */
const char *pd_find_rollup(const char *const *statuses, size_t n);

/* Prints to out; 0, 1 when the path holds no run (said on stderr), 2 for a
 * bad filter. Watch mode returns when every execution has finished or on
 * SIGINT/SIGTERM (0). */
int pd_find_main(const pd_find_options *o, FILE *out);

#endif
