/* paddiser model: train / evaluate the performance model (docs/model.md),
 * generate synthetic training data, calibrate the stencil alpha table. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "cli/model_calibrate.h"
#include "cli/random_calibrate.h"
#include "common/cliopt.h"
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
            "        measure the stencil alpha table (micro-benchmark; models/stencil_alpha.csv)\n"
            "  calibrate-random -o OUT.csv [--llc-kib N] [--max-mib N] [--accesses N] [--reps N] [--threads N]\n"
            "        measure the random-access cost table (micro-benchmark; models/random_cost.csv)\n"
            "\n"
            "options:\n"
            "  -h, --help   this help\n"
            "\n"
            "Run 'paddiser model <command> --help' for a command's options.\n",
            PD_MODEL_CSV_HEADER);
}

static void train_usage(FILE *out)
{
    fprintf(out,
            "usage: paddiser model train DATA.csv -o MODEL [options]\n"
            "Trains f(features, r) on DATA (columns: %s),\n"
            "holding out a fraction of the code regions and reporting the accuracy on them.\n"
            "options:\n"
            "  -o, --output MODEL   where to write the model (.json: JSON, anything else: UBJSON)\n"
            "      --holdout F      fraction of the code regions held out, in [0, 0.9] (default 0.2)\n"
            "      --seed N         seed of the region split and the training (default 1)\n"
            "      --rounds N       boosting rounds, 1..100000 (default 150)\n"
            "      --depth N        maximum tree depth, 1..16 (default 4)\n"
            "      --eta X          learning rate, in [0.0001, 1] (default 0.1)\n"
            "      --threads N      training threads, 1..1024 (default 1)\n"
            "      --json           the summary as one JSON object on stdout (scripts)\n"
            "  -h, --help           this help\n",
            PD_MODEL_CSV_HEADER);
}

static void eval_usage(FILE *out)
{
    fprintf(out, "usage: paddiser model eval MODEL DATA.csv [--json]\n"
                 "Accuracy of MODEL ('default' = the shipped model) on DATA.\n"
                 "options:\n"
                 "      --json   the accuracy as one JSON object on stdout (scripts)\n"
                 "  -h, --help   this help\n");
}

static void split_usage(FILE *out)
{
    fprintf(out, "usage: paddiser model split DATA.csv --train OUT.csv --test OUT.csv [options]\n"
                 "Writes the region split of 'model train' (same F and seed: same held-out regions)\n"
                 "as two CSVs.\n"
                 "options:\n"
                 "      --train OUT.csv   where to write the training rows\n"
                 "      --test OUT.csv    where to write the held-out rows\n"
                 "      --holdout F       fraction of the code regions held out, in [0, 0.9] (default 0.2)\n"
                 "      --seed N          seed of the region split (default 1)\n"
                 "  -h, --help            this help\n");
}

static void gen_usage(FILE *out)
{
    fprintf(out, "usage: paddiser model gen-synthetic -o OUT.csv [options]\n"
                 "Synthetic code regions from a mechanistic two-tier model (provisional data).\n"
                 "options:\n"
                 "  -o, --output OUT.csv   where to write ('-': stdout)\n"
                 "      --regions N        code regions, 1..10000000 (default 400)\n"
                 "      --placements N     placements per region, 1..1000 (default 10)\n"
                 "      --seed N           generator seed (default 1)\n"
                 "  -h, --help             this help\n");
}

#define SEED_MAX 0xffffffffL

/* Options shared by train, split and gen-synthetic. */
enum { OPT_HOLDOUT = 1000, OPT_SEED, OPT_ROUNDS, OPT_DEPTH, OPT_ETA, OPT_THREADS, OPT_TRAIN, OPT_TEST,
       OPT_REGIONS, OPT_PLACEMENTS, OPT_JSON };

/* At most one positional argument after the options, stored in *positional
 * (NULL: none allowed). 0, or 2 (usage error, reported). */
static int positionals(const char *cmd, int argc, char **argv, const char **positional)
{
    if (positional && optind < argc)
        *positional = argv[optind++];
    if (optind < argc)
        return pd_opt_error(cmd, "unexpected argument '%s'", argv[optind]);
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

/* JSON number, or null where the value is not finite (jansson refuses NaN). */
static json_t *jnum(double v) { return isfinite(v) ? json_real(v) : json_null(); }

static json_t *metrics_json(const pd_model_metrics *m)
{
    json_t *o = json_object();
    json_object_set_new(o, "rows", json_integer((json_int_t)m->rows));
    json_object_set_new(o, "mape_t_hybrid_pct", jnum(m->mape_t));
    json_object_set_new(o, "r2_f", jnum(m->r2_f));
    json_object_set_new(o, "baseline_mape_t_hybrid_pct", jnum(m->mape_t_linear));
    json_object_set_new(o, "baseline_r2_f", jnum(m->r2_f_linear));
    return o;
}

/* Prints o on one line and frees it; 1 when it could not be printed. */
static int print_json(json_t *o)
{
    char *text = o ? json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(10)) : NULL;
    json_decref(o);
    if (!text) {
        fprintf(stderr, "paddiser model: out of memory\n");
        return 1;
    }
    printf("%s\n", text);
    free(text);
    return 0;
}

