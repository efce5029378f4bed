/* check_sim.c — the simulator moves real, correct data: every test forks
 * 4 ranks that rendezvous on one unique id, run collectives or p2p on a
 * simulated stream and compare the results with what NCCL must produce.
 * Also: stream/event semantics of the simulated driver, a split, and
 * ncclCommInitAll with a grouped all-reduce over its devices.
 */
#include "config.h"

#include <check.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fr_cuda.h"
#include "fr_nccl.h"
#include "sim.h"

#define NR 4

/* What every forked rank of a test gets. */
struct rank_ctx {
  int rank;
  ncclComm_t comm;
  CUstream stream;
};

typedef int (*rank_body)(struct rank_ctx *ctx);

/* Reports a failed check in a rank and makes it exit non-zero. */
#define EXPECT(cond, ...) do { \
    if (!(cond)) { \
      fprintf(stderr, "rank %d: %s:%d: ", ctx->rank, __FILE__, __LINE__); \
      fprintf(stderr, __VA_ARGS__); \
      fputc('\n', stderr); \
      return 1; \
    } \
  } while (0)

#define NCCL_OK(call) EXPECT((call) == ncclSuccess, "%s failed", #call)

/* One forked rank: stream, comm, the test body, clean teardown. */
static int rank_main(int rank, const ncclUniqueId *id, rank_body body)
{
  struct rank_ctx c = { rank, NULL, NULL };
  struct rank_ctx *ctx = &c;
  alarm(60);                    /* a hang fails the test instead of blocking it */
  EXPECT(cuStreamCreate(&c.stream, CU_STREAM_DEFAULT) == CUDA_SUCCESS, "cuStreamCreate");
  NCCL_OK(ncclCommInitRank(&c.comm, NR, *id, rank));
  int rc = body(&c);
  if (rc == 0)
    EXPECT(cuStreamSynchronize(c.stream) == CUDA_SUCCESS, "cuStreamSynchronize");
  if (rc == 0)
    NCCL_OK(ncclCommDestroy(c.comm));
  return rc;
}

typedef int (*rank_entry)(int rank, const ncclUniqueId *id, rank_body body);

static int run_ranks_with(rank_entry entry, rank_body body);

/* Forks NR ranks running body; returns how many failed. */
static int run_ranks(rank_body body)
{
  return run_ranks_with(rank_main, body);
}

static int run_ranks_with(rank_entry entry, rank_body body)
{
  ncclUniqueId id;
  ck_assert_int_eq(ncclGetUniqueId(&id), ncclSuccess);
  pid_t pids[NR];
  for (int r = 0; r < NR; r++) {
    pids[r] = fork();
    ck_assert_int_ge(pids[r], 0);
    if (pids[r] == 0)
      _exit(entry(r, &id, body));
  }
  int failed = 0;
  for (int r = 0; r < NR; r++) {
    int st;
    waitpid(pids[r], &st, 0);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
      fprintf(stderr, "rank %d: %s %d\n", r, WIFEXITED(st) ? "exit" : "signal",
              WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
      failed++;
    }
  }
  return failed;
}

static int sync_ok(struct rank_ctx *ctx)
{
  return cuStreamSynchronize(ctx->stream) == CUDA_SUCCESS;
}

/* Uneven chunks (1003 elements) and a large message (many fragments). */
static int body_allreduce_sum(struct rank_ctx *ctx)
{
  static const size_t counts[] = { 1, 3, 1003, 300001 };
  for (size_t k = 0; k < sizeof counts / sizeof counts[0]; k++) {
    size_t n = counts[k];
    float *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
    for (size_t i = 0; i < n; i++)
      a[i] = (float)(ctx->rank * 1000 + (int)(i % 1000));
    NCCL_OK(ncclAllReduce(a, b, n, ncclFloat32, ncclSum, ctx->comm, ctx->stream));
    EXPECT(sync_ok(ctx), "sync");
    for (size_t i = 0; i < n; i++)
      EXPECT(b[i] == (float)(6000 + 4 * (int)(i % 1000)), "count %zu: b[%zu] = %g", n, i, b[i]);
    /* in place */
    NCCL_OK(ncclAllReduce(a, a, n, ncclFloat32, ncclSum, ctx->comm, ctx->stream));
    EXPECT(sync_ok(ctx), "sync");
    EXPECT(memcmp(a, b, n * sizeof *a) == 0, "in-place result differs");
    free(a);
    free(b);
  }
  return 0;
}

