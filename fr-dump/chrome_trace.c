/* chrome_trace.c — dumps as one Chrome Trace Event Format document (JSON
 * object form), for Perfetto and chrome://tracing.
 *
 * One process per rank (pid = global rank), one thread (track) per
 * communicator of that rank; every record is a slice on its comm's track
 * ("X") from its start (enqueue when the start was not seen) to its
 * completion, begun no earlier than the previous slice of the track ended
 * (a comm's ops run one after another on the device, and the viewers need
 * slices of a track to nest), with the real times in its args; an op that
 * never completed is a begin event without an end ("B"), which the viewers
 * draw as an unfinished slice.  The trigger (the hang the watchdog saw) and the moment the dump
 * was taken are instant events on the rank; with NCCL's proxy progress, each
 * connection with data in flight is an instant event on its comm's track.  All times are wall clock,
 * converted through each dump's realtime/monotonic anchors, in microseconds
 * since the earliest event of the whole trace (otherData.time_base_realtime_ns),
 * so the ranks line up even when their monotonic clocks do not.
 * Written as a stream: memory does not grow with the number of records.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fr_dump.h"

/* A CLOCK_MONOTONIC time of dump d as CLOCK_REALTIME (0 stays 0). */
static uint64_t realtime(const frz_dump *d, uint64_t t)
{
  const frz_process *p = &d->process;
  if (!t) return 0;
  if (t >= p->anchor_monotonic_ns) return p->anchor_realtime_ns + (t - p->anchor_monotonic_ns);
  uint64_t back = p->anchor_monotonic_ns - t;
  return back < p->anchor_realtime_ns ? p->anchor_realtime_ns - back : 0;
}

/* A JSON string literal of sanitised text. */
static void jstr(FILE *o, const char *s, size_t n)
{
  char b[1024];
  fd_sanitize(s, n, b, sizeof b);
  fputc('"', o);
  for (const char *p = b; *p; p++) {
    if (*p == '"' || *p == '\\') fputc('\\', o);
    fputc(*p, o);
  }
  fputc('"', o);
}

/* Microseconds since base, with ns precision. */
static void ts(FILE *o, uint64_t rt, uint64_t base)
{
  uint64_t d = rt > base ? rt - base : 0;
  fprintf(o, "%" PRIu64 ".%03u", d / 1000, (unsigned)(d % 1000));
}

static int64_t pid_of(const fd_input *in, size_t i)
{
  int32_t g = in[i].dump.process.global_rank;
  return g >= 0 ? g : 10000000 + (int64_t)i;
}

/* A comm id and its index in the dump's comm table, sorted by id. */
typedef struct track {
  uint64_t id;
  uint32_t index;
} track;

static int cmp_track(const void *x, const void *y)
{
  const track *a = x, *b = y;
  if (a->id != b->id) return a->id < b->id ? -1 : 1;
  return (a->index > b->index) - (a->index < b->index);
}

/* The first comm table entry of comm_id (tracks sorted), or -1 (group
 * records: none). */
static int32_t track_of(const track *t, uint32_t n, uint64_t comm_id)
{
  uint32_t lo = 0, hi = n;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (t[mid].id < comm_id) lo = mid + 1;
    else hi = mid;
  }
  return lo < n && t[lo].id == comm_id ? (int32_t)t[lo].index : -1;
}

static uint64_t earliest(const fd_input *in, size_t n)
{
  uint64_t base = UINT64_MAX;
  for (size_t i = 0; i < n; i++) {
    const frz_dump *d = &in[i].dump;
    for (uint64_t k = 0; k < d->nrecords; k++) {
      uint64_t t = realtime(d, d->records[k].t_enqueue_ns);
      if (t && t < base) base = t;
    }
    uint64_t tt = realtime(d, d->process.trigger_time_ns);
    if (tt && tt < base) base = tt;
    uint64_t ft = realtime(d, d->process.frame_time_ns);
    if (ft && ft < base) base = ft;
  }
  return base == UINT64_MAX ? 0 : base;
}

