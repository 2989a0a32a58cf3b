/* Expression evaluator and template renderer (see expr.h for the language).
 * A recursive-descent parser that evaluates as it parses; a "live" flag lets
 * and/or/if skip the branch they do not take while still checking syntax. */
#include "bench/expr.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- values */

pd_val pd_val_int(long long i) { return (pd_val){.kind = PD_VAL_INT, .i = i}; }
pd_val pd_val_float(double f) { return (pd_val){.kind = PD_VAL_FLOAT, .f = f}; }
pd_val pd_val_bool(bool b) { return (pd_val){.kind = PD_VAL_BOOL, .b = b}; }
pd_val pd_val_none(void) { return (pd_val){.kind = PD_VAL_NONE}; }

pd_val pd_val_str(const char *s)
{
    char *d = pd_strdup(s ? s : "");
    if (!d)
        return pd_val_none();
    return (pd_val){.kind = PD_VAL_STR, .s = d};
}

pd_val pd_val_copy(const pd_val *v)
{
    pd_val c = *v;
    if (v->s) {
        c.s = pd_strdup(v->s);
        if (!c.s)
            return pd_val_none();
    }
    if (v->kind == PD_VAL_LIST || v->kind == PD_VAL_DICT) {
        c.items = calloc(v->n ? v->n : 1, sizeof *c.items);
        if (!c.items) {
            free(c.s);
            return pd_val_none();
        }
        for (size_t i = 0; i < v->n; i++)
            c.items[i] = pd_val_copy(&v->items[i]);
    }
    return c;
}

void pd_val_free(pd_val *v)
{
    free(v->s);
    if (v->kind == PD_VAL_LIST || v->kind == PD_VAL_DICT)
        pd_vals_free(v->items, v->n);
    *v = pd_val_none();
}

void pd_vals_free(pd_val *values, size_t n)
{
    if (!values)
        return;
    for (size_t i = 0; i < n; i++)
        pd_val_free(&values[i]);
    free(values);
}

bool pd_val_truthy(const pd_val *v)
{
    switch (v->kind) {
    case PD_VAL_BOOL: return v->b;
    case PD_VAL_INT: return v->i != 0;
    case PD_VAL_FLOAT: return v->f != 0.0;
    case PD_VAL_STR: return v->s[0] != '\0';
    case PD_VAL_LIST:
    case PD_VAL_DICT: return v->n > 0;
    default: return false;
    }
}

void pd_format_float(char *buf, size_t len, double f)
{
    if (isnan(f)) {
        snprintf(buf, len, "nan");
        return;
    }
    if (isinf(f)) {
        snprintf(buf, len, f < 0 ? "-inf" : "inf");
        return;
    }
    char tmp[64];
    int prec = 1;
    for (; prec <= 17; prec++) {
        snprintf(tmp, sizeof tmp, "%.*e", prec - 1, f);
        if (strtod(tmp, NULL) == f)
            break;
    }
    if (prec > 17)
        prec = 17;
    snprintf(tmp, sizeof tmp, "%.*e", prec - 1, f);
    int exp10 = atoi(strchr(tmp, 'e') + 1);
    if (exp10 >= -4 && exp10 < 16) {
        int decimals = prec - 1 - exp10;
        if (decimals < 0)
            decimals = 0;
        snprintf(buf, len, "%.*f", decimals, f);
        if (!strchr(buf, '.'))
            snprintf(buf + strlen(buf), len - strlen(buf), ".0");
    } else {
        snprintf(buf, len, "%s", tmp);
    }
}

/* Python's repr() of a string: '...' unless it holds ' and no ". */
static void append_str_repr(pd_str *out, const char *s)
{
    char q = strchr(s, '\'') && !strchr(s, '"') ? '"' : '\'';
    pd_str_appendn(out, &q, 1);
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        if (*c == (unsigned char)q || *c == '\\')
            pd_str_printf(out, "\\%c", *c);
        else if (*c == '\n')
            pd_str_append(out, "\\n");
        else if (*c == '\t')
            pd_str_append(out, "\\t");
        else if (*c == '\r')
            pd_str_append(out, "\\r");
        else if (*c < 0x20 || *c == 0x7f)
            pd_str_printf(out, "\\x%02x", *c);
        else
            pd_str_appendn(out, (const char *)c, 1);
    }
    pd_str_appendn(out, &q, 1);
}

/* Python's repr(): strings quoted, containers as [..], (..,) and {k: v}. */
static void append_repr(pd_str *out, const pd_val *v)
{
    if (v->kind == PD_VAL_STR)
        append_str_repr(out, v->s);
    else
        pd_val_append(out, v);
}

void pd_val_append(pd_str *out, const pd_val *v)
{
    char buf[64];
    switch (v->kind) {
    case PD_VAL_BOOL: pd_str_append(out, v->b ? "True" : "False"); break;
    case PD_VAL_INT: pd_str_printf(out, "%lld", v->i); break;
    case PD_VAL_FLOAT:
        pd_format_float(buf, sizeof buf, v->f);
        pd_str_append(out, buf);
        break;
    case PD_VAL_STR: pd_str_append(out, v->s); break;
    case PD_VAL_NONE: pd_str_append(out, "None"); break;
    case PD_VAL_LIST: /* Python's repr: [1, 'a'], (1,), dict_keys(['a']), range(0, 3) */
        if (v->view == PD_VIEW_RANGE && v->s) {
            pd_str_append(out, v->s);
            break;
        }
        pd_str_append(out, v->view == PD_VIEW_DICT_ITEMS    ? "dict_items(["
                           : v->view == PD_VIEW_DICT_KEYS   ? "dict_keys(["
                           : v->view == PD_VIEW_DICT_VALUES ? "dict_values(["
                           : v->view == PD_VIEW_TUPLE       ? "("
                                                            : "[");
        for (size_t i = 0; i < v->n; i++) {
            if (i)
                pd_str_append(out, ", ");
            append_repr(out, &v->items[i]);
        }
        pd_str_append(out, v->view >= PD_VIEW_DICT_ITEMS ? "])" : v->view != PD_VIEW_TUPLE ? "]" : v->n == 1 ? ",)" : ")");
        break;
    case PD_VAL_DICT: /* {'a': 1} */
        pd_str_append(out, "{");
        for (size_t i = 0; i < v->n; i++) {
            if (i)
                pd_str_append(out, ", ");
            if (v->items[i].kind == PD_VAL_LIST && v->items[i].n == 2) {
                append_repr(out, &v->items[i].items[0]);
                pd_str_append(out, ": ");
                append_repr(out, &v->items[i].items[1]);
            }
        }
        pd_str_append(out, "}");
        break;
    case PD_VAL_UNDEF: break;
    }
}

void pd_val_append_json(pd_str *out, const pd_val *v)
{
    char buf[64];
    switch (v->kind) {
    case PD_VAL_BOOL: pd_str_append(out, v->b ? "true" : "false"); break;
    case PD_VAL_INT: pd_str_printf(out, "%lld", v->i); break;
    case PD_VAL_FLOAT:
        if (!isfinite(v->f)) {
            pd_str_append(out, "null");
            break;
        }
        pd_format_float(buf, sizeof buf, v->f);
        pd_str_append(out, buf);
        break;
    case PD_VAL_STR:
        pd_str_append(out, "\"");
        for (const unsigned char *c = (const unsigned char *)v->s; *c; c++) {
            if (*c == '"' || *c == '\\')
                pd_str_printf(out, "\\%c", *c);
            else if (*c == '\n')
                pd_str_append(out, "\\n");
            else if (*c == '\t')
                pd_str_append(out, "\\t");
            else if (*c == '\r')
                pd_str_append(out, "\\r");
            else if (*c < 0x20)
                pd_str_printf(out, "\\u%04x", *c);
            else
                pd_str_appendn(out, (const char *)c, 1);
        }
        pd_str_append(out, "\"");
        break;
    case PD_VAL_LIST:
        pd_str_append(out, "[");
        for (size_t i = 0; i < v->n; i++) {
            if (i)
                pd_str_append(out, ", ");
            pd_val_append_json(out, &v->items[i]);
        }
        pd_str_append(out, "]");
        break;
    case PD_VAL_DICT:
        pd_str_append(out, "{");
        for (size_t i = 0; i < v->n; i++) {
            if (i)
                pd_str_append(out, ", ");
            if (v->items[i].kind == PD_VAL_LIST && v->items[i].n == 2) {
                pd_str tmp = {0};
                pd_val_append(&tmp, &v->items[i].items[0]);
                pd_val k = {.kind = PD_VAL_STR, .s = tmp.data ? tmp.data : (char *)""};
                pd_val_append_json(out, &k);
                pd_str_free(&tmp);
                pd_str_append(out, ": ");
                pd_val_append_json(out, &v->items[i].items[1]);
            }
        }
        pd_str_append(out, "}");
        break;
    default: pd_str_append(out, "null"); break;
    }
}

/* ---------------------------------------------------------------- lexer */

enum { T_END, T_INT, T_FLOAT, T_STR, T_NAME, T_OP };

/* Calls of names that are not builtin functions (template macros): 0 with
 * *out set, -1 with a message in err, 1 when name is not callable. kw[i] is
 * the keyword of args[i], NULL for a positional argument. */
typedef int (*call_fn)(void *ud, const char *name, pd_val *args, char **kw, int n, pd_val *out, char *err,
                       size_t errlen);

typedef struct {
    const char *src, *p;
    pd_lookup_fn lookup;
    void *ud;
    char *err;
    size_t errlen;
    bool failed;
    int depth; /* nesting of parse_expr, parse_unary and parse_not */
    /* current token */
    int type;
    char op[3];
    long long ival;
    double fval;
    pd_str text; /* NAME or STR contents */
    call_fn call; /* NULL outside templates */
    const char *tok; /* where the current token starts */
    /* pd_expr_eval: Python's precedence, as IOPS evaluates vars.expr and
     * constraints with Python's eval() (-2 ** 2 is -4, filters bind to
     * their operand); templates: Jinja2's (-2 ** 2 is 4, -x|abs is
     * abs(-x), ~ binds tighter than + and -). */
    bool python;
} parser;

static int fail(parser *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(parser *p, const char *fmt, ...)
{
    if (!p->failed) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(p->err, p->errlen, fmt, ap);
        va_end(ap);
        p->failed = true;
    }
    return -1;
}

static const char *tok_desc(parser *p, char *buf, size_t len)
{
    switch (p->type) {
    case T_END: return "end of expression";
    case T_INT: snprintf(buf, len, "number %lld", p->ival); return buf;
    case T_FLOAT: snprintf(buf, len, "number %g", p->fval); return buf;
    case T_STR: snprintf(buf, len, "string '%.40s'", p->text.data ? p->text.data : ""); return buf;
    case T_NAME: snprintf(buf, len, "'%.40s'", p->text.data); return buf;
    default: snprintf(buf, len, "'%s'", p->op); return buf;
    }
}

static int unexpected(parser *p, const char *wanted)
{
    char b[80];
    return fail(p, "expected %s, found %s (in \"%s\")", wanted, tok_desc(p, b, sizeof b), p->src);
}

static int lex(parser *p)
{
    pd_str_clear(&p->text);
    while (isspace((unsigned char)*p->p))
        p->p++;
    const char *s = p->p;
    p->tok = s;
    if (!*s) {
        p->type = T_END;
        return 0;
    }
    if (isdigit((unsigned char)*s) || (*s == '.' && isdigit((unsigned char)s[1]))) {
        const char *e = s;
        bool is_float = false;
        while (isdigit((unsigned char)*e))
            e++;
        if (*e == '.' && isdigit((unsigned char)e[1])) {
            is_float = true;
            e++;
            while (isdigit((unsigned char)*e))
                e++;
        }
        if ((*e == 'e' || *e == 'E') &&
            (isdigit((unsigned char)e[1]) || ((e[1] == '+' || e[1] == '-') && isdigit((unsigned char)e[2])))) {
            is_float = true;
            e += 2;
            while (isdigit((unsigned char)*e))
                e++;
        }
        if (isalpha((unsigned char)*e) || *e == '_')
            return fail(p, "malformed number '%.*s' (in \"%s\")", (int)(e - s + 1), s, p->src);
        char num[128];
        size_t n = (size_t)(e - s);
        if (n >= sizeof num)
            return fail(p, "number too long (in \"%s\")", p->src);
        memcpy(num, s, n);
        num[n] = '\0';
        errno = 0;
        if (is_float) {
            p->type = T_FLOAT;
            p->fval = strtod(num, NULL);
        } else {
            p->type = T_INT;
            p->ival = strtoll(num, NULL, 10);
            if (errno == ERANGE)
                return fail(p, "integer %s is too large (in \"%s\")", num, p->src);
        }
        p->p = e;
        return 0;
    }
    if (isalpha((unsigned char)*s) || *s == '_') {
        const char *e = s;
        while (isalnum((unsigned char)*e) || *e == '_')
            e++;
        p->type = T_NAME;
        pd_str_appendn(&p->text, s, (size_t)(e - s));
        p->p = e;
        return 0;
    }
    if (*s == '"' || *s == '\'') {
        char q = *s;
        const char *e = s + 1;
        pd_str_append(&p->text, "");
        while (*e && *e != q) {
            if (*e == '\\' && e[1]) {
                e++;
                char c = *e;
                switch (c) {
                case 'n': c = '\n'; break;
                case 't': c = '\t'; break;
                case 'r': c = '\r'; break;
                default: break;
                }
                pd_str_appendn(&p->text, &c, 1);
            } else {
                pd_str_appendn(&p->text, e, 1);
            }
            e++;
        }
        if (*e != q)
            return fail(p, "unterminated string literal (in \"%s\")", p->src);
        p->type = T_STR;
        p->p = e + 1;
        return 0;
    }
    static const char *two[] = {"**", "//", "==", "!=", "<=", ">="};
    for (size_t i = 0; i < PD_ARRAY_LEN(two); i++)
        if (!strncmp(s, two[i], 2)) {
            p->type = T_OP;
            memcpy(p->op, s, 2);
            p->op[2] = '\0';
            p->p = s + 2;
            return 0;
        }
    if (strchr("+-*/%~<>()|,.[]:{}", *s)) {
        p->type = T_OP;
        p->op[0] = *s;
        p->op[1] = '\0';
        p->p = s + 1;
        return 0;
    }
    return fail(p, "unexpected character '%c' (in \"%s\")", *s, p->src);
}

static bool is_op(parser *p, const char *op) { return p->type == T_OP && !strcmp(p->op, op); }
static bool is_kw(parser *p, const char *kw) { return p->type == T_NAME && !strcmp(p->text.data, kw); }

static int expect_op(parser *p, const char *op)
{
    if (!is_op(p, op)) {
        char w[16];
        snprintf(w, sizeof w, "'%s'", op);
        return unexpected(p, w);
    }
    return lex(p);
}

/* ---------------------------------------------------------- value helpers */

static int need_defined(parser *p, const pd_val *v)
{
    if (v->kind == PD_VAL_UNDEF)
        return fail(p, "unknown name '%s'", v->s);
    return 0;
}

static bool is_num(const pd_val *v) { return v->kind == PD_VAL_INT || v->kind == PD_VAL_FLOAT || v->kind == PD_VAL_BOOL; }
static bool is_intlike(const pd_val *v) { return v->kind == PD_VAL_INT || v->kind == PD_VAL_BOOL; }
static long long as_int(const pd_val *v) { return v->kind == PD_VAL_BOOL ? (long long)v->b : v->i; }
static double as_dbl(const pd_val *v) { return v->kind == PD_VAL_FLOAT ? v->f : (double)as_int(v); }

static const char *kind_name(const pd_val *v)
{
    switch (v->kind) {
    case PD_VAL_BOOL: return "bool";
    case PD_VAL_INT: return "int";
    case PD_VAL_FLOAT: return "float";
    case PD_VAL_STR: return "str";
    case PD_VAL_NONE: return "none";
    case PD_VAL_LIST:
        return v->view == PD_VIEW_TUPLE         ? "tuple"
               : v->view == PD_VIEW_RANGE       ? "range"
               : v->view == PD_VIEW_DICT_ITEMS  ? "dict_items"
               : v->view == PD_VIEW_DICT_KEYS   ? "dict_keys"
               : v->view == PD_VIEW_DICT_VALUES ? "dict_values"
               : v->view                        ? "iterator"
                                                : "list";
    case PD_VAL_DICT: return "dict";
    default: return "undefined";
    }
}

static int binop_error(parser *p, const char *op, const pd_val *a, const pd_val *b)
{
    return fail(p, "unsupported operand types for %s: %s and %s (in \"%s\")", op, kind_name(a), kind_name(b), p->src);
}

#define MAX_LIST_ITEMS 100000

/* Appends a copy of v to list (a LIST value). */
static int list_push(parser *p, pd_val *list, pd_val v)
{
    if (list->n >= MAX_LIST_ITEMS) {
        pd_val_free(&v);
        return fail(p, "list longer than %d items", MAX_LIST_ITEMS);
    }
    pd_val *grown = realloc(list->items, (list->n + 1) * sizeof *grown);
    if (!grown) {
        pd_val_free(&v);
        return fail(p, "out of memory");
    }
    list->items = grown;
    list->items[list->n++] = v;
    return 0;
}

static pd_val empty_list(void) { return (pd_val){.kind = PD_VAL_LIST}; }

static int str_result(parser *p, pd_str *s, pd_val *out)
{
    pd_str_append(s, "");
    char *d = pd_str_take(s);
    if (!d)
        return fail(p, "out of memory");
    *out = (pd_val){.kind = PD_VAL_STR, .s = d};
    return 0;
}

#define MAX_STR_BYTES ((size_t)16 << 20)

static bool is_opaque(const pd_val *v)
{
    return (v->kind == PD_VAL_LIST || v->kind == PD_VAL_DICT) &&
           ((v->view == PD_VIEW_RANGE && !v->s) || v->view == PD_VIEW_ITER);
}

/* Ranges, iterators and dict views: Python objects of their own, which
 * neither index, add, repeat nor compare as lists do. */
static bool is_view(const pd_val *v)
{
    return (v->kind == PD_VAL_LIST || v->kind == PD_VAL_DICT) && v->view != PD_VIEW_NONE && v->view != PD_VIEW_TUPLE;
}

/* Views without indexing or len() of a sequence's kind (iterators, dict views). */
static bool is_unindexed(const pd_val *v) { return is_view(v) && v->view != PD_VIEW_RANGE; }

/* Values Jinja2 prints as Python objects (range(0, 3), dict_keys([...]),
 * <list_reverseiterator object at 0x...>) are refused rather than printed
 * differently. */
static int need_printable(parser *p, const pd_val *v)
{
    if (need_defined(p, v))
        return -1;
    if (is_opaque(v))
        return fail(p, "printing this %s (Jinja2 prints the Python object) is not supported; add |list (in \"%s\")",
                    kind_name(v), p->src);
    if (v->kind == PD_VAL_LIST || v->kind == PD_VAL_DICT)
        for (size_t i = 0; i < v->n; i++)
            if (need_printable(p, &v->items[i]))
                return -1;
    return 0;
}

/* Python's printf-style formatting, fmt % rhs: rhs a tuple of arguments or
 * a single one. %s %r %d %i %u %f %F %e %E %g %G %x %X %o %% with the
 * flags -+ 0 (and # but for o), a width and a precision. */
