/* pytorch_fr.c — one PyTorch Flight Recorder dump (already decoded into a
 * pv tree by pickle.c or pyjson.c) into one frz_dump: the driver, the
 * communicators' counters and the process header.  pytorch_fr.h says how
 * PyTorch's fields map onto ours; pytorch_pg.c reads the process groups,
 * pytorch_ops.c the entries. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pytorch_int.h"

/* Largest PyTorch FR file read (real ones are a few MiB). */
#define PT_FILE_MAX ((size_t)1 << 30)

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

/* Sort k[0..n) by comm, then key, as qsort with cmp_seqkey would (equal
 * keys are equal in every byte that matters, so the result is the same
 * array).  Entries come in record order, each comm's seqs mostly rising:
 * a stable pass by comm, then each comm's run sorted only if it is not
 * already.  Falls back to qsort when out of memory. */
static void sort_seqkeys(seqkey *k, uint64_t n, uint32_t ncomms)
{
  if (n < 2) return;
  uint64_t *at = calloc((size_t)ncomms + 1, sizeof *at);
  seqkey *tmp = malloc(n * sizeof *tmp);
  int ok = at && tmp;
  for (uint64_t i = 0; ok && i < n; i++)
    if (k[i].comm >= ncomms) ok = 0;
  if (!ok) {
    free(at);
    free(tmp);
    qsort(k, n, sizeof *k, cmp_seqkey);
    return;
  }
  for (uint64_t i = 0; i < n; i++) at[k[i].comm + 1]++;
  for (uint32_t m = 0; m < ncomms; m++) at[m + 1] += at[m];
  for (uint64_t i = 0; i < n; i++) tmp[at[k[i].comm]++] = k[i];
  memcpy(k, tmp, n * sizeof *k);
  for (uint64_t a = 0; a < n;) {
    uint64_t b = a + 1;
    int sorted = 1;
    for (; b < n && k[b].comm == k[a].comm; b++)
      if (k[b].key < k[b - 1].key) sorted = 0;
    if (!sorted) qsort(k + a, b - a, sizeof *k, cmp_seqkey);
    a = b;
  }
  free(at);
  free(tmp);
}

/* What one group's entries say besides its collective records. */
typedef struct pg_facts {
  int64_t p2p_coll_seq;  /* highest collective_seq_id a p2p entry carries; -1 none */
  uint64_t last_id;      /* record_id of its newest entry */
  uint8_t last_p2p;      /* its newest entry is a p2p op (or a p2p batch) */
  int64_t last_p2p_seq;  /* that entry's p2p_seq_id and collective_seq_id; -1 none */
  int64_t last_coll_seq;
  uint8_t any;
} pg_facts;

/* Does pg_status count p2p ops, its last work being a p2p op?  Where the
 * group's newest entry is one, unless its last enqueued work is a
 * collective seq at or past that entry's own and not its p2p seq: in a
 * dump of active entries only, the members of long-finished p2p batches
 * stay (PyTorch never retires them) while the collectives after them left
 * (seen with PyTorch 2.11: a2a-hang, rank 3). */
static int status_counts_p2p(const pg_facts *f, int64_t enq)
{
  if (!f->last_p2p) return 0;
  return !(enq >= 0 && f->last_coll_seq >= 0 && enq >= f->last_coll_seq && enq != f->last_p2p_seq);
}

/* pg_status's counters of g: -1 each when absent. */
static void status_of(const pt_pg *g, int64_t *enq, int64_t *sst, int64_t *comp)
{
  *enq = *sst = *comp = -1;
  if (!g->status) return;
  pv_int(pv_get(g->status, "last_enqueued_collective"), enq);
  pv_int(pv_get(g->status, "last_started_collective"), sst);
  pv_int(pv_get(g->status, "last_completed_collective"), comp);
}