static void metadata(FILE *o, const fd_input *in, size_t i, int *first)
{
  const frz_dump *d = &in[i].dump;
  const frz_process *p = &d->process;
  int64_t pid = pid_of(in, i);
  char label[128];
  snprintf(label, sizeof label, "rank %d", p->global_rank);
  fprintf(o, "%s\n{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%" PRId64 ",\"tid\":0,\"args\":{\"name\":",
          *first ? "" : ",", pid);
  *first = 0;
  jstr(o, label, strlen(label));
  fprintf(o, "}},\n{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":%" PRId64
             ",\"tid\":0,\"args\":{\"sort_index\":%" PRId64 "}}",
          pid, pid);
  fprintf(o, ",\n{\"ph\":\"M\",\"name\":\"process_labels\",\"pid\":%" PRId64 ",\"tid\":0,\"args\":{\"labels\":", pid);
  char host[FRZ_HOST_MAX + 80];
  snprintf(host, sizeof host, "host %.*s, pid %u, %s", FRZ_HOST_MAX, p->host, p->pid, in[i].name);
  jstr(o, host, strlen(host));
  fputs("}}", o);
  for (uint32_t c = 0; c <= d->ncomms; c++) {
    char t[96];
    if (c < d->ncomms)
      snprintf(t, sizeof t, "comm %016" PRIx64 " (rank %d of %d)", d->comms[c].comm_id, d->comms[c].rank,
               d->comms[c].nranks);
    else
      snprintf(t, sizeof t, "groups and other calls");
    fprintf(o, ",\n{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%" PRId64 ",\"tid\":%u,\"args\":{\"name\":", pid,
            c + 1);
    jstr(o, t, strlen(t));
    fprintf(o, "}},\n{\"ph\":\"M\",\"name\":\"thread_sort_index\",\"pid\":%" PRId64
               ",\"tid\":%u,\"args\":{\"sort_index\":%u}}",
            pid, c + 1, c + 1);
  }
}

