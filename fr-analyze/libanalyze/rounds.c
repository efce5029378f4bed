/* rounds.c — which rank of a cycle changed its round of ops (fr-analyze(1),
 * "went astray": the rounds rule).
 *
 * A training step repeats one sequence of NCCL calls.  Cut a rank's records
 * (its latest dump, collectives and p2p ops of every comm, in the order it
 * made them) at its collectives of one comm, the anchor: a round is the ops
 * after one anchor collective (or the comm's creation) up to and including
 * the next.  When the two
 * last complete rounds are alike (the same comm, kind and op, and for p2p
 * the same peer and direction, one by one), the rank has a pattern; its
 * current round (the ops after its latest anchor collective, or the round
 * that ends in it when nothing follows) either is a prefix of that pattern
 * (it kept it) or is not (it changed what it does).  In a cycle, when every
 * rank kept its pattern but one, which changed its own, that one went
 * astray.  Counts and data types are not compared (a mismatch is its own
 * rule), and a rank without two alike rounds before on any anchor makes the
 * rule say nothing. */
#include "config.h"

#include <stdlib.h>

#include "internal.h"

/* The rule looks at cycles of at most this many steps (its cost is the
 * cycle's ranks' records times their comms). */
#define ROUND_MAX_CYCLE 64

/* Does record r take part in a round (a collective or p2p op)? */
static int counted(const frz_record *r)
{
  return r->kind == FRZ_KIND_COLL || r->kind == FRZ_KIND_P2P;
}

/* Are records x and y the same call of a round? */
static int alike(const frz_record *x, const frz_record *y)
{
  if (x->comm_id != y->comm_id || x->kind != y->kind || x->op != y->op) return 0;
  return x->kind != FRZ_KIND_P2P || (x->peer == y->peer && x->dir == y->dir);
}

/* Does record r cut rounds at comm `comm`'s collectives?  Its collectives,
 * and its creation (seq 0), where the first round begins. */
static int anchor(const frz_record *r, uint64_t comm)
{
  return r->comm_id == comm && (r->kind == FRZ_KIND_COLL || (r->kind == FRZ_KIND_LIFE && r->seq == 0));
}

/* The counted records of d with index in (from, to], as indexes, into v
 * (room for d->nrecords); their number. */
static uint64_t span(const frz_dump *d, uint64_t from, uint64_t to, uint64_t *v)
{
  uint64_t n = 0;
  for (uint64_t i = from + 1; i <= to && i < d->nrecords; i++)
    if (counted(&d->records[i])) v[n++] = i;
  return n;
}

/* Rank dump d against anchor comm `anchor`: 0 it kept its pattern, 1 it
 * changed it, -1 unknown (no two alike complete rounds, or memory).  at[]
 * holds the indexes of d's anchor collectives in record order. */
static int judge(const frz_dump *d, const uint64_t *at, uint64_t nat)
{
  if (nat < 3) return -1;
  uint64_t last = at[nat - 1], tail = 0;
  for (uint64_t i = last + 1; i < d->nrecords; i++) tail += counted(&d->records[i]);
  /* the current round, and the two complete ones before it, as (from, to] */
  uint64_t cur_from = last, cur_to = d->nrecords - 1, k = nat - 1;
  if (!tail) {
    if (nat < 4) return -1;
    cur_from = at[nat - 2], cur_to = last, k = nat - 2;
  }
  uint64_t *a = malloc(3 * (d->nrecords ? d->nrecords : 1) * sizeof *a);
  if (!a) return -1;
  uint64_t *b = a + d->nrecords, *c = b + d->nrecords;
  uint64_t na = span(d, at[k - 2], at[k - 1], a), nb = span(d, at[k - 1], at[k], b);
  uint64_t nc = span(d, cur_from, cur_to, c);
  int res = -1;
  if (na == nb && na) {
    int same = 1;
    for (uint64_t i = 0; i < na && same; i++) same = alike(&d->records[a[i]], &d->records[b[i]]);
    if (same) {
      res = nc > nb;
      for (uint64_t i = 0; i < nc && i < nb && !res; i++) res = !alike(&d->records[c[i]], &d->records[b[i]]);
    }
  }
  free(a);
  return res;
}

/* Rank g's judgment over every comm it holds collectives of: 1 changed
 * (some anchor says so, none says kept), 0 kept (the other way), -1
 * unknown or both. */
static int judge_rank(const fa_analysis *a, int32_t g)
{
  int32_t k = fa_find_rank(a, g);
  if (k < 0) return -1;
  const frz_dump *d = &fa_rank_latest(a, &a->ranks[k])->dump;
  if (!d->nrecords) return -1;
  uint64_t *at = malloc(d->nrecords * sizeof *at);
  uint64_t comms[16];
  uint32_t ncomms = 0;
  if (!at) return -1;
  /* the comms it holds collectives of (the first 16: a rank of a real job
   * holds a handful) */
  for (uint64_t i = 0; i < d->nrecords; i++) {
    const frz_record *r = &d->records[i];
    if (r->kind != FRZ_KIND_COLL) continue;
    uint32_t c = 0;
    while (c < ncomms && comms[c] != r->comm_id) c++;
    if (c == ncomms && ncomms < 16) comms[ncomms++] = r->comm_id;
  }
  int kept = 0, changed = 0;
  for (uint32_t c = 0; c < ncomms; c++) {
    uint64_t nat = 0;
    for (uint64_t j = 0; j < d->nrecords; j++)
      if (anchor(&d->records[j], comms[c])) at[nat++] = j;
    int v = judge(d, at, nat);
    kept |= v == 0;
    changed |= v == 1;
  }
  free(at);
  return kept == changed ? -1 : changed;
}

int32_t fa_round_astray(const fa_analysis *a, const fa_verdict *v)
{
  if (v->ncycle < 2 || v->ncycle > ROUND_MAX_CYCLE) return -1;
  int32_t got = -1;
  for (uint32_t i = 0; i < v->ncycle; i++) {
    const fa_wait_step *w = &v->cycle[i];
    if (w->uncertain) return -1;
    int32_t g = w->rank;
    int seen = 0; /* a rank may wait at several steps: judged once */
    for (uint32_t j = 0; j < i && !seen; j++) seen = v->cycle[j].rank == g;
    if (seen) continue;
    int j = judge_rank(a, g);
    if (j < 0) return -1;
    if (j == 0) continue;
    if (got >= 0) return -1; /* two changed */
    got = g;
  }
  return got;
}
