/* NVML through dlopen: the GPU sampler's first choice on NVIDIA nodes, since
 * it reads the same counters nvidia-smi prints without a fork+exec per sample.
 * No build dependency: the few types and functions used are declared here from
 * NVIDIA's NVML API reference (nvml.h): nvmlReturn_t with NVML_SUCCESS = 0,
 * nvmlTemperatureSensors_t NVML_TEMPERATURE_GPU = 0, nvmlClockType_t
 * NVML_CLOCK_SM = 1 and NVML_CLOCK_MEM = 2, nvmlUtilization_t {gpu, memory},
 * nvmlMemory_t {total, free, used} in bytes, power in milliwatts. */
#include "probe/gpu_source.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/csv.h"

typedef int nvml_ret;
typedef struct nvml_device_st *nvml_device;
typedef struct {
    unsigned int gpu, memory;
} nvml_utilization;
typedef struct {
    unsigned long long total, free, used;
} nvml_memory;

enum { NVML_OK = 0, NVML_TEMP_GPU = 0, NVML_CLK_SM = 1, NVML_CLK_MEM = 2 };
#define NVML_NAME_LEN 96 /* NVML_DEVICE_NAME_V2_BUFFER_SIZE */

struct pd_gpu_nvml {
    void *lib;
    unsigned int count;
    nvml_ret (*init)(void);
    nvml_ret (*shutdown)(void);
    nvml_ret (*get_count)(unsigned int *);
    nvml_ret (*get_handle)(unsigned int, nvml_device *);
    nvml_ret (*get_name)(nvml_device, char *, unsigned int);
    nvml_ret (*get_util)(nvml_device, nvml_utilization *);
    nvml_ret (*get_mem)(nvml_device, nvml_memory *);
    nvml_ret (*get_temp)(nvml_device, int, unsigned int *);
    nvml_ret (*get_power)(nvml_device, unsigned int *);
    nvml_ret (*get_clock)(nvml_device, int, unsigned int *);
};

/* POSIX's way to turn dlsym's object pointer into a function pointer. */
#define RESOLVE(n, field, sym)                                                                     \
    (*(void **)(&(n)->field) = dlsym((n)->lib, sym), (n)->field != NULL)

struct pd_gpu_nvml *pd_gpu_nvml_open(const char *lib)
{
    if (!lib)
        lib = getenv("PADDISER_NVML_LIB");
    if (!lib || !*lib)
        lib = "libnvidia-ml.so.1";
    struct pd_gpu_nvml *n = calloc(1, sizeof *n);
    if (!n)
        return NULL;
    n->lib = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (!n->lib) {
        free(n);
        return NULL;
    }
    bool ok = RESOLVE(n, init, "nvmlInit_v2") && RESOLVE(n, shutdown, "nvmlShutdown") &&
              RESOLVE(n, get_count, "nvmlDeviceGetCount_v2") &&
              RESOLVE(n, get_handle, "nvmlDeviceGetHandleByIndex_v2") &&
              RESOLVE(n, get_name, "nvmlDeviceGetName") &&
              RESOLVE(n, get_util, "nvmlDeviceGetUtilizationRates") &&
              RESOLVE(n, get_mem, "nvmlDeviceGetMemoryInfo") &&
              RESOLVE(n, get_temp, "nvmlDeviceGetTemperature") &&
              RESOLVE(n, get_power, "nvmlDeviceGetPowerUsage") &&
              RESOLVE(n, get_clock, "nvmlDeviceGetClockInfo");
    if (!ok || n->init() != NVML_OK) {
        dlclose(n->lib);
        free(n);
        return NULL;
    }
    if (n->get_count(&n->count) != NVML_OK || n->count == 0) {
        pd_gpu_nvml_close(n);
        return NULL;
    }
    return n;
}

static void put_uint(pd_str *out, bool ok, unsigned long long v)
{
    if (ok)
        pd_str_printf(out, ",%llu", v);
    else
        pd_str_append(out, ",[N/A]");
}

int pd_gpu_nvml_sample(struct pd_gpu_nvml *n, double ts, const char *host, pd_str *out)
{
    int rows = 0;
    for (unsigned int i = 0; i < n->count; i++) {
        nvml_device d;
        if (n->get_handle(i, &d) != NVML_OK)
            continue; /* e.g. a GPU that fell off the bus: nvidia-smi skips it too */
        char raw[NVML_NAME_LEN] = "", name[NVML_NAME_LEN + 16];
        if (n->get_name(d, raw, sizeof raw) != NVML_OK)
            raw[0] = '\0';
        raw[sizeof raw - 1] = '\0';
        pd_gpu_vendor_name(name, sizeof name, "NVIDIA", raw);
        nvml_utilization u = {0};
        nvml_memory m = {0};
        unsigned int temp = 0, mw = 0, sm = 0, mem = 0;
        bool u_ok = n->get_util(d, &u) == NVML_OK;
        bool m_ok = n->get_mem(d, &m) == NVML_OK;
        bool t_ok = n->get_temp(d, NVML_TEMP_GPU, &temp) == NVML_OK;
        bool p_ok = n->get_power(d, &mw) == NVML_OK;
        bool sm_ok = n->get_clock(d, NVML_CLK_SM, &sm) == NVML_OK;
        bool mem_ok = n->get_clock(d, NVML_CLK_MEM, &mem) == NVML_OK;
        pd_str_printf(out, "%.3f,%s,%u,", ts, host, i);
        pd_csv_put_field(out, name);
        put_uint(out, u_ok, u.gpu);
        put_uint(out, u_ok, u.memory);
        /* nvidia-smi's memory.used / memory.total: MiB, rounded down */
        put_uint(out, m_ok, m.used >> 20);
        put_uint(out, m_ok, m.total >> 20);
        put_uint(out, t_ok, temp);
        if (p_ok)
            pd_str_printf(out, ",%.2f", mw / 1000.0); /* power.draw: W, 2 decimals */
        else
            pd_str_append(out, ",[N/A]");
        put_uint(out, sm_ok, sm);
        put_uint(out, mem_ok, mem);
        pd_str_append(out, "\n");
        rows++;
    }
    return rows;
}

void pd_gpu_nvml_close(struct pd_gpu_nvml *n)
{
    if (!n)
        return;
    n->shutdown();
    dlclose(n->lib);
    free(n);
}
