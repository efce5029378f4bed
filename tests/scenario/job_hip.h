/* job_hip.h — forced in front of every source of the scenario job for its
 * RCCL/HIP flavour (fr-scenario-job-hip, -include): the same job, its CUDA
 * driver calls made as HIP runtime calls (the simulator's libamdhip64.so.6)
 * and its all-to-all through RCCL's own ncclAllToAll (librccl.so.1), as a
 * ROCm port of the job would make them.  A CUDA call left unmapped here
 * does not link: the HIP stand-in exports no cu* symbol.
 */
#ifndef FR_JOB_HIP_H
#define FR_JOB_HIP_H

#include <stdint.h>

#include "fr_cuda.h"
#include "fr_hip.h"
#include "fr_nccl.h"

#define JH_ESC_(e) ((CUresult)(e)) /* the values the job looks at are the same (fr_hip.h) */

static inline CUresult jh_init(unsigned f) { return JH_ESC_(hipInit(f)); }
static inline CUresult jh_stream_create(CUstream *s, unsigned f) {
  hipStream_t h = NULL;
  hipError_t e = hipStreamCreateWithFlags(&h, f);
  if (e == hipSuccess) *s = (CUstream)(void *)h;
  return JH_ESC_(e);
}
static inline CUresult jh_stream_sync(CUstream s) { return JH_ESC_(hipStreamSynchronize((hipStream_t)(void *)s)); }
static inline CUresult jh_stream_query(CUstream s) { return JH_ESC_(hipStreamQuery((hipStream_t)(void *)s)); }
static inline CUresult jh_stream_destroy(CUstream s) { return JH_ESC_(hipStreamDestroy((hipStream_t)(void *)s)); }
static inline CUresult jh_event_create(CUevent *ev, unsigned f) {
  hipEvent_t h = NULL;
  hipError_t e = hipEventCreateWithFlags(&h, f);
  if (e == hipSuccess) *ev = (CUevent)(void *)h;
  return JH_ESC_(e);
}
static inline CUresult jh_event_record(CUevent ev, CUstream s) {
  return JH_ESC_(hipEventRecord((hipEvent_t)(void *)ev, (hipStream_t)(void *)s));
}
static inline CUresult jh_event_query(CUevent ev) { return JH_ESC_(hipEventQuery((hipEvent_t)(void *)ev)); }
static inline CUresult jh_event_destroy(CUevent ev) { return JH_ESC_(hipEventDestroy((hipEvent_t)(void *)ev)); }
static inline CUresult jh_mem_alloc(CUdeviceptr *p, size_t n) {
  void *h = NULL;
  hipError_t e = hipMalloc(&h, n);
  if (e == hipSuccess) *p = (CUdeviceptr)(uintptr_t)h;
  return JH_ESC_(e);
}
static inline CUresult jh_mem_free(CUdeviceptr p) { return JH_ESC_(hipFree((void *)(uintptr_t)p)); }
/* stream capture (sim.h's CUgraph and capture modes; the same mode values) */
struct CUgraph_st;
static inline CUresult jh_begin_capture(CUstream s, unsigned mode) { /* sim.h's enum: unsigned */
  return JH_ESC_(hipStreamBeginCapture((hipStream_t)(void *)s, (hipStreamCaptureMode)mode));
}
static inline CUresult jh_end_capture(CUstream s, struct CUgraph_st **g) {
  hipGraph_t h = NULL;
  hipError_t e = hipStreamEndCapture((hipStream_t)(void *)s, &h);
  if (e == hipSuccess) *g = (struct CUgraph_st *)(void *)h;
  return JH_ESC_(e);
}
static inline CUresult jh_graph_destroy(struct CUgraph_st *g) { return JH_ESC_(hipGraphDestroy((hipGraph_t)(void *)g)); }

#define cuInit jh_init
#define cuStreamCreate jh_stream_create
#define cuStreamSynchronize jh_stream_sync
#define cuStreamQuery jh_stream_query
#define cuStreamDestroy_v2 jh_stream_destroy
#define cuEventCreate jh_event_create
#define cuEventRecord jh_event_record
#define cuEventQuery jh_event_query
#define cuEventDestroy_v2 jh_event_destroy
#define cuMemAlloc_v2 jh_mem_alloc
#define cuMemFree_v2 jh_mem_free
#define cuStreamBeginCapture_v2 jh_begin_capture
#define cuStreamEndCapture jh_end_capture
#define cuGraphDestroy jh_graph_destroy
#define ncclAlltoAll ncclAllToAll

#endif /* FR_JOB_HIP_H */
