/* job.c — fr-scenario-job: a small training loop driven by a scenario file
 * (tests/scenarios/README.md), run as one process per rank by fr-launch.
 *
 *   fr-scenario-job [-v] SCENARIO          run rank $RANK of $WORLD_SIZE
 *   fr-scenario-job --print-world SCENARIO print the world size
 *   fr-scenario-job --print-env SCENARIO   print the env NAME=VALUE lines
 *   fr-scenario-job --print-time-limit SCENARIO  print time-limit (0: unset)
 *
 * Exit 0 after the loop; 1 when an NCCL/CUDA call fails; 2 for a bad
 * scenario or environment (message "FILE:LINE: ..." for the file).
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

#include "fr_cuda.h"
#include "scenario.h"
#include "sim.h"

/* Buffers of one body op, grown on demand (never freed while the stream
 * may still use them: replaced ones go to the graveyard). */
struct job_buf {
  CUdeviceptr send, recv;
  size_t send_cap, recv_cap;
};

struct job {
  struct scenario sc;
  int grank;
  int verbose;
  CUstream stream;
  ncclComm_t *comms;            /* per scenario comm; NULL when not a member */
  struct job_buf *bufs;         /* per body op */
  CUdeviceptr *grave;
  int ngrave;
};

/* The effective call of one op on one rank, after faults. */
struct job_call {
  enum sc_kind kind;
  int comm;
  long count, root, peer;
  ncclDataType_t dtype;
  ncclRedOp_t redop;
};

static void job_fatal(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3), noreturn));
/* Exported (the job is linked with -rdynamic) so that the thread stacks in
 * the dumps name them. */
void job_stop_forever(void) __attribute__((noreturn));
void job_block_in_read(void) __attribute__((noreturn));
void job_run_op(struct job *j, int step, int idx, const struct sc_fault **fs);
void job_step(struct job *j, int step, int *order, const struct sc_fault **fs);

static void job_fatal(int status, const char *fmt, ...)
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

static void job_nccl_check(const struct job *j, ncclResult_t rc, const char *what, int line)
{
  if (rc != ncclSuccess)
    job_fatal(1, "rank %d: %s (%s:%d) failed: %s", j->grank, what, j->sc.file, line, ncclGetErrorString(rc));
}

static void job_cuda_check(const struct job *j, CUresult rc, const char *what)
{
  if (rc != CUDA_SUCCESS)
    job_fatal(1, "rank %d: %s failed: CUDA error %d", j->grank, what, (int)rc);
}

/* Creates every communicator this rank belongs to, in file order. */
static void job_make_comms(struct job *j)
{
  struct scenario *sc = &j->sc;
  int g = j->grank;
  j->comms = calloc((size_t)sc->ncomms, sizeof *j->comms);
  if (!j->comms)
    job_fatal(1, "out of memory");
  for (int i = 0; i < sc->ncomms; i++) {
    const struct sc_comm *cm = &sc->comms[i];
    if (cm->how == SC_COMM_SPLIT) {
      ncclComm_t parent = j->comms[cm->parent];
      if (!parent)
        continue;
      int color = cm->rank_of[g] >= 0 ? (int)cm->color_of[g] : NCCL_SPLIT_NOCOLOR;
      job_nccl_check(j, ncclCommSplit(parent, color, (int)cm->key_of[g], &j->comms[i], NULL),
                     "ncclCommSplit", cm->line);
    } else if (cm->rank_of[g] >= 0) {
      ncclUniqueId id;
      if (boot_unique_id(cm->name, cm->inst_of[g], cm->rank_of[g], cm->size_of[g], &id) != 0)
        job_fatal(1, "rank %d: no unique id for communicator %s", g, cm->name);
      job_nccl_check(j, ncclCommInitRank(&j->comms[i], cm->size_of[g], id, cm->rank_of[g]),
                     "ncclCommInitRank", cm->line);
    }
    if ((j->comms[i] != NULL) != (cm->rank_of[g] >= 0))
      job_fatal(1, "rank %d: communicator %s: membership differs from the plan", g, cm->name);
    if (j->comms[i]) {
      int r = -1, n = -1;
      ncclCommUserRank(j->comms[i], &r);
      ncclCommCount(j->comms[i], &n);
      if (r != cm->rank_of[g] || n != cm->size_of[g])
        job_fatal(1, "rank %d: communicator %s: rank %d of %d, the plan says %d of %d",
                  g, cm->name, r, n, cm->rank_of[g], cm->size_of[g]);
    }
  }
}

