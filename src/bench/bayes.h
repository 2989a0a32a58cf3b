/* Bayesian search over a discrete candidate set (search_method: bayesian):
 * a Gaussian-process surrogate (Matern 5/2 kernel, isotropic length scale
 * and noise level picked by log marginal likelihood over a small grid, GSL's
 * Cholesky factorisation) with an acquisition function (EI, PI or LCB, as
 * IOPS's bayesian_config names them) evaluated on every candidate not yet
 * visited. The first n_initial proposals are uniform random draws of the
 * unvisited candidates from the caller's Python-compatible generator, so a
 * study is deterministic for its random_seed. */
#ifndef PD_BENCH_BAYES_H
#define PD_BENCH_BAYES_H

#include <stdbool.h>
#include <stddef.h>

#include "bench/pyrandom.h"

typedef enum { PD_ACQ_EI, PD_ACQ_PI, PD_ACQ_LCB } pd_bayes_acq;

typedef struct {
    pd_bayes_acq acq;
    double xi;        /* EI/PI margin, in units of the observed values' spread */
    double kappa;     /* LCB width */
    size_t n_initial; /* random proposals before the surrogate is used */
} pd_bayes_opts;

/* Candidates: ncand rows of dim features each (row-major), every feature in
 * [0, 1] (numbers by value scaled to their range, categories one-hot). */
typedef struct {
    const double *x;
    size_t ncand, dim;
} pd_bayes_space;

/* The next candidate to evaluate, minimising: obs_idx[i] was evaluated with
 * (mean) objective obs_y[i]; visited[c] marks the candidates not to propose
 * again. Returns a candidate index, -1 when every candidate was visited, or
 * -2 when out of memory. */
long pd_bayes_next(const pd_bayes_space *sp, const size_t *obs_idx, const double *obs_y, size_t nobs,
                   const bool *visited, pd_pyrandom *rng, const pd_bayes_opts *o);

#endif
