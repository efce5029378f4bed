/* check_waits.c — unit tests of the analyzer's rules on the creation of
 * communicators: comms that never formed (absent.c), one unique id used by
 * several groups (instances.c), and the wait-for graph through them
 * (waitgraph.c), on synthetic jobs (synth_job.h). */
#include "config.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "synth_job.h"

#define WORLD 0x00000000000000c1ull

/* Rank r enters the creation of comm id (comm rank cr of nranks) and does
 * not return: the recorder's entry and seq 0 in call. */
static void init_in_call(job *j, int r, uint64_t id, int nranks, int cr)
{
  job_comm(j, r, id, nranks, cr);
  frz_comm *c = find_comm(j, r, id);
  c->flags = FRZ_CF_PENDING;
  frz_record *x = push_rec_of(j, r, c);
  x->seq = c->next_seq++;
  x->op = FRZ_OP_CommInitRank;
  x->kind = FRZ_KIND_LIFE;
  x->dtype = x->redop = 255;
  x->peer = -1;
  x->state = FRZ_STATE_ENQUEUED;
  x->flags = FRZ_RF_IN_CALL | FRZ_RF_NO_TRACKING;
  x->result = -1;
  x->t_enqueue_ns = T0 + x->id * DT;
  c->last_enqueued_seq = 0;
}

/* Ranks 0-2 wait in the init of a 4-rank comm; rank 3, idle after the
 * world's ops, never called it: it is lagging and the root cause. */
START_TEST(test_never_formed_names_who_never_called)
{
  const uint64_t x = 0x1111222233334444ull;
  for (int variant = 0; variant < 2; variant++) {
    /* variant 1: the comm's rank order is reversed (key = -rank) */
    job *j = job_new(4);
    job_world(j, WORLD);
    run(j, 0, 3, WORLD, 5);
    for (int r = 0; r < 3; r++) init_in_call(j, r, x, 4, variant ? 3 - r : r);
    fa_analysis *a = analyse(j);
    const fa_comm *c = comm_of(a, x);
    ck_assert(c->unformed);
    ck_assert_uint_eq(c->nabsent, 1);
    const fa_member *m = &c->members[variant ? 0 : 3];
    ck_assert(m->absent);
    ck_assert_int_eq(m->global_rank, 3);
    ck_assert_int_eq(m->state, FA_MEMBER_LAGGING);
    ck_assert_int_eq(a->verdict.status, FA_STATUS_HANG);
    RANKS_EQ(&a->verdict.lagging, 3);
    RANKS_EQ(&a->verdict.root_cause, 3);
    ck_assert_uint_eq(a->verdict.nlinks, 0); /* a comm that never formed has no links */
    ck_assert_ptr_nonnull(strstr(a->verdict.summary, "never called CommInitRank"));
    fa_free(a);
    job_free(j);
  }
}
END_TEST

/* Pairwise comms, each rank in the creation of its first pair: nothing
 * places the other end of any pair, yet every rank waits for good: a
 * deadlock, every rank a root cause, the cycle's steps uncertain. */
START_TEST(test_pair_init_cycle_is_a_deadlock)
{
  for (int n = 3; n <= 5; n++) {
    job *j = job_new(n);
    job_world(j, WORLD);
    run(j, 0, n - 1, WORLD, 3);
    for (int r = 0; r < n; r++) init_in_call(j, r, 0xab00000000000000ull + (uint64_t)r, 2, 0);
    fa_analysis *a = analyse(j);
    ck_assert_int_eq(a->verdict.status, FA_STATUS_DEADLOCK);
    ck_assert_uint_eq(a->verdict.root_cause.n, (uint32_t)n);
    ck_assert_uint_gt(a->verdict.ncycle, 0);
    int uncertain = 0;
    for (uint32_t i = 0; i < a->verdict.ncycle; i++) uncertain |= a->verdict.cycle[i].uncertain;
    ck_assert(uncertain);
    fa_free(a);
    job_free(j);
  }
}
END_TEST

