/* Tier discovery (src/lib/tiers.c) and `paddiser tiers` on fixture sysfs
 * trees and on this machine's real /sys. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "test_tiers_fixture.h"

#include <errno.h>
#include <fcntl.h>

#include "cli/commands.h"
#include "lib/backend.h"
#include "paddiser_tiers.h"

static void test_single_node(void **state)
{
    (void)state;
    fx_single_node();
    pd_tiers t;
    char err[256];
    assert_int_equal(pd_tiers_discover(&t, err, sizeof err), 0);
    assert_int_equal(t.nnodes, 1);
    assert_int_equal(t.numa_exposed, 1);
    assert_int_equal(t.has_tiering, 1);
    assert_int_equal(t.ntiers, 1);
    assert_int_equal(t.node[0].ncpus, 2);
    assert_int_equal(t.node[0].cpuless, 0);
    assert_int_equal(t.node[0].tier, 4);
    assert_true(t.node[0].mem_total == 4ULL * 1024 * 1024 * 1024);
    assert_true(t.node[0].mem_free == 2ULL * 1024 * 1024 * 1024);
    assert_int_equal(t.node[0].has_hmat, 0);
    assert_int_equal(t.fast_node, 0);
    assert_int_equal(t.slow_node, -1);
    assert_string_equal(t.reason, "no slow tier: single memory tier (node 0)");
}

static void test_two_node_tiers_and_hmat(void **state)
{
    (void)state;
    fx_two_node();
    pd_tiers t;
    char err[256];
    assert_int_equal(pd_tiers_discover(&t, err, sizeof err), 0);
    assert_int_equal(t.nnodes, 2);
    assert_int_equal(t.ntiers, 2);
    const pd_tier_node *n0 = pd_tiers_node(&t, 0), *n1 = pd_tiers_node(&t, 1);
    assert_non_null(n0);
    assert_non_null(n1);
    assert_null(pd_tiers_node(&t, 2));
    assert_int_equal(n0->ncpus, 4);
    assert_int_equal(n1->ncpus, 0);
    assert_int_equal(n1->cpuless, 1);
    assert_int_equal(n0->tier, 4);
    assert_int_equal(n1->tier, 22);
    assert_int_equal(n1->has_hmat, 1);
    assert_int_equal(n0->read_latency_ns, 100);
    assert_int_equal(n0->write_latency_ns, 110);
    assert_int_equal(n1->read_latency_ns, 350);
    assert_int_equal(n1->write_latency_ns, 420);
    assert_int_equal(n1->read_bw_mbps, 5120);
    assert_int_equal(n1->write_bw_mbps, 3072);
    assert_true(n1->mem_total == 16ULL * 1024 * 1024 * 1024);
    assert_int_equal(t.fast_node, 0);
    assert_int_equal(t.slow_node, 1);
    assert_string_equal(t.reason, "node 1 is in memory tier 22, node 0 in tier 4");
    assert_true(pd_tiers_is_slower(n1, n0));
    assert_false(pd_tiers_is_slower(n0, n1));
}

/* Linux 6.1 puts a firmware-described CPU-less node in the DRAM tier: HMAT
 * latency decides (what the QEMU guest shows). */
static void test_same_tier_hmat_decides(void **state)
{
    (void)state;
    fx_put("devices/system/node/online", "0-1\n");
    fx_node(0, "0\n", 512 * 1024);
    fx_node(1, "\n", 512 * 1024);
    fx_tier(4, "0-1\n");
    fx_hmat(0, "20\n", "20\n", "20480\n", "20480\n");
    fx_hmat(1, "200\n", "300\n", "4096\n", "2048\n");
    pd_tiers t;
    char err[256];
    assert_int_equal(pd_tiers_discover(&t, err, sizeof err), 0);
    assert_int_equal(t.ntiers, 1);
    assert_int_equal(t.slow_node, 1);
    assert_string_equal(t.reason, "node 1 HMAT read latency 200 ns > node 0's 20 ns");
}

static void test_cpuless_without_tier_or_hmat(void **state)
{
    (void)state;
    fx_put("devices/system/node/online", "0-1\n");
    fx_node(0, "0-7\n", 1024 * 1024);
    fx_node(1, "", 1024 * 1024);
    pd_tiers t;
    assert_int_equal(pd_tiers_discover(&t, NULL, 0), 0);
    assert_int_equal(t.has_tiering, 0);
    assert_int_equal(t.node[1].tier, -1);
    assert_int_equal(t.slow_node, 1);
    assert_non_null(strstr(t.reason, "CPU-less"));
}

/* Two sockets, both with CPUs and in one tier: not a tiered machine. */
static void test_two_sockets_no_slow_tier(void **state)
{
    (void)state;
    fx_put("devices/system/node/online", "0-1\n");
    fx_node(0, "0-3\n", 1024 * 1024);
    fx_node(1, "4-7\n", 1024 * 1024);
    fx_tier(4, "0-1\n");
    pd_tiers t;
    assert_int_equal(pd_tiers_discover(&t, NULL, 0), 0);
    assert_int_equal(t.slow_node, -1);
    assert_non_null(strstr(t.reason, "no slow tier: 2 memory nodes"));
}

/* A CPU-less node without memory (e.g. an empty CXL window) is no slow tier;
 * a slow CPU-less node is preferred over a faster one when ranking nodes. */
