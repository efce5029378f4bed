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
 */
#include "config.h"

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

/* One ring step: send chunk sc to next while receiving chunk rc from prev
 * (reduced into buf when reduce is set). */
static int sim_ring_step(const struct sim_op *op, unsigned char *buf, size_t count,
                         int sc, int rc, int reduce)
{
  ncclComm_t c = op->comm;
  int n = c->nranks, next = sim_mod(c->rank + 1, n), prev = sim_mod(c->rank - 1, n);
  size_t es = sim_dtype_size(op->dtype);
  struct sim_xfer x[2];
  sim_xfer_send(&x[0], c, SIM_SET_COLL, next, buf + sim_chunk_off(count, n, sc) * es,
                sim_chunk_len(count, n, sc) * es);
  if (reduce)
    sim_xfer_recv_reduce(&x[1], c, SIM_SET_COLL, prev, buf + sim_chunk_off(count, n, rc) * es,
                         sim_chunk_len(count, n, rc) * es, op->dtype, op->redop);
  else
    sim_xfer_recv(&x[1], c, SIM_SET_COLL, prev, buf + sim_chunk_off(count, n, rc) * es,
                  sim_chunk_len(count, n, rc) * es);
  return sim_progress(x, 2);
}

/* Ring reduce-scatter of buf (count elements, n chunks): afterwards chunk
 * `rank` of buf holds the reduction of every member's chunk `rank`. */
static int sim_ring_reduce_scatter(const struct sim_op *op, unsigned char *buf, size_t count)
{
  int n = op->comm->nranks, r = op->comm->rank;
  for (int s = 0; s < n - 1; s++)
    if (sim_ring_step(op, buf, count, sim_mod(r - s - 1, n), sim_mod(r - s - 2, n), 1) != 0)
      return -1;
  return 0;
}

