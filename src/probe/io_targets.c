/* io_paths -> counters. A path resolves through its nearest existing
 * ancestor to the mount holding it (longest mount point in
 * <proc>/self/mountinfo); NFS mounts are counted by mount source, block
 * mounts by the whole disks underneath (partition -> parent disk, dm/md ->
 * slaves, loop -> the disks of its backing file), so no device is ever
 * counted twice. Lustre mounts are counted by their client's llite
 * instance and GPFS mounts by file system name (probe/io_fs.h). Everything
 * else is kind none with a reason. Runs once at probe start, so it may
 * allocate freely. */
#include "probe/sample.h"

#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/sysroot.h"
#include "probe/io_fs.h"

#define MAX_DEPTH 8

typedef struct {
    char *mount;  /* unescaped mount point */
    char *fstype;
    char *source; /* unescaped */
    char *source_raw; /* as printed (mountstats prints it the same way) */
    char majmin[32];
} mount_entry;

typedef struct {
    mount_entry *m;
    size_t n;
} mount_table;

typedef struct {
    char **v;
    size_t n;
} str_list;

static bool list_add_unique(str_list *l, const char *s)
{
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->v[i], s) == 0)
            return true;
    char **v = realloc(l->v, (l->n + 1) * sizeof *v);
    if (!v)
        return false;
    l->v = v;
    if (!(l->v[l->n] = pd_strdup(s)))
        return false;
    l->n++;
    return true;
}

static void list_free(str_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i]);
    free(l->v);
    *l = (str_list){0};
}

static char *list_join(const str_list *l, const char *sep)
{
    pd_str s = {0};
    for (size_t i = 0; i < l->n; i++) {
        if (i)
            pd_str_append(&s, sep);
        pd_str_append(&s, l->v[i]);
    }
    return pd_str_take(&s);
}

/* mountinfo/mountstats escape ' ', '\t', '\n' and '\\' as \ooo. */
static void unescape_octal(char *s)
{
    char *w = s;
    for (char *r = s; *r;) {
        if (r[0] == '\\' && r[1] >= '0' && r[1] <= '3' && r[2] >= '0' && r[2] <= '7' && r[3] >= '0' &&
            r[3] <= '7') {
            *w++ = (char)((r[1] - '0') * 64 + (r[2] - '0') * 8 + (r[3] - '0'));
            r += 4;
        } else {
            *w++ = *r++;
        }
    }
    *w = '\0';
}

static void mounts_free(mount_table *t)
{
    for (size_t i = 0; i < t->n; i++) {
        free(t->m[i].mount);
        free(t->m[i].fstype);
        free(t->m[i].source);
        free(t->m[i].source_raw);
    }
    free(t->m);
    *t = (mount_table){0};
}

static int mounts_load(mount_table *t, char *err, size_t errlen)
{
    char path[PATH_MAX];
    pd_proc_path(path, sizeof path, "self/mountinfo");
    char *text = pd_read_file(path, NULL);
    if (!text) {
        snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno));
        return -1;
    }
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char *tok[64];
        size_t nt = 0;
        char *s2 = NULL;
        for (char *w = strtok_r(line, " ", &s2); w && nt < PD_ARRAY_LEN(tok); w = strtok_r(NULL, " ", &s2))
            tok[nt++] = w;
        size_t dash = 6;
        while (dash < nt && strcmp(tok[dash], "-") != 0)
            dash++;
        if (nt < 7 || dash + 2 >= nt)
            continue; /* malformed line: skip it */
        mount_entry *m = realloc(t->m, (t->n + 1) * sizeof *m);
        if (!m)
            goto oom;
        t->m = m;
        mount_entry *e = &t->m[t->n];
        *e = (mount_entry){0};
        snprintf(e->majmin, sizeof e->majmin, "%s", tok[2]);
        e->mount = pd_strdup(tok[4]);
        e->fstype = pd_strdup(tok[dash + 1]);
        e->source_raw = pd_strdup(tok[dash + 2]);
        e->source = pd_strdup(tok[dash + 2]);
        t->n++;
        if (!e->mount || !e->fstype || !e->source || !e->source_raw)
            goto oom;
        unescape_octal(e->mount);
        unescape_octal(e->source);
    }
    free(text);
    return 0;