static int body_allreduce_ops(struct rank_ctx *ctx)
{
  int32_t iv[5], io[5];
  for (int i = 0; i < 5; i++)
    iv[i] = (ctx->rank + 1) * (i + 1) * (ctx->rank % 2 ? -1 : 1);
  NCCL_OK(ncclAllReduce(iv, io, 5, ncclInt32, ncclMax, ctx->comm, ctx->stream));
  EXPECT(sync_ok(ctx), "sync");
  for (int i = 0; i < 5; i++)
    EXPECT(io[i] == 3 * (i + 1), "max[%d] = %d", i, io[i]);
  NCCL_OK(ncclAllReduce(iv, io, 5, ncclInt32, ncclMin, ctx->comm, ctx->stream));
  EXPECT(sync_ok(ctx), "sync");
  for (int i = 0; i < 5; i++)
    EXPECT(io[i] == -4 * (i + 1), "min[%d] = %d", i, io[i]);
  int64_t lv = ctx->rank + 2, lo;
  NCCL_OK(ncclAllReduce(&lv, &lo, 1, ncclInt64, ncclProd, ctx->comm, ctx->stream));
  EXPECT(sync_ok(ctx), "sync");
  EXPECT(lo == 2 * 3 * 4 * 5, "prod = %lld", (long long)lo);
  double dv[7], dout[7];
  for (int i = 0; i < 7; i++)
    dv[i] = ctx->rank + i;
  NCCL_OK(ncclAllReduce(dv, dout, 7, ncclFloat64, ncclAvg, ctx->comm, ctx->stream));
  EXPECT(sync_ok(ctx), "sync");
  for (int i = 0; i < 7; i++)
    EXPECT(fabs(dout[i] - (1.5 + i)) < 1e-12, "avg[%d] = %g", i, dout[i]);
  /* bfloat16 1.0, 2.0, 3.0, 4.0 summed = 10.0 (0x4120) */
  uint16_t bv = (uint16_t[]){ 0x3f80, 0x4000, 0x4040, 0x4080 }[ctx->rank], bo;
  NCCL_OK(ncclAllReduce(&bv, &bo, 1, ncclBfloat16, ncclSum, ctx->comm, ctx->stream));
  /* float16 0.5 each, summed = 2.0 (0x4000) */
  uint16_t hv = 0x3800, ho;
  NCCL_OK(ncclAllReduce(&hv, &ho, 1, ncclFloat16, ncclSum, ctx->comm, ctx->stream));
  EXPECT(sync_ok(ctx), "sync");
  EXPECT(bo == 0x4120, "bf16 sum = 0x%04x", bo);
  EXPECT(ho == 0x4000, "f16 sum = 0x%04x", ho);
  return 0;
}

static int body_broadcast(struct rank_ctx *ctx)
{
  size_t n = 200003;
  int32_t *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
  for (size_t i = 0; i < n; i++)
    a[i] = ctx->rank == 2 ? (int32_t)(i * 7) : -1;
  NCCL_OK(ncclBroadcast(a, b, n, ncclInt32, 2, ctx->comm, ctx->stream));
  EXPECT(sync_ok(ctx), "sync");
  for (size_t i = 0; i < n; i++)
    EXPECT(b[i] == (int32_t)(i * 7), "b[%zu] = %d", i, b[i]);
  NCCL_OK(ncclBcast(a, 1000, ncclInt32, 1, ctx->comm, ctx->stream)); /* rank 1's a: all -1 */
  EXPECT(sync_ok(ctx), "sync");
  for (size_t i = 0; i < 1000; i++)
    EXPECT(a[i] == -1, "bcast a[%zu] = %d", i, a[i]);
  free(a);
  free(b);
  return 0;
}

static int body_reduce(struct rank_ctx *ctx)
{
  size_t n = 70001;
  int64_t *a = malloc(n * sizeof *a), *b = calloc(n, sizeof *b);
  for (size_t i = 0; i < n; i++)
    a[i] = (int64_t)i + ctx->rank;
  NCCL_OK(ncclReduce(a, b, n, ncclInt64, ncclSum, 3, ctx->comm, ctx->stream));
  EXPECT(sync_ok(ctx), "sync");
  for (size_t i = 0; i < n; i++)
    EXPECT(b[i] == (ctx->rank == 3 ? 4 * (int64_t)i + 6 : 0), "b[%zu] = %lld", i, (long long)b[i]);
  free(a);
  free(b);
  return 0;
}

static int body_allgather(struct rank_ctx *ctx)
{
  size_t n = 777;
  float *a = malloc(n * sizeof *a), *b = malloc(NR * n * sizeof *b);
  for (size_t i = 0; i < n; i++)
    a[i] = (float)(ctx->rank * 10000 + (int)i);
  NCCL_OK(ncclAllGather(a, b, n, ncclFloat32, ctx->comm, ctx->stream));
  EXPECT(sync_ok(ctx), "sync");
  for (int r = 0; r < NR; r++)
    for (size_t i = 0; i < n; i++)
      EXPECT(b[r * n + i] == (float)(r * 10000 + (int)i), "b[%d][%zu] = %g", r, i, b[r * n + i]);
  free(a);
  free(b);
  return 0;
}

