/* src/bench/cache.c and budget.c: the cache key (sorted, excluded
 * variables left out, integer strings as integers, as IOPS normalises),
 * a put/get round trip in a fresh SQLite file, an entry replaced by a later
 * put, and cores_expr evaluation. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "bench/budget.h"
#include "bench/cache.h"
#include "bench/config.h"

static const char *study = "benchmark: {name: k, workdir: /tmp/pd-k, cache_file: /tmp/x.db,\n"
                           "            cache_exclude_vars: [path], cores_expr: \"{{ nodes }} * ppn\"}\n"
                           "vars:\n"
                           "  zeta: {type: str, sweep: {mode: list, values: ['8', '08', 'a\"b']}}\n"
                           "  nodes: {type: int, sweep: {mode: list, values: [2]}}\n"
                           "  ppn: {type: float, sweep: {mode: list, values: [1.5]}}\n"
                           "  path: {type: str, expr: \"{{ execution_dir }}/p\"}\n"
                           "command: {template: \"x\"}\n"
                           "scripts:\n"
                           "  - {name: s, script_template: \"#!/bin/sh\\n\", parser: {file: f, metrics: [bw, lat]}}\n";

static void load(pd_bench_config *cfg)
{
    pd_str errors = {0}, warnings = {0};
    int rc = pd_bench_config_parse(study, "k.yaml", "/x", cfg, &errors, &warnings);
    if (rc != 0)
        fprintf(stderr, "%s", errors.data);
    assert_int_equal(rc, 0);
    pd_str_free(&errors);
    pd_str_free(&warnings);
}

static void test_key_normalised_sorted_excluding(void **state)
{
    (void)state;
    pd_bench_config cfg;
    load(&cfg);
    assert_string_equal(cfg.cache_file, "/tmp/x.db");
    assert_int_equal(cfg.ncache_exclude_vars, 1);
    pd_val v[4] = {pd_val_str("8"), pd_val_int(2), pd_val_float(1.5), pd_val_str("/run_001/p")};
    char *k = pd_bench_cache_params(&cfg, v);
    assert_string_equal(k, "{\"nodes\": 2, \"ppn\": 1.5, \"zeta\": 8}");
    free(k);
    pd_val_free(&v[0]);
    v[0] = pd_val_str("08"); /* does not round-trip: stays a string */
    pd_val_free(&v[3]);
    v[3] = pd_val_str("/run_002/p"); /* excluded: the same key for another run */
    k = pd_bench_cache_params(&cfg, v);
    assert_string_equal(k, "{\"nodes\": 2, \"ppn\": 1.5, \"zeta\": \"08\"}");
    free(k);
    for (int i = 0; i < 4; i++)
        pd_val_free(&v[i]);
    pd_bench_config_free(&cfg);
}

static void test_put_get_replace(void **state)
{
    (void)state;
    pd_bench_config cfg;
    load(&cfg);
    char dir[] = "/tmp/pd-cache-test.XXXXXX", path[64], err[256];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/sub/c.db", dir); /* its directory is created */
    pd_bench_cache *c = pd_bench_cache_open(path, err, sizeof err);
    assert_non_null(c);
    char **m = NULL;
    double d = -1;
    assert_int_equal(pd_bench_cache_get(c, &cfg, "{\"a\": 1}", 1, &m, &d, err, sizeof err), 0);
    char *metrics[] = {"12.5", NULL};
    assert_int_equal(pd_bench_cache_put(c, &cfg, "{\"a\": 1}", 1, metrics, 100.0, 103.0, err, sizeof err), 0);
    assert_int_equal(pd_bench_cache_get(c, &cfg, "{\"a\": 1}", 2, &m, &d, err, sizeof err), 0); /* other repetition */
    assert_int_equal(pd_bench_cache_get(c, &cfg, "{\"a\": 1}", 1, &m, &d, err, sizeof err), 1);
    assert_string_equal(m[0], "12.5");
    assert_null(m[1]);
    assert_true(d > 2.99 && d < 3.01);
    free(m[0]);
    free(m);
    char *again[] = {"7", "1"};
    assert_int_equal(pd_bench_cache_put(c, &cfg, "{\"a\": 1}", 1, again, 0, 1, err, sizeof err), 0);
    assert_int_equal(pd_bench_cache_get(c, &cfg, "{\"a\": 1}", 1, &m, &d, err, sizeof err), 1);
    assert_string_equal(m[0], "7");
    assert_string_equal(m[1], "1");
    for (int i = 0; i < 2; i++)
        free(m[i]);
    free(m);
    pd_bench_cache_close(c);
    /* reopened: still there (a fresh connection per operation anyway) */
    c = pd_bench_cache_open(path, err, sizeof err);
    assert_int_equal(pd_bench_cache_get(c, &cfg, "{\"a\": 1}", 1, &m, &d, err, sizeof err), 1);
    for (int i = 0; i < 2; i++)
        free(m[i]);
    free(m);
    pd_bench_cache_close(c);
    /* not a database: an error naming the file */
    FILE *f = fopen(path, "w");
    fputs("this is not a database, and it is long enough to have a header", f);
    fclose(f);
    assert_null(pd_bench_cache_open(path, err, sizeof err));
    assert_non_null(strstr(err, path));
    unlink(path);
    snprintf(path, sizeof path, "%s/sub", dir);
    rmdir(path);
    rmdir(dir);
    pd_bench_config_free(&cfg);
}

static void test_cores_expr(void **state)
{
    (void)state;
    pd_bench_config cfg;
    load(&cfg);
    char err[256];
    pd_val v[4] = {pd_val_str("8"), pd_val_int(3), pd_val_float(1.5), pd_val_str("p")};
    assert_int_equal(pd_bench_cores(&cfg, v, err, sizeof err), 4); /* int(3 * 1.5) */
    pd_val_free(&v[1]);
    v[1] = pd_val_int(0);
    assert_int_equal(pd_bench_cores(&cfg, v, err, sizeof err), 1); /* at least one */
    free(cfg.cores_expr.text);
    cfg.cores_expr.text = strdup("{{ nodez }}");
    assert_int_equal(pd_bench_cores(&cfg, v, err, sizeof err), -1);
    assert_non_null(strstr(err, "k.yaml:2: benchmark.cores_expr: "));
    assert_non_null(strstr(err, "nodez"));
    free(cfg.cores_expr.text);
    cfg.cores_expr.text = strdup("zeta");
    assert_int_equal(pd_bench_cores(&cfg, v, err, sizeof err), -1); /* a string is not a number of cores */
    free(cfg.cores_expr.text);
    cfg.cores_expr.text = NULL;
    assert_int_equal(pd_bench_cores(&cfg, v, err, sizeof err), 1); /* no cores_expr: 1 */
    for (int i = 0; i < 4; i++)
        pd_val_free(&v[i]);
    pd_bench_config_free(&cfg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_key_normalised_sorted_excluding),
        cmocka_unit_test(test_put_get_replace),
        cmocka_unit_test(test_cores_expr),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
