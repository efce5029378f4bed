/* synth_pickle.c — one rank of the synthetic job (synth.h) as a PyTorch
 * Flight Recorder dump: a pickle (protocol 2) of the dict ProcessGroupNCCL
 * writes (format version 2.10: version, pg_config, pg_status,
 * comm_lib_version, entries), so that PyTorch's own analyzer and
 * fr-analyze's importer can be timed on the same job.
 *
 * Process groups are named as torch.distributed names them on every rank
 * (a counter in creation order: "0" the default group, then the TP, PP and
 * DP groups); a rank's pg_config lists the four groups it belongs to.
 * Collective seq ids count from 1 (ours from 0); group brackets are not
 * Flight Recorder entries and are left out. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "synth.h"

/* ---- a minimal pickle writer (protocol 2 opcodes) ------------------------- */

/* A pickle being written.  Strings are memoized by content, as PyTorch's
 * own writer does (torch/csrc/jit/serialization/pickler.cpp, pushString:
 * BINUNICODE then BINPUT the first time a string is written, BINGET of
 * its memo slot every later time), so the keys of every entry and the
 * repeated values (states, dtypes, names) are 2- or 5-byte references, as
 * in the dumps a real job writes. */
#define PW_SLOTS 4096 /* open addressing; a dump holds a few hundred distinct strings */
typedef struct pw {
  FILE *f;
  uint32_t next_memo;       /* the memo slot the next BINPUT sets */
  char *key[PW_SLOTS];      /* a memoized string, NULL empty */
  uint32_t memo[PW_SLOTS];  /* its memo slot */
  int full;                 /* the table is full: later strings are written unmemoized */
} pw;

static void p_raw(pw *f, const void *p, size_t n) { fwrite(p, 1, n, f->f); }
static void p_op(pw *f, int c) { fputc(c, f->f); }

static void p_le(pw *f, uint64_t v, int n)
{
  uint8_t b[8];
  for (int i = 0; i < n; i++) b[i] = (uint8_t)(v >> (8 * i));
  p_raw(f, b, (size_t)n);
}

/* BINPUT (slot < 256) or LONG_BINPUT, or with get BINGET / LONG_BINGET. */
static void p_memo(pw *f, uint32_t slot, int get)
{
  if (slot < 256) {
    p_op(f, get ? 'h' : 'q');
    p_le(f, slot, 1);
  } else {
    p_op(f, get ? 'j' : 'r');
    p_le(f, slot, 4);
  }
}

static void p_str(pw *f, const char *s)
{
  size_t n = strlen(s);
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; i++) h = (h ^ (uint8_t)s[i]) * 1099511628211ull;
  uint32_t k = (uint32_t)h & (PW_SLOTS - 1), probes = 0;
  while (f->key[k] && strcmp(f->key[k], s) != 0 && probes++ < PW_SLOTS) k = (k + 1) & (PW_SLOTS - 1);
  if (f->key[k] && strcmp(f->key[k], s) == 0) {
    p_memo(f, f->memo[k], 1);
    return;
  }
  p_op(f, 'X'); /* BINUNICODE */
  p_le(f, n, 4);
  p_raw(f, s, n);
  uint32_t slot = f->next_memo++;
  p_memo(f, slot, 0);
  if (!f->key[k] && !f->full && (f->key[k] = strdup(s))) f->memo[k] = slot;
  else f->full = 1;
}

/* The smallest of BININT1, BININT2, BININT, LONG1 (8 bytes), as PyTorch's
 * writer chooses (pushInt). */
static void p_int(pw *f, int64_t v)
{
  if (v >= 0 && v < 256) {
    p_op(f, 'K');
    p_le(f, (uint64_t)v, 1);
  } else if (v >= 0 && v < 65536) {
    p_op(f, 'M');
    p_le(f, (uint64_t)v, 2);
  } else if (v >= INT32_MIN && v <= INT32_MAX) {
    p_op(f, 'J');
    p_le(f, (uint64_t)(uint32_t)(int32_t)v, 4);
  } else { /* LONG1: little-endian two's complement, 8 bytes suffice */
    p_op(f, 0x8a);
    p_op(f, 8);
    p_le(f, (uint64_t)v, 8);
  }
}

static void p_bool(pw *f, int v) { p_op(f, v ? 0x88 : 0x89); }
static void p_none(pw *f) { p_op(f, 'N'); }
static void p_dict(pw *f) { p_raw(f, "}(", 2); }  /* EMPTY_DICT MARK ... SETITEMS */
static void p_dict_end(pw *f) { p_op(f, 'u'); }
static void p_list(pw *f) { p_raw(f, "](", 2); }  /* EMPTY_LIST MARK ... APPENDS */
static void p_list_end(pw *f) { p_op(f, 'e'); }

