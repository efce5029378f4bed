/* sim_shm.c — a communicator's POSIX shared-memory segment: rendezvous of
 * the members, a barrier, the split table, per-edge mailboxes and the loop
 * that moves data through them.
 *
 * The segment is named after a hash of the unique id.  The first member to
 * arrive creates it (O_EXCL) and initialises it; the others open it and wait
 * for its ready flag.  Init is a barrier of all members; the last member to
 * attach unlinks the name, so nothing is left in /dev/shm even when the job
 * is killed later.  Under FR_SIM_BOOTSTRAP_DIR the creator also leaves a
 * file `shm-NAME` there until the name is unlinked, so a launcher can remove
 * segments whose members never all arrived.
 *
 * Mailboxes: one single-producer/single-consumer ring of a few fixed-size
 * slots per directed edge (src -> dst) and channel, in two sets
 * (collectives, user p2p).
 * A message is a run of fragments, the last one flagged END, so a receiver
 * that expects a different size still consumes exactly one message.  Every
 * member has a doorbell (a futex word) that its peers ring when they move
 * data; a member without progress sleeps on it with a timeout of at most
 * 1 ms, so hung members use almost no CPU.
 *
 * Every fragment carries its sender's data layout (the algorithm and
 * protocol of its collective); a receiver leaves a fragment of another
 * layout where it is, as NCCL's kernels on hardware never see the flags or
 * the data they wait for when the two sides use different protocols or
 * algorithms: the members of such an op all wait, none completes.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "sim_nccl.h"

#define SIM_MAGIC 0x4652534d53494d31ull /* "FRSMSIM1" */
#define SIM_NSLOTS 4u
#define SIM_SLOT_MAX (64u * 1024u)
#define SIM_SLOT_MIN 1024u
#define SIM_SET_BUDGET (64ull * 1024 * 1024) /* mailbox bytes per set */
#define SIM_FRAG_END 1u
#define SIM_CACHELINE 64

struct sim_seg {
  uint64_t magic;
  _Atomic uint32_t ready;
  int32_t nranks;
  uint32_t nslots, slot_bytes;
  _Atomic uint32_t attached;
  uint32_t pad0;
  _Atomic uint64_t barrier;     /* arrivals at barriers, never reset */
  uint64_t total_bytes;
};

/* Positions inside a segment of a given size (a function of nranks only). */
struct sim_layout {
  size_t claimed, colors, keys, bells, edges, edge_stride, total;
  uint32_t slot_bytes;
};

struct sim_bell {
  _Atomic uint32_t bell;
  _Atomic uint32_t sleepers;
  char pad[SIM_CACHELINE - 8];
};

struct sim_slot {
  uint32_t len;
  uint32_t flags;
  uint32_t layout;              /* the sender's sim_layout_set */
  uint32_t pad;
  unsigned char data[];
};

struct sim_edge {
  _Atomic uint64_t head;        /* fragments published (sender) */
  char pad0[SIM_CACHELINE - 8];
  _Atomic uint64_t tail;        /* fragments consumed (receiver) */
  char pad1[SIM_CACHELINE - 8];
  unsigned char slots[];
};

static size_t sim_align(size_t v, size_t a)
{
  return (v + a - 1) / a * a;
}

/* Slot size shrinks with the world so that a set stays near its budget. */
static void sim_layout_of(int nranks, struct sim_layout *l)
{
  size_t n = (size_t)nranks;
  uint32_t slot = SIM_SLOT_MAX;
  while (slot > SIM_SLOT_MIN && n * n * SIM_CHANNELS * SIM_NSLOTS * slot > SIM_SET_BUDGET)
    slot /= 2;
  l->slot_bytes = slot;
  size_t off = sim_align(sizeof(struct sim_seg), SIM_CACHELINE);
  l->claimed = off;
  off = sim_align(off + n * sizeof(_Atomic uint32_t), SIM_CACHELINE);
  l->colors = off;              /* int32 [2][n]: double-buffered by split index */
  off = sim_align(off + 2 * n * sizeof(int32_t), SIM_CACHELINE);
  l->keys = off;
  off = sim_align(off + 2 * n * sizeof(int32_t), SIM_CACHELINE);
  l->bells = off;
  off = sim_align(off + n * sizeof(struct sim_bell), 4096);
  l->edges = off;
  l->edge_stride = sim_align(sizeof(struct sim_edge) + SIM_NSLOTS * (sizeof(struct sim_slot) + slot),
                             SIM_CACHELINE);
  l->total = off + 2 * SIM_CHANNELS * n * n * l->edge_stride;
}

