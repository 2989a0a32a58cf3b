/* Tests of src/bench/config.c and study.c: schema errors with file:line:key,
 * the execution matrix (sweeps, derived vars, constraints), rendering and
 * the probe block position. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "bench/config.h"
#include "bench/metrics.h"
#include "bench/run.h"
#include "bench/study.h"

static const char *good =
    "benchmark:\n"                                     /* 1 */
    "  name: demo\n"                                   /* 2 */
    "  workdir: /tmp/pd-bench-test\n"                  /* 3 */
    "  repetitions: 2\n"                               /* 4 */
    "  parallel: 3\n"                                  /* 5 */
    "vars:\n"                                          /* 6 */
    "  nodes:\n"                                       /* 7 */
    "    type: int\n"                                  /* 8 */
    "    sweep: {mode: range, start: 1, end: 4, step: 1}\n" /* 9 */
    "  ppn:\n"                                         /* 10 */
    "    type: int\n"                                  /* 11 */
    "    sweep: {mode: list, values: [2, '4']}\n"      /* 12 */
    "  label:\n"                                       /* 13 */
    "    type: str\n"                                  /* 14 */
    "    sweep: {mode: list, values: [x]}\n"           /* 15 */
    "  ntasks:\n"                                      /* 16 */
    "    type: int\n"                                  /* 17 */
    "    expr: \"{{ nodes * ppn }}\"\n"                /* 18 */
    "  block:\n"                                       /* 19 */
    "    type: int\n"                                  /* 20 */
    "    expr: \"1024 // ntasks\"\n"                   /* 21 */
    "  out:\n"                                         /* 22 */
    "    type: str\n"                                  /* 23 */
    "    expr: \"{{ execution_dir }}/o_{{ execution_id }}_{{ repetition }}.txt\"\n" /* 24 */
    "constraints:\n"                                   /* 25 */
    "  - name: small\n"                                /* 26 */
    "    rule: \"ntasks <= 8\"\n"                      /* 27 */
    "    violation_policy: skip\n"                     /* 28 */
    "command:\n"                                       /* 29 */
    "  template: \"bench -n {{ ntasks }} -b {{ block }}\"\n" /* 30 */
    "scripts:\n"                                       /* 31 */
    "  - name: job\n"                                  /* 32 */
    "    script_template: |\n"                         /* 33 */
    "      #!/bin/bash\n"                              /* 34 */
    "      #SBATCH --nodes={{ nodes }}\n"              /* 35 */
    "\n"                                               /* 36 */
    "      #SBATCH --ntasks={{ ntasks }}\n"            /* 37 */
    "      {{ command.template }} > {{ out }}\n"       /* 38 */
    "    parser:\n"                                    /* 39 */
    "      file: \"{{ out }}\"\n"                      /* 40 */
    "      metrics:\n"                                 /* 41 */
    "        - name: bw\n"                             /* 42 */
    "        - lat\n"                                  /* 43 */
    "output:\n"
    "  sink: {type: csv, path: \"{{ workdir }}/all.csv\"}\n";

static int parse(const char *text, pd_bench_config *cfg, pd_str *errors)
{
    pd_str warnings = {0};
    int rc = pd_bench_config_parse(text, "t.yaml", "/nonexistent", cfg, errors, &warnings);
    pd_str_free(&warnings);
    return rc;
}

static void test_good_config_fields(void **state)
{
    (void)state;
    pd_bench_config cfg;
    pd_str errors = {0};
    assert_int_equal(parse(good, &cfg, &errors), 0);
    assert_string_equal(cfg.name, "demo");
    assert_string_equal(cfg.workdir, "/tmp/pd-bench-test");
    assert_int_equal(cfg.repetitions, 2);
    assert_int_equal(cfg.parallel, 3);
    assert_int_equal(cfg.executor, PD_EXEC_LOCAL);
    assert_int_equal(cfg.nvars, 6);
    assert_int_equal(cfg.vars[0].nvalues, 4);
    assert_int_equal(cfg.vars[1].values[1].kind, PD_VAL_INT); /* '4' cast to int */
    assert_int_equal(cfg.vars[1].values[1].i, 4);
    assert_int_equal(cfg.vars[3].expr.line, 18);
    assert_string_equal(cfg.vars[3].expr.key, "vars.ntasks.expr");
    assert_int_equal(cfg.script.script_template.line, 34);
    assert_int_equal(cfg.script.nmetrics, 2);
    assert_string_equal(cfg.script.metrics[1], "lat");
    assert_false(cfg.probes.cpu);
    assert_true(cfg.probes.interval_s == 1.0);
    pd_bench_config_free(&cfg);
    pd_str_free(&errors);
}

static void test_matrix_sweeps_derived_constraints(void **state)
{
    (void)state;
    pd_bench_config cfg;
    pd_str errors = {0}, warnings = {0};
    assert_int_equal(parse(good, &cfg, &errors), 0);
    pd_bench_matrix m;
    assert_int_equal(pd_bench_matrix_build(&cfg, "/w/run_001", &m, &errors, &warnings), 0);
    /* nodes 1..4 x ppn {2,4}: ntasks 2,4,4,8,6,12,8,16 -> <= 8 keeps 6. The
     * rule names a derived variable, so IOPS numbers the executions before it
     * applies it: the skipped ones (6 and 8) leave gaps */
    assert_int_equal(m.nexecs, 6);
    long want[][3] = {{1, 2, 2}, {1, 4, 4}, {2, 2, 4}, {2, 4, 8}, {3, 2, 6}, {4, 2, 8}};
    const int ids[] = {1, 2, 3, 4, 5, 7};
    for (size_t i = 0; i < m.nexecs; i++) {
        assert_int_equal(m.execs[i].id, ids[i]);
        assert_int_equal(m.execs[i].values[0].i, want[i][0]);
        assert_int_equal(m.execs[i].values[1].i, want[i][1]);
        assert_int_equal(m.execs[i].values[3].i, want[i][2]);
        assert_int_equal(m.execs[i].values[4].i, 1024 / want[i][2]);
    }
    assert_string_equal(m.execs[0].values[5].s, "/w/run_001/exec_0001/repetition_001/o_1_1.txt");

    pd_bench_rendered r;
    assert_int_equal(pd_bench_render(&cfg, "/w/run_001", &m.execs[3], 2, "/bin/probe", &r, &errors), 0);
    assert_string_equal(r.command, "bench -n 8 -b 128");
    assert_string_equal(r.script, "#!/bin/bash\n#SBATCH --nodes=2\n\n#SBATCH --ntasks=8\n"
                                  "bench -n 8 -b 128 > /w/run_001/exec_0004/repetition_002/o_4_2.txt\n");
    assert_string_equal(r.parser_file, "/w/run_001/exec_0004/repetition_002/o_4_2.txt");
    assert_string_equal(r.values[5].s, "/w/run_001/exec_0004/repetition_002/o_4_2.txt");
    pd_bench_rendered_free(&r, cfg.nvars);

    char *sink = pd_bench_sink_path(&cfg, "/w/run_001", &errors);
    assert_string_equal(sink, "/w/run_001/all.csv");
    free(sink);
    pd_bench_matrix_free(&m);
    pd_bench_config_free(&cfg);
    pd_str_free(&errors);
    pd_str_free(&warnings);
}

