/* fr-bench-stacks — the cost of one collection of every thread's stack
 * (librecorder/stacks.c, linked in directly), for `make bench`.
 *
 *   fr-bench-stacks THREADS REPS
 *
 * Starts THREADS threads that wait on a condition variable (the state of
 * most threads of a job at dump time), then times REPS collections with
 * fr_stacks_collect and prints one line:
 *   threads=N sampled=N us_med=.. us_min=.. us_max=..
 * Exit status 0, or 1 when a collection missed a thread.
 */
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "recorder.h"
#include "stacks.h"

/* What stacks.c needs of the recorder, without the rest of it. */
fr_global fr_g;
void fr_log(const char *fmt, ...) { (void)fmt; }
void fr_locate_self(void) {}
uint64_t fr_now_ns(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;

static void *waiter(void *arg)
{
  pthread_mutex_lock(&mu);
  for (;;) pthread_cond_wait(&cv, &mu);
  return arg;
}

static int cmp_u64(const void *a, const void *b)
{
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
  int nthreads = argc > 1 ? atoi(argv[1]) : 8, reps = argc > 2 ? atoi(argv[2]) : 51;
  if (nthreads < 0 || reps < 1) return 2;
  fr_g.cfg.stacks = 1;
  fr_g.cfg.stack_signal = SIGRTMAX - 2;
  fr_g.cfg.stack_timeout_ms = 1000;
  if (fr_stacks_init() != 0) return 1;
  for (int i = 0; i < nthreads; i++) {
    pthread_t t;
    if (pthread_create(&t, NULL, waiter, NULL) != 0) return 1;
  }
  struct timespec settle = {0, 100000000};
  nanosleep(&settle, NULL);
  uint64_t *us = malloc((size_t)reps * sizeof *us);
  uint32_t n = 0, sampled = 0;
  if (!us) return 1;
  for (int r = 0; r < reps; r++) {
    uint64_t t0 = fr_now_ns();
    frz_stack *t = fr_stacks_collect(&n);
    us[r] = (fr_now_ns() - t0) / 1000;
    sampled = 0;
    for (uint32_t i = 0; t && i < n; i++) sampled += t[i].status == FRZ_STACK_OK;
    if (sampled != (uint32_t)nthreads + 1) { /* the waiters and this thread */
      fprintf(stderr, "fr-bench-stacks: %u of %d threads sampled\n", sampled, nthreads + 1);
      return 1;
    }
  }
  qsort(us, (size_t)reps, sizeof *us, cmp_u64);
  printf("threads=%u sampled=%u us_med=%llu us_min=%llu us_max=%llu\n", n, sampled,
         (unsigned long long)us[reps / 2], (unsigned long long)us[0], (unsigned long long)us[reps - 1]);
  free(us);
  return 0;
}
