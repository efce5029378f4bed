/* mismatch.c — walk a communicator's members in lockstep by collective seq
 * and find the first seq where they disagree on what to call. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* Which sizes differ across members by design (PyTorch's
 * check_size_alltoall and the "*_v" collectives, which take per-rank
 * sizes): all-to-all's inputs and outputs (only the group's totals must
 * agree), all_gather_v's inputs (its outputs, every rank's inputs
 * together, are equal), reduce_scatter_v's outputs, and both of any other
 * "*_v" op. */
enum { UNEVEN_IN = 1, UNEVEN_OUT = 2, UNEVEN_TOTALS = 4 };
static unsigned uneven_sizes(unsigned op, const char *name)
{
  if (op == FRZ_OP_AlltoAll) return UNEVEN_IN | UNEVEN_OUT | UNEVEN_TOTALS;
  if (!name) return 0;
  size_t n = strlen(name);
  if (!strstr(name, "_v_") && !(n > 2 && strcmp(name + n - 2, "_v") == 0)) return 0;
  if (op == FRZ_OP_AllGather) return UNEVEN_IN;
  if (op == FRZ_OP_ReduceScatter) return UNEVEN_OUT;
  return UNEVEN_IN | UNEVEN_OUT;
}

/* What must agree across members for record r of a PyTorch dump: the op
 * (by NCCL op, by name for names we do not know), input and output
 * elements and types, where the op's semantics make them equal (PyTorch's
 * Op.match: gather's output and scatter's input exist on the root only;
 * a type counts only for tensors with elements). */
/* uneven_sizes of the names seen, by the name's address (a dump's names
 * are interned, so a walk meets a few addresses many times) */
typedef struct name_memo {
  const char *name[16];
  unsigned op[16];
  uint8_t uneven[16];
} name_memo;

static unsigned uneven_sizes_memo(name_memo *nm, unsigned op, const char *name)
{
  if (op == FRZ_OP_AlltoAll || !name) return uneven_sizes(op, name);
  size_t h = ((uintptr_t)name >> 4) % 16;
  if (nm->name[h] != name || nm->op[h] != op) {
    nm->name[h] = name;
    nm->op[h] = op;
    nm->uneven[h] = (uint8_t)uneven_sizes(op, name);
  }
  return nm->uneven[h];
}

static fa_sig pt_sig_of(const frz_record *r, const frz_pt_info *pt, uint64_t i, name_memo *nm)
{
  const frz_pt_record *p = &pt->records[i];
  fa_sig s;
  memset(&s, 0, sizeof s);
  s.algo = s.proto = 255;
  s.op = r->op;
  s.name = p->name < pt->nnames ? pt->names[p->name] : NULL;
  s.root = -1;
  s.redop = 255;
  s.count = p->in_numel;
  s.out_count = p->out_numel;
  s.dtype = p->in_dtype; /* a type without elements is dropped by common_parts */
  s.out_dtype = p->out_dtype;
  unsigned uneven = uneven_sizes_memo(nm, r->op, s.name);
  if (uneven & UNEVEN_IN) s.count = 0;
  if (uneven & UNEVEN_OUT) s.out_count = 0;
  if (r->op == FRZ_OP_Gather) {
    s.out_count = 0;
    s.out_dtype = 255;
  }
  if (r->op == FRZ_OP_Scatter) {
    s.count = 0;
    s.dtype = 255;
  }
  if (r->kind == FRZ_KIND_LIFE) {
    s.count = s.out_count = 0;
    s.dtype = s.out_dtype = 255;
  }
  return s;
}

/* What must agree across members for the record r (of dump d). */
static fa_sig sig_of(const frz_record *r, const frz_dump *d, name_memo *nm)
{
  if (d->pt) return pt_sig_of(r, d->pt, (uint64_t)(r - d->records), nm);
  fa_sig s;
  memset(&s, 0, sizeof s);
  s.algo = s.proto = 255;
  s.op = r->op;
  s.out_dtype = 255;
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
  s.algo = r->algo;
  s.proto = r->proto;
  return s;
}

/* The FA_FIELD_* bits in which two signatures differ. */
/* Do two signatures name different ops?  Names PyTorch writes that we do
 * not know compare as strings, never "none" = "none". */
static int op_differs(const fa_sig *a, const fa_sig *b)
{
  if (a->op != b->op) return 1;
  if (a->op == FRZ_OP_NONE && (a->name || b->name))
    return !a->name || !b->name || strcmp(a->name, b->name) != 0;
  return 0;
}