/* Replaces the first occurrence of from in good by to and parses; returns the
 * errors. */
static char *errors_for(const char *from, const char *to, bool build_matrix)
{
    const char *at = strstr(good, from);
    assert_non_null(at);
    pd_str text = {0};
    pd_str_appendn(&text, good, (size_t)(at - good));
    pd_str_append(&text, to);
    pd_str_append(&text, at + strlen(from));
    pd_bench_config cfg;
    pd_str errors = {0}, warnings = {0};
    int rc = parse(text.data, &cfg, &errors);
    if (rc == 0 && build_matrix) {
        pd_bench_matrix m;
        rc = pd_bench_matrix_build(&cfg, "/w/run_001", &m, &errors, &warnings);
        if (rc == 0) {
            pd_bench_rendered r;
            rc = pd_bench_render(&cfg, "/w/run_001", &m.execs[0], 1, "/p", &r, &errors);
            if (rc == 0)
                pd_bench_rendered_free(&r, cfg.nvars);
            pd_bench_matrix_free(&m);
        }
        if (rc == 0) {
            char *sink = pd_bench_sink_path(&cfg, "/w/run_001", &errors);
            if (!sink)
                rc = -1;
            free(sink);
        }
    }
    if (rc == 0)
        fail_msg("no error after replacing '%s' by '%s'", from, to);
    pd_bench_config_free(&cfg);
    pd_str_free(&text);
    pd_str_free(&warnings);
    pd_str_append(&errors, "");
    return pd_str_take(&errors);
}

#define EXPECT_ERROR(from, to, matrix, want)                                                                           \
    do {                                                                                                               \
        char *e_ = errors_for(from, to, matrix);                                                                       \
        if (!strstr(e_, want))                                                                                         \
            fail_msg("errors:\n%s\ndo not contain: %s", e_, want);                                                     \
        free(e_);                                                                                                      \
    } while (0)

static void test_schema_errors_name_line_and_key(void **state)
{
    (void)state;
    EXPECT_ERROR("  repetitions: 2\n", "  repetitions: two\n", false,
                 "t.yaml:4: benchmark.repetitions: must be an integer, found 'two'");
    EXPECT_ERROR("  repetitions: 2\n", "  repetitions: 0\n", false, "t.yaml:4: benchmark.repetitions: must be at least 1");
    EXPECT_ERROR("  parallel: 3\n", "  parallel: 3\n  executor: pbs\n", false,
                 "t.yaml:6: benchmark.executor: must be 'local' or 'slurm', found 'pbs'");
    EXPECT_ERROR("  parallel: 3\n", "  parallel: 3\n  probes:\n    resource_sampling: true\n    cpu: 1\n", false,
                 "t.yaml:8: benchmark.probes.cpu: unknown key");
    EXPECT_ERROR("  parallel: 3\n", "  parallel: 3\n  probes:\n    io_sampling: true\n", false,
                 "t.yaml:7: benchmark.probes.io_paths: required when io_sampling is true");
    EXPECT_ERROR("  parallel: 3\n", "  parallel: 3\n  probes:\n    io_sampling: true\n    io_paths: []\n", false,
                 "t.yaml:8: benchmark.probes.io_paths: required when io_sampling is true");
    EXPECT_ERROR("  parallel: 3\n", "  parallel: 3\n  probes:\n    io_paths: [/tmp]\n", false,
                 "t.yaml:7: benchmark.probes.io_paths: only valid with io_sampling: true");
    EXPECT_ERROR("  parallel: 3\n", "  parallel: 3\n  probes:\n    sampling_interval: 0\n", false,
                 "t.yaml:7: benchmark.probes.sampling_interval: must be > 0");
    EXPECT_ERROR("  parallel: 3\n", "  parallel: 3\n  probes:\n    gpu_sampling: maybe\n", false,
                 "t.yaml:7: benchmark.probes.gpu_sampling: must be true or false, found 'maybe'");
    EXPECT_ERROR("  parallel: 3\n", "  parallel: 3\n  search_method: bayesian\n", false,
                 "t.yaml:6: benchmark.bayesian_config: bayesian_config is required when search_method is 'bayesian'");
    EXPECT_ERROR("  parallel: 3\n", "  parallel: 3\n  search_method: bayesian\n  bayesian_config: {n_iterations: 4}\n",
                 false, "t.yaml:7: benchmark.bayesian_config.objective_metric: required key is missing");
    EXPECT_ERROR("  parallel: 3\n",
                 "  parallel: 3\n  search_method: bayesian\n  bayesian_config: {objective_metric: nope}\n", false,
                 "t.yaml:7: benchmark.bayesian_config.objective_metric: 'nope' is not a metric");
    EXPECT_ERROR("  parallel: 3\n",
                 "  parallel: 3\n  search_method: bayesian\n  bayesian_config:\n    objective: up\n", false,
                 "t.yaml:8: benchmark.bayesian_config.objective: must be one of: minimize, maximize (got 'up')");
    EXPECT_ERROR("  parallel: 3\n",
                 "  parallel: 3\n  search_method: bayesian\n  bayesian_config:\n    acq: EI\n", false,
                 "t.yaml:8: benchmark.bayesian_config.acq: unknown key");
    EXPECT_ERROR("  name: demo\n", "", false, "t.yaml:2: benchmark.name: required key is missing");
    EXPECT_ERROR("values: [2, '4']", "values: [2, four]", false,
                 "t.yaml:12: vars.ppn.sweep.values: 'four' is not an int (variable type is int)");
    EXPECT_ERROR("step: 1}", "step: 0}", false, "t.yaml:9: vars.nodes.sweep.step: must not be 0");
    EXPECT_ERROR("start: 1, end: 4", "start: 5, end: 4", false, "vars.nodes.sweep: range from 5 to 4 with step 1 is empty");
    EXPECT_ERROR("mode: range", "mode: grid", false, "t.yaml:9: vars.nodes.sweep.mode: must be 'list' or 'range', found 'grid'");
    EXPECT_ERROR("    type: str\n    sweep", "    type: text\n    sweep", false,
                 "t.yaml:14: vars.label.type: must be int, float, str or bool, found 'text'");
    EXPECT_ERROR("  ntasks:\n    type: int\n", "  ntasks:\n    type: int\n    sweep: {mode: list, values: [1]}\n", false,
                 "t.yaml:17: vars.ntasks: give only one of sweep, expr or adaptive");
    EXPECT_ERROR("  ppn:\n", "  repetition:\n", false, "t.yaml:10: vars.repetition: 'repetition' is a reserved name");
    EXPECT_ERROR("    violation_policy: skip", "    violation_policy: drop", false,
                 "t.yaml:28: constraints[0].violation_policy: must be skip, error or warn, found 'drop'");
    EXPECT_ERROR("  template: \"bench", "  tmpl: \"bench", false, "t.yaml:30: command.tmpl: unknown key");
    EXPECT_ERROR("  - name: job\n", "  - name: job/x\n", false, "t.yaml:32: scripts[0].name: must be letters");
    EXPECT_ERROR("        - name: bw\n        - lat\n", "        - name: bw\n        - bw\n", false,
                 "t.yaml:43: scripts[0].parser.metrics: duplicate metric 'bw'");
    EXPECT_ERROR("type: csv", "type: parquet", false,
                 "output.sink.type: parquet is not supported (Debian 12 packages no C library that writes it)");
    EXPECT_ERROR("type: csv", "type: json", false, "output.sink.type: must be csv or sqlite, found 'json'");
    EXPECT_ERROR("output:", "outputs:", false, "t.yaml:44: outputs: unknown key (expected one of: benchmark, vars");
    EXPECT_ERROR("  name: demo\n", "  name: demo\n   bad: [\n", false, "YAML syntax error");
    EXPECT_ERROR("      metrics:\n", "      parser_script: /no/such/parser.py\n      metrics:\n", false,
                 "scripts[0].parser.parser_script: appears to be a file path but the file was not found: '/no/such/parser.py'");
}

