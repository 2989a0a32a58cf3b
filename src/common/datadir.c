/* Shipped data directory (datadir.h). PD_DATADIR comes from the generated
 * pd_paths.h, rewritten by the Makefile when PREFIX changes. */
#include <stdio.h>
#include <stdlib.h>

#include "common/datadir.h"
#include "pd_paths.h"

const char *pd_datadir(void)
{
    const char *env = getenv("PADDISER_DATADIR");
    return env && *env ? env : PD_DATADIR;
}

int pd_datadir_file(const char *name, char *out, size_t outlen)
{
    int n = snprintf(out, outlen, "%s/%s", pd_datadir(), name);
    return n >= 0 && (size_t)n < outlen ? 0 : -1;
}
