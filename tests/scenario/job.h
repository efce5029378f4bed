/* job.h — internals of fr-scenario-job shared by job.c (the loop, faults,
 * collectives, the watchdog's waits), lifecycle.c (the communicators:
 * creation, destroy, finalize, abort, teardown, async errors) and sites.c
 * (every NCCL call, made from the named call sites). */
#ifndef FR_SCENARIO_JOB_H
#define FR_SCENARIO_JOB_H

#include "fr_cuda.h"
#include "scenario.h"

/* A comm of the scenario as this rank holds it. */
struct job_comm {
  int created;                  /* its creation ran (before the loop, create, first op, or destroy/abort first) */
  int order;                    /* when its handles were made: 1, 2 ... in this rank's order; 0 none */
  int ndev;                     /* handles: 1, or an initall comm's devices */
  ncclComm_t *h;                /* per device; NULL: not held (not a member, destroyed, aborted) */
};

/* Buffers of one body op on one device, grown on demand (never freed
 * while a stream may still use them: replaced ones go to the graveyard). */
struct job_buf {
  CUdeviceptr send, recv;
  size_t send_cap, recv_cap;
};

struct job {
  struct scenario sc;
  int grank;
  int verbose;
  int nstreams;                 /* sc.max_devices */
  CUstream *streams;            /* [0] the main stream, [d] device d's (initall comms) */
  struct job_comm *comms;       /* per scenario comm */
  struct job_buf *bufs;         /* per (body op, device): [op * nstreams + dev] */
  CUdeviceptr *grave;
  int ngrave;
  int ncreated;                 /* comms this rank has made handles of */
  int group_depth;              /* ncclGroupStart calls of `group begin` not yet ended */
  /* The watchdog of this rank (NULL: it waits for its streams for good),
   * and the launches since its last completed wait, oldest first: */
  const struct sc_watchdog *wd;
  struct job_launch *launches;  /* a ring of JOB_LAUNCHES */
  int lhead, nlaunch;
  int abandon;                  /* then=stay fired: the rest of this step is skipped */
  CUstream capture;             /* the side stream of `capture` faults (made at first use) */
  CUstream cur_stream;          /* while an op is captured: its stream */
  struct job_graph *graphs;     /* per graph=NAME of the body (graph.c), made at first use */
};

/* At most this many launches not known complete are named by the
 * watchdog; later ones are not tracked until earlier ones complete. */
#define JOB_LAUNCHES 256

/* A body op that put work on the streams (a collective or p2p outside a
 * user group, or the `group end` that launched one), and an event after
 * it on every stream. */
struct job_launch {
  int idx, step;
  CUevent *ev;                  /* nstreams events, made at first use of the slot */
};

/* The effective call of one op on one rank and device, after faults. */
struct job_call {
  enum sc_kind kind;
  int comm;
  long count, root, peer;
  ncclDataType_t dtype;
  ncclRedOp_t redop;
};

/* One NCCL call, as sites.c makes it. */
enum job_nc {
  JN_COLL,                      /* a collective or p2p call of kind `kind` */
  JN_GROUP_START, JN_GROUP_END,
  JN_INIT_RANK, JN_SPLIT, JN_SHRINK, JN_INIT_ALL,
  JN_DESTROY, JN_FINALIZE, JN_ABORT, JN_ASYNC_ERROR
};

struct job_ncall {
  enum job_nc what;
  enum sc_kind kind;
  ncclComm_t comm;              /* the comm called, or the parent of a split/shrink */
  const void *send;
  void *recv;
  size_t count;
  ncclDataType_t dtype;
  ncclRedOp_t redop;
  int root, peer;
  cudaStream_t stream;
  ncclComm_t *out;              /* creation: the new handle(s) */
  int nranks, rank;             /* JN_INIT_RANK; JN_INIT_ALL: nranks devices */
  ncclUniqueId id;
  int color, key;               /* JN_SPLIT */
  int *excl, nexcl;             /* JN_SHRINK */
  ncclResult_t *async;          /* JN_ASYNC_ERROR: ncclCommGetAsyncError's answer */
};

