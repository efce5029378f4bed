/* graph_sim.c — CUDA graphs in the simulator's libcuda.so.1: what stream
 * capture records, executables instantiated from it, their launches, and
 * the driver's entry-point lookup (cuGetProcAddress).
 *
 * A graph is a list of nodes, in capture order (the simulator's streams are
 * FIFOs, so capture order is the order of dependencies).  A node is what
 * sim_stream_enqueue_node() queued on the capturing stream: a task and how
 * to launch it again.  Nodes are shared, with a reference count, by the
 * graph, its clones and the executables made from them (an executable
 * outlives its graph, as in CUDA).  Each cuGraphLaunch calls every node's
 * `launch` on the host thread (which returns the argument of that launch's
 * task) and queues the tasks on the launch stream, in order: a launch runs
 * exactly what a stream would have run.  Nodes queued without a `launch`
 * (plain sim_stream_enqueue during capture: an event record, a host task)
 * are kept and freed with the graph but never run.
 */
#include "config.h"

#include <dlfcn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"

/* CUDA's code for an executable whose graph's topology changed (cuda.h). */
#define SIM_CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE 910

struct sim_node {
  _Atomic int refs;
  sim_task_fn fn;
  void *arg;
  sim_launch_fn launch;
  sim_release_fn release;
};

struct sim_nodes {
  struct sim_node **v;
  int n, cap;
};

struct CUgraph_st {
  struct sim_nodes nodes;
};

struct CUgraphExec_st {
  struct sim_nodes nodes;
};

static void sim_node_unref(struct sim_node *n)
{
  if (atomic_fetch_sub(&n->refs, 1) != 1)
    return;
  if (n->release)
    n->release(n->arg);
  free(n);
}

static void sim_nodes_clear(struct sim_nodes *ns)
{
  for (int i = 0; i < ns->n; i++)
    sim_node_unref(ns->v[i]);
  free(ns->v);
  ns->v = NULL;
  ns->n = ns->cap = 0;
}

/* dst = a new reference to every node of src; -1 when memory is short. */
static int sim_nodes_copy(struct sim_nodes *dst, const struct sim_nodes *src)
{
  dst->v = src->n ? malloc((size_t)src->n * sizeof *dst->v) : NULL;
  if (src->n && !dst->v)
    return -1;
  for (int i = 0; i < src->n; i++) {
    dst->v[i] = src->v[i];
    atomic_fetch_add(&dst->v[i]->refs, 1);
  }
  dst->n = dst->cap = src->n;
  return 0;
}

struct CUgraph_st *sim_graph_new(void)
{
  return calloc(1, sizeof(struct CUgraph_st));
}

int sim_graph_add(struct CUgraph_st *g, sim_task_fn fn, void *arg, sim_launch_fn launch, sim_release_fn release)
{
  struct sim_nodes *ns = &g->nodes;
  if (ns->n == ns->cap) {
    int cap = ns->cap ? 2 * ns->cap : 8;
    struct sim_node **v = realloc(ns->v, (size_t)cap * sizeof *v);
    if (!v)
      return -1;
    ns->v = v;
    ns->cap = cap;
  }
  struct sim_node *n = malloc(sizeof *n);
  if (!n)
    return -1;
  atomic_init(&n->refs, 1);
  n->fn = fn;
  n->arg = arg;
  n->launch = launch;
  n->release = release;
  ns->v[ns->n++] = n;
  return 0;
}

CUresult cuGraphDestroy(CUgraph hGraph)
{
  if (!hGraph)
    return CUDA_ERROR_INVALID_VALUE;
  sim_nodes_clear(&hGraph->nodes);
  free(hGraph);
  return CUDA_SUCCESS;
}

CUresult cuGraphClone(CUgraph *phGraphClone, CUgraph originalGraph)
{
  if (!phGraphClone || !originalGraph)
    return CUDA_ERROR_INVALID_VALUE;
  struct CUgraph_st *c = sim_graph_new();
  if (!c || sim_nodes_copy(&c->nodes, &originalGraph->nodes) != 0) {
    free(c);
    return CUDA_ERROR_NOT_SUPPORTED;
  }
  *phGraphClone = c;
  return CUDA_SUCCESS;
}

