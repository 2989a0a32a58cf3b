/* IOPS 3.5.8's run metadata, written for its `find` and `report`, and the
 * reading side for IOPS run directories (see iops_meta.h). The formats
 * follow what IOPS 3.5.8 writes (tests/fixtures/bench/iops_run holds one of
 * its runs); nothing here is IOPS's code. */
#include "bench/iops_meta.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>

/* ------------------------------------------------------------- status */

const char *pd_iops_status_name(pd_task_state s)
{
    switch (s) {
    case PD_TASK_RUNNING: return "RUNNING";
    case PD_TASK_SUCCEEDED: return "SUCCEEDED";
    case PD_TASK_FAILED: return "FAILED";
    case PD_TASK_CANCELLED: return "CANCELLED";
    case PD_TASK_TIMED_OUT: return "TIMEOUT"; /* IOPS's single-allocation runner's name */
    default: return "PENDING";
    }
}

bool pd_iops_status_parse(const char *status, pd_task_state *s)
{
    static const struct {
        const char *name;
        pd_task_state state;
    } names[] = {
        {"pending", PD_TASK_PENDING},     {"running", PD_TASK_RUNNING},     {"succeeded", PD_TASK_SUCCEEDED},
        {"failed", PD_TASK_FAILED},       {"error", PD_TASK_FAILED},        {"cancelled", PD_TASK_CANCELLED},
        {"timed_out", PD_TASK_TIMED_OUT}, {"timeout", PD_TASK_TIMED_OUT},
    };
    if (!status)
        return false;
    for (size_t i = 0; i < PD_ARRAY_LEN(names); i++)
        if (!strcasecmp(status, names[i].name)) {
            *s = names[i].state;
            return true;
        }
    return false;
}

/* "YYYY-MM-DD HH:MM:SS", local time, as IOPS writes end_time (str() of a
 * datetime without microseconds); JSON null when unknown. */
static json_t *iops_time(double t)
{
    if (t <= 0)
        return json_null();
    time_t secs = (time_t)t;
    struct tm tm;
    char buf[32];
    if (!localtime_r(&secs, &tm) || !strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &tm))
        return json_null();
    return json_string(buf);
}

/* datetime.isoformat(): "YYYY-MM-DDTHH:MM:SS.ffffff", local time. */
static json_t *iso_time(double t)
{
    if (t <= 0)
        return json_null();
    time_t secs = (time_t)t;
    struct tm tm;
    char buf[32], out[48];
    if (!localtime_r(&secs, &tm) || !strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm))
        return json_null();
    long us = (long)((t - (double)secs) * 1e6);
    snprintf(out, sizeof out, "%s.%06ld", buf, us < 0 ? 0 : us > 999999 ? 999999 : us);
    return json_string(out);
}

static json_t *status_error(const pd_bench_task *t, const pd_bench_run *run)
{
    char buf[128];
    switch (t->state) {
    case PD_TASK_FAILED:
        if (t->error) /* not its exit code: e.g. --fail-on-missing-metric */
            return json_string(t->error);
        if (t->exit_code >= 0)
            snprintf(buf, sizeof buf, "exit code %d", t->exit_code);
        else
            snprintf(buf, sizeof buf, "failed");
        return json_string(buf);
    case PD_TASK_TIMED_OUT:
        if (run->cfg.timeout_s > 0)
            snprintf(buf, sizeof buf, "timed out (benchmark.timeout %g s)", run->cfg.timeout_s);
        else
            snprintf(buf, sizeof buf, "timed out (time limit)");
        return json_string(buf);
    case PD_TASK_CANCELLED: return json_string("cancelled");
    default: return json_null();
    }
}

