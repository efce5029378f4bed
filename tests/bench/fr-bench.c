/* fr-bench — timing of intercepted calls and peak memory, for `make bench`
 * (tests/bench/run-bench.sh runs it with and without the recorder).
 *
 *   fr-bench calls OP ITERS REPS
 *       OP is AllReduce or Send.  REPS times: ITERS calls of ncclOP (the
 *       recorder's wrapper when librecorder.so is preloaded, else NCCL's weak
 *       alias) and ITERS calls of pncclOP (straight into NCCL, never
 *       recorded), alternating which goes first.  Prints
 *       "calls op=OP recorder=0|1 wrapped_med=NS wrapped_min=NS direct_med=NS direct_min=NS"
 *       (nanoseconds per call; median and minimum over the repetitions).
 *   fr-bench clock ITERS REPS
 *       REPS times ITERS reads of clock_gettime(CLOCK_MONOTONIC), the clock
 *       the recorder reads once per call; prints
 *       "clock med=NS min=NS" (nanoseconds per read), so that the added
 *       cost of a call reads as a ratio on any machine.
 *   fr-bench graph NOPS ITERS REPS
 *       NOPS ncclAllReduce calls captured into one CUDA graph (stream
 *       capture), instantiated once; then REPS times ITERS launches of it
 *       through cuGraphLaunch (the recorder's when preloaded: NOPS records
 *       per launch) and ITERS through the driver's own cuGraphLaunch (looked
 *       up in libcuda.so.1 itself, never recorded), alternating.  Prints
 *       "graph nops=N recorder=0|1 wrapped_med=NS wrapped_min=NS direct_med=NS
 *       direct_min=NS" (nanoseconds per launch).
 *   fr-bench rss NOPS [DUMPDIR]
 *       the benchmark job's NOPS calls at full speed; with DUMPDIR (recorder
 *       preloaded) one dump on top; prints "rss peak_kib=N".
 *
 * NCCL is tests/bench's fake libnccl.so.2 (every call returns at once); the
 * streams are the simulator's (tests/sim libcuda.so.1), whose events the
 * recorder uses when FR_TRACK_COMPLETION=1.
 */
#include "config.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"

typedef ncclResult_t (*allreduce_fn)(const void *, void *, size_t, ncclDataType_t, ncclRedOp_t,
                                     ncclComm_t, cudaStream_t);
typedef ncclResult_t (*send_fn)(const void *, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t);

/* ITERS calls through `ar` or `sd`; ns per call.  The function pointers are
 * the PLT-bound addresses, as an application calls them. */
static double time_calls(struct bench_job *j, allreduce_fn ar, send_fn sd, long iters)
{
  void *b = j->buf;
  uint64_t t0 = bench_now_ns();
  if (ar) {
    for (long i = 0; i < iters; i++)
      ar(b, b, 1048576, ncclBfloat16, ncclSum, j->tp, j->comm);
  } else {
    for (long i = 0; i < iters; i++)
      sd(b, 1048576, ncclBfloat16, 1, j->pp, j->comm);
  }
  uint64_t t1 = bench_now_ns();
  bench_job_sync(j);           /* drain the events, if any, outside the timing */
  return (double)(t1 - t0) / (double)iters;
}

