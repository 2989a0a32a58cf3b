/* paddiser bench: parametric studies from an IOPS-style YAML file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench/run.h"
#include "bench/runlog.h"
#include "bench/summary.h"
#include "cli/commands.h"
#include "common/cliopt.h"
#include "common/util.h"

#define CMD "paddiser bench"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: paddiser bench CONFIG.yaml [options]\n"
            "       paddiser bench --summarize RUN_DIR   (recompute the run summary)\n"
            "\n"
            "Runs every combination of the study's variables, each repetition in\n"
            "workdir/run_NNN/exec_NNNN/repetition_NNN, and collects results.csv.\n"
            "\n"
            "options:\n"
            "  --resume [RUN_DIR]     continue an interrupted run (default: the latest\n"
            "                         run_NNN in workdir); succeeded repetitions are kept\n"
            "  --workdir DIR          override benchmark.workdir\n"
            "  --executor local|slurm override benchmark.executor\n"
            "  --parallel N           override benchmark.parallel (1 to 4096)\n"
            "  --dry-run              check the study and list its executions; run nothing\n"
            "  --json                 with --dry-run: the listing as one JSON object on\n"
            "                         stdout (notes on stderr)\n"
            "  --fail-fast            start no more repetitions after the first failure\n"
            "                         (those running finish; --resume runs the rest)\n"
            "  --max-fail N           the same after N failed repetitions\n"
            "  --fail-on-missing-metric  a repetition whose parser did not give every\n"
            "                         metric of its script fails (default: a warning)\n"
            "  --no-program-check     do not check that the command's program exists\n"
            "  --results-layout iops|short  results.csv's columns: IOPS's flattened\n"
            "                         benchmark.*, execution.*, vars.*, ..., metrics.*\n"
            "                         (default; a resumed run keeps its file's), or\n"
            "                         execution_id,repetition,VARS,METRICS\n"
            "  --log-file PATH        the run's log (default: RUN_DIR/paddiser.log)\n"
            "  --log-level LEVEL      DEBUG, INFO (default), WARNING or ERROR\n"
            "  --machine NAME         merge the study's machines.NAME overrides (default:\n"
            "                         $IOPS_MACHINE, if set)\n"
            "  --resolve              print the study as merged for the machine; run nothing\n"
            "  --use-cache            take repetitions measured before from benchmark.cache_file\n"
            "  --cache-only           only those: run nothing, skip the rest\n"
            "  --max-core-hours N     override benchmark.max_core_hours (stop starting\n"
            "                         repetitions once N core-hours were used)\n"
            "  --time-estimate S[,S]  with --dry-run: core-hours for S seconds a repetition\n"
            "  --summarize RUN_DIR    recompute RUN_DIR's resource summary from its traces\n"
            "                         (alone: no CONFIG.yaml, no other option)\n"
            "  --progress             elapsed time and ETA on each progress line (on\n"
            "                         by default when stderr is a terminal)\n"
            "  -q, --quiet            no progress lines\n"
            "  -h, --help             this help\n"
            "\n"
            "Exit status: 0 all repetitions succeeded, 1 some failed or their results\n"
            "could not be saved, 2 configuration error (nothing was run), 130 or 143\n"
            "interrupted by SIGINT or SIGTERM (resume with --resume).\n"
            "See paddiser(1), and docs/bench.md in the source tree.\n");
}

static bool is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The options of the machines, cache and budget features (config.h,
 * cache.h, budget.h): bench_study_option parses them, false after saying
 * why. */
enum { OPT_MACHINE = 2000, OPT_RESOLVE, OPT_USE_CACHE, OPT_CACHE_ONLY, OPT_MAX_CORE_HOURS, OPT_TIME_ESTIMATE };

