/* check_analyze.c — unit tests of the analyzer library on synthetic jobs.
 *
 * Jobs are built in memory from frz_process/frz_comm/frz_record structs and
 * handed to the library decoded (fa_add_dump) or, for the file path,
 * encoded with frz_encode into a temporary directory.
 *
 * `check_analyze --mkdumps DIR` writes the deterministic dump sets that the
 * CLI golden tests (tests/e2e/cli.sh) use (DIR/c1, DIR/hostile), and exits.
 */
#include "config.h"

#include <cJSON.h>
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analyze.h"
#include "frz.h"

#include "synth_job.h"

/* ---- jobs of the cases --------------------------------------------------------- */

#define WORLD 0x00000000000000c1ull


#define SPLIT_A 0x3f1e6a0b94c2d701ull
#define SPLIT_B 0x8c0d52e7a19b3f42ull

/* C1: 8 ranks; everybody completes seqs 0..36, then rank 5 stops and the
 * others wait in seq 37 (an AllReduce). */
static job *c1_job(void)
{
  job *j = job_new(8);
  job_world(j, WORLD);
  run(j, 0, 7, WORLD, 37);
  for (int r = 0; r < 8; r++)
    if (r != 5) step(j, r, WORLD, FRZ_STATE_STARTED);
  return j;
}

/* The CLI golden set: C1 with a CommSplit into two 4-rank comms (the split
 * is seq 0 of the world comm; its color differs by rank) that ran a few
 * all-gathers each; the waiting ranks left seq 37 in `state`. */
static job *golden_job_at(unsigned state)
{
  job *j = job_new(8);
  job_world(j, WORLD);
  for (int r = 0; r < 8; r++) {
    life(j, r, WORLD, FRZ_OP_CommSplit, (uint64_t)(r / 4));
    uint64_t id = r < 4 ? SPLIT_A : SPLIT_B;
    job_comm(j, r, id, 4, r % 4);
    frz_comm *c = find_comm(j, r, id);
    c->parent_id = WORLD;
    c->flags = FRZ_CF_SPLIT;
    c->split_color = r / 4;
    c->split_key = r;
    life(j, r, id, FRZ_OP_CommSplit, 0);
    for (int k = 0; k < 3; k++) coll(j, r, id, FRZ_OP_AllGather, 65536, 9, 255, -1, FRZ_STATE_COMPLETED);
  }
  run(j, 0, 7, WORLD, 36);
  for (int r = 0; r < 8; r++)
    if (r != 5) step(j, r, WORLD, state);
  return j;
}

/* The golden C1 job: rank 5 never enters seq 37, the others started it. */
static job *golden_job(void)
{
  return golden_job_at(FRZ_STATE_STARTED);
}

/* A fresh empty directory under TMPDIR. */
static char *temp_dir(void)
{
  const char *t = getenv("TMPDIR");
  char *d = NULL, rnd[7];
  memset(rnd, 'X', 6); /* the part mkdtemp replaces */
  rnd[6] = '\0';
  ck_assert_int_gt(asprintf(&d, "%s/fr-check-analyze.%s", t && *t ? t : "/tmp", rnd), 0);
  ck_assert_ptr_nonnull(mkdtemp(d));
  return d;
}

static void put_file(const char *dir, const char *name, const void *buf, size_t len)
{
  char *p = NULL;
  ck_assert_int_gt(asprintf(&p, "%s/%s", dir, name), 0);
  FILE *f = fopen(p, "wb");
  ck_assert_ptr_nonnull(f);
  if (len) ck_assert_uint_eq(fwrite(buf, 1, len, f), len);
  fclose(f);
  free(p);
}

static void remove_dir(const char *dir)
{
  char *cmd = NULL;
  ck_assert_int_gt(asprintf(&cmd, "rm -rf '%s'", dir), 0);
  ck_assert_int_eq(system(cmd), 0);
  free(cmd);
}

static int has_substr(const char *hay, const char *needle)
{
  return hay && strstr(hay, needle) != NULL;
}


/* The analysis of the dumps written to dir (fa_add_path, fa_run). */
static fa_analysis *analyse_dir(const char *dir)
{
  fa_analysis *a = fa_new();
  ck_assert_ptr_nonnull(a);
  ck_assert_int_eq(fa_add_path(a, dir), 0);
  ck_assert_int_eq(fa_run(a), 0);
  return a;
}

/* ---- tests ---------------------------------------------------------------------- */

START_TEST(test_c1_rank_stops)
{
  job *j = c1_job();
  fa_analysis *a = analyse(j);
  const fa_verdict *v = &a->verdict;
  ck_assert_int_eq(v->status, FA_STATUS_HANG);
  RANKS_EQ(&v->lagging, 5);
  RANKS_EQ(&v->root_cause, 5);
  RANKS_NONE(&v->ahead);
  ck_assert(!v->all_joined);
  const fa_comm *c = comm_of(a, WORLD);
  ck_assert_int_eq(v->comm, fa_find_comm(a, WORLD));
  ck_assert_int_eq(c->last_completed, 36);
  ck_assert(c->stuck);
  ck_assert_uint_eq(c->stuck_seq, 37);
  fa_ranks w, m;
  ck_assert_int_eq(fa_comm_ranks(c, FA_MEMBER_WAITING, &w), 0);
  ck_assert_int_eq(fa_comm_missing(c, &m), 0);
  RANKS_EQ(&w, 0, 1, 2, 3, 4, 6, 7);
  RANKS_EQ(&m, 5);
  fa_ranks_free(&w);
  fa_ranks_free(&m);
  ck_assert_uint_eq(v->nlinks, 2);
  ck_assert_int_eq(v->links[0].src, 4);
  ck_assert_int_eq(v->links[0].dst, 5);
  ck_assert_int_eq(v->links[1].src, 5);
  ck_assert_int_eq(v->links[1].dst, 6);
  ck_assert(v->links[0].inferred && v->links[1].inferred);
  ck_assert_int_eq(v->links[0].channel, -1);
  ck_assert_int_eq(v->mismatch_comm, -1);
  ck_assert_ptr_null(v->cycle);
  RANKS_NONE(&a->ranks_missing);
  ck_assert_int_eq(fa_exit_status(a), 1);
  ck_assert(has_substr(v->summary, "rank 5 never entered AllReduce seq 37"));

  cJSON *js = json_of(a);
  JSON_IS(js, "format", "\"flightrec-analysis\"");
  JSON_IS(js, "version", "1");
  JSON_IS(js, "verdict.status", "\"hang\"");
  JSON_IS(js, "verdict.lagging_ranks", "[5]");
  JSON_IS(js, "verdict.root_cause_ranks", "[5]");
  JSON_IS(js, "verdict.last_completed", "{\"comm\":\"00000000000000c1\",\"seq\":36,\"op\":\"AllReduce\"}");
  JSON_IS(js, "verdict.stuck.seq", "37");
  JSON_IS(js, "verdict.stuck.op", "\"AllReduce\"");
  JSON_IS(js, "verdict.stuck.comm", "\"00000000000000c1\"");
  JSON_IS(js, "verdict.stuck.waiting_ranks", "[0,1,2,3,4,6,7]");
  JSON_IS(js, "verdict.stuck.missing_ranks", "[5]");
  JSON_IS(js, "verdict.missing_links",
          "[{\"src\":4,\"dst\":5,\"comm\":\"00000000000000c1\",\"channel\":null,\"inferred\":true,"
          "\"p2p\":false,\"seq\":37},{\"src\":5,\"dst\":6,\"comm\":\"00000000000000c1\","
          "\"channel\":null,\"inferred\":true,\"p2p\":false,\"seq\":37}]");
  JSON_IS(js, "verdict.mismatch", "null");
  JSON_IS(js, "verdict.cycle", "null");
  JSON_IS(js, "verdict.stragglers", "[]");
  JSON_IS(js, "input.ranks_found", "[0,1,2,3,4,5,6,7]");
  JSON_IS(js, "input.ranks_missing", "[]");
  JSON_IS(js, "input.problems", "[]");
  cJSON_Delete(js);

  char *t = text_of(a);
  ck_assert_msg(has_substr(t, "verdict: hang\n"), "%s", t);
  ck_assert_msg(has_substr(t, "lagging ranks:  5\n"), "%s", t);
  ck_assert_msg(has_substr(t, "waiting 0-4,6-7; missing 5"), "%s", t);
  ck_assert_msg(has_substr(t, "4->5 (inferred), 5->6 (inferred)"), "%s", t);
  free(t);
  fa_free(a);
  job_free(j);
}
END_TEST

/* An all-reduce captured into a CUDA graph at seq 10 on every rank: the
 * recorder could not track it (no events on a capturing stream), so it
 * stays enqueued and untracked.  `then` ops follow on every rank; then the
 * ranks other than 5 start one more that rank 5 never enters (none when
 * `hang` is 0). */
static job *captured_job(int then, int hang)
{
  job *j = job_new(8);
  job_world(j, WORLD);
  run(j, 0, 7, WORLD, 10);
  for (int r = 0; r < 8; r++) {
    step(j, r, WORLD, FRZ_STATE_ENQUEUED);
    j->rec[r][j->nrec[r] - 1].flags |= FRZ_RF_GRAPH_CAPTURED | FRZ_RF_NO_TRACKING;
  }
  run(j, 0, 7, WORLD, then);
  for (int r = 0; r < 8 && hang; r++)
    if (r != 5) step(j, r, WORLD, FRZ_STATE_STARTED);
  ck_assert_int_eq(find_comm(j, 0, WORLD)->last_completed_seq, 9); /* as the recorder writes it */
  return j;
}

/* The captured op is not where the job hangs: C1's verdict stands whether
 * ops completed after it (seq 37) or the hang comes right after it (seq
 * 11); with nothing after it, the verdict says completion is unknown. */
START_TEST(test_graph_captured_op_is_not_the_hang)
{
  /* right after it, rank 5's own completion is unknown from seq 10 on */
  static const struct { int then, hang; uint64_t stuck; int64_t unknown; } cases[] = {{26, 1, 37, -1},
                                                                                    {0, 1, 11, 10}};
  for (unsigned i = 0; i < 2; i++) {
    job *j = captured_job(cases[i].then, cases[i].hang);
    fa_analysis *a = analyse(j);
    const fa_verdict *v = &a->verdict;
    ck_assert_int_eq(v->status, FA_STATUS_HANG);
    RANKS_EQ(&v->lagging, 5);
    const fa_comm *c = comm_of(a, WORLD);
    ck_assert(c->stuck);
    ck_assert_uint_eq(c->stuck_seq, cases[i].stuck);
    ck_assert_int_eq(c->last_completed, (int64_t)cases[i].stuck - 1);
    ck_assert_int_eq(c->unknown_from, cases[i].unknown);
    fa_free(a);
    job_free(j);
  }
  job *j = captured_job(0, 0);
  fa_analysis *a = analyse(j);
  ck_assert_int_eq(a->verdict.status, FA_STATUS_INCONCLUSIVE);
  ck_assert_int_eq(comm_of(a, WORLD)->unknown_from, 10);
  ck_assert(!comm_of(a, WORLD)->stuck);
  ck_assert_msg(has_substr(a->verdict.summary, "completion was not tracked from seq 10 on comm"), "%s",
                a->verdict.summary);
  fa_free(a);
  job_free(j);
}
END_TEST

