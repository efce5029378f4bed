/* wrappers.c — the NCCL entry points, generated from nccl_api.def.
 *
 * Every wrapper: resolve the real function once (pnccl<Name>, else
 * nccl<Name>), pass straight through when the recorder is off or when this
 * thread is already inside a wrapper (ncclBcast calls ncclBroadcast), else
 * fill one ring record, record the start event, call NCCL, record the end
 * event and the result, and return NCCL's result unchanged.
 */
#include <execinfo.h>
#include <string.h>
#include <unistd.h>

#include "recorder.h"

__thread int fr_in_wrapper __attribute__((tls_model("initial-exec")));
static __thread uint32_t tid_cache __attribute__((tls_model("initial-exec")));

uint32_t fr_gettid(void) {
  if (FR_UNLIKELY(tid_cache == 0)) tid_cache = (uint32_t)gettid();
  return tid_cache;
}

/* FR_BACKTRACE=N: the caller's stack above the wrapper, into the slot's
 * share of fr_g.bt (costly: microseconds; off by default). */
static void capture_backtrace(uint64_t id) {
  void *frames[FRZ_BACKTRACE_MAX + 8];
  uint32_t want = fr_g.cfg.backtrace_depth;
  int n = backtrace(frames, (int)want + 8);
  /* skip to our own frames (a sanitizer's backtrace() may add its own
   * first), then past them (this function, the wrapper): the caller's stack
   * starts there; without any frame of ours, keep everything */
  int k = 0;
  while (k < n && !((uintptr_t)frames[k] >= fr_g.self_lo && (uintptr_t)frames[k] < fr_g.self_hi)) k++;
  if (k == n) k = 0;
  while (k < n && (uintptr_t)frames[k] >= fr_g.self_lo && (uintptr_t)frames[k] < fr_g.self_hi) k++;
  uint64_t slot = id & fr_g.ring.mask;
  uint32_t got = 0;
  for (; k < n && got < want; k++) fr_g.bt[slot * want + got++] = (uint64_t)(uintptr_t)frames[k];
  fr_g.bt_depth[slot] = (uint8_t)got;
}

fr_slot *fr_rec_begin(fr_comm *c, unsigned op, unsigned kind, uint64_t seq, uint64_t count,
                      int dtype, int redop, int peer, int dir, cudaStream_t stream,
                      void *call_site, uint64_t *id_out, uint32_t flags0) {
  uint64_t id;
  fr_slot *s = fr_ring_claim(&fr_g.ring, &id);
  frz_record *r = &s->rec;
  int grouped = fr_group_depth() > 0;
  r->id = id;
  r->comm_id = c ? c->comm_id : 0;
  /* which of this process's comm ranks made it (ncclCommInitAll: several) */
  r->comm_rank = c ? c->rank : -1;
  int32_t dev = c ? __atomic_load_n(&c->cuda_device, __ATOMIC_RELAXED) : -1;
  r->cuda_device = dev >= 0 && dev <= 254 ? (uint8_t)dev : FRZ_CUDA_DEVICE_UNKNOWN;
  r->seq = seq;
  r->count = count;
  r->stream = (uint64_t)(uintptr_t)stream;
  r->call_site = (uint64_t)(uintptr_t)call_site;
  r->group_id = grouped ? fr_group_id() : 0;
  /* fields the watchdog reads with atomics, even of a slot being reused */
  __atomic_store_n(&r->t_enqueue_ns, fr_now_ns(), __ATOMIC_RELAXED);
  __atomic_store_n(&r->t_start_ns, 0, __ATOMIC_RELAXED);
  __atomic_store_n(&r->t_complete_ns, 0, __ATOMIC_RELAXED);
  r->tid = fr_gettid();
  r->peer = peer;
  r->op = (uint16_t)op;
  r->kind = (uint8_t)kind;
  r->dir = (uint8_t)dir;
  r->dtype = (dtype < 0 || dtype > 254) ? 255 : (uint8_t)dtype;
  r->redop = (redop < 0 || redop > 254) ? 255 : (uint8_t)redop;
  __atomic_store_n(&r->state, (uint8_t)FRZ_STATE_ENQUEUED, __ATOMIC_RELAXED);
  r->nccl_seq = UINT64_MAX; /* until NCCL's profiler describes it */
  r->algo = FRZ_ALGO_UNKNOWN;
  r->proto = FRZ_PROTO_UNKNOWN;
  r->nchannels = 0;
  __atomic_store_n(&r->replay, 0, __ATOMIC_RELAXED); /* (the watchdog compares replays' atomically) */
  __atomic_store_n(&r->graph_id, 0, __ATOMIC_RELAXED);
  r->graph_op = 0;
  r->graph_ops = 0;
  __atomic_store_n(&r->flags, FRZ_RF_IN_CALL | flags0 | (grouped ? FRZ_RF_IN_GROUP | FRZ_RF_GROUP_OPEN : 0u),
                   __ATOMIC_RELAXED);
  __atomic_store_n(&r->result, -1, __ATOMIC_RELAXED);
  atomic_store_explicit(&s->ev_armed, 0, memory_order_relaxed);
  __atomic_store_n(&s->ev_lead, UINT64_MAX, __ATOMIC_RELAXED); /* (a replay's: set by graphs.c) */
  s->no_coll_event = 0;
  if (c) /* informative only: a plain increment (no locked RMW on every call) */
    atomic_store_explicit(&c->nrecords, atomic_load_explicit(&c->nrecords, memory_order_relaxed) + 1,
                          memory_order_relaxed);
  if (FR_UNLIKELY(fr_g.bt != NULL)) capture_backtrace(id);
  fr_ring_publish(s, id);
  *id_out = id;
  return s;
}

