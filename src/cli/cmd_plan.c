/* paddiser plan PROBLEM.json: runs the placement planners (pd_plan) on a
 * problem file and prints per-task shares, bytes, times and the makespan.
 * Format: docs/planner.md, section "paddiser plan PROBLEM.json". */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli/commands.h"
#include "common/cliopt.h"
#include "common/util.h"
#include "lib/model.h"
#include "lib/page_select.h"
#include "paddiser.h"

#define CURVE_POINTS 101 /* model curves are tabulated every 1% of share */
#define PAGE_SIZE_MAX 1073741824.0 /* 1 GiB, the largest huge page */

typedef struct {
    size_t n;
    double *r, *v; /* points sorted by r */
} curve;

typedef struct {
    char *name;
    curve time;        /* piecewise linear */
    int bytes_kind;    /* 0 = curve, 1 = pages */
    curve bytes;       /* piecewise linear, rounded up */
    pd_bytes_curve pages;
    uint64_t *counts;  /* page counts when given, for page selection */
    size_t npages;
} plan_task;

typedef struct {
    plan_task *t;
    int n;
    size_t capacity, page_size;
    double step;
} plan_file;

static double curve_at(const curve *c, double r)
{
    if (c->n == 0)
        return 0;
    if (r <= c->r[0])
        return c->v[0];
    for (size_t k = 1; k < c->n; k++)
        if (r <= c->r[k]) {
            double w = (r - c->r[k - 1]) / (c->r[k] - c->r[k - 1]);
            return c->v[k - 1] + w * (c->v[k] - c->v[k - 1]);
        }
    return c->v[c->n - 1];
}

static double time_cb(void *ctx, int i, double r)
{
    plan_file *pf = ctx;
    return curve_at(&pf->t[i].time, r);
}

static size_t bytes_cb(void *ctx, int i, double r)
{
    plan_file *pf = ctx;
    plan_task *t = &pf->t[i];
    if (t->bytes_kind == 1)
        return pd_bytes_curve_bytes(&t->pages, r);
    double b = curve_at(&t->bytes, r);
    return b <= 0 ? 0 : (size_t)ceil(b - 1e-9);
}

static void plan_file_free(plan_file *pf)
{
    for (int i = 0; i < pf->n; i++) {
        free(pf->t[i].name);
        free(pf->t[i].time.r);
        free(pf->t[i].time.v);
        free(pf->t[i].bytes.r);
        free(pf->t[i].bytes.v);
        free(pf->t[i].counts);
        pd_bytes_curve_free(&pf->t[i].pages);
    }
    free(pf->t);
    memset(pf, 0, sizeof *pf);
}

static int num(const json_t *j, double *out)
{
    if (!json_is_number(j))
        return 0;
    *out = json_number_value(j);
    return isfinite(*out);
}

/* [[r, v], ...] with r in [0, 1] strictly increasing, v >= 0. */
static int parse_points(const json_t *arr, curve *c, const char *what, const char *task, char *err, size_t errlen)
{
    size_t n = json_array_size(arr);
    if (!json_is_array(arr) || n == 0) {
        snprintf(err, errlen, "task %s: %s: want a non-empty array of [r, value] pairs", task, what);
        return -1;
    }
    c->r = malloc(n * sizeof *c->r);
    c->v = malloc(n * sizeof *c->v);
    if (!c->r || !c->v) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (size_t k = 0; k < n; k++) {
        const json_t *p = json_array_get(arr, k);
        double r, v;
        if (!json_is_array(p) || json_array_size(p) != 2 || !num(json_array_get(p, 0), &r) ||
            !num(json_array_get(p, 1), &v) || r < 0 || r > 1 || v < 0 || (k > 0 && r <= c->r[k - 1])) {
            snprintf(err, errlen,
                     "task %s: %s[%zu]: want [r, value] with r in [0, 1] increasing and value >= 0", task, what, k);
            return -1;
        }
        c->r[k] = r;
        c->v[k] = v;
        c->n = k + 1;
    }
    return 0;
}

