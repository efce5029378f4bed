/* graphs.c — NCCL calls captured into CUDA graphs, and every replay of them.
 *
 * An NCCL call made on a stream that is being captured (CUDA stream
 * capture) runs nothing: NCCL adds its kernel (and a host node for its
 * proxy) to the graph under construction, and every launch of an
 * executable instantiated from that graph runs the collective again, with
 * no NCCL call.  So:
 *
 *   capture   the captured call's record (flagged GRAPH_CAPTURED, no events)
 *             is remembered, in order, as an op of the graph being captured,
 *             which the driver names (cuStreamGetCaptureInfo_v2's graph_out:
 *             the graph cuStreamEndCapture will return); the graph gets this
 *             process's next graph id (from 1, in capture order).
 *   instantiate  cuGraphInstantiate (every exported version) ties the
 *             executable to the graph's ops; cuGraphClone gives the clone
 *             the same ops under a new id; cuGraphExecUpdate moves an
 *             executable to the ops of its new graph.
 *   launch    cuGraphLaunch (and its per-thread-stream variant) appends one
 *             record per captured op, flagged GRAPH_REPLAY, each with its
 *             comm's next seq (collective or p2p), so replays align across
 *             ranks as eager calls do; ops captured in one NCCL group share
 *             a fresh group id per replay.  One pair of CUDA events is
 *             recorded on the launch stream around the whole graph, in the
 *             replay's first record; the others share it (the watchdog
 *             copies the first record's start and completion to them).
 *
 * Frameworks that link the CUDA runtime statically get the driver's entry
 * points from cuGetProcAddress: both exported versions of it
 * (cuGetProcAddress, CUDA 11.3; cuGetProcAddress_v2, CUDA 12.0) are
 * interposed too, and hand out these wrappers for the driver functions
 * they wrap.  Not followed: a lookup made with dlsym on a handle of
 * libcuda.so.1 (it never reaches a preloaded library), graphs built by
 * hand from nodes (cuGraphAddKernelNode: no NCCL call is seen), child
 * graphs (a captured graph inside another), a graph launched into a
 * capture, and captures with FR_TRACK_COMPLETION=0 (capture is detected
 * by the tracking).
 *
 * Capture, instantiation and destruction take a mutex (they are rare and
 * slow in the driver too); a launch finds its executable without a lock.
 * Tables are fixed: FR_MAX_GRAPHS graphs and FR_MAX_EXECS executables;
 * beyond them, launches pass through unrecorded.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "recorder.h"
#include "device.h"

/* A graph's number as frz records hold it: 1..65535, counting on past that
 * modulo 65535 (0 means none). */
static uint16_t graph_no(uint32_t id) { return (uint16_t)((id - 1) % 65535u + 1); }

#define FR_MAX_GRAPHS 1024
#define FR_MAX_EXECS 4096
#define FR_GRAPH_OPS_MAX 65535

typedef struct CUgraph_st *CUgraph;
typedef struct CUgraphExec_st *CUgraphExec;
typedef struct CUgraphNode_st *CUgraphNode;
typedef unsigned long long cuuint64_t;

/* cuGraphInstantiateWithParams' parameters (CUDA 12.0's cuda.h). */
typedef struct fr_graph_instantiate_params {
  cuuint64_t flags;
  CUstream hUploadStream;
  CUgraphNode hErrNode_out;
  int result_out;
} fr_graph_instantiate_params;

/* The driver functions this file defines (the driver's prototypes; the
 * CUDA 11 ones where the name kept them). */
FR_EXPORT CUresult cuGraphLaunch(CUgraphExec hGraphExec, CUstream hStream);
FR_EXPORT CUresult cuGraphLaunch_ptsz(CUgraphExec hGraphExec, CUstream hStream);
FR_EXPORT CUresult cuGraphInstantiateWithFlags(CUgraphExec *phGraphExec, CUgraph hGraph, unsigned long long flags);
FR_EXPORT CUresult cuGraphInstantiateWithParams(CUgraphExec *phGraphExec, CUgraph hGraph,
                                                fr_graph_instantiate_params *params);