/* Evaluates an op's expression with this rank's variables in that comm;
 * a runtime error (e.g. division by zero) is a scenario error: exit 2. */
static long job_eval(const struct job *j, const char *expr, const char *what, int comm, int line)
{
  const struct sc_comm *cm = &j->sc.comms[comm];
  struct sc_vars v = { cm->rank_of[j->grank], cm->size_of[j->grank], j->grank, j->sc.world };
  char err[128];
  long out;
  if (sc_expr_eval(expr, &v, &out, err, sizeof err) != 0) {
    fprintf(stderr, "%s:%d: %s=%s on rank %d: %s\n", j->sc.file, line, what, expr, j->grank, err);
    exit(2);
  }
  return out;
}

/* The call an op makes on this rank, with the faults' changes applied. */
static void job_resolve(const struct job *j, const struct sc_op *op, const struct sc_fault *const *fs, int nf,
                        struct job_call *call)
{
  call->kind = op->kind;
  call->comm = op->comm;
  call->dtype = op->dtype;
  call->redop = op->redop;
  const char *count = op->count, *root = op->root, *peer = op->peer;
  int line_count = op->line, line_root = op->line, line_peer = op->line;
  for (int i = 0; i < nf; i++) {
    const struct sc_fault *f = fs[i];
    if (f->actions & SC_F_COLL) call->kind = f->coll;
    if (f->actions & SC_F_DTYPE) call->dtype = f->dtype;
    if (f->actions & SC_F_REDOP) call->redop = f->redop;
    if (f->actions & SC_F_COUNT) { count = f->count; line_count = f->line; }
    if (f->actions & SC_F_ROOT) { root = f->root; line_root = f->line; }
    if (f->actions & SC_F_PEER) { peer = f->peer; line_peer = f->line; }
  }
  call->count = job_eval(j, count, "count", call->comm, line_count);
  if (call->count < 0) {
    fprintf(stderr, "%s:%d: count=%s is negative on rank %d\n", j->sc.file, line_count, count, j->grank);
    exit(2);
  }
  call->root = job_eval(j, root, "root", call->comm, line_root);
  call->peer = 0;
  if (call->kind == SC_SEND || call->kind == SC_RECV) {
    long size = j->sc.comms[call->comm].size_of[j->grank];
    long p = job_eval(j, peer, "peer", call->comm, line_peer) % size;
    call->peer = p < 0 ? p + size : p;
  }
}

