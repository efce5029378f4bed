/* sim_coll.c — the collective and p2p algorithms, run on a stream's worker
 * thread.
 *
 * Ring collectives go through the ring edges (rank -> rank+1) of the
 * collective mailbox set, one message per edge per step, so a member that
 * never arrives blocks its ring neighbours and, step by step, everyone.
 * AllReduce = ring reduce-scatter then ring all-gather; Broadcast and Reduce
 * are pipelined chains along the ring from/to the root; AlltoAll, Gather and
 * Scatter exchange pairwise messages on the same set.  Send/Recv use the p2p
 * set, and a send finishes only when the receiver has taken all of it.
 * Messages are self-delimiting, so members that disagree on the count still
 * complete (with meaningless data), as on hardware.
 *
 * Ring collectives run on SIM_CHANNELS channels: every chunk is cut into
 * one piece per channel, each moving on its channel's mailbox, as NCCL
 * spreads a collective over channels; chains, pairwise exchanges and p2p
 * use channel 0.  Around the data movement the op reports to the profiler
 * plugin (sim_prof.c): a kernel-channel event per channel, a proxy op per
 * (channel, peer, direction), a proxy step per transfer.
 */
#include "config.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_nccl.h"

/* malloc that never returns NULL for a valid zero-size request. */
static void *sim_alloc(size_t bytes)
{
  return malloc(bytes > 0 ? bytes : 1);
}

static int sim_mod(int a, int n)
{
  return ((a % n) + n) % n;
}

/* First element of chunk i when `count` elements are cut into n chunks. */
static size_t sim_chunk_off(size_t count, int n, int i)
{
  size_t base = count / (size_t)n, rem = count % (size_t)n;
  return base * (size_t)i + ((size_t)i < rem ? (size_t)i : rem);
}

static size_t sim_chunk_len(size_t count, int n, int i)
{
  return sim_chunk_off(count, n, i + 1) - sim_chunk_off(count, n, i);
}

/* The profiler events of one op in progress: its proxy ops per channel
 * (ring: sends to next, receives from prev; others: channel 0 only, per
 * peer) and kernel channels. */
struct sim_run {
  void *send_op[SIM_CHANNELS], *recv_op[SIM_CHANNELS];
  void *kch[SIM_CHANNELS];
};

/* A send of `bytes` at buf to peer on a channel, with its proxy step. */
static void sim_send_on(struct sim_xfer *x, const struct sim_op *op, enum sim_set set, int ch, int peer,
                        const void *buf, size_t bytes, void *proxy_op)
{
  sim_xfer_send(x, op->comm, set, ch, peer, buf, bytes);
  x->stalled = op->stall_peer == peer && op->stall_channel == ch && set == SIM_SET_COLL;
  sim_prof_step_begin(x, proxy_op);
}

/* One ring step: send chunk sc to next while receiving chunk rc from prev
 * (reduced into buf when reduce is set), each chunk cut across the
 * channels. */
static int sim_ring_step(const struct sim_op *op, const struct sim_run *run, unsigned char *buf,
                         size_t count, int sc, int rc, int reduce)
{
  ncclComm_t c = op->comm;
  int n = c->nranks, next = sim_mod(c->rank + 1, n), prev = sim_mod(c->rank - 1, n);
  size_t es = sim_dtype_size(op->dtype);
  size_t soff = sim_chunk_off(count, n, sc), slen = sim_chunk_len(count, n, sc);
  size_t roff = sim_chunk_off(count, n, rc), rlen = sim_chunk_len(count, n, rc);
  struct sim_xfer x[2 * SIM_CHANNELS];
  for (int ch = 0; ch < SIM_CHANNELS; ch++) {
    size_t so = soff + sim_chunk_off(slen, SIM_CHANNELS, ch), sl = sim_chunk_len(slen, SIM_CHANNELS, ch);
    size_t ro = roff + sim_chunk_off(rlen, SIM_CHANNELS, ch), rl = sim_chunk_len(rlen, SIM_CHANNELS, ch);
    struct sim_xfer *r = &x[2 * ch + 1];
    sim_send_on(&x[2 * ch], op, SIM_SET_COLL, ch, next, buf + so * es, sl * es, run->send_op[ch]);
    if (reduce)
      sim_xfer_recv_reduce(r, c, SIM_SET_COLL, ch, prev, buf + ro * es, rl * es, op->dtype, op->redop);
    else
      sim_xfer_recv(r, c, SIM_SET_COLL, ch, prev, buf + ro * es, rl * es);
    sim_prof_step_begin(r, run->recv_op[ch]);
  }
  return sim_progress(x, 2 * SIM_CHANNELS);
}

