/* nccl_sim.c — the simulator's libnccl.so.2: the NCCL 2.28 API of
 * nccl_api.def on top of the simulated CUDA streams.
 *
 * Like real NCCL, every function is defined as pncclX and exported as well
 * under ncclX, a weak alias, so an interposer (the recorder) can define
 * ncclX and reach this one through pncclX.  Collectives and p2p calls check
 * their arguments, then queue one task on the stream and return at once;
 * between GroupStart and the outermost GroupEnd they are collected per
 * thread and launched as one task per stream (sim_coll.c runs the ops of
 * different comm handles in a task concurrently).  Functions the
 * simulator does not model return ncclInvalidUsage.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "fr_nccl.h"
#include "sim.h"
#include "sim_nccl.h"

/* The calling thread's group nesting and the ops collected in it. */
struct sim_group {
  int depth;
  int nops, cap;
  struct sim_op *ops;
};

static __thread struct sim_group t_group;
static __thread char t_last_error[256];

ncclResult_t sim_error(ncclResult_t rc, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(t_last_error, sizeof t_last_error, fmt, ap);
  va_end(ap);
  return rc;
}

static ncclResult_t sim_check_comm(ncclComm_t comm)
{
  if (!comm || !comm->seg || comm->ended)
    return sim_error(ncclInvalidArgument, "invalid communicator");
  return ncclSuccess;
}

/* One launch of a batch captured into a CUDA graph (graph_sim.c calls it
 * at each cuGraphLaunch): a copy that runs and frees itself, with the
 * knobs its comms have now (a kernel or link stalled from this launch on)
 * and, as NCCL does for a graph's persistent plan at each launch
 * (hostStreamPlanTask), its Coll / P2p profiler events; the comms' pending
 * counts cover it until the worker is done. */
static void *sim_batch_relaunch(void *arg)
{
  const struct sim_batch *g = arg;
  struct sim_batch *b = malloc(sizeof *b + (size_t)g->nops * sizeof g->ops[0]);
  if (!b)
    return NULL;
  b->nops = g->nops;
  for (int i = 0; i < g->nops; i++) {
    struct sim_op *op = &b->ops[i];
    *op = g->ops[i];
    op->stall_peer = op->comm->stall_peer;
    op->stall_channel = op->comm->stall_channel;
    op->stall_kernel = op->comm->stall_kernel;
    op->prof = NULL;
    sim_prof_task_start(op);
    atomic_fetch_add(&op->comm->pending, 1);
  }
  return b;
}

/* Queues a batch on a stream; the comms' pending counts cover it until the
 * worker is done.  On a capturing stream it goes into the graph, to run at
 * each launch. */
static ncclResult_t sim_launch(struct sim_op *ops, int nops, cudaStream_t stream)
{
  struct sim_batch *b = malloc(sizeof *b + (size_t)nops * sizeof *ops);
  if (!b)
    return sim_error(ncclSystemError, "out of memory");
  b->nops = nops;
  if (sim_stream_graph_capturing(stream)) {
    memcpy(b->ops, ops, (size_t)nops * sizeof *ops);
    CUresult cr = sim_stream_enqueue_node(stream, sim_batch_run, b, sim_batch_relaunch, free);
    if (cr != CUDA_SUCCESS)
      free(b);
    return cr == CUDA_SUCCESS ? ncclSuccess
                              : sim_error(ncclUnhandledCudaError, "cannot capture (CUDA error %d)", (int)cr);
  }
  for (int i = 0; i < nops; i++)
    sim_prof_task_start(&ops[i]);
  memcpy(b->ops, ops, (size_t)nops * sizeof *ops);
  for (int i = 0; i < nops; i++)
    atomic_fetch_add(&ops[i].comm->pending, 1);
  CUresult cr = sim_stream_enqueue(stream, sim_batch_run, b);
  if (cr != CUDA_SUCCESS) {
    for (int i = 0; i < nops; i++)
      atomic_fetch_sub(&ops[i].comm->pending, 1);
    free(b);
    return sim_error(ncclUnhandledCudaError, "cannot launch on the stream (CUDA error %d)", (int)cr);
  }
  return ncclSuccess;
}

