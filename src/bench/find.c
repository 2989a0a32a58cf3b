/* `paddiser find` and its watch mode (find.h). The plain listing follows
 * IOPS 3.5.8's find.py line by line (header, two blank lines, the table
 * with two spaces between columns, values cut to their last 30 characters
 * unless --full); the watch table is paddiser's own text rendering of what
 * IOPS's watch shows (progress, counts per status, one letter per
 * repetition). */
#include "bench/find.h"

#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bench/iops_meta.h"
#include "common/util.h"

#define TRUNCATE_WIDTH 30 /* IOPS's DEFAULT_TRUNCATE_WIDTH */

typedef struct {
    const char *key;     /* exec_NNNN (the index's key) */
    const char *path;    /* relative to the run directory */
    const char *command;
    json_t *params;      /* borrowed from the index */
    char status[32];     /* roll-up */
    char *reps;          /* one letter per repetition (watch) */
    size_t nreps, finished;
    int cached;          /* 0 none, 1 all, 2 some */
    char *error, *end_time;
    bool skipped;
} exec_row;

typedef struct {
    char dir[PATH_MAX];
    json_t *index, *meta;
    exec_row *rows;
    size_t n;
} run_view;

/* ------------------------------------------------------------ values */

bool pd_find_value_matches(const char *actual, const char *expected)
{
    if (!strcmp(actual, expected))
        return true;
    char a[64], e[64];
    snprintf(a, sizeof a, "%s", actual);
    snprintf(e, sizeof e, "%s", expected);
    /* strip blanks, as Python's strip() in the boolean and number tests */
    char *as = a + strspn(a, " \t\n"), *es = e + strspn(e, " \t\n");
    for (char *p = as + strlen(as); p > as && strchr(" \t\n", p[-1]); *--p = '\0') {
    }
    for (char *p = es + strlen(es); p > es && strchr(" \t\n", p[-1]); *--p = '\0') {
    }
    bool ab = !strcasecmp(as, "true") || !strcasecmp(as, "false");
    bool eb = !strcasecmp(es, "true") || !strcasecmp(es, "false");
    if (ab && eb)
        return !strcasecmp(as, es);
    double x, y;
    /* Python's float() takes nan/inf too; nan never equals */
    return pd_parse_double(actual, &x) && pd_parse_double(expected, &y) && x == y;
}

/* A parameter's text as Python's str() gives it (IOPS compares those). */
static char *value_text(const json_t *v)
{
    if (!v || json_is_null(v))
        return pd_strdup("None");
    char *t = pd_iops_metric_text(v);
    return t ? t : json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
}

/* IOPS's _truncate_value: the end of a long value, after "...". */
static void display(pd_str *out, const char *v, bool full)
{
    size_t n = strlen(v);
    if (full || n <= TRUNCATE_WIDTH)
        pd_str_append(out, v);
    else {
        pd_str_append(out, "...");
        pd_str_append(out, v + n - (TRUNCATE_WIDTH - 3));
    }
}

/* ------------------------------------------------------------ status */

const char *pd_find_rollup(const char *const *st, size_t n)
{
    static const char *const order[][2] = {{"RUNNING", NULL}, {"PENDING", NULL}, {"FAILED", "ERROR"},
                                           {"TIMEOUT", NULL}, {"CANCELLED", NULL}};
    for (size_t o = 0; o < PD_ARRAY_LEN(order); o++)
        for (size_t i = 0; i < n; i++)
            if (!strcmp(st[i], order[o][0]) || (order[o][1] && !strcmp(st[i], order[o][1])))
                return order[o][0];
    for (size_t i = 0; i < n; i++)
        if (strcmp(st[i], "SUCCEEDED"))
            return "UNKNOWN";
    return n ? "SUCCEEDED" : "PENDING";
}

static char status_letter(const char *s)
{
    static const char *const names[] = {"SUCCEEDED", "RUNNING", "PENDING", "FAILED",  "ERROR",
                                        "SKIPPED",   "TIMEOUT", "CANCELLED", "UNKNOWN"};
    static const char letters[] = "SRWFEXTC?";
    for (size_t i = 0; i < PD_ARRAY_LEN(names); i++)
        if (!strcmp(s, names[i]))
            return letters[i];
    return '?';
}