static void *sim_at(ncclComm_t comm, size_t off)
{
  return (unsigned char *)comm->seg + off;
}

static struct sim_bell *sim_bell_of(ncclComm_t comm, int rank)
{
  struct sim_layout l;
  sim_layout_of(comm->nranks, &l);
  return (struct sim_bell *)sim_at(comm, l.bells) + rank;
}

static struct sim_edge *sim_edge_of(ncclComm_t comm, enum sim_set set, int channel, int src, int dst)
{
  struct sim_layout l;
  sim_layout_of(comm->nranks, &l);
  size_t n = (size_t)comm->nranks;
  size_t idx = ((size_t)set * SIM_CHANNELS + (size_t)channel) * n * n + (size_t)src * n + (size_t)dst;
  return sim_at(comm, l.edges + idx * l.edge_stride);
}

static struct sim_slot *sim_slot_of(struct sim_edge *e, uint32_t slot_bytes, uint64_t seq)
{
  size_t stride = sizeof(struct sim_slot) + slot_bytes;
  return (struct sim_slot *)(e->slots + (seq % SIM_NSLOTS) * stride);
}

void sim_backoff(unsigned *iter)
{
  unsigned i = (*iter)++;
  if (i < 8) {
    sched_yield();
    return;
  }
  unsigned shift = i - 8 < 10 ? i - 8 : 10;
  long ns = 1000L << shift;     /* 1 us doubling up to ~1 ms */
  if (ns > 1000000L)
    ns = 1000000L;
  struct timespec ts = { 0, ns };
  nanosleep(&ts, NULL);
}

uint64_t sim_hash(const unsigned char *p, size_t n)
{
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < n; i++) {
    h ^= p[i];
    h *= 0x100000001b3ull;
  }
  return h;
}

static void sim_shm_name(const unsigned char *id, char *name, size_t size)
{
  snprintf(name, size, "/frsim-%016llx", (unsigned long long)sim_hash(id, NCCL_UNIQUE_ID_BYTES));
}

/* The launcher's record of a segment name (see the file comment). */
static void sim_note_path(const char *name, char *path, size_t size)
{
  const char *dir = getenv("FR_SIM_BOOTSTRAP_DIR");
  path[0] = '\0';
  if (dir && *dir)
    snprintf(path, size, "%s/shm-%s", dir, name + 1);
}

