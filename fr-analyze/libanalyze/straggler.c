/* straggler.c — time across ranks: progress between a rank's frames (slow
 * versus hung), the clock offset of each host (estimated from completions,
 * which every member of a collective sees at about the same moment), and
 * the ranks that consistently arrive last at completed collectives. */
#include "config.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* ---- frames ---------------------------------------------------------------- */

/* Ops a rank completed between frame `f0` and frame `f1` (same process):
 * collective seqs per comm, and p2p records completed in f1 that are newer
 * than every record f0 saw completed. */
static uint64_t progress_between(const fa_frame *f0, const fa_frame *f1)
{
  uint64_t n = 0, max_id = 0; /* the newest record f0 saw completed */
  int any = 0;
  for (uint64_t i = 0; i < f0->dump.nrecords; i++)
    if (f0->dump.records[i].state == FRZ_STATE_COMPLETED && (!any || f0->dump.records[i].id > max_id)) {
      max_id = f0->dump.records[i].id;
      any = 1;
    }
  for (uint32_t e = 0; e < f1->dump.ncomms; e++) {
    const frz_comm *c1 = &f1->dump.comms[e];
    int64_t before = -1;
    for (uint32_t k = 0; k < f0->dump.ncomms; k++)
      if (f0->dump.comms[k].comm_id == c1->comm_id && f0->dump.comms[k].rank == c1->rank) {
        before = f0->dump.comms[k].last_completed_seq;
        break;
      }
    if (c1->last_completed_seq > before) n += (uint64_t)(c1->last_completed_seq - before);
  }
  for (uint64_t i = 0; i < f1->dump.nrecords; i++) {
    const frz_record *r = &f1->dump.records[i];
    if (r->kind == FRZ_KIND_P2P && r->state == FRZ_STATE_COMPLETED && (r->id > max_id || !any)) n++;
  }
  return n;
}

/* The first frame of rank r's latest episode (the frame of the trigger its
 * latest frame follows from): a job that recovered and then hung again is
 * judged by the frames of the second hang only.  A recovery frame ends its
 * episode, so it is compared with that episode's trigger frame; a frame at
 * exit belongs to the episode before it. */
static uint32_t episode_first(const fa_analysis *a, const fa_rank *r)
{
  uint32_t k = r->first_frame + r->nframes - 1;
#define FA_STRAGGLER_MIN_OPS 6 /* completed collectives a straggler must have been measured at */
#define TRIG_(k) (a->frames[k].dump.process.trigger)
  /* a frame at exit goes on from where the process was */
  while (k > r->first_frame && (TRIG_(k) == FRZ_TRIGGER_FRAME || TRIG_(k) == FRZ_TRIGGER_EXIT)) k--;
  if (TRIG_(k) == FRZ_TRIGGER_RECOVERY && k > r->first_frame) k--;
  while (k > r->first_frame && TRIG_(k) == FRZ_TRIGGER_FRAME) k--;
#undef TRIG_
  return k;
}

int fa_frames_progress(fa_analysis *a)
{
  fa_verdict *v = &a->verdict;
  uint32_t cap = 0, multi = 0;
  for (uint32_t i = 0; i < a->nranks; i++) {
    fa_rank *r = &a->ranks[i];
    r->progress = 0;
    r->clock_offset_ns = 0;
    uint32_t base = episode_first(a, r);
    if (base == r->first_frame + r->nframes - 1) continue; /* one frame of this episode */
    multi++;
    /* (a rank whose comm NCCL reported broken is not slow: what its ops
     * did after the error says nothing of a hang) */
    const fa_frame *last = fa_rank_latest(a, r);
    int broken = 0;
    for (uint32_t e = 0; e < last->dump.ncomms && !broken; e++)
      broken = (last->dump.comms[e].flags & FRZ_CF_ASYNC_ERROR) != 0;
    if (broken) continue;
    r->progress = progress_between(&a->frames[base], last);
    if (r->progress && fa_ranks_push(&v->progressed, &cap, r->global_rank)) return -1;
  }
  v->frames_progress = multi > 0 && v->progressed.n == multi;
  return 0;
}

/* Did comm c move between frames: did some member with several frames
 * complete more of it in its latest frame than in its first?  Progress is
 * per (rank, comm): a comm whose members made none is hung, whatever they
 * did in other comms. */
