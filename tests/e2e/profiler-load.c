/* profiler-load — load librecorder.so the way NCCL loads a profiler plugin
 * and drive it through one collective's events.
 *
 *   profiler-load LIBRARY
 *
 * Like NCCL 2.27/2.28: dlopen(LIBRARY, RTLD_NOW | RTLD_LOCAL) (no preload),
 * dlsym("ncclProfiler_v5") and ("ncclProfiler_v4"), init per communicator,
 * then events.  Checks what NCCL relies on: both symbols, a name and five
 * functions; init succeeds and asks for Coll, P2p, ProxyOp, ProxyStep and
 * KernelCh (plus the API events for a comm the interposer did not see);
 * handles for the events, none for a proxy op of another process (PXN);
 * that loading pointed NCCL_PROFILER_PLUGIN at the library when it was
 * unset, and left a user's value alone.  Prints one line per check; exit 0
 * when all pass.
 */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fr_profiler.h"

static int failures;

static void check(int ok, const char *what)
{
  printf("%s: %s\n", ok ? "ok" : "FAIL", what);
  failures += !ok;
}

/* Starts a ProxyStep (step `n`) or KernelCh (channel `n`) event under
 * `parent` and checks it got a handle. */
static void *child(const ncclProfiler_v5_t *p, void *ctx, uint64_t type, void *parent, int n, const char *what)
{
  ncclProfilerEventDescr_v5_t d;
  void *h = NULL;
  memset(&d, 0, sizeof d);
  d.type = type;
  d.parentObj = parent;
  if (type == ncclProfileProxyStep)
    d.proxyStep.step = n;
  else
    d.kernelCh.channelId = (uint8_t)n;
  p->startEvent(ctx, &h, &d);
  check(h != NULL, what);
  return h;
}

static void drive_v5(const ncclProfiler_v5_t *p)
{
  void *ctx = NULL;
  int mask = 0;
  check(p->init(&ctx, 0x1234abcdull, &mask, "fr-test", 1, 4, 1, NULL) == ncclSuccess && ctx,
        "v5 init returns a context");
  int want = ncclProfileColl | ncclProfileP2p | ncclProfileProxyOp | ncclProfileProxyStep | ncclProfileKernelCh;
  check((mask & want) == want, "v5 mask covers Coll, P2p, ProxyOp, ProxyStep, KernelCh");
  check((mask & (ncclProfileCollApi | ncclProfileP2pApi)) != 0,
        "v5 mask adds CollApi/P2pApi for a comm the interposer did not see (static NCCL)");
  ncclProfilerEventDescr_v5_t d;
  memset(&d, 0, sizeof d);
  d.type = ncclProfileColl;
  d.rank = 1;
  d.coll.seqNumber = 0, d.coll.func = "AllReduce", d.coll.count = 1024, d.coll.datatype = "ncclFloat32";
  d.coll.nChannels = 2, d.coll.algo = "Ring", d.coll.proto = "Simple";
  void *coll = NULL, *op = NULL, *pxn = NULL, *step = NULL, *kch = NULL;
  p->startEvent(ctx, &coll, &d);
  check(coll != NULL, "Coll event handle");
  memset(&d, 0, sizeof d);
  d.type = ncclProfileProxyOp;
  d.parentObj = coll;
  d.proxyOp.pid = getpid(), d.proxyOp.channelId = 1, d.proxyOp.peer = 2, d.proxyOp.nSteps = 4;
  d.proxyOp.isSend = 1;
  p->startEvent(ctx, &op, &d);
  check(op != NULL, "ProxyOp event handle");
  d.proxyOp.pid = getpid() + 1; /* started by another process (PXN): its parent is not ours */
  d.parentObj = (void *)(uintptr_t)0x1; /* never dereferenced */
  p->startEvent(ctx, &pxn, &d);
  check(pxn == NULL, "ProxyOp of another process ignored");
  step = child(p, ctx, ncclProfileProxyStep, op, 0, "ProxyStep event handle");
  check(p->recordEventState(step, ncclProfilerProxyStepSendGPUWait, NULL) == ncclSuccess &&
            p->recordEventState(step, ncclProfilerProxyStepSendPeerWait_v4, NULL) == ncclSuccess,
        "ProxyStep states recorded");
  kch = child(p, ctx, ncclProfileKernelCh, coll, 1, "KernelCh event handle");
  check(p->stopEvent(step) == ncclSuccess && p->stopEvent(op) == ncclSuccess &&
            p->stopEvent(kch) == ncclSuccess && p->stopEvent(coll) == ncclSuccess &&
            p->stopEvent(NULL) == ncclSuccess,
        "events stop (a NULL handle too)");
  check(p->finalize(ctx) == ncclSuccess, "v5 finalize");
}

