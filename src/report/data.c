#include "report/data.h"

#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bench/iops_meta.h"
#include "common/csv.h"

/* ---------- directory listing ---------- */

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool push_name(char ***names, size_t *n, size_t *cap, const char *name)
{
    if (*n + 1 >= *cap) {
        size_t ncap = *cap ? *cap * 2 : 16;
        char **p = realloc(*names, ncap * sizeof *p);
        if (!p)
            return false;
        *names = p;
        *cap = ncap;
    }
    char *dup = pd_strdup(name);
    if (!dup)
        return false;
    (*names)[(*n)++] = dup;
    (*names)[*n] = NULL;
    return true;
}

size_t pd_rep_list(const char *dir, const char *prefix, bool dirs_only, char ***names)
{
    *names = NULL;
    size_t n = 0, cap = 0;
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    size_t plen = strlen(prefix);
    struct dirent *e;
    while ((e = readdir(d))) {
        if (strncmp(e->d_name, prefix, plen) != 0 || e->d_name[0] == '.')
            continue;
        pd_str p = {0};
        pd_str_printf(&p, "%s/%s", dir, e->d_name);
        struct stat st;
        bool ok = p.data && stat(p.data, &st) == 0 &&
                  (dirs_only ? S_ISDIR(st.st_mode) : S_ISREG(st.st_mode));
        pd_str_free(&p);
        if (ok && !push_name(names, &n, &cap, e->d_name))
            break;
    }
    closedir(d);
    if (n)
        qsort(*names, n, sizeof **names, cmp_str);
    return n;
}

void pd_rep_names_free(char **names)
{
    if (!names)
        return;
    for (char **p = names; *p; p++)
        free(*p);
    free(names);
}

/* ---------- executions: params and status ---------- */

/* Number text as short as round-trips, like a JSON writer would print it. */
static char *fmt_real(double v)
{
    char buf[64];
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(buf, sizeof buf, "%.*g", prec, v);
        if (strtod(buf, NULL) == v)
            break;
    }
    return pd_strdup(buf);
}

static char *json_value_text(json_t *v)
{
    char buf[64];
    switch (json_typeof(v)) {
    case JSON_STRING:
        return pd_strdup(json_string_value(v));
    case JSON_INTEGER:
        snprintf(buf, sizeof buf, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        return pd_strdup(buf);
    case JSON_REAL:
        return fmt_real(json_real_value(v));
    case JSON_TRUE:
        return pd_strdup("true");
    case JSON_FALSE:
        return pd_strdup("false");
    case JSON_NULL:
        return pd_strdup("");
    default: {
        char *s = json_dumps(v, JSON_COMPACT);
        char *r = pd_strdup(s ? s : "");
        free(s);
        return r;
    }
    }
}

static bool has_name(char *const *names, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(names[i], name))
            return true;
    return false;
}

static void load_params(const char *exec_dir, pd_rep_exec *ex, pd_rep_run *run)
{
    pd_str p = {0};
    pd_str_printf(&p, "%s/__iops_params.json", exec_dir);
    struct stat st;
    if (!p.data || stat(p.data, &st) != 0) {
        pd_str_free(&p);
        return;
    }
    json_error_t jerr;
    json_t *root = json_load_file(p.data, 0, &jerr);
    pd_str_free(&p);
    if (!root || !json_is_object(root)) {
        run->n_bad_params++;
        json_decref(root);
        return;
    }
    size_t n = json_object_size(root);
    ex->keys = calloc(n ? n : 1, sizeof *ex->keys);
    ex->vals = calloc(n ? n : 1, sizeof *ex->vals);
    if (!ex->keys || !ex->vals) {
        json_decref(root);
        return;
    }
    const char *key;
    json_t *val;
    json_object_foreach(root, key, val)
    {
        char *k = pd_strdup(key), *v = json_value_text(val);
        if (!k || !v) {
            free(k);
            free(v);
            break;
        }
        ex->keys[ex->nvars] = k;
        ex->vals[ex->nvars++] = v;
        if (!has_name(run->vars, run->nvars, key)) {
            char **nv = realloc(run->vars, (run->nvars + 1) * sizeof *nv);
            char *kk = pd_strdup(key);
            if (nv)
                run->vars = nv;
            if (nv && kk)
                run->vars[run->nvars++] = kk;
            else
                free(kk);
        }
    }
    ex->has_params = true;
    json_decref(root);
}

static void load_status(const char *rep_dir, pd_rep_exec *ex)
{
    pd_str p = {0};
    pd_str_printf(&p, "%s/__iops_status.json", rep_dir);
    json_error_t jerr;
    json_t *root = p.data ? json_load_file(p.data, 0, &jerr) : NULL;
    pd_str_free(&p);
    if (!root)
        return;
    /* IOPS's names (SUCCEEDED, ...) and older paddiser runs' (succeeded) */
    const char *status = json_string_value(json_object_get(root, "status"));
    pd_task_state st;
    bool known = pd_iops_status_parse(status, &st);
    if (known && st == PD_TASK_SUCCEEDED)
        ex->n_succeeded++;
    else if (known && pd_task_failed(st))
        ex->n_failed++;
    else if (status)
        ex->n_other++;
    json_t *d = json_object_get(root, "duration_s");
    if (!d) /* an IOPS run's */
        d = json_object_get(root, "duration_seconds");
    if (json_is_number(d) && isfinite(json_number_value(d))) {
        ex->duration_sum += json_number_value(d);
        ex->n_duration++;
    }
    json_decref(root);
}