static void test_evaluation_errors_name_line_and_key(void **state)
{
    (void)state;
    EXPECT_ERROR("1024 // ntasks", "1024 // ntask", true,
                 "t.yaml:21: vars.block.expr: unknown name 'ntask' (known names: nodes ppn label ntasks execution_id");
    EXPECT_ERROR("1024 // ntasks", "1024 // (ntasks - ntasks)", true, "t.yaml:21: vars.block.expr: division by zero");
    EXPECT_ERROR("1024 // ntasks", "{{ 1024 / ntasks }}", true,
                 "t.yaml:21: vars.block.expr: variable is type int but the value is wrong: '512.0' is not an int (use "
                 "// for integer division");
    EXPECT_ERROR("ntasks <= 8", "ntasks <= limit", true, "t.yaml:27: constraints[0].rule: unknown name 'limit'");
    EXPECT_ERROR("violation_policy: skip", "violation_policy: error", true,
                 "t.yaml:27: constraints[0].rule: constraint 'small' violated by nodes=3, ppn=4, label=x, ntasks=12");
    EXPECT_ERROR("ntasks <= 8", "ntasks > 100", true, "every combination was filtered out");
    EXPECT_ERROR("      {{ command.template }}", "      {{ comand.template }}", true,
                 "t.yaml:38: scripts[0].script_template: unknown name 'comand.template'");
    EXPECT_ERROR("-b {{ block }}", "-b {{ block | nosuch }}", true, "t.yaml:30: command.template: unknown filter 'nosuch'");
    EXPECT_ERROR("file: \"{{ out }}\"", "file: \"{{ outt }}\"", true, "t.yaml:40: scripts[0].parser.file: unknown name 'outt'");
    EXPECT_ERROR("{{ workdir }}/all.csv", "{{ execution_dir }}/all.csv", true,
                 "output.sink.path: unknown name 'execution_dir'");
}

static void test_warn_policy_keeps_and_warns(void **state)
{
    (void)state;
    const char *from = "violation_policy: skip";
    const char *at = strstr(good, from);
    pd_str text = {0};
    pd_str_appendn(&text, good, (size_t)(at - good));
    pd_str_append(&text, "violation_policy: warn");
    pd_str_append(&text, at + strlen(from));
    pd_bench_config cfg;
    pd_str errors = {0}, warnings = {0};
    assert_int_equal(parse(text.data, &cfg, &errors), 0);
    pd_bench_matrix m;
    assert_int_equal(pd_bench_matrix_build(&cfg, "/w", &m, &errors, &warnings), 0);
    assert_int_equal(m.nexecs, 8);
    assert_non_null(strstr(warnings.data, "constraint 'small' violated by nodes=3, ppn=4"));
    pd_bench_matrix_free(&m);
    pd_bench_config_free(&cfg);
    pd_str_free(&text);
    pd_str_free(&errors);
    pd_str_free(&warnings);
}

static void test_probe_enabled_reports_injection_failure_or_places_block(void **state)
{
    (void)state;
    const char *from = "  parallel: 3\n";
    const char *at = strstr(good, from);
    pd_str text = {0};
    pd_str_appendn(&text, good, (size_t)(at - good));
    pd_str_append(&text, "  parallel: 3\n  probes: {resource_sampling: true, sampling_interval: 0.5}\n");
    pd_str_append(&text, at + strlen(from));
    pd_bench_config cfg;
    pd_str errors = {0}, warnings = {0};
    assert_int_equal(parse(text.data, &cfg, &errors), 0);
    assert_true(cfg.probes.cpu);
    assert_true(cfg.probes.interval_s == 0.5);
    pd_bench_matrix m;
    assert_int_equal(pd_bench_matrix_build(&cfg, "/w", &m, &errors, &warnings), 0);
    pd_bench_rendered r;
    int rc = pd_bench_render(&cfg, "/w", &m.execs[0], 1, "/opt/paddiser-probe", &r, &errors);
    if (rc != 0) { /* the probe module is not built: its message is a config error */
        assert_non_null(strstr(errors.data, "t.yaml:6: benchmark.probes: "));
    } else { /* the block sits after the #SBATCH header, before the command */
        const char *sb = strstr(r.script, "#SBATCH --ntasks=");
        const char *cmd = strstr(r.script, "\nbench -n");
        assert_non_null(sb);
        assert_non_null(cmd);
        assert_true(strstr(r.script, "paddiser-probe") > sb);
        assert_true(strstr(r.script, "paddiser-probe") < cmd);
        pd_bench_rendered_free(&r, cfg.nvars);
    }
    pd_bench_matrix_free(&m);
    pd_bench_config_free(&cfg);
    pd_str_free(&text);
    pd_str_free(&errors);
    pd_str_free(&warnings);
}

