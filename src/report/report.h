/* Self-contained HTML report of a run directory (issue #7): plots of results,
 * heatmaps against resource metrics, trace time series, per-task bars. */
#ifndef PD_REPORT_REPORT_H
#define PD_REPORT_REPORT_H

#include <stddef.h>

/* Writes out_path (NULL = run_dir/report.html). 0 or -1 with err. */
int pd_report_write(const char *run_dir, const char *out_path, char *err, size_t errlen);

#endif