START_TEST(test_c2_majority_lags)
{
  job *j = job_new(8);
  job_world(j, WORLD);
  run(j, 0, 7, WORLD, 12);
  for (int r = 0; r <= 2; r++) step(j, r, WORLD, FRZ_STATE_STARTED);
  fa_analysis *a = analyse(j);
  const fa_verdict *v = &a->verdict;
  ck_assert_int_eq(v->status, FA_STATUS_HANG);
  RANKS_EQ(&v->lagging, 3, 4, 5, 6, 7);
  RANKS_EQ(&v->root_cause, 3, 4, 5, 6, 7);
  const fa_comm *c = comm_of(a, WORLD);
  ck_assert_int_eq(c->last_completed, 11);
  ck_assert_uint_eq(c->stuck_seq, 12);
  ck_assert_uint_eq(c->nwaiting, 3);
  ck_assert_uint_eq(c->nlagging, 5);
  ck_assert_uint_eq(v->nlinks, 2);
  ck_assert_int_eq(v->links[0].src, 2);
  ck_assert_int_eq(v->links[0].dst, 3);
  ck_assert_int_eq(v->links[1].src, 7);
  ck_assert_int_eq(v->links[1].dst, 0);
  ck_assert(has_substr(v->summary, "ranks 3-7 never entered"));
  fa_free(a);
  job_free(j);
}
END_TEST

START_TEST(test_healthy)
{
  job *j = job_new(8);
  job_world(j, WORLD);
  run(j, 0, 7, WORLD, 20);
  fa_analysis *a = analyse(j);
  const fa_verdict *v = &a->verdict;
  ck_assert_int_eq(v->status, FA_STATUS_HEALTHY);
  ck_assert_int_eq(fa_exit_status(a), 0);
  RANKS_NONE(&v->lagging);
  RANKS_NONE(&v->root_cause);
  ck_assert_uint_eq(v->nlinks, 0);
  ck_assert(!comm_of(a, WORLD)->stuck);
  ck_assert_int_eq(comm_of(a, WORLD)->last_completed, 19);
  ck_assert(has_substr(v->summary, "no hang found"));
  cJSON *js = json_of(a);
  JSON_IS(js, "verdict.status", "\"healthy\"");
  JSON_IS(js, "verdict.stuck", "null");
  JSON_IS(js, "verdict.last_completed", "null");
  cJSON_Delete(js);
  fa_free(a);
  job_free(j);
}
END_TEST

START_TEST(test_all_joined_not_completed)
{
  job *j = job_new(8);
  job_world(j, WORLD);
  run(j, 0, 7, WORLD, 10);
  for (int r = 0; r < 8; r++) step(j, r, WORLD, FRZ_STATE_STARTED);
  fa_analysis *a = analyse(j);
  const fa_verdict *v = &a->verdict;
  ck_assert_int_eq(v->status, FA_STATUS_HANG);
  ck_assert(v->all_joined);
  RANKS_NONE(&v->lagging);
  RANKS_NONE(&v->root_cause);
  ck_assert_uint_eq(v->nlinks, 0);
  ck_assert_msg(has_substr(v->summary, "all joined, not completed: device or network side"), "%s",
                v->summary);
  cJSON *js = json_of(a);
  JSON_IS(js, "verdict.lagging_ranks", "[]");
  JSON_IS(js, "verdict.stuck.waiting_ranks", "[0,1,2,3,4,5,6,7]");
  JSON_IS(js, "verdict.stuck.missing_ranks", "[]");
  JSON_IS(js, "verdict.all_joined", "true");
  cJSON_Delete(js);
  fa_free(a);
  job_free(j);
}
END_TEST

/* Every rank joined the stuck all-reduce, rank 3's record never started
 * while the others' did: something before it on rank 3's stream never
 * ended (fr-analyze(1), "A split in start is evidence too"); with several
 * such ranks, each is named; with none started, all joined. */
START_TEST(test_not_started_split)
{
  static const struct { int n; unsigned idle_mask; int root_cause; } v[] = {
      {8, 1u << 3, 1}, {4, (1u << 0) | (1u << 2), 1}, {4, 0xfu, 0},
  };
  for (size_t k = 0; k < sizeof v / sizeof v[0]; k++) {
    job *j = job_new(v[k].n);
    job_world(j, WORLD);
    run(j, 0, v[k].n - 1, WORLD, 10);
    for (int r = 0; r < v[k].n; r++)
      step(j, r, WORLD, (v[k].idle_mask >> r) & 1 ? FRZ_STATE_ENQUEUED : FRZ_STATE_STARTED);
    fa_analysis *a = analyse(j);
    const fa_verdict *vd = &a->verdict;
    ck_assert_int_eq(vd->status, FA_STATUS_HANG);
    if (v[k].root_cause) {
      uint32_t want = 0;
      for (int r = 0; r < v[k].n; r++) want += (v[k].idle_mask >> r) & 1;
      ck_assert_msg(vd->root_cause.n == want, "variant %zu: %u root causes", k, vd->root_cause.n);
      for (uint32_t i = 0; i < vd->root_cause.n; i++)
        ck_assert_msg((v[k].idle_mask >> vd->root_cause.v[i]) & 1, "variant %zu: rank %d named", k,
                      vd->root_cause.v[i]);
      ck_assert_msg(has_substr(vd->summary, "never started"), "%s", vd->summary);
      ck_assert(!vd->all_joined);
    } else {
      RANKS_NONE(&vd->root_cause);
      ck_assert(vd->all_joined);
    }
    fa_free(a);
    job_free(j);
  }
}
END_TEST

/* A rank never posts its side of a grouped exchange (an all-to-all of
 * ncclSend/ncclRecv) and never enters the next collective; the others'
 * records of that collective never started, after their unfinished sends
 * and receives on the comm.  Where the streams do not tell (the p2p records
 * say none), the summary says so of those ranks instead of "wait in it";
 * a rank without such p2p still waits in it.  With the p2p on the
 * collective's stream, the stream rule takes them as lagging behind it. */
START_TEST(test_queued_behind_p2p)
{
  static const struct { int n, lag; unsigned plain_mask; int same_stream; } v[] = {
      {4, 3, 0, 0}, {8, 5, 1u << 2, 0}, {6, 0, 0, 0}, {4, 3, 0, 1},
  };
  for (size_t k = 0; k < sizeof v / sizeof v[0]; k++) {
    job *j = job_new(v[k].n);
    job_world(j, WORLD);
    run(j, 0, v[k].n - 1, WORLD, 10);
    for (int r = 0; r < v[k].n; r++) {
      if (r == v[k].lag) continue;
      if ((v[k].plain_mask >> r) & 1) {
        step(j, r, WORLD, FRZ_STATE_STARTED);
        continue;
      }
      for (int d = 0; d < 2; d++) {
        p2p(j, r, WORLD, d ? FRZ_OP_Recv : FRZ_OP_Send, v[k].lag, 1, FRZ_STATE_STARTED);
        frz_record *x = &j->rec[r][j->nrec[r] - 1];
        x->t_start_ns = x->t_enqueue_ns + DT / 10;
        x->group_id = 20;
        x->flags |= FRZ_RF_IN_GROUP;
        if (v[k].same_stream) x->stream = 0x5000 + (uint64_t)r;
      }
      step(j, r, WORLD, FRZ_STATE_ENQUEUED);
    }
    fa_analysis *a = analyse(j);
    const fa_verdict *vd = &a->verdict;
    ck_assert_int_eq(vd->status, FA_STATUS_HANG);
    ck_assert_msg(vd->root_cause.n == 1 && vd->root_cause.v[0] == v[k].lag, "variant %zu: root %s", k,
                  vd->summary);
    int said = has_substr(vd->summary, "enqueued it, and it never started there, after sends and receives");
    ck_assert_msg(said == !v[k].same_stream, "variant %zu: %s", k, vd->summary);
    if (v[k].plain_mask) ck_assert_msg(has_substr(vd->summary, "rank 2 waits in it"), "%s", vd->summary);
    fa_free(a);
    job_free(j);
  }
}
END_TEST

/* C3: rank 7 passes a different count at seq 10; everybody goes on. */
static job *mismatch_job(void)
{
  job *j = job_new(8);
  job_world(j, WORLD);
  run(j, 0, 7, WORLD, 10);
  for (int r = 0; r < 8; r++)
    coll(j, r, WORLD, FRZ_OP_AllReduce, r == 7 ? 409598 : 409600, 7, 0, -1, FRZ_STATE_COMPLETED);
  run(j, 0, 7, WORLD, 4);
  return j;
}

START_TEST(test_count_mismatch_minority)
{
  job *j = mismatch_job();
  fa_analysis *a = analyse(j);
  const fa_verdict *v = &a->verdict;
  ck_assert_int_eq(v->status, FA_STATUS_MISMATCH);
  ck_assert_int_eq(fa_exit_status(a), 1);
  const fa_comm *c = comm_of(a, WORLD);
  ck_assert(c->has_mismatch);
  ck_assert_uint_eq(c->mismatch.seq, 10);
  ck_assert_uint_eq(c->mismatch.fields, FA_FIELD_COUNT);
  ck_assert_uint_eq(c->mismatch.ngroups, 2);
  ck_assert_uint_eq(c->mismatch.groups[0].n, 7);
  ck_assert_uint_eq(c->mismatch.groups[1].n, 1);
  ck_assert_int_eq(c->mismatch.culprit, 1);
  ck_assert_uint_eq(c->mismatch.later, 0);
  ck_assert(c->mismatch.groups[1].completed);
  RANKS_EQ(&v->root_cause, 7);
  RANKS_NONE(&v->lagging);
  cJSON *js = json_of(a);
  JSON_IS(js, "verdict.status", "\"mismatch\"");
  JSON_IS(js, "verdict.mismatch.seq", "10");
  JSON_IS(js, "verdict.mismatch.fields", "[\"count\"]");
  JSON_IS(js, "verdict.mismatch.culprit_ranks", "[7]");
  JSON_IS(js, "verdict.mismatch.later_mismatches", "0");
  cJSON *g = jget(js, "verdict.mismatch.groups");
  ck_assert_int_eq(cJSON_GetArraySize(g), 2);
  char *t = cJSON_PrintUnformatted(cJSON_GetObjectItem(cJSON_GetArrayItem(g, 0), "ranks"));
  ck_assert_str_eq(t, "[0,1,2,3,4,5,6]");
  cJSON_free(t);
  cJSON_Delete(js);
  ck_assert(has_substr(v->summary, "first mismatch at seq 10"));
  ck_assert(has_substr(v->summary, "rank 7 calls AllReduce(409598 x float32, sum)"));
  fa_free(a);
  job_free(j);
}
END_TEST

