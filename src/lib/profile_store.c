/* Growth curves kept across runs (profile_store.h). */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/util.h"
#include "lib/placement.h"
#include "lib/profile_store.h"

#define STORE_FORMAT "paddiser-profile-store"
#define STORE_VERSION 1
#define STORE_MAX_TASKS RT_MAX_TASKS
#define STORE_SAME_INPUT 0.02 /* bytes within 2%: the same input */

typedef struct {
    rt_store_task *tasks;
    int ntasks;
} store_list;

static struct {
    char path[4096];
    int usable; /* 1: may be written at pd_finalize (absent, or read whole) */
    store_list read; /* as pd_init read it */
} store;

static void list_free(store_list *l)
{
    free(l->tasks);
    l->tasks = NULL;
    l->ntasks = 0;
}

static void store_reset(void)
{
    list_free(&store.read);
    memset(&store, 0, sizeof store);
}

static const rt_store_task *list_find(const store_list *l, int task)
{
    for (int i = 0; i < l->ntasks; i++)
        if (l->tasks[i].task == task)
            return &l->tasks[i];
    return NULL;
}

static const rt_store_task *find_any(int task) { return list_find(&store.read, task); }

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

/* The document's tasks into l (empty); 0, or -1 with why. */
static int parse(json_t *doc, store_list *l, char *why, size_t whylen)
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
    l->tasks = calloc(nt ? nt : 1, sizeof *l->tasks);
    if (!l->tasks) {
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
        rt_store_task *st = &l->tasks[l->ntasks];
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
        for (int j = 0; j < l->ntasks; j++)
            if (l->tasks[j].task == st->task) {
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
        l->ntasks++;
    }
    return 0;
}

/* The file at path into l: 0 read, 1 absent, -1 not to be touched (why). */
static int read_store(const char *path, store_list *l, char *why, size_t whylen)
{
    struct stat st;
    if (lstat(path, &st) != 0) {
        if (errno == ENOENT)
            return 1;
        snprintf(why, whylen, "%s", strerror(errno));
        return -1;
    }
    if (!S_ISREG(st.st_mode)) {
        snprintf(why, whylen, "not a regular file (a link or a device is not followed)");
        return -1;
    }
    size_t len = 0;
    char *buf = pd_read_file(path, &len);
    if (!buf) {
        snprintf(why, whylen, "%s", pd_read_strerror(errno));
        return -1;
    }
    json_error_t je;
    json_t *doc = json_loadb(buf, len, 0, &je);
    free(buf);
    int rc = 0;
    if (!doc) {
        snprintf(why, whylen, "JSON: %s, line %d column %d", je.text, je.line, je.column);
        rc = -1;
    } else if (parse(doc, l, why, whylen) != 0) {
        list_free(l);
        rc = -1;
    }
    json_decref(doc);
    return rc;
}

void rt_store_load(void)
{
    store_reset();
    const char *path = getenv("PADDISER_PROFILE_STORE");
    if (!path || !*path)
        return;
    if (strlen(path) >= sizeof store.path - 8) {
        rt_message("PADDISER_PROFILE_STORE: path too long; no profile store");
        return;
    }
    snprintf(store.path, sizeof store.path, "%s", path);
    char why[256] = "";
    int rc = read_store(path, &store.read, why, sizeof why);
    if (rc < 0) {
        rt_message("profile store %s: %s; not read or written", path, why);
        return;
    }
    store.usable = 1; /* read whole, or a first run: written at pd_finalize */
    if (rc == 0)
        rt_message("profile store %s: %d task(s) from earlier runs", path, store.read.ntasks);
    else
        rt_message("profile store %s: none yet; written at pd_finalize", path);
}

/* This run's part of task t: its inputs, and m where it learned one
 * (n = 0 and NaN: nothing). */
static void own_task(rt_store_task *out, rt_task *t)
{
    out->task = t->id;
    out->n = rt_task_input_points(t, out->bytes, out->dram_s, RT_INPUTS);
    if (!rt_task_mem_bound_learned(t, &out->mem_bound, &out->mem_bound_sd))
        out->mem_bound = out->mem_bound_sd = NAN;
}

/* What was stored for the task joins this run's part: m where the run
 * learned none, and the inputs it did not run again. */
static void merge_stored(rt_store_task *out, const rt_store_task *old)
{
    if (!old)
        return;
    if (!isfinite(out->mem_bound)) {
        out->mem_bound = old->mem_bound;
        out->mem_bound_sd = old->mem_bound_sd;
    }
    int mine = out->n;
    for (int k = 0; k < old->n && out->n < RT_INPUTS; k++) {
        int same = 0;
        for (int i = 0; i < mine && !same; i++)
            same = fabs(old->bytes[k] - out->bytes[i]) <= STORE_SAME_INPUT * out->bytes[i];
        if (!same)
            out->bytes[out->n] = old->bytes[k], out->dram_s[out->n++] = old->dram_s[k];
    }
    sort_task(out);
}

