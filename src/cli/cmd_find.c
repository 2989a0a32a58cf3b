/* paddiser find: the executions of a run directory by variable values and
 * status, as IOPS's `iops find` lists them, and a live status table
 * (--watch). The work is src/bench/find.c's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/find.h"
#include "cli/commands.h"
#include "common/cliopt.h"
#include "common/util.h"

#define CMD "paddiser find"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: paddiser find RUN_DIR [VAR=VALUE...] [options]\n"
            "\n"
            "Lists the executions of a paddiser bench (or IOPS) run directory with\n"
            "their status and variables, those matching every VAR=VALUE filter\n"
            "(numbers and booleans match loosely: x=4 matches 4.0, flag=true True).\n"
            "RUN_DIR may also be a workdir (each run_NNN is listed) or one exec_NNNN.\n"
            "\n"
            "options:\n"
            "  --status STATUS        only executions with this status (SUCCEEDED, FAILED,\n"
            "                         RUNNING, PENDING, TIMEOUT, CANCELLED, ...; any case)\n"
            "  --show-command         add the command column\n"
            "  --full                 values in full (default: cut to their last 30 characters)\n"
            "  --hide COL1,COL2       hide columns (path, status, command, a variable)\n"
            "  -w, --watch [SECS]     a live status table refreshed every SECS seconds\n"
            "                         (default 5) until every execution has finished or the\n"
            "                         run ended; Ctrl-C stops it. Not a terminal: a plain\n"
            "                         snapshot each time something changed\n"
            "  --interval SECS        the refresh interval of --watch (0.1 to 3600)\n"
            "  -h, --help             this help\n"
            "\n"
            "Exit status: 0 listed (also when nothing matched), 1 no run found there,\n"
            "2 usage error, 130 or 143 a watch stopped by SIGINT or SIGTERM.\n"
            "See paddiser(1), and docs/bench.md in the source tree.\n");
}

int cmd_find(int argc, char **argv)
{
    enum { OPT_STATUS = 1000, OPT_SHOW_COMMAND, OPT_FULL, OPT_HIDE, OPT_INTERVAL };
    static const struct option longopts[] = {
        {"status", required_argument, NULL, OPT_STATUS},
        {"show-command", no_argument, NULL, OPT_SHOW_COMMAND},
        {"full", no_argument, NULL, OPT_FULL},
        {"hide", required_argument, NULL, OPT_HIDE},
        {"watch", optional_argument, NULL, 'w'},
        {"interval", required_argument, NULL, OPT_INTERVAL},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    pd_find_options o = {.interval_s = 5};
    const char **free_args = calloc((size_t)argc + 1, sizeof *free_args);
    size_t nfree = 0;
    int c, rc = 2;
    if (!free_args) {
        fprintf(stderr, CMD ": out of memory\n");
        return 1;
    }
    optind = 0;
    /* leading '-': VAR=VALUE filters may come before or after the options */
    while ((c = pd_opt_next(CMD, argc, argv, "-hw", longopts)) != -1) {
        switch (c) {
        case 1:
            free_args[nfree++] = optarg;
            break;
        case 'h':
            usage(stdout);
            rc = 0;
            goto out;
        case OPT_STATUS:
            o.status = optarg;
            break;
        case OPT_SHOW_COMMAND:
            o.show_command = true;
            break;
        case OPT_FULL:
            o.full = true;
            break;
        case OPT_HIDE:
            o.hide = optarg;
            break;
        case 'w': {
            o.watch = true;
            const char *secs = optarg;
            double d;
            /* "--watch 2": the next word when it is a number (a filter has an '=') */
            if (!secs && optind < argc && pd_parse_double(argv[optind], &d))
                secs = argv[optind++];
            if (secs && !pd_opt_double(CMD, "--watch", secs, 0.1, 3600, &o.interval_s))
                goto out;
            break;
        }
        case OPT_INTERVAL:
            if (!pd_opt_double(CMD, "--interval", optarg, 0.1, 3600, &o.interval_s))
                goto out;
            break;
        default:
            goto out;
        }
    }
    if (nfree == 0) {
        usage(stderr);
        goto out;
    }
    o.path = free_args[0];
    o.filters = free_args + 1;
    o.nfilters = nfree - 1;
    rc = pd_find_main(&o, stdout);
out:
    free(free_args);
    return rc;
}
