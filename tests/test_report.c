/* Tests of src/report: the HTML generated from the fixture run directory
 * (element counts), escaping of hostile names, missing files, determinism,
 * and the data/SVG helpers underneath. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/commands.h"
#include "common/util.h"
#include "report/data.h"
#include "report/report.h"
#include "report/svg.h"
#include "report/uplot_assets.h"

static char fixture[512];

static const char *fixture_dir(void)
{
    if (!fixture[0]) {
        const char *t = getenv("TESTS_DIR");
        snprintf(fixture, sizeof fixture, "%s/fixtures/report/run_001", t ? t : "tests");
    }
    return fixture;
}

static size_t count(const char *hay, const char *needle)
{
    size_t n = 0, len = strlen(needle);
    for (const char *p = strstr(hay, needle); p; p = strstr(p + len, needle))
        n++;
    return n;
}

static char *make_tmpdir(void)
{
    char tmpl[] = "/tmp/pd_report_test_XXXXXX";
    char *d = mkdtemp(tmpl);
    assert_non_null(d);
    return pd_strdup(d);
}

static void rm_rf(const char *dir)
{
    pd_str cmd = {0};
    pd_str_printf(&cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd.data), 0);
    pd_str_free(&cmd);
}

static void put(const char *dir, const char *rel, const char *text)
{
    pd_str p = {0};
    pd_str_printf(&p, "%s/%s", dir, rel);
    char *slash = strrchr(p.data, '/');
    *slash = '\0';
    assert_int_equal(pd_mkdir_p(p.data, 0755), 0);
    *slash = '/';
    assert_int_equal(pd_write_file(p.data, text, strlen(text)), 0);
    pd_str_free(&p);
}

/* Generates the report of run_dir into dir/out.html and returns its text. */
static char *report_of(const char *run_dir, const char *dir)
{
    char err[512] = "";
    pd_str out = {0};
    pd_str_printf(&out, "%s/out.html", dir);
    int rc = pd_report_write(run_dir, out.data, err, sizeof err);
    if (rc != 0)
        fail_msg("pd_report_write: %s", err);
    char *html = pd_read_file(out.data, NULL);
    assert_non_null(html);
    pd_str_free(&out);
    return html;
}

/* ---------- the fixture page ---------- */

static void test_fixture_element_counts(void **state)
{
    (void)state;
    char *tmp = make_tmpdir();
    char *html = report_of(fixture_dir(), tmp);
    /* 2 swept vars x (2 results metrics + 29 varying summary metrics) */
    assert_int_equal(count(html, "class=\"pd-chart pd-line\""), 62);
    /* 1 var pair x (2 results metrics + 6 resource metrics) */
    assert_int_equal(count(html, "class=\"pd-chart pd-heatmap\""), 8);
    assert_int_equal(count(html, "class=\"pd-cell\""), 70);
    /* exec_0009 has no GPU trace: its cells of the 2 GPU heatmaps */
    assert_int_equal(count(html, "class=\"pd-cell-missing\""), 2);
    /* 9 executions x CPU, memory, GPU util, GPU power, I/O; exec_0009 no GPU */
    assert_int_equal(count(html, "class=\"pd-chart pd-ts\""), 43);
    /* exec_0005: 3 policies x 8 tasks */
    assert_int_equal(count(html, "class=\"pd-chart pd-bars\""), 3);
    assert_int_equal(count(html, "class=\"pd-bar\""), 24);
    assert_int_equal(count(html, "class=\"pd-makespan\""), 3);
    /* Summary: one box plot per varying results.csv metric (time_s, bandwidth_mbs) */
    assert_int_equal(count(html, "class=\"pd-chart pd-box\""), 2);
    assert_int_equal(count(html, "class=\"pd-chart "), 62 + 8 + 43 + 3 + 2);
    /* every chart has a title element; the only script is the inlined
     * uPlot (when this build has it), and nothing is fetched */
    assert_int_equal(count(html, "<title>"), 1 + count(html, "<svg") + count(html, "<circle") +
                                                 count(html, "<rect class=\"pd-cell") +
                                                 count(html, "<rect class=\"pd-bar"));
    assert_int_equal(count(html, "<script"), pd_uplot_embedded ? 1 : 0);
    assert_null(strstr(html, "src=\""));
    assert_int_equal(count(html, "href=\"#pd-"), 7); /* Summary first */
    /* series of the per-variable plots and the multi-host trace */
    assert_non_null(strstr(html, "data-series=\"backend=pmem\""));
    assert_non_null(strstr(html, "data-series=\"threads=4\""));
    assert_non_null(strstr(html, "data-series=\"node02\""));
    assert_non_null(strstr(html, "data-series=\"nfs read\""));
    assert_non_null(strstr(html, "data-policy=\"merchandiser\""));
    /* notes: folded metrics, constant ones, failed repetition */
    assert_non_null(strstr(html, "16 more resource metrics"));
    assert_non_null(strstr(html, "io_nfs_write_gb = 0"));
    assert_non_null(strstr(html, "Mean \xC2\xB1 sample stddev of 1 to 2 rows per point"));
    assert_non_null(strstr(html, "Trace rows skipped as malformed (e.g. [N/A] fields): 1."));
    free(html);
    rm_rf(tmp);
    free(tmp);
}

static void test_deterministic(void **state)
{
    (void)state;
    char *tmp = make_tmpdir();
    char *a = report_of(fixture_dir(), tmp);
    char *b = report_of(fixture_dir(), tmp);
    assert_string_equal(a, b);
    /* a copy elsewhere (same directory name) gives the same bytes */
    pd_str cmd = {0}, copy = {0};
    pd_str_printf(&copy, "%s/copy/run_001", tmp);
    pd_str_printf(&cmd, "mkdir -p '%s/copy' && cp -r '%s' '%s/copy/'", tmp, fixture_dir(), tmp);
    assert_int_equal(system(cmd.data), 0);
    char *c = report_of(copy.data, tmp);
    assert_string_equal(a, c);
    pd_str_free(&cmd);
    pd_str_free(&copy);
    free(a);
    free(b);
    free(c);
    rm_rf(tmp);
    free(tmp);
}

