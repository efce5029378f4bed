/* explain.h — from the verdict to action: where each culprit lives, what
 * to do next (next_steps.c), and which rules decided the verdict on which
 * records (evidence.c).  Built on demand from a finished analysis
 * (fa_run called); nothing here changes the verdict.
 *
 * Rule and step-kind names are stable: fr-analyze(1) defines each
 * (RULES, WHAT TO DO), formats/analysis-json.md lists them. */
#ifndef FR_ANALYZE_EXPLAIN_H
#define FR_ANALYZE_EXPLAIN_H

#include <stdint.h>
#include <stdio.h>

#include "analyze.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Where a global rank's process ran, as its latest dump says (or, without
 * a dump, its announcement, frz.md "Announcements").  PyTorch's Flight
 * Recorder writes neither host nor pid: both stay unknown for its dumps. */
typedef struct fa_place {
  int32_t rank;                /* global rank */
  char host[FRZ_HOST_MAX];     /* "" unknown */
  uint32_t pid;                /* 0 unknown */
  int32_t gpu;                 /* CUDA device ordinal of the comm concerned; -1 unknown */
  uint8_t from_dump;           /* host and pid come from its dump */
  uint8_t from_announcement;   /* ... from its announcement (it left no dump) */
  uint8_t pytorch;             /* its dump is PyTorch's (no host, no pid in it) */
  uint8_t python;              /* its dump holds Python frames, or is PyTorch's */
  const char *file;            /* the dump file analysed; NULL none */
} fa_place;

/* Where global rank g ran; comm (index into a->comms, -1 any) picks the
 * GPU.  Never fails: what is not known stays unknown. */
void fa_rank_place(const fa_analysis *a, int32_t g, int32_t comm, fa_place *p);

/* ---- what to do next ---------------------------------------------------- */

/* One next step.  kind is one of the stable names of fr-analyze(1), WHAT TO
 * DO: "stack", "gpu", "nccl-error", "process-end", "teardown", "code",
 * "network", "timeout", "no-dump", "trigger", "inputs", "redump", "node",
 * "evict", "config", "none". */
typedef struct fa_next_step {
  const char *kind;            /* static */
  int32_t rank;                /* the global rank it is about; -1 none */
  fa_place where;              /* valid when rank >= 0 */
  char *text;                  /* what to do and why, one sentence (malloc'd) */
  char *command;               /* the command to run, NULL none (malloc'd) */
  char *host;                  /* the host to run it on; NULL any (malloc'd) */
} fa_next_step;

/* The next steps of a's verdict, most useful first, into *out (*n of them;
 * free with fa_next_steps_free).  `dir` names the dump directory in the
 * commands (NULL: the directory of the first input file).  0 or -1 (out of
 * memory). */
int fa_next_steps(const fa_analysis *a, const char *dir, fa_next_step **out, uint32_t *n);
void fa_next_steps_free(fa_next_step *s, uint32_t n);

/* ---- why: the rules that decided the verdict ------------------------------- */

/* One record a rule read: a member of a comm at a seq, in a state, from a
 * dump frame. */
typedef struct fa_evidence_rec {
  int32_t rank;                /* global rank; -1 unknown */
  int32_t comm;                /* index into a->comms; -1 none */
  int64_t seq;                 /* collective (or p2p) seq; -1 none */
  const char *state;           /* "waiting", "lagging", "completed", ... (static) */
  int32_t frame;               /* index into a->frames of the dump read; -1 none (no dump) */
} fa_evidence_rec;

/* One rule that decided the verdict.  rule is one of the stable names of
 * fr-analyze(1), RULES. */
typedef struct fa_evidence {
  const char *rule;            /* static */
  char *text;                  /* what it found (malloc'd) */
  fa_evidence_rec *recs;       /* the records it read, the deciding ones first */
  uint32_t nrecs;
  uint32_t more;               /* records of the same kind not listed */
} fa_evidence;

/* The rules behind a's verdict, in the order they decided it, into *out
 * (free with fa_evidence_free).  0 or -1 (out of memory). */
int fa_evidence_list(const fa_analysis *a, fa_evidence **out, uint32_t *n);
void fa_evidence_free(fa_evidence *e, uint32_t n);

/* ---- their reports ------------------------------------------------------------- */

/* "what to do:" section of the text report, within 80 columns. */
int fa_next_steps_text(FILE *o, const fa_analysis *a);
/* "why:" section of the text report (--why), within 80 columns. */
int fa_evidence_text(FILE *o, const fa_analysis *a);
/* The same as JSON arrays (formats/analysis-json.md: verdict.next_steps,
 * verdict.evidence); NULL out of memory. */
struct cJSON;
struct cJSON *fa_next_steps_json(const fa_analysis *a);
struct cJSON *fa_evidence_json(const fa_analysis *a);

/* One record as the reports write it: "rank 5, comm 71208e98c6960047, seq
 * 73, lagging, file x-r00005-f0000.frz frame 0", into buf.  Returns buf. */
char *fa_evidence_rec_text(const fa_analysis *a, const fa_evidence_rec *r, char *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif /* FR_ANALYZE_EXPLAIN_H */
