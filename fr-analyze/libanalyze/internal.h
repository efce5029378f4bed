/* internal.h — private helpers shared by the analyzer's source files. */
#ifndef FR_ANALYZE_INTERNAL_H
#define FR_ANALYZE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "analyze.h"

/* Grow *arr (of *cap elements of size `elem`) to hold at least `need`. */
int fa_grow(void *arr, uint32_t *cap, uint32_t need, size_t elem);

char *fa_strdup(const char *s);

/* Append g to r (capacity *cap). */
int fa_ranks_push(fa_ranks *r, uint32_t *cap, int32_t g);

/* ---- dumps made from ring files (salvaged.c) ---- */
/* Does a dump of trigger t say its process ended (exit, fatal signal, or
 * its ring file salvaged after it was gone)? */
int fa_trigger_ended(uint32_t t);
/* Is member m's frame a salvaged ring file (its process was gone)? */
int fa_member_salvaged(const fa_analysis *a, const fa_member *m);
/* Are the latest dumps of every rank of r (r->n > 0) salvaged ring files? */
int fa_ranks_salvaged(const fa_analysis *a, const fa_ranks *r);
/* A directory `dir` that holds no dump but announcements (.fr-alive-*):
 * the ring files they point to on this host (FR_RING_DIR, default
 * /dev/shm) into *out (*n malloc'd paths), and for the processes whose ring
 * file is not here (another host, or gone) a sentence that says where they
 * are and what to run into *pointer (malloc'd; NULL none).  0, or -1 out of
 * memory. */
int fa_alive_rings(const char *dir, char ***out, uint32_t *n, char **pointer);
/* Before the model: the ops that dumps with stale states (killed, stopped)
 * show pending but the other members' completions prove done are read as
 * completed (a->settled says which).  0, or -1 out of memory. */
int fa_settle_stale(fa_analysis *a);

/* ---- a two-rank cycle through a p2p op (astray.c) ---- */
enum { FA_ASTRAY_SKIPPED = 1, FA_ASTRAY_PEER = 2, FA_ASTRAY_REORDERED = 3, FA_ASTRAY_POSTPONED = 4,
       FA_ASTRAY_COMM = 5, FA_ASTRAY_LEFT_OUT = 6, FA_ASTRAY_NO_CREATE = 7 };
/* The rank of v's two-rank cycle (one p2p step, one collective step) that
 * went astray, by its own records: it skipped the p2p op it posted before
 * the collective in the round before (*how SKIPPED), or posted its first op
 * with a new peer while a peer it used waits for it (*how PEER); -1 none. */
int fa_cycle_astray(const fa_analysis *a, const fa_verdict *v, int *how);
/* Do most members of v's cycle's comms (up to 1024 of them) say by their
 * rounds that they changed, against those that kept theirs?  1 yes. */
int fa_rounds_changed_most(const fa_analysis *a, const fa_verdict *v);
/* Beside v's rank that went astray, the ranks that left out a call of a
 * stuck comm's stuck op the same way (into *out, sorted): members that never
 * enqueued it, wait in another comm, and whose rounds say they left such a
 * call out (fa_round_left_out).  -1 out of memory. */
int fa_left_out_too(const fa_analysis *a, const fa_verdict *v, fa_ranks *out);
/* The ranks (into *out, sorted) that a pending p2p op waits for, that wait
 * in an NCCL op themselves, and whose rounds say they left out the call
 * that p2p op needs (its receive, or its send) and went on
 * (fa_round_left_out); at most 1024 judged.  -1 out of memory. */
int fa_p2p_left_out(const fa_analysis *a, fa_ranks *out);
/* The one rank of v's cycle whose current round of ops is not what its
 * periodic pattern gives while every other rank of the cycle follows its
 * own (rounds.c); -1 none or not known. */
int32_t fa_round_changed(const fa_analysis *a, const fa_verdict *v);
/* Rank g's rounds over every comm it holds collectives of (rounds.c): 1 its
 * current round is not what its pattern gives, 0 it is, -1 unknown. */
