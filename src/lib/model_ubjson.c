/* UBJSON (ubjson.org, draft 12) to a jansson document, for xgboost's binary
 * model format (`pd_model_save` to a non-.json path). xgboost writes
 * objects with length-prefixed keys, optimized typed arrays
 * ([$d#L n, [$l#L n, [$U#L n, ...), counted arrays ([#L n), numbers as
 * int8..int64 / float32 and strings as S + length. Every length is checked
 * against the bytes left and nesting is bounded, so a corrupt file gives an
 * error, never an overread. */
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/model_internal.h"

#define UBJ_MAX_DEPTH 64

typedef struct {
    const unsigned char *base, *p, *end;
    char *err;
    size_t errlen;
    int failed;
} ubj_reader;

static void *ubj_fail(ubj_reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void *ubj_fail(ubj_reader *r, const char *fmt, ...)
{
    if (!r->failed) {
        char msg[200];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        snprintf(r->err, r->errlen, "UBJSON: %s at byte %zu", msg, (size_t)(r->p - r->base));
        r->failed = 1;
    }
    return NULL;
}

static size_t left(const ubj_reader *r)
{
    return (size_t)(r->end - r->p);
}

static int take(ubj_reader *r, void *dst, size_t n)
{
    if (left(r) < n) {
        ubj_fail(r, "truncated");
        return 0;
    }
    memcpy(dst, r->p, n);
    r->p += n;
    return 1;
}

static int byte(ubj_reader *r, unsigned char *c)
{
    return take(r, c, 1);
}

/* Big-endian integer of the given marker's width. */
static int read_int(ubj_reader *r, unsigned char marker, int64_t *out)
{
    unsigned char b[8];
    size_t w = marker == 'i' || marker == 'U' ? 1 : marker == 'I' ? 2 : marker == 'l' ? 4 : marker == 'L' ? 8 : 0;
    if (!w) {
        ubj_fail(r, "want an integer marker, got 0x%02x", marker);
        return 0;
    }
    if (!take(r, b, w))
        return 0;
    uint64_t u = 0;
    for (size_t k = 0; k < w; k++)
        u = u << 8 | b[k];
    if (marker == 'U')
        *out = (int64_t)u;
    else if (w < 8) { /* sign-extend */
        uint64_t sign = 1ULL << (8 * w - 1);
        *out = (int64_t)((u ^ sign) - sign);
    } else
        *out = (int64_t)u;
    return 1;
}

/* A length or count: an integer marker and value, non-negative, and at most
 * what the bytes left after it can hold at `unit` bytes per item. */
static int read_length(ubj_reader *r, size_t unit, size_t *out)
{
    unsigned char m;
    int64_t v;
    if (!byte(r, &m) || !read_int(r, m, &v))
        return 0;
    size_t max = left(r) / (unit ? unit : 1);
    if (v < 0 || (uint64_t)v > max) {
        ubj_fail(r, "length %lld exceeds the %zu bytes left", (long long)v, left(r));
        return 0;
    }
    *out = (size_t)v;
    return 1;
}

static size_t fixed_size(unsigned char type)
{
    switch (type) {
    case 'i': case 'U': case 'C': return 1;
    case 'I': return 2;
    case 'l': case 'd': return 4;
    case 'L': case 'D': return 8;
    case 'Z': case 'T': case 'F': return 0;
    default: return 1; /* containers and strings: at least their marker */
    }
}

static json_t *read_value(ubj_reader *r, unsigned char marker, int depth);

static json_t *read_string(ubj_reader *r, size_t *len_out)
{
    size_t n;
    if (!read_length(r, 1, &n))
        return NULL;
    json_t *s = json_stringn((const char *)r->p, n);
    if (!s)
        return ubj_fail(r, "string is not valid UTF-8");
    r->p += n;
    if (len_out)
        *len_out = n;
    return s;
}

/* After '[' or '{': the optional $type and #count of an optimized
 * container. count = SIZE_MAX when not counted. */
static int container_header(ubj_reader *r, unsigned char *type, size_t *count)
{
    *type = 0;
    *count = SIZE_MAX;
    if (left(r) > 0 && *r->p == '$') {
        r->p++;
        if (!byte(r, type))
            return 0;
        if (left(r) == 0 || *r->p != '#') {
            ubj_fail(r, "typed container without a count");
            return 0;
        }
    }
    if (left(r) > 0 && *r->p == '#') {
        r->p++;
        /* null/true/false items take no bytes: bounded like 1-byte ones */
        if (!read_length(r, *type ? fixed_size(*type) : 1, count))
            return 0;
    }
    return 1;
}

static json_t *read_array(ubj_reader *r, int depth)
{
    unsigned char type;
    size_t count;
    if (!container_header(r, &type, &count))
        return NULL;
    json_t *a = json_array();
    if (!a)
        return ubj_fail(r, "out of memory");
    for (size_t k = 0;; k++) {
        unsigned char m;
        if (count != SIZE_MAX) {
            if (k == count)
                break;
            m = type;
            if (!m && !byte(r, &m))
                goto bad;
        } else {
            if (!byte(r, &m))
                goto bad;
            if (m == ']')
                break;
        }
        json_t *v = read_value(r, m, depth + 1);
        if (!v || json_array_append_new(a, v) != 0)
            goto bad;
    }
    return a;
bad:
    json_decref(a);
    return ubj_fail(r, "bad array");
}

static json_t *read_object(ubj_reader *r, int depth)
{
    unsigned char type;
    size_t count;
    if (!container_header(r, &type, &count))
        return NULL;
    json_t *o = json_object();
    if (!o)
        return ubj_fail(r, "out of memory");
    for (size_t k = 0;; k++) {
        if (count != SIZE_MAX ? k == count : (left(r) > 0 && *r->p == '}')) {
            if (count == SIZE_MAX)
                r->p++;
            break;
        }
        size_t n;
        if (!read_length(r, 1, &n))
            goto bad;
        char *key = malloc(n + 1);
        if (!key)
            goto bad;
        memcpy(key, r->p, n);
        key[n] = '\0';
        r->p += n;
        unsigned char m = type;
        json_t *v = NULL;
        if (strlen(key) != n)
            ubj_fail(r, "key with a NUL byte");
        else if (m || byte(r, &m))
            v = read_value(r, m, depth + 1);
        int ok = v && json_object_set_new(o, key, v) == 0;
        free(key);
        if (!ok)
            goto bad;
    }
    return o;
bad:
    json_decref(o);
    return ubj_fail(r, "bad object");
}

static json_t *read_value(ubj_reader *r, unsigned char marker, int depth)
{
    if (depth > UBJ_MAX_DEPTH)
        return ubj_fail(r, "nested deeper than %d", UBJ_MAX_DEPTH);
    int64_t iv;
    unsigned char b[8];
    switch (marker) {
    case 'Z': return json_null();
    case 'T': return json_true();
    case 'F': return json_false();
    case 'i': case 'U': case 'I': case 'l': case 'L':
        return read_int(r, marker, &iv) ? json_integer((json_int_t)iv) : NULL;
    case 'd': {
        if (!take(r, b, 4))
            return NULL;
        uint32_t u = (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
        float f;
        memcpy(&f, &u, sizeof f);
        return isfinite(f) ? json_real(f) : ubj_fail(r, "non-finite number");
    }
    case 'D': {
        if (!take(r, b, 8))
            return NULL;
        uint64_t u = 0;
        for (int k = 0; k < 8; k++)
            u = u << 8 | b[k];
        double d;
        memcpy(&d, &u, sizeof d);
        return isfinite(d) ? json_real(d) : ubj_fail(r, "non-finite number");
    }
    case 'C':
        if (!take(r, b, 1))
            return NULL;
        return json_stringn((const char *)b, 1);
    case 'S': return read_string(r, NULL);
    case '[': return read_array(r, depth);
    case '{': return read_object(r, depth);
    default: return ubj_fail(r, "unsupported marker 0x%02x", marker);
    }
}

json_t *pd_ubjson_decode(const void *buf, size_t len, char *err, size_t errlen)
{
    ubj_reader r = {.base = buf, .p = buf, .end = (const unsigned char *)buf + len, .err = err, .errlen = errlen};
    unsigned char m;
    if (!buf || !byte(&r, &m))
        return ubj_fail(&r, "empty");
    json_t *v = read_value(&r, m, 0);
    if (v && left(&r) > 0) {
        json_decref(v);
        return ubj_fail(&r, "trailing bytes");
    }
    if (!v)
        ubj_fail(&r, "malformed"); /* keeps the first message */
    return v;
}
