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
  atomic_store(&r->own_head, 0);
  r->head = &r->own_head;
  return 0;
}

void fr_ring_adopt(fr_ring *r, fr_slot *slots, _Atomic uint64_t *head) {
  fr_slot *old = __atomic_load_n(&r->slots, __ATOMIC_ACQUIRE);
  if (!old || !slots) return;
  uint64_t h = fr_ring_head(r);
  /* copy the slots (their records and event handles) one by one: the
   * words another thread may write with atomics are read with atomics */
  for (uint64_t i = 0; i < r->capacity; i++) {
    uint64_t v = atomic_load_explicit(&old[i].ver, memory_order_acquire);
    if (!v) continue;
    memcpy(&slots[i].rec, &old[i].rec, sizeof old[i].rec);
    slots[i].ev[0] = old[i].ev[0];
    slots[i].ev[1] = old[i].ev[1];
    slots[i].ev_ctx = old[i].ev_ctx;
    atomic_store_explicit(&slots[i].ev_armed, atomic_load(&old[i].ev_armed), memory_order_relaxed);
    atomic_store_explicit(&slots[i].ver, v, memory_order_release);
  }
  atomic_store_explicit(head, h, memory_order_release);
  __atomic_store_n(&r->slots, slots, __ATOMIC_RELEASE);
  __atomic_store_n(&r->head, head, __ATOMIC_RELEASE);
}

void fr_ring_free(fr_ring *r) {
  free(r->slots);
  memset(r, 0, sizeof *r);
}

fr_slot *fr_ring_claim(fr_ring *r, uint64_t *id) {
  uint64_t n = atomic_fetch_add_explicit(__atomic_load_n(&r->head, __ATOMIC_RELAXED), 1,
                                         memory_order_relaxed);
  fr_slot *s = &__atomic_load_n(&r->slots, __ATOMIC_RELAXED)[n & r->mask];
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
  fr_slot *s = &__atomic_load_n(&r->slots, __ATOMIC_RELAXED)[id & r->mask];
  if (atomic_load_explicit(&s->ver, memory_order_acquire) != 2 * id + 2) return NULL;
  return s;
}

uint64_t fr_ring_snapshot(fr_ring *r, frz_record *out, uint64_t *first_id) {
  uint64_t head = fr_ring_head(r);
  fr_slot *slots = __atomic_load_n(&r->slots, __ATOMIC_ACQUIRE);
  uint64_t lo = head > r->capacity ? head - r->capacity : 0;
  uint64_t n = 0, first = head;
  for (uint64_t id = lo; id < head; id++) {
    fr_slot *s = &slots[id & r->mask];
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