int fa_comm_moved(const fa_analysis *a, const fa_comm *c)
{
  for (int32_t r = 0; r < c->size; r++) {
    const fa_member *m = &c->members[r];
    if (m->rank < 0 || a->ranks[m->rank].nframes < 2) continue;
    const frz_dump *d0 = &a->frames[episode_first(a, &a->ranks[m->rank])].dump;
    const frz_comm *c1 = fa_member_comm(a, m);
    for (uint32_t k = 0; k < d0->ncomms; k++)
      if (d0->comms[k].comm_id == c->id && d0->comms[k].rank == m->comm_rank &&
          c1->last_completed_seq > d0->comms[k].last_completed_seq)
        return 1;
  }
  return 0;
}

/* ---- clocks and lateness ------------------------------------------------------ */

static int cmp_i64(const void *x, const void *y)
{
  int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
  return (a > b) - (a < b);
}

/* A record's time t (CLOCK_MONOTONIC of its process) on the writer's wall
 * clock, corrected by its host's estimated offset. */
static int64_t wall(const fa_analysis *a, const fa_member *m, uint64_t t)
{
  const frz_process *p = &a->frames[m->frame].dump.process;
  return (int64_t)(p->anchor_realtime_ns + (t - p->anchor_monotonic_ns)) -
         a->ranks[m->rank].clock_offset_ns;
}

static int cmp_host(const void *x, const void *y, void *ctx)
{
  const fa_analysis *a = ctx;
  uint32_t i = *(const uint32_t *)x, j = *(const uint32_t *)y;
  int c = strncmp(fa_rank_latest(a, &a->ranks[i])->dump.process.host,
                  fa_rank_latest(a, &a->ranks[j])->dump.process.host, FRZ_HOST_MAX);
  return c ? c : (i > j) - (i < j);
}

/* a->hosts from the ranks' host names (host[i]: index of rank i's host),
 * the host of the lowest rank first: it is the clock reference. */
static int find_hosts(fa_analysis *a, int32_t *host)
{
  uint32_t n = a->nranks, *ix = malloc(n * sizeof *ix);
  a->hosts = calloc(n, sizeof *a->hosts);
  if (!ix || !a->hosts) {
    free(ix);
    return -1;
  }
  for (uint32_t i = 0; i < n; i++) ix[i] = i;
  qsort_r(ix, n, sizeof *ix, cmp_host, a);
  for (uint32_t k = 0; k < n; k++) {
    const char *h = fa_rank_latest(a, &a->ranks[ix[k]])->dump.process.host;
    if (k == 0 || strncmp(h, a->hosts[a->nhosts - 1].host, FRZ_HOST_MAX - 1) != 0) {
      fa_host_clock *c = &a->hosts[a->nhosts++];
      memcpy(c->host, h, FRZ_HOST_MAX);
      c->host[FRZ_HOST_MAX - 1] = '\0';
    }
    host[ix[k]] = (int32_t)a->nhosts - 1;
    a->hosts[a->nhosts - 1].nranks++;
  }
  free(ix);
  /* the reference first: swap the lowest rank's host into slot 0 */
  int32_t ref = host[0];
  if (ref != 0) {
    fa_host_clock t = a->hosts[0];
    a->hosts[0] = a->hosts[ref];
    a->hosts[ref] = t;
    for (uint32_t i = 0; i < n; i++)
      host[i] = host[i] == ref ? 0 : host[i] == 0 ? ref : host[i];
  }
  return 0;
}

/* The seqs of comm c completed by every member with a dump, and retained by
 * all of them: [*lo, *hi]; 0 when there are none. */
static int common_window(const fa_analysis *a, const fa_comm *c, int64_t *lo, int64_t *hi)
{
  *lo = 0;
  *hi = c->last_completed;
  if (c->npresent < 2 || c->npresent != (uint32_t)c->size) return 0;
  uint32_t fewest = UINT32_MAX;
  for (int32_t r = 0; r < c->size; r++) {
    const fa_member *m = &c->members[r];
    if (m->first_retained > *lo) *lo = m->first_retained;
    uint32_t len = a->frames[m->frame].coll[m->entry].len;
    if (len < fewest) fewest = len;
  }
  /* never more seqs than a member holds records: counters in a hostile or
   * corrupt dump may claim a window of 2^62 seqs */
  if (*hi >= *lo && *hi - *lo >= (int64_t)fewest) *hi = *lo + (int64_t)fewest - 1;
  return *hi >= *lo;
}

