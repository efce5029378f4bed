/* analyze.c — the rules per communicator (last completed op, stuck op, the
 * roles of its members, inferred missing links) and the analysis driver. */
#include "config.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* ---- accessors ------------------------------------------------------------- */

const fa_frame *fa_rank_latest(const fa_analysis *a, const fa_rank *r)
{
  return &a->frames[r->first_frame + r->nframes - 1];
}

const fa_frame *fa_member_frame(const fa_analysis *a, const fa_member *m)
{
  return m->frame >= 0 ? &a->frames[m->frame] : NULL;
}

const frz_comm *fa_member_comm(const fa_analysis *a, const fa_member *m)
{
  return m->frame >= 0 ? &a->frames[m->frame].dump.comms[m->entry] : NULL;
}

const frz_record *fa_frame_record(const fa_frame *f, uint32_t entry, uint64_t seq)
{
  if (entry >= f->dump.ncomms) return NULL;
  const fa_slice *sl = &f->coll[entry];
  const uint32_t *ix = f->idx + sl->start;
  if (!sl->len) return NULL;
  /* retained seqs are usually consecutive: try seq's place from the first
   * one (the lowest record of that seq), else search */
  uint64_t first = f->dump.records[ix[0]].seq;
  if (seq >= first && seq - first < sl->len) {
    uint32_t k = (uint32_t)(seq - first);
    if (f->dump.records[ix[k]].seq == seq && (k == 0 || f->dump.records[ix[k - 1]].seq != seq))
      return &f->dump.records[ix[k]];
  }
  uint32_t lo = 0, hi = sl->len;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (f->dump.records[ix[mid]].seq < seq) lo = mid + 1;
    else hi = mid;
  }
  return lo < sl->len && f->dump.records[ix[lo]].seq == seq ? &f->dump.records[ix[lo]] : NULL;
}

const frz_record *fa_member_record(const fa_analysis *a, const fa_member *m, uint64_t seq)
{
  return m->frame >= 0 ? fa_frame_record(&a->frames[m->frame], (uint32_t)m->entry, seq) : NULL;
}

const frz_record *fa_comm_record_in(const fa_analysis *a, const fa_comm *c, uint64_t seq,
                                    const frz_dump **d)
{
  const frz_record *any = NULL;
  const frz_dump *anyd = NULL;
  for (int32_t r = 0; r < c->size; r++) {
    const fa_member *m = &c->members[r];
    if (m->rank < 0) continue;
    const frz_record *rec = fa_member_record(a, m, seq);
    if (!rec) continue;
    if (m->state == FA_MEMBER_WAITING || m->state == FA_MEMBER_AHEAD ||
        m->state == FA_MEMBER_UNFINISHED) {
      if (d) *d = &a->frames[m->frame].dump;
      return rec;
    }
    if (!any) {
      any = rec;
      anyd = &a->frames[m->frame].dump;
    }
  }
  if (d) *d = anyd;
  return any;
}

const frz_record *fa_comm_record(const fa_analysis *a, const fa_comm *c, uint64_t seq)
{
  return fa_comm_record_in(a, c, seq, NULL);
}

const char *fa_record_op_name(const frz_dump *d, const frz_record *r)
{
  if (d && d->pt && r >= d->records && r < d->records + d->nrecords) {
    uint32_t k = d->pt->records[r - d->records].name;
    if (k < d->pt->nnames) return d->pt->names[k];
  }
  return frz_op_name(r->op);
}

int64_t fa_shown_completed(const fa_comm *c)
{
  return c->pt && c->last_completed == 0 ? -1 : c->last_completed;
}

char *fa_comm_label(const fa_comm *c, char *buf, size_t len)
{
  char hex[17], desc[FRZ_PT_NAME_MAX], name[FRZ_PT_NAME_MAX], rs[96];
  fa_hex(c->id, hex);
  if (!c->pt) {
    snprintf(buf, len, "%s", hex);
    return buf;
  }
  int32_t *g = malloc((size_t)(c->size > 0 ? c->size : 1) * sizeof *g);
  uint32_t n = 0;
  for (int32_t r = 0; g && r < c->size; r++)
    if (c->members[r].global_rank >= 0) g[n++] = c->members[r].global_rank;
  fa_ranks set = {g, n};
  fa_ranks_sort(&set);
  rs[0] = '\0';
  if (n) fa_format_ranks(set.v, set.n, rs, sizeof rs);
  free(g);
  fa_pt_desc(c, desc, sizeof desc);
  fa_sanitize(c->pt->name, name, sizeof name);
  snprintf(buf, len, "%s (%s%spg %s%s%s%s)", hex, desc, desc[0] ? ", " : "", name,
           rs[0] ? ", rank" : "", rs[0] && set.n != 1 ? "s " : (rs[0] ? " " : ""), rs);
  return buf;
}

