/* sim_nccl.h — internals of the simulator's libnccl.so.2 (tests/sim), shared
 * by its files:
 *   nccl_sim.c   the exported API: argument checks, groups, launches
 *   sim_comm.c   communicator lifecycle: init, split, destroy
 *   sim_shm.c    the shared-memory segment of a communicator: rendezvous,
 *                barrier, per-edge mailboxes and the progress loop
 *   sim_coll.c   the collective and p2p algorithms run on stream workers
 *   sim_reduce.c element types and reduction operators
 */
#ifndef FR_SIM_NCCL_H
#define FR_SIM_NCCL_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "fr_nccl.h"

/* Everything below is internal to libnccl.so.2: not exported. */
#pragma GCC visibility push(hidden)

/* The NCCL version this simulator claims to be (2.28.9). */
#define SIM_NCCL_VERSION 22809

/* What an enqueued op does. */
enum sim_kind {
  SIM_ALLREDUCE, SIM_BROADCAST, SIM_REDUCE, SIM_ALLGATHER, SIM_REDUCESCATTER,
  SIM_ALLTOALL, SIM_GATHER, SIM_SCATTER, SIM_SEND, SIM_RECV
};

/* One collective or p2p call, as queued for a stream worker. */
struct sim_op {
  enum sim_kind kind;
  ncclComm_t comm;
  const void *sendbuff;
  void *recvbuff;
  size_t count;
  ncclDataType_t dtype;
  ncclRedOp_t redop;
  int peer;                     /* root of a rooted collective, or p2p peer */
};

/* Ops launched together (one call, or one outermost group). */
struct sim_batch {
  int nops;
  struct sim_op ops[];
};

struct sim_seg;                 /* shared memory header (sim_shm.c) */

struct ncclComm {
  struct sim_seg *seg;
  size_t seg_bytes;
  int rank, nranks;
  unsigned char id[NCCL_UNIQUE_ID_BYTES];
  int nsplits;                  /* CommSplit calls made on this comm */
  int nshrinks;                 /* CommShrink calls made on this comm */
  uint64_t barriers;            /* barriers this member has entered */
  atomic_int pending;           /* ops launched and not yet finished */
  atomic_int aborted;
  atomic_int async_error;       /* test knob: what ncclCommGetAsyncError reports */
  struct ncclComm *next_free;   /* freed comms kept for reuse (sim_comm.c) */
};

/* --- sim_comm.c --- */
ncclResult_t sim_comm_init(ncclComm_t *out, int nranks, const unsigned char *id, int rank);
ncclResult_t sim_comm_split(ncclComm_t comm, int color, int key, ncclComm_t *newcomm);
ncclResult_t sim_comm_shrink(ncclComm_t comm, const int *excl, int nexcl, ncclComm_t *newcomm);
/* Blocks until every op launched on the comm has finished. */
void sim_comm_drain(ncclComm_t comm);
/* Detaches and keeps the comm for reuse: a destroyed handle stays readable
 * and invalid (no segment). */
void sim_comm_free(ncclComm_t comm);

/* --- sim_shm.c --- */
/* Two independent mailbox sets: ring/pairwise traffic of collectives, and
 * the user's Send/Recv. */
enum sim_set { SIM_SET_COLL = 0, SIM_SET_P2P = 1 };

/* One directed transfer in progress: a self-delimiting message sent to, or
 * received from, one peer. */
struct sim_xfer {
  ncclComm_t comm;
  void *edge;                   /* the mailbox (struct sim_edge) */
  _Atomic uint32_t *peer_bell;  /* rung whenever this side moves */
  int is_send;
  unsigned char *buf;
  size_t bytes;                 /* expected (recv) or offered (send) */
  size_t done;                  /* bytes sent / delivered into buf */
  int finished;
  /* send only */
  int rendezvous;               /* done only once the receiver took all */
  int posted_all;
  uint64_t end_head;
  const struct sim_xfer *source; /* forward only what this recv delivered */
  /* recv only */
  int reduce;                   /* 0: copy; 1: reduce into buf */
  ncclDataType_t dtype;
  ncclRedOp_t redop;
};

ncclResult_t sim_seg_attach(ncclComm_t comm);
void sim_seg_detach(ncclComm_t comm);
/* Publishes (color, key), waits for every member, reads all of them. */
void sim_split_exchange(ncclComm_t comm, int color, int key, int *colors, int *keys);
void sim_xfer_send(struct sim_xfer *x, ncclComm_t comm, enum sim_set set, int peer,
                   const void *buf, size_t bytes);
void sim_xfer_recv(struct sim_xfer *x, ncclComm_t comm, enum sim_set set, int peer,
                   void *buf, size_t bytes);
void sim_xfer_recv_reduce(struct sim_xfer *x, ncclComm_t comm, enum sim_set set, int peer,
                          void *buf, size_t bytes, ncclDataType_t dtype, ncclRedOp_t redop);
/* Moves all transfers until done: 0, or -1 once a comm was aborted. */
int sim_progress(struct sim_xfer *xs, int n);
/* Host-side waiting: yields, then sleeps with backoff up to 1 ms. */
void sim_backoff(unsigned *iter);
/* Wakes this member's progress loop (used by abort). */
void sim_ring_self(ncclComm_t comm);

/* --- sim_coll.c --- */
/* Stream task: runs a batch, then frees it. */
void sim_batch_run(void *batch);

/* --- sim_reduce.c --- */
/* Bytes per element, 0 for an unknown type. */
size_t sim_dtype_size(ncclDataType_t dtype);
/* acc[i] = acc[i] (op) in[i] for n elements; avg sums (see sim_avg_finish). */
void sim_reduce(void *acc, const void *in, size_t n, ncclDataType_t dtype, ncclRedOp_t op);
/* Divides n elements by nranks (the final step of ncclAvg). */
void sim_avg_finish(void *buf, size_t n, ncclDataType_t dtype, int nranks);

/* --- nccl_sim.c --- */
/* Records the calling thread's last error message (ncclGetLastError). */
ncclResult_t sim_error(ncclResult_t rc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#pragma GCC visibility pop

#endif /* FR_SIM_NCCL_H */
