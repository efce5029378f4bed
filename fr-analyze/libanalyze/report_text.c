/* report_text.c — the human report: a short verdict first, then the details
 * per communicator and the input. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "explain.h"
#include "internal.h"

#define MAX_LINKS_SHOWN 16
#define MAX_VERDICT_LINKS 6
#define MAX_GROUPS_SHOWN 8
#define RANKSET_LEN 256

/* A rank set into buf ("none" when empty). */
static const char *rset(const fa_ranks *r, char *buf)
{
  if (!r->n) return "none";
  return fa_format_ranks(r->v, r->n, buf, RANKSET_LEN);
}

/* A global rank, "?" when unknown. */
static const char *rk(int32_t g, char *buf)
{
  if (g < 0) return "?";
  snprintf(buf, 16, "%d", g);
  return buf;
}

/* "AllReduce seq 36" with the op of comm c at seq, "seq 36" when unknown. */
static void op_at(FILE *o, const fa_analysis *a, const fa_comm *c, uint64_t seq)
{
  const frz_dump *d;
  char nm[FRZ_PT_NAME_MAX];
  const frz_record *r = fa_comm_record_in(a, c, seq, &d);
  if (r) fprintf(o, "%s seq %llu", fa_sanitize(fa_record_op_name(d, r), nm, sizeof nm), (unsigned long long)seq);
  else fprintf(o, "seq %llu", (unsigned long long)seq);
}

/* "12 (never finished all_to_all seq 20530 on pg 74)" for each root cause
 * of a PyTorch job, after the rank list (where each one stopped). */
static void roots_where(FILE *o, const fa_analysis *a)
{
  const fa_verdict *v = &a->verdict;
  char nm[FRZ_PT_NAME_MAX];
  int any = 0;
  for (uint32_t i = 0; i < v->root_cause.n && i < 4; i++) {
    const fa_root *w = &v->roots[i];
    if (w->comm < 0 || !a->comms[w->comm].pt || w->state == FA_MEMBER_IDLE) continue;
    const fa_comm *c = &a->comms[w->comm];
    const frz_dump *d;
    const frz_record *r = fa_comm_record_in(a, c, w->seq, &d);
    char pg[FRZ_PT_NAME_MAX];
    int not_started = 0; /* (its op never started: find_not_started) */
    for (int32_t m = 0; m < c->size; m++)
      if (c->members[m].global_rank == w->rank && c->members[m].not_started) not_started = 1;
    fprintf(o, "\n                  %d: %s %s seq %llu, pg %s", w->rank,
            w->state == FA_MEMBER_UNFINISHED ? (not_started ? "never started" : "unfinished") :
            w->state == FA_MEMBER_NO_DUMP ? "no dump at" : "never entered",
            r ? fa_sanitize(fa_record_op_name(d, r), nm, sizeof nm) : "collective",
            (unsigned long long)w->seq, fa_sanitize(c->pt->name, pg, sizeof pg));
    any = 1;
  }
  (void)any;
}

/* The comm ranks of a comm that never formed: who arrived in its creation
 * call, who did not, and what the ones no dump places may be. */
static int unformed_text(FILE *o, const fa_comm *c)
{
  char buf[200];
  fa_ranks in = {NULL, 0}, out = {NULL, 0};
  uint32_t cap_i = 0, cap_o = 0, nout = 0;
  for (int32_t r = 0; r < c->size; r++) {
    const fa_member *m = &c->members[r];
    if (m->rank >= 0 && fa_ranks_push(&in, &cap_i, r)) goto oom;
    if (m->rank < 0 && fa_ranks_push(&out, &cap_o, r)) goto oom;
  }
  fprintf(o, "    never formed:   comm rank%s %s arrived in its creation", in.n == 1 ? "" : "s",
          fa_format_ranks(in.v, in.n, buf, sizeof buf));
  fprintf(o, "; comm rank%s %s did not\n", out.n == 1 ? "" : "s", fa_format_ranks(out.v, out.n, buf, sizeof buf));
  for (int32_t r = 0; r < c->size && nout < 8; r++) {
    const fa_member *m = &c->members[r];
    if (m->rank >= 0) continue;
    nout++;
    if (m->global_rank >= 0)
      fprintf(o, "      comm rank %d: rank %d%s\n", r, m->global_rank,
              m->absent ? ", whose dump holds no record of the comm" : ", no dump");
    else if (m->ncand)
      fprintf(o, "      comm rank %d: one of ranks %s (not placed by the evidence)\n", r,
              fa_format_ranks(m->cand, m->ncand, buf, sizeof buf));
  }
  fa_ranks_free(&in);
  fa_ranks_free(&out);
  return 0;
oom:
  fa_ranks_free(&in);
  fa_ranks_free(&out);
  return -1;
}