static void test_default_output_path_and_cli(void **state)
{
    (void)state;
    char *tmp = make_tmpdir();
    put(tmp, "run/results.csv", "execution_id,repetition,x,t_s\nexec_0001,1,1,2.5\nexec_0002,1,2,3.5\n");
    pd_str run = {0}, out = {0};
    pd_str_printf(&run, "%s/run", tmp);
    pd_str_printf(&out, "%s/elsewhere.html", tmp);
    char *argv1[] = {"report", run.data, NULL};
    assert_int_equal(cmd_report(2, argv1), 0);
    pd_str_append(&run, "/report.html");
    char *html = pd_read_file(run.data, NULL);
    assert_non_null(html);
    free(html);
    run.len -= strlen("/report.html");
    run.data[run.len] = '\0';
    char *argv2[] = {"report", run.data, "-o", out.data, NULL};
    assert_int_equal(cmd_report(4, argv2), 0);
    assert_int_equal(access(out.data, R_OK), 0);
    char *argv3[] = {"report", NULL};
    assert_int_equal(cmd_report(1, argv3), 2);
    char *argv4[] = {"report", run.data, "--bogus", NULL};
    assert_int_equal(cmd_report(3, argv4), 2);
    char *argv5[] = {"report", run.data, "-o", NULL};
    assert_int_equal(cmd_report(3, argv5), 2);
    char *argv6[] = {"report", "/nonexistent/run_dir", NULL};
    assert_int_equal(cmd_report(2, argv6), 1);
    pd_str_free(&run);
    pd_str_free(&out);
    rm_rf(tmp);
    free(tmp);
}

/* ---------- hostile names ---------- */

static void test_hostile_names_escaped(void **state)
{
    (void)state;
    char *tmp = make_tmpdir();
    put(tmp, "run/results.csv",
        "execution_id,repetition,\"<b>&\"\"\",v2,t<script>_s\n"
        "exec_0001,1,1,a<i>,1.0\nexec_0001,2,1,a<i>,1.2\n"
        "exec_0002,1,2,a<i>,2.0\nexec_0003,1,1,'q',3.0\nexec_0004,1,2,'q',4.0\n");
    put(tmp, "run/exec_0001/__iops_params.json", "{\"<b>&\\\"\": 1, \"v2\": \"a<i>\"}\n");
    put(tmp, "run/exec_0002/__iops_params.json", "{\"<b>&\\\"\": 2, \"v2\": \"a<i>\"}\n");
    put(tmp, "run/exec_0003/__iops_params.json", "{\"<b>&\\\"\": 1, \"v2\": \"'q'\"}\n");
    put(tmp, "run/exec_0004/__iops_params.json", "{\"<b>&\\\"\": 2, \"v2\": \"'q'\"}\n");
    put(tmp, "run/exec_0001/repetition_001/__iops_trace_h<x>_1.csv",
        "timestamp,hostname,core,cpu_user_pct,cpu_system_pct,cpu_idle_pct,mem_total_kb,mem_available_kb\n"
        "10,<h&>,0,50,5,45,1000,500\n11,<h&>,0,60,5,35,1000,400\n");
    put(tmp, "run/exec_0001/repetition_001/paddiser_tasks.csv",
        "policy,task,time_s,dram_share,dram_bytes\n<p>,<t>,1.5,0.5,100\n<p>,t2,2.5,0.1,10\n");
    pd_str run = {0};
    pd_str_printf(&run, "%s/run", tmp);
    char *html = report_of(run.data, tmp);
    assert_null(strstr(html, "<b>"));
    assert_null(strstr(html, "<i>"));
    assert_null(strstr(html, "<script>_s"));
    assert_int_equal(count(html, "<script"), pd_uplot_embedded ? 1 : 0);
    assert_null(strstr(html, "<h&>"));
    assert_null(strstr(html, "<p>,"));
    assert_null(strstr(html, "<t>"));
    assert_null(strstr(html, "'q'"));
    assert_non_null(strstr(html, "&lt;b&gt;&amp;&quot;"));
    assert_non_null(strstr(html, "data-var=\"&lt;b&gt;&amp;&quot;\""));
    assert_non_null(strstr(html, "data-metric=\"t&lt;script&gt;_s\""));
    assert_non_null(strstr(html, "&#39;q&#39;"));
    assert_non_null(strstr(html, "data-series=\"&lt;h&amp;&gt;\""));
    assert_non_null(strstr(html, "data-policy=\"&lt;p&gt;\""));
    /* the host's name in the time series' JSON: JSON-quoted, then escaped */
    if (pd_uplot_embedded)
        assert_non_null(strstr(html, "{&quot;name&quot;:&quot;&lt;h&amp;&gt;&quot;,&quot;t&quot;:[0.0,1.0]"));
    /* 2 swept vars x 1 metric, 1 heatmap of 2x2, CPU+memory series, 1 policy */
    assert_int_equal(count(html, "class=\"pd-chart pd-line\""), 2);
    assert_int_equal(count(html, "class=\"pd-cell\""), 4);
    assert_int_equal(count(html, "class=\"pd-chart pd-ts\""), 2);
    assert_int_equal(count(html, "class=\"pd-bar\""), 2);
    free(html);
    pd_str_free(&run);
    rm_rf(tmp);
    free(tmp);
}

/* ---------- missing and bad files ---------- */

/* A directory that holds no run (issue #15): an error naming it, not an
 * empty report; a workdir's run_NNN directories are named to pass instead. */
