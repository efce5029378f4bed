/* summary.c — the verdict's one-sentence summary, from the verdict the
 * rules built (verdict.c): who waits where for whom, in the user's words
 * (PyTorch's group desc and op names for its dumps). */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "summary.h"

/* ---- summary ------------------------------------------------------------------- */

/* The global ranks of a mismatch group's members. */
static int group_ranks(const fa_comm *c, const fa_group *g, fa_ranks *out)
{
  uint32_t cap = 0;
  out->v = NULL;
  out->n = 0;
  for (uint32_t i = 0; i < g->n; i++) {
    int32_t gr = fa_global_of(c, c->mismatch.members[g->first + i]);
    if (gr >= 0 && fa_ranks_push(out, &cap, gr)) return -1;
  }
  fa_ranks_sort(out);
  return 0;
}

/* "first mismatch at seq S on comm X (fields): ..." */
static int say_mismatch(const fa_analysis *a, sbuf *b)
{
  const fa_comm *c = &a->comms[a->verdict.mismatch_comm];
  const fa_mismatch *mm = &c->mismatch;
  char hex[200], fields[64], rp[200], sp[160];
  sb_printf(b, "first mismatch at seq %llu on comm %s (%s): ", (unsigned long long)mm->seq,
            fa_comm_label(c, hex, sizeof hex), fa_field_names(mm->fields, fields, sizeof fields));
  if (mm->culprit >= 0) {
    fa_ranks gr;
    const fa_group *g = &mm->groups[mm->culprit];
    if (group_ranks(c, g, &gr)) return -1;
    sb_printf(b, "%s %s %s while ", ranks_phrase(&gr, rp, sizeof rp), gr.n == 1 ? "calls" : "call",
              fa_sig_text_fields(&g->sig, mm->fields, sp, sizeof sp));
    fa_ranks_free(&gr);
    uint32_t shown = 0;
    for (uint32_t i = 0; i < mm->ngroups; i++) {
      if ((int32_t)i == mm->culprit) continue;
      if (shown == 3) {
        sb_printf(b, " and %u more groups", mm->ngroups - 1 - shown);
        break;
      }
      if (group_ranks(c, &mm->groups[i], &gr)) return -1;
      sb_printf(b, "%s%s %s %s", shown ? ", " : "", ranks_phrase(&gr, rp, sizeof rp),
                gr.n == 1 ? "calls" : "call", fa_sig_text_fields(&mm->groups[i].sig, mm->fields, sp, sizeof sp));
      fa_ranks_free(&gr);
      shown++;
    }
  } else {
    for (uint32_t i = 0; i < mm->ngroups; i++) {
      if (i == 4) {
        sb_printf(b, ", and %u more groups", mm->ngroups - i);
        break;
      }
      fa_ranks gr;
      if (group_ranks(c, &mm->groups[i], &gr)) return -1;
      sb_printf(b, "%s%s %s %s", i ? ", " : "", ranks_phrase(&gr, rp, sizeof rp),
                gr.n == 1 ? "calls" : "call", fa_sig_text_fields(&mm->groups[i].sig, mm->fields, sp, sizeof sp));
      fa_ranks_free(&gr);
    }
    sb_printf(b, "; no single culprit");
  }
  return 0;
}

/* The first p2p pair of c posted and started by both sides that never
 * completed (a joined link), or NULL. */
static const fa_link *joined_link(const fa_comm *c)
{
  for (uint32_t i = 0; i < c->nlinks; i++)
    if (c->links[i].p2p && c->links[i].joined && !c->links[i].held_by_group) return &c->links[i];
  return NULL;
}

/* Is global rank g of the culprit group of the verdict's mismatch (named
 * by the mismatch part of the summary already)? */
static int mismatch_culprit(const fa_analysis *a, int32_t g)
{
  const fa_verdict *v = &a->verdict;
  if (v->mismatch_comm < 0) return 0;
  const fa_comm *c = &a->comms[v->mismatch_comm];
  if (c->mismatch.culprit < 0) return 0;
  const fa_group *gr = &c->mismatch.groups[c->mismatch.culprit];
  for (uint32_t i = 0; i < gr->n; i++)
    if (fa_global_of(c, c->mismatch.members[gr->first + i]) == g) return 1;
  return 0;
}

/* "; other waits lead to rank 14": root causes the chosen comm does not
 * show (the ends of other wait-for chains). */
static int say_other_roots(const fa_analysis *a, sbuf *b)
{
  const fa_verdict *v = &a->verdict;
  fa_ranks more = {NULL, 0};
  uint32_t cap = 0;
  char p[200];
  for (uint32_t i = 0; i < v->root_cause.n; i++) {
    int32_t g = v->root_cause.v[i];
    if (has_rank(&v->lagging, g) || has_rank(&v->unfinished, g) || has_rank(&v->ahead, g) || has_rank(&v->late, g) ||
        mismatch_culprit(a, g) || (g == v->p2p_hub && v->p2p_hub_comm == v->comm) || (!v->cycle && has_rank(&v->left_out_too, g)))
      continue;
    if (fa_ranks_push(&more, &cap, g)) {
      fa_ranks_free(&more);
      return -1;
    }
  }
  if (more.n)
    sb_printf(b, "; other waits lead to %s", ranks_phrase(&more, p, sizeof p));
  if (!v->cycle && v->left_out_too.n) /* (fa_p2p_left_out) */
    sb_printf(b, "; beside %s, %s, by %s rounds, left out the send or receive that a pending p2p op waits for, "
              "and went on into another op", more.n ? "them" : "it", ranks_phrase(&v->left_out_too, p, sizeof p),
              v->left_out_too.n == 1 ? "its" : "their");
  fa_ranks_free(&more);
  return 0;
}

