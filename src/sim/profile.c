/* Profile construction and its JSON file (see profile.h). */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "lib/estimate.h"
#include "sim/profile.h"

static const char *const pattern_names[] = {
    [PD_PATTERN_UNKNOWN] = "unknown", [PD_PATTERN_STREAM] = "stream",
    [PD_PATTERN_STRIDE] = "stride",   [PD_PATTERN_STENCIL] = "stencil",
    [PD_PATTERN_RANDOM] = "random",
};

const char *pd_sim_pattern_name(pd_pattern pat)
{
    if ((int)pat < 0 || (size_t)pat >= PD_ARRAY_LEN(pattern_names))
        return "unknown";
    return pattern_names[pat];
}

int pd_sim_pattern_parse(const char *name, pd_pattern *out)
{
    for (size_t i = 0; i < PD_ARRAY_LEN(pattern_names); i++)
        if (name && !strcmp(name, pattern_names[i])) {
            *out = (pd_pattern)i;
            return 0;
        }
    return -1;
}

pd_sim_profile *pd_sim_profile_new(const char *workload, const char *input, int ntasks)
{
    if (ntasks <= 0)
        return NULL;
    pd_sim_profile *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->workload = pd_strdup(workload ? workload : "");
    p->input = pd_strdup(input ? input : "");
    p->tasks = calloc((size_t)ntasks, sizeof *p->tasks);
    p->ntasks = ntasks;
    p->page_bytes = PD_SIM_PAGE;
    if (!p->workload || !p->input || !p->tasks) {
        pd_sim_profile_free(p);
        return NULL;
    }
    return p;
}

int pd_sim_profile_set_unit(pd_sim_profile *p, size_t page_bytes)
{
    if (!p || p->nobjects > 0 || page_bytes < PD_SIM_PAGE || page_bytes > PD_SIM_MAX_UNIT ||
        (page_bytes & (page_bytes - 1)) != 0)
        return -1;
    p->page_bytes = page_bytes;
    return 0;
}

int pd_sim_profile_add_object(pd_sim_profile *p, const char *name, size_t bytes,
                              pd_pattern pattern, size_t elem_size)
{
    if (!p || !name || bytes == 0 || p->tasks[0].reads)
        return -1;
    pd_sim_object *o = realloc(p->objects, (size_t)(p->nobjects + 1) * sizeof *o);
    if (!o)
        return -1;
    p->objects = o;
    pd_sim_object *ob = &o[p->nobjects];
    memset(ob, 0, sizeof *ob);
    ob->name = pd_strdup(name);
    if (!ob->name)
        return -1;
    ob->bytes = bytes;
    ob->npages = (bytes + p->page_bytes - 1) / p->page_bytes;
    ob->page_base = p->npages;
    ob->pattern = pattern;
    ob->elem_size = elem_size ? elem_size : 8;
    p->npages += ob->npages;
    return p->nobjects++;
}

/* Every object in at most PD_SIM_REGIONS_PER_OBJECT regions of equal page
 * count (the last may be shorter); regions never span objects. */
static int make_regions(pd_sim_profile *p)
{
    size_t n = 0;
    for (int o = 0; o < p->nobjects; o++) {
        size_t np = p->objects[o].npages, per = (np + PD_SIM_REGIONS_PER_OBJECT - 1) / PD_SIM_REGIONS_PER_OBJECT;
        n += (np + per - 1) / per;
    }
    p->region_page = malloc((n + 1) * sizeof *p->region_page);
    p->region_object = malloc((n ? n : 1) * sizeof *p->region_object);
    p->page_region = malloc(p->npages * sizeof *p->page_region);
    if (!p->region_page || !p->region_object || !p->page_region)
        return -1;
    size_t r = 0;
    for (int o = 0; o < p->nobjects; o++) {
        const pd_sim_object *ob = &p->objects[o];
        size_t per = (ob->npages + PD_SIM_REGIONS_PER_OBJECT - 1) / PD_SIM_REGIONS_PER_OBJECT;
        for (size_t k = 0; k < ob->npages; k++) {
            if (k % per == 0) {
                p->region_page[r] = ob->page_base + k;
                p->region_object[r++] = o;
            }
            p->page_region[ob->page_base + k] = r - 1;
        }
    }
    p->region_page[n] = p->npages;
    p->nregions = n;
    return 0;
}

