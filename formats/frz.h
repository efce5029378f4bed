/* frz.h — the flightrec dump format (.frz): in-memory shapes and the codec.
 *
 * One dump file holds one process's snapshot at one frame: a process header,
 * its communicators and its retained records.  formats/frz.md is the
 * byte-level contract; this header is its C view.  Every part of flightrec
 * reads and writes dumps only through these functions.
 *
 * Units: all times are nanoseconds (CLOCK_MONOTONIC unless the name says
 * realtime); counts are elements, not bytes; ranks are 0-based.
 * Errors: functions return an frz_status (FRZ_OK == 0) and, on failure, fill
 * the caller's frz_error with a message that names the file (when known) and
 * the byte offset of the problem.  Nothing is printed.
 */
#ifndef FRZ_H
#define FRZ_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Format version written by this codec.  Readers accept every minor of a
 * major they know and reject a newer major. */
#define FRZ_VERSION_MAJOR 1
#define FRZ_VERSION_MINOR 5

/* ---- op codes (stable, on disk), generated from nccl_api.def ------------ */
typedef enum {
  FRZ_OP_NONE = 0,
#define FR_COLL(code, Name, rec, params, args, c, d, o, r) FRZ_OP_##Name = code,
#define FR_P2P(code, Name, params, args, dir) FRZ_OP_##Name = code,
#define FR_CALL(code, Name, params, args) FRZ_OP_##Name = code,
#define FR_CALL_229(code, Name, params, args) FRZ_OP_##Name = code,
#include "nccl_api.def"
  FRZ_OP_MAX_ = 256
} frz_op;

/* Op kinds: how a record's seq is to be read. */
typedef enum {
  FRZ_KIND_NONE = 0,   /* unsequenced local event (abort, revoke, async error) */
  FRZ_KIND_COLL = 1,   /* seq is the comm's collective seq */
  FRZ_KIND_P2P = 2,    /* seq is the (comm, peer, direction) p2p seq */
  FRZ_KIND_GROUP = 3,  /* GroupStart/GroupEnd: seq unused (0) */
  FRZ_KIND_LIFE = 4    /* comm lifecycle; seq is a collective seq */
} frz_kind;

/* p2p direction */
enum { FRZ_DIR_NONE = 0, FRZ_DIR_SEND = 1, FRZ_DIR_RECV = 2 };

/* Record state, in order of progress. */
typedef enum {
  FRZ_STATE_ENQUEUED = 0,  /* the call returned (or is in progress); no sign of start */
  FRZ_STATE_STARTED = 1,   /* the stream reached the op (start event passed) */
  FRZ_STATE_COMPLETED = 2, /* the op finished on the device (end event passed) */
  FRZ_STATE_FAILED = 3     /* the NCCL call returned an error */
} frz_state;

/* Record flags */
enum {
  FRZ_RF_IN_GROUP = 1u << 0,       /* issued between GroupStart and GroupEnd */
  FRZ_RF_GRAPH_CAPTURED = 1u << 1, /* stream was capturing: no events recorded */
  FRZ_RF_PROFILER_SEEN = 1u << 2,  /* NCCL's profiler plugin reported this op */
  FRZ_RF_NO_TRACKING = 1u << 3,    /* completion not tracked (no libcuda, off, or event failure) */
  FRZ_RF_IN_CALL = 1u << 4,        /* the NCCL call had not returned at dump time */
  FRZ_RF_SIMULATED = 1u << 5,      /* issued in a group ended by ncclGroupSimulateEnd: never ran */
  FRZ_RF_GROUP_OPEN = 1u << 6,     /* issued in a group whose ncclGroupEnd had not been called at
                                      dump time: never launched (since 1.3) */
  FRZ_RF_ABORTED = 1u << 7,        /* in flight when this process called ncclCommAbort on its comm:
                                      it never completed, whatever its events said after (since 1.3) */
  FRZ_RF_GPU_TIMED = 1u << 8,      /* start and completion are when the GPU passed the op's CUDA
                                      events (timing events), not when a poll saw it (since 1.3) */
  FRZ_RF_GRAPH_REPLAY = 1u << 9    /* one op of one launch of a CUDA graph executable: no NCCL call
                                      was made; graph_id, replay and graph_op say which (since 1.5) */
};

/* Trigger reasons (process header) */
typedef enum {
  FRZ_TRIGGER_NONE = 0,
  FRZ_TRIGGER_TIMEOUT = 1,      /* this rank's watchdog saw an op older than FR_TIMEOUT_SEC */
  FRZ_TRIGGER_FILE = 2,         /* the shared trigger file appeared (another rank, or fr-dump --trigger) */
  FRZ_TRIGGER_SIGNAL = 3,       /* FR_DUMP_SIGNAL */
  FRZ_TRIGGER_ABORT = 4,        /* ncclCommAbort */
  FRZ_TRIGGER_ASYNC_ERROR = 5,  /* ncclCommGetAsyncError reported an error */
  FRZ_TRIGGER_EXIT = 6,         /* process exit (FR_DUMP_ON_EXIT=1) */
  FRZ_TRIGGER_FRAME = 7,        /* a later frame after an earlier trigger */
  FRZ_TRIGGER_CRASH = 8,        /* a fatal signal (SIGSEGV, SIGABRT, SIGBUS): best effort */
  FRZ_TRIGGER_RECOVERY = 9,     /* progress resumed after a trigger: the last frame of it */
  FRZ_TRIGGER_PMIX = 10,        /* another rank's hang, as a PMIx event (FR_TRIGGER_PMIX; since 1.4) */
  FRZ_TRIGGER_STORE = 11,       /* another rank's hang, as a key in the job's TCPStore (FR_TRIGGER_STORE; since 1.4) */
  FRZ_TRIGGER_SALVAGED = 12,    /* made from the ring file of a process that was gone (killed,
                                   exited, crashed): its last moments (since 1.4) */
  FRZ_TRIGGER_SNAPSHOT = 13     /* made from the ring file of a running process, from outside,
                                   without its cooperation (since 1.4) */
} frz_trigger;

