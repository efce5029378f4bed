/* p2p.c — match the sends of src -> dst with the receives on dst from src,
 * by p2p seq, and turn pending operations without a counterpart into
 * missing links. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* One Send or Recv, keyed by the pair it belongs to. */
typedef struct p2p_op {
  int32_t src, dst;  /* comm ranks */
  uint64_t seq;
  uint64_t shown;    /* the seq reports show: PyTorch's p2p_seq_id for its dumps, else seq */
  fa_sig sig;        /* what was sent or received (sizes compared across the pair) */
  uint8_t dir;       /* FRZ_DIR_SEND (recorded on src) or FRZ_DIR_RECV (on dst) */
  uint8_t state;
} p2p_op;

static int cmp_op(const void *x, const void *y)
{
  const p2p_op *a = x, *b = y;
  if (a->src != b->src) return a->src < b->src ? -1 : 1;
  if (a->dst != b->dst) return a->dst < b->dst ? -1 : 1;
  if (a->seq != b->seq) return a->seq < b->seq ? -1 : 1;
  return (a->dir > b->dir) - (a->dir < b->dir);
}

/* Direction of a p2p record (its dir field, else its op). */
static unsigned rec_dir(const frz_record *r)
{
  if (r->dir == FRZ_DIR_SEND || r->dir == FRZ_DIR_RECV) return r->dir;
  if (r->op == FRZ_OP_Send) return FRZ_DIR_SEND;
  if (r->op == FRZ_OP_Recv) return FRZ_DIR_RECV;
  return FRZ_DIR_NONE;
}

/* Highest seq of direction `dir` in ops[i..j) (all of one pair), or -1. */
static int64_t max_seq(const p2p_op *ops, size_t i, size_t j, unsigned dir)
{
  int64_t m = -1;
  for (size_t k = i; k < j; k++)
    if (ops[k].dir == dir && (int64_t)ops[k].seq > m) m = (int64_t)ops[k].seq;
  return m;
}

/* A Send and its Recv that do not move the same number of elements (a
 * receive smaller than its send cannot complete in NCCL; a larger one
 * waits for data that never comes): the comm's mismatch, the two sides
 * its groups, no single culprit. */
static int pair_mismatch(fa_comm *c, const p2p_op *x, const p2p_op *y)
{
  fa_mismatch *mm = &c->mismatch;
  memset(mm, 0, sizeof *mm);
  mm->groups = calloc(2, sizeof *mm->groups);
  mm->members = malloc(2 * sizeof *mm->members);
  if (!mm->groups || !mm->members) {
    free(mm->groups);
    free(mm->members);
    memset(mm, 0, sizeof *mm);
    return -1;
  }
  const p2p_op *side[2] = {x->dir == FRZ_DIR_SEND ? x : y, x->dir == FRZ_DIR_SEND ? y : x};
  for (int i = 0; i < 2; i++) {
    mm->groups[i] = (fa_group){side[i]->sig, (uint32_t)i, 1, side[i]->state == FRZ_STATE_COMPLETED};
    mm->members[i] = i == 0 ? side[0]->src : side[1]->dst;
  }
  mm->ngroups = mm->nmembers = 2;
  mm->seq = x->shown;
  mm->fields = FA_FIELD_COUNT;
  mm->culprit = -1;
  c->has_mismatch = 1;
  return 0;
}

/* The unmatched operations of one pair (ops[i..j)): for each direction the
 * first pending op whose counterpart never got that far. */
