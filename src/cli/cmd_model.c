/* paddiser model: train / evaluate the performance model (docs/model.md),
 * generate synthetic training data, calibrate the stencil alpha table. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "cli/model_calibrate.h"
#include "common/util.h"
#include "lib/model.h"
#include "paddiser.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: paddiser model <command> [options]\n"
            "  train DATA.csv -o MODEL [--holdout F] [--seed N] [--rounds N] [--depth N] [--eta X] [--threads N]\n"
            "        train f(features, r) on DATA (columns: %s);\n"
            "        F of the code regions (default 0.2) are held out and the accuracy on them reported;\n"
            "        MODEL ending in .json is written as JSON, anything else as UBJSON\n"
            "  eval MODEL DATA.csv     accuracy of MODEL on DATA ('default' = the shipped model)\n"
            "  split DATA.csv --train OUT.csv --test OUT.csv [--holdout F] [--seed N]\n"
            "        the region split of train (same F and seed: same held-out regions) as two CSVs\n"
            "  gen-synthetic -o OUT.csv [--regions N] [--placements N] [--seed N]\n"
            "        synthetic code regions from a mechanistic two-tier model (provisional data)\n"
            "  calibrate-stencil -o OUT.csv [--method cache-sim|timing] [--llc-kib N --ways N]\n"
            "                    [--row-kib N] [--scale N] [--mib N] [--reps N]\n"
            "        measure the stencil alpha table (micro-benchmark; models/stencil_alpha.csv)\n",
            PD_MODEL_CSV_HEADER);
}

/* Value of an option at argv[*i] ("--x V"), advancing *i. */
static const char *optval(int argc, char **argv, int *i)
{
    if (*i + 1 >= argc) {
        fprintf(stderr, "paddiser model: %s needs a value\n", argv[*i]);
        return NULL;
    }
    return argv[++*i];
}

static int opt_long(int argc, char **argv, int *i, long lo, long hi, long *out)
{
    const char *name = argv[*i], *v = optval(argc, argv, i);
    if (!v)
        return -1;
    if (!pd_parse_long(v, out) || *out < lo || *out > hi) {
        fprintf(stderr, "paddiser model: %s: '%s' is not an integer in %ld..%ld\n", name, v, lo, hi);
        return -1;
    }
    return 0;
}

static int opt_double(int argc, char **argv, int *i, double lo, double hi, double *out)
{
    const char *name = argv[*i], *v = optval(argc, argv, i);
    if (!v)
        return -1;
    if (!pd_parse_double(v, out) || !(*out >= lo && *out <= hi)) {
        fprintf(stderr, "paddiser model: %s: '%s' is not a number in [%g, %g]\n", name, v, lo, hi);
        return -1;
    }
    return 0;
}

/* One option of a subcommand: a string (out is const char **), an integer
 * in [lo, hi] (long *) or a number in [lo, hi] (double *). */
typedef struct {
    const char *name, *alias;
    enum { OPT_STRING, OPT_LONG, OPT_DOUBLE } kind;
    void *out;
    double lo, hi;
} model_opt;

/* Parses argv[1..] against opts; at most one positional argument, stored in
 * *positional (NULL: none allowed). 0, or 2 (usage error, reported). */
static int parse_opts(const char *cmd, int argc, char **argv, const model_opt *opts, size_t nopts,
                      const char **positional)
{
    for (int i = 1; i < argc; i++) {
        const model_opt *o = NULL;
        for (size_t k = 0; k < nopts && !o; k++)
            if (!strcmp(argv[i], opts[k].name) || (opts[k].alias && !strcmp(argv[i], opts[k].alias)))
                o = &opts[k];
        int rc = 0;
        if (o && o->kind == OPT_STRING)
            rc = (*(const char **)o->out = optval(argc, argv, &i)) ? 0 : -1;
        else if (o && o->kind == OPT_LONG)
            rc = opt_long(argc, argv, &i, (long)o->lo, (long)o->hi, o->out);
        else if (o)
            rc = opt_double(argc, argv, &i, o->lo, o->hi, o->out);
        else if (argv[i][0] == '-' && argv[i][1]) {
            fprintf(stderr, "paddiser model %s: unknown option '%s'\n", cmd, argv[i]);
            return 2;
        } else if (positional && !*positional)
            *positional = argv[i];
        else {
            fprintf(stderr, "paddiser model %s: unexpected argument '%s'\n", cmd, argv[i]);
            return 2;
        }
        if (rc)
            return 2;
    }
    return 0;
}

/* Loads DATA and splits its code regions as train does: held[i] for the
 * held-out rows, train[i] for the others. 0, or the exit status (reported). */
