/* output.sink.type sqlite: the run's succeeded repetitions as rows of one
 * table (output.sink.table, default "results") of the SQLite database at
 * output.sink.path (default run_dir/results.db), in IOPS's columns
 * (luanteylo/iops: iops/results/writer.py, _write_sqlite): benchmark.name,
 * benchmark.description, execution.execution_id, execution.repetition,
 * execution.repetitions, execution.workdir, execution.execution_dir,
 * vars.<name>, metadata.executor_status, metadata.returncode,
 * metrics.<name>. Rows are appended (columns a new study brings are added
 * to the table); a row of the same run, execution and repetition is
 * replaced, so a resumed run leaves each repetition once. mode overwrite
 * empties the table first. One BEGIN IMMEDIATE transaction, 60 s busy
 * timeout, rollback journal (cache.h says why). */
#ifndef PD_BENCH_SINK_SQLITE_H
#define PD_BENCH_SINK_SQLITE_H

struct pd_bench_run;
/* 0, or -1 after saying why on stderr. */
int pd_bench_sink_sqlite(const struct pd_bench_run *run, const char *path);

#endif
