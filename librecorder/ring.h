/* ring.h — the recorder's lock-free ring of fixed-size records.
 *
 * Shape: `capacity` slots (a power of two), each holding one frz_record plus
 * the two CUDA events used to track it.  Writers (any application thread)
 * claim the next record id with one atomic add; slot = id & (capacity-1).
 * A slot's `ver` says what it holds: 0 empty, 2*id+1 being written,
 * 2*id+2 holding record `id`.  Readers (the watchdog's dump) copy a slot and
 * keep the copy only if `ver` is the same before and after: a record being
 * overwritten is dropped, never torn.  One exception, the price of a hot
 * path without a locked instruction: a writer stalled for a whole lap of
 * the ring (`capacity` newer records written meanwhile) shares its slot
 * with the writer a lap ahead, and the record published there may mix
 * their fields (ThreadSanitizer reports it with a tiny ring under many
 * threads).  No locks, no allocation after init.
 */
#ifndef FR_RING_H
#define FR_RING_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "fr_cuda.h"
#include "frz.h"

typedef struct fr_slot {
  _Atomic uint64_t ver;
  frz_record rec;              /* state/result/times: accessed with __atomic */
  void *ev[2];                 /* start, end: the device layer's events (CUevent or
                                  hipEvent_t); created lazily, owned by the slot */
  void *ev_ctx;                /* where they belong: a CUcontext, or HIP device + 1 */
  _Atomic uint8_t ev_armed;    /* bit 0 start recorded, bit 1 end recorded */
  uint8_t no_coll_event;       /* a collective no profiler Coll event describes: RCCL
                                  runs ncclAllToAll(v) as grouped p2p (fr_rec_begin: 0) */
  uint64_t ev_lead;            /* a CUDA graph replay's record: the replay's first record, whose
                                  events it shares (graphs.c) */
} fr_slot;

typedef struct fr_ring {
  fr_slot *slots;              /* private memory, or the ring file's slots (fr_ring_adopt) */
  uint64_t capacity;           /* power of two */
  uint64_t mask;
  _Atomic uint64_t *head;      /* next record id: own_head, or the ring file's */
  _Atomic uint64_t own_head;
} fr_ring;

/* Allocate a ring of at least `entries` slots (rounded up to a power of two,
 * minimum 16).  Returns 0, or -1 when memory is short. */
int fr_ring_init(fr_ring *r, uint64_t entries);
void fr_ring_free(fr_ring *r);
/* Move the ring into `slots` (room for r->capacity slots, zeroed) and
 * `head` (a shared file mapping, ringfile.c): what it holds is copied, then
 * writers use the new memory.  The old memory stays allocated (a writer
 * racing the move may still finish a record there; that record is lost). */
void fr_ring_adopt(fr_ring *r, fr_slot *slots, _Atomic uint64_t *head);
/* The next record id (records written so far). */
static inline uint64_t fr_ring_head(fr_ring *r) {
  return atomic_load_explicit(__atomic_load_n(&r->head, __ATOMIC_RELAXED), memory_order_acquire);
}
/* Claim a new record: returns its slot with ver = 2*id+1 and *id set.  The
 * caller fills slot->rec and then calls fr_ring_publish. */
fr_slot *fr_ring_claim(fr_ring *r, uint64_t *id);
void fr_ring_publish(fr_slot *s, uint64_t id);
/* The slot of record `id` if it still holds that published record, else NULL. */
fr_slot *fr_ring_get(fr_ring *r, uint64_t id);
/* Copy the published records still in the ring, oldest first, into `out`
 * (room for r->capacity records).  Returns the number copied; *first_id is
 * the lowest id still retained (ids below were overwritten). */
uint64_t fr_ring_snapshot(fr_ring *r, frz_record *out, uint64_t *first_id);

#endif /* FR_RING_H */
