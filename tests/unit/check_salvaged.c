/* check_salvaged.c — dumps made from ring files (salvaged.c): a rank killed
 * within one watchdog poll of its last ops completing still shows them
 * pending (process flag STATES_STALE); the analysis reads those the other
 * members' completions prove done as completed, and names the rank as a
 * process that ended, never as its device side stalling.  Each case has
 * its control: the same records in a dump the process wrote itself read
 * as before.
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

static int has_substr(const char *hay, const char *needle)
{
  return hay && strstr(hay, needle) != NULL;
}

/* Move every record of the job `ms` later: the ops ran shortly before the
 * others' dumps (T0 + 60 s), as in a job that a kill ended. */
static void shift(job *j, uint64_t ms)
{
  for (int r = 0; r < j->n; r++)
    for (uint64_t k = 0; k < j->nrec[r]; k++) {
      frz_record *x = &j->rec[r][k];
      x->t_enqueue_ns += ms * DT;
      if (x->t_start_ns) x->t_start_ns += ms * DT;
      if (x->t_complete_ns) x->t_complete_ns += ms * DT;
    }
}

/* Make rank r's dump one salvaged from its ring file after a kill: trigger
 * salvaged, states stale (unless `fresh`), its last sign of life 5 ms after
 * its newest record. */
static void salvaged(job *j, int r, int fresh)
{
  frz_process *p = &j->proc[r];
  uint64_t t = 0;
  for (uint64_t k = 0; k < j->nrec[r]; k++)
    if (j->rec[r][k].t_enqueue_ns > t) t = j->rec[r][k].t_enqueue_ns;
  p->trigger = FRZ_TRIGGER_SALVAGED;
  p->trigger_rank = -1;
  if (!fresh) p->flags |= FRZ_PF_STATES_STALE;
  p->frame_time_ns = p->trigger_time_ns = t + 5 * DT;
  snprintf(p->trigger_text, sizeof p->trigger_text,
           "salvaged: pid %u killed, no exit seen (SIGKILL, the OOM killer or a launcher)", p->pid);
}

/* W ranks all-reduce: every rank but `bad` completed `done` ops and waits
 * in the next; `bad` completed done - pend of them, the last `pend` still
 * started in its dump (completed after its watchdog's last poll). */
static job *killed_job(int w, int bad, int done, int pend)
{
  job *j = job_new(w);
  job_world(j, WORLD);
  for (int r = 0; r < w; r++) {
    int ok = r == bad ? done - pend : done;
    for (int k = 0; k < ok; k++) coll(j, r, WORLD, FRZ_OP_AllReduce, 4096, 7, 0, -1, FRZ_STATE_COMPLETED);
    if (r == bad)
      for (int k = 0; k < pend; k++) coll(j, r, WORLD, FRZ_OP_AllReduce, 4096, 7, 0, -1, FRZ_STATE_STARTED);
    else
      coll(j, r, WORLD, FRZ_OP_AllReduce, 4096, 7, 0, -1, FRZ_STATE_STARTED);
  }
  return j;
}

static fa_fault_kind fault_of(const fa_analysis *a, int32_t g)
{
  for (uint32_t i = 0; i < a->verdict.nfaults; i++)
    if (a->verdict.faults[i].rank == g) return a->verdict.faults[i].kind;
  return FA_FAULT_NKINDS;
}

static void all_explained(const fa_analysis *a, const char *what)
{
  for (uint32_t i = 0; i < a->verdict.nobs; i++)
    ck_assert_msg(a->verdict.obs[i].by >= 0, "%s: observation %s of rank %d unexplained (%s)", what,
                  fa_obs_kind_name(a->verdict.obs[i].kind), a->verdict.obs[i].rank, a->verdict.summary);
}

