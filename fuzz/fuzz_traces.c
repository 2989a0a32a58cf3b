/* libFuzzer harness: the __iops_trace CSV readers, through the run summary's
 * metrics (src/bench/summary.c) and the HTML report's time series
 * (src/report/data.c: pd_rep_traces_load). Both take a repetition
 * directory, so the input goes to one trace file in the private temporary
 * directory: the first byte picks the sampler (CPU, GPU or I/O trace), the
 * rest is the file. */
#include "fuzz_common.h"

#include "bench/summary.h"
#include "report/data.h"

static const char *const names[] = {
    "__iops_trace_node01_4242.csv",
    "__iops_gpu_trace_node01_4242.csv",
    "__iops_io_trace_node01_4242.csv",
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    int kind = data[0] % 3;
    const char *path = fuzz_write(0, names[kind], data + 1, size - 1);
    const char *dir = fuzz_tmpdir();

    pd_summary_kvs kv = {0};
    const char *paths[] = {path};
    if (kind == 0)
        pd_summary_cpu_metrics(paths, 1, &kv);
    else if (kind == 1)
        pd_summary_gpu_metrics(paths, 1, &kv);
    else
        pd_summary_io_metrics(paths, 1, &kv);
    pd_summary_kvs_free(&kv);

    char err[256];
    kv = (pd_summary_kvs){0};
    pd_summary_repetition_metrics(dir, &kv, err, sizeof err);
    pd_summary_kvs_free(&kv);

    pd_rep_traces tr;
    pd_rep_traces_load(dir, &tr);
    pd_rep_traces_free(&tr);
    pd_rep_traces_load_reduced(dir, 4, &tr);
    pd_rep_traces_free(&tr);
    (void)pd_rep_dir_has_traces(dir);

    fuzz_remove(0);
    return 0;
}