/* The hang part of the summary, for the chosen comm. */
static int say_hang(const fa_analysis *a, sbuf *b)
{
  const fa_verdict *v = &a->verdict;
  const fa_comm *c = &a->comms[v->comm];
  char hex[200], op[96], p1[200], p2[200];
  fa_comm_label(c, hex, sizeof hex);
  fa_ranks w = {NULL, 0}, o = {NULL, 0};
  int rc = -1;
  if (c->stuck) op_phrase(a, c, c->stuck_seq, op, sizeof op);
  if (v->p2p_hub >= 0 && v->p2p_hub_comm == v->comm) {
    /* transfers without a counterpart that all touch one rank (splits.c) */
    uint32_t cap = 0, nl = 0;
    for (uint32_t i = 0; i < c->nlinks; i++)
      if (c->links[i].p2p && !c->links[i].joined) {
        nl++;
        int32_t wr = fa_p2p_waiter(&c->links[i]);
        if (wr >= 0 && wr != v->p2p_hub && !has_rank(&w, wr) && fa_ranks_push(&w, &cap, wr)) goto out;
      }
    fa_ranks_sort(&w);
    sb_printf(b, "every p2p transfer on comm %s left without a counterpart touches rank %d (%u missing "
              "link%s): its sends and receives disagree with its peers' (an all-to-all-v whose split sizes "
              "it computed otherwise), while each peer did what its own splits said", hex, v->p2p_hub, nl,
              nl == 1 ? "" : "s");
    if (w.n) sb_printf(b, "; %s %s for it", ranks_phrase(&w, p1, sizeof p1), wait_verb(&w));
  } else if (joined_link(c) && !v->lagging.n && !v->unfinished.n) {
    /* a p2p pair in flight on both sides that never moved: the others wait behind it */
    const fa_link *l = joined_link(c);
    uint32_t cap = 0;
    if (fa_comm_ranks(c, FA_MEMBER_WAITING, &w)) goto out;
    cap = w.n;
    for (uint32_t i = 0; i < c->nlinks; i++)
      if (c->links[i].p2p && !c->links[i].joined && fa_p2p_waiter(&c->links[i]) >= 0 &&
          !has_rank(&w, fa_p2p_waiter(&c->links[i])) && fa_ranks_push(&w, &cap, fa_p2p_waiter(&c->links[i])))
        goto out;
    fa_ranks_sort(&w);
    char ends[64];
    sb_printf(b, "p2p seq %llu from rank %d to rank %d on comm %s: both posted and started it, neither "
              "completed: device or network side (link %s)",
              (unsigned long long)l->seq, l->src, l->dst, hex, fa_link_ends(l, "->", ends, sizeof ends));
    if (w.n) sb_printf(b, "; %s %s behind it", ranks_phrase(&w, p1, sizeof p1), wait_verb(&w));
  } else if (c->end_unclear && !v->lagging.n) {
    /* some tore it down at (or before) the stuck seq, the others wait there, neither a minority */
    uint32_t cap = 0;
    for (int32_t r = 0; r < c->size; r++)
      if (c->members[r].shut && c->members[r].global_rank >= 0 &&
          fa_ranks_push(&o, &cap, c->members[r].global_rank))
        goto out;
    if (fa_comm_ranks(c, FA_MEMBER_WAITING, &w)) goto out;
    if (!w.n && fa_comm_ranks(c, FA_MEMBER_PASSED, &w)) goto out;
    const char *where = torn_where(c, &o);
    sb_printf(b, "%s tore comm %s down %s seq %llu after completing all %s ops%s, while %s %s in %s",
              ranks_phrase(&o, p1, sizeof p1), hex, where, (unsigned long long)c->stuck_seq,
              o.n == 1 ? "its" : "their", strcmp(where, "at") ? "" : " there", ranks_phrase(&w, p2, sizeof p2),
              wait_verb(&w), op);
    if (c->nno_dump) sb_printf(b, " (%u member(s) left no dump)", c->nno_dump);
    sb_printf(b, ": either %s ran past the end of the others' work or %s ended early; the dumps cannot "
              "tell which", ranks_phrase(&w, p2, sizeof p2), ranks_phrase(&o, p1, sizeof p1));
  } else if (v->late.n) {
    int aborted = 0, ended = 0; /* how they gave up: a reaction (react.c), or their processes ended */
    for (int32_t r = 0; r < c->size; r++)
      if (c->members[r].frame >= 0 && has_rank(&v->late_left, c->members[r].global_rank))
        *(a->frames[c->members[r].frame].reaction_ns ? &aborted : &ended) = 1;
    sb_printf(b, "%s entered %s on comm %s %.1f s after %s had given up on it (%s): %s came too late",
              ranks_phrase(&v->late, p1, sizeof p1), op, hex, (double)v->late_by_ns / 1e9,
              ranks_phrase(&v->late_left, p2, sizeof p2),
              !ended ? "aborted the comm" : aborted ? "aborted the comm, or ended after waiting" : "ended after waiting",
              v->late.n == 1 ? "it" : "they");
  } else if (v->all_joined) {
    sb_printf(b, "all joined, not completed: device or network side (%s on comm %s, %u rank%s waiting)",
              op, hex, c->nwaiting, c->nwaiting == 1 ? "" : "s");
    say_stopped_links(c, b);
  } else if (v->ahead.n && !strcmp(torn_where(c, &v->ahead), "before") && c->nlinks) {
    /* ahead in p2p ops, behind the others only in their teardown (p2p_past_end) */
    if (fa_comm_ranks(c, FA_MEMBER_IDLE, &o)) goto out;
    sb_printf(b, "%s %s ahead: %s p2p operations on comm %s wait alone (%u missing link%s), while %s tore it "
              "down after completing all %s ops and %s idle", ranks_phrase(&v->ahead, p1, sizeof p1),
              v->ahead.n == 1 ? "is" : "are", v->ahead.n == 1 ? "its" : "their", hex, c->nlinks,
              c->nlinks == 1 ? "" : "s", ranks_phrase(&o, p2, sizeof p2), o.n == 1 ? "its" : "their",
              o.n == 1 ? "is" : "are");
  } else if (v->ahead.n) {
    if (fa_comm_ranks(c, FA_MEMBER_IDLE, &o)) goto out;
    char done[64];
    if (c->last_completed >= 0) snprintf(done, sizeof done, "completed seq %lld", (long long)c->last_completed);
    else snprintf(done, sizeof done, "never created the comm, ended %s work", o.n == 1 ? "its" : "their");
    sb_printf(b, "%s %s ahead: %s %s on comm %s %s, while %s %s and %s idle",
              ranks_phrase(&v->ahead, p1, sizeof p1), v->ahead.n == 1 ? "is" : "are",
              v->ahead.n == 1 ? "it entered" : "they entered", op, hex, v->ahead.n == 1 ? "alone" : "without the others",
              ranks_phrase(&o, p2, sizeof p2), done, o.n == 1 ? "is" : "are");
    fa_ranks clean = {NULL, 0};
    uint32_t cap = 0;
    for (int32_t r = 0; r < c->size; r++)
      if (c->members[r].state == FA_MEMBER_IDLE && fa_ended_cleanly(a, c, &c->members[r]) &&
          fa_ranks_push(&clean, &cap, c->members[r].global_rank)) {
        fa_ranks_free(&clean);
        goto out;
      }
    if (clean.n)
      sb_printf(b, " (%s left no dump and no announcement: %s exited cleanly)", ranks_phrase(&clean, p1, sizeof p1),
                clean.n == 1 ? "it" : "they");
    fa_ranks_free(&clean);
  } else if (v->unfinished.n && not_returned_any(c)) {
    if (fa_comm_ranks(c, FA_MEMBER_WAITING, &w)) goto out;
    sb_printf(b, "the call of %s on comm %s by %s never returned (%s thread is still inside NCCL); %s posted "
              "it and %s in it", op, hex, ranks_phrase(&v->unfinished, p1, sizeof p1),
              v->unfinished.n == 1 ? "its" : "their", ranks_phrase(&w, p2, sizeof p2), wait_verb(&w));
    if (v->lagging.n)
      sb_printf(b, "; beside it, %s never entered it%s", ranks_phrase(&v->lagging, p1, sizeof p1),
                lagging_how(a, c, 2) ? " (captured into a CUDA graph that shows no launch)"
                : lagging_how(a, c, 3) ? " (issued in a group never ended)" : "");
  } else if (v->unfinished.n && !c->npassed && not_started_any(c)) {
    if (fa_comm_ranks(c, FA_MEMBER_WAITING, &w)) goto out;
    sb_printf(b, "%s never started %s on comm %s, which %s started and %s in: work before it on %s "
              "stream never finished (a kernel or a wait that is not NCCL's)",
              ranks_phrase(&v->unfinished, p1, sizeof p1), op, hex, ranks_phrase(&w, p2, sizeof p2),
              wait_verb(&w), v->unfinished.n == 1 ? "its" : "their");
  } else if (v->unfinished.n && !c->npassed) { /* an async error NCCL reported */
    if (fa_comm_ranks(c, FA_MEMBER_WAITING, &w)) goto out;
    sb_printf(b, "NCCL reported an async error on comm %s to %s during %s (%s own network or device side "
              "broke)", hex, ranks_phrase(&v->unfinished, p1, sizeof p1), op,
              v->unfinished.n == 1 ? "its" : "their");
    if (w.n) sb_printf(b, "; %s %s in it", ranks_phrase(&w, p2, sizeof p2), wait_verb(&w));
  } else if (v->unfinished.n) {
    if (fa_comm_ranks(c, FA_MEMBER_PASSED, &o)) goto out;
    sb_printf(b, "%s never finished %s on comm %s, which %s completed: %s", ranks_phrase(&v->unfinished, p1, sizeof p1),
              op, hex, ranks_phrase(&o, p2, sizeof p2),
              fa_ranks_salvaged(a, &v->unfinished)
                  ? (v->unfinished.n == 1 ? "its process ended with it in flight" : "their processes ended with it in flight")
                  : v->unfinished.n == 1 ? "its own work stopped on the device side (a GPU error or a kernel that cannot finish)"
                                         : "their own work stopped on the device side (a GPU error or a kernel that cannot finish)");
    for (int32_t r = 0; r < c->size; r++)
      if (c->members[r].async_error) {
        sb_printf(b, "; NCCL reported an async error on %s comm", v->unfinished.n == 1 ? "its" : "their");
        break;
      }
  } else if (c->stuck && c->nunknown && !v->lagging.n && !c->nno_dump && !c->has_mismatch) {
    if (fa_comm_ranks(c, FA_MEMBER_WAITING, &w)) goto out;
    uint32_t cap = 0;
    for (int32_t r = 0; r < c->size; r++)
      if (c->members[r].counters_unknown && c->members[r].global_rank >= 0 &&
          fa_ranks_push(&o, &cap, c->members[r].global_rank))
        goto out;
    fa_ranks_sort(&o);
    sb_printf(b, "%s %s in %s on comm %s; whether %s entered it is unknown (%s dump does not tell "
              "which pg_status entry is the group's)", ranks_phrase(&w, p1, sizeof p1), wait_verb(&w), op,
              hex, ranks_phrase(&o, p2, sizeof p2), o.n == 1 ? "its" : "their");
  } else if (c->stuck && (c->nwaiting || c->npassed) && !v->lagging.n && !c->nno_dump) {
    if (fa_comm_ranks(c, FA_MEMBER_WAITING, &w)) goto out;
    if (!w.n && fa_comm_ranks(c, FA_MEMBER_PASSED, &w)) goto out; /* (past it, with later ops pending) */
    if (c->has_mismatch || v->mismatch_comm >= 0)
      sb_printf(b, "%s %s in %s on comm %s, which mismatched calls keep from completing",
                ranks_phrase(&w, p1, sizeof p1), wait_verb(&w), op, hex);
    else /* every member entered, none is blamed, no mismatch: the waits end nowhere the dumps show */
      sb_printf(b, "%s %s in %s on comm %s; the dumps name no rank %s %s for",
                ranks_phrase(&w, p1, sizeof p1), wait_verb(&w), op, hex, w.n == 1 ? "it" : "they",
                w.n == 1 ? "waits" : "wait");
  } else if (c->stuck && (c->nwaiting || c->npassed)) {
    if (fa_comm_ranks(c, FA_MEMBER_WAITING, &w)) goto out;
    if (c->nlagging && several_per_process(c)) { /* CommInitAll: by comm rank and device */
      sb_printf(b, "%s never entered %s on comm %s", comm_ranks_phrase(a, c, FA_MEMBER_LAGGING, p1, sizeof p1),
                op, hex);
      if (c->nwaiting)
        sb_printf(b, "; %s %s in it", comm_ranks_phrase(a, c, FA_MEMBER_WAITING, p2, sizeof p2),
                  c->nwaiting == 1 ? "waits" : "wait");
    } else if (c->unformed && c->nlagging) { /* the comm never formed: who never called its creation */
      const frz_dump *d;
      const frz_record *r = fa_comm_record_in(a, c, c->stuck_seq, &d);
      char nm[FRZ_PT_NAME_MAX];
      sb_printf(b, "%s never called %s of comm %s (%d ranks, never formed); %s %s in it",
                ranks_phrase(&v->lagging, p1, sizeof p1),
                r ? fa_sanitize(fa_record_op_name(d, r), nm, sizeof nm) : "the creation", hex, c->size,
                ranks_phrase(&w, p2, sizeof p2), wait_verb(&w));
    } else if (c->nlagging && lagging_all(c, 1)) {
      if (fa_comm_ranks(c, FA_MEMBER_LAGGING, &o)) goto out;
      if (w.n) {
        sb_printf(b, "%s tore comm %s down (%s seq %llu) while %s %s in %s there",
                  ranks_phrase(&o, p1, sizeof p1), hex, torn_where(c, &o), (unsigned long long)c->stuck_seq,
                  ranks_phrase(&w, p2, sizeof p2), wait_verb(&w), op);
        say_async_errors(a, &o, b);
      } else { /* the others completed the op it cut off and wait in a later one */
        if (fa_comm_ranks(c, FA_MEMBER_PASSED, &w)) goto out;
        sb_printf(b, "%s tore comm %s down (at seq %llu, %s in flight); %s completed it and %s there after it",
                  ranks_phrase(&o, p1, sizeof p1), hex, (unsigned long long)c->stuck_seq, op,
                  ranks_phrase(&w, p2, sizeof p2), wait_verb(&w));
        say_async_errors(a, &o, b);
      }
      fa_ranks_free(&o);
    } else if (c->nlagging && lagging_all(c, 2)) {
      if (fa_comm_ranks(c, FA_MEMBER_LAGGING, &o)) goto out;
      sb_printf(b, "%s ended with %s on comm %s in flight", ranks_phrase(&o, p1, sizeof p1), op, hex);
      fa_ranks_free(&o);
      if (!w.n && fa_comm_ranks(c, FA_MEMBER_PASSED, &w)) goto out;
      if (w.n) sb_printf(b, "; %s %s for it", ranks_phrase(&w, p2, sizeof p2), wait_verb(&w));
    } else if (c->nlagging && (lagging_how(a, c, 1) || lagging_how(a, c, 2) || lagging_how(a, c, 3))) {
      if (lagging_how(a, c, 1)) say_failed_call(a, c, &v->lagging, b);
      else if (lagging_how(a, c, 2))
        say_not_run(a, c, &v->lagging, b);
      else
        sb_printf(b, "%s issued %s on comm %s in a group whose ncclGroupEnd never came, so it never ran",
                  ranks_phrase(&v->lagging, p1, sizeof p1), op, hex);
      if (!w.n && fa_comm_ranks(c, FA_MEMBER_PASSED, &w)) goto out;
      int earlier = 0; /* (a capture before the stuck seq: they wait in the stuck op, not in it) */
      for (int32_t r = 0; r < c->size; r++)
        earlier |= c->members[r].not_run && (uint64_t)c->members[r].not_run_seq < c->stuck_seq;
      if (w.n && earlier) sb_printf(b, "; %s %s in %s", ranks_phrase(&w, p2, sizeof p2), wait_verb(&w), op);
      else if (w.n) sb_printf(b, "; %s %s %s", ranks_phrase(&w, p2, sizeof p2), wait_verb(&w),
                              c->stuck_seq == 0 ? "on that comm" : "in it");
    } else if (c->nlagging) {
      if (lagging_behind(c)) /* they enqueued it, behind an unfinished op of their stream */
        sb_printf(b, "%s enqueued %s on comm %s behind an unfinished op of %s own stream, where it never "
                  "started", ranks_phrase(&v->lagging, p1, sizeof p1), op, hex,
                  v->lagging.n == 1 ? "its" : "their");
      else if (replay_of(a, c, c->stuck_seq)) { /* no NCCL call at a replay: the launch never came */
        const frz_record *rr = replay_of(a, c, c->stuck_seq);
        char base[96];
        snprintf(base, sizeof base, "%s", op);
        char *paren = strstr(base, " (replay ");
        if (paren) *paren = '\0';
        sb_printf(b, "%s never launched replay %llu of graph %u: %s on comm %s",
                  ranks_phrase(&v->lagging, p1, sizeof p1), (unsigned long long)rr->replay, (unsigned)rr->graph_id,
                  base, hex);
      } else
        sb_printf(b, "%s never entered %s on comm %s", ranks_phrase(&v->lagging, p1, sizeof p1), op, hex);
      if (split_queued(a, c, &w, &o)) goto out;
      if (w.n) sb_printf(b, "; %s %s in it", ranks_phrase(&w, p2, sizeof p2), wait_verb(&w));
      if (o.n)
        sb_printf(b, "%s%s enqueued it, and it never started there, after sends and receives of %s own "
                  "on that comm that never completed", w.n ? ", " : "; ", ranks_phrase(&o, p2, sizeof p2),
                  o.n == 1 ? "its" : "their");
      fa_ranks_free(&o);
      if (fa_comm_ranks(c, FA_MEMBER_PASSED, &o)) goto out;
      if (o.n)
        sb_printf(b, "%s%s %s", w.n ? ", " : "; ", ranks_phrase(&o, p2, sizeof p2),
                  passed_unrecorded(a, c) ? "enqueued it (its completion is not recorded: a coalesced group)"
                                          : "completed it");
      fa_ranks_free(&o);
      if (c->nno_dump) {
        if (fa_comm_ranks(c, FA_MEMBER_NO_DUMP, &o)) goto out;
        /* a dump that is there but could not be read is said so */
        int unread = o.n == 1 && unread_dump(a, o.v[0]);
        if (unread) sb_printf(b, " (rank %d's dump could not be read)", o.v[0]);
        else if (o.n) sb_printf(b, " (%s left no dump)", ranks_phrase(&o, p1, sizeof p1));
        else sb_printf(b, " (%u member(s) left no dump)", c->nno_dump);
        /* where the data stopped at one of them (fa_proxy_data_stopped): said, not blamed */
        for (int32_t r = 0; r < c->size; r++)
          if (c->members[r].data_stopped && c->members[r].global_rank >= 0) {
            const fa_member *m = &c->members[r];
            sb_printf(b, "; the data stopped at rank %d: rank %d waits in RecvWait for it, while rank %d, "
                      "which sends to it, completed the op (rank %d was killed in it, or never started it: "
                      "not blamed)", m->global_rank, m->stopped_waiter, m->stopped_sender, m->global_rank);
            break;
          }
      }
    } else {
      sb_printf(b, "%s %s in %s on comm %s for ", ranks_phrase(&w, p1, sizeof p1), wait_verb(&w), op, hex);
      const fa_problem *bad = v->lagging.n == 1 ? unread_dump(a, v->lagging.v[0]) : NULL;
      char msg[160];
      if (bad) {
        sb_printf(b, "%s, whose dump could not be read (%s)", ranks_phrase(&v->lagging, p2, sizeof p2),
                  fa_sanitize(bad->message, msg, sizeof msg));
        say_unread_alternative(a, v->lagging.v[0], c, b);
      }
      else if (v->lagging.n && fa_ranks_has(&a->beside, v->lagging.v[0]))
        sb_printf(b, "%s, outside the inputs (%s beside them, not given)", /* (given.c) */
                  ranks_phrase(&v->lagging, p2, sizeof p2), v->lagging.n == 1 ? "its dump lies" : "dumps lie");
      else if (v->lagging.n && fa_alive_any(a)) {
        sb_printf(b, "%s, which left no dump", ranks_phrase(&v->lagging, p2, sizeof p2));
        say_no_dump(a, &v->lagging, b);
      } else if (v->lagging.n)
        sb_printf(b, "%s, which left no dump (dead, or could not write one)",
                  ranks_phrase(&v->lagging, p2, sizeof p2));
      else if (c->unformed && say_candidates(c, b))
        ;
      else
        sb_printf(b, "%u member(s) of unknown rank that left no dump", c->nno_dump);
    }
  } else {
    uint32_t cap = 0, nl = 0, held = 0; /* (held: posted, but never started or queued) */
    for (uint32_t i = 0; i < c->nlinks; i++)
      if (c->links[i].p2p) {
        nl++;
        held += c->links[i].counterpart_not_started || c->links[i].counterpart_queued;
        if (fa_p2p_waiter(&c->links[i]) >= 0 && fa_ranks_push(&w, &cap, fa_p2p_waiter(&c->links[i])))
          goto out;
      }
    fa_ranks_sort(&w);
    if (v->lagging.n && held)
      sb_printf(b, "%s %s in p2p operations on comm %s whose other side never posted, never started or "
                "queued behind one of those; the waits end at %s (%u missing link%s)",
                ranks_phrase(&w, p1, sizeof p1), wait_verb(&w), hex, ranks_phrase(&v->lagging, p2, sizeof p2),
                nl, nl == 1 ? "" : "s");
    else if (v->lagging.n)
      sb_printf(b, "%s %s in p2p operations on comm %s that %s never posted (%u missing link%s)",
                ranks_phrase(&w, p1, sizeof p1), wait_verb(&w), hex, ranks_phrase(&v->lagging, p2, sizeof p2),
                nl, nl == 1 ? "" : "s");
    else /* the peers are comm ranks no dump places: members without a dump */
      sb_printf(b, "%s %s in p2p operations on comm %s that no member with a dump posted (%u missing "
                "link%s; %u member(s) left no dump)", ranks_phrase(&w, p1, sizeof p1), wait_verb(&w), hex, nl,
                nl == 1 ? "" : "s", c->nno_dump);
  }
  if (say_other_roots(a, b)) goto out;
  rc = say_exited(a, &v->lagging, b);
out:
  fa_ranks_free(&w);
  fa_ranks_free(&o);
  return rc;
}

