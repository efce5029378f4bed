/* cuda_events.c — completion tracking with CUDA driver events.
 *
 * libcuda.so.1 is found with dlopen at run time (never linked).  Each ring
 * slot owns two events (start, end), created on first use in the context
 * current on the calling thread and reused when the slot is reused.  The
 * watchdog asks "has the stream got past this point" (cuEventQuery).  With
 * FR_GPU_TIMING (default) the events keep timing (CU_EVENT_DEFAULT, as
 * PyTorch's Flight Recorder does with timing on) and the watchdog stamps
 * when the GPU passed them: their elapsed time to a reference event it
 * records on a private non-blocking stream of the same context and waits
 * for (at most 2 ms, never on the application's streams); without timing,
 * CU_EVENT_DISABLE_TIMING and the time of the poll that saw them.  No events
 * are recorded on a capturing stream (CUDA graphs).
 */
#include <dlfcn.h>
#include <sched.h>
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
  if (!p_cuEventElapsedTime_v2) /* a driver older than CUDA 12.8: the same call */
    p_cuEventElapsedTime_v2 = (cuEventElapsedTime_v2_fn)dlsym(h, "cuEventElapsedTime");
  if (!p_cuEventCreate || !p_cuEventRecord || !p_cuEventQuery || !p_cuCtxGetCurrent) return -1;
  atomic_store_explicit(&cuda_ok, 1, memory_order_release);
  return 0;
}

int fr_cuda_available(void) { return atomic_load_explicit(&cuda_ok, memory_order_acquire); }

/* Are GPU-side times possible (FR_GPU_TIMING, and the calls they need)? */
static int timing(void) {
  return fr_g.cfg.gpu_timing && p_cuEventElapsedTime_v2 && p_cuCtxSetCurrent && p_cuStreamCreate;
}

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
  unsigned flags = timing() ? CU_EVENT_DEFAULT : CU_EVENT_DISABLE_TIMING;
  if (p_cuEventCreate(&s->ev[0], flags) != CUDA_SUCCESS) return -1;
  if (p_cuEventCreate(&s->ev[1], flags) != CUDA_SUCCESS) {
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

/* ---- GPU-side times ------------------------------------------------------- */

#define GPU_CTX_MAX 16      /* contexts (devices) with a reference; more: poll times */
#define REF_WAIT_NS 2000000 /* at most this long for a reference event to pass */
#define REF_SLACK_NS 100000 /* a reference seen later than this after its record is too
                               loose a bound (the thread was descheduled): none this scan */

typedef struct gpu_ref {
  CUcontext ctx;
  CUstream stream;          /* private, non-blocking: never waits for the job's work */
  CUevent ev;               /* the reference, recorded anew once per scan */
  uint64_t t_ns;            /* host time it passed (midpoint of record..seen); 0 unknown */
  uint64_t scan;            /* the scan it was recorded for */
  int broken;               /* a call failed: poll times in this context */
} gpu_ref;

static gpu_ref refs[GPU_CTX_MAX]; /* the watchdog thread's alone */
static int nrefs;

/* The reference of ctx, recorded for this scan (after every event the scan
 * has seen passed so far); NULL when there is none. */
static gpu_ref *reference(CUcontext ctx, uint64_t scan) {
  gpu_ref *r = NULL;
  for (int i = 0; i < nrefs && !r; i++)
    if (refs[i].ctx == ctx) r = &refs[i];
  if (!r) {
    if (nrefs == GPU_CTX_MAX) return NULL;
    r = &refs[nrefs++];
    r->ctx = ctx;
  }
  if (r->broken) return NULL;
  if (r->scan == scan) return r->t_ns ? r : NULL;
  r->scan = scan;
  r->t_ns = 0;
  if (p_cuCtxSetCurrent(ctx) != CUDA_SUCCESS) { /* this thread's own current context */
    r->broken = 1;
    return NULL;
  }
  if (!r->stream && (p_cuStreamCreate(&r->stream, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS ||
                     p_cuEventCreate(&r->ev, CU_EVENT_DEFAULT) != CUDA_SUCCESS)) {
    r->broken = 1;
    return NULL;
  }
  uint64_t t0 = fr_now_ns(), t1 = t0;
  if (p_cuEventRecord(r->ev, r->stream) != CUDA_SUCCESS) return NULL;
  CUresult q;
  while ((q = p_cuEventQuery(r->ev)) == CUDA_ERROR_NOT_READY && (t1 = fr_now_ns()) - t0 < REF_WAIT_NS)
    sched_yield();
  if (q != CUDA_SUCCESS) return NULL; /* the GPU did not get to it in time: poll times */
  t1 = fr_now_ns();
  if (t1 - t0 > REF_SLACK_NS) return NULL;
  r->t_ns = t0 + (t1 - t0) / 2;
  return r;
}

uint64_t fr_cuda_gpu_time(fr_slot *s, int which, uint64_t scan) {
  if (!timing() || !s->ev_ctx || !s->ev[which]) return 0;
  gpu_ref *r = reference(s->ev_ctx, scan);
  if (!r) return 0;
  float ms = 0; /* how long before the reference the GPU passed the event */
  if (p_cuEventElapsedTime_v2(&ms, s->ev[which], r->ev) != CUDA_SUCCESS) return 0;
  double t = (double)r->t_ns - (double)ms * 1e6;
  return t > 0 ? (uint64_t)t : 0;
}
