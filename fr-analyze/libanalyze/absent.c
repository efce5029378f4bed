/* absent.c — communicators that never formed: which comm ranks arrived in
 * the creation call, and which global ranks never called it; and, in a
 * split that keeps the global order, which ranks its members without a
 * dump are.
 *
 * A comm is created by all of its members in one call (ncclCommInitRank and
 * its kin from a unique id; NCCL returns only once every comm rank has
 * joined).  The recorder registers the comm and records its seq 0 when the
 * call is entered, so a rank blocked in it has the comm in its dump, and a
 * rank that never called it has not.  A comm rank no dump claims is then
 * one of the ranks whose dump holds no record of the comm (or one that left
 * no dump): when the evidence fixes which, that rank is absent (lagging in
 * the comm's seq 0); else the member keeps its candidates. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* Does the latest dump of rank index k hold comm `id`? */
static int holds(const fa_analysis *a, uint32_t k, uint64_t id)
{
  const frz_dump *d = &fa_rank_latest(a, &a->ranks[k])->dump;
  for (uint32_t e = 0; e < d->ncomms; e++)
    if (d->comms[e].comm_id == id) return 1;
  return 0;
}

/* Does no member of c with a dump hold comm x?  (O(c's size x their
 * comms), not x's size: x may be the world.) */
static int disjoint(const fa_analysis *a, const frz_comm *x, const fa_comm *c)
{
  for (int32_t r = 0; r < c->size; r++) {
    const fa_member *m = &c->members[r];
    int32_t k = m->rank >= 0 && m->global_rank >= 0 ? fa_find_rank(a, m->global_rank) : -1;
    if (k >= 0 && holds(a, (uint32_t)k, x->comm_id)) return 0;
  }
  return 1;
}

/* Does rank k hold a comm other than c made the same way: the same parent
 * (0: a unique id's ncclCommInitRank), the same kind of creation, and no
 * rank in common with c's members (another group of the same "split by
 * unique id", its own; the groups of an uneven split differ in size, 3
 * and 2 ranks of 5 by parity)? */
static int holds_sibling(const fa_analysis *a, uint32_t k, const fa_comm *c, uint64_t parent, uint32_t how)
{
  const frz_dump *d = &fa_rank_latest(a, &a->ranks[k])->dump;
  for (uint32_t e = 0; e < d->ncomms; e++) {
    const frz_comm *x = &d->comms[e];
    if (x->comm_id != c->id && x->parent_id == parent && (x->flags & (FRZ_CF_SPLIT | FRZ_CF_SHRINK)) == how &&
        disjoint(a, x, c))
      return 1;
  }
  return 0;
}

/* Never formed: no member with a dump completed its creation, and some
 * member's creation record (seq 0) is still in its call. */
static int never_formed(const fa_analysis *a, const fa_comm *c)
{
  int pending = 0;
  for (int32_t r = 0; r < c->size; r++) {
    const fa_member *m = &c->members[r];
    if (m->rank < 0) continue;
    if (m->last_completed >= 0 || m->counters_unknown) return 0;
    const frz_record *rec = fa_member_record(a, m, 0);
    if (rec && rec->kind == FRZ_KIND_LIFE && rec->state != FRZ_STATE_COMPLETED &&
        rec->state != FRZ_STATE_FAILED)
      pending = 1;
  }
  return pending;
}

/* Does comm c keep its parent's rank order?  A shrink does (NCCL:
 * ncclCommShrink keeps the remaining ranks in order), and so does a split
 * whose members with dumps all passed their own global rank as key (the
 * usual key = rank, the parent being the world): then comm ranks grow with
 * global ranks. */
static int keeps_order(const fa_analysis *a, const fa_comm *c)
{
  int n = 0;
  for (int32_t r = 0; r < c->size; r++) {
    const fa_member *m = &c->members[r];
    if (m->rank < 0) continue;
    const frz_record *rec = fa_member_record(a, m, 0);
    const frz_comm *fc = fa_member_comm(a, m);
    if (!rec || !fc) return 0;
    if (rec->op == FRZ_OP_CommShrink) {
      n++;
      continue;
    }
    if (rec->op != FRZ_OP_CommSplit || fc->split_key != m->global_rank) return 0;
    n++;
  }
  return n > 0;
}