static void test_float_range_bool_and_template_exprs(void **state)
{
    (void)state;
    const char *text = "benchmark: {name: f, workdir: w}\n"
                       "vars:\n"
                       "  r: {type: float, sweep: {mode: range, start: 0.5, end: 1.5, step: 0.25}}\n"
                       "  on: {type: bool, sweep: {mode: list, values: [true, 'no']}}\n"
                       "  tag: {type: str, expr: \"r{{ r }}-{{ on }}\"}\n"
                       "  half: {type: int, expr: \"{{ (r * 10) | int }}\"}\n"
                       "  down: {type: int, sweep: {mode: range, start: 3, end: 1, step: -1}}\n"
                       "command: {template: \"x\"}\n"
                       "scripts: [{name: s, script_template: \"{{ command.template }} {{ os_env.PD_NOPE | d('-') }}\"}]\n";
    pd_bench_config cfg;
    pd_str errors = {0}, warnings = {0};
    assert_int_equal(parse(text, &cfg, &errors), 0);
    assert_int_equal(cfg.vars[0].nvalues, 5);
    assert_true(cfg.vars[0].values[4].f == 1.5);
    assert_int_equal(cfg.vars[1].values[1].kind, PD_VAL_BOOL);
    assert_false(cfg.vars[1].values[1].b);
    assert_int_equal(cfg.vars[4].nvalues, 3);
    assert_int_equal(cfg.vars[4].values[2].i, 1);
    pd_bench_matrix m;
    assert_int_equal(pd_bench_matrix_build(&cfg, "/w", &m, &errors, &warnings), 0);
    assert_int_equal(m.nexecs, 30);
    assert_string_equal(m.execs[3].values[2].s, "r0.5-False"); /* r=0.5, on=False, down=3 */
    assert_int_equal(m.execs[3].values[3].i, 5);
    assert_int_equal(m.execs[3].values[4].i, 3);
    pd_bench_rendered r;
    assert_int_equal(pd_bench_render(&cfg, "/w", &m.execs[0], 1, "/p", &r, &errors), 0);
    assert_string_equal(r.script, "#!/bin/bash\nx -");
    pd_bench_rendered_free(&r, cfg.nvars);
    pd_bench_matrix_free(&m);
    pd_bench_config_free(&cfg);
    pd_str_free(&errors);
    pd_str_free(&warnings);
}

/* With the probe module built: io_paths are rendered per repetition and
 * handed to the probe block; the sampler binary is the one given. */
static void test_io_probe_paths_rendered(void **state)
{
    (void)state;
    const char *text = "benchmark:\n"
                       "  name: io\n"
                       "  workdir: w\n"
                       "  probes:\n"
                       "    io_sampling: true\n"
                       "    io_paths: [\"{{ execution_dir }}/data_{{ n }}\", /scratch/in]\n"
                       "vars:\n"
                       "  n: {type: int, sweep: {mode: list, values: [7]}}\n"
                       "command: {template: \"true\"}\n"
                       "scripts: [{name: s, script_template: \"#!/bin/sh\\n#SBATCH -N 1\\n{{ command.template }}\\n\"}]\n";
    pd_bench_config cfg;
    pd_str errors = {0}, warnings = {0};
    assert_int_equal(parse(text, &cfg, &errors), 0);
    pd_bench_matrix m;
    assert_int_equal(pd_bench_matrix_build(&cfg, "/w/run_001", &m, &errors, &warnings), 0);
    pd_bench_rendered r;
    int rc = pd_bench_render(&cfg, "/w/run_001", &m.execs[0], 1, "/opt/pd/paddiser-probe", &r, &errors);
    if (rc != 0) {
        assert_non_null(strstr(errors.data, "not built yet")); /* placeholder probe */
    } else {
        assert_non_null(strstr(r.script, "/w/run_001/exec_0001/repetition_001/data_7"));
        assert_non_null(strstr(r.script, "/scratch/in"));
        assert_non_null(strstr(r.script, "/opt/pd/paddiser-probe"));
        assert_true(strncmp(r.script, "#!/bin/sh\n#SBATCH -N 1\n", strlen("#!/bin/sh\n#SBATCH -N 1\n")) == 0);
        assert_true(strstr(r.script, "/opt/pd/paddiser-probe") < strstr(r.script, "\ntrue\n"));
        pd_bench_rendered_free(&r, cfg.nvars);
    }
    pd_bench_matrix_free(&m);
    pd_bench_config_free(&cfg);
    pd_str_free(&errors);
    pd_str_free(&warnings);
}

static void test_insert_block(void **state)
{
    (void)state;
    char *s = pd_bench_insert_block("#!/bin/sh\n#SBATCH -N 1\n# comment\n#SBATCH -t 5\necho hi\n#SBATCH late\n", "BLOCK\n");
    assert_string_equal(s, "#!/bin/sh\n#SBATCH -N 1\n# comment\n#SBATCH -t 5\nBLOCK\necho hi\n#SBATCH late\n");
    free(s);
    s = pd_bench_insert_block("echo hi\n", "BLOCK\n");
    assert_string_equal(s, "#!/bin/bash\nBLOCK\necho hi\n");
    free(s);
    s = pd_bench_insert_block("#!/bin/bash", "B\n");
    assert_string_equal(s, "#!/bin/bash\nB\n");
    free(s);
    s = pd_bench_insert_block("#!/bin/bash\n#SBATCH -N 1", "B\n");
    assert_string_equal(s, "#!/bin/bash\n#SBATCH -N 1\nB\n");
    free(s);
}

static void test_metrics_native_parsers(void **state)
{
    (void)state;
    const char *names[] = {"bw", "lat", "nested.x", "missing"};
    char *v[4];
    assert_int_equal(pd_metrics_from_text("{\"bw\": 12.5, \"lat\": 3, \"nested\": {\"x\": \"ok\"}}", names, 4, v), 3);
    assert_string_equal(v[0], "12.5");
    assert_string_equal(v[1], "3");
    assert_string_equal(v[2], "ok");
    assert_null(v[3]);
    for (int i = 0; i < 4; i++)
        free(v[i]);
    assert_int_equal(pd_metrics_from_text("# log\nbw = 1.0\nlat=2\nbw=7\nnoise\n", names, 4, v), 2);
    assert_string_equal(v[0], "7");
    assert_string_equal(v[1], "2");
    for (int i = 0; i < 4; i++)
        free(v[i]);
    assert_int_equal(pd_metrics_from_text("", names, 4, v), 0);
    char err[256];
    assert_int_equal(pd_metrics_parse_file("/no/such/file", NULL, NULL, names, 4, v, err, sizeof err), -1);
    assert_non_null(strstr(err, "cannot read metrics file /no/such/file"));
}