void pd_rep_run_load(const char *run_dir, pd_rep_run *run)
{
    *run = (pd_rep_run){0};
    char root[PATH_MAX];
    if (!pd_iops_exec_root(run_dir, root, sizeof root))
        return;
    if (!(run->exec_root = pd_strdup(root)))
        return;
    run_dir = root; /* IOPS keeps them under runs/ */
    char **names;
    size_t n = pd_rep_list(run_dir, "exec_", true, &names);
    if (!n)
        return;
    run->execs = calloc(n, sizeof *run->execs);
    if (!run->execs) {
        pd_rep_names_free(names);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        pd_rep_exec *ex = &run->execs[run->nexecs++];
        ex->id = pd_strdup(names[i]);
        pd_str dir = {0};
        pd_str_printf(&dir, "%s/%s", run_dir, names[i]);
        if (!dir.data)
            continue;
        load_params(dir.data, ex, run);
        ex->nreps = pd_rep_list(dir.data, "repetition_", true, &ex->reps);
        for (size_t r = 0; r < ex->nreps; r++) {
            pd_str rd = {0};
            pd_str_printf(&rd, "%s/%s", dir.data, ex->reps[r]);
            if (rd.data)
                load_status(rd.data, ex);
            pd_str_free(&rd);
        }
        pd_str_free(&dir);
    }
    pd_rep_names_free(names);
}

void pd_rep_run_free(pd_rep_run *run)
{
    for (size_t i = 0; i < run->nexecs; i++) {
        pd_rep_exec *ex = &run->execs[i];
        free(ex->id);
        for (size_t v = 0; v < ex->nvars; v++) {
            free(ex->keys[v]);
            free(ex->vals[v]);
        }
        free(ex->keys);
        free(ex->vals);
        pd_rep_names_free(ex->reps);
    }
    free(run->execs);
    free(run->exec_root);
    for (size_t v = 0; v < run->nvars; v++)
        free(run->vars[v]);
    free(run->vars);
    *run = (pd_rep_run){0};
}

/* ---------- results-shaped tables ---------- */

static bool is_number_cell(const char *s, double *v)
{
    double d;
    if (!pd_parse_double(s, &d) || !isfinite(d))
        return false;
    *v = d;
    return true;
}

static bool is_blank(const char *s)
{
    if (!s)
        return true;
    while (*s == ' ' || *s == '\t')
        s++;
    return *s == '\0';
}

int pd_rep_table_load(const char *path, char *const *vars, size_t nvars, pd_rep_table *t,
                      char *err, size_t errlen)
{
    *t = (pd_rep_table){0};
    pd_csv *csv = pd_csv_load(path, err, errlen);
    if (!csv)
        return -1;
    int c_exec = pd_csv_col(csv, "execution_id"), c_rep = pd_csv_col(csv, "repetition");
    char *flat = c_exec < 0 ? pd_iops_results_to_short(csv) : NULL;
    if (flat) { /* an IOPS run's results.csv: execution.execution_id, vars.*, metrics.* */
        pd_csv *shortened = pd_csv_parse(flat, err, errlen);
        free(flat);
        if (shortened) {
            pd_csv_free(csv);
            csv = shortened;
            c_exec = pd_csv_col(csv, "execution_id");
            c_rep = pd_csv_col(csv, "repetition");
        }
    }
    if (c_exec < 0 || c_rep < 0) {
        snprintf(err, errlen, "%s: no %s column in the header", path,
                 c_exec < 0 ? "execution_id" : "repetition");
        pd_csv_free(csv);
        return -1;
    }
    size_t ncols = csv->header.nfields;
    int *var_cols = calloc(nvars ? nvars : 1, sizeof *var_cols);
    int *met_cols = calloc(ncols ? ncols : 1, sizeof *met_cols);
    t->vars = calloc(nvars ? nvars : 1, sizeof *t->vars);
    t->metrics = calloc(ncols ? ncols : 1, sizeof *t->metrics);
    t->skipped = calloc(ncols ? ncols : 1, sizeof *t->skipped);
    if (!var_cols || !met_cols || !t->vars || !t->metrics || !t->skipped)
        goto oom;
    for (size_t v = 0; v < nvars; v++) {
        int c = pd_csv_col(csv, vars[v]);
        if (c < 0 || c == c_exec || c == c_rep)
            continue;
        var_cols[t->nvars] = c;
        if (!(t->vars[t->nvars++] = pd_strdup(vars[v])))
            goto oom;
    }
    for (size_t c = 0; c < ncols; c++) {
        if ((int)c == c_exec || (int)c == c_rep)
            continue;
        bool is_var = false;
        for (size_t v = 0; v < t->nvars; v++)
            is_var |= var_cols[v] == (int)c;
        if (is_var)
            continue;
        size_t numbers = 0, others = 0;
        for (size_t r = 0; r < csv->nrows; r++) {
            const char *s = pd_csv_get(csv, r, (int)c);
            double d;
            if (is_blank(s))
                continue;
            if (is_number_cell(s, &d))
                numbers++;
            else
                others++;
        }
        char *name = pd_strdup(csv->header.fields[c]);
        if (!name)
            goto oom;
        if (numbers && !others) {
            met_cols[t->nmetrics] = (int)c;
            t->metrics[t->nmetrics++] = name;
        } else {
            t->skipped[t->nskipped++] = name;
        }
    }
    size_t nr = csv->nrows;
    t->exec_ids = calloc(nr ? nr : 1, sizeof *t->exec_ids);
    t->reps = calloc(nr ? nr : 1, sizeof *t->reps);
    t->var_vals = calloc(nr * t->nvars + 1, sizeof *t->var_vals);
    t->vals = calloc(nr * t->nmetrics + 1, sizeof *t->vals);
    if (!t->exec_ids || !t->reps || !t->var_vals || !t->vals)
        goto oom;
    for (size_t r = 0; r < nr; r++) {
        const char *id = pd_csv_get(csv, r, c_exec);
        if (!(t->exec_ids[r] = pd_strdup(id ? id : "")))
            goto oom;
        t->nrows = r + 1;
        long rep;
        t->reps[r] = pd_parse_long(pd_csv_get(csv, r, c_rep), &rep) ? rep : 0;
        for (size_t v = 0; v < t->nvars; v++) {
            const char *s = pd_csv_get(csv, r, var_cols[v]);
            if (!(t->var_vals[r * t->nvars + v] = pd_strdup(s ? s : "")))
                goto oom;
        }
        for (size_t m = 0; m < t->nmetrics; m++) {
            double d;
            t->vals[r * t->nmetrics + m] =
                is_number_cell(pd_csv_get(csv, r, met_cols[m]), &d) ? d : NAN;
        }
    }
    free(var_cols);
    free(met_cols);
    pd_csv_free(csv);
    return 0;
oom:
    free(var_cols);
    free(met_cols);
    pd_csv_free(csv);
    pd_rep_table_free(t);
    snprintf(err, errlen, "%s: out of memory", path);
    return -1;
}

