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
 *  - another comm (a cycle of any length): a rank waits in its first
 *    collective ever on a comm while the step before waits for it on a comm
 *    it has used: it called its op on the wrong comm.
 *  - reordered (any two-rank cycle, p2p ops or collectives of two comms):
 *    one rank enqueued the two ops of the cycle in the other order than it
 *    did the round before (their seqs - 1), or waits in its op without
 *    having called the other one, which it called first then; the other
 *    rank kept its order.  The one that changed went astray.
 * Only what one rank's own clock orders is compared (enqueue times of its
 * own records), never times of two ranks. */
#include "config.h"

#include <string.h>

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

/* Did rank g, which waits in the op of step w (the other step o waits for
 * it), change the order of the two ops since the round before (each op's
 * seq - 1)?  1: it enqueued them in the other order; 2: it never called
 * o's op now although it called it before w's op then; 0 no; -1 unknown. */
static int flipped(const fa_analysis *a, int32_t g, const fa_wait_step *w, const fa_wait_step *o)
{
  const frz_record *wn = step_rec(a, w, g, 0), *on = step_rec(a, o, g, 0);
  const frz_record *wp = step_rec(a, w, g, 1), *op = step_rec(a, o, g, 1);
  if (!wn || !wp || !op || !wn->t_enqueue_ns || !wp->t_enqueue_ns || !op->t_enqueue_ns) return -1;
  if (!on) return op->t_enqueue_ns < wp->t_enqueue_ns ? 2 : -1; /* it skipped or put off o's op */
  if (!on->t_enqueue_ns) return -1;
  return (wn->t_enqueue_ns < on->t_enqueue_ns) != (wp->t_enqueue_ns < op->t_enqueue_ns);
}

/* The rank of cycle step p that used another peer: p waits in its first
 * ever p2p op with the rank it waits for (seq 0), which never posted one,
 * while another rank waits in a p2p op with it, of a pair already in use
 * (seq >= 1), that it never posted; -1 when p is not such a step. */
static int32_t other_peer(const fa_analysis *a, const fa_wait_step *p)
{
  if (!p->p2p || p->uncertain || p->seq != 0) return -1;
  const fa_comm *pc = &a->comms[p->comm];
  int32_t A = p->rank, B = p->waits_for;
  const fa_link *l = pending_link(pc, A, B, 0);
  if (!l || l->counterpart_no_dump) return -1;
  for (uint32_t k = 0; k < pc->nlinks; k++) {
    const fa_link *o = &pc->links[k];
    if (!o->p2p || o->joined || o->seq == 0 || o->counterpart_no_dump) continue;
    int32_t w = o->pending_dir == FRZ_DIR_SEND ? o->src : o->dst;
    int32_t t = o->pending_dir == FRZ_DIR_SEND ? o->dst : o->src;
    if (t == A && w != B && w != A) return A;
  }
  return -1;
}

/* Does rank g's latest dump hold a collective of comm c below seq s? */
static int used_before(const fa_analysis *a, int32_t g, const fa_comm *c, uint64_t s)
{
  int32_t k = fa_find_rank(a, g);
  if (k < 0) return 0;
  const frz_dump *d = &fa_rank_latest(a, &a->ranks[k])->dump;
  for (uint64_t i = 0; i < d->nrecords; i++) {
    const frz_record *r = &d->records[i];
    if (r->comm_id == c->id && r->kind == FRZ_KIND_COLL && r->seq < s) return 1;
  }
  return 0;
}

/* Another comm, in a cycle of any length: the rank of exactly one step
 * waits in its first collective ever on that step's comm, the only member
 * that entered it, while the step before waits for it on a comm it has used
 * (a collective of it below that seq): it called its op on the wrong comm.
 * (Where other members wait in that first op too, the comm's first use is
 * what the job does, and a member that never came skipped it.)  That rank;
 * -1 none. */
