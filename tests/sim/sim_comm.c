/* sim_comm.c — communicator lifecycle of the simulator: init (a blocking
 * rendezvous of all members in shared memory), split, shrink, the handles
 * one process holds of a communicator, and free.
 *
 * A split child's unique id is derived from (parent id, index of the split
 * on the parent, color), so every member of one color computes the same id
 * without talking; members are ordered by (key, parent rank).
 */
#include "config.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sim.h"
#include "sim_nccl.h"

/* Freed communicators are kept for reuse, never returned to malloc: a
 * handle used after ncclCommDestroy (a bug NCCL answers with
 * ncclInvalidArgument when it sees the cleared comm) then reads a comm with
 * no segment, which sim_check_comm refuses, instead of freed memory. */
static pthread_mutex_t free_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ncclComm *free_comms;

static struct ncclComm *sim_comm_alloc(void)
{
  pthread_mutex_lock(&free_lock);
  struct ncclComm *c = free_comms;
  if (c)
    free_comms = c->next_free;
  pthread_mutex_unlock(&free_lock);
  if (!c)
    return calloc(1, sizeof *c);
  memset(c, 0, sizeof *c);
  return c;
}

/* The handles this process holds of one communicator (by unique id).
 * NCCL links a process's ranks of one communicator (comm->intraComm0, e.g.
 * the ranks of one ncclCommInitAll) and frees them together, at the last
 * one's ncclCommDestroy/Abort (commReclaim, src/init.cc). */
struct sim_local {
  unsigned char id[NCCL_UNIQUE_ID_BYTES];
  int nhandles, nended;
  struct ncclComm *handles[SIM_LOCAL_MAX];
  struct sim_local *next;
};

static pthread_mutex_t local_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sim_local *locals;

static void sim_local_add(ncclComm_t c)
{
  pthread_mutex_lock(&local_lock);
  struct sim_local *e = locals;
  while (e && (memcmp(e->id, c->id, NCCL_UNIQUE_ID_BYTES) || e->nhandles == SIM_LOCAL_MAX))
    e = e->next;
  if (!e && (e = calloc(1, sizeof *e)) != NULL) {
    memcpy(e->id, c->id, NCCL_UNIQUE_ID_BYTES);
    e->next = locals;
    locals = e;
  }
  if (e)
    e->handles[e->nhandles++] = c;
  pthread_mutex_unlock(&local_lock);
}

int sim_comm_release(ncclComm_t comm, ncclComm_t *out)
{
  int n = 0;
  pthread_mutex_lock(&local_lock);
  comm->ended = 1;
  struct sim_local **pe = &locals;
  for (; *pe; pe = &(*pe)->next) {
    struct sim_local *e = *pe;
    int k = 0;
    while (k < e->nhandles && e->handles[k] != comm)
      k++;
    if (k == e->nhandles)
      continue;
    if (++e->nended == e->nhandles) {
      n = e->nhandles;
      memcpy(out, e->handles, (size_t)n * sizeof *out);
      *pe = e->next;
      free(e);
    }
    pthread_mutex_unlock(&local_lock);
    return n;
  }
  pthread_mutex_unlock(&local_lock);
  out[0] = comm;                /* not registered (out of memory at init): alone */
  return 1;
}

const char *const sim_algo_names[SIM_NALGOS] = { "Tree", "Ring", "CollNetDirect", "CollNetChain",
                                                  "NVLS", "NVLSTree", "PAT" };
const char *const sim_proto_names[SIM_NPROTOS] = { "LL", "LL128", "Simple" };

static int sim_lookup(const char *const *names, int n, const char *name, size_t len)
{
  for (int i = 0; i < n; i++)
    if (strlen(names[i]) == len && !strncasecmp(names[i], name, len))
      return i;
  return -1;
}

int sim_algo_lookup(const char *name)
{
  return name ? sim_lookup(sim_algo_names, SIM_NALGOS, name, strlen(name)) : -1;
}

int sim_proto_lookup(const char *name)
{
  return name ? sim_lookup(sim_proto_names, SIM_NPROTOS, name, strlen(name)) : -1;
}

/* NCCL_ALGO / NCCL_PROTO as NCCL parses them (src/graph/tuning.cc): a
 * comma-separated list of names, case-insensitive, or "^list" for all but
 * those.  The simulator has no tuning model: of the allowed ones it takes
 * the first named (with "^", the first of its default order not excluded)
 * that the function supports. */
