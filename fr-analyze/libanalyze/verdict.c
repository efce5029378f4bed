/* verdict.c — across communicators: who waits where, which blocked comm
 * explains the hang (the start of the wait-for chain), or a cycle of them;
 * then the verdict (its one-sentence summary: summary.c). */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* ---- blame: what a blocked comm waits for ------------------------------------- */

/* Is comm c blocked: a stuck collective, or a pending p2p op with no
 * counterpart? */
static int blocked(const fa_comm *c)
{
  if (c->stuck) return 1;
  for (uint32_t i = 0; i < c->nlinks; i++)
    if (c->links[i].p2p) return 1;
  return 0;
}

/* Did rank index k's process end (its latest dump written at exit or on a
 * fatal signal)?  It waits for nobody any more: where waits for it end. */
static int ended(const fa_analysis *a, int32_t k)
{
  const frz_dump *d = &fa_rank_latest(a, &a->ranks[k])->dump;
  uint32_t t = d->process.trigger;
  /* one that gave up waiting (aborted, then ended; or ended after waiting)
   * still waits where it gave up */
  return fa_trigger_ended(t) && !fa_gave_up(d, 0) && !fa_ended_waiting(d);
}

/* Does global rank g wait in comm c's stuck collective, as a member that
 * joined it (its own process waits there too)? */
static int waits_in_stuck(const fa_analysis *a, const fa_comm *c, int32_t g)
{
  int32_t k = g >= 0 ? fa_find_rank(a, g) : -1;
  if (k < 0 || !c->stuck || a->ranks[k].wait_comm != (int32_t)(c - a->comms)) return 0;
  for (int32_t r = 0; r < c->size; r++)
    if (c->members[r].global_rank == g) return c->members[r].state == FA_MEMBER_WAITING;
  return 0;
}

/* The global ranks the waiting side of c waits for (the lagging side of its
 * stuck collective, else its members without a dump; the counterparts of
 * its unmatched p2p ops); *unknown counts those without a known rank. */
static int blame(const fa_analysis *a, const fa_comm *c, fa_ranks *out, uint32_t *unknown)
{
  uint32_t cap = 0;
  out->v = NULL;
  out->n = 0;
  *unknown = 0;
  if (c->stuck && !c->nahead && !c->end_unclear && (c->nwaiting || c->npassed)) {
    fa_member_state want = c->nlagging       ? FA_MEMBER_LAGGING
                           : c->nunfinished ? FA_MEMBER_UNFINISHED
                                            : FA_MEMBER_NO_DUMP;
    for (int32_t r = 0; r < c->size; r++) {
      const fa_member *m = &c->members[r];
      if (m->state != want) continue;
      /* (unfinished beside a member whose comm reported an async error: that error broke the op) */
      if (want == FA_MEMBER_UNFINISHED && c->nasync_error && !m->async_error) continue;
      if (m->global_rank < 0) (*unknown)++;
      else if (fa_ranks_push(out, &cap, m->global_rank)) return -1;
    }
  }
  for (uint32_t i = 0; i < c->nlinks; i++) {
    const fa_link *l = &c->links[i];
    if (!l->p2p || l->joined) continue; /* (a joined pair blames nobody) */
    /* a p2p op left pending by a process that ended waits for nobody */
    int32_t wk = fa_find_rank(a, fa_p2p_waiter(l));
    if (wk >= 0 && ended(a, wk)) continue;
    /* nor does one ahead of every other member (they are done) */
    int ahead = 0;
    for (int32_t r = 0; c->nahead && r < c->size && !ahead; r++)
      ahead = c->members[r].state == FA_MEMBER_AHEAD && c->members[r].global_rank == fa_p2p_waiter(l);
    if (ahead) continue;
    int32_t g = l->pending_dir == FRZ_DIR_SEND ? l->dst : l->src;
    /* nor does a counterpart that waits in this comm's stuck collective for
     * its lagging side (blamed above): it must pass that op before it can
     * post this one (NCCL runs a comm's calls in order on its stream) */
    if (waits_in_stuck(a, c, g) && out->n) continue;
    if (g < 0) (*unknown)++;
    else if (fa_ranks_push(out, &cap, g)) return -1;
  }
  fa_ranks_sort(out);
  return 0;
}

/* How many members cycle step st awaits: its comm's lagging members, when
 * it is a collective step with every member placed; 0 otherwise.  With
 * members that left no dump, several lagging members with a dump are
 * several whatever those are; one alone may not be (0). */
static uint32_t step_awaits(const fa_analysis *a, const fa_wait_step *st)
{
  const fa_comm *c = &a->comms[st->comm];
  if (st->p2p || st->uncertain) return 0;
  if (c->nno_dump) return c->nlagging >= 2 ? c->nlagging : 0;
  return c->nlagging;
}

/* Does global rank g wait, in v's cycle, in a step that awaits several
 * members of its comm? */
static int waits_for_several(const fa_analysis *a, const fa_verdict *v, int32_t g)
{
  for (uint32_t i = 0; i < v->ncycle; i++)
    if (v->cycle[i].rank == g) return step_awaits(a, &v->cycle[i]) > 1;
  return 0;
}

