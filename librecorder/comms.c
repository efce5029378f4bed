/* comms.c — the communicator registry.
 *
 * Entries live in a fixed append-only array (so dumps can list every comm,
 * destroyed ones too); an open-addressing index maps live ncclComm_t handles
 * to entries.  Adding takes a mutex (init path only); lookup is lock-free.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "identity.h"
#include "recorder.h"

#define INDEX_SIZE (FR_MAX_COMMS * 2) /* power of two */
#define SLOT_EMPTY ((uintptr_t)0)
#define SLOT_GONE ((uintptr_t)1)

static fr_comm own_comms[FR_MAX_COMMS];
static _Atomic uint32_t own_ncomms;
/* the table in use: ours, or the ring file's (fr_comms_adopt) */
static fr_comm *comms = own_comms;
static _Atomic uint32_t *ncomms_p = &own_ncomms;
#define ncomms (*__atomic_load_n(&ncomms_p, __ATOMIC_RELAXED))
static inline fr_comm *table(void) { return __atomic_load_n(&comms, __ATOMIC_ACQUIRE); }
/* index: key = handle (or EMPTY/GONE), value = entry number + 1 */
static _Atomic uintptr_t index_key[INDEX_SIZE];
static _Atomic uint32_t index_val[INDEX_SIZE];
static pthread_mutex_t add_lock = PTHREAD_MUTEX_INITIALIZER;
/* Bumped whenever a handle's entry changes (put, retire, reset): the
 * per-thread cache of the last lookup is good while it is unchanged. */
static _Atomic uint32_t index_gen;
static __thread struct {
  uintptr_t handle;
  fr_comm *comm;
  uint32_t gen;
} last_lookup __attribute__((tls_model("initial-exec")));

static uint32_t slot_of(uintptr_t handle) {
  return (uint32_t)(fr_hash_finish(handle) & (INDEX_SIZE - 1));
}

/* Enter handle -> entry n in the index (add_lock held). */
static void index_put(uintptr_t handle, uint32_t n) {
  uint32_t i = slot_of(handle);
  for (uint32_t probe = 0; probe < INDEX_SIZE; probe++, i = (i + 1) & (INDEX_SIZE - 1)) {
    uintptr_t k = atomic_load(&index_key[i]);
    if (k == SLOT_EMPTY || k == SLOT_GONE || k == handle) {
      atomic_store(&index_val[i], n + 1);
      atomic_store_explicit(&index_key[i], handle, memory_order_release);
      atomic_fetch_add_explicit(&index_gen, 1, memory_order_release);
      break;
    }
  }
}

fr_comm *fr_comm_add(uintptr_t handle, uint64_t comm_id, uint64_t parent_id, int nranks,
                     int rank, uint32_t flags) {
  fr_comm *c = NULL;
  pthread_mutex_lock(&add_lock);
  uint32_t n = atomic_load(&ncomms);
  if (n >= FR_MAX_COMMS) goto out;
  c = &table()[n];
  memset(c, 0, sizeof *c);
  c->handle = handle;
  c->comm_id = comm_id;
  c->parent_id = parent_id;
  c->nranks = nranks;
  c->rank = rank;
  c->split_color = -1;
  c->split_key = -1;
  c->cuda_device = -1;
  atomic_store(&c->flags, flags);
  if (nranks > 0 && nranks <= (1 << 24)) c->p2p_seq = calloc((size_t)nranks * 2, sizeof *c->p2p_seq);
  if (handle > SLOT_GONE) index_put(handle, n);
  atomic_store_explicit(&ncomms, n + 1, memory_order_release);
out:
  pthread_mutex_unlock(&add_lock);
  /* the first comm: the watchdog announces this process at once, not at its
   * next poll (a rank killed in its first 100 ms would leave no trace) */
  if (c && n == 0) fr_watchdog_wake();
  return c;
}

void fr_comm_bind(fr_comm *c, uintptr_t handle) {
  if (!c || handle <= SLOT_GONE) return;
  pthread_mutex_lock(&add_lock);
  __atomic_store_n(&c->handle, handle, __ATOMIC_RELAXED);
  index_put(handle, (uint32_t)(c - table()));
  pthread_mutex_unlock(&add_lock);
}

