/* libFuzzer harness: the study YAML loader (src/bench/config.c, also with
 * its machines: entry m merged in) and, for a
 * study that loads, the execution matrix and the rendering of its first
 * repetitions (src/bench/study.c). Relative files resolve against a
 * directory that does not exist; nothing is run or written. */
#include "fuzz_common.h"

#include "bench/config.h"
#include "bench/study.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_cstr(data, size);
    pd_bench_config cfg;
    pd_str errors = {0}, warnings = {0};
    if (pd_bench_config_parse(text, "fuzz.yaml", "/nonexistent-pd-fuzz", &cfg, &errors, &warnings) == 0) {
        pd_bench_matrix m;
        if (pd_bench_matrix_build(&cfg, "/nonexistent-pd-fuzz/run_001", &m, &errors, &warnings) == 0) {
            for (size_t e = 0; e < m.nexecs && e < 4; e++) {
                pd_bench_rendered r;
                if (pd_bench_render(&cfg, "/nonexistent-pd-fuzz/run_001", &m.execs[e], 1,
                                    "/nonexistent-pd-fuzz/paddiser-probe", &r, &errors) == 0)
                    pd_bench_rendered_free(&r, m.nvars);
            }
            pd_bench_matrix_free(&m);
        }
        pd_str ignored = {0};
        free(pd_bench_sink_path(&cfg, "/nonexistent-pd-fuzz/run_001", &ignored));
        pd_str_free(&ignored);
    }
    pd_bench_config_free(&cfg);
    pd_str_free(&errors);
    pd_str_free(&warnings);
    /* machines: the merge of an entry named m into the document, and the
     * merged study written back as YAML (--machine m --resolve) */
    pd_str resolved = {0};
    pd_bench_config_parse_machine(text, "fuzz.yaml", "/nonexistent-pd-fuzz", "m", &cfg, &errors, &warnings, &resolved);
    pd_bench_config_free(&cfg);
    pd_str_free(&resolved);
    pd_str_free(&errors);
    pd_str_free(&warnings);
    free(text);
    return 0;
}
