/* fr_cuda.h — the few CUDA driver API calls flightrec uses, declared by us.
 *
 * The recorder never links libcuda: it dlopen()s "libcuda.so.1" at run time
 * and resolves these symbols by the names listed here (the exported ABI
 * names, e.g. cuEventDestroy_v2, which cuda.h maps cuEventDestroy to;
 * cuEventElapsedTime_v2 is CUDA 12.8's, and the recorder falls back to the
 * older cuEventElapsedTime, same prototype, where a driver lacks it).  The
 * simulator's libcuda.so.1 (tests/sim) exports the same symbols.  Values and
 * prototypes are facts of CUDA 13.0's cuda.h, checked against it at compile
 * time by tests/unit/check_cuda_decls.c where it is installed.
 *
 * FR_CUDA_TABLES_ONLY: only the tables, no declarations.
 */
#ifndef FR_CUDA_H
#define FR_CUDA_H

/* CUresult values we look at */
#define FR_CUDA_RESULTS(X) \
  X(CUDA_SUCCESS, 0) X(CUDA_ERROR_INVALID_VALUE, 1) \
  X(CUDA_ERROR_NOT_INITIALIZED, 3) X(CUDA_ERROR_DEINITIALIZED, 4) \
  X(CUDA_ERROR_NO_DEVICE, 100) X(CUDA_ERROR_INVALID_CONTEXT, 201) \
  X(CUDA_ERROR_INVALID_HANDLE, 400) X(CUDA_ERROR_NOT_READY, 600) \
  X(CUDA_ERROR_NOT_SUPPORTED, 801)

/* Flags and enum values: X(name, value) */
#define FR_CUDA_CONSTANTS(X) \
  X(CU_EVENT_DEFAULT, 0) X(CU_EVENT_DISABLE_TIMING, 2) \
  X(CU_STREAM_DEFAULT, 0) X(CU_STREAM_NON_BLOCKING, 1) \
  X(CU_STREAM_CAPTURE_STATUS_NONE, 0) X(CU_STREAM_CAPTURE_STATUS_ACTIVE, 1) \
  X(CU_STREAM_CAPTURE_STATUS_INVALIDATED, 2)

/* Driver functions: X(symbol, params).  All return CUresult. */
#define FR_CUDA_API(X) \
  X(cuInit, (unsigned int Flags)) \
  X(cuDriverGetVersion, (int *driverVersion)) \
  X(cuCtxGetCurrent, (CUcontext *pctx)) \
  X(cuCtxSetCurrent, (CUcontext ctx)) \
  X(cuEventCreate, (CUevent *phEvent, unsigned int Flags)) \
  X(cuEventRecord, (CUevent hEvent, CUstream hStream)) \
  X(cuEventQuery, (CUevent hEvent)) \
  X(cuEventDestroy_v2, (CUevent hEvent)) \
  X(cuEventElapsedTime_v2, (float *pMilliseconds, CUevent hStart, CUevent hEnd)) \
  X(cuStreamIsCapturing, (CUstream hStream, CUstreamCaptureStatus *captureStatus)) \
  X(cuStreamCreate, (CUstream *phStream, unsigned int Flags)) \
  X(cuStreamSynchronize, (CUstream hStream)) \
  X(cuStreamQuery, (CUstream hStream)) \
  X(cuStreamDestroy_v2, (CUstream hStream)) \
  X(cuMemAlloc_v2, (CUdeviceptr *dptr, size_t bytesize)) \
  X(cuMemFree_v2, (CUdeviceptr dptr))

#ifndef FR_CUDA_TABLES_ONLY
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FR_CUDA_ENUM_ENTRY_(name, value) name = value,
typedef enum { FR_CUDA_RESULTS(FR_CUDA_ENUM_ENTRY_) } CUresult;
typedef enum { CU_STREAM_CAPTURE_STATUS_NONE = 0, CU_STREAM_CAPTURE_STATUS_ACTIVE = 1,
               CU_STREAM_CAPTURE_STATUS_INVALIDATED = 2 } CUstreamCaptureStatus;
enum { CU_EVENT_DEFAULT = 0, CU_EVENT_DISABLE_TIMING = 2 };
enum { CU_STREAM_DEFAULT = 0, CU_STREAM_NON_BLOCKING = 1 };

typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st *CUcontext;
typedef struct CUevent_st *CUevent;
typedef struct CUstream_st *CUstream;

#define FR_CUDA_DECLARE_(sym, params) CUresult sym params;
FR_CUDA_API(FR_CUDA_DECLARE_)

#ifdef __cplusplus
}
#endif
#endif /* FR_CUDA_TABLES_ONLY */
#endif /* FR_CUDA_H */
