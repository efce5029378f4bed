/* p2p.c — match the sends of src -> dst with the receives on dst from src,
 * by p2p seq, and turn pending operations without a counterpart into
 * missing links. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "pytorch_fr.h"

/* One Send or Recv, keyed by the pair it belongs to. */
typedef struct p2p_op {
  int32_t src, dst;  /* comm ranks */
  uint64_t seq;
  uint64_t shown;    /* the seq reports show: PyTorch's p2p_seq_id for its dumps, else seq */
  fa_sig sig;        /* what was sent or received (sizes compared across the pair) */
  int64_t t_enq;     /* enqueue time on the wall clock; 0 unknown */
  uint8_t pt;        /* from a PyTorch dump: seq aligned at the first op not completed */
  uint8_t dir;       /* FRZ_DIR_SEND (recorded on src) or FRZ_DIR_RECV (on dst) */
  uint8_t state;
  uint8_t ended;     /* the recording side's process ended (exit, fatal signal) without giving up */
  uint8_t long_in;   /* enqueued FA_JOINED_NS or more before its dump was taken, or given up on
                        (not a PyTorch dump) */
  uint8_t gave_up;   /* its rank gave up on it: a watchdog judged it stuck */
  int64_t t_gave;    /* when its rank gave up (wall clock: its reaction's start, or the end of a
                        process that waited to its end); 0 not known or did not */
  uint8_t waited;    /* enqueued FA_GAVE_UP_NS or more before its dump was taken */
  uint8_t tracked;   /* its start and completion are tracked (not NO_TRACKING; not a PyTorch dump) */
  uint64_t group;    /* its NCCL group on the recording rank (ncclGroupStart..End); 0 none */
} p2p_op;

/* The NCCL groups of a link's waiting ops, by the comm rank that made them:
 * src's and dst's for a joined link, the waiting side's alone otherwise. */
typedef struct link_groups {
  uint64_t src, dst;
} link_groups;

/* How long both sides of a p2p op must have waited for it (from its call),
 * started and neither done, for the pair to count as stuck there (joined)
 * rather than in flight: a dump taken by hand catches transfers in flight;
 * a hang's dump comes after the watchdog's timeout (1 s at the least),
 * counted the same way. */
#define FA_JOINED_NS INT64_C(1000000000)

static int cmp_op(const void *x, const void *y)
{
  const p2p_op *a = x, *b = y;
  if (a->src != b->src) return a->src < b->src ? -1 : 1;
  if (a->dst != b->dst) return a->dst < b->dst ? -1 : 1;
  if (a->seq != b->seq) return a->seq < b->seq ? -1 : 1;
  return (a->dir > b->dir) - (a->dir < b->dir);
}

/* Is the op of direction dir at (src, dst, seq) among the n ops of q, the
 * ops left out of the matching because they are queued on their stream
 * behind an unfinished op (sorted by cmp_op)?  Kept to say so of the link
 * that waits for one. */