/* Ring reduce-scatter of buf (count elements, n chunks): afterwards chunk
 * `rank` of buf holds the reduction of every member's chunk `rank`. */
static int sim_ring_reduce_scatter(const struct sim_op *op, const struct sim_run *run,
                                   unsigned char *buf, size_t count)
{
  int n = op->comm->nranks, r = op->comm->rank;
  for (int s = 0; s < n - 1; s++)
    if (sim_ring_step(op, run, buf, count, sim_mod(r - s - 1, n), sim_mod(r - s - 2, n), 1) != 0)
      return -1;
  return 0;
}

/* Ring all-gather: chunk `rank` of buf goes to everyone. */
static int sim_ring_all_gather(const struct sim_op *op, const struct sim_run *run, unsigned char *buf,
                               size_t count)
{
  int n = op->comm->nranks, r = op->comm->rank;
  for (int s = 0; s < n - 1; s++)
    if (sim_ring_step(op, run, buf, count, sim_mod(r - s, n), sim_mod(r - s - 1, n), 0) != 0)
      return -1;
  return 0;
}

static void sim_avg_chunk(const struct sim_op *op, unsigned char *buf, size_t count, int chunk)
{
  if (op->redop != ncclAvg)
    return;
  int n = op->comm->nranks;
  sim_avg_finish(buf + sim_chunk_off(count, n, chunk) * sim_dtype_size(op->dtype),
                 sim_chunk_len(count, n, chunk), op->dtype, n);
}

/* Ring reduce-scatter, finish avg on the own chunk, ring all-gather. */
static int sim_allreduce(const struct sim_op *op, const struct sim_run *run)
{
  size_t bytes = op->count * sim_dtype_size(op->dtype);
  unsigned char *buf = op->recvbuff;
  if (op->sendbuff != op->recvbuff)
    memmove(buf, op->sendbuff, bytes);
  if (sim_ring_reduce_scatter(op, run, buf, op->count) != 0)
    return -1;
  sim_avg_chunk(op, buf, op->count, op->comm->rank);
  return sim_ring_all_gather(op, run, buf, op->count);
}

/* The ring reduce-scatter on a copy of sendbuff (which must not change). */
static int sim_reduce_scatter(const struct sim_op *op, const struct sim_run *run)
{
  int n = op->comm->nranks, r = op->comm->rank;
  size_t es = sim_dtype_size(op->dtype), total = op->count * (size_t)n;
  unsigned char *work = sim_alloc(total * es);
  if (!work)
    return -1;
  memcpy(work, op->sendbuff, total * es);
  int rc = sim_ring_reduce_scatter(op, run, work, total);
  if (rc == 0) {
    sim_avg_chunk(op, work, total, r);
    memmove(op->recvbuff, work + sim_chunk_off(total, n, r) * es, op->count * es);
  }
  free(work);
  return rc;
}

/* Own block into place, then the ring all-gather of recvbuff. */
static int sim_allgather(const struct sim_op *op, const struct sim_run *run)
{
  int n = op->comm->nranks, r = op->comm->rank;
  size_t es = sim_dtype_size(op->dtype), total = op->count * (size_t)n;
  unsigned char *buf = op->recvbuff;
  memmove(buf + (size_t)r * op->count * es, op->sendbuff, op->count * es);
  return sim_ring_all_gather(op, run, buf, total);
}

/* A chain along the ring that starts after `first`'s predecessor: position
 * 0 only sends, the last position only receives, the ones between receive
 * (reducing or copying) and forward what they have as it arrives. */
static int sim_chain(const struct sim_op *op, const struct sim_run *run, int first, unsigned char *buf,
                     size_t bytes, int reduce)
{
  ncclComm_t c = op->comm;
  int n = c->nranks, pos = sim_mod(c->rank - first, n);
  int next = sim_mod(c->rank + 1, n), prev = sim_mod(c->rank - 1, n);
  struct sim_xfer x[2];
  int nx = 0;
  if (pos > 0) {
    if (reduce)
      sim_xfer_recv_reduce(&x[nx], c, SIM_SET_COLL, 0, prev, buf, bytes, op->dtype, op->redop);
    else
      sim_xfer_recv(&x[nx], c, SIM_SET_COLL, 0, prev, buf, bytes);
    sim_prof_step_begin(&x[nx], run->recv_op[0]);
    nx++;
  }
  if (pos < n - 1) {
    sim_send_on(&x[nx], op, SIM_SET_COLL, 0, next, buf, bytes, run->send_op[0]);
    if (pos > 0)
      x[nx].source = &x[0];
    nx++;
  }
  return sim_progress(x, nx);
}

