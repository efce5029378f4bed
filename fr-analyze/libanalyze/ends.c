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
  return t == FRZ_TRIGGER_EXIT || t == FRZ_TRIGGER_CRASH ||
         (fc->flags & (FRZ_CF_DESTROYED | FRZ_CF_FINALIZED | FRZ_CF_ABORTED));
}

/* The highest p2p seq of comm id among dump d's p2p records in state st
 * (completed), or the lowest among those in flight (st 0); -1 none. */
static int64_t p2p_seq_bound(const frz_dump *d, uint64_t id, int completed)
{
  int64_t best = -1;
  for (uint64_t i = 0; i < d->nrecords; i++) {
    const frz_record *x = &d->records[i];
    if (x->comm_id != id || x->kind != FRZ_KIND_P2P || (x->flags & FRZ_RF_NO_TRACKING)) continue;
    int fly = x->state == FRZ_STATE_ENQUEUED || x->state == FRZ_STATE_STARTED;
    if (completed ? x->state == FRZ_STATE_COMPLETED && (int64_t)x->seq > best
                  : fly && (best < 0 || (int64_t)x->seq < best))
      best = (int64_t)x->seq;
  }
  return best;
}

/* Is lagging member m of c behind only a teardown (every member with a
 * record at the stuck seq tore the comm down there, m completed all its
 * collectives) while its p2p ops on c are in flight one p2p seq past where
 * every member that tore it down ended (all at one p2p seq: the end of the
 * job's loop)?  Then it is past the others' end, not behind anything. */
int fa_p2p_past_end(const fa_analysis *a, const fa_comm *c, const fa_member *m)
{
  if (m->counters_unknown || m->last_completed != m->last_enqueued || m->frame < 0) return 0;
  int64_t end = -2;
  for (int32_t r = 0; r < c->size; r++) {
    const fa_member *q = &c->members[r];
    const frz_record *at = q->rank >= 0 && q != m ? fa_member_record(a, q, c->stuck_seq) : NULL;
    if (!at) continue;
    if (!fa_is_teardown(at->op)) return 0;
    int64_t e = p2p_seq_bound(&a->frames[q->frame].dump, c->id, 1);
    if (end != -2 && e != end) return 0; /* they ended at different points: some ended early */
    end = e;
  }
  return end >= 0 && p2p_seq_bound(&a->frames[m->frame].dump, c->id, 0) == end + 1;
}

/* Did every member with a dump of another comm of member m's split (the
 * same parent and size, other ranks) tear that comm down at seq s, after
 * completing all its ops, having run the ops m ran on c before s (op and
 * count, as far as both retain them)?  Then s is where the work of the
 * split's comms ends, and m's teardown there is that end, not an early
 * leave: ranks that wait past it in c ran past it. */
int fa_sibling_ended_at(const fa_analysis *a, const fa_comm *c, const fa_member *m, int64_t s)
{
  const frz_comm *fc = fa_member_comm(a, m);
  if (!fc || !(fc->flags & FRZ_CF_SPLIT) || !fc->parent_id || s < 1) return 0;
  for (uint32_t ci = 0; ci < a->ncomms; ci++) {
    const fa_comm *o = &a->comms[ci];
    if (o == c || o->size != c->size || o->npresent != (uint32_t)o->size) continue;
    int ok = 1;
    for (int32_t r = 0; r < o->size && ok; r++) {
      const fa_member *q = &o->members[r];
      const frz_comm *qc = q->rank >= 0 && !q->counters_unknown ? fa_member_comm(a, q) : NULL;
      const frz_record *end = qc ? fa_member_record(a, q, (uint64_t)s) : NULL;
      ok = qc && qc->parent_id == fc->parent_id && (qc->flags & FRZ_CF_SPLIT) && q->rank != m->rank &&
           q->last_enqueued == s && end && fa_is_teardown(end->op) && end->state == FRZ_STATE_COMPLETED;
      for (int64_t k = s - 1; ok && k >= 1 && k >= s - 64; k--) {
        const frz_record *x = fa_member_record(a, q, (uint64_t)k), *y = fa_member_record(a, m, (uint64_t)k);
        ok = !x || !y || (x->op == y->op && x->count == y->count && x->state == FRZ_STATE_COMPLETED);
      }
    }
    if (ok) return 1;
  }
  return 0;
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
