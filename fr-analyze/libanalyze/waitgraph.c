/* waitgraph.c — the wait-for graph across communicators, over ranks: who
 * waits for whom, where the waits start (the root causes) and, when they
 * start nowhere, the cycle (a deadlock). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* Nodes: the ranks with a dump (indexes into a->ranks), then one hub per
 * communicator (a->nranks + comm index) standing for "the members its
 * waiting side waits for", so that n waiters and m awaited members cost
 * n + m edges, not n * m. */
typedef struct wedge {
  uint32_t from, to;   /* nodes */
  int32_t comm;        /* the comm of the wait */
  uint64_t seq;        /* its stuck seq, or the p2p link's seq */
  uint8_t own;         /* hub -> rank: the awaited comm rank is of a process that waits in this
                          comm with another comm rank (CommInitAll), or it left the comm (tore it
                          down, aborted it): its own call is missing, a root */
  int32_t dead_g;      /* to the dead node: the global rank (-1 unknown) of the p2p counterpart
                          without a dump where the wait ends */
} wedge;

struct fa_wgraph {
  uint32_t nranks, ncomms, nnodes; /* nodes: ranks, one hub per comm, then the dead node */
  wedge *e;            /* sorted by from */
  uint32_t ne;
  uint32_t *first;     /* nnodes + 1 offsets into e */
  uint8_t *waits;      /* per rank: it waits inside an NCCL call (a->ranks[k].wait_comm >= 0) */
  uint8_t *unfinished_hub; /* per comm: its awaited members never finished their own work */
  uint8_t *uncertain_hub;  /* per comm: it awaits one of several ranks (a comm rank of a comm that
                              never formed, which the evidence does not place) */
};

static int cmp_wedge(const void *x, const void *y)
{
  const wedge *a = x, *b = y;
  if (a->from != b->from) return a->from < b->from ? -1 : 1;
  return (a->to > b->to) - (a->to < b->to);
}

static int push_edge(fa_wgraph *g, uint32_t *cap, wedge w)
{
  if (fa_grow(&g->e, cap, g->ne + 1, sizeof *g->e)) return -1;
  g->e[g->ne++] = w;
  return 0;
}

/* Does member m wait in c's stuck collective (behind c's awaited members)? */
static int waits_in(const fa_comm *c, const fa_member *m)
{
  return m->rank >= 0 && (m->state == FA_MEMBER_WAITING ||
                          (m->state == FA_MEMBER_PASSED && m->last_completed < m->last_enqueued) ||
                          fa_unfinished_waits(c, m));
}

void fa_wgraph_free(fa_wgraph *g)
{
  if (!g) return;
  free(g->e);
  free(g->first);
  free(g->waits);
  free(g->unfinished_hub);
  free(g->uncertain_hub);
  free(g);
}

