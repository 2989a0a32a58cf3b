/* The execution cache of `paddiser bench` (benchmark.cache_file, --use-cache,
 * --cache-only): IOPS's SQLite schema (luanteylo/iops:
 * iops/cache/execution_cache.py), one row per (parameters, repetition) that
 * succeeded. A repetition whose parameters (all variables but
 * benchmark.cache_exclude_vars) and repetition number were measured before
 * is taken from it instead of running.
 *
 * Built for lock-hostile filesystems (NFS, Lustre, GPFS): a connection per
 * operation, rollback journal (no WAL, which needs shared memory), a 60 s
 * busy timeout, writes in one short BEGIN IMMEDIATE transaction, retried
 * with backoff when the database stays locked; where the filesystem is a
 * network one, or POSIX locks fail with an I/O error, SQLite's
 * "unix-dotfile" VFS locks with a lock file instead of fcntl(). */
#ifndef PD_BENCH_CACHE_H
#define PD_BENCH_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "bench/config.h"

typedef struct pd_bench_cache pd_bench_cache;

/* Opens (creating the file, its directory and the table when absent).
 * NULL with a message in err. */
pd_bench_cache *pd_bench_cache_open(const char *path, char *err, size_t errlen);
void pd_bench_cache_close(pd_bench_cache *c);

/* The cache key of a repetition's variable values (cfg->nvars of them):
 * Python's json.dumps(params, sort_keys=True) of all variables but
 * cache_exclude_vars, after IOPS's normalisation (a string that spells a
 * number and reads back the same is that number); its MD5 is IOPS's
 * param_hash, so the file is shared with IOPS. Heap string. */
char *pd_bench_cache_params(const pd_bench_config *cfg, const pd_val *values);

/* Looks (params, repetition) up: 1 and the metrics (cfg->nmetrics texts,
 * NULL where missing; heap) in *metrics, and the recorded duration in
 * *duration_s (0 when unknown), 0 when absent, -1 on error (err). */
int pd_bench_cache_get(pd_bench_cache *c, const pd_bench_config *cfg, const char *params, int repetition,
                       char ***metrics, double *duration_s, char *err, size_t errlen);

/* Stores a succeeded repetition (replacing an earlier entry). 0, or -1 (err). */
int pd_bench_cache_put(pd_bench_cache *c, const pd_bench_config *cfg, const char *params, int repetition,
                       char *const *metrics, double start, double end, char *err, size_t errlen);

/* The SQLite VFS for a database at path: "unix-dotfile" on a network or
 * FUSE filesystem (lock files instead of fcntl() locks), else NULL. */
const char *pd_bench_sqlite_vfs(const char *path);

#endif

/* ---- the run's use of it (run.c calls these) */
struct pd_bench_run;
struct pd_bench_task;
/* Opens benchmark.cache_file when set (every run writes its succeeded
 * repetitions there; use_cache: also reads). dry (--dry-run): only to
 * read, and only a file that exists. 0, or -1 after saying why. */
int pd_bench_cache_setup(struct pd_bench_run *run, bool use_cache, bool cache_only, bool dry);
/* --dry-run with --use-cache/--cache-only: marks the repetitions the cache
 * holds (cached) or lacks (not_in_cache) and says how many. */
void pd_bench_cache_preview(struct pd_bench_run *run, bool cache_only, FILE *out);
/* Before a repetition is laid out: true when it is not to run, i.e. it was
 * taken from the cache (SUCCEEDED, cached, its status file written) or,
 * with cache_only, is not in it (not_in_cache). dry: no files (--dry-run). */
bool pd_bench_cache_take(struct pd_bench_run *run, struct pd_bench_task *t, bool cache_only, bool dry);
/* After a repetition ended: a succeeded one goes into the cache. */
void pd_bench_cache_record(struct pd_bench_run *run, const struct pd_bench_task *t);
/* The line saying what the cache gave ("" when no cache was read). */
void pd_bench_cache_report(const struct pd_bench_run *run, FILE *out);
