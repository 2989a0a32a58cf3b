/* libFuzzer harness: the model loader (src/lib/model.c, model_forest.c,
 * model_ubjson.c), from memory as pd_model_load_buffer reads a model file
 * (xgboost JSON or UBJSON). A model that loads is asked for predictions,
 * which walk the trees it built. */
#include "fuzz_common.h"

#include "lib/model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[256];
    pd_model *m = pd_model_load_buffer(data, size, "fuzz", err, sizeof err);
    if (m) {
        double feat[PD_NFEATURES];
        for (size_t i = 0; i < PD_NFEATURES; i++)
            feat[i] = (double)i * 0.5;
        (void)pd_model_f(m, feat, 0.5);
        (void)pd_model_predict(m, 1.0, 2.0, feat, 0.25);
        pd_model_free(m);
    }
    return 0;
}
