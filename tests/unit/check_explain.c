/* check_explain.c — the verdict as the simplest explanation: hang kinds
 * whose cause the dumps hold but that a rule per family missed, each at
 * several sizes, comms and op kinds (synthetic jobs, synth_job.h).
 *
 * Families:
 *  - an init that failed on one rank (comm flag INIT_FAILED, its record's
 *    result), its later calls on the comm failing at once: it never posted
 *    the op the others wait in;
 *  - a call that never returned (record still IN_CALL) while every other
 *    member posted the op;
 *  - members that ran one op with another algorithm or protocol;
 *  - an op captured into a CUDA graph that was never launched, and a group
 *    that was never ended: records that never ran;
 *  - an all-to-all-v whose split sizes disagree: every unmatched transfer
 *    touches one rank;
 *  - several comms that never formed, each missing the same ranks.
 * Every case also checks that the verdict leaves no observation unexplained.
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze.h"
#include "frz.h"

#include "synth_job.h"

#define WORLD 0x00000000000000c1ull
#define SUB 0x3f1e6a0b94c2d701ull

static int has_substr(const char *hay, const char *needle)
{
  return hay && strstr(hay, needle) != NULL;
}

/* The last record rank r made. */
static frz_record *last_rec(job *j, int r)
{
  return &j->rec[r][j->nrec[r] - 1];
}

/* Assert the verdict: status, root causes (n of them in want), no
 * observation left unexplained. */
static void expect(const fa_analysis *a, fa_status st, const int32_t *want, uint32_t n, const char *what)
{
  const fa_verdict *v = &a->verdict;
  char got[256];
  fa_format_ranks(v->root_cause.v, v->root_cause.n, got, sizeof got);
  ck_assert_msg(v->status == st, "%s: status %s, want %s (%s)", what, fa_status_name(v->status),
                fa_status_name(st), v->summary);
  ck_assert_msg(ranks_are(&v->root_cause, want, n), "%s: root causes [%s] (%s)", what, got, v->summary);
  ck_assert_msg(v->nobs > 0, "%s: no observation", what);
  for (uint32_t i = 0; i < v->nobs; i++)
    ck_assert_msg(v->obs[i].by >= 0, "%s: observation %s of rank %d on comm %d unexplained (%s)", what,
                  fa_obs_kind_name(v->obs[i].kind), v->obs[i].rank, v->obs[i].comm, v->summary);
}

/* ---- an init that failed --------------------------------------------------------- */

/* W ranks on `id` (size W, comm rank = global rank): the init at seq 0
 * completes everywhere but on rank `bad`, whose init returned
 * ncclSystemError; `ok` ops complete on every other rank... no: every rank
 * but `bad` then enters one all-reduce at seq 1 and waits; `bad`'s call of
 * it fails at once (its comm is unusable) when `calls` is set. */
static job *init_failed_job(int w, int bad, int calls)
{
  job *j = job_new(w);
  job_world(j, WORLD);
  for (int r = 0; r < w; r++) life(j, r, WORLD, FRZ_OP_CommInitRank, 0);
  frz_record *x = &j->rec[bad][0];
  x->state = FRZ_STATE_FAILED;
  x->result = 2; /* ncclSystemError */
  x->t_complete_ns = 0;
  frz_comm *c = find_comm(j, bad, WORLD);
  c->flags |= FRZ_CF_INIT_FAILED;
  c->last_completed_seq = c->last_started_seq = -1;
  for (int r = 0; r < w; r++) {
    if (r != bad) {
      coll(j, r, WORLD, FRZ_OP_AllReduce, 1048576, 7, 0, -1, FRZ_STATE_STARTED);
    } else if (calls) {
      coll(j, r, WORLD, FRZ_OP_AllReduce, 1048576, 7, 0, -1, FRZ_STATE_FAILED);
      last_rec(j, r)->result = 4; /* ncclInvalidUsage */
    }
  }
  return j;
}

START_TEST(test_init_failed)
{
  static const struct { int w, bad, calls; } cases[] = {{8, 3, 1}, {8, 3, 0}, {4, 0, 1}, {16, 15, 1}, {2, 1, 1}};
  for (unsigned i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    job *j = init_failed_job(cases[i].w, cases[i].bad, cases[i].calls);
    fa_analysis *a = analyse(j);
    char what[64];
    snprintf(what, sizeof what, "init failed w%d bad %d calls %d", cases[i].w, cases[i].bad, cases[i].calls);
    int32_t want = cases[i].bad;
    expect(a, FA_STATUS_HANG, &want, 1, what);
    ck_assert_msg(has_substr(a->verdict.summary, "failed"), "%s: %s", what, a->verdict.summary);
    fa_free(a);
    job_free(j);
  }
}
END_TEST