/* " (1048576 x float32, sum)" for a collective record. */
static int op_args(FILE *o, const frz_record *r)
{
  unsigned kind = r->kind != FRZ_KIND_NONE ? r->kind : (unsigned)frz_op_kind(r->op);
  if (kind != FRZ_KIND_COLL) return 0;
  fprintf(o, " (%llu x %s", (unsigned long long)r->count, frz_dtype_name(r->dtype));
  if (r->redop != 255) fprintf(o, ", %s", frz_redop_name(r->redop));
  if (r->peer >= 0) fprintf(o, ", root %d", r->peer);
  fputc(')', o);
  return 1;
}

/* One link in a list. */
static void link_text(FILE *o, const fa_link *l)
{
  char b1[16], b2[16], ends[64];
  fputs(fa_link_ends(l, "->", ends, sizeof ends), o);
  if (l->p2p) {
    int send = l->pending_dir == FRZ_DIR_SEND;
    if (l->joined && l->held_by_group)
      fprintf(o, " (p2p seq %llu: held by its NCCL group, where a peer never posted", (unsigned long long)l->seq);
    else if (l->joined)
      fprintf(o, " (p2p seq %llu: both posted and started it, neither completed: device or network side",
              (unsigned long long)l->seq);
    else if (l->counterpart_late)
      fprintf(o, " (p2p seq %llu: rank %s gave up on its %s, rank %s posted its %s %.1f s later: it came too late",
              (unsigned long long)l->seq, rk(send ? l->src : l->dst, b1), send ? "Send" : "Recv",
              rk(send ? l->dst : l->src, b2), send ? "Recv" : "Send", (double)l->late_by_ns / 1e9);
    else if (l->counterpart_not_started)
      fprintf(o, " (p2p seq %llu: %s of rank %s waits, %s never started", (unsigned long long)l->seq,
              send ? "Send" : "Recv", rk(send ? l->src : l->dst, b1), send ? "Recv" : "Send");
    else if (l->counterpart_ended)
      fprintf(o, " (p2p seq %llu: %s of rank %s waits, rank %s ended with its %s in flight",
              (unsigned long long)l->seq, send ? "Send" : "Recv", rk(send ? l->src : l->dst, b1),
              rk(send ? l->dst : l->src, b2), send ? "Recv" : "Send");
    else if (l->counterpart_queued)
      fprintf(o, " (p2p seq %llu: %s of rank %s waits, %s still queued", (unsigned long long)l->seq,
              send ? "Send" : "Recv", rk(send ? l->src : l->dst, b1), send ? "Recv" : "Send");
    else
      fprintf(o, " (p2p seq %llu: %s of rank %s waits, %s", (unsigned long long)l->seq,
              send ? "Send" : "Recv", rk(send ? l->src : l->dst, b1),
              send ? "no Recv posted" : "no Send posted");
    if (l->counterpart_no_dump) fprintf(o, "; rank %s left no dump", rk(send ? l->dst : l->src, b2));
    fputc(')', o);
  } else if (l->inferred) {
    fputs(" (inferred)", o);
  }
  if (l->channel >= 0) fprintf(o, " channel %d", l->channel);
  if (l->evidence) {
    fprintf(o, " (%s", l->state ? frz_proxy_state_name(l->state) : "stopped");
    if (l->stalled_ns) fprintf(o, " for %.1f s", (double)l->stalled_ns / 1e9);
    fputc(')', o);
  }
}

/* A list of links, comma separated, capped. */
/* The links, one a line when long, continuation lines indented to `col`
 * (where the first one starts). */
static void links_text(FILE *o, const fa_link *ls, uint32_t n, int col, uint32_t max)
{
  int at = col; /* the column the next text starts at */
  for (uint32_t i = 0; i < n; i++) {
    if (i == max) {
      if (at + 16 > 80) fprintf(o, ",\n%*sand %u more", col, "", n - i);
      else fprintf(o, ", and %u more", n - i);
      break;
    }
    char one[256];
    FILE *m = fmemopen(one, sizeof one, "w");
    if (!m) return;
    link_text(m, &ls[i]);
    long len = ftell(m);
    fclose(m);
    one[len < (long)sizeof one ? len : (long)sizeof one - 1] = '\0';
    /* p2p links and links from proxy progress are long: one a line, under
     * the first; short ones share a line while it stays within 80 columns */
    int long_ = ls[i].p2p || ls[i - (i > 0)].p2p || ls[i].evidence || ls[i - (i > 0)].evidence;
    if (i && (long_ || at + 2 + (int)strlen(one) + 1 > 80)) {
      fprintf(o, ",\n%*s", col, "");
      at = col;
    } else if (i) {
      fputs(", ", o);
      at += 2;
    }
    fputs(one, o);
    at += (int)strlen(one);
  }
}