/* The same pairs, but one rank is free (idle, outside NCCL): it is the one
 * rank every pair may be missing.  A cycle among the others would explain
 * the waits too, but takes three ranks at fault where the free rank alone
 * explains every wait (it never called any of the creations): the simplest
 * explanation names it, and no deadlock. */
START_TEST(test_pair_init_with_a_free_rank_names_it)
{
  job *j = job_new(4);
  job_world(j, WORLD);
  run(j, 0, 3, WORLD, 3);
  for (int r = 0; r < 3; r++) init_in_call(j, r, 0xcd00000000000000ull + (uint64_t)r, 2, 0);
  fa_analysis *a = analyse(j);
  ck_assert_int_ne(a->verdict.status, FA_STATUS_DEADLOCK);
  RANKS_EQ(&a->verdict.root_cause, 3);
  fa_free(a);
  job_free(j);
}
END_TEST

/* Two pairs make their comm from one unique id, the second 50 ms later;
 * rank 3 never enters seq 3 of it: the hang is inside the second group
 * (not "all joined"), and the shared id is a finding. */
START_TEST(test_shared_id_groups_analysed_apart)
{
  const uint64_t p = 0x5eed5eed5eed5eedull;
  job *j = job_new(4);
  job_world(j, WORLD);
  run(j, 0, 3, WORLD, 2);
  for (int r = 0; r < 4; r++) {
    job_comm(j, r, p, 2, r % 2);
    if (r >= 2) j->proc[r].records_total += 50; /* enters the creation later */
    life(j, r, p, FRZ_OP_CommInitRank, 0);
    for (int k = 0; k < 3; k++) step(j, r, p, FRZ_STATE_COMPLETED);
  }
  step(j, 2, p, FRZ_STATE_STARTED);
  fa_analysis *a = analyse(j);
  ck_assert_uint_eq(a->verdict.nshared, 1);
  const fa_comm *c0 = &a->comms[a->verdict.shared[0]], *c1 = c0 + 1;
  ck_assert_uint_eq(c0->ninstances, 2);
  ck_assert_int_eq(c0->members[0].global_rank, 0);
  ck_assert_int_eq(c0->members[1].global_rank, 1);
  ck_assert_int_eq(c1->members[0].global_rank, 2);
  ck_assert_int_eq(c1->members[1].global_rank, 3);
  ck_assert(!c0->stuck);
  ck_assert(c1->stuck);
  ck_assert_int_eq(a->verdict.status, FA_STATUS_HANG);
  ck_assert(!a->verdict.all_joined);
  RANKS_EQ(&a->verdict.root_cause, 3);
  cJSON *js = json_of(a);
  JSON_IS(js, "verdict.shared_ids", "[{\"comm\":\"5eed5eed5eed5eed\",\"groups\":[[0,1],[2,3]]}]");
  cJSON_Delete(js);
  fa_free(a);
  job_free(j);
}
END_TEST

/* One process, three comm ranks of one comm (CommInitAll): comm rank 1
 * never enqueued seq 4 while 0 and 2 wait in it: the process's own call
 * is missing: a hang with rank 0 the root cause, not a cycle on itself. */
START_TEST(test_initall_own_missing_call)
{
  const uint64_t clique = 0xc11c0e0000000001ull;
  job *j = job_new(1);
  for (int d = 0; d < 3; d++) job_comm(j, 0, clique, 3, d);
  for (int k = 0; k < 5; k++)
    for (int d = 0; d < 3; d++)
      if (k < 4) coll_on(j, 0, &j->comm[0][d], FRZ_OP_AllReduce, 1024, 7, 0, -1, FRZ_STATE_COMPLETED);
      else if (d != 1) coll_on(j, 0, &j->comm[0][d], FRZ_OP_AllReduce, 1024, 7, 0, -1, FRZ_STATE_STARTED);
  fa_analysis *a = analyse(j);
  ck_assert_int_eq(a->verdict.status, FA_STATUS_HANG);
  ck_assert_ptr_null(a->verdict.cycle);
  RANKS_EQ(&a->verdict.root_cause, 0);
  ck_assert_ptr_nonnull(strstr(a->verdict.summary, "comm rank 1"));
  fa_free(a);
  job_free(j);
}
END_TEST

