/* IOPS YAML schema -> pd_bench_config, via libyaml's document API (node
 * marks give the line numbers every error message carries). */
#include "bench/config.h"
#include "bench/slurm.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

#define MAX_SWEEP_VALUES 100000

typedef struct {
    yaml_document_t *doc;
    const char *file;
    const char *dir;
    pd_str *errors;
    pd_str *warnings;
    int nerrors;
} ctx;

static int node_line(const yaml_node_t *n) { return n ? (int)n->start_mark.line + 1 : 0; }

/* "file:line: key: message" into errors or warnings. */
static void vnote_at(pd_str *out, const char *file, int line, const char *key, const char *fmt, va_list ap)
{
    pd_str_printf(out, "%s:%d: %s: ", file, line, key);
    pd_str_vprintf(out, fmt, ap);
    pd_str_append(out, "\n");
}

static void err_at(ctx *c, int line, const char *key, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void err_at(ctx *c, int line, const char *key, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vnote_at(c->errors, c->file, line, key, fmt, ap);
    va_end(ap);
    c->nerrors++;
}

static void warn_at(ctx *c, int line, const char *key, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void warn_at(ctx *c, int line, const char *key, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vnote_at(c->warnings, c->file, line, key, fmt, ap);
    va_end(ap);
}

static char *keypath(const char *parent, const char *key)
{
    pd_str s = {0};
    if (parent && *parent)
        pd_str_printf(&s, "%s.%s", parent, key);
    else
        pd_str_append(&s, key);
    return pd_str_take(&s);
}

static yaml_node_t *node(ctx *c, int id) { return id ? yaml_document_get_node(c->doc, id) : NULL; }

static const char *scalar(const yaml_node_t *n)
{
    return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

static bool is_plain(const yaml_node_t *n)
{
    return n && n->type == YAML_SCALAR_NODE && n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
}

/* YAML's null (~, null, or nothing), which IOPS treats as "not set". */
static bool is_null(const yaml_node_t *n)
{
    const char *s = scalar(n);
    return !n || (is_plain(n) && s &&
                  (!*s || !strcmp(s, "~") || !strcmp(s, "null") || !strcmp(s, "Null") || !strcmp(s, "NULL")));
}

static const char *type_desc(const yaml_node_t *n)
{
    if (!n)
        return "nothing";
    switch (n->type) {
    case YAML_MAPPING_NODE: return "a mapping";
    case YAML_SEQUENCE_NODE: return "a list";
    default: return "a scalar";
    }
}

/* The pair of a key in a mapping (the first, if repeated), or NULL. */
static const yaml_node_pair_t *map_pair(ctx *c, const yaml_node_t *map, const char *key)
{
    if (!map || map->type != YAML_MAPPING_NODE)
        return NULL;
    for (const yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
        const char *k = scalar(node(c, p->key));
        if (k && !strcmp(k, key))
            return p;
    }
    return NULL;
}

/* Looks a key up in a mapping (NULL if absent). */
static yaml_node_t *map_get(ctx *c, const yaml_node_t *map, const char *key)
{
    const yaml_node_pair_t *p = map_pair(c, map, key);
    return p ? node(c, p->value) : NULL;
}

/* Line of a key in a mapping (0 if absent). */
static int key_line(ctx *c, const yaml_node_t *map, const char *key)
{
    const yaml_node_pair_t *p = map_pair(c, map, key);
    return p ? node_line(node(c, p->key)) : 0;
}

/* Checks a mapping's keys: `known` are parsed by the caller, `ignored` are
 * IOPS keys paddiser accepts without acting on them (warning), anything else
 * is an error. Duplicate keys are errors too. */
static void check_keys(ctx *c, const yaml_node_t *map, const char *path, const char *const *known,
                       const char *const *ignored)
{
    if (!map || map->type != YAML_MAPPING_NODE)
        return;
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
        yaml_node_t *kn = node(c, p->key);
        const char *k = scalar(kn);
        char *kp = keypath(path, k ? k : "?");
        if (!k) {
            err_at(c, node_line(kn), path && *path ? path : "(top level)", "keys must be scalars");
            free(kp);
            continue;
        }
        for (yaml_node_pair_t *q = map->data.mapping.pairs.start; q < p; q++) {
            const char *k2 = scalar(node(c, q->key));
            if (k2 && !strcmp(k, k2))
                err_at(c, node_line(kn), kp, "duplicate key");
        }
        bool found = false;
        for (const char *const *a = known; a && *a && !found; a++)
            found = !strcmp(*a, k);
        for (const char *const *a = ignored; a && *a && !found; a++)
            if (!strcmp(*a, k)) {
                found = true;
                warn_at(c, node_line(kn), kp, "not supported by paddiser bench; ignored");
            }
        if (!found) {
            pd_str list = {0};
            for (const char *const *a = known; a && *a; a++)
                pd_str_printf(&list, "%s%s", a == known ? "" : ", ", *a);
            err_at(c, node_line(kn), kp, "unknown key (expected one of: %s)", list.data ? list.data : "");
            pd_str_free(&list);
        }
        free(kp);
    }
}

static bool want_mapping(ctx *c, const yaml_node_t *n, const char *key)
{
    if (n && n->type == YAML_MAPPING_NODE)
        return true;
    err_at(c, node_line(n), key, "must be a mapping, found %s", type_desc(n));
    return false;
}

static char *get_str(ctx *c, const yaml_node_t *n, const char *key)
{
    const char *s = scalar(n);
    if (!s) {
        err_at(c, node_line(n), key, "must be a string, found %s", type_desc(n));
        return NULL;
    }
    return pd_strdup(s);
}

/* A list of variable names (benchmark.exhaustive_vars, cache_exclude_vars):
 * the names read (*count of them; entries that are not strings reported and
 * left out), NULL when v is not a list (reported) or out of memory. */
static char **get_names(ctx *c, const yaml_node_t *v, const char *key, size_t *count)
{
    *count = 0;
    if (v->type != YAML_SEQUENCE_NODE) {
        err_at(c, node_line(v), key, "must be a list of variable names, found %s", type_desc(v));
        return NULL;
    }
    size_t nv = (size_t)(v->data.sequence.items.top - v->data.sequence.items.start);
    char **names = calloc(nv ? nv : 1, sizeof *names);
    for (size_t i = 0; i < nv && names; i++) {
        char *name = get_str(c, node(c, v->data.sequence.items.start[i]), key);
        if (name)
            names[(*count)++] = name;
    }
    return names;
}

static bool get_bool(ctx *c, const yaml_node_t *n, const char *key, bool *out)
{
    const char *s = scalar(n);
    static const char *yes[] = {"true", "True", "TRUE", "yes", "Yes", "on", "On"};
    static const char *no[] = {"false", "False", "FALSE", "no", "No", "off", "Off"};
    if (s && is_plain(n)) {
        for (size_t i = 0; i < PD_ARRAY_LEN(yes); i++)
            if (!strcmp(s, yes[i]))
                return *out = true, true;
        for (size_t i = 0; i < PD_ARRAY_LEN(no); i++)
            if (!strcmp(s, no[i]))
                return *out = false, true;
    }
    err_at(c, node_line(n), key, "must be true or false, found '%s'", s ? s : type_desc(n));
    return false;
}

static bool get_long(ctx *c, const yaml_node_t *n, const char *key, long min, long *out)
{
    const char *s = scalar(n);
    if (!s || !pd_parse_long(s, out)) {
        err_at(c, node_line(n), key, "must be an integer, found '%s'", s ? s : type_desc(n));
        return false;
    }
    if (*out < min) {
        err_at(c, node_line(n), key, "must be at least %ld, found %ld", min, *out);
        return false;
    }
    return true;
}

static bool get_double(ctx *c, const yaml_node_t *n, const char *key, double *out)
{
    const char *s = scalar(n);
    if (!s || !pd_parse_double(s, out) || !isfinite(*out)) {
        err_at(c, node_line(n), key, "must be a number, found '%s'", s ? s : type_desc(n));
        return false;
    }
    return true;
}

/* A duration in seconds (> 0, at most a year) into *out when n is given. */
static void get_seconds(ctx *c, const yaml_node_t *n, const char *key, double *out)
{
    double d;
    if (!n || !get_double(c, n, key, &d))
        return;
    if (!(d > 0 && d <= 366 * 86400.0))
        err_at(c, node_line(n), key, "must be a number of seconds > 0 (at most a year), found %g", d);
    else
        *out = d;
}

/* A template/expression text; block scalars start on the line after the
 * indicator. */
static bool get_text(ctx *c, const yaml_node_t *n, const char *key, pd_cfg_text *out)
{
    char *s = get_str(c, n, key);
    if (!s)
        return false;
    out->text = s;
    out->key = pd_strdup(key);
    out->line = node_line(n);
    if (n->data.scalar.style == YAML_LITERAL_SCALAR_STYLE || n->data.scalar.style == YAML_FOLDED_SCALAR_STYLE)
        out->line++;
    return true;
}

static void text_free(pd_cfg_text *t)
{
    free(t->text);
    free(t->key);
    *t = (pd_cfg_text){0};
}

static char *resolve_path(const char *dir, const char *p)
{
    pd_str s = {0};
    while (p[0] == '.' && p[1] == '/') /* "./wd" -> "wd" */
        for (p += 2; *p == '/'; p++)
            ;
    if (p[0] == '/' || !dir)
        pd_str_append(&s, p);
    else
        pd_str_printf(&s, "%s/%s", dir, p);
    while (s.len > 1 && s.data[s.len - 1] == '/') /* "wd/" -> "wd" */
        s.data[--s.len] = '\0';
    return pd_str_take(&s);
}

/* A single-line value naming an existing file is that file's content (IOPS
 * accepts inline text or a path for script_template and parser_script). */
static bool maybe_read_file(ctx *c, char **text, int line, const char *key, bool must_be_file)
{
    if (strchr(*text, '\n'))
        return true;
    char *path = resolve_path(c->dir, pd_trim(*text));
    if (!path)
        return false;
    if (access(path, R_OK) != 0) {
        if (must_be_file)
            err_at(c, line, key, "cannot read file '%s': %s", path, strerror(errno));
        free(path);
        return !must_be_file;
    }
    char *content = pd_read_file(path, NULL);
    if (!content) {
        err_at(c, line, key, "cannot read file '%s': %s", path, pd_read_strerror(errno));
        free(path);
        return false;
    }
    free(path);
    free(*text);
    *text = content;
    return true;
}

/* IOPS's rule for a value that may be inline code or a file's path
 * (luanteylo/iops:iops/config/loader.py, _looks_like_file_path): one line,
 * no {{ or {%, and a script extension or a path prefix. So a one-line
 * "def parse(f): ..." is code, and "parse.py" a file. */
static bool looks_like_file_path(const char *s)
{
    if (!*s || strchr(s, '\n') || strstr(s, "{{") || strstr(s, "{%"))
        return false;
    static const char *const ext[] = {".sh", ".py", ".bash", ".pl", ".rb", ".zsh", ".fish"};
    size_t n = strlen(s);
    for (size_t i = 0; i < PD_ARRAY_LEN(ext); i++)
        if (n >= strlen(ext[i]) && !strcmp(s + n - strlen(ext[i]), ext[i]))
            return true;
    return !strncmp(s, "./", 2) || !strncmp(s, "../", 3) || s[0] == '/' || !strncmp(s, "~/", 2);
}

/* parser_script as IOPS loads it: a file when it looks like a path (the
 * study's directory first, then the path itself, ~ expanded; it must
 * exist), inline code otherwise. Trimmed, as IOPS strips it. */
static bool load_code_or_file(ctx *c, char **text, int line, const char *key)
{
    char *t = pd_trim(*text);
    if (!looks_like_file_path(t)) {
        memmove(*text, t, strlen(t) + 1);
        return true;
    }
    char *candidates[2] = {resolve_path(c->dir, t), NULL};
    const char *home = getenv("HOME");
    pd_str own = {0};
    if (!strncmp(t, "~/", 2) && home)
        pd_str_printf(&own, "%s/%s", home, t + 2);
    else
        pd_str_append(&own, t);
    candidates[1] = pd_str_take(&own);
    bool ok = false;
    for (int i = 0; i < 2 && !ok; i++) {
        struct stat st;
        if (!candidates[i] || stat(candidates[i], &st) != 0 || !S_ISREG(st.st_mode))
            continue;
        char *content = pd_read_file(candidates[i], NULL);
        if (!content) {
            err_at(c, line, key, "cannot read file '%s': %s", candidates[i], pd_read_strerror(errno));
            free(candidates[0]);
            free(candidates[1]);
            return false;
        }
        free(*text);
        *text = content;
        ok = true;
    }
    if (!ok && candidates[0] && candidates[1] && strcmp(candidates[0], candidates[1]))
        err_at(c, line, key, "appears to be a file path but the file was not found: '%s' (searched %s and %s)", t,
               candidates[0], candidates[1]);
    else if (!ok)
        err_at(c, line, key, "appears to be a file path but the file was not found: '%s'", t);
    free(candidates[0]);
    free(candidates[1]);
    return ok;
}

const char *pd_var_type_name(pd_var_type t)
{
    switch (t) {
    case PD_VT_INT: return "int";
    case PD_VT_FLOAT: return "float";
    case PD_VT_BOOL: return "bool";
    case PD_VT_LIST: return "list";
    default: return "str";
    }
}

int pd_val_cast(const pd_val *v, pd_var_type t, pd_val *out, char *err, size_t errlen)
{
    pd_str shown = {0};
    pd_val_append(&shown, v);
    int rc = 0;
    switch (t) {
    case PD_VT_LIST:
        if (v->kind == PD_VAL_LIST) { /* Python's list(): a range or tuple becomes a plain list */
            *out = pd_val_copy(v);
            out->view = PD_VIEW_NONE;
            free(out->s);
            out->s = NULL;
        } else {
            snprintf(err, errlen, "%s is not a list (e.g. [1, 2, 4])", shown.data ? shown.data : "value");
            rc = -1;
        }
        break;
    case PD_VT_STR:
        *out = pd_val_str(shown.data ? shown.data : "");
        break;
    case PD_VT_INT:
        if (v->kind == PD_VAL_INT || v->kind == PD_VAL_BOOL) {
            *out = pd_val_int(v->kind == PD_VAL_INT ? v->i : v->b);
        } else if (v->kind == PD_VAL_FLOAT && isfinite(v->f) && fabs(v->f) < 9.2e18) {
            *out = pd_val_int((long long)v->f);
        } else if (v->kind == PD_VAL_STR) {
            long l;
            if (pd_parse_long(v->s, &l)) {
                *out = pd_val_int(l);
            } else {
                snprintf(err, errlen, "'%s' is not an int%s", v->s,
                         strchr(v->s, '.') ? " (use // for integer division, or | int, or type: float)" : "");
                rc = -1;
            }
        } else {
            snprintf(err, errlen, "%s cannot be cast to int", shown.data ? shown.data : "value");
            rc = -1;
        }
        break;
    case PD_VT_FLOAT:
        if (v->kind == PD_VAL_INT || v->kind == PD_VAL_BOOL || v->kind == PD_VAL_FLOAT) {
            *out = pd_val_float(v->kind == PD_VAL_FLOAT ? v->f : v->kind == PD_VAL_INT ? (double)v->i : v->b);
        } else {
            double d;
            if (v->kind == PD_VAL_STR && pd_parse_double(v->s, &d)) {
                *out = pd_val_float(d);
            } else {
                snprintf(err, errlen, "'%s' is not a float", shown.data ? shown.data : "");
                rc = -1;
            }
        }
        break;
    case PD_VT_BOOL:
        if (v->kind == PD_VAL_STR) {
            const char *s = v->s;
            if (!strcasecmp(s, "true") || !strcasecmp(s, "yes") || !strcmp(s, "1"))
                *out = pd_val_bool(true);
            else if (!strcasecmp(s, "false") || !strcasecmp(s, "no") || !strcmp(s, "0"))
                *out = pd_val_bool(false);
            else {
                snprintf(err, errlen, "'%s' is not a bool", s);
                rc = -1;
            }
        } else {
            *out = pd_val_bool(pd_val_truthy(v));
        }
        break;
    }
    pd_str_free(&shown);
    return rc;
}

/* A YAML scalar as a typed value (plain scalars that look like numbers or
 * booleans are numbers or booleans, as YAML 1.1 loaders read them). */
static pd_val scalar_value(const yaml_node_t *n)
{
    const char *s = scalar(n);
    if (is_plain(n)) {
        long l;
        double d;
        if (pd_parse_long(s, &l))
            return pd_val_int(l);
        if (pd_parse_double(s, &d))
            return pd_val_float(d);
        if (!strcmp(s, "true") || !strcmp(s, "True"))
            return pd_val_bool(true);
        if (!strcmp(s, "false") || !strcmp(s, "False"))
            return pd_val_bool(false);
    }
    return pd_val_str(s);
}

static bool valid_identifier(const char *s)
{
    if (!s || !(isalpha((unsigned char)*s) || *s == '_'))
        return false;
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && *s != '_')
            return false;
    return true;
}

static bool reserved_name(const char *s)
{
    static const char *r[] = {"execution_id", "execution_dir", "repetition", "repetitions", "workdir", "os_env",
                              "command", "vars", "benchmark", "and", "or", "not", "if", "else", "is", "in",
                              "true", "false", "True", "False", "none", "None", "min", "max", "abs", "round",
                              "floor", "ceil", "int", "float", "str", "len", "range", "loop", "command_env",
                              "command_labels", "artifacts_dir", "log_dir", "inputs"};
    for (size_t i = 0; i < PD_ARRAY_LEN(r); i++)
        if (!strcmp(r[i], s))
            return true;
    return false;
}

/* ------------------------------------------------------------ sections */

static void parse_probes(ctx *c, const yaml_node_t *n, pd_bench_config *cfg)
{
    const char *P = "benchmark.probes";
    if (!want_mapping(c, n, P))
        return;
    cfg->probes.line = node_line(n);
    static const char *known[] = {"resource_sampling", "gpu_sampling", "io_sampling", "io_paths",
                                  "sampling_interval", "system_snapshot", "execution_index", NULL};
    static const char *ignored_keys[] = {"versions", NULL};
    check_keys(c, n, P, known, ignored_keys);
    const yaml_node_t *v;
    if ((v = map_get(c, n, "resource_sampling")))
        get_bool(c, v, "benchmark.probes.resource_sampling", &cfg->probes.cpu);
    if ((v = map_get(c, n, "gpu_sampling")))
        get_bool(c, v, "benchmark.probes.gpu_sampling", &cfg->probes.gpu);
    const yaml_node_t *io = map_get(c, n, "io_sampling");
    if (io)
        get_bool(c, io, "benchmark.probes.io_sampling", &cfg->probes.io);
    bool ignored;
    if ((v = map_get(c, n, "system_snapshot")) && get_bool(c, v, "benchmark.probes.system_snapshot", &ignored))
        warn_at(c, node_line(v), "benchmark.probes.system_snapshot", "accepted for IOPS compatibility; no effect");
    if ((v = map_get(c, n, "execution_index")) && get_bool(c, v, "benchmark.probes.execution_index", &ignored) &&
        !ignored)
        warn_at(c, node_line(v), "benchmark.probes.execution_index",
                "paddiser always writes __iops_params.json and __iops_status.json");
    if ((v = map_get(c, n, "sampling_interval"))) {
        double d;
        if (get_double(c, v, "benchmark.probes.sampling_interval", &d)) {
            if (d <= 0)
                err_at(c, node_line(v), "benchmark.probes.sampling_interval", "must be > 0, found %g", d);
            else
                cfg->probes.interval_s = d;
        }
    }
    const yaml_node_t *paths = map_get(c, n, "io_paths");
    if (paths) {
        if (paths->type != YAML_SEQUENCE_NODE) {
            err_at(c, node_line(paths), "benchmark.probes.io_paths", "must be a list of paths, found %s",
                   type_desc(paths));
        } else {
            size_t np = (size_t)(paths->data.sequence.items.top - paths->data.sequence.items.start);
            cfg->probes.io_paths = calloc(np ? np : 1, sizeof *cfg->probes.io_paths);
            for (size_t i = 0; i < np && cfg->probes.io_paths; i++) {
                char key[64];
                snprintf(key, sizeof key, "benchmark.probes.io_paths[%zu]", i);
                yaml_node_t *it = node(c, paths->data.sequence.items.start[i]);
                if (get_text(c, it, key, &cfg->probes.io_paths[cfg->probes.n_io_paths])) {
                    if (!*pd_trim(cfg->probes.io_paths[cfg->probes.n_io_paths].text)) {
                        err_at(c, node_line(it), key, "must not be empty");
                        text_free(&cfg->probes.io_paths[cfg->probes.n_io_paths]);
                    } else {
                        cfg->probes.n_io_paths++;
                    }
                }
            }
        }
    }
    if (cfg->probes.io && cfg->probes.n_io_paths == 0 && !(paths && paths->type != YAML_SEQUENCE_NODE))
        err_at(c, node_line(paths ? paths : io), "benchmark.probes.io_paths", "required when io_sampling is true");
    if (!cfg->probes.io && paths)
        err_at(c, node_line(paths), "benchmark.probes.io_paths",
               "only valid with io_sampling: true (set io_sampling or remove io_paths)");
}

/* IOPS 3.5.8's flat probe keys, deprecated for benchmark.probes (its
 * loader's list and warning texts). Without a probes: section they stand
 * for probes.system_snapshot (no effect here), probes.execution_index (the
 * files are always written), probes.resource_sampling and
 * probes.sampling_interval; with one, they are ignored, as in IOPS. */
static void parse_deprecated_probes(ctx *c, const yaml_node_t *n, pd_bench_config *cfg)
{
    static const char *const old[] = {"collect_system_info", "track_executions", "trace_resources", "trace_interval"};
    static const char *const now[] = {"probes.system_snapshot", "probes.execution_index", "probes.resource_sampling",
                                      "probes.sampling_interval"};
    bool any_set = false;
    int line = 0;
    pd_str used = {0}, hints = {0};
    for (size_t i = 0; i < PD_ARRAY_LEN(old); i++) {
        const yaml_node_t *v = map_get(c, n, old[i]);
        if (!v)
            continue;
        if (!line)
            line = key_line(c, n, old[i]);
        any_set |= !is_null(v);
        pd_str_printf(&used, "%s'%s'", used.len ? ", " : "", old[i]);
        pd_str_printf(&hints, "\n  \u2022 %s -> %s", old[i], now[i]);
    }
    const yaml_node_t *probes = map_get(c, n, "probes");
    if (any_set && !is_null(probes)) {
        warn_at(c, line, "benchmark",
                "Both 'probes:' section and deprecated fields (collect_system_info, track_executions, "
                "trace_resources, trace_interval) are present. Using 'probes:' section values. "
                "Remove deprecated fields to silence this warning. "
                "See https://iops.dev/about/deprecations for migration guide.");
    } else if (any_set) {
        warn_at(c, line, "benchmark",
                "Deprecated probe fields found: [%s]. Migrate to nested probes: section:%s\n"
                "See https://iops.dev/about/deprecations for migration guide.",
                used.data, hints.data);
        const yaml_node_t *v;
        bool b;
        if ((v = map_get(c, n, "collect_system_info")) && !is_null(v))
            get_bool(c, v, "benchmark.collect_system_info", &b);
        if ((v = map_get(c, n, "track_executions")) && !is_null(v))
            get_bool(c, v, "benchmark.track_executions", &b);
        if ((v = map_get(c, n, "trace_resources")) && !is_null(v))
            get_bool(c, v, "benchmark.trace_resources", &cfg->probes.cpu);
        if (cfg->probes.cpu)
            cfg->probes.line = key_line(c, n, "trace_resources"); /* where probe errors point */
        double d;
        if ((v = map_get(c, n, "trace_interval")) && !is_null(v) &&
            get_double(c, v, "benchmark.trace_interval", &d)) {
            if (d <= 0)
                err_at(c, node_line(v), "benchmark.trace_interval", "must be > 0, found %g", d);
            else
                cfg->probes.interval_s = d;
        }
    }
    pd_str_free(&used);
    pd_str_free(&hints);
}

/* Names a cache_file template may use (IOPS: os_env, workdir, benchmark.name). */
static bool cache_path_lookup(void *ud, const char *name, pd_val *out)
{
    const pd_bench_config *cfg = ud;
    const char *v = NULL;
    if (!strncmp(name, "os_env.", 7))
        v = getenv(name + 7);
    else if (!strcmp(name, "workdir"))
        v = cfg->workdir;
    else if (!strcmp(name, "benchmark.name"))
        v = cfg->name;
    if (!v)
        return false;
    *out = pd_val_str(v);
    return true;
}

/* IOPS's _expand_path: $VAR and ${VAR} (unset ones stay as written), then a
 * leading ~. */
static char *expand_path(const char *p)
{
    pd_str s = {0};
    if (p[0] == '~' && (p[1] == '/' || !p[1]) && getenv("HOME")) {
        pd_str_append(&s, getenv("HOME"));
        p++;
    }
    while (*p) {
        size_t n = 0;
        bool brace = p[0] == '$' && p[1] == '{';
        const char *name = p + 1 + brace;
        if (p[0] == '$')
            while (name[n] == '_' || isalnum((unsigned char)name[n]))
                n++;
        if (n && (!brace || name[n] == '}') && !isdigit((unsigned char)name[0])) {
            char *var = strndup(name, n);
            const char *val = var ? getenv(var) : NULL;
            free(var);
            if (val) {
                pd_str_append(&s, val);
                p = name + n + brace;
                continue;
            }
        }
        pd_str_appendn(&s, p++, 1);
    }
    return pd_str_take(&s);
}

/* benchmark.cache_file / cache_exclude_vars (cache.h) and max_core_hours /
 * cores_expr / estimated_time_seconds (budget.h); null is "not set", as in
 * IOPS's loader. */
static void parse_cache_and_budget(ctx *c, const yaml_node_t *n, pd_bench_config *cfg)
{
    const yaml_node_t *v;
    if ((v = map_get(c, n, "cache_file")) && !is_null(v)) {
        char *f = get_str(c, v, "benchmark.cache_file");
        if (f && !*pd_trim(f))
            err_at(c, node_line(v), "benchmark.cache_file", "must not be an empty string");
        else if (f) {
            pd_str r = {0};
            char e[256] = "", cwd[PATH_MAX];
            int line = 0;
            if (pd_template_has_tags(f) && pd_template_render(f, cache_path_lookup, cfg, &r, e, sizeof e, &line) != 0)
                err_at(c, node_line(v), "benchmark.cache_file", "%s (names: os_env.NAME, workdir, benchmark.name)", e);
            else if (r.data && !*pd_trim(r.data))
                err_at(c, node_line(v), "benchmark.cache_file", "renders to an empty string");
            else {
                char *x = expand_path(r.data ? r.data : f);
                if (x)
                    cfg->cache_file = resolve_path(x[0] == '/' ? NULL : getcwd(cwd, sizeof cwd), x);
                free(x);
            }
            pd_str_free(&r);
        }
        free(f);
    }
    if ((v = map_get(c, n, "exhaustive_vars")) && !is_null(v)) {
        cfg->exhaustive_line = node_line(v);
        cfg->exhaustive_vars = get_names(c, v, "benchmark.exhaustive_vars", &cfg->nexhaustive_vars);
    }
    if ((v = map_get(c, n, "cache_exclude_vars")) && !is_null(v))
        cfg->cache_exclude_vars = get_names(c, v, "benchmark.cache_exclude_vars", &cfg->ncache_exclude_vars);
    double d;
    if ((v = map_get(c, n, "max_core_hours")) && !is_null(v) && get_double(c, v, "benchmark.max_core_hours", &d)) {
        if (d <= 0)
            err_at(c, node_line(v), "benchmark.max_core_hours", "must be > 0, found %g", d);
        else
            cfg->max_core_hours = d;
    }
    if ((v = map_get(c, n, "cores_expr")) && !is_null(v))
        get_text(c, v, "benchmark.cores_expr", &cfg->cores_expr);
    if ((v = map_get(c, n, "estimated_time_seconds")) && !is_null(v) &&
        get_double(c, v, "benchmark.estimated_time_seconds", &d)) {
        if (d <= 0)
            err_at(c, node_line(v), "benchmark.estimated_time_seconds", "must be > 0, found %g", d);
        else
            cfg->estimated_time_s = d;
    }
}

/* benchmark.bayesian_config: IOPS 3.5.8's keys (loader.py
 * ALLOWED_BAYESIAN_CONFIG_KEYS; an unknown one is an error there too), its
 * defaults and its checks. The surrogate is always a Gaussian process
 * (bayes.h): another base_estimator is said once. The convergence keys
 * have nothing to act on (candidates are never proposed twice). */
static void parse_bayesian_config(ctx *c, const yaml_node_t *n, pd_bench_config *cfg)
{
    cfg->bayes.n_iterations = 20;
    cfg->bayes.n_initial_points = 5;
    cfg->bayes.xi = 0.01;
    cfg->bayes.kappa = 1.96;
    cfg->bayes.fallback_to_exhaustive = true;
    const yaml_node_t *bc = map_get(c, n, "bayesian_config"), *v;
    cfg->bayes.line = bc ? node_line(bc) : key_line(c, n, "search_method");
    if (is_null(bc)) {
        if (cfg->search == PD_SEARCH_BAYESIAN)
            err_at(c, cfg->bayes.line, "benchmark.bayesian_config",
                   "bayesian_config is required when search_method is 'bayesian'");
        return;
    }
    if (!want_mapping(c, bc, "benchmark.bayesian_config"))
        return;
    static const char *known[] = {"n_initial_points", "n_iterations", "acquisition_func", "base_estimator", "xi",
                                  "kappa", "objective", "objective_metric", "fallback_to_exhaustive", NULL};
    static const char *ignored[] = {"early_stop_on_convergence", "convergence_patience", "xi_boost_factor",
                                    "max_retries", NULL};
    check_keys(c, bc, "benchmark.bayesian_config", known, ignored);
    if ((v = map_get(c, bc, "objective_metric")))
        cfg->bayes.objective_metric = get_str(c, v, "benchmark.bayesian_config.objective_metric");
    else if (cfg->search == PD_SEARCH_BAYESIAN)
        err_at(c, node_line(bc), "benchmark.bayesian_config.objective_metric", "required key is missing");
    if ((v = map_get(c, bc, "objective"))) {
        const char *s = scalar(v);
        if (s && (!strcmp(s, "minimize") || !strcmp(s, "maximize")))
            cfg->bayes.maximize = !strcmp(s, "maximize");
        else
            err_at(c, node_line(v), "benchmark.bayesian_config.objective",
                   "must be one of: minimize, maximize (got '%s')", s ? s : type_desc(v));
    }
    if ((v = map_get(c, bc, "n_iterations")))
        get_long(c, v, "benchmark.bayesian_config.n_iterations", 1, &cfg->bayes.n_iterations);
    if ((v = map_get(c, bc, "n_initial_points")))
        get_long(c, v, "benchmark.bayesian_config.n_initial_points", 1, &cfg->bayes.n_initial_points);
    if ((v = map_get(c, bc, "acquisition_func"))) {
        const char *s = scalar(v);
        static const char *acq[] = {"EI", "PI", "LCB"};
        int found = -1;
        for (int i = 0; i < 3 && s; i++)
            if (!strcmp(s, acq[i]))
                found = i;
        if (found < 0)
            err_at(c, node_line(v), "benchmark.bayesian_config.acquisition_func",
                   "must be one of: EI, PI, LCB (got '%s')", s ? s : type_desc(v));
        else
            cfg->bayes.acquisition = found; /* pd_bayes_acq order */
    }
    if ((v = map_get(c, bc, "base_estimator"))) {
        const char *s = scalar(v);
        if (!s || (strcmp(s, "RF") && strcmp(s, "GP") && strcmp(s, "ET") && strcmp(s, "GBRT")))
            err_at(c, node_line(v), "benchmark.bayesian_config.base_estimator",
                   "must be one of: RF, GP, ET, GBRT (got '%s')", s ? s : type_desc(v));
        else if (strcmp(s, "GP"))
            warn_at(c, node_line(v), "benchmark.bayesian_config.base_estimator",
                    "'%s' is not implemented by paddiser bench; a Gaussian process (GP) is used", s);
    }
    if ((v = map_get(c, bc, "xi")))
        get_double(c, v, "benchmark.bayesian_config.xi", &cfg->bayes.xi);
    if ((v = map_get(c, bc, "kappa")))
        get_double(c, v, "benchmark.bayesian_config.kappa", &cfg->bayes.kappa);
    if ((v = map_get(c, bc, "fallback_to_exhaustive")))
        get_bool(c, v, "benchmark.bayesian_config.fallback_to_exhaustive", &cfg->bayes.fallback_to_exhaustive);
}

/* slurm_options.commands: IOPS 3.5.8's templates (submit, status, info,
 * cancel; "{job_id}" replaced), split as shlex.split splits them (slurm.h),
 * so a quote left open is an error here rather than at the first poll. */
static void parse_slurm_commands(ctx *c, const yaml_node_t *v, const char *sk_path, pd_bench_config *cfg)
{
    if (is_null(v))
        return;
    char *path = keypath(sk_path, "commands");
    if (want_mapping(c, v, path)) {
        static const char *known[] = {"submit", "status", "info", "cancel", NULL};
        check_keys(c, v, path, known, NULL);
        char **dest[] = {&cfg->slurm.submit, &cfg->slurm.status, &cfg->slurm.info, &cfg->slurm.cancel};
        for (size_t i = 0; i < PD_ARRAY_LEN(dest); i++) {
            const yaml_node_t *cv = map_get(c, v, known[i]);
            char *key = keypath(path, known[i]);
            char *text = cv ? get_str(c, cv, key) : NULL;
            char err[128];
            char **words = text ? pd_slurm_words(text, "0", err, sizeof err) : NULL;
            if (text && !words) {
                err_at(c, node_line(cv), key, "%s in '%s'", err, text);
                free(text);
            } else if (text) {
                free(*dest[i]);
                *dest[i] = text;
            }
            pd_free_argv(words);
            free(key);
        }
    }
    free(path);
}

/* slurm_options.allocation (IOPS 3.5.8's AllocationConfig and its checks):
 * mode per-test (default) or single; single needs an allocation_script with
 * an #SBATCH line and the slurm executor, and refuses bayesian and adaptive
 * search (every repetition is planned before the allocation starts). */
static void parse_slurm_allocation(ctx *c, const yaml_node_t *bench, const yaml_node_t *al, const char *sk_path,
                                   pd_bench_config *cfg)
{
    if (is_null(al))
        return;
    char *path = keypath(sk_path, "allocation");
    if (!want_mapping(c, al, path)) {
        free(path);
        return;
    }
    static const char *known[] = {"mode", "allocation_script", "test_timeout", NULL};
    check_keys(c, al, path, known, NULL);
    char *mk = keypath(path, "mode"), *sk = keypath(path, "allocation_script"), *tk = keypath(path, "test_timeout");
    const yaml_node_t *v = map_get(c, al, "mode");
    const char *mode = v ? scalar(v) : "per-test";
    if (!mode || (strcmp(mode, "single") && strcmp(mode, "per-test")))
        err_at(c, node_line(v), mk, "must be 'single' or 'per-test', found '%s'", mode ? mode : type_desc(v));
    else
        cfg->slurm.single = !strcmp(mode, "single");
    if ((v = map_get(c, al, "allocation_script")) && !is_null(v)) {
        free(cfg->slurm.allocation_script);
        cfg->slurm.allocation_script = get_str(c, v, sk);
    }
    get_seconds(c, map_get(c, al, "test_timeout"), tk, &cfg->slurm.test_timeout_s);
    if (cfg->slurm.single) {
        int line = node_line(map_get(c, al, "mode"));
        const char *script = cfg->slurm.allocation_script;
        if (map_get(c, bench, "executor") && cfg->executor != PD_EXEC_SLURM)
            err_at(c, line, mk, "'single' requires executor 'slurm'");
        if (!script || !script[strspn(script, " \t\r\n")])
            err_at(c, line, sk, "required when mode is 'single'");
        else if (!strstr(script, "#SBATCH"))
            err_at(c, line, sk, "must contain at least one #SBATCH directive");
        if (cfg->search == PD_SEARCH_BAYESIAN || cfg->search == PD_SEARCH_ADAPTIVE)
            err_at(c, line, "benchmark.search_method",
                   "allocation.mode 'single' is incompatible with search_method '%s' (it plans every test up "
                   "front, leaving no feedback loop); use mode 'per-test'",
                   cfg->search == PD_SEARCH_BAYESIAN ? "bayesian" : "adaptive");
    }
    free(mk);
    free(sk);
    free(tk);
    free(path);
}

static void parse_benchmark(ctx *c, const yaml_node_t *n, pd_bench_config *cfg)
{
    if (!n) {
        err_at(c, 1, "benchmark", "required section is missing");
        return;
    }
    if (!want_mapping(c, n, "benchmark"))
        return;
    /* the last five are IOPS 3.5.8's deprecated keys (parse_deprecated) */
    static const char *known[] = {"name", "description", "workdir", "repetitions", "executor", "parallel",
                                  "probes", "search_method", "slurm_options", "random_config", "random_seed", "timeout",
                                  "executor_options", "collect_system_info", "track_executions", "trace_resources",
                                  "trace_interval", "cache_file", "cache_exclude_vars", "max_core_hours",
                                  "cores_expr", "estimated_time_seconds", "exhaustive_vars", "bayesian_config", NULL};
    static const char *ignored[] = {"report_vars", "create_folders_upfront", NULL};
    check_keys(c, n, "benchmark", known, ignored);
    const yaml_node_t *v;
    if ((v = map_get(c, n, "name")))
        cfg->name = get_str(c, v, "benchmark.name");
    else
        err_at(c, node_line(n), "benchmark.name", "required key is missing");
    if ((v = map_get(c, n, "description")))
        cfg->description = get_str(c, v, "benchmark.description");
    if ((v = map_get(c, n, "workdir"))) {
        char *w = get_str(c, v, "benchmark.workdir");
        if (w && !*pd_trim(w))
            err_at(c, node_line(v), "benchmark.workdir", "must not be empty");
        else if (w) {
            char cwd[PATH_MAX];
            cfg->workdir = resolve_path(w[0] == '/' ? NULL : getcwd(cwd, sizeof cwd), w);
        }
        free(w);
    } else {
        err_at(c, node_line(n), "benchmark.workdir", "required key is missing");
    }
    long l;
    if ((v = map_get(c, n, "repetitions")) && get_long(c, v, "benchmark.repetitions", 1, &l))
        cfg->repetitions = l > 100000 ? 100000 : (int)l;
    if ((v = map_get(c, n, "parallel")) && get_long(c, v, "benchmark.parallel", 1, &l))
        cfg->parallel = l > 4096 ? 4096 : (int)l;
    if ((v = map_get(c, n, "executor"))) {
        const char *s = scalar(v);
        if (s && !strcmp(s, "local"))
            cfg->executor = PD_EXEC_LOCAL;
        else if (s && !strcmp(s, "slurm"))
            cfg->executor = PD_EXEC_SLURM;
        else
            err_at(c, node_line(v), "benchmark.executor", "must be 'local' or 'slurm', found '%s'",
                   s ? s : type_desc(v));
    }
    if ((v = map_get(c, n, "search_method"))) {
        const char *s = scalar(v);
        if (s && !strcmp(s, "random"))
            cfg->search = PD_SEARCH_RANDOM;
        else if (s && !strcmp(s, "bayesian"))
            cfg->search = PD_SEARCH_BAYESIAN;
        else if (s && !strcmp(s, "adaptive"))
            cfg->search = PD_SEARCH_ADAPTIVE;
        else if (!s || strcmp(s, "exhaustive"))
            err_at(c, node_line(v), "benchmark.search_method",
                   "must be one of exhaustive, random, bayesian, adaptive, found '%s'", s ? s : type_desc(v));
        cfg->search_line = node_line(v);
    }
    parse_bayesian_config(c, n, cfg);
    cfg->random.seed = 42;
    cfg->random.fallback_to_exhaustive = true;
    if ((v = map_get(c, n, "random_seed")))
        get_long(c, v, "benchmark.random_seed", LONG_MIN, &cfg->random.seed);
    const yaml_node_t *rc = map_get(c, n, "random_config");
    cfg->random.line = rc ? node_line(rc) : key_line(c, n, "search_method");
    if (rc && want_mapping(c, rc, "benchmark.random_config")) {
        static const char *rk[] = {"n_samples", "percentage", "fallback_to_exhaustive", NULL};
        check_keys(c, rc, "benchmark.random_config", rk, NULL);
        const yaml_node_t *ns = map_get(c, rc, "n_samples"), *pc = map_get(c, rc, "percentage"),
                          *fb = map_get(c, rc, "fallback_to_exhaustive");
        if (ns)
            get_long(c, ns, "benchmark.random_config.n_samples", 1, &cfg->random.n_samples);
        if (pc && get_double(c, pc, "benchmark.random_config.percentage", &cfg->random.percentage) &&
            (cfg->random.percentage <= 0 || cfg->random.percentage > 1))
            err_at(c, node_line(pc), "benchmark.random_config.percentage",
                   "must be a fraction in (0, 1] (0.5 samples half of the space), found %g", cfg->random.percentage);
        if (ns && pc)
            err_at(c, node_line(pc), "benchmark.random_config", "give n_samples or percentage, not both");
        if (fb)
            get_bool(c, fb, "benchmark.random_config.fallback_to_exhaustive", &cfg->random.fallback_to_exhaustive);
    }
    if (cfg->search == PD_SEARCH_RANDOM && (!rc || (!map_get(c, rc, "n_samples") && !map_get(c, rc, "percentage"))))
        err_at(c, rc ? node_line(rc) : key_line(c, n, "search_method"), "benchmark.random_config",
               "search_method random needs random_config.n_samples or random_config.percentage");
    const yaml_node_t *eo = map_get(c, n, "executor_options");
    if (!is_null(eo)) /* IOPS's text (luanteylo/iops:iops/config/loader.py, _handle_deprecated_field) */
        warn_at(c, node_line(eo), "benchmark.executor_options",
                "benchmark.executor_options is deprecated, use benchmark.slurm_options instead. "
                "See https://iops.dev/about/deprecations for migration guide.");
    v = map_get(c, n, "slurm_options");
    const char *sk_path = "benchmark.slurm_options";
    if (is_null(v) && !is_null(eo)) { /* as IOPS: the old name stands for the new one */
        v = eo;
        sk_path = "benchmark.executor_options";
    }
    if (!is_null(v) && want_mapping(c, v, sk_path)) {
        static const char *sk[] = {"poll_interval", "command_timeout", "commands", "allocation", NULL};
        check_keys(c, v, sk_path, sk, NULL);
        parse_slurm_commands(c, map_get(c, v, "commands"), sk_path, cfg);
        parse_slurm_allocation(c, n, map_get(c, v, "allocation"), sk_path, cfg);
        const yaml_node_t *pi = map_get(c, v, "poll_interval");
        char *pk = keypath(sk_path, "poll_interval"), *ck = keypath(sk_path, "command_timeout");
        double d;
        if (pi && get_double(c, pi, pk, &d)) {
            if (d <= 0)
                err_at(c, node_line(pi), pk, "must be > 0");
            else
                cfg->poll_interval_s = d;
        }
        get_seconds(c, map_get(c, v, "command_timeout"), ck, &cfg->slurm_command_timeout_s);
        free(pk);
        free(ck);
    }
    get_seconds(c, map_get(c, n, "timeout"), "benchmark.timeout", &cfg->timeout_s);
    parse_cache_and_budget(c, n, cfg);
    if ((v = map_get(c, n, "probes"))) {
        parse_probes(c, v, cfg);
        cfg->probes.line = key_line(c, n, "probes");
    }
    parse_deprecated_probes(c, n, cfg);
}

static void parse_sweep(ctx *c, const yaml_node_t *n, const char *vkey, pd_bench_var *var)
{
    char *key = keypath(vkey, "sweep");
    if (!want_mapping(c, n, key)) {
        free(key);
        return;
    }
    static const char *known[] = {"mode", "values", "start", "end", "step", NULL};
    check_keys(c, n, key, known, NULL);
    const yaml_node_t *mode = map_get(c, n, "mode");
    const char *m = scalar(mode);
    char *mkey = keypath(key, "mode");
    if (!mode)
        err_at(c, node_line(n), mkey, "required key is missing (list or range)");
    else if (!m || (strcmp(m, "list") && strcmp(m, "range")))
        err_at(c, node_line(mode), mkey, "must be 'list' or 'range', found '%s'", m ? m : type_desc(mode));
    free(mkey);
    if (m && !strcmp(m, "list")) {
        const yaml_node_t *vals = map_get(c, n, "values");
        char *vk = keypath(key, "values");
        if (!vals || vals->type != YAML_SEQUENCE_NODE || vals->data.sequence.items.top == vals->data.sequence.items.start) {
            err_at(c, node_line(vals ? vals : n), vk, "required: a non-empty list of values for mode list");
        } else {
            size_t nv = (size_t)(vals->data.sequence.items.top - vals->data.sequence.items.start);
            var->values = calloc(nv, sizeof *var->values);
            for (size_t i = 0; i < nv && var->values; i++) {
                yaml_node_t *it = node(c, vals->data.sequence.items.start[i]);
                if (!scalar(it)) {
                    err_at(c, node_line(it), vk, "values must be scalars, found %s", type_desc(it));
                    continue;
                }
                pd_val raw = scalar_value(it);
                char e[200];
                if (pd_val_cast(&raw, var->type, &var->values[var->nvalues], e, sizeof e) == 0)
                    var->nvalues++;
                else
                    err_at(c, node_line(it), vk, "%s (variable type is %s)", e, pd_var_type_name(var->type));
                pd_val_free(&raw);
            }
        }
        free(vk);
    } else if (m && !strcmp(m, "range")) {
        if (var->type != PD_VT_INT && var->type != PD_VT_FLOAT) {
            err_at(c, node_line(mode), key, "mode range needs type int or float, not %s", pd_var_type_name(var->type));
        } else {
            double se[3] = {0, 0, 1};
            const char *names[3] = {"start", "end", "step"};
            bool ok = true;
            for (int i = 0; i < 3; i++) {
                const yaml_node_t *x = map_get(c, n, names[i]);
                char *xk = keypath(key, names[i]);
                if (!x) {
                    if (i < 2) {
                        err_at(c, node_line(n), xk, "required key is missing for mode range");
                        ok = false;
                    }
                } else if (var->type == PD_VT_INT) {
                    long l;
                    if (get_long(c, x, xk, LONG_MIN, &l))
                        se[i] = (double)l;
                    else
                        ok = false;
                } else if (!get_double(c, x, xk, &se[i])) {
                    ok = false;
                }
                if (ok && i == 2 && se[2] == 0) {
                    err_at(c, node_line(x), xk, "must not be 0");
                    ok = false;
                }
                free(xk);
            }
            if (ok) {
                double span = (se[1] - se[0]) / se[2];
                if (span < -1e-9) {
                    err_at(c, node_line(n), key, "range from %g to %g with step %g is empty", se[0], se[1], se[2]);
                } else if (span + 1 > MAX_SWEEP_VALUES) {
                    err_at(c, node_line(n), key, "range has more than %d values", MAX_SWEEP_VALUES);
                } else {
                    size_t nv = (size_t)floor(span + 1e-9) + 1;
                    var->values = calloc(nv, sizeof *var->values);
                    for (size_t i = 0; i < nv && var->values; i++) {
                        if (var->type == PD_VT_INT)
                            var->values[i] = pd_val_int((long long)se[0] + (long long)i * (long long)se[2]);
                        else
                            var->values[i] = pd_val_float(se[0] + (double)i * se[2]);
                        var->nvalues++;
                    }
                }
            }
        }
    }
    free(key);
}

/* vars.X.adaptive, validated as IOPS 3.5.8's loader does: initial and
 * stop_when required, exactly one of factor/increment/step_expr, factor
 * not 0 and pointing the way `direction` says, max_iterations >= 1,
 * factor/increment only on int and float variables. */
static void parse_adaptive(ctx *c, const yaml_node_t *a, const char *vkey, pd_bench_var *var, bool type_ok)
{
    char *akey = keypath(vkey, "adaptive");
    pd_bench_adaptive *ad = &var->adaptive;
    ad->set = true;
    ad->line = node_line(a);
    if (!want_mapping(c, a, akey)) {
        free(akey);
        return;
    }
    static const char *known[] = {"initial", "factor", "increment", "step_expr", "stop_when", "max_iterations",
                                  "direction", NULL};
    check_keys(c, a, akey, known, NULL);
    const yaml_node_t *in = map_get(c, a, "initial"), *fa = map_get(c, a, "factor");
    const yaml_node_t *inc = map_get(c, a, "increment"), *se = map_get(c, a, "step_expr");
    const yaml_node_t *sw = map_get(c, a, "stop_when"), *mi = map_get(c, a, "max_iterations");
    const yaml_node_t *di = map_get(c, a, "direction");
    char *k;
    if (!in || is_null(in))
        err_at(c, node_line(a), akey, "'initial' is required");
    else {
        k = keypath(akey, "initial");
        char e[200];
        pd_val raw = scalar(in) ? scalar_value(in) : pd_val_none();
        if (!scalar(in))
            err_at(c, node_line(in), k, "must be a scalar, found %s", type_desc(in));
        else if (type_ok && pd_val_cast(&raw, var->type, &ad->initial, e, sizeof e) != 0)
            err_at(c, node_line(in), k, "%s (variable type is %s)", e, pd_var_type_name(var->type));
        ad->initial_as_written = raw; /* taken */
        free(k);
    }
    if (!sw || is_null(sw))
        err_at(c, node_line(a), akey, "'stop_when' is required");
    else {
        k = keypath(akey, "stop_when");
        if (get_text(c, sw, k, &ad->stop_when) && !*pd_trim(ad->stop_when.text))
            err_at(c, node_line(sw), k, "must not be empty");
        free(k);
    }
    int nstep = (fa != NULL) + (inc != NULL) + (se != NULL);
    if (nstep != 1)
        err_at(c, node_line(a), akey, "exactly one of 'factor', 'increment' or 'step_expr' must be set");
    if (di) {
        const char *ds = scalar(di);
        k = keypath(akey, "direction");
        if (ds && !strcmp(ds, "descending"))
            ad->descending = true;
        else if (!ds || strcmp(ds, "ascending"))
            err_at(c, node_line(di), k, "must be 'ascending' or 'descending', found '%s'", ds ? ds : type_desc(di));
        free(k);
    }
    const char *dir = ad->descending ? "descending" : "ascending";
    if (fa) {
        k = keypath(akey, "factor");
        if ((ad->has_factor = get_double(c, fa, k, &ad->factor))) {
            if (ad->factor == 0)
                err_at(c, node_line(fa), k, "must not be 0");
            else if (!ad->descending && ad->factor <= 1)
                err_at(c, node_line(fa), k, "must be > 1 for %s direction, found %g", dir, ad->factor);
            else if (ad->descending && ad->factor >= 1)
                err_at(c, node_line(fa), k, "must be < 1 for %s direction, found %g", dir, ad->factor);
        }
        free(k);
    }
    if (inc) {
        k = keypath(akey, "increment");
        if ((ad->has_increment = get_double(c, inc, k, &ad->increment))) {
            if (!ad->descending && ad->increment <= 0)
                err_at(c, node_line(inc), k, "must be > 0 for %s direction, found %g", dir, ad->increment);
            else if (ad->descending && ad->increment >= 0)
                err_at(c, node_line(inc), k, "must be < 0 for %s direction, found %g", dir, ad->increment);
        }
        free(k);
    }
    if ((fa || inc) && type_ok && var->type != PD_VT_INT && var->type != PD_VT_FLOAT)
        err_at(c, node_line(fa ? fa : inc), akey, "variable type must be int or float when using '%s', found '%s'",
               fa ? "factor" : "increment", pd_var_type_name(var->type));
    if (se) {
        k = keypath(akey, "step_expr");
        if (get_text(c, se, k, &ad->step_expr) && !*pd_trim(ad->step_expr.text))
            err_at(c, node_line(se), k, "must not be empty");
        free(k);
    }
    if (mi && !is_null(mi)) {
        k = keypath(akey, "max_iterations");
        get_long(c, mi, k, 1, &ad->max_iterations);
        free(k);
    }
    free(akey);
}

static void parse_vars(ctx *c, const yaml_node_t *n, pd_bench_config *cfg)
{
    if (!n)
        return;
    if (!want_mapping(c, n, "vars"))
        return;
    size_t np = (size_t)(n->data.mapping.pairs.top - n->data.mapping.pairs.start);
    cfg->vars = calloc(np ? np : 1, sizeof *cfg->vars);
    if (!cfg->vars)
        return;
    for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
        yaml_node_t *kn = node(c, p->key), *vn = node(c, p->value);
        const char *name = scalar(kn);
        if (!name) {
            err_at(c, node_line(kn), "vars", "variable names must be scalars");
            continue;
        }
        char *vkey = keypath("vars", name);
        bool dup = false;
        for (size_t i = 0; i < cfg->nvars; i++)
            dup = dup || !strcmp(cfg->vars[i].name, name);
        if (dup)
            err_at(c, node_line(kn), vkey, "duplicate variable");
        else if (!valid_identifier(name))
            err_at(c, node_line(kn), vkey, "variable names must be identifiers (letters, digits, _)");
        else if (reserved_name(name))
            err_at(c, node_line(kn), vkey, "'%s' is a reserved name", name);
        else if (want_mapping(c, vn, vkey)) {
            static const char *known[] = {"type", "sweep", "expr", "adaptive", "description", "when", "default",
                                          NULL};
            check_keys(c, vn, vkey, known, NULL);
            pd_bench_var *var = &cfg->vars[cfg->nvars];
            var->name = pd_strdup(name);
            var->line = node_line(kn);
            var->type = PD_VT_STR;
            const yaml_node_t *t = map_get(c, vn, "type");
            const char *ts = scalar(t);
            bool type_ok = true;
            if (!t) {
                err_at(c, node_line(vn), vkey, "'type' is required (int, float, str or bool)");
                type_ok = false;
            } else if (ts && !strcmp(ts, "int"))
                var->type = PD_VT_INT;
            else if (ts && !strcmp(ts, "float"))
                var->type = PD_VT_FLOAT;
            else if (ts && !strcmp(ts, "bool"))
                var->type = PD_VT_BOOL;
            else if (ts && !strcmp(ts, "str"))
                var->type = PD_VT_STR;
            else if (ts && !strcmp(ts, "list"))
                var->type = PD_VT_LIST;
            else {
                char *tk = keypath(vkey, "type");
                err_at(c, node_line(t), tk, "must be int, float, str or bool, found '%s' (or list, for a derived variable)",
                       ts ? ts : type_desc(t));
                free(tk);
                type_ok = false;
            }
            const yaml_node_t *sw = map_get(c, vn, "sweep"), *ex = map_get(c, vn, "expr");
            const yaml_node_t *wh = map_get(c, vn, "when"), *df = map_get(c, vn, "default");
            if (type_ok && var->type == PD_VT_LIST && sw) {
                char *tk = keypath(vkey, "type");
                err_at(c, node_line(t), tk, "type list is for derived variables (expr: \"[1, 2, 4]\"); "
                       "sweep an index variable instead");
                free(tk);
                type_ok = false;
            }
            if (wh || df) {
                char *wk = keypath(vkey, wh ? "when" : "default");
                if (!sw)
                    err_at(c, node_line(wh ? wh : df), wk, "only swept variables can be conditional");
                else if (!wh)
                    err_at(c, node_line(df), wk, "default is only valid together with when");
                else if (!df)
                    err_at(c, node_line(wh), wk, "when needs a default (the value used when the condition is false)");
                else if (get_text(c, wh, wk, &var->when)) {
                    if (!*pd_trim(var->when.text))
                        err_at(c, node_line(wh), wk, "must not be empty");
                    char *dk = keypath(vkey, "default");
                    char e[200];
                    pd_val raw = scalar(df) ? scalar_value(df) : pd_val_none();
                    if (!scalar(df))
                        err_at(c, node_line(df), dk, "must be a scalar, found %s", type_desc(df));
                    else if (type_ok && pd_val_cast(&raw, var->type, &var->when_default, e, sizeof e) != 0)
                        err_at(c, node_line(df), dk, "%s (variable type is %s)", e, pd_var_type_name(var->type));
                    pd_val_free(&raw);
                    free(dk);
                }
                free(wk);
            }
            const yaml_node_t *ad = map_get(c, vn, "adaptive");
            if ((sw != NULL) + (ex != NULL) + (ad != NULL) > 1)
                err_at(c, node_line(vn), vkey, "give only one of sweep, expr or adaptive");
            else if (!sw && !ex && !ad)
                err_at(c, node_line(vn), vkey,
                       "needs either sweep (swept variable), expr (derived variable) or adaptive (adaptive variable)");
            else if (ad)
                parse_adaptive(c, ad, vkey, var, type_ok);
            else if (sw && type_ok)
                parse_sweep(c, sw, vkey, var);
            else if (ex) {
                char *ek = keypath(vkey, "expr");
                get_text(c, ex, ek, &var->expr);
                if (var->expr.text && !*pd_trim(var->expr.text))
                    err_at(c, node_line(ex), ek, "must not be empty");
                free(ek);
            }
            cfg->nvars++;
        }
        free(vkey);
    }
}