/* Launches a group's ops: one batch per stream, in order of first use,
 * each on its stream (as NCCL launches a group's work for several devices
 * on each device's stream); the ops of one stream keep their order. */
static ncclResult_t sim_launch_group(struct sim_op *ops, int nops)
{
  struct sim_op *part = malloc((size_t)nops * sizeof *part);
  if (!part)
    return sim_error(ncclSystemError, "out of memory");
  ncclResult_t rc = ncclSuccess;
  for (int i = 0; i < nops && rc == ncclSuccess; i++) {
    int first = 1;
    for (int k = 0; k < i && first; k++)
      first = ops[k].stream != ops[i].stream;
    if (!first)
      continue;
    int n = 0;
    for (int k = i; k < nops; k++)
      if (ops[k].stream == ops[i].stream)
        part[n++] = ops[k];
    rc = sim_launch(part, n, ops[i].stream);
  }
  free(part);
  return rc;
}

/* Test knob: the calling thread stays inside the NCCL call for good (a
 * host thread stuck on a lock or a blocking allocation), sleeping; it
 * never returns. */
static void sim_hang_in_call(ncclComm_t comm)
{
  unsigned iter = 0;
  comm->hang_next = 0;
  for (;;)
    sim_backoff(&iter);
}

static ncclResult_t sim_enqueue_checked(const struct sim_op *in, cudaStream_t stream);

/* Checks an op and launches it (or groups it), inside its API event.  A
 * comm that reports an async error refuses it with that error, as NCCL's
 * ncclEnqueueCheck does (ncclCommEnsureReady, src/init.cc: the error is
 * kept; ncclInProgress becomes ncclInvalidArgument). */
static ncclResult_t sim_enqueue(const struct sim_op *op, cudaStream_t stream)
{
  ncclResult_t rc = sim_check_comm(op->comm);
  if (rc != ncclSuccess)
    return rc;
  ncclResult_t async = (ncclResult_t)atomic_load(&op->comm->async_error);
  if (async == ncclInProgress)
    return sim_error(ncclInvalidArgument, "Attempt to use communicator before the previous operation "
                     "returned ncclSuccess");
  if (async != ncclSuccess)
    return sim_error(async, "the communicator reports an async error (%d)", (int)async);
  if (sim_dtype_size(op->dtype) == 0)
    return sim_error(ncclInvalidArgument, "invalid datatype %d", (int)op->dtype);
  int reduces = op->kind == SIM_ALLREDUCE || op->kind == SIM_REDUCE || op->kind == SIM_REDUCESCATTER;
  if (reduces && ((int)op->redop < 0 || op->redop >= ncclNumOps))
    return sim_error(ncclInvalidArgument, "invalid reduction operation %d", (int)op->redop);
  int rooted = op->kind == SIM_BROADCAST || op->kind == SIM_REDUCE || op->kind == SIM_GATHER ||
               op->kind == SIM_SCATTER || op->kind == SIM_SEND || op->kind == SIM_RECV;
  if (rooted && (op->peer < 0 || op->peer >= op->comm->nranks))
    return sim_error(ncclInvalidArgument, "%s %d out of range [0, %d)",
                     op->kind == SIM_SEND || op->kind == SIM_RECV ? "peer" : "root",
                     op->peer, op->comm->nranks);
  if (op->count > 0 && ((!op->sendbuff && op->kind != SIM_RECV) || (!op->recvbuff && op->kind != SIM_SEND)))
    return sim_error(ncclInvalidArgument, "NULL buffer");
  void *api = sim_prof_api_start(op, stream);
  if (op->comm->hang_next)
    sim_hang_in_call(op->comm);
  rc = sim_enqueue_checked(op, stream);
  sim_prof_api_stop(op->comm, api);
  return rc;
}