static bool finished_status(const char *s)
{
    return strcmp(s, "RUNNING") && strcmp(s, "PENDING");
}

static int rep_filter(const struct dirent *e)
{
    return !strncmp(e->d_name, "repetition_", 11);
}

static json_t *load_json(const char *dir, const char *name)
{
    char path[PATH_MAX];
    if (pd_path_join(path, sizeof path, dir, name) != 0)
        return NULL;
    json_error_t e;
    return json_load_file(path, 0, &e);
}

/* The repetitions' statuses of one execution directory, as IOPS reads them:
 * no status file is PENDING, an unreadable one UNKNOWN. */
static void read_status(const char *run_dir, exec_row *r)
{
    char dir[PATH_MAX], path[PATH_MAX];
    if (pd_path_join(dir, sizeof dir, run_dir, r->path) != 0)
        return;
    if (pd_path_join(path, sizeof path, dir, "__iops_skipped") == 0 && access(path, F_OK) == 0) {
        snprintf(r->status, sizeof r->status, "SKIPPED");
        r->skipped = true;
        return;
    }
    struct dirent **list = NULL;
    int n = scandir(dir, &list, rep_filter, alphasort);
    if (n < 0)
        n = 0;
    const char **st = calloc((size_t)n + 1, sizeof *st);
    char (*names)[16] = calloc((size_t)n + 1, sizeof *names);
    r->reps = calloc((size_t)n + 1, 1);
    size_t cached = 0;
    for (int i = 0; i < n && st && names && r->reps; i++) {
        char rep[PATH_MAX];
        json_t *o = pd_path_join(rep, sizeof rep, dir, list[i]->d_name) == 0 ? load_json(rep, "__iops_status.json")
                                                                             : NULL;
        bool exists = pd_path_join(path, sizeof path, rep, "__iops_status.json") == 0 && access(path, F_OK) == 0;
        const char *s = json_string_value(json_object_get(o, "status"));
        pd_task_state ts;
        if (!exists)
            snprintf(names[i], sizeof names[i], "PENDING");
        else if (!o)
            snprintf(names[i], sizeof names[i], "UNKNOWN");
        else if (s && pd_iops_status_parse(s, &ts) && strcmp(s, "ERROR"))
            snprintf(names[i], sizeof names[i], "%s", pd_iops_status_name(ts));
        else
            snprintf(names[i], sizeof names[i], "%.15s", s ? s : "UNKNOWN");
        for (char *p = names[i]; *p; p++)
            *p = (char)(*p >= 'a' && *p <= 'z' ? *p - 32 : *p);
        st[i] = names[i];
        r->reps[i] = status_letter(names[i]);
        r->nreps++;
        r->finished += finished_status(names[i]);
        cached += json_is_true(json_object_get(o, "cached"));
        const char *err = json_string_value(json_object_get(o, "error"));
        const char *end = json_string_value(json_object_get(o, "end_time"));
        if (err) {
            free(r->error);
            r->error = pd_strdup(err);
        }
        if (end) {
            free(r->end_time);
            r->end_time = pd_strdup(end);
        }
        json_decref(o);
    }
    snprintf(r->status, sizeof r->status, "%s", st ? pd_find_rollup(st, r->nreps) : "UNKNOWN");
    r->cached = r->nreps && cached == r->nreps ? 1 : cached ? 2 : 0;
    for (int i = 0; i < n; i++)
        free(list[i]);
    free(list);
    free(st);
    free(names);
}

static int key_cmp(const void *a, const void *b)
{
    return strcmp(((const exec_row *)a)->key, ((const exec_row *)b)->key);
}

static void free_view(run_view *v)
{
    for (size_t i = 0; i < v->n; i++) {
        free(v->rows[i].reps);
        free(v->rows[i].error);
        free(v->rows[i].end_time);
    }
    free(v->rows);
    json_decref(v->index);
    json_decref(v->meta);
    memset(v, 0, sizeof *v);
}

