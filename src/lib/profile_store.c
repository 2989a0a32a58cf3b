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
#define STORE_HEAT_MAX (1 + RT_HEAT_INPUTS) /* inputs' heat kept per task (the last run's first) */
#define STORE_HEAT_REGIONS 1000000 /* a task's regions of one input, at most, read */
/* ... and written: the hottest (rt_task.hot is hottest first), so that a
 * store stays small (about 45 bytes a region: at most 230 KB a task) */
#define STORE_HEAT_ROWS 1024
#define STORE_MAX_OBJECTS 65536  /* per-object totals of one input, at most */

#define STORE_MAX_VISITS 64 /* "visits" entries read, at most */

typedef struct {
    rt_store_task *tasks;
    int ntasks;
    int visits[RT_VISITS_KEPT]; /* the last visits' lengths, oldest first */
    int nvisits;
} store_list;

static struct {
    char path[4096];
    int usable; /* 1: may be written at pd_finalize (absent, or read whole) */
    store_list read; /* as pd_init read it */
} store;

static void list_free(store_list *l)
{
    for (int i = 0; i < l->ntasks; i++)
        json_decref(l->tasks[i].heat);
    free(l->tasks);
    l->tasks = NULL;
    l->ntasks = 0;
    l->nvisits = 0;
}