/* A copying chain that starts at the root. */
static int sim_broadcast(const struct sim_op *op, const struct sim_run *run)
{
  size_t bytes = op->count * sim_dtype_size(op->dtype);
  if (op->comm->rank == op->peer && op->sendbuff != op->recvbuff)
    memmove(op->recvbuff, op->sendbuff, bytes);
  return sim_chain(op, run, op->peer, op->recvbuff, bytes, 0);
}

/* A reducing chain that starts after the root and ends at it. */
static int sim_reduce_to_root(const struct sim_op *op, const struct sim_run *run)
{
  ncclComm_t c = op->comm;
  size_t bytes = op->count * sim_dtype_size(op->dtype);
  int root = op->peer;
  unsigned char *work = c->rank == root ? op->recvbuff : sim_alloc(bytes);
  if (!work)
    return -1;
  if (work != op->sendbuff)
    memmove(work, op->sendbuff, bytes);
  int rc = sim_chain(op, run, sim_mod(root + 1, c->nranks), work, bytes, 1);
  if (c->rank == root) {
    if (rc == 0 && op->redop == ncclAvg)
      sim_avg_finish(work, op->count, op->dtype, c->nranks);
  } else {
    free(work);
  }
  return rc;
}

/* AlltoAll, Gather, Scatter: block i of a buffer goes to / comes from
 * member i, all transfers in flight together. */
static int sim_pairwise(const struct sim_op *op)
{
  ncclComm_t c = op->comm;
  int n = c->nranks, r = c->rank, root = op->peer;
  size_t block = op->count * sim_dtype_size(op->dtype);
  const unsigned char *src = op->sendbuff;
  unsigned char *dst = op->recvbuff, *copy = NULL;
  struct sim_xfer *x = calloc(2 * (size_t)n, sizeof *x);
  if (!x)
    return -1;
  int nx = 0;
  int sends_all = op->kind == SIM_ALLTOALL || (op->kind == SIM_SCATTER && r == root);
  int recvs_all = op->kind == SIM_ALLTOALL || (op->kind == SIM_GATHER && r == root);
  if (sends_all && recvs_all && src == dst) { /* in place: send from a copy */
    copy = sim_alloc(block * (size_t)n);
    if (!copy) {
      free(x);
      return -1;
    }
    memcpy(copy, src, block * (size_t)n);
    src = copy;
  }
  for (int p = 0; p < n; p++) {
    if (p == r)
      continue;
    if (sends_all)
      sim_xfer_send(&x[nx++], c, SIM_SET_COLL, 0, p, src + (size_t)p * block, block);
    if (recvs_all)
      sim_xfer_recv(&x[nx++], c, SIM_SET_COLL, 0, p, dst + (size_t)p * block, block);
  }
  if (op->kind == SIM_GATHER && r != root)
    sim_xfer_send(&x[nx++], c, SIM_SET_COLL, 0, root, src, block);
  if (op->kind == SIM_SCATTER && r != root)
    sim_xfer_recv(&x[nx++], c, SIM_SET_COLL, 0, root, dst, block);
  /* own block */
  if (op->kind == SIM_ALLTOALL)
    memmove(dst + (size_t)r * block, src + (size_t)r * block, block);
  else if (op->kind == SIM_GATHER && r == root)
    memmove(dst + (size_t)r * block, src, block);
  else if (op->kind == SIM_SCATTER && r == root)
    memmove(dst, src + (size_t)r * block, block);
  int rc = sim_progress(x, nx);
  free(copy);
  free(x);
  return rc;
}

static int sim_is_ring(enum sim_kind k)
{
  return k == SIM_ALLREDUCE || k == SIM_ALLGATHER || k == SIM_REDUCESCATTER;
}

/* Proxy ops and kernel channels of a collective, before it moves data:
 * ring collectives on every channel (2(n-1) or n-1 steps), chains on
 * channel 0 (one step). */
