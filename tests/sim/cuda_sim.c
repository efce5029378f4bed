/* cuda_sim.c — the simulator's libcuda.so.1: the CUDA driver calls of
 * fr_cuda.h on a machine without a GPU.
 *
 * A stream is a worker thread with a FIFO queue of host functions (see
 * sim.h).  An event is recorded by queueing a marker behind the work already
 * on the stream; it is complete once the worker has run the marker of its
 * latest record (a never-recorded event is complete); a timing event (not
 * CU_EVENT_DISABLE_TIMING) keeps the CLOCK_MONOTONIC time its marker ran,
 * which cuEventElapsedTime(_v2) subtracts, so the simulated GPU's clock is
 * the host's.  Contexts: one, whatever is made current.  Device memory is host
 * memory.  After fork() the child keeps every stream object but with an empty
 * queue and no worker; one is started again on the next enqueue.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sim.h"

/* Driver version reported: CUDA 13.0 */
#define SIM_DRIVER_VERSION 13000

struct sim_task {
  struct sim_task *next;
  sim_task_fn fn;
  void *arg;
};

struct CUstream_st {
  pthread_mutex_t mu;
  pthread_cond_t work;          /* queue became non-empty, or destroyed */
  pthread_cond_t idle;          /* a task finished */
  struct sim_task *head, *tail;
  uint64_t queued, done;        /* tasks appended / finished so far */
  int has_worker;
  int destroyed;
  int capturing;                /* test knob: sim_stream_set_capturing */
  struct CUgraph_st *graph;     /* cuStreamBeginCapture_v2: work goes here, not to the queue */
  struct CUstream_st *next_all; /* registry of live streams (for fork) */
};

struct CUevent_st {
  _Atomic uint64_t recorded;    /* generation of the latest record */
  _Atomic uint64_t reached;     /* highest generation whose marker ran */
  _Atomic uint64_t reached_ns;  /* CLOCK_MONOTONIC when it ran; 0 never */
  _Atomic int refs;             /* the handle + pending markers */
  unsigned flags;               /* CU_EVENT_* of its creation */
};

struct sim_marker {
  struct CUevent_st *event;
  uint64_t gen;
};

struct CUctx_st {
  int unused;
};

static pthread_mutex_t g_registry_mu = PTHREAD_MUTEX_INITIALIZER;
static struct CUstream_st *g_streams;
static struct CUstream_st *g_default_stream;
static struct CUctx_st g_context;
static pthread_once_t g_atfork_once = PTHREAD_ONCE_INIT;

/* Locks every stream so that fork() copies them in a consistent state. */
static void sim_fork_prepare(void)
{
  pthread_mutex_lock(&g_registry_mu);
  for (struct CUstream_st *s = g_streams; s; s = s->next_all)
    pthread_mutex_lock(&s->mu);
}

static void sim_fork_parent(void)
{
  for (struct CUstream_st *s = g_streams; s; s = s->next_all)
    pthread_mutex_unlock(&s->mu);
  pthread_mutex_unlock(&g_registry_mu);
}

/* In the child: no worker survived the fork; forget the queued work. */
static void sim_fork_child(void)
{
  for (struct CUstream_st *s = g_streams; s; s = s->next_all) {
    struct sim_task *t = s->head;
    while (t) {
      struct sim_task *n = t->next;
      free(t);
      t = n;
    }
    s->head = s->tail = NULL;
    s->queued = s->done = 0;
    s->has_worker = 0;
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->work, NULL);
    pthread_cond_init(&s->idle, NULL);
  }
  pthread_mutex_init(&g_registry_mu, NULL);
}

static void sim_register_atfork(void)
{
  pthread_atfork(sim_fork_prepare, sim_fork_parent, sim_fork_child);
}