static void parse_constraints(ctx *c, const yaml_node_t *n, pd_bench_config *cfg)
{
    if (!n)
        return;
    if (n->type != YAML_SEQUENCE_NODE) {
        err_at(c, node_line(n), "constraints", "must be a list, found %s", type_desc(n));
        return;
    }
    size_t nc = (size_t)(n->data.sequence.items.top - n->data.sequence.items.start);
    cfg->constraints = calloc(nc ? nc : 1, sizeof *cfg->constraints);
    for (size_t i = 0; i < nc && cfg->constraints; i++) {
        yaml_node_t *it = node(c, n->data.sequence.items.start[i]);
        char key[64];
        snprintf(key, sizeof key, "constraints[%zu]", i);
        pd_bench_constraint *con = &cfg->constraints[cfg->nconstraints];
        if (it->type == YAML_SCALAR_NODE) {
            if (!get_text(c, it, key, &con->rule))
                continue;
            con->name = pd_strdup(key);
        } else if (want_mapping(c, it, key)) {
            static const char *known[] = {"name", "rule", "violation_policy", "description", NULL};
            check_keys(c, it, key, known, NULL);
            const yaml_node_t *r = map_get(c, it, "rule"), *nm = map_get(c, it, "name"),
                              *pol = map_get(c, it, "violation_policy");
            char *rk = keypath(key, "rule");
            if (!r) {
                err_at(c, node_line(it), rk, "required key is missing");
                free(rk);
                continue;
            }
            bool ok = get_text(c, r, rk, &con->rule);
            free(rk);
            if (!ok)
                continue;
            con->name = nm ? get_str(c, nm, "name") : pd_strdup(key);
            if (pol) {
                const char *ps = scalar(pol);
                char *pk = keypath(key, "violation_policy");
                if (ps && !strcmp(ps, "skip"))
                    con->policy = PD_POLICY_SKIP;
                else if (ps && !strcmp(ps, "error"))
                    con->policy = PD_POLICY_ERROR;
                else if (ps && !strcmp(ps, "warn"))
                    con->policy = PD_POLICY_WARN;
                else
                    err_at(c, node_line(pol), pk, "must be skip, error or warn, found '%s'", ps ? ps : type_desc(pol));
                free(pk);
            }
        } else {
            continue;
        }
        cfg->nconstraints++;
    }
}

