/* sim.h — the internal interface of the simulator's libcuda.so.1 that its
 * libnccl.so.2 uses (tests/sim).
 *
 * The simulated CUDA driver models a stream as one worker thread draining a
 * FIFO queue of host functions; the NULL stream is a per-process default
 * stream created on first use.  Simulated NCCL launches a collective by
 * appending one function to the stream (the host call returns at once, as
 * with a real kernel launch); cuStreamSynchronize waits until the worker has
 * run everything queued so far.  These symbols are exported by
 * libcuda.so.1 next to the driver API of fr_cuda.h and are not part of it.
 */
#ifndef FR_SIM_H
#define FR_SIM_H

#include "fr_cuda.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A unit of work run on a stream's worker thread. */
typedef void (*sim_task_fn)(void *arg);

/* Appends fn(arg) to the stream's queue (NULL: the default stream).  The
 * worker calls it after everything queued before it has run.
 * CUDA_ERROR_INVALID_HANDLE for a destroyed stream; CUDA_ERROR_NOT_SUPPORTED
 * when no worker thread can be started. */
CUresult sim_stream_enqueue(CUstream stream, sim_task_fn fn, void *arg);

/* Test knob: make cuStreamIsCapturing report an active CUDA-graph capture
 * on `stream` (on != 0) or none.  Nothing else changes: work still runs. */
CUresult sim_stream_set_capturing(CUstream stream, int on);

/* Stream capture into a CUDA graph, and graphs (the driver's calls of these
 * names; not in fr_cuda.h, which lists what the recorder itself calls;
 * graph_sim.c).  Between cuStreamBeginCapture_v2 and cuStreamEndCapture the
 * work enqueued on the stream is recorded into the graph instead of
 * running, and cuStreamIsCapturing says CU_STREAM_CAPTURE_STATUS_ACTIVE
 * (cuStreamGetCaptureInfo_v2 also names the graph).  An executable made
 * with cuGraphInstantiateWithFlags runs again, at each cuGraphLaunch, what
 * was queued with sim_stream_enqueue_node (other captured work is kept but
 * never run).  cuGraphClone shares the nodes; cuGraphExecUpdate_v2 gives
 * an executable the nodes of a graph with as many nodes.  cuGraphDestroy
 * releases the graph's share of its nodes.  The legacy NULL stream cannot
 * be captured (CUDA_ERROR_INVALID_HANDLE, as CUDA's
 * cudaErrorStreamCaptureUnsupported for it). */
typedef struct CUgraph_st *CUgraph;
typedef struct CUgraphExec_st *CUgraphExec;
typedef struct CUgraphNode_st *CUgraphNode;
typedef enum { CU_STREAM_CAPTURE_MODE_GLOBAL = 0, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL = 1,
               CU_STREAM_CAPTURE_MODE_RELAXED = 2 } CUstreamCaptureMode;
CUresult cuStreamBeginCapture_v2(CUstream hStream, CUstreamCaptureMode mode);
CUresult cuStreamEndCapture(CUstream hStream, CUgraph *phGraph);
CUresult cuStreamGetCaptureInfo_v2(CUstream hStream, CUstreamCaptureStatus *captureStatus_out,
                                   unsigned long long *id_out, CUgraph *graph_out,
                                   const CUgraphNode **dependencies_out, size_t *numDependencies_out);
CUresult cuGraphDestroy(CUgraph hGraph);
CUresult cuGraphClone(CUgraph *phGraphClone, CUgraph originalGraph);
CUresult cuGraphInstantiateWithFlags(CUgraphExec *phGraphExec, CUgraph hGraph, unsigned long long flags);
CUresult cuGraphExecUpdate_v2(CUgraphExec hGraphExec, CUgraph hGraph, void *resultInfo);
CUresult cuGraphExecDestroy(CUgraphExec hGraphExec);
CUresult cuGraphLaunch(CUgraphExec hGraphExec, CUstream hStream);
/* The driver's entry points by base name (symbolStatus: 0 found, 1 not);
 * the CUDA runtime, linked statically, asks for them this way. */
CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion, unsigned long long flags,
                             int *symbolStatus);
/* Whether work enqueued on `stream` now goes into a graph (between
 * cuStreamBeginCapture_v2 and cuStreamEndCapture; not under the knob
 * sim_stream_set_capturing): 1 yes, 0 no. */
int sim_stream_graph_capturing(CUstream stream);

/* Work a graph runs again at each launch: `launch` is called on the
 * launching host thread and returns the argument of that launch's fn (NULL:
 * the launch fails); `release` frees `arg` when the last graph or
 * executable holding it goes.  Outside a capture, fn(arg) is queued as by
 * sim_stream_enqueue (launch and release unused). */
typedef void *(*sim_launch_fn)(void *arg);
typedef void (*sim_release_fn)(void *arg);
CUresult sim_stream_enqueue_node(CUstream stream, sim_task_fn fn, void *arg, sim_launch_fn launch,
                                 sim_release_fn release);
/* graph_sim.c, for cuda_sim.c: a new empty graph; a node appended (0, or
 * -1 when memory is short). */
struct CUgraph_st *sim_graph_new(void);
int sim_graph_add(struct CUgraph_st *g, sim_task_fn fn, void *arg, sim_launch_fn launch,
                  sim_release_fn release);

/* Test knob exported by the simulator's libnccl.so.2 (declared here for
 * tests): what ncclCommGetAsyncError reports for `comm` from now on; while
 * it is an error, collective and p2p calls on `comm` return it at once
 * (NCCL's ncclCommEnsureReady). */
#ifdef FR_NCCL_H
ncclResult_t sim_comm_set_async_error(ncclComm_t comm, ncclResult_t err);
/* Test knobs for the ops launched on `comm` from now on: its sends to comm
 * rank `peer` on `channel` never move (a link that stopped: the sender
 * waits in SendPeerWait, the receiver in RecvWait); its kernel stops
 * inside the op (sim_comm_stall_kernel).  SIM channels: 0 and 1. */
ncclResult_t sim_comm_stall_link(ncclComm_t comm, int peer, int channel);
ncclResult_t sim_comm_stall_kernel(ncclComm_t comm);
/* The next collective or p2p call on `comm` never returns: the calling
 * thread stays inside it (after its API profiler event started, before
 * anything reaches the stream), as a host thread stuck on a lock or a
 * blocking allocation inside NCCL. */
ncclResult_t sim_comm_hang_next_call(ncclComm_t comm);
/* The algorithm and protocol (NCCL's names: "Ring", "Tree", "CollNetDirect",
 * "CollNetChain", "NVLS", "NVLSTree", "PAT"; "LL", "LL128", "Simple"; NULL:
 * the comm's own choice) of the next collective called on `comm`, as a
 * tuner plugin that chose them for that op on this rank. */
ncclResult_t sim_comm_next_algo(ncclComm_t comm, const char *algo, const char *proto);
#endif

/* The next communicator creation of this process (ncclCommInitRank and its
 * variants, ncclCommSplit, ncclCommShrink, ncclCommInitAll) fails with
 * `err` on this rank after the rendezvous (as NCCL's init fails when a
 * device allocation of devCommSetup runs out of memory: after every
 * exchange with the other members, who complete theirs); ncclSuccess
 * clears it.  Exported by the simulator's libnccl.so.2. */
int sim_fail_next_init(int err);

#ifdef __cplusplus
}
#endif

#endif /* FR_SIM_H */