/* Rank r aborts comm id `after_ns` after its last record's enqueue: its
 * records in flight flagged ABORTED, the unsequenced CommAbort record, the
 * comm flagged. */
static void abort_comm(job *j, int r, uint64_t id, uint64_t after_ns)
{
  uint64_t t = 0;
  for (uint64_t i = 0; i < j->nrec[r]; i++) {
    frz_record *x = &j->rec[r][i];
    if (x->comm_id != id) continue;
    if (x->state != FRZ_STATE_COMPLETED && x->kind == FRZ_KIND_COLL) x->flags |= FRZ_RF_ABORTED;
    if (x->t_enqueue_ns > t) t = x->t_enqueue_ns;
  }
  frz_comm *c = find_comm(j, r, id);
  frz_record *x = push_rec_of(j, r, c);
  x->op = FRZ_OP_CommAbort;
  x->kind = FRZ_KIND_NONE;
  x->dtype = x->redop = 255;
  x->peer = -1;
  x->state = FRZ_STATE_COMPLETED;
  x->flags = FRZ_RF_NO_TRACKING;
  x->t_enqueue_ns = t + after_ns;
  x->t_start_ns = x->t_enqueue_ns;
  x->t_complete_ns = x->t_enqueue_ns + DT / 2;
  c->flags |= FRZ_CF_ABORTED;
}

/* One rank aborts the comm right behind its op (its record still says only
 * enqueued: the abort cut it off); the others wait in the op, or completed it
 * (the op moved) and wait in the next.  It left: lagging and the root cause,
 * whatever the comm's size, the op and which rank.  Had it waited 100 ms or
 * more before aborting, it gave up: a waiter, never blamed. */
START_TEST(test_abort_right_behind_the_op_left)
{
  static const struct { int n, who, passed; unsigned op; uint64_t after; int blamed; } v[] = {
      {4, 0, 0, FRZ_OP_AllReduce, DT / 4, 1},   {8, 5, 0, FRZ_OP_AllGather, DT / 4, 1},
      {2, 0, 1, FRZ_OP_AllReduce, DT / 4, 1},   {4, 3, 1, FRZ_OP_ReduceScatter, DT, 1},
      {4, 0, 0, FRZ_OP_AllReduce, 200 * DT, 0}, {2, 1, 1, FRZ_OP_AllReduce, 300 * DT, 0},
  };
  for (size_t k = 0; k < sizeof v / sizeof v[0]; k++) {
    job *j = job_new(v[k].n);
    job_world(j, WORLD);
    run(j, 0, v[k].n - 1, WORLD, 3);
    for (int r = 0; r < v[k].n; r++) {
      int moved = v[k].passed && r != v[k].who;
      coll(j, r, WORLD, v[k].op, 4096, 7, 0, -1,
           r == v[k].who ? FRZ_STATE_ENQUEUED : moved ? FRZ_STATE_COMPLETED : FRZ_STATE_STARTED);
      if (moved) coll(j, r, WORLD, v[k].op, 1024, 7, 0, -1, FRZ_STATE_STARTED);
    }
    if (v[k].passed) coll(j, v[k].who, WORLD, v[k].op, 1024, 7, 0, -1, FRZ_STATE_ENQUEUED);
    abort_comm(j, v[k].who, WORLD, v[k].after);
    fa_analysis *a = analyse(j);
    ck_assert_msg(a->verdict.status == FA_STATUS_HANG, "variant %zu: status %d", k, a->verdict.status);
    if (v[k].blamed) {
      ck_assert_msg(a->verdict.root_cause.n == 1 && a->verdict.root_cause.v[0] == v[k].who,
                    "variant %zu: root cause not rank %d alone", k, v[k].who);
      ck_assert_ptr_nonnull(strstr(a->verdict.summary, "down"));
    } else {
      for (uint32_t i = 0; i < a->verdict.root_cause.n; i++)
        ck_assert_msg(a->verdict.root_cause.v[i] != v[k].who, "variant %zu: blamed rank %d that gave up", k,
                      v[k].who);
    }
    fa_free(a);
    job_free(j);
  }
}
END_TEST

