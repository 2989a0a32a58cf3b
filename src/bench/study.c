/* Execution matrix and template rendering (see study.h). */
#include "bench/study.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
} scope;

static bool lookup(void *ud, const char *name, pd_val *out)
{
    scope *s = ud;
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
    }
    if (s->command && !strcmp(name, "command.template")) {
        *out = pd_val_str(s->command);
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
        pd_str_append(errors, " execution_id repetition execution_dir");
    pd_str_append(errors, " repetitions workdir os_env.NAME");
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

static void free_values(pd_val *values, size_t n)
{
    if (!values)
        return;
    for (size_t i = 0; i < n; i++)
        pd_val_free(&values[i]);
    free(values);
}

static void describe(pd_str *out, const pd_bench_config *cfg, const pd_val *values)
{
    for (size_t i = 0; i < cfg->nvars; i++) {
        pd_str_printf(out, "%s%s=", i ? ", " : "", cfg->vars[i].name);
        pd_val_append(out, &values[i]);
    }
}

int pd_bench_matrix_build(const pd_bench_config *cfg, const char *run_dir, pd_bench_matrix *m, pd_str *errors,
                          pd_str *warnings)
{
    *m = (pd_bench_matrix){.nvars = cfg->nvars};
    size_t total = 1;
    for (size_t i = 0; i < cfg->nvars; i++)
        if (!cfg->vars[i].expr.text) {
            total *= cfg->vars[i].nvalues;
            if (total > MAX_EXECUTIONS) {
                pd_str_printf(errors, "%s:%d: vars: the sweep has more than %d combinations\n", cfg->path,
                              cfg->vars[i].line, MAX_EXECUTIONS);
                return -1;
            }
        }
    size_t *idx = calloc(cfg->nvars ? cfg->nvars : 1, sizeof *idx);
    m->execs = calloc(total ? total : 1, sizeof *m->execs);
    if (!idx || !m->execs) {
        free(idx);
        pd_str_append(errors, "out of memory building the execution matrix\n");
        return -1;
    }
    int rc = 0;
    for (size_t k = 0; k < total && rc == 0; k++) {
        pd_val *values = calloc(cfg->nvars ? cfg->nvars : 1, sizeof *values);
        if (!values) {
            rc = -1;
            break;
        }
        for (size_t i = 0; i < cfg->nvars; i++)
            values[i] = cfg->vars[i].expr.text ? pd_val_none() : pd_val_copy(&cfg->vars[i].values[idx[i]]);
        int id = (int)m->nexecs + 1;
        bool keep = true;
        if (derive(cfg, run_dir, id, 1, values, errors) != 0) {
            rc = -1;
            keep = false;
        }
        for (size_t c = 0; c < cfg->nconstraints && keep; c++) {
            const pd_bench_constraint *con = &cfg->constraints[c];
            scope s;
            scope_init(&s, cfg, run_dir, id, 1, values, cfg->nvars);
            pd_val r;
            if (evaluate(cfg, &con->rule, &s, false, &r, errors)) {
                rc = -1;
                keep = false;
                break;
            }
            bool ok = r.kind == PD_VAL_STR ? (!strcmp(pd_trim(r.s), "True") || !strcmp(r.s, "true") || !strcmp(r.s, "1"))
                                           : pd_val_truthy(&r);
            pd_val_free(&r);
            if (ok)
                continue;
            pd_str d = {0};
            describe(&d, cfg, values);
            if (con->policy == PD_POLICY_ERROR) {
                pd_str_printf(errors, "%s:%d: %s: constraint '%s' violated by %s\n", cfg->path, con->rule.line,
                              con->rule.key, con->name, d.data ? d.data : "");
                rc = -1;
                keep = false;
            } else if (con->policy == PD_POLICY_WARN) {
                pd_str_printf(warnings, "%s:%d: %s: constraint '%s' violated by %s (kept: violation_policy warn)\n",
                              cfg->path, con->rule.line, con->rule.key, con->name, d.data ? d.data : "");
            } else {
                keep = false;
            }
            pd_str_free(&d);
        }
        if (keep) {
            m->execs[m->nexecs].id = id;
            m->execs[m->nexecs].values = values;
            m->nexecs++;
        } else {
            free_values(values, cfg->nvars);
        }
        /* odometer: last variable varies fastest */
        for (size_t i = cfg->nvars; i-- > 0;) {
            if (cfg->vars[i].expr.text)
                continue;
            if (++idx[i] < cfg->vars[i].nvalues)
                break;
            idx[i] = 0;
        }
    }
    free(idx);
    if (rc == 0 && m->nexecs == 0) {
        pd_str_printf(errors, "%s: constraints: every combination was filtered out; nothing to run\n", cfg->path);
        rc = -1;
    }
    if (rc)
        pd_bench_matrix_free(m);
    return rc;
}

void pd_bench_matrix_free(pd_bench_matrix *m)
{
    for (size_t i = 0; i < m->nexecs; i++)
        free_values(m->execs[i].values, m->nvars);
    free(m->execs);
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
    scope s;
    scope_init(&s, cfg, run_dir, ex->id, repetition, out->values, cfg->nvars);
    if (!(out->command = render(cfg, &cfg->command, &s, errors)))
        goto fail;
    s.command = pd_trim(out->command);
    char *body = render(cfg, &cfg->script.script_template, &s, errors);
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
    if (cfg->script.has_parser) {
        char *f = render(cfg, &cfg->script.parser_file, &s, errors);
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
    free_values(r->values, nvars);
    free(r->command);
    free(r->script);
    free(r->parser_file);
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
