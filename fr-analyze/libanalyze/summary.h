/* summary.h — the phrases the verdict's summary is written from
 * (summary_phrase.c), shared by summary.c: a growing string and the ways
 * ranks, comm ranks and ops are named in the user's words.  Internal to
 * libanalyze. */
#ifndef FR_SUMMARY_H
#define FR_SUMMARY_H

#include <stddef.h>

#include "internal.h"

/* A growing string; oom is set (and the text left as it was) when growing
 * it fails. */
typedef struct sbuf {
  char *s;
  size_t n, cap;
  int oom;
} sbuf;

/* Appends printf-style text to b. */
void sb_printf(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* "rank 5" or "ranks 0-4,6-7" into buf (len bytes). */
const char *ranks_phrase(const fa_ranks *r, char *buf, size_t len);
/* Why ranks r left no dump, as the announcements tell: "; rank 5 was running (...)". */
void say_no_dump(const fa_analysis *a, const fa_ranks *r, sbuf *b);
/* given.c: the ranks whose dumps lie beside the inputs, said as outside
 * them (not as ranks that left no dump), into b. */
void say_beside(const fa_analysis *a, sbuf *b);
/* given.c: no dump, only announcements: who was running, into b. */
void say_alive_only(const fa_analysis *a, sbuf *b);
/* Are all of c's lagging members ones that left it (how 1) or whose process ended with the op in flight (how 2)? */
int lagging_all(const fa_comm *c, int how);
/* Does some process hold several comm ranks of c (CommInitAll)? */
int several_per_process(const fa_comm *c);
/* "comm ranks 0 (device 0), 2 (device 2) of rank 0" for c's members in state s (at most 4 named). */
const char *comm_ranks_phrase(const fa_analysis *a, const fa_comm *c, fa_member_state s, char *buf, size_t len);
/* The unplaced members of a comm that never formed, said into b; how many (0: none). */
int say_candidates(const fa_comm *c, sbuf *b);
/* "waits" after one rank, "wait" after several. */
const char *wait_verb(const fa_ranks *r);
/* Where the members of c in o tore it down, against its stuck seq: "at", "before" or "at or before". */
const char *torn_where(const fa_comm *c, const fa_ranks *o);
/* "AllReduce seq 37" for comm c into buf, or "collective seq 37" when unknown. */
const char *op_phrase(const fa_analysis *a, const fa_comm *c, uint64_t seq, char *buf, size_t len);
const frz_record *replay_of(const fa_analysis *a, const fa_comm *c, uint64_t seq);

/* NCCL's name of an ncclResult_t value (nccl.h: 0 ncclSuccess .. 7
 * ncclInProgress); "error N" for others. */
const char *nccl_result_phrase(int32_t r, char *buf, size_t len);

/* "; rank 2's process was gone when its ring file was salvaged (...), 1.4 s
 * before ...; it was in host code: ..." for each root cause whose dump was
 * made from its ring file (salvaged.c). */
void fa_say_salvaged(const fa_analysis *a, sbuf *b);

/* Is g in r? */
static inline int has_rank(const fa_ranks *r, int32_t g)
{
  for (uint32_t i = 0; i < r->n; i++)
    if (r->v[i] == g) return 1;
  return 0;
}

/* summary_member.c: the members of the stuck comm, as the summary says them */
int passed_unrecorded(const fa_analysis *a, const fa_comm *c);
int queued_behind_p2p(const fa_analysis *a, const fa_comm *c, const fa_member *m);
int split_queued(const fa_analysis *a, const fa_comm *c, fa_ranks *w, fa_ranks *q);
int lagging_behind(const fa_comm *c);
int not_returned_any(const fa_comm *c);
int not_started_any(const fa_comm *c);
int lagging_how(const fa_analysis *a, const fa_comm *c, int flag);
void say_failed_call(const fa_analysis *a, const fa_comm *c, const fa_ranks *lag, sbuf *b);
void say_not_run(const fa_analysis *a, const fa_comm *c, const fa_ranks *lag, sbuf *b);
int say_exited(const fa_analysis *a, const fa_ranks *r, sbuf *b);
void say_async_errors(const fa_analysis *a, const fa_ranks *r, sbuf *b);
void say_stopped_links(const fa_comm *c, sbuf *b);
const fa_problem *unread_dump(const fa_analysis *a, int32_t g);
void say_unread_alternative(const fa_analysis *a, int32_t g, const fa_comm *own, sbuf *b);

#endif
