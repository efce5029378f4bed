/* pytorch_ops.c — the entries of a PyTorch Flight Recorder dump as records:
 * op names, sizes and types, coalesced groups, and p2p seqs. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pytorch_int.h"

/* Every op name PyTorch's ProcessGroupNCCL writes into profiling_name
 * ("nccl:<name>"; torch/distributed/flight_recorder/components/types.py
 * lists them as COLLECTIVES and P2P), older spellings, and the NCCL op
 * each one runs.  "coalesced" and the "*_coalesced" closing names are
 * read by name (coalesced_close). */
#define OPN(s, op) {s, sizeof s - 1, op}
static const struct {
  const char *name;
  uint8_t len;
  uint16_t op;
} op_map[] = {
    OPN("all_reduce", FRZ_OP_AllReduce),
    OPN("allreduce", FRZ_OP_AllReduce),
    OPN("all_reduce_coalesced", FRZ_OP_AllReduce),
    OPN("allreduce_coalesced", FRZ_OP_AllReduce),
    OPN("all_reduce_barrier", FRZ_OP_AllReduce),
    OPN("barrier", FRZ_OP_AllReduce),
    OPN("broadcast", FRZ_OP_Broadcast),
    OPN("_broadcast_oop", FRZ_OP_Broadcast),
    OPN("reduce", FRZ_OP_Reduce),
    OPN("_reduce_oop", FRZ_OP_Reduce),
    OPN("all_gather", FRZ_OP_AllGather),
    OPN("allgather", FRZ_OP_AllGather),
    OPN("all_gather_single", FRZ_OP_AllGather),
    OPN("all_gather_v", FRZ_OP_AllGather),
    OPN("_all_gather_base", FRZ_OP_AllGather),
    OPN("_allgather_base", FRZ_OP_AllGather),
    OPN("all_gather_base", FRZ_OP_AllGather),
    OPN("allgather_coalesced", FRZ_OP_AllGather),
    OPN("allgather_into_tensor_coalesced", FRZ_OP_AllGather),
    OPN("all_gather_into_tensor_coalesced", FRZ_OP_AllGather),
    OPN("ALLGATHER_coalesced", FRZ_OP_AllGather),
    OPN("reduce_scatter", FRZ_OP_ReduceScatter),
    OPN("reduce_scatter_single", FRZ_OP_ReduceScatter),
    OPN("reduce_scatter_v", FRZ_OP_ReduceScatter),
    OPN("_reduce_scatter_base", FRZ_OP_ReduceScatter),
    OPN("reduce_scatter_base", FRZ_OP_ReduceScatter),
    OPN("reduce_scatter_tensor_coalesced", FRZ_OP_ReduceScatter),
    OPN("REDUCE_SCATTER_coalesced", FRZ_OP_ReduceScatter),
    OPN("all_to_all", FRZ_OP_AlltoAll),
    OPN("all_to_all_single", FRZ_OP_AlltoAll),
    OPN("all_to_all_v_single", FRZ_OP_AlltoAll),
    OPN("alltoall", FRZ_OP_AlltoAll),
    OPN("alltoall_base", FRZ_OP_AlltoAll),
    OPN("all_to_all_base", FRZ_OP_AlltoAll),
    OPN("gather", FRZ_OP_Gather),
    OPN("scatter", FRZ_OP_Scatter),
    OPN("split", FRZ_OP_CommSplit),
    OPN("send", FRZ_OP_Send),
    OPN("recv", FRZ_OP_Recv),
    OPN("recvanysource", FRZ_OP_Recv),
};
#undef OPN

/* pv_int, with an int node read in place (an entry has a dozen). */
static inline int int_of(const pv *v, int64_t *out)
{
  if (v && v->type == PV_INT) {
    *out = v->num.i;
    return 0;
  }
  return pv_int(v, out);
}

/* torch ScalarType names to ncclDataType_t */
#define DTN(s, t) {s, sizeof s - 1, t}
static const struct {
  const char *name;
  uint8_t len;
  uint8_t dtype;
} dtype_map[] = {
    DTN("Char", 0),  DTN("Byte", 1),   DTN("Bool", 1),     DTN("Int", 2),     DTN("UInt32", 3),
    DTN("Long", 4),  DTN("UInt64", 5), DTN("Half", 6),     DTN("Float", 7),   DTN("Double", 8),
    DTN("BFloat16", 9), DTN("Float8_e4m3fn", 10), DTN("Float8_e5m2", 11),
};
#undef DTN

