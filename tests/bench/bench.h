/* bench.h — shared parts of the recorder benchmarks (tests/bench):
 * a small 3-D parallel "training job" on the benchmarks' NCCL
 * (fake_nccl.c) and the simulator's CUDA streams, statistics, peak memory,
 * and triggering a dump and waiting for its file.
 */
#ifndef FR_BENCH_H
#define FR_BENCH_H

#include <stddef.h>
#include <stdint.h>

#include "fr_cuda.h"
#include "fr_nccl.h"

/* The job's communicators and streams: data parallel over the world (8
 * ranks), tensor parallel pairs, a 4-stage pipeline; compute and
 * communication streams.  This process is world rank 5. */
struct bench_job {
  ncclComm_t world, tp, pp;
  CUstream compute, comm;
  void *buf;                    /* host memory standing in for device buffers */
  uint64_t rng;
};

/* Creates the streams and the communicators (through ncclCommInitRank, so a
 * preloaded recorder registers them).  0 ok, else a message on stderr. */
int bench_job_init(struct bench_job *j, uint64_t seed);
/* Issues at least `nops` recorded NCCL calls (collectives, p2p in groups),
 * training-step shaped; with_gaps: wait a varied compute time between calls
 * (mostly tens of microseconds, now and then a few milliseconds). */
void bench_job_run(struct bench_job *j, uint64_t nops, int with_gaps);
/* Waits until both streams are idle. */
void bench_job_sync(struct bench_job *j);
void bench_job_fini(struct bench_job *j);

uint64_t bench_now_ns(void);
/* Median of v[0..n) (sorts v) and minimum. */
double bench_median(double *v, int n);
double bench_min(const double *v, int n);
/* Peak resident set (VmHWM) of this process in KiB; -1 when unknown. */
long bench_peak_rss_kib(void);
/* Is a recorder interposed on ncclAllReduce (LD_PRELOAD)? */
int bench_recorder_present(void);

/* Sends this process the recorder's dump signal (FR_DUMP_SIGNAL, SIGUSR2
 * here) and waits up to timeout_ms for a dump file to be renamed into `dir`
 * (inotify IN_MOVED_TO: the recorder writes a temporary file, fsyncs and
 * renames it).  On success returns 0 with the file's name and the time from
 * the signal to the rename in *elapsed_ns; -1 with a message on stderr. */
int bench_dump_and_wait(const char *dir, int timeout_ms, char *name, size_t namelen,
                        uint64_t *elapsed_ns);

/* `fr-bench graph NOPS ITERS REPS` (bench_graph.c; bench_graph_none.c in the
 * HIP build): 0 ok, else the exit status. */
int bench_cmd_graph(long nops, long iters, int reps);

#endif /* FR_BENCH_H */