/* 0, or -1 when dir has no readable __iops_index.json. */
static int load_view(const char *dir, run_view *v)
{
    memset(v, 0, sizeof *v);
    snprintf(v->dir, sizeof v->dir, "%s", dir);
    if (!(v->index = load_json(dir, PD_IOPS_INDEX_FILE)))
        return -1;
    v->meta = load_json(dir, PD_IOPS_RUN_METADATA_FILE);
    json_t *execs = json_object_get(v->index, "executions");
    size_t n = json_is_object(execs) ? json_object_size(execs) : 0;
    v->rows = calloc(n ? n : 1, sizeof *v->rows);
    if (!v->rows)
        return -1;
    const char *key;
    json_t *x;
    json_object_foreach(execs, key, x) {
        exec_row *r = &v->rows[v->n++];
        r->key = key;
        r->path = json_string_value(json_object_get(x, "path"));
        if (!r->path)
            r->path = key;
        r->command = json_string_value(json_object_get(x, "command"));
        if (!r->command)
            r->command = "";
        r->params = json_object_get(x, "params");
        read_status(dir, r);
    }
    qsort(v->rows, v->n, sizeof *v->rows, key_cmp);
    return 0;
}

/* ------------------------------------------------------------ listing */

static bool hidden(const pd_find_options *o, const char *col)
{
    if (!o->hide)
        return false;
    size_t n = strlen(col);
    for (const char *p = o->hide;;) {
        size_t k = strcspn(p, ",");
        if (k == n && !strncmp(p, col, n))
            return true;
        if (!p[k])
            return false;
        p += k + 1;
    }
}

static bool row_matches(const pd_find_options *o, const exec_row *r)
{
    if (o->status && strcasecmp(r->status, o->status))
        return false;
    for (size_t i = 0; i < o->nfilters; i++) {
        const char *eq = strchr(o->filters[i], '=');
        char name[256];
        snprintf(name, sizeof name, "%.*s", (int)(eq - o->filters[i]), o->filters[i]);
        json_t *v = json_object_get(r->params, name);
        if (!v)
            return false;
        char *t = value_text(v);
        bool ok = t && pd_find_value_matches(t, eq + 1);
        free(t);
        if (!ok)
            return false;
    }
    return true;
}

static void status_text(const exec_row *r, pd_str *out)
{
    pd_str_append(out, r->status);
    if (r->cached == 1)
        pd_str_append(out, " [C]");
    else if (r->cached == 2)
        pd_str_append(out, " [C*]");
}

static int name_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The sorted names of every variable of the executions, less --hide's. */
static const char **var_names(const pd_find_options *o, const run_view *v, size_t *count)
{
    size_t cap = 16, n = 0;
    const char **names = malloc(cap * sizeof *names);
    for (size_t i = 0; names && i < v->n; i++) {
        const char *k;
        json_t *x;
        json_object_foreach(v->rows[i].params, k, x) {
            bool seen = hidden(o, k);
            for (size_t j = 0; j < n && !seen; j++)
                seen = !strcmp(names[j], k);
            if (seen)
                continue;
            if (n == cap) {
                const char **grown = realloc(names, 2 * cap * sizeof *names);
                if (!grown)
                    break;
                names = grown;
                cap *= 2;
            }
            names[n++] = k;
        }
    }
    if (names)
        qsort(names, n, sizeof *names, name_cmp);
    *count = names ? n : 0;
    return names;
}

/* One table: a cell per (row, column), padded to the widest (IOPS's ljust);
 * the last column is not padded when it is the command. */
typedef struct {
    size_t ncols, nrows;
    pd_str *cells; /* (nrows + 1) x ncols, row 0 the header */
} table;

static pd_str *cell(table *t, size_t row, size_t col)
{
    return &t->cells[row * t->ncols + col];
}