uint16_t pt_op_of_word(const char *w, size_t n)
{
  for (size_t i = 0; i < sizeof op_map / sizeof *op_map; i++) /* length, then first byte, then the rest */
    if (op_map[i].len == n && n && op_map[i].name[0] == w[0] && memcmp(op_map[i].name, w, n) == 0)
      return op_map[i].op;
  return FRZ_OP_NONE;
}

/* The name word of a profiling name: after the backend prefix ("nccl:"),
 * up to a blank.  *n its length. */
static const char *name_word(const char *pname, size_t *n)
{
  const char *w = strchr(pname, ':');
  w = w ? w + 1 : pname;
  *n = strcspn(w, " ");
  return w;
}

int pt_p2p_ranks(const char *pname, int32_t *self, int32_t *peer)
{
  size_t n;
  const char *w = name_word(pname, &n);
  uint16_t op = pt_op_of_word(w, n);
  const char *sp = strchr(pname, ' ');
  if (op != FRZ_OP_Send && op != FRZ_OP_Recv) return -1;
  if (!sp) return -1;
  /* "A->B" or "A<-B" (as sscanf "%ld%2[-<>]%ld" would read it, without its cost) */
  char *end;
  long a = strtol(sp + 1, &end, 10);
  if (end == sp + 1) return -1;
  char arrow[3];
  size_t k = 0;
  while (k < 2 && (end[k] == '-' || end[k] == '<' || end[k] == '>')) arrow[k] = end[k], k++;
  arrow[k] = '\0';
  const char *bp = end + k;
  long b = strtol(bp, &end, 10);
  if (!k || end == bp) return -1;
  if ((strcmp(arrow, "->") != 0 && strcmp(arrow, "<-") != 0) || a < 0 || b < 0 ||
      a > INT32_MAX || b > INT32_MAX)
    return -1;
  *self = (int32_t)a;
  *peer = (int32_t)b;
  return 0;
}

/* The closing record of a coalesced group: "coalesced" (p2p batches and,
 * before 2.7, every group) or "<OPTYPE>_coalesced" (ALLGATHER_coalesced,
 * REDUCE_SCATTER_coalesced, ALLREDUCE_coalesced: the upper-case OpType
 * name ProcessGroupNCCL's endCoalescing gives). */
static int coalesced_close(const char *w, size_t n)
{
  static const char suf[] = "_coalesced";
  size_t k = sizeof suf - 1;
  if (n == 9 && strncmp(w, "coalesced", 9) == 0) return 1;
  if (n <= k || strncmp(w + n - k, suf, k) != 0) return 0;
  for (size_t i = 0; i < n - k; i++)
    if (w[i] >= 'a' && w[i] <= 'z') return 0;
  return 1;
}

static uint8_t dtype_of(pt_ctx *c, const pv *list)
{
  if (!list || (list->type != PV_LIST && list->type != PV_TUPLE) || !list->n) return PT_NO_DTYPE;
  const pv *v = list->items[0];
  if (v->type != PV_STR) return PT_NO_DTYPE;
  pt_dtype_fact *f = &c->dtypes[pt_node_slot(v)];
  if (f->node == v) return f->dtype;
  /* the name as a C string: up to its first NUL (as a copy would read it) */
  const char *z = memchr(v->s, '\0', v->slen);
  size_t n = z ? (size_t)(z - v->s) : v->slen;
  uint8_t dt = PT_NO_DTYPE;
  for (size_t i = 0; i < sizeof dtype_map / sizeof *dtype_map; i++)
    if (dtype_map[i].len == n && memcmp(dtype_map[i].name, v->s, n) == 0) {
      dt = dtype_map[i].dtype;
      break;
    }
  *f = (pt_dtype_fact){.node = v, .dtype = dt};
  return dt;
}

/* Elements in a list of shapes ([[2, 3], [4]] -> 10), saturating. */
static uint64_t numel_of(const pv *shapes)
{
  uint64_t total = 0;
  if (!shapes || (shapes->type != PV_LIST && shapes->type != PV_TUPLE)) return 0;
  for (uint32_t i = 0; i < shapes->n; i++) {
    const pv *s = shapes->items[i];
    if (s->type != PV_LIST && s->type != PV_TUPLE) continue;
    uint64_t n = 1;
    for (uint32_t k = 0; k < s->n; k++) {
      int64_t d;
      if (int_of(s->items[k], &d) || d < 0) d = 0;
      n = d && n > UINT64_MAX / (uint64_t)d ? UINT64_MAX : n * (uint64_t)d;
    }
    total = total > UINT64_MAX - n ? UINT64_MAX : total + n;
  }
  return total;
}

