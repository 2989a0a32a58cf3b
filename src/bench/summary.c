/* Run summary (shared/spec/summary-metrics.md): one row per repetition with
 * the execution's variables and the CPU/memory, GPU and I/O metrics of its
 * trace files. Traces can be large (one row per core per sample, hundreds of
 * repetitions), so they are streamed through pd_csv_reader instead of being
 * loaded as tables, numbers take a correctly rounded fast path before
 * strtod, and repetitions are summarised in parallel. */
#include "bench/summary.h"

#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bench/iops_meta.h"
#include "common/cliopt.h"
#include "common/csv.h"
#include "common/util.h"

#define SUMMARY_FILE "__iops_resource_summary.csv"
#define PARAMS_FILE "__iops_params.json"
#define CPU_PREFIX "__iops_trace_"
#define GPU_PREFIX "__iops_gpu_trace_"
#define IO_PREFIX "__iops_io_trace_"
#define CPU_WRAPPER "__iops_runtime_sampler.sh"
#define GPU_WRAPPER "__iops_runtime_gpu_sampler.sh"
#define IO_WRAPPER "__iops_runtime_io_sampler.sh"

static const double KIB_PER_GIB = 1024.0 * 1024.0;    /* mem_* are in kB */
static const double BYTES_PER_MIB = 1024.0 * 1024.0;
static const double BYTES_PER_GIB = 1024.0 * 1024.0 * 1024.0;

/* ------------------------------------------------------------------ */
/* Growable arrays and a small byte-keyed hash map                    */
/* ------------------------------------------------------------------ */

static bool grow(void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return true;
    size_t ncap = *cap ? *cap : 16;
    while (ncap < need)
        ncap *= 2;
    void *q = realloc(*p, ncap * elem);
    if (!q)
        return false;
    *p = q;
    *cap = ncap;
    return true;
}

typedef struct {
    char *key; /* NULL: empty slot */
    size_t klen;
    uint64_t hash;
    size_t val;
} hslot;

typedef struct {
    hslot *slots;
    size_t cap, n; /* cap is a power of two */
} hmap;

static uint64_t hash_bytes(const void *p, size_t n)
{
    const unsigned char *b = p;
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < n; i++) {
        h ^= b[i];
        h *= 1099511628211ULL;
    }
    h ^= h >> 33; /* FNV's low bits are weak for short keys */
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    return h;
}

static hslot *hm_slot(const hmap *m, const void *key, size_t klen, uint64_t h)
{
    size_t mask = m->cap - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
        hslot *s = &m->slots[i];
        if (!s->key || (s->hash == h && s->klen == klen && memcmp(s->key, key, klen) == 0))
            return s;
    }
}

static bool hm_get(const hmap *m, const void *key, size_t klen, size_t *val)
{
    if (!m->cap)
        return false;
    hslot *s = hm_slot(m, key, klen, hash_bytes(key, klen));
    if (!s->key)
        return false;
    *val = s->val;
    return true;
}

static bool hm_rehash(hmap *m)
{
    size_t ncap = m->cap ? m->cap * 2 : 64;
    hslot *old = m->slots;
    size_t ocap = m->cap;
    m->slots = calloc(ncap, sizeof *m->slots);
    if (!m->slots) {
        m->slots = old;
        return false;
    }
    m->cap = ncap;
    for (size_t i = 0; i < ocap; i++)
        if (old[i].key)
            *hm_slot(m, old[i].key, old[i].klen, old[i].hash) = old[i];
    free(old);
    return true;
}

/* Looks key up; when absent, inserts it with value val. *out receives the
 * stored value. Returns 1 inserted, 0 found, -1 out of memory. */
static int hm_put(hmap *m, const void *key, size_t klen, size_t val, size_t *out)
{
    if ((m->n + 1) * 2 > m->cap && !hm_rehash(m))
        return -1;
    uint64_t h = hash_bytes(key, klen);
    hslot *s = hm_slot(m, key, klen, h);
    if (s->key) {
        *out = s->val;
        return 0;
    }
    char *copy = malloc(klen + 1);
    if (!copy)
        return -1;
    memcpy(copy, key, klen);
    copy[klen] = '\0';
    *s = (hslot){copy, klen, h, val};
    m->n++;
    *out = val;
    return 1;
}

static void hm_free(hmap *m)
{
    for (size_t i = 0; i < m->cap; i++)
        free(m->slots[i].key);
    free(m->slots);
    *m = (hmap){0};
}

/* Interned host names: index by name, names by index. */
typedef struct {
    hmap map;
    char **names;
    size_t n, cap;
} host_set;

/* Index of host, adding it when new (*added set); -1 when out of memory. */
static long host_index(host_set *h, const char *name, bool *added)
{
    size_t idx;
    *added = false;
    if (hm_get(&h->map, name, strlen(name), &idx))
        return (long)idx;
    char *copy = pd_strdup(name);
    if (!copy || !grow((void **)&h->names, &h->cap, h->n + 1, sizeof *h->names) ||
        hm_put(&h->map, name, strlen(name), h->n, &idx) < 0) {
        free(copy);
        return -1;
    }
    h->names[h->n++] = copy;
    *added = true;
    return (long)idx;
}

static void host_set_free(host_set *h)
{
    for (size_t i = 0; i < h->n; i++)
        free(h->names[i]);
    free(h->names);
    hm_free(&h->map);
    *h = (host_set){0};
}

/* ------------------------------------------------------------------ */
/* Trace files: streamed CSV records and strict numbers               */
/* ------------------------------------------------------------------ */

#define MAX_COLS 8

/* Plain decimals ("-12.345") whose digits fit 2^53 and scale fits 10^22
 * convert exactly with one correctly rounded division, i.e. to the same
 * double strtod gives; anything else (exponents, blanks, [N/A]) takes the
 * strict parser. Non-finite values are rejected. */
static bool parse_num(const char *s, double *out)
{
    static const double pow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                   1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                   1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    const char *p = s;
    bool neg = *p == '-';
    if (*p == '-' || *p == '+')
        p++;
    uint64_t m = 0;
    int digits = 0, frac = 0;
    bool ok = true;
    for (; *p >= '0' && *p <= '9'; p++, digits++) {
        if (m > (UINT64_C(1) << 53) / 10)
            ok = false;
        m = m * 10 + (uint64_t)(*p - '0');
    }
    if (*p == '.') {
        for (p++; *p >= '0' && *p <= '9'; p++, digits++, frac++) {
            if (m > (UINT64_C(1) << 53) / 10)
                ok = false;
            m = m * 10 + (uint64_t)(*p - '0');
        }
    }
    if (ok && *p == '\0' && digits > 0 && frac <= 22 && m <= (UINT64_C(1) << 53)) {
        double v = (double)m / pow10[frac];
        *out = neg ? -v : v;
        return true;
    }
    double v;
    if (!pd_parse_double(s, &v) || !isfinite(v))
        return false;
    *out = v;
    return true;
}

/* One trace file being read through the shared streaming reader: the wanted
 * columns are looked up by header name; rows whose field count differs from
 * the header's are skipped. */
typedef struct {
    pd_csv_reader *csv;
    pd_csv_row row;
    size_t nhdr;
    size_t col[MAX_COLS];
} trace_reader;

/* false when the file cannot be read, has no header, or lacks a column. */
static bool trace_open(trace_reader *t, const char *path, const char *const *cols, int ncols)
{
    char err[512];
    *t = (trace_reader){0};
    t->csv = pd_csv_reader_open(path, 0, err, sizeof err);
    if (!t->csv)
        return false;
    /* a row cut short by a failed write (no line end) is not a sample: cut
     * inside its last field it would parse as a whole row, wrongly */
    pd_csv_reader_complete_lines(t->csv, true);
    pd_csv_row hdr;
    if (pd_csv_reader_next(t->csv, &hdr, err, sizeof err) <= 0)
        goto fail;
    t->nhdr = hdr.nfields;
    for (size_t i = 0; i < hdr.nfields; i++)
        pd_trim(hdr.fields[i]);
    for (int c = 0; c < ncols; c++) {
        size_t i = hdr.nfields;
        while (i > 0 && strcmp(hdr.fields[i - 1], cols[c]) != 0)
            i--; /* a repeated name: the last one counts */
        if (i == 0)
            goto fail;
        t->col[c] = i - 1;
    }
    return true;
fail:
    pd_csv_reader_close(t->csv);
    t->csv = NULL;
    return false;
}

