/* Placeholder until issue #3 lands; replaced by the real command. */
#include <stdio.h>

#include "cli/commands.h"

int cmd_bench(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "paddiser bench: not built yet (issue #3)\n");
    return 2;
}