/* A stream without a worker yet (started by the first enqueue). */
static struct CUstream_st *sim_stream_new(void)
{
  pthread_once(&g_atfork_once, sim_register_atfork);
  struct CUstream_st *s = calloc(1, sizeof *s);
  if (!s)
    return NULL;
  pthread_mutex_init(&s->mu, NULL);
  pthread_cond_init(&s->work, NULL);
  pthread_cond_init(&s->idle, NULL);
  pthread_mutex_lock(&g_registry_mu);
  s->next_all = g_streams;
  g_streams = s;
  pthread_mutex_unlock(&g_registry_mu);
  return s;
}

/* Unlinks a stream from the registry and frees it (its worker is gone).
 * Its mutex and conds are not pthread_*_destroy()ed: glibc's destroy is a
 * no-op, and helgrind misreads it after the host thread's last unlock. */
static void sim_stream_free(struct CUstream_st *s)
{
  pthread_mutex_lock(&g_registry_mu);
  for (struct CUstream_st **p = &g_streams; *p; p = &(*p)->next_all) {
    if (*p == s) {
      *p = s->next_all;
      break;
    }
  }
  pthread_mutex_unlock(&g_registry_mu);
  free(s);
}

/* The worker: runs queued tasks in order until the stream is destroyed and
 * drained. */
static void *sim_worker(void *arg)
{
  struct CUstream_st *s = arg;
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, NULL); /* signals belong to the host threads */
  pthread_mutex_lock(&s->mu);
  for (;;) {
    while (!s->head && !s->destroyed)
      pthread_cond_wait(&s->work, &s->mu);
    if (!s->head)
      break;
    struct sim_task *t = s->head;
    s->head = t->next;
    if (!s->head)
      s->tail = NULL;
    pthread_mutex_unlock(&s->mu);
    t->fn(t->arg);
    free(t);
    pthread_mutex_lock(&s->mu);
    s->done++;
    pthread_cond_broadcast(&s->idle);
  }
  s->has_worker = 0;
  pthread_mutex_unlock(&s->mu);
  sim_stream_free(s);
  return NULL;
}

/* The NULL stream: this process's default stream, created on first use. */
static struct CUstream_st *sim_resolve(CUstream stream)
{
  if (stream)
    return stream;
  pthread_mutex_lock(&g_registry_mu);
  struct CUstream_st *s = g_default_stream;
  pthread_mutex_unlock(&g_registry_mu);
  if (s)
    return s;
  s = sim_stream_new();
  if (!s)
    return NULL;
  pthread_mutex_lock(&g_registry_mu);
  if (g_default_stream) { /* another thread won the race */
    pthread_mutex_unlock(&g_registry_mu);
    sim_stream_free(s);
    pthread_mutex_lock(&g_registry_mu);
  } else {
    g_default_stream = s;
  }
  s = g_default_stream;
  pthread_mutex_unlock(&g_registry_mu);
  return s;
}

CUresult sim_stream_enqueue(CUstream stream, sim_task_fn fn, void *arg)
{
  return sim_stream_enqueue_node(stream, fn, arg, NULL, NULL);
}

CUresult sim_stream_enqueue_node(CUstream stream, sim_task_fn fn, void *arg, sim_launch_fn launch,
                                 sim_release_fn release)
{
  struct CUstream_st *s = sim_resolve(stream);
  if (!s || !fn)
    return CUDA_ERROR_INVALID_VALUE;
  struct sim_task *t = malloc(sizeof *t);
  if (!t)
    return CUDA_ERROR_NOT_SUPPORTED;
  t->next = NULL;
  t->fn = fn;
  t->arg = arg;
  pthread_mutex_lock(&s->mu);
  if (s->destroyed) {
    pthread_mutex_unlock(&s->mu);
    free(t);
    return CUDA_ERROR_INVALID_HANDLE;
  }
  if (s->graph) {               /* captured: recorded into the graph, not run */
    int rc = sim_graph_add(s->graph, fn, arg, launch, release);
    pthread_mutex_unlock(&s->mu);
    free(t);
    return rc == 0 ? CUDA_SUCCESS : CUDA_ERROR_NOT_SUPPORTED;
  }
  if (!s->has_worker) {
    pthread_t tid;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    int rc = pthread_create(&tid, &attr, sim_worker, s);
    pthread_attr_destroy(&attr);
    if (rc != 0) {
      pthread_mutex_unlock(&s->mu);
      free(t);
      return CUDA_ERROR_NOT_SUPPORTED;
    }
    pthread_setname_np(tid, "sim-stream");
    s->has_worker = 1;
  }
  if (s->tail)
    s->tail->next = t;
  else
    s->head = t;
  s->tail = t;
  s->queued++;
  pthread_cond_signal(&s->work);
  pthread_mutex_unlock(&s->mu);
  return CUDA_SUCCESS;
}