/* Comm m's counters from its retained collective records (k[0..n), sorted),
 * the highest seq seen started, the facts of its entries and its pg_status.
 * PyTorch's collective seqs start at 1: seq 0 stands for the group's
 * creation and counts as completed.  pg_status holds the seq of the group's
 * last work, which is its p2p counter when that work was a p2p op
 * (ProcessGroupNCCL's work seq_), so it counts collectives only when the
 * newest entry of the group is a collective; without any entry it is all
 * there is (FRZ_PT_CTR_STATUS), without a pg_id for the group nothing is
 * known (FRZ_PT_CTR_UNKNOWN). */
static void fill_counters(frz_comm *m, frz_pt_comm *pc, const seqkey *k, uint64_t n,
                          int64_t started, const pg_facts *f, const pt_pg *g, int64_t comp_proved)
{
  int64_t enq, sst, comp;
  status_of(g, &enq, &sst, &comp);
  if (!f->any && g->never_recorded && !g->status) { /* created, nothing enqueued */
    pc->counters = FRZ_PT_CTR_STATUS;
    m->last_enqueued_seq = m->last_completed_seq = 0;
    m->last_started_seq = -1;
    m->next_seq = m->first_retained_seq = 1;
    return;
  }
  if (!f->any) {
    pc->counters = g->status ? FRZ_PT_CTR_STATUS : FRZ_PT_CTR_UNKNOWN;
    if (!g->status) {
      m->last_enqueued_seq = m->last_started_seq = m->last_completed_seq = -1;
      m->next_seq = m->first_retained_seq = 1;
      return;
    }
    m->last_enqueued_seq = enq > 0 ? enq : 0;
    m->last_started_seq = sst;
    m->last_completed_seq = comp > 0 ? comp : 0;
    if (m->last_completed_seq > m->last_enqueued_seq) m->last_completed_seq = m->last_enqueued_seq;
    m->next_seq = (uint64_t)m->last_enqueued_seq + 1;
    m->first_retained_seq = m->next_seq;
    return;
  }
  pc->counters = FRZ_PT_CTR_ENTRIES;
  if (status_counts_p2p(f, enq)) enq = sst = comp = -1; /* p2p numbers: not ours */
  comp = comp_proved; /* (what it proves, all_counters) */
  int64_t hi = enq > f->p2p_coll_seq ? enq : f->p2p_coll_seq;
  if (n && (int64_t)(k[n - 1].key >> 1) > hi) hi = (int64_t)(k[n - 1].key >> 1);
  if (hi < 0) hi = 0;
  m->last_enqueued_seq = hi;
  m->last_started_seq = started > sst ? started : sst;
  m->next_seq = (uint64_t)hi + 1;
  if (!n) {
    /* no collective retained: the ones before were completed (a pending one
     * would be retained), up to what pg_status says when it counts them */
    m->first_retained_seq = m->next_seq;
    m->last_completed_seq = comp >= 0 ? comp : hi;
    if (m->last_completed_seq > hi) m->last_completed_seq = hi;
    return;
  }
  uint64_t lo = k[0].key >> 1;
  m->first_retained_seq = lo;
  /* every seq before the retained window is taken as completed (PyTorch
   * keeps no record of it); then the gap-free completed run of the window */
  int64_t lc = lo > 0 ? (int64_t)lo - 1 : 0;
  for (uint64_t i = 0; i < n; i++) {
    uint64_t s = k[i].key >> 1;
    if (i && s == k[i - 1].key >> 1) continue;
    if ((int64_t)s > lc + 1) break;
    if ((int64_t)s <= lc) continue;
    if (!(k[i].key & 1)) break;
    lc = (int64_t)s;
  }
  if (comp > lc) lc = comp;
  m->last_completed_seq = lc > hi ? hi : lc;
}

