/* tests/run_cli.sh: a program with neither OpenMP nor MPI. Prints its
 * arguments (and with "env" first, LD_PRELOAD), reads stdin to its end,
 * and exits with status 7. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        printf("arg %d: %s\n", i, argv[i]);
    if (argc > 1 && !strcmp(argv[1], "env")) {
        const char *p = getenv("LD_PRELOAD");
        printf("LD_PRELOAD=%s\n", p ? p : "");
    }
    char buf[256];
    size_t n, total = 0;
    while ((n = fread(buf, 1, sizeof buf, stdin)) > 0)
        total += n;
    printf("stdin %zu bytes\n", total);
    return 7;
}
