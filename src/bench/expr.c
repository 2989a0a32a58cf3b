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
    if (v->kind == PD_VAL_LIST) {
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
    if (v->kind == PD_VAL_LIST && v->items) {
        for (size_t i = 0; i < v->n; i++)
            pd_val_free(&v->items[i]);
        free(v->items);
    }
    *v = pd_val_none();
}

bool pd_val_truthy(const pd_val *v)
{
    switch (v->kind) {
    case PD_VAL_BOOL: return v->b;
    case PD_VAL_INT: return v->i != 0;
    case PD_VAL_FLOAT: return v->f != 0.0;
    case PD_VAL_STR: return v->s[0] != '\0';
    case PD_VAL_LIST: return v->n > 0;
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
    case PD_VAL_LIST: /* Python's repr: [1, 'a'] */
        pd_str_append(out, "[");
        for (size_t i = 0; i < v->n; i++) {
            if (i)
                pd_str_append(out, ", ");
            if (v->items[i].kind == PD_VAL_STR)
                pd_str_printf(out, "'%s'", v->items[i].s);
            else
                pd_val_append(out, &v->items[i]);
        }
        pd_str_append(out, "]");
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
    default: pd_str_append(out, "null"); break;
    }
}

/* ---------------------------------------------------------------- lexer */

enum { T_END, T_INT, T_FLOAT, T_STR, T_NAME, T_OP };

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
    if (strchr("+-*/%~<>()|,.[]:", *s)) {
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
    case PD_VAL_LIST: return "list";
    default: return "undefined";
    }
}