int fa_round_judge(const fa_analysis *a, int32_t g);
/* Did rank g leave out a call alike sig (same comm, kind and op) that its
 * pattern makes, and go on to later calls?  Its rounds say it changed (no
 * comm says it kept), and some comm's current round is its pattern's round
 * with calls left out, one of them alike sig.  1 yes, 0 no or unknown. */
int fa_round_left_out(const fa_analysis *a, int32_t g, const frz_record *sig);
/* The call that cycle step o's p2p op waits for its counterpart to post, as
 * a record in *out (comm, kind P2P, op and direction the other side owes,
 * peer: o's comm rank; seq o's); NULL for a collective or uncertain step,
 * or one whose pending link is not found or whose counterpart left no dump. */
const frz_record *fa_awaited_p2p(const fa_analysis *a, const fa_wait_step *o, frz_record *out);

/* ---- p2p transfers that all touch one rank (splits.c) ---- */
/* The one rank (global) that every p2p transfer of c without a counterpart
 * touches, where there are two or more such transfers between ranks that
 * both reached that round of the exchange; the ranks on their other ends
 * into *others (sorted).  -1 none, -2 out of memory. */
int32_t fa_p2p_hub(const fa_analysis *a, const fa_comm *c, fa_ranks *others);

/* ---- waits outside NCCL (outside.c) ---- */
/* The frame of rank g's most relevant thread (its latest dump, not one
 * taken as it ended) that says it waits for another rank outside NCCL (a
 * unique id's exchange, a store key, an MPI broadcast or barrier); NULL
 * none.  Names one of outside.c's table, a static string. */
const char *fa_waits_outside(const fa_analysis *a, int32_t g);
/* Move the ranks of *roots that wait outside NCCL into *out (sorted), when
 * some rank of *roots does not; the first such frame into *frame (when
 * NULL).  -1 out of memory. */
int fa_drop_outside_waiters(const fa_analysis *a, fa_ranks *roots, fa_ranks *out, const char **frame);

/* ---- too late (late.c) ---- */
/* Members of stuck comm c that entered its stuck op only after every
 * member that gave up had (into *late; those into *left), and by how much
 * at most (*by_ns, wall clock).  Returns how many came late; -1 out of
 * memory.  Both sets empty when none did. */
int fa_came_late(const fa_analysis *a, const fa_comm *c, fa_ranks *late, fa_ranks *left, int64_t *by_ns);

/* ---- announcements (alive.c) ---- */
/* The newest announcement of global rank g of the job analysed; NULL none. */
const frz_alive *fa_alive_of(const fa_analysis *a, int32_t g);
/* Did member m of c, which left no dump, end its work with a clean exit?
 * It took part in the comm (a member with a dump completed, after the
 * creation, a tracked collective that needs every member), and left no
 * announcement where other processes of its job left theirs, in the one
 * directory every dump analysed is in: a recording process removes its own
 * at a clean exit (a killed one's stays).  Not when a file of its fails to
 * read (it began a dump), nor with dumps from several directories (one
 * node's of several gathered may be missing).  That it recorded at all is
 * taken from the job's uniform launch. */
int fa_ended_cleanly(const fa_analysis *a, const fa_comm *c, const fa_member *m);
/* Did any process of the job analysed announce itself? */
int fa_alive_any(const fa_analysis *a);
/* r split into the ranks that announced themselves and those that did not
 * (both empty when nobody of the job did).  -1 out of memory. */
int fa_alive_split(const fa_analysis *a, const fa_ranks *r, fa_ranks *announced, fa_ranks *silent);

/* given.c: the ranks whose dumps lie beside the analysed files, not given
 * (fa_analysis.beside, .beside_dir), by file name.  -1 out of memory. */
int fa_find_beside(fa_analysis *a);

/* report_brief.c: the text report's default sections after the verdict,
 * bounded at any scale (communicators counted, a few named; the input in a
 * few lines).  0 or -1. */
