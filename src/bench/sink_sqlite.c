/* output.sink.type sqlite: see sink_sqlite.h. */
#include "bench/sink_sqlite.h"

#include <jansson.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/cache.h"
#include "bench/iops_meta.h"
#include "bench/run.h"
#include "common/util.h"

/* "name" with its quotes doubled: an SQL identifier. */
static void ident(pd_str *s, const char *name)
{
    pd_str_append(s, "\"");
    for (const char *p = name; *p; p++)
        pd_str_append(s, *p == '"' ? "\"\"" : (char[]){*p, 0});
    pd_str_append(s, "\"");
}

typedef struct {
    char **names;
    size_t n;
} columns;

static void columns_of(const pd_bench_config *cfg, columns *c)
{
    size_t n = PD_IOPS_RESULTS_NHEAD + cfg->nvars + 2 + cfg->nmetrics;
    c->names = calloc(n, sizeof *c->names);
    c->n = 0;
    if (!c->names)
        return;
    for (size_t i = 0; i < PD_IOPS_RESULTS_NHEAD; i++)
        c->names[c->n++] = pd_strdup(pd_iops_results_head[i]);
    for (size_t i = 0; i < cfg->nvars; i++) {
        pd_str f = {0};
        pd_str_printf(&f, "vars.%s", cfg->vars[i].name);
        c->names[c->n++] = pd_str_take(&f);
    }
    c->names[c->n++] = pd_strdup("metadata.executor_status");
    c->names[c->n++] = pd_strdup("metadata.returncode");
    for (size_t i = 0; i < cfg->nmetrics; i++) {
        pd_str f = {0};
        pd_str_printf(&f, "metrics.%s", cfg->metrics[i]);
        c->names[c->n++] = pd_str_take(&f);
    }
}

static void columns_free(columns *c)
{
    for (size_t i = 0; i < c->n; i++)
        free(c->names[i]);
    free(c->names);
}

static int exec_sql(sqlite3 *db, const char *sql, const char *path)
{
    char *msg = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &msg) == SQLITE_OK)
        return 0;
    fprintf(stderr, "paddiser bench: output.sink %s: %s\n", path, msg ? msg : sqlite3_errmsg(db));
    sqlite3_free(msg);
    return -1;
}

static void bind_val(sqlite3_stmt *st, int i, const pd_val *v)
{
    switch (v->kind) {
    case PD_VAL_INT: sqlite3_bind_int64(st, i, v->i); break;
    case PD_VAL_FLOAT: sqlite3_bind_double(st, i, v->f); break;
    case PD_VAL_BOOL: sqlite3_bind_int(st, i, v->b); break;
    case PD_VAL_STR: sqlite3_bind_text(st, i, v->s, -1, SQLITE_TRANSIENT); break;
    default: {
        pd_str s = {0};
        pd_val_append(&s, v);
        sqlite3_bind_text(st, i, s.data ? s.data : "", -1, SQLITE_TRANSIENT);
        pd_str_free(&s);
    }
    }
}

static void bind_metric(sqlite3_stmt *st, int i, const char *text)
{
    json_t *j = text ? pd_iops_metric_json(text) : NULL;
    if (!text)
        sqlite3_bind_null(st, i);
    else if (json_is_integer(j))
        sqlite3_bind_int64(st, i, json_integer_value(j));
    else if (json_is_real(j))
        sqlite3_bind_double(st, i, json_real_value(j));
    else
        sqlite3_bind_text(st, i, text, -1, SQLITE_TRANSIENT);
    json_decref(j);
}

