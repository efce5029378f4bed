/* hip_events.c — completion tracking with HIP runtime events (device.h),
 * for RCCL on ROCm.
 *
 * The HIP runtime (libamdhip64.so.N) is never linked: the one already
 * loaded (RCCL and PyTorch load it) is used, else one is dlopen()ed.  As
 * with CUDA, each ring slot owns a start and an end event, created on first
 * use on the calling thread's current device (hipGetDevice: the HIP runtime
 * has devices, not contexts to make current) and reused with the slot;
 * the watchdog asks hipEventQuery.  GPU-side times: timing events
 * (hipEventDefault) and hipEventElapsedTime to a reference event recorded
 * on a private hipStreamNonBlocking stream of the same device (device.c);
 * without FR_GPU_TIMING, hipEventDisableTiming and poll times.  No events on
 * a stream being captured into a HIP graph (hipStreamIsCapturing).
 * Without a device (hipGetDeviceCount fails or finds none) nothing is
 * tracked and calls pass through.
 */
#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "fr_hip.h"
#include "recorder.h"

#define HIP_FN_(sym, params) typedef hipError_t(*sym##_fn) params; static sym##_fn p_##sym;
FR_HIP_API(HIP_FN_)

static _Atomic int hip_ok; /* set (release) once the pointers above are resolved */

static const char *const sonames[] = {"libamdhip64.so.7", "libamdhip64.so.6", "libamdhip64.so.5",
                                      "libamdhip64.so"};
#define NSONAMES (sizeof sonames / sizeof *sonames)

int fr_hip_init(char *why, size_t len) {
  void *h = NULL;
  const char *name = NULL;
  for (size_t i = 0; i < NSONAMES && !h; i++) h = dlopen(name = sonames[i], RTLD_NOW | RTLD_GLOBAL | RTLD_NOLOAD);
  for (size_t i = 0; i < NSONAMES && !h; i++) h = dlopen(name = sonames[i], RTLD_NOW | RTLD_GLOBAL);
  if (!h) {
    snprintf(why, len, "no HIP runtime (libamdhip64.so) to load");
    return -1;
  }
#define HIP_LOAD_(sym, params) p_##sym = (sym##_fn)dlsym(h, #sym);
  FR_HIP_API(HIP_LOAD_)
  if (!p_hipGetDeviceCount || !p_hipGetDevice || !p_hipEventCreateWithFlags || !p_hipEventRecord ||
      !p_hipEventQuery) {
    snprintf(why, len, "HIP runtime %s lacks the event calls", name);
    return -1;
  }
  int n = 0;
  hipError_t e = p_hipGetDeviceCount(&n);
  if (e != hipSuccess || n <= 0) {
    snprintf(why, len, "HIP runtime %s sees no GPU (hipGetDeviceCount: error %d, %d devices)", name, (int)e, n);
    return -1;
  }
  atomic_store_explicit(&hip_ok, 1, memory_order_release);
  return 0;
}

static int available(void) { return atomic_load_explicit(&hip_ok, memory_order_acquire); }

static int timing(void) {
  return fr_g.cfg.gpu_timing && p_hipEventElapsedTime && p_hipSetDevice && p_hipStreamCreateWithFlags;
}

static int capturing(cudaStream_t stream) {
  hipStreamCaptureStatus st = hipStreamCaptureStatusNone;
  if (!available() || !p_hipStreamIsCapturing) return 0;
  if (p_hipStreamIsCapturing((hipStream_t)stream, &st) != hipSuccess) return 0;
  return st != hipStreamCaptureStatusNone;
}

/* The slot's events on the current device: its number + 1 is their key. */
static int ensure_events(fr_slot *s) {
  int dev = -1;
  if (p_hipGetDevice(&dev) != hipSuccess || dev < 0) return -1;
  void *key = (void *)(uintptr_t)((unsigned)dev + 1u);
  if (s->ev[0] && s->ev_ctx == key) return 0;
  if (s->ev[0] && p_hipEventDestroy) {
    p_hipEventDestroy((hipEvent_t)s->ev[0]);
    p_hipEventDestroy((hipEvent_t)s->ev[1]);
  }
  s->ev[0] = s->ev[1] = NULL;
  unsigned flags = timing() ? hipEventDefault : hipEventDisableTiming;
  hipEvent_t e0 = NULL, e1 = NULL;
  if (p_hipEventCreateWithFlags(&e0, flags) != hipSuccess) return -1;
  if (p_hipEventCreateWithFlags(&e1, flags) != hipSuccess) {
    if (p_hipEventDestroy) p_hipEventDestroy(e0);
    return -1;
  }
  s->ev[0] = e0;
  s->ev[1] = e1;
  s->ev_ctx = key;
  return 0;
}

static int mark(fr_slot *s, int which, cudaStream_t stream) {
  if (!available()) return -1;
  if (which == 0) {
    atomic_store_explicit(&s->ev_armed, 0, memory_order_relaxed);
    if (ensure_events(s) != 0) return -1;
  } else if (!s->ev[1]) {
    return -1;
  }
  if (p_hipEventRecord((hipEvent_t)s->ev[which], (hipStream_t)stream) != hipSuccess) return -1;
  atomic_fetch_or_explicit(&s->ev_armed, (uint8_t)(1u << which), memory_order_release);
  return 0;
}

static int passed(fr_slot *s, int which) {
  if (!(atomic_load_explicit(&s->ev_armed, memory_order_acquire) & (1u << which))) return -1;
  hipError_t r = p_hipEventQuery((hipEvent_t)s->ev[which]);
  return r == hipSuccess ? 1 : r == hipErrorNotReady ? 0 : -1;
}

/* ---- GPU-side times: the reference of a device (device.c) ----------------- */

static int ref_enter(void *key) {
  return p_hipSetDevice((int)((uintptr_t)key - 1u)) == hipSuccess ? 0 : -1;
}
static int ref_create(void **stream, void **ev) {
  hipStream_t st = NULL;
  hipEvent_t e = NULL;
  if (p_hipStreamCreateWithFlags(&st, hipStreamNonBlocking) != hipSuccess) return -1;
  *stream = st;
  if (p_hipEventCreateWithFlags(&e, hipEventDefault) != hipSuccess) return -1;
  *ev = e;
  return 0;
}
static int ref_record(void *ev, void *stream) {
  return p_hipEventRecord((hipEvent_t)ev, (hipStream_t)stream) == hipSuccess ? 0 : -1;
}
static int ref_query(void *ev) {
  hipError_t q = p_hipEventQuery((hipEvent_t)ev);
  return q == hipSuccess ? 1 : q == hipErrorNotReady ? 0 : -1;
}
static const fr_gpu_ref_ops ref_ops = {ref_enter, ref_create, ref_record, ref_query};
static fr_gpu_refs refs;

static uint64_t gpu_time(fr_slot *s, int which, uint64_t scan) {
  if (!timing() || !s->ev_ctx || !s->ev[which]) return 0;
  fr_gpu_ref *r = fr_gpu_reference(&refs, &ref_ops, s->ev_ctx, scan);
  if (!r) return 0;
  float ms = 0; /* how long before the reference the GPU passed the event */
  if (p_hipEventElapsedTime(&ms, (hipEvent_t)s->ev[which], (hipEvent_t)r->ev) != hipSuccess) return 0;
  return fr_gpu_time_before(r, ms);
}

const fr_device fr_device_hip = {"HIP", capturing, mark, passed, gpu_time};
