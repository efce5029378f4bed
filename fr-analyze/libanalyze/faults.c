/* faults.c — the catalogue of what can be wrong (fa_fault_kind; fr-analyze(1),
 * "THE MODEL", Faults) and the faults of a verdict: each root cause as the
 * fault its evidence shows, and the faults of no one rank (every member
 * joined and nothing moved; calls that differ with no minority; members
 * gone whose rank no dump tells; two equal explanations of a teardown). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "internal.h"

static const char *const fault_names[FA_FAULT_NKINDS] = {
    "stopped", "left-out", "extra", "other-args", "config-split", "not-returned", "init-failed",
    "not-launched", "gone", "device", "link", "order", "late"};

const char *fa_fault_kind_name(fa_fault_kind k)
{
  return (unsigned)k < FA_FAULT_NKINDS ? fault_names[k] : "?";
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
  for (uint32_t ci = 0; v->mismatch_comm >= 0 && ci < a->ncomms; ci++) /* (another comm's first divergence) */
    if (a->comms[ci].has_mismatch && culprit_of(&a->comms[ci], g))
      return (fa_fault){split_kind(&a->comms[ci].mismatch), g, (int32_t)ci, a->comms[ci].mismatch.seq};
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
int32_t fa_comm_fault(const fa_verdict *v, int32_t ci)
{
  if (ci < 0) return -1;
  for (uint32_t i = 0; i < v->nfaults; i++)
    if (v->faults[i].comm == ci) return (int32_t)i;
  return -1;
}

int fa_derive_faults(fa_analysis *a)
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
    int named = 0; /* (its culprit named among the root causes: that fault is there already) */
    for (uint32_t i = 0; i < v->nfaults && !named; i++) named = v->faults[i].comm == (int32_t)ci && v->faults[i].rank >= 0;
    if (!named && fault_push(v, &cap, split_kind(&c->mismatch), -1, (int32_t)ci, c->mismatch.seq)) return -1;
  }
  if (v->comm >= 0) {
    const fa_comm *c = &a->comms[v->comm];
    int joined_p2p = 0;
    for (uint32_t i = 0; i < c->nlinks && !joined_p2p; i++)
      joined_p2p = c->links[i].p2p && c->links[i].joined && !c->links[i].held_by_group;
    /* (or nobody named while NCCL's proxy progress shows a link of it stopped) */
    int stopped = 0;
    for (uint32_t i = 0; i < c->nlinks && !stopped; i++) stopped = !c->links[i].p2p && c->links[i].evidence;
    if ((v->all_joined || (joined_p2p && !v->lagging.n && !v->unfinished.n) ||
         (stopped && !v->root_cause.n && v->mismatch_comm < 0 && !v->cycle)) &&
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
  /* a p2p pair both sides posted and started and neither completed, held by
   * no group of theirs, on a comm no fault sits on: a link or the device side
   * there too (beside the chosen comm's hang, or another fault of it) */
  for (uint32_t ci = 0; v->comm >= 0 && ci < a->ncomms; ci++) {
    const fa_comm *c = &a->comms[ci];
    int joined = 0, has_link = 0;
    for (uint32_t i = 0; i < c->nlinks && !joined; i++)
      joined = c->links[i].p2p && c->links[i].joined && !c->links[i].held_by_group;
    for (uint32_t i = 0; i < v->nfaults; i++)
      has_link |= v->faults[i].kind == FA_FAULT_LINK && v->faults[i].comm == (int32_t)ci;
    if (joined && !has_link &&
        fault_push(v, &cap, FA_FAULT_LINK, -1, (int32_t)ci, c->stuck_seq))
      return -1;
  }
  /* a comm whose stuck op every member joined and NCCL's proxy progress shows
   * stopped on a link, no fault sitting on it: a link or the device side
   * there (beside the chosen comm's hang) */
  for (uint32_t ci = 0; v->comm >= 0 && ci < a->ncomms; ci++) {
    const fa_comm *c = &a->comms[ci];
    int stopped = 0;
    int joined = !c->nlagging && !c->nno_dump && !c->nunfinished && !c->nahead; /* (nobody awaited) */
    for (uint32_t i = 0; joined && c->stuck && !c->in_flight && i < c->nlinks && !stopped; i++)
      stopped = !c->links[i].p2p && c->links[i].evidence;
    if (stopped && fa_comm_fault(v, (int32_t)ci) < 0 &&
        fault_push(v, &cap, FA_FAULT_LINK, -1, (int32_t)ci, c->stuck_seq))
      return -1;
  }
  /* p2p ops that wait for a counterpart of unknown rank without a dump: the
   * member gone is one of no known rank, on that comm */
  for (uint32_t ci = 0; v->comm >= 0 && ci < a->ncomms; ci++) {
    const fa_comm *c = &a->comms[ci];
    int unknown = 0;
    for (uint32_t i = 0; i < c->nlinks && !unknown; i++)
      unknown = c->links[i].p2p && !c->links[i].joined && c->links[i].counterpart_no_dump &&
                (c->links[i].pending_dir == FRZ_DIR_SEND ? c->links[i].dst : c->links[i].src) < 0;
    if (unknown && fa_comm_fault(v, (int32_t)ci) < 0 &&
        fault_push(v, &cap, FA_FAULT_GONE, -1, (int32_t)ci, c->stuck_seq))
      return -1;
  }
  return 0;
}
