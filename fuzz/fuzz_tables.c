/* libFuzzer harness: the two measured tables the runtime reads from a
 * user's file, the random-access cost table (src/lib/cache_reach.c, as
 * $PADDISER_RANDOM_TABLE or random_cost.csv in the data directory) and the
 * stencil alpha table (src/lib/estimate.c, $PADDISER_STENCIL_TABLE or
 * stencil_alpha.csv). The first byte picks the table (even: random, odd:
 * stencil; the seeds use "0" and "1"); the rest is the file.
 * A table that loads must hold what the runtime relies on: for the random
 * table 2 to PD_RANDOM_TABLE_MAX rows, sizes positive and growing, costs
 * positive, and the cost ratio Eq. 1 takes between any two sizes finite and
 * positive; for the stencil table an alpha in (0, 2] for every element
 * size (cache lines per element access). A table that breaks that
 * aborts the harness. */
#include "fuzz_common.h"

#include <math.h>

#include "lib/cache_reach.h"
#include "lib/estimate.h"

static void check_random(const uint8_t *data, size_t size)
{
    char *text = fuzz_cstr(data, size);
    pd_random_table t;
    char err[512];
    if (pd_random_table_parse_text(text, &t, err, sizeof err) == 0) {
        if (t.n < 2 || t.n > PD_RANDOM_TABLE_MAX)
            abort();
        for (int i = 0; i < t.n; i++)
            if (!(t.frac[i] > 0) || !(t.cost[i] > 0) || !isfinite(t.cost[i]) || (i && !(t.frac[i] > t.frac[i - 1])))
                abort();
        /* sizes at, between and beyond the rows, as the runtime asks */
        double at[] = {t.frac[0] / 2, t.frac[0], sqrt(t.frac[0] * t.frac[t.n - 1]), t.frac[t.n / 2],
                       t.frac[t.n - 1], t.frac[t.n - 1] * 2, 1e-9, 1.0, 1e9};
        for (size_t a = 0; a < sizeof at / sizeof at[0]; a++)
            for (size_t b = 0; b < sizeof at / sizeof at[0]; b++) {
                double ca = pd_random_table_cost(&t, at[a]), cb = pd_random_table_cost(&t, at[b]);
                double r = ca / cb;
                if (!(ca > 0) || !(cb > 0) || !isfinite(r) || !(r > 0))
                    abort(); /* an estimate times this would be infinite, zero or NaN */
            }
    }
    free(text);
}

static void check_stencil(const uint8_t *data, size_t size)
{
    const char *path = fuzz_write(0, "stencil_alpha.csv", data, size);
    double tab[7];
    char err[512];
    if (pd_stencil_table_parse(path, tab, err, sizeof err) == 0)
        for (int e = 0; e < 7; e++)
            if (!(tab[e] > 0) || !(tab[e] <= 2)) /* lines per element access */
                abort();
    fuzz_remove(0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    if (data[0] & 1)
        check_stencil(data + 1, size - 1);
    else
        check_random(data + 1, size - 1);
    return 0;
}