json_t *pd_iops_status_object(const pd_bench_task *t, const pd_bench_run *run)
{
    json_t *o = json_object();
    bool ended = t->start > 0 && t->end >= t->start;
    /* IOPS's fields, in its order */
    json_object_set_new(o, "status", json_string(pd_iops_status_name(t->state)));
    json_object_set_new(o, "error", status_error(t, run));
    json_object_set_new(o, "end_time", iops_time(ended ? t->end : 0));
    json_object_set_new(o, "cached", json_boolean(t->cached));
    json_object_set_new(o, "duration_seconds", ended ? json_real(t->end - t->start) : json_null());
    json_t *m = NULL;
    if (t->state == PD_TASK_SUCCEEDED && t->metrics && run->cfg.nmetrics) {
        /* values as IOPS records them: numbers, and no missing ones (IOPS
         * drops None); --resume reads a missing one back as missing */
        m = json_object();
        for (size_t k = 0; k < run->cfg.nmetrics; k++)
            if (t->metrics[k])
                json_object_set_new(m, run->cfg.metrics[k], pd_iops_metric_json(t->metrics[k]));
    }
    json_object_set_new(o, "metrics", m ? m : json_null());
    json_object_set_new(o, "submission_time", iops_time(t->start));
    json_object_set_new(o, "job_start", iops_time(t->start));
    /* paddiser's own: --resume and the report read them */
    json_object_set_new(o, "exit_code", t->exit_code >= 0 ? json_integer(t->exit_code) : json_null());
    json_object_set_new(o, "start", t->start > 0 ? json_real(t->start) : json_null());
    json_object_set_new(o, "end", t->end > 0 ? json_real(t->end) : json_null());
    json_object_set_new(o, "duration_s", ended ? json_real(t->end - t->start) : json_null());
    json_object_set_new(o, "executor", json_string(run->executor_name));
    json_object_set_new(o, "job_id", t->job_id[0] ? json_string(t->job_id) : json_null());
    return o;
}

/* ------------------------------------------------------------ metrics */

/* An integer literal as Python prints one: -?(0|[1-9][0-9]*), in range. */
static bool int_text(const char *s, long long *out)
{
    const char *p = s + (*s == '-');
    if (!*p || (p[0] == '0' && p[1]) || strspn(p, "0123456789") != strlen(p))
        return false;
    errno = 0;
    char *end;
    long long v = strtoll(s, &end, 10);
    if (errno || *end)
        return false;
    *out = v;
    return true;
}

json_t *pd_iops_metric_json(const char *text)
{
    long long i;
    if (int_text(text, &i))
        return json_integer(i);
    double d;
    char back[64];
    if (pd_parse_double(text, &d) && isfinite(d)) {
        pd_format_float(back, sizeof back, d);
        if (!strcmp(back, text))
            return json_real(d); /* reads back as the same text */
    }
    return json_string(text);
}

char *pd_iops_metric_text(const json_t *v)
{
    char buf[64];
    switch (json_typeof(v)) {
    case JSON_STRING: return pd_strdup(json_string_value(v));
    case JSON_INTEGER: snprintf(buf, sizeof buf, "%lld", (long long)json_integer_value(v)); return pd_strdup(buf);
    case JSON_REAL: pd_format_float(buf, sizeof buf, json_real_value(v)); return pd_strdup(buf);
    case JSON_TRUE: return pd_strdup("True");
    case JSON_FALSE: return pd_strdup("False");
    default: return NULL;
    }
}

/* ------------------------------------------------------------ writing */

static int write_json(const pd_bench_run *run, const char *name, json_t *o)
{
    if (!o) {
        errno = ENOMEM;
        return -1;
    }
    /* full precision: a real reads back as the same double */
    char *text = json_dumps(o, JSON_INDENT(2) | JSON_REAL_PRECISION(17));
    json_decref(o);
    char path[PATH_MAX];
    if (!text) {
        errno = ENOMEM;
        return -1;
    }
    if (pd_path_join(path, sizeof path, run->run_dir, name) != 0) {
        free(text);
        errno = ENAMETOOLONG;
        return -1;
    }
    pd_str s = {0};
    pd_str_printf(&s, "%s\n", text);
    free(text);
    int rc = s.data ? pd_write_file_atomic(path, s.data, s.len) : (errno = ENOMEM, -1);
    pd_str_free(&s);
    return rc;
}

/* The values __iops_params.json holds (a bool as JSON true/false, as IOPS's
 * json.dump of its params writes it). */
