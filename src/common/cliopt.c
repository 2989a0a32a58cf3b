#include "common/cliopt.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "common/util.h"

int pd_opt_next(const char *cmd, int argc, char **argv, const char *shortopts, const struct option *longopts)
{
    /* getopt names argv[0] in its messages: the command, for this call. */
    char *argv0 = argv[0];
    argv[0] = (char *)cmd;
    opterr = 1;
    int c = getopt_long(argc, argv, shortopts, longopts, NULL);
    argv[0] = argv0;
    /* "--summarize --help": getopt takes --help as the option's value.  A
     * value that is exactly --help or -h, given as its own word, means help
     * (a literal value "--help" can still be passed as --opt=--help). */
    if (optarg && c != '?' && c != ':' && optind > 0 && optarg == argv[optind - 1] &&
        (!strcmp(optarg, "--help") || !strcmp(optarg, "-h")) && strchr(shortopts, 'h'))
        return 'h';
    if (c == '?' || c == ':') {
        fprintf(stderr, "Try '%s --help'.\n", cmd);
        return '?';
    }
    return c;
}

int pd_opt_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: ", cmd);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\nTry '%s --help'.\n", cmd);
    va_end(ap);
    return 2;
}

bool pd_opt_long(const char *cmd, const char *name, const char *value, long lo, long hi, long *out)
{
    long v;
    if (!pd_parse_long(value, &v) || v < lo || v > hi) {
        fprintf(stderr, "%s: %s must be an integer in %ld..%ld, got '%s'\n", cmd, name, lo, hi, value);
        return false;
    }
    *out = v;
    return true;
}

bool pd_opt_long_of(const char *cmd, const struct option *longopts, int val, const char *value, long lo, long hi,
                    long *out)
{
    const struct option *o = longopts;
    while (o->name && o->val != val)
        o++;
    char name[64];
    snprintf(name, sizeof name, "--%s", o->name ? o->name : "?");
    return pd_opt_long(cmd, name, value, lo, hi, out);
}

bool pd_opt_double(const char *cmd, const char *name, const char *value, double lo, double hi, double *out)
{
    double v;
    if (!pd_parse_double(value, &v) || !(v >= lo && v <= hi)) {
        fprintf(stderr, "%s: %s must be a number in [%g, %g], got '%s'\n", cmd, name, lo, hi, value);
        return false;
    }
    *out = v;
    return true;
}

int pd_opt_before_subcommand(const char *cmd, int argc, char **argv, void (*usage)(FILE *))
{
    static const struct option longopts[] = {
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int c;
    optind = 0; /* '+': the options before the subcommand only */
    while ((c = pd_opt_next(cmd, argc, argv, "+h", longopts)) != -1) {
        if (c != 'h')
            return 2;
        usage(stdout);
        return 0;
    }
    if (optind >= argc) {
        usage(stderr);
        return 2;
    }
    return -1;
}
