/* paddiser: one binary, one subcommand per concern (see commands.h). */
#include <stdio.h>
#include <string.h>

#include "cli/commands.h"
#include "common/cliopt.h"
#include "paddiser.h"

static const struct {
    const char *name;
    int (*fn)(int, char **);
    const char *help;
} commands[] = {
    {"bench", cmd_bench, "run a parametric benchmark study from an IOPS-style YAML file"},
    {"find", cmd_find, "list a run directory's executions by variables and status (--watch: live)"},
    {"report", cmd_report, "write a self-contained HTML report for a run directory"},
    {"sim", cmd_sim, "simulate placements on a heterogeneous-memory machine"},
    {"model", cmd_model, "train or evaluate the performance model"},
    {"plan", cmd_plan, "compute a load-balanced DRAM placement for a problem file"},
    {"tiers", cmd_tiers, "list the memory tiers this machine exposes"},
    {"run", cmd_run, "run an unmodified program under the runtime (LD_PRELOAD)"},
};

static void usage(FILE *out)
{
    fprintf(out, "usage: paddiser <command> [options]\n"
                 "       paddiser --help | --version\n\ncommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(out, "  %-8s %s\n", commands[i].name, commands[i].help);
    fprintf(out, "\noptions:\n"
                 "  -h, --help     this help\n"
                 "      --version  print the version and exit\n"
                 "\nRun 'paddiser <command> --help' for a command's options.\n");
}

int main(int argc, char **argv)
{
    enum { OPT_VERSION = 1000 };
    static const struct option longopts[] = {
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, OPT_VERSION},
        {NULL, 0, NULL, 0},
    };
    optind = 0;
    int c; /* '+': the options before the command only */
    while ((c = pd_opt_next("paddiser", argc, argv, "+h", longopts)) != -1) {
        switch (c) {
        case 'h':
            usage(stdout);
            return 0;
        case OPT_VERSION:
            printf("paddiser %s\n", pd_version());
            return 0;
        default:
            return 2;
        }
    }
    if (optind >= argc) {
        usage(stderr);
        return 2;
    }
    const char *cmd = argv[optind];
    if (!strcmp(cmd, "help")) {
        usage(stdout);
        return 0;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(cmd, commands[i].name))
            return commands[i].fn(argc - optind, argv + optind);
    fprintf(stderr, "paddiser: unknown command '%s'\n", cmd);
    usage(stderr);
    return 2;
}
