/* GPU sources other than nvidia-smi's fixed query: the choice of source, and
 * amd-smi / rocm-smi / xpu-smi output turned into trace rows. Their CSV
 * columns move between tool versions, so every column is found by its header
 * name, with the older names as alternatives; a value a tool prints as N/A,
 * or does not print at all, is written empty. */
#include "probe/gpu_source.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/csv.h"
#include "probe/sample.h"

/* ---- small helpers ---- */

void pd_gpu_vendor_name(char *out, size_t len, const char *vendor, const char *name)
{
    while (name && isspace((unsigned char)*name))
        name++;
    if (!name || !*name || strcasecmp(name, "N/A") == 0)
        snprintf(out, len, "%s GPU", vendor);
    else if (strcasestr(name, vendor))
        snprintf(out, len, "%s", name);
    else
        snprintf(out, len, "%s %s", vendor, name);
}

/* The number a cell starts with ("(1410Mhz)", " 35.50", "32768.00 MiB"),
 * or "" for N/A, lists and text. */
static void number_of(const char *v, char *buf, size_t len)
{
    buf[0] = '\0';
    if (!v)
        return;
    while (*v == ' ' || *v == '(')
        v++;
    size_t n = 0;
    while ((isdigit((unsigned char)v[n]) || v[n] == '.' || (n == 0 && v[n] == '-')) && n + 1 < len)
        n++;
    if (n == 0 || (n == 1 && v[0] == '-'))
        return;
    memcpy(buf, v, n);
    buf[n] = '\0';
}

static void trim_fields(pd_csv_row *r)
{
    for (size_t i = 0; i < r->nfields; i++) {
        char *f = r->fields[i];
        while (*f == ' ' || *f == '\t')
            f++;
        size_t n = strlen(f);
        while (n > 0 && (f[n - 1] == ' ' || f[n - 1] == '\t' || f[n - 1] == '\r'))
            f[--n] = '\0';
        r->fields[i] = f;
    }
}

/* Parses tool CSV output from its header, the first line starting with key,
 * so that warnings a tool prints before the table are skipped. Fields are
 * trimmed. NULL when there is no such line. */
static pd_csv *parse_table(const char *text, const char *key)
{
    const char *p = text;
    size_t klen = strlen(key);
    while (p && *p && strncmp(p, key, klen) != 0) {
        p = strchr(p, '\n');
        p = p ? p + 1 : NULL;
    }
    if (!p || !*p)
        return NULL;
    char err[128];
    pd_csv *c = pd_csv_parse(p, err, sizeof err);
    if (!c)
        return NULL;
    trim_fields(&c->header);
    for (size_t i = 0; i < c->nrows; i++)
        trim_fields(&c->rows[i]);
    return c;
}

/* Column by header name, ignoring case (rocm-smi 2.x printed "(c)", later
 * "(C)"); -1 when absent. */
static int col(const pd_csv *c, const char *name)
{
    for (size_t i = 0; i < c->header.nfields; i++)
        if (strcasecmp(c->header.fields[i], name) == 0)
            return (int)i;
    return -1;
}

/* Columns of one trace row, in PD_GPU_HEADER order after gpu_name. */
enum { F_UTIL, F_MEMUTIL, F_MEMUSED, F_MEMTOTAL, F_TEMP, F_POWER, F_SM, F_MEMCLK, F_N };

/* Header names to try for each field, first that holds a number wins. */
typedef struct {
    const char *const *names[F_N];
    bool bytes[F_N]; /* the tool prints bytes: written as MiB */
} field_map;

static void pick(const pd_csv *c, size_t row, const field_map *m, char vals[F_N][32])
{
    for (int f = 0; f < F_N; f++) {
        vals[f][0] = '\0';
        for (const char *const *n = m->names[f]; n && *n && !vals[f][0]; n++)
            number_of(pd_csv_get(c, row, col(c, *n)), vals[f], sizeof vals[f]);
        if (m->bytes[f] && vals[f][0])
            snprintf(vals[f], sizeof vals[f], "%llu", strtoull(vals[f], NULL, 10) >> 20);
    }
}

static void emit(pd_str *out, double ts, const char *host, long idx, const char *name, char vals[F_N][32])
{
    pd_str_printf(out, "%.3f,%s,%ld,", ts, host, idx);
    pd_csv_put_field(out, name);
    for (int f = 0; f < F_N; f++)
        pd_str_printf(out, ",%s", vals[f]);
    pd_str_append(out, "\n");
}