int pd_sim_profile_alloc_counts(pd_sim_profile *p)
{
    if (!p || p->npages == 0 || p->tasks[0].reads)
        return -1;
    for (int t = 0; t < p->ntasks; t++) {
        p->tasks[t].reads = calloc(p->npages, sizeof(uint64_t));
        p->tasks[t].writes = calloc(p->npages, sizeof(uint64_t));
        if (!p->tasks[t].reads || !p->tasks[t].writes)
            return -1;
    }
    return make_regions(p);
}

pd_sim_phase_task *pd_sim_profile_add_phase(pd_sim_profile *p)
{
    if (!p || !p->region_page)
        return NULL;
    size_t nt = (size_t)p->ntasks, nr = p->nregions ? p->nregions : 1;
    pd_sim_phase_task *ph = realloc(p->phases, ((size_t)p->nphases + 1) * nt * sizeof *ph);
    if (!ph)
        return NULL;
    p->phases = ph;
    pd_sim_phase_task *row = &ph[(size_t)p->nphases * nt];
    memset(row, 0, nt * sizeof *row);
    p->nphases++; /* counted before the counters, so pd_sim_profile_free frees a partial row */
    for (size_t t = 0; t < nt; t++) {
        row[t].reads = calloc(nr, sizeof(uint64_t));
        row[t].writes = calloc(nr, sizeof(uint64_t));
        if (!row[t].reads || !row[t].writes)
            return NULL;
    }
    return row;
}

int pd_sim_profile_single_phase(pd_sim_profile *p)
{
    if (p->nphases > 0)
        return 0;
    pd_sim_phase_task *row = pd_sim_profile_add_phase(p);
    if (!row)
        return -1;
    for (int t = 0; t < p->ntasks; t++) {
        row[t].time_s = p->tasks[t].time_s;
        for (size_t g = 0; g < p->npages; g++) {
            row[t].reads[p->page_region[g]] += p->tasks[t].reads[g];
            row[t].writes[p->page_region[g]] += p->tasks[t].writes[g];
        }
    }
    return 0;
}

void pd_sim_profile_free(pd_sim_profile *p)
{
    if (!p)
        return;
    for (int i = 0; i < p->nobjects; i++)
        free(p->objects[i].name);
    free(p->objects);
    if (p->tasks)
        for (int t = 0; t < p->ntasks; t++) {
            free(p->tasks[t].reads);
            free(p->tasks[t].writes);
        }
    free(p->tasks);
    for (size_t k = 0; p->phases && k < (size_t)p->nphases * (size_t)p->ntasks; k++) {
        free(p->phases[k].reads);
        free(p->phases[k].writes);
    }
    free(p->phases);
    free(p->region_page);
    free(p->region_object);
    free(p->page_region);
    free(p->workload);
    free(p->input);
    free(p);
}

double pd_sim_task_accesses(const pd_sim_profile *p, int task)
{
    double s = 0;
    const pd_sim_task *t = &p->tasks[task];
    for (size_t g = 0; g < p->npages; g++)
        s += (double)t->reads[g] + (double)t->writes[g];
    return s;
}

void pd_sim_page_totals(const pd_sim_profile *p, double *page_tot)
{
    for (size_t g = 0; g < p->npages; g++) {
        double s = 0;
        for (int t = 0; t < p->ntasks; t++)
            s += (double)p->tasks[t].reads[g] + (double)p->tasks[t].writes[g];
        page_tot[g] = s;
    }
}

size_t pd_sim_footprint(const pd_sim_profile *p)
{
    return p->npages * p->page_bytes;
}