static void test_empty_run_dir(void **state)
{
    (void)state;
    char *tmp = make_tmpdir();
    pd_str run = {0}, out = {0};
    pd_str_printf(&run, "%s/run_002", tmp);
    pd_str_printf(&out, "%s/r.html", tmp);
    assert_int_equal(pd_mkdir_p(run.data, 0755), 0);
    char err[1024] = "";
    assert_int_equal(pd_report_write(run.data, out.data, err, sizeof err), -1);
    assert_non_null(strstr(err, "run_002 holds no run: no exec_NNNN directory in it or in its runs/"));
    assert_int_equal(access(out.data, F_OK), -1);
    assert_int_equal(pd_report_write(tmp, out.data, err, sizeof err), -1);
    assert_non_null(strstr(err, "holds no run"));
    assert_non_null(strstr(err, "pass a run directory: "));
    assert_non_null(strstr(err, "/run_002"));
    pd_str_free(&run);
    pd_str_free(&out);
    rm_rf(tmp);
    free(tmp);
}

static void test_summary_and_traces_missing(void **state)
{
    (void)state;
    char *tmp = make_tmpdir();
    put(tmp, "run/results.csv",
        "execution_id,repetition,n,mode,t_s,note\nexec_0001,1,1,a,1,ok\nexec_0002,1,2,a,2,ok\n"
        "exec_0003,1,1,b,3,ok\nexec_0004,1,2,b,x,bad\n");
    put(tmp, "run/exec_0001/__iops_params.json", "{\"n\": 1, \"mode\": \"a\"}");
    put(tmp, "run/exec_0002/__iops_params.json", "not json");
    put(tmp, "run/exec_0001/repetition_001/__iops_status.json", "{\"status\": \"succeeded\", \"duration_s\": 1.5}");
    put(tmp, "run/exec_0002/repetition_001/paddiser_tasks.csv", "policy,task\np,t\n");
    pd_str run = {0};
    pd_str_printf(&run, "%s/run", tmp);
    char *html = report_of(run.data, tmp);
    /* t_s holds "x": not numeric, so no metric plots; note column too */
    assert_non_null(strstr(html, "Non-numeric columns (not plotted): t_s, note."));
    assert_non_null(strstr(html, "__iops_resource_summary.csv could not be read"));
    assert_non_null(strstr(html, "1 __iops_params.json files could not be parsed"));
    assert_non_null(strstr(html, "No trace files in any repetition"));
    assert_non_null(strstr(html, "Cannot use exec_0002/repetition_001/paddiser_tasks.csv: no time_s column"));
    assert_int_equal(count(html, "class=\"pd-chart"), 0);
    assert_null(strstr(html, "<script")); /* no time series: no uPlot */
    free(html);
    pd_str_free(&run);
    rm_rf(tmp);
    free(tmp);
}

/* The time-series figures carry their series as JSON for uPlot (issue #17
 * item 3): one per pd-ts chart, with the points the SVG draws; the uPlot
 * script and CSS are inlined once, and a page without time series has
 * neither. Without uPlot in this build, the page says why instead. */
static void test_live_time_series(void **state)
{
    (void)state;
    char *tmp = make_tmpdir();
    char *html = report_of(fixture_dir(), tmp);
    size_t nts = count(html, "class=\"pd-chart pd-ts\"");
    assert_int_equal(nts, 43);
    if (!pd_uplot_embedded) {
        assert_int_equal(count(html, "data-pd-ts="), 0);
        assert_non_null(strstr(html, "this paddiser was built without uPlot"));
        assert_null(strstr(html, "<script"));
        goto done;
    }
    assert_int_equal(count(html, "<figure class=\"pd-ts-fig\" data-pd-ts=\""), nts);
    assert_int_equal(count(html, "<script>//<![CDATA["), 1);
    assert_int_equal(count(html, "/*<![CDATA[*/"), 1);
    assert_int_equal(count(html, "window.pdUplots"), 1);
    assert_non_null(strstr(html, "Copyright (c) 2022 Leon Sorokin")); /* uPlot's MIT notice */
    assert_non_null(strstr(html, "drag across a chart to zoom"));
    /* the first figure's JSON: exec_0001's CPU chart, one host, t and y alike */
    const char *a = strstr(html, "data-pd-ts=\"") + strlen("data-pd-ts=\"");
    const char *e = strchr(a, '"');
    pd_str raw = {0};
    for (const char *p = a; p < e; p++) {
        static const struct {
            const char *ent;
            char c;
        } ents[] = {{"&quot;", '"'}, {"&amp;", '&'}, {"&lt;", '<'}, {"&gt;", '>'}, {"&#39;", '\''}};
        bool done = false;
        for (size_t k = 0; k < PD_ARRAY_LEN(ents) && !done; k++)
            if (!strncmp(p, ents[k].ent, strlen(ents[k].ent))) {
                pd_str_appendn(&raw, &ents[k].c, 1);
                p += strlen(ents[k].ent) - 1;
                done = true;
            }
        if (!done)
            pd_str_appendn(&raw, p, 1);
    }
    json_error_t jerr;
    json_t *d = json_loads(raw.data, 0, &jerr);
    if (!d)
        fail_msg("data-pd-ts is not JSON: %s", jerr.text);
    assert_string_equal(json_string_value(json_object_get(d, "title")), "CPU utilisation");
    json_t *ser = json_object_get(d, "series");
    assert_int_equal(json_array_size(ser), 1);
    json_t *s0 = json_array_get(ser, 0);
    assert_string_equal(json_string_value(json_object_get(s0, "name")), "node01");
    size_t nt = json_array_size(json_object_get(s0, "t"));
    assert_true(nt >= 2);
    assert_int_equal(json_array_size(json_object_get(s0, "y")), nt);
    json_decref(d);
    pd_str_free(&raw);
done:
    free(html);
    rm_rf(tmp);
    free(tmp);
}

