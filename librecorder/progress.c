/* progress.c — the progress table NCCL's proxy and kernel-channel events
 * fill: per (comm, channel, peer, direction) the proxy steps posted and
 * done, the state of the oldest step still in flight and when the state
 * last changed; per (comm, channel) the seq of the op whose kernel last
 * started and stopped there.  A step stuck in SendPeerWait means the
 * receiver never offered a buffer; stuck in RecvWait, the sender never sent
 * (NCCL's state values; fr_profiler.h).
 *
 * Entries live in a fixed open-addressing table per context, claimed with a
 * compare-and-swap on their key; when it is full, new connections are
 * counted as dropped.  Every field is an atomic written with relaxed
 * ordering: the dump reads a snapshot that may mix two moments of one
 * entry, never a torn value.
 */
#include <string.h>
#include <unistd.h>

#include "profiler.h"

/* The dump's proxy states (frz.h) are NCCL's values, which the analysis reads
 * without NCCL's profiler header. */
_Static_assert((int)FRZ_PROXY_SEND_GPU_WAIT == (int)ncclProfilerProxyStepSendGPUWait &&
                   (int)FRZ_PROXY_SEND_WAIT == (int)ncclProfilerProxyStepSendWait &&
                   (int)FRZ_PROXY_RECV_WAIT == (int)ncclProfilerProxyStepRecvWait &&
                   (int)FRZ_PROXY_RECV_FLUSH_WAIT == (int)ncclProfilerProxyStepRecvFlushWait &&
                   (int)FRZ_PROXY_RECV_GPU_WAIT == (int)ncclProfilerProxyStepRecvGPUWait &&
                   (int)FRZ_PROXY_SEND_PEER_WAIT == (int)ncclProfilerProxyStepSendPeerWait_v4,
               "frz.h's proxy states are NCCL's ncclProfilerEventState_t values");

static uint32_t link_key(int channel, int peer, int is_send) {
  return 1u + (((uint32_t)channel & 0xffu) << 23 | (is_send ? 1u : 0u) << 22 | ((uint32_t)peer & 0x3fffffu));
}

/* The entry of (channel, peer, direction), created on first use; NULL when
 * the table is full. */
static fr_prof_link *find_link(fr_prof_ctx *ctx, int channel, int peer, int is_send) {
  uint32_t key = link_key(channel, peer, is_send);
  uint32_t i = (key * 2654435761u) % FR_PROF_LINKS;
  for (uint32_t probe = 0; probe < FR_PROF_LINKS; probe++, i = (i + 1) % FR_PROF_LINKS) {
    fr_prof_link *l = &ctx->links[i];
    uint32_t k = atomic_load_explicit(&l->key, memory_order_acquire);
    if (k == key) return l;
    if (k == 0) {
      uint32_t expect = 0;
      if (atomic_compare_exchange_strong(&l->key, &expect, key)) {
        atomic_fetch_add_explicit(&ctx->links_used, 1, memory_order_relaxed);
        return l;
      }
      if (expect == key) return l;
    }
  }
  atomic_fetch_add_explicit(&ctx->links_dropped, 1, memory_order_relaxed);
  return NULL;
}

static void *tag(void *obj, int t) { return obj ? (void *)((uintptr_t)obj | (uintptr_t)t) : NULL; }
static void *untag(void *h, int t) {
  return ((uintptr_t)h & FR_TAG_MASK) == (uintptr_t)t ? (void *)((uintptr_t)h & ~(uintptr_t)FR_TAG_MASK) : NULL;
}

static void touch(fr_prof_link *l) { atomic_store_explicit(&l->t_last_ns, fr_now_ns(), memory_order_relaxed); }

void *fr_prof_proxy_op_start(fr_prof_ctx *ctx, void *parent, pid_t pid, int channel, int peer,
                             int is_send) {
  /* PXN: an op another process started; its parent handle is not ours */
  if (pid != (pid_t)fr_g.proc.pid || channel < 0 || channel >= FR_PROF_CHANNELS || peer < 0) return NULL;
  fr_prof_link *l = find_link(ctx, channel, peer, is_send);
  if (!l) return NULL;
  fr_prof_op *op = untag(parent, FR_TAG_OP);
  atomic_store_explicit(&l->seq, op ? op->seq : UINT64_MAX, memory_order_relaxed);
  atomic_store_explicit(&l->kind, op ? op->kind : 0, memory_order_relaxed);
  atomic_fetch_add_explicit(&l->ops_posted, 1, memory_order_relaxed);
  touch(l);
  return tag(l, FR_TAG_PROXYOP);
}

void *fr_prof_step_start(void *proxy_op) {
  fr_prof_link *l = untag(proxy_op, FR_TAG_PROXYOP);
  if (!l) return NULL;
  uint64_t n = atomic_fetch_add_explicit(&l->steps_posted, 1, memory_order_relaxed);
  fr_prof_step *s = &l->steps[n % FR_PROF_STEPS];
  s->link = l;
  atomic_store_explicit(&s->state, 0, memory_order_relaxed);
  touch(l);
  return tag(s, FR_TAG_STEP);
}

void *fr_prof_kch_start(void *parent, int channel) {
  fr_prof_op *op = untag(parent, FR_TAG_OP);
  if (!op || channel < 0 || channel >= FR_PROF_CHANNELS) return NULL;
  fr_prof_kch *k = &op->kch[channel];
  k->op = op;
  k->channel = (uint32_t)channel;
  fr_prof_kstat *ks = &op->ctx->kernel[channel];
  atomic_store_explicit(&ks->started_seq, op->seq == UINT64_MAX ? -1 : (int64_t)op->seq,
                        memory_order_relaxed);
  atomic_fetch_add_explicit(&ks->started, 1, memory_order_relaxed);
  atomic_store_explicit(&ks->t_last_ns, fr_now_ns(), memory_order_relaxed);
  atomic_fetch_add_explicit(&op->kch_started, 1, memory_order_relaxed);
  fr_prof_record_kernel(op, 1);
  return tag(k, FR_TAG_KCH);
}

