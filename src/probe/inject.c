/* Placeholder until issue #2 lands. */
#include "probe/inject.h"

#include <stdio.h>

int pd_probe_injection(pd_str *out, const pd_probe_inject_cfg *cfg, char *err, size_t errlen)
{
    (void)out;
    (void)cfg;
    snprintf(err, errlen, "resource sampling is not built yet (issue #2)");
    return -1;
}
