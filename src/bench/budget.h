/* The core-hours budget of `paddiser bench` (benchmark.max_core_hours,
 * cores_expr, estimated_time_seconds; --max-core-hours, --time-estimate),
 * with IOPS's rule (luanteylo/iops: iops/execution/runner.py,
 * _budget_exceeded_check): a repetition costs cores x its script's wall
 * time / 3600, cores from cores_expr (default 1, at least 1); before each
 * repetition is started, the run stops starting new ones once the
 * repetitions that finished used max_core_hours or more. Running ones are
 * never killed, so the total may pass the budget by what was in flight.
 * Repetitions taken from the cache cost nothing (their recorded cost is
 * reported as saved). */
#ifndef PD_BENCH_BUDGET_H
#define PD_BENCH_BUDGET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "bench/config.h"
#include "bench/expr.h"

typedef struct pd_bench_budget {
    double max;   /* core-hours; 0: no budget */
    double used;  /* by finished repetitions of this invocation */
    double saved; /* recorded cost of the repetitions taken from the cache */
    bool stopped; /* the budget was reached: nothing more is started */
} pd_bench_budget;

/* cores_expr for one set of variable values (cfg->nvars): the cores, at
 * least 1; -1 with err when it cannot be evaluated (an unknown variable,
 * a value that is not a number). */
long pd_bench_cores(const pd_bench_config *cfg, const pd_val *values, char *err, size_t errlen);

struct pd_bench_run;
struct pd_bench_task;
/* A finished repetition's cost, added to used (cached: to saved, with the
 * duration the cache recorded). */
void pd_bench_budget_add(struct pd_bench_run *run, const struct pd_bench_task *t, double duration_s, bool cached);
/* True when no more repetitions may start; says so on stderr the first time. */
bool pd_bench_budget_exhausted(struct pd_bench_run *run);
/* --dry-run: the core-hours of the planned repetitions for each estimated
 * duration per repetition (seconds), against the budget. to_run: the
 * repetitions that would run (not from the cache). */
void pd_bench_budget_estimate(const struct pd_bench_run *run, const double *seconds, size_t nseconds, FILE *out);
/* The line that ends a run with a budget or a cache ("" when neither). */
void pd_bench_budget_report(const struct pd_bench_run *run, FILE *out);

/* Sets the budget (cli_max > 0: --max-core-hours, else max_core_hours)
 * and checks cores_expr on every execution: 0, or -1 after saying why. */
int pd_bench_budget_setup(struct pd_bench_run *run, double cli_max);
/* --dry-run's estimate: for --time-estimate's durations, else
 * estimated_time_seconds; nothing without those, a budget or cores_expr. */
void pd_bench_budget_dry_run(const struct pd_bench_run *run, const double *seconds, size_t nseconds, FILE *out);

#endif