static int name_cmp(const fa_sig *a, const fa_sig *b)
{
  if (a->op != FRZ_OP_NONE || (!a->name && !b->name)) return 0;
  if (!a->name || !b->name) return a->name ? 1 : -1;
  return strcmp(a->name, b->name);
}

static unsigned sig_diff(const fa_sig *a, const fa_sig *b)
{
  unsigned f = 0;
  if (op_differs(a, b)) f |= FA_FIELD_OP;
  if (a->count != b->count || a->out_count != b->out_count) f |= FA_FIELD_COUNT;
  if (a->dtype != b->dtype || a->out_dtype != b->out_dtype) f |= FA_FIELD_DTYPE;
  if (a->redop != b->redop) f |= FA_FIELD_REDOP;
  if (a->root != b->root) f |= FA_FIELD_ROOT;
  if (a->algo != b->algo) f |= FA_FIELD_ALGO;
  if (a->proto != b->proto) f |= FA_FIELD_PROTO;
  return f;
}

static int sig_cmp(const fa_sig *a, const fa_sig *b)
{
  if (a->op != b->op) return a->op < b->op ? -1 : 1;
  int n = name_cmp(a, b);
  if (n) return n;
  if (a->count != b->count) return a->count < b->count ? -1 : 1;
  if (a->out_count != b->out_count) return a->out_count < b->out_count ? -1 : 1;
  if (a->dtype != b->dtype) return a->dtype < b->dtype ? -1 : 1;
  if (a->out_dtype != b->out_dtype) return a->out_dtype < b->out_dtype ? -1 : 1;
  if (a->redop != b->redop) return a->redop < b->redop ? -1 : 1;
  if (a->root != b->root) return a->root < b->root ? -1 : 1;
  if (a->algo != b->algo) return a->algo < b->algo ? -1 : 1;
  if (a->proto != b->proto) return a->proto < b->proto ? -1 : 1;
  return 0;
}

/* One member's cursor over its retained collective records. */
typedef struct cursor {
  const frz_dump *d;
  const frz_record *recs;
  const uint32_t *ix;
  uint32_t len, pos;
  int32_t comm_rank;
} cursor;

typedef struct at_seq {
  fa_sig sig;
  int32_t comm_rank;
  uint8_t completed;
  uint8_t have;        /* HAVE_*: which parts of sig are known */
} at_seq;

/* Parts of a signature a record may not give: a PyTorch entry without the
 * field (an older version, a damaged dump), or a type of a tensor without
 * elements.  A part unknown for some member is compared for none. */
enum { HAVE_IN = 1, HAVE_OUT = 2, HAVE_IN_DTYPE = 4, HAVE_OUT_DTYPE = 8, HAVE_ALGO = 16, HAVE_PROTO = 32,
       HAVE_ALL = 63 };

/* What record r of dump d gives of its signature. */
static uint8_t have_of(const frz_record *r, const frz_dump *d)
{
  /* NCCL's algorithm and protocol: known where its profiler described the op */
  if (!d->pt)
    return (uint8_t)(HAVE_IN | HAVE_OUT | HAVE_IN_DTYPE | HAVE_OUT_DTYPE |
                     (r->algo != FRZ_ALGO_UNKNOWN ? HAVE_ALGO : 0) | (r->proto != FRZ_PROTO_UNKNOWN ? HAVE_PROTO : 0));
  const frz_pt_record *p = &d->pt->records[r - d->records];
  uint8_t h = 0;
  if (p->fields & FRZ_PT_HAS_IN_SIZES) h |= HAVE_IN;
  if (p->fields & FRZ_PT_HAS_OUT_SIZES) h |= HAVE_OUT;
  if ((p->fields & FRZ_PT_HAS_IN_DTYPES) && (p->in_numel || !(p->fields & FRZ_PT_HAS_IN_SIZES)))
    h |= HAVE_IN_DTYPE;
  if ((p->fields & FRZ_PT_HAS_OUT_DTYPES) && (p->out_numel || !(p->fields & FRZ_PT_HAS_OUT_SIZES)))
    h |= HAVE_OUT_DTYPE;
  return h;
}