START_TEST(test_op_mismatch_cascade)
{
  job *j = job_new(8);
  job_world(j, WORLD);
  run(j, 0, 7, WORLD, 8);
  for (int r = 0; r < 8; r++) {
    if (r == 7) coll(j, r, WORLD, FRZ_OP_Broadcast, 5056, 7, 255, 0, FRZ_STATE_STARTED);
    else coll(j, r, WORLD, FRZ_OP_AllReduce, 2106881, 7, 0, -1, FRZ_STATE_STARTED);
  }
  for (int k = 0; k < 2; k++)
    for (int r = 0; r < 8; r++)
      coll(j, r, WORLD, FRZ_OP_AllReduce, r == 7 ? 1 : 2, 7, 0, -1, FRZ_STATE_ENQUEUED);
  fa_analysis *a = analyse(j);
  const fa_comm *c = comm_of(a, WORLD);
  ck_assert_int_eq(a->verdict.status, FA_STATUS_MISMATCH);
  ck_assert_uint_eq(c->mismatch.seq, 8);
  ck_assert(c->mismatch.fields & FA_FIELD_OP);
  ck_assert_uint_eq(c->mismatch.later, 2);
  ck_assert_uint_eq(c->mismatch.last_seq, 10);
  RANKS_EQ(&a->verdict.root_cause, 7);
  RANKS_NONE(&a->verdict.lagging);
  fa_free(a);
  job_free(j);
}
END_TEST

START_TEST(test_dtype_split_no_culprit)
{
  job *j = job_new(4);
  job_world(j, WORLD);
  run(j, 0, 3, WORLD, 5);
  for (int r = 0; r < 4; r++)
    coll(j, r, WORLD, FRZ_OP_AllReduce, 1, r % 2 ? 7 : 9, 0, -1, FRZ_STATE_STARTED);
  fa_analysis *a = analyse(j);
  const fa_verdict *v = &a->verdict;
  const fa_comm *c = comm_of(a, WORLD);
  ck_assert_int_eq(v->status, FA_STATUS_MISMATCH);
  ck_assert_uint_eq(c->mismatch.seq, 5);
  ck_assert_uint_eq(c->mismatch.fields, FA_FIELD_DTYPE);
  ck_assert_uint_eq(c->mismatch.ngroups, 2);
  ck_assert_int_eq(c->mismatch.culprit, -1);
  RANKS_NONE(&v->root_cause);
  RANKS_NONE(&v->lagging);
  cJSON *js = json_of(a);
  JSON_IS(js, "verdict.mismatch.culprit_ranks", "[]");
  cJSON *g = jget(js, "verdict.mismatch.groups");
  ck_assert_int_eq(cJSON_GetArraySize(g), 2);
  char *t0 = cJSON_PrintUnformatted(cJSON_GetObjectItem(cJSON_GetArrayItem(g, 0), "ranks"));
  char *t1 = cJSON_PrintUnformatted(cJSON_GetObjectItem(cJSON_GetArrayItem(g, 1), "ranks"));
  ck_assert_str_eq(t0, "[0,2]");
  ck_assert_str_eq(t1, "[1,3]");
  cJSON_free(t0);
  cJSON_free(t1);
  cJSON_Delete(js);
  ck_assert(has_substr(v->summary, "no single culprit"));
  ck_assert(has_substr(v->summary, "ranks 0,2 call AllReduce(1 x bfloat16, sum)"));
  fa_free(a);
  job_free(j);
}
END_TEST

START_TEST(test_missing_dump)
{
  job *j = job_new(8);
  job_world(j, WORLD);
  run(j, 0, 7, WORLD, 20);
  for (int r = 0; r < 8; r++)
    if (r != 5) step(j, r, WORLD, FRZ_STATE_STARTED);
  j->absent[5] = 1;
  fa_analysis *a = analyse(j);
  const fa_verdict *v = &a->verdict;
  ck_assert_int_eq(v->status, FA_STATUS_HANG);
  RANKS_EQ(&a->ranks_missing, 5);
  RANKS_EQ(&v->lagging, 5);
  RANKS_EQ(&v->root_cause, 5);
  const fa_comm *c = comm_of(a, WORLD);
  ck_assert_int_eq(c->members[5].state, FA_MEMBER_NO_DUMP);
  ck_assert_int_eq(c->members[5].global_rank, 5);
  ck_assert(c->members[5].global_inferred);
  ck_assert_uint_eq(c->stuck_seq, 20);
  ck_assert_uint_eq(v->nlinks, 2);
  ck_assert(has_substr(v->summary, "left no dump"));
  cJSON *js = json_of(a);
  JSON_IS(js, "input.ranks_missing", "[5]");
  JSON_IS(js, "verdict.stuck.missing_ranks", "[5]");
  JSON_IS(js, "verdict.stuck.no_dump_ranks", "[5]");
  JSON_IS(js, "verdict.stuck.waiting_ranks", "[0,1,2,3,4,6,7]");
  cJSON_Delete(js);
  fa_free(a);
  job_free(j);
}
END_TEST

START_TEST(test_corrupt_file_among_good)
{
  job *j = c1_job();
  char *dir = temp_dir();
  write_job(j, dir);
  static const char garbage[] = "this is not a flightrec dump\n";
  put_file(dir, "garbage.frz", garbage, sizeof garbage - 1);
  put_file(dir, "empty.frz", "", 0);
  put_file(dir, "TRIGGER", "flightrec-trigger v1 rank=3 time_ns=1 reason=x\n", 47);
  put_file(dir, ".job-42-r00003-f0000.frz.tmp", garbage, 4);
  /* a truncated copy of rank 3's dump */
  void *buf;
  size_t len;
  frz_error e;
  ck_assert_int_eq(frz_encode(&j->proc[3], j->comm[3], j->ncomm[3], j->rec[3], j->nrec[3], 0, &buf,
                              &len, &e),
                   FRZ_OK);
  put_file(dir, "truncated.frz", buf, len / 2);
  free(buf);

  fa_analysis *a = analyse_dir(dir);
  ck_assert_uint_eq(a->nfiles, 11);
  ck_assert_uint_eq(a->nframes, 8);
  ck_assert_uint_eq(a->nproblems, 3);
  const char *want[] = {"empty.frz", "garbage.frz", "truncated.frz"};
  for (int i = 0; i < 3; i++) {
    const fa_problem *p = &a->problems[i];
    ck_assert_ptr_nonnull(p->file);
    ck_assert_msg(has_substr(p->file, want[i]), "problem %d is %s", i, p->file);
    ck_assert(p->has_offset);
    ck_assert_msg(p->message[0] != '\0', "empty message");
    ck_assert_msg(!has_substr(p->message, dir), "message repeats the file: %s", p->message);
  }
  ck_assert_int_eq(a->verdict.status, FA_STATUS_HANG);
  RANKS_EQ(&a->verdict.lagging, 5);
  cJSON *js = json_of(a);
  cJSON *probs = jget(js, "input.problems");
  ck_assert_int_eq(cJSON_GetArraySize(probs), 3);
  cJSON *p0 = cJSON_GetArrayItem(probs, 0);
  ck_assert(cJSON_IsString(cJSON_GetObjectItem(p0, "file")));
  ck_assert(cJSON_IsNumber(cJSON_GetObjectItem(p0, "offset")));
  ck_assert(cJSON_IsString(cJSON_GetObjectItem(p0, "message")));
  cJSON_Delete(js);
  char *t = text_of(a);
  ck_assert_msg(has_substr(t, "garbage.frz: at byte "), "%s", t);
  free(t);
  fa_free(a);
  remove_dir(dir);
  free(dir);
  job_free(j);
}
END_TEST

START_TEST(test_ring_wrap)
{
  job *j = c1_job();
  wrap(j, 2, WORLD, 30);
  wrap(j, 5, WORLD, 33);
  fa_analysis *a = analyse(j);
  const fa_verdict *v = &a->verdict;
  const fa_comm *c = comm_of(a, WORLD);
  ck_assert_int_eq(v->status, FA_STATUS_HANG);
  RANKS_EQ(&v->lagging, 5);
  ck_assert(!c->has_mismatch);
  ck_assert_int_eq(c->last_completed, 36);
  ck_assert_int_eq(c->members[2].first_retained, 30);
  ck_assert_int_eq(c->members[2].state, FA_MEMBER_WAITING);
  ck_assert_int_eq(c->seq_lo, 0);
  ck_assert_ptr_null(fa_member_record(a, &c->members[2], 29));
  ck_assert_ptr_nonnull(fa_member_record(a, &c->members[2], 30));
  ck_assert_ptr_nonnull(fa_member_record(a, &c->members[0], 29));
  fa_free(a);
  job_free(j);
}
END_TEST

/* C12: C1 with partial evidence: rank 2's ring wrapped, rank 6's dump is
 * empty and rank 7's absent. */
START_TEST(test_c12_partial_evidence)
{
  job *j = c1_job();
  wrap(j, 2, WORLD, 34);
  j->absent[7] = 1;
  j->absent[6] = 1;
  char *dir = temp_dir();
  write_job(j, dir);
  put_file(dir, "job-42-r00006-f0000.frz", "", 0);
  fa_analysis *a = analyse_dir(dir);
  const fa_verdict *v = &a->verdict;
  ck_assert_int_eq(v->status, FA_STATUS_HANG);
  RANKS_EQ(&v->lagging, 5);
  RANKS_EQ(&v->root_cause, 5);
  RANKS_EQ(&a->ranks_missing, 6, 7);
  ck_assert_uint_eq(a->nproblems, 1);
  ck_assert(has_substr(a->problems[0].file, "r00006"));
  const fa_comm *c = comm_of(a, WORLD);
  ck_assert(!c->has_mismatch);
  ck_assert_int_eq(c->last_completed, 36);
  fa_ranks m;
  ck_assert_int_eq(fa_comm_missing(c, &m), 0);
  RANKS_EQ(&m, 5, 6, 7);
  fa_ranks_free(&m);
  ck_assert_uint_eq(v->nlinks, 1); /* 4->5; 6 does not wait, so no 5->6 */
  ck_assert_int_eq(v->links[0].src, 4);
  ck_assert_msg(has_substr(v->summary, "(ranks 6-7 left no dump)"), "%s", v->summary);
  fa_free(a);
  remove_dir(dir);
  free(dir);
  job_free(j);
}
END_TEST