void pd_rep_table_free(pd_rep_table *t)
{
    for (size_t r = 0; r < t->nrows; r++) {
        free(t->exec_ids[r]);
        for (size_t v = 0; v < t->nvars; v++)
            free(t->var_vals[r * t->nvars + v]);
    }
    if (t->vars)
        for (size_t v = 0; v < t->nvars; v++)
            free(t->vars[v]);
    if (t->metrics)
        for (size_t m = 0; m < t->nmetrics; m++)
            free(t->metrics[m]);
    if (t->skipped)
        for (size_t m = 0; m < t->nskipped; m++)
            free(t->skipped[m]);
    free(t->vars);
    free(t->metrics);
    free(t->skipped);
    free(t->exec_ids);
    free(t->reps);
    free(t->var_vals);
    free(t->vals);
    *t = (pd_rep_table){0};
}

int pd_rep_table_metric(const pd_rep_table *t, const char *name)
{
    for (size_t m = 0; m < t->nmetrics; m++)
        if (!strcmp(t->metrics[m], name))
            return (int)m;
    return -1;
}

int pd_rep_table_var(const pd_rep_table *t, const char *name)
{
    for (size_t v = 0; v < t->nvars; v++)
        if (!strcmp(t->vars[v], name))
            return (int)v;
    return -1;
}

size_t pd_rep_common_prefix_vars(const char *path_a, const char *path_b, char ***vars, bool *flat)
{
    *vars = NULL;
    if (flat)
        *flat = false;
    char err[256];
    pd_csv *a = pd_csv_load(path_a, err, sizeof err);
    bool flattened = a && pd_csv_col(a, "execution.execution_id") >= 0;
    pd_csv *b = a && !flattened ? pd_csv_load(path_b, err, sizeof err) : NULL; /* the short layout's prefix */
    size_t n = 0, cap = 0;
    if (flattened) {
        /* IOPS's flattened layout names its variables: vars.NAME */
        if (flat)
            *flat = true;
        for (size_t c = 0; c < a->header.nfields; c++)
            if (!strncmp(a->header.fields[c], "vars.", 5) && !push_name(vars, &n, &cap, a->header.fields[c] + 5))
                break;
    } else if (a && b && a->header.nfields > 2 && b->header.nfields > 2 &&
        !strcmp(a->header.fields[0], "execution_id") && !strcmp(b->header.fields[0], "execution_id")) {
        for (size_t c = 2; c < a->header.nfields && c < b->header.nfields; c++) {
            if (strcmp(a->header.fields[c], b->header.fields[c]) != 0)
                break;
            if (!push_name(vars, &n, &cap, a->header.fields[c]))
                break;
        }
    }
    pd_csv_free(a);
    pd_csv_free(b);
    return n;
}

typedef struct {
    const char *s;
    double v;
} keyed_val;

static int cmp_keyed(const void *a, const void *b)
{
    const keyed_val *x = a, *y = b;
    if (x->v != y->v)
        return x->v < y->v ? -1 : 1;
    return strcmp(x->s, y->s); /* "1" and "1.0": a total order stays deterministic */
}

size_t pd_rep_distinct(const pd_rep_table *t, size_t v, char ***vals, bool *numeric)
{
    *vals = NULL;
    *numeric = true;
    size_t n = 0, cap = 0;
    for (size_t r = 0; r < t->nrows; r++) {
        const char *s = t->var_vals[r * t->nvars + v];
        bool seen = false;
        for (size_t i = 0; i < n && !seen; i++)
            seen = !strcmp((*vals)[i], s);
        if (!seen && !push_name(vals, &n, &cap, s))
            break;
    }
    keyed_val *kv = calloc(n ? n : 1, sizeof *kv);
    if (!kv)
        return n;
    for (size_t i = 0; i < n; i++) {
        kv[i].s = (*vals)[i];
        if (!is_number_cell(kv[i].s, &kv[i].v))
            *numeric = false;
    }
    if (*numeric && n > 1) {
        qsort(kv, n, sizeof *kv, cmp_keyed);
        char **sorted = calloc(n + 1, sizeof *sorted);
        if (sorted) {
            for (size_t i = 0; i < n; i++)
                sorted[i] = (char *)kv[i].s;
            free(*vals);
            *vals = sorted;
        }
    }
    if (n == 0)
        *numeric = false;
    free(kv);
    return n;
}

size_t pd_rep_mean_sd(const double *v, size_t n, double *mean, double *sd)
{
    size_t k = 0;
    double sum = 0;
    for (size_t i = 0; i < n; i++)
        if (isfinite(v[i])) {
            sum += v[i];
            k++;
        }
    *mean = k ? sum / (double)k : NAN;
    double ss = 0;
    for (size_t i = 0; i < n; i++)
        if (isfinite(v[i]))
            ss += (v[i] - *mean) * (v[i] - *mean);
    *sd = k > 1 ? sqrt(ss / (double)(k - 1)) : (k ? 0 : NAN);
    return k;
}

