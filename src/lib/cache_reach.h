/* How much a random access costs as the randomly read data outgrows the
 * last-level cache (docs/model.md, *Random access and the cache*).
 *
 * A randomly read array that the cache holds costs a cache hit per access;
 * one several times the cache costs a memory access nearly every time. So
 * between two inputs a random object's time is not proportional to its size
 * (Eq. 1's linear scale): on this project's VM the phases example's random
 * vector of 8.3 MiB mostly hit, at 16.5 MiB it mostly missed, and the input
 * took 4x as long for 2x the bytes. The table gives the cost of one random
 * access, relative to the largest size measured, against the randomly read
 * bytes over the LLC's size; `paddiser model calibrate-random` measures it,
 * and sizes are read relative to the LLC so that one measured elsewhere
 * carries over by the cache's size. */
#ifndef PD_LIB_CACHE_REACH_H
#define PD_LIB_CACHE_REACH_H

#include <stddef.h>

#define PD_RANDOM_TABLE_MAX 64

typedef struct {
    int n;
    double frac[PD_RANDOM_TABLE_MAX]; /* randomly read bytes / LLC bytes, increasing */
    double cost[PD_RANDOM_TABLE_MAX]; /* relative cost of one random access, > 0 */
} pd_random_table;

/* Reads a table (CSV with columns bytes_over_llc,cost; other columns are
 * ignored): at least 2 rows, sizes > 0 strictly increasing, costs > 0,
 * the largest at most 1e4 times the smallest. 0, or < 0 with a message in
 * err. */
int pd_random_table_parse_text(const char *text, pd_random_table *t, char *err, size_t errlen);
int pd_random_table_parse(const char *path, pd_random_table *t, char *err, size_t errlen);

/* The table's cost at frac, interpolated on log size between rows, the end
 * rows' beyond them. */
double pd_random_table_cost(const pd_random_table *t, double frac);

/* The ratio of a random access's cost with bytes_new randomly read to its
 * cost with bytes_base: the factor Eq. 1's estimate of a random object takes
 * between the two inputs. 1 where the LLC's size is not known, either size
 * is not positive (the runtime skips it under PADDISER_RANDOM_REACH=off). The table:
 * $PADDISER_RANDOM_TABLE, else random_cost.csv in the data directory, else
 * the built-in copy of models/random_cost.csv; the LLC: $PADDISER_LLC_BYTES,
 * else the largest cache cpu0 lists in sysfs (PADDISER_SYS_ROOT applies). */
double pd_random_cost_ratio(double bytes_new, double bytes_base);

/* Where the table came from ("built-in" or a path), and the LLC size used
 * (0: unknown). */
const char *pd_random_table_source(void);
size_t pd_random_llc_bytes(void);
/* The built-in table (the copy of models/random_cost.csv). */
void pd_random_table_builtin(pd_random_table *t);

#endif
