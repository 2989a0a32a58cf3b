/* Tests of src/probe: exact CSV text for fixture snapshot sequences (CPU,
 * GPU, I/O), I/O target resolution over a fake /proc, /sys and /dev tree,
 * the paddiser-probe command run in-process (stub nvidia-smi, fixture /proc),
 * and the injected block's validation. Fixtures: tests/fixtures/probe/. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/util.h"
#include "probe/inject.h"
#include "probe/probe.h"
#include "probe/sample.h"

static char g_tmp[256]; /* per-test scratch tree */

static const char *fixture_dir(void)
{
    static char dir[512];
    const char *t = getenv("TESTS_DIR");
    snprintf(dir, sizeof dir, "%s/fixtures/probe", t && *t ? t : "tests");
    return dir;
}

/* Fixture text (test-owned heap buffer). */
static char *fx(const char *name)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", fixture_dir(), name);
    char *s = pd_read_file(path, NULL);
    if (!s)
        fail_msg("missing fixture %s", path);
    return s;
}

static void put(const char *rel, const char *content)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", g_tmp, rel);
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", path);
    *strrchr(dir, '/') = '\0';
    assert_int_equal(pd_mkdir_p(dir, 0755), 0);
    assert_int_equal(pd_write_file(path, content, strlen(content)), 0);
}

static void put_fixture(const char *rel, const char *name)
{
    char *s = fx(name);
    put(rel, s);
    free(s);
}

static void link_to(const char *rel, const char *target)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", g_tmp, rel);
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", path);
    *strrchr(dir, '/') = '\0';
    assert_int_equal(pd_mkdir_p(dir, 0755), 0);
    assert_int_equal(symlink(target, path), 0);
}

static void mkdirs(const char *rel)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", g_tmp, rel);
    assert_int_equal(pd_mkdir_p(path, 0755), 0);
}

static char *tmp_path(const char *rel)
{
    static char bufs[4][PATH_MAX];
    static int i;
    char *b = bufs[i++ % 4];
    snprintf(b, PATH_MAX, "%s/%s", g_tmp, rel);
    return b;
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
        return rmdir(path);
    }
    return unlink(path);
}

static int setup_tmp(void **state)
{
    (void)state;
    char tmpl[] = "/tmp/paddiser_probe_test.XXXXXX";
    if (!mkdtemp(tmpl))
        return -1;
    /* Symlink-free, so the fake mountinfo can name real paths. */
    char real[PATH_MAX];
    if (!realpath(tmpl, real) || strlen(real) >= sizeof g_tmp)
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
    return 0;
}

/* ---------------- CPU ---------------- */

static void test_cpu_sequence(void **state)
{
    (void)state;
    char *s1 = fx("stat.1"), *s2 = fx("stat.2"), *s3 = fx("stat.3");
    char *m1 = fx("meminfo.1"), *m2 = fx("meminfo.2");
    pd_cpu_state st = {0};
    pd_str out = {0};
    char err[128];

    /* First sample: baseline only. */
    assert_int_equal(pd_cpu_sample(&st, s1, m1, 1000.0, "n1", &out, err, sizeof err), 0);
    assert_int_equal(out.len, 0);

    /* d = 200 on cpu0: user+nice 70, system+irq+softirq 25, idle+iowait 105 (steal ignored). */
    assert_int_equal(pd_cpu_sample(&st, s2, m2, 1000.5, "n1", &out, err, sizeof err), 2);
    assert_string_equal(out.data, "1000.500,n1,0,35.00,12.50,52.50,16000000,7000000\n"
                                  "1000.500,n1,1,33.33,33.33,33.33,16000000,7000000\n");

    /* iowait went backwards on cpu0: clamped to 0; cpu1 did not move (d=0);
     * cpu2 appears (hotplug) and only gets its baseline. */
    pd_str_clear(&out);
    assert_int_equal(pd_cpu_sample(&st, s3, m2, 1001.5, "n1", &out, err, sizeof err), 2);
    assert_string_equal(out.data, "1001.500,n1,0,10.00,10.00,80.00,16000000,7000000\n"
                                  "1001.500,n1,1,0.00,0.00,0.00,16000000,7000000\n");

    pd_str_free(&out);
    pd_cpu_state_free(&st);
    free(s1), free(s2), free(s3), free(m1), free(m2);
}

/* cpu1 goes offline and comes back with its idle counter restarted (nohz
 * idle time reset on hotplug): it gets a new baseline, not a row where the
 * clamped idle delta reads as 100% busy. */
static void test_cpu_hotplug_rebaseline(void **state)
{
    (void)state;
    char *m = fx("meminfo.1");
    pd_cpu_state st = {0};
    pd_str out = {0};
    char err[128];
    assert_int_equal(pd_cpu_sample(&st, "cpu0 100 0 50 500 0 0 0\ncpu1 100 0 50 5000 0 0 0\n", m, 1.0, "h", &out,
                                   err, sizeof err),
                     0);
    assert_int_equal(pd_cpu_sample(&st, "cpu0 110 0 50 590 0 0 0\n", m, 2.0, "h", &out, err, sizeof err), 1);
    assert_string_equal(out.data, "2.000,h,0,10.00,0.00,90.00,16000000,8000000\n");
    pd_str_clear(&out);
    assert_int_equal(pd_cpu_sample(&st, "cpu0 120 0 50 680 0 0 0\ncpu1 110 0 50 40 0 0 0\n", m, 3.0, "h", &out,
                                   err, sizeof err),
                     1);
    assert_string_equal(out.data, "3.000,h,0,10.00,0.00,90.00,16000000,8000000\n");
    pd_str_clear(&out);
    assert_int_equal(pd_cpu_sample(&st, "cpu0 130 0 50 770 0 0 0\ncpu1 130 0 50 120 0 0 0\n", m, 4.0, "h", &out,
                                   err, sizeof err),
                     2);
    assert_string_equal(out.data, "4.000,h,0,10.00,0.00,90.00,16000000,8000000\n"
                                  "4.000,h,1,20.00,0.00,80.00,16000000,8000000\n");
    pd_str_free(&out);
    pd_cpu_state_free(&st);
    free(m);
}