static bool bench_study_option(int c, const char *arg, pd_bench_options *opt, double *estimates, size_t *nest)
{
    char *end;
    switch (c) {
    case OPT_MACHINE:
        if (!*arg)
            return pd_opt_error(CMD, "--machine needs a machine name"), false;
        opt->machine = arg;
        return true;
    case OPT_RESOLVE:
        opt->resolve = true;
        return true;
    case OPT_USE_CACHE:
        opt->use_cache = true;
        return true;
    case OPT_CACHE_ONLY: /* implies --use-cache, as in IOPS */
        opt->cache_only = opt->use_cache = true;
        return true;
    case OPT_MAX_CORE_HOURS:
        opt->max_core_hours = strtod(arg, &end);
        if (end == arg || *end || !(opt->max_core_hours > 0) || opt->max_core_hours > 1e15)
            return pd_opt_error(CMD, "--max-core-hours must be a positive number, not '%s'", arg), false;
        return true;
    default: /* --time-estimate 300 or 300,600,900 */
        for (const char *p = arg;; p = end + 1) {
            double d = strtod(p, &end);
            if (end == p || (*end && *end != ',') || !(d > 0) || d > 1e12 || *nest >= 16)
                return pd_opt_error(CMD, "--time-estimate takes up to 16 positive seconds, comma-separated, not '%s'",
                                    arg),
                       false;
            estimates[(*nest)++] = d;
            if (!*end)
                return true;
        }
    }
}

