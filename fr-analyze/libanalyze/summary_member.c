/* summary_member.c — what the summary says of the members of the stuck
 * comm: which were queued or behind, which lag and how (a call of their own
 * that failed, a capture never launched, a group never ended), which ended,
 * whose dump could not be read, and the links that stopped (summary.h). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "summary.h"

/* Did every member of c past its stuck op pass it on a record whose
 * completion is not tracked (PyTorch's coalesced groups, frz(5))? */
int passed_unrecorded(const fa_analysis *a, const fa_comm *c)
{
  int any = 0;
  for (int32_t r = 0; r < c->size; r++) {
    const fa_member *m = &c->members[r];
    if (m->state != FA_MEMBER_PASSED) continue;
    const frz_record *x = fa_member_record(a, m, c->stuck_seq);
    if (!x || !(x->flags & FRZ_RF_NO_TRACKING)) return 0;
    any = 1;
  }
  return any;
}

/* Is waiting member m's record of c's stuck op queued, never started, behind
 * an earlier send or receive of its own on the same comm that never
 * completed?  Both as tracked (not NO_TRACKING, and its dump shows starts:
 * a PyTorch dump has them only with timing on).  Said, not used as
 * evidence: where the streams are not known (the recorder as NCCL's profiler
 * plugin alone), whether the op waits behind them is not known either.
 * PyTorch's all_to_all and batch_isend_irecv are grouped ncclSend/ncclRecv. */
int queued_behind_p2p(const fa_analysis *a, const fa_comm *c, const fa_member *m)
{
  const fa_frame *f = fa_member_frame(a, m);
  const frz_record *x = fa_member_record(a, m, c->stuck_seq);
  if (!f || !x || x->state != FRZ_STATE_ENQUEUED || (x->flags & FRZ_RF_NO_TRACKING)) return 0;
  const frz_record *first = f->dump.records;
  if (x < first || x >= first + f->dump.nrecords) return 0;
  int starts_seen = 0;
  for (uint64_t i = 0; i < f->dump.nrecords && !starts_seen; i++)
    starts_seen = first[i].state == FRZ_STATE_STARTED || first[i].t_start_ns != 0;
  if (!starts_seen) return 0;
  for (const frz_record *r = x; r-- > first;) {
    if (r->comm_id != x->comm_id || (r->comm_rank >= 0 && x->comm_rank >= 0 && r->comm_rank != x->comm_rank))
      continue;
    if (r->kind == FRZ_KIND_COLL) return 0; /* a collective between them: not what it waits behind */
    if (r->kind == FRZ_KIND_P2P && !(r->flags & FRZ_RF_NO_TRACKING) &&
        (r->state == FRZ_STATE_ENQUEUED || r->state == FRZ_STATE_STARTED))
      return 1;
  }
  return 0;
}

/* Split c's waiting ranks w: those queued behind unfinished p2p of their own
 * (queued_behind_p2p) move to q, the rest stay in w (linear in members). */
int split_queued(const fa_analysis *a, const fa_comm *c, fa_ranks *w, fa_ranks *q)
{
  uint32_t cap = 0;
  for (int32_t r = 0; r < c->size; r++) {
    const fa_member *m = &c->members[r];
    if (m->state == FA_MEMBER_WAITING && m->global_rank >= 0 && queued_behind_p2p(a, c, m) &&
        fa_ranks_push(q, &cap, m->global_rank))
      return -1;
  }
  if (!q->n) return 0;
  fa_ranks_sort(q);
  uint32_t n = 0;
  for (uint32_t i = 0; i < w->n; i++)
    if (!fa_ranks_has(q, w->v[i])) w->v[n++] = w->v[i];
  w->n = n;
  return 0;
}

/* Is every lagging member of c (one at least) queued on its stream behind an
 * unfinished op (fa_member.behind), none one that never enqueued the op? */
int lagging_behind(const fa_comm *c)
{
  int any = 0;
  for (int32_t r = 0; r < c->size; r++) {
    if (c->members[r].state != FA_MEMBER_LAGGING) continue;
    if (!c->members[r].behind) return 0;
    any = 1;
  }
  return any;
}

/* Was an unfinished member of c one whose op never started? */
int not_returned_any(const fa_comm *c)
{
  for (int32_t r = 0; r < c->size; r++)
    if (c->members[r].not_returned) return 1;
  return 0;
}

int not_started_any(const fa_comm *c)
{
  for (int32_t r = 0; r < c->size; r++)
    if (c->members[r].state == FA_MEMBER_UNFINISHED && c->members[r].not_started) return 1;
  return 0;
}

/* Do all of c's lagging members carry `flag` of how they lag: 1 their own
 * call failed (failed_seq at or before the stuck seq), 2 their record of
 * the stuck op was captured into a graph that never ran (not_run), 3 they
 * issued it in a group whose ncclGroupEnd never came (FRZ_RF_GROUP_OPEN)? */
