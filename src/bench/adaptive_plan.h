/* search_method: adaptive (IOPS 3.5.8's AdaptivePlanner): the first
 * adaptive variable is probed once per combination of the other swept
 * variables. A probe starts at `initial`; after each value's repetitions it
 * stops (condition_met) if stop_when held for any of them, or steps to the
 * next value (prev * factor, prev + increment, or step_expr rendered with
 * `previous` and `iteration`, cast to the variable's type) until
 * max_iterations. Probes are served round-robin, one value at a time: a
 * probe whose value's repetitions are still pending gets no new value.
 *
 * This module is the probe state machine only; run.c does not drive it yet
 * (config.c refuses adaptive studies until it does). */
#ifndef PD_BENCH_ADAPTIVE_PLAN_H
#define PD_BENCH_ADAPTIVE_PLAN_H

#include <stdbool.h>
#include <stddef.h>

#include "bench/config.h"
#include "bench/expr.h"

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
    bool handed;      /* current was handed out */
    int pending;      /* its repetitions not reported yet */
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
} pd_adapt_result;

/* nprobes probes of var (adaptive.set), each at initial. 0 or -1 (memory). */
int pd_adapt_init(pd_adapt_plan *p, const pd_bench_var *var, size_t nprobes, int repetitions);
void pd_adapt_free(pd_adapt_plan *p);

/* The next probe to hand out a value (its current, all repetitions now
 * pending), round-robin over unfinished probes; -1 when none can. */
long pd_adapt_next(pd_adapt_plan *p);

/* A repetition of probe i's current value ended: stop_when is evaluated
 * (an evaluation error counts as met). After the last repetition the probe
 * stops or steps. 0, or -1 when step_expr failed (err says why; the probe
 * is stopped with PD_ADAPT_STEP_ERROR). */
int pd_adapt_report(pd_adapt_plan *p, size_t i, const pd_adapt_result *r, char *err, size_t errlen);

/* Probe i's current value violates a constraint: it stops there. */
void pd_adapt_violation(pd_adapt_plan *p, size_t i);

bool pd_adapt_finished(const pd_adapt_plan *p, size_t i);
/* IOPS's reported iterations: values tried, counting the one it stopped at. */
long pd_adapt_iterations(const pd_adapt_plan *p, size_t i);
const char *pd_adapt_stop_name(pd_adapt_stop s);

#endif
