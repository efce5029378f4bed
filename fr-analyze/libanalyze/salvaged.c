/* salvaged.c — dumps made from ring files (frz.md, "Ring files"): a rank
 * whose process was gone when its ring was salvaged (killed, torn down by
 * its launcher, a fatal signal, an exit with an error), or one read from
 * outside while its watchdog could not run (stopped).
 *
 * Such a process ended or stopped without stamping its records: their
 * states are as of its watchdog's last poll (process flag STATES_STALE), so
 * the ops that completed in the poll before a kill still read as pending,
 * and the rules would read that rank's own work as stopped on the device
 * side.  fa_settle_stale reads those ops as completed where the other
 * members prove it, before the model is built; the rest of the analysis
 * reads a salvaged rank as a process that ended (fa_trigger_ended), and
 * fa_say_salvaged says in the verdict what it was doing when it died. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "frz_ring.h"

#include "internal.h"
#include "summary.h"

int fa_trigger_ended(uint32_t trigger)
{
  return trigger == FRZ_TRIGGER_EXIT || trigger == FRZ_TRIGGER_CRASH || trigger == FRZ_TRIGGER_SALVAGED;
}

int fa_member_salvaged(const fa_analysis *a, const fa_member *m)
{
  return m->frame >= 0 && a->frames[m->frame].dump.process.trigger == FRZ_TRIGGER_SALVAGED;
}

int fa_ranks_salvaged(const fa_analysis *a, const fa_ranks *r)
{
  for (uint32_t i = 0; i < r->n; i++) {
    int32_t k = fa_find_rank(a, r->v[i]);
    if (k < 0 || fa_rank_latest(a, &a->ranks[k])->dump.process.trigger != FRZ_TRIGGER_SALVAGED) return 0;
  }
  return r->n > 0;
}

/* ---- ops read as completed ------------------------------------------------- */

/* A pending op of a stale dump: frame f, record k, and its comm rank. */
typedef struct pend {
  uint64_t comm, seq;
  int32_t me, peer; /* comm ranks: its own, and its root or p2p peer */
  uint32_t f;
  uint64_t k;
  uint8_t proven;   /* another member's completion proves its part done */
  uint8_t open;     /* a member whose states are fresh has it still pending: the op never finished */
} pend;

static int pend_cmp(const void *x, const void *y)
{
  const pend *p = x, *q = y;
  if (p->comm != q->comm) return p->comm < q->comm ? -1 : 1;
  if (p->me != q->me) return p->me < q->me ? -1 : 1;
  if (p->peer != q->peer) return p->peer < q->peer ? -1 : 1;
  if (p->seq != q->seq) return p->seq < q->seq ? -1 : 1;
  return 0;
}

/* Collectives: by comm and seq (to look up), or by frame, comm, comm rank
 * and seq (to settle each member's ops in order). */
static int by_seq(const void *x, const void *y)
{
  const pend *p = x, *q = y;
  if (p->comm != q->comm) return p->comm < q->comm ? -1 : 1;
  if (p->seq != q->seq) return p->seq < q->seq ? -1 : 1;
  return 0;
}

static int by_member(const void *x, const void *y)
{
  const pend *p = x, *q = y;
  if (p->f != q->f) return p->f < q->f ? -1 : 1;
  if (p->comm != q->comm) return p->comm < q->comm ? -1 : 1;
  if (p->me != q->me) return p->me < q->me ? -1 : 1;
  if (p->seq != q->seq) return p->seq < q->seq ? -1 : 1;
  return 0;
}

/* The comm rank that made record r of dump d (frz 1.3), else its comm entry's. */
static int32_t rank_of(const frz_dump *d, const frz_record *r)
{
  if (r->comm_rank >= 0) return r->comm_rank;
  for (uint32_t i = 0; i < d->ncomms; i++)
    if (d->comms[i].comm_id == r->comm_id) return d->comms[i].rank;
  return -1;
}

static int pending(const frz_record *r)
{
  return (r->state == FRZ_STATE_ENQUEUED || r->state == FRZ_STATE_STARTED) && !(r->flags & FRZ_RF_NO_TRACKING);
}

