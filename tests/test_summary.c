/* Tests of src/bench/summary.c on handwritten traces. Every expected value
 * is worked out by hand in the comment next to it (GiB = 1048576 kB,
 * MiB = 1048576 bytes). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench/summary.h"
#include "common/csv.h"
#include "common/util.h"

#define CPU_HDR                                                                            \
    "timestamp,hostname,core,cpu_user_pct,cpu_system_pct,cpu_idle_pct,mem_total_kb,"       \
    "mem_available_kb\n"
#define GPU_HDR                                                                            \
    "timestamp,hostname,gpu_index,gpu_name,utilization_gpu_pct,utilization_mem_pct,"       \
    "memory_used_mib,memory_total_mib,temperature_c,power_draw_w,clock_sm_mhz,"            \
    "clock_mem_mhz\n"
#define IO_HDR                                                                             \
    "timestamp,hostname,source,device,path,interval_s,read_bytes,write_bytes,read_ops,"    \
    "write_ops\n"

/* ---- temp directory helpers ---- */

static char *make_tmpdir(void)
{
    char tmpl[] = "/tmp/pd_summary_test_XXXXXX";
    char *d = mkdtemp(tmpl);
    assert_non_null(d);
    return strdup(d);
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static void rm_rf(char *dir)
{
    nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    free(dir);
}

/* Writes dir/rel (creating parent directories); returns the full path
 * in a static rotating buffer. */
static const char *put(const char *dir, const char *rel, const char *content)
{
    static char paths[8][PATH_MAX];
    static int next;
    char *path = paths[next++ % 8];
    snprintf(path, PATH_MAX, "%s/%s", dir, rel);
    char parent[PATH_MAX];
    snprintf(parent, sizeof parent, "%s", path);
    *strrchr(parent, '/') = '\0';
    assert_int_equal(pd_mkdir_p(parent, 0755), 0);
    assert_int_equal(pd_write_file(path, content, strlen(content)), 0);
    return path;
}

static void mkdir_in(const char *dir, const char *rel)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    assert_int_equal(pd_mkdir_p(path, 0755), 0);
}

static void expect_kv(const pd_summary_kvs *kv, const char *key, const char *value)
{
    const char *got = pd_summary_kvs_get(kv, key);
    if (!got)
        fail_msg("metric %s missing", key);
    if (strcmp(got, value) != 0)
        fail_msg("metric %s: expected %s, got %s", key, value, got);
}

static void expect_keys(const pd_summary_kvs *kv, const char *const *keys, size_t n)
{
    if (kv->n != n)
        fail_msg("expected %zu metrics, got %zu (first: %s)", n, kv->n,
                 kv->n ? kv->items[0].key : "-");
    for (size_t i = 0; i < n; i++)
        assert_string_equal(kv->items[i].key, keys[i]);
}

/* ---- CPU / memory ---- */

static void test_cpu_two_hosts(void **state)
{
    (void)state;
    char *dir = make_tmpdir();
    const char *paths[3];
    /* node01: two cores, two instants; a bad number and a short row in the
     * middle are skipped. */
    paths[0] = put(dir, "__iops_trace_node01_100.csv",
                   CPU_HDR "100.0,node01,0,40.0,10.0,50.0,8388608,4194304\n" /* used 4 GiB, cpu 50 */
                           "100.0,node01,1,10.0,5.0,85.0,8388608,4194304\n"  /* 4 GiB, cpu 15 */
                           "101.0,node01,0,abc,1.0,1.0,8388608,4194304\n"    /* skipped */
                           "101.0,node01,1,10.0\n"                           /* skipped */
                           "101.0,node01,1,nan,1.0,1.0,8388608,4194304\n"    /* skipped */
                           "102.5,node01,0,60.0,20.0,20.0,8388608,3145728\n" /* 5 GiB, cpu 80 */
                           "102.5,node01,1,20.0,0.0,80.0,8388608,3145728\n"); /* 5 GiB, cpu 20 */
    /* node02, another attempt, columns in another order: looked up by name */
    paths[1] = put(dir, "__iops_trace_node02_200.csv",
                   "hostname,timestamp,core,mem_total_kb,mem_available_kb,cpu_user_pct,"
                   "cpu_system_pct,cpu_idle_pct\r\n"
                   "node02,101.0,0,16777216,10485760,8.0,2.0,90.0\r\n" /* 6 GiB, cpu 10 */
                   "\r\n"
                   "node02,104.0,0,16777216,9437184,10.0,2.0,88.0\r\n" /* 7 GiB, cpu 12 */
                   /* cut short by a failed write (no line end): not a sample,
                    * though its fields parse (cpu 12, mem 15 GiB) */
                   "node02,105.0,0,16777216,1048576,10.0,2.0,8");
    /* a file without the needed columns is skipped as a whole */
    paths[2] = put(dir, "__iops_trace_node03_300.csv", "garbage\nnode03,1,2\n");

    pd_summary_kvs kv = {0};
    assert_int_equal(pd_summary_cpu_metrics(paths, 3, &kv), 0);
    static const char *const keys[] = {
        "mem_peak_gb", "mem_avg_gb",   "mem_peak_per_node_gb", "cpu_avg_pct",     "cpu_max_pct",
        "cpu_imbalance_pct", "nodes_traced", "samples_collected", "trace_duration_s"};
    expect_keys(&kv, keys, PD_ARRAY_LEN(keys));
    expect_kv(&kv, "mem_peak_gb", "7.000");          /* max(4,4,5,5,6,7) GiB */
    expect_kv(&kv, "mem_avg_gb", "5.167");           /* 31/6 = 5.1667 */
    expect_kv(&kv, "mem_peak_per_node_gb", "7.000"); /* max(node01 5, node02 7) */
    expect_kv(&kv, "cpu_avg_pct", "31.17");          /* (50+15+80+20+10+12)/6 = 187/6 */
    expect_kv(&kv, "cpu_max_pct", "80.00");
    /* per host:core maxima: node01:0 80, node01:1 20, node02:0 12 -> 80-12.
     * (Keyed by core alone, core 0 and 1 would give 80-20 = 60.) */
    expect_kv(&kv, "cpu_imbalance_pct", "68.00");
    expect_kv(&kv, "nodes_traced", "2");
    expect_kv(&kv, "samples_collected", "6");
    expect_kv(&kv, "trace_duration_s", "4.00"); /* 104.0 - 100.0, across hosts */
    pd_summary_kvs_free(&kv);
    rm_rf(dir);
}