static int body_reducescatter(struct rank_ctx *ctx)
{
  size_t n = 555;
  int32_t *a = malloc(NR * n * sizeof *a), *b = malloc(n * sizeof *b);
  for (size_t i = 0; i < NR * n; i++)
    a[i] = (int32_t)i * (ctx->rank + 1);
  NCCL_OK(ncclReduceScatter(a, b, n, ncclInt32, ncclSum, ctx->comm, ctx->stream));
  EXPECT(sync_ok(ctx), "sync");
  for (size_t i = 0; i < n; i++)
    EXPECT(b[i] == 10 * (int32_t)(ctx->rank * n + i), "b[%zu] = %d", i, b[i]);
  free(a);
  free(b);
  return 0;
}

static int body_pairwise(struct rank_ctx *ctx)
{
  size_t n = 33;
  int32_t *a = malloc(NR * n * sizeof *a), *b = malloc(NR * n * sizeof *b);
  for (size_t i = 0; i < NR * n; i++)
    a[i] = ctx->rank * 100000 + (int32_t)i;
  NCCL_OK(ncclAlltoAll(a, b, n, ncclInt32, ctx->comm, ctx->stream));
  EXPECT(sync_ok(ctx), "sync");
  for (int p = 0; p < NR; p++)
    for (size_t i = 0; i < n; i++)
      EXPECT(b[p * n + i] == p * 100000 + (int32_t)(ctx->rank * n + i), "alltoall b[%d][%zu]", p, i);
  memset(b, 0, NR * n * sizeof *b);
  NCCL_OK(ncclGather(a, b, n, ncclInt32, 1, ctx->comm, ctx->stream));
  EXPECT(sync_ok(ctx), "sync");
  if (ctx->rank == 1)
    for (int p = 0; p < NR; p++)
      for (size_t i = 0; i < n; i++)
        EXPECT(b[p * n + i] == p * 100000 + (int32_t)i, "gather b[%d][%zu]", p, i);
  NCCL_OK(ncclScatter(a, b, n, ncclInt32, 0, ctx->comm, ctx->stream));
  EXPECT(sync_ok(ctx), "sync");
  for (size_t i = 0; i < n; i++)
    EXPECT(b[i] == (int32_t)(ctx->rank * n + i), "scatter b[%zu] = %d", i, b[i]);
  free(a);
  free(b);
  return 0;
}

static int body_sendrecv(struct rank_ctx *ctx)
{
  size_t n = 100003;            /* larger than the mailbox: needs concurrent progress */
  int next = (ctx->rank + 1) % NR, prev = (ctx->rank + NR - 1) % NR;
  int32_t *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
  for (size_t i = 0; i < n; i++)
    a[i] = ctx->rank * 1000000 + (int32_t)i;
  NCCL_OK(ncclGroupStart());
  NCCL_OK(ncclSend(a, n, ncclInt32, next, ctx->comm, ctx->stream));
  NCCL_OK(ncclRecv(b, n, ncclInt32, prev, ctx->comm, ctx->stream));
  NCCL_OK(ncclGroupEnd());
  EXPECT(sync_ok(ctx), "sync");
  for (size_t i = 0; i < n; i++)
    EXPECT(b[i] == prev * 1000000 + (int32_t)i, "group recv b[%zu] = %d", i, b[i]);
  /* outside a group: even ranks send first, odd ranks receive first */
  int peer = ctx->rank ^ 1;
  if (ctx->rank % 2 == 0) {
    NCCL_OK(ncclSend(a, n, ncclInt32, peer, ctx->comm, ctx->stream));
    NCCL_OK(ncclRecv(b, n, ncclInt32, peer, ctx->comm, ctx->stream));
  } else {
    NCCL_OK(ncclRecv(b, n, ncclInt32, peer, ctx->comm, ctx->stream));
    NCCL_OK(ncclSend(a, n, ncclInt32, peer, ctx->comm, ctx->stream));
  }
  EXPECT(sync_ok(ctx), "sync");
  for (size_t i = 0; i < n; i++)
    EXPECT(b[i] == peer * 1000000 + (int32_t)i, "recv b[%zu] = %d", i, b[i]);
  free(a);
  free(b);
  return 0;
}