size_t pd_sim_profile_bytes(const pd_sim_profile *p)
{
    size_t b = sizeof *p + strlen(p->workload) + strlen(p->input) + 2;
    b += (size_t)p->nobjects * sizeof *p->objects;
    for (int o = 0; o < p->nobjects; o++)
        b += strlen(p->objects[o].name) + 1;
    b += (size_t)p->ntasks * (sizeof *p->tasks + (p->tasks[0].reads ? 2 * p->npages * sizeof(uint64_t) : 0));
    if (p->tasks[0].reads) /* regions */
        b += (p->nregions + 1) * sizeof *p->region_page + p->nregions * sizeof *p->region_object +
             p->npages * sizeof *p->page_region;
    b += (size_t)p->nphases * (size_t)p->ntasks * (sizeof *p->phases + 2 * p->nregions * sizeof(uint64_t));
    return b;
}

/* Spreads `count` lines of region r over its pages as the weights w (the
 * task's whole-run counts there; evenly when they are all 0) into acc[page]. */
static void spread_region(const pd_sim_profile *p, size_t r, uint64_t count, const uint64_t *w,
                          double *acc)
{
    size_t lo = p->region_page[r], hi = p->region_page[r + 1];
    double tot = 0;
    for (size_t g = lo; g < hi; g++)
        tot += (double)w[g];
    for (size_t g = lo; g < hi; g++)
        acc[g] += tot > 0 ? (double)count * (double)w[g] / tot : (double)count / (double)(hi - lo);
}

pd_sim_profile *pd_sim_profile_coarsen(const pd_sim_profile *p, size_t page_bytes, char *err,
                                       size_t errlen)
{
    if (page_bytes < p->page_bytes || page_bytes % p->page_bytes != 0) {
        snprintf(err, errlen, "unit %zu is not a multiple of the profile's %zu", page_bytes, p->page_bytes);
        return NULL;
    }
    size_t ratio = page_bytes / p->page_bytes;
    pd_sim_profile *q = pd_sim_profile_new(p->workload, p->input, p->ntasks);
    double *acc_r = NULL, *acc_w = NULL;
    size_t *unit_of = NULL;
    if (!q || pd_sim_profile_set_unit(q, page_bytes) != 0) {
        snprintf(err, errlen, q ? "unit %zu: a power of two from %d to %lu bytes" : "out of memory", page_bytes,
                 PD_SIM_PAGE, PD_SIM_MAX_UNIT);
        goto fail;
    }
    for (int o = 0; o < p->nobjects; o++) {
        const pd_sim_object *ob = &p->objects[o];
        if (pd_sim_profile_add_object(q, ob->name, ob->bytes, ob->pattern, ob->elem_size) < 0)
            goto oom;
    }
    if (pd_sim_profile_alloc_counts(q) != 0)
        goto oom;
    /* page of p -> unit of q: units start at each object's first page */
    unit_of = malloc((p->npages ? p->npages : 1) * sizeof *unit_of);
    acc_r = malloc((p->npages ? p->npages : 1) * sizeof *acc_r);
    acc_w = malloc((p->npages ? p->npages : 1) * sizeof *acc_w);
    if (!unit_of || !acc_r || !acc_w)
        goto oom;
    for (int o = 0; o < p->nobjects; o++)
        for (size_t k = 0; k < p->objects[o].npages; k++)
            unit_of[p->objects[o].page_base + k] = q->objects[o].page_base + k / ratio;
    for (int t = 0; t < p->ntasks; t++) {
        q->tasks[t].time_s = p->tasks[t].time_s;
        q->tasks[t].compute_s = p->tasks[t].compute_s;
        for (size_t g = 0; g < p->npages; g++) {
            q->tasks[t].reads[unit_of[g]] += p->tasks[t].reads[g];
            q->tasks[t].writes[unit_of[g]] += p->tasks[t].writes[g];
        }
    }
    for (int ph = 0; ph < p->nphases; ph++) {
        pd_sim_phase_task *row = pd_sim_profile_add_phase(q);
        if (!row)
            goto oom;
        for (int t = 0; t < p->ntasks; t++) {
            const pd_sim_phase_task *pt = PD_SIM_PHASE(p, ph, t);
            row[t].time_s = pt->time_s;
            for (size_t g = 0; g < p->npages; g++)
                acc_r[g] = acc_w[g] = 0;
            for (size_t r = 0; r < p->nregions; r++) {
                if (pt->reads[r])
                    spread_region(p, r, pt->reads[r], p->tasks[t].reads, acc_r);
                if (pt->writes[r])
                    spread_region(p, r, pt->writes[r], p->tasks[t].writes, acc_w);
            }
            /* per region of q, in doubles, then whole lines */
            double *rr = calloc(q->nregions * 2, sizeof *rr);
            if (!rr)
                goto oom;
            for (size_t g = 0; g < p->npages; g++) {
                size_t r = q->page_region[unit_of[g]];
                rr[2 * r] += acc_r[g], rr[2 * r + 1] += acc_w[g];
            }
            for (size_t r = 0; r < q->nregions; r++) {
                row[t].reads[r] = (uint64_t)llround(rr[2 * r]);
                row[t].writes[r] = (uint64_t)llround(rr[2 * r + 1]);
            }
            free(rr);
        }
    }
    free(unit_of), free(acc_r), free(acc_w);
    return q;
oom:
    snprintf(err, errlen, "out of memory");
fail:
    free(unit_of), free(acc_r), free(acc_w);
    pd_sim_profile_free(q);
    return NULL;
}