void fa_pt_desc(const fa_comm *c, char *buf, size_t len)
{
  fa_sanitize(c->pt->desc, buf, len);
  if (!strcmp(buf, "undefined")) buf[0] = '\0';
}

int32_t fa_find_comm(const fa_analysis *a, uint64_t id)
{
  uint32_t lo = 0, hi = a->ncomms;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (a->comms[mid].id < id) lo = mid + 1;
    else hi = mid;
  }
  return lo < a->ncomms && a->comms[lo].id == id ? (int32_t)lo : -1;
}

int32_t fa_find_rank(const fa_analysis *a, int32_t g)
{
  uint32_t lo = 0, hi = a->nranks;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (a->ranks[mid].global_rank < g) lo = mid + 1;
    else hi = mid;
  }
  return lo < a->nranks && a->ranks[lo].global_rank == g ? (int32_t)lo : -1;
}

int fa_comm_ranks(const fa_comm *c, fa_member_state s, fa_ranks *out)
{
  uint32_t cap = 0;
  out->v = NULL;
  out->n = 0;
  for (int32_t r = 0; r < c->size; r++)
    if (c->members[r].state == s && c->members[r].global_rank >= 0 &&
        fa_ranks_push(out, &cap, c->members[r].global_rank))
      return -1;
  fa_ranks_sort(out);
  return 0;
}

/* Has member m not joined the stuck op of c? */
static int not_joined(const fa_comm *c, const fa_member *m)
{
  return c->stuck && !m->counters_unknown && (m->state == FA_MEMBER_LAGGING || m->state == FA_MEMBER_NO_DUMP ||
                      m->state == FA_MEMBER_IDLE);
}

int fa_comm_missing(const fa_comm *c, fa_ranks *out)
{
  uint32_t cap = 0;
  out->v = NULL;
  out->n = 0;
  for (int32_t r = 0; r < c->size; r++)
    if (not_joined(c, &c->members[r]) && c->members[r].global_rank >= 0 &&
        fa_ranks_push(out, &cap, c->members[r].global_rank))
      return -1;
  fa_ranks_sort(out);
  return 0;
}

int fa_exit_status(const fa_analysis *a)
{
  switch (a->verdict.status) {
  case FA_STATUS_HEALTHY: return 0;
  case FA_STATUS_INCONCLUSIVE: return 2;
  default: return 1;
  }
}

/* ---- the collective rules of one comm ----------------------------------------- */

/* Completion as the rules use it.  Members that did not track completion
 * (no CUDA driver, tracking off) are assumed to have completed what a
 * tracking member completed; in a comm where nobody tracked, what every
 * member enqueued. */
static void effective_completion(fa_comm *c)
{
  int64_t best_tracked = -2, min_enq = INT64_MAX;
  for (int32_t r = 0; r < c->size; r++) {
    const fa_member *m = &c->members[r];
    if (m->rank < 0 || m->counters_unknown) continue;
    if (m->tracked && m->last_completed > best_tracked) best_tracked = m->last_completed;
    if (m->last_enqueued < min_enq) min_enq = m->last_enqueued;
  }
  c->tracked = best_tracked > -2;
  for (int32_t r = 0; r < c->size; r++) {
    const fa_member *m = &c->members[r];
    if (m->rank >= 0 && m->tracked && m->unknown_from >= 0 &&
        (c->unknown_from < 0 || m->unknown_from < c->unknown_from))
      c->unknown_from = m->unknown_from;
  }
  int64_t assumed = c->tracked ? best_tracked : min_enq;
  for (int32_t r = 0; r < c->size; r++) {
    fa_member *m = &c->members[r];
    if (m->rank < 0 || m->tracked || m->counters_unknown) continue;
    m->last_completed = m->last_enqueued < assumed ? m->last_enqueued : assumed;
  }
}

/* A time of dump d on the wall clock (PyTorch's times already are). */
static int64_t wall(const frz_dump *d, uint64_t t)
{
  return (int64_t)t - (int64_t)d->process.anchor_monotonic_ns + (int64_t)d->process.anchor_realtime_ns;
}

/* Members of a PyTorch dump whose counters of the comm are unknown, when
 * the comm is stuck: one that retains no entry of the comm has not
 * enqueued the stuck op when its dump would show it (it holds no entry at
 * all, or only active ones, or its oldest entry is older than the stuck
 * op's first enqueue): lagging.  The others stay unknown (never blamed). */
