/* model.c — the faults of fr-scenario-job that change how a collective or
 * p2p call is made (tests/scenarios/README.md, "Faults"), and the
 * all-to-all-v op:
 *
 *   no-return       the call never returns (a simulator knob of its handle)
 *   algo= proto=    the algorithm / protocol of a collective on this rank
 *                   (the op's own settings, or a fault's; a knob)
 *   capture         the call goes to a side stream that is being captured
 *                   into a CUDA graph, which is never launched
 *   no-group-end    ncclGroupStart before the call, no ncclGroupEnd ever
 *   alltoallv       one group of ncclSend/ncclRecv with per-peer counts,
 *                   as PyTorch's all_to_all_single with split sizes issues
 *                   it (zero counts not posted), splits= changing them
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "job.h"
#include "sim.h"

enum { JOB_HOW_CAPTURE = 1, JOB_HOW_OPEN_GROUP = 2 };

CUstream job_stream(const struct job *j, int comm, int dev)
{
  if (j->cur_stream)
    return j->cur_stream;
  return j->streams[j->comms[comm].ndev > 1 ? dev : 0];
}

void job_model_knobs(const struct job *j, const struct sc_op *op, int dev, const struct sc_fault *const *fs, int nf)
{
  ncclComm_t comm = j->comms[op->comm].h[dev];
  const char *algo = op->algo[0] ? op->algo : NULL, *proto = op->proto[0] ? op->proto : NULL;
  int hang = 0;
  for (int i = 0; i < nf; i++) {
    const struct sc_fault *f = fs[i];
    if (!job_fault_for(f, -1) && !job_fault_for(f, dev))
      continue;
    if (f->actions & SC_F_ALGO)
      algo = f->algo;
    if (f->actions & SC_F_PROTO)
      proto = f->proto;
    hang |= (f->actions & SC_F_NO_RETURN) != 0;
  }
  if (algo || proto)
    job_nccl_check(j, sim_comm_next_algo(comm, algo, proto), "algo/proto", op->line);
  if (hang)
    job_nccl_check(j, sim_comm_hang_next_call(comm), "no-return", op->line);
}

static void job_cuda_ok(const struct job *j, CUresult rc, const char *what, int line)
{
  if (rc != CUDA_SUCCESS)
    job_fatal(1, "rank %d: %s (%s:%d) failed: CUDA error %d", j->grank, what, j->sc.file, line, (int)rc);
}

unsigned job_call_begin(struct job *j, const struct sc_op *op, int dev, const struct sc_fault *const *fs, int nf)
{
  unsigned act = 0, how = 0;
  for (int i = 0; i < nf; i++)
    if (job_fault_for(fs[i], -1) || job_fault_for(fs[i], dev))
      act |= fs[i]->actions;
  if (act & SC_F_NO_GROUP_END) {
    /* ops called later by this thread join the group too (NCCL launches
     * nothing before the outermost ncclGroupEnd) */
    struct job_ncall g = { .what = JN_GROUP_START };
    job_nccl_check(j, job_ncall(op->site, &g), "ncclGroupStart", op->line);
    j->group_depth++;
    how |= JOB_HOW_OPEN_GROUP;
  }
  if (act & SC_F_CAPTURE) {
    if (!j->capture)
      job_cuda_ok(j, cuStreamCreate(&j->capture, CU_STREAM_NON_BLOCKING), "cuStreamCreate", op->line);
    /* thread-local mode, as PyTorch's torch.cuda.graph captures */
    job_cuda_ok(j, cuStreamBeginCapture_v2(j->capture, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL),
                "cuStreamBeginCapture", op->line);
    j->cur_stream = j->capture;
    how |= JOB_HOW_CAPTURE;
  }
  return how | job_graph_begin(j, op);
}

void job_call_end(struct job *j, const struct sc_op *op, unsigned how)
{
  job_graph_end(j, op, how);
  if (!(how & JOB_HOW_CAPTURE))
    return;
  CUgraph graph;
  job_cuda_ok(j, cuStreamEndCapture(j->capture, &graph), "cuStreamEndCapture", op->line);
  job_cuda_ok(j, cuGraphDestroy(graph), "cuGraphDestroy", op->line); /* never launched */
  j->cur_stream = NULL;
  if (j->verbose)
    fprintf(stderr, "rank %d: %s on %s captured into a graph that is never launched\n", j->grank,
            sc_kind_name(op->kind), j->sc.comms[op->comm].name);
}

/* Elements comm rank `from` sends to comm rank `to`, by expr. */
static size_t job_split(const struct job *j, const struct sc_op *op, const char *expr, int line, long from, long to)
{
  long v = job_eval_as(j, expr, "counts", op->comm, from, to, line);
  if (v < 0) {
    fprintf(stderr, "%s:%d: counts=%s is negative from comm rank %ld to %ld on rank %d\n", j->sc.file, line, expr,
            from, to, j->grank);
    exit(2);
  }
  return (size_t)v;
}

void job_alltoallv(struct job *j, int idx, int dev, const struct sc_op *op, const struct sc_fault *const *fs, int nf)
{
  const char *expr = op->counts;
  int line = op->line;
  for (int i = 0; i < nf; i++)
    if ((fs[i]->actions & SC_F_SPLITS) && (job_fault_for(fs[i], -1) || job_fault_for(fs[i], dev))) {
      expr = fs[i]->splits;
      line = fs[i]->line;
    }
  int n = j->sc.comms[op->comm].size_of[j->grank];
  long me = job_comm_rank(j, op->comm, dev);
  size_t *sc = calloc(2 * (size_t)n, sizeof *sc), *rc = sc + n, stotal = 0, rtotal = 0;
  if (!sc)
    job_fatal(1, "out of memory");
  for (int p = 0; p < n; p++) {
    sc[p] = job_split(j, op, expr, line, me, p);
    rc[p] = job_split(j, op, expr, line, p, me);
    stotal += sc[p];
    rtotal += rc[p];
  }
  size_t es = sc_dtype_size(op->dtype);
  job_buffers(j, idx, dev, stotal * es, rtotal * es);
  const struct job_buf *b = &j->bufs[idx * j->nstreams + dev];
  struct job_ncall c = { .what = JN_GROUP_START };
  job_nccl_check(j, job_ncall(op->site, &c), "ncclGroupStart", op->line);
  size_t soff = 0, roff = 0;
  for (int p = 0; p < n; p++) {
    /* PyTorch (all2all_single_unequal_split): "NCCL uses 0 byte message
     * for synchronization", so a zero count is not called at all */
    struct job_ncall x = { .what = JN_COLL, .comm = j->comms[op->comm].h[dev], .dtype = op->dtype, .peer = p };
    x.stream = job_stream(j, op->comm, dev);
    if (sc[p]) {
      x.kind = SC_SEND;
      x.count = sc[p];
      x.send = (const void *)(uintptr_t)(b->send + soff * es);
      job_nccl_check(j, job_ncall(op->site, &x), "ncclSend of alltoallv", op->line);
    }
    if (rc[p]) {
      x.kind = SC_RECV;
      x.count = rc[p];
      x.recv = (void *)(uintptr_t)(b->recv + roff * es);
      job_nccl_check(j, job_ncall(op->site, &x), "ncclRecv of alltoallv", op->line);
    }
    soff += sc[p];
    roff += rc[p];
  }
  c.what = JN_GROUP_END;
  job_nccl_check(j, job_ncall(op->site, &c), "ncclGroupEnd", op->line);
  free(sc);
}
