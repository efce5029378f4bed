/* proofs.c — what a member's own records prove of the other members of its
 * comm (fr-analyze(1), "A completion proves every member joined" and the
 * CUDA graph paragraph): a completed collective that needs every member's
 * part proves they joined it, unless the calls had diverged before; a
 * replay's op after an op some member never posted has not started.
 * Called by fa_align_comm (analyze.c).
 */
#include "config.h"

#include <stdint.h>

#include "internal.h"

/* A collective that needs every member's part on every member (AllReduce,
 * AllGather, ReduceScatter, AlltoAll) completed on one member was joined
 * by all: a member whose dump does not reach its seq was dumped before it
 * got there (ranks dumped a moment apart, or one dump older), not behind
 * and not done with the comm.  Its counters are taken up to that seq (a
 * healthy PyTorch job whose rank 3 dumped three all_reduces after the
 * others read as rank 3 ahead).  Rooted collectives finish on some members
 * alone, p2p on the pair: no such proof. */
void fa_joined_by_all(const fa_analysis *a, fa_comm *c)
{
  int64_t proved = -1;
  int32_t prover = -1;
  for (int32_t r = 0; r < c->size; r++) {
    const fa_member *m = &c->members[r];
    if (m->rank < 0 || m->counters_unknown) continue;
    const fa_frame *f = &a->frames[m->frame];
    const fa_slice *sl = &f->coll[m->entry];
    /* after an op it captured into a graph that the others called eagerly,
     * its calls met the others' ops one seq early: they prove nothing */
    int64_t cap = fa_captured_alone(a, c, m, (uint64_t)1 << 62);
    for (uint32_t k = sl->len; k-- > 0;) {
      const frz_record *x = &f->dump.records[f->idx[sl->start + k]];
      if (cap >= 0 && (int64_t)x->seq > cap) continue;
      if (x->seq > ((uint64_t)1 << 62) || (int64_t)x->seq <= proved) break; /* (model.c's bound) */
      if (x->state == FRZ_STATE_COMPLETED && !(x->flags & FRZ_RF_NO_TRACKING) &&
          (x->op == FRZ_OP_AllReduce || x->op == FRZ_OP_AllGather || x->op == FRZ_OP_ReduceScatter ||
           x->op == FRZ_OP_AlltoAll)) {
        proved = (int64_t)x->seq;
        prover = r;
        break;
      }
    }
  }
  if (proved < 1) return;
  /* a member it would move on whose last op differs from the prover's at
   * that seq (another op or type) called other ops than the prover: their
   * calls diverged, and the prover's later completions may have met the
   * others' ops misaligned (a graph captured with another collective):
   * they prove nothing */
  for (int32_t r = 0; r < c->size; r++) {
    const fa_member *m = &c->members[r];
    if (r == prover || m->rank < 0 || m->counters_unknown || m->last_enqueued >= proved || m->last_enqueued < 0)
      continue;
    const frz_record *mine = fa_member_record(a, m, (uint64_t)m->last_enqueued);
    const frz_record *theirs = fa_member_record(a, &c->members[prover], (uint64_t)m->last_enqueued);
    if (mine && theirs && (mine->op != theirs->op || mine->dtype != theirs->dtype)) return;
  }
  /* (a member whose dump shows it in that op keeps its own state: it may
   * have given up on it, a late rank's op completing on data already sent) */
  for (int32_t r = 0; r < c->size; r++) {
    fa_member *m = &c->members[r];
    if (m->rank < 0 || m->counters_unknown || m->last_enqueued >= proved) continue;
    m->last_completed = m->last_enqueued = proved;
  }
}

/* Is replay record `at` (of comm `id`) behind an earlier op of the same
 * replay that some member of its comm never posted?  A replay's records
 * share the launch's events (frz 1.5): "started" says the graph started,
 * and the graph runs its captured ops in order, so an op after one that
 * waits for a member that never posted it has not started.  (An earlier op
 * every member posted may have completed: its record cannot say.) */
int fa_replay_behind(const fa_analysis *a, const frz_dump *d, const frz_record *at, uint64_t id)
{
  if (!at || !(at->flags & FRZ_RF_GRAPH_REPLAY) || !at->graph_op || at->state == FRZ_STATE_COMPLETED)
    return 0;
  uint64_t k = (uint64_t)(at - d->records);
  for (uint64_t i = k; i-- > 0 && k - i <= at->graph_op;) {
    const frz_record *r = &d->records[i];
    if (!(r->flags & FRZ_RF_GRAPH_REPLAY) || r->graph_id != at->graph_id || r->replay != at->replay ||
        r->graph_op >= at->graph_op || r->comm_id == id || r->kind != FRZ_KIND_COLL ||
        r->state == FRZ_STATE_COMPLETED || r->state == FRZ_STATE_FAILED)
      continue;
    int32_t ci = fa_find_comm(a, r->comm_id);
    if (ci < 0) continue;
    const fa_comm *x = &a->comms[ci];
    for (int32_t q = 0; q < x->size; q++) {
      const fa_member *o = &x->members[q];
      if (o->rank < 0 || o->counters_unknown || !fa_member_record(a, o, r->seq)) return 1;
    }
  }
  return 0;
}
