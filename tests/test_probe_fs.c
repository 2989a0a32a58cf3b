/* Tests of the parallel file system I/O sources of src/probe (issue #18):
 * Lustre llite stats and GPFS mmpmon fs_io_s answers turned into rows (exact
 * CSV text over fixture snapshot sequences), and io_paths resolved to them
 * over a fake /proc + /sys tree. The paddiser-probe binary against the same
 * kind of tree and a stub mmpmon: tests/probe_io_fs.sh. Fixtures and where
 * their formats come from: tests/fixtures/probe/README.md. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/util.h"
#include "probe/io_fs.h"
#include "probe/sample.h"

static char g_tmp[256];

static const char *fixture_dir(void)
{
    static char dir[512];
    const char *t = getenv("TESTS_DIR");
    snprintf(dir, sizeof dir, "%s/fixtures/probe", t && *t ? t : "tests");
    return dir;
}

static char *fx(const char *name)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", fixture_dir(), name);
    char *s = pd_read_file(path, NULL);
    if (!s)
        fail_msg("missing fixture %s", path);
    return s;
}

static char *tmp_path(const char *rel)
{
    static char bufs[4][PATH_MAX];
    static int i;
    char *b = bufs[i++ % 4];
    snprintf(b, PATH_MAX, "%s/%s", g_tmp, rel);
    return b;
}

static void put(const char *rel, const char *content)
{
    char path[PATH_MAX], dir[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", g_tmp, rel);
    snprintf(dir, sizeof dir, "%s", path);
    *strrchr(dir, '/') = '\0';
    assert_int_equal(pd_mkdir_p(dir, 0755), 0);
    assert_int_equal(pd_write_file(path, content, strlen(content)), 0);
}

static void mkdirs(const char *rel)
{
    assert_int_equal(pd_mkdir_p(tmp_path(rel), 0755), 0);
}

static int rm_tree(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return 0;
    if (S_ISDIR(st.st_mode)) {
        DIR *d = opendir(path);
        if (d) {
            for (struct dirent *e; (e = readdir(d));) {
                if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                    continue;
                char sub[PATH_MAX];
                snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
                rm_tree(sub);
            }
            closedir(d);
        }
        chmod(path, 0755);
        return rmdir(path);
    }
    return unlink(path);
}

static int setup_tmp(void **state)
{
    (void)state;
    char tmpl[] = "/tmp/paddiser_probe_fs_test.XXXXXX";
    char real[PATH_MAX];
    if (!mkdtemp(tmpl) || !realpath(tmpl, real) || strlen(real) >= sizeof g_tmp)
        return -1;
    memcpy(g_tmp, real, strlen(real) + 1);
    return 0;
}

static int teardown_tmp(void **state)
{
    (void)state;
    rm_tree(g_tmp);
    unsetenv("PADDISER_PROC_ROOT");
    unsetenv("PADDISER_SYS_ROOT");
    unsetenv("PADDISER_DEV_ROOT");
    unsetenv("PADDISER_MMPMON");
    return 0;
}

/* A set with the given targets, as pd_io_resolve would leave it. */
static void add(pd_io_set *set, pd_io_kind kind, const char *device, const char *match, const char *paths)
{
    set->targets = realloc(set->targets, (set->ntargets + 1) * sizeof *set->targets);
    assert_non_null(set->targets);
    set->targets[set->ntargets++] =
        (pd_io_target){.kind = kind, .device = pd_strdup(device), .match = pd_strdup(match), .paths = pd_strdup(paths)};
}

/* ---------------- Lustre ---------------- */

static void test_lustre_fsname(void **state)
{
    (void)state;
    char n[16];
    assert_true(pd_lustre_fsname("10.0.0.1@tcp:/lfs1", n, sizeof n));
    assert_string_equal(n, "lfs1");
    /* failover MGS NIDs, and a subdirectory mount (fileset) */
    assert_true(pd_lustre_fsname("10.0.0.1@o2ib,10.0.0.3@o2ib:10.0.0.2@o2ib:/scratch/proj/a", n, sizeof n));
    assert_string_equal(n, "scratch");
    assert_false(pd_lustre_fsname("10.0.0.1@tcp:/", n, sizeof n));
    assert_false(pd_lustre_fsname("/dev/sda1", n, sizeof n));
    assert_false(pd_lustre_fsname("m@tcp:/a_name_too_long_for_n", n, sizeof n));
}

