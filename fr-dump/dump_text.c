/* dump_text.c — one decoded dump as readable text: the process header, the
 * communicator table and the records table. */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "fr_dump.h"

char *fd_sanitize(const char *in, size_t inlen, char *out, size_t outlen)
{
  return frz_sanitize(in, inlen, out, outlen);
}

/* "2.28.9" from an ncclGetVersion code. */
static const char *nccl_version(int32_t code, char *buf, size_t len)
{
  if (code <= 0) snprintf(buf, len, "unknown");
  else if (code >= 10000)
    snprintf(buf, len, "%d.%d.%d", code / 10000, code % 10000 / 100, code % 100);
  else snprintf(buf, len, "%d.%d.%d", code / 1000, code % 1000 / 100, code % 100);
  return buf;
}

/* "2025-11-29T21:36:00.123456789Z" from CLOCK_REALTIME ns. */
static const char *utc(uint64_t ns, char *buf, size_t len)
{
  time_t t = (time_t)(ns / 1000000000u);
  struct tm tm;
  if (!ns || !gmtime_r(&t, &tm)) {
    snprintf(buf, len, "unknown");
    return buf;
  }
  char day[40];
  strftime(day, sizeof day, "%Y-%m-%dT%H:%M:%S", &tm);
  snprintf(buf, len, "%s.%09uZ", day, (unsigned)(ns % 1000000000u));
  return buf;
}

/* A time in ms relative to ref ("-" when not seen). */
static const char *rel_ms(uint64_t t, uint64_t ref, char *buf, size_t len)
{
  if (!t) snprintf(buf, len, "-");
  else if (t >= ref) snprintf(buf, len, "%.3f", (double)(t - ref) / 1e6);
  else snprintf(buf, len, "-%.3f", (double)(ref - t) / 1e6);
  return buf;
}

/* Names of set bits, joined by '|', "-" when none. */
static const char *flag_names(uint32_t f, const char *const *names, unsigned n, char *buf,
                              size_t len)
{
  buf[0] = '\0';
  for (unsigned i = 0; i < 32; i++) {
    if (!(f & (1u << i))) continue;
    size_t k = strlen(buf);
    if (i < n) snprintf(buf + k, len - k, "%s%s", k ? "|" : "", names[i]);
    else snprintf(buf + k, len - k, "%sbit%u", k ? "|" : "", i);
  }
  if (!buf[0]) snprintf(buf, len, "-");
  return buf;
}

const char *const fd_comm_flag_names[FD_NCOMM_FLAGS] = {"init_failed", "destroyed",   "aborted", "split",
                                                       "pending",     "unknown_id",  "async_error",
                                                       "revoked",     "finalized",   "shrink"};
const char *const fd_rec_flag_names[FD_NREC_FLAGS] = {"group",   "graph",   "profiler",
                                                     "untracked", "in_call", "simulated", "group_open",
                                                     "aborted", "gpu_timed", "replay"};
const char *const fd_thread_flag_names[FD_NTHREAD_FLAGS] = {"main", "in_nccl", "truncated", "dumper",
                                                           "last_nccl"};

/* "0000000000000abc", or "-" for 0. */
static const char *hex_or_dash(uint64_t v, char *buf)
{
  if (!v) return "-";
  snprintf(buf, 17, "%016" PRIx64, v);
  return buf;
}