static void test_no_params_infers_vars(void **state)
{
    (void)state;
    char *tmp = make_tmpdir();
    put(tmp, "run/results.csv",
        "execution_id,repetition,n,t_s\nexec_0001,1,1,1\nexec_0001,2,1,1.5\nexec_0002,1,2,2\n");
    put(tmp, "run/__iops_resource_summary.csv",
        "execution_id,repetition,n,cpu_avg_pct,mem_peak_gb\nexec_0001,1,1,50,1\nexec_0001,2,1,55,1\n"
        "exec_0002,1,2,70,2\n");
    pd_str run = {0};
    pd_str_printf(&run, "%s/run", tmp);
    char *html = report_of(run.data, tmp);
    assert_non_null(strstr(html, "the columns results.csv and the summary share"));
    /* t_s, cpu_avg_pct and mem_peak_gb against n; one var: no heatmap */
    assert_int_equal(count(html, "class=\"pd-chart pd-line\""), 3);
    assert_int_equal(count(html, "class=\"pd-chart pd-heatmap\""), 0);
    assert_non_null(strstr(html, "Heatmaps need two swept variables"));
    free(html);
    pd_str_free(&run);
    rm_rf(tmp);
    free(tmp);
}

/* The same without params files, results.csv in IOPS's flattened layout
 * (paddiser's default): its vars.* columns are the variables. */
static void test_no_params_flattened_results(void **state)
{
    (void)state;
    char *tmp = make_tmpdir();
    put(tmp, "run/results.csv",
        "benchmark.name,execution.execution_id,execution.repetition,vars.n,metadata.executor_status,metrics.t_s\n"
        "b,1,1,1,SUCCEEDED,1\nb,1,2,1,SUCCEEDED,1.5\nb,2,1,2,SUCCEEDED,2\n");
    put(tmp, "run/__iops_resource_summary.csv",
        "execution_id,repetition,n,cpu_avg_pct,mem_peak_gb\nexec_0001,1,1,50,1\nexec_0001,2,1,55,1\n"
        "exec_0002,1,2,70,2\n");
    pd_str run = {0};
    pd_str_printf(&run, "%s/run", tmp);
    char *html = report_of(run.data, tmp);
    assert_non_null(strstr(html, "results.csv&#39;s vars.* columns"));
    /* t_s, cpu_avg_pct and mem_peak_gb against n, as with the short layout */
    assert_int_equal(count(html, "class=\"pd-chart pd-line\""), 3);
    free(html);
    pd_str_free(&run);
    rm_rf(tmp);
    free(tmp);
}

static void test_three_vars_and_log_axis(void **state)
{
    (void)state;
    char *tmp = make_tmpdir();
    pd_str csv = {0};
    pd_str_append(&csv, "execution_id,repetition,size,threads,mode,bw_mbs\n");
    int e = 0;
    for (int s = 1; s <= 64; s *= 2)
        for (int t = 1; t <= 3; t++)
            for (int m = 0; m < 2; m++) {
                e++;
                for (int r = 1; r <= 2; r++)
                    pd_str_printf(&csv, "exec_%04d,%d,%d,%d,%s,%d\n", e, r, s, t, m ? "b" : "a", s * t + r);
                pd_str p = {0}, j = {0};
                pd_str_printf(&p, "run/exec_%04d/__iops_params.json", e);
                pd_str_printf(&j, "{\"size\": %d, \"threads\": %d, \"mode\": \"%s\"}", s, t, m ? "b" : "a");
                put(tmp, p.data, j.data);
                pd_str_free(&p);
                pd_str_free(&j);
            }
    put(tmp, "run/results.csv", csv.data);
    pd_str run = {0};
    pd_str_printf(&run, "%s/run", tmp);
    char *html = report_of(run.data, tmp);
    assert_int_equal(count(html, "class=\"pd-chart pd-line\""), 3);
    assert_int_equal(count(html, "class=\"pd-chart pd-heatmap\""), 3); /* 3 variable pairs */
    assert_int_equal(count(html, "class=\"pd-cell\""), 7 * 3 + 7 * 2 + 3 * 2);
    /* size 1..64 is geometric: log axis; threads 1..3 is not */
    assert_int_equal(count(html, "log x axis"), 1);
    assert_non_null(strstr(html, "one line per value of threads; aggregated over mode; log x axis."));
    assert_non_null(strstr(html, "Mean over repetitions and over mode."));
    assert_non_null(strstr(html, "1 numeric metric."));
    /* 3 swept variables: parallel coordinates, one line per execution */
    assert_int_equal(count(html, "class=\"pd-chart pd-parcoords\""), 1);
    assert_int_equal(count(html, "class=\"pd-line-path pd-pc-line\""), 7 * 3 * 2);
    assert_non_null(strstr(html, "<title>exec_0042: size=64, threads=3, mode=b \xE2\x86\x92 193.5</title>"));
    free(html);
    pd_str_free(&csv);
    pd_str_free(&run);
    rm_rf(tmp);
    free(tmp);
}

static void test_write_errors(void **state)
{
    (void)state;
    char err[512];
    assert_int_equal(pd_report_write("/nonexistent/run_9", NULL, err, sizeof err), -1);
    assert_non_null(strstr(err, "/nonexistent/run_9"));
    assert_int_equal(pd_report_write("/etc/hostname", NULL, err, sizeof err), -1);
    assert_non_null(strstr(err, "not a directory"));
    assert_int_equal(pd_report_write(fixture_dir(), "/nonexistent/dir/r.html", err, sizeof err), -1);
    assert_non_null(strstr(err, "cannot write /nonexistent/dir/r.html"));
}

/* ---------- huge traces are downsampled ---------- */