/* The last record of rank r. */
static frz_record *last_rec(job *j, int r)
{
  return &j->rec[r][j->nrec[r] - 1];
}

/* Rank 2 waits in an all-reduce of comm D for rank 0 (stopped outside
 * NCCL) with a send to rank 1 queued behind it on its stream; rank 1 waits
 * in the receive.  Rank 2's watchdog aborts D after 600 ms, and its stream
 * goes on: the send starts (or completes) after the abort.  Read as of the
 * abort, the send was queued behind the aborted op, not posted: rank 1
 * waits for rank 2, rank 2 for rank 0, the root.  Read as it was dumped, the
 * pair looks matched and in flight, and rank 1 (waiting for nobody) was
 * blamed.  Variants: the send started or completed after the abort, on
 * comms of other sizes. */
START_TEST(test_reaction_read_as_of_its_start)
{
  const uint64_t D = 0x00000000000000d1ull;
  for (int v = 0; v < 4; v++) {
    int n = v < 2 ? 3 : 5, waiter = n - 1, peer = 1;
    job *j = job_new(n);
    job_world(j, WORLD);
    job_comm(j, 0, D, 2, 0);
    job_comm(j, waiter, D, 2, 1);
    run(j, 0, n - 1, WORLD, 2);
    for (int k = 0; k < 2; k++) {
      coll(j, 0, D, FRZ_OP_AllReduce, 4096, 7, 0, -1, FRZ_STATE_COMPLETED);
      coll(j, waiter, D, FRZ_OP_AllReduce, 4096, 7, 0, -1, FRZ_STATE_COMPLETED);
    }
    coll(j, waiter, D, FRZ_OP_AllReduce, 4096, 7, 0, -1, FRZ_STATE_STARTED);
    p2p(j, waiter, WORLD, FRZ_OP_Send, peer, 0, FRZ_STATE_ENQUEUED);
    frz_record *send = last_rec(j, waiter);
    send->stream = 0x5000 + (uint64_t)waiter;
    p2p(j, peer, WORLD, FRZ_OP_Recv, waiter, 0, FRZ_STATE_STARTED);
    last_rec(j, peer)->stream = 0x5000 + (uint64_t)peer;
    last_rec(j, peer)->t_start_ns = last_rec(j, peer)->t_enqueue_ns + DT / 10;
    for (int r = 1; r < n; r++) /* the world's next all-reduce, behind each one's p2p or D op */
      coll(j, r, WORLD, FRZ_OP_AllReduce, 1024, 7, 0, -1, FRZ_STATE_ENQUEUED);
    abort_comm(j, waiter, D, 600 * DT);
    send = NULL;
    for (uint64_t i = 0; i < j->nrec[waiter] && !send; i++)
      if (j->rec[waiter][i].kind == FRZ_KIND_P2P) send = &j->rec[waiter][i];
    uint64_t t_abort = last_rec(j, waiter)->t_enqueue_ns;
    send->state = v % 2 ? FRZ_STATE_COMPLETED : FRZ_STATE_STARTED;
    send->t_start_ns = t_abort + DT;
    if (v % 2) send->t_complete_ns = t_abort + 2 * DT;
    fa_analysis *a = analyse(j);
    ck_assert_msg(a->verdict.status == FA_STATUS_HANG, "variant %d: status %d", v, a->verdict.status);
    ck_assert_msg(a->verdict.root_cause.n == 1 && a->verdict.root_cause.v[0] == 0,
                  "variant %d: root cause not rank 0 alone (%u ranks, first %d)", v, a->verdict.root_cause.n,
                  a->verdict.root_cause.n ? a->verdict.root_cause.v[0] : -1);
    fa_free(a);
    job_free(j);
  }
}
END_TEST