/* The facts of every group's entries (facts[pg index]). */
static void entry_facts(pt_ctx *c, pg_facts *facts)
{
  for (uint32_t i = 0; i < c->npgs; i++) facts[i] = (pg_facts){.p2p_coll_seq = -1, .last_p2p_seq = -1, .last_coll_seq = -1};
  for (uint32_t i = 0; i < c->nentries; i++) {
    const pt_entry *e = &c->ef[i];
    if (e->pg < 0) continue;
    pg_facts *f = &facts[e->pg];
    int64_t id = 0, cs = -1;
    pv_int(e->f[PK_RECORD_ID], &id);
    const pv *isp = e->f[PK_IS_P2P];
    int p2p = e->p2p_named || (isp && isp->type == PV_BOOL && isp->num.i);
    if (p2p && pv_int(e->f[PK_COLLECTIVE_SEQ_ID], &cs) == 0 && cs > f->p2p_coll_seq)
      f->p2p_coll_seq = cs;
    if (!f->any || (uint64_t)id >= f->last_id) {
      f->last_id = (uint64_t)id;
      f->last_p2p = (uint8_t)p2p;
      f->last_p2p_seq = f->last_coll_seq = -1;
      pv_int(e->f[PK_P2P_SEQ_ID], &f->last_p2p_seq);
      pv_int(e->f[PK_COLLECTIVE_SEQ_ID], &f->last_coll_seq);
    }
    f->any = 1;
  }
}

/* Every comm's counters, in one sort of the records.  Collective records
 * at or below pg_status's last completed collective are completed, what
 * their own state says (members of coalesced groups, whose closing record
 * left an onlyActive dump, and states caught before the watchdog's update). */
