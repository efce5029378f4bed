/* pytorch_fr.c — one PyTorch Flight Recorder dump (already decoded into a
 * pv tree by pickle.c or pyjson.c) into one frz_dump.  pytorch_fr.h says
 * how PyTorch's fields map onto ours. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "idmap.h"
#include "pytorch_fr.h"
#include "pyval.h"

/* Largest PyTorch FR file read (real ones are a few MiB). */
#define PT_FILE_MAX ((size_t)1 << 30)
#define PT_NAME_MAX 128
#define NO_DTYPE 255

/* One process group of pg_config. */
typedef struct pt_pg {
  char name[PT_NAME_MAX];
  char desc[PT_NAME_MAX];
  int32_t *ranks;        /* global ranks of the members, in group-rank order */
  int32_t nranks;        /* -1 unknown */
  int32_t self;          /* this process's rank in the group, -1 unknown */
  int32_t comm;          /* index in the dump's comm table, -1 none */
} pt_pg;

typedef struct pt_ctx {
  const char *name;
  frz_error *err;
  const pv *root, *entries;
  pt_pg *pgs;
  uint32_t npgs, cappgs;
  idmap pgmap;           /* hash of a group's name -> index in pgs */
} pt_ctx;

/* A content error: the file decoded, but is not a usable FR dump. */
static frz_status bad(pt_ctx *c, const char *what, const char *detail)
{
  return pv_fail(c->err, FRZ_E_CORRUPT, c->name, 0, "%s%s", what, detail);
}

/* ---- op names ------------------------------------------------------------ */

static const struct {
  const char *name;
  uint16_t op;
} op_map[] = {
    {"all_reduce", FRZ_OP_AllReduce},          {"allreduce", FRZ_OP_AllReduce},
    {"all_reduce_coalesced", FRZ_OP_AllReduce}, {"allreduce_coalesced", FRZ_OP_AllReduce},
    {"all_reduce_barrier", FRZ_OP_AllReduce},  {"barrier", FRZ_OP_AllReduce},
    {"broadcast", FRZ_OP_Broadcast},           {"_broadcast_oop", FRZ_OP_Broadcast},
    {"reduce", FRZ_OP_Reduce},                 {"_reduce_oop", FRZ_OP_Reduce},
    {"all_gather", FRZ_OP_AllGather},          {"allgather", FRZ_OP_AllGather},
    {"_allgather_base", FRZ_OP_AllGather},     {"all_gather_base", FRZ_OP_AllGather},
    {"allgather_coalesced", FRZ_OP_AllGather}, {"allgather_into_tensor_coalesced", FRZ_OP_AllGather},
    {"all_gather_into_tensor_coalesced", FRZ_OP_AllGather},
    {"reduce_scatter", FRZ_OP_ReduceScatter},  {"_reduce_scatter_base", FRZ_OP_ReduceScatter},
    {"reduce_scatter_base", FRZ_OP_ReduceScatter},
    {"reduce_scatter_tensor_coalesced", FRZ_OP_ReduceScatter},
    {"all_to_all", FRZ_OP_AlltoAll},           {"alltoall", FRZ_OP_AlltoAll},
    {"alltoall_base", FRZ_OP_AlltoAll},        {"all_to_all_base", FRZ_OP_AlltoAll},
    {"gather", FRZ_OP_Gather},                 {"scatter", FRZ_OP_Scatter},
    {"send", FRZ_OP_Send},                     {"recv", FRZ_OP_Recv},
    {"recvanysource", FRZ_OP_Recv},
};

/* torch ScalarType names to ncclDataType_t */
static const struct {
  const char *name;
  uint8_t dtype;
} dtype_map[] = {
    {"Char", 0},  {"Byte", 1},   {"Bool", 1},     {"Int", 2},     {"UInt32", 3},
    {"Long", 4},  {"UInt64", 5}, {"Half", 6},     {"Float", 7},   {"Double", 8},
    {"BFloat16", 9}, {"Float8_e4m3fn", 10}, {"Float8_e5m2", 11},
};