/* The groups of a mismatch, one per line. */
static int mismatch_text(FILE *o, const fa_comm *c, const char *indent)
{
  const fa_mismatch *mm = &c->mismatch;
  char buf[RANKSET_LEN];
  for (uint32_t i = 0; i < mm->ngroups; i++) {
    if (i == MAX_GROUPS_SHOWN) {
      fprintf(o, "%s... and %u more groups\n", indent, mm->ngroups - i);
      break;
    }
    const fa_group *g = &mm->groups[i];
    fa_ranks r = {NULL, 0};
    uint32_t cap = 0;
    for (uint32_t k = 0; k < g->n; k++) {
      int32_t gr = fa_global_of(c, mm->members[g->first + k]);
      if (gr >= 0 && fa_ranks_push(&r, &cap, gr)) {
        fa_ranks_free(&r);
        return -1;
      }
    }
    fa_ranks_sort(&r);
    char sig[160];
    fprintf(o, "%s%s %s: %s", indent, r.n == 1 ? "rank " : "ranks", rset(&r, buf),
            fa_sig_text_fields(&g->sig, mm->fields, sig, sizeof sig));
    fprintf(o, "%s%s\n", g->completed ? " done" : "",
            (int32_t)i == mm->culprit ? " <- culprit" : "");
    fa_ranks_free(&r);
  }
  if (mm->culprit < 0) fprintf(o, "%sno single culprit (no minority group)\n", indent);
  if (mm->later)
    fprintf(o, "%sthen %llu later seq%s diverge too (the last at seq %llu)\n", indent,
            (unsigned long long)mm->later, mm->later == 1 ? "" : "s",
            (unsigned long long)mm->last_seq);
  return 0;
}

/* "op, count" for FA_FIELD_* bits f. */
static void field_list(FILE *o, unsigned f)
{
  int first = 1;
  for (unsigned i = 0; i < FA_NFIELDS; i++)
    if (f & (1u << i)) {
      fprintf(o, "%s%s", first ? "" : ", ", fa_field_name(i));
      first = 0;
    }
}

/* ---- the verdict ---------------------------------------------------------------- */

/* Text wrapped at blanks to lines of at most 80 columns, each indented by
 * `indent` spaces (a word longer than a line stays whole). */
static void wrapped(FILE *o, const char *text, int indent)
{
  fa_wrap_text(o, text, indent, indent);
}

/* The ANSI colour of a status: red for a problem, yellow for a straggler,
 * green when healthy. */
static const char *status_color(fa_status s)
{
  switch (s) {
  case FA_STATUS_HEALTHY: return "\033[1;32m";
  case FA_STATUS_STRAGGLER:
  case FA_STATUS_INCONCLUSIVE: return "\033[1;33m";
  default: return "\033[1;31m";
  }
}

/* One line (wrapped at 80 columns, under its value) on the quality of the
 * data behind the verdict. */
static void data_line(FILE *o, const fa_analysis *a)
{
  uint32_t multi = 0, expected = a->nranks + a->ranks_missing.n;
  for (uint32_t i = 0; i < a->nranks; i++)
    if (a->ranks[i].nframes > 1) multi++;
  char text[400];
  int n = snprintf(text, sizeof text, "%u of %u ranks dumped", a->nranks, expected);
  if (multi && n < (int)sizeof text)
    n += snprintf(text + n, sizeof text - (size_t)n, ", %u of them dumped more than once (frames)", multi);
  if (a->nproblems && n < (int)sizeof text)
    n += snprintf(text + n, sizeof text - (size_t)n, "; %u input problem%s (below)", a->nproblems,
                  a->nproblems == 1 ? "" : "s");
  int64_t skew = 0;
  for (uint32_t i = 0; i < a->nhosts; i++) {
    int64_t d = a->hosts[i].offset_ns < 0 ? -a->hosts[i].offset_ns : a->hosts[i].offset_ns;
    if (d > skew) skew = d;
  }
  if (a->nhosts > 1 && n < (int)sizeof text)
    snprintf(text + n, sizeof text - (size_t)n, "; %u hosts, clocks %lld ms apart", a->nhosts,
             (long long)(skew / 1000000));
  /* the first line after the label, the rest under it (18 columns in) */
  const char *t = text;
  int len = (int)strlen(t), cut = len;
  if (len > 80 - 18) {
    cut = 80 - 18;
    while (cut > 0 && t[cut] != ' ') cut--;
    if (cut == 0) cut = (int)strcspn(t, " ");
  }
  fprintf(o, "  data:           %.*s\n", cut, t);
  t += cut;
  while (*t == ' ') t++;
  if (*t) wrapped(o, t, 18);
}