/* ---------- traces ---------- */

/* Trace files are streamed with pd_csv_reader, twice, and never held whole:
 * the first pass validates the files and counts each series' points and
 * their first and last time, the second reduces every series as its points
 * arrive (series_feed: the min and max of each time bucket, exactly what
 * pd_rep_downsample does to a whole series). Memory is a read block plus
 * the reduced series, whatever the trace size.
 *
 * A series is the points of one group (host, GPU index or I/O source) in
 * time order, the rows of one instant merged. The sampler writes rows in
 * time order; a group whose rows go back in time is buffered in the second
 * pass and sorted, so such a file still gives the same series. */

/* Reduces a series of n points, known in advance with its first and last x,
 * fed one point at a time in x order. */
typedef struct {
    size_t n, buckets; /* buckets 0: keep every point */
    double x0, span;
    size_t i, b;       /* points fed; current bucket */
    bool any;          /* the current bucket holds a point */
    size_t imin, imax;
    double xmin, ymin, xmax, ymax;
    pd_rep_ts out;
} series_reducer;

static void reducer_init(series_reducer *s, size_t n, size_t buckets, double x_first, double x_last)
{
    *s = (series_reducer){.n = n, .buckets = n <= 2 * buckets + 2 ? 0 : buckets, .x0 = x_first,
                          .span = x_last - x_first};
}

static void ts_push(pd_rep_ts *ts, double t, double y)
{
    if (ts->n == ts->cap) {
        size_t ncap = ts->cap ? ts->cap * 2 : 64;
        double *nt = realloc(ts->t, ncap * sizeof *nt);
        if (!nt)
            return;
        ts->t = nt;
        double *ny = realloc(ts->y, ncap * sizeof *ny);
        if (!ny)
            return;
        ts->y = ny;
        ts->cap = ncap;
    }
    ts->t[ts->n] = t;
    ts->y[ts->n++] = y;
}

/* The bucket's min and max, in the order they came. */
static void reducer_flush(series_reducer *s)
{
    if (!s->any)
        return;
    bool min_first = s->imin <= s->imax;
    ts_push(&s->out, min_first ? s->xmin : s->xmax, min_first ? s->ymin : s->ymax);
    if (s->imin != s->imax)
        ts_push(&s->out, min_first ? s->xmax : s->xmin, min_first ? s->ymax : s->ymin);
    s->any = false;
}

static void reducer_feed(series_reducer *s, double x, double y)
{
    size_t i = s->i++;
    if (i >= s->n)
        return; /* more points than counted: the file grew between the passes */
    if (!s->buckets || i == 0) {
        ts_push(&s->out, x, y);
        return;
    }
    if (i == s->n - 1) { /* the last point is kept as it is */
        reducer_flush(s);
        ts_push(&s->out, x, y);
        return;
    }
    while (s->b < s->buckets - 1 && !(x <= s->x0 + s->span * (double)(s->b + 1) / (double)s->buckets)) {
        reducer_flush(s); /* an empty bucket adds nothing */
        s->b++;
    }
    if (!s->any || y < s->ymin)
        s->imin = i, s->xmin = x, s->ymin = y;
    if (!s->any || y > s->ymax)
        s->imax = i, s->xmax = x, s->ymax = y;
    s->any = true;
}

size_t pd_rep_downsample(const double *x, const double *y, size_t n, size_t buckets, double **ox,
                         double **oy)
{
    series_reducer s;
    reducer_init(&s, n, buckets, n ? x[0] : 0, n ? x[n - 1] : 0);
    for (size_t i = 0; i < n; i++)
        reducer_feed(&s, x[i], y[i]);
    *ox = s.out.t; /* NULL when no point was kept */
    *oy = s.out.y;
    return s.out.n;
}

typedef enum { TRACE_CPU, TRACE_GPU, TRACE_IO } trace_kind;

/* One sample row of any kind: a, b, c are kind-specific values. */
typedef struct {
    double ts, a, b, c;
    size_t idx; /* arrival order: sorting keeps ties in file order */
} trace_row;

typedef struct {
    size_t n;
    double first, last; /* raw timestamps */
    series_reducer red;
} series_build;

/* The rows of one group at one instant, merged so far. */
typedef struct {
    bool pending;
    double now, sum, memv, rb, wb, interval;
    size_t k;
} trace_instant;

typedef struct {
    char *host, *key2; /* key2: GPU index or I/O source, "" for CPU */
    long key2n;        /* numeric GPU index, for ordering */
    trace_instant cur;
    double latest;   /* latest timestamp seen (pass 1) */
    bool seen;
    bool disordered; /* rows went back in time (pass 1) */
    trace_row *rows; /* pass 2, disordered groups: every row */
    size_t nrows, caprows;
    series_build s[2]; /* CPU: cpu, mem; GPU: util, power; I/O: read, write */
} trace_group;

typedef struct {
    trace_kind kind;
    int pass;       /* 1: count, 2: reduce */
    size_t buckets; /* 0: keep every point */
    trace_group *g;
    size_t ng;
    double t0; /* first timestamp of any usable row, all kinds */
} trace_ctx;

static void series_point(trace_ctx *c, series_build *s, double ts, double y)
{
    if (c->pass == 1) {
        if (!s->n++)
            s->first = ts;
        s->last = ts;
    } else {
        reducer_feed(&s->red, ts - c->t0, y);
    }
}

