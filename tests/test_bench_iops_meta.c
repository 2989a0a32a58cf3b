/* The IOPS run metadata paddiser bench writes (src/bench/iops_meta.c),
 * checked against a run directory IOPS 3.5.8 wrote itself
 * (tests/fixtures/bench/iops_run, see its README): every field IOPS's find
 * and report read is there, with IOPS's JSON types and values. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/iops_meta.h"
#include "bench/run.h"
#include "common/csv.h"
#include "common/util.h"

static char fixture[512];

/* tests/fixtures/bench/iops_run */
static const char *fx(void)
{
    if (!fixture[0]) {
        const char *t = getenv("TESTS_DIR");
        snprintf(fixture, sizeof fixture, "%s/fixtures/bench/iops_run", t ? t : PD_SOURCE_DIR "/tests");
    }
    return fixture;
}

static json_t *load(const char *dir, const char *rel)
{
    pd_str p = {0};
    pd_str_printf(&p, "%s/%s", dir, rel);
    json_error_t e;
    json_t *o = json_load_file(p.data, 0, &e);
    if (!o)
        fail_msg("%s: %s", p.data, e.text);
    pd_str_free(&p);
    return o;
}

/* Every key of want is in got, with a value of the same JSON type (any
 * number for a number: IOPS's integer seconds are reals here). */
static void same_keys(const json_t *want, const json_t *got, const char *where)
{
    const char *k;
    json_t *w;
    json_object_foreach((json_t *)want, k, w) {
        json_t *g = json_object_get(got, k);
        if (!g)
            fail_msg("%s: no \"%s\" (IOPS 3.5.8 writes it)", where, k);
        bool ok = json_typeof(w) == json_typeof(g) || (json_is_number(w) && json_is_number(g)) ||
                  json_is_null(w) || json_is_null(g);
        if (!ok)
            fail_msg("%s: \"%s\" has another JSON type than IOPS's", where, k);
    }
}

/* ------------------------------------------------------------- units */

static void test_status_names(void **state)
{
    (void)state;
    static const char *const names[] = {"PENDING", "RUNNING", "SUCCEEDED", "FAILED", "CANCELLED", "TIMEOUT"};
    for (int s = PD_TASK_PENDING; s <= PD_TASK_TIMED_OUT; s++) {
        assert_string_equal(pd_iops_status_name((pd_task_state)s), names[s]);
        pd_task_state back;
        assert_true(pd_iops_status_parse(names[s], &back));
        assert_int_equal(back, s);
    }
    /* older paddiser runs and IOPS's ERROR */
    pd_task_state st;
    assert_true(pd_iops_status_parse("succeeded", &st) && st == PD_TASK_SUCCEEDED);
    assert_true(pd_iops_status_parse("timed_out", &st) && st == PD_TASK_TIMED_OUT);
    assert_true(pd_iops_status_parse("ERROR", &st) && st == PD_TASK_FAILED);
    assert_false(pd_iops_status_parse("UNKNOWN", &st));
    assert_false(pd_iops_status_parse(NULL, &st));
}

/* A metric's text survives the status file: typed when IOPS would type it */
static void test_metric_round_trip(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        json_type type;
    } cases[] = {
        {"161.5", JSON_REAL}, {"0.1", JSON_REAL},       {"7", JSON_INTEGER},     {"-3", JSON_INTEGER},
        {"1e+16", JSON_REAL}, {"2.0", JSON_REAL},       {"007", JSON_STRING},    {"1.50", JSON_STRING},
        {"abc", JSON_STRING}, {"nan", JSON_STRING},     {"", JSON_STRING},       {"29400.9", JSON_REAL},
        {"1e5", JSON_STRING}, {"99999999999999999999", JSON_STRING},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        json_t *v = pd_iops_metric_json(cases[i].text);
        if (json_typeof(v) != cases[i].type)
            fail_msg("'%s': JSON type %d, want %d", cases[i].text, json_typeof(v), cases[i].type);
        /* through the file's text, as --resume reads it */
        char *dumped = json_dumps(v, JSON_ENCODE_ANY | JSON_REAL_PRECISION(17));
        json_error_t e;
        json_t *again = json_loads(dumped, JSON_DECODE_ANY, &e);
        char *back = pd_iops_metric_text(again);
        assert_non_null(back);
        assert_string_equal(back, cases[i].text);
        free(back);
        free(dumped);
        json_decref(again);
        json_decref(v);
    }
    assert_null(pd_iops_metric_text(json_null()));
}

