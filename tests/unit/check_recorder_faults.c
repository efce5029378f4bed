/* check_recorder_faults.c — the recorder under hostile use, on the simulator.
 *
 * Run by tests/e2e/recorder-faults.sh with librecorder.so preloaded,
 * FR_DUMP_DIR set and FR_DUMP_SIGNAL=SIGUSR2.  Every check compares what a
 * call returns through the recorder's wrapper (ncclX) with what NCCL itself
 * returns for the same call (pncclX): the recorder must never change it.
 *
 *   (no argument)   Check suite: calls on destroyed comms, zero and huge
 *                   counts, a bounded ring under many more ops than it holds
 *   --injected      Check suite, with tests/sim/libsimfault.so preloaded too:
 *                   every wrapped call made to fail with a chosen code
 *   --before-init   calls with no communicator before any init, then one comm
 *                   that is recorded as usual
 *   --storm N       N children forked while a thread keeps calling NCCL: they
 *                   exit, exec a program without NCCL, or exec this one with
 *                   --child (which uses NCCL and dumps at exit)
 *   --child         one comm, one all-reduce, exit (FR_DUMP_ON_EXIT dumps it)
 *   --hwm N         N all-reduces, then print the peak RSS (VmHWM kB)
 *   --dumps FILE MS a full ring, then a dump asked for every MS ms while
 *                   all-reduces go on, until FILE exists; then a last one
 */
#include <check.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "recorder_probe.h"

extern char **environ;

static void sleep_ms(long ms) {
  struct timespec t = {ms / 1000, ms ? (ms % 1000) * 1000000L : 100000L}; /* 0: 100 us */
  nanosleep(&t, NULL);
}

/* ---- calls on destroyed communicators ---- */

START_TEST(calls_on_a_destroyed_comm_return_what_nccl_returns) {
  ncclComm_t c = one_rank_comm(), child = NULL;
  float x = 0;
  ncclResult_t e = ncclSuccess;
  ck_assert_int_eq(ncclAllReduce(&x, &x, 1, ncclFloat32, ncclSum, c, stream), ncclSuccess);
  ck_assert_int_eq(cuStreamSynchronize(stream), CUDA_SUCCESS);
  ck_assert_int_eq(ncclCommDestroy(c), ncclSuccess);
  /* NCCL refuses a destroyed comm; the recorder passes that on */
  ncclResult_t want = pncclAllReduce(&x, &x, 1, ncclFloat32, ncclSum, c, stream);
  ck_assert_int_eq(want, ncclInvalidArgument);
  ck_assert_int_eq(ncclAllReduce(&x, &x, 1, ncclFloat32, ncclSum, c, stream), want);
  ck_assert_int_eq(ncclBroadcast(&x, &x, 1, ncclFloat32, 0, c, stream),
                   pncclBroadcast(&x, &x, 1, ncclFloat32, 0, c, stream));
  ck_assert_int_eq(ncclSend(&x, 1, ncclFloat32, 0, c, stream), pncclSend(&x, 1, ncclFloat32, 0, c, stream));
  ck_assert_int_eq(ncclCommSplit(c, 0, 0, &child, NULL), pncclCommSplit(c, 0, 0, &child, NULL));
  ck_assert_ptr_null(child);
  ck_assert_int_eq(ncclCommGetAsyncError(c, &e), pncclCommGetAsyncError(c, &e));
  ck_assert_int_eq(ncclCommFinalize(c), pncclCommFinalize(c));
  ck_assert_int_eq(ncclCommRevoke(c, 0), pncclCommRevoke(c, 0));
  ck_assert_int_eq(ncclCommAbort(c), pncclCommAbort(c));
  ck_assert_int_eq(ncclCommDestroy(c), want);
  ck_assert_int_eq(pncclCommDestroy(c), want);
  /* the recorder still records a live comm and dumps */
  ncclComm_t d2 = one_rank_comm();
  ck_assert_int_eq(ncclAllReduce(&x, &x, 3, ncclFloat32, ncclSum, d2, stream), ncclSuccess);
  frz_dump d;
  dump_now(&d);
  const frz_comm *fc = comm_of(&d, d2);
  ck_assert_ptr_nonnull(fc);
  ck_assert_int_eq(fc->flags & FRZ_CF_DESTROYED, 0);
  const frz_record *r[8];
  ck_assert_uint_eq(records_of(&d, fc->comm_id, r, 8), 2);
  ck_assert_int_eq(r[1]->state, FRZ_STATE_COMPLETED);
  /* whatever was recorded of the calls on the destroyed handle failed with
   * NCCL's own result */
  for (uint64_t i = 0; i < d.nrecords; i++) {
    const frz_record *q = &d.records[i];
    if (q->comm_id == fc->comm_id || q->state != FRZ_STATE_FAILED) continue;
    ck_assert_int_eq(q->result, want);
  }
  frz_dump_free(&d);
  ck_assert_int_eq(ncclCommDestroy(d2), ncclSuccess);
}
END_TEST

