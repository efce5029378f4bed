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
  fr_slot *s = fr_rec_begin(c, op, kind, seq, 0, -1, -1, -1, FRZ_DIR_NONE, NULL, site, id, 0);
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

/* An init from unique ids being made: the comm registered at entry (no
 * handle yet, PENDING) and its seq 0 recorded in call, so that a rank blocked
 * in init leaves evidence and the watchdog times the init out like any op. */
init_call fr_init_begin(unsigned op, uint64_t cid, int nranks, int rank, int device, void *site) {
  init_call ic = {fr_comm_add(0, cid, 0, nranks, rank, FRZ_CF_PENDING), NULL, 0};
  if (ic.c) {
    /* (after the comm is visible to the watchdog's dumps: an atomic store) */
    __atomic_store_n(&ic.c->cuda_device, device, __ATOMIC_RELAXED);
    ic.s = fr_life_begin(ic.c, op, FRZ_KIND_LIFE, site, &ic.id);
  }
  return ic;
}

/* NCCL returned r: bind the handle, settle the flags, finish seq 0 and bind
 * NCCL's profiler context announced in `slot`. */
void fr_init_end(init_call *ic, int slot, ncclComm_t *comm, ncclResult_t r, uint64_t t0) {
  int ok = r == ncclSuccess || r == ncclInProgress;
  uintptr_t handle = ok && comm ? (uintptr_t)*comm : 0;
  if (ic->c) {
    fr_comm_bind(ic->c, handle);
    if (r == ncclSuccess) atomic_fetch_and(&ic->c->flags, ~(uint32_t)FRZ_CF_PENDING);
    else if (!ok)
      atomic_store(&ic->c->flags, (atomic_load(&ic->c->flags) & ~(uint32_t)FRZ_CF_PENDING) | FRZ_CF_INIT_FAILED);
  }
  fr_prof_pending_done(slot, handle ? ic->c : NULL, r == ncclInProgress);
  if (ic->s) fr_life_done(ic->s, ic->id, r, t0);
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
  init_call ic = fr_init_begin(FRZ_OP_CommInitRank, cid, nranks, rank, -1, __builtin_return_address(0));
  ncclResult_t r = real(comm, nranks, commId, rank);
  fr_init_end(&ic, slot, comm, r, t0);
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
  init_call ic =
      fr_init_begin(FRZ_OP_CommInitRankConfig, cid, nranks, rank, -1, __builtin_return_address(0));
  ncclResult_t r = real(comm, nranks, commId, rank, config);
  fr_init_end(&ic, slot, comm, r, t0);
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
  init_call ic =
      fr_init_begin(FRZ_OP_CommInitRankScalable, cid, nranks, myrank, -1, __builtin_return_address(0));
  ncclResult_t r = real(newcomm, nranks, myrank, nId, commIds, config);
  fr_init_end(&ic, slot, newcomm, r, t0);
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
  /* comm rank i is device devlist[i] (or i): all of them registered at entry */
  init_call ics[64];
  int slots[64];
  int n = ndev > 0 && ndev <= 64 ? ndev : 0;
  void *site = __builtin_return_address(0);
  for (int i = 0; i < n; i++) {
    slots[i] = fr_prof_pending_add(cid, ndev, i);
    ics[i] = fr_init_begin(FRZ_OP_CommInitAll, cid, ndev, i, devlist ? devlist[i] : i, site);
  }
  ncclResult_t r = real(comm, ndev, devlist);
  for (int i = 0; i < n; i++)
    fr_init_end(&ics[i], slots[i], r == ncclSuccess && comm ? &comm[i] : NULL, r, t0);
  if (n == 0) { /* an ndev NCCL refuses: the failed call, on no comm rank */
    init_call ic = fr_init_begin(FRZ_OP_CommInitAll, cid, ndev, -1, -1, site);
    fr_init_end(&ic, -1, NULL, r, t0);
  }
  fr_in_wrapper = 0;
  return r;
}
