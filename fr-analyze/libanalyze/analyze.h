/* analyze.h — the flightrec analyzer: dumps of every rank in, a diagnosis out.
 *
 * Used by fr-analyze (text and JSON reports) and fr-tui (which browses the
 * same model).  The flow is:
 *
 *   fa_analysis *a = fa_new();
 *   fa_add_path(a, "dumps/");           // or fa_add_dump() for decoded dumps
 *   fa_run(a);                          // build the model, apply the rules
 *   fa_report_text(a, stdout);          // or fa_report_json()
 *   int rc = fa_exit_status(a);
 *   fa_free(a);
 *
 * Everything the analysis finds stays accessible as data in fa_analysis:
 * ranks and their frames (every dump read), communicators and their members,
 * the records aligned by seq, the per-comm findings and the verdict.
 *
 * Ranks: "global rank" is the process's rank in the job (from the dump's
 * process header, never from a file name); "comm rank" is a member's rank
 * inside one communicator.  Arrays of ranks in results are sorted global
 * ranks.  The library never prints; functions return errors.
 */
#ifndef FR_ANALYZE_H
#define FR_ANALYZE_H

#include <stdint.h>
#include <stdio.h>

#include "frz.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Version of the analysis JSON document (formats/analysis-json.md). */
#define FA_JSON_VERSION 1

/* ---- input problems ------------------------------------------------------ */

/* A file that could not be used, or a conflict found while merging dumps. */
typedef struct fa_problem {
  char *file;          /* the file concerned; NULL when not tied to one */
  int has_offset;      /* offset is meaningful (decode errors) */
  uint64_t offset;     /* byte offset of the problem in file */
  char *message;       /* what is wrong, without the file name prefix */
} fa_problem;

/* ---- the model: ranks and their frames ----------------------------------- */

/* A run of indices into an index array. */
typedef struct fa_slice {
  uint32_t start, len;
} fa_slice;

/* One decoded dump: one process at one frame. */
typedef struct fa_frame {
  char *name;          /* the file it came from (or the name given to fa_add_dump) */
  frz_dump dump;       /* owned */
  int32_t rank;        /* index into fa_analysis.ranks */
  /* Record indices (into dump.records) of each comm entry of dump.comms:
   * coll[i] lists comms[i]'s collective and lifecycle records in seq order,
   * p2p[i] its Send/Recv records in record order.  Both index into idx. */
  uint32_t *idx;
  fa_slice *coll;
  fa_slice *p2p;
  uint64_t reaction_ns; /* CLOCK_MONOTONIC of the process: when it gave up (its reaction to the
                           hang began; the dump is read as of then); 0 it did not */
} fa_frame;

/* One process of the job (a global rank) with all of its frames. */
typedef struct fa_rank {
  int32_t global_rank;
  uint32_t first_frame, nframes; /* fa_analysis.frames[first_frame ..], frame order */
  int32_t wait_comm;   /* comm index where this rank waits (stuck collective or
                          pending p2p) in its latest frame; -1 none */
  uint64_t progress;   /* ops completed between its first and latest frame */
  int64_t clock_offset_ns; /* estimated offset of its host's clock (0 reference) */
} fa_rank;

/* ---- the model: communicators -------------------------------------------- */

/* A member's situation relative to its comm's stuck op (FA_MEMBER_IDLE when
 * the comm is not stuck). */
typedef enum {
  FA_MEMBER_NO_DUMP = 0, /* no dump claims this comm rank */
  FA_MEMBER_IDLE,        /* completed everything it enqueued */
  FA_MEMBER_WAITING,     /* enqueued the stuck op, not completed */
  FA_MEMBER_LAGGING,     /* never enqueued the stuck op */
  FA_MEMBER_PASSED,      /* completed the stuck op (others did not) */
  FA_MEMBER_AHEAD,       /* alone past the point where every other member is idle */
  FA_MEMBER_UNFINISHED   /* enqueued the stuck op, which others completed: its own work
                            never finished (its device side), so it waits for nobody */
} fa_member_state;

