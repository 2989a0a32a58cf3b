/* The adaptive probes (adaptive_plan.h), after IOPS 3.5.8's AdaptivePlanner
 * (iops/execution/planner.py) and the runner's stop_when check. */
#include "bench/adaptive_plan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/iops_meta.h"

int pd_adapt_init(pd_adapt_plan *p, const pd_bench_var *var, size_t nprobes, int repetitions)
{
    *p = (pd_adapt_plan){.var = var, .nprobes = nprobes, .repetitions = repetitions < 1 ? 1 : repetitions};
    p->probes = calloc(nprobes ? nprobes : 1, sizeof *p->probes);
    if (!p->probes)
        return -1;
    for (size_t i = 0; i < nprobes; i++) {
        p->probes[i] = (pd_adapt_probe){.current = pd_val_copy(&var->adaptive.initial), .found = pd_val_none(),
                                        .failed = pd_val_none()};
    }
    return 0;
}

void pd_adapt_free(pd_adapt_plan *p)
{
    for (size_t i = 0; p->probes && i < p->nprobes; i++) {
        pd_val_free(&p->probes[i].current);
        pd_val_free(&p->probes[i].found);
        pd_val_free(&p->probes[i].failed);
    }
    free(p->probes);
    *p = (pd_adapt_plan){0};
}

bool pd_adapt_finished(const pd_adapt_plan *p, size_t i)
{
    return p->probes[i].stop != PD_ADAPT_IN_PROGRESS;
}

long pd_adapt_iterations(const pd_adapt_plan *p, size_t i)
{
    return p->probes[i].iteration + (pd_adapt_finished(p, i) ? 1 : 0);
}

const char *pd_adapt_stop_name(pd_adapt_stop s)
{
    static const char *names[] = {"in_progress", "condition_met", "max_iterations", "constraint_violation",
                                  "step_error"};
    return names[s];
}

long pd_adapt_next(pd_adapt_plan *p, int *rep)
{
    for (size_t k = 0; k < p->nprobes; k++) {
        size_t i = (p->cursor + k) % p->nprobes;
        pd_adapt_probe *pr = &p->probes[i];
        if (pr->stop != PD_ADAPT_IN_PROGRESS || pr->emitted >= p->repetitions)
            continue;
        if (pr->emitted == 0)
            pr->triggered = false;
        *rep = ++pr->emitted;
        p->cursor = (i + 1) % p->nprobes;
        return (long)i;
    }
    return -1;
}

void pd_adapt_violation(pd_adapt_plan *p, size_t i)
{
    p->probes[i].stop = PD_ADAPT_CONSTRAINT_VIOLATION;
    p->probes[i].emitted = p->probes[i].completed = 0;
}

/* What stop_when and step_expr see: the metrics by name, overlaid by the
 * runner's names (a metric called status loses to the status). */
typedef struct {
    const pd_adapt_result *r;
    const pd_adapt_probe *probe;
} scope;

static pd_val metrics_dict(const pd_adapt_result *r)
{
    pd_val d = {.kind = PD_VAL_DICT};
    d.items = calloc(r->nmetrics ? r->nmetrics : 1, sizeof *d.items);
    if (!d.items)
        return pd_val_none();
    for (size_t k = 0; k < r->nmetrics; k++) {
        pd_val *pair = &d.items[d.n++];
        pair->kind = PD_VAL_LIST;
        pair->items = calloc(2, sizeof *pair->items);
        if (!pair->items)
            continue;
        pair->n = 2;
        pair->items[0] = pd_val_str(r->metric_names[k]);
        pair->items[1] = pd_val_copy(&r->metric_values[k]);
    }
    return d;
}