int fa_brief_text(FILE *o, const fa_analysis *a);
/* Text within 80 columns, broken at blanks: the first line `first` columns
 * in, the others `rest` (a word longer than a line stays whole). */
void fa_wrap_text(FILE *o, const char *text, int first, int rest);

/* Sort and remove duplicates. */
void fa_ranks_sort(fa_ranks *r);
/* Is global rank g in r, which fa_ranks_sort sorted?  (binary search) */
int fa_ranks_has(const fa_ranks *r, int32_t g);

/* Printf-like append to a malloc'd summary string. */
char *fa_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Comm id as 16 lowercase hex digits (buf of at least 17 bytes). */
char *fa_hex(uint64_t id, char *buf);

/* Number of FA_FIELD_* bits, and the name of bit i ("op", "count", ...). */
#define FA_NFIELDS 7
const char *fa_field_name(unsigned i);
/* util.c: "op, count" for FA_FIELD_* bits f, into buf; returns buf. */
const char *fa_field_names(unsigned f, char *buf, size_t len);

/* "AllReduce(1048576 x float32, sum)", "Broadcast(4096 x float32, root 0)";
 * lifecycle ops by name only. */
char *fa_sig_text(const fa_sig *s, char *buf, size_t len);
/* fa_sig_text, and where `fields` (FA_FIELD_*) hold the algorithm or the
 * protocol, how NCCL ran it: "AllReduce(...) as Ring/Simple". */
char *fa_sig_text_fields(const fa_sig *s, unsigned fields, char *buf, size_t len);

/* Threads for parallel work: FR_ANALYZE_THREADS when set (1..64), else the
 * CPUs this process may run on. */
unsigned fa_threads(void);

/* Call fn(ctx, i) for every i in [0, n), on up to fa_threads() threads (the
 * caller's among them); returns when all calls have returned.  fn must only
 * touch what belongs to its i. */
void fa_parallel_for(uint32_t n, void (*fn)(void *ctx, uint32_t i), void *ctx);

/* Seqs past this are not believed (a real job never gets near it) and are
 * clamped, so seq + 1 never overflows. */
#define FA_SEQ_MAX ((int64_t)1 << 62)

/* model.c: how a record's seq is to be read: its kind (kind NONE: an
 * unsequenced local event since frz 1.1; in 1.0 dumps and PyTorch imports
 * the op's kind). */
unsigned fa_rec_kind(const frz_dump *d, const frz_record *r);
/* counters.c: member m's counters of its comm, from its frame's comm entry
 * and retained records (m->frame, m->entry set). */
void fa_fill_member(const fa_analysis *a, fa_member *m);

/* Steps of fa_run, in order. */
int fa_model_build(fa_analysis *a);        /* model.c: ranks, comms, members */
/* absent.c: the members of comms that never formed that never called the
 * creation (fa_member.absent, .cand; fa_comm.unformed, .nabsent). */
int fa_absent_members(fa_analysis *a);
/* absent.c: the global ranks of members without a dump of formed comms
 * whose split keeps the global order (every key a global rank), where the
 * ranks without a dump between two known members are as many as the
 * members there (fa_member.global_rank, .global_inferred). */
void fa_place_members_in_order(fa_analysis *a);
/* absent.c: set fa_comm.unformed (before the members are placed). */
void fa_mark_unformed(fa_analysis *a);
/* instances.c: the claims of one comm id (n claims: frame, entry, global
 * rank, sorted by global rank) split into the groups that each made a comm
 * of that id: inst[i] for each claim, *ninst groups (1: no conflict).
 * 0 or -1. */
int fa_claim_instances(const fa_analysis *a, const uint32_t *frame, const uint32_t *entry,
                       const int32_t *g, uint32_t n, uint32_t *inst, uint32_t *ninst);
int fa_align_comm(fa_analysis *a, fa_comm *c);     /* analyze.c: stuck op, roles */
/* proofs.c: raise the counters of comm c's members that a completion of
 * another member proves joined (fa_align_comm, first) */