static int32_t other_comm(const fa_analysis *a, const fa_verdict *v)
{
  int32_t got = -1;
  for (uint32_t i = 0; i < v->ncycle; i++) {
    const fa_wait_step *w = &v->cycle[i], *o = &v->cycle[(i + v->ncycle - 1) % v->ncycle];
    if (w->p2p || o->p2p || w->uncertain || o->uncertain || o->waits_for != w->rank || w->comm == o->comm) continue;
    const fa_comm *wc = &a->comms[w->comm];
    if (!wc->stuck || wc->stuck_seq != w->seq || wc->nwaiting != 1) continue;
    if (used_before(a, w->rank, wc, w->seq)) continue;
    if (!used_before(a, w->rank, &a->comms[o->comm], o->seq)) continue;
    if (got >= 0 && got != w->rank) return -1;
    got = w->rank;
  }
  return got;
}

/* Reordered, in a cycle of any length: the rank of each step waits in that
 * step's op and is waited for in the step before's; exactly one rank
 * changed the order of those two ops since the round before (flipped),
 * every other one is known to have kept it.  That one; -1 none. */
static int32_t reordered(const fa_analysis *a, const fa_verdict *v, int *how)
{
  int32_t got = -1;
  int kind = 0;
  for (uint32_t i = 0; i < v->ncycle; i++) {
    const fa_wait_step *w = &v->cycle[i], *o = &v->cycle[(i + v->ncycle - 1) % v->ncycle];
    if (w->uncertain || o->uncertain || o->waits_for != w->rank) return -1;
    int f = flipped(a, w->rank, w, o);
    if (f < 0) return -1;
    if (f == 0) continue;
    if (got >= 0) return -1; /* two changed */
    got = w->rank;
    kind = f;
  }
  if (got >= 0) *how = kind == 2 ? FA_ASTRAY_POSTPONED : FA_ASTRAY_REORDERED;
  return got;
}

/* The record of the collective cycle step o waits in (its rank's); NULL
 * for a p2p or uncertain step, or none. */
static const frz_record *awaited_coll(const fa_analysis *a, const fa_wait_step *o)
{
  if (o->p2p || o->uncertain) return NULL;
  return find(a, o->rank, &a->comms[o->comm], FRZ_KIND_COLL, o->seq, -1, 0);
}

/* The call the other side of pending p2p link l (of comm c) owes its
 * waiter, as a record in *out: comm, kind P2P, op and direction, peer the
 * waiter's comm rank, seq the link's. */
static const frz_record *owed_call(const fa_comm *c, const fa_link *l, frz_record *out)
{
  memset(out, 0, sizeof *out);
  out->comm_id = c->id;
  out->kind = FRZ_KIND_P2P;
  out->op = l->pending_dir == FRZ_DIR_SEND ? FRZ_OP_Recv : FRZ_OP_Send;
  out->dir = l->pending_dir == FRZ_DIR_SEND ? FRZ_DIR_RECV : FRZ_DIR_SEND;
  out->peer = comm_rank_of(c, fa_p2p_waiter(l));
  out->seq = l->seq;
  return out;
}

const frz_record *fa_awaited_p2p(const fa_analysis *a, const fa_wait_step *o, frz_record *out)
{
  if (!o->p2p || o->uncertain) return NULL;
  const fa_comm *c = &a->comms[o->comm];
  const fa_link *l = pending_link(c, o->rank, o->waits_for, o->seq);
  if (!l || l->counterpart_no_dump) return NULL;
  return owed_call(c, l, out);
}

/* Left out, in a cycle of any length: ranks of the cycle left out a call of
 * the collective (or the counterpart of the p2p op) the step before waits
 * for them in (their rounds: fa_round_left_out) and went on, and every other rank of the cycle kept
 * its pattern (fa_round_judge 0).  The first of them (fa_left_out_too finds
 * the others); -1 none. */
static int32_t left_out_of_round(const fa_analysis *a, const fa_verdict *v)
{
  int32_t got = -1;
  for (uint32_t i = 0; i < v->ncycle; i++) {
    const fa_wait_step *w = &v->cycle[i], *o = &v->cycle[(i + v->ncycle - 1) % v->ncycle];
    if (w->uncertain || o->waits_for != w->rank) return -1;
    int seen = 0; /* a rank may wait at several steps: judged once */
    for (uint32_t j = 0; j < i && !seen; j++) seen = v->cycle[j].rank == w->rank;
    if (seen) continue;
    frz_record p2p_sig;
    const frz_record *sig = o->p2p ? fa_awaited_p2p(a, o, &p2p_sig) : awaited_coll(a, o);
    if (sig && fa_round_left_out(a, w->rank, sig)) {
      if (got < 0) got = w->rank;
    } else if (fa_round_judge(a, w->rank) != 0) {
      return -1; /* not known to have kept its pattern */
    }
  }
  return got;
}