/* C9: a 3-rank pipeline; rank 1 never sends to 0 nor receives from 2. */
static job *c9_job(void)
{
  job *j = job_new(3);
  job_world(j, WORLD);
  p2p(j, 0, WORLD, FRZ_OP_Send, 1, 0, FRZ_STATE_COMPLETED);
  p2p(j, 0, WORLD, FRZ_OP_Recv, 1, 0, FRZ_STATE_STARTED);
  p2p(j, 1, WORLD, FRZ_OP_Recv, 0, 0, FRZ_STATE_COMPLETED);
  p2p(j, 1, WORLD, FRZ_OP_Send, 2, 0, FRZ_STATE_COMPLETED);
  p2p(j, 2, WORLD, FRZ_OP_Recv, 1, 0, FRZ_STATE_COMPLETED);
  p2p(j, 2, WORLD, FRZ_OP_Send, 1, 0, FRZ_STATE_STARTED);
  j->proc[1].trigger = FRZ_TRIGGER_EXIT;
  return j;
}

START_TEST(test_p2p_unmatched)
{
  job *j = c9_job();
  fa_analysis *a = analyse(j);
  const fa_verdict *v = &a->verdict;
  ck_assert_int_eq(v->status, FA_STATUS_HANG);
  ck_assert_uint_eq(v->nlinks, 2);
  ck_assert(v->links[0].p2p && v->links[1].p2p);
  ck_assert_int_eq(v->links[0].src, 1);
  ck_assert_int_eq(v->links[0].dst, 0);
  ck_assert_int_eq(v->links[0].pending_dir, FRZ_DIR_RECV);
  ck_assert_int_eq(v->links[1].src, 2);
  ck_assert_int_eq(v->links[1].dst, 1);
  ck_assert_int_eq(v->links[1].pending_dir, FRZ_DIR_SEND);
  RANKS_EQ(&v->lagging, 1);
  RANKS_EQ(&v->root_cause, 1);
  cJSON *js = json_of(a);
  JSON_IS(js, "verdict.missing_links",
          "[{\"src\":1,\"dst\":0,\"comm\":\"00000000000000c1\",\"channel\":null,\"inferred\":false,"
          "\"p2p\":true,\"seq\":0,\"pending\":\"recv\",\"counterpart_no_dump\":false},"
          "{\"src\":2,\"dst\":1,\"comm\":\"00000000000000c1\",\"channel\":null,\"inferred\":false,"
          "\"p2p\":true,\"seq\":0,\"pending\":\"send\",\"counterpart_no_dump\":false}]");
  cJSON_Delete(js);
  fa_free(a);
  /* without rank 1's dump the same links, now to a rank without a dump */
  j->absent[1] = 1;
  a = analyse(j);
  ck_assert_uint_eq(a->verdict.nlinks, 2);
  ck_assert(a->verdict.links[0].counterpart_no_dump);
  RANKS_EQ(&a->verdict.lagging, 1);
  RANKS_EQ(&a->ranks_missing, 1);
  fa_free(a);
  job_free(j);
}
END_TEST

/* C10: rank 0 waits in comm b, rank 1 in comm c: each for the other. */
static job *cycle_job(void)
{
  job *j = job_new(2);
  for (int r = 0; r < 2; r++) {
    job_comm(j, r, 0xa, 2, r);
    job_comm(j, r, 0xb, 2, r);
    job_comm(j, r, 0xc, 2, r);
    coll(j, r, 0xa, FRZ_OP_AllGather, 16, 7, 255, -1, FRZ_STATE_COMPLETED);
  }
  coll(j, 0, 0xb, FRZ_OP_AllReduce, 16, 7, 0, -1, FRZ_STATE_STARTED);
  coll(j, 1, 0xc, FRZ_OP_AllReduce, 16, 7, 0, -1, FRZ_STATE_STARTED);
  return j;
}

START_TEST(test_deadlock_cycle)
{
  job *j = cycle_job();
  fa_analysis *a = analyse(j);
  const fa_verdict *v = &a->verdict;
  ck_assert_int_eq(v->status, FA_STATUS_DEADLOCK);
  ck_assert_uint_eq(v->ncycle, 2);
  ck_assert_int_eq(v->cycle[0].rank, 0);
  ck_assert_int_eq(v->cycle[0].waits_for, 1);
  ck_assert_int_eq(a->comms[v->cycle[0].comm].id, 0xb);
  ck_assert_int_eq(v->cycle[1].rank, 1);
  ck_assert_int_eq(v->cycle[1].waits_for, 0);
  ck_assert_int_eq(a->comms[v->cycle[1].comm].id, 0xc);
  ck_assert(has_substr(v->summary, "deadlock"));
  fa_free(a);
  job_free(j);
}
END_TEST

START_TEST(test_ahead)
{
  job *j = job_new(4);
  job_world(j, WORLD);
  run(j, 0, 3, WORLD, 16);
  step(j, 2, WORLD, FRZ_STATE_STARTED);
  /* the others finished: their last dumps were written at exit */
  for (int r = 0; r < 4; r++)
    if (r != 2) j->proc[r].trigger = FRZ_TRIGGER_EXIT;
  fa_analysis *a = analyse(j);
  const fa_verdict *v = &a->verdict;
  ck_assert_int_eq(v->status, FA_STATUS_HANG);
  RANKS_EQ(&v->ahead, 2);
  RANKS_EQ(&v->root_cause, 2);
  RANKS_NONE(&v->lagging);
  ck_assert_int_eq(comm_of(a, WORLD)->last_completed, 15);
  ck_assert(has_substr(v->summary, "rank 2 is ahead"));
  fa_free(a);
  /* alive and idle (their dumps asked for by the hang: a host wait before
   * the op): not done with the comm, so they are lagging, not 2 ahead */
  for (int r = 0; r < 4; r++) j->proc[r].trigger = FRZ_TRIGGER_FILE;
  a = analyse(j);
  v = &a->verdict;
  RANKS_NONE(&v->ahead);
  RANKS_EQ(&v->lagging, 0, 1, 3);
  RANKS_EQ(&v->root_cause, 0, 1, 3);
  fa_free(a);
  job_free(j);
}
END_TEST

START_TEST(test_frames_latest_used)
{
  job *j = job_new(4);
  job_world(j, WORLD);
  run(j, 0, 3, WORLD, 10);
  fa_analysis *a = fa_new();
  /* an older frame of rank 3 that still waited in seq 9 */
  frz_dump old = dump_of(j, 3);
  old.records[old.nrecords - 1].state = FRZ_STATE_STARTED;
  old.comms[0].last_completed_seq = 8;
  for (int r = 0; r < 4; r++) {
    frz_dump d = dump_of(j, r);
    d.process.frame = r == 3 ? 1 : 0;
    ck_assert_int_eq(fa_add_dump(a, &d, NULL), 0);
  }
  ck_assert_int_eq(fa_add_dump(a, &old, "rank3-frame0"), 0);
  ck_assert_int_eq(fa_run(a), 0);
  ck_assert_int_eq(a->verdict.status, FA_STATUS_HEALTHY);
  int32_t k = fa_find_rank(a, 3);
  ck_assert_int_ge(k, 0);
  ck_assert_uint_eq(a->ranks[k].nframes, 2);
  ck_assert_uint_eq(fa_rank_latest(a, &a->ranks[k])->dump.process.frame, 1);
  ck_assert_str_eq(a->frames[a->ranks[k].first_frame].name, "rank3-frame0");
  fa_free(a);
  job_free(j);
}
END_TEST

START_TEST(test_duplicates_and_conflicts)
{
  job *j = c1_job();
  j->comm[3][0].nranks = 4; /* rank 3 disagrees on the size */
  fa_analysis *a = fa_new();
  for (int r = 0; r < 8; r++) {
    frz_dump d = dump_of(j, r);
    ck_assert_int_eq(fa_add_dump(a, &d, NULL), 0);
  }
  frz_dump again = dump_of(j, 2);
  ck_assert_int_eq(fa_add_dump(a, &again, "copy-of-rank2"), 0);
  frz_dump other = dump_of(j, 4);
  snprintf(other.process.job_id, sizeof other.process.job_id, "another-job");
  ck_assert_int_eq(fa_add_dump(a, &other, "other-job"), 0);
  ck_assert_int_eq(fa_run(a), 0);
  ck_assert_uint_eq(a->nframes, 8);
  int dup = 0, size = 0, job_ = 0;
  for (uint32_t i = 0; i < a->nproblems; i++) {
    if (has_substr(a->problems[i].message, "duplicate")) dup++;
    if (has_substr(a->problems[i].message, "says 4 ranks")) size++;
    if (has_substr(a->problems[i].message, "another-job")) job_++;
  }
  ck_assert_int_eq(dup, 1);
  ck_assert_int_eq(size, 1);
  ck_assert_int_eq(job_, 1);
  ck_assert_int_eq(a->verdict.status, FA_STATUS_HANG);
  RANKS_EQ(&a->verdict.lagging, 5);
  fa_free(a);
  job_free(j);
}
END_TEST

/* A reused dump directory: an older healthy job and a newer hung one.  The
 * newest job is analysed, whatever the counts. */
START_TEST(test_newest_job_wins)
{
  job *old = job_new(8);
  job_world(old, WORLD);
  run(old, 0, 7, WORLD, 20);
  job *cur = c1_job();
  for (int r = 0; r < 8; r++) {
    snprintf(cur->proc[r].job_id, sizeof cur->proc[r].job_id, "job-43");
    cur->proc[r].anchor_realtime_ns += 3600ull * 1000000000ull;
  }
  cur->absent[7] = 1; /* fewer dumps than the old job: still the newest */
  fa_analysis *a = fa_new();
  for (int r = 0; r < 8; r++) {
    frz_dump d = dump_of(old, r);
    ck_assert_int_eq(fa_add_dump(a, &d, "old"), 0);
    if (cur->absent[r]) continue;
    d = dump_of(cur, r);
    ck_assert_int_eq(fa_add_dump(a, &d, "new"), 0);
  }
  ck_assert_int_eq(fa_run(a), 0);
  ck_assert_str_eq(a->job_id, "job-43");
  ck_assert_int_eq(a->verdict.status, FA_STATUS_HANG);
  RANKS_EQ(&a->verdict.lagging, 5);
  int ignored = 0;
  for (uint32_t i = 0; i < a->nproblems; i++) ignored += has_substr(a->problems[i].message, "job-42");
  ck_assert_int_eq(ignored, 8);
  fa_free(a);
  job_free(old);
  job_free(cur);
}
END_TEST

/* One rank dumped (a signal to one process), the rest did not: nothing can
 * be said about the absent ranks, so the verdict is not "healthy". */
