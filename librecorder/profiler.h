/* profiler.h — internals of librecorder's NCCL profiler plugin (not
 * installed): the per-communicator contexts NCCL's init creates, the event
 * objects whose addresses are the handles NCCL holds, and the progress
 * table the dumps carry.
 *
 *   plugin.c      ncclProfiler_v5 / _v4, init / finalize, binding a context
 *                 to the comm the interposer saw being created, the
 *                 NCCL_PROFILER_PLUGIN set-up at load
 *   plugin_ops.c  Coll / P2p / CollApi / P2pApi events: matching them to
 *                 the interposer's records, or making the records when NCCL
 *                 is linked statically (no interposed calls)
 *   progress.c    ProxyOp / ProxyStep / KernelCh events: the per (comm,
 *                 channel, peer, direction) progress table; its snapshot
 *
 * Memory: a context and its tables are allocated once, when NCCL creates
 * the communicator; events never allocate.  Handles are tagged pointers
 * (low 4 bits: the event kind) to objects that are never freed, so a late
 * event of an old handle updates a counter at worst, never touches freed
 * memory.  Events run on NCCL's threads (the application's for Coll/P2p,
 * the proxy thread for proxy and kernel-channel events); shared counters
 * are atomics, nothing blocks.
 */
#ifndef FR_PROFILER_INTERNAL_H
#define FR_PROFILER_INTERNAL_H

#include "fr_profiler.h"
#include "recorder.h"

#define FR_PROF_MAX_CTX 1024  /* profiled communicators per process */
#define FR_PROF_CHANNELS 64   /* NCCL's MAXCHANNELS */
#define FR_PROF_LINKS 256     /* (channel, peer, direction) entries per comm */
#define FR_PROF_STEPS 8       /* proxy steps in flight per connection (NCCL_STEPS) */
#define FR_PROF_OPS 1024      /* Coll/P2p/API events alive at once, per process */

/* Handle tags (low bits of a handle; objects are 16-byte aligned). */
enum { FR_TAG_OP = 1, FR_TAG_API = 2, FR_TAG_PROXYOP = 3, FR_TAG_STEP = 4, FR_TAG_KCH = 5, FR_TAG_MASK = 15 };

_Static_assert(FR_PROFILER_DEFAULT_MASK == (ncclProfileColl | ncclProfileP2p | ncclProfileProxyOp |
                                           ncclProfileProxyStep | ncclProfileKernelCh),
               "FR_PROFILER_DEFAULT_MASK: Coll, P2p, ProxyOp, ProxyStep, KernelCh");

typedef struct fr_prof_link fr_prof_link;
typedef struct fr_prof_op fr_prof_op;

/* One proxy step in flight on a link: the handle of a ProxyStep event. */
typedef struct __attribute__((aligned(16))) fr_prof_step {
  fr_prof_link *link;
  _Atomic uint32_t state;      /* NCCL state; 0 posted, none yet */
} fr_prof_step;

/* Progress of one (channel, peer, direction) of a comm: the handle of its
 * ProxyOp events. */
struct __attribute__((aligned(16))) fr_prof_link {
  _Atomic uint32_t key;        /* 0 empty, else link_key() */
  _Atomic uint32_t state;      /* last state recorded on any step */
  _Atomic uint64_t steps_posted, steps_done;
  _Atomic uint64_t t_last_ns;
  _Atomic uint64_t seq;        /* seq of the op of the latest ProxyOp; UINT64_MAX none */
  _Atomic uint32_t ops_posted, ops_done;
  _Atomic uint8_t kind;        /* FRZ_KIND_COLL / P2P of that op */
  fr_prof_step steps[FR_PROF_STEPS];
};

/* Kernel progress of one channel of a comm. */
typedef struct fr_prof_kstat {
  _Atomic int64_t started_seq, stopped_seq;
  _Atomic uint64_t t_last_ns;
  _Atomic uint32_t started, stopped;
} fr_prof_kstat;