void fr_rec_end(fr_slot *s, uint64_t id, ncclResult_t r) {
  if (!fr_ring_get(&fr_g.ring, id)) return; /* lapped meanwhile */
  __atomic_store_n(&s->rec.result, (int32_t)r, __ATOMIC_RELAXED);
  if (r != ncclSuccess && r != ncclInProgress)
    __atomic_store_n(&s->rec.state, (uint8_t)FRZ_STATE_FAILED, __ATOMIC_RELEASE);
  fr_rec_flags_set(s, 0, FRZ_RF_IN_CALL);
}

static void flag(fr_slot *s, uint32_t f) { fr_rec_flags_set(s, f, 0); }

void fr_track_before(fr_slot *s, uint64_t id, cudaStream_t stream) {
  const fr_device *d = fr_device_active();
  if (!fr_g.cfg.track_completion || !d) {
    flag(s, FRZ_RF_NO_TRACKING);
  } else if (d->capturing(stream)) {
    flag(s, FRZ_RF_GRAPH_CAPTURED | FRZ_RF_NO_TRACKING);
    fr_graph_capture(s, id, stream);
  } else if (d->mark(s, 0, stream) != 0) {
    flag(s, FRZ_RF_NO_TRACKING);
  }
}

void fr_track_after(fr_slot *s, uint64_t id, cudaStream_t stream, ncclResult_t r) {
  if (__atomic_load_n(&s->rec.flags, __ATOMIC_ACQUIRE) & FRZ_RF_NO_TRACKING) return;
  if (r != ncclSuccess && r != ncclInProgress) return; /* failed: nothing was enqueued */
  const fr_device *d = fr_device_active();
  if (!d || !fr_ring_get(&fr_g.ring, id)) return;
  if (d->mark(s, 1, stream) != 0) flag(s, FRZ_RF_NO_TRACKING);
}

/* Events around one call: now, or at the outermost GroupEnd when grouped.
 * With tracking off (FR_TRACK_COMPLETION=0) an ungrouped call's record
 * was flagged NO_TRACKING when it was made (untracked()): nothing to do. */
static inline void before_call(fr_slot *s, uint64_t id, fr_comm *c, cudaStream_t stream) {
  if (fr_group_depth() > 0)
    fr_group_defer(s, id, c, stream);
  else if (fr_g.cfg.track_completion)
    fr_track_before(s, id, stream);
}

static inline void after_call(fr_slot *s, uint64_t id, cudaStream_t stream, ncclResult_t r) {
  if (fr_group_depth() == 0 && fr_g.cfg.track_completion) fr_track_after(s, id, stream, r);
  fr_rec_end(s, id, r);
}

/* The flags a wrapper's record starts with besides IN_CALL: NO_TRACKING
 * for an ungrouped call with tracking off (what fr_track_before would set). */
static inline uint32_t untracked(void) {
  return fr_group_depth() == 0 && !fr_g.cfg.track_completion ? FRZ_RF_NO_TRACKING : 0u;
}

