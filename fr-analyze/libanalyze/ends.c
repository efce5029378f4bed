/* ends.c — where a member's work on a comm ended, and whether that end is
 * the job's: a process that ended or tore the comm down, the teardowns of
 * the other comms of one split, and p2p ops past the point where every
 * other member ended.  The rules that read members as ahead, or as having
 * left (analyze.c), ask these. */
#include "config.h"

#include "internal.h"

/* Is idle member m done with the comm: its process ended (its latest dump
 * written at exit or on a fatal signal) or it tore the comm down?  One
 * alive and idle (its dump asked for by the hang) may yet come: a host wait
 * (a data loader, I/O) before the op, not the end of its work.  A PyTorch
 * dump does not tell: taken as done. */
int fa_member_done(const fa_analysis *a, const fa_member *m)
{
  const fa_frame *f = &a->frames[m->frame];
  if (f->dump.pt) return 1;
  uint32_t t = f->dump.process.trigger;
  const frz_comm *fc = &f->dump.comms[m->entry];
  return fa_trigger_ended(t) || (fc->flags & (FRZ_CF_DESTROYED | FRZ_CF_FINALIZED | FRZ_CF_ABORTED));
}

/* The highest p2p seq of dump d's p2p records of comm id with comm rank
 * `peer` in direction `dir` (FRZ_DIR_*; NCCL numbers p2p ops per peer and
 * direction), of every state or only completed ones; -1 none.  *fly is set
 * when one is in flight. */
static int64_t pair_seq(const frz_dump *d, uint64_t id, int32_t peer, uint8_t dir, int completed, int *fly)
{
  int64_t best = -1;
  for (uint64_t i = 0; i < d->nrecords; i++) {
    const frz_record *x = &d->records[i];
    if (x->comm_id != id || x->kind != FRZ_KIND_P2P || (x->flags & FRZ_RF_NO_TRACKING) || x->peer != peer ||
        x->dir != dir)
      continue;
    if (x->state == FRZ_STATE_ENQUEUED || x->state == FRZ_STATE_STARTED) *fly = 1;
    if ((!completed || x->state == FRZ_STATE_COMPLETED) && (int64_t)x->seq > best) best = (int64_t)x->seq;
  }
  return best;
}

/* Is lagging member m of c behind only a teardown (every member with a
 * record at the stuck seq tore the comm down there, m completed all its
 * collectives) while its p2p ops on c are in flight, and past the end of
 * every member that tore it down on each pair they share: in both
 * directions, m's highest p2p seq with that member beyond the highest that
 * member completed with m?  Then it ran past the others' end in its p2p
 * ops, and is behind nothing.  (Compared pair by pair: pairs carry
 * different numbers of ops a step.) */
int fa_p2p_past_end(const fa_analysis *a, const fa_comm *c, const fa_member *m)
{
  if (m->counters_unknown || m->last_completed != m->last_enqueued || m->frame < 0) return 0;
  int32_t me = (int32_t)(m - c->members);
  const frz_dump *dm = &a->frames[m->frame].dump;
  int pairs = 0, fly = 0, ignored = 0;
  for (int32_t r = 0; r < c->size; r++) {
    const fa_member *q = &c->members[r];
    const frz_record *at = q->rank >= 0 && q != m ? fa_member_record(a, q, c->stuck_seq) : NULL;
    if (!at) continue;
    if (!fa_is_teardown(at->op)) return 0;
    const frz_dump *dq = &a->frames[q->frame].dump;
    for (int k = 0; k < 2; k++) {
      uint8_t dir = k ? FRZ_DIR_SEND : FRZ_DIR_RECV, back = k ? FRZ_DIR_RECV : FRZ_DIR_SEND;
      int64_t mine = pair_seq(dm, c->id, r, dir, 0, &fly);
      if (mine < 0) continue;
      if (mine <= pair_seq(dq, c->id, me, back, 1, &ignored)) return 0; /* not past its end there */
      pairs++;
    }
  }
  return pairs > 0 && fly;
}

/* The seq where another comm of member m's split (the same parent, other
 * ranks; the same size unless any_size) ended: every member of it with a
 * dump (one at least) tore it down at that one seq after completing all
 * its ops, having run the ops m ran on c before seq `upto` (by op, as far
 * as both retain them: the groups of a split run the same program, with
 * counts of their own).  any_size is for evidence that only clears a rank
 * (the work ends where it tore c down): a split may make groups of
 * unequal size ({0-3} and {4-6} of 7) that still run one program; it
 * returns upto or -1.  -1 when no such comm is found. */
int64_t fa_sibling_end(const fa_analysis *a, const fa_comm *c, const fa_member *m, int64_t upto,
                       int any_size)
{
  const frz_comm *fc = fa_member_comm(a, m);
  if (!fc || !(fc->flags & FRZ_CF_SPLIT) || !fc->parent_id || upto < 1) return -1;
  for (uint32_t ci = 0; ci < a->ncomms; ci++) {
    const fa_comm *o = &a->comms[ci];
    if (o == c || (!any_size && o->size != c->size) || !o->npresent) continue;
    int ok = 1;
    int64_t end_seq = -1;
    for (int32_t r = 0; r < o->size && ok; r++) {
      const fa_member *q = &o->members[r];
      if (q->rank < 0) continue;
      const frz_comm *qc = !q->counters_unknown ? fa_member_comm(a, q) : NULL;
      int64_t e = q->last_enqueued;
      const frz_record *end = qc && e >= 1 ? fa_member_record(a, q, (uint64_t)e) : NULL;
      ok = qc && qc->parent_id == fc->parent_id && (qc->flags & FRZ_CF_SPLIT) && q->rank != m->rank && end &&
           fa_is_teardown(end->op) && end->state == FRZ_STATE_COMPLETED && (end_seq < 0 || e == end_seq);
      end_seq = e;
      int64_t top = e < upto ? e : upto;
      for (int64_t k = top - 1; ok && k >= 1 && k >= top - 64; k--) {
        const frz_record *x = fa_member_record(a, q, (uint64_t)k), *y = fa_member_record(a, m, (uint64_t)k);
        ok = !x || !y || (x->op == y->op && x->state == FRZ_STATE_COMPLETED);
      }
    }
    /* any_size asks only whether one ends at upto: look on past those that do not */
    if (ok && end_seq >= 1 && (!any_size || end_seq == upto)) return end_seq;
  }
  return -1;
}

int fa_rank_done(const fa_analysis *a, int32_t k)
{
  if (k < 0) return 0;
  const frz_dump *d = &fa_rank_latest(a, &a->ranks[k])->dump;
  if (d->pt || d->process.trigger != FRZ_TRIGGER_EXIT || fa_gave_up(d, 0) || fa_ended_waiting(d)) return 0;
  for (uint32_t e = 0; e < d->ncomms; e++)
    if (!(d->comms[e].flags & (FRZ_CF_DESTROYED | FRZ_CF_FINALIZED | FRZ_CF_ABORTED))) return 0;
  for (uint64_t i = 0; i < d->nrecords; i++) {
    const frz_record *x = &d->records[i];
    if ((x->kind == FRZ_KIND_COLL || x->kind == FRZ_KIND_P2P) && !(x->flags & FRZ_RF_NO_TRACKING) &&
        (x->state == FRZ_STATE_ENQUEUED || x->state == FRZ_STATE_STARTED))
      return 0;
  }
  return d->ncomms > 0;
}