void fa_joined_by_all(const fa_analysis *a, fa_comm *c);
/* proofs.c: is replay record `at` of comm `id` in dump d queued behind an
 * earlier op of its replay that some member never posted?  1 yes, 0 no. */
int fa_replay_behind(const fa_analysis *a, const frz_dump *d, const frz_record *at, uint64_t id);
int fa_mismatch_comm(fa_analysis *a, fa_comm *c);  /* mismatch.c: first divergence */
/* mismatch.c: where members ran one op with other algorithms or protocols
 * and no side of the comm is a minority, the side whose setting a unique
 * minority of the job's ranks ran that op's signature with is the culprit
 * (fa_mismatch.culprit).  After every comm's first divergence is found. */
void fa_config_minority(fa_analysis *a);
/* own.c: members whose own part of the stuck op is the cause (unfinished,
 * not_started, not_returned, not_run); each 0 (never fails). */
int fa_unfinished(fa_analysis *a, fa_comm *c);
int fa_not_started(fa_analysis *a, fa_comm *c);
int fa_not_returned(fa_analysis *a, fa_comm *c);
int fa_not_run(fa_analysis *a, fa_comm *c);
/* own.c: the lowest seq at or before `upto` where member m's record of comm
 * c was captured into a CUDA graph (FRZ_RF_GRAPH_CAPTURED, not completed)
 * while another member with a dump called that seq eagerly; -1 none.  From
 * there on m's records are not where it stands (fa_not_run). */
int64_t fa_captured_alone(const fa_analysis *a, const fa_comm *c, const fa_member *m, uint64_t upto);
/* consequences.c: is global rank g one side of the chosen comm's first
 * divergence, a p2p pair that disagrees with no culprit? */
int fa_mismatch_pair_side(const fa_analysis *a, int32_t g);
/* consequences.c: where every p2p transfer without a counterpart of a comm
 * touches one rank (splits.c), that rank in place of the ranks on the other
 * ends (root causes and lagging); 0 or -1 (memory). */
int fa_hub_instead(fa_analysis *a, uint32_t *cap_r);
/* consequences.c: members done by their own count on a comm whose calls
 * diverge from its culprit's on to the stuck op: dropped from the root
 * causes (verdict.shifted_comm set); 0. */
int fa_shifted_done(fa_analysis *a);
int fa_p2p_comm(fa_analysis *a, fa_comm *c);       /* p2p.c: unmatched Send/Recv */
/* Mark comm c's members without a dump where the stuck collective's data
 * stopped (fa_member.data_stopped; links.c).  0, never fails. */
int fa_proxy_data_stopped(fa_analysis *a, fa_comm *c);
int fa_proxy_links(fa_analysis *a, fa_comm *c);    /* links.c: stopped links from proxy progress */
int fa_ring_links(fa_analysis *a, fa_comm *c);     /* analyze.c: inferred edges */
/* Append a link to c->links (capacity *cap).  0 or -1. */
int fa_add_link(fa_comm *c, uint32_t *cap, const fa_link *l);
/* Is member m on the side that has not joined (what the waiting side
 * waits for): lagging members, or when there are none, members without a
 * dump? */
/* analyze.c: is member m, unfinished in comm c beside a member whose comm
 * reported an async error, waiting for that one (its part never finishes
 * because that error broke the op)? */
int fa_unfinished_waits(const fa_comm *c, const fa_member *m);
int fa_member_blamed(const fa_comm *c, const fa_member *m);
/* Is record `at` of dump d (of comm `id`) queued on its CUDA stream behind
 * an op that did not finish (of another comm; or, for a p2p op or behind
 * one, of this comm too) and not of its group?  Ops of one stream run in
 * order: it has not started and waits for that op. */
int fa_rec_behind(const frz_dump *d, const frz_record *at, uint64_t id);
/* How long an op waits before an abort of its comm counts as giving up on
 * it (a watchdog's answer), not as a shutdown right behind it: 100 ms. */