/* Emits the merged instant of g. */
static void group_flush(trace_ctx *c, trace_group *g)
{
    trace_instant *in = &g->cur;
    if (!in->pending)
        return;
    in->pending = false;
    if (c->kind == TRACE_CPU) {
        /* all cores of one host at one instant: mean CPU, memory once */
        series_point(c, &g->s[0], in->now, in->sum / (double)in->k);
        if (isfinite(in->memv))
            series_point(c, &g->s[1], in->now, in->memv);
    } else if (c->kind == TRACE_IO) {
        /* several devices of one source at one instant: bytes summed, the
         * interval counted once */
        series_point(c, &g->s[0], in->now, in->rb / in->interval / (1024.0 * 1024.0));
        series_point(c, &g->s[1], in->now, in->wb / in->interval / (1024.0 * 1024.0));
    }
}

static void group_row(trace_ctx *c, trace_group *g, const trace_row *r)
{
    if (c->kind == TRACE_GPU) { /* one point per row */
        series_point(c, &g->s[0], r->ts, r->a);
        series_point(c, &g->s[1], r->ts, r->b);
        return;
    }
    trace_instant *in = &g->cur;
    if (!in->pending || r->ts != in->now) {
        group_flush(c, g);
        *in = (trace_instant){.pending = true, .now = r->ts, .memv = NAN};
    }
    in->k++;
    in->sum += r->a;
    if (isfinite(r->b))
        in->memv = r->b;
    in->rb += r->a;
    in->wb += r->b;
    if (r->c > in->interval)
        in->interval = r->c;
}

static int cmp_row(const void *pa, const void *pb)
{
    const trace_row *a = pa, *b = pb;
    if (a->ts != b->ts)
        return a->ts < b->ts ? -1 : 1;
    return (a->idx > b->idx) - (a->idx < b->idx);
}

/* A usable row of group g, in file order. */
static void take_row(trace_ctx *c, trace_group *g, trace_row r)
{
    if (c->pass == 1) {
        if (g->seen && r.ts < g->latest)
            g->disordered = true;
        if (!g->seen || r.ts > g->latest)
            g->latest = r.ts;
        g->seen = true;
        if (r.ts < c->t0)
            c->t0 = r.ts;
    }
    if (c->pass == 2 && g->disordered) {
        if (g->nrows == g->caprows) {
            size_t ncap = g->caprows ? g->caprows * 2 : 256;
            trace_row *p = realloc(g->rows, ncap * sizeof *p);
            if (!p)
                return;
            g->rows = p;
            g->caprows = ncap;
        }
        r.idx = g->nrows;
        g->rows[g->nrows++] = r;
        return;
    }
    group_row(c, g, &r);
}

static trace_group *group_get(trace_ctx *c, const char *host, const char *key2, long key2n)
{
    for (size_t i = c->ng; i-- > 0;)
        if (c->g[i].key2n == key2n && !strcmp(c->g[i].host, host) && !strcmp(c->g[i].key2, key2))
            return &c->g[i];
    trace_group *p = realloc(c->g, (c->ng + 1) * sizeof *p);
    if (!p)
        return NULL;
    c->g = p;
    trace_group *g = &c->g[c->ng];
    *g = (trace_group){.host = pd_strdup(host), .key2 = pd_strdup(key2), .key2n = key2n};
    if (!g->host || !g->key2) {
        free(g->host);
        free(g->key2);
        return NULL;
    }
    c->ng++;
    return g;
}

static void groups_free(trace_ctx *c, size_t from)
{
    for (size_t i = from; i < c->ng; i++) {
        free(c->g[i].host);
        free(c->g[i].key2);
        free(c->g[i].rows);
        free(c->g[i].s[0].red.out.t);
        free(c->g[i].s[0].red.out.y);
        free(c->g[i].s[1].red.out.t);
        free(c->g[i].s[1].red.out.y);
    }
    c->ng = from;
}

static bool num_at(const pd_csv_row *row, int c, double *out)
{
    return c >= 0 && (size_t)c < row->nfields && is_number_cell(row->fields[c], out);
}

static const char *text_at(const pd_csv_row *row, int c)
{
    return c >= 0 && (size_t)c < row->nfields ? row->fields[c] : NULL;
}

/* What each kind reads: file prefix, required columns, optional ones. */
static const char *const cpu_need[] = {"timestamp", "hostname", "cpu_user_pct", "cpu_system_pct",
                                       "mem_total_kb", "mem_available_kb", NULL};
static const char *const gpu_need[] = {"timestamp", "hostname", "gpu_index", "utilization_gpu_pct",
                                       "power_draw_w", NULL};
static const char *const io_need[] = {"timestamp", "hostname", "source", "interval_s",
                                      "read_bytes", "write_bytes", NULL};
static const struct {
    const char *prefix, *what;
    const char *const *cols;
    size_t nrequired; /* the first nrequired of cols */
} trace_kinds[] = {
    [TRACE_CPU] = {"__iops_trace_", "CPU", cpu_need, 4},
    [TRACE_GPU] = {"__iops_gpu_trace_", "GPU", gpu_need, 5},
    [TRACE_IO] = {"__iops_io_trace_", "I/O", io_need, 6},
};

/* Parses a row of kind k into its group and values; false if malformed
 * (for GPU: [N/A] power or utilisation drops the row, as the summary does). */