/* One comm rank of a communicator. */
typedef struct fa_member {
  int32_t comm_rank;
  int32_t global_rank;   /* -1 when unknown (no dump and no rank map to infer it) */
  int32_t rank;          /* index into fa_analysis.ranks; -1 no dump */
  int32_t frame;         /* index into fa_analysis.frames of the frame analysed; -1 */
  int32_t entry;         /* index into that frame's dump.comms; -1 */
  uint8_t global_inferred; /* global_rank inferred from the comm's rank map */
  uint8_t tracked;       /* completion was tracked (otherwise assumed from enqueues) */
  fa_member_state state;
  int64_t first_retained;  /* lowest collective seq still in its ring; -1 none */
  int64_t last_enqueued;   /* -1 none */
  int64_t last_completed;  /* effective value used by the rules; -1 none */
  int64_t unknown_from;    /* its latest records from this seq on were not tracked
                              (graph-captured): counted as completed, really unknown; -1 none */
  uint8_t behind;          /* lagging because its op is queued on its stream behind an
                              unfinished op of another comm (it enqueued the stuck op) */
  uint8_t counters_unknown; /* PyTorch dump: its counters of this comm say nothing (no pg_id
                              for the group, or pg_status counting p2p ops): never blamed */
  uint8_t absent;          /* no dump claims this comm rank of a comm that never formed, and
                              global_rank is a rank whose dump holds no record of the comm: it
                              never called the comm's creation (lagging; rank stays -1) */
  uint8_t left;            /* lagging because it tore the comm down (CommDestroy, CommFinalize,
                              CommAbort at the stuck seq) while others wait in its op there */
  uint8_t shut;            /* idle: it tore the comm down at the stuck seq after completing all its
                              ops there (a shutdown), with too few others waiting to tell
                              whether it ended early or they ran on (fa_comm.end_unclear) */
  uint8_t not_started;     /* unfinished: its record of the stuck op never started while
                              other members' started, not behind an NCCL op of its own:
                              work before it on its stream never finished */
  uint8_t async_error;     /* unfinished because NCCL reported an async error on its comm
                              (ncclCommGetAsyncError) with the stuck op in flight: its own
                              network or device side broke */
  uint8_t gone;            /* lagging because its process ended (its last dump was written at exit
                              or on a fatal signal) with the stuck op in flight: its part never comes */
  uint8_t data_stopped;    /* no dump, and its data stopped there: at the stuck seq a member waits in
                              RecvWait for it on a channel where the member that sends to it
                              completed the op (proxy progress; links.c); said, not blamed */
  int32_t stopped_waiter, stopped_sender; /* with data_stopped: the global ranks of those two */
  int64_t failed_seq;      /* its own call at this seq returned an error and launched nothing (its
                              creation, seq 0, when the comm's init failed: FRZ_CF_INIT_FAILED; or a
                              collective): it never took part from there on; -1 none */
  int32_t failed_result;   /* with failed_seq: the ncclResult_t that call returned */
  uint8_t not_returned;    /* unfinished: its host thread never returned from its NCCL call of the
                              stuck op (record still IN_CALL) while every other member posted it */
  uint8_t not_run;         /* lagging: its record of an op at or before the stuck seq (not_run_seq)
                              was issued on a capturing stream (FRZ_RF_GRAPH_CAPTURED) and nothing
                              shows the graph ran, while other members called it eagerly */
  int64_t not_run_seq;
  int32_t *cand;           /* comm rank of a comm that never formed, claimed by no dump, whose
                              rank the evidence does not fix: the global ranks it may be (each
                              dumped without a record of the comm, or left no dump), sorted */
  uint32_t ncand;
} fa_member;

/* Fields of a collective that must agree across members. */
enum {
  FA_FIELD_OP = 1u << 0,
  FA_FIELD_COUNT = 1u << 1,
  FA_FIELD_DTYPE = 1u << 2,
  FA_FIELD_REDOP = 1u << 3,
  FA_FIELD_ROOT = 1u << 4,
  FA_FIELD_ALGO = 1u << 5,   /* NCCL's algorithm (profiler), where every member's is known */
  FA_FIELD_PROTO = 1u << 6   /* NCCL's protocol, likewise */
};

/* The signature compared at each seq. */
typedef struct fa_sig {
  uint64_t count;       /* elements (PyTorch dumps: of the inputs; 0 where sizes differ by design) */
  int32_t root;         /* comm rank, -1 none */
  uint16_t op;
  uint8_t dtype, redop;
  uint8_t algo, proto;  /* FRZ_ALGO_* / FRZ_PROTO_*; 255 unknown (or not known for every member) */
  /* PyTorch dumps only (0, 255, NULL otherwise) */
  uint64_t out_count;   /* elements of the outputs */
  uint8_t out_dtype;
  const char *name;     /* PyTorch's op name ("_all_gather_base"); compared when op is unknown */
} fa_sig;

/* Members sharing one signature at a divergent seq. */
typedef struct fa_group {
  fa_sig sig;
  uint32_t first, n;    /* fa_mismatch.members[first .. first+n) */
  uint8_t completed;    /* every member of the group completed that op */
} fa_group;