static json_t *params_object(const pd_bench_run *run, const pd_val *values)
{
    const pd_bench_config *cfg = &run->cfg;
    pd_str s = {0};
    pd_str_append(&s, "{");
    for (size_t k = 0; k < cfg->nvars; k++) {
        size_t i = pd_bench_var_at(run, k);
        pd_val name = pd_val_str(cfg->vars[i].name);
        pd_str_append(&s, k ? ", " : "");
        pd_val_append_json(&s, &name);
        pd_val_free(&name);
        pd_str_append(&s, ": ");
        pd_val_append_json(&s, &values[i]);
    }
    pd_str_append(&s, "}");
    json_error_t e;
    json_t *o = s.data ? json_loads(s.data, 0, &e) : NULL;
    pd_str_free(&s);
    return o ? o : json_object();
}

int pd_iops_write_index(const pd_bench_run *run, char *const *commands)
{
    const pd_bench_config *cfg = &run->cfg;
    json_t *o = json_object(), *execs = json_object();
    json_object_set_new(o, "benchmark", json_string(cfg->name ? cfg->name : ""));
    size_t expected = run->total_expected ? run->total_expected : run->ntasks; /* an adaptive search's estimate */
    json_object_set_new(o, "total_expected", json_integer((json_int_t)expected));
    json_object_set_new(o, "repetitions", json_integer(cfg->repetitions));
    for (size_t e = 0; e < run->matrix.nexecs; e++) {
        const pd_bench_exec *ex = &run->matrix.execs[e];
        char key[32];
        snprintf(key, sizeof key, "exec_%04d", ex->id);
        json_t *x = json_object();
        json_object_set_new(x, "path", json_string(key)); /* relative to the run directory, no runs/ level */
        json_object_set_new(x, "params", params_object(run, ex->values));
        json_object_set_new(x, "command", json_string(commands && commands[e] ? commands[e] : ""));
        json_object_set_new(execs, key, x);
    }
    json_object_set_new(o, "executions", execs);
    return write_json(run, PD_IOPS_INDEX_FILE, o);
}

json_t *pd_iops_val_json(const pd_val *v)
{
    pd_str s = {0};
    pd_val_append_json(&s, v);
    json_error_t e;
    json_t *j = s.data ? json_loads(s.data, JSON_DECODE_ANY, &e) : NULL;
    pd_str_free(&s);
    return j ? j : json_null();
}

/* A factor or increment as the YAML gave it, as far as a double tells: 2 or 0.5. */
static json_t *number_json(double x)
{
    return x == (double)(json_int_t)x ? json_integer((json_int_t)x) : json_real(x);
}

/* vars.X.adaptive as IOPS records it (its "adaptive": true replaced by it). */
static json_t *adaptive_object(const pd_bench_adaptive *ad)
{
    json_t *a = json_object();
    json_object_set_new(a, "initial", pd_iops_val_json(&ad->initial_as_written));
    json_object_set_new(a, "stop_when", json_string(ad->stop_when.text ? ad->stop_when.text : ""));
    json_object_set_new(a, "direction", json_string(ad->descending ? "descending" : "ascending"));
    if (ad->has_factor)
        json_object_set_new(a, "factor", number_json(ad->factor));
    if (ad->has_increment)
        json_object_set_new(a, "increment", number_json(ad->increment));
    if (ad->step_expr.text)
        json_object_set_new(a, "step_expr", json_string(ad->step_expr.text));
    if (ad->max_iterations > 0)
        json_object_set_new(a, "max_iterations", json_integer(ad->max_iterations));
    return a;
}