/* The ranks the rules look at by their rounds, at most: the members of the
 * cycle's comms to tell a job-wide change, the lagging members beside it. */
#define MAJORITY_MAX 1024

int fa_rounds_changed_most(const fa_analysis *a, const fa_verdict *v)
{
  fa_ranks seen = {NULL, 0};
  uint32_t cap = 0, changed = 0, kept = 0;
  for (uint32_t i = 0; i < v->ncycle; i++) {
    const fa_comm *c = &a->comms[v->cycle[i].comm];
    for (int32_t r = 0; r < c->size; r++)
      if (c->members[r].global_rank >= 0) (void)fa_ranks_push(&seen, &cap, c->members[r].global_rank);
  }
  fa_ranks_sort(&seen); /* (each rank once) */
  for (uint32_t k = 0; k < seen.n && k < MAJORITY_MAX; k++) {
    int j = fa_round_judge(a, seen.v[k]);
    changed += j == 1;
    kept += j == 0;
  }
  /* ... and, where those are under half the job (a pipeline pair's comm),
   * the job's other ranks: replicas that changed as one side of the pair
   * did say the job changed, not that rank */
  for (uint32_t i = 0; 2 * seen.n <= a->nranks && i < a->nranks && changed + kept < MAJORITY_MAX; i++)
    if (!fa_ranks_has(&seen, a->ranks[i].global_rank)) {
      int j = fa_round_judge(a, a->ranks[i].global_rank);
      changed += j == 1;
      kept += j == 0;
    }
  fa_ranks_free(&seen);
  return changed > kept;
}

/* reordered, unless the rounds say its rank kept its pattern (an op's seq
 * - 1 is not the round before on a comm with several ops a round), then
 * left_out_of_round; neither where most ranks of the cycle's comms changed
 * their rounds (the job changed what it does, and a rank that kept to its
 * rounds may be the one that went wrong). */
static int32_t reordered_or_left_out(const fa_analysis *a, const fa_verdict *v, int *how)
{
  if (v->rounds_changed_most) return -1;
  int32_t got = reordered(a, v, how);
  if (got >= 0 && fa_round_judge(a, got) != 0) return got;
  if ((got = left_out_of_round(a, v)) >= 0) *how = FA_ASTRAY_LEFT_OUT;
  return got;
}

/* The one rank a step of the cycle awaits as a member that never called its
 * comm's creation (fa_member.absent: placed there, and its dump holds no
 * such comm), when exactly one step is such: it left the creation out and
 * went on, where the others wait for the comm to form.  -1 none. */
static int32_t absent_creator(const fa_analysis *a, const fa_verdict *v)
{
  int32_t got = -1, n = 0;
  for (uint32_t i = 0; i < v->ncycle; i++) {
    const fa_wait_step *st = &v->cycle[i];
    if (st->p2p || st->uncertain || st->comm < 0) continue;
    const fa_comm *c = &a->comms[st->comm];
    for (int32_t r = 0; r < c->size; r++)
      if (c->members[r].absent && c->members[r].global_rank == st->waits_for && st->waits_for != got)
        got = st->waits_for, n++;
  }
  return n == 1 ? got : -1;
}