/* The same in a sub-comm of 4 (ranks 4-7 of 8) made by a split: rank 6's
 * split failed; the other three wait in its first all-reduce; rank 6 went
 * on to the world all-reduce, where everyone else it needs is stuck. */
START_TEST(test_split_failed)
{
  job *j = job_new(8);
  job_world(j, WORLD);
  run(j, 0, 7, WORLD, 4);
  for (int r = 4; r < 8; r++) {
    job_comm(j, r, SUB, 4, r - 4);
    find_comm(j, r, SUB)->flags |= FRZ_CF_SPLIT;
    find_comm(j, r, SUB)->parent_id = WORLD;
    life(j, r, SUB, FRZ_OP_CommSplit, 1);
  }
  frz_record *x = last_rec(j, 6);
  x->state = FRZ_STATE_FAILED;
  x->result = 1; /* ncclUnhandledCudaError */
  frz_comm *c = find_comm(j, 6, SUB);
  c->flags |= FRZ_CF_INIT_FAILED;
  c->last_completed_seq = c->last_started_seq = -1;
  for (int r = 4; r < 8; r++)
    if (r != 6) coll(j, r, SUB, FRZ_OP_AllReduce, 4096, 7, 0, -1, FRZ_STATE_STARTED);
  coll(j, 6, WORLD, FRZ_OP_AllReduce, 1048576, 7, 0, -1, FRZ_STATE_STARTED);
  for (int r = 0; r < 4; r++) coll(j, r, WORLD, FRZ_OP_AllReduce, 1048576, 7, 0, -1, FRZ_STATE_STARTED);
  fa_analysis *a = analyse(j);
  static const int32_t want[] = {6};
  expect(a, FA_STATUS_HANG, want, 1, "split failed");
  fa_free(a);
  job_free(j);
}
END_TEST

/* ---- a call that never returned ---------------------------------------------------- */

/* W ranks; after `done` completed ops every rank but `lag` enters the next
 * op and waits; `stuck`'s call of it never returned (IN_CALL); with lag >= 0
 * that rank never called it at all. */
static job *in_call_job(int w, int stuck, int lag, unsigned op)
{
  job *j = job_new(w);
  job_world(j, WORLD);
  run(j, 0, w - 1, WORLD, 9);
  for (int r = 0; r < w; r++) {
    if (r == lag) continue;
    coll(j, r, WORLD, op, 65536, 7, op == FRZ_OP_AllReduce ? 0 : 255, -1,
         r == stuck ? FRZ_STATE_ENQUEUED : FRZ_STATE_STARTED);
    if (r == stuck) {
      frz_record *x = last_rec(j, r);
      x->flags |= FRZ_RF_IN_CALL;
      x->result = -1;
    }
  }
  return j;
}

START_TEST(test_call_never_returned)
{
  static const struct { int w, stuck; unsigned op; } cases[] = {
      {8, 2, FRZ_OP_AllReduce}, {4, 0, FRZ_OP_AllGather}, {16, 9, FRZ_OP_ReduceScatter}, {2, 1, FRZ_OP_AllReduce}};
  for (unsigned i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    job *j = in_call_job(cases[i].w, cases[i].stuck, -1, cases[i].op);
    fa_analysis *a = analyse(j);
    char what[64];
    snprintf(what, sizeof what, "in call w%d rank %d", cases[i].w, cases[i].stuck);
    int32_t want = cases[i].stuck;
    expect(a, FA_STATUS_HANG, &want, 1, what);
    ck_assert_msg(has_substr(a->verdict.summary, "never returned"), "%s: %s", what, a->verdict.summary);
    ck_assert_msg(!a->verdict.all_joined, "%s: all joined", what);
    fa_free(a);
    job_free(j);
  }
  /* one member never called it: a first call of the collective may wait
   * inside for it (NCCL connects to peers inside the call): that member
   * alone is the cause */
  job *j = in_call_job(8, 2, 5, FRZ_OP_AllGather);
  fa_analysis *a = analyse(j);
  static const int32_t want[] = {5};
  expect(a, FA_STATUS_HANG, want, 1, "first call in progress beside a lagging rank");
  fa_free(a);
  job_free(j);
  /* ... but a call of a collective the member completed before on the comm
   * (its connections are up) that never returned is a fault of its own */
  j = in_call_job(8, 2, 5, FRZ_OP_AllReduce);
  a = analyse(j);
  static const int32_t want2[] = {2, 5};
  expect(a, FA_STATUS_HANG, want2, 2, "call never returned beside a lagging rank");
  fa_free(a);
  job_free(j);
}
END_TEST