static void test_huge_trace_downsampled(void **state)
{
    (void)state;
    char *tmp = make_tmpdir();
    pd_str csv = {0};
    pd_str_append(&csv, "timestamp,hostname,core,cpu_user_pct,cpu_system_pct,cpu_idle_pct,mem_total_kb,"
                        "mem_available_kb\n");
    for (int i = 0; i < 20000; i++)
        pd_str_printf(&csv, "%d,h,0,%d,0,0,100,50\n", 1000 + i, i == 12345 ? 99 : 10);
    put(tmp, "run/exec_0001/repetition_001/__iops_trace_h_1.csv", csv.data);
    put(tmp, "run/exec_0001/repetition_001/__iops_gpu_trace_h_1.csv", "timestamp,hostname\n\"open\n");
    pd_str run = {0};
    pd_str_printf(&run, "%s/run", tmp);
    char *html = report_of(run.data, tmp);
    const char *chart = strstr(html, "data-metric=\"cpu_total_pct\"");
    assert_non_null(chart);
    const char *path = strstr(chart, "class=\"pd-line-path\" d=\"");
    assert_non_null(path);
    const char *end = strchr(path + 24, '"');
    size_t points = 0;
    for (const char *p = path + 24; p < end; p++)
        points += *p == 'L' || *p == 'M';
    assert_true(points <= 2 * 400 + 2);
    assert_true(points >= 400);
    assert_non_null(strstr(html, "Downsampled to the min and max of 400 time buckets."));
    assert_non_null(strstr(html, "Unreadable trace files: __iops_gpu_trace_h_1.csv: unterminated quoted field."));
    assert_null(strstr(html, tmp));
    free(html);
    pd_str_free(&csv);
    pd_str_free(&run);
    rm_rf(tmp);
    free(tmp);
}

/* ---------- data helpers ---------- */

static void test_downsample_keeps_extremes(void **state)
{
    (void)state;
    enum { N = 10000 };
    double *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y), *ox, *oy;
    for (int i = 0; i < N; i++) {
        x[i] = i;
        y[i] = i == 5000 ? 1000 : i == 7000 ? -1000 : (i % 7);
    }
    size_t n = pd_rep_downsample(x, y, N, 50, &ox, &oy);
    assert_true(n <= 102);
    double mx = -INFINITY, mn = INFINITY;
    for (size_t i = 0; i < n; i++) {
        mx = fmax(mx, oy[i]);
        mn = fmin(mn, oy[i]);
        if (i)
            assert_true(ox[i] > ox[i - 1]);
    }
    assert_true(mx == 1000 && mn == -1000);
    assert_true(ox[0] == 0 && ox[n - 1] == N - 1);
    free(ox);
    free(oy);
    n = pd_rep_downsample(x, y, 10, 50, &ox, &oy);
    assert_int_equal(n, 10);
    assert_memory_equal(oy, y, 10 * sizeof *y);
    free(ox);
    free(oy);
    free(x);
    free(y);
}

static void test_traces_of_fixture(void **state)
{
    (void)state;
    pd_str d = {0};
    pd_rep_traces tr;
    pd_str_printf(&d, "%s/exec_0005/repetition_001", fixture_dir());
    pd_rep_traces_load(d.data, &tr);
    assert_int_equal(tr.ncpu_files, 2);
    assert_int_equal(tr.cpu.n, 2);
    assert_string_equal(tr.cpu.s[0].name, "node01");
    assert_string_equal(tr.cpu.s[1].name, "node02");
    assert_int_equal(tr.cpu.s[0].n, 12); /* 4 cores per instant merged */
    assert_true(tr.cpu.s[0].t[0] == 0);  /* relative to the first sample */
    assert_int_equal(tr.mem.n, 2);
    assert_int_equal(tr.gpu_util.n, 1);
    assert_string_equal(tr.gpu_util.s[0].name, "gpu0");
    assert_int_equal(tr.io.n, 4); /* block + nfs, read + write */
    assert_string_equal(tr.io.s[0].name, "block read");
    assert_string_equal(tr.io.s[3].name, "nfs write");
    /* 30 MiB read in a 1.002 s interval at sample 2 */
    assert_true(fabs(tr.io.s[0].y[1] - 30.0) < 1e-4);
    assert_int_equal(tr.nbad_rows, 0);
    pd_rep_traces_free(&tr);
    pd_str_clear(&d);
    pd_str_printf(&d, "%s/exec_0001/repetition_001", fixture_dir());
    pd_rep_traces_load(d.data, &tr);
    assert_int_equal(tr.nbad_rows, 1); /* the [N/A] power row */
    assert_int_equal(tr.gpu_power.s[0].n, 11);
    pd_rep_traces_free(&tr);
    pd_str_clear(&d);
    pd_str_printf(&d, "%s/exec_0009/repetition_001", fixture_dir());
    pd_rep_traces_load(d.data, &tr);
    assert_int_equal(tr.ngpu_files, 0);
    assert_int_equal(tr.gpu_util.n, 0);
    pd_rep_traces_free(&tr);
    pd_str_free(&d);
}

/* Loading with downsampling while streaming gives exactly what downsampling
 * the whole series gives, also when rows come out of time order, spread over
 * two files of one host, next to a file that breaks part way (its rows count
 * for nothing). */
