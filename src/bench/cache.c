/* benchmark.cache_file: see cache.h. */
#include "bench/cache.h"

#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include "bench/iops_meta.h"
#include "bench/md5.h"
#include "bench/run.h"
#include "common/util.h"

#define BUSY_TIMEOUT_MS 60000 /* IOPS's DEFAULT_SQLITE_TIMEOUT: slow filesystems */
#define MAX_TRIES 5           /* IOPS's MAX_RETRIES, from 0.5 s doubling */

struct pd_bench_cache {
    char *path;
    const char *vfs; /* NULL: SQLite's default (fcntl locks) */
};

static const char SCHEMA[] = "CREATE TABLE IF NOT EXISTS cached_executions ("
                             " id INTEGER PRIMARY KEY AUTOINCREMENT,"
                             " param_hash TEXT NOT NULL,"
                             " params_json TEXT NOT NULL,"
                             " repetition INTEGER NOT NULL,"
                             " metrics_json TEXT,"
                             " metadata_json TEXT,"
                             " created_at TEXT NOT NULL,"
                             " UNIQUE(param_hash, repetition));"
                             "CREATE INDEX IF NOT EXISTS idx_param_hash ON cached_executions(param_hash, repetition);";

/* Filesystems whose POSIX locks are missing or unreliable. */
static bool lock_hostile_fs(const char *path)
{
    char *dir = pd_strdup(path), *slash = dir ? strrchr(dir, '/') : NULL;
    struct statfs st;
    if (slash)
        slash[slash == dir] = '\0'; /* "/db" -> "/" */
    int rc = dir ? statfs(slash ? dir : ".", &st) : -1;
    free(dir);
    if (rc != 0)
        return false;
    switch ((unsigned long)st.f_type) {
    case 0x6969UL:     /* NFS */
    case 0x517BUL:     /* SMB */
    case 0xFF534D42UL: /* CIFS */
    case 0xFE534D42UL: /* SMB2 */
    case 0x0BD00BD0UL: /* Lustre */
    case 0x47504653UL: /* GPFS */
    case 0x00C36400UL: /* CephFS */
    case 0x19830326UL: /* BeeGFS */
    case 0x65735546UL: /* FUSE (sshfs, ...) */
        return true;
    default:
        return false;
    }
}

const char *pd_bench_sqlite_vfs(const char *path) { return lock_hostile_fs(path) ? "unix-dotfile" : NULL; }

/* Still locked after every retry: with lock files, one a killed harness
 * left behind is the likely cause; say which to remove. */
static void stale_lock_hint(const pd_bench_cache *c, char *err, size_t errlen)
{
    size_t n = strlen(err);
    if (c->vfs && n + 1 < errlen)
        snprintf(err + n, errlen - n, " (locked with the lock file %s.lock: if no harness uses the cache, a killed "
                                      "one left it; remove it)", c->path);
}

static bool busy(int rc) { return (rc & 0xff) == SQLITE_BUSY || (rc & 0xff) == SQLITE_LOCKED; }

static void backoff(int attempt)
{
    struct timespec ts = {0, 500000000L};
    for (int i = 0; i < attempt; i++) { /* 0.5, 1, 2, 4 s */
        ts.tv_nsec *= 2;
        while (ts.tv_nsec >= 1000000000L)
            ts.tv_sec++, ts.tv_nsec -= 1000000000L;
    }
    nanosleep(&ts, NULL);
}