int pd_bench_sink_sqlite(const pd_bench_run *run, const char *path)
{
    const pd_bench_config *cfg = &run->cfg;
    const char *table = cfg->sink_table ? cfg->sink_table : "results";
    char dflt[PATH_MAX + 16];
    if (!path) {
        snprintf(dflt, sizeof dflt, "%s/results.db", run->run_dir);
        path = dflt;
    }
    columns cols = {0};
    columns_of(cfg, &cols);
    sqlite3 *db = NULL;
    pd_str sql = {0};
    int rc = -1;
    char *dir = pd_strdup(path), *slash = dir ? strrchr(dir, '/') : NULL;
    if (slash && slash != dir) {
        *slash = '\0';
        pd_mkdir_p(dir, 0755);
    }
    free(dir);
    if (!cols.names || sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
                                       pd_bench_sqlite_vfs(path)) != SQLITE_OK) {
        fprintf(stderr, "paddiser bench: output.sink: cannot open %s: %s\n", path,
                db ? sqlite3_errmsg(db) : "out of memory");
        goto out;
    }
    sqlite3_busy_timeout(db, 60000);
    if (exec_sql(db, "PRAGMA journal_mode=DELETE", path) || exec_sql(db, "BEGIN IMMEDIATE", path))
        goto out;
    /* the table, then the columns it lacks (IOPS extends the schema) */
    pd_str_append(&sql, "CREATE TABLE IF NOT EXISTS ");
    ident(&sql, table);
    pd_str_append(&sql, " (");
    for (size_t i = 0; i < cols.n; i++) {
        pd_str_append(&sql, i ? ", " : "");
        ident(&sql, cols.names[i]);
    }
    pd_str_append(&sql, ")");
    if (!sql.data || exec_sql(db, sql.data, path))
        goto rollback;
    for (size_t i = 0; i < cols.n; i++) {
        sqlite3_stmt *st = NULL;
        int have = 0;
        if (sqlite3_prepare_v2(db, "SELECT 1 FROM pragma_table_info(?1) WHERE name = ?2", -1, &st, NULL) ==
            SQLITE_OK) {
            sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
            sqlite3_bind_text(st, 2, cols.names[i], -1, SQLITE_STATIC);
            have = sqlite3_step(st) == SQLITE_ROW;
        }
        sqlite3_finalize(st);
        if (have)
            continue;
        pd_str_clear(&sql);
        pd_str_append(&sql, "ALTER TABLE ");
        ident(&sql, table);
        pd_str_append(&sql, " ADD COLUMN ");
        ident(&sql, cols.names[i]);
        if (!sql.data || exec_sql(db, sql.data, path))
            goto rollback;
    }
    pd_str_clear(&sql);
    pd_str_append(&sql, "DELETE FROM ");
    ident(&sql, table);
    if (!cfg->sink_overwrite) /* only this run's rows of the repetitions written now */
        pd_str_append(&sql, " WHERE \"execution.workdir\" = ?1 AND \"execution.execution_id\" = ?2 AND "
                            "\"execution.repetition\" = ?3");
    sqlite3_stmt *del = NULL, *ins = NULL;
    if (!sql.data || sqlite3_prepare_v2(db, sql.data, -1, &del, NULL) != SQLITE_OK) {
        fprintf(stderr, "paddiser bench: output.sink %s: %s\n", path, sqlite3_errmsg(db));
        goto rollback;
    }
    if (cfg->sink_overwrite && sqlite3_step(del) != SQLITE_DONE) {
        sqlite3_finalize(del);
        goto rollback;
    }
    pd_str_clear(&sql);
    pd_str_append(&sql, "INSERT INTO ");
    ident(&sql, table);
    pd_str_append(&sql, " (");
    for (size_t i = 0; i < cols.n; i++) {
        pd_str_append(&sql, i ? ", " : "");
        ident(&sql, cols.names[i]);
    }
    pd_str_append(&sql, ") VALUES (");
    for (size_t i = 0; i < cols.n; i++)
        pd_str_printf(&sql, "%s?%zu", i ? ", " : "", i + 1);
    pd_str_append(&sql, ")");
    if (!sql.data || sqlite3_prepare_v2(db, sql.data, -1, &ins, NULL) != SQLITE_OK) {
        fprintf(stderr, "paddiser bench: output.sink %s: %s\n", path, sqlite3_errmsg(db));
        sqlite3_finalize(del);
        goto rollback;
    }
    int step = SQLITE_DONE;
    for (size_t k = 0; k < run->ntasks && step == SQLITE_DONE; k++) {
        const pd_bench_task *t = &run->tasks[k];
        if (t->state != PD_TASK_SUCCEEDED || !t->values)
            continue;
        if (!cfg->sink_overwrite) {
            sqlite3_reset(del);
            sqlite3_bind_text(del, 1, run->run_dir, -1, SQLITE_STATIC);
            sqlite3_bind_int(del, 2, t->exec_id);
            sqlite3_bind_int(del, 3, t->repetition);
            if ((step = sqlite3_step(del)) != SQLITE_DONE)
                break;
        }
        sqlite3_reset(ins);
        int c = 1;
        sqlite3_bind_text(ins, c++, cfg->name ? cfg->name : "", -1, SQLITE_STATIC);
        sqlite3_bind_text(ins, c++, cfg->description ? cfg->description : "", -1, SQLITE_STATIC);
        sqlite3_bind_int(ins, c++, t->exec_id);
        sqlite3_bind_int(ins, c++, t->repetition);
        sqlite3_bind_int(ins, c++, cfg->repetitions);
        sqlite3_bind_text(ins, c++, run->run_dir, -1, SQLITE_STATIC);
        sqlite3_bind_text(ins, c++, t->dir ? t->dir : "", -1, SQLITE_STATIC);
        for (size_t i = 0; i < cfg->nvars; i++)
            bind_val(ins, c++, &t->values[i]);
        sqlite3_bind_text(ins, c++, "SUCCEEDED", -1, SQLITE_STATIC);
        sqlite3_bind_int(ins, c++, t->exit_code >= 0 ? t->exit_code : 0);
        for (size_t i = 0; i < cfg->nmetrics; i++)
            bind_metric(ins, c++, t->metrics ? t->metrics[i] : NULL);
        step = sqlite3_step(ins);
    }
    if (step != SQLITE_DONE)
        fprintf(stderr, "paddiser bench: output.sink %s: %s\n", path, sqlite3_errmsg(db));
    sqlite3_finalize(del);
    sqlite3_finalize(ins);
    if (step == SQLITE_DONE && exec_sql(db, "COMMIT", path) == 0) {
        rc = 0;
        goto out;
    }
rollback:
    sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
out:
    sqlite3_close(db);
    pd_str_free(&sql);
    columns_free(&cols);
    return rc;
}