struct sim_pref {
  int n;
  int order[SIM_NALGOS];        /* allowed, in order of preference */
};

static struct sim_pref algo_pref, proto_pref;
static pthread_once_t pref_once = PTHREAD_ONCE_INIT;

static void sim_pref_parse(const char *env, const char *const *names, int n, const int *dflt,
                           struct sim_pref *out)
{
  int excluded[SIM_NALGOS] = { 0 };
  out->n = 0;
  if (env && *env == '^') {
    for (const char *p = env + 1; *p;) {
      size_t len = strcspn(p, ",");
      int k = sim_lookup(names, n, p, len);
      if (k >= 0)
        excluded[k] = 1;
      p += len + (p[len] == ',');
    }
  } else if (env && *env) {
    for (const char *p = env; *p;) {
      size_t len = strcspn(p, ",");
      int k = sim_lookup(names, n, p, len);
      if (k >= 0)
        out->order[out->n++] = k;
      p += len + (p[len] == ',');
    }
    if (out->n > 0)
      return;
  }
  for (int i = 0; i < n; i++)
    if (!excluded[dflt[i]])
      out->order[out->n++] = dflt[i];
}

static void sim_pref_load(void)
{
  static const int algos[SIM_NALGOS] = { SIM_ALGO_RING, SIM_ALGO_TREE, SIM_ALGO_PAT, SIM_ALGO_NVLS,
                                         SIM_ALGO_NVLS_TREE, SIM_ALGO_COLLNET_DIRECT, SIM_ALGO_COLLNET_CHAIN };
  static const int protos[SIM_NPROTOS] = { SIM_PROTO_SIMPLE, SIM_PROTO_LL, SIM_PROTO_LL128 };
  sim_pref_parse(getenv("NCCL_ALGO"), sim_algo_names, SIM_NALGOS, algos, &algo_pref);
  sim_pref_parse(getenv("NCCL_PROTO"), sim_proto_names, SIM_NPROTOS, protos, &proto_pref);
}

/* Whether NCCL implements function `kind` with algorithm `algo` (2.28:
 * Tree, NVLSTree and CollNetChain all-reduce only, PAT all-gather and
 * reduce-scatter, NVLS and CollNetDirect those three, Ring all but the
 * pairwise ones). */
static int sim_algo_supports(int algo, enum sim_kind kind)
{
  int rs_ag = kind == SIM_ALLGATHER || kind == SIM_REDUCESCATTER;
  switch (algo) {
  case SIM_ALGO_RING: return 1;
  case SIM_ALGO_TREE: case SIM_ALGO_NVLS_TREE: case SIM_ALGO_COLLNET_CHAIN: return kind == SIM_ALLREDUCE;
  case SIM_ALGO_PAT: return rs_ag;
  default: return kind == SIM_ALLREDUCE || rs_ag;
  }
}

void sim_choose_algo(ncclComm_t comm, struct sim_op *op)
{
  op->algo = SIM_ALGO_RING;
  for (int i = 0; i < algo_pref.n; i++)
    if (sim_algo_supports(algo_pref.order[i], op->kind)) {
      op->algo = algo_pref.order[i];
      break;
    }
  op->proto = proto_pref.n > 0 ? proto_pref.order[0] : SIM_PROTO_SIMPLE;
  int algo = atomic_exchange(&comm->next_algo, -1), proto = atomic_exchange(&comm->next_proto, -1);
  if (algo >= 0)
    op->algo = algo;
  if (proto >= 0)
    op->proto = proto;
}

/* sim_fail_next_init: the error of the next creation in this process. */
static _Atomic int init_fail;

int sim_fail_next_init(int err)
{
  atomic_store(&init_fail, err);
  return 0;
}

ncclResult_t sim_take_init_fail(void)
{
  return (ncclResult_t)atomic_exchange(&init_fail, 0);
}