/* One communicator as NCCL's profiler sees it (the plugin context). */
typedef struct fr_prof_ctx {
  uint64_t nccl_hash;          /* NCCL's comm hash (init's commId) */
  uint64_t comm_id;            /* ours: the interposer's, or derived from nccl_hash */
  fr_comm *_Atomic comm;       /* our registry entry; bound after init returns */
  int32_t nranks, rank;
  int mask;                    /* activation mask given to NCCL */
  int static_mode;             /* no interposed init: records come from the plugin */
  pthread_mutex_t match_lock;  /* record matching (application threads) */
  uint64_t coll_cursor;        /* next record id to look at for a Coll event */
  uint64_t p2p_cursor;         /* oldest record id a P2p event may still match */
  _Atomic uint32_t links_used, links_dropped;
  fr_prof_kstat kernel[FR_PROF_CHANNELS];
  fr_prof_link links[FR_PROF_LINKS];
} fr_prof_ctx;

/* One kernel channel of an op: the handle of a KernelCh event. */
typedef struct __attribute__((aligned(16))) fr_prof_kch {
  fr_prof_op *op;
  uint32_t channel;
} fr_prof_kch;

/* A Coll/P2p (or API) event: the record it describes. */
struct __attribute__((aligned(16))) fr_prof_op {
  fr_prof_ctx *ctx;
  uint64_t record_id;          /* UINT64_MAX: no record */
  uint64_t seq;                /* record's seq; UINT64_MAX unknown */
  uint8_t kind;                /* FRZ_KIND_COLL / P2P */
  uint8_t plugin_record;       /* the plugin made the record: it tracks its state */
  _Atomic uint32_t kch_started, kch_stopped;
  fr_prof_kch kch[FR_PROF_CHANNELS];
};

/* plugin.c */
FR_HIDDEN int fr_prof_ctx_count(void);
FR_HIDDEN fr_prof_ctx *fr_prof_ctx_at(int i);
/* A new op object from the process-wide pool (reused round robin). */
FR_HIDDEN fr_prof_op *fr_prof_op_claim(fr_prof_ctx *ctx);

/* plugin_ops.c: Coll, P2p, CollApi, P2pApi events (descriptor fields as
 * NCCL passes them, version-neutral). */
typedef struct fr_prof_task {
  uint64_t type;
  const char *func, *datatype, *algo, *proto;
  size_t count;
  int root_or_peer;            /* collective root, p2p peer */
  void *stream;
  uint64_t nccl_seq;           /* UINT64_MAX none */
  uint8_t nchannels;
} fr_prof_task;
FR_HIDDEN void *fr_prof_task_start(fr_prof_ctx *ctx, const fr_prof_task *t);
FR_HIDDEN void fr_prof_task_stop(fr_prof_op *op, int api);
/* The plugin-made LIFE record of a comm NCCL created behind our back. */
FR_HIDDEN void fr_prof_init_record(fr_prof_ctx *ctx);
/* Record `op`'s kernel progress: a channel started (1) or stopped (0). */
FR_HIDDEN void fr_prof_record_kernel(fr_prof_op *op, int started);

/* progress.c */
FR_HIDDEN void *fr_prof_proxy_op_start(fr_prof_ctx *ctx, void *parent, pid_t pid, int channel,
                                       int peer, int is_send);
FR_HIDDEN void *fr_prof_step_start(void *proxy_op);
FR_HIDDEN void *fr_prof_kch_start(void *parent, int channel);
FR_HIDDEN void fr_prof_stop(void *handle);
FR_HIDDEN void fr_prof_state(void *handle, int state);
/* Copy the progress of every context into out (room for `max`); returns
 * how many.  Kernel channels likewise. */
FR_HIDDEN uint64_t fr_prof_snapshot_proxy(frz_proxy *out, uint64_t max);
FR_HIDDEN uint32_t fr_prof_snapshot_kernel(frz_kernel_ch *out, uint32_t max);

#endif /* FR_PROFILER_INTERNAL_H */