static void sim_run_begin(const struct sim_op *op, struct sim_run *run)
{
  ncclComm_t c = op->comm;
  int n = c->nranks, next = sim_mod(c->rank + 1, n), prev = sim_mod(c->rank - 1, n);
  int ring = sim_is_ring(op->kind), chain = op->kind == SIM_BROADCAST || op->kind == SIM_REDUCE;
  int nsteps = op->kind == SIM_ALLREDUCE ? 2 * (n - 1) : ring ? n - 1 : 1;
  int first = op->kind == SIM_BROADCAST ? op->peer : sim_mod(op->peer + 1, n);
  int pos = sim_mod(c->rank - first, n);
  memset(run, 0, sizeof *run);
  for (int ch = 0; ch < SIM_CHANNELS; ch++) {
    run->kch[ch] = sim_prof_kernel_ch(op, ch);
    if (ring || (chain && ch == 0 && pos < n - 1))
      run->send_op[ch] = sim_prof_proxy_op(op, ch, next, 1, nsteps);
    if (ring || (chain && ch == 0 && pos > 0))
      run->recv_op[ch] = sim_prof_proxy_op(op, ch, prev, 0, nsteps);
  }
}

static void sim_run_end(const struct sim_op *op, struct sim_run *run)
{
  for (int ch = 0; ch < SIM_CHANNELS; ch++) {
    sim_prof_stop(op->comm, run->send_op[ch]);
    sim_prof_stop(op->comm, run->recv_op[ch]);
    sim_prof_stop(op->comm, run->kch[ch]);
  }
}

/* Test knob: the kernel stops inside the op.  Its proxy has posted one
 * step each way: the send waits for data the kernel never produces
 * (SendGPUWait); what arrives waits for the kernel to take it
 * (RecvGPUWait).  Blocks until the comm is aborted. */
static int sim_kernel_stall(const struct sim_op *op, const struct sim_run *run)
{
  ncclComm_t c = op->comm;
  int n = c->nranks;
  struct sim_xfer x[2 * SIM_CHANNELS];
  memset(x, 0, sizeof x);
  for (int ch = 0; ch < SIM_CHANNELS; ch++) {
    x[2 * ch].comm = x[2 * ch + 1].comm = c;
    x[2 * ch].is_send = 1;
    x[2 * ch].peer = sim_mod(c->rank + 1, n);
    x[2 * ch + 1].peer = sim_mod(c->rank - 1, n);
    sim_prof_step_begin(&x[2 * ch], run->send_op[ch]);
    sim_prof_step_begin(&x[2 * ch + 1], run->recv_op[ch]);
    sim_prof_step_state(&x[2 * ch + 1], ncclProfilerProxyStepRecvFlushWait);
    sim_prof_step_state(&x[2 * ch + 1], ncclProfilerProxyStepRecvGPUWait);
  }
  unsigned iter = 0;
  while (!atomic_load(&c->aborted))
    sim_backoff(&iter);
  return -1;
}

static int sim_collective(const struct sim_op *op, const struct sim_run *run)
{
  if (atomic_load(&op->comm->aborted))
    return -1;
  if (op->stall_kernel)
    return sim_kernel_stall(op, run);
  switch (op->kind) {
  case SIM_ALLREDUCE: return sim_allreduce(op, run);
  case SIM_BROADCAST: return sim_broadcast(op, run);
  case SIM_REDUCE: return sim_reduce_to_root(op, run);
  case SIM_ALLGATHER: return sim_allgather(op, run);
  case SIM_REDUCESCATTER: return sim_reduce_scatter(op, run);
  case SIM_ALLTOALL: case SIM_GATHER: case SIM_SCATTER: return sim_pairwise(op);
  default: return 0;
  }
}

static int sim_is_p2p(const struct sim_op *op)
{
  return op->kind == SIM_SEND || op->kind == SIM_RECV;
}

/* Every Send and Recv of the batch on one comm handle, progressing
 * together. */
