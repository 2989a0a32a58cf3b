#include "common/sysroot.h"

#include <stdio.h>
#include <stdlib.h>

#include "common/util.h"

static const char *root_path(char *buf, size_t len, const char *env, const char *def, const char *rel)
{
    const char *root = getenv(env);
    if (!root || !*root)
        root = def;
    snprintf(buf, len, "%s/%s", root, rel);
    return buf;
}

const char *pd_proc_path(char *buf, size_t len, const char *rel)
{
    return root_path(buf, len, "PADDISER_PROC_ROOT", "/proc", rel);
}

const char *pd_sys_path(char *buf, size_t len, const char *rel)
{
    return root_path(buf, len, "PADDISER_SYS_ROOT", "/sys", rel);
}

const char *pd_dev_path(char *buf, size_t len, const char *rel)
{
    return root_path(buf, len, "PADDISER_DEV_ROOT", "/dev", rel);
}

size_t pd_sys_size(const char *rel)
{
    char path[512], *text;
    pd_sys_path(path, sizeof path, rel);
    if (!(text = pd_read_file(path, NULL)))
        return 0;
    char *end;
    unsigned long long v = strtoull(text, &end, 10);
    v <<= *end == 'K' ? 10 : *end == 'M' ? 20 : *end == 'G' ? 30 : 0;
    free(text);
    return (size_t)v;
}
