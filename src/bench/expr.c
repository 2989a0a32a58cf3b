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
    return c;
}

void pd_val_free(pd_val *v)
{
    free(v->s);
    *v = pd_val_none();
}

bool pd_val_truthy(const pd_val *v)
{
    switch (v->kind) {
    case PD_VAL_BOOL: return v->b;
    case PD_VAL_INT: return v->i != 0;
    case PD_VAL_FLOAT: return v->f != 0.0;
    case PD_VAL_STR: return v->s[0] != '\0';
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
    if (strchr("+-*/%~<>()|,.", *s)) {
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
                long long acc = 1;
                for (long long k = 0; k < y; k++)
                    if (__builtin_mul_overflow(acc, x, &acc))
                        return fail(p, "integer overflow (in \"%s\")", p->src);
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

static int call_function(parser *p, const char *name, pd_val *args, int n, pd_val *out)
{
    for (int i = 0; i < n; i++)
        if (need_defined(p, &args[i]))
            return -1;
    if (!strcmp(name, "min") || !strcmp(name, "max")) {
        if (n < 1)
            return fail(p, "%s() needs at least one argument", name);
        int best = 0;
        for (int i = 1; i < n; i++) {
            int c;
            bool ok;
            compare(&args[i], &args[best], &c, &ok);
            if (!ok)
                return fail(p, "%s(): cannot compare %s and %s", name, kind_name(&args[i]), kind_name(&args[best]));
            if (name[1] == 'i' ? c < 0 : c > 0)
                best = i;
        }
        *out = pd_val_copy(&args[best]);
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
    static const char *fns[] = {"min", "max", "abs", "round", "floor", "ceil", "int", "float", "str"};
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
    pd_val s;
    if (to_string(p, v, &s))
        return -1;
    if (!strcmp(name, "upper") || !strcmp(name, "lower")) {
        for (char *c = s.s; *c; c++)
            *c = (char)(name[0] == 'u' ? toupper((unsigned char)*c) : tolower((unsigned char)*c));
        *out = s;
        return 0;
    }
    if (!strcmp(name, "trim")) {
        char *t = pd_trim(s.s);
        memmove(s.s, t, strlen(t) + 1);
        *out = s;
        return 0;
    }
    if (!strcmp(name, "length")) {
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
    return fail(p, "unknown filter '%s' (known: int, float, round, string, default, upper, lower, abs, trim, length, replace)",
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
    if (is_op(p, "(")) {
        if (!is_function(name.data)) {
            fail(p, "'%s' is not a function (functions: min, max, abs, round, floor, ceil, int, float, str)", name.data);
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

static int parse_postfix(parser *p, bool live, pd_val *out)
{
    if (parse_primary(p, live, out))
        return -1;
    for (;;) {
        if (is_op(p, "|")) {
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

static int parse_unary(parser *p, bool live, pd_val *out)
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
            bool r;
            if (!strcmp(op, "==") || !strcmp(op, "!=")) {
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

static int parse_not(parser *p, bool live, pd_val *out)
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

static int parse_expr(parser *p, bool live, pd_val *out)
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
    snprintf(err, errlen, "unsupported statement {%% %.*s %%} (supported: if, elif, else, endif)", (int)(kw ? kw : n),
             body);
    return -1;
}

/* Whitespace follows Jinja with trim_blocks and lstrip_blocks, as IOPS
 * configures it: a {% %} tag alone on its line leaves no blank line. */
int pd_template_render(const char *tmpl, pd_lookup_fn lookup, void *ud, pd_str *out, char *err,
                       size_t errlen, int *err_line)
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
            if (b == tmpl || b[-1] == '\n')
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