static void test_cpu_single_row_and_no_rows(void **state)
{
    (void)state;
    char *dir = make_tmpdir();
    const char *one = put(dir, "__iops_trace_n_1.csv", /* with a UTF-8 byte order mark */
                          "\xEF\xBB\xBF" CPU_HDR "5.0,n,0,10.0,2.5,87.5,1048576,524288\n"); /* 0.5 GiB, cpu 12.5 */
    pd_summary_kvs kv = {0};
    assert_int_equal(pd_summary_cpu_metrics(&one, 1, &kv), 0);
    expect_kv(&kv, "mem_peak_gb", "0.500");
    expect_kv(&kv, "mem_avg_gb", "0.500");
    expect_kv(&kv, "cpu_avg_pct", "12.50");
    expect_kv(&kv, "cpu_imbalance_pct", "0.00"); /* one core: max - min of one value */
    expect_kv(&kv, "samples_collected", "1");
    expect_kv(&kv, "trace_duration_s", "0.00"); /* a single row spans no time */
    pd_summary_kvs_free(&kv);

    /* header only, every row malformed, unreadable path: counters only */
    const char *paths[3] = {put(dir, "__iops_trace_n_2.csv", CPU_HDR),
                            put(dir, "__iops_trace_n_3.csv", CPU_HDR "x,n,0,1,1,1,1,1\n"),
                            "/nonexistent/__iops_trace_n_4.csv"};
    assert_int_equal(pd_summary_cpu_metrics(paths, 3, &kv), 0);
    static const char *const keys[] = {"nodes_traced", "samples_collected"};
    expect_keys(&kv, keys, 2);
    expect_kv(&kv, "nodes_traced", "0");
    expect_kv(&kv, "samples_collected", "0");
    pd_summary_kvs_free(&kv);
    rm_rf(dir);
}

/* ---- GPU ---- */

static void test_gpu_single_host(void **state)
{
    (void)state;
    char *dir = make_tmpdir();
    const char *path = put(
        dir, "__iops_gpu_trace_node-01_7.csv",
        GPU_HDR
        /* GPU 0, out of time order: 102 (300 W), 100 (100 W), 101 (200 W) */
        "102.0,node-01,0,NVIDIA A100-SXM4-80GB,90,50,30000,81920,70,300.0,1410,1215\n"
        "100.0,node-01,0,NVIDIA A100-SXM4-80GB,60,30,20000,81920,60,100.0,1410,1215\n"
        "101.0,node-01,0,NVIDIA A100-SXM4-80GB,[N/A],[N/A],[N/A],81920,[N/A],[N/A],1410,1215\n"
        "101.0,node-01,0,NVIDIA A100-SXM4-80GB,75,40,25000,81920,65,200.0,1410,1215\n"
        /* GPU 1, also reversed: 103 (35 W), 100 (25 W) */
        "103.0,node-01,1,NVIDIA A100-SXM4-80GB,10,5,100,81920,37,35.0,1410,1215\n"
        "100.0,node-01,1,NVIDIA A100-SXM4-80GB,0,0,0,81920,35,25.0,210,405\n");
    pd_summary_kvs kv = {0};
    assert_int_equal(pd_summary_gpu_metrics(&path, 1, &kv), 0);
    expect_kv(&kv, "gpu_count", "2");
    expect_kv(&kv, "gpu_samples_collected", "5"); /* the [N/A] row is dropped */
    /* one host: plain gpuN labels */
    expect_kv(&kv, "gpu0_avg_utilization_pct", "75.00"); /* (90+60+75)/3 */
    expect_kv(&kv, "gpu0_avg_power_w", "200.00");        /* (300+100+200)/3 */
    expect_kv(&kv, "gpu0_avg_temperature_c", "65.00");   /* (70+60+65)/3 */
    expect_kv(&kv, "gpu0_mem_peak_mib", "30000.00");
    /* sorted: (100+200)/2*1 + (200+300)/2*1 = 400; in file order the
     * trapezoid would give (300+100)/2*(-2) + (100+200)/2*1 = -250 */
    expect_kv(&kv, "gpu0_energy_j", "400.00");
    expect_kv(&kv, "gpu1_avg_utilization_pct", "5.00"); /* (10+0)/2 */
    expect_kv(&kv, "gpu1_avg_power_w", "30.00");        /* (35+25)/2 */
    expect_kv(&kv, "gpu1_avg_temperature_c", "36.00");  /* (37+35)/2 */
    expect_kv(&kv, "gpu1_mem_peak_mib", "100.00");
    expect_kv(&kv, "gpu1_energy_j", "90.00"); /* (25+35)/2 * (103-100) */
    expect_kv(&kv, "gpu_avg_utilization_pct", "75.00");     /* max(75, 5) */
    expect_kv(&kv, "gpu_max_utilization_pct", "90.00");
    expect_kv(&kv, "gpu_avg_mem_utilization_pct", "40.00"); /* max((50+30+40)/3, 5/2) */
    expect_kv(&kv, "gpu_mem_peak_mib", "30000.00");
    expect_kv(&kv, "gpu_avg_temperature_c", "65.00"); /* max(65, 36) */
    expect_kv(&kv, "gpu_max_temperature_c", "70.00");
    expect_kv(&kv, "gpu_avg_power_w", "200.00"); /* max(200, 30) */
    expect_kv(&kv, "gpu_max_power_w", "300.00");
    expect_kv(&kv, "gpu_energy_j", "490.00");        /* 400 + 90 */
    expect_kv(&kv, "gpu_trace_duration_s", "3.00"); /* 103 - 100 */
    assert_int_equal(kv.n, 2 + 5 * 2 + 10);
    pd_summary_kvs_free(&kv);
    rm_rf(dir);
}

