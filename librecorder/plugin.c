/* plugin.c — librecorder as NCCL's profiler plugin: the exported
 * ncclProfiler_v5 (NCCL 2.28) and ncclProfiler_v4 (2.27), their init and
 * finalize, and the link between NCCL's communicators and ours.
 *
 * NCCL calls init once per communicator it creates, possibly on a thread of
 * its own (asynchronous init).  The interposer's init wrappers announce the
 * comm they are creating (fr_prof_pending_add: our comm_id, nranks, rank)
 * before calling NCCL; init takes the oldest announcement of the same shape
 * and so learns our comm_id; the wrapper binds the context to the comm it
 * registers once NCCL returns (fr_prof_pending_done).  An init nobody
 * announced is a comm created behind the interposer's back — NCCL linked
 * statically into the program: its comm_id is derived from NCCL's comm hash
 * (equal on every member) and its records come from the plugin's events
 * (plugin_ops.c).
 */
#include <dlfcn.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "identity.h"
#include "profiler.h"

static fr_prof_ctx *ctxs[FR_PROF_MAX_CTX];
static _Atomic int nctxs;
static fr_prof_op *op_pool;            /* FR_PROF_OPS objects, allocated at the first init */
static _Atomic uint64_t op_next;
static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;

int fr_prof_ctx_count(void) { return atomic_load_explicit(&nctxs, memory_order_acquire); }
fr_prof_ctx *fr_prof_ctx_at(int i) { return i < fr_prof_ctx_count() ? ctxs[i] : NULL; }

fr_prof_op *fr_prof_op_claim(fr_prof_ctx *ctx) {
  if (!op_pool) return NULL;
  fr_prof_op *op = &op_pool[atomic_fetch_add_explicit(&op_next, 1, memory_order_relaxed) % FR_PROF_OPS];
  op->ctx = ctx;
  op->record_id = UINT64_MAX;
  op->seq = UINT64_MAX;
  op->kind = 0;
  op->plugin_record = 0;
  atomic_store_explicit(&op->kch_started, 0, memory_order_relaxed);
  atomic_store_explicit(&op->kch_stopped, 0, memory_order_relaxed);
  return op;
}

/* ---- comms announced by the interposer's init wrappers ------------------- */

#define PENDING_MAX 64
enum { PENDING_FREE = 0, PENDING_WAITING, PENDING_MATCHED };

typedef struct pending {
  int state;
  uint64_t comm_id;
  int32_t nranks, rank;        /* -1: not known before NCCL returns (split, shrink) */
  uint64_t order;
  fr_prof_ctx *ctx;            /* MATCHED: the context that took it */
  fr_comm *comm;               /* WAITING after a nonblocking init returned */
} pending;

static pending pendings[PENDING_MAX];
static uint64_t pending_order;

int fr_prof_pending_add(uint64_t comm_id, int nranks, int rank) {
  if (!fr_g.cfg.profiler_mask) return -1;
  pthread_mutex_lock(&init_lock);
  int slot = -1;
  for (int i = 0; i < PENDING_MAX && slot < 0; i++)
    if (pendings[i].state == PENDING_FREE) slot = i;
  if (slot >= 0)
    pendings[slot] = (pending){PENDING_WAITING, comm_id, nranks, rank, ++pending_order, NULL, NULL};
  pthread_mutex_unlock(&init_lock);
  return slot;
}

/* Bind a context to our registry entry of its comm. */
static void bind(fr_prof_ctx *ctx, fr_comm *c) {
  if (!c) return;
  __atomic_store_n(&c->nccl_hash, ctx->nccl_hash, __ATOMIC_RELAXED); /* after registration */
  atomic_store_explicit(&ctx->comm, c, memory_order_release);
}