static void print_table(table *t, bool last_unpadded, pd_str *out)
{
    size_t *w = calloc(t->ncols ? t->ncols : 1, sizeof *w);
    if (!w)
        return;
    for (size_t c = 0; c < t->ncols; c++)
        for (size_t r = 0; r <= t->nrows; r++)
            if (cell(t, r, c)->len > w[c])
                w[c] = cell(t, r, c)->len;
    for (size_t r = 0; r <= t->nrows; r++) {
        size_t len = 0;
        for (size_t c = 0; c < t->ncols; c++) {
            pd_str *s = cell(t, r, c);
            if (c) {
                pd_str_append(out, "  ");
                len += 2;
            }
            pd_str_append(out, s->data ? s->data : "");
            len += s->len;
            bool pad = !(last_unpadded && c + 1 == t->ncols);
            for (size_t k = s->len; pad && k < w[c]; k++, len++)
                pd_str_append(out, " ");
        }
        pd_str_append(out, "\n");
        if (r == 0) { /* IOPS: "-" * len(header) */
            for (size_t k = 0; k < len; k++)
                pd_str_append(out, "-");
            pd_str_append(out, "\n");
        }
    }
    for (size_t i = 0; i < (t->nrows + 1) * t->ncols; i++)
        pd_str_free(&t->cells[i]);
    free(t->cells);
    free(w);
}

/* The table of the matching rows; with reps, a column of one letter per
 * repetition after the status (watch mode). */
static void rows_table(const pd_find_options *o, const run_view *v, const exec_row *const *rows, size_t n,
                       bool reps, pd_str *out)
{
    size_t nvars;
    const char **vars = var_names(o, v, &nvars);
    bool show_path = !hidden(o, "path"), show_status = !hidden(o, "status");
    bool show_cmd = o->show_command && !hidden(o, "command");
    table t = {.ncols = show_path + show_status + reps + nvars + show_cmd, .nrows = n};
    t.cells = calloc((n + 1) * (t.ncols ? t.ncols : 1), sizeof *t.cells);
    if (!t.cells || !vars) {
        free(vars);
        free(t.cells);
        return;
    }
    for (size_t r = 0; r <= n; r++) {
        const exec_row *x = r ? rows[r - 1] : NULL;
        size_t c = 0;
        if (show_path) {
            if (x)
                display(cell(&t, r, c), x->path, o->full);
            else
                pd_str_append(cell(&t, r, c), "Path");
            c++;
        }
        if (show_status) {
            if (x)
                status_text(x, cell(&t, r, c));
            else
                pd_str_append(cell(&t, r, c), "Status");
            c++;
        }
        if (reps) {
            pd_str_append(cell(&t, r, c), x ? (x->reps && *x->reps ? x->reps : "-") : "Reps");
            c++;
        }
        for (size_t i = 0; i < nvars; i++, c++) {
            if (!x) {
                pd_str_append(cell(&t, r, c), vars[i]);
                continue;
            }
            json_t *val = json_object_get(x->params, vars[i]);
            char *text = val ? value_text(val) : NULL;
            display(cell(&t, r, c), text ? text : "", o->full);
            free(text);
        }
        if (show_cmd) {
            if (x)
                display(cell(&t, r, c), x->command, o->full);
            else
                pd_str_append(cell(&t, r, c), "Command");
        }
    }
    print_table(&t, show_cmd, out);
    free(vars);
}

static void header(const run_view *v, pd_str *out)
{
    json_t *b = json_object_get(v->meta, "benchmark");
    const char *name = json_string_value(json_object_get(v->index, "benchmark"));
    pd_str_printf(out, "Benchmark: %s\n", name ? name : "Unknown");
    const char *d = json_string_value(json_object_get(b, "description"));
    const char *h = json_string_value(json_object_get(b, "hostname"));
    const char *ts = json_string_value(json_object_get(b, "timestamp"));
    if (d && *d)
        pd_str_printf(out, "Description: %s\n", d);
    if (h && *h)
        pd_str_printf(out, "Host: %s\n", h);
    if (ts && *ts)
        pd_str_printf(out, "Executed: %s\n", ts);
}

/* "{'x': '1', 'mode': 'a'}", as Python prints the filter dict. */
static void filter_repr(const pd_find_options *o, pd_str *out)
{
    pd_str_append(out, "{");
    for (size_t i = 0; i < o->nfilters; i++) {
        const char *eq = strchr(o->filters[i], '=');
        pd_str_printf(out, "%s'%.*s': '%s'", i ? ", " : "", (int)(eq - o->filters[i]), o->filters[i], eq + 1);
    }
    pd_str_append(out, "}");
}