static int parse_time(const json_t *jt, plan_task *t, const pd_model *model, char *err, size_t errlen)
{
    const json_t *tc = json_object_get(jt, "time");
    if (tc)
        return parse_points(tc, &t->time, "time", t->name, err, errlen);
    double td, ts;
    if (!num(json_object_get(jt, "t_dram"), &td) || !num(json_object_get(jt, "t_slow"), &ts) || td < 0 ||
        ts < td) {
        snprintf(err, errlen, "task %s: want \"time\": [[r, t], ...] or \"t_dram\" <= \"t_slow\" (seconds)",
                 t->name);
        return -1;
    }
    double feat[PD_NFEATURES];
    const json_t *jf = json_object_get(jt, "features");
    const pd_model *m = NULL; /* without features: f = 1, linear */
    if (jf) {
        if (!json_is_array(jf) || json_array_size(jf) != PD_NFEATURES) {
            snprintf(err, errlen, "task %s: \"features\" wants %d numbers (%s, ...)", t->name, PD_NFEATURES,
                     pd_model_input_names[0]);
            return -1;
        }
        for (int k = 0; k < PD_NFEATURES; k++)
            if (!num(json_array_get(jf, k), &feat[k])) {
                snprintf(err, errlen, "task %s: features[%d] is not a number", t->name, k);
                return -1;
            }
        m = model;
    }
    t->time.r = malloc(CURVE_POINTS * sizeof(double));
    t->time.v = malloc(CURVE_POINTS * sizeof(double));
    if (!t->time.r || !t->time.v) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (int k = 0; k < CURVE_POINTS; k++)
        t->time.r[k] = (double)k / (CURVE_POINTS - 1);
    t->time.n = CURVE_POINTS;
    return pd_model_predict_many(m, td, ts, jf ? feat : NULL, t->time.r, CURVE_POINTS, NULL, t->time.v) == PD_OK
               ? 0
               : (snprintf(err, errlen, "out of memory"), -1);
}

static int parse_bytes(const json_t *jt, plan_task *t, size_t page_size, char *err, size_t errlen)
{
    const json_t *jb = json_object_get(jt, "bytes"), *jp = json_object_get(jt, "pages"),
                 *jh = json_object_get(jt, "histogram");
    if (!!jb + !!jp + !!jh != 1) {
        snprintf(err, errlen, "task %s: want exactly one of \"bytes\", \"pages\", \"histogram\"", t->name);
        return -1;
    }
    if (jb)
        return parse_points(jb, &t->bytes, "bytes", t->name, err, errlen);
    t->bytes_kind = 1;
    if (jp) {
        size_t n = json_array_size(jp);
        if (!json_is_array(jp)) {
            snprintf(err, errlen, "task %s: \"pages\" wants an array of access counts", t->name);
            return -1;
        }
        t->counts = malloc((n ? n : 1) * sizeof *t->counts);
        if (!t->counts) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        for (size_t k = 0; k < n; k++) {
            const json_t *c = json_array_get(jp, k);
            if (!json_is_integer(c) || json_integer_value(c) < 0) {
                snprintf(err, errlen, "task %s: pages[%zu] is not a count >= 0", t->name, k);
                return -1;
            }
            t->counts[k] = (uint64_t)json_integer_value(c);
        }
        t->npages = n;
        if (pd_bytes_curve_from_counts(&t->pages, t->counts, n, page_size) != PD_OK) {
            snprintf(err, errlen, "task %s: page counts overflow", t->name);
            return -1;
        }
        return 0;
    }
    size_t n = json_array_size(jh);
    uint64_t *cnt = malloc((n ? n : 1) * sizeof *cnt);
    size_t *np = malloc((n ? n : 1) * sizeof *np);
    int rc = 0;
    if (!json_is_array(jh) || !cnt || !np)
        rc = -1;
    for (size_t k = 0; rc == 0 && k < n; k++) {
        const json_t *p = json_array_get(jh, k);
        const json_t *a = json_array_get(p, 0), *b = json_array_get(p, 1);
        if (!json_is_array(p) || json_array_size(p) != 2 || !json_is_integer(a) || !json_is_integer(b) ||
            json_integer_value(a) < 0 || json_integer_value(b) < 0)
            rc = -1;
        else {
            cnt[k] = (uint64_t)json_integer_value(a);
            np[k] = (size_t)json_integer_value(b);
        }
    }
    if (rc == 0 && pd_bytes_curve_from_histogram(&t->pages, cnt, np, n, page_size) != PD_OK)
        rc = -1;
    if (rc)
        snprintf(err, errlen, "task %s: \"histogram\" wants [[access count, pages], ...] of integers >= 0",
                 t->name);
    free(cnt);
    free(np);
    return rc;
}