static frz_state state_of(const pv *v)
{
  if (!v || v->type != PV_STR) return FRZ_STATE_ENQUEUED;
  if (v->slen == 9 && memcmp(v->s, "completed", 9) == 0) return FRZ_STATE_COMPLETED;
  if (v->slen == 7 && memcmp(v->s, "started", 7) == 0) return FRZ_STATE_STARTED;
  return FRZ_STATE_ENQUEUED;
}

static uint64_t time_of(const pv *v)
{
  int64_t t;
  return int_of(v, &t) == 0 && t > 0 ? (uint64_t)t : 0;
}

/* The index of op name w[0..n) in pt->names, added if new; UINT32_MAX when
 * out of memory. */
static uint32_t intern(frz_pt_info *pt, uint32_t *cap, const char *w, size_t n)
{
  for (uint32_t i = 0; i < pt->nnames; i++) /* (a handful of names: a scan) */
    if (pt->names[i][0] == (n ? w[0] : '\0') && strncmp(pt->names[i], w, n) == 0 && pt->names[i][n] == '\0')
      return i;
  if (pt->nnames == *cap) {
    uint32_t ncap = *cap ? *cap * 2 : 16;
    char **p = realloc(pt->names, ncap * sizeof *p);
    if (!p) return UINT32_MAX;
    pt->names = p;
    *cap = ncap;
  }
  char *s = malloc(n + 1);
  if (!s) return UINT32_MAX;
  memcpy(s, w, n);
  s[n] = '\0';
  pt->names[pt->nnames] = s;
  return pt->nnames++;
}

/* One record from entry e; 1 = skipped (no comm for it), -1 out of memory. */
static int fill_one(pt_ctx *c, frz_dump *d, const pt_entry *e, uint32_t *cap, uint32_t *comm)
{
  char pn[PT_NAME_MAX];
  pt_pg *g = e->pg >= 0 ? &c->pgs[e->pg] : NULL;
  if (!g || g->comm < 0) return 1;
  frz_record *x = &d->records[d->nrecords];
  frz_pt_record *p = &d->pt->records[d->nrecords];
  *comm = (uint32_t)g->comm;
  int64_t v;
  memset(x, 0, sizeof *x);
  memset(p, 0, sizeof *p);
  x->id = int_of(e->f[PK_RECORD_ID], &v) == 0 && v >= 0 ? (uint64_t)v : 0;
  x->comm_id = d->comms[g->comm].comm_id;
  x->comm_rank = d->comms[g->comm].rank; /* PyTorch's pg rank of this process */
  x->cuda_device = FRZ_CUDA_DEVICE_UNKNOWN;
  x->nccl_seq = UINT64_MAX; /* PyTorch says nothing of NCCL's profiler view */
  x->algo = FRZ_ALGO_UNKNOWN;
  x->proto = FRZ_PROTO_UNKNOWN;
  const pv *nm = e->f[PK_PROFILING_NAME];
  pt_name_facts *nf = nm ? &c->names[pt_node_slot(nm)] : NULL;
  int close;
  if (nf && nf->node == nm && nf->has_op) {
    x->op = nf->op;
    p->name = nf->name;
    close = nf->close;
  } else {
    pv_cstr(nm, pn, sizeof pn);
    size_t n;
    const char *w = name_word(pn, &n);
    x->op = pt_op_of_word(w, n);
    if ((p->name = intern(d->pt, cap, w, n)) == UINT32_MAX) return -1;
    close = coalesced_close(w, n);
    if (nf)
      *nf = (pt_name_facts){.node = nm, .p2p_self = e->p2p_self, .p2p_peer = e->p2p_peer,
                            .p2p_named = e->p2p_named, .has_op = 1, .close = (uint8_t)close,
                            .op = x->op, .name = p->name};
  }
  const pv *isp = e->f[PK_IS_P2P];
  int p2p = x->op == FRZ_OP_Send || x->op == FRZ_OP_Recv || (isp && isp->type == PV_BOOL && isp->num.i);
  x->peer = -1;
  x->redop = PT_NO_DTYPE;
  static const struct {
    int key;
    uint8_t bit;
  } has[] = {{PK_INPUT_SIZES, FRZ_PT_HAS_IN_SIZES},
             {PK_OUTPUT_SIZES, FRZ_PT_HAS_OUT_SIZES},
             {PK_INPUT_DTYPES, FRZ_PT_HAS_IN_DTYPES},
             {PK_OUTPUT_DTYPES, FRZ_PT_HAS_OUT_DTYPES}};
  for (size_t i = 0; i < sizeof has / sizeof *has; i++) {
    const pv *f = e->f[has[i].key];
    if (f && (f->type == PV_LIST || f->type == PV_TUPLE)) p->fields |= has[i].bit;
  }
  p->in_dtype = dtype_of(c, e->f[PK_INPUT_DTYPES]);
  p->out_dtype = dtype_of(c, e->f[PK_OUTPUT_DTYPES]);
  p->in_numel = numel_of(e->f[PK_INPUT_SIZES]);
  p->out_numel = numel_of(e->f[PK_OUTPUT_SIZES]);
  if (int_of(e->f[PK_P2P_SEQ_ID], &v) == 0 && v >= 0) p->p2p_seq_id = (uint64_t)v;
  x->dtype = p->in_dtype != PT_NO_DTYPE ? p->in_dtype : p->out_dtype;
  x->count = x->op == FRZ_OP_ReduceScatter ? p->out_numel : p->in_numel;
  if (close) p->coalesced = FRZ_PT_COALESCED_CLOSE;
  if (p2p && x->op != FRZ_OP_Send && x->op != FRZ_OP_Recv) {
    x->kind = FRZ_KIND_GROUP; /* a batch of p2p calls ("nccl:coalesced"): no pair seq */
  } else if (p2p) {
    x->kind = FRZ_KIND_P2P;
    x->dir = x->op == FRZ_OP_Recv ? FRZ_DIR_RECV : FRZ_DIR_SEND;
    if (e->p2p_named) x->peer = e->p2p_peer;
  } else {
    x->kind = x->op == FRZ_OP_CommSplit ? FRZ_KIND_LIFE : FRZ_KIND_COLL;
    const pv *s = e->f[PK_COLLECTIVE_SEQ_ID];
    if (!s) s = e->f[PK_SEQ_ID];
    x->seq = int_of(s, &v) == 0 && v >= 0 ? (uint64_t)v : 0;
  }
  x->state = (uint8_t)state_of(e->f[PK_STATE]);
  x->t_enqueue_ns = time_of(e->f[PK_TIME_CREATED_NS]);
  x->t_start_ns = time_of(e->f[PK_TIME_STARTED_NS]);
  x->t_complete_ns = time_of(e->f[PK_TIME_COMPLETED_NS]);
  return 0;
}