static void unknown_members(fa_analysis *a, fa_comm *c)
{
  if (!c->stuck) return;
  uint64_t first_enq = UINT64_MAX;
  for (int32_t r = 0; r < c->size; r++) {
    const fa_member *m = &c->members[r];
    const frz_record *rec = m->rank >= 0 && !m->counters_unknown ? fa_member_record(a, m, c->stuck_seq) : NULL;
    if (rec && rec->t_enqueue_ns) {
      uint64_t t = (uint64_t)wall(&a->frames[m->frame].dump, rec->t_enqueue_ns);
      if (t < first_enq) first_enq = t;
    }
  }
  for (int32_t r = 0; r < c->size; r++) {
    fa_member *m = &c->members[r];
    if (m->rank < 0 || !m->counters_unknown) continue;
    const fa_frame *f = &a->frames[m->frame];
    const frz_dump *d = &f->dump;
    if (!d->pt || !d->pt->has_entries || f->coll[m->entry].len || f->p2p[m->entry].len) {
      c->nunknown++;
      continue;
    }
    uint64_t oldest = UINT64_MAX, done = 0;
    for (uint64_t i = 0; i < d->nrecords; i++) {
      if (d->records[i].state == FRZ_STATE_COMPLETED) done++;
      if (d->records[i].t_enqueue_ns && (uint64_t)wall(d, d->records[i].t_enqueue_ns) < oldest)
        oldest = (uint64_t)wall(d, d->records[i].t_enqueue_ns);
    }
    if (d->nrecords && done && !(first_enq != UINT64_MAX && oldest <= first_enq)) {
      c->nunknown++;
      continue;
    }
    m->state = FA_MEMBER_LAGGING;
    m->counters_unknown = 0;
    m->last_enqueued = m->last_completed = -1;
    c->nlagging++;
  }
}

/* Is member m's record `at` (of comm `id`) queued on its stream behind an
 * op of another comm, or a p2p op of this one, that did not finish?  Ops of one CUDA stream run in
 * order: one enqueued behind an unfinished op has not started (its start
 * event did not pass) and waits for that op, not for its own peers.  The
 * walk goes back from `at` over the same stream and stops at the first op
 * that completed (everything before it did too). */
static int behind_on_stream(const fa_analysis *a, const fa_member *m, const frz_record *at, uint64_t id)
{
  return fa_replay_behind(a, &a->frames[m->frame].dump, at, id) || fa_rec_behind(&a->frames[m->frame].dump, at, id);
}

int fa_rec_behind(const frz_dump *d, const frz_record *at, uint64_t id)
{
  if (!at || at->state != FRZ_STATE_ENQUEUED || !at->stream || (at->flags & FRZ_RF_NO_TRACKING))
    return 0;
  for (uint64_t i = (uint64_t)(at - d->records); i-- > 0;) {
    const frz_record *r = &d->records[i];
    if (r->stream != at->stream || (r->kind != FRZ_KIND_COLL && r->kind != FRZ_KIND_P2P)) continue;
    if (r->state == FRZ_STATE_COMPLETED || r->state == FRZ_STATE_FAILED) return 0;
    if (r->comm_id != id && !(r->flags & FRZ_RF_NO_TRACKING)) return 1;
    /* a p2p op of the same comm, launched before it (not in its group),
     * runs before it too: the collective waits for that p2p op's peers */
    if (r->comm_id == id && (r->kind == FRZ_KIND_P2P || at->kind == FRZ_KIND_P2P) &&
        !(r->flags & FRZ_RF_NO_TRACKING) && !(r->group_id && r->group_id == at->group_id))
      return 1;
  }
  return 0;
}

/* A minority of members past a point where every other member (all with
 * dumps) is idle and done with the comm is ahead (there, or queued there
 * on its stream behind its own p2p ops or another comm's), and the others
 * are not lagging: the majority ended where the job's loop ends, the
 * minority ran on (one rank alone, or several: a step count that differs
 * by rank).  Half or more past (counting members without a dump, which may
 * be) is not told apart from the others having ended early. */
static int past_there(const fa_analysis *a, const fa_comm *c, const fa_member *m)
{
  return m->state == FA_MEMBER_WAITING || m->state == FA_MEMBER_PASSED ||
         (m->state == FA_MEMBER_LAGGING && (m->behind || fa_p2p_past_end(a, c, m)));
}