/* ---- structures ------------------------------------------------------- */

#define FRZ_HOST_MAX 64
#define FRZ_JOB_MAX 64
#define FRZ_TEXT_MAX 128

/* Process header: who wrote this dump, when and why. */
typedef struct frz_process {
  int32_t global_rank;       /* from RANK, OMPI_COMM_WORLD_RANK, ...; -1 unknown */
  int32_t world_size;        /* from WORLD_SIZE, ...; -1 unknown */
  int32_t local_rank;        /* -1 unknown */
  uint32_t pid;
  char host[FRZ_HOST_MAX];   /* NUL-terminated */
  char job_id[FRZ_JOB_MAX];  /* NUL-terminated */
  int32_t nccl_version;      /* ncclGetVersion code, 0 unknown */
  uint32_t recorder_version; /* major*10000 + minor*100 + patch */
  uint64_t anchor_realtime_ns;  /* CLOCK_REALTIME at anchor_monotonic_ns */
  uint64_t anchor_monotonic_ns;
  uint32_t trigger;          /* frz_trigger */
  uint32_t frame;            /* 0 = first dump after the trigger */
  uint64_t frame_time_ns;    /* CLOCK_MONOTONIC when this frame was taken */
  uint64_t trigger_time_ns;  /* CLOCK_MONOTONIC of the trigger (frame 0) */
  int32_t trigger_rank;      /* global rank that caused the trigger, -1 self/unknown */
  uint32_t flags;            /* FRZ_PF_* (since 1.2) */
  uint64_t records_total;    /* records ever written in this process */
  uint64_t records_dropped;  /* overwritten by the ring before this dump */
  uint32_t ring_capacity;    /* FR_BUFFER_ENTRIES */
  uint32_t trigger_latency_us; /* a trigger from another rank: its trigger to this rank seeing it, wall clock, µs; 0 unknown (since 1.4) */
  char trigger_text[FRZ_TEXT_MAX]; /* human text, e.g. "seq 37 AllReduce waited 60 s" */
} frz_process;

/* Process flags (since 1.2) */
enum {
  FRZ_PF_PROFILER_LOADED = 1u << 0,  /* NCCL loaded the recorder as its profiler plugin */
  FRZ_PF_PROFILER_FOREIGN = 1u << 1, /* NCCL_PROFILER_PLUGIN named another plugin: left alone */
  FRZ_PF_PROFILER_OFF = 1u << 2,     /* FR_PROFILER_MASK=0: the plugin was not offered to NCCL */
  FRZ_PF_STATES_STALE = 1u << 3      /* a dump made from a ring file (trigger salvaged or snapshot) whose
                                        process ended or stopped without its records being stamped (a
                                        kill, a fatal signal, a watchdog that cannot run): their states are
                                        as of its watchdog's last poll, so an op that completed after it
                                        still reads as pending (since 1.4) */
};

/* Comm flags */
enum {
  FRZ_CF_INIT_FAILED = 1u << 0, /* init returned an error: no usable comm */
  FRZ_CF_DESTROYED = 1u << 1,   /* CommDestroy returned */
  FRZ_CF_ABORTED = 1u << 2,     /* CommAbort called */
  FRZ_CF_SPLIT = 1u << 3,       /* created by CommSplit (parent_id, split_color valid) */
  FRZ_CF_PENDING = 1u << 4,     /* nonblocking init still in progress */
  FRZ_CF_UNKNOWN_ID = 1u << 5,  /* created behind the recorder's back: comm_id is local, not shared */
  FRZ_CF_ASYNC_ERROR = 1u << 6, /* ncclCommGetAsyncError reported an error */
  FRZ_CF_REVOKED = 1u << 7,     /* ncclCommRevoke called */
  FRZ_CF_FINALIZED = 1u << 8,   /* ncclCommFinalize returned */
  FRZ_CF_SHRINK = 1u << 9       /* created by ncclCommShrink (parent_id valid) */
};