static void test_traces_reduced_while_streaming(void **state)
{
    (void)state;
    char *tmp = make_tmpdir();
    const char *hdr = "timestamp,hostname,core,cpu_user_pct,cpu_system_pct,cpu_idle_pct,mem_total_kb,"
                      "mem_available_kb\n";
    pd_str a = {0}, b = {0}, bad = {0};
    pd_str_append(&a, hdr);
    pd_str_append(&b, hdr);
    pd_str_append(&bad, hdr);
    for (int i = 0; i < 3000; i++) {
        /* file a: instants 0..2999, two cores each, every 7th instant out of order */
        int t = i % 7 == 3 && i + 1 < 3000 ? i + 1 : i % 7 == 4 ? i - 1 : i;
        for (int core = 0; core < 2; core++)
            pd_str_printf(&a, "%d.5,h,%d,%d,1,0,4000,%d\n", 1000 + t, core, (t * 37 + core * 11) % 97,
                          1000 + (t * 13) % 2000);
        pd_str_printf(&b, "%d.5,h,0,%d,2,0,4000,1000\n", 4000 + i, (i * 53) % 89);
    }
    pd_str_append(&bad, "999,h,0,50,0,0,4000,1000\n2000,h,0,\"open\n");
    put(tmp, "r/__iops_trace_h_1.csv", a.data);
    put(tmp, "r/__iops_trace_h_2.csv", b.data);
    put(tmp, "r/__iops_trace_h_3.csv", bad.data);
    pd_str dir = {0};
    pd_str_printf(&dir, "%s/r", tmp);
    pd_rep_traces full, red;
    pd_rep_traces_load(dir.data, &full);
    pd_rep_traces_load_reduced(dir.data, 50, &red);
    assert_non_null(strstr(full.problems.data, "__iops_trace_h_3.csv: unterminated quoted field."));
    assert_string_equal(full.problems.data, red.problems.data);
    assert_int_equal(full.cpu.n, 1);
    assert_int_equal(full.cpu.s[0].n, 6000);
    assert_int_equal(full.cpu.s[0].n_raw, 6000);
    assert_true(full.cpu.s[0].t[0] == 0); /* the broken file's earlier row does not count */
    for (size_t k = 1; k < full.cpu.s[0].n; k++)
        assert_true(full.cpu.s[0].t[k] > full.cpu.s[0].t[k - 1]);
    const pd_rep_tsset *fs[] = {&full.cpu, &full.mem}, *rs[] = {&red.cpu, &red.mem};
    for (size_t k = 0; k < 2; k++) {
        assert_int_equal(fs[k]->n, 1);
        assert_int_equal(rs[k]->n, 1);
        double *x, *y;
        size_t n = pd_rep_downsample(fs[k]->s[0].t, fs[k]->s[0].y, fs[k]->s[0].n, 50, &x, &y);
        assert_true(n <= 102);
        assert_int_equal(rs[k]->s[0].n, n);
        assert_int_equal(rs[k]->s[0].n_raw, fs[k]->s[0].n);
        assert_memory_equal(rs[k]->s[0].t, x, n * sizeof *x);
        assert_memory_equal(rs[k]->s[0].y, y, n * sizeof *y);
        free(x);
        free(y);
    }
    pd_rep_traces_free(&full);
    pd_rep_traces_free(&red);
    pd_str_free(&a);
    pd_str_free(&b);
    pd_str_free(&bad);
    pd_str_free(&dir);
    rm_rf(tmp);
    free(tmp);
}

static void test_tables_and_tasks(void **state)
{
    (void)state;
    char err[512];
    pd_str p = {0};
    char *vars[] = {"threads", "backend", "absent"};
    pd_rep_table t;
    pd_str_printf(&p, "%s/results.csv", fixture_dir());
    assert_int_equal(pd_rep_table_load(p.data, vars, 3, &t, err, sizeof err), 0);
    assert_int_equal(t.nvars, 2);
    assert_int_equal(t.nmetrics, 2);
    assert_int_equal(t.nrows, 18);
    int m = pd_rep_table_metric(&t, "time_s");
    assert_true(m >= 0);
    assert_true(isnan(t.vals[15 * t.nmetrics + (size_t)m])); /* failed repetition */
    char **vals;
    bool numeric;
    size_t n = pd_rep_distinct(&t, 1, &vals, &numeric);
    assert_int_equal(n, 3);
    assert_false(numeric);
    assert_string_equal(vals[0], "dram"); /* first-seen order */
    pd_rep_names_free(vals);
    pd_rep_table_free(&t);

    pd_rep_tasks tk;
    pd_str_clear(&p);
    pd_str_printf(&p, "%s/exec_0005/repetition_001/paddiser_tasks.csv", fixture_dir());
    assert_int_equal(pd_rep_tasks_load(p.data, &tk, err, sizeof err), 0);
    assert_int_equal(tk.n, 3);
    assert_string_equal(tk.p[2].policy, "merchandiser");
    assert_int_equal(tk.p[0].n, 8);
    pd_rep_tasks_free(&tk);
    assert_int_equal(pd_rep_table_load("/nonexistent.csv", vars, 3, &t, err, sizeof err), -1);
    pd_str_free(&p);

    double v[] = {1, 2, 3, NAN}, mean, sd;
    assert_int_equal(pd_rep_mean_sd(v, 4, &mean, &sd), 3);
    assert_true(mean == 2 && sd == 1);
}

/* ---------- SVG helpers ---------- */

static void test_nice_ticks_and_format(void **state)
{
    (void)state;
    double t[32], step;
    size_t n = pd_svg_nice_ticks(0, 9.3, 5, t, 32, &step);
    assert_int_equal(n, 6);
    assert_true(t[0] == 0 && t[5] == 10 && step == 2);
    n = pd_svg_nice_ticks(0.31, 0.69, 5, t, 32, &step);
    assert_true(step == 0.1 && n == 5);
    assert_true(fabs(t[0] - 0.3) < 1e-12);
    n = pd_svg_nice_ticks(5, 5, 5, t, 32, &step); /* degenerate range */
    assert_true(n >= 2 && t[0] <= 5 && t[n - 1] >= 5);
    assert_int_equal(pd_svg_nice_ticks(NAN, 1, 5, t, 32, &step), 0);
    char b[48];
    pd_svg_fmt(b, sizeof b, 0.30000000000000004, 0.1);
    assert_string_equal(b, "0.3");
    pd_svg_fmt(b, sizeof b, 1500, 500);
    assert_string_equal(b, "1500");
    pd_svg_fmt(b, sizeof b, -0.0001, 0.5);
    assert_string_equal(b, "-0.0001");
    pd_svg_fmt(b, sizeof b, -0.01, 0.5);
    assert_string_equal(b, "0.0"); /* no "-0.0" */
    pd_svg_fmt(b, sizeof b, NAN, 0);
    assert_string_equal(b, "n/a");
    pd_svg_fmt(b, sizeof b, 12345678, 0);
    assert_string_equal(b, "12345678");
    pd_svg_fmt(b, sizeof b, 2.5e13, 0);
    assert_string_equal(b, "2.5e+13");
}

