#include "common/util.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static bool str_reserve(pd_str *s, size_t extra)
{
    if (s->oom)
        return false;
    size_t need = s->len + extra + 1;
    if (need <= s->cap)
        return true;
    size_t cap = s->cap ? s->cap : 64;
    while (cap < need)
        cap *= 2;
    char *p = realloc(s->data, cap);
    if (!p) {
        s->oom = true;
        return false;
    }
    s->data = p;
    s->cap = cap;
    return true;
}

void pd_str_appendn(pd_str *s, const char *text, size_t n)
{
    if (!str_reserve(s, n))
        return;
    memcpy(s->data + s->len, text, n);
    s->len += n;
    s->data[s->len] = '\0';
}

void pd_str_append(pd_str *s, const char *text) { pd_str_appendn(s, text, strlen(text)); }

void pd_str_vprintf(pd_str *s, const char *fmt, va_list ap)
{
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (n < 0 || !str_reserve(s, (size_t)n))
        return;
    vsnprintf(s->data + s->len, (size_t)n + 1, fmt, ap);
    s->len += (size_t)n;
}

void pd_str_printf(pd_str *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    pd_str_vprintf(s, fmt, ap);
    va_end(ap);
}

void pd_str_clear(pd_str *s)
{
    s->len = 0;
    if (s->data)
        s->data[0] = '\0';
}

void pd_str_free(pd_str *s)
{
    free(s->data);
    *s = (pd_str){0};
}

char *pd_str_take(pd_str *s)
{
    if (s->oom) {
        pd_str_free(s);
        return NULL;
    }
    char *d = s->data ? s->data : pd_strdup("");
    *s = (pd_str){0};
    return d;
}

/* Regular files only: a device (/dev/zero) never ends and a FIFO blocks at
 * open, so both are refused (EINVAL, "not a regular file"); O_NONBLOCK
 * makes the open of a FIFO return at once. /proc and /sys files are
 * regular. */
char *pd_read_file(const char *path, size_t *len_out)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    struct stat st;
    int e = fstat(fd, &st) != 0 ? errno : S_ISREG(st.st_mode) ? 0 : S_ISDIR(st.st_mode) ? EISDIR : EINVAL;
    if (e) {
        close(fd);
        errno = e;
        return NULL;
    }
    int fl = fcntl(fd, F_GETFL);
    FILE *f = fl >= 0 && fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) == 0 ? fdopen(fd, "rb") : NULL;
    if (!f) {
        e = errno;
        close(fd);
        errno = e;
        return NULL;
    }
    pd_str s = {0};
    char buf[8192];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0)
        pd_str_appendn(&s, buf, n);
    int err = ferror(f) ? EIO : 0;
    fclose(f);
    if (err || s.oom) {
        pd_str_free(&s);
        errno = err ? err : ENOMEM;
        return NULL;
    }
    if (len_out)
        *len_out = s.len;
    return pd_str_take(&s);
}

const char *pd_read_strerror(int err)
{
    return err == EINVAL ? "not a regular file" : strerror(err);
}

int pd_write_file(const char *path, const char *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    size_t w = fwrite(data, 1, len, f);
    int rc = fclose(f);
    return (w == len && rc == 0) ? 0 : -1;
}

/* data to fd, whole, through short writes and EINTR */
static int write_all(int fd, const char *data, size_t len)
{
    for (size_t off = 0; off < len;) {
        ssize_t w = write(fd, data + off, len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            if (w == 0)
                errno = EIO;
            return -1;
        }
        off += (size_t)w;
    }
    return 0;
}

static unsigned fifo_wait_ms = 10000;

void pd_set_fifo_reader_wait(unsigned ms) { fifo_wait_ms = ms; }

/* A FIFO opened for writing waits for a reader; one that never comes (a
 * FIFO planted where a run writes results.csv) hung the run at its end,
 * deaf to SIGTERM. So the open does not block: it is tried every 10 ms
 * until a reader is there (a pipeline's reader may start a moment after
 * the writer) or the wait is over, then fails with EPIPE, what writing to
 * a pipe nobody reads gives ("Broken pipe" says more than open's ENXIO).
 * Writes block as usual once it is open. */
