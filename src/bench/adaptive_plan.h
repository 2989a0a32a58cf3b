/* search_method: adaptive (IOPS 3.5.8's AdaptivePlanner): the first
 * adaptive variable is probed once per combination of the other swept
 * variables. A probe starts at `initial`; after each value's repetitions it
 * stops (condition_met) if stop_when held for any of them, or steps to the
 * next value (prev * factor, prev + increment, or step_expr rendered with
 * `previous` and `iteration`, cast to the variable's type) until
 * max_iterations. Probes are served round-robin one repetition at a time,
 * as IOPS's next_test() hands them out: a probe whose value's repetitions
 * were all handed out gets nothing until they are all reported.
 *
 * The first half is the probe state machine; the second (pd_bench_adapt_*)
 * is what run.c drives: executions of the probed values appended to the
 * matrix as they are handed out, the finished repetitions told back, and
 * what IOPS writes about the probes at the end (adaptive_results). */
#ifndef PD_BENCH_ADAPTIVE_PLAN_H
#define PD_BENCH_ADAPTIVE_PLAN_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "bench/config.h"
#include "bench/expr.h"
#include "bench/run.h"

typedef enum {
    PD_ADAPT_IN_PROGRESS,
    PD_ADAPT_CONDITION_MET,
    PD_ADAPT_MAX_ITERATIONS,
    PD_ADAPT_CONSTRAINT_VIOLATION,
    PD_ADAPT_STEP_ERROR, /* step_expr could not be rendered or cast */
} pd_adapt_stop;

typedef struct {
    pd_val current;   /* the value being (or to be) measured */
    pd_val found;     /* last value whose repetitions all passed (NONE before) */
    pd_val failed;    /* the value that met stop_when (NONE unless it did) */
    long iteration;   /* values that passed */
    int emitted;      /* repetitions of current handed out */
    int completed;    /* of those, reported */
    bool triggered;   /* stop_when held for one of them */
    pd_adapt_stop stop;
} pd_adapt_probe;

typedef struct {
    const pd_bench_var *var;
    pd_adapt_probe *probes;
    size_t nprobes;
    size_t cursor; /* round-robin: the probe served next */
    int repetitions;
} pd_adapt_plan;

/* One repetition's outcome, as stop_when sees it. execution_time < 0: None. */
typedef struct {
    const char *const *metric_names;
    const pd_val *metric_values; /* NONE: not measured */
    size_t nmetrics;
    int exit_code;
    const char *status; /* "SUCCEEDED", "FAILED", ... */
    double execution_time;
    bool no_exit_code;  /* exit_code is None */
} pd_adapt_result;

/* nprobes probes of var (adaptive.set), each at initial. 0 or -1 (memory). */
int pd_adapt_init(pd_adapt_plan *p, const pd_bench_var *var, size_t nprobes, int repetitions);
void pd_adapt_free(pd_adapt_plan *p);

/* The next probe to hand out a repetition of its current value (*rep,
 * 1-based), round-robin over unfinished probes; -1 when none can. */
long pd_adapt_next(pd_adapt_plan *p, int *rep);

/* A handed-out repetition of probe i's current value ended: stop_when is
 * evaluated (an evaluation error counts as met). After the last repetition
 * the probe stops or steps. 0, or -1 when step_expr failed (err says why; the probe
 * is stopped with PD_ADAPT_STEP_ERROR). */
int pd_adapt_report(pd_adapt_plan *p, size_t i, const pd_adapt_result *r, char *err, size_t errlen);

/* Probe i's current value violates a constraint (found when its first
 * repetition was handed out): it stops there. */
void pd_adapt_violation(pd_adapt_plan *p, size_t i);

bool pd_adapt_finished(const pd_adapt_plan *p, size_t i);
/* IOPS's reported iterations: values tried, counting the one it stopped at. */
long pd_adapt_iterations(const pd_adapt_plan *p, size_t i);
const char *pd_adapt_stop_name(pd_adapt_stop s);

/* ------------------------------------------------ driven by run.c */

typedef struct {
    pd_adapt_plan plan;
    size_t var;           /* cfg index of the adaptive variable */
    pd_val **bases;       /* each probe's values on the matrix (the adaptive one at initial) */
    size_t *probe_of;     /* per matrix execution: its probe */
    size_t *exec_of;      /* per probe: the matrix execution of its current value */
    size_t cap_execs, cap_order;
    int next_id;          /* IOPS's execution ids: one per value handed out, a skipped one's too */
    size_t estimate;      /* IOPS's running estimate of the repetitions the search takes */
    size_t index_total;   /* the estimate when the last new value was handed out (its index's total_expected) */
} pd_bench_adapt;

/* Takes m's executions of the first script (IOPS probes each combination
 * of the other swept variables once, with scripts[0]) as the probes, in
 * number order, and leaves m empty. 0, or -1 when out of memory. */
int pd_bench_adapt_init(pd_bench_adapt *a, const pd_bench_config *cfg, pd_bench_matrix *m);

/* Hands out up to want repetitions (IOPS's next_tests(want)), appending to
 * m an execution for each new value (ids in the order handed out) and the
 * repetitions to m->order. A value a constraint skips stops its probe.
 * Returns the order entries added (0: every probe is finished or waits for
 * results), or -1 with errors (a constraint with violation_policy error, an
 * expression that fails, out of memory). */
long pd_bench_adapt_next(pd_bench_adapt *a, const pd_bench_config *cfg, const char *run_dir, pd_bench_matrix *m,
                         size_t want, pd_str *errors, pd_str *warnings);

/* The finished tasks[first..n) told to their probes, in that order. 0, or
 * -1 when a step_expr failed (errors says which; that probe is stopped). */
int pd_bench_adapt_tell(pd_bench_adapt *a, const pd_bench_config *cfg, const pd_bench_task *tasks, size_t first,
                        size_t n, pd_str *errors);

/* IOPS's adaptive_results: {var: {label: {found_value, failed_value,
 * iterations, stop_reason}}}, label the probe's swept variables as
 * "a=1,b=x" sorted by name ("(no swept vars)" when none). */
json_t *pd_bench_adapt_results(const pd_bench_adapt *a, const pd_bench_config *cfg);

/* The summary IOPS logs at the end of the run, one line a probe. */
void pd_bench_adapt_print(const pd_bench_adapt *a, const pd_bench_config *cfg, FILE *out);

void pd_bench_adapt_free(pd_bench_adapt *a, size_t nvars);

#endif
