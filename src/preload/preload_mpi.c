/* libpaddiser-preload-mpi.so: the PMPI layer of `paddiser run` (issue #14).
 * The MPI rank is the task: it begins when MPI_Init returns and runs until
 * MPI_Finalize, except while the rank waits in MPI. The ranks of one node
 * plan its fast memory together (pd_set_allgather over a node communicator
 * from MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)), so a sync point is
 * collective over the node: it is taken only in calls every rank of the node
 * makes, in the same order - the blocking collectives on MPI_COMM_WORLD or a
 * communicator congruent to it. Other blocking calls (waits, receives,
 * collectives on other communicators) only leave the task while they block,
 * so its time is its work, not its waiting.
 *
 * Only the thread that called MPI_Init runs the task (the runtime's perf
 * session belongs to the thread that began it); MPI calls from other threads
 * pass straight through. Options (environment, read at MPI_Init; every rank
 * must see the same values):
 *   PADDISER_RUN_MPI=0             the layer is off: every call passes through
 *   PADDISER_RUN_MPI_SYNC=list     which world collectives are sync points:
 *                                  "collectives" (default, all below), "none",
 *                                  or names: barrier,allreduce,reduce,bcast,
 *                                  allgather,allgatherv,alltoall,alltoallv,
 *                                  alltoallw,gather,gatherv,scatter,scatterv,
 *                                  reduce_scatter,reduce_scatter_block,scan,exscan
 *   PADDISER_RUN_MPI_SYNC_EVERY=N  one sync point per N of those calls
 *                                  (default PADDISER_RUN_SYNC_EVERY, 1)
 *   PADDISER_RUN_MPI_EXCLUDE=0     blocking calls stay inside the task (default 1)
 *   PADDISER_RUN_MPI_JOINT=0       each rank plans alone (default 1: per node) */
#include <dlfcn.h>
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "paddiser.h"
#include "common/util.h"
#include "preload/preload.h"

/* The calls that can be sync points (bit per name, in this order). */
enum {
    C_BARRIER, C_ALLREDUCE, C_REDUCE, C_BCAST, C_ALLGATHER, C_ALLGATHERV, C_ALLTOALL, C_ALLTOALLV, C_ALLTOALLW,
    C_GATHER, C_GATHERV, C_SCATTER, C_SCATTERV, C_REDUCE_SCATTER, C_REDUCE_SCATTER_BLOCK, C_SCAN, C_EXSCAN,
    C_COUNT
};
/* As in MPI_<name>; PADDISER_RUN_MPI_SYNC takes them in any case. */
static const char *const coll_names[C_COUNT] = {
    "Barrier", "Allreduce", "Reduce", "Bcast", "Allgather", "Allgatherv", "Alltoall", "Alltoallv", "Alltoallw",
    "Gather", "Gatherv", "Scatter", "Scatterv", "Reduce_scatter", "Reduce_scatter_block", "Scan", "Exscan"};
#define ALL_COLLECTIVES ((1u << C_COUNT) - 1u)

static struct {
    int on;              /* MPI_Init passed and the runtime runs: hooks act */
    int rank, size;      /* in MPI_COMM_WORLD: the rank is the task id */
    pthread_t thread;    /* the thread that called MPI_Init runs the task */
    int task_open;       /* the rank's task is begun */
    int in_call;         /* the task thread is inside a hooked call */
    int begin_failed;    /* pd_task_begin failed once (said once) */
    unsigned sync_mask;  /* bits of coll_names */
    int sync_every;      /* eligible calls per sync point */
    long eligible;       /* eligible calls so far */
    int syncs;           /* sync points taken */
    int exclude;         /* blocking calls leave the task */
    int joint;           /* 1: pd_set_allgather over node is set */
    int node_size;
    MPI_Comm node;       /* MPI_COMM_NULL unless joint */
    char sampler[12];    /* the runtime's access sampler, at MPI_Init */
} mpi = {.node = MPI_COMM_NULL, .sampler = "?"};

/* Calls into the runtime are marked busy (and then restored): its own
 * allocations (and MPI's inside the node allgather) pass the allocation
 * hooks straight through. */