static int open_fifo_writer(const char *path)
{
    for (unsigned waited = 0;; waited += 10) {
        int fd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
        if (fd >= 0) {
            int fl = fcntl(fd, F_GETFL);
            if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) != 0) {
                int e = errno;
                close(fd);
                errno = e;
                return -1;
            }
            return fd;
        }
        if (errno != ENXIO)
            return -1;
        if (waited >= fifo_wait_ms) {
            errno = EPIPE;
            return -1;
        }
        struct timespec ten = {0, 10 * 1000 * 1000};
        nanosleep(&ten, NULL);
    }
}

int pd_write_file_atomic(const char *path, const char *data, size_t len)
{
    /* A device, FIFO or socket (-o /dev/null, -o /dev/stdout, a pipe), or a
     * link to one, is written to: renaming over it replaced the device node
     * itself (as root, `-o /dev/null` left /dev/null a regular file). */
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
        int fd = S_ISFIFO(st.st_mode) ? open_fifo_writer(path) : open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
            return -1;
        int rc = write_all(fd, data, len);
        if (close(fd) != 0)
            rc = -1;
        return rc;
    }
    /* The temporary name is unpredictable and created exclusively (mkstemp:
     * O_CREAT | O_EXCL, so a planted file or link there is never written
     * through; it used to be PATH.tmp.<pid>), and rename replaces a link at
     * path rather than following it. */
    char tmp[PATH_MAX];
    if (snprintf(tmp, sizeof tmp, "%s.tmp.XXXXXX", path) >= (int)sizeof tmp) {
        errno = ENAMETOOLONG;
        return -1;
    }
    int fd = mkostemp(tmp, O_CLOEXEC);
    if (fd < 0)
        return -1;
    int rc = fchmod(fd, 0644); /* as a plain create would, not mkstemp's 0600 */
    if (rc == 0)
        rc = write_all(fd, data, len);
    if (close(fd) != 0)
        rc = -1;
    if (rc == 0 && rename(tmp, path) != 0)
        rc = -1;
    if (rc != 0) {
        int e = errno;
        unlink(tmp);
        errno = e;
    }
    return rc;
}

int pd_mkdir_p(const char *path, unsigned mode)
{
    char buf[PATH_MAX];
    size_t n = strlen(path);
    if (n == 0 || n >= sizeof buf) {
        errno = ENAMETOOLONG;
        return -1;
    }
    memcpy(buf, path, n + 1);
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(buf, mode) != 0 && errno != EEXIST)
            return -1;
        *p = '/';
    }
    if (mkdir(buf, mode) != 0 && errno != EEXIST)
        return -1;
    return 0;
}

static bool only_space(const char *p)
{
    while (*p && isspace((unsigned char)*p))
        p++;
    return *p == '\0';
}

bool pd_parse_double(const char *s, double *out)
{
    if (!s)
        return false;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || errno == ERANGE || !only_space(end))
        return false;
    *out = v;
    return true;
}

bool pd_parse_long(const char *s, long *out)
{
    if (!s)
        return false;
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (end == s || errno == ERANGE || !only_space(end))
        return false;
    *out = v;
    return true;
}

bool pd_parse_u64(const char *s, unsigned long long *out)
{
    if (!s)
        return false;
    while (isspace((unsigned char)*s))
        s++;
    if (*s == '-')
        return false;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (end == s || errno == ERANGE || !only_space(end))
        return false;
    *out = v;
    return true;
}

double pd_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double pd_monotonic(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

size_t pd_page_size(void)
{
    long ps = sysconf(_SC_PAGESIZE);
    return ps > 0 ? (size_t)ps : 4096;
}

void pd_short_hostname(char *buf, size_t len)
{
    if (len == 0)
        return;
    if (gethostname(buf, len) != 0)
        snprintf(buf, len, "localhost");
    buf[len - 1] = '\0';
    char *dot = strchr(buf, '.');
    if (dot)
        *dot = '\0';
}

char *pd_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

char *pd_trim(char *s)
{
    char *p = s;
    while (*p && isspace((unsigned char)*p))
        p++;
    size_t n = strlen(p);
    while (n > 0 && isspace((unsigned char)p[n - 1]))
        n--;
    memmove(s, p, n);
    s[n] = '\0';
    return s;
}

int pd_path_join(char *out, size_t outlen, const char *dir, const char *name)
{
    int n = snprintf(out, outlen, "%s/%s", dir, name);
    if (n < 0 || (size_t)n >= outlen) {
        if (outlen)
            out[0] = '\0';
        errno = ENAMETOOLONG;
        return -1;
    }
    return 0;
}

static int cmp_median(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double pd_median(double *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_median);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}