/* The op of a profiling name: "nccl:all_reduce", "nccl:send 0->1"; the
 * word after the backend prefix, up to a blank.  FRZ_OP_NONE if unknown. */
static uint16_t op_of(const char *pname)
{
  const char *w = strchr(pname, ':');
  w = w ? w + 1 : pname;
  size_t n = strcspn(w, " ");
  for (size_t i = 0; i < sizeof op_map / sizeof *op_map; i++)
    if (strlen(op_map[i].name) == n && strncmp(op_map[i].name, w, n) == 0) return op_map[i].op;
  return FRZ_OP_NONE;
}

/* "nccl:send 3->4" or "nccl:recv 4<-3": self and peer group ranks. */
static int p2p_ranks(const char *pname, int32_t *self, int32_t *peer)
{
  const char *sp = strchr(pname, ' ');
  long a, b;
  char arrow[3];
  if (!sp || sscanf(sp + 1, "%ld%2[-<>]%ld", &a, arrow, &b) != 3) return -1;
  if ((strcmp(arrow, "->") != 0 && strcmp(arrow, "<-") != 0) || a < 0 || b < 0 ||
      a > INT32_MAX || b > INT32_MAX)
    return -1;
  *self = (int32_t)a;
  *peer = (int32_t)b;
  return 0;
}

static uint8_t dtype_of(const pv *list)
{
  char b[32];
  if (!list || (list->type != PV_LIST && list->type != PV_TUPLE) || !list->n) return NO_DTYPE;
  pv_cstr(list->items[0], b, sizeof b);
  for (size_t i = 0; i < sizeof dtype_map / sizeof *dtype_map; i++)
    if (strcmp(dtype_map[i].name, b) == 0) return dtype_map[i].dtype;
  return NO_DTYPE;
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
      if (pv_int(s->items[k], &d) || d < 0) d = 0;
      n = d && n > UINT64_MAX / (uint64_t)d ? UINT64_MAX : n * (uint64_t)d;
    }
    total = total > UINT64_MAX - n ? UINT64_MAX : total + n;
  }
  return total;
}

/* ---- process groups -------------------------------------------------------- */

/* Ranks from "[0, 1, 2]" (pg_config writes a string) or a list of ints. */
static int parse_ranks(const pv *v, pt_pg *g)
{
  g->nranks = -1;
  if (!v) return 0;
  uint32_t cap = 0, n = 0;
  int32_t *r = NULL;
  if (v->type == PV_LIST || v->type == PV_TUPLE) {
    cap = v->n;
    r = malloc((cap ? cap : 1) * sizeof *r);
    if (!r) return -1;
    for (uint32_t i = 0; i < v->n; i++) {
      int64_t x;
      if (pv_int(v->items[i], &x) || x < 0 || x > INT32_MAX) {
        free(r);
        return 0;
      }
      r[n++] = (int32_t)x;
    }
  } else if (v->type == PV_STR) {
    size_t i = 0;
    cap = (uint32_t)(v->slen / 2 + 1);
    r = malloc(cap * sizeof *r);
    if (!r) return -1;
    while (i < v->slen) {
      char ch = v->s[i];
      if (ch >= '0' && ch <= '9') {
        int64_t x = 0;
        while (i < v->slen && v->s[i] >= '0' && v->s[i] <= '9' && x <= INT32_MAX)
          x = x * 10 + (v->s[i++] - '0');
        if (x > INT32_MAX || n == cap) {
          free(r);
          return 0;
        }
        r[n++] = (int32_t)x;
      } else if (ch == '[' || ch == ']' || ch == ',' || ch == ' ') {
        i++;
      } else { /* "all" or something else: unknown */
        free(r);
        return 0;
      }
    }
  } else {
    return 0;
  }
  g->ranks = r;
  g->nranks = (int32_t)n;
  if (n == 0) g->nranks = -1;
  return 0;
}

