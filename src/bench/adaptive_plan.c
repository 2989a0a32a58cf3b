/* The adaptive probes (adaptive_plan.h), after IOPS 3.5.8's AdaptivePlanner
 * (iops/execution/planner.py) and the runner's stop_when check. */
#include "bench/adaptive_plan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

long pd_adapt_next(pd_adapt_plan *p)
{
    for (size_t k = 0; k < p->nprobes; k++) {
        size_t i = (p->cursor + k) % p->nprobes;
        pd_adapt_probe *pr = &p->probes[i];
        if (pr->stop != PD_ADAPT_IN_PROGRESS || pr->handed)
            continue;
        pr->handed = true;
        pr->pending = p->repetitions;
        pr->triggered = false;
        p->cursor = (i + 1) % p->nprobes;
        return (long)i;
    }
    return -1;
}

void pd_adapt_violation(pd_adapt_plan *p, size_t i)
{
    p->probes[i].stop = PD_ADAPT_CONSTRAINT_VIOLATION;
    p->probes[i].pending = 0;
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
        return *out = pd_val_int(s->r->exit_code), true;
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
    if (pr->stop != PD_ADAPT_IN_PROGRESS || pr->pending <= 0)
        return 0;
    scope s = {.r = r, .probe = pr};
    if (stop_when_met(&p->var->adaptive, &s))
        pr->triggered = true;
    if (--pr->pending > 0)
        return 0;
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
    pr->handed = false;
    return 0;
}