static int pair_links(fa_analysis *a, fa_comm *c, uint32_t *cap, const p2p_op *ops, size_t i,
                      size_t j)
{
  int32_t src = ops[i].src, dst = ops[i].dst;
  int64_t max_send = max_seq(ops, i, j, FRZ_DIR_SEND), max_recv = max_seq(ops, i, j, FRZ_DIR_RECV);
  int done_dir[3] = {0, 0, 0};
  for (size_t k = i, e; k < j; k = e) {
    const p2p_op *o = &ops[k];
    unsigned dirs = 0;
    int over = 0; /* completed or failed: not pending */
    for (e = k; e < j && ops[e].seq == o->seq; e++) {
      dirs |= 1u << ops[e].dir;
      if (ops[e].state == FRZ_STATE_COMPLETED || ops[e].state == FRZ_STATE_FAILED) over = 1;
    }
    if (dirs == ((1u << FRZ_DIR_SEND) | (1u << FRZ_DIR_RECV))) {
      if (!c->has_mismatch && e - k == 2 && ops[k].sig.count != ops[k + 1].sig.count &&
          pair_mismatch(c, &ops[k], &ops[k + 1]))
        return -1;
      continue;
    }
    if (over || done_dir[o->dir]) continue;
    int32_t other = o->dir == FRZ_DIR_SEND ? dst : src;
    int other_no_dump = c->members[other].rank < 0;
    int64_t other_max = o->dir == FRZ_DIR_SEND ? max_recv : max_send;
    if (!other_no_dump && other_max >= (int64_t)o->seq) continue; /* retained elsewhere */
    fa_link l;
    memset(&l, 0, sizeof l);
    l.comm = (int32_t)(c - a->comms);
    l.src_comm_rank = src;
    l.dst_comm_rank = dst;
    l.src = c->members[src].global_rank;
    l.dst = c->members[dst].global_rank;
    l.channel = -1;
    l.p2p = 1;
    l.pending_dir = o->dir;
    l.counterpart_no_dump = (uint8_t)other_no_dump;
    l.seq = o->shown;
    if (fa_grow(&c->links, cap, c->nlinks + 1, sizeof *c->links)) return -1;
    c->links[c->nlinks++] = l;
    done_dir[o->dir] = 1;
  }
  return 0;
}

int fa_p2p_comm(fa_analysis *a, fa_comm *c)
{
  size_t total = 0;
  for (int32_t r = 0; r < c->size; r++) {
    const fa_member *m = &c->members[r];
    if (m->rank >= 0) total += a->frames[m->frame].p2p[m->entry].len;
  }
  if (!total) return 0;
  p2p_op *ops = malloc(total * sizeof *ops);
  if (!ops) return -1;
  size_t n = 0;
  for (int32_t r = 0; r < c->size; r++) {
    const fa_member *m = &c->members[r];
    if (m->rank < 0) continue;
    const fa_frame *f = &a->frames[m->frame];
    const fa_slice *sl = &f->p2p[m->entry];
    for (uint32_t k = 0; k < sl->len; k++) {
      const frz_record *rec = &f->dump.records[f->idx[sl->start + k]];
      unsigned dir = rec_dir(rec);
      if (dir == FRZ_DIR_NONE || rec->peer < 0 || rec->peer >= c->size || rec->peer == r)
        continue;
      p2p_op *o = &ops[n++];
      o->src = dir == FRZ_DIR_SEND ? r : rec->peer;
      o->dst = dir == FRZ_DIR_SEND ? rec->peer : r;
      o->seq = rec->seq;
      o->shown = rec->seq;
      memset(&o->sig, 0, sizeof o->sig);
      o->sig.op = rec->op;
      o->sig.root = -1;
      o->sig.count = rec->count;
      o->sig.dtype = rec->dtype;
      o->sig.redop = o->sig.out_dtype = 255;
      if (f->dump.pt) {
        const frz_pt_record *p = &f->dump.pt->records[rec - f->dump.records];
        o->shown = p->p2p_seq_id;
        o->sig.count = dir == FRZ_DIR_SEND ? p->in_numel : p->out_numel;
        o->sig.name = p->name < f->dump.pt->nnames ? f->dump.pt->names[p->name] : NULL;
      }
      o->sig.out_count = o->sig.count; /* one buffer: shown as one size */
      o->sig.out_dtype = o->sig.dtype;
      o->dir = (uint8_t)dir;
      o->state = rec->state;
    }
  }
  qsort(ops, n, sizeof *ops, cmp_op);
  uint32_t cap = c->nlinks;
  int rc = 0;
  for (size_t i = 0; i < n && rc == 0;) {
    size_t j = i;
    while (j < n && ops[j].src == ops[i].src && ops[j].dst == ops[i].dst) j++;
    rc = pair_links(a, c, &cap, ops, i, j);
    i = j;
  }
  free(ops);
  return rc;
}