fa_wgraph *fa_wgraph_build(const fa_analysis *a)
{
  fa_wgraph *g = calloc(1, sizeof *g);
  if (!g) return NULL;
  g->nranks = a->nranks;
  g->ncomms = a->ncomms;
  g->nnodes = a->nranks + a->ncomms + 1;
  g->first = calloc(g->nnodes + 1, sizeof *g->first);
  g->waits = calloc(a->nranks ? a->nranks : 1, 1);
  g->unfinished_hub = calloc(a->ncomms ? a->ncomms : 1, 1);
  g->uncertain_hub = calloc(a->ncomms ? a->ncomms : 1, 1);
  if (!g->first || !g->waits || !g->unfinished_hub || !g->uncertain_hub) goto oom;
  for (uint32_t k = 0; k < a->nranks; k++) g->waits[k] = a->ranks[k].wait_comm >= 0;
  uint32_t cap = 0;
  for (uint32_t ci = 0; ci < a->ncomms; ci++) {
    const fa_comm *c = &a->comms[ci];
    uint32_t hub = a->nranks + ci;
    if (c->stuck && !c->nahead && !c->end_unclear && (c->nwaiting || c->npassed)) {
      fa_member_state want = c->nlagging ? FA_MEMBER_LAGGING
                             : c->nunfinished ? FA_MEMBER_UNFINISHED : FA_MEMBER_NO_DUMP;
      g->unfinished_hub[ci] = want == FA_MEMBER_UNFINISHED;
      int any = 0;
      for (int32_t r = 0; r < c->size; r++) {
        const fa_member *m = &c->members[r];
        if (m->state != want) continue;
        /* (unfinished beside a member whose comm reported an async error: that one is awaited) */
        if (want == FA_MEMBER_UNFINISHED && c->nasync_error && !m->async_error) continue;
        int32_t k = fa_member_node(a, m);
        if (k >= 0) {
          /* it left the comm, or its own call there failed or went into a graph never launched
           * (never to be posted): its own doing, whatever it waits for */
          uint8_t own = m->left || m->not_run || (m->failed_seq >= 0 && (uint64_t)m->failed_seq <= c->stuck_seq),
                  self = 0;
          for (int32_t q = 0; q < c->size && !self; q++)
            self = c->members[q].rank == k && waits_in(c, &c->members[q]);
          /* one queued on its stream behind another comm's op waits for
           * that op: its process, waiting here too, waits for what that op
           * waits for (its own edges), not for itself */
          if (m->behind && self) {
            any = 1;
            continue;
          }
          own = own || (self && !m->behind);
          if (push_edge(g, &cap, (wedge){hub, (uint32_t)k, (int32_t)ci, c->stuck_seq, own, -1})) goto oom;
          any = 1;
          continue;
        }
        any = 2; /* no dump: a dead end, a root (below) */
        /* a comm rank that may be one of several ranks with dumps: to each
         * (the hub is uncertain: which one is not known) */
        int dumped = m->ncand > 0;
        for (uint32_t i = 0; i < m->ncand; i++) dumped &= fa_find_rank(a, m->cand[i]) >= 0;
        for (uint32_t i = 0; dumped && i < m->ncand; i++)
          if (push_edge(g, &cap, (wedge){hub, (uint32_t)fa_find_rank(a, m->cand[i]), (int32_t)ci,
                                         c->stuck_seq, 0, -1}))
            goto oom;
        if (dumped) g->uncertain_hub[ci] = 1;
      }
      /* behind unfinished members, the others wait further on for those
       * that never enqueued that seq */
      for (int32_t r = 0; c->beyond_seq >= 0 && r < c->size; r++) {
        const fa_member *m = &c->members[r];
        if (m->rank < 0 || m->state != FA_MEMBER_PASSED || m->last_enqueued >= c->beyond_seq) continue;
        if (push_edge(g, &cap, (wedge){hub, (uint32_t)m->rank, (int32_t)ci, (uint64_t)c->beyond_seq, 0, -1})) goto oom;
      }
      for (int32_t r = 0; any && r < c->size; r++)
        if (waits_in(c, &c->members[r]) &&
            push_edge(g, &cap, (wedge){(uint32_t)c->members[r].rank, hub, (int32_t)ci, c->stuck_seq, 0, -1}))
          goto oom;
    }
    for (uint32_t i = 0; i < c->nlinks; i++) {
      const fa_link *l = &c->links[i];
      if (!l->p2p || l->joined) continue; /* a joined pair waits for no rank */
      int32_t w = fa_find_rank(a, l->pending_dir == FRZ_DIR_SEND ? l->src : l->dst);
      int32_t t = fa_find_rank(a, l->pending_dir == FRZ_DIR_SEND ? l->dst : l->src);
      if (w < 0) continue;
      /* a member ahead of everyone (the others done with the comm) waits
       * for nothing that comes: its own doing, not theirs */
      int ahead = 0;
      for (int32_t r = 0; c->nahead && r < c->size && !ahead; r++)
        ahead = c->members[r].state == FA_MEMBER_AHEAD && c->members[r].rank == w;
      if (ahead) continue;
      /* a counterpart without a dump (or of unknown rank): to the dead node,
       * where the wait ends (a root) */
      int32_t tg = l->pending_dir == FRZ_DIR_SEND ? l->dst : l->src;
      /* (a counterpart that came too late is where the wait starts: own) */
      if (push_edge(g, &cap, (wedge){(uint32_t)w, t >= 0 ? (uint32_t)t : g->nnodes - 1, (int32_t)ci, l->seq,
                                     l->counterpart_late, t >= 0 ? -1 : tg}))
        goto oom;
    }
  }
  if (g->ne) qsort(g->e, g->ne, sizeof *g->e, cmp_wedge); /* e is NULL without edges */
  for (uint32_t i = 0; i < g->ne; i++) g->first[g->e[i].from + 1]++;
  for (uint32_t n = 0; n < g->nnodes; n++) g->first[n + 1] += g->first[n];
  return g;
oom:
  fa_wgraph_free(g);
  return NULL;
}

