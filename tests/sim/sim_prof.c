/* sim_prof.c — the simulator calls a profiler plugin the way NCCL 2.28 does.
 *
 * Loading (once, at the first communicator): NCCL_PROFILER_PLUGIN names a
 * library path or NAME for libnccl-profiler-NAME.so; STATIC_PLUGIN looks in
 * the program itself; unset means libnccl-profiler.so; "none" turns it off.
 * The symbol ncclProfiler_v5 is preferred, then ncclProfiler_v4
 * (FR_SIM_PROFILER_VERSION=4 skips v5, to test the 2.27 interface).
 *
 * Per communicator: init with NCCL's comm hash (here the FNV-1a hash of the
 * unique id, equal on every member), finalize when it goes.  Events, each
 * only when its type is in the mask init returned:
 *   CollApi / P2pApi  around the API call (v5 only);
 *   Coll / P2p        at launch (the call, or the outermost GroupEnd), with
 *                     NCCL's per-function seqNumber, the algorithm and
 *                     protocol (sim_choose_algo: "Ring" / "Simple" unless
 *                     NCCL_ALGO, NCCL_PROTO or a knob say otherwise) and
 *                     the channel count; stopped once launched;
 *   KernelCh          per channel, from the start of the op on the stream
 *                     to its end;
 *   ProxyOp           per (channel, peer, direction) of the op;
 *   ProxyStep         per transfer: send SendGPUWait (8) -> SendPeerWait
 *                     (20, data ready but no free buffer at the receiver)
 *                     -> SendWait (9) -> stop; receive RecvWait (10) ->
 *                     RecvFlushWait (11) -> RecvGPUWait (12) -> stop.
 */
#include "config.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "sim_nccl.h"

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static ncclProfiler_v5_t *v5;
static ncclProfiler_v4_t *v4;

static void *open_plugin(const char *name)
{
  if (!name || !*name)
    return dlopen("libnccl-profiler.so", RTLD_NOW | RTLD_LOCAL);
  if (!strcasecmp(name, "none"))
    return NULL;
  if (!strcasecmp(name, "STATIC_PLUGIN"))
    return dlopen(NULL, RTLD_NOW | RTLD_LOCAL);
  void *h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
  if (!h && !strchr(name, '/')) {
    char lib[512];
    snprintf(lib, sizeof lib, "libnccl-profiler-%s.so", name);
    h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
  }
  return h;
}

static void load_plugin(void)
{
  void *h = open_plugin(getenv("NCCL_PROFILER_PLUGIN"));
  if (!h)
    return;
  const char *ver = getenv("FR_SIM_PROFILER_VERSION");
  if (!ver || strcmp(ver, "4") != 0)
    v5 = dlsym(h, "ncclProfiler_v5");
  if (!v5)
    v4 = dlsym(h, "ncclProfiler_v4");
}

void sim_prof_comm_init(ncclComm_t comm)
{
  pthread_once(&load_once, load_plugin);
  comm->prof_ctx = NULL;
  comm->prof_mask = 0;
  if (comm->nranks < 2)
    return;                     /* NCCL does not profile single-rank communicators */
  uint64_t hash = sim_hash(comm->id, NCCL_UNIQUE_ID_BYTES);
  void *ctx = NULL;
  int mask = 0;
  ncclResult_t rc = ncclInternalError;
  if (v5)
    rc = v5->init(&ctx, hash, &mask, NULL, 1, comm->nranks, comm->rank, NULL);
  else if (v4)
    rc = v4->init(&ctx, &mask, NULL, hash, 1, comm->nranks, comm->rank, NULL);
  if (rc == ncclSuccess) {
    comm->prof_ctx = ctx;
    comm->prof_mask = mask;
  }
}

void sim_prof_comm_fini(ncclComm_t comm)
{
  if (comm->prof_ctx && (v5 || v4))
    (v5 ? v5->finalize : v4->finalize)(comm->prof_ctx);
  comm->prof_ctx = NULL;
  comm->prof_mask = 0;
}

/* Starts an event described in v5 terms (converted for a v4 plugin). */
static void *start(ncclComm_t comm, ncclProfilerEventDescr_v5_t *d)
{
  if (!comm || !comm->prof_ctx || !(comm->prof_mask & (int)d->type))
    return NULL;
  void *h = NULL;
  d->rank = comm->rank;
  if (v5) {
    v5->startEvent(comm->prof_ctx, &h, d);
    return h;
  }
  ncclProfilerEventDescr_v4_t e;
  memset(&e, 0, sizeof e);
  e.type = (uint8_t)d->type;
  e.parentObj = d->parentObj;
  e.rank = d->rank;
  switch (d->type) {
  case ncclProfileColl:
    e.coll.seqNumber = d->coll.seqNumber, e.coll.func = d->coll.func, e.coll.count = d->coll.count;
    e.coll.root = d->coll.root, e.coll.datatype = d->coll.datatype, e.coll.nChannels = d->coll.nChannels;
    e.coll.algo = d->coll.algo, e.coll.proto = d->coll.proto;
    break;
  case ncclProfileP2p:
    e.p2p.func = d->p2p.func, e.p2p.count = d->p2p.count, e.p2p.datatype = d->p2p.datatype;
    e.p2p.peer = d->p2p.peer, e.p2p.nChannels = d->p2p.nChannels;
    break;
  case ncclProfileProxyOp:
    e.proxyOp.pid = d->proxyOp.pid, e.proxyOp.channelId = d->proxyOp.channelId;
    e.proxyOp.peer = d->proxyOp.peer, e.proxyOp.nSteps = d->proxyOp.nSteps;
    e.proxyOp.isSend = d->proxyOp.isSend;
    break;
  case ncclProfileProxyStep: e.proxyStep.step = d->proxyStep.step; break;
  case ncclProfileKernelCh: e.kernelCh.channelId = d->kernelCh.channelId; break;
  default: return NULL;         /* no API events in v4 */
  }
  v4->startEvent(comm->prof_ctx, &h, &e);
  return h;
}