/* Has member m records of its comm issued in a group whose ncclGroupEnd
 * never came (FRZ_RF_GROUP_OPEN)?  Those never ran, a teardown among them
 * too: it did not end its work, its calls are held in the open group. */
static int group_left_open(const fa_analysis *a, const fa_member *m)
{
  const fa_frame *f = &a->frames[m->frame];
  const fa_slice *sl = &f->coll[m->entry];
  for (uint32_t k = 0; k < sl->len; k++)
    if (f->dump.records[f->idx[sl->start + k]].flags & FRZ_RF_GROUP_OPEN) return 1;
  return 0;
}

/* Has member m's process a p2p op of this comm, or an op of another comm,
 * pending (posted, tracked, not done)?  Then it is not done with its work,
 * whatever this comm's collectives say. */
static int rank_pending(const fa_analysis *a, const fa_comm *c, const fa_member *m)
{
  const frz_dump *d = &a->frames[m->frame].dump;
  for (uint64_t i = 0; i < d->nrecords; i++) {
    const frz_record *x = &d->records[i];
    if ((x->kind != FRZ_KIND_COLL && x->kind != FRZ_KIND_P2P) || (x->comm_id == c->id && x->kind == FRZ_KIND_COLL))
      continue;
    if (x->state != FRZ_STATE_COMPLETED && x->state != FRZ_STATE_FAILED &&
        !(x->flags & (FRZ_RF_NO_TRACKING | FRZ_RF_GROUP_OPEN | FRZ_RF_SIMULATED)))
      return 1;
  }
  return 0;
}

static void find_ahead(const fa_analysis *a, fa_comm *c)
{
  if (c->size < 3) return;
  uint32_t past = 0, unseen = 0, pt = 0; /* (members without a dump may be past too) */
  for (int32_t r = 0; r < c->size; r++) {
    const fa_member *m = &c->members[r];
    if (m->rank < 0 && m->absent && fa_rank_done(a, fa_find_rank(a, m->global_rank))) continue;
    if (fa_ended_cleanly(a, c, m)) continue; /* (its work ended: done) */
    if (m->rank < 0) unseen++; /* (an absent rank whose work ended above is done: idle) */
    else if (m->counters_unknown) return;
    else if (past_there(a, c, m)) past++;
    /* (a member waiting in a p2p op, or in another comm, is not done with
     * its work: a rank whose sends went through, gone on to the next
     * collective, is no rank ahead; PyTorch's batch_isend_irecv and
     * pipelines, p19 and p26b of a break-it pass) */
    else if (m->last_completed != m->last_enqueued || !fa_member_done(a, m) || rank_pending(a, c, m) ||
             group_left_open(a, m) || /* (its calls held in a group never ended did not run: not done) */
             m->failed_seq >= 0) /* (its own call there failed: a fault, not the end of its work) */
      return;
    else pt += a->frames[m->frame].dump.pt != NULL;
  }
  if (!past || 2 * (past + unseen) >= (uint32_t)c->size) return;
  /* not where another comm of the split shows the work going on past the
   * seq where the others tore this one down (they ended early: left_or_gone;
   * asked of the first that tore it down: every comm is looked at, once) */
  for (int32_t r = 0; r < c->size; r++) {
    const fa_member *m = &c->members[r];
    const frz_record *e = m->rank >= 0 && m->state == FA_MEMBER_IDLE && m->last_enqueued >= 1
                              ? fa_member_record(a, m, (uint64_t)m->last_enqueued) : NULL;
    if (!e || !fa_is_teardown(e->op)) continue;
    if (fa_sibling_end(a, c, m, m->last_enqueued, 0) > m->last_enqueued) return;
    break;
  }
  /* a PyTorch dump is only taken as done (it does not say): one member
   * alone past the others, not several (they may be a side of its own) */
  if (pt && past + unseen > 1) return;
  for (int32_t r = 0; r < c->size; r++)
    if (c->members[r].rank >= 0)
      c->members[r].state = past_there(a, c, &c->members[r]) ? FA_MEMBER_AHEAD : FA_MEMBER_IDLE;
    else if (c->members[r].absent || fa_ended_cleanly(a, c, &c->members[r]))
      c->members[r].state = FA_MEMBER_IDLE; /* it ended its work (without creating the comm) */
  c->nwaiting = c->npassed = c->nlagging = 0;
  c->nahead = past;
}

