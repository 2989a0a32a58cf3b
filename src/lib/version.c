/* pd_version(): the version compiled into the library, so that a program can
 * tell which libpaddiser it actually runs against (the header's macros give
 * the one it was compiled with). */
#include "paddiser.h"

const char *pd_version(void)
{
    return PD_VERSION_STRING;
}