/* sites.c: makes the call from job_site_SITE (1..SC_MAX_SITES), or from
 * job_ncall itself for site 0. */
ncclResult_t job_ncall(int site, const struct job_ncall *c);

/* job.c */
void job_fatal(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3), noreturn));
void job_nccl_check(const struct job *j, ncclResult_t rc, const char *what, int line);

long job_comm_rank(const struct job *j, int comm, int dev);
/* Evaluates expr with `rank` as this rank's comm rank in comm and `peer`
 * (-1: undefined); exits 2 on a runtime error. */
long job_eval_as(const struct job *j, const char *expr, const char *what, int comm, long rank, long peer,
                 int line);
void job_buffers(struct job *j, int idx, int dev, size_t send_bytes, size_t recv_bytes);
/* Whether fault f applies to the whole op (dev < 0) or to device dev's call. */
int job_fault_for(const struct sc_fault *f, int dev);

/* model.c: the faults of the fault model that change how a call is made */
/* The stream device dev's call on comm goes to: a captured op's side
 * stream, else its device's stream. */
CUstream job_stream(const struct job *j, int comm, int dev);
/* Before a collective or p2p call: no-return, algo=, proto= (the op's own
 * and its faults') as simulator knobs of its handle. */
void job_model_knobs(const struct job *j, const struct sc_op *op, int dev, const struct sc_fault *const *fs, int nf);
/* capture (the call goes to a capturing side stream) and no-group-end (a
 * group that is never ended is opened first); returns what was done, for
 * job_call_end (which ends the capture, never launching the graph). */
unsigned job_call_begin(struct job *j, const struct sc_op *op, int dev, const struct sc_fault *const *fs, int nf);
void job_call_end(struct job *j, const struct sc_op *op, unsigned how);
/* An alltoallv: one group of sends and receives with the counts of
 * op->counts (or a splits= fault's), zero counts not posted. */
void job_alltoallv(struct job *j, int idx, int dev, const struct sc_op *op, const struct sc_fault *const *fs, int nf);

/* graph.c: ops of graph=NAME.  Before the call: a capture begun (or going
 * on) on the graph's stream, or, once captured, JOB_HOW_NO_CALL (and the
 * first op launches it); after it, job_graph_end ends the capture at the
 * graph's last op, instantiates and launches it, or launches it. */
#define JOB_HOW_NO_CALL 16
unsigned job_graph_begin(struct job *j, const struct sc_op *op);
void job_graph_end(struct job *j, const struct sc_op *op, unsigned how);
/* The executables and capture streams, at the end of the run. */
void job_graphs_free(struct job *j);

/* lifecycle.c */
/* Creates every comm that is not late, in file order. */
void job_comms_init(struct job *j);
/* Runs the creation of comm i on this rank if it has not run (create, or
 * the first op on a late comm); site: the op's call site. */
void job_comm_create(struct job *j, int i, int site);
/* Whether this rank takes part in op's communication at all: a member of
 * its comm (for a split's create: of the parent, which calls the split
 * even without a color). */
int job_comm_takes_part(const struct job *j, const struct sc_op *op);
/* Created and no handle left: destroyed or aborted (later ops skip). */
int job_comm_gone(const struct job *j, int i);
/* Destroy, finalize or abort of device d's handle of comm i (a comm not
 * created yet is just marked gone by destroy and abort). */
void job_comm_end(struct job *j, int i, int d, enum sc_kind kind, int site, int line);
/* Destroy, finalize or abort of every handle of comm i this rank holds
 * (an initall comm's inside one group). */
void job_comm_end_all(struct job *j, int i, enum sc_kind kind, int line);
/* Destroy or abort of every comm this rank holds, in reverse creation
 * order (the watchdog's reaction). */
void job_comms_end_held(struct job *j, enum sc_kind kind, int line);
/* ncclCommGetAsyncError on every handle this rank holds: the first error
 * (ncclInProgress is none), and its comm in *comm; ncclSuccess if none. */
ncclResult_t job_comms_async_error(struct job *j, int *comm);
/* Destroys every comm still held, in reverse file order. */
void job_comms_teardown(struct job *j);

#endif /* FR_SCENARIO_JOB_H */