/* FNV-1a, 64 bits. */
static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
  const unsigned char *s = p;
  for (size_t i = 0; i < n; i++) {
    h ^= s[i];
    h *= 0x100000001b3ull;
  }
  return h;
}

static uint64_t name_hash(const char *name)
{
  return fnv(0xcbf29ce484222325ull, name, strlen(name));
}

static pt_pg *find_pg(pt_ctx *c, const char *name)
{
  uint32_t pos = 0, i;
  uint64_t h = name_hash(name);
  while ((i = idmap_next(&c->pgmap, h, &pos)) != UINT32_MAX)
    if (strcmp(c->pgs[i].name, name) == 0) return &c->pgs[i];
  return NULL;
}

static pt_pg *add_pg(pt_ctx *c, const char *name)
{
  if (c->npgs == c->cappgs) {
    uint32_t ncap = c->cappgs ? c->cappgs * 2 : 8;
    pt_pg *p = ncap > c->cappgs ? realloc(c->pgs, (size_t)ncap * sizeof *p) : NULL;
    if (!p) return NULL;
    c->pgs = p;
    c->cappgs = ncap;
  }
  pt_pg *g = &c->pgs[c->npgs];
  memset(g, 0, sizeof *g);
  snprintf(g->name, sizeof g->name, "%s", name);
  g->nranks = g->self = g->comm = -1;
  if (idmap_put(&c->pgmap, name_hash(g->name), c->npgs)) return NULL;
  c->npgs++;
  return g;
}

/* The group name of an entry: process_group[0], else its pg_id. */
static const char *entry_pg_name(const pv *e, char *buf, size_t size)
{
  const pv *g = pv_get(e, "process_group");
  int64_t id;
  buf[0] = '\0';
  if (g && (g->type == PV_TUPLE || g->type == PV_LIST) && g->n >= 1) pv_cstr(g->items[0], buf, size);
  else if (g && g->type == PV_STR) pv_cstr(g, buf, size);
  if (!buf[0] && pv_int(pv_get(e, "pg_id"), &id) == 0) snprintf(buf, size, "%lld", (long long)id);
  return buf;
}

/* Groups of pg_config, then any group an entry names that pg_config lacks. */
static frz_status load_pgs(pt_ctx *c)
{
  const pv *cfg = pv_get(c->root, "pg_config");
  char nm[PT_NAME_MAX];
  if (cfg && cfg->type == PV_DICT) {
    for (uint32_t k = 0; k + 1 < cfg->n; k += 2) {
      const pv *v = cfg->items[k + 1];
      pv_cstr(cfg->items[k], nm, sizeof nm);
      if (pv_get(v, "name")) pv_cstr(pv_get(v, "name"), nm, sizeof nm);
      if (find_pg(c, nm)) continue;
      pt_pg *g = add_pg(c, nm);
      if (!g) return pv_fail(c->err, FRZ_E_NOMEM, c->name, 0, "out of memory");
      pv_cstr(pv_get(v, "desc"), g->desc, sizeof g->desc);
      if (parse_ranks(pv_get(v, "ranks"), g))
        return pv_fail(c->err, FRZ_E_NOMEM, c->name, 0, "out of memory");
    }
  }
  for (uint32_t i = 0; i < c->entries->n; i++) {
    entry_pg_name(c->entries->items[i], nm, sizeof nm);
    if (!find_pg(c, nm) && !add_pg(c, nm))
      return pv_fail(c->err, FRZ_E_NOMEM, c->name, 0, "out of memory");
  }
  return FRZ_OK;
}

/* Our global rank: a "rank" field, p2p names in a listed group, a
 * one-member group, else the file name; -1 unknown.  Fills each group's
 * self rank on the way. */
