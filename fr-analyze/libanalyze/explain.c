/* explain.c — the verdict as an explanation.
 *
 * Model-based diagnosis (Reiter 1987) applied to one hung job: the rules
 * of the analysis find the abnormal facts of the dumps and propose faults;
 * this file states both explicitly and checks the one against the other.
 *
 *  1. Observations (observe.c): every abnormal fact, typed, with its evidence (rank,
 *     comm, seq, peer): a member that waits, one that never posted the op,
 *     one whose own part never finished, a call that never returned or
 *     failed, a record that never ran, a member without a dump where the
 *     waits end, a process that ended with the op in flight, a rank alone
 *     ahead, calls with different arguments, a p2p transfer without a
 *     counterpart, a stopped link, an op every member joined that nothing
 *     completes.
 *  2. Faults (faults.c): the catalogue of what can be wrong (fa_fault_kind); the
 *     verdict's root causes, each as the fault its evidence shows, and the
 *     faults of no one rank (every member joined: a link or the device
 *     side; calls that differ with no minority).
 *  3. Explains (here): a fault explains the observations of its own rank; an
 *     observation of a rank that waits, directly or along the wait-for
 *     graph, for a fault's rank (or the comm of a fault of no one rank);
 *     and, on its comm, the waits and the facts of the comm.  A p2p
 *     transfer without counterpart is explained by a fault of either end
 *     or of what the side that never posted waits for.
 *  4. What no fault of the verdict explains is reported as unexplained
 *     (verdict.unexplained), never dropped.
 *
 * Observations are one per member of each stuck comm at most, plus one per
 * link and per comm; the explanation is one breadth-first pass over the
 * wait-for graph from every fault at once: linear in ranks and links. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* ---- which fault explains which observation --------------------------------------- */

/* The first fault of rank g; -1 none. */
static int32_t own_fault(const fa_verdict *v, int32_t g)
{
  if (g < 0) return -1;
  for (uint32_t i = 0; i < v->nfaults; i++)
    if (v->faults[i].rank == g) return (int32_t)i;
  return -1;
}

/* The fault that rank g reaches along the waits; -1 none. */
static int32_t reached(const fa_analysis *a, const int32_t *label, int32_t g)
{
  if (!label || g < 0) return -1;
  int32_t k = fa_find_rank(a, g);
  return k >= 0 ? label[k] : -1;
}

static int32_t explain_one(const fa_analysis *a, const int32_t *label, const fa_obs *o)
{
  const fa_verdict *v = &a->verdict;
  int32_t f = own_fault(v, o->rank);
  if (f >= 0) return f;
  switch (o->kind) {
  case FA_OBS_P2P_UNMATCHED:
  case FA_OBS_LINK_STOPPED:
    if ((f = own_fault(v, o->peer)) >= 0) return f;
    if ((f = reached(a, label, o->peer)) >= 0) return f;
    if ((o->kind == FA_OBS_LINK_STOPPED || o->peer < 0) && (f = fa_comm_fault(v, o->comm)) >= 0) return f;
    /* the two sides of a p2p pair that disagrees: that divergence */
    if (o->kind == FA_OBS_P2P_UNMATCHED && fa_mismatch_pair_side(a, o->rank) && fa_mismatch_pair_side(a, o->peer) &&
        (f = fa_comm_fault(v, o->comm)) >= 0)
      return f;
    return reached(a, label, o->rank);
  case FA_OBS_ARGS_DIFFER:
  case FA_OBS_ALL_JOINED:
    return fa_comm_fault(v, o->comm);
  case FA_OBS_AHEAD: /* one side of a p2p pair that disagrees: that divergence */
    if (o->comm >= 0 && fa_mismatch_pair_side(a, o->rank) && (f = fa_comm_fault(v, o->comm)) >= 0) return f;
    break;
  case FA_OBS_NOT_POSTED: /* the stuck op is the culprit's call one more (or fewer) than theirs */
    if (o->comm >= 0 && o->comm == v->shifted_comm && (f = fa_comm_fault(v, o->comm)) >= 0) return f;
    break;
  default:
    break;
  }
  if ((f = reached(a, label, o->rank)) >= 0) return f;
  /* waits on the comm a fault sits in */
  if ((o->kind == FA_OBS_WAITING || o->kind == FA_OBS_NO_DUMP) && (f = fa_comm_fault(v, o->comm)) >= 0) return f;
  /* an unfinished part beside a member whose comm reported an async error: that error broke the op */
  if (o->kind == FA_OBS_UNFINISHED && o->comm >= 0 && a->comms[o->comm].nasync_error &&
      (f = fa_comm_fault(v, o->comm)) >= 0)
    return f;
  /* a member of unknown rank without a dump, on a comm a deadlock cycle passes through (the cycle),
   * or that a member at fault itself waits in (that fault) */
  for (uint32_t k = 0; o->kind == FA_OBS_NO_DUMP && o->rank < 0 && k < v->ncycle; k++)
    if (v->cycle[k].comm == o->comm && (f = own_fault(v, v->cycle[k].rank)) >= 0) return f;
  if (o->kind == FA_OBS_NO_DUMP && o->comm >= 0) {
    /* a member without a dump where the waits of a member at fault end (one ahead waits for
     * members done, one of which left no dump), or one a root cause may be (its candidates) */
    const fa_comm *c = &a->comms[o->comm];
    for (int32_t r = 0; r < c->size; r++) {
      const fa_member *m = &c->members[r];
      if (m->rank >= 0 && (f = own_fault(v, m->global_rank)) >= 0) return f;
      for (uint32_t k = 0; o->rank < 0 && m->rank < 0 && m->global_rank < 0 && k < m->ncand; k++)
        if ((f = own_fault(v, m->cand[k])) >= 0) return f;
    }
  }
  /* a member of unknown rank without a dump is one of the job's ranks without a dump (not
   * placed in the comm already): when each of those is at fault, it is one of those faults */
  if (o->kind == FA_OBS_NO_DUMP && o->rank < 0 && o->comm >= 0 && a->ranks_missing.n) {
    const fa_comm *c = &a->comms[o->comm];
    int32_t first = -1;
    int all = 1;
    for (uint32_t i = 0; i < a->ranks_missing.n && all; i++) {
      int32_t g = a->ranks_missing.v[i];
      int placed = 0;
      for (int32_t r = 0; r < c->size && !placed; r++) placed = c->members[r].global_rank == g;
      if (placed) continue;
      int32_t fg = own_fault(v, g);
      if (fg < 0) all = 0;
      else if (first < 0) first = fg;
    }
    if (all && first >= 0) return first;
  }
  /* a rank blocked outside NCCL waiting for another rank (its stack): held by the root causes */
  if (o->rank >= 0 && fa_ranks_has(&v->outside, o->rank) && v->nfaults) return 0;
  return -1;
}

