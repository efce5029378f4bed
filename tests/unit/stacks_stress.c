/* stacks_stress.c — the thread-stack collection under stress (run by
 * tests/e2e/stacks-stress.sh with librecorder.so preloaded on the simulator).
 *
 *   stacks-stress DUMPS
 *
 * Starts many threads of every awkward kind — busy loops that never enter
 * the kernel, threads blocked in read(2) on an empty pipe, threads that
 * block every signal, sleepers, threads inside NCCL calls on their own
 * communicators, and a churn of threads that start and exit all the time —
 * then asks for DUMPS dumps one after the other (FR_DUMP_SIGNAL) while all
 * of them run.  Fails when a dump does not arrive within 180 s (a deadlock),
 * when a worker stops making progress, or when the last dump does not show
 * each kind as it should: blocked and sleeping threads sampled (the reader
 * in stress_block_read), masked ones reported as masked, never waited on.
 * Exit status 0 ok, 1 failure.
 */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fr_cuda.h"
#include "fr_nccl.h"
#include "frz.h"

#define NBUSY 4
#define NREAD 4
#define NMASK 4
#define NSLEEP 40
#define NNCCL 4
#define NCHURN 2

static _Atomic int stopping;
static _Atomic unsigned long progress[NBUSY + NSLEEP + NNCCL];

static void die(const char *what)
{
  fprintf(stderr, "stacks-stress: %s\n", what);
  exit(1);
}

/* Exported (-export-dynamic) so the dumps name them. */
void *stress_busy(void *arg);
void *stress_block_read(void *arg);
void *stress_masked(void *arg);
void *stress_sleeper(void *arg);
void *stress_nccl(void *arg);
void *stress_churn(void *arg);

__attribute__((noinline)) void *stress_busy(void *arg)
{
  volatile unsigned long x = 0;
  while (!atomic_load_explicit(&stopping, memory_order_relaxed)) {
    for (int i = 0; i < 100000; i++) x += (unsigned long)i;
    atomic_fetch_add(&progress[(intptr_t)arg], 1);
  }
  return NULL;
}

__attribute__((noinline)) void *stress_block_read(void *arg)
{
  int fds[2];
  char c;
  (void)arg;
  if (pipe(fds) != 0) die("pipe");
  for (;;) /* the write end stays open: blocked for good */
    if (read(fds[0], &c, 1) < 0 && errno != EINTR) die("read");
  return NULL;
}

__attribute__((noinline)) void *stress_masked(void *arg)
{
  sigset_t all;
  struct timespec t = {0, 2000000};
  (void)arg;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, NULL);
  while (!atomic_load(&stopping)) nanosleep(&t, NULL);
  return NULL;
}

__attribute__((noinline)) void *stress_sleeper(void *arg)
{
  struct timespec t = {0, 1000000};
  while (!atomic_load(&stopping)) {
    nanosleep(&t, NULL); /* EINTR from the stack signal is fine: just sleep again */
    atomic_fetch_add(&progress[(intptr_t)arg], 1);
  }
  return NULL;
}

static void check_nccl(ncclResult_t r, const char *what)
{
  if (r != ncclSuccess) die(what);
}

/* A 1-rank communicator of its own, all-reduces on it in a loop. */
__attribute__((noinline)) void *stress_nccl(void *arg)
{
  ncclUniqueId id;
  ncclComm_t comm;
  CUstream s;
  static float bufs[NNCCL + NBUSY + NSLEEP][1024]; /* the simulator's device memory is host memory */
  float *buf = bufs[(intptr_t)arg];
  check_nccl(ncclGetUniqueId(&id), "ncclGetUniqueId");
  check_nccl(ncclCommInitRank(&comm, 1, id, 0), "ncclCommInitRank");
  if (cuStreamCreate(&s, 0) != CUDA_SUCCESS) die("cuStreamCreate");
  while (!atomic_load(&stopping)) {
    check_nccl(ncclAllReduce(buf, buf, 1024, ncclFloat, ncclSum, comm, s), "ncclAllReduce");
    if (cuStreamSynchronize(s) != CUDA_SUCCESS) die("cuStreamSynchronize");
    atomic_fetch_add(&progress[(intptr_t)arg], 1);
  }
  return NULL;
}

static void *short_lived(void *arg)
{
  return arg;
}

/* Threads that start and exit all the time: some vanish between the
 * recorder's listing and its signal. */
__attribute__((noinline)) void *stress_churn(void *arg)
{
  (void)arg;
  while (!atomic_load(&stopping)) {
    pthread_t t;
    if (pthread_create(&t, NULL, short_lived, NULL) == 0) pthread_join(t, NULL);
  }
  return NULL;
}

static const char *dump_dir;

/* Number of dumps in dump_dir. */
static int count_dumps(void)
{
  DIR *d = opendir(dump_dir);
  int n = 0;
  struct dirent *e;
  if (!d) return 0;
  while ((e = readdir(d)))
    if (e->d_name[0] != '.' && strstr(e->d_name, ".frz")) n++;
  closedir(d);
  return n;
}

