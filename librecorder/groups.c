/* groups.c — ncclGroupStart / ncclGroupEnd / ncclGroupSimulateEnd.
 *
 * NCCL groups are per thread and nest; ops issued inside a group are only
 * launched at the outermost GroupEnd.  So their CUDA events are recorded
 * there: start events just before NCCL's GroupEnd, end events just after.
 * A group ended by GroupSimulateEnd never runs: its records are marked
 * simulated and the seqs they took are given back, so this rank's sequence
 * stays aligned with ranks that did not simulate.
 */
#include <stdlib.h>

#include "recorder.h"

#define FR_GROUP_MAX 1024

typedef struct deferred {
  fr_slot *slot;
  uint64_t id;
  fr_comm *comm;
  cudaStream_t stream;
} deferred;

FR_HIDDEN __thread int fr_group_depth_ __attribute__((tls_model("initial-exec")));
#define group_depth fr_group_depth_
static __thread uint64_t group_id __attribute__((tls_model("initial-exec")));
static __thread uint32_t ndeferred __attribute__((tls_model("initial-exec")));
static __thread deferred *deferred_ops __attribute__((tls_model("initial-exec")));

uint64_t fr_group_id(void) { return group_id; }

void fr_group_defer(fr_slot *s, uint64_t id, fr_comm *c, cudaStream_t stream) {
  if (!deferred_ops) deferred_ops = calloc(FR_GROUP_MAX, sizeof *deferred_ops);
  if (!deferred_ops || ndeferred >= FR_GROUP_MAX) { /* its launch will not be seen */
    fr_rec_flags_set(s, FRZ_RF_NO_TRACKING, FRZ_RF_GROUP_OPEN);
    return;
  }
  deferred_ops[ndeferred++] = (deferred){s, id, c, stream};
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
  for (uint32_t i = 0; i < ndeferred; i++)
    if (fr_ring_get(&fr_g.ring, deferred_ops[i].id)) {
      fr_track_before(deferred_ops[i].slot, deferred_ops[i].id, deferred_ops[i].stream);
      fr_rec_flags_set(deferred_ops[i].slot, 0, FRZ_RF_GROUP_OPEN); /* launched now */
    }
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

/* Give back the seq a simulated record took, if nothing was issued on its
 * comm since (NCCL forbids using one comm from two threads at once). */
static void give_back_seq(const deferred *d) {
  const frz_record *r = &d->slot->rec;
  if (!d->comm || r->seq == UINT64_MAX) return;
  _Atomic uint64_t *ctr = NULL;
  if (r->kind == FRZ_KIND_COLL)
    ctr = &d->comm->next_seq;
  else if (r->kind == FRZ_KIND_P2P && d->comm->p2p_seq && r->peer >= 0 && r->peer < d->comm->nranks)
    ctr = &d->comm->p2p_seq[(size_t)r->peer * 2 + r->dir - 1];
  uint64_t expect = r->seq + 1;
  if (ctr) atomic_compare_exchange_strong(ctr, &expect, r->seq);
}

FR_EXPORT ncclResult_t ncclGroupSimulateEnd(ncclSimInfo_t *simInfo) {
  fr_GroupSimulateEnd_fn real = fr_real_GroupSimulateEnd();
  if (!real) return ncclInvalidUsage;
  if (!atomic_load_explicit(&fr_g.enabled, memory_order_relaxed) || fr_in_wrapper)
    return real(simInfo);
  if (group_depth == 0) return real(simInfo);
  if (--group_depth > 0) return real(simInfo);
  ncclResult_t r = real(simInfo);
  for (uint32_t i = ndeferred; i-- > 0;) { /* newest first, so seqs unwind in order */
    deferred *d = &deferred_ops[i];
    if (!fr_ring_get(&fr_g.ring, d->id)) continue;
    give_back_seq(d);
    d->slot->rec.kind = FRZ_KIND_NONE;
    fr_rec_flags_set(d->slot, FRZ_RF_SIMULATED | FRZ_RF_NO_TRACKING, FRZ_RF_GROUP_OPEN);
  }
  ndeferred = 0;
  group_id = 0;
  return r;
}