/* Mark, for every rank, the first comm where it waits. */
static void mark_waits(fa_analysis *a)
{
  for (uint32_t ci = 0; ci < a->ncomms; ci++) {
    const fa_comm *c = &a->comms[ci];
    /* a member that completed the stuck op but has later ops pending waits
     * in the comm too (behind the same members) */
    if (c->stuck)
      for (int32_t r = 0; r < c->size; r++) {
        const fa_member *m = &c->members[r];
        int waits = m->state == FA_MEMBER_WAITING || m->state == FA_MEMBER_AHEAD ||
                    (m->state == FA_MEMBER_PASSED && m->last_completed < m->last_enqueued) ||
                    fa_unfinished_waits(c, m);
        if (m->rank >= 0 && waits && a->ranks[m->rank].wait_comm < 0 && !ended(a, m->rank))
          a->ranks[m->rank].wait_comm = (int32_t)ci;
      }
    for (uint32_t i = 0; i < c->nlinks; i++) {
      if (!c->links[i].p2p) continue;
      int32_t k = fa_find_rank(a, fa_p2p_waiter(&c->links[i]));
      if (k >= 0 && a->ranks[k].wait_comm < 0 && !ended(a, k)) a->ranks[k].wait_comm = (int32_t)ci;
      /* both sides of a joined pair wait in it (for the link, not a rank) */
      int32_t q = c->links[i].joined ? fa_find_rank(a, c->links[i].dst) : -1;
      if (q >= 0 && a->ranks[q].wait_comm < 0 && !ended(a, q)) a->ranks[q].wait_comm = (int32_t)ci;
    }
  }
}

/* A lone member "ahead" of others that are idle in its comm only because
 * they wait in other comms is not ahead: it waits for them, like any
 * member of a stuck op waits for the members that never entered it (they
 * may be deadlocked elsewhere).  Undo the ahead reading of such comms. */
static void not_ahead(fa_analysis *a)
{
  for (uint32_t ci = 0; ci < a->ncomms; ci++) {
    fa_comm *c = &a->comms[ci];
    if (!c->nahead) continue;
    int all_wait = 1;
    for (int32_t r = 0; r < c->size && all_wait; r++) {
      const fa_member *m = &c->members[r];
      if (m->state == FA_MEMBER_IDLE && (m->absent || fa_ended_cleanly(a, c, m) ||
                                         (m->rank >= 0 && a->ranks[m->rank].wait_comm < 0)))
        all_wait = 0; /* (an absent member idle here, or one that exited cleanly, ended its work:
                         it waits nowhere) */
    }
    if (!all_wait) continue;
    c->nahead = 0;
    for (int32_t r = 0; r < c->size; r++) {
      fa_member *m = &c->members[r];
      if (m->state == FA_MEMBER_AHEAD) {
        m->state = FA_MEMBER_WAITING;
        c->nwaiting++;
      } else if (m->state == FA_MEMBER_IDLE && m->rank >= 0 && m->last_enqueued < (int64_t)c->stuck_seq) {
        m->state = FA_MEMBER_LAGGING;
        c->nlagging++;
      }
    }
  }
}

/* Does comm c have members ahead, its other members with a dump all done
 * by their own records (fa_member_done, without PyTorch's "taken as done")? */
static int ahead_proven(const fa_analysis *a, const fa_comm *c)
{
  if (!c->nahead) return 0;
  for (int32_t r = 0; r < c->size; r++) {
    const fa_member *m = &c->members[r];
    if (m->rank < 0 || m->state == FA_MEMBER_AHEAD) continue;
    if (m->frame < 0 || a->frames[m->frame].dump.pt || !fa_member_done(a, m)) return 0;
  }
  return 1;
}

/* Is rank index k ahead in some comm other than ci? */
static int ahead_in_other(const fa_analysis *a, int32_t k, uint32_t ci)
{
  for (uint32_t cj = 0; cj < a->ncomms; cj++) {
    const fa_comm *c = &a->comms[cj];
    for (int32_t r = 0; cj != ci && c->nahead && r < c->size; r++)
      if (c->members[r].rank == k && c->members[r].state == FA_MEMBER_AHEAD) return 1;
  }
  return 0;
}

/* A rank ahead in one comm (everyone else there done with it) that waits in
 * another comm only for members that are done too (they tore the comm down
 * where it waits, or are idle at the end) is ahead there as well: the others
 * ended where the job ends, it ran on; they are not lagging.  (A comm where
 * that alone does not tell, half its members there or unseen, is told by
 * the other.) */
static void ahead_elsewhere(fa_analysis *a)
{
  for (uint32_t ci = 0; ci < a->ncomms; ci++) {
    fa_comm *c = &a->comms[ci];
    if (!c->stuck || c->nahead || !c->nwaiting || c->nunfinished || c->npassed) continue;
    int ok = 1;
    for (int32_t r = 0; r < c->size && ok; r++) {
      const fa_member *m = &c->members[r];
      if (m->rank < 0) continue;
      if (m->state == FA_MEMBER_WAITING) ok = ahead_in_other(a, m->rank, ci);
      else if (m->state == FA_MEMBER_LAGGING) ok = m->left;
      else ok = m->state == FA_MEMBER_IDLE;
    }
    if (!ok) continue;
    for (int32_t r = 0; r < c->size; r++) {
      fa_member *m = &c->members[r];
      if (m->rank < 0) continue;
      if (m->state == FA_MEMBER_WAITING) {
        m->state = FA_MEMBER_AHEAD;
        c->nwaiting--;
        c->nahead++;
      } else if (m->state == FA_MEMBER_LAGGING) {
        m->state = FA_MEMBER_IDLE;
        m->left = 0;
        c->nlagging--;
      }
    }
  }
}