/* The first divergence found in a communicator. */
typedef struct fa_mismatch {
  uint64_t seq;
  unsigned fields;      /* FA_FIELD_* that differ between groups */
  fa_group *groups;     /* largest first, then by lowest comm rank */
  uint32_t ngroups;
  int32_t *members;     /* comm ranks, grouped as groups[] says */
  uint32_t nmembers;
  int32_t culprit;      /* index into groups of the minority culprit; -1 none */
  uint64_t later;       /* later seqs of this comm that diverge too */
  uint64_t last_seq;    /* the last of those (valid when later > 0) */
} fa_mismatch;

/* Which side's proxy progress shows a collective link stopped. */
enum { FA_EVIDENCE_SENDER = 1, FA_EVIDENCE_RECEIVER = 2 };

/* A link (src -> dst) that carried no data: a p2p op without counterpart,
 * a collective link whose proxy steps stopped (from NCCL's profiler
 * progress), or a ring edge inferred around a rank that never joined. */
typedef struct fa_link {
  int32_t comm;         /* index into fa_analysis.comms */
  int32_t src, dst;     /* global ranks; -1 unknown */
  int32_t src_comm_rank, dst_comm_rank;
  int32_t channel;      /* -1 unknown */
  uint8_t inferred;     /* guessed from ring order (no proxy data) */
  uint8_t p2p;          /* a Send/Recv with no counterpart */
  uint8_t pending_dir;  /* p2p: FRZ_DIR_SEND (the sender waits: no Recv posted)
                           or FRZ_DIR_RECV (the receiver waits: no Send) */
  uint8_t counterpart_no_dump; /* p2p: the side that never posted has no dump */
  uint8_t joined;              /* p2p: both sides posted and started the op, both
                                  alive, neither completed it: it never moved (the
                                  device or network side); nobody is blamed */
  uint8_t held_by_group;       /* p2p, joined: on one side the op's NCCL group holds an
                                  op whose peer never posted: it waits with its group
                                  (a consequence), not for the device or network */
  uint8_t counterpart_ended;   /* p2p: the other side posted its op, then its
                                  process ended with it in flight (exit or
                                  fatal signal): it never completes */
  uint8_t counterpart_late;    /* p2p: the waiting side gave up on its op (a
                                  watchdog) before the other side posted its
                                  own: that one came too late, the root */
  int64_t late_by_ns;          /* counterpart_late: by how much (wall clock) */
  uint8_t counterpart_not_started; /* p2p: the other side posted its op, queued behind no
                                  unfinished NCCL op of its stream, and it never started
                                  (a second or more after its call) while this side's
                                  started and waits: something else holds that stream
                                  (a kernel that does not end), the root */
  uint8_t counterpart_queued;  /* p2p: the other side posted its op, but queued on its
                                  stream behind an op that did not finish: not posted as
                                  far as this side can tell; it waits for that op */
  uint8_t evidence;     /* proxy progress: FA_EVIDENCE_* bits; 0 none */
  uint32_t state;       /* NCCL proxy step state it stopped in (SendPeerWait 20, RecvWait 10, ...); 0 unknown */
  uint64_t stalled_ns;  /* how long before the dump that state last changed; 0 unknown */
  uint64_t seq;         /* p2p seq, or the stuck collective seq */
} fa_link;

/* A communicator, merged over every process that holds a rank of it. */
typedef struct fa_comm {
  uint64_t id;
  uint64_t nccl_comm_hash;   /* 0 unknown */
  uint64_t parent_id;        /* 0 none */
  int32_t size;
  fa_member *members;        /* size entries, indexed by comm rank */
  uint32_t npresent;         /* members with a dump */
  uint8_t tracked;           /* some member tracked completion */
  int64_t unknown_from;      /* lowest unknown_from of its members; -1 none */
  int64_t seq_lo, seq_hi;    /* lowest retained / highest enqueued seq; -1 none */
  int64_t last_completed;    /* completed by every member with a dump; -1 none */
  uint8_t stuck;             /* some member enqueued last_completed+1, not all completed it */
  uint8_t in_flight;         /* it looked stuck at stuck_seq, but the job is slow, not hung (every
                                rank progressed between frames, and in this comm too): stuck is 0
                                and every member idle */
  uint64_t stuck_seq;
  uint32_t nwaiting, nlagging, nno_dump, npassed, nahead, nunfinished;
  uint32_t nasync_error;      /* unfinished members with an async error NCCL reported (fa_member.async_error) */
  uint32_t nunknown;         /* members whose counters a PyTorch dump cannot give */
  uint8_t end_unclear;       /* members tore it down at the stuck seq (fa_member.shut), the others
                                wait there, and neither side is a minority (counting members
                                without a dump on either): who ended early is not told */
  uint8_t unformed;          /* it never formed: no member completed its creation (seq 0) and
                                some member's creation call had not returned */
  uint32_t nabsent;          /* members that never called its creation (fa_member.absent) */
  uint32_t instance, ninstances; /* ninstances > 1: its id is claimed by that many groups of
                                ranks (one unique id used to create several comms); this is
                                group `instance` (0 first created); comms sorted by (id, instance) */
  int64_t beyond_seq;        /* with unfinished members: the first seq the members that completed
                                the stuck op wait in (they went on), -1 none; members that
                                never enqueued it are where those waits start */
  uint8_t has_mismatch;
  fa_mismatch mismatch;
  fa_link *links;            /* p2p unmatched, links from proxy progress, inferred ring edges */
  uint8_t has_proxy;         /* some member's dump carries proxy progress of this comm */
  const frz_pt_comm *pt;     /* PyTorch dumps: the process group (name, desc, pg_id); NULL */
  uint32_t nlinks;
} fa_comm;