static int load_split(const char *cmd, const char *data, double holdout, long seed, pd_model_data *d,
                      unsigned char **held, unsigned char **train, size_t *nheld)
{
    char err[512];
    *held = *train = NULL;
    if (pd_model_data_load(data, d, err, sizeof err) != PD_OK) {
        fprintf(stderr, "paddiser model %s: %s\n", cmd, err);
        return 2;
    }
    *held = calloc(d->n ? d->n : 1, 1);
    *train = calloc(d->n ? d->n : 1, 1);
    if (!*held || !*train || pd_model_split_regions(d, holdout, (unsigned)seed, *held) != PD_OK) {
        fprintf(stderr, "paddiser model %s: out of memory\n", cmd);
        free(*held), free(*train);
        *held = *train = NULL;
        pd_model_data_free(d);
        return 1;
    }
    *nheld = 0;
    for (size_t i = 0; i < d->n; i++) {
        (*train)[i] = !(*held)[i];
        *nheld += (*held)[i];
    }
    return 0;
}

static void print_metrics(const char *label, const pd_model_metrics *m)
{
    printf("%-9s rows %6zu   MAPE(t_hybrid) %6.2f%%   R^2(f) %7.4f   | f = 1 baseline: MAPE %6.2f%%  R^2 %7.4f\n",
           label, m->rows, m->mape_t, m->r2_f, m->mape_t_linear, m->r2_f_linear);
}

static int cmd_train(int argc, char **argv)
{
    const char *data = NULL, *outp = NULL;
    double holdout = 0.2;
    long seed = 1, rounds = 150, depth = 4, threads = 1;
    double eta = 0.1;
    const model_opt opts[] = {
        {"-o", "--output", OPT_STRING, &outp, 0, 0},
        {"--holdout", NULL, OPT_DOUBLE, &holdout, 0, 0.9},
        {"--seed", NULL, OPT_LONG, &seed, 0, 0xffffffffL},
        {"--rounds", NULL, OPT_LONG, &rounds, 1, 100000},
        {"--depth", NULL, OPT_LONG, &depth, 1, 16},
        {"--eta", NULL, OPT_DOUBLE, &eta, 1e-4, 1},
        {"--threads", NULL, OPT_LONG, &threads, 1, 1024},
    };
    if (parse_opts("train", argc, argv, opts, PD_ARRAY_LEN(opts), &data) != 0)
        return 2;
    if (!data || !outp) {
        fprintf(stderr, "paddiser model train: need DATA.csv and -o MODEL\n");
        usage(stderr);
        return 2;
    }
    char err[512];
    pd_model_data d;
    unsigned char *held, *train;
    size_t nheld;
    int status = load_split("train", data, holdout, seed, &d, &held, &train, &nheld);
    if (status != 0)
        return status;
    status = 1;
    pd_model *m = NULL;
    pd_model_train_opts o = {.rounds = (int)rounds, .max_depth = (int)depth, .eta = eta,
                             .nthread = (int)threads, .seed = (unsigned)seed};
    m = pd_model_train(&d, train, &o, err, sizeof err);
    if (!m) {
        fprintf(stderr, "paddiser model train: %s: %s\n", data, err);
        goto out;
    }
    printf("trained on %s: %zu rows (%zu held out by region, fraction %.2f, seed %ld), %ld rounds, depth %ld, eta %g\n",
           data, d.n - nheld, nheld, holdout, seed, rounds, depth, eta);
    pd_model_metrics mt;
    if (pd_model_evaluate(m, &d, train, &mt) == PD_OK)
        print_metrics("train", &mt);
    if (nheld && pd_model_evaluate(m, &d, held, &mt) == PD_OK)
        print_metrics("held-out", &mt);
    if (pd_model_save(m, outp, err, sizeof err) != PD_OK) {
        fprintf(stderr, "paddiser model train: %s\n", err);
        goto out;
    }
    printf("model written to %s\n", outp);
    status = 0;
out:
    pd_model_free(m);
    free(held);
    free(train);
    pd_model_data_free(&d);
    return status;
}

static int cmd_eval(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "paddiser model eval: need MODEL DATA.csv\n");
        return 2;
    }
    char err[512];
    pd_model *m = pd_model_load(strcmp(argv[1], "default") ? argv[1] : NULL, err, sizeof err);
    if (!m) {
        fprintf(stderr, "paddiser model eval: %s\n", err);
        return 2;
    }
    pd_model_data d;
    if (pd_model_data_load(argv[2], &d, err, sizeof err) != PD_OK) {
        fprintf(stderr, "paddiser model eval: %s\n", err);
        pd_model_free(m);
        return 2;
    }
    pd_model_metrics mt;
    int status = 0;
    printf("model %s on %s\n", pd_model_source(m), argv[2]);
    if (pd_model_evaluate(m, &d, NULL, &mt) != PD_OK) {
        fprintf(stderr, "paddiser model eval: %s: no rows with r > 0 and t_slow > t_dram\n", argv[2]);
        status = 1;
    } else
        print_metrics("all", &mt);
    pd_model_data_free(&d);
    pd_model_free(m);
    return status;
}