/* "6 (late at 30 of 30 ops, 200 ms late on average)" for the first few. */
static void stragglers_line(FILE *o, const fa_verdict *v)
{
  fputs("  stragglers:     ", o);
  if (!v->nstragglers) fputs("none", o);
  for (uint32_t i = 0; i < v->nstragglers && i < 3; i++)
    fprintf(o, "%s%d (late at %u of %u ops, +%lld ms)", i ? ", " : "", v->stragglers[i].rank,
            v->stragglers[i].late_ops, v->stragglers[i].ops,
            (long long)(v->stragglers[i].mean_late_ns / 1000000));
  if (v->nstragglers > 3) fprintf(o, ", and %u more", v->nstragglers - 3);
  fputc('\n', o);
}

/* "  unexplained: waiting of rank 3 in seq 5 on comm X; ..." (the first few) */
static void unexplained_text(FILE *o, const fa_analysis *a)
{
  const fa_verdict *v = &a->verdict;
  fprintf(o, "  unexplained:    %u observation%s no fault of this verdict explains\n"
          "                  (in flight when dumped, or a fault the dumps do not show):\n", v->nunexplained,
          v->nunexplained == 1 ? "" : "s");
  uint32_t shown = 0;
  for (uint32_t i = 0; i < v->nobs && shown < 4; i++) {
    const fa_obs *b = &v->obs[i];
    if (b->by >= 0) continue;
    char hex[17], who[32] = "", peer[32] = "";
    if (b->rank >= 0) snprintf(who, sizeof who, " of rank %d", b->rank);
    if (b->peer >= 0) snprintf(peer, sizeof peer, " with rank %d", b->peer);
    fprintf(o, "                  %s%s%s%s, seq %llu on comm %s\n", who[0] ? who + 4 : "", who[0] ? ": " : "",
            fa_obs_kind_name(b->kind), peer, (unsigned long long)b->seq,
            b->comm >= 0 ? fa_hex(a->comms[b->comm].id, hex) : "?");
    shown++;
  }
  if (v->nunexplained > shown) fprintf(o, "                  and %u more (--json)\n", v->nunexplained - shown);
}

