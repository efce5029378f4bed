/* scenario.h — the scenario file of fr-scenario-job (format:
 * tests/scenarios/README.md): parsed form, rank selectors, expressions.
 *
 *   scenario.c  parsing and validation of a file (body ops, faults, settings)
 *   comms.c     parsing of comm, env, post and watchdog lines
 *   names.c     op kinds, datatypes, reduction operators, selectors
 *   plan.c      membership of every rank in every communicator
 *   expr.c      integer expressions over rank variables
 *   boot.c      unique-id exchange through the bootstrap directory
 *   job.c       the training loop that runs a parsed scenario (job.h)
 *   lifecycle.c the job's communicators: creation, destroy, finalize, abort
 *   sites.c     every NCCL call of the job, from named call sites
 */
#ifndef FR_SCENARIO_H
#define FR_SCENARIO_H

#include <stddef.h>

#include "fr_nccl.h"

#define SC_MAX_WORLD 4096
#define SC_MAX_RANGES 16
#define SC_EXPR_MAX 96
#define SC_NAME_MAX 32
#define SC_MAX_SITES 8          /* site=NAME: job_site_1 .. job_site_8 */
#define SC_MAX_DEVICES 64       /* comm NAME initall devices=N */
#define SC_MAX_GRAPHS 8         /* graph=NAME: CUDA graphs of the body */

/* What a body line does. */
enum sc_kind {
  SC_ALLREDUCE, SC_BROADCAST, SC_BCAST, SC_REDUCE, SC_ALLGATHER, SC_REDUCESCATTER,
  SC_ALLTOALL, SC_GATHER, SC_SCATTER, SC_ALLTOALLV, SC_SEND, SC_RECV,
  SC_GROUP_BEGIN, SC_GROUP_END, SC_SYNC, SC_SLEEP,
  SC_CREATE, SC_DESTROY, SC_FINALIZE, SC_ABORT /* lifecycle of a communicator */
};

/* A set of integers: union of ranges lo..hi by stride (hi may be INT_MAX). */
struct sc_set {
  int n;
  int lo[SC_MAX_RANGES], hi[SC_MAX_RANGES], stride[SC_MAX_RANGES];
};

/* Variables an expression may use. */
struct sc_vars {
  long rank, size;              /* in the communicator in question */
  long grank, wsize;            /* global rank, world size */
  long peer;                    /* alltoallv counts=/splits=: the receiving comm rank */
  int has_peer;                 /* peer is defined (else naming it is an error) */
};

/* NCCL's algorithm and protocol names (the profiler's), as accepted by
 * algo= and proto=; SC_NAME_MAX bytes each, "" for NCCL's own choice. */
#define SC_ALGO_NAMES "Tree Ring CollNetDirect CollNetChain NVLS NVLSTree PAT"
#define SC_PROTO_NAMES "LL LL128 Simple"

enum sc_comm_how { SC_COMM_WORLD, SC_COMM_SPLIT, SC_COMM_INIT, SC_COMM_SHRINK, SC_COMM_INITALL };

struct sc_comm {
  char name[SC_NAME_MAX];
  int line;
  enum sc_comm_how how;
  int parent;                   /* SC_COMM_SPLIT, SC_COMM_SHRINK: index of the parent */
  char color[SC_EXPR_MAX];      /* expressions; "" = default */
  char key[SC_EXPR_MAX];
  int late;                     /* created in the body (create, or its first op), not before the loop */
  int uid_shared;               /* SC_COMM_INIT uid=shared: every instance uses instance 0's id */
  struct sc_set exclude;        /* SC_COMM_SHRINK: comm ranks of the parent left out */
  int devices;                  /* SC_COMM_INITALL: devices per process (comm ranks 0..devices-1) */
  /* Membership, computed at load for every world rank g: */
  int *rank_of;                 /* rank in its instance of the comm, -1: not a member
                                   (SC_COMM_INITALL: 0, the first of its devices' ranks) */
  int *size_of;                 /* size of that instance */
  long *color_of;               /* evaluated color (split and init comms) */
  long *key_of;                 /* evaluated key */
  int *inst_of;                 /* instance (one per distinct color and parent instance) */
};

