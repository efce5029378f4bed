/* instances.c — one comm id, several groups of ranks: the claims of a comm
 * id whose comm ranks more than one rank claims are split into instances.
 *
 * A comm's identity is a hash of its unique id and size (equal on every
 * member).  Two groups that create a comm each from the same unique id (a
 * store key reused, an id broadcast to the wrong ranks) make two comms with
 * one identity: comm rank 0 claimed by two ranks, and so on.  Each group is
 * analysed as a comm of its own.  Which claim belongs with which: the k-th
 * claimant of every comm rank in the order the comm was created (the wall
 * time its seq 0 was entered; the global rank when that is not retained)
 * is instance k, since a group's members enter the creation together. */
#include "config.h"

#include <stdlib.h>

#include "internal.h"

typedef struct order {
  int32_t comm_rank;
  int64_t t;        /* wall ns the creation was entered; INT64_MAX unknown */
  int32_t g;
  uint32_t claim;   /* index into the claims */
} order;

static int cmp_order(const void *x, const void *y)
{
  const order *a = x, *b = y;
  if (a->comm_rank != b->comm_rank) return a->comm_rank < b->comm_rank ? -1 : 1;
  if (a->t != b->t) return a->t < b->t ? -1 : 1;
  if (a->g != b->g) return a->g < b->g ? -1 : 1;
  return (a->claim > b->claim) - (a->claim < b->claim);
}

int fa_claim_instances(const fa_analysis *a, const uint32_t *frame, const uint32_t *entry,
                       const int32_t *g, uint32_t n, uint32_t *inst, uint32_t *ninst)
{
  *ninst = 1;
  for (uint32_t i = 0; i < n; i++) inst[i] = 0;
  /* conflicts at all: one comm rank claimed by two global ranks?  (sorted
   * by comm rank and global rank, such claims are neighbours: n log n, not
   * every pair, for a world comm of thousands of ranks) */
  order *o = malloc((n ? n : 1) * sizeof *o);
  if (!o) return -1;
  for (uint32_t i = 0; i < n; i++) o[i] = (order){a->frames[frame[i]].dump.comms[entry[i]].rank, 0, g[i], i};
  qsort(o, n, sizeof *o, cmp_order);
  int conflict = 0;
  for (uint32_t i = 1; i < n && !conflict; i++) conflict = o[i].comm_rank == o[i - 1].comm_rank && o[i].comm_rank >= 0 && o[i].g != o[i - 1].g; /* (-1: a creation that failed before NCCL gave its place claims none) */
  if (!conflict) {
    free(o);
    return 0;
  }
  for (uint32_t i = 0; i < n; i++) {
    const fa_frame *f = &a->frames[frame[i]];
    const frz_record *r = fa_frame_record(f, entry[i], 0);
    int64_t t = INT64_MAX;
    if (r && r->t_enqueue_ns)
      t = (int64_t)r->t_enqueue_ns - (int64_t)f->dump.process.anchor_monotonic_ns +
          (int64_t)f->dump.process.anchor_realtime_ns;
    o[i] = (order){f->dump.comms[entry[i]].rank, t, g[i], i};
  }
  qsort(o, n, sizeof *o, cmp_order);
  for (uint32_t i = 0, k = 0; i < n; i++) {
    k = i && o[i].comm_rank == o[i - 1].comm_rank ? k + 1 : 0;
    inst[o[i].claim] = k;
    if (k + 1 > *ninst) *ninst = k + 1;
  }
  free(o);
  return 0;
}