/* Coalesced groups: the member ops recorded since the last record of the
 * group at another seq, at the closing record's seq (collectives) or as p2p
 * ops of that group, take the closing record's state and times; PyTorch
 * records them without events (format 2.7 and later), so they stay
 * "scheduled" for good.  A closing record with members becomes a group
 * record (the members say what ran); without any retained member it stands
 * for the group as a collective (or stays a p2p batch record). */
static int resolve_coalesced(frz_dump *d, const uint32_t *rec_comm)
{
  for (uint64_t i = 0; i < d->nrecords; i++) {
    frz_record *cl = &d->records[i];
    if (d->pt->records[i].coalesced != FRZ_PT_COALESCED_CLOSE) continue;
    /* a p2p batch's "nccl:coalesced" says is_p2p False in PyTorch 2.11's
     * dumps (h200-4rank): its members, p2p ops, tell it */
    int batch = cl->kind == FRZ_KIND_GROUP;
    for (uint64_t k = i; !batch && k-- > 0;)
      if (rec_comm[k] == rec_comm[i]) {
        batch = d->records[k].kind == FRZ_KIND_P2P && d->pt->records[k].coalesced != FRZ_PT_COALESCED_CLOSE;
        break;
      }
    if (batch) cl->kind = FRZ_KIND_GROUP;
    uint64_t members = 0;
    for (uint64_t k = i; k-- > 0;) {
      frz_record *m = &d->records[k];
      frz_pt_record *pm = &d->pt->records[k];
      if (rec_comm[k] != rec_comm[i]) continue;
      if (pm->coalesced == FRZ_PT_COALESCED_CLOSE) break;
      int same = batch ? m->kind == FRZ_KIND_P2P : (m->kind == FRZ_KIND_COLL && m->seq == cl->seq);
      if (!same) break;
      pm->coalesced = FRZ_PT_COALESCED_MEMBER;
      if (m->state < cl->state) {
        m->state = cl->state;
        m->t_start_ns = cl->t_start_ns;
        m->t_complete_ns = cl->t_complete_ns;
      }
      members++;
    }
    if (members) cl->kind = FRZ_KIND_GROUP;
  }
  /* a group still open: two or more ops of a comm at one seq, the newest of
   * that comm, with no closing record after them (the process stopped
   * between startCoalescing and endCoalescing): nothing of it was launched,
   * so the seq was not entered */
  uint8_t *seen = calloc(d->ncomms ? d->ncomms : 1, 1);
  if (!seen) return -1;
  for (uint64_t i = d->nrecords; i-- > 0;) {
    const frz_record *r = &d->records[i];
    int newest = !seen[rec_comm[i]];
    seen[rec_comm[i]] = 1;
    if (!newest || r->kind != FRZ_KIND_COLL || d->pt->records[i].coalesced) continue;
    uint64_t first = i, n = 1;
    for (uint64_t k = i; k-- > 0;) {
      if (rec_comm[k] != rec_comm[i]) continue;
      if (d->records[k].kind != FRZ_KIND_COLL || d->records[k].seq != r->seq || d->pt->records[k].coalesced) break;
      first = k;
      n++;
    }
    if (n < 2) continue;
    for (uint64_t k = first; k <= i; k++)
      if (rec_comm[k] == rec_comm[i]) {
        d->records[k].kind = FRZ_KIND_GROUP;
        d->pt->records[k].coalesced = FRZ_PT_COALESCED_OPEN;
      }
  }
  free(seen);
  return 0;
}