FR_EXPORT CUresult cuGraphInstantiateWithParams_ptsz(CUgraphExec *phGraphExec, CUgraph hGraph,
                                                     fr_graph_instantiate_params *params);
FR_EXPORT CUresult cuGraphInstantiate_v2(CUgraphExec *phGraphExec, CUgraph hGraph, CUgraphNode *phErrorNode,
                                         char *logBuffer, size_t bufferSize);
FR_EXPORT CUresult cuGraphInstantiate(CUgraphExec *phGraphExec, CUgraph hGraph, CUgraphNode *phErrorNode,
                                      char *logBuffer, size_t bufferSize);
FR_EXPORT CUresult cuGraphClone(CUgraph *phGraphClone, CUgraph originalGraph);
FR_EXPORT CUresult cuGraphExecUpdate_v2(CUgraphExec hGraphExec, CUgraph hGraph, void *resultInfo);
FR_EXPORT CUresult cuGraphExecUpdate(CUgraphExec hGraphExec, CUgraph hGraph, CUgraphNode *hErrorNode_out,
                                     int *updateResult_out);
FR_EXPORT CUresult cuGraphExecDestroy(CUgraphExec hGraphExec);
FR_EXPORT CUresult cuGraphDestroy(CUgraph hGraph);
FR_EXPORT CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags);
FR_EXPORT CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
                                       void *symbolStatus);

/* One NCCL call captured into a graph: what each replay runs again. */
typedef struct graph_op {
  fr_comm *comm;
  uint64_t count, call_site;
  int32_t peer;
  uint16_t op;
  uint8_t kind, dir, dtype, redop;
  uint32_t group;              /* 0 none; else ops with the same value were one NCCL group */
  uint64_t capture_group;      /* the captured record's group id (to number `group`) */
} graph_op;

typedef struct fr_graph {
  CUgraph handle;              /* the driver's graph; NULL once destroyed (the ops stay) */
  struct fr_graph *origin;     /* the captured graph (itself, or the one a clone was made from) */
  uint32_t id;                 /* the captured graph's: from 1, in capture order */
  uint32_t nops, cap;
  int frozen;                  /* instantiated: no more ops */
  graph_op *ops;
  _Atomic uint64_t replays;    /* launches of its executables so far */
} fr_graph;

typedef struct exec_entry {
  _Atomic uintptr_t exec;      /* CUgraphExec; 0 free (never reused once taken) */
  fr_graph *_Atomic graph;     /* NULL: destroyed, or not ours to record */
} exec_entry;

static pthread_mutex_t graph_lock = PTHREAD_MUTEX_INITIALIZER;
static fr_graph graphs[FR_MAX_GRAPHS];
static uint32_t ngraphs;
static uint32_t ncaptured;     /* graph ids handed out */
static exec_entry execs[FR_MAX_EXECS];

/* ---- the real driver functions ------------------------------------------ */

/* A driver function by its exported name: the next definition after ours,
 * else libcuda.so.1's if it is loaded (dlopen()ed locally, as the CUDA
 * runtime does). */
static void *driver_sym(const char *name) {
  void *p = dlsym(RTLD_NEXT, name);
  if (p) return p;
  void *h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
  return h ? dlsym(h, name) : NULL;
}