/* Rank a sends to rank b, both posted and in flight; b's process then ended
 * (its last dump written at exit) with its receive in flight, right after
 * posting it; the others wait in the world's all-reduce, a's queued behind
 * its send.  b never completes the pair: a waits for b, and b alone is the
 * root, whichever ranks, direction and size.  When b ended only after its
 * receive had waited a minute (a watchdog's timeout that ends the process
 * without a teardown), it gave up waiting: the pair, both sides in it long,
 * never moved (device or network side) and nobody is blamed. */
START_TEST(test_p2p_counterpart_ended)
{
  static const struct { int n, a, b; } v[] = {{3, 0, 1}, {4, 2, 0}, {6, 5, 3}};
  for (size_t k = 0; k < 2 * sizeof v / sizeof v[0]; k++) {
    int waited = k >= sizeof v / sizeof v[0];
    if (waited) {
      job *j = job_new(v[k % 3].n);
      job_world(j, WORLD);
      run(j, 0, v[k % 3].n - 1, WORLD, 3);
      p2p(j, v[k % 3].a, WORLD, FRZ_OP_Send, v[k % 3].b, 0, FRZ_STATE_STARTED);
      last_rec(j, v[k % 3].a)->t_start_ns = last_rec(j, v[k % 3].a)->t_enqueue_ns + DT / 10;
      p2p(j, v[k % 3].b, WORLD, FRZ_OP_Recv, v[k % 3].a, 0, FRZ_STATE_STARTED);
      last_rec(j, v[k % 3].b)->t_start_ns = last_rec(j, v[k % 3].b)->t_enqueue_ns + DT / 10;
      j->proc[v[k % 3].b].trigger = FRZ_TRIGGER_EXIT; /* a minute after its receive (synth_job's frame time) */
      fa_analysis *a = analyse(j);
      ck_assert_msg(a->verdict.status == FA_STATUS_HANG, "variant %zu: status %d", k, a->verdict.status);
      ck_assert_msg(a->verdict.root_cause.n == 0, "variant %zu: rank %d blamed after giving up", k,
                    a->verdict.root_cause.n ? a->verdict.root_cause.v[0] : -1);
      fa_free(a);
      job_free(j);
      continue;
    }
    job *j = job_new(v[k].n);
    job_world(j, WORLD);
    run(j, 0, v[k].n - 1, WORLD, 3);
    p2p(j, v[k].a, WORLD, FRZ_OP_Send, v[k].b, 0, FRZ_STATE_STARTED);
    last_rec(j, v[k].a)->stream = 0x5000 + (uint64_t)v[k].a;
    last_rec(j, v[k].a)->t_start_ns = last_rec(j, v[k].a)->t_enqueue_ns + DT / 10;
    p2p(j, v[k].b, WORLD, FRZ_OP_Recv, v[k].a, 0, FRZ_STATE_STARTED);
    last_rec(j, v[k].b)->stream = 0x5000 + (uint64_t)v[k].b;
    last_rec(j, v[k].b)->t_start_ns = last_rec(j, v[k].b)->t_enqueue_ns + DT / 10;
    for (int r = 0; r < v[k].n; r++)
      if (r != v[k].b)
        coll(j, r, WORLD, FRZ_OP_AllReduce, 1024, 7, 0, -1, r == v[k].a ? FRZ_STATE_ENQUEUED : FRZ_STATE_STARTED);
    j->proc[v[k].b].trigger = FRZ_TRIGGER_EXIT;
    j->proc[v[k].b].frame_time_ns = last_rec(j, v[k].b)->t_enqueue_ns + DT; /* right after posting it */
    fa_analysis *a = analyse(j);
    ck_assert_msg(a->verdict.status == FA_STATUS_HANG, "variant %zu: status %d", k, a->verdict.status);
    ck_assert_msg(a->verdict.root_cause.n == 1 && a->verdict.root_cause.v[0] == v[k].b,
                  "variant %zu: root cause not rank %d alone (%u ranks, first %d)", k, v[k].b,
                  a->verdict.root_cause.n, a->verdict.root_cause.n ? a->verdict.root_cause.v[0] : -1);
    fa_free(a);
    job_free(j);
  }
}
END_TEST