int fa_waited_to_end(const frz_dump *d, const frz_record *r)
{
  uint32_t t = d->process.trigger;
  if (d->pt || !fa_trigger_ended(t)) return 0;
  if ((r->kind != FRZ_KIND_COLL && r->kind != FRZ_KIND_P2P) || (r->flags & FRZ_RF_NO_TRACKING)) return 0;
  if (r->state != FRZ_STATE_ENQUEUED && r->state != FRZ_STATE_STARTED) return 0;
  return r->t_enqueue_ns && d->process.frame_time_ns >= r->t_enqueue_ns &&
         d->process.frame_time_ns - r->t_enqueue_ns >= FA_GAVE_UP_NS;
}

int fa_ended_waiting(const frz_dump *d)
{
  uint32_t t = d->process.trigger;
  if (d->pt || !fa_trigger_ended(t)) return 0; /* (most dumps: no walk) */
  for (uint64_t i = 0; i < d->nrecords; i++)
    if (fa_waited_to_end(d, &d->records[i])) return 1;
  return 0;
}

/* A teardown that answered a hang: dump d holds a record (of comm `id`, or
 * of any comm when id is 0) that was in flight when its comm was aborted
 * (flag ABORTED), or destroyed or finalized while it never completed
 * (those wait for it, in vain), and had waited FA_GAVE_UP_NS or more when
 * the run of teardowns holding that one began.  A teardown right behind its ops (a shutdown), or one whose ops then
 * completed, is no answer to anything. */
int fa_gave_up(const frz_dump *d, uint64_t id)
{
  /* over the teardowns (few), each against the records before it */
  for (uint64_t k = 0; k < d->nrecords; k++) {
    const frz_record *x = &d->records[k];
    if (x->op != FRZ_OP_CommAbort && x->op != FRZ_OP_CommDestroy && x->op != FRZ_OP_CommFinalize) continue;
    if (id && x->comm_id != id) continue;
    uint64_t t0 = fa_teardown_run_start(d, k); /* waits count up to the reaction's start */
    for (uint64_t i = 0; i < k; i++) {
      const frz_record *r = &d->records[i];
      if (r->comm_id != x->comm_id || t0 < r->t_enqueue_ns || t0 - r->t_enqueue_ns < FA_GAVE_UP_NS)
        continue;
      int aborted = (r->flags & FRZ_RF_ABORTED) != 0;
      int stuck = (r->kind == FRZ_KIND_COLL || r->kind == FRZ_KIND_P2P) && !(r->flags & FRZ_RF_NO_TRACKING) &&
                  (r->state == FRZ_STATE_ENQUEUED || r->state == FRZ_STATE_STARTED);
      if (aborted ? x->op == FRZ_OP_CommAbort : stuck) return 1;
    }
  }
  return 0;
}

/* With members waiting in the stuck op (and none ahead), a member that tore
 * the comm down at that seq, or aborted or destroyed it before, left it
 * (waits for it end there, whatever it waits for elsewhere), and one whose
 * process ended (its last
 * dump written at exit or on a fatal signal) with the op in flight is gone:
 * their part of the op never comes, so they are lagging (the cause), not
 * idle or waiting.  So is a member waiting in the op that aborted the comm
 * with it in flight without having waited for anything (it did not give
 * up). */
/* Did idle member m tear comm c down at its stuck seq? */
static int torn_at_stuck(const fa_analysis *a, const fa_comm *c, const fa_member *m)
{
  const frz_record *at = m->state == FA_MEMBER_IDLE ? fa_member_record(a, m, c->stuck_seq) : NULL;
  return at && fa_is_teardown(at->op) && !(at->flags & FRZ_RF_GROUP_OPEN) && m->last_enqueued >= (int64_t)c->stuck_seq;
}

/* Did lagging member m abort or destroy comm c (unsequenced, before the
 * stuck seq) without having waited for anything, and with no async error
 * NCCL reported on it: an end of its work, early or not? */
static int torn_before(const fa_analysis *a, const fa_member *m)
{
  const frz_comm *fc = fa_member_comm(a, m);
  return m->state == FA_MEMBER_LAGGING && !m->behind && fc && (fc->flags & (FRZ_CF_ABORTED | FRZ_CF_DESTROYED)) &&
         !(fc->flags & FRZ_CF_ASYNC_ERROR) && !fa_gave_up(&a->frames[m->frame].dump, 0) && !group_left_open(a, m);
}

