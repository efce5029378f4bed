/* device.h — the device layer: when the GPU started and finished an op,
 * from events of the runtime the process uses.
 *
 * Two implementations: cuda_events.c (CUDA driver events, libcuda.so.1;
 * NCCL) and hip_events.c (HIP runtime events, libamdhip64.so.N; RCCL, which
 * keeps NCCL's API and takes a hipStream_t where NCCL takes a cudaStream_t:
 * both are an opaque pointer, passed here as cudaStream_t).  device.c picks
 * one at the first communicator (fr_device_init) and publishes it; the
 * wrappers and the watchdog only call through the published table.
 *
 * Events live in the ring slots (fr_slot.ev, ev_ctx), created lazily by the
 * implementation that made the record and reused with the slot.
 */
#ifndef FR_DEVICE_H
#define FR_DEVICE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "fr_nccl.h"
#include "ring.h"

typedef struct fr_device {
  const char *name;  /* "CUDA", "HIP": the runtime, for messages */
  /* Is `stream` being captured into a graph?  1 yes, 0 no/unknown. */
  int (*capturing)(cudaStream_t stream);
  /* Record the slot's start (which=0) or end (1) event on `stream`.  0 ok. */
  int (*mark)(fr_slot *s, int which, cudaStream_t stream);
  /* Query the slot's event: 1 passed, 0 not yet, -1 error or not recorded. */
  int (*passed)(fr_slot *s, int which);
  /* When the GPU passed event `which` of s (already seen passed), in
   * CLOCK_MONOTONIC ns: its elapsed time to a reference event recorded on a
   * private stream of its device once per scan number `scan`, whose host
   * time is known to a few microseconds.  0 when unknown (timing off, no
   * reference in time, a runtime error).  Watchdog thread only. */
  uint64_t (*gpu_time)(fr_slot *s, int which, uint64_t scan);
} fr_device;

/* The implementations.  init: open the runtime's library (already loaded,
 * or dlopen) and resolve its calls; 0 ok, else -1 with one line in `why`. */
__attribute__((visibility("hidden"))) extern const fr_device fr_device_cuda, fr_device_hip;
__attribute__((visibility("hidden"))) int fr_cuda_init(char *why, size_t len);
__attribute__((visibility("hidden"))) int fr_hip_init(char *why, size_t len);

/* Pick the runtime (first communicator, once): HIP when the NCCL in use is
 * RCCL or when only libamdhip64 is loaded, else CUDA; open it and publish
 * it.  When it cannot be used, one message says that completion is not
 * tracked, and fr_device_active() stays NULL. */
__attribute__((visibility("hidden"))) void fr_device_init(void);

/* The published implementation; NULL: none (completion not tracked). */
__attribute__((visibility("hidden"))) extern const fr_device *_Atomic fr_device_current;
static inline const fr_device *fr_device_active(void) {
  return atomic_load_explicit(&fr_device_current, memory_order_acquire);
}

/* ---- GPU-side times, shared by both implementations ------------------- */
/* One reference event per device context, on a private non-blocking stream
 * (never waits for the job's work), recorded anew once per scan. */
#define FR_GPU_CTX_MAX 16 /* contexts (devices) with a reference; more: poll times */
typedef struct fr_gpu_ref {
  void *ctx;                /* the implementation's context key (ev_ctx) */
  void *stream, *ev;        /* the private stream and the reference event */
  uint64_t t_ns;            /* host time it passed (midpoint of record..seen); 0 unknown */
  uint64_t scan;            /* the scan it was recorded for */
  int broken;               /* a call failed: poll times in this context */
} fr_gpu_ref;
typedef struct fr_gpu_refs {
  fr_gpu_ref ref[FR_GPU_CTX_MAX]; /* the watchdog thread's alone */
  int n;
} fr_gpu_refs;
/* What the reference needs from a runtime: make ctx current on this thread,
 * create the private stream and event, record, query (1 passed, 0 not yet,
 * -1 error).  Each returns 0 on success unless said. */
typedef struct fr_gpu_ref_ops {
  int (*enter)(void *ctx);
  int (*create)(void **stream, void **ev);
  int (*record)(void *ev, void *stream);
  int (*query)(void *ev);
} fr_gpu_ref_ops;
/* The reference of ctx recorded for this scan (after every event the scan
 * has seen passed so far); NULL when there is none. */
/* The CLOCK_MONOTONIC ns at which the GPU passed an event `ms` milliseconds
 * (the runtime's elapsed time, event to reference) before reference r; 0
 * when that would be before the clock's start. */
__attribute__((visibility("hidden"))) uint64_t fr_gpu_time_before(const fr_gpu_ref *r, float ms);
__attribute__((visibility("hidden"))) fr_gpu_ref *fr_gpu_reference(fr_gpu_refs *refs, const fr_gpu_ref_ops *ops,
                                                                    void *ctx, uint64_t scan);

#endif /* FR_DEVICE_H */
