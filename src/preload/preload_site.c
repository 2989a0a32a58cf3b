/* Allocation sites (dladdr, backtrace) and the hints file (preload_site.h). */
#include <dlfcn.h>
#include <execinfo.h>
#include <fnmatch.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "preload/preload.h"
#include "preload/preload_site.h"

/* [self_lo, self_hi): this library's loaded segments. A return address
 * there is the runtime's own code (or a hook). */
static uintptr_t self_lo, self_hi;

static int find_self(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    uintptr_t me = (uintptr_t)arg, lo = UINTPTR_MAX, hi = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD)
            continue;
        uintptr_t a = info->dlpi_addr + ph->p_vaddr;
        if (a < lo)
            lo = a;
        if (a + ph->p_memsz > hi)
            hi = a + ph->p_memsz;
    }
    if (me < lo || me >= hi)
        return 0;
    self_lo = lo;
    self_hi = hi;
    return 1;
}

static int in_self(uintptr_t a) { return a >= self_lo && a < self_hi; }

void pdp_site_setup(void)
{
    dl_iterate_phdr(find_self, (void *)(uintptr_t)&pdp_site_setup);
    void *warm[2];
    (void)backtrace(warm, 2);
}

/* Allocation wrappers: their callers name the site. */
static int wrapper_module(const char *base)
{
    return !strncmp(base, "libc.so", 7) || !strncmp(base, "libstdc++.so", 12) || !strncmp(base, "libgfortran.so", 14);
}

static const char *base_name(const char *path)
{
    if (!path || !*path)
        return "?";
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

/* 1 with the module's base name and the address's offset in it. */
static int resolve(uintptr_t a, const char **base, uintptr_t *off)
{
    Dl_info di;
    if (!dladdr((void *)a, &di) || !di.dli_fbase) {
        *base = "?";
        *off = a;
        return 0;
    }
    *base = base_name(di.dli_fname);
    *off = a - (uintptr_t)di.dli_fbase;
    return 1;
}

int pdp_site_of(void *caller, char *site, size_t len)
{
    uintptr_t a = (uintptr_t)caller, off;
    if (in_self(a))
        return -1;
    const char *base;
    resolve(a, &base, &off);
    if (wrapper_module(base)) {
        /* Walk up: past this library's frames (the hook), past the
         * wrappers, to the first other frame. This library again above a
         * wrapper: the runtime allocated through the C library. */
        void *bt[16];
        int n = backtrace(bt, 16), i = 0;
        while (i < n && in_self((uintptr_t)bt[i]))
            i++;
        for (; i < n; i++) {
            uintptr_t b = (uintptr_t)bt[i], boff;
            const char *bbase;
            if (in_self(b))
                return -1;
            resolve(b, &bbase, &boff);
            if (!wrapper_module(bbase)) {
                base = bbase;
                off = boff;
                break;
            }
        }
    }
    snprintf(site, len, "%.80s+0x%lx", base, (unsigned long)off);
    return 0;
}

/* ---- hints ------------------------------------------------------------- */

typedef struct {
    char glob[PDP_NAME_MAX];
    pd_access_hint hint;
} hint_rule;

static hint_rule *rules;
static int nrules;

static int parse_pattern(const char *s, pd_pattern *out)
{
    static const struct {
        const char *name;
        pd_pattern p;
    } names[] = {{"stream", PD_PATTERN_STREAM}, {"stride", PD_PATTERN_STRIDE},   {"stencil", PD_PATTERN_STENCIL},
                 {"random", PD_PATTERN_RANDOM}, {"unknown", PD_PATTERN_UNKNOWN}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!strcmp(s, names[i].name)) {
            *out = names[i].p;
            return 1;
        }
    return 0;
}

static int parse_size(const char *s, size_t *out)
{
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (!*s || *end || *s == '-')
        return 0;
    *out = (size_t)v;
    return 1;
}

void pdp_hints_load(const char *path)
{
    FILE *f = fopen(path, "re");
    if (!f) {
        pdp_log(0, "hints file %s cannot be read: %m; objects keep the unknown pattern", path);
        return;
    }
    char line[512];
    int lineno = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        char *hash = strchr(line, '#');
        /* '#' inside a glob ("app+0x1234#0") is part of it: a comment
         * starts at a '#' that begins a word. */
        while (hash && hash != line && hash[-1] != ' ' && hash[-1] != '\t')
            hash = strchr(hash + 1, '#');
        if (hash)
            *hash = '\0';
        char *save = NULL, *f1 = strtok_r(line, " \t\r\n", &save);
        if (!f1)
            continue;
        char *f2 = strtok_r(NULL, " \t\r\n", &save), *f3 = strtok_r(NULL, " \t\r\n", &save);
        char *f4 = strtok_r(NULL, " \t\r\n", &save), *f5 = strtok_r(NULL, " \t\r\n", &save);
        hint_rule r = {.hint = {PD_PATTERN_UNKNOWN, 0, 0, 0}};
        if (!f2 || f5 || strlen(f1) >= sizeof r.glob || !parse_pattern(f2, &r.hint.pattern) ||
            (f3 && !parse_size(f3, &r.hint.elem_size)) || (f4 && !parse_size(f4, &r.hint.stride))) {
            pdp_log(0, "%s:%d: expected '<site-or-name-glob> stream|stride|stencil|random|unknown [elem_size] "
                       "[stride]': line skipped", path, lineno);
            continue;
        }
        memcpy(r.glob, f1, strlen(f1) + 1);
        hint_rule *n = realloc(rules, (size_t)(nrules + 1) * sizeof *n);
        if (!n)
            break;
        rules = n;
        rules[nrules++] = r;
    }
    fclose(f);
    pdp_log(1, "%d hint(s) from %s", nrules, path);
}

int pdp_hint_for(const char *name, const char *site, pd_access_hint *out)
{
    for (int i = 0; i < nrules; i++)
        if (!fnmatch(rules[i].glob, name, 0) || !fnmatch(rules[i].glob, site, 0)) {
            *out = rules[i].hint;
            return 1;
        }
    return 0;
}
