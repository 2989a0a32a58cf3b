/* libFuzzer harness: the profile store's reader (src/lib/profile_store.c),
 * as pd_init reads $PADDISER_PROFILE_STORE: the input is the file. A store
 * that loads is asked for each task's curve and m, and for the heat of
 * every input it names (the harness finds their signatures in the text),
 * against four registered objects; the runtime is not started. */
#include "fuzz_common.h"

#include <jansson.h>

#include "lib/profile_store.h"

static rt_object objects[4];

static void ask_heat(int task, const char *hex)
{
    if (strlen(hex) != 16 || strspn(hex, "0123456789abcdef") != 16)
        return;
    uint64_t input = strtoull(hex, NULL, 16);
    rt_hot *hot = NULL;
    double *acc = NULL;
    size_t nhot = 0, nacc = 0;
    int n = 0;
    if (rt_store_heat(task, input, &hot, &nhot, &acc, &nacc, &n)) {
        for (size_t i = 0; i < nhot; i++)
            if (hot[i].object < 0 || (size_t)hot[i].object >= rt.nobjects)
                abort(); /* the reader let an object through that is not registered */
        free(hot);
        free(acc);
    }
    (void)rt_store_instance_s(input);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!rt.objects) {
        for (size_t i = 0; i < 4; i++)
            objects[i].used = 1;
        rt.objects = objects;
        rt.nobjects = 4;
        setenv("PADDISER_QUIET", "1", 1);
    }
    const char *path = fuzz_write(0, "store.json", data, size);
    setenv("PADDISER_PROFILE_STORE", path, 1);
    rt_store_load();
    for (int task = 0; task < 4; task++) {
        (void)rt_store_find(task);
        double m, sd;
        (void)rt_store_mem_bound(task, &m, &sd);
    }
    /* the inputs the text names, for every task id it names */
    json_t *doc = json_loadb((const char *)data, size, 0, NULL);
    json_t *tasks = json_object_get(doc, "tasks");
    for (size_t i = 0; i < json_array_size(tasks); i++) {
        json_t *tk = json_array_get(tasks, i), *heat = json_object_get(tk, "heat");
        json_t *id = json_object_get(tk, "task");
        int task = json_is_integer(id) ? (int)json_integer_value(id) : 0;
        for (size_t k = 0; k < json_array_size(heat); k++) {
            const char *hex = json_string_value(json_object_get(json_array_get(heat, k), "input"));
            if (hex)
                ask_heat(task, hex);
        }
    }
    json_decref(doc);
    rt_store_save(); /* no task ran: nothing is written; the state is freed */
    fuzz_remove(0);
    return 0;
}