pd_sim_profile *pd_sim_profile_predict(const pd_sim_profile *base, const pd_sim_profile *shape,
                                       char *err, size_t errlen)
{
    if (base->nobjects != shape->nobjects || base->ntasks != shape->ntasks) {
        snprintf(err, errlen, "cannot predict %s/%s from %s/%s: objects or tasks differ",
                 shape->workload, shape->input, base->workload, base->input);
        return NULL;
    }
    for (int o = 0; o < base->nobjects; o++)
        if (strcmp(base->objects[o].name, shape->objects[o].name)) {
            snprintf(err, errlen, "cannot predict %s/%s from %s/%s: object %d is %s, not %s",
                     shape->workload, shape->input, base->workload, base->input, o,
                     shape->objects[o].name, base->objects[o].name);
            return NULL;
        }
    if (base->page_bytes != shape->page_bytes) {
        snprintf(err, errlen, "cannot predict %s/%s from %s/%s: units differ (%zu, %zu bytes)", shape->workload,
                 shape->input, base->workload, base->input, shape->page_bytes, base->page_bytes);
        return NULL;
    }
    pd_sim_profile *p = pd_sim_profile_new(shape->workload, shape->input, shape->ntasks);
    int ok = p != NULL && pd_sim_profile_set_unit(p, shape->page_bytes) == 0;
    for (int o = 0; ok && o < shape->nobjects; o++)
        ok = pd_sim_profile_add_object(p, shape->objects[o].name, shape->objects[o].bytes,
                                       shape->objects[o].pattern, shape->objects[o].elem_size) == o;
    if (!ok || pd_sim_profile_alloc_counts(p) != 0) {
        snprintf(err, errlen, "out of memory");
        pd_sim_profile_free(p);
        return NULL;
    }
    for (int t = 0; t < p->ntasks; t++) {
        double acc_base = 0, acc_est = 0;
        for (int o = 0; o < p->nobjects; o++) {
            const pd_sim_object *ob = &base->objects[o], *on = &p->objects[o];
            double scale = pd_estimate_accesses(1.0, ob->bytes, on->bytes, 1.0);
            double stretch = (double)ob->npages / (double)on->npages;
            for (size_t j = 0; j < on->npages; j++) {
                size_t k = (size_t)((double)j * stretch);
                if (k >= ob->npages)
                    k = ob->npages - 1;
                double r = (double)base->tasks[t].reads[ob->page_base + k] * stretch * scale;
                double w = (double)base->tasks[t].writes[ob->page_base + k] * stretch * scale;
                p->tasks[t].reads[on->page_base + j] = (uint64_t)llround(r);
                p->tasks[t].writes[on->page_base + j] = (uint64_t)llround(w);
                acc_est += r + w;
            }
            for (size_t k = 0; k < ob->npages; k++)
                acc_base += (double)base->tasks[t].reads[ob->page_base + k] +
                            (double)base->tasks[t].writes[ob->page_base + k];
        }
        double s = acc_base > 0 ? acc_est / acc_base : 1;
        p->tasks[t].time_s = base->tasks[t].time_s * s;
        p->tasks[t].compute_s = base->tasks[t].compute_s * s;
    }
    if (pd_sim_profile_single_phase(p) != 0) { /* an estimate knows no phases */
        snprintf(err, errlen, "out of memory");
        pd_sim_profile_free(p);
        return NULL;
    }
    return p;
}