/* ---- another algorithm or protocol ------------------------------------------------------ */

/* W ranks all in one all-reduce that nobody completes; ranks in [lo, hi]
 * ran it as Tree/LL128, the others as Ring/Simple. */
static job *algo_job(int w, int lo, int hi, int proto_only)
{
  job *j = job_new(w);
  job_world(j, WORLD);
  run(j, 0, w - 1, WORLD, 9);
  for (int r = 0; r < w; r++) {
    coll(j, r, WORLD, FRZ_OP_AllReduce, 1048576, 7, 0, -1, FRZ_STATE_STARTED);
    frz_record *x = last_rec(j, r);
    int other = r >= lo && r <= hi;
    x->algo = proto_only ? FRZ_ALGO_RING : other ? FRZ_ALGO_TREE : FRZ_ALGO_RING;
    x->proto = other ? FRZ_PROTO_LL128 : FRZ_PROTO_SIMPLE;
    x->flags |= FRZ_RF_PROFILER_SEEN;
  }
  return j;
}

START_TEST(test_algo_proto_split)
{
  /* half and half (two hosts of 4): no culprit, but a mismatch, not "all joined" */
  job *j = algo_job(8, 4, 7, 0);
  fa_analysis *a = analyse(j);
  expect(a, FA_STATUS_MISMATCH, NULL, 0, "algo 4:4");
  ck_assert(!a->verdict.all_joined);
  ck_assert_msg(has_substr(a->verdict.summary, "algorithm"), "%s", a->verdict.summary);
  fa_free(a);
  job_free(j);
  /* one host of 4 among 12: that host's ranks */
  j = algo_job(12, 8, 11, 1);
  a = analyse(j);
  static const int32_t want[] = {8, 9, 10, 11};
  expect(a, FA_STATUS_MISMATCH, want, 4, "proto 4 of 12");
  ck_assert_msg(has_substr(a->verdict.summary, "protocol"), "%s", a->verdict.summary);
  fa_free(a);
  job_free(j);
  /* one rank of 4 */
  j = algo_job(4, 1, 1, 0);
  a = analyse(j);
  static const int32_t want1[] = {1};
  expect(a, FA_STATUS_MISMATCH, want1, 1, "algo 1 of 4");
  fa_free(a);
  job_free(j);
}
END_TEST

/* ---- records that never ran ------------------------------------------------------------ */

/* W ranks; after 9 ops, every rank but `bad` enters an eager all-reduce and
 * waits; `bad` issued it on a capturing stream (the graph was never
 * launched) and then stopped in host code; with `group`, `bad` issued it
 * in a group that it never ended instead. */
static job *not_run_job(int w, int bad, int group)
{
  job *j = job_new(w);
  job_world(j, WORLD);
  run(j, 0, w - 1, WORLD, 9);
  for (int r = 0; r < w; r++) {
    coll(j, r, WORLD, FRZ_OP_AllReduce, 1048576, 7, 0, -1, FRZ_STATE_STARTED);
    if (r != bad) continue;
    frz_record *x = last_rec(j, r);
    x->state = FRZ_STATE_ENQUEUED;
    x->t_start_ns = 0;
    if (group) x->flags |= FRZ_RF_IN_GROUP | FRZ_RF_GROUP_OPEN;
    else x->flags |= FRZ_RF_GRAPH_CAPTURED | FRZ_RF_NO_TRACKING;
    frz_comm *c = find_comm(j, r, WORLD);
    c->last_started_seq = c->last_completed_seq; /* as the recorder writes it */
  }
  return j;
}

START_TEST(test_never_ran)
{
  static const struct { int w, bad, group; } cases[] = {{8, 5, 0}, {4, 0, 0}, {16, 11, 0}, {8, 5, 1}, {3, 2, 1}};
  for (unsigned i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    job *j = not_run_job(cases[i].w, cases[i].bad, cases[i].group);
    fa_analysis *a = analyse(j);
    char what[64];
    snprintf(what, sizeof what, "never ran w%d rank %d group %d", cases[i].w, cases[i].bad, cases[i].group);
    int32_t want = cases[i].bad;
    expect(a, FA_STATUS_HANG, &want, 1, what);
    fa_free(a);
    job_free(j);
  }
}
END_TEST

/* ---- all-to-all-v with split sizes that disagree -------------------------------------------- */

/* W ranks exchange in one group a send to and a receive from every other
 * rank (p2p seq 0 of each pair); rank `bad` computed its splits wrong: it
 * sends to `to` though `to` expects nothing from it (no receive posted
 * there), and posts no receive from `from`, which sends to it.  Every
 * group holds a transfer that never completes where it touches bad; the
 * others completed theirs. */
