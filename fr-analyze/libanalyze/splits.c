/* splits.c — p2p transfers without a counterpart that all touch one rank.
 *
 * A send that no receive matches (or a receive no send matches) has two
 * possible causes: the side that never posted its counterpart left it out,
 * or the side that posted called with a peer (or a size) its partner never
 * expected.  Either end explains one such transfer alone.  When a comm holds
 * several, each between two ranks that both reached that round of the
 * exchange (the side that never posted the counterpart posted p2p ops of
 * the same comm at that pair seq or later with other peers: it was there,
 * and left this one out by its own count), the simplest explanation is the
 * fewest ranks that touch every such transfer.  One rank alone touching all
 * of them, and waiting in one of them itself (a rank that never reached the
 * exchange touches them all too, as the side that never posted), is that
 * explanation: an all-to-all-v whose split sizes that rank
 * computed otherwise (it sends where the receiver expects nothing, and
 * posts no receive where a sender sends), not the peers that each did what
 * their own splits said. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* Did comm rank `who` of c post, in its latest dump, a p2p op of c with a
 * peer other than `not_peer` at pair seq `seq` or later (not in a group
 * that never ended)? */
static int reached_round(const fa_analysis *a, const fa_comm *c, int32_t who, int32_t not_peer, uint64_t seq)
{
  const fa_member *m = &c->members[who];
  if (m->rank < 0 || m->frame < 0) return 0;
  const fa_frame *f = &a->frames[m->frame];
  if (f->dump.pt) return 0;
  const fa_slice *sl = &f->p2p[m->entry];
  for (uint32_t k = 0; k < sl->len; k++) {
    const frz_record *r = &f->dump.records[f->idx[sl->start + k]];
    if (r->peer != not_peer && r->seq >= seq && !(r->flags & FRZ_RF_GROUP_OPEN)) return 1;
  }
  return 0;
}

/* Is link l a transfer without a counterpart between two ranks that both
 * reached its round (the counterpart's side alive, with a dump, not
 * queued or held behind something else)? */
static int hard_link(const fa_analysis *a, const fa_comm *c, const fa_link *l)
{
  if (!l->p2p || l->joined || l->held_by_group || l->counterpart_no_dump || l->counterpart_ended ||
      l->counterpart_late || l->counterpart_not_started || l->counterpart_queued || l->src < 0 || l->dst < 0 ||
      l->src_comm_rank < 0 || l->dst_comm_rank < 0)
    return 0;
  int32_t waiter = l->pending_dir == FRZ_DIR_SEND ? l->src_comm_rank : l->dst_comm_rank;
  int32_t other = l->pending_dir == FRZ_DIR_SEND ? l->dst_comm_rank : l->src_comm_rank;
  return reached_round(a, c, other, waiter, l->seq);
}

int32_t fa_p2p_hub(const fa_analysis *a, const fa_comm *c, fa_ranks *others)
{
  others->v = NULL;
  others->n = 0;
  uint32_t nhard = 0;
  for (uint32_t i = 0; i < c->nlinks; i++) nhard += (uint32_t)hard_link(a, c, &c->links[i]);
  if (nhard < 2) return -1;
  /* the ranks of the first hard link are the only ones that may touch all */
  int32_t cand[2] = {-1, -1};
  for (uint32_t i = 0; i < c->nlinks && cand[0] < 0; i++)
    if (hard_link(a, c, &c->links[i])) {
      cand[0] = c->links[i].src;
      cand[1] = c->links[i].dst;
    }
  int all[2] = {1, 1};
  for (uint32_t i = 0; i < c->nlinks; i++) {
    const fa_link *l = &c->links[i];
    if (!hard_link(a, c, l)) continue;
    for (int k = 0; k < 2; k++) all[k] &= l->src == cand[k] || l->dst == cand[k];
  }
  if (all[0] == all[1] || cand[0] == cand[1]) return -1; /* none, or two: not one rank */
  int32_t hub = all[0] ? cand[0] : cand[1];
  /* it took part: a p2p op of its own on c waits (one that never reached the
   * exchange touches every transfer too, having posted none of them) */
  int waits = 0;
  for (uint32_t i = 0; i < c->nlinks && !waits; i++)
    waits = hard_link(a, c, &c->links[i]) && fa_p2p_waiter(&c->links[i]) == hub;
  if (!waits) return -1;
  uint32_t cap = 0;
  for (uint32_t i = 0; i < c->nlinks; i++) {
    const fa_link *l = &c->links[i];
    if (!hard_link(a, c, l)) continue;
    int32_t o = l->src == hub ? l->dst : l->src;
    if (!fa_ranks_has(others, o) && fa_ranks_push(others, &cap, o)) {
      fa_ranks_free(others);
      return -2;
    }
    fa_ranks_sort(others);
  }
  return hub;
}