int lagging_how(const fa_analysis *a, const fa_comm *c, int flag)
{
  uint32_t n = 0;
  for (int32_t r = 0; r < c->size; r++) {
    const fa_member *m = &c->members[r];
    if (m->state != FA_MEMBER_LAGGING) continue;
    if (flag == 1 && !(m->failed_seq >= 0 && (uint64_t)m->failed_seq <= c->stuck_seq)) return 0;
    if (flag == 2 && !m->not_run) return 0;
    const frz_record *at = flag == 3 ? fa_member_record(a, m, c->stuck_seq) : NULL;
    if (flag == 3 && (!at || !(at->flags & FRZ_RF_GROUP_OPEN))) return 0;
    n++;
  }
  return n > 0;
}

/* "rank 3's CommInitRank on comm X failed (ncclSystemError) and launched
 * nothing": the first lagging member whose own call failed. */
void say_failed_call(const fa_analysis *a, const fa_comm *c, const fa_ranks *lag, sbuf *b)
{
  char hex[200], p1[200], res[32], nm[FRZ_PT_NAME_MAX];
  fa_comm_label(c, hex, sizeof hex);
  for (int32_t r = 0; r < c->size; r++) {
    const fa_member *m = &c->members[r];
    if (m->state != FA_MEMBER_LAGGING || m->failed_seq < 0) continue;
    const frz_record *rec = fa_member_record(a, m, (uint64_t)m->failed_seq);
    const frz_dump *d = &a->frames[m->frame].dump;
    const frz_comm *fc = fa_member_comm(a, m);
    const char *op = rec ? fa_sanitize(fa_record_op_name(d, rec), nm, sizeof nm)
                     : fc && (fc->flags & FRZ_CF_SHRINK) ? "CommShrink"
                     : fc && (fc->flags & FRZ_CF_SPLIT) ? "CommSplit" : "its creation";
    nccl_result_phrase(m->failed_result, res, sizeof res);
    if (m->failed_seq == 0)
      sb_printf(b, "%s on comm %s failed on %s (%s), so %s never took part in the comm", op, hex,
                ranks_phrase(lag, p1, sizeof p1), m->failed_result > 0 ? res : "an error",
                lag->n == 1 ? "it" : "they");
    else
      sb_printf(b, "%s seq %lld on comm %s failed on %s (%s) and launched nothing", op, (long long)m->failed_seq,
                hex, ranks_phrase(lag, p1, sizeof p1), res);
    return;
  }
}

/* "rank 3 issued AllReduce seq 3 on comm C during a CUDA graph capture, and
 * nothing shows that graph launched": the first lagging member not_run. */
void say_not_run(const fa_analysis *a, const fa_comm *c, const fa_ranks *lag, sbuf *b)
{
  char hex[200], p1[200], op[96];
  fa_comm_label(c, hex, sizeof hex);
  for (int32_t r = 0; r < c->size; r++) {
    const fa_member *m = &c->members[r];
    if (m->state != FA_MEMBER_LAGGING || !m->not_run) continue;
    op_phrase(a, c, (uint64_t)m->not_run_seq, op, sizeof op);
    sb_printf(b, "%s issued %s on comm %s during a CUDA graph capture, and nothing shows that graph launched",
              ranks_phrase(lag, p1, sizeof p1), op, hex);
    if ((uint64_t)m->not_run_seq < c->stuck_seq)
      sb_printf(b, " (%s later calls met the others' one seq early)", lag->n == 1 ? "its" : "their");
    return;
  }
}

/* "; rank 1 had exited (its last dump was written at exit)" when ranks of r
 * wrote their latest dump on the way out. */
int say_exited(const fa_analysis *a, const fa_ranks *r, sbuf *b)
{
  fa_ranks ex = {NULL, 0};
  uint32_t cap = 0;
  char p[200];
  for (uint32_t i = 0; i < r->n; i++) {
    int32_t k = fa_find_rank(a, r->v[i]);
    if (k >= 0 && fa_rank_latest(a, &a->ranks[k])->dump.process.trigger == FRZ_TRIGGER_EXIT &&
        fa_ranks_push(&ex, &cap, r->v[i]))
      return -1;
  }
  if (ex.n)
    sb_printf(b, "; %s had exited (%s last dump was written at exit)",
              ranks_phrase(&ex, p, sizeof p), ex.n == 1 ? "its" : "their");
  fa_ranks_free(&ex);
  return 0;
}

/* "; NCCL had reported an async error to rank 9 on comm X": the first
 * comm of each rank of r whose latest dump has ASYNC_ERROR (the answer of
 * ncclCommGetAsyncError, which a watchdog acts on by tearing down). */