static void test_metrics_python_parser(void **state)
{
    (void)state;
    char *py = pd_find_in_path("python3");
    if (!py) {
        skip();
        return;
    }
    free(py);
    char dir[] = "/tmp/pd-bench-metrics-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char data[256], parser[256], bad[256];
    snprintf(data, sizeof data, "%s/out.txt", dir);
    snprintf(parser, sizeof parser, "%s/p.py", dir);
    snprintf(bad, sizeof bad, "%s/bad.py", dir);
    const char *d = "bandwidth 42.5 MB/s\n";
    const char *p = "def parse(path):\n    w = open(path).read().split()\n    return {'bw': float(w[1]), 'unit': w[2]}\n";
    const char *b = "def parse(path):\n    raise ValueError('no bandwidth line')\n";
    assert_int_equal(pd_write_file(data, d, strlen(d)), 0);
    assert_int_equal(pd_write_file(parser, p, strlen(p)), 0);
    assert_int_equal(pd_write_file(bad, b, strlen(b)), 0);
    const char *names[] = {"bw", "unit"};
    char *v[2], err[256];
    assert_int_equal(pd_metrics_parse_file(data, parser, NULL, names, 2, v, err, sizeof err), 2);
    assert_string_equal(v[0], "42.5");
    assert_string_equal(v[1], "MB/s");
    free(v[0]);
    free(v[1]);
    assert_int_equal(pd_metrics_parse_file(data, bad, NULL, names, 2, v, err, sizeof err), -1);
    assert_non_null(strstr(err, "parser_script failed (exit 1): ValueError: no bandwidth line"));
    /* IOPS' globals: vars, env, execution_id, ... and os_env */
    char ctxp[256];
    snprintf(ctxp, sizeof ctxp, "%s/ctx.py", dir);
    const char *c = "SCALE = vars['nodes'] * 2\n"
                    "def parse(path):\n"
                    "    return {'bw': SCALE * float(open(path).read().split()[1]),\n"
                    "            'unit': env['U'] + execution_id + str(repetition) + str('PATH' in os_env)}\n";
    assert_int_equal(pd_write_file(ctxp, c, strlen(c)), 0);
    assert_int_equal(pd_metrics_parse_file_ctx(data, ctxp, NULL,
                                               "{\"vars\": {\"nodes\": 2}, \"env\": {\"U\": \"MB\"}, "
                                               "\"execution_id\": \"7\", \"repetition\": 3}",
                                               0, names, 2, v, err, sizeof err),
                     2);
    assert_string_equal(v[0], "170.0");
    assert_string_equal(v[1], "MB73True");
    free(v[0]);
    free(v[1]);
    unlink(ctxp);
    unlink(data);
    unlink(parser);
    unlink(bad);
    rmdir(dir);
}

static void test_slurm_helpers(void **state)
{
    (void)state;
    assert_int_equal(pd_slurm_state("COMPLETED"), PD_TASK_SUCCEEDED);
    assert_int_equal(pd_slurm_state("FAILED"), PD_TASK_FAILED);
    assert_int_equal(pd_slurm_state("TIMEOUT"), PD_TASK_TIMED_OUT);
    assert_int_equal(pd_slurm_state("OUT_OF_MEMORY"), PD_TASK_FAILED);
    assert_int_equal(pd_slurm_state("CANCELLED"), PD_TASK_CANCELLED);
    assert_int_equal(pd_slurm_state("RUNNING"), PD_TASK_PENDING);
    assert_int_equal(pd_slurm_state("COMPLETING"), PD_TASK_PENDING);
    pd_bench_run run = {0};
    run.cfg.script.name = "ior";
    char script[] = "run_ior.sh", *scripts[] = {script};
    run.script_files = scripts;
    char rep_dir[PATH_MAX] = "/w/run_001/exec_0003/repetition_002";
    pd_bench_task t = {.exec_id = 3, .repetition = 2, .dir = rep_dir};
    char **argv = pd_slurm_submit_argv(&run, &t);
    const char *want[] = {"sbatch", "--parsable", "--job-name=ior_exec_0003_r2",
                          "--chdir=/w/run_001/exec_0003/repetition_002",
                          "--output=/w/run_001/exec_0003/repetition_002/stdout",
                          "--error=/w/run_001/exec_0003/repetition_002/stderr",
                          "/w/run_001/exec_0003/repetition_002/run_ior.sh", NULL};
    for (int i = 0; want[i]; i++)
        assert_string_equal(argv[i], want[i]);
    assert_null(argv[7]);
    pd_free_argv(argv);

    /* benchmark.timeout becomes the job's limit (minutes:seconds, rounded
     * up), unless the script's #SBATCH header sets one */
    char dir[] = "/tmp/pd-test-slurm-XXXXXX", path[PATH_MAX];
    assert_non_null(mkdtemp(dir));
    snprintf(rep_dir, sizeof rep_dir, "%s", dir);
    snprintf(path, sizeof path, "%s/run_ior.sh", dir);
    run.cfg.timeout_s = 89.5;
    const char *plain = "#!/bin/bash\n#SBATCH -N 1\nior\n", *limited = "#!/bin/bash\n#SBATCH  -t 10\nior\n";
    assert_int_equal(pd_write_file(path, plain, strlen(plain)), 0);
    argv = pd_slurm_submit_argv(&run, &t);
    assert_string_equal(argv[6], "--time=1:30");
    assert_string_equal(argv[7], path);
    assert_null(argv[8]);
    pd_free_argv(argv);
    assert_int_equal(pd_write_file(path, limited, strlen(limited)), 0);
    argv = pd_slurm_submit_argv(&run, &t);
    assert_string_equal(argv[6], path);
    assert_null(argv[7]);
    pd_free_argv(argv);
    unlink(path);
    rmdir(dir);
}

