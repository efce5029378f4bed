/* sites.c — every NCCL call of fr-scenario-job, made in one dispatcher
 * (job_ncall_do) that is inlined into job_ncall (ops without site=) and
 * into each of job_site_1 .. job_site_8 (site=NAME, numbered in order of
 * first appearance in the file).  The site functions are exported (the job
 * is linked with -rdynamic) and never inlined, and their bodies differ (a
 * per-site call counter), so the compiler cannot fold them into one: the
 * records of one op kind made from two sites carry different return
 * addresses, call sites and stacks. */
#include "config.h"

#include "job.h"

/* Calls made from each site (index 0: job_ncall); also what keeps the
 * site functions distinct. */
volatile unsigned long job_site_calls[SC_MAX_SITES + 1];

static inline __attribute__((always_inline)) ncclResult_t job_coll(const struct job_ncall *c)
{
  const void *s = c->send;
  void *r = c->recv;
  size_t n = c->count;
  switch (c->kind) {
  case SC_ALLREDUCE: return ncclAllReduce(s, r, n, c->dtype, c->redop, c->comm, c->stream);
  case SC_BROADCAST: return ncclBroadcast(s, r, n, c->dtype, c->root, c->comm, c->stream);
  case SC_BCAST: return ncclBcast(r, n, c->dtype, c->root, c->comm, c->stream);
  case SC_REDUCE: return ncclReduce(s, r, n, c->dtype, c->redop, c->root, c->comm, c->stream);
  case SC_ALLGATHER: return ncclAllGather(s, r, n, c->dtype, c->comm, c->stream);
  case SC_REDUCESCATTER: return ncclReduceScatter(s, r, n, c->dtype, c->redop, c->comm, c->stream);
  case SC_ALLTOALL: return ncclAlltoAll(s, r, n, c->dtype, c->comm, c->stream);
  case SC_GATHER: return ncclGather(s, r, n, c->dtype, c->root, c->comm, c->stream);
  case SC_SCATTER: return ncclScatter(s, r, n, c->dtype, c->root, c->comm, c->stream);
  case SC_SEND: return ncclSend(s, n, c->dtype, c->peer, c->comm, c->stream);
  case SC_RECV: return ncclRecv(r, n, c->dtype, c->peer, c->comm, c->stream);
  default: return ncclInvalidUsage;
  }
}

static inline __attribute__((always_inline)) ncclResult_t job_ncall_do(const struct job_ncall *c)
{
  static const int devlist[SC_MAX_DEVICES] = {
    0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21,
    22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42,
    43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63,
  };
  switch (c->what) {
  case JN_COLL: return job_coll(c);
  case JN_GROUP_START: return ncclGroupStart();
  case JN_GROUP_END: return ncclGroupEnd();
  case JN_INIT_RANK: return ncclCommInitRank(c->out, c->nranks, c->id, c->rank);
  case JN_SPLIT: return ncclCommSplit(c->comm, c->color, c->key, c->out, NULL);
  case JN_SHRINK: return ncclCommShrink(c->comm, c->excl, c->nexcl, c->out, NULL, NCCL_SHRINK_DEFAULT);
  case JN_INIT_ALL: return ncclCommInitAll(c->out, c->nranks, devlist);
  case JN_DESTROY: return ncclCommDestroy(c->comm);
  case JN_FINALIZE: return ncclCommFinalize(c->comm);
  case JN_ABORT: return ncclCommAbort(c->comm);
  case JN_ASYNC_ERROR: return ncclCommGetAsyncError(c->comm, c->async);
  }
  return ncclInvalidUsage;
}

/* The call, then an empty asm that may change its result: code after the
 * call, so it is never a tail call and the NCCL function returns into the
 * site function (whose frame stays in the stacks). */
#define JOB_CALL_HERE(k, c)                                                  \
  do {                                                                       \
    job_site_calls[k]++;                                                     \
    ncclResult_t rc_ = job_ncall_do(c);                                      \
    __asm__ __volatile__("" : "+r"(rc_));                                    \
    return rc_;                                                              \
  } while (0)

#define JOB_SITE(k)                                                          \
  ncclResult_t job_site_##k(const struct job_ncall *c);                      \
  __attribute__((noinline)) ncclResult_t job_site_##k(const struct job_ncall *c) \
  {                                                                          \
    JOB_CALL_HERE(k, c);                                                     \
  }

JOB_SITE(1)
JOB_SITE(2)
JOB_SITE(3)
JOB_SITE(4)
JOB_SITE(5)
JOB_SITE(6)
JOB_SITE(7)
JOB_SITE(8)

__attribute__((noinline)) ncclResult_t job_ncall(int site, const struct job_ncall *c)
{
  switch (site) {
  case 1: return job_site_1(c);
  case 2: return job_site_2(c);
  case 3: return job_site_3(c);
  case 4: return job_site_4(c);
  case 5: return job_site_5(c);
  case 6: return job_site_6(c);
  case 7: return job_site_7(c);
  case 8: return job_site_8(c);
  default:
    JOB_CALL_HERE(0, c);
  }
}