/* The members' global ranks fit global = base + stride * comm rank (two
 * members with dumps fix the line and a third must be on it: any two
 * points are on a line, which is no evidence, unless the comm keeps its
 * parent's rank order and the line grows by one rank per comm rank; one
 * fixes it in a comm of the world's size with stride 1)?  Sets *base,
 * *stride. */
static int fits_line(const fa_analysis *a, const fa_comm *c, int64_t *base, int64_t *stride)
{
  int32_t r1 = -1, r2 = -1;
  for (int32_t r = 0; r < c->size; r++)
    if (c->members[r].rank >= 0) {
      if (r1 < 0) r1 = r;
      else if (r2 < 0) r2 = r;
    }
  if (r1 < 0) return 0;
  if (r2 >= 0 && c->npresent < 3 &&
      !(keeps_order(a, c) && c->members[r2].global_rank - c->members[r1].global_rank == r2 - r1))
    return 0;
  int64_t g1 = c->members[r1].global_rank;
  if (r2 >= 0) {
    int64_t dg = (int64_t)c->members[r2].global_rank - g1, dr = r2 - r1;
    if (dg == 0 || dg % dr) return 0;
    *stride = dg / dr;
  } else {
    if (c->size != a->world_size || g1 != r1) return 0;
    *stride = 1;
  }
  *base = g1 - *stride * r1;
  for (int32_t r = 0; r < c->size; r++)
    if (c->members[r].rank >= 0 && c->members[r].global_rank != *base + *stride * r) return 0;
  return 1;
}

/* Is global rank g in the sorted set v[0..n)? */
static int in_set(const int32_t *v, uint32_t n, int32_t g)
{
  uint32_t lo = 0, hi = n;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (v[mid] < g) lo = mid + 1;
    else hi = mid;
  }
  return lo < n && v[lo] == g;
}

/* Place the unclaimed members of comm c, which never formed. */
static int place(fa_analysis *a, fa_comm *c)
{
  /* candidates: flightrec dumps without the comm, and ranks without a dump
   * (a PyTorch dump lists only some groups: no evidence either way) */
  fa_ranks cand = {NULL, 0};
  uint32_t cap = 0;
  for (uint32_t k = 0; k < a->nranks; k++)
    if (!fa_rank_latest(a, &a->ranks[k])->dump.pt && !holds(a, k, c->id) &&
        fa_ranks_push(&cand, &cap, a->ranks[k].global_rank))
      goto oom;
  for (uint32_t i = 0; i < a->ranks_missing.n; i++)
    if (fa_ranks_push(&cand, &cap, a->ranks_missing.v[i])) goto oom;
  /* ranks already placed (inferred for members without a dump) are taken */
  uint32_t keep = 0;
  for (uint32_t i = 0; i < cand.n; i++) {
    int taken = 0;
    for (int32_t r = 0; r < c->size && !taken; r++)
      taken = c->members[r].global_rank == cand.v[i];
    if (!taken) cand.v[keep++] = cand.v[i];
  }
  cand.n = keep;
  fa_ranks_sort(&cand);
  int64_t base = 0, stride = 0;
  int line = fits_line(a, c, &base, &stride);
  uint32_t open = 0;
  for (int32_t r = 0; r < c->size; r++) {
    fa_member *m = &c->members[r];
    if (m->rank >= 0 || m->global_rank >= 0) continue;
    int64_t g = base + stride * r;
    if (line && g >= 0 && g <= INT32_MAX && in_set(cand.v, cand.n, (int32_t)g)) {
      m->global_rank = (int32_t)g;
      m->global_inferred = 1;
    } else {
      open++;
    }
  }
  /* one open comm rank and one rank it can be */
  if (open == 1 && cand.n == 1)
    for (int32_t r = 0; r < c->size; r++) {
      fa_member *m = &c->members[r];
      if (m->rank < 0 && m->global_rank < 0) {
        m->global_rank = cand.v[0];
        m->global_inferred = 1;
        open = 0;
      }
    }
  /* one open comm rank, several ranks it can be: where exactly one of them
   * has a dump and holds no comm made the same way as this one (the others
   * formed their own group of it), that one never called the creation */
  if (open == 1 && cand.n > 1) {
    const frz_comm *fc = NULL;
    for (int32_t r = 0; r < c->size && !fc; r++)
      if (c->members[r].rank >= 0) fc = fa_member_comm(a, &c->members[r]);
    int32_t only = -1;
    uint32_t without = 0;
    for (uint32_t i = 0; fc && i < cand.n; i++) {
      int32_t k = fa_find_rank(a, cand.v[i]);
      if (k < 0) { /* a rank without a dump may be it: no single answer */
        without = 2;
        break;
      }
      if (!holds_sibling(a, (uint32_t)k, c, fc->parent_id, fc->flags & (FRZ_CF_SPLIT | FRZ_CF_SHRINK)))
        without++, only = cand.v[i];
    }
    for (int32_t r = 0; without == 1 && r < c->size; r++) {
      fa_member *m = &c->members[r];
      if (m->rank < 0 && m->global_rank < 0) {
        m->global_rank = only;
        m->global_inferred = 1;
      }
    }
  }
  for (int32_t r = 0; r < c->size; r++) {
    fa_member *m = &c->members[r];
    if (m->rank >= 0) continue;
    if (m->global_rank >= 0) {
      m->absent = fa_find_rank(a, m->global_rank) >= 0;
      c->nabsent += m->absent;
      continue;
    }
    /* what it may be: the candidates no placed member took */
    m->cand = malloc((cand.n ? cand.n : 1) * sizeof *m->cand);
    if (!m->cand) goto oom;
    for (uint32_t i = 0; i < cand.n; i++) {
      int taken = 0;
      for (int32_t q = 0; q < c->size && !taken; q++) taken = c->members[q].global_rank == cand.v[i];
      if (!taken) m->cand[m->ncand++] = cand.v[i];
    }
  }
  fa_ranks_free(&cand);
  return 0;
oom:
  fa_ranks_free(&cand);
  return -1;
}