void sim_prof_stop(ncclComm_t comm, void *handle)
{
  (void)comm;
  if (handle)
    (v5 ? v5->stopEvent : v4->stopEvent)(handle);
}

static const char *func_name(enum sim_kind k)
{
  static const char *names[] = { "AllReduce", "Broadcast", "Reduce", "AllGather", "ReduceScatter",
                                 "AlltoAll", "Gather", "Scatter", "Send", "Recv" };
  return names[k];
}

static const char *dtype_name(ncclDataType_t t)
{
  static const char *names[] = { "ncclInt8", "ncclUint8", "ncclInt32", "ncclUint32", "ncclInt64",
                                 "ncclUint64", "ncclFloat16", "ncclFloat32", "ncclFloat64",
                                 "ncclBfloat16", "ncclFloat8e4m3", "ncclFloat8e5m2" };
  return (int)t >= 0 && (int)t < ncclNumTypes ? names[t] : "unknown";
}

static int is_p2p(const struct sim_op *op)
{
  return op->kind == SIM_SEND || op->kind == SIM_RECV;
}

void *sim_prof_api_start(const struct sim_op *op, cudaStream_t stream)
{
  ncclProfilerEventDescr_v5_t d;
  memset(&d, 0, sizeof d);
  if (is_p2p(op)) {
    d.type = ncclProfileP2pApi;
    d.p2pApi.func = func_name(op->kind), d.p2pApi.count = op->count;
    d.p2pApi.datatype = dtype_name(op->dtype), d.p2pApi.stream = stream;
  } else {
    d.type = ncclProfileCollApi;
    d.collApi.func = func_name(op->kind), d.collApi.count = op->count;
    d.collApi.datatype = dtype_name(op->dtype), d.collApi.root = op->peer < 0 ? 0 : op->peer;
    d.collApi.stream = stream;
  }
  return v5 ? start(op->comm, &d) : NULL;
}

void sim_prof_api_stop(ncclComm_t comm, void *handle)
{
  sim_prof_stop(comm, handle);
}

void sim_prof_task_start(struct sim_op *op)
{
  ncclComm_t c = op->comm;
  op->prof = NULL;
  if (!c->prof_ctx || (op->count == 0 && !is_p2p(op)))
    return;                     /* NCCL does not profile empty collectives */
  ncclProfilerEventDescr_v5_t d;
  memset(&d, 0, sizeof d);
  if (is_p2p(op)) {
    d.type = ncclProfileP2p;
    d.p2p.func = func_name(op->kind), d.p2p.count = op->count, d.p2p.datatype = dtype_name(op->dtype);
    d.p2p.peer = op->peer, d.p2p.nChannels = 1;
    d.p2p.buff = op->kind == SIM_SEND ? (void *)op->sendbuff : op->recvbuff;
  } else {
    d.type = ncclProfileColl;
    d.coll.seqNumber = c->seq_number[op->kind]++;
    d.coll.func = func_name(op->kind), d.coll.count = op->count, d.coll.datatype = dtype_name(op->dtype);
    d.coll.root = op->peer < 0 ? 0 : op->peer, d.coll.nChannels = SIM_CHANNELS, d.coll.nWarps = 16;
    d.coll.sendBuff = op->sendbuff, d.coll.recvBuff = op->recvbuff;
    d.coll.algo = sim_algo_names[op->algo], d.coll.proto = sim_proto_names[op->proto];
  }
  op->prof = start(c, &d);
}

void *sim_prof_proxy_op(const struct sim_op *op, int channel, int peer, int is_send, int nsteps)
{
  ncclProfilerEventDescr_v5_t d;
  memset(&d, 0, sizeof d);
  d.type = ncclProfileProxyOp;
  d.parentObj = op->prof;
  d.proxyOp.pid = getpid();
  d.proxyOp.channelId = (uint8_t)channel;
  d.proxyOp.peer = peer;
  d.proxyOp.nSteps = nsteps;
  d.proxyOp.chunkSize = 0;
  d.proxyOp.isSend = is_send;
  return start(op->comm, &d);
}

void *sim_prof_kernel_ch(const struct sim_op *op, int channel)
{
  if (!op->prof)
    return NULL;
  ncclProfilerEventDescr_v5_t d;
  memset(&d, 0, sizeof d);
  d.type = ncclProfileKernelCh;
  d.parentObj = op->prof;
  d.kernelCh.channelId = (uint8_t)channel;
  return start(op->comm, &d);
}

void sim_prof_step_begin(struct sim_xfer *x, void *proxy_op)
{
  x->step = NULL;
  x->step_state = 0;
  if (!proxy_op)
    return;
  ncclProfilerEventDescr_v5_t d;
  memset(&d, 0, sizeof d);
  d.type = ncclProfileProxyStep;
  d.parentObj = proxy_op;
  x->step = start(x->comm, &d);
  sim_prof_step_state(x, x->is_send ? ncclProfilerProxyStepSendGPUWait : ncclProfilerProxyStepRecvWait);
}

void sim_prof_step_state(struct sim_xfer *x, int state)
{
  if (!x->step || x->step_state == state)
    return;
  x->step_state = state;
  if (v5)
    v5->recordEventState(x->step, (ncclProfilerEventState_v5_t)state, NULL);
  else
    v4->recordEventState(x->step, (ncclProfilerEventState_v4_t)state, NULL);
}

void sim_prof_step_end(struct sim_xfer *x)
{
  if (!x->step)
    return;
  sim_prof_stop(x->comm, x->step);
  x->step = NULL;
}