static void test_gpu_multi_host_labels(void **state)
{
    (void)state;
    char *dir = make_tmpdir();
    const char *paths[2] = {
        put(dir, "__iops_gpu_trace_node-01.cluster.local_5.csv",
            GPU_HDR "1000.0,node-01.cluster.local,0,GPU,95.0,40.0,30000,81920,65,240.0,1410,1215\n"
                    "1001.0,node-01.cluster.local,0,GPU,95.0,40.0,30000,81920,65,260.0,1410,1215\n"),
        put(dir, "__iops_gpu_trace_node-02.cluster.local_5.csv",
            GPU_HDR "1000.5,node-02.cluster.local,0,GPU,5.0,1.0,100,81920,35,45.0,210,1215\n"
                    "1002.5,node-02.cluster.local,0,GPU,15.0,3.0,200,81920,45,55.0,210,1215\n"),
    };
    pd_summary_kvs kv = {0};
    assert_int_equal(pd_summary_gpu_metrics(paths, 2, &kv), 0);
    expect_kv(&kv, "gpu_count", "2"); /* same index on two hosts: two GPUs */
    expect_kv(&kv, "gpu_samples_collected", "4");
    /* shorthost = up to the first '.', '-' -> '_' */
    expect_kv(&kv, "node_01_gpu0_avg_utilization_pct", "95.00");
    expect_kv(&kv, "node_01_gpu0_avg_power_w", "250.00"); /* (240+260)/2 */
    expect_kv(&kv, "node_01_gpu0_energy_j", "250.00");    /* (240+260)/2 * 1 */
    expect_kv(&kv, "node_02_gpu0_avg_utilization_pct", "10.00");
    expect_kv(&kv, "node_02_gpu0_avg_power_w", "50.00");
    expect_kv(&kv, "node_02_gpu0_avg_temperature_c", "40.00");
    expect_kv(&kv, "node_02_gpu0_mem_peak_mib", "200.00");
    expect_kv(&kv, "node_02_gpu0_energy_j", "100.00"); /* (45+55)/2 * 2 */
    assert_null(pd_summary_kvs_get(&kv, "gpu0_avg_utilization_pct"));
    expect_kv(&kv, "gpu_avg_mem_utilization_pct", "40.00"); /* max(40, 2) */
    expect_kv(&kv, "gpu_energy_j", "350.00");
    expect_kv(&kv, "gpu_trace_duration_s", "2.50"); /* 1002.5 - 1000.0 across hosts */
    pd_summary_kvs_free(&kv);
    rm_rf(dir);
}

static void test_gpu_no_rows_and_unused_na(void **state)
{
    (void)state;
    char *dir = make_tmpdir();
    const char *paths[2] = {
        put(dir, "__iops_gpu_trace_a_1.csv", GPU_HDR),
        put(dir, "__iops_gpu_trace_a_2.csv",
            GPU_HDR "1.0,a,0,GPU,[N/A],1,1,1,1,1,1,1\n"
                    "2.0,a,x,GPU,1,1,1,1,1,1,1,1\n"), /* non-integer index */
    };
    pd_summary_kvs kv = {0};
    assert_int_equal(pd_summary_gpu_metrics(paths, 2, &kv), 0);
    static const char *const keys[] = {"gpu_count", "gpu_samples_collected"};
    expect_keys(&kv, keys, 2);
    expect_kv(&kv, "gpu_count", "0");
    expect_kv(&kv, "gpu_samples_collected", "0");
    pd_summary_kvs_free(&kv);

    /* [N/A] in a column no metric uses (clocks, memory total) keeps the row;
     * a quoted name holding a comma is one field */
    const char *p = put(dir, "__iops_gpu_trace_a_3.csv",
                        GPU_HDR "1.0,a,3,\"Tesla, \"\"T4\"\"\",20,10,500,[N/A],40,70.5,[N/A],[N/A]\n");
    assert_int_equal(pd_summary_gpu_metrics(&p, 1, &kv), 0);
    expect_kv(&kv, "gpu_samples_collected", "1");
    expect_kv(&kv, "gpu3_avg_power_w", "70.50");
    expect_kv(&kv, "gpu3_energy_j", "0.00"); /* one sample: no interval */
    expect_kv(&kv, "gpu_trace_duration_s", "0.00");
    pd_summary_kvs_free(&kv);
    rm_rf(dir);
}

static void test_trace_records_rfc4180(void **state)
{
    (void)state;
    char *dir = make_tmpdir();
    /* a quoted GPU name may hold a line break (RFC 4180): still one row */
    const char *gpu = put(dir, "__iops_gpu_trace_a_1.csv",
                          GPU_HDR "1.0,a,0,\"Tesla\nT4\",20,10,500,16384,40,70.0,1,1\n"
                                  "3.0,a,0,\"Tesla\r\nT4\",40,10,700,16384,50,90.0,1,1\n");
    pd_summary_kvs kv = {0};
    assert_int_equal(pd_summary_gpu_metrics(&gpu, 1, &kv), 0);
    expect_kv(&kv, "gpu_samples_collected", "2");
    expect_kv(&kv, "gpu0_energy_j", "160.00"); /* (70+90)/2 * 2 */
    pd_summary_kvs_free(&kv);

    /* a quote left open swallows the rest of the file: the rows before it
     * count, the file is not dropped */
    const char *cpu = put(dir, "__iops_trace_n_1.csv",
                          CPU_HDR "1.0,n,0,10.0,0.0,90.0,2097152,1048576\n"   /* 1 GiB, cpu 10 */
                                  "2.0,n,\"0,20.0,0.0,80.0,2097152,1048576\n" /* open quote */
                                  "3.0,n,0,30.0,0.0,70.0,2097152,1048576\n");
    assert_int_equal(pd_summary_cpu_metrics(&cpu, 1, &kv), 0);
    expect_kv(&kv, "samples_collected", "1");
    expect_kv(&kv, "cpu_max_pct", "10.00");
    pd_summary_kvs_free(&kv);
    rm_rf(dir);
}

/* ---- I/O ---- */

static void test_io_200mib_example(void **state)
{
    (void)state;
    char *dir = make_tmpdir();
    /* the spec's example: 200 MiB written in the first of four 1 s samples */
    const char *p = put(dir, "__iops_io_trace_node01_1.csv",
                        IO_HDR "100.0,node01,block,sda,/scratch,1.0,0,209715200,0,10\n"
                               "101.0,node01,block,sda,/scratch,1.0,0,0,0,0\n"
                               "102.0,node01,block,sda,/scratch,1.0,0,0,0,0\n"
                               "103.0,node01,block,sda,/scratch,1.0,0,0,0,0\n");
    pd_summary_kvs kv = {0};
    assert_int_equal(pd_summary_io_metrics(&p, 1, &kv), 0);
    static const char *const keys[] = {
        "io_read_gb",          "io_write_gb",          "io_disk_read_gb",
        "io_disk_write_gb",    "io_nfs_read_gb",       "io_nfs_write_gb",
        "io_read_mbs_avg",     "io_write_mbs_avg",     "io_read_mbs_peak_per_node",
        "io_write_mbs_peak_per_node", "io_read_iops_avg", "io_write_iops_avg",
        "io_nodes_traced",     "io_samples_collected", "io_trace_duration_s",
        "io_read_active_s",    "io_read_mbs_active",   "io_write_active_s",
        "io_write_mbs_active"};
    expect_keys(&kv, keys, PD_ARRAY_LEN(keys));
    expect_kv(&kv, "io_write_mbs_avg", "50.00");     /* 200 MiB / 4 s */
    expect_kv(&kv, "io_write_active_s", "1.00");     /* one busy interval */
    expect_kv(&kv, "io_write_mbs_active", "200.00"); /* 200 MiB / 1 s */
    expect_kv(&kv, "io_write_gb", "0.195");          /* 200/1024 = 0.1953 */
    expect_kv(&kv, "io_disk_write_gb", "0.195");
    expect_kv(&kv, "io_nfs_read_gb", "0.000"); /* always present */
    expect_kv(&kv, "io_nfs_write_gb", "0.000");
    expect_kv(&kv, "io_write_mbs_peak_per_node", "200.00");
    expect_kv(&kv, "io_write_iops_avg", "2.50"); /* 10 ops / 4 s */
    expect_kv(&kv, "io_trace_duration_s", "4.00");
    expect_kv(&kv, "io_samples_collected", "4");
    expect_kv(&kv, "io_nodes_traced", "1");
    expect_kv(&kv, "io_read_active_s", "0.00");
    expect_kv(&kv, "io_read_mbs_active", "0.00"); /* no read: 0, not a division by 0 */
    expect_kv(&kv, "io_read_mbs_avg", "0.00");
    pd_summary_kvs_free(&kv);
    rm_rf(dir);
}

