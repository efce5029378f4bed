/* report_json.c — the analysis as a JSON document (formats/analysis-json.md). */
#include "config.h"

#include <cJSON.h>
#include <stdlib.h>
#include <string.h>
#include <string.h>

#include "explain.h"
#include "internal.h"

/* Every builder returns NULL when out of memory; cJSON_Add* on a NULL item
 * is harmless, and `ok` collects failures so the document is never partial. */
typedef struct jctx {
  const fa_analysis *a;
  int ok;
} jctx;

static cJSON *chk(jctx *j, cJSON *item)
{
  if (!item) j->ok = 0;
  return item;
}

static void add(jctx *j, cJSON *obj, const char *key, cJSON *item)
{
  if (!item || !obj) {
    j->ok = 0;
    cJSON_Delete(item);
    return;
  }
  cJSON_AddItemToObject(obj, key, item);
}

static void push(jctx *j, cJSON *arr, cJSON *item)
{
  if (!item || !arr) {
    j->ok = 0;
    cJSON_Delete(item);
    return;
  }
  cJSON_AddItemToArray(arr, item);
}

static cJSON *num(jctx *j, double v) { return chk(j, cJSON_CreateNumber(v)); }

/* A string with control characters and invalid UTF-8 replaced. */
static cJSON *str(jctx *j, const char *s)
{
  char buf[2048];
  return chk(j, cJSON_CreateString(fa_sanitize(s ? s : "", buf, sizeof buf)));
}

static cJSON *hex(jctx *j, uint64_t id)
{
  char b[17];
  return chk(j, cJSON_CreateString(fa_hex(id, b)));
}

/* A number, or null when negative (unknown / none). */
static cJSON *opt(jctx *j, int64_t v)
{
  return chk(j, v < 0 ? cJSON_CreateNull() : cJSON_CreateNumber((double)v));
}

static cJSON *ranks(jctx *j, const fa_ranks *r)
{
  cJSON *arr = chk(j, cJSON_CreateArray());
  for (uint32_t i = 0; arr && i < r->n; i++) push(j, arr, num(j, r->v[i]));
  return arr;
}

/* Global ranks of the members of c in state s. */
static cJSON *state_ranks(jctx *j, const fa_comm *c, fa_member_state s)
{
  fa_ranks r;
  if (fa_comm_ranks(c, s, &r)) {
    j->ok = 0;
    return NULL;
  }
  cJSON *arr = ranks(j, &r);
  fa_ranks_free(&r);
  return arr;
}

/* {"comm", "seq", "op"} for seq of comm c. */
static cJSON *op_ref(jctx *j, const fa_comm *c, uint64_t seq, int with_comm)
{
  cJSON *o = chk(j, cJSON_CreateObject());
  const frz_dump *d;
  const frz_record *r = fa_comm_record_in(j->a, c, seq, &d);
  if (with_comm) add(j, o, "comm", hex(j, c->id));
  add(j, o, "seq", num(j, (double)seq));
  add(j, o, "op", r ? str(j, r->op == FRZ_OP_NONE ? fa_record_op_name(d, r) : frz_op_name(r->op))
                    : chk(j, cJSON_CreateNull()));
  if (r && d && d->pt) add(j, o, "pt_op", str(j, fa_record_op_name(d, r)));
  return o;
}