int rt_store_visits(int *len, int max)
{
    int n = store.read.nvisits < max ? store.read.nvisits : max;
    for (int i = 0; i < n; i++) /* the newest n */
        len[i] = store.read.visits[store.read.nvisits - n + i];
    return n;
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

/* A heat entry's input: 16 hex digits (a 64-bit signature; JSON integers
 * are signed). 0 when it is not one. */
static uint64_t input_of(json_t *v)
{
    const char *s = json_string_value(v);
    if (!s || strlen(s) != 16 || strspn(s, "0123456789abcdef") != 16)
        return 0;
    return strtoull(s, NULL, 16);
}

static int nonneg(json_t *v) { return json_is_number(v) && json_number_value(v) >= 0 && isfinite(json_number_value(v)); }

static json_t *stored_heat(int task, uint64_t input)
{
    if (rt_env_off("PADDISER_PROFILE_STORE_HEAT")) /* growth and m alone (bench comparisons) */
        return NULL;
    const rt_store_task *st = find_any(task);
    for (size_t k = 0; st && st->heat && k < json_array_size(st->heat); k++) {
        json_t *e = json_array_get(st->heat, k);
        if (input_of(json_object_get(e, "input")) == input)
            return e;
    }
    return NULL;
}

/* Task `task`'s stored heat of `input` where every object it names is one
 * in use now (the same signature is the same objects at the same sizes;
 * still, it is checked), else NULL. */
static json_t *usable_heat(int task, uint64_t input)
{
    json_t *e = input ? stored_heat(task, input) : NULL;
    if (!e)
        return NULL;
    json_t *ja = json_object_get(e, "acc"), *jh = json_object_get(e, "hot");
    for (size_t o = 0; o < json_array_size(ja); o++)
        if (json_number_value(json_array_get(ja, o)) > 0 && (o >= rt.nobjects || !rt.objects[o].used))
            return NULL;
    for (size_t i = 0; i < json_array_size(jh); i++) {
        json_int_t ob = json_integer_value(json_array_get(json_array_get(jh, i), 0));
        if (ob < 0 || (size_t)ob >= rt.nobjects || !rt.objects[ob].used)
            return NULL;
    }
    return e;
}

int rt_store_heat(int task, uint64_t input, rt_hot **hot, size_t *nhot, double **acc, size_t *nacc, int *n)
{
    json_t *e = usable_heat(task, input);
    if (!e)
        return 0;
    json_t *ja = json_object_get(e, "acc"), *jh = json_object_get(e, "hot");
    size_t na = json_array_size(ja), nh = json_array_size(jh);
    rt_hot *h = malloc((nh ? nh : 1) * sizeof *h);
    double *a = malloc((na ? na : 1) * sizeof *a);
    if (!h || !a) {
        free(h);
        free(a);
        return 0;
    }
    for (size_t o = 0; o < na; o++)
        a[o] = json_number_value(json_array_get(ja, o));
    for (size_t i = 0; i < nh; i++) {
        json_t *r = json_array_get(jh, i);
        h[i] = (rt_hot){(int)json_integer_value(json_array_get(r, 0)),
                        json_number_value(json_array_get(r, 1)),
                        json_number_value(json_array_get(r, 2)),
                        (uint64_t)json_number_value(json_array_get(r, 3)),
                        json_number_value(json_array_get(r, 4)),
                        json_number_value(json_array_get(r, 5))};
    }
    *hot = h, *nhot = nh, *acc = a, *nacc = na;
    *n = (int)json_integer_value(json_object_get(e, "n"));
    return 1;
}

int rt_store_has_heat(int task, uint64_t input) { return usable_heat(task, input) != NULL; }

double rt_store_instance_s(uint64_t input)
{
    double most = 0;
    for (int i = 0; input && i < store.read.ntasks; i++) {
        json_t *e = stored_heat(store.read.tasks[i].task, input);
        double w = e ? json_number_value(json_object_get(e, "wall_s")) : 0;
        if (w > most)
            most = w;
    }
    return most;
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

/* A task's "heat": 0 when every entry is well formed, or -1 with why. */
static int check_heat(json_t *heat, char *why, size_t whylen)
{
    if (!json_is_array(heat) || json_array_size(heat) > STORE_HEAT_MAX) {
        snprintf(why, whylen, "heat: want an array of at most %d inputs", STORE_HEAT_MAX);
        return -1;
    }
    for (size_t k = 0; k < json_array_size(heat); k++) {
        json_t *e = json_array_get(heat, k), *n = json_object_get(e, "n"), *w = json_object_get(e, "wall_s"),
               *acc = json_object_get(e, "acc"), *hot = json_object_get(e, "hot");
        if (!input_of(json_object_get(e, "input")) || !json_is_integer(n) || json_integer_value(n) < 1 ||
            json_integer_value(n) > RT_HISTORY || (w && !nonneg(w)) || !json_is_array(acc) ||
            json_array_size(acc) > STORE_MAX_OBJECTS || !json_is_array(hot) || json_array_size(hot) > STORE_HEAT_REGIONS) {
            snprintf(why, whylen,
                     "heat[%zu]: want {\"input\": 16 hex digits, \"n\": 1 .. %d, \"wall_s\": >= 0, \"acc\": [], "
                     "\"hot\": []}",
                     k, RT_HISTORY);
            return -1;
        }
        for (size_t o = 0; o < json_array_size(acc); o++)
            if (!nonneg(json_array_get(acc, o))) {
                snprintf(why, whylen, "heat[%zu].acc[%zu]: want a number >= 0", k, o);
                return -1;
            }
        for (size_t r = 0; r < json_array_size(hot); r++) {
            json_t *h = json_array_get(hot, r);
            int ok = json_is_array(h) && json_array_size(h) == 6 && json_is_integer(json_array_get(h, 0)) &&
                     json_integer_value(json_array_get(h, 0)) >= 0 &&
                     (size_t)json_integer_value(json_array_get(h, 0)) < json_array_size(acc);
            for (size_t c = 1; ok && c < 6; c++)
                ok = nonneg(json_array_get(h, c));
            ok = ok && json_number_value(json_array_get(h, 1)) <= 1 && json_number_value(json_array_get(h, 2)) > 0 &&
                 json_number_value(json_array_get(h, 2)) <= 1;
            if (!ok) {
                snprintf(why, whylen,
                         "heat[%zu].hot[%zu]: want [object < acc's length, offset 0 .. 1, length (0, 1], "
                         "count, touches, accesses >= 0]",
                         k, r);
                return -1;
            }
        }
    }
    return 0;
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
    json_t *visits = json_object_get(doc, "visits");
    if (visits) {
        size_t nv = json_is_array(visits) ? json_array_size(visits) : 0;
        int ok = json_is_array(visits) && nv <= STORE_MAX_VISITS;
        for (size_t i = 0; ok && i < nv; i++) {
            json_t *v = json_array_get(visits, i);
            ok = json_is_integer(v) && json_integer_value(v) >= 1 && json_integer_value(v) <= 0x7fffffff;
        }
        if (!ok) {
            snprintf(why, whylen, "\"visits\": want an array of at most %d lengths >= 1", STORE_MAX_VISITS);
            return -1;
        }
        size_t from = nv > RT_VISITS_KEPT ? nv - RT_VISITS_KEPT : 0;
        for (size_t i = from; i < nv; i++)
            l->visits[l->nvisits++] = (int)json_integer_value(json_array_get(visits, i));
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
        json_t *heat = json_object_get(tk, "heat");
        if (heat && check_heat(heat, why, whylen) != 0) {
            char inner[200];
            snprintf(inner, sizeof inner, "%s", why);
            snprintf(why, whylen, "tasks[%zu].%s", i, inner);
            return -1;
        }
        st->heat = json_incref(heat);
        l->ntasks++; /* owns heat from here: list_free releases it */
        for (int j = 0; j + 1 < l->ntasks; j++)
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

/* The task's median time on input `input` (its kept instances), 0 when
 * none is kept. */
static double input_wall_s(const rt_task *t, uint64_t input)
{
    for (int i = 0; i < t->ninputs; i++)
        if (t->inputs[i].input == input && t->inputs[i].n > 0) {
            double v[RT_INPUT_KEEP];
            memcpy(v, t->inputs[i].time, (size_t)t->inputs[i].n * sizeof v[0]);
            return pd_median(v, (size_t)t->inputs[i].n);
        }
    return 0;
}

/* One input's heat as a store entry; NULL out of memory. */
static json_t *heat_entry(const rt_task *t, uint64_t input, const rt_hot *hot, size_t nhot, const double *acc,
                          size_t nacc, int n)
{
    char hex[17];
    snprintf(hex, sizeof hex, "%016llx", (unsigned long long)input);
    json_t *e = json_object(), *ja = json_array(), *jh = json_array();
    int ok = e && ja && jh;
    for (size_t o = 0; ok && o < nacc; o++)
        ok = !json_array_append_new(ja, json_real(acc && acc[o] > 0 && isfinite(acc[o]) ? acc[o] : 0));
    for (size_t i = 0, rows = 0; ok && i < nhot && rows < STORE_HEAT_ROWS; i++) {
        const rt_hot *h = &hot[i];
        /* not one the reader would take: left out */
        if ((size_t)h->object >= nacc || !(h->len_frac > 0) || !isfinite(h->off_frac) || !isfinite(h->touches) ||
            !isfinite(h->accesses))
            continue;
        json_t *row = json_pack("[i,f,f,I,f,f]", h->object, fmin(1, fmax(0, h->off_frac)), fmin(1, h->len_frac),
                                (json_int_t)h->count, fmax(0, h->touches), fmax(0, h->accesses));
        ok = row && !json_array_append_new(jh, row);
        rows++;
    }
    ok = ok && !json_object_set_new(e, "input", json_string(hex)) &&
         !json_object_set_new(e, "n", json_integer(n < 1 ? 1 : n > RT_HISTORY ? RT_HISTORY : n)) &&
         !json_object_set_new(e, "wall_s", json_real(input_wall_s(t, input))) && !json_object_set(e, "acc", ja) &&
         !json_object_set(e, "hot", jh);
    json_decref(ja);
    json_decref(jh);
    if (!ok) {
        json_decref(e);
        return NULL;
    }
    return e;
}

/* The task's heat, the current input's first; NULL when it has none (or out
 * of memory: then the run's heat is not kept). A heat no whole instance of
 * this run went into (a stored heat smoothed only with thinned instances,
 * or planned from) is left out, so the stored one stays: a thinned
 * instance's heat is biased, not only noisy (the accesses of randomly read
 * objects read low, docs/runtime-measurements.md), and written back run
 * after run it displaced the whole instances' heat (in the simulator's bfs
 * study, a second thinned study on the same store placed -0.8% against
 * hot-first where the first placed +1.3%). */
static json_t *own_heat(const rt_task *t)
{
    json_t *a = json_array();
    int ok = a != NULL;
    if (ok && t->hot_input && t->nhot && t->hot_acc && t->hot_whole > 0) {
        json_t *e = heat_entry(t, t->hot_input, t->hot, t->nhot, t->hot_acc, t->nacc, t->hot_n);
        ok = e && !json_array_append_new(a, e);
    }
    for (int i = 0; ok && i < RT_HEAT_INPUTS && json_array_size(a) < STORE_HEAT_MAX; i++) {
        const rt_heat_entry *m = &t->heat_mem[i];
        if (!m->hot || !m->input || !m->nhot || m->whole <= 0)
            continue;
        json_t *e = heat_entry(t, m->input, m->hot, m->nhot, m->acc, m->nacc, m->n);
        ok = e && !json_array_append_new(a, e);
    }
    if (!ok || json_array_size(a) == 0) {
        json_decref(a);
        return NULL;
    }
    return a;
}

/* This run's part of task t: its inputs, m where it learned one, and its
 * heat (n = 0, NaN and NULL: nothing). */
static void own_task(rt_store_task *out, rt_task *t)
{
    out->task = t->id;
    out->n = rt_task_input_points(t, out->bytes, out->dram_s, RT_INPUTS);
    if (!rt_task_mem_bound_learned(t, &out->mem_bound, &out->mem_bound_sd))
        out->mem_bound = out->mem_bound_sd = NAN;
    out->heat = own_heat(t);
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
    /* the stored heat of inputs this run did not heat, after this run's;
     * of one it heated, the stored time where this run kept none (its
     * instances were all sampled or dropped) */
    for (size_t k = 0; old->heat && k < json_array_size(old->heat); k++) {
        json_t *e = json_array_get(old->heat, k);
        if (!out->heat && !(out->heat = json_array()))
            break;
        uint64_t in = input_of(json_object_get(e, "input"));
        json_t *same = NULL;
        for (size_t i = 0; i < json_array_size(out->heat) && !same; i++)
            if (input_of(json_object_get(json_array_get(out->heat, i), "input")) == in)
                same = json_array_get(out->heat, i);
        if (same && !(json_number_value(json_object_get(same, "wall_s")) > 0))
            json_object_set(same, "wall_s", json_object_get(e, "wall_s"));
        else if (!same && json_array_size(out->heat) < STORE_HEAT_MAX)
            json_array_append(out->heat, e);
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

/* The document for the tasks and the visits. NULL out of memory. */
static char *dump(const rt_store_task *all, int n, const int *visits, int nvisits)
{
    json_t *doc = json_object(), *tasks = json_array(), *vs = json_array();
    int ok = doc && tasks && vs;
    for (int i = 0; ok && i < nvisits; i++)
        ok = !json_array_append_new(vs, json_integer(visits[i]));
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
        if (ok && all[i].heat)
            ok = !json_object_set(tk, "heat", all[i].heat);
        ok = ok && !json_array_append(tasks, tk);
        json_decref(ins);
        json_decref(tk);
    }
    char *text = NULL;
    if (ok && !json_object_set_new(doc, "format", json_string(STORE_FORMAT)) &&
        !json_object_set_new(doc, "version", json_integer(STORE_VERSION)) && !json_object_set(doc, "tasks", tasks) &&
        (!nvisits || !json_object_set(doc, "visits", vs)))
        text = json_dumps(doc, JSON_COMPACT | JSON_REAL_PRECISION(10)); /* heat rows: compact */
    json_decref(vs);
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
        if (all[n].n > 0 || isfinite(all[n].mem_bound) || all[n].heat) /* else nothing to keep */
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
        if (!ran) {
            all[n] = now.tasks[k];
            json_incref(all[n++].heat); /* all's own reference: now's goes below */
        }
    }
    int visits[RT_VISITS_KEPT];
    int nvisits = rt_visits_at_end(visits);
    char *text = rc == PD_OK ? dump(all, n, visits, nvisits) : NULL;
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
    for (int i = 0; all && i < n; i++)
        json_decref(all[i].heat);
    free(all);
    list_free(&now);
    store_reset();
    return rc;
}