START_TEST(test_lone_dump_inconclusive)
{
  job *j = job_new(8);
  job_world(j, WORLD);
  run(j, 0, 7, WORLD, 20);
  for (int r = 0; r < 8; r++) j->absent[r] = r != 5;
  fa_analysis *a = analyse(j);
  ck_assert_int_eq(a->verdict.status, FA_STATUS_INCONCLUSIVE);
  ck_assert_int_eq(fa_exit_status(a), 2);
  ck_assert(has_substr(a->verdict.summary, "left no dump"));
  ck_assert(has_substr(a->verdict.summary, "0-4,6-7"));
  fa_free(a);
  job_free(j);
}
END_TEST

START_TEST(test_nothing_usable)
{
  fa_analysis *a = fa_new();
  ck_assert_int_eq(fa_add_path(a, "/nonexistent/flightrec/dir"), 0);
  ck_assert_int_eq(fa_run(a), 0);
  ck_assert_int_eq(a->verdict.status, FA_STATUS_INCONCLUSIVE);
  ck_assert_int_eq(fa_exit_status(a), 2);
  ck_assert_uint_eq(a->nproblems, 1);
  ck_assert(!a->problems[0].has_offset);
  char *t = text_of(a);
  ck_assert_msg(has_substr(t, "verdict: inconclusive"), "%s", t);
  free(t);
  free(fa_report_json(a));
  fa_free(a);
}
END_TEST

START_TEST(test_format_ranks)
{
  char buf[64];
  int32_t v[] = {0, 1, 2, 3, 4, 6, 7};
  ck_assert_str_eq(fa_format_ranks(v, 7, buf, sizeof buf), "0-4,6-7");
  int32_t one[] = {5};
  ck_assert_str_eq(fa_format_ranks(one, 1, buf, sizeof buf), "5");
  ck_assert_str_eq(fa_format_ranks(NULL, 0, buf, sizeof buf), "");
  int32_t odd[500];
  for (int i = 0; i < 500; i++) odd[i] = 2 * i;
  fa_format_ranks(odd, 500, buf, 40);
  ck_assert_msg(strlen(buf) < 40, "%s", buf);
  ck_assert_msg(has_substr(buf, "... (500 ranks)"), "%s", buf);
}
END_TEST

START_TEST(test_sanitize)
{
  char buf[64];
  ck_assert_str_eq(fa_sanitize("a\x1b[31mb\n", buf, sizeof buf), "a?[31mb?");
  ck_assert_str_eq(fa_sanitize("\xff\xfe", buf, sizeof buf), "??");
  ck_assert_str_eq(fa_sanitize("caf\xc3\xa9", buf, sizeof buf), "caf\xc3\xa9");
  ck_assert_str_eq(fa_sanitize("\xc2\x9b" "2J", buf, sizeof buf), "??2J");
  ck_assert_str_eq(fa_sanitize("abcdef", buf, 4), "abc");
  /* bidirectional controls and line separators reorder or break what a
   * terminal shows: RLO (U+202E), LRI (U+2066), U+2028 */
  ck_assert_str_eq(fa_sanitize("ab\xe2\x80\xae" "cd\xe2\x81\xa6" "e\xe2\x80\xa8", buf, sizeof buf), "ab???cd???e???");
  ck_assert_str_eq(fa_sanitize("\xe2\x80\x94" "ok", buf, sizeof buf), "\xe2\x80\x94" "ok"); /* an em dash stays */
}
END_TEST

/* Many ranks: stays fast (linear), and the verdict holds. */
START_TEST(test_scale)
{
  enum { N = 2048, OPS = 64 };
  fa_analysis *a = fa_new();
  for (int r = 0; r < N; r++) {
    frz_dump d;
    memset(&d, 0, sizeof d);
    d.version_major = 1;
    d.process.global_rank = r;
    d.process.world_size = N;
    snprintf(d.process.job_id, sizeof d.process.job_id, "big");
    snprintf(d.process.host, sizeof d.process.host, "node%03d", r / 8);
    d.ncomms = 1;
    d.comms = calloc(1, sizeof *d.comms);
    d.comms[0] = (frz_comm){.comm_id = WORLD, .nranks = N, .rank = r, .split_color = -1};
    uint64_t n = r == 1234 ? OPS - 1 : OPS;
    d.nrecords = n;
    d.records = calloc(n, sizeof *d.records);
    for (uint64_t k = 0; k < n; k++)
      d.records[k] = (frz_record){.id = k, .comm_id = WORLD, .seq = k, .count = 1, .peer = -1,
                                  .op = FRZ_OP_AllReduce, .kind = FRZ_KIND_COLL, .dtype = 7,
                                  .state = k + 1 == OPS ? FRZ_STATE_STARTED : FRZ_STATE_COMPLETED,
                                  .t_enqueue_ns = T0 + k * DT, .t_complete_ns = T0 + k * DT + DT / 2};
    d.comms[0].last_enqueued_seq = (int64_t)n - 1;
    d.comms[0].last_completed_seq = OPS - 2;
    d.comms[0].next_seq = n;
    ck_assert_int_eq(fa_add_dump(a, &d, NULL), 0);
  }
  ck_assert_int_eq(fa_run(a), 0);
  RANKS_EQ(&a->verdict.lagging, 1234);
  ck_assert_uint_eq(comm_of(a, WORLD)->nwaiting, N - 1);
  ck_assert_uint_eq(a->nhosts, N / 8);
  ck_assert_uint_eq(a->verdict.nstragglers, 0);
  free(fa_report_json(a));
  fa_free(a);
}
END_TEST


/* Ranks late at every op are ranked by lateness; a rank late once is not a
 * straggler. */
START_TEST(test_straggler_ranking)
{
  job *j = job_new(8);
  job_world(j, WORLD);
  run(j, 0, 7, WORLD, 20);
  for (uint64_t k = 0; k < j->nrec[6]; k++) j->rec[6][k].t_enqueue_ns += 50 * DT;
  for (uint64_t k = 0; k < j->nrec[3]; k++) j->rec[3][k].t_enqueue_ns += 30 * DT;
  j->rec[1][5].t_enqueue_ns += 100 * DT;
  fa_analysis *a = analyse(j);
  const fa_verdict *v = &a->verdict;
  ck_assert_int_eq(v->status, FA_STATUS_STRAGGLER);
  ck_assert_uint_eq(v->nstragglers, 2);
  ck_assert_int_eq(v->stragglers[0].rank, 6);
  ck_assert_int_eq(v->stragglers[1].rank, 3);
  ck_assert_uint_ge(v->stragglers[0].late_ops, 15);
  ck_assert(v->stragglers[0].mean_late_ns > v->stragglers[1].mean_late_ns);
  RANKS_NONE(&v->lagging);
  fa_ranks ex;
  ck_assert_int_eq(fa_exclude_list(a, &ex), 0);
  ck_assert_uint_eq(ex.n, 2);
  fa_ranks_free(&ex);
  ck_assert_int_eq(fa_exit_status(a), 1);
  fa_free(a);
  job_free(j);
}
END_TEST

/* stragglers_if_needed (fr-tui): a job with stragglers and no hang still
 * gets them; the same job hung at its end skips the pass (no stragglers,
 * no clock offsets) and keeps the same hang verdict as a full run. */
START_TEST(test_stragglers_if_needed)
{
  job *j = job_new(8);
  job_world(j, WORLD);
  run(j, 0, 7, WORLD, 20);
  for (uint64_t k = 0; k < j->nrec[6]; k++) j->rec[6][k].t_enqueue_ns += 50 * DT;
  fa_analysis *a = analyse_opt(j, 1);
  ck_assert_int_eq(a->verdict.status, FA_STATUS_STRAGGLER);
  ck_assert_uint_eq(a->verdict.nstragglers, 1);
  ck_assert_int_eq(a->verdict.stragglers[0].rank, 6);
  fa_free(a);
  for (int r = 0; r < 7; r++) step(j, r, WORLD, FRZ_STATE_STARTED);
  fa_analysis *full = analyse_opt(j, 0), *lazy = analyse_opt(j, 1);
  ck_assert_int_eq(full->verdict.status, FA_STATUS_HANG);
  ck_assert_uint_eq(full->verdict.nstragglers, 1);
  ck_assert_int_eq(lazy->verdict.status, FA_STATUS_HANG);
  ck_assert_uint_eq(lazy->verdict.nstragglers, 0);
  ck_assert_str_eq(lazy->verdict.summary, full->verdict.summary);
  RANKS_EQ(&lazy->verdict.root_cause, 7);
  fa_free(full);
  fa_free(lazy);
  job_free(j);
}
END_TEST

/* A host whose wall clock is 5 s ahead: the offset is estimated from the
 * completions and nobody is called late for it. */
START_TEST(test_clock_skew)
{
  job *j = job_new(8);
  job_world(j, WORLD);
  run(j, 0, 7, WORLD, 12);
  for (int r = 4; r < 8; r++) j->proc[r].anchor_realtime_ns += 5000 * DT;
  fa_analysis *a = analyse(j);
  ck_assert_uint_eq(a->nhosts, 2);
  ck_assert_int_eq(a->hosts[1].offset_ns, (int64_t)(5000 * DT));
  ck_assert_uint_eq(a->verdict.nstragglers, 0);
  ck_assert_int_eq(a->verdict.status, FA_STATUS_HEALTHY);
  fa_free(a);
  job_free(j);
}
END_TEST

/* The wait-for chain: ranks 0-2 wait in world for 3-5; 3 and 5 wait in a
 * split comm for 4, which is in no NCCL op: the root is rank 4 there. */
START_TEST(test_chain_root)
{
  job *j = job_new(6);
  job_world(j, WORLD);
  for (int r = 3; r < 6; r++) job_comm(j, r, 0x77, 3, r - 3);
  run(j, 0, 5, WORLD, 4);
  run(j, 3, 5, 0x77, 4);
  for (int r = 0; r < 3; r++) step(j, r, WORLD, FRZ_STATE_STARTED);
  step(j, 3, 0x77, FRZ_STATE_STARTED);
  step(j, 5, 0x77, FRZ_STATE_STARTED);
  fa_analysis *a = analyse(j);
  const fa_verdict *v = &a->verdict;
  ck_assert_int_eq(v->status, FA_STATUS_HANG);
  ck_assert_int_eq(a->comms[v->comm].id, 0x77);
  RANKS_EQ(&v->lagging, 4);
  RANKS_EQ(&v->root_cause, 4);
  fa_free(a);
  job_free(j);
}
END_TEST