static void task_begin(void)
{
    int busy = pdp_busy;
    pdp_busy = 1;
    int rc = pd_task_begin(mpi.rank);
    pdp_busy = busy;
    mpi.task_open = rc == PD_OK;
    if (rc != PD_OK && !mpi.begin_failed++)
        pdp_log(0, "MPI rank %d: pd_task_begin(%d): %s; the rank's time is not measured", mpi.rank, mpi.rank,
                pd_strerror(rc));
}

static void task_end(void)
{
    if (!mpi.task_open)
        return;
    int busy = pdp_busy;
    pdp_busy = 1;
    pd_task_end(mpi.rank);
    pdp_busy = busy;
    mpi.task_open = 0;
}

/* The one place the layer takes a sync point: pdp_sync also appends the
 * plan-log line (--out). */
static int mpi_sync(void) { return pdp_sync(); }

/* Verbose: what the sync point planned. Equal makespans on every rank of a
 * node show that the ranks planned together (each alone plans its own). */
static void log_sync(const char *call, int rc)
{
    if (pdp_opts()->verbose < 1)
        return;
    pd_task_plan plan;
    pd_task_profile prof = {0};
    double makespan = 0;
    int busy = pdp_busy;
    pdp_busy = 1;
    int n = pd_plan_query(&plan, 1, &makespan);
    pd_task_profile_get(mpi.rank, &prof);
    pdp_busy = busy;
    pdp_log(1, "MPI rank %d: sync point %d at MPI_%s (%s): task %.6f s, %s makespan %.9g s, this rank's fast bytes %zu",
            mpi.rank, mpi.syncs, call, pd_strerror(rc), prof.last_time, mpi.joint ? "joint" : "own", makespan,
            n > 0 ? plan.dram_bytes : (size_t)0);
}

static void sync_point(const char *call)
{
    int busy = pdp_busy;
    pdp_busy = 1;
    int rc = mpi_sync();
    pdp_busy = busy;
    mpi.syncs++;
    log_sync(call, rc);
}

/* MPI_COMM_WORLD or a communicator with the same processes in the same
 * order: every rank of the node calls its collectives, in one order. */
static int spans_world(MPI_Comm comm)
{
    if (comm == MPI_COMM_WORLD)
        return 1;
    if (comm == MPI_COMM_NULL)
        return 0; /* erroneous: the real call reports it */
    int result = MPI_UNEQUAL;
    if (PMPI_Comm_compare(comm, MPI_COMM_WORLD, &result) != MPI_SUCCESS)
        return 0;
    return result == MPI_IDENT || result == MPI_CONGRUENT;
}

/* What a hook does around its call: PASS (not the task thread's, or nested
 * in another hooked call: MPI implementations and layered tools may call
 * MPI_ functions inside one), KEEP (the task goes on through it), EXCLUDED
 * (the task ends before it and begins after), SYNC (and a sync point). */
enum { PASS, KEEP, EXCLUDED, SYNC };

/* The call is the task thread's while the layer is on. Other threads may
 * call MPI (MPI_THREAD_MULTIPLE) while the task thread starts or stops the
 * layer: mpi.on is published after mpi.thread. Whether a call is a sync
 * point depends on nothing else (not on this rank's task state), so every
 * rank of the node decides alike. */
static int ours(void)
{
    return __atomic_load_n(&mpi.on, __ATOMIC_ACQUIRE) && pthread_equal(pthread_self(), mpi.thread);
}

/* Before a collective: what to do around it. */
static int before_collective(int which, MPI_Comm comm)
{
    if (!ours() || mpi.in_call)
        return PASS;
    mpi.in_call = 1;
    int how = KEEP;
    if ((mpi.sync_mask & (1u << which)) && spans_world(comm) && ++mpi.eligible % mpi.sync_every == 0)
        how = SYNC;
    else if (mpi.exclude)
        how = EXCLUDED;
    if (how >= EXCLUDED)
        task_end();
    return how;
}

/* After it: the sync point (every rank of the node is past the same call),
 * then the task again. */
static int after_collective(int how, int which, int rc)
{
    if (how != PASS)
        mpi.in_call = 0;
    if (how == SYNC)
        sync_point(coll_names[which]);
    if (how >= EXCLUDED)
        task_begin();
    return rc;
}

#define COLLECTIVE(which, comm, call)                                                                            \
    do {                                                                                                         \
        int how_ = before_collective(which, comm);                                                              \
        return after_collective(how_, which, call);                                                              \
    } while (0)

