/* machines: overrides (--machine NAME / IOPS_MACHINE), with IOPS's merge
 * rules: mappings merge recursively, lists of named items merge by name
 * (new ones appended), other lists and scalars are replaced, and a
 * variable given expr instead of sweep loses its sweep (and when/default). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "bench/config.h"

static const char *study =
    "benchmark:\n"
    "  name: base\n"
    "  workdir: /tmp/pd-machines\n"
    "  repetitions: 2\n"
    "  executor: local\n"
    "vars:\n"
    "  n:\n"
    "    type: int\n"
    "    sweep: {mode: list, values: [1, 2, 3]}\n"
    "  m:\n"
    "    type: int\n"
    "    sweep: {mode: list, values: [4]}\n"
    "    when: \"n > 1\"\n"
    "    default: 0\n"
    "constraints:\n"
    "  - {name: c1, rule: \"n < 10\"}\n"
    "command: {template: \"run {{ n }}\"}\n"
    "scripts:\n"
    "  - name: job\n"
    "    script_template: \"#!/bin/sh\\n{{ command.template }}\\n\"\n"
    "    parser: {file: out, metrics: [{name: bw}]}\n"
    "output:\n"
    "  sink: {type: csv}\n"
    "machines:\n"
    "  cluster:\n"
    "    benchmark: {repetitions: 5, executor: slurm}\n"
    "    vars:\n"
    "      n: {sweep: {mode: list, values: [8]}}\n"
    "      m: {expr: \"n * 2\"}\n"
    "    constraints:\n"
    "      - {name: c1, rule: \"n < 100\"}\n"
    "      - {name: c2, rule: \"n > 0\"}\n"
    "    scripts:\n"
    "      - name: job\n"
    "        parser: {metrics: [{name: lat}]}\n"
    "  laptop:\n"
    "    output: {sink: {type: sqlite, table: mine}}\n";

static int parse(const char *machine, pd_bench_config *cfg, pd_str *errors, pd_str *resolved)
{
    pd_str warnings = {0};
    int rc = pd_bench_config_parse_machine(study, "t.yaml", "/nonexistent", machine, cfg, errors, &warnings, resolved);
    pd_str_free(&warnings);
    return rc;
}

static void test_no_machine_is_the_base_study(void **state)
{
    (void)state;
    pd_bench_config cfg;
    pd_str errors = {0};
    assert_int_equal(parse(NULL, &cfg, &errors, NULL), 0);
    assert_int_equal(cfg.repetitions, 2);
    assert_int_equal(cfg.executor, PD_EXEC_LOCAL);
    assert_int_equal(cfg.vars[0].nvalues, 3);
    assert_null(cfg.machine);
    pd_bench_config_free(&cfg);
    pd_str_free(&errors);
}

static void test_merge_rules(void **state)
{
    (void)state;
    pd_bench_config cfg;
    pd_str errors = {0}, resolved = {0};
    assert_int_equal(parse("cluster", &cfg, &errors, &resolved), 0);
    assert_string_equal(cfg.machine, "cluster");
    assert_string_equal(cfg.name, "base");           /* untouched scalar */
    assert_int_equal(cfg.repetitions, 5);            /* overridden scalar in a merged mapping */
    assert_int_equal(cfg.executor, PD_EXEC_SLURM);
    assert_int_equal(cfg.vars[0].nvalues, 1);        /* sweep.values: a plain list, replaced */
    assert_int_equal(cfg.vars[0].values[0].i, 8);
    assert_non_null(cfg.vars[1].expr.text);          /* m: expr replaces sweep, when and default */
    assert_string_equal(cfg.vars[1].expr.text, "n * 2");
    assert_null(cfg.vars[1].when.text);
    assert_int_equal(cfg.vars[1].nvalues, 0);
    assert_int_equal(cfg.nconstraints, 2);           /* named list: c1 merged, c2 appended */
    assert_string_equal(cfg.constraints[0].name, "c1");
    assert_string_equal(cfg.constraints[0].rule.text, "n < 100");
    assert_int_equal(cfg.constraints[0].rule.line, 31); /* messages point at the override */
    assert_string_equal(cfg.constraints[1].name, "c2");
    assert_int_equal(cfg.script.nmetrics, 2);        /* scripts by name, then metrics by name */
    assert_string_equal(cfg.script.metrics[0], "bw");
    assert_string_equal(cfg.script.metrics[1], "lat");
    assert_non_null(cfg.script.script_template.text); /* kept from the base script */
    /* --resolve: the merged study, without machines: */
    assert_non_null(resolved.data);
    assert_null(strstr(resolved.data, "\nmachines:"));
    assert_non_null(strstr(resolved.data, "repetitions: 5"));
    assert_non_null(strstr(resolved.data, "n < 100"));
    assert_null(strstr(resolved.data, "when"));
    pd_bench_config_free(&cfg);
    pd_str_free(&errors);
    pd_str_free(&resolved);
}

static void test_sink_override(void **state)
{
    (void)state;
    pd_bench_config cfg;
    pd_str errors = {0};
    assert_int_equal(parse("laptop", &cfg, &errors, NULL), 0);
    assert_int_equal(cfg.sink_type, PD_SINK_SQLITE);
    assert_string_equal(cfg.sink_table, "mine");
    assert_int_equal(cfg.repetitions, 2);
    pd_bench_config_free(&cfg);
    pd_str_free(&errors);
}

static void test_unknown_machine_and_bad_keys(void **state)
{
    (void)state;
    pd_bench_config cfg;
    pd_str errors = {0}, warnings = {0};
    assert_int_equal(parse("nope", &cfg, &errors, NULL), -1);
    assert_non_null(strstr(errors.data, "t.yaml:24: machines: unknown machine 'nope' (the study has: cluster, laptop)"));
    assert_null(strstr(errors.data, "unknown key"));
    pd_bench_config_free(&cfg);
    pd_str_clear(&errors);
    /* checked even when no machine is selected, as IOPS does */
    char *bad = strdup(study);
    char *p = strstr(bad, "  laptop:\n    output");
    memcpy(p + 2, "laptop:\n    outpux", 18);
    assert_int_equal(pd_bench_config_parse_machine(bad, "t.yaml", "/x", NULL, &cfg, &errors, &warnings, NULL), -1);
    assert_non_null(strstr(errors.data, "t.yaml:37: machines.laptop.outpux: unknown key"));
    pd_bench_config_free(&cfg);
    pd_str_clear(&errors);
    /* a study without machines: */
    *strstr(bad, "machines:\n") = '\0';
    assert_int_equal(pd_bench_config_parse_machine(bad, "t.yaml", "/x", "cluster", &cfg, &errors, &warnings, NULL),
                     -1);
    assert_non_null(strstr(errors.data, "machine 'cluster' was selected (--machine or IOPS_MACHINE) but the study "
                                        "has no machines section"));
    pd_bench_config_free(&cfg);
    free(bad);
    pd_str_free(&errors);
    pd_str_free(&warnings);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_machine_is_the_base_study),
        cmocka_unit_test(test_merge_rules),
        cmocka_unit_test(test_sink_override),
        cmocka_unit_test(test_unknown_machine_and_bad_keys),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