/* Clear, in every signature at[0..n), the parts some member does not give. */
static void common_parts(at_seq *at, uint32_t n)
{
  uint8_t common = HAVE_ALL;
  for (uint32_t i = 0; i < n; i++) common &= at[i].have;
  for (uint32_t i = 0; i < n; i++) {
    fa_sig *s = &at[i].sig;
    if (!(common & HAVE_IN)) s->count = 0;
    if (!(common & HAVE_OUT)) s->out_count = 0;
    if (!(common & HAVE_IN_DTYPE)) s->dtype = 255;
    if (!(common & HAVE_OUT_DTYPE)) s->out_dtype = 255;
    if (!(common & HAVE_ALGO)) s->algo = 255;
    if (!(common & HAVE_PROTO)) s->proto = 255;
  }
}

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
  name_memo nm;
  memset(&nm, 0, sizeof nm);
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
    cur[nc++] = (cursor){&f->dump, f->dump.records, f->idx + sl->start, sl->len, 0, r};
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
    /* one pass per place k among the records at seq s (a coalesced group
     * holds several): the members' calls there, then the next seq (the
     * smallest one a cursor points at after s) */
    uint64_t next = UINT64_MAX;
    int differs_any = 0, stop = 0;
    for (uint32_t k = 0;; k++) {
      uint32_t n = 0, teardown = 0, here = 0;
      int differs = 0;
      uint64_t in_total = 0, out_total = 0;
      uint32_t uneven = 0;
      for (uint32_t i = 0; i < nc; i++) {
        cursor *q = &cur[i];
        if (q->pos >= q->len || q->recs[q->ix[q->pos]].seq != s) continue;
        uint32_t e = q->pos;
        while (e < q->len && q->recs[q->ix[e]].seq == s) e++;
        fa_sig sg;
        uint8_t done = 0, have = HAVE_ALL;
        if (q->pos + k < e) {
          const frz_record *rec = &q->recs[q->ix[q->pos + k]];
          sg = sig_of(rec, q->d, &nm);
          have = have_of(rec, q->d);
          done = rec->state == FRZ_STATE_COMPLETED;
          if (fa_is_teardown(rec->op)) teardown++;
          if (q->d->pt && rec->op == FRZ_OP_AlltoAll) { /* (uneven totals: all-to-all only) */
            const frz_pt_record *p = &q->d->pt->records[rec - q->d->records];
            in_total += p->in_numel;
            out_total += p->out_numel;
            uneven++;
          }
          here++;
        } else { /* fewer ops in this member's coalesced group */
          memset(&sg, 0, sizeof sg);
          sg.root = -1;
          sg.dtype = sg.redop = sg.out_dtype = sg.algo = sg.proto = 255;
          sg.name = "nothing";
        }
        at[n++] = (at_seq){sg, q->comm_rank, done, have};
      }
      if (!here) break;
      common_parts(at, n);
      for (uint32_t i = 1; i < n && !differs; i++) differs = sig_cmp(&at[i].sig, &at[0].sig) != 0;
      /* some members left the comm where others go on: those are ahead
       * (analyze.c), not calling something else; nothing later aligns */
      if (teardown && teardown < n) {
        stop = 1;
        break;
      }
      /* uneven sizes: the totals of a group every member retained must agree */
      if (!differs && uneven == n && n == (uint32_t)c->size && in_total != out_total) {
        differs = 1;
        for (uint32_t i = 0, j = 0; i < nc && j < n; i++) {
          cursor *q = &cur[i];
          if (q->pos + k >= q->len || q->recs[q->ix[q->pos]].seq != s) continue;
          const frz_record *rec = &q->recs[q->ix[q->pos + k]];
          const frz_pt_record *p = &q->d->pt->records[rec - q->d->records];
          at[j].sig.count = p->in_numel;
          at[j].sig.out_count = p->out_numel;
          j++;
        }
      }
      if (differs && !c->has_mismatch) {
        c->has_mismatch = 1;
        c->mismatch.seq = s;
        if (make_groups(&c->mismatch, at, n)) goto out;
      }
      differs_any |= differs;
    }
    if (stop) break;
    if (differs_any && c->has_mismatch && c->mismatch.seq != s) {
      c->mismatch.later++;
      c->mismatch.last_seq = s;
    }
    any = 0;
    for (uint32_t i = 0; i < nc; i++) {
      cursor *q = &cur[i];
      while (q->pos < q->len && q->recs[q->ix[q->pos]].seq == s) q->pos++;
      if (q->pos >= q->len) continue;
      uint64_t qs = q->recs[q->ix[q->pos]].seq;
      if (!any || qs < next) next = qs;
      any = 1;
    }
    s = next;
  }
  rc = 0;
out:
  free(cur);
  free(at);
  return rc;
}

/* A comm whose members ran one op with other algorithms or protocols and
 * no side is a minority there (two hosts of four ranks each in a comm of
 * eight): each rank's configuration shows in every op of that signature it
 * ran, in any comm.  The job-wide tally of ranks (of hosts where the sides
 * are whole hosts: count_votes) per (algorithm, protocol)
 * for the op, count and type of the divergence picks the side whose setting
 * a unique minority of the job's ranks has (one host with NCCL_PROTO set
 * otherwise among several).  Records only the culprit of such comms. */