static void parse_parser(ctx *c, const yaml_node_t *n, const char *skey, pd_bench_script *sc)
{
    char *key = keypath(skey, "parser");
    if (!want_mapping(c, n, key)) {
        free(key);
        return;
    }
    static const char *known[] = {"file", "metrics", "parser_script", NULL};
    check_keys(c, n, key, known, NULL);
    sc->has_parser = true;
    const yaml_node_t *f = map_get(c, n, "file"), *m = map_get(c, n, "metrics"), *ps = map_get(c, n, "parser_script");
    char *fk = keypath(key, "file"), *mk = keypath(key, "metrics");
    if (!f)
        err_at(c, node_line(n), fk, "required key is missing (the file the metrics are read from)");
    else
        get_text(c, f, fk, &sc->parser_file);
    if (!m || m->type != YAML_SEQUENCE_NODE || m->data.sequence.items.top == m->data.sequence.items.start) {
        err_at(c, node_line(m ? m : n), mk, "required: a non-empty list of metrics (- name: bandwidth)");
    } else {
        size_t nm = (size_t)(m->data.sequence.items.top - m->data.sequence.items.start);
        sc->metrics = calloc(nm, sizeof *sc->metrics);
        for (size_t i = 0; i < nm && sc->metrics; i++) {
            yaml_node_t *it = node(c, m->data.sequence.items.start[i]);
            const char *name = scalar(it);
            if (it->type == YAML_MAPPING_NODE) {
                static const char *mkn[] = {"name", "description", "unit", "type", NULL};
                static const char *mki[] = {"path", NULL};
                check_keys(c, it, mk, mkn, mki);
                name = scalar(map_get(c, it, "name"));
            }
            if (!name || !*name) {
                err_at(c, node_line(it), mk, "each metric needs a name");
                continue;
            }
            bool dup = false;
            for (size_t k = 0; k < sc->nmetrics; k++)
                dup = dup || !strcmp(sc->metrics[k], name);
            /* names stop_when sees (adaptive_plan.c): IOPS 3.5.8 refuses them for any study */
            static const char *stop_when_names[] = {"exit_code", "status", "metrics", "execution_time", "previous",
                                                    "iteration"};
            bool builtin = false;
            for (size_t k = 0; k < PD_ARRAY_LEN(stop_when_names); k++)
                builtin = builtin || !strcmp(stop_when_names[k], name);
            if (dup)
                err_at(c, node_line(it), mk, "duplicate metric '%s'", name);
            else if (builtin)
                err_at(c, node_line(it), mk,
                       "metric '%s' conflicts with a built-in stop_when variable (reserved: exit_code, "
                       "execution_time, iteration, metrics, previous, status)",
                       name);
            else
                sc->metrics[sc->nmetrics++] = pd_strdup(name);
        }
    }
    if (ps) {
        char *pk = keypath(key, "parser_script");
        sc->parser_script = get_str(c, ps, pk);
        if (sc->parser_script && !load_code_or_file(c, &sc->parser_script, node_line(ps), pk)) {
            free(sc->parser_script);
            sc->parser_script = NULL;
        } else if (sc->parser_script && !strstr(sc->parser_script, "def parse")) {
            err_at(c, node_line(ps), pk, "must define parse(file_path) returning a dict of metrics");
        }
        free(pk);
    }
    free(fk);
    free(mk);
    free(key);
}

