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
    const char *status = json_string_value(json_object_get(root, "status"));
    if (status && !strcmp(status, "succeeded"))
        ex->n_succeeded++;
    else if (status && !strcmp(status, "failed"))
        ex->n_failed++;
    else if (status)
        ex->n_other++;
    json_t *d = json_object_get(root, "duration_s");
    if (json_is_number(d) && isfinite(json_number_value(d))) {
        ex->duration_sum += json_number_value(d);
        ex->n_duration++;
    }
    json_decref(root);
}

void pd_rep_run_load(const char *run_dir, pd_rep_run *run)
{
    *run = (pd_rep_run){0};
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

size_t pd_rep_common_prefix_vars(const char *path_a, const char *path_b, char ***vars)
{
    *vars = NULL;
    char err[256];
    pd_csv *a = pd_csv_load(path_a, err, sizeof err);
    pd_csv *b = a ? pd_csv_load(path_b, err, sizeof err) : NULL;
    size_t n = 0, cap = 0;
    if (a && b && a->header.nfields > 2 && b->header.nfields > 2 &&
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

static pd_rep_ts *tsset_add(pd_rep_tsset *set, const char *name)
{
    pd_rep_ts *p = realloc(set->s, (set->n + 1) * sizeof *p);
    if (!p)
        return NULL;
    set->s = p;
    pd_rep_ts *ts = &set->s[set->n];
    *ts = (pd_rep_ts){0};
    if (!(ts->name = pd_strdup(name)))
        return NULL;
    set->n++;
    return ts;
}

static void ts_push(pd_rep_ts *ts, double t, double y)
{
    if (!ts)
        return;
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

static void tsset_shift(pd_rep_tsset *set, double t0)
{
    for (size_t i = 0; i < set->n; i++)
        for (size_t k = 0; k < set->s[i].n; k++)
            set->s[i].t[k] -= t0;
}

/* One sample row of any trace kind, keyed for grouping. */
typedef struct {
    const char *host, *key2; /* key2: GPU index or I/O source */
    long key2n;              /* numeric GPU index for ordering */
    double ts, a, b, c;      /* kind-specific values */
    size_t idx;              /* load order: ties stay deterministic */
} trace_rec;

typedef struct {
    trace_rec *r;
    size_t n, cap;
} rec_vec;

static void rec_push(rec_vec *v, trace_rec r)
{
    if (v->n == v->cap) {
        size_t ncap = v->cap ? v->cap * 2 : 256;
        trace_rec *p = realloc(v->r, ncap * sizeof *p);
        if (!p)
            return;
        v->r = p;
        v->cap = ncap;
    }
    r.idx = v->n;
    v->r[v->n++] = r;
}

static int cmp_rec(const void *pa, const void *pb)
{
    const trace_rec *a = pa, *b = pb;
    int c = strcmp(a->host, b->host);
    if (c)
        return c;
    if (a->key2n != b->key2n)
        return a->key2n < b->key2n ? -1 : 1;
    if ((c = strcmp(a->key2, b->key2)))
        return c;
    if (a->ts != b->ts)
        return a->ts < b->ts ? -1 : 1;
    return (a->idx > b->idx) - (a->idx < b->idx);
}

static bool same_group(const trace_rec *a, const trace_rec *b)
{
    return !strcmp(a->host, b->host) && a->key2n == b->key2n && !strcmp(a->key2, b->key2);
}

static size_t distinct_hosts(const rec_vec *v)
{
    size_t n = 0;
    for (size_t i = 0; i < v->n; i++)
        if (i == 0 || strcmp(v->r[i].host, v->r[i - 1].host))
            n++;
    return n;
}

typedef struct {
    pd_csv **files;
    size_t n;
} csv_list;

static void csv_list_free(csv_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        pd_csv_free(l->files[i]);
    free(l->files);
}

/* Loads rep_dir/<prefix>*.csv into l; unreadable files are noted. */
static size_t load_kind(const char *rep_dir, const char *prefix, csv_list *l, pd_rep_traces *tr)
{
    char **names;
    size_t n = pd_rep_list(rep_dir, prefix, false, &names), used = 0;
    l->files = calloc(n ? n : 1, sizeof *l->files);
    for (size_t i = 0; i < n && l->files; i++) {
        size_t len = strlen(names[i]);
        if (len < 4 || strcmp(names[i] + len - 4, ".csv") != 0)
            continue;
        pd_str p = {0};
        pd_str_printf(&p, "%s/%s", rep_dir, names[i]);
        char err[512];
        pd_csv *csv = p.data ? pd_csv_load(p.data, err, sizeof err) : NULL;
        pd_str_free(&p);
        used++;
        if (!csv) {
            /* the loader's message starts with the full path: name the file only */
            const char *why = err, *colon = strstr(err, ": ");
            if (colon && strstr(err, names[i]) && strstr(err, names[i]) < colon)
                why = colon + 2;
            pd_str_printf(&tr->problems, "%s: %s. ", names[i], why);
            continue;
        }
        l->files[l->n++] = csv;
    }
    pd_rep_names_free(names);
    return used;
}

/* Column indices by name; false (noting the file) when one is missing. */
static bool need_cols(pd_csv *csv, const char *const *names, int *cols, size_t n,
                      pd_rep_traces *tr, const char *kind)
{
    for (size_t i = 0; i < n; i++)
        if ((cols[i] = pd_csv_col(csv, names[i])) < 0) {
            pd_str_printf(&tr->problems, "%s trace without a %s column: skipped\n", kind, names[i]);
            return false;
        }
    return true;
}

static bool num_at(pd_csv *csv, size_t r, int c, double *out)
{
    return is_number_cell(pd_csv_get(csv, r, c), out);
}

static double ts_min(const rec_vec *v, double t0)
{
    for (size_t i = 0; i < v->n; i++)
        if (v->r[i].ts < t0)
            t0 = v->r[i].ts;
    return t0;
}

static void load_cpu(const char *rep_dir, pd_rep_traces *tr, rec_vec *v, csv_list *l)
{
    static const char *const need[] = {"timestamp", "hostname", "cpu_user_pct", "cpu_system_pct"};
    tr->ncpu_files = load_kind(rep_dir, "__iops_trace_", l, tr);
    for (size_t f = 0; f < l->n; f++) {
        pd_csv *csv = l->files[f];
        int c[4];
        if (!need_cols(csv, need, c, 4, tr, "CPU"))
            continue;
        int c_tot = pd_csv_col(csv, "mem_total_kb"), c_avail = pd_csv_col(csv, "mem_available_kb");
        for (size_t r = 0; r < csv->nrows; r++) {
            trace_rec rec = {.host = pd_csv_get(csv, r, c[1]), .key2 = ""};
            double user, sys, tot, avail;
            if (!rec.host || !num_at(csv, r, c[0], &rec.ts) || !num_at(csv, r, c[2], &user) ||
                !num_at(csv, r, c[3], &sys)) {
                tr->nbad_rows++;
                continue;
            }
            rec.a = user + sys;
            rec.b = num_at(csv, r, c_tot, &tot) && num_at(csv, r, c_avail, &avail)
                        ? (tot - avail) / (1024.0 * 1024.0)
                        : NAN;
            rec_push(v, rec);
        }
    }
}

static void build_cpu(pd_rep_traces *tr, rec_vec *v)
{
    if (v->n)
        qsort(v->r, v->n, sizeof *v->r, cmp_rec);
    pd_rep_ts *cpu = NULL, *mem = NULL;
    for (size_t i = 0; i < v->n;) {
        trace_rec *g = &v->r[i];
        if (i == 0 || !same_group(g, &v->r[i - 1])) {
            cpu = tsset_add(&tr->cpu, g->host);
            mem = tsset_add(&tr->mem, g->host);
        }
        /* all cores of one host at one instant: mean CPU, memory once */
        double sum = 0, memv = NAN;
        size_t k = 0;
        size_t j = i;
        for (; j < v->n && same_group(&v->r[j], g) && v->r[j].ts == g->ts; j++) {
            sum += v->r[j].a;
            k++;
            if (isfinite(v->r[j].b))
                memv = v->r[j].b;
        }
        ts_push(cpu, g->ts, sum / (double)k);
        if (isfinite(memv))
            ts_push(mem, g->ts, memv);
        i = j;
    }
    /* a host without memory columns gets no memory series */
    for (size_t s = tr->mem.n; s-- > 0;)
        if (tr->mem.s[s].n == 0) {
            free(tr->mem.s[s].name);
            free(tr->mem.s[s].t);
            free(tr->mem.s[s].y);
            memmove(&tr->mem.s[s], &tr->mem.s[s + 1], (tr->mem.n - s - 1) * sizeof *tr->mem.s);
            tr->mem.n--;
        }
}

static void load_gpu(const char *rep_dir, pd_rep_traces *tr, rec_vec *v, csv_list *l)
{
    static const char *const need[] = {"timestamp", "hostname", "gpu_index", "utilization_gpu_pct",
                                       "power_draw_w"};
    tr->ngpu_files = load_kind(rep_dir, "__iops_gpu_trace_", l, tr);
    for (size_t f = 0; f < l->n; f++) {
        pd_csv *csv = l->files[f];
        int c[5];
        if (!need_cols(csv, need, c, 5, tr, "GPU"))
            continue;
        for (size_t r = 0; r < csv->nrows; r++) {
            trace_rec rec = {.host = pd_csv_get(csv, r, c[1]), .key2 = pd_csv_get(csv, r, c[2])};
            /* [N/A] power or utilisation: the row is dropped, as the summary does */
            if (!rec.host || !rec.key2 || !pd_parse_long(rec.key2, &rec.key2n) ||
                !num_at(csv, r, c[0], &rec.ts) || !num_at(csv, r, c[3], &rec.a) ||
                !num_at(csv, r, c[4], &rec.b)) {
                tr->nbad_rows++;
                continue;
            }
            rec_push(v, rec);
        }
    }
}

static void build_gpu(pd_rep_traces *tr, rec_vec *v)
{
    if (v->n)
        qsort(v->r, v->n, sizeof *v->r, cmp_rec);
    bool multi = distinct_hosts(v) > 1;
    pd_rep_ts *util = NULL, *power = NULL;
    for (size_t i = 0; i < v->n; i++) {
        trace_rec *g = &v->r[i];
        if (i == 0 || !same_group(g, &v->r[i - 1])) {
            pd_str name = {0};
            if (multi)
                pd_str_printf(&name, "%s:gpu%ld", g->host, g->key2n);
            else
                pd_str_printf(&name, "gpu%ld", g->key2n);
            util = tsset_add(&tr->gpu_util, name.data ? name.data : "gpu");
            power = tsset_add(&tr->gpu_power, name.data ? name.data : "gpu");
            pd_str_free(&name);
        }
        ts_push(util, g->ts, g->a);
        ts_push(power, g->ts, g->b);
    }
}

static void load_io(const char *rep_dir, pd_rep_traces *tr, rec_vec *v, csv_list *l)
{
    static const char *const need[] = {"timestamp", "hostname", "source", "interval_s",
                                       "read_bytes", "write_bytes"};
    tr->nio_files = load_kind(rep_dir, "__iops_io_trace_", l, tr);
    for (size_t f = 0; f < l->n; f++) {
        pd_csv *csv = l->files[f];
        int c[6];
        if (!need_cols(csv, need, c, 6, tr, "I/O"))
            continue;
        for (size_t r = 0; r < csv->nrows; r++) {
            trace_rec rec = {.host = pd_csv_get(csv, r, c[1]), .key2 = pd_csv_get(csv, r, c[2])};
            if (!rec.host || !rec.key2 || !num_at(csv, r, c[0], &rec.ts) ||
                !num_at(csv, r, c[3], &rec.c) || rec.c <= 0 || !num_at(csv, r, c[4], &rec.a) ||
                !num_at(csv, r, c[5], &rec.b)) {
                tr->nbad_rows++;
                continue;
            }
            rec_push(v, rec);
        }
    }
}

static void build_io(pd_rep_traces *tr, rec_vec *v)
{
    if (v->n)
        qsort(v->r, v->n, sizeof *v->r, cmp_rec);
    bool multi = distinct_hosts(v) > 1;
    pd_rep_ts *rd = NULL, *wr = NULL;
    for (size_t i = 0; i < v->n;) {
        trace_rec *g = &v->r[i];
        if (i == 0 || !same_group(g, &v->r[i - 1])) {
            pd_str name = {0};
            pd_str_printf(&name, "%s%s%s read", multi ? g->host : "", multi ? " " : "", g->key2);
            rd = tsset_add(&tr->io, name.data ? name.data : "read");
            pd_str_clear(&name);
            pd_str_printf(&name, "%s%s%s write", multi ? g->host : "", multi ? " " : "", g->key2);
            wr = tsset_add(&tr->io, name.data ? name.data : "write");
            pd_str_free(&name);
            /* the second add may have moved the first */
            rd = rd && wr ? wr - 1 : NULL;
        }
        /* several devices of one source at one instant: bytes summed, the
         * interval counted once */
        double rb = 0, wb = 0, interval = 0;
        size_t j = i;
        for (; j < v->n && same_group(&v->r[j], g) && v->r[j].ts == g->ts; j++) {
            rb += v->r[j].a;
            wb += v->r[j].b;
            if (v->r[j].c > interval)
                interval = v->r[j].c;
        }
        ts_push(rd, g->ts, rb / interval / (1024.0 * 1024.0));
        ts_push(wr, g->ts, wb / interval / (1024.0 * 1024.0));
        i = j;
    }
}

void pd_rep_traces_load(const char *rep_dir, pd_rep_traces *tr)
{
    *tr = (pd_rep_traces){0};
    rec_vec cpu = {0}, gpu = {0}, io = {0};
    csv_list lc = {0}, lg = {0}, li = {0};
    load_cpu(rep_dir, tr, &cpu, &lc);
    load_gpu(rep_dir, tr, &gpu, &lg);
    load_io(rep_dir, tr, &io, &li);
    double t0 = ts_min(&io, ts_min(&gpu, ts_min(&cpu, INFINITY)));
    build_cpu(tr, &cpu);
    build_gpu(tr, &gpu);
    build_io(tr, &io);
    free(cpu.r);
    free(gpu.r);
    free(io.r);
    csv_list_free(&lc);
    csv_list_free(&lg);
    csv_list_free(&li);
    if (isfinite(t0)) {
        tsset_shift(&tr->cpu, t0);
        tsset_shift(&tr->mem, t0);
        tsset_shift(&tr->gpu_util, t0);
        tsset_shift(&tr->gpu_power, t0);
        tsset_shift(&tr->io, t0);
    }
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

size_t pd_rep_downsample(const double *x, const double *y, size_t n, size_t buckets, double **ox,
                         double **oy)
{
    size_t max_out = 2 * buckets + 2;
    size_t cap = n < max_out ? n : max_out;
    *ox = malloc((cap ? cap : 1) * sizeof **ox);
    *oy = malloc((cap ? cap : 1) * sizeof **oy);
    if (!*ox || !*oy) {
        free(*ox);
        free(*oy);
        *ox = *oy = NULL;
        return 0;
    }
    if (n <= max_out || buckets == 0) {
        size_t k = n < cap ? n : cap;
        if (k) {
            memcpy(*ox, x, k * sizeof *x);
            memcpy(*oy, y, k * sizeof *y);
        }
        return k;
    }
    size_t k = 0;
    (*ox)[k] = x[0];
    (*oy)[k++] = y[0];
    double x0 = x[0], span = x[n - 1] - x[0];
    size_t i = 1;
    for (size_t b = 0; b < buckets && i < n - 1; b++) {
        double hi = x0 + span * (double)(b + 1) / (double)buckets;
        size_t imin = SIZE_MAX, imax = SIZE_MAX;
        for (; i < n - 1 && (x[i] <= hi || b == buckets - 1); i++) {
            if (imin == SIZE_MAX || y[i] < y[imin])
                imin = i;
            if (imax == SIZE_MAX || y[i] > y[imax])
                imax = i;
        }
        if (imin == SIZE_MAX)
            continue;
        size_t first = imin < imax ? imin : imax, second = imin < imax ? imax : imin;
        (*ox)[k] = x[first];
        (*oy)[k++] = y[first];
        if (second != first) {
            (*ox)[k] = x[second];
            (*oy)[k++] = y[second];
        }
    }
    (*ox)[k] = x[n - 1];
    (*oy)[k++] = y[n - 1];
    return k;
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
        if (!pol || !task || !num_at(csv, r, c_time, &time) || time < 0) {
            tasks->nbad_rows++;
            continue;
        }
        if (!num_at(csv, r, c_share, &share))
            share = NAN;
        if (!num_at(csv, r, c_bytes, &bytes))
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