/* Is comm c's first divergence in its algorithm or protocol alone? */
static int config_only(const fa_comm *c)
{
  unsigned how = FA_FIELD_ALGO | FA_FIELD_PROTO;
  return c->has_mismatch && (c->mismatch.fields & how) && !(c->mismatch.fields & ~how) && c->mismatch.ngroups >= 2;
}

/* The host of global rank g as its latest dump names it; "" unknown (no
 * dump, or a PyTorch dump, which names none). */
static const char *host_of(const fa_analysis *a, int32_t g)
{
  int32_t k = g >= 0 ? fa_find_rank(a, g) : -1;
  if (k < 0) return "";
  const frz_dump *d = &fa_rank_latest(a, &a->ranks[k])->dump;
  return d->pt ? "" : d->process.host;
}

static int cmp_host_ix(const void *x, const void *y, void *h)
{
  const char *const *host = h;
  return strcmp(host[*(const uint32_t *)x], host[*(const uint32_t *)y]);
}

/* n voters: voter i on host[i] ran side[i] (0..nsides-1, or nsides for
 * another setting, counted in the total only).  Counts each side's votes
 * into votes[0..nsides) and returns the total: in hosts when every host is
 * known, there are two or more, and each host's voters all ran one side
 * (an NCCL setting such as NCCL_PROTO, NCCL_ALGO or a tuner plugin lives
 * in a host's environment: one host is one fault, however many ranks it
 * runs); otherwise in ranks. */
static uint32_t count_votes(const char *const *host, const uint32_t *side, uint32_t n, uint32_t nsides,
                            uint32_t *votes)
{
  uint32_t total = 0, nhosts = 0;
  uint32_t *ix = n ? malloc(n * sizeof *ix) : NULL;
  int aligned = ix != NULL;
  for (uint32_t i = 0; i < n; i++) {
    aligned &= host[i][0] != '\0';
    if (ix) ix[i] = i;
  }
  if (aligned) {
    qsort_r(ix, n, sizeof *ix, cmp_host_ix, (void *)host);
    for (uint32_t i = 0; i < n && aligned; i++) {
      if (i == 0 || strcmp(host[ix[i]], host[ix[i - 1]])) nhosts++;
      else aligned = side[ix[i]] == side[ix[i - 1]];
    }
    aligned &= nhosts >= 2;
  }
  memset(votes, 0, nsides * sizeof *votes);
  for (uint32_t i = 0; i < n; i++) {
    if (aligned && i > 0 && !strcmp(host[ix[i]], host[ix[i - 1]])) continue; /* (a host's first voter only) */
    uint32_t v = aligned ? ix[i] : i;
    if (side[v] < nsides) votes[side[v]]++;
    total++;
  }
  free(ix);
  return total;
}

/* The side of n voters with the unique fewest votes, fewer than half of
 * total; -1 none. */
static int32_t unique_minority(const uint32_t *votes, uint32_t nsides, uint32_t total)
{
  int32_t best = -1;
  for (uint32_t g = 0; g < nsides; g++)
    if (best < 0 || votes[g] < votes[best]) best = (int32_t)g;
  for (uint32_t g = 0; best >= 0 && g < nsides; g++)
    if ((int32_t)g != best && votes[g] == votes[best]) return -1;
  return best >= 0 && votes[best] && 2 * votes[best] < total ? best : -1;
}

/* A config split's culprit counted in hosts where its sides are whole
 * hosts (count_votes): two hosts of a sub-comm, one with three of its
 * ranks and the other with four, are one against one, no minority. */
static void config_by_hosts(const fa_analysis *a, const fa_comm *c, fa_mismatch *mm)
{
  if (mm->ngroups > 8) return;
  const char **host = malloc(mm->nmembers * sizeof *host);
  uint32_t *side = malloc(mm->nmembers * sizeof *side), votes[8];
  if (host && side) {
    for (uint32_t g = 0; g < mm->ngroups; g++)
      for (uint32_t i = 0; i < mm->groups[g].n; i++) {
        uint32_t m = mm->groups[g].first + i;
        host[m] = host_of(a, fa_global_of(c, mm->members[m]));
        side[m] = g;
      }
    uint32_t total = count_votes(host, side, mm->nmembers, mm->ngroups, votes);
    if (total < mm->nmembers) mm->culprit = unique_minority(votes, mm->ngroups, total); /* (counted in hosts) */
  }
  free(host);
  free(side);
}

