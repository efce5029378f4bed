/* explain.c — the verdict as an explanation.
 *
 * Model-based diagnosis (Reiter 1987) applied to one hung job: the rules
 * of the analysis find the abnormal facts of the dumps and propose faults;
 * this file states both explicitly and checks the one against the other.
 *
 *  1. Observations: every abnormal fact, typed, with its evidence (rank,
 *     comm, seq, peer): a member that waits, one that never posted the op,
 *     one whose own part never finished, a call that never returned or
 *     failed, a record that never ran, a member without a dump where the
 *     waits end, a process that ended with the op in flight, a rank alone
 *     ahead, calls with different arguments, a p2p transfer without a
 *     counterpart, a stopped link, an op every member joined that nothing
 *     completes.
 *  2. Faults: the catalogue of what can be wrong (fa_fault_kind); the
 *     verdict's root causes, each as the fault its evidence shows, and the
 *     faults of no one rank (every member joined: a link or the device
 *     side; calls that differ with no minority).
 *  3. Explains: a fault explains the observations of its own rank; an
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

static const char *const obs_names[FA_OBS_NKINDS] = {
    "waiting", "not-posted", "unfinished", "not-returned", "call-failed", "not-run", "no-dump",
    "ended", "ahead", "args-differ", "p2p-unmatched", "link-stopped", "all-joined"};

static const char *const fault_names[FA_FAULT_NKINDS] = {
    "stopped", "left-out", "extra", "other-args", "config-split", "not-returned", "init-failed",
    "not-launched", "gone", "device", "link", "order", "late"};

const char *fa_obs_kind_name(fa_obs_kind k)
{
  return (unsigned)k < FA_OBS_NKINDS ? obs_names[k] : "?";
}

const char *fa_fault_kind_name(fa_fault_kind k)
{
  return (unsigned)k < FA_FAULT_NKINDS ? fault_names[k] : "?";
}

/* ---- observations ------------------------------------------------------------- */

typedef struct obs_list {
  fa_obs *v;
  uint32_t n, cap;
} obs_list;

static int obs_push(obs_list *l, fa_obs_kind k, int32_t rank, int32_t comm, uint64_t seq, int32_t peer)
{
  if (fa_grow(&l->v, &l->cap, l->n + 1, sizeof *l->v)) return -1;
  l->v[l->n++] = (fa_obs){k, rank, comm, seq, peer, -1};
  return 0;
}

/* What member m of stuck comm c shows there, as an observation kind; -1 none. */
static int member_obs(const fa_analysis *a, const fa_comm *c, const fa_member *m)
{
  switch (m->state) {
  case FA_MEMBER_WAITING:
    return FA_OBS_WAITING;
  case FA_MEMBER_PASSED: /* past it, waiting in a later op of the comm */
    return m->last_completed < m->last_enqueued ? FA_OBS_WAITING : -1;
  case FA_MEMBER_LAGGING:
    if (m->failed_seq >= 0 && (uint64_t)m->failed_seq <= c->stuck_seq) return FA_OBS_CALL_FAILED;
    if (m->not_run) return FA_OBS_NOT_RUN;
    if (m->left || m->gone || fa_member_salvaged(a, m)) return FA_OBS_ENDED;
    if (m->rank >= 0) {
      const frz_record *at = fa_member_record(a, m, c->stuck_seq);
      if (at && (at->flags & FRZ_RF_GROUP_OPEN)) return FA_OBS_NOT_RUN;
    }
    return FA_OBS_NOT_POSTED;
  case FA_MEMBER_UNFINISHED:
    return m->not_returned ? FA_OBS_NOT_RETURNED : fa_member_salvaged(a, m) ? FA_OBS_ENDED : FA_OBS_UNFINISHED;
  case FA_MEMBER_AHEAD:
    return FA_OBS_AHEAD;
  case FA_MEMBER_NO_DUMP:
    return fa_member_blamed(c, m) ? FA_OBS_NO_DUMP : -1;
  default:
    return -1;
  }
}