/* ---- the verdict ----------------------------------------------------------- */

typedef enum {
  FA_STATUS_HEALTHY = 0,
  FA_STATUS_HANG,
  FA_STATUS_MISMATCH,
  FA_STATUS_DEADLOCK,
  FA_STATUS_STRAGGLER,
  FA_STATUS_INCONCLUSIVE
} fa_status;

/* One step of a wait-for cycle: rank waits in comm at seq for waits_for. */
typedef struct fa_wait_step {
  int32_t comm;         /* index into fa_analysis.comms */
  int32_t rank;         /* global rank of the waiting member */
  uint64_t seq;
  int32_t waits_for;    /* global rank it waits for */
  uint8_t p2p;          /* the wait is a p2p op's (seq is its p2p seq), not comm's collective */
  uint8_t uncertain;    /* waits_for is one of several ranks the awaited comm rank may be (of a
                           comm that never formed): every one of them waits for good too */
} fa_wait_step;

/* Ranks, as a sorted array of global ranks. */
typedef struct fa_ranks {
  int32_t *v;
  uint32_t n;
} fa_ranks;

/* A rank that arrives late at completed collectives, consistently. */
typedef struct fa_straggler {
  int32_t rank;          /* global rank */
  uint32_t ops;          /* completed collectives compared */
  uint32_t late_ops;     /* of those, where it arrived FA_LATE_NS or more after the median */
  int64_t mean_late_ns;  /* mean lateness behind the median arrival */
  int64_t max_late_ns;
} fa_straggler;

/* A rank is late at an op when it arrives this long after the median. */
#define FA_LATE_NS INT64_C(20000000)

/* The clock offset of one host relative to the host of the lowest rank. */
typedef struct fa_host_clock {
  char host[FRZ_HOST_MAX];
  int64_t offset_ns;     /* its clock minus the reference host's */
  uint32_t nranks, samples;
} fa_host_clock;

/* Where a root-cause rank stopped: the comm and seq where it is blamed. */
typedef struct fa_root {
  int32_t rank;          /* global rank */
  int32_t comm;          /* index into fa_analysis.comms; -1 unknown */
  uint64_t seq;          /* collective seq there (p2p: the link's seq) */
  uint8_t state;         /* fa_member_state there (FA_MEMBER_LAGGING, UNFINISHED, NO_DUMP);
                            FA_MEMBER_IDLE: a p2p op it never posted */
} fa_root;

/* ---- the verdict as an explanation ------------------------------------------ */

/* An abnormal fact found in the dumps (explain.c): what the verdict must
 * explain.  fr-analyze(1), "THE MODEL", lists them. */
typedef enum {
  FA_OBS_WAITING = 0,    /* rank posted comm's stuck op (or a later one) and waits in it */
  FA_OBS_NOT_POSTED,     /* rank never posted the op the other members wait in */
  FA_OBS_UNFINISHED,     /* rank posted it, and its own part never finished (device side) */
  FA_OBS_NOT_RETURNED,   /* rank's NCCL call of the op never returned */
  FA_OBS_CALL_FAILED,    /* rank's creation of the comm, or its call, returned an error */
  FA_OBS_NOT_RUN,        /* rank's record was captured into a graph never launched, or issued
                            in a group never ended */
  FA_OBS_NO_DUMP,        /* a member the waits end at left no dump (rank may be -1: unknown) */
  FA_OBS_ENDED,          /* rank's process ended, or it tore the comm down, with the op in flight */
  FA_OBS_AHEAD,          /* rank went on alone past where every other member is done */
  FA_OBS_ARGS_DIFFER,    /* the members of comm called seq with different arguments (rank -1) */
  FA_OBS_P2P_UNMATCHED,  /* rank's send or receive waits for a counterpart peer never posted */
  FA_OBS_LINK_STOPPED,   /* proxy progress: rank's link to peer stopped moving data */
  FA_OBS_ALL_JOINED,     /* every member of comm posted seq and none completed it (rank -1) */
  FA_OBS_NKINDS
} fa_obs_kind;

