/* Compile-time check: our declaration of NCCL's profiler plugin ABI
 * (librecorder/nccl/fr_profiler.h) against the layout NCCL documents for
 * x86-64 / aarch64 Linux (LP64): the numeric event-type bits and state
 * values, and the size and offset of every field NCCL 2.27 (v4) and 2.28
 * (v5) read or write.  The expected numbers below are written out from
 * the documented field lists (ext-profiler/README.md, profiler_v4.h,
 * profiler_v5.h), not computed from our header.  Where configure found
 * NVIDIA's own profiler header, check_profiler_real.c compares with it
 * too.  The program itself does nothing: compiling it is the test. */
#include <stddef.h>

#include "fr_profiler.h"

#if defined(__LP64__) && (defined(__x86_64__) || defined(__aarch64__))

#define EQ(a, b) _Static_assert((a) == (b), #a " == " #b);

/* event type bits */
EQ(ncclProfileGroup, 1) EQ(ncclProfileColl, 2) EQ(ncclProfileP2p, 4) EQ(ncclProfileProxyOp, 8)
EQ(ncclProfileProxyStep, 16) EQ(ncclProfileProxyCtrl, 32) EQ(ncclProfileKernelCh, 64)
EQ(ncclProfileNetPlugin, 128) EQ(ncclProfileGroupApi, 256) EQ(ncclProfileCollApi, 512)
EQ(ncclProfileP2pApi, 1024) EQ(ncclProfileKernelLaunch, 2048)

/* states: proxy steps, kernel channel, proxy ops */
EQ(ncclProfilerProxyStepSendGPUWait, 8) EQ(ncclProfilerProxyStepSendWait, 9)
EQ(ncclProfilerProxyStepRecvWait, 10) EQ(ncclProfilerProxyStepRecvFlushWait, 11)
EQ(ncclProfilerProxyStepRecvGPUWait, 12) EQ(ncclProfilerProxyOpInProgress_v4, 19)
EQ(ncclProfilerProxyStepSendPeerWait_v4, 20) EQ(ncclProfilerKernelChStop, 22)
EQ(sizeof(ncclProfilerEventState_v5_t), 4)

/* v5 event descriptor */
typedef ncclProfilerEventDescr_v5_t d5;
EQ(sizeof(d5), 112) EQ(offsetof(d5, type), 0) EQ(sizeof(((d5 *)0)->type), 8)
EQ(offsetof(d5, parentObj), 8) EQ(offsetof(d5, rank), 16)
EQ(offsetof(d5, groupApi.graphCaptured), 24) EQ(offsetof(d5, groupApi.groupDepth), 28)
EQ(offsetof(d5, collApi.func), 24) EQ(offsetof(d5, collApi.count), 32)
EQ(offsetof(d5, collApi.datatype), 40) EQ(offsetof(d5, collApi.root), 48)
EQ(offsetof(d5, collApi.stream), 56) EQ(offsetof(d5, collApi.graphCaptured), 64)
EQ(offsetof(d5, p2pApi.stream), 48) EQ(offsetof(d5, p2pApi.graphCaptured), 56)
EQ(offsetof(d5, kernelLaunch.stream), 24)
EQ(offsetof(d5, coll.seqNumber), 24) EQ(offsetof(d5, coll.func), 32) EQ(offsetof(d5, coll.sendBuff), 40)
EQ(offsetof(d5, coll.recvBuff), 48) EQ(offsetof(d5, coll.count), 56) EQ(offsetof(d5, coll.root), 64)
EQ(offsetof(d5, coll.datatype), 72) EQ(offsetof(d5, coll.nChannels), 80) EQ(offsetof(d5, coll.nWarps), 81)
EQ(offsetof(d5, coll.algo), 88) EQ(offsetof(d5, coll.proto), 96) EQ(offsetof(d5, coll.parentGroup), 104)
EQ(offsetof(d5, p2p.func), 24) EQ(offsetof(d5, p2p.buff), 32) EQ(offsetof(d5, p2p.datatype), 40)
EQ(offsetof(d5, p2p.count), 48) EQ(offsetof(d5, p2p.peer), 56) EQ(offsetof(d5, p2p.nChannels), 60)
EQ(offsetof(d5, p2p.parentGroup), 64)
EQ(offsetof(d5, proxyOp.pid), 24) EQ(offsetof(d5, proxyOp.channelId), 28) EQ(offsetof(d5, proxyOp.peer), 32)
EQ(offsetof(d5, proxyOp.nSteps), 36) EQ(offsetof(d5, proxyOp.chunkSize), 40) EQ(offsetof(d5, proxyOp.isSend), 44)
EQ(offsetof(d5, proxyStep.step), 24)
EQ(offsetof(d5, kernelCh.channelId), 24) EQ(offsetof(d5, kernelCh.pTimer), 32)
EQ(offsetof(d5, netPlugin.id), 24) EQ(offsetof(d5, netPlugin.data), 32)

/* v4 event descriptor: a one-byte type, no API events, no parentGroup */
typedef ncclProfilerEventDescr_v4_t d4;
EQ(sizeof(d4), 104) EQ(sizeof(((d4 *)0)->type), 1) EQ(offsetof(d4, parentObj), 8) EQ(offsetof(d4, rank), 16)
EQ(offsetof(d4, coll.seqNumber), 24) EQ(offsetof(d4, coll.nChannels), 80) EQ(offsetof(d4, coll.proto), 96)
EQ(offsetof(d4, p2p.peer), 56) EQ(offsetof(d4, p2p.nChannels), 60)
EQ(offsetof(d4, proxyOp.channelId), 28) EQ(offsetof(d4, proxyOp.isSend), 44)
EQ(offsetof(d4, kernelCh.pTimer), 32)

/* state arguments */
EQ(sizeof(ncclProfilerEventStateArgs_v5_t), 8) EQ(sizeof(ncclProfilerEventStateArgs_v4_t), 8)

/* the plugin structs: a name, then init, startEvent, stopEvent, recordEventState, finalize */
EQ(sizeof(ncclProfiler_v5_t), 48) EQ(sizeof(ncclProfiler_v4_t), 48)
EQ(offsetof(ncclProfiler_v5_t, init), 8) EQ(offsetof(ncclProfiler_v5_t, startEvent), 16)
EQ(offsetof(ncclProfiler_v5_t, stopEvent), 24) EQ(offsetof(ncclProfiler_v5_t, recordEventState), 32)
EQ(offsetof(ncclProfiler_v5_t, finalize), 40)
EQ(offsetof(ncclProfiler_v4_t, init), 8) EQ(offsetof(ncclProfiler_v4_t, finalize), 40)

/* argument order of init: v5 (context, commId, mask, commName, ...), v4 (context, mask, commName, commHash, ...) */
_Static_assert(__builtin_types_compatible_p(__typeof__(((ncclProfiler_v5_t *)0)->init),
                                            ncclResult_t (*)(void **, uint64_t, int *, const char *, int, int,
                                                             int, ncclDebugLogger_t)),
               "v5 init prototype");
_Static_assert(__builtin_types_compatible_p(__typeof__(((ncclProfiler_v4_t *)0)->init),
                                            ncclResult_t (*)(void **, int *, const char *, uint64_t, int, int,
                                                             int, ncclDebugLogger_t)),
               "v4 init prototype");

#endif

int main(void) { return 0; }