static int percent_format(parser *p, const char *fmt, const pd_val *rhs, pd_val *out)
{
    const pd_val *args = rhs;
    size_t nargs = 1, ai = 0;
    if (rhs->kind == PD_VAL_LIST && rhs->view == PD_VIEW_TUPLE) {
        args = rhs->items;
        nargs = rhs->n;
    } else if (rhs->kind == PD_VAL_DICT || rhs->kind == PD_VAL_LIST) {
        return fail(p, "'%%' formatting with a %s on the right is not supported; use a tuple (in \"%s\")",
                    kind_name(rhs), p->src);
    }
    pd_str r = {0};
    pd_str_append(&r, "");
    for (const char *c = fmt; *c; c++) {
        if (*c != '%') {
            pd_str_appendn(&r, c, 1);
            continue;
        }
        c++;
        if (*c == '%') {
            pd_str_append(&r, "%");
            continue;
        }
        char flags[8];
        int nf = 0, width = -1, prec = -1;
        while (*c && strchr("-+ 0#", *c)) {
            if (nf < 7)
                flags[nf++] = *c;
            c++;
        }
        flags[nf] = '\0';
        /* capped past the 4096 limit below (found by make fuzz: int overflow) */
        for (; isdigit((unsigned char)*c); c++)
            width = width > 100000 ? width : (width < 0 ? 0 : width * 10) + (*c - '0');
        if (*c == '.')
            for (prec = 0, c++; isdigit((unsigned char)*c); c++)
                prec = prec > 100000 ? prec : prec * 10 + (*c - '0');
        while (*c == 'h' || *c == 'l' || *c == 'L')
            c++;
        char conv = *c;
        const char *why = NULL;
        if (!conv)
            why = "incomplete format";
        else if (width > 4096 || prec > 4096)
            why = "width or precision over 4096";
        else if (!strchr("srdiufFeEgGxXo", conv))
            why = "this conversion ('%(name)s', '*', %c ...) is not supported";
        else if (ai >= nargs)
            why = "not enough arguments for format string";
        if (why) {
            pd_str_free(&r);
            return fail(p, "'%%' formatting: %s (in \"%s\")", why, p->src);
        }
        const pd_val *a = &args[ai++];
        if (need_defined(p, a)) {
            pd_str_free(&r);
            return -1;
        }
        char buf[4200 + 400];
        if (conv == 's' || conv == 'r') {
            if (need_printable(p, a)) {
                pd_str_free(&r);
                return -1;
            }
            pd_str t = {0};
            pd_str_append(&t, "");
            if (conv == 'r')
                append_repr(&t, a);
            else
                pd_val_append(&t, a);
            size_t len = t.len;
            if (prec >= 0 && (size_t)prec < len)
                len = (size_t)prec;
            bool left = strchr(flags, '-') != NULL;
            for (int k = (int)len; !left && k < width; k++)
                pd_str_append(&r, " ");
            pd_str_appendn(&r, t.data, len);
            for (int k = (int)len; left && k < width; k++)
                pd_str_append(&r, " ");
            pd_str_free(&t);
            continue;
        }
        if (!is_num(a)) {
            pd_str_free(&r);
            return fail(p, "'%%' formatting: %%%c needs a number, not %s (in \"%s\")", conv, kind_name(a), p->src);
        }
        if (strchr("diuxXo", conv)) {
            long long iv;
            if (is_intlike(a)) {
                iv = as_int(a);
            } else if (strchr("xXo", conv) || !isfinite(a->f) || fabs(a->f) > 9.2e18) {
                pd_str_free(&r);
                return fail(p, "'%%' formatting: %%%c of %g is not supported (in \"%s\")", conv, a->f, p->src);
            } else {
                iv = (long long)a->f;
            }
            if (strchr("xXo", conv) && (iv < 0 || strchr(flags, '#'))) {
                pd_str_free(&r);
                return fail(p, "'%%' formatting: %%%c of a negative number or with '#' is not supported (in \"%s\")",
                            conv, p->src);
            }
            pd_str sp = {0};
            pd_str_printf(&sp, "%%%s", flags);
            if (width >= 0)
                pd_str_printf(&sp, "%d", width);
            if (prec >= 0)
                pd_str_printf(&sp, ".%d", prec);
            pd_str_printf(&sp, "ll%c", strchr("iu", conv) ? 'd' : conv);
            snprintf(buf, sizeof buf, sp.data, iv);
            pd_str_free(&sp);
        } else {
            pd_str sp = {0};
            pd_str_printf(&sp, "%%%s", flags);
            if (width >= 0)
                pd_str_printf(&sp, "%d", width);
            if (prec >= 0)
                pd_str_printf(&sp, ".%d", prec);
            pd_str_printf(&sp, "%c", conv);
            double d = as_dbl(a);
            if (fabs(d) >= 1e50 && (conv == 'f' || conv == 'F')) {
                pd_str_free(&sp);
                pd_str_free(&r);
                return fail(p, "'%%' formatting: %%f of %g is not supported (in \"%s\")", d, p->src);
            }
            snprintf(buf, sizeof buf, sp.data, d);
            pd_str_free(&sp);
        }
        pd_str_append(&r, buf);
    }
    if (ai < nargs) {
        pd_str_free(&r);
        return fail(p, "'%%' formatting: not all arguments converted during string formatting (in \"%s\")", p->src);
    }
    return str_result(p, &r, out);
}

/* str * int, list * int (Python's repetition). */
static int repeat(parser *p, const pd_val *seq, long long times, pd_val *out)
{
    if (times < 0)
        times = 0;
    if (seq->kind == PD_VAL_STR) {
        size_t len = strlen(seq->s);
        if (len && (unsigned long long)times > MAX_STR_BYTES / len)
            return fail(p, "string repetition longer than %zu MiB (in \"%s\")", MAX_STR_BYTES >> 20, p->src);
        pd_str r = {0};
        pd_str_append(&r, "");
        for (long long i = 0; i < times && len; i++)
            pd_str_append(&r, seq->s);
        return str_result(p, &r, out);
    }
    if (seq->n && (unsigned long long)times > MAX_LIST_ITEMS / seq->n)
        return fail(p, "list longer than %d items (in \"%s\")", MAX_LIST_ITEMS, p->src);
    /* allocated at once: growing by list_push was quadratic (found by make fuzz) */
    size_t total = seq->n * (size_t)times;
    *out = empty_list();
    out->view = seq->view;
    out->items = calloc(total ? total : 1, sizeof *out->items);
    if (!out->items)
        return fail(p, "out of memory");
    for (size_t i = 0; i < total; i++)
        out->items[out->n++] = pd_val_copy(&seq->items[i % seq->n]);
    return 0;
}

static long long floordiv_ll(long long a, long long b)
{
    long long q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0)))
        q--;
    return q;
}

static int arith(parser *p, const char *op, pd_val *a, pd_val *b, pd_val *out)
{
    if (need_defined(p, a) || need_defined(p, b))
        return -1;
    if (!strcmp(op, "+") && a->kind == PD_VAL_STR && b->kind == PD_VAL_STR) {
        pd_str s = {0};
        pd_str_append(&s, a->s);
        pd_str_append(&s, b->s);
        char *d = pd_str_take(&s);
        if (!d)
            return fail(p, "out of memory");
        *out = (pd_val){.kind = PD_VAL_STR, .s = d};
        return 0;
    }
    if (!strcmp(op, "%") && a->kind == PD_VAL_STR)
        return percent_format(p, a->s, b, out);
    if (!strcmp(op, "*") && (a->kind == PD_VAL_STR || a->kind == PD_VAL_LIST) && is_intlike(b))
        return is_view(a) ? binop_error(p, op, a, b) : repeat(p, a, as_int(b), out);
    if (!strcmp(op, "*") && (b->kind == PD_VAL_STR || b->kind == PD_VAL_LIST) && is_intlike(a))
        return is_view(b) ? binop_error(p, op, a, b) : repeat(p, b, as_int(a), out);
    if (!strcmp(op, "+") && a->kind == PD_VAL_LIST && b->kind == PD_VAL_LIST) {
        if (is_view(a) || is_view(b) || a->view != b->view)
            return binop_error(p, op, a, b);
        pd_val r = {.kind = PD_VAL_LIST, .n = a->n + b->n, .view = a->view};
        r.items = calloc(r.n ? r.n : 1, sizeof *r.items);
        if (!r.items)
            return fail(p, "out of memory");
        for (size_t i = 0; i < a->n; i++)
            r.items[i] = pd_val_copy(&a->items[i]);
        for (size_t i = 0; i < b->n; i++)
            r.items[a->n + i] = pd_val_copy(&b->items[i]);
        *out = r;
        return 0;
    }
    if (!is_num(a) || !is_num(b))
        return binop_error(p, op, a, b);
    bool ints = is_intlike(a) && is_intlike(b);
    long long x = as_int(a), y = as_int(b), r;
    double fx = as_dbl(a), fy = as_dbl(b);
    switch (op[0]) {
    case '+':
    case '-':
        if (ints) {
            if (op[0] == '+' ? __builtin_add_overflow(x, y, &r) : __builtin_sub_overflow(x, y, &r))
                return fail(p, "integer overflow (in \"%s\")", p->src);
            *out = pd_val_int(r);
        } else {
            *out = pd_val_float(op[0] == '+' ? fx + fy : fx - fy);
        }
        return 0;
    case '*':
        if (op[1] == '*') {
            if (ints && y >= 0) {
                /* by squaring: O(log y) steps, so 1 ** (2^63-1) ends at once */
                long long acc = 1, base = x;
                for (long long e = y; e > 0; e >>= 1) {
                    if ((e & 1) && __builtin_mul_overflow(acc, base, &acc))
                        return fail(p, "integer overflow (in \"%s\")", p->src);
                    if (e > 1 && __builtin_mul_overflow(base, base, &base))
                        return fail(p, "integer overflow (in \"%s\")", p->src);
                }
                *out = pd_val_int(acc);
            } else {
                *out = pd_val_float(pow(fx, fy));
            }
            return 0;
        }
        if (ints) {
            if (__builtin_mul_overflow(x, y, &r))
                return fail(p, "integer overflow (in \"%s\")", p->src);
            *out = pd_val_int(r);
        } else {
            *out = pd_val_float(fx * fy);
        }
        return 0;
    case '/':
        if (ints ? y == 0 : fy == 0.0)
            return fail(p, "division by zero (in \"%s\")", p->src);
        if (op[1] == '/') {
            if (ints)
                *out = pd_val_int(floordiv_ll(x, y));
            else
                *out = pd_val_float(floor(fx / fy));
        } else {
            *out = pd_val_float(fx / fy);
        }
        return 0;
    case '%':
        if (ints ? y == 0 : fy == 0.0)
            return fail(p, "modulo by zero (in \"%s\")", p->src);
        if (ints) {
            long long m = x % y;
            if (m != 0 && ((m < 0) != (y < 0)))
                m += y;
            *out = pd_val_int(m);
        } else {
            double m = fmod(fx, fy);
            if (m != 0 && ((m < 0) != (fy < 0)))
                m += fy;
            *out = pd_val_float(m);
        }
        return 0;
    }
    return fail(p, "unknown operator %s", op);
}

/* Returns <0, 0, >0 in *cmp, or sets *comparable false. */
static void compare(const pd_val *a, const pd_val *b, int *cmp, bool *comparable)
{
    *comparable = true;
    if (is_num(a) && is_num(b)) {
        if (is_intlike(a) && is_intlike(b))
            *cmp = (as_int(a) > as_int(b)) - (as_int(a) < as_int(b));
        else
            *cmp = (as_dbl(a) > as_dbl(b)) - (as_dbl(a) < as_dbl(b));
    } else if (a->kind == PD_VAL_STR && b->kind == PD_VAL_STR) {
        *cmp = strcmp(a->s, b->s);
    } else if (a->kind == PD_VAL_NONE && b->kind == PD_VAL_NONE) {
        *cmp = 0;
    } else if (a->kind == PD_VAL_DICT && b->kind == PD_VAL_DICT) { /* == only: same keys, equal values */
        *comparable = false;
        *cmp = 1;
        if (a->n != b->n)
            return;
        for (size_t i = 0; i < a->n; i++) {
            bool found = false;
            for (size_t j = 0; j < b->n && !found; j++) {
                int c;
                bool ok;
                compare(&a->items[i].items[0], &b->items[j].items[0], &c, &ok);
                if (ok && c == 0) {
                    found = true;
                    compare(&a->items[i].items[1], &b->items[j].items[1], &c, &ok);
                    if (!ok || c)
                        return;
                }
            }
            if (!found)
                return;
        }
        *cmp = 0;
        *comparable = true;
    } else if (a->kind == PD_VAL_LIST && b->kind == PD_VAL_LIST &&
               (a->view == PD_VIEW_TUPLE) == (b->view == PD_VIEW_TUPLE)) { /* lexicographic, as Python */
        for (size_t i = 0; i < a->n && i < b->n; i++) {
            compare(&a->items[i], &b->items[i], cmp, comparable);
            if (!*comparable || *cmp)
                return;
        }
        *cmp = (a->n > b->n) - (a->n < b->n);
    } else {
        *comparable = false;
        *cmp = 1;
    }
}

/* ------------------------------------------------------- conversions */

static int to_int(parser *p, const pd_val *v, pd_val *out, const char *who)
{
    if (need_defined(p, v))
        return -1;
    if (is_intlike(v)) {
        *out = pd_val_int(as_int(v));
        return 0;
    }
    if (v->kind == PD_VAL_FLOAT) {
        if (!isfinite(v->f) || fabs(v->f) > 9.2e18)
            return fail(p, "%s: cannot convert %g to int", who, v->f);
        *out = pd_val_int((long long)v->f);
        return 0;
    }
    if (v->kind == PD_VAL_STR) {
        long l;
        double d;
        if (pd_parse_long(v->s, &l)) {
            *out = pd_val_int(l);
            return 0;
        }
        if (pd_parse_double(v->s, &d) && isfinite(d) && fabs(d) < 9.2e18) {
            *out = pd_val_int((long long)d);
            return 0;
        }
        return fail(p, "%s: cannot convert '%s' to int", who, v->s);
    }
    return fail(p, "%s: cannot convert %s to int", who, kind_name(v));
}

static int to_float(parser *p, const pd_val *v, pd_val *out, const char *who)
{
    if (need_defined(p, v))
        return -1;
    if (is_num(v)) {
        *out = pd_val_float(as_dbl(v));
        return 0;
    }
    if (v->kind == PD_VAL_STR) {
        double d;
        if (pd_parse_double(v->s, &d)) {
            *out = pd_val_float(d);
            return 0;
        }
        return fail(p, "%s: cannot convert '%s' to float", who, v->s);
    }
    return fail(p, "%s: cannot convert %s to float", who, kind_name(v));
}

static int to_string(parser *p, const pd_val *v, pd_val *out)
{
    if (need_defined(p, v))
        return -1;
    pd_str s = {0};
    pd_val_append(&s, v);
    pd_str_append(&s, "");
    char *d = pd_str_take(&s);
    if (!d)
        return fail(p, "out of memory");
    *out = (pd_val){.kind = PD_VAL_STR, .s = d};
    return 0;
}

static double round_digits(double x, long long nd)
{
    if (nd == 0)
        return rint(x); /* ties to even, as Python's round() */
    if (nd > 0 && nd < 300) { /* exact decimal rounding of the binary value, as Python */
        char buf[400];
        snprintf(buf, sizeof buf, "%.*f", (int)nd, x);
        return strtod(buf, NULL);
    }
    double scale = pow(10.0, (double)nd);
    double r = rint(x * scale) / scale;
    return isfinite(r) ? r : x;
}

/* ---------------------------------------------------------------- parser */

static int parse_expr(parser *p, bool live, pd_val *out);

#define MAX_ARGS 16

static void free_args(pd_val *args, int n)
{
    for (int i = 0; i < n; i++)
        pd_val_free(&args[i]);
}

static void free_kw(char **kw, int n)
{
    for (int i = 0; kw && i < n; i++) {
        free(kw[i]);
        kw[i] = NULL;
    }
}

/* True when the current NAME token is followed by a lone '=' (a keyword
 * argument, not ==). */
static bool at_keyword_arg(parser *p)
{
    if (p->type != T_NAME)
        return false;
    const char *c = p->p;
    while (isspace((unsigned char)*c))
        c++;
    return c[0] == '=' && c[1] != '=';
}

/* Parses "( a, b, k=v, ... )" when present; the current token is '(' or
 * not. Keyword arguments need kw (their names, NULL for positional ones;
 * the caller frees them with free_kw). */
static int parse_args_kw(parser *p, bool live, pd_val *args, char **kw, int *nargs)
{
    *nargs = 0;
    for (int i = 0; kw && i < MAX_ARGS; i++)
        kw[i] = NULL;
    if (!is_op(p, "("))
        return 0;
    if (lex(p))
        return -1;
    if (is_op(p, ")"))
        return lex(p);
    for (;;) {
        if (*nargs == MAX_ARGS)
            return fail(p, "too many arguments (in \"%s\")", p->src);
        if (at_keyword_arg(p)) {
            if (!kw)
                return fail(p, "keyword argument '%s=' is not supported here (in \"%s\")", p->text.data, p->src);
            kw[*nargs] = pd_strdup(p->text.data);
            while (*p->p != '=')
                p->p++;
            p->p++;
            if (!kw[*nargs])
                return fail(p, "out of memory");
            if (lex(p)) {
                free_kw(kw + *nargs, 1);
                return -1;
            }
        } else if (kw && *nargs && kw[*nargs - 1]) {
            return fail(p, "positional argument follows keyword argument (in \"%s\")", p->src);
        }
        args[*nargs] = pd_val_none();
        if (parse_expr(p, live, &args[*nargs])) { /* found by make fuzz: the keyword leaked */
            pd_val_free(&args[*nargs]);
            if (kw)
                free_kw(kw + *nargs, 1);
            return -1;
        }
        (*nargs)++;
        if (is_op(p, ")"))
            return lex(p);
        if (!is_op(p, ","))
            return unexpected(p, "',' or ')'");
        if (lex(p))
            return -1;
        if (is_op(p, ")"))
            return lex(p);
    }
}

static int parse_args(parser *p, bool live, pd_val *args, int *nargs)
{
    return parse_args_kw(p, live, args, NULL, nargs);
}

/* An argument slot bind_params left empty (an undefined name passed as an
 * argument has its name in s, and is given). */
static bool given(const pd_val *v) { return v->kind != PD_VAL_UNDEF || v->s; }

/* Moves keyword arguments into the positional slots named by params (a
 * filter's or function's signature), as Python binds them. Slots not given
 * are PD_VAL_UNDEF. n becomes the number of slots used. */
static int bind_params(parser *p, const char *who, const char *const *params, pd_val *args, char **kw, int *n)
{
    pd_val bound[MAX_ARGS];
    int np = 0;
    while (params[np])
        np++;
    for (int i = 0; i < np; i++)
        bound[i] = (pd_val){.kind = PD_VAL_UNDEF};
    int used = 0, rc = 0;
    for (int i = 0; i < *n && !rc; i++) {
        int slot = i;
        if (kw[i]) {
            for (slot = 0; slot < np && strcmp(params[slot], kw[i]); slot++)
                ;
            if (slot == np)
                rc = fail(p, "%s got an unexpected (or unsupported) keyword argument '%s'", who, kw[i]);
        } else if (slot >= np) {
            rc = fail(p, "%s takes at most %d argument(s), got %d", who, np, *n);
        }
        if (!rc && given(&bound[slot]))
            rc = fail(p, "%s got multiple values for argument '%s'", who, params[slot]);
        if (!rc) {
            bound[slot] = args[i];
            args[i] = pd_val_none();
            if (slot + 1 > used)
                used = slot + 1;
        }
    }
    free_args(args, *n);
    free_kw(kw, *n);
    for (int i = 0; i < np; i++)
        args[i] = bound[i];
    *n = rc ? np : used;
    return rc;
}

/* A tuple value (Python's (a, b)). */
static pd_val empty_tuple(void) { return (pd_val){.kind = PD_VAL_LIST, .view = PD_VIEW_TUPLE}; }

/* The harness's mappings (vars, command_env, command_labels) come from the
 * lookup as lists of [key, value] pairs; in expressions they are dicts, as
 * in Jinja2: iterating one gives its keys. */
static bool resolve(parser *p, const char *name, pd_val *out)
{
    if (!p->lookup(p->ud, name, out))
        return false;
    if (out->kind == PD_VAL_LIST && out->view == PD_VIEW_NONE &&
        (!strcmp(name, "vars") || !strcmp(name, "command_env") || !strcmp(name, "command_labels"))) {
        bool pairs = true;
        for (size_t i = 0; i < out->n && pairs; i++)
            pairs = out->items[i].kind == PD_VAL_LIST && out->items[i].n == 2;
        if (pairs)
            out->kind = PD_VAL_DICT;
    }
    return true;
}