/* Number of members (or p2p sides) of c that wait. */
static uint32_t waiters(const fa_comm *c)
{
  uint32_t n = c->nwaiting + c->nahead + (c->nunfinished ? c->npassed : 0);
  for (uint32_t i = 0; i < c->nlinks; i++)
    if (c->links[i].p2p) n++;
  return n;
}

/* Is comm ci, blocked, where the hang starts: everyone its waiters wait for
 * is where a wait starts (free of NCCL, dead, or unfinished there)?  When
 * some of them wait in an NCCL call, the chain goes on. */
static int is_root(const fa_analysis *a, const fa_wgraph *g, int32_t ci, const fa_ranks *bl,
                   uint32_t unknown)
{
  const fa_comm *c = &a->comms[ci];
  /* comm ranks of a comm that never formed, which may be one of several
   * ranks with dumps: the chain goes on when none of those is a root */
  uint32_t placed = 0;
  for (int32_t r = 0; r < c->size; r++) {
    const fa_member *m = &c->members[r];
    if (m->global_rank >= 0 || !m->ncand || !fa_member_blamed(c, m)) continue;
    int none = 1;
    for (uint32_t i = 0; i < m->ncand && none; i++) {
      int32_t k = fa_find_rank(a, m->cand[i]);
      none = k >= 0 && !fa_wgraph_is_root(g, k, ci);
    }
    placed += none;
  }
  unknown -= placed < unknown ? placed : unknown;
  if (c->nahead || (unknown && !bl->n)) return 1;
  for (uint32_t i = 0; i < bl->n; i++)
    if (!fa_wgraph_is_root(g, fa_find_rank(a, bl->v[i]), ci)) return 0;
  return !(placed && !bl->n && !unknown);
}

/* Is comm x a better explanation than comm y (more waiters, larger, lower id)? */
static int better(const fa_analysis *a, int32_t x, int32_t y)
{
  if (y < 0) return 1;
  uint32_t wx = waiters(&a->comms[x]), wy = waiters(&a->comms[y]);
  if (wx != wy) return wx > wy;
  if (a->comms[x].size != a->comms[y].size) return a->comms[x].size > a->comms[y].size;
  return x < y;
}

/* Follow the waits from comm start (none of whose awaited ranks is a root)
 * to the comm where they end: one whose waiters wait for nobody in
 * particular (all joined), or a p2p pair both sides posted and started
 * (joined) that the awaited rank is in.  Bounded: a cycle was looked for
 * before. */
static int chain_end(const fa_analysis *a, const fa_wgraph *g, int32_t start, int32_t *end)
{
  int32_t c = start;
  *end = start;
  for (uint32_t step = 0; step <= a->nranks; step++) {
    fa_ranks bl;
    uint32_t unknown;
    if (blame(a, &a->comms[c], &bl, &unknown)) return -1;
    int32_t k = bl.n ? fa_find_rank(a, bl.v[0]) : -1;
    fa_ranks_free(&bl);
    *end = c;
    if (k < 0 || a->ranks[k].wait_comm < 0) return 0;
    /* nor does it go on past a rank whose own call here is its fault (one
     * that never ran, or that it left): where else it waits follows */
    if (fa_wgraph_is_root(g, k, c)) return 0;
    c = a->ranks[k].wait_comm;
    /* where it waits in a p2p pair that both sides posted and started and
     * neither finished (joined), the chain ends: the pair waits for no rank */
    for (uint32_t i = 0; i < a->comms[c].nlinks; i++)
      if (a->comms[c].links[i].p2p && a->comms[c].links[i].joined &&
          (a->comms[c].links[i].src == a->ranks[k].global_rank ||
           a->comms[c].links[i].dst == a->ranks[k].global_rank)) {
        *end = c;
        return 0;
      }
  }
  return 0;
}

/* ---- the links reported in the verdict ------------------------------------------ */

/* Where a link comes in the verdict's list: what the dumps show first
 * (proxy progress, then unmatched p2p ops), then ring edges only inferred,
 * then links that only wait with their NCCL group (consequences). */
static int link_rank(const fa_link *l)
{
  if (l->held_by_group) return 3;
  if (l->inferred) return 2;
  return l->p2p ? 1 : 0;
}

static int cmp_link(const void *x, const void *y)
{
  const fa_link *a = x, *b = y;
  int ra = link_rank(a), rb = link_rank(b);
  if (ra != rb) return ra < rb ? -1 : 1;
  if (a->comm != b->comm) return a->comm < b->comm ? -1 : 1;
  if (a->src != b->src) return a->src < b->src ? -1 : 1;
  if (a->dst != b->dst) return a->dst < b->dst ? -1 : 1;
  if (a->seq != b->seq) return a->seq < b->seq ? -1 : 1;
  if (a->channel != b->channel) return a->channel < b->channel ? -1 : 1;
  return (a->pending_dir > b->pending_dir) - (a->pending_dir < b->pending_dir);
}

