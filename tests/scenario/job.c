/* job.c — fr-scenario-job: a small training loop driven by a scenario file
 * (tests/scenarios/README.md), run as one process per rank by fr-launch.
 *
 *   fr-scenario-job [-v] SCENARIO          run rank $RANK of $WORLD_SIZE
 *   fr-scenario-job --print-world SCENARIO print the world size
 *   fr-scenario-job --print-env SCENARIO   print the env NAME=VALUE lines
 *   fr-scenario-job --print-time-limit SCENARIO  print time-limit (0: unset)
 *   fr-scenario-job --print-launch SCENARIO      per-rank launcher lines
 *
 * Exit 0 after the loop; 1 when an NCCL/CUDA call fails (or a watchdog
 * with then=exit fires); 2 for a bad scenario or environment (message
 * "FILE:LINE: ..." for the file).  The communicators live in lifecycle.c,
 * the NCCL calls are made in sites.c.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "job.h"
#include "sim.h"


/* Exported (the job is linked with -rdynamic) so that the thread stacks in
 * the dumps name them. */
void job_stop_forever(void) __attribute__((noreturn));
void job_block_in_read(void) __attribute__((noreturn));
void job_run_op(struct job *j, int step, int idx, const struct sc_fault **fs);
void job_step(struct job *j, int step, int *order, const struct sc_fault **fs);
void job_wait_streams(struct job *j, const char *where);
void job_watchdog_fire(struct job *j, const char *where, ncclResult_t err, int comm);

void job_fatal(int status, const char *fmt, ...)
{
  va_list ap;
  fputs("fr-scenario-job: ", stderr);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  exit(status);
}

static void job_sleep_ms(long ms)
{
  struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
    ;
}

/* An integer environment variable; -1 when unset. */
static long job_env_int(const char *name)
{
  const char *s = getenv(name);
  if (!s || !*s)
    return -1;
  char *end;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (errno || *end || v < 0 || v >= SC_MAX_WORLD)
    job_fatal(2, "%s='%s' is not a rank number", name, s);
  return v;
}

/* RANK/WORLD_SIZE (or LOCAL_*) from the launcher, checked against the file. */
static void job_identity(struct job *j)
{
  long rank = job_env_int("RANK"), size = job_env_int("WORLD_SIZE");
  if (rank < 0)
    rank = job_env_int("LOCAL_RANK");
  if (size < 0)
    size = job_env_int("LOCAL_WORLD_SIZE");
  if (size < 0)
    size = j->sc.world;
  if (rank < 0 && size == 1)
    rank = 0;
  if (rank < 0)
    job_fatal(2, "RANK (or LOCAL_RANK) is not set; start the ranks with fr-launch");
  if (size != j->sc.world)
    job_fatal(2, "%s: the scenario is for world %d, but WORLD_SIZE is %ld", j->sc.file, j->sc.world, size);
  if (rank >= size)
    job_fatal(2, "RANK %ld is outside WORLD_SIZE %ld", rank, size);
  j->grank = (int)rank;
}

void job_nccl_check(const struct job *j, ncclResult_t rc, const char *what, int line)
{
  if (rc != ncclSuccess)
    job_fatal(1, "rank %d: %s (%s:%d) failed: %s", j->grank, what, j->sc.file, line, ncclGetErrorString(rc));
}

static void job_cuda_check(const struct job *j, CUresult rc, const char *what)
{
  if (rc != CUDA_SUCCESS)
    job_fatal(1, "rank %d: %s failed: CUDA error %d", j->grank, what, (int)rc);
}

/* The host waits for every stream (the main one and the devices'). */
static void job_sync_all(const struct job *j)
{
  for (int d = 0; d < j->nstreams; d++)
    job_cuda_check(j, cuStreamSynchronize(j->streams[d]), "cuStreamSynchronize");
}

/* This rank's rank in comm `comm` (device dev's, for an initall comm). */
long job_comm_rank(const struct job *j, int comm, int dev)
{
  const struct sc_comm *cm = &j->sc.comms[comm];
  return cm->how == SC_COMM_INITALL ? dev : cm->rank_of[j->grank];
}

