/* summary_phrase.c — the phrases of the verdict's summary (summary.h):
 * a growing string, and ranks, comm ranks and ops named as users name
 * them. */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "summary.h"

void sb_printf(sbuf *b, const char *fmt, ...)
{
  if (b->oom) return;
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  if (b->n + (size_t)n + 1 > b->cap) {
    size_t cap = (b->cap ? b->cap * 2 : 256) + (size_t)n;
    char *p = realloc(b->s, cap);
    if (!p) {
      b->oom = 1;
      return;
    }
    b->s = p;
    b->cap = cap;
  }
  va_start(ap, fmt);
  vsnprintf(b->s + b->n, (size_t)n + 1, fmt, ap);
  va_end(ap);
  b->n += (size_t)n;
}

/* "rank 5" or "ranks 0-4,6-7" into buf. */
const char *ranks_phrase(const fa_ranks *r, char *buf, size_t len)
{
  char set[160];
  fa_format_ranks(r->v, r->n, set, sizeof set);
  snprintf(buf, len, "%s %s", r->n == 1 ? "rank" : "ranks", set);
  return buf;
}

/* Why ranks r left no dump, as the announcements tell (nothing when no
 * process of the job announced itself): "; rank 5 was running (...)". */
void say_no_dump(const fa_analysis *a, const fa_ranks *r, sbuf *b)
{
  fa_ranks yes, no;
  char p[200], host[FRZ_HOST_MAX * 4];
  if (fa_alive_split(a, r, &yes, &no) != 0) {
    b->oom = 1;
    return;
  }
  const frz_alive *x = yes.n == 1 ? fa_alive_of(a, yes.v[0]) : NULL;
  if (x)
    sb_printf(b, "; %s was running and never exited cleanly (pid %u on host %s announced itself): killed, "
              "or unable to write a dump", ranks_phrase(&yes, p, sizeof p), x->pid,
              x->host[0] ? fa_sanitize(x->host, host, sizeof host) : "?");
  else if (yes.n)
    sb_printf(b, "; %s were running and never exited cleanly (their recorders announced them): killed, or "
              "unable to write a dump", ranks_phrase(&yes, p, sizeof p));
  if (no.n)
    sb_printf(b, "; %s never announced %s: never created a communicator with the recorder loaded, or "
              "exited cleanly", ranks_phrase(&no, p, sizeof p), no.n == 1 ? "itself" : "themselves");
  fa_ranks_free(&yes);
  fa_ranks_free(&no);
}

/* Are all of c's lagging members ones that left it (how 1) or whose process
 * ended with the op in flight (how 2)? */
int lagging_all(const fa_comm *c, int how)
{
  uint32_t n = 0;
  for (int32_t r = 0; r < c->size; r++) {
    const fa_member *m = &c->members[r];
    if (m->state != FA_MEMBER_LAGGING) continue;
    if (how == 1 ? !m->left : !m->gone) return 0;
    n++;
  }
  return n > 0;
}

/* Does some process hold several comm ranks of c (CommInitAll)? */
int several_per_process(const fa_comm *c)
{
  for (int32_t r = 0; r < c->size; r++)
    for (int32_t q = r + 1; q < c->size && q < r + 64; q++)
      if (c->members[r].rank >= 0 && c->members[r].rank == c->members[q].rank) return 1;
  return 0;
}

/* "comm ranks 0 (device 0), 2 (device 2) of rank 0" for c's members in
 * state s (at most 4 named). */
const char *comm_ranks_phrase(const fa_analysis *a, const fa_comm *c, fa_member_state s, char *buf,
                                     size_t len)
{
  size_t at = 0;
  uint32_t n = 0;
  int32_t g = -2;
  buf[0] = '\0';
  for (int32_t r = 0; r < c->size; r++) n += c->members[r].state == s;
  at += (size_t)snprintf(buf, len, "comm rank%s ", n == 1 ? "" : "s");
  uint32_t k = 0;
  for (int32_t r = 0; r < c->size && at < len; r++) {
    const fa_member *m = &c->members[r];
    if (m->state != s) continue;
    if (k == 4) {
      at += (size_t)snprintf(buf + at, len - at, ", ...");
      break;
    }
    const frz_comm *fc = fa_member_comm(a, m);
    if (fc && fc->cuda_device >= 0)
      at += (size_t)snprintf(buf + at, len - at, "%s%d (device %d)", k ? ", " : "", r, fc->cuda_device);
    else
      at += (size_t)snprintf(buf + at, len - at, "%s%d", k ? ", " : "", r);
    g = g == -2 || g == m->global_rank ? m->global_rank : -1;
    k++;
  }
  if (at < len && g >= 0) snprintf(buf + at, len - at, " of rank %d", g);
  return buf;
}

