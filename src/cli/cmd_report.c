/* paddiser report RUN_DIR [-o FILE]: the self-contained HTML report. */
#include <stdio.h>
#include <string.h>

#include "cli/commands.h"
#include "report/report.h"

static void usage(FILE *out)
{
    fprintf(out, "usage: paddiser report RUN_DIR [-o FILE]\n"
                 "Writes a self-contained HTML report (inline SVG, no network) of a run directory:\n"
                 "metric plots per variable, heatmaps, trace time series, per-task bars.\n"
                 "  -o, --output FILE   where to write (default: RUN_DIR/report.html)\n");
}

int cmd_report(int argc, char **argv)
{
    const char *run_dir = NULL, *out = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 0;
        }
        if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
            if (i + 1 >= argc) {
                fprintf(stderr, "paddiser report: %s needs a file name\n", a);
                return 2;
            }
            out = argv[++i];
        } else if (!strncmp(a, "--output=", 9)) {
            out = a + 9;
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "paddiser report: unknown option '%s'\n", a);
            usage(stderr);
            return 2;
        } else if (run_dir) {
            fprintf(stderr, "paddiser report: one run directory only ('%s' and '%s' given)\n", run_dir, a);
            return 2;
        } else {
            run_dir = a;
        }
    }
    if (!run_dir) {
        usage(stderr);
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
