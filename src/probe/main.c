/* Placeholder until issue #2 lands: paddiser-probe cpu|gpu|io. */
#include <stdio.h>

int main(void)
{
    fprintf(stderr, "paddiser-probe: not built yet (issue #2)\n");
    return 2;
}