/* The stuck op of comm c with its participants. */
static cJSON *stuck_obj(jctx *j, const fa_comm *c, int with_comm)
{
  if (!c->stuck) return chk(j, cJSON_CreateNull());
  cJSON *o = op_ref(j, c, c->stuck_seq, with_comm);
  const frz_record *r = fa_comm_record(j->a, c, c->stuck_seq);
  if (r && (r->kind == FRZ_KIND_COLL || frz_op_kind(r->op) == FRZ_KIND_COLL)) {
    add(j, o, "count", num(j, (double)r->count));
    add(j, o, "dtype", str(j, frz_dtype_name(r->dtype)));
    add(j, o, "redop", r->redop == 255 ? chk(j, cJSON_CreateNull()) : str(j, frz_redop_name(r->redop)));
    add(j, o, "root", opt(j, fa_global_of(c, r->peer)));
  }
  if (r && (r->flags & FRZ_RF_GRAPH_REPLAY) && r->graph_id) { /* one launch of a CUDA graph (frz 1.5) */
    cJSON *g = chk(j, cJSON_CreateObject());
    add(j, g, "id", num(j, (double)r->graph_id));
    add(j, g, "replay", num(j, (double)r->replay));
    add(j, o, "graph", g);
  }
  add(j, o, "waiting_ranks", state_ranks(j, c, FA_MEMBER_WAITING));
  fa_ranks m;
  if (fa_comm_missing(c, &m)) {
    j->ok = 0;
  } else {
    add(j, o, "missing_ranks", ranks(j, &m));
    fa_ranks_free(&m);
  }
  add(j, o, "lagging_ranks", state_ranks(j, c, FA_MEMBER_LAGGING));
  add(j, o, "no_dump_ranks", state_ranks(j, c, FA_MEMBER_NO_DUMP));
  add(j, o, "passed_ranks", state_ranks(j, c, FA_MEMBER_PASSED));
  add(j, o, "ahead_ranks", state_ranks(j, c, FA_MEMBER_AHEAD));
  add(j, o, "unfinished_ranks", state_ranks(j, c, FA_MEMBER_UNFINISHED));
  return o;
}

static cJSON *link_obj(jctx *j, const fa_link *l)
{
  cJSON *o = chk(j, cJSON_CreateObject());
  add(j, o, "src", opt(j, l->src));
  add(j, o, "dst", opt(j, l->dst));
  add(j, o, "comm", hex(j, j->a->comms[l->comm].id));
  add(j, o, "channel", opt(j, l->channel));
  add(j, o, "inferred", chk(j, cJSON_CreateBool(l->inferred)));
  add(j, o, "p2p", chk(j, cJSON_CreateBool(l->p2p)));
  add(j, o, "seq", num(j, (double)l->seq));
  if (l->src >= 0 && l->src == l->dst && l->src_comm_rank >= 0 && l->dst_comm_rank >= 0 &&
      l->src_comm_rank != l->dst_comm_rank) { /* two devices of one process (fa_link_ends) */
    add(j, o, "src_comm_rank", num(j, l->src_comm_rank));
    add(j, o, "dst_comm_rank", num(j, l->dst_comm_rank));
  }
  if (l->p2p) {
    add(j, o, "pending", str(j, l->pending_dir == FRZ_DIR_SEND ? "send" : "recv"));
    add(j, o, "counterpart_no_dump", chk(j, cJSON_CreateBool(l->counterpart_no_dump)));
    if (l->counterpart_ended) add(j, o, "counterpart_ended", chk(j, cJSON_CreateTrue()));
    if (l->counterpart_late) add(j, o, "counterpart_late", chk(j, cJSON_CreateTrue()));
    if (l->counterpart_not_started) add(j, o, "counterpart_not_started", chk(j, cJSON_CreateTrue()));
    if (l->counterpart_queued) add(j, o, "counterpart_queued", chk(j, cJSON_CreateTrue()));
    if (l->joined) add(j, o, "joined", chk(j, cJSON_CreateTrue()));
    if (l->held_by_group) add(j, o, "held_by_group", chk(j, cJSON_CreateTrue()));
  }
  if (l->evidence) { /* from proxy progress */
    cJSON *ev = chk(j, cJSON_CreateArray());
    if (l->evidence & FA_EVIDENCE_SENDER) push(j, ev, str(j, "sender"));
    if (l->evidence & FA_EVIDENCE_RECEIVER) push(j, ev, str(j, "receiver"));
    add(j, o, "evidence", ev);
    add(j, o, "state", l->state ? str(j, frz_proxy_state_name(l->state)) : chk(j, cJSON_CreateNull()));
    add(j, o, "nccl_state", l->state ? num(j, l->state) : chk(j, cJSON_CreateNull()));
    add(j, o, "stalled_ns", l->stalled_ns ? num(j, (double)l->stalled_ns) : chk(j, cJSON_CreateNull()));
  }
  return o;
}

static cJSON *links(jctx *j, const fa_link *ls, uint32_t n)
{
  cJSON *arr = chk(j, cJSON_CreateArray());
  for (uint32_t i = 0; arr && i < n; i++) push(j, arr, link_obj(j, &ls[i]));
  return arr;
}

static cJSON *field_names(jctx *j, unsigned f)
{
  cJSON *arr = chk(j, cJSON_CreateArray());
  for (unsigned i = 0; arr && i < FA_NFIELDS; i++)
    if (f & (1u << i)) push(j, arr, str(j, fa_field_name(i)));
  return arr;
}