static int collect(const fa_analysis *a, obs_list *l)
{
  const fa_verdict *v = &a->verdict;
  for (uint32_t ci = 0; ci < a->ncomms; ci++) {
    const fa_comm *c = &a->comms[ci];
    if (c->has_mismatch && obs_push(l, FA_OBS_ARGS_DIFFER, -1, (int32_t)ci, c->mismatch.seq, -1)) return -1;
    if (c->stuck && !c->in_flight) {
      for (int32_t r = 0; r < c->size; r++) {
        const fa_member *m = &c->members[r];
        int k = member_obs(a, c, m);
        if (k >= 0 && obs_push(l, (fa_obs_kind)k, m->global_rank, (int32_t)ci, c->stuck_seq, -1)) return -1;
      }
      if ((int32_t)ci == v->comm && v->all_joined &&
          obs_push(l, FA_OBS_ALL_JOINED, -1, (int32_t)ci, c->stuck_seq, -1))
        return -1;
    }
    for (uint32_t i = 0; i < c->nlinks && !v->frames_progress; i++) { /* (in flight in a slow job) */
      const fa_link *k = &c->links[i];
      if (k->p2p && !k->joined) {
        int32_t w = fa_p2p_waiter(k), o = k->pending_dir == FRZ_DIR_SEND ? k->dst : k->src;
        if (obs_push(l, FA_OBS_P2P_UNMATCHED, w, (int32_t)ci, k->seq, o)) return -1;
      } else if (!k->p2p && !k->inferred && k->evidence &&
                 obs_push(l, FA_OBS_LINK_STOPPED, k->src, (int32_t)ci, k->seq, k->dst)) {
        return -1;
      }
    }
  }
  return 0;
}

/* ---- the verdict's faults -------------------------------------------------------- */

static int fault_push(fa_verdict *v, uint32_t *cap, fa_fault_kind k, int32_t rank, int32_t comm, uint64_t seq)
{
  if (fa_grow(&v->faults, cap, v->nfaults + 1, sizeof *v->faults)) return -1;
  v->faults[v->nfaults++] = (fa_fault){k, rank, comm, seq};
  return 0;
}

static int in_ranks(const fa_ranks *r, int32_t g)
{
  for (uint32_t i = 0; i < r->n; i++)
    if (r->v[i] == g) return 1;
  return 0;
}

/* Is g of the culprit group of comm c's mismatch? */
static int culprit_of(const fa_comm *c, int32_t g)
{
  if (!c->has_mismatch || c->mismatch.culprit < 0) return 0;
  const fa_group *gr = &c->mismatch.groups[c->mismatch.culprit];
  for (uint32_t i = 0; i < gr->n; i++)
    if (fa_global_of(c, c->mismatch.members[gr->first + i]) == g) return 1;
  return 0;
}

static fa_fault_kind split_kind(const fa_mismatch *mm)
{
  unsigned how = FA_FIELD_ALGO | FA_FIELD_PROTO;
  return (mm->fields & how) && !(mm->fields & ~how) ? FA_FAULT_CONFIG_SPLIT : FA_FAULT_OTHER_ARGS;
}

