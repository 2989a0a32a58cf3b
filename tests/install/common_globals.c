/* An application whose globals have the names a runtime is likely to use
 * internally (rt, plan, config, model, ...). Linked with the installed
 * libpaddiser, statically and dynamically, it must run the runtime through a
 * task instance and a sync point, and keep its own values: before symbols
 * were hidden, `rt` here was the runtime's state (a crash in pd_init) or a
 * duplicate definition at static link time. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <paddiser.h>

int rt = 42;
double plan[4] = {1, 2, 3, 4};
char config[64] = "application config";
void *model = &rt;
int objects = 7, tasks = 8, backend = 9, options = 10, tiers = 11, profile = 12;

int main(void)
{
    if (strcmp(pd_version(), PD_VERSION_STRING)) {
        fprintf(stderr, "common_globals: header %s, library %s\n", PD_VERSION_STRING, pd_version());
        return 1;
    }
    pd_options opt;
    pd_options_default(&opt);
    opt.backend = PD_BACKEND_SIM;
    opt.fast_capacity = 1 << 20;
    int rc = pd_init(&opt);
    if (rc != PD_OK) {
        fprintf(stderr, "common_globals: pd_init: %s\n", pd_strerror(rc));
        return 1;
    }
    size_t n = 1 << 18;
    double *a = calloc(n, sizeof *a);
    pd_access_hint h = {PD_PATTERN_STREAM, sizeof(double), 1, 0};
    int id = pd_object_register("a", a, n * sizeof *a, &h);
    if (!a || id < 0) {
        fprintf(stderr, "common_globals: pd_object_register: %s\n", pd_strerror(id));
        return 1;
    }
    for (int it = 0; it < 3; it++) {
        if ((rc = pd_task_begin(0)) != PD_OK)
            break;
        for (size_t i = 0; i < n; i++)
            a[i] += (double)i;
        if ((rc = pd_task_end(0)) != PD_OK || (rc = pd_sync_point()) != PD_OK)
            break;
    }
    if (rc != PD_OK) {
        fprintf(stderr, "common_globals: runtime call: %s\n", pd_strerror(rc));
        return 1;
    }
    pd_object_unregister(id);
    pd_finalize();
    free(a);
    if (rt != 42 || plan[3] != 4 || strcmp(config, "application config") || model != &rt ||
        objects + tasks + backend + options + tiers + profile != 57) {
        fprintf(stderr, "common_globals: the runtime wrote the application's globals\n");
        return 1;
    }
    printf("common_globals: ok (libpaddiser %s)\n", pd_version());
    return 0;
}
