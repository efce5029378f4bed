/* synth_job.h: synthetic jobs for the analyzer's unit tests: frz_process,
 * frz_comm and frz_record structs built in memory (synth_job.c), handed to
 * the library decoded or written as dumps, and assertions on the result. */
#ifndef FR_SYNTH_JOB_H
#define FR_SYNTH_JOB_H

#include <cJSON.h>
#include <check.h>
#include <stdint.h>

#include "analyze.h"
#include "frz.h"

/* ---- a synthetic job ---------------------------------------------------------- */

#define MAXR 16
#define MAXC 4
#define T0 1000000000000ull /* CLOCK_MONOTONIC of the first record */
#define DT 1000000ull       /* 1 ms between ops */

typedef struct job {
  int n;
  frz_process proc[MAXR];
  frz_comm comm[MAXR][MAXC];
  uint32_t ncomm[MAXR];
  frz_record *rec[MAXR];
  uint64_t nrec[MAXR], cap[MAXR];
  int absent[MAXR]; /* no dump for this rank */
} job;

job *job_new(int n);

void job_free(job *j);

/* Give rank r comm rank `cr` of comm `id` (nranks members). */
void job_comm(job *j, int r, uint64_t id, int nranks, int cr);

/* Every rank of the job joins comm `id` with comm rank = global rank. */
void job_world(job *j, uint64_t id);

frz_comm *find_comm(job *j, int r, uint64_t id);

frz_record *push_rec(job *j, int r);

/* A record of rank r made by the comm rank of entry c (frz 1.3). */
frz_record *push_rec_of(job *j, int r, const frz_comm *c);

/* A collective on rank r by its comm entry c, at the entry's next seq. */
void coll_on(job *j, int r, frz_comm *c, unsigned op, uint64_t count, unsigned dtype,
                    unsigned redop, int root, unsigned state);

/* A collective on rank r, comm id, at the comm's next seq. */
void coll(job *j, int r, uint64_t id, unsigned op, uint64_t count, unsigned dtype,
                 unsigned redop, int root, unsigned state);

/* The usual op: AllReduce of 1M float32 (sum), a Broadcast every 4th seq. */
void step(job *j, int r, uint64_t id, unsigned state);

/* Ranks [lo, hi] run `nops` completed ops on comm id. */
void run(job *j, int lo, int hi, uint64_t id, int nops);

/* A p2p op of rank r (comm rank = r on comm id) with its own pair seq. */
void p2p(job *j, int r, uint64_t id, unsigned op, int peer, uint64_t seq, unsigned state);

/* A lifecycle op of rank r on comm id at the comm's next seq; `arg` stands
 * for what differs by design between ranks (a split color). */
void life(job *j, int r, uint64_t id, unsigned op, uint64_t arg);

/* Drop the oldest records of rank r so that comm id retains seqs >= first. */
void wrap(job *j, int r, uint64_t id, uint64_t first);

frz_dump dump_of(job *j, int r);

/* Analyse the job in memory. */
fa_analysis *analyse_opt(job *j, int stragglers_if_needed);

fa_analysis *analyse(job *j);

/* Write rank r's dump as DIR/NAME. */
void write_rank(job *j, int r, const char *dir, const char *name);

void write_job(job *j, const char *dir);

/* ---- assertions on the result ------------------------------------------------- */

int ranks_are(const fa_ranks *r, const int32_t *want, uint32_t n);

#define RANKS_EQ(r, ...)                                                              \
  do {                                                                                \
    static const int32_t want_[] = {__VA_ARGS__};                                     \
    char got_[256];                                                                   \
    ck_assert_msg(ranks_are((r), want_, sizeof want_ / sizeof want_[0]),              \
                  "ranks %s: got [%s]", #r, fa_format_ranks((r)->v, (r)->n, got_, sizeof got_)); \
  } while (0)

#define RANKS_NONE(r) ck_assert_msg((r)->n == 0, "%s not empty", #r)

const fa_comm *comm_of(const fa_analysis *a, uint64_t id);

cJSON *json_of(const fa_analysis *a);

/* The JSON value at a dotted path ("verdict.stuck.seq"). */
cJSON *jget(cJSON *root, const char *path);

/* A JSON array of numbers printed compactly, for comparisons. */
char *jtext(cJSON *root, const char *path);

#define JSON_IS(root, path, text)                                              \
  do {                                                                         \
    char *t_ = jtext((root), (path));                                          \
    ck_assert_msg(strcmp(t_, (text)) == 0, "%s: expected %s, got %s", (path), (text), t_); \
    cJSON_free(t_);                                                            \
  } while (0)

char *text_of(const fa_analysis *a);


#endif /* FR_SYNTH_JOB_H */
