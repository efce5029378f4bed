/* fr_nccl.h — flightrec's own declaration of the NCCL 2.28 C API.
 *
 * The recorder and the simulator compile against this header, never against
 * NVIDIA's nccl.h, so nothing in flightrec needs CUDA or NCCL to build.  The
 * values and prototypes are facts of NCCL 2.28.9's public nccl.h; they are
 * kept in tables (the FR_NCCL_* macros below and formats/nccl_api.def) so
 * that tests/unit/check_nccl_decls.c can compare every one of them with the
 * real header at compile time where it is installed (configure --with-cuda).
 *
 * Define FR_NCCL_TABLES_ONLY before including to get the tables without any
 * type or function declaration (used by that check, next to the real nccl.h).
 */
#ifndef FR_NCCL_H
#define FR_NCCL_H

#include <stddef.h>
#include <limits.h>

/* Version of the API declared here, in NCCL_VERSION_CODE form (2.28.9). */
#define FR_NCCL_DECLARED_VERSION 22809

/* ncclResult_t values: X(name, value) */
#define FR_NCCL_RESULTS(X) \
  X(ncclSuccess, 0) X(ncclUnhandledCudaError, 1) X(ncclSystemError, 2) \
  X(ncclInternalError, 3) X(ncclInvalidArgument, 4) X(ncclInvalidUsage, 5) \
  X(ncclRemoteError, 6) X(ncclInProgress, 7) X(ncclNumResults, 8)

/* ncclRedOp_t built-in values */
#define FR_NCCL_REDOPS(X) \
  X(ncclSum, 0) X(ncclProd, 1) X(ncclMax, 2) X(ncclMin, 3) X(ncclAvg, 4) \
  X(ncclNumOps, 5) X(ncclMaxRedOp, 0x7fffffff)

/* ncclDataType_t values (aliases ncclChar, ncclInt, ncclHalf, ncclFloat,
 * ncclDouble listed separately) */
#define FR_NCCL_DTYPES(X) \
  X(ncclInt8, 0) X(ncclUint8, 1) X(ncclInt32, 2) X(ncclUint32, 3) \
  X(ncclInt64, 4) X(ncclUint64, 5) X(ncclFloat16, 6) X(ncclFloat32, 7) \
  X(ncclFloat64, 8) X(ncclBfloat16, 9) X(ncclFloat8e4m3, 10) \
  X(ncclFloat8e5m2, 11) X(ncclNumTypes, 12)
#define FR_NCCL_DTYPE_ALIASES(X) \
  X(ncclChar, 0) X(ncclInt, 2) X(ncclHalf, 6) X(ncclFloat, 7) X(ncclDouble, 8)

#define FR_NCCL_SCALAR_RESIDENCE(X) \
  X(ncclScalarDevice, 0) X(ncclScalarHostImmediate, 1)

/* Plain integer constants: X(name, value) */
#define FR_NCCL_CONSTANTS(X) \
  X(NCCL_UNIQUE_ID_BYTES, 128) X(NCCL_SPLIT_NOCOLOR, -1) \
  X(NCCL_CONFIG_UNDEF_INT, INT_MIN) X(NCCL_SHRINK_DEFAULT, 0) \
  X(NCCL_SHRINK_ABORT, 1)

/* ncclConfig_t (ncclConfig_v22800) fields in order: X(type, name) */
#define FR_NCCL_CONFIG_FIELDS(X) \
  X(size_t, size) X(unsigned int, magic) X(unsigned int, version) \
  X(int, blocking) X(int, cgaClusterSize) X(int, minCTAs) X(int, maxCTAs) \
  X(const char *, netName) X(int, splitShare) X(int, trafficClass) \
  X(const char *, commName) X(int, collnetEnable) X(int, CTAPolicy) \
  X(int, shrinkShare) X(int, nvlsCTAs) X(int, nChannelsPerNetPeer) \
  X(int, nvlinkCentricSched)

/* ncclSimInfo_t (ncclSimInfo_v22200) fields */
#define FR_NCCL_SIMINFO_FIELDS(X) \
  X(size_t, size) X(unsigned int, magic) X(unsigned int, version) \
  X(float, estimatedTime)