static frz_status all_counters(pt_ctx *c, frz_dump *d, const uint32_t *rec_comm, const uint32_t *comm_pg)
{
  seqkey *k = malloc((d->nrecords ? d->nrecords : 1) * sizeof *k);
  int64_t *started = malloc((d->ncomms ? d->ncomms : 1) * sizeof *started);
  pg_facts *facts = malloc((c->npgs ? c->npgs : 1) * sizeof *facts);
  /* pg_status's last completed and last enqueued collective, per group */
  int64_t *comp_of = malloc((c->npgs ? c->npgs : 1) * 2 * sizeof *comp_of);
  uint8_t *done_p2p = malloc(d->ncomms ? d->ncomms : 1);
  if (!k || !started || !facts || !comp_of || !done_p2p) {
    free(k);
    free(started);
    free(facts);
    free(comp_of);
    free(done_p2p);
    return pt_nomem(c);
  }
  int64_t *enq_of = comp_of + (c->npgs ? c->npgs : 1);
  entry_facts(c, facts);
  for (uint32_t g = 0; g < c->npgs; g++) {
    int64_t sst;
    status_of(&c->pgs[g], &enq_of[g], &sst, &comp_of[g]);
    if (status_counts_p2p(&facts[g], enq_of[g])) enq_of[g] = comp_of[g] = -1; /* p2p numbers: not ours */
  }
  /* pg_status's last completed collective is the work whose completion the
   * watchdog saw last, not a bound: a coalesced group's events bracket no
   * kernel, so it is seen completed at once, before the ops ahead of it on
   * the stream (PyTorch 2.11: a rank whose stream was busy showed 15 with
   * its seq 13 never started, gpu-stall).  It proves the seqs before it
   * only when its own record is not a coalesced group's. */
  /* (a group's members whose closing record a dump of active entries
   * dropped are two or more collective records at one seq) */
  for (uint64_t i = 0; i < d->nrecords; i++) {
    const frz_record *r = &d->records[i];
    uint32_t g = comm_pg[rec_comm[i]];
    if (comp_of[g] < 0 || r->kind == FRZ_KIND_P2P || r->seq != (uint64_t)comp_of[g]) continue;
    int group = d->pt->records[i].coalesced != FRZ_PT_COALESCED_NO;
    for (uint64_t x = i + 1; !group && x < d->nrecords; x++)
      if (rec_comm[x] == rec_comm[i]) {
        group = d->records[x].kind == FRZ_KIND_COLL && d->records[x].seq == r->seq;
        break;
      }
    if (group) comp_of[g] = -1;
  }
  /* Each counter holds the seq of the work that set it last: the last
   * completed is a p2p seq where the group's newest completed entry is a
   * p2p op or batch (PyTorch 2.11's pipeline, pp-hang: last enqueued 4, an
   * all_reduce; last completed 7, a send) */
  for (uint32_t m = 0; m < d->ncomms; m++) done_p2p[m] = 0;
  for (uint64_t i = 0; i < d->nrecords; i++) {
    const frz_record *r = &d->records[i];
    if (r->state != FRZ_STATE_COMPLETED || (r->flags & FRZ_RF_NO_TRACKING)) continue;
    int p2p = r->kind == FRZ_KIND_P2P ||
              (r->kind == FRZ_KIND_GROUP && d->pt->records[i].coalesced == FRZ_PT_COALESCED_CLOSE &&
               i > 0 && d->records[i - 1].kind == FRZ_KIND_P2P);
    if (r->kind == FRZ_KIND_P2P && d->pt->records[i].coalesced == FRZ_PT_COALESCED_MEMBER) continue;
    done_p2p[rec_comm[i]] = (uint8_t)p2p;
  }
  for (uint32_t m = 0; m < d->ncomms; m++)
    if (done_p2p[m]) comp_of[comm_pg[m]] = -1;
  if (pt_coalesced_evidence(d, rec_comm, comm_pg, comp_of, enq_of)) {
    free(k);
    free(started);
    free(facts);
    free(comp_of);
    free(done_p2p);
    return pt_nomem(c);
  }
  for (uint32_t m = 0; m < d->ncomms; m++) started[m] = -1;
  uint64_t n = 0;
  for (uint64_t i = 0; i < d->nrecords; i++) {
    frz_record *r = &d->records[i];
    if ((r->kind != FRZ_KIND_COLL && r->kind != FRZ_KIND_LIFE) || r->seq > (UINT64_MAX >> 2)) continue;
    uint32_t g = comm_pg[rec_comm[i]];
    int64_t comp = comp_of[g];
    if (comp >= 0 && r->seq <= (uint64_t)comp)
      r->state = FRZ_STATE_COMPLETED;
    k[n++] = (seqkey){rec_comm[i], r->seq << 1 | (r->state == FRZ_STATE_COMPLETED)};
    if (r->state >= FRZ_STATE_STARTED && (int64_t)r->seq > started[rec_comm[i]])
      started[rec_comm[i]] = (int64_t)r->seq;
  }
  sort_seqkeys(k, n, d->ncomms);
  uint64_t a = 0;
  for (uint32_t m = 0; m < d->ncomms; m++) {
    uint64_t b = a;
    while (b < n && k[b].comm == m) b++;
    const pt_pg *g = &c->pgs[comm_pg[m]];
    fill_counters(&d->comms[m], &d->pt->comms[m], k + a, b - a, started[m], &facts[comm_pg[m]], g,
                  comp_of[comm_pg[m]]);
    a = b;
  }
  free(k);
  free(started);
  free(facts);
  free(comp_of);
  free(done_p2p);
  return FRZ_OK;
}

/* Keys PyTorch's Flight Recorder writes up to format 2.10 (top level and
 * entries); others come from a newer minor version and are skipped. */
static const char *const known_keys[] = {
    "version", "pg_config", "pg_status", "comm_lib_version", "nccl_version", "entries",
    "nccl_comm_state", "rank", "record_id", "pg_id", "process_group", "collective_seq_id",
    "p2p_seq_id", "op_id", "seq_id", "profiling_name", "time_created_ns", "duration_ms",
    "input_sizes", "input_dtypes", "output_sizes", "output_dtypes", "state",
    "time_discovered_started_ns", "time_discovered_completed_ns", "retired", "timeout_ms",
    "is_p2p", "thread_id", "thread_name", "frames", "stack_id", "traceback",
};

static int known_key(const pv *k)
{
  for (size_t i = 0; i < sizeof known_keys / sizeof *known_keys; i++)
    if (pv_str_is(k, known_keys[i])) return 1;
  return 0;
}

