/* The differential test's context: JSON values as pd_val (an object is a
 * dict, except vars, command_env and command_labels, which are passed as
 * the harness passes them: lists of [key, value] pairs), and a lookup of
 * (dotted) names in a JSON object. Shared by the driver
 * (tests/template_diff/render.c) and tests/test_template_corpus.c. */
#ifndef PD_TEMPLATE_DIFF_JSON_CTX_H
#define PD_TEMPLATE_DIFF_JSON_CTX_H

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/expr.h"

static pd_val json_ctx_value(const json_t *j, bool as_pairs)
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
            l.items[i] = json_ctx_value(json_array_get(j, i), false);
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
            pr->items[1] = json_ctx_value(v, false);
        }
        return d;
    }
    default: return pd_val_none();
    }
}

/* name or dotted name (a.b.c walks objects) */
static bool json_ctx_lookup(void *ud, const char *name, pd_val *out)
{
    const json_t *cur = ud;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", name);
    for (char *save = NULL, *seg = strtok_r(buf, ".", &save); seg; seg = strtok_r(NULL, ".", &save)) {
        if (!json_is_object(cur) || !(cur = json_object_get(cur, seg)))
            return false;
    }
    bool pairs = !strcmp(name, "vars") || !strcmp(name, "command_env") || !strcmp(name, "command_labels");
    *out = json_ctx_value(cur, pairs);
    return true;
}

#endif