void fa_mark_unformed(fa_analysis *a)
{
  for (uint32_t ci = 0; ci < a->ncomms; ci++) a->comms[ci].unformed = (uint8_t)never_formed(a, &a->comms[ci]);
}

/* How many members of c no dump claims and no evidence placed. */
static uint32_t open_members(const fa_comm *c)
{
  uint32_t n = 0;
  for (int32_t r = 0; r < c->size; r++) n += c->members[r].rank < 0 && c->members[r].global_rank < 0;
  return n;
}

/* Several comms that never formed, each missing k members (some placed
 * as absent ranks, the others open: of unknown rank), where the ranks each
 * may be missing (its absent ranks and its open members' candidates) have
 * exactly k ranks in common: the simplest explanation is that those k ranks
 * never called any of the creations (one fault of k ranks, not one of some
 * k ranks per comm), so each comm's open members are those of them it does
 * not already miss, in comm rank order. */
static int may_miss(const fa_comm *c, int32_t g)
{
  for (int32_t r = 0; r < c->size; r++) {
    const fa_member *m = &c->members[r];
    if (m->rank >= 0) continue;
    if (m->global_rank == g && m->absent) return 1;
    if (m->global_rank < 0 && in_set(m->cand, m->ncand, g)) return 1;
  }
  return 0;
}

static uint32_t missing_count(const fa_comm *c)
{
  uint32_t n = 0;
  for (int32_t r = 0; r < c->size; r++) {
    const fa_member *m = &c->members[r];
    n += m->rank < 0 && (m->global_rank < 0 || m->absent);
  }
  return n;
}