static int parse_problem(const char *path, plan_file *pf, const pd_model *model, char *err, size_t errlen)
{
    memset(pf, 0, sizeof *pf);
    json_error_t je;
    json_t *root = json_load_file(path, 0, &je);
    if (!root) {
        snprintf(err, errlen, "%s:%d: %s", path, je.line, je.text);
        return -1;
    }
    int rc = -1;
    const json_t *tasks = json_object_get(root, "tasks");
    double cap = 0, ps = 4096, step = 0;
    const json_t *jc = json_object_get(root, "capacity"), *jcp = json_object_get(root, "capacity_pages");
    const json_t *jps = json_object_get(root, "page_size"), *jst = json_object_get(root, "step");
    if (!json_is_object(root) || !json_is_array(tasks) || json_array_size(tasks) == 0) {
        snprintf(err, errlen, "%s: want an object with a non-empty \"tasks\" array", path);
        goto out;
    }
    if (jps && (!num(jps, &ps) || ps < 1 || ps > PAGE_SIZE_MAX || ps != floor(ps))) {
        snprintf(err, errlen, "%s: \"page_size\" must be an integer in 1..%.0f", path, PAGE_SIZE_MAX);
        goto out;
    }
    if (!!jc == !!jcp || !num(jc ? jc : jcp, &cap) || cap < 0 || cap > 1.8e19) {
        snprintf(err, errlen, "%s: want one of \"capacity\" (bytes) or \"capacity_pages\", a number >= 0", path);
        goto out;
    }
    if (jcp && cap * ps > 1.8e19) { /* the bytes would wrap around */
        snprintf(err, errlen, "%s: \"capacity_pages\" %.0f of %.0f bytes exceeds 2^64 bytes", path, cap, ps);
        goto out;
    }
    if (jst && (!num(jst, &step) || step < 0 || step > 1)) {
        snprintf(err, errlen, "%s: \"step\" must be in (0, 1]", path);
        goto out;
    }
    pf->page_size = (size_t)ps;
    pf->capacity = jcp ? (size_t)cap * pf->page_size : (size_t)cap;
    pf->step = step;
    size_t n = json_array_size(tasks);
    if (n > 1000000) {
        snprintf(err, errlen, "%s: too many tasks (%zu)", path, n);
        goto out;
    }
    pf->t = calloc(n, sizeof *pf->t);
    if (!pf->t) {
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        const json_t *jt = json_array_get(tasks, i);
        pf->n = (int)i + 1;
        plan_task *t = &pf->t[i];
        const json_t *jn = json_object_get(jt, "name");
        char buf[32];
        snprintf(buf, sizeof buf, "%zu", i);
        t->name = pd_strdup(json_is_string(jn) ? json_string_value(jn) : buf);
        if (!t->name) {
            snprintf(err, errlen, "out of memory");
            goto out;
        }
        if (!json_is_object(jt)) {
            snprintf(err, errlen, "%s: tasks[%zu] is not an object", path, i);
            goto out;
        }
        if (parse_time(jt, t, model, err, errlen) || parse_bytes(jt, t, pf->page_size, err, errlen))
            goto out;
    }
    rc = 0;
out:
    json_decref(root);
    if (rc)
        plan_file_free(pf);
    return rc;
}

static double spread_cv(const double *t, int n)
{
    double mean = 0, var = 0;
    for (int i = 0; i < n; i++)
        mean += t[i];
    mean /= n;
    for (int i = 0; i < n; i++)
        var += (t[i] - mean) * (t[i] - mean);
    return mean > 0 ? sqrt(var / n) / mean : 0;
}