long job_eval_as(const struct job *j, const char *expr, const char *what, int comm, long rank, long peer,
                 int line)
{
  const struct sc_comm *cm = &j->sc.comms[comm];
  struct sc_vars v = { rank, cm->size_of[j->grank], j->grank, j->sc.world, peer, peer >= 0 };
  char err[128];
  long out;
  if (sc_expr_eval(expr, &v, &out, err, sizeof err) != 0) {
    fprintf(stderr, "%s:%d: %s=%s on rank %d: %s\n", j->sc.file, line, what, expr, j->grank, err);
    exit(2);
  }
  return out;
}

/* Evaluates an op's expression with this rank's variables in that comm;
 * a runtime error (e.g. division by zero) is a scenario error: exit 2. */
static long job_eval(const struct job *j, const char *expr, const char *what, int comm, int dev, int line)
{
  return job_eval_as(j, expr, what, comm, job_comm_rank(j, comm, dev), -1, line);
}

/* Whether fault f applies to the whole op (dev < 0: it has no dev=) or to
 * device dev's call (it has dev= naming dev). */
int job_fault_for(const struct sc_fault *f, int dev)
{
  return dev < 0 ? !f->has_dev : f->has_dev && sc_set_has(&f->devs, dev);
}

/* The call an op makes on this rank and device, with the faults' changes
 * applied (those of the whole op and of that device). */
static void job_resolve(const struct job *j, const struct sc_op *op, const struct sc_fault *const *fs, int nf,
                        int dev, struct job_call *call)
{
  call->kind = op->kind;
  call->comm = op->comm;
  call->dtype = op->dtype;
  call->redop = op->redop;
  const char *count = op->count, *root = op->root, *peer = op->peer;
  int line_count = op->line, line_root = op->line, line_peer = op->line;
  for (int i = 0; i < nf; i++) {
    const struct sc_fault *f = fs[i];
    if (!job_fault_for(f, -1) && !job_fault_for(f, dev))
      continue;
    if (f->actions & SC_F_COLL) call->kind = f->coll;
    if (f->actions & SC_F_DTYPE) call->dtype = f->dtype;
    if (f->actions & SC_F_REDOP) call->redop = f->redop;
    if (f->actions & SC_F_COUNT) { count = f->count; line_count = f->line; }
    if (f->actions & SC_F_ROOT) { root = f->root; line_root = f->line; }
    if (f->actions & SC_F_PEER) { peer = f->peer; line_peer = f->line; }
  }
  call->count = job_eval(j, count, "count", call->comm, dev, line_count);
  if (call->count < 0) {
    fprintf(stderr, "%s:%d: count=%s is negative on rank %d\n", j->sc.file, line_count, count, j->grank);
    exit(2);
  }
  call->root = job_eval(j, root, "root", call->comm, dev, line_root);
  call->peer = 0;
  if (call->kind == SC_SEND || call->kind == SC_RECV) {
    long size = j->sc.comms[call->comm].size_of[j->grank];
    long p = job_eval(j, peer, "peer", call->comm, dev, line_peer) % size;
    call->peer = p < 0 ? p + size : p;
  }
}

/* Makes sure op idx has buffers of at least these sizes on device dev. */
void job_buffers(struct job *j, int idx, int dev, size_t send_bytes, size_t recv_bytes)
{
  struct job_buf *b = &j->bufs[idx * j->nstreams + dev];
  CUdeviceptr *slots[2] = { &b->send, &b->recv };
  size_t *caps[2] = { &b->send_cap, &b->recv_cap };
  size_t need[2] = { send_bytes, recv_bytes };
  for (int k = 0; k < 2; k++) {
    if (*slots[k] && *caps[k] >= need[k])
      continue;
    if (*slots[k]) {
      CUdeviceptr *grave = realloc(j->grave, (size_t)(j->ngrave + 1) * sizeof *grave);
      if (!grave)
        job_fatal(1, "out of memory");
      j->grave = grave;
      j->grave[j->ngrave++] = *slots[k];
    }
    size_t cap = need[k] > 0 ? need[k] : 1;
    job_cuda_check(j, cuMemAlloc_v2(slots[k], cap), "cuMemAlloc");
    *caps[k] = cap;
  }
}

