/* Bayesian search over a study's matrix (bayes_plan.h). */
#include "bench/bayes_plan.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *val_key(const pd_val *v)
{
    pd_str s = {0};
    pd_val_append_json(&s, v);
    return s.data ? pd_str_take(&s) : pd_strdup("");
}

/* Which variables are exhaustive: as study.c reads exhaustive_vars (every
 * swept variable listed is the same as none). */
static void exhaustive_flags(const pd_bench_config *cfg, bool *flags)
{
    size_t n = 0, swept = 0;
    for (size_t i = 0; i < cfg->nvars; i++) {
        flags[i] = false;
        for (size_t k = 0; k < cfg->nexhaustive_vars && !cfg->vars[i].expr.text; k++)
            flags[i] = flags[i] || !strcmp(cfg->vars[i].name, cfg->exhaustive_vars[k]);
        n += flags[i];
        swept += !cfg->vars[i].expr.text;
    }
    if (n == swept)
        for (size_t i = 0; i < cfg->nvars; i++)
            flags[i] = false;
}

static bool is_search_var(const pd_bench_config *cfg, const bool *exh, size_t i)
{
    return !cfg->vars[i].expr.text && !exh[i];
}

/* Groups the candidates by search point (first-seen order) and encodes
 * each point. Returns 0 or -1 (out of memory). */
static int encode(pd_bench_bayes_plan *b, const pd_bench_config *cfg)
{
    size_t nv = cfg->nvars, nc = b->ncands;
    bool *exh = calloc(nv ? nv : 1, sizeof *exh);
    char **keys = calloc(nc ? nc : 1, sizeof *keys); /* a candidate's search point as text */
    size_t *first = malloc((nc ? nc : 1) * sizeof *first);
    b->point_of = malloc((nc ? nc : 1) * sizeof *b->point_of);
    int rc = -1;
    if (!exh || !keys || !first || !b->point_of)
        goto out;
    exhaustive_flags(cfg, exh);
    for (size_t c = 0; c < nc; c++) {
        pd_str k = {0};
        for (size_t i = 0; i < nv; i++)
            if (is_search_var(cfg, exh, i)) {
                pd_val_append_json(&k, &b->cands[c].values[i]);
                pd_str_append(&k, "\x1f");
            }
        keys[c] = k.data ? pd_str_take(&k) : pd_strdup("");
        if (!keys[c])
            goto out;
        size_t p = 0;
        while (p < b->npoints && strcmp(keys[first[p]], keys[c]))
            p++;
        if (p == b->npoints)
            first[b->npoints++] = c;
        b->point_of[c] = p;
    }
    /* feature columns: per search variable, its distinct values */
    b->dim = 0;
    size_t cap = 0;
    double *cols = NULL; /* built point by point below */
    for (int pass = 0; pass < 2; pass++) {
        size_t col = 0;
        for (size_t i = 0; i < nv; i++) {
            if (!is_search_var(cfg, exh, i))
                continue;
            char **distinct = calloc(b->npoints ? b->npoints : 1, sizeof *distinct);
            size_t nd = 0;
            bool numeric = true;
            double lo = HUGE_VAL, hi = -HUGE_VAL;
            if (!distinct)
                goto out;
            for (size_t p = 0; p < b->npoints; p++) {
                const pd_val *v = &b->cands[first[p]].values[i];
                char *k = val_key(v);
                size_t d = 0;
                while (k && d < nd && strcmp(distinct[d], k))
                    d++;
                if (k && d == nd)
                    distinct[nd++] = k;
                else
                    free(k);
                if (v->kind == PD_VAL_INT || v->kind == PD_VAL_FLOAT) {
                    double x = v->kind == PD_VAL_INT ? (double)v->i : v->f;
                    lo = x < lo ? x : lo;
                    hi = x > hi ? x : hi;
                } else {
                    numeric = false;
                }
            }
            if (nd > 1) {
                size_t width = numeric ? 1 : nd;
                if (pass == 1)
                    for (size_t p = 0; p < b->npoints; p++) {
                        const pd_val *v = &b->cands[first[p]].values[i];
                        double *row = cols + p * cap + col;
                        if (numeric) {
                            double x = v->kind == PD_VAL_INT ? (double)v->i : v->f;
                            row[0] = hi > lo ? (x - lo) / (hi - lo) : 0;
                        } else {
                            char *k = val_key(v);
                            for (size_t d = 0; d < nd; d++)
                                row[d] = k && !strcmp(distinct[d], k) ? 1 : 0;
                            free(k);
                        }
                    }
                col += width;
            }
            for (size_t d = 0; d < nd; d++)
                free(distinct[d]);
            free(distinct);
        }
        if (pass == 0) {
            cap = col;
            cols = calloc((b->npoints ? b->npoints : 1) * (cap ? cap : 1), sizeof *cols);
            if (!cols)
                goto out;
        }
    }
    b->x = cols;
    b->dim = cap;
    rc = 0;
out:
    for (size_t c = 0; keys && c < nc; c++)
        free(keys[c]);
    free(keys);
    free(first);
    free(exh);
    return rc;
}

