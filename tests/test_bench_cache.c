/* src/bench/cache.c, md5.c and budget.c: the cache key (Python's
 * json.dumps(params, sort_keys=True) after IOPS's normalisation, excluded
 * variables left out) and its MD5, a put/get round trip in a fresh SQLite
 * file, an entry replaced by a later put, and cores_expr evaluation. The
 * expected keys and digests are Python's:
 *   python3 -c 'import json, hashlib; s = json.dumps({"nodes": 2, "ppn": 1.5, "zeta": 8}, sort_keys=True);
 *               print(s, hashlib.md5(s.encode()).hexdigest())' */
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
#include "bench/md5.h"

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
    pd_val_free(&v[0]);
    v[0] = pd_val_str("1.5"); /* a float that reads back the same */
    k = pd_bench_cache_params(&cfg, v);
    assert_string_equal(k, "{\"nodes\": 2, \"ppn\": 1.5, \"zeta\": 1.5}");
    free(k);
    pd_val_free(&v[0]);
    v[0] = pd_val_str("h\xc3\xa9\"\\\b\f\n\x01\x7f\xf0\x9f\x98\x80"); /* ensure_ascii escapes */
    k = pd_bench_cache_params(&cfg, v);
    assert_string_equal(k, "{\"nodes\": 2, \"ppn\": 1.5, \"zeta\": \"h\\u00e9\\\"\\\\\\b\\f\\n\\u0001\\u007f\\ud83d\\ude00\"}");
    char md5[33];
    pd_md5_hex(k, strlen(k), md5);
    assert_string_equal(md5, "1696128893c09f9756f53c1fa1511140");
    free(k);
    for (int i = 0; i < 4; i++)
        pd_val_free(&v[i]);
    pd_bench_config_free(&cfg);
}

/* IOPS renders cache_file (os_env, workdir, benchmark.name), then expands
 * $VAR and ~ (_expand_path). */
static void test_cache_file_path(void **state)
{
    (void)state;
    static const struct {
        const char *value, *want;
    } cases[] = {
        {"\"{{ workdir }}/{{ benchmark.name }}_{{ os_env.PD_T_CACHE }}.db\"", "/tmp/pd-k/k_v1.db"},
        {"\"$PD_T_DIR/c.db\"", "/scratch/x/c.db"},
        {"\"${PD_T_DIR}/$PD_T_UNSET/c.db\"", "/scratch/x/$PD_T_UNSET/c.db"},
        {"\"~/c.db\"", "/home/pd-t/c.db"},
    };
    setenv("PD_T_CACHE", "v1", 1);
    setenv("PD_T_DIR", "/scratch/x", 1);
    setenv("HOME", "/home/pd-t", 1);
    unsetenv("PD_T_UNSET");
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[1024];
        const char *at = strstr(study, "/tmp/x.db");
        snprintf(text, sizeof text, "%.*s%s%s", (int)(at - study), study, cases[i].value, at + strlen("/tmp/x.db"));
        pd_bench_config cfg;
        pd_str errors = {0}, warnings = {0};
        assert_int_equal(pd_bench_config_parse(text, "k.yaml", "/x", &cfg, &errors, &warnings), 0);
        assert_string_equal(cfg.cache_file, cases[i].want);
        pd_bench_config_free(&cfg);
        pd_str_free(&errors);
        pd_str_free(&warnings);
    }
}

static void test_md5_vectors(void **state)
{
    (void)state;
    /* python3 -c 'import hashlib; print(hashlib.md5(b"a" * 56).hexdigest())', ... */
    static const struct {
        size_t n;
        const char *hex;
    } a[] = {{0, "d41d8cd98f00b204e9800998ecf8427e"},   {55, "ef1772b6dff9a122358552954ad0df65"},
             {56, "3b0c8ac703f828b04c6c197006d17218"},  {64, "014842d480b571495a4a0363793f7367"},
             {119, "8a7bd0732ed6a28ce75f6dabc90e1613"}, {120, "5f61c0ccad4cac44c75ff505e1f1e537"},
             {1000, "cabe45dcc9ae5b66ba86600cca6b8ba8"}};
    char buf[1000], hex[33];
    memset(buf, 'a', sizeof buf);
    for (size_t i = 0; i < sizeof a / sizeof a[0]; i++) {
        pd_md5_hex(buf, a[i].n, hex);
        assert_string_equal(hex, a[i].hex);
    }
    pd_md5_hex("abc", 3, hex);
    assert_string_equal(hex, "900150983cd24fb0d6963f7d28e17f72");
    const char *key = "{\"nodes\": 2, \"ppn\": 1.5, \"zeta\": 8}";
    pd_md5_hex(key, strlen(key), hex);
    assert_string_equal(hex, "e9ee97d82a2ac43d33c6b10681c0a200");
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
        cmocka_unit_test(test_cache_file_path),
        cmocka_unit_test(test_md5_vectors),
        cmocka_unit_test(test_put_get_replace),
        cmocka_unit_test(test_cores_expr),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