static int sim_p2p_all(const struct sim_batch *b, ncclComm_t comm)
{
  int np = 0;
  for (int i = 0; i < b->nops; i++)
    np += sim_is_p2p(&b->ops[i]) && b->ops[i].comm == comm;
  if (!np)
    return 0;
  struct sim_xfer *x = calloc((size_t)np, sizeof *x);
  void **pops = calloc((size_t)np, sizeof *pops), **kch = calloc((size_t)np, sizeof *kch);
  if (!x || !pops || !kch) {
    free(x), free(pops), free(kch);
    return -1;
  }
  int nx = 0, stall_kernel = 0;
  for (int i = 0; i < b->nops; i++) {
    const struct sim_op *op = &b->ops[i];
    size_t bytes = op->count * sim_dtype_size(op->dtype);
    if (!sim_is_p2p(op) || op->comm != comm)
      continue;
    stall_kernel |= op->stall_kernel;
    kch[nx] = sim_prof_kernel_ch(op, 0);
    pops[nx] = sim_prof_proxy_op(op, 0, op->peer, op->kind == SIM_SEND, 1);
    if (op->kind == SIM_SEND) {
      sim_xfer_send(&x[nx], op->comm, SIM_SET_P2P, 0, op->peer, op->sendbuff, bytes);
      x[nx].rendezvous = 1;
      /* test knob: the link to that peer on channel 0 never moves (p2p
       * runs on channel 0 here) */
      x[nx].stalled = op->stall_peer == op->peer && op->stall_channel == 0;
    } else {
      sim_xfer_recv(&x[nx], op->comm, SIM_SET_P2P, 0, op->peer, op->recvbuff, bytes);
    }
    sim_prof_step_begin(&x[nx], pops[nx]);
    nx++;
  }
  int rc;
  if (stall_kernel) { /* test knob: the kernel stops inside the batch until the comm is aborted */
    for (int i = 0; i < nx; i++)
      sim_prof_step_state(&x[i], x[i].is_send ? ncclProfilerProxyStepSendGPUWait : ncclProfilerProxyStepRecvGPUWait);
    unsigned iter = 0;
    while (!atomic_load(&comm->aborted))
      sim_backoff(&iter);
    rc = -1;
  } else {
    rc = sim_progress(x, nx);
  }
  for (int i = 0; i < nx; i++) {
    sim_prof_stop(x[i].comm, pops[i]);
    if (rc == 0)
      sim_prof_stop(x[i].comm, kch[i]);
  }
  free(x);
  free(pops);
  free(kch);
  return rc;
}

/* The ops of one comm handle in a batch: its collectives in order, then
 * its p2p together. */
static void sim_part_run(const struct sim_batch *b, ncclComm_t comm)
{
  for (int i = 0; i < b->nops; i++) {
    const struct sim_op *op = &b->ops[i];
    if (op->comm == comm && !sim_is_p2p(op) && op->count > 0) {
      struct sim_run run;
      sim_layout_set(1 + op->algo * SIM_NPROTOS + op->proto);
      sim_run_begin(op, &run);
      if (sim_collective(op, &run) == 0)
        sim_run_end(op, &run); /* an aborted op never finished: its events stay open */
      sim_layout_set(0);
    }
  }
  sim_p2p_all(b, comm);
}

struct sim_part {
  const struct sim_batch *b;
  ncclComm_t comm;
  pthread_t thread;
  int started;
};

static void *sim_part_thread(void *arg)
{
  struct sim_part *p = arg;
  sim_part_run(p->b, p->comm);
  return NULL;
}

/* Runs a batch, then frees it; then the comms' pending counts drop
 * (CommDestroy waits for them).  The ops of different comm handles run
 * concurrently, one thread each, as NCCL runs a group's ops on several
 * communicators (or on several devices' ranks of one communicator, the
 * ncclCommInitAll way: one thread driving all of a process's devices)
 * together: one handle's op never waits behind another's in the group. */
void sim_batch_run(void *arg)
{
  struct sim_batch *b = arg;
  struct sim_part *parts = calloc((size_t)b->nops, sizeof *parts);
  int nparts = 0;
  for (int i = 0; i < b->nops; i++) {
    int first = 1;
    for (int k = 0; k < i && first; k++)
      first = b->ops[k].comm != b->ops[i].comm;
    if (!first)
      continue;
    if (!parts) {
      sim_part_run(b, b->ops[i].comm); /* no memory for threads: one after the other */
      continue;
    }
    parts[nparts].b = b;
    parts[nparts].comm = b->ops[i].comm;
    nparts++;
  }
  for (int k = 1; k < nparts; k++) {
    parts[k].started = pthread_create(&parts[k].thread, NULL, sim_part_thread, &parts[k]) == 0;
    if (parts[k].started)
      pthread_setname_np(parts[k].thread, "sim-stream");
  }
  if (nparts > 0)
    sim_part_run(b, parts[0].comm);
  for (int k = 1; k < nparts; k++) {
    if (parts[k].started)
      pthread_join(parts[k].thread, NULL);
    else
      sim_part_run(b, parts[k].comm);
  }
  free(parts);
  for (int i = 0; i < b->nops; i++) {
    if (!atomic_load(&b->ops[i].comm->aborted))
      sim_prof_stop(b->ops[i].comm, b->ops[i].prof); /* its Coll / P2p event */
    atomic_fetch_sub(&b->ops[i].comm->pending, 1);
  }
  free(b);
}