/* One communicator as seen by this process (one comm rank of it). */
typedef struct frz_comm {
  uint64_t comm_id;          /* flightrec identity, equal on every member */
  uint64_t nccl_comm_hash;   /* NCCL's own comm hash (profiler), 0 unknown */
  uint64_t parent_id;        /* comm_id of the parent for splits, 0 none */
  uint64_t handle;           /* ncclComm_t value in this process (for humans) */
  int32_t nranks;            /* comm size, -1 unknown */
  int32_t rank;              /* this process's rank in the comm, -1 unknown */
  int32_t split_color;       /* CommSplit color, -1 none */
  int32_t split_key;
  uint32_t flags;            /* FRZ_CF_* */
  int32_t cuda_device;       /* -1 unknown */
  uint64_t next_seq;         /* collective seqs issued: the next one gets this */
  uint64_t first_retained_seq; /* lowest collective seq still in the ring */
  int64_t last_enqueued_seq;   /* -1 none */
  int64_t last_started_seq;    /* -1 none */
  int64_t last_completed_seq;  /* highest seq s such that every seq <= s completed; -1 none */
  uint64_t dropped_records;  /* records of this comm overwritten in the ring */
} frz_comm;

/* One intercepted call. */
typedef struct frz_record {
  uint64_t id;               /* process-wide record number, from 0 */
  uint64_t comm_id;          /* 0 for group records */
  uint64_t seq;              /* collective seq, or p2p seq for Send/Recv */
  uint64_t count;            /* elements */
  uint64_t stream;           /* cudaStream_t value */
  uint64_t call_site;        /* return address of the NCCL call */
  uint64_t group_id;         /* 0 = not in a group; else the batch's id */
  uint64_t t_enqueue_ns;     /* CLOCK_MONOTONIC when the call was entered */
  uint64_t t_start_ns;       /* when the start was seen; 0 not seen */
  uint64_t t_complete_ns;    /* when completion was seen; 0 not seen */
  uint32_t tid;              /* Linux thread id of the caller */
  int32_t peer;              /* root (collectives) or peer (p2p), comm rank; -1 none */
  uint16_t op;               /* frz_op */
  uint8_t kind;              /* frz_kind */
  uint8_t dir;               /* FRZ_DIR_* */
  uint8_t dtype;             /* ncclDataType_t; 255 none */
  uint8_t redop;             /* ncclRedOp_t (built-ins); 255 none */
  uint8_t state;             /* frz_state */
  uint8_t graph_ops;         /* since 1.5 (RECORDS version 4), in what was a reserved byte:
                                NCCL ops captured in the record's CUDA graph, 255 for 255 or
                                more; 0 unknown or none */
  uint32_t flags;            /* FRZ_RF_* */
  int32_t result;            /* ncclResult_t returned; -1 not returned yet */
  /* since 1.2 (RECORDS version 2): what NCCL's profiler plugin said of it */
  uint64_t nccl_seq;         /* NCCL's own seqNumber of the collective; UINT64_MAX unknown */
  uint8_t algo;              /* FRZ_ALGO_*; 255 unknown */
  uint8_t proto;             /* FRZ_PROTO_*; 255 unknown */
  uint8_t nchannels;         /* channels NCCL used; 0 unknown */
  /* since 1.3 (RECORDS version 3), in what were reserved bytes: which comm
   * rank of this process made it (a process may hold several ranks of one
   * comm, ncclCommInitAll) */
  uint8_t cuda_device;       /* CUDA device of the record's comm; 255 unknown */
  int32_t comm_rank;         /* this process's rank in the record's comm; -1 unknown or no comm */
  /* since 1.5 (RECORDS version 4, item 128 bytes): CUDA graphs.  A captured
   * record (GRAPH_CAPTURED) names the graph it went into; a replay record
   * (GRAPH_REPLAY) the launch it belongs to.  All records of one replay
   * share the CUDA events recorded around the graph launch: they start and
   * complete together.  (Eight bytes, so that a record stays 128 bytes in
   * memory: the analyzer holds tens of millions.) */
  uint32_t replay;           /* GRAPH_REPLAY: launch number of the graph in this process, from 0,
                                modulo 2^32 */
  uint16_t graph_id;         /* the graph (this process's, from 1 in capture order); 0 none or unknown */
  uint16_t graph_op;         /* index of the op in its graph's captured order, from 0 */
} frz_record;

/* NCCL's algorithms and protocols (the profiler's strings, coded as NCCL
 * numbers them: NCCL_ALGO_* and NCCL_PROTO_*); 255 unknown. */
enum {
  FRZ_ALGO_TREE = 0, FRZ_ALGO_RING = 1, FRZ_ALGO_COLLNET_DIRECT = 2, FRZ_ALGO_COLLNET_CHAIN = 3,
  FRZ_ALGO_NVLS = 4, FRZ_ALGO_NVLS_TREE = 5, FRZ_ALGO_PAT = 6, FRZ_ALGO_UNKNOWN = 255
};
enum { FRZ_PROTO_LL = 0, FRZ_PROTO_LL128 = 1, FRZ_PROTO_SIMPLE = 2, FRZ_PROTO_UNKNOWN = 255 };
/* A record's cuda_device when unknown (RECORDS version < 3, no comm, or a
 * device ordinal outside 0..254). */
enum { FRZ_CUDA_DEVICE_UNKNOWN = 255 };

/* Progress of one (comm, channel, peer, direction) connection as NCCL's
 * profiler plugin reported it (since 1.2, PROXY section): proxy steps are
 * the units a network proxy moves; states are NCCL's numeric
 * ncclProfilerEventState_t values (SendGPUWait 8, SendPeerWait 20,
 * SendWait 9, RecvWait 10, RecvFlushWait 11, RecvGPUWait 12). */