START_TEST(test_killed_after_completion)
{
  static const struct { int w, bad, done, pend; } cases[] = {{4, 2, 12, 4}, {8, 5, 40, 2}, {16, 15, 100, 30}, {2, 1, 5, 5}, {4, 0, 10, 1}};
  for (unsigned i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char what[64];
    snprintf(what, sizeof what, "w%d bad %d pend %d", cases[i].w, cases[i].bad, cases[i].pend);
    int bad = cases[i].bad;
    /* control: a dump it wrote itself with those ops started: its device side */
    job *j;
    fa_analysis *a;
    if (cases[i].pend >= 2) { /* (one seq apart is no evidence: FA_UNFINISHED_DEPTH) */
      j = killed_job(cases[i].w, bad, cases[i].done, cases[i].pend);
      a = analyse(j);
      ck_assert_msg(fault_of(a, bad) == FA_FAULT_DEVICE, "%s control: %s", what, a->verdict.summary);
      ck_assert_uint_eq(a->nsettled, 0);
      fa_free(a);
      job_free(j);
    }
    /* its ring file, salvaged after a kill */
    j = killed_job(cases[i].w, bad, cases[i].done, cases[i].pend);
    shift(j, 58000);
    salvaged(j, bad, 0);
    a = analyse(j);
    const fa_verdict *v = &a->verdict;
    ck_assert_msg(v->status == FA_STATUS_HANG && v->root_cause.n == 1 && v->root_cause.v[0] == bad, "%s: %s",
                  what, v->summary);
    ck_assert_msg(fault_of(a, bad) == FA_FAULT_GONE, "%s: fault %s", what, fa_fault_kind_name(fault_of(a, bad)));
    ck_assert_msg(!has_substr(v->summary, "device side"), "%s: %s", what, v->summary);
    ck_assert_msg(has_substr(v->summary, "killed, no exit seen"), "%s: %s", what, v->summary);
    ck_assert_msg(has_substr(v->summary, " s before the first of the others' dumps"), "%s: %s", what, v->summary);
    ck_assert_msg(has_substr(v->summary, "in host code: its last op, AllReduce seq"), "%s: %s", what, v->summary);
    ck_assert_uint_eq(a->nsettled, 1);
    ck_assert_int_eq(a->settled[0].global_rank, bad);
    ck_assert_uint_eq(a->settled[0].first_seq, (uint64_t)(cases[i].done - cases[i].pend));
    ck_assert_uint_eq(a->settled[0].last_seq, (uint64_t)(cases[i].done - 1));
    ck_assert_uint_eq(a->settled[0].ncoll, (uint32_t)cases[i].pend);
    const fa_comm *c = comm_of(a, WORLD);
    ck_assert_msg(c->stuck && c->stuck_seq == (uint64_t)cases[i].done, "%s: stuck at %llu", what,
                  (unsigned long long)c->stuck_seq);
    ck_assert_int_eq(c->members[bad].state, FA_MEMBER_LAGGING);
    all_explained(a, what);
    fa_free(a);
    job_free(j);
  }
}
END_TEST

/* A fresh salvaged dump (it exited: its records stamped) keeps its states;
 * a Broadcast of another root proves nothing of its part: neither is read
 * as completed, and the rank is still a process that ended, not a device. */
START_TEST(test_not_proven)
{
  job *j = killed_job(4, 2, 12, 4);
  shift(j, 58000);
  salvaged(j, 2, 1);
  fa_analysis *a = analyse(j);
  ck_assert_uint_eq(a->nsettled, 0);
  ck_assert_msg(fault_of(a, 2) == FA_FAULT_GONE, "fresh: %s", a->verdict.summary);
  ck_assert_msg(has_substr(a->verdict.summary, "rank 2 ended with AllReduce seq 8"), "%s", a->verdict.summary);
  ck_assert_msg(!has_substr(a->verdict.summary, "device side"), "%s", a->verdict.summary);
  ck_assert_msg(has_substr(a->verdict.summary, "in host code, with 4 ops in flight"), "%s", a->verdict.summary);
  all_explained(a, "fresh");
  fa_free(a);
  job_free(j);

  /* died inside seq 11: rank 1 completed it, ranks 0 and 3 still wait in
   * it: seqs 8-10 are done, 11 is not */
  j = job_new(4);
  job_world(j, WORLD);
  for (int r = 0; r < 4; r++) {
    for (int k = 0; k < 8; k++) coll(j, r, WORLD, FRZ_OP_AllReduce, 4096, 7, 0, -1, FRZ_STATE_COMPLETED);
    for (int k = 8; k < 12; k++)
      coll(j, r, WORLD, FRZ_OP_AllReduce, 4096, 7, 0, -1,
           r == 2 || (k == 11 && r != 1) ? FRZ_STATE_STARTED : FRZ_STATE_COMPLETED);
    if (r == 1) coll(j, r, WORLD, FRZ_OP_AllReduce, 4096, 7, 0, -1, FRZ_STATE_STARTED);
  }
  shift(j, 58000);
  salvaged(j, 2, 0);
  a = analyse(j);
  ck_assert_uint_eq(a->nsettled, 1);
  ck_assert_uint_eq(a->settled[0].first_seq, 8);
  ck_assert_uint_eq(a->settled[0].last_seq, 10);
  ck_assert_msg(a->verdict.root_cause.n == 1 && a->verdict.root_cause.v[0] == 2, "%s", a->verdict.summary);
  ck_assert_msg(has_substr(a->verdict.summary, "rank 2 ended with AllReduce seq 11"), "%s", a->verdict.summary);
  all_explained(a, "inside");
  fa_free(a);
  job_free(j);

  j = job_new(4);
  job_world(j, WORLD);
  for (int r = 0; r < 4; r++) {
    for (int k = 0; k < 6; k++) coll(j, r, WORLD, FRZ_OP_AllReduce, 4096, 7, 0, -1, FRZ_STATE_COMPLETED);
    coll(j, r, WORLD, FRZ_OP_Broadcast, 4096, 7, 255, 0, r == 3 ? FRZ_STATE_STARTED : FRZ_STATE_COMPLETED);
    if (r != 3) coll(j, r, WORLD, FRZ_OP_AllReduce, 4096, 7, 0, -1, FRZ_STATE_STARTED);
  }
  shift(j, 58000);
  salvaged(j, 3, 0);
  a = analyse(j);
  ck_assert_uint_eq(a->nsettled, 0);
  ck_assert_msg(a->verdict.root_cause.n == 1 && a->verdict.root_cause.v[0] == 3, "%s", a->verdict.summary);
  ck_assert_msg(fault_of(a, 3) == FA_FAULT_GONE, "broadcast: %s", a->verdict.summary);
  ck_assert_msg(!has_substr(a->verdict.summary, "device side"), "%s", a->verdict.summary);
  all_explained(a, "broadcast");
  fa_free(a);
  job_free(j);
}
END_TEST