static void test_cpu_meminfo_fallback_and_errors(void **state)
{
    (void)state;
    char *s1 = fx("stat.1"), *s2 = fx("stat.2"), *old = fx("meminfo.old"), *m1 = fx("meminfo.1");
    pd_cpu_state st = {0};
    pd_str out = {0};
    char err[128];
    /* No MemAvailable (pre-3.14 kernels): MemFree + Buffers + Cached. */
    assert_int_equal(pd_cpu_sample(&st, s1, old, 1.0, "h", &out, err, sizeof err), 0);
    assert_int_equal(pd_cpu_sample(&st, s2, old, 2.0, "h", &out, err, sizeof err), 2);
    assert_non_null(strstr(out.data, ",16000000,4200000\n"));

    assert_int_equal(pd_cpu_sample(&st, "intr 1\n", m1, 3.0, "h", &out, err, sizeof err), -1);
    assert_non_null(strstr(err, "cpuN"));
    assert_int_equal(pd_cpu_sample(&st, s1, "Foo: 1 kB\n", 3.0, "h", &out, err, sizeof err), -1);
    assert_non_null(strstr(err, "MemTotal"));
    pd_str_free(&out);
    pd_cpu_state_free(&st);
    free(s1), free(s2), free(old), free(m1);
}

/* ---------------- GPU ---------------- */

static void test_gpu_format(void **state)
{
    (void)state;
    char *smi = fx("nvidia-smi.out");
    pd_str out = {0};
    /* [N/A] passes through; a name with ", " is rejoined and CSV-quoted; the
     * "No devices were found" line is not a GPU. */
    assert_int_equal(pd_gpu_format(smi, 1705123456.5, "node01", &out), 3);
    assert_string_equal(out.data,
                        "1705123456.500,node01,0,NVIDIA A100-SXM4-80GB,85,40,30000,81920,62,250.50,1410,1215\n"
                        "1705123456.500,node01,1,NVIDIA GeForce RTX 3090,[N/A],[N/A],100,24576,40,[N/A],210,405\n"
                        "1705123456.500,node01,2,\"NVIDIA Weird, Name GPU\",1,2,3,4,5,6.00,7,8\n");
    pd_str_clear(&out);
    assert_int_equal(pd_gpu_format("0, T4, 1, 2, 3, 4, 5, 6, 7, 8\r\n\n", 1.0, "h", &out), 1);
    assert_string_equal(out.data, "1.000,h,0,NVIDIA T4,1,2,3,4,5,6,7,8\n");
    pd_str_clear(&out);
    assert_int_equal(pd_gpu_format("", 1.0, "h", &out), 0);
    pd_str_free(&out);
    free(smi);
}

/* ---------------- I/O sampling ---------------- */

static void add_target(pd_io_set *set, pd_io_kind kind, const char *dev, const char *match, const char *paths)
{
    set->targets = realloc(set->targets, (set->ntargets + 1) * sizeof *set->targets);
    assert_non_null(set->targets);
    set->targets[set->ntargets++] =
        (pd_io_target){.kind = kind, .device = pd_strdup(dev), .match = pd_strdup(match), .paths = pd_strdup(paths)};
}

static void test_io_sequence(void **state)
{
    (void)state;
    char *d1 = fx("diskstats.1"), *d2 = fx("diskstats.2"), *d3 = fx("diskstats.3");
    char *n1 = fx("mountstats.1"), *n2 = fx("mountstats.2"), *n3 = fx("mountstats.3");
    pd_io_set set = {0};
    add_target(&set, PD_IO_BLOCK, "sda", "sda", "/scratch;/tmp/x");
    add_target(&set, PD_IO_BLOCK, "sdz", "sdz", "/gone"); /* not in diskstats: never a row */
    add_target(&set, PD_IO_NFS, "server:/export", "server:/export", "/mnt/data/in,put");
    pd_str out = {0};

    assert_int_equal(pd_io_sample(&set, d1, n1, 2000.0, 0, "n1", &out), 0);
    assert_int_equal(out.len, 0);

    /* sda: +10 reads of 100 sectors, +10 writes of 300 sectors; loop0, sda1,
     * dm-0 are not targets. nfs: server bytes, READ/WRITE ops (READDIR and the
     * normal-read counter ignored). */
    assert_int_equal(pd_io_sample(&set, d2, n2, 2000.25, 1.002, "n1", &out), 2);
    assert_string_equal(out.data, "2000.250,n1,block,sda,/scratch;/tmp/x,1.002,51200,153600,10,10\n"
                                  "2000.250,n1,nfs,server:/export,\"/mnt/data/in,put\",1.002,1048576,2097152,8,16\n");

    /* Counters that went backwards (reset/wrap) clamp to 0. */
    pd_str_clear(&out);
    assert_int_equal(pd_io_sample(&set, d3, n3, 2001.25, 1.0, "n1", &out), 2);
    assert_string_equal(out.data, "2001.250,n1,block,sda,/scratch;/tmp/x,1.000,0,51200,0,10\n"
                                  "2001.250,n1,nfs,server:/export,\"/mnt/data/in,put\",1.000,0,4096,0,4\n");

    /* A source that vanishes emits nothing and restarts its baseline. */
    pd_str_clear(&out);
    assert_int_equal(pd_io_sample(&set, d3, NULL, 2002.0, 0.75, "n1", &out), 1);
    assert_string_equal(out.data, "2002.000,n1,block,sda,/scratch;/tmp/x,0.750,0,0,0,0\n");
    pd_str_clear(&out);
    assert_int_equal(pd_io_sample(&set, d3, n3, 2003.0, 1.0, "n1", &out), 1);

    pd_str_free(&out);
    pd_io_set_free(&set);
    free(d1), free(d2), free(d3), free(n1), free(n2), free(n3);
}

/* Ops come from the exact READ:/WRITE: lines only: READLINK (before READ in
 * NFSv3's list), READDIR and READ_PLUS, WRITE_SAME do not count; bytes are
 * the 5th and 6th numbers of bytes: (server read / written). */
static void test_io_nfs_exact_ops(void **state)
{
    (void)state;
    pd_io_set set = {0};
    add_target(&set, PD_IO_NFS, "s:/e", "s:/e", "/m");
    const char *fmt = "device s:/e mounted on /m with fstype nfs statvers=1.1\n"
                      "\tbytes:\t%d %d %d %d %d %d %d %d\n"
                      "\tper-op statistics\n"
                      "\t    READLINK: %d 0 0 0 0 0 0 0 0\n"
                      "\t        READ: %d 0 0 0 0 0 0 0 0\n"
                      "\t       WRITE: %d 0 0 0 0 0 0 0 0\n"
                      "\t     READDIR: %d 0 0 0 0 0 0 0 0\n"
                      "\t   READ_PLUS: %d 0 0 0 0 0 0 0 0\n"
                      "\t  WRITE_SAME: %d 0 0 0 0 0 0 0 0\n";
    char a[1024], b[1024];
    snprintf(a, sizeof a, fmt, 1, 2, 3, 4, 50, 60, 7, 8, 100, 10, 20, 300, 400, 500);
    snprintf(b, sizeof b, fmt, 11, 12, 13, 14, 55, 66, 17, 18, 200, 13, 24, 600, 800, 900);
    pd_str out = {0};
    assert_int_equal(pd_io_sample(&set, NULL, a, 1.0, 0, "h", &out), 0);
    assert_int_equal(pd_io_sample(&set, NULL, b, 2.0, 1.0, "h", &out), 1);
    assert_string_equal(out.data, "2.000,h,nfs,s:/e,/m,1.000,5,6,3,4\n");
    pd_str_free(&out);
    pd_io_set_free(&set);
}