static bool scope_lookup(void *ud, const char *name, pd_val *out)
{
    const scope *s = ud;
    if (!strcmp(name, "previous"))
        return *out = pd_val_copy(&s->probe->current), true;
    if (!strcmp(name, "iteration"))
        return *out = pd_val_int(s->probe->iteration), true;
    if (!s->r)
        return false;
    if (!strcmp(name, "exit_code"))
        return *out = s->r->no_exit_code ? pd_val_none() : pd_val_int(s->r->exit_code), true;
    if (!strcmp(name, "status"))
        return *out = s->r->status ? pd_val_str(s->r->status) : pd_val_none(), true;
    if (!strcmp(name, "execution_time"))
        return *out = s->r->execution_time < 0 ? pd_val_none() : pd_val_float(s->r->execution_time), true;
    if (!strcmp(name, "metrics"))
        return *out = metrics_dict(s->r), true;
    const char *m = !strncmp(name, "metrics.", 8) ? name + 8 : name;
    for (size_t k = 0; k < s->r->nmetrics; k++)
        if (!strcmp(m, s->r->metric_names[k]))
            return *out = pd_val_copy(&s->r->metric_values[k]), true;
    return false;
}

/* stop_when is a Jinja-like expression; "{{ ... }}" is rendered first (as
 * IOPS renders the template before evaluating it). Errors count as met. */
static bool stop_when_met(const pd_bench_adaptive *ad, scope *s)
{
    const char *src = ad->stop_when.text;
    pd_str rendered = {0};
    char err[256];
    int line;
    if (pd_template_has_tags(src)) {
        if (pd_template_render(src, scope_lookup, s, &rendered, err, sizeof err, &line) != 0) {
            pd_str_free(&rendered);
            return true;
        }
        src = rendered.data ? rendered.data : "";
    }
    pd_val v;
    bool met = pd_expr_eval(src, scope_lookup, s, &v, err, sizeof err) != 0;
    if (!met) {
        met = pd_val_truthy(&v);
        pd_val_free(&v);
    }
    pd_str_free(&rendered);
    return met;
}

/* The value after the probe's current one, cast to the variable's type. */
static int step(const pd_bench_var *var, pd_adapt_probe *pr, pd_val *out, char *err, size_t errlen)
{
    const pd_bench_adaptive *ad = &var->adaptive;
    const pd_val *cur = &pr->current;
    double x = cur->kind == PD_VAL_INT ? (double)cur->i : cur->f;
    pd_val raw;
    if (ad->has_factor || ad->has_increment) {
        if (cur->kind == PD_VAL_INT && ad->has_increment && ad->increment == (double)(long long)ad->increment)
            raw = pd_val_int(cur->i + (long long)ad->increment); /* int + int stays exact */
        else if (var->type == PD_VT_INT) /* Python's int(): toward zero */
            raw = pd_val_int((long long)(ad->has_factor ? x * ad->factor : x + ad->increment));
        else
            raw = pd_val_float(ad->has_factor ? x * ad->factor : x + ad->increment);
    } else {
        scope s = {.probe = pr};
        pd_str text = {0};
        int line;
        if (pd_template_has_tags(ad->step_expr.text)) {
            if (pd_template_render(ad->step_expr.text, scope_lookup, &s, &text, err, errlen, &line) != 0) {
                pd_str_free(&text);
                return -1;
            }
            raw = pd_val_str(text.data ? pd_trim(text.data) : "");
        } else if (pd_expr_eval(ad->step_expr.text, scope_lookup, &s, &raw, err, errlen) != 0) {
            return -1;
        }
        pd_str_free(&text);
    }
    int rc = pd_val_cast(&raw, var->type, out, err, errlen);
    pd_val_free(&raw);
    return rc;
}