static json_t *variables_object(const pd_bench_config *cfg)
{
    json_t *vars = json_object();
    for (size_t i = 0; i < cfg->nvars; i++) {
        const pd_bench_var *v = &cfg->vars[i];
        json_t *o = json_object();
        bool swept = v->values != NULL && !v->adaptive.set; /* an adaptive one holds its initial value */
        json_object_set_new(o, "type", json_string(pd_var_type_name(v->type)));
        json_object_set_new(o, "swept", json_boolean(swept));
        json_object_set_new(o, "adaptive", v->adaptive.set ? adaptive_object(&v->adaptive) : json_false());
        if (swept) {
            /* a range is kept as its values: the config keeps no more */
            json_t *sw = json_object(), *vals = json_array();
            json_object_set_new(sw, "mode", json_string("list"));
            for (size_t k = 0; k < v->nvalues; k++)
                json_array_append_new(vals, pd_iops_val_json(&v->values[k]));
            json_object_set_new(sw, "values", vals);
            json_object_set_new(o, "sweep", sw);
        }
        if (v->expr.text)
            json_object_set_new(o, "expr", json_string(v->expr.text));
        if (v->when.text) {
            json_object_set_new(o, "when", json_string(v->when.text));
            json_object_set_new(o, "default", pd_iops_val_json(&v->when_default));
        }
        json_object_set_new(vars, v->name, o);
    }
    return vars;
}

int pd_iops_write_run_metadata(const pd_bench_run *run, double start, double end)
{
    const pd_bench_config *cfg = &run->cfg;
    char host[256];
    pd_short_hostname(host, sizeof host);
    json_t *o = json_object(), *b = json_object();
    json_object_set_new(o, "iops_version", json_string(PD_IOPS_VERSION));
    json_object_set_new(b, "name", json_string(cfg->name ? cfg->name : ""));
    json_object_set_new(b, "description", cfg->description ? json_string(cfg->description) : json_null());
    json_object_set_new(b, "executor", json_string(run->executor_name));
    json_object_set_new(b, "repetitions", json_integer(cfg->repetitions));
    json_object_set_new(b, "random_seed", json_integer(cfg->random.seed));
    json_object_set_new(b, "timestamp", iso_time(start));
    json_object_set_new(b, "test_count", json_integer((json_int_t)run->ntasks));
    json_object_set_new(b, "report_vars", json_null());
    json_object_set_new(b, "search_method", json_string(cfg->search == PD_SEARCH_RANDOM     ? "random"
                                                           : cfg->search == PD_SEARCH_ADAPTIVE ? "adaptive"
                                                                                               : "exhaustive"));
    json_object_set_new(b, "bayesian_config", json_null());
    json_object_set_new(b, "cores_expr", cfg->cores_expr.text ? json_string(cfg->cores_expr.text) : json_null());
    json_object_set_new(b, "max_core_hours", run->budget.max > 0 ? json_real(run->budget.max) : json_null());
    json_object_set_new(b, "hostname", json_string(host));
    json_object_set_new(b, "planner_stats", json_null());
    json_object_set_new(b, "benchmark_start_time", iso_time(start));
    json_object_set_new(b, "benchmark_end_time", iso_time(end));
    json_object_set_new(b, "total_runtime_seconds", end > start && start > 0 ? json_real(end - start) : json_null());
    json_object_set_new(o, "benchmark", b);
    json_t *sys = json_object(), *nodes = json_array();
    json_array_append_new(nodes, json_string(host));
    json_object_set_new(sys, "nodes", nodes);
    json_object_set_new(sys, "node_count", json_integer(1));
    json_object_set_new(o, "system_environment", sys);
    json_object_set_new(o, "variables", variables_object(cfg));
    json_t *metrics = json_array();
    for (size_t i = 0; i < pd_bench_nscripts(cfg); i++) {
        const pd_bench_script *sc = pd_bench_script_at(cfg, i);
        for (size_t k = 0; k < sc->nmetrics; k++) {
            json_t *m = json_object();
            json_object_set_new(m, "name", json_string(sc->metrics[k]));
            json_object_set_new(m, "script", json_string(sc->name));
            json_array_append_new(metrics, m);
        }
    }
    json_object_set_new(o, "metrics", metrics);
    json_t *out = json_object();
    json_object_set_new(out, "type", json_string("csv"));
    json_object_set_new(out, "path", json_string(pd_iops_results_file(run->results_layout)));
    json_object_set_new(out, "table", json_null());
    json_object_set_new(o, "output", out);
    json_t *cmd = json_object(), *labels = json_object();
    json_object_set_new(cmd, "template", json_string(cfg->command.text ? cfg->command.text : ""));
    for (size_t i = 0; i < cfg->nlabels; i++)
        json_object_set_new(labels, cfg->label_names[i], json_string(cfg->label_values[i]));
    json_object_set_new(cmd, "labels", labels);
    json_object_set_new(o, "command", cmd);
    json_object_set_new(o, "reporting", json_null());
    if (run->adaptive_results) /* at the end of an adaptive search, as IOPS adds it */
        json_object_set_new(o, "adaptive_results", json_deep_copy(run->adaptive_results));
    return write_json(run, PD_IOPS_RUN_METADATA_FILE, o);
}