/* Python's hash(): lists, dicts and views are not (tuples of hashables are). */
static bool is_hashable(const pd_val *v)
{
    if (v->kind == PD_VAL_DICT || (v->kind == PD_VAL_LIST && v->view != PD_VIEW_TUPLE))
        return false;
    for (size_t i = 0; v->kind == PD_VAL_LIST && i < v->n; i++)
        if (!is_hashable(&v->items[i]))
            return false;
    return true;
}

/* The [key, value] pair of key in dict d, or NULL. */
static const pd_val *dict_find(const pd_val *d, const pd_val *key)
{
    for (size_t i = 0; i < d->n; i++) {
        int c;
        bool ok;
        compare(&d->items[i].items[0], key, &c, &ok);
        if (ok && c == 0)
            return &d->items[i];
    }
    return NULL;
}

/* Sets d[key] = value (both taken). */
static int dict_set(parser *p, pd_val *d, pd_val key, pd_val value)
{
    for (size_t i = 0; i < d->n; i++) {
        int c;
        bool ok;
        compare(&d->items[i].items[0], &key, &c, &ok);
        if (ok && c == 0) {
            pd_val_free(&key);
            pd_val_free(&d->items[i].items[1]);
            d->items[i].items[1] = value;
            return 0;
        }
    }
    pd_val pr = {.kind = PD_VAL_LIST, .n = 2, .view = PD_VIEW_TUPLE, .items = calloc(2, sizeof(pd_val))};
    if (!pr.items) {
        pd_val_free(&key);
        pd_val_free(&value);
        return fail(p, "out of memory");
    }
    pr.items[0] = key;
    pr.items[1] = value;
    return list_push(p, d, pr);
}

/* Keys, values or (key, value) tuples of a dict, as a new list. */
static int dict_part(parser *p, const pd_val *d, char which, pd_val *out)
{
    *out = empty_list();
    for (size_t i = 0; i < d->n; i++) {
        const pd_val *pr = &d->items[i];
        pd_val v = pd_val_copy(which == 'i' ? pr : &pr->items[which == 'k' ? 0 : 1]);
        if (which == 'i')
            v.view = PD_VIEW_TUPLE;
        if (list_push(p, out, v))
            return -1;
    }
    return 0;
}

/* What iterating v gives (a list, dict keys, a string's characters). */
static int iter_items(parser *p, const pd_val *v, pd_val *out)
{
    if (need_defined(p, v))
        return -1;
    if (v->kind == PD_VAL_DICT)
        return dict_part(p, v, 'k', out);
    if (v->kind == PD_VAL_LIST) {
        *out = pd_val_copy(v);
        out->view = PD_VIEW_NONE;
        free(out->s); /* a range's text */
        out->s = NULL;
        return 0;
    }
    if (v->kind == PD_VAL_STR) {
        *out = empty_list();
        for (const char *c = v->s; *c; c++) {
            char ch[2] = {*c, 0};
            if (list_push(p, out, pd_val_str(ch)))
                return -1;
        }
        return 0;
    }
    return fail(p, "%s is not iterable (in \"%s\")", kind_name(v), p->src);
}

/* range(stop) / range(start, stop[, step]) */
static int make_range(parser *p, pd_val *args, int n, pd_val *out)
{
    if (n < 1 || n > 3)
        return fail(p, "range() takes 1 to 3 arguments, got %d", n);
    for (int i = 0; i < n; i++)
        if (!is_intlike(&args[i]))
            return fail(p, "range(): arguments must be ints, got %s", kind_name(&args[i]));
    long long start = n == 1 ? 0 : as_int(&args[0]), stop = as_int(&args[n == 1 ? 0 : 1]),
              step = n == 3 ? as_int(&args[2]) : 1;
    if (step == 0)
        return fail(p, "range(): step must not be zero");
    *out = empty_list();
    out->view = PD_VIEW_RANGE;
    pd_str text = {0}; /* how it prints: range(0, 3), range(5, 0, -2) */
    pd_str_printf(&text, "range(%lld, %lld", start, stop);
    if (step != 1)
        pd_str_printf(&text, ", %lld", step);
    pd_str_append(&text, ")");
    out->s = pd_str_take(&text);
    for (long long v = start; step > 0 ? v < stop : v > stop; v += step)
        if (list_push(p, out, pd_val_int(v)))
            return -1;
    return 0;
}

static void reverse(char *s)
{
    for (size_t i = 0, j = strlen(s); i + 1 < j; i++, j--) {
        char t = s[i];
        s[i] = s[j - 1];
        s[j - 1] = t;
    }
}

/* Python's str.split(sep, maxsplit) (sep NULL: runs of whitespace). */
static int split_left(parser *p, const char *s, const char *sep, long long maxsplit, pd_val *out)
{
    *out = empty_list();
    if (sep && !*sep)
        return fail(p, "split(): empty separator");
    const char *c = s;
    for (long long k = 0;; k++) {
        if (!sep)
            while (isspace((unsigned char)*c))
                c++;
        if (!sep && !*c)
            return 0;
        const char *hit = NULL;
        if (maxsplit < 0 || k < maxsplit) {
            if (sep)
                hit = strstr(c, sep);
            else
                for (hit = c; *hit && !isspace((unsigned char)*hit); hit++)
                    ;
            if (hit && !*hit)
                hit = NULL;
        }
        pd_str piece = {0};
        pd_val v;
        pd_str_appendn(&piece, c, hit ? (size_t)(hit - c) : strlen(c));
        if (str_result(p, &piece, &v) || list_push(p, out, v))
            return -1;
        if (!hit)
            return 0;
        c = hit + (sep ? strlen(sep) : 0);
    }
}

static int split_str(parser *p, const char *s, const char *sep, long long maxsplit, bool right, pd_val *out)
{
    if (!right)
        return split_left(p, s, sep, maxsplit, out);
    /* rsplit: split the reversed text on the reversed separator */
    char *rs = pd_strdup(s), *rsep = sep ? pd_strdup(sep) : NULL;
    int rc = -1;
    if (rs && (!sep || rsep)) {
        reverse(rs);
        if (rsep)
            reverse(rsep);
        rc = split_left(p, rs, rsep, maxsplit, out);
        for (size_t i = 0; !rc && i < out->n; i++)
            reverse(out->items[i].s);
        for (size_t i = 0; !rc && i < out->n / 2; i++) {
            pd_val t = out->items[i];
            out->items[i] = out->items[out->n - 1 - i];
            out->items[out->n - 1 - i] = t;
        }
    } else {
        fail(p, "out of memory");
    }
    free(rs);
    free(rsep);
    return rc;
}

static bool is_method(const char *name)
{
    static const char *m[] = {"split", "rsplit", "strip", "lstrip", "rstrip", "upper", "lower", "replace",
                              "startswith", "endswith", "join", "zfill", "get", "items", "keys", "values"};
    for (size_t i = 0; i < PD_ARRAY_LEN(m); i++)
        if (!strcmp(m[i], name))
            return true;
    return false;
}

/* obj.name(args) for the string and list methods paddiser knows. */
static int call_method(parser *p, pd_val *obj, const char *name, pd_val *args, int n, pd_val *out)
{
    if (need_defined(p, obj))
        return -1;
    for (int i = 0; i < n; i++)
        if (need_defined(p, &args[i]))
            return -1;
    if (obj->kind == PD_VAL_DICT && (!strcmp(name, "items") || !strcmp(name, "keys") || !strcmp(name, "values"))) {
        if (n)
            return fail(p, "%s() takes no arguments", name);
        if (dict_part(p, obj, name[0], out))
            return -1;
        out->view = name[0] == 'i' ? PD_VIEW_DICT_ITEMS : name[0] == 'k' ? PD_VIEW_DICT_KEYS : PD_VIEW_DICT_VALUES;
        return 0;
    }
    if (obj->kind == PD_VAL_DICT && !strcmp(name, "get")) {
        if (n < 1 || n > 2)
            return fail(p, "get() takes a key and an optional default");
        if (!is_hashable(&args[0]))
            return fail(p, "unhashable type: %s (in \"%s\")", kind_name(&args[0]), p->src);
        const pd_val *pr = dict_find(obj, &args[0]);
        *out = pd_val_copy(pr ? &pr->items[1] : n == 2 ? &args[1] : &(pd_val){.kind = PD_VAL_NONE});
        return 0;
    }
    if (obj->kind == PD_VAL_LIST && (!strcmp(name, "items") || !strcmp(name, "keys") || !strcmp(name, "values")))
        return fail(p, "%s() of a list (only dicts have it) (in \"%s\")", name, p->src);
    if (obj->kind != PD_VAL_STR)
        return fail(p, "%s has no method %s() (in \"%s\")", kind_name(obj), name, p->src);
    const char *str = obj->s;
    if (!strcmp(name, "split") || !strcmp(name, "rsplit")) {
        if (n > 2 || (n >= 1 && args[0].kind != PD_VAL_STR && args[0].kind != PD_VAL_NONE) ||
            (n == 2 && !is_intlike(&args[1])))
            return fail(p, "%s() takes an optional separator string and maxsplit int", name);
        return split_str(p, str, n >= 1 && args[0].kind == PD_VAL_STR ? args[0].s : NULL, n == 2 ? as_int(&args[1]) : -1,
                         name[0] == 'r', out);
    }
    if (!strcmp(name, "strip") || !strcmp(name, "lstrip") || !strcmp(name, "rstrip")) {
        if (n > 1 || (n == 1 && args[0].kind != PD_VAL_STR))
            return fail(p, "%s() takes an optional string of characters", name);
        const char *chars = n == 1 ? args[0].s : " \t\n\r\f\v";
        const char *b = str, *e = str + strlen(str);
        if (name[0] != 'r')
            while (b < e && strchr(chars, *b))
                b++;
        if (name[0] != 'l')
            while (e > b && strchr(chars, e[-1]))
                e--;
        pd_str r = {0};
        pd_str_appendn(&r, b, (size_t)(e - b));
        return str_result(p, &r, out);
    }
    if (!strcmp(name, "upper") || !strcmp(name, "lower")) {
        if (n)
            return fail(p, "%s() takes no arguments", name);
        *out = pd_val_str(str);
        for (char *c = out->s; c && *c; c++)
            *c = (char)(name[0] == 'u' ? toupper((unsigned char)*c) : tolower((unsigned char)*c));
        return 0;
    }
    if (!strcmp(name, "startswith") || !strcmp(name, "endswith")) {
        if (n != 1 || args[0].kind != PD_VAL_STR)
            return fail(p, "%s() takes one string", name);
        size_t l = strlen(str), k = strlen(args[0].s);
        *out = pd_val_bool(k <= l && !strncmp(name[0] == 's' ? str : str + l - k, args[0].s, k));
        return 0;
    }
    if (!strcmp(name, "zfill")) {
        if (n != 1 || !is_intlike(&args[0]))
            return fail(p, "zfill() takes one int");
        long long w = as_int(&args[0]), l = (long long)strlen(str);
        pd_str r = {0};
        const char *digits = str;
        if (*str == '-' || *str == '+')
            pd_str_appendn(&r, digits++, 1);
        for (long long i = l; i < w && i < 4096; i++)
            pd_str_append(&r, "0");
        pd_str_append(&r, digits);
        return str_result(p, &r, out);
    }
    if (!strcmp(name, "replace")) {
        if (n != 2 || args[0].kind != PD_VAL_STR || args[1].kind != PD_VAL_STR || !args[0].s[0])
            return fail(p, "replace() takes two strings");
        pd_str r = {0};
        const char *c = str;
        size_t ol = strlen(args[0].s);
        for (const char *hit; (hit = strstr(c, args[0].s)); c = hit + ol) {
            pd_str_appendn(&r, c, (size_t)(hit - c));
            pd_str_append(&r, args[1].s);
        }
        pd_str_append(&r, c);
        return str_result(p, &r, out);
    }
    if (!strcmp(name, "join")) {
        if (n != 1 || args[0].kind != PD_VAL_LIST)
            return fail(p, "join() takes one list");
        pd_str r = {0};
        for (size_t i = 0; i < args[0].n; i++) {
            if (args[0].items[i].kind != PD_VAL_STR) {
                pd_str_free(&r);
                return fail(p, "join(): item %zu is %s, not str", i, kind_name(&args[0].items[i]));
            }
            pd_str_printf(&r, "%s%s", i ? str : "", args[0].items[i].s);
        }
        return str_result(p, &r, out);
    }
    return fail(p, "str has no method %s() (in \"%s\")", name, p->src);
}

/* obj[index] or obj[from:to] (Python semantics: negative indexes count from
 * the end; slices clamp). */
static int subscript(parser *p, pd_val *obj, bool is_slice, pd_val *lo, pd_val *hi, pd_val *out)
{
    if (need_defined(p, obj))
        return -1;
    if (obj->kind == PD_VAL_DICT && !is_slice) {
        if (!is_hashable(lo))
            return fail(p, "unhashable type: %s (in \"%s\")", kind_name(lo), p->src);
        const pd_val *pr = dict_find(obj, lo);
        if (!pr)
            return fail(p, "dict has no key %s (Jinja2 gives an undefined value) (in \"%s\")",
                        lo->kind == PD_VAL_STR ? lo->s : kind_name(lo), p->src);
        *out = pd_val_copy(&pr->items[1]);
        return 0;
    }
    if ((obj->kind != PD_VAL_LIST && obj->kind != PD_VAL_STR) || is_unindexed(obj))
        return fail(p, "%s is not subscriptable (in \"%s\")", kind_name(obj), p->src);
    long long len = obj->kind == PD_VAL_LIST ? (long long)obj->n : (long long)strlen(obj->s);
    if (!is_slice) {
        if (!is_intlike(lo))
            return fail(p, "index must be an int, got %s (in \"%s\")", kind_name(lo), p->src);
        long long i = as_int(lo);
        if (i < 0)
            i += len;
        if (i < 0 || i >= len)
            return fail(p, "index %lld out of range (length %lld) (in \"%s\")", as_int(lo), len, p->src);
        if (obj->kind == PD_VAL_LIST)
            *out = pd_val_copy(&obj->items[i]);
        else {
            char c[2] = {obj->s[i], 0};
            *out = pd_val_str(c);
        }
        return 0;
    }
    long long b = 0, e = len;
    if (lo->kind != PD_VAL_NONE) {
        if (!is_intlike(lo))
            return fail(p, "slice bounds must be ints (in \"%s\")", p->src);
        b = as_int(lo) < 0 ? as_int(lo) + len : as_int(lo);
    }
    if (hi->kind != PD_VAL_NONE) {
        if (!is_intlike(hi))
            return fail(p, "slice bounds must be ints (in \"%s\")", p->src);
        e = as_int(hi) < 0 ? as_int(hi) + len : as_int(hi);
    }
    b = b < 0 ? 0 : b > len ? len : b;
    e = e < b ? b : e > len ? len : e;
    if (obj->kind == PD_VAL_STR) {
        pd_str r = {0};
        pd_str_appendn(&r, obj->s + b, (size_t)(e - b));
        return str_result(p, &r, out);
    }
    *out = empty_list();
    out->view = obj->view;
    for (long long i = b; i < e; i++)
        if (list_push(p, out, pd_val_copy(&obj->items[i])))
            return -1;
    return 0;
}

/* x in container */
static int contains(parser *p, const pd_val *x, const pd_val *c, bool *r)
{
    if (need_defined(p, x) || need_defined(p, c))
        return -1;
    if (c->kind == PD_VAL_STR) {
        if (x->kind != PD_VAL_STR)
            return fail(p, "'in <string>' requires a string on the left, got %s (in \"%s\")", kind_name(x), p->src);
        *r = strstr(c->s, x->s) != NULL;
        return 0;
    }
    if (c->kind == PD_VAL_DICT) {
        if (!is_hashable(x))
            return fail(p, "unhashable type: %s (in \"%s\")", kind_name(x), p->src);
        *r = dict_find(c, x) != NULL;
        return 0;
    }
    if (c->kind != PD_VAL_LIST)
        return fail(p, "argument of type %s is not iterable (in \"%s\")", kind_name(c), p->src);
    *r = false;
    for (size_t i = 0; i < c->n && !*r; i++) {
        int cmp;
        bool ok;
        compare(x, &c->items[i], &cmp, &ok);
        *r = ok && cmp == 0;
    }
    return 0;
}

static const char *path_base(const char *s)
{
    const char *e = s + strlen(s);
    while (e > s && e[-1] != '/')
        e--;
    return e;
}

static int call_function(parser *p, const char *name, pd_val *args, int n, pd_val *out)
{
    for (int i = 0; i < n; i++)
        if (need_defined(p, &args[i]))
            return -1;
    if (!strcmp(name, "range"))
        return make_range(p, args, n, out);
    if (!strcmp(name, "len")) {
        if (n != 1 || (args[0].kind != PD_VAL_STR && args[0].kind != PD_VAL_LIST && args[0].kind != PD_VAL_DICT) ||
            (args[0].kind == PD_VAL_LIST && args[0].view == PD_VIEW_ITER))
            return fail(p, "len() takes one string, list or dict");
        *out = pd_val_int(args[0].kind == PD_VAL_STR ? (long long)strlen(args[0].s) : (long long)args[0].n);
        return 0;
    }
    if (!strcmp(name, "min") || !strcmp(name, "max")) {
        const pd_val *arr = args; /* min(a, b, ...) or min(list) */
        size_t cnt = (size_t)n;
        if (n == 1 && args[0].kind == PD_VAL_LIST) {
            arr = args[0].items;
            cnt = args[0].n;
        }
        if (cnt < 1)
            return fail(p, "%s() needs at least one value", name);
        size_t best = 0;
        for (size_t i = 1; i < cnt; i++) {
            int c;
            bool ok;
            compare(&arr[i], &arr[best], &c, &ok);
            if (!ok)
                return fail(p, "%s(): cannot compare %s and %s", name, kind_name(&arr[i]), kind_name(&arr[best]));
            if (name[1] == 'i' ? c < 0 : c > 0)
                best = i;
        }
        *out = pd_val_copy(&arr[best]);
        return 0;
    }
    if (n != 1 && !(n == 2 && !strcmp(name, "round")))
        return fail(p, "%s() takes one argument, got %d", name, n);
    const pd_val *a = &args[0];
    if (!strcmp(name, "int"))
        return to_int(p, a, out, "int()");
    if (!strcmp(name, "float"))
        return to_float(p, a, out, "float()");
    if (!strcmp(name, "str"))
        return need_printable(p, a) ? -1 : to_string(p, a, out);
    if (!is_num(a))
        return fail(p, "%s(): expected a number, got %s", name, kind_name(a));
    if (!strcmp(name, "abs")) {
        *out = is_intlike(a) ? pd_val_int(llabs(as_int(a))) : pd_val_float(fabs(a->f));
        return 0;
    }
    if (!strcmp(name, "floor") || !strcmp(name, "ceil") || (!strcmp(name, "round") && n == 1)) {
        if (is_intlike(a)) {
            *out = pd_val_int(as_int(a));
            return 0;
        }
        double r = name[0] == 'f' ? floor(a->f) : name[0] == 'c' ? ceil(a->f) : rint(a->f);
        pd_val tmp = pd_val_float(r);
        return to_int(p, &tmp, out, name);
    }
    if (!strcmp(name, "round")) {
        if (!is_intlike(&args[1]))
            return fail(p, "round(): ndigits must be an int");
        *out = is_intlike(a) ? pd_val_int(as_int(a)) : pd_val_float(round_digits(a->f, as_int(&args[1])));
        return 0;
    }
    return fail(p, "unknown function '%s'", name);
}

static bool is_function(const char *name)
{
    static const char *fns[] = {"min", "max", "abs", "round", "floor", "ceil", "int", "float", "str", "len", "range", "dict"};
    for (size_t i = 0; i < PD_ARRAY_LEN(fns); i++)
        if (!strcmp(fns[i], name))
            return true;
    return false;
}

/* Case-insensitive (Jinja's default for sort, unique, min, max and
 * dictsort) comparison: strings compare lowercased. */