static void test_iops_compat_errors_name_line_and_key(void **state)
{
    (void)state;
    const char *label_sweep = "    sweep: {mode: list, values: [x]}\n";
    const char *ppn_sweep = "    sweep: {mode: list, values: [2, '4']}\n";
    EXPECT_ERROR(label_sweep, "    sweep: {mode: list, values: [x]}\n    when: \"nodes > 1\"\n", false,
                 "t.yaml:16: vars.label.when: when needs a default");
    EXPECT_ERROR(label_sweep, "    sweep: {mode: list, values: [x]}\n    default: y\n", false,
                 "t.yaml:16: vars.label.default: default is only valid together with when");
    EXPECT_ERROR("    expr: \"1024 // ntasks\"\n", "    expr: \"1024 // ntasks\"\n    when: \"true\"\n    default: 1\n",
                 false, "t.yaml:22: vars.block.when: only swept variables can be conditional");
    EXPECT_ERROR(ppn_sweep, "    sweep: {mode: list, values: [2, '4']}\n    when: \"nodes > 1\"\n    default: many\n", false,
                 "t.yaml:14: vars.ppn.default: 'many' is not an int (variable type is int)");
    EXPECT_ERROR(ppn_sweep, "    sweep: {mode: list, values: [2, '4']}\n    when: \"nodez > 1\"\n    default: 1\n", true,
                 "t.yaml:13: vars.ppn.when: unknown name 'nodez'");
    EXPECT_ERROR("    type: str\n    sweep", "    type: list\n    sweep", false,
                 "t.yaml:14: vars.label.type: type list is for derived variables");
    EXPECT_ERROR("    type: int\n    expr: \"1024 // ntasks\"\n", "    type: list\n    expr: \"1024 // ntasks\"\n", true,
                 "t.yaml:21: vars.block.expr: variable is type list but the value is wrong: 512 is not a list");
    EXPECT_ERROR("  parallel: 3\n", "  parallel: 3\n  search_method: random\n", false,
                 "t.yaml:6: benchmark.random_config: search_method random needs random_config.n_samples or "
                 "random_config.percentage");
    EXPECT_ERROR("  parallel: 3\n", "  parallel: 3\n  search_method: random\n  random_config: {percentage: 1.5}\n", false,
                 "t.yaml:7: benchmark.random_config.percentage: must be a fraction in (0, 1]");
    EXPECT_ERROR("  parallel: 3\n", "  parallel: 3\n  search_method: random\n  random_config: {percentage: 0.5, n_samples: 2}\n",
                 false, "t.yaml:7: benchmark.random_config: give n_samples or percentage, not both");
    EXPECT_ERROR("  parallel: 3\n", "  parallel: 3\n  search_method: grid\n", false,
                 "t.yaml:6: benchmark.search_method: must be one of exhaustive, random, bayesian, adaptive, found 'grid'");
    EXPECT_ERROR("output:\n", "  - name: job\n    script_template: \"echo\"\noutput:\n", false,
                 "t.yaml:44: scripts: two scripts are named 'job'");
    EXPECT_ERROR("output:\n", "  - name: other\n    script_template: \"echo\"\n    posts: {}\noutput:\n", false,
                 "t.yaml:46: scripts[1].posts: unknown key");
    EXPECT_ERROR("output:\n", "  - name: other\n    script_template: \"echo\"\n    parser: {file: x, metrics: [ntasks]}\noutput:\n",
                 false, "scripts[1].parser.metrics: metric 'ntasks' has the name of a variable");
    EXPECT_ERROR("    parser:\n", "    inputs:\n      - {name: cfg, path: a.conf, template: x, file: y}\n    parser:\n", false,
                 "t.yaml:40: scripts[0].inputs[0]: give exactly one of template (inline content) or file");
    EXPECT_ERROR("    parser:\n", "    inputs:\n      - {name: cfg, path: a.conf, template: x, mode: '999'}\n    parser:\n",
                 false, "t.yaml:40: scripts[0].inputs[0].mode: must be an octal string such as \"0644\", found '999'");
    EXPECT_ERROR("    parser:\n", "    inputs:\n      - {name: 1cfg, path: a.conf, template: x}\n    parser:\n", false,
                 "t.yaml:40: scripts[0].inputs[0].name: must be an identifier");
    EXPECT_ERROR("    parser:\n", "    inputs:\n      - {name: cfg, template: x}\n    parser:\n", false,
                 "t.yaml:40: scripts[0].inputs[0].path: required key is missing");
    EXPECT_ERROR("    parser:\n", "    post: {}\n    parser:\n", false, "t.yaml:39: scripts[0].post.script: required key is missing");
    EXPECT_ERROR("    parser:\n", "    post: {script: \"echo {{ nope }}\"}\n    parser:\n", true,
                 "t.yaml:39: scripts[0].post.script: unknown name 'nope'");
    EXPECT_ERROR("      {{ command.template }} > {{ out }}\n",
                 "      {% for i in range(2) %}\n      {{ command.template }} > {{ out }}\n", true,
                 "t.yaml:38: scripts[0].script_template: {% for %} without {% endfor %}");
    EXPECT_ERROR("      {{ command.template }} > {{ out }}\n",
                 "      {% for i in range(2) %}\n      {{ command.template }} {{ j }}\n      {% endfor %}\n", true,
                 "t.yaml:39: scripts[0].script_template: unknown name 'j'");
    EXPECT_ERROR("  template: \"bench", "  env: {\"A-B\": x}\n  template: \"bench", false,
                 "t.yaml:30: command.env.A-B: environment variable names must be identifiers");
    EXPECT_ERROR("  template: \"bench", "  env: {A: \"{{ nope }}\"}\n  template: \"bench", true,
                 "t.yaml:30: command.env.A: unknown name 'nope'");
}

static const char *iops_study =
    "benchmark: {name: s, workdir: /tmp/pd-s, search_method: random, random_seed: 3,\n"
    "            random_config: {percentage: 0.5}}\n"
    "vars:\n"
    "  codec: {type: str, sweep: {mode: list, values: [none, lz4, zstd]}}\n"
    "  level:\n"
    "    type: int\n"
    "    sweep: {mode: list, values: [1, 9]}\n"
    "    when: \"codec != 'none'\"\n"
    "    default: 0\n"
    "  long:\n"
    "    type: bool\n"
    "    sweep: {mode: list, values: [true, false]}\n"
    "    when: \"level > 1\"\n" /* depends on another conditional variable */
    "    default: false\n"
    "  sizes: {type: list, expr: \"[10, 20, 30]\"}\n"
    "  size: {type: int, expr: \"sizes[level % 3]\"}\n"
    "command:\n"
    "  template: \"x {{ codec }}\"\n"
    "  env: {LEVEL: \"{{ level }}\", CODEC: \"{{ codec | upper }}\"}\n"
    "  labels: {team: io}\n"
    "scripts:\n"
    "  - name: a\n"
    "    script_template: |\n"
    "      {% for k, v in command_env.items() %}\n"
    "      export {{ k }}={{ v }}\n"
    "      {% endfor %}\n"
    "      {{ command.template }} {{ team }} {{ command_labels.team }} {{ artifacts_dir | basename }}\n"
    "    inputs:\n"
    "      - {name: conf, path: c.conf, template: \"{% for s in sizes %}{{ s }};{% endfor %}\"}\n"
    "    parser: {file: out, metrics: [m1, shared]}\n"
    "  - name: b\n"
    "    script_template: \"cat {{ inputs.conf.path }}\"\n"
    "    inputs:\n"
    "      - {name: conf, path: \"{{ execution_dir }}/b.conf\", template: \"{{ size }}\", mode: \"0640\"}\n"
    "    post: {script: \"echo post {{ execution_id }}\"}\n"
    "    parser: {file: out, metrics: [shared, m2]}\n";

/* The part of good from parallel to ppn's sweep, and the same with
 * search_method adaptive (line 6) and ppn adaptive (line 13) instead. */
#define ADAPTIVE_FROM                                                                                                  \
    "  parallel: 3\nvars:\n  nodes:\n    type: int\n    sweep: {mode: range, start: 1, end: 4, step: 1}\n  ppn:\n"     \
    "    type: int\n    sweep: {mode: list, values: [2, '4']}\n"
#define ADAPTIVE_TO(search, block)                                                                                     \
    "  parallel: 3\n" search "vars:\n  nodes:\n    type: int\n    sweep: {mode: range, start: 1, end: 4, step: 1}\n"  \
    "  ppn:\n    type: int\n    adaptive: " block "\n"