/* A column name with its namespace (vars.NAME, metrics.NAME, ...) */
static void put_column(pd_str *s, const char *ns, const char *name)
{
    pd_str f = {0};
    pd_str_printf(&f, "%s.%s", ns, name);
    pd_str_append(s, ",");
    pd_csv_put_field(s, f.data ? f.data : "");
    pd_str_free(&f);
}

const char *const pd_iops_results_head[PD_IOPS_RESULTS_NHEAD] = {
    "benchmark.name",        "benchmark.description", "execution.execution_id", "execution.repetition",
    "execution.repetitions", "execution.workdir",     "execution.execution_dir"};

void pd_iops_results_header(const pd_bench_run *run, pd_str *s)
{
    const pd_bench_config *cfg = &run->cfg;
    for (size_t i = 0; i < PD_IOPS_RESULTS_NHEAD; i++)
        pd_str_printf(s, "%s%s", i ? "," : "", pd_iops_results_head[i]);
    for (size_t k = 0; k < cfg->nvars; k++)
        put_column(s, "vars", cfg->vars[pd_bench_var_at(run, k)].name);
    for (size_t i = 0; i < cfg->nlabels; i++)
        put_column(s, "labels", cfg->label_names[i]);
    pd_str_append(s, ",metadata.executor_status,metadata.returncode");
    for (size_t i = 0; i < cfg->nmetrics; i++)
        put_column(s, "metrics", cfg->metrics[i]);
    pd_str_append(s, "\n");
}

void pd_iops_results_row(const pd_bench_run *run, const pd_bench_task *t, pd_str *s)
{
    const pd_bench_config *cfg = &run->cfg;
    pd_csv_put_field(s, cfg->name ? cfg->name : "");
    pd_str_append(s, ",");
    pd_csv_put_field(s, cfg->description ? cfg->description : "");
    pd_str_printf(s, ",%d,%d,%d,", t->exec_id, t->repetition, cfg->repetitions);
    pd_csv_put_field(s, run->run_dir);
    pd_str_append(s, ",");
    pd_csv_put_field(s, t->dir ? t->dir : "");
    for (size_t k = 0; k < cfg->nvars; k++) {
        pd_str v = {0};
        if (t->values)
            pd_val_append(&v, &t->values[pd_bench_var_at(run, k)]);
        pd_str_append(s, ",");
        pd_csv_put_field(s, v.data ? v.data : "");
        pd_str_free(&v);
    }
    for (size_t i = 0; i < cfg->nlabels; i++) {
        pd_str_append(s, ",");
        pd_csv_put_field(s, cfg->label_values[i] ? cfg->label_values[i] : "");
    }
    pd_str_printf(s, ",%s,%d", pd_iops_status_name(t->state), t->exit_code >= 0 ? t->exit_code : 0);
    for (size_t i = 0; i < cfg->nmetrics; i++) {
        pd_str_append(s, ",");
        pd_csv_put_field(s, t->metrics && t->metrics[i] ? t->metrics[i] : "");
    }
    pd_str_append(s, "\n");
}

const char *pd_iops_results_file(pd_results_layout layout)
{
    return layout == PD_RESULTS_SHORT ? PD_IOPS_RESULTS_FILE : "results.csv";
}

/* ------------------------------------------------------------ reading */

static bool has_exec_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return false;
    bool found = false;
    for (struct dirent *e; !found && (e = readdir(d));) {
        int n = 0, len = 0;
        if (sscanf(e->d_name, "exec_%d%n", &n, &len) != 1 || e->d_name[len] != '\0')
            continue;
        char path[PATH_MAX];
        struct stat st;
        found = pd_path_join(path, sizeof path, dir, e->d_name) == 0 && stat(path, &st) == 0 && S_ISDIR(st.st_mode);
    }
    closedir(d);
    return found;
}