static void print_plan(const char *label, const plan_file *pf, const pd_plan_result *r, size_t *const *sel,
                       const size_t *nsel)
{
    printf("%s: makespan %.6g s, fast memory %zu / %zu bytes, time spread (CV) %.4f\n", label, r->makespan, r->used,
           pf->capacity, spread_cv(r->time, pf->n));
    printf("  %-16s %8s %14s %12s%s\n", "task", "share", "bytes", "time", sel ? "  pages" : "");
    for (int i = 0; i < pf->n; i++) {
        printf("  %-16s %8.4f %14zu %12.6g", pf->t[i].name, r->share[i], r->bytes[i], r->time[i]);
        if (sel)
            printf("  %zu", nsel[i]);
        printf("\n");
    }
}

static json_t *plan_json(const plan_file *pf, const pd_plan_result *r, size_t *const *sel, const size_t *nsel)
{
    json_t *o = json_object(), *tasks = json_array();
    json_object_set_new(o, "makespan", json_real(r->makespan));
    json_object_set_new(o, "used", json_integer((json_int_t)r->used));
    json_object_set_new(o, "capacity", json_integer((json_int_t)pf->capacity));
    json_object_set_new(o, "spread_cv", json_real(spread_cv(r->time, pf->n)));
    for (int i = 0; i < pf->n; i++) {
        json_t *t = json_object();
        json_object_set_new(t, "name", json_string(pf->t[i].name));
        json_object_set_new(t, "share", json_real(r->share[i]));
        json_object_set_new(t, "bytes", json_integer((json_int_t)r->bytes[i]));
        json_object_set_new(t, "time", json_real(r->time[i]));
        if (sel && pf->t[i].counts) {
            json_t *pages = json_array();
            for (size_t k = 0; k < nsel[i]; k++)
                json_array_append_new(pages, json_integer((json_int_t)sel[i][k]));
            json_object_set_new(t, "pages", pages);
        }
        json_array_append_new(tasks, t);
    }
    json_object_set_new(o, "tasks", tasks);
    return o;
}

#define CMD "paddiser plan"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: paddiser plan PROBLEM.json [--planner greedy|exact|both] [--step X] [--model PATH] [--json]\n"
            "Runs the placement planners on a problem file and prints per-task shares, bytes,\n"
            "times and the makespan.\n"
            "  PROBLEM.json: {\"capacity\": bytes | \"capacity_pages\": n, \"page_size\": 4096, \"step\": 0.05,\n"
            "                 \"tasks\": [{\"name\": ..., time: \"time\": [[r, t], ...] | \"t_dram\", \"t_slow\"\n"
            "                            [, \"features\": [8 PMC values]],\n"
            "                            bytes: \"bytes\": [[r, b], ...] | \"pages\": [counts] |\n"
            "                                   \"histogram\": [[count, pages], ...]}]}\n"
            "options:\n"
            "  --planner NAME   greedy, exact or both (default both)\n"
            "  --step X         share step of the planners, in [0.0001, 1] (default: the file's \"step\")\n"
            "  --model PATH     performance model for tasks with \"features\" (default: the shipped one)\n"
            "  --json           print the plans as JSON\n"
            "  -h, --help       this help\n"
            "See paddiser(1), and docs/planner.md in the source tree.\n");
}