static void test_exec_root_and_no_run(void **state)
{
    (void)state;
    char root[4096], run[600], msg[1024];
    snprintf(run, sizeof run, "%s/run_001", fx());
    assert_true(pd_iops_exec_root(run, root, sizeof root));
    assert_true(strlen(root) > 5 && !strcmp(root + strlen(root) - 5, "/runs"));
    assert_false(pd_iops_exec_root(fx(), root, sizeof root)); /* the directory above the run */
    pd_iops_no_run_message(fx(), msg, sizeof msg);
    assert_non_null(strstr(msg, "holds no run"));
    assert_non_null(strstr(msg, "/run_001"));
}

/* IOPS's flattened results.csv read as results.csv-shaped rows */
static void test_flattened_results(void **state)
{
    (void)state;
    pd_str p = {0};
    pd_str_printf(&p, "%s/run_001/results.csv", fx());
    char err[256];
    pd_csv *csv = pd_csv_load(p.data, err, sizeof err);
    assert_non_null(csv);
    char *text = pd_iops_results_to_short(csv);
    assert_non_null(text);
    const char *head = "execution_id,repetition,size_mib,threads,elements,bandwidth_mbs,best_time_s\n";
    assert_int_equal(strncmp(text, head, strlen(head)), 0);
    assert_non_null(strstr(text, "\nexec_0001,1,16,1,699050,161.5,0.1\n"));
    assert_non_null(strstr(text, "\nexec_0004,2,64,2,2796202,642.5,0.2\n"));
    size_t rows = 0;
    for (const char *q = text; (q = strchr(q, '\n')); q++)
        rows++;
    assert_int_equal(rows, 9); /* header + 4 executions x 2 repetitions */
    free(text);
    pd_csv_free(csv);
    /* paddiser's own layout is not converted */
    pd_csv *own = pd_csv_parse("execution_id,repetition,x\nexec_0001,1,2\n", err, sizeof err);
    assert_null(pd_iops_results_to_short(own));
    pd_csv_free(own);
    pd_str_free(&p);
}

/* --------------------------------------------- a paddiser run vs IOPS's */

static char run_dir[600];
static char tmp[64];

/* Runs the fixture's study (the same executions IOPS ran) with paddiser
 * bench, without the sampler and the sleep, in a temporary workdir. */
static int run_study(void **state)
{
    (void)state;
    snprintf(tmp, sizeof tmp, "/tmp/pd_iops_meta_XXXXXX");
    if (!mkdtemp(tmp))
        return -1;
    pd_str p = {0};
    pd_str_printf(&p, "%s/study.yaml", fx());
    char *text = pd_read_file(p.data, NULL);
    pd_str_free(&p);
    if (!text)
        return -1;
    pd_str s = {0};
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        if (strstr(line, "sleep ") || strstr(line, "probes:") || strstr(line, "resource_sampling") ||
            strstr(line, "sampling_interval"))
            continue;
        pd_str_printf(&s, "%s\n", line);
    }
    free(text);
    pd_str study = {0}, wd = {0};
    pd_str_printf(&study, "%s/study.yaml", tmp);
    pd_str_printf(&wd, "%s/wd", tmp);
    int rc = pd_write_file(study.data, s.data, s.len);
    pd_bench_options o = {.config_path = study.data, .workdir = wd.data, .executor = -1, .quiet = true};
    if (rc == 0)
        rc = pd_bench_main(&o);
    snprintf(run_dir, sizeof run_dir, "%s/run_001", wd.data);
    pd_str_free(&s);
    pd_str_free(&study);
    pd_str_free(&wd);
    return rc;
}

static int remove_study(void **state)
{
    (void)state;
    pd_str cmd = {0};
    pd_str_printf(&cmd, "rm -rf '%s'", tmp);
    int rc = system(cmd.data);
    pd_str_free(&cmd);
    return rc;
}