static int cmd_calls(const char *op, long iters, int reps)
{
  int is_send = strcmp(op, "Send") == 0;
  if (!is_send && strcmp(op, "AllReduce") != 0) {
    fprintf(stderr, "fr-bench: unknown op %s (AllReduce or Send)\n", op);
    return 2;
  }
  struct bench_job j;
  if (bench_job_init(&j, 42) != 0)
    return 1;
  allreduce_fn war = is_send ? NULL : ncclAllReduce, dar = is_send ? NULL : pncclAllReduce;
  send_fn wsd = is_send ? ncclSend : NULL, dsd = is_send ? pncclSend : NULL;
  double *w = calloc((size_t)reps, sizeof *w), *d = calloc((size_t)reps, sizeof *d);
  if (!w || !d)
    return 1;
  time_calls(&j, war, wsd, iters / 10 + 1); /* warm up: bind, fault in, fill the ring once */
  time_calls(&j, dar, dsd, iters / 10 + 1);
  for (int r = 0; r < reps; r++) {
    if (r % 2 == 0) {
      w[r] = time_calls(&j, war, wsd, iters);
      d[r] = time_calls(&j, dar, dsd, iters);
    } else {
      d[r] = time_calls(&j, dar, dsd, iters);
      w[r] = time_calls(&j, war, wsd, iters);
    }
  }
  double wmin = bench_min(w, reps), dmin = bench_min(d, reps);
  printf("calls op=%s recorder=%d wrapped_med=%.2f wrapped_min=%.2f direct_med=%.2f direct_min=%.2f\n",
         op, bench_recorder_present(), bench_median(w, reps), wmin, bench_median(d, reps), dmin);
  free(w);
  free(d);
  bench_job_fini(&j);
  return 0;
}

static int cmd_rss(long nops, const char *dumpdir)
{
  struct bench_job j;
  if (bench_job_init(&j, 7) != 0)
    return 1;
  bench_job_run(&j, (uint64_t)nops, 0);
  bench_job_sync(&j);
  if (dumpdir) {
    char name[256];
    uint64_t ns;
    if (bench_dump_and_wait(dumpdir, 60000, name, sizeof name, &ns) != 0)
      return 1;
  }
  printf("rss peak_kib=%ld\n", bench_peak_rss_kib());
  bench_job_fini(&j);
  return 0;
}

static int cmd_clock(long iters, int reps)
{
  double *t = calloc((size_t)reps, sizeof *t), tmin = 0;
  if (!t) return 1;
  volatile uint64_t sink = 0;
  for (int r = 0; r < reps; r++) {
    uint64_t t0 = bench_now_ns();
    for (long i = 0; i < iters; i++) {
      struct timespec ts;
      clock_gettime(CLOCK_MONOTONIC, &ts);
      sink += (uint64_t)ts.tv_nsec;
    }
    t[r] = (double)(bench_now_ns() - t0) / (double)iters;
    if (r == 0 || t[r] < tmin) tmin = t[r];
  }
  (void)sink;
  printf("clock med=%.2f min=%.2f\n", bench_median(t, reps), tmin);
  free(t);
  return 0;
}

static long arg_long(const char *s, long lo, const char *what)
{
  char *end;
  long v = strtol(s, &end, 10);
  if (*end || v < lo) {
    fprintf(stderr, "fr-bench: bad %s '%s'\n", what, s);
    exit(2);
  }
  return v;
}

int main(int argc, char **argv)
{
  setvbuf(stdout, NULL, _IOLBF, 0);
  if (argc == 5 && strcmp(argv[1], "calls") == 0)
    return cmd_calls(argv[2], arg_long(argv[3], 1, "ITERS"), (int)arg_long(argv[4], 1, "REPS"));
  if (argc == 4 && strcmp(argv[1], "clock") == 0)
    return cmd_clock(arg_long(argv[2], 1, "ITERS"), (int)arg_long(argv[3], 1, "REPS"));
  if (argc == 5 && strcmp(argv[1], "graph") == 0)
    return bench_cmd_graph(arg_long(argv[2], 1, "NOPS"), arg_long(argv[3], 1, "ITERS"), (int)arg_long(argv[4], 1, "REPS"));
  if ((argc == 3 || argc == 4) && strcmp(argv[1], "rss") == 0)
    return cmd_rss(arg_long(argv[2], 1, "NOPS"), argc == 4 ? argv[3] : NULL);
  fprintf(stderr, "usage: fr-bench calls AllReduce|Send ITERS REPS\n"
                  "       fr-bench clock ITERS REPS\n"
                  "       fr-bench graph NOPS ITERS REPS\n"
                  "       fr-bench rss NOPS [DUMPDIR]\n");
  return 2;
}