/* Blocking point-to-point calls and waits: outside the task while they block. */
static int before_wait(void)
{
    if (!ours() || mpi.in_call)
        return PASS;
    mpi.in_call = 1;
    if (!mpi.exclude)
        return KEEP;
    task_end();
    return EXCLUDED;
}

static int after_wait(int how, int rc)
{
    if (how != PASS)
        mpi.in_call = 0;
    if (how >= EXCLUDED)
        task_begin();
    return rc;
}

#define WAITING(call)                                                                                            \
    do {                                                                                                         \
        int how_ = before_wait();                                                                               \
        return after_wait(how_, call);                                                                           \
    } while (0)

/* For the other hook modules (hidden; declare it weak where this file may
 * be absent, as in libpaddiser-preload.so): 1 while the MPI layer runs the
 * rank's task. The node's sync points are then collective and taken here
 * only: another module that took one (an OpenMP region's end) would call
 * the node's gather on this rank alone, or, with the rank's task running,
 * get PD_ESTATE, and either way the sync points would no longer match. */
int pdp_mpi_running(void) { return __atomic_load_n(&mpi.on, __ATOMIC_ACQUIRE); }

/* ---- options ------------------------------------------------------------------------------------------------ */

static unsigned parse_sync(const char *v)
{
    if (!v || !*v || !strcmp(v, "collectives"))
        return ALL_COLLECTIVES;
    if (!strcmp(v, "none"))
        return 0;
    unsigned mask = 0;
    char buf[512];
    snprintf(buf, sizeof buf, "%s", v);
    char *save = NULL;
    for (char *tok = strtok_r(buf, ", ", &save); tok; tok = strtok_r(NULL, ", ", &save)) {
        int found = 0;
        if (!strcmp(tok, "collectives")) {
            mask |= ALL_COLLECTIVES;
            found = 1;
        }
        for (int i = 0; i < C_COUNT && !found; i++)
            if (!strcasecmp(tok, coll_names[i])) {
                mask |= 1u << i;
                found = 1;
            }
        if (!found)
            pdp_log(0, "PADDISER_RUN_MPI_SYNC: '%s' is not a collective name (ignored)", tok);
    }
    return mask;
}

static int env_flag(const char *name, int dflt)
{
    const char *v = getenv(name);
    long n;
    if (!v || !*v)
        return dflt;
    if (pd_parse_long(v, &n))
        return n != 0;
    pdp_log(0, "%s=%s ignored (expected 0 or 1)", name, v);
    return dflt;
}

static void read_mpi_options(void)
{
    mpi.sync_mask = parse_sync(getenv("PADDISER_RUN_MPI_SYNC"));
    mpi.sync_every = pdp_opts()->sync_every;
    const char *v = getenv("PADDISER_RUN_MPI_SYNC_EVERY");
    long n;
    if (v && *v) {
        if (pd_parse_long(v, &n) && n > 0 && n <= 1000000)
            mpi.sync_every = (int)n;
        else
            pdp_log(0, "PADDISER_RUN_MPI_SYNC_EVERY=%s ignored (expected 1 to 1000000)", v);
    }
    mpi.exclude = env_flag("PADDISER_RUN_MPI_EXCLUDE", 1);
    mpi.joint = env_flag("PADDISER_RUN_MPI_JOINT", 1);
}

/* ---- init and finalize -------------------------------------------------------------------------------------- */

static int node_allgather(void *ctx, const void *send, void *recv, size_t bytes)
{
    (void)ctx;
    if (bytes > (size_t)0x7fffffff)
        return -1;
    return PMPI_Allgather(send, (int)bytes, MPI_BYTE, recv, (int)bytes, MPI_BYTE, mpi.node) == MPI_SUCCESS ? 0 : -1;
}

/* Right after PMPI_Init: collective over MPI_COMM_WORLD (the node split),
 * so every rank must run under the preload with the same options. */