/* Two ranks of a pipeline both in a transfer (send and receive posted and
 * started), neither done: dumped a minute after the calls it is stuck on
 * the link, nobody to blame; dumped 10 ms after them it is a transfer in
 * flight, no hang.  For several pairs and sizes. */
START_TEST(test_p2p_joined_pair)
{
  static const struct { int n, a, b; } v[] = {{2, 0, 1}, {4, 1, 2}, {6, 4, 3}};
  for (size_t k = 0; k < sizeof v / sizeof v[0]; k++)
    for (int late = 0; late < 2; late++) {
      job *j = job_new(v[k].n);
      job_world(j, WORLD);
      run(j, 0, v[k].n - 1, WORLD, 2);
      p2p(j, v[k].a, WORLD, FRZ_OP_Send, v[k].b, 0, FRZ_STATE_STARTED);
      last_rec(j, v[k].a)->t_start_ns = last_rec(j, v[k].a)->t_enqueue_ns + DT / 10;
      p2p(j, v[k].b, WORLD, FRZ_OP_Recv, v[k].a, 0, FRZ_STATE_STARTED);
      last_rec(j, v[k].b)->t_start_ns = last_rec(j, v[k].b)->t_enqueue_ns + DT / 10;
      for (int r = 0; r < v[k].n; r++) {
        uint64_t t = j->nrec[r] ? j->rec[r][j->nrec[r] - 1].t_enqueue_ns : T0;
        j->proc[r].frame_time_ns = late ? t + 60000 * DT : t + 10 * DT;
        j->proc[r].trigger_time_ns = j->proc[r].frame_time_ns;
      }
      fa_analysis *a = analyse(j);
      if (late) {
        ck_assert_msg(a->verdict.status == FA_STATUS_HANG, "variant %zu: status %d", k, a->verdict.status);
        ck_assert_msg(a->verdict.root_cause.n == 0 && a->verdict.lagging.n == 0, "variant %zu: a rank blamed", k);
        ck_assert_ptr_nonnull(strstr(a->verdict.summary, "neither completed"));
      } else {
        ck_assert_msg(a->verdict.status != FA_STATUS_HANG, "variant %zu: a transfer in flight read as a hang", k);
      }
      fa_free(a);
      job_free(j);
    }
}
END_TEST

int main(void)
{
  Suite *s = suite_create("waits");
  TCase *t = tcase_create("init");
  tcase_add_test(t, test_never_formed_names_who_never_called);
  tcase_add_test(t, test_pair_init_cycle_is_a_deadlock);
  tcase_add_test(t, test_pair_init_with_a_free_rank_names_it);
  tcase_add_test(t, test_shared_id_groups_analysed_apart);
  tcase_add_test(t, test_initall_own_missing_call);
  tcase_add_test(t, test_abort_right_behind_the_op_left);
  tcase_add_test(t, test_reaction_read_as_of_its_start);
  tcase_add_test(t, test_p2p_counterpart_ended);
  tcase_add_test(t, test_p2p_joined_pair);
  suite_add_tcase(s, t);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
