/* Shared helpers of the libFuzzer harnesses (docs/fuzz.md). The entry points
 * the harnesses fuzz take either text (in memory) or a path/directory; for
 * the latter each harness writes the bytes to a file in one private
 * directory made with mkdtemp at start-up and removed at exit. */
#ifndef PD_FUZZ_COMMON_H
#define PD_FUZZ_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* NUL-terminated copy of the input (the text APIs take C strings). */
static inline char *fuzz_cstr(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (!s)
        abort();
    memcpy(s, data, size);
    s[size] = '\0';
    return s;
}

static char fuzz_dir[64];
static char fuzz_files[4][128]; /* files a harness may leave between inputs */

static void fuzz_cleanup(void)
{
    for (size_t i = 0; i < sizeof fuzz_files / sizeof fuzz_files[0]; i++)
        if (fuzz_files[i][0])
            unlink(fuzz_files[i]);
    if (fuzz_dir[0])
        rmdir(fuzz_dir);
}

/* The private directory (made on first use; removed at exit). */
static inline const char *fuzz_tmpdir(void)
{
    if (!fuzz_dir[0]) {
        const char *t = getenv("TMPDIR");
        snprintf(fuzz_dir, sizeof fuzz_dir, "%s/pd-fuzz-XXXXXX", t && *t && strlen(t) < 40 ? t : "/tmp");
        if (!mkdtemp(fuzz_dir)) {
            perror("fuzz: mkdtemp");
            abort();
        }
        atexit(fuzz_cleanup);
    }
    return fuzz_dir;
}

/* Writes data to <tmpdir>/<name> (slot: 0..3, remembered for the clean-up)
 * and returns the path. */
static inline const char *fuzz_write(int slot, const char *name, const uint8_t *data, size_t size)
{
    snprintf(fuzz_files[slot], sizeof fuzz_files[slot], "%s/%s", fuzz_tmpdir(), name);
    FILE *f = fopen(fuzz_files[slot], "wb");
    if (!f || (size && fwrite(data, 1, size, f) != size) || fclose(f) != 0) {
        perror("fuzz: writing the input");
        abort();
    }
    return fuzz_files[slot];
}

static inline void fuzz_remove(int slot)
{
    if (fuzz_files[slot][0])
        unlink(fuzz_files[slot]);
    fuzz_files[slot][0] = '\0';
}

#endif