/* Lustre and GPFS rows (paddiser-probe's further sources): their bytes in
 * their own columns after the NFS ones, written only when such rows exist,
 * and in the totals as always. */
static void test_io_lustre_gpfs_columns(void **state)
{
    (void)state;
    char *dir = make_tmpdir();
    const char *p = put(dir, "__iops_io_trace_n1_1.csv",
                        IO_HDR "10.0,n1,block,sda,/a,1.0,1048576,0,1,0\n"
                               "10.0,n1,lustre,lfs1-ffff,/lfs,1.0,2097152,3145728,2,3\n"
                               "10.0,n1,gpfs,fs1,/gpfs,1.0,4194304,1048576,4,1\n");
    pd_summary_kvs kv = {0};
    assert_int_equal(pd_summary_io_metrics(&p, 1, &kv), 0);
    static const char *const keys[] = {
        "io_read_gb",          "io_write_gb",          "io_disk_read_gb",
        "io_disk_write_gb",    "io_nfs_read_gb",       "io_nfs_write_gb",
        "io_lustre_read_gb",   "io_lustre_write_gb",   "io_gpfs_read_gb",
        "io_gpfs_write_gb",    "io_read_mbs_avg",      "io_write_mbs_avg",
        "io_read_mbs_peak_per_node", "io_write_mbs_peak_per_node", "io_read_iops_avg",
        "io_write_iops_avg",   "io_nodes_traced",      "io_samples_collected",
        "io_trace_duration_s", "io_read_active_s",     "io_read_mbs_active",
        "io_write_active_s",   "io_write_mbs_active"};
    expect_keys(&kv, keys, PD_ARRAY_LEN(keys));
    expect_kv(&kv, "io_read_gb", "0.007");        /* 1+2+4 = 7 MiB */
    expect_kv(&kv, "io_disk_read_gb", "0.001");
    expect_kv(&kv, "io_lustre_read_gb", "0.002"); /* 2/1024 = 0.00195 */
    expect_kv(&kv, "io_lustre_write_gb", "0.003");
    expect_kv(&kv, "io_gpfs_read_gb", "0.004");
    expect_kv(&kv, "io_gpfs_write_gb", "0.001");
    expect_kv(&kv, "io_nfs_read_gb", "0.000");
    pd_summary_kvs_free(&kv);
    rm_rf(dir);
}

static void test_io_node_instants(void **state)
{
    (void)state;
    char *dir = make_tmpdir();
    const char *paths[2] = {
        put(dir, "__iops_io_trace_node01_1.csv",
            IO_HDR
            /* instant A (node01, 100): two devices; r 1+3 MiB, w 2 MiB, 2 s once */
            "100.0,node01,block,sda,/a,2.0,1048576,2097152,4,8\n"
            "100.0,node01,nfs,srv:/exp,/b,2.0,3145728,0,6,0\n"
            /* instant B (node01, 102): w 4 MiB in 2 s */
            "102.0,node01,block,sda,/a,2.0,0,4194304,0,16\n"
            "104.0,node01,block,sda,/a,0,1048576,1048576,1,1\n"     /* interval 0: skipped */
            "105.0,node01,block,sda,/a,-1.0,1048576,1048576,1,1\n"  /* negative: skipped */
            "106.0,node01,block,sda,/a,1.0,abc,1048576,1,1\n"       /* bad number: skipped */
            "107.0,node01,block,sda,/a,1.0,-5,1048576,1,1\n"),      /* negative delta: skipped */
        put(dir, "__iops_io_trace_node02_1.csv",
            /* instant C (node02, 100.5): r 1 MiB, w 1 MiB in 1 s */
            IO_HDR "100.5,node02,nfs,srv:/exp,/b,1.0,1048576,1048576,2,2\n"),
    };
    pd_summary_kvs kv = {0};
    assert_int_equal(pd_summary_io_metrics(paths, 2, &kv), 0);
    /* totals: read 1+3+1 = 5 MiB (disk 1, nfs 4), write 2+4+1 = 7 MiB (disk 6, nfs 1) */
    expect_kv(&kv, "io_read_gb", "0.005");       /* 5/1024 = 0.00488 */
    expect_kv(&kv, "io_write_gb", "0.007");      /* 7/1024 = 0.00684 */
    expect_kv(&kv, "io_disk_read_gb", "0.001");  /* 1/1024 */
    expect_kv(&kv, "io_disk_write_gb", "0.006"); /* 6/1024 = 0.00586 */
    expect_kv(&kv, "io_nfs_read_gb", "0.004");   /* 4/1024 = 0.00391 */
    expect_kv(&kv, "io_nfs_write_gb", "0.001");
    /* per-node durations: node01 A 2 + B 2 = 4 (not 6: A's interval once),
     * node02 1 -> duration 4 */
    expect_kv(&kv, "io_trace_duration_s", "4.00");
    expect_kv(&kv, "io_read_mbs_avg", "1.25");  /* 5 MiB / 4 s */
    expect_kv(&kv, "io_write_mbs_avg", "1.75"); /* 7 MiB / 4 s */
    /* peaks per node-instant: read A 4/2 = 2, C 1/1 = 1 (per row it would be 1.5) */
    expect_kv(&kv, "io_read_mbs_peak_per_node", "2.00");
    expect_kv(&kv, "io_write_mbs_peak_per_node", "2.00"); /* B 4/2 */
    expect_kv(&kv, "io_read_iops_avg", "3.00");  /* (4+6+2)/4 */
    expect_kv(&kv, "io_write_iops_avg", "6.50"); /* (8+16+2)/4 */
    expect_kv(&kv, "io_nodes_traced", "2");
    expect_kv(&kv, "io_samples_collected", "3"); /* A, B, C */
    expect_kv(&kv, "io_read_active_s", "3.00");  /* A 2 + C 1 */
    expect_kv(&kv, "io_read_mbs_active", "1.67"); /* 5/3 */
    expect_kv(&kv, "io_write_active_s", "5.00");  /* A 2 + B 2 + C 1 */
    expect_kv(&kv, "io_write_mbs_active", "1.40"); /* 7/5 */
    pd_summary_kvs_free(&kv);

    /* nothing usable: counters only */
    const char *bad = put(dir, "__iops_io_trace_node03_1.csv",
                          IO_HDR "1.0,node03,block,sda,/a,0.0,1,1,1,1\n");
    assert_int_equal(pd_summary_io_metrics(&bad, 1, &kv), 0);
    static const char *const keys[] = {"io_nodes_traced", "io_samples_collected"};
    expect_keys(&kv, keys, 2);
    expect_kv(&kv, "io_nodes_traced", "0");
    expect_kv(&kv, "io_samples_collected", "0");
    pd_summary_kvs_free(&kv);
    rm_rf(dir);
}

