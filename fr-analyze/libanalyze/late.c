/* late.c — a member that entered the stuck op only after the others had
 * given up on it (fr-analyze(1), "Too late").
 *
 * Every member joined the op, none completed it: "all joined" would blame
 * the device or the network.  But when some members gave up (a watchdog's
 * abort: react.c reads their dumps as of then; or a process that ended
 * after waiting, PyTorch's default watchdog) and another entered the op
 * only after the last of them had, the op could never complete: they had
 * left it before it came.  It is the straggler whose lateness made them
 * time out, the root cause.  Times are wall clocks (each dump's anchors,
 * each host's estimated offset); a margin of 50 ms on one host, 1 s across
 * hosts, keeps clock error from deciding.  The late member's own watchdog
 * may have given up too, later (every rank of a job has one): it is
 * compared with the others' give-ups only. */
#include "config.h"

#include <string.h>

#include "internal.h"

#define LATE_MARGIN_ONE_HOST_NS 50000000ll
#define LATE_MARGIN_HOSTS_NS 1000000000ll

/* Time t of member m's process (CLOCK_MONOTONIC) on the wall clock. */
static int64_t wall(const fa_analysis *a, const fa_member *m, uint64_t t)
{
  const frz_process *p = &a->frames[m->frame].dump.process;
  return (int64_t)(p->anchor_realtime_ns + (t - p->anchor_monotonic_ns)) - a->ranks[m->rank].clock_offset_ns;
}

/* When member m's process gave up on the op (CLOCK_MONOTONIC ns): the
 * start of its reaction (a watchdog's abort or destroy, react.c), or, for
 * one that ended after its op had waited FA_GAVE_UP_NS without tearing
 * anything down (PyTorch's default watchdog: dump, then SIGABRT), the time
 * of its last dump; 0 when it did not give up. */
static uint64_t gave_up_at(const fa_analysis *a, const fa_member *m)
{
  const fa_frame *f = &a->frames[m->frame];
  if (f->reaction_ns) return f->reaction_ns;
  return fa_ended_waiting(&f->dump) ? f->dump.process.frame_time_ns : 0;
}

/* Was member m inside an NCCL op other than `stuck` (collective or p2p,
 * entered by wall time t and not completed before it) at wall time t? */
static int in_nccl_at(const fa_analysis *a, const fa_member *m, const frz_record *stuck, int64_t t)
{
  const frz_dump *d = &a->frames[m->frame].dump;
  for (uint64_t i = 0; i < d->nrecords; i++) {
    const frz_record *x = &d->records[i];
    if (x == stuck || (x->kind != FRZ_KIND_COLL && x->kind != FRZ_KIND_P2P) || !x->t_enqueue_ns) continue;
    if (wall(a, m, x->t_enqueue_ns) > t) continue;
    if (x->state != FRZ_STATE_COMPLETED || (x->t_complete_ns && wall(a, m, x->t_complete_ns) >= t)) return 1;
  }
  return 0;
}

int fa_came_late(const fa_analysis *a, const fa_comm *c, fa_ranks *late, fa_ranks *left, int64_t *by_ns)
{
  memset(late, 0, sizeof *late);
  memset(left, 0, sizeof *left);
  *by_ns = 0;
  if (!c->stuck) return 0;
  const char *host = NULL;
  int hosts = 1, nleft = 0;
  for (int32_t r = 0; r < c->size; r++) { /* who gave up */
    const fa_member *m = &c->members[r];
    if (m->rank < 0 || m->frame < 0) continue;
    const fa_frame *f = &a->frames[m->frame];
    const char *h = f->dump.process.host;
    if (!host) host = h;
    else if (strcmp(host, h)) hosts = 2;
    if (gave_up_at(a, m)) nleft++;
  }
  if (!nleft) return 0;
  int64_t margin = hosts > 1 ? LATE_MARGIN_HOSTS_NS : LATE_MARGIN_ONE_HOST_NS;
  uint32_t cap = 0, cl = 0;
  /* the first give-up; the members on time entered the op before it (the
   * others' own watchdogs gave up later, and do not count); the last of the
   * on-time members' give-ups */
  int64_t first = 0, last_left = 0;
  int any = 0, others = 0;
  for (int32_t r = 0; r < c->size; r++) {
    const fa_member *o = &c->members[r];
    if (o->rank < 0 || o->frame < 0 || !gave_up_at(a, o)) continue;
    int64_t t = wall(a, o, gave_up_at(a, o));
    if (!any++ || t < first) first = t;
  }
  for (int32_t r = 0; r < c->size; r++) {
    const fa_member *o = &c->members[r];
    const frz_record *rec = o->rank >= 0 && o->frame >= 0 ? fa_member_record(a, o, (uint64_t)c->stuck_seq) : NULL;
    if (!rec || !rec->t_enqueue_ns || !gave_up_at(a, o) || wall(a, o, rec->t_enqueue_ns) > first + margin) continue;
    int64_t t = wall(a, o, gave_up_at(a, o));
    if (!others++ || t > last_left) last_left = t;
  }
  /* who entered the op after all of those had given up, and was not inside
   * another NCCL op then (one that waited in a p2p op for a late peer came
   * late by that wait, not by its own doing) */
  for (int32_t r = 0; others && r < c->size; r++) {
    const fa_member *m = &c->members[r];
    if (m->rank < 0 || m->frame < 0) continue;
    const frz_record *rec = fa_member_record(a, m, (uint64_t)c->stuck_seq);
    if (!rec || !rec->t_enqueue_ns) continue;
    int64_t w = wall(a, m, rec->t_enqueue_ns);
    if (w <= last_left + margin || in_nccl_at(a, m, rec, last_left)) continue;
    if (w - last_left > *by_ns) *by_ns = w - last_left;
    if (fa_ranks_push(late, &cap, m->global_rank)) return -1;
  }
  /* those it came after: the members that gave up, the late ones aside */
  for (int32_t r = 0; late->n && r < c->size; r++) {
    const fa_member *m = &c->members[r];
    if (m->rank < 0 || m->frame < 0 || !gave_up_at(a, m)) continue;
    int is_late = 0;
    for (uint32_t i = 0; i < late->n; i++) is_late |= late->v[i] == m->global_rank;
    if (!is_late && fa_ranks_push(left, &cl, m->global_rank)) return -1;
  }
  fa_ranks_sort(late);
  fa_ranks_sort(left);
  if (!late->n || !left->n) {
    fa_ranks_free(left);
    fa_ranks_free(late);
    return 0;
  }
  return (int)late->n;
}