/* The proxy step states a progress entry's `state` holds: NCCL's
 * ncclProfilerEventState_t values (profiler plugin v4 and v5 share them).
 * A send's step goes SendGPUWait -> SendPeerWait -> SendWait; a receive's
 * RecvWait -> RecvFlushWait -> RecvGPUWait. */
enum {
  FRZ_PROXY_SEND_GPU_WAIT = 8,   /* the sender's GPU has not produced the data */
  FRZ_PROXY_SEND_WAIT = 9,       /* sent, waiting for the network to finish */
  FRZ_PROXY_RECV_WAIT = 10,      /* waiting for the sender's data */
  FRZ_PROXY_RECV_FLUSH_WAIT = 11,
  FRZ_PROXY_RECV_GPU_WAIT = 12,  /* the receiver's GPU has not consumed the data */
  FRZ_PROXY_SEND_PEER_WAIT = 20  /* waiting for the receiver to post a buffer */
};

typedef struct frz_proxy {
  uint64_t comm_id;
  uint64_t seq;              /* seq of the op of the latest proxy op here; UINT64_MAX unknown */
  uint64_t steps_posted;     /* proxy steps started, ever */
  uint64_t steps_done;       /* proxy steps stopped, ever */
  uint64_t t_last_ns;        /* last state change (CLOCK_MONOTONIC); 0 never */
  int32_t peer;              /* comm rank of the other side */
  uint8_t channel;
  uint8_t dir;               /* FRZ_DIR_SEND / FRZ_DIR_RECV */
  uint8_t kind;              /* frz_kind of that op (COLL or P2P); 0 unknown */
  uint32_t state;            /* state of the oldest unfinished step, else the last one; 0 none */
  uint32_t ops_posted;       /* proxy ops started */
  uint32_t ops_done;         /* proxy ops stopped */
  int32_t rank;              /* comm rank of this end (a process may hold several) */
} frz_proxy;

/* The kernel's progress on one (comm, channel) (since 1.2, KERNELCH
 * section): seqs of the latest op whose KernelCh event started / stopped. */
typedef struct frz_kernel_ch {
  uint64_t comm_id;
  int64_t started_seq;       /* -1 none */
  int64_t stopped_seq;       /* -1 none */
  uint64_t t_last_ns;        /* last start or stop */
  uint32_t channel;
  uint32_t started, stopped; /* KernelCh events started / stopped, ever */
  int32_t rank;              /* comm rank */
} frz_kernel_ch;

/* Where a call came from: a return address symbolised by the writer with
 * dladdr (since 1.1, CALLSITES section). */
#define FRZ_MODULE_MAX 64
#define FRZ_SYMBOL_MAX 80
typedef struct frz_callsite {
  uint64_t address;              /* the records' call_site value */
  uint64_t offset;               /* address - symbol start (or - module base without a symbol) */
  char module[FRZ_MODULE_MAX];   /* file name of the shared object or program; "" unknown */
  char symbol[FRZ_SYMBOL_MAX];   /* nearest exported symbol; "" unknown */
} frz_callsite;

/* The caller's stack when a record was made (FR_BACKTRACE=N; since 1.1,
 * BACKTRACES section): return addresses, innermost first, symbolised in the
 * CALLSITES section like call_site. */
#define FRZ_BACKTRACE_MAX 16
typedef struct frz_backtrace {
  uint64_t record_id;
  uint32_t depth;                       /* valid entries of frames */
  uint64_t frames[FRZ_BACKTRACE_MAX];
} frz_backtrace;

/* One thread of the process at dump time (since 1.2, STACKS section): its
 * stack as return addresses, innermost first, symbolised in the CALLSITES
 * section.  The innermost frame of a thread stopped by the recorder's
 * signal is the interrupted instruction itself, not a return address. */
#define FRZ_STACK_MAX 48
#define FRZ_THREAD_NAME_MAX 16
/* Thread stack status: did the thread answer the recorder's signal? */
enum {
  FRZ_STACK_OK = 0,        /* sampled */
  FRZ_STACK_NO_ANSWER = 1, /* signalled, did not answer within the wait (busy in a handler, stopped) */
  FRZ_STACK_MASKED = 2,    /* signalled, did not answer: it blocks the stack signal */
  FRZ_STACK_GONE = 3,      /* exited between listing and signalling */
  FRZ_STACK_SKIPPED = 4    /* not signalled: more threads than the recorder samples */
};
/* Thread flags */
enum {
  FRZ_TF_MAIN = 1u << 0,      /* the process's main thread (tid == pid) */
  FRZ_TF_IN_NCCL = 1u << 1,   /* inside an NCCL call: record_id is the record it is in */
  FRZ_TF_TRUNCATED = 1u << 2, /* deeper than FRZ_STACK_MAX frames: the outermost are cut */
  FRZ_TF_DUMPER = 1u << 3,    /* the thread that wrote the dump (its stack taken directly) */
  FRZ_TF_LAST_NCCL = 1u << 4  /* the thread that made the newest NCCL record */
};
typedef struct frz_stack {
  uint32_t tid;              /* Linux thread id */
  uint32_t status;           /* FRZ_STACK_* */
  uint32_t flags;            /* FRZ_TF_* */
  uint32_t depth;            /* valid entries of frames */
  uint64_t record_id;        /* with FRZ_TF_IN_NCCL: the record of the call it is in */
  uint64_t thread_handle;    /* pthread_self() of the thread (Python's thread ident); 0 unknown */
  char name[FRZ_THREAD_NAME_MAX]; /* thread name (/proc comm), NUL-terminated */
  uint64_t frames[FRZ_STACK_MAX];
} frz_stack;