int pd_bench_bayes_init(pd_bench_bayes_plan *b, const pd_bench_config *cfg, pd_bench_matrix *m, pd_str *warnings)
{
    *b = (pd_bench_bayes_plan){.current = -1, .maximize = cfg->bayes.maximize};
    b->cands = m->execs;
    b->ncands = m->nexecs;
    if (encode(b, cfg) != 0) {
        b->cands = NULL;
        return -1;
    }
    size_t want = (size_t)cfg->bayes.n_iterations;
    if (want >= b->npoints && cfg->bayes.fallback_to_exhaustive) {
        pd_str_printf(warnings, "%s:%d: benchmark.bayesian_config: n_iterations %zu >= %zu search points: running "
                                "all of them (fallback_to_exhaustive)\n",
                      cfg->path, cfg->bayes.line, want, b->npoints);
        b->cands = NULL;
        return 0;
    }
    b->budget = want < b->npoints ? want : b->npoints;
    size_t reps = cfg->repetitions > 0 ? (size_t)cfg->repetitions : 1, nc = b->ncands ? b->ncands : 1;
    b->visited = calloc(b->npoints ? b->npoints : 1, sizeof *b->visited);
    b->obs = malloc((b->npoints ? b->npoints : 1) * sizeof *b->obs);
    b->y = malloc((b->npoints ? b->npoints : 1) * sizeof *b->y);
    pd_bench_exec *execs = calloc(nc, sizeof *execs);
    pd_bench_attempt *order = calloc(nc * reps, sizeof *order);
    if (!b->visited || !b->obs || !b->y || !execs || !order) {
        free(execs);
        free(order);
        return -1;
    }
    free(m->order);
    m->execs = execs;
    m->nexecs = 0;
    m->order = order;
    m->norder = 0;
    b->opts = (pd_bayes_opts){.acq = (pd_bayes_acq)cfg->bayes.acquisition,
                              .xi = cfg->bayes.xi,
                              .kappa = cfg->bayes.kappa,
                              .n_initial = (size_t)cfg->bayes.n_initial_points};
    pd_pyrandom_seed(&b->rng, cfg->random.seed);
    return 1;
}

void pd_bench_bayes_tell(pd_bench_bayes_plan *b, double objective)
{
    if (b->current < 0 || isnan(objective))
        return;
    b->obs[b->nobs] = (size_t)b->current;
    b->y[b->nobs++] = b->maximize ? -objective : objective;
}

long pd_bench_bayes_next(pd_bench_bayes_plan *b, const pd_bench_config *cfg, pd_bench_matrix *m)
{
    if (b->proposed >= b->budget)
        return 0;
    pd_bayes_space sp = {b->x, b->npoints, b->dim};
    long p = pd_bayes_next(&sp, b->obs, b->y, b->nobs, b->visited, &b->rng, &b->opts);
    if (p == -2)
        return -1;
    if (p < 0)
        return 0;
    b->visited[p] = true;
    b->current = p;
    b->proposed++;
    size_t reps = cfg->repetitions > 0 ? (size_t)cfg->repetitions : 1;
    long added = 0;
    for (size_t c = 0; c < b->ncands; c++) {
        if (b->point_of[c] != (size_t)p)
            continue;
        pd_bench_exec *ex = &m->execs[m->nexecs];
        *ex = b->cands[c];
        ex->id = (int)m->nexecs + 1;
        ex->values = calloc(m->nvars ? m->nvars : 1, sizeof *ex->values);
        if (!ex->values)
            return -1;
        for (size_t i = 0; i < m->nvars; i++)
            ex->values[i] = pd_val_copy(&b->cands[c].values[i]);
        for (size_t r = 1; r <= reps; r++)
            m->order[m->norder++] = (pd_bench_attempt){.exec = m->nexecs, .repetition = (int)r};
        m->nexecs++;
        added += (long)reps;
    }
    return added;
}

void pd_bench_bayes_free(pd_bench_bayes_plan *b, size_t nvars)
{
    for (size_t c = 0; b->cands && c < b->ncands; c++)
        pd_vals_free(b->cands[c].values, nvars);
    free(b->cands);
    free(b->point_of);
    free(b->x);
    free(b->visited);
    free(b->obs);
    free(b->y);
    *b = (pd_bench_bayes_plan){0};
}