/* color = rank % 2, key = -rank: {0,2} and {1,3}, each in reverse order. */
static int body_split(struct rank_ctx *ctx)
{
  ncclComm_t sub;
  NCCL_OK(ncclCommSplit(ctx->comm, ctx->rank % 2, -ctx->rank, &sub, NULL));
  EXPECT(sub != NULL, "no comm");
  int count, urank;
  NCCL_OK(ncclCommCount(sub, &count));
  NCCL_OK(ncclCommUserRank(sub, &urank));
  EXPECT(count == 2, "count %d", count);
  EXPECT(urank == (ctx->rank < 2 ? 1 : 0), "user rank %d", urank);
  int32_t v = ctx->rank, s;
  NCCL_OK(ncclAllReduce(&v, &s, 1, ncclInt32, ncclSum, sub, ctx->stream));
  EXPECT(sync_ok(ctx), "sync");
  EXPECT(s == (ctx->rank % 2 ? 4 : 2), "sum over the split %d", s);
  /* a second split: rank 3 opts out */
  ncclComm_t sub2;
  NCCL_OK(ncclCommSplit(ctx->comm, ctx->rank == 3 ? NCCL_SPLIT_NOCOLOR : 0, 0, &sub2, NULL));
  if (ctx->rank == 3) {
    EXPECT(sub2 == NULL, "NOCOLOR gave a comm");
  } else {
    NCCL_OK(ncclCommCount(sub2, &count));
    EXPECT(count == 3, "count %d", count);
    NCCL_OK(ncclCommDestroy(sub2));
  }
  NCCL_OK(ncclCommDestroy(sub));
  return 0;
}

/* Members that disagree on the count still complete. */
static int body_count_mismatch(struct rank_ctx *ctx)
{
  size_t n = ctx->rank == 0 ? 409598 : 409600;
  float *a = calloc(409600, sizeof *a), *b = calloc(409600, sizeof *b);
  NCCL_OK(ncclAllReduce(a, b, n, ncclFloat32, ncclSum, ctx->comm, ctx->stream));
  NCCL_OK(ncclAllReduce(a, b, 10, ncclFloat32, ncclSum, ctx->comm, ctx->stream));
  EXPECT(sync_ok(ctx), "sync");
  free(a);
  free(b);
  return 0;
}

START_TEST(test_allreduce_sum) { ck_assert_int_eq(run_ranks(body_allreduce_sum), 0); }
END_TEST
START_TEST(test_allreduce_ops) { ck_assert_int_eq(run_ranks(body_allreduce_ops), 0); }
END_TEST
START_TEST(test_broadcast) { ck_assert_int_eq(run_ranks(body_broadcast), 0); }
END_TEST
START_TEST(test_reduce) { ck_assert_int_eq(run_ranks(body_reduce), 0); }
END_TEST
START_TEST(test_allgather) { ck_assert_int_eq(run_ranks(body_allgather), 0); }
END_TEST
START_TEST(test_reducescatter) { ck_assert_int_eq(run_ranks(body_reducescatter), 0); }
END_TEST
START_TEST(test_pairwise) { ck_assert_int_eq(run_ranks(body_pairwise), 0); }
END_TEST
START_TEST(test_sendrecv) { ck_assert_int_eq(run_ranks(body_sendrecv), 0); }
END_TEST
START_TEST(test_split) { ck_assert_int_eq(run_ranks(body_split), 0); }
END_TEST
START_TEST(test_count_mismatch) { ck_assert_int_eq(run_ranks(body_count_mismatch), 0); }
END_TEST

/* Stream task that waits until *arg becomes non-zero. */
static void wait_flag(void *arg)
{
  atomic_int *flag = arg;
  while (!atomic_load(flag))
    usleep(1000);
}

START_TEST(test_events)
{
  CUevent ev;
  CUstream s;
  static atomic_int flag;
  atomic_store(&flag, 0);
  ck_assert_int_eq(cuEventCreate(&ev, CU_EVENT_DISABLE_TIMING), CUDA_SUCCESS);
  ck_assert_int_eq(cuEventQuery(ev), CUDA_SUCCESS); /* never recorded */
  ck_assert_int_eq(cuStreamCreate(&s, CU_STREAM_DEFAULT), CUDA_SUCCESS);
  ck_assert_int_eq(sim_stream_enqueue(s, wait_flag, &flag), CUDA_SUCCESS);
  ck_assert_int_eq(cuEventRecord(ev, s), CUDA_SUCCESS);
  usleep(20000);
  ck_assert_int_eq(cuEventQuery(ev), CUDA_ERROR_NOT_READY);
  ck_assert_int_eq(cuStreamQuery(s), CUDA_ERROR_NOT_READY);
  atomic_store(&flag, 1);
  ck_assert_int_eq(cuStreamSynchronize(s), CUDA_SUCCESS);
  ck_assert_int_eq(cuEventQuery(ev), CUDA_SUCCESS);
  ck_assert_int_eq(cuStreamQuery(s), CUDA_SUCCESS);
  /* the default stream, and destroying an event with a marker pending */
  atomic_store(&flag, 0);
  ck_assert_int_eq(sim_stream_enqueue(NULL, wait_flag, &flag), CUDA_SUCCESS);
  ck_assert_int_eq(cuEventRecord(ev, NULL), CUDA_SUCCESS);
  ck_assert_int_eq(cuEventDestroy_v2(ev), CUDA_SUCCESS);
  atomic_store(&flag, 1);
  ck_assert_int_eq(cuStreamSynchronize(NULL), CUDA_SUCCESS);
  CUstreamCaptureStatus cs = CU_STREAM_CAPTURE_STATUS_ACTIVE;
  ck_assert_int_eq(cuStreamIsCapturing(s, &cs), CUDA_SUCCESS);
  ck_assert_int_eq(cs, CU_STREAM_CAPTURE_STATUS_NONE);
  CUcontext ctx = NULL;
  ck_assert_int_eq(cuCtxGetCurrent(&ctx), CUDA_SUCCESS);
  ck_assert_ptr_nonnull(ctx);
  CUdeviceptr p;
  ck_assert_int_eq(cuMemAlloc_v2(&p, 64), CUDA_SUCCESS);
  ck_assert_int_eq(((unsigned char *)(uintptr_t)p)[63], 0);
  ck_assert_int_eq(cuMemFree_v2(p), CUDA_SUCCESS);
  ck_assert_int_eq(cuStreamDestroy_v2(s), CUDA_SUCCESS);
}
END_TEST