oom:
    free(text);
    mounts_free(t);
    snprintf(err, errlen, "out of memory reading %s", path);
    return -1;
}

/* Mount holding an absolute, symlink-free path: the longest matching mount
 * point, the later entry winning on equal ones (it is mounted on top). */
static const mount_entry *mount_for(const mount_table *t, const char *real)
{
    const mount_entry *best = NULL;
    size_t best_len = 0;
    for (size_t i = 0; i < t->n; i++) {
        const char *mp = t->m[i].mount;
        size_t n = strlen(mp);
        bool match = strcmp(mp, "/") == 0 ||
                     (strncmp(real, mp, n) == 0 && (real[n] == '\0' || real[n] == '/'));
        if (match && (best == NULL || n >= best_len)) {
            best = &t->m[i];
            best_len = n;
        }
    }
    return best;
}

/* Nearest existing ancestor of path (made absolute), symlinks resolved. */
static bool existing_ancestor(const char *path, char *out, size_t outlen)
{
    char buf[PATH_MAX];
    if (path[0] == '/') {
        if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf)
            return false;
    } else {
        char cwd[PATH_MAX];
        if (!getcwd(cwd, sizeof cwd) || snprintf(buf, sizeof buf, "%s/%s", cwd, path) >= (int)sizeof buf)
            return false;
    }
    struct stat st;
    while (stat(buf, &st) != 0) {
        char *slash = strrchr(buf, '/');
        if (!slash)
            return false;
        if (slash == buf) {
            buf[1] = '\0';
            break;
        }
        *slash = '\0';
    }
    char real[PATH_MAX];
    if (!realpath(buf, real))
        return false;
    return snprintf(out, outlen, "%s", real) < (int)outlen;
}

static bool sys_exists(const char *fmt, const char *name)
{
    char rel[PATH_MAX], path[PATH_MAX];
    if (snprintf(rel, sizeof rel, fmt, name) >= (int)sizeof rel)
        return false;
    pd_sys_path(path, sizeof path, rel);
    return access(path, F_OK) == 0;
}

/* Bounded copy: false (and dst untouched) when src does not fit. */
static bool copy_name(char *dst, size_t len, const char *src)
{
    size_t n = strlen(src);
    if (n >= len)
        return false;
    memcpy(dst, src, n + 1);
    return true;
}

