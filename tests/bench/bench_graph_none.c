/* bench_graph_none.c — `fr-bench graph` in the HIP build of fr-bench
 * (fr-bench-hip): the simulator's HIP stand-in has no graphs and the
 * recorder follows CUDA graphs only.
 */
#include "config.h"

#include <stdio.h>

#include "bench.h"

int bench_cmd_graph(long nops, long iters, int reps)
{
  (void)nops;
  (void)iters;
  (void)reps;
  fprintf(stderr, "fr-bench: graph runs on the CUDA build only (fr-bench)\n");
  return 2;
}
