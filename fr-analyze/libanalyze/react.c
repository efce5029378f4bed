/* react.c — a rank's dump read as of the moment it reacted to a hang.
 *
 * A rank that gave up (it aborted a comm while an op of that comm had been
 * in flight for FA_GAVE_UP_NS or more: a watchdog's timeout)
 * rewrote its own evidence by doing so.  Ops queued on its streams behind
 * the aborted ones start, and may complete, only because the abort let the
 * stream go on (CUDA runs a stream's kernels in order; an aborted NCCL
 * kernel returns); ops whose peers did the same complete too.  None of that
 * is the hang.  So what the dump says of an op past the start of the
 * reaction (the first of the run of teardown records that holds the first
 * abort that gave up) is set back to what it was then, and the comm
 * counters with it.  ncclCommFinalize and ncclCommDestroy cut nothing off
 * (NCCL's documentation: they wait for the ops in flight), so a shutdown
 * by them rewrites nothing.  Dumps of PyTorch's Flight Recorder hold no
 * teardown records and are left as they are. */
#include "config.h"

#include "internal.h"

/* Is record r an abort, which cuts a comm's ops off? */
static int cuts_off(const frz_record *r)
{
  return r->op == FRZ_OP_CommAbort;
}

/* Is record r a teardown of some comm (the run of them a reaction is)? */
static int teardown(const frz_record *r)
{
  return r->op == FRZ_OP_CommAbort || r->op == FRZ_OP_CommDestroy || r->op == FRZ_OP_CommFinalize;
}

/* Does r belong to the same comm rank as teardown record x? */
static int same_member(const frz_record *r, const frz_record *x)
{
  return r->comm_id == x->comm_id && (x->comm_rank < 0 || r->comm_rank < 0 || r->comm_rank == x->comm_rank);
}

static int is_op(const frz_record *r)
{
  return (r->kind == FRZ_KIND_COLL || r->kind == FRZ_KIND_P2P) && !(r->flags & FRZ_RF_NO_TRACKING);
}

uint64_t fa_teardown_run_start(const frz_dump *d, uint64_t k)
{
  while (k > 0 && teardown(&d->records[k - 1])) k--;
  return d->records[k].t_enqueue_ns;
}

/* Did teardown record k give up: an op of its comm, enqueued before the
 * reaction holding k began and not completed by then, had waited
 * FA_GAVE_UP_NS or more then?  (Measured at the reaction's start: the
 * time a process spends inside its earlier aborts is no wait.) */
static int gives_up(const frz_dump *d, uint64_t k)
{
  const frz_record *x = &d->records[k];
  uint64_t t0 = fa_teardown_run_start(d, k);
  for (uint64_t i = 0; i < k; i++) {
    const frz_record *r = &d->records[i];
    if (!is_op(r) || !same_member(r, x) || r->t_enqueue_ns > t0) continue;
    int done = (r->state == FRZ_STATE_COMPLETED || r->state == FRZ_STATE_FAILED) && r->t_complete_ns &&
               r->t_complete_ns <= t0;
    if (!done && t0 - r->t_enqueue_ns >= FA_GAVE_UP_NS) return 1;
  }
  return 0;
}

/* Lower comm entry (id, rank)'s counters below seq s. */
static void counters_below(frz_dump *d, const frz_record *r, int started)
{
  for (uint32_t i = 0; i < d->ncomms; i++) {
    frz_comm *c = &d->comms[i];
    if (c->comm_id != r->comm_id || (r->comm_rank >= 0 && c->rank >= 0 && c->rank != r->comm_rank)) continue;
    int64_t below = (int64_t)r->seq - 1;
    if (c->last_completed_seq > below) c->last_completed_seq = below;
    if (started && c->last_started_seq > below) c->last_started_seq = below;
  }
}

uint64_t fa_as_of_reaction(frz_dump *d)
{
  if (d->pt) return 0;
  uint64_t k1 = d->nrecords;
  for (uint64_t k = 0; k < d->nrecords && k1 == d->nrecords; k++)
    if (cuts_off(&d->records[k]) && gives_up(d, k)) k1 = k;
  if (k1 == d->nrecords) return 0;
  uint64_t k0 = k1;
  while (k0 > 0 && teardown(&d->records[k0 - 1])) k0--;
  uint64_t t = d->records[k0].t_enqueue_ns;
  for (uint64_t i = 0; i < k0; i++) {
    frz_record *r = &d->records[i];
    if (!is_op(r)) continue;
    int changed = 0;
    if (r->state == FRZ_STATE_COMPLETED && r->t_complete_ns > t) {
      r->state = r->t_start_ns && r->t_start_ns <= t ? FRZ_STATE_STARTED : FRZ_STATE_ENQUEUED;
      r->t_complete_ns = 0;
      changed = 1;
    }
    if (r->state == FRZ_STATE_STARTED && r->t_start_ns > t) {
      r->state = FRZ_STATE_ENQUEUED;
      changed = 1;
    }
    if (r->state == FRZ_STATE_ENQUEUED) r->t_start_ns = 0;
    if (changed && r->kind == FRZ_KIND_COLL) counters_below(d, r, r->state == FRZ_STATE_ENQUEUED);
    /* in flight when the reaction tore its comm down: abandoned by it */
    if (r->state == FRZ_STATE_ENQUEUED || r->state == FRZ_STATE_STARTED)
      for (uint64_t k = k0; k < d->nrecords; k++)
        if (cuts_off(&d->records[k]) && same_member(r, &d->records[k])) {
          r->flags |= FRZ_RF_ABORTED;
          break;
        }
  }
  return t;
}