/* ---- zero and huge counts ---- */

START_TEST(zero_and_huge_counts_are_recorded_exactly) {
  ncclComm_t c = one_rank_comm();
  float x = 0;
  /* in place on one rank: nothing moves, whatever the count */
  const size_t counts[] = {0, (size_t)1 << 40, SIZE_MAX};
  for (int i = 0; i < 3; i++) {
    ncclResult_t want = pncclAllReduce(&x, &x, counts[i], ncclFloat32, ncclSum, c, stream);
    ck_assert_int_eq(ncclAllReduce(&x, &x, counts[i], ncclFloat32, ncclSum, c, stream), want);
    ck_assert_int_eq(want, ncclSuccess);
  }
  ck_assert_int_eq(ncclAllReduce(NULL, NULL, 0, ncclFloat32, ncclSum, c, stream), ncclSuccess);
  ck_assert_int_eq(ncclGroupStart(), ncclSuccess);
  ck_assert_int_eq(ncclSend(NULL, 0, ncclFloat32, 0, c, stream), ncclSuccess);
  ck_assert_int_eq(ncclRecv(NULL, 0, ncclFloat32, 0, c, stream), ncclSuccess);
  ck_assert_int_eq(ncclGroupEnd(), ncclSuccess);
  frz_dump d;
  dump_now(&d);
  const frz_record *r[16];
  /* init, the three pnccl calls are not recorded, three counts, NULL zero, send, recv */
  ck_assert_uint_eq(records_of(&d, comm_of(&d, c)->comm_id, r, 16), 7);
  for (int i = 0; i < 3; i++) ck_assert_uint_eq(r[1 + i]->count, (uint64_t)counts[i]);
  for (int i = 4; i < 7; i++) ck_assert_uint_eq(r[i]->count, 0);
  for (int i = 1; i < 7; i++) ck_assert_int_eq(r[i]->state, FRZ_STATE_COMPLETED);
  frz_dump_free(&d);
  ck_assert_int_eq(ncclCommDestroy(c), ncclSuccess);
}
END_TEST

/* ---- a bounded ring ---- */

START_TEST(the_ring_keeps_its_size_under_many_more_ops) {
  ncclComm_t c = one_rank_comm();
  float x = 0;
  const int n = 50000;
  for (int i = 0; i < n; i++)
    ck_assert_int_eq(ncclAllReduce(&x, &x, 1, ncclFloat32, ncclSum, c, stream), ncclSuccess);
  frz_dump d;
  dump_now(&d);
  uint32_t cap = (uint32_t)atoi(getenv("FR_BUFFER_ENTRIES"));
  ck_assert_uint_eq(d.process.ring_capacity, cap);
  ck_assert_uint_le(d.nrecords, cap);
  ck_assert_uint_ge(d.process.records_dropped, (uint64_t)n - cap);
  const frz_comm *fc = comm_of(&d, c);
  ck_assert_uint_eq(fc->next_seq, (uint64_t)n + 1);
  ck_assert_int_eq(fc->last_completed_seq, n);
  frz_dump_free(&d);
  ck_assert_int_eq(ncclCommDestroy(c), ncclSuccess);
}
END_TEST

