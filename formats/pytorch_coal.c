/* pytorch_coal.c — what a PyTorch dump's coalesced collective groups say
 * of their completion, and what they do not.
 *
 * Seen in real dumps (PyTorch 2.11, NCCL 2.28.9, four ranks on an H200,
 * tests/fixtures/pytorch-fr/h200-4rank-*):
 *  - the closing record of an uneven all_gather or reduce_scatter called
 *    synchronously ("ALLGATHER_coalesced", "REDUCE_SCATTER_coalesced") reads
 *    completed, and is retired, on a rank whose peer never called the group
 *    (coalesced-hang: rank 0's tp0 seqs 14 and 15, rank 1 absent), while the
 *    next collective of the group on that rank stays scheduled;
 *  - the members of a group are never retired, so a dump of the active
 *    entries only keeps them and drops their retired closing record;
 *  - pg_status's last_completed_collective is not advanced by such groups
 *    (a2a-hang: 13 on both members after seqs 14 and 15 completed).
 * Completion is known there by stream order only: each process group runs
 * its NCCL ops on one stream, so a later collective of the group that
 * completed (or started) on that rank, or pg_status's last completed
 * collective at or past the seq, means the group completed.  Otherwise a
 * closing record that reads completed, and the members of a closed group
 * whose closing record is not in the dump, are marked FRZ_RF_NO_TRACKING
 * (completion unknown); a closing record that reads scheduled or started
 * says what it says. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "pytorch_int.h"

/* Record i is a collective op of a coalesced group: a member, or the
 * closing record of a group of collectives (its members or, none retained,
 * the record itself standing as a collective). */
static int coll_group_record(const frz_dump *d, const uint32_t *rec_comm, uint64_t i)
{
  const frz_record *r = &d->records[i];
  uint8_t co = d->pt->records[i].coalesced;
  if (co == FRZ_PT_COALESCED_MEMBER) return r->kind == FRZ_KIND_COLL;
  if (co != FRZ_PT_COALESCED_CLOSE) return 0;
  if (r->kind == FRZ_KIND_COLL) { /* no member retained: the closing names of groups only */
    uint32_t nm = d->pt->records[i].name;
    const char *w = nm < d->pt->nnames ? d->pt->names[nm] : "";
    /* "ALLGATHER_coalesced", ... and the older "coalesced" close groups;
     * "allreduce_coalesced" and its lower-case kin are single works whose
     * events bracket their kernel (51.9 ms in a2a-hang) */
    return (w[0] >= 'A' && w[0] <= 'Z') || strcmp(w, "coalesced") == 0;
  }
  for (uint64_t k = i; k-- > 0;)
    if (rec_comm[k] == rec_comm[i])
      return d->pt->records[k].coalesced == FRZ_PT_COALESCED_MEMBER && d->records[k].kind == FRZ_KIND_COLL;
  return 0;
}

/* Records [first, i] of i's comm at i's seq, not in a closed group, two or
 * more of them: members whose closing record the dump lacks (or a group
 * still open).  Returns the count, *first the oldest. */
static uint64_t orphan_group(const frz_dump *d, const uint32_t *rec_comm, uint64_t i, uint64_t *first)
{
  const frz_record *r = &d->records[i];
  uint8_t co = d->pt->records[i].coalesced;
  if (!(co == FRZ_PT_COALESCED_OPEN || (co == FRZ_PT_COALESCED_NO && r->kind == FRZ_KIND_COLL))) return 0;
  uint64_t n = 1;
  *first = i;
  for (uint64_t k = i; k-- > 0;) {
    if (rec_comm[k] != rec_comm[i]) continue;
    const frz_record *x = &d->records[k];
    if (x->seq != r->seq || d->pt->records[k].coalesced != co || (x->kind != FRZ_KIND_COLL && co != FRZ_PT_COALESCED_OPEN))
      break;
    *first = k;
    n++;
  }
  return n >= 2 ? n : 0;
}

/* Mark records [first, last] of comm m unknown (enqueued, not tracked) and judged. */
static void mark_unknown(frz_dump *d, const uint32_t *rec_comm, uint8_t *seen, uint64_t first, uint64_t last,
                         uint32_t m)
{
  for (uint64_t k = first; k <= last; k++) {
    if (rec_comm[k] != m) continue;
    seen[k] = 1;
    frz_record *x = &d->records[k];
    x->state = FRZ_STATE_ENQUEUED;
    x->t_complete_ns = 0;
    x->flags |= FRZ_RF_NO_TRACKING;
    if (d->pt->records[k].coalesced == FRZ_PT_COALESCED_OPEN) { /* closed after all: an op again */
      x->kind = FRZ_KIND_COLL;
      d->pt->records[k].coalesced = FRZ_PT_COALESCED_MEMBER;
    }
  }
}

int pt_coalesced_evidence(frz_dump *d, const uint32_t *rec_comm, const uint32_t *comm_pg,
                          const int64_t *comp_of, const int64_t *enq_of)
{
  uint8_t *later_done = calloc(d->ncomms ? d->ncomms : 1, 1); /* a later collective ran */
  uint8_t *later_any = calloc(d->ncomms ? d->ncomms : 1, 1);  /* a later record exists */
  uint8_t *seen = calloc(d->nrecords ? d->nrecords : 1, 1);   /* judged with its group */
  if (!later_done || !later_any || !seen) {
    free(later_done);
    free(later_any);
    free(seen);
    return -1;
  }
  for (uint64_t i = d->nrecords; i-- > 0;) {
    uint32_t m = rec_comm[i];
    frz_record *r = &d->records[i];
    int64_t comp = comp_of[comm_pg[m]], enq = enq_of[comm_pg[m]];
    int known = later_done[m] || (comp >= 0 && r->seq <= (uint64_t)comp);
    uint64_t first = i, n;
    if (!seen[i] && coll_group_record(d, rec_comm, i)) {
      if (d->pt->records[i].coalesced == FRZ_PT_COALESCED_CLOSE && r->state == FRZ_STATE_COMPLETED && !known) {
        /* the members before it took its state (resolve_coalesced) */
        for (uint64_t k = i; k-- > 0;) {
          if (rec_comm[k] != m) continue;
          if (d->pt->records[k].coalesced != FRZ_PT_COALESCED_MEMBER || d->records[k].seq != r->seq) break;
          first = k;
        }
        mark_unknown(d, rec_comm, seen, first, i, m);
      }
    } else if (!seen[i] && (n = orphan_group(d, rec_comm, i, &first)) > 0) {
      int closed = later_any[m] || (enq >= 0 && r->seq <= (uint64_t)enq);
      if (closed && !known) mark_unknown(d, rec_comm, seen, first, i, m);
      for (uint64_t k = first; k <= i; k++)
        if (rec_comm[k] == m) {
          seen[k] = 1; /* judged with its group, whatever the outcome */
          if (closed && known) d->records[k].state = FRZ_STATE_COMPLETED;
        }
    }
    later_any[m] = 1;
    if ((r->kind == FRZ_KIND_COLL || r->kind == FRZ_KIND_LIFE || coll_group_record(d, rec_comm, i)) &&
        !(r->flags & FRZ_RF_NO_TRACKING) &&
        (r->state == FRZ_STATE_COMPLETED ||
         (r->state == FRZ_STATE_STARTED && d->pt->records[i].coalesced == FRZ_PT_COALESCED_NO)))
      later_done[m] = 1;
  }
  free(later_done);
  free(later_any);
  free(seen);
  return 0;
}
