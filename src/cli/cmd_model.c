/* Placeholder until issue #4 lands; replaced by the real command. */
#include <stdio.h>

#include "cli/commands.h"

int cmd_model(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "paddiser model: not built yet (issue #4)\n");
    return 2;
}
