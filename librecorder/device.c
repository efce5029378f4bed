/* device.c — picks the runtime whose events track completion (device.h),
 * and the GPU-side time reference both implementations share. */
#include <dlfcn.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>

#include "recorder.h"

const fr_device *_Atomic fr_device_current;

/* The HIP runtime's sonames, newest first (ROCm 7, 6, 5; the unversioned
 * development link last). */
static const char *const hip_sonames[] = {"libamdhip64.so.7", "libamdhip64.so.6", "libamdhip64.so.5",
                                          "libamdhip64.so"};

static int is_loaded(const char *soname) {
  void *h = dlopen(soname, RTLD_LAZY | RTLD_NOLOAD);
  if (h) dlclose(h);
  return h != NULL;
}

/* Is the NCCL these wrappers call RCCL (its file is librccl*)? */
static int nccl_is_rccl(void) {
  void *f = fr_resolve("pncclGetVersion", "ncclGetVersion");
  Dl_info info;
  if (!f || !dladdr(f, &info) || !info.dli_fname) return 0;
  const char *base = strrchr(info.dli_fname, '/');
  base = base ? base + 1 : info.dli_fname;
  return strncmp(base, "librccl", 7) == 0;
}

void fr_device_init(void) {
  int hip_loaded = 0;
  for (size_t i = 0; i < sizeof hip_sonames / sizeof *hip_sonames && !hip_loaded; i++)
    hip_loaded = is_loaded(hip_sonames[i]);
  /* RCCL runs on HIP; a process with only the HIP runtime loaded is a ROCm
   * one; anything else keeps the CUDA driver (loaded or not yet) */
  int hip = nccl_is_rccl() || (hip_loaded && !is_loaded("libcuda.so.1"));
  const fr_device *d = hip ? &fr_device_hip : &fr_device_cuda;
  char why[256] = "";
  if ((hip ? fr_hip_init(why, sizeof why) : fr_cuda_init(why, sizeof why)) != 0) {
    fr_log("%s: completion is not tracked, ops stay 'enqueued'", why);
    return;
  }
  atomic_store_explicit(&fr_device_current, d, memory_order_release);
}

/* ---- GPU-side times ------------------------------------------------------- */

#define REF_WAIT_NS 2000000 /* at most this long for a reference event to pass */
#define REF_SLACK_NS 100000 /* a reference seen later than this after its record is too
                               loose a bound (the thread was descheduled): none this scan */

uint64_t fr_gpu_time_before(const fr_gpu_ref *r, float ms) {
  double t = (double)r->t_ns - (double)ms * 1e6;
  return t > 0 ? (uint64_t)t : 0;
}

fr_gpu_ref *fr_gpu_reference(fr_gpu_refs *refs, const fr_gpu_ref_ops *ops, void *ctx, uint64_t scan) {
  fr_gpu_ref *r = NULL;
  for (int i = 0; i < refs->n && !r; i++)
    if (refs->ref[i].ctx == ctx) r = &refs->ref[i];
  if (!r) {
    if (refs->n == FR_GPU_CTX_MAX) return NULL;
    r = &refs->ref[refs->n++];
    r->ctx = ctx;
  }
  if (r->broken) return NULL;
  if (r->scan == scan) return r->t_ns ? r : NULL;
  r->scan = scan;
  r->t_ns = 0;
  if (ops->enter(ctx) != 0) { /* this thread's own current context or device */
    r->broken = 1;
    return NULL;
  }
  if (!r->stream && ops->create(&r->stream, &r->ev) != 0) {
    r->broken = 1;
    return NULL;
  }
  uint64_t t0 = fr_now_ns(), t1 = t0;
  if (ops->record(r->ev, r->stream) != 0) return NULL;
  int q;
  while ((q = ops->query(r->ev)) == 0 && (t1 = fr_now_ns()) - t0 < REF_WAIT_NS) sched_yield();
  if (q != 1) return NULL; /* the GPU did not get to it in time: poll times */
  t1 = fr_now_ns();
  if (t1 - t0 > REF_SLACK_NS) return NULL;
  r->t_ns = t0 + (t1 - t0) / 2;
  return r;
}
