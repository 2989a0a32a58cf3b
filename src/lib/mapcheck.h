/* Is [addr, addr+size) the application's own readable and writable memory?
 * pd_object_register/update refuse anything else with PD_EINVAL: an
 * unmapped range, a size past the end of the mapping, code or read-only
 * data. Such a range would hang the simulated backend (its page table
 * grows over the whole range), make the page sampler fault forever (it
 * cannot restore a protection the range never had), or crash at the first
 * move. */
#ifndef PD_LIB_MAPCHECK_H
#define PD_LIB_MAPCHECK_H

#include <stddef.h>

/* 1 when every byte lies in readable and writable mappings; 0 with the
 * reason in why (e.g. "bytes 0x...-0x... are not mapped"); 1 as well when
 * /proc/self/maps cannot be read (no procfs: nothing to check against). */
int rt_range_is_writable_memory(const void *addr, size_t size, char *why, size_t whylen);

#endif