/* Two frames per rank, the later one further on: slow, not hung. */
START_TEST(test_frames_progress_not_hung)
{
  char *dir = temp_dir();
  job *j = job_new(4);
  job_world(j, WORLD);
  run(j, 0, 3, WORLD, 8);
  step(j, 0, WORLD, FRZ_STATE_STARTED);
  step(j, 1, WORLD, FRZ_STATE_STARTED);
  write_job(j, dir);
  job_free(j);
  j = job_new(4);
  job_world(j, WORLD);
  run(j, 0, 3, WORLD, 12);
  for (int r = 0; r < 3; r++) step(j, r, WORLD, FRZ_STATE_STARTED);
  for (int r = 0; r < 4; r++) {
    j->proc[r].frame = 1;
    j->proc[r].trigger = FRZ_TRIGGER_FRAME;
  }
  write_job(j, dir);
  job_free(j);
  fa_analysis *a = analyse_dir(dir);
  const fa_verdict *v = &a->verdict;
  ck_assert(v->frames_progress);
  ck_assert_uint_eq(v->progressed.n, 4);
  ck_assert_int_eq(v->status, FA_STATUS_HEALTHY);
  ck_assert(has_substr(v->summary, "progressed between frames"));
  fa_free(a);
  remove_dir(dir);
  free(dir);
}
END_TEST

/* Four ranks in the world comm, ranks 0 and 1 also in pair comm 0x11. */
static job *world_and_pair(void)
{
  job *j = job_new(4);
  job_world(j, WORLD);
  job_comm(j, 0, 0x11, 2, 0);
  job_comm(j, 1, 0x11, 2, 1);
  return j;
}

/* Progress elsewhere hides no hang (issue 15): ranks 2,3 wait in a world
 * all-reduce that ranks 0,1 never call, while 0,1 go on in their own pair
 * comm and write a second frame.  Every rank with several frames progressed,
 * but none in the world comm: it is hung, and 0,1 are lagging in it. */
START_TEST(test_progress_elsewhere_hides_no_hang)
{
  char *dir = temp_dir();
  for (int frame = 0; frame < 2; frame++) {
    job *j = world_and_pair();
    job_comm(j, 2, 0x22, 2, 0);
    job_comm(j, 3, 0x22, 2, 1);
    run(j, 0, 3, WORLD, 4);
    run(j, 0, 1, 0x11, 10 + 10 * frame);
    run(j, 2, 3, 0x22, 5);
    step(j, 2, WORLD, FRZ_STATE_STARTED);
    step(j, 3, WORLD, FRZ_STATE_STARTED);
    for (int r = 0; r < 4; r++) {
      j->proc[r].frame = (uint32_t)frame;
      if (frame) j->proc[r].trigger = FRZ_TRIGGER_FRAME;
    }
    if (frame) j->absent[2] = j->absent[3] = 1; /* the hung ranks wrote one frame */
    write_job(j, dir);
    job_free(j);
  }
  fa_analysis *a = analyse_dir(dir);
  const fa_verdict *v = &a->verdict;
  ck_assert(v->frames_progress); /* 0 and 1 progressed, in their pair comm */
  ck_assert_int_eq(v->status, FA_STATUS_HANG);
  ck_assert_int_eq(a->comms[v->comm].id, WORLD);
  RANKS_EQ(&v->lagging, 0, 1);
  RANKS_EQ(&v->root_cause, 0, 1);
  fa_free(a);
  remove_dir(dir);
  free(dir);
}
END_TEST

/* A rank whose comm NCCL reported broken (an async error) is not "slow,
 * not hung" because an op it had in flight completed between its frames
 * (a break-it pass: its TP all-reduce finished after its DP comm broke);
 * the same frames without the error still count as progress. */
/* Two ranks, comms A and B (and C), the same calls each round; then rank 0
 * waits in A for rank 1, which waits in B for rank 0 (fr-analyze(1), "a call
 * left out").  With two rounds or more of history, rank 1 left A out (its
 * rounds make A before B every time; rank 0 keeps to its own): rank 1 alone.
 * With one round, or when rank 1 also left out C (calls of two comms), or
 * when rank 0 changed too, both stay named. */
START_TEST(test_call_left_out_by_rounds)
{
  enum { A = 0xa1, B = 0xb1, C = 0xc1 };
  static const struct { int rounds, with_c, skip_c, zero_changed; int32_t roots; } v[] = {
      {3, 0, 0, 0, 1}, {6, 1, 0, 0, 1}, {1, 0, 0, 0, -1}, {4, 1, 1, 0, -1}, {4, 0, 0, 1, -1},
  };
  for (size_t k = 0; k < sizeof v / sizeof v[0]; k++) {
    job *j = job_new(2);
    for (int r = 0; r < 2; r++) {
      job_comm(j, r, A, 2, r);
      job_comm(j, r, B, 2, r);
      if (v[k].with_c) job_comm(j, r, C, 2, r);
    }
    for (int i = 0; i < v[k].rounds; i++)
      for (int r = 0; r < 2; r++) {
        coll(j, r, A, FRZ_OP_AllReduce, 1024, 7, 0, -1, FRZ_STATE_COMPLETED);
        if (v[k].with_c) coll(j, r, C, FRZ_OP_AllGather, 512, 7, 255, -1, FRZ_STATE_COMPLETED);
        coll(j, r, B, FRZ_OP_AllReduce, 1024, 7, 0, -1, FRZ_STATE_COMPLETED);
      }
    /* rank 0 changed too: a broadcast on B before A this round */
    if (v[k].zero_changed) coll(j, 0, B, FRZ_OP_Broadcast, 64, 7, 255, 0, FRZ_STATE_COMPLETED);
    if (v[k].zero_changed) coll(j, 1, B, FRZ_OP_Broadcast, 64, 7, 255, 0, FRZ_STATE_COMPLETED);
    coll(j, 0, A, FRZ_OP_AllReduce, 1024, 7, 0, -1, FRZ_STATE_STARTED);
    if (v[k].with_c && !v[k].skip_c) coll(j, 1, C, FRZ_OP_AllGather, 512, 7, 255, -1, FRZ_STATE_COMPLETED);
    coll(j, 1, B, FRZ_OP_AllReduce, 1024, 7, 0, -1, FRZ_STATE_STARTED);
    fa_analysis *a = analyse(j);
    const fa_verdict *vd = &a->verdict;
    ck_assert_msg(vd->status == FA_STATUS_DEADLOCK, "variant %zu: %s", k, vd->summary);
    if (v[k].roots >= 0)
      ck_assert_msg(vd->root_cause.n == 1 && vd->root_cause.v[0] == v[k].roots &&
                        has_substr(vd->summary, "without having called the first"),
                    "variant %zu: %s", k, vd->summary);
    else
      ck_assert_msg(vd->root_cause.n == 2 && !has_substr(vd->summary, "without having called the first"), "variant %zu: %s", k,
                    vd->summary);
    fa_free(a);
    job_free(j);
  }
}
END_TEST

START_TEST(test_broken_rank_not_progressed)
{
  for (int err = 0; err < 2; err++) {
    char *dir = temp_dir();
    for (int frame = 0; frame < 2; frame++) {
      job *j = world_and_pair();
      run(j, 0, 3, WORLD, 4);
      run(j, 0, 1, 0x11, 3 + frame);
      for (int r = 0; r < 4; r++) step(j, r, WORLD, r == 1 ? FRZ_STATE_ENQUEUED : FRZ_STATE_STARTED);
      if (err) find_comm(j, 1, WORLD)->flags |= FRZ_CF_ASYNC_ERROR;
      for (int r = 0; r < 4; r++) {
        j->proc[r].frame = (uint32_t)frame;
        if (frame) j->proc[r].trigger = FRZ_TRIGGER_FRAME;
        if (frame && r != 1) j->absent[r] = 1; /* rank 1 alone wrote a second frame */
      }
      write_job(j, dir);
      job_free(j);
    }
    fa_analysis *a = analyse_dir(dir);
    const fa_verdict *v = &a->verdict;
    ck_assert_int_ne(v->status, FA_STATUS_HEALTHY);
    if (err) {
      RANKS_NONE(&v->progressed);
      ck_assert_msg(!has_substr(v->summary, "slow, not hung"), "%s", v->summary);
    } else {
      RANKS_EQ(&v->progressed, 1);
    }
    fa_free(a);
    remove_dir(dir);
    free(dir);
  }
}
END_TEST

/* A missing dump of a comm whose rank order is not the global order (issue
 * 15): the comm's member without a dump is the one rank of the job without
 * one, named, not "a member of unknown rank". */
START_TEST(test_missing_dump_reversed_comm)
{
  job *j = job_new(4);
  job_world(j, WORLD);
  static const int cr[4] = {2, 0, 3, 1}; /* no base + stride * comm rank fits */
  for (int r = 0; r < 4; r++) job_comm(j, r, 0x55, 4, cr[r]);
  run(j, 0, 3, WORLD, 3);
  run(j, 0, 3, 0x55, 5);
  for (int r = 0; r < 4; r++) step(j, r, 0x55, FRZ_STATE_STARTED);
  j->absent[2] = 1;
  fa_analysis *a = analyse(j);
  const fa_verdict *v = &a->verdict;
  ck_assert_int_eq(v->status, FA_STATUS_HANG);
  ck_assert_int_eq(a->comms[v->comm].id, 0x55);
  RANKS_EQ(&v->root_cause, 2);
  ck_assert(!has_substr(v->summary, "unknown rank"));
  fa_free(a);
  job_free(j);
}
END_TEST

/* One story when the job is slow (issue 15): the op that looked stuck is in
 * flight; no comm stuck, no member waiting or lagging in the details. */
START_TEST(test_slow_job_in_flight)
{
  char *dir = temp_dir();
  for (int frame = 0; frame < 2; frame++) {
    job *j = job_new(4);
    job_world(j, WORLD);
    run(j, 0, 3, WORLD, 8 + 4 * frame);
    step(j, 0, WORLD, FRZ_STATE_STARTED);
    step(j, 1, WORLD, FRZ_STATE_STARTED);
    for (int r = 0; r < 4; r++) {
      j->proc[r].frame = (uint32_t)frame;
      if (frame) j->proc[r].trigger = FRZ_TRIGGER_FRAME;
    }
    write_job(j, dir);
    job_free(j);
  }
  fa_analysis *a = analyse_dir(dir);
  ck_assert_int_eq(a->verdict.status, FA_STATUS_HEALTHY);
  int32_t w = fa_find_comm(a, WORLD);
  ck_assert_int_ge(w, 0);
  const fa_comm *c = &a->comms[w];
  ck_assert(!c->stuck);
  ck_assert(c->in_flight);
  ck_assert_uint_eq(c->nlinks, 0);
  for (int32_t r = 0; r < c->size; r++) ck_assert_int_eq(c->members[r].state, FA_MEMBER_IDLE);
  char *json = fa_report_json(a);
  ck_assert_ptr_nonnull(json);
  ck_assert(has_substr(json, "\"in_flight\""));
  free(json);
  fa_free(a);
  remove_dir(dir);
  free(dir);
}
END_TEST

/* A teardown cycle: rank 0 finalizes comm A, which waits for rank 1's part of
 * A, while rank 1 waits in comm B for rank 0. */
