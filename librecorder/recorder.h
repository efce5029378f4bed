/* recorder.h — internal interfaces of librecorder.so (not installed).
 *
 * Threads: the application's threads run the wrappers (hot path: no malloc,
 * no lock, no syscall besides the vDSO clock); one watchdog thread per
 * process polls completion, detects hangs, watches the trigger file and
 * writes dumps.  Everything that can fail internally makes the recorder go
 * quiet (fr_g.enabled = 0) and the wrappers pass calls straight through.
 */
#ifndef FR_RECORDER_H
#define FR_RECORDER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#include "device.h"
#include "fr_cuda.h"
#include "fr_nccl.h"
#include "frz.h"
#include "ring.h"

#define FR_HIDDEN __attribute__((visibility("hidden")))
#define FR_EXPORT __attribute__((visibility("default")))
#define FR_LIKELY(x) __builtin_expect(!!(x), 1)
#define FR_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* ---- configuration (config.c), read once from FR_* variables ---------- */
typedef struct fr_config {
  int disable;                 /* FR_DISABLE=1: everything off */
  char dump_dir[512];          /* FR_DUMP_DIR (default ./flightrec-dumps) */
  uint32_t buffer_entries;     /* FR_BUFFER_ENTRIES, power of two (default 16384) */
  uint32_t timeout_sec;        /* FR_TIMEOUT_SEC (default 60); 0 = no own timeout */
  uint32_t poll_ms;            /* FR_POLL_MS (default 100) */
  uint32_t frame_interval_sec; /* FR_FRAME_INTERVAL_SEC (default 10) */
  uint32_t max_frames;         /* FR_MAX_FRAMES (default 3) */
  int track_completion;        /* FR_TRACK_COMPLETION (default 1) */
  int gpu_timing;              /* FR_GPU_TIMING (default 1): timing events, GPU-side times */
  int dump_signal;             /* FR_DUMP_SIGNAL (default SIGUSR2; 0 = none) */
  int dump_on_exit;            /* FR_DUMP_ON_EXIT (default 0) */
  int dump_on_crash;           /* FR_DUMP_ON_CRASH (default 1): SIGSEGV/SIGABRT/SIGBUS */
  uint32_t backtrace_depth;    /* FR_BACKTRACE (default 0, at most FRZ_BACKTRACE_MAX) */
  int trigger_file;            /* FR_TRIGGER_FILE (default 1): write/watch DIR/TRIGGER */
  int trigger_pmix;            /* FR_TRIGGER_PMIX (default 1): PMIx events, when under PMIx */
  int trigger_store;           /* FR_TRIGGER_STORE: the job's TCPStore; default 0, under torchrun 2 (on, quiet without an address) */
  uint32_t store_poll_ms;      /* FR_TRIGGER_STORE_POLL_MS (default 1000) */
  int stacks;                  /* FR_STACKS (default 1): every thread's stack in each dump */
  int stack_signal;            /* FR_STACK_SIGNAL (default SIGRTMAX-2) */
  uint32_t stack_timeout_ms;   /* FR_STACK_TIMEOUT_MS (default 100): wait for the threads */
  int py_stacks;               /* FR_PY_STACKS (default 0): Python frames too */
  int quiet;                   /* FR_QUIET=1: no messages on stderr */
  int profiler_mask;           /* FR_PROFILER_MASK: NCCL profiler events asked for; 0 = plugin off */
  char job_id[FRZ_JOB_MAX];    /* FR_JOB_ID / SLURM_JOB_ID / TORCHELASTIC_RUN_ID */
  char ring_dir[512];          /* FR_RING_DIR (default /dev/shm); "" = none: private memory */
} fr_config;

FR_HIDDEN void fr_config_load(fr_config *c);

/* NCCL profiler events asked for by default: Coll 2, P2p 4, ProxyOp 8,
 * ProxyStep 16, KernelCh 64 (NCCL's ncclProfile* bits). */
