/* paddiser report RUN_DIR [-o FILE]: the self-contained HTML report. */
#include <stdio.h>
#include <string.h>

#include "cli/commands.h"
#include "common/cliopt.h"
#include "report/report.h"

#define CMD "paddiser report"

static void usage(FILE *out)
{
    fprintf(out, "usage: paddiser report RUN_DIR [-o FILE]\n"
                 "Writes a self-contained HTML report (inline SVG, no network) of a run directory:\n"
                 "metric plots per variable, heatmaps, trace time series, per-task bars.\n"
                 "  -o, --output FILE   where to write (default: RUN_DIR/report.html)\n"
                 "  -h, --help          this help\n");
}

int cmd_report(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"output", required_argument, NULL, 'o'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *run_dir = NULL, *out = NULL;
    int c;
    optind = 0;
    while ((c = pd_opt_next(CMD, argc, argv, "o:h", longopts)) != -1) {
        switch (c) {
        case 'o':
            out = optarg;
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            return 2;
        }
    }
    if (optind >= argc) {
        usage(stderr);
        return 2;
    }
    run_dir = argv[optind];
    if (optind + 1 < argc) {
        fprintf(stderr, CMD ": one run directory only ('%s' and '%s' given)\n", run_dir, argv[optind + 1]);
        return 2;
    }
    char err[1024];
    if (pd_report_write(run_dir, out, err, sizeof err) != 0) {
        fprintf(stderr, "paddiser report: %s\n", err);
        return 1;
    }
    if (out)
        printf("wrote %s\n", out);
    else
        printf("wrote %s/report.html\n", run_dir);
    return 0;
}