static int32_t find_rank(pt_ctx *c)
{
  int64_t r;
  int32_t g = -1;
  if (pv_int(pv_get(c->root, "rank"), &r) == 0 && r >= 0 && r <= INT32_MAX) g = (int32_t)r;
  char nm[PT_NAME_MAX], pn[PT_NAME_MAX];
  for (uint32_t i = 0; i < c->entries->n; i++) {
    const pv *e = c->entries->items[i];
    int32_t self, peer;
    pv_cstr(pv_get(e, "profiling_name"), pn, sizeof pn);
    uint16_t op = op_of(pn);
    if ((op != FRZ_OP_Send && op != FRZ_OP_Recv) || p2p_ranks(pn, &self, &peer)) continue;
    pt_pg *p = find_pg(c, entry_pg_name(e, nm, sizeof nm));
    if (p && p->self < 0) p->self = self;
    if (g < 0 && p && self < p->nranks) g = p->ranks[self];
  }
  for (uint32_t i = 0; g < 0 && i < c->npgs; i++)
    if (c->pgs[i].nranks == 1) g = c->pgs[i].ranks[0];
  if (g < 0) {
    long n = frz_pytorch_rank_from_name(c->name ? c->name : "");
    if (n >= 0 && n <= INT32_MAX) g = (int32_t)n;
  }
  return g;
}

/* A comm id every member computes alike: the group's name and members. */
static uint64_t pg_comm_id(const pt_pg *g)
{
  uint64_t h = fnv(0xcbf29ce484222325ull, "pytorch-pg:", 11);
  h = fnv(h, g->name, strlen(g->name) + 1);
  for (int32_t i = 0; i < g->nranks; i++) h = fnv(h, &g->ranks[i], sizeof g->ranks[i]);
  return h ? h : 1;
}

/* ---- the dump ---------------------------------------------------------------- */

static frz_state state_of(const pv *v)
{
  if (pv_str_is(v, "completed")) return FRZ_STATE_COMPLETED;
  if (pv_str_is(v, "started")) return FRZ_STATE_STARTED;
  return FRZ_STATE_ENQUEUED;
}

static uint64_t time_of(const pv *v)
{
  int64_t t;
  return pv_int(v, &t) == 0 && t > 0 ? (uint64_t)t : 0;
}

/* "2.28.9" -> 22809 (ncclGetVersion's code). */
static int32_t nccl_code(const pv *v)
{
  char b[32];
  int ma, mi, pa = 0;
  if (sscanf(pv_cstr(v, b, sizeof b), "%d.%d.%d", &ma, &mi, &pa) < 2 || ma < 0 || ma > 99 ||
      mi < 0 || mi > 99 || pa < 0 || pa > 99)
    return 0;
  return ma * 10000 + mi * 100 + pa;
}

/* Per (comm, peer, direction) p2p counters. */
typedef struct p2p_ctr {
  idmap map;       /* (comm, peer, direction) -> index in next */
  uint64_t *next;  /* the next seq of each */
  uint32_t n, cap;
} p2p_ctr;

/* The next p2p seq of (comm, peer, dir); UINT64_MAX when out of memory. */
static uint64_t next_p2p(p2p_ctr *t, int32_t comm, int32_t peer, uint8_t dir)
{
  uint64_t key = (uint64_t)(uint32_t)comm << 34 | (uint64_t)(uint32_t)peer << 2 | dir;
  uint32_t pos = 0, i = idmap_next(&t->map, key, &pos);
  if (i != UINT32_MAX) return t->next[i]++;
  if (t->n == t->cap) {
    uint32_t ncap = t->cap ? t->cap * 2 : 16;
    uint64_t *p = ncap > t->cap ? realloc(t->next, (size_t)ncap * sizeof *p) : NULL;
    if (!p) return UINT64_MAX;
    t->next = p;
    t->cap = ncap;
  }
  if (idmap_put(&t->map, key, t->n)) return UINT64_MAX;
  t->next[t->n++] = 1;
  return 0;
}

