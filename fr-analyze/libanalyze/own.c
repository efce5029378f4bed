/* own.c — members of a stuck comm whose own part is the cause, not a wait:
 * work that never finished on the device while others completed the op
 * (unfinished), a kernel that never started while others' did (never
 * started), a call that never returned (its host thread inside NCCL), and a
 * record captured into a graph that shows no launch (never run).  Run per
 * comm after fa_align_comm (analyze.c), each marking members and counts. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* Members whose work at the stuck seq never finished while other members
 * completed it: the op ran (a collective completes on a member only once
 * every member's part of it moved), so they wait for nobody; their own
 * device side stopped (a GPU error, a kernel that cannot finish).  They are
 * unfinished, not waiting.  Evidence only when the split is at least
 * FA_UNFINISHED_DEPTH seqs deep: the others completed that many seqs from
 * the stuck one on that the member enqueued and finished none of (its host
 * went on, its device did not).  A split of one seq is what ranks dumped a
 * moment apart show in a job in flight (each dump queries its events at its
 * own time), and is no evidence.  Nor is a split in a comm with a member
 * that left no dump (it may have stopped inside the op). */
#define FA_UNFINISHED_DEPTH 2

/* Can a member finish op `op` while another member's part of it has not
 * moved?  In a rooted collective yes: NCCL runs Broadcast and Reduce as a
 * chain through the ranks (the ranks before a stopped one finish, the root
 * of a Reduce waits), and Gather and Scatter as point-to-point transfers
 * with the root (the other ranks finish with their own transfer).  Only
 * AllReduce, AllGather, ReduceScatter and AlltoAll need every member's part
 * on every member. */
static int partial_ok(unsigned op)
{
  return op == FRZ_OP_Broadcast || op == FRZ_OP_Bcast || op == FRZ_OP_Reduce || op == FRZ_OP_Gather ||
         op == FRZ_OP_Scatter;
}

int fa_unfinished(fa_analysis *a, fa_comm *c)
{
  /* members that call different things at or before the stuck seq explain
   * a split on their own (one side's op can finish without the other's) */
  if (c->has_mismatch && c->mismatch.seq <= c->stuck_seq) return 0;
  if (!c->stuck || !c->npassed || !c->nwaiting || c->nlagging || c->nahead) return 0;
  /* a member without a dump may have died inside the op after its part for
   * some members moved and before its part for the others did (in a ring,
   * the chunks it forwards to its successor come one after another): the
   * members that did not finish may wait for it */
  if (c->nno_dump) return 0;
  /* a rooted collective finishes on some members without the others: no
   * evidence of whose device stopped (the links say where it stopped) */
  for (int32_t r = 0; r < c->size; r++) {
    const fa_member *m = &c->members[r];
    const frz_record *at = m->rank >= 0 ? fa_member_record(a, m, c->stuck_seq) : NULL;
    if (at && partial_ok(at->op)) return 0;
  }
  int64_t passed_to = -1; /* the furthest the others completed */
  for (int32_t r = 0; r < c->size; r++)
    if (c->members[r].state == FA_MEMBER_PASSED && c->members[r].last_completed > passed_to)
      passed_to = c->members[r].last_completed;
  for (int32_t r = 0; r < c->size; r++) {
    fa_member *m = &c->members[r];
    if (m->state != FA_MEMBER_WAITING) continue;
    int64_t to = m->last_enqueued < passed_to ? m->last_enqueued : passed_to;
    if (to - (int64_t)c->stuck_seq + 1 < FA_UNFINISHED_DEPTH) continue;
    m->state = FA_MEMBER_UNFINISHED;
    c->nwaiting--;
    c->nunfinished++;
  }
  /* the members that completed it and went on wait again further on */
  c->beyond_seq = -1;
  for (int32_t r = 0; c->nunfinished && r < c->size; r++) {
    const fa_member *m = &c->members[r];
    if (m->state == FA_MEMBER_PASSED && m->last_completed < m->last_enqueued &&
        (c->beyond_seq < 0 || m->last_completed + 1 < c->beyond_seq))
      c->beyond_seq = m->last_completed + 1;
  }
  return 0;
}

/* Is record `at` of dump d one whose call was made a second or more before
 * the dump (not one that arrived a moment ago)?  PyTorch's dumps carry no
 * dump time: never. */
static int called_long_ago(const frz_dump *d, const frz_record *at)
{
  return !d->pt && at->t_enqueue_ns && d->process.frame_time_ns >= at->t_enqueue_ns &&
         d->process.frame_time_ns - at->t_enqueue_ns >= UINT64_C(1000000000);
}

