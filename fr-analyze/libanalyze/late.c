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
  /* who entered the op after every other member that gave up had given up
   * (its own watchdog may have given up later: every rank of a job has one) */
  for (int32_t r = 0; r < c->size; r++) {
    const fa_member *m = &c->members[r];
    if (m->rank < 0 || m->frame < 0) continue;
    const frz_record *rec = fa_member_record(a, m, (uint64_t)c->stuck_seq);
    if (!rec || !rec->t_enqueue_ns) continue;
    int64_t w = wall(a, m, rec->t_enqueue_ns), last_left = 0;
    int others = 0;
    for (int32_t q = 0; q < c->size; q++) {
      const fa_member *o = &c->members[q];
      if (q == r || o->rank < 0 || o->frame < 0 || !gave_up_at(a, o)) continue;
      int64_t t = wall(a, o, gave_up_at(a, o));
      if (!others++ || t > last_left) last_left = t;
    }
    if (!others || w <= last_left + margin) continue;
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