static void mpi_start(void)
{
    static int started;
    if (started++ || !env_flag("PADDISER_RUN_MPI", 1))
        return;
    int running = pdp_active();
    read_mpi_options();
    PMPI_Comm_rank(MPI_COMM_WORLD, &mpi.rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &mpi.size);
    mpi.thread = pthread_self();
    mpi.node_size = 1;
    if (mpi.joint) {
        /* Joint planning only if the runtime runs on every rank of the node:
         * a rank without it would never join the sync points' allgather. */
        int all_running = 0;
        if (PMPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, mpi.rank, MPI_INFO_NULL, &mpi.node) !=
                MPI_SUCCESS ||
            PMPI_Comm_size(mpi.node, &mpi.node_size) != MPI_SUCCESS ||
            PMPI_Allreduce(&running, &all_running, 1, MPI_INT, MPI_MIN, mpi.node) != MPI_SUCCESS)
            all_running = 0;
        int rc = PD_ESTATE;
        if (all_running) {
            int busy = pdp_busy;
            pdp_busy = 1;
            rc = pd_set_allgather(node_allgather, NULL, mpi.node_size);
            pdp_busy = busy;
        }
        if (rc != PD_OK) {
            if (running)
                pdp_log(0, "MPI rank %d: planning alone (%s)", mpi.rank,
                        all_running ? pd_strerror(rc) : "the runtime does not run on every rank of the node");
            mpi.joint = 0;
            if (mpi.node != MPI_COMM_NULL)
                PMPI_Comm_free(&mpi.node);
        }
    }
    if (!running)
        return;
    __atomic_store_n(&mpi.on, 1, __ATOMIC_RELEASE);
    const char *copy = getenv("OMPI_MCA_btl_vader_single_copy_mechanism");
    pdp_log(1,
            "MPI rank %d of %d: task %d, %s (%d ranks on the node), sync points %s every %d, blocking calls %s, "
            "sampler %s, single copy %s",
            mpi.rank, mpi.size, mpi.rank, mpi.joint ? "joint planning" : "planning alone", mpi.node_size,
            mpi.sync_mask ? "on world collectives" : "off", mpi.sync_every,
            mpi.exclude ? "outside the task" : "inside the task", mpi.sampler, copy ? copy : "(OpenMPI's default)");
    task_begin();
}

/* Before PMPI_Init. OpenMPI's shared-memory transport moves a large message
 * by reading it straight from the sender's memory (CMA: process_vm_readv),
 * at any time, also while the sender's task runs and the page sampler
 * protects sampled pages of its buffer: the read then fails with EFAULT
 * ("Read -1, expected N, errno = 14" on stderr) before OpenMPI falls back to
 * copying. With page protection the single copy is therefore off, unless the
 * user chose (OMPI_MCA_btl_vader_single_copy_mechanism set). */
static void before_init(void)
{
    if (!env_flag("PADDISER_RUN_MPI", 1) || !pdp_active())
        return;
    pd_profile_info info;
    int busy = pdp_busy;
    pdp_busy = 1;
    int rc = pd_profile_info_get(&info);
    pdp_busy = busy;
    if (rc == PD_OK)
        snprintf(mpi.sampler, sizeof mpi.sampler, "%s", info.sampler);
    if (rc == PD_OK && !strcmp(info.sampler, "mprotect") &&
        setenv("OMPI_MCA_btl_vader_single_copy_mechanism", "none", 0) != 0)
        pdp_log(0, "cannot turn OpenMPI's single-copy transfers off: the sampler may fail them");
}

PDP_HOOK int MPI_Init(int *argc, char ***argv)
{
    before_init();
    int rc = PMPI_Init(argc, argv);
    if (rc == MPI_SUCCESS)
        mpi_start();
    return rc;
}

PDP_HOOK int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    before_init();
    int rc = PMPI_Init_thread(argc, argv, required, provided);
    if (rc == MPI_SUCCESS)
        mpi_start();
    return rc;
}

/* No sync point here: a plan after the last instance would move pages for
 * nothing, and the allgather must be gone before the node communicator is
 * (pd_finalize at exit records the last instance, which is not collective). */
static void mpi_stop(void)
{
    /* The task's perf session belongs to the task thread: another thread
     * finalizing leaves the task running (pd_finalize then drops it). */
    if (__atomic_exchange_n(&mpi.on, 0, __ATOMIC_ACQ_REL) && pthread_equal(pthread_self(), mpi.thread))
        task_end();
    if (mpi.joint) {
        int busy = pdp_busy;
        pdp_busy = 1;
        pd_set_allgather(NULL, NULL, 0);
        pdp_busy = busy;
        mpi.joint = 0;
    }
    if (mpi.node != MPI_COMM_NULL)
        PMPI_Comm_free(&mpi.node);
}