void fr_prof_pending_done(int slot, fr_comm *c, int in_progress) {
  if (slot < 0 || slot >= PENDING_MAX) return;
  pthread_mutex_lock(&init_lock);
  pending *p = &pendings[slot];
  if (p->state == PENDING_MATCHED) {
    bind(p->ctx, c);
    p->state = PENDING_FREE;
  } else if (p->state == PENDING_WAITING && in_progress && c) {
    p->comm = c; /* NCCL's init still runs: its context binds when it comes */
  } else {
    p->state = PENDING_FREE;
  }
  pthread_mutex_unlock(&init_lock);
}

/* The oldest announcement that fits (nranks, rank); exact shapes first. */
static pending *take_pending(int nranks, int rank) {
  pending *best = NULL;
  int best_exact = 0;
  for (int i = 0; i < PENDING_MAX; i++) {
    pending *p = &pendings[i];
    if (p->state != PENDING_WAITING) continue;
    int exact = p->nranks == nranks && p->rank == rank;
    if (!exact && !((p->nranks < 0 || p->nranks == nranks) && (p->rank < 0 || p->rank == rank)))
      continue;
    if (!best || exact > best_exact || (exact == best_exact && p->order < best->order)) {
      best = p;
      best_exact = exact;
    }
  }
  return best;
}

/* ---- init / finalize ---------------------------------------------------------- */

static ncclResult_t prof_init(void **context, uint64_t hash, int *mask, int nranks, int rank) {
  *context = NULL;
  *mask = 0;
  if (!fr_g.initialized || !atomic_load(&fr_g.enabled) || !fr_g.cfg.profiler_mask) return ncclSuccess;
  fr_prof_ctx *ctx = aligned_alloc(64, (sizeof *ctx + 63) & ~(size_t)63);
  if (!ctx) return ncclSuccess; /* no memory: NCCL runs unprofiled */
  memset(ctx, 0, sizeof *ctx);
  pthread_mutex_init(&ctx->match_lock, NULL);
  ctx->nccl_hash = hash;
  ctx->nranks = nranks;
  ctx->rank = rank;
  for (int c = 0; c < FR_PROF_CHANNELS; c++) {
    atomic_store(&ctx->kernel[c].started_seq, -1);
    atomic_store(&ctx->kernel[c].stopped_seq, -1);
  }
  uint64_t head = fr_ring_head(&fr_g.ring);
  ctx->coll_cursor = ctx->p2p_cursor = head;
  pthread_mutex_lock(&init_lock);
  if (!op_pool) op_pool = aligned_alloc(64, FR_PROF_OPS * sizeof *op_pool);
  int n = atomic_load(&nctxs);
  if (!op_pool || n >= FR_PROF_MAX_CTX) {
    pthread_mutex_unlock(&init_lock);
    free(ctx);
    return ncclSuccess;
  }
  pending *p = take_pending(nranks, rank);
  if (p) {
    ctx->comm_id = p->comm_id;
    if (p->comm) { /* its nonblocking init returned already */
      bind(ctx, p->comm);
      p->state = PENDING_FREE;
    } else {
      p->ctx = ctx;
      p->state = PENDING_MATCHED;
    }
  } else {
    ctx->static_mode = 1;
    ctx->comm_id = fr_hash_finish(fr_hash_u64(fr_hash_u64(FR_HASH_SEED ^ 0x70726f66ull, hash),
                                              (uint64_t)(uint32_t)nranks));
  }
  ctx->mask = fr_g.cfg.profiler_mask;
  if (ctx->static_mode) ctx->mask |= ncclProfileCollApi | ncclProfileP2pApi;
  ctxs[n] = ctx;
  atomic_store_explicit(&nctxs, n + 1, memory_order_release);
  pthread_mutex_unlock(&init_lock);
  atomic_fetch_or_explicit(&fr_g.late_flags, FRZ_PF_PROFILER_LOADED, memory_order_relaxed);
  if (ctx->static_mode) {
    fr_on_first_comm();
    bind(ctx, fr_comm_add(0, ctx->comm_id, 0, nranks, rank, 0));
    fr_prof_init_record(ctx);
  }
  *context = ctx;
  *mask = ctx->mask;
  return ncclSuccess;
}