static void parse_inputs(ctx *c, const yaml_node_t *n, const char *skey, pd_bench_script *sc)
{
    char *key = keypath(skey, "inputs");
    if (n->type != YAML_SEQUENCE_NODE) {
        err_at(c, node_line(n), key, "must be a list of {name, path, template|file, mode}, found %s", type_desc(n));
        free(key);
        return;
    }
    size_t ni = (size_t)(n->data.sequence.items.top - n->data.sequence.items.start);
    sc->inputs = calloc(ni ? ni : 1, sizeof *sc->inputs);
    for (size_t i = 0; i < ni && sc->inputs; i++) {
        yaml_node_t *it = node(c, n->data.sequence.items.start[i]);
        char ik[96];
        snprintf(ik, sizeof ik, "%s[%zu]", key, i);
        if (!want_mapping(c, it, ik))
            continue;
        static const char *known[] = {"name", "path", "template", "file", "mode", NULL};
        check_keys(c, it, ik, known, NULL);
        struct pd_bench_input *in = &sc->inputs[sc->ninputs];
        in->mode = -1;
        const yaml_node_t *nm = map_get(c, it, "name"), *pa = map_get(c, it, "path"), *tp = map_get(c, it, "template"),
                          *fi = map_get(c, it, "file"), *mo = map_get(c, it, "mode");
        char *k2 = keypath(ik, "name");
        bool ok = true;
        if (!nm) {
            err_at(c, node_line(it), k2, "required key is missing");
            ok = false;
        } else if (!(in->name = get_str(c, nm, k2))) {
            ok = false;
        } else if (!valid_identifier(in->name)) {
            err_at(c, node_line(nm), k2, "must be an identifier (it is used as inputs.%s.path)", in->name);
            ok = false;
        } else {
            for (size_t k = 0; k < sc->ninputs; k++)
                if (!strcmp(sc->inputs[k].name, in->name)) {
                    err_at(c, node_line(nm), k2, "duplicate input '%s'", in->name);
                    ok = false;
                }
        }
        free(k2);
        k2 = keypath(ik, "path");
        if (!pa) {
            err_at(c, node_line(it), k2, "required key is missing (e.g. \"{{ execution_dir }}/app.conf\")");
            ok = false;
        } else if (!get_text(c, pa, k2, &in->path)) {
            ok = false;
        }
        free(k2);
        if (!tp == !fi) {
            err_at(c, node_line(it), ik, "give exactly one of template (inline content) or file");
            ok = false;
        } else if (tp) {
            k2 = keypath(ik, "template");
            ok = get_text(c, tp, k2, &in->template) && ok;
            free(k2);
        } else {
            k2 = keypath(ik, "file");
            if (get_text(c, fi, k2, &in->template))
                ok = maybe_read_file(c, &in->template.text, node_line(fi), k2, true) && ok;
            else
                ok = false;
            free(k2);
        }
        if (mo) {
            const char *m = scalar(mo);
            char *end = NULL;
            long v = m ? strtol(m, &end, 8) : -1;
            if (!m || !*m || *end || v < 0 || v > 07777) {
                k2 = keypath(ik, "mode");
                err_at(c, node_line(mo), k2, "must be an octal string such as \"0644\", found '%s'", m ? m : type_desc(mo));
                free(k2);
                ok = false;
            } else {
                in->mode = (int)v;
            }
        }
        if (ok) {
            sc->ninputs++;
        } else {
            free(in->name);
            text_free(&in->path);
            text_free(&in->template);
            *in = (struct pd_bench_input){0};
        }
    }
    free(key);
}