/* "comm rank 1, one of ranks 1-2, which never called its creation" for
 * the unplaced members of a comm that never formed; 0 when there are none. */
int say_candidates(const fa_comm *c, sbuf *b)
{
  int n = 0;
  for (int32_t r = 0; r < c->size; r++) {
    const fa_member *m = &c->members[r];
    if (m->state != FA_MEMBER_NO_DUMP || m->global_rank >= 0 || !m->ncand) continue;
    char set[160];
    fa_format_ranks(m->cand, m->ncand, set, sizeof set);
    sb_printf(b, "%scomm rank %d (one of ranks %s)", n++ ? ", " : "", r, set);
  }
  if (n) sb_printf(b, ", which never called its creation (the comm never formed)");
  return n;
}

/* "waits" after one rank, "wait" after several. */
const char *wait_verb(const fa_ranks *r) { return r->n == 1 ? "waits" : "wait"; }

/* Where the members of c in o (global ranks) tore it down, against its
 * stuck seq: "at", "before" (their last seq lower), or "at or before". */
const char *torn_where(const fa_comm *c, const fa_ranks *o)
{
  int before = 0, at = 0;
  for (int32_t r = 0; r < c->size; r++)
    for (uint32_t i = 0; i < o->n; i++)
      if (c->members[r].rank >= 0 && c->members[r].global_rank == o->v[i])
        *(c->members[r].last_enqueued < (int64_t)c->stuck_seq ? &before : &at) = 1;
  return !before ? "at" : at ? "at or before" : "before";
}

/* "AllReduce seq 37" for comm c, or "collective seq 37" when unknown;
 * "AllReduce seq 37 (replay 12 of graph 1)" when the ranks' records of it
 * are one launch of a CUDA graph (frz 1.5). */
const char *op_phrase(const fa_analysis *a, const fa_comm *c, uint64_t seq, char *buf,
                             size_t len)
{
  const frz_dump *d;
  const frz_record *r = fa_comm_record_in(a, c, seq, &d);
  char nm[FRZ_PT_NAME_MAX];
  int n = snprintf(buf, len, "%s seq %llu", r ? fa_sanitize(fa_record_op_name(d, r), nm, sizeof nm) : "collective",
                   (unsigned long long)seq);
  if (r && (r->flags & FRZ_RF_GRAPH_REPLAY) && r->graph_id && n > 0 && (size_t)n < len)
    snprintf(buf + n, len - (size_t)n, " (replay %llu of graph %u)", (unsigned long long)r->replay,
             (unsigned)r->graph_id);
  return buf;
}

/* The replay comm c's op `seq` is, when the ranks' records of it are one
 * launch of a CUDA graph: its record, else NULL. */
const frz_record *replay_of(const fa_analysis *a, const fa_comm *c, uint64_t seq)
{
  const frz_dump *d;
  const frz_record *r = fa_comm_record_in(a, c, seq, &d);
  return r && (r->flags & FRZ_RF_GRAPH_REPLAY) && r->graph_id ? r : NULL;
}

const char *nccl_result_phrase(int32_t r, char *buf, size_t len)
{
  static const char *const names[] = {"ncclSuccess",         "ncclUnhandledCudaError", "ncclSystemError",
                                      "ncclInternalError",   "ncclInvalidArgument",    "ncclInvalidUsage",
                                      "ncclRemoteError",     "ncclInProgress"};
  if (r >= 0 && r < (int32_t)(sizeof names / sizeof names[0])) snprintf(buf, len, "%s", names[r]);
  else snprintf(buf, len, "error %d", r);
  return buf;
}