/* One Python frame of a thread at dump time (since 1.2, PYFRAMES section),
 * from the interpreter's own traceback dump (FR_PY_STACKS=1). */
#define FRZ_PYFUNC_MAX 72
#define FRZ_PYFILE_MAX 160
typedef struct frz_pyframe {
  uint64_t thread_handle;    /* Python's thread ident (a pthread_t) */
  uint32_t tid;              /* Linux tid of that thread when known; 0 unknown */
  uint32_t index;            /* 0 = innermost (most recent call) */
  uint32_t line;             /* source line; 0 unknown */
  char func[FRZ_PYFUNC_MAX]; /* function name, NUL-terminated */
  char file[FRZ_PYFILE_MAX]; /* source file as the interpreter names it */
} frz_pyframe;

/* Optional parts of a dump (frz_encode_ex). */
typedef struct frz_extras {
  const frz_callsite *callsites;        /* need not be sorted */
  uint32_t ncallsites;
  const frz_backtrace *backtraces;
  uint64_t nbacktraces;
  const frz_proxy *proxy;               /* since 1.2 */
  uint64_t nproxy;
  const frz_kernel_ch *kernel_ch;       /* since 1.2 */
  uint32_t nkernel_ch;
  const frz_stack *stacks;              /* since 1.2 */
  uint32_t nstacks;
  const frz_pyframe *pyframes;          /* since 1.2 */
  uint32_t npyframes;
} frz_extras;

/* What a PyTorch Flight Recorder dump says beyond flightrec's model, kept
 * in memory only: the PyTorch importer (pytorch_fr.h) fills it, the codec
 * never writes it, and a dump decoded from a .frz file has none.  The
 * arrays run parallel to the dump's comms and records. */
#define FRZ_PT_NAME_MAX 64
typedef struct frz_pt_comm {
  int64_t pg_id;                 /* ProcessGroupNCCL's local id (the pg_status key); -1 unknown */
  char name[FRZ_PT_NAME_MAX];    /* process group name (pg_config key, entries' process_group[0]) */
  char desc[FRZ_PT_NAME_MAX];    /* its desc: "default_pg", "TENSOR_MODEL_PARALLEL_GROUP", ... */
  uint8_t counters;              /* FRZ_PT_CTR_*: where the comm's counters come from */
  int32_t *ranks;                /* pg_config's global ranks, in group-rank order (owned); NULL unknown */
  int32_t nranks;
} frz_pt_comm;
/* Where a PyTorch comm entry's counters come from. */
enum {
  FRZ_PT_CTR_ENTRIES = 0, /* retained entries, with pg_status where it counts collectives */
  FRZ_PT_CTR_STATUS = 1,  /* pg_status alone (no retained entry of the group) */
  FRZ_PT_CTR_UNKNOWN = 2  /* neither: the pg_id of the group is not known, or pg_status
                             counts p2p ops there; the counters say nothing */
};
typedef struct frz_pt_record {
  uint64_t in_numel, out_numel;  /* elements over all input / output tensors */
  uint64_t p2p_seq_id;           /* PyTorch's per-group p2p counter (p2p entries) */
  uint32_t name;                 /* index into frz_pt_info.names: the op name without the
                                    "nccl:" prefix and the peer part ("all_to_all", "send") */
  uint8_t in_dtype, out_dtype;   /* ncclDataType_t of the first tensor; 255 none or unknown */
  uint8_t coalesced;             /* FRZ_PT_COALESCED_* */
  uint8_t fields;                /* FRZ_PT_HAS_*: which of the entry's fields were there */
} frz_pt_record;
/* Fields an entry had (older versions and damaged dumps lack some): an
 * absent field is unknown, not zero. */
enum {
  FRZ_PT_HAS_IN_SIZES = 1u << 0,
  FRZ_PT_HAS_OUT_SIZES = 1u << 1,
  FRZ_PT_HAS_IN_DTYPES = 1u << 2,
  FRZ_PT_HAS_OUT_DTYPES = 1u << 3
};
enum {
  FRZ_PT_COALESCED_NO = 0,
  FRZ_PT_COALESCED_MEMBER = 1, /* an op of a coalesced group: state taken from its closing record */
  FRZ_PT_COALESCED_CLOSE = 2,  /* the closing record of a coalesced group ("coalesced", "*_coalesced") */
  FRZ_PT_COALESCED_OPEN = 3    /* an op of a coalesced group never closed (no closing record after
                                  it): the group was never launched; a group record, not an op */
};
typedef struct frz_pt_info {
  frz_pt_comm *comms;            /* dump.ncomms entries */
  frz_pt_record *records;        /* dump.nrecords entries */
  char **names;                  /* distinct op names, NUL-terminated */
  uint32_t nnames;
  uint32_t skipped_fields;       /* fields of a newer minor version that were not read */
  uint8_t has_entries;           /* the dump has an "entries" list (possibly empty) */
  char version[16];              /* the dump's "version" ("2.9"); "" none */
} frz_pt_info;

