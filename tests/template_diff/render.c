/* Test driver of the differential test (tests/template_diff/README.md):
 * renders every case of a JSON file with paddiser's template engine
 * (src/bench/expr.c) and prints one JSON object per line, {"out": text} or
 * {"err": message}. A case is {"t": template, "ctx": {name: value}}; a
 * JSON object in ctx is a dict, except vars, command_env and
 * command_labels, which are passed as the harness passes them (lists of
 * [key, value] pairs). */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "bench/expr.h"

static pd_val from_json(const json_t *j, bool as_pairs)
{
    switch (json_typeof(j)) {
    case JSON_INTEGER: return pd_val_int(json_integer_value(j));
    case JSON_REAL: return pd_val_float(json_real_value(j));
    case JSON_STRING: return pd_val_str(json_string_value(j));
    case JSON_TRUE: return pd_val_bool(true);
    case JSON_FALSE: return pd_val_bool(false);
    case JSON_ARRAY: {
        pd_val l = {.kind = PD_VAL_LIST, .n = json_array_size(j)};
        l.items = calloc(l.n ? l.n : 1, sizeof *l.items);
        for (size_t i = 0; l.items && i < l.n; i++)
            l.items[i] = from_json(json_array_get(j, i), false);
        return l;
    }
    case JSON_OBJECT: {
        pd_val d = {.kind = as_pairs ? PD_VAL_LIST : PD_VAL_DICT, .n = json_object_size(j)};
        d.items = calloc(d.n ? d.n : 1, sizeof *d.items);
        const char *k;
        json_t *v;
        size_t i = 0;
        json_object_foreach((json_t *)j, k, v)
        {
            pd_val *pr = &d.items[i++];
            *pr = (pd_val){.kind = PD_VAL_LIST, .n = 2, .items = calloc(2, sizeof(pd_val))};
            pr->items[0] = pd_val_str(k);
            pr->items[1] = from_json(v, false);
        }
        return d;
    }
    default: return pd_val_none();
    }
}

/* name or dotted name (a.b.c walks objects) */
static bool lookup(void *ud, const char *name, pd_val *out)
{
    const json_t *cur = ud;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", name);
    for (char *save = NULL, *seg = strtok_r(buf, ".", &save); seg; seg = strtok_r(NULL, ".", &save)) {
        if (!json_is_object(cur) || !(cur = json_object_get(cur, seg)))
            return false;
    }
    bool pairs = !strcmp(name, "vars") || !strcmp(name, "command_env") || !strcmp(name, "command_labels");
    *out = from_json(cur, pairs);
    return true;
}

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
        if (pd_template_render(t ? t : "", lookup, ctx, &out, err, sizeof err, &line) == 0) {
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
