/* lifecycle.c — communicator creation from unique ids: CommInitRank,
 * CommInitRankConfig, CommInitRankScalable and CommInitAll, plus the helpers
 * every lifecycle wrapper shares (derive.c, teardown.c).
 *
 * Lifecycle calls are records in the collective sequence of the comm they
 * are collective on: an init is seq 0 of the new comm (derive.c: a split or
 * shrink takes the parent's next seq; teardown.c: finalize and destroy take
 * the comm's next seq).
 */
#include <stdlib.h>
#include <string.h>

#include "identity.h"
#include "recorder.h"

void fr_life_done(fr_slot *s, uint64_t id, ncclResult_t r, uint64_t t0) {
  if (!fr_ring_get(&fr_g.ring, id)) return;
  __atomic_store_n(&s->rec.t_enqueue_ns, t0, __ATOMIC_RELAXED);
  if (r == ncclSuccess) {
    uint64_t now = fr_now_ns();
    __atomic_store_n(&s->rec.t_start_ns, t0, __ATOMIC_RELAXED);
    __atomic_store_n(&s->rec.t_complete_ns, now, __ATOMIC_RELAXED);
    __atomic_store_n(&s->rec.state, (uint8_t)FRZ_STATE_COMPLETED, __ATOMIC_RELEASE);
  }
  fr_rec_end(s, id, r);
}

fr_slot *fr_life_begin(fr_comm *c, unsigned op, unsigned kind, void *site, uint64_t *id) {
  uint64_t seq = kind == FRZ_KIND_NONE ? 0 : atomic_fetch_add(&c->next_seq, 1);
  fr_slot *s = fr_rec_begin(c, op, kind, seq, 0, -1, -1, -1, FRZ_DIR_NONE, NULL, site, id);
  fr_rec_flags_set(s, FRZ_RF_NO_TRACKING, 0);
  return s;
}

void fr_comm_ask_size(ncclComm_t comm, int *nranks, int *rank) {
  typedef ncclResult_t (*int_fn)(const ncclComm_t, int *);
  int_fn count = (int_fn)fr_resolve("pncclCommCount", "ncclCommCount");
  int_fn urank = (int_fn)fr_resolve("pncclCommUserRank", "ncclCommUserRank");
  *nranks = *rank = -1;
  if (!comm) return;
  if (count && count(comm, nranks) != ncclSuccess) *nranks = -1;
  if (urank && urank(comm, rank) != ncclSuccess) *rank = -1;
}

/* After an init from unique ids: register the comm, record its seq 0 and
 * bind NCCL's profiler context announced in `slot`. */
static void init_done(int slot, unsigned op, ncclComm_t *comm, uint64_t cid, int nranks, int rank,
                      ncclResult_t r, uint64_t t0, void *site) {
  uint32_t flags = r == ncclSuccess ? 0 : r == ncclInProgress ? FRZ_CF_PENDING : FRZ_CF_INIT_FAILED;
  uintptr_t handle = (r == ncclSuccess || r == ncclInProgress) && comm ? (uintptr_t)*comm : 0;
  fr_comm *c = fr_comm_add(handle, cid, 0, nranks, rank, flags);
  fr_prof_pending_done(slot, handle ? c : NULL, r == ncclInProgress);
  if (!c) return;
  uint64_t id;
  fr_slot *s = fr_life_begin(c, op, FRZ_KIND_LIFE, site, &id);
  fr_life_done(s, id, r, t0);
}

#define FR_PASS_IF_OFF_(call)                                                        \
  if (!atomic_load_explicit(&fr_g.enabled, memory_order_relaxed) || fr_in_wrapper) \
    return call;

FR_EXPORT ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId commId, int rank) {
  fr_CommInitRank_fn real = fr_real_CommInitRank();
  if (!real) return ncclInvalidUsage;
  FR_PASS_IF_OFF_(real(comm, nranks, commId, rank))
  fr_in_wrapper = 1;
  fr_on_first_comm();
  uint64_t t0 = fr_now_ns();
  uint64_t cid = fr_comm_id_from_unique(commId.internal, sizeof commId.internal, nranks);
  int slot = fr_prof_pending_add(cid, nranks, rank);
  ncclResult_t r = real(comm, nranks, commId, rank);
  init_done(slot, FRZ_OP_CommInitRank, comm, cid, nranks, rank, r, t0, __builtin_return_address(0));
  fr_in_wrapper = 0;
  return r;
}