#define FA_GAVE_UP_NS UINT64_C(100000000)
/* Did the process of dump d tear a comm (of id `id`, any when 0) down in
 * answer to a wait of its own: an op of it in flight when it aborted the
 * comm (flag ABORTED), or never completed when it destroyed or finalized
 * it, had waited FA_GAVE_UP_NS or more when that reaction began?  It gave up waiting: still a
 * waiter, not a cause. */
int fa_gave_up(const frz_dump *d, uint64_t id);
/* Did the process of dump d end (its dump written at exit or on a fatal
 * signal) with record r in flight after r had waited FA_GAVE_UP_NS or
 * more?  It gave up waiting without tearing anything down (PyTorch's
 * default watchdog, TORCH_NCCL_ASYNC_ERROR_HANDLING=3: dump, then SIGABRT):
 * still a waiter there, not a process that left with the op unfinished. */
int fa_waited_to_end(const frz_dump *d, const frz_record *r);
/* Did it so for any record of d? */
int fa_ended_waiting(const frz_dump *d);
/* Where work ended (ends.c).  Is member m done with its comm: its process
 * ended (latest dump at exit or on a fatal signal) or it tore the comm
 * down?  A PyTorch dump is taken as done. */
int fa_member_done(const fa_analysis *a, const fa_member *m);
/* Is lagging member m of c behind only the others' teardown, with p2p ops
 * of its on c in flight one p2p seq past where every member that tore c
 * down ended (all at one p2p seq)? */
int fa_p2p_past_end(const fa_analysis *a, const fa_comm *c, const fa_member *m);
/* The seq where another comm of m's split (same parent; same size unless
 * any_size, for evidence that only clears) ended, every member of it with
 * a dump having torn it down there after the ops m ran on c before seq
 * upto; -1 none. */
int64_t fa_sibling_end(const fa_analysis *a, const fa_comm *c, const fa_member *m, int64_t upto,
                       int any_size);
/* Did the process of rank index k end (its latest dump written at exit),
 * every comm it held torn down, nothing in flight, without having given up
 * waiting: the end of its work? */
int fa_rank_done(const fa_analysis *a, int32_t k);
/* When the reaction holding teardown record k began: the enqueue time
 * (monotonic ns) of the first of the run of teardown records (aborts,
 * destroys, finalizes) that holds k (react.c). */
uint64_t fa_teardown_run_start(const frz_dump *d, uint64_t k);
/* Dump d of a rank that gave up, read as of the moment its reaction began:
 * ops that started or completed later set back, their comm counters with
 * them, and what was in flight on a comm it then tore down flagged ABORTED
 * (react.c). */
uint64_t fa_as_of_reaction(frz_dump *d); /* when the reaction began (monotonic ns); 0 none */
/* The rank (index into a->ranks) of member m: its dump's, or for a member
 * that never called the comm's creation, its global rank's; -1 none. */
int32_t fa_member_node(const fa_analysis *a, const fa_member *m);
int fa_frames_progress(fa_analysis *a);    /* straggler.c: progress between frames */
int fa_stragglers(fa_analysis *a);         /* straggler.c: clock skew, late ranks */
/* Did some member of c complete more of c in its latest frame than in its
 * first (straggler.c)? */
int fa_comm_moved(const fa_analysis *a, const fa_comm *c);
int fa_verdict_build(fa_analysis *a);      /* verdict.c */
int fa_verdict_summary(fa_analysis *a);    /* summary.c: verdict.summary, once the verdict is built */
/* Global rank of the side of p2p link l that posted and waits. */
static inline int32_t fa_p2p_waiter(const fa_link *l)
{
  return l->pending_dir == FRZ_DIR_SEND ? l->src : l->dst;
}
int fa_stacks_build(fa_analysis *a);       /* stacks.c: relevant threads, stack classes */
/* The stack class the verdict shows for global rank g: -1 when it has
 * none, or when its latest dump was written at process exit (its threads
 * were running exit handlers, which says nothing of the hang). */
int32_t fa_verdict_stack_class(const fa_analysis *a, int32_t g);
void fa_stacks_free(fa_analysis *a);