/* ---- the rank's groups ------------------------------------------------------- */

/* Name (creation counter) and description of the rank's group `which`. */
static void pg_name(const synth_job *j, const frz_comm *c, int which, char *name, size_t len)
{
  uint64_t idx = c->comm_id & 0xffffffffu, base = 1;
  int64_t ntp = (int64_t)j->dp * j->pp, npp = (int64_t)j->dp * j->tp;
  if (which == SYNTH_WORLD) {
    snprintf(name, len, "0");
    return;
  }
  if (which == SYNTH_PP) base += (uint64_t)ntp;
  if (which == SYNTH_DP) base += (uint64_t)(ntp + npp);
  snprintf(name, len, "%llu", (unsigned long long)(base + idx));
}

static const char *pg_desc[4] = {"default_pg", "tp", "pp", "dp"};

/* "[a, b, ...]": the group's global ranks, as PyTorch writes them. */
static void p_ranks(pw *f, const synth_job *j, int32_t r, int which, int32_t size)
{
  int32_t t = r % j->tp, s = (r / j->tp) % j->pp, d = r / (j->tp * j->pp);
  size_t cap = (size_t)size * 12 + 3, n = 0;
  char *b = malloc(cap);
  if (!b) {
    p_str(f, "[]");
    return;
  }
  b[n++] = '[';
  for (int32_t k = 0; k < size; k++) {
    int32_t g = which == SYNTH_TP   ? (d * j->pp + s) * j->tp + k
                : which == SYNTH_PP ? (d * j->pp + k) * j->tp + t
                : which == SYNTH_DP ? (k * j->pp + s) * j->tp + t
                                    : k;
    n += (size_t)snprintf(b + n, cap - n, k ? ", %d" : "%d", g);
  }
  b[n++] = ']';
  b[n] = '\0';
  p_str(f, b);
  free(b);
}

static int which_comm(const synth_rank *sr, uint64_t id)
{
  for (int w = 0; w < 4; w++)
    if (sr->comms[w].comm_id == id) return w;
  return -1;
}

static const char *torch_dtype(uint8_t d)
{
  return d == 9 ? "BFloat16" : d == 7 ? "Float" : d == 4 ? "Long" : "Byte";
}

static const char *torch_op(uint16_t op)
{
  switch (op) {
  case FRZ_OP_AllReduce: return "all_reduce";
  case FRZ_OP_Broadcast: return "broadcast";
  case FRZ_OP_ReduceScatter: return "_reduce_scatter_base";
  case FRZ_OP_AllGather: return "_allgather_base";
  case FRZ_OP_Send: return "send";
  default: return "recv";
  }
}

/* Wall clock of a monotonic time of rank r. */
static int64_t wall(const synth_rank *sr, uint64_t t)
{
  return (int64_t)(sr->proc.anchor_realtime_ns + (t - sr->proc.anchor_monotonic_ns));
}