/* Ring all-gather: chunk `rank` of buf goes to everyone. */
static int sim_ring_all_gather(const struct sim_op *op, unsigned char *buf, size_t count)
{
  int n = op->comm->nranks, r = op->comm->rank;
  for (int s = 0; s < n - 1; s++)
    if (sim_ring_step(op, buf, count, sim_mod(r - s, n), sim_mod(r - s - 1, n), 0) != 0)
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
static int sim_allreduce(const struct sim_op *op)
{
  size_t bytes = op->count * sim_dtype_size(op->dtype);
  unsigned char *buf = op->recvbuff;
  if (op->sendbuff != op->recvbuff)
    memmove(buf, op->sendbuff, bytes);
  if (sim_ring_reduce_scatter(op, buf, op->count) != 0)
    return -1;
  sim_avg_chunk(op, buf, op->count, op->comm->rank);
  return sim_ring_all_gather(op, buf, op->count);
}

/* The ring reduce-scatter on a copy of sendbuff (which must not change). */
static int sim_reduce_scatter(const struct sim_op *op)
{
  int n = op->comm->nranks, r = op->comm->rank;
  size_t es = sim_dtype_size(op->dtype), total = op->count * (size_t)n;
  unsigned char *work = sim_alloc(total * es);
  if (!work)
    return -1;
  memcpy(work, op->sendbuff, total * es);
  int rc = sim_ring_reduce_scatter(op, work, total);
  if (rc == 0) {
    sim_avg_chunk(op, work, total, r);
    memmove(op->recvbuff, work + sim_chunk_off(total, n, r) * es, op->count * es);
  }
  free(work);
  return rc;
}

/* Own block into place, then the ring all-gather of recvbuff. */
static int sim_allgather(const struct sim_op *op)
{
  int n = op->comm->nranks, r = op->comm->rank;
  size_t es = sim_dtype_size(op->dtype), total = op->count * (size_t)n;
  unsigned char *buf = op->recvbuff;
  memmove(buf + (size_t)r * op->count * es, op->sendbuff, op->count * es);
  return sim_ring_all_gather(op, buf, total);
}

/* A chain along the ring that starts after `first`'s predecessor: position
 * 0 only sends, the last position only receives, the ones between receive
 * (reducing or copying) and forward what they have as it arrives. */
static int sim_chain(const struct sim_op *op, int first, unsigned char *buf, size_t bytes, int reduce)
{
  ncclComm_t c = op->comm;
  int n = c->nranks, pos = sim_mod(c->rank - first, n);
  int next = sim_mod(c->rank + 1, n), prev = sim_mod(c->rank - 1, n);
  struct sim_xfer x[2];
  int nx = 0;
  if (pos > 0) {
    if (reduce)
      sim_xfer_recv_reduce(&x[nx], c, SIM_SET_COLL, prev, buf, bytes, op->dtype, op->redop);
    else
      sim_xfer_recv(&x[nx], c, SIM_SET_COLL, prev, buf, bytes);
    nx++;
  }
  if (pos < n - 1) {
    sim_xfer_send(&x[nx], c, SIM_SET_COLL, next, buf, bytes);
    if (pos > 0)
      x[nx].source = &x[0];
    nx++;
  }
  return sim_progress(x, nx);
}

/* A copying chain that starts at the root. */
static int sim_broadcast(const struct sim_op *op)
{
  size_t bytes = op->count * sim_dtype_size(op->dtype);
  if (op->comm->rank == op->peer && op->sendbuff != op->recvbuff)
    memmove(op->recvbuff, op->sendbuff, bytes);
  return sim_chain(op, op->peer, op->recvbuff, bytes, 0);
}

/* A reducing chain that starts after the root and ends at it. */
static int sim_reduce_to_root(const struct sim_op *op)
{
  ncclComm_t c = op->comm;
  size_t bytes = op->count * sim_dtype_size(op->dtype);
  int root = op->peer;
  unsigned char *work = c->rank == root ? op->recvbuff : sim_alloc(bytes);
  if (!work)
    return -1;
  if (work != op->sendbuff)
    memmove(work, op->sendbuff, bytes);
  int rc = sim_chain(op, sim_mod(root + 1, c->nranks), work, bytes, 1);
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
      sim_xfer_send(&x[nx++], c, SIM_SET_COLL, p, src + (size_t)p * block, block);
    if (recvs_all)
      sim_xfer_recv(&x[nx++], c, SIM_SET_COLL, p, dst + (size_t)p * block, block);
  }
  if (op->kind == SIM_GATHER && r != root)
    sim_xfer_send(&x[nx++], c, SIM_SET_COLL, root, src, block);
  if (op->kind == SIM_SCATTER && r != root)
    sim_xfer_recv(&x[nx++], c, SIM_SET_COLL, root, dst, block);
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

static int sim_collective(const struct sim_op *op)
{
  if (atomic_load(&op->comm->aborted))
    return -1;
  switch (op->kind) {
  case SIM_ALLREDUCE: return sim_allreduce(op);
  case SIM_BROADCAST: return sim_broadcast(op);
  case SIM_REDUCE: return sim_reduce_to_root(op);
  case SIM_ALLGATHER: return sim_allgather(op);
  case SIM_REDUCESCATTER: return sim_reduce_scatter(op);
  case SIM_ALLTOALL: case SIM_GATHER: case SIM_SCATTER: return sim_pairwise(op);
  default: return 0;
  }
}

/* Every Send and Recv of the batch, progressing together. */
static int sim_p2p_all(const struct sim_batch *b)
{
  int np = 0;
  for (int i = 0; i < b->nops; i++)
    np += b->ops[i].kind == SIM_SEND || b->ops[i].kind == SIM_RECV;
  if (!np)
    return 0;
  struct sim_xfer *x = calloc((size_t)np, sizeof *x);
  if (!x)
    return -1;
  int nx = 0;
  for (int i = 0; i < b->nops; i++) {
    const struct sim_op *op = &b->ops[i];
    size_t bytes = op->count * sim_dtype_size(op->dtype);
    if (op->kind == SIM_SEND) {
      sim_xfer_send(&x[nx], op->comm, SIM_SET_P2P, op->peer, op->sendbuff, bytes);
      x[nx++].rendezvous = 1;
    } else if (op->kind == SIM_RECV) {
      sim_xfer_recv(&x[nx++], op->comm, SIM_SET_P2P, op->peer, op->recvbuff, bytes);
    }
  }
  int rc = sim_progress(x, nx);
  free(x);
  return rc;
}

/* Collectives in order, then all p2p together; then the comms' pending
 * counts drop (CommDestroy waits for them). */
void sim_batch_run(void *arg)
{
  struct sim_batch *b = arg;
  for (int i = 0; i < b->nops; i++) {
    const struct sim_op *op = &b->ops[i];
    if (op->kind != SIM_SEND && op->kind != SIM_RECV && op->count > 0)
      sim_collective(op);
  }
  sim_p2p_all(b);
  for (int i = 0; i < b->nops; i++)
    atomic_fetch_sub(&b->ops[i].comm->pending, 1);
  free(b);
}