void fr_prof_stop(void *handle) {
  fr_prof_link *l;
  fr_prof_step *s;
  fr_prof_kch *k;
  if ((l = untag(handle, FR_TAG_PROXYOP))) {
    atomic_fetch_add_explicit(&l->ops_done, 1, memory_order_relaxed);
    touch(l);
  } else if ((s = untag(handle, FR_TAG_STEP))) {
    atomic_store_explicit(&s->state, 0, memory_order_relaxed);
    atomic_fetch_add_explicit(&s->link->steps_done, 1, memory_order_relaxed);
    touch(s->link);
  } else if ((k = untag(handle, FR_TAG_KCH))) {
    fr_prof_op *op = k->op;
    fr_prof_kstat *ks = &op->ctx->kernel[k->channel];
    atomic_store_explicit(&ks->stopped_seq, op->seq == UINT64_MAX ? -1 : (int64_t)op->seq,
                          memory_order_relaxed);
    atomic_fetch_add_explicit(&ks->stopped, 1, memory_order_relaxed);
    atomic_store_explicit(&ks->t_last_ns, fr_now_ns(), memory_order_relaxed);
    atomic_fetch_add_explicit(&op->kch_stopped, 1, memory_order_relaxed);
    fr_prof_record_kernel(op, 0);
  }
}

void fr_prof_state(void *handle, int state) {
  fr_prof_step *s = untag(handle, FR_TAG_STEP);
  if (!s) return;
  atomic_store_explicit(&s->state, (uint32_t)state, memory_order_relaxed);
  atomic_store_explicit(&s->link->state, (uint32_t)state, memory_order_relaxed);
  touch(s->link);
}

/* The state a link waits in: that of its oldest unfinished step (steps
 * finish in order), else the last one recorded. */
static uint32_t waiting_state(fr_prof_link *l, uint64_t posted, uint64_t done) {
  uint32_t last = atomic_load_explicit(&l->state, memory_order_relaxed);
  if (posted <= done) return last;
  uint32_t s = atomic_load_explicit(&l->steps[done % FR_PROF_STEPS].state, memory_order_relaxed);
  return s ? s : last;
}

uint64_t fr_prof_snapshot_proxy(frz_proxy *out, uint64_t max) {
  uint64_t n = 0;
  for (int i = 0; i < fr_prof_ctx_count(); i++) {
    fr_prof_ctx *ctx = fr_prof_ctx_at(i);
    for (int j = 0; j < FR_PROF_LINKS && n < max; j++) {
      fr_prof_link *l = &ctx->links[j];
      uint32_t key = atomic_load_explicit(&l->key, memory_order_acquire);
      if (!key) continue;
      key -= 1;
      frz_proxy *o = &out[n++];
      memset(o, 0, sizeof *o);
      o->comm_id = ctx->comm_id;
      o->seq = atomic_load_explicit(&l->seq, memory_order_relaxed);
      o->steps_done = atomic_load_explicit(&l->steps_done, memory_order_relaxed);
      o->steps_posted = atomic_load_explicit(&l->steps_posted, memory_order_relaxed);
      if (o->steps_posted < o->steps_done) o->steps_posted = o->steps_done; /* read apart */
      o->t_last_ns = atomic_load_explicit(&l->t_last_ns, memory_order_relaxed);
      o->peer = (int32_t)(key & 0x3fffffu);
      o->channel = (uint8_t)(key >> 23);
      o->dir = (key >> 22) & 1u ? FRZ_DIR_SEND : FRZ_DIR_RECV;
      o->kind = atomic_load_explicit(&l->kind, memory_order_relaxed);
      o->state = waiting_state(l, o->steps_posted, o->steps_done);
      o->ops_posted = atomic_load_explicit(&l->ops_posted, memory_order_relaxed);
      o->ops_done = atomic_load_explicit(&l->ops_done, memory_order_relaxed);
      o->rank = ctx->rank;
    }
  }
  return n;
}

uint32_t fr_prof_snapshot_kernel(frz_kernel_ch *out, uint32_t max) {
  uint32_t n = 0;
  for (int i = 0; i < fr_prof_ctx_count(); i++) {
    fr_prof_ctx *ctx = fr_prof_ctx_at(i);
    for (uint32_t c = 0; c < FR_PROF_CHANNELS && n < max; c++) {
      fr_prof_kstat *ks = &ctx->kernel[c];
      uint32_t started = atomic_load_explicit(&ks->started, memory_order_relaxed);
      if (!started) continue;
      frz_kernel_ch *o = &out[n++];
      memset(o, 0, sizeof *o);
      o->comm_id = ctx->comm_id;
      o->channel = c;
      o->started = started;
      o->stopped = atomic_load_explicit(&ks->stopped, memory_order_relaxed);
      o->started_seq = atomic_load_explicit(&ks->started_seq, memory_order_relaxed);
      o->stopped_seq = atomic_load_explicit(&ks->stopped_seq, memory_order_relaxed);
      o->t_last_ns = atomic_load_explicit(&ks->t_last_ns, memory_order_relaxed);
      o->rank = ctx->rank;
    }
  }
  return n;
}
