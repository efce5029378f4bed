/* derive.c — communicators made from another one: CommSplit, CommShrink
 * (NCCL 2.27+) and CommGrow / CommGetUniqueId (NCCL 2.29+).
 *
 * A split is a record in the parent's collective sequence (every member of
 * the parent calls it); a shrink, which only the survivors call, is seq 0
 * of the child (and an unsequenced record on the parent).  The child's
 * identity is a hash of (parent comm_id, index of this split/shrink on the
 * parent, color / excluded set), which every member computes alike.
 */
#include "identity.h"
#include "recorder.h"

#define FR_PASS_IF_OFF_(call)                                                        \
  if (!atomic_load_explicit(&fr_g.enabled, memory_order_relaxed) || fr_in_wrapper) \
    return call;

/* Register the child of `parent` returned in *newcomm and bind the
 * profiler context announced in `slot` to it.  A creation that failed
 * (`member`: this rank asked for a child) registers the child without a
 * handle, its size and rank unknown, flagged INIT_FAILED, as a failed init
 * from unique ids is: the other members' child has that comm id, and this
 * rank's dump says it never got it (returned, with no handle). */
static fr_comm *add_child(int slot, fr_comm *parent, ncclComm_t *newcomm, ncclResult_t r,
                          uint64_t cid, uint32_t flags, int member) {
  fr_comm *c = NULL;
  if (parent && (r == ncclSuccess || r == ncclInProgress) && newcomm && *newcomm) {
    int n, rk;
    fr_comm_ask_size(*newcomm, &n, &rk);
    if (r == ncclInProgress) flags |= FRZ_CF_PENDING;
    c = fr_comm_add((uintptr_t)*newcomm, cid, parent->comm_id, n, rk, flags);
  } else if (parent && member && r != ncclSuccess && r != ncclInProgress) {
    fr_prof_pending_done(slot, NULL, 0);
    return fr_comm_add(0, cid, parent->comm_id, -1, -1, flags | FRZ_CF_INIT_FAILED);
  }
  fr_prof_pending_done(slot, c, r == ncclInProgress);
  return c;
}

FR_EXPORT ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t *newcomm,
                                     ncclConfig_t *config) {
  fr_CommSplit_fn real = fr_real_CommSplit();
  if (!real) return ncclInvalidUsage;
  FR_PASS_IF_OFF_(real(comm, color, key, newcomm, config))
  fr_in_wrapper = 1;
  fr_comm *parent = fr_comm_get((uintptr_t)comm);
  uint64_t t0 = fr_now_ns(), id = 0, index = 0;
  fr_slot *s = NULL;
  if (parent) {
    index = atomic_fetch_add(&parent->nsplits, 1);
    s = fr_life_begin(parent, FRZ_OP_CommSplit, FRZ_KIND_LIFE, __builtin_return_address(0), &id);
  }
  uint64_t cid = parent ? fr_comm_id_from_split(parent->comm_id, index, color) : 0;
  int slot = parent && color != NCCL_SPLIT_NOCOLOR ? fr_prof_pending_add(cid, -1, -1) : -1;
  ncclResult_t r = real(comm, color, key, newcomm, config);
  if (s) fr_life_done(s, id, r, t0);
  fr_comm *c = add_child(slot, parent, newcomm, r, cid, FRZ_CF_SPLIT, color != NCCL_SPLIT_NOCOLOR);
  if (c) {
    /* set just after registration: the watchdog may be summarizing it */
    __atomic_store_n(&c->split_color, color, __ATOMIC_RELAXED);
    __atomic_store_n(&c->split_key, key, __ATOMIC_RELAXED);
  }
  fr_in_wrapper = 0;
  return r;
}

/* The child's size and this rank's rank in it: the parent's without the
 * distinct excluded ranks (NCCL: the survivors keep their order). */
static void shrunk(const fr_comm *parent, const int *excl, int nexcl, int *size, int *rank) {
  int gone = 0, below = 0;
  for (int i = 0; excl && i < nexcl; i++) {
    int dup = 0;
    for (int k = 0; k < i && !dup; k++) dup = excl[k] == excl[i];
    if (dup || excl[i] < 0 || excl[i] >= parent->nranks) continue;
    gone++;
    below += excl[i] < parent->rank;
  }
  *size = parent->nranks > 0 ? parent->nranks - gone : -1;
  *rank = parent->rank >= 0 ? parent->rank - below : -1;
}

/* Only the survivors call it (the excluded ranks are typically dead), so it
 * is no collective of the parent: recorded there unsequenced, and as seq 0
 * of the child, registered when the call is entered like an init from
 * unique ids (the survivors' creation of the child). */