CUresult cuGraphInstantiateWithFlags(CUgraphExec *phGraphExec, CUgraph hGraph, unsigned long long flags)
{
  if (!phGraphExec || !hGraph || flags > 0xf)
    return CUDA_ERROR_INVALID_VALUE;
  struct CUgraphExec_st *e = calloc(1, sizeof *e);
  if (!e || sim_nodes_copy(&e->nodes, &hGraph->nodes) != 0) {
    free(e);
    return CUDA_ERROR_NOT_SUPPORTED;
  }
  *phGraphExec = e;
  return CUDA_SUCCESS;
}

CUresult cuGraphExecDestroy(CUgraphExec hGraphExec)
{
  if (!hGraphExec)
    return CUDA_ERROR_INVALID_VALUE;
  sim_nodes_clear(&hGraphExec->nodes);
  free(hGraphExec);
  return CUDA_SUCCESS;
}

/* The executable takes the nodes of hGraph, which must have as many (CUDA:
 * the same topology; only the nodes' parameters may differ). */
CUresult cuGraphExecUpdate_v2(CUgraphExec hGraphExec, CUgraph hGraph, void *resultInfo)
{
  (void)resultInfo;
  if (!hGraphExec || !hGraph)
    return CUDA_ERROR_INVALID_VALUE;
  if (hGraph->nodes.n != hGraphExec->nodes.n)
    return (CUresult)SIM_CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE;
  struct sim_nodes fresh;
  if (sim_nodes_copy(&fresh, &hGraph->nodes) != 0)
    return CUDA_ERROR_NOT_SUPPORTED;
  sim_nodes_clear(&hGraphExec->nodes);
  hGraphExec->nodes = fresh;
  return CUDA_SUCCESS;
}

CUresult cuGraphLaunch(CUgraphExec hGraphExec, CUstream hStream)
{
  if (!hGraphExec)
    return CUDA_ERROR_INVALID_VALUE;
  if (sim_stream_graph_capturing(hStream))
    return CUDA_ERROR_NOT_SUPPORTED; /* a graph launched into a capture: not modelled */
  for (int i = 0; i < hGraphExec->nodes.n; i++) {
    struct sim_node *n = hGraphExec->nodes.v[i];
    if (!n->launch)
      continue;
    void *arg = n->launch(n->arg);
    if (!arg)
      return CUDA_ERROR_NOT_SUPPORTED;
    CUresult rc = sim_stream_enqueue(hStream, n->fn, arg);
    if (rc != CUDA_SUCCESS)
      return rc;
  }
  return CUDA_SUCCESS;
}

/* The driver's entry points by base name, as the CUDA runtime asks for
 * them: the newest version ("NAME_v2") for a caller of CUDA 12.0 or later
 * when there is one, else NAME; with CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM
 * (flag 2) the "_ptsz" variant where there is one.  Looked up in this
 * library only (a dlsym on its own handle), as the driver hands out its
 * own functions whatever was preloaded. */
static CUresult sim_proc_address(const char *symbol, void **pfn, int cudaVersion, unsigned long long flags)
{
  if (!symbol || !pfn)
    return CUDA_ERROR_INVALID_VALUE;
  *pfn = NULL;
  void *self = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
  if (!self)
    return CUDA_ERROR_NOT_SUPPORTED;
  char name[256];
  if ((flags & 2) && snprintf(name, sizeof name, "%s_ptsz", symbol) < (int)sizeof name)
    *pfn = dlsym(self, name);
  if (!*pfn && cudaVersion >= 12000 && snprintf(name, sizeof name, "%s_v2", symbol) < (int)sizeof name)
    *pfn = dlsym(self, name);
  if (!*pfn)
    *pfn = dlsym(self, symbol);
  dlclose(self);
  return *pfn ? CUDA_SUCCESS : CUDA_ERROR_NOT_SUPPORTED;
}

CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, unsigned long long flags);
CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, unsigned long long flags)
{
  return sim_proc_address(symbol, pfn, cudaVersion, flags);
}

/* symbolStatus: CUdriverProcAddressQueryResult, 0 found, 1 not found. */
CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion, unsigned long long flags,
                             int *symbolStatus)
{
  CUresult rc = sim_proc_address(symbol, pfn, cudaVersion, flags);
  if (symbolStatus)
    *symbolStatus = rc == CUDA_SUCCESS ? 0 : 1;
  return rc;
}