/* The trace headers are the spec's, column for column. */
static void test_headers_match_spec(void **state)
{
    (void)state;
    assert_string_equal(PD_CPU_HEADER, "timestamp,hostname,core,cpu_user_pct,cpu_system_pct,cpu_idle_pct,"
                                       "mem_total_kb,mem_available_kb\n");
    assert_string_equal(PD_GPU_HEADER, "timestamp,hostname,gpu_index,gpu_name,utilization_gpu_pct,"
                                       "utilization_mem_pct,memory_used_mib,memory_total_mib,temperature_c,"
                                       "power_draw_w,clock_sm_mhz,clock_mem_mhz\n");
    assert_string_equal(PD_IO_HEADER, "timestamp,hostname,source,device,path,interval_s,read_bytes,write_bytes,"
                                      "read_ops,write_ops\n");
    assert_string_equal(PD_NVIDIA_SMI_QUERY " --format=csv,noheader,nounits",
                        "--query-gpu=index,name,utilization.gpu,utilization.memory,memory.used,memory.total,"
                        "temperature.gpu,power.draw,clocks.current.sm,clocks.current.memory "
                        "--format=csv,noheader,nounits");
}

/* ---------------- I/O target resolution ---------------- */

/* A fake node: real directories under g_tmp/data (so that "nearest existing
 * ancestor" runs for real) and /proc, /sys, /dev trees that describe them. */
static void build_node(void)
{
    mkdirs("data/scratch");
    mkdirs("data/lvm");
    mkdirs("data/raid");
    mkdirs("data/img");
    mkdirs("data/nfs");
    mkdirs("data/shm");
    mkdirs("data/loopless");
    mkdirs("data/my space");
    put("data/scratch/disk.img", "");

    /* sysfs: partitions inside their disk, dm/md with slaves, loops. */
    put("sys/block/sda/sda1/partition", "1\n");
    link_to("sys/class/block/sda", "../../block/sda");
    link_to("sys/class/block/sda1", "../../block/sda/sda1");
    put("sys/block/nvme0n1/nvme0n1p2/partition", "2\n");
    link_to("sys/class/block/nvme0n1", "../../block/nvme0n1");
    link_to("sys/class/block/nvme0n1p2", "../../block/nvme0n1/nvme0n1p2");
    put("sys/block/sdb/sdb1/partition", "1\n");
    link_to("sys/class/block/sdb", "../../block/sdb");
    link_to("sys/class/block/sdb1", "../../block/sdb/sdb1");
    put("sys/block/sdc/stat", "");
    link_to("sys/class/block/sdc", "../../block/sdc");
    link_to("sys/block/dm-0/slaves/sdb1", "../../sdb/sdb1");
    link_to("sys/block/dm-0/slaves/sdc", "../../sdc");
    link_to("sys/class/block/dm-0", "../../block/dm-0");
    put("sys/block/sdd/stat", "");
    put("sys/block/sde/stat", "");
    link_to("sys/class/block/sdd", "../../block/sdd");
    link_to("sys/class/block/sde", "../../block/sde");
    link_to("sys/block/md0/slaves/sdd", "../../sdd");
    link_to("sys/block/md0/slaves/sde", "../../sde");
    link_to("sys/class/block/md0", "../../block/md0");
    char backing[PATH_MAX + 8];
    snprintf(backing, sizeof backing, "%s/data/scratch/disk.img\n", g_tmp);
    put("sys/block/loop0/loop/backing_file", backing);
    link_to("sys/class/block/loop0", "../../block/loop0");
    put("sys/block/loop1/stat", "");
    link_to("sys/class/block/loop1", "../../block/loop1");
    link_to("sys/dev/block/8:1", "../../block/sda/sda1");

    /* /dev: LVM names are symlinks to dm-N. */
    put("dev/dm-0", "");
    link_to("dev/mapper/vg-lv", "../dm-0");

    pd_str mi = {0};
    pd_str_printf(&mi,
                  "1 0 8:1 / / rw,relatime - ext4 /dev/root rw\n"
                  "2 1 259:2 / %1$s/data/scratch rw - ext4 /dev/nvme0n1p2 rw\n"
                  "3 1 253:0 / %1$s/data/lvm rw - xfs /dev/mapper/vg-lv rw\n"
                  "4 1 9:0 / %1$s/data/raid rw shared:5 - ext4 /dev/md0 rw\n"
                  "5 1 7:0 / %1$s/data/img rw - ext4 /dev/loop0 rw\n"
                  "6 1 0:50 / %1$s/data/nfs rw - nfs4 server:/export rw,vers=4.2\n"
                  "7 1 0:51 / %1$s/data/shm rw - tmpfs tmpfs rw\n"
                  "8 1 7:1 / %1$s/data/loopless rw - ext4 /dev/loop1 rw\n"
                  "9 1 0:52 / %1$s/data/my\\040space rw - nfs other:/with\\040space rw\n"
                  "garbage line\n",
                  g_tmp);
    put("proc/self/mountinfo", mi.data);
    pd_str_free(&mi);
    setenv("PADDISER_PROC_ROOT", tmp_path("proc"), 1);
    setenv("PADDISER_SYS_ROOT", tmp_path("sys"), 1);
    setenv("PADDISER_DEV_ROOT", tmp_path("dev"), 1);
}

