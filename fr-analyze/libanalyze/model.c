/* model.c — from a heap of decoded dumps to the model: one job, ranks with
 * their frames, per-frame record indexes, communicators and their members. */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* Comm sizes and world sizes above this are taken as damaged headers. */
#define FA_MAX_RANKS (1 << 24)
/* Comm ranks a process may hold (CommInitAll cliques): bounds the size a
 * comm may claim against the processes of the job. */
#define FA_RANKS_PER_PROCESS 64

/* Add a problem built from a format string. */
static int problemf(fa_analysis *a, const char *file, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int problemf(fa_analysis *a, const char *file, const char *fmt, ...)
{
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return fa_add_problem(a, file, 0, 0, msg);
}

/* ---- which job ------------------------------------------------------------ */

static int cmp_job(const void *x, const void *y, void *ctx)
{
  const fa_frame *fr = ctx;
  uint32_t i = *(const uint32_t *)x, j = *(const uint32_t *)y;
  int c = strncmp(fr[i].dump.process.job_id, fr[j].dump.process.job_id, FRZ_JOB_MAX);
  return c ? c : (i > j) - (i < j);
}

/* The job of the most recent dump (wall clock of the writer), into
 * a->job_id: a reused dump directory holds older jobs too, and the newest
 * hang is the one being asked about.  Ties: more dumps, then the smallest id. */
static int choose_job(fa_analysis *a)
{
  uint32_t n = a->nframes;
  if (!n) return 0;
  uint32_t *ix = malloc(n * sizeof *ix);
  if (!ix) return -1;
  for (uint32_t i = 0; i < n; i++) ix[i] = i;
  qsort_r(ix, n, sizeof *ix, cmp_job, a->frames);
  uint32_t best = 0, best_n = 0;
  uint64_t best_t = 0;
  for (uint32_t i = 0; i < n;) {
    uint32_t j = i;
    uint64_t t = 0;
    const char *ji = a->frames[ix[i]].dump.process.job_id;
    for (; j < n && strncmp(a->frames[ix[j]].dump.process.job_id, ji, FRZ_JOB_MAX) == 0; j++)
      if (a->frames[ix[j]].dump.process.anchor_realtime_ns > t)
        t = a->frames[ix[j]].dump.process.anchor_realtime_ns;
    if (t > best_t || (t == best_t && j - i > best_n)) {
      best_t = t;
      best_n = j - i;
      best = ix[i];
    }
    i = j;
  }
  memcpy(a->job_id, a->frames[best].dump.process.job_id, FRZ_JOB_MAX);
  a->job_id[FRZ_JOB_MAX - 1] = '\0';
  free(ix);
  return 0;
}

/* ---- frames: validate, order, drop duplicates ------------------------------ */

/* A digest of what a dump says of its communicators and records (FNV-1a):
 * two dumps with one digest are copies of one file, as far as the analysis
 * can tell. */
static uint64_t dump_digest(const frz_dump *d)
{
  uint64_t h = UINT64_C(1469598103934665603);
#define MIX(v) (h = (h ^ (uint64_t)(v)) * UINT64_C(1099511628211))
  MIX(d->ncomms);
  MIX(d->nrecords);
  for (uint32_t i = 0; i < d->ncomms; i++) {
    MIX(d->comms[i].comm_id);
    MIX(d->comms[i].rank);
    MIX(d->comms[i].last_enqueued_seq);
    MIX(d->comms[i].last_completed_seq);
  }
  for (uint64_t i = 0; i < d->nrecords; i++) {
    const frz_record *r = &d->records[i];
    MIX(r->comm_id);
    MIX(r->seq);
    MIX(r->op);
    MIX(r->state);
    MIX(r->count);
    MIX(r->t_enqueue_ns);
  }
#undef MIX
  return h;
}

static int cmp_frame(const void *x, const void *y, void *ctx)
{
  const fa_frame *fr = ctx;
  uint32_t i = *(const uint32_t *)x, j = *(const uint32_t *)y;
  const frz_process *p = &fr[i].dump.process, *q = &fr[j].dump.process;
  if (p->global_rank != q->global_rank) return p->global_rank < q->global_rank ? -1 : 1;
  if (p->frame != q->frame) return p->frame < q->frame ? -1 : 1;
  if (p->frame_time_ns != q->frame_time_ns) return p->frame_time_ns < q->frame_time_ns ? -1 : 1;
  return (i > j) - (i < j);
}

/* Keep the frames of the chosen job with a usable rank, sorted by (rank,
 * frame); a second claim of one (job, rank, frame) is a problem. */
static int order_frames(fa_analysis *a)
{
  uint32_t n = a->nframes, keep = 0;
  uint32_t *ix = malloc((n ? n : 1) * sizeof *ix);
  uint8_t *drop = calloc(n ? n : 1, 1);
  fa_frame *nf = malloc((n ? n : 1) * sizeof *nf);
  int rc = -1;
  if (!ix || !drop || !nf) goto out;
  for (uint32_t i = 0; i < n; i++) {
    fa_frame *f = &a->frames[i];
    const frz_process *p = &f->dump.process;
    ix[i] = i;
    if (strncmp(p->job_id, a->job_id, FRZ_JOB_MAX) != 0) {
      char job[FRZ_JOB_MAX];
      memcpy(job, p->job_id, FRZ_JOB_MAX);
      job[FRZ_JOB_MAX - 1] = '\0';
      if (problemf(a, f->name, "belongs to job \"%s\", not to the job analysed (\"%s\"); ignored",
                   job, a->job_id))
        goto out;
      drop[i] = 1;
    } else if (p->global_rank < 0 || p->global_rank >= FA_MAX_RANKS) {
      if (problemf(a, f->name, "no usable global rank in the process header (%d); ignored",
                   p->global_rank))
        goto out;
      drop[i] = 1;
    } else if (f->dump.nrecords > UINT32_MAX) {
      if (problemf(a, f->name, "too many records (%llu); ignored",
                   (unsigned long long)f->dump.nrecords))
        goto out;
      drop[i] = 1;
    }
  }
  qsort_r(ix, n, sizeof *ix, cmp_frame, a->frames);
  for (uint32_t k = 0; k < n; k++) {
    uint32_t i = ix[k];
    if (drop[i]) continue;
    if (keep) {
      const frz_process *p = &a->frames[i].dump.process, *q = &nf[keep - 1].dump.process;
      if (p->global_rank == q->global_rank && p->frame == q->frame) {
        if (dump_digest(&a->frames[i].dump) != dump_digest(&nf[keep - 1].dump)) {
          /* two different dumps of one rank: its identity is in doubt (PyTorch
           * dumps take the rank from the file name, which may be a local one) */
          if (problemf(a, a->frames[i].name,
                       "differs from %s, which claims the same rank %d and frame %u (job \"%s\"): "
                       "which is rank %d cannot be told; ignored", nf[keep - 1].name, p->global_rank,
                       p->frame, a->job_id, p->global_rank))
            goto out;
          if (a->conflict_rank < 0) a->conflict_rank = p->global_rank;
        } else if (problemf(a, a->frames[i].name,
                            "duplicate of %s (job \"%s\", rank %d, frame %u); ignored",
                            nf[keep - 1].name, a->job_id, p->global_rank, p->frame)) {
          goto out;
        }
        drop[i] = 1;
        continue;
      }
    }
    nf[keep++] = a->frames[i];
  }
  for (uint32_t i = 0; i < n; i++)
    if (drop[i]) {
      free(a->frames[i].name);
      frz_dump_free(&a->frames[i].dump);
    }
  free(a->frames);
  a->frames = nf;
  a->nframes = keep;
  nf = NULL;
  rc = 0;
out:
  free(ix);
  free(drop);
  free(nf);
  return rc;
}

/* Ranks from the sorted frames: one per global rank. */
static int build_ranks(fa_analysis *a)
{
  uint32_t cap = 0;
  for (uint32_t i = 0; i < a->nframes;) {
    int32_t g = a->frames[i].dump.process.global_rank;
    uint32_t j = i;
    while (j < a->nframes && a->frames[j].dump.process.global_rank == g) {
      a->frames[j].rank = (int32_t)a->nranks;
      j++;
    }
    if (fa_grow(&a->ranks, &cap, a->nranks + 1, sizeof *a->ranks)) return -1;
    fa_rank *r = &a->ranks[a->nranks++];
    r->global_rank = g;
    r->first_frame = i;
    r->nframes = j - i;
    r->wait_comm = -1;
    int32_t ws = a->frames[j - 1].dump.process.world_size;
    if (ws > a->world_size && ws <= FA_MAX_RANKS) a->world_size = ws;
    i = j;
  }
  return 0;
}

/* ---- per-frame record indexes ------------------------------------------------ */

/* One (comm id, comm rank) of a frame's comm table: a process may hold
 * several comm ranks of one comm (ncclCommInitAll), one entry each. */
typedef struct id_unit {
  uint64_t id;
  int32_t rank;
  uint32_t group;    /* the comm's first unit */
  uint32_t end;      /* (at a group's first unit) one past the comm's last unit */
  uint32_t nshared;  /* (at a group's first unit) records of the comm every unit sees */
  uint32_t nown;     /* (at a group's first unit) records of one of its several units */
  int split;         /* (at a group's first unit) its units have slices of their own */
  fa_slice coll, p2p;
} id_unit;

typedef struct id_entry {
  uint64_t id;
  int32_t rank;
  uint32_t entry;
} id_entry;

static int cmp_id_entry(const void *x, const void *y)
{
  const id_entry *a = x, *b = y;
  if (a->id != b->id) return a->id < b->id ? -1 : 1;
  if (a->rank != b->rank) return a->rank < b->rank ? -1 : 1;
  return (a->entry > b->entry) - (a->entry < b->entry);
}

/* The first unit at or after (id, rank) in units sorted by (id, rank). */
static uint32_t unit_bound(const id_unit *u, uint32_t n, uint64_t id, int64_t rank)
{
  uint32_t lo = 0, hi = n;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (u[mid].id < id || (u[mid].id == id && u[mid].rank < rank)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/* The unit a record belongs to, or UINT32_MAX (its comm is not in the
 * table); *shared: every unit of its comm sees it (the comm has several and
 * the record names none of them: comm rank -1, from before frz 1.3). */
static uint32_t record_unit(const id_unit *u, uint32_t n, const frz_record *r, int *shared)
{
  uint32_t g = unit_bound(u, n, r->comm_id, INT32_MIN);
  *shared = 0;
  if (g == n || u[g].id != r->comm_id) return UINT32_MAX;
  if (g + 1 == n || u[g + 1].id != r->comm_id) return g; /* the comm's one unit */
  if (r->comm_rank >= 0) {
    uint32_t k = unit_bound(u, n, r->comm_id, r->comm_rank);
    if (k < n && u[k].id == r->comm_id && u[k].rank == r->comm_rank) return k;
  }
  *shared = 1;
  return g;
}

static int cmp_rec_seq(const void *x, const void *y, void *ctx)
{
  const frz_record *r = ctx;
  uint32_t i = *(const uint32_t *)x, j = *(const uint32_t *)y;
  if (r[i].seq != r[j].seq) return r[i].seq < r[j].seq ? -1 : 1;
  return (i > j) - (i < j);
}

/* How a record's seq is to be read: the record's kind; kind NONE is an
 * unsequenced local event since frz 1.1 (CommAbort, CommRevoke, an async
 * error, a shrink on its parent), and in 1.0 dumps and PyTorch imports
 * stands for the op's kind. */
unsigned fa_rec_kind(const frz_dump *d, const frz_record *r)
{
  if (r->kind != FRZ_KIND_NONE) return r->kind;
  if (!d->pt && (d->version_major > 1 || d->version_minor >= 1)) return FRZ_KIND_NONE;
  return (unsigned)frz_op_kind(r->op);
}

/* Index a frame's records by comm entry: collective/lifecycle records in seq
 * order, p2p records in record order.  Linear apart from the map lookups.
 * A process holding several comm ranks of one comm has an entry per rank:
 * a record goes to the entry of its comm_rank; a record without one (comm
 * rank -1, dumps before frz 1.3, or a rank no entry has) to every entry of
 * its comm, and so do all of a comm's records when copying those to each
 * entry would cost more than the frame's record count (the entries then
 * share one slice, as before 1.3).  Entries of one (comm, rank) share one.
 * *orphans: records naming a comm missing from the comm table.  Touches
 * only f (frames are indexed in parallel). */
static int index_frame(fa_frame *f, uint64_t *orphans_out)
{
  const frz_dump *d = &f->dump;
  uint32_t nc = d->ncomms, nr = (uint32_t)d->nrecords, nu = 0;
  id_entry *map = malloc((nc ? nc : 1) * sizeof *map);
  id_unit *u = calloc(nc ? nc : 1, sizeof *u);
  uint32_t *eu = malloc((nc ? nc : 1) * sizeof *eu);   /* per entry: its unit */
  uint32_t *ru = malloc((nr ? nr : 1) * sizeof *ru);   /* per record: its unit, or UINT32_MAX */
  uint8_t *rs = malloc(nr ? nr : 1);                   /* per record: shared by its comm's units */
  f->coll = calloc(nc ? nc : 1, sizeof *f->coll);
  f->p2p = calloc(nc ? nc : 1, sizeof *f->p2p);
  int rc = -1;
  if (!map || !u || !eu || !ru || !rs || !f->coll || !f->p2p) goto out;
  for (uint32_t i = 0; i < nc; i++) map[i] = (id_entry){d->comms[i].comm_id, d->comms[i].rank, i};
  qsort(map, nc, sizeof *map, cmp_id_entry);
  for (uint32_t i = 0; i < nc; i++) {
    if (!nu || u[nu - 1].id != map[i].id || u[nu - 1].rank != map[i].rank) {
      u[nu] = (id_unit){.id = map[i].id, .rank = map[i].rank};
      u[nu].group = nu && u[nu - 1].id == map[i].id ? u[nu - 1].group : nu;
      u[u[nu].group].end = nu + 1;
      nu++;
    }
    eu[map[i].entry] = nu - 1;
  }
  uint64_t orphans = 0;
  for (uint32_t i = 0; i < nr; i++) {
    const frz_record *r = &d->records[i];
    unsigned k = fa_rec_kind(d, r);
    int shared = 0;
    ru[i] = UINT32_MAX;
    if (k != FRZ_KIND_COLL && k != FRZ_KIND_LIFE && k != FRZ_KIND_P2P) continue;
    ru[i] = record_unit(u, nu, r, &shared);
    rs[i] = (uint8_t)shared;
    if (ru[i] == UINT32_MAX) orphans++;
    else if (shared) u[ru[i]].nshared++;
    else if (u[u[ru[i]].group].end - u[ru[i]].group > 1)
      u[u[ru[i]].group].nown++;
  }
  /* split the comms with several units whose records say whose they are,
   * while the copies of their shared records fit in the budget */
  uint64_t budget = nr, total = 0;
  for (uint32_t g = 0; g < nu; g++) {
    if (u[g].group != g || !u[g].nown) continue;
    uint64_t copies = (uint64_t)(u[g].end - g - 1) * u[g].nshared;
    if (copies > budget) continue;
    budget -= copies;
    u[g].split = 1;
  }
  /* slice lengths, then starts, then the records into them */
  for (int pass = 0; pass < 2; pass++) {
    if (pass) {
      for (uint32_t k = 0; k < nu; k++) {
        u[k].coll.start = (uint32_t)total;
        total += u[k].coll.len;
        u[k].p2p.start = (uint32_t)total;
        total += u[k].p2p.len;
        u[k].coll.len = u[k].p2p.len = 0;
      }
      if (total > UINT32_MAX) goto out;
      f->idx = malloc((total ? total : 1) * sizeof *f->idx);
      if (!f->idx) goto out;
    }
    for (uint32_t i = 0; i < nr; i++) {
      if (ru[i] == UINT32_MAX) continue;
      int p2p = fa_rec_kind(d, &d->records[i]) == FRZ_KIND_P2P;
      uint32_t g = u[ru[i]].group, lo = u[g].split ? ru[i] : g;
      uint32_t hi = u[g].split && rs[i] ? u[g].end : lo + 1;
      for (uint32_t k = lo; k < hi; k++) {
        fa_slice *sl = p2p ? &u[k].p2p : &u[k].coll;
        if (pass) f->idx[sl->start + sl->len] = i;
        sl->len++;
      }
    }
  }
  for (uint32_t k = 0; k < nu; k++) {
    fa_slice *sl = &u[k].coll;
    for (uint32_t j = 1; j < sl->len; j++)
      if (d->records[f->idx[sl->start + j]].seq < d->records[f->idx[sl->start + j - 1]].seq) {
        qsort_r(f->idx + sl->start, sl->len, sizeof *f->idx, cmp_rec_seq, d->records);
        break;
      }
  }
  for (uint32_t e = 0; e < nc; e++) {
    const id_unit *x = &u[eu[e]], *own = u[x->group].split ? x : &u[x->group];
    f->coll[e] = own->coll;
    f->p2p[e] = own->p2p;
  }
  *orphans_out = orphans;
  rc = 0;
out:
  free(map);
  free(u);
  free(eu);
  free(ru);
  free(rs);
  return rc;
}

/* ---- communicators ------------------------------------------------------------ */

typedef struct claim {
  uint64_t id;
  int32_t g;       /* global rank */
  uint32_t frame;  /* index into a->frames */
  uint32_t entry;  /* index into that dump's comms */
} claim;

static int cmp_claim(const void *x, const void *y)
{
  const claim *a = x, *b = y;
  if (a->id != b->id) return a->id < b->id ? -1 : 1;
  if (a->g != b->g) return a->g < b->g ? -1 : 1;
  return (a->entry > b->entry) - (a->entry < b->entry);
}

/* Global ranks of members without a dump, when the known members fit
 * global = base + stride * comm_rank (three of them at least, or, in a
 * comm of the world's size, any number with global = comm rank). */
static void infer_globals(const fa_analysis *a, fa_comm *c)
{
  int32_t r1 = -1, r2 = -1;
  for (int32_t r = 0; r < c->size; r++)
    if (c->members[r].rank >= 0) {
      if (r1 < 0) r1 = r;
      else if (r2 < 0) r2 = r;
    }
  if (r1 < 0 || c->npresent == (uint32_t)c->size) return;
  int identity = c->size == a->world_size; /* (every known member's global rank its comm rank) */
  for (int32_t r = 0; r < c->size && identity; r++)
    identity = c->members[r].rank < 0 || c->members[r].global_rank == r;
  if (r2 >= 0 && c->npresent < 3 && !identity) return; /* any two points are on a line: no evidence */
  int64_t stride, base;
  int64_t g1 = c->members[r1].global_rank;
  if (r2 >= 0) {
    int64_t dg = (int64_t)c->members[r2].global_rank - g1, dr = r2 - r1;
    if (dg == 0 || dg % dr) return;
    stride = dg / dr;
  } else {
    if (c->size != a->world_size || g1 != r1) return;
    stride = 1;
  }
  base = g1 - stride * r1;
  for (int32_t r = 0; r < c->size; r++)
    if (c->members[r].rank >= 0 && c->members[r].global_rank != base + stride * r) return;
  for (int32_t r = 0; r < c->size; r++) {
    fa_member *m = &c->members[r];
    int64_t g = base + stride * r;
    if (m->rank >= 0 || g < 0 || g >= FA_MAX_RANKS) continue;
    if (a->world_size >= 0 && g >= a->world_size) continue;
    /* a rank that dumped is not a member without a dump (its entry for this
     * comm was rejected: out of range, or a comm rank claimed twice) */
    if (fa_find_rank(a, (int32_t)g) >= 0) continue;
    m->global_rank = (int32_t)g;
    m->global_inferred = 1;
  }
}

/* One communicator from its claims (sorted by global rank). */
static int build_comm(fa_analysis *a, const claim *cl, uint32_t n, fa_comm *c)
{
  char hex[17];
  fa_hex(cl[0].id, hex);
  memset(c, 0, sizeof *c);
  c->id = cl[0].id;
  c->last_completed = c->unknown_from = c->beyond_seq = -1;
  c->seq_lo = c->seq_hi = -1;
  /* size: the claim of the lowest global rank that knows it */
  int32_t size = -1, size_g = -1, maxr = -1;
  for (uint32_t i = 0; i < n; i++) {
    const frz_comm *fc = &a->frames[cl[i].frame].dump.comms[cl[i].entry];
    if (fc->rank > maxr) maxr = fc->rank;
    if (fc->nranks <= 0) continue;
    if (size < 0) {
      size = fc->nranks;
      size_g = cl[i].g;
    } else if (fc->nranks != size &&
               problemf(a, a->frames[cl[i].frame].name,
                        "comm %s: rank %d says %d ranks, rank %d says %d; using %d", hex, cl[i].g,
                        fc->nranks, size_g, size, size)) {
      return -1;
    }
  }
  if (size < 0) size = maxr + 1;
  /* a size no evidence backs (a few hundred bytes may claim 2^24 ranks) */
  int64_t procs = a->world_size > (int32_t)a->nranks ? a->world_size : (int64_t)a->nranks;
  if (size > 0 && (int64_t)size > procs * FA_RANKS_PER_PROCESS + 1024) {
    if (problemf(a, a->frames[cl[0].frame].name,
                 "comm %s: claims %d ranks, far more than the job's %lld processes; ignored", hex,
                 size, (long long)procs))
      return -1;
    return 1;
  }
  if (size <= 0 || size > FA_MAX_RANKS) {
    if (problemf(a, a->frames[cl[0].frame].name, "comm %s: no usable size; ignored", hex))
      return -1;
    return 1;
  }
  c->size = size;
  c->members = calloc((size_t)size, sizeof *c->members);
  if (!c->members) return -1;
  for (int32_t r = 0; r < size; r++) {
    fa_member *m = &c->members[r];
    m->comm_rank = r;
    m->global_rank = m->rank = m->frame = m->entry = -1;
    m->first_retained = m->last_enqueued = m->last_completed = m->unknown_from = -1;
    m->failed_seq = -1;
    m->state = FA_MEMBER_NO_DUMP;
  }
  /* creations that failed before NCCL gave the ranks their places (a split's
   * child registered with rank -1): as many as the comm ranks no other claim
   * takes, they take those in the order NCCL gives (split key, then parent
   * rank: the free places are where they sit among the placed members) */
  int32_t *placed = NULL; /* per claim: its comm rank, -1 none */
  {
    uint32_t nun = 0, nfree = 0;
    uint8_t *taken = calloc((size_t)size, 1);
    placed = malloc((n ? n : 1) * sizeof *placed);
    if (!taken || !placed) {
      free(taken);
      free(placed);
      return -1;
    }
    for (uint32_t i = 0; i < n; i++) {
      const frz_comm *fc = &a->frames[cl[i].frame].dump.comms[cl[i].entry];
      placed[i] = fc->rank;
      if (fc->rank >= 0 && fc->rank < size) taken[fc->rank] = 1;
      nun += fc->rank < 0 && (fc->flags & FRZ_CF_INIT_FAILED);
    }
    for (int32_t r = 0; r < size; r++) nfree += !taken[r];
    if (nun && nun == nfree) {
      int32_t next = 0;
      for (uint32_t k = 0; k < nun; k++) { /* the next unplaced claim by (key, global rank) */
        int64_t best = -1;
        for (uint32_t i = 0; i < n; i++) {
          const frz_comm *fc = &a->frames[cl[i].frame].dump.comms[cl[i].entry];
          if (placed[i] >= 0 || !(fc->flags & FRZ_CF_INIT_FAILED)) continue;
          const frz_comm *fb = best >= 0 ? &a->frames[cl[best].frame].dump.comms[cl[best].entry] : NULL;
          if (!fb || fc->split_key < fb->split_key || (fc->split_key == fb->split_key && cl[i].g < cl[best].g))
            best = (int64_t)i;
        }
        while (next < size && taken[next]) next++;
        placed[best] = next;
        taken[next] = 1;
      }
    }
    free(taken);
  }
  for (uint32_t i = 0; i < n; i++) {
    const fa_frame *f = &a->frames[cl[i].frame];
    const frz_comm *fc = &f->dump.comms[cl[i].entry];
    int32_t cr = placed[i];
    if (cr < 0 || cr >= size) {
      if (problemf(a, f->name, "comm %s: comm rank %d outside 0..%d; ignored", hex, fc->rank,
                   size - 1)) {
        free(placed);
        return -1;
      }
      continue;
    }
    fa_member *m = &c->members[cr];
    if (m->rank >= 0) {
      if (m->global_rank != cl[i].g &&
          problemf(a, f->name, "comm %s: comm rank %d claimed by ranks %d and %d; keeping %d",
                   hex, cr, m->global_rank, cl[i].g, m->global_rank)) {
        free(placed);
        return -1;
      }
      continue;
    }
    if (!c->nccl_comm_hash) c->nccl_comm_hash = fc->nccl_comm_hash;
    if (!c->pt && f->dump.pt) c->pt = &f->dump.pt->comms[cl[i].entry];
    if (!c->parent_id) c->parent_id = fc->parent_id;
    m->global_rank = cl[i].g;
    m->rank = f->rank;
    m->frame = (int32_t)cl[i].frame;
    m->entry = (int32_t)cl[i].entry;
    m->state = FA_MEMBER_IDLE;
    fa_fill_member(a, m);
    c->npresent++;
  }
  free(placed);
  /* PyTorch: pg_status counts p2p ops in a group whose last work was p2p,
   * so a member that knows the comm only from pg_status says nothing of
   * its collectives when some member retains p2p ops of it */
  int p2p = 0;
  for (int32_t r = 0; r < size && !p2p; r++) {
    const fa_member *m = &c->members[r];
    if (m->frame >= 0 && a->frames[m->frame].p2p[m->entry].len) p2p = 1;
  }
  /* nor when it claims collectives completed that no member with entries
   * of the comm ever enqueued (those counters are p2p ones) */
  int64_t hi_entries = -2;
  for (int32_t r = 0; r < size; r++) {
    const fa_member *m = &c->members[r];
    const frz_dump *d = m->frame >= 0 ? &a->frames[m->frame].dump : NULL;
    if (d && d->pt && d->pt->comms[m->entry].counters == FRZ_PT_CTR_ENTRIES && m->last_enqueued > hi_entries)
      hi_entries = m->last_enqueued;
  }
  /* and when the members' counters cannot all count collectives: a member
   * cannot have completed a collective another never enqueued (pg_status
   * counting a pipeline's p2p ops on some ranks, collectives on others) */
  int64_t max_lc = -1, min_le = INT64_MAX;
  int status_only = 0;
  for (int32_t r = 0; r < size; r++) {
    const fa_member *m = &c->members[r];
    const frz_dump *d = m->frame >= 0 ? &a->frames[m->frame].dump : NULL;
    if (!d || m->counters_unknown) continue;
    if (m->last_completed > max_lc) max_lc = m->last_completed;
    if (m->last_enqueued < min_le) min_le = m->last_enqueued;
    if (d->pt && d->pt->comms[m->entry].counters == FRZ_PT_CTR_STATUS) status_only = 1;
  }
  int inconsistent = status_only && max_lc > min_le;
  for (int32_t r = 0; r < size; r++) {
    fa_member *m = &c->members[r];
    const frz_dump *d = m->frame >= 0 ? &a->frames[m->frame].dump : NULL;
    if (d && d->pt && d->pt->comms[m->entry].counters == FRZ_PT_CTR_STATUS &&
        (p2p || inconsistent || (hi_entries > -2 && m->last_completed > hi_entries)))
      m->counters_unknown = 1;
  }
  /* PyTorch: pg_config lists every member's global rank */
  if (c->pt && c->pt->ranks && c->pt->nranks == size)
    for (int32_t r = 0; r < size; r++) {
      fa_member *m = &c->members[r];
      if (m->rank >= 0 || m->global_rank >= 0 || fa_find_rank(a, c->pt->ranks[r]) >= 0) continue;
      m->global_rank = c->pt->ranks[r];
      m->global_inferred = 1;
    }
  infer_globals(a, c);
  return 0;
}

/* The comms of one id from its n claims: one, or one per group of ranks
 * that created a comm of that id (instances.c).  0, or -1 out of memory. */
static int build_instances(fa_analysis *a, const claim *cl, uint32_t n, uint32_t *cap)
{
  uint32_t *fr = malloc(n * sizeof *fr), *en = malloc(n * sizeof *en), *inst = malloc(n * sizeof *inst);
  int32_t *g = malloc(n * sizeof *g);
  claim *sub = malloc(n * sizeof *sub);
  uint32_t ninst = 1;
  int rc = -1;
  if (!fr || !en || !inst || !g || !sub) goto out;
  for (uint32_t i = 0; i < n; i++) {
    fr[i] = cl[i].frame;
    en[i] = cl[i].entry;
    g[i] = cl[i].g;
  }
  if (fa_claim_instances(a, fr, en, g, n, inst, &ninst)) goto out;
  rc = 0;
  for (uint32_t k = 0; k < ninst && rc >= 0; k++) {
    uint32_t m = 0;
    for (uint32_t i = 0; i < n; i++)
      if (inst[i] == k) sub[m++] = cl[i];
    if (fa_grow(&a->comms, cap, a->ncomms + 1, sizeof *a->comms)) {
      rc = -1;
      break;
    }
    rc = build_comm(a, sub, m, &a->comms[a->ncomms]);
    if (rc == 0) {
      a->comms[a->ncomms].instance = k;
      a->comms[a->ncomms].ninstances = ninst;
      a->ncomms++;
    }
  }
out:
  free(fr);
  free(en);
  free(inst);
  free(g);
  free(sub);
  return rc < 0 ? -1 : 0;
}

/* Communicators from the comm tables of every rank's latest frame. */
static int build_comms(fa_analysis *a)
{
  size_t total = 0;
  for (uint32_t r = 0; r < a->nranks; r++)
    total += fa_rank_latest(a, &a->ranks[r])->dump.ncomms;
  claim *cl = malloc((total ? total : 1) * sizeof *cl);
  if (!cl) return -1;
  size_t k = 0;
  for (uint32_t r = 0; r < a->nranks; r++) {
    uint32_t fi = a->ranks[r].first_frame + a->ranks[r].nframes - 1;
    const frz_dump *d = &a->frames[fi].dump;
    for (uint32_t e = 0; e < d->ncomms; e++)
      cl[k++] = (claim){d->comms[e].comm_id, a->ranks[r].global_rank, fi, e};
  }
  qsort(cl, total, sizeof *cl, cmp_claim);
  uint32_t cap = 0;
  int rc = 0;
  for (size_t i = 0; i < total && rc >= 0;) {
    size_t j = i;
    while (j < total && cl[j].id == cl[i].id) j++;
    rc = build_instances(a, cl + i, (uint32_t)(j - i), &cap);
    i = j;
  }
  free(cl);
  return rc < 0 ? -1 : 0;
}

/* Expected ranks (0..world_size-1 and inferred comm members) without a dump. */
static int find_missing(fa_analysis *a)
{
  int32_t maxg = a->world_size - 1;
  for (uint32_t c = 0; c < a->ncomms; c++)
    for (int32_t r = 0; r < a->comms[c].size; r++)
      if (a->comms[c].members[r].global_rank > maxg) maxg = a->comms[c].members[r].global_rank;
  if (maxg < 0) return 0;
  uint8_t *expected = calloc((size_t)maxg + 1, 1);
  if (!expected) return -1;
  for (int32_t g = 0; g < a->world_size; g++) expected[g] = 1;
  for (uint32_t c = 0; c < a->ncomms; c++)
    for (int32_t r = 0; r < a->comms[c].size; r++)
      if (a->comms[c].members[r].global_rank >= 0) expected[a->comms[c].members[r].global_rank] = 1;
  for (uint32_t r = 0; r < a->nranks; r++)
    if (a->ranks[r].global_rank <= maxg) expected[a->ranks[r].global_rank] = 0;
  uint32_t cap = 0;
  int rc = 0;
  for (int32_t g = 0; g <= maxg && rc == 0; g++)
    if (expected[g]) rc = fa_ranks_push(&a->ranks_missing, &cap, g);
  free(expected);
  return rc;
}

typedef struct index_ctx {
  fa_frame *frames;
  uint64_t *orphans;   /* per frame; UINT64_MAX: out of memory */
} index_ctx;

static void index_one(void *ctx, uint32_t i)
{
  index_ctx *x = ctx;
  x->frames[i].reaction_ns = fa_as_of_reaction(&x->frames[i].dump);
  if (index_frame(&x->frames[i], &x->orphans[i])) x->orphans[i] = UINT64_MAX;
}

/* Every frame's record index (in parallel), then the problems in frame order. */
static int index_frames(fa_analysis *a)
{
  index_ctx x = {a->frames, calloc(a->nframes ? a->nframes : 1, sizeof *x.orphans)};
  if (!x.orphans) return -1;
  fa_parallel_for(a->nframes, index_one, &x);
  int rc = 0;
  for (uint32_t i = 0; i < a->nframes && rc == 0; i++) {
    if (x.orphans[i] == UINT64_MAX) rc = -1;
    else if (x.orphans[i])
      rc = problemf(a, a->frames[i].name,
                    "%llu record(s) name a communicator missing from the comm table; ignored",
                    (unsigned long long)x.orphans[i]);
  }
  free(x.orphans);
  return rc;
}

/* A member without a dump whose global rank no rank map gives (a comm whose
 * rank order is not the global order): when the job lacks the dump of
 * exactly one rank and the comm lacks exactly one member's, that member is
 * that rank (a rank with a dump that belongs to the comm lists it). */
static void name_the_missing(fa_analysis *a)
{
  if (a->ranks_missing.n != 1) return;
  int32_t g = a->ranks_missing.v[0];
  for (uint32_t ci = 0; ci < a->ncomms; ci++) {
    fa_comm *c = &a->comms[ci];
    /* a comm that never formed may lack a rank that dumped (absent.c) */
    if (c->unformed) continue;
    int32_t unknown = -1, n = 0, has_g = 0;
    for (int32_t r = 0; r < c->size; r++) {
      if (c->members[r].global_rank == g) has_g = 1;
      if (c->members[r].rank < 0 && c->members[r].global_rank < 0) {
        unknown = r;
        n++;
      }
    }
    if (n != 1 || has_g) continue;
    c->members[unknown].global_rank = g;
    c->members[unknown].global_inferred = 1;
  }
}

int fa_model_build(fa_analysis *a)
{
  if (choose_job(a) || order_frames(a) || build_ranks(a) || index_frames(a)) return -1;
  if (build_comms(a) || find_missing(a)) return -1;
  fa_mark_unformed(a);
  fa_place_members_in_order(a);
  name_the_missing(a);
  return fa_absent_members(a);
}
