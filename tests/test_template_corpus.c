/* Replays tests/template_diff/corpus.json, templates whose Jinja2 output
 * (python3-jinja2, see tests/template_diff/README.md) was recorded, without
 * Python: where Jinja2 rendered, paddiser must give the same text or refuse
 * with an error (a construct it does not support); where Jinja2 failed,
 * paddiser must fail too. Never a different output. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "../tests/template_diff/json_ctx.h"

static void test_corpus_matches_jinja2(void **state)
{
    (void)state;
    json_error_t jerr;
    json_t *corpus = json_load_file(PD_SOURCE_DIR "/tests/template_diff/corpus.json", 0, &jerr);
    if (!corpus)
        fail_msg("corpus.json: %s (line %d)", jerr.text, jerr.line);
    json_t *ctx = json_object_get(corpus, "ctx"), *cases = json_object_get(corpus, "cases");
    assert_true(json_is_object(ctx));
    assert_true(json_array_size(cases) >= 100);
    size_t i, same = 0, refused = 0, both_fail = 0;
    json_t *c;
    json_array_foreach(cases, i, c)
    {
        const char *t = json_string_value(json_object_get(c, "t"));
        const char *want = json_string_value(json_object_get(c, "out"));
        assert_non_null(t);
        pd_str out = {0};
        char err[512];
        int line = 0;
        int rc = pd_template_render(t, json_ctx_lookup, ctx, &out, err, sizeof err, &line);
        if (rc == 0 && !want)
            fail_msg("case %zu: Jinja2 fails, paddiser renders %s\ntemplate: %s", i, out.data, t);
        if (rc == 0 && strcmp(out.data ? out.data : "", want))
            fail_msg("case %zu: paddiser renders\n%s\nJinja2 renders\n%s\ntemplate: %s", i, out.data, want, t);
        if (rc == 0)
            same++;
        else if (want)
            refused++;
        else
            both_fail++;
        pd_str_free(&out);
    }
    print_message("corpus: %zu cases, %zu same output, %zu both fail, %zu refused by paddiser\n",
                  json_array_size(cases), same, both_fail, refused);
    /* most of the corpus renders: a broken engine that refuses everything fails here */
    assert_true(same * 2 > json_array_size(cases));
    json_decref(corpus);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_corpus_matches_jinja2),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