static const exec_row **matching(const pd_find_options *o, const run_view *v, size_t *n)
{
    const exec_row **m = calloc(v->n ? v->n : 1, sizeof *m);
    *n = 0;
    for (size_t i = 0; m && i < v->n; i++)
        if (row_matches(o, &v->rows[i]))
            m[(*n)++] = &v->rows[i];
    return m;
}

static void list_run(const pd_find_options *o, const run_view *v, pd_str *out)
{
    header(v, out);
    if (!v->n) {
        pd_str_append(out, "No executions found in index.\n");
        return;
    }
    size_t n;
    const exec_row **m = matching(o, v, &n);
    if (!m)
        return;
    if (!n) {
        if (o->nfilters || o->status) {
            pd_str_append(out, "No executions match the filter (");
            if (o->nfilters) {
                pd_str_append(out, "parameters: ");
                filter_repr(o, out);
            }
            if (o->status)
                pd_str_printf(out, "%sstatus: %s", o->nfilters ? ", " : "", o->status);
            pd_str_append(out, ")\n");
        } else {
            pd_str_append(out, "No executions found.\n");
        }
    } else {
        pd_str_append(out, "\n\n");
        rows_table(o, v, m, n, false, out);
    }
    free(m);
}

/* IOPS's view of one execution directory. */
static int show_execution(const pd_find_options *o, const char *dir, pd_str *out)
{
    json_t *params = load_json(dir, "__iops_params.json");
    if (!json_is_object(params)) {
        json_decref(params);
        fprintf(stderr, "paddiser find: cannot read %s/__iops_params.json\n", dir);
        return 1;
    }
    /* the run directory: the parent (paddiser's layout) or the grandparent (IOPS's runs/ level) */
    char run[PATH_MAX], *slash;
    snprintf(run, sizeof run, "%s", dir);
    run_view v = {0};
    bool found = false;
    for (int up = 0; up < 2 && !found && (slash = strrchr(run, '/')) && slash != run; up++) {
        *slash = '\0';
        found = load_view(run, &v) == 0;
        if (!found)
            free_view(&v);
    }
    const char *base = strrchr(dir, '/') ? strrchr(dir, '/') + 1 : dir;
    const exec_row *me = NULL;
    for (size_t i = 0; found && i < v.n && !me; i++)
        if (!strcmp(v.rows[i].key, base))
            me = &v.rows[i];
    exec_row own = {.key = base, .path = base, .command = ""};
    if (!me) { /* no index: its repetitions only */
        char parent[PATH_MAX];
        snprintf(parent, sizeof parent, "%s", dir);
        if ((slash = strrchr(parent, '/')))
            *slash = '\0';
        read_status(slash ? parent : ".", &own);
        me = &own;
    }
    json_t *b = json_object_get(v.meta, "benchmark");
    const char *fields[][2] = {{"name", "Benchmark"}, {"description", "Description"}, {"hostname", "Host"},
                               {"timestamp", "Executed"}};
    for (size_t i = 0; i < PD_ARRAY_LEN(fields); i++) {
        const char *s = json_string_value(json_object_get(b, fields[i][0]));
        if (s && *s)
            pd_str_printf(out, "%s%s: %s\n", i ? "" : "\n", fields[i][1], s);
    }
    pd_str_printf(out, "\nStatus: %s\n", me->status);
    if (me->error)
        pd_str_printf(out, "Error: %s\n", me->error);
    if (me->end_time)
        pd_str_printf(out, "Completed: %s\n", me->end_time);
    pd_str_append(out, "\nParameters:\n");
    size_t n = 0;
    const char **keys = calloc(json_object_size(params) + 1, sizeof *keys);
    const char *k;
    json_t *x;
    json_object_foreach(params, k, x) if (keys) keys[n++] = k;
    if (keys)
        qsort(keys, n, sizeof *keys, name_cmp);
    for (size_t i = 0; keys && i < n; i++) {
        char *t = value_text(json_object_get(params, keys[i]));
        pd_str_printf(out, "  %s: ", keys[i]);
        display(out, t ? t : "", o->full);
        pd_str_append(out, "\n");
        free(t);
    }
    free(keys);
    if (me->nreps)
        pd_str_printf(out, "\nRepetitions: %zu\n", me->nreps);
    if (o->show_command && me->command && *me->command)
        pd_str_printf(out, "\nCommand:\n  %s\n", me->command);
    free(own.reps);
    free(own.error);
    free(own.end_time);
    free_view(&v);
    json_decref(params);
    return 0;
}