#ifndef FR_NCCL_TABLES_ONLY

#ifdef __cplusplus
extern "C" {
#endif

#define FR_NCCL_ENUM_ENTRY_(name, value) name = value,
#define FR_NCCL_FIELD_(type, name) type name;

typedef struct ncclComm *ncclComm_t;
typedef struct ncclWindow_vidmem *ncclWindow_t;
/* cudaStream_t as the CUDA runtime declares it (same handle as CUstream) */
typedef struct CUstream_st *cudaStream_t;

#define NCCL_UNIQUE_ID_BYTES 128
#define NCCL_SPLIT_NOCOLOR (-1)
#define NCCL_CONFIG_UNDEF_INT INT_MIN
#define NCCL_CONFIG_UNDEF_PTR NULL
#define NCCL_SHRINK_DEFAULT 0x00
#define NCCL_SHRINK_ABORT 0x01

typedef struct { char internal[NCCL_UNIQUE_ID_BYTES]; } ncclUniqueId;
typedef enum { FR_NCCL_RESULTS(FR_NCCL_ENUM_ENTRY_) } ncclResult_t;
typedef enum { FR_NCCL_REDOPS(FR_NCCL_ENUM_ENTRY_) } ncclRedOp_t;
typedef enum { FR_NCCL_DTYPES(FR_NCCL_ENUM_ENTRY_)
               FR_NCCL_DTYPE_ALIASES(FR_NCCL_ENUM_ENTRY_) } ncclDataType_t;
typedef enum { FR_NCCL_SCALAR_RESIDENCE(FR_NCCL_ENUM_ENTRY_) } ncclScalarResidence_t;
typedef struct ncclConfig_v22800 { FR_NCCL_CONFIG_FIELDS(FR_NCCL_FIELD_) } ncclConfig_t;
typedef struct ncclSimInfo_v22200 { FR_NCCL_SIMINFO_FIELDS(FR_NCCL_FIELD_) } ncclSimInfo_t;

/* NCCL_CONFIG_INITIALIZER for 2.28 (magic 0xcafebeef, version 22809) */
#define NCCL_CONFIG_INITIALIZER { sizeof(ncclConfig_t), 0xcafebeef, 22809, \
  INT_MIN, INT_MIN, INT_MIN, INT_MIN, NULL, INT_MIN, INT_MIN, NULL, INT_MIN, \
  INT_MIN, INT_MIN, INT_MIN, INT_MIN, INT_MIN }

/* Every function twice, as NCCL exports it: ncclX (weak) and pncclX. */
#define FR_NCCL_DECLARE_(ret, Name, params) ret nccl##Name params; ret pnccl##Name params;
#define FR_COLL(code, Name, rec, params, args, c, d, o, r) FR_NCCL_DECLARE_(ncclResult_t, Name, params)
#define FR_P2P(code, Name, params, args, dir) FR_NCCL_DECLARE_(ncclResult_t, Name, params)
#define FR_CALL(code, Name, params, args) FR_NCCL_DECLARE_(ncclResult_t, Name, params)
#define FR_CALL_229(code, Name, params, args) FR_NCCL_DECLARE_(ncclResult_t, Name, params)
#define FR_PASS(ret, Name, params) FR_NCCL_DECLARE_(ret, Name, params)
#include "nccl_api.def"

/* RCCL's own entry points beside NCCL's API (rccl.h of ROCm's RCCL; not in
 * NVIDIA's nccl.h): all-to-all under RCCL's name, and all-to-all with
 * per-peer counts and displacements, in elements of `datatype`. */
FR_NCCL_DECLARE_(ncclResult_t, AllToAll, (const void *sendbuff, void *recvbuff, size_t count,
                                          ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream))
FR_NCCL_DECLARE_(ncclResult_t, AllToAllv, (const void *sendbuff, const size_t sendcounts[], const size_t sdispls[],
                                           void *recvbuff, const size_t recvcounts[], const size_t rdispls[],
                                           ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream))

#ifdef __cplusplus
}
#endif

#endif /* FR_NCCL_TABLES_ONLY */
#endif /* FR_NCCL_H */
