/* parallel.c — run independent jobs on the machine's cores (loading files,
 * indexing frames): a few worker threads take job indices in turn. */
#include "config.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

#include "internal.h"

/* Most threads ever started, whatever the machine or the environment says. */
#define FA_THREADS_MAX 64

unsigned fa_threads(void)
{
  const char *e = getenv("FR_ANALYZE_THREADS");
  if (e && *e) {
    char *end;
    long n = strtol(e, &end, 10);
    if (*end == '\0' && n >= 1) return n > FA_THREADS_MAX ? FA_THREADS_MAX : (unsigned)n;
  }
  long n = 0;
#ifdef CPU_COUNT
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) n = CPU_COUNT(&set);
#endif
  if (n < 1) n = sysconf(_SC_NPROCESSORS_ONLN);
  if (n < 1) n = 1;
  return n > FA_THREADS_MAX ? FA_THREADS_MAX : (unsigned)n;
}

typedef struct pool {
  void (*fn)(void *ctx, uint32_t i);
  void *ctx;
  uint32_t n;
  atomic_uint next;
} pool;

static void *worker(void *arg)
{
  pool *p = arg;
  for (;;) {
    uint32_t i = atomic_fetch_add(&p->next, 1);
    if (i >= p->n) break;
    p->fn(p->ctx, i);
  }
  return NULL;
}

void fa_parallel_for(uint32_t n, void (*fn)(void *ctx, uint32_t i), void *ctx)
{
  pool p = {fn, ctx, n, 0};
  unsigned want = fa_threads();
  if (want > n) want = n;
  pthread_t th[FA_THREADS_MAX];
  unsigned started = 0;
  /* this thread works too; a thread that cannot be started is not needed */
  while (started + 1 < want && pthread_create(&th[started], NULL, worker, &p) == 0) started++;
  worker(&p);
  for (unsigned i = 0; i < started; i++) pthread_join(th[i], NULL);
}