START_TEST(test_api_misc)
{
  int v = 0;
  ck_assert_int_eq(ncclGetVersion(&v), ncclSuccess);
  ck_assert_int_eq(v, 22809);
  ncclUniqueId a, b;
  ck_assert_int_eq(ncclGetUniqueId(&a), ncclSuccess);
  ck_assert_int_eq(ncclGetUniqueId(&b), ncclSuccess);
  ck_assert(memcmp(&a, &b, sizeof a) != 0);
  ck_assert_int_eq(ncclGroupEnd(), ncclInvalidUsage);
  ck_assert_int_eq(ncclCommInitAll(NULL, 1, NULL), ncclInvalidArgument);
  ncclComm_t clique[3];
  ck_assert_int_eq(ncclCommInitAll(clique, 3, NULL), ncclSuccess);
  for (int i = 0; i < 3; i++) {
    int n = 0, r = -1;
    ck_assert_int_eq(ncclCommCount(clique[i], &n), ncclSuccess);
    ck_assert_int_eq(ncclCommUserRank(clique[i], &r), ncclSuccess);
    ck_assert_int_eq(n, 3);
    ck_assert_int_eq(r, i);
  }
  for (int i = 0; i < 3; i++) ck_assert_int_eq(ncclCommDestroy(clique[i]), ncclSuccess);
  ck_assert_int_eq(ncclMemAlloc(NULL, 8), ncclInvalidUsage);
  ck_assert_str_ne(ncclGetLastError(NULL), "");
  ck_assert_str_eq(ncclGetErrorString(ncclSuccess), "no error");
  /* a single-rank comm runs without peers */
  ncclComm_t c;
  ck_assert_int_eq(ncclCommInitRank(&c, 1, a, 0), ncclSuccess);
  float x = 3.0f, y = 0.0f;
  ck_assert_int_eq(ncclAllReduce(&x, &y, 1, ncclFloat32, ncclSum, c, NULL), ncclSuccess);
  ck_assert_int_eq(ncclAllReduce(&x, &y, 1, ncclFloat32, (ncclRedOp_t)9, c, NULL), ncclInvalidArgument);
  ck_assert_int_eq(ncclSend(&x, 1, ncclFloat32, 1, c, NULL), ncclInvalidArgument);
  ck_assert_int_eq(cuStreamSynchronize(NULL), CUDA_SUCCESS);
  ck_assert(y == 3.0f);
  ncclResult_t async = ncclInternalError;
  ck_assert_int_eq(ncclCommGetAsyncError(c, &async), ncclSuccess);
  ck_assert_int_eq(async, ncclSuccess);
  /* a comm in error refuses calls with its error (ncclCommEnsureReady),
   * also inside a group; ncclInProgress is ncclInvalidArgument */
  ck_assert_int_eq(sim_comm_set_async_error(c, ncclRemoteError), ncclSuccess);
  ck_assert_int_eq(ncclAllReduce(&x, &y, 1, ncclFloat32, ncclSum, c, NULL), ncclRemoteError);
  ck_assert_int_eq(ncclGroupStart(), ncclSuccess);
  ck_assert_int_eq(ncclSend(&x, 1, ncclFloat32, 0, c, NULL), ncclRemoteError);
  ck_assert_int_eq(ncclGroupEnd(), ncclSuccess);
  ck_assert_int_eq(sim_comm_set_async_error(c, ncclInProgress), ncclSuccess);
  ck_assert_int_eq(ncclAllReduce(&x, &y, 1, ncclFloat32, ncclSum, c, NULL), ncclInvalidArgument);
  ck_assert_int_eq(sim_comm_set_async_error(c, ncclSuccess), ncclSuccess);
  ck_assert_int_eq(ncclAllReduce(&x, &y, 1, ncclFloat32, ncclSum, c, NULL), ncclSuccess);
  ck_assert_int_eq(cuStreamSynchronize(NULL), CUDA_SUCCESS);
  ck_assert_int_eq(ncclCommDestroy(c), ncclSuccess);
}
END_TEST