static void print_process(FILE *o, const char *name, const frz_dump *d, uint64_t ref)
{
  const frz_process *p = &d->process;
  char s1[512], s2[512], b[64];
  fprintf(o, "file:      %s\n", fd_sanitize(name, strlen(name), s1, sizeof s1));
  if (d->pt && p->trigger_text[0]) /* imported: the importer's words ("... pickle dump, format 2.10") */
    fprintf(o, "format:    %s", fd_sanitize(p->trigger_text, sizeof p->trigger_text, s1, sizeof s1));
  else if (d->pt) /* what PyTorch's dump does not say is left out below */
    fprintf(o, "format:    PyTorch Flight Recorder dump%s%s%s", d->pt->version[0] ? ", version \"" : "",
            fd_sanitize(d->pt->version, sizeof d->pt->version, s1, sizeof s1), d->pt->version[0] ? "\"" : "");
  else
    fprintf(o, "format:    frz %u.%u", d->version_major, d->version_minor);
  if (d->unknown_sections) fprintf(o, " (%u unknown sections skipped)", d->unknown_sections);
  fputc('\n', o);
  fprintf(o, "process:   rank %d of %d", p->global_rank, p->world_size);
  if (!d->pt || p->local_rank >= 0) fprintf(o, " (local rank %d)", p->local_rank);
  if (!d->pt || p->pid) fprintf(o, ", pid %u", p->pid);
  if (!d->pt || p->host[0]) fprintf(o, ", host \"%s\"", fd_sanitize(p->host, sizeof p->host, s1, sizeof s1));
  fputc('\n', o);
  fprintf(o, "job:       \"%s\"\n", fd_sanitize(p->job_id, sizeof p->job_id, s1, sizeof s1));
  fprintf(o, "nccl:      %s\n", nccl_version(p->nccl_version, b, sizeof b));
  if (!d->pt)
    fprintf(o, "recorder:  %u.%u.%u\n", p->recorder_version / 10000, p->recorder_version % 10000 / 100,
            p->recorder_version % 100);
  if (d->pt && p->trigger == FRZ_TRIGGER_NONE) /* its text names the format, said above */
    fprintf(o, "trigger:   not recorded (PyTorch's dumps do not say why they were taken)");
  else
    fprintf(o, "trigger:   %s", frz_trigger_name(p->trigger));
  if (p->trigger_rank >= 0) fprintf(o, " by rank %d", p->trigger_rank);
  fd_sanitize(p->trigger_text, sizeof p->trigger_text, s2, sizeof s2);
  if (s2[0] && !(d->pt && p->trigger == FRZ_TRIGGER_NONE)) fprintf(o, ": \"%s\"", s2);
  if (p->trigger_latency_us) fprintf(o, " (it took %.1f ms to reach this rank)", p->trigger_latency_us / 1e3);
  fputc('\n', o);
  fprintf(o, "frame:     %u", p->frame);
  if (p->trigger_time_ns && p->frame_time_ns)
    fprintf(o, ", taken %s ms after this rank saw the trigger", rel_ms(p->frame_time_ns, p->trigger_time_ns, b, sizeof b));
  if (p->anchor_realtime_ns && p->frame_time_ns)
    fprintf(o, ", at %s",
            utc(p->anchor_realtime_ns + (p->frame_time_ns - p->anchor_monotonic_ns), s1, sizeof s1));
  fputc('\n', o);
  if (p->flags & FRZ_PF_PROFILER_LOADED) fputs("profiler:  loaded by NCCL as its profiler plugin\n", o);
  if (p->flags & FRZ_PF_PROFILER_FOREIGN) fputs("profiler:  NCCL_PROFILER_PLUGIN named another plugin\n", o);
  if (p->flags & FRZ_PF_PROFILER_OFF) fputs("profiler:  off (FR_PROFILER_MASK=0)\n", o);
  if (p->flags & FRZ_PF_STATES_STALE)
    fputs("states:    as of its watchdog's last poll (it ended or stopped without stamping them)\n", o);
  if (d->pt) /* PyTorch's buffer size (TORCH_NCCL_TRACE_BUFFER_SIZE) is not in its dump */
    fprintf(o, "records:   %llu entries\n", (unsigned long long)d->nrecords);
  else
    fprintf(o, "records:   %llu retained of %llu written, %llu dropped (ring of %u)\n",
            (unsigned long long)d->nrecords, (unsigned long long)p->records_total,
            (unsigned long long)p->records_dropped, p->ring_capacity);
  if (ref)
    fprintf(o, "times:     ms relative to the %s (%s %llu ns)\n", p->trigger_time_ns ? "trigger" : "frame",
            d->pt ? "wall clock, PyTorch's times:" : "monotonic", (unsigned long long)ref);
  else
    fputs("times:     ms of CLOCK_MONOTONIC (no trigger or frame time)\n", o);
}