/* ---- variables ---- */

static void test_py_float(void **state)
{
    (void)state;
    static const struct {
        double v;
        const char *s;
    } cases[] = {{0.5, "0.5"},
                 {2.0, "2.0"},
                 {0.1, "0.1"},
                 {1e16, "1e+16"},
                 {1e15, "1000000000000000.0"},
                 {0.0001, "0.0001"},
                 {1e-05, "1e-05"},
                 {-1.5, "-1.5"},
                 {123.456, "123.456"},
                 {1.0 / 3.0, "0.3333333333333333"},
                 {1.2345678901234567e20, "1.2345678901234567e+20"},
                 {5e-324, "5e-324"},
                 {1.7976931348623157e308, "1.7976931348623157e+308"},
                 {100.0, "100.0"},
                 {0.00012, "0.00012"},
                 {0.0, "0.0"}};
    for (size_t i = 0; i < PD_ARRAY_LEN(cases); i++) {
        char buf[64];
        pd_summary_format_py_float(cases[i].v, buf, sizeof buf);
        assert_string_equal(buf, cases[i].s);
    }
}

static void test_params(void **state)
{
    (void)state;
    char *dir = make_tmpdir();
    put(dir, "exec_0001/__iops_params.json",
        "{\"zeta\": 1, \"alpha\": \"x y\", \"c\": 2.0, \"d\": 1e-05, \"e\": false,"
        " \"f\": null, \"__internal\": 3, \"g\": [1, 2], \"t\": true, \"big\": -9007199254740993}");
    char exec[PATH_MAX], err[256];
    snprintf(exec, sizeof exec, "%s/exec_0001", dir);
    pd_summary_kvs kv = {0};
    assert_int_equal(pd_summary_read_params(exec, &kv, err, sizeof err), 1);
    static const char *const keys[] = {"zeta", "alpha", "c", "d", "e", "f", "g", "t", "big"};
    expect_keys(&kv, keys, PD_ARRAY_LEN(keys)); /* file order, not sorted */
    static const char *const values[] = {"1",  "x y",   "2.0",  "1e-05",            "False",
                                         "",   "[1,2]", "True", "-9007199254740993"};
    for (size_t i = 0; i < PD_ARRAY_LEN(values); i++)
        assert_string_equal(kv.items[i].value, values[i]);
    pd_summary_kvs_free(&kv);

    put(dir, "exec_0002/__iops_params.json", "[1, 2]");
    snprintf(exec, sizeof exec, "%s/exec_0002", dir);
    assert_int_equal(pd_summary_read_params(exec, &kv, err, sizeof err), 0);
    assert_non_null(strstr(err, "not a JSON object"));
    put(dir, "exec_0003/__iops_params.json", "{\"a\": ");
    snprintf(exec, sizeof exec, "%s/exec_0003", dir);
    assert_int_equal(pd_summary_read_params(exec, &kv, err, sizeof err), 0);
    assert_non_null(strstr(err, "__iops_params.json"));
    snprintf(exec, sizeof exec, "%s/exec_0009", dir);
    assert_int_equal(pd_summary_read_params(exec, &kv, err, sizeof err), 0);
    assert_int_equal(kv.n, 0);
    rm_rf(dir);
}

/* ---- the run summary file ---- */

static const char *const SUMMARY_HEADER =
    "execution_id,repetition,size,nodes,ratio,flag,extra,"
    "nodes_traced,samples_collected,"
    "mem_peak_gb,mem_avg_gb,mem_peak_per_node_gb,cpu_avg_pct,cpu_max_pct,cpu_imbalance_pct,"
    "trace_duration_s,"
    "gpu_count,gpu_samples_collected,"
    "gpu0_avg_utilization_pct,gpu0_avg_power_w,gpu0_energy_j,gpu0_avg_temperature_c,"
    "gpu0_mem_peak_mib,"
    "gpu_avg_utilization_pct,gpu_max_utilization_pct,"
    "gpu_avg_mem_utilization_pct,gpu_mem_peak_mib,gpu_avg_temperature_c,gpu_max_temperature_c,"
    "gpu_avg_power_w,gpu_max_power_w,gpu_energy_j,gpu_trace_duration_s,"
    "io_read_gb,io_write_gb,io_disk_read_gb,io_disk_write_gb,io_nfs_read_gb,io_nfs_write_gb,"
    "io_read_mbs_avg,io_write_mbs_avg,io_read_mbs_peak_per_node,io_write_mbs_peak_per_node,"
    "io_read_iops_avg,io_write_iops_avg,io_nodes_traced,io_samples_collected,"
    "io_trace_duration_s,io_read_active_s,io_read_mbs_active,io_write_active_s,"
    "io_write_mbs_active";

/* Checks one row: listed (column, value) pairs, every other cell empty. */
static void expect_row(const pd_csv *c, size_t row, const char *const *pairs)
{
    assert_int_equal(c->rows[row].nfields, c->header.nfields);
    for (size_t col = 0; col < c->header.nfields; col++) {
        const char *name = c->header.fields[col], *want = "";
        for (size_t i = 0; pairs[i]; i += 2)
            if (strcmp(pairs[i], name) == 0)
                want = pairs[i + 1];
        const char *got = pd_csv_get(c, row, (int)col);
        if (strcmp(got, want) != 0)
            fail_msg("row %zu column %s: expected '%s', got '%s'", row, name, want, got);
    }
}

