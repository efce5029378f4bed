/* check.c — fr-dump --check: what a decodable dump must also satisfy to be
 * usable (frz.md): records in record-id order, each naming a communicator
 * of the comm table, values in range, times in order. */
#include "config.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fr_dump.h"

/* Note one problem; the first one's text is kept in msg. */
__attribute__((format(printf, 4, 5))) static void note(unsigned *n, char *msg, size_t len,
                                                        const char *fmt, ...)
{
  if ((*n)++ || !len) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, len, fmt, ap);
  va_end(ap);
}

static int cmp_u64(const void *x, const void *y)
{
  uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
  return (a > b) - (a < b);
}

static int known(const uint64_t *ids, uint32_t n, uint64_t id)
{
  return bsearch(&id, ids, n, sizeof *ids, cmp_u64) != NULL;
}

unsigned fd_check(const frz_dump *d, char *msg, size_t len)
{
  unsigned n = 0;
  if (len) msg[0] = '\0';
  uint64_t *ids = malloc((d->ncomms ? d->ncomms : 1) * sizeof *ids);
  if (!ids) {
    note(&n, msg, len, "out of memory");
    return n;
  }
  for (uint32_t c = 0; c < d->ncomms; c++) {
    const frz_comm *m = &d->comms[c];
    ids[c] = m->comm_id;
    if (m->nranks > 0 && (m->rank < -1 || m->rank >= m->nranks))
      note(&n, msg, len, "comm %016" PRIx64 ": rank %d outside 0..%d", m->comm_id, m->rank, m->nranks - 1);
    if (m->last_completed_seq > m->last_enqueued_seq)
      note(&n, msg, len, "comm %016" PRIx64 ": last completed seq %" PRId64 " after last enqueued %" PRId64,
           m->comm_id, m->last_completed_seq, m->last_enqueued_seq);
  }
  qsort(ids, d->ncomms, sizeof *ids, cmp_u64);
  for (uint64_t i = 0; i < d->nrecords; i++) {
    const frz_record *r = &d->records[i];
    if (i && r->id <= d->records[i - 1].id)
      note(&n, msg, len, "record %" PRIu64 ": id %" PRIu64 " not after %" PRIu64, i, r->id, d->records[i - 1].id);
    if (r->state > FRZ_STATE_FAILED) note(&n, msg, len, "record %" PRIu64 ": state %u unknown", r->id, r->state);
    if (r->kind > FRZ_KIND_LIFE) note(&n, msg, len, "record %" PRIu64 ": kind %u unknown", r->id, r->kind);
    if (r->dir > FRZ_DIR_RECV) note(&n, msg, len, "record %" PRIu64 ": direction %u unknown", r->id, r->dir);
    if ((r->kind == FRZ_KIND_COLL || r->kind == FRZ_KIND_P2P || r->kind == FRZ_KIND_LIFE) &&
        !known(ids, d->ncomms, r->comm_id))
      note(&n, msg, len, "record %" PRIu64 ": comm %016" PRIx64 " is not in the comm table", r->id, r->comm_id);
    if (r->kind == FRZ_KIND_P2P && r->dir == FRZ_DIR_NONE)
      note(&n, msg, len, "record %" PRIu64 ": p2p without a direction", r->id);
    if (r->t_start_ns && r->t_enqueue_ns && r->t_start_ns < r->t_enqueue_ns)
      note(&n, msg, len, "record %" PRIu64 ": started before it was enqueued", r->id);
    if (r->t_complete_ns && r->t_start_ns && r->t_complete_ns < r->t_start_ns)
      note(&n, msg, len, "record %" PRIu64 ": completed before it started", r->id);
  }
  free(ids);
  return n;
}
