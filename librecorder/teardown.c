/* teardown.c — the end of a communicator and its errors: CommFinalize and
 * CommDestroy (records in the comm's collective sequence), CommAbort and
 * CommRevoke (local: PyTorch's watchdog aborts at whatever point each rank
 * is, so they are recorded unsequenced, kind NONE), and CommGetAsyncError
 * (an error it reports is recorded once per comm and asks for a dump).
 */
#include "recorder.h"

#define FR_PASS_IF_OFF_(call)                                                        \
  if (!atomic_load_explicit(&fr_g.enabled, memory_order_relaxed) || fr_in_wrapper) \
    return call;

/* Record `op` on the comm (sequenced unless kind NONE), run NCCL, finish the
 * record; `retire` forgets the handle first (destroy/abort free it). */
/* Mark comm c's records still in flight as aborted: ncclCommAbort abandons
 * them, and the events that pass afterwards say nothing of them (the
 * watchdog stops tracking them). */
static void mark_aborted(const fr_comm *c) {
  fr_ring *ring = &fr_g.ring;
  uint64_t head = fr_ring_head(ring);
  for (uint64_t id = head > ring->capacity ? head - ring->capacity : 0; id < head; id++) {
    fr_slot *s = fr_ring_get(ring, id);
    if (!s || s->rec.comm_id != c->comm_id || (s->rec.comm_rank >= 0 && s->rec.comm_rank != c->rank)) continue;
    uint8_t st = __atomic_load_n(&s->rec.state, __ATOMIC_ACQUIRE);
    if (st == FRZ_STATE_COMPLETED || st == FRZ_STATE_FAILED) continue;
    if (s->rec.kind != FRZ_KIND_COLL && s->rec.kind != FRZ_KIND_P2P) continue;
    /* what the device did before the abort, stamped now (the watchdog's
     * next scan would have, but it skips aborted records): done ops are not
     * abandoned, started ones show that they ran */
    if (fr_stamp_from_events(s, id, fr_now_ns(), 0) == FRZ_STATE_COMPLETED) continue;
    fr_rec_flags_set(s, FRZ_RF_ABORTED, 0);
  }
}

static ncclResult_t around(ncclComm_t comm, unsigned op, unsigned kind, uint32_t flag, int retire,
                           ncclResult_t (*call)(ncclComm_t, int), int arg, void *site) {
  fr_in_wrapper = 1;
  fr_comm *c = fr_comm_find((uintptr_t)comm);
  fr_slot *s = NULL;
  uint64_t id = 0, t0 = fr_now_ns();
  if (c) {
    if (op == FRZ_OP_CommAbort) mark_aborted(c);
    s = fr_life_begin(c, op, kind, site, &id);
    if (op == FRZ_OP_CommAbort) fr_request_dump(FRZ_TRIGGER_ABORT); /* with its own record */
    if (retire) fr_comm_retire(c, flag);
  }
  ncclResult_t r = call(comm, arg);
  if (s) fr_life_done(s, id, r, t0);
  if (c && !retire && r == ncclSuccess) atomic_fetch_or(&c->flags, flag);
  fr_in_wrapper = 0;
  return r;
}

/* Adapters to one call shape for around(). */
static ncclResult_t call_finalize(ncclComm_t c, int a) { (void)a; return fr_real_CommFinalize()(c); }
static ncclResult_t call_destroy(ncclComm_t c, int a) { (void)a; return fr_real_CommDestroy()(c); }
static ncclResult_t call_abort(ncclComm_t c, int a) { (void)a; return fr_real_CommAbort()(c); }
static ncclResult_t call_revoke(ncclComm_t c, int a) { return fr_real_CommRevoke()(c, a); }

FR_EXPORT ncclResult_t ncclCommFinalize(ncclComm_t comm) {
  fr_CommFinalize_fn real = fr_real_CommFinalize();
  if (!real) return ncclInvalidUsage;
  FR_PASS_IF_OFF_(real(comm))
  return around(comm, FRZ_OP_CommFinalize, FRZ_KIND_LIFE, FRZ_CF_FINALIZED, 0, call_finalize, 0,
                __builtin_return_address(0));
}

FR_EXPORT ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  fr_CommDestroy_fn real = fr_real_CommDestroy();
  if (!real) return ncclInvalidUsage;
  FR_PASS_IF_OFF_(real(comm))
  return around(comm, FRZ_OP_CommDestroy, FRZ_KIND_LIFE, FRZ_CF_DESTROYED, 1, call_destroy, 0,
                __builtin_return_address(0));
}

FR_EXPORT ncclResult_t ncclCommAbort(ncclComm_t comm) {
  fr_CommAbort_fn real = fr_real_CommAbort();
  if (!real) return ncclInvalidUsage;
  FR_PASS_IF_OFF_(real(comm))
  return around(comm, FRZ_OP_CommAbort, FRZ_KIND_NONE, FRZ_CF_ABORTED, 1, call_abort, 0,
                __builtin_return_address(0));
}

FR_EXPORT ncclResult_t ncclCommRevoke(ncclComm_t comm, int revokeFlags) {
  fr_CommRevoke_fn real = fr_real_CommRevoke();
  if (!real) return ncclInvalidUsage;
  FR_PASS_IF_OFF_(real(comm, revokeFlags))
  return around(comm, FRZ_OP_CommRevoke, FRZ_KIND_NONE, FRZ_CF_REVOKED, 0, call_revoke,
                revokeFlags, __builtin_return_address(0));
}

/* Polled often by frameworks (PyTorch's watchdog): only an error costs more
 * than the lookup. */
FR_EXPORT ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t *asyncError) {
  fr_CommGetAsyncError_fn real = fr_real_CommGetAsyncError();
  if (!real) return ncclInvalidUsage;
  ncclResult_t r = real(comm, asyncError);
  if (!atomic_load_explicit(&fr_g.enabled, memory_order_relaxed) || fr_in_wrapper) return r;
  if (r != ncclSuccess || !asyncError || *asyncError == ncclSuccess || *asyncError == ncclInProgress)
    return r;
  fr_comm *c = fr_comm_find((uintptr_t)comm);
  if (!c || (atomic_fetch_or(&c->flags, FRZ_CF_ASYNC_ERROR) & FRZ_CF_ASYNC_ERROR)) return r;
  fr_in_wrapper = 1;
  uint64_t id;
  fr_slot *s = fr_life_begin(c, FRZ_OP_CommGetAsyncError, FRZ_KIND_NONE,
                             __builtin_return_address(0), &id);
  fr_rec_end(s, id, *asyncError); /* the async error, as the record's result: failed */
  fr_request_dump(FRZ_TRIGGER_ASYNC_ERROR);
  fr_in_wrapper = 0;
  return r;
}
