/* Execution matrix and template rendering (see study.h). */
#include "bench/study.h"

#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/pyrandom.h"
#include "common/util.h"
#include "probe/inject.h"

#define MAX_EXECUTIONS 1000000

void pd_bench_exec_dir(char *buf, size_t len, const char *run_dir, int exec_id)
{
    snprintf(buf, len, "%s/exec_%04d", run_dir, exec_id);
}

void pd_bench_rep_dir(char *buf, size_t len, const char *run_dir, int exec_id, int repetition)
{
    snprintf(buf, len, "%s/exec_%04d/repetition_%03d", run_dir, exec_id, repetition);
}

/* What templates can see: variables (the first nknown of them), the
 * execution's identity and directories, os_env.X, command.template. */
typedef struct {
    const pd_bench_config *cfg;
    const char *run_dir;
    int exec_id;      /* 0: no execution context (sink path) */
    int repetition;
    const pd_val *values;
    size_t nknown;
    const char *command; /* rendered command.template, when available */
    char rep_dir[PATH_MAX];
    char **env;          /* rendered command.env values (cfg->nenv), when available */
    const pd_bench_script *script; /* for inputs.NAME.path */
    char **input_paths;  /* rendered so far: ninputs */
    size_t ninputs;
} scope;

/* A list of [name, value] pairs: how mappings (command_env, vars) appear in
 * expressions; .items()/.keys()/.values() and {% for k, v in ... %} work on it. */
static pd_val pairs(char *const *names, size_t n, const pd_val *vals, char *const *strs)
{
    pd_val l = {.kind = PD_VAL_LIST, .n = n};
    l.items = calloc(n ? n : 1, sizeof *l.items);
    if (!l.items)
        return pd_val_none();
    for (size_t i = 0; i < n; i++) {
        pd_val *pr = &l.items[i];
        *pr = (pd_val){.kind = PD_VAL_LIST, .n = 2, .items = calloc(2, sizeof(pd_val))};
        if (!pr->items) {
            pr->n = 0;
            continue;
        }
        pr->items[0] = pd_val_str(names[i]);
        pr->items[1] = vals ? pd_val_copy(&vals[i]) : pd_val_str(strs[i]);
    }
    return l;
}

static bool lookup(void *ud, const char *name, pd_val *out)
{
    scope *s = ud;
    const pd_bench_config *cfg = s->cfg;
    if (!strcmp(name, "vars")) {
        char **names = calloc(s->nknown ? s->nknown : 1, sizeof *names);
        if (!names)
            return false;
        for (size_t i = 0; i < s->nknown; i++)
            names[i] = cfg->vars[i].name;
        *out = pairs(names, s->nknown, s->values, NULL);
        free(names);
        return true;
    }
    if (s->env) {
        if (!strcmp(name, "command_env")) {
            *out = pairs(cfg->env_names, cfg->nenv, NULL, s->env);
            return true;
        }
        for (size_t i = 0; i < cfg->nenv && !strncmp(name, "command_env.", 12); i++)
            if (!strcmp(name + 12, cfg->env_names[i])) {
                *out = pd_val_str(s->env[i]);
                return true;
            }
    }
    if (!strcmp(name, "command_labels")) {
        *out = pairs(cfg->label_names, cfg->nlabels, NULL, cfg->label_values);
        return true;
    }
    for (size_t i = 0; i < cfg->nlabels && !strncmp(name, "command_labels.", 15); i++)
        if (!strcmp(name + 15, cfg->label_names[i])) {
            *out = pd_val_str(cfg->label_values[i]);
            return true;
        }
    if (!strncmp(name, "inputs.", 7) && s->script) {
        for (size_t i = 0; i < s->ninputs; i++) {
            const char *in = s->script->inputs[i].name;
            size_t l = strlen(in);
            if (!strncmp(name + 7, in, l) && !strcmp(name + 7 + l, ".path")) {
                *out = pd_val_str(s->input_paths[i]);
                return true;
            }
        }
    }
    if (!strncmp(name, "vars.", 5))
        name += 5;
    for (size_t i = 0; i < s->nknown; i++)
        if (!strcmp(s->cfg->vars[i].name, name)) {
            *out = pd_val_copy(&s->values[i]);
            return true;
        }
    if (!strncmp(name, "os_env.", 7)) {
        const char *v = getenv(name + 7);
        if (!v)
            return false;
        *out = pd_val_str(v);
        return true;
    }
    if (!strcmp(name, "workdir") || !strcmp(name, "benchmark.workdir")) {
        *out = pd_val_str(s->run_dir);
        return true;
    }
    if (!strcmp(name, "benchmark.name")) {
        *out = pd_val_str(s->cfg->name);
        return true;
    }
    if (!strcmp(name, "benchmark.description") && s->cfg->description) {
        *out = pd_val_str(s->cfg->description);
        return true;
    }
    if (!strcmp(name, "repetitions")) {
        *out = pd_val_int(s->cfg->repetitions);
        return true;
    }
    if (s->exec_id > 0) {
        if (!strcmp(name, "execution_id")) {
            *out = pd_val_int(s->exec_id);
            return true;
        }
        if (!strcmp(name, "repetition")) {
            *out = pd_val_int(s->repetition);
            return true;
        }
        if (!strcmp(name, "execution_dir") || !strcmp(name, "benchmark.execution_dir")) {
            *out = pd_val_str(s->rep_dir);
            return true;
        }
        if (!strcmp(name, "artifacts_dir")) { /* IOPS: <execution_dir>/<gallery.folder>, default images */
            pd_str a = {0};
            pd_str_printf(&a, "%s/images", s->rep_dir);
            *out = pd_val_str(a.data);
            pd_str_free(&a);
            return true;
        }
    }
    if (!strcmp(name, "log_dir")) {
        pd_str a = {0};
        pd_str_printf(&a, "%s/logs", s->run_dir);
        *out = pd_val_str(a.data);
        pd_str_free(&a);
        return true;
    }
    if (s->command && !strcmp(name, "command.template")) {
        *out = pd_val_str(s->command);
        return true;
    }
    for (size_t i = 0; i < cfg->nlabels; i++) /* IOPS puts label keys in scope too */
        if (!strcmp(name, cfg->label_names[i])) {
            *out = pd_val_str(cfg->label_values[i]);
            return true;
        }
    return false;
}