#define EXPECT_ADAPTIVE_ERROR(block, want)                                                                             \
    EXPECT_ERROR(ADAPTIVE_FROM, ADAPTIVE_TO("  search_method: adaptive\n", block), false, want)

/* vars.X.adaptive and search_method adaptive are validated as IOPS 3.5.8's
 * loader does (a valid one runs: tests/bench_adaptive.sh). */
static void test_adaptive_config_errors(void **state)
{
    (void)state;
    EXPECT_ERROR(ADAPTIVE_FROM, ADAPTIVE_TO("", "{initial: 1, factor: 2, stop_when: \"bw > 1\"}"), false,
                 "t.yaml:10: vars: 'ppn' is an adaptive variable: set benchmark.search_method to 'adaptive'");
    EXPECT_ERROR("output:\n", "  - name: other\n    script_template: \"echo\"\n    parser: {file: x, metrics: [status]}\noutput:\n",
                 false, "scripts[1].parser.metrics: metric 'status' conflicts with a built-in stop_when variable");
    EXPECT_ERROR(ADAPTIVE_FROM,
                 ADAPTIVE_TO("  search_method: adaptive\n  exhaustive_vars: [ppn]\n",
                             "{initial: 1, factor: 2, stop_when: \"bw > 1\"}"),
                 false, "benchmark.exhaustive_vars: adaptive variable 'ppn' cannot be listed in exhaustive_vars");
    EXPECT_ERROR(ADAPTIVE_FROM,
                 ADAPTIVE_TO("  search_method: adaptive\n  cache_exclude_vars: [ppn]\n",
                             "{initial: 1, factor: 2, stop_when: \"bw > 1\"}"),
                 false, "benchmark.cache_exclude_vars: adaptive variable 'ppn' cannot be listed in cache_exclude_vars");
    EXPECT_ERROR(ADAPTIVE_FROM,
                 ADAPTIVE_TO("  search_method: adaptive\n", "{initial: 1, factor: 2, stop_when: \"bw > 1\"}\n"
                             "  io:\n    type: int\n    adaptive: {initial: 2, increment: 1, stop_when: \"bw > 1\"}"),
                 false, "vars: only one adaptive variable is supported per study: 'ppn' and 'io' are");
    EXPECT_ERROR(ADAPTIVE_FROM,
                 ADAPTIVE_TO("  search_method: adaptive\n", "{initial: 1, factor: 2, stop_when: \"bw > 1\"}\n"
                             "  io:\n    type: int\n    sweep: {mode: list, values: [1]}\n    when: \"ppn > 2\"\n"
                             "    default: 0"),
                 false, "names adaptive variable 'ppn', which has no value when conditions are evaluated");
    EXPECT_ERROR("  parallel: 3\n", "  parallel: 3\n  search_method: adaptive\n", false,
                 "t.yaml:6: benchmark.search_method: search_method adaptive needs a variable with an 'adaptive' block");
    EXPECT_ADAPTIVE_ERROR("{factor: 2, stop_when: \"bw > 1\"}", "t.yaml:13: vars.ppn.adaptive: 'initial' is required");
    EXPECT_ADAPTIVE_ERROR("{initial: 1, factor: 2}", "t.yaml:13: vars.ppn.adaptive: 'stop_when' is required");
    EXPECT_ADAPTIVE_ERROR("{initial: 1, stop_when: \"bw > 1\"}",
                          "t.yaml:13: vars.ppn.adaptive: exactly one of 'factor', 'increment' or 'step_expr' must be set");
    EXPECT_ADAPTIVE_ERROR("{initial: 1, factor: 2, increment: 1, stop_when: \"bw > 1\"}",
                          "t.yaml:13: vars.ppn.adaptive: exactly one of 'factor', 'increment' or 'step_expr'");
    EXPECT_ADAPTIVE_ERROR("{initial: 1, factor: 0, stop_when: \"bw > 1\"}",
                          "t.yaml:13: vars.ppn.adaptive.factor: must not be 0");
    EXPECT_ADAPTIVE_ERROR("{initial: 1, factor: 0.5, stop_when: \"bw > 1\"}",
                          "t.yaml:13: vars.ppn.adaptive.factor: must be > 1 for ascending direction, found 0.5");
    EXPECT_ADAPTIVE_ERROR("{initial: 64, factor: 2, direction: descending, stop_when: \"bw > 1\"}",
                          "t.yaml:13: vars.ppn.adaptive.factor: must be < 1 for descending direction, found 2");
    EXPECT_ADAPTIVE_ERROR("{initial: 1, increment: -1, stop_when: \"bw > 1\"}",
                          "t.yaml:13: vars.ppn.adaptive.increment: must be > 0 for ascending direction, found -1");
    EXPECT_ADAPTIVE_ERROR("{initial: 9, increment: 1, direction: descending, stop_when: \"bw > 1\"}",
                          "t.yaml:13: vars.ppn.adaptive.increment: must be < 0 for descending direction, found 1");
    EXPECT_ADAPTIVE_ERROR("{initial: 1, increment: 1, direction: up, stop_when: \"bw > 1\"}",
                          "t.yaml:13: vars.ppn.adaptive.direction: must be 'ascending' or 'descending', found 'up'");
    EXPECT_ADAPTIVE_ERROR("{initial: 1, increment: 1, max_iterations: 0, stop_when: \"bw > 1\"}",
                          "t.yaml:13: vars.ppn.adaptive.max_iterations: must be at least 1, found 0");
    EXPECT_ADAPTIVE_ERROR("{initial: 1, increment: two, stop_when: \"bw > 1\"}",
                          "t.yaml:13: vars.ppn.adaptive.increment: must be a number, found 'two'");
    EXPECT_ADAPTIVE_ERROR("{initial: one, increment: 1, stop_when: \"bw > 1\"}",
                          "t.yaml:13: vars.ppn.adaptive.initial: 'one' is not an int (variable type is int)");
    EXPECT_ADAPTIVE_ERROR("{initial: 1, increment: 1, stop_when: \"bw > 1\", steps: 3}",
                          "t.yaml:13: vars.ppn.adaptive.steps: unknown key");
    EXPECT_ADAPTIVE_ERROR("{initial: 1, step_expr: \"\", stop_when: \"bw > 1\"}",
                          "t.yaml:13: vars.ppn.adaptive.step_expr: must not be empty");
    EXPECT_ERROR("    type: str\n    sweep: {mode: list, values: [x]}\n",
                 "    type: str\n    adaptive: {initial: x, increment: 1, stop_when: \"bw > 1\"}\n", false,
                 "t.yaml:15: vars.label.adaptive: variable type must be int or float when using 'increment', found 'str'");
    EXPECT_ERROR("    type: int\n    sweep: {mode: list, values: [2, '4']}\n",
                 "    type: int\n    sweep: {mode: list, values: [2]}\n    adaptive: {initial: 1, increment: 1, "
                 "stop_when: \"bw > 1\"}\n", false, "t.yaml:11: vars.ppn: give only one of sweep, expr or adaptive");
    EXPECT_ERROR(ADAPTIVE_FROM,
                 ADAPTIVE_TO("  search_method: adaptive\n  slurm_options: {allocation: {mode: single}}\n",
                             "{initial: 1, increment: 1, stop_when: \"bw > 1\"}"),
                 false, "t.yaml:7: benchmark.search_method: allocation.mode 'single' is incompatible with search_method "
                 "'adaptive'");
}