static int is_queued(const p2p_op *q, size_t n, int32_t src, int32_t dst, uint64_t seq, unsigned dir)
{
  p2p_op k;
  memset(&k, 0, sizeof k);
  k.src = src;
  k.dst = dst;
  k.seq = seq;
  k.dir = (uint8_t)dir;
  return n && bsearch(&k, q, n, sizeof *q, cmp_op) != NULL;
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

/* The op of direction dir at seq in ops[i..j) (one pair), or NULL. */
static p2p_op *at(p2p_op *ops, size_t i, size_t j, unsigned dir, uint64_t seq)
{
  for (size_t k = i; k < j; k++)
    if (ops[k].dir == dir && ops[k].seq == seq) return &ops[k];
  return NULL;
}

/* PyTorch dumps align a pair's ops at each side's first op that did not
 * complete (pytorch_fr.h).  That is one off when one side's first pending
 * op is the match of the other side's last completed one: a receive still
 * pending whose send completed, the members of a batch (nccl:coalesced)
 * that take the batch's state while some of them went through.  When side
 * X's first pending op has no counterpart and side Y's op just before it
 * completed, the enqueue times decide: matched ops of a pair are enqueued
 * together (the same step), so if X's pending op was enqueued nearer to
 * Y's completed one than X's own op before it was (or X retains none
 * before it), they are one op, and X's ops move down by one.  Returns
 * whether it moved any. */
static int realign(p2p_op *ops, size_t i, size_t j)
{
  int moved = 0;
  for (unsigned dir = FRZ_DIR_SEND; dir <= FRZ_DIR_RECV; dir++) {
    unsigned other = dir == FRZ_DIR_SEND ? FRZ_DIR_RECV : FRZ_DIR_SEND;
    p2p_op *x = at(ops, i, j, dir, FRZ_PT_P2P_BASE);
    p2p_op *y = at(ops, i, j, other, FRZ_PT_P2P_BASE - 1);
    if (!x || !x->pt || !y || !y->pt || at(ops, i, j, other, FRZ_PT_P2P_BASE) ||
        y->state != FRZ_STATE_COMPLETED || x->state == FRZ_STATE_COMPLETED || !x->t_enq || !y->t_enq)
      continue;
    const p2p_op *xp = at(ops, i, j, dir, FRZ_PT_P2P_BASE - 1);
    int64_t d1 = x->t_enq - y->t_enq, d0 = xp && xp->t_enq ? xp->t_enq - y->t_enq : INT64_MAX;
    if (d1 < 0) d1 = -d1;
    if (d0 < 0 && d0 != INT64_MIN) d0 = -d0;
    if (d1 >= d0) continue;
    for (size_t k = i; k < j; k++)
      if (ops[k].dir == dir && ops[k].pt) ops[k].seq--; /* `shown` (PyTorch's p2p_seq_id) stays */
    moved = 1;
  }
  return moved;
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
 * first pending op whose counterpart never got that far, or that both sides
 * posted while one side's process then ended with it in flight (its part
 * never comes: the other side waits for it), or that both sides posted and
 * started and neither finished, both alive (joined: it never moved). */
static int pair_links(fa_analysis *a, fa_comm *c, uint32_t *cap, const p2p_op *ops, size_t i,
                      size_t j, link_groups *lg, const p2p_op *q, size_t nq)
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
    int ended = 0; /* both posted, neither done, one side's process ended: the other waits for it */
    int joined = 0;
    int late = 0;  /* both posted, one side only after the other had given up on it: it came too late */
    int not_started = 0; /* both posted, one side started and waits, the other's never started */
    int64_t late_by = 0;
    if (dirs == ((1u << FRZ_DIR_SEND) | (1u << FRZ_DIR_RECV))) {
      if (!c->has_mismatch && e - k == 2 && ops[k].sig.count != ops[k + 1].sig.count &&
          pair_mismatch(c, &ops[k], &ops[k + 1]))
        return -1;
      if (e - k != 2) continue;
      /* (the late side's op may even have completed: a send's data can sit
       * in the receiver's buffers; the side that gave up never finished) */
      for (int x = 0; x < 2 && !late; x++) { /* (50 ms: the margin of one host's clocks, late.c) */
        const p2p_op *g = &ops[k + x], *y = &ops[k + 1 - x];
        if (g->t_gave && g->state != FRZ_STATE_COMPLETED && g->state != FRZ_STATE_FAILED && y->t_enq &&
            y->t_enq > g->t_gave + INT64_C(50000000)) {
          o = g; /* the side that gave up waits for the late one */
          late = 1;
          late_by = y->t_enq - g->t_gave;
        }
      }
      if (late) {
      } else if (over) {
        continue;
      } else if (ops[k].ended != ops[k + 1].ended) {
        o = ops[k].ended ? &ops[k + 1] : &ops[k]; /* the side still alive, waiting */
        ended = 1;
      } else if (!ops[k].ended && ops[k].state == FRZ_STATE_STARTED && ops[k + 1].state == FRZ_STATE_STARTED &&
                 ((ops[k].long_in && ops[k + 1].long_in) || (ops[k].gave_up && ops[k + 1].waited) ||
                  (ops[k + 1].gave_up && ops[k].waited))) {
        /* (one side's watchdog judged it stuck: the other, in it 100 ms or
         * more, is as stuck, whatever its own timeout) */
        joined = 1; /* both in it, neither done: the link or a device never moved it */
      } else if (!ops[k].ended && !ops[k].gave_up && !ops[k + 1].gave_up && ops[k].tracked &&
                 ops[k + 1].tracked && ops[k].long_in && ops[k + 1].long_in &&
                 (ops[k].state == FRZ_STATE_STARTED) != (ops[k + 1].state == FRZ_STATE_STARTED)) {
        /* one side's kernel runs, waiting, the other's never started though
         * no NCCL op of its stream holds it (those are left out above): the
         * stream is held by something else, as a split in start of a
         * collective (fr-analyze(1)) */
        o = ops[k].state == FRZ_STATE_STARTED ? &ops[k] : &ops[k + 1];
        not_started = 1;
      } else {
        continue;
      }
    }
    if ((over && !late) || done_dir[o->dir]) continue;
    int32_t other = o->dir == FRZ_DIR_SEND ? dst : src;
    int other_no_dump = c->members[other].rank < 0;
    int64_t other_max = o->dir == FRZ_DIR_SEND ? max_recv : max_send;
    if (joined && (done_dir[FRZ_DIR_SEND] || done_dir[FRZ_DIR_RECV])) continue;
    if (!ended && !joined && !late && !not_started && !other_no_dump && other_max >= (int64_t)o->seq)
      continue; /* retained elsewhere */
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
    l.counterpart_ended = (uint8_t)ended;
    l.counterpart_late = (uint8_t)late;
    l.late_by_ns = late_by;
    l.counterpart_not_started = (uint8_t)not_started;
    l.counterpart_queued = (uint8_t)(!ended && !joined && !late && !not_started &&
                                     is_queued(q, nq, src, dst, o->seq, o->dir == FRZ_DIR_SEND ? FRZ_DIR_RECV
                                                                                             : FRZ_DIR_SEND));
    l.joined = (uint8_t)joined;
    if (joined) l.pending_dir = FRZ_DIR_SEND; /* (the sender's side named first) */
    l.seq = o->shown;
    if (fa_grow(&c->links, cap, c->nlinks + 1, sizeof *c->links)) return -1;
    lg[c->nlinks] = (link_groups){0, 0};
    if (joined) {
      const p2p_op *s = ops[k].dir == FRZ_DIR_SEND ? &ops[k] : &ops[k + 1];
      lg[c->nlinks] = (link_groups){s->group, (s == &ops[k] ? &ops[k + 1] : &ops[k])->group};
    } else if (o->dir == FRZ_DIR_SEND) {
      lg[c->nlinks].src = o->group;
    } else {
      lg[c->nlinks].dst = o->group;
    }
    c->links[c->nlinks++] = l;
    done_dir[o->dir] = 1;
  }
  return 0;
}