void say_async_errors(const fa_analysis *a, const fa_ranks *r, sbuf *b)
{
  char hex[200];
  for (uint32_t i = 0; i < r->n; i++) {
    int32_t k = fa_find_rank(a, r->v[i]);
    if (k < 0) continue;
    const frz_dump *d = &fa_rank_latest(a, &a->ranks[k])->dump;
    for (uint32_t m = 0; m < d->ncomms; m++) {
      if (!(d->comms[m].flags & FRZ_CF_ASYNC_ERROR)) continue;
      int32_t ci = fa_find_comm(a, d->comms[m].comm_id);
      if (ci < 0) continue;
      fa_comm_label(&a->comms[ci], hex, sizeof hex);
      sb_printf(b, "; NCCL had reported an async error to rank %d on comm %s", r->v[i], hex);
      break;
    }
  }
}

/* "; link 3->4 channel 1 stopped (SendPeerWait for 2.0 s)": the links of
 * the stuck op that proxy progress shows stopped (the first few). */
void say_stopped_links(const fa_comm *c, sbuf *b)
{
  uint32_t n = 0;
  for (uint32_t i = 0; i < c->nlinks; i++) {
    const fa_link *l = &c->links[i];
    if (!l->evidence) continue;
    if (n == 3) {
      sb_printf(b, " and more");
      break;
    }
    char ends[64];
    sb_printf(b, "%s %s channel %d", n ? "," : "; link", fa_link_ends(l, "->", ends, sizeof ends), l->channel);
    if (l->state) sb_printf(b, " stopped in %s", frz_proxy_state_name(l->state));
    if (l->stalled_ns) sb_printf(b, " for %.1f s", (double)l->stalled_ns / 1e9);
    n++;
  }
  if (n || !c->has_proxy) return;
  /* no sender stopped: the links where receivers wait for data, which say
   * where the data stopped coming (a chain's first one is nearest the stop) */
  for (uint32_t i = 0; i < c->nlinks; i++) {
    const fa_link *l = &c->links[i];
    if (l->p2p || !l->state) continue;
    if (n == 3) {
      sb_printf(b, " and more");
      break;
    }
    char ends[64];
    sb_printf(b, "%s %s channel %d in %s", n ? "," : "; no sender stopped, receivers wait on link",
              fa_link_ends(l, "->", ends, sizeof ends), l->channel, frz_proxy_state_name(l->state));
    if (l->stalled_ns) sb_printf(b, " for %.1f s", (double)l->stalled_ns / 1e9);
    n++;
  }
  if (!n) sb_printf(b, "; no link's proxy progress shows it stopped");
}


/* The input problem of a file that by its name is a dump of global rank g
 * (the recorder's "-rNNNNN-f" part: a truncated or corrupt dump of that
 * rank), or NULL. */
const fa_problem *unread_dump(const fa_analysis *a, int32_t g)
{
  char tag[24];
  snprintf(tag, sizeof tag, "-r%05d-f", g);
  for (uint32_t i = 0; i < a->nproblems; i++) {
    const char *f = a->problems[i].file;
    if (!f) continue;
    const char *base = strrchr(f, '/');
    if (strstr(base ? base + 1 : f, tag)) return &a->problems[i];
  }
  return NULL;
}

/* The rank awaited, g, has no readable dump: where g is a member of another
 * stuck comm whose readable members other than its laggards all wait
 * there, g may wait there too, for those laggards: "; if rank 3 waits in
 * AllReduce seq 3 on comm C like ranks 0,2, rank 1, which never entered
 * it, is the cause instead" (the dumps cannot tell the two apart). */
void say_unread_alternative(const fa_analysis *a, int32_t g, const fa_comm *own, sbuf *b)
{
  for (uint32_t ci = 0; ci < a->ncomms; ci++) {
    const fa_comm *c = &a->comms[ci];
    if (c == own || !c->stuck || !c->nlagging || !c->nwaiting) continue;
    int member = 0;
    for (int32_t r = 0; r < c->size && !member; r++)
      member = c->members[r].global_rank == g && c->members[r].state == FA_MEMBER_NO_DUMP;
    if (!member) continue;
    fa_ranks lag = {NULL, 0}, w = {NULL, 0};
    if (fa_comm_ranks(c, FA_MEMBER_LAGGING, &lag) || fa_comm_ranks(c, FA_MEMBER_WAITING, &w)) {
      fa_ranks_free(&lag);
      b->oom = 1;
      return;
    }
    char op[160], hex[17], p1[200], p2[200];
    op_phrase(a, c, c->stuck_seq, op, sizeof op);
    if (lag.n && w.n && !has_rank(&lag, g))
      sb_printf(b, "; if rank %d waits in %s on comm %s like %s, %s, which never entered it, %s the cause "
                "instead (the dumps cannot tell)", g, op, fa_hex(c->id, hex), ranks_phrase(&w, p1, sizeof p1),
                ranks_phrase(&lag, p2, sizeof p2), lag.n == 1 ? "is" : "are");
    fa_ranks_free(&lag);
    fa_ranks_free(&w);
    if (lag.n && w.n) return;
  }
}