/* A value that is -1 (or any negative) when unknown or none: "-" then. */
static void int_or_dash(int64_t v, char *buf, size_t len)
{
  if (v >= 0) snprintf(buf, len, "%lld", (long long)v);
  else snprintf(buf, len, "-");
}

static void print_comms(FILE *o, const frz_dump *d)
{
  char h1[17], h2[17], h3[17], fl[128];
  fprintf(o, "\ncommunicators: %u\n", d->ncomms);
  if (!d->ncomms) return;
  fprintf(o, "  %-16s %-16s %-16s %6s %5s %8s %9s %8s %10s %10s %7s %s\n", "comm_id", "nccl_hash",
          "parent", "nranks", "rank", "next_seq", "first_ret", "last_enq", "last_start",
          "last_compl", "dropped", "flags");
  for (uint32_t i = 0; i < d->ncomms; i++) {
    const frz_comm *c = &d->comms[i];
    snprintf(h1, sizeof h1, "%016" PRIx64, c->comm_id);
    char le[24], ls[24], lc[24]; /* (none yet, or not recorded: "-") */
    int_or_dash(c->last_enqueued_seq, le, sizeof le);
    int_or_dash(c->last_started_seq, ls, sizeof ls);
    int_or_dash(c->last_completed_seq, lc, sizeof lc);
    fprintf(o, "  %-16s %-16s %-16s %6d %5d %8llu %9llu %8s %10s %10s %7llu %s", h1,
            hex_or_dash(c->nccl_comm_hash, h2), hex_or_dash(c->parent_id, h3), c->nranks, c->rank,
            (unsigned long long)c->next_seq, (unsigned long long)c->first_retained_seq, le, ls, lc,
            (unsigned long long)c->dropped_records,
            flag_names(c->flags, fd_comm_flag_names, FD_NCOMM_FLAGS, fl, sizeof fl));
    if (c->flags & FRZ_CF_SPLIT) fprintf(o, " color=%d key=%d", c->split_color, c->split_key);
    fputc('\n', o);
  }
}

static void print_records(FILE *o, const frz_dump *d, uint64_t ref)
{
  char h[17], t1[32], t2[32], t3[32], fl[128], peer[16], res[16], crank[16], dev[8];
  fprintf(o, "\nrecords: %llu\n", (unsigned long long)d->nrecords);
  if (!d->nrecords) return;
  fprintf(o, "  %8s %-16s %6s %-13s %-9s %12s %-10s %-6s %5s %5s %3s %6s %12s %12s %12s %6s %s\n",
          "id", "comm", "seq", "op", "state", "count", "dtype", "redop", "peer", "rank", "dev",
          "group", "enqueue", "start", "complete", "result", "flags");
  for (uint64_t i = 0; i < d->nrecords; i++) {
    const frz_record *r = &d->records[i];
    unsigned kind = r->kind != FRZ_KIND_NONE ? r->kind : (unsigned)frz_op_kind(r->op);
    int has_seq = kind == FRZ_KIND_COLL || kind == FRZ_KIND_LIFE || kind == FRZ_KIND_P2P;
    char seq[24];
    if (has_seq && d->pt && kind == FRZ_KIND_P2P) /* PyTorch's own p2p_seq_id, as the reports show */
      snprintf(seq, sizeof seq, "%llu", (unsigned long long)d->pt->records[i].p2p_seq_id);
    else if (has_seq) snprintf(seq, sizeof seq, "%llu", (unsigned long long)r->seq);
    else snprintf(seq, sizeof seq, "-");
    int_or_dash(r->peer, peer, sizeof peer);
    int_or_dash(r->comm_rank, crank, sizeof crank);
    int_or_dash(r->cuda_device != FRZ_CUDA_DEVICE_UNKNOWN ? r->cuda_device : -1, dev, sizeof dev);
    int_or_dash(r->result, res, sizeof res);
    char group[24];
    if (r->group_id) snprintf(group, sizeof group, "%llu", (unsigned long long)r->group_id);
    else snprintf(group, sizeof group, "-");
    fprintf(o, "  %8llu %-16s %6s %-13s %-9s %12llu %-10s %-6s %5s %5s %3s %6s %12s %12s %12s %6s %s\n",
            (unsigned long long)r->id, hex_or_dash(r->comm_id, h), seq, frz_op_name(r->op),
            frz_state_name(r->state), (unsigned long long)r->count, frz_dtype_name(r->dtype),
            d->pt ? "-" : frz_redop_name(r->redop), peer, crank, dev, group, /* (PyTorch records no reduction op) */ rel_ms(r->t_enqueue_ns, ref, t1, sizeof t1),
            rel_ms(r->t_start_ns, ref, t2, sizeof t2), rel_ms(r->t_complete_ns, ref, t3, sizeof t3),
            res, flag_names(r->flags, fd_rec_flag_names, FD_NREC_FLAGS, fl, sizeof fl));
    if (r->graph_id && (r->flags & FRZ_RF_GRAPH_REPLAY)) { /* frz 1.5: which launch of which graph */
      char of[32] = ""; /* (graph_ops: 0 unknown, 255 that many or more) */
      if (r->graph_ops)
        snprintf(of, sizeof of, " of %u%s", (unsigned)r->graph_ops, r->graph_ops == 255 ? " or more" : "");
      fprintf(o, "            replay %llu of graph %u, op %u%s\n", (unsigned long long)r->replay,
              (unsigned)r->graph_id, (unsigned)r->graph_op + 1, of);
    }
    else if (r->graph_id)
      fprintf(o, "            captured into graph %u as its op %u\n", (unsigned)r->graph_id,
              (unsigned)r->graph_op + 1);
  }
}