void fa_config_minority(fa_analysis *a)
{
  for (uint32_t ci = 0; ci < a->ncomms; ci++)
    if (config_only(&a->comms[ci])) config_by_hosts(a, &a->comms[ci], &a->comms[ci].mismatch);
  /* comms whose own minorities run different settings (one names the ranks
   * on Simple, another those on LL): a comm's minority is then no evidence
   * of which setting is wrong, and the job-wide count below decides, or
   * nobody is named */
  int conflict = 0;
  const fa_sig *named = NULL;
  for (uint32_t ci = 0; ci < a->ncomms && !conflict; ci++) {
    const fa_mismatch *mm = &a->comms[ci].mismatch;
    if (!config_only(&a->comms[ci]) || mm->culprit < 0) continue;
    const fa_sig *cs = &mm->groups[mm->culprit].sig;
    if (named && (named->algo != cs->algo || named->proto != cs->proto)) conflict = 1;
    named = cs;
  }
  for (uint32_t ci = 0; conflict && ci < a->ncomms; ci++)
    if (config_only(&a->comms[ci])) a->comms[ci].mismatch.culprit = -1;
  for (uint32_t ci = 0; ci < a->ncomms; ci++) {
    fa_mismatch *mm = &a->comms[ci].mismatch;
    unsigned how = FA_FIELD_ALGO | FA_FIELD_PROTO;
    if (!a->comms[ci].has_mismatch || mm->culprit >= 0 || !(mm->fields & how) || (mm->fields & ~how) ||
        mm->ngroups < 2 || mm->ngroups > 8)
      continue;
    const fa_sig *g0 = &mm->groups[0].sig;
    uint32_t votes[8], nv = 0;
    const char **host = malloc((a->nranks ? a->nranks : 1) * sizeof *host);
    uint32_t *side = malloc((a->nranks ? a->nranks : 1) * sizeof *side);
    if (!host || !side) { /* (out of memory: no culprit named) */
      free(host);
      free(side);
      continue;
    }
    for (uint32_t k = 0; k < a->nranks; k++) {
      const frz_dump *d = &fa_rank_latest(a, &a->ranks[k])->dump;
      if (d->pt) continue;
      int32_t got = -1; /* (the group whose setting this rank ran the signature with) */
      for (uint64_t i = 0; i < d->nrecords && got < 0; i++) {
        const frz_record *r = &d->records[i];
        if (r->kind != FRZ_KIND_COLL || r->op != g0->op || r->count != g0->count || r->dtype != g0->dtype ||
            r->algo == FRZ_ALGO_UNKNOWN || r->proto == FRZ_PROTO_UNKNOWN)
          continue;
        for (uint32_t g = 0; g < mm->ngroups; g++) {
          const fa_sig *gs = &mm->groups[g].sig;
          if ((gs->algo == 255 || gs->algo == r->algo) && (gs->proto == 255 || gs->proto == r->proto)) {
            got = (int32_t)g;
            break;
          }
        }
        if (got < 0) got = (int32_t)mm->ngroups; /* another setting: counted, no group's */
      }
      if (got < 0) continue;
      host[nv] = d->process.host;
      side[nv++] = (uint32_t)got;
    }
    uint32_t total = count_votes(host, side, nv, mm->ngroups, votes);
    mm->culprit = unique_minority(votes, mm->ngroups, total);
    free(host);
    free(side);
  }
  /* a split with no minority of its own (half and half): the side that runs
   * the setting another comm's split names as its culprit's is the
   * culprit here too (one host's setting, one fault), when exactly one side
   * does and no culprit elsewhere points at another side */
  for (uint32_t ci = 0; ci < a->ncomms; ci++) {
    fa_mismatch *mm = &a->comms[ci].mismatch;
    if (!config_only(&a->comms[ci]) || mm->culprit >= 0) continue;
    int32_t pick = -1;
    int clash = 0;
    for (uint32_t oi = 0; oi < a->ncomms && !clash; oi++) {
      const fa_mismatch *om = &a->comms[oi].mismatch;
      if (oi == ci || !config_only(&a->comms[oi]) || om->culprit < 0) continue;
      const fa_sig *cs = &om->groups[om->culprit].sig;
      for (uint32_t g = 0; g < mm->ngroups && !clash; g++) {
        const fa_sig *gs = &mm->groups[g].sig;
        if (gs->algo != cs->algo || gs->proto != cs->proto) continue;
        if (pick >= 0 && pick != (int32_t)g) clash = 1;
        pick = (int32_t)g;
      }
    }
    if (pick >= 0 && !clash && 2 * mm->groups[pick].n <= mm->nmembers) mm->culprit = pick;
  }
}
