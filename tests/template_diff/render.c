/* Test driver of the differential test (tests/template_diff/README.md):
 * renders every case of a JSON file with paddiser's template engine
 * (src/bench/expr.c) and prints one JSON object per line, {"out": text} or
 * {"err": message}. A case is {"t": template, "ctx": {name: value}} (see
 * json_ctx.h for how values are passed). */
#include "json_ctx.h"

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s CASES.json\n", argv[0]);
        return 2;
    }
    json_error_t jerr;
    json_t *cases = json_load_file(argv[1], 0, &jerr);
    if (!json_is_array(cases)) {
        fprintf(stderr, "%s: %s\n", argv[1], jerr.text);
        return 2;
    }
    size_t i;
    json_t *c;
    json_array_foreach(cases, i, c)
    {
        const char *t = json_string_value(json_object_get(c, "t"));
        json_t *ctx = json_object_get(c, "ctx");
        pd_str out = {0};
        char err[512];
        int line = 0;
        json_t *res = json_object();
        if (pd_template_render(t ? t : "", json_ctx_lookup, ctx, &out, err, sizeof err, &line) == 0) {
            json_object_set_new(res, "out", json_string(out.data ? out.data : ""));
        } else {
            char msg[600];
            snprintf(msg, sizeof msg, "line %d: %s", line, err);
            json_object_set_new(res, "err", json_string(msg));
        }
        char *line_text = json_dumps(res, JSON_COMPACT | JSON_ENSURE_ASCII);
        puts(line_text);
        free(line_text);
        json_decref(res);
        pd_str_free(&out);
    }
    json_decref(cases);
    return 0;
}