/* Global ranks of a mismatch group. */
static cJSON *group_ranks(jctx *j, const fa_comm *c, const fa_group *g, fa_ranks *out)
{
  uint32_t cap = 0;
  out->v = NULL;
  out->n = 0;
  for (uint32_t i = 0; i < g->n; i++) {
    int32_t gr = fa_global_of(c, c->mismatch.members[g->first + i]);
    if (gr >= 0 && fa_ranks_push(out, &cap, gr)) j->ok = 0;
  }
  fa_ranks_sort(out);
  return ranks(j, out);
}

static cJSON *mismatch_obj(jctx *j, const fa_comm *c, int with_comm)
{
  if (!c || !c->has_mismatch) return chk(j, cJSON_CreateNull());
  const fa_mismatch *mm = &c->mismatch;
  cJSON *o = chk(j, cJSON_CreateObject());
  if (with_comm) add(j, o, "comm", hex(j, c->id));
  add(j, o, "seq", num(j, (double)mm->seq));
  add(j, o, "fields", field_names(j, mm->fields));
  cJSON *groups = chk(j, cJSON_CreateArray());
  cJSON *culprit = chk(j, cJSON_CreateArray());
  for (uint32_t i = 0; groups && i < mm->ngroups; i++) {
    const fa_group *g = &mm->groups[i];
    cJSON *go = chk(j, cJSON_CreateObject());
    fa_ranks gr;
    add(j, go, "ranks", group_ranks(j, c, g, &gr));
    if ((int32_t)i == mm->culprit)
      for (uint32_t k = 0; k < gr.n; k++) push(j, culprit, num(j, gr.v[k]));
    fa_ranks_free(&gr);
    add(j, go, "op", str(j, g->sig.op == FRZ_OP_NONE && g->sig.name ? g->sig.name : frz_op_name(g->sig.op)));
    if (g->sig.name) {
      add(j, go, "pt_op", str(j, g->sig.name));
      add(j, go, "out_count", num(j, (double)g->sig.out_count));
      add(j, go, "out_dtype", g->sig.out_dtype == 255 ? chk(j, cJSON_CreateNull())
                                                      : str(j, frz_dtype_name(g->sig.out_dtype)));
    }
    int life = frz_op_kind(g->sig.op) == FRZ_KIND_LIFE;
    add(j, go, "count", life ? chk(j, cJSON_CreateNull()) : num(j, (double)g->sig.count));
    add(j, go, "dtype", g->sig.dtype == 255 ? chk(j, cJSON_CreateNull()) : str(j, frz_dtype_name(g->sig.dtype)));
    add(j, go, "redop", g->sig.redop == 255 ? chk(j, cJSON_CreateNull()) : str(j, frz_redop_name(g->sig.redop)));
    add(j, go, "root", opt(j, fa_global_of(c, g->sig.root)));
    if (mm->fields & (FA_FIELD_ALGO | FA_FIELD_PROTO)) {
      add(j, go, "algorithm", g->sig.algo == 255 ? chk(j, cJSON_CreateNull()) : str(j, frz_algo_name(g->sig.algo)));
      add(j, go, "protocol", g->sig.proto == 255 ? chk(j, cJSON_CreateNull()) : str(j, frz_proto_name(g->sig.proto)));
    }
    add(j, go, "completed", chk(j, cJSON_CreateBool(g->completed)));
    push(j, groups, go);
  }
  add(j, o, "groups", groups);
  add(j, o, "culprit_ranks", culprit);
  add(j, o, "later_mismatches", num(j, (double)mm->later));
  add(j, o, "last_mismatch_seq", mm->later ? num(j, (double)mm->last_seq) : chk(j, cJSON_CreateNull()));
  return o;
}