/* Deltas over three snapshots: the first is the baseline and has no
 * write_bytes line (Lustre omits counters without samples), the third
 * follows `lctl set_param llite.*.stats=clear` (counters went back: 0). */
static void test_lustre_sequence(void **state)
{
    (void)state;
    pd_io_set set = {0};
    add(&set, PD_IO_LUSTRE, "lfs1-ffff8a01c2b3d000", "unused", "/lfs/run");
    pd_str out = {0};
    for (int i = 1; i <= 3; i++) {
        char name[64];
        snprintf(name, sizeof name, "lustre/llite_stats.%d", i);
        char *text = fx(name);
        pd_io_begin(&set);
        assert_true(pd_lustre_scan(&set.targets[0], text));
        assert_int_equal(pd_io_emit(&set, 100.0 + i, 1.0, "n1", &out), i == 1 ? 0 : 1);
        free(text);
    }
    assert_string_equal(out.data, "102.000,n1,lustre,lfs1-ffff8a01c2b3d000,/lfs/run,1.000,67108864,33554432,64,32\n"
                                  "103.000,n1,lustre,lfs1-ffff8a01c2b3d000,/lfs/run,1.000,0,0,0,0\n");

    /* Newer clients: start_time/elapsed_time lines, a sumsq column, [usecs]
     * read/write latency lines that must not be taken for the byte lines. */
    char *text = fx("lustre/llite_stats.new");
    assert_true(pd_lustre_scan(&set.targets[0], text));
    assert_int_equal(set.targets[0].cur[0], 145121869);
    assert_int_equal(set.targets[0].cur[1], 468230469);
    assert_int_equal(set.targets[0].cur[2], 25673);
    assert_int_equal(set.targets[0].cur[3], 13641);
    free(text);

    /* Not a stats file (say, an error text): the target stays unseen. */
    pd_io_begin(&set);
    assert_false(pd_lustre_scan(&set.targets[0], "error: get_param: permission denied\n"));
    assert_false(set.targets[0].seen);
    assert_int_equal(pd_io_emit(&set, 104.0, 1.0, "n1", &out), 0);
    pd_str_free(&out);
    pd_io_set_free(&set);
}

/* ---------------- GPFS ---------------- */

static void test_gpfs_sequence(void **state)
{
    (void)state;
    pd_io_set set = {0};
    add(&set, PD_IO_GPFS, "gpfs1", "gpfs1", "/gpfs/in;/gpfs/out");
    add(&set, PD_IO_GPFS, "scratch", "scratch", "/scratch/run");
    pd_str out = {0};
    for (int i = 1; i <= 3; i++) {
        char name[64];
        snprintf(name, sizeof name, "gpfs/fs_io_s.%d", i);
        char *text = fx(name);
        pd_io_begin(&set);
        pd_gpfs_scan(&set, text);
        assert_int_equal(pd_io_emit(&set, 200.0 + i, 0.5, "n1", &out), i == 1 ? 0 : 2);
        free(text);
    }
    assert_string_equal(out.data, "202.000,n1,gpfs,gpfs1,/gpfs/in;/gpfs/out,0.500,104857600,0,100,0\n"
                                  "202.000,n1,gpfs,scratch,/scratch/run,0.500,0,1048576,0,1\n"
                                  "203.000,n1,gpfs,gpfs1,/gpfs/in;/gpfs/out,0.500,0,4096,0,1\n"
                                  "203.000,n1,gpfs,scratch,/scratch/run,0.500,0,0,0,0\n");

    /* A failed answer (_rc_ not 0), another file system, a torn line, and
     * the ver line: none of them fills a target, which so loses its row. */
    pd_str_clear(&out);
    pd_io_begin(&set);
    pd_gpfs_scan(&set, "_fs_io_s_ _n_ 1.2.3.4 _nn_ n _rc_ 1 _t_ 1 _tu_ 2 _cl_ c _fs_ gpfs1 _d_ 1 _br_ 9 _bw_ 9 "
                       "_oc_ 0 _cc_ 0 _rdc_ 9 _wc_ 9 _dir_ 0 _iu_ 0\n"
                       "_fs_io_s_ _n_ 1.2.3.4 _nn_ n _rc_ 0 _t_ 1 _tu_ 2 _cl_ c _fs_ other _d_ 1 _br_ 9 _bw_ 9 "
                       "_oc_ 0 _cc_ 0 _rdc_ 9 _wc_ 9 _dir_ 0 _iu_ 0\n"
                       "_fs_io_s_ _n_ 1.2.3.4 _nn_ n _rc_ 0 _t_ 1 _tu_ 2 _cl_ c _fs_ scratch _d_ 1 _br_ 9x\n"
                       "_ver_ _n_ 1.2.3.4 _nn_ n _v_ 3 _lv_ 3 _vt_ 0\n");
    assert_int_equal(pd_io_emit(&set, 204.0, 0.5, "n1", &out), 0);
    pd_str_free(&out);
    pd_io_set_free(&set);
}

