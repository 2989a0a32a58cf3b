/* The execution cache's param_hash, as IOPS spells it (hashlib.md5 of the
 * parameters' JSON, lowercase hex): GNU Nettle's MD5 (nettle-dev). */
#include "bench/md5.h"

#include <nettle/md5.h>

void pd_md5_hex(const void *data, size_t len, char out[33])
{
    static const char hex[] = "0123456789abcdef";
    struct md5_ctx ctx;
    uint8_t digest[MD5_DIGEST_SIZE];
    md5_init(&ctx);
    md5_update(&ctx, len, data);
    md5_digest(&ctx, sizeof digest, digest);
    for (size_t i = 0; i < sizeof digest; i++) {
        out[2 * i] = hex[digest[i] >> 4];
        out[2 * i + 1] = hex[digest[i] & 15];
    }
    out[32] = '\0';
}