static cJSON *cycle_arr(jctx *j)
{
  const fa_verdict *v = &j->a->verdict;
  if (!v->ncycle) return chk(j, cJSON_CreateNull());
  cJSON *arr = chk(j, cJSON_CreateArray());
  for (uint32_t i = 0; arr && i < v->ncycle; i++) {
    const fa_wait_step *s = &v->cycle[i];
    const fa_comm *c = &j->a->comms[s->comm];
    cJSON *o = op_ref(j, c, s->seq, 1);
    if (s->p2p) { /* blocked by p2p: seq is a p2p seq */
      cJSON_DeleteItemFromObject(o, "op");
      add(j, o, "op", str(j, "p2p"));
    }
    add(j, o, "rank", opt(j, s->rank));
    add(j, o, "waits_for", opt(j, s->waits_for));
    if (s->uncertain) add(j, o, "waits_for_uncertain", chk(j, cJSON_CreateTrue()));
    push(j, arr, o);
  }
  return arr;
}

/* Consistently late ranks, latest first. */
static cJSON *stragglers_arr(jctx *j)
{
  const fa_verdict *v = &j->a->verdict;
  cJSON *arr = chk(j, cJSON_CreateArray());
  for (uint32_t i = 0; i < v->nstragglers; i++) {
    const fa_straggler *s = &v->stragglers[i];
    cJSON *o = chk(j, cJSON_CreateObject());
    add(j, o, "rank", num(j, s->rank));
    add(j, o, "late_ops", num(j, s->late_ops));
    add(j, o, "ops", num(j, s->ops));
    add(j, o, "mean_late_ms", num(j, (double)(s->mean_late_ns / 1000) / 1000.0));
    add(j, o, "max_late_ms", num(j, (double)(s->max_late_ns / 1000) / 1000.0));
    push(j, arr, o);
  }
  return arr;
}

/* Hosts and their estimated clock offsets. */
static cJSON *clocks_arr(jctx *j)
{
  const fa_analysis *a = j->a;
  cJSON *arr = chk(j, cJSON_CreateArray());
  for (uint32_t i = 0; i < a->nhosts; i++) {
    cJSON *o = chk(j, cJSON_CreateObject());
    add(j, o, "host", str(j, a->hosts[i].host));
    add(j, o, "ranks", num(j, a->hosts[i].nranks));
    add(j, o, "offset_ms", num(j, (double)(a->hosts[i].offset_ns / 1000) / 1000.0));
    add(j, o, "samples", num(j, a->hosts[i].samples));
    push(j, arr, o);
  }
  return arr;
}

/* Where each root-cause rank stopped: {"rank", "state", "comm", "seq", "op", "pt_op"}. */
static cJSON *roots_arr(jctx *j)
{
  const fa_verdict *v = &j->a->verdict;
  cJSON *arr = chk(j, cJSON_CreateArray());
  for (uint32_t i = 0; arr && i < v->root_cause.n; i++) {
    const fa_root *w = &v->roots[i];
    cJSON *o;
    if (w->comm >= 0 && w->state != FA_MEMBER_IDLE) {
      o = op_ref(j, &j->a->comms[w->comm], w->seq, 1);
    } else {
      o = chk(j, cJSON_CreateObject());
      add(j, o, "comm", w->comm >= 0 ? hex(j, j->a->comms[w->comm].id) : chk(j, cJSON_CreateNull()));
      add(j, o, "seq", w->comm >= 0 ? num(j, (double)w->seq) : chk(j, cJSON_CreateNull()));
      add(j, o, "op", str(j, w->comm >= 0 ? "p2p" : "unknown"));
    }
    add(j, o, "rank", num(j, w->rank));
    add(j, o, "state", str(j, w->comm < 0 ? "unknown" : w->state == FA_MEMBER_IDLE
                                                         ? "never_posted"
                                                         : fa_member_state_name((fa_member_state)w->state)));
    push(j, arr, o);
  }
  return arr;
}

/* {"kind", "rank", "comm", "seq"} of a fault of the verdict */
static cJSON *faults_arr(jctx *j)
{
  const fa_verdict *v = &j->a->verdict;
  cJSON *arr = chk(j, cJSON_CreateArray());
  for (uint32_t i = 0; arr && i < v->nfaults; i++) {
    const fa_fault *f = &v->faults[i];
    cJSON *o = chk(j, cJSON_CreateObject());
    add(j, o, "kind", str(j, fa_fault_kind_name(f->kind)));
    add(j, o, "rank", opt(j, f->rank));
    add(j, o, "comm", f->comm >= 0 ? hex(j, j->a->comms[f->comm].id) : chk(j, cJSON_CreateNull()));
    add(j, o, "seq", f->comm >= 0 ? num(j, (double)f->seq) : chk(j, cJSON_CreateNull()));
    push(j, arr, o);
  }
  return arr;
}