/* Issues one collective or p2p call on device dev's handle and stream. */
static void job_call_nccl(struct job *j, int idx, int dev, const struct sc_op *op, const struct job_call *c)
{
  size_t n = (size_t)j->sc.comms[c->comm].size_of[j->grank];
  size_t es = sc_dtype_size(c->dtype);
  size_t cnt = (size_t)c->count, one = cnt * es, all = one * n;
  size_t sb = one, rb = one;
  if (c->kind == SC_ALLGATHER || c->kind == SC_GATHER) rb = all;
  if (c->kind == SC_REDUCESCATTER || c->kind == SC_SCATTER) sb = all;
  if (c->kind == SC_ALLTOALL) sb = rb = all;
  job_buffers(j, idx, dev, sb, rb);
  const struct job_buf *b = &j->bufs[idx * j->nstreams + dev];
  struct job_ncall nc = { .what = JN_COLL, .kind = c->kind, .comm = j->comms[c->comm].h[dev] };
  nc.send = (const void *)(uintptr_t)b->send;
  nc.recv = (void *)(uintptr_t)b->recv;
  nc.count = cnt;
  nc.dtype = c->dtype;
  nc.redop = c->redop;
  nc.root = (int)c->root;
  nc.peer = (int)c->peer;
  nc.stream = job_stream(j, c->comm, dev);
  char what[64];
  snprintf(what, sizeof what, "%s on %s", sc_kind_name(c->kind), j->sc.comms[c->comm].name);
  job_nccl_check(j, job_ncall(op->site, &nc), what, op->line);
}

/* Names the actions of a fault mask for -v ("stop count"). */
static void job_actions_text(unsigned act, char *buf, size_t size)
{
  static const char *names[] = { "stop", "skip", "exit", "crash", "extra", "count", "dtype",
                                 "redop", "root", "peer", "coll", "sleep", "swap", "trigger",
                                 "stall-link", "stall-kernel", "block-read", "async-error", "busy-stream",
                                 "init-fail", "no-return", "algo", "proto", "splits", "capture", "no-group-end" };
  size_t used = 0;
  buf[0] = '\0';
  for (unsigned i = 0; i < sizeof names / sizeof names[0]; i++)
    if ((act & (1u << i)) && used + strlen(names[i]) + 2 < size)
      used += (size_t)snprintf(buf + used, size - used, "%s%s", used ? " " : "", names[i]);
}

/* The faults of this rank at (step, op idx), in file order. */
static int job_faults_at(const struct job *j, int step, int idx, const struct sc_fault **out)
{
  int n = 0;
  for (int i = 0; i < j->sc.nfaults; i++) {
    const struct sc_fault *f = &j->sc.faults[i];
    if (f->op == idx && sc_set_has(&f->ranks, j->grank) && sc_set_has(&f->steps, step))
      out[n++] = f;
  }
  return n;
}

/* Asks every rank to dump, as `fr-dump --trigger` does: creates
 * $FR_DUMP_DIR/TRIGGER (the first one wins); `what` needs it. */
static void job_trigger(const struct job *j, const char *what, const char *reason)
{
  const char *dir = getenv("FR_DUMP_DIR");
  char path[4096], line[256];
  if (!dir || !*dir)
    job_fatal(2, "%s needs FR_DUMP_DIR", what);
  snprintf(path, sizeof path, "%s/TRIGGER", dir);
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  int n = snprintf(line, sizeof line, "flightrec-trigger v1 rank=%d time_ns=%llu reason=%s\n", j->grank,
                   (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec, reason);
  int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    if (errno == EEXIST)
      return;
    job_fatal(1, "cannot create %s: %s", path, strerror(errno));
  }
  if (n >= (int)sizeof line) {
    n = (int)sizeof line - 1;
    line[n - 1] = '\n';
  }
  if (write(fd, line, (size_t)n) != n)
    job_fatal(1, "cannot write %s: %s", path, strerror(errno));
  close(fd);
}

/* Fault `stop`: stuck outside NCCL for good, e.g. in a data loader.  Not
 * static and never inlined (the job is linked with -rdynamic), so that
 * thread stacks in the dumps name it. */
__attribute__((noinline, noreturn)) void job_stop_forever(void)
{
  fflush(NULL);
  for (;;)
    pause();
}

/* Fault `block-read`: blocked for good in read(2) on an empty pipe whose
 * write end stays open (a rank waiting on a data source that never
 * delivers). */
__attribute__((noinline, noreturn)) void job_block_in_read(void)
{
  int fds[2];
  char c;
  fflush(NULL);
  if (pipe(fds) != 0)
    job_fatal(1, "pipe: %s", strerror(errno));
  for (;;)
    if (read(fds[0], &c, 1) < 0 && errno != EINTR)
      job_fatal(1, "read: %s", strerror(errno));
}

