/* plugin_ops.c — NCCL's Coll, P2p, CollApi and P2pApi profiler events and
 * the records they belong to.
 *
 * With the interposer active, every call already has its record: the k-th
 * Coll event of a comm is its k-th collective record with a nonzero count
 * (NCCL does not profile empty collectives), the P2p events pair with the
 * Send/Recv records of the same peer and direction in order (RCCL's
 * ncclAllToAll(v) records excepted: RCCL runs them as p2p).  The event
 * adds what only NCCL knows — its own seqNumber, the algorithm, protocol
 * and channels — and flags the record PROFILER_SEEN.
 *
 * Static-NCCL mode (a comm NCCL created without an interposed init, see
 * plugin.c): the plugin makes the records.  CollApi/P2pApi events (NCCL
 * 2.28: at the API call) create them; with NCCL 2.27, which has no API
 * events, the Coll/P2p event at launch does.  Their state follows the
 * kernel-channel events: started when the first channel starts, completed
 * when every channel NCCL launched has stopped.  The reduction operator is
 * not in any event (255, unknown).
 */
#include <string.h>

#include "profiler.h"

#define MATCH_WINDOW 4096 /* records looked at per event, at most */

static void *tag(void *obj, int t) { return obj ? (void *)((uintptr_t)obj | (uintptr_t)t) : NULL; }

static int is_api(uint64_t type) { return type == ncclProfileCollApi || type == ncclProfileP2pApi; }
static int is_p2p(uint64_t type) { return type == ncclProfileP2p || type == ncclProfileP2pApi; }

static int p2p_dir(const char *func) {
  unsigned op = frz_op_from_name(func);
  return op == FRZ_OP_Send ? FRZ_DIR_SEND : op == FRZ_OP_Recv ? FRZ_DIR_RECV : FRZ_DIR_NONE;
}

/* Is r the next record a Coll (p2p == 0) or P2p event of ctx may describe? */
static int candidate(const fr_prof_ctx *ctx, const frz_record *r, int p2p, int peer, int dir) {
  uint32_t flags = __atomic_load_n(&r->flags, __ATOMIC_ACQUIRE);
  /* a captured call has no Coll event of its own: NCCL emits one at each
   * launch of the graph, for that replay's record */
  if (r->comm_id != ctx->comm_id || (flags & (FRZ_RF_PROFILER_SEEN | FRZ_RF_SIMULATED | FRZ_RF_GRAPH_CAPTURED))) return 0;
  if (!p2p) return r->kind == FRZ_KIND_COLL && r->count > 0;
  return r->kind == FRZ_KIND_P2P && r->peer == peer && r->dir == dir;
}

/* The first candidate record from *cursor on (within the ring and the
 * window); advances the cursor past it (collectives) or past the records a
 * later P2p event can no longer match.  The slot, or NULL. */
static fr_slot *find_record(fr_prof_ctx *ctx, int p2p, int peer, int dir, uint64_t *id_out) {
  uint64_t *cursor = p2p ? &ctx->p2p_cursor : &ctx->coll_cursor;
  uint64_t head = fr_ring_head(&fr_g.ring);
  uint64_t from = *cursor;
  if (head > fr_g.ring.capacity && from < head - fr_g.ring.capacity) from = head - fr_g.ring.capacity;
  if (head - from > MATCH_WINDOW) from = head - MATCH_WINDOW;
  fr_slot *found = NULL;
  for (uint64_t id = from; id < head && !found; id++) {
    fr_slot *s = fr_ring_get(&fr_g.ring, id);
    if (s && (p2p || !s->no_coll_event) && candidate(ctx, &s->rec, p2p, peer, dir)) {
      found = s;
      *id_out = id;
    }
  }
  if (!found) return NULL;
  if (!p2p) {
    *cursor = *id_out + 1;
  } else { /* the oldest p2p record of this comm not yet described */
    uint64_t c = from;
    for (; c < head; c++) {
      fr_slot *s = fr_ring_get(&fr_g.ring, c);
      if (!s) continue;
      const frz_record *r = &s->rec;
      if (s != found && r->comm_id == ctx->comm_id && r->kind == FRZ_KIND_P2P &&
          !(__atomic_load_n(&r->flags, __ATOMIC_ACQUIRE) & FRZ_RF_PROFILER_SEEN))
        break;
    }
    *cursor = c;
  }
  return found;
}