/* The observations no fault of the verdict explains: {"kind", "rank",
 * "comm", "seq", "peer"} */
static cJSON *unexplained_arr(jctx *j)
{
  const fa_verdict *v = &j->a->verdict;
  cJSON *arr = chk(j, cJSON_CreateArray());
  for (uint32_t i = 0; arr && i < v->nobs; i++) {
    const fa_obs *b = &v->obs[i];
    if (b->by >= 0) continue;
    cJSON *o = chk(j, cJSON_CreateObject());
    add(j, o, "kind", str(j, fa_obs_kind_name(b->kind)));
    add(j, o, "rank", opt(j, b->rank));
    add(j, o, "comm", b->comm >= 0 ? hex(j, j->a->comms[b->comm].id) : chk(j, cJSON_CreateNull()));
    add(j, o, "seq", b->comm >= 0 ? num(j, (double)b->seq) : chk(j, cJSON_CreateNull()));
    add(j, o, "peer", opt(j, b->peer));
    push(j, arr, o);
  }
  return arr;
}

/* [{"comm": id, "groups": [[ranks], ...]}] for each id several groups made a comm of */
static cJSON *shared_arr(jctx *j)
{
  const fa_analysis *a = j->a;
  cJSON *arr = chk(j, cJSON_CreateArray());
  for (uint32_t i = 0; arr && i < a->verdict.nshared; i++) {
    const fa_comm *c = &a->comms[a->verdict.shared[i]];
    cJSON *o = chk(j, cJSON_CreateObject()), *gs = chk(j, cJSON_CreateArray());
    add(j, o, "comm", hex(j, c->id));
    for (uint32_t k = 0; gs && k < c->ninstances; k++) {
      const fa_comm *ck = c + k;
      fa_ranks r = {NULL, 0};
      uint32_t cap = 0;
      for (int32_t q = 0; q < ck->size; q++)
        if (ck->members[q].rank >= 0 && fa_ranks_push(&r, &cap, ck->members[q].global_rank)) j->ok = 0;
      fa_ranks_sort(&r);
      push(j, gs, ranks(j, &r));
      fa_ranks_free(&r);
    }
    add(j, o, "groups", gs);
    push(j, arr, o);
  }
  return arr;
}

static cJSON *verdict_obj(jctx *j)
{
  const fa_analysis *a = j->a;
  const fa_verdict *v = &a->verdict;
  /* the comm of the hang; without one, the comm of the mismatch */
  const fa_comm *c = v->comm >= 0 ? &a->comms[v->comm]
                     : v->mismatch_comm >= 0 ? &a->comms[v->mismatch_comm] : NULL;
  cJSON *o = chk(j, cJSON_CreateObject());
  add(j, o, "status", str(j, fa_status_name(v->status)));
  add(j, o, "summary", str(j, v->summary));
  add(j, o, "lagging_ranks", ranks(j, &v->lagging));
  add(j, o, "root_cause_ranks", ranks(j, &v->root_cause));
  add(j, o, "unfinished_ranks", ranks(j, &v->unfinished));
  add(j, o, "root_causes", roots_arr(j));
  add(j, o, "ahead_ranks", ranks(j, &v->ahead));
  add(j, o, "late_ranks", ranks(j, &v->late));
  add(j, o, "left_out_ranks", ranks(j, &v->left_out_too));
  add(j, o, "faults", faults_arr(j));
  add(j, o, "observations", num(j, v->nobs));
  add(j, o, "unexplained", unexplained_arr(j));
  add(j, o, "all_joined", chk(j, cJSON_CreateBool(v->all_joined)));
  add(j, o, "last_completed",
      c && fa_shown_completed(c) >= 0 ? op_ref(j, c, (uint64_t)c->last_completed, 1)
                                  : chk(j, cJSON_CreateNull()));
  add(j, o, "stuck", c ? stuck_obj(j, c, 1) : chk(j, cJSON_CreateNull()));
  add(j, o, "missing_links", links(j, v->links, v->nlinks));
  add(j, o, "mismatch",
      mismatch_obj(j, v->mismatch_comm >= 0 ? &a->comms[v->mismatch_comm] : NULL, 1));
  add(j, o, "cycle", cycle_arr(j));
  add(j, o, "stragglers", stragglers_arr(j));
  add(j, o, "shared_ids", shared_arr(j));
  add(j, o, "progressed_ranks", ranks(j, &v->progressed));
  add(j, o, "frames_progress", chk(j, cJSON_CreateBool(v->frames_progress)));
  add(j, o, "stacks", chk(j, fa_stacks_verdict_json(a)));
  add(j, o, "next_steps", chk(j, fa_next_steps_json(a)));  /* (explain_report.c) */
  add(j, o, "evidence", chk(j, fa_evidence_json(a)));
  return o;
}