/* A send whose receive completed on its peer is read as done; one whose
 * peer did not receive it stays pending. */
START_TEST(test_send_received)
{
  job *j = killed_job(4, 1, 8, 2);
  p2p(j, 1, WORLD, FRZ_OP_Send, 3, 0, FRZ_STATE_STARTED);
  p2p(j, 3, WORLD, FRZ_OP_Recv, 1, 0, FRZ_STATE_COMPLETED);
  p2p(j, 1, WORLD, FRZ_OP_Send, 2, 0, FRZ_STATE_STARTED);
  p2p(j, 2, WORLD, FRZ_OP_Recv, 1, 0, FRZ_STATE_COMPLETED);
  p2p(j, 2, WORLD, FRZ_OP_Recv, 1, 1, FRZ_STATE_COMPLETED);
  p2p(j, 1, WORLD, FRZ_OP_Send, 2, 1, FRZ_STATE_STARTED);
  p2p(j, 1, WORLD, FRZ_OP_Send, 0, 0, FRZ_STATE_STARTED); /* (rank 0 received nothing) */
  shift(j, 58000);
  salvaged(j, 1, 0);
  fa_analysis *a = analyse(j);
  ck_assert_uint_eq(a->nsettled, 1);
  ck_assert_uint_eq(a->settled[0].nsend, 3);
  ck_assert_uint_eq(a->settled[0].ncoll, 2);
  const frz_dump *d = NULL;
  for (uint32_t f = 0; f < a->nframes; f++)
    if (a->frames[f].dump.process.global_rank == 1) d = &a->frames[f].dump;
  ck_assert_ptr_nonnull(d);
  uint32_t done = 0, fly = 0;
  for (uint64_t k = 0; k < d->nrecords; k++)
    if (d->records[k].kind == FRZ_KIND_P2P) {
      done += d->records[k].state == FRZ_STATE_COMPLETED && d->records[k].peer != 0;
      fly += d->records[k].state == FRZ_STATE_STARTED && d->records[k].peer == 0;
    }
  ck_assert_uint_eq(done, 3);
  ck_assert_uint_eq(fly, 1);
  ck_assert_msg(has_substr(a->verdict.summary, "rank 1's process ended (its ring file, salvaged): killed"), "%s",
                a->verdict.summary);
  fa_free(a);
  job_free(j);
}
END_TEST

/* Killed inside NCCL: its call of the op the others wait in had not returned. */
START_TEST(test_killed_in_call)
{
  job *j = killed_job(4, 2, 12, 0);
  shift(j, 57000);
  coll(j, 2, WORLD, FRZ_OP_AllReduce, 4096, 7, 0, -1, FRZ_STATE_ENQUEUED);
  frz_record *x = &j->rec[2][j->nrec[2] - 1];
  x->flags |= FRZ_RF_IN_CALL;
  x->result = -1;
  x->t_enqueue_ns = T0 + 60000 * DT - 2005 * DT; /* 5 ms before its end, 2 s before the others' dumps */
  salvaged(j, 2, 0);
  fa_analysis *a = analyse(j);
  ck_assert_msg(a->verdict.root_cause.n == 1 && a->verdict.root_cause.v[0] == 2, "%s", a->verdict.summary);
  ck_assert_msg(fault_of(a, 2) == FA_FAULT_GONE, "%s", a->verdict.summary);
  ck_assert_msg(has_substr(a->verdict.summary, "it was inside NCCL: its call of AllReduce seq 12"), "%s",
                a->verdict.summary);
  ck_assert_msg(has_substr(a->verdict.summary, "2.0 s before"), "%s", a->verdict.summary);
  fa_free(a);
  job_free(j);
}
END_TEST

static Suite *salvaged_suite(void)
{
  Suite *s = suite_create("salvaged");
  TCase *t = tcase_create("rings");
  tcase_add_test(t, test_killed_after_completion);
  tcase_add_test(t, test_not_proven);
  tcase_add_test(t, test_send_received);
  tcase_add_test(t, test_killed_in_call);
  suite_add_tcase(s, t);
  return s;
}

int main(void)
{
  SRunner *sr = srunner_create(salvaged_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