static int root_rank(const fa_wgraph *g, uint32_t k, uint32_t via);

/* Is node v the hub of a comm that awaits one of several ranks? */
static int uncertain_at(const fa_wgraph *g, uint32_t v)
{
  return v >= g->nranks && v < g->nranks + g->ncomms && g->uncertain_hub[v - g->nranks];
}

/* Does edge e lead to where a wait starts? */
static int edge_root(const fa_wgraph *g, const wedge *e)
{
  if (e->to >= g->nranks) return 0;
  return e->own || root_rank(g, e->to, e->from >= g->nranks ? e->from : UINT32_MAX);
}

/* Is rank node k where a wait starts, reached through hub node `via` (or
 * a p2p edge, via = UINT32_MAX)?  It waits inside no NCCL call, or its own
 * work never finished (an unfinished member awaited by that hub). */
static int root_rank(const fa_wgraph *g, uint32_t k, uint32_t via)
{
  if (via != UINT32_MAX && via >= g->nranks && g->unfinished_hub[via - g->nranks]) return 1;
  return !g->waits[k];
}

int fa_wgraph_roots(const fa_analysis *a, const fa_wgraph *g, fa_ranks *out, uint32_t *dead_ends)
{
  uint32_t cap = 0, head = 0, tail = 0;
  uint32_t *queue = malloc((g->nnodes ? g->nnodes : 1) * sizeof *queue);
  uint8_t *seen = calloc(g->nnodes ? g->nnodes : 1, 1);
  *dead_ends = 0;
  if (!queue || !seen) {
    free(queue);
    free(seen);
    return -1;
  }
  /* from every rank that waits */
  for (uint32_t k = 0; k < g->nranks; k++)
    if (g->waits[k] && g->first[k + 1] > g->first[k]) {
      seen[k] = 1;
      queue[tail++] = k;
    }
  int rc = 0;
  while (head < tail && rc == 0) {
    uint32_t n = queue[head++];
    for (uint32_t i = g->first[n]; i < g->first[n + 1] && rc == 0; i++) {
      uint32_t t = g->e[i].to;
      if (t == g->nnodes - 1) { /* the dead node: a p2p counterpart without a dump */
        if (g->e[i].dead_g >= 0) rc = fa_ranks_push(out, &cap, g->e[i].dead_g);
        else (*dead_ends)++;
        continue;
      }
      if (t >= g->nranks) { /* a hub */
        if (g->first[t + 1] == g->first[t]) (*dead_ends)++; /* awaits only ranks without a dump */
        if (!seen[t]) {
          seen[t] = 1;
          queue[tail++] = t;
        }
        continue;
      }
      if (edge_root(g, &g->e[i])) {
        /* one of several ranks the awaited comm rank may be: not blamed */
        if (uncertain_at(g, n)) continue;
        rc = fa_ranks_push(out, &cap, a->ranks[t].global_rank);
        continue; /* the wait starts here: not followed further */
      }
      if (!seen[t]) {
        seen[t] = 1;
        queue[tail++] = t;
      }
    }
  }
  /* ranks without a dump that some hub awaits */
  for (uint32_t ci = 0; ci < a->ncomms && rc == 0; ci++) {
    const fa_comm *c = &a->comms[ci];
    if (!seen[a->nranks + ci] || !c->stuck) continue;
    for (int32_t r = 0; r < c->size && rc == 0; r++)
      if (c->members[r].state == FA_MEMBER_NO_DUMP && c->members[r].global_rank >= 0 &&
          fa_member_blamed(c, &c->members[r]))
        rc = fa_ranks_push(out, &cap, c->members[r].global_rank);
  }
  free(queue);
  free(seen);
  if (rc) return -1;
  fa_ranks_sort(out);
  return 0;
}

