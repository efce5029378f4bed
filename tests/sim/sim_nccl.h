/* sim_nccl.h — internals of the simulator's libnccl.so.2 (tests/sim), shared
 * by its files:
 *   nccl_sim.c   the exported API: argument checks, groups, launches
 *   sim_comm.c   communicator lifecycle: init, split, shrink, the handles
 *                of one process, free
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
#include "fr_profiler.h"

/* Everything below is internal to libnccl.so.2: not exported. */
#pragma GCC visibility push(hidden)

/* The NCCL version this simulator claims to be (2.28.9). */
#define SIM_NCCL_VERSION 22809

/* Channels every ring collective is cut into (each channel has its own
 * mailbox per edge, its own proxy ops and kernel-channel events); user p2p
 * and pairwise exchanges use channel 0. */
#define SIM_CHANNELS 2

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
  void *prof;                   /* its Coll / P2p profiler event (NULL: none) */
  int stall_peer, stall_channel; /* test knob: sends to this peer on this channel never move */
  int stall_kernel;             /* test knob: the kernel stops inside this op */
  cudaStream_t stream;          /* in a group: the stream it was called with */
  int algo, proto;              /* NCCL's numbers (SIM_ALGO_*, SIM_PROTO_*) of a collective */
};

/* NCCL's algorithms and protocols, numbered as NCCL does (NCCL_ALGO_*,
 * NCCL_PROTO_*: src/include/devcomm.h), with their profiler names. */
enum { SIM_ALGO_TREE, SIM_ALGO_RING, SIM_ALGO_COLLNET_DIRECT, SIM_ALGO_COLLNET_CHAIN, SIM_ALGO_NVLS,
       SIM_ALGO_NVLS_TREE, SIM_ALGO_PAT, SIM_NALGOS };
enum { SIM_PROTO_LL, SIM_PROTO_LL128, SIM_PROTO_SIMPLE, SIM_NPROTOS };
extern const char *const sim_algo_names[SIM_NALGOS];
extern const char *const sim_proto_names[SIM_NPROTOS];
/* The number of a name (case-insensitive), or -1. */
int sim_algo_lookup(const char *name);
int sim_proto_lookup(const char *name);

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
  int stall_peer, stall_channel; /* test knobs for the next ops (sim_link_stall) */
  int stall_kernel;             /* (sim_kernel_stall) */
  int hang_next;                /* test knob: the next call never returns */
  int algo, proto;              /* NCCL_ALGO / NCCL_PROTO of this process, read at init */
  _Atomic int next_algo, next_proto; /* test knob for the next collective; -1 none (atomic: a
                                        test may call one comm from two threads) */
  void *prof_ctx;               /* the profiler plugin's context; NULL: not profiled */
  int prof_mask;                /* event types it asked for */
  uint64_t seq_number[SIM_RECV + 1]; /* NCCL's per-function collective counters */
  int cuda_dev;                 /* ncclCommCuDevice: 0, or the devlist entry of ncclCommInitAll */
  int finalized;                /* ncclCommFinalize (or destroy's implicit one) ran */
  int ended;                    /* ncclCommDestroy/Abort called: the handle is invalid */
  struct ncclComm *next_free;   /* freed comms kept for reuse (sim_comm.c) */
};

/* Most handles of one communicator in one process (ncclCommInitAll). */
#define SIM_LOCAL_MAX 64

/* --- sim_comm.c --- */
/* The error the next creation fails with (sim_fail_next_init), taken:
 * ncclSuccess when none. */
ncclResult_t sim_take_init_fail(void);
/* Sets a collective's algorithm and protocol: the knob of its comm
 * (sim_comm_next_algo, then cleared), else NCCL_ALGO / NCCL_PROTO (read
 * once), else Ring and Simple. */
void sim_choose_algo(ncclComm_t comm, struct sim_op *op);
ncclResult_t sim_comm_init(ncclComm_t *out, int nranks, const unsigned char *id, int rank);
ncclResult_t sim_comm_split(ncclComm_t comm, int color, int key, ncclComm_t *newcomm);
ncclResult_t sim_comm_shrink(ncclComm_t comm, const int *excl, int nexcl, ncclComm_t *newcomm);
/* Marks the handle ended (destroyed or aborted).  When it was the last of
 * this process's handles of its communicator (NCCL's intra-process ranks,
 * e.g. those of one ncclCommInitAll), fills out with all of them (at most
 * SIM_LOCAL_MAX) for the caller to finalize and free, and returns how
 * many; otherwise returns 0 and the caller returns at once. */
int sim_comm_release(ncclComm_t comm, ncclComm_t *out);
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
  int channel, peer;
  void *step;                   /* its ProxyStep profiler event; NULL none */
  int step_state;               /* the last state recorded on it */
  int stalled;                  /* send on a stalled link: never moves */
  int layout;                   /* sim_layout_set at its start */
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
void sim_xfer_send(struct sim_xfer *x, ncclComm_t comm, enum sim_set set, int channel, int peer,
                   const void *buf, size_t bytes);
void sim_xfer_recv(struct sim_xfer *x, ncclComm_t comm, enum sim_set set, int channel, int peer,
                   void *buf, size_t bytes);
void sim_xfer_recv_reduce(struct sim_xfer *x, ncclComm_t comm, enum sim_set set, int channel,
                          int peer, void *buf, size_t bytes, ncclDataType_t dtype, ncclRedOp_t redop);
/* 64-bit FNV-1a of n bytes. */
uint64_t sim_hash(const unsigned char *p, size_t n);
/* The data layout (algorithm and protocol) of this thread's collective
 * transfers from now on, 0 for p2p: a receiver consumes only fragments of
 * its own layout, so members that disagree never complete. */
void sim_layout_set(int layout);
/* Moves all transfers until done: 0, or -1 once a comm was aborted. */
int sim_progress(struct sim_xfer *xs, int n);
/* Host-side waiting: yields, then sleeps with backoff up to 1 ms. */
void sim_backoff(unsigned *iter);
/* Wakes this member's progress loop (used by abort). */
void sim_ring_self(ncclComm_t comm);

/* --- sim_coll.c --- */
/* Stream task: runs a batch, then frees it. */
void sim_batch_run(void *batch);

/* --- sim_prof.c: the profiler plugin, called the way NCCL 2.28 does --- */
/* Loads the plugin (NCCL_PROFILER_PLUGIN) once and calls its init for the
 * comm; finalize when the comm goes. */
void sim_prof_comm_init(ncclComm_t comm);
void sim_prof_comm_fini(ncclComm_t comm);
/* API events (CollApi / P2pApi) around a call: start returns the handle. */
void *sim_prof_api_start(const struct sim_op *op, cudaStream_t stream);
void sim_prof_api_stop(ncclComm_t comm, void *handle);
/* The Coll / P2p event of an op, started at launch (op->prof). */
void sim_prof_task_start(struct sim_op *op);
/* Proxy ops (one per channel, peer and direction of an op), proxy steps
 * (one per transfer), kernel channels; all NULL-safe. */
void *sim_prof_proxy_op(const struct sim_op *op, int channel, int peer, int is_send, int nsteps);
void *sim_prof_kernel_ch(const struct sim_op *op, int channel);
void sim_prof_step_begin(struct sim_xfer *x, void *proxy_op);
void sim_prof_step_state(struct sim_xfer *x, int state);
void sim_prof_step_end(struct sim_xfer *x);
void sim_prof_stop(ncclComm_t comm, void *handle);

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
