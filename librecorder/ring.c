/* ring.c — lock-free record ring (see ring.h). */
#include "ring.h"

#include <stdlib.h>
#include <string.h>

int fr_ring_init(fr_ring *r, uint64_t entries) {
  uint64_t cap = 16;
  while (cap < entries && cap < (UINT64_C(1) << 30)) cap <<= 1;
  memset(r, 0, sizeof *r);
  r->slots = calloc(cap, sizeof *r->slots);
  if (!r->slots) return -1;
  r->capacity = cap;
  r->mask = cap - 1;
  atomic_store(&r->head, 0);
  return 0;
}

void fr_ring_free(fr_ring *r) {
  free(r->slots);
  memset(r, 0, sizeof *r);
}

fr_slot *fr_ring_claim(fr_ring *r, uint64_t *id) {
  uint64_t n = atomic_fetch_add_explicit(&r->head, 1, memory_order_relaxed);
  fr_slot *s = &r->slots[n & r->mask];
  atomic_store_explicit(&s->ver, 2 * n + 1, memory_order_relaxed);
  atomic_thread_fence(memory_order_release);
  *id = n;
  return s;
}

void fr_ring_publish(fr_slot *s, uint64_t id) {
  /* Only publish if nobody lapped us meanwhile (a later writer wins).  A
   * load and a store, not a locked compare-and-swap on every call: the
   * window in which a writer a whole ring ahead could slip in between is a
   * few instructions long. */
  if (atomic_load_explicit(&s->ver, memory_order_relaxed) == 2 * id + 1)
    atomic_store_explicit(&s->ver, 2 * id + 2, memory_order_release);
}

fr_slot *fr_ring_get(fr_ring *r, uint64_t id) {
  fr_slot *s = &r->slots[id & r->mask];
  if (atomic_load_explicit(&s->ver, memory_order_acquire) != 2 * id + 2) return NULL;
  return s;
}

uint64_t fr_ring_snapshot(fr_ring *r, frz_record *out, uint64_t *first_id) {
  uint64_t head = atomic_load_explicit(&r->head, memory_order_acquire);
  uint64_t lo = head > r->capacity ? head - r->capacity : 0;
  uint64_t n = 0, first = head;
  for (uint64_t id = lo; id < head; id++) {
    fr_slot *s = &r->slots[id & r->mask];
    uint64_t v1 = atomic_load_explicit(&s->ver, memory_order_acquire);
    if (v1 != 2 * id + 2) continue;
    memcpy(&out[n], &s->rec, sizeof out[n]);
    atomic_thread_fence(memory_order_acquire);
    if (atomic_load_explicit(&s->ver, memory_order_relaxed) != v1) continue;
    if (first == head) first = id;
    n++;
  }
  *first_id = first;
  return n;
}