PDP_HOOK int MPI_Finalize(void)
{
    mpi_stop();
    return PMPI_Finalize();
}

/* ---- collectives: sync points on world, else outside the task ----------------------------------------------- */

PDP_HOOK int MPI_Barrier(MPI_Comm comm) { COLLECTIVE(C_BARRIER, comm, PMPI_Barrier(comm)); }

PDP_HOOK int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                           MPI_Comm comm)
{
    COLLECTIVE(C_ALLREDUCE, comm, PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm));
}

PDP_HOOK int MPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root,
                        MPI_Comm comm)
{
    COLLECTIVE(C_REDUCE, comm, PMPI_Reduce(sendbuf, recvbuf, count, datatype, op, root, comm));
}

PDP_HOOK int MPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm)
{
    COLLECTIVE(C_BCAST, comm, PMPI_Bcast(buffer, count, datatype, root, comm));
}

PDP_HOOK int MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                           MPI_Datatype recvtype, MPI_Comm comm)
{
    COLLECTIVE(C_ALLGATHER, comm, PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm));
}

PDP_HOOK int MPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                            const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm)
{
    COLLECTIVE(C_ALLGATHERV, comm,
               PMPI_Allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm));
}

PDP_HOOK int MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                          MPI_Datatype recvtype, MPI_Comm comm)
{
    COLLECTIVE(C_ALLTOALL, comm, PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm));
}

PDP_HOOK int MPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                           void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                           MPI_Comm comm)
{
    COLLECTIVE(C_ALLTOALLV, comm,
               PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm));
}

PDP_HOOK int MPI_Alltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
                           const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[], const int rdispls[],
                           const MPI_Datatype recvtypes[], MPI_Comm comm)
{
    COLLECTIVE(C_ALLTOALLW, comm,
               PMPI_Alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm));
}

PDP_HOOK int MPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                        MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    COLLECTIVE(C_GATHER, comm,
               PMPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm));
}

PDP_HOOK int MPI_Gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                         const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    COLLECTIVE(C_GATHERV, comm,
               PMPI_Gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm));
}

PDP_HOOK int MPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                         MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    COLLECTIVE(C_SCATTER, comm,
               PMPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm));
}

PDP_HOOK int MPI_Scatterv(const void *sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
                          void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    COLLECTIVE(C_SCATTERV, comm,
               PMPI_Scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm));
}

PDP_HOOK int MPI_Reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype datatype,
                                MPI_Op op, MPI_Comm comm)
{
    COLLECTIVE(C_REDUCE_SCATTER, comm, PMPI_Reduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, comm));
}

PDP_HOOK int MPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype datatype,
                                      MPI_Op op, MPI_Comm comm)
{
    COLLECTIVE(C_REDUCE_SCATTER_BLOCK, comm,
               PMPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm));
}

PDP_HOOK int MPI_Scan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    COLLECTIVE(C_SCAN, comm, PMPI_Scan(sendbuf, recvbuf, count, datatype, op, comm));
}

PDP_HOOK int MPI_Exscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                        MPI_Comm comm)
{
    COLLECTIVE(C_EXSCAN, comm, PMPI_Exscan(sendbuf, recvbuf, count, datatype, op, comm));
}

/* ---- waits and blocking receives: outside the task ---------------------------------------------------------- */

PDP_HOOK int MPI_Wait(MPI_Request *request, MPI_Status *status) { WAITING(PMPI_Wait(request, status)); }

PDP_HOOK int MPI_Waitall(int count, MPI_Request array_of_requests[], MPI_Status *array_of_statuses)
{
    WAITING(PMPI_Waitall(count, array_of_requests, array_of_statuses));
}

PDP_HOOK int MPI_Waitany(int count, MPI_Request array_of_requests[], int *index, MPI_Status *status)
{
    WAITING(PMPI_Waitany(count, array_of_requests, index, status));
}