static void test_index_like_iops(void **state)
{
    (void)state;
    pd_str r = {0};
    pd_str_printf(&r, "%s/run_001", fx());
    json_t *want = load(r.data, "__iops_index.json"), *got = load(run_dir, "__iops_index.json");
    same_keys(want, got, "__iops_index.json");
    assert_string_equal(json_string_value(json_object_get(got, "benchmark")), "membw-mini");
    assert_int_equal(json_integer_value(json_object_get(got, "total_expected")), 8);
    json_t *we = json_object_get(want, "executions"), *ge = json_object_get(got, "executions");
    assert_int_equal(json_object_size(we), json_object_size(ge));
    const char *k;
    json_t *w;
    json_object_foreach(we, k, w) {
        json_t *g = json_object_get(ge, k);
        if (!g)
            fail_msg("__iops_index.json: no %s", k);
        same_keys(w, g, k);
        /* the same execution under the same number, with the same values */
        if (!json_equal(json_object_get(w, "params"), json_object_get(g, "params")))
            fail_msg("%s: other params than IOPS's", k);
        /* paddiser has no runs/ level: the path is the exec_NNNN directory */
        assert_string_equal(json_string_value(json_object_get(g, "path")), k);
        pd_str params = {0};
        pd_str_printf(&params, "%s/__iops_params.json", k);
        json_t *pf = load(run_dir, params.data);
        assert_true(json_equal(pf, json_object_get(w, "params")));
        json_decref(pf);
        pd_str_free(&params);
        const char *cmd = json_string_value(json_object_get(g, "command"));
        assert_non_null(cmd);
        assert_non_null(strstr(cmd, "repetition_001/triad.json")); /* rendered for repetition 1, as IOPS does */
    }
    json_decref(want);
    json_decref(got);
    pd_str_free(&r);
}

static void test_run_metadata_like_iops(void **state)
{
    (void)state;
    pd_str r = {0};
    pd_str_printf(&r, "%s/run_001", fx());
    json_t *want = load(r.data, "__iops_run_metadata.json"), *got = load(run_dir, "__iops_run_metadata.json");
    same_keys(want, got, "__iops_run_metadata.json");
    same_keys(json_object_get(want, "benchmark"), json_object_get(got, "benchmark"), "benchmark");
    assert_string_equal(json_string_value(json_object_get(got, "iops_version")), "3.5.8");
    json_t *wv = json_object_get(want, "variables"), *gv = json_object_get(got, "variables");
    const char *k;
    json_t *w;
    json_object_foreach(wv, k, w) {
        json_t *g = json_object_get(gv, k);
        if (!g)
            fail_msg("variables: no %s", k);
        same_keys(w, g, k);
        assert_true(json_equal(json_object_get(w, "swept"), json_object_get(g, "swept")));
        assert_true(json_equal(json_object_get(w, "type"), json_object_get(g, "type")));
        assert_true(json_equal(json_object_get(w, "expr"), json_object_get(g, "expr")) ||
                    !json_object_get(w, "expr"));
    }
    /* the parser's metrics, as IOPS lists them (IOPS appends the resource
     * summary's columns too; its report reads that file itself) */
    json_t *wm = json_object_get(want, "metrics"), *gm = json_object_get(got, "metrics");
    size_t n = 0, i;
    json_array_foreach(wm, i, w) {
        if (!strcmp(json_string_value(json_object_get(w, "script")), "__iops_resource_sampling"))
            continue;
        assert_true(json_equal(w, json_array_get(gm, n)));
        n++;
    }
    assert_int_equal(json_array_size(gm), n);
    same_keys(json_object_get(want, "output"), json_object_get(got, "output"), "output");
    assert_string_equal(json_string_value(json_object_get(json_object_get(got, "output"), "type")), "csv");
    /* the file it names has IOPS's columns */
    const char *out = json_string_value(json_object_get(json_object_get(got, "output"), "path"));
    pd_str a = {0}, b = {0};
    pd_str_printf(&a, "%s/results.csv", r.data);
    pd_str_printf(&b, "%s/%s", run_dir, out);
    char err[256];
    pd_csv *wc = pd_csv_load(a.data, err, sizeof err), *gc = pd_csv_load(b.data, err, sizeof err);
    assert_non_null(wc);
    assert_non_null(gc);
    for (size_t c = 0; c < wc->header.nfields; c++) {
        const char *col = wc->header.fields[c];
        bool kept = !strncmp(col, "benchmark.", 10) || !strncmp(col, "execution.", 10) || !strncmp(col, "vars.", 5) ||
                    !strncmp(col, "metrics.", 8) || !strcmp(col, "metadata.executor_status") ||
                    !strcmp(col, "metadata.returncode");
        if (kept && pd_csv_col(gc, col) < 0)
            fail_msg("%s: no column %s (IOPS 3.5.8 writes it)", out, col);
    }
    /* and the same values per execution and repetition */
    char *ws = pd_iops_results_to_short(wc), *gs = pd_iops_results_to_short(gc);
    assert_non_null(ws);
    assert_non_null(gs);
    for (char *line = strtok(ws, "\n"); line; line = strtok(NULL, "\n"))
        if (!strstr(gs, line))
            fail_msg("%s lacks IOPS's row %s", out, line);
    free(ws);
    free(gs);
    pd_csv_free(wc);
    pd_csv_free(gc);
    pd_str_free(&a);
    pd_str_free(&b);
    json_decref(want);
    json_decref(got);
    pd_str_free(&r);
}