/* Load or resolve a real function pointer; NULL when NCCL lacks it. */
#define FR_REAL_PTR_(Name)                                                          \
  Name##_fn real = __atomic_load_n(&real_##Name, __ATOMIC_ACQUIRE);                 \
  if (FR_UNLIKELY(!real)) {                                                         \
    real = (Name##_fn)fr_resolve("pnccl" #Name, "nccl" #Name);                      \
    if (!real) {                                                                    \
      fr_note_missing("nccl" #Name);                                                \
      return ncclInvalidUsage;                                                      \
    }                                                                               \
    __atomic_store_n(&real_##Name, real, __ATOMIC_RELEASE);                         \
  }

/* One recorded wrapper: RECORD (a statement using `c`) claims the record
 * of this call on comm `c` and sets `s` and `id`. */
#define FR_WRAPPER_(Name, params, args, RECORD)                                     \
  typedef ncclResult_t (*Name##_fn) params;                                         \
  static Name##_fn real_##Name;                                                     \
  FR_EXPORT ncclResult_t nccl##Name params {                                        \
    FR_REAL_PTR_(Name)                                                              \
    if (!atomic_load_explicit(&fr_g.enabled, memory_order_relaxed) || fr_in_wrapper) \
      return real args;                                                             \
    fr_in_wrapper = 1;                                                              \
    fr_comm *c = fr_comm_get((uintptr_t)comm);                                      \
    fr_slot *s = NULL;                                                              \
    uint64_t id = 0;                                                                \
    if (c) {                                                                        \
      RECORD;                                                                       \
      before_call(s, id, c, stream);                                                \
    }                                                                               \
    ncclResult_t r = real args;                                                     \
    if (s) after_call(s, id, stream, r);                                            \
    fr_in_wrapper = 0;                                                              \
    return r;                                                                       \
  }

/* The next value of counter *p: a load and a store, not a locked add.  The
 * counters are a comm's, and NCCL forbids calling one communicator from
 * several threads at once (its documentation, "Thread safety"): the
 * application serializes them. */
static inline uint64_t next_of(_Atomic uint64_t *p) {
  uint64_t v = atomic_load_explicit(p, memory_order_relaxed);
  atomic_store_explicit(p, v + 1, memory_order_relaxed);
  return v;
}

/* A collective: the comm's next collective seq. */
#define FR_COLL(code, Name, rec, params, args, cnt, dt, ro, rt)                      \
  FR_WRAPPER_(Name, params, args,                                                   \
              s = fr_rec_begin(c, FRZ_OP_##rec, FRZ_KIND_COLL, next_of(&c->next_seq),  \
                               (uint64_t)(cnt), (int)(dt), (int)(ro), (int)(rt),    \
                               FRZ_DIR_NONE, stream, __builtin_return_address(0), &id, untracked()))

uint64_t fr_p2p_seq(fr_comm *c, int peer, int dir) {
  if (!c->p2p_seq || peer < 0 || peer >= c->nranks) return UINT64_MAX;
  return next_of(&c->p2p_seq[(size_t)peer * 2 + (size_t)dir - 1]);
}

#define FR_P2P(code, Name, params, args, dir)                                       \
  FR_WRAPPER_(Name, params, args,                                                   \
              s = fr_rec_begin(c, FRZ_OP_##Name, FRZ_KIND_P2P, fr_p2p_seq(c, peer, dir), \
                               (uint64_t)count, (int)datatype, -1, peer, dir, stream, \
                               __builtin_return_address(0), &id, untracked()))

/* Resolvers for the hand-written wrappers of lifecycle.c. */
#define FR_CALL(code, Name, params, args)                                           \
  static fr_##Name##_fn real_##Name;                                                \
  fr_##Name##_fn fr_real_##Name(void) {                                             \
    fr_##Name##_fn p = __atomic_load_n(&real_##Name, __ATOMIC_ACQUIRE);             \
    if (FR_UNLIKELY(!p)) {                                                          \
      p = (fr_##Name##_fn)fr_resolve("pnccl" #Name, "nccl" #Name);                  \
      if (!p) fr_note_missing("nccl" #Name);                                        \
      __atomic_store_n(&real_##Name, p, __ATOMIC_RELEASE);                          \
    }                                                                               \
    return p;                                                                       \
  }

#define FR_CALL_229(code, Name, params, args) FR_CALL(code, Name, params, args)
#include "nccl_api.def"

/* RCCL's own entry points (rccl.h, beside NCCL's API): ncclAllToAll, the
 * all-to-all of NCCL 2.28's ncclAlltoAll under RCCL's older name, and
 * ncclAllToAllv, per-peer counts and displacements (in elements).  Both
 * are recorded as the comm's next AlltoAll collective; AllToAllv's count
 * is what this rank sends in all (as a PyTorch all_to_all_v_single is
 * read).  RCCL runs them as one group of a send and a receive per peer
 * (its collectives.cc), so NCCL's profiler reports P2p events, not a Coll
 * event, for them: the plugin must not pair them with one.  Its mscclLoadAlgo,
 * mscclRunAlgo and mscclUnloadAlgo are not wrapped: they pass straight to RCCL. */
static uint64_t total_count(const size_t *counts, int n) {
  uint64_t t = 0;
  for (int i = 0; counts && i < n; i++) t += counts[i];
  return t;
}
#define FR_RCCL_A2A_(Name, params, args, cnt)                                          \
  FR_WRAPPER_(Name, params, args,                                                   \
              s = fr_rec_begin(c, FRZ_OP_AlltoAll, FRZ_KIND_COLL, next_of(&c->next_seq), \
                               (uint64_t)(cnt), (int)datatype, -1, -1, FRZ_DIR_NONE,   \
                               stream, __builtin_return_address(0), &id, untracked());  \
              s->no_coll_event = 1)
FR_RCCL_A2A_(AllToAll,
             (const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype, ncclComm_t comm,
              cudaStream_t stream),
             (sendbuff, recvbuff, count, datatype, comm, stream), count)
FR_RCCL_A2A_(AllToAllv,
             (const void *sendbuff, const size_t sendcounts[], const size_t sdispls[], void *recvbuff,
              const size_t recvcounts[], const size_t rdispls[], ncclDataType_t datatype, ncclComm_t comm,
              cudaStream_t stream),
             (sendbuff, sendcounts, sdispls, recvbuff, recvcounts, rdispls, datatype, comm, stream),
             total_count(sendcounts, c->nranks))