static int binop_error(parser *p, const char *op, const pd_val *a, const pd_val *b)
{
    return fail(p, "unsupported operand types for %s: %s and %s (in \"%s\")", op, kind_name(a), kind_name(b), p->src);
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
    if (!strcmp(op, "+") && a->kind == PD_VAL_LIST && b->kind == PD_VAL_LIST) {
        pd_val r = {.kind = PD_VAL_LIST, .n = a->n + b->n};
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
    } else if (a->kind == PD_VAL_LIST && b->kind == PD_VAL_LIST) { /* lexicographic, as Python */
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

#define MAX_ARGS 8

static void free_args(pd_val *args, int n)
{
    for (int i = 0; i < n; i++)
        pd_val_free(&args[i]);
}

/* Parses "( a, b, ... )" when present; the current token is '(' or not. */
static int parse_args(parser *p, bool live, pd_val *args, int *nargs)
{
    *nargs = 0;
    if (!is_op(p, "("))
        return 0;
    if (lex(p))
        return -1;
    if (is_op(p, ")"))
        return lex(p);
    for (;;) {
        if (*nargs == MAX_ARGS)
            return fail(p, "too many arguments (in \"%s\")", p->src);
        args[*nargs] = pd_val_none();
        if (parse_expr(p, live, &args[*nargs])) {
            pd_val_free(&args[*nargs]);
            return -1;
        }
        (*nargs)++;
        if (is_op(p, ")"))
            return lex(p);
        if (!is_op(p, ","))
            return unexpected(p, "',' or ')'");
        if (lex(p))
            return -1;
    }
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
    if (obj->kind == PD_VAL_LIST && (!strcmp(name, "items") || !strcmp(name, "keys") || !strcmp(name, "values"))) {
        /* mappings are lists of [key, value] pairs */
        if (n)
            return fail(p, "%s() takes no arguments", name);
        *out = empty_list();
        for (size_t i = 0; i < obj->n; i++) {
            const pd_val *pr = &obj->items[i];
            if (pr->kind != PD_VAL_LIST || pr->n != 2)
                return fail(p, "%s(): not a mapping (item %zu is not a [key, value] pair)", name, i);
            if (list_push(p, out, pd_val_copy(name[0] == 'i' ? pr : &pr->items[name[0] == 'k' ? 0 : 1])))
                return -1;
        }
        return 0;
    }
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
    if (obj->kind != PD_VAL_LIST && obj->kind != PD_VAL_STR)
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
        if (n != 1 || (args[0].kind != PD_VAL_STR && args[0].kind != PD_VAL_LIST))
            return fail(p, "len() takes one string or list");
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
        return to_string(p, a, out);
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
    static const char *fns[] = {"min", "max", "abs", "round", "floor", "ceil", "int", "float", "str", "len", "range"};
    for (size_t i = 0; i < PD_ARRAY_LEN(fns); i++)
        if (!strcmp(fns[i], name))
            return true;
    return false;
}

static int apply_filter(parser *p, const char *name, pd_val *v, pd_val *args, int n, pd_val *out)
{
    if (!strcmp(name, "default") || !strcmp(name, "d")) {
        if (n < 1)
            return fail(p, "filter default needs a value, e.g. default(1)");
        bool use_default = v->kind == PD_VAL_UNDEF || (n >= 2 && pd_val_truthy(&args[1]) && !pd_val_truthy(v));
        *out = pd_val_copy(use_default ? &args[0] : v);
        return 0;
    }
    if (need_defined(p, v))
        return -1;
    for (int i = 0; i < n; i++)
        if (need_defined(p, &args[i]))
            return -1;
    if (!strcmp(name, "int"))
        return to_int(p, v, out, "filter int");
    if (!strcmp(name, "float"))
        return to_float(p, v, out, "filter float");
    if (!strcmp(name, "string"))
        return to_string(p, v, out);
    if (!strcmp(name, "round")) {
        pd_val f;
        if (to_float(p, v, &f, "filter round"))
            return -1;
        long long nd = 0;
        if (n >= 1) {
            if (!is_intlike(&args[0]))
                return fail(p, "filter round: precision must be an int");
            nd = as_int(&args[0]);
        }
        *out = pd_val_float(round_digits(f.f, nd));
        return 0;
    }
    if (!strcmp(name, "abs")) {
        if (!is_num(v))
            return fail(p, "filter abs: expected a number, got %s", kind_name(v));
        *out = is_intlike(v) ? pd_val_int(llabs(as_int(v))) : pd_val_float(fabs(v->f));
        return 0;
    }
    if (!strcmp(name, "length") || !strcmp(name, "count")) {
        if (v->kind == PD_VAL_LIST) {
            *out = pd_val_int((long long)v->n);
            return 0;
        }
    }
    if (!strcmp(name, "join")) {
        if (v->kind != PD_VAL_LIST)
            return fail(p, "filter join needs a list, got %s", kind_name(v));
        if (n > 1 || (n == 1 && args[0].kind != PD_VAL_STR))
            return fail(p, "filter join takes an optional separator string");
        pd_str r = {0};
        for (size_t i = 0; i < v->n; i++) {
            if (i && n)
                pd_str_append(&r, args[0].s);
            pd_val_append(&r, &v->items[i]);
        }
        return str_result(p, &r, out);
    }
    if (!strcmp(name, "first") || !strcmp(name, "last")) {
        if (v->kind == PD_VAL_LIST) {
            if (!v->n)
                return fail(p, "filter %s of an empty list", name);
            *out = pd_val_copy(&v->items[name[0] == 'f' ? 0 : v->n - 1]);
            return 0;
        }
        if (v->kind != PD_VAL_STR || !v->s[0])
            return fail(p, "filter %s needs a list or a non-empty string", name);
        char c[2] = {name[0] == 'f' ? v->s[0] : v->s[strlen(v->s) - 1], 0};
        *out = pd_val_str(c);
        return 0;
    }
    if (!strcmp(name, "list")) {
        if (v->kind == PD_VAL_LIST) {
            *out = pd_val_copy(v);
            return 0;
        }
        if (v->kind != PD_VAL_STR)
            return fail(p, "filter list needs a list or string, got %s", kind_name(v));
        *out = empty_list();
        for (const char *c = v->s; *c; c++) {
            char ch[2] = {*c, 0};
            if (list_push(p, out, pd_val_str(ch)))
                return -1;
        }
        return 0;
    }
    pd_val s;
    if (to_string(p, v, &s))
        return -1;
    if (!strcmp(name, "basename") || !strcmp(name, "dirname")) {
        const char *base = path_base(s.s);
        pd_str r = {0};
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
    if (!strcmp(name, "upper") || !strcmp(name, "lower")) {
        for (char *c = s.s; *c; c++)
            *c = (char)(name[0] == 'u' ? toupper((unsigned char)*c) : tolower((unsigned char)*c));
        *out = s;
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
    if (!strcmp(name, "trim")) {
        char *t = pd_trim(s.s);
        memmove(s.s, t, strlen(t) + 1);
        *out = s;
        return 0;
    }
    if (!strcmp(name, "length") || !strcmp(name, "count")) {
        *out = pd_val_int((long long)strlen(s.s));
        pd_val_free(&s);
        return 0;
    }
    if (!strcmp(name, "replace")) {
        if (n != 2 || args[0].kind != PD_VAL_STR || args[1].kind != PD_VAL_STR || !args[0].s[0]) {
            pd_val_free(&s);
            return fail(p, "filter replace needs two strings, e.g. replace('a', 'b')");
        }
        pd_str r = {0};
        pd_str_append(&r, "");
        const char *c = s.s;
        size_t ol = strlen(args[0].s);
        for (const char *hit; (hit = strstr(c, args[0].s)); c = hit + ol) {
            pd_str_appendn(&r, c, (size_t)(hit - c));
            pd_str_append(&r, args[1].s);
        }
        pd_str_append(&r, c);
        pd_val_free(&s);
        char *d = pd_str_take(&r);
        if (!d)
            return fail(p, "out of memory");
        *out = (pd_val){.kind = PD_VAL_STR, .s = d};
        return 0;
    }
    pd_val_free(&s);
    return fail(p,
                "unknown filter '%s' (known: int, float, round, string, default, upper, lower, abs, trim, length, "
                "count, replace, quote, basename, dirname, join, first, last, list)",
                name);
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
    if (p->type == T_STR) {
        *out = pd_val_str(p->text.data);
        return lex(p);
    }
    if (is_op(p, "(")) {
        if (lex(p) || parse_expr(p, live, out))
            return -1;
        return expect_op(p, ")");
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
            bool found = p->lookup(p->ud, name.data, &obj);
            if (!strcmp(method, "get")) { /* mapping.get(key[, default]) over dotted names */
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
        if (!is_function(name.data)) {
            fail(p, "'%s' is not a function (functions: min, max, abs, round, floor, ceil, int, float, str, len, range)",
                 name.data);
            goto fail;
        }
        pd_val args[MAX_ARGS];
        int n = 0;
        int rc = parse_args(p, live, args, &n);
        if (!rc && live)
            rc = call_function(p, name.data, args, n, out);
        free_args(args, n);
        if (rc)
            goto fail;
        pd_str_free(&name);
        return 0;
    }
    if (live && !p->lookup(p->ud, name.data, out))
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

static int parse_postfix(parser *p, bool live, pd_val *out)
{
    if (parse_primary(p, live, out))
        return -1;
    for (;;) {
        if (is_op(p, "[")) {
            if (parse_subscript(p, live, out))
                return -1;
        } else if (is_op(p, ".")) { /* .method(args) on a computed value */
            if (lex(p))
                return -1;
            if (p->type != T_NAME)
                return unexpected(p, "a method name after '.'");
            char method[32];
            snprintf(method, sizeof method, "%s", p->text.data);
            if (lex(p))
                return -1;
            if (!is_op(p, "("))
                return fail(p, "attribute '.%s' of a computed value is not supported (in \"%s\")", method, p->src);
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
        } else if (is_op(p, "|")) {
            if (lex(p))
                return -1;
            if (p->type != T_NAME)
                return unexpected(p, "a filter name after '|'");
            char fname[32];
            snprintf(fname, sizeof fname, "%s", p->text.data);
            if (lex(p))
                return -1;
            pd_val args[MAX_ARGS];
            int n = 0;
            if (parse_args(p, live, args, &n)) {
                free_args(args, n);
                return -1;
            }
            if (live) {
                pd_val r = pd_val_none();
                int rc = apply_filter(p, fname, out, args, n, &r);
                pd_val_free(out);
                *out = r;
                if (rc) {
                    free_args(args, n);
                    return -1;
                }
            }
            free_args(args, n);
        } else if (is_kw(p, "is")) {
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
            bool r;
            if (!strcmp(p->text.data, "defined"))
                r = out->kind != PD_VAL_UNDEF;
            else if (!strcmp(p->text.data, "undefined"))
                r = out->kind == PD_VAL_UNDEF;
            else if (!strcmp(p->text.data, "none"))
                r = out->kind == PD_VAL_NONE;
            else if (!strcmp(p->text.data, "number"))
                r = out->kind == PD_VAL_INT || out->kind == PD_VAL_FLOAT;
            else if (!strcmp(p->text.data, "string"))
                r = out->kind == PD_VAL_STR;
            else
                return fail(p, "unknown test '%s' (known: defined, undefined, none, number, string)", p->text.data);
            pd_val_free(out);
            *out = pd_val_bool(r != neg);
            if (lex(p))
                return -1;
        } else {
            return 0;
        }
    }
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

static int parse_power(parser *p, bool live, pd_val *out)
{
    if (parse_postfix(p, live, out))
        return -1;
    if (!is_op(p, "**"))
        return 0;
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
    return rc;
}

static int parse_unary_in(parser *p, bool live, pd_val *out)
{
    *out = pd_val_none();
    if (is_op(p, "-") || is_op(p, "+")) {
        bool neg = p->op[0] == '-';
        if (lex(p) || parse_unary(p, live, out))
            return -1;
        if (!live)
            return 0;
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
        return 0;
    }
    return parse_power(p, live, out);
}

DEPTH_GUARDED(parse_unary)

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
                if (!need_defined(p, out) && !need_defined(p, &rhs)) {
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
    return parse_binary(p, live, out, parse_unary, ops);
}

static int parse_add(parser *p, bool live, pd_val *out)
{
    static const char *const ops[] = {"+", "-", NULL};
    return parse_binary(p, live, out, parse_mul, ops);
}

static int parse_concat(parser *p, bool live, pd_val *out)
{
    static const char *const ops[] = {"~", NULL};
    return parse_binary(p, live, out, parse_add, ops);
}

static int parse_compare(parser *p, bool live, pd_val *out)
{
    static const char *const ops[] = {"==", "!=", "<", "<=", ">", ">="};
    if (parse_concat(p, live, out))
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
        if (lex(p) || parse_concat(p, live, &rhs)) {
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
            } else if (!strcmp(op, "==") || !strcmp(op, "!=")) {
                r = comparable && c == 0;
                if (op[0] == '!')
                    r = !r;
            } else {
                if (!comparable) {
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

static int parse_expr_in(parser *p, bool live, pd_val *out)
{
    if (parse_logic(p, live, out, false))
        return -1;
    if (!is_kw(p, "if"))
        return 0;
    pd_val cond = pd_val_none(), other = pd_val_none();
    int rc = -1;
    if (lex(p) || parse_logic(p, live, &cond, false))
        goto done;
    if (live && need_defined(p, &cond))
        goto done;
    bool take = live && pd_val_truthy(&cond);
    if (!is_kw(p, "else")) {
        unexpected(p, "'else'");
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

int pd_expr_eval(const char *src, pd_lookup_fn lookup, void *ud, pd_val *out, char *err, size_t errlen)
{
    parser p = {.src = src, .p = src, .lookup = lookup, .ud = ud, .err = err, .errlen = errlen};
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

/* -------------------------------------------------------------- templates */

bool pd_template_has_tags(const char *text) { return strstr(text, "{{") || strstr(text, "{%"); }

/* Finds the closing delimiter of a tag, skipping string literals. */
static const char *find_close(const char *s, const char *close)
{
    char q = 0;
    for (; *s; s++) {
        if (q) {
            if (*s == '\\' && s[1])
                s++;
            else if (*s == q)
                q = 0;
        } else if (*s == '"' || *s == '\'') {
            q = *s;
        } else if (!strncmp(s, close, 2)) {
            return s;
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

/* {% if %} nesting: a branch produces output when every level is active. */
#define MAX_IF_DEPTH 32
typedef struct {
    bool parent_active, taken, active, seen_else;
} if_level;

/* Evaluates a tag's expression. 0 with *out set, or -1 with err. */
static int eval_tag(const char *body, size_t n, pd_lookup_fn lookup, void *ud, pd_val *out, char *err, size_t errlen)
{
    char *src = malloc(n + 1);
    if (!src) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    memcpy(src, body, n);
    src[n] = '\0';
    char e[400];
    int rc = pd_expr_eval(pd_trim(src), lookup, ud, out, e, sizeof e);
    if (!rc && out->kind == PD_VAL_UNDEF) {
        snprintf(e, sizeof e, "unknown name '%s'", out->s);
        pd_val_free(out);
        rc = -1;
    }
    if (rc)
        snprintf(err, errlen, "%s", e);
    free(src);
    return rc;
}

/* Handles one {% statement %}: if / elif / else / endif. */
static int statement(const char *body, size_t n, if_level *stack, int *depth, pd_lookup_fn lookup, void *ud,
                     char *err, size_t errlen)
{
    while (n && isspace((unsigned char)*body))
        body++, n--;
    while (n && isspace((unsigned char)body[n - 1]))
        n--;
    size_t kw = 0;
    while (kw < n && (isalpha((unsigned char)body[kw]) || body[kw] == '_'))
        kw++;
    char word[16];
    snprintf(word, sizeof word, "%.*s", (int)(kw < 15 ? kw : 15), body);
    bool active = *depth == 0 || stack[*depth - 1].active;
    if (!strcmp(word, "if") || !strcmp(word, "elif")) {
        bool is_if = word[0] == 'i';
        if (is_if && *depth == MAX_IF_DEPTH) {
            snprintf(err, errlen, "{%% if %%} nested deeper than %d", MAX_IF_DEPTH);
            return -1;
        }
        if (!is_if && (*depth == 0 || stack[*depth - 1].seen_else)) {
            snprintf(err, errlen, "{%% elif %%} without {%% if %%}");
            return -1;
        }
        if (kw == n) {
            snprintf(err, errlen, "{%% %s %%} needs a condition", word);
            return -1;
        }
        if_level *lv = is_if ? &stack[(*depth)++] : &stack[*depth - 1];
        if (is_if)
            *lv = (if_level){.parent_active = active};
        bool eval = lv->parent_active && !lv->taken;
        lv->active = false;
        if (eval) {
            pd_val v;
            if (eval_tag(body + kw, n - kw, lookup, ud, &v, err, errlen))
                return -1;
            lv->active = pd_val_truthy(&v);
            lv->taken = lv->active;
            pd_val_free(&v);
        }
        return 0;
    }
    if (!strcmp(word, "else") || !strcmp(word, "endif")) {
        if (kw != n) {
            snprintf(err, errlen, "{%% %s %%} takes nothing after it", word);
            return -1;
        }
        if (*depth == 0) {
            snprintf(err, errlen, "{%% %s %%} without {%% if %%}", word);
            return -1;
        }
        if_level *lv = &stack[*depth - 1];
        if (word[1] == 'n') {
            (*depth)--;
            return 0;
        }
        if (lv->seen_else) {
            snprintf(err, errlen, "two {%% else %%} in one {%% if %%}");
            return -1;
        }
        lv->seen_else = true;
        lv->active = lv->parent_active && !lv->taken;
        lv->taken = true;
        return 0;
    }
    snprintf(err, errlen, "unsupported statement {%% %.*s %%} (supported: if, elif, else, endif, for, endfor)",
             (int)(kw ? kw : n),
             body);
    return -1;
}

/* Whitespace follows Jinja with trim_blocks and lstrip_blocks, as IOPS
 * configures it: a {% %} tag alone on its line leaves no blank line. */
/* {% for %}: the loop variables and loop.* on top of the caller's names. */
typedef struct {
    pd_lookup_fn base;
    void *base_ud;
    char names[2][64];
    const pd_val *vals[2];
    int nnames;
    size_t index, length;
} loop_scope;

static bool loop_lookup(void *ud, const char *name, pd_val *out)
{
    loop_scope *l = ud;
    for (int i = 0; i < l->nnames; i++)
        if (!strcmp(name, l->names[i])) {
            *out = pd_val_copy(l->vals[i]);
            return true;
        }
    if (!strncmp(name, "loop.", 5)) {
        const char *a = name + 5;
        if (!strcmp(a, "index"))
            *out = pd_val_int((long long)l->index + 1);
        else if (!strcmp(a, "index0"))
            *out = pd_val_int((long long)l->index);
        else if (!strcmp(a, "revindex"))
            *out = pd_val_int((long long)(l->length - l->index));
        else if (!strcmp(a, "revindex0"))
            *out = pd_val_int((long long)(l->length - l->index - 1));
        else if (!strcmp(a, "first"))
            *out = pd_val_bool(l->index == 0);
        else if (!strcmp(a, "last"))
            *out = pd_val_bool(l->index + 1 == l->length);
        else if (!strcmp(a, "length"))
            *out = pd_val_int((long long)l->length);
        else
            return false;
        return true;
    }
    return l->base(l->base_ud, name, out);
}

/* The keyword of a {% %} tag body (e.g. "for"), in word. */
static void tag_word(const char *body, const char *end, char *word, size_t len)
{
    if (body < end && (*body == '-' || *body == '+'))
        body++;
    while (body < end && isspace((unsigned char)*body))
        body++;
    size_t n = 0;
    while (body + n < end && (isalpha((unsigned char)body[n]) || body[n] == '_'))
        n++;
    snprintf(word, len, "%.*s", (int)(n < len - 1 ? n : len - 1), body);
}

/* Finds the {% endfor %} matching a {% for %} whose body starts at from:
 * *ef_open points at its '{', *ef_close at its '%}'. */
static int find_endfor(const char *from, const char **ef_open, const char **ef_close)
{
    int depth = 0;
    for (const char *c = from; (c = strchr(c, '{'));) {
        if (c[1] != '{' && c[1] != '%' && c[1] != '#') {
            c++;
            continue;
        }
        const char *close = c[1] == '#' ? strstr(c + 2, "#}") : find_close(c + 2, c[1] == '{' ? "}}" : "%}");
        if (!close)
            return -1;
        if (c[1] == '%') {
            char w[16];
            tag_word(c + 2, close, w, sizeof w);
            if (!strcmp(w, "for"))
                depth++;
            else if (!strcmp(w, "endfor") && depth-- == 0) {
                *ef_open = c;
                *ef_close = close;
                return 0;
            }
        }
        c = close + 2;
    }
    return -1;
}

#define MAX_FOR_DEPTH 16

/* What one render may take, all loops together: iterations (a guard
 * against nested range()s that would never finish) and template text
 * rendered by them, the loop bodies' bytes once per iteration (nested
 * loops over short lists stay under the iteration bound while their bodies
 * multiply: 15 nested loops over 3 items in 3 KB ran for minutes, found by
 * make fuzz). 16 MiB is far beyond any job script. */
#define MAX_LOOP_ITERATIONS 1000000
#define MAX_LOOP_TEXT ((size_t)16 << 20)

typedef struct {
    size_t iterations;
    size_t text; /* loop-body bytes rendered so far */
} render_budget;

static int render_impl(const char *tmpl, bool at_line_start, int for_depth, render_budget *budget, pd_lookup_fn lookup,
                       void *ud, pd_str *out, char *err, size_t errlen, int *err_line);

/* Parses "x in expr" / "a, b in expr": names into ls, the expression's
 * start into *expr. */
static int for_header(const char *h, size_t n, loop_scope *ls, const char **expr, size_t *expr_len, char *err,
                      size_t errlen)
{
    const char *c = h, *end = h + n;
    ls->nnames = 0;
    for (;;) {
        while (c < end && isspace((unsigned char)*c))
            c++;
        const char *b = c;
        while (c < end && (isalnum((unsigned char)*c) || *c == '_'))
            c++;
        if (c == b || isdigit((unsigned char)*b) || c - b >= 64 || ls->nnames == 2) {
            snprintf(err, errlen, "{%% for %%} needs 'NAME in LIST' or 'A, B in LIST', found '%.*s'", (int)n, h);
            return -1;
        }
        snprintf(ls->names[ls->nnames++], sizeof ls->names[0], "%.*s", (int)(c - b), b);
        while (c < end && isspace((unsigned char)*c))
            c++;
        if (c < end && *c == ',') {
            c++;
            continue;
        }
        break;
    }
    if (end - c < 3 || strncmp(c, "in", 2) || !isspace((unsigned char)c[2])) {
        snprintf(err, errlen, "{%% for %%} needs 'NAME in LIST', found '%.*s'", (int)n, h);
        return -1;
    }
    *expr = c + 2;
    *expr_len = (size_t)(end - *expr);
    return 0;
}

/* Renders {% for %} ... {% endfor %}. tag_* delimit the for tag's body
 * (without the -/+ markers); *next is set past the {% endfor %} tag. */
static int render_for(const char *tmpl, const char *tag_body, const char *tag_end, const char *tag_close,
                      bool trim_after, bool plus_after, bool active, int for_depth, render_budget *budget,
                      pd_lookup_fn lookup, void *ud, pd_str *out, char *err, size_t errlen, int *err_line,
                      const char **next, bool *trim_next, bool *eat_newline)
{
    const char *ef_open, *ef_close;
    if (find_endfor(tag_close + 2, &ef_open, &ef_close)) {
        snprintf(err, errlen, "{%% for %%} without {%% endfor %%}");
        return -1;
    }
    *next = ef_close + 2;
    *trim_next = ef_close[-1] == '-';
    *eat_newline = !*trim_next && ef_close[-1] != '+'; /* trim_blocks */
    if (!active)
        return 0;
    if (for_depth >= MAX_FOR_DEPTH) {
        snprintf(err, errlen, "{%% for %%} nested deeper than %d", MAX_FOR_DEPTH);
        return -1;
    }
    /* the loop body, with the whitespace Jinja strips around the tags */
    const char *b = tag_close + 2, *e = ef_open;
    if (trim_after)
        while (b < e && isspace((unsigned char)*b))
            b++;
    else if (!plus_after && b < e && *b == '\n')
        b++;
    bool body_at_line_start = b[-1] == '\n';
    if (ef_open[2] == '-') {
        while (e > b && isspace((unsigned char)e[-1]))
            e--;
    } else if (ef_open[2] != '+') {
        const char *t = e;
        while (t > b && (t[-1] == ' ' || t[-1] == '\t'))
            t--;
        if ((t == b && body_at_line_start) || (t > b && t[-1] == '\n'))
            e = t;
    }
    loop_scope ls = {.base = lookup, .base_ud = ud};
    const char *h = tag_body;
    while (h < tag_end && isspace((unsigned char)*h))
        h++;
    h += 3; /* "for" */
    const char *expr;
    size_t expr_len;
    if (for_header(h, (size_t)(tag_end - h), &ls, &expr, &expr_len, err, errlen))
        return -1;
    pd_val seq;
    if (eval_tag(expr, expr_len, lookup, ud, &seq, err, errlen))
        return -1;
    if (seq.kind == PD_VAL_STR) { /* iterating a string yields its characters */
        pd_val chars = {.kind = PD_VAL_LIST};
        size_t len = strlen(seq.s);
        chars.items = calloc(len ? len : 1, sizeof *chars.items);
        for (size_t i = 0; chars.items && i < len; i++) {
            char ch[2] = {seq.s[i], 0};
            chars.items[chars.n++] = pd_val_str(ch);
        }
        pd_val_free(&seq);
        seq = chars;
    }
    while (expr_len && isspace((unsigned char)*expr))
        expr++, expr_len--;
    while (expr_len && isspace((unsigned char)expr[expr_len - 1]))
        expr_len--;
    if (seq.kind != PD_VAL_LIST) {
        snprintf(err, errlen, "{%% for %%}: %.*s is not a list", (int)expr_len, expr);
        pd_val_free(&seq);
        return -1;
    }
    char *body = malloc((size_t)(e - b) + 1);
    if (!body) {
        pd_val_free(&seq);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    memcpy(body, b, (size_t)(e - b));
    body[e - b] = '\0';
    int rc = 0;
    ls.length = seq.n;
    for (size_t i = 0; i < seq.n && rc == 0; i++) {
        if (++budget->iterations > MAX_LOOP_ITERATIONS) {
            snprintf(err, errlen, "{%% for %%}: more than %d loop iterations in one template", MAX_LOOP_ITERATIONS);
            rc = -1;
            break;
        }
        budget->text += (size_t)(e - b);
        if (budget->text > MAX_LOOP_TEXT) {
            snprintf(err, errlen, "{%% for %%}: the loops render more than %zu MiB of template text", MAX_LOOP_TEXT >> 20);
            rc = -1;
            break;
        }
        ls.index = i;
        const pd_val *item = &seq.items[i];
        if (ls.nnames == 2) {
            if (item->kind != PD_VAL_LIST || item->n != 2) {
                snprintf(err, errlen, "{%% for %s, %s %%}: item %zu is not a pair", ls.names[0], ls.names[1], i);
                rc = -1;
                break;
            }
            ls.vals[0] = &item->items[0];
            ls.vals[1] = &item->items[1];
        } else {
            ls.vals[0] = item;
        }
        int line;
        rc = render_impl(body, body_at_line_start, for_depth + 1, budget, loop_lookup, &ls, out, err, errlen,
                         &line);
        if (rc)
            *err_line = line_of(tmpl, b) + (line > 1 ? line - 1 : 0);
    }
    free(body);
    pd_val_free(&seq);
    return rc;
}

int pd_template_render(const char *tmpl, pd_lookup_fn lookup, void *ud, pd_str *out, char *err,
                       size_t errlen, int *err_line)
{
    render_budget budget = {0, 0};
    return render_impl(tmpl, true, 0, &budget, lookup, ud, out, err, errlen, err_line);
}

static int render_impl(const char *tmpl, bool at_line_start, int for_depth, render_budget *budget, pd_lookup_fn lookup,
                       void *ud, pd_str *out, char *err, size_t errlen, int *err_line)
{
    const char *s = tmpl;
    bool trim_next = false, eat_newline = false;
    if_level stack[MAX_IF_DEPTH];
    int depth = 0, dummy, if_lines[MAX_IF_DEPTH];
    if (!err_line)
        err_line = &dummy;
    *err_line = 0;
    while (*s) {
        const char *open = strchr(s, '{');
        while (open && open[1] != '{' && open[1] != '%' && open[1] != '#')
            open = strchr(open + 1, '{');
        const char *text_end = open ? open : s + strlen(s);
        const char *text = s;
        if (trim_next)
            while (text < text_end && isspace((unsigned char)*text))
                text++;
        else if (eat_newline && text < text_end && *text == '\n')
            text++;
        trim_next = eat_newline = false;
        const char *te = text_end;
        if (open && open[2] == '-') {
            while (te > text && isspace((unsigned char)te[-1]))
                te--;
        } else if (open && open[1] == '%' && open[2] != '+') { /* lstrip_blocks */
            const char *b = te;
            while (b > text && (b[-1] == ' ' || b[-1] == '\t'))
                b--;
            if ((b == tmpl && at_line_start) || (b > tmpl && b[-1] == '\n'))
                te = b;
        }
        bool active = depth == 0 || stack[depth - 1].active;
        if (active)
            pd_str_appendn(out, text, (size_t)(te - text));
        if (!open)
            break;
        *err_line = line_of(tmpl, open);
        char kind = open[1];
        const char *close_tok = kind == '{' ? "}}" : kind == '%' ? "%}" : "#}";
        const char *body = open + 2;
        const char *close = kind == '#' ? strstr(body, "#}") : find_close(body, close_tok);
        if (!close) {
            snprintf(err, errlen, "unclosed '%c%c' (no matching '%s')", '{', kind, close_tok);
            return -1;
        }
        if (*body == '-' || (kind == '%' && *body == '+'))
            body++;
        const char *body_end = close;
        bool plus_end = false;
        if (body_end > body && (body_end[-1] == '-' || (kind == '%' && body_end[-1] == '+'))) {
            trim_next = body_end[-1] == '-';
            plus_end = body_end[-1] == '+';
            body_end--;
        }
        char word[16] = "";
        if (kind == '%')
            tag_word(body, body_end, word, sizeof word);
        if (!strcmp(word, "for")) {
            const char *next; /* errors in the loop body set *err_line to their own line */
            if (render_for(tmpl, body, body_end, close, trim_next, plus_end, active, for_depth, budget, lookup, ud,
                           out, err, errlen, err_line, &next, &trim_next, &eat_newline))
                return -1;
            s = next;
            continue;
        }
        if (!strcmp(word, "endfor")) {
            snprintf(err, errlen, "{%% endfor %%} without {%% for %%}");
            return -1;
        }
        if (kind == '%') {
            int before = depth;
            if (statement(body, (size_t)(body_end - body), stack, &depth, lookup, ud, err, errlen))
                return -1;
            if (depth > before)
                if_lines[depth - 1] = *err_line;
            eat_newline = !trim_next && !plus_end; /* trim_blocks */
        } else if (kind == '{' && active) {
            pd_val v;
            if (eval_tag(body, (size_t)(body_end - body), lookup, ud, &v, err, errlen))
                return -1;
            pd_val_append(out, &v);
            pd_val_free(&v);
        }
        s = close + 2;
    }
    if (depth > 0) {
        *err_line = if_lines[depth - 1];
        snprintf(err, errlen, "{%% if %%} without {%% endif %%}");
        return -1;
    }
    *err_line = 0;
    pd_str_append(out, "");
    if (out->oom) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    return 0;
}
