/* astray.c — which rank of a two-rank deadlock through a p2p op went
 * astray (fr-analyze(1), "A p2p op skipped, or sent to another peer").
 *
 * A cycle A -> B -> A where A waits in a p2p op with B that B never posted,
 * and B waits in a collective that A never entered, is a deadlock either
 * way; but the ranks' own records say which of them changed what it does:
 *  - skipped: in the round before (seq s-1 of that p2p pair, the collective's
 *    seq k-1), both posted the p2p op before the collective; now A does so
 *    again and waits in it, while B entered the collective without it.  B
 *    went astray; A did what it always did.
 *  - another peer: A's op is its first ever with B (seq 0), B never posted
 *    one, and another rank waits in a p2p op with A of a pair that was in
 *    use (seq >= 1) that A never posted: A sent (or received) to the wrong
 *    peer.  A went astray.
 *  - reordered (any two-rank cycle, p2p ops or collectives of two comms):
 *    each rank holds both ops of the cycle, and one of them enqueued the
 *    two in the other order than it did the round before (their seqs - 1),
 *    the other in the same order.  The one that swapped went astray.
 * Only what one rank's own clock orders is compared (enqueue times of its
 * own records), never times of two ranks. */
#include "config.h"

#include "internal.h"

/* The record of rank g (its latest dump) of comm c with the given kind and
 * seq, and for p2p the peer (comm rank) and direction; NULL none. */
static const frz_record *find(const fa_analysis *a, int32_t g, const fa_comm *c, uint8_t kind, uint64_t seq,
                              int32_t peer, uint8_t dir)
{
  int32_t k = fa_find_rank(a, g);
  if (k < 0) return NULL;
  const frz_dump *d = &fa_rank_latest(a, &a->ranks[k])->dump;
  for (uint64_t i = d->nrecords; i-- > 0;) {
    const frz_record *r = &d->records[i];
    if (r->comm_id != c->id || r->kind != kind || r->seq != seq) continue;
    if (kind == FRZ_KIND_P2P && (r->peer != peer || r->dir != dir)) continue;
    return r;
  }
  return NULL;
}

/* The comm rank of global rank g in c; -1 none. */
static int32_t comm_rank_of(const fa_comm *c, int32_t g)
{
  for (int32_t r = 0; r < c->size; r++)
    if (c->members[r].global_rank == g) return r;
  return -1;
}

/* The p2p link of comm c between ranks x and y at seq s, pending on x's
 * side (x posted, y did not); NULL none. */
static const fa_link *pending_link(const fa_comm *c, int32_t x, int32_t y, uint64_t s)
{
  for (uint32_t i = 0; i < c->nlinks; i++) {
    const fa_link *l = &c->links[i];
    if (!l->p2p || l->joined || l->seq != s) continue;
    int32_t w = l->pending_dir == FRZ_DIR_SEND ? l->src : l->dst;
    int32_t o = l->pending_dir == FRZ_DIR_SEND ? l->dst : l->src;
    if (w == x && o == y) return l;
  }
  return NULL;
}

/* Did rank g, in the round before, post p2p seq s-1 (peer, dir) on comm pc
 * before the collective seq k-1 of comm cc?  1 yes, 0 no or unknown. */
static int p2p_first(const fa_analysis *a, int32_t g, const fa_comm *pc, uint64_t s, int32_t peer, uint8_t dir,
                     const fa_comm *cc, uint64_t k)
{
  if (s == 0 || k == 0) return 0;
  const frz_record *p = find(a, g, pc, FRZ_KIND_P2P, s - 1, peer, dir);
  const frz_record *q = find(a, g, cc, FRZ_KIND_COLL, k - 1, -1, 0);
  return p && q && p->t_enqueue_ns && q->t_enqueue_ns && p->t_enqueue_ns < q->t_enqueue_ns;
}

/* Rank g's record of the op of wait step w, `back` rounds before w's seq:
 * the op w's rank waits in when g is that rank, else g's side of it (the
 * op it was waited for in); NULL none. */