static void left_or_gone(const fa_analysis *a, fa_comm *c)
{
  if (!c->stuck || c->nahead || !(c->nwaiting + c->npassed)) return;
  /* those that tore it down at the stuck seq, or before it without having
   * waited, left it only as a minority, counting every member without a
   * dump as one of them: else the others may as well have run past the
   * end of their work (find_ahead, which counts the same members on the
   * other side, found no minority there either).  In a comm of two, where
   * find_ahead never finds anyone ahead, the one that tore it down left
   * it. */
  uint32_t torn = 0;
  int ends_there = 0; /* a comm of the same split ended where they tore this one down */
  for (int32_t r = 0; r < c->size; r++) {
    const fa_member *m = &c->members[r];
    if (m->rank < 0 || m->counters_unknown) continue;
    if (torn_at_stuck(a, c, m))
      torn++, ends_there |= fa_sibling_end(a, c, m, (int64_t)c->stuck_seq, 1) == (int64_t)c->stuck_seq;
    else if (torn_before(a, m))
      torn++, ends_there |= fa_sibling_end(a, c, m, m->last_enqueued, 1) == m->last_enqueued;
  }
  int minority = !ends_there && (c->size < 3 || 2 * (torn + (uint32_t)c->size - c->npresent) < (uint32_t)c->size);
  for (int32_t r = 0; r < c->size; r++) {
    fa_member *m = &c->members[r];
    if (m->rank < 0 || m->counters_unknown) continue;
    const frz_record *at = fa_member_record(a, m, c->stuck_seq);
    uint32_t trig = a->frames[m->frame].dump.process.trigger;
    const frz_comm *fc = fa_member_comm(a, m);
    if (torn_at_stuck(a, c, m) && !minority) {
      m->shut = 1; /* it ended its work there, or early: not told */
      c->end_unclear = 1;
    } else if (torn_before(a, m) && !minority) {
      m->state = FA_MEMBER_IDLE; /* the same, before the stuck seq */
      m->shut = 1;
      c->nlagging--;
      c->end_unclear = 1;
    } else if (torn_at_stuck(a, c, m)) {
      m->state = FA_MEMBER_LAGGING;
      m->left = 1;
      c->nlagging++;
    } else if (m->state == FA_MEMBER_LAGGING && fc && (fc->flags & (FRZ_CF_ABORTED | FRZ_CF_DESTROYED)) &&
               !fa_gave_up(&a->frames[m->frame].dump, 0) && !group_left_open(a, m)) {
      m->left = 1; /* it aborted or destroyed the comm (unsequenced), not in answer to a wait of its
                      own: it never comes */
    } else if (m->state == FA_MEMBER_WAITING && fc && (fc->flags & FRZ_CF_ASYNC_ERROR) && c->nwaiting > 1) {
      m->state = FA_MEMBER_UNFINISHED; /* NCCL reported an error on its comm: its own side broke */
      m->async_error = 1;
      c->nasync_error++;
      c->nwaiting--;
      c->nunfinished++;
    } else if (m->state == FA_MEMBER_WAITING && at && (at->flags & FRZ_RF_ABORTED) &&
               c->nwaiting + c->npassed > 1 && !fa_gave_up(&a->frames[m->frame].dump, 0)) {
      /* it aborted the comm with its op there in flight, not after waiting
       * for anything: its part never comes (whatever its record's state
       * said when the abort cut it off) */
      m->state = FA_MEMBER_LAGGING;
      m->left = 1;
      c->nwaiting--;
      c->nlagging++;
    } else if (m->state == FA_MEMBER_WAITING && fa_trigger_ended(trig) &&
               c->nwaiting + c->npassed > 1 && !(fc && (fc->flags & FRZ_CF_ABORTED)) &&
               !(at && fa_waited_to_end(&a->frames[m->frame].dump, at))) {
      /* (one that aborted the comm waited, then gave up: still a waiter) */
      m->state = FA_MEMBER_LAGGING;
      m->gone = 1;
      c->nwaiting--;
      c->nlagging++;
    }
  }
}

/* Every member with a dump aborted the comm: what was in flight then was
 * abandoned by all alike (a job's shutdown, or each rank giving up at the
 * same point): nobody waits for anybody there. */
static void all_aborted(const fa_analysis *a, fa_comm *c)
{
  for (int32_t r = 0; r < c->size; r++) {
    const fa_member *m = &c->members[r];
    const frz_comm *fc = m->rank >= 0 ? fa_member_comm(a, m) : NULL;
    if (m->rank >= 0 && !(fc && (fc->flags & FRZ_CF_ABORTED))) return;
    if (fc && (fc->flags & FRZ_CF_ASYNC_ERROR)) return; /* an error made them give up */
    if (m->rank >= 0 && fa_gave_up(&a->frames[m->frame].dump, c->id)) return; /* they waited, then gave up */
  }
  for (int32_t r = 0; r < c->size; r++)
    if (c->members[r].rank >= 0) c->members[r].last_completed = c->members[r].last_enqueued;
}