static void test_io_resolve(void **state)
{
    (void)state;
    build_node();
    char p[10][PATH_MAX];
    const char *rel[10] = {"data/scratch/run/not/yet", "data/lvm/out", "data/raid", "data/img/x",
                           "data/nfs/in",              "data/shm/cache", "data/loopless", "data",
                           "data/scratch/run/not/yet", "data/my space/f"};
    const char *paths[10];
    for (int i = 0; i < 10; i++) {
        snprintf(p[i], sizeof p[i], "%s/%s", g_tmp, rel[i]);
        paths[i] = p[i];
    }
    pd_io_set set;
    char err[256];
    assert_int_equal(pd_io_resolve(&set, paths, 10, err, sizeof err), 0);
    assert_int_equal(set.npaths, 10);

    const char *T = g_tmp;
    pd_str want = {0};
    pd_str_printf(
        &want,
        "{\n  \"hostname\": \"node01\",\n  \"paths\": [\n"
        "    {\"path\": \"%1$s/data/scratch/run/not/yet\", \"kind\": \"block\", \"target\": \"nvme0n1\", "
        "\"mount\": \"%1$s/data/scratch\", \"fstype\": \"ext4\"},\n"
        "    {\"path\": \"%1$s/data/lvm/out\", \"kind\": \"block\", \"target\": \"sdb;sdc\", "
        "\"mount\": \"%1$s/data/lvm\", \"fstype\": \"xfs\"},\n"
        "    {\"path\": \"%1$s/data/raid\", \"kind\": \"block\", \"target\": \"sdd;sde\", "
        "\"mount\": \"%1$s/data/raid\", \"fstype\": \"ext4\"},\n"
        "    {\"path\": \"%1$s/data/img/x\", \"kind\": \"block\", \"target\": \"nvme0n1\", "
        "\"mount\": \"%1$s/data/img\", \"fstype\": \"ext4\"},\n"
        "    {\"path\": \"%1$s/data/nfs/in\", \"kind\": \"nfs\", \"target\": \"server:/export\", "
        "\"mount\": \"%1$s/data/nfs\", \"fstype\": \"nfs4\"},\n"
        "    {\"path\": \"%1$s/data/shm/cache\", \"kind\": \"none\", \"target\": \"\", "
        "\"mount\": \"%1$s/data/shm\", \"fstype\": \"tmpfs\"},\n"
        "    {\"path\": \"%1$s/data/loopless\", \"kind\": \"none\", \"target\": \"\", "
        "\"mount\": \"%1$s/data/loopless\", \"fstype\": \"ext4\"},\n"
        "    {\"path\": \"%1$s/data\", \"kind\": \"block\", \"target\": \"sda\", "
        "\"mount\": \"/\", \"fstype\": \"ext4\"},\n"
        "    {\"path\": \"%1$s/data/scratch/run/not/yet\", \"kind\": \"block\", \"target\": \"nvme0n1\", "
        "\"mount\": \"%1$s/data/scratch\", \"fstype\": \"ext4\"},\n"
        "    {\"path\": \"%1$s/data/my space/f\", \"kind\": \"nfs\", \"target\": \"other:/with space\", "
        "\"mount\": \"%1$s/data/my space\", \"fstype\": \"nfs\"}\n"
        "  ]\n}\n",
        T);
    char *json = pd_io_targets_json(&set, "node01");
    assert_non_null(json);
    assert_string_equal(json, want.data);
    free(json);
    pd_str_free(&want);

    /* Counters: each device once (loop0's backing file is on nvme0n1 again,
     * dm-0 and md0 count their slaves, sdb1 counts as sdb); paths joined. */
    assert_int_equal(set.ntargets, 8);
    const char *dev[8] = {"nvme0n1", "sdb", "sdc", "sdd", "sde", "server:/export", "sda", "other:/with space"};
    for (int i = 0; i < 8; i++)
        assert_string_equal(set.targets[i].device, dev[i]);
    char joined[2 * PATH_MAX + 2];
    snprintf(joined, sizeof joined, "%s;%s", p[0], p[3]);
    assert_string_equal(set.targets[0].paths, joined);
    assert_string_equal(set.targets[1].paths, p[1]);
    assert_int_equal(set.targets[5].kind, PD_IO_NFS);
    assert_string_equal(set.targets[7].match, "other:/with\\040space");
    assert_string_equal(set.paths[6].reason, "loop device loop1 has no backing file");

    /* mountstats prints the escaped source too. */
    pd_str out = {0};
    const char *ms1 = "device other:/with\\040space mounted on /x with fstype nfs statvers=1.1\n"
                      "\tbytes:\t0 0 0 0 10 20 0 0\n\tper-op statistics\n\t        READ: 1 1\n\t       WRITE: 2 2\n";
    const char *ms2 = "device other:/with\\040space mounted on /x with fstype nfs statvers=1.1\n"
                      "\tbytes:\t0 0 0 0 15 40 0 0\n\tper-op statistics\n\t        READ: 2 2\n\t       WRITE: 5 5\n";
    pd_io_sample(&set, NULL, ms1, 1.0, 0, "h", &out);
    assert_int_equal(pd_io_sample(&set, NULL, ms2, 2.0, 1.0, "h", &out), 1);
    char row[PATH_MAX + 128];
    snprintf(row, sizeof row, "2.000,h,nfs,other:/with space,%s,1.000,5,20,1,3\n", p[9]);
    assert_string_equal(out.data, row);
    pd_str_free(&out);
    pd_io_set_free(&set);
}

/* dm on md on partitions (LVM on software RAID): down to the whole disks. */
static void test_io_resolve_stacked(void **state)
{
    (void)state;
    build_node();
    mkdirs("data/stack");
    put("sys/block/sdf/sdf1/partition", "1\n");
    link_to("sys/class/block/sdf", "../../block/sdf");
    link_to("sys/class/block/sdf1", "../../block/sdf/sdf1");
    put("sys/block/sdg/sdg1/partition", "1\n");
    link_to("sys/class/block/sdg", "../../block/sdg");
    link_to("sys/class/block/sdg1", "../../block/sdg/sdg1");
    link_to("sys/block/md1/slaves/sdf1", "../../sdf/sdf1");
    link_to("sys/block/md1/slaves/sdg1", "../../sdg/sdg1");
    link_to("sys/class/block/md1", "../../block/md1");
    link_to("sys/block/dm-1/slaves/md1", "../../md1");
    link_to("sys/class/block/dm-1", "../../block/dm-1");
    put("dev/dm-1", "");
    link_to("dev/mapper/vg1-lv", "../dm-1");
    char *mi = pd_read_file(tmp_path("proc/self/mountinfo"), NULL);
    assert_non_null(mi);
    pd_str more = {0};
    pd_str_printf(&more, "%s10 1 253:1 / %s/data/stack rw - ext4 /dev/mapper/vg1-lv rw\n", mi, g_tmp);
    put("proc/self/mountinfo", more.data);
    pd_str_free(&more);
    free(mi);

    char p[PATH_MAX];
    snprintf(p, sizeof p, "%s/data/stack/out", g_tmp);
    const char *paths[] = {p};
    pd_io_set set;
    char err[256];
    assert_int_equal(pd_io_resolve(&set, paths, 1, err, sizeof err), 0);
    assert_int_equal(set.paths[0].kind, PD_IO_BLOCK);
    assert_string_equal(set.paths[0].target, "sdf;sdg");
    assert_int_equal(set.ntargets, 2);
    assert_string_equal(set.targets[0].device, "sdf");
    assert_string_equal(set.targets[1].device, "sdg");

    /* Only the whole disks are read from diskstats: dm-1, md1 and the
     * partitions (same traffic, counted below them) are not. */
    const char *d1 = "   8 80 sdf 10 0 100 0 20 0 200 0 0 0 0\n   8 81 sdf1 10 0 100 0 20 0 200 0 0 0 0\n"
                     "   8 96 sdg 10 0 100 0 20 0 200 0 0 0 0\n   9 1 md1 20 0 200 0 40 0 400 0 0 0 0\n"
                     " 253 1 dm-1 20 0 200 0 40 0 400 0 0 0 0\n";
    const char *d2 = "   8 80 sdf 11 0 108 0 22 0 216 0 0 0 0\n   8 81 sdf1 11 0 108 0 22 0 216 0 0 0 0\n"
                     "   8 96 sdg 11 0 108 0 22 0 216 0 0 0 0\n   9 1 md1 22 0 216 0 44 0 432 0 0 0 0\n"
                     " 253 1 dm-1 22 0 216 0 44 0 432 0 0 0 0\n";
    pd_str out = {0};
    assert_int_equal(pd_io_sample(&set, d1, NULL, 1.0, 0, "h", &out), 0);
    assert_int_equal(pd_io_sample(&set, d2, NULL, 2.0, 1.0, "h", &out), 2);
    pd_str want = {0};
    pd_str_printf(&want, "2.000,h,block,sdf,%1$s,1.000,4096,8192,1,2\n2.000,h,block,sdg,%1$s,1.000,4096,8192,1,2\n", p);
    assert_string_equal(out.data, want.data);
    pd_str_free(&want);
    pd_str_free(&out);
    pd_io_set_free(&set);
}