static void test_memoryless_node_skipped(void **state)
{
    (void)state;
    fx_put("devices/system/node/online", "0-2\n");
    fx_node(0, "0-1\n", 1024 * 1024);
    fx_node(1, "\n", 0);
    fx_node(2, "\n", 1024 * 1024);
    fx_tier(4, "0\n");
    fx_tier(22, "1-2\n");
    pd_tiers t;
    assert_int_equal(pd_tiers_discover(&t, NULL, 0), 0);
    assert_int_equal(t.nnodes, 3);
    assert_int_equal(t.slow_node, 2);
}

static void test_no_numa_sysfs(void **state)
{
    (void)state;
    pd_tiers t;
    assert_int_equal(pd_tiers_discover(&t, NULL, 0), 0); /* empty root */
    assert_int_equal(t.numa_exposed, 0);
    assert_int_equal(t.nnodes, 1);
    assert_int_equal(t.slow_node, -1);
    assert_non_null(strstr(t.reason, "no slow tier"));
}

static void expect_error(const char *needle)
{
    pd_tiers t;
    char err[512];
    assert_int_equal(pd_tiers_discover(&t, err, sizeof err), -1);
    if (!strstr(err, needle))
        fail_msg("error '%s' does not name '%s'", err, needle);
}

static void test_malformed_files(void **state)
{
    (void)state;
    fx_two_node();
    fx_put("devices/system/node/node1/cpulist", "0-x\n");
    expect_error("node1/cpulist: malformed CPU list");
    fx_put("devices/system/node/node1/cpulist", "3-1\n");
    expect_error("node1/cpulist");
    fx_put("devices/system/node/node1/cpulist", "0-2000000000\n");
    expect_error("node1/cpulist");
    fx_put("devices/system/node/node1/cpulist", "0-1 junk\n");
    expect_error("node1/cpulist");
    fx_put("devices/system/node/node1/cpulist", "\n");

    fx_put("devices/system/node/node1/access0/initiators/read_latency", "fast\n");
    expect_error("node1/access0/initiators/read_latency: not a number");
    fx_put("devices/system/node/node1/access0/initiators/read_latency", "350\n");

    fx_put("devices/system/node/node0/meminfo", "garbage\n");
    expect_error("node0/meminfo");
    fx_node(0, "0-3\n", 1024);

    fx_put("devices/virtual/memory_tiering/memory_tier22/nodelist", "1,,\n");
    expect_error("memory_tier22/nodelist: malformed node list");
    fx_tier(22, "1\n");

    fx_put("devices/system/node/online", "\n");
    expect_error("online: malformed node list");
    fx_put("devices/system/node/online", "0-2\n"); /* node2 directory missing */
    expect_error("node2/cpulist: cannot read");
    fx_put("devices/system/node/online", "0-1\n");

    pd_tiers t;
    assert_int_equal(pd_tiers_discover(&t, NULL, 0), 0); /* repaired */
    assert_int_equal(t.slow_node, 1);
}

/* Runs `paddiser tiers` with stdout captured into buf. */
static int run_cli(int argc, char **argv, char *buf, size_t len)
{
    char path[] = "/tmp/pd_tiers_out_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    fflush(stdout);
    int saved = dup(1);
    dup2(fd, 1);
    int rc = cmd_tiers(argc, argv);
    fflush(stdout);
    dup2(saved, 1);
    close(saved);
    lseek(fd, 0, SEEK_SET);
    ssize_t n = read(fd, buf, len - 1);
    buf[n > 0 ? n : 0] = '\0';
    close(fd);
    unlink(path);
    return rc;
}

static void test_cli_output(void **state)
{
    (void)state;
    char out[4096];
    char *argv[] = {"tiers", NULL};
    fx_single_node();
    assert_int_equal(run_cli(1, argv, out, sizeof out), 0);
    assert_non_null(strstr(out, "no slow tier: single memory tier (node 0)\n"));

    fx_two_node();
    assert_int_equal(run_cli(1, argv, out, sizeof out), 0);
    assert_non_null(strstr(out, "fast node 0, slow node 1: node 1 is in memory tier 22, node 0 in tier 4"));
    assert_non_null(strstr(out, "1     none  16.0 GiB   8.0 GiB    22    350      420       5120     3072     slow"));

    char *bad[] = {"tiers", "--bogus", NULL};
    assert_int_equal(run_cli(2, bad, out, sizeof out), 2);
    fx_put("devices/system/node/node1/cpulist", "z\n");
    assert_int_equal(run_cli(1, argv, out, sizeof out), 1);
}

/* This machine's real /sys: discovery works; no slow tier means the numa
 * backend refuses with ENODEV (and a tiered machine gets one). */
static void test_real_sysfs(void **state)
{
    (void)state;
    unsetenv("PADDISER_SYS_ROOT");
    pd_tiers t;
    char err[512];
    assert_int_equal(pd_tiers_discover(&t, err, sizeof err), 0);
    assert_true(t.nnodes >= 1);
    errno = 0;
    pd_backend *b = pd_backend_numa_create(-1, -1, 0);
    if (t.slow_node < 0) {
        assert_null(b);
        assert_int_equal(errno, ENODEV);
    } else {
        assert_non_null(b);
        b->destroy(b);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_single_node, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_two_node_tiers_and_hmat, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_same_tier_hmat_decides, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_cpuless_without_tier_or_hmat, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_two_sockets_no_slow_tier, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_memoryless_node_skipped, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_no_numa_sysfs, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_malformed_files, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_cli_output, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_real_sysfs, fx_setup, fx_teardown),
    };
    return cmocka_run_group_tests_name("tiers", tests, NULL, NULL);
}