static job *a2av_job(int w, int bad, int to, int from)
{
  job *j = job_new(w);
  job_world(j, WORLD);
  run(j, 0, w - 1, WORLD, 9);
  for (int r = 0; r < w; r++)
    for (int p = 0; p < w; p++) {
      if (p == r) continue;
      int send_pending = (r == bad && p == to) || (r == from && p == bad);
      int skip_recv = (r == to && p == bad) || (r == bad && p == from);
      p2p(j, r, WORLD, FRZ_OP_Send, p, 0, send_pending ? FRZ_STATE_STARTED : FRZ_STATE_COMPLETED);
      last_rec(j, r)->flags |= FRZ_RF_IN_GROUP;
      if (!skip_recv) {
        p2p(j, r, WORLD, FRZ_OP_Recv, p, 0, FRZ_STATE_COMPLETED);
        last_rec(j, r)->flags |= FRZ_RF_IN_GROUP;
      }
    }
  /* the group holds: ranks bad and from have a send pending, so none of
   * their group's ops is complete */
  for (int r = 0; r < w; r++) {
    if (r != bad && r != from) continue;
    for (uint64_t k = 0; k < j->nrec[r]; k++) {
      frz_record *x = &j->rec[r][k];
      if (x->kind == FRZ_KIND_P2P && x->state == FRZ_STATE_COMPLETED) {
        x->state = FRZ_STATE_STARTED;
        x->t_complete_ns = 0;
      }
    }
  }
  return j;
}

START_TEST(test_alltoallv_splits)
{
  static const struct { int w, bad, to, from; } cases[] = {{4, 2, 3, 1}, {8, 5, 0, 7}, {8, 0, 1, 2}, {16, 9, 3, 12}};
  for (unsigned i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    job *j = a2av_job(cases[i].w, cases[i].bad, cases[i].to, cases[i].from);
    fa_analysis *a = analyse(j);
    char what[64];
    snprintf(what, sizeof what, "a2av w%d bad %d", cases[i].w, cases[i].bad);
    int32_t want = cases[i].bad;
    expect(a, FA_STATUS_HANG, &want, 1, what);
    fa_free(a);
    job_free(j);
  }
}
END_TEST

/* ---- comms that never formed, each missing the same ranks ------------------------------------ */

/* W ranks; the world formed and ran 5 ops; then each rank k of [1, W)
 * enters the creation of a pair comm with rank 0 (comm rank 1; rank 0 is
 * comm rank 0) that rank 0 never calls: rank 0 stopped in host code.  No
 * dump says which global rank each pair comm misses. */
static job *pairs_job(int w, int idle0)
{
  job *j = job_new(w);
  job_world(j, WORLD);
  run(j, 0, w - 1, WORLD, 5);
  for (int k = 1; k < w; k++) {
    uint64_t id = 0x7000000000000000ull + (uint64_t)k * 0x1111;
    job_comm(j, k, id, 2, 1);
    life(j, k, id, FRZ_OP_CommInitRank, 0);
    frz_record *x = last_rec(j, k);
    x->state = FRZ_STATE_ENQUEUED;
    x->flags |= FRZ_RF_IN_CALL;
    x->result = -1;
    x->t_complete_ns = 0;
    frz_comm *c = find_comm(j, k, id);
    c->flags |= FRZ_CF_PENDING;
    c->last_completed_seq = c->last_started_seq = -1;
  }
  (void)idle0;
  return j;
}

START_TEST(test_unformed_same_ranks)
{
  static const int sizes[] = {4, 8, 16};
  for (unsigned i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    job *j = pairs_job(sizes[i], 1);
    fa_analysis *a = analyse(j);
    char what[64];
    snprintf(what, sizeof what, "pairs w%d", sizes[i]);
    static const int32_t want[] = {0};
    expect(a, FA_STATUS_HANG, want, 1, what);
    fa_free(a);
    job_free(j);
  }
}
END_TEST

static Suite *explain_suite(void)
{
  Suite *s = suite_create("explain");
  TCase *t = tcase_create("families");
  tcase_add_test(t, test_init_failed);
  tcase_add_test(t, test_split_failed);
  tcase_add_test(t, test_call_never_returned);
  tcase_add_test(t, test_algo_proto_split);
  tcase_add_test(t, test_never_ran);
  tcase_add_test(t, test_alltoallv_splits);
  tcase_add_test(t, test_unformed_same_ranks);
  suite_add_tcase(s, t);
  return s;
}

int main(void)
{
  SRunner *sr = srunner_create(explain_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
