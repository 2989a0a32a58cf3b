/* Exit outputs of `paddiser run` (PADDISER_RUN_OUT=DIR, a directory the
 * user named): DIR/tasks.csv (the runtime's per-task CSV, through
 * PADDISER_TASKS_CSV), DIR/plan.log (one line per sync point) and
 * DIR/objects.csv (the objects the allocation hooks registered). Every
 * process of the run appends to the same files (MPI ranks, exec'd
 * children): each line carries its pid, each file is written with
 * O_APPEND and never follows a symbolic link. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "paddiser.h"
#include "common/util.h"
#include "preload/preload.h"
#include "preload/preload_site.h"

static char out_dir[PATH_MAX];
static int plan_fd = -1;
static int tiers_fd = -1; /* PADDISER_RUN_TIERS=1: DIR/tiers.csv */

static void write_tiers(int instance);

static int open_append(const char *name)
{
    char path[PATH_MAX];
    if (pd_path_join(path, sizeof path, out_dir, name) != 0) {
        pdp_log(0, "%s/%s: path too long", out_dir, name);
        return -1;
    }
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0)
        pdp_log(0, "cannot write %s: %s", path, strerror(errno));
    return fd;
}

void pdp_out_setup(void)
{
    const char *dir = getenv("PADDISER_RUN_OUT");
    if (!dir || !*dir)
        return;
    if (strlen(dir) >= sizeof out_dir) {
        pdp_log(0, "PADDISER_RUN_OUT is too long: no outputs written");
        return;
    }
    memcpy(out_dir, dir, strlen(dir) + 1);
    const char *csv = getenv("PADDISER_TASKS_CSV");
    char path[PATH_MAX];
    if ((!csv || !*csv) && pd_path_join(path, sizeof path, out_dir, "tasks.csv") == 0)
        setenv("PADDISER_TASKS_CSV", path, 1);
    plan_fd = open_append("plan.log");
    const char *tiers = getenv("PADDISER_RUN_TIERS");
    if (tiers && !strcmp(tiers, "1"))
        tiers_fd = open_append("tiers.csv");
}