/* The store's lock: FILE.lock beside it, never through a link. -1 when it
 * cannot be had (why). */
static int lock_store(char *why, size_t whylen)
{
    char lock[sizeof store.path + 8];
    snprintf(lock, sizeof lock, "%s.lock", store.path);
    int fd = open(lock, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0 || flock(fd, LOCK_EX) != 0) {
        snprintf(why, whylen, "its lock file (.lock beside it): %s", strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    return fd;
}

/* The document for the tasks. NULL out of memory. */
static char *dump(const rt_store_task *all, int n)
{
    json_t *doc = json_object(), *tasks = json_array();
    int ok = doc && tasks;
    for (int i = 0; ok && i < n; i++) {
        json_t *ins = json_array(), *tk = json_object();
        ok = ins && tk;
        for (int k = 0; ok && k < all[i].n; k++) {
            json_t *in = json_object();
            ok = in && !json_object_set_new(in, "bytes", json_real(all[i].bytes[k])) &&
                 !json_object_set_new(in, "dram_s", json_real(all[i].dram_s[k])) && !json_array_append_new(ins, in);
        }
        ok = ok && !json_object_set_new(tk, "task", json_integer(all[i].task)) &&
             !json_object_set_new(tk, "inputs", json_incref(ins));
        if (ok && isfinite(all[i].mem_bound) && isfinite(all[i].mem_bound_sd))
            ok = !json_object_set_new(tk, "mem_bound", json_real(all[i].mem_bound)) &&
                 !json_object_set_new(tk, "mem_bound_sd", json_real(all[i].mem_bound_sd));
        ok = ok && !json_array_append(tasks, tk);
        json_decref(ins);
        json_decref(tk);
    }
    char *text = NULL;
    if (ok && !json_object_set_new(doc, "format", json_string(STORE_FORMAT)) &&
        !json_object_set_new(doc, "version", json_integer(STORE_VERSION)) && !json_object_set(doc, "tasks", tasks))
        text = json_dumps(doc, JSON_INDENT(1) | JSON_REAL_PRECISION(10));
    json_decref(tasks);
    json_decref(doc);
    return text;
}

int rt_store_save(void)
{
    if (!store.path[0] || !store.usable)
        return PD_OK;
    /* This run's part of each task, once; then, under the lock, the file
     * as it is now (another process sharing it, an MPI rank, may have
     * written its tasks since pd_init) merged under it, written whole and
     * renamed over it. */
    char why[256] = "";
    int rc = PD_OK, n = 0, fd = -1;
    rt_store_task *all = calloc(rt.ntasks ? (size_t)rt.ntasks : 1, sizeof *all);
    if (!all) {
        snprintf(why, sizeof why, "out of memory");
        rc = PD_ENOMEM;
    }
    for (int i = 0; rc == PD_OK && i < rt.ntasks; i++) {
        own_task(&all[n], rt.tasks[i]);
        if (all[n].n > 0 || isfinite(all[n].mem_bound)) /* else nothing to keep */
            n++;
    }
    if (rc == PD_OK && n == 0) { /* a run that learned nothing leaves the disk alone */
        free(all);
        store_reset();
        return PD_OK;
    }
    store_list now = {0};
    if (rc == PD_OK && ((fd = lock_store(why, sizeof why)) < 0 || read_store(store.path, &now, why, sizeof why) < 0))
        rc = PD_EIO;
    rt_store_task *grown = rc == PD_OK ? realloc(all, (size_t)(n + now.ntasks) * sizeof *all) : NULL;
    if (rc == PD_OK && !grown) {
        snprintf(why, sizeof why, "out of memory");
        rc = PD_ENOMEM;
    } else if (grown) {
        all = grown;
    }
    for (int i = 0; rc == PD_OK && i < n; i++)
        merge_stored(&all[i], list_find(&now, all[i].task));
    /* the stored tasks this run did not run stay as they were */
    for (int k = 0; rc == PD_OK && k < now.ntasks; k++) {
        int ran = 0;
        for (int i = 0; i < n && !ran; i++)
            ran = all[i].task == now.tasks[k].task;
        if (!ran)
            all[n++] = now.tasks[k];
    }
    char *text = rc == PD_OK ? dump(all, n) : NULL;
    if (rc == PD_OK && !text) {
        snprintf(why, sizeof why, "out of memory");
        rc = PD_ENOMEM;
    }
    if (rc == PD_OK && pd_write_file_atomic(store.path, text, strlen(text)) != 0) {
        snprintf(why, sizeof why, "%s", strerror(errno));
        rc = PD_EIO;
    }
    if (rc != PD_OK)
        rt_message("profile store %s: not written: %s", store.path, why);
    if (fd >= 0) {
        flock(fd, LOCK_UN);
        close(fd);
    }
    free(text);
    free(all);
    list_free(&now);
    store_reset();
    return rc;
}