static cJSON *member_obj(jctx *j, const fa_member *m)
{
  cJSON *o = chk(j, cJSON_CreateObject());
  add(j, o, "comm_rank", num(j, m->comm_rank));
  add(j, o, "global_rank", opt(j, m->global_rank));
  add(j, o, "state", str(j, fa_member_state_name(m->state)));
  if (m->global_inferred) add(j, o, "global_rank_inferred", chk(j, cJSON_CreateTrue()));
  /* a member without a dump: its file is absent, its seqs null */
  if (m->rank >= 0) add(j, o, "file", str(j, j->a->frames[m->frame].name));
  add(j, o, "first_retained_seq", opt(j, m->rank >= 0 ? m->first_retained : -1));
  add(j, o, "last_enqueued_seq", opt(j, m->rank >= 0 ? m->last_enqueued : -1));
  add(j, o, "last_completed_seq", opt(j, m->rank >= 0 ? m->last_completed : -1));
  add(j, o, "completion_tracked", chk(j, cJSON_CreateBool(m->rank >= 0 && m->tracked)));
  if (m->counters_unknown) add(j, o, "counters_unknown", chk(j, cJSON_CreateTrue()));
  if (m->behind) add(j, o, "behind_on_stream", chk(j, cJSON_CreateTrue()));
  if (m->absent) add(j, o, "never_joined", chk(j, cJSON_CreateTrue()));
  if (m->left) add(j, o, "tore_down", chk(j, cJSON_CreateTrue()));
  if (m->gone) add(j, o, "process_ended", chk(j, cJSON_CreateTrue()));
  if (m->shut) add(j, o, "shut_down", chk(j, cJSON_CreateTrue()));
  if (m->async_error) add(j, o, "async_error", chk(j, cJSON_CreateTrue()));
  if (m->ncand) {
    fa_ranks r = {m->cand, m->ncand};
    add(j, o, "may_be_ranks", ranks(j, &r));
  }
  return o;
}

static cJSON *comm_obj(jctx *j, const fa_comm *c)
{
  cJSON *o = chk(j, cJSON_CreateObject());
  add(j, o, "id", hex(j, c->id));
  add(j, o, "nccl_comm_hash", c->nccl_comm_hash ? hex(j, c->nccl_comm_hash) : chk(j, cJSON_CreateNull()));
  add(j, o, "parent", c->parent_id ? hex(j, c->parent_id) : chk(j, cJSON_CreateNull()));
  add(j, o, "size", num(j, c->size));
  if (c->pt) {
    cJSON *pg = chk(j, cJSON_CreateObject());
    add(j, pg, "name", str(j, c->pt->name));
    add(j, pg, "desc", str(j, c->pt->desc));
    add(j, pg, "pg_id", opt(j, c->pt->pg_id > INT32_MAX ? -1 : (int32_t)c->pt->pg_id));
    add(j, o, "pg", pg);
  } else {
    add(j, o, "pg", chk(j, cJSON_CreateNull()));
  }
  add(j, o, "dumps", num(j, c->npresent));
  add(j, o, "never_formed", chk(j, cJSON_CreateBool(c->unformed)));
  if (c->end_unclear) add(j, o, "end_unclear", chk(j, cJSON_CreateTrue()));
  if (c->ninstances > 1) {
    add(j, o, "instance", num(j, c->instance));
    add(j, o, "instances", num(j, c->ninstances));
  }
  add(j, o, "completion_tracked", chk(j, cJSON_CreateBool(c->tracked)));
  add(j, o, "seq_lo", opt(j, c->seq_lo));
  add(j, o, "seq_hi", opt(j, c->seq_hi));
  add(j, o, "last_completed",
      fa_shown_completed(c) >= 0 ? op_ref(j, c, (uint64_t)c->last_completed, 0) : chk(j, cJSON_CreateNull()));
  add(j, o, "stuck", stuck_obj(j, c, 0));
  add(j, o, "in_flight", c->in_flight ? op_ref(j, c, c->stuck_seq, 0) : chk(j, cJSON_CreateNull()));
  add(j, o, "mismatch", mismatch_obj(j, c, 0));
  add(j, o, "missing_links", links(j, c->links, c->nlinks));
  cJSON *mem = chk(j, cJSON_CreateArray());
  for (int32_t r = 0; mem && r < c->size; r++) push(j, mem, member_obj(j, &c->members[r]));
  add(j, o, "members", mem);
  return o;
}