/* One record from entry e; 1 = skipped (no comm for it). */
static int fill_record(pt_ctx *c, const frz_dump *d, const pv *e, frz_record *x, p2p_ctr *ctr,
                       uint32_t *comm)
{
  char nm[PT_NAME_MAX], pn[PT_NAME_MAX];
  pt_pg *g = find_pg(c, entry_pg_name(e, nm, sizeof nm));
  if (!g || g->comm < 0) return 1;
  *comm = (uint32_t)g->comm;
  int64_t v;
  memset(x, 0, sizeof *x);
  x->id = pv_int(pv_get(e, "record_id"), &v) == 0 && v >= 0 ? (uint64_t)v : 0;
  x->comm_id = d->comms[g->comm].comm_id;
  pv_cstr(pv_get(e, "profiling_name"), pn, sizeof pn);
  x->op = op_of(pn);
  const pv *isp = pv_get(e, "is_p2p");
  int p2p = x->op == FRZ_OP_Send || x->op == FRZ_OP_Recv || (isp && isp->type == PV_BOOL && isp->num.i);
  x->peer = -1;
  x->redop = NO_DTYPE;
  x->result = 0;
  x->dtype = dtype_of(pv_get(e, "input_dtypes"));
  if (x->dtype == NO_DTYPE) x->dtype = dtype_of(pv_get(e, "output_dtypes"));
  x->count = numel_of(pv_get(e, x->op == FRZ_OP_ReduceScatter ? "output_sizes" : "input_sizes"));
  if (p2p && x->op != FRZ_OP_Send && x->op != FRZ_OP_Recv) {
    x->kind = FRZ_KIND_GROUP; /* a batch of p2p calls ("nccl:coalesced"): no pair seq */
  } else if (p2p) {
    int32_t self, peer;
    x->kind = FRZ_KIND_P2P;
    x->dir = x->op == FRZ_OP_Recv ? FRZ_DIR_RECV : FRZ_DIR_SEND;
    if (p2p_ranks(pn, &self, &peer) == 0) x->peer = peer;
    x->seq = next_p2p(ctr, g->comm, x->peer, x->dir);
    if (x->seq == UINT64_MAX) return -1;
  } else {
    x->kind = FRZ_KIND_COLL;
    const pv *s = pv_get(e, "collective_seq_id");
    if (!s) s = pv_get(e, "seq_id");
    x->seq = pv_int(s, &v) == 0 && v >= 0 ? (uint64_t)v : 0;
  }
  x->state = (uint8_t)state_of(pv_get(e, "state"));
  x->t_enqueue_ns = time_of(pv_get(e, "time_created_ns"));
  x->t_start_ns = time_of(pv_get(e, "time_discovered_started_ns"));
  x->t_complete_ns = time_of(pv_get(e, "time_discovered_completed_ns"));
  return 0;
}

/* A retained collective record: its comm (index in the comm table) and
 * seq << 1 | completed. */
typedef struct seqkey {
  uint32_t comm;
  uint64_t key;
} seqkey;

static int cmp_seqkey(const void *x, const void *y)
{
  const seqkey *a = x, *b = y;
  if (a->comm != b->comm) return a->comm < b->comm ? -1 : 1;
  return (a->key > b->key) - (a->key < b->key);
}

/* Comm m's counters from its retained collective records (k[0..n), sorted),
 * the highest seq seen started, and its pg_status entry `st` (or NULL). */