/* A path that is not valid UTF-8 (jansson refuses such strings) still gets
 * an entry with all five keys, its odd bytes shown as '?'. */
static void test_io_targets_json_non_utf8(void **state)
{
    (void)state;
    pd_io_path_result r = {.path = pd_strdup("/scratch/caf\xe9/out"), .kind = PD_IO_BLOCK,
                           .target = pd_strdup("sda"), .mount = pd_strdup("/scratch"),
                           .fstype = pd_strdup("ext4"), .reason = pd_strdup("")};
    pd_io_set set = {.paths = &r, .npaths = 1};
    char *json = pd_io_targets_json(&set, "node01");
    assert_non_null(json);
    assert_string_equal(json, "{\n  \"hostname\": \"node01\",\n  \"paths\": [\n"
                              "    {\"path\": \"/scratch/caf?/out\", \"kind\": \"block\", \"target\": \"sda\", "
                              "\"mount\": \"/scratch\", \"fstype\": \"ext4\"}\n  ]\n}\n");
    free(json);
    /* Valid UTF-8 is kept as it is. */
    free(r.path);
    r.path = pd_strdup("/scratch/caf\xc3\xa9");
    json = pd_io_targets_json(&set, "node01");
    assert_non_null(json);
    assert_non_null(strstr(json, "\"path\": \"/scratch/caf\xc3\xa9\""));
    free(json);
    free(r.path), free(r.target), free(r.mount), free(r.fstype), free(r.reason);
}

static void test_io_resolve_without_mountinfo(void **state)
{
    (void)state;
    setenv("PADDISER_PROC_ROOT", tmp_path("nothing"), 1);
    const char *paths[] = {"/"};
    pd_io_set set;
    char err[256];
    assert_int_equal(pd_io_resolve(&set, paths, 1, err, sizeof err), -1);
    assert_non_null(strstr(err, "mountinfo"));
}

/* ---------------- the command, in-process ---------------- */

static int probe(const char *const *args)
{
    char *argv[32];
    int argc = 0;
    argv[argc++] = (char *)"paddiser-probe";
    for (; *args && argc < 31; args++)
        argv[argc++] = (char *)*args;
    argv[argc] = NULL;
    return pd_probe_main(argc, argv);
}

static int count_files(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        n += e->d_name[0] != '.';
    if (d)
        closedir(d);
    return n;
}

/* Text after the first (timestamp) field of every line, joined. */
static char *strip_ts(const char *text)
{
    pd_str s = {0};
    for (const char *p = text; *p;) {
        const char *nl = strchr(p, '\n');
        const char *c = strchr(p, ',');
        if (!nl)
            break;
        if (c && c < nl)
            pd_str_appendn(&s, c + 1, (size_t)(nl - c));
        p = nl + 1;
    }
    return pd_str_take(&s);
}