/* The links of the chosen comm and every unmatched p2p op, in link_rank
 * order. */
static int collect_links(fa_analysis *a)
{
  fa_verdict *v = &a->verdict;
  uint32_t n = 0;
  for (uint32_t ci = 0; ci < a->ncomms; ci++)
    for (uint32_t i = 0; i < a->comms[ci].nlinks; i++)
      if (a->comms[ci].links[i].p2p || (int32_t)ci == v->comm) n++;
  if (!n) return 0;
  v->links = malloc(n * sizeof *v->links);
  if (!v->links) return -1;
  for (uint32_t ci = 0; ci < a->ncomms; ci++)
    for (uint32_t i = 0; i < a->comms[ci].nlinks; i++)
      if (a->comms[ci].links[i].p2p || (int32_t)ci == v->comm)
        v->links[v->nlinks++] = a->comms[ci].links[i];
  qsort(v->links, v->nlinks, sizeof *v->links, cmp_link);
  return 0;
}

/* ---- the verdict ------------------------------------------------------------------ */

/* Global ranks of comm c's members in state s, appended to r. */
static int add_state(const fa_comm *c, fa_member_state s, fa_ranks *r, uint32_t *cap)
{
  for (int32_t i = 0; i < c->size; i++)
    if (c->members[i].state == s && c->members[i].global_rank >= 0 &&
        fa_ranks_push(r, cap, c->members[i].global_rank))
      return -1;
  return 0;
}

/* The job is slow, not hung: what looked stuck is in flight, so that the
 * details tell the verdict's story (no comm stuck, no member lagging or
 * waiting, no missing link). */
static void in_flight(fa_analysis *a)
{
  for (uint32_t ci = 0; ci < a->ncomms; ci++) {
    fa_comm *c = &a->comms[ci];
    if (!c->stuck) continue;
    c->stuck = 0;
    c->in_flight = 1;
    for (int32_t r = 0; r < c->size; r++)
      if (c->members[r].rank >= 0) c->members[r].state = FA_MEMBER_IDLE;
    c->nwaiting = c->nlagging = c->npassed = c->nahead = c->nunfinished = 0;
    uint32_t keep = 0;
    for (uint32_t i = 0; i < c->nlinks; i++) /* links of ops in flight: none missing */
      if (!c->links[i].inferred && !c->links[i].evidence && !c->links[i].p2p && !c->links[i].joined)
        c->links[keep++] = c->links[i];
    c->nlinks = keep;
  }
  for (uint32_t i = 0; i < a->nranks; i++) a->ranks[i].wait_comm = -1;
}

/* Where root-cause rank g is blamed: the chosen comm first, then any stuck
 * comm where it lagged, never finished or left no dump, then a p2p op it
 * never posted. */
static fa_root root_where(const fa_analysis *a, int32_t g)
{
  fa_root w = {g, -1, 0, FA_MEMBER_IDLE};
  for (int32_t pass = 0; pass < 2; pass++)
    for (uint32_t ci = 0; ci < a->ncomms; ci++) {
      const fa_comm *c = &a->comms[ci];
      if ((pass == 0) != ((int32_t)ci == a->verdict.comm) || !c->stuck) continue;
      for (int32_t r = 0; r < c->size; r++) {
        const fa_member *m = &c->members[r];
        if (m->global_rank != g) continue;
        if (fa_member_blamed(c, m)) return (fa_root){g, (int32_t)ci, c->stuck_seq, (uint8_t)m->state};
        if (c->beyond_seq >= 0 && m->state == FA_MEMBER_PASSED && m->last_enqueued < c->beyond_seq)
          return (fa_root){g, (int32_t)ci, (uint64_t)c->beyond_seq, FA_MEMBER_LAGGING};
      }
    }
  for (uint32_t ci = 0; ci < a->ncomms; ci++)
    for (uint32_t i = 0; i < a->comms[ci].nlinks; i++) {
      const fa_link *l = &a->comms[ci].links[i];
      if (l->p2p && !l->joined && (l->pending_dir == FRZ_DIR_SEND ? l->dst : l->src) == g)
        return (fa_root){g, (int32_t)ci, l->seq, FA_MEMBER_IDLE};
    }
  return w;
}

/* Does comm c hold a joined p2p pair (both sides started, neither done)? */
static int has_joined(const fa_comm *c)
{
  for (uint32_t i = 0; i < c->nlinks; i++)
    if (c->links[i].p2p && c->links[i].joined) return 1;
  return 0;
}

/* Which blocked comm explains the hang: the best root of a wait-for chain,
 * else the end of the chain from the best blocked comm (or a cycle). */
