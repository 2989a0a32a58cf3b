/* libFuzzer harness: the template engine and expression evaluator
 * (src/bench/expr.c). The input is rendered as a template and evaluated as
 * an expression, with a few variables of every kind defined (the rest are
 * undefined names, which the engine reports). */
#include "fuzz_common.h"

#include "bench/expr.h"

static bool lookup(void *ud, const char *name, pd_val *out)
{
    (void)ud;
    if (!strcmp(name, "nodes"))
        return *out = pd_val_int(4), true;
    if (!strcmp(name, "neg"))
        return *out = pd_val_int(-7), true;
    if (!strcmp(name, "big"))
        return *out = pd_val_int(9223372036854775807LL), true;
    if (!strcmp(name, "ratio"))
        return *out = pd_val_float(0.25), true;
    if (!strcmp(name, "name"))
        return *out = pd_val_str("ior"), true;
    if (!strcmp(name, "flag"))
        return *out = pd_val_bool(true), true;
    if (!strcmp(name, "nothing"))
        return *out = pd_val_none(), true;
    if (!strcmp(name, "os_env.HOME"))
        return *out = pd_val_str("/home/x"), true;
    if (!strcmp(name, "sizes")) {
        pd_val v = {.kind = PD_VAL_LIST, .n = 3};
        v.items = calloc(3, sizeof *v.items);
        if (!v.items)
            return *out = pd_val_none(), true;
        v.items[0] = pd_val_int(1);
        v.items[1] = pd_val_str("2m");
        v.items[2] = pd_val_float(1.5);
        *out = v;
        return true;
    }
    return false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_cstr(data, size);
    char err[256];
    int line = 0;
    pd_str out = {0};
    (void)pd_template_has_tags(text);
    (void)pd_template_render(text, lookup, NULL, &out, err, sizeof err, &line);
    pd_str_free(&out);
    pd_val v;
    if (pd_expr_eval(text, lookup, NULL, &v, err, sizeof err) == 0) {
        pd_str s = {0};
        pd_val_append(&s, &v);
        pd_val_append_json(&s, &v);
        (void)pd_val_truthy(&v);
        pd_str_free(&s);
        pd_val_free(&v);
    }
    free(text);
    return 0;
}
