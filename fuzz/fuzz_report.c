/* libFuzzer harness: the HTML report's readers of a run's files
 * (src/report/data.c): results.csv (pd_rep_table_load and the lookups the
 * report makes on it) and paddiser_tasks.csv (pd_rep_tasks_load). Both take
 * a path: the input is written to a file in the private temporary
 * directory. The first byte picks the reader, the rest is the file. */
#include "fuzz_common.h"

#include "report/data.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    char err[256];
    if (data[0] % 2 == 0) {
        const char *path = fuzz_write(0, "results.csv", data + 1, size - 1);
        char *vars[] = {"nodes", "ppn", "block_size", "transfer_size"};
        pd_rep_table t;
        if (pd_rep_table_load(path, vars, 4, &t, err, sizeof err) == 0) {
            (void)pd_rep_table_metric(&t, "bw");
            int v = pd_rep_table_var(&t, "nodes");
            if (v >= 0) {
                char **vals;
                bool numeric;
                size_t n = pd_rep_distinct(&t, (size_t)v, &vals, &numeric);
                (void)n;
                pd_rep_names_free(vals);
            }
            pd_rep_table_free(&t);
        }
        char **common;
        bool flat;
        (void)pd_rep_common_prefix_vars(path, path, &common, &flat);
        pd_rep_names_free(common);
    } else {
        const char *path = fuzz_write(0, "paddiser_tasks.csv", data + 1, size - 1);
        pd_rep_tasks tk;
        if (pd_rep_tasks_load(path, &tk, err, sizeof err) == 0)
            pd_rep_tasks_free(&tk);
    }
    fuzz_remove(0);
    return 0;
}
