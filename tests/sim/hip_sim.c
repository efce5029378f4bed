/* hip_sim.c — the simulator's HIP runtime stand-in: libamdhip64.so.6 for
 * the RCCL flavour of the simulator (librccl.so.1, tests/sim).
 *
 * The HIP calls of fr_hip.h on the same engine as the CUDA stand-in
 * (cuda_sim.c is linked into this library too; only hip* and the sim_*
 * internals of sim.h are exported): a hipStream_t is a simulated CUstream,
 * a hipEvent_t a simulated CUevent, so streams, events, timing and graph
 * capture behave exactly as in the CUDA flavour.  One device, number 0 (the
 * CUDA stand-in's one context).  hipError_t and CUresult share the values
 * the engine returns (0, 1, 100, 101, 201, 400, 600, 801: fr_hip.h and
 * fr_cuda.h), so an engine result is returned as it is.
 */
#include "config.h"

#include <stdint.h>

#include "fr_hip.h"
#include "sim.h"

/* Reported by hipRuntimeGetVersion: HIP 6.4 (major * 10^7 + minor * 10^5) */
#define SIM_HIP_VERSION 60400000

#define HIP_(r) ((hipError_t)(r))

hipError_t hipInit(unsigned int flags) { return HIP_(cuInit(flags)); }

hipError_t hipGetDeviceCount(int *count)
{
  if (!count)
    return hipErrorInvalidValue;
  *count = 1;
  return hipSuccess;
}

hipError_t hipGetDevice(int *deviceId)
{
  if (!deviceId)
    return hipErrorInvalidValue;
  *deviceId = 0;
  return hipSuccess;
}

hipError_t hipSetDevice(int deviceId) { return deviceId == 0 ? hipSuccess : hipErrorInvalidDevice; }

hipError_t hipRuntimeGetVersion(int *runtimeVersion)
{
  if (!runtimeVersion)
    return hipErrorInvalidValue;
  *runtimeVersion = SIM_HIP_VERSION;
  return hipSuccess;
}

hipError_t hipEventCreateWithFlags(hipEvent_t *event, unsigned flags)
{
  CUevent e = NULL;
  CUresult r = event ? cuEventCreate(&e, flags) : CUDA_ERROR_INVALID_VALUE;
  if (r == CUDA_SUCCESS)
    *event = (hipEvent_t)(void *)e;
  return HIP_(r);
}

hipError_t hipEventRecord(hipEvent_t event, hipStream_t stream)
{
  return HIP_(cuEventRecord((CUevent)(void *)event, (CUstream)(void *)stream));
}

hipError_t hipEventQuery(hipEvent_t event) { return HIP_(cuEventQuery((CUevent)(void *)event)); }

hipError_t hipEventDestroy(hipEvent_t event) { return HIP_(cuEventDestroy_v2((CUevent)(void *)event)); }

hipError_t hipEventElapsedTime(float *ms, hipEvent_t start, hipEvent_t stop)
{
  return HIP_(cuEventElapsedTime_v2(ms, (CUevent)(void *)start, (CUevent)(void *)stop));
}

hipError_t hipStreamIsCapturing(hipStream_t stream, hipStreamCaptureStatus *pCaptureStatus)
{
  CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
  CUresult r = cuStreamIsCapturing((CUstream)(void *)stream, pCaptureStatus ? &st : NULL);
  if (r == CUDA_SUCCESS)
    *pCaptureStatus = (hipStreamCaptureStatus)st; /* the same three values */
  return HIP_(r);
}

hipError_t hipStreamCreateWithFlags(hipStream_t *stream, unsigned int flags)
{
  CUstream st = NULL;
  CUresult r = stream ? cuStreamCreate(&st, flags) : CUDA_ERROR_INVALID_VALUE;
  if (r == CUDA_SUCCESS)
    *stream = (hipStream_t)(void *)st;
  return HIP_(r);
}

hipError_t hipStreamSynchronize(hipStream_t stream) { return HIP_(cuStreamSynchronize((CUstream)(void *)stream)); }

hipError_t hipStreamQuery(hipStream_t stream) { return HIP_(cuStreamQuery((CUstream)(void *)stream)); }

hipError_t hipStreamDestroy(hipStream_t stream) { return HIP_(cuStreamDestroy_v2((CUstream)(void *)stream)); }

hipError_t hipMalloc(void **ptr, size_t size)
{
  CUdeviceptr p = 0;
  if (!ptr)
    return hipErrorInvalidValue;
  CUresult r = cuMemAlloc_v2(&p, size);
  if (r == CUDA_SUCCESS)
    *ptr = (void *)(uintptr_t)p;
  return HIP_(r);
}

hipError_t hipFree(void *ptr) { return HIP_(cuMemFree_v2((CUdeviceptr)(uintptr_t)ptr)); }

hipError_t hipStreamBeginCapture(hipStream_t stream, hipStreamCaptureMode mode)
{
  return HIP_(cuStreamBeginCapture_v2((CUstream)(void *)stream, (CUstreamCaptureMode)mode));
}

hipError_t hipStreamEndCapture(hipStream_t stream, hipGraph_t *pGraph)
{
  CUgraph g = NULL;
  CUresult r = pGraph ? cuStreamEndCapture((CUstream)(void *)stream, &g) : CUDA_ERROR_INVALID_VALUE;
  if (r == CUDA_SUCCESS)
    *pGraph = (hipGraph_t)(void *)g;
  return HIP_(r);
}

hipError_t hipGraphDestroy(hipGraph_t graph) { return HIP_(cuGraphDestroy((CUgraph)(void *)graph)); }