static void compare_ci(const pd_val *a, const pd_val *b, bool case_sensitive, int *cmp, bool *ok)
{
    if (!case_sensitive && a->kind == PD_VAL_STR && b->kind == PD_VAL_STR) {
        *ok = true;
        *cmp = strcasecmp(a->s, b->s);
        return;
    }
    compare(a, b, cmp, ok);
}

/* Sorts items[0..n) stably (insertion into a merge buffer). */
static int sort_items(parser *p, pd_val *items, size_t n, bool reverse, bool case_sensitive, int key)
{
    pd_val *tmp = malloc((n ? n : 1) * sizeof *tmp);
    if (!tmp)
        return fail(p, "out of memory");
    for (size_t width = 1; width < n; width *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * width) {
            size_t mid = lo + width < n ? lo + width : n, hi = lo + 2 * width < n ? lo + 2 * width : n;
            size_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi) {
                int c;
                bool ok;
                const pd_val *x = key >= 0 ? &items[j].items[key] : &items[j];
                const pd_val *y = key >= 0 ? &items[i].items[key] : &items[i];
                compare_ci(x, y, case_sensitive, &c, &ok);
                if (!ok || x->kind == PD_VAL_DICT || y->kind == PD_VAL_DICT) {
                    free(tmp);
                    return fail(p, "sort: cannot compare %s and %s", kind_name(x), kind_name(y));
                }
                /* take from the right only when strictly before (stable) */
                tmp[k++] = (reverse ? c > 0 : c < 0) ? items[j++] : items[i++];
            }
            while (i < mid)
                tmp[k++] = items[i++];
            while (j < hi)
                tmp[k++] = items[j++];
        }
        memcpy(items, tmp, n * sizeof *items);
    }
    free(tmp);
    return 0;
}

/* Python's str.center(width). */
static int center(parser *p, const char *s, long long width, pd_val *out)
{
    long long len = (long long)strlen(s), marg = width - len;
    pd_str r = {0};
    pd_str_append(&r, "");
    if (width > 100000)
        return fail(p, "filter center: width over 100000");
    long long left = marg > 0 ? marg / 2 + (marg & width & 1) : 0, right = marg > 0 ? marg - left : 0;
    for (long long i = 0; i < left; i++)
        pd_str_append(&r, " ");
    pd_str_append(&r, s);
    for (long long i = 0; i < right; i++)
        pd_str_append(&r, " ");
    return str_result(p, &r, out);
}

/* Jinja's truncate(length, killwords, end, leeway). */
static int truncate(parser *p, const char *s, long long length, bool killwords, const char *end, long long leeway,
                    pd_val *out)
{
    long long len = (long long)strlen(s), el = (long long)strlen(end);
    if (length < el)
        return fail(p, "filter truncate: length %lld is shorter than the end marker", length);
    if (leeway < 0)
        return fail(p, "filter truncate: leeway must not be negative");
    if (len <= length + leeway) {
        *out = pd_val_str(s);
        return 0;
    }
    pd_str r = {0};
    pd_str_appendn(&r, s, (size_t)(length - el));
    pd_str_append(&r, "");
    if (!killwords) { /* rsplit(' ', 1)[0] */
        char *sp = strrchr(r.data, ' ');
        if (sp) {
            *sp = '\0';
            r.len = (size_t)(sp - r.data);
        }
    }
    pd_str_append(&r, end);
    return str_result(p, &r, out);
}


/* Each filter's parameters, for keyword arguments (Jinja's names). */
static const char *const *filter_params(const char *name)
{
    static const char *const none[] = {NULL};
    static const struct {
        const char *name;
        const char *params[5];
    } t[] = {
        {"default", {"default_value", "boolean"}}, {"d", {"default_value", "boolean"}},
        {"int", {"default", "base"}}, {"float", {"default"}}, {"round", {"precision", "method"}},
        {"join", {"d"}}, {"replace", {"old", "new", "count"}}, {"center", {"width"}},
        {"truncate", {"length", "killwords", "end", "leeway"}}, {"sort", {"reverse", "case_sensitive"}},
        {"unique", {"case_sensitive"}}, {"min", {"case_sensitive"}}, {"max", {"case_sensitive"}},
        {"sum", {"attribute", "start"}}, {"dictsort", {"case_sensitive", "by", "reverse"}}, {"trim", {"chars"}},
    };
    for (size_t i = 0; i < PD_ARRAY_LEN(t); i++)
        if (!strcmp(t[i].name, name))
            return t[i].params;
    return none;
}

static const char *const known_filters =
    "abs basename capitalize center count d default dictsort dirname first float format int items join last "
    "length list lower max min quote replace reverse round sort string sum title trim truncate unique upper "
    "wordcount";

/* Whether name is in a space-separated list. */
static bool in_words(const char *list, const char *name)
{
    size_t len = strlen(name);
    for (const char *c = list; (c = strstr(c, name)); c += len)
        if ((c == list || c[-1] == ' ') && (c[len] == ' ' || !c[len]))
            return true;
    return false;
}

static const char *const known_tests = "defined undefined none number integer float boolean true false string "
                                       "mapping iterable sequence lower upper even odd divisibleby eq equalto ne lt "
                                       "le gt ge in";

static int apply_filter(parser *p, const char *name, pd_val *v, pd_val *args, int n, pd_val *out)
{
    if (!strcmp(name, "default") || !strcmp(name, "d")) {
        bool use_default = v->kind == PD_VAL_UNDEF || (n >= 2 && pd_val_truthy(&args[1]) && !pd_val_truthy(v));
        if (n < 1 || !given(&args[0]))
            *out = use_default ? pd_val_str("") : pd_val_copy(v);
        else
            *out = pd_val_copy(use_default ? &args[0] : v);
        return 0;
    }
    if (need_defined(p, v))
        return -1;
    for (int i = 0; i < n; i++)
        if (given(&args[i]) && need_defined(p, &args[i]))
            return -1;
    const pd_val *a0 = n >= 1 && given(&args[0]) ? &args[0] : NULL, *a1 = n >= 2 && given(&args[1]) ? &args[1] : NULL,
                 *a2 = n >= 3 && given(&args[2]) ? &args[2] : NULL, *a3 = n >= 4 && given(&args[3]) ? &args[3] : NULL;
    if (!strcmp(name, "int") || !strcmp(name, "float")) {
        if (a1 && !(is_intlike(a1) && as_int(a1) == 10))
            return fail(p, "filter int: only base 10 is supported");
        bool hex = v->kind == PD_VAL_STR && strpbrk(v->s, "xXpP_");
        char e[2];
        parser q = *p; /* a failed conversion gives the default, as in Jinja */
        q.failed = false;
        q.err = e;
        q.errlen = sizeof e;
        int rc = hex || (v->kind != PD_VAL_STR && !is_num(v))
                     ? -1
                     : name[0] == 'i' ? to_int(&q, v, out, "int") : to_float(&q, v, out, "float");
        if (rc == 0)
            return 0;
        if (a0)
            *out = pd_val_copy(a0);
        else
            *out = name[0] == 'i' ? pd_val_int(0) : pd_val_float(0.0);
        return 0;
    }
    if (!strcmp(name, "string"))
        return need_printable(p, v) ? -1 : to_string(p, v, out);
    if (!strcmp(name, "round")) {
        if (!is_num(v))
            return fail(p, "filter round: expected a number, got %s", kind_name(v));
        long long nd = 0;
        if (a0) {
            if (!is_intlike(a0))
                return fail(p, "filter round: precision must be an int");
            nd = as_int(a0);
        }
        const char *method = "common";
        if (a1) {
            if (a1->kind != PD_VAL_STR || (strcmp(a1->s, "common") && strcmp(a1->s, "floor") && strcmp(a1->s, "ceil")))
                return fail(p, "filter round: method must be 'common', 'floor' or 'ceil'");
            method = a1->s;
        }
        if (method[0] == 'c' && method[1] == 'o') { /* Python's round(): an int stays an int */
            if (is_intlike(v) && nd >= 0)
                *out = pd_val_int(as_int(v));
            else if (is_intlike(v))
                return fail(p, "filter round: negative precision of an int is not supported");
            else
                *out = pd_val_float(round_digits(v->f, nd));
            return 0;
        }
        if (nd < 0 || nd > 15)
            return fail(p, "filter round: precision %lld with floor/ceil is not supported", nd);
        double scale = pow(10.0, (double)nd), x = as_dbl(v) * scale;
        *out = pd_val_float((method[0] == 'f' ? floor(x) : ceil(x)) / scale + 0.0); /* Python: int / int, never -0.0 */
        return 0;
    }
    if (!strcmp(name, "abs")) {
        if (!is_num(v))
            return fail(p, "filter abs: expected a number, got %s", kind_name(v));
        *out = is_intlike(v) ? pd_val_int(llabs(as_int(v))) : pd_val_float(fabs(v->f));
        return 0;
    }
    if (!strcmp(name, "length") || !strcmp(name, "count")) {
        if (v->kind == PD_VAL_LIST && v->view == PD_VIEW_ITER)
            return fail(p, "filter %s of an iterator (Jinja2 fails: no len())", name);
        if (v->kind == PD_VAL_LIST || v->kind == PD_VAL_DICT || v->kind == PD_VAL_STR) {
            *out = pd_val_int(v->kind == PD_VAL_STR ? (long long)strlen(v->s) : (long long)v->n);
            return 0;
        }
        return fail(p, "filter %s: %s has no length", name, kind_name(v));
    }
    if (!strcmp(name, "sum")) {
        if (a0)
            return fail(p, "filter sum: attribute= is not supported");
        pd_val items, acc = a1 ? pd_val_copy(a1) : pd_val_int(0);
        if (iter_items(p, v, &items))
            return -1;
        int rc = 0;
        for (size_t i = 0; i < items.n && !rc; i++) {
            pd_val r = pd_val_none();
            if (!is_num(&items.items[i]) || !is_num(&acc))
                rc = fail(p, "filter sum: cannot add %s", kind_name(&items.items[i]));
            else
                rc = arith(p, "+", &acc, &items.items[i], &r);
            pd_val_free(&acc);
            acc = r;
        }
        pd_val_free(&items);
        if (rc) {
            pd_val_free(&acc);
            return -1;
        }
        *out = acc;
        return 0;
    }
    if (!strcmp(name, "join") || !strcmp(name, "list") || !strcmp(name, "first") || !strcmp(name, "last") ||
        !strcmp(name, "sort") || !strcmp(name, "unique") || !strcmp(name, "min") || !strcmp(name, "max") ||
        (!strcmp(name, "reverse") && v->kind != PD_VAL_STR) || !strcmp(name, "items") || !strcmp(name, "dictsort")) {
        if (!strcmp(name, "items") || !strcmp(name, "dictsort")) {
            if (v->kind != PD_VAL_DICT)
                return fail(p, "filter %s needs a dict, got %s", name, kind_name(v));
            if (dict_part(p, v, 'i', out))
                return -1;
            if (name[0] == 'i') {
                out->view = PD_VIEW_ITER;
                return 0;
            }
            if (a1 && (a1->kind != PD_VAL_STR || (strcmp(a1->s, "key") && strcmp(a1->s, "value"))))
                return fail(p, "filter dictsort: by must be 'key' or 'value'");
            return sort_items(p, out->items, out->n, a2 && pd_val_truthy(a2), a0 && pd_val_truthy(a0),
                              a1 && a1->s[0] == 'v' ? 1 : 0);
        }
        pd_val items;
        if (iter_items(p, v, &items))
            return -1;
        bool cs = false;
        if (!strcmp(name, "join")) {
            if (a0 && a0->kind != PD_VAL_STR) {
                pd_val_free(&items);
                return fail(p, "filter join takes an optional separator string");
            }
            pd_str r = {0};
            pd_str_append(&r, "");
            for (size_t i = 0; i < items.n; i++) {
                if (need_printable(p, &items.items[i])) {
                    pd_val_free(&items);
                    pd_str_free(&r);
                    return -1;
                }
                if (i && a0)
                    pd_str_append(&r, a0->s);
                pd_val_append(&r, &items.items[i]);
            }
            pd_val_free(&items);
            return str_result(p, &r, out);
        }
        if (!strcmp(name, "list")) {
            *out = items;
            return 0;
        }
        if (!strcmp(name, "first") || !strcmp(name, "last")) {
            if (!items.n) {
                pd_val_free(&items);
                return fail(p, "filter %s of an empty sequence (Jinja2 gives an undefined value)", name);
            }
            *out = pd_val_copy(&items.items[name[0] == 'f' ? 0 : items.n - 1]);
            pd_val_free(&items);
            return 0;
        }
        if (!strcmp(name, "reverse")) {
            for (size_t i = 0; i < items.n / 2; i++) {
                pd_val t = items.items[i];
                items.items[i] = items.items[items.n - 1 - i];
                items.items[items.n - 1 - i] = t;
            }
            items.view = PD_VIEW_ITER; /* Jinja2 returns reversed(): print it with |list */
            *out = items;
            return 0;
        }
        const pd_val *csv = !strcmp(name, "sort") ? a1 : a0;
        if (csv)
            cs = pd_val_truthy(csv);
        if (!strcmp(name, "sort")) {
            if (sort_items(p, items.items, items.n, a0 && pd_val_truthy(a0), cs, -1)) {
                pd_val_free(&items);
                return -1;
            }
            *out = items;
            return 0;
        }
        if (!strcmp(name, "unique")) {
            *out = empty_list();
            for (size_t i = 0; i < items.n; i++) {
                bool seen = false;
                for (size_t j = 0; j < out->n && !seen; j++) {
                    int c;
                    bool ok;
                    compare_ci(&items.items[i], &out->items[j], cs, &c, &ok);
                    seen = ok && c == 0;
                }
                if (!seen && list_push(p, out, pd_val_copy(&items.items[i]))) {
                    pd_val_free(&items);
                    return -1;
                }
            }
            pd_val_free(&items);
            out->view = PD_VIEW_ITER; /* a generator in Jinja2 */
            return 0;
        }
        /* min, max */
        if (!items.n) {
            pd_val_free(&items);
            return fail(p, "filter %s of an empty sequence (Jinja2 gives an undefined value)", name);
        }
        size_t best = 0;
        for (size_t i = 1; i < items.n; i++) {
            int c;
            bool ok;
            compare_ci(&items.items[i], &items.items[best], cs, &c, &ok);
            if (!ok) {
                pd_val_free(&items);
                return fail(p, "filter %s: cannot compare these values", name);
            }
            if (name[1] == 'i' ? c < 0 : c > 0)
                best = i;
        }
        *out = pd_val_copy(&items.items[best]);
        pd_val_free(&items);
        return 0;
    }
    if (!strcmp(name, "format")) {
        if (v->kind != PD_VAL_STR)
            return fail(p, "filter format needs a format string, got %s", kind_name(v));
        pd_val t = empty_tuple();
        for (int i = 0; i < n; i++)
            if (list_push(p, &t, pd_val_copy(&args[i]))) {
                pd_val_free(&t);
                return -1;
            }
        int rc = percent_format(p, v->s, &t, out);
        pd_val_free(&t);
        return rc;
    }
    static const char *const string_filters[] = {"basename", "dirname", "upper", "lower", "capitalize", "title",
                                                 "quote", "trim", "replace", "center", "truncate", "wordcount",
                                                 "reverse"};
    bool is_string_filter = false;
    for (size_t i = 0; i < PD_ARRAY_LEN(string_filters); i++)
        is_string_filter = is_string_filter || !strcmp(string_filters[i], name);
    if (!is_string_filter)
        return fail(p, "unknown filter '%s' (supported: %s)", name, known_filters);
    pd_val s;
    if (need_printable(p, v) || to_string(p, v, &s))
        return -1;
    if (!strcmp(name, "reverse")) {
        reverse(s.s);
        *out = s;
        return 0;
    }
    if (!strcmp(name, "basename") || !strcmp(name, "dirname")) {
        const char *base = path_base(s.s);
        pd_str r = {0};
        pd_str_append(&r, "");
        if (name[0] == 'b') {
            pd_str_append(&r, base);
        } else { /* os.path.dirname: up to the last '/', trailing slashes dropped unless root */
            const char *e = base;
            while (e > s.s + 1 && e[-1] == '/')
                e--;
            pd_str_appendn(&r, s.s, (size_t)(e - s.s));
        }
        pd_val_free(&s);
        return str_result(p, &r, out);
    }
    if (!strcmp(name, "upper") || !strcmp(name, "lower") || !strcmp(name, "capitalize")) {
        for (char *c = s.s; *c; c++)
            *c = (char)(name[0] == 'u' || (name[0] == 'c' && c == s.s) ? toupper((unsigned char)*c)
                                                                       : tolower((unsigned char)*c));
        *out = s;
        return 0;
    }
    if (!strcmp(name, "title")) { /* words begin after runs of - whitespace ( { [ < */
        bool start = true;
        for (char *c = s.s; *c; c++) {
            bool sep = isspace((unsigned char)*c) || strchr("-({[<", *c);
            if (!sep)
                *c = (char)(start ? toupper((unsigned char)*c) : tolower((unsigned char)*c));
            start = sep;
        }
        *out = s;
        return 0;
    }
    if (!strcmp(name, "wordcount")) { /* \w+ runs */
        long long words = 0;
        for (const char *c = s.s; *c; c++)
            if ((isalnum((unsigned char)*c) || *c == '_') && (c == s.s || !(isalnum((unsigned char)c[-1]) || c[-1] == '_')))
                words++;
        pd_val_free(&s);
        *out = pd_val_int(words);
        return 0;
    }
    if (!strcmp(name, "quote")) {
        /* POSIX shell quoting, as Python's shlex.quote: a word of safe
         * characters stays as it is, anything else (the empty string too)
         * goes in single quotes, each ' written as '"'"' */
        int safe = s.s[0] != 0;
        for (const char *c = s.s; *c && safe; c++)
            safe = isalnum((unsigned char)*c) || strchr("@%+=:,./-_", *c);
        if (safe) {
            *out = s;
            return 0;
        }
        pd_str r = {0};
        pd_str_append(&r, "'");
        for (const char *c = s.s; *c; c++)
            pd_str_append(&r, *c == '\'' ? "'\"'\"'" : (char[2]){*c, 0});
        pd_str_append(&r, "'");
        pd_val_free(&s);
        return str_result(p, &r, out);
    }
    int rc = 0;
    if (!strcmp(name, "trim")) {
        if (a0 && a0->kind != PD_VAL_STR)
            rc = fail(p, "filter trim takes an optional string of characters");
        const char *chars = a0 ? a0->s : " \t\n\r\f\v";
        const char *b = s.s, *e = s.s + strlen(s.s);
        while (!rc && b < e && strchr(chars, *b))
            b++;
        while (!rc && e > b && strchr(chars, e[-1]))
            e--;
        pd_str r = {0};
        pd_str_appendn(&r, b, (size_t)(e - b));
        pd_val_free(&s);
        if (rc) {
            pd_str_free(&r);
            return -1;
        }
        return str_result(p, &r, out);
    }
    if (!strcmp(name, "center")) {
        if (a0 && !is_intlike(a0))
            rc = fail(p, "filter center: width must be an int");
        else
            rc = center(p, s.s, a0 ? as_int(a0) : 80, out);
        pd_val_free(&s);
        return rc;
    }
    if (!strcmp(name, "truncate")) {
        if ((a0 && !is_intlike(a0)) || (a2 && a2->kind != PD_VAL_STR) || (a3 && !is_intlike(a3)))
            rc = fail(p, "filter truncate takes (length int, killwords, end string, leeway int)");
        else
            rc = truncate(p, s.s, a0 ? as_int(a0) : 255, a1 && pd_val_truthy(a1), a2 ? a2->s : "...",
                          a3 ? as_int(a3) : 5, out);
        pd_val_free(&s);
        return rc;
    }
    /* replace(old, new[, count]) */
    if (!a0 || !a1 || a0->kind != PD_VAL_STR || a1->kind != PD_VAL_STR || !a0->s[0] || (a2 && !is_intlike(a2))) {
        pd_val_free(&s);
        return fail(p, "filter replace needs two strings (the first not empty) and an optional count, e.g. "
                       "replace('a', 'b')");
    }
    long long count = a2 ? as_int(a2) : -1;
    pd_str r = {0};
    pd_str_append(&r, "");
    const char *c = s.s;
    size_t ol = strlen(a0->s);
    for (const char *hit; count != 0 && (hit = strstr(c, a0->s)); c = hit + ol, count--) {
        pd_str_appendn(&r, c, (size_t)(hit - c));
        pd_str_append(&r, a1->s);
    }
    pd_str_append(&r, c);
    pd_val_free(&s);
    return str_result(p, &r, out);
}