static ncclResult_t init_v5(void **context, uint64_t comm_id, int *mask, const char *name, int nnodes,
                            int nranks, int rank, ncclDebugLogger_t logfn) {
  (void)name, (void)nnodes, (void)logfn;
  return prof_init(context, comm_id, mask, nranks, rank);
}

static ncclResult_t init_v4(void **context, int *mask, const char *name, uint64_t hash, int nnodes,
                            int nranks, int rank, ncclDebugLogger_t logfn) {
  (void)name, (void)nnodes, (void)logfn;
  return prof_init(context, hash, mask, nranks, rank);
}

/* The context stays: the dumps report its progress, and NCCL may still
 * hold handles of it. */
static ncclResult_t finalize(void *context) {
  (void)context;
  return ncclSuccess;
}

/* ---- events ------------------------------------------------------------------- */

static void *task_v5(fr_prof_ctx *ctx, const ncclProfilerEventDescr_v5_t *d) {
  fr_prof_task t = {.type = d->type, .nccl_seq = UINT64_MAX, .root_or_peer = -1};
  if (d->type == ncclProfileCollApi) {
    t.func = d->collApi.func, t.count = d->collApi.count, t.datatype = d->collApi.datatype;
    t.root_or_peer = d->collApi.root, t.stream = d->collApi.stream;
  } else if (d->type == ncclProfileP2pApi) {
    t.func = d->p2pApi.func, t.count = d->p2pApi.count, t.datatype = d->p2pApi.datatype;
    t.stream = d->p2pApi.stream;
  } else if (d->type == ncclProfileColl) {
    t.func = d->coll.func, t.count = d->coll.count, t.datatype = d->coll.datatype;
    t.root_or_peer = d->coll.root, t.nccl_seq = d->coll.seqNumber, t.nchannels = d->coll.nChannels;
    t.algo = d->coll.algo, t.proto = d->coll.proto;
  } else {
    t.func = d->p2p.func, t.count = d->p2p.count, t.datatype = d->p2p.datatype;
    t.root_or_peer = d->p2p.peer, t.nchannels = d->p2p.nChannels;
  }
  return fr_prof_task_start(ctx, &t);
}

static ncclResult_t start_v5(void *context, void **handle, ncclProfilerEventDescr_v5_t *d) {
  fr_prof_ctx *ctx = context;
  *handle = NULL;
  if (!ctx || !d || !atomic_load_explicit(&fr_g.enabled, memory_order_relaxed)) return ncclSuccess;
  switch (d->type) {
  case ncclProfileColl: case ncclProfileP2p: case ncclProfileCollApi: case ncclProfileP2pApi:
    *handle = task_v5(ctx, d);
    break;
  case ncclProfileProxyOp:
    *handle = fr_prof_proxy_op_start(ctx, d->parentObj, d->proxyOp.pid, d->proxyOp.channelId,
                                     d->proxyOp.peer, d->proxyOp.isSend);
    break;
  case ncclProfileProxyStep: *handle = fr_prof_step_start(d->parentObj); break;
  case ncclProfileKernelCh: *handle = fr_prof_kch_start(d->parentObj, d->kernelCh.channelId); break;
  default: break;
  }
  return ncclSuccess;
}

/* v4 has no API events and a one-byte type; the rest is v5's layout
 * without parentGroup, so the fields are copied over. */