int fa_align_comm(fa_analysis *a, fa_comm *c)
{
  if (!c->npresent) return 0;
  effective_completion(c);
  all_aborted(a, c);
  fa_joined_by_all(a, c);
  int64_t lo = INT64_MAX, hi = -1, last = INT64_MAX;
  for (int32_t r = 0; r < c->size; r++) {
    const fa_member *m = &c->members[r];
    if (m->rank < 0 || m->counters_unknown) continue;
    if (m->first_retained < lo && m->first_retained <= m->last_enqueued) lo = m->first_retained;
    if (m->last_enqueued > hi) hi = m->last_enqueued;
    if (m->last_completed < last) last = m->last_completed;
  }
  if (last == INT64_MAX) last = -1; /* every member's counters unknown */
  c->seq_lo = lo == INT64_MAX ? -1 : lo;
  c->seq_hi = hi;
  c->last_completed = last;
  c->stuck = hi > last;
  c->stuck_seq = (uint64_t)(last + 1);
  c->nno_dump = (uint32_t)c->size - c->npresent;
  if (!c->stuck) return 0;
  int64_t s = last + 1;
  for (int32_t r = 0; r < c->size; r++) {
    fa_member *m = &c->members[r];
    if (m->absent) { /* never called the creation: seq 0 not reached */
      m->state = FA_MEMBER_LAGGING;
      c->nlagging++;
      c->nno_dump--;
      continue;
    }
    if (m->rank < 0 || m->counters_unknown) continue;
    const frz_record *at = fa_member_record(a, m, (uint64_t)s);
    if (m->last_enqueued < s) {
      m->state = FA_MEMBER_LAGGING;
      c->nlagging++;
    } else if (m->last_completed >= s && at && fa_is_teardown(at->op)) {
      m->state = FA_MEMBER_IDLE; /* it left the comm: not part of the stuck op */
    } else if (m->last_completed >= s) {
      m->state = FA_MEMBER_PASSED;
      c->npassed++;
    } else if (behind_on_stream(a, m, at, c->id)) {
      m->state = FA_MEMBER_LAGGING; /* it never reached the op: its stream did not */
      m->behind = 1;
      c->nlagging++;
    } else {
      m->state = FA_MEMBER_WAITING;
      c->nwaiting++;
    }
  }
  find_ahead(a, c);
  left_or_gone(a, c);
  unknown_members(a, c);
  return 0;
}

int fa_add_link(fa_comm *c, uint32_t *cap, const fa_link *l)
{
  if (fa_grow(&c->links, cap, c->nlinks + 1, sizeof *c->links)) return -1;
  c->links[c->nlinks++] = *l;
  return 0;
}

int32_t fa_member_node(const fa_analysis *a, const fa_member *m)
{
  if (m->rank >= 0) return m->rank;
  return m->absent ? fa_find_rank(a, m->global_rank) : -1;
}

int fa_unfinished_waits(const fa_comm *c, const fa_member *m)
{
  return m->state == FA_MEMBER_UNFINISHED && c->nasync_error && !m->async_error;
}

int fa_member_blamed(const fa_comm *c, const fa_member *m)
{
  if (c->end_unclear) return 0; /* who ended early is not told */
  if (c->nlagging) return m->state == FA_MEMBER_LAGGING;
  /* (members whose comm reported an async error broke the op for the
   * others, whose parts then never finish either: those are the cause) */
  if (c->nunfinished) return m->state == FA_MEMBER_UNFINISHED && (!c->nasync_error || m->async_error);
  return m->state == FA_MEMBER_NO_DUMP;
}

/* Has proxy progress already named the link src -> dst (comm ranks)? */
static int exact_link(const fa_comm *c, int32_t src, int32_t dst)
{
  for (uint32_t i = 0; i < c->nlinks; i++)
    if (c->links[i].evidence && c->links[i].src_comm_rank == src && c->links[i].dst_comm_rank == dst)
      return 1;
  return 0;
}

#define FA_PAIR_LINKS_MAX 4096 /* inferred all-to-all links of one comm at most */

/* Add the inferred link src -> dst (comm ranks) of the stuck op, unless
 * proxy progress already named it (looked for only when the comm has such
 * links: evidence). */