/* A fault of the catalogue (explain.c; fr-analyze(1), "FAULTS"). */
typedef enum {
  FA_FAULT_STOPPED = 0,  /* a rank stopped outside NCCL before an op */
  FA_FAULT_LEFT_OUT,     /* a rank left a call out and went on */
  FA_FAULT_EXTRA,        /* a rank made calls the others did not (it went on alone) */
  FA_FAULT_OTHER_ARGS,   /* a call with other arguments (op, count, type, root, peer, split sizes) */
  FA_FAULT_CONFIG_SPLIT, /* members ran one op with another algorithm or protocol */
  FA_FAULT_NOT_RETURNED, /* a call that never returned */
  FA_FAULT_INIT_FAILED,  /* an init, or a call, that failed on a rank */
  FA_FAULT_NOT_LAUNCHED, /* a captured graph never launched, or a group never ended */
  FA_FAULT_GONE,         /* a process gone: dead, exited, torn its comm down, or no dump */
  FA_FAULT_DEVICE,       /* a rank's own device side stalled (a kernel that never ends, an error) */
  FA_FAULT_LINK,         /* every member joined, nothing moved: a link or the device side (no rank) */
  FA_FAULT_ORDER,        /* calls of several comms in another order on different ranks: a deadlock */
  FA_FAULT_LATE,         /* a rank entered the op after the others had given up on it */
  FA_FAULT_NKINDS
} fa_fault_kind;

typedef struct fa_fault {
  fa_fault_kind kind;
  int32_t rank;          /* global rank; -1 a fault of no one rank (LINK, a split without culprit) */
  int32_t comm;          /* index into fa_analysis.comms; -1 unknown */
  uint64_t seq;
} fa_fault;

typedef struct fa_obs {
  fa_obs_kind kind;
  int32_t rank;          /* global rank; -1 none (a fact of the comm) or unknown */
  int32_t comm;          /* index into fa_analysis.comms; -1 */
  uint64_t seq;          /* collective seq, or p2p seq for P2P_UNMATCHED */
  int32_t peer;          /* the other side (P2P_UNMATCHED, LINK_STOPPED); -1 */
  int32_t by;            /* index into verdict.faults of a fault that explains it; -1 unexplained */
} fa_obs;

typedef struct fa_verdict {
  fa_status status;
  char *summary;             /* one sentence */
  int32_t comm;              /* the comm whose stuck op explains the hang; -1 */
  int32_t mismatch_comm;     /* the comm whose first divergence is reported; -1 */
  uint8_t all_joined;        /* stuck op joined by every member, none completed it */
  fa_ranks lagging;          /* never reached the op the others wait in */
  fa_ranks unfinished;       /* reached it, others completed it, theirs never finished */
  fa_ranks root_cause;
  fa_root *roots;            /* root_cause.n entries, in the same order */
  fa_ranks ahead;            /* alone past the others (divergent) */
  fa_link *links;            /* missing links: inferred edges of comm, p2p ones */
  uint32_t nlinks;
  fa_wait_step *cycle;       /* deadlock cycle; NULL none */
  uint32_t ncycle;
  int32_t astray;            /* the rank of a two-rank cycle through a p2p op that went astray
                                (skipped the op, or used another peer), its only root cause; -1 */
  uint8_t astray_how;        /* FA_ASTRAY_* (internal.h): how it went astray */
  int32_t changed;           /* the one rank of the cycle whose current round of ops is not its
                                periodic pattern while every other one repeats its own (rounds.c):
                                said, never blamed alone; -1 none */
  fa_ranks outside;          /* would be root causes, but their stacks wait for another rank outside
                                NCCL (outside.c) while other root causes do not: not blamed */
  const char *outside_frame; /* the frame that says so (static) */
  uint8_t rounds_changed_most; /* most members of the cycle's comms changed their rounds
                                  (fa_rounds_changed_most, once): the rounds blame nobody */
  uint8_t changed_most;      /* ... and one rank of the cycle would have been said to change:
                                the summary says the job changed instead */
  int32_t p2p_hub;           /* the one rank that every p2p transfer without a counterpart of comm
                                p2p_hub_comm touches, where the other ends reached that round
                                (splits.c): its calls disagree with its peers'; a root cause in
                                their place; -1 none */
  int32_t p2p_hub_comm;
  int32_t shifted_comm;      /* the comm whose calls diverge from its culprit's first differing
                                call on to its stuck op (one call more or fewer): the members
                                that never entered that op are done by their count; -1 none */
  fa_ranks left_out_too;     /* beside astray: ranks that left out a call of another stuck op the
                                same way (their rounds say so), root causes too */
  fa_ranks late;             /* entered the stuck op only after the members in late_left had
                                given up on it (aborted): the root causes, not "all joined" */
  fa_ranks late_left;
  int64_t late_by_ns;        /* how long after the last of them, at most (wall clock) */
  fa_straggler *stragglers;  /* consistently late ranks, latest first */
  uint32_t nstragglers;
  int32_t *shared;           /* comms (indexes, instance 0) whose id several groups of ranks claim:
                                one unique id used to create several comms; a finding */
  uint32_t nshared;
  fa_fault *faults;          /* the faults of the verdict (root causes by kind, and faults of no
                                one rank), in the order of root_cause */
  uint32_t nfaults;
  fa_obs *obs;               /* every observation, with the fault that explains it */
  uint32_t nobs;
  uint32_t nunexplained;     /* observations no fault of the verdict explains */
  fa_ranks progressed;       /* ranks whose later frames show progress */
  uint8_t frames_progress;   /* several frames, and every rank with several progressed */
} fa_verdict;

