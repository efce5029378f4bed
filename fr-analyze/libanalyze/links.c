/* links.c — the links of a stuck collective that stopped moving data, from
 * the proxy progress NCCL's profiler plugin gave the recorder (frz 1.2
 * PROXY section).
 *
 * In every member's latest frame, a connection (channel, peer, direction)
 * of the comm whose latest proxy op belongs to the stuck seq and has a
 * proxy step still in flight says where that step waits (NCCL's states):
 *   sender in SendPeerWait (20) or SendWait (9): its data is ready, the
 *     receiver never offered a buffer or never took it;
 *   receiver in RecvWait (10): no data came.
 * A sender in SendGPUWait waits for its own kernel (an upstream stall) and
 * a receiver in RecvFlushWait/RecvGPUWait got its data: neither accuses the
 * link.  The link src -> dst on channel c stopped when both ends accuse it,
 * or one end does and the other never joined the op (lagging, or no dump).
 * A member that never joined has no progress of its own, so the ring
 * edges around it are named exactly from its neighbours' side.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* One end's accusation of a link, in comm ranks. */
typedef struct accuse {
  int32_t src, dst, channel;
  uint32_t state;
  uint64_t stalled_ns;
} accuse;

static int cmp_accuse(const void *x, const void *y)
{
  const accuse *a = x, *b = y;
  if (a->src != b->src) return a->src < b->src ? -1 : 1;
  if (a->dst != b->dst) return a->dst < b->dst ? -1 : 1;
  return (a->channel > b->channel) - (a->channel < b->channel);
}

static const accuse *find(const accuse *v, uint32_t n, int32_t src, int32_t dst, int32_t ch)
{
  accuse key = {src, dst, ch, 0, 0};
  return n ? bsearch(&key, v, n, sizeof key, cmp_accuse) : NULL;
}

static int push(accuse **v, uint32_t *n, uint32_t *cap, const accuse *a)
{
  if (fa_grow(v, cap, *n + 1, sizeof **v)) return -1;
  (*v)[(*n)++] = *a;
  return 0;
}

/* Sort an accusation list and keep one accusation per link (a dump may
 * repeat a connection): the one stalled longest. */
static void sort_unique(accuse *v, uint32_t *n)
{
  if (*n < 2) return;
  qsort(v, *n, sizeof *v, cmp_accuse);
  uint32_t w = 0;
  for (uint32_t i = 0; i < *n; i++) {
    if (w && !cmp_accuse(&v[w - 1], &v[i])) {
      if (v[i].stalled_ns > v[w - 1].stalled_ns) v[w - 1] = v[i];
      continue;
    }
    v[w++] = v[i];
  }
  *n = w;
}

/* Collect the accusations of every member's proxy progress at the stuck
 * seq into the sender (s) and receiver (r) lists. */
static int collect(fa_analysis *a, fa_comm *c, accuse **s, uint32_t *ns, accuse **r, uint32_t *nr)
{
  uint32_t caps = 0, capr = 0;
  for (int32_t m = 0; m < c->size; m++) {
    const fa_frame *f = fa_member_frame(a, &c->members[m]);
    if (!f) continue;
    for (uint64_t i = 0; i < f->dump.nproxy; i++) {
      const frz_proxy *x = &f->dump.proxy[i];
      if (x->comm_id != c->id || (x->rank >= 0 && x->rank != m)) continue;
      c->has_proxy = 1;
      if (x->seq != c->stuck_seq || x->kind != FRZ_KIND_COLL || x->steps_posted <= x->steps_done ||
          x->peer < 0 || x->peer >= c->size || x->peer == m)
        continue;
      uint64_t ft = f->dump.process.frame_time_ns;
      accuse e = {0, 0, x->channel, x->state, ft > x->t_last_ns && x->t_last_ns ? ft - x->t_last_ns : 0};
      if (x->dir == FRZ_DIR_SEND && (x->state == FRZ_PROXY_SEND_PEER_WAIT ||
                                     x->state == FRZ_PROXY_SEND_WAIT)) {
        e.src = m, e.dst = x->peer;
        if (push(s, ns, &caps, &e)) return -1;
      } else if (x->dir == FRZ_DIR_RECV && x->state == FRZ_PROXY_RECV_WAIT) {
        e.src = x->peer, e.dst = m;
        if (push(r, nr, &capr, &e)) return -1;
      }
    }
  }
  sort_unique(*s, ns);
  sort_unique(*r, nr);
  return 0;
}