int cmd_bench(int argc, char **argv)
{
    enum {
        OPT_RESUME = 1000,
        OPT_WORKDIR,
        OPT_EXECUTOR,
        OPT_PARALLEL,
        OPT_DRY_RUN,
        OPT_JSON,
        OPT_PROGRESS,
        OPT_SUMMARIZE,
        OPT_FAIL_FAST,
        OPT_MAX_FAIL,
        OPT_MISSING_METRIC,
        OPT_NO_PROGRAM_CHECK,
        OPT_LOG_FILE,
        OPT_LOG_LEVEL,
        OPT_RESULTS_LAYOUT
    };
    static const struct option longopts[] = {
        {"resume", optional_argument, NULL, OPT_RESUME},
        {"workdir", required_argument, NULL, OPT_WORKDIR},
        {"executor", required_argument, NULL, OPT_EXECUTOR},
        {"parallel", required_argument, NULL, OPT_PARALLEL},
        {"dry-run", no_argument, NULL, OPT_DRY_RUN},
        {"json", no_argument, NULL, OPT_JSON},
        {"summarize", required_argument, NULL, OPT_SUMMARIZE},
        {"fail-fast", no_argument, NULL, OPT_FAIL_FAST},
        {"max-fail", required_argument, NULL, OPT_MAX_FAIL},
        {"fail-on-missing-metric", no_argument, NULL, OPT_MISSING_METRIC},
        {"no-program-check", no_argument, NULL, OPT_NO_PROGRAM_CHECK},
        {"log-file", required_argument, NULL, OPT_LOG_FILE},
        {"log-level", required_argument, NULL, OPT_LOG_LEVEL},
        {"results-layout", required_argument, NULL, OPT_RESULTS_LAYOUT},
        {"machine", required_argument, NULL, OPT_MACHINE},
        {"resolve", no_argument, NULL, OPT_RESOLVE},
        {"use-cache", no_argument, NULL, OPT_USE_CACHE},
        {"cache-only", no_argument, NULL, OPT_CACHE_ONLY},
        {"max-core-hours", required_argument, NULL, OPT_MAX_CORE_HOURS},
        {"time-estimate", required_argument, NULL, OPT_TIME_ESTIMATE},
        {"quiet", no_argument, NULL, 'q'},
        {"progress", no_argument, NULL, OPT_PROGRESS},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    pd_bench_options opt = {.executor = -1};
    bool fail_fast = false;
    double estimates[16];
    size_t nest = 0;
    long n;
    int c;
    /* --summarize is its own command with its own options and help
     * ("--summarize --help" is its help, not bench's). */
    for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
        if (!strcmp(argv[i], "--summarize") || !strncmp(argv[i], "--summarize=", 12))
            return pd_summary_main(argc, argv);
    /* the command line as typed, for the log (getopt reorders argv); kept
     * for the whole process (static: no early return has to free it) */
    static char **typed;
    free(typed);
    if (!(typed = malloc(((size_t)argc + 1) * sizeof *typed))) {
        fprintf(stderr, CMD ": out of memory\n");
        return 1;
    }
    memcpy(typed, argv, (size_t)argc * sizeof *typed);
    opt.ctl.argc = argc;
    opt.ctl.argv = typed;
    optind = 0;
    while ((c = pd_opt_next(CMD, argc, argv, "qh", longopts)) != -1) {
        switch (c) {
        case 'h':
            usage(stdout);
            return 0;
        case OPT_SUMMARIZE: /* recompute a run's summary: summary.c owns it (and its options) */
            return pd_summary_main(argc, argv);
        case OPT_RESUME:
            opt.resume = true;
            if (optarg && *optarg)
                opt.resume_dir = optarg;
            else if (!optarg && optind < argc && argv[optind][0] != '-' && is_dir(argv[optind]))
                opt.resume_dir = argv[optind++]; /* "--resume RUN_DIR": a directory, CONFIG is a file */
            break;
        case OPT_WORKDIR:
            opt.workdir = optarg;
            break;
        case OPT_EXECUTOR:
            if (!strcmp(optarg, "local"))
                opt.executor = 0;
            else if (!strcmp(optarg, "slurm"))
                opt.executor = 1;
            else {
                fprintf(stderr, CMD ": --executor must be local or slurm, not '%s'\n", optarg);
                return 2;
            }
            break;
        case OPT_PARALLEL:
            if (!pd_opt_long(CMD, "--parallel", optarg, 1, 4096, &n))
                return 2;
            opt.parallel = (int)n;
            break;
        case OPT_DRY_RUN:
            opt.dry_run = true;
            break;
        case OPT_JSON:
            opt.json = true;
            break;
        case OPT_FAIL_FAST:
            fail_fast = true;
            break;
        case OPT_MAX_FAIL:
            if (!pd_opt_long(CMD, "--max-fail", optarg, 1, 1000000000, &n))
                return 2;
            opt.ctl.max_fail = n;
            break;
        case OPT_MISSING_METRIC:
            opt.ctl.missing_metric_fails = true;
            break;
        case OPT_NO_PROGRAM_CHECK:
            opt.ctl.no_program_check = true;
            break;
        case OPT_LOG_FILE:
            if (!*optarg)
                return pd_opt_error(CMD, "--log-file needs a path");
            opt.ctl.log_file = optarg;
            break;
        case OPT_LOG_LEVEL:
            if (!pd_log_level_parse(optarg, &opt.ctl.log_level))
                return pd_opt_error(CMD, "--log-level must be DEBUG, INFO, WARNING, ERROR or CRITICAL, not '%s'",
                                    optarg);
            opt.ctl.log_level_set = true;
            break;
        case OPT_RESULTS_LAYOUT:
            if (!strcmp(optarg, "iops"))
                opt.results_layout = PD_RESULTS_IOPS;
            else if (!strcmp(optarg, "short"))
                opt.results_layout = PD_RESULTS_SHORT;
            else
                return pd_opt_error(CMD, "--results-layout must be iops or short, not '%s'", optarg);
            break;
        case 'q':
            opt.quiet = true;
            break;
        case OPT_PROGRESS:
            opt.progress = true;
            break;
        case OPT_MACHINE:
        case OPT_RESOLVE:
        case OPT_USE_CACHE:
        case OPT_CACHE_ONLY:
        case OPT_MAX_CORE_HOURS:
        case OPT_TIME_ESTIMATE:
            if (!bench_study_option(c, optarg, &opt, estimates, &nest))
                return 2;
            break;
        default:
            return 2;
        }
    }
    if (optind >= argc) {
        usage(stderr);
        return 2;
    }
    opt.config_path = argv[optind];
    if (optind + 1 < argc)
        return pd_opt_error(CMD, "unexpected argument '%s' (one CONFIG.yaml)", argv[optind + 1]);
    if (fail_fast && opt.ctl.max_fail > 1)
        return pd_opt_error(CMD, "--fail-fast and --max-fail %ld contradict each other (--fail-fast is --max-fail 1)",
                            opt.ctl.max_fail);
    if (fail_fast)
        opt.ctl.max_fail = 1;
    if (opt.resume && opt.dry_run) {
        fprintf(stderr, CMD ": --resume and --dry-run cannot be combined\n");
        return 2;
    }
    if (opt.json && !opt.dry_run)
        return pd_opt_error(CMD, "--json goes with --dry-run");
    if (nest && !opt.dry_run)
        return pd_opt_error(CMD, "--time-estimate goes with --dry-run");
    if (!opt.machine && getenv("IOPS_MACHINE") && *getenv("IOPS_MACHINE"))
        opt.machine = getenv("IOPS_MACHINE"); /* as IOPS: the option wins over the variable */
    if (isatty(STDERR_FILENO)) /* a terminal sees the ETA, a log file stays as it was */
        opt.progress = true;
    opt.time_estimates = estimates;
    opt.ntime_estimates = nest;
    return pd_bench_main(&opt);
}