static int verdict_text(FILE *o, const fa_analysis *a, const fa_text_opts *opt)
{
  const fa_verdict *v = &a->verdict;
  char buf[RANKSET_LEN], hex[200], safe[4096];
  if (opt->color) fprintf(o, "verdict: %s%s\033[0m\n", status_color(v->status), fa_status_name(v->status));
  else fprintf(o, "verdict: %s\n", fa_status_name(v->status));
  wrapped(o, fa_sanitize(v->summary ? v->summary : "", safe, sizeof safe), 2);
  if (v->nunexplained) unexplained_text(o, a);
  if (v->status == FA_STATUS_HEALTHY || v->status == FA_STATUS_INCONCLUSIVE) {
    data_line(o, a);
    return 0;
  }
  if (v->status == FA_STATUS_STRAGGLER) {
    stragglers_line(o, v);
    data_line(o, a);
    return 0;
  }
  fprintf(o, "  lagging ranks:  %s\n", rset(&v->lagging, buf));
  if (v->ahead.n) fprintf(o, "  ahead ranks:    %s\n", rset(&v->ahead, buf));
  fprintf(o, "  root cause:     %s", rset(&v->root_cause, buf));
  roots_where(o, a);
  fputc('\n', o);
  /* the comm of the hang; without one, the comm of the mismatch */
  const fa_comm *c = v->comm >= 0 ? &a->comms[v->comm]
                     : v->mismatch_comm >= 0 ? &a->comms[v->mismatch_comm] : NULL;
  fputs("  last completed: ", o);
  if (c && fa_shown_completed(c) >= 0) {
    op_at(o, a, c, (uint64_t)c->last_completed);
    fprintf(o, " on comm %s\n", fa_hex(c->id, hex));
  } else {
    fputs("none\n", o);
  }
  fputs("  stuck:          ", o);
  if (c && c->stuck) {
    op_at(o, a, c, c->stuck_seq);
    fprintf(o, " on comm %s", fa_hex(c->id, hex));
    const frz_record *r = fa_comm_record(a, c, c->stuck_seq);
    if (r && (r->flags & FRZ_RF_GRAPH_REPLAY) && r->graph_id) /* one launch of a CUDA graph */
      fprintf(o, "\n                  replay %llu of graph %u", (unsigned long long)r->replay, (unsigned)r->graph_id);
    fa_ranks w, m, bh = {NULL, 0}; /* (bh: members behind other ops of their stream) */
    if (fa_comm_ranks(c, FA_MEMBER_WAITING, &w)) return -1;
    if (fa_comm_missing(c, &m)) {
      fa_ranks_free(&w);
      return -1;
    }
    fputs("\n                 ", o);
    if (r && op_args(o, r)) fputc(',', o);
    if (c->nahead) { /* those there are ahead: the others are not missing, they are done */
      fa_ranks h;
      if (fa_comm_ranks(c, FA_MEMBER_AHEAD, &h)) {
        fa_ranks_free(&w);
        fa_ranks_free(&m);
        return -1;
      }
      fprintf(o, " ahead %s; the others done with the comm", rset(&h, buf));
      fa_ranks_free(&h);
    } else {
      fprintf(o, " waiting %s", rset(&w, buf));
      /* those that enqueued it behind an unfinished op of their stream are
       * not missing: they wait for that op */
      uint32_t cap = 0;
      for (int32_t q = 0; q < c->size; q++)
        if (c->members[q].behind && c->members[q].global_rank >= 0 &&
            fa_ranks_push(&bh, &cap, c->members[q].global_rank)) {
          fa_ranks_free(&w);
          fa_ranks_free(&m);
          fa_ranks_free(&bh);
          return -1;
        }
      fa_ranks_sort(&bh);
      uint32_t n = 0;
      for (uint32_t i = 0; i < m.n; i++)
        if (!fa_ranks_has(&bh, m.v[i])) m.v[n++] = m.v[i];
      m.n = n;
      fprintf(o, "; missing %s", rset(&m, buf));
    }
    uint32_t placed_not = 0; /* of a comm that never formed, comm ranks not placed */
    for (int32_t q = 0; c->unformed && q < c->size; q++)
      placed_not += c->members[q].state == FA_MEMBER_NO_DUMP && c->members[q].ncand;
    if (c->nno_dump > placed_not) fprintf(o, " (%u no dump)", c->nno_dump - placed_not);
    if (placed_not) fprintf(o, " (%u comm rank%s never arrived, rank not known)", placed_not, placed_not == 1 ? "" : "s");
    if (bh.n) fprintf(o, "\n                  behind other ops %s (enqueued it, queued on %s)", rset(&bh, buf),
                      bh.n == 1 ? "its stream" : "their streams");
    fa_ranks_free(&bh);
    if (c->nunfinished) { /* their own work never finished: on a line of its own */
      fa_ranks u;
      if (fa_comm_ranks(c, FA_MEMBER_UNFINISHED, &u)) return -1;
      fprintf(o, "\n                  unfinished %s (", rset(&u, buf));
      fa_ranks_free(&u);
      if (fa_comm_ranks(c, FA_MEMBER_PASSED, &u)) return -1;
      fprintf(o, "%s completed it)", rset(&u, buf));
      fa_ranks_free(&u);
    }
    fputc('\n', o);
    fa_ranks_free(&w);
    fa_ranks_free(&m);
  } else {
    fputs("none\n", o);
  }
  fputs("  missing links:  ", o);
  /* the verdict shows the first few (the details below list each comm's) */
  if (v->nlinks) links_text(o, v->links, v->nlinks, 18, MAX_VERDICT_LINKS);
  else fputs("none", o);
  fputc('\n', o);
  if (v->ncycle) {
    fputs("  cycle:          ", o);
    for (uint32_t i = 0; i < v->ncycle; i++)
      fprintf(o, "%s%d -[%s %sseq %llu]-> %d%s", i ? ",\n                  " : "", v->cycle[i].rank,
              fa_hex(a->comms[v->cycle[i].comm].id, hex), v->cycle[i].p2p ? "p2p " : "",
              (unsigned long long)v->cycle[i].seq,
              v->cycle[i].waits_for, v->cycle[i].uncertain ? "?" : "");
    fputc('\n', o);
  }
  fputs("  mismatch:       ", o);
  if (v->mismatch_comm >= 0) {
    const fa_comm *mc = &a->comms[v->mismatch_comm];
    fprintf(o, "seq %llu on comm %s (", (unsigned long long)mc->mismatch.seq, fa_hex(mc->id, hex));
    field_list(o, mc->mismatch.fields);
    fputs(")\n", o);
    if (mismatch_text(o, mc, "                  ")) return -1;
  } else {
    fputs("none\n", o);
  }
  for (uint32_t i = 0; i < v->nshared && i < 4; i++) {
    const fa_comm *sc = &a->comms[v->shared[i]];
    fprintf(o, "  shared id:      comm %s made by %u groups:", fa_hex(sc->id, hex), sc->ninstances);
    for (uint32_t k = 0; k < sc->ninstances; k++) {
      const fa_comm *ck = &a->comms[v->shared[i] + (int32_t)k];
      fa_ranks r = {NULL, 0};
      uint32_t cap = 0;
      for (int32_t q = 0; q < ck->size; q++)
        if (ck->members[q].rank >= 0 && fa_ranks_push(&r, &cap, ck->members[q].global_rank)) return -1;
      fa_ranks_sort(&r);
      fprintf(o, "%s ranks %s", k ? ";" : "", rset(&r, buf));
      fa_ranks_free(&r);
    }
    fputc('\n', o);
  }
  if (v->nstragglers) stragglers_line(o, v);
  if (fa_stacks_verdict_text(o, a)) return -1;
  data_line(o, a);
  return 0;
}