START_TEST(test_teardown_cycle)
{
  job *j = job_new(2);
  for (int r = 0; r < 2; r++) {
    job_comm(j, r, 0xa, 2, r);
    job_comm(j, r, 0xb, 2, r);
  }
  run(j, 0, 1, 0xa, 3);
  run(j, 0, 1, 0xb, 3);
  life(j, 0, 0xa, FRZ_OP_CommFinalize, 0);
  frz_record *fin = &j->rec[0][j->nrec[0] - 1];
  fin->state = FRZ_STATE_STARTED;
  fin->t_complete_ns = 0;
  find_comm(j, 0, 0xa)->last_completed_seq = (int64_t)fin->seq - 1;
  coll(j, 1, 0xb, FRZ_OP_AllReduce, 16, 7, 0, -1, FRZ_STATE_STARTED);
  fa_analysis *a = analyse(j);
  const fa_verdict *v = &a->verdict;
  ck_assert_int_eq(v->status, FA_STATUS_DEADLOCK);
  ck_assert_uint_eq(v->ncycle, 2);
  RANKS_EQ(&v->root_cause, 0, 1);
  ck_assert(has_substr(v->summary, "CommFinalize"));
  fa_free(a);
  job_free(j);
}
END_TEST

/* One process holding both comm ranks of a comm (ncclCommInitAll on two
 * devices).  Its records say which comm rank made each (frz 1.3), so each
 * comm entry sees its own: comm rank 1 did not enqueue seq 5.  The entries'
 * counters say nothing (-1) here, so that only the records speak.  Records
 * without a comm rank (before 1.3) are seen by both entries. */
START_TEST(test_one_process_two_comm_ranks)
{
  const uint64_t clique = 0xa11a11a11a11a11aull;
  job *j = job_new(1);
  job_comm(j, 0, clique, 2, 0);
  job_comm(j, 0, clique, 2, 1);
  frz_comm *c0 = &j->comm[0][0], *c1 = &j->comm[0][1];
  c0->cuda_device = 0;
  c1->cuda_device = 1;
  for (int k = 0; k < 6; k++) {
    coll_on(j, 0, c0, FRZ_OP_AllReduce, 1024, 7, 0, -1, k < 5 ? FRZ_STATE_COMPLETED : FRZ_STATE_ENQUEUED);
    if (k < 5) coll_on(j, 0, c1, FRZ_OP_AllReduce, 1024, 7, 0, -1, FRZ_STATE_COMPLETED);
  }
  p2p(j, 0, clique, FRZ_OP_Send, 1, 0, FRZ_STATE_COMPLETED); /* comm rank 0's (the first entry) */
  p2p(j, 0, clique, FRZ_OP_Send, 1, 1, FRZ_STATE_COMPLETED);
  j->rec[0][j->nrec[0] - 1].comm_rank = -1; /* whose is not known: both entries' */
  ck_assert_int_eq(j->rec[0][1].comm_rank, 1);
  ck_assert_uint_eq(j->rec[0][1].cuda_device, 1);
  for (int e = 0; e < 2; e++)
    j->comm[0][e].last_enqueued_seq = j->comm[0][e].last_started_seq =
        j->comm[0][e].last_completed_seq = -1;
  for (int old = 0; old < 2; old++) {
    if (old) /* the same records from a 1.2 recorder */
      for (uint64_t k = 0; k < j->nrec[0]; k++) {
        j->rec[0][k].comm_rank = -1;
        j->rec[0][k].cuda_device = FRZ_CUDA_DEVICE_UNKNOWN;
      }
    fa_analysis *a = analyse(j);
    const fa_comm *c = comm_of(a, clique);
    ck_assert_int_eq(c->size, 2);
    ck_assert_int_eq(c->members[0].entry, 0);
    ck_assert_int_eq(c->members[1].entry, 1);
    ck_assert_int_eq(c->members[0].last_enqueued, 5);
    ck_assert_int_eq(c->members[1].last_enqueued, old ? 5 : 4);
    ck_assert_int_eq(c->members[0].last_completed, 4);
    ck_assert_int_eq(c->members[1].last_completed, 4);
    const fa_frame *f = &a->frames[c->members[0].frame];
    ck_assert_uint_eq(f->coll[0].len, old ? 11 : 6);
    ck_assert_uint_eq(f->coll[1].len, old ? 11 : 5);
    ck_assert_uint_eq(f->p2p[0].len, 2);
    ck_assert_uint_eq(f->p2p[1].len, old ? 2 : 1);
    for (uint32_t k = 0; k < f->coll[1].len; k++) /* in seq order */
      ck_assert_uint_eq(f->dump.records[f->idx[f->coll[1].start + k]].seq, old ? k / 2 : k);
    fa_free(a);
  }
  job_free(j);
}
END_TEST

/* Four comm ranks of one comm in one process, records mostly without their
 * comm rank: copying those to every entry would cost more than the frame's
 * records, so the entries share one slice of all the comm's records. */
START_TEST(test_comm_ranks_copy_budget)
{
  const uint64_t clique = 0xa11a11a11a11a11bull;
  job *j = job_new(1);
  for (int cr = 0; cr < 4; cr++) job_comm(j, 0, clique, 4, cr);
  for (int k = 0; k < 11; k++) {
    coll_on(j, 0, &j->comm[0][k < 10 ? 0 : 2], FRZ_OP_AllReduce, 1024, 7, 0, -1, FRZ_STATE_COMPLETED);
    if (k < 10) j->rec[0][k].comm_rank = -1;
  }
  fa_analysis *a = analyse(j);
  const fa_comm *c = comm_of(a, clique);
  ck_assert_int_eq(c->size, 4);
  const fa_frame *f = &a->frames[c->members[0].frame];
  for (int e = 0; e < 4; e++) {
    ck_assert_uint_eq(f->coll[e].len, 11);
    ck_assert_uint_eq(f->coll[e].start, f->coll[0].start);
  }
  fa_free(a);
  job_free(j);
}
END_TEST

/* Proxy progress from hostile dumps: connections repeated, peers out of
 * range (negative, the comm size, INT32_MIN/MAX, itself), more steps done
 * than posted, a last change in the future, a rank field naming another
 * member, an unknown direction: each valid stopped link is named once, the
 * rest name nothing. */
START_TEST(test_proxy_hostile)
{
  job *j = job_new(4);
  job_world(j, WORLD);
  run(j, 0, 3, WORLD, 4);
  for (int r = 0; r < 3; r++) step(j, r, WORLD, FRZ_STATE_STARTED);
  j->absent[3] = 1;
  fa_analysis *a = fa_new();
  ck_assert_ptr_nonnull(a);
  static const struct {
    int32_t peer, rank;
    uint8_t dir;
    uint32_t state;
    uint64_t posted, done, t_last;
  } hostile[] = {
      {3, -1, FRZ_DIR_SEND, 20, 10, 9, 1},              /* 2 -> 3 stopped (twice) */
      {3, -1, FRZ_DIR_SEND, 20, 10, 9, 2},
      {-1, -1, FRZ_DIR_SEND, 20, 10, 9, 1},
      {INT32_MIN, -1, FRZ_DIR_RECV, 10, 10, 9, 1},
      {INT32_MAX, -1, FRZ_DIR_SEND, 9, 10, 9, 1},
      {4, -1, FRZ_DIR_SEND, 20, 10, 9, 1},
      {2, -1, FRZ_DIR_SEND, 20, 10, 9, 1},              /* itself */
      {3, -1, FRZ_DIR_SEND, 20, 5, 10, 1},              /* done > posted */
      {3, 1, FRZ_DIR_SEND, 20, 10, 9, 1},               /* another member's */
      {3, -1, 200, 20, 10, 9, 1},                       /* unknown direction */
      {3, -1, FRZ_DIR_SEND, 20, UINT64_MAX, 0, UINT64_MAX}, /* in the future */
  };
  const uint32_t n = sizeof hostile / sizeof hostile[0];
  for (int r = 0; r < 3; r++) {
    frz_dump d = dump_of(j, r);
    if (r == 2) {
      d.nproxy = n;
      d.proxy = calloc(n, sizeof *d.proxy);
      ck_assert_ptr_nonnull(d.proxy);
      for (uint32_t i = 0; i < n; i++) {
        frz_proxy *x = &d.proxy[i];
        x->comm_id = WORLD;
        x->seq = 4;
        x->kind = FRZ_KIND_COLL;
        x->peer = hostile[i].peer;
        x->rank = hostile[i].rank;
        x->dir = hostile[i].dir;
        x->state = hostile[i].state;
        x->steps_posted = hostile[i].posted;
        x->steps_done = hostile[i].done;
        x->t_last_ns = hostile[i].t_last == UINT64_MAX ? UINT64_MAX
                                                       : d.process.frame_time_ns - hostile[i].t_last * DT;
        x->channel = (uint8_t)(i == 10 ? 1 : 0);
      }
    }
    char name[32];
    snprintf(name, sizeof name, "rank%d", r);
    ck_assert_int_eq(fa_add_dump(a, &d, name), 0);
  }
  ck_assert_int_eq(fa_run(a), 0);
  const fa_comm *c = comm_of(a, WORLD);
  ck_assert(c->stuck);
  uint32_t exact = 0;
  for (uint32_t i = 0; i < c->nlinks; i++) {
    const fa_link *l = &c->links[i];
    if (!l->evidence) continue;
    exact++;
    ck_assert_int_eq(l->src, 2);
    ck_assert_int_eq(l->dst, 3);
    if (l->channel == 0) ck_assert_uint_eq(l->stalled_ns, 2 * DT); /* the longer of the two */
    else ck_assert_uint_eq(l->stalled_ns, 0);                      /* no time from the future */
  }
  ck_assert_uint_eq(exact, 2); /* channel 0 once, channel 1 */
  fa_free(a);
  job_free(j);
}
END_TEST

/* Thread stacks from hostile dumps: a thread whose Python stack is 100,000
 * frames deep (the stack classes' tree recursed once per frame and crashed)
 * is cut to its innermost 256 frames and says so; names carrying terminal
 * escapes come out sanitised; ranks with equal stacks share a class. */