/* ---- thread stacks (frz 1.2 STACKS / PYFRAMES) ---------------------------- */

/* Ranks whose most relevant thread has the same stack: one leaf of the
 * prefix tree of every rank's stack (outermost frame at the root). */
typedef struct fa_stack_class {
  fa_ranks ranks;        /* sorted global ranks */
  char **frames;         /* frame names, innermost first ("pause", "train (x.py:42)") */
  uint32_t nframes;
  uint32_t status;       /* FRZ_STACK_* of the threads: not FRZ_STACK_OK means no frames */
} fa_stack_class;

/* Per rank (index into fa_analysis.ranks), after fa_run. */
typedef struct fa_rank_stack {
  int32_t thread;        /* index into the latest frame's dump.stacks of its most relevant
                            thread (in an NCCL call, else the newest NCCL caller, else the
                            main thread); -1 the dump has no stacks */
  int32_t cls;           /* index into fa_analysis.stack_classes; -1 none */
} fa_rank_stack;

/* ---- dumps made from ring files ------------------------------------------- */

/* Ops a dump made from a ring file showed pending only because its process
 * ended or stopped before its watchdog's next poll (process flag
 * STATES_STALE: killed, a fatal signal, a watchdog that cannot run), read as
 * completed: another member completed a collective whose result needs this
 * one's part (AllReduce, AllGather, ReduceScatter, AllToAll, or a Broadcast
 * it was the root of) at that seq or later (NCCL runs a comm's ops in
 * order), while no member whose states are fresh has that seq pending (one
 * that died inside the op may have sent its part to some members only), or
 * the receive of its send.  One entry per rank and comm. */
typedef struct fa_settled {
  int32_t global_rank;
  uint64_t comm_id;
  uint64_t first_seq, last_seq; /* collective seqs read as completed (with ncoll > 0) */
  uint32_t ncoll, nsend;        /* collectives, and p2p sends, read as completed */
} fa_settled;

/* ---- the analysis ---------------------------------------------------------- */

typedef struct fa_analysis {
  /* input */
  char **files;              /* every file considered, in reading order */
  uint32_t nfiles;
  fa_problem *problems;
  uint32_t nproblems;
  char *note;                /* what reading the inputs did that is no problem but
                                worth saying (a directory read one level down); NULL none */
  fa_frame *frames;          /* usable dumps; after fa_run sorted by (rank, frame) */
  uint32_t nframes;
  char job_id[FRZ_JOB_MAX];  /* the job analysed (most common in the dumps) */
  int32_t conflict_rank;     /* a rank two different dumps claim (same frame): which is
                                that rank cannot be told, the verdict is inconclusive;
                                -1 none */
  frz_alive *alive;          /* the recorders' announcements in the directories read (a
                                process's from its first comm to its clean exit) */
  uint32_t nalive;
  int32_t world_size;        /* largest world size in the headers; -1 unknown */
  /* model (after fa_run) */
  fa_rank *ranks;            /* sorted by global rank */
  uint32_t nranks;
  fa_ranks ranks_missing;    /* expected (world size, comm maps) without a dump */
  fa_comm *comms;            /* sorted by comm id */
  uint32_t ncomms;
  fa_verdict verdict;
  fa_host_clock *hosts;      /* one per host name, clock offsets estimated */
  uint32_t nhosts;
  int ran;                   /* fa_run was called */
  int stragglers_if_needed;  /* set before fa_run: see fa_run */
  uint32_t next_unnamed;     /* counter for dumps added without a name */
  fa_rank_stack *rank_stacks;   /* nranks entries; NULL when no dump has stacks */
  fa_stack_class *stack_classes; /* largest rank set first */
  uint32_t nstack_classes;
  fa_settled *settled;       /* ops of dumps made from ring files whose states were stale
                                (FRZ_PF_STATES_STALE) read as completed (salvaged.c); by rank */
  uint32_t nsettled;
  /* dumps of the run lying beside the inputs but not given (given.c): ranks
   * without a dump here whose files, by their names, are in the directory of
   * an analysed file; and that directory (NULL none) */
  fa_ranks beside;
  char *beside_dir;
} fa_analysis;