PDP_HOOK int MPI_Waitsome(int incount, MPI_Request array_of_requests[], int *outcount, int array_of_indices[],
                          MPI_Status array_of_statuses[])
{
    WAITING(PMPI_Waitsome(incount, array_of_requests, outcount, array_of_indices, array_of_statuses));
}

PDP_HOOK int MPI_Recv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                      MPI_Status *status)
{
    WAITING(PMPI_Recv(buf, count, datatype, source, tag, comm, status));
}

PDP_HOOK int MPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                          void *recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm,
                          MPI_Status *status)
{
    WAITING(PMPI_Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source, recvtag,
                          comm, status));
}

PDP_HOOK int MPI_Sendrecv_replace(void *buf, int count, MPI_Datatype datatype, int dest, int sendtag, int source,
                                  int recvtag, MPI_Comm comm, MPI_Status *status)
{
    WAITING(PMPI_Sendrecv_replace(buf, count, datatype, dest, sendtag, source, recvtag, comm, status));
}

PDP_HOOK int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status)
{
    WAITING(PMPI_Probe(source, tag, comm, status));
}

/* ---- Fortran ------------------------------------------------------------------------------------------------
 * OpenMPI's Fortran bindings call the C PMPI_ functions directly, so the
 * hooks above never see a Fortran program's calls. mpif.h and `use mpi`
 * (gfortran) call mpi_<name>_, the `use mpi_f08` module calls
 * ompi_<name>_f (both names of one function in libmpi_mpifh): both are
 * interposed here for MPI_Init, MPI_Init_thread, MPI_Finalize, the
 * collectives without v/w variants, the waits and the blocking receives,
 * and call the real one found with dlsym(RTLD_NEXT). */

#define F_REAL(type, name)                                                                                       \
    static type real_;                                                                                           \
    if (!real_)                                                                                                  \
        real_ = (type)dlsym(RTLD_NEXT, name);                                                                    \
    if (!real_) {                                                                                                \
        if (ierr)                                                                                                \
            *ierr = MPI_ERR_INTERN;                                                                              \
        return;                                                                                                  \
    }

#define F_EXPORT(fn, name, params)                                                                               \
    PDP_HOOK void mpi_##name##_ params __attribute__((alias(#fn)));                                              \
    PDP_HOOK void ompi_##name##_f params __attribute__((alias(#fn)));