/* Fault `busy-stream`: work on the stream that never ends (a compute
 * kernel that spins for good): the stream's worker blocks here. */
static void job_busy_forever(void *arg)
{
  (void)arg;
  for (;;) pause();
}

/* Applies the simulator knobs of device dev's call to its handle: before
 * the call (after = 0) a link's sends stop on its sender (stall link), and
 * this rank's kernel stops inside the op (stall kernel, async-error: a
 * broken connection leaves NCCL's kernel spinning); once it is called
 * (after = 1), the comm reports the async error. */
static void job_knobs(const struct job *j, const struct sc_op *op, int dev, const struct sc_fault *const *fs,
                      int nf, int after)
{
  ncclComm_t comm = j->comms[op->comm].h[dev];
  int me = (int)job_comm_rank(j, op->comm, dev), multi = j->sc.comms[op->comm].how == SC_COMM_INITALL;
  if (!after)
    job_model_knobs(j, op, dev, fs, nf);
  for (int i = 0; i < nf; i++) {
    const struct sc_fault *f = fs[i];
    unsigned knobs = SC_F_STALL_LINK | SC_F_STALL_KERNEL | SC_F_ASYNC_ERROR | SC_F_BUSY_STREAM;
    if (!(f->actions & knobs) || (!job_fault_for(f, -1) && !job_fault_for(f, dev)))
      continue;
    if (after) {
      if (f->actions & SC_F_ASYNC_ERROR)
        job_nccl_check(j, sim_comm_set_async_error(comm, f->async_error), "async-error", f->line);
      continue;
    }
    if ((f->actions & SC_F_STALL_LINK) && f->stall_src != me && !multi)
      job_fatal(2, "%s:%d: 'stall link %d->%d' applies on its sender, comm rank %d; rank %d is comm rank %d",
                j->sc.file, f->line, f->stall_src, f->stall_dst, f->stall_src, j->grank, me);
    if ((f->actions & SC_F_STALL_LINK) && f->stall_src == me)
      job_nccl_check(j, sim_comm_stall_link(comm, f->stall_dst, f->stall_channel), "stall link", f->line);
    if (f->actions & (SC_F_STALL_KERNEL | SC_F_ASYNC_ERROR))
      job_nccl_check(j, sim_comm_stall_kernel(comm), "stall kernel", f->line);
    if (f->actions & SC_F_BUSY_STREAM) /* (before the op, on its stream) */
      job_cuda_check(j, sim_stream_enqueue(j->streams[j->comms[op->comm].ndev > 1 ? dev : 0], job_busy_forever, NULL),
                     "busy-stream");
  }
}

/* The actions of the faults for the whole op (dev < 0) or for device dev:
 * sleeps, trigger, crash, exit, stop, block-read; 1 when the call is
 * skipped.  Inlined, so that a stop before the op shows as
 * job_stop_forever <- job_run_op in the stacks. */
static inline __attribute__((always_inline)) int job_actions(const struct job *j, int step, int idx,
                                                             const struct sc_fault *const *fs, int nf, int dev)
{
  const struct sc_op *op = &j->sc.ops[idx];
  unsigned act = 0;
  for (int i = 0; i < nf; i++) {
    if (!job_fault_for(fs[i], dev))
      continue;
    act |= fs[i]->actions;
    if (fs[i]->actions & SC_F_SLEEP)
      job_sleep_ms(fs[i]->sleep_ms);
  }
  if (act && j->verbose) {
    char text[128], where[32] = "";
    job_actions_text(act, text, sizeof text);
    if (dev >= 0)
      snprintf(where, sizeof where, " device %d", dev);
    fprintf(stderr, "rank %d: step %d op %d (%s:%d)%s: fault: %s\n", j->grank, step, idx + 1, j->sc.file,
            op->line, where, text);
  }
  if (act & SC_F_TRIGGER) {
    char reason[32];
    snprintf(reason, sizeof reason, "scenario step %d", step);
    job_trigger(j, "fault 'trigger'", reason);
  }
  if (act & SC_F_CRASH) {
    fflush(NULL);
    raise(SIGKILL);
  }
  if (act & SC_F_EXIT) { /* SC_EXIT_STATUS=N: as a rank that raised (Python exits 1) */
    const char *es = getenv("SC_EXIT_STATUS");
    fflush(NULL);
    exit(es ? atoi(es) : 0);
  }
  if (act & SC_F_STOP)
    job_stop_forever();
  if (act & SC_F_BLOCK_READ)
    job_block_in_read();
  return (act & SC_F_SKIP) != 0;
}