static void parse_one_script(ctx *c, yaml_node_t *s, size_t idx, pd_bench_script *sc)
{
    char K[32], key[96];
    snprintf(K, sizeof K, "scripts[%zu]", idx);
    if (!want_mapping(c, s, K))
        return;
    static const char *known[] = {"name", "submit", "script_template", "parser", "post", "inputs", NULL};
    check_keys(c, s, K, known, NULL);
    const yaml_node_t *v;
    snprintf(key, sizeof key, "%s.name", K);
    if ((v = map_get(c, s, "name"))) {
        sc->name = get_str(c, v, key);
        bool ok = sc->name && *sc->name;
        for (const char *ch = sc->name; ok && *ch; ch++)
            ok = isalnum((unsigned char)*ch) || *ch == '_' || *ch == '-' || *ch == '.';
        if (sc->name && !ok)
            err_at(c, node_line(v), key, "must be letters, digits, '_', '-' or '.' (it names run_<name>.sh)");
    } else {
        err_at(c, node_line(s), key, "required key is missing");
    }
    snprintf(key, sizeof key, "%s.submit", K);
    if ((v = map_get(c, s, "submit"))) {
        const char *sub = scalar(v);
        if (!sub || (strcmp(sub, "bash") && strcmp(sub, "sbatch") && strcmp(sub, "sh")))
            err_at(c, node_line(v), key, "must be bash or sbatch (the executor decides), found '%s'",
                   sub ? sub : type_desc(v));
    }
    snprintf(key, sizeof key, "%s.script_template", K);
    if ((v = map_get(c, s, "script_template"))) {
        if (get_text(c, v, key, &sc->script_template) &&
            !maybe_read_file(c, &sc->script_template.text, node_line(v), key, false)) {
            text_free(&sc->script_template);
        }
    } else {
        err_at(c, node_line(s), key, "required key is missing");
    }
    snprintf(key, sizeof key, "%s.post", K);
    if ((v = map_get(c, s, "post")) && want_mapping(c, v, key)) {
        static const char *pk[] = {"script", NULL};
        check_keys(c, v, key, pk, NULL);
        const yaml_node_t *ps = map_get(c, v, "script");
        snprintf(key, sizeof key, "%s.post.script", K);
        if (!ps)
            err_at(c, node_line(v), key, "required key is missing");
        else if (get_text(c, ps, key, &sc->post) && !maybe_read_file(c, &sc->post.text, node_line(ps), key, false))
            text_free(&sc->post);
        else if (sc->post.text && !*pd_trim(sc->post.text))
            err_at(c, node_line(ps), key, "must not be empty");
    }
    if ((v = map_get(c, s, "inputs")))
        parse_inputs(c, v, K, sc);
    if ((v = map_get(c, s, "parser")))
        parse_parser(c, v, K, sc);
}