static void fill_counters(frz_comm *m, const seqkey *k, uint64_t n, int64_t started, const pv *st)
{
  int64_t enq = -1, comp = -1, sst = -1;
  pv_int(pv_get(st, "last_enqueued_collective"), &enq);
  pv_int(pv_get(st, "last_completed_collective"), &comp);
  pv_int(pv_get(st, "last_started_collective"), &sst);
  if (!n) {
    m->last_enqueued_seq = enq >= 0 ? enq : -1;
    m->last_started_seq = sst >= 0 ? sst : -1;
    m->last_completed_seq = comp >= 0 ? comp : -1;
    m->next_seq = (uint64_t)(m->last_enqueued_seq + 1);
    m->first_retained_seq = m->next_seq;
    return;
  }
  uint64_t lo = k[0].key >> 1, hi = k[n - 1].key >> 1;
  m->first_retained_seq = lo;
  m->last_enqueued_seq = (int64_t)hi;
  m->last_started_seq = started;
  m->next_seq = hi + 1;
  /* every seq before the retained window is taken as completed (PyTorch
   * keeps no record of it); then the gap-free completed run of the window */
  int64_t lc = lo > 1 ? (int64_t)lo - 1 : -1;
  for (uint64_t i = 0; i < n; i++) {
    uint64_t s = k[i].key >> 1;
    if (i && s == k[i - 1].key >> 1) continue;
    if ((int64_t)s != lc + 1 && !(lc < 0 && i == 0)) break;
    if (!(k[i].key & 1)) break;
    lc = (int64_t)s;
  }
  m->last_completed_seq = lc;
}

/* Every comm's counters, in one sort of the records. */
static frz_status all_counters(pt_ctx *c, frz_dump *d, const uint32_t *rec_comm, const uint32_t *comm_pg)
{
  seqkey *k = malloc((d->nrecords ? d->nrecords : 1) * sizeof *k);
  int64_t *started = malloc((d->ncomms ? d->ncomms : 1) * sizeof *started);
  idmap sm;
  memset(&sm, 0, sizeof sm);
  const pv *status = pv_get(c->root, "pg_status");
  frz_status rc = FRZ_OK;
  if (!k || !started) goto nomem;
  for (uint32_t i = 0; status && status->type == PV_DICT && i + 1 < status->n; i += 2) {
    char nm[PT_NAME_MAX];
    if (idmap_put(&sm, name_hash(pv_cstr(status->items[i], nm, sizeof nm)), i + 1)) goto nomem;
  }
  for (uint32_t m = 0; m < d->ncomms; m++) started[m] = -1;
  uint64_t n = 0;
  for (uint64_t i = 0; i < d->nrecords; i++) {
    const frz_record *r = &d->records[i];
    if (r->kind != FRZ_KIND_COLL || r->seq > (UINT64_MAX >> 2)) continue;
    k[n++] = (seqkey){rec_comm[i], r->seq << 1 | (r->state == FRZ_STATE_COMPLETED)};
    if (r->state >= FRZ_STATE_STARTED && (int64_t)r->seq > started[rec_comm[i]])
      started[rec_comm[i]] = (int64_t)r->seq;
  }
  qsort(k, n, sizeof *k, cmp_seqkey);
  uint64_t a = 0;
  for (uint32_t m = 0; m < d->ncomms; m++) {
    uint64_t b = a;
    while (b < n && k[b].comm == m) b++;
    const char *name = c->pgs[comm_pg[m]].name;
    const pv *st = NULL;
    uint32_t pos = 0, v;
    while (!st && (v = idmap_next(&sm, name_hash(name), &pos)) != UINT32_MAX)
      if (pv_str_is(status->items[v - 1], name)) st = status->items[v];
    fill_counters(&d->comms[m], k + a, b - a, started[m], st);
    a = b;
  }
  goto out;
nomem:
  rc = pv_fail(c->err, FRZ_E_NOMEM, c->name, 0, "out of memory");
out:
  free(k);
  free(started);
  idmap_free(&sm);
  return rc;
}

static frz_status check_version(pt_ctx *c)
{
  char b[32];
  const pv *v = pv_get(c->root, "version");
  int ma, mi;
  if (!v) return FRZ_OK; /* the oldest dumps carry none */
  if (sscanf(pv_cstr(v, b, sizeof b), "%d.%d", &ma, &mi) != 2)
    return bad(c, "unreadable Flight Recorder version: ", b);
  if (ma != 2 || mi > FRZ_PT_VERSION_MAX_MINOR) {
    return pv_fail(c->err, FRZ_E_VERSION, c->name, 0,
                   "PyTorch Flight Recorder format version %s is not supported (2.0 to 2.%d are)",
                   b, FRZ_PT_VERSION_MAX_MINOR);
  }
  return FRZ_OK;
}