#define FR_PROFILER_DEFAULT_MASK 0x5e

/* ---- logging (log.c): one line to stderr, never recursing into us ---- */
FR_HIDDEN void fr_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
FR_HIDDEN void fr_log_flush(void);

/* ---- communicators (comms.c) ----------------------------------------- */
#define FR_MAX_COMMS 4096

typedef struct fr_comm {
  uintptr_t handle;            /* ncclComm_t (0 for failed inits) */
  uint64_t comm_id, parent_id, nccl_hash;
  int32_t nranks, rank, split_color, split_key, cuda_device;
  _Atomic uint32_t flags;      /* FRZ_CF_* */
  _Atomic uint64_t next_seq;   /* next collective seq */
  _Atomic uint64_t nsplits;    /* splits made from this comm so far */
  _Atomic uint64_t nshrinks;   /* shrinks made from this comm so far */
  _Atomic uint64_t nrecords;   /* records written for this comm */
  _Atomic uint64_t *p2p_seq;   /* [peer * 2 + dir-1]: next p2p seq, nranks*2 */
} fr_comm;

/* Register a comm (init path, takes a lock).  NULL when the table is full. */
FR_HIDDEN fr_comm *fr_comm_add(uintptr_t handle, uint64_t comm_id, uint64_t parent_id,
                               int nranks, int rank, uint32_t flags);
/* Give an entry registered without a handle (an init recorded at entry,
 * before NCCL returned one) its handle, so lookups find it. */
FR_HIDDEN void fr_comm_bind(fr_comm *c, uintptr_t handle);
/* Lock-free lookup by handle (hot path); NULL if unknown or destroyed. */
FR_HIDDEN fr_comm *fr_comm_find(uintptr_t handle);
/* Find, or register a comm created behind our back (pass-through init). */
FR_HIDDEN fr_comm *fr_comm_get(uintptr_t handle);
/* Forget the handle (destroy/abort); the entry stays for dumps. */
FR_HIDDEN void fr_comm_retire(fr_comm *c, uint32_t flag);
/* Number of registered comms and the i-th one (dump path). */
FR_HIDDEN uint32_t fr_comm_count(void);
FR_HIDDEN fr_comm *fr_comm_at(uint32_t i);
FR_HIDDEN void fr_comms_reset(void);
/* Move the table into `table` (room for FR_MAX_COMMS, a shared file
 * mapping) with its count in `count`: what it holds is copied (ringfile.c). */
FR_HIDDEN void fr_comms_adopt(fr_comm *table, _Atomic uint32_t *count);

/* ---- comm creation recorded at entry (lifecycle.c) ------------------- */
/* A comm being created from unique ids: registered before NCCL runs (no
 * handle yet, FRZ_CF_PENDING), its seq 0 recorded in call. */
typedef struct init_call {
  fr_comm *c;
  fr_slot *s;
  uint64_t id;
} init_call;
/* Register comm `cid` (comm rank `rank` of `nranks`, CUDA device or -1) and
 * record `op` as its seq 0, in call. */
FR_HIDDEN init_call fr_init_begin(unsigned op, uint64_t cid, int nranks, int rank, int device,
                                  void *site);
/* NCCL returned r with *comm (comm may be NULL): bind the handle, settle
 * PENDING / INIT_FAILED, finish seq 0, bind the profiler context of `slot`. */
FR_HIDDEN void fr_init_end(init_call *ic, int slot, ncclComm_t *comm, ncclResult_t r, uint64_t t0);

/* ---- CUDA graphs (graphs.c) ----------------------------------------------- */
/* Record `id` in slot s was made on `stream` while it is being captured:
 * remember its op as the next op of the graph being captured (named by
 * cuStreamGetCaptureInfo_v2) and give the record that graph's id. */
FR_HIDDEN void fr_graph_capture(fr_slot *s, uint64_t id, cudaStream_t stream);
/* A replay's record other than its first (which holds the events): moved
 * on to its first record's state, start and completion; its state then. */