/* Launches a checked op, or adds it to the thread's open group. */
static ncclResult_t sim_enqueue_checked(const struct sim_op *in, cudaStream_t stream)
{
  struct sim_op one = *in, *op = &one;
  op->stall_peer = op->comm->stall_peer;
  op->stall_channel = op->comm->stall_channel;
  op->stall_kernel = op->comm->stall_kernel;
  if (op->kind != SIM_SEND && op->kind != SIM_RECV)
    sim_choose_algo(op->comm, op);
  struct sim_group *g = &t_group;
  if (g->depth == 0)
    return sim_launch(op, 1, stream);
  if (g->nops == g->cap) {
    int cap = g->cap ? 2 * g->cap : 16;
    struct sim_op *ops = realloc(g->ops, (size_t)cap * sizeof *ops);
    if (!ops)
      return sim_error(ncclSystemError, "out of memory");
    g->ops = ops;
    g->cap = cap;
  }
  op->stream = stream;
  g->ops[g->nops++] = *op;
  return ncclSuccess;
}

static struct sim_op sim_op_make(enum sim_kind kind, ncclComm_t comm, const void *sendbuff, void *recvbuff,
                                 size_t count, ncclDataType_t dtype, ncclRedOp_t redop, int peer)
{
  struct sim_op op = { kind, comm, sendbuff, recvbuff, count, dtype, redop, peer, NULL, -1, -1, 0, NULL,
                        SIM_ALGO_RING, SIM_PROTO_SIMPLE };
  return op;
}

/* ---- Version, ids, errors ---- */

ncclResult_t pncclGetVersion(int *version)
{
  if (!version)
    return sim_error(ncclInvalidArgument, "version is NULL");
  *version = SIM_NCCL_VERSION;
  return ncclSuccess;
}

ncclResult_t pncclGetUniqueId(ncclUniqueId *uniqueId)
{
  if (!uniqueId)
    return sim_error(ncclInvalidArgument, "uniqueId is NULL");
  size_t got = 0;
  while (got < sizeof uniqueId->internal) {
    ssize_t n = getrandom(uniqueId->internal + got, sizeof uniqueId->internal - got, 0);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return sim_error(ncclSystemError, "getrandom: %s", strerror(errno));
    got += (size_t)n;
  }
  return ncclSuccess;
}

const char *pncclGetErrorString(ncclResult_t result)
{
  switch (result) {
  case ncclSuccess: return "no error";
  case ncclUnhandledCudaError: return "unhandled cuda error (run with NCCL_DEBUG=INFO for details)";
  case ncclSystemError: return "unhandled system error (run with NCCL_DEBUG=INFO for details)";
  case ncclInternalError: return "internal error - please report this issue to the NCCL developers";
  case ncclInvalidArgument: return "invalid argument (run with NCCL_DEBUG=WARN for details)";
  case ncclInvalidUsage: return "invalid usage (run with NCCL_DEBUG=WARN for details)";
  case ncclRemoteError: return "remote process exited or there was a network error";
  case ncclInProgress: return "NCCL operation in progress";
  default: return "unknown result code";
  }
}

const char *pncclGetLastError(ncclComm_t comm)
{
  (void)comm;
  return t_last_error;
}

/* ---- Communicators ---- */

ncclResult_t pncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId commId, int rank)
{
  if (!comm)
    return sim_error(ncclInvalidArgument, "comm is NULL");
  if (nranks < 1 || rank < 0 || rank >= nranks)
    return sim_error(ncclInvalidArgument, "rank %d / nranks %d invalid", rank, nranks);
  return sim_comm_init(comm, nranks, (const unsigned char *)commId.internal, rank);
}

/* The config is accepted and ignored: the simulator is always blocking. */
ncclResult_t pncclCommInitRankConfig(ncclComm_t *comm, int nranks, ncclUniqueId commId, int rank,
                                     ncclConfig_t *config)
{
  (void)config;
  return pncclCommInitRank(comm, nranks, commId, rank);
}