static void write_all(int fd, const char *s, size_t n)
{
    while (n) {
        ssize_t w = write(fd, s, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return;
        s += w;
        n -= (size_t)w;
    }
}

/* The instance that just ended, as measured: its slowest task's time
 * (pd_task_profile.last_time) among the planned tasks (pd_plan_query).
 * Its tasks are those whose instance count moved since the last line: the
 * regions of a program run different tasks, and a task that sat this
 * instance out still holds the time of an older one. Task ids past SEEN_MAX (never under the OpenMP hooks, whose
 * ids stay below the runtime's 4096 slots) are left out. NaN when no task
 * ran. With makespan_s of the line before, it is how well the runtime
 * predicted this program (bench/gapbs_pr.sh). */
#define SEEN_MAX 4096
static int seen[SEEN_MAX];
static pthread_mutex_t seen_lock = PTHREAD_MUTEX_INITIALIZER;

static double measured_makespan(int ntasks)
{
    if (ntasks <= 0)
        return NAN;
    pd_task_plan *tp = malloc((size_t)ntasks * sizeof *tp);
    if (!tp)
        return NAN;
    double slowest = NAN;
    pthread_mutex_lock(&seen_lock);
    int n = pd_plan_query(tp, ntasks, NULL);
    for (int i = 0; i < n && i < ntasks; i++) { /* more may have come since the count */
        pd_task_profile p;
        int id = tp[i].task;
        if (id < 0 || id >= SEEN_MAX || pd_task_profile_get(id, &p) != PD_OK || p.instances == seen[id])
            continue;
        seen[id] = p.instances;
        if (!(slowest >= p.last_time))
            slowest = p.last_time;
    }
    pthread_mutex_unlock(&seen_lock);
    free(tp);
    return slowest;
}

void pdp_after_sync(void)
{
    if (plan_fd < 0)
        return;
    int was_busy = pdp_busy, saved = errno;
    pdp_busy = 1;
    pd_profile_info pi;
    double makespan = NAN;
    if (pd_profile_info_get(&pi) == PD_OK && pi.initialized) {
        int ntasks = pd_plan_query(NULL, 0, &makespan);
        double measured = measured_makespan(ntasks);
        char line[512];
        int n = snprintf(line, sizeof line,
                         "pid=%ld instance=%d tasks=%d makespan_s=%.6g moved_bytes=%zu moved_pages=%zu "
                         "failed_pages=%zu demoted_bytes=%zu decided=%d kept=%d hot_first=%d model_s=%.6g "
                         "hot_first_s=%.6g backend=%s sampler=%s measured_s=%.6g instances_sampled=%d "
                         "sampling_cost_s=%.6g\n",
                         (long)getpid(), pi.instances, ntasks < 0 ? 0 : ntasks, ntasks < 0 ? NAN : makespan,
                         pi.bytes_moved, pi.pages_moved, pi.pages_failed, pi.bytes_demoted, pi.plan_decided,
                         pi.plan_kept, pi.plan_hot_first, pi.plan_model_s, pi.plan_hot_first_s, pi.backend,
                         pi.sampler, measured, pi.instances_sampled, pi.sampling_cost_s);
        if (n > 0)
            write_all(plan_fd, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
        write_tiers(pi.instances);
    }
    pdp_busy = was_busy;
    errno = saved;
}

/* ---- objects ------------------------------------------------------------ */

typedef struct {
    char name[PDP_NAME_MAX];
    size_t bytes;      /* at its last registration */
    int registrations; /* blocks that were this object (one per input) */
} object_rec;

static pthread_mutex_t objects_lock = PTHREAD_MUTEX_INITIALIZER;
static object_rec *objects;
static int nobjects;

void pdp_out_object(int id, const char *name, size_t size)
{
    if (!*out_dir || id < 0)
        return;
    pthread_mutex_lock(&objects_lock);
    if (id >= nobjects) {
        object_rec *n = realloc(objects, (size_t)(id + 1) * sizeof *n);
        if (n) {
            memset(n + nobjects, 0, (size_t)(id + 1 - nobjects) * sizeof *n);
            objects = n;
            nobjects = id + 1;
        }
    }
    if (id < nobjects) {
        snprintf(objects[id].name, sizeof objects[id].name, "%s", name);
        objects[id].bytes = size;
        objects[id].registrations++;
    }
    pthread_mutex_unlock(&objects_lock);
}

/* PADDISER_RUN_TIERS=1: after each sync point, where the backend holds
 * every registered object's pages (pd_object_page_tiers: move_pages
 * queries with the numa backend) and the fast bytes the plan gave all
 * tasks, one row per object: a check that the pages are where the plan
 * put them (the two-node guest, make check-numa), not for production runs
 * (a query per page at every sync point). */
static void write_tiers(int instance)
{
    if (tiers_fd < 0)
        return;
    pd_task_plan plan[256];
    int nt = pd_plan_query(plan, 256, NULL);
    size_t planned = 0;
    for (int t = 0; t < nt && t < 256; t++)
        planned += plan[t].dram_bytes;
    pthread_mutex_lock(&objects_lock);
    for (int i = 0; i < nobjects; i++) {
        if (!objects[i].registrations)
            continue;
        int pages = pd_object_page_tiers(i, NULL, 0);
        if (pages <= 0)
            continue; /* freed, or no backend to ask */
        int *tier = malloc((size_t)pages * sizeof *tier);
        if (!tier || pd_object_page_tiers(i, tier, (size_t)pages) != pages) {
            free(tier);
            continue;
        }
        size_t fast = 0, slow = 0;
        for (int k = 0; k < pages; k++) {
            fast += tier[k] == PD_PAGE_FAST;
            slow += tier[k] == PD_PAGE_SLOW;
        }
        free(tier);
        char line[PDP_NAME_MAX + 160];
        int n = snprintf(line, sizeof line, "%ld,%d,%d,%s,%d,%zu,%zu,%zu\n", (long)getpid(), instance, i,
                         objects[i].name, pages, fast, slow, planned);
        if (n > 0)
            write_all(tiers_fd, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
    }
    pthread_mutex_unlock(&objects_lock);
}

void pdp_out_finish(void)
{
    if (!*out_dir)
        return;
    int fd = open_append("objects.csv");
    if (fd < 0)
        return;
    flock(fd, LOCK_EX);
    struct stat st;
    if (fstat(fd, &st) == 0 && st.st_size == 0) {
        static const char header[] = "pid,object,name,bytes,registrations,accesses\n";
        write_all(fd, header, sizeof header - 1);
    }
    pthread_mutex_lock(&objects_lock);
    for (int i = 0; i < nobjects; i++) {
        if (!objects[i].registrations)
            continue;
        /* Sampled accesses of the last completed instance, while the object
         * is still registered (empty once it was freed). */
        double acc;
        char accs[32] = "";
        if (pd_object_accesses(i, -1, &acc) == PD_OK)
            snprintf(accs, sizeof accs, "%.6g", acc);
        char line[PDP_NAME_MAX + 96];
        int n = snprintf(line, sizeof line, "%ld,%d,%s,%zu,%d,%s\n", (long)getpid(), i, objects[i].name,
                         objects[i].bytes, objects[i].registrations, accs);
        if (n > 0)
            write_all(fd, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
    }
    pthread_mutex_unlock(&objects_lock);
    flock(fd, LOCK_UN);
    close(fd);
}