int fa_wgraph_is_root(const fa_wgraph *g, int32_t k, int32_t comm)
{
  if (k < 0) return 1; /* no dump */
  if (comm >= 0) { /* awaited there as a comm rank whose own process waits there */
    uint32_t hub = g->nranks + (uint32_t)comm;
    for (uint32_t i = g->first[hub]; i < g->first[hub + 1]; i++)
      if (g->e[i].to == (uint32_t)k && g->e[i].own) return 1;
  }
  return root_rank(g, (uint32_t)k, comm >= 0 ? g->nranks + (uint32_t)comm : UINT32_MAX);
}

/* The nodes that wait for good (stuck[]): the largest set in which every
 * rank and every hub has a successor in the set (a wait for several
 * members is stuck when any of them is), except that an uncertain hub
 * stays only while every rank it may await is in the set and none is
 * where a wait starts.  Non-empty exactly when the waits hold a cycle
 * whatever the uncertain hubs await: a deadlock. */
static uint8_t *stuck_nodes(const fa_wgraph *g)
{
  uint32_t nn = g->nnodes;
  uint8_t *in = malloc(nn ? nn : 1);
  uint32_t *need = calloc(nn ? nn : 1, sizeof *need);  /* successors in the set still */
  uint32_t *rfirst = calloc(nn + 1, sizeof *rfirst), *redge = malloc((g->ne ? g->ne : 1) * sizeof *redge);
  uint32_t *queue = malloc((nn ? nn : 1) * sizeof *queue), head = 0, tail = 0;
  if (!in || !need || !rfirst || !redge || !queue) {
    free(in);
    in = NULL;
    goto out;
  }
  for (uint32_t i = 0; i < g->ne; i++) rfirst[g->e[i].to + 1]++;
  for (uint32_t v = 0; v < nn; v++) rfirst[v + 1] += rfirst[v];
  uint32_t *fill = calloc(nn ? nn : 1, sizeof *fill);
  if (!fill) {
    free(in);
    in = NULL;
    goto out;
  }
  for (uint32_t i = 0; i < g->ne; i++) redge[rfirst[g->e[i].to] + fill[g->e[i].to]++] = i;
  free(fill);
  for (uint32_t v = 0; v < nn; v++) {
    int uncertain = uncertain_at(g, v);
    uint32_t ok = 0, root = 0;
    for (uint32_t i = g->first[v]; i < g->first[v + 1]; i++) {
      if (edge_root(g, &g->e[i])) root++;
      else ok++;
    }
    in[v] = (v >= g->nranks || g->waits[v]) && ok > 0 && !(uncertain && root);
    need[v] = ok; /* a certain one leaves the set with the last of them */
    if (!in[v]) queue[tail++] = v;
  }
  /* take out what no longer has what it needs in the set */
  while (head < tail) {
    uint32_t t = queue[head++];
    for (uint32_t i = rfirst[t]; i < rfirst[t + 1]; i++) {
      uint32_t v = g->e[redge[i]].from;
      if (!in[v] || edge_root(g, &g->e[redge[i]])) continue;
      int uncertain = uncertain_at(g, v);
      if (uncertain || --need[v] == 0) {
        in[v] = 0;
        queue[tail++] = v;
      }
    }
  }
out:
  free(need);
  free(rfirst);
  free(redge);
  free(queue);
  return in;
}