/* How many ranks of v's cycle are not v->astray. */
static uint32_t cycle_others(const fa_verdict *v)
{
  uint32_t others = 0;
  for (uint32_t i = 0; i < v->ncycle; i++) {
    uint32_t k = 0;
    while (k < i && v->cycle[k].rank != v->cycle[i].rank) k++;
    others += k == i && v->cycle[i].rank != v->astray;
  }
  return others;
}

/* Rank v->astray's call left out, as its rounds tell it: "rank 1 went
 * astray: in each earlier round it called AllReduce on comm B before
 * AllReduce on comm C; this time it waits in the second without having
 * called the first; the other rank kept to its rounds". */
static void say_left_out(const fa_analysis *a, sbuf *b)
{
  const fa_verdict *v = &a->verdict;
  const fa_wait_step *w = NULL, *o = NULL;
  for (uint32_t i = 0; i < v->ncycle && !w; i++)
    if (v->cycle[i].rank == v->astray) w = &v->cycle[i], o = &v->cycle[(i + v->ncycle - 1) % v->ncycle];
  uint32_t others = cycle_others(v);
  char n1[FRZ_PT_NAME_MAX], n2[FRZ_PT_NAME_MAX], l1[200], l2[200];
  const frz_dump *d1, *d2;
  frz_record owed;
  const frz_record *p2p = w && o->p2p ? fa_awaited_p2p(a, o, &owed) : NULL;
  const frz_record *r1 = w && !o->p2p ? fa_comm_record_in(a, &a->comms[o->comm], o->seq, &d1) : NULL;
  const frz_record *r2 = w && !w->p2p ? fa_comm_record_in(a, &a->comms[w->comm], w->seq, &d2) : NULL;
  if (p2p && r2) /* the p2p op its peer waits for it to post */
    sb_printf(b, "; rank %d went astray: in each earlier round it called %s %s rank %d on comm %s before %s "
              "on comm %s; this time it waits in the second without having called the first", v->astray,
              p2p->op == FRZ_OP_Recv ? "Recv" : "Send", p2p->op == FRZ_OP_Recv ? "from" : "to", o->rank,
              fa_comm_label(&a->comms[o->comm], l1, sizeof l1),
              fa_sanitize(fa_record_op_name(d2, r2), n2, sizeof n2), fa_comm_label(&a->comms[w->comm], l2, sizeof l2));
  else if (r1 && r2)
    sb_printf(b, "; rank %d went astray: in each earlier round it called %s on comm %s before %s on comm %s; "
              "this time it waits in the second without having called the first", v->astray,
              fa_sanitize(fa_record_op_name(d1, r1), n1, sizeof n1), fa_comm_label(&a->comms[o->comm], l1, sizeof l1),
              fa_sanitize(fa_record_op_name(d2, r2), n2, sizeof n2), fa_comm_label(&a->comms[w->comm], l2, sizeof l2));
  else
    sb_printf(b, "; rank %d went astray: in each earlier round it called the op it is waited for in before the "
              "one it waits in; this time it waits without having called it", v->astray);
  sb_printf(b, "; the other rank%s of the cycle kept to %s rounds", others == 1 ? "" : "s", others == 1 ? "its" : "their");
}

