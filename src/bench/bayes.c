/* Gaussian-process regression with an acquisition function over a discrete
 * candidate set (bayes.h). Linear algebra is GSL's: the kernel matrix is
 * factorised by gsl_linalg_cholesky_decomp1 and every solve is
 * gsl_linalg_cholesky_solve. */
#include "bench/bayes.h"

#include <gsl/gsl_blas.h>
#include <gsl/gsl_cdf.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_linalg.h>
#include <gsl/gsl_randist.h>
#include <math.h>
#include <stdlib.h>

/* Matern 5/2 with unit signal variance (the observations are standardised). */
static double matern52(const double *a, const double *b, size_t dim, double len)
{
    double d2 = 0;
    for (size_t i = 0; i < dim; i++)
        d2 += (a[i] - b[i]) * (a[i] - b[i]);
    double r = sqrt(5.0 * d2) / len;
    return (1.0 + r + r * r / 3.0) * exp(-r);
}

typedef struct {
    gsl_matrix *chol; /* Cholesky factor of K + noise I */
    gsl_vector *alpha; /* (K + noise I)^-1 y */
    double len, noise, lml;
} gp_fit;

/* Fits the GP for one (length scale, noise) pair; lml is its log marginal
 * likelihood, -HUGE_VAL when the matrix is not positive definite. */
static int fit_one(const pd_bayes_space *sp, const size_t *obs, const gsl_vector *y, double len, double noise,
                   gp_fit *f)
{
    size_t n = y->size;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j <= i; j++) {
            double k = matern52(sp->x + obs[i] * sp->dim, sp->x + obs[j] * sp->dim, sp->dim, len);
            if (i == j)
                k += noise + 1e-10;
            gsl_matrix_set(f->chol, i, j, k);
            gsl_matrix_set(f->chol, j, i, k);
        }
    f->len = len;
    f->noise = noise;
    f->lml = -HUGE_VAL;
    if (gsl_linalg_cholesky_decomp1(f->chol) != GSL_SUCCESS ||
        gsl_linalg_cholesky_solve(f->chol, y, f->alpha) != GSL_SUCCESS)
        return -1;
    double lml = 0;
    gsl_blas_ddot(y, f->alpha, &lml);
    lml *= -0.5;
    for (size_t i = 0; i < n; i++)
        lml -= log(gsl_matrix_get(f->chol, i, i));
    f->lml = lml - 0.5 * (double)n * log(2 * M_PI);
    return 0;
}

static double acquisition(const pd_bayes_opts *o, double mu, double sigma, double best)
{
    if (o->acq == PD_ACQ_LCB)
        return -(mu - o->kappa * sigma); /* larger is better everywhere */
    double imp = best - mu - o->xi;
    if (sigma <= 1e-12)
        return o->acq == PD_ACQ_PI ? (imp > 0) : (imp > 0 ? imp : 0);
    double z = imp / sigma;
    if (o->acq == PD_ACQ_PI)
        return gsl_cdf_ugaussian_P(z);
    return imp * gsl_cdf_ugaussian_P(z) + sigma * gsl_ran_ugaussian_pdf(z);
}

static long random_unvisited(const pd_bayes_space *sp, const bool *visited, pd_pyrandom *rng)
{
    size_t left = 0;
    for (size_t c = 0; c < sp->ncand; c++)
        left += !visited[c];
    if (!left)
        return -1;
    size_t pick = (size_t)pd_pyrandom_below(rng, left);
    for (size_t c = 0; c < sp->ncand; c++)
        if (!visited[c] && pick-- == 0)
            return (long)c;
    return -1;
}

/* The hyperparameter grid: length scales in the [0, 1] feature space and
 * noise variances relative to the standardised observations. */
static const double LENS[] = {0.05, 0.1, 0.2, 0.35, 0.6, 1.0, 2.0};
static const double NOISES[] = {1e-6, 1e-3, 1e-2, 0.1};

long pd_bayes_next(const pd_bayes_space *sp, const size_t *obs_idx, const double *obs_y, size_t nobs,
                   const bool *visited, pd_pyrandom *rng, const pd_bayes_opts *o)
{
    if (nobs < o->n_initial || nobs < 2)
        return random_unvisited(sp, visited, rng);
    bool any = false;
    for (size_t c = 0; c < sp->ncand && !any; c++)
        any = !visited[c];
    if (!any)
        return -1;

    /* standardise: the kernel has unit variance, the mean is the data's */
    double mean = 0, var = 0;
    for (size_t i = 0; i < nobs; i++)
        mean += obs_y[i];
    mean /= (double)nobs;
    for (size_t i = 0; i < nobs; i++)
        var += (obs_y[i] - mean) * (obs_y[i] - mean);
    double sd = sqrt(var / (double)nobs);
    if (!(sd > 0))
        sd = 1;

    long ret = -2;
    gsl_vector *y = gsl_vector_alloc(nobs), *k = gsl_vector_alloc(nobs), *kinv = gsl_vector_alloc(nobs);
    gp_fit cur = {gsl_matrix_alloc(nobs, nobs), gsl_vector_alloc(nobs), 0, 0, 0};
    gp_fit best = {gsl_matrix_alloc(nobs, nobs), gsl_vector_alloc(nobs), 0, 0, -HUGE_VAL};
    gsl_error_handler_t *old = gsl_set_error_handler_off(); /* a failed fit is a skipped grid point */
    if (!y || !k || !kinv || !cur.chol || !cur.alpha || !best.chol || !best.alpha)
        goto out;
    double ybest = HUGE_VAL;
    for (size_t i = 0; i < nobs; i++) {
        double z = (obs_y[i] - mean) / sd;
        gsl_vector_set(y, i, z);
        if (z < ybest)
            ybest = z;
    }
    for (size_t a = 0; a < sizeof LENS / sizeof *LENS; a++)
        for (size_t b = 0; b < sizeof NOISES / sizeof *NOISES; b++)
            if (fit_one(sp, obs_idx, y, LENS[a], NOISES[b], &cur) == 0 && cur.lml > best.lml) {
                gp_fit t = best;
                best = cur;
                cur = t;
            }
    if (best.lml == -HUGE_VAL) { /* no fit at all: keep searching at random */
        ret = random_unvisited(sp, visited, rng);
        goto out;
    }
    double top = -HUGE_VAL;
    ret = -1;
    for (size_t c = 0; c < sp->ncand; c++) {
        if (visited[c])
            continue;
        for (size_t i = 0; i < nobs; i++)
            gsl_vector_set(k, i, matern52(sp->x + c * sp->dim, sp->x + obs_idx[i] * sp->dim, sp->dim, best.len));
        double mu = 0, kk = 0;
        gsl_blas_ddot(k, best.alpha, &mu);
        gsl_linalg_cholesky_solve(best.chol, k, kinv);
        gsl_blas_ddot(k, kinv, &kk);
        double s2 = 1.0 - kk;
        double score = acquisition(o, mu, s2 > 0 ? sqrt(s2) : 0, ybest);
        if (score > top) { /* ties: the lowest candidate index */
            top = score;
            ret = (long)c;
        }
    }
out:
    gsl_set_error_handler(old);
    gsl_vector_free(y);
    gsl_vector_free(k);
    gsl_vector_free(kinv);
    gsl_matrix_free(cur.chol);
    gsl_vector_free(cur.alpha);
    gsl_matrix_free(best.chol);
    gsl_vector_free(best.alpha);
    return ret;
}