/* The fault root cause i of the verdict stands for. */
static fa_fault fault_of_root(const fa_analysis *a, uint32_t i)
{
  const fa_verdict *v = &a->verdict;
  const fa_root *w = &v->roots[i];
  int32_t g = w->rank;
  fa_fault f = {FA_FAULT_STOPPED, g, w->comm, w->seq};
  if (v->mismatch_comm >= 0 && culprit_of(&a->comms[v->mismatch_comm], g)) {
    const fa_comm *c = &a->comms[v->mismatch_comm];
    return (fa_fault){split_kind(&c->mismatch), g, v->mismatch_comm, c->mismatch.seq};
  }
  for (uint32_t ci = 0; v->mismatch_comm >= 0 && ci < a->ncomms; ci++) /* (another comm's config split) */
    if (culprit_of(&a->comms[ci], g) && split_kind(&a->comms[ci].mismatch) == FA_FAULT_CONFIG_SPLIT)
      return (fa_fault){FA_FAULT_CONFIG_SPLIT, g, (int32_t)ci, a->comms[ci].mismatch.seq};
  if (g == v->p2p_hub) return (fa_fault){FA_FAULT_OTHER_ARGS, g, v->p2p_hub_comm, w->seq};
  if (in_ranks(&v->ahead, g) && v->comm >= 0)
    return (fa_fault){FA_FAULT_EXTRA, g, v->comm, a->comms[v->comm].stuck_seq};
  if (in_ranks(&v->late, g)) f.kind = FA_FAULT_LATE;
  else if (v->cycle && g != v->astray && !in_ranks(&v->left_out_too, g) && !in_ranks(&v->lagging, g)) {
    int on_cycle = 0;
    for (uint32_t k = 0; k < v->ncycle && !on_cycle; k++) on_cycle = v->cycle[k].rank == g || v->cycle[k].waits_for == g;
    if (on_cycle) f.kind = FA_FAULT_ORDER;
  }
  if (f.kind != FA_FAULT_STOPPED) return f;
  if (g == v->astray || in_ranks(&v->left_out_too, g)) {
    f.kind = FA_FAULT_LEFT_OUT;
    return f;
  }
  const fa_member *m = NULL;
  if (w->comm >= 0) {
    const fa_comm *c = &a->comms[w->comm];
    for (int32_t r = 0; r < c->size && !m; r++)
      if (c->members[r].global_rank == g) m = &c->members[r];
  }
  switch (w->state) {
  case FA_MEMBER_NO_DUMP:
    f.kind = FA_FAULT_GONE;
    break;
  case FA_MEMBER_AHEAD:
    f.kind = FA_FAULT_EXTRA;
    break;
  case FA_MEMBER_UNFINISHED:
    f.kind = m && m->not_returned ? FA_FAULT_NOT_RETURNED
             : m && fa_member_salvaged(a, m) ? FA_FAULT_GONE : FA_FAULT_DEVICE;
    break;
  case FA_MEMBER_LAGGING:
    if (m && m->failed_seq >= 0) f.kind = FA_FAULT_INIT_FAILED;
    else if (m && m->not_run) f.kind = FA_FAULT_NOT_LAUNCHED;
    else if (m && (m->left || m->gone || fa_member_salvaged(a, m))) f.kind = FA_FAULT_GONE;
    else if (m && m->rank >= 0) {
      const frz_record *at = fa_member_record(a, m, w->seq);
      if (at && (at->flags & FRZ_RF_GROUP_OPEN)) f.kind = FA_FAULT_NOT_LAUNCHED;
    }
    /* one that waits in another NCCL op left this one out (it went on) */
    if (f.kind == FA_FAULT_STOPPED) {
      int32_t k = fa_find_rank(a, g);
      if (k >= 0 && a->ranks[k].wait_comm >= 0 && a->ranks[k].wait_comm != w->comm) f.kind = FA_FAULT_LEFT_OUT;
    }
    break;
  default:
    break;
  }
  if (f.kind == FA_FAULT_STOPPED && fa_find_rank(a, g) < 0) f.kind = FA_FAULT_GONE;
  return f;
}

/* The first fault on comm ci; -1 none. */
static int32_t comm_fault(const fa_verdict *v, int32_t ci)
{
  if (ci < 0) return -1;
  for (uint32_t i = 0; i < v->nfaults; i++)
    if (v->faults[i].comm == ci) return (int32_t)i;
  return -1;
}