static void fill_process(pt_ctx *c, frz_dump *d, int32_t rank, const char *form)
{
  frz_process *p = &d->process;
  char ver[32];
  p->global_rank = rank;
  p->world_size = -1;
  p->local_rank = -1;
  /* the world: the group described as default_pg, else the one named "0" */
  for (uint32_t i = 0; i < c->npgs; i++)
    if (strcmp(c->pgs[i].desc, "default_pg") == 0 && c->pgs[i].nranks > 0) p->world_size = c->pgs[i].nranks;
  for (uint32_t i = 0; i < c->npgs && p->world_size < 0; i++)
    if (strcmp(c->pgs[i].name, "0") == 0 && c->pgs[i].nranks > 0) p->world_size = c->pgs[i].nranks;
  snprintf(p->job_id, sizeof p->job_id, "pytorch");
  p->nccl_version = nccl_code(pv_get(c->root, "comm_lib_version"));
  if (!p->nccl_version) p->nccl_version = nccl_code(pv_get(c->root, "nccl_version"));
  uint64_t latest = 0, first_id = UINT64_MAX, last_id = 0;
  for (uint64_t i = 0; i < d->nrecords; i++) {
    const frz_record *r = &d->records[i];
    uint64_t t[3] = {r->t_enqueue_ns, r->t_start_ns, r->t_complete_ns};
    for (int k = 0; k < 3; k++)
      if (t[k] > latest) latest = t[k];
    if (r->id < first_id) first_id = r->id;
    if (r->id > last_id) last_id = r->id;
  }
  /* PyTorch's times are wall clock: realtime == "monotonic" here */
  p->anchor_realtime_ns = p->anchor_monotonic_ns = latest;
  p->frame_time_ns = latest;
  p->trigger = FRZ_TRIGGER_NONE;
  p->trigger_rank = -1;
  p->records_total = d->nrecords ? last_id + 1 : 0;
  p->records_dropped = d->nrecords ? first_id : 0;
  snprintf(p->trigger_text, sizeof p->trigger_text, "PyTorch Flight Recorder %s dump, format %s",
           form, pv_cstr(pv_get(c->root, "version"), ver, sizeof ver)[0] ? ver : "unknown");
}

/* The conversion proper, once the tree is built. */
static frz_status convert(pt_ctx *c, const char *form, frz_dump *d)
{
  frz_status st;
  if (!c->root || c->root->type != PV_DICT)
    return bad(c, "not a PyTorch Flight Recorder dump: ", "the top level is not a dict");
  c->entries = pv_get(c->root, "entries");
  if (!c->entries || c->entries->type != PV_LIST)
    return bad(c, "not a PyTorch Flight Recorder dump: ", "no \"entries\" list");
  for (uint32_t i = 0; i < c->entries->n; i++)
    if (c->entries->items[i]->type != PV_DICT) return bad(c, "not a PyTorch Flight Recorder dump: ", "an entry is not a dict");
  if ((st = check_version(c)) || (st = load_pgs(c))) return st;
  int32_t rank = find_rank(c);
  d->comms = calloc(c->npgs ? c->npgs : 1, sizeof *d->comms);
  d->records = calloc(c->entries->n ? c->entries->n : 1, sizeof *d->records);
  if (!d->comms || !d->records) return pv_fail(c->err, FRZ_E_NOMEM, c->name, 0, "out of memory");
  for (uint32_t i = 0; i < c->npgs; i++) {
    pt_pg *g = &c->pgs[i];
    int32_t self = -1;
    for (int32_t k = 0; rank >= 0 && k < g->nranks; k++)
      if (g->ranks[k] == rank) self = k;
    if (g->nranks > 0 && self < 0 && rank >= 0) continue; /* listed, and we are not a member */
    if (self < 0) self = g->self;
    frz_comm *m = &d->comms[d->ncomms];
    g->comm = (int32_t)d->ncomms++;
    m->comm_id = pg_comm_id(g);
    m->nranks = g->nranks;
    m->rank = self;
    m->split_color = -1;
    m->cuda_device = -1;
    m->last_enqueued_seq = m->last_started_seq = m->last_completed_seq = -1;
  }
  p2p_ctr ctr;
  memset(&ctr, 0, sizeof ctr);
  uint32_t *rec_comm = malloc((c->entries->n ? c->entries->n : 1) * sizeof *rec_comm);
  uint32_t *comm_pg = malloc((d->ncomms ? d->ncomms : 1) * sizeof *comm_pg);
  int rc = rec_comm && comm_pg ? 0 : -1;
  for (uint32_t i = 0; i < c->npgs; i++)
    if (comm_pg && c->pgs[i].comm >= 0) comm_pg[c->pgs[i].comm] = i;
  for (uint32_t i = 0; i < c->entries->n && rc >= 0; i++) {
    rc = fill_record(c, d, c->entries->items[i], &d->records[d->nrecords], &ctr,
                     &rec_comm[d->nrecords]);
    if (rc == 0) d->nrecords++;
  }
  idmap_free(&ctr.map);
  free(ctr.next);
  st = rc < 0 ? pv_fail(c->err, FRZ_E_NOMEM, c->name, 0, "out of memory")
              : all_counters(c, d, rec_comm, comm_pg);
  free(rec_comm);
  free(comm_pg);
  if (st) return st;
  fill_process(c, d, rank, form);
  return FRZ_OK;
}

