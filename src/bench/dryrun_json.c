#include "bench/dryrun_json.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench/config.h"

/* A variable's value as JSON: scalars keep their type; lists and dicts are
 * the text the dry run prints for them, which is what a template sees. */
static json_t *value_json(const pd_val *v)
{
    switch (v->kind) {
    case PD_VAL_NONE:
        return json_null();
    case PD_VAL_BOOL:
        return json_boolean(v->b);
    case PD_VAL_INT:
        return json_integer((json_int_t)v->i);
    case PD_VAL_FLOAT:
        return isfinite(v->f) ? json_real(v->f) : json_null();
    case PD_VAL_STR:
        return json_string(v->s ? v->s : "");
    default: {
        pd_str d = {0};
        pd_val_append(&d, v);
        json_t *s = json_string(d.data ? d.data : "");
        pd_str_free(&d);
        return s;
    }
    }
}

/* The fewest significant digits that read back as f (1 to 17), so that 0.1
 * prints as 0.1, as the text listing and Python print it. */
static int shortest_digits(double f)
{
    char buf[32];
    for (int p = 1; p < 17; p++) {
        snprintf(buf, sizeof buf, "%.*g", p, f);
        if (strtod(buf, NULL) == f)
            return p;
    }
    return 17;
}

/* jansson takes one real precision for the whole document: the largest any
 * variable needs, so that every value reads back exactly. */
static int document_precision(const pd_bench_run *run)
{
    int p = 1;
    for (size_t e = 0; e < run->matrix.nexecs; e++)
        for (size_t i = 0; i < run->cfg.nvars; i++) {
            const pd_val *v = &run->matrix.execs[e].values[i];
            if (v->kind == PD_VAL_FLOAT && isfinite(v->f)) {
                int d = shortest_digits(v->f);
                p = d > p ? d : p;
            }
        }
    return p;
}

static json_t *exec_json(const pd_bench_run *run, const pd_bench_exec *ex)
{
    const pd_bench_config *cfg = &run->cfg;
    json_t *o = json_object(), *vars = json_object();
    if (!o || !vars) {
        json_decref(o);
        json_decref(vars);
        return NULL;
    }
    json_object_set_new(o, "id", json_integer(ex->id));
    json_object_set_new(o, "script",
                        pd_bench_nscripts(cfg) > 1 ? json_string(pd_bench_script_at(cfg, ex->script)->name)
                                                   : json_null());
    for (size_t i = 0; i < cfg->nvars; i++)
        json_object_set_new(vars, cfg->vars[i].name, value_json(&ex->values[i]));
    json_object_set_new(o, "vars", vars);
    return o;
}

int pd_bench_dry_run_json(const pd_bench_run *run, FILE *out)
{
    const pd_bench_config *cfg = &run->cfg;
    json_t *o = json_object(), *execs = json_array();
    if (!o || !execs)
        goto oom;
    json_object_set_new(o, "study", json_string(cfg->name));
    json_object_set_new(o, "executions", json_integer((json_int_t)run->matrix.nexecs));
    json_object_set_new(o, "repetitions", json_integer(cfg->repetitions));
    json_object_set_new(o, "runs", json_integer((json_int_t)run->ntasks));
    json_object_set_new(o, "executor", json_string(run->executor_name));
    json_object_set_new(o, "parallel", json_integer(cfg->parallel));
    json_object_set_new(o, "run_dir", json_string(run->run_dir));
    for (size_t e = 0; e < run->matrix.nexecs; e++) {
        json_t *x = exec_json(run, &run->matrix.execs[e]);
        if (!x || json_array_append_new(execs, x) != 0)
            goto oom;
    }
    json_object_set_new(o, "execs", execs);
    execs = NULL;
    char *text = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(document_precision(run)));
    json_decref(o);
    if (!text)
        goto oom_text;
    int rc = fputs(text, out) < 0 || fputc('\n', out) == EOF || fflush(out) != 0 ? -1 : 0;
    free(text);
    if (rc)
        perror("paddiser bench: --json");
    return rc;
oom:
    json_decref(o);
    json_decref(execs);
oom_text:
    fprintf(stderr, "paddiser bench: --json: out of memory\n");
    return -1;
}
