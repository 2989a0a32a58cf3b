/* Access estimation for new inputs (Eq. 1, see docs/model.md#estimation).
 *
 * alpha is the number of memory-level accesses (64 B cache-line transfers)
 * per program-level element access, by access pattern:
 *   stream/stride: from element size, stride and the line size. The bytes
 *     between two consecutive accesses (span = elem * stride) are rounded up
 *     to a size that divides the line (1, 2, 4, ..., 64) as the design says;
 *     span < 64: consecutive accesses share a line, alpha = span / 64;
 *     span >= 64: every access needs its own line(s), alpha = lines per
 *     element (elements rounded up to a divisible size / whole lines).
 *     Tabulated once for power-of-two element sizes 1..64 and strides 1..64.
 *   stencil (input-independent): the offline micro-benchmark table
 *     (models/stencil_alpha.csv, `paddiser model calibrate-stencil`), by
 *     element size; built-in values when no table is found.
 *   random/unknown and input-dependent stencils: start at 1 and are refined
 *     every instance by pd_alpha_refine. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/csv.h"
#include "common/datadir.h"
#include "common/util.h"
#include "lib/estimate.h"


/* ---- stream / stride ---------------------------------------------------- */

/* Smallest size >= n that divides the line, or n rounded up to whole lines. */
static size_t round_divisible(size_t n)
{
    if (n >= PD_CACHE_LINE)
        return (n + PD_CACHE_LINE - 1) / PD_CACHE_LINE * PD_CACHE_LINE;
    size_t d = 1;
    while (d < n)
        d <<= 1;
    return d;
}

static double alpha_formula(size_t elem, size_t stride)
{
    size_t e = round_divisible(elem);
    /* span in bytes, saturating: any stride past a line behaves the same */
    size_t span = stride >= (size_t)PD_CACHE_LINE || elem >= PD_CACHE_LINE ? (size_t)PD_CACHE_LINE
                                                                         : elem * stride;
    if (span < PD_CACHE_LINE)
        return (double)round_divisible(span) / PD_CACHE_LINE;
    return (double)((e + PD_CACHE_LINE - 1) / PD_CACHE_LINE);
}

#define ALPHA_TAB_ELEMS 7   /* 1, 2, 4, ..., 64 bytes */
#define ALPHA_TAB_STRIDES 64
static double alpha_tab[ALPHA_TAB_ELEMS][ALPHA_TAB_STRIDES + 1];
static pthread_once_t alpha_tab_once = PTHREAD_ONCE_INIT;

static void alpha_tab_build(void)
{
    for (int e = 0; e < ALPHA_TAB_ELEMS; e++)
        for (int s = 1; s <= ALPHA_TAB_STRIDES; s++)
            alpha_tab[e][s] = alpha_formula((size_t)1 << e, (size_t)s);
}

double pd_alpha_stream_stride(size_t elem_size, size_t stride)
{
    if (elem_size == 0)
        elem_size = 8;
    if (stride == 0)
        stride = 1;
    pthread_once(&alpha_tab_once, alpha_tab_build);
    if (stride <= ALPHA_TAB_STRIDES && elem_size <= PD_CACHE_LINE &&
        (elem_size & (elem_size - 1)) == 0) {
        int e = __builtin_ctzl(elem_size);
        return alpha_tab[e][stride];
    }
    return alpha_formula(elem_size, stride);
}

/* ---- stencil table ------------------------------------------------------ */

/* Built-in copy of the shipped table models/stencil_alpha.csv (cache-sim;
 * docs/model.md), so a program that is not installed computes what an
 * installed one does; tests/test_estimate_stencil.c keeps the two equal.
 * About elem / 64 / 5: a 5-point 2-D stencil whose three live rows stay in
 * the last-level cache loads each line once for 5 element accesses. A
 * table in the data directory or $PADDISER_STENCIL_TABLE replaces it. */
static const double stencil_builtin[ALPHA_TAB_ELEMS] = {
    0.00314999, 0.00630075, 0.0126046, 0.0252215, 0.0504923, 0.101183, 0.20315,
};
static double stencil_tab[ALPHA_TAB_ELEMS];
static char stencil_source[4096] = "built-in";
static pthread_once_t stencil_once = PTHREAD_ONCE_INIT;

#define STENCIL_ALPHA_MAX 2.0

int pd_stencil_table_parse(const char *path, double out[7], char *err, size_t errlen)
{
    pd_csv *csv = pd_csv_load(path, err, errlen);
    if (!csv)
        return PD_EIO;
    int ce = pd_csv_col(csv, "elem_size"), ca = pd_csv_col(csv, "alpha");
    if (ce < 0 || ca < 0) {
        snprintf(err, errlen, "%s: needs columns elem_size,alpha", path);
        pd_csv_free(csv);
        return PD_EINVAL;
    }
    int seen = 0;
    for (size_t r = 0; r < csv->nrows; r++) {
        long e;
        double a;
        const char *fe = pd_csv_get(csv, r, ce), *fa = pd_csv_get(csv, r, ca);
        if (!fe || !fa || !pd_parse_long(fe, &e) || !pd_parse_double(fa, &a) || e < 1 ||
            e > PD_CACHE_LINE || (e & (e - 1)) || !(a > 0) || !(a <= STENCIL_ALPHA_MAX)) {
            /* alpha is cache lines loaded per element access: an element of
             * at most 64 bytes spans two lines at most. Far larger values
             * could overflow the alpha of elements past 64 bytes, which is
             * the 64-byte value times their lines. */
            snprintf(err, errlen, "%s: row %zu: want elem_size a power of two in 1..64 and 0 < alpha <= %g "
                     "(cache lines per element access)", path, r + 2, STENCIL_ALPHA_MAX);
            pd_csv_free(csv);
            return PD_EINVAL;
        }
        out[__builtin_ctzl((unsigned long)e)] = a;
        seen |= 1 << __builtin_ctzl((unsigned long)e);
    }
    pd_csv_free(csv);
    if (seen != (1 << ALPHA_TAB_ELEMS) - 1) {
        snprintf(err, errlen, "%s: needs one row for each elem_size 1,2,4,...,64", path);
        return PD_EINVAL;
    }
    return PD_OK;
}