static int add(fa_comm *c, int32_t idx, uint32_t *cap, const accuse *snd, const accuse *rcv)
{
  const accuse *e = snd ? snd : rcv;
  fa_link k;
  memset(&k, 0, sizeof k);
  k.comm = idx;
  k.src_comm_rank = e->src;
  k.dst_comm_rank = e->dst;
  k.src = fa_global_of(c, e->src);
  k.dst = fa_global_of(c, e->dst);
  k.channel = e->channel;
  k.seq = c->stuck_seq;
  k.evidence = (uint8_t)((snd ? FA_EVIDENCE_SENDER : 0) | (rcv ? FA_EVIDENCE_RECEIVER : 0));
  k.state = e->state;
  k.stalled_ns = e->stalled_ns;
  return fa_add_link(c, cap, &k);
}

int fa_proxy_links(fa_analysis *a, fa_comm *c)
{
  if (!c->stuck || c->nahead || c->size < 2) return 0;
  accuse *s = NULL, *r = NULL;
  uint32_t ns = 0, nr = 0, cap = c->nlinks;
  int32_t idx = (int32_t)(c - a->comms);
  int rc = collect(a, c, &s, &ns, &r, &nr);
  for (uint32_t i = 0; rc == 0 && i < ns; i++) {
    const accuse *m = find(r, nr, s[i].src, s[i].dst, s[i].channel);
    if (m || fa_member_blamed(c, &c->members[s[i].dst])) rc = add(c, idx, &cap, &s[i], m);
  }
  for (uint32_t i = 0; rc == 0 && i < nr; i++)
    if (!find(s, ns, r[i].src, r[i].dst, r[i].channel) &&
        (fa_member_blamed(c, &c->members[r[i].src]) || c->members[r[i].src].data_stopped))
      rc = add(c, idx, &cap, NULL, &r[i]);
  free(s);
  free(r);
  return rc;
}

/* Where the data of comm c's stuck collective stopped at a member without
 * a dump: a member in RecvWait for it at the stuck seq, on a channel where
 * the member that sends to it (its proxy progress of that connection, any
 * seq) completed the operation.  Its data came and went no further: the
 * member is data_stopped, its link is named and the summary says so; it is not
 * blamed, since a member that never started the op (queued behind another)
 * looks the same (a small send completes into the receiver's buffers). */
int fa_proxy_data_stopped(fa_analysis *a, fa_comm *c)
{
  if (!c->stuck || c->size < 2) return 0;
  for (int32_t w = 0; w < c->size; w++) {
    const fa_frame *f = fa_member_frame(a, &c->members[w]);
    if (!f) continue;
    for (uint64_t i = 0; i < f->dump.nproxy; i++) {
      const frz_proxy *x = &f->dump.proxy[i];
      if (x->comm_id != c->id || (x->rank >= 0 && x->rank != w) || x->seq != c->stuck_seq ||
          x->kind != FRZ_KIND_COLL || x->dir != FRZ_DIR_RECV || x->state != FRZ_PROXY_RECV_WAIT ||
          x->steps_posted <= x->steps_done || x->peer < 0 || x->peer >= c->size || x->peer == w)
        continue;
      fa_member *m = &c->members[x->peer];
      if (m->state != FA_MEMBER_NO_DUMP || m->data_stopped) continue;
      for (int32_t u = 0; u < c->size && !m->data_stopped; u++) {
        const fa_member *mu = &c->members[u];
        const fa_frame *fu = u == x->peer ? NULL : fa_member_frame(a, mu);
        if (!fu || mu->last_completed < (int64_t)c->stuck_seq) continue;
        for (uint64_t j = 0; j < fu->dump.nproxy && !m->data_stopped; j++) {
          const frz_proxy *y = &fu->dump.proxy[j];
          m->data_stopped = y->comm_id == c->id && (y->rank < 0 || y->rank == u) && y->dir == FRZ_DIR_SEND &&
                            y->peer == x->peer && y->channel == x->channel;
          m->stopped_waiter = c->members[w].global_rank;
          m->stopped_sender = mu->global_rank;
        }
      }
    }
  }
  return 0;
}
