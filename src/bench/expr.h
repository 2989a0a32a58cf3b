/* The template and expression language of paddiser bench: Jinja2 as IOPS
 * configures it (StrictUndefined, trim_blocks, lstrip_blocks), for
 * vars.expr, constraints and every {{ }} template of a study
 * (docs/bench.md "Templates and expressions" lists what is accepted).
 *   values       ints, floats, strings, bools, none, lists, tuples, dicts
 *                (the lookup's vars, command_env and command_labels, lists of
 *                [key, value] pairs, are dicts), Python's str() and repr()
 *   expressions  Python's arithmetic, comparisons, and/or/not, x if c else y,
 *                subscripts, slices, attributes, '%' formatting, str * int,
 *                ~, filters, tests, string and dict methods, range, dict
 *   templates    {{ }}, {# #}, if/elif/else, for (else, if filter, unpacking,
 *                loop.*), set (also set blocks), macro with calls; Jinja2's
 *                scoping and whitespace control
 * pd_expr_eval uses Python's precedence (IOPS eval()s vars.expr and
 * constraints), pd_template_render Jinja2's. What is not supported is an
 * error naming the construct, never a different output: the differential
 * test (tests/template_diff, make check-template-diff) renders random
 * templates with python3-jinja2 and with this engine and compares. */
#ifndef PD_BENCH_EXPR_H
#define PD_BENCH_EXPR_H

#include <stdbool.h>
#include <stddef.h>

#include "common/util.h"

typedef enum {
    PD_VAL_UNDEF, /* a name the lookup did not know; s holds the name */
    PD_VAL_NONE,
    PD_VAL_BOOL,
    PD_VAL_INT,
    PD_VAL_FLOAT,
    PD_VAL_STR,
    PD_VAL_LIST, /* items[0..n) */
    PD_VAL_DICT, /* items[0..n): [key, value] LIST pairs, in insertion order */
} pd_val_kind;

/* Python objects that iterate like a list but print and compare as
 * themselves (range(0, 3), dict_keys([...]), <list_reverseiterator>):
 * paddiser keeps them as lists and refuses to print or compare them, where
 * it would otherwise differ from Jinja2. */
typedef enum {
    PD_VIEW_NONE,
    PD_VIEW_TUPLE, /* prints (1, 2); never equal to a list */
    PD_VIEW_RANGE,
    PD_VIEW_ITER, /* reverse iterator, generator, the loop object: not printed */
    PD_VIEW_DICT_ITEMS, /* printed dict_items([...]); no indexing, no == */
    PD_VIEW_DICT_KEYS,
    PD_VIEW_DICT_VALUES,
} pd_val_view;

typedef struct pd_val {
    pd_val_kind kind;
    bool b;
    long long i;
    double f;
    char *s; /* owned; STR text, UNDEF name, or how a range prints */
    struct pd_val *items; /* owned; LIST elements */
    size_t n;
    pd_val_view view; /* LIST and DICT only */
} pd_val;

/* Resolves a (possibly dotted) name. Fills out (an owned value) and returns
 * true, or returns false when the name is unknown. */
typedef bool (*pd_lookup_fn)(void *ud, const char *name, pd_val *out);

pd_val pd_val_int(long long i);
pd_val pd_val_float(double f);
pd_val pd_val_bool(bool b);
pd_val pd_val_none(void);
pd_val pd_val_str(const char *s); /* copies s; kind NONE on allocation failure */
pd_val pd_val_copy(const pd_val *v);
void pd_val_free(pd_val *v);
/* Frees n values and the array that holds them (NULL: nothing). */
void pd_vals_free(pd_val *values, size_t n);
bool pd_val_truthy(const pd_val *v);
/* Appends Python's str(v) (floats as repr: 2.0, 0.1, 1e+16). */
void pd_val_append(pd_str *out, const pd_val *v);
/* Appends v as JSON (numbers, strings, true/false/null). */
void pd_val_append_json(pd_str *out, const pd_val *v);
/* Float formatting shared with the CSV writer: shortest round-trip repr. */
void pd_format_float(char *buf, size_t len, double f);

/* Evaluates one expression. 0, or -1 with a message in err. */
int pd_expr_eval(const char *src, pd_lookup_fn lookup, void *ud, pd_val *out, char *err, size_t errlen);

/* Renders a template, appending to out. On error returns -1, with a message
 * in err and *err_line set to the 1-based template line of the failing tag. */
int pd_template_render(const char *tmpl, pd_lookup_fn lookup, void *ud, pd_str *out, char *err,
                       size_t errlen, int *err_line);

/* True when text contains a {{ or {% tag (i.e. is a template, not a plain
 * expression). */
bool pd_template_has_tags(const char *text);

#endif
