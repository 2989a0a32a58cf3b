/* Placeholder until issue #5 lands; replaced by the real command. */
#include <stdio.h>

#include "cli/commands.h"

int cmd_sim(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "paddiser sim: not built yet (issue #5)\n");
    return 2;
}