/* Advances to the next well-formed row: true, or false at the end. A read
 * error or a quote left open also ends the file: the rows before it count. */
static bool trace_next(trace_reader *t)
{
    char err[512];
    while (pd_csv_reader_next(t->csv, &t->row, err, sizeof err) > 0)
        if (t->row.nfields == t->nhdr)
            return true;
    return false;
}

static const char *trace_get(const trace_reader *t, int c) { return t->row.fields[t->col[c]]; }

/* Parses columns [from, to) of the current row into v; false if any is bad. */
static bool trace_nums(const trace_reader *t, int from, int to, double *v)
{
    for (int c = from; c < to; c++)
        if (!parse_num(trace_get(t, c), &v[c]))
            return false;
    return true;
}

static void trace_close(trace_reader *t)
{
    pd_csv_reader_close(t->csv);
    t->csv = NULL;
}

/* ------------------------------------------------------------------ */
/* Key/value lists                                                    */
/* ------------------------------------------------------------------ */

void pd_summary_kvs_set(pd_summary_kvs *kv, const char *key, const char *value)
{
    if (kv->oom)
        return;
    char *v = pd_strdup(value);
    if (!v) {
        kv->oom = true;
        return;
    }
    for (size_t i = 0; i < kv->n; i++) {
        if (strcmp(kv->items[i].key, key) == 0) {
            free(kv->items[i].value);
            kv->items[i].value = v;
            return;
        }
    }
    char *k = pd_strdup(key);
    if (!k || !grow((void **)&kv->items, &kv->cap, kv->n + 1, sizeof *kv->items)) {
        free(k);
        free(v);
        kv->oom = true;
        return;
    }
    kv->items[kv->n++] = (pd_summary_kv){k, v};
}

const char *pd_summary_kvs_get(const pd_summary_kvs *kv, const char *key)
{
    for (size_t i = 0; i < kv->n; i++)
        if (strcmp(kv->items[i].key, key) == 0)
            return kv->items[i].value;
    return NULL;
}

void pd_summary_kvs_free(pd_summary_kvs *kv)
{
    for (size_t i = 0; i < kv->n; i++) {
        free(kv->items[i].key);
        free(kv->items[i].value);
    }
    free(kv->items);
    *kv = (pd_summary_kvs){0};
}

/* Fixed-point value with `decimals` digits; "-0.00" is written "0.00". */
static void put_fixed(pd_summary_kvs *kv, const char *key, int decimals, double v)
{
    char buf[64];
    snprintf(buf, sizeof buf, "%.*f", decimals, v);
    if (buf[0] == '-' && strspn(buf + 1, "0.") == strlen(buf + 1))
        memmove(buf, buf + 1, strlen(buf));
    pd_summary_kvs_set(kv, key, buf);
}

static void put_count(pd_summary_kvs *kv, const char *key, size_t v)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%zu", v);
    pd_summary_kvs_set(kv, key, buf);
}

/* Formatting: *_gb 3 decimals (spec), counts as integers, the rest 2. */
static void put_gb(pd_summary_kvs *kv, const char *key, double v) { put_fixed(kv, key, 3, v); }
static void put_2dp(pd_summary_kvs *kv, const char *key, double v) { put_fixed(kv, key, 2, v); }

/* ------------------------------------------------------------------ */
/* CPU / memory                                                       */
/* ------------------------------------------------------------------ */

enum { C_TS, C_USER, C_SYS, C_TOTAL, C_AVAIL, C_HOST, C_CORE, C_NCOLS };
static const char *const CPU_COLS[C_NCOLS] = {"timestamp",        "cpu_user_pct",
                                              "cpu_system_pct",   "mem_total_kb",
                                              "mem_available_kb", "hostname",
                                              "core"};


int pd_summary_cpu_metrics(const char *const *paths, size_t n, pd_summary_kvs *out)
{
    host_set hosts = {0};
    hmap cores = {0}; /* host index + core name -> index in core_max */
    double *host_mem_max = NULL, *core_max = NULL;
    size_t host_cap = 0, core_cap = 0, ncores = 0, rows = 0;
    double mem_max = 0, mem_sum = 0, cpu_sum = 0, cpu_max = 0, ts_min = 0, ts_max = 0;
    int rc = -1;

    for (size_t f = 0; f < n; f++) {
        trace_reader t;
        if (!trace_open(&t, paths[f], CPU_COLS, C_NCOLS))
            continue;
        while (trace_next(&t)) {
            double v[C_NCOLS];
            const char *core = trace_get(&t, C_CORE);
            size_t core_len = strlen(core);
            char key[260];
            if (core_len > 256 || !trace_nums(&t, C_TS, C_HOST, v))
                continue;
            bool new_host;
            long h = host_index(&hosts, trace_get(&t, C_HOST), &new_host);
            if (h < 0 || !grow((void **)&host_mem_max, &host_cap, hosts.n, sizeof(double)))
                goto oom;
            uint32_t h32 = (uint32_t)h;
            memcpy(key, &h32, 4);
            memcpy(key + 4, core, core_len);
            size_t ci;
            if (!grow((void **)&core_max, &core_cap, ncores + 1, sizeof(double)))
                goto oom;
            int added = hm_put(&cores, key, core_len + 4, ncores, &ci);
            if (added < 0)
                goto oom;

            double mem_used = v[C_TOTAL] - v[C_AVAIL];
            double cpu = v[C_USER] + v[C_SYS];
            if (added)
                core_max[ncores++] = cpu;
            else if (cpu > core_max[ci])
                core_max[ci] = cpu;
            if (new_host || mem_used > host_mem_max[h])
                host_mem_max[h] = mem_used;
            if (rows == 0) {
                mem_max = mem_used;
                cpu_max = cpu;
                ts_min = ts_max = v[C_TS];
            }
            rows++;
            mem_sum += mem_used;
            cpu_sum += cpu;
            mem_max = fmax(mem_max, mem_used);
            cpu_max = fmax(cpu_max, cpu);
            ts_min = fmin(ts_min, v[C_TS]);
            ts_max = fmax(ts_max, v[C_TS]);
            continue;
        oom:
            trace_close(&t);
            goto out;
        }
        trace_close(&t);
    }

    if (rows > 0) {
        double node_peak = host_mem_max[0], core_hi = core_max[0], core_lo = core_max[0];
        for (size_t i = 1; i < hosts.n; i++)
            node_peak = fmax(node_peak, host_mem_max[i]);
        for (size_t i = 1; i < ncores; i++) {
            core_hi = fmax(core_hi, core_max[i]);
            core_lo = fmin(core_lo, core_max[i]);
        }
        put_fixed(out, "mem_peak_gb", 3, mem_max / KIB_PER_GIB);
        put_fixed(out, "mem_avg_gb", 3, mem_sum / (double)rows / KIB_PER_GIB);
        put_fixed(out, "mem_peak_per_node_gb", 3, node_peak / KIB_PER_GIB);
        put_2dp(out, "cpu_avg_pct", cpu_sum / (double)rows);
        put_2dp(out, "cpu_max_pct", cpu_max);
        put_2dp(out, "cpu_imbalance_pct", core_hi - core_lo);
    }
    put_count(out, "nodes_traced", hosts.n);
    put_count(out, "samples_collected", rows);
    if (rows > 0)
        put_2dp(out, "trace_duration_s", rows >= 2 ? ts_max - ts_min : 0.0);
    rc = out->oom ? -1 : 0;
out:
    host_set_free(&hosts);
    hm_free(&cores);
    free(host_mem_max);
    free(core_max);
    return rc;
}