/* One p2p op of the dump for numbering: its (comm, peer, direction) and
 * its place in record order. */
typedef struct p2p_key {
  uint64_t pair;   /* comm << 34 | peer << 2 | direction */
  uint64_t rec;    /* record index */
} p2p_key;

static int cmp_p2p_key(const void *x, const void *y)
{
  const p2p_key *a = x, *b = y;
  if (a->pair != b->pair) return a->pair < b->pair ? -1 : 1;
  return (a->rec > b->rec) - (a->rec < b->rec);
}

/* PyTorch's p2p_seq_id counts every p2p op of a group on one rank, so the
 * k-th send of i to j and the k-th receive on j from i cannot be told from
 * it, and a ring that wrapped or an onlyActive dump keeps a different part
 * of each side's history.  The ops of one (comm, peer, direction) are
 * aligned at the first one that did not complete: it gets seq
 * FRZ_PT_P2P_BASE on both sides, the completed ones before it the seqs
 * below, the later ones the seqs above (a side with nothing pending
 * numbers its ops up to FRZ_PT_P2P_BASE - 1). */
static frz_status number_p2p(pt_ctx *c, frz_dump *d, const uint32_t *rec_comm)
{
  uint64_t n = 0;
  for (uint64_t i = 0; i < d->nrecords; i++)
    if (d->records[i].kind == FRZ_KIND_P2P) n++;
  if (!n) return FRZ_OK;
  p2p_key *k = malloc(n * sizeof *k);
  if (!k) return pt_nomem(c);
  n = 0;
  for (uint64_t i = 0; i < d->nrecords; i++) {
    const frz_record *r = &d->records[i];
    if (r->kind != FRZ_KIND_P2P) continue;
    k[n++] = (p2p_key){(uint64_t)rec_comm[i] << 34 | (uint64_t)(uint32_t)r->peer << 2 | r->dir, i};
  }
  qsort(k, n, sizeof *k, cmp_p2p_key);
  for (uint64_t a = 0, b; a < n; a = b) {
    uint64_t first = UINT64_MAX;
    for (b = a; b < n && k[b].pair == k[a].pair; b++)
      if (first == UINT64_MAX && d->records[k[b].rec].state != FRZ_STATE_COMPLETED) first = b;
    if (first == UINT64_MAX) first = b;
    for (uint64_t j = a; j < b; j++) d->records[k[j].rec].seq = FRZ_PT_P2P_BASE + j - first;
  }
  free(k);
  return FRZ_OK;
}

frz_status pt_fill_records(pt_ctx *c, frz_dump *d, uint32_t *rec_comm)
{
  uint32_t cap = 0;
  for (uint32_t i = 0; i < c->nentries; i++) {
    int rc = fill_one(c, d, &c->ef[i], &cap, &rec_comm[d->nrecords]);
    if (rc < 0) return pt_nomem(c);
    if (rc == 0) d->nrecords++;
  }
  if (resolve_coalesced(d, rec_comm)) return pt_nomem(c);
  return number_p2p(c, d, rec_comm);
}