static void build_run(const char *dir)
{
    /* exec 1: variables in file order (not alphabetical) */
    put(dir, "exec_0001/__iops_params.json",
        "{\"size\": \"4M\", \"nodes\": 2, \"ratio\": 0.5, \"flag\": true}");
    put(dir, "exec_0001/repetition_001/__iops_trace_n1_7.csv",
        CPU_HDR "10.0,n1,0,20.0,5.0,75.0,4194304,3145728\n"   /* 1 GiB, cpu 25 */
                "12.0,n1,0,40.0,10.0,50.0,4194304,2097152\n"); /* 2 GiB, cpu 50 */
    put(dir, "exec_0001/repetition_001/__iops_gpu_trace_n1_7.csv",
        GPU_HDR "10.0,n1,0,Tesla T4,50,20,1000,15360,40,60.0,1590,5000\n"
                "11.0,n1,0,Tesla T4,70,40,3000,15360,50,80.0,1590,5000\n");
    put(dir, "exec_0001/repetition_001/__iops_trace_running.7", "");
    put(dir, "exec_0001/repetition_001/stdout", "hello\n");
    /* repetition 2 sampled nothing usable: counters only, no GPU file */
    put(dir, "exec_0001/repetition_002/__iops_trace_n1_8.csv", CPU_HDR);
    /* exec 2: no params file, I/O only */
    put(dir, "exec_0002/repetition_001/__iops_io_trace_n2_9.csv",
        IO_HDR "20.0,n2,nfs,srv:/export,/data,2.0,0,4194304,0,8\n");
    /* exec 3: no sample files at all -> no row */
    put(dir, "exec_0003/repetition_001/stdout", "");
    /* exec 10 sorts after exec 2; another key order and a new variable */
    put(dir, "exec_0010/__iops_params.json",
        "{\"nodes\": 4, \"size\": \"1G, fast\", \"extra\": null}");
    put(dir, "exec_0010/repetition_001/__iops_trace_n3_1.csv",
        CPU_HDR "5.0,n3,0,10.0,0.0,90.0,1048576,524288\n"); /* 0.5 GiB, cpu 10 */
    /* things that are not executions or repetitions */
    put(dir, "exec_0004", "a file, not a directory");
    put(dir, "exec_x1/repetition_001/__iops_trace_a_1.csv", CPU_HDR "1,a,0,1,1,1,2,1\n");
    put(dir, "exec_0001/repetition_0a1/__iops_trace_a_1.csv", CPU_HDR "1,a,0,1,1,1,2,1\n");
    put(dir, "results.csv", "execution_id,repetition\n");
}

static void test_summary_write(void **state)
{
    (void)state;
    char *dir = make_tmpdir();
    build_run(dir);
    char err[256];
    assert_int_equal(pd_summary_write(dir, err, sizeof err), 1);
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/__iops_resource_summary.csv", dir);
    char *text = pd_read_file(path, NULL);
    assert_non_null(text);
    assert_int_equal(strncmp(text, SUMMARY_HEADER, strlen(SUMMARY_HEADER)), 0);
    assert_int_equal(text[strlen(SUMMARY_HEADER)], '\n');
    /* the value with a comma is quoted */
    assert_non_null(strstr(text, "\nexec_0010,1,\"1G, fast\",4,,,,1,1,0.500,"));
    free(text);

    pd_csv *c = pd_csv_load(path, err, sizeof err);
    assert_non_null(c);
    assert_int_equal(c->nrows, 4);
    assert_int_equal(c->header.nfields, 52);
    static const char *const row0[] = {
        "execution_id", "exec_0001", "repetition", "1", "size", "4M", "nodes", "2",
        "ratio", "0.5", "flag", "True",
        "mem_peak_gb", "2.000", "mem_avg_gb", "1.500", "mem_peak_per_node_gb", "2.000",
        "cpu_avg_pct", "37.50", "cpu_max_pct", "50.00", "cpu_imbalance_pct", "0.00",
        "nodes_traced", "1", "samples_collected", "2", "trace_duration_s", "2.00",
        "gpu_count", "1", "gpu_samples_collected", "2",
        "gpu_avg_utilization_pct", "60.00", "gpu_max_utilization_pct", "70.00",
        "gpu_avg_mem_utilization_pct", "30.00", "gpu_mem_peak_mib", "3000.00",
        "gpu_avg_temperature_c", "45.00", "gpu_max_temperature_c", "50.00",
        "gpu_avg_power_w", "70.00", "gpu_max_power_w", "80.00",
        "gpu_energy_j", "70.00", /* (60+80)/2 * 1 */
        "gpu_trace_duration_s", "1.00",
        "gpu0_avg_utilization_pct", "60.00", "gpu0_avg_power_w", "70.00",
        "gpu0_avg_temperature_c", "45.00", "gpu0_mem_peak_mib", "3000.00",
        "gpu0_energy_j", "70.00", NULL};
    expect_row(c, 0, row0);
    static const char *const row1[] = {
        "execution_id", "exec_0001", "repetition", "2", "size", "4M", "nodes", "2",
        "ratio", "0.5", "flag", "True", "nodes_traced", "0", "samples_collected", "0", NULL};
    expect_row(c, 1, row1);
    static const char *const row2[] = {
        "execution_id", "exec_0002", "repetition", "1",
        "io_read_gb", "0.000", "io_write_gb", "0.004", /* 4 MiB = 0.0039 GiB */
        "io_disk_read_gb", "0.000", "io_disk_write_gb", "0.000",
        "io_nfs_read_gb", "0.000", "io_nfs_write_gb", "0.004",
        "io_read_mbs_avg", "0.00", "io_write_mbs_avg", "2.00", /* 4 MiB / 2 s */
        "io_read_mbs_peak_per_node", "0.00", "io_write_mbs_peak_per_node", "2.00",
        "io_read_iops_avg", "0.00", "io_write_iops_avg", "4.00", /* 8 / 2 s */
        "io_nodes_traced", "1", "io_samples_collected", "1", "io_trace_duration_s", "2.00",
        "io_read_active_s", "0.00", "io_read_mbs_active", "0.00",
        "io_write_active_s", "2.00", "io_write_mbs_active", "2.00", NULL};
    expect_row(c, 2, row2);
    static const char *const row3[] = {
        "execution_id", "exec_0010", "repetition", "1", "size", "1G, fast", "nodes", "4",
        "mem_peak_gb", "0.500", "mem_avg_gb", "0.500", "mem_peak_per_node_gb", "0.500",
        "cpu_avg_pct", "10.00", "cpu_max_pct", "10.00", "cpu_imbalance_pct", "0.00",
        "nodes_traced", "1", "samples_collected", "1", "trace_duration_s", "0.00", NULL};
    expect_row(c, 3, row3);
    pd_csv_free(c);

    /* regenerating gives the same bytes */
    char *first = pd_read_file(path, NULL);
    assert_int_equal(pd_summary_write(dir, err, sizeof err), 1);
    char *second = pd_read_file(path, NULL);
    assert_string_equal(first, second);
    free(first);
    free(second);
    rm_rf(dir);
}

