/* paddiser bench: parametric studies from an IOPS-style YAML file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bench/run.h"
#include "bench/summary.h"
#include "cli/commands.h"
#include "common/util.h"

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
            "  --parallel N           override benchmark.parallel\n"
            "  --dry-run              check the study and list its executions; run nothing\n"
            "  -q, --quiet            no progress lines\n"
            "  -h, --help             this help\n"
            "\n"
            "Exit status: 0 all repetitions succeeded, 1 some failed, 2 configuration\n"
            "error (nothing was run), 130 interrupted (resume with --resume).\n"
            "See docs/bench.md.\n");
}

int cmd_bench(int argc, char **argv)
{
    pd_bench_options opt = {.executor = -1};
    for (int i = 1; i < argc; i++) /* recompute a run's summary: summary.c owns it */
        if (!strcmp(argv[i], "--summarize") || !strncmp(argv[i], "--summarize=", 12))
            return pd_summary_main(argc, argv);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(a, "--resume")) {
            opt.resume = true;
            struct stat st; /* the optional RUN_DIR is a directory, CONFIG a file */
            if (i + 1 < argc && argv[i + 1][0] != '-' && stat(argv[i + 1], &st) == 0 && S_ISDIR(st.st_mode))
                opt.resume_dir = argv[++i];
        } else if (!strcmp(a, "--workdir") || !strcmp(a, "--executor") || !strcmp(a, "--parallel")) {
            if (i + 1 >= argc) {
                fprintf(stderr, "paddiser bench: %s needs a value\n", a);
                return 2;
            }
            const char *v = argv[++i];
            if (!strcmp(a, "--workdir")) {
                opt.workdir = v;
            } else if (!strcmp(a, "--executor")) {
                if (!strcmp(v, "local"))
                    opt.executor = 0;
                else if (!strcmp(v, "slurm"))
                    opt.executor = 1;
                else {
                    fprintf(stderr, "paddiser bench: --executor must be local or slurm, not '%s'\n", v);
                    return 2;
                }
            } else {
                long n;
                if (!pd_parse_long(v, &n) || n < 1 || n > 4096) {
                    fprintf(stderr, "paddiser bench: --parallel must be an integer from 1 to 4096, not '%s'\n", v);
                    return 2;
                }
                opt.parallel = (int)n;
            }
        } else if (!strcmp(a, "--dry-run")) {
            opt.dry_run = true;
        } else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
            opt.quiet = true;
        } else if (a[0] == '-') {
            fprintf(stderr, "paddiser bench: unknown option '%s'\n", a);
            usage(stderr);
            return 2;
        } else if (!opt.config_path) {
            opt.config_path = a;
        } else {
            fprintf(stderr, "paddiser bench: unexpected argument '%s'\n", a);
            usage(stderr);
            return 2;
        }
    }
    if (!opt.config_path) {
        usage(stderr);
        return 2;
    }
    if (opt.resume && opt.dry_run) {
        fprintf(stderr, "paddiser bench: --resume and --dry-run cannot be combined\n");
        return 2;
    }
    return pd_bench_main(&opt);
}
