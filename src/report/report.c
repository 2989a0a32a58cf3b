/* Placeholder until issue #7 lands. */
#include "report/report.h"

#include <stdio.h>

int pd_report_write(const char *run_dir, const char *out_path, char *err, size_t errlen)
{
    (void)run_dir;
    (void)out_path;
    snprintf(err, errlen, "HTML report is not built yet (issue #7)");
    return -1;
}