static void test_summary_gpu_column_order(void **state)
{
    (void)state;
    char *dir = make_tmpdir();
    put(dir, "exec_0001/repetition_001/__iops_gpu_trace_h_1.csv",
        GPU_HDR "1.0,h,10,G,1,1,1,1,1,1,1,1\n"
                "1.0,h,2,G,1,1,1,1,1,1,1,1\n");
    char err[256];
    assert_int_equal(pd_summary_write(dir, err, sizeof err), 1);
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/__iops_resource_summary.csv", dir);
    char *text = pd_read_file(path, NULL);
    assert_non_null(text);
    /* gpu2 before gpu10 (numeric), each GPU's five columns together in IOPS's
     * order, between the GPU counters and the GPU aggregates as IOPS puts them */
    assert_non_null(strstr(text, ",gpu_count,gpu_samples_collected,gpu2_avg_utilization_pct,gpu2_avg_power_w,"
                                 "gpu2_energy_j,gpu2_avg_temperature_c,gpu2_mem_peak_mib,"
                                 "gpu10_avg_utilization_pct,"));
    assert_non_null(strstr(text, ",gpu10_mem_peak_mib,gpu_avg_utilization_pct,"));
    free(text);
    rm_rf(dir);
}

/* A derived variable that depends on the repetition: the summary shows each
 * repetition's value, read from the results table __iops_run_metadata.json
 * names (IOPS's flattened layout, or results.csv's short one), for the
 * variables it marks derived. */
static void test_summary_derived_per_repetition(void **state)
{
    (void)state;
    for (int short_layout = 0; short_layout < 2; short_layout++) {
        char *dir = make_tmpdir();
        put(dir, "exec_0001/__iops_params.json", "{\"threads\": 1, \"seed\": 101}");
        for (int r = 1; r <= 3; r++) {
            char rel[128];
            snprintf(rel, sizeof rel, "exec_0001/repetition_%03d/__iops_trace_h_1.csv", r);
            put(dir, rel, CPU_HDR "1.0,h,0,10.0,0.0,90.0,1048576,524288\n");
        }
        put(dir, "__iops_run_metadata.json",
            "{\"variables\": {\"threads\": {\"type\": \"int\", \"swept\": true},"
            " \"seed\": {\"type\": \"int\", \"swept\": false, \"expr\": \"threads * 100 + repetition\"}},"
            " \"output\": {\"type\": \"csv\", \"path\": \"res.csv\"}}");
        /* repetition 3 failed: not in the results, the params value stays; the
         * swept variable's cell in the table is not used */
        if (short_layout)
            put(dir, "res.csv", "execution_id,repetition,threads,seed\nexec_0001,2,9,102\nexec_0001,1,9,101\n");
        else
            put(dir, "res.csv", "execution.execution_id,execution.repetition,vars.threads,vars.seed\n"
                                "1,2,9,102\n1,1,9,101\n");
        char err[256], path[PATH_MAX];
        assert_int_equal(pd_summary_write(dir, err, sizeof err), 1);
        snprintf(path, sizeof path, "%s/__iops_resource_summary.csv", dir);
        char *text = pd_read_file(path, NULL);
        assert_non_null(text);
        assert_non_null(
            strstr(text, "execution_id,repetition,threads,seed,nodes_traced,samples_collected,mem_peak_gb,"));
        assert_non_null(strstr(text, "\nexec_0001,1,1,101,1,1,"));
        assert_non_null(strstr(text, "\nexec_0001,2,1,102,1,1,"));
        assert_non_null(strstr(text, "\nexec_0001,3,1,101,1,1,"));
        free(text);
        rm_rf(dir);
    }
}

static void test_summary_nothing_to_do(void **state)
{
    (void)state;
    char *dir = make_tmpdir();
    char err[256], path[PATH_MAX];
    put(dir, "exec_0001/__iops_params.json", "{\"a\": 1}");
    put(dir, "exec_0001/repetition_001/stdout", "x");
    put(dir, "exec_0001/repetition_001/__iops_trace_running.5", "");
    assert_int_equal(pd_summary_write(dir, err, sizeof err), 0);
    snprintf(path, sizeof path, "%s/__iops_resource_summary.csv", dir);
    assert_int_not_equal(access(path, F_OK), 0);

    snprintf(path, sizeof path, "%s/missing", dir);
    assert_int_equal(pd_summary_write(path, err, sizeof err), -1);
    assert_non_null(strstr(err, path));
    rm_rf(dir);
}

static void test_repetition_metrics(void **state)
{
    (void)state;
    char *dir = make_tmpdir();
    mkdir_in(dir, "rep");
    char rep[PATH_MAX], err[256];
    snprintf(rep, sizeof rep, "%s/rep", dir);
    pd_summary_kvs kv = {0};
    assert_int_equal(pd_summary_repetition_metrics(rep, &kv, err, sizeof err), 0);
    assert_int_equal(kv.n, 0);
    put(dir, "rep/__iops_io_trace_a_1.csv", IO_HDR);
    put(dir, "rep/__iops_trace_a_1.csv", CPU_HDR);
    put(dir, "rep/__iops_trace_b_1.csv", CPU_HDR);
    mkdir_in(dir, "rep/__iops_trace_dir_1.csv"); /* not a file */
    assert_int_equal(pd_summary_repetition_metrics(rep, &kv, err, sizeof err), 3);
    static const char *const keys[] = {"nodes_traced", "samples_collected", "io_nodes_traced",
                                       "io_samples_collected"};
    expect_keys(&kv, keys, PD_ARRAY_LEN(keys));
    pd_summary_kvs_free(&kv);
    snprintf(rep, sizeof rep, "%s/none", dir);
    assert_int_equal(pd_summary_repetition_metrics(rep, &kv, err, sizeof err), -1);
    assert_non_null(strstr(err, rep));
    rm_rf(dir);
}