/* Creates the segment: 1 created, 0 someone else did, -1 error. */
static int sim_seg_create(ncclComm_t comm, const char *name, const struct sim_layout *l)
{
  int fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
  if (fd < 0)
    return errno == EEXIST ? 0 : -1;
  if (ftruncate(fd, (off_t)l->total) != 0) {
    close(fd);
    shm_unlink(name);
    return -1;
  }
  void *p = mmap(NULL, l->total, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (p == MAP_FAILED) {
    shm_unlink(name);
    return -1;
  }
  char note[PATH_MAX];
  sim_note_path(name, note, sizeof note);
  if (note[0]) {
    int nfd = open(note, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
    if (nfd >= 0)
      close(nfd);
  }
  struct sim_seg *s = p;
  s->magic = SIM_MAGIC;
  s->nranks = comm->nranks;
  s->nslots = SIM_NSLOTS;
  s->slot_bytes = l->slot_bytes;
  s->total_bytes = l->total;
  atomic_store_explicit(&s->ready, 1, memory_order_release);
  comm->seg = s;
  comm->seg_bytes = l->total;
  return 1;
}

/* Opens a segment created by another member, waiting for it to be ready. */
static ncclResult_t sim_seg_open(ncclComm_t comm, const char *name)
{
  unsigned iter = 0;
  int fd;
  struct stat st;
  for (;;) {
    fd = shm_open(name, O_RDWR, 0600);
    if (fd >= 0) {
      if (fstat(fd, &st) == 0 && st.st_size > 0)
        break;
      close(fd);
    } else if (errno != ENOENT) {
      return sim_error(ncclSystemError, "shm_open %s: %s", name, strerror(errno));
    }
    sim_backoff(&iter);
  }
  void *p = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (p == MAP_FAILED)
    return sim_error(ncclSystemError, "mmap %s: %s", name, strerror(errno));
  struct sim_seg *s = p;
  iter = 0;
  while (!atomic_load_explicit(&s->ready, memory_order_acquire))
    sim_backoff(&iter);
  if (s->magic != SIM_MAGIC || s->nranks != comm->nranks || s->total_bytes != (uint64_t)st.st_size) {
    int theirs = s->nranks;
    munmap(p, (size_t)st.st_size);
    return sim_error(ncclInvalidArgument, "communicator has %d ranks, this member says %d",
                     theirs, comm->nranks);
  }
  comm->seg = s;
  comm->seg_bytes = (size_t)st.st_size;
  return ncclSuccess;
}

/* Rendezvous: create or open the segment, claim this rank, and wait until
 * every member has attached (the last one unlinks the name). */
ncclResult_t sim_seg_attach(ncclComm_t comm)
{
  char name[64];
  struct sim_layout l;
  sim_shm_name(comm->id, name, sizeof name);
  sim_layout_of(comm->nranks, &l);
  int created = sim_seg_create(comm, name, &l);
  if (created < 0)
    return sim_error(ncclSystemError, "cannot create shared memory %s (%zu bytes): %s",
                     name, l.total, strerror(errno));
  if (!created) {
    ncclResult_t rc = sim_seg_open(comm, name);
    if (rc != ncclSuccess)
      return rc;
  }
  _Atomic uint32_t *claimed = sim_at(comm, l.claimed);
  uint32_t expect = 0;
  if (!atomic_compare_exchange_strong(&claimed[comm->rank], &expect, 1)) {
    sim_seg_detach(comm);
    return sim_error(ncclInvalidArgument, "rank %d joined the communicator twice", comm->rank);
  }
  struct sim_seg *s = comm->seg;
  if (atomic_fetch_add(&s->attached, 1) + 1 == (uint32_t)comm->nranks) {
    char note[PATH_MAX];
    shm_unlink(name);
    sim_note_path(name, note, sizeof note);
    if (note[0])
      unlink(note);
  }
  unsigned iter = 0;
  while (atomic_load(&s->attached) < (uint32_t)comm->nranks)
    sim_backoff(&iter);
  return ncclSuccess;
}

void sim_seg_detach(ncclComm_t comm)
{
  if (comm->seg)
    munmap(comm->seg, comm->seg_bytes);
  comm->seg = NULL;
}

/* Waits until every member has entered as many barriers as this one. */
static void sim_barrier(ncclComm_t comm)
{
  uint64_t target = (comm->barriers + 1) * (uint64_t)comm->nranks;
  comm->barriers++;
  atomic_fetch_add(&comm->seg->barrier, 1);
  unsigned iter = 0;
  while (atomic_load(&comm->seg->barrier) < target)
    sim_backoff(&iter);
}

/* Split k uses table k%2: a member can only write it again for split k+2,
 * after the barrier of split k+1, which every member enters only after
 * having read the table of split k. */
void sim_split_exchange(ncclComm_t comm, int color, int key, int *colors, int *keys)
{
  struct sim_layout l;
  sim_layout_of(comm->nranks, &l);
  size_t n = (size_t)comm->nranks;
  size_t base = (size_t)(comm->nsplits % 2) * n;
  volatile int32_t *tc = (int32_t *)sim_at(comm, l.colors) + base;
  volatile int32_t *tk = (int32_t *)sim_at(comm, l.keys) + base;
  tc[comm->rank] = color;
  tk[comm->rank] = key;
  atomic_thread_fence(memory_order_seq_cst);
  sim_barrier(comm);
  for (size_t i = 0; i < n; i++) {
    colors[i] = tc[i];
    keys[i] = tk[i];
  }
  comm->nsplits++;
}

static void sim_futex_wake(_Atomic uint32_t *word)
{
  syscall(SYS_futex, (uint32_t *)word, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

static void sim_futex_wait(_Atomic uint32_t *word, uint32_t expect, long ns)
{
  struct timespec ts = { 0, ns };
  syscall(SYS_futex, (uint32_t *)word, FUTEX_WAIT, expect, &ts, NULL, 0);
}

/* Rings a member's doorbell; a futex wake only when it sleeps on it. */
static void sim_ring(_Atomic uint32_t *bell)
{
  atomic_fetch_add(bell, 1);
  struct sim_bell *b = (struct sim_bell *)bell;
  if (atomic_load(&b->sleepers))
    sim_futex_wake(bell);
}

void sim_ring_self(ncclComm_t comm)
{
  if (comm->seg)
    sim_ring(&sim_bell_of(comm, comm->rank)->bell);
}

static __thread int t_layout;

void sim_layout_set(int layout)
{
  t_layout = layout;
}

static void sim_xfer_init(struct sim_xfer *x, ncclComm_t comm, enum sim_set set, int channel,
                          int peer, int is_send, void *buf, size_t bytes)
{
  memset(x, 0, sizeof *x);
  x->comm = comm;
  x->is_send = is_send;
  x->channel = channel;
  x->peer = peer;
  x->edge = is_send ? sim_edge_of(comm, set, channel, comm->rank, peer)
                    : sim_edge_of(comm, set, channel, peer, comm->rank);
  x->peer_bell = &sim_bell_of(comm, peer)->bell;
  x->buf = buf;
  x->bytes = bytes;
  x->layout = set == SIM_SET_COLL ? t_layout : 0;
}

void sim_xfer_send(struct sim_xfer *x, ncclComm_t comm, enum sim_set set, int channel, int peer,
                   const void *buf, size_t bytes)
{
  sim_xfer_init(x, comm, set, channel, peer, 1, (void *)buf, bytes);
}

void sim_xfer_recv(struct sim_xfer *x, ncclComm_t comm, enum sim_set set, int channel, int peer,
                   void *buf, size_t bytes)
{
  sim_xfer_init(x, comm, set, channel, peer, 0, buf, bytes);
}

void sim_xfer_recv_reduce(struct sim_xfer *x, ncclComm_t comm, enum sim_set set, int channel,
                          int peer, void *buf, size_t bytes, ncclDataType_t dtype, ncclRedOp_t redop)
{
  sim_xfer_init(x, comm, set, channel, peer, 0, buf, bytes);
  x->reduce = 1;
  x->dtype = dtype;
  x->redop = redop;
}

/* Publishes as many fragments as there are free slots; returns whether
 * anything moved. */
static int sim_send_step(struct sim_xfer *x)
{
  struct sim_edge *e = x->edge;
  uint32_t slot_bytes = x->comm->seg->slot_bytes;
  int moved = 0;
  if (x->stalled) {             /* the link is down: the receiver's credits never come */
    sim_prof_step_state(x, ncclProfilerProxyStepSendPeerWait_v4);
    return 0;
  }
  while (!x->posted_all) {
    uint64_t head = atomic_load_explicit(&e->head, memory_order_relaxed);
    uint64_t tail = atomic_load_explicit(&e->tail, memory_order_acquire);
    if (head - tail >= SIM_NSLOTS) {
      if (!x->source || x->source->finished || x->source->done > x->done)
        sim_prof_step_state(x, ncclProfilerProxyStepSendPeerWait_v4); /* data ready, no buffer */
      break;
    }
    size_t limit = x->bytes;
    if (x->source && !x->source->finished && x->source->done < limit)
      limit = x->source->done;
    size_t frag = limit - x->done;
    if (frag > slot_bytes)
      frag = slot_bytes;
    int last = x->done + frag == x->bytes;
    if (frag == 0 && !last)
      break;                    /* waiting for the source */
    struct sim_slot *s = sim_slot_of(e, slot_bytes, head);
    s->len = (uint32_t)frag;
    s->flags = last ? SIM_FRAG_END : 0;
    s->layout = (uint32_t)x->layout;
    if (frag)
      memcpy(s->data, x->buf + x->done, frag);
    atomic_store_explicit(&e->head, head + 1, memory_order_release);
    x->done += frag;
    moved = 1;
    if (last) {
      x->posted_all = 1;
      x->end_head = head + 1;
      sim_prof_step_state(x, ncclProfilerProxyStepSendWait);
    }
  }
  if (moved)
    sim_ring(x->peer_bell);
  if (x->posted_all &&
      (!x->rendezvous || atomic_load_explicit(&e->tail, memory_order_acquire) >= x->end_head))
    x->finished = 1;
  return moved;
}

/* Consumes the fragments available; returns whether anything moved. */
static int sim_recv_step(struct sim_xfer *x)
{
  struct sim_edge *e = x->edge;
  uint32_t slot_bytes = x->comm->seg->slot_bytes;
  int moved = 0;
  while (!x->finished) {
    uint64_t tail = atomic_load_explicit(&e->tail, memory_order_relaxed);
    uint64_t head = atomic_load_explicit(&e->head, memory_order_acquire);
    if (tail == head)
      break;
    struct sim_slot *s = sim_slot_of(e, slot_bytes, tail);
    if (s->layout != (uint32_t)x->layout)
      break;                    /* another protocol or algorithm: never seen */
    sim_prof_step_state(x, ncclProfilerProxyStepRecvFlushWait);
    sim_prof_step_state(x, ncclProfilerProxyStepRecvGPUWait);
    size_t n = s->len;
    if (n > slot_bytes)
      n = slot_bytes;
    if (n > x->bytes - x->done)
      n = x->bytes - x->done;   /* a longer message than expected: rest dropped */
    if (n && x->reduce) {
      size_t esize = sim_dtype_size(x->dtype);
      sim_reduce(x->buf + x->done, s->data, n / esize, x->dtype, x->redop);
    } else if (n) {
      memcpy(x->buf + x->done, s->data, n);
    }
    x->done += n;
    if (s->flags & SIM_FRAG_END)
      x->finished = 1;
    atomic_store_explicit(&e->tail, tail + 1, memory_order_release);
    moved = 1;
  }
  if (moved)
    sim_ring(x->peer_bell);
  return moved;
}

int sim_progress(struct sim_xfer *xs, int n)
{
  if (n <= 0)
    return 0;
  struct sim_bell *mine = sim_bell_of(xs[0].comm, xs[0].comm->rank);
  unsigned idle = 0;
  for (;;) {
    uint32_t snap = atomic_load(&mine->bell);
    int moved = 0, open = 0, aborted = 0;
    for (int i = 0; i < n; i++) {
      struct sim_xfer *x = &xs[i];
      if (x->finished)
        continue;
      moved |= x->is_send ? sim_send_step(x) : sim_recv_step(x);
      if (x->finished)
        sim_prof_step_end(x);
      if (!x->finished) {
        open++;
        aborted |= atomic_load(&x->comm->aborted);
      }
    }
    if (!open)
      return 0;
    if (aborted)
      return -1;
    if (moved) {
      idle = 0;
      continue;
    }
    if (++idle < 4) {
      sched_yield();
      continue;
    }
    long ns = 20000L << (idle - 4 < 6 ? idle - 4 : 6);
    if (ns > 1000000L)
      ns = 1000000L;
    atomic_fetch_add(&mine->sleepers, 1);
    sim_futex_wait(&mine->bell, snap, ns);
    atomic_fetch_sub(&mine->sleepers, 1);
  }
}