/* A collective, p2p or lifecycle op on its comm: once per device of an
 * initall comm, inside one group (one thread drives all its devices, as
 * NCCL requires), with each device's faults; once otherwise. */
static void job_run_devices(struct job *j, int step, int idx, const struct sc_fault **fs, int nf)
{
  const struct sc_op *op = &j->sc.ops[idx];
  const struct job_comm *jc = &j->comms[op->comm];
  int multi = j->sc.comms[op->comm].how == SC_COMM_INITALL;
  struct job_ncall group = { .what = JN_GROUP_START };
  if (multi)
    job_nccl_check(j, job_ncall(op->site, &group), "ncclGroupStart", op->line);
  for (int d = 0; d < jc->ndev; d++) {
    if (multi && job_actions(j, step, idx, fs, nf, d))
      continue;
    if (sc_kind_is_life(op->kind)) {
      job_comm_end(j, op->comm, d, op->kind, op->site, op->line);
      continue;
    }
    if (!jc->h[d])
      continue;
    struct job_call call;
    job_resolve(j, op, fs, nf, d, &call);
    job_knobs(j, op, d, fs, nf, 0);
    unsigned how = job_call_begin(j, op, d, fs, nf);
    if (how & JOB_HOW_NO_CALL)
      ; /* a replay of its graph: launched at its first op */
    else if (op->kind == SC_ALLTOALLV)
      job_alltoallv(j, idx, d, op, fs, nf);
    else
      job_call_nccl(j, idx, d, op, &call);
    job_call_end(j, op, how);
    job_knobs(j, op, d, fs, nf, 1);
  }
  group.what = JN_GROUP_END;
  if (multi)
    job_nccl_check(j, job_ncall(op->site, &group), "ncclGroupEnd", op->line);
}

