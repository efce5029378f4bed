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
#endif

#ifdef __cplusplus
}
#endif

#endif /* FR_SIM_H */
