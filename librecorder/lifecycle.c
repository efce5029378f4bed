/* lifecycle.c — the hand-written wrappers: groups and communicator
 * lifecycle (init, split, destroy, abort).
 *
 * Lifecycle calls are records in the collective sequence of the comm they
 * are collective on: CommInitRank(Config) is seq 0 of the new comm, a split
 * takes the parent's next seq, destroy the comm's next seq.  Abort is local
 * (PyTorch's watchdog aborts at whatever point each rank is), so it is
 * recorded unsequenced (kind NONE) and asks for a dump.
 */
#include <stdlib.h>
#include <string.h>

#include "identity.h"
#include "recorder.h"

#define FR_GROUP_MAX 1024

typedef struct deferred {
  fr_slot *slot;
  uint64_t id;
  cudaStream_t stream;
} deferred;

/* Per-thread group state: NCCL groups are per thread. */
static __thread int group_depth __attribute__((tls_model("initial-exec")));
static __thread uint64_t group_id __attribute__((tls_model("initial-exec")));
static __thread uint32_t ndeferred __attribute__((tls_model("initial-exec")));
static __thread deferred *deferred_ops __attribute__((tls_model("initial-exec")));

int fr_group_depth(void) { return group_depth; }
uint64_t fr_group_id(void) { return group_id; }

void fr_group_defer(fr_slot *s, uint64_t id, cudaStream_t stream) {
  if (!deferred_ops) deferred_ops = calloc(FR_GROUP_MAX, sizeof *deferred_ops);
  if (!deferred_ops || ndeferred >= FR_GROUP_MAX) {
    __atomic_or_fetch(&s->rec.flags, FRZ_RF_NO_TRACKING, __ATOMIC_RELEASE);
    return;
  }
  deferred_ops[ndeferred++] = (deferred){s, id, stream};
}

FR_EXPORT ncclResult_t ncclGroupStart(void) {
  fr_GroupStart_fn real = fr_real_GroupStart();
  if (!real) return ncclInvalidUsage;
  if (!atomic_load_explicit(&fr_g.enabled, memory_order_relaxed) || fr_in_wrapper) return real();
  ncclResult_t r = real();
  if (r == ncclSuccess && group_depth++ == 0) {
    group_id = atomic_fetch_add(&fr_g.group_ids, 1) + 1;
    ndeferred = 0;
  }
  return r;
}

FR_EXPORT ncclResult_t ncclGroupEnd(void) {
  fr_GroupEnd_fn real = fr_real_GroupEnd();
  if (!real) return ncclInvalidUsage;
  if (!atomic_load_explicit(&fr_g.enabled, memory_order_relaxed) || fr_in_wrapper) return real();
  if (group_depth == 0) return real(); /* unbalanced: NCCL will say so */
  if (--group_depth > 0) return real();
  fr_in_wrapper = 1;
  /* The batch is launched now: its start events go before, end events after. */
  for (uint32_t i = 0; i < ndeferred; i++)
    if (fr_ring_get(&fr_g.ring, deferred_ops[i].id))
      fr_track_before(deferred_ops[i].slot, deferred_ops[i].id, deferred_ops[i].stream);
  ncclResult_t r = real();
  for (uint32_t i = 0; i < ndeferred; i++) {
    deferred *d = &deferred_ops[i];
    if (!fr_ring_get(&fr_g.ring, d->id)) continue;
    fr_track_after(d->slot, d->id, d->stream, r);
    if (r != ncclSuccess && r != ncclInProgress) fr_rec_end(d->slot, d->id, r);
  }
  ndeferred = 0;
  group_id = 0;
  fr_in_wrapper = 0;
  return r;
}

/* Mark a lifecycle record done: completed on success (no device work to
 * wait for), failed on error, left enqueued while nonblocking init runs. */