/* A decoded dump.  Arrays are owned; free with frz_dump_free. */
typedef struct frz_dump {
  uint16_t version_major, version_minor;
  frz_process process;
  frz_comm *comms;
  uint32_t ncomms;
  frz_record *records;       /* in record-id order */
  uint64_t nrecords;
  uint32_t unknown_sections; /* sections skipped because their type is unknown */
  frz_callsite *callsites;   /* sorted by address; may be empty */
  uint32_t ncallsites;
  frz_backtrace *backtraces; /* in record-id order; may be empty */
  uint64_t nbacktraces;
  frz_proxy *proxy;          /* proxy progress (1.2); may be empty */
  uint64_t nproxy;
  frz_kernel_ch *kernel_ch;  /* kernel channel progress (1.2); may be empty */
  uint32_t nkernel_ch;
  frz_stack *stacks;         /* threads at dump time, in file order; may be empty (since 1.2) */
  uint32_t nstacks;
  frz_pyframe *pyframes;     /* Python frames, by thread then index; may be empty (since 1.2) */
  uint32_t npyframes;
  frz_pt_info *pt;           /* PyTorch import only (in memory, never encoded); NULL otherwise */
} frz_dump;

/* ---- errors ----------------------------------------------------------- */
typedef enum {
  FRZ_OK = 0,
  FRZ_E_IO = 1,        /* open/read/write failed (errno in message) */
  FRZ_E_EMPTY = 2,     /* zero-length file */
  FRZ_E_MAGIC = 3,     /* not a flightrec dump */
  FRZ_E_VERSION = 4,   /* a newer major version than this reader knows */
  FRZ_E_TRUNCATED = 5, /* file ends before a structure it announces */
  FRZ_E_CORRUPT = 6,   /* checksum mismatch, bad sizes, undecodable section */
  FRZ_E_NOMEM = 7,
  FRZ_E_INVALID = 8    /* bad argument to a codec function */
} frz_status;

/* frz_error offset of a problem of the file as a whole (it cannot be
 * opened, is not a regular file): its message names no byte. */
#define FRZ_NO_OFFSET UINT64_MAX
typedef struct frz_error {
  frz_status status;
  uint64_t offset;     /* byte offset in the file where the problem is */
  char msg[512];       /* "FILE: at byte N: what" */
} frz_error;

/* Fill `err` (when not NULL) with status `st` and the message
 * "NAME: at byte OFF: <fmt...>" (NAME "<memory>" when NULL); returns st.
 * For every reader of flightrec's inputs, so errors read alike. */
frz_status frz_error_vset(frz_error *err, frz_status st, const char *name, uint64_t off,
                          const char *fmt, va_list ap);

/* ---- writing ----------------------------------------------------------- */

/* Encode a dump into a newly malloc'd buffer (*out, *out_len); zstd level
 * `level` (1..19; 0 = default 3).  Returns FRZ_OK or an error. */
frz_status frz_encode(const frz_process *proc, const frz_comm *comms, uint32_t ncomms,
                      const frz_record *records, uint64_t nrecords, int level,
                      void **out, size_t *out_len, frz_error *err);

/* frz_encode with the optional parts too: a CALLSITES section when
 * x->ncallsites > 0, a BACKTRACES section when x->nbacktraces > 0, PROXY
 * and KERNELCH sections when x->nproxy / x->nkernel_ch > 0 (x may be
 * NULL). */
frz_status frz_encode_ex(const frz_process *proc, const frz_comm *comms, uint32_t ncomms,
                         const frz_record *records, uint64_t nrecords, const frz_extras *x,
                         int level, void **out, size_t *out_len, frz_error *err);

/* The call site of `address` in a decoded dump, or NULL. */
const frz_callsite *frz_find_callsite(const frz_dump *d, uint64_t address);
/* The backtrace of record `record_id`, or NULL. */
const frz_backtrace *frz_find_backtrace(const frz_dump *d, uint64_t record_id);
/* Name of a thread stack status ("ok", "no answer", ...); never NULL. */
/* Copy `in` (at most `inlen` bytes, stopping at a NUL) into `out` (outlen
 * bytes, always NUL-terminated) with every byte that may not be shown
 * replaced by '?': invalid UTF-8, C0 and C1 controls, DEL, and the Unicode
 * bidirectional controls and line separators that reorder a terminal line
 * (U+061C, U+200E, U+200F, U+2028-U+202E, U+2066-U+2069).  Stops early
 * rather than cut a character.  Returns out. */
char *frz_sanitize(const char *in, size_t inlen, char *out, size_t outlen);
const char *frz_stack_status_name(unsigned status);

/* Write `len` bytes to DIR/NAME atomically: a temporary file in DIR opened
 * O_CREAT|O_EXCL|O_NOFOLLOW mode 0600, fsync, rename to NAME.  A reader never
 * sees a partial file under NAME.  Never follows a symlink at NAME. */
