/* search_method: bayesian in a study: the matrix study.c builds is the set
 * of candidates; a search point is a combination of the swept variables
 * not in exhaustive_vars (IOPS's get_search_point), and every execution of
 * a proposed point runs (each exhaustive value, each script). Points are
 * proposed one at a time by bayes.h after the previous point's results are
 * read; executions are numbered in the order they are proposed (exec_0001
 * is the first point's first execution) and each runs its repetitions one
 * after another. Features: a numeric variable by value scaled to [0, 1], any
 * other one-hot; variables with one value are left out. */
#ifndef PD_BENCH_BAYES_PLAN_H
#define PD_BENCH_BAYES_PLAN_H

#include <stdbool.h>
#include <stddef.h>

#include "bench/bayes.h"
#include "bench/config.h"
#include "bench/pyrandom.h"
#include "bench/study.h"

typedef struct {
    pd_bench_exec *cands; /* the full matrix, in number order */
    size_t ncands;
    size_t *point_of;     /* search point of each candidate */
    size_t npoints;
    double *x;            /* npoints x dim features */
    size_t dim;
    bool *visited;
    size_t *obs;          /* points with a measured objective, and its value (minimised) */
    double *y;
    size_t nobs;
    size_t proposed;      /* points proposed so far */
    size_t budget;        /* points to propose: n_iterations, at most npoints */
    long current;         /* the last proposed point, -1 before the first */
    bool maximize;
    pd_bayes_opts opts;
    pd_pyrandom rng;
} pd_bench_bayes_plan;

/* Takes m's executions as the candidates and leaves m empty, with room for
 * all of them and their repetitions. Returns 1 when the search runs, 0 when
 * the study runs whole instead (n_iterations >= the number of points and
 * fallback_to_exhaustive: m is left as built, with a warning), -1 when out
 * of memory. */
int pd_bench_bayes_init(pd_bench_bayes_plan *b, const pd_bench_config *cfg, pd_bench_matrix *m, pd_str *warnings);

/* The current point's objective: the objective_metric's mean over each
 * execution's succeeded repetitions, the best of those over the point's
 * executions (IOPS reports the best exhaustive instance); NAN when none was
 * measured (the point stays visited, and is not told to the model). */
void pd_bench_bayes_tell(pd_bench_bayes_plan *b, double objective);

/* Proposes the next point and appends its executions and their
 * repetitions to m (ids after m's last). Returns the number of order
 * entries added; 0 when the budget is spent or every point was visited; -1
 * when out of memory. */
long pd_bench_bayes_next(pd_bench_bayes_plan *b, const pd_bench_config *cfg, pd_bench_matrix *m);

void pd_bench_bayes_free(pd_bench_bayes_plan *b, size_t nvars);

#endif