static void test_cmd_gpu(void **state)
{
    (void)state;
    char *old_path = pd_strdup(getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin");
    mkdirs("rep");
    mkdirs("empty");
    put("rep/__iops_gpu_trace_running.a1", "");
    char rep[PATH_MAX];
    snprintf(rep, sizeof rep, "%s", tmp_path("rep"));
    const char *args[] = {"gpu", "--dir", rep, "--attempt", "a1", "--host", "node01",
                          "--interval", "0", "--samples", "1", NULL};

    /* No NVML (a machine's driver would be preferred over the stub). */
    setenv("PADDISER_NVML_LIB", tmp_path("no-libnvidia-ml.so.1"), 1);
    /* No nvidia-smi on PATH: exit 0, no file. */
    setenv("PATH", tmp_path("empty"), 1);
    assert_int_equal(probe(args), 0);
    assert_int_equal(count_files(tmp_path("rep")), 1);

    /* nvidia-smi present but failing (driver not loaded): same. */
    pd_str bin = {0};
    pd_str_printf(&bin, "%s/bin:%s", fixture_dir(), old_path);
    setenv("PATH", bin.data, 1);
    pd_str_free(&bin);
    setenv("STUB_SMI_EXIT", "9", 1);
    assert_int_equal(probe(args), 0);
    assert_int_equal(count_files(tmp_path("rep")), 1);
    unsetenv("STUB_SMI_EXIT");
    /* ...or succeeding without listing a GPU. */
    put("no_gpu.out", "No devices were found\n");
    setenv("STUB_SMI_OUT", tmp_path("no_gpu.out"), 1);
    assert_int_equal(probe(args), 0);
    assert_int_equal(count_files(rep), 1);
    unsetenv("STUB_SMI_OUT");

    /* Working GPUs: one query per sample, rows as printed. */
    setenv("STUB_SMI_ARGS", tmp_path("smi_args"), 1);
    assert_int_equal(probe(args), 0);
    unsetenv("STUB_SMI_ARGS");
    setenv("PATH", old_path, 1);
    free(old_path);
    char *csv = pd_read_file(tmp_path("rep/__iops_gpu_trace_node01_a1.csv"), NULL);
    assert_non_null(csv);
    assert_true(strncmp(csv, PD_GPU_HEADER, strlen(PD_GPU_HEADER)) == 0);
    char *rows = strip_ts(csv + strlen(PD_GPU_HEADER));
    assert_string_equal(rows, "node01,0,NVIDIA A100-SXM4-80GB,85,40,30000,81920,62,250.50,1410,1215\n"
                              "node01,1,NVIDIA GeForce RTX 3090,[N/A],[N/A],100,24576,40,[N/A],210,405\n"
                              "node01,2,\"NVIDIA Weird, Name GPU\",1,2,3,4,5,6.00,7,8\n");
    char *smi_args = pd_read_file(tmp_path("smi_args"), NULL);
    assert_non_null(smi_args);
    assert_string_equal(smi_args, PD_NVIDIA_SMI_QUERY " --format=csv,noheader,nounits\n");
    free(smi_args);
    free(rows);
    free(csv);
}

static void test_cmd_cpu_and_io_on_fixture_proc(void **state)
{
    (void)state;
    build_node();
    put_fixture("proc/stat", "stat.1");
    put_fixture("proc/meminfo", "meminfo.1");
    put_fixture("proc/self/mountstats", "mountstats.1");
    /* diskstats naming the fake node's disks */
    put("proc/diskstats", "   8       0 sda 1 0 2 0 3 0 4 0 0 0 0\n 259 0 nvme0n1 5 0 6 0 7 0 8 0 0 0 0\n");
    mkdirs("rep");
    put("rep/__iops_trace_running.7", "");
    put("rep/__iops_io_trace_running.7", "");
    char rep[PATH_MAX];
    snprintf(rep, sizeof rep, "%s", tmp_path("rep"));

    const char *cpu[] = {"cpu", "--dir", rep, "--attempt", "7", "--host", "n1",
                         "--interval", "0", "--samples", "1", NULL};
    assert_int_equal(probe(cpu), 0);
    char *csv = pd_read_file(tmp_path("rep/__iops_trace_n1_7.csv"), NULL);
    assert_non_null(csv);
    assert_true(strncmp(csv, PD_CPU_HEADER, strlen(PD_CPU_HEADER)) == 0);
    char *rows = strip_ts(csv + strlen(PD_CPU_HEADER));
    /* A frozen /proc/stat: nothing elapsed, all shares 0. */
    assert_string_equal(rows, "n1,0,0.00,0.00,0.00,16000000,8000000\nn1,1,0.00,0.00,0.00,16000000,8000000\n");
    free(rows);
    free(csv);

    char nfs[PATH_MAX], shm[PATH_MAX];
    snprintf(nfs, sizeof nfs, "%s/data/nfs/in", g_tmp);
    snprintf(shm, sizeof shm, "%s/data/shm", g_tmp);
    const char *io[] = {"io", "--dir", rep, "--attempt", "7", "--host", "n1", "--interval", "0",
                        "--samples", "1", "--io-path", nfs, "--io-path", shm, "--io-path", g_tmp, NULL};
    assert_int_equal(probe(io), 0);
    char *json = pd_read_file(tmp_path("rep/__iops_io_targets_n1_7.json"), NULL);
    assert_non_null(json);
    assert_non_null(strstr(json, "\"kind\": \"none\", \"target\": \"\""));
    assert_non_null(strstr(json, "\"target\": \"server:/export\""));
    free(json);
    csv = pd_read_file(tmp_path("rep/__iops_io_trace_n1_7.csv"), NULL);
    assert_non_null(csv);
    assert_true(strncmp(csv, PD_IO_HEADER, strlen(PD_IO_HEADER)) == 0);
    rows = strip_ts(csv + strlen(PD_IO_HEADER));
    /* interval_s is measured, so only its column is left out of the check */
    pd_str want = {0};
    pd_str_printf(&want, "n1,nfs,server:/export,%s,", nfs);
    assert_true(strncmp(rows, want.data, want.len) == 0);
    assert_non_null(strstr(rows, ",0,0,0,0\nn1,block,sda,"));
    pd_str_free(&want);
    free(rows);
    free(csv);

    /* Every path on storage without counters: targets file, no trace. */
    put("rep/__iops_io_trace_running.8", "");
    const char *io_none[] = {"io", "--dir", rep, "--attempt", "8", "--host", "n1",
                             "--io-path", shm, NULL};
    assert_int_equal(probe(io_none), 0);
    assert_int_equal(access(tmp_path("rep/__iops_io_targets_n1_8.json"), F_OK), 0);
    assert_int_not_equal(access(tmp_path("rep/__iops_io_trace_n1_8.csv"), F_OK), 0);
}

/* A trace that cannot be written in full (here: a file size limit hit in the
 * middle of the header) is a runtime failure, exit 1, not a silent success. */
static void test_cmd_short_write(void **state)
{
    (void)state;
    put_fixture("proc/stat", "stat.1");
    put_fixture("proc/meminfo", "meminfo.1");
    setenv("PADDISER_PROC_ROOT", tmp_path("proc"), 1);
    mkdirs("rep");
    put("rep/__iops_trace_running.9", "");
    char rep[PATH_MAX];
    snprintf(rep, sizeof rep, "%s", tmp_path("rep"));
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        struct rlimit lim = {40, 40};
        signal(SIGXFSZ, SIG_IGN); /* writes past the limit fail with EFBIG */
        freopen("/dev/null", "w", stderr);
        setrlimit(RLIMIT_FSIZE, &lim);
        const char *cpu[] = {"cpu", "--dir", rep, "--attempt", "9", "--host", "n1",
                             "--interval", "0", "--samples", "1", NULL};
        _exit(probe(cpu));
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 1);
}

static void test_cmd_sentinel_and_usage(void **state)
{
    (void)state;
    mkdirs("rep");
    /* No sentinel: the run is already over, nothing is written. */
    const char *cpu[] = {"cpu", "--dir", tmp_path("rep"), "--attempt", "1", NULL};
    assert_int_equal(probe(cpu), 0);
    assert_int_equal(count_files(tmp_path("rep")), 0);

    const char *no_attempt[] = {"cpu", "--dir", tmp_path("rep"), NULL};
    assert_int_equal(probe(no_attempt), 2);
    const char *bad_interval[] = {"cpu", "--attempt", "1", "--interval", "-1", NULL};
    assert_int_equal(probe(bad_interval), 2);
    const char *zero_interval[] = {"cpu", "--attempt", "1", "--interval", "0", NULL};
    assert_int_equal(probe(zero_interval), 2);
    const char *bad_attempt[] = {"cpu", "--attempt", "a/b", NULL};
    assert_int_equal(probe(bad_attempt), 2);
    const char *io_no_path[] = {"io", "--attempt", "1", NULL};
    assert_int_equal(probe(io_no_path), 2);
    const char *cpu_path[] = {"cpu", "--attempt", "1", "--io-path", "/", NULL};
    assert_int_equal(probe(cpu_path), 2);
    const char *unknown[] = {"disk", NULL};
    assert_int_equal(probe(unknown), 2);
    const char *dangling[] = {"cpu", "--attempt", NULL};
    assert_int_equal(probe(dangling), 2);
}

