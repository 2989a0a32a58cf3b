/* Growth curves kept across runs (profile_store.h). */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/util.h"
#include "lib/placement.h"
#include "lib/profile_store.h"

#define STORE_FORMAT "paddiser-profile-store"
#define STORE_VERSION 1
#define STORE_MAX_TASKS RT_MAX_TASKS
#define STORE_SAME_INPUT 0.02 /* bytes within 2%: the same input */

static struct {
    char path[4096];
    int usable; /* 1: may be written at pd_finalize (absent, or read whole) */
    rt_store_task *tasks;
    int ntasks;
} store;

static void store_reset(void)
{
    free(store.tasks);
    memset(&store, 0, sizeof store);
}

const char *rt_store_path(void) { return store.path; }

static const rt_store_task *find_any(int task)
{
    for (int i = 0; i < store.ntasks; i++)
        if (store.tasks[i].task == task)
            return &store.tasks[i];
    return NULL;
}

const rt_store_task *rt_store_find(int task)
{
    const rt_store_task *st = find_any(task);
    return st && st->n >= 2 ? st : NULL;
}

int rt_store_mem_bound(int task, double *m, double *sd)
{
    const rt_store_task *st = find_any(task);
    if (!st || !isfinite(st->mem_bound))
        return 0;
    *m = st->mem_bound;
    *sd = st->mem_bound_sd;
    return 1;
}