static int parse_primary(parser *p, bool live, pd_val *out)
{
    *out = pd_val_none();
    if (p->type == T_INT) {
        *out = pd_val_int(p->ival);
        return lex(p);
    }
    if (p->type == T_FLOAT) {
        *out = pd_val_float(p->fval);
        return lex(p);
    }
    if (p->type == T_STR) { /* adjacent literals join: 'a' 'b' is 'ab' */
        pd_str joined = {0};
        pd_str_append(&joined, "");
        while (p->type == T_STR) {
            pd_str_append(&joined, p->text.data);
            if (lex(p)) {
                pd_str_free(&joined);
                return -1;
            }
        }
        return str_result(p, &joined, out);
    }
    if (is_op(p, "(")) { /* parentheses, or a tuple: (), (a,), (a, b) */
        if (lex(p))
            return -1;
        if (is_op(p, ")")) {
            *out = empty_tuple();
            return lex(p);
        }
        if (parse_expr(p, live, out))
            return -1;
        if (!is_op(p, ","))
            return expect_op(p, ")");
        pd_val t = empty_tuple(), item = *out;
        *out = pd_val_none();
        for (int rc = 0;;) {
            if (live && !rc) {
                rc = need_defined(p, &item);
                if (!rc) {
                    rc = list_push(p, &t, item); /* takes item */
                    item = pd_val_none();
                }
            }
            pd_val_free(&item);
            if (!rc && is_op(p, ",")) {
                rc = lex(p);
                if (!rc && !is_op(p, ")")) {
                    rc = parse_expr(p, live, &item);
                    continue;
                }
            }
            if (rc) {
                pd_val_free(&t);
                return -1;
            }
            break;
        }
        *out = t;
        return expect_op(p, ")");
    }
    if (is_op(p, "{")) { /* dict literal {k: v, ...} */
        *out = (pd_val){.kind = PD_VAL_DICT};
        if (lex(p))
            return -1;
        while (!is_op(p, "}")) {
            pd_val k = pd_val_none(), v = pd_val_none();
            if (parse_expr(p, live, &k) || expect_op(p, ":") || parse_expr(p, live, &v) ||
                (live && (need_defined(p, &k) || need_defined(p, &v)))) {
                pd_val_free(&k);
                pd_val_free(&v);
                return -1;
            }
            if (live && !is_hashable(&k)) {
                pd_val_free(&k);
                pd_val_free(&v);
                return fail(p, "unhashable dict key (in \"%s\")", p->src);
            }
            if (live) {
                if (dict_set(p, out, k, v))
                    return -1;
            } else {
                pd_val_free(&k);
                pd_val_free(&v);
            }
            if (is_op(p, ",")) {
                if (lex(p))
                    return -1;
            } else if (!is_op(p, "}")) {
                return unexpected(p, "',' or '}'");
            }
        }
        return lex(p);
    }
    if (is_op(p, "[")) { /* list literal; a trailing comma is allowed */
        *out = empty_list();
        if (lex(p))
            return -1;
        while (!is_op(p, "]")) {
            pd_val item = pd_val_none();
            if (parse_expr(p, live, &item)) {
                pd_val_free(&item);
                return -1;
            }
            if (live) {
                if (need_defined(p, &item)) {
                    pd_val_free(&item);
                    return -1;
                }
                if (list_push(p, out, item)) /* takes item */
                    return -1;
            } else {
                pd_val_free(&item);
            }
            if (is_op(p, ",")) {
                if (lex(p))
                    return -1;
            } else if (!is_op(p, "]")) {
                return unexpected(p, "',' or ']'");
            }
        }
        return lex(p);
    }
    if (p->type != T_NAME)
        return unexpected(p, "a value");
    const char *kw = p->text.data;
    if (!strcmp(kw, "true") || !strcmp(kw, "True") || !strcmp(kw, "false") || !strcmp(kw, "False")) {
        *out = pd_val_bool(kw[0] == 't' || kw[0] == 'T');
        return lex(p);
    }
    if (!strcmp(kw, "none") || !strcmp(kw, "None"))
        return lex(p);
    static const char *reserved[] = {"and", "or", "not", "if", "else", "is", "in"};
    for (size_t i = 0; i < PD_ARRAY_LEN(reserved); i++)
        if (!strcmp(kw, reserved[i]))
            return unexpected(p, "a value");
    pd_str name = {0};
    pd_str_append(&name, kw);
    if (lex(p))
        goto fail;
    while (is_op(p, ".")) {
        if (lex(p))
            goto fail;
        if (p->type != T_NAME && p->type != T_INT) {
            unexpected(p, "an attribute name after '.'");
            goto fail;
        }
        pd_str_append(&name, ".");
        if (p->type == T_NAME)
            pd_str_append(&name, p->text.data);
        else
            pd_str_printf(&name, "%lld", p->ival);
        if (lex(p))
            goto fail;
    }
    if (name.oom) {
        fail(p, "out of memory");
        goto fail;
    }
    const char *dot = strrchr(name.data, '.');
    if (is_op(p, "(") && !is_function(name.data) && dot && is_method(dot + 1)) {
        /* obj.method(args): obj is the dotted name before the last dot */
        char method[32];
        snprintf(method, sizeof method, "%s", dot + 1);
        name.data[dot - name.data] = '\0';
        name.len = (size_t)(dot - name.data);
        pd_val args[MAX_ARGS];
        int n = 0;
        int rc = parse_args(p, live, args, &n);
        if (!rc && live) {
            pd_val obj;
            bool found = resolve(p, name.data, &obj);
            if (found && obj.kind == PD_VAL_DICT) {
                rc = call_method(p, &obj, method, args, n, out);
                pd_val_free(&obj);
            } else if (!strcmp(method, "get")) { /* mapping.get(key[, default]) over dotted names */
                if (found)
                    pd_val_free(&obj);
                if (n < 1 || n > 2 || args[0].kind != PD_VAL_STR) {
                    rc = fail(p, "%s.get() takes a key string and an optional default", name.data);
                } else {
                    pd_str full = {0};
                    pd_str_printf(&full, "%s.%s", name.data, args[0].s);
                    if (!full.data || !p->lookup(p->ud, full.data, out))
                        *out = n == 2 ? pd_val_copy(&args[1]) : pd_val_none();
                    pd_str_free(&full);
                }
            } else if (!found) {
                rc = fail(p, "unknown name '%s'", name.data);
            } else {
                rc = call_method(p, &obj, method, args, n, out);
                pd_val_free(&obj);
            }
        }
        free_args(args, n);
        if (rc)
            goto fail;
        pd_str_free(&name);
        return 0;
    }
    if (is_op(p, "(")) {
        pd_val args[MAX_ARGS];
        char *kw[MAX_ARGS];
        int n = 0;
        int rc = parse_args_kw(p, live, args, kw, &n);
        if (!rc && live) {
            char e[400];
            int called = p->call && !dot ? p->call(p->ud, name.data, args, kw, n, out, e, sizeof e) : 1;
            if (called < 0)
                rc = fail(p, "%s", e);
            else if (called == 0)
                rc = 0;
            else if (!strcmp(name.data, "dict")) { /* dict(k=v, ...) */
                *out = (pd_val){.kind = PD_VAL_DICT};
                for (int i = 0; i < n && !rc; i++) {
                    if (!kw[i] || need_defined(p, &args[i]))
                        rc = kw[i] ? -1 : fail(p, "dict() takes keyword arguments only here");
                    else
                        rc = dict_set(p, out, pd_val_str(kw[i]), pd_val_copy(&args[i]));
                }
            } else if (!is_function(name.data))
                rc = fail(p,
                          "'%s' is not a function or macro (functions: min, max, abs, round, floor, ceil, int, "
                          "float, str, len, range, dict)",
                          name.data);
            else {
                for (int i = 0; i < n && !rc; i++)
                    if (kw[i])
                        rc = fail(p, "%s(): keyword arguments are not supported", name.data);
                if (!rc)
                    rc = call_function(p, name.data, args, n, out);
            }
        }
        free_args(args, n);
        free_kw(kw, n);
        if (rc)
            goto fail;
        pd_str_free(&name);
        return 0;
    }
    if (live && !resolve(p, name.data, out))
        *out = (pd_val){.kind = PD_VAL_UNDEF, .s = pd_str_take(&name)};
    pd_str_free(&name);
    return 0;
fail:
    pd_str_free(&name);
    return -1;
}

/* [index] or [from:to] after a value. */
static int parse_subscript(parser *p, bool live, pd_val *out)
{
    pd_val lo = pd_val_none(), hi = pd_val_none(), r = pd_val_none();
    bool is_slice = false;
    int rc = -1;
    if (lex(p))
        goto done;
    if (!is_op(p, ":") && parse_expr(p, live, &lo))
        goto done;
    if (is_op(p, ":")) {
        is_slice = true;
        if (lex(p))
            goto done;
        if (!is_op(p, "]") && parse_expr(p, live, &hi))
            goto done;
    } else if (live && lo.kind == PD_VAL_NONE) {
        fail(p, "empty subscript (in \"%s\")", p->src);
        goto done;
    }
    if (expect_op(p, "]"))
        goto done;
    if (live) {
        if (need_defined(p, &lo) || need_defined(p, &hi) || subscript(p, out, is_slice, &lo, &hi, &r))
            goto done;
        pd_val_free(out);
        *out = r;
        r = pd_val_none();
    }
    rc = 0;
done:
    pd_val_free(&lo);
    pd_val_free(&hi);
    pd_val_free(&r);
    return rc;
}

/* x is TEST / x is TEST(arg) / x is TEST arg: Jinja2's builtin tests. */
static int apply_test(parser *p, const char *name, const pd_val *v, const pd_val *arg, bool *r)
{
    if (!strcmp(name, "defined") || !strcmp(name, "undefined")) {
        *r = (v->kind != PD_VAL_UNDEF) == (name[0] == 'd');
        return 0;
    }
    if (need_defined(p, v))
        return -1;
    bool coll = v->kind == PD_VAL_LIST || v->kind == PD_VAL_DICT;
    if (!strcmp(name, "none"))
        *r = v->kind == PD_VAL_NONE;
    else if (!strcmp(name, "number"))
        *r = is_num(v);
    else if (!strcmp(name, "integer"))
        *r = v->kind == PD_VAL_INT;
    else if (!strcmp(name, "float"))
        *r = v->kind == PD_VAL_FLOAT;
    else if (!strcmp(name, "boolean"))
        *r = v->kind == PD_VAL_BOOL;
    else if (!strcmp(name, "true") || !strcmp(name, "false"))
        *r = v->kind == PD_VAL_BOOL && v->b == (name[0] == 't');
    else if (!strcmp(name, "string"))
        *r = v->kind == PD_VAL_STR;
    else if (!strcmp(name, "mapping"))
        *r = v->kind == PD_VAL_DICT && v->view == PD_VIEW_NONE;
    else if (!strcmp(name, "iterable"))
        *r = coll || v->kind == PD_VAL_STR;
    else if (!strcmp(name, "sequence"))
        *r = (coll && !is_unindexed(v)) || v->kind == PD_VAL_STR;
    else if (!strcmp(name, "lower") || !strcmp(name, "upper")) { /* str.islower() / isupper() */
        pd_val s;
        if (need_printable(p, v) || to_string(p, v, &s))
            return -1;
        bool cased = false, ok = true;
        for (const char *c = s.s; *c; c++) {
            cased = cased || isalpha((unsigned char)*c);
            ok = ok && !(name[0] == 'l' ? isupper((unsigned char)*c) : islower((unsigned char)*c));
        }
        *r = cased && ok;
        pd_val_free(&s);
    } else if (!strcmp(name, "even") || !strcmp(name, "odd") || !strcmp(name, "divisibleby")) {
        bool div = name[0] == 'd';
        if (div && (!arg || !is_num(arg)))
            return fail(p, "test divisibleby needs a number, e.g. 'x is divisibleby 3'");
        if (!is_num(v))
            return fail(p, "test %s: expected a number, got %s", name, kind_name(v));
        pd_val two = pd_val_int(2), m = pd_val_none();
        if (arith(p, "%", (pd_val *)v, div ? (pd_val *)arg : &two, &m))
            return -1;
        /* Jinja2: value % 2 == 1 for odd (4.75 is neither odd nor even) */
        *r = name[0] == 'o' ? as_dbl(&m) == 1.0 : !pd_val_truthy(&m);
    } else if (!strcmp(name, "eq") || !strcmp(name, "equalto") || !strcmp(name, "ne") || !strcmp(name, "lt") ||
               !strcmp(name, "le") || !strcmp(name, "gt") || !strcmp(name, "ge") || !strcmp(name, "in")) {
        if (!arg)
            return fail(p, "test %s needs a value, e.g. 'x is %s 3'", name, name);
        if (need_defined(p, arg))
            return -1;
        if (!strcmp(name, "in"))
            return contains(p, v, arg, r);
        if (is_view(v) || is_view(arg))
            return fail(p, "comparing a range or iterator is not supported (in \"%s\")", p->src);
        int c;
        bool ok;
        compare(v, arg, &c, &ok);
        if (name[0] == 'e' || name[0] == 'n')
            *r = (ok && c == 0) == (name[0] == 'e');
        else if (!ok || v->kind == PD_VAL_DICT)
            return fail(p, "test %s: cannot compare %s and %s", name, kind_name(v), kind_name(arg));
        else
            *r = name[0] == 'l' ? (name[1] == 't' ? c < 0 : c <= 0) : (name[1] == 't' ? c > 0 : c >= 0);
    } else {
        return fail(p, "unknown test '%s' (supported: %s)", name, known_tests);
    }
    return 0;
}

/* After a value: subscripts, attributes and method calls (ops), then
 * filters and tests (filters); as in Jinja2, nothing but filters and
 * tests follows a filter ('x'|upper[0] is a syntax error there), and tests
 * do not chain. */
static int parse_postfix(parser *p, bool live, pd_val *out, bool filters);

static int postfix_loop(parser *p, bool live, pd_val *out, bool ops, bool filters)
{
    bool tested = false;
    for (;;) {
        if (ops && is_op(p, "[")) {
            if (parse_subscript(p, live, out))
                return -1;
        } else if (ops && is_op(p, ".")) { /* .method(args) or .key on a computed value */
            if (lex(p))
                return -1;
            if (p->type != T_NAME)
                return unexpected(p, "a method name after '.'");
            char method[32];
            snprintf(method, sizeof method, "%s", p->text.data);
            if (lex(p))
                return -1;
            if (!is_op(p, "(")) {
                if (!live)
                    continue;
                if (out->kind != PD_VAL_DICT)
                    return fail(p, "attribute '.%s' of a %s is not supported (in \"%s\")", method, kind_name(out),
                                p->src);
                pd_val key = pd_val_str(method), r = pd_val_none();
                int rc = subscript(p, out, false, &key, NULL, &r);
                pd_val_free(&key);
                pd_val_free(out);
                *out = r;
                if (rc)
                    return -1;
                continue;
            }
            pd_val args[MAX_ARGS];
            int n = 0;
            int rc = parse_args(p, live, args, &n);
            if (!rc && live) {
                pd_val r = pd_val_none();
                rc = call_method(p, out, method, args, n, &r);
                pd_val_free(out);
                *out = r;
            }
            free_args(args, n);
            if (rc)
                return -1;
        } else if (filters && is_op(p, "|")) {
            ops = false;
            if (lex(p))
                return -1;
            if (p->type != T_NAME)
                return unexpected(p, "a filter name after '|'");
            char fname[32];
            snprintf(fname, sizeof fname, "%s", p->text.data);
            if (lex(p))
                return -1;
            pd_val args[MAX_ARGS];
            char *kw[MAX_ARGS];
            int n = 0;
            if (parse_args_kw(p, live, args, kw, &n)) {
                free_args(args, n);
                free_kw(kw, n);
                return -1;
            }
            int rc = 0;
            if (!strcmp(fname, "format")) {
                for (int i = 0; i < n && !rc; i++)
                    if (kw[i])
                        rc = fail(p, "filter format: keyword arguments are not supported");
                free_kw(kw, n);
            } else {
                char who[48];
                snprintf(who, sizeof who, "filter %s", fname);
                rc = bind_params(p, who, filter_params(fname), args, kw, &n);
            }
            if (!rc && !live && !in_words(known_filters, fname)) /* Jinja2 checks names when it compiles */
                rc = fail(p, "unknown filter '%s' (supported: %s)", fname, known_filters);
            if (!rc && live) {
                pd_val r = pd_val_none();
                rc = apply_filter(p, fname, out, args, n, &r);
                pd_val_free(out);
                *out = r;
            }
            free_args(args, n);
            if (rc)
                return -1;
        } else if (filters && is_kw(p, "is")) {
            if (tested)
                return fail(p, "tests do not chain: 'x is a is b' (in \"%s\")", p->src);
            tested = true;
            ops = false;
            if (lex(p))
                return -1;
            bool neg = false;
            if (is_kw(p, "not")) {
                neg = true;
                if (lex(p))
                    return -1;
            }
            if (p->type != T_NAME)
                return unexpected(p, "a test name after 'is'");
            char tname[32];
            snprintf(tname, sizeof tname, "%s", p->text.data);
            /* Python's "x is None" / "is True" / "is False" (IOPS's stop_when is Python): the same identity
             * as Jinja2's none, true and false tests */
            if (p->python && (!strcmp(tname, "None") || !strcmp(tname, "True") || !strcmp(tname, "False")))
                tname[0] = (char)(tname[0] - 'A' + 'a');
            if (lex(p))
                return -1;
            pd_val arg = pd_val_none();
            bool has_arg = false;
            if (is_op(p, "(")) { /* x is divisibleby(3) */
                pd_val args[MAX_ARGS];
                int n = 0;
                if (parse_args(p, live, args, &n)) {
                    free_args(args, n);
                    return -1;
                }
                if (n > 1) {
                    free_args(args, n);
                    return fail(p, "test %s takes one argument", tname);
                }
                has_arg = n == 1;
                if (has_arg)
                    arg = args[0];
            } else if (p->type == T_INT || p->type == T_FLOAT || p->type == T_STR || is_op(p, "[") || is_op(p, "{") ||
                       (p->type == T_NAME && !is_kw(p, "and") && !is_kw(p, "or") && !is_kw(p, "else") &&
                        !is_kw(p, "if") && !is_kw(p, "in") && !is_kw(p, "not") && !is_kw(p, "is"))) {
                /* x is divisibleby 3: one value as the argument, as Jinja2 */
                if (parse_postfix(p, live, &arg, false)) {
                    pd_val_free(&arg);
                    return -1;
                }
                has_arg = true;
            }
            if (!live && !in_words(known_tests, tname)) {
                pd_val_free(&arg);
                return fail(p, "unknown test '%s' (supported: %s)", tname, known_tests);
            }
            if (live) {
                bool r = false;
                int rc = apply_test(p, tname, out, has_arg ? &arg : NULL, &r);
                pd_val_free(&arg);
                if (rc)
                    return -1;
                pd_val_free(out);
                *out = pd_val_bool(r != neg);
            } else {
                pd_val_free(&arg);
            }
        } else {
            return 0;
        }
    }
}

static int parse_postfix(parser *p, bool live, pd_val *out, bool filters)
{
    if (parse_primary(p, live, out))
        return -1;
    return postfix_loop(p, live, out, true, filters);
}

/* Parentheses, brackets, calls, unary signs and 'not' recurse: past this
 * depth an expression is refused, before it could overflow the stack
 * (found by fuzzing: 1060 nested parentheses crashed `paddiser bench`
 * under ASan). A parenthesis costs 3 levels (parse_expr, parse_not,
 * parse_unary), a sign or 'not' 1: about 100 nested parentheses are fine. */
#define MAX_EXPR_DEPTH 300

