/* fr_hip.h — the few HIP runtime calls flightrec uses, declared by us.
 *
 * On ROCm, RCCL keeps NCCL's API and takes a hipStream_t where NCCL takes a
 * cudaStream_t; completion is tracked with HIP events instead of CUDA
 * driver events.  The recorder never links the HIP runtime: it finds
 * libamdhip64.so.N already loaded in the process (RCCL and PyTorch load it)
 * or dlopen()s it at run time, and resolves these symbols by name.  The
 * simulator's stand-in (tests/sim, libamdhip64.so.6) exports the same ones.
 * Values and prototypes are facts of HIP's hip_runtime_api.h (the same in
 * ROCm 5.2 and 6.x; the runtime is device-based, with no context to make
 * current), checked against it at compile time by
 * tests/unit/check_hip_decls.c where it is installed.
 *
 * FR_HIP_TABLES_ONLY: only the tables, no declarations.
 */
#ifndef FR_HIP_H
#define FR_HIP_H

/* hipError_t values we look at */
#define FR_HIP_RESULTS(X) \
  X(hipSuccess, 0) X(hipErrorInvalidValue, 1) \
  X(hipErrorNotInitialized, 3) X(hipErrorDeinitialized, 4) \
  X(hipErrorNoDevice, 100) X(hipErrorInvalidDevice, 101) X(hipErrorInvalidContext, 201) \
  X(hipErrorInvalidHandle, 400) X(hipErrorNotReady, 600) \
  X(hipErrorNotSupported, 801)

/* Flags and enum values: X(name, value) */
#define FR_HIP_CONSTANTS(X) \
  X(hipEventDefault, 0) X(hipEventDisableTiming, 2) \
  X(hipStreamDefault, 0) X(hipStreamNonBlocking, 1) \
  X(hipStreamCaptureStatusNone, 0) X(hipStreamCaptureStatusActive, 1) \
  X(hipStreamCaptureStatusInvalidated, 2) \
  X(hipStreamCaptureModeGlobal, 0) X(hipStreamCaptureModeThreadLocal, 1) \
  X(hipStreamCaptureModeRelaxed, 2)

/* Runtime functions: X(symbol, params).  All return hipError_t.  The first
 * group is what the recorder calls; the second what the simulator's job
 * calls besides (stream capture, memory). */
#define FR_HIP_API(X) \
  X(hipGetDeviceCount, (int *count)) \
  X(hipGetDevice, (int *deviceId)) \
  X(hipSetDevice, (int deviceId)) \
  X(hipRuntimeGetVersion, (int *runtimeVersion)) \
  X(hipEventCreateWithFlags, (hipEvent_t *event, unsigned flags)) \
  X(hipEventRecord, (hipEvent_t event, hipStream_t stream)) \
  X(hipEventQuery, (hipEvent_t event)) \
  X(hipEventDestroy, (hipEvent_t event)) \
  X(hipEventElapsedTime, (float *ms, hipEvent_t start, hipEvent_t stop)) \
  X(hipStreamIsCapturing, (hipStream_t stream, hipStreamCaptureStatus *pCaptureStatus)) \
  X(hipStreamCreateWithFlags, (hipStream_t *stream, unsigned int flags)) \
  X(hipStreamSynchronize, (hipStream_t stream)) \
  X(hipStreamQuery, (hipStream_t stream)) \
  X(hipStreamDestroy, (hipStream_t stream))
#define FR_HIP_JOB_API(X) \
  X(hipInit, (unsigned int flags)) \
  X(hipMalloc, (void **ptr, size_t size)) \
  X(hipFree, (void *ptr)) \
  X(hipStreamBeginCapture, (hipStream_t stream, hipStreamCaptureMode mode)) \
  X(hipStreamEndCapture, (hipStream_t stream, hipGraph_t *pGraph)) \
  X(hipGraphDestroy, (hipGraph_t graph))

#ifndef FR_HIP_TABLES_ONLY
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FR_HIP_ENUM_ENTRY_(name, value) name = value,
typedef enum hipError_t { FR_HIP_RESULTS(FR_HIP_ENUM_ENTRY_) } hipError_t;
typedef enum hipStreamCaptureStatus { hipStreamCaptureStatusNone = 0, hipStreamCaptureStatusActive = 1,
                                      hipStreamCaptureStatusInvalidated = 2 } hipStreamCaptureStatus;
typedef enum hipStreamCaptureMode { hipStreamCaptureModeGlobal = 0, hipStreamCaptureModeThreadLocal = 1,
                                    hipStreamCaptureModeRelaxed = 2 } hipStreamCaptureMode;
enum { hipEventDefault = 0, hipEventDisableTiming = 2 };
enum { hipStreamDefault = 0, hipStreamNonBlocking = 1 };

typedef struct ihipStream_t *hipStream_t;
typedef struct ihipEvent_t *hipEvent_t;
typedef struct ihipGraph *hipGraph_t;

#define FR_HIP_DECLARE_(sym, params) hipError_t sym params;
FR_HIP_API(FR_HIP_DECLARE_)
FR_HIP_JOB_API(FR_HIP_DECLARE_)

#ifdef __cplusplus
}
#endif
#endif /* FR_HIP_TABLES_ONLY */
#endif /* FR_HIP_H */
