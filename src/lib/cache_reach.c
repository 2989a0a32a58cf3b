/* The random-access cost table (see cache_reach.h). */
#include "lib/cache_reach.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/csv.h"
#include "common/datadir.h"
#include "common/sysroot.h"
#include "common/util.h"
#include "paddiser.h"

/* Built-in copy of the shipped models/random_cost.csv, so that a program
 * that is not installed computes what an installed one does;
 * tests/test_cache_reach.c keeps the two equal. Measured on this project's
 * VM (AMD EPYC, 32 MiB LLC, 2 threads; `paddiser model calibrate-random
 * --reps 15`, 2026-12-07). */
static const double builtin_frac[] = {
    0.0625, 0.0883882, 0.125, 0.176777, 0.25, 0.353553, 0.5, 0.707107, 1, 1.41421, 2, 2.82843, 4,
    5.65685, 8, 11.3137, 16,
};
static const double builtin_cost[] = {
    0.157437, 0.16076, 0.172011, 0.18286, 0.182127, 0.272444, 0.497242, 0.670087, 0.779419,
    0.810393, 0.822941, 0.843397, 0.900287, 0.951088, 0.949015, 1.00819, 1,
};

/* The most a table's largest cost may be of its smallest. */
#define RANDOM_COST_SPAN_MAX 1e4

static pd_random_table table;
static char source[4096] = "built-in";
static size_t llc_bytes;
static pthread_once_t once = PTHREAD_ONCE_INIT;

void pd_random_table_builtin(pd_random_table *t)
{
    t->n = (int)(sizeof builtin_frac / sizeof builtin_frac[0]);
    memcpy(t->frac, builtin_frac, sizeof builtin_frac);
    memcpy(t->cost, builtin_cost, sizeof builtin_cost);
}

static int table_from_csv(pd_csv *csv, const char *what, pd_random_table *t, char *err, size_t errlen)
{
    int cf = pd_csv_col(csv, "bytes_over_llc"), cc = pd_csv_col(csv, "cost");
    if (cf < 0 || cc < 0) {
        snprintf(err, errlen, "%s: needs columns bytes_over_llc,cost", what);
        return PD_EINVAL;
    }
    if (csv->nrows < 2 || csv->nrows > PD_RANDOM_TABLE_MAX) {
        snprintf(err, errlen, "%s: needs 2 to %d rows, has %zu", what, PD_RANDOM_TABLE_MAX, csv->nrows);
        return PD_EINVAL;
    }
    t->n = 0;
    for (size_t r = 0; r < csv->nrows; r++) {
        double f, c;
        const char *ff = pd_csv_get(csv, r, cf), *fc = pd_csv_get(csv, r, cc);
        if (!ff || !fc || !pd_parse_double(ff, &f) || !pd_parse_double(fc, &c) || !(f > 0) || !(c > 0) ||
            !isfinite(f) || !isfinite(c)) {
            snprintf(err, errlen, "%s: row %zu: bytes_over_llc and cost must be positive numbers", what, r + 2);
            return PD_EINVAL;
        }
        if (t->n > 0 && !(f > t->frac[t->n - 1])) {
            snprintf(err, errlen, "%s: row %zu: bytes_over_llc %g does not grow (the rows go from small to large)",
                     what, r + 2, f);
            return PD_EINVAL;
        }
        t->frac[t->n] = f;
        t->cost[t->n++] = c;
    }
    /* A random access costs between a cache hit and a memory access, a
     * few hundred times apart at most; a table whose costs span more is
     * no measurement, and one spanning 1e600 gave an infinite Eq. 1 scale
     * (the invariant fuzz/fuzz_tables.c checks). */
    double lo = t->cost[0], hi = t->cost[0];
    for (int i = 1; i < t->n; i++) {
        lo = t->cost[i] < lo ? t->cost[i] : lo;
        hi = t->cost[i] > hi ? t->cost[i] : hi;
    }
    if (hi > RANDOM_COST_SPAN_MAX * lo) {
        snprintf(err, errlen, "%s: costs from %g to %g: a measured table's costs lie within %g times of each other",
                 what, lo, hi, RANDOM_COST_SPAN_MAX);
        return PD_EINVAL;
    }
    return 0;
}

int pd_random_table_parse_text(const char *text, pd_random_table *t, char *err, size_t errlen)
{
    pd_csv *csv = pd_csv_parse(text, err, errlen);
    if (!csv)
        return PD_EIO;
    int rc = table_from_csv(csv, "random cost table", t, err, errlen);
    pd_csv_free(csv);
    return rc;
}

int pd_random_table_parse(const char *path, pd_random_table *t, char *err, size_t errlen)
{
    pd_csv *csv = pd_csv_load(path, err, errlen);
    if (!csv)
        return PD_EIO;
    int rc = table_from_csv(csv, path, t, err, errlen);
    pd_csv_free(csv);
    return rc;
}

double pd_random_table_cost(const pd_random_table *t, double frac)
{
    if (frac <= t->frac[0])
        return t->cost[0];
    if (frac >= t->frac[t->n - 1])
        return t->cost[t->n - 1];
    int i = 1;
    while (t->frac[i] < frac)
        i++;
    double w = log(frac / t->frac[i - 1]) / log(t->frac[i] / t->frac[i - 1]);
    return t->cost[i - 1] + w * (t->cost[i] - t->cost[i - 1]);
}

/* The largest cache cpu0 lists (the last level), 0 when sysfs has none. */
static size_t sysfs_llc(void)
{
    size_t best = 0;
    for (int i = 0; i < 8; i++) {
        char rel[96];
        snprintf(rel, sizeof rel, "devices/system/cpu/cpu0/cache/index%d/size", i);
        size_t v = pd_sys_size(rel);
        if (v > best)
            best = v;
    }
    return best;
}

static void load(void)
{
    pd_random_table_builtin(&table);
    const char *env = getenv("PADDISER_RANDOM_TABLE");
    char shipped[4096];
    const char *paths[] = {env && *env ? env : NULL,
                           pd_datadir_file("random_cost.csv", shipped, sizeof shipped) == 0 ? shipped : NULL};
    for (int i = 0; i < 2; i++) {
        char err[512];
        pd_random_table t;
        if (!paths[i])
            continue;
        if (pd_random_table_parse(paths[i], &t, err, sizeof err) == 0) {
            table = t;
            snprintf(source, sizeof source, "%s", paths[i]);
            break;
        }
        if (i == 0) /* an explicit table that does not load deserves a word */
            fprintf(stderr, "paddiser: random cost table ignored: %s\n", err);
    }
    const char *l = getenv("PADDISER_LLC_BYTES");
    double v;
    if (l && *l && pd_parse_double(l, &v) && v >= 1024 && v < 1e15)
        llc_bytes = (size_t)v;
    else
        llc_bytes = sysfs_llc();
}

double pd_random_cost_ratio(double bytes_new, double bytes_base)
{
    pthread_once(&once, load);
    if (!llc_bytes || !(bytes_new > 0) || !(bytes_base > 0))
        return 1.0;
    double llc = (double)llc_bytes;
    return pd_random_table_cost(&table, bytes_new / llc) / pd_random_table_cost(&table, bytes_base / llc);
}

const char *pd_random_table_source(void)
{
    pthread_once(&once, load);
    return source;
}

size_t pd_random_llc_bytes(void)
{
    pthread_once(&once, load);
    return llc_bytes;
}