static const char *base_name(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

/* Kernel block device name behind a mount source, or false. */
static bool block_name(const mount_entry *m, char *name, size_t len)
{
    char path[PATH_MAX], real[PATH_MAX];
    if (strncmp(m->source, "/dev/", 5) == 0) {
        pd_dev_path(path, sizeof path, m->source + 5);
        /* /dev/mapper/x and /dev/disk/by-* are symlinks to the kernel name. */
        if (copy_name(name, len, realpath(path, real) ? base_name(real) : base_name(m->source)) &&
            sys_exists("class/block/%s", name))
            return true;
    }
    /* /dev/root and friends: go by major:minor. */
    if (strncmp(m->majmin, "0:", 2) != 0) {
        char rel[64], link[PATH_MAX];
        snprintf(rel, sizeof rel, "dev/block/%s", m->majmin);
        pd_sys_path(path, sizeof path, rel);
        ssize_t n = readlink(path, link, sizeof link - 1);
        if (n > 0) {
            link[n] = '\0';
            if (copy_name(name, len, base_name(link)) && sys_exists("class/block/%s", name))
                return true;
        }
    }
    return false;
}

/* Parent disk of a partition: the directory holding it in sysfs. */
static bool partition_parent(const char *name, char *parent, size_t len)
{
    char rel[PATH_MAX], path[PATH_MAX], real[PATH_MAX];
    if (snprintf(rel, sizeof rel, "class/block/%s", name) >= (int)sizeof rel)
        return false;
    pd_sys_path(path, sizeof path, rel);
    if (realpath(path, real)) {
        char *slash = strrchr(real, '/');
        if (slash) {
            *slash = '\0';
            if (sys_exists("block/%s", base_name(real)) && copy_name(parent, len, base_name(real)))
                return true;
        }
    }
    /* Flat fixture trees: look for <sys>/block/<disk>/<name>. */
    pd_sys_path(path, sizeof path, "block");
    DIR *d = opendir(path);
    if (!d)
        return false;
    bool found = false;
    for (struct dirent *e; !found && (e = readdir(d));) {
        if (e->d_name[0] == '.')
            continue;
        snprintf(rel, sizeof rel, "block/%s/%s", e->d_name, name);
        pd_sys_path(path, sizeof path, rel);
        if (access(path, F_OK) == 0)
            found = copy_name(parent, len, e->d_name);
    }
    closedir(d);
    return found;
}

static int path_disks(const mount_table *t, const char *path, int depth, str_list *disks, pd_str *why);

static int not_dot(const struct dirent *e) { return e->d_name[0] != '.'; }

/* Whole disks carrying the traffic of block device `name`. */
static int device_disks(const mount_table *t, const char *name, int depth, str_list *disks, pd_str *why)
{
    if (depth > MAX_DEPTH) {
        pd_str_printf(why, "device stack deeper than %d levels at %s", MAX_DEPTH, name);
        return 0;
    }
    char parent[NAME_MAX + 1];
    if (sys_exists("class/block/%s/partition", name)) {
        if (!partition_parent(name, parent, sizeof parent)) {
            pd_str_printf(why, "no parent disk found for partition %s", name);
            return 0;
        }
        return device_disks(t, parent, depth + 1, disks, why);
    }
    char rel[PATH_MAX], path[PATH_MAX];
    snprintf(rel, sizeof rel, "class/block/%s/slaves", name);
    pd_sys_path(path, sizeof path, rel);
    struct dirent **slaves = NULL;
    int ns = scandir(path, &slaves, not_dot, alphasort); /* sorted: stable target strings */
    if (ns > 0) {
        /* dm-* / md*: count the disks underneath, never the virtual device */
        int found = 0;
        for (int i = 0; i < ns; i++) {
            int r = found < 0 ? 0 : device_disks(t, slaves[i]->d_name, depth + 1, disks, why);
            found = r < 0 ? -1 : found + r;
            free(slaves[i]);
        }
        free(slaves);
        return found;
    }
    free(slaves);
    if (strncmp(name, "loop", 4) == 0) {
        snprintf(rel, sizeof rel, "block/%s/loop/backing_file", name);
        pd_sys_path(path, sizeof path, rel);
        char *backing = pd_read_file(path, NULL);
        if (!backing) {
            pd_str_printf(why, "loop device %s has no backing file", name);
            return 0;
        }
        pd_trim(backing);
        int r = path_disks(t, backing, depth + 1, disks, why);
        free(backing);
        return r;
    }
    if (strncmp(name, "dm-", 3) == 0 || strncmp(name, "md", 2) == 0) {
        pd_str_printf(why, "virtual device %s has no slaves", name);
        return 0;
    }
    return list_add_unique(disks, name) ? 1 : -1;
}

static int mount_disks(const mount_table *t, const mount_entry *m, int depth, str_list *disks, pd_str *why)
{
    char name[NAME_MAX + 1];
    if (!block_name(m, name, sizeof name)) {
        pd_str_printf(why, "no block device behind %s, so no I/O counters", m->source);
        return 0;
    }
    return device_disks(t, name, depth, disks, why);
}

static int path_disks(const mount_table *t, const char *path, int depth, str_list *disks, pd_str *why)
{
    char real[PATH_MAX];
    if (!existing_ancestor(path, real, sizeof real)) {
        pd_str_printf(why, "cannot resolve %s", path);
        return 0;
    }
    const mount_entry *m = mount_for(t, real);
    if (!m) {
        pd_str_printf(why, "no mount holds %s", real);
        return 0;
    }
    return mount_disks(t, m, depth, disks, why);
}

static bool is_nfs(const char *fstype) { return strcmp(fstype, "nfs") == 0 || strcmp(fstype, "nfs4") == 0; }

static int add_target(pd_io_set *set, pd_io_kind kind, const char *device, const char *match, const char *path)
{
    for (size_t i = 0; i < set->ntargets; i++) {
        pd_io_target *t = &set->targets[i];
        if (t->kind != kind || strcmp(t->device, device) != 0)
            continue;
        /* Same counter again: name every path, once each. */
        size_t pl = strlen(path);
        for (const char *p = t->paths; p; p = strchr(p, ';') ? strchr(p, ';') + 1 : NULL)
            if (strncmp(p, path, pl) == 0 && (p[pl] == ';' || p[pl] == '\0'))
                return 0;
        pd_str s = {0};
        pd_str_printf(&s, "%s;%s", t->paths, path);
        char *joined = pd_str_take(&s);
        if (!joined)
            return -1;
        free(t->paths);
        t->paths = joined;
        return 0;
    }
    pd_io_target *v = realloc(set->targets, (set->ntargets + 1) * sizeof *v);
    if (!v)
        return -1;
    set->targets = v;
    pd_io_target *t = &set->targets[set->ntargets];
    *t = (pd_io_target){.kind = kind};
    t->device = pd_strdup(device);
    t->match = pd_strdup(match);
    t->paths = pd_strdup(path);
    set->ntargets++;
    return (t->device && t->match && t->paths) ? 0 : -1;
}

static int resolve_one(pd_io_set *set, const mount_table *t, const char *path, pd_io_path_result *r)
{
    r->kind = PD_IO_NONE;
    r->path = pd_strdup(path);
    char real[PATH_MAX];
    const mount_entry *m = NULL;
    pd_str why = {0};
    str_list disks = {0};
    int rc = 0;
    if (!existing_ancestor(path, real, sizeof real))
        pd_str_printf(&why, "cannot resolve the path");
    else if (!(m = mount_for(t, real)))
        pd_str_printf(&why, "no mount holds %s", real);
    r->mount = pd_strdup(m ? m->mount : "");
    r->fstype = pd_strdup(m ? m->fstype : "");
    if (m && is_nfs(m->fstype)) {
        r->kind = PD_IO_NFS;
        r->target = pd_strdup(m->source);
        if (add_target(set, PD_IO_NFS, m->source, m->source_raw, path) != 0)
            rc = -1;
    } else if (m && strcmp(m->fstype, "lustre") == 0) {
        char fsname[NAME_MAX + 1], instance[NAME_MAX + 1], stats[PATH_MAX];
        if (!pd_lustre_fsname(m->source, fsname, sizeof fsname)) {
            pd_str_printf(&why, "no Lustre file system name in the mount source %s", m->source);
        } else if (pd_lustre_instance(fsname, instance, sizeof instance, stats, sizeof stats, &why)) {
            r->kind = PD_IO_LUSTRE;
            r->target = pd_strdup(instance);
            if (add_target(set, PD_IO_LUSTRE, instance, stats, path) != 0)
                rc = -1;
        }
    } else if (m && strcmp(m->fstype, "gpfs") == 0) {
        char mmpmon[PATH_MAX];
        const char *fs = pd_gpfs_fsname(m->source);
        if (!pd_mmpmon_find(mmpmon, sizeof mmpmon)) {
            pd_str_printf(&why, "mmpmon not found ($PADDISER_MMPMON, PATH, /usr/lpp/mmfs/bin)");
        } else {
            r->kind = PD_IO_GPFS;
            r->target = pd_strdup(fs);
            if (add_target(set, PD_IO_GPFS, fs, fs, path) != 0)
                rc = -1;
        }
    } else if (m) {
        int n = mount_disks(t, m, 0, &disks, &why);
        if (n < 0) {
            rc = -1;
        } else if (disks.n > 0) {
            r->kind = PD_IO_BLOCK;
            r->target = list_join(&disks, ";");
            for (size_t i = 0; i < disks.n && rc == 0; i++)
                rc = add_target(set, PD_IO_BLOCK, disks.v[i], disks.v[i], path);
            pd_str_clear(&why);
        }
    }
    if (!r->target)
        r->target = pd_strdup("");
    r->reason = pd_str_take(&why);
    list_free(&disks);
    if (!r->path || !r->mount || !r->fstype || !r->target || !r->reason)
        rc = -1;
    return rc;
}

int pd_io_resolve(pd_io_set *set, const char *const *paths, size_t npaths, char *err, size_t errlen)
{
    *set = (pd_io_set){0};
    mount_table t = {0};
    if (mounts_load(&t, err, errlen) != 0)
        return -1;
    set->paths = calloc(npaths ? npaths : 1, sizeof *set->paths);
    if (!set->paths) {
        mounts_free(&t);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    int rc = 0;
    for (size_t i = 0; i < npaths && rc == 0; i++) {
        set->npaths++;
        rc = resolve_one(set, &t, paths[i], &set->paths[i]);
    }
    mounts_free(&t);
    if (rc != 0) {
        pd_io_set_free(set);
        snprintf(err, errlen, "out of memory resolving io_paths");
    }
    return rc;
}

void pd_io_warn(const pd_io_set *set, const char *prog)
{
    for (size_t i = 0; i < set->npaths; i++) {
        const pd_io_path_result *r = &set->paths[i];
        if (r->kind != PD_IO_NONE)
            continue;
        fprintf(stderr, "%s: warning: io path %s is on %s%s%s%s: %s; its I/O is not measured\n", prog, r->path,
                *r->fstype ? r->fstype : "an unknown filesystem", *r->mount ? " (mount " : "", r->mount,
                *r->mount ? ")" : "", r->reason);
    }
}

/* JSON string of s. Paths and mount fields are bytes, not necessarily UTF-8,
 * and json_string() refuses invalid UTF-8: then every non-ASCII byte becomes
 * '?', so the entry keeps all its keys rather than silently losing one. */
static json_t *json_text(const char *s)
{
    json_t *j = json_string(s);
    if (j)
        return j;
    char *ascii = pd_strdup(s);
    if (!ascii)
        return NULL;
    for (char *p = ascii; *p; p++)
        if ((unsigned char)*p >= 0x80)
            *p = '?';
    j = json_string(ascii);
    free(ascii);
    return j;
}

/* Laid out like the spec's example: one line per path entry. */
char *pd_io_targets_json(const pd_io_set *set, const char *host)
{
    pd_str out = {0};
    json_t *h = json_text(host);
    char *hs = h ? json_dumps(h, JSON_ENCODE_ANY) : NULL;
    json_decref(h);
    if (!hs)
        return NULL;
    pd_str_printf(&out, "{\n  \"hostname\": %s,\n  \"paths\": [", hs);
    free(hs);
    for (size_t i = 0; i < set->npaths; i++) {
        const pd_io_path_result *r = &set->paths[i];
        json_t *o = json_object();
        if (!o) {
            pd_str_free(&out);
            return NULL;
        }
        bool ok = json_object_set_new(o, "path", json_text(r->path)) == 0 &&
                  json_object_set_new(o, "kind", json_text(pd_io_kind_name(r->kind))) == 0 &&
                  json_object_set_new(o, "target", json_text(r->target)) == 0 &&
                  json_object_set_new(o, "mount", json_text(r->mount)) == 0 &&
                  json_object_set_new(o, "fstype", json_text(r->fstype)) == 0;
        char *line = ok ? json_dumps(o, JSON_PRESERVE_ORDER) : NULL;
        json_decref(o);
        if (!line) {
            pd_str_free(&out);
            return NULL;
        }
        pd_str_printf(&out, "%s\n    %s", i ? "," : "", line);
        free(line);
    }
    pd_str_append(&out, set->npaths ? "\n  ]\n}\n" : "]\n}\n");
    return pd_str_take(&out);
}

void pd_io_set_free(pd_io_set *set)
{
    for (size_t i = 0; i < set->npaths; i++) {
        pd_io_path_result *r = &set->paths[i];
        free(r->path);
        free(r->target);
        free(r->mount);
        free(r->fstype);
        free(r->reason);
    }
    free(set->paths);
    for (size_t i = 0; i < set->ntargets; i++) {
        free(set->targets[i].device);
        free(set->targets[i].match);
        free(set->targets[i].paths);
    }
    free(set->targets);
    *set = (pd_io_set){0};
}