/* ncclCommInitAll over 3 devices of this process, then one all-reduce per
 * device inside one group (one thread driving every device, as NCCL
 * requires): on each device's stream, then all on one stream.  Both
 * complete: the group's ops of different comm ranks run concurrently. */
START_TEST(test_initall_group)
{
  enum { ND = 3, N = 100003 };
  ncclComm_t dev[ND];
  CUstream st[ND];
  float *a[ND], *b[ND];
  ck_assert_int_eq(ncclCommInitAll(dev, ND, (const int[]){ 0, 1, 2 }), ncclSuccess);
  for (int d = 0; d < ND; d++) {
    int cd = -1;
    ck_assert_int_eq(ncclCommCuDevice(dev[d], &cd), ncclSuccess);
    ck_assert_int_eq(cd, d);
    ck_assert_int_eq(cuStreamCreate(&st[d], CU_STREAM_DEFAULT), CUDA_SUCCESS);
    a[d] = malloc(N * sizeof *a[d]);
    b[d] = calloc(N, sizeof *b[d]);
    for (int i = 0; i < N; i++)
      a[d][i] = (float)(d + 1) * (float)(i % 7);
  }
  for (int same = 0; same < 2; same++) {
    ck_assert_int_eq(ncclGroupStart(), ncclSuccess);
    for (int d = 0; d < ND; d++)
      ck_assert_int_eq(ncclAllReduce(a[d], b[d], N, ncclFloat32, ncclSum, dev[d], st[same ? 0 : d]),
                       ncclSuccess);
    ck_assert_int_eq(ncclGroupEnd(), ncclSuccess);
    for (int d = 0; d < ND; d++)
      ck_assert_int_eq(cuStreamSynchronize(st[d]), CUDA_SUCCESS);
    for (int d = 0; d < ND; d++)
      for (int i = 0; i < N; i++)
        ck_assert_msg(b[d][i] == 6.0f * (float)(i % 7), "same %d dev %d b[%d] = %g", same, d, i, b[d][i]);
    for (int d = 0; d < ND; d++)
      memset(b[d], 0, N * sizeof *b[d]);
  }
  /* finalize once only; destroy: every handle but the last returns at once
   * (NCCL's intra-process ranks), the handle is invalid from then on */
  ck_assert_int_eq(ncclCommFinalize(dev[1]), ncclSuccess);
  ck_assert_int_eq(ncclCommFinalize(dev[1]), ncclInvalidArgument);
  for (int d = 0; d < ND; d++) {
    int n = 0;
    ck_assert_int_eq(ncclCommDestroy(dev[d]), ncclSuccess);
    ck_assert_int_eq(ncclCommCount(dev[d], &n), ncclInvalidArgument);
  }
  for (int d = 0; d < ND; d++) {
    ck_assert_int_eq(cuStreamDestroy_v2(st[d]), CUDA_SUCCESS);
    free(a[d]);
    free(b[d]);
  }
}
END_TEST


/* ---- Faults the scenario job injects through the simulator's knobs ---- */

/* Whether the stream is still busy after ms milliseconds. */
static int still_busy(CUstream s, int ms)
{
  usleep((useconds_t)ms * 1000);
  return cuStreamQuery(s) == CUDA_ERROR_NOT_READY;
}

/* Ranks that start with a stream and nothing else (the body makes the
 * comm); the body's exit status is the rank's. */
static int rank_bare(int rank, const ncclUniqueId *id, rank_body body)
{
  struct rank_ctx c = { rank, NULL, NULL };
  struct rank_ctx *ctx = &c;
  static ncclUniqueId shared;
  shared = *id;
  alarm(60);
  EXPECT(cuStreamCreate(&c.stream, CU_STREAM_DEFAULT) == CUDA_SUCCESS, "cuStreamCreate");
  c.comm = (ncclComm_t)(void *)&shared; /* the body's: the unique id */
  return body(&c);
}

/* Rank 2's init fails with the injected error after the rendezvous; the
 * others' inits succeed, and their first all-reduce waits for it. */
