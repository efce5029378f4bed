/* fr_profiler.h — flightrec's own declaration of NCCL's profiler plugin ABI,
 * versions 5 (NCCL 2.28) and 4 (NCCL 2.27).
 *
 * NCCL dlopen()s the library named by NCCL_PROFILER_PLUGIN (a path, or
 * libnccl-profiler-NAME.so; STATIC_PLUGIN: the program itself; unset:
 * libnccl-profiler.so) when a communicator is created and looks up the data
 * symbol ncclProfiler_v5 (else _v4, ...): a struct of a name and five
 * function pointers.  It calls init once per communicator, then
 * startEvent / recordEventState / stopEvent for each event type enabled in
 * the activation mask init returns, and finalize when the comm goes.
 *
 * The field lists, numeric event-type bits and state values below are facts
 * of NCCL's documented profiler interface (ext-profiler/README.md and the
 * example plugin's profiler_v4.h / profiler_v5.h); the declarations are our
 * own.  tests/unit/check_profiler_abi.c checks the layout (sizes and
 * offsets on LP64) against the documented one, and against NVIDIA's header
 * where one is installed.
 *
 * Define FR_PROFILER_TABLES_ONLY to get the value tables without any type.
 */
#ifndef FR_PROFILER_H
#define FR_PROFILER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Event type bits (descriptor `type`, activation mask): X(name, value) */
#define FR_PROFILER_EVENT_TYPES(X) \
  X(ncclProfileGroup, 1 << 0) X(ncclProfileColl, 1 << 1) X(ncclProfileP2p, 1 << 2) \
  X(ncclProfileProxyOp, 1 << 3) X(ncclProfileProxyStep, 1 << 4) \
  X(ncclProfileProxyCtrl, 1 << 5) X(ncclProfileKernelCh, 1 << 6) \
  X(ncclProfileNetPlugin, 1 << 7) X(ncclProfileGroupApi, 1 << 8) \
  X(ncclProfileCollApi, 1 << 9) X(ncclProfileP2pApi, 1 << 10) \
  X(ncclProfileKernelLaunch, 1 << 11)

/* ncclProfilerEventState_t values (v4 and v5 share them): X(name, value).
 * A proxy step of a send goes SendGPUWait -> SendPeerWait -> SendWait ->
 * stop; of a receive RecvWait -> RecvFlushWait -> RecvGPUWait -> stop. */
#define FR_PROFILER_STATES(X) \
  X(ncclProfilerProxyOpSendPosted, 0) X(ncclProfilerProxyOpSendRemFifoWait, 1) \
  X(ncclProfilerProxyOpSendTransmitted, 2) X(ncclProfilerProxyOpSendDone, 3) \
  X(ncclProfilerProxyOpRecvPosted, 4) X(ncclProfilerProxyOpRecvReceived, 5) \
  X(ncclProfilerProxyOpRecvTransmitted, 6) X(ncclProfilerProxyOpRecvDone, 7) \
  X(ncclProfilerProxyStepSendGPUWait, 8) X(ncclProfilerProxyStepSendWait, 9) \
  X(ncclProfilerProxyStepRecvWait, 10) X(ncclProfilerProxyStepRecvFlushWait, 11) \
  X(ncclProfilerProxyStepRecvGPUWait, 12) X(ncclProfilerProxyCtrlIdle, 13) \
  X(ncclProfilerProxyCtrlActive, 14) X(ncclProfilerProxyCtrlSleep, 15) \
  X(ncclProfilerProxyCtrlWakeup, 16) X(ncclProfilerProxyCtrlAppend, 17) \
  X(ncclProfilerProxyCtrlAppendEnd, 18) X(ncclProfilerProxyOpInProgress_v4, 19) \
  X(ncclProfilerProxyStepSendPeerWait_v4, 20) X(ncclProfilerNetPluginUpdate, 21) \
  X(ncclProfilerKernelChStop, 22) X(ncclProfilerEndGroupApiStart, 23) \
  X(ncclProfilerBeginGroupApiEnd, 24)

/* Names of the struct members, for the layout check: X(member) */
#define FR_PROFILER_FUNCS(X) X(name) X(init) X(startEvent) X(stopEvent) X(recordEventState) X(finalize)

#ifndef FR_PROFILER_TABLES_ONLY

#include "fr_nccl.h"

