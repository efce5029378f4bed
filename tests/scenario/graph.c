/* graph.c — body ops that run as a CUDA graph (graph=NAME, tests/scenarios/
 * README.md "CUDA graphs"), as vLLM's decode step or a training step
 * captured with torch.cuda.graph runs:
 *
 *   capture   the first time a rank reaches the graph's first op, it begins
 *             a capture (thread-local mode, as torch.cuda.graph) on a side
 *             stream of the graph, makes each of the graph's NCCL calls
 *             there, and after the last one ends the capture, instantiates
 *             the graph (then destroys it: the executable keeps its work)
 *             and launches it on the main stream: replay 0.
 *   replay    at every later step the graph's first op launches the
 *             executable on the main stream (no NCCL call); its other ops
 *             do nothing.  "First" and "last" are among the graph's ops
 *             this rank runs (its ranks= and comm membership).  Faults of a replay step therefore act at the
 *             first op: stop/skip there keep the rank from launching,
 *             `stall kernel` stops its kernel in that launch; call changes
 *             (count= ...) act at the capture step only.
 *
 * The driver's graph calls are looked up with cuGetProcAddress_v2, as the
 * CUDA runtime linked statically into a framework does, so a recorder that
 * only defined cuGraphLaunch would not see these launches.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "job.h"
#include "sim.h"

enum { JOB_HOW_CAPTURING = 4, JOB_HOW_LAUNCH = 8 };

struct job_graph {
  CUstream stream;              /* its capture stream (made at first use) */
  CUgraphExec exec;             /* instantiated: replays launch it */
  int capturing;
  long replays;                 /* launches so far */
};

typedef CUresult (*instantiate_fn)(CUgraphExec *, CUgraph, unsigned long long);
typedef CUresult (*launch_fn)(CUgraphExec, CUstream);

static void job_graph_ok(const struct job *j, CUresult rc, const char *what, int line)
{
  if (rc != CUDA_SUCCESS)
    job_fatal(1, "rank %d: %s (%s:%d) failed: CUDA error %d", j->grank, what, j->sc.file, line, (int)rc);
}

/* A driver function through cuGetProcAddress_v2 (CUDA 12.0 callers). */
static void *job_driver_fn(const struct job *j, const char *name, int line)
{
  void *fn = NULL;
  int status = 1;
  job_graph_ok(j, cuGetProcAddress_v2(name, &fn, 12000, 0, &status), name, line);
  if (!fn || status != 0)
    job_fatal(1, "rank %d: cuGetProcAddress_v2 has no %s", j->grank, name);
  return fn;
}

static struct job_graph *job_graph_of(struct job *j, const struct sc_op *op)
{
  if (!j->graphs) {
    j->graphs = calloc((size_t)j->sc.ngraphs, sizeof *j->graphs);
    if (!j->graphs)
      job_fatal(1, "out of memory");
  }
  return &j->graphs[op->graph - 1];
}

/* Does this rank run op at all (its ranks= and its comm's members)? */
static int job_graph_runs(const struct job *j, const struct sc_op *op)
{
  return sc_set_has(&op->ranks, j->grank) && job_comm_takes_part(j, op);
}

/* Is op the first (last) op of its graph that this rank runs?  A rank
 * outside some ops' comms captures, and launches, the others. */
static int job_graph_edge(const struct job *j, const struct sc_op *op, int last)
{
  const struct sc_op *end = j->sc.ops + j->sc.nops;
  for (const struct sc_op *o = last ? op + 1 : op - 1; o >= j->sc.ops && o < end && o->graph == op->graph;
       o += last ? 1 : -1)
    if (job_graph_runs(j, o))
      return 0;
  return 1;
}

unsigned job_graph_begin(struct job *j, const struct sc_op *op)
{
  if (!op->graph)
    return 0;
  struct job_graph *g = job_graph_of(j, op);
  if (g->exec) /* replay: the launch at the first op, nothing at the others */
    return JOB_HOW_NO_CALL | (job_graph_edge(j, op, 0) ? JOB_HOW_LAUNCH : 0);
  if (!g->capturing) {
    if (!g->stream)
      job_graph_ok(j, cuStreamCreate(&g->stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate", op->line);
    job_graph_ok(j, cuStreamBeginCapture_v2(g->stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL),
                 "cuStreamBeginCapture", op->line);
    g->capturing = 1;
  }
  j->cur_stream = g->stream;
  return JOB_HOW_CAPTURING;
}

static void job_graph_launch(struct job *j, const struct sc_op *op, struct job_graph *g)
{
  launch_fn launch = (launch_fn)job_driver_fn(j, "cuGraphLaunch", op->line);
  job_graph_ok(j, launch(g->exec, j->streams[0]), "cuGraphLaunch", op->line);
  if (j->verbose)
    fprintf(stderr, "rank %d: graph %s: replay %ld launched\n", j->grank, j->sc.graphs[op->graph - 1], g->replays);
  g->replays++;
}

void job_graph_end(struct job *j, const struct sc_op *op, unsigned how)
{
  if (!op->graph)
    return;
  struct job_graph *g = job_graph_of(j, op);
  if (how & JOB_HOW_LAUNCH)
    job_graph_launch(j, op, g);
  if (!(how & JOB_HOW_CAPTURING))
    return;
  j->cur_stream = NULL;
  if (!job_graph_edge(j, op, 1))
    return;
  CUgraph graph, clone;
  job_graph_ok(j, cuStreamEndCapture(g->stream, &graph), "cuStreamEndCapture", op->line);
  g->capturing = 0;
  /* instantiated from a clone, as CUDA graph libraries that keep the
   * captured graph do: the clone's executable replays the same ops */
  job_graph_ok(j, cuGraphClone(&clone, graph), "cuGraphClone", op->line);
  instantiate_fn inst = (instantiate_fn)job_driver_fn(j, "cuGraphInstantiateWithFlags", op->line);
  job_graph_ok(j, inst(&g->exec, clone, 0), "cuGraphInstantiateWithFlags", op->line);
  job_graph_ok(j, cuGraphDestroy(clone), "cuGraphDestroy", op->line);
  job_graph_ok(j, cuGraphDestroy(graph), "cuGraphDestroy", op->line);
  if (j->verbose)
    fprintf(stderr, "rank %d: graph %s captured\n", j->grank, j->sc.graphs[op->graph - 1]);
  job_graph_launch(j, op, g);
}

void job_graphs_free(struct job *j)
{
  for (int i = 0; j->graphs && i < j->sc.ngraphs; i++) {
    if (j->graphs[i].exec)
      cuGraphExecDestroy(j->graphs[i].exec);
    if (j->graphs[i].stream)
      cuStreamDestroy_v2(j->graphs[i].stream);
  }
  free(j->graphs);
  j->graphs = NULL;
}