/* A member's walk over rising seqs: its place in its collective slice. */
typedef struct walk {
  const frz_record *recs;
  const uint32_t *ix;
  uint32_t len, pos;
} walk;

/* Start walks for every member of c (all have a dump) at seq lo. */
static void walks_start(const fa_analysis *a, const fa_comm *c, int64_t lo, walk *w)
{
  for (int32_t r = 0; r < c->size; r++) {
    const fa_member *m = &c->members[r];
    const fa_frame *f = &a->frames[m->frame];
    const fa_slice *sl = &f->coll[m->entry];
    w[r] = (walk){f->dump.records, f->idx + sl->start, sl->len, 0};
    uint32_t l = 0, h = sl->len; /* the first record at seq >= lo */
    while (l < h) {
      uint32_t mid = l + (h - l) / 2;
      if (w[r].recs[w[r].ix[mid]].seq < (uint64_t)lo) l = mid + 1;
      else h = mid;
    }
    w[r].pos = l;
  }
}

/* The record at a seq usable for timing (a completed collective), the
 * first of that seq as fa_member_record finds it; seqs must rise. */
static const frz_record *timed(walk *w, int64_t seq)
{
  while (w->pos < w->len && w->recs[w->ix[w->pos]].seq < (uint64_t)seq) w->pos++;
  if (w->pos >= w->len) return NULL;
  const frz_record *r = &w->recs[w->ix[w->pos]];
  if (r->seq != (uint64_t)seq || r->kind != FRZ_KIND_COLL || r->state != FRZ_STATE_COMPLETED ||
      !r->t_enqueue_ns)
    return NULL;
  return r;
}

/* One (host, sample) clock pair of a comm's collective. */
typedef struct clock_sample {
  int32_t host;
  int64_t ns;
} clock_sample;

/* What one comm contributes: clock samples, and per member (comm rank) its
 * lateness at the comm's completed collectives. */
typedef struct comm_times {
  clock_sample *smp;
  uint32_t nsmp, capsmp;
  fa_straggler *late;  /* per comm rank: ops, late_ops, max_late_ns */
  int64_t *late_sum;   /* per comm rank: sum of positive lateness */
} comm_times;

typedef struct times_ctx {
  fa_analysis *a;
  const int32_t *host; /* NULL: the lateness pass, else the clock pass */
  comm_times *ct;      /* per comm */
  atomic_int failed;
} times_ctx;

static int comm_clock_samples(const fa_analysis *a, const int32_t *host, const fa_comm *c,
                              comm_times *ct);
static int comm_lateness(const fa_analysis *a, const fa_comm *c, comm_times *ct);

/* One pass over comm ci (on a worker thread: it writes only ct[ci]). */
static void times_one(void *ctx, uint32_t ci)
{
  times_ctx *x = ctx;
  const fa_comm *c = &x->a->comms[ci];
  if (x->host ? comm_clock_samples(x->a, x->host, c, &x->ct[ci]) : comm_lateness(x->a, c, &x->ct[ci]))
    atomic_store(&x->failed, 1);
}

/* Clock samples of comm c: at each seq of its common window, per host, the
 * mean completion time of its members there minus that of the reference
 * host (host 0), when both have members there.  Work: the comm's records
 * (hosts touched at a seq are reset one by one, not the whole table). */