/* Whether PID sleeps in its sampling loop: it holds its inotify descriptor
 * (set up just before the baseline sample) and is asleep. */
static bool sampler_sleeping(pid_t pid)
{
    char path[PATH_MAX], link[256];
    bool inotify = false;
    snprintf(path, sizeof path, "/proc/%ld/fd", (long)pid);
    DIR *d = opendir(path);
    for (struct dirent *e; d && !inotify && (e = readdir(d));) {
        char fd[PATH_MAX + 300];
        snprintf(fd, sizeof fd, "%s/%s", path, e->d_name);
        ssize_t n = readlink(fd, link, sizeof link - 1);
        link[n > 0 ? n : 0] = '\0';
        inotify = strstr(link, "inotify") != NULL;
    }
    if (d)
        closedir(d);
    snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
    char *st = pd_read_file(path, NULL);
    const char *p = st ? strrchr(st, ')') : NULL;
    bool asleep = p && p[1] == ' ' && p[2] == 'S';
    free(st);
    return inotify && asleep;
}

static void nap(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    nanosleep(&ts, NULL);
}

/* `start --cpu` into tmp rep/ for the attempt, on the fixture /proc
 * (stat.1, meminfo.1), at an hour's interval (only a stop ends its sleep):
 * the sampler's PID, which start prints on stdout. */
static long start_cpu_sampler(const char *attempt)
{
    put_fixture("proc/stat", "stat.1");
    put_fixture("proc/meminfo", "meminfo.1");
    setenv("PADDISER_PROC_ROOT", tmp_path("proc"), 1);
    mkdirs("rep");
    char rep[PATH_MAX];
    snprintf(rep, sizeof rep, "%s", tmp_path("rep"));
    fflush(stdout);
    int saved = dup(1);
    FILE *cap = tmpfile();
    assert_non_null(cap);
    dup2(fileno(cap), 1);
    const char *start[] = {"start", "--dir", rep, "--attempt", attempt, "--cpu", "--interval", "3600", NULL};
    int rc = probe(start);
    fflush(stdout);
    dup2(saved, 1);
    close(saved);
    assert_int_equal(rc, 0);
    rewind(cap);
    long pid = 0;
    assert_int_equal(fscanf(cap, "%ld", &pid), 1);
    fclose(cap);
    assert_true(pid > 1);
    return pid;
}

/* What the block's exit handler does (SIGUSR1), then the trace of rep's
 * attempt must exist, its sentinel be gone, and its rows be exactly the
 * fixture's stat.1 -> stat.2 deltas. */