/* "deadlock across N communicators: rank 0 waits in ... for rank 1, which ..." */
static void say_cycle(const fa_analysis *a, sbuf *b)
{
  const fa_verdict *v = &a->verdict;
  char hex[200], op[96];
  uint32_t ncomms = 0; /* distinct comms of the cycle */
  for (uint32_t i = 0; i < v->ncycle; i++) {
    uint32_t k = 0;
    while (k < i && v->cycle[k].comm != v->cycle[i].comm) k++;
    ncomms += k == i;
  }
  sb_printf(b, "deadlock across %u communicator%s: ", ncomms, ncomms == 1 ? "" : "s");
  for (uint32_t i = 0; i < v->ncycle; i++) {
    const fa_wait_step *s = &v->cycle[i];
    const fa_comm *c = &a->comms[s->comm];
    if (i == 8) {
      sb_printf(b, ", and so on (%u steps)", v->ncycle);
      break;
    }
    if (!s->p2p) op_phrase(a, c, s->seq, op, sizeof op);
    else snprintf(op, sizeof op, "p2p seq %llu", (unsigned long long)s->seq);
    const char *maybe = s->uncertain ? " (or another rank that never called it)" : "";
    if (i == 0)
      sb_printf(b, "rank %d waits in %s on comm %s for rank %d%s", s->rank, op,
                fa_comm_label(c, hex, sizeof hex), s->waits_for, maybe);
    else
      sb_printf(b, ", which waits in %s on comm %s for rank %d%s", op, fa_comm_label(c, hex, sizeof hex),
                s->waits_for, maybe);
  }
  if (v->astray >= 0 && v->astray_how == FA_ASTRAY_SKIPPED)
    sb_printf(b, "; rank %d went astray: in the round before it posted that p2p op before the collective, "
              "now it entered the collective without it", v->astray);
  else if (v->astray >= 0 && v->astray_how == FA_ASTRAY_REORDERED)
    sb_printf(b, "; rank %d went astray: it issued its two ops of the cycle in the other order than in "
              "the round before, the other rank%s in the same order", v->astray, cycle_others(v) == 1 ? "" : "s");
  else if (v->astray >= 0 && v->astray_how == FA_ASTRAY_COMM)
    sb_printf(b, "; rank %d went astray: that op is its first ever on its comm, while a comm it used "
              "before waits for it", v->astray);
  else if (v->astray >= 0 && v->astray_how == FA_ASTRAY_POSTPONED)
    sb_printf(b, "; rank %d went astray: it waits in its op without having called the one it is waited "
              "for in, which it called first in the round before; the other rank%s kept %s order",
              v->astray, cycle_others(v) == 1 ? "" : "s", cycle_others(v) == 1 ? "its" : "their");
  else if (v->astray >= 0 && v->astray_how == FA_ASTRAY_LEFT_OUT)
    say_left_out(a, b);
  else if (v->astray >= 0 && v->astray_how == FA_ASTRAY_NO_CREATE)
    sb_printf(b, "; rank %d went astray: it never called the creation of the comm the others wait to "
              "form (its dump holds no such comm, where every other rank it could be formed a group of "
              "its own) and went on", v->astray);
  else if (v->astray >= 0)
    sb_printf(b, "; rank %d went astray: that p2p op is its first with that peer, while a peer it used "
              "before waits for its op", v->astray);
  if (v->astray < 0 && v->changed_most)
    sb_printf(b, "; most ranks changed their round of ops (the job changed what it "
              "does), so the rounds blame nobody: a rank that kept to its own may be the one that went wrong");
  else if (v->astray < 0 && v->changed >= 0)
    sb_printf(b, "; rank %d changed what it does: its ops since its latest collective are not what its "
              "earlier rounds repeat, while the other ranks of the cycle keep to theirs (it may have "
              "gone astray, or made a call its peers wrongly left out: the dumps cannot tell which)",
              v->changed);
  /* roots of other waits beside the cycle (a rank that left no dump) */
  fa_ranks more = {NULL, 0};
  uint32_t cap = 0;
  char p[200];
  if (v->left_out_too.n)
    sb_printf(b, "; beside the cycle, %s, by %s rounds, also wait%s past a stuck op %s did not call",
              ranks_phrase(&v->left_out_too, p, sizeof p), v->left_out_too.n == 1 ? "its" : "their",
              v->left_out_too.n == 1 ? "s" : "", v->left_out_too.n == 1 ? "it" : "they");
  for (uint32_t i = 0; i < v->root_cause.n; i++) {
    int in = fa_ranks_has(&v->left_out_too, v->root_cause.v[i]);
    for (uint32_t k = 0; k < v->ncycle && !in; k++) in = v->cycle[k].rank == v->root_cause.v[i];
    if (!in && fa_ranks_push(&more, &cap, v->root_cause.v[i])) break;
  }
  if (more.n) sb_printf(b, "; other waits lead to %s", ranks_phrase(&more, p, sizeof p));
  fa_ranks_free(&more);
}