ncclResult_t sim_comm_init(ncclComm_t *out, int nranks, const unsigned char *id, int rank)
{
  pthread_once(&pref_once, sim_pref_load);
  struct ncclComm *c = sim_comm_alloc();
  if (!c)
    return sim_error(ncclSystemError, "out of memory");
  c->rank = rank;
  c->nranks = nranks;
  memcpy(c->id, id, NCCL_UNIQUE_ID_BYTES);
  atomic_init(&c->pending, 0);
  atomic_init(&c->aborted, 0);
  c->stall_peer = c->stall_channel = -1;
  c->next_algo = c->next_proto = -1;
  ncclResult_t rc = sim_seg_attach(c);
  if (rc != ncclSuccess) {
    sim_comm_free(c);
    return rc;
  }
  sim_prof_comm_init(c);
  /* NCCL initializes the profiler plugin's context, then sets up the
   * device side (devCommSetup: cudaMalloc of the device comm and its
   * work FIFO); a failure there frees the comm and its profiler context */
  ncclResult_t fail = sim_take_init_fail();
  if (fail != ncclSuccess) {
    sim_comm_free(c);
    return sim_error(fail, "rank %d: device setup of the communicator failed (injected)", rank);
  }
  sim_local_add(c);
  *out = c;
  return ncclSuccess;
}

/* splitmix64: one step of a well-mixed 64-bit sequence. */
static uint64_t sim_mix(uint64_t x)
{
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

/* The unique id of split number `index` of `parent`, for one color. */
static void sim_split_id(const unsigned char *parent, int index, int color, unsigned char *out)
{
  uint64_t seed = 0x73706c6974ull; /* "split" */
  for (int i = 0; i < NCCL_UNIQUE_ID_BYTES; i++)
    seed = sim_mix(seed ^ parent[i]);
  seed = sim_mix(seed ^ (uint64_t)(uint32_t)index);
  seed = sim_mix(seed ^ ((uint64_t)(uint32_t)color << 32));
  for (int i = 0; i < NCCL_UNIQUE_ID_BYTES; i += 8) {
    uint64_t v = sim_mix(seed + (uint64_t)i);
    memcpy(out + i, &v, 8);
  }
}

/* Exchanges (color, key) on the parent, then inits the child of this
 * color with its derived id; NCCL_SPLIT_NOCOLOR gets NULL. */
ncclResult_t sim_comm_split(ncclComm_t comm, int color, int key, ncclComm_t *newcomm)
{
  int n = comm->nranks;
  int *colors = malloc((size_t)n * sizeof *colors);
  int *keys = malloc((size_t)n * sizeof *keys);
  if (!colors || !keys) {
    free(colors);
    free(keys);
    return sim_error(ncclSystemError, "out of memory");
  }
  int index = comm->nsplits;
  sim_split_exchange(comm, color, key, colors, keys);
  int size = 0, myrank = 0;
  for (int i = 0; i < n; i++) {
    if (colors[i] != color)
      continue;
    size++;
    if (keys[i] < key || (keys[i] == key && i < comm->rank))
      myrank++;
  }
  free(colors);
  free(keys);
  if (color == NCCL_SPLIT_NOCOLOR) {
    *newcomm = NULL;
    return ncclSuccess;
  }
  unsigned char id[NCCL_UNIQUE_ID_BYTES];
  sim_split_id(comm->id, index, color, id);
  return sim_comm_init(newcomm, size, id, myrank);
}

ncclResult_t sim_comm_shrink(ncclComm_t comm, const int *excl, int nexcl, ncclComm_t *newcomm)
{
  int below = 0, set = 0;
  for (int i = 0; i < nexcl; i++) {
    if (excl[i] == comm->rank)
      return sim_error(ncclInvalidArgument, "rank %d shrinks itself out", comm->rank);
    if (excl[i] < comm->rank)
      below++;
    set = set * 31 + excl[i]; /* order-sensitive is fine: all survivors pass one list */
  }
  unsigned char id[NCCL_UNIQUE_ID_BYTES];
  /* offset the index so a shrink's id never equals a split's */
  sim_split_id(comm->id, 1000000 + comm->nshrinks++, set & 0x7fffffff, id);
  return sim_comm_init(newcomm, comm->nranks - nexcl, id, comm->rank - below);
}

void sim_comm_free(ncclComm_t comm)
{
  sim_prof_comm_fini(comm);
  sim_seg_detach(comm);
  pthread_mutex_lock(&free_lock);
  comm->next_free = free_comms;
  free_comms = comm;
  pthread_mutex_unlock(&free_lock);
}
