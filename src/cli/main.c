/* paddiser: one binary, one subcommand per concern (see commands.h). */
#include <stdio.h>
#include <string.h>

#include "cli/commands.h"

static const struct {
    const char *name;
    int (*fn)(int, char **);
    const char *help;
} commands[] = {
    {"bench", cmd_bench, "run a parametric benchmark study from an IOPS-style YAML file"},
    {"report", cmd_report, "write a self-contained HTML report for a run directory"},
    {"sim", cmd_sim, "simulate placements on a heterogeneous-memory machine"},
    {"model", cmd_model, "train or evaluate the performance model"},
    {"plan", cmd_plan, "compute a load-balanced DRAM placement for a problem file"},
    {"tiers", cmd_tiers, "list the memory tiers this machine exposes"},
};

static void usage(FILE *out)
{
    fprintf(out, "usage: paddiser <command> [options]\n\ncommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(out, "  %-8s %s\n", commands[i].name, commands[i].help);
    fprintf(out, "\nRun 'paddiser <command> --help' for a command's options.\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return 0;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(argv[1], commands[i].name))
            return commands[i].fn(argc - 1, argv + 1);
    fprintf(stderr, "paddiser: unknown command '%s'\n", argv[1]);
    usage(stderr);
    return 2;
}