/* Leading digits of s after skipping a prefix ("card3" -> 3); -1 if none. */
static long index_of(const char *s, const char *prefix)
{
    if (!s)
        return -1;
    if (prefix && strncmp(s, prefix, strlen(prefix)) == 0)
        s += strlen(prefix);
    char *end;
    long v = strtol(s, &end, 10);
    return end == s || v < 0 ? -1 : v;
}

static const char *known_name(const pd_gpu_names *names, long idx)
{
    return names && idx >= 0 && idx < PD_GPU_MAX_NAMED && names->known[idx] ? names->name[idx] : "";
}

#define NAMES(...) ((const char *const[]){__VA_ARGS__, NULL})

/* ---- AMD: amd-smi ---- */

/* Names differ between amd-smi releases: ROCm 6.0 wrote cur_clk, 6.1+ clk,
 * later gfx_0_clk; hotspot is the die (junction) temperature, closest to
 * nvidia-smi's temperature.gpu; umc_activity is the memory controller's
 * busy share, like utilization.memory. */
static const field_map amd_smi_map = {
    .names = {[F_UTIL] = NAMES("gfx_activity"),
              [F_MEMUTIL] = NAMES("umc_activity"),
              [F_MEMUSED] = NAMES("used_vram"),
              [F_MEMTOTAL] = NAMES("total_vram"),
              [F_TEMP] = NAMES("hotspot", "edge"),
              [F_POWER] = NAMES("socket_power", "average_socket_power"),
              [F_SM] = NAMES("gfx_0_clk", "clk", "cur_clk"),
              [F_MEMCLK] = NAMES("mem_0_clk", "MEM_clk", "MEM_cur_clk")},
};

int pd_gpu_amd_smi_format(const char *csv, const pd_gpu_names *names, double ts, const char *host,
                          pd_str *out)
{
    pd_csv *c = parse_table(csv, "gpu,");
    if (!c)
        return 0;
    int gcol = col(c, "gpu"), rows = 0;
    for (size_t r = 0; gcol >= 0 && r < c->nrows; r++) {
        long idx = index_of(pd_csv_get(c, r, gcol), NULL);
        if (idx < 0)
            continue;
        char vals[F_N][32], name[160];
        pick(c, r, &amd_smi_map, vals);
        pd_gpu_vendor_name(name, sizeof name, "AMD", known_name(names, idx));
        emit(out, ts, host, idx, name, vals);
        rows++;
    }
    pd_csv_free(c);
    return rows;
}

static void names_from(const char *csv, const char *key, const char *idx_col, const char *name_col,
                       const char *mem_col, pd_gpu_names *names)
{
    pd_csv *c = parse_table(csv, key);
    if (!c)
        return;
    int ic = col(c, idx_col), nc = col(c, name_col), mc = mem_col ? col(c, mem_col) : -1;
    for (size_t r = 0; ic >= 0 && r < c->nrows; r++) {
        long idx = index_of(pd_csv_get(c, r, ic), NULL);
        if (idx < 0 || idx >= PD_GPU_MAX_NAMED)
            continue;
        const char *n = pd_csv_get(c, r, nc);
        snprintf(names->name[idx], sizeof names->name[idx], "%s", n ? n : "");
        number_of(pd_csv_get(c, r, mc), names->mem_total_mib[idx], sizeof names->mem_total_mib[idx]);
        names->known[idx] = true;
    }
    pd_csv_free(c);
}

void pd_gpu_amd_smi_names(const char *csv, pd_gpu_names *names)
{
    names_from(csv, "gpu,", "gpu", "market_name", NULL, names);
}

/* ---- AMD: rocm-smi ---- */

/* rocm-smi 5.x printed "GPU memory use (%)" for the memory controller's busy
 * share (mem_busy_percent); 6.x renamed it "GPU Memory Read/Write Activity
 * (%)" and added "GPU Memory Allocated (VRAM%)" (allocation, not activity:
 * not used). VRAM is printed in bytes. */