FR_EXPORT ncclResult_t ncclCommInitRankConfig(ncclComm_t *comm, int nranks, ncclUniqueId commId,
                                              int rank, ncclConfig_t *config) {
  fr_CommInitRankConfig_fn real = fr_real_CommInitRankConfig();
  if (!real) return ncclInvalidUsage;
  FR_PASS_IF_OFF_(real(comm, nranks, commId, rank, config))
  fr_in_wrapper = 1;
  fr_on_first_comm();
  uint64_t t0 = fr_now_ns();
  uint64_t cid = fr_comm_id_from_unique(commId.internal, sizeof commId.internal, nranks);
  int slot = fr_prof_pending_add(cid, nranks, rank);
  ncclResult_t r = real(comm, nranks, commId, rank, config);
  init_done(slot, FRZ_OP_CommInitRankConfig, comm, cid, nranks, rank, r, t0,
            __builtin_return_address(0));
  fr_in_wrapper = 0;
  return r;
}

FR_EXPORT ncclResult_t ncclCommInitRankScalable(ncclComm_t *newcomm, int nranks, int myrank,
                                                int nId, ncclUniqueId *commIds,
                                                ncclConfig_t *config) {
  fr_CommInitRankScalable_fn real = fr_real_CommInitRankScalable();
  if (!real) return ncclInvalidUsage;
  FR_PASS_IF_OFF_(real(newcomm, nranks, myrank, nId, commIds, config))
  fr_in_wrapper = 1;
  fr_on_first_comm();
  uint64_t t0 = fr_now_ns();
  uint64_t cid = commIds && nId > 0
                     ? fr_comm_id_from_uniques(commIds, sizeof *commIds, nId, nranks)
                     : fr_comm_id_from_uniques("", 0, 0, nranks);
  int slot = fr_prof_pending_add(cid, nranks, myrank);
  ncclResult_t r = real(newcomm, nranks, myrank, nId, commIds, config);
  init_done(slot, FRZ_OP_CommInitRankScalable, newcomm, cid, nranks, myrank, r, t0,
            __builtin_return_address(0));
  fr_in_wrapper = 0;
  return r;
}

FR_EXPORT ncclResult_t ncclCommInitAll(ncclComm_t *comm, int ndev, const int *devlist) {
  static _Atomic uint64_t ncliques;
  fr_CommInitAll_fn real = fr_real_CommInitAll();
  if (!real) return ncclInvalidUsage;
  FR_PASS_IF_OFF_(real(comm, ndev, devlist))
  fr_in_wrapper = 1;
  fr_on_first_comm();
  uint64_t t0 = fr_now_ns();
  /* one comm, ndev comm ranks, all in this process */
  uint64_t cid = fr_comm_id_from_clique(fr_g.proc.host, fr_g.proc.pid,
                                        atomic_fetch_add(&ncliques, 1), ndev);
  int slots[64];
  int nslots = ndev > 0 && ndev <= 64 ? ndev : 0;
  for (int i = 0; i < nslots; i++) slots[i] = fr_prof_pending_add(cid, ndev, i);
  ncclResult_t r = real(comm, ndev, devlist);
  if (r == ncclSuccess && comm) {
    for (int i = 0; i < ndev; i++)
      init_done(i < nslots ? slots[i] : -1, FRZ_OP_CommInitAll, &comm[i], cid, ndev, i, r, t0,
                __builtin_return_address(0));
  } else {
    for (int i = 0; i < nslots; i++) fr_prof_pending_done(slots[i], NULL, 0);
    init_done(-1, FRZ_OP_CommInitAll, NULL, cid, ndev, -1, r, t0, __builtin_return_address(0));
  }
  if (r == ncclSuccess && comm && devlist)
    for (int i = 0; i < ndev; i++) {
      fr_comm *c = fr_comm_find((uintptr_t)comm[i]);
      if (c) c->cuda_device = devlist[i];
    }
  fr_in_wrapper = 0;
  return r;
}