ncclResult_t pncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t *newcomm, ncclConfig_t *config)
{
  (void)config;
  ncclResult_t rc = sim_check_comm(comm);
  if (rc != ncclSuccess)
    return rc;
  if (!newcomm)
    return sim_error(ncclInvalidArgument, "newcomm is NULL");
  if (color < 0 && color != NCCL_SPLIT_NOCOLOR)
    return sim_error(ncclInvalidArgument, "invalid color %d", color);
  return sim_comm_split(comm, color, key, newcomm);
}

/* Finalize, destroy and abort follow NCCL 2.27/2.28 (src/init.cc):
 *
 * - ncclCommFinalize (a blocking comm) runs commDestroySync: it waits for
 *   the comm's streams (ncclStrongStreamSynchronize of its host and device
 *   streams), i.e. until every op this member launched on the comm has
 *   completed, then stops its proxy.  There is no barrier of the members:
 *   a member waits for the others only as far as its own launched ops need
 *   them, so a finalize after an unmatched collective blocks for good.  A
 *   second finalize of one comm is ncclInvalidArgument.
 * - ncclCommDestroy runs commReclaim: a process's ranks of one
 *   communicator (intraComm0, e.g. those of one ncclCommInitAll) count
 *   their destroys (finalizeRankCnt); every one but the last returns at
 *   once, the last one finalizes every rank not finalized yet (the same
 *   wait) and frees them all.  commFree "should not involve any sync among
 *   ranks": no rendezvous with the other processes' members either (the
 *   proxy thread it joins serves this process's own connections: on one
 *   node, with the P2P and SHM transports the simulator stands for).
 * - ncclCommAbort sets the abort flag (the ops in flight return) and
 *   reclaims like destroy, without the wait.  (NCCL's proxy thread would
 *   also wait for peers still connected to it; the simulator's abort never
 *   blocks, so that aborting a hung comm always returns.)
 *
 * The waits run in the exported function's own frame (sim_wait_ops is
 * inlined, and sleeps without a hidden helper between), so the stack of a
 * member blocked in finalize or destroy is nanosleep <- pncclCommFinalize
 * or pncclCommDestroy, inside the NCCL call like the other waits. */
static inline __attribute__((always_inline)) void sim_wait_ops(ncclComm_t comm)
{
  long ns = 1000;
  while (atomic_load(&comm->pending) > 0 && !atomic_load(&comm->aborted)) {
    struct timespec ts = { 0, ns };
    nanosleep(&ts, NULL);
    if (ns < 1000000L)
      ns *= 2;
  }
}

ncclResult_t pncclCommFinalize(ncclComm_t comm)
{
  if (!comm)
    return ncclSuccess;
  ncclResult_t rc = sim_check_comm(comm);
  if (rc != ncclSuccess)
    return rc;
  if (comm->finalized)
    return sim_error(ncclInvalidArgument, "ncclCommFinalize: the communicator is already finalized");
  comm->finalized = 1;
  sim_wait_ops(comm);
  return ncclSuccess;
}

ncclResult_t pncclCommDestroy(ncclComm_t comm)
{
  if (!comm)
    return ncclSuccess;
  ncclResult_t rc = sim_check_comm(comm);
  if (rc != ncclSuccess)
    return rc;
  ncclComm_t all[SIM_LOCAL_MAX];
  int n = sim_comm_release(comm, all);
  for (int i = 0; i < n; i++) {
    if (!all[i]->finalized && !atomic_load(&all[i]->aborted)) {
      all[i]->finalized = 1;
      sim_wait_ops(all[i]);
    }
  }
  for (int i = 0; i < n; i++)
    if (atomic_load(&all[i]->pending) == 0)
      sim_comm_free(all[i]);    /* an aborted one with ops still running stays allocated */
  return ncclSuccess;
}