/* ---- details per communicator ---------------------------------------------------------- */

static int cmp_member_enq(const void *x, const void *y)
{
  const fa_member *a = *(const fa_member *const *)x, *b = *(const fa_member *const *)y;
  if (a->last_enqueued != b->last_enqueued) return a->last_enqueued < b->last_enqueued ? -1 : 1;
  return (a->global_rank > b->global_rank) - (a->global_rank < b->global_rank);
}

/* Lagging members grouped by how far they got. */
/* Lagging members of c that enqueued the stuck op behind other ops of
 * their stream. */
static uint32_t nbehind(const fa_comm *c)
{
  uint32_t n = 0;
  for (int32_t q = 0; q < c->size; q++) n += c->members[q].state == FA_MEMBER_LAGGING && c->members[q].behind;
  return n;
}

/* Take the members behind other ops of their stream out of the lagging
 * ranks r and give them a line of their own: they did enqueue the op. */
static int behind_split(FILE *o, const fa_comm *c, fa_ranks *r)
{
  if (!nbehind(c)) return 0;
  fa_ranks bh = {NULL, 0};
  uint32_t cap = 0, n = 0;
  char buf[RANKSET_LEN];
  for (int32_t q = 0; q < c->size; q++)
    if (c->members[q].state == FA_MEMBER_LAGGING && c->members[q].behind && c->members[q].global_rank >= 0 &&
        fa_ranks_push(&bh, &cap, c->members[q].global_rank)) {
      fa_ranks_free(&bh);
      return -1;
    }
  fa_ranks_sort(&bh);
  for (uint32_t i = 0; i < r->n; i++)
    if (!fa_ranks_has(&bh, r->v[i])) r->v[n++] = r->v[i];
  r->n = n;
  if (bh.n)
    fprintf(o, "      %-8s %s (enqueued it, queued behind other ops on %s)\n", "behind", rset(&bh, buf),
            bh.n == 1 ? "its stream" : "their streams");
  fa_ranks_free(&bh);
  return 0;
}

static int lagging_text(FILE *o, const fa_comm *c)
{
  const fa_member **v = malloc(c->nlagging * sizeof *v);
  int32_t *g = malloc(c->nlagging * sizeof *g);
  char buf[RANKSET_LEN];
  if (!v || !g) {
    free(v);
    free(g);
    return -1;
  }
  uint32_t n = 0;
  for (int32_t r = 0; r < c->size; r++) /* (those behind other ops are on a line of their own) */
    if (c->members[r].state == FA_MEMBER_LAGGING && !c->members[r].behind) v[n++] = &c->members[r];
  qsort(v, n, sizeof *v, cmp_member_enq);
  uint32_t shown = 0;
  for (uint32_t i = 0; i < n;) {
    uint32_t j = i, k = 0;
    while (j < n && v[j]->last_enqueued == v[i]->last_enqueued) {
      if (v[j]->global_rank >= 0) g[k++] = v[j]->global_rank;
      j++;
    }
    if (shown++ == 8) {
      fputs("      ...\n", o);
      break;
    }
    fprintf(o, "      %s: last enqueued ", fa_format_ranks(g, k, buf, sizeof buf));
    if (v[i]->last_enqueued >= 0) fprintf(o, "seq %lld\n", (long long)v[i]->last_enqueued);
    else fputs("nothing\n", o);
    i = j;
  }
  free(v);
  free(g);
  return 0;
}

static void comm_header(FILE *o, const fa_analysis *a, const fa_comm *c);
static int comm_body(FILE *o, const fa_analysis *a, const fa_comm *c);

/* The comm's first line, wrapped at 80 columns (the rest 6 columns in). */
static int comm_text(FILE *o, const fa_analysis *a, const fa_comm *c)
{
  char *text = NULL;
  size_t len = 0;
  FILE *m = open_memstream(&text, &len);
  if (!m) return -1;
  comm_header(m, a, c);
  if (fclose(m) != 0 || !text) {
    free(text);
    return -1;
  }
  if (len && text[len - 1] == '\n') text[--len] = '\0';
  fa_wrap_text(o, text, 2, 6);
  free(text);
  return comm_body(o, a, c);
}