static int comm_clock_samples(const fa_analysis *a, const int32_t *host, const fa_comm *c,
                              comm_times *ct)
{
  int64_t lo, hi;
  if (!common_window(a, c, &lo, &hi)) return 0;
  uint32_t nh = a->nhosts;
  int64_t *sum = calloc(nh, sizeof *sum);
  uint32_t *cnt = calloc(nh, sizeof *cnt);
  int32_t *touched = malloc(((size_t)c->size + 1) * sizeof *touched);
  walk *w = malloc((size_t)c->size * sizeof *w);
  int rc = -1;
  if (!sum || !cnt || !touched || !w) goto out;
  walks_start(a, c, lo, w);
  for (int64_t s = lo; s <= hi; s++) {
    uint32_t nt = 0;
    int64_t base = 0; /* sums relative to the first completion: no overflow */
    int have_base = 0;
    for (int32_t r = 0; r < c->size; r++) {
      const fa_member *m = &c->members[r];
      const frz_record *rec = timed(&w[r], s);
      if (!rec || !rec->t_complete_ns) continue;
      int32_t h = host[m->rank];
      int64_t t = wall(a, m, rec->t_complete_ns);
      if (!have_base) {
        base = t;
        have_base = 1;
      }
      if (!cnt[h]) touched[nt++] = h;
      sum[h] += (t - base) / 1000;
      cnt[h]++;
    }
    for (uint32_t k = 0; k < nt && cnt[0]; k++) {
      int32_t h = touched[k];
      if (h == 0) continue;
      if (fa_grow(&ct->smp, &ct->capsmp, ct->nsmp + 1, sizeof *ct->smp)) goto out;
      ct->smp[ct->nsmp++] = (clock_sample){h, (sum[h] / cnt[h] - sum[0] / cnt[0]) * 1000};
    }
    for (uint32_t k = 0; k < nt; k++) sum[touched[k]] = cnt[touched[k]] = 0;
  }
  rc = 0;
out:
  free(sum);
  free(cnt);
  free(touched);
  free(w);
  return rc;
}

/* Per host, the median over completed collectives of (mean completion time
 * of its members - that of the reference host, the host of the lowest rank). */
static int estimate_clocks(fa_analysis *a, const int32_t *host, comm_times *ct)
{
  times_ctx x = {a, host, ct, 0};
  fa_parallel_for(a->ncomms, times_one, &x);
  if (atomic_load(&x.failed)) return -1;
  uint32_t nh = a->nhosts, *ns = calloc(nh, sizeof *ns), *caps = calloc(nh, sizeof *caps);
  int64_t **smp = calloc(nh, sizeof *smp);
  int rc = -1;
  if (!ns || !caps || !smp) goto out;
  for (uint32_t ci = 0; ci < a->ncomms; ci++)
    for (uint32_t k = 0; k < ct[ci].nsmp; k++) {
      int32_t h = ct[ci].smp[k].host;
      if (fa_grow(&smp[h], &caps[h], ns[h] + 1, sizeof **smp)) goto out;
      smp[h][ns[h]++] = ct[ci].smp[k].ns;
    }
  for (uint32_t h = 1; h < nh; h++) {
    a->hosts[h].samples = ns[h];
    if (!ns[h]) continue;
    qsort(smp[h], ns[h], sizeof **smp, cmp_i64);
    a->hosts[h].offset_ns = smp[h][ns[h] / 2];
  }
  for (uint32_t i = 0; i < a->nranks; i++) a->ranks[i].clock_offset_ns = a->hosts[host[i]].offset_ns;
  rc = 0;
out:
  for (uint32_t h = 0; smp && h < nh; h++) free(smp[h]);
  free(smp);
  free(ns);
  free(caps);
  return rc;
}

/* The k-th smallest of v[0..n) (the value v[k] would hold sorted); v is
 * reordered.  Linear on average (Hoare's selection, middle pivot). */
static int64_t kth_smallest(int64_t *v, size_t n, size_t k)
{
  size_t lo = 0, hi = n - 1;
  while (lo < hi) {
    int64_t pivot = v[lo + (hi - lo) / 2];
    size_t i = lo, j = hi;
    while (i <= j) {
      while (v[i] < pivot) i++;
      while (v[j] > pivot) j--;
      if (i <= j) {
        int64_t t = v[i];
        v[i] = v[j];
        v[j] = t;
        i++;
        if (j == 0) break;
        j--;
      }
    }
    if (k <= j) hi = j;
    else if (k >= i) lo = i;
    else break; /* between j and i: equal to the pivot */
  }
  return v[k];
}

/* Lateness of comm c's members (by comm rank) over its completed
 * collectives: arrival behind the median arrival of the members. */