static bool parse_row(trace_kind k, const int *col, const pd_csv_row *row, const char **host,
                      const char **key2, long *key2n, trace_row *r)
{
    *host = text_at(row, col[1]);
    *key2 = k == TRACE_CPU ? "" : text_at(row, col[2]);
    *key2n = 0;
    if (!*host || !*key2 || !num_at(row, col[0], &r->ts))
        return false;
    switch (k) {
    case TRACE_CPU: {
        double user, sys, tot, avail;
        if (!num_at(row, col[2], &user) || !num_at(row, col[3], &sys))
            return false;
        r->a = user + sys;
        r->b = num_at(row, col[4], &tot) && num_at(row, col[5], &avail) ? (tot - avail) / (1024.0 * 1024.0)
                                                                         : NAN;
        return true;
    }
    case TRACE_GPU:
        return pd_parse_long(*key2, key2n) && num_at(row, col[3], &r->a) && num_at(row, col[4], &r->b);
    case TRACE_IO:
        return num_at(row, col[3], &r->c) && r->c > 0 && num_at(row, col[4], &r->a) &&
               num_at(row, col[5], &r->b);
    }
    return false;
}

/* The reader's message without the path (the page names the file) and
 * without the line it adds. */
static void note_unreadable(pd_str *out, const char *name, const char *err)
{
    const char *why = err, *colon = strstr(err, ": ");
    if (colon && strstr(err, name) && strstr(err, name) < colon)
        why = colon + 2;
    const char *line = strstr(why, " (record from line ");
    pd_str_printf(out, "%s: %.*s. ", name, line ? (int)(line - why) : (int)strlen(why), why);
}

/* Streams one file. Pass 1: false (noting why) when it cannot be used at
 * all; *nrecords gets its record count. Pass 2 reads at most *nrecords. */
static bool stream_file(trace_ctx *c, const char *path, const char *name, size_t *nrecords,
                        pd_rep_traces *tr, pd_str *unreadable, pd_str *nocols)
{
    const char *const *cols = trace_kinds[c->kind].cols;
    char err[512];
    pd_csv_reader *rd = pd_csv_reader_open(path, 0, err, sizeof err);
    if (rd) /* a sampler's last row may be cut short by a failed write */
        pd_csv_reader_complete_lines(rd, true);
    pd_csv_row row;
    int got = rd ? pd_csv_reader_next(rd, &row, err, sizeof err) : -1;
    if (got == 0)
        snprintf(err, sizeof err, "empty file (no header)");
    if (got <= 0) {
        if (c->pass == 1)
            note_unreadable(unreadable, name, err);
        pd_csv_reader_close(rd);
        return false;
    }
    int col[6] = {-1, -1, -1, -1, -1, -1};
    for (size_t i = 0; cols[i]; i++)
        if ((col[i] = pd_csv_row_col(&row, cols[i])) < 0 && i < trace_kinds[c->kind].nrequired) {
            /* a file that does not parse is named as unreadable first */
            while ((got = pd_csv_reader_next(rd, &row, err, sizeof err)) > 0)
                ;
            if (c->pass == 1 && got < 0)
                note_unreadable(unreadable, name, err);
            else if (c->pass == 1)
                pd_str_printf(nocols, "%s trace without a %s column: skipped\n", trace_kinds[c->kind].what,
                              cols[i]);
            pd_csv_reader_close(rd);
            return false;
        }
    size_t n = 0, limit = c->pass == 2 ? *nrecords : SIZE_MAX, nbad = 0;
    trace_group *last = NULL;
    while (n < limit && (got = pd_csv_reader_next(rd, &row, err, sizeof err)) > 0) {
        n++;
        const char *host, *key2;
        long key2n;
        trace_row r = {0};
        if (!parse_row(c->kind, col, &row, &host, &key2, &key2n, &r)) {
            nbad++;
            continue;
        }
        /* consecutive rows mostly share their group */
        trace_group *g = last && last->key2n == key2n && !strcmp(last->host, host) && !strcmp(last->key2, key2)
                             ? last
                             : group_get(c, host, key2, key2n);
        if (g)
            take_row(c, g, r);
        last = g;
    }
    pd_csv_reader_close(rd);
    if (got < 0 && c->pass == 1) {
        note_unreadable(unreadable, name, err);
        return false;
    }
    if (c->pass == 1)
        tr->nbad_rows += nbad;
    *nrecords = n;
    return true;
}

static int cmp_group(const void *pa, const void *pb)
{
    const trace_group *a = pa, *b = pb;
    int c = strcmp(a->host, b->host);
    if (c)
        return c;
    if (a->key2n != b->key2n)
        return a->key2n < b->key2n ? -1 : 1;
    return strcmp(a->key2, b->key2);
}

/* Hands a reduced series to set under name (nothing when it has no point:
 * a host without memory columns gets no memory series). */
static void series_move(pd_rep_tsset *set, const char *name, series_build *s)
{
    if (!s->n)
        return;
    pd_rep_ts *p = realloc(set->s, (set->n + 1) * sizeof *p);
    if (!p)
        return;
    set->s = p;
    char *copy = pd_strdup(name);
    if (!copy)
        return;
    set->s[set->n++] = (pd_rep_ts){.name = copy, .t = s->red.out.t, .y = s->red.out.y, .n = s->red.out.n,
                                   .cap = s->red.out.cap, .n_raw = s->n};
    s->red.out = (pd_rep_ts){0};
}

static void build_series(trace_ctx *c, pd_rep_traces *tr)
{
    if (c->ng)
        qsort(c->g, c->ng, sizeof *c->g, cmp_group);
    bool multi = false;
    for (size_t i = 1; i < c->ng; i++)
        multi |= strcmp(c->g[i].host, c->g[0].host) != 0;
    for (size_t i = 0; i < c->ng; i++) {
        trace_group *g = &c->g[i];
        pd_str name = {0};
        switch (c->kind) {
        case TRACE_CPU:
            series_move(&tr->cpu, g->host, &g->s[0]);
            series_move(&tr->mem, g->host, &g->s[1]);
            break;
        case TRACE_GPU:
            if (multi)
                pd_str_printf(&name, "%s:gpu%ld", g->host, g->key2n);
            else
                pd_str_printf(&name, "gpu%ld", g->key2n);
            series_move(&tr->gpu_util, name.data ? name.data : "gpu", &g->s[0]);
            series_move(&tr->gpu_power, name.data ? name.data : "gpu", &g->s[1]);
            break;
        case TRACE_IO:
            pd_str_printf(&name, "%s%s%s read", multi ? g->host : "", multi ? " " : "", g->key2);
            series_move(&tr->io, name.data ? name.data : "read", &g->s[0]);
            pd_str_clear(&name);
            pd_str_printf(&name, "%s%s%s write", multi ? g->host : "", multi ? " " : "", g->key2);
            series_move(&tr->io, name.data ? name.data : "write", &g->s[1]);
            break;
        }
        pd_str_free(&name);
    }
}

