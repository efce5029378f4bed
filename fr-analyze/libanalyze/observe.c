/* observe.c — the observations: every abnormal fact of the dumps, typed,
 * with its evidence (rank, comm, seq, peer), as the rules of the analysis
 * left them in the model (member states and flags, mismatches, links).  One
 * per member of each stuck comm at most, plus one per link and per comm:
 * linear in ranks and links.  fr-analyze(1), "THE MODEL", lists the kinds. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "internal.h"

static const char *const obs_names[FA_OBS_NKINDS] = {
    "waiting", "not-posted", "unfinished", "not-returned", "call-failed", "not-run", "no-dump",
    "ended", "ahead", "args-differ", "p2p-unmatched", "link-stopped", "all-joined"};

const char *fa_obs_kind_name(fa_obs_kind k)
{
  return (unsigned)k < FA_OBS_NKINDS ? obs_names[k] : "?";
}

/* ---- observations ------------------------------------------------------------- */


static int obs_push(fa_obs **v, uint32_t *n, uint32_t *cap, fa_obs_kind k, int32_t rank, int32_t comm, uint64_t seq, int32_t peer)
{
  if (fa_grow(v, cap, *n + 1, sizeof **v)) return -1;
  (*v)[(*n)++] = (fa_obs){k, rank, comm, seq, peer, -1};
  return 0;
}

/* What member m of stuck comm c shows there, as an observation kind; -1 none. */
static int member_obs(const fa_analysis *a, const fa_comm *c, const fa_member *m)
{
  switch (m->state) {
  case FA_MEMBER_WAITING:
    return FA_OBS_WAITING;
  case FA_MEMBER_PASSED: /* past it, waiting in a later op of the comm */
    return m->last_completed < m->last_enqueued ? FA_OBS_WAITING : -1;
  case FA_MEMBER_LAGGING:
    if (m->failed_seq >= 0 && (uint64_t)m->failed_seq <= c->stuck_seq) return FA_OBS_CALL_FAILED;
    if (m->not_run) return FA_OBS_NOT_RUN;
    if (m->left || m->gone || fa_member_salvaged(a, m)) return FA_OBS_ENDED;
    if (m->rank >= 0) {
      const frz_record *at = fa_member_record(a, m, c->stuck_seq);
      if (at && (at->flags & FRZ_RF_GROUP_OPEN)) return FA_OBS_NOT_RUN;
    }
    return FA_OBS_NOT_POSTED;
  case FA_MEMBER_UNFINISHED:
    return m->not_returned ? FA_OBS_NOT_RETURNED : fa_member_salvaged(a, m) ? FA_OBS_ENDED : FA_OBS_UNFINISHED;
  case FA_MEMBER_AHEAD:
    return FA_OBS_AHEAD;
  case FA_MEMBER_NO_DUMP:
    return fa_member_blamed(c, m) ? FA_OBS_NO_DUMP : -1;
  default:
    return -1;
  }
}

int fa_observe(const fa_analysis *a, fa_obs **out, uint32_t *n)
{
  const fa_verdict *v = &a->verdict;
  uint32_t cap = 0;
  *out = NULL;
  *n = 0;
  for (uint32_t ci = 0; ci < a->ncomms; ci++) {
    const fa_comm *c = &a->comms[ci];
    if (c->has_mismatch && obs_push(out, n, &cap, FA_OBS_ARGS_DIFFER, -1, (int32_t)ci, c->mismatch.seq, -1)) return -1;
    if (c->stuck && !c->in_flight) {
      for (int32_t r = 0; r < c->size; r++) {
        const fa_member *m = &c->members[r];
        int k = member_obs(a, c, m);
        if (k >= 0 && obs_push(out, n, &cap, (fa_obs_kind)k, m->global_rank, (int32_t)ci, c->stuck_seq, -1)) return -1;
      }
      if ((int32_t)ci == v->comm && v->all_joined &&
          obs_push(out, n, &cap, FA_OBS_ALL_JOINED, -1, (int32_t)ci, c->stuck_seq, -1))
        return -1;
    }
    for (uint32_t i = 0; i < c->nlinks && !v->frames_progress; i++) { /* (in flight in a slow job) */
      const fa_link *k = &c->links[i];
      if (k->p2p && !k->joined) {
        int32_t w = fa_p2p_waiter(k), o = k->pending_dir == FRZ_DIR_SEND ? k->dst : k->src;
        if (obs_push(out, n, &cap, FA_OBS_P2P_UNMATCHED, w, (int32_t)ci, k->seq, o)) return -1;
      } else if (!k->p2p && !k->inferred && k->evidence &&
                 obs_push(out, n, &cap, FA_OBS_LINK_STOPPED, k->src, (int32_t)ci, k->seq, k->dst)) {
        return -1;
      }
    }
  }
  return 0;
}