static int body_init_fail(struct rank_ctx *ctx)
{
  ncclUniqueId id = *(ncclUniqueId *)(void *)ctx->comm;
  ncclComm_t comm = NULL;
  float x[64] = { 0 };
  if (ctx->rank == 2)
    sim_fail_next_init(ncclUnhandledCudaError);
  ncclResult_t rc = ncclCommInitRank(&comm, NR, id, ctx->rank);
  if (ctx->rank == 2) {
    EXPECT(rc == ncclUnhandledCudaError, "init returned %d, not the injected 1", (int)rc);
    ncclComm_t again = NULL;  /* one creation only: the next one works (a comm of one) */
    ncclUniqueId own;
    NCCL_OK(ncclGetUniqueId(&own));
    NCCL_OK(ncclCommInitRank(&again, 1, own, 0));
    NCCL_OK(ncclCommDestroy(again));
    return 0;
  }
  EXPECT(rc == ncclSuccess && comm, "init of rank %d failed (%d)", ctx->rank, (int)rc);
  NCCL_OK(ncclAllReduce(x, x, 64, ncclFloat32, ncclSum, comm, ctx->stream));
  EXPECT(still_busy(ctx->stream, 300), "the all-reduce completed without rank 2");
  NCCL_OK(ncclCommAbort(comm));
  return 0;
}

/* Rank 1's all-reduce never returns to its caller; the others wait in it. */
static atomic_int returned;

static void *call_allreduce(void *arg)
{
  struct rank_ctx *ctx = arg;
  static float x[64];
  ncclAllReduce(x, x, 64, ncclFloat32, ncclSum, ctx->comm, ctx->stream);
  atomic_store(&returned, 1);
  return NULL;
}

static int body_no_return(struct rank_ctx *ctx)
{
  float x[64] = { 0 };
  if (ctx->rank == 1) {
    pthread_t t;
    NCCL_OK(sim_comm_hang_next_call(ctx->comm));
    EXPECT(pthread_create(&t, NULL, call_allreduce, ctx) == 0, "pthread_create");
    usleep(300000);
    EXPECT(!atomic_load(&returned), "the call returned");
    EXPECT(cuStreamQuery(ctx->stream) == CUDA_SUCCESS, "the call reached the stream");
    _exit(0);                   /* (the thread never comes back) */
  }
  NCCL_OK(ncclAllReduce(x, x, 64, ncclFloat32, ncclSum, ctx->comm, ctx->stream));
  EXPECT(still_busy(ctx->stream, 300), "the all-reduce completed without rank 1");
  NCCL_OK(ncclCommAbort(ctx->comm));
  _exit(0);
}

/* The same algorithm and protocol on every member: it completes, right;
 * two that differ (ranks 0 and 1 Tree/LL, 2 and 3 Ring/Simple): nobody
 * completes, though every member joined. */
static int body_algo(struct rank_ctx *ctx)
{
  float x[1000];
  for (int i = 0; i < 1000; i++)
    x[i] = (float)(ctx->rank + 1);
  NCCL_OK(sim_comm_next_algo(ctx->comm, "Tree", "LL"));
  NCCL_OK(ncclAllReduce(x, x, 1000, ncclFloat32, ncclSum, ctx->comm, ctx->stream));
  EXPECT(sync_ok(ctx), "sync");
  EXPECT(x[0] == 10.0f && x[999] == 10.0f, "x = %g %g", x[0], x[999]);
  EXPECT(sim_comm_next_algo(ctx->comm, "Spiral", NULL) == ncclInvalidArgument, "an unknown algorithm");
  if (ctx->rank < 2)
    NCCL_OK(sim_comm_next_algo(ctx->comm, "Tree", "LL128"));
  NCCL_OK(ncclAllReduce(x, x, 1000, ncclFloat32, ncclSum, ctx->comm, ctx->stream));
  EXPECT(still_busy(ctx->stream, 300), "an all-reduce whose members disagree on the protocol completed");
  NCCL_OK(ncclCommAbort(ctx->comm));
  _exit(0);
}

/* Rank 0 captures its all-reduce into a graph it never launches: the op
 * never runs there, the others wait in it; its host goes on. */