static int derive_faults(fa_analysis *a)
{
  fa_verdict *v = &a->verdict;
  uint32_t cap = 0;
  for (uint32_t i = 0; i < v->root_cause.n; i++) {
    fa_fault f = fault_of_root(a, i);
    if (fault_push(v, &cap, f.kind, f.rank, f.comm, f.seq)) return -1;
  }
  /* faults of no one rank */
  if (v->mismatch_comm >= 0 && a->comms[v->mismatch_comm].mismatch.culprit < 0) {
    const fa_comm *c = &a->comms[v->mismatch_comm];
    if (fault_push(v, &cap, split_kind(&c->mismatch), -1, v->mismatch_comm, c->mismatch.seq)) return -1;
  }
  for (uint32_t ci = 0; ci < a->ncomms; ci++) { /* every other first divergence is a fault too */
    const fa_comm *c = &a->comms[ci];
    if (!c->has_mismatch || (int32_t)ci == v->mismatch_comm) continue;
    if (fault_push(v, &cap, split_kind(&c->mismatch), -1, (int32_t)ci, c->mismatch.seq)) return -1;
  }
  if (v->comm >= 0) {
    const fa_comm *c = &a->comms[v->comm];
    int joined_p2p = 0;
    for (uint32_t i = 0; i < c->nlinks && !joined_p2p; i++)
      joined_p2p = c->links[i].p2p && c->links[i].joined && !c->links[i].held_by_group;
    if ((v->all_joined || (joined_p2p && !v->lagging.n && !v->unfinished.n)) &&
        fault_push(v, &cap, FA_FAULT_LINK, -1, v->comm, c->stuck_seq))
      return -1;
    /* some members tore the comm down where the others wait, and neither side is a minority:
     * either these ran past the end of the others' work or those ended early (two
     * explanations, equally simple: a fault of no one rank, on the comm) */
    if (c->end_unclear && !v->lagging.n && fault_push(v, &cap, FA_FAULT_EXTRA, -1, v->comm, c->stuck_seq))
      return -1;
    /* the waits end at members without a dump whose rank no dump tells */
    int unknown = 0;
    for (int32_t r = 0; r < c->size && !unknown; r++)
      unknown = c->members[r].state == FA_MEMBER_NO_DUMP && c->members[r].global_rank < 0 &&
                fa_member_blamed(c, &c->members[r]);
    if (unknown && fault_push(v, &cap, FA_FAULT_GONE, -1, v->comm, c->stuck_seq)) return -1;
  }
  /* p2p ops that wait for a counterpart of unknown rank without a dump: the
   * member gone is one of no known rank, on that comm */
  for (uint32_t ci = 0; v->comm >= 0 && ci < a->ncomms; ci++) {
    const fa_comm *c = &a->comms[ci];
    int unknown = 0;
    for (uint32_t i = 0; i < c->nlinks && !unknown; i++)
      unknown = c->links[i].p2p && !c->links[i].joined && c->links[i].counterpart_no_dump &&
                (c->links[i].pending_dir == FRZ_DIR_SEND ? c->links[i].dst : c->links[i].src) < 0;
    if (unknown && comm_fault(v, (int32_t)ci) < 0 &&
        fault_push(v, &cap, FA_FAULT_GONE, -1, (int32_t)ci, c->stuck_seq))
      return -1;
  }
  return 0;
}

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
    if ((o->kind == FA_OBS_LINK_STOPPED || o->peer < 0) && (f = comm_fault(v, o->comm)) >= 0) return f;
    return reached(a, label, o->rank);
  case FA_OBS_ARGS_DIFFER:
  case FA_OBS_ALL_JOINED:
    return comm_fault(v, o->comm);
  default:
    break;
  }
  if ((f = reached(a, label, o->rank)) >= 0) return f;
  /* waits on the comm a fault sits in */
  if ((o->kind == FA_OBS_WAITING || o->kind == FA_OBS_NO_DUMP) && (f = comm_fault(v, o->comm)) >= 0) return f;
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
    if (!changed) break;
  }
  return any;
}

int fa_explain(fa_analysis *a)
{
  fa_verdict *v = &a->verdict;
  obs_list l = {NULL, 0, 0};
  if (derive_faults(a) || collect(a, &l)) {
    free(l.v);
    return -1;
  }
  v->obs = l.v;
  v->nobs = l.n;
  if (!l.n) return 0;
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
  for (uint32_t i = 0; i < l.n; i++) {
    v->obs[i].by = explain_one(a, out, &v->obs[i]);
    v->nunexplained += v->obs[i].by < 0;
  }
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