static cJSON *input_obj(jctx *j)
{
  const fa_analysis *a = j->a;
  cJSON *o = chk(j, cJSON_CreateObject());
  cJSON *files = chk(j, cJSON_CreateArray());
  for (uint32_t i = 0; files && i < a->nfiles; i++) push(j, files, str(j, a->files[i]));
  add(j, o, "files", files);
  add(j, o, "job_id", a->nframes ? str(j, a->job_id) : chk(j, cJSON_CreateNull()));
  add(j, o, "world_size", opt(j, a->world_size));
  add(j, o, "dumps", num(j, a->nframes));
  cJSON *found = chk(j, cJSON_CreateArray());
  for (uint32_t i = 0; found && i < a->nranks; i++) push(j, found, num(j, a->ranks[i].global_rank));
  add(j, o, "ranks_found", found);
  add(j, o, "ranks_missing", ranks(j, &a->ranks_missing));
  cJSON *ann = chk(j, cJSON_CreateArray());
  for (uint32_t i = 0; ann && i < a->nalive; i++) {
    const frz_alive *x = &a->alive[i];
    if (fa_alive_of(a, x->global_rank) != x) continue; /* another job's, or an older one */
    cJSON *ao = chk(j, cJSON_CreateObject());
    add(j, ao, "rank", num(j, x->global_rank));
    add(j, ao, "pid", num(j, x->pid));
    add(j, ao, "host", str(j, x->host));
    add(j, ao, "time_ms", num(j, (double)(x->time_ns / 1000000u))); /* exact in a double */
    int dumped = 0;
    for (uint32_t k = 0; k < a->nranks && !dumped; k++) dumped = a->ranks[k].global_rank == x->global_rank;
    add(j, ao, "dumped", chk(j, cJSON_CreateBool(dumped)));
    push(j, ann, ao);
  }
  add(j, o, "announced", ann);
  add(j, o, "hosts", clocks_arr(j));
  cJSON *probs = chk(j, cJSON_CreateArray());
  for (uint32_t i = 0; probs && i < a->nproblems; i++) {
    const fa_problem *p = &a->problems[i];
    cJSON *po = chk(j, cJSON_CreateObject());
    add(j, po, "file", p->file ? str(j, p->file) : chk(j, cJSON_CreateNull()));
    add(j, po, "offset", p->has_offset ? num(j, (double)p->offset) : chk(j, cJSON_CreateNull()));
    add(j, po, "message", str(j, p->message));
    push(j, probs, po);
  }
  add(j, o, "problems", probs);
  if (a->note) add(j, o, "note", str(j, a->note));
  return o;
}

char *fa_report_json(const fa_analysis *a)
{
  jctx j = {a, 1};
  cJSON *root = chk(&j, cJSON_CreateObject());
  add(&j, root, "format", str(&j, "flightrec-analysis"));
  add(&j, root, "version", num(&j, FA_JSON_VERSION));
  add(&j, root, "input", input_obj(&j));
  add(&j, root, "verdict", verdict_obj(&j));
  cJSON *comms = chk(&j, cJSON_CreateArray());
  for (uint32_t i = 0; comms && i < a->ncomms; i++) push(&j, comms, comm_obj(&j, &a->comms[i]));
  add(&j, root, "comms", comms);
  add(&j, root, "stack_classes", chk(&j, fa_stacks_classes_json(a)));
  char *text = NULL;
  if (j.ok && root) {
    char *s = cJSON_Print(root);
    if (s) {
      size_t n = strlen(s);
      text = malloc(n + 2);
      if (text) {
        memcpy(text, s, n);
        text[n] = '\n';
        text[n + 1] = '\0';
      }
      cJSON_free(s);
    }
  }
  cJSON_Delete(root);
  return text;
}