struct sc_op {
  enum sc_kind kind;
  int line;
  char id[SC_NAME_MAX];         /* optional label for faults */
  int comm;
  char count[SC_EXPR_MAX];
  ncclDataType_t dtype;
  ncclRedOp_t redop;
  char root[SC_EXPR_MAX];       /* root of rooted collectives */
  char peer[SC_EXPR_MAX];       /* peer of send/recv */
  struct sc_set ranks;          /* global ranks that run it */
  long sleep_ms;                /* SC_SLEEP */
  int site;                     /* site=NAME: 1..SC_MAX_SITES (job_site_N); 0 none */
  char counts[SC_EXPR_MAX];     /* alltoallv: elements comm rank `rank` sends to `peer` */
  char algo[SC_NAME_MAX];       /* algo=NAME, proto=NAME of a collective; "" NCCL's choice */
  char proto[SC_NAME_MAX];
  int graph;                    /* graph=NAME: 1..SC_MAX_GRAPHS (the body's graphs); 0 eager */
};

/* Fault actions */
enum {
  SC_F_STOP = 1 << 0, SC_F_SKIP = 1 << 1, SC_F_EXIT = 1 << 2, SC_F_CRASH = 1 << 3,
  SC_F_EXTRA = 1 << 4, SC_F_COUNT = 1 << 5, SC_F_DTYPE = 1 << 6, SC_F_REDOP = 1 << 7,
  SC_F_ROOT = 1 << 8, SC_F_PEER = 1 << 9, SC_F_COLL = 1 << 10, SC_F_SLEEP = 1 << 11,
  SC_F_SWAP = 1 << 12, SC_F_TRIGGER = 1 << 13, SC_F_STALL_LINK = 1 << 14, SC_F_STALL_KERNEL = 1 << 15,
  SC_F_BLOCK_READ = 1 << 16, SC_F_ASYNC_ERROR = 1 << 17, SC_F_BUSY_STREAM = 1 << 18,
  SC_F_INIT_FAIL = 1 << 19, SC_F_NO_RETURN = 1 << 20, SC_F_ALGO = 1 << 21, SC_F_PROTO = 1 << 22,
  SC_F_SPLITS = 1 << 23, SC_F_CAPTURE = 1 << 24, SC_F_NO_GROUP_END = 1 << 25
};

struct sc_fault {
  int line;
  struct sc_set ranks;          /* global ranks */
  struct sc_set steps;
  int op;                       /* body index (0-based internally), -1 none */
  unsigned actions;
  long sleep_ms;
  char count[SC_EXPR_MAX];
  ncclDataType_t dtype;
  ncclRedOp_t redop;
  char root[SC_EXPR_MAX];
  char peer[SC_EXPR_MAX];
  enum sc_kind coll;
  int swap;                     /* body index to trade places with */
  int stall_src, stall_dst;     /* stall link SRC->DST (comm ranks of the op's comm) */
  int stall_channel;            /* ... on this channel */
  int has_dev;                  /* dev=SEL: only these devices' calls (initall comms) */
  struct sc_set devs;
  ncclResult_t async_error;     /* async-error[=N]: what the comm reports from then on */
  int init_comm;                /* init-fail: the comm whose creation fails (comm=NAME), -1 none */
  ncclResult_t init_error;      /* ... with this result */
  char algo[SC_NAME_MAX];       /* algo=NAME, proto=NAME */
  char proto[SC_NAME_MAX];
  char splits[SC_EXPR_MAX];     /* splits=EXPR: this rank's alltoallv counts */
};

/* watchdog MS [abort|destroy|none] [then=exit|crash|stay] [dump[=MS]] [ranks=SEL]:
 * how the selected ranks react when a wait for their streams lasts MS
 * milliseconds, or a comm they hold reports an async error. */
enum sc_wd_end { SC_WD_ABORT, SC_WD_DESTROY, SC_WD_NONE };
enum sc_wd_then { SC_WD_EXIT, SC_WD_CRASH, SC_WD_STAY };