static long job_now_ms(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

/* Whether every stream has passed launch l's events. */
static int job_launch_done(const struct job *j, const struct job_launch *l)
{
  for (int d = 0; d < j->nstreams; d++) {
    CUresult rc = cuEventQuery(l->ev[d]);
    if (rc == CUDA_ERROR_NOT_READY)
      return 0;
    job_cuda_check(j, rc, "cuEventQuery");
  }
  return 1;
}

/* Body op idx has put work on the streams: a watchdog remembers it, with
 * an event after it on every stream (once the oldest launches that have
 * completed are forgotten), so as to name it if it does not complete. */
static void job_launched(struct job *j, int step, int idx)
{
  if (!j->wd)
    return;
  while (j->nlaunch > 0 && job_launch_done(j, &j->launches[j->lhead])) {
    j->lhead = (j->lhead + 1) % JOB_LAUNCHES;
    j->nlaunch--;
  }
  if (j->nlaunch == JOB_LAUNCHES)
    return;
  struct job_launch *l = &j->launches[(j->lhead + j->nlaunch++) % JOB_LAUNCHES];
  l->idx = idx;
  l->step = step;
  for (int d = 0; d < j->nstreams; d++) {
    if (!l->ev[d])
      job_cuda_check(j, cuEventCreate(&l->ev[d], 0), "cuEventCreate");
    job_cuda_check(j, cuEventRecord(l->ev[d], j->streams[d]), "cuEventRecord");
  }
}

/* What the watchdog saw, for its line: the async error, or the oldest
 * launch not complete. */
static void job_watchdog_what(const struct job *j, ncclResult_t err, int comm, char *buf, size_t size)
{
  const struct job_launch *l = NULL;
  for (int k = 0; k < j->nlaunch && !l; k++)
    if (!job_launch_done(j, &j->launches[(j->lhead + k) % JOB_LAUNCHES]))
      l = &j->launches[(j->lhead + k) % JOB_LAUNCHES];
  const struct sc_op *op = l ? &j->sc.ops[l->idx] : NULL;
  if (err != ncclSuccess)
    snprintf(buf, size, "ncclCommGetAsyncError on %s says %d (%s)", j->sc.comms[comm].name, (int)err,
             ncclGetErrorString(err));
  else if (op && op->kind == SC_GROUP_END)
    snprintf(buf, size, "the group ending at %s:%d (op %d, step %d) not complete after %ld ms", j->sc.file,
             op->line, l->idx + 1, l->step, j->wd->ms);
  else if (op)
    snprintf(buf, size, "%s on %s (%s:%d, op %d, step %d) not complete after %ld ms", sc_kind_name(op->kind),
             j->sc.comms[op->comm].name, j->sc.file, op->line, l->idx + 1, l->step, j->wd->ms);
  else
    snprintf(buf, size, "the streams not done after %ld ms", j->wd->ms);
}

/* The watchdog's reaction (exported, for the stacks): one line on stderr,
 * the trigger file and a wait for the dumps (dump), an abort or destroy of
 * every comm this rank holds in reverse creation order, then exit 1,
 * SIGABRT, or the next step without those comms. */
__attribute__((noinline)) void job_watchdog_fire(struct job *j, const char *where, ncclResult_t err, int comm)
{
  static const char *ends[] = { "ncclCommAbort on", "ncclCommDestroy on", "no abort of" };
  static const char *thens[] = { "exit 1", "SIGABRT", "the next step without them" };
  const struct sc_watchdog *wd = j->wd;
  char what[256];
  int held = 0;
  for (int i = 0; i < j->sc.ncomms; i++)
    held += j->comms[i].order && !job_comm_gone(j, i);
  job_watchdog_what(j, err, comm, what, sizeof what);
  fprintf(stderr, "fr-scenario-job: rank %d: watchdog: %s, waiting at %s; %s %d comm%s, then %s\n", j->grank,
          what, where, ends[wd->end], held, held == 1 ? "" : "s", thens[wd->then]);
  fflush(stderr);
  if (wd->dump) {
    char reason[sizeof what + 16];
    snprintf(reason, sizeof reason, "watchdog: %s", what);
    job_trigger(j, "watchdog dump", reason);
    job_sleep_ms(wd->dump_wait_ms);
  }
  if (wd->end != SC_WD_NONE)
    job_comms_end_held(j, wd->end == SC_WD_ABORT ? SC_ABORT : SC_DESTROY, wd->line);
  fflush(NULL);
  if (wd->then == SC_WD_EXIT)
    exit(1);
  if (wd->then == SC_WD_CRASH)
    abort();
  j->abandon = 1;
  j->nlaunch = 0;
}

/* The host waits for every stream: for good (cuStreamSynchronize), or,
 * with a watchdog, at most its MS, polling the streams (cuStreamQuery)
 * and every comm it holds (ncclCommGetAsyncError) every 10 ms.  Exported,
 * for the stacks. */
__attribute__((noinline)) void job_wait_streams(struct job *j, const char *where)
{
  if (!j->wd) {
    job_sync_all(j);
    return;
  }
  long start = job_now_ms();
  for (;;) {
    int done = 1, comm = -1;
    for (int d = 0; d < j->nstreams && done; d++) {
      CUresult rc = cuStreamQuery(j->streams[d]);
      if (rc != CUDA_ERROR_NOT_READY)
        job_cuda_check(j, rc, "cuStreamQuery");
      done = rc == CUDA_SUCCESS;
    }
    ncclResult_t err = job_comms_async_error(j, &comm);
    long waited = job_now_ms() - start;
    if (err != ncclSuccess || (!done && waited >= j->wd->ms)) {
      job_watchdog_fire(j, where, err, comm);
      return;
    }
    if (done) {
      j->nlaunch = 0;
      return;
    }
    job_sleep_ms(j->wd->ms - waited < 10 ? j->wd->ms - waited : 10);
  }
}

/* Runs body op idx of a step on this rank, faults first (exported like
 * job_stop_forever, for the stacks).  Ops on a comm the rank is not a
 * member of, or no longer holds, are skipped; a late comm is created here
 * by its first op. */
__attribute__((noinline)) void job_run_op(struct job *j, int step, int idx, const struct sc_fault **fs)
{
  const struct sc_op *op = &j->sc.ops[idx];
  if (!sc_set_has(&op->ranks, j->grank))
    return;
  int on_comm = sc_kind_is_nccl(op->kind) || sc_kind_is_life(op->kind);
  if (on_comm && (!job_comm_takes_part(j, op) || job_comm_gone(j, op->comm))) {
    if (j->verbose && job_comm_gone(j, op->comm) && job_comm_takes_part(j, op))
      fprintf(stderr, "rank %d: step %d op %d: %s is gone, skipped\n", j->grank, step, idx + 1,
              j->sc.comms[op->comm].name);
    return;
  }
  int nf = job_faults_at(j, step, idx, fs);
  if (job_actions(j, step, idx, fs, nf, -1))
    return;
  struct job_ncall group = { .what = JN_GROUP_START };
  switch (op->kind) {
  case SC_GROUP_BEGIN:
    job_nccl_check(j, job_ncall(op->site, &group), "ncclGroupStart", op->line);
    j->group_depth++;
    return;
  case SC_GROUP_END:
    group.what = JN_GROUP_END;
    job_nccl_check(j, job_ncall(op->site, &group), "ncclGroupEnd", op->line);
    if (--j->group_depth == 0)
      job_launched(j, step, idx);
    return;
  case SC_SYNC: {
    char where[4200];
    snprintf(where, sizeof where, "sync (%s:%d) of step %d", j->sc.file, op->line, step);
    job_wait_streams(j, where);
    return;
  }
  case SC_SLEEP:
    job_sleep_ms(op->sleep_ms);
    return;
  case SC_CREATE:
    job_comm_create(j, op->comm, op->site);
    return;
  default:
    break;
  }
  if (sc_kind_is_nccl(op->kind)) {
    job_comm_create(j, op->comm, op->site);
    if (job_comm_gone(j, op->comm))
      return;
  }
  job_run_devices(j, step, idx, fs, nf);
  if (sc_kind_is_nccl(op->kind) && j->group_depth == 0)
    job_launched(j, step, idx);
}

/* One pass over the body; swap faults reorder this rank's ops first. */
__attribute__((noinline)) void job_step(struct job *j, int step, int *order, const struct sc_fault **fs)
{
  int nops = j->sc.nops;
  for (int i = 0; i < nops; i++)
    order[i] = i;
  for (int i = 0; i < j->sc.nfaults; i++) {
    const struct sc_fault *f = &j->sc.faults[i];
    if ((f->actions & SC_F_SWAP) && sc_set_has(&f->ranks, j->grank) && sc_set_has(&f->steps, step)) {
      int a = -1, b = -1;
      for (int k = 0; k < nops; k++) {
        if (order[k] == f->op) a = k;
        if (order[k] == f->swap) b = k;
      }
      int t = order[a];
      order[a] = order[b];
      order[b] = t;
    }
  }
  if (j->verbose)
    fprintf(stderr, "rank %d: step %d\n", j->grank, step);
  j->abandon = 0;
  for (int k = 0; k < nops && !j->abandon; k++)
    job_run_op(j, step, order[k], fs);
  if (j->sc.step_sync && !j->abandon) {
    char where[48];
    snprintf(where, sizeof where, "the end of step %d", step);
    job_wait_streams(j, where);
  }
}

static int job_has_extra(const struct job *j)
{
  for (int i = 0; i < j->sc.nfaults; i++)
    if ((j->sc.faults[i].actions & SC_F_EXTRA) && sc_set_has(&j->sc.faults[i].ranks, j->grank))
      return 1;
  return 0;
}

static void job_teardown(struct job *j)
{
  job_wait_streams(j, "the end of the run");
  job_graphs_free(j);
  job_comms_teardown(j);
  for (int i = 0; j->launches && i < JOB_LAUNCHES; i++) {
    for (int d = 0; d < j->nstreams; d++)
      if (j->launches[i].ev[d])
        cuEventDestroy_v2(j->launches[i].ev[d]);
    free(j->launches[i].ev);
  }
  free(j->launches);
  for (int i = 0; i < j->sc.nops * j->nstreams; i++) {
    if (j->bufs[i].send)
      cuMemFree_v2(j->bufs[i].send);
    if (j->bufs[i].recv)
      cuMemFree_v2(j->bufs[i].recv);
  }
  for (int i = 0; i < j->ngrave; i++)
    cuMemFree_v2(j->grave[i]);
  for (int d = 0; d < j->nstreams; d++)
    cuStreamDestroy_v2(j->streams[d]);
  free(j->streams);
  free(j->grave);
  free(j->bufs);
  sc_free(&j->sc);
}

/* The launcher's per-rank instructions, one a line: "env R NAME=VALUE",
 * then "post R empty-dump|remove-dump" and "post R copy-dump|rename-dump
 * AS" in file order, then "wait exit". */
static void job_print_launch(const struct scenario *sc)
{
  for (int r = 0; r < sc->world; r++)
    for (int i = 0; i < sc->nenv; i++)
      if (sc->env[i].per_rank && sc_set_has(&sc->env[i].ranks, r))
        printf("env %d %s\n", r, sc->env[i].assign);
  for (int i = 0; i < sc->nposts; i++) {
    const struct sc_post *p = &sc->posts[i];
    for (int r = 0; r < sc->world; r++) {
      if (!sc_set_has(&p->ranks, r))
        continue;
      if (p->action == SC_POST_COPY_DUMP || p->action == SC_POST_RENAME_DUMP)
        printf("post %d %s %d\n", r, sc_post_name(p->action), p->as_rank);
      else
        printf("post %d %s\n", r, sc_post_name(p->action));
    }
  }
  if (sc->wait_exit)
    printf("wait exit\n");
}

static void job_usage(void)
{
  fprintf(stderr, "usage: fr-scenario-job [-v] SCENARIO\n"
                  "       fr-scenario-job --print-world|--print-env|--print-time-limit|--print-launch SCENARIO\n");
  exit(2);
}

int main(int argc, char **argv)
{
  struct job j;
  memset(&j, 0, sizeof j);
  const char *print = NULL, *file = NULL;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "-v") || !strcmp(argv[i], "--verbose"))
      j.verbose = 1;
    else if (!strcmp(argv[i], "--print-world") || !strcmp(argv[i], "--print-env") ||
             !strcmp(argv[i], "--print-time-limit") || !strcmp(argv[i], "--print-launch"))
      print = argv[i];
    else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
      job_usage();
    else if (argv[i][0] == '-' || file)
      job_usage();
    else
      file = argv[i];
  }
  if (!file)
    job_usage();
  if (sc_load(file, &j.sc) != 0)
    return 2;
  if (print) {
    if (!strcmp(print, "--print-world"))
      printf("%d\n", j.sc.world);
    else if (!strcmp(print, "--print-time-limit"))
      printf("%ld\n", j.sc.time_limit);
    else if (!strcmp(print, "--print-launch"))
      job_print_launch(&j.sc);
    else
      for (int i = 0; i < j.sc.nenv; i++)
        if (!j.sc.env[i].per_rank)
          printf("%s\n", j.sc.env[i].assign);
    sc_free(&j.sc);
    return 0;
  }
  job_identity(&j);
  j.nstreams = j.sc.max_devices;
  j.bufs = calloc((size_t)(j.sc.nops + 1) * (size_t)j.nstreams, sizeof *j.bufs);
  j.streams = calloc((size_t)j.nstreams, sizeof *j.streams);
  int *order = calloc((size_t)j.sc.nops + 1, sizeof *order);
  const struct sc_fault **fs = calloc((size_t)j.sc.nfaults + 1, sizeof *fs);
  if (!j.bufs || !j.streams || !order || !fs)
    job_fatal(1, "out of memory");
  job_cuda_check(&j, cuInit(0), "cuInit");
  for (int d = 0; d < j.nstreams; d++)
    job_cuda_check(&j, cuStreamCreate(&j.streams[d], CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  for (int i = 0; i < j.sc.nwatchdogs; i++)
    if (sc_set_has(&j.sc.watchdogs[i].ranks, j.grank))
      j.wd = &j.sc.watchdogs[i];
  if (j.wd && (j.launches = calloc(JOB_LAUNCHES, sizeof *j.launches)) == NULL)
    job_fatal(1, "out of memory");
  for (int i = 0; j.wd && i < JOB_LAUNCHES; i++)
    if ((j.launches[i].ev = calloc((size_t)j.nstreams, sizeof *j.launches[i].ev)) == NULL)
      job_fatal(1, "out of memory");
  if (j.wd && j.verbose)
    fprintf(stderr, "rank %d: watchdog of %ld ms (%s:%d)\n", j.grank, j.wd->ms, j.sc.file, j.wd->line);
  job_comms_init(&j);
  for (int step = 1; step <= j.sc.steps; step++)
    job_step(&j, step, order, fs);
  if (job_has_extra(&j))
    job_step(&j, j.sc.steps + 1, order, fs);
  if (j.verbose)
    fprintf(stderr, "rank %d: done\n", j.grank);
  free(order);
  free(fs);
  job_teardown(&j);
  return 0;
}