static int by_bytes(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Sorts a task's inputs by bytes (bytes and dram_s move together). */
static void sort_task(rt_store_task *st)
{
    double pair[RT_INPUTS][2];
    for (int i = 0; i < st->n; i++)
        pair[i][0] = st->bytes[i], pair[i][1] = st->dram_s[i];
    qsort(pair, (size_t)st->n, sizeof pair[0], by_bytes);
    for (int i = 0; i < st->n; i++)
        st->bytes[i] = pair[i][0], st->dram_s[i] = pair[i][1];
}

/* The document's tasks into store.tasks; 0, or -1 with why. */
static int parse(json_t *doc, char *why, size_t whylen)
{
    json_t *fmt = json_object_get(doc, "format"), *ver = json_object_get(doc, "version"),
           *tasks = json_object_get(doc, "tasks");
    if (!json_is_string(fmt) || strcmp(json_string_value(fmt), STORE_FORMAT)) {
        snprintf(why, whylen, "not a profile store (want \"format\": \"%s\")", STORE_FORMAT);
        return -1;
    }
    if (!json_is_integer(ver) || json_integer_value(ver) != STORE_VERSION) {
        snprintf(why, whylen, "version %s (this library reads version %d)",
                 json_is_integer(ver) ? "other than 1" : "missing", STORE_VERSION);
        return -1;
    }
    if (!json_is_array(tasks) || json_array_size(tasks) > STORE_MAX_TASKS) {
        snprintf(why, whylen, "\"tasks\": want an array of at most %d tasks", STORE_MAX_TASKS);
        return -1;
    }
    size_t nt = json_array_size(tasks);
    store.tasks = calloc(nt ? nt : 1, sizeof *store.tasks);
    if (!store.tasks) {
        snprintf(why, whylen, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < nt; i++) {
        json_t *tk = json_array_get(tasks, i), *id = json_object_get(tk, "task"),
               *ins = json_object_get(tk, "inputs");
        if (!json_is_integer(id) || json_integer_value(id) < 0 || json_integer_value(id) > 0x7fffffff ||
            !json_is_array(ins) || json_array_size(ins) > RT_INPUTS) {
            snprintf(why, whylen, "tasks[%zu]: want {\"task\": id >= 0, \"inputs\": at most %d}", i, RT_INPUTS);
            return -1;
        }
        rt_store_task *st = &store.tasks[store.ntasks];
        st->task = (int)json_integer_value(id);
        st->mem_bound = st->mem_bound_sd = NAN;
        json_t *m = json_object_get(tk, "mem_bound"), *sd = json_object_get(tk, "mem_bound_sd");
        if (m || sd) {
            double mv = json_is_number(m) ? json_number_value(m) : NAN,
                   sv = json_is_number(sd) ? json_number_value(sd) : NAN;
            if (!(mv >= 0 && mv <= 1) || !(sv >= 0 && sv <= 1)) {
                snprintf(why, whylen, "tasks[%zu]: want \"mem_bound\" and \"mem_bound_sd\" both in [0, 1]", i);
                return -1;
            }
            st->mem_bound = mv, st->mem_bound_sd = sv;
        }
        for (int j = 0; j < store.ntasks; j++)
            if (store.tasks[j].task == st->task) {
                snprintf(why, whylen, "tasks[%zu]: task %d twice", i, st->task);
                return -1;
            }
        for (size_t k = 0; k < json_array_size(ins); k++) {
            json_t *in = json_array_get(ins, k);
            json_t *b = json_object_get(in, "bytes"), *d = json_object_get(in, "dram_s");
            double bv = json_is_number(b) ? json_number_value(b) : NAN, dv = json_is_number(d) ? json_number_value(d) : NAN;
            if (!(bv > 0) || !isfinite(bv) || !(dv > 0) || !isfinite(dv)) {
                snprintf(why, whylen, "tasks[%zu].inputs[%zu]: want {\"bytes\": > 0, \"dram_s\": > 0}", i, k);
                return -1;
            }
            st->bytes[st->n] = bv, st->dram_s[st->n] = dv;
            st->n++;
        }
        sort_task(st);
        store.ntasks++;
    }
    return 0;
}

void rt_store_load(void)
{
    store_reset();
    const char *path = getenv("PADDISER_PROFILE_STORE");
    if (!path || !*path)
        return;
    if (strlen(path) >= sizeof store.path) {
        rt_message("PADDISER_PROFILE_STORE: path too long; no profile store");
        return;
    }
    snprintf(store.path, sizeof store.path, "%s", path);
    struct stat st;
    if (lstat(path, &st) != 0) {
        if (errno == ENOENT) {
            store.usable = 1; /* a first run: written at pd_finalize */
            return;
        }
        rt_message("profile store %s: %s; not read or written", path, strerror(errno));
        return;
    }
    if (!S_ISREG(st.st_mode)) {
        rt_message("profile store %s: not a regular file (a link or a device is not followed); not read or written",
                   path);
        return;
    }
    size_t len = 0;
    char *buf = pd_read_file(path, &len);
    if (!buf) {
        rt_message("profile store %s: %s; not read or written", path, pd_read_strerror(errno));
        return;
    }
    json_error_t je;
    json_t *doc = json_loadb(buf, len, 0, &je);
    free(buf);
    char why[256] = "";
    if (!doc)
        snprintf(why, sizeof why, "JSON: %s, line %d column %d", je.text, je.line, je.column);
    if (!doc || parse(doc, why, sizeof why) != 0) {
        rt_message("profile store %s: %s; not read or written", path, why);
        free(store.tasks);
        store.tasks = NULL;
        store.ntasks = 0;
    } else {
        store.usable = 1;
    }
    json_decref(doc);
}

/* This run's inputs of task t merged over what was stored for it. */
static void merge_task(rt_store_task *out, rt_task *t)
{
    double bytes[RT_INPUTS], dram[RT_INPUTS];
    int n = rt_task_input_points(t, bytes, dram, RT_INPUTS);
    const rt_store_task *old = NULL;
    for (int i = 0; i < store.ntasks; i++)
        if (store.tasks[i].task == t->id)
            old = &store.tasks[i];
    out->task = t->id;
    out->n = 0;
    /* m as this run learned it, else as stored */
    if (!rt_task_mem_bound_learned(t, &out->mem_bound, &out->mem_bound_sd)) {
        out->mem_bound = old ? old->mem_bound : NAN;
        out->mem_bound_sd = old ? old->mem_bound_sd : NAN;
    }
    for (int i = 0; i < n && out->n < RT_INPUTS; i++)
        out->bytes[out->n] = bytes[i], out->dram_s[out->n++] = dram[i];
    for (int k = 0; old && k < old->n && out->n < RT_INPUTS; k++) {
        int same = 0;
        for (int i = 0; i < n && !same; i++)
            same = fabs(old->bytes[k] - bytes[i]) <= STORE_SAME_INPUT * bytes[i];
        if (!same)
            out->bytes[out->n] = old->bytes[k], out->dram_s[out->n++] = old->dram_s[k];
    }
    sort_task(out);
}

int rt_store_save(void)
{
    if (!store.path[0] || !store.usable)
        return PD_OK;
    /* the stored tasks this run did not run stay as they were */
    int cap = store.ntasks + rt.ntasks;
    rt_store_task *all = calloc(cap ? (size_t)cap : 1, sizeof *all);
    json_t *doc = json_object(), *tasks = json_array();
    int rc = all && doc && tasks ? PD_OK : PD_ENOMEM;
    int n = 0;
    for (int i = 0; rc == PD_OK && i < rt.ntasks; i++)
        if (rt.tasks[i]->ninputs > 0 || isfinite(rt.tasks[i]->mem_bound_se))
            merge_task(&all[n++], rt.tasks[i]);
    for (int k = 0; rc == PD_OK && k < store.ntasks; k++) {
        int ran = 0;
        for (int i = 0; i < n && !ran; i++)
            ran = all[i].task == store.tasks[k].task;
        if (!ran)
            all[n++] = store.tasks[k];
    }
    for (int i = 0; rc == PD_OK && i < n; i++) {
        json_t *ins = json_array(), *tk = json_object();
        for (int k = 0; ins && k < all[i].n; k++) {
            json_t *in = json_object();
            json_object_set_new(in, "bytes", json_real(all[i].bytes[k]));
            json_object_set_new(in, "dram_s", json_real(all[i].dram_s[k]));
            json_array_append_new(ins, in);
        }
        if (!ins || !tk) {
            json_decref(ins);
            json_decref(tk);
            rc = PD_ENOMEM;
            break;
        }
        json_object_set_new(tk, "task", json_integer(all[i].task));
        json_object_set_new(tk, "inputs", ins);
        if (isfinite(all[i].mem_bound) && isfinite(all[i].mem_bound_sd)) {
            json_object_set_new(tk, "mem_bound", json_real(all[i].mem_bound));
            json_object_set_new(tk, "mem_bound_sd", json_real(all[i].mem_bound_sd));
        }
        json_array_append_new(tasks, tk);
    }
    char *text = NULL;
    if (rc == PD_OK) {
        json_object_set_new(doc, "format", json_string(STORE_FORMAT));
        json_object_set_new(doc, "version", json_integer(STORE_VERSION));
        json_object_set(doc, "tasks", tasks);
        text = json_dumps(doc, JSON_INDENT(1) | JSON_REAL_PRECISION(10));
        if (!text)
            rc = PD_ENOMEM;
    }
    if (rc == PD_OK && pd_write_file_atomic(store.path, text, strlen(text)) != 0) {
        rt_message("profile store %s: not written: %s", store.path, strerror(errno));
        rc = PD_EIO;
    } else if (rc == PD_ENOMEM) {
        rt_message("profile store %s: not written: out of memory", store.path);
    }
    free(text);
    json_decref(tasks);
    json_decref(doc);
    free(all);
    store_reset();
    return rc;
}