static void life_done(fr_slot *s, uint64_t id, ncclResult_t r, uint64_t t0) {
  if (!fr_ring_get(&fr_g.ring, id)) return;
  s->rec.t_enqueue_ns = t0;
  if (r == ncclSuccess) {
    uint64_t now = fr_now_ns();
    __atomic_store_n(&s->rec.t_start_ns, t0, __ATOMIC_RELAXED);
    __atomic_store_n(&s->rec.t_complete_ns, now, __ATOMIC_RELAXED);
    __atomic_store_n(&s->rec.state, (uint8_t)FRZ_STATE_COMPLETED, __ATOMIC_RELEASE);
  }
  fr_rec_end(s, id, r);
}

/* Count and rank of a new comm as NCCL reports them; -1 when unknown. */
static void ask_size(ncclComm_t comm, int *nranks, int *rank) {
  typedef ncclResult_t (*int_fn)(const ncclComm_t, int *);
  int_fn count = (int_fn)fr_resolve("pncclCommCount", "ncclCommCount");
  int_fn urank = (int_fn)fr_resolve("pncclCommUserRank", "ncclCommUserRank");
  *nranks = *rank = -1;
  if (!comm) return;
  if (count && count(comm, nranks) != ncclSuccess) *nranks = -1;
  if (urank && urank(comm, rank) != ncclSuccess) *rank = -1;
}

/* After CommInitRank(Config): register the comm and record its seq 0. */
static void init_done(unsigned op, ncclComm_t *comm, int nranks, int rank,
                      const ncclUniqueId *uid, ncclResult_t r, uint64_t t0, void *site) {
  uint64_t cid = fr_comm_id_from_unique(uid->internal, sizeof uid->internal, nranks);
  uint32_t flags = r == ncclSuccess ? 0 : r == ncclInProgress ? FRZ_CF_PENDING : FRZ_CF_INIT_FAILED;
  uintptr_t handle = (r == ncclSuccess || r == ncclInProgress) && comm ? (uintptr_t)*comm : 0;
  fr_comm *c = fr_comm_add(handle, cid, 0, nranks, rank, flags);
  if (!c) return;
  uint64_t id;
  uint64_t seq = atomic_fetch_add(&c->next_seq, 1);
  fr_slot *s = fr_rec_begin(c, op, FRZ_KIND_LIFE, seq, 0, -1, -1, -1, FRZ_DIR_NONE, NULL, site, &id);
  __atomic_or_fetch(&s->rec.flags, FRZ_RF_NO_TRACKING, __ATOMIC_RELAXED);
  life_done(s, id, r, t0);
}

FR_EXPORT ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId commId, int rank) {
  fr_CommInitRank_fn real = fr_real_CommInitRank();
  if (!real) return ncclInvalidUsage;
  if (!atomic_load_explicit(&fr_g.enabled, memory_order_relaxed) || fr_in_wrapper)
    return real(comm, nranks, commId, rank);
  fr_in_wrapper = 1;
  fr_on_first_comm();
  uint64_t t0 = fr_now_ns();
  ncclResult_t r = real(comm, nranks, commId, rank);
  init_done(FRZ_OP_CommInitRank, comm, nranks, rank, &commId, r, t0, __builtin_return_address(0));
  fr_in_wrapper = 0;
  return r;
}

FR_EXPORT ncclResult_t ncclCommInitRankConfig(ncclComm_t *comm, int nranks, ncclUniqueId commId,
                                              int rank, ncclConfig_t *config) {
  fr_CommInitRankConfig_fn real = fr_real_CommInitRankConfig();
  if (!real) return ncclInvalidUsage;
  if (!atomic_load_explicit(&fr_g.enabled, memory_order_relaxed) || fr_in_wrapper)
    return real(comm, nranks, commId, rank, config);
  fr_in_wrapper = 1;
  fr_on_first_comm();
  uint64_t t0 = fr_now_ns();
  ncclResult_t r = real(comm, nranks, commId, rank, config);
  init_done(FRZ_OP_CommInitRankConfig, comm, nranks, rank, &commId, r, t0,
            __builtin_return_address(0));
  fr_in_wrapper = 0;
  return r;
}

