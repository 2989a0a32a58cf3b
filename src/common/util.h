/* Small shared helpers: growable strings, whole-file reads, number parsing.
 * Nothing here aborts: allocation failure is reported to the caller. */
#ifndef PD_COMMON_UTIL_H
#define PD_COMMON_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PD_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* Growable NUL-terminated string. Zero-initialise before use. */
typedef struct {
    char *data;
    size_t len, cap;
    bool oom; /* set once an append failed; later appends are ignored */
} pd_str;

void pd_str_append(pd_str *s, const char *text);
void pd_str_appendn(pd_str *s, const char *text, size_t n);
void pd_str_printf(pd_str *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void pd_str_vprintf(pd_str *s, const char *fmt, va_list ap);
void pd_str_clear(pd_str *s);
void pd_str_free(pd_str *s);
/* Hands the buffer to the caller (never NULL unless oom) and resets s. */
char *pd_str_take(pd_str *s);

/* Whole regular file (NUL-terminated); NULL with errno, EINVAL for a file
 * that is not regular (device, FIFO, socket). */
char *pd_read_file(const char *path, size_t *len_out);
/* strerror for pd_read_file's errno ("not a regular file" for EINVAL). */
const char *pd_read_strerror(int err);
/* Writes (truncating) or atomically replaces a file: 0 or -1 with errno. */
int pd_write_file(const char *path, const char *data, size_t len);
int pd_write_file_atomic(const char *path, const char *data, size_t len);
/* How long pd_write_file_atomic waits for a FIFO's reader before it fails
 * with EPIPE (default 10 s; tests shorten it). */
void pd_set_fifo_reader_wait(unsigned ms);
/* mkdir -p; 0 on success (existing dirs are fine). */
int pd_mkdir_p(const char *path, unsigned mode);
/* dir + "/" + name into out; returns 0, or -1 with errno = ENAMETOOLONG when
 * it does not fit (a silently cut path would name another file). */
int pd_path_join(char *out, size_t outlen, const char *dir, const char *name);

/* Strict parsers: whole string must be a number (leading/trailing blanks ok). */
bool pd_parse_double(const char *s, double *out);
/* Median of v[0..n) (sorts v in place); n must be > 0. */
double pd_median(double *v, size_t n);
bool pd_parse_long(const char *s, long *out);
bool pd_parse_u64(const char *s, unsigned long long *out);

/* Wall clock in seconds (CLOCK_REALTIME) and monotonic seconds. */
double pd_now(void);
double pd_monotonic(void);

/* System page size in bytes (4096 if sysconf cannot tell). */
size_t pd_page_size(void);

/* Short hostname (up to the first '.'), as the samplers name their files. */
void pd_short_hostname(char *buf, size_t len);

/* SplitMix64: a small, fast, seedable generator for reproducible runs
 * (advances *state). */
static inline uint64_t pd_splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

char *pd_strdup(const char *s);
/* Trim ASCII whitespace in place; returns s. */
char *pd_trim(char *s);

#endif