/* "no hang: rank 6 is a straggler (last at 30 of 30 collectives, 201 ms
 * late on average); every rank progressed between frames" */
static void say_straggler(const fa_analysis *a, sbuf *b)
{
  const fa_verdict *v = &a->verdict;
  char p[200];
  const fa_straggler *s = &v->stragglers[0];
  sb_printf(b, "no hang: rank %d is a straggler (late at %u of %u collectives, %lld ms late on average)",
            s->rank, s->late_ops, s->ops, (long long)(s->mean_late_ns / 1000000));
  if (v->nstragglers > 1) sb_printf(b, ", and %u more", v->nstragglers - 1);
  if (v->frames_progress)
    sb_printf(b, "; %s progressed between frames", ranks_phrase(&v->progressed, p, sizeof p));
}

/* The one-sentence summary. */
/* The global ranks of comm c's members with a dump. */
static int members_dumped(const fa_comm *c, fa_ranks *out)
{
  uint32_t cap = 0;
  for (int32_t r = 0; r < c->size; r++)
    if (c->members[r].rank >= 0 && fa_ranks_push(out, &cap, c->members[r].global_rank)) return -1;
  fa_ranks_sort(out);
  return 0;
}

/* Has comm c a hang to tell beside a mismatch: members waiting in (or past)
 * its stuck op, or p2p ops waiting?  (Without, the mismatch is the story:
 * the seqs after it no longer line up, a teardown that looks stuck
 * included.) */