struct sc_watchdog {
  int line;
  long ms;                      /* the longest wait */
  enum sc_wd_end end;           /* what it does to every comm it holds */
  enum sc_wd_then then;         /* and then */
  int dump;                     /* first creates $FR_DUMP_DIR/TRIGGER ... */
  long dump_wait_ms;            /* ... and waits this long for the dumps */
  struct sc_set ranks;
};

struct sc_env {
  char *assign;                 /* "NAME=VALUE" */
  int per_rank;                 /* only for the ranks of `ranks` */
  struct sc_set ranks;
};

/* What run-scenario does to a rank's dumps after the run. */
enum sc_post_action { SC_POST_EMPTY_DUMP, SC_POST_REMOVE_DUMP, SC_POST_COPY_DUMP, SC_POST_RENAME_DUMP };

struct sc_post {
  struct sc_set ranks;
  enum sc_post_action action;
  int as_rank;                  /* copy-dump / rename-dump as=R */
};

struct scenario {
  const char *file;
  int world;
  int steps;
  int step_sync;
  long time_limit;              /* seconds; 0 = the launcher's default */
  int wait_exit;                /* the launcher waits for every rank to exit */
  int nenv, ncomms, nops, nfaults, nposts, nwatchdogs;
  struct sc_watchdog *watchdogs;
  struct sc_post *posts;
  struct sc_env *env;
  struct sc_comm *comms;
  struct sc_op *ops;
  struct sc_fault *faults;
  int nsites;                   /* site names, in order of first appearance */
  char sites[SC_MAX_SITES][SC_NAME_MAX];
  int max_devices;              /* most devices of an initall comm (1: none) */
  int ngraphs;                  /* graph names, in order of first appearance */
  char graphs[SC_MAX_GRAPHS][SC_NAME_MAX];
};

/* Parses a file; on error prints "FILE:LINE: message" and returns -1. */
int sc_load(const char *file, struct scenario *sc);
void sc_free(struct scenario *sc);

/* Fills cm's membership tables (rank_of ...) for every world rank; comms
 * it depends on must be planned first.  On error prints "FILE:LINE: ...". */
int sc_plan_comm(const struct scenario *sc, struct sc_comm *cm);

/* names.c: lookups return 0, or -1 for an unknown word. */
int sc_kind_lookup(const char *s, enum sc_kind *out);
int sc_dtype_lookup(const char *s, ncclDataType_t *out);
int sc_redop_lookup(const char *s, ncclRedOp_t *out);
/* Bytes per element of a datatype. */
size_t sc_dtype_size(ncclDataType_t dtype);
const char *sc_kind_name(enum sc_kind kind);
/* Whether the kind is a collective or p2p call (has a communicator). */
int sc_kind_is_nccl(enum sc_kind kind);
/* Whether it is create, destroy, finalize or abort (has a communicator). */
int sc_kind_is_life(enum sc_kind kind);
/* The words of a post action ("copy-dump"). */
const char *sc_post_name(enum sc_post_action action);
int sc_kind_has_root(enum sc_kind kind);
int sc_kind_has_redop(enum sc_kind kind);
int sc_kind_has_peer(enum sc_kind kind);
/* Whether algo= and proto= apply: the collectives (not p2p, not alltoallv). */
int sc_kind_has_algo(enum sc_kind kind);
/* NCCL's spelling of an algorithm / protocol name (case-insensitive
 * lookup), or NULL for an unknown one. */
const char *sc_algo_lookup(const char *s);
const char *sc_proto_lookup(const char *s);
int sc_set_has(const struct sc_set *s, long v);

/* Evaluates an expression; on error writes a message and returns -1. */
int sc_expr_eval(const char *text, const struct sc_vars *v, long *out, char *err, size_t errsize);
/* Checks an expression's syntax and names only. */
int sc_expr_check(const char *text, char *err, size_t errsize);

/* The unique id `instance` of comm `name`: made by its maker (`make`),
 * read by the others through the bootstrap directory (boot.c); `local`:
 * nobody else needs it (a comm of one member), no file.  0, or -1 after
 * printing why. */
int boot_unique_id(const char *name, int instance, int make, int local, ncclUniqueId *id);

#endif /* FR_SCENARIO_H */