CUresult cuInit(unsigned int Flags)
{
  return Flags == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult cuDriverGetVersion(int *driverVersion)
{
  if (!driverVersion)
    return CUDA_ERROR_INVALID_VALUE;
  *driverVersion = SIM_DRIVER_VERSION;
  return CUDA_SUCCESS;
}

CUresult cuCtxGetCurrent(CUcontext *pctx)
{
  if (!pctx)
    return CUDA_ERROR_INVALID_VALUE;
  *pctx = &g_context;
  return CUDA_SUCCESS;
}

CUresult cuCtxSetCurrent(CUcontext ctx)
{
  return !ctx || ctx == &g_context ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}

CUresult cuStreamCreate(CUstream *phStream, unsigned int Flags)
{
  if (!phStream || (Flags & ~(unsigned)CU_STREAM_NON_BLOCKING))
    return CUDA_ERROR_INVALID_VALUE;
  struct CUstream_st *s = sim_stream_new();
  if (!s)
    return CUDA_ERROR_NOT_SUPPORTED;
  *phStream = s;
  return CUDA_SUCCESS;
}

CUresult cuStreamSynchronize(CUstream hStream)
{
  struct CUstream_st *s = sim_resolve(hStream);
  if (!s)
    return CUDA_ERROR_INVALID_VALUE;
  pthread_mutex_lock(&s->mu);
  uint64_t target = s->queued;
  while (s->done < target)
    pthread_cond_wait(&s->idle, &s->mu);
  pthread_mutex_unlock(&s->mu);
  return CUDA_SUCCESS;
}

CUresult cuStreamQuery(CUstream hStream)
{
  struct CUstream_st *s = sim_resolve(hStream);
  if (!s)
    return CUDA_ERROR_INVALID_VALUE;
  pthread_mutex_lock(&s->mu);
  int drained = s->done == s->queued;
  pthread_mutex_unlock(&s->mu);
  return drained ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}

CUresult cuStreamIsCapturing(CUstream hStream, CUstreamCaptureStatus *captureStatus)
{
  if (!captureStatus)
    return CUDA_ERROR_INVALID_VALUE;
  int on = 0;
  if (hStream) {
    pthread_mutex_lock(&hStream->mu);
    on = hStream->capturing || hStream->graph;
    pthread_mutex_unlock(&hStream->mu);
  }
  *captureStatus = on ? CU_STREAM_CAPTURE_STATUS_ACTIVE : CU_STREAM_CAPTURE_STATUS_NONE;
  return CUDA_SUCCESS;
}

CUresult cuStreamGetCaptureInfo_v2(CUstream hStream, CUstreamCaptureStatus *captureStatus_out,
                                   unsigned long long *id_out, CUgraph *graph_out,
                                   const CUgraphNode **dependencies_out, size_t *numDependencies_out)
{
  if (!captureStatus_out)
    return CUDA_ERROR_INVALID_VALUE;
  struct CUgraph_st *g = NULL;
  if (hStream) {
    pthread_mutex_lock(&hStream->mu);
    g = hStream->graph;
    pthread_mutex_unlock(&hStream->mu);
  }
  *captureStatus_out = g ? CU_STREAM_CAPTURE_STATUS_ACTIVE : CU_STREAM_CAPTURE_STATUS_NONE;
  if (id_out)
    *id_out = (unsigned long long)(uintptr_t)g; /* one capture, one graph */
  if (graph_out)
    *graph_out = g;
  if (dependencies_out)
    *dependencies_out = NULL;
  if (numDependencies_out)
    *numDependencies_out = 0;
  return CUDA_SUCCESS;
}

int sim_stream_graph_capturing(CUstream stream)
{
  if (!stream)
    return 0;
  pthread_mutex_lock(&stream->mu);
  int on = stream->graph != NULL;
  pthread_mutex_unlock(&stream->mu);
  return on;
}

CUresult cuStreamBeginCapture_v2(CUstream hStream, CUstreamCaptureMode mode)
{
  if ((unsigned)mode > CU_STREAM_CAPTURE_MODE_RELAXED)
    return CUDA_ERROR_INVALID_VALUE;
  if (!hStream || hStream == g_default_stream)
    return CUDA_ERROR_INVALID_HANDLE;
  struct CUgraph_st *g = sim_graph_new();
  if (!g)
    return CUDA_ERROR_NOT_SUPPORTED;
  pthread_mutex_lock(&hStream->mu);
  int busy = hStream->graph != NULL;
  if (!busy)
    hStream->graph = g;
  pthread_mutex_unlock(&hStream->mu);
  if (busy)
    cuGraphDestroy(g);
  return busy ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS; /* already capturing */
}

CUresult cuStreamEndCapture(CUstream hStream, CUgraph *phGraph)
{
  if (!hStream || !phGraph)
    return CUDA_ERROR_INVALID_VALUE;
  pthread_mutex_lock(&hStream->mu);
  struct CUgraph_st *g = hStream->graph;
  hStream->graph = NULL;
  pthread_mutex_unlock(&hStream->mu);
  if (!g)
    return CUDA_ERROR_INVALID_VALUE; /* not capturing */
  *phGraph = g;
  return CUDA_SUCCESS;
}

CUresult sim_stream_set_capturing(CUstream stream, int on)
{
  if (!stream)
    return CUDA_ERROR_INVALID_HANDLE; /* the legacy NULL stream cannot be captured */
  __atomic_store_n(&stream->capturing, on ? 1 : 0, __ATOMIC_RELAXED);
  return CUDA_SUCCESS;
}

/* Like the driver, returns at once: queued work still runs, then the worker
 * exits and frees the stream. */
CUresult cuStreamDestroy_v2(CUstream hStream)
{
  if (!hStream || hStream == g_default_stream)
    return CUDA_ERROR_INVALID_HANDLE;
  struct CUstream_st *s = hStream;
  pthread_mutex_lock(&s->mu);
  if (s->destroyed) {
    pthread_mutex_unlock(&s->mu);
    return CUDA_ERROR_INVALID_HANDLE;
  }
  s->destroyed = 1;
  int has_worker = s->has_worker;
  pthread_cond_signal(&s->work);
  pthread_mutex_unlock(&s->mu);
  if (!has_worker)
    sim_stream_free(s);
  return CUDA_SUCCESS;
}

static void sim_event_unref(struct CUevent_st *e)
{
  if (atomic_fetch_sub(&e->refs, 1) == 1)
    free(e);
}

CUresult cuEventCreate(CUevent *phEvent, unsigned int Flags)
{
  if (!phEvent || (Flags & ~0xfu))
    return CUDA_ERROR_INVALID_VALUE;
  struct CUevent_st *e = calloc(1, sizeof *e);
  if (!e)
    return CUDA_ERROR_NOT_SUPPORTED;
  atomic_init(&e->refs, 1);
  e->flags = Flags;
  *phEvent = e;
  return CUDA_SUCCESS;
}

/* Stream task: the event's record `gen` has been reached. */
static void sim_marker_run(void *arg)
{
  struct sim_marker *m = arg;
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  atomic_store(&m->event->reached_ns, (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec);
  uint64_t cur = atomic_load(&m->event->reached);
  while (cur < m->gen && !atomic_compare_exchange_weak(&m->event->reached, &cur, m->gen))
    ;
  sim_event_unref(m->event);
  free(m);
}

CUresult cuEventRecord(CUevent hEvent, CUstream hStream)
{
  if (!hEvent)
    return CUDA_ERROR_INVALID_HANDLE;
  struct sim_marker *m = malloc(sizeof *m);
  if (!m)
    return CUDA_ERROR_NOT_SUPPORTED;
  m->event = hEvent;
  m->gen = atomic_fetch_add(&hEvent->recorded, 1) + 1;
  atomic_fetch_add(&hEvent->refs, 1);
  /* on an idle stream the marker is reached at once, as a GPU's front end
   * passes an event with nothing before it within microseconds */
  struct CUstream_st *s = sim_resolve(hStream);
  if (s) {
    pthread_mutex_lock(&s->mu);
    int idle = !s->destroyed && s->queued == s->done;
    if (idle)
      sim_marker_run(m);
    pthread_mutex_unlock(&s->mu);
    if (idle)
      return CUDA_SUCCESS;
  }
  CUresult rc = sim_stream_enqueue(hStream, sim_marker_run, m);
  if (rc != CUDA_SUCCESS)
    sim_marker_run(m); /* a failed record leaves the event complete */
  return rc;
}

CUresult cuEventQuery(CUevent hEvent)
{
  if (!hEvent)
    return CUDA_ERROR_INVALID_HANDLE;
  return atomic_load(&hEvent->reached) >= atomic_load(&hEvent->recorded)
             ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}

/* Milliseconds from hStart to hEnd (negative when hEnd came first), as
 * CUDA: CUDA_ERROR_INVALID_HANDLE for an event without timing,
 * CUDA_ERROR_NOT_READY for one not complete or never recorded. */
CUresult cuEventElapsedTime_v2(float *pMilliseconds, CUevent hStart, CUevent hEnd)
{
  if (!pMilliseconds || !hStart || !hEnd)
    return CUDA_ERROR_INVALID_VALUE;
  if ((hStart->flags | hEnd->flags) & CU_EVENT_DISABLE_TIMING)
    return CUDA_ERROR_INVALID_HANDLE;
  if (cuEventQuery(hStart) != CUDA_SUCCESS || cuEventQuery(hEnd) != CUDA_SUCCESS)
    return CUDA_ERROR_NOT_READY;
  uint64_t a = atomic_load(&hStart->reached_ns), b = atomic_load(&hEnd->reached_ns);
  if (!a || !b)
    return CUDA_ERROR_NOT_READY;
  *pMilliseconds = (float)(((double)b - (double)a) / 1e6);
  return CUDA_SUCCESS;
}

/* The older name of the same call (drivers before CUDA 12.8). */
CUresult cuEventElapsedTime(float *pMilliseconds, CUevent hStart, CUevent hEnd);
CUresult cuEventElapsedTime(float *pMilliseconds, CUevent hStart, CUevent hEnd)
{
  return cuEventElapsedTime_v2(pMilliseconds, hStart, hEnd);
}

/* The event is freed once no queued marker refers to it any more. */
CUresult cuEventDestroy_v2(CUevent hEvent)
{
  if (!hEvent)
    return CUDA_ERROR_INVALID_HANDLE;
  sim_event_unref(hEvent);
  return CUDA_SUCCESS;
}

CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize)
{
  if (!dptr || bytesize == 0)
    return CUDA_ERROR_INVALID_VALUE;
  void *p = calloc(1, bytesize);
  if (!p)
    return CUDA_ERROR_NOT_SUPPORTED;
  *dptr = (CUdeviceptr)(uintptr_t)p;
  return CUDA_SUCCESS;
}

CUresult cuMemFree_v2(CUdeviceptr dptr)
{
  free((void *)(uintptr_t)dptr);
  return CUDA_SUCCESS;
}
