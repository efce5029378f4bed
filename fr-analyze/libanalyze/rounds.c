/* rounds.c — which rank of a cycle changed its round of ops (fr-analyze(1),
 * "the rounds"): said in the summary, never blamed alone.
 *
 * A training step repeats one sequence of NCCL calls, or a few in turn (an
 * evaluation every third step).  Cut a rank's records (its latest dump,
 * collectives and p2p ops of every comm, in the order it made them) at its
 * collectives of one comm, the anchor: a round is the ops after one anchor
 * collective (or the comm's creation) up to and including the next.  When
 * its last complete rounds repeat with a period P (each alike the one P
 * before it: the same comm, kind and op, and for p2p the same peer and
 * direction, call by call; at least two periods seen), its current round
 * (the ops after its latest anchor collective, or the round that ends in it
 * when nothing follows) either begins like the round P before it (it kept
 * its pattern) or does not (it changed).  In a cycle, when every rank kept
 * its pattern but one, that one changed what it does.  Whether it went
 * astray or made a call its peers wrongly left out (a last step's extra
 * op) the dumps cannot tell, so the cycle's ranks stay the root causes.
 * Counts and data types are not compared (a mismatch is its own rule). */
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

/* The rule looks back at most this many complete rounds, for a period of
 * at most half as many. */
#define ROUND_MAX_BACK 64

/* A round as a range of the list of counted record indexes: entries
 * first .. first+n-1. */
typedef struct round_span {
  uint64_t first, n;
} round_span;

/* Are rounds x and y alike, call by call (y may be cut to the length of x
 * when prefix is set)? */
static int rounds_alike(const frz_dump *d, const uint64_t *c, round_span x, round_span y, int prefix)
{
  if (prefix ? x.n > y.n : x.n != y.n) return 0;
  for (uint64_t i = 0; i < x.n; i++)
    if (!alike(&d->records[c[x.first + i]], &d->records[c[y.first + i]])) return 0;
  return 1;
}

/* Rank dump d, whose counted records are c[0..nc) (indexes into
 * d->records, in record order), against the anchor collectives at[0..nat)
 * (indexes into d->records too): 0 its current round is what its pattern
 * gives (kept), 1 it is not (changed), -1 unknown (no period of its last
 * complete rounds, up to ROUND_MAX_BACK of them, that repeats at least
 * twice; or memory).  The pattern's period P is the smallest with every
 * complete round alike the one P before it; the current round must begin
 * like the round P before it. */
static int judge(const frz_dump *d, const uint64_t *c, uint64_t nc, const uint64_t *at, uint64_t nat)
{
  if (nat < 3) return -1;
  uint64_t *pos = malloc((nat + 1) * sizeof *pos);
  round_span *r = malloc((nat + 1) * sizeof *r);
  int res = -1;
  if (!pos || !r) goto out;
  /* where each anchor's round ends in the list of counted records */
  for (uint64_t k = 0, n = 0; k < nat; k++) {
    while (n < nc && c[n] <= at[k]) n++;
    pos[k] = n;
  }
  /* rounds 1..nat-1 end at anchors 1..nat-1; round nat is what follows */
  for (uint64_t j = 1; j < nat; j++) r[j] = (round_span){pos[j - 1], pos[j] - pos[j - 1]};
  r[nat] = (round_span){pos[nat - 1], nc - pos[nat - 1]};
  uint64_t cur = r[nat].n ? nat : nat - 1; /* nothing after the last anchor: its round is current */
  uint64_t m = cur - 1;                   /* complete rounds 1..m */
  uint64_t lo = m > ROUND_MAX_BACK ? m - ROUND_MAX_BACK + 1 : 1;
  for (uint64_t P = 1; lo + 2 * P <= m + 1 && res < 0; P++) {
    int periodic = 1;
    for (uint64_t j = lo + P; j <= m && periodic; j++) periodic = rounds_alike(d, c, r[j], r[j - P], 0);
    if (periodic) res = !rounds_alike(d, c, r[cur], r[cur - P], 1);
  }
out:
  free(pos);
  free(r);
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
  uint64_t *at = malloc(d->nrecords * sizeof *at), *c = malloc(d->nrecords * sizeof *c);
  uint64_t comms[16], nc = 0;
  uint32_t ncomms = 0;
  if (!at || !c) {
    free(at);
    free(c);
    return -1;
  }
  /* the comms it holds collectives of (the first 16: a rank of a real job
   * holds a handful) */
  for (uint64_t i = 0; i < d->nrecords; i++) {
    const frz_record *r = &d->records[i];
    if (counted(r)) c[nc++] = i;
    if (r->kind != FRZ_KIND_COLL) continue;
    uint32_t x = 0;
    while (x < ncomms && comms[x] != r->comm_id) x++;
    if (x == ncomms && ncomms < 16) comms[ncomms++] = r->comm_id;
  }
  int kept = 0, changed = 0;
  for (uint32_t x = 0; x < ncomms; x++) {
    uint64_t nat = 0;
    for (uint64_t j = 0; j < d->nrecords; j++)
      if (anchor(&d->records[j], comms[x])) at[nat++] = j;
    int v = judge(d, c, nc, at, nat);
    kept |= v == 0;
    changed |= v == 1;
  }
  free(at);
  free(c);
  return kept == changed ? -1 : changed;
}

int32_t fa_round_changed(const fa_analysis *a, const fa_verdict *v)
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