static int enter(parser *p)
{
    if (++p->depth > MAX_EXPR_DEPTH)
        return fail(p, "expression nested too deeply in \"%s\"", p->src);
    return 0;
}

#define DEPTH_GUARDED(name)                                                                                    \
    static int name(parser *p, bool live, pd_val *out)                                                         \
    {                                                                                                          \
        int rc = enter(p) ? (*out = pd_val_none(), -1) : name##_in(p, live, out);                              \
        p->depth--;                                                                                            \
        return rc;                                                                                             \
    }

static int parse_unary(parser *p, bool live, pd_val *out);
static int parse_unary_nf(parser *p, bool live, pd_val *out);

/* Jinja2's unary: a sign takes a value with its subscripts and attributes
 * but not its filters, which then apply to the signed value: -x|abs is
 * abs(-x). */
static int parse_unary_core(parser *p, bool live, pd_val *out, bool filters)
{
    *out = pd_val_none();
    if (!is_op(p, "-") && !is_op(p, "+")) {
        if (parse_postfix(p, live, out, filters))
            return -1;
        if (!p->python || !is_op(p, "**"))
            return 0;
        pd_val rhs = pd_val_none(); /* Python: ** binds tighter than a sign on its left, right to left */
        int rc = lex(p) || parse_unary(p, live, &rhs);
        if (!rc && live) {
            pd_val r = pd_val_none();
            rc = arith(p, "**", out, &rhs, &r);
            pd_val_free(out);
            *out = r;
        }
        pd_val_free(&rhs);
        return rc ? -1 : 0;
    }
    bool neg = p->op[0] == '-';
    if (lex(p) || (p->python ? parse_unary(p, live, out) : parse_unary_nf(p, live, out)))
        return -1;
    if (live) {
        if (need_defined(p, out))
            return -1;
        if (!is_num(out))
            return fail(p, "bad operand type for unary %c: %s (in \"%s\")", neg ? '-' : '+', kind_name(out), p->src);
        if (neg) {
            if (is_intlike(out)) {
                if (as_int(out) == (-9223372036854775807LL - 1))
                    return fail(p, "integer overflow");
                *out = pd_val_int(-as_int(out));
            } else {
                out->f = -out->f;
            }
        } else if (out->kind == PD_VAL_BOOL) {
            *out = pd_val_int(as_int(out));
        }
    }
    return filters && !p->python ? postfix_loop(p, live, out, false, true) : 0;
}

static int parse_unary_in(parser *p, bool live, pd_val *out) { return parse_unary_core(p, live, out, true); }
static int parse_unary_nf_in(parser *p, bool live, pd_val *out) { return parse_unary_core(p, live, out, false); }

DEPTH_GUARDED(parse_unary)
DEPTH_GUARDED(parse_unary_nf)

/* ** is left-associative and binds looser than a sign in Jinja2:
 * -2 ** 2 is 4, 2 ** 3 ** 2 is 64. */
static int parse_power(parser *p, bool live, pd_val *out)
{
    if (parse_unary(p, live, out))
        return -1;
    if (p->python) /* parse_unary took the ** */
        return 0;
    while (is_op(p, "**")) {
        pd_val rhs = pd_val_none();
        if (lex(p) || parse_unary(p, live, &rhs)) {
            pd_val_free(&rhs);
            return -1;
        }
        int rc = 0;
        if (live) {
            pd_val r = pd_val_none();
            rc = arith(p, "**", out, &rhs, &r);
            pd_val_free(out);
            *out = r;
        }
        pd_val_free(&rhs);
        if (rc)
            return -1;
    }
    return 0;
}

typedef int (*level_fn)(parser *, bool, pd_val *);

/* Left-associative binary level over the given operators. */
static int parse_binary(parser *p, bool live, pd_val *out, level_fn next, const char *const *ops)
{
    if (next(p, live, out))
        return -1;
    for (;;) {
        const char *op = NULL;
        for (const char *const *o = ops; *o; o++)
            if (is_op(p, *o))
                op = *o;
        if (!op)
            return 0;
        pd_val rhs = pd_val_none();
        if (lex(p) || next(p, live, &rhs)) {
            pd_val_free(&rhs);
            return -1;
        }
        int rc = 0;
        if (live) {
            pd_val r = pd_val_none();
            if (!strcmp(op, "~")) {
                if (!need_printable(p, out) && !need_printable(p, &rhs)) {
                    pd_str s = {0};
                    pd_val_append(&s, out);
                    pd_val_append(&s, &rhs);
                    pd_str_append(&s, "");
                    char *d = pd_str_take(&s);
                    r = d ? (pd_val){.kind = PD_VAL_STR, .s = d} : pd_val_none();
                } else {
                    rc = -1;
                }
            } else {
                rc = arith(p, op, out, &rhs, &r);
            }
            pd_val_free(out);
            *out = r;
        }
        pd_val_free(&rhs);
        if (rc)
            return -1;
    }
}

static int parse_mul(parser *p, bool live, pd_val *out)
{
    static const char *const ops[] = {"*", "/", "//", "%", NULL};
    return parse_binary(p, live, out, parse_power, ops);
}

static int parse_add(parser *p, bool live, pd_val *out);

/* ~ binds tighter than + and - in Jinja2; in expressions (Python has no
 * ~ concatenation) it stays looser, as before. */
static int parse_concat(parser *p, bool live, pd_val *out)
{
    static const char *const ops[] = {"~", NULL};
    return parse_binary(p, live, out, p->python ? parse_add : parse_mul, ops);
}

static int parse_add(parser *p, bool live, pd_val *out)
{
    static const char *const ops[] = {"+", "-", NULL};
    return parse_binary(p, live, out, p->python ? parse_mul : parse_concat, ops);
}

static int parse_sum(parser *p, bool live, pd_val *out)
{
    return p->python ? parse_concat(p, live, out) : parse_add(p, live, out);
}

static int parse_compare(parser *p, bool live, pd_val *out)
{
    static const char *const ops[] = {"==", "!=", "<", "<=", ">", ">="};
    if (parse_sum(p, live, out))
        return -1;
    bool result = true, any = false;
    pd_val left = *out;
    *out = pd_val_none();
    for (;;) {
        const char *op = NULL;
        for (size_t i = 0; i < PD_ARRAY_LEN(ops); i++)
            if (is_op(p, ops[i]))
                op = ops[i];
        if (is_kw(p, "in")) {
            op = "in";
        } else if (is_kw(p, "not")) { /* here only "not in" can follow a value */
            if (lex(p)) {
                pd_val_free(&left);
                return -1;
            }
            if (!is_kw(p, "in")) {
                pd_val_free(&left);
                return unexpected(p, "'in' after 'not'");
            }
            op = "not in";
        }
        if (!op)
            break;
        any = true;
        pd_val rhs = pd_val_none();
        if (lex(p) || parse_sum(p, live, &rhs)) {
            pd_val_free(&rhs);
            pd_val_free(&left);
            return -1;
        }
        if (live && result) {
            if (need_defined(p, &left) || need_defined(p, &rhs)) {
                pd_val_free(&rhs);
                pd_val_free(&left);
                return -1;
            }
            int c;
            bool comparable;
            compare(&left, &rhs, &c, &comparable);
            bool r = false;
            if (!strcmp(op, "in") || !strcmp(op, "not in")) {
                if (contains(p, &left, &rhs, &r)) {
                    pd_val_free(&rhs);
                    pd_val_free(&left);
                    return -1;
                }
                if (op[0] == 'n')
                    r = !r;
            } else if (is_view(&left) || is_view(&rhs)) {
                fail(p, "comparing a range or iterator is not supported (in \"%s\")", p->src);
                pd_val_free(&rhs);
                pd_val_free(&left);
                return -1;
            } else if (!strcmp(op, "==") || !strcmp(op, "!=")) {
                r = comparable && c == 0;
                if (op[0] == '!')
                    r = !r;
            } else {
                if (!comparable || left.kind == PD_VAL_DICT || rhs.kind == PD_VAL_DICT) {
                    fail(p, "cannot compare %s %s %s (in \"%s\")", kind_name(&left), op, kind_name(&rhs), p->src);
                    pd_val_free(&rhs);
                    pd_val_free(&left);
                    return -1;
                }
                r = op[0] == '<' ? (op[1] ? c <= 0 : c < 0) : (op[1] ? c >= 0 : c > 0);
            }
            result = result && r;
        }
        pd_val_free(&left);
        left = rhs;
    }
    if (!any) {
        *out = left;
        return 0;
    }
    pd_val_free(&left);
    *out = pd_val_bool(result);
    return 0;
}

static int parse_not(parser *p, bool live, pd_val *out);

static int parse_not_in(parser *p, bool live, pd_val *out)
{
    if (is_kw(p, "not")) {
        if (lex(p) || parse_not(p, live, out))
            return -1;
        if (live) {
            if (need_defined(p, out))
                return -1;
            bool t = pd_val_truthy(out);
            pd_val_free(out);
            *out = pd_val_bool(!t);
        }
        return 0;
    }
    return parse_compare(p, live, out);
}

DEPTH_GUARDED(parse_not)

/* and/or return the deciding operand, as Python does. */
static int parse_logic(parser *p, bool live, pd_val *out, bool is_and)
{
    if (is_and ? parse_not(p, live, out) : parse_logic(p, live, out, true))
        return -1;
    while (is_kw(p, is_and ? "and" : "or")) {
        if (live && need_defined(p, out))
            return -1;
        bool decided = live && (is_and ? !pd_val_truthy(out) : pd_val_truthy(out));
        bool rhs_live = live && !decided;
        pd_val rhs = pd_val_none();
        if (lex(p) || (is_and ? parse_not(p, rhs_live, &rhs) : parse_logic(p, rhs_live, &rhs, true))) {
            pd_val_free(&rhs);
            return -1;
        }
        if (rhs_live) {
            pd_val_free(out);
            *out = rhs;
        } else {
            pd_val_free(&rhs);
        }
    }
    return 0;
}

/* Whether the expression starting at s has an 'if' of its own (at its
 * bracket level, before a ',' ':' or closing bracket ends it). */
static bool has_own_if(const char *s)
{
    int depth = 0;
    for (const char *c = s; *c; c++) {
        if (*c == '"' || *c == '\'') {
            char q = *c;
            for (c++; *c && *c != q; c++)
                if (*c == '\\' && c[1])
                    c++;
            if (!*c)
                return false;
        } else if (strchr("([{", *c)) {
            depth++;
        } else if (strchr(")]}", *c)) {
            if (--depth < 0)
                return false;
        } else if (depth == 0 && (*c == ',' || *c == ':')) {
            return false;
        } else if (depth == 0 && c[0] == 'i' && c[1] == 'f' && (c == s || !(isalnum((unsigned char)c[-1]) || c[-1] == '_' || c[-1] == '.')) &&
                   !(isalnum((unsigned char)c[2]) || c[2] == '_')) {
            return true;
        }
    }
    return false;
}

/* Re-reads the source from at (a token start). */
static int rewind_to(parser *p, const char *at)
{
    p->p = at;
    return lex(p);
}

static int parse_expr_in(parser *p, bool live, pd_val *out)
{
    /* x if c else y evaluates c first, and then x or y only (x may fail
     * when c is false): x is checked without evaluating, then read again */
    const char *x_start = live && has_own_if(p->tok) ? p->tok : NULL;
    if (parse_logic(p, live && !x_start, out, false))
        return -1;
    if (!is_kw(p, "if")) {
        if (!x_start)
            return 0;
        pd_val_free(out);
        return rewind_to(p, x_start) || parse_logic(p, live, out, false) ? -1 : 0;
    }
    pd_val cond = pd_val_none(), other = pd_val_none();
    int rc = -1;
    if (lex(p) || parse_logic(p, live, &cond, false))
        goto done;
    if (live && need_defined(p, &cond))
        goto done;
    bool take = live && pd_val_truthy(&cond);
    if (take && x_start) {
        const char *after = p->tok;
        pd_val_free(out);
        if (rewind_to(p, x_start) || parse_logic(p, true, out, false) || rewind_to(p, after))
            goto done;
    }
    if (!is_kw(p, "else") && p->python) {
        unexpected(p, "'else'");
        goto done;
    }
    if (!is_kw(p, "else")) { /* x if c: undefined when c is false, as Jinja2 */
        if (live && !take) {
            pd_val_free(out);
            *out = (pd_val){.kind = PD_VAL_UNDEF, .s = pd_strdup("(x if c) with a false c")};
        }
        rc = 0;
        goto done;
    }
    if (lex(p) || parse_expr(p, live && !take, &other))
        goto done;
    if (live && !take) {
        pd_val_free(out);
        *out = other;
        other = pd_val_none();
    }
    rc = 0;
done:
    pd_val_free(&cond);
    pd_val_free(&other);
    return rc;
}

DEPTH_GUARDED(parse_expr)

static int expr_eval(const char *src, pd_lookup_fn lookup, void *ud, call_fn call, bool python, pd_val *out,
                     char *err, size_t errlen)
{
    parser p = {
        .src = src, .p = src, .lookup = lookup, .ud = ud, .err = err, .errlen = errlen, .call = call, .python = python};
    *out = pd_val_none();
    int rc = lex(&p);
    if (!rc && p.type == T_END)
        rc = fail(&p, "empty expression");
    if (!rc)
        rc = parse_expr(&p, true, out);
    if (!rc && p.type != T_END)
        rc = unexpected(&p, "end of expression");
    pd_str_free(&p.text);
    if (rc)
        pd_val_free(out);
    return rc;
}

/* Parses src without evaluating it (syntax, filter and test names), as
 * Jinja2 compiles a whole template before it renders: an error in a branch
 * not taken is still an error. */
static int expr_check(const char *src, char *err, size_t errlen)
{
    parser p = {.src = src, .p = src, .err = err, .errlen = errlen};
    pd_val out = pd_val_none();
    int rc = lex(&p);
    if (!rc && p.type == T_END)
        rc = fail(&p, "empty expression");
    if (!rc)
        rc = parse_expr(&p, false, &out);
    if (!rc && p.type != T_END)
        rc = unexpected(&p, "end of expression");
    pd_str_free(&p.text);
    pd_val_free(&out);
    return rc;
}

int pd_expr_eval(const char *src, pd_lookup_fn lookup, void *ud, pd_val *out, char *err, size_t errlen)
{
    return expr_eval(src, lookup, ud, NULL, true, out, err, errlen);
}

/* -------------------------------------------------------------- templates */

/* A template is rendered in three steps, as Jinja2 does it: the lexer cuts
 * it into text, {{ }} and {% %} tokens and applies the whitespace rules
 * (trim_blocks, lstrip_blocks, - and +), a parser builds a tree of
 * statements, and the tree is run against a chain of scopes. Expressions
 * stay source text, evaluated by the parser above when they are reached. */

bool pd_template_has_tags(const char *text) { return strstr(text, "{{") || strstr(text, "{%"); }

/* Finds the closing delimiter of a tag, skipping string literals and, as
 * Jinja2's lexer, brackets left open ({{ {'a': {'b': 1}} }}). */
static const char *find_close(const char *s, const char *close)
{
    char q = 0;
    int depth = 0;
    for (; *s; s++) {
        if (q) {
            if (*s == '\\' && s[1])
                s++;
            else if (*s == q)
                q = 0;
        } else if (*s == '"' || *s == '\'') {
            q = *s;
        } else if (depth == 0 && !strncmp(s, close, 2)) {
            return s;
        } else if (strchr("([{", *s)) {
            depth++;
        } else if (strchr(")]}", *s) && depth > 0) {
            depth--;
        }
    }
    return NULL;
}

static int line_of(const char *start, const char *at)
{
    int line = 1;
    for (const char *c = start; c < at; c++)
        if (*c == '\n')
            line++;
    return line;
}

typedef enum { TK_TEXT, TK_VAR, TK_BLOCK } tk_kind;

typedef struct {
    tk_kind kind;
    char *s; /* text, or the tag's inside without its - / + markers */
    int line;
} tmpl_tok;

typedef struct {
    tmpl_tok *v;
    size_t n;
} tok_list;

static int tok_push(tok_list *t, tk_kind kind, const char *s, size_t n, int line)
{
    tmpl_tok *g = realloc(t->v, (t->n + 1) * sizeof *g);
    if (!g)
        return -1;
    t->v = g;
    char *d = malloc(n + 1);
    if (!d)
        return -1;
    memcpy(d, s, n);
    d[n] = '\0';
    t->v[t->n++] = (tmpl_tok){kind, d, line};
    return 0;
}

static void tok_free(tok_list *t)
{
    for (size_t i = 0; i < t->n; i++)
        free(t->v[i].s);
    free(t->v);
}

typedef struct {
    char *err;
    size_t errlen;
    int line;
} errinfo;

static int terr(errinfo *e, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int terr(errinfo *e, int line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->err, e->errlen, fmt, ap);
    va_end(ap);
    e->line = line;
    return -1;
}

/* Jinja2's lexer with trim_blocks and lstrip_blocks: a block or comment tag
 * eats the newline after it (unless it ends with +%}) and the spaces before
 * it when only spaces precede it on its line (unless it starts {%+); a -
 * inside a delimiter strips all whitespace on that side. */
static int tokenize(const char *tmpl, tok_list *toks, errinfo *e)
{
    const char *s = tmpl;
    bool line_starting = true; /* the previous tag's match ended a line */
    while (*s) {
        const char *open = strchr(s, '{');
        while (open && open[1] != '{' && open[1] != '%' && open[1] != '#')
            open = strchr(open + 1, '{');
        const char *te = open ? open : s + strlen(s);
        if (open) {
            char sign = open[2] == '-' || open[2] == '+' ? open[2] : 0;
            if (sign == '-') {
                while (te > s && isspace((unsigned char)te[-1]))
                    te--;
            } else if (sign != '+' && open[1] != '{') { /* lstrip_blocks */
                const char *l = te;
                while (l > s && l[-1] != '\n')
                    l--;
                bool blank = true;
                for (const char *c = l; c < te && blank; c++)
                    blank = isspace((unsigned char)*c);
                if (blank && (l > s || line_starting))
                    te = l;
            }
        }
        if (te > s && tok_push(toks, TK_TEXT, s, (size_t)(te - s), line_of(tmpl, s)))
            return terr(e, 0, "out of memory");
        if (!open)
            break;
        int line = line_of(tmpl, open);
        char kind = open[1];
        const char *close_tok = kind == '{' ? "}}" : kind == '%' ? "%}" : "#}";
        const char *body = open + 2;
        const char *close = kind == '#' ? strstr(body, "#}") : find_close(body, close_tok);
        if (!close)
            return terr(e, line, "unclosed '{%c' (no matching '%s')", kind, close_tok);
        if (body < close && (*body == '-' || (kind != '{' && *body == '+')))
            body++;
        const char *body_end = close;
        char end_sign = 0;
        if (body_end > body && (body_end[-1] == '-' || (kind != '{' && body_end[-1] == '+')))
            end_sign = *--body_end;
        const char *after = close + 2;
        if (end_sign == '-')
            while (isspace((unsigned char)*after))
                after++;
        else if (kind != '{' && end_sign != '+' && *after == '\n') /* trim_blocks */
            after++;
        line_starting = after[-1] == '\n';
        if (kind != '#' && tok_push(toks, kind == '{' ? TK_VAR : TK_BLOCK, body, (size_t)(body_end - body), line))
            return terr(e, 0, "out of memory");
        s = after;
    }
    return 0;
}

/* ---- the statement tree */

typedef enum { N_TEXT, N_OUT, N_IF, N_FOR, N_SET, N_SETBLOCK, N_MACRO } node_kind;

#define MAX_TARGETS 8
#define MAX_PARAMS 16

typedef struct node node;
typedef struct {
    node *v;
    size_t n;
} node_list;

struct node {
    node_kind kind;
    int line;
    char *text;                 /* TEXT */
    char *expr;                 /* OUT; IF condition; FOR iterable; SET value */
    char *cond;                 /* FOR's if filter */
    char *names[MAX_PARAMS];    /* FOR / SET targets; MACRO parameters */
    char *defaults[MAX_PARAMS]; /* MACRO parameter defaults (expressions) */
    int nnames;
    char *name; /* MACRO, SETBLOCK */
    node_list body, orelse;
    /* MACRO, FOR, SETBLOCK (whose bodies are scopes of their own): the
     * names assigned in the enclosing scope. In Jinja2 an inner scope sees
     * the enclosing scope's binding of them, undefined until assigned,
     * never an outer value of the same name. */
    char **shadow;
    int nshadow;
};