static void test_units_escape_colour(void **state)
{
    (void)state;
    assert_string_equal(pd_svg_unit_of("mem_peak_gb"), "GiB");
    assert_string_equal(pd_svg_unit_of("io_write_mbs_active"), "MiB/s");
    assert_string_equal(pd_svg_unit_of("cpu_avg_pct"), "%");
    assert_string_equal(pd_svg_unit_of("gpu_energy_j"), "J");
    assert_string_equal(pd_svg_unit_of("time_s"), "s");
    assert_string_equal(pd_svg_unit_of("gpu_mem_peak_mib"), "MiB");
    assert_string_equal(pd_svg_unit_of("score"), "");
    pd_str s = {0};
    pd_html_escape(&s, "<b>&\"'x\x01");
    assert_string_equal(s.data, "&lt;b&gt;&amp;&quot;&#39;x ");
    pd_str_free(&s);
    char c[8];
    pd_svg_colour(0, c);
    assert_string_equal(c, "#440154");
    pd_svg_colour(1, c);
    assert_string_equal(c, "#fde725");
    pd_svg_colour(NAN, c);
    assert_string_equal(c, "#440154");
}

static void test_xy_chart_markup(void **state)
{
    (void)state;
    double x[] = {1, 2, 4}, y[] = {1, NAN, 3}, e[] = {0.5, 0, 0};
    pd_svg_series se = {.name = "s<1>", .n = 3, .x = x, .y = y, .err = e};
    pd_svg_xy c = {.kind = "pd-line", .metric = "m", .title = "T", .xlabel = "x", .ylabel = "y",
                   .xticks = x, .nxticks = 3, .markers = true, .series = &se, .nseries = 1};
    pd_str s = {0};
    pd_svg_xy_chart(&s, &c);
    assert_int_equal(count(s.data, "<circle class=\"pd-point\""), 2); /* NaN skipped */
    assert_int_equal(count(s.data, "class=\"pd-err\""), 1);
    assert_null(strstr(s.data, "class=\"pd-line-path\"")); /* the gap leaves no segment */
    assert_non_null(strstr(s.data, "data-series=\"s&lt;1&gt;\""));
    assert_int_equal(count(s.data, "<svg"), 1);
    assert_int_equal(count(s.data, "</svg>"), 1);
    pd_str_free(&s);
    /* no finite point: a frame that says so */
    double ny[] = {NAN, NAN, NAN};
    se.y = ny;
    pd_svg_xy_chart(&s, &c);
    assert_non_null(strstr(s.data, ">no data</text>"));
    pd_str_free(&s);
}

/* The makespan line's label sits above the line, inside the plot (the
 * title is above the plot's top, 34 px): a makespan at the top tick puts
 * it below the line instead (the report's chromium check found it over
 * the title of a placement chart at 390 px). */
static void test_bar_refline_label_stays_in_the_plot(void **state)
{
    (void)state;
    const char *labels[] = {"task 0", "task 1"};
    double v[] = {1, 2};
    for (int at_top = 0; at_top < 2; at_top++) {
        pd_svg_bars b = {.metric = "time_s", .title = "Per-task time", .labels = labels, .n = 2, .v = v,
                         .refline = at_top ? 2.0 : 1.0, .reflabel = "makespan"};
        pd_str s = {0};
        pd_svg_bar_chart(&s, &b);
        const char *lab = strstr(s.data, "class=\"pd-refline-label\"");
        const char *line = strstr(s.data, "class=\"pd-makespan\"");
        assert_non_null(lab);
        assert_non_null(line);
        double ly = 0, y1 = 0;
        const char *p = strstr(lab, " y=\"");
        assert_non_null(p);
        ly = strtod(p + 4, NULL);
        p = strstr(line, " y1=\"");
        assert_non_null(p);
        y1 = strtod(p + 5, NULL);
        print_message("makespan at %s: line y %.1f, label baseline %.1f\n", at_top ? "the top tick" : "mid-plot", y1, ly);
        assert_true(ly - 11 >= 34); /* the label's top is inside the plot */
        if (at_top)
            assert_true(ly > y1); /* below the line */
        else
            assert_true(ly < y1); /* above it */
        pd_str_free(&s);
    }
}

/* The README demo's study (tests/fixtures/report/membw_demo/README.md):
 * issue #17's defects of its report. */
