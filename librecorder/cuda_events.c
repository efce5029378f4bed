/* cuda_events.c — completion tracking with CUDA driver events (device.h).
 *
 * libcuda.so.1 is found with dlopen at run time (never linked).  Each ring
 * slot owns two events (start, end), created on first use in the context
 * current on the calling thread and reused when the slot is reused.  The
 * watchdog asks "has the stream got past this point" (cuEventQuery).  With
 * FR_GPU_TIMING (default) the events keep timing (CU_EVENT_DEFAULT, as
 * PyTorch's Flight Recorder does with timing on) and the watchdog stamps
 * when the GPU passed them: their elapsed time to a reference event it
 * records on a private non-blocking stream of the same context and waits
 * for (at most 2 ms, never on the application's streams; device.c); without
 * timing, CU_EVENT_DISABLE_TIMING and the time of the poll that saw them.
 * No events are recorded on a capturing stream (CUDA graphs).
 */
#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>

#include "recorder.h"

#define CU_FN_(sym, params) typedef CUresult(*sym##_fn) params; static sym##_fn p_##sym;
FR_CUDA_API(CU_FN_)

/* set (release) once every pointer above is resolved; read with acquire */
static _Atomic int cuda_ok;

int fr_cuda_init(char *why, size_t len) {
  void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL | RTLD_NOLOAD);
  if (!h) h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
  if (!h) {
    snprintf(why, len, "libcuda.so.1 not usable");
    return -1;
  }
#define CU_LOAD_(sym, params) p_##sym = (sym##_fn)dlsym(h, #sym);
  FR_CUDA_API(CU_LOAD_)
  if (!p_cuEventElapsedTime_v2) /* a driver older than CUDA 12.8: the same call */
    p_cuEventElapsedTime_v2 = (cuEventElapsedTime_v2_fn)dlsym(h, "cuEventElapsedTime");
  if (!p_cuEventCreate || !p_cuEventRecord || !p_cuEventQuery || !p_cuCtxGetCurrent) {
    snprintf(why, len, "libcuda.so.1 not usable");
    return -1;
  }
  atomic_store_explicit(&cuda_ok, 1, memory_order_release);
  return 0;
}

static int fr_cuda_available(void) { return atomic_load_explicit(&cuda_ok, memory_order_acquire); }

/* Are GPU-side times possible (FR_GPU_TIMING, and the calls they need)? */
static int timing(void) {
  return fr_g.cfg.gpu_timing && p_cuEventElapsedTime_v2 && p_cuCtxSetCurrent && p_cuStreamCreate;
}

static int fr_cuda_capturing(cudaStream_t stream) {
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
    p_cuEventDestroy_v2((CUevent)s->ev[0]);
    p_cuEventDestroy_v2((CUevent)s->ev[1]);
  }
  s->ev[0] = s->ev[1] = NULL;
  unsigned flags = timing() ? CU_EVENT_DEFAULT : CU_EVENT_DISABLE_TIMING;
  CUevent e0 = NULL, e1 = NULL;
  if (p_cuEventCreate(&e0, flags) != CUDA_SUCCESS) return -1;
  if (p_cuEventCreate(&e1, flags) != CUDA_SUCCESS) {
    if (p_cuEventDestroy_v2) p_cuEventDestroy_v2(e0);
    return -1;
  }
  s->ev[0] = e0;
  s->ev[1] = e1;
  s->ev_ctx = ctx;
  return 0;
}

static int fr_cuda_mark(fr_slot *s, int which, cudaStream_t stream) {
  if (!fr_cuda_available()) return -1;
  if (which == 0) {
    atomic_store_explicit(&s->ev_armed, 0, memory_order_relaxed);
    if (ensure_events(s) != 0) return -1;
  } else if (!s->ev[1]) {
    return -1;
  }
  if (p_cuEventRecord((CUevent)s->ev[which], (CUstream)stream) != CUDA_SUCCESS) return -1;
  atomic_fetch_or_explicit(&s->ev_armed, (uint8_t)(1u << which), memory_order_release);
  return 0;
}

static int fr_cuda_passed(fr_slot *s, int which) {
  if (!(atomic_load_explicit(&s->ev_armed, memory_order_acquire) & (1u << which))) return -1;
  CUresult r = p_cuEventQuery((CUevent)s->ev[which]);
  if (r == CUDA_SUCCESS) return 1;
  if (r == CUDA_ERROR_NOT_READY) return 0;
  return -1;
}

/* ---- GPU-side times: the reference of a context (device.c) ---------------- */

static int ref_enter(void *ctx) { return p_cuCtxSetCurrent((CUcontext)ctx) == CUDA_SUCCESS ? 0 : -1; }
static int ref_create(void **stream, void **ev) {
  CUstream st = NULL;
  CUevent e = NULL;
  if (p_cuStreamCreate(&st, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS) return -1;
  *stream = st;
  if (p_cuEventCreate(&e, CU_EVENT_DEFAULT) != CUDA_SUCCESS) return -1;
  *ev = e;
  return 0;
}
static int ref_record(void *ev, void *stream) {
  return p_cuEventRecord((CUevent)ev, (CUstream)stream) == CUDA_SUCCESS ? 0 : -1;
}
static int ref_query(void *ev) {
  CUresult q = p_cuEventQuery((CUevent)ev);
  return q == CUDA_SUCCESS ? 1 : q == CUDA_ERROR_NOT_READY ? 0 : -1;
}
static const fr_gpu_ref_ops ref_ops = {ref_enter, ref_create, ref_record, ref_query};
static fr_gpu_refs refs;

static uint64_t fr_cuda_gpu_time(fr_slot *s, int which, uint64_t scan) {
  if (!timing() || !s->ev_ctx || !s->ev[which]) return 0;
  fr_gpu_ref *r = fr_gpu_reference(&refs, &ref_ops, s->ev_ctx, scan);
  if (!r) return 0;
  float ms = 0; /* how long before the reference the GPU passed the event */
  if (p_cuEventElapsedTime_v2(&ms, (CUevent)s->ev[which], (CUevent)r->ev) != CUDA_SUCCESS) return 0;
  return fr_gpu_time_before(r, ms);
}

const fr_device fr_device_cuda = {"CUDA", fr_cuda_capturing, fr_cuda_mark, fr_cuda_passed, fr_cuda_gpu_time};
