/* bench_graph.c — `fr-bench graph NOPS ITERS REPS` (fr-bench.c says what
 * it prints): the cost of a CUDA graph launch with NOPS captured NCCL calls,
 * through the recorder's cuGraphLaunch and the driver's own.  CUDA only: the
 * HIP build of fr-bench links bench_graph_none.c instead.
 */
#include "config.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench.h"
#include "sim.h"

typedef CUresult (*launch_fn)(CUgraphExec, CUstream);

static double time_launches(struct bench_job *j, launch_fn launch, CUgraphExec e, long iters)
{
  uint64_t t0 = bench_now_ns();
  for (long i = 0; i < iters; i++)
    launch(e, j->comm);
  uint64_t t1 = bench_now_ns();
  bench_job_sync(j);
  return (double)(t1 - t0) / (double)iters;
}

int bench_cmd_graph(long nops, long iters, int reps)
{
  struct bench_job j;
  if (bench_job_init(&j, 42) != 0)
    return 1;
  CUstream cap;
  CUgraph g;
  CUgraphExec e;
  if (cuStreamCreate(&cap, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS ||
      cuStreamBeginCapture_v2(cap, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL) != CUDA_SUCCESS)
    return 1;
  for (long k = 0; k < nops; k++)
    if (ncclAllReduce(j.buf, j.buf, 1048576, ncclBfloat16, ncclSum, j.tp, cap) != ncclSuccess)
      return 1;
  if (cuStreamEndCapture(cap, &g) != CUDA_SUCCESS || cuGraphInstantiateWithFlags(&e, g, 0) != CUDA_SUCCESS)
    return 1;
  void *h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
  launch_fn direct = h ? (launch_fn)dlsym(h, "cuGraphLaunch") : NULL, wrapped = cuGraphLaunch;
  if (!direct) {
    fprintf(stderr, "fr-bench: no cuGraphLaunch in libcuda.so.1\n");
    return 1;
  }
  double *w = calloc((size_t)reps, sizeof *w), *d = calloc((size_t)reps, sizeof *d);
  if (!w || !d)
    return 1;
  time_launches(&j, wrapped, e, iters / 10 + 1); /* warm up */
  time_launches(&j, direct, e, iters / 10 + 1);
  for (int r = 0; r < reps; r++) {
    if (r % 2 == 0) {
      w[r] = time_launches(&j, wrapped, e, iters);
      d[r] = time_launches(&j, direct, e, iters);
    } else {
      d[r] = time_launches(&j, direct, e, iters);
      w[r] = time_launches(&j, wrapped, e, iters);
    }
  }
  double wmin = bench_min(w, reps), dmin = bench_min(d, reps);
  printf("graph nops=%ld recorder=%d wrapped_med=%.2f wrapped_min=%.2f direct_med=%.2f direct_min=%.2f\n", nops,
         bench_recorder_present(), bench_median(w, reps), wmin, bench_median(d, reps), dmin);
  free(w);
  free(d);
  cuGraphExecDestroy(e);
  cuGraphDestroy(g);
  cuStreamDestroy_v2(cap);
  if (h)
    dlclose(h);
  bench_job_fini(&j);
  return 0;
}