static int choose_comm(fa_analysis *a, const fa_wgraph *g)
{
  fa_verdict *v = &a->verdict;
  int32_t best_root = -1, best_blamed = -1, best_any = -1;
  for (uint32_t ci = 0; ci < a->ncomms; ci++) {
    if (!blocked(&a->comms[ci])) continue;
    fa_ranks bl;
    uint32_t unknown;
    if (blame(a, &a->comms[ci], &bl, &unknown)) return -1;
    int has = bl.n || unknown || a->comms[ci].nahead;
    if (has && is_root(a, g, (int32_t)ci, &bl, unknown) && better(a, (int32_t)ci, best_root))
      best_root = (int32_t)ci;
    if (has && better(a, (int32_t)ci, best_blamed)) best_blamed = (int32_t)ci;
    if (better(a, (int32_t)ci, best_any)) best_any = (int32_t)ci;
    fa_ranks_free(&bl);
  }
  v->comm = best_root >= 0 ? best_root : -1;
  /* ranks whose waits close a cycle are deadlocked whatever else is wrong:
   * a root elsewhere (a rank that left no dump, say) frees none of them */
  if (best_blamed >= 0 && fa_wgraph_cycle(a, g, &v->cycle, &v->ncycle)) return -1;
  if (v->cycle) v->comm = v->cycle[0].comm;
  else if (v->comm < 0 && best_blamed >= 0 && chain_end(a, g, best_blamed, &v->comm)) return -1;
  if (v->comm < 0) v->comm = best_any;
  /* with no root, a p2p pair both sides posted and started and neither
   * finished (joined) says more than a collective stuck behind it in the
   * same group or stream: the story is that pair's (the first such comm) */
  if (best_root < 0 && !v->cycle && v->comm >= 0 && !has_joined(&a->comms[v->comm]))
    for (uint32_t ci = 0; ci < a->ncomms; ci++)
      if (has_joined(&a->comms[ci])) {
        v->comm = (int32_t)ci;
        break;
      }
  return 0;
}

/* Is every rank without a dump one that a shrink left out: a member of the
 * parent of a comm made by ncclCommShrink that formed, is not stuck, and
 * whose members (all known) do not include it?  The survivors went on
 * without it (it died, and the job recovered): its missing dump says
 * nothing of a hang. */
static int shrunk_out(const fa_analysis *a)
{
  for (uint32_t i = 0; i < a->ranks_missing.n; i++) {
    int32_t g = a->ranks_missing.v[i];
    int explained = 0;
    for (uint32_t ci = 0; ci < a->ncomms && !explained; ci++) {
      const fa_comm *c = &a->comms[ci];
      const frz_comm *fc = c->npresent ? fa_member_comm(a, &c->members[0]) : NULL;
      for (int32_t r = 0; !fc && r < c->size; r++)
        if (c->members[r].rank >= 0) fc = fa_member_comm(a, &c->members[r]);
      if (!fc || !(fc->flags & FRZ_CF_SHRINK) || c->stuck || c->unformed || c->npresent != (uint32_t)c->size)
        continue;
      int32_t pi = fa_find_comm(a, c->parent_id);
      if (pi < 0) continue;
      int in_parent = 0, in_child = 0;
      for (int32_t r = 0; r < a->comms[pi].size; r++) in_parent |= a->comms[pi].members[r].global_rank == g;
      for (int32_t r = 0; r < c->size; r++) in_child |= c->members[r].global_rank == g;
      explained = in_parent && !in_child;
    }
    if (!explained) return 0;
  }
  return 1;
}

/* Is comm c's first divergence one of NCCL's algorithm or protocol alone? */
static int config_split(const fa_comm *c)
{
  unsigned how = FA_FIELD_ALGO | FA_FIELD_PROTO;
  return c->has_mismatch && (c->mismatch.fields & how) && !(c->mismatch.fields & ~how);
}