/* Keys of dict v that are not known_keys. */
static uint32_t unknown_keys(const pv *v)
{
  uint32_t n = 0;
  if (v && v->type == PV_DICT)
    for (uint32_t k = 0; k + 1 < v->n; k += 2)
      if (!known_key(v->items[k])) n++;
  return n;
}

/* Format major 2 is read whatever its minor (PyTorch bumps the minor when
 * it adds fields; the fields we know keep their meaning); a newer minor
 * than FRZ_PT_VERSION_MAX_MINOR is noted in pt->skipped_fields. */
static frz_status check_version(pt_ctx *c, frz_pt_info *pt)
{
  char b[32];
  const pv *v = pv_get(c->root, "version");
  int ma, mi;
  if (!v) return FRZ_OK; /* the oldest dumps carry none */
  pv_cstr(v, b, sizeof b);
  snprintf(pt->version, sizeof pt->version, "%.15s", b);
  if (sscanf(b, "%d.%d", &ma, &mi) != 2) return pt_bad(c, "unreadable Flight Recorder version: ", b);
  if (ma != 2)
    return pv_fail(c->err, FRZ_E_VERSION, c->name, 0,
                   "PyTorch Flight Recorder format version %s is not supported (2.x is)", b);
  if (mi > FRZ_PT_VERSION_MAX_MINOR) {
    uint32_t n = unknown_keys(c->root);
    for (uint32_t i = 0; i < c->nentries && i < 64; i++) n += unknown_keys(c->entries->items[i]);
    pt->skipped_fields = n ? n : 1;
  }
  return FRZ_OK;
}

/* "2.28.9" -> 22809 (ncclGetVersion's code). */
static int32_t nccl_code(const pv *v)
{
  char b[32];
  int ma, mi, pa = 0;
  /* a ROCm build's library may name itself before the number ("RCCL
   * 2.22.3", "rccl-2.22.3"): the version is the first number in it */
  const char *t = pv_cstr(v, b, sizeof b);
  while (*t && !(*t >= '0' && *t <= '9')) t++;
  if (sscanf(t, "%d.%d.%d", &ma, &mi, &pa) < 2 || ma < 0 || ma > 99 ||
      mi < 0 || mi > 99 || pa < 0 || pa > 99)
    return 0;
  return ma * 10000 + mi * 100 + pa;
}

static void fill_process(pt_ctx *c, frz_dump *d, int32_t rank, const char *form)
{
  frz_process *p = &d->process;
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
  uint64_t latest = 0, first_id = UINT64_MAX, last_id = 0, done = 0;
  for (uint64_t i = 0; i < d->nrecords; i++) {
    const frz_record *r = &d->records[i];
    uint64_t t[3] = {r->t_enqueue_ns, r->t_start_ns, r->t_complete_ns};
    for (int k = 0; k < 3; k++)
      if (t[k] > latest) latest = t[k];
    if (r->id < first_id) first_id = r->id;
    if (r->id > last_id) last_id = r->id;
    if (r->state == FRZ_STATE_COMPLETED) done++;
  }
  /* PyTorch's times are wall clock: realtime == "monotonic" here */
  p->anchor_realtime_ns = p->anchor_monotonic_ns = latest;
  p->frame_time_ns = latest;
  p->trigger = FRZ_TRIGGER_NONE;
  p->trigger_rank = -1;
  p->records_total = d->nrecords ? last_id + 1 : 0;
  p->records_dropped = d->nrecords ? first_id : 0;
  const char *kind = !c->entries ? ", without entries"
                     : !c->nentries ? ", no entry"
                     : !done ? ", only active entries" : "";
  snprintf(p->trigger_text, sizeof p->trigger_text, "PyTorch Flight Recorder %s dump, format %s%s",
           form, d->pt->version[0] ? d->pt->version : "unknown", kind);
}