bool pd_iops_exec_root(const char *run_dir, char *buf, size_t len)
{
    if (has_exec_dir(run_dir)) {
        snprintf(buf, len, "%s", run_dir);
        return true;
    }
    char runs[PATH_MAX];
    if (pd_path_join(runs, sizeof runs, run_dir, "runs") == 0 && has_exec_dir(runs)) {
        snprintf(buf, len, "%s", runs);
        return true;
    }
    return false;
}

static int cmp_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

void pd_iops_no_run_message(const char *dir, char *buf, size_t len)
{
    /* the run_NNN directories in it, when the workdir was given */
    char *names[4];
    size_t n = 0, more = 0;
    DIR *d = opendir(dir);
    for (struct dirent *e; d && (e = readdir(d));) {
        int num = 0, l = 0;
        if (sscanf(e->d_name, "run_%d%n", &num, &l) != 1 || e->d_name[l] != '\0')
            continue;
        if (n < PD_ARRAY_LEN(names) && (names[n] = pd_strdup(e->d_name)))
            n++;
        else
            more++;
    }
    if (d)
        closedir(d);
    qsort(names, n, sizeof *names, cmp_name);
    int w = snprintf(buf, len, "%s holds no run: no exec_NNNN directory in it or in its runs/", dir);
    for (size_t i = 0; i < n; i++) {
        if (w >= 0 && (size_t)w < len)
            w += snprintf(buf + w, len - (size_t)w, "%s%s/%s", i ? ", " : "; pass a run directory: ", dir, names[i]);
        free(names[i]);
    }
    if (more && w >= 0 && (size_t)w < len)
        snprintf(buf + w, len - (size_t)w, " (and %zu more)", more);
}

char *pd_iops_results_to_short(const pd_csv *csv)
{
    int c_exec = pd_csv_col(csv, "execution.execution_id"), c_rep = pd_csv_col(csv, "execution.repetition");
    int c_status = pd_csv_col(csv, "metadata.executor_status");
    if (c_exec < 0 || c_rep < 0)
        return NULL;
    size_t nc = csv->header.nfields;
    int *cols = malloc((nc ? nc : 1) * sizeof *cols);
    if (!cols)
        return NULL;
    size_t n = 0;
    pd_str s = {0};
    pd_str_append(&s, "execution_id,repetition");
    /* variables first, then metrics, each in the file's order */
    for (int pass = 0; pass < 2; pass++) {
        const char *prefix = pass ? "metrics." : "vars.";
        for (size_t c = 0; c < nc; c++)
            if (!strncmp(csv->header.fields[c], prefix, strlen(prefix))) {
                cols[n++] = (int)c;
                pd_str_append(&s, ",");
                pd_csv_put_field(&s, csv->header.fields[c] + strlen(prefix));
            }
    }
    pd_str_append(&s, "\n");
    for (size_t r = 0; r < csv->nrows; r++) {
        const char *st = c_status >= 0 ? pd_csv_get(csv, r, c_status) : NULL;
        if (c_status >= 0 && (!st || strcmp(st, "SUCCEEDED")))
            continue;
        const char *id = pd_csv_get(csv, r, c_exec);
        long num;
        if (id && pd_parse_long(id, &num))
            pd_str_printf(&s, "exec_%04ld", num);
        else
            pd_csv_put_field(&s, id ? id : "");
        pd_str_append(&s, ",");
        const char *rep = pd_csv_get(csv, r, c_rep);
        pd_csv_put_field(&s, rep ? rep : "");
        for (size_t i = 0; i < n; i++) {
            const char *v = pd_csv_get(csv, r, cols[i]);
            pd_str_append(&s, ",");
            pd_csv_put_field(&s, v ? v : "");
        }
        pd_str_append(&s, "\n");
    }
    free(cols);
    if (s.oom) {
        pd_str_free(&s);
        return NULL;
    }
    return pd_str_take(&s);
}