/* NCCL runs the p2p ops of one group (ncclGroupStart..ncclGroupEnd: an
 * all-to-all, a batch of isend/irecv) as one launch that completes as a
 * whole, so an op both sides posted and started waits with its group when,
 * on either side, the same group holds an op whose peer never posted its
 * counterpart: a consequence of that missing op, not of the device or the
 * network.  Marks such joined links of c (from index first on). */
static void held_by_groups(fa_comm *c, uint32_t first, const link_groups *lg)
{
  for (uint32_t i = first; i < c->nlinks; i++) {
    fa_link *l = &c->links[i];
    if (!l->p2p || !l->joined) continue;
    for (uint32_t k = first; k < c->nlinks && !l->held_by_group; k++) {
      const fa_link *w = &c->links[k];
      if (!w->p2p || w->joined || w->counterpart_late) continue;
      int32_t owner = w->pending_dir == FRZ_DIR_SEND ? w->src_comm_rank : w->dst_comm_rank;
      uint64_t g = w->pending_dir == FRZ_DIR_SEND ? lg[k].src : lg[k].dst;
      if (g && ((owner == l->src_comm_rank && g == lg[i].src) || (owner == l->dst_comm_rank && g == lg[i].dst)))
        l->held_by_group = 1;
    }
  }
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
  p2p_op *q = malloc(total * sizeof *q); /* (queued behind an unfinished op: is_queued) */
  if (!ops || !q) {
    free(ops);
    free(q);
    return -1;
  }
  size_t n = 0, nq = 0;
  for (int32_t r = 0; r < c->size; r++) {
    const fa_member *m = &c->members[r];
    if (m->rank < 0) continue;
    const fa_frame *f = &a->frames[m->frame];
    const fa_slice *sl = &f->p2p[m->entry];
    uint32_t trig = f->dump.process.trigger;
    int ended = !f->dump.pt && fa_trigger_ended(trig) && !fa_gave_up(&f->dump, 0);
    int gave_up_here = !f->dump.pt && sl->len && fa_gave_up(&f->dump, c->id);
    for (uint32_t k = 0; k < sl->len; k++) {
      const frz_record *rec = &f->dump.records[f->idx[sl->start + k]];
      unsigned dir = rec_dir(rec);
      if (dir == FRZ_DIR_NONE || rec->peer < 0 || rec->peer >= c->size || rec->peer == r)
        continue;
      /* not posted as far as its peer can tell: in a group never ended, or
       * queued behind an unfinished op on its stream (it has not started) */
      if (rec->flags & FRZ_RF_GROUP_OPEN) continue;
      if (fa_rec_behind(&f->dump, rec, c->id)) {
        p2p_op *x = &q[nq++];
        memset(x, 0, sizeof *x);
        x->src = dir == FRZ_DIR_SEND ? r : rec->peer;
        x->dst = dir == FRZ_DIR_SEND ? rec->peer : r;
        x->seq = rec->seq;
        x->dir = (uint8_t)dir;
        continue;
      }
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
      o->pt = f->dump.pt != NULL;
      o->t_enq = rec->t_enqueue_ns ? (int64_t)rec->t_enqueue_ns - (int64_t)f->dump.process.anchor_monotonic_ns +
                                         (int64_t)f->dump.process.anchor_realtime_ns
                                   : 0;
      o->state = rec->state;
      o->tracked = !f->dump.pt && !(rec->flags & FRZ_RF_NO_TRACKING);
      o->group = rec->group_id;
      o->ended = (uint8_t)(ended && !fa_waited_to_end(&f->dump, rec)); /* (one that waited, then ended, gave up) */
      /* (or its rank gave up on it: a watchdog judged it stuck, and aborted;
       * or its rank gave up at all while it had been in flight
       * FA_GAVE_UP_NS or more: a watchdog's reaction tears down every comm
       * of the process, one after another, and judged all of its ops in
       * flight alike, whichever comm the abort had reached when the dump
       * was taken) */
      int waited_to_reaction = f->reaction_ns && rec->t_enqueue_ns && rec->t_enqueue_ns <= f->reaction_ns &&
                               f->reaction_ns - rec->t_enqueue_ns >= FA_GAVE_UP_NS &&
                               (rec->state == FRZ_STATE_ENQUEUED || rec->state == FRZ_STATE_STARTED);
      /* (or its process ended after it had waited FA_GAVE_UP_NS: a
       * watchdog that ends the process without a teardown gave up on it) */
      o->gave_up = !f->dump.pt && (((rec->flags & FRZ_RF_ABORTED) && gave_up_here) || waited_to_reaction ||
                                   fa_waited_to_end(&f->dump, rec));
      o->long_in = !f->dump.pt && ((rec->t_enqueue_ns && f->dump.process.frame_time_ns >= rec->t_enqueue_ns &&
                                    (int64_t)(f->dump.process.frame_time_ns - rec->t_enqueue_ns) >= FA_JOINED_NS) ||
                                   o->gave_up);
      /* in flight FA_GAVE_UP_NS or more when its dump was taken: long enough
       * when the other side gave up on the same op (pair_links) */
      o->waited = !f->dump.pt && rec->t_enqueue_ns && f->dump.process.frame_time_ns >= rec->t_enqueue_ns &&
                  f->dump.process.frame_time_ns - rec->t_enqueue_ns >= FA_GAVE_UP_NS;
      uint64_t tg = !o->gave_up ? 0 : f->reaction_ns ? f->reaction_ns
                                  : fa_waited_to_end(&f->dump, rec) ? f->dump.process.frame_time_ns : 0;
      o->t_gave = tg ? (int64_t)tg - (int64_t)f->dump.process.anchor_monotonic_ns +
                           (int64_t)f->dump.process.anchor_realtime_ns
                     : 0;
    }
  }
  qsort(ops, n, sizeof *ops, cmp_op);
  if (nq) qsort(q, nq, sizeof *q, cmp_op);
  for (size_t i = 0; i < n;) {
    size_t j = i;
    while (j < n && ops[j].src == ops[i].src && ops[j].dst == ops[i].dst) j++;
    if (realign(ops, i, j)) qsort(ops + i, j - i, sizeof *ops, cmp_op);
    i = j;
  }
  uint32_t cap = c->nlinks, first = c->nlinks;
  /* (at most one link per direction of each pair) */
  link_groups *lg = malloc((c->nlinks + 2 * n + 1) * sizeof *lg);
  int rc = lg ? 0 : -1;
  for (size_t i = 0; i < n && rc == 0;) {
    size_t j = i;
    while (j < n && ops[j].src == ops[i].src && ops[j].dst == ops[i].dst) j++;
    rc = pair_links(a, c, &cap, ops, i, j, lg, q, nq);
    i = j;
  }
  if (rc == 0) held_by_groups(c, first, lg);
  free(lg);
  free(ops);
  free(q);
  return rc;
}
