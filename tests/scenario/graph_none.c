/* graph_none.c — the graph steps of the job's RCCL/HIP flavour
 * (fr-scenario-job-hip) in place of graph.c: the HIP stand-in has no graph
 * calls and the recorder follows CUDA graphs only, so a scenario with
 * graph=NAME stops there with an error naming the file and line.
 */
#include "config.h"

#include <stdlib.h>

#include "job.h"

unsigned job_graph_begin(struct job *j, const struct sc_op *op)
{
  if (op->graph)
    job_fatal(1, "rank %d: %s:%d: graph= runs on the CUDA flavour only (fr-scenario-job)", j->grank, j->sc.file,
              op->line);
  return 0;
}

void job_graph_end(struct job *j, const struct sc_op *op, unsigned how)
{
  (void)j;
  (void)op;
  (void)how;
}

void job_graphs_free(struct job *j)
{
  free(j->graphs);
  j->graphs = NULL;
}