/* One record; last_end[tid] is where the track's previous slice ended. */
static void record(FILE *o, const fd_input *in, size_t i, const frz_record *r, uint64_t base,
                   const track *tracks, uint64_t *last_end)
{
  const frz_dump *d = &in[i].dump;
  int32_t tr = track_of(tracks, d->ncomms, r->comm_id);
  unsigned tid = tr >= 0 ? (unsigned)tr + 1 : d->ncomms + 1;
  uint64_t t0 = realtime(d, r->t_start_ns), t1 = realtime(d, r->t_complete_ns);
  if (!t0) t0 = realtime(d, r->t_enqueue_ns);
  if (!t0) return; /* never timed: nothing to place */
  if (t0 < last_end[tid]) t0 = last_end[tid];
  if (t1 > last_end[tid]) last_end[tid] = t1;
  char name[96];
  /* PyTorch dumps: p2p ops by PyTorch's p2p_seq_id, ops we have no name
   * for by PyTorch's (when it is a plain identifier, safe in JSON) */
  uint64_t pseq = r->seq;
  const char *op = frz_op_name(r->op);
  if (d->pt) {
    const frz_pt_record *p = &d->pt->records[r - d->records];
    if (r->kind == FRZ_KIND_P2P) pseq = p->p2p_seq_id;
    const char *pn = p->name < d->pt->nnames ? d->pt->names[p->name] : "";
    if (r->op == FRZ_OP_NONE && pn[0] && strspn(pn, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") == strlen(pn))
      op = pn;
  }
  if (r->kind == FRZ_KIND_P2P)
    snprintf(name, sizeof name, "%s %s %d #%" PRIu64, op, r->dir == FRZ_DIR_RECV ? "from" : "to",
             r->peer, pseq);
  else if (r->kind == FRZ_KIND_GROUP)
    snprintf(name, sizeof name, "%.80s", op);
  else
    snprintf(name, sizeof name, "%.60s seq %" PRIu64, op, r->seq);
  int done = r->state == FRZ_STATE_COMPLETED && t1 >= t0;
  fprintf(o, ",\n{\"ph\":\"%s\",\"cat\":\"nccl\",\"name\":\"%s\",\"pid\":%" PRId64 ",\"tid\":%u,\"ts\":",
          done ? "X" : "B", name, pid_of(in, i), tid);
  ts(o, t0, base);
  if (done) {
    fputs(",\"dur\":", o);
    ts(o, t1, t0);
  }
  fprintf(o, ",\"args\":{\"seq\":%" PRIu64 ",\"op\":\"%s\",\"state\":\"%s\",\"count\":%" PRIu64
             ",\"dtype\":\"%s\",\"redop\":\"%s\",\"%s\":%d,\"comm\":\"%016" PRIx64 "\",\"record\":%" PRIu64,
          r->seq, frz_op_name(r->op), frz_state_name(r->state), r->count, frz_dtype_name(r->dtype),
          frz_redop_name(r->redop), r->kind == FRZ_KIND_P2P ? "peer" : "root", r->peer, r->comm_id, r->id);
  fputs(",\"enqueued_us\":", o);
  ts(o, realtime(d, r->t_enqueue_ns), base);
  if (r->t_start_ns) {
    fputs(",\"started_us\":", o);
    ts(o, realtime(d, r->t_start_ns), base);
  }
  if (r->t_complete_ns) {
    fputs(",\"completed_us\":", o);
    ts(o, realtime(d, r->t_complete_ns), base);
  }
  if (!done) fputs(",\"unfinished\":true", o);
  if (r->flags & FRZ_RF_GPU_TIMED) fputs(",\"gpu_timed\":true", o); /* times the GPU's, not a poll's */
  fputs("}}", o);
}

/* Instant events: the trigger and the moment this frame was taken. */
static void marks(FILE *o, const fd_input *in, size_t i, uint64_t base)
{
  const frz_process *p = &in[i].dump.process;
  uint64_t tt = realtime(&in[i].dump, p->trigger_time_ns);
  uint64_t ft = realtime(&in[i].dump, p->frame_time_ns);
  if (tt) {
    char what[FRZ_TEXT_MAX + 64];
    snprintf(what, sizeof what, "hang detected (%s): %.*s", frz_trigger_name(p->trigger), FRZ_TEXT_MAX,
             p->trigger_text);
    fprintf(o, ",\n{\"ph\":\"i\",\"s\":\"p\",\"cat\":\"hang\",\"name\":");
    jstr(o, what, strlen(what));
    fprintf(o, ",\"pid\":%" PRId64 ",\"tid\":1,\"ts\":", pid_of(in, i));
    ts(o, tt, base);
    fprintf(o, ",\"args\":{\"trigger_rank\":%d}}", p->trigger_rank);
  }
  if (ft && p->trigger != FRZ_TRIGGER_NONE) {
    fprintf(o, ",\n{\"ph\":\"i\",\"s\":\"p\",\"cat\":\"dump\",\"name\":\"dump frame %u\",\"pid\":%" PRId64
               ",\"tid\":1,\"ts\":",
            p->frame, pid_of(in, i));
    ts(o, ft, base);
    fputs("}", o);
  }
}

/* NCCL's proxy progress (frz 1.2 PROXY, from the profiler plugin): every
 * connection with steps in flight is an instant event on its comm's track
 * at its last state change, "ch C send->P STATE (done/posted steps)": where
 * each link stopped moving data. */
static void proxy_marks(FILE *o, const fd_input *in, size_t i, uint64_t base, const track *tracks)
{
  const frz_dump *d = &in[i].dump;
  for (uint64_t k = 0; k < d->nproxy; k++) {
    const frz_proxy *x = &d->proxy[k];
    uint64_t t = realtime(d, x->t_last_ns);
    if (x->steps_posted <= x->steps_done || !t) continue;
    int32_t tr = track_of(tracks, d->ncomms, x->comm_id);
    const char *state = x->state ? frz_proxy_state_name(x->state) : "no state";
    char what[160];
    snprintf(what, sizeof what, "ch %u %s%d %s (%" PRIu64 "/%" PRIu64 " steps)", x->channel,
             frz_dir_arrow(x->dir), x->peer, state,
             x->steps_done, x->steps_posted);
    fputs(",\n{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"proxy\",\"name\":", o);
    jstr(o, what, strlen(what));
    fprintf(o, ",\"pid\":%" PRId64 ",\"tid\":%u,\"ts\":", pid_of(in, i),
            tr >= 0 ? (unsigned)tr + 1 : d->ncomms + 1);
    ts(o, t, base);
    fprintf(o, ",\"args\":{\"channel\":%u,\"dir\":\"%s\",\"peer\":%d,\"state\":", x->channel, fd_dir_name(x->dir),
            x->peer);
    jstr(o, state, strlen(state));
    fprintf(o, ",\"steps_posted\":%" PRIu64 ",\"steps_done\":%" PRIu64 ",\"comm\":\"%016" PRIx64 "\"}}",
            x->steps_posted, x->steps_done, x->comm_id);
  }
}

int fd_chrome_trace(FILE *o, const fd_input *in, size_t n)
{
  uint64_t base = earliest(in, n);
  int first = 1;
  fputs("{\"displayTimeUnit\":\"ms\",\"otherData\":{\"generator\":\"fr-dump\",\"time_base_realtime_ns\":", o);
  fprintf(o, "%" PRIu64 ",\"dumps\":%zu},\"traceEvents\":[", base, n);
  for (size_t i = 0; i < n; i++) metadata(o, in, i, &first);
  for (size_t i = 0; i < n; i++) {
    const frz_dump *d = &in[i].dump;
    uint64_t *last_end = calloc((size_t)d->ncomms + 2, sizeof *last_end);
    track *tracks = malloc(((size_t)d->ncomms + 1) * sizeof *tracks);
    if (!last_end || !tracks) {
      free(last_end);
      free(tracks);
      return -1;
    }
    for (uint32_t c = 0; c < d->ncomms; c++) tracks[c] = (track){d->comms[c].comm_id, c};
    qsort(tracks, d->ncomms, sizeof *tracks, cmp_track);
    for (uint64_t k = 0; k < d->nrecords; k++) record(o, in, i, &d->records[k], base, tracks, last_end);
    proxy_marks(o, in, i, base, tracks);
    free(last_end);
    free(tracks);
    marks(o, in, i, base);
  }
  fputs("\n]}\n", o);
  return ferror(o) ? -1 : 0;
}
