/* Command-line parsing shared by paddiser and paddiser-probe: a thin layer
 * over GNU getopt_long so that every command and subcommand reports usage
 * errors the same way. A parse looks like
 *
 *     optind = 0;                       (full reinitialisation of getopt)
 *     while ((c = pd_opt_next("paddiser sim run", argc, argv, "hw:", longopts)) != -1)
 *         switch (c) { ...; case '?': return 2; }
 *
 * getopt_long itself recognises the options, "--opt value" and
 * "--opt=value", unique abbreviations of long names, and reports unknown
 * options and missing values under the command's name; pd_opt_next adds the
 * hint "Try 'paddiser sim run --help'." on the next line. A leading '+' in
 * the short options stops at the first non-option (a command followed by a
 * subcommand). */
#ifndef PD_COMMON_CLIOPT_H
#define PD_COMMON_CLIOPT_H

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>

/* getopt_long(argc, argv, shortopts, longopts) with cmd in its messages;
 * on an unknown option or a missing value the message and the hint are on
 * stderr and the result is '?' (the caller's usage error, exit status 2). */
int pd_opt_next(const char *cmd, int argc, char **argv, const char *shortopts, const struct option *longopts);

/* The options before a subcommand (only --help/-h): with none given and a
 * subcommand next, returns -1 with optind at the subcommand; else prints
 * usage (to stdout after --help, to stderr when the subcommand is missing)
 * and returns the exit status (0, or 2). */
int pd_opt_before_subcommand(const char *cmd, int argc, char **argv, void (*usage)(FILE *));

/* Any other usage error: "CMD: MESSAGE" and the hint on stderr. Returns 2,
 * the exit status of a usage error. */
int pd_opt_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Value of option name (e.g. "--reps") as an integer in [lo, hi] or a
 * number in [lo, hi]. On a bad value: "CMD: NAME must be an integer in
 * LO..HI, got 'VALUE'" (or "a number in [LO, HI]") on stderr, false. */
bool pd_opt_long(const char *cmd, const char *name, const char *value, long lo, long hi, long *out);
bool pd_opt_double(const char *cmd, const char *name, const char *value, double lo, double hi, double *out);
/* pd_opt_long for the long option whose val is val in longopts (named
 * "--NAME" in the message). */
bool pd_opt_long_of(const char *cmd, const struct option *longopts, int val, const char *value, long lo, long hi,
                    long *out);

#endif