/* Stops the comm's ops in flight and reclaims it like destroy, once they
 * have returned (if that takes more than a second, e.g. an op of the same
 * batch hangs on another comm, the comm is left allocated). */
ncclResult_t pncclCommAbort(ncclComm_t comm)
{
  if (!comm)
    return ncclSuccess;
  ncclResult_t rc = sim_check_comm(comm);
  if (rc != ncclSuccess)
    return rc;
  atomic_store(&comm->aborted, 1);
  sim_ring_self(comm);
  for (int i = 0; i < 1000 && atomic_load(&comm->pending) > 0; i++) {
    struct timespec ts = { 0, 1000000L };
    nanosleep(&ts, NULL);
  }
  return pncclCommDestroy(comm);
}

ncclResult_t pncclCommGetAsyncError(ncclComm_t comm, ncclResult_t *asyncError)
{
  ncclResult_t rc = sim_check_comm(comm);
  if (rc != ncclSuccess)
    return rc;
  if (!asyncError)
    return sim_error(ncclInvalidArgument, "asyncError is NULL");
  *asyncError = (ncclResult_t)atomic_load(&comm->async_error);
  return ncclSuccess;
}

ncclResult_t sim_comm_set_async_error(ncclComm_t comm, ncclResult_t err)
{
  ncclResult_t rc = sim_check_comm(comm);
  if (rc == ncclSuccess)
    atomic_store(&comm->async_error, (int)err);
  return rc;
}

ncclResult_t sim_comm_stall_link(ncclComm_t comm, int peer, int channel)
{
  ncclResult_t rc = sim_check_comm(comm);
  if (rc != ncclSuccess)
    return rc;
  if (peer < 0 || peer >= comm->nranks || channel < 0 || channel >= SIM_CHANNELS)
    return sim_error(ncclInvalidArgument, "no link to peer %d on channel %d", peer, channel);
  comm->stall_peer = peer;
  comm->stall_channel = channel;
  return ncclSuccess;
}

ncclResult_t sim_comm_stall_kernel(ncclComm_t comm)
{
  ncclResult_t rc = sim_check_comm(comm);
  if (rc == ncclSuccess)
    comm->stall_kernel = 1;
  return rc;
}

ncclResult_t sim_comm_hang_next_call(ncclComm_t comm)
{
  ncclResult_t rc = sim_check_comm(comm);
  if (rc == ncclSuccess)
    comm->hang_next = 1;
  return rc;
}

ncclResult_t sim_comm_next_algo(ncclComm_t comm, const char *algo, const char *proto)
{
  ncclResult_t rc = sim_check_comm(comm);
  if (rc != ncclSuccess)
    return rc;
  int a = algo ? sim_algo_lookup(algo) : -1, p = proto ? sim_proto_lookup(proto) : -1;
  if ((algo && a < 0) || (proto && p < 0))
    return sim_error(ncclInvalidArgument, "unknown algorithm '%s' or protocol '%s'", algo ? algo : "",
                     proto ? proto : "");
  comm->next_algo = a;
  comm->next_proto = p;
  return ncclSuccess;
}

ncclResult_t pncclCommCount(const ncclComm_t comm, int *count)
{
  ncclResult_t rc = sim_check_comm(comm);
  if (rc != ncclSuccess)
    return rc;
  if (!count)
    return sim_error(ncclInvalidArgument, "count is NULL");
  *count = comm->nranks;
  return ncclSuccess;
}

ncclResult_t pncclCommCuDevice(const ncclComm_t comm, int *device)
{
  ncclResult_t rc = sim_check_comm(comm);
  if (rc != ncclSuccess)
    return rc;
  if (!device)
    return sim_error(ncclInvalidArgument, "device is NULL");
  *device = comm->cuda_dev;
  return ncclSuccess;
}