static int body_capture(struct rank_ctx *ctx)
{
  float x[64] = { 0 };
  if (ctx->rank == 0) {
    CUstream cap;
    CUgraph graph;
    CUstreamCaptureStatus st;
    EXPECT(cuStreamCreate(&cap, CU_STREAM_NON_BLOCKING) == CUDA_SUCCESS, "cuStreamCreate");
    EXPECT(cuStreamBeginCapture_v2(cap, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL) == CUDA_SUCCESS, "begin");
    EXPECT(cuStreamIsCapturing(cap, &st) == CUDA_SUCCESS && st == CU_STREAM_CAPTURE_STATUS_ACTIVE, "capturing");
    NCCL_OK(ncclAllReduce(x, x, 64, ncclFloat32, ncclSum, ctx->comm, cap));
    EXPECT(cuStreamEndCapture(cap, &graph) == CUDA_SUCCESS, "end");
    EXPECT(cuStreamIsCapturing(cap, &st) == CUDA_SUCCESS && st == CU_STREAM_CAPTURE_STATUS_NONE, "still capturing");
    EXPECT(cuStreamQuery(cap) == CUDA_SUCCESS, "the captured op is on the stream");
    EXPECT(cuGraphDestroy(graph) == CUDA_SUCCESS, "cuGraphDestroy");
    EXPECT(sim_stream_graph_capturing(cap) == 0, "graph capture still on");
    usleep(300000);
    _exit(0);
  }
  NCCL_OK(ncclAllReduce(x, x, 64, ncclFloat32, ncclSum, ctx->comm, ctx->stream));
  EXPECT(still_busy(ctx->stream, 300), "the all-reduce completed without rank 0's");
  NCCL_OK(ncclCommAbort(ctx->comm));
  _exit(0);
}

/* An all-to-all-v as PyTorch issues it: one group of sends and receives,
 * a zero count not posted, the rank itself included. */
static int body_alltoallv(struct rank_ctx *ctx)
{
  int me = ctx->rank;
  int32_t out[NR * 8], in[NR * 8];
  size_t off_s = 0, off_r = 0, roff[NR];
  for (int p = 0; p < NR; p++) {
    size_t sc = (size_t)((me + p) % 3) * 2, rc = (size_t)((p + me) % 3) * 2;
    for (size_t i = 0; i < sc; i++)
      out[off_s + i] = me * 100 + p * 10 + (int32_t)i;
    roff[p] = off_r;
    off_r += rc;
    off_s += sc;
  }
  NCCL_OK(ncclGroupStart());
  off_s = 0;
  for (int p = 0; p < NR; p++) {
    size_t sc = (size_t)((me + p) % 3) * 2, rc = (size_t)((p + me) % 3) * 2;
    if (sc)
      NCCL_OK(ncclSend(out + off_s, sc, ncclInt32, p, ctx->comm, ctx->stream));
    if (rc)
      NCCL_OK(ncclRecv(in + roff[p], rc, ncclInt32, p, ctx->comm, ctx->stream));
    off_s += sc;
  }
  NCCL_OK(ncclGroupEnd());
  EXPECT(sync_ok(ctx), "sync");
  for (int p = 0; p < NR; p++)
    for (size_t i = 0; i < (size_t)((p + me) % 3) * 2; i++)
      EXPECT(in[roff[p] + i] == p * 100 + me * 10 + (int32_t)i, "from %d [%zu] = %d", p, i, in[roff[p] + i]);
  return 0;
}

START_TEST(test_init_fail) { ck_assert_int_eq(run_ranks_with(rank_bare, body_init_fail), 0); }
END_TEST
START_TEST(test_no_return) { ck_assert_int_eq(run_ranks(body_no_return), 0); }
END_TEST
START_TEST(test_algo) { ck_assert_int_eq(run_ranks(body_algo), 0); }
END_TEST
START_TEST(test_capture) { ck_assert_int_eq(run_ranks(body_capture), 0); }
END_TEST
START_TEST(test_alltoallv) { ck_assert_int_eq(run_ranks(body_alltoallv), 0); }
END_TEST

static Suite *sim_suite(void)
{
  Suite *s = suite_create("sim");
  TCase *tc = tcase_create("collectives");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_allreduce_sum);
  tcase_add_test(tc, test_allreduce_ops);
  tcase_add_test(tc, test_broadcast);
  tcase_add_test(tc, test_reduce);
  tcase_add_test(tc, test_allgather);
  tcase_add_test(tc, test_reducescatter);
  tcase_add_test(tc, test_pairwise);
  tcase_add_test(tc, test_sendrecv);
  tcase_add_test(tc, test_split);
  tcase_add_test(tc, test_count_mismatch);
  tcase_add_test(tc, test_alltoallv);
  suite_add_tcase(s, tc);
  TCase *tf = tcase_create("faults");
  tcase_set_timeout(tf, 60);
  tcase_add_test(tf, test_init_fail);
  tcase_add_test(tf, test_no_return);
  tcase_add_test(tf, test_algo);
  tcase_add_test(tf, test_capture);
  suite_add_tcase(s, tf);
  TCase *tl = tcase_create("local");
  tcase_set_timeout(tl, 30);
  tcase_add_test(tl, test_events);
  tcase_add_test(tl, test_api_misc);
  tcase_add_test(tl, test_initall_group);
  suite_add_tcase(s, tl);
  return s;
}

int main(void)
{
  SRunner *sr = srunner_create(sim_suite());
  srunner_run_all(sr, CK_ENV); /* CK_VERBOSITY=verbose lists every test */
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
