/* Messages for pd_status codes (include/paddiser.h). */
#include "paddiser.h"

const char *pd_strerror(int status)
{
    switch (status) {
    case PD_OK: return "success";
    case PD_EINVAL: return "invalid argument";
    case PD_ENOMEM: return "out of memory";
    case PD_ESTATE: return "call out of order (runtime not initialised, already initialised, or task not begun)";
    case PD_ENOTFOUND: return "unknown object or task id";
    case PD_EUNSUPPORTED: return "not supported on this machine";
    case PD_EIO: return "system call or file error";
    default: return "unknown paddiser status code";
    }
}