static void parse_scripts(ctx *c, const yaml_node_t *n, pd_bench_config *cfg)
{
    if (!n) {
        err_at(c, 1, "scripts", "required section is missing");
        return;
    }
    if (n->type != YAML_SEQUENCE_NODE || n->data.sequence.items.top == n->data.sequence.items.start) {
        err_at(c, node_line(n), "scripts", "must be a non-empty list of scripts");
        return;
    }
    size_t ns = (size_t)(n->data.sequence.items.top - n->data.sequence.items.start);
    if (ns > 1 && !(cfg->extra_scripts = calloc(ns - 1, sizeof *cfg->extra_scripts)))
        return;
    for (size_t i = 0; i < ns; i++) {
        yaml_node_t *s = node(c, n->data.sequence.items.start[i]);
        pd_bench_script *sc = i == 0 ? &cfg->script : &cfg->extra_scripts[i - 1];
        parse_one_script(c, s, i, sc);
        if (i > 0)
            cfg->nextra_scripts++;
        for (size_t k = 0; k < i && sc->name; k++) {
            const pd_bench_script *o = pd_bench_script_at(cfg, k);
            if (o->name && !strcmp(o->name, sc->name))
                err_at(c, node_line(s), "scripts", "two scripts are named '%s' (names make run_<name>.sh)", sc->name);
        }
    }
    /* results.csv columns: the union of the metrics, first appearance first */
    size_t total = 0;
    for (size_t i = 0; i < ns; i++)
        total += pd_bench_script_at(cfg, i)->nmetrics;
    cfg->metrics = calloc(total ? total : 1, sizeof *cfg->metrics);
    for (size_t i = 0; i < ns && cfg->metrics; i++) {
        const pd_bench_script *sc = pd_bench_script_at(cfg, i);
        for (size_t m = 0; m < sc->nmetrics; m++) {
            bool seen = false;
            for (size_t k = 0; k < cfg->nmetrics && !seen; k++)
                seen = !strcmp(cfg->metrics[k], sc->metrics[m]);
            if (!seen)
                cfg->metrics[cfg->nmetrics++] = pd_strdup(sc->metrics[m]);
        }
    }
}

size_t pd_bench_nscripts(const pd_bench_config *cfg) { return 1 + cfg->nextra_scripts; }

const pd_bench_script *pd_bench_script_at(const pd_bench_config *cfg, size_t i)
{
    return i == 0 ? &cfg->script : &cfg->extra_scripts[i - 1];
}

