/* Placeholder until issue #7 lands; replaced by the real command. */
#include <stdio.h>

#include "cli/commands.h"

int cmd_report(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "paddiser report: not built yet (issue #7)\n");
    return 2;
}
