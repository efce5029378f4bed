/* counters.c — a member's counters of its comm (last enqueued, last
 * completed, first retained seq), from its comm entry and its retained
 * records: records whose completion was not tracked, a group never ended,
 * a call of its own that failed (model.c builds the members with them). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* A record whose completion was not tracked (captured into a CUDA graph:
 * no events on a capturing stream; its replays make no NCCL call) stays
 * enqueued for good, and the recorder's last_completed_seq stops before
 * the first one.  It is not where a hang is: move *lc on over completed
 * and untracked records up to the first tracked one that did not complete.
 * When the walk ends on untracked records with nothing after them,
 * *unknown_from is where they begin (completion unknown from there). */
static void past_untracked(const fa_frame *f, const fa_slice *sl, int64_t *lc, int64_t *unknown_from)
{
  int64_t next = *lc + 1, run = -1;
  uint32_t k = 0;
  for (; k < sl->len; k++) {
    const frz_record *r = &f->dump.records[f->idx[sl->start + k]];
    if (r->seq > (uint64_t)FA_SEQ_MAX) break;
    int64_t seq = (int64_t)r->seq;
    if (seq < next) continue;
    /* a seq not retained: nothing known past it; but inside a PyTorch
     * dump's window it was retired (completed) and left a dump of active
     * entries only (a ring drops the oldest, never one in between) */
    if (seq > next && !(f->dump.pt && run >= 0)) break;
    int done = r->state == FRZ_STATE_COMPLETED || r->state == FRZ_STATE_FAILED;
    int untracked = !done && (r->flags & FRZ_RF_NO_TRACKING) && !(r->flags & FRZ_RF_IN_CALL);
    if (!done && !untracked) break;
    if (untracked && run < 0) run = seq;
    if (done) run = -1;
    *lc = seq;
    next = seq + 1;
  }
  if (k == sl->len && run >= 0) *unknown_from = run;
}

/* A call of the member's own that returned an error, where nothing before
 * broke the comm: its creation (the comm's init failed, FRZ_CF_INIT_FAILED),
 * or a collective whose call failed.  NCCL launches nothing for a call that
 * returns an error, and a failed init leaves no usable comm (every later
 * call on it fails too), so the member took no part from that seq on, even
 * though the recorder counts a failed record as done.  A comm torn down,
 * aborted, revoked or reporting an async error explains its later failures
 * (a reaction, not a cause): those are not taken.  Sets failed_seq and
 * failed_result, and lowers the counters below failed_seq. */
static void own_failure(const fa_frame *f, const frz_comm *fc, const fa_slice *sl, fa_member *m)
{
  int64_t seq = -1;
  int32_t result = 0;
  if (fc->flags & FRZ_CF_INIT_FAILED) {
    seq = 0;
    const frz_record *r0 = sl->len ? &f->dump.records[f->idx[sl->start]] : NULL;
    result = r0 && r0->seq == 0 && r0->state == FRZ_STATE_FAILED ? r0->result : 0;
    /* a split's or a shrink's failure is recorded on the parent */
    for (uint64_t i = 0; !result && fc->parent_id && i < f->dump.nrecords; i++) {
      const frz_record *r = &f->dump.records[i];
      if (r->comm_id == fc->parent_id && r->state == FRZ_STATE_FAILED && r->result > 0 &&
          (r->op == FRZ_OP_CommSplit || r->op == FRZ_OP_CommShrink))
        result = r->result;
    }
  } else if (!(fc->flags & (FRZ_CF_ABORTED | FRZ_CF_ASYNC_ERROR | FRZ_CF_REVOKED | FRZ_CF_DESTROYED |
                            FRZ_CF_FINALIZED)) && !f->dump.pt) {
    for (uint32_t k = 0; k < sl->len && seq < 0; k++) {
      const frz_record *r = &f->dump.records[f->idx[sl->start + k]];
      if (r->state != FRZ_STATE_FAILED || r->result <= 0 || (r->flags & FRZ_RF_ABORTED) ||
          r->seq > (uint64_t)FA_SEQ_MAX || fa_rec_kind(&f->dump, r) != FRZ_KIND_COLL)
        continue;
      seq = (int64_t)r->seq;
      result = r->result;
    }
  }
  if (seq < 0) return;
  m->failed_seq = seq;
  m->failed_result = result;
  if (m->last_enqueued > seq - 1) m->last_enqueued = seq - 1;
  if (m->last_completed > seq - 1) m->last_completed = seq - 1;
}