START_TEST(test_stacks_hostile)
{
  enum { DEEP = 100000, NATIVE = 3 };
  job *j = job_new(3);
  job_world(j, WORLD);
  run(j, 0, 2, WORLD, 4);
  fa_analysis *a = fa_new();
  ck_assert_ptr_nonnull(a);
  for (int r = 0; r < j->n; r++) {
    frz_dump d = dump_of(j, r);
    d.nstacks = 1;
    d.stacks = calloc(1, sizeof *d.stacks);
    ck_assert_ptr_nonnull(d.stacks);
    d.stacks[0].tid = 100;
    d.stacks[0].flags = FRZ_TF_MAIN;
    d.stacks[0].thread_handle = 0xabc;
    d.stacks[0].depth = NATIVE;
    for (int k = 0; k < NATIVE; k++) d.stacks[0].frames[k] = 0x1000 + (uint64_t)k;
    d.npyframes = r == 2 ? DEEP : 2;
    d.pyframes = calloc(d.npyframes, sizeof *d.pyframes);
    ck_assert_ptr_nonnull(d.pyframes);
    for (uint32_t k = 0; k < d.npyframes; k++) {
      d.pyframes[k].thread_handle = 0xabc;
      d.pyframes[k].index = k;
      d.pyframes[k].line = k + 1;
      snprintf(d.pyframes[k].func, sizeof d.pyframes[k].func, "f%u\033]0;x\007", k);
      snprintf(d.pyframes[k].file, sizeof d.pyframes[k].file, "/a/\033[2Jb.py");
    }
    char name[32];
    snprintf(name, sizeof name, "rank%d", r);
    ck_assert_int_eq(fa_add_dump(a, &d, name), 0);
  }
  ck_assert_int_eq(fa_run(a), 0);
  ck_assert_uint_eq(a->nstack_classes, 2);
  const fa_stack_class *two = &a->stack_classes[0], *deep = &a->stack_classes[1];
  RANKS_EQ(&two->ranks, 0, 1);
  RANKS_EQ(&deep->ranks, 2);
  ck_assert_uint_eq(two->nframes, NATIVE + 2);
  ck_assert_uint_eq(deep->nframes, NATIVE + 256 + 1);
  ck_assert_str_eq(deep->frames[NATIVE], "f0?]0;x? (?[2Jb.py:1)");
  ck_assert_str_eq(deep->frames[NATIVE + 256], "(99744 outer Python frames cut)");
  char *text = text_of(a);
  ck_assert_ptr_null(strchr(text, '\033'));
  ck_assert_ptr_nonnull(strstr(text, "stack classes: 2"));
  free(text);
  fa_free(a);
  job_free(j);
}
END_TEST

/* Every rank with a stack of its own: the text lists the 32 largest stack
 * classes and counts the rest (it listed all: 20,000 lines for 4,096
 * ranks); the JSON report still has every class. */
START_TEST(test_stack_classes_bounded)
{
  enum { N = 40 }; /* 39 classes, 32 shown */
  job *j = job_new(1);
  job_world(j, WORLD);
  run(j, 0, 0, WORLD, 2);
  fa_analysis *a = fa_new();
  ck_assert_ptr_nonnull(a);
  for (int r = 0; r < N; r++) { /* rank 0's dump as every rank's, each with a stack of its own */
    frz_dump d = dump_of(j, 0);
    d.process.global_rank = r;
    d.process.world_size = N;
    d.comms[0].nranks = N;
    d.comms[0].rank = r;
    d.nstacks = 1;
    d.stacks = calloc(1, sizeof *d.stacks);
    ck_assert_ptr_nonnull(d.stacks);
    d.stacks[0].flags = FRZ_TF_MAIN;
    d.stacks[0].depth = 2;
    d.stacks[0].frames[0] = r < 2 ? 0x1000 : 0x1000 + (uint64_t)r; /* ranks 0, 1 alike */
    d.stacks[0].frames[1] = 0x2000;
    char name[32];
    snprintf(name, sizeof name, "rank%d", r);
    ck_assert_int_eq(fa_add_dump(a, &d, name), 0);
  }
  ck_assert_int_eq(fa_run(a), 0);
  ck_assert_uint_eq(a->nstack_classes, N - 1);
  char *text = text_of(a);
  const char *cls = strstr(text, "\nstack classes: 39,");
  ck_assert_ptr_nonnull(cls);
  ck_assert_ptr_nonnull(strstr(cls, "  2 ranks (0-1): 0x1000 <- 0x2000\n"));
  ck_assert_ptr_nonnull(strstr(cls, "  1 rank (32): 0x1020 <- 0x2000\n")); /* the 32nd */
  ck_assert_ptr_null(strstr(cls, "(33):"));
  ck_assert_ptr_nonnull(strstr(cls, "  ... 7 more classes of 7 ranks (the JSON report lists every class)\n"));
  free(text);
  cJSON *js = json_of(a);
  ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(js, "stack_classes")), N - 1);
  cJSON_Delete(js);
  fa_free(a);
  job_free(j);
}
END_TEST

static Suite *analyze_suite(void)
{
  Suite *s = suite_create("analyze");
  TCase *t = tcase_create("cases");
  tcase_set_timeout(t, 60);
  tcase_add_test(t, test_c1_rank_stops);
  tcase_add_test(t, test_graph_captured_op_is_not_the_hang);
  tcase_add_test(t, test_c2_majority_lags);
  tcase_add_test(t, test_healthy);
  tcase_add_test(t, test_all_joined_not_completed);
  tcase_add_test(t, test_not_started_split);
  tcase_add_test(t, test_queued_behind_p2p);
  tcase_add_test(t, test_broken_rank_not_progressed);
  tcase_add_test(t, test_call_left_out_by_rounds);
  tcase_add_test(t, test_count_mismatch_minority);
  tcase_add_test(t, test_op_mismatch_cascade);
  tcase_add_test(t, test_dtype_split_no_culprit);
  tcase_add_test(t, test_missing_dump);
  tcase_add_test(t, test_corrupt_file_among_good);
  tcase_add_test(t, test_ring_wrap);
  tcase_add_test(t, test_c12_partial_evidence);
  tcase_add_test(t, test_p2p_unmatched);
  tcase_add_test(t, test_deadlock_cycle);
  tcase_add_test(t, test_ahead);
  tcase_add_test(t, test_frames_latest_used);
  tcase_add_test(t, test_duplicates_and_conflicts);
  tcase_add_test(t, test_nothing_usable);
  tcase_add_test(t, test_newest_job_wins);
  tcase_add_test(t, test_lone_dump_inconclusive);
  tcase_add_test(t, test_scale);
  tcase_add_test(t, test_straggler_ranking);
  tcase_add_test(t, test_stragglers_if_needed);
  tcase_add_test(t, test_clock_skew);
  tcase_add_test(t, test_chain_root);
  tcase_add_test(t, test_teardown_cycle);
  tcase_add_test(t, test_one_process_two_comm_ranks);
  tcase_add_test(t, test_comm_ranks_copy_budget);
  tcase_add_test(t, test_frames_progress_not_hung);
  tcase_add_test(t, test_progress_elsewhere_hides_no_hang);
  tcase_add_test(t, test_slow_job_in_flight);
  tcase_add_test(t, test_missing_dump_reversed_comm);
  tcase_add_test(t, test_stacks_hostile);
  tcase_add_test(t, test_proxy_hostile);
  tcase_add_test(t, test_stack_classes_bounded);
  suite_add_tcase(s, t);
  TCase *u = tcase_create("helpers");
  tcase_add_test(u, test_format_ranks);
  tcase_add_test(u, test_sanitize);
  suite_add_tcase(s, u);
  return s;
}

/* Where --mkdumps writes the golden dump set (for tests/e2e/cli.sh). */
static const char *g_mkdumps_dir;

/* A new directory DIR/NAME; returns its path (malloc'd). */
static char *sub_dir(const char *dir, const char *name)
{
  char *p = NULL;
  ck_assert_int_gt(asprintf(&p, "%s/%s", dir, name), 0);
  ck_assert_msg(mkdir(p, 0700) == 0 || errno == EEXIST, "%s: %s", p, strerror(errno));
  return p;
}

/* DIR/c1: the golden C1 job; DIR/hostile: one dump whose strings carry
 * terminal escape sequences; DIR/mismatch: rank 7's count differs at seq
 * 10; DIR/cycle: a two-rank deadlock over two comms; DIR/nodump: C1
 * without rank 5's dump; DIR/frames: C1 in two
 * frames (in frame 0 the waiting ranks had only enqueued seq 37, in frame 1,
 * 2 s later, started). */
START_TEST(test_mkdumps)
{
  ck_assert_msg(mkdir(g_mkdumps_dir, 0700) == 0 || errno == EEXIST, "%s: %s", g_mkdumps_dir,
                strerror(errno));
  char *c1 = sub_dir(g_mkdumps_dir, "c1"), *hostile = sub_dir(g_mkdumps_dir, "hostile");
  job *j = golden_job();
  write_job(j, c1);
  job_free(j);
  j = job_new(1);
  job_world(j, WORLD);
  run(j, 0, 0, WORLD, 2);
  snprintf(j->proc[0].host, sizeof j->proc[0].host, "node\033]0;owned\007");
  snprintf(j->proc[0].job_id, sizeof j->proc[0].job_id, "job\n\033[2J");
  /* ... then U+202E (right-to-left override), which reorders a terminal line */
  snprintf(j->proc[0].trigger_text, sizeof j->proc[0].trigger_text, "\033[31mred\302\233\342\200\256gnp.exe");
  write_rank(j, 0, hostile, "hostile\033[1m.frz");
  job_free(j);
  char *mm = sub_dir(g_mkdumps_dir, "mismatch"), *cyc = sub_dir(g_mkdumps_dir, "cycle");
  j = mismatch_job();
  write_job(j, mm);
  job_free(j);
  j = cycle_job();
  write_job(j, cyc);
  job_free(j);
  free(mm);
  free(cyc);
  char *nodump = sub_dir(g_mkdumps_dir, "nodump");
  j = golden_job();
  j->absent[5] = 1;
  write_job(j, nodump);
  job_free(j);
  free(nodump);
  char *frames = sub_dir(g_mkdumps_dir, "frames");
  j = golden_job_at(FRZ_STATE_ENQUEUED);
  write_job(j, frames);
  job_free(j);
  j = golden_job();
  for (int r = 0; r < j->n; r++) {
    j->proc[r].frame = 1;
    j->proc[r].trigger = FRZ_TRIGGER_FRAME;
    j->proc[r].frame_time_ns += 2000 * DT;
  }
  write_job(j, frames);
  job_free(j);
  free(frames);
  free(c1);
  free(hostile);
}
END_TEST

/* The helpers assert with Check, so the generator runs as a test too. */
static Suite *mkdumps_suite(void)
{
  Suite *s = suite_create("mkdumps");
  TCase *t = tcase_create("mkdumps");
  tcase_add_test(t, test_mkdumps);
  suite_add_tcase(s, t);
  return s;
}

int main(int argc, char **argv)
{
  int gen = argc == 3 && strcmp(argv[1], "--mkdumps") == 0;
  if (gen) g_mkdumps_dir = argv[2];
  SRunner *sr = srunner_create(gen ? mkdumps_suite() : analyze_suite());
  srunner_run_all(sr, gen ? CK_SILENT : CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  if (gen && failed) {
    TestResult **tr = srunner_failures(sr);
    fprintf(stderr, "check_analyze --mkdumps: %s\n", tr_msg(tr[0]));
    free(tr);
  }
  srunner_free(sr);
  return failed ? 1 : 0;
}