static void drive_v4(const ncclProfiler_v4_t *p)
{
  void *ctx = NULL, *coll = NULL;
  int mask = 0;
  check(p->init(&ctx, &mask, "fr-test-v4", 0x5678ull, 1, 2, 0, NULL) == ncclSuccess && ctx,
        "v4 init returns a context");
  ncclProfilerEventDescr_v4_t d;
  memset(&d, 0, sizeof d);
  d.type = ncclProfileP2p;
  d.p2p.func = "Send", d.p2p.count = 8, d.p2p.datatype = "ncclInt32", d.p2p.peer = 1, d.p2p.nChannels = 1;
  p->startEvent(ctx, &coll, &d);
  check(coll != NULL, "v4 P2p event handle");
  check(p->stopEvent(coll) == ncclSuccess && p->finalize(ctx) == ncclSuccess, "v4 stop and finalize");
}

int main(int argc, char **argv)
{
  if (argc != 2) {
    fprintf(stderr, "usage: profiler-load LIBRARY\n");
    return 2;
  }
  const char *before = getenv("NCCL_PROFILER_PLUGIN");
  char *user = before ? strdup(before) : NULL;
  void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    fprintf(stderr, "profiler-load: %s\n", dlerror());
    return 1;
  }
  const char *after = getenv("NCCL_PROFILER_PLUGIN");
  char self[PATH_MAX];
  if (!realpath(argv[1], self))
    snprintf(self, sizeof self, "%s", argv[1]);
  if (user)
    check(after && !strcmp(after, user), "a user's NCCL_PROFILER_PLUGIN is left as it was");
  else if (getenv("FR_PROFILER_MASK") && !strcmp(getenv("FR_PROFILER_MASK"), "0"))
    check(after == NULL, "FR_PROFILER_MASK=0: NCCL_PROFILER_PLUGIN not set");
  else
    check(after && !strcmp(after, self), "loading sets NCCL_PROFILER_PLUGIN to the library's own path");
  const ncclProfiler_v5_t *p5 = dlsym(h, "ncclProfiler_v5");
  const ncclProfiler_v4_t *p4 = dlsym(h, "ncclProfiler_v4");
  check(p5 && p5->name && p5->init && p5->startEvent && p5->stopEvent && p5->recordEventState && p5->finalize,
        "ncclProfiler_v5: a name and five functions");
  check(p4 && p4->name && p4->init && p4->startEvent && p4->stopEvent && p4->recordEventState && p4->finalize,
        "ncclProfiler_v4: a name and five functions");
  if (p5 && getenv("FR_PROFILER_MASK") && !strcmp(getenv("FR_PROFILER_MASK"), "0")) {
    void *ctx = (void *)1;
    int mask = -1;
    check(p5->init(&ctx, 1, &mask, NULL, 1, 2, 0, NULL) == ncclSuccess && mask == 0,
          "FR_PROFILER_MASK=0: init asks for no event");
  } else {
    if (p5)
      drive_v5(p5);
    if (p4)
      drive_v4(p4);
  }
  free(user);
  printf("%d check(s) failed\n", failures);
  return failures ? 1 : 0;
}