/* "module!symbol+0xoff" for an address of the call-site table, sanitised. */
const char *fd_site_name(const frz_dump *d, uint64_t addr, char *buf, size_t len)
{
  const frz_callsite *c = frz_find_callsite(d, addr);
  char raw[FRZ_MODULE_MAX + FRZ_SYMBOL_MAX + 40];
  if (!c || (!c->module[0] && !c->symbol[0]))
    snprintf(raw, sizeof raw, "0x%" PRIx64, addr);
  else if (c->symbol[0])
    snprintf(raw, sizeof raw, "%s!%s+0x%" PRIx64, c->module, c->symbol, c->offset);
  else
    snprintf(raw, sizeof raw, "%s+0x%" PRIx64, c->module, c->offset);
  return fd_sanitize(raw, strlen(raw), buf, len);
}

const char *fd_dir_name(unsigned dir)
{
  return dir == FRZ_DIR_SEND ? "send" : dir == FRZ_DIR_RECV ? "recv" : dir == FRZ_DIR_NONE ? "none" : "unknown";
}

/* Where the calls came from (frz 1.1 CALLSITES), and with FR_BACKTRACE the
 * callers' stacks, one line per record. */
static void print_sites(FILE *o, const frz_dump *d)
{
  char b[512];
  if (d->ncallsites) {
    fprintf(o, "\ncall sites: %u\n", d->ncallsites);
    for (uint32_t i = 0; i < d->ncallsites; i++)
      fprintf(o, "  0x%016" PRIx64 " %s\n", d->callsites[i].address,
              fd_site_name(d, d->callsites[i].address, b, sizeof b));
  }
  if (d->nbacktraces) {
    fprintf(o, "\nbacktraces: %llu\n", (unsigned long long)d->nbacktraces);
    for (uint64_t i = 0; i < d->nbacktraces; i++) {
      const frz_backtrace *t = &d->backtraces[i];
      fprintf(o, "  record %llu:", (unsigned long long)t->record_id);
      for (uint32_t k = 0; k < t->depth; k++)
        fprintf(o, " %s", fd_site_name(d, t->frames[k], b, sizeof b));
      fputc('\n', o);
    }
  }
}