FR_HIDDEN uint8_t fr_graph_stamp_follower(fr_slot *s, uint64_t id);

/* ---- global state (recorder.c) ---------------------------------------- */
typedef struct fr_global {
  _Atomic int enabled;         /* 0: pass everything through */
  int initialized;
  fr_config cfg;
  fr_ring ring;
  uint64_t *bt;                /* FR_BACKTRACE: depth frames per ring slot, or NULL */
  uint8_t *bt_depth;           /* frames captured per ring slot */
  uintptr_t self_lo, self_hi;  /* this library's code, skipped in backtraces */
  frz_process proc;            /* identity part filled at init */
  _Atomic uint32_t late_flags; /* FRZ_PF_* learnt later, on any thread (plugin loaded) */
  _Atomic uint64_t group_ids;  /* last group id handed out */
  _Atomic uint32_t dump_request; /* pending requests: bit 1 << frz_trigger each (wrappers,
                                   signals, a crash); several may wait, none is lost */
  int wake_pipe[2];            /* signal handler -> watchdog */
  pthread_t watchdog;
  _Atomic int watchdog_started;
  _Atomic int stopping;
  pthread_mutex_t dump_lock;
  uint64_t start_realtime_ns;  /* process start, to ignore stale trigger files */
  _Atomic uint32_t next_frame;
  _Atomic uint32_t dumps_done;  /* dumps attempted */
  _Atomic uint32_t crash_dumps_done; /* crash dumps attempted, for the crash handler's wait */
  _Atomic int crash_signal;     /* the fatal signal being handled, 0 none */  /* frame number of the next dump of this process */
  _Atomic int log_ready;       /* 0: messages are held until NCCL is first used */
} fr_global;

FR_HIDDEN extern fr_global fr_g;

FR_HIDDEN uint64_t fr_now_ns(void);          /* CLOCK_MONOTONIC */
FR_HIDDEN uint64_t fr_realtime_ns(void);     /* CLOCK_REALTIME */
FR_HIDDEN uint32_t fr_gettid(void);
/* First use of NCCL in this process: start the watchdog etc.  Idempotent. */
FR_HIDDEN void fr_on_first_comm(void);
/* Ask the watchdog to dump soon (async-signal-safe). */
FR_HIDDEN void fr_request_dump(int trigger);
/* Wake the watchdog for its next poll now (one byte to a non-blocking pipe;
 * async-signal-safe); nothing when it has no pipe. */
FR_HIDDEN void fr_watchdog_wake(void);
/* Resolve the real NCCL function: pnccl<name>, then nccl<name>. */
FR_HIDDEN void *fr_resolve(const char *pname, const char *name);
FR_HIDDEN void fr_note_missing(const char *name);
/* Find this library's code (fr_g.self_lo..self_hi), so that stacks can
 * start at the caller.  Idempotent. */
FR_HIDDEN void fr_locate_self(void);

/* ---- recording (wrappers.c) ------------------------------------------- */
/* Fill a new record for a call on comm `c` and return its slot; NULL when
 * not recording.  Its flags start as IN_CALL | flags0 (and the group's).
 * The wrapper then calls NCCL and fr_rec_end(). */
FR_HIDDEN fr_slot *fr_rec_begin(fr_comm *c, unsigned op, unsigned kind, uint64_t seq,
                                uint64_t count, int dtype, int redop, int peer, int dir,
                                cudaStream_t stream, void *call_site, uint64_t *id_out,
                                uint32_t flags0);
FR_HIDDEN void fr_rec_end(fr_slot *s, uint64_t id, ncclResult_t r);
/* Set/clear record flags.  Only the thread that made a record changes its
 * flags (the watchdog only reads them), so a load and a store suffice: no
 * locked read-modify-write on the hot path. */