/* The members of the comm of a fault of no one rank (a link, calls that
 * differ without a minority) that wait there: in its stuck op, behind it on
 * their streams, or in a p2p pair of it that never moved, take that fault
 * (the wait-for graph has no edge into such a comm: nobody is awaited). */
static void comm_fault_members(const fa_analysis *a, int32_t *label)
{
  const fa_verdict *v = &a->verdict;
  for (uint32_t i = 0; i < v->nfaults; i++) {
    const fa_fault *f = &v->faults[i];
    if (f->rank >= 0 || f->comm < 0) continue;
    const fa_comm *c = &a->comms[f->comm];
    for (int32_t r = 0; r < c->size; r++) {
      const fa_member *m = &c->members[r];
      if (m->rank < 0 || label[m->rank] >= 0) continue;
      if (m->state == FA_MEMBER_WAITING || (m->state == FA_MEMBER_LAGGING && m->behind) ||
          (m->state == FA_MEMBER_PASSED && m->last_completed < m->last_enqueued))
        label[m->rank] = (int32_t)i;
    }
    for (uint32_t k = 0; k < c->nlinks; k++) {
      const fa_link *l = &c->links[k];
      if (!l->p2p || !l->joined) continue;
      int32_t ends[2] = {fa_find_rank(a, l->src), fa_find_rank(a, l->dst)};
      for (int e = 0; e < 2; e++)
        if (ends[e] >= 0 && label[ends[e]] < 0) label[ends[e]] = (int32_t)i;
    }
  }
}

/* A stuck op that every member with a dump joined (its hub awaits no one)
 * cannot complete when one of its members is held by a fault elsewhere: a
 * rank that waits in another op for a fault's rank runs nothing after it on
 * its streams (PyTorch orders its NCCL streams after the compute stream with
 * events; NCCL runs one comm's ops in order).  Each waiting member of such
 * an op takes the fault of a member that reaches one, until nothing changes
 * (a few rounds: each round crosses one comm).  label: per wait-for node.
 * Returns whether it labelled any. */
static int held_members(const fa_analysis *a, int32_t *label)
{
  int any = 0;
  for (int round = 0; round < 16; round++) {
    int changed = 0;
    for (uint32_t ci = 0; ci < a->ncomms; ci++) {
      const fa_comm *c = &a->comms[ci];
      if (!c->stuck || c->in_flight || c->nlagging || c->nno_dump || c->nahead || !c->nwaiting) continue;
      int32_t f = -1;
      for (int32_t r = 0; r < c->size && f < 0; r++)
        if (c->members[r].rank >= 0) f = label[c->members[r].rank];
      if (f < 0) continue;
      for (int32_t r = 0; r < c->size; r++) {
        const fa_member *m = &c->members[r];
        if (m->rank < 0 || label[m->rank] >= 0) continue;
        label[m->rank] = f;
        changed = any = 1;
      }
    }
    /* a p2p pair both sides posted that a group holds (on one side, an op of the
     * group waits for a peer that never posted): both ends wait for what holds it */
    for (uint32_t ci = 0; ci < a->ncomms; ci++) {
      const fa_comm *c = &a->comms[ci];
      for (uint32_t i = 0; i < c->nlinks; i++) {
        const fa_link *l = &c->links[i];
        if (!l->p2p || !l->joined || !l->held_by_group) continue;
        int32_t s = fa_find_rank(a, l->src), d = fa_find_rank(a, l->dst);
        if (s < 0 || d < 0 || (label[s] >= 0) == (label[d] >= 0)) continue;
        if (label[s] < 0) label[s] = label[d];
        else label[d] = label[s];
        changed = any = 1;
      }
    }
    if (!changed) break;
  }
  return any;
}

