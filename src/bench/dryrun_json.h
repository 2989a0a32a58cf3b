/* paddiser bench --dry-run --json: the dry run's listing as one JSON
 * document (issue #17), for scripts that would otherwise parse the text. */
#ifndef PD_BENCH_DRYRUN_JSON_H
#define PD_BENCH_DRYRUN_JSON_H

#include <stdio.h>

#include "bench/run.h"

/* Writes the study name, counts, executor, run directory and every
 * execution's variables to out; 0, or -1 (said on stderr) when out of
 * memory or out cannot be written. */
int pd_bench_dry_run_json(const pd_bench_run *run, FILE *out);

#endif