static int hang_to_say(const fa_comm *c)
{
  if (c->nwaiting || c->npassed) return 1;
  for (uint32_t i = 0; i < c->nlinks; i++)
    if (c->links[i].p2p && !c->links[i].joined && fa_p2p_waiter(&c->links[i]) >= 0) return 1;
  return 0;
}

/* "one unique id made 2 comms 5c1f... (2 ranks): ranks 0-1, ranks 2-3" for
 * the first shared id (and how many more). */
static int say_shared(const fa_analysis *a, sbuf *b)
{
  const fa_verdict *v = &a->verdict;
  const fa_comm *c = &a->comms[v->shared[0]];
  char hex[17], p[200];
  sb_printf(b, "one unique id made %u comms %s (%d ranks each):", c->ninstances, fa_hex(c->id, hex), c->size);
  for (uint32_t k = 0; k < c->ninstances && v->shared[0] + (int32_t)k < (int32_t)a->ncomms; k++) {
    fa_ranks r = {NULL, 0};
    if (members_dumped(&a->comms[v->shared[0] + (int32_t)k], &r)) return -1;
    sb_printf(b, "%s %s", k ? "," : "", ranks_phrase(&r, p, sizeof p));
    fa_ranks_free(&r);
  }
  sb_printf(b, " each created it from the same id (a reused store key?), so they disagree on "
            "its members");
  if (v->nshared > 1) sb_printf(b, "; %u more such ids", v->nshared - 1);
  return 0;
}

