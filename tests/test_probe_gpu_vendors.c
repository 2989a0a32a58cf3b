/* The GPU sources' pure formatting (src/probe/gpu_vendors.c): recorded
 * amd-smi, rocm-smi and xpu-smi output (tests/fixtures/probe/gpu/, sources in
 * its README) to trace rows, with the vendor in gpu_name and every value the
 * tool does not print left empty. The sampler runs with stub tools and a stub
 * NVML in tests/probe_gpu_vendors.sh. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "probe/gpu_source.h"

static char *fx(const char *name)
{
    const char *t = getenv("TESTS_DIR");
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/fixtures/probe/gpu/%s", t && *t ? t : "tests", name);
    char *s = pd_read_file(path, NULL);
    if (!s)
        fail_msg("missing fixture %s", path);
    return s;
}

static void test_vendor_name(void **state)
{
    (void)state;
    char b[64];
    pd_gpu_vendor_name(b, sizeof b, "AMD", "Radeon RX 7900 XT");
    assert_string_equal(b, "AMD Radeon RX 7900 XT");
    pd_gpu_vendor_name(b, sizeof b, "AMD", "AMD Instinct MI300X");
    assert_string_equal(b, "AMD Instinct MI300X");
    pd_gpu_vendor_name(b, sizeof b, "Intel", "Intel(R) Graphics [0x56c0]");
    assert_string_equal(b, "Intel(R) Graphics [0x56c0]");
    pd_gpu_vendor_name(b, sizeof b, "NVIDIA", "Tesla V100-SXM2-16GB");
    assert_string_equal(b, "NVIDIA Tesla V100-SXM2-16GB");
    pd_gpu_vendor_name(b, sizeof b, "Intel", "");
    assert_string_equal(b, "Intel GPU");
    pd_gpu_vendor_name(b, sizeof b, "AMD", "N/A");
    assert_string_equal(b, "AMD GPU");
}

/* amd-smi metric -m --csv as AMD published it: VRAM in MB (MiB) passes
 * through; usage, temperature, power and clocks were not asked, so empty. */
static void test_amd_smi_recorded(void **state)
{
    (void)state;
    char *csv = fx("amd-smi-metric-mem.csv");
    pd_str out = {0};
    assert_int_equal(pd_gpu_amd_smi_format(csv, NULL, 12.5, "n1", &out), 1);
    assert_string_equal(out.data, "12.500,n1,0,AMD GPU,,,905,16368,,,,\n");
    pd_str_free(&out);
    free(csv);
}

/* Not a recording: a constructed table exercising what recordings show of
 * newer amd-smi (quoted list cells with commas, N/A, gfx_0_clk names) and a
 * market_name from `amd-smi static --asic --csv`. */
static void test_amd_smi_columns(void **state)
{
    (void)state;
    pd_gpu_names names = {0};
    pd_gpu_amd_smi_names("gpu,market_name,vendor_id\n1,\"AMD Instinct MI300X\",0x1002\n", &names);
    assert_true(names.known[1]);
    assert_false(names.known[0]);
    /* A warning line mentioning gpu before the table is not the header. */
    const char *csv = "warning: gpu metrics partially unavailable\n"
                      "gpu,gfx_activity,umc_activity,vcn_activity,socket_power,gfx_0_clk,mem_0_clk,edge,hotspot,"
                      "total_vram,used_vram\n"
                      "0,95,80,\"['N/A', 'N/A']\",N/A,2100,1300,39,N/A,196592,17153\n"
                      "1,0,N/A,\"[0, 0]\",141,132,900,N/A,38,196592,284\n";
    pd_str out = {0};
    assert_int_equal(pd_gpu_amd_smi_format(csv, &names, 1, "h", &out), 2);
    assert_string_equal(out.data, "1.000,h,0,AMD GPU,95,80,17153,196592,39,,2100,1300\n"
                                  "1.000,h,1,AMD Instinct MI300X,0,,284,196592,38,141,132,900\n");
    pd_str_free(&out);
}

/* rocm-smi --showproductname --showuse --showmeminfo vram --csv (marimo
 * issue #9237): bytes become MiB, Card Series gets the vendor. */
static void test_rocm_smi_recorded(void **state)
{
    (void)state;
    char *csv = fx("rocm-smi.csv");
    pd_str out = {0};
    assert_int_equal(pd_gpu_rocm_smi_format(csv, 3, "n1", &out), 1);
    assert_string_equal(out.data, "3.000,n1,0,AMD Radeon RX 7900 XT,0,,26,20464,,,,\n");
    pd_str_free(&out);
    /* The tool's banner lines before the table are skipped; nothing usable is
     * no row. */
    assert_int_equal(pd_gpu_rocm_smi_format("WARNING: AMD GPU device(s) is/are in a low-power state.\n", 3, "n1",
                                            &out),
                     0);
    assert_int_equal(pd_gpu_rocm_smi_format(NULL, 3, "n1", &out), 0);
    pd_str_free(&out);
    free(csv);
}

/* xpu-smi dump -d 0,1,2,3,4,5 -m 0,1,2,3,4,5 on Aurora's Max 1550 (intel
 * xpumanager issue #98): one row per device, the last printed; N/A
 * utilisation stays empty; no memory clock, memory use or bandwidth. */
static void test_xpu_smi_recorded(void **state)
{
    (void)state;
    char *dump = fx("xpu-smi-dump-max1550.csv");
    char *disc = fx("xpu-smi-discovery.csv");
    pd_gpu_names names = {0};
    pd_gpu_xpu_smi_names(disc, &names);
    assert_true(names.known[0] && names.known[1] && !names.known[2]);
    pd_str out = {0};
    assert_int_equal(pd_gpu_xpu_smi_format(dump, &names, 5, "x1", &out), 6);
    assert_string_equal(out.data, "5.000,x1,0,Intel(R) Graphics [0x56c0],,,,,35.50,293.78,1600.00,\n"
                                  "5.000,x1,1,Intel(R) Graphics [0x56c0],,,,,38.50,287.05,1600.00,\n"
                                  "5.000,x1,2,Intel GPU,,,,,37.00,281.70,1600.00,\n"
                                  "5.000,x1,3,Intel GPU,,,,,38.00,293.61,1600.00,\n"
                                  "5.000,x1,4,Intel GPU,,,,,42.50,292.31,1600.00,\n"
                                  "5.000,x1,5,Intel GPU,,,,,41.00,284.77,1600.00,\n");
    pd_str_free(&out);
    free(dump);
    free(disc);

    /* The user guide's `xpu-smi dump -d 0 -m 0,1,2 -i 1 -n 5`. */
    dump = fx("xpu-smi-dump-guide.csv");
    assert_int_equal(pd_gpu_xpu_smi_format(dump, NULL, 5, "x1", &out), 1);
    assert_string_equal(out.data, "5.000,x1,0,Intel GPU,0.00,,,,,14.61,0,\n");
    pd_str_free(&out);
    free(dump);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vendor_name),      cmocka_unit_test(test_amd_smi_recorded),
        cmocka_unit_test(test_amd_smi_columns),  cmocka_unit_test(test_rocm_smi_recorded),
        cmocka_unit_test(test_xpu_smi_recorded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