/* Makes sure op idx has buffers of at least these sizes. */
static void job_buffers(struct job *j, int idx, size_t send_bytes, size_t recv_bytes)
{
  struct job_buf *b = &j->bufs[idx];
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

/* Issues one collective or p2p call. */
static void job_call_nccl(struct job *j, int idx, const struct sc_op *op, const struct job_call *c)
{
  ncclComm_t comm = j->comms[c->comm];
  size_t n = (size_t)j->sc.comms[c->comm].size_of[j->grank];
  size_t es = sc_dtype_size(c->dtype);
  size_t cnt = (size_t)c->count, one = cnt * es, all = one * n;
  size_t sb = one, rb = one;
  if (c->kind == SC_ALLGATHER || c->kind == SC_GATHER) rb = all;
  if (c->kind == SC_REDUCESCATTER || c->kind == SC_SCATTER) sb = all;
  if (c->kind == SC_ALLTOALL) sb = rb = all;
  job_buffers(j, idx, sb, rb);
  const void *s = (const void *)(uintptr_t)j->bufs[idx].send;
  void *r = (void *)(uintptr_t)j->bufs[idx].recv;
  cudaStream_t st = j->stream;
  int root = (int)c->root, peer = (int)c->peer;
  ncclResult_t rc = ncclSuccess;
  switch (c->kind) {
  case SC_ALLREDUCE: rc = ncclAllReduce(s, r, cnt, c->dtype, c->redop, comm, st); break;
  case SC_BROADCAST: rc = ncclBroadcast(s, r, cnt, c->dtype, root, comm, st); break;
  case SC_BCAST: rc = ncclBcast(r, cnt, c->dtype, root, comm, st); break;
  case SC_REDUCE: rc = ncclReduce(s, r, cnt, c->dtype, c->redop, root, comm, st); break;
  case SC_ALLGATHER: rc = ncclAllGather(s, r, cnt, c->dtype, comm, st); break;
  case SC_REDUCESCATTER: rc = ncclReduceScatter(s, r, cnt, c->dtype, c->redop, comm, st); break;
  case SC_ALLTOALL: rc = ncclAlltoAll(s, r, cnt, c->dtype, comm, st); break;
  case SC_GATHER: rc = ncclGather(s, r, cnt, c->dtype, root, comm, st); break;
  case SC_SCATTER: rc = ncclScatter(s, r, cnt, c->dtype, root, comm, st); break;
  case SC_SEND: rc = ncclSend(s, cnt, c->dtype, peer, comm, st); break;
  case SC_RECV: rc = ncclRecv(r, cnt, c->dtype, peer, comm, st); break;
  default: break;
  }
  char what[64];
  snprintf(what, sizeof what, "%s on %s", sc_kind_name(c->kind), j->sc.comms[c->comm].name);
  job_nccl_check(j, rc, what, op->line);
}

/* Names the actions of a fault mask for -v ("stop count"). */
static void job_actions_text(unsigned act, char *buf, size_t size)
{
  static const char *names[] = { "stop", "skip", "exit", "crash", "extra", "count", "dtype",
                                 "redop", "root", "peer", "coll", "sleep", "swap", "trigger",
                                 "stall-link", "stall-kernel", "block-read" };
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
 * $FR_DUMP_DIR/TRIGGER (the first one wins). */
static void job_trigger(const struct job *j, int step)
{
  const char *dir = getenv("FR_DUMP_DIR");
  char path[4096], line[256];
  if (!dir || !*dir)
    job_fatal(2, "fault 'trigger' needs FR_DUMP_DIR");
  snprintf(path, sizeof path, "%s/TRIGGER", dir);
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  int n = snprintf(line, sizeof line, "flightrec-trigger v1 rank=%d time_ns=%llu reason=scenario step %d\n",
                   j->grank, (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec,
                   step);
  int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    if (errno == EEXIST)
      return;
    job_fatal(1, "cannot create %s: %s", path, strerror(errno));
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

/* Applies the stall faults to the op's comm in the simulator: a link's
 * sends stop on its sender; this rank's kernel stops inside the op. */
static void job_stall(const struct job *j, const struct sc_op *op, const struct sc_fault *const *fs, int nf)
{
  ncclComm_t comm = sc_kind_is_nccl(op->kind) ? j->comms[op->comm] : NULL;
  int me = sc_kind_is_nccl(op->kind) ? j->sc.comms[op->comm].rank_of[j->grank] : -1;
  for (int i = 0; i < nf; i++) {
    const struct sc_fault *f = fs[i];
    if (!(f->actions & (SC_F_STALL_LINK | SC_F_STALL_KERNEL)))
      continue;
    if (!comm)
      job_fatal(2, "%s:%d: a stall needs a collective or p2p op", j->sc.file, f->line);
    if ((f->actions & SC_F_STALL_LINK) && f->stall_src != me)
      job_fatal(2, "%s:%d: 'stall link %d->%d' applies on its sender, comm rank %d; rank %d is comm rank %d",
                j->sc.file, f->line, f->stall_src, f->stall_dst, f->stall_src, j->grank, me);
    if (f->actions & SC_F_STALL_LINK)
      job_nccl_check(j, sim_comm_stall_link(comm, f->stall_dst, f->stall_channel), "stall link", f->line);
    if (f->actions & SC_F_STALL_KERNEL)
      job_nccl_check(j, sim_comm_stall_kernel(comm), "stall kernel", f->line);
  }
}

/* Runs body op idx of a step on this rank, faults first (exported like
 * job_stop_forever, for the stacks). */
__attribute__((noinline)) void job_run_op(struct job *j, int step, int idx, const struct sc_fault **fs)
{
  const struct sc_op *op = &j->sc.ops[idx];
  if (!sc_set_has(&op->ranks, j->grank))
    return;
  if (sc_kind_is_nccl(op->kind) && !j->comms[op->comm])
    return;                     /* not a member of that communicator */
  int nf = job_faults_at(j, step, idx, fs);
  unsigned act = 0;
  for (int i = 0; i < nf; i++) {
    act |= fs[i]->actions;
    if (fs[i]->actions & SC_F_SLEEP)
      job_sleep_ms(fs[i]->sleep_ms);
  }
  if (act && j->verbose) {
    char text[128];
    job_actions_text(act, text, sizeof text);
    fprintf(stderr, "rank %d: step %d op %d (%s:%d): fault: %s\n", j->grank, step, idx + 1, j->sc.file,
            op->line, text);
  }
  if (act & SC_F_TRIGGER)
    job_trigger(j, step);
  if (act & SC_F_CRASH) {
    fflush(NULL);
    raise(SIGKILL);
  }
  if (act & SC_F_EXIT) {
    fflush(NULL);
    exit(0);
  }
  if (act & SC_F_STOP)
    job_stop_forever();
  if (act & SC_F_BLOCK_READ)
    job_block_in_read();
  if (act & SC_F_SKIP)
    return;
  if (act & (SC_F_STALL_LINK | SC_F_STALL_KERNEL))
    job_stall(j, op, fs, nf);
  switch (op->kind) {
  case SC_GROUP_BEGIN:
    job_nccl_check(j, ncclGroupStart(), "ncclGroupStart", op->line);
    return;
  case SC_GROUP_END:
    job_nccl_check(j, ncclGroupEnd(), "ncclGroupEnd", op->line);
    return;
  case SC_SYNC:
    job_cuda_check(j, cuStreamSynchronize(j->stream), "cuStreamSynchronize");
    return;
  case SC_SLEEP:
    job_sleep_ms(op->sleep_ms);
    return;
  default:
    break;
  }
  struct job_call call;
  job_resolve(j, op, fs, nf, &call);
  job_call_nccl(j, idx, op, &call);
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
  for (int k = 0; k < nops; k++)
    job_run_op(j, step, order[k], fs);
  if (j->sc.step_sync)
    job_cuda_check(j, cuStreamSynchronize(j->stream), "cuStreamSynchronize");
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
  job_cuda_check(j, cuStreamSynchronize(j->stream), "cuStreamSynchronize");
  for (int i = j->sc.ncomms - 1; i >= 0; i--)
    if (j->comms[i])
      job_nccl_check(j, ncclCommDestroy(j->comms[i]), "ncclCommDestroy", j->sc.comms[i].line);
  for (int i = 0; i < j->sc.nops; i++) {
    if (j->bufs[i].send)
      cuMemFree_v2(j->bufs[i].send);
    if (j->bufs[i].recv)
      cuMemFree_v2(j->bufs[i].recv);
  }
  for (int i = 0; i < j->ngrave; i++)
    cuMemFree_v2(j->grave[i]);
  cuStreamDestroy_v2(j->stream);
  free(j->grave);
  free(j->bufs);
  free(j->comms);
  sc_free(&j->sc);
}

/* The launcher's per-rank instructions, one a line: "env R NAME=VALUE",
 * "post R empty-dump|remove-dump", "wait exit". */
static void job_print_launch(const struct scenario *sc)
{
  for (int r = 0; r < sc->world; r++) {
    for (int i = 0; i < sc->nenv; i++)
      if (sc->env[i].per_rank && sc_set_has(&sc->env[i].ranks, r))
        printf("env %d %s\n", r, sc->env[i].assign);
    for (int i = 0; i < sc->nposts; i++)
      if (sc_set_has(&sc->posts[i].ranks, r))
        printf("post %d %s\n", r, sc->posts[i].action == SC_POST_EMPTY_DUMP ? "empty-dump" : "remove-dump");
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
  j.bufs = calloc((size_t)j.sc.nops + 1, sizeof *j.bufs);
  int *order = calloc((size_t)j.sc.nops + 1, sizeof *order);
  const struct sc_fault **fs = calloc((size_t)j.sc.nfaults + 1, sizeof *fs);
  if (!j.bufs || !order || !fs)
    job_fatal(1, "out of memory");
  job_cuda_check(&j, cuInit(0), "cuInit");
  job_cuda_check(&j, cuStreamCreate(&j.stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  job_make_comms(&j);
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
