/* dump_json.c — one decoded dump as a JSON object.  64-bit counters and
 * times are written as exact integers; comm ids and addresses as 16-digit
 * hex strings. */
#include "config.h"

#include <cJSON.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "fr_dump.h"

typedef struct jb {
  int ok;
} jb;

static cJSON *chk(jb *j, cJSON *x)
{
  if (!x) j->ok = 0;
  return x;
}

static void add(jb *j, cJSON *o, const char *k, cJSON *v)
{
  if (!o || !v) {
    j->ok = 0;
    cJSON_Delete(v);
    return;
  }
  cJSON_AddItemToObject(o, k, v);
}

/* An exact unsigned integer (cJSON numbers are doubles). */
static cJSON *u64(jb *j, uint64_t v)
{
  char b[24];
  snprintf(b, sizeof b, "%" PRIu64, v);
  return chk(j, cJSON_CreateRaw(b));
}

static cJSON *i64(jb *j, int64_t v)
{
  char b[24];
  snprintf(b, sizeof b, "%" PRId64, v);
  return chk(j, cJSON_CreateRaw(b));
}

static cJSON *hex(jb *j, uint64_t v)
{
  char b[17];
  snprintf(b, sizeof b, "%016" PRIx64, v);
  return chk(j, cJSON_CreateString(b));
}

static cJSON *hex_or_null(jb *j, uint64_t v)
{
  return v ? hex(j, v) : chk(j, cJSON_CreateNull());
}

/* A fixed-size text field of the dump, sanitised. */
static cJSON *text(jb *j, const char *s, size_t n)
{
  char b[512];
  return chk(j, cJSON_CreateString(fd_sanitize(s, n, b, sizeof b)));
}

static cJSON *str(jb *j, const char *s) { return chk(j, cJSON_CreateString(s)); }

/* Names of the set bits of f. */
static cJSON *flags(jb *j, uint32_t f, const char *const *names, unsigned n)
{
  cJSON *a = chk(j, cJSON_CreateArray());
  for (unsigned i = 0; a && i < 32; i++) {
    if (!(f & (1u << i))) continue;
    char b[16];
    snprintf(b, sizeof b, "bit%u", i);
    cJSON *s = str(j, i < n ? names[i] : b);
    if (s) cJSON_AddItemToArray(a, s);
  }
  return a;
}


static cJSON *process_obj(jb *j, const frz_process *p)
{
  cJSON *o = chk(j, cJSON_CreateObject());
  add(j, o, "global_rank", i64(j, p->global_rank));
  add(j, o, "world_size", i64(j, p->world_size));
  add(j, o, "local_rank", i64(j, p->local_rank));
  add(j, o, "pid", u64(j, p->pid));
  add(j, o, "host", text(j, p->host, sizeof p->host));
  add(j, o, "job_id", text(j, p->job_id, sizeof p->job_id));
  add(j, o, "nccl_version", i64(j, p->nccl_version));
  add(j, o, "recorder_version", u64(j, p->recorder_version));
  add(j, o, "anchor_realtime_ns", u64(j, p->anchor_realtime_ns));
  add(j, o, "anchor_monotonic_ns", u64(j, p->anchor_monotonic_ns));
  add(j, o, "trigger", str(j, frz_trigger_name(p->trigger)));
  add(j, o, "trigger_rank", i64(j, p->trigger_rank));
  add(j, o, "trigger_text", text(j, p->trigger_text, sizeof p->trigger_text));
  add(j, o, "trigger_time_ns", u64(j, p->trigger_time_ns));
  add(j, o, "trigger_latency_us", u64(j, p->trigger_latency_us));
  add(j, o, "frame", u64(j, p->frame));
  add(j, o, "frame_time_ns", u64(j, p->frame_time_ns));
  add(j, o, "records_total", u64(j, p->records_total));
  add(j, o, "records_dropped", u64(j, p->records_dropped));
  add(j, o, "ring_capacity", u64(j, p->ring_capacity));
  add(j, o, "flags", u64(j, p->flags));
  return o;
}

