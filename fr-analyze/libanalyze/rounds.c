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

/* Did current round x leave out calls round y (its pattern's) makes, all of
 * sig's comm and one alike sig (same comm, kind and op; for p2p, peer too),
 * and nothing else?
 * Every call of x is, in order, a call of y (matched at the earliest), and
 * the calls of y before x's last one's match that have no match are such:
 * the rank left that comm's calls out and went on.  (A call more, alike a
 * later one of its pattern, reads as calls of other comms left out too:
 * not this.) */
static int left_out(const frz_dump *d, const uint64_t *c, round_span x, round_span y, const frz_record *sig)
{
  uint64_t j = 0;
  int skipped_sig = 0;
  for (uint64_t i = 0; i < x.n; i++) {
    const frz_record *r = &d->records[c[x.first + i]];
    while (j < y.n && !alike(r, &d->records[c[y.first + j]])) {
      const frz_record *s = &d->records[c[y.first + j]];
      if (s->comm_id != sig->comm_id) return 0;
      /* (a p2p call: with the peer that waits for it) */
      skipped_sig |= s->kind == sig->kind && s->op == sig->op && (sig->kind != FRZ_KIND_P2P || s->peer == sig->peer);
      j++;
    }
    if (j == y.n) return 0; /* a call its pattern does not make there */
    j++;
  }
  return skipped_sig;
}

/* Rank dump d, whose counted records are c[0..nc) (indexes into
 * d->records, in record order), against the anchor collectives at[0..nat)
 * (indexes into d->records too): 0 its current round is what its pattern
 * gives (kept), 1 it is not (changed), -1 unknown (no period of its last
 * complete rounds, up to ROUND_MAX_BACK of them, that repeats at least
 * twice; or memory).  The pattern's period P is the smallest with every
 * complete round alike the one P before it; the current round must begin
 * like the round P before it.  When it changed and sig is given, *omitted
 * says whether its current round left out a call alike sig (left_out). */
static int judge(const frz_dump *d, const uint64_t *c, uint64_t nc, const uint64_t *at, uint64_t nat,
                 const frz_record *sig, int *omitted)
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
    if (periodic && res == 1 && sig) *omitted |= left_out(d, c, r[cur], r[cur - P], sig);
  }
out:
  free(pos);
  free(r);
  return res;
}

/* How many of dump d's records lead up to the op it waits in: through its
 * first collective or p2p op not completed, when one before it completed
 * (completion tracked); else all of them.  Ops it enqueued after that one
 * (a CPU that runs ahead of its stream) are not yet its rounds. */
static uint64_t wait_end(const frz_dump *d)
{
  int done = 0;
  for (uint64_t i = 0; i < d->nrecords; i++) {
    const frz_record *r = &d->records[i];
    if (!counted(r)) continue;
    if (r->state == FRZ_STATE_COMPLETED) done = 1;
    else if (done) return i + 1;
  }
  return d->nrecords;
}

/* Rank g's judgment over every comm it holds collectives of: 1 changed
 * (some anchor says so, none says kept), 0 kept (the other way), -1
 * unknown or both.  With sig, *omitted says whether some anchor's current
 * round left out a call alike sig. */
static int judge_rank(const fa_analysis *a, int32_t g, int at_wait, const frz_record *sig, int *omitted)
{
  int32_t k = fa_find_rank(a, g);
  if (k < 0) return -1;
  const frz_dump *d = &fa_rank_latest(a, &a->ranks[k])->dump;
  uint64_t n = at_wait ? wait_end(d) : d->nrecords;
  if (!n) return -1;
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
  for (uint64_t i = 0; i < n; i++) {
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
    for (uint64_t j = 0; j < n; j++)
      if (anchor(&d->records[j], comms[x])) at[nat++] = j;
    int v = judge(d, c, nc, at, nat, sig, omitted);
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
    int j = judge_rank(a, g, 0, NULL, NULL);
    if (j < 0) return -1;
    if (j == 0) continue;
    if (got >= 0) return -1; /* two changed */
    got = g;
  }
  return got;
}

int fa_round_judge(const fa_analysis *a, int32_t g)
{
  return judge_rank(a, g, 1, NULL, NULL);
}

int fa_round_left_out(const fa_analysis *a, int32_t g, const frz_record *sig)
{
  int omitted = 0;
  return judge_rank(a, g, 1, sig, &omitted) == 1 && omitted;
}