static void test_status_like_iops(void **state)
{
    (void)state;
    pd_str r = {0};
    pd_str_printf(&r, "%s/run_001/runs", fx());
    for (int e = 1; e <= 4; e++)
        for (int rep = 1; rep <= 2; rep++) {
            pd_str rel = {0}, mine = {0};
            pd_str_printf(&rel, "exec_%04d/repetition_%03d/__iops_status.json", e, rep);
            json_t *want = load(r.data, rel.data), *got = load(run_dir, rel.data);
            same_keys(want, got, rel.data);
            assert_true(json_equal(json_object_get(want, "status"), json_object_get(got, "status")));
            assert_true(json_equal(json_object_get(want, "cached"), json_object_get(got, "cached")));
            assert_true(json_is_null(json_object_get(got, "error")));
            /* typed metrics, the values IOPS recorded */
            assert_true(json_equal(json_object_get(want, "metrics"), json_object_get(got, "metrics")));
            const char *end = json_string_value(json_object_get(got, "end_time"));
            assert_non_null(end);
            assert_int_equal(strlen(end), 19); /* "YYYY-MM-DD HH:MM:SS" as IOPS writes it */
            assert_true(end[4] == '-' && end[10] == ' ' && end[13] == ':');
            json_decref(want);
            json_decref(got);
            pd_str_free(&rel);
            pd_str_free(&mine);
        }
    pd_str_free(&r);
}

/* __iops_status_rollup.json as IOPS writes it (status_rollup.py): the same
 * top-level fields and types, "complete": true after the run, and for every
 * execution and repetition IOPS rolled up, exactly what that repetition's
 * __iops_status.json holds (iops find reads the roll-up in its place). */
static void test_status_rollup_like_iops(void **state)
{
    (void)state;
    pd_str r = {0};
    pd_str_printf(&r, "%s/run_001", fx());
    json_t *want = load(r.data, "__iops_status_rollup.json"), *got = load(run_dir, "__iops_status_rollup.json");
    same_keys(want, got, "__iops_status_rollup.json");
    assert_true(json_equal(json_object_get(want, "benchmark"), json_object_get(got, "benchmark")));
    assert_true(json_equal(json_object_get(want, "repetitions"), json_object_get(got, "repetitions")));
    assert_true(json_is_true(json_object_get(got, "complete")));
    json_t *wx = json_object_get(want, "executions"), *gx = json_object_get(got, "executions");
    assert_int_equal(json_object_size(wx), json_object_size(gx));
    const char *key;
    json_t *we;
    json_object_foreach(wx, key, we) {
        json_t *wreps = json_object_get(we, "reps"), *greps = json_object_get(json_object_get(gx, key), "reps");
        if (!greps)
            fail_msg("roll-up: no %s.reps", key);
        assert_int_equal(json_object_size(wreps), json_object_size(greps));
        const char *rep;
        json_t *ws;
        json_object_foreach(wreps, rep, ws) {
            json_t *gs = json_object_get(greps, rep);
            if (!gs)
                fail_msg("roll-up: no %s.reps.%s", key, rep);
            same_keys(ws, gs, "roll-up status");
            pd_str rel = {0};
            pd_str_printf(&rel, "%s/repetition_%03d/__iops_status.json", key, atoi(rep));
            json_t *file = load(run_dir, rel.data);
            if (!json_equal(file, gs))
                fail_msg("roll-up: %s.reps.%s is not %s", key, rep, rel.data);
            json_decref(file);
            pd_str_free(&rel);
        }
    }
    json_decref(want);
    json_decref(got);
    pd_str_free(&r);
}

/* The part of a path after the run directory (".../run_001/"), without
 * IOPS's runs/ level: exec_NNNN/repetition_NNN. */
static const char *in_run(const char *path)
{
    const char *p = path ? strstr(path, "/run_001/") : NULL;
    if (!p)
        return path ? path : "";
    p += strlen("/run_001/");
    return strncmp(p, "runs/", 5) ? p : p + 5;
}