static int cmd_train(int argc, char **argv)
{
    const char *data = NULL, *outp = NULL;
    double holdout = 0.2;
    long seed = 1, rounds = 150, depth = 4, threads = 1;
    double eta = 0.1;
    static const struct option longopts[] = {
        {"output", required_argument, NULL, 'o'},   {"holdout", required_argument, NULL, OPT_HOLDOUT},
        {"seed", required_argument, NULL, OPT_SEED}, {"rounds", required_argument, NULL, OPT_ROUNDS},
        {"depth", required_argument, NULL, OPT_DEPTH}, {"eta", required_argument, NULL, OPT_ETA},
        {"threads", required_argument, NULL, OPT_THREADS}, {"help", no_argument, NULL, 'h'},
        {"json", no_argument, NULL, OPT_JSON},      {NULL, 0, NULL, 0},
    };
    const char *cmd = "paddiser model train";
    int c;
    bool ok = true, json = false;
    optind = 0;
    while (ok && (c = pd_opt_next(cmd, argc, argv, "o:h", longopts)) != -1) {
        switch (c) {
        case 'o': outp = optarg; break;
        case OPT_HOLDOUT: ok = pd_opt_double(cmd, "--holdout", optarg, 0, 0.9, &holdout); break;
        case OPT_SEED: ok = pd_opt_long(cmd, "--seed", optarg, 0, SEED_MAX, &seed); break;
        case OPT_ROUNDS: ok = pd_opt_long(cmd, "--rounds", optarg, 1, 100000, &rounds); break;
        case OPT_DEPTH: ok = pd_opt_long(cmd, "--depth", optarg, 1, 16, &depth); break;
        case OPT_ETA: ok = pd_opt_double(cmd, "--eta", optarg, 1e-4, 1, &eta); break;
        case OPT_THREADS: ok = pd_opt_long(cmd, "--threads", optarg, 1, 1024, &threads); break;
        case OPT_JSON: json = true; break;
        case 'h': train_usage(stdout); return 0;
        default: return 2;
        }
    }
    if (!ok || positionals(cmd, argc, argv, &data) != 0)
        return 2;
    if (!data || !outp)
        return pd_opt_error(cmd, "need DATA.csv and -o MODEL");
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
    if (!json)
        printf("trained on %s: %zu rows (%zu held out by region, fraction %.2f, seed %ld), %ld rounds, depth %ld, "
               "eta %g\n",
               data, d.n - nheld, nheld, holdout, seed, rounds, depth, eta);
    pd_model_metrics mt;
    json_t *jtrain = json_null(), *jheld = json_null();
    if (pd_model_evaluate(m, &d, train, &mt) == PD_OK) {
        if (json) {
            json_decref(jtrain);
            jtrain = metrics_json(&mt);
        } else
            print_metrics("train", &mt);
    }
    if (nheld && pd_model_evaluate(m, &d, held, &mt) == PD_OK) {
        if (json) {
            json_decref(jheld);
            jheld = metrics_json(&mt);
        } else
            print_metrics("held-out", &mt);
    }
    if (pd_model_save(m, outp, err, sizeof err) != PD_OK) {
        fprintf(stderr, "paddiser model train: %s\n", err);
        json_decref(jtrain);
        json_decref(jheld);
        goto out;
    }
    if (json) {
        json_t *o = json_object();
        json_object_set_new(o, "data", json_string(data));
        json_object_set_new(o, "model", json_string(outp));
        json_object_set_new(o, "rows_train", json_integer((json_int_t)(d.n - nheld)));
        json_object_set_new(o, "rows_held_out", json_integer((json_int_t)nheld));
        json_object_set_new(o, "holdout", json_real(holdout));
        json_object_set_new(o, "seed", json_integer(seed));
        json_object_set_new(o, "rounds", json_integer(rounds));
        json_object_set_new(o, "depth", json_integer(depth));
        json_object_set_new(o, "eta", json_real(eta));
        json_object_set_new(o, "train", jtrain);
        json_object_set_new(o, "held_out", jheld);
        status = print_json(o);
        goto out;
    }
    json_decref(jtrain);
    json_decref(jheld);
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
    static const struct option longopts[] = {
        {"help", no_argument, NULL, 'h'},
        {"json", no_argument, NULL, OPT_JSON},
        {NULL, 0, NULL, 0},
    };
    const char *cmd = "paddiser model eval";
    int c;
    bool json = false;
    optind = 0;
    while ((c = pd_opt_next(cmd, argc, argv, "h", longopts)) != -1) {
        if (c == OPT_JSON) {
            json = true;
            continue;
        }
        if (c != 'h')
            return 2;
        eval_usage(stdout);
        return 0;
    }
    if (argc - optind != 2)
        return pd_opt_error(cmd, "need MODEL DATA.csv");
    argv += optind - 1; /* argv[1] MODEL, argv[2] DATA */
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
    if (!json)
        printf("model %s on %s\n", pd_model_source(m), argv[2]);
    if (pd_model_evaluate(m, &d, NULL, &mt) != PD_OK) {
        fprintf(stderr, "paddiser model eval: %s: no rows with r > 0 and t_slow > t_dram\n", argv[2]);
        status = 1;
    } else if (json) {
        json_t *o = json_object();
        json_object_set_new(o, "model", json_string(pd_model_source(m)));
        json_object_set_new(o, "data", json_string(argv[2]));
        json_object_set_new(o, "all", metrics_json(&mt));
        status = print_json(o);
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
    static const struct option longopts[] = {
        {"train", required_argument, NULL, OPT_TRAIN},     {"test", required_argument, NULL, OPT_TEST},
        {"holdout", required_argument, NULL, OPT_HOLDOUT}, {"seed", required_argument, NULL, OPT_SEED},
        {"help", no_argument, NULL, 'h'},                  {NULL, 0, NULL, 0},
    };
    const char *cmd = "paddiser model split";
    int c;
    bool ok = true;
    optind = 0;
    while (ok && (c = pd_opt_next(cmd, argc, argv, "h", longopts)) != -1) {
        switch (c) {
        case OPT_TRAIN: train_out = optarg; break;
        case OPT_TEST: test_out = optarg; break;
        case OPT_HOLDOUT: ok = pd_opt_double(cmd, "--holdout", optarg, 0, 0.9, &holdout); break;
        case OPT_SEED: ok = pd_opt_long(cmd, "--seed", optarg, 0, SEED_MAX, &seed); break;
        case 'h': split_usage(stdout); return 0;
        default: return 2;
        }
    }
    if (!ok || positionals(cmd, argc, argv, &data) != 0)
        return 2;
    if (!data || !train_out || !test_out) {
        return pd_opt_error(cmd, "need DATA.csv, --train OUT.csv and --test OUT.csv");
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
    static const struct option longopts[] = {
        {"output", required_argument, NULL, 'o'},
        {"regions", required_argument, NULL, OPT_REGIONS},
        {"placements", required_argument, NULL, OPT_PLACEMENTS},
        {"seed", required_argument, NULL, OPT_SEED},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *cmd = "paddiser model gen-synthetic";
    int c;
    bool ok = true;
    optind = 0;
    while (ok && (c = pd_opt_next(cmd, argc, argv, "o:h", longopts)) != -1) {
        switch (c) {
        case 'o': outp = optarg; break;
        case OPT_REGIONS: ok = pd_opt_long(cmd, "--regions", optarg, 1, 10000000, &regions); break;
        case OPT_PLACEMENTS: ok = pd_opt_long(cmd, "--placements", optarg, 1, 1000, &placements); break;
        case OPT_SEED: ok = pd_opt_long(cmd, "--seed", optarg, 0, SEED_MAX, &seed); break;
        case 'h': gen_usage(stdout); return 0;
        default: return 2;
        }
    }
    if (!ok || positionals(cmd, argc, argv, NULL) != 0)
        return 2;
    if (!outp)
        return pd_opt_error(cmd, "need -o OUT.csv");
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
    static const struct {
        const char *name;
        int (*fn)(int, char **);
    } subs[] = {
        {"train", cmd_train},
        {"eval", cmd_eval},
        {"split", cmd_split},
        {"gen-synthetic", cmd_gen},
        {"calibrate-stencil", cmd_model_calibrate_stencil},
        {"calibrate-random", cmd_model_calibrate_random},
    };
    int before = pd_opt_before_subcommand("paddiser model", argc, argv, usage);
    if (before >= 0)
        return before;
    for (size_t k = 0; k < PD_ARRAY_LEN(subs); k++)
        if (!strcmp(argv[optind], subs[k].name))
            return subs[k].fn(argc - optind, argv + optind);
    fprintf(stderr, "paddiser model: unknown command '%s'\n", argv[optind]);
    usage(stderr);
    return 2;
}