/* NCCL's per-connection and per-channel progress (frz 1.2 PROXY, KERNELCH). */
static void print_progress(FILE *o, const frz_dump *d, uint64_t ref)
{
  char h[17], t[32], seq[24];
  if (d->nproxy) {
    fprintf(o, "\nproxy progress: %llu\n", (unsigned long long)d->nproxy);
    fprintf(o, "  %-16s %4s %-4s %5s %6s %10s %10s %-14s %12s %s\n", "comm", "chan", "dir", "peer", "seq",
            "posted", "done", "state", "last", "ops");
    for (uint64_t i = 0; i < d->nproxy; i++) {
      const frz_proxy *x = &d->proxy[i];
      if (x->seq == UINT64_MAX) snprintf(seq, sizeof seq, "-");
      else snprintf(seq, sizeof seq, "%llu", (unsigned long long)x->seq);
      fprintf(o, "  %-16s %4u %-4s %5d %6s %10llu %10llu %-14s %12s %u/%u\n", hex_or_dash(x->comm_id, h),
              x->channel, fd_dir_name(x->dir), x->peer, seq,
              (unsigned long long)x->steps_posted, (unsigned long long)x->steps_done,
              x->state ? frz_proxy_state_name(x->state) : "-", rel_ms(x->t_last_ns, ref, t, sizeof t),
              x->ops_done, x->ops_posted);
    }
  }
  if (d->nkernel_ch) {
    fprintf(o, "\nkernel channels: %u\n", d->nkernel_ch);
    fprintf(o, "  %-16s %4s %11s %11s %12s\n", "comm", "chan", "started_seq", "stopped_seq", "last");
    for (uint32_t i = 0; i < d->nkernel_ch; i++) {
      const frz_kernel_ch *k = &d->kernel_ch[i];
      fprintf(o, "  %-16s %4u %11lld %11lld %12s\n", hex_or_dash(k->comm_id, h), k->channel,
              (long long)k->started_seq, (long long)k->stopped_seq, rel_ms(k->t_last_ns, ref, t, sizeof t));
    }
  }
}

/* Every thread's stack at dump time (frz 1.2 STACKS), innermost frame
 * first, with its Python frames (PYFRAMES) after the native ones. */
static void print_threads(FILE *o, const frz_dump *d)
{
  char b[512], fl[96];
  fd_pyindex ix;
  if (!d->nstacks) return;
  if (fd_pyindex_build(d, &ix)) ix.n = 0; /* out of memory: native frames only */
  fprintf(o, "\nthreads: %u\n", d->nstacks);
  for (uint32_t i = 0; i < d->nstacks; i++) {
    const frz_stack *t = &d->stacks[i];
    fprintf(o, "  thread %u \"%s\" %s %s", t->tid, fd_sanitize(t->name, strlen(t->name), b, sizeof b),
            frz_stack_status_name(t->status), flag_names(t->flags, fd_thread_flag_names, FD_NTHREAD_FLAGS, fl, sizeof fl));
    if (t->flags & FRZ_TF_IN_NCCL) fprintf(o, " record %llu", (unsigned long long)t->record_id);
    fputc('\n', o);
    for (uint32_t k = 0; k < t->depth; k++)
      fprintf(o, "    #%-2u %s\n", k, fd_site_name(d, t->frames[k], b, sizeof b));
    const fd_pyrun *run = fd_pyindex_find(&ix, t->thread_handle);
    for (uint32_t k = 0; run && k < run->len && k < FD_PY_MAX; k++) {
      const frz_pyframe *f = &d->pyframes[run->start + k];
      char fn[FRZ_PYFUNC_MAX + FRZ_PYFILE_MAX + 32];
      snprintf(fn, sizeof fn, "%s (%s:%u)", f->func, f->file, f->line);
      fprintf(o, "    py%-2u %s\n", f->index, fd_sanitize(fn, strlen(fn), b, sizeof b));
    }
  }
  fd_pyindex_free(&ix);
}

int fd_print_text(FILE *o, const char *name, const frz_dump *d)
{
  const frz_process *p = &d->process;
  uint64_t ref = p->trigger_time_ns ? p->trigger_time_ns : p->frame_time_ns;
  print_process(o, name, d, ref);
  print_comms(o, d);
  print_records(o, d, ref);
  print_progress(o, d, ref);
  print_sites(o, d);
  print_threads(o, d);
  return ferror(o) ? -1 : 0;
}