int fa_wgraph_cycle(const fa_analysis *a, const fa_wgraph *g, fa_wait_step **out, uint32_t *n)
{
  *out = NULL;
  *n = 0;
  /* depth-first over the nodes that wait for good: 0 new, 1 on the path, 2 done */
  uint8_t *color = calloc(g->nnodes ? g->nnodes : 1, 1);
  uint32_t *path = malloc((g->nnodes + 1) * sizeof *path);   /* nodes */
  uint32_t *edge = malloc((g->nnodes + 1) * sizeof *edge);   /* the edge taken out of path[i] */
  uint8_t *stuck = stuck_nodes(g);
  int rc = -1;
  if (!color || !path || !edge || !stuck) goto out;
  for (uint32_t s = 0; s < g->nranks && !*out; s++) {
    if (color[s] || !g->waits[s] || !stuck[s]) continue;
    uint32_t len = 0;
    path[len] = s;
    edge[len] = g->first[s];
    color[s] = 1;
    len = 1;
    while (len && !*out) {
      uint32_t v = path[len - 1];
      if (edge[len - 1] >= g->first[v + 1]) {
        color[v] = 2;
        len--;
        continue;
      }
      const wedge *e = &g->e[edge[len - 1]++];
      uint32_t t = e->to;
      if (edge_root(g, e) || !stuck[t]) continue;
      if (color[t] == 1) { /* back edge: the cycle is path[at..len) */
        uint32_t at = 0;
        while (path[at] != t) at++;
        uint32_t steps = 0;
        for (uint32_t i = at; i < len; i++)
          if (path[i] < g->nranks) steps++;
        fa_wait_step *cy = malloc((steps ? steps : 1) * sizeof *cy);
        if (!cy) goto out;
        uint32_t k = 0;
        for (uint32_t i = at; i < len; i++) {
          if (path[i] >= g->nranks) continue;
          /* from rank path[i] along the edge it took (edge[j] - 1 is the
           * edge out of path[j]; out of the last node, the back edge) to the
           * next rank, through a hub or not */
          const wedge *x = &g->e[edge[i] - 1];
          uint32_t j = i + 1 < len ? i + 1 : at, nx = i + 1 < len ? path[i + 1] : t;
          if (nx >= g->nranks) nx = g->e[edge[j] - 1].to;
          uint32_t via = i + 1 < len ? path[i + 1] : t;
          cy[k++] = (fa_wait_step){x->comm, a->ranks[path[i]].global_rank, x->seq,
                                   a->ranks[nx].global_rank, via < g->nranks,
                                   uncertain_at(g, via)};
        }
        *out = cy;
        *n = k;
        break;
      }
      if (color[t] == 0) {
        color[t] = 1;
        path[len] = t;
        edge[len] = g->first[t];
        len++;
      }
    }
  }
  rc = 0;
out:
  free(color);
  free(path);
  free(edge);
  free(stuck);
  return rc;
}

int fa_wgraph_stuck(const fa_analysis *a, const fa_wgraph *g, fa_ranks *out)
{
  uint8_t *stuck = stuck_nodes(g);
  uint32_t cap = 0;
  int rc = stuck ? 0 : -1;
  for (uint32_t k = 0; stuck && k < g->nranks && rc == 0; k++)
    if (stuck[k]) rc = fa_ranks_push(out, &cap, a->ranks[k].global_rank);
  free(stuck);
  fa_ranks_sort(out);
  return rc;
}

int fa_wgraph_reaching(const fa_wgraph *g, const int32_t *label_in, int32_t *label_out)
{
  uint32_t nn = g->nnodes;
  uint32_t *rfirst = calloc(nn + 1, sizeof *rfirst), *redge = malloc((g->ne ? g->ne : 1) * sizeof *redge);
  uint32_t *fill = calloc(nn ? nn : 1, sizeof *fill), *queue = malloc((nn ? nn : 1) * sizeof *queue);
  int rc = -1;
  if (!rfirst || !redge || !fill || !queue) goto out;
  for (uint32_t i = 0; i < g->ne; i++) rfirst[g->e[i].to + 1]++;
  for (uint32_t v = 0; v < nn; v++) rfirst[v + 1] += rfirst[v];
  for (uint32_t i = 0; i < g->ne; i++) redge[rfirst[g->e[i].to] + fill[g->e[i].to]++] = i;
  uint32_t head = 0, tail = 0;
  for (uint32_t v = 0; v < nn; v++) {
    label_out[v] = label_in[v];
    if (label_in[v] >= 0) queue[tail++] = v;
  }
  while (head < tail) { /* breadth first: each node takes the label of the nearest target */
    uint32_t t = queue[head++];
    for (uint32_t i = rfirst[t]; i < rfirst[t + 1]; i++) {
      uint32_t v = g->e[redge[i]].from;
      if (label_out[v] >= 0) continue;
      label_out[v] = label_out[t];
      queue[tail++] = v;
    }
  }
  rc = 0;
out:
  free(rfirst);
  free(redge);
  free(fill);
  free(queue);
  return rc;
}

uint32_t fa_wgraph_nodes(const fa_wgraph *g)
{
  return g->nnodes;
}