static const field_map rocm_smi_map = {
    .names = {[F_UTIL] = NAMES("GPU use (%)"),
              [F_MEMUTIL] = NAMES("GPU Memory Read/Write Activity (%)", "GPU memory use (%)"),
              [F_MEMUSED] = NAMES("VRAM Total Used Memory (B)"),
              [F_MEMTOTAL] = NAMES("VRAM Total Memory (B)"),
              [F_TEMP] = NAMES("Temperature (Sensor junction) (C)", "Temperature (Sensor edge) (C)"),
              [F_POWER] = NAMES("Current Socket Graphics Package Power (W)",
                                "Average Graphics Package Power (W)"),
              [F_SM] = NAMES("sclk clock speed:"),
              [F_MEMCLK] = NAMES("mclk clock speed:")},
    .bytes = {[F_MEMUSED] = true, [F_MEMTOTAL] = true},
};

int pd_gpu_rocm_smi_format(const char *csv, double ts, const char *host, pd_str *out)
{
    pd_csv *c = parse_table(csv, "device,");
    if (!c)
        return 0;
    int dcol = col(c, "device"), rows = 0;
    int series = col(c, "Card Series");
    int dname = col(c, "Device Name");
    for (size_t r = 0; dcol >= 0 && r < c->nrows; r++) {
        long idx = index_of(pd_csv_get(c, r, dcol), "card");
        if (idx < 0)
            continue;
        const char *n = pd_csv_get(c, r, series);
        if (!n || !*n || strcasecmp(n, "N/A") == 0)
            n = pd_csv_get(c, r, dname);
        char vals[F_N][32], name[160];
        pick(c, r, &rocm_smi_map, vals);
        pd_gpu_vendor_name(name, sizeof name, "AMD", n);
        emit(out, ts, host, idx, name, vals);
        rows++;
    }
    pd_csv_free(c);
    return rows;
}

/* ---- Intel: xpu-smi ---- */

/* xpu-smi dump metric 17 (memory bandwidth utilisation) is the counterpart
 * of utilization.memory; metric 5 ("GPU Memory Utilization (%)") is the share
 * of memory in use, so it is not taken for it. No memory clock is printed. */
static const field_map xpu_smi_map = {
    .names = {[F_UTIL] = NAMES("GPU Utilization (%)"),
              [F_MEMUTIL] = NAMES("GPU Memory Bandwidth Utilization (%)"),
              [F_MEMUSED] = NAMES("GPU Memory Used (MiB)"),
              [F_TEMP] = NAMES("GPU Core Temperature (Celsius Degree)"),
              [F_POWER] = NAMES("GPU Power (W)"),
              [F_SM] = NAMES("GPU Frequency (MHz)")},
};

int pd_gpu_xpu_smi_format(const char *dump, const pd_gpu_names *names, double ts, const char *host,
                          pd_str *out)
{
    pd_csv *c = parse_table(dump, "Timestamp,");
    if (!c)
        return 0;
    int dcol = col(c, "DeviceId"), rows = 0;
    /* Only the last row printed for each device (dump may print several). */
    long order[PD_GPU_MAX_NAMED];
    size_t last[PD_GPU_MAX_NAMED], norder = 0;
    for (size_t r = 0; dcol >= 0 && r < c->nrows; r++) {
        long idx = index_of(pd_csv_get(c, r, dcol), NULL);
        if (idx < 0 || idx >= PD_GPU_MAX_NAMED)
            continue;
        size_t k = 0;
        while (k < norder && order[k] != idx)
            k++;
        if (k == norder)
            order[norder++] = idx;
        last[k] = r;
    }
    for (size_t k = 0; k < norder; k++) {
        char vals[F_N][32], name[160];
        pick(c, last[k], &xpu_smi_map, vals);
        if (names && names->known[order[k]])
            snprintf(vals[F_MEMTOTAL], sizeof vals[F_MEMTOTAL], "%s", names->mem_total_mib[order[k]]);
        pd_gpu_vendor_name(name, sizeof name, "Intel", known_name(names, order[k]));
        emit(out, ts, host, order[k], name, vals);
        rows++;
    }
    pd_csv_free(c);
    return rows;
}

void pd_gpu_xpu_smi_names(const char *csv, pd_gpu_names *names)
{
    names_from(csv, "Device ID,", "Device ID", "Device Name", "Memory Physical Size", names);
}

/* ---- choosing and running a source ---- */