static void test_membw_demo_defects(void **state)
{
    (void)state;
    char run[600];
    const char *t = getenv("TESTS_DIR");
    snprintf(run, sizeof run, "%s/fixtures/report/membw_demo", t ? t : "tests");
    char *dir = make_tmpdir();
    char *html = report_of(run, dir);
    /* elements follows size_mib: no chart against it, no heatmap axis */
    assert_null(strstr(html, "data-var=\"elements\""));
    assert_null(strstr(html, "\xC3\x97 elements"));
    assert_non_null(strstr(html, "Variable elements follows size_mib"));
    assert_null(strstr(html, "e+05"));
    /* 2 metrics x 2 variables; 7 varying resource metrics x 2; heatmaps of
     * size_mib x threads only: 2 benchmark metrics, mem_peak_gb, cpu_avg_pct */
    assert_int_equal(count(html, "class=\"pd-chart pd-line\""), 4 + 14);
    assert_int_equal(count(html, "class=\"pd-chart pd-heatmap\""), 2 + 2);
    assert_null(strstr(html, "pd-cell-missing"));
    /* exec_0005's stddev exceeds its mean: the axis still starts at 0 */
    assert_null(strstr(html, "data-y-lo=\"-"));
    assert_null(strstr(html, "text-anchor=\"end\">-"));
    /* exec_0001, 0002 and 0004 have one trace sample: no empty chart, one note */
    assert_null(strstr(html, "class=\"pd-nodata\""));
    assert_int_equal(count(html, "No time series for exec_0001, exec_0002, exec_0004"), 1);
    assert_int_equal(count(html, "No GPU trace"), 1);
    assert_int_equal(count(html, "class=\"pd-chart pd-ts\""), 3 * 2);
    assert_non_null(strstr(html, "name=\"viewport\""));
    /* first screen: exec_0002 (16 MiB, 2 threads) is best in bandwidth
     * (highest) and best_time_s (lowest), with its command */
    const char *summary = strstr(html, "<section id=\"pd-summary\">");
    assert_non_null(summary);
    assert_true(summary < strstr(html, "<section id=\"pd-overview\">"));
    assert_int_equal(count(html, "<tr><td class=\"pd-num\">1</td><td>exec_0002</td>"), 2);
    assert_non_null(strstr(html, "(highest mean first)"));
    assert_non_null(strstr(html, "(lowest mean first)"));
    assert_non_null(strstr(html, "<code class=\"pd-cmd\">/home/user/paddiser/build/membw-triad -n 699050 -r 20 -o "
                                 "/home/user/paddiser/workdir/run_001/exec_0002/repetition_001/triad.json</code>"));
    assert_non_null(strstr(html, "class=\"pd-table pd-impact\""));
    /* box plots: 2 metrics x 6 executions, every repetition a point */
    assert_int_equal(count(html, "class=\"pd-chart pd-box\""), 2);
    assert_int_equal(count(html, "class=\"pd-boxrect\""), 12);
    assert_int_equal(count(html, "(2 of 2)</title></circle>"), 12);
    assert_null(strstr(html, "<th>elements</th></tr></thead><tbody>\n<tr><td>bandwidth_mbs")); /* derived: no column */
    free(html);
    rm_rf(dir);
    free(dir);
}

static void test_tick_labels_and_clamped_errors(void **state)
{
    (void)state;
    char b[48];
    pd_svg_fmt_tick(b, sizeof b, 699050, 0);
    assert_string_equal(b, "699k");
    pd_svg_fmt_tick(b, sizeof b, 140000, 20000);
    assert_string_equal(b, "140k");
    pd_svg_fmt_tick(b, sizeof b, 2796202, 0);
    assert_string_equal(b, "2.80M");
    pd_svg_fmt_tick(b, sizeof b, 10500, 500);
    assert_string_equal(b, "10.5k");
    pd_svg_fmt_tick(b, sizeof b, 9000, 1000);
    assert_string_equal(b, "9000");
    /* mean 10 +/- 30: the bar and the axis stop at 0; 95 +/- 20 % at 100 */
    double x[] = {1, 2}, y[] = {10, 20}, e[] = {30, 1};
    pd_svg_series se = {.n = 2, .x = x, .y = y, .err = e};
    pd_svg_xy c = {.kind = "pd-line", .metric = "bandwidth_mbs", .title = "T", .xlabel = "x", .ylabel = "y",
                   .xticks = x, .nxticks = 2, .series = &se, .nseries = 1};
    pd_str s = {0};
    pd_svg_xy_chart(&s, &c);
    assert_non_null(strstr(s.data, "data-y-lo=\"0\" data-data-lo=\"10\""));
    pd_str_free(&s);
    double yp[] = {95, 50}, ep[] = {20, 1};
    se.y = yp;
    se.err = ep;
    c.metric = "cpu_max_pct";
    pd_svg_xy_chart(&s, &c);
    assert_non_null(strstr(s.data, ">100</text>"));
    assert_null(strstr(s.data, ">120</text>"));
    pd_str_free(&s);
    /* negative data keep their negative axis */
    double yn[] = {-5, 5}, en[] = {0, 0};
    se.y = yn;
    se.err = en;
    c.metric = "delta";
    pd_svg_xy_chart(&s, &c);
    assert_non_null(strstr(s.data, "data-y-lo=\"-"));
    pd_str_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixture_element_counts),
        cmocka_unit_test(test_deterministic),
        cmocka_unit_test(test_default_output_path_and_cli),
        cmocka_unit_test(test_hostile_names_escaped),
        cmocka_unit_test(test_empty_run_dir),
        cmocka_unit_test(test_summary_and_traces_missing),
        cmocka_unit_test(test_live_time_series),
        cmocka_unit_test(test_no_params_infers_vars),
        cmocka_unit_test(test_no_params_flattened_results),
        cmocka_unit_test(test_three_vars_and_log_axis),
        cmocka_unit_test(test_write_errors),
        cmocka_unit_test(test_huge_trace_downsampled),
        cmocka_unit_test(test_downsample_keeps_extremes),
        cmocka_unit_test(test_traces_of_fixture),
        cmocka_unit_test(test_traces_reduced_while_streaming),
        cmocka_unit_test(test_tables_and_tasks),
        cmocka_unit_test(test_nice_ticks_and_format),
        cmocka_unit_test(test_units_escape_colour),
        cmocka_unit_test(test_xy_chart_markup),
        cmocka_unit_test(test_bar_refline_label_stays_in_the_plot),
        cmocka_unit_test(test_membw_demo_defects),
        cmocka_unit_test(test_tick_labels_and_clamped_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