static int write_rows(const char *path, const pd_model_data *d, const unsigned char *use)
{
    pd_str s = {0};
    int rc = pd_model_data_write(&s, d, use) == PD_OK ? pd_write_file_atomic(path, s.data, s.len) : -1;
    pd_str_free(&s);
    if (rc != 0)
        fprintf(stderr, "paddiser model split: cannot write %s\n", path);
    return rc;
}

/* The held-out split that train uses, as files: lets other models (the
 * shipped one, ones trained on other data) be measured on exactly the
 * regions a training run did not see. */
static int cmd_split(int argc, char **argv)
{
    const char *data = NULL, *train_out = NULL, *test_out = NULL;
    double holdout = 0.2;
    long seed = 1;
    const model_opt opts[] = {
        {"--train", NULL, OPT_STRING, &train_out, 0, 0},
        {"--test", NULL, OPT_STRING, &test_out, 0, 0},
        {"--holdout", NULL, OPT_DOUBLE, &holdout, 0, 0.9},
        {"--seed", NULL, OPT_LONG, &seed, 0, 0xffffffffL},
    };
    if (parse_opts("split", argc, argv, opts, PD_ARRAY_LEN(opts), &data) != 0)
        return 2;
    if (!data || !train_out || !test_out) {
        fprintf(stderr, "paddiser model split: need DATA.csv, --train OUT.csv and --test OUT.csv\n");
        return 2;
    }
    pd_model_data d;
    unsigned char *held, *train;
    size_t nheld;
    int status = load_split("split", data, holdout, seed, &d, &held, &train, &nheld);
    if (status != 0)
        return status;
    status = 1;
    if (write_rows(train_out, &d, train) != 0 || write_rows(test_out, &d, held) != 0)
        goto out;
    printf("%s: %zu rows to %s, %zu held-out rows (fraction %.2f of the regions, seed %ld) to %s\n", data,
           d.n - nheld, train_out, nheld, holdout, seed, test_out);
    status = 0;
out:
    free(held);
    free(train);
    pd_model_data_free(&d);
    return status;
}

static int cmd_gen(int argc, char **argv)
{
    const char *outp = NULL;
    long regions = 400, placements = 10, seed = 1;
    const model_opt opts[] = {
        {"-o", "--output", OPT_STRING, &outp, 0, 0},
        {"--regions", NULL, OPT_LONG, &regions, 1, 10000000},
        {"--placements", NULL, OPT_LONG, &placements, 1, 1000},
        {"--seed", NULL, OPT_LONG, &seed, 0, 0xffffffffL},
    };
    if (parse_opts("gen-synthetic", argc, argv, opts, PD_ARRAY_LEN(opts), NULL) != 0)
        return 2;
    if (!outp) {
        fprintf(stderr, "paddiser model gen-synthetic: need -o OUT.csv\n");
        return 2;
    }
    pd_str s = {0};
    if (pd_model_gen_synthetic(&s, (int)regions, (int)placements, (unsigned)seed) != PD_OK) {
        fprintf(stderr, "paddiser model gen-synthetic: out of memory\n");
        pd_str_free(&s);
        return 1;
    }
    int rc = strcmp(outp, "-") ? pd_write_file_atomic(outp, s.data, s.len) : (fwrite(s.data, 1, s.len, stdout) == s.len ? 0 : -1);
    pd_str_free(&s);
    if (rc != 0) {
        perror(outp);
        return 1;
    }
    if (strcmp(outp, "-"))
        printf("%ld regions x %ld placements written to %s\n", regions, placements, outp);
    return 0;
}

int cmd_model(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (!strcmp(argv[1], "train"))
        return cmd_train(argc - 1, argv + 1);
    if (!strcmp(argv[1], "eval"))
        return cmd_eval(argc - 1, argv + 1);
    if (!strcmp(argv[1], "split"))
        return cmd_split(argc - 1, argv + 1);
    if (!strcmp(argv[1], "gen-synthetic"))
        return cmd_gen(argc - 1, argv + 1);
    if (!strcmp(argv[1], "calibrate-stencil"))
        return cmd_model_calibrate_stencil(argc - 1, argv + 1);
    fprintf(stderr, "paddiser model: unknown command '%s'\n", argv[1]);
    usage(stderr);
    return 2;
}