frz_status frz_write_file_atomic(const char *dir, const char *name, const void *buf,
                                 size_t len, frz_error *err);

/* ---- reading ----------------------------------------------------------- */

/* Decode a whole file image.  `name` is used in error messages (may be NULL).
 * On error *out is left empty (nothing to free). */
frz_status frz_decode(const void *buf, size_t len, const char *name, frz_dump *out,
                      frz_error *err);

/* Read and decode the file at `path`. */
frz_status frz_read_file(const char *path, frz_dump *out, frz_error *err);

void frz_dump_free(frz_dump *d);

/* ---- names ------------------------------------------------------------- */
const char *frz_op_name(unsigned op);        /* "AllReduce"; "Op#N" style never NULL */
frz_kind frz_op_kind(unsigned op);
const char *frz_dtype_name(unsigned dtype);  /* "float32", "bfloat16", ...; "none" for 255 */
const char *frz_redop_name(unsigned redop);  /* "sum", ...; "none" for 255 */
const char *frz_state_name(unsigned state);  /* "enqueued", ... */
const char *frz_trigger_name(unsigned trigger); /* "timeout", ... */
const char *frz_status_name(frz_status s);
const char *frz_algo_name(unsigned algo);    /* "Ring", ...; "unknown" for 255 */
const char *frz_proto_name(unsigned proto);  /* "Simple", ... */
/* NCCL's algorithm / protocol string (profiler) as a code; 255 unknown. */
unsigned frz_algo_from_name(const char *name);
unsigned frz_proto_from_name(const char *name);
/* Name of an NCCL profiler state value: "SendPeerWait", ...; "state#N". */
const char *frz_proxy_state_name(unsigned state);
/* How a proxy connection reads before its peer: "send->" (FRZ_DIR_SEND),
 * "recv<-" (FRZ_DIR_RECV), "?dir " for any other value. */
const char *frz_dir_arrow(unsigned dir);
/* Parse an op name ("AllReduce", case-insensitive); FRZ_OP_NONE if unknown. */
unsigned frz_op_from_name(const char *name);
/* Parse a dtype name ("float32", "f32", "bf16", ...); -1 if unknown. */
int frz_dtype_from_name(const char *name);
/* Size in bytes of one element of ncclDataType_t `dtype`; 0 unknown. */
size_t frz_dtype_size(unsigned dtype);

/* ---- on-disk layout constants (frz.md) and helpers ---------------------- */

/* The 8 magic bytes that open every dump: 0x89 'F' 'R' 'Z' CR LF 0x1A LF. */
#define FRZ_MAGIC "\x89" "FRZ\r\n\x1a\n"
#define FRZ_MAGIC_LEN 8

/* Sizes written by this codec (version 1.0).  A reader accepts larger ones
 * from a newer minor and treats smaller ones as corrupt. */
#define FRZ_HEADER_SIZE 32         /* fixed file header */
#define FRZ_SECTION_ENTRY_SIZE 48  /* one section-table entry */
#define FRZ_PROCESS_ITEM_SIZE 352  /* PROCESS section item */
#define FRZ_COMM_ITEM_SIZE 104     /* COMMS section item */
#define FRZ_RECORD_ITEM_SIZE 104   /* RECORDS section item, version 1 (the minimum) */
#define FRZ_RECORD_ITEM_SIZE_V2 120 /* RECORDS item of versions 2 and 3 (1.2, 1.3, 1.4) */
#define FRZ_RECORD_ITEM_SIZE_V4 128 /* RECORDS item written since 1.5 (version 4) */
#define FRZ_CALLSITE_ITEM_SIZE 160 /* CALLSITES section item (since 1.1) */
#define FRZ_BACKTRACE_ITEM_SIZE 144 /* BACKTRACES section item (since 1.1) */
#define FRZ_PROXY_ITEM_SIZE 64     /* PROXY section item (since 1.2) */
#define FRZ_KERNEL_CH_ITEM_SIZE 48 /* KERNELCH section item (since 1.2) */
#define FRZ_STACK_ITEM_SIZE 432    /* STACKS section item (since 1.2) */
#define FRZ_PYFRAME_ITEM_SIZE 256  /* PYFRAMES section item (since 1.2) */

/* Largest uncompressed section a reader accepts (4 GiB). */
#define FRZ_SECTION_RAW_MAX ((uint64_t)1 << 32)

/* Section types (frz.md, "Section types"); unknown types are skipped. */
enum {
  FRZ_SEC_PROCESS = 1,
  FRZ_SEC_COMMS = 2,
  FRZ_SEC_RECORDS = 3,
  FRZ_SEC_PROXY = 4,     /* optional, since 1.2 */
  FRZ_SEC_CALLSITES = 5, /* optional, since 1.1 */
  FRZ_SEC_BACKTRACES = 6, /* optional, since 1.1 */
  FRZ_SEC_STACKS = 7,     /* optional, since 1.2 */
  FRZ_SEC_KERNELCH = 8,   /* optional, since 1.2 */
  FRZ_SEC_PYFRAMES = 10   /* optional, since 1.2 */
};