static void p_entry(pw *f, const synth_rank *sr, const frz_record *x,
                    uint32_t nth, const char names[4][24])
{
  int w = which_comm(sr, x->comm_id);
  int p2p = x->kind == FRZ_KIND_P2P;
  char pname[64];
  if (p2p) {
    int32_t me = sr->comms[w].rank;
    snprintf(pname, sizeof pname, "nccl:%s %d%s%d", torch_op(x->op), me,
             x->op == FRZ_OP_Send ? "->" : "<-", x->peer);
  } else {
    snprintf(pname, sizeof pname, "nccl:%s", torch_op(x->op));
  }
  /* seq ids: collectives count from 1 per group; p2p ones per group, two a step */
  int64_t coll = p2p ? 0 : (int64_t)x->seq + 1;
  int64_t p2pseq = p2p ? 2 * (int64_t)x->seq + (x->op == FRZ_OP_Send ? 2 : 1) : 0;
  const char *dt = torch_dtype(x->dtype);
  char tid[32];
  snprintf(tid, sizeof tid, "%u", x->tid);
  p_dict(f);
  p_str(f, "frames");
  p_list(f);
  p_dict(f);
  p_str(f, "name");
  p_str(f, torch_op(x->op));
  p_str(f, "filename");
  p_str(f, "train.py");
  p_str(f, "line");
  p_int(f, 100 + (int64_t)(x->call_site & 0xfff) / 0x40);
  p_dict_end(f);
  p_list_end(f);
  p_str(f, "record_id");
  p_int(f, nth);
  p_str(f, "pg_id");
  p_int(f, atoll(names[w]));
  p_str(f, "process_group");
  p_str(f, names[w]);
  p_str(f, pg_desc[w]);
  p_op(f, 0x86); /* TUPLE2 */
  p_str(f, "collective_seq_id");
  p_int(f, coll);
  p_str(f, "p2p_seq_id");
  p_int(f, p2pseq);
  p_str(f, "op_id");
  p_int(f, coll + p2pseq);
  p_str(f, "profiling_name");
  p_str(f, pname);
  p_str(f, "time_created_ns");
  p_int(f, wall(sr, x->t_enqueue_ns));
  p_str(f, "input_sizes");
  p_list(f);
  p_list(f);
  p_int(f, (int64_t)x->count);
  p_list_end(f);
  p_list_end(f);
  p_str(f, "input_dtypes");
  p_list(f);
  p_str(f, dt);
  p_list_end(f);
  p_str(f, "output_sizes");
  p_list(f);
  p_list(f);
  p_int(f, (int64_t)x->count);
  p_list_end(f);
  p_list_end(f);
  p_str(f, "output_dtypes");
  p_list(f);
  p_str(f, dt);
  p_list_end(f);
  p_str(f, "state");
  p_str(f, x->state == FRZ_STATE_COMPLETED ? "completed"
           : x->state == FRZ_STATE_STARTED ? "started"
                                            : "scheduled");
  p_str(f, "time_discovered_started_ns");
  if (x->t_start_ns) p_int(f, wall(sr, x->t_start_ns));
  else p_none(f);
  p_str(f, "time_discovered_completed_ns");
  if (x->t_complete_ns) p_int(f, wall(sr, x->t_complete_ns));
  else p_none(f);
  p_str(f, "retired");
  p_bool(f, x->state == FRZ_STATE_COMPLETED);
  p_str(f, "timeout_ms");
  p_int(f, 600000);
  p_str(f, "is_p2p");
  p_bool(f, p2p);
  p_str(f, "thread_id");
  p_str(f, tid);
  p_str(f, "thread_name");
  p_str(f, "pt_main_thread");
  p_dict_end(f);
}

int synth_write_pytorch(const synth_job *j, const synth_rank *sr, const char *path)
{
  pw *f = calloc(1, sizeof *f);
  if (!f) return -1;
  if (!(f->f = fopen(path, "wb"))) {
    free(f);
    return -1;
  }
  char names[4][24];
  for (int w = 0; w < 4; w++) pg_name(j, &sr->comms[w], w, names[w], sizeof names[w]);
  int32_t r = sr->proc.global_rank;
  p_raw(f, "\x80\x02", 2); /* PROTO 2 */
  p_dict(f);
  p_str(f, "version");
  p_str(f, "2.10");
  p_str(f, "pg_config");
  p_dict(f);
  for (int w = 0; w < 4; w++) {
    p_str(f, names[w]);
    p_dict(f);
    p_str(f, "name");
    p_str(f, names[w]);
    p_str(f, "desc");
    p_str(f, pg_desc[w]);
    p_str(f, "ranks");
    p_ranks(f, j, r, w, sr->comms[w].nranks);
    p_dict_end(f);
  }
  p_dict_end(f);
  p_str(f, "pg_status");
  p_dict(f);
  for (int w = 0; w < 4; w++) {
    const frz_comm *c = &sr->comms[w];
    p_str(f, names[w]);
    p_dict(f);
    p_str(f, "last_enqueued_collective");
    p_int(f, c->last_enqueued_seq + 1);
    p_str(f, "last_started_collective");
    p_int(f, c->last_started_seq + 1);
    p_str(f, "last_completed_collective");
    p_int(f, c->last_completed_seq + 1);
    p_dict_end(f);
  }
  p_dict_end(f);
  p_str(f, "comm_lib_version");
  p_str(f, "2.28.9");
  p_str(f, "entries");
  p_list(f);
  uint32_t nth = 0;
  for (uint32_t i = 0; i < sr->nrec; i++) {
    const frz_record *x = &sr->rec[i];
    if (x->kind != FRZ_KIND_COLL && x->kind != FRZ_KIND_P2P) continue;
    p_entry(f, sr, x, nth++, (const char(*)[24])names);
  }
  p_list_end(f);
  p_dict_end(f);
  p_op(f, '.'); /* STOP */
  int bad = ferror(f->f);
  bad |= fclose(f->f) != 0;
  for (uint32_t k = 0; k < PW_SLOTS; k++) free(f->key[k]);
  free(f);
  if (bad) {
    if (!errno) errno = EIO;
    return -1;
  }
  return 0;
}