ncclResult_t pncclCommUserRank(const ncclComm_t comm, int *rank)
{
  ncclResult_t rc = sim_check_comm(comm);
  if (rc != ncclSuccess)
    return rc;
  if (!rank)
    return sim_error(ncclInvalidArgument, "rank is NULL");
  *rank = comm->rank;
  return ncclSuccess;
}

/* ---- Groups ---- */

ncclResult_t pncclGroupStart(void)
{
  t_group.depth++;
  return ncclSuccess;
}

ncclResult_t pncclGroupEnd(void)
{
  struct sim_group *g = &t_group;
  if (g->depth == 0)
    return sim_error(ncclInvalidUsage, "ncclGroupEnd without ncclGroupStart");
  if (--g->depth > 0)
    return ncclSuccess;
  ncclResult_t rc = ncclSuccess;
  if (g->nops > 0)
    rc = sim_launch_group(g->ops, g->nops);
  g->nops = 0;
  free(g->ops);
  g->ops = NULL;
  g->cap = 0;
  return rc;
}

/* ---- Collectives and p2p ---- */

ncclResult_t pncclAllReduce(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype,
                            ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream)
{
  struct sim_op o = sim_op_make(SIM_ALLREDUCE, comm, sendbuff, recvbuff, count, datatype, op, -1);
  return sim_enqueue(&o, stream);
}

ncclResult_t pncclBroadcast(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype,
                            int root, ncclComm_t comm, cudaStream_t stream)
{
  struct sim_op o = sim_op_make(SIM_BROADCAST, comm, sendbuff, recvbuff, count, datatype, ncclSum, root);
  return sim_enqueue(&o, stream);
}

/* In-place broadcast, implemented (like NCCL) by calling the exported
 * ncclBroadcast, so an interposer sees a Broadcast. */
ncclResult_t pncclBcast(void *buff, size_t count, ncclDataType_t datatype, int root, ncclComm_t comm,
                        cudaStream_t stream)
{
  return ncclBroadcast(buff, buff, count, datatype, root, comm, stream);
}

ncclResult_t pncclReduce(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype,
                         ncclRedOp_t op, int root, ncclComm_t comm, cudaStream_t stream)
{
  struct sim_op o = sim_op_make(SIM_REDUCE, comm, sendbuff, recvbuff, count, datatype, op, root);
  return sim_enqueue(&o, stream);
}

ncclResult_t pncclAllGather(const void *sendbuff, void *recvbuff, size_t sendcount, ncclDataType_t datatype,
                            ncclComm_t comm, cudaStream_t stream)
{
  struct sim_op o = sim_op_make(SIM_ALLGATHER, comm, sendbuff, recvbuff, sendcount, datatype, ncclSum, -1);
  return sim_enqueue(&o, stream);
}

ncclResult_t pncclReduceScatter(const void *sendbuff, void *recvbuff, size_t recvcount,
                                ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream)
{
  struct sim_op o = sim_op_make(SIM_REDUCESCATTER, comm, sendbuff, recvbuff, recvcount, datatype, op, -1);
  return sim_enqueue(&o, stream);
}

ncclResult_t pncclAlltoAll(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype,
                           ncclComm_t comm, cudaStream_t stream)
{
  struct sim_op o = sim_op_make(SIM_ALLTOALL, comm, sendbuff, recvbuff, count, datatype, ncclSum, -1);
  return sim_enqueue(&o, stream);
}

ncclResult_t pncclGather(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype,
                         int root, ncclComm_t comm, cudaStream_t stream)
{
  struct sim_op o = sim_op_make(SIM_GATHER, comm, sendbuff, recvbuff, count, datatype, ncclSum, root);
  if (comm && comm->rank != root && count > 0 && !recvbuff)
    o.recvbuff = (void *)sendbuff; /* only the root needs a receive buffer */
  return sim_enqueue(&o, stream);
}