static void comm_header(FILE *o, const fa_analysis *a, const fa_comm *c)
{
  char hex[17];
  fprintf(o, "comm %s", fa_hex(c->id, hex));
  if (c->pt) { /* a PyTorch process group: as its users name it */
    char desc[FRZ_PT_NAME_MAX], name[FRZ_PT_NAME_MAX];
    fa_pt_desc(c, desc, sizeof desc); /* first: the arguments' order of evaluation is unspecified */
    fa_sanitize(c->pt->name, name, sizeof name);
    fprintf(o, " (%s%spg %s)", desc, desc[0] ? ", " : "", name);
  }
  fprintf(o, ": %d rank%s, %u with a dump", c->size, c->size == 1 ? "" : "s", c->npresent);
  if (c->parent_id) fprintf(o, ", parent %s", fa_hex(c->parent_id, hex));
  if (c->seq_hi >= 0 && c->seq_lo >= 0)
    fprintf(o, ", seqs %lld..%lld retained", (long long)c->seq_lo, (long long)c->seq_hi);
  else if (c->seq_hi >= 0 && !c->pt)
    fprintf(o, ", seqs 0..%lld retained", (long long)c->seq_hi);
  else if (c->seq_hi > 0)
    fprintf(o, ", up to seq %lld, none retained", (long long)c->seq_hi);
  if (!c->tracked) fputs(", completion not tracked", o);
  fputc('\n', o);
}

static int comm_body(FILE *o, const fa_analysis *a, const fa_comm *c)
{
  char hex[17], buf[RANKSET_LEN];
  (void)hex;
  fputs("    last completed: ", o);
  if (fa_shown_completed(c) >= 0) {
    op_at(o, a, c, (uint64_t)c->last_completed);
    fputc('\n', o);
  } else {
    fputs("none\n", o);
  }
  if (c->stuck) {
    fputs("    stuck:          ", o);
    op_at(o, a, c, c->stuck_seq);
    fputc('\n', o);
    static const fa_member_state order[] = {FA_MEMBER_WAITING, FA_MEMBER_UNFINISHED, FA_MEMBER_PASSED,
                                            FA_MEMBER_AHEAD, FA_MEMBER_LAGGING, FA_MEMBER_NO_DUMP,
                                            FA_MEMBER_IDLE};
    for (unsigned i = 0; i < sizeof order / sizeof order[0]; i++) {
      fa_ranks r;
      if (fa_comm_ranks(c, order[i], &r)) return -1;
      if (order[i] == FA_MEMBER_LAGGING && behind_split(o, c, &r)) {
        fa_ranks_free(&r);
        return -1;
      }
      if (r.n) fprintf(o, "      %-8s %s\n", fa_member_state_name(order[i]), rset(&r, buf));
      fa_ranks_free(&r);
    }
    if (c->nno_dump) {
      uint32_t unknown = 0;
      for (int32_t r = 0; r < c->size; r++)
        if (c->members[r].state == FA_MEMBER_NO_DUMP && c->members[r].global_rank < 0) unknown++;
      if (unknown && !c->unformed) fprintf(o, "      %u member(s) without a dump of unknown global rank\n", unknown);
    }
    if (c->unformed && unformed_text(o, c)) return -1;
    if (c->nlagging > nbehind(c) && !c->unformed) {
      fputs("    lagging members got as far as:\n", o);
      if (lagging_text(o, c)) return -1;
    }
  }
  if (c->has_mismatch) {
    fprintf(o, "    mismatch at seq %llu (", (unsigned long long)c->mismatch.seq);
    field_list(o, c->mismatch.fields);
    fputs("):\n", o);
    if (mismatch_text(o, c, "      ")) return -1;
  }
  if (c->in_flight) { /* the job is slow, not hung: this op was only in flight */
    fputs("    in flight:      ", o);
    op_at(o, a, c, c->stuck_seq);
    fputs(" (its members progressed between frames)\n", o);
  }
  if (!c->stuck && !c->in_flight && !c->has_mismatch && !c->nlinks)
    fprintf(o, "    ok:             every member with a dump is idle%s\n",
            c->nno_dump ? " (some have no dump)" : "");
  if (c->nlinks) {
    fputs("    missing links:  ", o);
    links_text(o, c->links, c->nlinks, 20, MAX_LINKS_SHOWN);
    fputc('\n', o);
  }
  return 0;
}

/* ---- input -------------------------------------------------------------------------------- */