static int run_dir_filter(const struct dirent *e)
{
    return !strncmp(e->d_name, "run_", 4) || !strncmp(e->d_name, "dryrun_", 7);
}

static bool has_file(const char *dir, const char *name)
{
    char p[PATH_MAX];
    return pd_path_join(p, sizeof p, dir, name) == 0 && access(p, F_OK) == 0;
}

/* ------------------------------------------------------------ watch */

static volatile sig_atomic_t stop_signal;
static void on_signal(int sig) { stop_signal = sig; }

/* The watch table of one snapshot; *done when every execution (filtered or
 * not) has finished, or the run's end time is recorded (a run stopped by
 * --fail-fast leaves repetitions that never start). */
static void watch_frame(const pd_find_options *o, const run_view *v, pd_str *out, bool *done)
{
    static const char *const names[] = {"SUCCEEDED", "RUNNING", "PENDING", "FAILED",   "ERROR",
                                        "TIMEOUT",   "CANCELLED", "SKIPPED", "UNKNOWN"};
    static const char letters[] = "SRWFETCX?";
    size_t count[PD_ARRAY_LEN(names)] = {0}, total = 0, fin = 0;
    for (size_t i = 0; i < v->n; i++) {
        const exec_row *r = &v->rows[i];
        total += r->skipped ? 1 : r->nreps;
        fin += r->skipped ? 1 : r->finished;
        for (size_t k = 0; r->reps && r->reps[k]; k++)
            for (size_t j = 0; j < PD_ARRAY_LEN(names); j++)
                count[j] += r->reps[k] == letters[j];
        count[7] += r->skipped;
    }
    json_t *b = json_object_get(v->meta, "benchmark");
    bool ended = json_is_string(json_object_get(b, "benchmark_end_time"));
    *done = (total && fin == total) || ended;
    header(v, out);
    pd_str_printf(out, "Progress: %zu/%zu repetitions finished (%.0f%%)\n", fin, total,
                  total ? 100.0 * (double)fin / (double)total : 0.0);
    const char *sep = "";
    for (size_t j = 0; j < PD_ARRAY_LEN(names); j++)
        if (count[j]) {
            pd_str_printf(out, "%s%s %zu", sep, names[j], count[j]);
            sep = "  ";
        }
    pd_str_append(out, "\n\n");
    size_t n;
    const exec_row **m = matching(o, v, &n);
    if (m && n)
        rows_table(o, v, m, n, true, out);
    else
        pd_str_append(out, "No executions match the filter.\n");
    free(m);
    pd_str_append(out, "\nS succeeded  R running  W pending  F failed  E error  T timeout  C cancelled  X skipped\n");
    if (*done && ended && fin < total)
        pd_str_printf(out, "The run ended with %zu repetitions unfinished (resume it with paddiser bench --resume).\n",
                      total - fin);
}