/* results.csv, by default, in the layout IOPS 3.5.8 wrote for the same
 * study: IOPS's header, in IOPS's order, less the metadata columns about
 * IOPS's own run that paddiser does not record (jobid, times, stdout and
 * stderr paths, sysinfo.*); and IOPS's rows, value for value, the paths
 * compared inside the run directory (IOPS keeps the executions under
 * runs/, paddiser in the run directory itself). */
static void test_results_csv_like_iops(void **state)
{
    (void)state;
    pd_str a = {0}, b = {0};
    pd_str_printf(&a, "%s/run_001/results.csv", fx());
    pd_str_printf(&b, "%s/results.csv", run_dir);
    char err[256];
    pd_csv *want = pd_csv_load(a.data, err, sizeof err), *got = pd_csv_load(b.data, err, sizeof err);
    assert_non_null(want);
    assert_non_null(got);
    size_t g = 0;
    for (size_t c = 0; c < want->header.nfields; c++) {
        const char *col = want->header.fields[c];
        if (pd_csv_col(got, col) < 0) {
            if (strncmp(col, "metadata.", 9) || !strcmp(col, "metadata.executor_status") ||
                !strcmp(col, "metadata.returncode"))
                fail_msg("results.csv: no column %s (IOPS 3.5.8 writes it)", col);
            continue;
        }
        if (g >= got->header.nfields || strcmp(got->header.fields[g], col))
            fail_msg("results.csv: column %zu is %s, IOPS's order has %s there", g,
                     g < got->header.nfields ? got->header.fields[g] : "(none)", col);
        g++;
    }
    assert_int_equal(g, got->header.nfields); /* no column IOPS does not write */
    assert_int_equal(want->nrows, got->nrows);
    int w_id = pd_csv_col(want, "execution.execution_id"), w_rep = pd_csv_col(want, "execution.repetition");
    int g_id = pd_csv_col(got, "execution.execution_id"), g_rep = pd_csv_col(got, "execution.repetition");
    for (size_t r = 0; r < want->nrows; r++) {
        size_t m = 0;
        while (m < got->nrows && (strcmp(pd_csv_get(got, m, g_id), pd_csv_get(want, r, w_id)) ||
                                  strcmp(pd_csv_get(got, m, g_rep), pd_csv_get(want, r, w_rep))))
            m++;
        if (m == got->nrows)
            fail_msg("results.csv: no row for IOPS's execution %s repetition %s", pd_csv_get(want, r, w_id),
                     pd_csv_get(want, r, w_rep));
        for (size_t c = 0; c < got->header.nfields; c++) {
            const char *col = got->header.fields[c];
            const char *wv = pd_csv_get(want, r, pd_csv_col(want, col)), *gv = pd_csv_get(got, m, (int)c);
            assert_non_null(wv);
            assert_non_null(gv);
            if (!strcmp(col, "execution.workdir")) { /* the run directory */
                assert_non_null(strstr(wv, "/run_001"));
                assert_string_equal(strrchr(gv, '/'), strrchr(wv, '/'));
            } else if (!strcmp(col, "execution.execution_dir")) {
                assert_string_equal(in_run(gv), in_run(wv));
            } else if (strcmp(gv, wv)) {
                fail_msg("results.csv: exec %s rep %s: %s is '%s', IOPS wrote '%s'", pd_csv_get(want, r, w_id),
                         pd_csv_get(want, r, w_rep), col, gv, wv);
            }
        }
    }
    /* the run metadata points IOPS's report at it */
    json_t *meta = load(run_dir, "__iops_run_metadata.json");
    assert_string_equal(json_string_value(json_object_get(json_object_get(meta, "output"), "path")), "results.csv");
    json_decref(meta);
    pd_csv_free(want);
    pd_csv_free(got);
    pd_str_free(&a);
    pd_str_free(&b);
}

int main(void)
{
    const struct CMUnitTest units[] = {
        cmocka_unit_test(test_status_names),
        cmocka_unit_test(test_metric_round_trip),
        cmocka_unit_test(test_exec_root_and_no_run),
        cmocka_unit_test(test_flattened_results),
    };
    const struct CMUnitTest against_iops[] = {
        cmocka_unit_test(test_index_like_iops),
        cmocka_unit_test(test_run_metadata_like_iops),
        cmocka_unit_test(test_status_like_iops),
        cmocka_unit_test(test_status_rollup_like_iops),
        cmocka_unit_test(test_results_csv_like_iops),
    };
    int failed = cmocka_run_group_tests_name("iops_meta units", units, NULL, NULL);
    failed += cmocka_run_group_tests_name("paddiser run vs IOPS 3.5.8's", against_iops, run_study, remove_study);
    return failed;
}