static void stop_expect_stat_deltas(long pid, const char *attempt)
{
    assert_int_equal(kill((pid_t)pid, SIGUSR1), 0);
    int status = 0;
    assert_int_equal(waitpid((pid_t)pid, &status, 0), (pid_t)pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    char running[128];
    snprintf(running, sizeof running, "rep/__iops_trace_running.%s", attempt);
    assert_int_not_equal(access(tmp_path(running), F_OK), 0);

    char host[65];
    pd_short_hostname(host, sizeof host);
    char name[128];
    snprintf(name, sizeof name, "rep/__iops_trace_%.64s_%s.csv", host, attempt);
    char *csv = pd_read_file(tmp_path(name), NULL);
    assert_non_null(csv);
    assert_true(strncmp(csv, PD_CPU_HEADER, strlen(PD_CPU_HEADER)) == 0);
    char *rows = strip_ts(csv + strlen(PD_CPU_HEADER));
    pd_str want = {0};
    pd_str_printf(&want, "%s,0,35.00,12.50,52.50,16000000,7000000\n%s,1,33.33,33.33,33.33,16000000,7000000\n",
                  host, host);
    assert_string_equal(rows, want.data);
    pd_str_free(&want);
    free(rows);
    free(csv);
}

/* issue #18: start forks the sampler; SIGUSR1 (the run is over) makes it
 * remove the sentinel, take its closing sample and exit. The interval is an
 * hour, so only the signal can have ended the sleep, and the fixture
 * /proc/stat changed between the baseline and the stop: the rows are exactly
 * the stat.1 -> stat.2 deltas, read through the files the sampler kept open. */
static void test_cmd_start_stop_closing_sample(void **state)
{
    (void)state;
    long pid = start_cpu_sampler("ss");
    assert_int_equal(access(tmp_path("rep/__iops_trace_running.ss"), F_OK), 0);
    assert_int_equal(access(tmp_path("rep/__iops_runtime_sampler.sh"), X_OK), 0);

    for (int i = 0; i < 400 && !sampler_sleeping((pid_t)pid); i++) /* bounded: 20 s */
        nap(0.05);
    assert_true(sampler_sleeping((pid_t)pid));
    put_fixture("proc/stat", "stat.2"); /* in place: the sampler's fd sees it */
    put_fixture("proc/meminfo", "meminfo.2");
    nap(0.05); /* a closing sample needs 0.02 s behind it */

    /* What the block's exit handler sends. (`stop` itself is exercised with
     * the real binary in tests/probe_stop.sh: here the child's command line
     * is the test's, which stop would not take for a sampler.) */
    stop_expect_stat_deltas(pid, "ss");
}

/* check-slurm found no trace for the membw example's smallest case (a ~17 ms
 * run): the sampler, forked by start and going to nice 19, could take its
 * baseline after the run script had gone on (or ended), and a stop within
 * 0.02 s of the baseline took no closing sample, so no row and no file. Now
 * start returns only once the sampler has its baseline, and a stop before
 * the first row waits the 0.02 s for the closing sample. Here the stop comes
 * right after start returns, with no wait for the sampler: the fixture
 * /proc/stat changes only after start has returned, so rows equal to the
 * stat.1 -> stat.2 deltas show the baseline was taken before start returned
 * (a later one would read stat.2 and give 0.00 shares), and a trace at all
 * shows the stop right after the baseline still got its closing sample. */
static void test_cmd_start_baseline_then_immediate_stop(void **state)
{
    (void)state;
    long pid = start_cpu_sampler("short");

    /* no wait for the sampler: what a run of a few ms does */
    put_fixture("proc/stat", "stat.2");
    put_fixture("proc/meminfo", "meminfo.2");
    stop_expect_stat_deltas(pid, "short"); /* the run has its trace */
}

/* ---------------- injected block ---------------- */

static void test_injection_validation(void **state)
{
    (void)state;
    pd_str out = {0};
    char err[256];
    const char *paths[] = {"/scratch", "rel/dir"};
    pd_probe_inject_cfg cfg = {.interval_s = 1.0, .probe_bin = "/opt/p d/paddiser-probe", .dir = "/w/it's"};

    assert_int_equal(pd_probe_injection(&out, &cfg, err, sizeof err), 0); /* nothing enabled */
    assert_int_equal(out.len, 0);

    cfg.io = true;
    assert_int_equal(pd_probe_injection(&out, &cfg, err, sizeof err), -1);
    assert_non_null(strstr(err, "io_paths"));
    cfg.io = false;
    cfg.io_paths = paths;
    cfg.n_io_paths = 2;
    assert_int_equal(pd_probe_injection(&out, &cfg, err, sizeof err), -1);
    assert_non_null(strstr(err, "io_sampling"));

    cfg.io = true;
    cfg.interval_s = 0;
    assert_int_equal(pd_probe_injection(&out, &cfg, err, sizeof err), -1);
    assert_non_null(strstr(err, "sampling_interval"));
    cfg.interval_s = 0.5;
    cfg.probe_bin = "build/paddiser-probe";
    assert_int_equal(pd_probe_injection(&out, &cfg, err, sizeof err), -1);
    assert_non_null(strstr(err, "absolute"));
    cfg.probe_bin = "/opt/p d/paddiser-probe";
    assert_int_equal(out.len, 0);

    cfg.cpu = cfg.gpu = true;
    assert_int_equal(pd_probe_injection(&out, &cfg, err, sizeof err), 0);
    /* The block: two paddiser-probe runs (start, and stop in the exit
     * handler), no polling loop and no sleep. */
    const char *must[] = {
        "__iops_dir='/w/it'\\''s'\n",
        "__iops_probe='/opt/p d/paddiser-probe'\n",
        "__iops_attempt=${IOPS_ATTEMPT_ID:-${SLURM_JOB_ID:-${OAR_JOB_ID:-${PBS_JOBID:-$$}}}}\n",
        "trap '__iops_exit_handler' EXIT\n",
        "\"$__iops_probe\" stop --dir \"$__iops_dir\" --attempt \"$__iops_attempt\" --cpu --gpu --io $__iops_pids ",
        ("__iops_pids=$(\"$__iops_probe\" start --dir \"$__iops_dir\" --attempt \"$__iops_attempt\" --interval 0.5 "
         "--watch-pid $$ --cpu --gpu --io-path '/scratch' --io-path '/w/it'\\''s/rel/dir' </dev/null) || true\n"),
    };
    for (size_t i = 0; i < PD_ARRAY_LEN(must); i++)
        if (!strstr(out.data, must[i]))
            fail_msg("block lacks: %s", must[i]);
    assert_null(strstr(out.data, "sleep"));
    assert_null(strstr(out.data, "while"));
    pd_str_free(&out);

    /* What start writes: the wrappers and the launcher. */
    pd_str_append(&out, "");
    pd_probe_wrapper_text(&out, &cfg, "cpu");
    pd_probe_wrapper_text(&out, &cfg, "gpu");
    pd_probe_wrapper_text(&out, &cfg, "io");
    pd_probe_launcher_text(&out);
    const char *files[] = {
        "exec '/opt/p d/paddiser-probe' cpu --dir '/w/it'\\''s' --attempt \"$1\" --interval 0.5 ",
        "exec '/opt/p d/paddiser-probe' gpu --dir '/w/it'\\''s' --attempt \"$1\" --interval 0.5 ",
        "--io-path '/scratch' --io-path '/w/it'\\''s/rel/dir'",
        "srun --overlap --nodes=\"$n\" --ntasks=\"$n\" --ntasks-per-node=1",
        "scontrol show hostnames \"$SLURM_JOB_NODELIST\"",
        "ssh -o BatchMode=yes",
        "oarsh",
        "if [ \"${4:-}\" != --remote-only ]; then\n",
    };
    for (size_t i = 0; i < PD_ARRAY_LEN(files); i++)
        if (!strstr(out.data, files[i]))
            fail_msg("wrappers/launcher lack: %s", files[i]);
    /* the GPU wrapper leaves finding a source (NVML, nvidia-smi, amd-smi,
     * rocm-smi, xpu-smi) to paddiser-probe: no nvidia-smi-only test */
    assert_null(strstr(out.data, "command -v nvidia-smi"));
    assert_string_equal(pd_probe_wrapper_name("cpu"), "__iops_runtime_sampler.sh");
    assert_string_equal(pd_probe_wrapper_name("gpu"), "__iops_runtime_gpu_sampler.sh");
    assert_string_equal(pd_probe_wrapper_name("io"), "__iops_runtime_io_sampler.sh");
    pd_str_free(&out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cpu_sequence),
        cmocka_unit_test(test_cpu_hotplug_rebaseline),
        cmocka_unit_test(test_cpu_meminfo_fallback_and_errors),
        cmocka_unit_test(test_gpu_format),
        cmocka_unit_test(test_io_sequence),
        cmocka_unit_test(test_io_nfs_exact_ops),
        cmocka_unit_test(test_headers_match_spec),
        cmocka_unit_test_setup_teardown(test_io_resolve, setup_tmp, teardown_tmp),
        cmocka_unit_test_setup_teardown(test_io_resolve_without_mountinfo, setup_tmp, teardown_tmp),
        cmocka_unit_test_setup_teardown(test_io_resolve_stacked, setup_tmp, teardown_tmp),
        cmocka_unit_test(test_io_targets_json_non_utf8),
        cmocka_unit_test_setup_teardown(test_cmd_gpu, setup_tmp, teardown_tmp),
        cmocka_unit_test_setup_teardown(test_cmd_cpu_and_io_on_fixture_proc, setup_tmp, teardown_tmp),
        cmocka_unit_test_setup_teardown(test_cmd_short_write, setup_tmp, teardown_tmp),
        cmocka_unit_test_setup_teardown(test_cmd_sentinel_and_usage, setup_tmp, teardown_tmp),
        cmocka_unit_test_setup_teardown(test_cmd_start_stop_closing_sample, setup_tmp, teardown_tmp),
        cmocka_unit_test_setup_teardown(test_cmd_start_baseline_then_immediate_stop, setup_tmp, teardown_tmp),
        cmocka_unit_test(test_injection_validation),
    };
    return cmocka_run_group_tests_name("probe", tests, NULL, NULL);
}