static cJSON *comm_obj(jb *j, const frz_comm *c)
{
  cJSON *o = chk(j, cJSON_CreateObject());
  add(j, o, "comm_id", hex(j, c->comm_id));
  add(j, o, "nccl_comm_hash", hex_or_null(j, c->nccl_comm_hash));
  add(j, o, "parent_id", hex_or_null(j, c->parent_id));
  add(j, o, "handle", hex(j, c->handle));
  add(j, o, "nranks", i64(j, c->nranks));
  add(j, o, "rank", i64(j, c->rank));
  add(j, o, "split_color", i64(j, c->split_color));
  add(j, o, "split_key", i64(j, c->split_key));
  add(j, o, "flags", flags(j, c->flags, fd_comm_flag_names, FD_NCOMM_FLAGS));
  add(j, o, "cuda_device", i64(j, c->cuda_device));
  add(j, o, "next_seq", u64(j, c->next_seq));
  add(j, o, "first_retained_seq", u64(j, c->first_retained_seq));
  add(j, o, "last_enqueued_seq", i64(j, c->last_enqueued_seq));
  add(j, o, "last_started_seq", i64(j, c->last_started_seq));
  add(j, o, "last_completed_seq", i64(j, c->last_completed_seq));
  add(j, o, "dropped_records", u64(j, c->dropped_records));
  return o;
}

/* A time relative to ref in ms (null when not seen). */
static cJSON *rel_ms(jb *j, uint64_t t, uint64_t ref)
{
  if (!t) return chk(j, cJSON_CreateNull());
  double ms = t >= ref ? (double)(t - ref) / 1e6 : -(double)(ref - t) / 1e6;
  return chk(j, cJSON_CreateNumber(ms));
}

static cJSON *record_obj(jb *j, const frz_record *r, uint64_t ref)
{
  static const char *const kinds[] = {"none", "coll", "p2p", "group", "life"};
  static const char *const dirs[] = {"none", "send", "recv"};
  cJSON *o = chk(j, cJSON_CreateObject());
  add(j, o, "id", u64(j, r->id));
  add(j, o, "comm_id", hex_or_null(j, r->comm_id));
  add(j, o, "seq", u64(j, r->seq));
  add(j, o, "op", str(j, frz_op_name(r->op)));
  add(j, o, "kind", str(j, r->kind < 5 ? kinds[r->kind] : "unknown"));
  add(j, o, "dir", str(j, r->dir < 3 ? dirs[r->dir] : "unknown"));
  add(j, o, "peer", i64(j, r->peer));
  /* which comm rank of this process made it, on which device (frz 1.3); -1 unknown */
  add(j, o, "comm_rank", i64(j, r->comm_rank));
  add(j, o, "cuda_device", i64(j, r->cuda_device != FRZ_CUDA_DEVICE_UNKNOWN ? r->cuda_device : -1));
  add(j, o, "count", u64(j, r->count));
  add(j, o, "dtype", str(j, frz_dtype_name(r->dtype)));
  add(j, o, "redop", str(j, frz_redop_name(r->redop)));
  add(j, o, "state", str(j, frz_state_name(r->state)));
  add(j, o, "result", i64(j, r->result));
  add(j, o, "stream", hex(j, r->stream));
  add(j, o, "call_site", hex(j, r->call_site));
  add(j, o, "group_id", u64(j, r->group_id));
  add(j, o, "tid", u64(j, r->tid));
  add(j, o, "t_enqueue_ns", u64(j, r->t_enqueue_ns));
  add(j, o, "t_start_ns", u64(j, r->t_start_ns));
  add(j, o, "t_complete_ns", u64(j, r->t_complete_ns));
  add(j, o, "enqueue_ms", rel_ms(j, r->t_enqueue_ns, ref));
  add(j, o, "start_ms", rel_ms(j, r->t_start_ns, ref));
  add(j, o, "complete_ms", rel_ms(j, r->t_complete_ns, ref));
  add(j, o, "flags", flags(j, r->flags, fd_rec_flag_names, FD_NREC_FLAGS));
  if (r->nccl_seq != UINT64_MAX) { /* NCCL's profiler described it (frz 1.2) */
    add(j, o, "nccl_seq", u64(j, r->nccl_seq));
    add(j, o, "algo", str(j, frz_algo_name(r->algo)));
    add(j, o, "proto", str(j, frz_proto_name(r->proto)));
    add(j, o, "nchannels", u64(j, r->nchannels));
  }
  if (r->graph_id) { /* a CUDA graph's op, captured or replayed (frz 1.5) */
    add(j, o, "graph_id", u64(j, r->graph_id));
    add(j, o, "graph_op", u64(j, r->graph_op));
    if (r->flags & FRZ_RF_GRAPH_REPLAY) {
      if (r->graph_ops) add(j, o, "graph_ops", u64(j, r->graph_ops)); /* (255: that many or more) */
      add(j, o, "replay", u64(j, r->replay));
    }
  }
  return o;
}

