/* __iops_status_rollup.json: every repetition's __iops_status.json in one
 * file at the run root, as IOPS 3.5.8 keeps it
 * (luanteylo/iops:iops/results/status_rollup.py), so that `iops find` and
 * its watch mode read one file instead of every repetition directory:
 *
 *   {"benchmark": NAME, "repetitions": N, "complete": false|true,
 *    "executions": {"exec_0001": {"reps": {"1": {...status...}, ...}}}}
 *
 * The status files stay the source of truth; the roll-up is written at
 * most once per PD_STATUS_ROLLUP_INTERVAL_S (IOPS's flush_interval) while
 * the run goes, and once more, "complete": true, when it ends (IOPS's
 * close(complete=True), also after Ctrl-C). Writing it is best effort, as
 * in IOPS: a failure never fails the run. */
#ifndef PD_BENCH_STATUS_ROLLUP_H
#define PD_BENCH_STATUS_ROLLUP_H

#include <jansson.h>
#include <stdbool.h>

#define PD_STATUS_ROLLUP_FILE "__iops_status_rollup.json"
#define PD_STATUS_ROLLUP_INTERVAL_S 2.0

typedef struct pd_status_rollup pd_status_rollup;

/* NULL when out of memory (then nothing is written). */
pd_status_rollup *pd_status_rollup_open(const char *run_dir, const char *benchmark, int repetitions);
/* The latest status of one repetition (copied); written if the last write is
 * PD_STATUS_ROLLUP_INTERVAL_S old. r may be NULL. */
void pd_status_rollup_record(pd_status_rollup *r, int exec_id, int repetition, const json_t *status);
/* Writes what was recorded since the last write, if that write is
 * PD_STATUS_ROLLUP_INTERVAL_S old (the scheduling loop calls it). */
void pd_status_rollup_flush_due(pd_status_rollup *r);
/* Adds a repetition's status file from an earlier invocation (--resume,
 * cache) unless this one recorded it: the complete roll-up covers every
 * repetition directory. */
void pd_status_rollup_add_file(pd_status_rollup *r, int exec_id, int repetition, const char *status_path);
/* The final write, "complete": true; 0, or -1 with errno. */
int pd_status_rollup_close(pd_status_rollup *r);
void pd_status_rollup_free(pd_status_rollup *r);

#endif