static ncclResult_t start_v4(void *context, void **handle, ncclProfilerEventDescr_v4_t *d) {
  *handle = NULL;
  if (!d) return ncclSuccess;
  ncclProfilerEventDescr_v5_t e;
  memset(&e, 0, sizeof e);
  e.type = d->type;
  e.parentObj = d->parentObj;
  e.rank = d->rank;
  if (d->type == ncclProfileColl) {
    e.coll.seqNumber = d->coll.seqNumber, e.coll.func = d->coll.func, e.coll.count = d->coll.count;
    e.coll.root = d->coll.root, e.coll.datatype = d->coll.datatype;
    e.coll.nChannels = d->coll.nChannels, e.coll.algo = d->coll.algo, e.coll.proto = d->coll.proto;
  } else if (d->type == ncclProfileP2p) {
    e.p2p.func = d->p2p.func, e.p2p.count = d->p2p.count, e.p2p.datatype = d->p2p.datatype;
    e.p2p.peer = d->p2p.peer, e.p2p.nChannels = d->p2p.nChannels;
  } else if (d->type == ncclProfileProxyOp) {
    e.proxyOp.pid = d->proxyOp.pid, e.proxyOp.channelId = d->proxyOp.channelId;
    e.proxyOp.peer = d->proxyOp.peer, e.proxyOp.isSend = d->proxyOp.isSend;
  } else if (d->type == ncclProfileProxyStep) {
    e.proxyStep.step = d->proxyStep.step;
  } else if (d->type == ncclProfileKernelCh) {
    e.kernelCh.channelId = d->kernelCh.channelId;
  } else {
    return ncclSuccess;
  }
  return start_v5(context, handle, &e);
}

static ncclResult_t stop_event(void *handle) {
  uintptr_t h = (uintptr_t)handle;
  if (!h) return ncclSuccess;
  void *obj = (void *)(h & ~(uintptr_t)FR_TAG_MASK);
  switch (h & FR_TAG_MASK) {
  case FR_TAG_OP: fr_prof_task_stop(obj, 0); break;
  case FR_TAG_API: fr_prof_task_stop(obj, 1); break;
  default: fr_prof_stop(handle); break;
  }
  return ncclSuccess;
}

static ncclResult_t state_v5(void *handle, ncclProfilerEventState_v5_t state,
                             ncclProfilerEventStateArgs_v5_t *args) {
  (void)args;
  if (handle) fr_prof_state(handle, (int)state);
  return ncclSuccess;
}

static ncclResult_t state_v4(void *handle, ncclProfilerEventState_v4_t state,
                             ncclProfilerEventStateArgs_v4_t *args) {
  return state_v5(handle, state, args);
}

FR_EXPORT ncclProfiler_v5_t ncclProfiler_v5 = {"flightrec", init_v5, start_v5, stop_event, state_v5,
                                               finalize};
FR_EXPORT ncclProfiler_v4_t ncclProfiler_v4 = {"flightrec", init_v4, start_v4, stop_event, state_v4,
                                               finalize};

/* ---- NCCL_PROFILER_PLUGIN -------------------------------------------------------- */

/* Does `value` name this library (its path, or the same file)? */
static int names_self(const char *value, const char *self) {
  if (!strcmp(value, self)) return 1;
  char a[PATH_MAX], b[PATH_MAX];
  return realpath(value, a) && realpath(self, b) && !strcmp(a, b);
}

void fr_prof_setup_env(void) {
  if (!fr_g.cfg.profiler_mask) {
    fr_g.proc.flags |= FRZ_PF_PROFILER_OFF;
    return;
  }
  Dl_info info;
  const char *self = dladdr((void *)&ncclProfiler_v5, &info) && info.dli_fname ? info.dli_fname : NULL;
  const char *cur = getenv("NCCL_PROFILER_PLUGIN");
  if (cur && *cur) {
    if (!self || !names_self(cur, self)) {
      fr_g.proc.flags |= FRZ_PF_PROFILER_FOREIGN;
      fr_log("NCCL_PROFILER_PLUGIN=%.200s is set: left alone, so NCCL will not report per-link "
             "progress to flightrec", cur);
    }
    return;
  }
  if (!self) return;
  char abs[PATH_MAX];
  /* NCCL dlopen()s the value later, maybe after a chdir: make it absolute */
  setenv("NCCL_PROFILER_PLUGIN", realpath(self, abs) ? abs : self, 1);
}