static void parse_output(ctx *c, const yaml_node_t *n, pd_bench_config *cfg)
{
    if (!n || !want_mapping(c, n, "output"))
        return;
    static const char *known[] = {"sink", NULL};
    check_keys(c, n, "output", known, NULL);
    const yaml_node_t *sink = map_get(c, n, "sink");
    if (!sink || !want_mapping(c, sink, "output.sink"))
        return;
    static const char *sk[] = {"type", "path", "mode", "table", NULL};
    static const char *si[] = {"exclude", "include", NULL};
    check_keys(c, sink, "output.sink", sk, si);
    const yaml_node_t *v;
    if ((v = map_get(c, sink, "type"))) {
        const char *t = scalar(v);
        if (t && !strcmp(t, "sqlite"))
            cfg->sink_type = PD_SINK_SQLITE;
        else if (t && !strcmp(t, "parquet"))
            err_at(c, node_line(v), "output.sink.type",
                   "parquet is not supported (Debian 12 packages no C library that writes it); use csv or sqlite");
        else if (!t || strcmp(t, "csv"))
            err_at(c, node_line(v), "output.sink.type", "must be csv or sqlite, found '%s'", t ? t : type_desc(v));
    }
    if ((v = map_get(c, sink, "table")) && !is_null(v)) {
        cfg->sink_table = get_str(c, v, "output.sink.table");
        if (cfg->sink_table && !*cfg->sink_table)
            err_at(c, node_line(v), "output.sink.table", "must not be empty");
    }
    if (!cfg->sink_table)
        cfg->sink_table = pd_strdup("results"); /* IOPS's default table */
    if ((v = map_get(c, sink, "mode")) && !is_null(v)) {
        /* IOPS's text; paddiser keeps honouring the mode (see docs/bench.md) */
        warn_at(c, node_line(v), "output.sink.mode",
                "output.sink.mode is deprecated and will be removed in version 3.7. "
                "IOPS now always appends results to the output file. "
                "See https://iops.dev/about/deprecations for details.\n"
                "paddiser bench still honours it (append or overwrite, see docs/bench.md).");
        const char *m = scalar(v);
        if (!m || (strcmp(m, "append") && strcmp(m, "overwrite")))
            err_at(c, node_line(v), "output.sink.mode", "must be append or overwrite, found '%s'", m ? m : type_desc(v));
        else
            cfg->sink_overwrite = !strcmp(m, "overwrite");
    }
    if ((v = map_get(c, sink, "path")))
        get_text(c, v, "output.sink.path", &cfg->sink_path);
}

static void parse_command(ctx *c, const yaml_node_t *n, pd_bench_config *cfg)
{
    if (!n) {
        err_at(c, 1, "command", "required section is missing (command.template)");
        return;
    }
    if (!want_mapping(c, n, "command"))
        return;
    static const char *known[] = {"template", "labels", "env", NULL};
    static const char *ignored[] = {"metadata", NULL};
    check_keys(c, n, "command", known, ignored);
    const yaml_node_t *env = map_get(c, n, "env"), *labels = map_get(c, n, "labels");
    if (env && want_mapping(c, env, "command.env")) {
        size_t ne = (size_t)(env->data.mapping.pairs.top - env->data.mapping.pairs.start);
        cfg->env = calloc(ne ? ne : 1, sizeof *cfg->env);
        cfg->env_names = calloc(ne ? ne : 1, sizeof *cfg->env_names);
        for (size_t i = 0; i < ne && cfg->env && cfg->env_names; i++) {
            yaml_node_pair_t *pr = &env->data.mapping.pairs.start[i];
            const char *k = scalar(node(c, pr->key));
            char *ek = keypath("command.env", k ? k : "?");
            if (!k || !valid_identifier(k))
                err_at(c, node_line(node(c, pr->key)), ek, "environment variable names must be identifiers");
            else if (get_text(c, node(c, pr->value), ek, &cfg->env[cfg->nenv]))
                cfg->env_names[cfg->nenv++] = pd_strdup(k);
            free(ek);
        }
    }
    if (labels && want_mapping(c, labels, "command.labels")) {
        size_t nl = (size_t)(labels->data.mapping.pairs.top - labels->data.mapping.pairs.start);
        cfg->label_names = calloc(nl ? nl : 1, sizeof *cfg->label_names);
        cfg->label_values = calloc(nl ? nl : 1, sizeof *cfg->label_values);
        for (size_t i = 0; i < nl && cfg->label_names && cfg->label_values; i++) {
            yaml_node_pair_t *pr = &labels->data.mapping.pairs.start[i];
            const char *k = scalar(node(c, pr->key));
            char *lk = keypath("command.labels", k ? k : "?");
            char *v = k ? get_str(c, node(c, pr->value), lk) : NULL;
            if (!k)
                err_at(c, node_line(node(c, pr->key)), lk, "label names must be scalars");
            else if (v) {
                cfg->label_names[cfg->nlabels] = pd_strdup(k);
                cfg->label_values[cfg->nlabels++] = v;
            }
            free(lk);
        }
    }
    const yaml_node_t *t = map_get(c, n, "template");
    if (!t)
        err_at(c, node_line(n), "command.template", "required key is missing");
    else
        get_text(c, t, "command.template", &cfg->command);
}

/* ------------------------------------------------------------ machines
 * IOPS's machine overrides (luanteylo/iops: iops/config/merge.py and
 * _apply_machine_override in iops/config/loader.py), applied to the YAML
 * document itself: the override's nodes are in the same document, so a
 * merged value keeps the line of the override it came from in messages. */

static const char *const machine_keys[] = {"benchmark", "vars", "command", "scripts", "output", "constraints",
                                           "reporting", NULL};

static size_t map_len(const yaml_node_t *m) { return (size_t)(m->data.mapping.pairs.top - m->data.mapping.pairs.start); }
static size_t seq_len(const yaml_node_t *s) { return (size_t)(s->data.sequence.items.top - s->data.sequence.items.start); }

/* Every item a mapping with a name key (IOPS's _is_named_object_list). */
static bool named_list(ctx *c, const yaml_node_t *seq)
{
    if (!seq || seq->type != YAML_SEQUENCE_NODE || !seq_len(seq))
        return false;
    for (size_t i = 0; i < seq_len(seq); i++)
        if (!map_get(c, node(c, seq->data.sequence.items.start[i]), "name"))
            return false;
    return true;
}

static const char *item_name(ctx *c, int id) { return scalar(map_get(c, node(c, id), "name")); }

static void merge_mapping(ctx *c, int base_id, int over_id, const char *path);

/* base[key] = merge(base[key], over): the value's node id to store. */
static int merge_value(ctx *c, int base_id, int over_id, const char *path)
{
    yaml_node_t *b = node(c, base_id), *o = node(c, over_id);
    if (b && o && b->type == YAML_MAPPING_NODE && o->type == YAML_MAPPING_NODE) {
        merge_mapping(c, base_id, over_id, path);
        return base_id;
    }
    if (named_list(c, b) && named_list(c, o)) {
        for (size_t i = 0; i < seq_len(o); i++) /* IOPS refuses duplicate names in an override list */
            for (size_t k = 0; k < i; k++) {
                const char *n1 = item_name(c, o->data.sequence.items.start[i]);
                const char *n2 = item_name(c, o->data.sequence.items.start[k]);
                if (n1 && n2 && !strcmp(n1, n2))
                    err_at(c, node_line(node(c, o->data.sequence.items.start[i])), path,
                           "the override list has two items named '%s'", n1);
            }
        size_t nb = seq_len(b);
        for (size_t i = 0; i < seq_len(o); i++) {
            int oi = o->data.sequence.items.start[i];
            const char *on = item_name(c, oi);
            bool merged = false;
            for (size_t k = 0; k < nb && on && !merged; k++) {
                int bi = node(c, base_id)->data.sequence.items.start[k];
                const char *bn = item_name(c, bi);
                if (bn && !strcmp(bn, on)) {
                    merge_mapping(c, bi, oi, path);
                    merged = true;
                }
            }
            if (!merged)
                yaml_document_append_sequence_item(c->doc, base_id, oi);
        }
        return base_id;
    }
    return over_id; /* scalars, other lists, a type change: the override wins */
}

static void remove_pair(ctx *c, int map_id, const char *key)
{
    yaml_node_t *m = node(c, map_id);
    for (yaml_node_pair_t *p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top; p++) {
        const char *k = scalar(node(c, p->key));
        if (k && !strcmp(k, key)) {
            memmove(p, p + 1, (size_t)(m->data.mapping.pairs.top - p - 1) * sizeof *p);
            m->data.mapping.pairs.top--;
            return;
        }
    }
}

static void merge_mapping(ctx *c, int base_id, int over_id, const char *path)
{
    yaml_node_t *o = node(c, over_id);
    for (size_t i = 0; i < map_len(o); i++) {
        yaml_node_pair_t op = o->data.mapping.pairs.start[i];
        const char *k = scalar(node(c, op.key));
        if (!k)
            continue;
        char *kp = keypath(path, k);
        yaml_node_t *b = node(c, base_id);
        bool found = false;
        for (size_t j = 0; j < map_len(b) && !found; j++) {
            const char *bk = scalar(node(c, b->data.mapping.pairs.start[j].key));
            if (bk && !strcmp(bk, k)) {
                found = true;
                int v = merge_value(c, b->data.mapping.pairs.start[j].value, op.value, kp);
                node(c, base_id)->data.mapping.pairs.start[j].value = v; /* the pairs may have moved */
            }
        }
        if (!found)
            yaml_document_append_mapping_pair(c->doc, base_id, op.key, op.value);
        free(kp);
    }
}

/* search_method adaptive needs an adaptive variable, and an adaptive
 * variable needs search_method adaptive (IOPS 3.5.8's loader). A valid
 * adaptive variable gets its initial value as its one value: the matrix of
 * the other swept variables is built with it (one probe per combination,
 * adaptive_plan.h), and the probes step it from there. */
/* Whether text has name as a whole word (IOPS: re.search(r'\bname\b')). */
static bool has_word(const char *text, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = text ? strstr(text, name) : NULL; p; p = strstr(p + 1, name)) {
        bool before = p > text && (isalnum((unsigned char)p[-1]) || p[-1] == '_');
        bool after = isalnum((unsigned char)p[n]) || p[n] == '_';
        if (!before && !after)
            return true;
    }
    return false;
}

static void check_adaptive(ctx *c, pd_bench_config *cfg)
{
    pd_bench_var *first = NULL;
    for (size_t i = 0; i < cfg->nvars; i++) {
        pd_bench_var *v = &cfg->vars[i];
        if (!v->adaptive.set)
            continue;
        if (first) /* IOPS: one variable probes one dimension */
            err_at(c, v->line, "vars", "only one adaptive variable is supported per study: '%s' and '%s' are",
                   first->name, v->name);
        else
            first = v;
    }
    if (cfg->search == PD_SEARCH_ADAPTIVE && !first) {
        err_at(c, cfg->search_line, "benchmark.search_method",
               "search_method adaptive needs a variable with an 'adaptive' block");
        return;
    }
    if (!first)
        return;
    for (size_t k = 0; k < cfg->nexhaustive_vars; k++)
        if (!strcmp(cfg->exhaustive_vars[k], first->name))
            err_at(c, cfg->exhaustive_line, "benchmark.exhaustive_vars",
                   "adaptive variable '%s' cannot be listed in exhaustive_vars", first->name);
    for (size_t k = 0; k < cfg->ncache_exclude_vars; k++)
        if (!strcmp(cfg->cache_exclude_vars[k], first->name))
            err_at(c, first->line, "benchmark.cache_exclude_vars",
                   "adaptive variable '%s' cannot be listed in cache_exclude_vars", first->name);
    for (size_t i = 0; i < cfg->nvars; i++) /* `when` is evaluated on the matrix, before any probed value */
        if (cfg->vars[i].when.text && has_word(cfg->vars[i].when.text, first->name))
            err_at(c, cfg->vars[i].when.line, cfg->vars[i].when.key,
                   "names adaptive variable '%s', which has no value when conditions are evaluated; use only "
                   "swept variables in 'when'",
                   first->name);
    if (c->nerrors)
        return;
    if (cfg->search != PD_SEARCH_ADAPTIVE) {
        err_at(c, first->line, "vars",
               "'%s' is an adaptive variable: set benchmark.search_method to 'adaptive' to use adaptive variables",
               first->name);
        return;
    }
    if (!first->values && (first->values = calloc(1, sizeof *first->values))) {
        first->values[0] = pd_val_copy(&first->adaptive.initial);
        first->nvalues = 1;
    }
}

/* sweep, expr and adaptive exclude each other: the one the override gives
 * wins; when/default go with sweep (IOPS's post-merge fixup). */