/* The conversion proper, once the tree is built. */
static frz_status convert(pt_ctx *c, const char *form, frz_dump *d)
{
  frz_status st;
  if (!c->root || c->root->type != PV_DICT)
    return pt_bad(c, "not a PyTorch Flight Recorder dump: ", "the top level is not a dict");
  c->entries = pv_get(c->root, "entries");
  if (c->entries && c->entries->type != PV_LIST)
    return pt_bad(c, "not a PyTorch Flight Recorder dump: ", "\"entries\" is not a list");
  if (!c->entries && !pv_get(c->root, "pg_status") && !pv_get(c->root, "pg_config"))
    return pt_bad(c, "not a PyTorch Flight Recorder dump: ",
                  "no \"entries\", \"pg_status\" or \"pg_config\"");
  c->nentries = c->entries ? c->entries->n : 0;
  for (uint32_t i = 0; i < c->nentries; i++)
    if (c->entries->items[i]->type != PV_DICT)
      return pt_bad(c, "not a PyTorch Flight Recorder dump: ", "an entry is not a dict");
  if (pt_index_entries(c) != 0) return pt_nomem(c);
  d->pt = calloc(1, sizeof *d->pt);
  if (!d->pt) return pt_nomem(c);
  d->pt->has_entries = c->entries != NULL;
  if ((st = check_version(c, d->pt)) || (st = pt_load_pgs(c))) return st;
  int32_t rank = pt_find_rank(c);
  d->comms = calloc(c->npgs ? c->npgs : 1, sizeof *d->comms);
  d->pt->comms = calloc(c->npgs ? c->npgs : 1, sizeof *d->pt->comms);
  d->records = calloc(c->nentries ? c->nentries : 1, sizeof *d->records);
  d->pt->records = calloc(c->nentries ? c->nentries : 1, sizeof *d->pt->records);
  if (!d->comms || !d->records || !d->pt->comms || !d->pt->records) return pt_nomem(c);
  for (uint32_t i = 0; i < c->npgs; i++) {
    pt_pg *g = &c->pgs[i];
    int32_t self = g->self;
    if (g->nranks > 0 && self < 0 && rank >= 0) continue; /* listed, and we are not a member */
    /* the default group holds every rank in rank order, whatever its ranks
     * string says ("all", "[]", garbage) */
    if (self < 0 && g->nranks < 0 && rank >= 0 && strcmp(g->desc, "default_pg") == 0) self = rank;
    frz_comm *m = &d->comms[d->ncomms];
    frz_pt_comm *pc = &d->pt->comms[d->ncomms];
    g->comm = (int32_t)d->ncomms++;
    m->comm_id = pt_pg_comm_id(g);
    m->nranks = g->nranks;
    m->rank = self;
    m->split_color = -1;
    m->cuda_device = -1;
    m->last_enqueued_seq = m->last_started_seq = m->last_completed_seq = -1;
    pc->pg_id = g->pg_id;
    if (g->nranks > 0) {
      pc->ranks = malloc((size_t)g->nranks * sizeof *pc->ranks);
      if (!pc->ranks) return pt_nomem(c);
      memcpy(pc->ranks, g->ranks, (size_t)g->nranks * sizeof *pc->ranks);
      pc->nranks = g->nranks;
    }
    snprintf(pc->name, sizeof pc->name, "%s", g->name);
    snprintf(pc->desc, sizeof pc->desc, "%s", g->desc);
  }
  uint32_t *rec_comm = malloc((c->nentries ? c->nentries : 1) * sizeof *rec_comm);
  uint32_t *comm_pg = malloc((d->ncomms ? d->ncomms : 1) * sizeof *comm_pg);
  if (!rec_comm || !comm_pg) {
    free(rec_comm);
    free(comm_pg);
    return pt_nomem(c);
  }
  for (uint32_t i = 0; i < c->npgs; i++)
    if (c->pgs[i].comm >= 0) comm_pg[c->pgs[i].comm] = i;
  st = pt_fill_records(c, d, rec_comm);
  if (!st) st = all_counters(c, d, rec_comm, comm_pg);
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
  free(c.ef);
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