FR_EXPORT ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t *newcomm,
                                     ncclConfig_t *config) {
  fr_CommSplit_fn real = fr_real_CommSplit();
  if (!real) return ncclInvalidUsage;
  if (!atomic_load_explicit(&fr_g.enabled, memory_order_relaxed) || fr_in_wrapper)
    return real(comm, color, key, newcomm, config);
  fr_in_wrapper = 1;
  fr_comm *parent = fr_comm_get((uintptr_t)comm);
  uint64_t t0 = fr_now_ns(), id = 0, index = 0;
  fr_slot *s = NULL;
  if (parent) {
    index = atomic_fetch_add(&parent->nsplits, 1);
    uint64_t seq = atomic_fetch_add(&parent->next_seq, 1);
    /* peer holds the color: the split's only per-rank argument worth comparing */
    s = fr_rec_begin(parent, FRZ_OP_CommSplit, FRZ_KIND_LIFE, seq, 0, -1, -1, -1, FRZ_DIR_NONE,
                     NULL, __builtin_return_address(0), &id);
    __atomic_or_fetch(&s->rec.flags, FRZ_RF_NO_TRACKING, __ATOMIC_RELAXED);
  }
  ncclResult_t r = real(comm, color, key, newcomm, config);
  if (s) life_done(s, id, r, t0);
  if (parent && (r == ncclSuccess || r == ncclInProgress) && newcomm && *newcomm) {
    int n, rk;
    ask_size(*newcomm, &n, &rk);
    uint64_t cid = fr_comm_id_from_split(parent->comm_id, index, color);
    uint32_t flags = FRZ_CF_SPLIT | (r == ncclInProgress ? FRZ_CF_PENDING : 0);
    fr_comm *c = fr_comm_add((uintptr_t)*newcomm, cid, parent->comm_id, n, rk, flags);
    if (c) {
      c->split_color = color;
      c->split_key = key;
    }
  }
  fr_in_wrapper = 0;
  return r;
}

/* Destroy (sequenced) and abort (local) share this path. */
static ncclResult_t end_comm(ncclComm_t comm, ncclResult_t (*real)(ncclComm_t), unsigned op,
                             void *site) {
  fr_in_wrapper = 1;
  fr_comm *c = fr_comm_find((uintptr_t)comm);
  fr_slot *s = NULL;
  uint64_t id = 0, t0 = fr_now_ns();
  if (c) {
    int abort = op == FRZ_OP_CommAbort;
    uint64_t seq = abort ? 0 : atomic_fetch_add(&c->next_seq, 1);
    s = fr_rec_begin(c, op, abort ? FRZ_KIND_NONE : FRZ_KIND_LIFE, seq, 0, -1, -1, -1,
                     FRZ_DIR_NONE, NULL, site, &id);
    __atomic_or_fetch(&s->rec.flags, FRZ_RF_NO_TRACKING, __ATOMIC_RELAXED);
    fr_comm_retire(c, abort ? FRZ_CF_ABORTED : FRZ_CF_DESTROYED);
    if (abort) fr_request_dump(FRZ_TRIGGER_ABORT);
  }
  ncclResult_t r = real(comm);
  if (s) life_done(s, id, r, t0);
  fr_in_wrapper = 0;
  return r;
}

FR_EXPORT ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  fr_CommDestroy_fn real = fr_real_CommDestroy();
  if (!real) return ncclInvalidUsage;
  if (!atomic_load_explicit(&fr_g.enabled, memory_order_relaxed) || fr_in_wrapper) return real(comm);
  return end_comm(comm, real, FRZ_OP_CommDestroy, __builtin_return_address(0));
}

FR_EXPORT ncclResult_t ncclCommAbort(ncclComm_t comm) {
  fr_CommAbort_fn real = fr_real_CommAbort();
  if (!real) return ncclInvalidUsage;
  if (!atomic_load_explicit(&fr_g.enabled, memory_order_relaxed) || fr_in_wrapper) return real(comm);
  return end_comm(comm, real, FRZ_OP_CommAbort, __builtin_return_address(0));
}