const char *pd_gpu_kind_name(pd_gpu_kind kind)
{
    static const char *const n[] = {"none", "nvml", "nvidia-smi", "amd-smi", "rocm-smi", "xpu-smi"};
    return (unsigned)kind < PD_ARRAY_LEN(n) ? n[kind] : "none";
}

bool pd_gpu_find_in_path(const char *prog, char *out, size_t len)
{
    const char *path = getenv("PATH");
    if (!path || !*path)
        return false;
    for (const char *p = path; *p;) {
        const char *c = strchr(p, ':');
        size_t n = c ? (size_t)(c - p) : strlen(p);
        if (n > 0 && n + strlen(prog) + 2 <= len) {
            snprintf(out, len, "%.*s/%s", (int)n, p, prog);
            struct stat st;
            if (stat(out, &st) == 0 && S_ISREG(st.st_mode) && access(out, X_OK) == 0)
                return true;
        }
        p += n;
        if (*p == ':')
            p++;
    }
    return false;
}

#define ARGV(...) ((char *const[]){__VA_ARGS__, NULL})

bool pd_gpu_source_open(pd_gpu_source *src, pd_gpu_run_fn run, void *ctx)
{
    memset(src, 0, sizeof *src);
    const char *only = getenv("PADDISER_GPU_SOURCE");
    if (only && !*only)
        only = NULL;
    for (pd_gpu_kind k = PD_GPU_NVML; k <= PD_GPU_XPU_SMI; k++) {
        const char *name = pd_gpu_kind_name(k);
        if (only && strcmp(only, name) != 0)
            continue;
        if (k == PD_GPU_NVML) {
            src->nvml = pd_gpu_nvml_open(NULL);
            if (!src->nvml)
                continue;
        } else if (!pd_gpu_find_in_path(name, src->tool, sizeof src->tool)) {
            continue;
        }
        src->kind = k;
        /* Names and sizes do not change during a run: asked once here. */
        const char *txt = NULL;
        if (k == PD_GPU_AMD_SMI && (txt = run(ctx, src->tool, ARGV("amd-smi", "static", "--asic", "--csv"))))
            pd_gpu_amd_smi_names(txt, &src->names);
        if (k == PD_GPU_XPU_SMI &&
            (txt = run(ctx, src->tool, ARGV("xpu-smi", "discovery", "--dump", "1,2,16"))))
            pd_gpu_xpu_smi_names(txt, &src->names);
        return true;
    }
    return false;
}

int pd_gpu_source_sample(pd_gpu_source *src, pd_gpu_run_fn run, void *ctx, double ts, const char *host,
                         pd_str *out)
{
    const char *txt;
    switch (src->kind) {
    case PD_GPU_NVML:
        return pd_gpu_nvml_sample(src->nvml, ts, host, out);
    case PD_GPU_NVIDIA_SMI:
        txt = run(ctx, src->tool,
                  ARGV("nvidia-smi", PD_NVIDIA_SMI_QUERY, "--format=csv,noheader,nounits"));
        return txt ? pd_gpu_format(txt, ts, host, out) : -1;
    case PD_GPU_AMD_SMI:
        txt = run(ctx, src->tool,
                  ARGV("amd-smi", "metric", "--usage", "--power", "--clock", "--temperature", "--mem-usage",
                       "--csv"));
        return txt ? pd_gpu_amd_smi_format(txt, &src->names, ts, host, out) : -1;
    case PD_GPU_ROCM_SMI:
        txt = run(ctx, src->tool,
                  ARGV("rocm-smi", "--showproductname", "--showuse", "--showmemuse", "--showmeminfo", "vram",
                       "--showtemp", "--showpower", "--showclocks", "--csv"));
        return txt ? pd_gpu_rocm_smi_format(txt, ts, host, out) : -1;
    case PD_GPU_XPU_SMI:
        txt = run(ctx, src->tool, ARGV("xpu-smi", "dump", "-d", "-1", "-m", "0,1,2,3,17,18", "-n", "1"));
        return txt ? pd_gpu_xpu_smi_format(txt, &src->names, ts, host, out) : -1;
    default:
        return -1;
    }
}

void pd_gpu_source_close(pd_gpu_source *src)
{
    pd_gpu_nvml_close(src->nvml);
    src->nvml = NULL;
    src->kind = PD_GPU_NONE;
}
