/* rccl_sim.c — RCCL's own entry points in the RCCL flavour of the simulator
 * (librccl.so.1, the simulated NCCL built again on the HIP stand-in).
 *
 * As RCCL does (its collectives.cc), both all-to-alls run as one group of
 * a send and a receive per peer, through the exported NCCL calls, so an
 * interposer sees the calls RCCL makes; an empty ncclAllToAll does
 * nothing.  Displacements are in elements of `datatype`.
 */
#include "config.h"

#include "sim_nccl.h"

static ncclResult_t a2a(const void *sendbuff, const size_t *sendcounts, const size_t *sdispls, void *recvbuff,
                        const size_t *recvcounts, const size_t *rdispls, size_t count, ncclDataType_t datatype,
                        ncclComm_t comm, cudaStream_t stream)
{
  int n = 0;
  ncclResult_t r = ncclCommCount(comm, &n);
  if (r != ncclSuccess)
    return r;
  size_t esz = sim_dtype_size(datatype);
  if (esz == 0)
    return ncclInvalidArgument;
  if ((r = ncclGroupStart()) != ncclSuccess)
    return r;
  for (int p = 0; p < n && r == ncclSuccess; p++) {
    size_t so = sdispls ? sdispls[p] : (size_t)p * count, ro = rdispls ? rdispls[p] : (size_t)p * count;
    r = ncclSend((const char *)sendbuff + so * esz, sendcounts ? sendcounts[p] : count, datatype, p, comm, stream);
    if (r == ncclSuccess)
      r = ncclRecv((char *)recvbuff + ro * esz, recvcounts ? recvcounts[p] : count, datatype, p, comm, stream);
  }
  ncclResult_t e = ncclGroupEnd();
  return r != ncclSuccess ? r : e;
}

ncclResult_t pncclAllToAll(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype,
                           ncclComm_t comm, cudaStream_t stream)
{
  if (count == 0)
    return ncclSuccess;
  return a2a(sendbuff, NULL, NULL, recvbuff, NULL, NULL, count, datatype, comm, stream);
}

ncclResult_t pncclAllToAllv(const void *sendbuff, const size_t sendcounts[], const size_t sdispls[],
                            void *recvbuff, const size_t recvcounts[], const size_t rdispls[],
                            ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream)
{
  if (!sendcounts || !sdispls || !recvcounts || !rdispls)
    return ncclInvalidArgument;
  return a2a(sendbuff, sendcounts, sdispls, recvbuff, recvcounts, rdispls, 0, datatype, comm, stream);
}

ncclResult_t ncclAllToAll(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype,
                          ncclComm_t comm, cudaStream_t stream) __attribute__((weak, alias("pncclAllToAll")));
ncclResult_t ncclAllToAllv(const void *sendbuff, const size_t sendcounts[], const size_t sdispls[], void *recvbuff,
                           const size_t recvcounts[], const size_t rdispls[], ncclDataType_t datatype,
                           ncclComm_t comm, cudaStream_t stream) __attribute__((weak, alias("pncclAllToAllv")));