int pd_adapt_report(pd_adapt_plan *p, size_t i, const pd_adapt_result *r, char *err, size_t errlen)
{
    pd_adapt_probe *pr = &p->probes[i];
    if (pr->stop != PD_ADAPT_IN_PROGRESS || pr->completed >= pr->emitted)
        return 0;
    scope s = {.r = r, .probe = pr};
    if (stop_when_met(&p->var->adaptive, &s))
        pr->triggered = true;
    if (++pr->completed < p->repetitions)
        return 0;
    pr->emitted = pr->completed = 0;
    if (pr->triggered) {
        pd_val_free(&pr->failed);
        pr->failed = pd_val_copy(&pr->current);
        pr->stop = PD_ADAPT_CONDITION_MET;
        return 0;
    }
    pd_val_free(&pr->found);
    pr->found = pd_val_copy(&pr->current);
    pr->iteration++;
    long max = p->var->adaptive.max_iterations;
    if (max > 0 && pr->iteration >= max) {
        pr->stop = PD_ADAPT_MAX_ITERATIONS;
        return 0;
    }
    pd_val next;
    if (step(p->var, pr, &next, err, errlen) != 0) {
        pr->stop = PD_ADAPT_STEP_ERROR;
        return -1;
    }
    pd_val_free(&pr->current);
    pr->current = next;
    return 0;
}

/* ------------------------------------------------ driven by run.c */

int pd_bench_adapt_init(pd_bench_adapt *a, const pd_bench_config *cfg, pd_bench_matrix *m)
{
    *a = (pd_bench_adapt){.next_id = 1};
    while (a->var < cfg->nvars && !cfg->vars[a->var].adaptive.set)
        a->var++;
    size_t n = 0;
    a->bases = calloc(m->nexecs ? m->nexecs : 1, sizeof *a->bases);
    if (!a->bases || a->var == cfg->nvars)
        return -1;
    for (size_t e = 0; e < m->nexecs; e++) {
        if (m->execs[e].script == 0) {
            a->bases[n++] = m->execs[e].values; /* taken */
            m->execs[e].values = NULL;
        }
        pd_vals_free(m->execs[e].values, m->nvars);
    }
    free(m->execs);
    free(m->order);
    m->execs = NULL;
    m->order = NULL;
    m->nexecs = m->norder = 0;
    a->exec_of = calloc(n ? n : 1, sizeof *a->exec_of);
    if (!a->exec_of || pd_adapt_init(&a->plan, &cfg->vars[a->var], n, cfg->repetitions) != 0)
        return -1;
    long max = cfg->vars[a->var].adaptive.max_iterations;
    a->estimate = n * (size_t)(max > 0 ? max : 20) * (size_t)a->plan.repetitions;
    return 0;
}

/* IOPS's _update_progress_estimate, run when a probe finishes on a result:
 * a finished probe's repetitions, and for the others those done plus
 * max_iterations' worth (10 more values without one). */
static void update_estimate(pd_bench_adapt *a)
{
    long max = a->plan.var->adaptive.max_iterations;
    size_t total = 0, reps = (size_t)a->plan.repetitions;
    for (size_t p = 0; p < a->plan.nprobes; p++) {
        const pd_adapt_probe *pr = &a->plan.probes[p];
        if (pd_adapt_finished(&a->plan, p))
            total += (size_t)(pr->iteration + 1) * reps;
        else
            total += (size_t)pr->iteration * reps + (size_t)(max > 0 ? max - pr->iteration : 10) * reps;
    }
    a->estimate = total;
}

/* Room for one more of each (doubling). */
static int grow(void **arr, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return 0;
    size_t n = *cap ? *cap * 2 : 16;
    while (n < need)
        n *= 2;
    void *p = realloc(*arr, n * size);
    if (!p)
        return -1;
    *arr = p;
    *cap = n;
    return 0;
}