static void test_conditional_random_multi_script(void **state)
{
    (void)state;
    pd_bench_config cfg;
    pd_str errors = {0}, warnings = {0};
    int rc = parse(iops_study, &cfg, &errors);
    if (rc)
        fail_msg("%s", errors.data);
    assert_int_equal(pd_bench_nscripts(&cfg), 2);
    assert_int_equal(cfg.nmetrics, 3); /* m1, shared, m2 */
    assert_string_equal(cfg.metrics[2], "m2");
    /* exhaustive first: none(0,F) lz4(1,F) lz4(9,T) lz4(9,F) zstd x3 = 7 combinations */
    cfg.search = PD_SEARCH_EXHAUSTIVE;
    pd_bench_matrix m;
    assert_int_equal(pd_bench_matrix_build(&cfg, "/w", &m, &errors, &warnings), 0);
    assert_int_equal(m.nexecs, 14); /* x 2 scripts */
    assert_string_equal(m.execs[0].values[0].s, "none");
    assert_int_equal(m.execs[0].values[1].i, 0);
    assert_false(m.execs[0].values[2].b);
    assert_int_equal(m.execs[0].script, 0);
    assert_int_equal(m.execs[1].script, 1);
    assert_int_equal(m.execs[1].id, 2);
    assert_int_equal(m.execs[4].values[1].i, 9); /* lz4, 9, True */
    assert_true(m.execs[4].values[2].b);
    assert_int_equal(m.execs[4].values[4].i, 10); /* sizes[9 % 3] */

    pd_bench_rendered r;
    assert_int_equal(pd_bench_render(&cfg, "/w", &m.execs[4], 1, "/p", &r, &errors), 0);
    assert_string_equal(r.script, "#!/bin/bash\nexport LEVEL=9\nexport CODEC=LZ4\nx lz4 io io images\n");
    assert_int_equal(r.ninputs, 1);
    assert_string_equal(r.input_paths[0], "/w/exec_0005/repetition_001/c.conf");
    assert_string_equal(r.input_texts[0], "10;20;30;");
    assert_int_equal(r.input_modes[0], -1);
    assert_null(r.post);
    assert_string_equal(r.parser_context,
                        "{\"vars\": {\"codec\": \"lz4\", \"level\": 9, \"long\": true, \"sizes\": [10, 20, 30], "
                        "\"size\": 10}, \"env\": {\"LEVEL\": \"9\", \"CODEC\": \"LZ4\"}, \"execution_id\": \"5\", "
                        "\"repetition\": 1, \"repetitions\": 1, \"execution_dir\": \"/w/exec_0005/repetition_001\", "
                        "\"workdir\": \"/w\", \"log_dir\": \"/w/logs\"}");
    pd_bench_rendered_free(&r, cfg.nvars);
    assert_int_equal(pd_bench_render(&cfg, "/w", &m.execs[5], 1, "/p", &r, &errors), 0);
    assert_string_equal(r.script, "#!/bin/bash\ncat /w/exec_0006/repetition_001/b.conf");
    assert_string_equal(r.input_texts[0], "10");
    assert_int_equal(r.input_modes[0], 0640);
    assert_string_equal(r.post, "echo post 6");
    pd_bench_rendered_free(&r, cfg.nvars);
    pd_bench_matrix_free(&m);

    /* random, as IOPS's RandomSamplingPlanner: int(0.5 * 14) = 7 of the 14
     * executions (every script of a combination counts), keeping their
     * numbers, then run in its shuffled order. With random_seed 3:
     * python3 -c 'import random; r=random.Random(3); s=r.sample(range(1,15),7); print(sorted(s));
     *   m=r.sample(s,7); a=list(range(7)); o=[]
     *   while a: i=r.choice(a); o.append(m[i]); a.remove(i)
     *   print(o)'
     * prints [2, 3, 4, 6, 8, 9, 10] and [8, 9, 10, 2, 4, 6, 3] */
    cfg.search = PD_SEARCH_RANDOM;
    pd_bench_matrix a;
    assert_int_equal(pd_bench_matrix_build(&cfg, "/w", &a, &errors, &warnings), 0);
    assert_int_equal(a.nexecs, 7);
    const int picked[] = {2, 3, 4, 6, 8, 9, 10}, order[] = {8, 9, 10, 2, 4, 6, 3};
    for (size_t i = 0; i < a.nexecs; i++) {
        assert_int_equal(a.execs[i].id, picked[i]);
        assert_int_equal(a.execs[i].script, (size_t)(picked[i] - 1) % 2);
    }
    assert_int_equal(a.norder, 7);
    for (size_t i = 0; i < a.norder; i++) {
        assert_int_equal(a.execs[a.order[i].exec].id, order[i]);
        assert_int_equal(a.order[i].repetition, 1);
    }
    assert_string_equal(a.execs[2].values[0].s, "lz4"); /* exec 4: lz4, 1, False, script b */
    assert_int_equal(a.execs[2].values[1].i, 1);
    pd_bench_matrix_free(&a);
    cfg.random.percentage = 1.0; /* everything: a warning, not an error */
    assert_int_equal(pd_bench_matrix_build(&cfg, "/w", &a, &errors, &warnings), 0);
    assert_int_equal(a.nexecs, 14);
    assert_non_null(strstr(warnings.data, "running all of them"));
    pd_bench_matrix_free(&a);
    pd_bench_config_free(&cfg);
    pd_str_free(&errors);
    pd_str_free(&warnings);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_good_config_fields),
        cmocka_unit_test(test_matrix_sweeps_derived_constraints),
        cmocka_unit_test(test_schema_errors_name_line_and_key),
        cmocka_unit_test(test_evaluation_errors_name_line_and_key),
        cmocka_unit_test(test_warn_policy_keeps_and_warns),
        cmocka_unit_test(test_probe_enabled_reports_injection_failure_or_places_block),
        cmocka_unit_test(test_float_range_bool_and_template_exprs),
        cmocka_unit_test(test_io_probe_paths_rendered),
        cmocka_unit_test(test_insert_block),
        cmocka_unit_test(test_metrics_native_parsers),
        cmocka_unit_test(test_metrics_python_parser),
        cmocka_unit_test(test_slurm_helpers),
        cmocka_unit_test(test_iops_compat_errors_name_line_and_key),
        cmocka_unit_test(test_conditional_random_multi_script),
        cmocka_unit_test(test_adaptive_config_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