#define REAL_(var, name)                                            \
  static void *_Atomic var##_p;                                     \
  void *var = atomic_load_explicit(&var##_p, memory_order_acquire); \
  if (FR_UNLIKELY(!var)) {                                          \
    var = driver_sym(name);                                         \
    atomic_store_explicit(&var##_p, var, memory_order_release);     \
  }

/* ---- tables ----------------------------------------------------------------- */

static fr_graph *graph_by_handle(CUgraph h) {
  for (uint32_t i = 0; h && i < ngraphs; i++)
    if (graphs[i].handle == h) return &graphs[i];
  return NULL;
}

static fr_graph *graph_new(CUgraph h) {
  if (ngraphs == FR_MAX_GRAPHS) return NULL;
  fr_graph *g = &graphs[ngraphs];
  memset(g, 0, sizeof *g);
  g->handle = h;
  g->origin = g;
  ngraphs++;
  g->id = ++ncaptured;
  return g;
}

static uint32_t exec_hash(uintptr_t e) { return (uint32_t)((e >> 4) * 2654435761u) % FR_MAX_EXECS; }

/* The graph whose ops executable e replays; NULL when not ours (lock-free). */
static fr_graph *exec_graph(CUgraphExec e) {
  uintptr_t key = (uintptr_t)e;
  uint32_t i = exec_hash(key);
  for (uint32_t probe = 0; probe < FR_MAX_EXECS; probe++, i = (i + 1) % FR_MAX_EXECS) {
    uintptr_t k = atomic_load_explicit(&execs[i].exec, memory_order_acquire);
    if (k == key) return atomic_load_explicit(&execs[i].graph, memory_order_acquire);
    if (k == 0) return NULL;
  }
  return NULL;
}

/* Tie executable e to g (NULL: forget it).  Under graph_lock. */
static void exec_set(CUgraphExec e, fr_graph *g) {
  uintptr_t key = (uintptr_t)e;
  uint32_t i = exec_hash(key);
  for (uint32_t probe = 0; key && probe < FR_MAX_EXECS; probe++, i = (i + 1) % FR_MAX_EXECS) {
    uintptr_t k = atomic_load_explicit(&execs[i].exec, memory_order_relaxed);
    if (k == 0 && !g) return;
    if (k == 0) {
      atomic_store_explicit(&execs[i].graph, g, memory_order_relaxed);
      atomic_store_explicit(&execs[i].exec, key, memory_order_release);
      return;
    }
    if (k == key) {
      atomic_store_explicit(&execs[i].graph, g, memory_order_release);
      return;
    }
  }
}

/* ---- capture ---------------------------------------------------------------- */

/* The comm rank that made record r (a capture is rare: a scan will do). */
static fr_comm *comm_of(const frz_record *r) {
  uint32_t n = fr_comm_count();
  for (uint32_t i = 0; r->comm_id && i < n; i++) {
    fr_comm *c = fr_comm_at(i);
    if (c && c->comm_id == r->comm_id && c->rank == r->comm_rank) return c;
  }
  return NULL;
}

typedef CUresult (*capture_info_fn)(CUstream, CUstreamCaptureStatus *, cuuint64_t *, CUgraph *,
                                    const CUgraphNode **, size_t *);

void fr_graph_capture(fr_slot *s, uint64_t id, cudaStream_t stream) {
  REAL_(info, "cuStreamGetCaptureInfo_v2")
  CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
  cuuint64_t cid = 0;
  CUgraph h = NULL;
  if (!info || ((capture_info_fn)info)((CUstream)stream, &st, &cid, &h, NULL, NULL) != CUDA_SUCCESS ||
      st != CU_STREAM_CAPTURE_STATUS_ACTIVE || !h)
    return;
  const frz_record *r = &s->rec;
  fr_comm *c = comm_of(r);
  if (!c) return;
  pthread_mutex_lock(&graph_lock);
  fr_graph *g = graph_by_handle(h);
  if (g && g->frozen) g = NULL; /* a handle the driver reused after a destroy we missed */
  if (!g) g = graph_new(h);
  if (g && g->nops == g->cap && g->nops < FR_GRAPH_OPS_MAX) {
    uint32_t cap = g->cap ? 2 * g->cap : 8;
    graph_op *ops = realloc(g->ops, cap * sizeof *ops);
    if (ops) {
      g->ops = ops;
      g->cap = cap;
    }
  }
  if (g && g->nops < g->cap && fr_ring_get(&fr_g.ring, id) == s) {
    graph_op *o = &g->ops[g->nops];
    *o = (graph_op){.comm = c, .count = r->count, .call_site = r->call_site, .peer = r->peer, .op = r->op,
                    .kind = r->kind, .dir = r->dir, .dtype = r->dtype, .redop = r->redop,
                    .capture_group = r->group_id};
    /* number the groups of the graph: 1, 2, ... in order of their first op */
    for (uint32_t k = 0; r->group_id && k < g->nops && !o->group; k++)
      if (g->ops[k].capture_group == r->group_id) o->group = g->ops[k].group;
    if (r->group_id && !o->group) {
      uint32_t top = 0;
      for (uint32_t k = 0; k < g->nops; k++)
        if (g->ops[k].group > top) top = g->ops[k].group;
      o->group = top + 1;
    }
    s->rec.graph_id = graph_no(g->id);
    s->rec.graph_op = (uint16_t)g->nops;
    g->nops++;
  }
  pthread_mutex_unlock(&graph_lock);
}

/* ---- replay ----------------------------------------------------------------- */

static inline uint64_t next_of(_Atomic uint64_t *p) {
  uint64_t v = atomic_load_explicit(p, memory_order_relaxed);
  atomic_store_explicit(p, v + 1, memory_order_relaxed);
  return v;
}

/* Record ids of the replay in progress on this thread (grown on demand). */
static __thread uint64_t *replay_ids __attribute__((tls_model("initial-exec")));
static __thread uint32_t replay_cap __attribute__((tls_model("initial-exec")));

/* The records of one launch of g on `stream`, before the driver call; the
 * number made (their ids in replay_ids), 0 when none could be. */
static uint32_t replay_begin(fr_graph *g, cudaStream_t stream, void *site) {
  uint32_t n = g->nops;
  if (n > replay_cap) {
    uint64_t *ids = realloc(replay_ids, n * sizeof *ids);
    if (!ids) return 0;
    replay_ids = ids;
    replay_cap = n;
  }
  uint64_t replay = atomic_fetch_add_explicit(&g->origin->replays, 1, memory_order_relaxed);
  uint64_t groups[8] = {0}; /* the replay's group ids of graph groups 1..8; later ones get one each */
  int track = fr_g.cfg.track_completion && fr_device_active() == &fr_device_cuda;
  fr_slot *lead = NULL;
  for (uint32_t k = 0; k < n; k++) {
    const graph_op *o = &g->ops[k];
    fr_comm *c = o->comm;
    uint64_t seq = o->kind == FRZ_KIND_P2P ? fr_p2p_seq(c, o->peer, o->dir) : next_of(&c->next_seq);
    uint64_t id;
    fr_slot *s = fr_rec_begin(c, o->op, o->kind, seq, o->count, o->dtype == 255 ? -1 : o->dtype,
                              o->redop == 255 ? -1 : o->redop, o->peer, o->dir, stream,
                              o->call_site ? (void *)(uintptr_t)o->call_site : site, &id,
                              FRZ_RF_GRAPH_REPLAY | (track ? 0u : FRZ_RF_NO_TRACKING));
    if (o->group) {
      uint64_t *gid = o->group <= 8 ? &groups[o->group - 1] : NULL;
      uint64_t v = gid && *gid ? *gid : atomic_fetch_add(&fr_g.group_ids, 1) + 1;
      if (gid) *gid = v;
      s->rec.group_id = v;
      fr_rec_flags_set(s, FRZ_RF_IN_GROUP, 0);
    }
    /* (atomic: the watchdog compares a follower's with its lead's) */
    __atomic_store_n(&s->rec.replay, (uint32_t)replay, __ATOMIC_RELAXED); /* (modulo 2^32, as frz says) */
    __atomic_store_n(&s->rec.graph_id, graph_no(g->id), __ATOMIC_RELAXED);
    s->rec.graph_op = (uint16_t)k;
    s->rec.graph_ops = (uint8_t)(n > 255 ? 255 : n); /* (255: that many or more) */
    if (!lead) lead = s;
    replay_ids[k] = id;
    /* the replay's events are its first record's; until this store the
     * watchdog leaves the record alone (UINT64_MAX, fr_rec_begin) */
    __atomic_store_n(&s->ev_lead, replay_ids[0], __ATOMIC_RELEASE);
  }
  if (track && lead && fr_device_cuda.mark(lead, 0, stream) != 0)
    for (uint32_t k = 0; k < n; k++) {
      fr_slot *s = fr_ring_get(&fr_g.ring, replay_ids[k]);
      if (s) fr_rec_flags_set(s, FRZ_RF_NO_TRACKING, 0);
    }
  return n;
}

/* The driver returned r for the launch: the end event, and the calls'
 * "results" (a failed launch ran nothing: FAILED, ncclUnhandledCudaError). */
static void replay_end(uint32_t n, cudaStream_t stream, CUresult r) {
  if (!n) return;
  fr_slot *lead = fr_ring_get(&fr_g.ring, replay_ids[0]);
  int untracked = !lead || (__atomic_load_n(&lead->rec.flags, __ATOMIC_ACQUIRE) & FRZ_RF_NO_TRACKING);
  if (r == CUDA_SUCCESS && !untracked && fr_device_cuda.mark(lead, 1, stream) != 0) untracked = 1;
  for (uint32_t k = 0; k < n; k++) {
    fr_slot *s = fr_ring_get(&fr_g.ring, replay_ids[k]);
    if (!s) continue;
    if (untracked) fr_rec_flags_set(s, FRZ_RF_NO_TRACKING, 0);
    fr_rec_end(s, replay_ids[k], r == CUDA_SUCCESS ? ncclSuccess : ncclUnhandledCudaError);
  }
}

uint8_t fr_graph_stamp_follower(fr_slot *s, uint64_t id) {
  frz_record *r = &s->rec;
  uint8_t state = __atomic_load_n(&r->state, __ATOMIC_ACQUIRE);
  fr_slot *lead = fr_ring_get(&fr_g.ring, __atomic_load_n(&s->ev_lead, __ATOMIC_ACQUIRE));
  if (!lead || __atomic_load_n(&lead->rec.replay, __ATOMIC_RELAXED) != __atomic_load_n(&r->replay, __ATOMIC_RELAXED) ||
      __atomic_load_n(&lead->rec.graph_id, __ATOMIC_RELAXED) != __atomic_load_n(&r->graph_id, __ATOMIC_RELAXED)) {
    /* lapped: nothing will say more of it */
    if (fr_ring_get(&fr_g.ring, id) == s) fr_rec_flags_set(s, FRZ_RF_NO_TRACKING, 0);
    return state;
  }
  uint8_t ls = __atomic_load_n(&lead->rec.state, __ATOMIC_ACQUIRE);
  if (ls == FRZ_STATE_FAILED || ls <= state) return state;
  uint32_t lf = __atomic_load_n(&lead->rec.flags, __ATOMIC_ACQUIRE);
  if (state == FRZ_STATE_ENQUEUED)
    __atomic_store_n(&r->t_start_ns, __atomic_load_n(&lead->rec.t_start_ns, __ATOMIC_RELAXED), __ATOMIC_RELAXED);
  if (ls == FRZ_STATE_COMPLETED)
    __atomic_store_n(&r->t_complete_ns, __atomic_load_n(&lead->rec.t_complete_ns, __ATOMIC_RELAXED),
                     __ATOMIC_RELAXED);
  fr_rec_flags_set(s, lf & FRZ_RF_GPU_TIMED, FRZ_RF_GPU_TIMED & ~lf);
  if (fr_ring_get(&fr_g.ring, id) == s) fr_rec_state_advance(s, ls);
  return ls;
}

/* ---- the driver's entry points ---------------------------------------------- */

typedef CUresult (*launch_fn)(CUgraphExec, CUstream);

static CUresult launch(launch_fn real, CUgraphExec e, CUstream stream, void *site) {
  if (!real) return CUDA_ERROR_NOT_SUPPORTED;
  if (!atomic_load_explicit(&fr_g.enabled, memory_order_relaxed) || fr_in_wrapper) return real(e, stream);
  fr_graph *g = exec_graph(e);
  if (!g || fr_device_cuda.capturing((cudaStream_t)stream)) return real(e, stream);
  fr_in_wrapper = 1;
  uint32_t n = replay_begin(g, (cudaStream_t)stream, site);
  CUresult r = real(e, stream);
  replay_end(n, (cudaStream_t)stream, r);
  fr_in_wrapper = 0;
  return r;
}

FR_EXPORT CUresult cuGraphLaunch(CUgraphExec hGraphExec, CUstream hStream) {
  REAL_(real, "cuGraphLaunch")
  return launch((launch_fn)real, hGraphExec, hStream, __builtin_return_address(0));
}

/* The per-thread default stream variant (cudaStreamPerThread). */
FR_EXPORT CUresult cuGraphLaunch_ptsz(CUgraphExec hGraphExec, CUstream hStream) {
  REAL_(real, "cuGraphLaunch_ptsz")
  return launch((launch_fn)real, hGraphExec, hStream, __builtin_return_address(0));
}

/* The executable *e (made by the driver with result r) replays g's ops. */
static CUresult instantiated(CUresult r, CUgraphExec *e, CUgraph g) {
  if (r != CUDA_SUCCESS || !e || !*e) return r;
  pthread_mutex_lock(&graph_lock);
  fr_graph *fg = graph_by_handle(g);
  if (fg) fg->frozen = 1;
  exec_set(*e, fg);
  pthread_mutex_unlock(&graph_lock);
  return r;
}

FR_EXPORT CUresult cuGraphInstantiateWithFlags(CUgraphExec *phGraphExec, CUgraph hGraph,
                                               unsigned long long flags) {
  REAL_(real, "cuGraphInstantiateWithFlags")
  if (!real) return CUDA_ERROR_NOT_SUPPORTED;
  CUresult r = ((CUresult(*)(CUgraphExec *, CUgraph, unsigned long long))real)(phGraphExec, hGraph, flags);
  return instantiated(r, phGraphExec, hGraph);
}

typedef CUresult (*inst_params_fn)(CUgraphExec *, CUgraph, fr_graph_instantiate_params *);

FR_EXPORT CUresult cuGraphInstantiateWithParams(CUgraphExec *phGraphExec, CUgraph hGraph,
                                                fr_graph_instantiate_params *params) {
  REAL_(real, "cuGraphInstantiateWithParams")
  if (!real) return CUDA_ERROR_NOT_SUPPORTED;
  return instantiated(((inst_params_fn)real)(phGraphExec, hGraph, params), phGraphExec, hGraph);
}

FR_EXPORT CUresult cuGraphInstantiateWithParams_ptsz(CUgraphExec *phGraphExec, CUgraph hGraph,
                                                     fr_graph_instantiate_params *params) {
  REAL_(real, "cuGraphInstantiateWithParams_ptsz")
  if (!real) return CUDA_ERROR_NOT_SUPPORTED;
  return instantiated(((inst_params_fn)real)(phGraphExec, hGraph, params), phGraphExec, hGraph);
}

typedef CUresult (*inst_v2_fn)(CUgraphExec *, CUgraph, CUgraphNode *, char *, size_t);

/* The driver's instantiation `real` (CUDA 11's signature), then follow the
 * executable. */
static CUresult instantiate_v2(void *real, CUgraphExec *phGraphExec, CUgraph hGraph, CUgraphNode *phErrorNode,
                               char *logBuffer, size_t bufferSize) {
  if (!real) return CUDA_ERROR_NOT_SUPPORTED;
  CUresult r = ((inst_v2_fn)real)(phGraphExec, hGraph, phErrorNode, logBuffer, bufferSize);
  return instantiated(r, phGraphExec, hGraph);
}

/* CUDA 11's cuGraphInstantiate (cuda.h maps it to _v2; both exported). */
FR_EXPORT CUresult cuGraphInstantiate_v2(CUgraphExec *phGraphExec, CUgraph hGraph, CUgraphNode *phErrorNode,
                                         char *logBuffer, size_t bufferSize) {
  REAL_(real, "cuGraphInstantiate_v2")
  return instantiate_v2(real, phGraphExec, hGraph, phErrorNode, logBuffer, bufferSize);
}

FR_EXPORT CUresult cuGraphInstantiate(CUgraphExec *phGraphExec, CUgraph hGraph, CUgraphNode *phErrorNode,
                                      char *logBuffer, size_t bufferSize) {
  REAL_(real, "cuGraphInstantiate")
  return instantiate_v2(real, phGraphExec, hGraph, phErrorNode, logBuffer, bufferSize);
}

FR_EXPORT CUresult cuGraphClone(CUgraph *phGraphClone, CUgraph originalGraph) {
  REAL_(real, "cuGraphClone")
  if (!real) return CUDA_ERROR_NOT_SUPPORTED;
  CUresult r = ((CUresult(*)(CUgraph *, CUgraph))real)(phGraphClone, originalGraph);
  if (r != CUDA_SUCCESS || !phGraphClone || !*phGraphClone) return r;
  pthread_mutex_lock(&graph_lock);
  fr_graph *o = graph_by_handle(originalGraph);
  graph_op *ops = o && o->nops ? malloc(o->nops * sizeof *ops) : NULL;
  fr_graph *c = ops ? graph_new(*phGraphClone) : NULL;
  if (c) {
    memcpy(ops, o->ops, o->nops * sizeof *ops);
    c->ops = ops;
    c->nops = c->cap = o->nops;
    c->frozen = 1; /* a clone is not captured into */
    c->origin = o->origin; /* its replays are the captured graph's */
    c->id = o->id;
    ncaptured--; /* (graph_new handed out an id) */
    o->frozen = 1;
  } else {
    free(ops);
  }
  pthread_mutex_unlock(&graph_lock);
  return r;
}

static CUresult updated(CUresult r, CUgraphExec e, CUgraph g) {
  if (r != CUDA_SUCCESS) return r;
  pthread_mutex_lock(&graph_lock);
  fr_graph *fg = graph_by_handle(g);
  if (fg) fg->frozen = 1;
  exec_set(e, fg);
  pthread_mutex_unlock(&graph_lock);
  return r;
}

FR_EXPORT CUresult cuGraphExecUpdate_v2(CUgraphExec hGraphExec, CUgraph hGraph, void *resultInfo) {
  REAL_(real, "cuGraphExecUpdate_v2")
  if (!real) return CUDA_ERROR_NOT_SUPPORTED;
  return updated(((CUresult(*)(CUgraphExec, CUgraph, void *))real)(hGraphExec, hGraph, resultInfo), hGraphExec,
                 hGraph);
}

/* CUDA 11's signature: (exec, graph, hErrorNode_out, updateResult_out). */
FR_EXPORT CUresult cuGraphExecUpdate(CUgraphExec hGraphExec, CUgraph hGraph, CUgraphNode *hErrorNode_out,
                                     int *updateResult_out) {
  REAL_(real, "cuGraphExecUpdate")
  if (!real) return CUDA_ERROR_NOT_SUPPORTED;
  CUresult r = ((CUresult(*)(CUgraphExec, CUgraph, CUgraphNode *, int *))real)(hGraphExec, hGraph, hErrorNode_out,
                                                                               updateResult_out);
  return updated(r, hGraphExec, hGraph);
}

FR_EXPORT CUresult cuGraphExecDestroy(CUgraphExec hGraphExec) {
  REAL_(real, "cuGraphExecDestroy")
  if (!real) return CUDA_ERROR_NOT_SUPPORTED;
  pthread_mutex_lock(&graph_lock);
  exec_set(hGraphExec, NULL);
  pthread_mutex_unlock(&graph_lock);
  return ((CUresult(*)(CUgraphExec))real)(hGraphExec);
}

FR_EXPORT CUresult cuGraphDestroy(CUgraph hGraph) {
  REAL_(real, "cuGraphDestroy")
  if (!real) return CUDA_ERROR_NOT_SUPPORTED;
  pthread_mutex_lock(&graph_lock);
  fr_graph *g = graph_by_handle(hGraph);
  if (g) g->handle = NULL; /* its executables keep its ops */
  pthread_mutex_unlock(&graph_lock);
  return ((CUresult(*)(CUgraph))real)(hGraph);
}

/* ---- cuGetProcAddress ------------------------------------------------------- */

/* The wrapped driver functions, by exported name. */
static const struct {
  const char *name;
  void *ours;
} wrapped[] = {
  {"cuGraphLaunch", (void *)cuGraphLaunch},
  {"cuGraphLaunch_ptsz", (void *)cuGraphLaunch_ptsz},
  {"cuGraphInstantiateWithFlags", (void *)cuGraphInstantiateWithFlags},
  {"cuGraphInstantiateWithParams", (void *)cuGraphInstantiateWithParams},
  {"cuGraphInstantiateWithParams_ptsz", (void *)cuGraphInstantiateWithParams_ptsz},
  {"cuGraphInstantiate_v2", (void *)cuGraphInstantiate_v2},
  {"cuGraphInstantiate", (void *)cuGraphInstantiate},
  {"cuGraphClone", (void *)cuGraphClone},
  {"cuGraphExecUpdate_v2", (void *)cuGraphExecUpdate_v2},
  {"cuGraphExecUpdate", (void *)cuGraphExecUpdate},
  {"cuGraphExecDestroy", (void *)cuGraphExecDestroy},
  {"cuGraphDestroy", (void *)cuGraphDestroy},
  {"cuGetProcAddress", NULL},      /* filled below: ours */
  {"cuGetProcAddress_v2", NULL},
};
#define NWRAPPED (sizeof wrapped / sizeof wrapped[0])

/* What the lookup returned (*pfn): the driver's own function of one of the
 * names above is swapped for ours.  Matching by address, not by name, so
 * the version the driver chose for the caller's CUDA version (and stream
 * mode) is the one wrapped, with its own signature. */
static void swap_in(void **pfn, void *gpa, void *gpa2) {
  static void *_Atomic real_of[NWRAPPED];
  static _Atomic int resolved;
  if (!pfn || !*pfn) return;
  if (!atomic_load_explicit(&resolved, memory_order_acquire)) {
    for (size_t i = 0; i < NWRAPPED; i++)
      atomic_store_explicit(&real_of[i], driver_sym(wrapped[i].name), memory_order_relaxed);
    atomic_store_explicit(&resolved, 1, memory_order_release);
  }
  for (size_t i = 0; i < NWRAPPED; i++) {
    void *r = atomic_load_explicit(&real_of[i], memory_order_relaxed);
    if (r && r == *pfn) {
      void *ours = wrapped[i].ours ? wrapped[i].ours : i == NWRAPPED - 1 ? gpa2 : gpa;
      if (ours) *pfn = ours;
      return;
    }
  }
}

typedef CUresult (*gpa_fn)(const char *, void **, int, cuuint64_t);
typedef CUresult (*gpa2_fn)(const char *, void **, int, cuuint64_t, void *);

FR_EXPORT CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags) {
  REAL_(real, "cuGetProcAddress")
  if (!real) return CUDA_ERROR_NOT_SUPPORTED;
  CUresult r = ((gpa_fn)real)(symbol, pfn, cudaVersion, flags);
  if (r == CUDA_SUCCESS) swap_in(pfn, (void *)cuGetProcAddress, (void *)cuGetProcAddress_v2);
  return r;
}

FR_EXPORT CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
                                       void *symbolStatus) {
  REAL_(real, "cuGetProcAddress_v2")
  if (!real) return CUDA_ERROR_NOT_SUPPORTED;
  CUresult r = ((gpa2_fn)real)(symbol, pfn, cudaVersion, flags, symbolStatus);
  if (r == CUDA_SUCCESS) swap_in(pfn, (void *)cuGetProcAddress, (void *)cuGetProcAddress_v2);
  return r;
}