int fa_cycle_astray(const fa_analysis *a, const fa_verdict *v, int *how)
{
  int32_t ab = absent_creator(a, v);
  if (ab >= 0) {
    *how = FA_ASTRAY_NO_CREATE;
    return ab;
  }
  /* another peer, in a cycle of any length (a pipeline stage that sent to
   * or received from the wrong stage closes a cycle through the stages
   * between): when exactly one step is such a rank's */
  if (v->ncycle > 2) {
    int32_t got = -1, n = 0;
    for (uint32_t i = 0; i < v->ncycle; i++) {
      int32_t r = other_peer(a, &v->cycle[i]);
      if (r >= 0 && r != got) got = r, n++;
    }
    if (n == 1) {
      *how = FA_ASTRAY_PEER;
      return got;
    }
    if ((got = other_comm(a, v)) >= 0) {
      *how = FA_ASTRAY_COMM;
      return got;
    }
    return reordered_or_left_out(a, v, how);
  }
  if (v->ncycle != 2) return -1;
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
    /* skipped: both did p2p before the collective last round; B not now
     * (unless B's rounds say it kept its pattern: an evaluation step every
     * few steps skips it by design, and A may be the one that went on) */
    if (p2p_first(a, A, pc, p->seq, rb, adir, cc, q->seq) && p2p_first(a, B, pc, p->seq, ra, bdir, cc, q->seq) &&
        fa_round_judge(a, B) != 0) {
      *how = FA_ASTRAY_SKIPPED;
      return B;
    }
    /* another peer: A's first op with B, while a pair A used waits for A */
    if (other_peer(a, p) == A) {
      *how = FA_ASTRAY_PEER;
      return A;
    }
  }
  int32_t oc = other_comm(a, v);
  if (oc >= 0) {
    *how = FA_ASTRAY_COMM;
    return oc;
  }
  return reordered_or_left_out(a, v, how);
}

int fa_left_out_too(const fa_analysis *a, const fa_verdict *v, fa_ranks *out)
{
  uint32_t cap = 0, judged = 0;
  if (v->rounds_changed_most) return 0;
  for (uint32_t ci = 0; ci < a->ncomms; ci++) {
    const fa_comm *c = &a->comms[ci];
    if (!c->stuck || !c->nlagging) continue;
    const frz_record *sig = NULL; /* the stuck op, as a member that waits in it made it */
    for (int32_t r = 0; r < c->size && !sig; r++)
      if (c->members[r].state == FA_MEMBER_WAITING && c->members[r].global_rank >= 0)
        sig = find(a, c->members[r].global_rank, c, FRZ_KIND_COLL, c->stuck_seq, -1, 0);
    for (int32_t r = 0; sig && r < c->size; r++) {
      int32_t g = c->members[r].global_rank, k = g >= 0 ? fa_find_rank(a, g) : -1;
      if (c->members[r].state != FA_MEMBER_LAGGING || k < 0 || g == v->astray) continue;
      if (a->ranks[k].wait_comm < 0 || a->ranks[k].wait_comm == (int32_t)ci) continue;
      if (judged++ >= MAJORITY_MAX) break; /* (each judgment reads the rank's records) */
      if (fa_round_left_out(a, g, sig) && fa_ranks_push(out, &cap, g)) return -1;
    }
  }
  fa_ranks_sort(out);
  return 0;
}

int fa_p2p_left_out(const fa_analysis *a, fa_ranks *out)
{
  uint32_t cap = 0, judged = 0;
  for (uint32_t ci = 0; ci < a->ncomms; ci++) {
    const fa_comm *c = &a->comms[ci];
    for (uint32_t i = 0; i < c->nlinks && judged < MAJORITY_MAX; i++) {
      const fa_link *l = &c->links[i];
      /* (a counterpart posted but queued on its stream, or not started, was not left out) */
      if (!l->p2p || l->joined || l->counterpart_no_dump || l->counterpart_queued || l->counterpart_not_started ||
          l->counterpart_ended || l->counterpart_late)
        continue;
      int32_t w = fa_p2p_waiter(l), g = l->pending_dir == FRZ_DIR_SEND ? l->dst : l->src;
      int32_t k = g >= 0 ? fa_find_rank(a, g) : -1;
      if (k < 0 || a->ranks[k].wait_comm < 0) continue; /* (it waits in NCCL elsewhere) */
      int dup = 0;
      for (uint32_t j = 0; j < out->n && !dup; j++) dup = out->v[j] == g;
      if (dup) continue;
      if (judged++ >= MAJORITY_MAX) break;
      if (fa_round_judge(a, w) != 0) continue; /* a waiter that did not keep its rounds may be the one that changed */
      frz_record sig;
      if (fa_round_left_out(a, g, owed_call(c, l, &sig)) && fa_ranks_push(out, &cap, g)) return -1;
    }
  }
  fa_ranks_sort(out);
  return 0;
}
