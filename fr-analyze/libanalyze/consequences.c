/* consequences.c — faults whose consequences the wait-for graph would
 * otherwise blame: the receivers on the other ends of a p2p hub's
 * transfers, the members done by their own count after a culprit's call
 * one more or fewer, the side of a p2p pair that disagrees left waiting
 * (fr-analyze(1), "Mismatches" and "Transfers that all touch one rank").
 * Called by fa_verdict_build (verdict.c) once the root causes are found.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>

#include "internal.h"

/* Is rank g one side of the first divergence of the chosen comm, a p2p pair
 * whose two sides disagree with no culprit?  Its peer's sends and its own
 * receives no longer pair up (a pipeline stage that sends one message a
 * round fewer): its waiting alone past the others is that divergence, not a
 * call of its own beyond theirs. */
int fa_mismatch_pair_side(const fa_analysis *a, int32_t g)
{
  const fa_verdict *v = &a->verdict;
  if (v->mismatch_comm < 0 || v->mismatch_comm != v->comm) return 0;
  const fa_comm *c = &a->comms[v->mismatch_comm];
  const fa_mismatch *mm = &c->mismatch;
  if (mm->culprit >= 0 || mm->ngroups != 2 || mm->nmembers != 2) return 0;
  int p2p = 1;
  for (uint32_t i = 0; i < 2; i++)
    p2p &= mm->groups[i].sig.op == FRZ_OP_Send || mm->groups[i].sig.op == FRZ_OP_Recv;
  return p2p && (fa_global_of(c, mm->members[0]) == g || fa_global_of(c, mm->members[1]) == g);
}

/* Remove g from r (any order kept). */
static void ranks_drop(fa_ranks *r, int32_t g)
{
  uint32_t k = 0;
  for (uint32_t i = 0; i < r->n; i++)
    if (r->v[i] != g) r->v[k++] = r->v[i];
  r->n = k;
}

/* Where every p2p transfer without a counterpart of a comm touches one rank
 * (splits.c), that rank is the root cause in place of the ranks on the other
 * ends, which the wait-for graph reaches first (the receiver that rightly
 * posted nothing).  0 or -1. */
int fa_hub_instead(fa_analysis *a, uint32_t *cap_r)
{
  fa_verdict *v = &a->verdict;
  for (uint32_t ci = 0; ci < a->ncomms; ci++) {
    if (!a->comms[ci].nlinks) continue;
    fa_ranks others;
    int32_t hub = fa_p2p_hub(a, &a->comms[ci], &others);
    if (hub == -2) return -1;
    if (hub < 0) continue;
    for (uint32_t i = 0; i < others.n; i++) {
      ranks_drop(&v->root_cause, others.v[i]);
      ranks_drop(&v->lagging, others.v[i]);
    }
    fa_ranks_free(&others);
    if (fa_ranks_push(&v->root_cause, cap_r, hub)) return -1; /* (sorted and deduplicated below) */
    fa_ranks_sort(&v->root_cause);
    if (v->p2p_hub < 0) {
      v->p2p_hub = hub;
      v->p2p_hub_comm = (int32_t)ci;
    }
  }
  return 0;
}

/* A comm whose calls diverge from the culprit's first differing call on to
 * the seq before its stuck op: the culprit called one op more or fewer than
 * the others (from there every seq pairs different calls), so the stuck op
 * is its extra call, or the one it is owed.  Its members that never entered
 * it, completed every op they called there and wait in no NCCL call are
 * done by their own count: not a fault of theirs (the broadcast of one
 * parameter more on the trainer than the rollout workers receive).  Drops
 * them from the root causes; 0. */
int fa_shifted_done(fa_analysis *a)
{
  fa_verdict *v = &a->verdict;
  if (v->comm < 0 || v->mismatch_comm != v->comm) return 0;
  const fa_comm *c = &a->comms[v->comm];
  const fa_mismatch *mm = &c->mismatch;
  if (mm->culprit < 0 || !mm->later || mm->last_seq + 1 != c->stuck_seq || mm->seq >= c->stuck_seq) return 0;
  const fa_group *g = &mm->groups[mm->culprit];
  v->shifted_comm = v->comm;
  for (int32_t r = 0; r < c->size; r++) {
    const fa_member *m = &c->members[r];
    if (m->state != FA_MEMBER_LAGGING || m->rank < 0 || m->behind || m->last_completed != m->last_enqueued)
      continue;
    int culprit = 0;
    for (uint32_t i = 0; i < g->n && !culprit; i++) culprit = mm->members[g->first + i] == r;
    int32_t k = fa_find_rank(a, m->global_rank);
    if (culprit || k < 0 || a->ranks[k].wait_comm >= 0) continue;
    ranks_drop(&v->root_cause, m->global_rank);
  }
  return 0;
}