ncclResult_t pncclScatter(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype,
                          int root, ncclComm_t comm, cudaStream_t stream)
{
  struct sim_op o = sim_op_make(SIM_SCATTER, comm, sendbuff, recvbuff, count, datatype, ncclSum, root);
  if (comm && comm->rank != root && count > 0 && !sendbuff)
    o.sendbuff = recvbuff;         /* only the root needs a send buffer */
  return sim_enqueue(&o, stream);
}

ncclResult_t pncclSend(const void *sendbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
                       cudaStream_t stream)
{
  struct sim_op o = sim_op_make(SIM_SEND, comm, sendbuff, NULL, count, datatype, ncclSum, peer);
  return sim_enqueue(&o, stream);
}

ncclResult_t pncclRecv(void *recvbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
                       cudaStream_t stream)
{
  struct sim_op o = sim_op_make(SIM_RECV, comm, NULL, recvbuff, count, datatype, ncclSum, peer);
  return sim_enqueue(&o, stream);
}

/* ---- Not modelled by the simulator ---- */

static ncclResult_t sim_unsupported(const char *name)
{
  return sim_error(ncclInvalidUsage, "%s is not supported by the NCCL simulator", name);
}

/* One rank of a CommInitAll clique, on its own thread: InitRank blocks
 * until every rank has arrived. */
struct initall_arg {
  ncclComm_t *comm;
  int ndev, rank;
  ncclUniqueId id;
  ncclResult_t rc;
};

static void *initall_rank(void *p)
{
  struct initall_arg *a = p;
  a->rc = pncclCommInitRank(a->comm, a->ndev, a->id, a->rank);
  return NULL;
}

/* Comm rank i is on device devlist[i] (i without a list): what
 * ncclCommCuDevice says; the simulator has no devices to choose. */
ncclResult_t pncclCommInitAll(ncclComm_t *comm, int ndev, const int *devlist)
{
  if (!comm || ndev < 1 || ndev > 64)
    return sim_error(ncclInvalidArgument, "comm is NULL or ndev %d invalid", ndev);
  struct initall_arg args[64];
  pthread_t th[64];
  ncclUniqueId id;
  ncclResult_t fail = sim_take_init_fail(); /* (not the threads' inits: the call as a whole) */
  ncclResult_t rc = pncclGetUniqueId(&id);
  if (rc != ncclSuccess)
    return rc;
  int started = 0;
  for (int i = 0; i < ndev; i++) {
    args[i] = (struct initall_arg){&comm[i], ndev, i, id, ncclSuccess};
    if (pthread_create(&th[i], NULL, initall_rank, &args[i]) != 0)
      break;
    started++;
  }
  for (int i = 0; i < started; i++)
    pthread_join(th[i], NULL);
  if (started < ndev)
    return sim_error(ncclSystemError, "cannot start %d init threads", ndev);
  for (int i = 0; i < ndev; i++)
    if (args[i].rc != ncclSuccess)
      return args[i].rc;
  if (fail != ncclSuccess) { /* the device setup of one of them failed: all are freed */
    ncclComm_t all[SIM_LOCAL_MAX];
    int n = 0;
    for (int i = 0; i < ndev && n == 0; i++)
      n = sim_comm_release(comm[i], all);
    for (int i = 0; i < n; i++)
      sim_comm_free(all[i]);
    for (int i = 0; i < ndev; i++)
      comm[i] = NULL;
    return sim_error(fail, "device setup of the communicator failed (injected)");
  }
  for (int i = 0; i < ndev; i++)
    comm[i]->cuda_dev = devlist ? devlist[i] : i;
  return ncclSuccess;
}

/* The first id is the rendezvous: every rank passes the same list. */
ncclResult_t pncclCommInitRankScalable(ncclComm_t *newcomm, int nranks, int myrank, int nId,
                                       ncclUniqueId *commIds, ncclConfig_t *config)
{
  (void)config;
  if (!commIds || nId < 1)
    return sim_error(ncclInvalidArgument, "no unique ids (nId %d)", nId);
  return pncclCommInitRank(newcomm, nranks, commIds[0], myrank);
}

