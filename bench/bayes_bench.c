/* Bayesian search (src/bench/bayes.c) against random search on known test
 * functions over discrete grids: how many evaluations each needs before it
 * has evaluated a point within 5% of the grid's optimum (f <= m + 0.05 |m|,
 * m the grid's minimum), median over 20 seeds. Both draw
 * from Python's MT19937 seeded with the seed, as a study's random_seed does;
 * random search is random.sample of the whole grid, evaluated in order.
 * Not part of make check: `make bench-bayes`. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bayes.h"
#include "bench/pyrandom.h"
#include "common/util.h"

#define NSEEDS 20

typedef struct {
    const char *name;
    size_t dim, per_dim; /* grid: per_dim points on [0, 1] in each dimension */
    double noise_sd;     /* observation noise, in units of the grid's range */
    double (*f)(const double *u);
} problem;

/* Branin on x1 in [-5, 10], x2 in [0, 15] (minimum 0.397887). */
static double branin(const double *u)
{
    double x1 = -5 + 15 * u[0], x2 = 15 * u[1];
    double a = x2 - 5.1 / (4 * M_PI * M_PI) * x1 * x1 + 5 / M_PI * x1 - 6;
    return a * a + 10 * (1 - 1 / (8 * M_PI)) * cos(x1) + 10;
}

/* Hartmann-3 on [0, 1]^3 (minimum -3.86278). */
static double hartmann3(const double *u)
{
    static const double al[4] = {1.0, 1.2, 3.0, 3.2};
    static const double A[4][3] = {{3, 10, 30}, {0.1, 10, 35}, {3, 10, 30}, {0.1, 10, 35}};
    static const double P[4][3] = {
        {0.3689, 0.1170, 0.2673}, {0.4699, 0.4387, 0.7470}, {0.1091, 0.8732, 0.5547}, {0.0381, 0.5743, 0.8828}};
    double s = 0;
    for (int i = 0; i < 4; i++) {
        double e = 0;
        for (int j = 0; j < 3; j++)
            e += A[i][j] * (u[j] - P[i][j]) * (u[j] - P[i][j]);
        s += al[i] * exp(-e);
    }
    return -s;
}

/* A 2-D quadratic bowl off the grid's centre, minimum 1 (observed with noise). */
static double quadratic(const double *u)
{
    return 1 + (u[0] - 0.3) * (u[0] - 0.3) + 2 * (u[1] - 0.65) * (u[1] - 0.65);
}

/* Standard normal from two random() draws (Box-Muller). */
static double gauss(pd_pyrandom *r)
{
    double a = pd_pyrandom_random(r), b = pd_pyrandom_random(r);
    return sqrt(-2 * log(1 - a)) * cos(2 * M_PI * b);
}

static int cmp_size(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return (x > y) - (x < y);
}

static size_t median(size_t *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_size);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(void)
{
    static const problem probs[] = {
        {"branin", 2, 30, 0, branin},
        {"hartmann3", 3, 11, 0, hartmann3},
        {"quadratic+noise", 2, 21, 0.02, quadratic},
    };
    pd_bayes_opts opts = {.acq = PD_ACQ_EI, .xi = 0.01, .kappa = 1.96, .n_initial = 5};
    printf("%-16s %6s %10s %14s %14s %10s %8s\n", "function", "grid", "share<=5%", "random median",
           "bayes median", "bayes<rand", "s/seed");
    for (size_t p = 0; p < sizeof probs / sizeof *probs; p++) {
        const problem *pr = &probs[p];
        size_t n = 1;
        for (size_t d = 0; d < pr->dim; d++)
            n *= pr->per_dim;
        double *x = malloc(n * pr->dim * sizeof *x), *fv = malloc(n * sizeof *fv), *ys = malloc(n * sizeof *ys);
        size_t *perm = malloc(n * sizeof *perm), *obs = malloc(n * sizeof *obs);
        bool *visited = malloc(n * sizeof *visited);
        if (!x || !fv || !ys || !perm || !obs || !visited)
            return 1;
        double lo = HUGE_VAL, hi = -HUGE_VAL;
        for (size_t c = 0; c < n; c++) {
            size_t rest = c;
            for (size_t d = pr->dim; d-- > 0;) { /* last dimension varies fastest */
                x[c * pr->dim + d] = (double)(rest % pr->per_dim) / (double)(pr->per_dim - 1);
                rest /= pr->per_dim;
            }
            fv[c] = pr->f(x + c * pr->dim);
            lo = fv[c] < lo ? fv[c] : lo;
            hi = fv[c] > hi ? fv[c] : hi;
        }
        double target = lo + 0.05 * fabs(lo);
        size_t good = 0;
        for (size_t c = 0; c < n; c++)
            good += fv[c] <= target;
        size_t rnd[NSEEDS], bay[NSEEDS], wins = 0;
        double t0 = pd_monotonic();
        for (int s = 0; s < NSEEDS; s++) {
            pd_pyrandom rng;
            pd_pyrandom_seed(&rng, s + 1);
            if (pd_pyrandom_sample(&rng, n, n, perm) != 0)
                return 1;
            rnd[s] = n;
            for (size_t i = 0; i < n; i++)
                if (fv[perm[i]] <= target) {
                    rnd[s] = i + 1;
                    break;
                }
            pd_pyrandom_seed(&rng, s + 1);
            memset(visited, 0, n * sizeof *visited);
            pd_bayes_space sp = {x, n, pr->dim};
            bay[s] = n;
            for (size_t i = 0; i < n; i++) {
                long c = pd_bayes_next(&sp, obs, ys, i, visited, &rng, &opts);
                if (c < 0)
                    return 1;
                visited[c] = true;
                obs[i] = (size_t)c;
                ys[i] = fv[c] + (pr->noise_sd > 0 ? pr->noise_sd * (hi - lo) * gauss(&rng) : 0);
                if (fv[c] <= target) {
                    bay[s] = i + 1;
                    break;
                }
            }
            wins += bay[s] < rnd[s];
        }
        double per_seed = (pd_monotonic() - t0) / NSEEDS;
        printf("%-16s %6zu %9.1f%% %14zu %14zu %7zu/%d %8.2f\n", pr->name, n, 100.0 * (double)good / (double)n,
               median(rnd, NSEEDS), median(bay, NSEEDS), wins, NSEEDS, per_seed);
        free(x);
        free(fv);
        free(ys);
        free(perm);
        free(obs);
        free(visited);
    }
    return 0;
}