static void scope_init(scope *s, const pd_bench_config *cfg, const char *run_dir, int exec_id, int rep,
                       const pd_val *values, size_t nknown)
{
    *s = (scope){.cfg = cfg, .run_dir = run_dir, .exec_id = exec_id, .repetition = rep, .values = values,
                 .nknown = nknown};
    if (exec_id > 0)
        pd_bench_rep_dir(s->rep_dir, sizeof s->rep_dir, run_dir, exec_id, rep);
}

/* Adds the names in scope to an "unknown name" message. */
static void append_known(pd_str *errors, const scope *s)
{
    pd_str_append(errors, " (known names:");
    for (size_t i = 0; i < s->nknown; i++)
        pd_str_printf(errors, " %s", s->cfg->vars[i].name);
    if (s->exec_id > 0)
        pd_str_append(errors, " execution_id repetition execution_dir artifacts_dir");
    pd_str_append(errors, " repetitions workdir log_dir os_env.NAME");
    if (s->env)
        pd_str_append(errors, " command_env");
    for (size_t i = 0; i < s->ninputs; i++)
        pd_str_printf(errors, " inputs.%s.path", s->script->inputs[i].name);
    if (s->command)
        pd_str_append(errors, " command.template");
    pd_str_append(errors, ")");
}

static void report(pd_str *errors, const pd_bench_config *cfg, const pd_cfg_text *t, int rel_line, const char *msg,
                   const scope *s)
{
    int line = t->line + (rel_line > 1 ? rel_line - 1 : 0);
    pd_str_printf(errors, "%s:%d: %s: %s", cfg->path, line, t->key, msg);
    if (strstr(msg, "unknown name '") && s)
        append_known(errors, s);
    pd_str_append(errors, "\n");
}

/* Renders a {{ }} template. NULL on error (reported). */
static char *render(const pd_bench_config *cfg, const pd_cfg_text *t, scope *s, pd_str *errors)
{
    pd_str out = {0};
    char err[512];
    int line;
    if (pd_template_render(t->text, lookup, s, &out, err, sizeof err, &line) != 0) {
        report(errors, cfg, t, line, err, s);
        pd_str_free(&out);
        return NULL;
    }
    return pd_str_take(&out);
}

/* Evaluates an expression, or renders a text that holds {{ }} tags; the
 * latter yields a string. */
static int evaluate(const pd_bench_config *cfg, const pd_cfg_text *t, scope *s, bool force_template, pd_val *out,
                    pd_str *errors)
{
    if (force_template || pd_template_has_tags(t->text)) {
        char *r = render(cfg, t, s, errors);
        if (!r)
            return -1;
        *out = (pd_val){.kind = PD_VAL_STR, .s = r};
        return 0;
    }
    char err[512];
    if (pd_expr_eval(t->text, lookup, s, out, err, sizeof err) != 0) {
        report(errors, cfg, t, 1, err, s);
        return -1;
    }
    if (out->kind == PD_VAL_UNDEF) {
        snprintf(err, sizeof err, "unknown name '%s'", out->s);
        report(errors, cfg, t, 1, err, s);
        pd_val_free(out);
        return -1;
    }
    return 0;
}

/* Fills the derived variables of values (swept ones already set). */
static int derive(const pd_bench_config *cfg, const char *run_dir, int exec_id, int rep, pd_val *values,
                  pd_str *errors)
{
    for (size_t i = 0; i < cfg->nvars; i++) {
        const pd_bench_var *v = &cfg->vars[i];
        if (!v->expr.text)
            continue;
        scope s;
        scope_init(&s, cfg, run_dir, exec_id, rep, values, i);
        pd_val raw;
        if (evaluate(cfg, &v->expr, &s, v->type == PD_VT_STR, &raw, errors))
            return -1;
        char err[300];
        pd_val_free(&values[i]);
        if (pd_val_cast(&raw, v->type, &values[i], err, sizeof err) != 0) {
            char msg[400];
            snprintf(msg, sizeof msg, "variable is type %s but the value is wrong: %s", pd_var_type_name(v->type), err);
            report(errors, cfg, &v->expr, 1, msg, NULL);
            pd_val_free(&raw);
            return -1;
        }
        pd_val_free(&raw);
    }
    return 0;
}

static void describe(pd_str *out, const pd_bench_config *cfg, const pd_val *values)
{
    for (size_t i = 0; i < cfg->nvars; i++) {
        pd_str_printf(out, "%s%s=", i ? ", " : "", cfg->vars[i].name);
        pd_val_append(out, &values[i]);
    }
}

/* A `when` or constraint result as a condition: a rendered template counts
 * when it reads True. */
static bool is_true(const pd_val *r)
{
    if (r->kind == PD_VAL_STR) {
        const char *t = pd_trim(r->s);
        return !strcmp(t, "True") || !strcmp(t, "true") || !strcmp(t, "1");
    }
    return pd_val_truthy(r);
}

/* Whether text names `name` as an identifier, as IOPS finds the variables an
 * expression uses (Python's ast Name nodes plus {{ name }}): not inside a
 * string literal, not an attribute (os_env.name). */
