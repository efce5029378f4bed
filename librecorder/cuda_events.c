/* cuda_events.c — completion tracking with CUDA driver events.
 *
 * libcuda.so.1 is found with dlopen at run time (never linked).  Each ring
 * slot owns two events (start, end), created on first use in the context
 * current on the calling thread and reused when the slot is reused.  Events
 * are created with CU_EVENT_DISABLE_TIMING: we only ask "has the stream got
 * past this point" (cuEventQuery), and the watchdog stamps the time it saw
 * that.  No events are recorded on a capturing stream (CUDA graphs).
 */
#include <dlfcn.h>
#include <stddef.h>

#include "recorder.h"

#define CU_FN_(sym, params) typedef CUresult(*sym##_fn) params; static sym##_fn p_##sym;
FR_CUDA_API(CU_FN_)

/* set (release) once every pointer above is resolved; read with acquire */
static _Atomic int cuda_ok;

int fr_cuda_init(void) {
  void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL | RTLD_NOLOAD);
  if (!h) h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
  if (!h) return -1;
#define CU_LOAD_(sym, params) p_##sym = (sym##_fn)dlsym(h, #sym);
  FR_CUDA_API(CU_LOAD_)
  if (!p_cuEventCreate || !p_cuEventRecord || !p_cuEventQuery || !p_cuCtxGetCurrent) return -1;
  atomic_store_explicit(&cuda_ok, 1, memory_order_release);
  return 0;
}

int fr_cuda_available(void) { return atomic_load_explicit(&cuda_ok, memory_order_acquire); }

int fr_cuda_capturing(cudaStream_t stream) {
  CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
  if (!fr_cuda_available() || !p_cuStreamIsCapturing) return 0;
  if (p_cuStreamIsCapturing((CUstream)stream, &st) != CUDA_SUCCESS) return 0;
  return st != CU_STREAM_CAPTURE_STATUS_NONE;
}

/* Make sure the slot's events exist in the current context. */
static int ensure_events(fr_slot *s) {
  CUcontext ctx = NULL;
  if (p_cuCtxGetCurrent(&ctx) != CUDA_SUCCESS || !ctx) return -1;
  if (s->ev[0] && s->ev_ctx == ctx) return 0;
  if (s->ev[0] && p_cuEventDestroy_v2) {
    p_cuEventDestroy_v2(s->ev[0]);
    p_cuEventDestroy_v2(s->ev[1]);
  }
  s->ev[0] = s->ev[1] = NULL;
  if (p_cuEventCreate(&s->ev[0], CU_EVENT_DISABLE_TIMING) != CUDA_SUCCESS) return -1;
  if (p_cuEventCreate(&s->ev[1], CU_EVENT_DISABLE_TIMING) != CUDA_SUCCESS) {
    if (p_cuEventDestroy_v2) p_cuEventDestroy_v2(s->ev[0]);
    s->ev[0] = NULL;
    return -1;
  }
  s->ev_ctx = ctx;
  return 0;
}

int fr_cuda_mark(fr_slot *s, int which, cudaStream_t stream) {
  if (!fr_cuda_available()) return -1;
  if (which == 0) {
    atomic_store_explicit(&s->ev_armed, 0, memory_order_relaxed);
    if (ensure_events(s) != 0) return -1;
  } else if (!s->ev[1]) {
    return -1;
  }
  if (p_cuEventRecord(s->ev[which], (CUstream)stream) != CUDA_SUCCESS) return -1;
  atomic_fetch_or_explicit(&s->ev_armed, (uint8_t)(1u << which), memory_order_release);
  return 0;
}

int fr_cuda_passed(fr_slot *s, int which) {
  if (!(atomic_load_explicit(&s->ev_armed, memory_order_acquire) & (1u << which))) return -1;
  CUresult r = p_cuEventQuery(s->ev[which]);
  if (r == CUDA_SUCCESS) return 1;
  if (r == CUDA_ERROR_NOT_READY) return 0;
  return -1;
}