fr_comm *fr_comm_find(uintptr_t handle) {
  if (handle <= SLOT_GONE) return NULL;
  /* a job calls on one comm after another: the last lookup of this thread
   * first (two loads and compares instead of a hash and a probe) */
  uint32_t gen = atomic_load_explicit(&index_gen, memory_order_acquire);
  if (last_lookup.handle == handle && last_lookup.gen == gen) return last_lookup.comm;
  uint32_t i = slot_of(handle);
  for (uint32_t probe = 0; probe < INDEX_SIZE; probe++, i = (i + 1) & (INDEX_SIZE - 1)) {
    uintptr_t k = atomic_load_explicit(&index_key[i], memory_order_acquire);
    if (k == handle) {
      uint32_t v = atomic_load_explicit(&index_val[i], memory_order_relaxed);
      fr_comm *c = v ? &__atomic_load_n(&comms, __ATOMIC_ACQUIRE)[v - 1] : NULL;
      if (c) {
        last_lookup.handle = handle;
        last_lookup.comm = c;
        last_lookup.gen = gen;
      }
      return c;
    }
    if (k == SLOT_EMPTY) return NULL;
  }
  return NULL;
}

/* The resolved real ncclCommCount / ncclCommUserRank, for comms we did not
 * see being created (e.g. by CommInitAll, passed through). */
typedef ncclResult_t (*comm_int_fn)(const ncclComm_t, int *);

fr_comm *fr_comm_get(uintptr_t handle) {
  fr_comm *c = fr_comm_find(handle);
  if (FR_LIKELY(c != NULL) || handle <= SLOT_GONE) return c;
  int nranks = -1, rank = -1;
  comm_int_fn count = (comm_int_fn)fr_resolve("pncclCommCount", "ncclCommCount");
  comm_int_fn urank = (comm_int_fn)fr_resolve("pncclCommUserRank", "ncclCommUserRank");
  if (count && count((ncclComm_t)handle, &nranks) != ncclSuccess) nranks = -1;
  if (urank && urank((ncclComm_t)handle, &rank) != ncclSuccess) rank = -1;
  /* No consistent identity is possible: hash the handle with our pid. */
  uint64_t id = fr_hash_finish(fr_hash_u64(fr_hash_u64(FR_HASH_SEED, handle), fr_g.proc.pid));
  fr_on_first_comm();
  return fr_comm_add(handle, id, 0, nranks, rank, FRZ_CF_UNKNOWN_ID);
}

void fr_comm_retire(fr_comm *c, uint32_t flag) {
  atomic_fetch_or(&c->flags, flag);
  pthread_mutex_lock(&add_lock);
  uint32_t i = slot_of(c->handle);
  for (uint32_t probe = 0; probe < INDEX_SIZE; probe++, i = (i + 1) & (INDEX_SIZE - 1)) {
    uintptr_t k = atomic_load(&index_key[i]);
    if (k == SLOT_EMPTY) break;
    if (k == c->handle && &table()[atomic_load(&index_val[i]) - 1] == c) {
      atomic_store(&index_key[i], SLOT_GONE);
      atomic_fetch_add_explicit(&index_gen, 1, memory_order_release);
      break;
    }
  }
  pthread_mutex_unlock(&add_lock);
}

uint32_t fr_comm_count(void) { return atomic_load_explicit(&ncomms, memory_order_acquire); }

fr_comm *fr_comm_at(uint32_t i) { return i < fr_comm_count() ? &table()[i] : NULL; }

void fr_comms_adopt(fr_comm *dst, _Atomic uint32_t *count) {
  pthread_mutex_lock(&add_lock);
  uint32_t n = atomic_load(ncomms_p);
  memcpy(dst, comms, n * sizeof *dst);
  atomic_store(count, n);
  __atomic_store_n(&comms, dst, __ATOMIC_RELEASE);
  __atomic_store_n(&ncomms_p, count, __ATOMIC_RELEASE);
  atomic_fetch_add_explicit(&index_gen, 1, memory_order_release); /* cached lookups point at the old table */
  pthread_mutex_unlock(&add_lock);
}

/* After fork, in the child: forget everything (the child stays inert), and
 * never touch the parent's ring file, which the child shares. */
void fr_comms_reset(void) {
  pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
  memcpy(&add_lock, &fresh, sizeof fresh);
  comms = own_comms;
  ncomms_p = &own_ncomms;
  atomic_store(&ncomms, 0);
  atomic_fetch_add(&index_gen, 1);
}