/* Every member joined the stuck op and none completed it, but some
 * members' records of it started (their kernels run, waiting) while
 * others' never did, and those sit behind no unfinished NCCL op of their
 * own stream: something else before it on their stream never finished (a
 * compute kernel that does not end, a wait on another stream; in a real
 * PyTorch job, a rank whose stream ran a 60 s kernel, gpu-stall).  A
 * collective's kernel starts on each rank on its own, so the members that
 * never started are where it stopped: unfinished, their own device side. */
int fa_not_started(fa_analysis *a, fa_comm *c)
{
  if (!c->stuck || c->npassed || c->nlagging || c->nahead || c->nunfinished || c->nno_dump || c->nunknown ||
      (c->has_mismatch && c->mismatch.seq <= c->stuck_seq) || c->nwaiting < 2)
    return 0;
  uint32_t started = 0, idle = 0;
  for (int32_t r = 0; r < c->size; r++) {
    const fa_member *m = &c->members[r];
    if (m->rank < 0) continue;
    const frz_record *at = fa_member_record(a, m, c->stuck_seq);
    if (m->state != FA_MEMBER_WAITING || !at || (at->flags & (FRZ_RF_NO_TRACKING | FRZ_RF_GROUP_OPEN)))
      return 0;
    const frz_dump *d = &a->frames[m->frame].dump;
    const frz_comm *fc = fa_member_comm(a, m);
    /* (one that aborted the comm, gave up or ended: its record may say
     * enqueued because the abort cut it off; react.c judges those) */
    if ((fc && (fc->flags & (FRZ_CF_ABORTED | FRZ_CF_ASYNC_ERROR))) || fa_gave_up(d, c->id) ||
        fa_trigger_ended(d->process.trigger))
      return 0;
    if (at->state == FRZ_STATE_STARTED) {
      started++;
    } else if (at->state == FRZ_STATE_ENQUEUED && !fa_rec_behind(d, at, c->id)) {
      /* (a second or more before its dump: not one that arrived a moment
       * ago, whose start the recorder's poll has not seen yet; PyTorch's
       * dumps, written on a watchdog's timeout, carry no dump time) */
      if (!d->pt && !called_long_ago(d, at)) return 0;
      idle++;
    } else {
      return 0;
    }
  }
  if (!started || !idle) return 0;
  for (int32_t r = 0; r < c->size; r++) {
    fa_member *m = &c->members[r];
    const frz_record *at = m->rank >= 0 ? fa_member_record(a, m, c->stuck_seq) : NULL;
    if (!at || at->state != FRZ_STATE_ENQUEUED) continue;
    m->state = FA_MEMBER_UNFINISHED;
    m->not_started = 1;
    c->nwaiting--;
    c->nunfinished++;
  }
  return 0;
}

/* Every member posted the stuck op but some member's host thread is still
 * inside its NCCL call of it (record IN_CALL, called a second or more before
 * its dump), while every other member's call returned and waits: that call
 * never returned (stuck inside NCCL before its work reached the stream: a
 * lock, an allocation, a connection).  A call in progress beside a member
 * that never posted the op may wait for that one (NCCL connects to its
 * peers inside the call): taken then only where the member completed the
 * same collective on the comm before (its connections are up).
 * Unfinished, with not_returned. */
/* Did member m complete an op like `at` (same collective) on its comm before
 * it?  Then NCCL's connections for it are up, and a call of it does not wait
 * inside for a peer to connect. */
static int ran_before(const fa_analysis *a, const fa_member *m, const frz_record *at)
{
  const fa_frame *f = &a->frames[m->frame];
  const fa_slice *sl = &f->coll[m->entry];
  for (uint32_t k = 0; k < sl->len; k++) {
    const frz_record *x = &f->dump.records[f->idx[sl->start + k]];
    if (x->seq >= at->seq) break;
    if (x->op == at->op && x->state == FRZ_STATE_COMPLETED) return 1;
  }
  return 0;
}

