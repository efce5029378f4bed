/* mismatch.c — walk a communicator's members in lockstep by collective seq
 * and find the first seq where they disagree on what to call. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* What must agree across members for the record r. */
static fa_sig sig_of(const frz_record *r)
{
  fa_sig s;
  memset(&s, 0, sizeof s);
  s.op = r->op;
  unsigned kind = r->kind != FRZ_KIND_NONE ? r->kind : (unsigned)frz_op_kind(r->op);
  if (kind == FRZ_KIND_LIFE) { /* lifecycle: colors and keys differ by design */
    s.root = -1;
    s.dtype = s.redop = 255;
    return s;
  }
  s.count = r->count;
  s.root = r->peer;
  s.dtype = r->dtype;
  s.redop = r->redop;
  return s;
}

/* The FA_FIELD_* bits in which two signatures differ. */
static unsigned sig_diff(const fa_sig *a, const fa_sig *b)
{
  unsigned f = 0;
  if (a->op != b->op) f |= FA_FIELD_OP;
  if (a->count != b->count) f |= FA_FIELD_COUNT;
  if (a->dtype != b->dtype) f |= FA_FIELD_DTYPE;
  if (a->redop != b->redop) f |= FA_FIELD_REDOP;
  if (a->root != b->root) f |= FA_FIELD_ROOT;
  return f;
}

static int sig_cmp(const fa_sig *a, const fa_sig *b)
{
  if (a->op != b->op) return a->op < b->op ? -1 : 1;
  if (a->count != b->count) return a->count < b->count ? -1 : 1;
  if (a->dtype != b->dtype) return a->dtype < b->dtype ? -1 : 1;
  if (a->redop != b->redop) return a->redop < b->redop ? -1 : 1;
  if (a->root != b->root) return a->root < b->root ? -1 : 1;
  return 0;
}

/* One member's cursor over its retained collective records. */
typedef struct cursor {
  const frz_record *recs;
  const uint32_t *ix;
  uint32_t len, pos;
  int32_t comm_rank;
} cursor;

typedef struct at_seq {
  fa_sig sig;
  int32_t comm_rank;
  uint8_t completed;
} at_seq;

static int cmp_at_seq(const void *x, const void *y)
{
  const at_seq *a = x, *b = y;
  int c = sig_cmp(&a->sig, &b->sig);
  if (c) return c;
  return (a->comm_rank > b->comm_rank) - (a->comm_rank < b->comm_rank);
}

static int cmp_group(const void *x, const void *y, void *ctx)
{
  const fa_group *a = x, *b = y;
  const int32_t *mem = ctx;
  if (a->n != b->n) return a->n > b->n ? -1 : 1;
  return (mem[a->first] > mem[b->first]) - (mem[a->first] < mem[b->first]);
}

/* Build the groups of the first divergence from the members' records at it. */
static int make_groups(fa_mismatch *mm, at_seq *v, uint32_t n)
{
  qsort(v, n, sizeof *v, cmp_at_seq);
  uint32_t ng = 0;
  for (uint32_t i = 0; i < n; i++)
    if (i == 0 || sig_cmp(&v[i].sig, &v[i - 1].sig)) ng++;
  fa_group *g = calloc(ng, sizeof *g);
  int32_t *tmp = malloc(n * sizeof *tmp);
  mm->members = malloc(n * sizeof *mm->members);
  if (!g || !tmp || !mm->members) {
    free(g);
    free(tmp);
    return -1;
  }
  uint32_t k = 0;
  for (uint32_t i = 0; i < n; i++) {
    if (i == 0 || sig_cmp(&v[i].sig, &v[i - 1].sig)) {
      g[k].sig = v[i].sig;
      g[k].first = i;
      g[k].completed = 1;
      k++;
    }
    g[k - 1].n++;
    if (!v[i].completed) g[k - 1].completed = 0;
    tmp[i] = v[i].comm_rank;
  }
  qsort_r(g, ng, sizeof *g, cmp_group, tmp);
  /* lay the members out in the new group order */
  uint32_t w = 0;
  for (uint32_t i = 0; i < ng; i++) {
    memcpy(mm->members + w, tmp + g[i].first, g[i].n * sizeof *tmp);
    g[i].first = w;
    w += g[i].n;
  }
  free(tmp);
  mm->groups = g;
  mm->ngroups = ng;
  mm->nmembers = n;
  mm->fields = 0;
  for (uint32_t i = 1; i < ng; i++) mm->fields |= sig_diff(&g[0].sig, &g[i].sig);
  /* the culprit: a unique smallest group, smaller than half of the members */
  mm->culprit = -1;
  uint32_t small = ng - 1;
  if (ng >= 2 && g[small].n != g[small - 1].n && 2 * g[small].n < n)
    mm->culprit = (int32_t)small;
  return 0;
}

int fa_mismatch_comm(fa_analysis *a, fa_comm *c)
{
  if (c->npresent < 2) return 0;
  cursor *cur = malloc(c->npresent * sizeof *cur);
  at_seq *at = malloc(c->npresent * sizeof *at);
  int rc = -1;
  if (!cur || !at) goto out;
  uint32_t nc = 0;
  for (int32_t r = 0; r < c->size; r++) {
    const fa_member *m = &c->members[r];
    if (m->rank < 0) continue;
    const fa_frame *f = &a->frames[m->frame];
    const fa_slice *sl = &f->coll[m->entry];
    if (!sl->len) continue;
    cur[nc++] = (cursor){f->dump.records, f->idx + sl->start, sl->len, 0, r};
  }
  /* the first seq: the smallest one any cursor points at */
  uint64_t s = UINT64_MAX;
  int any = 0;
  for (uint32_t i = 0; i < nc; i++)
    if (cur[i].pos < cur[i].len) {
      uint64_t q = cur[i].recs[cur[i].ix[cur[i].pos]].seq;
      if (!any || q < s) s = q;
      any = 1;
    }
  while (any) {
    /* one pass: the members' calls at seq s, and the next seq (the
     * smallest one a cursor points at after it) */
    uint32_t n = 0, teardown = 0;
    int differs = 0;
    fa_sig ref = {0, -1, 0, 0, 0};
    uint64_t next = UINT64_MAX;
    any = 0;
    for (uint32_t i = 0; i < nc; i++) {
      cursor *k = &cur[i];
      if (k->pos >= k->len) continue;
      const frz_record *rec = &k->recs[k->ix[k->pos]];
      if (rec->seq == s) {
        fa_sig sg = sig_of(rec);
        if (n == 0) ref = sg;
        else if (!differs) differs = sig_cmp(&sg, &ref) != 0;
        at[n++] = (at_seq){sg, k->comm_rank, rec->state == FRZ_STATE_COMPLETED};
        if (fa_is_teardown(rec->op)) teardown++;
        while (k->pos < k->len && k->recs[k->ix[k->pos]].seq == s) k->pos++;
        if (k->pos >= k->len) continue;
        rec = &k->recs[k->ix[k->pos]];
      }
      if (!any || rec->seq < next) next = rec->seq;
      any = 1;
    }
    /* some members left the comm where others go on: those are ahead
     * (analyze.c), not calling something else; nothing later aligns */
    if (teardown && teardown < n) break;
    if (differs && !c->has_mismatch) {
      c->has_mismatch = 1;
      c->mismatch.seq = s;
      if (make_groups(&c->mismatch, at, n)) goto out;
    } else if (differs) {
      c->mismatch.later++;
      c->mismatch.last_seq = s;
    }
    s = next;
  }
  rc = 0;
out:
  free(cur);
  free(at);
  return rc;
}