int fa_verdict_build(fa_analysis *a)
{
  fa_verdict *v = &a->verdict;
  mark_waits(a);
  not_ahead(a);
  ahead_elsewhere(a);
  fa_wgraph *wg = fa_wgraph_build(a);
  if (!wg) return -1;

  if (choose_comm(a, wg)) {
    fa_wgraph_free(wg);
    return -1;
  }
  for (uint32_t ci = 0; ci < a->ncomms && v->mismatch_comm < 0; ci++)
    if (a->comms[ci].has_mismatch) v->mismatch_comm = (int32_t)ci;
  if (v->comm >= 0 && a->comms[v->comm].has_mismatch) v->mismatch_comm = v->comm;

  /* every rank seen in several frames moved on: slow, not hung */
  int slow = v->frames_progress && !v->cycle; /* (a mismatch too: ops that moved between frames are in flight) */
  /* progress is per (rank, comm): a stuck comm none of whose members
   * completed more of it between frames is hung, whatever else moved */
  for (uint32_t ci = 0; slow && ci < a->ncomms; ci++)
    if (a->comms[ci].stuck && !fa_comm_moved(a, &a->comms[ci])) slow = 0;
  if (slow) in_flight(a);
  if (slow) v->comm = -1;
  uint32_t cap_r = 0, cap_a = 0;
  if (v->comm >= 0 && !v->cycle) {
    const fa_comm *c = &a->comms[v->comm];
    uint32_t unknown;
    if (blame(a, c, &v->lagging, &unknown)) return -1;
    /* the counterpart of an unmatched p2p op that waits inside an NCCL call
     * itself (in this comm's stuck collective, say), or a member queued on
     * its stream behind an op that waits, is not lagging: it waits */
    uint32_t keep = 0;
    for (uint32_t i = 0; i < v->lagging.n; i++) {
      int32_t g = v->lagging.v[i], k = fa_find_rank(a, g);
      int coll_lagging = 0, not_run = 0;
      for (int32_t r = 0; r < c->size && !coll_lagging; r++) {
        /* (one behind on its stream waits for that op, unless that op never ran) */
        coll_lagging = c->members[r].global_rank == g && fa_member_blamed(c, &c->members[r]) &&
                       (!c->members[r].behind || c->members[r].not_run);
        not_run = coll_lagging && c->members[r].not_run;
      }
      /* one that waits in a p2p op of this comm has not reached the
       * collective either: its stream runs that op first (it waits); but
       * not one whose op never ran (not_run): its later calls met the
       * others' one seq early, and where they wait is not where it stands */
      for (uint32_t li = 0; li < c->nlinks && coll_lagging && !not_run; li++)
        if (c->links[li].p2p && fa_p2p_waiter(&c->links[li]) == g && k >= 0 && a->ranks[k].wait_comm >= 0)
          coll_lagging = 0;
      if (coll_lagging || not_run || k < 0 || a->ranks[k].wait_comm < 0) v->lagging.v[keep++] = g;
    }
    v->lagging.n = keep;
    if (c->nunfinished && !c->nlagging) { /* they reached it: root causes, not lagging */
      v->unfinished = v->lagging;
      v->lagging = (fa_ranks){NULL, 0};
    }
    if (add_state(c, FA_MEMBER_AHEAD, &v->ahead, &cap_a)) return -1;
    v->all_joined = c->stuck && !v->lagging.n && !v->unfinished.n && !unknown && !c->nahead &&
                    !c->nno_dump && !c->nunknown && !c->nlagging;
    /* calls that do not match explain why a joined op cannot complete */
    if (c->has_mismatch && c->mismatch.seq <= c->stuck_seq) v->all_joined = 0;
    /* joined, but some only after the others had given up: too late */
    if (v->all_joined) {
      int n = fa_came_late(a, c, &v->late, &v->late_left, &v->late_by_ns);
      if (n < 0) return -1;
      if (n > 0) v->all_joined = 0;
      for (uint32_t i = 0; i < v->late.n; i++)
        if (fa_ranks_push(&v->root_cause, &cap_r, v->late.v[i])) return -1;
    }
  }
  /* the lagging ranks that wait in no NCCL call themselves (a p2p peer
   * that never posted may wait elsewhere, even in the same comm) */
  for (uint32_t i = 0; i < v->lagging.n; i++)
    if (fa_wgraph_is_root(wg, fa_find_rank(a, v->lagging.v[i]), v->comm) &&
        fa_ranks_push(&v->root_cause, &cap_r, v->lagging.v[i]))
      return -1;
  /* a call that never returned beside members that never posted the op is a
   * fault of its own too (analyze.c: its connections were up) */
  for (int32_t r = 0; v->comm >= 0 && v->lagging.n && r < a->comms[v->comm].size; r++) {
    const fa_member *m = &a->comms[v->comm].members[r];
    if (m->not_returned && m->global_rank >= 0 && !fa_ranks_has(&v->unfinished, m->global_rank)) {
      uint32_t cap_u = v->unfinished.n;
      if (fa_ranks_push(&v->unfinished, &cap_u, m->global_rank)) return -1;
    }
  }
  for (uint32_t i = 0; i < v->unfinished.n; i++)
    if (fa_ranks_push(&v->root_cause, &cap_r, v->unfinished.v[i])) return -1;
  /* the ends of every wait-for chain, not only the chosen comm's (beside a
   * cycle too) */
  if (v->comm >= 0) {
    fa_ranks ends = {NULL, 0};
    uint32_t dead = 0;
    int bad = fa_wgraph_roots(a, wg, &ends, &dead);
    for (uint32_t i = 0; !bad && i < ends.n; i++) bad = fa_ranks_push(&v->root_cause, &cap_r, ends.v[i]);
    fa_ranks_free(&ends);
    /* beside a hang's chains, ranks whose rounds say they left out the send
     * or receive a pending p2p op waits for, and went on into another op:
     * a fault of their own, where they wait (a pipeline stage that skipped
     * a backward receive, behind a stage stopped elsewhere) */
    if (!bad && !v->cycle) bad = fa_p2p_left_out(a, &v->left_out_too);
    for (uint32_t i = 0; !bad && i < v->left_out_too.n; i++)
      bad = fa_ranks_push(&v->root_cause, &cap_r, v->left_out_too.v[i]);
    if (bad) {
      fa_wgraph_free(wg);
      return -1;
    }
  }
  for (uint32_t i = 0; i < v->ahead.n; i++)
    if (!fa_mismatch_pair_side(a, v->ahead.v[i]) && fa_ranks_push(&v->root_cause, &cap_r, v->ahead.v[i])) return -1;
  /* ... and the members ahead in every other comm whose other members with
   * a dump are done by their own records (a process that ended, or the comm
   * torn down; not a PyTorch dump, only taken as done): a hang of its own,
   * whose waits end at them, beside this one */
  for (uint32_t ci = 0; v->comm >= 0 && ci < a->ncomms; ci++)
    for (int32_t r = 0; (int32_t)ci != v->comm && ahead_proven(a, &a->comms[ci]) && r < a->comms[ci].size; r++) {
      const fa_member *m = &a->comms[ci].members[r];
      if (m->state == FA_MEMBER_AHEAD && m->global_rank >= 0 &&
          fa_ranks_push(&v->root_cause, &cap_r, m->global_rank))
        return -1;
    }
  /* the ranks of a cycle are its cause, unless a mismatch with a culprit
   * made it (the calls that differ come first) */
  int culprit = v->mismatch_comm >= 0 && a->comms[v->mismatch_comm].mismatch.culprit >= 0;
  /* ... and of those, the ones a step of it awaits as the only member of
   * its comm that never entered the op (where some step waits for one
   * member alone, and another for several: a rank that skipped a call of
   * one comm and went on into another's left the others of both waiting;
   * it is the one that went astray) */
  uint32_t sole = 0, several = 0;
  for (uint32_t i = 0; i < v->ncycle; i++) {
    uint32_t k = step_awaits(a, &v->cycle[i]);
    sole += k == 1;
    several += k > 1;
  }
  /* a two-rank cycle through a p2p op: the rank whose own records show it
   * changed what it does (skipped the op, or used another peer) alone */
  int how = 0;
  v->rounds_changed_most = !culprit && v->cycle && fa_rounds_changed_most(a, v);
  v->astray = culprit ? -1 : fa_cycle_astray(a, v, &how);
  v->astray_how = (uint8_t)how;
  /* otherwise, who changed its round of ops: said, not blamed alone (a
   * rank that changed may have done a new call its peer wrongly left out) */
  v->changed = culprit || v->astray >= 0 ? -1 : fa_round_changed(a, v);
  if (v->changed >= 0 && v->rounds_changed_most) { /* the job changed: nobody to single out */
    v->changed = -1;
    v->changed_most = 1;
  }
  if (v->astray >= 0 && fa_ranks_push(&v->root_cause, &cap_r, v->astray)) return -1;
  /* beside it, ranks that left out a call of another stuck op the same way */
  if (v->astray >= 0 && fa_left_out_too(a, v, &v->left_out_too)) return -1;
  for (uint32_t i = 0; i < v->left_out_too.n; i++)
    if (fa_ranks_push(&v->root_cause, &cap_r, v->left_out_too.v[i])) return -1;
  /* (of the ranks a step awaits alone, those that wait in a step that
   * awaits several: the one that skipped a call went on into another comm,
   * where it waits for the many; one awaited alone that waits in turn for
   * one alone is held up by it, a link of the chain; when none is so, all
   * of them) */
  int strict = 0;
  for (uint32_t i = 0; sole && several && i < v->ncycle; i++)
    strict |= step_awaits(a, &v->cycle[i]) == 1 && waits_for_several(a, v, v->cycle[i].waits_for);
  /* (unless the rounds say another rank of the cycle changed what it does,
   * and every other one kept to its own: the counts point elsewhere than the
   * records, and the cycle's ranks stay its root causes) */
  int counts = sole && several;
  if (counts && v->changed >= 0) {
    int picked = 0;
    for (uint32_t i = 0; i < v->ncycle && !picked; i++)
      picked = step_awaits(a, &v->cycle[i]) == 1 && (!strict || waits_for_several(a, v, v->cycle[i].waits_for)) &&
               v->cycle[i].waits_for == v->changed;
    counts = picked;
  }
  for (uint32_t i = 0; i < v->ncycle && !culprit && v->astray < 0; i++) {
    const fa_wait_step *st = &v->cycle[i];
    if (counts) {
      if (step_awaits(a, st) == 1 && (!strict || waits_for_several(a, v, st->waits_for)) &&
          fa_ranks_push(&v->root_cause, &cap_r, st->waits_for))
        return -1;
    } else if (fa_ranks_push(&v->root_cause, &cap_r, st->rank)) {
      return -1;
    }
  }
  /* a cycle through comm ranks the evidence does not place is one of
   * several: every rank that waits for good is in one */
  int uncertain = 0;
  for (uint32_t i = 0; i < v->ncycle; i++) uncertain |= v->cycle[i].uncertain;
  if (uncertain) {
    fa_ranks st = {NULL, 0};
    int bad = fa_wgraph_stuck(a, wg, &st);
    for (uint32_t i = 0; !bad && i < st.n; i++) bad = fa_ranks_push(&v->root_cause, &cap_r, st.v[i]);
    fa_ranks_free(&st);
    if (bad) {
      fa_wgraph_free(wg);
      return -1;
    }
  }
  fa_wgraph_free(wg);
  if (v->mismatch_comm >= 0) {
    const fa_comm *c = &a->comms[v->mismatch_comm];
    if (c->mismatch.culprit >= 0) {
      const fa_group *g = &c->mismatch.groups[c->mismatch.culprit];
      for (uint32_t i = 0; i < g->n; i++) {
        int32_t gr = fa_global_of(c, c->mismatch.members[g->first + i]);
        if (gr >= 0 && fa_ranks_push(&v->root_cause, &cap_r, gr)) return -1;
      }
    }
    /* every other comm's first divergence with a culprit is a fault of its
     * own (disjoint groups each with a member that computed its arguments
     * otherwise: four sequence-parallel groups whose last member splits
     * unevenly), and a configuration split (algorithm or protocol alone) is
     * the culprits' setting, one host's: their culprits are root causes too */
    for (uint32_t ci = 0; ci < a->ncomms; ci++) {
      const fa_comm *o = &a->comms[ci];
      if ((int32_t)ci == v->mismatch_comm || !o->has_mismatch || o->mismatch.culprit < 0) continue;
      if (config_split(c) != config_split(o)) continue;
      const fa_group *g = &o->mismatch.groups[o->mismatch.culprit];
      for (uint32_t i = 0; i < g->n; i++) {
        int32_t gr = fa_global_of(o, o->mismatch.members[g->first + i]);
        if (gr >= 0 && fa_ranks_push(&v->root_cause, &cap_r, gr)) return -1;
      }
    }
  }
  if (v->comm < 0 && !v->cycle && v->mismatch_comm < 0)
    for (uint32_t i = 0; i < v->nstragglers; i++)
      if (fa_ranks_push(&v->root_cause, &cap_r, v->stragglers[i].rank)) return -1;
  if (v->comm >= 0 && !v->cycle && fa_hub_instead(a, &cap_r)) return -1;
  if (!v->cycle) fa_shifted_done(a);
  if (a->conflict_rank >= 0) v->root_cause.n = 0; /* (whose dump is whose is in doubt) */
  /* ranks blocked outside NCCL waiting for another rank (their stacks), beside
   * root causes that are not: they wait, for those */
  if (fa_drop_outside_waiters(a, &v->root_cause, &v->outside, &v->outside_frame)) return -1;
  fa_ranks_sort(&v->root_cause);
  if (v->root_cause.n) {
    v->roots = malloc(v->root_cause.n * sizeof *v->roots);
    if (!v->roots) return -1;
    for (uint32_t i = 0; i < v->root_cause.n; i++) v->roots[i] = root_where(a, v->root_cause.v[i]);
  }

  int untracked = 0;
  for (uint32_t ci = 0; ci < a->ncomms; ci++)
    if ((!a->comms[ci].tracked && a->comms[ci].seq_hi >= 0) || a->comms[ci].unknown_from >= 0 ||
        fa_counters_unknown(a, &a->comms[ci]))
      untracked = 1;
  if (!a->nframes || !a->ncomms) v->status = FA_STATUS_INCONCLUSIVE;
  else if (v->mismatch_comm >= 0) v->status = FA_STATUS_MISMATCH;
  else if (v->cycle) v->status = FA_STATUS_DEADLOCK;
  else if (v->comm >= 0) v->status = FA_STATUS_HANG;
  else if (v->nstragglers) v->status = FA_STATUS_STRAGGLER;
  else if (slow) v->status = FA_STATUS_HEALTHY;
  else if (untracked || (a->ranks_missing.n && !shrunk_out(a))) v->status = FA_STATUS_INCONCLUSIVE;
  else v->status = FA_STATUS_HEALTHY;
  if (a->conflict_rank >= 0) v->status = FA_STATUS_INCONCLUSIVE;
  /* one unique id, several comms: the ranks disagree on what the comm is */
  for (uint32_t ci = 0; ci < a->ncomms; ci++) {
    if (a->comms[ci].ninstances < 2 || a->comms[ci].instance) continue;
    uint32_t cap = v->nshared;
    if (fa_grow(&v->shared, &cap, v->nshared + 1, sizeof *v->shared)) return -1;
    v->shared[v->nshared++] = (int32_t)ci;
  }
  if (v->nshared && (v->status == FA_STATUS_HEALTHY || v->status == FA_STATUS_STRAGGLER ||
                     v->status == FA_STATUS_INCONCLUSIVE))
    v->status = FA_STATUS_MISMATCH;
  if (collect_links(a) || fa_explain(a)) return -1;
  return fa_verdict_summary(a);
}