/* The verdict's stack lines and the stack-classes section of the text
 * report (stacks_text.c), and their JSON (stacks_json.c; cJSON items). */
struct cJSON;
int fa_stacks_verdict_text(FILE *o, const fa_analysis *a);
int fa_stacks_classes_text(FILE *o, const fa_analysis *a);
struct cJSON *fa_stacks_verdict_json(const fa_analysis *a);
struct cJSON *fa_stacks_classes_json(const fa_analysis *a);

/* The wait-for graph across communicators, over ranks (waitgraph.c), built
 * after every rank's wait_comm is marked: a rank that waits in a blocked
 * comm points at the members that comm's waiting side waits for (its
 * lagging, unfinished or dead members) and a p2p waiter at its counterpart. */
typedef struct fa_wgraph fa_wgraph;
fa_wgraph *fa_wgraph_build(const fa_analysis *a);
void fa_wgraph_free(fa_wgraph *g);
/* Is rank k (index into a->ranks; -1 no dump), awaited in comm `comm` (-1:
 * through a p2p op), where a wait starts: it waits inside no NCCL call, or
 * its own work there never finished, or it has no dump? */
int fa_wgraph_is_root(const fa_wgraph *g, int32_t k, int32_t comm);
/* The global ranks where the waits of every waiting rank start (the ends of
 * every wait-for chain), sorted; *dead_ends: waits that end at members of
 * unknown rank without a dump.  0 or -1. */
int fa_wgraph_roots(const fa_analysis *a, const fa_wgraph *g, fa_ranks *out, uint32_t *dead_ends);
/* A cycle of waits that starts nowhere (a deadlock), as steps; *out NULL
 * when there is none.  0 or -1. */
int fa_wgraph_cycle(const fa_analysis *a, const fa_wgraph *g, fa_wait_step **out, uint32_t *n);
/* The global ranks that wait for good (every wait of theirs leads into a
 * cycle, whatever the uncertain comm ranks are), sorted.  0 or -1. */
int fa_wgraph_stuck(const fa_analysis *a, const fa_wgraph *g, fa_ranks *out);

/* The graph's nodes: the ranks (indexes into a->ranks), one hub per comm
 * (a->nranks + comm index: "the members its waiting side waits for"), then
 * one node for counterparts without a dump. */
uint32_t fa_wgraph_nodes(const fa_wgraph *g);
/* label_out[v] = the label of the nearest node t with label_in[t] >= 0
 * that v reaches along the waits (t itself included), -1 none; both arrays
 * of fa_wgraph_nodes(g) entries.  0 or -1. */
int fa_wgraph_reaching(const fa_wgraph *g, const int32_t *label_in, int32_t *label_out);

/* The verdict as an explanation (explain.c): the observations, the faults
 * of the verdict and which fault explains which observation, once the
 * verdict's root causes are final.  0 or -1. */
int fa_explain(fa_analysis *a);
/* observe.c: every observation of the analysis into *out (*n of them,
 * malloc'd; by -1: not yet explained).  0 or -1. */
int fa_observe(const fa_analysis *a, fa_obs **out, uint32_t *n);
/* faults.c: the verdict's faults (verdict.faults), from its root causes
 * and the faults of no one rank.  0 or -1. */
int fa_derive_faults(fa_analysis *a);
/* faults.c: the first fault of the verdict on comm ci; -1 none. */
int32_t fa_comm_fault(const fa_verdict *v, int32_t ci);

/* Is op a comm teardown (CommDestroy, CommFinalize, CommAbort)? */
static inline int fa_is_teardown(unsigned op)
{
  return op == FRZ_OP_CommDestroy || op == FRZ_OP_CommFinalize || op == FRZ_OP_CommAbort;
}

/* Comm-rank -> global-rank of a member, -1 unknown. */
static inline int32_t fa_global_of(const fa_comm *c, int32_t comm_rank)
{
  if (comm_rank < 0 || comm_rank >= c->size) return -1;
  return c->members[comm_rank].global_rank;
}

#endif /* FR_ANALYZE_INTERNAL_H */
