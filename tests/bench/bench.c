/* bench.c — shared parts of the recorder benchmarks; see bench.h. */
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

#define WORLD 8
#define MY_RANK 5
#define TP 2
#define PP 4
#define LAYERS 6                 /* transformer layers of this pipeline stage */
#define BUF_BYTES (1u << 16)     /* never touched by the fake NCCL */

uint64_t bench_now_ns(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

double bench_median(double *v, int n)
{
  if (n <= 0)
    return 0;
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double bench_min(const double *v, int n)
{
  double m = n > 0 ? v[0] : 0;
  for (int i = 1; i < n; i++)
    if (v[i] < m)
      m = v[i];
  return m;
}

long bench_peak_rss_kib(void)
{
  FILE *f = fopen("/proc/self/status", "r");
  if (!f)
    return -1;
  char line[256];
  long kib = -1;
  while (fgets(line, sizeof line, f))
    if (sscanf(line, "VmHWM: %ld kB", &kib) == 1)
      break;
  fclose(f);
  return kib;
}

int bench_recorder_present(void)
{
  void *wrapped = dlsym(RTLD_DEFAULT, "ncclAllReduce");
  void *real = dlsym(RTLD_DEFAULT, "pncclAllReduce");
  return wrapped && real && wrapped != real;
}

static uint64_t next_rand(struct bench_job *j)
{
  j->rng ^= j->rng << 13;
  j->rng ^= j->rng >> 7;
  j->rng ^= j->rng << 17;
  return j->rng;
}

static int new_comm(ncclComm_t *comm, int nranks, int rank, const char *what)
{
  ncclUniqueId id;
  ncclResult_t r = ncclGetUniqueId(&id);
  if (r == ncclSuccess)
    r = ncclCommInitRank(comm, nranks, id, rank);
  if (r != ncclSuccess) {
    fprintf(stderr, "fr-bench: cannot create the %s communicator (NCCL error %d)\n", what, (int)r);
    return -1;
  }
  return 0;
}

int bench_job_init(struct bench_job *j, uint64_t seed)
{
  memset(j, 0, sizeof *j);
  j->rng = seed | 1;
  if (cuInit(0) != CUDA_SUCCESS || cuStreamCreate(&j->compute, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS ||
      cuStreamCreate(&j->comm, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS) {
    fprintf(stderr, "fr-bench: cannot create CUDA streams\n");
    return -1;
  }
  j->buf = calloc(1, BUF_BYTES);
  if (!j->buf)
    return -1;
  if (new_comm(&j->world, WORLD, MY_RANK, "world") || new_comm(&j->tp, TP, MY_RANK % TP, "tensor-parallel") ||
      new_comm(&j->pp, PP, MY_RANK / TP % PP, "pipeline"))
    return -1;
  return 0;
}

/* Busy-waits (short) or sleeps (long) for a compute phase of varied length:
 * 3/4 of the gaps 3-40 us, most of the rest 40-300 us, 1 in 100 1-2 ms. */
static void compute_gap(struct bench_job *j)
{
  uint64_t r = next_rand(j);
  unsigned pick = (unsigned)(r % 100);
  uint64_t ns;
  if (pick < 75)
    ns = 3000 + (r >> 8) % 37000;
  else if (pick < 99)
    ns = 40000 + (r >> 8) % 260000;
  else
    ns = 1000000 + (r >> 8) % 1000000;
  if (ns >= 1000000) {
    struct timespec ts = {0, (long)ns};
    nanosleep(&ts, NULL);
    return;
  }
  uint64_t until = bench_now_ns() + ns;
  while (bench_now_ns() < until) {
  }
}

/* One step of this rank's work: receive activations from the previous
 * stage, tensor-parallel all-reduces and gathers per layer, send to the
 * next stage; the backward pass mirrored with reduce-scatters; data-parallel
 * gradient buckets; now and then a broadcast and a reduce of the loss. */
static uint64_t job_step(struct bench_job *j, uint64_t step, int with_gaps)
{
  uint64_t n = 0;
  char *b = j->buf;
  size_t seqlen = 2048u << (step % 3 == 2);             /* packed batches vary */
  size_t act = seqlen * 4096 / TP;                      /* activation elements */
  int me = MY_RANK / TP % PP, prev = (me + PP - 1) % PP, next = (me + 1) % PP;
#define GAP() do { if (with_gaps) compute_gap(j); } while (0)

  ncclGroupStart();
  ncclRecv(b, act, ncclBfloat16, prev, j->pp, j->comm);
  n++;
  ncclGroupEnd();
  for (int l = 0; l < LAYERS; l++) {
    GAP();
    ncclAllReduce(b, b, act, ncclBfloat16, ncclSum, j->tp, j->compute);
    GAP();
    ncclAllGather(b, b, act / 4, ncclBfloat16, j->tp, j->compute);
    n += 2;
  }
  GAP();
  ncclGroupStart();
  ncclSend(b, act, ncclBfloat16, next, j->pp, j->comm);
  n++;
  ncclGroupEnd();
  GAP();
  ncclGroupStart();
  ncclRecv(b, act, ncclBfloat16, next, j->pp, j->comm);
  n++;
  ncclGroupEnd();
  for (int l = LAYERS - 1; l >= 0; l--) {
    GAP();
    ncclReduceScatter(b, b, act / 4, ncclBfloat16, ncclSum, j->tp, j->compute);
    GAP();
    ncclAllReduce(b, b, act, ncclBfloat16, ncclSum, j->tp, j->compute);
    n += 2;
  }
  GAP();
  ncclGroupStart();
  ncclSend(b, act, ncclBfloat16, prev, j->pp, j->comm);
  n++;
  ncclGroupEnd();
  static const size_t bucket[] = {6553600, 6553600, 6553600, 1843200};
  for (size_t k = 0; k < sizeof bucket / sizeof bucket[0]; k++) {
    GAP();
    ncclAllReduce(b, b, bucket[k], ncclFloat32, ncclAvg, j->world, j->comm);
    n++;
  }
  if (step % 8 == 0) {
    GAP();
    ncclReduce(b, b, 1, ncclFloat32, ncclMax, 0, j->world, j->comm);
    GAP();
    ncclBroadcast(b, b, 2, ncclInt64, 0, j->world, j->comm);
    n += 2;
  }
#undef GAP
  return n;
}

void bench_job_run(struct bench_job *j, uint64_t nops, int with_gaps)
{
  uint64_t done = 0;
  for (uint64_t step = 0; done < nops; step++)
    done += job_step(j, step, with_gaps);
}

void bench_job_sync(struct bench_job *j)
{
  cuStreamSynchronize(j->compute);
  cuStreamSynchronize(j->comm);
}

void bench_job_fini(struct bench_job *j)
{
  bench_job_sync(j);
  if (j->world)
    ncclCommDestroy(j->world);
  if (j->tp)
    ncclCommDestroy(j->tp);
  if (j->pp)
    ncclCommDestroy(j->pp);
  cuStreamDestroy_v2(j->compute);
  cuStreamDestroy_v2(j->comm);
  free(j->buf);
}

int bench_dump_and_wait(const char *dir, int timeout_ms, char *name, size_t namelen,
                        uint64_t *elapsed_ns)
{
  struct sigaction sa;
  if (sigaction(SIGUSR2, NULL, &sa) != 0 || sa.sa_handler == SIG_DFL || sa.sa_handler == SIG_IGN) {
    fprintf(stderr, "fr-bench: no recorder handles SIGUSR2 (is librecorder.so preloaded?)\n");
    return -1;
  }
  int fd = inotify_init1(IN_CLOEXEC);
  if (fd < 0 || inotify_add_watch(fd, dir, IN_MOVED_TO) < 0) {
    fprintf(stderr, "fr-bench: cannot watch %s: %s\n", dir, strerror(errno));
    if (fd >= 0)
      close(fd);
    return -1;
  }
  uint64_t t0 = bench_now_ns();
  kill(getpid(), SIGUSR2);
  int rc = -1;
  uint64_t deadline = t0 + (uint64_t)timeout_ms * 1000000ull;
  char ev[sizeof(struct inotify_event) + NAME_MAX + 1] __attribute__((aligned(8)));
  while (rc != 0) {
    uint64_t now = bench_now_ns();
    if (now >= deadline) {
      fprintf(stderr, "fr-bench: no dump in %s after %d ms\n", dir, timeout_ms);
      break;
    }
    struct pollfd p = {fd, POLLIN, 0};
    int left = (int)((deadline - now) / 1000000ull) + 1;
    if (poll(&p, 1, left) <= 0)
      continue;
    ssize_t got = read(fd, ev, sizeof ev);
    uint64_t t1 = bench_now_ns();
    for (ssize_t off = 0; got > 0 && off < got;) {
      const struct inotify_event *e = (const struct inotify_event *)(ev + off);
      size_t len = e->len ? strlen(e->name) : 0;
      if (len > 4 && e->name[0] != '.' && strcmp(e->name + len - 4, ".frz") == 0) {
        snprintf(name, namelen, "%s", e->name);
        *elapsed_ns = t1 - t0;
        rc = 0;
        break;
      }
      off += (ssize_t)(sizeof *e + e->len);
    }
  }
  close(fd);
  return rc;
}