/* ---- JSON --------------------------------------------------------------- */

int pd_sim_profile_save(const pd_sim_profile *p, const char *path, char *err, size_t errlen)
{
    json_t *root = json_object(), *objs = json_array(), *tasks = json_array();
    json_object_set_new(root, "format", json_string("paddiser-sim-profile"));
    /* version 3 only where it says more: a measured (4 KiB) profile stays a
     * version-2 file, byte for byte */
    json_object_set_new(root, "version", json_integer(p->page_bytes == PD_SIM_PAGE ? 2 : 3));
    json_object_set_new(root, "workload", json_string(p->workload));
    json_object_set_new(root, "input", json_string(p->input));
    json_object_set_new(root, "page_size", json_integer((json_int_t)p->page_bytes));
    for (int i = 0; i < p->nobjects; i++) {
        const pd_sim_object *o = &p->objects[i];
        json_array_append_new(objs, json_pack("{s:s, s:I, s:s, s:I}", "name", o->name,
                                              "bytes", (json_int_t)o->bytes, "pattern",
                                              pd_sim_pattern_name(o->pattern), "elem_size",
                                              (json_int_t)o->elem_size));
    }
    for (int t = 0; t < p->ntasks; t++) {
        const pd_sim_task *tk = &p->tasks[t];
        json_t *pages = json_array();
        for (int i = 0; i < p->nobjects; i++) {
            const pd_sim_object *o = &p->objects[i];
            for (size_t pg = 0; pg < o->npages; pg++) {
                size_t g = o->page_base + pg;
                if (tk->reads[g] || tk->writes[g])
                    json_array_append_new(pages, json_pack("[i, I, I, I]", i, (json_int_t)pg,
                                                           (json_int_t)tk->reads[g],
                                                           (json_int_t)tk->writes[g]));
            }
        }
        json_array_append_new(tasks, json_pack("{s:i, s:f, s:f, s:o}", "id", t, "time_s",
                                               tk->time_s, "compute_s", tk->compute_s,
                                               "pages", pages));
    }
    json_object_set_new(root, "objects", objs);
    json_object_set_new(root, "tasks", tasks);
    json_t *phases = json_array();
    for (int ph = 0; ph < p->nphases; ph++) {
        json_t *row = json_array();
        for (int t = 0; t < p->ntasks; t++) {
            const pd_sim_phase_task *pt = PD_SIM_PHASE(p, ph, t);
            json_t *regs = json_array();
            for (size_t r = 0; r < p->nregions; r++)
                if (pt->reads[r] || pt->writes[r])
                    json_array_append_new(regs, json_pack("[I, I, I]", (json_int_t)r,
                                                          (json_int_t)pt->reads[r],
                                                          (json_int_t)pt->writes[r]));
            json_array_append_new(row, json_pack("{s:f, s:o}", "time_s", pt->time_s, "regions", regs));
        }
        json_array_append_new(phases, row);
    }
    if (p->nphases > 0) /* without, the file loads as one phase of the whole run */
        json_object_set_new(root, "phases", phases);
    else
        json_decref(phases);
    /* atomic replace: concurrent studies may share a profile cache */
    char *text = json_dumps(root, JSON_COMPACT);
    json_decref(root);
    if (!text) {
        snprintf(err, errlen, "cannot encode profile %s: out of memory", path);
        return -1;
    }
    int rc = pd_write_file_atomic(path, text, strlen(text));
    free(text);
    if (rc != 0) {
        snprintf(err, errlen, "cannot write profile %s: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}

#define FAIL(...) do { snprintf(err, errlen, __VA_ARGS__); goto fail; } while (0)

/* "phases" of a version-2 file; none (version 1) means one phase. */
static int load_phases(pd_sim_profile *p, json_t *phases, const char *path, char *err,
                       size_t errlen)
{
    if (!phases) {
        if (pd_sim_profile_single_phase(p) == 0)
            return 0;
        FAIL("%s: out of memory", path);
    }
    if (!json_is_array(phases) || json_array_size(phases) == 0)
        FAIL("%s: \"phases\" must be a non-empty array", path);
    size_t ph;
    json_t *row;
    json_array_foreach(phases, ph, row) {
        if (!json_is_array(row) || json_array_size(row) != (size_t)p->ntasks)
            FAIL("%s: phase %zu must list one entry per task (%d)", path, ph, p->ntasks);
        pd_sim_phase_task *pt = pd_sim_profile_add_phase(p);
        if (!pt)
            FAIL("%s: out of memory", path);
        size_t t;
        json_t *v;
        json_array_foreach(row, t, v) {
            json_t *ts = json_object_get(v, "time_s"), *regs = json_object_get(v, "regions");
            if (!json_is_number(ts) || json_number_value(ts) < 0 || !json_is_array(regs))
                FAIL("%s: phase %zu task %zu needs a non-negative \"time_s\" and a \"regions\" array",
                     path, ph, t);
            pt[t].time_s = json_number_value(ts);
            size_t k;
            json_t *e;
            json_array_foreach(regs, k, e) {
                json_int_t r, rd, wr;
                if (json_unpack(e, "[III]", &r, &rd, &wr) != 0 || r < 0 ||
                    (size_t)r >= p->nregions || rd < 0 || wr < 0)
                    FAIL("%s: phase %zu task %zu region entry %zu: want [region < %zu, reads >= 0, writes >= 0]",
                         path, ph, t, k, p->nregions);
                pt[t].reads[r] += (uint64_t)rd;
                pt[t].writes[r] += (uint64_t)wr;
            }
        }
    }
    return 0;
fail:
    return -1;
}

pd_sim_profile *pd_sim_profile_load(const char *path, char *err, size_t errlen)
{
    json_error_t jerr;
    pd_sim_profile *p = NULL;
    json_t *root = json_load_file(path, 0, &jerr);
    if (!root) {
        snprintf(err, errlen, "%s: %s (line %d)", path, jerr.text, jerr.line);
        return NULL;
    }
    const char *fmt = json_string_value(json_object_get(root, "format"));
    if (!fmt || strcmp(fmt, "paddiser-sim-profile"))
        FAIL("%s: not a paddiser-sim-profile file (\"format\" missing or wrong)", path);
    json_int_t version = json_integer_value(json_object_get(root, "version"));
    if (version != 1 && version != 2 && version != 3)
        FAIL("%s: unsupported profile version (want 1, 2 or 3)", path);
    json_t *ps = json_object_get(root, "page_size");
    json_int_t unit = ps ? json_integer_value(ps) : PD_SIM_PAGE;
    if (version < 3 && unit != PD_SIM_PAGE)
        FAIL("%s: page_size must be %d in a version-%lld profile", path, PD_SIM_PAGE, (long long)version);
    if (version == 3 && (!json_is_integer(ps) || unit < PD_SIM_PAGE || (uint64_t)unit > PD_SIM_MAX_UNIT ||
                         (unit & (unit - 1)) != 0))
        FAIL("%s: page_size must be a power of two from %d to %lu bytes", path, PD_SIM_PAGE, PD_SIM_MAX_UNIT);
    json_t *objs = json_object_get(root, "objects"), *tasks = json_object_get(root, "tasks");
    if (!json_is_array(objs) || json_array_size(objs) == 0)
        FAIL("%s: \"objects\" must be a non-empty array", path);
    if (!json_is_array(tasks) || json_array_size(tasks) == 0)
        FAIL("%s: \"tasks\" must be a non-empty array", path);
    const char *wl = json_string_value(json_object_get(root, "workload"));
    const char *in = json_string_value(json_object_get(root, "input"));
    p = pd_sim_profile_new(wl ? wl : "", in ? in : "", (int)json_array_size(tasks));
    if (!p || pd_sim_profile_set_unit(p, (size_t)unit) != 0)
        FAIL("%s: out of memory", path);
    size_t i;
    json_t *v;
    json_array_foreach(objs, i, v) {
        const char *name = json_string_value(json_object_get(v, "name"));
        json_t *b = json_object_get(v, "bytes");
        const char *pat = json_string_value(json_object_get(v, "pattern"));
        json_t *es = json_object_get(v, "elem_size");
        pd_pattern pp = PD_PATTERN_UNKNOWN;
        if (!name || !json_is_integer(b) || json_integer_value(b) <= 0)
            FAIL("%s: object %zu needs a \"name\" and a positive integer \"bytes\"", path, i);
        if (pat && pd_sim_pattern_parse(pat, &pp) != 0)
            FAIL("%s: object %s: unknown pattern '%s'", path, name, pat);
        if ((json_int_t)((uint64_t)json_integer_value(b) / (uint64_t)unit) > PD_SIM_MAX_PAGES - (json_int_t)p->npages)
            FAIL("%s: object %s: the objects exceed %d pages; not a profile of this tool", path, name, PD_SIM_MAX_PAGES);
        if (es && (!json_is_integer(es) || json_integer_value(es) <= 0))
            FAIL("%s: object %s: elem_size must be a positive integer", path, name);
        if (pd_sim_profile_add_object(p, name, (size_t)json_integer_value(b), pp,
                                      es ? (size_t)json_integer_value(es) : 8) < 0)
            FAIL("%s: out of memory", path);
    }
    if (pd_sim_profile_alloc_counts(p) != 0)
        FAIL("%s: out of memory", path);
    json_array_foreach(tasks, i, v) {
        pd_sim_task *tk = &p->tasks[i];
        json_t *ts = json_object_get(v, "time_s"), *cs = json_object_get(v, "compute_s");
        json_t *pages = json_object_get(v, "pages");
        if (!json_is_number(ts) || json_number_value(ts) < 0 || !json_is_number(cs) ||
            json_number_value(cs) < 0)
            FAIL("%s: task %zu needs non-negative numbers \"time_s\" and \"compute_s\"", path, i);
        if (!json_is_array(pages))
            FAIL("%s: task %zu: \"pages\" must be an array", path, i);
        tk->time_s = json_number_value(ts);
        tk->compute_s = json_number_value(cs);
        size_t k;
        json_t *e;
        json_array_foreach(pages, k, e) {
            json_int_t oi, pg, r, w;
            if (json_unpack(e, "[IIII]", &oi, &pg, &r, &w) != 0)
                FAIL("%s: task %zu page entry %zu: want [object, page, reads, writes]", path, i, k);
            if (oi < 0 || oi >= p->nobjects)
                FAIL("%s: task %zu: object index %lld out of range", path, i, (long long)oi);
            if (pg < 0 || (size_t)pg >= p->objects[oi].npages)
                FAIL("%s: task %zu: page %lld beyond object %s", path, i, (long long)pg,
                     p->objects[oi].name);
            if (r < 0 || w < 0)
                FAIL("%s: task %zu: negative access count", path, i);
            size_t g = p->objects[oi].page_base + (size_t)pg;
            tk->reads[g] += (uint64_t)r;
            tk->writes[g] += (uint64_t)w;
        }
    }
    if (load_phases(p, json_object_get(root, "phases"), path, err, errlen) != 0)
        goto fail;
    json_decref(root);
    return p;
fail:
    json_decref(root);
    pd_sim_profile_free(p);
    return NULL;
}