int cmd_plan(int argc, char **argv)
{
    enum { OPT_PLANNER = 1000, OPT_STEP, OPT_MODEL, OPT_JSON };
    static const struct option longopts[] = {
        {"planner", required_argument, NULL, OPT_PLANNER},
        {"step", required_argument, NULL, OPT_STEP},
        {"model", required_argument, NULL, OPT_MODEL},
        {"json", no_argument, NULL, OPT_JSON},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *path = NULL, *model_path = NULL, *which = "both";
    double step = -1;
    int as_json = 0, c;
    optind = 0;
    while ((c = pd_opt_next(CMD, argc, argv, "h", longopts)) != -1) {
        switch (c) {
        case 'h':
            usage(stdout);
            return 0;
        case OPT_PLANNER:
            which = optarg;
            if (strcmp(which, "greedy") && strcmp(which, "exact") && strcmp(which, "both")) {
                fprintf(stderr, CMD ": --planner: '%s' is not greedy, exact or both\n", which);
                return 2;
            }
            break;
        case OPT_STEP:
            if (!pd_opt_double(CMD, "--step", optarg, 1e-4, 1, &step))
                return 2;
            break;
        case OPT_MODEL:
            model_path = optarg;
            break;
        case OPT_JSON:
            as_json = 1;
            break;
        default:
            return 2;
        }
    }
    if (optind >= argc) {
        usage(stderr);
        return 2;
    }
    path = argv[optind];
    if (optind + 1 < argc)
        return pd_opt_error(CMD, "unexpected argument '%s' (one PROBLEM.json)", argv[optind + 1]);
    char err[512];
    pd_model *model = pd_model_load(model_path, err, sizeof err);
    if (!model) {
        fprintf(stderr, "paddiser plan: %s\n", err);
        return 2;
    }
    plan_file pf;
    if (parse_problem(path, &pf, model, err, sizeof err) != 0) {
        fprintf(stderr, "paddiser plan: %s\n", err);
        pd_model_free(model);
        return 2;
    }
    if (step < 0)
        step = pf.step;
    pd_plan_problem prob = {.ntasks = pf.n, .time = time_cb, .bytes = bytes_cb, .ctx = &pf, .capacity = pf.capacity};
    double *share = calloc(pf.n, sizeof *share), *time = calloc(pf.n, sizeof *time);
    size_t *bytes = calloc(pf.n, sizeof *bytes), *nsel = calloc(pf.n, sizeof *nsel);
    size_t **sel = calloc(pf.n, sizeof *sel);
    pd_task_pages *tp = calloc(pf.n, sizeof *tp);
    int status = 0, any_pages = 0;
    json_t *out = as_json ? json_object() : NULL;
    if (!share || !time || !bytes || !nsel || !sel || !tp) {
        fprintf(stderr, "paddiser plan: out of memory\n");
        status = 1;
        goto done;
    }
    for (int i = 0; i < pf.n; i++) {
        tp[i] = (pd_task_pages){pf.t[i].counts, pf.t[i].npages};
        any_pages |= pf.t[i].counts != NULL;
    }
    for (int w = 0; w < 2 && status == 0; w++) {
        const char *label = w == 0 ? "greedy" : "exact";
        if (strcmp(which, "both") && strcmp(which, label))
            continue;
        pd_plan_result res = {.share = share, .bytes = bytes, .time = time};
        int rc = pd_plan(w == 0 ? PD_PLANNER_GREEDY : PD_PLANNER_EXACT, &prob, step, &res);
        if (rc != PD_OK) {
            fprintf(stderr, "paddiser plan: %s planner: %s\n", label,
                    rc == PD_EINVAL ? "invalid problem (a time is not a finite number >= 0?)" : "out of memory");
            status = 1;
            break;
        }
        if (any_pages && pd_select_plan(tp, pf.n, bytes, pf.page_size, sel, nsel) != PD_OK) {
            fprintf(stderr, "paddiser plan: out of memory selecting pages\n");
            status = 1;
            break;
        }
        if (out)
            json_object_set_new(out, label, plan_json(&pf, &res, any_pages ? sel : NULL, nsel));
        else
            print_plan(label, &pf, &res, any_pages ? sel : NULL, nsel);
        for (int i = 0; any_pages && i < pf.n; i++) {
            free(sel[i]);
            sel[i] = NULL;
        }
    }
    if (out && status == 0) {
        json_object_set_new(out, "model", json_string(pd_model_source(model)));
        char *text = json_dumps(out, JSON_INDENT(2) | JSON_REAL_PRECISION(10));
        if (text)
            printf("%s\n", text);
        free(text);
    }
done:
    json_decref(out);
    free(share);
    free(time);
    free(bytes);
    free(nsel);
    free(sel);
    free(tp);
    plan_file_free(&pf);
    pd_model_free(model);
    return status;
}