int fa_exclude_list(const fa_analysis *a, fa_ranks *out)
{
  const fa_verdict *v = &a->verdict;
  uint32_t cap = 0;
  out->v = NULL;
  out->n = 0;
  /* a deadlock or a mismatch: its root causes (a cycle's ranks, when the
   * records single none out) */
  if (v->status == FA_STATUS_DEADLOCK || v->status == FA_STATUS_MISMATCH)
    for (uint32_t i = 0; i < v->root_cause.n; i++)
      if (fa_ranks_push(out, &cap, v->root_cause.v[i])) return -1;
  if (v->status == FA_STATUS_STRAGGLER)
    for (uint32_t i = 0; i < v->nstragglers; i++)
      if (fa_ranks_push(out, &cap, v->stragglers[i].rank)) return -1;
  if (v->status == FA_STATUS_HANG) {
    for (uint32_t i = 0; i < v->lagging.n; i++) /* (not those that wait outside NCCL for another) */
      if (!fa_ranks_has(&v->outside, v->lagging.v[i]) && fa_ranks_push(out, &cap, v->lagging.v[i])) return -1;
    for (uint32_t i = 0; i < v->ahead.n; i++)
      if (fa_ranks_push(out, &cap, v->ahead.v[i])) return -1;
    /* and every root cause: unfinished ranks (a GPU error), the ends of
     * other wait-for chains */
    for (uint32_t i = 0; i < v->root_cause.n; i++)
      if (fa_ranks_push(out, &cap, v->root_cause.v[i])) return -1;
  }
  fa_ranks_sort(out);
  return 0;
}