#ifdef __cplusplus
extern "C" {
#endif

#define FR_PROFILER_ENUM_(name, value) name = (value),
enum { FR_PROFILER_EVENT_TYPES(FR_PROFILER_ENUM_) };
typedef enum { FR_PROFILER_STATES(FR_PROFILER_ENUM_) } ncclProfilerEventState_t;
typedef ncclProfilerEventState_t ncclProfilerEventState_v4_t;
typedef ncclProfilerEventState_t ncclProfilerEventState_v5_t;

/* NCCL's logger, handed to init (ncclDebugLogLevel is an int enum). */
typedef void (*ncclDebugLogger_t)(int level, unsigned long flags, const char *file, int line,
                                  const char *fmt, ...);

/* Fields of the Coll and P2p descriptors in v4 (v5 appends parentGroup). */
#define FR_PROFILER_COLL_FIELDS_                                                     \
  uint64_t seqNumber;   /* NCCL's own per-comm count of this collective */           \
  const char *func;     /* "AllReduce", ... */                                       \
  const void *sendBuff;                                                              \
  void *recvBuff;                                                                    \
  size_t count;                                                                      \
  int root;                                                                          \
  const char *datatype; /* "ncclFloat32", ... */                                     \
  uint8_t nChannels;                                                                 \
  uint8_t nWarps;                                                                    \
  const char *algo;     /* "Ring", "Tree", ... */                                    \
  const char *proto;    /* "LL", "LL128", "Simple" */
#define FR_PROFILER_P2P_FIELDS_                                                      \
  const char *func;     /* "Send" / "Recv" */                                        \
  void *buff;                                                                        \
  const char *datatype;                                                              \
  size_t count;                                                                      \
  int peer;                                                                          \
  uint8_t nChannels;

/* Members common to the v4 and v5 descriptor unions. */
#define FR_PROFILER_PROXY_MEMBERS_                                                   \
  struct {                                                                           \
    pid_t pid;          /* process that started the op (PXN: maybe not this one) */  \
    uint8_t channelId;                                                               \
    int peer;           /* comm rank of the remote side */                           \
    int nSteps;                                                                      \
    int chunkSize;      /* bytes */                                                  \
    int isSend;                                                                      \
  } proxyOp;                                                                         \
  struct {                                                                           \
    int step;                                                                        \
  } proxyStep;                                                                       \
  struct {                                                                           \
    uint8_t channelId;                                                               \
    uint64_t pTimer;    /* GPU globaltimer at start */                               \
  } kernelCh;                                                                        \
  struct {                                                                           \
    int64_t id;                                                                      \
    void *data;                                                                      \
  } netPlugin;

/* An event to start (v5, NCCL 2.28). */
typedef struct {
  uint64_t type;        /* one ncclProfile* bit */
  void *parentObj;      /* handle of the parent event (ProxyOp: maybe another process's) */
  int rank;             /* comm rank of the caller */
  union {
    struct {
      int graphCaptured;
      int groupDepth;
    } groupApi;
    struct {
      const char *func; /* "AllReduce", ... */
      size_t count;     /* elements */
      const char *datatype; /* "ncclFloat32", ... */
      int root;
      void *stream;
      bool graphCaptured;
    } collApi;
    struct {
      const char *func; /* "Send" / "Recv" */
      size_t count;
      const char *datatype;
      void *stream;
      bool graphCaptured;
    } p2pApi;
    struct {
      void *stream;
    } kernelLaunch;
    struct {
      FR_PROFILER_COLL_FIELDS_
      void *parentGroup;
    } coll;
    struct {
      FR_PROFILER_P2P_FIELDS_
      void *parentGroup;
    } p2p;
    FR_PROFILER_PROXY_MEMBERS_
  };
} ncclProfilerEventDescr_v5_t;

/* An event to start (v4, NCCL 2.27): a one-byte type, no API events. */
typedef struct {
  uint8_t type;
  void *parentObj;
  int rank;
  union {
    struct {
      FR_PROFILER_COLL_FIELDS_
    } coll;
    struct {
      FR_PROFILER_P2P_FIELDS_
    } p2p;
    FR_PROFILER_PROXY_MEMBERS_
  };
} ncclProfilerEventDescr_v4_t;

/* Optional arguments of a state change (same in v4 and v5). */
typedef union {
  struct {
    size_t transSize;
  } proxyStep;
  struct {
    int appendedProxyOps;
  } proxyCtrl;
  struct {
    void *data;
  } netPlugin;
  struct {
    uint64_t pTimer;
  } kernelCh;
} ncclProfilerEventStateArgs_v5_t;
typedef ncclProfilerEventStateArgs_v5_t ncclProfilerEventStateArgs_v4_t;

typedef struct {
  const char *name;
  ncclResult_t (*init)(void **context, uint64_t commId, int *eActivationMask, const char *commName,
                       int nNodes, int nranks, int rank, ncclDebugLogger_t logfn);
  ncclResult_t (*startEvent)(void *context, void **eHandle, ncclProfilerEventDescr_v5_t *eDescr);
  ncclResult_t (*stopEvent)(void *eHandle);
  ncclResult_t (*recordEventState)(void *eHandle, ncclProfilerEventState_v5_t eState,
                                   ncclProfilerEventStateArgs_v5_t *eStateArgs);
  ncclResult_t (*finalize)(void *context);
} ncclProfiler_v5_t;

typedef struct {
  const char *name;
  ncclResult_t (*init)(void **context, int *eActivationMask, const char *commName, uint64_t commHash,
                       int nNodes, int nranks, int rank, ncclDebugLogger_t logfn);
  ncclResult_t (*startEvent)(void *context, void **eHandle, ncclProfilerEventDescr_v4_t *eDescr);
  ncclResult_t (*stopEvent)(void *eHandle);
  ncclResult_t (*recordEventState)(void *eHandle, ncclProfilerEventState_v4_t eState,
                                   ncclProfilerEventStateArgs_v4_t *eStateArgs);
  ncclResult_t (*finalize)(void *context);
} ncclProfiler_v4_t;

#ifdef __cplusplus
}
#endif

#endif /* FR_PROFILER_TABLES_ONLY */
#endif /* FR_PROFILER_H */