/* A record for an event of a comm the interposer does not see. */
static fr_slot *make_record(fr_prof_ctx *ctx, const fr_prof_task *t, uint64_t *id) {
  fr_comm *c = atomic_load_explicit(&ctx->comm, memory_order_acquire);
  if (!c) return NULL;
  unsigned op = frz_op_from_name(t->func);
  if (op == FRZ_OP_Bcast) op = FRZ_OP_Broadcast; /* as the interposer stores it */
  fr_slot *s;
  if (is_p2p(t->type)) {
    int dir = p2p_dir(t->func);
    if (dir == FRZ_DIR_NONE) return NULL;
    s = fr_rec_begin(c, op, FRZ_KIND_P2P, fr_p2p_seq(c, t->root_or_peer, dir), t->count,
                     frz_dtype_from_name(t->datatype), -1, t->root_or_peer, dir, t->stream, NULL, id, 0);
  } else {
    int rooted = op == FRZ_OP_Broadcast || op == FRZ_OP_Reduce || op == FRZ_OP_Gather ||
                 op == FRZ_OP_Scatter;
    uint64_t seq = atomic_fetch_add_explicit(&c->next_seq, 1, memory_order_relaxed);
    s = fr_rec_begin(c, op ? op : FRZ_OP_NONE, FRZ_KIND_COLL, seq, t->count,
                     frz_dtype_from_name(t->datatype), -1, rooted ? t->root_or_peer : -1,
                     FRZ_DIR_NONE, t->stream, NULL, id, 0);
  }
  /* without kernel-channel events nothing will say when it completed */
  fr_rec_flags_set(s, FRZ_RF_PROFILER_SEEN | ((ctx->mask & ncclProfileKernelCh) ? 0 : FRZ_RF_NO_TRACKING), 0);
  return s;
}

void *fr_prof_task_start(fr_prof_ctx *ctx, const fr_prof_task *t) {
  int api = is_api(t->type);
  if (api && !ctx->static_mode) return NULL; /* the interposer has the call */
  fr_prof_op *op = fr_prof_op_claim(ctx);
  if (!op) return NULL;
  int p2p = is_p2p(t->type);
  uint64_t id = UINT64_MAX;
  pthread_mutex_lock(&ctx->match_lock);
  fr_slot *s = api ? NULL : find_record(ctx, p2p, t->root_or_peer, p2p_dir(t->func), &id);
  int made = 0;
  if (!s && ctx->static_mode) {
    s = make_record(ctx, t, &id);
    made = s != NULL;
  }
  pthread_mutex_unlock(&ctx->match_lock);
  if (!s) return tag(op, api ? FR_TAG_API : FR_TAG_OP); /* events go on, without a record */
  op->record_id = id;
  op->seq = s->rec.seq;
  op->kind = s->rec.kind;
  op->plugin_record = (uint8_t)ctx->static_mode;
  if (!api) {
    s->rec.nccl_seq = t->nccl_seq;
    s->rec.algo = (uint8_t)frz_algo_from_name(t->algo);
    s->rec.proto = (uint8_t)frz_proto_from_name(t->proto);
    s->rec.nchannels = t->nchannels;
    __atomic_fetch_or(&s->rec.flags, FRZ_RF_PROFILER_SEEN, __ATOMIC_RELEASE);
    if (made) fr_rec_end(s, id, ncclSuccess); /* NCCL 2.27: made at launch, the call returns */
  } else {
    /* the Coll/P2p event at launch describes this record too */
    __atomic_fetch_and(&s->rec.flags, ~(uint32_t)FRZ_RF_PROFILER_SEEN, __ATOMIC_RELEASE);
  }
  return tag(op, api ? FR_TAG_API : FR_TAG_OP);
}

/* The end of an API event is the return of the call. */
void fr_prof_task_stop(fr_prof_op *op, int api) {
  if (!api || op->record_id == UINT64_MAX) return;
  fr_slot *s = fr_ring_get(&fr_g.ring, op->record_id);
  if (s) fr_rec_end(s, op->record_id, ncclSuccess);
}

void fr_prof_record_kernel(fr_prof_op *op, int started) {
  if (!op->plugin_record || op->record_id == UINT64_MAX) return;
  fr_slot *s = fr_ring_get(&fr_g.ring, op->record_id);
  if (!s) return;
  frz_record *r = &s->rec;
  uint64_t now = fr_now_ns();
  uint8_t state = __atomic_load_n(&r->state, __ATOMIC_ACQUIRE);
  if (started) {
    if (state == FRZ_STATE_ENQUEUED) {
      __atomic_store_n(&r->t_start_ns, now, __ATOMIC_RELAXED);
      fr_rec_state_advance(s, FRZ_STATE_STARTED);
    }
    return;
  }
  uint32_t on = atomic_load(&op->kch_started), off = atomic_load(&op->kch_stopped);
  if (off < on || (r->nchannels && off < r->nchannels) || state == FRZ_STATE_FAILED) return;
  if (state == FRZ_STATE_ENQUEUED) __atomic_store_n(&r->t_start_ns, now, __ATOMIC_RELAXED);
  __atomic_store_n(&r->t_complete_ns, now, __ATOMIC_RELAXED);
  fr_rec_state_advance(s, FRZ_STATE_COMPLETED);
}

void fr_prof_init_record(fr_prof_ctx *ctx) {
  fr_comm *c = atomic_load(&ctx->comm);
  if (!c) return;
  uint64_t id, t0 = fr_now_ns();
  fr_slot *s = fr_life_begin(c, FRZ_OP_CommInitRank, FRZ_KIND_LIFE, NULL, &id);
  fr_rec_flags_set(s, FRZ_RF_PROFILER_SEEN, 0);
  fr_life_done(s, id, ncclSuccess, t0);
}