/* The record observation o is about: its rank's record of o's comm at o's
 * seq; NULL none (a rank without a dump, a p2p seq). */
static const frz_record *obs_record(const fa_analysis *a, const fa_obs *o)
{
  if (o->rank < 0 || o->comm < 0 || o->kind == FA_OBS_P2P_UNMATCHED || o->kind == FA_OBS_LINK_STOPPED) return NULL;
  const fa_comm *c = &a->comms[o->comm];
  for (int32_t r = 0; r < c->size; r++)
    if (c->members[r].global_rank == o->rank && c->members[r].rank >= 0)
      return fa_member_record(a, &c->members[r], o->seq);
  return NULL;
}

/* The ops of one launch of a CUDA graph share its events (frz 1.5): a
 * rank's observations of ops of one replay are one wait, explained by what
 * explains any of them. */
static void replay_siblings(const fa_analysis *a, fa_obs *obs, uint32_t n)
{
  for (uint32_t i = 0; i < n; i++) {
    if (obs[i].by >= 0) continue;
    const frz_record *x = obs_record(a, &obs[i]);
    if (!x || !(x->flags & FRZ_RF_GRAPH_REPLAY)) continue;
    for (uint32_t j = 0; j < n && obs[i].by < 0; j++) {
      if (j == i || obs[j].by < 0 || obs[j].rank != obs[i].rank) continue;
      const frz_record *y = obs_record(a, &obs[j]);
      if (y && (y->flags & FRZ_RF_GRAPH_REPLAY) && y->graph_id == x->graph_id && y->replay == x->replay)
        obs[i].by = obs[j].by;
    }
  }
}

int fa_explain(fa_analysis *a)
{
  fa_verdict *v = &a->verdict;
  if (fa_derive_faults(a) || fa_observe(a, &v->obs, &v->nobs)) return -1;
  if (!v->nobs) return 0;
  /* label every node of the wait-for graph with the nearest fault it reaches */
  fa_wgraph *g = v->nfaults ? fa_wgraph_build(a) : NULL;
  int32_t *in = NULL, *out = NULL;
  uint32_t nn = 0;
  if (g) {
    nn = fa_wgraph_nodes(g);
    in = malloc(nn * sizeof *in);
    out = malloc(nn * sizeof *out);
    if (!in || !out) goto oom;
    for (uint32_t n = 0; n < nn; n++) in[n] = -1;
    for (uint32_t i = v->nfaults; i-- > 0;) { /* (the first fault of a node keeps it) */
      const fa_fault *f = &v->faults[i];
      int32_t k = fa_find_rank(a, f->rank);
      if (k >= 0) {
        in[k] = (int32_t)i;
        continue;
      }
      if (f->comm >= 0) in[a->nranks + (uint32_t)f->comm] = (int32_t)i;
      /* a rank without a dump: the node of p2p counterparts without a dump, and
       * the comm hubs that await it, stand for it */
      if (f->rank >= 0) in[nn - 1] = (int32_t)i;
      for (uint32_t ci = 0; f->rank >= 0 && ci < a->ncomms; ci++) {
        const fa_comm *c = &a->comms[ci];
        for (int32_t r = 0; c->stuck && r < c->size; r++)
          if (c->members[r].global_rank == f->rank && c->members[r].rank < 0 && fa_member_blamed(c, &c->members[r]))
            in[a->nranks + ci] = (int32_t)i;
      }
    }
    comm_fault_members(a, in);
    /* the waits, then the ops every member joined that a held member holds,
     * and the waits again from what that labelled, until nothing changes */
    for (int round = 0; round < 8; round++) {
      if (fa_wgraph_reaching(g, in, out)) goto oom;
      if (!held_members(a, out)) break;
      memcpy(in, out, nn * sizeof *in);
    }
  }
  for (uint32_t i = 0; i < v->nobs; i++) v->obs[i].by = explain_one(a, out, &v->obs[i]);
  replay_siblings(a, v->obs, v->nobs);
  for (uint32_t i = 0; i < v->nobs; i++) v->nunexplained += v->obs[i].by < 0;
  free(in);
  free(out);
  fa_wgraph_free(g);
  return 0;
oom:
  free(in);
  free(out);
  fa_wgraph_free(g);
  return -1;
}