int fa_verdict_summary(fa_analysis *a)
{
  fa_verdict *v = &a->verdict;
  sbuf b = {NULL, 0, 0, 0};
  char p[200], hex[17];
  switch (v->status) {
  case FA_STATUS_INCONCLUSIVE:
    if (a->conflict_rank >= 0)
      sb_printf(&b, "two different dumps claim rank %d (input problems, below): which rank each "
                "dump is cannot be told, so no rank is named (PyTorch's dumps take the rank from "
                "the file name; a local rank there repeats across nodes, and the dumps of two runs in one "
                "directory claim every rank twice)", a->conflict_rank);
    else if (!a->nframes && a->nalive) say_alive_only(a, &b); /* (given.c) */
    else if (!a->nframes) sb_printf(&b, "no usable dump");
    else if (!a->ncomms) sb_printf(&b, "the dumps hold no communicator");
    else if (a->ranks_missing.n && a->beside.n)
      say_beside(a, &b); /* (their files are there, not given) */
    else if (a->ranks_missing.n && fa_alive_any(a)) {
      sb_printf(&b, "no hang among the ranks that dumped, but %s left no dump (fr-dump --trigger DIR asks "
                "every live rank)", ranks_phrase(&a->ranks_missing, p, sizeof p));
      say_no_dump(a, &a->ranks_missing, &b);
    } else if (a->ranks_missing.n)
      /* nothing stuck among the dumps read, but absent ranks may be behind */
      sb_printf(&b, "no hang among the ranks that dumped, but %s left no dump: dead, not asked "
                "to dump (fr-dump --trigger DIR asks every rank), or not given here",
                ranks_phrase(&a->ranks_missing, p, sizeof p));
    else
      for (uint32_t i = 0; i < a->ncomms; i++) {
        if (fa_counters_unknown(a, &a->comms[i])) {
          char lab[160];
          sb_printf(&b, "the counters of comm %s say nothing on some ranks: PyTorch's pg_status "
                    "holds the seq of the last work, a p2p seq after a send or receive, and no "
                    "entry tells which", fa_comm_label(&a->comms[i], lab, sizeof lab));
          break;
        }
        if (a->comms[i].pt && ((!a->comms[i].tracked && a->comms[i].seq_hi >= 0) || a->comms[i].unknown_from >= 0)) {
          /* PyTorch (frz(5)): coalesced groups' completion is not recorded */
          char lab[160];
          sb_printf(&b, "whether seq %lld on comm %s completed is unknown: every rank enqueued it, "
                    "and PyTorch's Flight Recorder records no completion of coalesced groups",
                    (long long)(a->comms[i].unknown_from >= 0 ? a->comms[i].unknown_from : a->comms[i].seq_hi),
                    fa_comm_label(&a->comms[i], lab, sizeof lab));
          break;
        }
        if (!a->comms[i].tracked && a->comms[i].seq_hi >= 0) {
          sb_printf(&b, "completion was not tracked on comm %s: every rank enqueued up to seq %lld, "
                    "and whether that completed is unknown", fa_hex(a->comms[i].id, hex),
                    (long long)a->comms[i].seq_hi);
          break;
        }
        if (a->comms[i].unknown_from >= 0) {
          sb_printf(&b, "completion was not tracked from seq %lld on comm %s (captured into a CUDA "
                    "graph): every rank enqueued up to seq %lld, and whether that completed is unknown",
                    (long long)a->comms[i].unknown_from, fa_hex(a->comms[i].id, hex),
                    (long long)a->comms[i].seq_hi);
          break;
        }
      }
    break;
  case FA_STATUS_HEALTHY:
    if (v->frames_progress)
      sb_printf(&b, "no hang found: %s progressed between frames (slow at worst, not hung)",
                ranks_phrase(&v->progressed, p, sizeof p));
    else
      sb_printf(&b, "no hang found: every operation enqueued on %u communicator%s completed on every rank",
                a->ncomms, a->ncomms == 1 ? "" : "s");
    if (a->ranks_missing.n && v->frames_progress)
      sb_printf(&b, "; %s left no dump", ranks_phrase(&a->ranks_missing, p, sizeof p));
    else if (a->ranks_missing.n) /* healthy without a dump only when a shrink explains it */
      sb_printf(&b, "; %s left no dump (a shrink left %s out: the survivors went on without %s)",
                ranks_phrase(&a->ranks_missing, p, sizeof p), a->ranks_missing.n == 1 ? "it" : "them",
                a->ranks_missing.n == 1 ? "it" : "them");
    break;
  case FA_STATUS_DEADLOCK:
    say_cycle(a, &b);
    break;
  case FA_STATUS_MISMATCH:
    if (v->mismatch_comm < 0) { /* only a unique id shared by several comms */
      if (say_shared(a, &b)) goto oom;
      break;
    }
    if (say_mismatch(a, &b)) goto oom;
    if (v->comm >= 0 && v->comm == v->mismatch_comm && !v->cycle && a->comms[v->comm].stuck &&
        a->comms[v->comm].stuck_seq == a->comms[v->comm].mismatch.seq) {
      /* the hang is at the mismatched seq itself: not a later op */
      sb_printf(&b, "; those calls never complete, and every member that made one waits in it");
    } else if (v->comm >= 0 && (v->cycle || hang_to_say(&a->comms[v->comm]))) {
      sb_printf(&b, "; then ");
      if (v->cycle) say_cycle(a, &b);
      else if (say_hang(a, &b)) goto oom;
    }
    break;
  case FA_STATUS_HANG:
    if (say_hang(a, &b)) goto oom;
    break;
  case FA_STATUS_STRAGGLER:
    say_straggler(a, &b);
    break;
  }
  if (v->outside.n)
  {
    char q[200];
    sb_printf(&b, "; %s wait%s outside NCCL for another rank (%s stack%s: %s), most likely for %s: not %sroot cause%s",
              ranks_phrase(&v->outside, p, sizeof p), v->outside.n == 1 ? "s" : "",
              v->outside.n == 1 ? "its" : "their", v->outside.n == 1 ? "" : "s", v->outside_frame,
              ranks_phrase(&v->root_cause, q, sizeof q), v->outside.n == 1 ? "a " : "", v->outside.n == 1 ? "" : "s");
  }
  if (v->progressed.n && !v->frames_progress &&
      (v->status == FA_STATUS_HANG || v->status == FA_STATUS_MISMATCH ||
       v->status == FA_STATUS_DEADLOCK))
    sb_printf(&b, "; %s progressed between frames (slow, not hung)",
              ranks_phrase(&v->progressed, p, sizeof p));
  if (v->nshared && !(v->status == FA_STATUS_MISMATCH && v->mismatch_comm < 0)) {
    sb_printf(&b, "; and ");
    if (say_shared(a, &b)) goto oom;
  }
  fa_say_salvaged(a, &b);
  sb_printf(&b, ".");
  if (b.oom) goto oom;
  v->summary = b.s;
  return 0;
oom:
  free(b.s);
  return -1;
}