static inline void fr_rec_flags_set(fr_slot *s, uint32_t set, uint32_t clear) {
  uint32_t f = __atomic_load_n(&s->rec.flags, __ATOMIC_RELAXED);
  __atomic_store_n(&s->rec.flags, (f | set) & ~clear, __ATOMIC_RELEASE);
}
/* Move a record's state forward to `to` (STARTED or COMPLETED) unless it is
 * already there or beyond (FAILED is beyond both).  The watchdog, a dump and
 * the profiler plugin all advance states from different threads; a plain
 * store could take a state back (one saw STARTED, another meanwhile stored
 * COMPLETED).  Returns 1 when this call moved it. */
static inline int fr_rec_state_advance(fr_slot *s, uint8_t to) {
  uint8_t cur = __atomic_load_n(&s->rec.state, __ATOMIC_ACQUIRE);
  while (cur < to)
    if (__atomic_compare_exchange_n(&s->rec.state, &cur, to, 1, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
      return 1;
  return 0;
}
/* The next p2p seq of (comm, peer, direction); UINT64_MAX for a peer
 * outside the comm (NCCL will reject the call). */
FR_HIDDEN uint64_t fr_p2p_seq(fr_comm *c, int peer, int dir);
/* Events around a single NCCL call outside a group. */
FR_HIDDEN void fr_track_before(fr_slot *s, uint64_t id, cudaStream_t stream);
FR_HIDDEN void fr_track_after(fr_slot *s, uint64_t id, cudaStream_t stream, ncclResult_t r);

/* Lifecycle records (lifecycle.c): begin one on comm `c` (kind LIFE takes
 * the comm's next seq, kind NONE none), finish it after NCCL returned. */
FR_HIDDEN fr_slot *fr_life_begin(fr_comm *c, unsigned op, unsigned kind, void *site, uint64_t *id);
FR_HIDDEN void fr_life_done(fr_slot *s, uint64_t id, ncclResult_t r, uint64_t t0);
/* Size and rank of a comm as NCCL reports them; -1 when unknown. */
FR_HIDDEN void fr_comm_ask_size(ncclComm_t comm, int *nranks, int *rank);

/* The profiler plugin (plugin.c): an init wrapper announces the comm it
 * is about to create (returns a slot, -1 none) and reports what came of it
 * (c NULL: no comm), so that NCCL's profiler init for that comm learns our
 * comm_id.  fr_prof_setup_env points NCCL_PROFILER_PLUGIN at this library
 * (at load) unless the user named another plugin. */
FR_HIDDEN int fr_prof_pending_add(uint64_t comm_id, int nranks, int rank);
FR_HIDDEN void fr_prof_pending_done(int slot, fr_comm *c, int in_progress);
FR_HIDDEN void fr_prof_setup_env(void);

/* Per-thread group state (groups.c) */
/* How deep this thread is in ncclGroupStart/End (groups.c keeps it). */
extern FR_HIDDEN __thread int fr_group_depth_ __attribute__((tls_model("initial-exec")));
static inline int fr_group_depth(void) { return fr_group_depth_; }
FR_HIDDEN uint64_t fr_group_id(void);
FR_HIDDEN void fr_group_defer(fr_slot *s, uint64_t id, fr_comm *c, cudaStream_t stream);

/* The real NCCL functions of the hand-written wrappers (lifecycle.c):
 * fr_real_<Name>() resolves once and returns NULL if NCCL lacks it. */
#define FR_CALL(code, Name, params, args) \
  typedef ncclResult_t (*fr_##Name##_fn) params; FR_HIDDEN fr_##Name##_fn fr_real_##Name(void);
#define FR_CALL_229(code, Name, params, args) FR_CALL(code, Name, params, args)
#include "nccl_api.def"

/* Re-entrancy guard: nonzero while this thread is inside one of our wrappers. */
extern __thread int fr_in_wrapper __attribute__((tls_model("initial-exec")));

/* ---- watchdog and dumps ------------------------------------------------ */
/* Progress of tracked records: where the scan resumes, the oldest pending. */
typedef struct scan_state {
  uint64_t from;               /* lowest record id that may still be pending */
  uint64_t oldest_id;          /* oldest pending record (valid if have_oldest) */
  int have_oldest;
  uint64_t completed;          /* completions this scanner has seen, ever */
} scan_state;
/* Stamp start/completion of pending records from their events (the
 * watchdog each poll; a dump just before its snapshot). */
FR_HIDDEN void fr_scan_completion(scan_state *st, uint64_t now, int gpu);
/* Record `id` in slot s moved on to what its device events show; its state. */
FR_HIDDEN uint8_t fr_stamp_from_events(fr_slot *s, uint64_t id, uint64_t now, uint64_t scan);
FR_HIDDEN int fr_watchdog_start(void);
/* Is the calling thread the watchdog's? */
FR_HIDDEN int fr_on_watchdog_thread(void);
/* Chain a best-effort dump in front of the fatal signals' handlers (crash.c). */
FR_HIDDEN void fr_crash_handlers_install(void);
FR_HIDDEN void fr_watchdog_stop(void);
/* Write one dump now (trigger_latency_us: how long another rank's trigger
 * took to reach us, 0 none).  Returns 0 on success. */
FR_HIDDEN int fr_dump_write(int trigger, uint32_t frame, uint64_t trigger_time_ns,
                            int trigger_rank, uint32_t trigger_latency_us, const char *trigger_text);
/* Create DIR/TRIGGER unless it exists (no overwrite).  0 ok/exists. */
FR_HIDDEN int fr_trigger_file_create(const char *reason);
/* An episode began at wall-clock `realtime_ns`: a trigger file older than
 * that is answered by it (watchdog thread). */
FR_HIDDEN void fr_trigger_file_answered(uint64_t realtime_ns);
/* Has a fresh trigger file appeared?  Fills the first rank, its wall-clock
 * time (0 unknown) and the text when yes. */
FR_HIDDEN int fr_trigger_file_seen(int *rank, uint64_t *time_ns, char *text, size_t textlen);
/* Create the dump directory (mode 0700) unless it exists; -1 with errno
 * (ELOOP: it is a symbolic link, never followed). */
FR_HIDDEN int fr_ensure_dump_dir(const char *dir);

/* ---- the ring file (ringfile.c) --------------------------------------- */
/* Move the ring, the comm table and the process header into the ring file
 * FR_RING_DIR/fr-<job>-r<rank>-p<pid>@<host>.ring (first communicator);
 * on any failure one line and private memory. */
FR_HIDDEN void fr_ringfile_open(void);
FR_HIDDEN const char *fr_ringfile_path(void); /* NULL: no ring file */
FR_HIDDEN void fr_ringfile_heartbeat(uint64_t now);  /* watchdog, each poll */
FR_HIDDEN void fr_ringfile_frames(uint32_t frames);  /* dumps written so far */
FR_HIDDEN void fr_ringfile_crash(int sig);           /* async-signal-safe */
FR_HIDDEN void fr_ringfile_exit(int status);         /* exit()'s status (on_exit) */
FR_HIDDEN void fr_ringfile_close(void);              /* unlinks it after a clean exit */
/* Salvage the ring files of this job's processes that are gone into their
 * dump directories (watchdog thread, after a dump of its own). */
FR_HIDDEN void fr_ringfile_salvage_neighbours(void);

/* ---- the announcement (announce.c) ------------------------------------ */
/* Write DIR/.fr-alive-... once a comm exists (watchdog thread): 1 done
 * (written, or given up), 0 not yet (no comm). */
FR_HIDDEN int fr_announce(void);
/* Remove it (clean exit; not in a forked child). */
FR_HIDDEN void fr_announce_remove(void);

#endif /* FR_RECORDER_H */
