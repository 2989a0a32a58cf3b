/* Every /proc and /sys path the project reads goes through here, so that
 * tests can point the code at fixture trees:
 *   PADDISER_PROC_ROOT  replaces /proc   (e.g. stat, meminfo, diskstats, self/mountstats)
 *   PADDISER_SYS_ROOT   replaces /sys    (e.g. block/<dev>/slaves, devices/system/node)
 *   PADDISER_DEV_ROOT   replaces /dev    (device nodes named by mount sources)
 */
#ifndef PD_COMMON_SYSROOT_H
#define PD_COMMON_SYSROOT_H

#include <stddef.h>

/* Writes "<root>/<rel>" into buf; rel has no leading slash. Returns buf. */
const char *pd_proc_path(char *buf, size_t len, const char *rel);
const char *pd_sys_path(char *buf, size_t len, const char *rel);
const char *pd_dev_path(char *buf, size_t len, const char *rel);

/* A number in the sysfs file rel with an optional K, M or G suffix (cache
 * sizes read "32768K"), times that unit; 0 when the file is missing or
 * holds none. */
size_t pd_sys_size(const char *rel);

#endif