long pd_bench_adapt_next(pd_bench_adapt *a, const pd_bench_config *cfg, const char *run_dir, pd_bench_matrix *m,
                         size_t want, pd_str *errors, pd_str *warnings)
{
    long added = 0;
    while ((size_t)added < want) {
        int rep;
        long i = pd_adapt_next(&a->plan, &rep);
        if (i < 0)
            break;
        if (rep == 1) { /* a new value: its execution */
            int id = a->next_id++;
            pd_val *values = calloc(cfg->nvars ? cfg->nvars : 1, sizeof *values);
            size_t cap = a->cap_execs;
            if (!values || grow((void **)&m->execs, &a->cap_execs, m->nexecs + 1, sizeof *m->execs) != 0 ||
                grow((void **)&a->probe_of, &cap, m->nexecs + 1, sizeof *a->probe_of) != 0) {
                free(values);
                pd_str_append(errors, "out of memory planning the adaptive probes\n");
                return -1;
            }
            for (size_t k = 0; k < cfg->nvars; k++)
                values[k] = k == a->var ? pd_val_copy(&a->plan.probes[i].current) : pd_val_copy(&a->bases[i][k]);
            int keep = pd_bench_probe_values(cfg, run_dir, id, values, errors, warnings);
            if (keep <= 0) {
                pd_vals_free(values, cfg->nvars);
                if (keep < 0)
                    return -1;
                pd_adapt_violation(&a->plan, (size_t)i); /* IOPS: stop_reason constraint_violation */
                continue;
            }
            m->execs[m->nexecs] = (pd_bench_exec){.id = id, .values = values, .script = 0};
            a->index_total = a->estimate; /* IOPS writes its index when a value's first repetition is handed out */
            a->probe_of[m->nexecs] = (size_t)i;
            a->exec_of[i] = m->nexecs++;
        }
        if (grow((void **)&m->order, &a->cap_order, m->norder + 1, sizeof *m->order) != 0) {
            pd_str_append(errors, "out of memory planning the adaptive probes\n");
            return -1;
        }
        m->order[m->norder++] = (pd_bench_attempt){.exec = a->exec_of[i], .repetition = rep};
        added++;
    }
    return added;
}

/* A metric's text as stop_when sees it: the number or string IOPS's parser
 * would have returned. */
static pd_val metric_val(const char *text)
{
    json_t *j = text ? pd_iops_metric_json(text) : NULL;
    pd_val v = json_is_integer(j)  ? pd_val_int(json_integer_value(j))
               : json_is_real(j)   ? pd_val_float(json_real_value(j))
               : json_is_boolean(j) ? pd_val_bool(json_is_true(j))
               : json_is_string(j) ? pd_val_str(json_string_value(j))
                                   : pd_val_none();
    json_decref(j);
    return v;
}

int pd_bench_adapt_tell(pd_bench_adapt *a, const pd_bench_config *cfg, const pd_bench_task *tasks, size_t first,
                        size_t n, pd_str *errors)
{
    const char **names = calloc(cfg->nmetrics ? cfg->nmetrics : 1, sizeof *names);
    pd_val *vals = calloc(cfg->nmetrics ? cfg->nmetrics : 1, sizeof *vals);
    int rc = names && vals ? 0 : -1;
    if (rc)
        pd_str_append(errors, "out of memory telling the adaptive probes\n");
    for (size_t k = first; k < n && !rc; k++) {
        const pd_bench_task *t = &tasks[k];
        size_t nm = 0;
        for (size_t j = 0; j < cfg->nmetrics && t->metrics; j++) { /* the metrics measured, as IOPS's dict */
            if (!t->metrics[j])
                continue;
            names[nm] = cfg->metrics[j];
            vals[nm++] = metric_val(t->metrics[j]);
        }
        pd_adapt_result r = {.metric_names = names, .metric_values = vals, .nmetrics = nm,
                             .exit_code = t->exit_code, .no_exit_code = t->exit_code < 0,
                             .status = pd_iops_status_name(t->state),
                             .execution_time = t->start > 0 && t->end >= t->start ? t->end - t->start : -1};
        char err[300];
        size_t i = a->probe_of[t->exec_idx];
        bool was_finished = pd_adapt_finished(&a->plan, i);
        int step_rc = pd_adapt_report(&a->plan, i, &r, err, sizeof err);
        if (!was_finished && pd_adapt_finished(&a->plan, i))
            update_estimate(a);
        if (step_rc != 0) {
            pd_str_printf(errors, "%s:%d: %s: %s (the probe of exec_%04d stops there)\n", cfg->path,
                          cfg->vars[a->var].adaptive.step_expr.line, cfg->vars[a->var].adaptive.step_expr.key
                              ? cfg->vars[a->var].adaptive.step_expr.key : "step_expr",
                          err, t->exec_id);
            rc = 1;
        }
        for (size_t j = 0; j < nm; j++)
            pd_val_free(&vals[j]);
    }
    free(names);
    free(vals);
    return rc ? -1 : 0;
}