/* A frame: its address and the call-site table's name for it. */
static cJSON *frame_obj(jb *j, const frz_dump *d, uint64_t addr)
{
  char b[512];
  cJSON *o = chk(j, cJSON_CreateObject());
  add(j, o, "address", hex(j, addr));
  add(j, o, "name", str(j, fd_site_name(d, addr, b, sizeof b)));
  return o;
}

static cJSON *frames_arr(jb *j, const frz_dump *d, const uint64_t *f, uint32_t n)
{
  cJSON *a = chk(j, cJSON_CreateArray());
  for (uint32_t k = 0; a && k < n; k++) {
    cJSON *x = frame_obj(j, d, f[k]);
    if (x) cJSON_AddItemToArray(a, x);
  }
  return a;
}

static cJSON *callsite_obj(jb *j, const frz_callsite *c)
{
  cJSON *o = chk(j, cJSON_CreateObject());
  add(j, o, "address", hex(j, c->address));
  add(j, o, "module", text(j, c->module, sizeof c->module));
  add(j, o, "symbol", text(j, c->symbol, sizeof c->symbol));
  add(j, o, "offset", u64(j, c->offset));
  return o;
}

static cJSON *backtrace_obj(jb *j, const frz_dump *d, const frz_backtrace *t)
{
  cJSON *o = chk(j, cJSON_CreateObject());
  add(j, o, "record_id", u64(j, t->record_id));
  uint32_t n = t->depth < FRZ_BACKTRACE_MAX ? t->depth : FRZ_BACKTRACE_MAX;
  add(j, o, "frames", frames_arr(j, d, t->frames, n));
  return o;
}

static cJSON *proxy_obj(jb *j, const frz_proxy *x, uint64_t ref)
{
  static const char *const kinds[] = {"unknown", "coll", "p2p"};
  cJSON *o = chk(j, cJSON_CreateObject());
  add(j, o, "comm_id", hex_or_null(j, x->comm_id));
  add(j, o, "rank", i64(j, x->rank));
  add(j, o, "channel", u64(j, x->channel));
  add(j, o, "dir", str(j, fd_dir_name(x->dir)));
  add(j, o, "peer", i64(j, x->peer));
  add(j, o, "seq", x->seq == UINT64_MAX ? chk(j, cJSON_CreateNull()) : u64(j, x->seq));
  add(j, o, "kind", str(j, x->kind < 3 ? kinds[x->kind] : "unknown"));
  add(j, o, "steps_posted", u64(j, x->steps_posted));
  add(j, o, "steps_done", u64(j, x->steps_done));
  add(j, o, "state", x->state ? str(j, frz_proxy_state_name(x->state)) : chk(j, cJSON_CreateNull()));
  add(j, o, "state_code", u64(j, x->state));
  add(j, o, "t_last_ns", u64(j, x->t_last_ns));
  add(j, o, "last_ms", rel_ms(j, x->t_last_ns, ref));
  add(j, o, "ops_posted", u64(j, x->ops_posted));
  add(j, o, "ops_done", u64(j, x->ops_done));
  return o;
}

static cJSON *kernel_obj(jb *j, const frz_kernel_ch *k, uint64_t ref)
{
  cJSON *o = chk(j, cJSON_CreateObject());
  add(j, o, "comm_id", hex_or_null(j, k->comm_id));
  add(j, o, "rank", i64(j, k->rank));
  add(j, o, "channel", u64(j, k->channel));
  add(j, o, "started_seq", i64(j, k->started_seq));
  add(j, o, "stopped_seq", i64(j, k->stopped_seq));
  add(j, o, "started", u64(j, k->started));
  add(j, o, "stopped", u64(j, k->stopped));
  add(j, o, "t_last_ns", u64(j, k->t_last_ns));
  add(j, o, "last_ms", rel_ms(j, k->t_last_ns, ref));
  return o;
}

/* A thread at dump time: native frames, then its Python frames (matched by
 * thread handle), innermost first. */