/* A disordered group's buffered rows, sorted, through both passes. */
static void replay_sorted(trace_ctx *c, trace_group *g)
{
    if (g->nrows)
        qsort(g->rows, g->nrows, sizeof *g->rows, cmp_row);
    g->s[0].n = g->s[1].n = 0;
    for (int pass = 1; pass <= 2; pass++) {
        c->pass = pass;
        if (pass == 2)
            for (int k = 0; k < 2; k++)
                reducer_init(&g->s[k].red, g->s[k].n, c->buckets, g->s[k].first - c->t0, g->s[k].last - c->t0);
        g->cur.pending = false;
        for (size_t i = 0; i < g->nrows; i++)
            group_row(c, g, &g->rows[i]);
        group_flush(c, g);
    }
}

typedef struct {
    char **paths, **names;
    size_t *nrecords;
    size_t n;
} file_list;

/* Pass 1 over one kind: the usable files and their groups' counts. */
static void scan_kind(const char *rep_dir, trace_ctx *c, file_list *fl, pd_rep_traces *tr)
{
    char **names;
    size_t n = pd_rep_list(rep_dir, trace_kinds[c->kind].prefix, false, &names), used = 0;
    fl->paths = calloc(n + 1, sizeof *fl->paths);
    fl->nrecords = calloc(n + 1, sizeof *fl->nrecords);
    pd_str unreadable = {0}, nocols = {0};
    c->pass = 1;
    for (size_t i = 0; i < n && fl->paths && fl->nrecords; i++) {
        size_t len = strlen(names[i]);
        if (len < 4 || strcmp(names[i] + len - 4, ".csv") != 0)
            continue;
        used++;
        pd_str p = {0};
        pd_str_printf(&p, "%s/%s", rep_dir, names[i]);
        if (!p.data)
            continue;
        /* a file that fails part way counts for nothing: undo its rows */
        size_t ng = c->ng, nbad = tr->nbad_rows;
        double t0 = c->t0;
        trace_group *saved = ng ? malloc(ng * sizeof *saved) : NULL;
        if (ng && !saved) {
            pd_str_free(&p);
            continue;
        }
        if (ng)
            memcpy(saved, c->g, ng * sizeof *saved);
        if (stream_file(c, p.data, names[i], &fl->nrecords[fl->n], tr, &unreadable, &nocols)) {
            fl->paths[fl->n++] = pd_str_take(&p);
        } else {
            groups_free(c, ng);
            if (ng)
                memcpy(c->g, saved, ng * sizeof *saved);
            tr->nbad_rows = nbad;
            c->t0 = t0;
        }
        free(saved);
        pd_str_free(&p);
    }
    pd_rep_names_free(names);
    for (size_t i = 0; i < c->ng; i++)
        group_flush(c, &c->g[i]);
    if (unreadable.len)
        pd_str_append(&tr->problems, unreadable.data);
    if (nocols.len)
        pd_str_append(&tr->problems, nocols.data);
    pd_str_free(&unreadable);
    pd_str_free(&nocols);
    size_t *nfiles = c->kind == TRACE_CPU ? &tr->ncpu_files : c->kind == TRACE_GPU ? &tr->ngpu_files : &tr->nio_files;
    *nfiles = used;
}

/* Pass 2 over one kind, then its series into tr. */
static void reduce_kind(trace_ctx *c, file_list *fl, pd_rep_traces *tr)
{
    c->pass = 2;
    for (size_t i = 0; i < c->ng; i++) {
        trace_group *g = &c->g[i];
        g->cur.pending = false;
        for (int k = 0; k < 2; k++)
            reducer_init(&g->s[k].red, g->s[k].n, c->buckets, g->s[k].first - c->t0, g->s[k].last - c->t0);
    }
    for (size_t f = 0; f < fl->n; f++)
        stream_file(c, fl->paths[f], NULL, &fl->nrecords[f], tr, NULL, NULL);
    for (size_t i = 0; i < c->ng; i++) {
        trace_group *g = &c->g[i];
        if (g->disordered)
            replay_sorted(c, g);
        else
            group_flush(c, g);
        reducer_flush(&g->s[0].red); /* a file that shrank between the passes */
        reducer_flush(&g->s[1].red);
    }
    build_series(c, tr);
}

static void file_list_free(file_list *fl)
{
    for (size_t i = 0; fl->paths && i < fl->n; i++)
        free(fl->paths[i]);
    free(fl->paths);
    free(fl->nrecords);
}

void pd_rep_traces_load_reduced(const char *rep_dir, size_t buckets, pd_rep_traces *tr)
{
    *tr = (pd_rep_traces){0};
    trace_ctx ctx[3];
    file_list fl[3] = {{0}};
    double t0 = INFINITY;
    for (int k = 0; k < 3; k++) {
        ctx[k] = (trace_ctx){.kind = (trace_kind)k, .buckets = buckets, .t0 = INFINITY};
        scan_kind(rep_dir, &ctx[k], &fl[k], tr);
        t0 = fmin(t0, ctx[k].t0);
    }
    for (int k = 0; k < 3; k++) {
        ctx[k].t0 = t0; /* all series share one time axis */
        reduce_kind(&ctx[k], &fl[k], tr);
        groups_free(&ctx[k], 0);
        free(ctx[k].g);
        file_list_free(&fl[k]);
    }
}