static sqlite3 *connect(pd_bench_cache *c, char *err, size_t errlen)
{
    sqlite3 *db = NULL;
    int rc = sqlite3_open_v2(c->path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, c->vfs);
    if (rc != SQLITE_OK) {
        snprintf(err, errlen, "cannot open %s: %s", c->path, db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
        sqlite3_close(db);
        return NULL;
    }
    sqlite3_busy_timeout(db, BUSY_TIMEOUT_MS);
    return db;
}

/* Runs sql (no rows) in one BEGIN IMMEDIATE transaction, or a SELECT
 * through step; retries while the database stays locked. */
static int exec_write(pd_bench_cache *c, const char *sql, const char *const *args, int nargs, long long rep,
                      char *err, size_t errlen)
{
    int rc = SQLITE_ERROR;
    for (int attempt = 0; attempt < MAX_TRIES; attempt++) {
        sqlite3 *db = connect(c, err, errlen);
        if (!db)
            return -1;
        rc = sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
        if (rc == SQLITE_OK) {
            sqlite3_stmt *st = NULL;
            rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
            for (int i = 0; rc == SQLITE_OK && i < nargs; i++)
                rc = args[i] ? sqlite3_bind_text(st, i + 1, args[i], -1, SQLITE_TRANSIENT)
                             : sqlite3_bind_int64(st, i + 1, rep);
            if (rc == SQLITE_OK)
                rc = sqlite3_step(st);
            sqlite3_finalize(st);
            if (rc == SQLITE_DONE)
                rc = sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
            if (rc != SQLITE_OK)
                sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
        }
        if (rc != SQLITE_OK)
            snprintf(err, errlen, "%s: %s", c->path, sqlite3_errmsg(db));
        sqlite3_close(db);
        if (rc == SQLITE_OK)
            return 0;
        if (!busy(rc))
            return -1;
        backoff(attempt);
    }
    stale_lock_hint(c, err, errlen);
    return -1;
}

pd_bench_cache *pd_bench_cache_open(const char *path, char *err, size_t errlen)
{
    pd_bench_cache *c = calloc(1, sizeof *c);
    if (!c || !(c->path = pd_strdup(path))) {
        free(c);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    char *dir = pd_strdup(path), *slash = dir ? strrchr(dir, '/') : NULL;
    if (slash && slash != dir) {
        *slash = '\0';
        pd_mkdir_p(dir, 0755);
    }
    free(dir);
    c->vfs = pd_bench_sqlite_vfs(path);
    for (int pass = 0; pass < 2; pass++) {
        char *msg = NULL;
        int rc = SQLITE_ERROR;
        for (int attempt = 0; attempt < MAX_TRIES; attempt++) {
            sqlite3 *db = connect(c, err, errlen);
            if (!db) {
                pd_bench_cache_close(c);
                return NULL;
            }
            /* the rollback journal: WAL needs shared memory, which network
             * filesystems do not share between hosts */
            rc = sqlite3_exec(db, "PRAGMA journal_mode=DELETE;", NULL, NULL, &msg);
            if (rc == SQLITE_OK)
                rc = sqlite3_exec(db, SCHEMA, NULL, NULL, &msg);
            if (rc != SQLITE_OK)
                snprintf(err, errlen, "%s: %s", path, msg ? msg : sqlite3_errstr(rc));
            sqlite3_free(msg);
            msg = NULL;
            sqlite3_close(db);
            if (!busy(rc))
                break;
            backoff(attempt);
        }
        if (rc == SQLITE_OK)
            return c;
        if (busy(rc))
            stale_lock_hint(c, err, errlen);
        /* fcntl() locks that fail with an I/O error (a filesystem that
         * does not support them): lock with a lock file instead */
        if ((rc & 0xff) != SQLITE_IOERR || c->vfs)
            break;
        c->vfs = "unix-dotfile";
    }
    pd_bench_cache_close(c);
    return NULL;
}

void pd_bench_cache_close(pd_bench_cache *c)
{
    if (!c)
        return;
    free(c->path);
    free(c);
}

static bool excluded(const pd_bench_config *cfg, const char *name)
{
    if (!strncmp(name, "__", 2)) /* IOPS's internal keys */
        return true;
    for (size_t i = 0; i < cfg->ncache_exclude_vars; i++)
        if (!strcmp(cfg->cache_exclude_vars[i], name))
            return true;
    return false;
}

static int by_name(const void *a, const void *b)
{
    return strcmp((*(const pd_bench_var *const *)a)->name, (*(const pd_bench_var *const *)b)->name);
}

/* One code point of UTF-8 text at *p (advanced); an invalid byte stands for
 * itself. */
static unsigned long utf8_next(const unsigned char **p)
{
    const unsigned char *s = *p;
    int n = s[0] >= 0xF0 && s[0] < 0xF5 ? 3 : s[0] >= 0xE0 ? 2 : s[0] >= 0xC2 && s[0] < 0xE0 ? 1 : 0;
    if (s[0] < 0x80 || (n == 2 && s[0] >= 0xF0))
        n = 0;
    unsigned long cp = n ? s[0] & (0x3F >> n) : s[0];
    for (int i = 1; i <= n; i++) {
        if ((s[i] & 0xC0) != 0x80) {
            *p = s + 1;
            return s[0];
        }
        cp = cp << 6 | (s[i] & 0x3F);
    }
    *p = s + 1 + n;
    return cp;
}

/* A string as Python's json.dumps writes it (ensure_ascii: everything
 * outside ' '..'~' escaped, astral code points as surrogate pairs). */
static void py_json_string(pd_str *out, const char *text)
{
    pd_str_append(out, "\"");
    for (const unsigned char *p = (const unsigned char *)text; *p;) {
        unsigned long c = utf8_next(&p);
        switch (c) {
        case '"': pd_str_append(out, "\\\""); break;
        case '\\': pd_str_append(out, "\\\\"); break;
        case '\n': pd_str_append(out, "\\n"); break;
        case '\r': pd_str_append(out, "\\r"); break;
        case '\t': pd_str_append(out, "\\t"); break;
        case '\b': pd_str_append(out, "\\b"); break;
        case '\f': pd_str_append(out, "\\f"); break;
        default:
            if (c >= 0x20 && c <= 0x7E)
                pd_str_printf(out, "%c", (int)c);
            else if (c < 0x10000)
                pd_str_printf(out, "\\u%04lx", c);
            else
                pd_str_printf(out, "\\u%04lx\\u%04lx", 0xD800 + ((c - 0x10000) >> 10), 0xDC00 + ((c - 0x10000) & 0x3FF));
        }
    }
    pd_str_append(out, "\"");
}

/* A value as Python's json.dumps writes it (floats as repr, NaN, Infinity). */
static void py_json(pd_str *out, const pd_val *v)
{
    char buf[64];
    switch (v->kind) {
    case PD_VAL_BOOL: pd_str_append(out, v->b ? "true" : "false"); break;
    case PD_VAL_INT: pd_str_printf(out, "%lld", v->i); break;
    case PD_VAL_FLOAT:
        if (isnan(v->f))
            pd_str_append(out, "NaN");
        else if (isinf(v->f))
            pd_str_append(out, v->f < 0 ? "-Infinity" : "Infinity");
        else {
            pd_format_float(buf, sizeof buf, v->f);
            pd_str_append(out, buf);
        }
        break;
    case PD_VAL_STR: py_json_string(out, v->s); break;
    case PD_VAL_LIST:
        pd_str_append(out, "[");
        for (size_t i = 0; i < v->n; i++) {
            pd_str_append(out, i ? ", " : "");
            py_json(out, &v->items[i]);
        }
        pd_str_append(out, "]");
        break;
    default: pd_str_append(out, "null"); break;
    }
}

/* IOPS's _normalize_value: a string becomes the number it spells when the
 * number reads back as the very same string ("8" -> 8, "1.5" -> 1.5; "08",
 * "1e3" and " 8" stay strings). */
static void py_json_normalised(pd_str *out, const pd_val *v)
{
    long n;
    char back[64], *end;
    if (v->kind == PD_VAL_STR && pd_parse_long(v->s, &n) && (snprintf(back, sizeof back, "%ld", n), !strcmp(back, v->s))) {
        pd_str_printf(out, "%ld", n);
        return;
    }
    if (v->kind == PD_VAL_STR && *v->s) {
        double d = strtod(v->s, &end);
        if (!*end && isfinite(d) && (pd_format_float(back, sizeof back, d), !strcmp(back, v->s))) {
            pd_str_append(out, back);
            return;
        }
    }
    py_json(out, v);
}

char *pd_bench_cache_params(const pd_bench_config *cfg, const pd_val *values)
{
    const pd_bench_var **order = calloc(cfg->nvars ? cfg->nvars : 1, sizeof *order);
    if (!order)
        return NULL;
    for (size_t i = 0; i < cfg->nvars; i++)
        order[i] = &cfg->vars[i];
    qsort(order, cfg->nvars, sizeof *order, by_name);
    /* json.dumps(params, sort_keys=True): ", " and ": " separators */
    pd_str s = {0};
    pd_str_append(&s, "{");
    bool first = true;
    for (size_t k = 0; k < cfg->nvars; k++) {
        size_t i = (size_t)(order[k] - cfg->vars);
        if (excluded(cfg, cfg->vars[i].name))
            continue;
        pd_str_append(&s, first ? "" : ", ");
        first = false;
        py_json_string(&s, cfg->vars[i].name);
        pd_str_append(&s, ": ");
        py_json_normalised(&s, &values[i]);
    }
    pd_str_append(&s, "}");
    free(order);
    return pd_str_take(&s);
}

/* IOPS's param_hash: the MD5 of the parameters' JSON. */
static void params_hash(const char *params, char out[33]) { pd_md5_hex(params, strlen(params), out); }

static void iso_time(double t, char *buf, size_t len)
{
    time_t s = (time_t)t;
    struct tm tm;
    localtime_r(&s, &tm);
    size_t n = strftime(buf, len, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf + n, len - n, ".%06ld", (long)((t - (double)s) * 1e6));
}

int pd_bench_cache_get(pd_bench_cache *c, const pd_bench_config *cfg, const char *params, int repetition,
                       char ***metrics, double *duration_s, char *err, size_t errlen)
{
    char hash[33];
    params_hash(params, hash);
    *metrics = NULL;
    *duration_s = 0;
    int found = -1;
    for (int attempt = 0; attempt < MAX_TRIES && found < 0; attempt++) {
        sqlite3 *db = connect(c, err, errlen);
        if (!db)
            return -1;
        sqlite3_stmt *st = NULL;
        /* the newest entry, as IOPS reads a rebuilt cache with duplicates */
        int rc = sqlite3_prepare_v2(db,
                                    "SELECT metrics_json, metadata_json FROM cached_executions WHERE param_hash = ?1 "
                                    "AND repetition = ?2 ORDER BY created_at DESC LIMIT 1",
                                    -1, &st, NULL);
        if (rc == SQLITE_OK) {
            sqlite3_bind_text(st, 1, hash, -1, SQLITE_STATIC);
            sqlite3_bind_int(st, 2, repetition);
            rc = sqlite3_step(st);
        }
        if (rc == SQLITE_ROW) {
            found = 1;
            json_t *m = json_loads((const char *)sqlite3_column_text(st, 0) ? (const char *)sqlite3_column_text(st, 0)
                                                                              : "{}",
                                   0, NULL);
            json_t *md = json_loads(sqlite3_column_text(st, 1) ? (const char *)sqlite3_column_text(st, 1) : "{}", 0,
                                    NULL);
            *metrics = calloc(cfg->nmetrics ? cfg->nmetrics : 1, sizeof **metrics);
            for (size_t i = 0; *metrics && i < cfg->nmetrics; i++) {
                json_t *v = json_object_get(m, cfg->metrics[i]);
                (*metrics)[i] = v ? pd_iops_metric_text(v) : NULL;
            }
            json_t *d = json_object_get(md, "duration_seconds");
            if (json_is_number(d))
                *duration_s = json_number_value(d);
            json_decref(m);
            json_decref(md);
            if (!*metrics) {
                snprintf(err, errlen, "out of memory");
                found = -1;
                attempt = MAX_TRIES;
            }
        } else if (rc == SQLITE_DONE) {
            found = 0;
        } else {
            snprintf(err, errlen, "%s: %s", c->path, sqlite3_errmsg(db));
            if (!busy(rc))
                attempt = MAX_TRIES;
        }
        sqlite3_finalize(st);
        sqlite3_close(db);
        if (found < 0 && attempt < MAX_TRIES - 1)
            backoff(attempt);
    }
    return found;
}

int pd_bench_cache_put(pd_bench_cache *c, const pd_bench_config *cfg, const char *params, int repetition,
                       char *const *metrics, double start, double end, char *err, size_t errlen)
{
    char hash[33], now[64], s0[64], s1[64];
    params_hash(params, hash);
    iso_time(pd_now(), now, sizeof now);
    iso_time(start, s0, sizeof s0);
    iso_time(end, s1, sizeof s1);
    json_t *m = json_object(), *md = json_pack("{s:s, s:i, s:s, s:s, s:f}", "__executor_status", "SUCCEEDED",
                                               "__returncode", 0, "__start", s0, "__end", s1, "duration_seconds",
                                               end > start ? end - start : 0.0);
    for (size_t i = 0; m && i < cfg->nmetrics; i++)
        if (metrics && metrics[i])
            json_object_set_new(m, cfg->metrics[i], pd_iops_metric_json(metrics[i]));
    char *mj = m ? json_dumps(m, JSON_COMPACT | JSON_REAL_PRECISION(17)) : NULL;
    char *mdj = md ? json_dumps(md, JSON_COMPACT | JSON_REAL_PRECISION(17)) : NULL;
    json_decref(m);
    json_decref(md);
    int rc = -1;
    if (!mj || !mdj) {
        snprintf(err, errlen, "out of memory");
    } else {
        /* IOPS's store_result: one row per (hash, repetition), the latest wins */
        const char *args[] = {hash, params, NULL, mj, mdj, now};
        rc = exec_write(c,
                        "INSERT INTO cached_executions (param_hash, params_json, repetition, metrics_json, "
                        "metadata_json, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT(param_hash, "
                        "repetition) DO UPDATE SET params_json = excluded.params_json, metrics_json = "
                        "excluded.metrics_json, metadata_json = excluded.metadata_json, created_at = "
                        "excluded.created_at",
                        args, 6, repetition, err, errlen);
    }
    free(mj);
    free(mdj);
    return rc;
}

/* ---------------------------------------------------------- the run */

int pd_bench_cache_setup(pd_bench_run *run, bool use_cache, bool cache_only, bool dry)
{
    if (!run->cfg.cache_file) {
        if (use_cache || cache_only) {
            fprintf(stderr, "paddiser bench: --%s needs benchmark.cache_file in the study\n",
                    cache_only ? "cache-only" : "use-cache");
            return -1;
        }
        return 0;
    }
    if (dry && (!(use_cache || cache_only) || access(run->cfg.cache_file, F_OK) != 0))
        return 0; /* --dry-run creates nothing: no cache file yet is an empty cache */
    char err[PATH_MAX + 256];
    if (!(run->cache = pd_bench_cache_open(run->cfg.cache_file, err, sizeof err))) {
        fprintf(stderr, "paddiser bench: benchmark.cache_file: %s\n", err);
        return -1;
    }
    run->use_cache = use_cache || cache_only;
    return 0;
}

/* Every metric of the script a task runs is in metrics (cfg->metrics order). */
static bool has_script_metrics(const pd_bench_config *cfg, size_t script, char *const *metrics)
{
    const pd_bench_script *sc = pd_bench_script_at(cfg, script);
    for (size_t m = 0; m < sc->nmetrics; m++)
        for (size_t i = 0; i < cfg->nmetrics; i++)
            if (!strcmp(cfg->metrics[i], sc->metrics[m]) && !metrics[i])
                return false;
    return true;
}

bool pd_bench_cache_take(pd_bench_run *run, pd_bench_task *t, bool cache_only, bool dry)
{
    if (!run->cache || !run->use_cache)
        return false;
    const pd_val *values = t->values ? t->values : run->matrix.execs[t->exec_idx].values;
    char *params = pd_bench_cache_params(&run->cfg, values);
    char **metrics = NULL, err[PATH_MAX + 256];
    double duration = 0;
    int hit = params ? pd_bench_cache_get(run->cache, &run->cfg, params, t->repetition, &metrics, &duration, err,
                                          sizeof err)
                     : -1;
    if (hit < 0)
        fprintf(stderr, "paddiser bench: warning: cache lookup of exec_%04d rep %d: %s\n", t->exec_id,
                t->repetition, params ? err : "out of memory");
    free(params);
    if (hit > 0 && !has_script_metrics(&run->cfg, t->script_idx, metrics)) {
        hit = 0; /* IOPS: an entry without every expected metric is a miss, and runs again */
        for (size_t i = 0; i < run->cfg.nmetrics; i++)
            free(metrics[i]);
        free(metrics);
        metrics = NULL;
    }
    if (hit <= 0) {
        if (cache_only) {
            t->not_in_cache = true;
            t->state = PD_TASK_CANCELLED;
        }
        return cache_only;
    }
    t->cached = true;
    t->state = PD_TASK_SUCCEEDED;
    t->exit_code = 0;
    t->start = t->end = pd_now();
    if (dry) {
        for (size_t i = 0; i < run->cfg.nmetrics; i++)
            free(metrics[i]);
        free(metrics);
    } else {
        t->metrics = metrics;
        if (pd_mkdir_p(t->dir, 0755) != 0)
            fprintf(stderr, "paddiser bench: warning: cannot create %s: %s\n", t->dir, strerror(errno));
        pd_bench_task_status(run, t);
        if (!run->quiet) /* IOPS's [CACHED] progress line */
            fprintf(stderr, "exec_%04d rep %d from the cache\n", t->exec_id, t->repetition);
    }
    pd_bench_budget_add(run, t, duration, true);
    return true;
}

void pd_bench_cache_record(pd_bench_run *run, const pd_bench_task *t)
{
    if (!run->cache || t->state != PD_TASK_SUCCEEDED || t->cached || !t->values)
        return;
    char *params = pd_bench_cache_params(&run->cfg, t->values), err[PATH_MAX + 256];
    if (!params || pd_bench_cache_put(run->cache, &run->cfg, params, t->repetition, t->metrics, t->start, t->end,
                                      err, sizeof err) != 0)
        fprintf(stderr, "paddiser bench: warning: exec_%04d rep %d not stored in the cache: %s\n", t->exec_id,
                t->repetition, params ? err : "out of memory");
    free(params);
}

void pd_bench_cache_report(const pd_bench_run *run, FILE *out)
{
    if (!run->use_cache)
        return;
    size_t cached = 0, missing = 0;
    for (size_t k = 0; k < run->ntasks; k++) {
        cached += run->tasks[k].cached;
        missing += run->tasks[k].not_in_cache;
    }
    fprintf(out, "cache: %zu of %zu repetitions taken from %s", cached, run->ntasks, run->cfg.cache_file);
    if (missing)
        fprintf(out, ", %zu skipped (not in the cache, --cache-only)", missing);
    fputc('\n', out);
}

void pd_bench_cache_preview(pd_bench_run *run, bool cache_only, FILE *out)
{
    if (!run->cache || !run->use_cache)
        return;
    for (size_t k = 0; k < run->ntasks; k++)
        pd_bench_cache_take(run, &run->tasks[k], cache_only, true);
    pd_bench_cache_report(run, out);
}