/* A collective: the same decision as its C hook, on the C communicator. */
#define F_COLLECTIVE(name, which, params, args)                                                                 \
    typedef void (*name##_fn) params;                                                                           \
    static void f_##name params                                                                                 \
    {                                                                                                            \
        F_REAL(name##_fn, "ompi_" #name "_f")                                                                  \
        int how = before_collective(which, PMPI_Comm_f2c(*comm));                                                \
        real_ args;                                                                                              \
        after_collective(how, which, ierr ? *ierr : MPI_SUCCESS);                                                \
    }                                                                                                            \
    F_EXPORT(f_##name, name, params)

#define F_WAITING(name, params, args)                                                                           \
    typedef void (*name##_fn) params;                                                                           \
    static void f_##name params                                                                                 \
    {                                                                                                            \
        F_REAL(name##_fn, "ompi_" #name "_f")                                                                  \
        int how = before_wait();                                                                                 \
        real_ args;                                                                                              \
        after_wait(how, ierr ? *ierr : MPI_SUCCESS);                                                             \
    }                                                                                                            \
    F_EXPORT(f_##name, name, params)

typedef void (*init_fn)(MPI_Fint *ierr);
static void f_init(MPI_Fint *ierr)
{
    F_REAL(init_fn, "ompi_init_f")
    before_init();
    real_(ierr);
    if (!ierr || *ierr == MPI_SUCCESS)
        mpi_start();
}
F_EXPORT(f_init, init, (MPI_Fint * ierr))

typedef void (*init_thread_fn)(MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierr);
static void f_init_thread(MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierr)
{
    F_REAL(init_thread_fn, "ompi_init_thread_f")
    before_init();
    real_(required, provided, ierr);
    if (!ierr || *ierr == MPI_SUCCESS)
        mpi_start();
}
F_EXPORT(f_init_thread, init_thread, (MPI_Fint * required, MPI_Fint *provided, MPI_Fint *ierr))

typedef void (*finalize_fn)(MPI_Fint *ierr);
static void f_finalize(MPI_Fint *ierr)
{
    F_REAL(finalize_fn, "ompi_finalize_f")
    mpi_stop();
    real_(ierr);
}
F_EXPORT(f_finalize, finalize, (MPI_Fint * ierr))

F_COLLECTIVE(barrier, C_BARRIER, (MPI_Fint * comm, MPI_Fint *ierr), (comm, ierr))
F_COLLECTIVE(allreduce, C_ALLREDUCE,
             (char *sendbuf, char *recvbuf, MPI_Fint *count, MPI_Fint *datatype, MPI_Fint *op, MPI_Fint *comm,
              MPI_Fint *ierr),
             (sendbuf, recvbuf, count, datatype, op, comm, ierr))
F_COLLECTIVE(reduce, C_REDUCE,
             (char *sendbuf, char *recvbuf, MPI_Fint *count, MPI_Fint *datatype, MPI_Fint *op, MPI_Fint *root,
              MPI_Fint *comm, MPI_Fint *ierr),
             (sendbuf, recvbuf, count, datatype, op, root, comm, ierr))
F_COLLECTIVE(bcast, C_BCAST,
             (char *buffer, MPI_Fint *count, MPI_Fint *datatype, MPI_Fint *root, MPI_Fint *comm, MPI_Fint *ierr),
             (buffer, count, datatype, root, comm, ierr))
F_COLLECTIVE(allgather, C_ALLGATHER,
             (char *sendbuf, MPI_Fint *sendcount, MPI_Fint *sendtype, char *recvbuf, MPI_Fint *recvcount,
              MPI_Fint *recvtype, MPI_Fint *comm, MPI_Fint *ierr),
             (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, ierr))
F_COLLECTIVE(alltoall, C_ALLTOALL,
             (char *sendbuf, MPI_Fint *sendcount, MPI_Fint *sendtype, char *recvbuf, MPI_Fint *recvcount,
              MPI_Fint *recvtype, MPI_Fint *comm, MPI_Fint *ierr),
             (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, ierr))
F_COLLECTIVE(gather, C_GATHER,
             (char *sendbuf, MPI_Fint *sendcount, MPI_Fint *sendtype, char *recvbuf, MPI_Fint *recvcount,
              MPI_Fint *recvtype, MPI_Fint *root, MPI_Fint *comm, MPI_Fint *ierr),
             (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, ierr))
F_COLLECTIVE(scatter, C_SCATTER,
             (char *sendbuf, MPI_Fint *sendcount, MPI_Fint *sendtype, char *recvbuf, MPI_Fint *recvcount,
              MPI_Fint *recvtype, MPI_Fint *root, MPI_Fint *comm, MPI_Fint *ierr),
             (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, ierr))

F_WAITING(wait, (MPI_Fint * request, MPI_Fint *status, MPI_Fint *ierr), (request, status, ierr))
F_WAITING(waitall, (MPI_Fint * count, MPI_Fint *array_of_requests, MPI_Fint *array_of_statuses, MPI_Fint *ierr),
          (count, array_of_requests, array_of_statuses, ierr))
F_WAITING(waitany,
          (MPI_Fint * count, MPI_Fint *array_of_requests, MPI_Fint *index, MPI_Fint *status, MPI_Fint *ierr),
          (count, array_of_requests, index, status, ierr))
F_WAITING(recv,
          (char *buf, MPI_Fint *count, MPI_Fint *datatype, MPI_Fint *source, MPI_Fint *tag, MPI_Fint *comm,
           MPI_Fint *status, MPI_Fint *ierr),
          (buf, count, datatype, source, tag, comm, status, ierr))
F_WAITING(sendrecv,
          (char *sendbuf, MPI_Fint *sendcount, MPI_Fint *sendtype, MPI_Fint *dest, MPI_Fint *sendtag, char *recvbuf,
           MPI_Fint *recvcount, MPI_Fint *recvtype, MPI_Fint *source, MPI_Fint *recvtag, MPI_Fint *comm,
           MPI_Fint *status, MPI_Fint *ierr),
          (sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source, recvtag, comm, status,
           ierr))
F_WAITING(probe, (MPI_Fint * source, MPI_Fint *tag, MPI_Fint *comm, MPI_Fint *status, MPI_Fint *ierr),
          (source, tag, comm, status, ierr))
