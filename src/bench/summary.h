/* Run-level summary __iops_resource_summary.csv (issue #3), computed from the
 * traces under run_dir/exec_NNNN/repetition_NNN/ exactly as
 * shared/spec/summary-metrics.md defines. User variables of an execution are
 * read from run_dir/exec_NNNN/__iops_params.json: one flat JSON object, keys
 * in the study's variable order, values numbers or strings. */
#ifndef PD_BENCH_SUMMARY_H
#define PD_BENCH_SUMMARY_H

#include <stddef.h>

/* Writes run_dir/__iops_resource_summary.csv. Returns 1 when written, 0 when
 * there were no sample files at all (no summary, per the spec), -1 on error
 * with a message in err. */
int pd_summary_write(const char *run_dir, char *err, size_t errlen);

#endif