/* IOPS's label of a probe: its swept variables (not the adaptive one),
 * sorted by name, as Python prints them. */
static char *probe_label(const pd_bench_adapt *a, const pd_bench_config *cfg, size_t p)
{
    size_t *idx = calloc(cfg->nvars ? cfg->nvars : 1, sizeof *idx), n = 0;
    if (!idx)
        return NULL;
    for (size_t i = 0; i < cfg->nvars; i++) {
        if (i == a->var || !cfg->vars[i].values || cfg->vars[i].expr.text)
            continue;
        size_t k = n++; /* insertion sort by name */
        while (k > 0 && strcmp(cfg->vars[idx[k - 1]].name, cfg->vars[i].name) > 0) {
            idx[k] = idx[k - 1];
            k--;
        }
        idx[k] = i;
    }
    pd_str s = {0};
    for (size_t k = 0; k < n; k++) {
        pd_str_printf(&s, "%s%s=", k ? "," : "", cfg->vars[idx[k]].name);
        pd_val_append(&s, &a->bases[p][idx[k]]);
    }
    if (!n)
        pd_str_append(&s, "(no swept vars)");
    free(idx);
    return pd_str_take(&s);
}

json_t *pd_bench_adapt_results(const pd_bench_adapt *a, const pd_bench_config *cfg)
{
    json_t *probes = json_object(), *o = json_object();
    for (size_t p = 0; p < a->plan.nprobes; p++) {
        const pd_adapt_probe *pr = &a->plan.probes[p];
        char *label = probe_label(a, cfg, p);
        json_t *r = json_object();
        json_object_set_new(r, "found_value", pd_iops_val_json(&pr->found));
        json_object_set_new(r, "failed_value", pd_iops_val_json(&pr->failed));
        json_object_set_new(r, "iterations", json_integer(pd_adapt_iterations(&a->plan, p)));
        json_object_set_new(r, "stop_reason", json_string(pd_adapt_stop_name(pr->stop)));
        json_object_set_new(probes, label ? label : "?", r);
        free(label);
    }
    json_object_set_new(o, cfg->vars[a->var].name, probes);
    return o;
}

void pd_bench_adapt_print(const pd_bench_adapt *a, const pd_bench_config *cfg, FILE *out)
{
    fprintf(out, "Adaptive probing results for '%s':\n", cfg->vars[a->var].name);
    for (size_t p = 0; p < a->plan.nprobes; p++) {
        const pd_adapt_probe *pr = &a->plan.probes[p];
        char *label = probe_label(a, cfg, p);
        pd_str s = {0};
        pd_str_printf(&s, "  %s: found=", label ? label : "?");
        pd_val_append(&s, &pr->found);
        if (pr->failed.kind != PD_VAL_NONE) {
            pd_str_append(&s, ", failed=");
            pd_val_append(&s, &pr->failed);
        }
        pd_str_printf(&s, ", iterations=%ld, stop_reason=%s\n", pd_adapt_iterations(&a->plan, p),
                      pd_adapt_stop_name(pr->stop));
        fputs(s.data ? s.data : "", out);
        pd_str_free(&s);
        free(label);
    }
}

void pd_bench_adapt_free(pd_bench_adapt *a, size_t nvars)
{
    for (size_t p = 0; a->bases && p < a->plan.nprobes; p++)
        pd_vals_free(a->bases[p], nvars);
    free(a->bases);
    free(a->probe_of);
    free(a->exec_of);
    pd_adapt_free(&a->plan);
    *a = (pd_bench_adapt){0};
}