/* ---------------- resolution ---------------- */

static void test_resolve_lustre_gpfs(void **state)
{
    (void)state;
    mkdirs("data/lfs/run");
    mkdirs("data/lfs2");
    mkdirs("data/lfs3");
    mkdirs("data/twice");
    mkdirs("data/gpfs/in");
    mkdirs("data/gpfs/out");
    /* lfs1: older client (/proc); lfs2: newer client (debugfs); lfs3: mounted
     * but no stats (debugfs not mounted); dup: two client mounts of one fs. */
    put("proc/fs/lustre/llite/lfs1-ffff8a01c2b3d000/stats", "snapshot_time 1.0 secs.nsecs\n");
    put("proc/fs/lustre/llite/lfs1x-ffff8a01c2b3e000/stats", "snapshot_time 1.0 secs.nsecs\n");
    put("sys/kernel/debug/lustre/llite/lfs2-ffff9b0000001000/stats", "snapshot_time 1.0 secs.nsecs\n");
    put("proc/fs/lustre/llite/dup-ffff000000000001/stats", "snapshot_time 1.0 secs.nsecs\n");
    put("proc/fs/lustre/llite/dup-ffff000000000002/stats", "snapshot_time 1.0 secs.nsecs\n");
    pd_str mi = {0};
    pd_str_printf(&mi,
                  "1 0 8:1 / / rw - ext4 /dev/root rw\n"
                  "2 1 0:60 / %1$s/data/lfs rw - lustre 10.0.0.1@tcp:10.0.0.2@tcp:/lfs1 rw,flock\n"
                  "3 1 0:61 / %1$s/data/lfs2 rw - lustre 10.0.0.1@o2ib:/lfs2/sub rw\n"
                  "4 1 0:62 / %1$s/data/lfs3 rw - lustre 10.0.0.1@tcp:/lfs3 rw\n"
                  "5 1 0:63 / %1$s/data/twice rw - lustre 10.0.0.1@tcp:/dup rw\n"
                  "6 1 0:64 / %1$s/data/gpfs rw - gpfs gpfs1 rw,relatime\n",
                  g_tmp);
    put("proc/self/mountinfo", mi.data);
    pd_str_free(&mi);
    setenv("PADDISER_PROC_ROOT", tmp_path("proc"), 1);
    setenv("PADDISER_SYS_ROOT", tmp_path("sys"), 1);
    char stub[PATH_MAX];
    snprintf(stub, sizeof stub, "%s/gpfs/bin/mmpmon", fixture_dir());
    setenv("PADDISER_MMPMON", stub, 1);

    char p[7][PATH_MAX];
    const char *rel[7] = {"data/lfs/run/new", "data/lfs", "data/lfs2", "data/lfs3", "data/twice", "data/gpfs/in",
                          "data/gpfs/out"};
    const char *paths[7];
    for (int i = 0; i < 7; i++) {
        snprintf(p[i], sizeof p[i], "%s/%s", g_tmp, rel[i]);
        paths[i] = p[i];
    }
    pd_io_set set;
    char err[256];
    assert_int_equal(pd_io_resolve(&set, paths, 7, err, sizeof err), 0);

    /* Two paths on lfs1 (a bind of one instance), lfs2, one GPFS target
     * for both of its paths. */
    assert_int_equal(set.ntargets, 3);
    assert_int_equal(set.targets[0].kind, PD_IO_LUSTRE);
    assert_string_equal(set.targets[0].device, "lfs1-ffff8a01c2b3d000");
    assert_string_equal(set.targets[0].match, tmp_path("proc/fs/lustre/llite/lfs1-ffff8a01c2b3d000/stats"));
    pd_str both = {0};
    pd_str_printf(&both, "%s;%s", p[0], p[1]);
    assert_string_equal(set.targets[0].paths, both.data);
    pd_str_free(&both);
    assert_string_equal(set.targets[1].device, "lfs2-ffff9b0000001000");
    assert_string_equal(set.targets[1].match, tmp_path("sys/kernel/debug/lustre/llite/lfs2-ffff9b0000001000/stats"));
    assert_int_equal(set.targets[2].kind, PD_IO_GPFS);
    assert_string_equal(set.targets[2].device, "gpfs1");
    assert_string_equal(set.targets[2].match, "gpfs1");

    assert_int_equal(set.paths[3].kind, PD_IO_NONE);
    assert_string_equal(set.paths[3].fstype, "lustre");
    assert_non_null(strstr(set.paths[3].reason, "no Lustre client stats (llite lfs3-*/stats) in "));
    assert_non_null(strstr(set.paths[3].reason, "/kernel/debug/lustre/llite"));
    assert_int_equal(set.paths[4].kind, PD_IO_NONE);
    assert_non_null(strstr(set.paths[4].reason, "2 llite instances of Lustre file system dup"));

    char *json = pd_io_targets_json(&set, "n1");
    assert_non_null(json);
    pd_str want = {0};
    pd_str_printf(&want,
                  "{\"path\": \"%s\", \"kind\": \"lustre\", \"target\": \"lfs1-ffff8a01c2b3d000\", \"mount\": "
                  "\"%s/data/lfs\", \"fstype\": \"lustre\"}",
                  p[0], g_tmp);
    assert_non_null(strstr(json, want.data));
    pd_str_clear(&want);
    pd_str_printf(&want,
                  "{\"path\": \"%s\", \"kind\": \"gpfs\", \"target\": \"gpfs1\", \"mount\": \"%s/data/gpfs\", "
                  "\"fstype\": \"gpfs\"}",
                  p[5], g_tmp);
    assert_non_null(strstr(json, want.data));
    pd_str_free(&want);
    free(json);
    pd_io_set_free(&set);

    /* A stats file there but unreadable: said so (not as root, who reads
     * it anyway). No mmpmon anywhere: the GPFS paths are kind none. */
    assert_int_equal(chmod(tmp_path("proc/fs/lustre/llite/lfs1-ffff8a01c2b3d000/stats"), 0), 0);
    setenv("PADDISER_MMPMON", tmp_path("no-such-mmpmon"), 1);
    assert_int_equal(pd_io_resolve(&set, paths, 7, err, sizeof err), 0);
    if (geteuid() != 0) {
        assert_int_equal(set.paths[0].kind, PD_IO_NONE);
        assert_non_null(strstr(set.paths[0].reason, "lfs1-ffff8a01c2b3d000/stats cannot be read: Permission denied"));
    }
    assert_int_equal(set.paths[5].kind, PD_IO_NONE);
    assert_string_equal(set.paths[5].reason, "mmpmon not found ($PADDISER_MMPMON, PATH, /usr/lpp/mmfs/bin)");
    pd_io_set_free(&set);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lustre_fsname),
        cmocka_unit_test(test_lustre_sequence),
        cmocka_unit_test(test_gpfs_sequence),
        cmocka_unit_test_setup_teardown(test_resolve_lustre_gpfs, setup_tmp, teardown_tmp),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