frz_status frz_import_pytorch(const void *buf, size_t len, const char *name, frz_dump *out,
                              frz_error *err)
{
  if (!out || (!buf && len)) return pv_fail(err, FRZ_E_INVALID, name, 0, "NULL argument");
  memset(out, 0, sizeof *out);
  if (!len) return pv_fail(err, FRZ_E_EMPTY, name, 0, "empty file");
  frz_pt_form form = frz_pytorch_sniff(buf, len);
  if (form == FRZ_PT_NONE)
    return pv_fail(err, FRZ_E_MAGIC, name, 0,
                   "not a PyTorch Flight Recorder dump (neither a pickle nor JSON)");
  pv_arena a;
  /* the tree grows linearly with the input; this bound only stops abuse */
  pv_arena_init(&a, len > (SIZE_MAX - ((size_t)64 << 20)) / 64 ? SIZE_MAX : len * 64 + ((size_t)64 << 20));
  pt_ctx c;
  memset(&c, 0, sizeof c);
  c.name = name;
  c.err = err;
  frz_status st = form == FRZ_PT_PICKLE ? pv_from_pickle(buf, len, name, &a, &c.root, err)
                                        : pv_from_json(buf, len, name, &a, &c.root, err);
  if (!st) st = convert(&c, form == FRZ_PT_PICKLE ? "pickle" : "JSON", out);
  for (uint32_t i = 0; i < c.npgs; i++) free(c.pgs[i].ranks);
  free(c.pgs);
  idmap_free(&c.pgmap);
  pv_arena_free(&a);
  if (st) {
    frz_dump_free(out);
    memset(out, 0, sizeof *out);
    return st;
  }
  out->version_major = FRZ_VERSION_MAJOR;
  out->version_minor = FRZ_VERSION_MINOR;
  if (err) {
    err->status = FRZ_OK;
    err->offset = 0;
    err->msg[0] = '\0';
  }
  return FRZ_OK;
}

frz_status frz_import_pytorch_file(const char *path, frz_dump *out, frz_error *err)
{
  void *buf;
  size_t len;
  if (!out) return pv_fail(err, FRZ_E_INVALID, path, 0, "NULL argument");
  memset(out, 0, sizeof *out);
  frz_status st = frz_slurp_file(path, PT_FILE_MAX, &buf, &len, err);
  if (st) return st;
  st = frz_import_pytorch(buf, len, path, out, err);
  free(buf);
  return st;
}