static void stencil_load(void)
{
    memcpy(stencil_tab, stencil_builtin, sizeof stencil_tab);
    const char *env = getenv("PADDISER_STENCIL_TABLE");
    char shipped[4096];
    const char *paths[] = {env, pd_datadir_file("stencil_alpha.csv", shipped, sizeof shipped) == 0 ? shipped : NULL};
    for (size_t i = 0; i < PD_ARRAY_LEN(paths); i++) {
        char err[256];
        double tab[ALPHA_TAB_ELEMS];
        if (!paths[i] || !*paths[i])
            continue;
        if (pd_stencil_table_parse(paths[i], tab, err, sizeof err) == PD_OK) {
            memcpy(stencil_tab, tab, sizeof tab);
            snprintf(stencil_source, sizeof stencil_source, "%s", paths[i]);
            return;
        }
        if (i == 0) /* an explicit table that does not load deserves a word */
            fprintf(stderr, "paddiser: stencil table ignored: %s\n", err);
    }
}

double pd_alpha_stencil(size_t elem_size)
{
    pthread_once(&stencil_once, stencil_load);
    if (elem_size == 0)
        elem_size = 8;
    size_t e = round_divisible(elem_size);
    if (e > PD_CACHE_LINE) /* bigger elements: scale the 64 B value by lines */
        return stencil_tab[ALPHA_TAB_ELEMS - 1] * (double)(e / PD_CACHE_LINE);
    return stencil_tab[__builtin_ctzl(e)];
}

void pd_stencil_table_builtin(double out[7])
{
    memcpy(out, stencil_builtin, sizeof stencil_builtin);
}

const char *pd_stencil_table_source(void)
{
    pthread_once(&stencil_once, stencil_load);
    return stencil_source;
}

/* ---- per-object state ---------------------------------------------------- */

int pd_alpha_is_online(const pd_access_hint *hint)
{
    if (!hint)
        return 1;
    switch (hint->pattern) {
    case PD_PATTERN_STREAM:
    case PD_PATTERN_STRIDE:
        return 0;
    case PD_PATTERN_STENCIL:
        return hint->input_dependent != 0;
    default:
        return 1;
    }
}

void pd_alpha_init(pd_alpha_state *st, const pd_access_hint *hint)
{
    pd_access_hint h = {.pattern = PD_PATTERN_UNKNOWN};
    if (hint)
        h = *hint;
    st->hint = h;
    st->refinements = 0;
    switch (h.pattern) {
    case PD_PATTERN_STREAM:
        st->alpha = pd_alpha_stream_stride(h.elem_size, 1);
        break;
    case PD_PATTERN_STRIDE:
        st->alpha = pd_alpha_stream_stride(h.elem_size, h.stride);
        break;
    case PD_PATTERN_STENCIL:
        st->alpha = h.input_dependent ? 1.0 : pd_alpha_stencil(h.elem_size);
        break;
    default:
        st->alpha = 1.0;
    }
}

double pd_estimate_accesses(double prof_acc, size_t size_base, size_t size_new, double alpha)
{
    if (!(prof_acc > 0) || !isfinite(prof_acc) || size_base == 0 || !(alpha > 0) || !isfinite(alpha))
        return 0;
    return prof_acc * ((double)size_new / (double)size_base) * alpha;
}

void pd_alpha_refine(pd_alpha_state *st, double estimated, double measured)
{
    if (!pd_alpha_is_online(&st->hint))
        return;
    if (!(estimated > 0) || !isfinite(estimated) || !(measured >= 0) || !isfinite(measured))
        return;
    /* The alpha that would have made this instance's estimate exact, kept
     * within bounds so that one noisy sample cannot zero or explode it. */
    double target = st->alpha * (measured / estimated);
    if (target < PD_ALPHA_MIN)
        target = PD_ALPHA_MIN;
    if (target > PD_ALPHA_MAX)
        target = PD_ALPHA_MAX;
    st->target[st->refinements % PD_ALPHA_WINDOW] = target;
    st->refinements++;
    unsigned n = st->refinements < PD_ALPHA_WINDOW ? st->refinements : PD_ALPHA_WINDOW;
    double v[PD_ALPHA_WINDOW];
    memcpy(v, st->target, n * sizeof *v); /* the ring keeps its order */
    st->alpha = pd_median(v, n);
}