/* Version of each section's item layout written by this codec (RECORDS:
 * FRZ_RECORDS_VERSION: 2 since 1.2 appended NCCL's fields, 3 since 1.3
 * gives bytes 115..119 to cuda_device and comm_rank, 4 since 1.5 appends
 * the CUDA graph fields). */
#define FRZ_SECTION_VERSION 1
#define FRZ_RECORDS_VERSION 4

/* CRC-32 (IEEE 802.3, reflected, polynomial 0xEDB88320) of `len` bytes,
 * continuing from `crc` (start with 0).  frz_crc32(0, "123456789", 9) ==
 * 0xCBF43926. */
uint32_t frz_crc32(uint32_t crc, const void *buf, size_t len);

/* Format the conventional dump file name "<job>-r<rank:05>-f<frame:04>.frz"
 * into buf (frz.md, "File naming").  Characters of job_id outside
 * [A-Za-z0-9._+-] become '_', a leading '.' becomes '_', an empty job id is
 * written "job"; a negative global rank is written "p<pid>" instead of
 * "r<rank>".  Returns the length, or -1 if it does not fit in `size`. */
int frz_dump_filename(char *buf, size_t size, const char *job_id, int32_t global_rank,
                      uint32_t pid, uint32_t frame);

/* ---- trigger messages (trigger_line.c; frz.md, "Trigger messages") ------
 * One line, "flightrec-trigger v1 rank=R time_ns=T reason=TEXT\n": the
 * content of DIR/TRIGGER and of the PMIx event and TCPStore key that pass
 * one rank's hang to the others.  R: the global rank that saw the hang (-1
 * a person, fr-dump --trigger); T: its CLOCK_REALTIME then, ns; TEXT:
 * printable ASCII, at most FRZ_TRIGGER_REASON_MAX bytes. */
#define FRZ_TRIGGER_LINE_MAX 512
#define FRZ_TRIGGER_REASON_MAX 200
typedef struct frz_trigger_line {
  int32_t rank;        /* -1 unknown or a person */
  uint64_t time_ns;    /* 0 unknown */
  char reason[FRZ_TEXT_MAX];
} frz_trigger_line;
/* Write the line (with its newline, NUL-terminated) into buf; its length,
 * or -1 when it does not fit.  Bytes of `reason` outside printable ASCII
 * become '?'. */
int frz_trigger_line_format(char *buf, size_t size, int32_t rank, uint64_t time_ns, const char *reason);
/* Read a line from text[0..len) (need not be NUL-terminated; at most
 * FRZ_TRIGGER_LINE_MAX bytes are looked at): 0, or -1 when it is not one
 * (out then says rank -1, time 0, no reason). */
int frz_trigger_line_parse(const char *text, size_t len, frz_trigger_line *out);

/* ---- announcements (alive.c; frz.md, "Announcements") ------------------
 * A recording process keeps DIR/.fr-alive-<job>-r<rank:05>-p<pid> in its
 * dump directory from its first communicator to its clean exit: one line,
 * "flightrec-alive v1 job=J rank=R world=W local_rank=L pid=P time_ns=T
 * trigger=0|1 host=H\n".  A process killed, crashed or hung leaves it behind. */
#define FRZ_ALIVE_PREFIX ".fr-alive-"
#define FRZ_ALIVE_MAX 512 /* bytes of an announcement read at most */
typedef struct frz_alive {
  char job_id[FRZ_JOB_MAX]; /* the job id the process's dumps carry; "" unknown */
  int32_t global_rank;      /* -1 unknown */
  int32_t world_size;       /* -1 unknown */
  int32_t local_rank;       /* -1 unknown */
  uint32_t pid;
  uint64_t time_ns;         /* CLOCK_REALTIME when it announced itself, ns */
  char host[FRZ_HOST_MAX];  /* "" unknown */
  int32_t watches_trigger;  /* 1: it polls DIR/TRIGGER (FR_TRIGGER_FILE), 0 not */
} frz_alive;

/* The announcement's file name into buf (job characters outside
 * [A-Za-z0-9._+-] become '_').  Returns the length, or -1 if it does not
 * fit in `size`. */
int frz_alive_filename(char *buf, size_t size, const char *job_id, int32_t global_rank, uint32_t pid);
/* A job id as an announcement writes it (characters outside
 * [A-Za-z0-9._+:-] as '_'), to compare with a dump's job id. */
void frz_alive_job(char *out, size_t size, const char *job_id);
/* Is `name` (a directory entry) an announcement, not its temporary file? */
int frz_alive_is_name(const char *name);
/* The announcement's line into buf.  Returns its length, -1 if too small. */
int frz_alive_format(const frz_alive *a, char *buf, size_t size);
/* Parse an announcement's bytes (`name` for the message).  FRZ_E_CORRUPT
 * with "NAME: at byte 0: what" in err when it is not one. */
frz_status frz_alive_parse(const char *text, size_t len, const char *name, frz_alive *out,
                           frz_error *err);
/* Every readable announcement in `dir` into *out (malloc'd, *n of them,
 * sorted by job, rank, newest first); unreadable ones are skipped.
 * FRZ_E_IO when dir cannot be opened; FRZ_E_NOMEM keeps those read. */
frz_status frz_alive_list(const char *dir, frz_alive **out, size_t *n);

#ifdef __cplusplus
}
#endif
#endif /* FRZ_H */