fa_analysis *fa_new(void);
void fa_free(fa_analysis *a);

/* Add a dump file or every regular file of a directory (names starting with
 * '.' and the trigger file TRIGGER are skipped; no recursion).  Files that
 * cannot be read or decoded become problems; a path that cannot be opened
 * too.  Returns 0, or -1 only when out of memory. */
int fa_add_path(fa_analysis *a, const char *path);

/* fa_add_path for each of paths[0..npaths), in order, with the files of
 * all of them read and decoded in parallel (FR_ANALYZE_THREADS threads,
 * default one per CPU); the result is that of the fa_add_path calls in
 * turn.  Returns 0, or -1 only when out of memory. */
int fa_add_paths(fa_analysis *a, const char *const *paths, uint32_t npaths);

/* Add an already-decoded dump.  Takes ownership of *d (its arrays must be
 * malloc'd, as frz_decode makes them; frz_dump_free releases them) and
 * clears *d.  `name` (may be NULL) labels it in reports.  Returns 0 or -1
 * when out of memory (then *d is freed). */
int fa_add_dump(fa_analysis *a, frz_dump *d, const char *name);

/* Record a problem with an input (file may be NULL). */
int fa_add_problem(fa_analysis *a, const char *file, int has_offset, uint64_t offset,
                   const char *message);

/* Build the model and diagnose.  Call once, after adding input.  With
 * a->stragglers_if_needed set, the straggler pass (per-host clock offsets,
 * lateness; about a fifth of the time on large inputs) runs only when the
 * verdict may rest on it — no communicator stuck and no mismatch — so
 * verdict.stragglers and hosts[].offset_ns stay empty otherwise: for
 * viewers that show the verdict, not the straggler table (fr-tui).
 * Returns 0, or -1 when out of memory. */
int fa_run(fa_analysis *a);

/* diff(1)-style exit status for the verdict: 0 healthy, 1 a problem
 * diagnosed, 2 nothing usable (inconclusive). */
int fa_exit_status(const fa_analysis *a);

/* ---- reports ---------------------------------------------------------------- */

/* The human report: a short verdict, then details.  Returns 0 or -1 (errno). */
int fa_report_text(const fa_analysis *a, FILE *out);

/* Options of the human report. */
typedef struct fa_text_opts {
  int color;            /* ANSI colours on the verdict */
  int has_comm;         /* details only for comm `comm` */
  uint64_t comm;
  int32_t rank;         /* details only for comms this global rank is in; -1 all */
  int full;             /* every communicator, member and input problem (--full);
                           0: a summary bounded at any scale */
  int why;              /* the rules behind the verdict and their records (--why) */
} fa_text_opts;

int fa_report_text_opts(const fa_analysis *a, FILE *out, const fa_text_opts *opts);

/* The ranks an orchestrator could evict (the stragglers, or the lagging,
 * ahead, dead and other root-cause ranks of a hang), sorted.  0 or -1. */
int fa_exclude_list(const fa_analysis *a, fa_ranks *out);

/* The analysis as a JSON document (formats/analysis-json.md).  Returns a
 * malloc'd NUL-terminated string ending in a newline, or NULL. */
char *fa_report_json(const fa_analysis *a);

/* ---- accessors (also for fr-tui) ------------------------------------------ */

const char *fa_status_name(fa_status s);        /* "hang", ... */
const char *fa_obs_kind_name(fa_obs_kind k);    /* "waiting", "not-posted", ... */
const char *fa_fault_kind_name(fa_fault_kind k); /* "stopped", "left-out", ... */
const char *fa_member_state_name(fa_member_state s); /* "waiting", ... */

/* A link's ends as the reports write them, arrow between them: "3->4"
 * (global ranks, "?" unknown), or "comm rank 1->2 of rank 0" between two
 * devices of one process (a comm made by ncclCommInitAll, or a process
 * with several GPUs, as JAX runs), whose global ranks are the same.
 * Returns buf. */
const char *fa_link_ends(const fa_link *l, const char *arrow, char *buf, size_t size);

