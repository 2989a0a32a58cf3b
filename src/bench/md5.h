/* MD5 (RFC 1321, computed by GNU Nettle), only to spell the execution cache's param_hash the way
 * IOPS does (hashlib.md5 of the parameters' JSON), so that a cache file is
 * shared with IOPS. Not for anything that needs a secure hash. */
#ifndef PD_BENCH_MD5_H
#define PD_BENCH_MD5_H

#include <stddef.h>

/* The digest of data[0..len) as 32 lowercase hex digits and a NUL. */
void pd_md5_hex(const void *data, size_t len, char out[33]);

#endif