FR_EXPORT ncclResult_t ncclCommShrink(ncclComm_t comm, int *excludeRanksList, int excludeRanksCount,
                                      ncclComm_t *newcomm, ncclConfig_t *config, int shrinkFlags) {
  fr_CommShrink_fn real = fr_real_CommShrink();
  if (!real) return ncclInvalidUsage;
  FR_PASS_IF_OFF_(real(comm, excludeRanksList, excludeRanksCount, newcomm, config, shrinkFlags))
  fr_in_wrapper = 1;
  fr_comm *parent = fr_comm_get((uintptr_t)comm);
  uint64_t t0 = fr_now_ns(), id = 0, index = 0;
  fr_slot *s = NULL;
  init_call ic = {NULL, NULL, 0};
  int slot = -1;
  if (parent) {
    index = atomic_fetch_add(&parent->nshrinks, 1);
    s = fr_life_begin(parent, FRZ_OP_CommShrink, FRZ_KIND_NONE, __builtin_return_address(0), &id);
    s->rec.count = excludeRanksCount > 0 ? (uint64_t)excludeRanksCount : 0;
    uint64_t cid = fr_comm_id_from_shrink(parent->comm_id, index, excludeRanksList,
                                          excludeRanksList ? excludeRanksCount : 0);
    int size, rank;
    shrunk(parent, excludeRanksList, excludeRanksCount, &size, &rank);
    slot = fr_prof_pending_add(cid, -1, -1);
    ic = fr_init_begin(FRZ_OP_CommShrink, cid, size, rank, __atomic_load_n(&parent->cuda_device, __ATOMIC_RELAXED),
                       __builtin_return_address(0));
    if (ic.c) {
      __atomic_store_n(&ic.c->parent_id, parent->comm_id, __ATOMIC_RELAXED); /* (the comm is visible already) */
      atomic_fetch_or(&ic.c->flags, FRZ_CF_SHRINK);
    }
  }
  ncclResult_t r = real(comm, excludeRanksList, excludeRanksCount, newcomm, config, shrinkFlags);
  if (s) fr_life_done(s, id, r, t0);
  if (parent) fr_init_end(&ic, slot, newcomm, r, t0);
  fr_in_wrapper = 0;
  return r;
}

FR_EXPORT ncclResult_t ncclCommGrow(ncclComm_t comm, int nRanks, const ncclUniqueId *uniqueId,
                                    int rank, ncclComm_t *newcomm, ncclConfig_t *config) {
  fr_CommGrow_fn real = fr_real_CommGrow();
  if (!real) return ncclInvalidUsage;
  FR_PASS_IF_OFF_(real(comm, nRanks, uniqueId, rank, newcomm, config))
  fr_in_wrapper = 1;
  fr_on_first_comm();
  /* Existing members pass their comm; new ranks pass NULL and the id.  All
   * of them hash the grow id, which the root created and shared. */
  fr_comm *parent = comm ? fr_comm_get((uintptr_t)comm) : NULL;
  uint64_t t0 = fr_now_ns(), id = 0;
  fr_slot *s = NULL;
  if (parent)
    s = fr_life_begin(parent, FRZ_OP_CommGrow, FRZ_KIND_LIFE, __builtin_return_address(0), &id);
  uint64_t cid = uniqueId ? fr_comm_id_from_unique(uniqueId->internal, sizeof uniqueId->internal, nRanks)
                          : fr_comm_id_from_unique("", 0, nRanks);
  int slot = fr_prof_pending_add(cid, nRanks, rank);
  /* a new rank has no parent to record the wait in: its comm at entry */
  init_call ic = {NULL, NULL, 0};
  if (!parent) ic = fr_init_begin(FRZ_OP_CommGrow, cid, nRanks, rank, -1, __builtin_return_address(0));
  ncclResult_t r = real(comm, nRanks, uniqueId, rank, newcomm, config);
  if (s) fr_life_done(s, id, r, t0);
  if (!parent) {
    fr_init_end(&ic, slot, newcomm, r, t0);
    fr_in_wrapper = 0;
    return r;
  }
  fr_comm *c = NULL;
  if ((r == ncclSuccess || r == ncclInProgress) && newcomm && *newcomm) {
    int n, rk;
    fr_comm_ask_size(*newcomm, &n, &rk);
    c = fr_comm_add((uintptr_t)*newcomm, cid, parent ? parent->comm_id : 0, n, rk,
                    r == ncclInProgress ? FRZ_CF_PENDING : 0);
    if (c) {
      uint64_t cid2;
      fr_slot *s2 = fr_life_begin(c, FRZ_OP_CommGrow, FRZ_KIND_LIFE, __builtin_return_address(0), &cid2);
      fr_life_done(s2, cid2, r, t0);
    }
  }
  fr_prof_pending_done(slot, c, r == ncclInProgress);
  fr_in_wrapper = 0;
  return r;
}

/* Pass-through (the id it returns is hashed by CommGrow), but NCCL < 2.29
 * lacks it, which must come back as an error, not a crash. */
FR_EXPORT ncclResult_t ncclCommGetUniqueId(ncclComm_t comm, ncclUniqueId *uniqueId) {
  fr_CommGetUniqueId_fn real = fr_real_CommGetUniqueId();
  if (!real) return ncclInvalidUsage;
  return real(comm, uniqueId);
}