static cJSON *thread_obj(jb *j, const frz_dump *d, const fd_pyindex *ix, const frz_stack *t)
{
  cJSON *o = chk(j, cJSON_CreateObject());
  add(j, o, "tid", u64(j, t->tid));
  add(j, o, "name", text(j, t->name, sizeof t->name));
  add(j, o, "status", str(j, frz_stack_status_name(t->status)));
  add(j, o, "flags", flags(j, t->flags, fd_thread_flag_names, FD_NTHREAD_FLAGS));
  add(j, o, "record_id", (t->flags & FRZ_TF_IN_NCCL) ? u64(j, t->record_id) : chk(j, cJSON_CreateNull()));
  add(j, o, "thread_handle", hex_or_null(j, t->thread_handle));
  uint32_t n = t->depth < FRZ_STACK_MAX ? t->depth : FRZ_STACK_MAX;
  add(j, o, "frames", frames_arr(j, d, t->frames, n));
  cJSON *py = chk(j, cJSON_CreateArray());
  const fd_pyrun *run = fd_pyindex_find(ix, t->thread_handle);
  for (uint32_t k = 0; py && run && k < run->len && k < FD_PY_MAX; k++) {
    const frz_pyframe *f = &d->pyframes[run->start + k];
    cJSON *x = chk(j, cJSON_CreateObject());
    add(j, x, "index", u64(j, f->index));
    add(j, x, "func", text(j, f->func, sizeof f->func));
    add(j, x, "file", text(j, f->file, sizeof f->file));
    add(j, x, "line", u64(j, f->line));
    if (x) cJSON_AddItemToArray(py, x);
  }
  add(j, o, "python", py);
  return o;
}

void *fd_dump_json(const char *name, const frz_dump *d)
{
  jb j = {1};
  const frz_process *p = &d->process;
  uint64_t ref = p->trigger_time_ns ? p->trigger_time_ns : p->frame_time_ns;
  cJSON *o = chk(&j, cJSON_CreateObject());
  add(&j, o, "format", str(&j, "flightrec-dump"));
  add(&j, o, "file", text(&j, name, strlen(name)));
  cJSON *v = chk(&j, cJSON_CreateObject());
  add(&j, v, "major", u64(&j, d->version_major));
  add(&j, v, "minor", u64(&j, d->version_minor));
  add(&j, o, "version", v);
  add(&j, o, "unknown_sections", u64(&j, d->unknown_sections));
  add(&j, o, "times_relative_to", str(&j, p->trigger_time_ns ? "trigger" : p->frame_time_ns ? "frame" : "monotonic"));
  add(&j, o, "process", process_obj(&j, p));
  cJSON *comms = chk(&j, cJSON_CreateArray());
  for (uint32_t i = 0; comms && i < d->ncomms; i++) {
    cJSON *c = comm_obj(&j, &d->comms[i]);
    if (c) cJSON_AddItemToArray(comms, c);
  }
  add(&j, o, "comms", comms);
  cJSON *recs = chk(&j, cJSON_CreateArray());
  for (uint64_t i = 0; recs && i < d->nrecords; i++) {
    cJSON *r = record_obj(&j, &d->records[i], ref);
    /* a PyTorch p2p op: PyTorch's own p2p_seq_id beside the seq the import aligned */
    if (d->pt && d->records[i].kind == FRZ_KIND_P2P)
      add(&j, r, "p2p_seq_id", u64(&j, d->pt->records[i].p2p_seq_id));
    if (r) cJSON_AddItemToArray(recs, r);
  }
  add(&j, o, "records", recs);
  cJSON *a = chk(&j, cJSON_CreateArray());
  for (uint64_t i = 0; a && i < d->nproxy; i++) {
    cJSON *x = proxy_obj(&j, &d->proxy[i], ref);
    if (x) cJSON_AddItemToArray(a, x);
  }
  add(&j, o, "proxy", a);
  a = chk(&j, cJSON_CreateArray());
  for (uint32_t i = 0; a && i < d->nkernel_ch; i++) {
    cJSON *x = kernel_obj(&j, &d->kernel_ch[i], ref);
    if (x) cJSON_AddItemToArray(a, x);
  }
  add(&j, o, "kernel_channels", a);
  a = chk(&j, cJSON_CreateArray());
  for (uint32_t i = 0; a && i < d->ncallsites; i++) {
    cJSON *x = callsite_obj(&j, &d->callsites[i]);
    if (x) cJSON_AddItemToArray(a, x);
  }
  add(&j, o, "callsites", a);
  a = chk(&j, cJSON_CreateArray());
  for (uint64_t i = 0; a && i < d->nbacktraces; i++) {
    cJSON *x = backtrace_obj(&j, d, &d->backtraces[i]);
    if (x) cJSON_AddItemToArray(a, x);
  }
  add(&j, o, "backtraces", a);
  fd_pyindex ix;
  if (fd_pyindex_build(d, &ix)) j.ok = 0;
  a = chk(&j, cJSON_CreateArray());
  for (uint32_t i = 0; a && j.ok && i < d->nstacks; i++) {
    cJSON *x = thread_obj(&j, d, &ix, &d->stacks[i]);
    if (x) cJSON_AddItemToArray(a, x);
  }
  fd_pyindex_free(&ix);
  add(&j, o, "threads", a);
  if (!j.ok) {
    cJSON_Delete(o);
    return NULL;
  }
  return o;
}
