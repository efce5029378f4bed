/* synth.h — a synthetic hung training job for the analyzer benchmarks
 * (tests/bench/fr-synth): every rank's retained records and comm table,
 * computed from the rank number alone, so ranks can be written in any order
 * and in parallel, and no simulator run is needed.
 *
 * The job: N = tp x pp x dp ranks, global rank r = ((d * pp) + s) * tp + t
 * (t the tensor-parallel rank, s the pipeline stage, d the data-parallel
 * replica).  Four communicators per rank: world (N ranks), TP (the tp ranks
 * of one (d, s)), PP (the pp stages of one (d, t)), DP (the dp replicas of
 * one (s, t)); TP, PP and DP are CommSplits of world.  Each training step
 * issues 16 calls (synth.c, step_ops): a grouped Recv from the previous
 * stage, two TP AllReduces, a grouped Send to the next stage, two more TP
 * AllReduces, two DP ReduceScatters, two DP AllGathers, a world AllReduce
 * (the loss) and a world Broadcast; one step every SYNTH_STEP_NS, a few
 * microseconds to 2 ms of arrival jitter per rank and op, collectives
 * complete together.  Each rank's ring holds its last M records (records
 * before them were dropped), and the job hangs in its last step in the way
 * `fault` says.
 */
#ifndef FR_SYNTH_H
#define FR_SYNTH_H

#include <stdint.h>

#include "frz.h"

/* The hang injected in the last step. */
typedef enum {
  SYNTH_LAG = 0,      /* culprit never enqueues the world AllReduce the others wait in (C1) */
  SYNTH_MISMATCH = 1, /* culprit's world AllReduce has another count; all wait (C5) */
  SYNTH_CYCLE = 2     /* culprit and its TP neighbour: one waits in TP, the other in world,
                         each for the other (C10) */
} synth_fault;

typedef struct synth_job {
  int32_t nranks, tp, pp, dp;
  uint32_t records;       /* M: records retained per rank (the ring size) */
  synth_fault fault;
  int32_t culprit;        /* global rank */
  int32_t partner;        /* SYNTH_CYCLE: the other rank of the cycle; else -1 */
  uint64_t full_steps;    /* complete steps before the hung one */
  char job_id[FRZ_JOB_MAX];
} synth_job;

/* Wall time between steps, and the clock of the first step. */
#define SYNTH_STEP_NS UINT64_C(400000000)
#define SYNTH_T0_NS UINT64_C(5000000000000)
/* Wall clock (realtime) at monotonic SYNTH_T0_NS on host 0. */
#define SYNTH_REAL0_NS UINT64_C(1796000000000000000)
/* Ranks per host. */
#define SYNTH_RANKS_PER_HOST 8

/* Fill *j; culprit < 0 picks rank nranks/2 + 3 (mod nranks).  Returns 0,
 * or -1 with a message in err (nranks not tp x pp x dp, tp < 2, pp < 2,
 * records < 64, ...). */
int synth_init(synth_job *j, int32_t nranks, int32_t tp, int32_t pp, uint32_t records,
               synth_fault fault, int32_t culprit, char *err, size_t errlen);

/* One rank's dump content: process header, comm table (4 entries) and
 * retained records (at most j->records, in record-id order).  The arrays
 * are malloc'd (free with synth_rank_free).  Returns 0 or -1 (no memory). */
typedef struct synth_rank {
  frz_process proc;
  frz_comm comms[4];      /* world, TP, PP, DP */
  uint32_t ncomms;
  frz_record *rec;
  uint32_t nrec;
} synth_rank;

int synth_rank_build(const synth_job *j, int32_t rank, synth_rank *out);
void synth_rank_free(synth_rank *r);

/* Comm ids and sizes of a rank's comms (index as in synth_rank.comms). */
enum { SYNTH_WORLD = 0, SYNTH_TP = 1, SYNTH_PP = 2, SYNTH_DP = 3 };
uint64_t synth_comm_id(const synth_job *j, int32_t rank, int which);

/* A rank's host name ("node00012") and its monotonic clock's offset from
 * host 0's (ns; hosts booted at different times). */
void synth_host(int32_t rank, char *buf, size_t len);
int64_t synth_host_offset_ns(int32_t rank);

/* Parse "lag", "mismatch", "cycle"; -1 unknown. */
int synth_fault_from_name(const char *s);
const char *synth_fault_name(synth_fault f);

/* Write rank `rank` as a PyTorch Flight Recorder pickle (protocol 2, format
 * version 2.10, as ProcessGroupNCCL dumps it; synth_pickle.c) to `path`.
 * Returns 0 or -1 with errno set. */
int synth_write_pytorch(const synth_job *j, const synth_rank *r, const char *path);

/* Write rank `rank` as the ring file (frz.md, "Ring files") its recorder
 * would have left in `dir` when killed (synth_ring.c): the same records,
 * comms and process, read as gone on any host.  Adds the file's size to
 * *bytes.  Returns 0 or -1 with errno set. */
int synth_write_ring(const synth_job *j, const synth_rank *r, const char *dir, uint64_t *bytes);

#endif /* FR_SYNTH_H */