static bool mentions(const char *text, const char *name)
{
    size_t len = strlen(name);
    char prev = 0; /* last non-blank character before the current one */
    for (const char *p = text; *p;) {
        if (*p == '\'' || *p == '"') {
            char q = *p++;
            while (*p && *p != q)
                p += p[0] == '\\' && p[1] ? 2 : 1;
            if (*p)
                p++;
            prev = q;
            continue;
        }
        if (*p == '_' || (*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z')) {
            const char *s = p;
            while (*p == '_' || (*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9'))
                p++;
            if (prev != '.' && (size_t)(p - s) == len && !strncmp(s, name, len))
                return true;
            prev = 'a';
            continue;
        }
        if (*p != ' ' && *p != '\t' && *p != '\n' && *p != '\r')
            prev = *p;
        p++;
    }
    return false;
}

/* The order IOPS expands swept variables in when some are conditional: its
 * Kahn sort of them (a `when` depends on the swept variables it names),
 * starting from the ones without dependencies in config order and appending
 * each variable once its last dependency is placed. So a conditional variable
 * comes after the unconditional ones listed before its dependencies are all
 * placed. Fills out (cfg indices) and returns how many, or -1 on a cycle. */
static long when_order(const pd_bench_config *cfg, size_t *out)
{
    size_t n = cfg->nvars, ns = 0;
    size_t *swept = calloc(n ? n : 1, sizeof *swept), *indeg = calloc(n ? n : 1, sizeof *indeg);
    size_t *queue = calloc(n ? n : 1, sizeof *queue);
    bool *dep = calloc(n ? n * n : 1, sizeof *dep); /* dep[i * n + j]: swept[i] depends on swept[j] */
    long rc = -1;
    if (!swept || !indeg || !queue || !dep)
        goto out;
    for (size_t i = 0; i < n; i++)
        if (!cfg->vars[i].expr.text)
            swept[ns++] = i;
    for (size_t i = 0; i < ns; i++) {
        const pd_bench_var *v = &cfg->vars[swept[i]];
        for (size_t j = 0; j < ns && v->when.text; j++)
            if (mentions(v->when.text, cfg->vars[swept[j]].name)) {
                dep[i * n + j] = true;
                indeg[i]++;
            }
    }
    size_t head = 0, tail = 0, placed = 0;
    for (size_t i = 0; i < ns; i++)
        if (indeg[i] == 0)
            queue[tail++] = i;
    while (head < tail) {
        size_t node = queue[head++];
        out[placed++] = swept[node];
        for (size_t i = 0; i < ns; i++)
            if (dep[i * n + node] && --indeg[i] == 0)
                queue[tail++] = i;
    }
    rc = placed == ns ? (long)ns : -1;
out:
    free(swept);
    free(indeg);
    free(queue);
    free(dep);
    return rc;
}

typedef struct {
    pd_val **items;
    size_t n, cap;
} combo_list;

static bool combo_push(combo_list *l, pd_val *values)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 16;
        pd_val **p = realloc(l->items, cap * sizeof *p);
        if (!p)
            return false;
        l->items = p;
        l->cap = cap;
    }
    l->items[l->n++] = values;
    return true;
}

/* values with variable `var` set to v (a copy of both). */
static pd_val *combo_with(const pd_bench_config *cfg, const pd_val *values, size_t var, const pd_val *v)
{
    pd_val *c = calloc(cfg->nvars ? cfg->nvars : 1, sizeof *c);
    if (!c)
        return NULL;
    for (size_t i = 0; i < cfg->nvars; i++)
        c[i] = i == var ? pd_val_copy(v) : pd_val_copy(&values[i]);
    return c;
}

/* The combinations of a study with conditional variables, as IOPS builds
 * them: variables in when_order, each one multiplying every combination so
 * far by its values, or giving it its default where its `when` is false
 * (evaluated over the variables already placed). 0, or -1 (reported). */
static int expand_conditional(const pd_bench_config *cfg, const char *run_dir, combo_list *out, pd_str *errors)
{
    size_t *order = calloc(cfg->nvars ? cfg->nvars : 1, sizeof *order);
    long norder = order ? when_order(cfg, order) : -1;
    if (norder < 0) {
        if (order)
            pd_str_printf(errors, "%s: vars: circular dependency between the `when` conditions of the variables\n",
                          cfg->path);
        else
            pd_str_append(errors, "out of memory building the execution matrix\n");
        free(order);
        return -1;
    }
    combo_list cur = {0};
    pd_val *start = calloc(cfg->nvars ? cfg->nvars : 1, sizeof *start);
    int rc = start && combo_push(&cur, start) ? 0 : -1;
    if (rc)
        free(start);
    for (long o = 0; o < norder && rc == 0; o++) {
        size_t var = order[o];
        const pd_bench_var *v = &cfg->vars[var];
        combo_list next = {0};
        for (size_t k = 0; k < cur.n && rc == 0; k++) {
            bool on = true;
            if (v->when.text) {
                scope sc;
                scope_init(&sc, cfg, run_dir, 0, 0, cur.items[k], cfg->nvars);
                pd_val r;
                if (evaluate(cfg, &v->when, &sc, false, &r, errors)) {
                    rc = -1;
                    break;
                }
                on = is_true(&r);
                pd_val_free(&r);
            }
            for (size_t x = 0; x < (on ? v->nvalues : 1) && rc == 0; x++) {
                pd_val *c = combo_with(cfg, cur.items[k], var, on ? &v->values[x] : &v->when_default);
                if (!c || !combo_push(&next, c)) {
                    pd_vals_free(c, cfg->nvars);
                    pd_str_append(errors, "out of memory building the execution matrix\n");
                    rc = -1;
                }
            }
        }
        for (size_t k = 0; k < cur.n; k++)
            pd_vals_free(cur.items[k], cfg->nvars);
        free(cur.items);
        cur = next;
    }
    free(order);
    if (rc) {
        for (size_t k = 0; k < cur.n; k++)
            pd_vals_free(cur.items[k], cfg->nvars);
        free(cur.items);
        return -1;
    }
    *out = cur;
    return 0;
}

typedef struct {
    char *key;
    size_t idx;
} combo_key;

static int cmp_combo_key(const void *a, const void *b)
{
    const combo_key *x = a, *y = b;
    int c = strcmp(x->key, y->key);
    return c ? c : (x->idx > y->idx) - (x->idx < y->idx);
}

/* Drops combinations equal to an earlier one, keeping the order (IOPS
 * deduplicates the combinations of a conditional study). */
static size_t dedupe(const pd_bench_config *cfg, pd_val **combos, size_t n)
{
    combo_key *keys = calloc(n ? n : 1, sizeof *keys);
    bool *drop = calloc(n ? n : 1, sizeof *drop);
    if (!keys || !drop) {
        free(keys);
        free(drop);
        return n;
    }
    for (size_t k = 0; k < n; k++) {
        pd_str s = {0};
        for (size_t i = 0; i < cfg->nvars; i++) {
            pd_str_printf(&s, "%d:", (int)combos[k][i].kind);
            pd_val_append(&s, &combos[k][i]);
            pd_str_append(&s, "\x1f");
        }
        pd_str_append(&s, "");
        keys[k] = (combo_key){.key = pd_str_take(&s), .idx = k};
    }
    bool ok = true;
    for (size_t k = 0; k < n; k++)
        ok = ok && keys[k].key;
    if (ok) {
        qsort(keys, n, sizeof *keys, cmp_combo_key);
        for (size_t k = 1; k < n; k++)
            if (!strcmp(keys[k].key, keys[k - 1].key))
                drop[keys[k].idx] = true; /* sorted by index within equal keys: the first one stays */
    }
    size_t kept = 0;
    for (size_t k = 0; k < n; k++) {
        if (drop[k])
            pd_vals_free(combos[k], cfg->nvars);
        else
            combos[kept++] = combos[k];
    }
    for (size_t k = 0; k < n; k++)
        free(keys[k].key);
    free(keys);
    free(drop);
    return kept;
}

/* IOPS evaluates a constraint that names no derived variable on the swept
 * combinations, before numbering them (a skipped one takes no number), and
 * the others on the numbered executions (a skipped one leaves a gap). */
static bool constraint_is_late(const pd_bench_config *cfg, const pd_bench_constraint *con)
{
    for (size_t i = 0; i < cfg->nvars; i++)
        if (cfg->vars[i].expr.text && mentions(con->rule.text, cfg->vars[i].name))
            return true;
    return false;
}

/* A constraint naming the adaptive variable is not checked on the matrix
 * (it holds the initial value there) but on each probed value, as IOPS
 * defers it to the probe. */
static bool constraint_is_adaptive(const pd_bench_config *cfg, const pd_bench_constraint *con)
{
    for (size_t i = 0; i < cfg->nvars; i++)
        if (cfg->vars[i].adaptive.set && mentions(con->rule.text, cfg->vars[i].name))
            return true;
    return false;
}

/* Applies the constraints of one phase (late or not) to values; probe: a
 * probed adaptive value (else those naming it wait for the probe). Returns 1
 * to keep, 0 to skip, -1 on an error (reported). */
static int check_constraints(const pd_bench_config *cfg, const char *run_dir, int id, bool late, bool probe,
                             const pd_val *values, pd_str *errors, pd_str *warnings)
{
    for (size_t c = 0; c < cfg->nconstraints; c++) {
        const pd_bench_constraint *con = &cfg->constraints[c];
        if (constraint_is_late(cfg, con) != late || (!probe && constraint_is_adaptive(cfg, con)))
            continue;
        scope s;
        scope_init(&s, cfg, run_dir, id, 1, values, cfg->nvars);
        pd_val r;
        if (evaluate(cfg, &con->rule, &s, false, &r, errors))
            return -1;
        bool ok = is_true(&r);
        pd_val_free(&r);
        if (ok)
            continue;
        pd_str d = {0};
        describe(&d, cfg, values);
        int keep = 0;
        if (con->policy == PD_POLICY_ERROR) {
            pd_str_printf(errors, "%s:%d: %s: constraint '%s' violated by %s\n", cfg->path, con->rule.line,
                          con->rule.key, con->name, d.data ? d.data : "");
            keep = -1;
        } else if (con->policy == PD_POLICY_WARN) {
            pd_str_printf(warnings, "%s:%d: %s: constraint '%s' violated by %s (kept: violation_policy warn)\n",
                          cfg->path, con->rule.line, con->rule.key, con->name, d.data ? d.data : "");
            keep = 1;
        }
        pd_str_free(&d);
        if (keep != 1)
            return keep;
    }
    return 1;
}

/* benchmark.exhaustive_vars as IOPS 3.5.8 reads them (matrix.py): each must
 * be a swept variable; when some swept variable is left to search, the
 * exhaustive ones vary fastest in the product (after the others, in config
 * order) and random search samples the points of the others. Fills flags
 * (one per variable); returns how many are in effect (0 when none is, or
 * when every swept variable is listed: plain search then), -1 on error. */
static long exhaustive_flags(const pd_bench_config *cfg, bool *flags, pd_str *errors)
{
    long n = 0, swept = 0;
    for (size_t i = 0; i < cfg->nvars; i++)
        flags[i] = false;
    for (size_t k = 0; k < cfg->nexhaustive_vars; k++) {
        size_t i = 0;
        while (i < cfg->nvars && strcmp(cfg->vars[i].name, cfg->exhaustive_vars[k]))
            i++;
        if (i == cfg->nvars) {
            pd_str_printf(errors, "%s:%d: benchmark.exhaustive_vars: '%s' is not a variable of vars\n", cfg->path,
                          cfg->exhaustive_line, cfg->exhaustive_vars[k]);
            return -1;
        }
        if (cfg->vars[i].expr.text) {
            pd_str_printf(errors, "%s:%d: benchmark.exhaustive_vars: Variable '%s' is listed in exhaustive_vars but is "
                                  "not swept.\n",
                          cfg->path, cfg->exhaustive_line, cfg->exhaustive_vars[k]);
            return -1;
        }
        n += !flags[i];
        flags[i] = true;
    }
    for (size_t i = 0; i < cfg->nvars; i++)
        swept += !cfg->vars[i].expr.text;
    if (n == swept) {
        for (size_t i = 0; i < cfg->nvars; i++)
            flags[i] = false;
        n = 0;
    }
    return n;
}

/* Whether executions a and b are the same search point: equal values of
 * every swept variable not in exhaustive_vars (IOPS's get_search_point). */
static bool same_point(const pd_bench_config *cfg, const bool *exh, const pd_bench_exec *a, const pd_bench_exec *b)
{
    for (size_t i = 0; i < cfg->nvars; i++) {
        if (exh[i] || cfg->vars[i].expr.text)
            continue;
        pd_str x = {0}, y = {0};
        pd_val_append_json(&x, &a->values[i]);
        pd_val_append_json(&y, &b->values[i]);
        bool eq = x.data && y.data && !strcmp(x.data, y.data);
        pd_str_free(&x);
        pd_str_free(&y);
        if (!eq)
            return false;
    }
    return true;
}

/* With exhaustive_vars in effect, random search samples search points:
 * random.sample of the distinct points (in first-seen number order), and
 * picked gets every execution of each drawn point, in the order sample()
 * returned the points and number order within a point (IOPS's
 * _sample_execution_matrix). Same contract as sample_execs. */
static long sample_points(const pd_bench_config *cfg, const bool *exh, pd_pyrandom *rng, pd_bench_matrix *m,
                          size_t *picked, pd_str *warnings)
{
    size_t n = m->nexecs, npoints = 0;
    size_t *point = malloc((n ? n : 1) * sizeof *point), *first = malloc((n ? n : 1) * sizeof *first);
    size_t *drawn = malloc((n ? n : 1) * sizeof *drawn);
    long ret = -1;
    if (!point || !first || !drawn)
        goto out;
    for (size_t i = 0; i < n; i++) {
        size_t p = 0;
        while (p < npoints && !same_point(cfg, exh, &m->execs[first[p]], &m->execs[i]))
            p++;
        if (p == npoints)
            first[npoints++] = i;
        point[i] = p;
    }
    size_t want = cfg->random.n_samples > 0 ? (size_t)cfg->random.n_samples
                                            : (size_t)(cfg->random.percentage * (double)npoints);
    if (want == 0)
        want = 1;
    if (want >= npoints) {
        pd_str_printf(warnings, "%s:%d: benchmark.random_config: %zu samples of %zu search points: running all of "
                                "them%s\n",
                      cfg->path, cfg->random.line, want, npoints,
                      cfg->random.fallback_to_exhaustive ? " (fallback_to_exhaustive)" : "");
        for (size_t i = 0; i < n; i++)
            picked[i] = i;
        ret = (long)n;
        goto out;
    }
    if (pd_pyrandom_sample(rng, npoints, want, drawn) != 0)
        goto out;
    /* keep the drawn points' executions, in number order */
    bool *keep = calloc(npoints, sizeof *keep);
    if (!keep)
        goto out;
    for (size_t d = 0; d < want; d++)
        keep[drawn[d]] = true;
    size_t kept = 0;
    for (size_t i = 0; i < n; i++) {
        if (!keep[point[i]]) {
            pd_vals_free(m->execs[i].values, m->nvars);
            continue;
        }
        point[kept] = point[i];
        m->execs[kept++] = m->execs[i];
    }
    free(keep);
    m->nexecs = kept;
    size_t np = 0;
    for (size_t d = 0; d < want; d++)
        for (size_t i = 0; i < kept; i++)
            if (point[i] == drawn[d])
                picked[np++] = i;
    ret = (long)np;
out:
    free(point);
    free(first);
    free(drawn);
    return ret;
}

/* search_method random: IOPS's random.sample(executions, k) over the
 * numbered executions (every script of a combination counts), k = n_samples
 * or max(1, int(n * percentage)); the executions keep their numbers. Drops
 * the others from m (keeping number order) and fills picked with the kept
 * ones' new indices in the order sample() returned them. Returns how many
 * were picked, or -1 when out of memory. */
static long sample_execs(const pd_bench_config *cfg, pd_pyrandom *rng, pd_bench_matrix *m, size_t *picked,
                         pd_str *warnings)
{
    size_t n = m->nexecs;
    size_t want = cfg->random.n_samples > 0 ? (size_t)cfg->random.n_samples
                                            : (size_t)(cfg->random.percentage * (double)n);
    if (want == 0)
        want = 1;
    if (want >= n) {
        pd_str_printf(warnings, "%s:%d: benchmark.random_config: %zu samples of %zu executions: running all of them%s\n",
                      cfg->path, cfg->random.line, want, n,
                      cfg->random.fallback_to_exhaustive ? " (fallback_to_exhaustive)" : "");
        for (size_t i = 0; i < n; i++)
            picked[i] = i;
        return (long)n;
    }
    size_t *newpos = malloc(n * sizeof *newpos);
    if (!newpos || pd_pyrandom_sample(rng, n, want, picked) != 0) {
        free(newpos);
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        newpos[i] = SIZE_MAX;
    for (size_t i = 0; i < want; i++)
        newpos[picked[i]] = 0;
    size_t kept = 0;
    for (size_t i = 0; i < n; i++) {
        if (newpos[i] == SIZE_MAX) {
            pd_vals_free(m->execs[i].values, m->nvars);
            continue;
        }
        newpos[i] = kept;
        m->execs[kept++] = m->execs[i];
    }
    m->nexecs = kept;
    for (size_t i = 0; i < want; i++)
        picked[i] = newpos[picked[i]];
    free(newpos);
    return (long)want;
}

/* The order IOPS runs the repetitions in, from the same random.Random(seed)
 * that drew the sample: the executions shuffled (random.sample(matrix,
 * len(matrix))), then each next run is random.choice() of the shuffled
 * positions with repetitions left, which runs its next repetition. */
static int plan_order(const pd_bench_config *cfg, pd_pyrandom *rng, pd_bench_matrix *m, const size_t *picked)
{
    size_t n = m->nexecs, reps = cfg->repetitions > 0 ? (size_t)cfg->repetitions : 1;
    size_t *perm = malloc((n ? n : 1) * sizeof *perm), *active = malloc((n ? n : 1) * sizeof *active);
    int *done = calloc(n ? n : 1, sizeof *done);
    m->order = calloc(n > 0 ? n * reps : 1, sizeof *m->order);
    int rc = -1;
    if (!perm || !active || !done || !m->order || (n && pd_pyrandom_sample(rng, n, n, perm) != 0))
        goto out;
    for (size_t i = 0; i < n; i++)
        active[i] = i;
    size_t nactive = n;
    while (nactive > 0) {
        size_t a = (size_t)pd_pyrandom_below(rng, nactive), pos = active[a];
        int rep = ++done[pos];
        m->order[m->norder++] = (pd_bench_attempt){.exec = picked[perm[pos]], .repetition = rep};
        if ((size_t)rep >= reps) {
            memmove(&active[a], &active[a + 1], (nactive - a - 1) * sizeof *active);
            nactive--;
        }
    }
    rc = 0;
out:
    free(perm);
    free(active);
    free(done);
    return rc;
}

int pd_bench_matrix_build(const pd_bench_config *cfg, const char *run_dir, pd_bench_matrix *m, pd_str *errors,
                          pd_str *warnings)
{
    *m = (pd_bench_matrix){.nvars = cfg->nvars};
    size_t total = 1, nscripts = pd_bench_nscripts(cfg);
    bool conditional = false;
    for (size_t i = 0; i < cfg->nvars; i++) {
        conditional = conditional || cfg->vars[i].when.text;
        if (!cfg->vars[i].expr.text) {
            total *= cfg->vars[i].nvalues;
            if (total * nscripts > MAX_EXECUTIONS) {
                pd_str_printf(errors, "%s:%d: vars: the sweep has more than %d combinations\n", cfg->path,
                              cfg->vars[i].line, MAX_EXECUTIONS);
                return -1;
            }
        }
    }
    bool *exh = calloc(cfg->nvars ? cfg->nvars : 1, sizeof *exh);
    if (!exh) {
        pd_str_append(errors, "out of memory building the execution matrix\n");
        return -1;
    }
    long nexh = exhaustive_flags(cfg, exh, errors);
    if (nexh < 0) {
        free(exh);
        return -1;
    }
    combo_list combos = {0};
    int rc = 0;
    if (conditional) {
        rc = expand_conditional(cfg, run_dir, &combos, errors);
        if (rc == 0)
            combos.n = dedupe(cfg, combos.items, combos.n);
    } else { /* itertools.product in config order: the last variable varies fastest (exhaustive_vars
              * after all the others) */
        size_t *idx = calloc(cfg->nvars ? cfg->nvars : 1, sizeof *idx);
        size_t *ord = calloc(cfg->nvars ? cfg->nvars : 1, sizeof *ord), nord = 0;
        for (int pass = 0; ord && pass < 2; pass++)
            for (size_t i = 0; i < cfg->nvars; i++)
                if (exh[i] == (pass == 1))
                    ord[nord++] = i;
        combos.items = calloc(total ? total : 1, sizeof *combos.items);
        rc = idx && ord && combos.items ? 0 : -1;
        for (size_t k = 0; k < total && rc == 0; k++) {
            pd_val *values = calloc(cfg->nvars ? cfg->nvars : 1, sizeof *values);
            if (!values) {
                rc = -1;
                break;
            }
            for (size_t i = 0; i < cfg->nvars; i++)
                values[i] = cfg->vars[i].expr.text ? pd_val_none() : pd_val_copy(&cfg->vars[i].values[idx[i]]);
            combos.items[combos.n++] = values;
            for (size_t o = nord; o-- > 0;) {
                size_t i = ord[o];
                if (cfg->vars[i].expr.text)
                    continue;
                if (++idx[i] < cfg->vars[i].nvalues)
                    break;
                idx[i] = 0;
            }
        }
        free(idx);
        free(ord);
        if (rc)
            pd_str_append(errors, "out of memory building the execution matrix\n");
    }
    m->execs = calloc(combos.n > 0 ? combos.n * nscripts : 1, sizeof *m->execs);
    if (rc == 0 && !m->execs) {
        pd_str_append(errors, "out of memory building the execution matrix\n");
        rc = -1;
    }
    int id = 0;
    for (size_t k = 0; k < combos.n && rc == 0; k++) {
        int early = check_constraints(cfg, run_dir, 0, false, false, combos.items[k], errors, warnings);
        if (early < 0)
            rc = -1;
        for (size_t sc = 0; sc < nscripts && early > 0 && rc == 0; sc++) {
            pd_val *values = calloc(cfg->nvars ? cfg->nvars : 1, sizeof *values);
            if (!values) {
                rc = -1;
                break;
            }
            for (size_t i = 0; i < cfg->nvars; i++)
                values[i] = pd_val_copy(&combos.items[k][i]);
            id++;
            int keep = derive(cfg, run_dir, id, 1, values, errors) != 0
                           ? -1
                           : check_constraints(cfg, run_dir, id, true, false, values, errors, warnings);
            if (keep < 0)
                rc = -1;
            if (keep > 0) {
                m->execs[m->nexecs].id = id;
                m->execs[m->nexecs].values = values;
                m->execs[m->nexecs].script = sc;
                m->nexecs++;
            } else {
                pd_vals_free(values, cfg->nvars);
            }
        }
    }
    for (size_t k = 0; k < combos.n; k++)
        pd_vals_free(combos.items[k], cfg->nvars);
    free(combos.items);
    if (rc == 0 && m->nexecs == 0) {
        pd_str_printf(errors, "%s: constraints: every combination was filtered out; nothing to run\n", cfg->path);
        rc = -1;
    }
    if (rc == 0) {
        pd_pyrandom rng;
        pd_pyrandom_seed(&rng, cfg->random.seed);
        size_t *picked = malloc(m->nexecs * sizeof *picked);
        long npicked = -1;
        if (picked && cfg->search == PD_SEARCH_RANDOM && nexh > 0) {
            npicked = sample_points(cfg, exh, &rng, m, picked, warnings);
        } else if (picked && cfg->search == PD_SEARCH_RANDOM) {
            npicked = sample_execs(cfg, &rng, m, picked, warnings);
        } else if (picked) {
            for (size_t i = 0; i < m->nexecs; i++)
                picked[i] = i;
            npicked = (long)m->nexecs;
        }
        if (npicked < 0 || plan_order(cfg, &rng, m, picked) != 0) {
            pd_str_append(errors, "out of memory building the execution matrix\n");
            rc = -1;
        }
        free(picked);
    }
    free(exh);
    if (rc == 0 && !(m->var_order = calloc(cfg->nvars ? cfg->nvars : 1, sizeof *m->var_order))) {
        pd_str_append(errors, "out of memory building the execution matrix\n");
        rc = -1;
    }
    if (rc == 0) {
        long nswept = conditional ? when_order(cfg, m->var_order) : -1;
        size_t k = nswept > 0 ? (size_t)nswept : 0;
        for (size_t i = 0; i < cfg->nvars; i++) /* the derived ones after (or every one, in config order) */
            if (nswept < 0 || cfg->vars[i].expr.text)
                m->var_order[k++] = i;
    }
    if (rc)
        pd_bench_matrix_free(m);
    return rc;
}

int pd_bench_probe_values(const pd_bench_config *cfg, const char *run_dir, int id, pd_val *values, pd_str *errors,
                          pd_str *warnings)
{
    int keep = check_constraints(cfg, run_dir, id, false, true, values, errors, warnings);
    if (keep > 0)
        keep = derive(cfg, run_dir, id, 1, values, errors) != 0
                   ? -1
                   : check_constraints(cfg, run_dir, id, true, true, values, errors, warnings);
    return keep;
}

void pd_bench_matrix_free(pd_bench_matrix *m)
{
    for (size_t i = 0; i < m->nexecs; i++)
        pd_vals_free(m->execs[i].values, m->nvars);
    free(m->execs);
    free(m->order);
    free(m->var_order);
    *m = (pd_bench_matrix){0};
}

char *pd_bench_insert_block(const char *script, const char *block)
{
    pd_str out = {0};
    const char *p = script;
    if (strncmp(p, "#!", 2) != 0) {
        pd_str_append(&out, "#!/bin/bash\n");
    } else {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) + 1 : strlen(p);
        pd_str_appendn(&out, p, n);
        if (!nl)
            pd_str_append(&out, "\n");
        p += n;
    }
    /* sbatch reads #SBATCH lines up to the first command: keep that header
     * (with comments and blank lines in it) above the block. */
    const char *insert = p;
    for (const char *q = p; *q;) {
        const char *nl = strchr(q, '\n');
        size_t n = nl ? (size_t)(nl - q) + 1 : strlen(q);
        const char *t = q;
        while (*t == ' ' || *t == '\t')
            t++;
        if (!strncmp(t, "#SBATCH", 7))
            insert = q + n;
        else if (*t != '#' && *t != '\n' && *t != '\r' && *t)
            break;
        q += n;
    }
    pd_str_appendn(&out, p, (size_t)(insert - p));
    if (insert > p && insert[-1] != '\n')
        pd_str_append(&out, "\n");
    pd_str_append(&out, block);
    pd_str_append(&out, insert);
    return pd_str_take(&out);
}

int pd_bench_render(const pd_bench_config *cfg, const char *run_dir, const pd_bench_exec *ex, int repetition,
                    const char *probe_bin, pd_bench_rendered *out, pd_str *errors)
{
    *out = (pd_bench_rendered){0};
    out->values = calloc(cfg->nvars ? cfg->nvars : 1, sizeof *out->values);
    if (!out->values)
        return -1;
    for (size_t i = 0; i < cfg->nvars; i++)
        out->values[i] = cfg->vars[i].expr.text ? pd_val_none() : pd_val_copy(&ex->values[i]);
    if (derive(cfg, run_dir, ex->id, repetition, out->values, errors))
        goto fail;
    const pd_bench_script *script = pd_bench_script_at(cfg, ex->script);
    scope s;
    scope_init(&s, cfg, run_dir, ex->id, repetition, out->values, cfg->nvars);
    char **env = calloc(cfg->nenv + 1, sizeof *env);
    out->input_paths = calloc(script->ninputs + 1, sizeof *out->input_paths);
    out->input_texts = calloc(script->ninputs + 1, sizeof *out->input_texts);
    out->input_modes = calloc(script->ninputs + 1, sizeof *out->input_modes);
    if (!env || !out->input_paths || !out->input_texts || !out->input_modes) {
        free(env);
        goto fail;
    }
    bool env_ok = true;
    for (size_t i = 0; i < cfg->nenv && env_ok; i++)
        env_ok = (env[i] = render(cfg, &cfg->env[i], &s, errors)) != NULL;
    s.env = env;
    s.script = script;
    s.input_paths = out->input_paths;
    for (size_t i = 0; i < script->ninputs && env_ok; i++) { /* paths first: templates may name any of them */
        char *p = render(cfg, &script->inputs[i].path, &s, errors);
        if (!(env_ok = p != NULL))
            break;
        pd_trim(p);
        if (p[0] != '/') { /* relative to where the script runs */
            pd_str abs = {0};
            pd_str_printf(&abs, "%s/%s", s.rep_dir, p);
            free(p);
            p = pd_str_take(&abs);
        }
        out->input_paths[i] = p;
        out->input_modes[i] = script->inputs[i].mode;
        s.ninputs = ++out->ninputs;
    }
    char *body = NULL;
    if (env_ok && (out->command = render(cfg, &cfg->command, &s, errors)) != NULL) {
        s.command = pd_trim(out->command);
        body = render(cfg, &script->script_template, &s, errors);
    }
    for (size_t i = 0; body && i < out->ninputs; i++)
        if (!(out->input_texts[i] = render(cfg, &script->inputs[i].template, &s, errors))) {
            free(body);
            body = NULL;
        }
    if (body && script->post.text && !(out->post = render(cfg, &script->post, &s, errors))) {
        free(body);
        body = NULL;
    }
    if (body) { /* what IOPS hands a parser_script as globals */
        pd_str c = {0};
        pd_str_append(&c, "{\"vars\": {");
        for (size_t i = 0; i < cfg->nvars; i++) {
            pd_val k = pd_val_str(cfg->vars[i].name);
            pd_str_append(&c, i ? ", " : "");
            pd_val_append_json(&c, &k);
            pd_str_append(&c, ": ");
            pd_val_append_json(&c, &out->values[i]);
            pd_val_free(&k);
        }
        pd_str_append(&c, "}, \"env\": {");
        for (size_t i = 0; i < cfg->nenv; i++) {
            pd_val k = pd_val_str(cfg->env_names[i]), v = pd_val_str(env[i]);
            pd_str_append(&c, i ? ", " : "");
            pd_val_append_json(&c, &k);
            pd_str_append(&c, ": ");
            pd_val_append_json(&c, &v);
            pd_val_free(&k);
            pd_val_free(&v);
        }
        pd_str ld = {0};
        pd_str_printf(&ld, "%s/logs", run_dir);
        pd_val ed = pd_val_str(s.rep_dir), wd = pd_val_str(run_dir), lg = pd_val_str(ld.data);
        pd_str_printf(&c, "}, \"execution_id\": \"%d\", \"repetition\": %d, \"repetitions\": %d, \"execution_dir\": ",
                      ex->id, repetition, cfg->repetitions);
        pd_val_append_json(&c, &ed);
        pd_str_append(&c, ", \"workdir\": ");
        pd_val_append_json(&c, &wd);
        pd_str_append(&c, ", \"log_dir\": ");
        pd_val_append_json(&c, &lg);
        pd_str_append(&c, "}");
        pd_val_free(&ed);
        pd_val_free(&wd);
        pd_val_free(&lg);
        pd_str_free(&ld);
        out->parser_context = pd_str_take(&c);
    }
    for (size_t i = 0; i < cfg->nenv; i++)
        free(env[i]);
    free(env);
    s.env = NULL;
    if (!body)
        goto fail;
    pd_str block = {0};
    char **paths = NULL;
    size_t npaths = 0;
    int rc = 0;
    if (cfg->probes.cpu || cfg->probes.gpu || cfg->probes.io) {
        paths = calloc(cfg->probes.n_io_paths + 1, sizeof *paths);
        for (size_t i = 0; paths && i < cfg->probes.n_io_paths; i++) {
            if (!(paths[i] = render(cfg, &cfg->probes.io_paths[i], &s, errors))) {
                rc = -1;
                break;
            }
            pd_trim(paths[i]);
            npaths++;
        }
        if (rc == 0) {
            pd_probe_inject_cfg pc = {.cpu = cfg->probes.cpu, .gpu = cfg->probes.gpu, .io = cfg->probes.io,
                                      .interval_s = cfg->probes.interval_s, .probe_bin = probe_bin,
                                      .dir = s.rep_dir, .io_paths = (const char *const *)paths,
                                      .n_io_paths = npaths};
            char err[512] = "";
            if (pd_probe_injection(&block, &pc, err, sizeof err) != 0) {
                pd_str_printf(errors, "%s:%d: benchmark.probes: %s\n", cfg->path, cfg->probes.line,
                              err[0] ? err : "probe injection failed");
                rc = -1;
            }
        }
    }
    if (rc == 0) {
        out->script = pd_bench_insert_block(body, block.data ? block.data : "");
        if (!out->script)
            rc = -1;
    }
    for (size_t i = 0; i < npaths; i++)
        free(paths[i]);
    free(paths);
    pd_str_free(&block);
    free(body);
    if (rc)
        goto fail;
    if (script->has_parser) {
        char *f = render(cfg, &script->parser_file, &s, errors);
        if (!f)
            goto fail;
        pd_trim(f);
        if (f[0] != '/') { /* relative to where the script ran */
            pd_str abs = {0};
            pd_str_printf(&abs, "%s/%s", s.rep_dir, f);
            free(f);
            f = pd_str_take(&abs);
        }
        out->parser_file = f;
    }
    return 0;
fail:
    pd_bench_rendered_free(out, cfg->nvars);
    return -1;
}

void pd_bench_rendered_free(pd_bench_rendered *r, size_t nvars)
{
    pd_vals_free(r->values, nvars);
    free(r->command);
    free(r->script);
    free(r->parser_file);
    free(r->post);
    for (size_t i = 0; i < r->ninputs; i++) {
        free(r->input_paths[i]);
        free(r->input_texts[i]);
    }
    free(r->input_paths);
    free(r->input_texts);
    free(r->input_modes);
    free(r->parser_context);
    *r = (pd_bench_rendered){0};
}

char *pd_bench_sink_path(const pd_bench_config *cfg, const char *run_dir, pd_str *errors)
{
    if (!cfg->sink_path.text)
        return NULL;
    scope s;
    scope_init(&s, cfg, run_dir, 0, 0, NULL, 0);
    char *p = render(cfg, &cfg->sink_path, &s, errors);
    if (p)
        pd_trim(p);
    return p;
}