static void nodes_free(node_list *l);

static void node_free(node *n)
{
    free(n->text);
    free(n->expr);
    free(n->cond);
    free(n->name);
    for (int i = 0; i < n->nnames; i++) {
        free(n->names[i]);
        free(n->defaults[i]);
    }
    nodes_free(&n->body);
    nodes_free(&n->orelse);
    for (int i = 0; i < n->nshadow; i++)
        free(n->shadow[i]);
    free(n->shadow);
}

static void nodes_free(node_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        node_free(&l->v[i]);
    free(l->v);
    l->v = NULL;
    l->n = 0;
}

static node *node_add(node_list *l, node_kind kind, int line)
{
    node *g = realloc(l->v, (l->n + 1) * sizeof *g);
    if (!g)
        return NULL;
    l->v = g;
    node *n = &l->v[l->n++];
    memset(n, 0, sizeof *n);
    n->kind = kind;
    n->line = line;
    return n;
}

typedef struct {
    tok_list *t;
    size_t i;
    int depth;
    errinfo *e;
} tparser;

static bool is_ident_start(char c) { return isalpha((unsigned char)c) || c == '_'; }
static bool is_ident(char c) { return isalnum((unsigned char)c) || c == '_'; }

/* Splits a tag into its keyword and the trimmed rest. */
static void split_tag(char *s, char **word, char **rest)
{
    while (isspace((unsigned char)*s))
        s++;
    *word = s;
    while (is_ident(*s))
        s++;
    char *r = s;
    while (isspace((unsigned char)*r))
        r++;
    char *end = r + strlen(r);
    while (end > r && isspace((unsigned char)end[-1]))
        end--;
    *end = '\0';
    *s = '\0'; /* ends word; rest starts after it */
    *rest = r;
}

/* The position of the first top-level occurrence (outside strings and
 * brackets) of keyword kw (a whole word) or of the lone character c. */
static const char *find_top(const char *s, const char *kw, char c)
{
    int depth = 0;
    char q = 0;
    for (const char *p = s; *p; p++) {
        if (q) {
            if (*p == '\\' && p[1])
                p++;
            else if (*p == q)
                q = 0;
            continue;
        }
        if (*p == '"' || *p == '\'')
            q = *p;
        else if (strchr("([{", *p))
            depth++;
        else if (strchr(")]}", *p))
            depth--;
        else if (depth == 0 && c && *p == c && (c != '=' || (p[1] != '=' && (p == s || !strchr("=!<>", p[-1])))))
            return p;
        else if (depth == 0 && kw && !strncmp(p, kw, strlen(kw)) && (p == s || !is_ident(p[-1])) &&
                 !is_ident(p[strlen(kw)]) && (p == s || p[-1] != '.'))
            return p;
    }
    return NULL;
}

static char *dup_trim(const char *s, size_t n)
{
    while (n && isspace((unsigned char)*s))
        s++, n--;
    while (n && isspace((unsigned char)s[n - 1]))
        n--;
    char *d = malloc(n + 1);
    if (d) {
        memcpy(d, s, n);
        d[n] = '\0';
    }
    return d;
}

/* "a", "a, b" (names only) into n->names. */
static int parse_targets(tparser *tp, node *n, const char *s, size_t len, const char *what, int line)
{
    char *t = dup_trim(s, len);
    if (!t)
        return terr(tp->e, line, "out of memory");
    const char *c = t;
    int rc = 0;
    if (*c == '(' && t[strlen(t) - 1] == ')') /* (a, b) */
        c++, t[strlen(t) - 1] = '\0';
    for (;;) {
        while (isspace((unsigned char)*c))
            c++;
        const char *b = c;
        while (is_ident(*c))
            c++;
        if (c == b || !is_ident_start(*b) || n->nnames == MAX_TARGETS) {
            rc = terr(tp->e, line, "{%% %s %%}: expected a name or 'a, b' names, found '%s'%s", what, t,
                      strchr(t, '.') ? " (assigning to an attribute, e.g. a namespace, is not supported)" : "");
            break;
        }
        n->names[n->nnames++] = dup_trim(b, (size_t)(c - b));
        while (isspace((unsigned char)*c))
            c++;
        if (*c == ',') {
            c++;
            while (isspace((unsigned char)*c))
                c++;
            if (!*c)
                break;
            continue;
        }
        if (*c) {
            rc = terr(tp->e, line, "{%% %s %%}: expected a name or 'a, b' names, found '%s'", what, t);
            break;
        }
        break;
    }
    free(t);
    return rc;
}

#define MAX_NESTING 64

/* Syntax-checks an expression of the template when it is parsed. */
static int check_expr(tparser *tp, const char *src, int line, bool as_tuple)
{
    char e[400];
    pd_str wrapped = {0};
    if (as_tuple)
        pd_str_printf(&wrapped, "(%s)", src);
    int rc = expr_check(as_tuple ? (wrapped.data ? wrapped.data : "") : src, e, sizeof e);
    pd_str_free(&wrapped);
    return rc ? terr(tp->e, line, "%s", e) : 0;
}

/* A set of names (small: linear search). */
typedef struct {
    char **v;
    int n;
} name_set;

static bool names_has(const name_set *s, const char *name, size_t len)
{
    for (int i = 0; s && i < s->n; i++)
        if (strlen(s->v[i]) == len && !strncmp(s->v[i], name, len))
            return true;
    return false;
}

static int names_add(name_set *s, const char *name, size_t len)
{
    if (names_has(s, name, len))
        return 0;
    char **g = realloc(s->v, (size_t)(s->n + 1) * sizeof *g);
    if (!g)
        return -1;
    s->v = g;
    if (!(s->v[s->n] = dup_trim(name, len)))
        return -1;
    s->n++;
    return 0;
}

static void names_free(name_set *s)
{
    for (int i = 0; i < s->n; i++)
        free(s->v[i]);
    free(s->v);
    s->v = NULL;
    s->n = 0;
}

/* The names an expression may read: its identifiers outside strings and
 * not after a '.' (an over-estimate: keywords and filter names too). */
static int expr_names(const char *src, name_set *out)
{
    for (const char *c = src; c && *c;) {
        if (*c == '"' || *c == '\'') {
            char q = *c++;
            while (*c && *c != q)
                c += c[0] == '\\' && c[1] ? 2 : 1;
            if (*c)
                c++;
        } else if (is_ident_start(*c)) {
            const char *b = c, *before = b;
            while (is_ident(*c))
                c++;
            while (before > src && isspace((unsigned char)before[-1]))
                before--;
            if ((before == src || before[-1] != '.') && names_add(out, b, (size_t)(c - b)))
                return -1;
        } else {
            c++;
        }
    }
    return 0;
}

/* Walks a scope's own code in order (if bodies belong to the scope; for,
 * set-block and macro bodies are scopes of their own): every name it
 * reads or assigns goes to refs, and the names whose first mention is a
 * direct assignment (not inside an if) to first_store. */
static int scope_walk(const node_list *l, name_set *refs, name_set *first_store, bool in_if)
{
    for (size_t i = 0; i < l->n; i++) {
        const node *x = &l->v[i];
        if ((x->kind == N_OUT || x->kind == N_IF || x->kind == N_FOR || x->kind == N_SET) && expr_names(x->expr, refs))
            return -1;
        if (x->kind == N_IF &&
            (scope_walk(&x->body, refs, first_store, true) || scope_walk(&x->orelse, refs, first_store, true)))
            return -1;
        const char *stored[MAX_PARAMS + 1];
        int k = 0;
        if (x->kind == N_SET || x->kind == N_SETBLOCK)
            for (int j = 0; j < x->nnames; j++)
                stored[k++] = x->names[j];
        else if (x->kind == N_MACRO)
            stored[k++] = x->name;
        for (int j = 0; j < k; j++) {
            size_t len = strlen(stored[j]);
            if (!in_if && !names_has(refs, stored[j], len) && names_add(first_store, stored[j], len))
                return -1;
            if (names_add(refs, stored[j], len))
                return -1;
        }
    }
    return 0;
}

static int give_shadow(node_list *l, const name_set *names)
{
    for (size_t i = 0; i < l->n; i++) {
        node *x = &l->v[i];
        if ((x->kind == N_MACRO || x->kind == N_FOR || x->kind == N_SETBLOCK) && names->n) {
            x->shadow = calloc((size_t)names->n, sizeof *x->shadow);
            if (!x->shadow)
                return -1;
            for (int j = 0; j < names->n; j++)
                if (!(x->shadow[x->nshadow++] = pd_strdup(names->v[j])))
                    return -1;
        } else if (x->kind == N_IF && (give_shadow(&x->body, names) || give_shadow(&x->orelse, names))) {
            return -1;
        }
    }
    return 0;
}

static int mark_scope(tparser *tp, node_list *l, const name_set *outer);

/* The inner scopes of a scope's code get outer (every name the enclosing
 * scopes mention) to mark theirs. */
static int mark_children(tparser *tp, node_list *l, const name_set *outer)
{
    for (size_t i = 0; i < l->n; i++) {
        node *x = &l->v[i];
        if (x->kind == N_IF && (mark_children(tp, &x->body, outer) || mark_children(tp, &x->orelse, outer)))
            return -1;
        if ((x->kind == N_FOR || x->kind == N_MACRO || x->kind == N_SETBLOCK) &&
            (mark_scope(tp, &x->body, outer) || (x->kind == N_FOR && mark_scope(tp, &x->orelse, outer))))
            return -1;
    }
    return 0;
}

/* Jinja2's scoping (its idtracking): in a scope, a name first mentioned
 * by an assignment, and mentioned by no enclosing scope, is undefined
 * until assigned, also for the inner scopes (loops, macros) that run
 * before that; any other name reads the enclosing value until assigned.
 * The names of the first kind go to the inner scopes' nodes (shadow),
 * which put them, undefined, between themselves and this scope while this
 * scope has not assigned them (make_barrier). Called on the whole tree
 * once it is parsed. */
static int mark_scope(tparser *tp, node_list *l, const name_set *outer)
{
    name_set refs = {0}, first = {0}, hidden = {0}, all = {0};
    int rc = scope_walk(l, &refs, &first, false);
    for (int i = 0; !rc && i < first.n; i++)
        if (!names_has(outer, first.v[i], strlen(first.v[i])))
            rc = names_add(&hidden, first.v[i], strlen(first.v[i]));
    for (int i = 0; !rc && outer && i < outer->n; i++)
        rc = names_add(&all, outer->v[i], strlen(outer->v[i]));
    for (int i = 0; !rc && i < refs.n; i++)
        rc = names_add(&all, refs.v[i], strlen(refs.v[i]));
    if (!rc)
        rc = give_shadow(l, &hidden);
    names_free(&refs);
    names_free(&first);
    names_free(&hidden);
    if (rc) {
        names_free(&all);
        return terr(tp->e, 0, "out of memory");
    }
    rc = mark_children(tp, l, &all);
    names_free(&all);
    return rc;
}

static int parse_nodes(tparser *tp, node_list *out, const char *const *stops, const char **stopped, char **stop_rest,
                       int *stop_line, const char *opener, int open_line);

/* {% if %} ... {% elif %} ... {% else %} ... {% endif %} */
static int parse_if(tparser *tp, node *n)
{
    static const char *const stops[] = {"elif", "else", "endif", NULL};
    const char *w;
    char *rest;
    int line;
    if (parse_nodes(tp, &n->body, stops, &w, &rest, &line, "if", n->line))
        return -1;
    if (!strcmp(w, "elif")) {
        if (!*rest)
            return terr(tp->e, line, "{%% elif %%} needs a condition");
        node *e = node_add(&n->orelse, N_IF, line);
        if (!e || !(e->expr = pd_strdup(rest)))
            return terr(tp->e, line, "out of memory");
        if (check_expr(tp, e->expr, line, false))
            return -1;
        return parse_if(tp, e);
    }
    if (*rest)
        return terr(tp->e, line, "{%% %s %%} takes nothing after it", w);
    if (!strcmp(w, "else")) {
        static const char *const end[] = {"endif", NULL};
        if (parse_nodes(tp, &n->orelse, end, &w, &rest, &line, "if", n->line))
            return -1;
        if (*rest)
            return terr(tp->e, line, "{%% endif %%} takes nothing after it");
    }
    return 0;
}

static int parse_for(tparser *tp, node *n, const char *rest)
{
    const char *in = find_top(rest, "in", 0);
    if (!in)
        return terr(tp->e, n->line, "{%% for %%} needs 'NAME in LIST', found '%s'", rest);
    if (parse_targets(tp, n, rest, (size_t)(in - rest), "for", n->line))
        return -1;
    const char *iter = in + 2;
    if (find_top(iter, "recursive", 0))
        return terr(tp->e, n->line, "{%% for ... recursive %%} is not supported");
    const char *cond = find_top(iter, "if", 0);
    n->expr = dup_trim(iter, cond ? (size_t)(cond - iter) : strlen(iter));
    if (cond)
        n->cond = dup_trim(cond + 2, strlen(cond + 2));
    if (!n->expr || (cond && !n->cond))
        return terr(tp->e, n->line, "out of memory");
    if (!n->expr[0] || (cond && !n->cond[0]))
        return terr(tp->e, n->line, "{%% for %%} needs 'NAME in LIST [if COND]', found '%s'", rest);
    if (check_expr(tp, n->expr, n->line, false) || (cond && check_expr(tp, n->cond, n->line, false)))
        return -1;
    static const char *const stops[] = {"else", "endfor", NULL};
    const char *w;
    char *r;
    int line;
    if (parse_nodes(tp, &n->body, stops, &w, &r, &line, "for", n->line))
        return -1;
    if (*r)
        return terr(tp->e, line, "{%% %s %%} takes nothing after it", w);
    if (!strcmp(w, "else")) {
        static const char *const end[] = {"endfor", NULL};
        if (parse_nodes(tp, &n->orelse, end, &w, &r, &line, "for", n->line))
            return -1;
        if (*r)
            return terr(tp->e, line, "{%% endfor %%} takes nothing after it");
    }
    return 0;
}

/* {% set a = expr %}, {% set a, b = expr %}, {% set a %}...{% endset %} */
static int parse_set(tparser *tp, node *n, const char *rest)
{
    const char *eq = find_top(rest, NULL, '=');
    if (eq) {
        n->kind = N_SET;
        if (parse_targets(tp, n, rest, (size_t)(eq - rest), "set", n->line))
            return -1;
        n->expr = dup_trim(eq + 1, strlen(eq + 1));
        if (!n->expr)
            return terr(tp->e, n->line, "out of memory");
        if (!n->expr[0])
            return terr(tp->e, n->line, "{%% set %%} needs a value after '='");
        return check_expr(tp, n->expr, n->line, true);
    }
    n->kind = N_SETBLOCK;
    if (find_top(rest, NULL, '|'))
        return terr(tp->e, n->line, "{%% set NAME | filter %%} (a filtered block set) is not supported");
    if (parse_targets(tp, n, rest, strlen(rest), "set", n->line))
        return -1;
    if (n->nnames != 1)
        return terr(tp->e, n->line, "a {%% set %%} block assigns one name");
    static const char *const stops[] = {"endset", NULL};
    const char *w;
    char *r;
    int line;
    if (parse_nodes(tp, &n->body, stops, &w, &r, &line, "set", n->line))
        return -1;
    return *r ? terr(tp->e, line, "{%% endset %%} takes nothing after it") : 0;
}

