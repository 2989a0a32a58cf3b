/* The run root's status roll-up (status_rollup.h). */
#include "bench/status_rollup.h"
#include "common/util.h"
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

struct pd_status_rollup {
    char path[PATH_MAX];
    json_t *doc;        /* the file's object; "executions" in the order first recorded */
    json_t *executions; /* borrowed from doc */
    bool dirty;
    double written_at; /* pd_monotonic() of the last write, 0: never */
};

pd_status_rollup *pd_status_rollup_open(const char *run_dir, const char *benchmark, int repetitions)
{
    pd_status_rollup *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    if (pd_path_join(r->path, sizeof r->path, run_dir, PD_STATUS_ROLLUP_FILE) != 0) {
        free(r);
        return NULL;
    }
    r->doc = json_object();
    r->executions = json_object();
    if (!r->doc || !r->executions) {
        json_decref(r->doc);
        json_decref(r->executions);
        free(r);
        return NULL;
    }
    json_object_set_new(r->doc, "benchmark", json_string(benchmark ? benchmark : ""));
    json_object_set_new(r->doc, "repetitions", json_integer(repetitions > 1 ? repetitions : 1));
    json_object_set_new(r->doc, "complete", json_false());
    json_object_set(r->doc, "executions", r->executions);
    json_decref(r->executions); /* doc holds it */
    return r;
}

static int write_now(pd_status_rollup *r)
{
    char *text = json_dumps(r->doc, JSON_INDENT(2) | JSON_REAL_PRECISION(17));
    if (!text) {
        errno = ENOMEM;
        return -1;
    }
    pd_str s = {0};
    pd_str_printf(&s, "%s\n", text);
    free(text);
    int rc = s.data ? pd_write_file_atomic(r->path, s.data, s.len) : (errno = ENOMEM, -1);
    pd_str_free(&s);
    r->written_at = pd_monotonic();
    if (rc == 0)
        r->dirty = false;
    return rc;
}

void pd_status_rollup_flush_due(pd_status_rollup *r)
{
    if (r && r->dirty && (r->written_at == 0 || pd_monotonic() - r->written_at >= PD_STATUS_ROLLUP_INTERVAL_S))
        (void)write_now(r); /* best effort: the status files are the truth */
}

/* The "reps" object of exec_id, created on first use. */
static json_t *reps_of(pd_status_rollup *r, int exec_id)
{
    char key[32];
    snprintf(key, sizeof key, "exec_%04d", exec_id);
    json_t *e = json_object_get(r->executions, key);
    if (!e) {
        e = json_object();
        if (!e || json_object_set_new(e, "reps", json_object()) != 0 ||
            json_object_set_new(r->executions, key, e) != 0)
            return NULL;
    }
    return json_object_get(e, "reps");
}

void pd_status_rollup_record(pd_status_rollup *r, int exec_id, int repetition, const json_t *status)
{
    if (!r || !status)
        return;
    json_t *reps = reps_of(r, exec_id);
    char rep[24];
    snprintf(rep, sizeof rep, "%d", repetition);
    if (!reps || json_object_set_new(reps, rep, json_deep_copy(status)) != 0)
        return;
    r->dirty = true;
    pd_status_rollup_flush_due(r);
}

void pd_status_rollup_add_file(pd_status_rollup *r, int exec_id, int repetition, const char *status_path)
{
    if (!r)
        return;
    char key[32], rep[24];
    snprintf(key, sizeof key, "exec_%04d", exec_id);
    snprintf(rep, sizeof rep, "%d", repetition);
    if (json_object_get(json_object_get(json_object_get(r->executions, key), "reps"), rep))
        return; /* this invocation's is newer */
    json_error_t e;
    json_t *o = json_load_file(status_path, 0, &e);
    json_t *reps = o && json_is_object(o) ? reps_of(r, exec_id) : NULL;
    if (!reps) { /* no file (never started): no entry, as in IOPS */
        json_decref(o);
        return;
    }
    if (json_object_set_new(reps, rep, o) == 0) /* takes o even when it fails */
        r->dirty = true;
}

int pd_status_rollup_close(pd_status_rollup *r)
{
    if (!r)
        return 0;
    json_object_set_new(r->doc, "complete", json_true());
    return write_now(r);
}

void pd_status_rollup_free(pd_status_rollup *r)
{
    if (!r)
        return;
    json_decref(r->doc);
    free(r);
}