static void fix_merged_vars(ctx *c, const yaml_node_t *over_vars, int merged_vars_id)
{
    static const char *kinds[] = {"sweep", "expr", "adaptive"};
    if (!over_vars || over_vars->type != YAML_MAPPING_NODE)
        return;
    for (size_t i = 0; i < map_len(over_vars); i++) {
        const yaml_node_pair_t *p = &over_vars->data.mapping.pairs.start[i];
        const char *name = scalar(node(c, p->key));
        const yaml_node_t *ov = node(c, p->value);
        const yaml_node_pair_t *mp = name ? map_pair(c, node(c, merged_vars_id), name) : NULL;
        if (!mp || !ov || ov->type != YAML_MAPPING_NODE || node(c, mp->value)->type != YAML_MAPPING_NODE)
            continue;
        int mv = mp->value;
        bool given[3], any = false;
        for (int k = 0; k < 3; k++)
            any |= given[k] = map_get(c, ov, kinds[k]) != NULL;
        if (!any)
            continue;
        for (int k = 0; k < 3; k++)
            if (!given[k])
                remove_pair(c, mv, kinds[k]);
        if (!given[0]) {
            if (!map_get(c, ov, "when"))
                remove_pair(c, mv, "when");
            if (!map_get(c, ov, "default"))
                remove_pair(c, mv, "default");
        }
    }
}

/* Checks machines: (even when none is selected, as IOPS does), merges the
 * selected one into the root and drops the section. */
static void apply_machine(ctx *c, yaml_node_t *root, const char *machine)
{
    int root_id = (int)(root - c->doc->nodes.start) + 1;
    const yaml_node_t *ms = map_get(c, root, "machines");
    if (!is_null(ms) && want_mapping(c, ms, "machines"))
        for (size_t i = 0; i < map_len(ms); i++) {
            const yaml_node_pair_t *p = &ms->data.mapping.pairs.start[i];
            const char *name = scalar(node(c, p->key));
            char *mk = keypath("machines", name ? name : "?");
            if (want_mapping(c, node(c, p->value), mk))
                check_keys(c, node(c, p->value), mk, machine_keys, NULL);
            free(mk);
        }
    if (!machine) {
        remove_pair(c, root_id, "machines");
        return;
    }
    const yaml_node_t *entry = is_null(ms) || ms->type != YAML_MAPPING_NODE ? NULL : map_get(c, ms, machine);
    if (!entry) {
        pd_str names = {0};
        for (size_t i = 0; ms && ms->type == YAML_MAPPING_NODE && i < map_len(ms); i++)
            pd_str_printf(&names, "%s%s", i ? ", " : "", scalar(node(c, ms->data.mapping.pairs.start[i].key)));
        if (is_null(ms))
            err_at(c, 1, "machines", "machine '%s' was selected (--machine or IOPS_MACHINE) but the study has no "
                   "machines section", machine);
        else
            err_at(c, key_line(c, root, "machines"), "machines", "unknown machine '%s' (the study has: %s)", machine,
                   names.data ? names.data : "none");
        pd_str_free(&names);
        remove_pair(c, root_id, "machines");
        return;
    }
    if (entry->type != YAML_MAPPING_NODE) {
        remove_pair(c, root_id, "machines");
        return; /* said above */
    }
    int entry_id = map_pair(c, ms, machine)->value;
    remove_pair(c, root_id, "machines");
    merge_mapping(c, root_id, entry_id, "");
    const yaml_node_t *ov = map_get(c, node(c, entry_id), "vars");
    const yaml_node_pair_t *mv = map_pair(c, node(c, root_id), "vars");
    if (ov && mv)
        fix_merged_vars(c, ov, mv->value);
}

static int emit_to_str(void *data, unsigned char *buffer, size_t size)
{
    pd_str_printf((pd_str *)data, "%.*s", (int)size, (const char *)buffer);
    return 1;
}

/* The merged document as YAML (libyaml's emitter; it consumes the nodes). */
static void emit_resolved(yaml_document_t *doc, pd_str *out)
{
    yaml_emitter_t em;
    if (!yaml_emitter_initialize(&em))
        return;
    yaml_emitter_set_output(&em, emit_to_str, out);
    yaml_emitter_set_unicode(&em, 1);
    yaml_emitter_set_width(&em, 100);
    if (!yaml_emitter_dump(&em, doc) || !yaml_emitter_close(&em))
        pd_str_printf(out, "# (could not write the merged study: %s)\n", em.problem ? em.problem : "libyaml");
    yaml_emitter_delete(&em);
}

int pd_bench_config_parse(const char *text, const char *name, const char *dir, pd_bench_config *cfg,
                          pd_str *errors, pd_str *warnings)
{
    return pd_bench_config_parse_machine(text, name, dir, NULL, cfg, errors, warnings, NULL);
}

int pd_bench_config_parse_machine(const char *text, const char *name, const char *dir, const char *machine,
                                  pd_bench_config *cfg, pd_str *errors, pd_str *warnings, pd_str *resolved)
{
    *cfg = (pd_bench_config){.repetitions = 1, .parallel = 1, .executor = PD_EXEC_LOCAL, .poll_interval_s = 1.0,
                            .slurm_command_timeout_s = 60};
    cfg->probes.interval_s = 1.0;
    cfg->path = pd_strdup(name);
    ctx c = {.file = name, .dir = dir, .errors = errors, .warnings = warnings};
    yaml_parser_t parser;
    yaml_document_t doc;
    if (!yaml_parser_initialize(&parser)) {
        pd_str_printf(errors, "%s: cannot initialise the YAML parser\n", name);
        return -1;
    }
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, strlen(text));
    if (!yaml_parser_load(&parser, &doc)) {
        pd_str_printf(errors, "%s:%zu: YAML syntax error: %s%s%s\n", name,
                      (parser.problem_mark.line ? parser.problem_mark.line : parser.context_mark.line) + 1,
                      parser.problem ? parser.problem : "malformed document", parser.context ? " " : "",
                      parser.context ? parser.context : "");
        yaml_parser_delete(&parser);
        return -1;
    }
    c.doc = &doc;
    yaml_node_t *root = yaml_document_get_root_node(&doc);
    if (!root || root->type != YAML_MAPPING_NODE) {
        err_at(&c, root ? node_line(root) : 1, "(top level)", "the study must be a YAML mapping (benchmark, vars, ...)");
    } else {
        static const char *known[] = {"benchmark", "vars", "constraints", "command", "scripts", "output", NULL};
        static const char *ignored[] = {"rounds", "reporting", "metadata", NULL};
        apply_machine(&c, root, machine);
        if (machine)
            cfg->machine = pd_strdup(machine);
        check_keys(&c, root, "", known, ignored);
        parse_benchmark(&c, map_get(&c, root, "benchmark"), cfg);
        parse_vars(&c, map_get(&c, root, "vars"), cfg);
        parse_constraints(&c, map_get(&c, root, "constraints"), cfg);
        parse_command(&c, map_get(&c, root, "command"), cfg);
        parse_scripts(&c, map_get(&c, root, "scripts"), cfg);
        parse_output(&c, map_get(&c, root, "output"), cfg);
        bool objective_known = !cfg->bayes.objective_metric || cfg->search != PD_SEARCH_BAYESIAN;
        for (size_t i = 0; i < cfg->nmetrics && !objective_known; i++)
            objective_known = !strcmp(cfg->metrics[i], cfg->bayes.objective_metric);
        if (!objective_known)
            err_at(&c, cfg->bayes.line, "benchmark.bayesian_config.objective_metric",
                   "'%s' is not a metric of any script's parser.metrics", cfg->bayes.objective_metric);
        for (size_t s = 0; s < pd_bench_nscripts(cfg); s++) {
            const pd_bench_script *sc = pd_bench_script_at(cfg, s);
            char mk[64];
            snprintf(mk, sizeof mk, "scripts[%zu].parser.metrics", s);
            for (size_t i = 0; i < sc->nmetrics; i++)
                for (size_t k = 0; k < cfg->nvars; k++)
                    if (!strcmp(sc->metrics[i], cfg->vars[k].name))
                        err_at(&c, cfg->vars[k].line, mk,
                               "metric '%s' has the name of a variable; results.csv needs distinct columns",
                               sc->metrics[i]);
        }
        check_adaptive(&c, cfg);
    }
    if (resolved && !c.nerrors)
        emit_resolved(&doc, resolved);
    yaml_document_delete(&doc);
    yaml_parser_delete(&parser);
    if (errors->oom)
        return -1;
    return c.nerrors ? -1 : 0;
}

int pd_bench_config_load(const char *path, pd_bench_config *cfg, pd_str *errors, pd_str *warnings)
{
    return pd_bench_config_load_machine(path, NULL, cfg, errors, warnings, NULL);
}

int pd_bench_config_load_machine(const char *path, const char *machine, pd_bench_config *cfg, pd_str *errors,
                                 pd_str *warnings, pd_str *resolved)
{
    char *text = pd_read_file(path, NULL);
    if (!text) {
        *cfg = (pd_bench_config){0};
        pd_str_printf(errors, "%s: cannot read: %s\n", path, pd_read_strerror(errno));
        return -1;
    }
    char *dir = pd_strdup(path);
    char *slash = dir ? strrchr(dir, '/') : NULL;
    if (slash)
        *slash = '\0';
    int rc = pd_bench_config_parse_machine(text, path, slash ? dir : ".", machine, cfg, errors, warnings, resolved);
    free(dir);
    free(text);
    return rc;
}

static void script_free(pd_bench_script *sc)
{
    free(sc->name);
    text_free(&sc->script_template);
    text_free(&sc->parser_file);
    for (size_t i = 0; i < sc->nmetrics; i++)
        free(sc->metrics[i]);
    free(sc->metrics);
    free(sc->parser_script);
    text_free(&sc->post);
    for (size_t i = 0; i < sc->ninputs; i++) {
        free(sc->inputs[i].name);
        text_free(&sc->inputs[i].path);
        text_free(&sc->inputs[i].template);
    }
    free(sc->inputs);
}

void pd_bench_config_free(pd_bench_config *cfg)
{
    free(cfg->path);
    free(cfg->name);
    free(cfg->description);
    free(cfg->workdir);
    for (size_t i = 0; i < cfg->probes.n_io_paths; i++)
        text_free(&cfg->probes.io_paths[i]);
    free(cfg->probes.io_paths);
    for (size_t i = 0; i < cfg->nvars; i++) {
        free(cfg->vars[i].name);
        pd_vals_free(cfg->vars[i].values, cfg->vars[i].nvalues);
        text_free(&cfg->vars[i].expr);
        text_free(&cfg->vars[i].when);
        pd_val_free(&cfg->vars[i].when_default);
        pd_val_free(&cfg->vars[i].adaptive.initial);
        pd_val_free(&cfg->vars[i].adaptive.initial_as_written);
        text_free(&cfg->vars[i].adaptive.step_expr);
        text_free(&cfg->vars[i].adaptive.stop_when);
    }
    free(cfg->vars);
    for (size_t i = 0; i < cfg->nconstraints; i++) {
        free(cfg->constraints[i].name);
        text_free(&cfg->constraints[i].rule);
    }
    free(cfg->constraints);
    text_free(&cfg->command);
    for (size_t i = 0; i < cfg->nenv; i++) {
        text_free(&cfg->env[i]);
        free(cfg->env_names[i]);
    }
    free(cfg->env);
    free(cfg->env_names);
    for (size_t i = 0; i < cfg->nlabels; i++) {
        free(cfg->label_names[i]);
        free(cfg->label_values[i]);
    }
    free(cfg->label_names);
    free(cfg->label_values);
    script_free(&cfg->script);
    for (size_t i = 0; i < cfg->nextra_scripts; i++)
        script_free(&cfg->extra_scripts[i]);
    free(cfg->extra_scripts);
    for (size_t i = 0; i < cfg->nmetrics; i++)
        free(cfg->metrics[i]);
    free(cfg->metrics);
    text_free(&cfg->sink_path);
    free(cfg->sink_table);
    free(cfg->cache_file);
    free(cfg->slurm.submit);
    free(cfg->slurm.status);
    free(cfg->slurm.info);
    free(cfg->slurm.cancel);
    free(cfg->slurm.allocation_script);
    for (size_t i = 0; i < cfg->ncache_exclude_vars; i++)
        free(cfg->cache_exclude_vars[i]);
    for (size_t i = 0; i < cfg->nexhaustive_vars; i++)
        free(cfg->exhaustive_vars[i]);
    free(cfg->exhaustive_vars);
    free(cfg->bayes.objective_metric);
    free(cfg->cache_exclude_vars);
    text_free(&cfg->cores_expr);
    free(cfg->machine);
    *cfg = (pd_bench_config){0};
}