void pd_rep_traces_load(const char *rep_dir, pd_rep_traces *tr) { pd_rep_traces_load_reduced(rep_dir, 0, tr); }

static void tsset_free(pd_rep_tsset *set)
{
    for (size_t i = 0; i < set->n; i++) {
        free(set->s[i].name);
        free(set->s[i].t);
        free(set->s[i].y);
    }
    free(set->s);
    *set = (pd_rep_tsset){0};
}

void pd_rep_traces_free(pd_rep_traces *tr)
{
    tsset_free(&tr->cpu);
    tsset_free(&tr->mem);
    tsset_free(&tr->gpu_util);
    tsset_free(&tr->gpu_power);
    tsset_free(&tr->io);
    pd_str_free(&tr->problems);
}

bool pd_rep_dir_has_traces(const char *rep_dir)
{
    static const char *const prefixes[] = {"__iops_trace_", "__iops_gpu_trace_", "__iops_io_trace_"};
    for (size_t k = 0; k < PD_ARRAY_LEN(prefixes); k++) {
        char **names;
        size_t n = pd_rep_list(rep_dir, prefixes[k], false, &names);
        bool found = false;
        for (size_t i = 0; i < n && !found; i++) {
            size_t len = strlen(names[i]);
            found = len > 4 && !strcmp(names[i] + len - 4, ".csv");
        }
        pd_rep_names_free(names);
        if (found)
            return true;
    }
    return false;
}

/* ---------- per-task times ---------- */

static pd_rep_policy *policy_get(pd_rep_tasks *t, const char *name)
{
    for (size_t i = 0; i < t->n; i++)
        if (!strcmp(t->p[i].policy, name))
            return &t->p[i];
    pd_rep_policy *p = realloc(t->p, (t->n + 1) * sizeof *p);
    if (!p)
        return NULL;
    t->p = p;
    pd_rep_policy *pol = &t->p[t->n];
    *pol = (pd_rep_policy){0};
    if (!(pol->policy = pd_strdup(name)))
        return NULL;
    t->n++;
    return pol;
}

static bool policy_push(pd_rep_policy *p, const char *task, double time, double share, double bytes)
{
    char **nt = realloc(p->tasks, (p->n + 1) * sizeof *nt);
    if (nt)
        p->tasks = nt;
    double *a = nt ? realloc(p->time_s, (p->n + 1) * sizeof *a) : NULL;
    if (a)
        p->time_s = a;
    double *b = a ? realloc(p->dram_share, (p->n + 1) * sizeof *b) : NULL;
    if (b)
        p->dram_share = b;
    double *c = b ? realloc(p->dram_bytes, (p->n + 1) * sizeof *c) : NULL;
    if (c)
        p->dram_bytes = c;
    char *name = c ? pd_strdup(task) : NULL;
    if (!name)
        return false;
    p->tasks[p->n] = name;
    p->time_s[p->n] = time;
    p->dram_share[p->n] = share;
    p->dram_bytes[p->n++] = bytes;
    return true;
}

int pd_rep_tasks_load(const char *path, pd_rep_tasks *tasks, char *err, size_t errlen)
{
    *tasks = (pd_rep_tasks){0};
    pd_csv *csv = pd_csv_load(path, err, errlen);
    if (!csv)
        return -1;
    int c_pol = pd_csv_col(csv, "policy"), c_task = pd_csv_col(csv, "task"),
        c_time = pd_csv_col(csv, "time_s"), c_share = pd_csv_col(csv, "dram_share"),
        c_bytes = pd_csv_col(csv, "dram_bytes");
    if (c_task < 0 || c_time < 0) {
        snprintf(err, errlen, "%s: no %s column in the header", path, c_task < 0 ? "task" : "time_s");
        pd_csv_free(csv);
        return -1;
    }
    for (size_t r = 0; r < csv->nrows; r++) {
        const char *pol = c_pol >= 0 ? pd_csv_get(csv, r, c_pol) : "";
        const char *task = pd_csv_get(csv, r, c_task);
        double time, share, bytes;
        if (!pol || !task || !num_at(&csv->rows[r], c_time, &time) || time < 0) {
            tasks->nbad_rows++;
            continue;
        }
        if (!num_at(&csv->rows[r], c_share, &share))
            share = NAN;
        if (!num_at(&csv->rows[r], c_bytes, &bytes))
            bytes = NAN;
        pd_rep_policy *p = policy_get(tasks, pol);
        if (!p || !policy_push(p, task, time, share, bytes)) {
            pd_csv_free(csv);
            pd_rep_tasks_free(tasks);
            snprintf(err, errlen, "%s: out of memory", path);
            return -1;
        }
    }
    pd_csv_free(csv);
    if (tasks->n == 0) {
        size_t bad = tasks->nbad_rows;
        pd_rep_tasks_free(tasks);
        snprintf(err, errlen, "%s: no usable rows (%zu malformed)", path, bad);
        return -1;
    }
    return 0;
}

void pd_rep_tasks_free(pd_rep_tasks *tasks)
{
    for (size_t i = 0; i < tasks->n; i++) {
        pd_rep_policy *p = &tasks->p[i];
        for (size_t k = 0; k < p->n; k++)
            free(p->tasks[k]);
        free(p->policy);
        free(p->tasks);
        free(p->time_s);
        free(p->dram_share);
        free(p->dram_bytes);
    }
    free(tasks->p);
    *tasks = (pd_rep_tasks){0};
}