/* The frame a member's data comes from, and its comm entry; NULL if none. */
const fa_frame *fa_member_frame(const fa_analysis *a, const fa_member *m);
const frz_comm *fa_member_comm(const fa_analysis *a, const fa_member *m);

/* A member's collective record at `seq`, or NULL (not retained / not issued). */
const frz_record *fa_member_record(const fa_analysis *a, const fa_member *m, uint64_t seq);

/* A frame's collective record of comm entry `entry` at `seq`, or NULL. */
const frz_record *fa_frame_record(const fa_frame *f, uint32_t entry, uint64_t seq);

/* The record of comm `c` at collective `seq`, from the lowest comm rank that
 * retained it, preferring waiting members; NULL when nobody retained it. */
const frz_record *fa_comm_record(const fa_analysis *a, const fa_comm *c, uint64_t seq);

/* fa_comm_record, and the dump that record is in (*d; may be NULL). */
const frz_record *fa_comm_record_in(const fa_analysis *a, const fa_comm *c, uint64_t seq,
                                    const frz_dump **d);

/* The name a user knows the op of record r (of dump d) by: PyTorch's
 * ("_all_gather_base") for PyTorch dumps, else NCCL's ("AllGather").  Not
 * sanitised. */
const char *fa_record_op_name(const frz_dump *d, const frz_record *r);

/* Comm c as the reports name it: its id, and for a PyTorch process group
 * its desc, name and members ("518317af6e5bf901 (EXPERT_MODEL_PARALLEL_GROUP,
 * pg 74, ranks 12-15)"), sanitised.  Returns buf. */
char *fa_comm_label(const fa_comm *c, char *buf, size_t len);
/* Does a member of c with a dump have counters that say nothing (a
 * PyTorch group whose pg_status cannot be read: counters_unknown) while
 * its last enqueued and last completed works differ (something of it may
 * be pending)? */
int fa_counters_unknown(const fa_analysis *a, const fa_comm *c);

/* A comm's last completed seq as the reports show it: -1 (none) for a
 * PyTorch process group that completed nothing but its creation (seq 0,
 * which PyTorch does not number). */
int64_t fa_shown_completed(const fa_comm *c);

/* The latest frame of a rank (the one analysed). */
const fa_frame *fa_rank_latest(const fa_analysis *a, const fa_rank *r);

/* Index of comm `id` in a->comms, or -1. */
int32_t fa_find_comm(const fa_analysis *a, uint64_t id);

/* Index of global rank `g` in a->ranks, or -1. */
int32_t fa_find_rank(const fa_analysis *a, int32_t g);

/* Global ranks of the members of `c` in state `s`, sorted.  Returns 0 or -1. */
int fa_comm_ranks(const fa_comm *c, fa_member_state s, fa_ranks *out);

/* Global ranks of the members of `c` that have not joined its stuck op
 * (lagging and no-dump members; when a member is ahead, the idle others),
 * sorted; none when `c` is not stuck.  Returns 0 or -1. */
int fa_comm_missing(const fa_comm *c, fa_ranks *out);

void fa_ranks_free(fa_ranks *r);

/* The frames of thread t of dump d as names, innermost first: native frames
 * by symbol ("module+0xOFF" without one; with `offsets`, "module!symbol+0xOFF"),
 * and, when the interpreter's frames of that thread are in the dump, the
 * Python frames ("func (file:line)") in place of the interpreter's native
 * ones (at most 256, the innermost; then one "(N outer Python frames
 * cut)").  *out is a malloc'd array of malloc'd strings (free with
 * fa_strings_free); sanitised for a terminal.  Returns 0 or -1. */
int fa_thread_frames(const frz_dump *d, const frz_stack *t, int offsets, char ***out, uint32_t *n);
void fa_strings_free(char **v, uint32_t n);

/* The most relevant thread of global rank g's latest dump, or NULL. */
const frz_stack *fa_rank_thread(const fa_analysis *a, int32_t g);

/* Write a sorted rank set compactly ("0-4,6-7") into buf; when it does not
 * fit, end with "... (N ranks)".  Returns buf. */
char *fa_format_ranks(const int32_t *ranks, uint32_t n, char *buf, size_t len);

/* Copy `in` into `out` with what may not be shown (control characters,
 * invalid UTF-8, bidirectional controls: frz_sanitize) replaced by '?', so
 * that it is safe on a terminal.  Returns out. */
char *fa_sanitize(const char *in, char *out, size_t len);
/* The desc of PyTorch process group c (c->pt set), sanitized, into buf; ""
 * for PyTorch's default "undefined" (a group made without group_desc). */
void fa_pt_desc(const fa_comm *c, char *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif /* FR_ANALYZE_H */