/* Nothing runs asynchronously long enough to stop: succeed. */
ncclResult_t pncclCommRevoke(ncclComm_t comm, int revokeFlags)
{
  ncclResult_t rc = sim_check_comm(comm);
  if (rc != ncclSuccess)
    return rc;
  if (revokeFlags != 0)
    return sim_error(ncclInvalidArgument, "revokeFlags must be 0");
  return ncclSuccess;
}

/* Called by the surviving members only (as in NCCL): each computes its new
 * rank and the child's id from (parent, shrink index, excluded set). */
ncclResult_t pncclCommShrink(ncclComm_t comm, int *excludeRanksList, int excludeRanksCount, ncclComm_t *newcomm,
                             ncclConfig_t *config, int shrinkFlags)
{
  (void)config; (void)shrinkFlags;
  ncclResult_t rc = sim_check_comm(comm);
  if (rc != ncclSuccess)
    return rc;
  if (!newcomm || excludeRanksCount < 0 || (excludeRanksCount && !excludeRanksList))
    return sim_error(ncclInvalidArgument, "bad shrink arguments");
  return sim_comm_shrink(comm, excludeRanksList, excludeRanksCount, newcomm);
}

ncclResult_t pncclMemAlloc(void **ptr, size_t size)
{
  (void)ptr; (void)size;
  return sim_unsupported("ncclMemAlloc");
}

ncclResult_t pncclMemFree(void *ptr)
{
  (void)ptr;
  return sim_unsupported("ncclMemFree");
}

ncclResult_t pncclCommRegister(const ncclComm_t comm, void *buff, size_t size, void **handle)
{
  (void)comm; (void)buff; (void)size; (void)handle;
  return sim_unsupported("ncclCommRegister");
}

ncclResult_t pncclCommDeregister(const ncclComm_t comm, void *handle)
{
  (void)comm; (void)handle;
  return sim_unsupported("ncclCommDeregister");
}

ncclResult_t pncclCommWindowRegister(ncclComm_t comm, void *buff, size_t size, ncclWindow_t *win, int winFlags)
{
  (void)comm; (void)buff; (void)size; (void)win; (void)winFlags;
  return sim_unsupported("ncclCommWindowRegister");
}

ncclResult_t pncclCommWindowDeregister(ncclComm_t comm, ncclWindow_t win)
{
  (void)comm; (void)win;
  return sim_unsupported("ncclCommWindowDeregister");
}

ncclResult_t pncclRedOpCreatePreMulSum(ncclRedOp_t *op, void *scalar, ncclDataType_t datatype,
                                       ncclScalarResidence_t residence, ncclComm_t comm)
{
  (void)op; (void)scalar; (void)datatype; (void)residence; (void)comm;
  return sim_unsupported("ncclRedOpCreatePreMulSum");
}

ncclResult_t pncclRedOpDestroy(ncclRedOp_t op, ncclComm_t comm)
{
  (void)op; (void)comm;
  return sim_unsupported("ncclRedOpDestroy");
}

ncclResult_t pncclGroupSimulateEnd(ncclSimInfo_t *simInfo)
{
  (void)simInfo;
  return sim_unsupported("ncclGroupSimulateEnd");
}

/* ---- ncclX: weak aliases of every pncclX, generated from the table ---- */

#define SIM_ALIAS_(ret, Name, params) ret nccl##Name params __attribute__((weak, alias("pnccl" #Name)));
#define FR_COLL(code, Name, rec, params, args, c, d, o, r) SIM_ALIAS_(ncclResult_t, Name, params)
#define FR_P2P(code, Name, params, args, dir) SIM_ALIAS_(ncclResult_t, Name, params)
#define FR_CALL(code, Name, params, args) SIM_ALIAS_(ncclResult_t, Name, params)
#define FR_PASS(ret, Name, params) SIM_ALIAS_(ret, Name, params)
#include "nccl_api.def"