/* Spec: "An execution short enough that its sampler collected no usable
 * samples reports only the counter columns". The probe opens its trace at the
 * first row, so such a run leaves no trace file at all, only the sampler's
 * wrapper script: that repetition still gets a row, with the counters of each
 * sampler that ran set to 0 and every other cell empty. */
static void test_summary_short_execution(void **state)
{
    (void)state;
    char *dir = make_tmpdir();
    char err[256], path[PATH_MAX];
    put(dir, "exec_0001/__iops_params.json", "{\"n\": 1}");
    put(dir, "exec_0001/repetition_001/__iops_trace_h_1.csv",
        CPU_HDR "1.0,h,0,10.0,0.0,90.0,2097152,1048576\n"); /* 1 GiB, cpu 10 */
    put(dir, "exec_0001/repetition_001/__iops_runtime_sampler.sh", "#!/bin/sh\n");
    /* repetition 2: CPU, GPU and I/O samplers started, none wrote a row */
    put(dir, "exec_0001/repetition_002/__iops_runtime_sampler.sh", "#!/bin/sh\n");
    put(dir, "exec_0001/repetition_002/__iops_runtime_gpu_sampler.sh", "#!/bin/sh\n");
    put(dir, "exec_0001/repetition_002/__iops_runtime_io_sampler.sh", "#!/bin/sh\n");
    put(dir, "exec_0001/repetition_002/__iops_node_launcher.sh", "#!/bin/sh\n");
    /* repetition 3: never started (no wrapper, no trace): no row */
    put(dir, "exec_0001/repetition_003/stdout", "");

    char rep[PATH_MAX];
    snprintf(rep, sizeof rep, "%s/exec_0001/repetition_002", dir);
    pd_summary_kvs kv = {0};
    assert_int_equal(pd_summary_repetition_metrics(rep, &kv, err, sizeof err), 0);
    static const char *const keys[] = {"nodes_traced",    "samples_collected",
                                       "gpu_count",       "gpu_samples_collected",
                                       "io_nodes_traced", "io_samples_collected"};
    expect_keys(&kv, keys, PD_ARRAY_LEN(keys));
    for (size_t i = 0; i < kv.n; i++)
        assert_string_equal(kv.items[i].value, "0");
    pd_summary_kvs_free(&kv);

    assert_int_equal(pd_summary_write(dir, err, sizeof err), 1);
    snprintf(path, sizeof path, "%s/__iops_resource_summary.csv", dir);
    pd_csv *c = pd_csv_load(path, err, sizeof err);
    assert_non_null(c);
    assert_int_equal(c->nrows, 2);
    static const char *const row0[] = {
        "execution_id", "exec_0001", "repetition", "1", "n", "1",
        "mem_peak_gb", "1.000", "mem_avg_gb", "1.000", "mem_peak_per_node_gb", "1.000",
        "cpu_avg_pct", "10.00", "cpu_max_pct", "10.00", "cpu_imbalance_pct", "0.00",
        "nodes_traced", "1", "samples_collected", "1", "trace_duration_s", "0.00", NULL};
    expect_row(c, 0, row0);
    static const char *const row1[] = {
        "execution_id", "exec_0001", "repetition", "2", "n", "1",
        "nodes_traced", "0", "samples_collected", "0", "gpu_count", "0",
        "gpu_samples_collected", "0", "io_nodes_traced", "0", "io_samples_collected", "0", NULL};
    expect_row(c, 1, row1);
    pd_csv_free(c);
    unlink(path);

    /* wrappers but no sample file anywhere in the run: no summary (spec) */
    snprintf(path, sizeof path, "%s/exec_0001/repetition_001/__iops_trace_h_1.csv", dir);
    assert_int_equal(unlink(path), 0);
    assert_int_equal(pd_summary_write(dir, err, sizeof err), 0);
    snprintf(path, sizeof path, "%s/__iops_resource_summary.csv", dir);
    assert_int_not_equal(access(path, F_OK), 0);
    rm_rf(dir);
}

static void test_main(void **state)
{
    (void)state;
    char *dir = make_tmpdir();
    build_run(dir);
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/__iops_resource_summary.csv", dir);
    char opt[PATH_MAX + 16];
    snprintf(opt, sizeof opt, "--summarize=%s", dir);

    char *ok[] = {"bench", "--summarize", dir, NULL};
    assert_int_equal(pd_summary_main(3, ok), 0);
    assert_int_equal(access(path, F_OK), 0);
    unlink(path);
    char *ok2[] = {"bench", opt, NULL};
    assert_int_equal(pd_summary_main(2, ok2), 0);
    assert_int_equal(access(path, F_OK), 0);

    char *none[] = {"bench", NULL};
    assert_int_equal(pd_summary_main(1, none), 2);
    char *dangling[] = {"bench", "--summarize", NULL};
    assert_int_equal(pd_summary_main(2, dangling), 2);
    char *missing[] = {"bench", "--summarize", "/nonexistent/run_001", NULL};
    assert_int_equal(pd_summary_main(3, missing), 2);
    char file_arg[PATH_MAX];
    snprintf(file_arg, sizeof file_arg, "%s/results.csv", dir);
    char *file[] = {"bench", "--summarize", file_arg, NULL};
    assert_int_equal(pd_summary_main(3, file), 2);
    char *bogus[] = {"bench", "--bogus", dir, NULL};
    assert_int_equal(pd_summary_main(3, bogus), 2);
    char *two[] = {"bench", "--summarize", dir, dir, NULL};
    assert_int_equal(pd_summary_main(4, two), 2);
    rm_rf(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cpu_two_hosts),
        cmocka_unit_test(test_cpu_single_row_and_no_rows),
        cmocka_unit_test(test_gpu_single_host),
        cmocka_unit_test(test_gpu_multi_host_labels),
        cmocka_unit_test(test_gpu_no_rows_and_unused_na),
        cmocka_unit_test(test_trace_records_rfc4180),
        cmocka_unit_test(test_io_200mib_example),
        cmocka_unit_test(test_io_node_instants),
        cmocka_unit_test(test_io_lustre_gpfs_columns),
        cmocka_unit_test(test_py_float),
        cmocka_unit_test(test_params),
        cmocka_unit_test(test_summary_write),
        cmocka_unit_test(test_summary_gpu_column_order),
        cmocka_unit_test(test_summary_derived_per_repetition),
        cmocka_unit_test(test_summary_nothing_to_do),
        cmocka_unit_test(test_repetition_metrics),
        cmocka_unit_test(test_summary_short_execution),
        cmocka_unit_test(test_main),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