/* {% macro name(a, b=default) %} ... {% endmacro %} */
static int parse_macro(tparser *tp, node *n, const char *rest)
{
    const char *c = rest, *b = rest;
    while (is_ident(*c))
        c++;
    if (c == b || !is_ident_start(*b))
        return terr(tp->e, n->line, "{%% macro %%} needs 'NAME(ARGS)', found '%s'", rest);
    n->name = dup_trim(b, (size_t)(c - b));
    while (isspace((unsigned char)*c))
        c++;
    if (*c != '(' || rest[strlen(rest) - 1] != ')')
        return terr(tp->e, n->line, "{%% macro %%} needs 'NAME(ARGS)', found '%s'", rest);
    char *params = dup_trim(c + 1, strlen(c + 1) - 1);
    if (!n->name || !params)
        return terr(tp->e, n->line, "out of memory");
    int rc = 0;
    for (char *p = params; *p && !rc;) {
        char *comma = (char *)find_top(p, NULL, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        char *one = dup_trim(p, len);
        if (!one) {
            rc = terr(tp->e, n->line, "out of memory");
            break;
        }
        char *eq = (char *)find_top(one, NULL, '=');
        char *pname = dup_trim(one, eq ? (size_t)(eq - one) : strlen(one));
        bool ok = pname && is_ident_start(pname[0]) && n->nnames < MAX_PARAMS;
        for (const char *q = pname; ok && *q; q++)
            ok = is_ident(*q);
        if (!ok || (eq && !eq[1]))
            rc = terr(tp->e, n->line, "{%% macro %s %%}: bad parameter '%s'", n->name, one);
        else {
            n->names[n->nnames] = pname;
            n->defaults[n->nnames] = eq ? dup_trim(eq + 1, strlen(eq + 1)) : NULL;
            pname = NULL;
            if (eq && !n->defaults[n->nnames])
                rc = terr(tp->e, n->line, "out of memory");
            else if (eq)
                rc = check_expr(tp, n->defaults[n->nnames], n->line, false);
            n->nnames++;
        }
        free(pname);
        free(one);
        if (!comma)
            break;
        p = comma + 1;
        if (!*p)
            rc = terr(tp->e, n->line, "{%% macro %s %%}: trailing ',' in the parameters", n->name);
    }
    free(params);
    if (rc)
        return -1;
    static const char *const stops[] = {"endmacro", NULL};
    const char *w;
    char *r;
    int line;
    if (parse_nodes(tp, &n->body, stops, &w, &r, &line, "macro", n->line))
        return -1;
    return *r && strcmp(r, n->name) ? terr(tp->e, line, "{%% endmacro %%} takes nothing after it") : 0;
}

/* Parses tokens into out until a block whose keyword is in stops (then
 * *stopped, *stop_rest, *stop_line describe it) or the end (an error when
 * stops are expected: opener names the unclosed statement). */
static int parse_nodes(tparser *tp, node_list *out, const char *const *stops, const char **stopped, char **stop_rest,
                       int *stop_line, const char *opener, int open_line)
{
    if (++tp->depth > MAX_NESTING) {
        tp->depth--;
        return terr(tp->e, open_line, "statements nested deeper than %d", MAX_NESTING);
    }
    int rc = 0;
    while (tp->i < tp->t->n && !rc) {
        tmpl_tok *tk = &tp->t->v[tp->i++];
        if (tk->kind == TK_TEXT || tk->kind == TK_VAR) {
            node *n = node_add(out, tk->kind == TK_TEXT ? N_TEXT : N_OUT, tk->line);
            if (!n)
                rc = terr(tp->e, tk->line, "out of memory");
            else if (tk->kind == TK_TEXT)
                n->text = pd_strdup(tk->s);
            else if (!(n->expr = dup_trim(tk->s, strlen(tk->s))) || !n->expr[0])
                rc = terr(tp->e, tk->line, "empty {{ }}");
            else
                rc = check_expr(tp, n->expr, tk->line, false);
            continue;
        }
        char *word, *rest;
        split_tag(tk->s, &word, &rest);
        for (const char *const *s = stops; s && *s; s++)
            if (!strcmp(word, *s)) {
                *stopped = *s;
                *stop_rest = rest;
                *stop_line = tk->line;
                tp->depth--;
                return 0;
            }
        node *n = NULL;
        if (!strcmp(word, "if") || !strcmp(word, "for") || !strcmp(word, "set") || !strcmp(word, "macro")) {
            n = node_add(out, N_IF, tk->line);
            if (!n) {
                rc = terr(tp->e, tk->line, "out of memory");
                break;
            }
        }
        if (!strcmp(word, "if")) {
            if (!*rest)
                rc = terr(tp->e, tk->line, "{%% if %%} needs a condition");
            else if (!(n->expr = pd_strdup(rest)))
                rc = terr(tp->e, tk->line, "out of memory");
            else if (!(rc = check_expr(tp, n->expr, tk->line, false)))
                rc = parse_if(tp, n);
        } else if (!strcmp(word, "for")) {
            n->kind = N_FOR;
            rc = parse_for(tp, n, rest);
        } else if (!strcmp(word, "set")) {
            rc = parse_set(tp, n, rest);
        } else if (!strcmp(word, "macro")) {
            n->kind = N_MACRO;
            rc = parse_macro(tp, n, rest);
        } else if (!strcmp(word, "elif") || !strcmp(word, "else") || !strcmp(word, "endif") ||
                   !strcmp(word, "endfor") || !strcmp(word, "endset") || !strcmp(word, "endmacro")) {
            const char *want = word[0] == 'e' && word[1] == 'l' ? (opener ? opener : "if")
                                                                   : word + 3;
            if (opener)
                rc = terr(tp->e, tk->line, "{%% %s %%} inside {%% %s %%} (line %d), which it does not close", word,
                          opener, open_line);
            else
                rc = terr(tp->e, tk->line, "{%% %s %%} without {%% %s %%}", word, want);
        } else {
            rc = terr(tp->e, tk->line,
                      "unsupported statement {%% %s %%} (supported: if, elif, else, for, set, macro and their "
                      "end tags)",
                      *word ? word : rest);
        }
    }
    tp->depth--;
    if (!rc && stops)
        rc = terr(tp->e, open_line, "{%% %s %%} without {%% end%s %%}", opener, opener);
    return rc;
}

/* ---- running the tree */

/* What one render may take, all loops and macro calls together:
 * iterations and calls (nested range()s or recursive macros that would
 * never finish) and output (15 nested loops over 3 items in 3 KB ran for
 * minutes before this bound, found by make fuzz). 16 MiB is far beyond any
 * job script. */
#define MAX_LOOP_ITERATIONS 1000000
#define MAX_OUTPUT ((size_t)16 << 20)
#define MAX_CALL_DEPTH 64

typedef struct var {
    char *name;
    pd_val val;
    const node *macro; /* a macro (val unused) */
    struct frame *macro_scope;
} var;

typedef struct frame {
    struct frame *parent;
    var *v;
    size_t n;
} frame;

typedef struct {
    pd_lookup_fn base;
    void *base_ud;
    size_t iterations;
    int call_depth;
    errinfo *e;
} runner;

typedef struct {
    runner *r;
    frame *f;
} scope_ref;

static void frame_free(frame *f)
{
    for (size_t i = 0; i < f->n; i++) {
        free(f->v[i].name);
        pd_val_free(&f->v[i].val);
    }
    free(f->v);
    f->v = NULL;
    f->n = 0;
}

/* Binds name in f (taking val). */
static int frame_set(frame *f, const char *name, pd_val val, const node *macro, frame *macro_scope)
{
    for (size_t i = 0; i < f->n; i++)
        if (!strcmp(f->v[i].name, name)) {
            pd_val_free(&f->v[i].val);
            f->v[i].val = val;
            f->v[i].macro = macro;
            f->v[i].macro_scope = macro_scope;
            return 0;
        }
    var *g = realloc(f->v, (f->n + 1) * sizeof *g);
    char *d = pd_strdup(name);
    if (!g || !d) {
        if (g)
            f->v = g;
        free(d);
        pd_val_free(&val);
        return -1;
    }
    f->v = g;
    f->v[f->n++] = (var){d, val, macro, macro_scope};
    return 0;
}

static const var *scope_find(frame *f, const char *name, size_t len)
{
    for (; f; f = f->parent)
        for (size_t i = f->n; i-- > 0;)
            if (strlen(f->v[i].name) == len && !strncmp(f->v[i].name, name, len))
                return &f->v[i];
    return NULL;
}

/* Names bound by the template (set, for, macro parameters, loop) shadow
 * the caller's; a dotted name whose head is bound walks into it (dict
 * keys, list indexes); the rest goes to the caller's lookup. */
static bool scope_lookup(void *ud, const char *name, pd_val *out)
{
    scope_ref *s = ud;
    const char *dot = strchr(name, '.');
    const var *v = scope_find(s->f, name, dot ? (size_t)(dot - name) : strlen(name));
    if (!v)
        return s->r->base(s->r->base_ud, name, out);
    if (v->macro || v->val.kind == PD_VAL_UNDEF) /* a macro, or assigned later in a macro's scope */
        return false;
    const pd_val *cur = &v->val;
    while (dot) {
        const char *seg = dot + 1;
        dot = strchr(seg, '.');
        size_t len = dot ? (size_t)(dot - seg) : strlen(seg);
        const pd_val *next = NULL;
        if (cur->kind == PD_VAL_DICT) {
            for (size_t i = 0; i < cur->n && !next; i++) {
                const pd_val *k = &cur->items[i].items[0];
                if (k->kind == PD_VAL_STR && strlen(k->s) == len && !strncmp(k->s, seg, len))
                    next = &cur->items[i].items[1];
            }
        } else if (cur->kind == PD_VAL_LIST && !is_unindexed(cur) && isdigit((unsigned char)*seg)) {
            size_t idx = (size_t)strtoull(seg, NULL, 10);
            if (idx < cur->n)
                next = &cur->items[idx];
        }
        if (!next)
            return false;
        cur = next;
    }
    *out = pd_val_copy(cur);
    return true;
}

static int run_nodes(runner *r, frame *f, const node_list *l, pd_str *out);
static int macro_call(void *ud, const char *name, pd_val *args, char **kw, int n, pd_val *out, char *err,
                      size_t errlen);

/* Evaluates an expression of the template at line. */
static int eval_at(runner *r, frame *f, const char *src, int line, pd_val *out)
{
    scope_ref s = {r, f};
    char e[512];
    int before = r->e->line;
    r->e->line = -1;
    int rc = expr_eval(src, scope_lookup, &s, macro_call, false, out, e, sizeof e);
    int inner = r->e->line; /* set by an error inside a macro called here */
    r->e->line = before;
    if (!rc && out->kind == PD_VAL_UNDEF) {
        snprintf(e, sizeof e, "unknown name '%s'", out->s);
        pd_val_free(out);
        rc = -1;
    }
    if (rc) {
        snprintf(r->e->err, r->e->errlen, "%s", e);
        r->e->line = inner > 0 ? inner : line;
    }
    return rc;
}

/* Fills barrier (a frame between an inner scope and scope) with the names
 * of n->shadow that scope has not bound yet, as undefined. */
static int make_barrier(frame *barrier, frame *scope, const node *n)
{
    for (int i = 0; i < n->nshadow; i++) {
        bool set_there = false;
        for (size_t k = 0; k < scope->n && !set_there; k++)
            set_there = !strcmp(scope->v[k].name, n->shadow[i]);
        if (!set_there && frame_set(barrier, n->shadow[i], (pd_val){.kind = PD_VAL_UNDEF}, NULL, NULL))
            return -1;
    }
    return 0;
}

static int macro_call(void *ud, const char *name, pd_val *args, char **kw, int n, pd_val *out, char *err,
                      size_t errlen)
{
    scope_ref *s = ud;
    runner *r = s->r;
    const var *v = scope_find(s->f, name, strlen(name));
    if (!v || !v->macro)
        return 1;
    const node *m = v->macro;
    if (r->call_depth >= MAX_CALL_DEPTH) {
        snprintf(err, errlen, "macro %s: calls nested deeper than %d", name, MAX_CALL_DEPTH);
        return -1;
    }
    if (++r->iterations > MAX_LOOP_ITERATIONS) {
        snprintf(err, errlen, "more than %d loop iterations and macro calls in one template", MAX_LOOP_ITERATIONS);
        return -1;
    }
    frame barrier = {.parent = v->macro_scope}, mf = {.parent = &barrier};
    bool bound[MAX_PARAMS] = {false};
    int rc = 0;
    if (make_barrier(&barrier, v->macro_scope, m)) {
        snprintf(err, errlen, "out of memory");
        rc = -1;
    }
    for (int i = 0; i < n && !rc; i++) {
        int slot = i;
        if (kw[i])
            for (slot = 0; slot < m->nnames && strcmp(m->names[slot], kw[i]); slot++)
                ;
        if (slot >= m->nnames) {
            if (kw[i])
                snprintf(err, errlen, "macro '%s' has no parameter '%s'", name, kw[i]);
            else
                snprintf(err, errlen, "macro '%s' takes not more than %d argument(s)", name, m->nnames);
            rc = -1;
        } else if (bound[slot]) {
            snprintf(err, errlen, "macro '%s' got multiple values for parameter '%s'", name, m->names[slot]);
            rc = -1;
        } else if (args[i].kind == PD_VAL_UNDEF) {
            snprintf(err, errlen, "unknown name '%s'", args[i].s);
            rc = -1;
        } else {
            bound[slot] = true;
            if (frame_set(&mf, m->names[slot], pd_val_copy(&args[i]), NULL, NULL)) {
                snprintf(err, errlen, "out of memory");
                rc = -1;
            }
        }
    }
    /* defaults, in order, each seeing the parameters before it */
    for (int i = 0; i < m->nnames && !rc; i++) {
        if (bound[i])
            continue;
        if (!m->defaults[i]) {
            snprintf(err, errlen, "macro '%s': parameter '%s' not given (Jinja2 leaves it undefined)", name,
                     m->names[i]);
            rc = -1;
            break;
        }
        pd_val d;
        if (eval_at(r, &mf, m->defaults[i], m->line, &d)) {
            snprintf(err, errlen, "%s", r->e->err);
            rc = -1;
        } else if (frame_set(&mf, m->names[i], d, NULL, NULL)) {
            snprintf(err, errlen, "out of memory");
            rc = -1;
        }
    }
    if (!rc) {
        pd_str body = {0};
        pd_str_append(&body, "");
        r->call_depth++;
        rc = run_nodes(r, &mf, &m->body, &body);
        r->call_depth--;
        if (rc) {
            snprintf(err, errlen, "%s", r->e->err);
            pd_str_free(&body);
        } else {
            char *d = pd_str_take(&body);
            *out = d ? (pd_val){.kind = PD_VAL_STR, .s = d} : pd_val_none();
        }
    }
    frame_free(&mf);
    frame_free(&barrier);
    return rc;
}

static int err_msg(runner *r, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int err_msg(runner *r, int line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->e->err, r->e->errlen, fmt, ap);
    va_end(ap);
    r->e->line = line;
    return -1;
}

/* Binds targets to item: one name takes it whole, several unpack it. */
static int bind_targets(runner *r, frame *f, const node *n, const pd_val *item)
{
    if (n->nnames == 1)
        return frame_set(f, n->names[0], pd_val_copy(item), NULL, NULL) ? err_msg(r, n->line, "out of memory") : 0;
    pd_val parts;
    char e[2];
    parser q = {.src = "", .err = e, .errlen = sizeof e};
    if (item->kind == PD_VAL_DICT || item->kind == PD_VAL_STR ||
        (item->kind == PD_VAL_LIST && item->view != PD_VIEW_NONE && item->view != PD_VIEW_TUPLE)) {
        if (iter_items(&q, item, &parts))
            return err_msg(r, n->line, "out of memory");
    } else if (item->kind == PD_VAL_LIST) {
        parts = pd_val_copy(item);
    } else {
        return err_msg(r, n->line, "cannot unpack %s into %d names", kind_name(item), n->nnames);
    }
    int rc = 0;
    if (parts.n != (size_t)n->nnames)
        rc = err_msg(r, n->line, "cannot unpack %zu values into %d names", parts.n, n->nnames);
    for (int i = 0; i < n->nnames && !rc; i++)
        if (frame_set(f, n->names[i], pd_val_copy(&parts.items[i]), NULL, NULL))
            rc = err_msg(r, n->line, "out of memory");
    pd_val_free(&parts);
    return rc;
}

static int loop_var(runner *r, frame *f, const pd_val *items, size_t i, int depth)
{
    parser q = {.src = ""};
    char e[64];
    q.err = e;
    q.errlen = sizeof e;
    pd_val loop = {.kind = PD_VAL_DICT, .view = PD_VIEW_ITER}; /* prints as <LoopContext> in Jinja2 */
    size_t len = items->n;
    struct {
        const char *k;
        pd_val v;
    } kv[] = {
        {"index", pd_val_int((long long)i + 1)},
        {"index0", pd_val_int((long long)i)},
        {"revindex", pd_val_int((long long)(len - i))},
        {"revindex0", pd_val_int((long long)(len - i - 1))},
        {"first", pd_val_bool(i == 0)},
        {"last", pd_val_bool(i + 1 == len)},
        {"length", pd_val_int((long long)len)},
        {"depth", pd_val_int(depth)},
        {"depth0", pd_val_int(depth - 1)},
    };
    int rc = 0;
    for (size_t k = 0; k < PD_ARRAY_LEN(kv) && !rc; k++)
        rc = dict_set(&q, &loop, pd_val_str(kv[k].k), kv[k].v);
    if (!rc && i > 0)
        rc = dict_set(&q, &loop, pd_val_str("previtem"), pd_val_copy(&items->items[i - 1]));
    if (!rc && i + 1 < len)
        rc = dict_set(&q, &loop, pd_val_str("nextitem"), pd_val_copy(&items->items[i + 1]));
    if (rc) {
        pd_val_free(&loop);
        return -1;
    }
    return frame_set(f, "loop", loop, NULL, NULL);
}

static int run_for(runner *r, frame *outer, const node *n, pd_str *out)
{
    pd_val seq, items;
    if (eval_at(r, outer, n->expr, n->line, &seq))
        return -1;
    frame barrier = {.parent = outer}, *f = &barrier;
    if (make_barrier(&barrier, outer, n)) {
        pd_val_free(&seq);
        frame_free(&barrier);
        return err_msg(r, n->line, "out of memory");
    }
    char e[256];
    parser q = {.src = n->expr, .err = e, .errlen = sizeof e};
    int rc = iter_items(&q, &seq, &items);
    pd_val_free(&seq);
    if (rc) {
        frame_free(&barrier);
        return err_msg(r, n->line, "{%% for %%}: %s", e);
    }
    if (n->cond) { /* the loop filter: loop.* counts the items it keeps */
        pd_val kept = empty_list();
        for (size_t i = 0; i < items.n && !rc; i++) {
            frame tf = {.parent = f};
            pd_val c = pd_val_none();
            rc = bind_targets(r, &tf, n, &items.items[i]);
            if (!rc)
                rc = eval_at(r, &tf, n->cond, n->line, &c);
            pd_val item = pd_val_none();
            if (!rc && pd_val_truthy(&c)) {
                /* Jinja2 filters through a generator of the targets: with
                 * several, loop.previtem / nextitem are tuples */
                item = pd_val_copy(&items.items[i]);
                if (n->nnames > 1 && item.kind == PD_VAL_LIST)
                    item.view = PD_VIEW_TUPLE;
                if (list_push(&q, &kept, item))
                    rc = err_msg(r, n->line, "%s", e);
            }
            pd_val_free(&c);
            frame_free(&tf);
        }
        pd_val_free(&items);
        items = kept;
    }
    int depth = 1; /* loop.depth counts recursive loops only, which are not supported */
    for (size_t i = 0; i < items.n && !rc; i++) {
        if (++r->iterations > MAX_LOOP_ITERATIONS) {
            rc = err_msg(r, n->line, "{%% for %%}: more than %d loop iterations in one template", MAX_LOOP_ITERATIONS);
            break;
        }
        frame lf = {.parent = f}; /* each iteration its own scope, as Jinja2 */
        rc = bind_targets(r, &lf, n, &items.items[i]);
        if (!rc && loop_var(r, &lf, &items, i, depth))
            rc = err_msg(r, n->line, "out of memory");
        if (!rc)
            rc = run_nodes(r, &lf, &n->body, out);
        frame_free(&lf);
    }
    if (!rc && !items.n) { /* the else block is a scope of its own too */
        frame ef = {.parent = f};
        rc = run_nodes(r, &ef, &n->orelse, out);
        frame_free(&ef);
    }
    pd_val_free(&items);
    frame_free(&barrier);
    return rc;
}

static int run_nodes(runner *r, frame *f, const node_list *l, pd_str *out)
{
    for (size_t k = 0; k < l->n; k++) {
        const node *n = &l->v[k];
        int rc = 0;
        pd_val v;
        switch (n->kind) {
        case N_TEXT: pd_str_append(out, n->text); break;
        case N_OUT: {
            if (eval_at(r, f, n->expr, n->line, &v))
                return -1;
            char e[256];
            parser q = {.src = n->expr, .err = e, .errlen = sizeof e};
            if (need_printable(&q, &v))
                rc = err_msg(r, n->line, "%s", e);
            else
                pd_val_append(out, &v);
            pd_val_free(&v);
            break;
        }
        case N_IF:
            if (eval_at(r, f, n->expr, n->line, &v))
                return -1;
            rc = run_nodes(r, f, pd_val_truthy(&v) ? &n->body : &n->orelse, out);
            pd_val_free(&v);
            break;
        case N_FOR: rc = run_for(r, f, n, out); break;
        case N_SET: {
            /* parenthesised, so that "a, b = 1, 2" sees a tuple */
            pd_str src = {0};
            pd_str_printf(&src, "(%s)", n->expr);
            if (!src.data)
                return err_msg(r, n->line, "out of memory");
            rc = eval_at(r, f, src.data, n->line, &v);
            pd_str_free(&src);
            if (!rc) {
                rc = bind_targets(r, f, n, &v);
                pd_val_free(&v);
            }
            break;
        }
        case N_SETBLOCK: {
            pd_str body = {0};
            pd_str_append(&body, "");
            frame barrier = {.parent = f}, bf = {.parent = &barrier};
            rc = make_barrier(&barrier, f, n) ? err_msg(r, n->line, "out of memory") : run_nodes(r, &bf, &n->body, &body);
            frame_free(&bf);
            frame_free(&barrier);
            char *d = rc ? NULL : pd_str_take(&body);
            pd_str_free(&body);
            if (!rc && (!d || frame_set(f, n->names[0], (pd_val){.kind = PD_VAL_STR, .s = d}, NULL, NULL)))
                rc = err_msg(r, n->line, "out of memory");
            break;
        }
        case N_MACRO:
            if (frame_set(f, n->name, pd_val_none(), n, f))
                rc = err_msg(r, n->line, "out of memory");
            break;
        }
        if (rc)
            return -1;
        if (out->oom || out->len > MAX_OUTPUT)
            return err_msg(r, n->line, out->oom ? "out of memory" : "the template renders more than %zu MiB",
                           MAX_OUTPUT >> 20);
    }
    return 0;
}

int pd_template_render(const char *tmpl, pd_lookup_fn lookup, void *ud, pd_str *out, char *err, size_t errlen,
                       int *err_line)
{
    int dummy;
    if (!err_line)
        err_line = &dummy;
    *err_line = 0;
    errinfo e = {err, errlen, 0};
    tok_list toks = {0};
    node_list root = {0};
    int rc = tokenize(tmpl, &toks, &e);
    if (!rc) {
        tparser tp = {.t = &toks, .e = &e};
        rc = parse_nodes(&tp, &root, NULL, NULL, NULL, NULL, NULL, 0);
        if (!rc)
            rc = mark_scope(&tp, &root, NULL);
    }
    if (!rc) {
        runner r = {.base = lookup, .base_ud = ud, .e = &e};
        frame top = {0};
        size_t start = out->len;
        pd_str_append(out, "");
        rc = run_nodes(&r, &top, &root, out);
        frame_free(&top);
        if (rc && out->data) { /* nothing of a failed render */
            out->len = start;
            out->data[start] = '\0';
        }
    }
    tok_free(&toks);
    nodes_free(&root);
    if (!rc && out->oom)
        rc = terr(&e, 0, "out of memory");
    *err_line = rc ? (e.line > 0 ? e.line : 0) : 0;
    return rc;
}