static int watch(const pd_find_options *o, const char *dir, FILE *out)
{
    struct sigaction sa = {0};
    sa.sa_handler = on_signal; /* no SA_RESTART: the sleep ends at once */
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    bool tty = isatty(fileno(out));
    pd_str last = {0};
    for (;;) {
        run_view v;
        if (load_view(dir, &v) != 0) {
            free_view(&v);
            pd_str_free(&last);
            fprintf(stderr, "paddiser find: cannot read %s/" PD_IOPS_INDEX_FILE "\n", dir);
            return 1;
        }
        pd_str frame = {0};
        bool done = false;
        watch_frame(o, &v, &frame, &done);
        free_view(&v);
        char when[16];
        time_t now = time(NULL);
        struct tm tm;
        strftime(when, sizeof when, "%H:%M:%S", localtime_r(&now, &tm));
        if (tty) {
            /* home, clear, the frame: a live table in place */
            fprintf(out, "\033[H\033[2J%s\n%s %s\n", frame.data ? frame.data : "", when,
                    done ? "finished" : "(Ctrl-C to stop)");
        } else if (!last.data || !frame.data || strcmp(last.data, frame.data)) {
            /* not a terminal: a plain snapshot whenever something changed */
            fprintf(out, "---- %s\n%s", when, frame.data ? frame.data : "");
        }
        fflush(out);
        pd_str_free(&last);
        last = frame;
        if (done)
            break;
        for (double slept = 0; slept < o->interval_s && !stop_signal; slept += 0.05)
            nanosleep(&(struct timespec){0, 50000000}, NULL);
        if (stop_signal)
            break;
    }
    pd_str_free(&last);
    if (stop_signal) {
        fprintf(out, "\n");
        fflush(out);
        return 128 + stop_signal;
    }
    return 0;
}

/* ------------------------------------------------------------ main */

int pd_find_main(const pd_find_options *o, FILE *out)
{
    for (size_t i = 0; i < o->nfilters; i++)
        if (!strchr(o->filters[i], '=') || o->filters[i][0] == '=') {
            fprintf(stderr, "paddiser find: invalid filter '%s' (expected VAR=VALUE)\n", o->filters[i]);
            return 2;
        }
    char dir[PATH_MAX];
    if (!realpath(o->path, dir)) {
        fprintf(stderr, "paddiser find: %s: %s\n", o->path, strerror(errno));
        return 1;
    }
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        fprintf(stderr, "paddiser find: %s: not a directory (archives are not read)\n", o->path);
        return 1;
    }
    pd_str s = {0};
    int rc = 0;
    if (has_file(dir, "__iops_params.json") && !has_file(dir, PD_IOPS_INDEX_FILE)) {
        if (o->watch) {
            fprintf(stderr, "paddiser find: --watch needs a run directory, not one execution\n");
            return 2;
        }
        rc = show_execution(o, dir, &s);
    } else if (has_file(dir, PD_IOPS_INDEX_FILE)) {
        if (o->watch)
            return watch(o, dir, out);
        run_view v;
        if (load_view(dir, &v) != 0) {
            fprintf(stderr, "paddiser find: cannot read %s/" PD_IOPS_INDEX_FILE "\n", dir);
            rc = 1;
        } else
            list_run(o, &v, &s);
        free_view(&v);
    } else {
        struct dirent **list = NULL;
        int n = scandir(dir, &list, run_dir_filter, alphasort);
        int shown = 0;
        for (int i = 0; i < n; i++) {
            char run[PATH_MAX];
            if (pd_path_join(run, sizeof run, dir, list[i]->d_name) == 0 && has_file(run, PD_IOPS_INDEX_FILE)) {
                shown++;
                if (o->watch) /* only the newest is watched (below) */
                    continue;
                run_view v;
                if (load_view(run, &v) == 0) {
                    pd_str_printf(&s, "\n=== %s ===\n", list[i]->d_name);
                    list_run(o, &v, &s);
                }
                free_view(&v);
            }
        }
        char newest[PATH_MAX] = "";
        for (int i = n - 1; o->watch && i >= 0 && !newest[0]; i--) {
            char run[PATH_MAX];
            if (pd_path_join(run, sizeof run, dir, list[i]->d_name) == 0 && has_file(run, PD_IOPS_INDEX_FILE))
                snprintf(newest, sizeof newest, "%s", run);
        }
        for (int i = 0; i < n; i++)
            free(list[i]);
        free(list);
        if (!shown) {
            fprintf(stderr,
                    "paddiser find: no execution data in %s: expected " PD_IOPS_INDEX_FILE
                    " (a run directory), run_NNN directories holding one (a workdir) or __iops_params.json (one "
                    "execution)\n",
                    o->path);
            return 1;
        }
        if (o->watch) {
            fprintf(stderr, "paddiser find: watching the newest run, %s\n", newest);
            return watch(o, newest, out);
        }
    }
    if (s.data)
        fputs(s.data, out);
    pd_str_free(&s);
    return rc;
}