static void input_text(FILE *o, const fa_analysis *a)
{
  char buf[RANKSET_LEN], safe[1024], safe2[1024];
  fa_ranks found = {NULL, 0};
  uint32_t cap = 0;
  for (uint32_t i = 0; i < a->nranks; i++)
    if (fa_ranks_push(&found, &cap, a->ranks[i].global_rank)) break;
  fprintf(o, "input: %u file%s, %u dump%s", a->nfiles, a->nfiles == 1 ? "" : "s", a->nframes,
          a->nframes == 1 ? "" : "s");
  if (a->nframes) fprintf(o, " of job \"%s\"", fa_sanitize(a->job_id, safe, sizeof safe));
  if (a->world_size >= 0) fprintf(o, ", world size %d", a->world_size);
  fputc('\n', o);
  fprintf(o, "  ranks found:   %s\n", rset(&found, buf));
  fprintf(o, "  ranks missing: %s\n", rset(&a->ranks_missing, buf));
  fa_ranks_free(&found);
  for (uint32_t i = 0; fa_alive_any(a) && i < a->ranks_missing.n && i < 16; i++) {
    int32_t g = a->ranks_missing.v[i];
    const frz_alive *x = fa_alive_of(a, g);
    if (!x) {
      fprintf(o, "    rank %d: never announced itself (no communicator with the recorder, or a clean exit)\n", g);
      continue;
    }
    time_t t = (time_t)(x->time_ns / 1000000000u);
    struct tm tm;
    char when[32] = "?";
    if (gmtime_r(&t, &tm)) strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
    fprintf(o, "    rank %d: announced itself at %s as pid %u on host %s; no clean exit, no dump\n", g, when,
            x->pid, fa_sanitize(x->host[0] ? x->host : "?", safe, sizeof safe));
  }
  if (fa_alive_any(a) && a->ranks_missing.n > 16) fprintf(o, "    ... %u more\n", a->ranks_missing.n - 16);
  if (a->note) fprintf(o, "  note:          %s\n", fa_sanitize(a->note, safe, sizeof safe));
  if (!a->nproblems) {
    fputs("  problems:      none\n", o);
    return;
  }
  fprintf(o, "  problems:      %u\n", a->nproblems);
  for (uint32_t i = 0; i < a->nproblems; i++) {
    const fa_problem *p = &a->problems[i];
    fputs("    ", o);
    if (p->file) fprintf(o, "%s: ", fa_sanitize(p->file, safe, sizeof safe));
    if (p->has_offset) fprintf(o, "at byte %llu: ", (unsigned long long)p->offset);
    fprintf(o, "%s\n", fa_sanitize(p->message, safe2, sizeof safe2));
  }
}

/* Does comm c pass the --comm and --rank filters? */
static int shown(const fa_comm *c, const fa_text_opts *opt)
{
  if (opt->has_comm && c->id != opt->comm) return 0;
  if (opt->rank < 0) return 1;
  for (int32_t r = 0; r < c->size; r++)
    if (c->members[r].global_rank == opt->rank) return 1;
  return 0;
}

/* The verdict block with every line within 80 columns: a longer one is
 * broken at its last blank that fits, the rest 18 columns in (under the
 * values of the labels). */
static int verdict_fitted(FILE *o, const fa_analysis *a, const fa_text_opts *opt)
{
  char *text = NULL;
  size_t len = 0;
  FILE *m = open_memstream(&text, &len);
  if (!m) return -1;
  int rc = verdict_text(m, a, opt);
  if (fclose(m) != 0) rc = -1;
  for (const char *t = text; rc == 0 && t && *t;) {
    const char *nl = strchr(t, '\n');
    int n = nl ? (int)(nl - t) : (int)strlen(t), lead = 0;
    while (n > 80 - lead) {
      int cut = 80 - lead; /* (colour codes only on the first line, which is short) */
      while (cut > 0 && t[cut] != ' ') cut--;
      if (cut <= 18 - lead) break; /* (nowhere to break: left whole) */
      fprintf(o, "%*s%.*s\n", lead, "", cut, t);
      t += cut + 1;
      n -= cut + 1;
      lead = 18;
    }
    fprintf(o, "%*s%.*s\n", lead, "", n, t);
    t += n + (nl != NULL);
  }
  free(text);
  return rc;
}

int fa_report_text(const fa_analysis *a, FILE *o)
{
  fa_text_opts opt = {0, 0, 0, -1, 1, 0}; /* (every detail: the report of old) */
  return fa_report_text_opts(a, o, &opt);
}

int fa_report_text_opts(const fa_analysis *a, FILE *o, const fa_text_opts *opt)
{
  if (verdict_fitted(o, a, opt)) return -1;
  if (fa_next_steps_text(o, a)) return -1;                /* (explain_report.c) */
  if (opt->why && fa_evidence_text(o, a)) return -1;
  if (!opt->full && !opt->has_comm && opt->rank < 0) return fa_brief_text(o, a) || ferror(o) ? -1 : 0;
  if (a->ncomms) {
    uint32_t n = 0;
    for (uint32_t i = 0; i < a->ncomms; i++) n += (uint32_t)shown(&a->comms[i], opt);
    if (n == a->ncomms) fprintf(o, "\ncommunicators: %u\n", a->ncomms);
    else fprintf(o, "\ncommunicators: %u (%u shown)\n", a->ncomms, n);
    for (uint32_t i = 0; i < a->ncomms; i++)
      if (shown(&a->comms[i], opt) && comm_text(o, a, &a->comms[i])) return -1;
  }
  if (fa_stacks_classes_text(o, a)) return -1;
  fputc('\n', o);
  input_text(o, a);
  if (ferror(o)) {
    if (!errno) errno = EIO;
    return -1;
  }
  return 0;
}