/* ---- NCCL errors from every wrapped call (libsimfault.so) ---- */

typedef int (*fault_set_fn)(const char *name, int code);
static fault_set_fn fault_set;

/* The (op, result) of every failed record expected on the test's comm. */
static struct { unsigned op; int code; } expect[64];
static int nexpect;

/* Make nccl<Name> fail with `code`, run CALL through the recorder and DIRECT
 * straight to NCCL: both must return `code`.  REC: an op code when the
 * call leaves a failed record on the test's comm, 0 when it does not. */
#define FAULT(Name, CODE, REC, CALL, DIRECT)                                         \
  do {                                                                               \
    int want_ = (CODE);                                                              \
    ck_assert_int_eq(fault_set(#Name, want_), 0);                                    \
    int got_ = (int)(CALL), direct_ = (int)(DIRECT);                                 \
    fault_set(#Name, 0);                                                             \
    ck_assert_msg(got_ == want_ && direct_ == want_,                                 \
                  "nccl" #Name ": %d through the recorder, %d from NCCL, injected %d", \
                  got_, direct_, want_);                                             \
    if (REC) {                                                                       \
      expect[nexpect].op = (REC);                                                    \
      expect[nexpect++].code = want_;                                                \
    }                                                                                \
  } while (0)

START_TEST(every_wrapped_call_returns_ncclS_own_error_and_records_it) {
  ncclComm_t c = one_rank_comm(), nc = NULL, other = one_rank_comm(), third = one_rank_comm();
  float x = 0, y = 0;
  ncclUniqueId id;
  ncclResult_t ae;
  ncclSimInfo_t info = {sizeof info, 0x74685283, 22809, -1.0f};
  ck_assert_int_eq(ncclGetUniqueId(&id), ncclSuccess);
  nexpect = 0;
  int k = 0; /* error codes 1..6 in turn: ncclUnhandledCudaError .. ncclRemoteError */
#define NEXT (1 + (k++ % 6))
  FAULT(AllReduce, NEXT, FRZ_OP_AllReduce, ncclAllReduce(&x, &y, 1, ncclFloat32, ncclSum, c, stream),
        pncclAllReduce(&x, &y, 1, ncclFloat32, ncclSum, c, stream));
  FAULT(Broadcast, NEXT, FRZ_OP_Broadcast, ncclBroadcast(&x, &y, 1, ncclFloat32, 0, c, stream),
        pncclBroadcast(&x, &y, 1, ncclFloat32, 0, c, stream));
  FAULT(Bcast, NEXT, FRZ_OP_Broadcast, ncclBcast(&x, 1, ncclFloat32, 0, c, stream),
        pncclBcast(&x, 1, ncclFloat32, 0, c, stream));
  FAULT(Reduce, NEXT, FRZ_OP_Reduce, ncclReduce(&x, &y, 1, ncclFloat32, ncclSum, 0, c, stream),
        pncclReduce(&x, &y, 1, ncclFloat32, ncclSum, 0, c, stream));
  FAULT(AllGather, NEXT, FRZ_OP_AllGather, ncclAllGather(&x, &y, 1, ncclFloat32, c, stream),
        pncclAllGather(&x, &y, 1, ncclFloat32, c, stream));
  FAULT(ReduceScatter, NEXT, FRZ_OP_ReduceScatter, ncclReduceScatter(&x, &y, 1, ncclFloat32, ncclSum, c, stream),
        pncclReduceScatter(&x, &y, 1, ncclFloat32, ncclSum, c, stream));
  FAULT(AlltoAll, NEXT, FRZ_OP_AlltoAll, ncclAlltoAll(&x, &y, 1, ncclFloat32, c, stream),
        pncclAlltoAll(&x, &y, 1, ncclFloat32, c, stream));
  FAULT(Gather, NEXT, FRZ_OP_Gather, ncclGather(&x, &y, 1, ncclFloat32, 0, c, stream),
        pncclGather(&x, &y, 1, ncclFloat32, 0, c, stream));
  FAULT(Scatter, NEXT, FRZ_OP_Scatter, ncclScatter(&x, &y, 1, ncclFloat32, 0, c, stream),
        pncclScatter(&x, &y, 1, ncclFloat32, 0, c, stream));
  FAULT(Send, NEXT, FRZ_OP_Send, ncclSend(&x, 1, ncclFloat32, 0, c, stream), pncclSend(&x, 1, ncclFloat32, 0, c, stream));
  FAULT(Recv, NEXT, FRZ_OP_Recv, ncclRecv(&y, 1, ncclFloat32, 0, c, stream), pncclRecv(&y, 1, ncclFloat32, 0, c, stream));
  /* groups: a failed GroupStart opens none; a failed GroupEnd fails the
   * ops of its group (NCCL's group is then closed for the next test) */
  FAULT(GroupStart, NEXT, 0, ncclGroupStart(), pncclGroupStart());
  ck_assert_int_eq(ncclGroupStart(), ncclSuccess);
  ck_assert_int_eq(ncclAllReduce(&x, &y, 0, ncclFloat32, ncclSum, c, stream), ncclSuccess);
  expect[nexpect].op = FRZ_OP_AllReduce;
  FAULT(GroupEnd, NEXT, 0, ncclGroupEnd(), pncclGroupEnd());
  expect[nexpect++].code = 1 + ((k - 1) % 6);
  ck_assert_int_eq(pncclGroupEnd(), ncclSuccess);
  ck_assert_int_eq(ncclGroupStart(), ncclSuccess);
  FAULT(GroupSimulateEnd, NEXT, 0, ncclGroupSimulateEnd(&info), pncclGroupSimulateEnd(&info));
  ck_assert_int_eq(pncclGroupEnd(), ncclSuccess);
  /* lifecycle */
  int init_code[FRZ_OP_CommInitRankScalable - FRZ_OP_CommInitRank + 1] = {0};
#define INIT_CODE(op) (init_code[FRZ_OP_##op - FRZ_OP_CommInitRank] = NEXT)
  FAULT(CommInitRank, INIT_CODE(CommInitRank), 0, ncclCommInitRank(&nc, 1, id, 0), pncclCommInitRank(&nc, 1, id, 0));
  FAULT(CommInitRankConfig, INIT_CODE(CommInitRankConfig), 0, ncclCommInitRankConfig(&nc, 1, id, 0, NULL),
        pncclCommInitRankConfig(&nc, 1, id, 0, NULL));
  FAULT(CommInitRankScalable, INIT_CODE(CommInitRankScalable), 0, ncclCommInitRankScalable(&nc, 1, 0, 1, &id, NULL),
        pncclCommInitRankScalable(&nc, 1, 0, 1, &id, NULL));
  FAULT(CommInitAll, INIT_CODE(CommInitAll), 0, ncclCommInitAll(&nc, 1, NULL), pncclCommInitAll(&nc, 1, NULL));
#undef INIT_CODE
  ck_assert_ptr_null(nc);
  FAULT(CommSplit, NEXT, FRZ_OP_CommSplit, ncclCommSplit(c, 1, 0, &nc, NULL), pncclCommSplit(c, 1, 0, &nc, NULL));
  FAULT(CommShrink, NEXT, FRZ_OP_CommShrink, ncclCommShrink(c, NULL, 0, &nc, NULL, 0),
        pncclCommShrink(c, NULL, 0, &nc, NULL, 0));
  ck_assert_ptr_null(nc);
  FAULT(CommGetAsyncError, NEXT, 0, ncclCommGetAsyncError(c, &ae), pncclCommGetAsyncError(c, &ae));
  FAULT(CommRevoke, NEXT, FRZ_OP_CommRevoke, ncclCommRevoke(c, 0), pncclCommRevoke(c, 0));
  FAULT(CommFinalize, NEXT, FRZ_OP_CommFinalize, ncclCommFinalize(c), pncclCommFinalize(c));
  FAULT(CommAbort, NEXT, 0, ncclCommAbort(other), pncclCommAbort(other));
  FAULT(CommDestroy, NEXT, 0, ncclCommDestroy(third), pncclCommDestroy(third));
  typedef ncclResult_t (*grow_fn)(ncclComm_t, int, const ncclUniqueId *, int, ncclComm_t *, ncclConfig_t *);
  typedef ncclResult_t (*getid_fn)(ncclComm_t, ncclUniqueId *);
  grow_fn grow = (grow_fn)dlsym(RTLD_DEFAULT, "ncclCommGrow"), pgrow = (grow_fn)dlsym(RTLD_DEFAULT, "pncclCommGrow");
  getid_fn getid = (getid_fn)dlsym(RTLD_DEFAULT, "ncclCommGetUniqueId");
  getid_fn pgetid = (getid_fn)dlsym(RTLD_DEFAULT, "pncclCommGetUniqueId");
  ck_assert(grow && pgrow && getid && pgetid);
  FAULT(CommGrow, NEXT, FRZ_OP_CommGrow, grow(c, 2, NULL, -1, &nc, NULL), pgrow(c, 2, NULL, -1, &nc, NULL));
  FAULT(CommGetUniqueId, NEXT, 0, getid(c, &id), pgetid(c, &id));
#undef NEXT
  ck_assert_int_eq(k, 27); /* every wrapped function of nccl_api.def */
  frz_dump d;
  dump_now(&d);
  const frz_record *r[64];
  uint32_t n = records_of(&d, comm_of(&d, c)->comm_id, r, 64), nf = 0;
  for (uint32_t i = 0; i < n; i++) {
    if (r[i]->state != FRZ_STATE_FAILED) continue;
    ck_assert_int_lt(nf, nexpect);
    ck_assert_msg(r[i]->op == expect[nf].op, "failed record %u: %s, expected %s", nf, frz_op_name(r[i]->op),
                  frz_op_name(expect[nf].op));
    ck_assert_int_eq(r[i]->result, expect[nf].code);
    nf++;
  }
  ck_assert_int_eq(nf, nexpect);
  /* a failed init is a failed record on a comm flagged init-failed */
  int failed_inits = 0;
  for (uint64_t i = 0; i < d.nrecords; i++) {
    const frz_record *q = &d.records[i];
    if (q->op != FRZ_OP_CommInitRank && q->op != FRZ_OP_CommInitRankConfig &&
        q->op != FRZ_OP_CommInitRankScalable && q->op != FRZ_OP_CommInitAll)
      continue;
    if (q->state != FRZ_STATE_FAILED) continue;
    ck_assert_int_eq(q->result, init_code[q->op - FRZ_OP_CommInitRank]);
    ck_assert(comm_in(&d, q->comm_id)->flags & FRZ_CF_INIT_FAILED);
    failed_inits++;
  }
  ck_assert_int_eq(failed_inits, 4);
  ck_assert_int_eq(comm_of(&d, c)->flags & (FRZ_CF_FINALIZED | FRZ_CF_REVOKED), 0);
  frz_dump_free(&d);
  /* NCCL did not destroy or abort them: do it for real */
  ck_assert_int_eq(pncclCommAbort(other), ncclSuccess);
  ck_assert_int_eq(pncclCommDestroy(third), ncclSuccess);
  ck_assert_int_eq(ncclCommDestroy(c), ncclSuccess);
}
END_TEST

/* ---- modes run by the shell test ---- */

/* --before-init: no comm exists; these calls reach NCCL, which refuses or
 * ignores them, and the recorder with them; then a comm is recorded as usual. */
static int before_init_mode(void) {
  float x = 0;
  ncclComm_t nc = NULL;
  ncclResult_t e;
  int bad = 0;
#define SAME(call, pcall)                                                                       \
  do {                                                                                          \
    ncclResult_t a_ = (call), b_ = (pcall);                                                     \
    if (a_ != b_) {                                                                             \
      fprintf(stderr, "%s: %d through the recorder, %d from NCCL\n", #call, (int)a_, (int)b_); \
      bad = 1;                                                                                  \
    }                                                                                           \
  } while (0)
  SAME(ncclGroupEnd(), pncclGroupEnd());
  SAME(ncclAllReduce(&x, &x, 1, ncclFloat32, ncclSum, NULL, stream),
       pncclAllReduce(&x, &x, 1, ncclFloat32, ncclSum, NULL, stream));
  SAME(ncclBcast(&x, 1, ncclFloat32, 0, NULL, stream), pncclBcast(&x, 1, ncclFloat32, 0, NULL, stream));
  SAME(ncclSend(&x, 1, ncclFloat32, 0, NULL, stream), pncclSend(&x, 1, ncclFloat32, 0, NULL, stream));
  SAME(ncclRecv(&x, 1, ncclFloat32, 0, NULL, stream), pncclRecv(&x, 1, ncclFloat32, 0, NULL, stream));
  SAME(ncclCommSplit(NULL, 0, 0, &nc, NULL), pncclCommSplit(NULL, 0, 0, &nc, NULL));
  SAME(ncclCommShrink(NULL, NULL, 0, &nc, NULL, 0), pncclCommShrink(NULL, NULL, 0, &nc, NULL, 0));
  SAME(ncclCommFinalize(NULL), pncclCommFinalize(NULL));
  SAME(ncclCommRevoke(NULL, 0), pncclCommRevoke(NULL, 0));
  SAME(ncclCommGetAsyncError(NULL, &e), pncclCommGetAsyncError(NULL, &e));
  SAME(ncclCommAbort(NULL), pncclCommAbort(NULL));
  SAME(ncclCommDestroy(NULL), pncclCommDestroy(NULL));
  SAME(ncclCommInitRank(NULL, 1, (ncclUniqueId){{0}}, 0), pncclCommInitRank(NULL, 1, (ncclUniqueId){{0}}, 0));
  SAME(ncclGroupStart(), pncclGroupStart());
  SAME(ncclGroupEnd(), pncclGroupEnd());
#undef SAME
  if (bad || nc) return 1;
  ncclUniqueId id;
  ncclComm_t c;
  if (ncclGetUniqueId(&id) != ncclSuccess || ncclCommInitRank(&c, 1, id, 0) != ncclSuccess) return 1;
  if (ncclAllReduce(&x, &x, 1, ncclFloat32, ncclSum, c, stream) != ncclSuccess) return 1;
  if (cuStreamSynchronize(stream) != CUDA_SUCCESS) return 1;
  return ncclCommDestroy(c) == ncclSuccess ? 0 : 1;
}

/* A thread that keeps calling NCCL on its own comm until told to stop. */
struct caller {
  ncclComm_t comm;
  CUstream stream;
  atomic_int stop;
  long calls;
  int failed;
};

static void *keep_calling(void *p) {
  struct caller *a = p;
  float x = 0;
  while (!atomic_load(&a->stop)) {
    if (ncclAllReduce(&x, &x, 1, ncclFloat32, ncclSum, a->comm, a->stream) != ncclSuccess) a->failed = 1;
    if (++a->calls % 64 == 0) cuStreamSynchronize(a->stream);
    sleep_ms(0); /* a yield's worth of compute between calls */
  }
  if (cuStreamSynchronize(a->stream) != CUDA_SUCCESS) a->failed = 1;
  return NULL;
}

static int start_caller(struct caller *a, pthread_t *th) {
  ncclUniqueId id;
  memset(a, 0, sizeof *a);
  if (ncclGetUniqueId(&id) != ncclSuccess || ncclCommInitRank(&a->comm, 1, id, 0) != ncclSuccess) return -1;
  if (cuStreamCreate(&a->stream, CU_STREAM_DEFAULT) != CUDA_SUCCESS) return -1;
  return pthread_create(th, NULL, keep_calling, a) == 0 ? 0 : -1;
}

/* The parent's comm in the dump holds every call the thread made, in order. */
static int check_caller(const struct caller *a) {
  frz_dump d;
  char why[512];
  if (request_dump(&d, why, sizeof why) != 0) {
    fprintf(stderr, "%s\n", why);
    return -1;
  }
  const frz_comm *fc = comm_of(&d, a->comm);
  int ok = fc && fc->next_seq == (uint64_t)a->calls + 1 && fc->last_completed_seq == a->calls &&
           d.process.records_dropped == 0;
  for (uint64_t i = 0, seq = 0; ok && i < d.nrecords; i++)
    if (d.records[i].comm_id == fc->comm_id) ok = d.records[i].seq == seq++;
  if (!ok)
    fprintf(stderr, "the parent's records are not intact (%ld calls, next seq %llu, %llu dropped)\n", a->calls,
            fc ? (unsigned long long)fc->next_seq : 0ull, (unsigned long long)d.process.records_dropped);
  frz_dump_free(&d);
  return ok ? 0 : -1;
}

/* The environment of an exec'd NCCL child: ours with RANK=rank. */
static char **child_env(int rank) {
  size_t n = 0;
  while (environ[n]) n++;
  char **env = calloc(n + 2, sizeof *env);
  size_t k = 0;
  for (size_t i = 0; i < n; i++)
    if (strncmp(environ[i], "RANK=", 5) != 0) env[k++] = environ[i];
  env[k] = malloc(32);
  snprintf(env[k], 32, "RANK=%d", rank);
  return env;
}

/* --storm N: N children of a process whose thread keeps calling NCCL, at
 * most 16 at a time: one in ten execs this program --child (RANK=1000+i:
 * it uses NCCL, and dumps), four exec /bin/true (the recorder is preloaded
 * there too, with no NCCL), the rest call wrappers after fork and _exit.
 * Then the parent's records must be intact. */
static int storm_mode(int n) {
  struct caller a;
  pthread_t th;
  char self[PATH_MAX];
  ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
  if (len <= 0 || start_caller(&a, &th) != 0) return 1;
  self[len] = '\0';
  int inflight = 0, bad = 0;
  for (int i = 0; i < n; i++) {
    char **env = i % 10 == 0 ? child_env(1000 + i) : NULL;
    char *child_argv[] = {self, "--child", NULL}, *true_argv[] = {"true", NULL};
    pid_t pid = fork();
    if (pid == 0) {
      if (env) {
        execve(self, child_argv, env);
        _exit(4);
      }
      if (i % 10 < 5) {
        execve("/bin/true", true_argv, environ);
        _exit(4);
      }
      int v = 0; /* the wrappers in a forked child: inert, no deadlock */
      if (ncclGetVersion(&v) != ncclSuccess || ncclGroupStart() != ncclSuccess || ncclGroupEnd() != ncclSuccess)
        _exit(3);
      _exit(0);
    }
    if (env) {
      for (char **e = env; *e; e++)
        if (!strncmp(*e, "RANK=", 5)) free(*e);
      free(env);
    }
    if (pid < 0) {
      bad = 1;
      break;
    }
    int status;
    if (++inflight == 16) {
      if (wait(&status) > 0 && !(WIFEXITED(status) && WEXITSTATUS(status) == 0)) bad = 1;
      inflight--;
    }
  }
  int status;
  while (inflight-- > 0)
    if (wait(&status) > 0 && !(WIFEXITED(status) && WEXITSTATUS(status) == 0)) bad = 1;
  atomic_store(&a.stop, 1);
  pthread_join(th, NULL);
  if (bad) fprintf(stderr, "a child failed\n");
  if (a.failed) fprintf(stderr, "a call of the parent failed\n");
  if (bad || a.failed || check_caller(&a) != 0) return 1;
  printf("storm: %d children, %ld calls by the parent meanwhile\n", n, a.calls);
  return ncclCommDestroy(a.comm) == ncclSuccess ? 0 : 1;
}

/* --child: a process exec'd by --storm that uses NCCL. */
static int child_mode(void) {
  ncclUniqueId id;
  ncclComm_t c;
  float x = 0;
  if (ncclGetUniqueId(&id) != ncclSuccess || ncclCommInitRank(&c, 1, id, 0) != ncclSuccess) return 1;
  if (ncclAllReduce(&x, &x, 1, ncclFloat32, ncclSum, c, stream) != ncclSuccess) return 1;
  if (cuStreamSynchronize(stream) != CUDA_SUCCESS) return 1;
  return ncclCommDestroy(c) == ncclSuccess ? 0 : 1;
}

/* --hwm N: N all-reduces, then the peak RSS. */
static int hwm_mode(long n) {
  ncclUniqueId id;
  ncclComm_t c;
  float x = 0;
  if (ncclGetUniqueId(&id) != ncclSuccess || ncclCommInitRank(&c, 1, id, 0) != ncclSuccess) return 1;
  for (long i = 0; i < n; i++) {
    if (ncclAllReduce(&x, &x, 1, ncclFloat32, ncclSum, c, stream) != ncclSuccess) return 1;
    if (i % 1024 == 0) cuStreamSynchronize(stream);
  }
  if (cuStreamSynchronize(stream) != CUDA_SUCCESS || ncclCommDestroy(c) != ncclSuccess) return 1;
  printf("%ld\n", vm_hwm_kb());
  return 0;
}

/* --dumps STOPFILE MS: a thread keeps calling NCCL; a dump is asked for
 * every MS ms until STOPFILE exists (the shell test changes the dump
 * directory meanwhile), then one more, which must land and decode. */
static int dumps_mode(const char *stopfile, int ms) {
  struct caller a;
  pthread_t th;
  if (start_caller(&a, &th) != 0) return 1;
  /* a full ring first, so that every dump takes a while */
  for (long i = 0, fill = atol(getenv("FR_BUFFER_ENTRIES")); i < fill; i++) {
    float x = 0;
    if (ncclAllReduce(&x, &x, 1, ncclFloat32, ncclSum, a.comm, stream) != ncclSuccess) return 1;
    if (i % 1024 == 0) cuStreamSynchronize(stream);
  }
  for (int i = 0; i < 6000 && access(stopfile, F_OK) != 0; i++) {
    raise(SIGUSR2);
    sleep_ms(ms);
  }
  sleep_ms(200); /* the dumps asked for so far are done */
  frz_dump d;
  char why[512];
  int rc = request_dump(&d, why, sizeof why);
  if (rc == 0)
    frz_dump_free(&d);
  else
    fprintf(stderr, "the last dump: %s\n", why);
  atomic_store(&a.stop, 1);
  pthread_join(th, NULL);
  if (rc != 0 || a.failed) return 1;
  printf("dumps: the last one read back\n");
  return ncclCommDestroy(a.comm) == ncclSuccess ? 0 : 1;
}

int main(int argc, char **argv) {
  dump_dir = getenv("FR_DUMP_DIR");
  if (!dump_dir || !getenv("LD_PRELOAD")) {
    fprintf(stderr, "check_recorder_faults: run me through tests/e2e/recorder-faults.sh\n");
    return 77;
  }
  if (cuStreamCreate(&stream, CU_STREAM_DEFAULT) != CUDA_SUCCESS) return 1;
  const char *mode = argc > 1 ? argv[1] : "";
  if (!strcmp(mode, "--before-init")) return before_init_mode();
  if (!strcmp(mode, "--storm") && argc > 2) return storm_mode(atoi(argv[2]));
  if (!strcmp(mode, "--child")) return child_mode();
  if (!strcmp(mode, "--hwm") && argc > 2) return hwm_mode(atol(argv[2]));
  if (!strcmp(mode, "--dumps") && argc > 3) return dumps_mode(argv[2], atoi(argv[3]));
  Suite *s = suite_create("recorder faults");
  TCase *tc = tcase_create("faults");
  tcase_set_timeout(tc, 60);
  if (!strcmp(mode, "--injected")) {
    fault_set = (fault_set_fn)dlsym(RTLD_DEFAULT, "sim_fault_set");
    if (!fault_set) {
      fprintf(stderr, "check_recorder_faults: --injected needs tests/sim/libsimfault.so preloaded\n");
      return 1;
    }
    tcase_add_test(tc, every_wrapped_call_returns_ncclS_own_error_and_records_it);
  } else {
    tcase_add_test(tc, calls_on_a_destroyed_comm_return_what_nccl_returns);
    tcase_add_test(tc, zero_and_huge_counts_are_recorded_exactly);
    tcase_add_test(tc, the_ring_keeps_its_size_under_many_more_ops);
  }
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_set_fork_status(sr, CK_NOFORK);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
