/* Placeholder until issue #6 lands; replaced by the real command. */
#include <stdio.h>

#include "cli/commands.h"

int cmd_tiers(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "paddiser tiers: not built yet (issue #6)\n");
    return 2;
}