int fa_not_returned(fa_analysis *a, fa_comm *c)
{
  if (!c->stuck || c->npassed || c->nahead || c->nunfinished || c->nno_dump || c->nunknown ||
      (c->has_mismatch && c->mismatch.seq <= c->stuck_seq) || !c->nwaiting)
    return 0;
  uint32_t in_call = 0, returned = 0;
  for (int32_t r = 0; r < c->size; r++) {
    const fa_member *m = &c->members[r];
    if (m->rank < 0 || m->state == FA_MEMBER_LAGGING) continue;
    const frz_record *at = fa_member_record(a, m, c->stuck_seq);
    if (m->state != FA_MEMBER_WAITING || !at || at->kind != FRZ_KIND_COLL) return 0;
    const frz_dump *d = &a->frames[m->frame].dump;
    if (at->flags & FRZ_RF_IN_CALL) {
      /* (beside a member that never posted the op, only a call whose connections are up) */
      if (!called_long_ago(d, at) || (c->nlagging && !ran_before(a, m, at))) return 0;
      in_call++;
    } else {
      returned++;
    }
  }
  if (!in_call || !returned) return 0;
  for (int32_t r = 0; r < c->size; r++) {
    fa_member *m = &c->members[r];
    const frz_record *at = m->rank >= 0 ? fa_member_record(a, m, c->stuck_seq) : NULL;
    if (!at || !(at->flags & FRZ_RF_IN_CALL)) continue;
    m->state = FA_MEMBER_UNFINISHED;
    m->not_returned = 1;
    c->nwaiting--;
    c->nunfinished++;
  }
  return 0;
}

/* A member whose record of an op at or before the stuck seq was issued on a
 * capturing stream (FRZ_RF_GRAPH_CAPTURED: the recorder tracks no completion
 * during a CUDA graph capture, and the analysis takes such a record as
 * done), while another member called that op eagerly: nothing shows that
 * the graph was ever launched, and NCCL runs a captured op only when its
 * graph is launched.  At the stuck seq the others wait for it; before it,
 * its next calls met the others' ops one seq early, and the others now wait
 * for a partner it never had.  Lagging, with not_run (and not_run_seq). */
/* Did the dump record a launch of the graph captured record x went into
 * (a replay record of its graph_id, frz 1.5)?  Then its op ran at each
 * replay, recorded there. */
static int graph_launched(const frz_dump *d, const frz_record *x)
{
  if (!x->graph_id) return 0;
  for (uint64_t i = (uint64_t)(x - d->records) + 1; i < d->nrecords; i++)
    if ((d->records[i].flags & FRZ_RF_GRAPH_REPLAY) && d->records[i].graph_id == x->graph_id) return 1;
  return 0;
}

int64_t fa_captured_alone(const fa_analysis *a, const fa_comm *c, const fa_member *m, uint64_t upto)
{
  const fa_frame *f = &a->frames[m->frame];
  const fa_slice *sl = &f->coll[m->entry];
  for (uint32_t k = 0; k < sl->len; k++) {
    const frz_record *x = &f->dump.records[f->idx[sl->start + k]];
    if (x->seq > upto) break;
    if (!(x->flags & FRZ_RF_GRAPH_CAPTURED) || x->state == FRZ_STATE_COMPLETED) continue;
    if (graph_launched(&f->dump, x)) continue; /* (its replays are recorded: it ran there) */
    for (int32_t q = 0; q < c->size; q++) {
      const fa_member *o = &c->members[q];
      const frz_record *y = o != m && o->rank >= 0 && !o->counters_unknown ? fa_member_record(a, o, x->seq) : NULL;
      if (y && !(y->flags & FRZ_RF_GRAPH_CAPTURED)) return (int64_t)x->seq;
    }
  }
  return -1;
}

int fa_not_run(fa_analysis *a, fa_comm *c)
{
  if (!c->stuck || (!c->npassed && !c->nwaiting)) return 0;
  for (int32_t r = 0; r < c->size; r++) {
    fa_member *m = &c->members[r];
    if (m->rank < 0 || m->counters_unknown || m->not_run ||
        (m->state != FA_MEMBER_PASSED && m->state != FA_MEMBER_WAITING && m->state != FA_MEMBER_LAGGING))
      continue;
    int64_t s = fa_captured_alone(a, c, m, c->stuck_seq);
    if (s < 0) continue;
    m->not_run = 1;
    m->not_run_seq = s;
    if (m->state == FA_MEMBER_LAGGING) continue; /* (behind its own stream, or never there) */
    /* its later calls met the others' one seq early (a ring's data carries
     * no op tag): what its records say from s on is not where it stands */
    if (m->state == FA_MEMBER_PASSED) c->npassed--;
    else c->nwaiting--;
    m->state = FA_MEMBER_LAGGING;
    c->nlagging++;
  }
  return 0;
}