static int same_process(const frz_dump *x, const frz_dump *y)
{
  return x->process.pid == y->process.pid && strcmp(x->process.host, y->process.host) == 0;
}

/* Does the completion of collective `done` (by another member, comm rank
 * done_rank) prove that the stale member's part of its op `mine` (comm
 * rank me) ran: ops whose every output needs every member's input, a
 * Broadcast or Scatter it was the root of, a Reduce or Gather completed by
 * its root? */
static int proves(const frz_record *mine, int32_t me, const frz_record *done, int32_t done_rank)
{
  if (mine->op != done->op) return 0;
  switch (mine->op) {
  case FRZ_OP_AllReduce:
  case FRZ_OP_AllGather:
  case FRZ_OP_ReduceScatter:
  case FRZ_OP_AlltoAll:
    return 1;
  case FRZ_OP_Broadcast:
  case FRZ_OP_Bcast:
  case FRZ_OP_Scatter:
    return mine->peer >= 0 && mine->peer == me;
  case FRZ_OP_Reduce:
  case FRZ_OP_Gather:
    return done->peer >= 0 && done->peer == done_rank && me != done_rank;
  default:
    return 0;
  }
}

/* The first entry of v[0..n) not below key in the order cmp. */
static size_t lower(const pend *v, size_t n, const pend *key, int (*cmp)(const void *, const void *))
{
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (cmp(&v[mid], key) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

static int push(pend **v, uint32_t *cap, uint32_t *n, pend p)
{
  if (fa_grow(v, cap, *n + 1, sizeof **v)) return -1;
  (*v)[(*n)++] = p;
  return 0;
}

/* The settled entry of (rank g, comm id), made when missing; NULL on OOM. */
static fa_settled *settled_of(fa_analysis *a, uint32_t *cap, int32_t g, uint64_t id)
{
  for (uint32_t i = 0; i < a->nsettled; i++)
    if (a->settled[i].global_rank == g && a->settled[i].comm_id == id) return &a->settled[i];
  if (fa_grow(&a->settled, cap, a->nsettled + 1, sizeof *a->settled)) return NULL;
  fa_settled *s = &a->settled[a->nsettled++];
  memset(s, 0, sizeof *s);
  s->global_rank = g;
  s->comm_id = id;
  return s;
}

/* Mark record r of dump d completed (its completion not seen: time 0). */
static void settle(frz_dump *d, frz_record *r)
{
  r->state = FRZ_STATE_COMPLETED;
  for (uint32_t i = 0; i < d->ncomms; i++) {
    frz_comm *c = &d->comms[i];
    if (r->kind != FRZ_KIND_COLL || c->comm_id != r->comm_id || (r->comm_rank >= 0 && c->rank != r->comm_rank))
      continue;
    if ((int64_t)r->seq > c->last_started_seq) c->last_started_seq = (int64_t)r->seq;
  }
}

/* A comm entry's last_completed_seq again after ops were settled: one
 * below its lowest collective or lifecycle record still pending. */
static void recount(frz_dump *d)
{
  for (uint32_t i = 0; i < d->ncomms; i++) {
    frz_comm *c = &d->comms[i];
    int64_t lc = c->last_enqueued_seq;
    for (uint64_t k = 0; k < d->nrecords; k++) {
      const frz_record *r = &d->records[k];
      if (r->comm_id != c->comm_id || (r->comm_rank >= 0 && r->comm_rank != c->rank) ||
          (r->kind != FRZ_KIND_COLL && r->kind != FRZ_KIND_LIFE))
        continue;
      if ((r->state == FRZ_STATE_ENQUEUED || r->state == FRZ_STATE_STARTED) && (int64_t)r->seq - 1 < lc)
        lc = (int64_t)r->seq - 1;
    }
    if (lc > c->last_completed_seq) c->last_completed_seq = lc;
  }
}

int fa_settle_stale(fa_analysis *a)
{
  pend *coll = NULL, *send = NULL;
  uint32_t ncoll = 0, nsend = 0, ccap = 0, scap = 0, setcap = a->nsettled;
  int rc = -1;
  for (uint32_t f = 0; f < a->nframes; f++) {
    const frz_dump *d = &a->frames[f].dump;
    if (d->pt || !(d->process.flags & FRZ_PF_STATES_STALE)) continue;
    for (uint64_t k = 0; k < d->nrecords; k++) {
      const frz_record *r = &d->records[k];
      if (!pending(r)) continue;
      pend p = {r->comm_id, r->seq, rank_of(d, r), r->peer, f, k, 0, 0};
      if (r->kind == FRZ_KIND_COLL) {
        p.peer = 0; /* (collectives: matched by comm and seq alone) */
        if (push(&coll, &ccap, &ncoll, p)) goto out;
      } else if (r->kind == FRZ_KIND_P2P && r->dir == FRZ_DIR_SEND) {
        if (push(&send, &scap, &nsend, p)) goto out;
      }
    }
  }
  if (!ncoll && !nsend) {
    rc = 0;
    goto out;
  }
  /* either list may be empty (and NULL): qsort must not see a NULL base */
  if (ncoll) qsort(coll, ncoll, sizeof *coll, by_seq);
  if (nsend) qsort(send, nsend, sizeof *send, pend_cmp);
  /* the others' completions that prove a pending op's part ran */
  for (uint32_t g = 0; g < a->nframes; g++) {
    const frz_dump *d = &a->frames[g].dump;
    if (d->pt) continue;
    for (uint64_t k = 0; k < d->nrecords; k++) {
      const frz_record *r = &d->records[k];
      if (r->kind == FRZ_KIND_COLL && ncoll && pending(r) && !(d->process.flags & FRZ_PF_STATES_STALE)) {
        /* one that died inside the op may have sent its part to some members and not to others */
        pend key = {r->comm_id, r->seq, 0, 0, 0, 0, 0, 0};
        for (size_t i = lower(coll, ncoll, &key, by_seq); i < ncoll && !by_seq(&coll[i], &key); i++)
          coll[i].open = 1;
        continue;
      }
      if (r->state != FRZ_STATE_COMPLETED) continue;
      int32_t rr = rank_of(d, r);
      if (r->kind == FRZ_KIND_COLL && ncoll) {
        pend key = {r->comm_id, r->seq, 0, 0, 0, 0, 0, 0};
        for (size_t i = lower(coll, ncoll, &key, by_seq); i < ncoll && !by_seq(&coll[i], &key); i++) {
          pend *p = &coll[i];
          if (p->me == rr) continue;
          const frz_dump *pd = &a->frames[p->f].dump;
          if (!same_process(pd, d) && proves(&pd->records[p->k], p->me, r, rr)) p->proven = 1;
        }
      } else if (r->kind == FRZ_KIND_P2P && r->dir == FRZ_DIR_RECV && nsend) {
        /* the receive of a send delivered it; a completed send proves nothing of
         * the receive (NCCL's buffers take small messages before it runs) */
        pend key = {r->comm_id, r->seq, r->peer, rr, 0, 0, 0, 0};
        size_t i = lower(send, nsend, &key, pend_cmp);
        if (i < nsend && !pend_cmp(&send[i], &key) && !same_process(&a->frames[send[i].f].dump, d))
          send[i].proven = 1;
      }
    }
  }
  /* a comm's ops run in order: a proven op settles the member's ops before it */
  uint32_t *touched = calloc(a->nframes ? a->nframes : 1, sizeof *touched);
  if (!touched) goto out;
  if (ncoll) qsort(coll, ncoll, sizeof *coll, by_member);
  for (uint32_t i = 0; i < ncoll;) {
    uint32_t j = i;
    int64_t top = -1;
    while (j < ncoll && coll[j].comm == coll[i].comm && coll[j].me == coll[i].me && coll[j].f == coll[i].f) {
      if (coll[j].proven && !coll[j].open) top = (int64_t)coll[j].seq;
      j++;
    }
    for (uint32_t k = i; k < j && top >= 0; k++) {
      if ((int64_t)coll[k].seq > top) continue;
      frz_dump *d = &a->frames[coll[k].f].dump;
      frz_record *r = &d->records[coll[k].k];
      fa_settled *s = settled_of(a, &setcap, d->process.global_rank, r->comm_id);
      if (!s) goto out_t;
      if (!s->ncoll || r->seq < s->first_seq) s->first_seq = r->seq;
      if (!s->ncoll || r->seq > s->last_seq) s->last_seq = r->seq;
      s->ncoll++;
      settle(d, r);
      touched[coll[k].f] = 1;
    }
    i = j;
  }
  for (uint32_t i = 0; i < nsend; i++) {
    if (!send[i].proven) continue;
    frz_dump *d = &a->frames[send[i].f].dump;
    frz_record *r = &d->records[send[i].k];
    fa_settled *s = settled_of(a, &setcap, d->process.global_rank, r->comm_id);
    if (!s) goto out_t;
    s->nsend++;
    settle(d, r);
  }
  for (uint32_t f = 0; f < a->nframes; f++)
    if (touched[f]) recount(&a->frames[f].dump);
  rc = 0;
out_t:
  free(touched);
out:
  free(coll);
  free(send);
  return rc;
}

/* ---- the verdict's words ----------------------------------------------------- */

/* Wall-clock time of monotonic time t of dump d; 0 unknown. */
static uint64_t wall(const frz_dump *d, uint64_t t)
{
  const frz_process *p = &d->process;
  if (!p->anchor_realtime_ns || !t) return 0;
  return p->anchor_realtime_ns + (t - p->anchor_monotonic_ns);
}

/* ", 1.4 s before the others' dumps": its last sign of life against the
 * first dump another rank wrote itself (else the others' own last signs of
 * life, when every rank was salvaged). */
static void say_when(const fa_analysis *a, const fa_frame *f, sbuf *b)
{
  uint64_t mine = wall(&f->dump, f->dump.process.frame_time_ns), own = 0, other = 0;
  if (!mine) return;
  for (uint32_t k = 0; k < a->nranks; k++) {
    const fa_frame *o = fa_rank_latest(a, &a->ranks[k]);
    if (o->rank == f->rank || o->dump.pt) continue;
    const frz_process *p = &o->dump.process;
    int salvaged = p->trigger == FRZ_TRIGGER_SALVAGED;
    /* the first frame of its dumps: when it saw the trigger */
    uint64_t t = wall(&o->dump, salvaged ? p->frame_time_ns : p->trigger_time_ns);
    if (!t) continue;
    uint64_t *slot = salvaged ? &other : &own;
    if (!*slot || t < *slot) *slot = t;
  }
  uint64_t ref = own ? own : other;
  if (!ref) return;
  double s = ((double)ref - (double)mine) / 1e9;
  const char *whose = own ? "the first of the others' dumps" : "the others' last signs of life (salvaged too)";
  if (s >= 0.05) sb_printf(b, ", %.1f s before %s", s, whose);
  else if (s <= -0.05) sb_printf(b, ", %.1f s after %s", -s, whose);
  else sb_printf(b, "%s", own ? ", as the others' dumps were written" : ", as the others ended");
}

/* "AllReduce seq 40 on comm 1f2e..." of record r of dump d into buf. */
static const char *rec_phrase(const frz_dump *d, const frz_record *r, char *buf, size_t len)
{
  char nm[FRZ_PT_NAME_MAX], hex[17];
  if (r->kind == FRZ_KIND_P2P)
    snprintf(buf, len, "%s to/from comm rank %d (p2p seq %llu) on comm %s", fa_sanitize(fa_record_op_name(d, r), nm, sizeof nm),
             r->peer, (unsigned long long)r->seq, fa_hex(r->comm_id, hex));
  else if (r->comm_id)
    snprintf(buf, len, "%s seq %llu on comm %s", fa_sanitize(fa_record_op_name(d, r), nm, sizeof nm),
             (unsigned long long)r->seq, fa_hex(r->comm_id, hex));
  else
    snprintf(buf, len, "%s", fa_sanitize(fa_record_op_name(d, r), nm, sizeof nm));
  return buf;
}

/* Where the process was when it ended: inside an NCCL call that had not
 * returned (IN_CALL), in host code with ops in flight on its device, or in
 * host code after its last op completed. */
static void say_where(const frz_dump *d, sbuf *b)
{
  const frz_record *in_call = NULL, *fly = NULL, *last = NULL;
  uint32_t nfly = 0;
  for (uint64_t k = d->nrecords; k-- > 0;) {
    const frz_record *r = &d->records[k];
    if (r->kind != FRZ_KIND_COLL && r->kind != FRZ_KIND_P2P && r->kind != FRZ_KIND_LIFE) continue;
    if (!last) last = r;
    if ((r->flags & FRZ_RF_IN_CALL) && !in_call) in_call = r;
    if (pending(r) && r->kind != FRZ_KIND_LIFE) fly = r, nfly++;
  }
  char ph[256];
  if (in_call)
    sb_printf(b, "; it was inside NCCL: its call of %s had not returned", rec_phrase(d, in_call, ph, sizeof ph));
  else if (fly)
    sb_printf(b, "; it was in host code, with %u op%s in flight on its device from %s on", nfly, nfly == 1 ? "" : "s",
              rec_phrase(d, fly, ph, sizeof ph));
  else if (last)
    sb_printf(b, "; it was in host code: its last op, %s, had %s", rec_phrase(d, last, ph, sizeof ph),
              last->state == FRZ_STATE_FAILED ? "failed" : "completed");
  else
    sb_printf(b, "; it had made no NCCL call");
}

void fa_say_salvaged(const fa_analysis *a, sbuf *b)
{
  const fa_verdict *v = &a->verdict;
  for (uint32_t i = 0; i < v->root_cause.n && i < 4; i++) {
    int32_t g = v->root_cause.v[i], k = fa_find_rank(a, g);
    if (k < 0) continue;
    const fa_frame *f = fa_rank_latest(a, &a->ranks[k]);
    const frz_process *p = &f->dump.process;
    if (f->dump.pt) continue;
    char how[FRZ_TEXT_MAX];
    if (p->trigger == FRZ_TRIGGER_SALVAGED) {
      /* the reader's text: "salvaged: pid N <how it ended>" (frz_ring_death_text) */
      const char *t = p->trigger_text, *sp = strstr(t, "pid ");
      sp = sp ? strchr(sp + 4, ' ') : NULL;
      fa_sanitize(sp ? sp + 1 : "ended", how, sizeof how);
      sb_printf(b, "; rank %d's process ended (its ring file, salvaged): %s", g, how);
    } else if (p->trigger == FRZ_TRIGGER_SNAPSHOT && (p->flags & FRZ_PF_STATES_STALE)) {
      sb_printf(b, "; rank %d's process is stopped (its watchdog thread cannot run; its ring file was read "
                "from outside)", g);
    } else {
      continue;
    }
    if (p->trigger == FRZ_TRIGGER_SALVAGED) say_when(a, f, b);
    say_where(&f->dump, b);
    for (uint32_t s = 0; s < a->nsettled; s++) {
      const fa_settled *x = &a->settled[s];
      char hex[17];
      if (x->global_rank != g) continue;
      char seqs[48];
      if (x->last_seq > x->first_seq)
        snprintf(seqs, sizeof seqs, "seqs %llu-%llu", (unsigned long long)x->first_seq,
                 (unsigned long long)x->last_seq);
      else
        snprintf(seqs, sizeof seqs, "seq %llu", (unsigned long long)x->first_seq);
      if (x->ncoll)
        sb_printf(b, " (its ring showed %s on comm %s pending, which the others' completions prove done: "
                  "its watchdog's last poll came before its end)", seqs, fa_hex(x->comm_id, hex));
      else if (x->nsend)
        sb_printf(b, " (%u send%s on comm %s read as done: the peers received them)", x->nsend,
                  x->nsend == 1 ? "" : "s", fa_hex(x->comm_id, hex));
    }
  }
}

/* ---- a directory of announcements alone ---------------------------------------- */

/* The ring file of announcement x in ring directory rdir, when it is
 * there (the name frz_ring_filename gives, or with .1 .. .9 before
 * ".ring": a name taken by an earlier process); NULL otherwise. */
static char *ring_of(const char *rdir, const frz_alive *x)
{
  char name[512];
  int len = frz_ring_filename(name, sizeof name, x->job_id, x->global_rank, x->pid, x->host);
  if (len < 6) return NULL;
  struct stat st;
  for (int k = 0; k <= 9; k++) {
    char alt[520];
    if (k) snprintf(alt, sizeof alt, "%.*s.%d" FRZ_RING_SUFFIX, len - 5, name, k);
    else snprintf(alt, sizeof alt, "%s", name);
    char *p = fa_printf("%s/%s", rdir, alt);
    if (!p) return NULL;
    if (lstat(p, &st) == 0 && S_ISREG(st.st_mode)) return p;
    free(p);
  }
  return NULL;
}

int fa_alive_rings(const char *dir, char ***out, uint32_t *n, char **pointer)
{
  *out = NULL;
  *n = 0;
  *pointer = NULL;
  frz_alive *v = NULL;
  size_t nv = 0;
  if (frz_alive_list(dir, &v, &nv) != FRZ_OK || !nv) {
    free(v);
    return 0;
  }
  const char *rdir = getenv("FR_RING_DIR");
  if (!rdir || !*rdir || !strcmp(rdir, "none") || !strcmp(rdir, "off") || !strcmp(rdir, "0")) rdir = "/dev/shm";
  char here[FRZ_HOST_MAX] = "";
  if (gethostname(here, sizeof here - 1) != 0) here[0] = 0;
  uint32_t cap = 0;
  fa_ranks miss = {NULL, 0};
  uint32_t mcap = 0, nunknown = 0;
  char hosts[256] = "";
  size_t hl = 0;
  int rc = 0;
  for (size_t i = 0; i < nv && rc == 0; i++) {
    const frz_alive *x = &v[i];
    char *p = !strcmp(x->host, here) ? ring_of(rdir, x) : NULL;
    if (p) {
      if (fa_grow(out, &cap, *n + 1, sizeof **out)) {
        free(p);
        rc = -1;
      } else {
        (*out)[(*n)++] = p;
      }
      continue;
    }
    if (x->global_rank >= 0) rc = fa_ranks_push(&miss, &mcap, x->global_rank);
    else nunknown++;
    char hs[FRZ_HOST_MAX * 4];
    fa_sanitize(x->host[0] ? x->host : "?", hs, sizeof hs);
    if (!strstr(hosts, hs) && hl + strlen(hs) + 3 < sizeof hosts)
      hl += (size_t)snprintf(hosts + hl, sizeof hosts - hl, "%s%s", hl ? ", " : "", hs);
  }
  if (rc == 0 && (miss.n || nunknown)) {
    char rs[200], job[FRZ_JOB_MAX * 4];
    fa_ranks_sort(&miss);
    fa_format_ranks(miss.v, miss.n, rs, sizeof rs);
    fa_sanitize(v[0].job_id[0] ? v[0].job_id : "?", job, sizeof job);
    *pointer = fa_printf("the directory holds no dump, only the announcements of processes that never exited "
                         "cleanly (a job killed before its timeout): the ring files of job %s (%s%s%s) are in "
                         "FR_RING_DIR (default /dev/shm) on host%s %s; run fr-dump --salvage -o %s there, then "
                         "fr-analyze again",
                         job, miss.n ? (miss.n == 1 ? "rank " : "ranks ") : "", miss.n ? rs : "",
                         nunknown ? (miss.n ? " and processes of unknown rank" : "processes of unknown rank") : "",
                         strchr(hosts, ',') ? "s" : "", hosts, dir);
    if (!*pointer) rc = -1;
  }
  fa_ranks_free(&miss);
  free(v);
  if (rc) {
    for (uint32_t i = 0; i < *n; i++) free((*out)[i]);
    free(*out);
    *out = NULL;
    *n = 0;
  }
  return rc;
}