/* ------------------------------------------------------------------ */
/* GPU                                                                */
/* ------------------------------------------------------------------ */

enum { G_TS, G_UTIL, G_MEMUTIL, G_MEM, G_TEMP, G_POWER, G_HOST, G_INDEX, G_NCOLS };
static const char *const GPU_COLS[G_NCOLS] = {
    "timestamp",     "utilization_gpu_pct", "utilization_mem_pct", "memory_used_mib",
    "temperature_c", "power_draw_w",        "hostname",            "gpu_index"};

typedef struct {
    double ts, power;
    size_t seq; /* read order: ties in ts integrate in a reproducible order */
} power_sample;

typedef struct {
    size_t host;
    long index;
    size_t n;
    double util_sum, memutil_sum, temp_sum, power_sum, mem_peak;
    power_sample *samples;
    size_t cap;
} gpu_acc;

static int cmp_power_sample(const void *a, const void *b)
{
    const power_sample *x = a, *y = b;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int cmp_gpu(const void *a, const void *b, void *arg)
{
    const host_set *hosts = arg;
    const gpu_acc *x = a, *y = b;
    int c = strcmp(hosts->names[x->host], hosts->names[y->host]);
    if (c)
        return c;
    return x->index < y->index ? -1 : x->index > y->index;
}

/* Trapezoid rule over the time-sorted power samples of one GPU. */
static double gpu_energy(gpu_acc *g)
{
    qsort(g->samples, g->n, sizeof *g->samples, cmp_power_sample);
    double e = 0;
    for (size_t i = 1; i < g->n; i++)
        e += (g->samples[i - 1].power + g->samples[i].power) / 2.0 *
             (g->samples[i].ts - g->samples[i - 1].ts);
    return e;
}

/* gpuN, or <shorthost>_gpuN when the traces span several hosts. */
static void gpu_label(char *buf, size_t len, const char *host, long index, bool multi_host)
{
    if (!multi_host) {
        snprintf(buf, len, "gpu%ld", index);
        return;
    }
    size_t short_len = strcspn(host, ".");
    snprintf(buf, len, "%.*s_gpu%ld", (int)short_len, host, index);
    for (size_t i = 0; i < short_len && i < len; i++)
        if (buf[i] == '-')
            buf[i] = '_';
}

int pd_summary_gpu_metrics(const char *const *paths, size_t n, pd_summary_kvs *out)
{
    host_set hosts = {0};
    hmap index = {0}; /* host index + gpu index -> gpus[] */
    gpu_acc *gpus = NULL;
    size_t ngpus = 0, gpu_cap = 0, rows = 0;
    double util_max = 0, temp_max = 0, power_max = 0, mem_peak = 0, ts_min = 0, ts_max = 0;
    int rc = -1;

    for (size_t f = 0; f < n; f++) {
        trace_reader t;
        if (!trace_open(&t, paths[f], GPU_COLS, G_NCOLS))
            continue;
        while (trace_next(&t)) {
            double v[G_NCOLS];
            long gi;
            /* [N/A] and other non-numeric fields drop the row */
            if (!trace_nums(&t, G_TS, G_HOST, v) || !pd_parse_long(trace_get(&t, G_INDEX), &gi))
                continue;
            bool new_host;
            long h = host_index(&hosts, trace_get(&t, G_HOST), &new_host);
            if (h < 0)
                goto oom;
            unsigned char key[4 + sizeof(long)];
            uint32_t h32 = (uint32_t)h;
            memcpy(key, &h32, 4);
            memcpy(key + 4, &gi, sizeof gi);
            size_t k;
            if (!grow((void **)&gpus, &gpu_cap, ngpus + 1, sizeof *gpus))
                goto oom;
            int added = hm_put(&index, key, sizeof key, ngpus, &k);
            if (added < 0)
                goto oom;
            if (added)
                gpus[ngpus++] = (gpu_acc){.host = (size_t)h, .index = gi, .mem_peak = v[G_MEM]};
            gpu_acc *g = &gpus[k];
            if (!grow((void **)&g->samples, &g->cap, g->n + 1, sizeof *g->samples))
                goto oom;
            g->samples[g->n] = (power_sample){v[G_TS], v[G_POWER], rows};
            g->n++;
            g->util_sum += v[G_UTIL];
            g->memutil_sum += v[G_MEMUTIL];
            g->temp_sum += v[G_TEMP];
            g->power_sum += v[G_POWER];
            g->mem_peak = fmax(g->mem_peak, v[G_MEM]);
            if (rows == 0) {
                util_max = v[G_UTIL];
                temp_max = v[G_TEMP];
                power_max = v[G_POWER];
                mem_peak = v[G_MEM];
                ts_min = ts_max = v[G_TS];
            }
            rows++;
            util_max = fmax(util_max, v[G_UTIL]);
            temp_max = fmax(temp_max, v[G_TEMP]);
            power_max = fmax(power_max, v[G_POWER]);
            mem_peak = fmax(mem_peak, v[G_MEM]);
            ts_min = fmin(ts_min, v[G_TS]);
            ts_max = fmax(ts_max, v[G_TS]);
            continue;
        oom:
            trace_close(&t);
            goto out;
        }
        trace_close(&t);
    }

    put_count(out, "gpu_count", ngpus);
    put_count(out, "gpu_samples_collected", rows);
    if (rows > 0) {
        qsort_r(gpus, ngpus, sizeof *gpus, cmp_gpu, &hosts);
        double best_util = -INFINITY, best_memutil = -INFINITY, best_temp = -INFINITY,
               best_power = -INFINITY, energy = 0;
        bool multi_host = hosts.n > 1;
        for (size_t i = 0; i < ngpus; i++) {
            gpu_acc *g = &gpus[i];
            double cnt = (double)g->n, e = gpu_energy(g);
            char label[128], key[192];
            gpu_label(label, sizeof label, hosts.names[g->host], g->index, multi_host);
            snprintf(key, sizeof key, "%s_avg_utilization_pct", label);
            put_2dp(out, key, g->util_sum / cnt);
            snprintf(key, sizeof key, "%s_avg_power_w", label);
            put_2dp(out, key, g->power_sum / cnt);
            snprintf(key, sizeof key, "%s_avg_temperature_c", label);
            put_2dp(out, key, g->temp_sum / cnt);
            snprintf(key, sizeof key, "%s_mem_peak_mib", label);
            put_2dp(out, key, g->mem_peak);
            snprintf(key, sizeof key, "%s_energy_j", label);
            put_2dp(out, key, e);
            best_util = fmax(best_util, g->util_sum / cnt);
            best_memutil = fmax(best_memutil, g->memutil_sum / cnt);
            best_temp = fmax(best_temp, g->temp_sum / cnt);
            best_power = fmax(best_power, g->power_sum / cnt);
            energy += e;
        }
        put_2dp(out, "gpu_avg_utilization_pct", best_util);
        put_2dp(out, "gpu_max_utilization_pct", util_max);
        put_2dp(out, "gpu_avg_mem_utilization_pct", best_memutil);
        put_2dp(out, "gpu_mem_peak_mib", mem_peak);
        put_2dp(out, "gpu_avg_temperature_c", best_temp);
        put_2dp(out, "gpu_max_temperature_c", temp_max);
        put_2dp(out, "gpu_avg_power_w", best_power);
        put_2dp(out, "gpu_max_power_w", power_max);
        put_2dp(out, "gpu_energy_j", energy);
        put_2dp(out, "gpu_trace_duration_s", rows >= 2 ? ts_max - ts_min : 0.0);
    }
    rc = out->oom ? -1 : 0;
out:
    for (size_t i = 0; i < ngpus; i++)
        free(gpus[i].samples);
    free(gpus);
    hm_free(&index);
    host_set_free(&hosts);
    return rc;
}

/* ------------------------------------------------------------------ */
/* I/O                                                                */
/* ------------------------------------------------------------------ */

enum { I_TS, I_INTERVAL, I_RB, I_WB, I_RO, I_WO, I_HOST, I_SOURCE, I_NCOLS };
static const char *const IO_COLS[I_NCOLS] = {"timestamp",  "interval_s", "read_bytes",
                                             "write_bytes", "read_ops",  "write_ops",
                                             "hostname",    "source"};

_Static_assert(C_NCOLS <= MAX_COLS && G_NCOLS <= MAX_COLS && I_NCOLS <= MAX_COLS,
               "trace_reader.col is too small");

/* One (host, timestamp): every device and source sampled at that instant. */
typedef struct {
    size_t host;
    double interval, rb, wb;
} io_instant;

int pd_summary_io_metrics(const char *const *paths, size_t n, pd_summary_kvs *out)
{
    host_set hosts = {0};
    hmap index = {0}; /* host index + timestamp -> instants[] */
    io_instant *inst = NULL;
    double *host_dur = NULL;
    size_t ninst = 0, inst_cap = 0;
    double rb = 0, wb = 0, ro = 0, wo = 0, disk_rb = 0, disk_wb = 0, nfs_rb = 0, nfs_wb = 0;
    /* Lustre and GPFS, the sources the spec leaves to plug in later: their
     * columns are written only when a trace has their rows, so the
     * spec's column set stays as it is everywhere else */
    double lustre_rb = 0, lustre_wb = 0, gpfs_rb = 0, gpfs_wb = 0;
    bool have_lustre = false, have_gpfs = false;
    int rc = -1;

    for (size_t f = 0; f < n; f++) {
        trace_reader t;
        if (!trace_open(&t, paths[f], IO_COLS, I_NCOLS))
            continue;
        while (trace_next(&t)) {
            double v[I_NCOLS];
            if (!trace_nums(&t, I_TS, I_HOST, v) || v[I_INTERVAL] <= 0 || v[I_RB] < 0 ||
                v[I_WB] < 0 || v[I_RO] < 0 || v[I_WO] < 0)
                continue;
            bool new_host;
            long h = host_index(&hosts, trace_get(&t, I_HOST), &new_host);
            if (h < 0)
                goto oom;
            double ts = v[I_TS] == 0 ? 0.0 : v[I_TS]; /* one key for -0 and 0 */
            unsigned char key[4 + sizeof(double)];
            uint32_t h32 = (uint32_t)h;
            memcpy(key, &h32, 4);
            memcpy(key + 4, &ts, sizeof ts);
            size_t k;
            if (!grow((void **)&inst, &inst_cap, ninst + 1, sizeof *inst))
                goto oom;
            int added = hm_put(&index, key, sizeof key, ninst, &k);
            if (added < 0)
                goto oom;
            if (added)
                inst[ninst++] = (io_instant){.host = (size_t)h, .interval = v[I_INTERVAL]};
            /* the devices of one instant share its interval: counted once */
            inst[k].interval = fmax(inst[k].interval, v[I_INTERVAL]);
            inst[k].rb += v[I_RB];
            inst[k].wb += v[I_WB];
            rb += v[I_RB];
            wb += v[I_WB];
            ro += v[I_RO];
            wo += v[I_WO];
            const char *src = trace_get(&t, I_SOURCE);
            if (strcmp(src, "block") == 0) {
                disk_rb += v[I_RB];
                disk_wb += v[I_WB];
            } else if (strcmp(src, "nfs") == 0) {
                nfs_rb += v[I_RB];
                nfs_wb += v[I_WB];
            } else if (strcmp(src, "lustre") == 0) {
                lustre_rb += v[I_RB];
                lustre_wb += v[I_WB];
                have_lustre = true;
            } else if (strcmp(src, "gpfs") == 0) {
                gpfs_rb += v[I_RB];
                gpfs_wb += v[I_WB];
                have_gpfs = true;
            }
            continue;
        oom:
            trace_close(&t);
            goto out;
        }
        trace_close(&t);
    }

    double peak_r = 0, peak_w = 0, active_r = 0, active_w = 0, duration = 0;
    if (ninst > 0) {
        host_dur = calloc(hosts.n, sizeof *host_dur);
        if (!host_dur)
            goto out;
        for (size_t i = 0; i < ninst; i++) {
            const io_instant *x = &inst[i];
            host_dur[x->host] += x->interval;
            peak_r = fmax(peak_r, x->rb / x->interval / BYTES_PER_MIB);
            peak_w = fmax(peak_w, x->wb / x->interval / BYTES_PER_MIB);
            if (x->rb > 0)
                active_r += x->interval;
            if (x->wb > 0)
                active_w += x->interval;
        }
        for (size_t i = 0; i < hosts.n; i++)
            duration = fmax(duration, host_dur[i]);
        put_gb(out, "io_read_gb", rb / BYTES_PER_GIB);
        put_gb(out, "io_write_gb", wb / BYTES_PER_GIB);
        put_gb(out, "io_disk_read_gb", disk_rb / BYTES_PER_GIB);
        put_gb(out, "io_disk_write_gb", disk_wb / BYTES_PER_GIB);
        put_gb(out, "io_nfs_read_gb", nfs_rb / BYTES_PER_GIB);
        put_gb(out, "io_nfs_write_gb", nfs_wb / BYTES_PER_GIB);
        if (have_lustre) {
            put_gb(out, "io_lustre_read_gb", lustre_rb / BYTES_PER_GIB);
            put_gb(out, "io_lustre_write_gb", lustre_wb / BYTES_PER_GIB);
        }
        if (have_gpfs) {
            put_gb(out, "io_gpfs_read_gb", gpfs_rb / BYTES_PER_GIB);
            put_gb(out, "io_gpfs_write_gb", gpfs_wb / BYTES_PER_GIB);
        }
        put_2dp(out, "io_read_mbs_avg", rb / BYTES_PER_MIB / duration);
        put_2dp(out, "io_write_mbs_avg", wb / BYTES_PER_MIB / duration);
        put_2dp(out, "io_read_mbs_peak_per_node", peak_r);
        put_2dp(out, "io_write_mbs_peak_per_node", peak_w);
        put_2dp(out, "io_read_iops_avg", ro / duration);
        put_2dp(out, "io_write_iops_avg", wo / duration);
    }
    put_count(out, "io_nodes_traced", hosts.n);
    put_count(out, "io_samples_collected", ninst);
    if (ninst > 0) {
        put_2dp(out, "io_trace_duration_s", duration);
        put_2dp(out, "io_read_active_s", active_r);
        put_2dp(out, "io_read_mbs_active", active_r > 0 ? rb / BYTES_PER_MIB / active_r : 0.0);
        put_2dp(out, "io_write_active_s", active_w);
        put_2dp(out, "io_write_mbs_active", active_w > 0 ? wb / BYTES_PER_MIB / active_w : 0.0);
    }
    rc = out->oom ? -1 : 0;
out:
    free(host_dur);
    free(inst);
    hm_free(&index);
    host_set_free(&hosts);
    return rc;
}

/* ------------------------------------------------------------------ */
/* Directories                                                        */
/* ------------------------------------------------------------------ */

typedef struct {
    char **items;
    size_t n, cap;
} name_list;

static bool names_push(name_list *l, const char *s)
{
    char *c = pd_strdup(s);
    if (!c || !grow((void **)&l->items, &l->cap, l->n + 1, sizeof *l->items)) {
        free(c);
        return false;
    }
    l->items[l->n++] = c;
    return true;
}

static void names_free(name_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->items[i]);
    free(l->items);
    *l = (name_list){0};
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool has_prefix(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

static bool is_sample_file(const char *name, const char *prefix)
{
    size_t n = strlen(name), p = strlen(prefix);
    return n > p + 4 && has_prefix(name, prefix) && strcmp(name + n - 4, ".csv") == 0;
}

/* dir + "/" + name into buf; false when it does not fit. */
static bool join_path(char *buf, size_t len, const char *dir, const char *name)
{
    int n = snprintf(buf, len, "%s/%s", dir, name);
    return n >= 0 && (size_t)n < len;
}

static bool is_regular(const char *dir, const char *name)
{
    char path[4096];
    struct stat st;
    if (!join_path(path, sizeof path, dir, name))
        return false;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

int pd_summary_repetition_metrics(const char *rep_dir, pd_summary_kvs *out, char *err,
                                  size_t errlen)
{
    static const char *const prefixes[3] = {CPU_PREFIX, GPU_PREFIX, IO_PREFIX};
    /* The wrapper the injected block writes for each enabled sampler when the
     * repetition starts: proof the sampler ran even when it wrote no trace
     * (it opens its file at the first row, so a short run leaves none). */
    static const char *const wrappers[3] = {CPU_WRAPPER, GPU_WRAPPER, IO_WRAPPER};
    bool enabled[3] = {false, false, false};
    int (*const compute[3])(const char *const *, size_t, pd_summary_kvs *) = {
        pd_summary_cpu_metrics, pd_summary_gpu_metrics, pd_summary_io_metrics};
    name_list files[3] = {{0}};
    int rc = -1;
    DIR *d = opendir(rep_dir);
    if (!d) {
        snprintf(err, errlen, "%s: %s", rep_dir, strerror(errno));
        return -1;
    }
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        for (int k = 0; k < 3; k++) {
            if (strcmp(e->d_name, wrappers[k]) == 0)
                enabled[k] = true;
            if (!is_sample_file(e->d_name, prefixes[k]) || !is_regular(rep_dir, e->d_name))
                continue;
            char path[4096];
            if (!join_path(path, sizeof path, rep_dir, e->d_name))
                continue;
            if (!names_push(&files[k], path)) {
                snprintf(err, errlen, "out of memory");
                out->oom = true;
                goto out;
            }
        }
    }
    size_t total = 0;
    for (int k = 0; k < 3; k++) {
        /* sorted: sums run in the same order on every call */
        if (files[k].n > 1)
            qsort(files[k].items, files[k].n, sizeof *files[k].items, cmp_str);
        total += files[k].n;
        /* no trace of an enabled sampler: the counters alone, as 0 (spec:
         * "no usable samples reports only the counter columns") */
        if ((files[k].n || enabled[k]) &&
            compute[k]((const char *const *)files[k].items, files[k].n, out) != 0) {
            snprintf(err, errlen, "out of memory");
            out->oom = true;
            goto out;
        }
    }
    rc = (int)total;
out:
    closedir(d);
    for (int k = 0; k < 3; k++)
        names_free(&files[k]);
    return rc;
}

/* ------------------------------------------------------------------ */
/* Variables                                                          */
/* ------------------------------------------------------------------ */

void pd_summary_format_py_float(double v, char *buf, size_t len)
{
    if (isnan(v)) {
        snprintf(buf, len, "nan");
        return;
    }
    if (isinf(v)) {
        snprintf(buf, len, v < 0 ? "-inf" : "inf");
        return;
    }
    if (v == 0) {
        snprintf(buf, len, signbit(v) ? "-0.0" : "0.0");
        return;
    }
    char tmp[40];
    for (int p = 1; p <= 17; p++) {
        snprintf(tmp, sizeof tmp, "%.*e", p - 1, v);
        if (strtod(tmp, NULL) == v)
            break;
    }
    /* tmp is [-]d[.ddd]e[+-]XX: collect sign, digits and exponent */
    const char *p = tmp;
    bool neg = *p == '-';
    if (neg)
        p++;
    char digits[24];
    size_t nd = 0;
    for (; *p != 'e'; p++)
        if (*p != '.')
            digits[nd++] = *p;
    digits[nd] = '\0';
    int exp = atoi(p + 1);
    pd_str s = {0};
    if (neg)
        pd_str_append(&s, "-");
    if (exp >= 16 || exp < -4) {
        pd_str_appendn(&s, digits, 1);
        if (nd > 1) {
            pd_str_append(&s, ".");
            pd_str_append(&s, digits + 1);
        }
        pd_str_printf(&s, "e%c%02d", exp < 0 ? '-' : '+', abs(exp));
    } else if (exp < 0) {
        pd_str_append(&s, "0.");
        for (int i = -1; i > exp; i--)
            pd_str_append(&s, "0");
        pd_str_append(&s, digits);
    } else {
        size_t int_digits = (size_t)exp + 1;
        for (size_t i = 0; i < int_digits; i++)
            pd_str_appendn(&s, i < nd ? &digits[i] : "0", 1);
        pd_str_append(&s, ".");
        pd_str_append(&s, nd > int_digits ? digits + int_digits : "0");
    }
    snprintf(buf, len, "%s", s.data ? s.data : "");
    pd_str_free(&s);
}

int pd_summary_read_params(const char *exec_dir, pd_summary_kvs *out, char *err, size_t errlen)
{
    char path[4096];
    if (!join_path(path, sizeof path, exec_dir, PARAMS_FILE)) {
        snprintf(err, errlen, "%s: path too long", exec_dir);
        return 0;
    }
    json_error_t jerr;
    /* jansson >= 2.8 always keeps insertion order; the flag asks older ones */
    json_t *root = json_load_file(path, JSON_PRESERVE_ORDER, &jerr);
    if (!root) {
        snprintf(err, errlen, "%s: %s", path, jerr.text);
        return 0;
    }
    if (!json_is_object(root)) {
        snprintf(err, errlen, "%s: not a JSON object", path);
        json_decref(root);
        return 0;
    }
    for (void *it = json_object_iter(root); it; it = json_object_iter_next(root, it)) {
        const char *key = json_object_iter_key(it);
        json_t *v = json_object_iter_value(it);
        /* internal keys, and names the first two columns already use */
        if (has_prefix(key, "__") || !strcmp(key, "execution_id") || !strcmp(key, "repetition"))
            continue;
        char num[64];
        char *dumped = NULL;
        const char *text = num;
        switch (json_typeof(v)) {
        case JSON_STRING:
            text = json_string_value(v);
            break;
        case JSON_INTEGER:
            snprintf(num, sizeof num, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
            break;
        case JSON_REAL:
            pd_summary_format_py_float(json_real_value(v), num, sizeof num);
            break;
        case JSON_TRUE:
            text = "True";
            break;
        case JSON_FALSE:
            text = "False";
            break;
        case JSON_NULL:
            text = "";
            break;
        default: /* not expected in a flat object; kept as compact JSON */
            dumped = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
            text = dumped ? dumped : "";
            break;
        }
        pd_summary_kvs_set(out, key, text);
        free(dumped);
    }
    json_decref(root);
    if (out->oom) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    return 1;
}

/* ------------------------------------------------------------------ */
/* Column order                                                       */
/* ------------------------------------------------------------------ */

/* IOPS 3.5.8's order (runner.py's _compute_trace_metrics and
 * _compute_gpu_trace_metrics): the counters first, then the metrics; per-GPU
 * columns between the GPU counters and the GPU aggregates. The spec names
 * the columns but not their order. */
static const char *const CPU_KEYS[] = {
    "nodes_traced",      "samples_collected", "mem_peak_gb",
    "mem_avg_gb",        "mem_peak_per_node_gb", "cpu_avg_pct",
    "cpu_max_pct",       "cpu_imbalance_pct", "trace_duration_s"};
static const char *const GPU_KEYS[] = {
    "gpu_count",           "gpu_samples_collected",       "gpu_avg_utilization_pct",
    "gpu_max_utilization_pct", "gpu_avg_mem_utilization_pct", "gpu_mem_peak_mib",
    "gpu_avg_temperature_c", "gpu_max_temperature_c",     "gpu_avg_power_w",
    "gpu_max_power_w",     "gpu_energy_j",                "gpu_trace_duration_s"};
static const char *const GPU_EACH_SUFFIXES[] = {"_avg_utilization_pct", "_avg_power_w", "_energy_j",
                                                "_avg_temperature_c", "_mem_peak_mib"};
static const char *const IO_KEYS[] = {
    "io_read_gb",           "io_write_gb",          "io_disk_read_gb",
    "io_disk_write_gb",     "io_nfs_read_gb",       "io_nfs_write_gb",
    "io_lustre_read_gb",    "io_lustre_write_gb",   "io_gpfs_read_gb",
    "io_gpfs_write_gb",
    "io_read_mbs_avg",      "io_write_mbs_avg",     "io_read_mbs_peak_per_node",
    "io_write_mbs_peak_per_node", "io_read_iops_avg", "io_write_iops_avg",
    "io_nodes_traced",      "io_samples_collected", "io_trace_duration_s",
    "io_read_active_s",     "io_read_mbs_active",   "io_write_active_s",
    "io_write_mbs_active"};

enum { GROUP_CPU, GROUP_GPU_COUNT, GROUP_GPU_EACH, GROUP_GPU, GROUP_IO, GROUP_OTHER };

typedef struct {
    const char *name;
    int group;
    size_t idx;       /* position in its table / suffix list / first-seen order */
    size_t label_len; /* per-GPU columns: length of the gpuN / host_gpuN label */
} column;

static bool find_key(const char *const *table, size_t n, const char *name, size_t *idx)
{
    for (size_t i = 0; i < n; i++) {
        if (strcmp(table[i], name) == 0) {
            *idx = i;
            return true;
        }
    }
    return false;
}

/* A per-GPU label ends in "gpu<digits>" and is the whole label or follows '_'. */
static bool is_gpu_label(const char *s, size_t len)
{
    size_t d = len;
    while (d > 0 && s[d - 1] >= '0' && s[d - 1] <= '9')
        d--;
    if (d == len || d < 3 || strncmp(s + d - 3, "gpu", 3) != 0)
        return false;
    return d == 3 || s[d - 4] == '_';
}

static column classify(const char *name, size_t first_seen)
{
    column c = {name, GROUP_OTHER, first_seen, 0};
    if (find_key(CPU_KEYS, PD_ARRAY_LEN(CPU_KEYS), name, &c.idx)) {
        c.group = GROUP_CPU;
    } else if (find_key(GPU_KEYS, PD_ARRAY_LEN(GPU_KEYS), name, &c.idx)) {
        c.group = c.idx < 2 ? GROUP_GPU_COUNT : GROUP_GPU; /* gpu_count, gpu_samples_collected */
    } else if (find_key(IO_KEYS, PD_ARRAY_LEN(IO_KEYS), name, &c.idx)) {
        c.group = GROUP_IO;
    } else {
        size_t n = strlen(name);
        for (size_t i = 0; i < PD_ARRAY_LEN(GPU_EACH_SUFFIXES); i++) {
            size_t sl = strlen(GPU_EACH_SUFFIXES[i]);
            if (n > sl && strcmp(name + n - sl, GPU_EACH_SUFFIXES[i]) == 0 &&
                is_gpu_label(name, n - sl)) {
                c.group = GROUP_GPU_EACH;
                c.idx = i;
                c.label_len = n - sl;
                break;
            }
        }
    }
    return c;
}

/* Natural order: runs of digits compare by value (gpu2 < gpu10). */
static int natural_cmp(const char *a, size_t an, const char *b, size_t bn)
{
    size_t i = 0, j = 0;
    while (i < an && j < bn) {
        bool da = a[i] >= '0' && a[i] <= '9', db = b[j] >= '0' && b[j] <= '9';
        if (da && db) {
            size_t si = i, sj = j;
            while (si < an && a[si] == '0')
                si++;
            while (sj < bn && b[sj] == '0')
                sj++;
            size_t ei = si, ej = sj;
            while (ei < an && a[ei] >= '0' && a[ei] <= '9')
                ei++;
            while (ej < bn && b[ej] >= '0' && b[ej] <= '9')
                ej++;
            if (ei - si != ej - sj)
                return ei - si < ej - sj ? -1 : 1;
            int c = memcmp(a + si, b + sj, ei - si);
            if (c)
                return c;
            i = ei;
            j = ej;
            continue;
        }
        if (a[i] != b[j])
            return (unsigned char)a[i] < (unsigned char)b[j] ? -1 : 1;
        i++;
        j++;
    }
    return (i < an) - (j < bn);
}

static int cmp_column(const void *pa, const void *pb)
{
    const column *a = pa, *b = pb;
    if (a->group != b->group)
        return a->group - b->group;
    if (a->group == GROUP_GPU_EACH) {
        int c = natural_cmp(a->name, a->label_len, b->name, b->label_len);
        if (c)
            return c;
        c = strncmp(a->name, b->name, a->label_len > b->label_len ? a->label_len : b->label_len);
        if (c)
            return c;
    }
    return a->idx < b->idx ? -1 : a->idx > b->idx;
}

/* ------------------------------------------------------------------ */
/* The run summary                                                    */
/* ------------------------------------------------------------------ */

typedef struct {
    long num;
    char *name; /* directory name */
} numbered;

typedef struct {
    size_t exec; /* index into the execution list */
    long rep;
    char *name;
    char *path;
    pd_summary_kvs metrics;
    pd_summary_kvs rep_vars; /* derived variables' values for this repetition */
    int nfiles; /* sample files found; -1: directory unreadable */
    char err[256];
} rep_job;

static int cmp_numbered(const void *pa, const void *pb)
{
    const numbered *a = pa, *b = pb;
    if (a->num != b->num)
        return a->num < b->num ? -1 : 1;
    return strcmp(a->name, b->name);
}

static int cmp_job(const void *pa, const void *pb)
{
    const rep_job *a = pa, *b = pb;
    if (a->exec != b->exec)
        return a->exec < b->exec ? -1 : 1;
    if (a->rep != b->rep)
        return a->rep < b->rep ? -1 : 1;
    return strcmp(a->name, b->name);
}

/* "<prefix><digits>" -> number; false for anything else. */
static bool parse_numbered(const char *name, const char *prefix, long *num)
{
    if (!has_prefix(name, prefix))
        return false;
    const char *d = name + strlen(prefix);
    size_t n = strlen(d);
    if (n == 0 || n > 9 || strspn(d, "0123456789") != n)
        return false;
    *num = strtol(d, NULL, 10);
    return true;
}

/* Sub-directories of dir named <prefix><digits>, sorted by number.
 * Returns the count, or -1 (errno) when dir cannot be read. */
static long list_numbered(const char *dir, const char *prefix, numbered **out)
{
    DIR *d = opendir(dir);
    *out = NULL;
    if (!d)
        return -1;
    numbered *v = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        long num;
        char path[4096];
        struct stat st;
        if (!parse_numbered(e->d_name, prefix, &num) ||
            !join_path(path, sizeof path, dir, e->d_name) ||
            stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
            continue;
        char *name = pd_strdup(e->d_name);
        if (!name || !grow((void **)&v, &cap, n + 1, sizeof *v)) {
            free(name);
            for (size_t i = 0; i < n; i++)
                free(v[i].name);
            free(v);
            closedir(d);
            errno = ENOMEM;
            return -1;
        }
        v[n++] = (numbered){num, name};
    }
    closedir(d);
    if (n > 1)
        qsort(v, n, sizeof *v, cmp_numbered);
    *out = v;
    return (long)n;
}

static void free_numbered(numbered *v, long n)
{
    for (long i = 0; i < n; i++)
        free(v[i].name);
    free(v);
}

/* Ordered, de-duplicated column names. */
typedef struct {
    hmap index; /* name -> position */
    name_list names;
} column_set;

static bool column_add(column_set *c, const char *name)
{
    size_t pos;
    int rc = hm_put(&c->index, name, strlen(name), c->names.n, &pos);
    if (rc < 0)
        return false;
    return rc == 0 || names_push(&c->names, name);
}

static void column_set_free(column_set *c)
{
    hm_free(&c->index);
    names_free(&c->names);
}

/* Renders the CSV of the given rows (already sorted). NULL when out of memory. */
static char *render_csv(const numbered *execs, const pd_summary_kvs *params, rep_job *const *rows,
                        size_t nrows, size_t *len)
{
    column_set vars = {0}, metrics_seen = {0}, metrics = {0};
    column *cols = NULL;
    const char **cells = NULL;
    pd_str s = {0};
    char *result = NULL;

    for (size_t r = 0; r < nrows; r++) {
        const pd_summary_kvs *p = &params[rows[r]->exec];
        for (size_t i = 0; i < p->n; i++)
            if (!column_add(&vars, p->items[i].key))
                goto out;
        const pd_summary_kvs *m = &rows[r]->metrics;
        for (size_t i = 0; i < m->n; i++)
            if (!column_add(&metrics_seen, m->items[i].key))
                goto out;
    }
    size_t nm = metrics_seen.names.n, nv = vars.names.n;
    cols = malloc((nm ? nm : 1) * sizeof *cols);
    cells = calloc(nv + nm + 1, sizeof *cells);
    if (!cols || !cells)
        goto out;
    for (size_t i = 0; i < nm; i++)
        cols[i] = classify(metrics_seen.names.items[i], i);
    qsort(cols, nm, sizeof *cols, cmp_column);
    for (size_t i = 0; i < nm; i++)
        if (!column_add(&metrics, cols[i].name))
            goto out;

    pd_str_append(&s, "execution_id,repetition");
    for (size_t i = 0; i < nv; i++) {
        pd_str_append(&s, ",");
        pd_csv_put_field(&s, vars.names.items[i]);
    }
    for (size_t i = 0; i < nm; i++) {
        pd_str_append(&s, ",");
        pd_csv_put_field(&s, metrics.names.items[i]);
    }
    pd_str_append(&s, "\n");

    for (size_t r = 0; r < nrows; r++) {
        const rep_job *job = rows[r];
        const pd_summary_kvs *p = &params[job->exec];
        size_t pos;
        memset(cells, 0, (nv + nm) * sizeof *cells);
        for (size_t i = 0; i < p->n; i++)
            if (hm_get(&vars.index, p->items[i].key, strlen(p->items[i].key), &pos))
                cells[pos] = p->items[i].value;
        for (size_t i = 0; i < job->rep_vars.n; i++)
            if (hm_get(&vars.index, job->rep_vars.items[i].key, strlen(job->rep_vars.items[i].key), &pos))
                cells[pos] = job->rep_vars.items[i].value;
        for (size_t i = 0; i < job->metrics.n; i++) {
            const pd_summary_kv *kv = &job->metrics.items[i];
            if (hm_get(&metrics.index, kv->key, strlen(kv->key), &pos))
                cells[nv + pos] = kv->value;
        }
        pd_str_printf(&s, "exec_%04ld,%ld", execs[job->exec].num, job->rep);
        for (size_t i = 0; i < nv + nm; i++) {
            pd_str_append(&s, ",");
            if (cells[i])
                pd_csv_put_field(&s, cells[i]);
        }
        pd_str_append(&s, "\n");
    }
    *len = s.len;
    result = pd_str_take(&s);
out:
    pd_str_free(&s);
    free(cols);
    free(cells);
    column_set_free(&vars);
    column_set_free(&metrics_seen);
    column_set_free(&metrics);
    return result;
}

/* The job of execution number num, repetition rep (jobs sorted by cmp_job,
 * execs by number), or NULL. */
static rep_job *find_job(rep_job *jobs, size_t njobs, const numbered *execs, long num, long rep)
{
    size_t lo = 0, hi = njobs;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        long mn = execs[jobs[mid].exec].num;
        if (mn < num || (mn == num && jobs[mid].rep < rep))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < njobs && execs[jobs[lo].exec].num == num && jobs[lo].rep == rep ? &jobs[lo] : NULL;
}

/* IOPS evaluates a derived variable for each repetition (its expr may use
 * `repetition`) and its summary shows that repetition's value, while
 * __iops_params.json holds repetition 1's. The per-repetition values are in
 * the run's results table in IOPS's flattened layout (execution.execution_id,
 * execution.repetition, vars.NAME; paddiser's short layout is read too),
 * which __iops_run_metadata.json names
 * (output.path, relative to the run directory); the derived variables are
 * the ones its `variables` give an expr. Both IOPS and paddiser run
 * directories have them. Without them (no metadata, no table, a repetition
 * that did not succeed) the params file's values stay. Returns 0, or -1 when
 * out of memory. */
static int read_rep_vars(const char *run_dir, rep_job *jobs, size_t njobs, const numbered *execs)
{
    char path[4096];
    if (!join_path(path, sizeof path, run_dir, "__iops_run_metadata.json"))
        return 0;
    json_t *meta = json_load_file(path, 0, NULL);
    json_t *vars = json_object_get(meta, "variables"), *out = json_object_get(meta, "output");
    const char *table = json_string_value(json_object_get(out, "path"));
    const char *type = json_string_value(json_object_get(out, "type"));
    const char *derived[64];
    size_t nderived = 0;
    const char *name;
    json_t *v;
    json_object_foreach(vars, name, v) {
        if (json_object_get(v, "expr") && nderived < PD_ARRAY_LEN(derived))
            derived[nderived++] = name;
    }
    int rc = 0;
    pd_csv *csv = NULL;
    if (nderived == 0 || !table || (type && strcmp(type, "csv") != 0))
        goto out;
    if (table[0] == '/')
        snprintf(path, sizeof path, "%s", table);
    else if (!join_path(path, sizeof path, run_dir, table))
        goto out;
    char cerr[256];
    if (!(csv = pd_csv_load(path, cerr, sizeof cerr)))
        goto out;
    int cid = pd_csv_col(csv, "execution.execution_id"), crep = pd_csv_col(csv, "execution.repetition");
    /* or paddiser's short layout: execution_id as exec_NNNN, the variables by name */
    bool short_layout = cid < 0 && (cid = pd_csv_col(csv, "execution_id")) >= 0;
    if (short_layout)
        crep = pd_csv_col(csv, "repetition");
    int cols[PD_ARRAY_LEN(derived)];
    for (size_t d = 0; d < nderived; d++) {
        char col[512];
        snprintf(col, sizeof col, "%s%s", short_layout ? "" : "vars.", derived[d]);
        cols[d] = pd_csv_col(csv, col);
    }
    for (size_t r = 0; cid >= 0 && crep >= 0 && r < csv->nrows; r++) {
        const char *id = pd_csv_get(csv, r, cid), *rep = pd_csv_get(csv, r, crep);
        if (short_layout && id && !strncmp(id, "exec_", 5))
            id += 5;
        char *e1, *e2;
        long num = id ? strtol(id, &e1, 10) : 0, rnum = rep ? strtol(rep, &e2, 10) : 0;
        if (!id || !rep || *e1 || *e2 || e1 == id || e2 == rep)
            continue;
        rep_job *job = find_job(jobs, njobs, execs, num, rnum);
        for (; job && job < jobs + njobs && execs[job->exec].num == num && job->rep == rnum; job++)
            for (size_t d = 0; d < nderived; d++) {
                const char *val = pd_csv_get(csv, r, cols[d]);
                if (val)
                    pd_summary_kvs_set(&job->rep_vars, derived[d], val);
            }
    }
    for (size_t i = 0; i < njobs; i++)
        if (jobs[i].rep_vars.oom)
            rc = -1;
out:
    pd_csv_free(csv);
    json_decref(meta);
    return rc;
}

int pd_summary_write(const char *run_dir, char *err, size_t errlen)
{
    numbered *execs = NULL;
    /* the summary goes in run_dir; the executions may be under runs/ (IOPS) */
    char exec_root[4096];
    if (!pd_iops_exec_root(run_dir, exec_root, sizeof exec_root))
        snprintf(exec_root, sizeof exec_root, "%s", run_dir);
    long nexec = list_numbered(exec_root, "exec_", &execs);
    if (nexec < 0) {
        snprintf(err, errlen, "cannot read run directory %s: %s", run_dir, strerror(errno));
        return -1;
    }
    rep_job *jobs = NULL, **rows = NULL;
    pd_summary_kvs *params = NULL;
    size_t njobs = 0, job_cap = 0, nrows = 0;
    char *csv = NULL;
    int rc = -1;

    for (long x = 0; x < nexec; x++) {
        char exec_dir[4096];
        if (pd_path_join(exec_dir, sizeof exec_dir, exec_root, execs[x].name) != 0)
            continue;
        numbered *reps;
        long nrep = list_numbered(exec_dir, "repetition_", &reps);
        if (nrep < 0) {
            if (errno == ENOMEM)
                goto oom;
            continue; /* unreadable execution directory: no rows from it */
        }
        for (long r = 0; r < nrep; r++) {
            char path[4096];
            if (!join_path(path, sizeof path, exec_dir, reps[r].name))
                continue;
            char *p = pd_strdup(path), *name = pd_strdup(reps[r].name);
            if (!p || !name || !grow((void **)&jobs, &job_cap, njobs + 1, sizeof *jobs)) {
                free(p);
                free(name);
                free_numbered(reps, nrep);
                goto oom;
            }
            jobs[njobs++] = (rep_job){.exec = (size_t)x, .rep = reps[r].num, .name = name, .path = p};
        }
        free_numbered(reps, nrep);
    }
    if (njobs > 1)
        qsort(jobs, njobs, sizeof *jobs, cmp_job);

    /* repetitions are independent: summarise them in parallel */
#pragma omp parallel for schedule(dynamic, 1) if (njobs > 1)
    for (long i = 0; i < (long)njobs; i++)
        jobs[i].nfiles = pd_summary_repetition_metrics(jobs[i].path, &jobs[i].metrics,
                                                       jobs[i].err, sizeof jobs[i].err);

    rows = malloc((njobs ? njobs : 1) * sizeof *rows);
    params = calloc(nexec ? (size_t)nexec : 1, sizeof *params);
    if (!rows || !params)
        goto oom;
    size_t sample_files = 0;
    for (size_t i = 0; i < njobs; i++) {
        if (jobs[i].metrics.oom)
            goto oom;
        /* unreadable (-1) directories, and those with neither a trace nor a
         * sampler that ran (no metrics), get no row */
        if (jobs[i].nfiles > 0 || (jobs[i].nfiles == 0 && jobs[i].metrics.n > 0))
            rows[nrows++] = &jobs[i];
        if (jobs[i].nfiles > 0)
            sample_files += (size_t)jobs[i].nfiles;
    }
    if (sample_files == 0) { /* spec: no sample files, no summary */
        rc = 0;
        goto out;
    }
    for (size_t i = 0; i < nrows; i++) {
        size_t x = rows[i]->exec;
        if (i > 0 && rows[i - 1]->exec == x)
            continue;
        char exec_dir[4096], perr[256];
        pd_path_join(exec_dir, sizeof exec_dir, exec_root, execs[x].name); /* fitted above */
        /* a missing or malformed params file leaves the variable cells empty */
        if (pd_summary_read_params(exec_dir, &params[x], perr, sizeof perr) < 0)
            goto oom;
    }
    if (read_rep_vars(run_dir, jobs, njobs, execs) != 0)
        goto oom;
    size_t len;
    csv = render_csv(execs, params, rows, nrows, &len);
    if (!csv)
        goto oom;
    char path[4096];
    if (!join_path(path, sizeof path, run_dir, SUMMARY_FILE)) {
        snprintf(err, errlen, "%s: path too long", run_dir);
        goto out;
    }
    if (pd_write_file_atomic(path, csv, len) != 0) {
        snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
        goto out;
    }
    rc = 1;
    goto out;
oom:
    snprintf(err, errlen, "out of memory while summarising %s", run_dir);
    rc = -1;
out:
    free(csv);
    for (size_t i = 0; i < njobs; i++) {
        free(jobs[i].name);
        free(jobs[i].path);
        pd_summary_kvs_free(&jobs[i].metrics);
        pd_summary_kvs_free(&jobs[i].rep_vars);
    }
    if (params)
        for (long x = 0; x < nexec; x++)
            pd_summary_kvs_free(&params[x]);
    free(params);
    free(rows);
    free(jobs);
    free_numbered(execs, nexec);
    return rc;
}

/* ------------------------------------------------------------------ */
/* paddiser bench --summarize RUN_DIR                                 */
/* ------------------------------------------------------------------ */

static void summary_usage(FILE *out)
{
    fprintf(out, "usage: paddiser bench --summarize RUN_DIR\n"
                 "Recomputes RUN_DIR/" SUMMARY_FILE " from the trace files under\n"
                 "RUN_DIR/exec_NNNN/repetition_NNN/ (columns: docs/summary.md).\n"
                 "  --summarize RUN_DIR   the run directory (also --summarize=RUN_DIR)\n"
                 "  -h, --help            this help\n");
}

int pd_summary_main(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"summarize", required_argument, NULL, 's'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *run_dir = NULL;
    int c;
    optind = 0;
    while ((c = pd_opt_next("paddiser bench", argc, argv, "h", longopts)) != -1) {
        if (c == 'h') {
            summary_usage(stdout);
            return 0;
        }
        if (c != 's')
            return 2;
        if (run_dir)
            return pd_opt_error("paddiser bench", "--summarize takes one run directory ('%s' and '%s' given)",
                                run_dir, optarg);
        run_dir = optarg;
    }
    for (; optind < argc; optind++) { /* the run directory may also stand alone */
        if (run_dir)
            return pd_opt_error("paddiser bench", "--summarize takes one run directory ('%s' and '%s' given)",
                                run_dir, argv[optind]);
        run_dir = argv[optind];
    }
    if (!run_dir || !*run_dir) {
        fprintf(stderr, "paddiser bench: --summarize needs a run directory\n");
        summary_usage(stderr);
        return 2;
    }
    struct stat st;
    if (stat(run_dir, &st) != 0) {
        fprintf(stderr, "paddiser bench: run directory %s: %s\n", run_dir, strerror(errno));
        return 2;
    }
    if (!S_ISDIR(st.st_mode)) {
        fprintf(stderr, "paddiser bench: %s is not a directory\n", run_dir);
        return 2;
    }
    char err[1024], root[4096];
    if (!pd_iops_exec_root(run_dir, root, sizeof root)) {
        pd_iops_no_run_message(run_dir, err, sizeof err);
        fprintf(stderr, "paddiser bench: --summarize: %s\n", err);
        return 2;
    }
    int rc = pd_summary_write(run_dir, err, sizeof err);
    if (rc < 0) {
        fprintf(stderr, "paddiser bench: %s\n", err);
        return 1;
    }
    if (rc == 0) {
        fprintf(stderr, "paddiser bench: no sample files under %s/exec_*/repetition_*/; "
                        "no summary written\n", root);
        return 0;
    }
    printf("%s/%s\n", run_dir, SUMMARY_FILE);
    return 0;
}