static int comm_lateness(const fa_analysis *a, const fa_comm *c, comm_times *ct)
{
  int64_t lo, hi;
  if (!common_window(a, c, &lo, &hi)) return 0;
  size_t n = (size_t)c->size;
  int64_t *t = malloc(2 * n * sizeof *t), *sorted = t ? t + n : NULL; /* arrivals, and sorted */
  walk *w = malloc(n * sizeof *w);
  ct->late = calloc(n, sizeof *ct->late);
  ct->late_sum = calloc(n, sizeof *ct->late_sum);
  int rc = -1;
  if (!t || !w || !ct->late || !ct->late_sum) goto out;
  walks_start(a, c, lo, w);
  for (int64_t s = lo; s <= hi; s++) {
    int32_t r;
    for (r = 0; r < c->size; r++) {
      const frz_record *rec = timed(&w[r], s);
      if (!rec) break;
      t[r] = sorted[r] = wall(a, &c->members[r], rec->t_enqueue_ns);
    }
    if (r < c->size) continue; /* not every member has it: no comparison */
    int64_t med = kth_smallest(sorted, n, n / 2);
    for (r = 0; r < c->size; r++) {
      fa_straggler *g = &ct->late[r];
      int64_t late = t[r] - med;
      g->ops++;
      if (late > 0) ct->late_sum[r] += late;
      if (late > g->max_late_ns) g->max_late_ns = late;
      if (late > FA_LATE_NS) g->late_ops++;
    }
  }
  rc = 0;
out:
  free(t);
  free(w);
  return rc;
}

/* Lateness per rank over every completed collective of every comm. */
static int lateness(fa_analysis *a, comm_times *ct, fa_straggler *acc, int64_t *sum)
{
  times_ctx x = {a, NULL, ct, 0};
  fa_parallel_for(a->ncomms, times_one, &x);
  if (atomic_load(&x.failed)) return -1;
  for (uint32_t ci = 0; ci < a->ncomms; ci++) {
    const fa_comm *c = &a->comms[ci];
    if (!ct[ci].late) continue;
    for (int32_t r = 0; r < c->size; r++) {
      const fa_straggler *l = &ct[ci].late[r];
      fa_straggler *g = &acc[c->members[r].rank];
      g->ops += l->ops;
      g->late_ops += l->late_ops;
      if (l->ops && l->max_late_ns > g->max_late_ns) g->max_late_ns = l->max_late_ns;
      sum[c->members[r].rank] += ct[ci].late_sum[r];
    }
  }
  return 0;
}

static int cmp_straggler(const void *x, const void *y)
{
  const fa_straggler *a = x, *b = y;
  if (a->mean_late_ns != b->mean_late_ns) return a->mean_late_ns > b->mean_late_ns ? -1 : 1;
  return (a->rank > b->rank) - (a->rank < b->rank);
}

int fa_stragglers(fa_analysis *a)
{
  fa_verdict *v = &a->verdict;
  if (!a->nranks) return 0;
  int32_t *host = malloc(a->nranks * sizeof *host);
  fa_straggler *acc = calloc(a->nranks, sizeof *acc);
  int64_t *sum = calloc(a->nranks, sizeof *sum);
  comm_times *ct = calloc(a->ncomms ? a->ncomms : 1, sizeof *ct);
  int rc = -1;
  if (!host || !acc || !sum || !ct || find_hosts(a, host)) goto out;
  if (a->nhosts > 1 && estimate_clocks(a, host, ct)) goto out;
  if (lateness(a, ct, acc, sum)) goto out;
  v->stragglers = malloc(a->nranks * sizeof *v->stragglers);
  if (!v->stragglers) goto out;
  /* consistently late: behind the median by more than FA_LATE_NS at half the
   * ops or more, of FA_STRAGGLER_MIN_OPS at least (a rank that started late,
   * or was descheduled, is late at the few ops of a short job) */
  for (uint32_t i = 0; i < a->nranks; i++) {
    fa_straggler *g = &acc[i];
    if (g->ops < FA_STRAGGLER_MIN_OPS || g->late_ops * 2 < g->ops) continue;
    g->rank = a->ranks[i].global_rank;
    g->mean_late_ns = sum[i] / g->ops;
    v->stragglers[v->nstragglers++] = *g;
  }
  qsort(v->stragglers, v->nstragglers, sizeof *v->stragglers, cmp_straggler);
  rc = 0;
out:
  for (uint32_t i = 0; ct && i < a->ncomms; i++) {
    free(ct[i].smp);
    free(ct[i].late);
    free(ct[i].late_sum);
  }
  free(ct);
  free(host);
  free(acc);
  free(sum);
  return rc;
}