static int infer_link(fa_comm *c, uint32_t *cap, int32_t idx, int32_t src, int32_t dst, int evidence)
{
  if (evidence && exact_link(c, src, dst)) return 0;
  fa_link k;
  memset(&k, 0, sizeof k);
  k.comm = idx;
  k.channel = -1;
  k.inferred = 1;
  k.seq = c->stuck_seq;
  k.src_comm_rank = src;
  k.dst_comm_rank = dst;
  k.src = c->members[src].global_rank;
  k.dst = c->members[dst].global_rank;
  return fa_add_link(c, cap, &k);
}

int fa_ring_links(fa_analysis *a, fa_comm *c)
{
  int32_t idx = (int32_t)(c - a->comms);
  /* a comm that never formed has no links yet */
  if (!c->stuck || c->nahead || c->size < 2 || !c->nwaiting || c->unformed) return 0;
  uint32_t cap = c->nlinks;
  int32_t n = c->size;
  /* an all-to-all moves data between every pair, not around a ring: every
   * waiting member's link to and from the blamed one is inferred */
  const frz_dump *sd;
  const frz_record *at = fa_comm_record_in(a, c, c->stuck_seq, &sd);
  int all_pairs = at && at->op == FRZ_OP_AlltoAll;
  /* (every pair, up to FA_PAIR_LINKS_MAX links; beyond, the ring's edges:
   * many ranks missing from a wide all-to-all would list millions) */
  uint64_t nblamed = 0;
  for (int32_t l = 0; all_pairs && l < n; l++) nblamed += fa_member_blamed(c, &c->members[l]) != 0;
  if (all_pairs && 2 * nblamed * c->nwaiting > FA_PAIR_LINKS_MAX) all_pairs = 0;
  int evidence = 0;
  for (uint32_t i = 0; i < c->nlinks && !evidence; i++) evidence = c->links[i].evidence != 0;
  for (int32_t l = 0; l < n; l++) {
    if (!fa_member_blamed(c, &c->members[l])) continue;
    if (all_pairs) {
      for (int32_t w = 0; w < n; w++) {
        if (w == l || c->members[w].state != FA_MEMBER_WAITING) continue;
        if (infer_link(c, &cap, idx, w, l, evidence) || infer_link(c, &cap, idx, l, w, evidence)) return -1;
      }
      continue;
    }
    /* on a ring the predecessor sends to the blamed rank, which sends on */
    int32_t prev = (l + n - 1) % n, next = (l + 1) % n;
    if (c->members[prev].state == FA_MEMBER_WAITING && infer_link(c, &cap, idx, prev, l, evidence)) return -1;
    if (c->members[next].state == FA_MEMBER_WAITING && infer_link(c, &cap, idx, l, next, evidence)) return -1;
  }
  return 0;
}

/* ---- the driver ------------------------------------------------------------------ */

typedef struct run_ctx {
  fa_analysis *a;
  atomic_int failed;
} run_ctx;

/* The rules of comm i, in order (on a worker thread: they write only to
 * that comm and read the frames). */
static void comm_rules(void *ctx, uint32_t i)
{
  run_ctx *r = ctx;
  fa_comm *c = &r->a->comms[i];
  if (fa_align_comm(r->a, c) || fa_not_run(r->a, c) || fa_mismatch_comm(r->a, c) ||
      fa_unfinished(r->a, c) || fa_not_returned(r->a, c) || fa_not_started(r->a, c) ||
      fa_p2p_comm(r->a, c) ||
      fa_proxy_data_stopped(r->a, c) || fa_proxy_links(r->a, c) || fa_ring_links(r->a, c))
    atomic_store(&r->failed, 1);
}

/* Whether the verdict cannot rest on stragglers (fa_verdict_build): some
 * communicator has a mismatch, or one is stuck and not every rank
 * progressed between frames (which would make the stuck op merely slow). */
static int stuck_or_mismatch(const fa_analysis *a)
{
  for (uint32_t i = 0; i < a->ncomms; i++)
    if (a->comms[i].has_mismatch || (a->comms[i].stuck && !a->verdict.frames_progress)) return 1;
  return 0;
}

int fa_run(fa_analysis *a)
{
  if (a->ran) return 0;
  a->ran = 1;
  if (fa_settle_stale(a) || fa_model_build(a)) return -1;
  run_ctx rc = {a, 0};
  fa_parallel_for(a->ncomms, comm_rules, &rc);
  if (atomic_load(&rc.failed)) return -1;
  fa_config_minority(a);
  if (fa_frames_progress(a)) return -1;
  if ((!a->stragglers_if_needed || !stuck_or_mismatch(a)) && fa_stragglers(a)) return -1;
  if (fa_stacks_build(a)) return -1;
  return fa_verdict_build(a);
}
