/* evidence.c — why the verdict is what it is (explain.h): the rules that
 * decided it, by the stable names of fr-analyze(1), RULES, each with the
 * records it read (rank, comm, seq, state, dump frame).
 *
 * Each rule leaves its mark in the model when it decides (a member's state
 * and flags, the verdict's cycle, astray rank, late ranks, mismatch
 * culprit, stragglers, ...); this file reads those marks back in the order
 * the verdict is built, so what it says is what decided, never a second
 * opinion. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "explain.h"
#include "internal.h"
#include "summary.h"

/* Records listed per rule (the others counted in .more). */
#define MAX_RECS 8

typedef struct evl {
  fa_evidence *v;
  uint32_t n, cap;
  int oom;
} evl;

static fa_evidence *rule(evl *e, const char *name, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#include <stdarg.h>
static fa_evidence *rule(evl *e, const char *name, const char *fmt, ...)
{
  if (e->oom || fa_grow(&e->v, &e->cap, e->n + 1, sizeof *e->v)) {
    e->oom = 1;
    return NULL;
  }
  fa_evidence *x = &e->v[e->n++];
  memset(x, 0, sizeof *x);
  x->rule = name;
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  if (!(x->text = fa_strdup(buf))) e->oom = 1;
  return x;
}

static void rec(evl *e, fa_evidence *x, int32_t rank, int32_t comm, int64_t seq, const char *state, int32_t frame)
{
  if (!x || e->oom) return;
  if (x->nrecs == MAX_RECS) {
    x->more++;
    return;
  }
  fa_evidence_rec *r = realloc(x->recs, (x->nrecs + 1) * sizeof *r);
  if (!r) {
    e->oom = 1;
    return;
  }
  x->recs = r;
  r[x->nrecs++] = (fa_evidence_rec){rank, comm, seq, state, frame};
}

/* A member's record: its frame, its comm index, at seq. */
static void mrec(evl *e, fa_evidence *x, const fa_analysis *a, const fa_comm *c, const fa_member *m, int64_t seq,
                 const char *state)
{
  rec(e, x, m->global_rank, (int32_t)(c - a->comms), seq, state, m->frame);
}

/* The members of c in state s (and with flag test f, when given). */
static void members(evl *e, fa_evidence *x, const fa_analysis *a, const fa_comm *c, fa_member_state s,
                    int (*f)(const fa_member *), int64_t seq, const char *state)
{
  for (int32_t q = 0; q < c->size; q++) {
    const fa_member *m = &c->members[q];
    if (m->state == s && (!f || f(m))) mrec(e, x, a, c, m, seq < 0 ? m->last_enqueued : seq, state);
  }
}

static int is_gone(const fa_member *m) { return m->gone; }
static int is_left(const fa_member *m) { return m->left; }
static int is_behind(const fa_member *m) { return m->behind; }
static int is_async(const fa_member *m) { return m->async_error; }
static int is_not_started(const fa_member *m) { return m->not_started; }
static int is_failed(const fa_member *m) { return m->failed_seq >= 0; }
static int is_not_run(const fa_member *m) { return m->not_run; }
static int is_not_returned(const fa_member *m) { return m->not_returned; }
static int is_plain_lag(const fa_member *m)
{
  return !m->gone && !m->left && !m->behind && !m->absent && m->failed_seq < 0 && !m->not_run;
}
static int is_absent(const fa_member *m) { return m->absent; }
static int is_plain_unf(const fa_member *m) { return !m->async_error && !m->not_started && !m->not_returned; }

static uint32_t count(const fa_comm *c, fa_member_state s, int (*f)(const fa_member *))
{
  uint32_t n = 0;
  for (int32_t q = 0; q < c->size; q++) n += c->members[q].state == s && (!f || f(&c->members[q]));
  return n;
}

/* The rules of a stuck comm: which op, and each side's state. */
static void stuck_rules(evl *e, const fa_analysis *a, const fa_comm *c)
{
  char hex[17], op[160];
  int32_t ci = (int32_t)(c - a->comms);
  op_phrase(a, c, c->stuck_seq, op, sizeof op);
  fa_evidence *x = rule(e, "stuck-op",
                        "comm %s: every member with a dump completed %s%lld; %s is not complete on "
                        "every member (%u waiting in it)",
                        fa_hex(c->id, hex), fa_shown_completed(c) < 0 ? "nothing, seq " : "seq ",
                        (long long)fa_shown_completed(c), op, c->nwaiting);
  members(e, x, a, c, FA_MEMBER_WAITING, NULL, (int64_t)c->stuck_seq, "waiting");
  (void)ci;
  if (c->unformed) {
    x = rule(e, "never-formed", "comm %s never formed: no member completed its creation, and %u never "
             "called it", hex, c->nabsent);
    members(e, x, a, c, FA_MEMBER_LAGGING, is_absent, -1, "never_called_creation");
  }
  if (count(c, FA_MEMBER_LAGGING, is_plain_lag)) {
    x = rule(e, "never-entered", "its last enqueued op on comm %s is before %s, which the others "
             "entered", hex, op);
    members(e, x, a, c, FA_MEMBER_LAGGING, is_plain_lag, -1, "lagging");
  }
  if (count(c, FA_MEMBER_LAGGING, is_failed)) {
    x = rule(e, "call-failed", "its own call on comm %s (its creation, or a collective) returned an error "
             "and launched nothing: it took no part from that seq on", hex);
    for (int32_t q = 0; q < c->size; q++)
      if (c->members[q].state == FA_MEMBER_LAGGING && is_failed(&c->members[q]))
        mrec(e, x, a, c, &c->members[q], c->members[q].failed_seq, "call_failed");
  }
  if (count(c, FA_MEMBER_LAGGING, is_not_run)) {
    x = rule(e, "graph-not-launched", "its record of an op on comm %s was captured into a CUDA graph that "
             "shows no launch, where another member called that op eagerly", hex);
    for (int32_t q = 0; q < c->size; q++)
      if (c->members[q].state == FA_MEMBER_LAGGING && is_not_run(&c->members[q]))
        mrec(e, x, a, c, &c->members[q], c->members[q].not_run_seq, "captured");
  }
  if (count(c, FA_MEMBER_LAGGING, is_gone)) {
    x = rule(e, "process-ended", "its process ended (dump written at exit or on a fatal signal) with "
             "%s in flight", op);
    members(e, x, a, c, FA_MEMBER_LAGGING, is_gone, -1, "ended");
  }
  if (count(c, FA_MEMBER_LAGGING, is_left)) {
    x = rule(e, "tore-down", "it tore comm %s down (destroy, finalize or abort) while the others wait "
             "in %s", hex, op);
    members(e, x, a, c, FA_MEMBER_LAGGING, is_left, -1, "tore_down");
  }
  if (count(c, FA_MEMBER_LAGGING, is_behind)) {
    x = rule(e, "behind-on-stream", "it enqueued %s behind an op of its stream that never finished: "
             "not a cause by itself", op);
    members(e, x, a, c, FA_MEMBER_LAGGING, is_behind, (int64_t)c->stuck_seq, "behind");
  }
  if (c->nno_dump) {
    x = rule(e, "no-dump", "%u member(s) of comm %s left no dump: what they did is unknown, the others "
             "wait for them", c->nno_dump, hex);
    members(e, x, a, c, FA_MEMBER_NO_DUMP, NULL, (int64_t)c->stuck_seq, "no_dump");
  }
  if (count(c, FA_MEMBER_UNFINISHED, is_plain_unf)) {
    x = rule(e, "unfinished", "it enqueued and started %s, which other members completed; its own "
             "never finished (its device side)", op);
    members(e, x, a, c, FA_MEMBER_UNFINISHED, is_plain_unf, (int64_t)c->stuck_seq, "unfinished");
    members(e, x, a, c, FA_MEMBER_PASSED, NULL, (int64_t)c->stuck_seq, "completed");
  }
  if (count(c, FA_MEMBER_UNFINISHED, is_not_started)) {
    x = rule(e, "never-started", "its %s never started while other members' did, and no NCCL op of its "
             "stream holds it: other work on that stream never finished", op);
    members(e, x, a, c, FA_MEMBER_UNFINISHED, is_not_started, (int64_t)c->stuck_seq, "not_started");
  }
  if (count(c, FA_MEMBER_UNFINISHED, is_not_returned)) {
    x = rule(e, "never-returned", "its call of %s is still in progress (IN_CALL) a second or more after it "
             "was made, while every other member's call returned and waits", op);
    members(e, x, a, c, FA_MEMBER_UNFINISHED, is_not_returned, (int64_t)c->stuck_seq, "in_call");
  }
  if (count(c, FA_MEMBER_UNFINISHED, is_async)) {
    x = rule(e, "async-error", "NCCL reported an asynchronous error on its comm %s with %s in flight",
             hex, op);
    members(e, x, a, c, FA_MEMBER_UNFINISHED, is_async, (int64_t)c->stuck_seq, "async_error");
  }
  if (c->nahead) {
    x = rule(e, "alone-ahead", "alone past the point where every other member of comm %s is idle", hex);
    members(e, x, a, c, FA_MEMBER_AHEAD, NULL, -1, "ahead");
  }
}

/* Links: stopped (proxy progress) or p2p ops without counterpart. */
static void link_rules(evl *e, const fa_analysis *a)
{
  const fa_verdict *v = &a->verdict;
  fa_evidence *stop = NULL, *p2p = NULL;
  char ends[64];
  for (uint32_t i = 0; i < v->nlinks; i++) {
    const fa_link *l = &v->links[i];
    if (l->evidence && !stop)
      stop = rule(e, "link-stopped", "NCCL's proxy progress shows link %s channel %d stopped in %s",
                  fa_link_ends(l, "->", ends, sizeof ends), l->channel,
                  l->state ? frz_proxy_state_name(l->state) : "a wait");
    if (l->evidence) {
      rec(e, stop, l->src, l->comm, (int64_t)l->seq, "link_src", -1);
      rec(e, stop, l->dst, l->comm, (int64_t)l->seq, "link_dst", -1);
    }
    if (l->p2p && !l->joined && !p2p)
      p2p = rule(e, "p2p-unmatched", "a Send or Recv waits for a counterpart the peer never posted "
                 "(first: %s, p2p seq %llu)", fa_link_ends(l, "->", ends, sizeof ends),
                 (unsigned long long)l->seq);
    if (l->p2p && !l->joined) {
      rec(e, p2p, fa_p2p_waiter(l), l->comm, (int64_t)l->seq, "p2p_waiting", -1);
      rec(e, p2p, l->pending_dir == FRZ_DIR_SEND ? l->dst : l->src, l->comm, (int64_t)l->seq,
          l->counterpart_no_dump ? "no_dump" : l->counterpart_late ? "came_late"
          : l->counterpart_ended ? "ended" : l->counterpart_queued ? "queued"
          : l->counterpart_not_started ? "not_started" : "never_posted", -1);
    }
  }
}

/* The frame (index into a->frames) of global rank g's latest dump; -1. */
static int32_t frame_of(const fa_analysis *a, int32_t g)
{
  int32_t k = fa_find_rank(a, g);
  if (k < 0) return -1;
  const fa_frame *f = fa_rank_latest(a, &a->ranks[k]);
  return (int32_t)(f - a->frames);
}

static void verdict_rules(evl *e, const fa_analysis *a)
{
  const fa_verdict *v = &a->verdict;
  char p[200], q[200], hex[17];
  fa_evidence *x;
  if (v->comm >= 0 && a->comms[v->comm].stuck) stuck_rules(e, a, &a->comms[v->comm]);
  for (uint32_t i = 0; i < v->ncycle; i++) { /* the other comms of a cycle */
    int32_t c = v->cycle[i].comm;
    int seen = c == v->comm;
    for (uint32_t k = 0; k < i; k++) seen |= v->cycle[k].comm == c;
    if (!seen && !v->cycle[i].p2p && a->comms[c].stuck) stuck_rules(e, a, &a->comms[c]);
  }
  if (v->ncycle) {
    x = rule(e, "wait-for-cycle", "the wait-for graph across communicators closes a cycle of %u steps "
             "(each rank waits in one comm for the next)", v->ncycle);
    for (uint32_t i = 0; i < v->ncycle; i++)
      rec(e, x, v->cycle[i].rank, v->cycle[i].comm, (int64_t)v->cycle[i].seq,
          v->cycle[i].p2p ? "p2p_waiting" : "waiting", frame_of(a, v->cycle[i].rank));
  }
  if (v->astray >= 0) {
    x = rule(e, "went-astray", "rank %d's own records break its rounds (it skipped, reordered or "
             "redirected a call it made in each earlier round); the other ranks of the cycle kept "
             "theirs", v->astray);
    rec(e, x, v->astray, -1, -1, "astray", frame_of(a, v->astray));
  }
  if (v->left_out_too.n) {
    x = rule(e, "left-out", "%s left out a call of a stuck op the same way (their rounds say so)",
             ranks_phrase(&v->left_out_too, p, sizeof p));
    for (uint32_t i = 0; i < v->left_out_too.n; i++)
      rec(e, x, v->left_out_too.v[i], -1, -1, "left_out", frame_of(a, v->left_out_too.v[i]));
  }
  if (v->changed >= 0) {
    x = rule(e, "rounds-changed", "rank %d's current round is not its periodic pattern while the others "
             "keep theirs (said, not blamed alone)", v->changed);
    rec(e, x, v->changed, -1, -1, "changed", frame_of(a, v->changed));
  }
  if (v->late.n) {
    x = rule(e, "came-too-late", "%s entered the stuck op only after %s had given up on it (up to "
             "%.1f s later)", ranks_phrase(&v->late, p, sizeof p), ranks_phrase(&v->late_left, q, sizeof q),
             (double)v->late_by_ns / 1e9);
    for (uint32_t i = 0; i < v->late.n; i++) rec(e, x, v->late.v[i], v->comm, -1, "came_late", frame_of(a, v->late.v[i]));
    for (uint32_t i = 0; i < v->late_left.n; i++)
      rec(e, x, v->late_left.v[i], v->comm, -1, "gave_up", frame_of(a, v->late_left.v[i]));
  }
  if (v->all_joined && !v->root_cause.n) {
    x = rule(e, "all-joined", "every member entered the stuck op and none completed it: the device or "
             "network side, nobody to blame");
    if (v->comm >= 0) members(e, x, a, &a->comms[v->comm], FA_MEMBER_WAITING, NULL,
                              (int64_t)a->comms[v->comm].stuck_seq, "waiting");
  }
  if (v->mismatch_comm >= 0) {
    const fa_comm *c = &a->comms[v->mismatch_comm];
    const fa_mismatch *mm = &c->mismatch;
    x = rule(e, "first-divergence", "comm %s: at seq %llu its members' calls differ; %s",
             fa_hex(c->id, hex), (unsigned long long)mm->seq,
             mm->culprit >= 0 ? "the minority group is the culprit" : "no minority group: no single culprit");
    for (uint32_t k2 = 0; k2 < mm->ngroups; k2++) { /* the minority (culprit) first */
      uint32_t gi = mm->culprit >= 0 ? (k2 == 0 ? (uint32_t)mm->culprit : k2 - (k2 <= (uint32_t)mm->culprit)) : k2;
      const fa_group *g = &mm->groups[gi];
      for (uint32_t k = 0; k < g->n; k++) {
        int32_t cr = mm->members[g->first + k];
        const fa_member *m = cr >= 0 && cr < c->size ? &c->members[cr] : NULL;
        if (m) mrec(e, x, a, c, m, (int64_t)mm->seq, (int32_t)gi == mm->culprit ? "minority" : "majority");
      }
    }
  }
  if (v->p2p_hub >= 0) {
    x = rule(e, "p2p-hub", "every p2p transfer of comm %s without a counterpart touches rank %d, and the "
             "ranks at their other ends reached that round: its calls, not theirs",
             fa_hex(a->comms[v->p2p_hub_comm].id, hex), v->p2p_hub);
    const fa_comm *c = &a->comms[v->p2p_hub_comm];
    for (uint32_t i = 0; i < c->nlinks; i++)
      if (c->links[i].p2p && !c->links[i].joined)
        rec(e, x, c->links[i].src == v->p2p_hub ? c->links[i].dst : c->links[i].src, v->p2p_hub_comm,
            (int64_t)c->links[i].seq, "other_end", -1);
    rec(e, x, v->p2p_hub, v->p2p_hub_comm, -1, "hub", frame_of(a, v->p2p_hub));
  }
  if (v->nunexplained) {
    x = rule(e, "unexplained", "%u observation(s) no fault of the verdict explains (fr-analyze(1), THE MODEL)",
             v->nunexplained);
    for (uint32_t i = 0; i < v->nobs; i++)
      if (v->obs[i].by < 0)
        rec(e, x, v->obs[i].rank, v->obs[i].comm, (int64_t)v->obs[i].seq, fa_obs_kind_name(v->obs[i].kind),
            frame_of(a, v->obs[i].rank));
  }
  if (v->outside.n) {
    x = rule(e, "waits-outside-nccl", "%s would be root causes, but %s stack waits for another rank "
             "outside NCCL (%s)", ranks_phrase(&v->outside, p, sizeof p), v->outside.n == 1 ? "its" : "their",
             v->outside_frame ? v->outside_frame : "?");
    for (uint32_t i = 0; i < v->outside.n; i++) rec(e, x, v->outside.v[i], -1, -1, "outside", frame_of(a, v->outside.v[i]));
  }
  if (v->nstragglers) {
    x = rule(e, "late-arrivals", "%u rank(s) arrive late (%lld ms or more after the median arrival) at "
             "most completed collectives", v->nstragglers, (long long)(FA_LATE_NS / 1000000));
    for (uint32_t i = 0; i < v->nstragglers; i++)
      rec(e, x, v->stragglers[i].rank, -1, -1, "straggler", frame_of(a, v->stragglers[i].rank));
  }
  if (v->progressed.n) {
    x = rule(e, "progressed", "%s completed more ops in a later frame than in the first: slow, not hung",
             ranks_phrase(&v->progressed, p, sizeof p));
    for (uint32_t i = 0; i < v->progressed.n; i++)
      rec(e, x, v->progressed.v[i], -1, -1, "progressed", frame_of(a, v->progressed.v[i]));
  }
  if (v->nshared) {
    x = rule(e, "shared-id", "one unique id made %u comms (several groups of ranks claim comm %s)",
             a->comms[v->shared[0]].ninstances, fa_hex(a->comms[v->shared[0]].id, hex));
    (void)x;
  }
  link_rules(e, a);
}

static void inconclusive_rules(evl *e, const fa_analysis *a)
{
  char p[200];
  fa_evidence *x;
  if (!a->nframes) {
    x = rule(e, "no-usable-dump", "no input decoded as a dump (%u file(s), %u problem(s), %u "
             "announcement(s))", a->nfiles, a->nproblems, a->nalive);
    for (uint32_t i = 0; i < a->nalive; i++) rec(e, x, a->alive[i].global_rank, -1, -1, "announced", -1);
    return;
  }
  if (a->conflict_rank >= 0) {
    x = rule(e, "rank-conflict", "two different dumps claim rank %d", a->conflict_rank);
    for (uint32_t i = 0; i < a->nframes; i++)
      if (a->frames[i].dump.process.global_rank == a->conflict_rank)
        rec(e, x, a->conflict_rank, -1, -1, "claims", (int32_t)i);
    return;
  }
  if (a->beside.n) {
    x = rule(e, "outside-inputs", "%s have dumps beside the inputs, not given",
             ranks_phrase(&a->beside, p, sizeof p));
    for (uint32_t i = 0; i < a->beside.n; i++) rec(e, x, a->beside.v[i], -1, -1, "not_given", -1);
  }
  if (a->ranks_missing.n) {
    x = rule(e, "ranks-without-dump", "nothing is stuck among the ranks that dumped, and %s left no "
             "dump here: they may be behind", ranks_phrase(&a->ranks_missing, p, sizeof p));
    for (uint32_t i = 0; i < a->ranks_missing.n; i++)
      rec(e, x, a->ranks_missing.v[i], -1, -1, fa_alive_of(a, a->ranks_missing.v[i]) ? "announced" : "no_dump", -1);
    return;
  }
  for (uint32_t i = 0; i < a->ncomms; i++) {
    const fa_comm *c = &a->comms[i];
    char hex[17];
    if (fa_counters_unknown(a, c)) {
      x = rule(e, "counters-unknown", "comm %s: PyTorch's pg_status gives counters that cannot tell "
               "a pending op", fa_hex(c->id, hex));
      return;
    }
    if ((!c->tracked && c->seq_hi >= 0) || c->unknown_from >= 0) {
      x = rule(e, "completion-unknown", "comm %s: every rank enqueued up to seq %lld and whether it "
               "completed was not recorded", fa_hex(c->id, hex), (long long)c->seq_hi);
      for (int32_t q = 0; q < c->size; q++)
        if (c->members[q].rank >= 0) mrec(e, x, a, c, &c->members[q], c->seq_hi, "unknown");
      return;
    }
  }
}

int fa_evidence_list(const fa_analysis *a, fa_evidence **out, uint32_t *n)
{
  evl e = {NULL, 0, 0, 0};
  const fa_verdict *v = &a->verdict;
  switch (v->status) {
  case FA_STATUS_HEALTHY: {
    fa_evidence *x = rule(&e, v->frames_progress ? "progressed" : "all-completed",
                          v->frames_progress ? "every rank with several frames progressed between them"
                                             : "on every comm, every member completed every op it enqueued");
    for (uint32_t i = 0; i < a->ncomms && x; i++) {
      const fa_comm *c = &a->comms[i];
      if (i == MAX_RECS) { /* the rest counted */
        x->more += a->ncomms - i;
        break;
      }
      for (int32_t q = 0; q < c->size; q++)
        if (c->members[q].rank >= 0) {
          mrec(&e, x, a, c, &c->members[q], c->last_completed, "completed");
          break;
        }
    }
    break;
  }
  case FA_STATUS_INCONCLUSIVE:
    inconclusive_rules(&e, a);
    break;
  default:
    verdict_rules(&e, a);
    break;
  }
  if (e.oom) {
    fa_evidence_free(e.v, e.n);
    return -1;
  }
  *out = e.v;
  *n = e.n;
  return 0;
}

void fa_evidence_free(fa_evidence *e, uint32_t n)
{
  for (uint32_t i = 0; e && i < n; i++) {
    free(e[i].text);
    free(e[i].recs);
  }
  free(e);
}

char *fa_evidence_rec_text(const fa_analysis *a, const fa_evidence_rec *r, char *buf, size_t len)
{
  char hex[17], f[512];
  int n = snprintf(buf, len, "rank %d: %s", r->rank, r->state);
  if (r->seq >= 0 && n < (int)len) n += snprintf(buf + n, len - (size_t)n, " at seq %lld", (long long)r->seq);
  if (r->comm >= 0 && n < (int)len)
    n += snprintf(buf + n, len - (size_t)n, " %s comm %s", r->seq >= 0 ? "of" : "on", fa_hex(a->comms[r->comm].id, hex));
  if (r->frame >= 0 && n < (int)len) {
    const fa_frame *fr = &a->frames[r->frame];
    const char *slash = fr->name ? strrchr(fr->name, '/') : NULL;
    snprintf(buf + n, len - (size_t)n, "; dump %s frame %u",
             fa_sanitize(slash ? slash + 1 : fr->name ? fr->name : "?", f, sizeof f), fr->dump.process.frame);
  }
  return buf;
}