static void place_common(fa_analysis *a)
{
  uint32_t ncomms = 0, k = 0;
  int32_t first = -1;
  for (uint32_t ci = 0; ci < a->ncomms; ci++) {
    const fa_comm *c = &a->comms[ci];
    if (!c->unformed || !open_members(c)) continue;
    if (ncomms++ && missing_count(c) != k) return;
    k = missing_count(c);
    if (first < 0) first = (int32_t)ci;
  }
  if (ncomms < 2 || !k) return;
  /* the ranks every such comm may miss: from the first one's, those all may */
  int32_t common[64];
  uint32_t ncommon = 0;
  const fa_comm *c0 = &a->comms[first];
  for (int32_t r = 0; r < c0->size; r++) {
    const fa_member *m = &c0->members[r];
    if (m->rank >= 0) continue;
    uint32_t nv = m->global_rank >= 0 ? (m->absent ? 1 : 0) : m->ncand;
    for (uint32_t i = 0; i < nv; i++) {
      int32_t g = m->global_rank >= 0 ? m->global_rank : m->cand[i];
      int dup = 0, all = 1;
      for (uint32_t j = 0; j < ncommon; j++) dup |= common[j] == g;
      for (uint32_t ci = 0; !dup && all && ci < a->ncomms; ci++)
        if (a->comms[ci].unformed && open_members(&a->comms[ci])) all = may_miss(&a->comms[ci], g);
      if (dup || !all) continue;
      if (ncommon == 64) return;
      common[ncommon++] = g;
    }
  }
  if (ncommon != k) return;
  /* sorted, then to each comm's open members those it does not miss yet */
  for (uint32_t i = 1; i < ncommon; i++)
    for (uint32_t j = i; j > 0 && common[j - 1] > common[j]; j--) {
      int32_t t = common[j];
      common[j] = common[j - 1];
      common[j - 1] = t;
    }
  for (uint32_t ci = 0; ci < a->ncomms; ci++) {
    fa_comm *c = &a->comms[ci];
    if (!c->unformed || !open_members(c)) continue;
    uint32_t next = 0;
    for (int32_t r = 0; r < c->size; r++) {
      fa_member *m = &c->members[r];
      if (m->rank >= 0 || m->global_rank >= 0) continue;
      for (;;) { /* the next common rank this comm does not miss as an absent rank already */
        int taken = 0;
        for (int32_t q = 0; next < ncommon && q < c->size; q++) taken |= c->members[q].global_rank == common[next];
        if (!taken || next >= ncommon) break;
        next++;
      }
      if (next >= ncommon) break;
      m->global_rank = common[next++];
      m->global_inferred = 1;
      m->absent = fa_find_rank(a, m->global_rank) >= 0;
      c->nabsent += m->absent;
      free(m->cand);
      m->cand = NULL;
      m->ncand = 0;
    }
  }
}

int fa_absent_members(fa_analysis *a)
{
  for (uint32_t ci = 0; ci < a->ncomms; ci++) {
    fa_comm *c = &a->comms[ci];
    if (c->unformed && c->npresent < (uint32_t)c->size && place(a, c)) return -1;
  }
  place_common(a);
  return 0;
}

/* Members without a dump of a formed comm c created by a split in which
 * every member with a dump passed its global rank as key: NCCL orders a
 * split's members by key, so comm ranks grow with global ranks, and the
 * members between two known comm ranks are ranks without a dump between
 * theirs.  Where a gap holds exactly as many of those as members, they are
 * those, in order. */
static void place_in_order(fa_analysis *a, fa_comm *c)
{
  for (int32_t r = 0; r < c->size; r++) {
    const fa_member *m = &c->members[r];
    const frz_comm *fc = m->rank >= 0 ? fa_member_comm(a, m) : NULL;
    if (m->rank >= 0 && (!fc || !(fc->flags & FRZ_CF_SPLIT) || fc->split_key != m->global_rank)) return;
  }
  const fa_ranks *miss = &a->ranks_missing;
  int32_t lo = -1; /* the global rank of the last known member */
  for (int32_t r = 0; r <= c->size; r++) {
    if (r < c->size && c->members[r].global_rank < 0) continue;
    int32_t hi = r < c->size ? c->members[r].global_rank : INT32_MAX, first = r - 1;
    while (first >= 0 && c->members[first].global_rank < 0) first--;
    uint32_t k = (uint32_t)(r - first - 1), n = 0, at = 0; /* members in the gap, candidates */
    for (uint32_t i = 0; i < miss->n; i++)
      if (miss->v[i] > lo && miss->v[i] < hi && !n++) at = i;
    if (k && n == k)
      for (uint32_t j = 0; j < k; j++) {
        fa_member *u = &c->members[first + 1 + (int32_t)j];
        u->global_rank = miss->v[at + j];
        u->global_inferred = 1;
      }
    lo = hi;
  }
}

void fa_place_members_in_order(fa_analysis *a)
{
  for (uint32_t ci = 0; ci < a->ncomms; ci++) {
    fa_comm *c = &a->comms[ci];
    if (!c->unformed && c->npresent && c->npresent < (uint32_t)c->size) place_in_order(a, c);
  }
}
