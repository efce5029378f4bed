/* fake_nccl.c — the benchmarks' libnccl.so.2: every collective and p2p call
 * of nccl_api.def returns ncclSuccess at once, so that timing a call through
 * the recorder measures the recorder and not NCCL (the simulator in
 * tests/sim moves real data and would swamp the few nanoseconds we look for).
 *
 * Like real NCCL, each function is defined as pncclX and exported as well
 * under ncclX, a weak alias, so the recorder (preloaded) can define ncclX and
 * reach this one through pncclX.  Collectives and p2p calls are generated
 * from the table; the few communicator and group calls the benchmarks use
 * are written out below (the rest are absent, as in an older NCCL: the
 * recorder answers those with an error of its own).
 */
#include "config.h"

#include <stdlib.h>
#include <time.h>

#include "fr_nccl.h"

/* A communicator: only what NCCL's getters report. */
struct ncclComm {
  int nranks, rank;
};

#define FAKE_ALIAS_(ret, Name, params) ret nccl##Name params __attribute__((weak, alias("pnccl" #Name)));

/* ---- collectives and p2p: return at once ---- */
#define FR_COLL(code, Name, rec, params, args, c, d, o, r) \
  ncclResult_t pnccl##Name params { return ncclSuccess; }  \
  FAKE_ALIAS_(ncclResult_t, Name, params)
#define FR_P2P(code, Name, params, args, dir)             \
  ncclResult_t pnccl##Name params { return ncclSuccess; } \
  FAKE_ALIAS_(ncclResult_t, Name, params)
#include "nccl_api.def"

/* ---- the rest the benchmarks call ---- */

ncclResult_t pncclGetVersion(int *version)
{
  if (!version)
    return ncclInvalidArgument;
  *version = FR_NCCL_DECLARED_VERSION;
  return ncclSuccess;
}
FAKE_ALIAS_(ncclResult_t, GetVersion, (int *version))

/* Distinct ids without a system call: a counter and the clock, mixed. */
ncclResult_t pncclGetUniqueId(ncclUniqueId *uniqueId)
{
  static unsigned long long calls;
  if (!uniqueId)
    return ncclInvalidArgument;
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  unsigned long long x = (unsigned long long)t.tv_nsec ^ ((unsigned long long)t.tv_sec << 32) ^
                         (++calls * 0x9e3779b97f4a7c15ull);
  for (size_t i = 0; i < sizeof uniqueId->internal; i++) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    uniqueId->internal[i] = (char)(x >> 56);
  }
  return ncclSuccess;
}
FAKE_ALIAS_(ncclResult_t, GetUniqueId, (ncclUniqueId *uniqueId))

const char *pncclGetErrorString(ncclResult_t result)
{
  return result == ncclSuccess ? "no error" : "error (benchmark NCCL)";
}
FAKE_ALIAS_(const char *, GetErrorString, (ncclResult_t result))

const char *pncclGetLastError(ncclComm_t comm)
{
  return "";
}
FAKE_ALIAS_(const char *, GetLastError, (ncclComm_t comm))

ncclResult_t pncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId commId, int rank)
{
  if (!comm || nranks < 1 || rank < 0 || rank >= nranks)
    return ncclInvalidArgument;
  struct ncclComm *c = malloc(sizeof *c);
  if (!c)
    return ncclSystemError;
  c->nranks = nranks;
  c->rank = rank;
  *comm = c;
  return ncclSuccess;
}
FAKE_ALIAS_(ncclResult_t, CommInitRank, (ncclComm_t *comm, int nranks, ncclUniqueId commId, int rank))

ncclResult_t pncclCommInitRankConfig(ncclComm_t *comm, int nranks, ncclUniqueId commId, int rank,
                                     ncclConfig_t *config)
{
  return pncclCommInitRank(comm, nranks, commId, rank);
}
FAKE_ALIAS_(ncclResult_t, CommInitRankConfig,
            (ncclComm_t *comm, int nranks, ncclUniqueId commId, int rank, ncclConfig_t *config))

ncclResult_t pncclCommCount(const ncclComm_t comm, int *count)
{
  if (!comm || !count)
    return ncclInvalidArgument;
  *count = comm->nranks;
  return ncclSuccess;
}
FAKE_ALIAS_(ncclResult_t, CommCount, (const ncclComm_t comm, int *count))

ncclResult_t pncclCommUserRank(const ncclComm_t comm, int *rank)
{
  if (!comm || !rank)
    return ncclInvalidArgument;
  *rank = comm->rank;
  return ncclSuccess;
}
FAKE_ALIAS_(ncclResult_t, CommUserRank, (const ncclComm_t comm, int *rank))

ncclResult_t pncclCommCuDevice(const ncclComm_t comm, int *device)
{
  if (!comm || !device)
    return ncclInvalidArgument;
  *device = 0;
  return ncclSuccess;
}
FAKE_ALIAS_(ncclResult_t, CommCuDevice, (const ncclComm_t comm, int *device))

ncclResult_t pncclCommGetAsyncError(ncclComm_t comm, ncclResult_t *asyncError)
{
  if (!comm || !asyncError)
    return ncclInvalidArgument;
  *asyncError = ncclSuccess;
  return ncclSuccess;
}
FAKE_ALIAS_(ncclResult_t, CommGetAsyncError, (ncclComm_t comm, ncclResult_t *asyncError))

ncclResult_t pncclCommFinalize(ncclComm_t comm)
{
  return comm ? ncclSuccess : ncclInvalidArgument;
}
FAKE_ALIAS_(ncclResult_t, CommFinalize, (ncclComm_t comm))

ncclResult_t pncclCommDestroy(ncclComm_t comm)
{
  free(comm);
  return ncclSuccess;
}
FAKE_ALIAS_(ncclResult_t, CommDestroy, (ncclComm_t comm))

ncclResult_t pncclCommAbort(ncclComm_t comm)
{
  free(comm);
  return ncclSuccess;
}
FAKE_ALIAS_(ncclResult_t, CommAbort, (ncclComm_t comm))

ncclResult_t pncclGroupStart(void)
{
  return ncclSuccess;
}
FAKE_ALIAS_(ncclResult_t, GroupStart, (void))

ncclResult_t pncclGroupEnd(void)
{
  return ncclSuccess;
}
FAKE_ALIAS_(ncclResult_t, GroupEnd, (void))