static const frz_record *step_rec(const fa_analysis *a, const fa_wait_step *w, int32_t g, uint64_t back)
{
  const fa_comm *c = &a->comms[w->comm];
  if (w->seq < back) return NULL;
  if (!w->p2p) return find(a, g, c, FRZ_KIND_COLL, w->seq - back, -1, 0);
  const fa_link *l = pending_link(c, w->rank, w->waits_for, w->seq);
  if (!l || l->counterpart_no_dump) return NULL;
  uint8_t dir = l->pending_dir; /* the waiting side's */
  if (g != w->rank) dir = dir == FRZ_DIR_SEND ? FRZ_DIR_RECV : FRZ_DIR_SEND;
  int32_t peer = comm_rank_of(c, g == w->rank ? w->waits_for : w->rank);
  return peer < 0 ? NULL : find(a, g, c, FRZ_KIND_P2P, w->seq - back, peer, dir);
}

/* Did rank g enqueue the ops of steps x and y in the other order than in
 * the round before (each op's seq - 1)?  1 yes, 0 no, -1 unknown. */
static int flipped(const fa_analysis *a, int32_t g, const fa_wait_step *x, const fa_wait_step *y)
{
  const frz_record *xn = step_rec(a, x, g, 0), *yn = step_rec(a, y, g, 0);
  const frz_record *xp = step_rec(a, x, g, 1), *yp = step_rec(a, y, g, 1);
  if (!xn || !yn || !xp || !yp || !xn->t_enqueue_ns || !yn->t_enqueue_ns || !xp->t_enqueue_ns ||
      !yp->t_enqueue_ns)
    return -1;
  return (xn->t_enqueue_ns < yn->t_enqueue_ns) != (xp->t_enqueue_ns < yp->t_enqueue_ns);
}

int fa_cycle_astray(const fa_analysis *a, const fa_verdict *v, int *how)
{
  if (v->ncycle != 2) return -1;
  int32_t got = -1;
  for (uint32_t i = 0; i < 2; i++) {
    const fa_wait_step *p = &v->cycle[i], *q = &v->cycle[1 - i];
    if (!p->p2p || q->p2p || p->uncertain || q->uncertain) continue;
    if (q->rank != p->waits_for || q->waits_for != p->rank) continue;
    const fa_comm *pc = &a->comms[p->comm], *cc = &a->comms[q->comm];
    int32_t A = p->rank, B = q->rank;
    const fa_link *l = pending_link(pc, A, B, p->seq);
    int32_t ra = comm_rank_of(pc, A), rb = comm_rank_of(pc, B);
    if (!l || ra < 0 || rb < 0 || l->counterpart_no_dump) continue;
    uint8_t adir = l->pending_dir, bdir = adir == FRZ_DIR_SEND ? FRZ_DIR_RECV : FRZ_DIR_SEND;
    /* skipped: both did p2p before the collective last round; B not now */
    if (p2p_first(a, A, pc, p->seq, rb, adir, cc, q->seq) && p2p_first(a, B, pc, p->seq, ra, bdir, cc, q->seq)) {
      *how = FA_ASTRAY_SKIPPED;
      return B;
    }
    /* another peer: A's first op with B, while a pair A used waits for A */
    if (p->seq == 0) {
      for (uint32_t k = 0; k < pc->nlinks; k++) {
        const fa_link *o = &pc->links[k];
        if (!o->p2p || o->joined || o->seq == 0 || o->counterpart_no_dump) continue;
        int32_t w = o->pending_dir == FRZ_DIR_SEND ? o->src : o->dst;
        int32_t t = o->pending_dir == FRZ_DIR_SEND ? o->dst : o->src;
        if (t == A && w != B && w != A) {
          *how = FA_ASTRAY_PEER;
          return A;
        }
      }
    }
  }
  /* reordered: each rank holds both ops of the cycle (the one it waits in
   * and its side of the one the other waits in), and exactly one of them
   * enqueued them in the other order than in the round before */
  const fa_wait_step *p = &v->cycle[0], *q = &v->cycle[1];
  if (p->uncertain || q->uncertain || q->rank != p->waits_for || q->waits_for != p->rank) return -1;
  int fl_a = flipped(a, p->rank, p, q), fl_b = flipped(a, q->rank, p, q);
  if (fl_a == 1 && fl_b == 0) got = p->rank;
  if (fl_b == 1 && fl_a == 0) got = q->rank;
  if (got >= 0) *how = FA_ASTRAY_REORDERED;
  return got;
}