static double now_s(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* The newest dump (highest frame), decoded. */
static void read_newest(frz_dump *d)
{
  DIR *dir = opendir(dump_dir);
  char best[1024] = "";
  int bf = -1, f;
  struct dirent *e;
  if (!dir) die("no dump directory");
  while ((e = readdir(dir))) {
    const char *p = strstr(e->d_name, "-f");
    if (e->d_name[0] != '.' && p && sscanf(p, "-f%d.frz", &f) == 1 && f > bf) {
      bf = f;
      snprintf(best, sizeof best, "%s/%s", dump_dir, e->d_name);
    }
  }
  closedir(dir);
  frz_error err;
  if (bf < 0 || frz_read_file(best, d, &err) != FRZ_OK) die("cannot read the newest dump");
}

/* Does thread t's stack hold a frame symbolised as `sym`? */
static int has_frame(const frz_dump *d, const frz_stack *t, const char *sym)
{
  for (uint32_t k = 0; k < t->depth; k++) {
    const frz_callsite *c = frz_find_callsite(d, t->frames[k]);
    if (c && !strcmp(c->symbol, sym)) return 1;
  }
  return 0;
}

/* The last dump shows each kind of thread as it should. */
static void check_last_dump(void)
{
  frz_dump d;
  read_newest(&d);
  unsigned ok_read = 0, masked = 0, ok_sleep = 0, in_nccl = 0, bad_masked = 0;
  for (uint32_t i = 0; i < d.nstacks; i++) {
    const frz_stack *t = &d.stacks[i];
    if (has_frame(&d, t, "stress_block_read")) ok_read++;
    if (has_frame(&d, t, "stress_sleeper")) ok_sleep++;
    if (t->flags & FRZ_TF_IN_NCCL) in_nccl++;
    if (t->status == FRZ_STACK_MASKED) masked++;
    if (t->status == FRZ_STACK_OK && has_frame(&d, t, "stress_masked")) bad_masked++;
  }
  printf("last dump: %u threads; %u in read, %u sleepers sampled, %u masked, %u inside NCCL\n",
         d.nstacks, ok_read, ok_sleep, masked, in_nccl);
  if (d.nstacks < NBUSY + NREAD + NMASK + NSLEEP + NNCCL) die("threads missing from the last dump");
  if (ok_read != NREAD) die("not every thread blocked in read was sampled");
  if (ok_sleep < NSLEEP / 2) die("fewer than half of the sleepers were sampled");
  if (masked < NMASK || bad_masked) die("threads that block the signal are not reported as masked");
  frz_dump_free(&d);
}

int main(int argc, char **argv)
{
  int want = argc > 1 ? atoi(argv[1]) : 200;
  dump_dir = getenv("FR_DUMP_DIR");
  if (!dump_dir || want <= 0) die("usage: FR_DUMP_DIR=DIR stacks-stress DUMPS");
  if (cuInit(0) != CUDA_SUCCESS) die("cuInit");
  pthread_t th[NBUSY + NREAD + NMASK + NSLEEP + NNCCL + NCHURN];
  int n = 0;
  for (intptr_t i = 0; i < NNCCL; i++) /* first: the recorder starts at the first comm */
    if (pthread_create(&th[n++], NULL, stress_nccl, (void *)(NBUSY + NSLEEP + i))) die("pthread_create");
  for (intptr_t i = 0; i < NBUSY; i++)
    if (pthread_create(&th[n++], NULL, stress_busy, (void *)i)) die("pthread_create");
  for (intptr_t i = 0; i < NSLEEP; i++)
    if (pthread_create(&th[n++], NULL, stress_sleeper, (void *)(NBUSY + i))) die("pthread_create");
  for (int i = 0; i < NREAD; i++)
    if (pthread_create(&th[n++], NULL, stress_block_read, NULL)) die("pthread_create");
  for (int i = 0; i < NMASK; i++)
    if (pthread_create(&th[n++], NULL, stress_masked, NULL)) die("pthread_create");
  for (int i = 0; i < NCHURN; i++)
    if (pthread_create(&th[n++], NULL, stress_churn, NULL)) die("pthread_create");
  struct timespec settle = {0, 200000000};
  nanosleep(&settle, NULL);
  double t0 = now_s();
  unsigned long before[NBUSY + NSLEEP + NNCCL];
  for (int i = 0; i < NBUSY + NSLEEP + NNCCL; i++) before[i] = atomic_load(&progress[i]);
  for (int k = 0; k < want; k++) {
    int had = count_dumps();
    kill(getpid(), SIGUSR2);
    double t = now_s();
    struct timespec tick = {0, 1000000};
    /* every dump must arrive; how soon is not this test's point (the
     * trigger benchmark measures it): on 2 cores under ASan, with 40 busy
     * threads beside the watchdog, one dump once took over 60 s */
    while (count_dumps() == had) {
      if (now_s() - t > 180) die("a dump did not arrive within 180 s");
      nanosleep(&tick, NULL);
    }
  }
  double dt = now_s() - t0;
  /* no worker was left stuck: each one moves on (a loaded machine may not
   * have scheduled every one of them during a short run) */
  for (int i = 0; i < NBUSY + NSLEEP + NNCCL; i++) {
    struct timespec tick = {0, 10000000};
    double t = now_s();
    while (atomic_load(&progress[i]) == before[i]) {
      if (now_s() - t > 30) die("a worker is stuck after the dumps");
      nanosleep(&tick, NULL);
    }
  }
  printf("%d dumps in %.1f s (%.1f ms each), every worker goes on\n", want, dt, dt * 1000 / want);
  check_last_dump();
  atomic_store(&stopping, 1);
  fflush(stdout);
  _exit(0); /* the reader threads never return */
}