/* A member's counters, from its comm entry and its retained records. */
void fa_fill_member(const fa_analysis *a, fa_member *m)
{
  const fa_frame *f = &a->frames[m->frame];
  const frz_comm *fc = &f->dump.comms[m->entry];
  const fa_slice *sl = &f->coll[m->entry];
  m->first_retained = (int64_t)(fc->first_retained_seq > (uint64_t)FA_SEQ_MAX
                                    ? FA_SEQ_MAX
                                    : fc->first_retained_seq);
  m->last_enqueued = fc->last_enqueued_seq < -1 ? -1 : fc->last_enqueued_seq;
  m->last_completed = fc->last_completed_seq < -1 ? -1 : fc->last_completed_seq;
  if (m->last_enqueued > FA_SEQ_MAX) m->last_enqueued = FA_SEQ_MAX;
  if (m->last_completed > FA_SEQ_MAX) m->last_completed = FA_SEQ_MAX;
  m->tracked = 1;
  m->unknown_from = -1;
  if (f->dump.pt && f->dump.pt->comms[m->entry].counters == FRZ_PT_CTR_UNKNOWN) {
    m->counters_unknown = 1;
    return;
  }
  /* PyTorch, pg_status alone: its last completed collective is not moved
   * by coalesced groups (PyTorch 2.11), so what lies past it up to the
   * last enqueued may have completed: completion unknown (not tracked) */
  if (f->dump.pt && f->dump.pt->comms[m->entry].counters == FRZ_PT_CTR_STATUS &&
      m->last_completed < m->last_enqueued)
    m->tracked = 0;
  if (sl->len) {
    const frz_record *last = &f->dump.records[f->idx[sl->start + sl->len - 1]];
    if (last->seq <= (uint64_t)FA_SEQ_MAX && (int64_t)last->seq > m->last_enqueued)
      m->last_enqueued = (int64_t)last->seq;
    /* untracked: completion unknown (lifecycle records say their own state) */
    uint32_t untracked = 0;
    for (uint32_t k = 0; k < sl->len; k++) {
      const frz_record *r = &f->dump.records[f->idx[sl->start + k]];
      if ((r->flags & FRZ_RF_NO_TRACKING) && r->state != FRZ_STATE_COMPLETED &&
          r->state != FRZ_STATE_FAILED && !(fa_rec_kind(&f->dump, r) == FRZ_KIND_LIFE && (r->flags & FRZ_RF_IN_CALL)))
        untracked++;
    }
    if (untracked == sl->len) m->tracked = 0;
    else past_untracked(f, sl, &m->last_completed, &m->unknown_from);
    /* ops of a group whose GroupEnd never came were never launched: not
     * enqueued as far as the comm is concerned */
    for (uint32_t k = 0; k < sl->len; k++) {
      const frz_record *r = &f->dump.records[f->idx[sl->start + k]];
      if ((r->flags & FRZ_RF_GROUP_OPEN) && r->seq <= (uint64_t)FA_SEQ_MAX &&
          (int64_t)r->seq - 1 < m->last_enqueued) {
        m->last_enqueued = (int64_t)r->seq - 1;
        break;
      }
    }
  }
  own_failure(f, fc, sl, m);
  if (m->last_completed > m->last_enqueued) m->last_completed = m->last_enqueued;
}
