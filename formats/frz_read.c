/* frz_read.c — the dump codec's reader: the decoder, file reading and
 * frz_dump_free.
 *
 * formats/frz.md is the contract this file implements.  Every field is
 * decoded explicitly, little-endian, from the offsets the spec's tables
 * give, and every size and offset is checked before it is used.  Nothing
 * here prints: problems are reported through frz_error as
 * "NAME: at byte N: what".
 */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif

#include "frz_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#define SEC_TYPES_KNOWN 11 /* seen[] covers types 0..10 */

/* ---- item layouts (frz.md, "Section payloads") ---------------------------- */

static void get_process(const uint8_t *p, frz_process *s)
{
  memset(s, 0, sizeof *s);
  s->global_rank = (int32_t)get32(p, 0);
  s->world_size = (int32_t)get32(p, 4);
  s->local_rank = (int32_t)get32(p, 8);
  s->pid = get32(p, 12);
  get_str(s->host, p, 16, FRZ_HOST_MAX);
  get_str(s->job_id, p, 80, FRZ_JOB_MAX);
  s->nccl_version = (int32_t)get32(p, 144);
  s->recorder_version = get32(p, 148);
  s->anchor_realtime_ns = get64(p, 152);
  s->anchor_monotonic_ns = get64(p, 160);
  s->trigger = get32(p, 168);
  s->frame = get32(p, 172);
  s->frame_time_ns = get64(p, 176);
  s->trigger_time_ns = get64(p, 184);
  s->trigger_rank = (int32_t)get32(p, 192);
  s->flags = get32(p, 196);
  s->records_total = get64(p, 200);
  s->records_dropped = get64(p, 208);
  s->ring_capacity = get32(p, 216);
  s->trigger_latency_us = get32(p, 220); /* reserved (0) before 1.4 */
  get_str(s->trigger_text, p, 224, FRZ_TEXT_MAX);
}

static void get_comm(const uint8_t *p, frz_comm *c)
{
  memset(c, 0, sizeof *c);
  c->comm_id = get64(p, 0);
  c->nccl_comm_hash = get64(p, 8);
  c->parent_id = get64(p, 16);
  c->handle = get64(p, 24);
  c->nranks = (int32_t)get32(p, 32);
  c->rank = (int32_t)get32(p, 36);
  c->split_color = (int32_t)get32(p, 40);
  c->split_key = (int32_t)get32(p, 44);
  c->flags = get32(p, 48);
  c->cuda_device = (int32_t)get32(p, 52);
  c->next_seq = get64(p, 56);
  c->first_retained_seq = get64(p, 64);
  c->last_enqueued_seq = (int64_t)get64(p, 72);
  c->last_started_seq = (int64_t)get64(p, 80);
  c->last_completed_seq = (int64_t)get64(p, 88);
  c->dropped_records = get64(p, 96);
}

static void get_record(const uint8_t *p, frz_record *r)
{
  memset(r, 0, sizeof *r);
  r->id = get64(p, 0);
  r->comm_id = get64(p, 8);
  r->seq = get64(p, 16);
  r->count = get64(p, 24);
  r->stream = get64(p, 32);
  r->call_site = get64(p, 40);
  r->group_id = get64(p, 48);
  r->t_enqueue_ns = get64(p, 56);
  r->t_start_ns = get64(p, 64);
  r->t_complete_ns = get64(p, 72);
  r->tid = get32(p, 80);
  r->peer = (int32_t)get32(p, 84);
  r->op = get16(p, 88);
  r->kind = get8(p, 90);
  r->dir = get8(p, 91);
  r->dtype = get8(p, 92);
  r->redop = get8(p, 93);
  r->state = get8(p, 94);
  r->graph_ops = 0; /* (a reserved byte before version 4) */
  r->flags = get32(p, 96);
  r->result = (int32_t)get32(p, 100);
  r->nccl_seq = UINT64_MAX;
  r->algo = FRZ_ALGO_UNKNOWN;
  r->proto = FRZ_PROTO_UNKNOWN;
  r->cuda_device = FRZ_CUDA_DEVICE_UNKNOWN;
  r->comm_rank = -1;
  r->replay = 0;
  r->graph_id = 0;
  r->graph_op = 0;
}

/* The fields RECORDS version 2 appended (1.2), when the item has them. */
static void get_record_v2(const uint8_t *p, frz_record *r)
{
  r->nccl_seq = get64(p, 104);
  r->algo = get8(p, 112);
  r->proto = get8(p, 113);
  r->nchannels = get8(p, 114);
}

/* The fields RECORDS version 3 (1.3) put in bytes 115..119, reserved (and
 * unknown whatever they hold) in older versions. */
static void get_record_v3(const uint8_t *p, frz_record *r)
{
  r->cuda_device = get8(p, 115);
  r->comm_rank = (int32_t)get32(p, 116);
}

/* The CUDA graph fields RECORDS version 4 (1.5) appended. */
static void get_record_v4(const uint8_t *p, frz_record *r)
{
  r->graph_ops = get8(p, 95);
  r->replay = get32(p, 120);
  r->graph_id = get16(p, 124);
  r->graph_op = get16(p, 126);
}

void frz_item_process(const uint8_t *p, frz_process *s) { get_process(p, s); }

void frz_item_record(const uint8_t *p, frz_record *r)
{
  get_record(p, r);
  get_record_v2(p, r);
  get_record_v3(p, r);
}

void frz_item_record_v4(const uint8_t *p, frz_record *r)
{
  frz_item_record(p, r);
  get_record_v4(p, r);
}

static void get_proxy(const uint8_t *p, void *out)
{
  frz_proxy *x = out;
  memset(x, 0, sizeof *x);
  x->comm_id = get64(p, 0);
  x->seq = get64(p, 8);
  x->steps_posted = get64(p, 16);
  x->steps_done = get64(p, 24);
  x->t_last_ns = get64(p, 32);
  x->peer = (int32_t)get32(p, 40);
  x->channel = get8(p, 44);
  x->dir = get8(p, 45);
  x->kind = get8(p, 46);
  x->state = get32(p, 48);
  x->ops_posted = get32(p, 52);
  x->ops_done = get32(p, 56);
  x->rank = (int32_t)get32(p, 60);
}

static void get_kernel_ch(const uint8_t *p, void *out)
{
  frz_kernel_ch *k = out;
  memset(k, 0, sizeof *k);
  k->comm_id = get64(p, 0);
  k->started_seq = (int64_t)get64(p, 8);
  k->stopped_seq = (int64_t)get64(p, 16);
  k->t_last_ns = get64(p, 24);
  k->channel = get32(p, 32);
  k->started = get32(p, 36);
  k->stopped = get32(p, 40);
  k->rank = (int32_t)get32(p, 44);
}

static void get_callsite(const uint8_t *p, frz_callsite *c)
{
  c->address = get64(p, 0);
  c->offset = get64(p, 8);
  get_str(c->module, p, 16, FRZ_MODULE_MAX);
  get_str(c->symbol, p, 80, FRZ_SYMBOL_MAX);
}

static void get_backtrace(const uint8_t *p, frz_backtrace *b)
{
  b->record_id = get64(p, 0);
  b->depth = get32(p, 8);
  if (b->depth > FRZ_BACKTRACE_MAX)
    b->depth = FRZ_BACKTRACE_MAX;
  for (uint32_t i = 0; i < FRZ_BACKTRACE_MAX; i++)
    b->frames[i] = i < b->depth ? get64(p, 16 + 8 * (size_t)i) : 0;
}

static void get_stack(const uint8_t *p, frz_stack *t)
{
  t->tid = get32(p, 0);
  t->status = get32(p, 4);
  t->flags = get32(p, 8);
  t->depth = get32(p, 12);
  if (t->depth > FRZ_STACK_MAX)
    t->depth = FRZ_STACK_MAX;
  t->record_id = get64(p, 16);
  t->thread_handle = get64(p, 24);
  get_str(t->name, p, 32, FRZ_THREAD_NAME_MAX);
  for (uint32_t i = 0; i < FRZ_STACK_MAX; i++)
    t->frames[i] = i < t->depth ? get64(p, 48 + 8 * (size_t)i) : 0;
}

static void get_pyframe(const uint8_t *p, frz_pyframe *f)
{
  f->thread_handle = get64(p, 0);
  f->tid = get32(p, 8);
  f->index = get32(p, 12);
  f->line = get32(p, 16);
  get_str(f->func, p, 24, FRZ_PYFUNC_MAX);
  get_str(f->file, p, 96, FRZ_PYFILE_MAX);
}

/* ---- decoder ------------------------------------------------------------- */

/* One section-table entry as read from the file. */
typedef struct {
  uint32_t type, version;
  uint64_t offset, stored, raw, count;
  uint32_t item_size, crc;
  uint64_t entry_off; /* where this entry sits in the file */
} dec_section;

/* Decoding state of one file image. */
typedef struct {
  const uint8_t *buf;
  size_t len;
  const char *name;
  frz_error *err;
  uint16_t major, minor;
  uint32_t header_size, nsections, entry_size;
  uint64_t table_end; /* offset of the header CRC */
  dec_section *secs;
  int seen[SEC_TYPES_KNOWN];
} decoder;

/* Human name of a section for messages. */
static const char *section_label(uint32_t type)
{
  switch (type) {
  case FRZ_SEC_PROCESS: return "process section";
  case FRZ_SEC_COMMS: return "comms section";
  case FRZ_SEC_RECORDS: return "records section";
  case FRZ_SEC_CALLSITES: return "call-sites section";
  case FRZ_SEC_BACKTRACES: return "backtraces section";
  case FRZ_SEC_PROXY: return "proxy section";
  case FRZ_SEC_KERNELCH: return "kernel-channel section";
  case FRZ_SEC_STACKS: return "stacks section";
  case FRZ_SEC_PYFRAMES: return "python-frames section";
  default: return "section";
  }
}

static uint32_t min_item_size(uint32_t type)
{
  switch (type) {
  case FRZ_SEC_PROCESS: return FRZ_PROCESS_ITEM_SIZE;
  case FRZ_SEC_COMMS: return FRZ_COMM_ITEM_SIZE;
  case FRZ_SEC_CALLSITES: return FRZ_CALLSITE_ITEM_SIZE;
  case FRZ_SEC_BACKTRACES: return FRZ_BACKTRACE_ITEM_SIZE;
  case FRZ_SEC_PROXY: return FRZ_PROXY_ITEM_SIZE;
  case FRZ_SEC_KERNELCH: return FRZ_KERNEL_CH_ITEM_SIZE;
  case FRZ_SEC_STACKS: return FRZ_STACK_ITEM_SIZE;
  case FRZ_SEC_PYFRAMES: return FRZ_PYFRAME_ITEM_SIZE;
  default: return FRZ_RECORD_ITEM_SIZE;
  }
}

static int is_known_type(uint32_t type)
{
  return type == FRZ_SEC_PROCESS || type == FRZ_SEC_COMMS || type == FRZ_SEC_RECORDS ||
         type == FRZ_SEC_CALLSITES || type == FRZ_SEC_BACKTRACES || type == FRZ_SEC_PROXY ||
         type == FRZ_SEC_KERNELCH || type == FRZ_SEC_STACKS || type == FRZ_SEC_PYFRAMES;
}

/* Check the magic and the version: the 12 bytes every major keeps. */
static frz_status check_magic_version(decoder *d)
{
  size_t n = d->len < FRZ_MAGIC_LEN ? d->len : FRZ_MAGIC_LEN;
  if (memcmp(d->buf, FRZ_MAGIC, n) != 0)
    return fail(d->err, FRZ_E_MAGIC, d->name, 0, "not a flightrec dump (bad magic)");
  if (d->len < 12)
    return fail(d->err, FRZ_E_TRUNCATED, d->name, 0,
                "file header truncated (need %d bytes, file ends at %zu)", FRZ_HEADER_SIZE,
                d->len);
  d->major = get16(d->buf, 8);
  d->minor = get16(d->buf, 10);
  if (d->major > FRZ_VERSION_MAJOR)
    return fail(d->err, FRZ_E_VERSION, d->name, 8,
                "format version %u.%u is newer than this reader supports (%d.x); "
                "use a newer flightrec",
                d->major, d->minor, FRZ_VERSION_MAJOR);
  if (d->major == 0)
    return fail(d->err, FRZ_E_CORRUPT, d->name, 8, "invalid format version 0.%u", d->minor);
  return FRZ_OK;
}

/* Read the fixed header and verify the header+table CRC. */
static frz_status read_header(decoder *d)
{
  if (d->len < FRZ_HEADER_SIZE)
    return fail(d->err, FRZ_E_TRUNCATED, d->name, 0,
                "file header truncated (need %d bytes, file ends at %zu)", FRZ_HEADER_SIZE,
                d->len);
  d->header_size = get32(d->buf, 12);
  d->nsections = get32(d->buf, 16);
  d->entry_size = get32(d->buf, 20);
  if (d->header_size < FRZ_HEADER_SIZE)
    return fail(d->err, FRZ_E_CORRUPT, d->name, 12, "header size %" PRIu32 " is below %d",
                d->header_size, FRZ_HEADER_SIZE);
  if (d->entry_size < FRZ_SECTION_ENTRY_SIZE)
    return fail(d->err, FRZ_E_CORRUPT, d->name, 20,
                "section entry size %" PRIu32 " is below %d", d->entry_size,
                FRZ_SECTION_ENTRY_SIZE);
  d->table_end = (uint64_t)d->header_size + (uint64_t)d->nsections * d->entry_size;
  if (d->table_end + 4 > d->len)
    return fail(d->err, FRZ_E_TRUNCATED, d->name, d->header_size < d->len ? d->header_size : 12,
                "section table truncated (need %" PRIu64 " bytes, file ends at %zu)",
                d->table_end + 4, d->len);
  uint32_t stored = get32(d->buf, (size_t)d->table_end);
  uint32_t computed = frz_crc32(0, d->buf, (size_t)d->table_end);
  if (stored != computed)
    return fail(d->err, FRZ_E_CORRUPT, d->name, d->table_end,
                "header checksum mismatch (stored 0x%08" PRIx32 ", computed 0x%08" PRIx32 ")",
                stored, computed);
  return FRZ_OK;
}

/* Parse the section table and check every section's bounds (truncation is
 * reported before any content is examined). */
static frz_status read_table(decoder *d)
{
  if (d->nsections) {
    d->secs = calloc(d->nsections, sizeof *d->secs);
    if (!d->secs)
      return fail(d->err, FRZ_E_NOMEM, d->name, d->header_size,
                  "out of memory for %" PRIu32 " sections", d->nsections);
  }
  uint64_t data_start = d->table_end + 4, max_end = data_start;
  for (uint32_t i = 0; i < d->nsections; i++) {
    dec_section *s = &d->secs[i];
    uint64_t e = (uint64_t)d->header_size + (uint64_t)i * d->entry_size;
    const uint8_t *p = d->buf + e;
    *s = (dec_section){get32(p, 0), get32(p, 4), get64(p, 8), get64(p, 16), get64(p, 24),
                       get64(p, 32), get32(p, 40), get32(p, 44), e};
    if (s->version == 0)
      return fail(d->err, FRZ_E_CORRUPT, d->name, e + 4, "%s (type %" PRIu32 ") has version 0",
                  section_label(s->type), s->type);
    if (s->offset < data_start)
      return fail(d->err, FRZ_E_CORRUPT, d->name, e + 8,
                  "%s offset %" PRIu64 " lies inside the header (data starts at %" PRIu64 ")",
                  section_label(s->type), s->offset, data_start);
    if (s->stored > d->len || s->offset > d->len - s->stored)
      return fail(d->err, FRZ_E_TRUNCATED, d->name, s->offset < d->len ? s->offset : e + 8,
                  "%s truncated (need %" PRIu64 " bytes at byte %" PRIu64
                  ", file ends at %zu)",
                  section_label(s->type), s->stored, s->offset, d->len);
    if (s->offset + s->stored > max_end)
      max_end = s->offset + s->stored;
  }
  if (max_end < d->len)
    return fail(d->err, FRZ_E_CORRUPT, d->name, max_end,
                "%" PRIu64 " unexpected bytes after the last section", d->len - max_end);
  return FRZ_OK;
}

/* Check a known section's sizes against each other and the limits. */
static frz_status check_section_sizes(decoder *d, const dec_section *s)
{
  const char *what = section_label(s->type);
  uint32_t min = min_item_size(s->type);
  if (s->item_size < min)
    return fail(d->err, FRZ_E_CORRUPT, d->name, s->entry_off + 40,
                "%s item size %" PRIu32 " is smaller than %" PRIu32, what, s->item_size, min);
  if (s->count > UINT64_MAX / s->item_size || s->count * s->item_size != s->raw)
    return fail(d->err, FRZ_E_CORRUPT, d->name, s->entry_off + 24,
                "%s raw length %" PRIu64 " != item count %" PRIu64 " x item size %" PRIu32,
                what, s->raw, s->count, s->item_size);
  if (s->raw > FRZ_SECTION_RAW_MAX || s->raw > SIZE_MAX / 2)
    return fail(d->err, FRZ_E_CORRUPT, d->name, s->entry_off + 24,
                "%s raw length %" PRIu64 " exceeds the limit of %" PRIu64 " bytes", what,
                s->raw, FRZ_SECTION_RAW_MAX);
  if (s->type == FRZ_SEC_PROCESS && s->count != 1)
    return fail(d->err, FRZ_E_CORRUPT, d->name, s->entry_off + 32,
                "process section holds %" PRIu64 " items (must be 1)", s->count);
  if ((s->type == FRZ_SEC_COMMS || s->type == FRZ_SEC_CALLSITES || s->type == FRZ_SEC_KERNELCH ||
       s->type == FRZ_SEC_STACKS || s->type == FRZ_SEC_PYFRAMES) && s->count > UINT32_MAX)
    return fail(d->err, FRZ_E_CORRUPT, d->name, s->entry_off + 32,
                "%s holds %" PRIu64 " items (limit %" PRIu32 ")", section_label(s->type), s->count,
                UINT32_MAX);
  return FRZ_OK;
}

/* Check that a section's stored bytes are one zstd frame whose declared
 * content size (when present) is its raw length: before a buffer of that
 * length is allocated, so that a table entry's false item count costs
 * nothing. */
static frz_status check_frame(decoder *d, const dec_section *s)
{
  const char *what = section_label(s->type);
  const uint8_t *src = d->buf + s->offset;
  size_t fsz = ZSTD_findFrameCompressedSize(src, (size_t)s->stored);
  if (ZSTD_isError(fsz))
    return fail(d->err, FRZ_E_CORRUPT, d->name, s->offset, "%s is not a zstd frame (%s)", what,
                ZSTD_getErrorName(fsz));
  if (fsz != s->stored)
    return fail(d->err, FRZ_E_CORRUPT, d->name, s->offset + fsz,
                "%s has %" PRIu64 " bytes after its zstd frame", what, s->stored - fsz);
  unsigned long long csz = ZSTD_getFrameContentSize(src, (size_t)s->stored);
  if (csz == ZSTD_CONTENTSIZE_ERROR || (csz != ZSTD_CONTENTSIZE_UNKNOWN && csz != s->raw))
    return fail(d->err, FRZ_E_CORRUPT, d->name, s->offset,
                "%s frame content size does not match its raw length %" PRIu64, what, s->raw);
  return FRZ_OK;
}

/* Decompress a section's single zstd frame (check_frame passed) into dst,
 * exactly s->raw bytes. */
static frz_status inflate_into(decoder *d, const dec_section *s, void *dst)
{
  const char *what = section_label(s->type);
  const uint8_t *src = d->buf + s->offset;
  size_t n = ZSTD_decompress(dst, (size_t)s->raw, src, (size_t)s->stored);
  if (ZSTD_isError(n))
    return fail(d->err, FRZ_E_CORRUPT, d->name, s->offset, "%s does not decompress (%s)",
                what, ZSTD_getErrorName(n));
  if (n != s->raw)
    return fail(d->err, FRZ_E_CORRUPT, d->name, s->offset,
                "%s decompresses to %zu bytes, expected %" PRIu64, what, n, s->raw);
  return FRZ_OK;
}

/* Decompress a section's single zstd frame into a new buffer of exactly
 * s->raw bytes (*raw; NULL when s->raw is 0). */
static frz_status inflate_section(decoder *d, const dec_section *s, uint8_t **raw)
{
  uint8_t one;
  uint8_t *dst = s->raw ? malloc((size_t)s->raw) : &one;
  *raw = NULL;
  if (!dst)
    return fail(d->err, FRZ_E_NOMEM, d->name, s->offset,
                "out of memory for %s (%" PRIu64 " bytes)", section_label(s->type), s->raw);
  frz_status st = inflate_into(d, s, dst);
  if (st != FRZ_OK) {
    if (dst != &one)
      free(dst);
    return st;
  }
  *raw = dst != &one ? dst : NULL;
  return FRZ_OK;
}

/* Is frz_record laid out in memory as a RECORDS item is on disk (a
 * little-endian host, the fields at the spec's offsets, no padding before
 * the last field)?  Then 128-byte items of version 4 (1.5) decompress
 * straight into the records array; older items (104 or 120 bytes) go
 * through get_record. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ &&                   \
    defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
#define RECORD_LAYOUT_MATCHES                                                                  \
  (sizeof(frz_record) == FRZ_RECORD_ITEM_SIZE_V4 && offsetof(frz_record, comm_id) == 8 &&         \
   offsetof(frz_record, seq) == 16 && offsetof(frz_record, count) == 24 &&                     \
   offsetof(frz_record, stream) == 32 && offsetof(frz_record, call_site) == 40 &&              \
   offsetof(frz_record, group_id) == 48 && offsetof(frz_record, t_enqueue_ns) == 56 &&         \
   offsetof(frz_record, t_start_ns) == 64 && offsetof(frz_record, t_complete_ns) == 72 &&      \
   offsetof(frz_record, tid) == 80 && offsetof(frz_record, peer) == 84 &&                      \
   offsetof(frz_record, op) == 88 && offsetof(frz_record, kind) == 90 &&                       \
   offsetof(frz_record, dir) == 91 && offsetof(frz_record, dtype) == 92 &&                     \
   offsetof(frz_record, redop) == 93 && offsetof(frz_record, state) == 94 &&                   \
   offsetof(frz_record, graph_ops) == 95 && offsetof(frz_record, flags) == 96 &&               \
   offsetof(frz_record, result) == 100 && offsetof(frz_record, nccl_seq) == 104 &&             \
   offsetof(frz_record, algo) == 112 && offsetof(frz_record, proto) == 113 &&                  \
   offsetof(frz_record, nchannels) == 114 && offsetof(frz_record, cuda_device) == 115 &&       \
   offsetof(frz_record, comm_rank) == 116 && offsetof(frz_record, replay) == 120 &&            \
   offsetof(frz_record, graph_id) == 124 && offsetof(frz_record, graph_op) == 126)
#else
#define RECORD_LAYOUT_MATCHES 0
#endif

/* The RECORDS section decompressed in place into out->records (no second
 * copy of the decompressed bytes); the same result as inflate_section then
 * load_items.  Returns 1 when the layout does not allow it (nothing done). */
static int inflate_records_direct(decoder *d, const dec_section *s, frz_dump *out,
                                  frz_status *st)
{
  if (!RECORD_LAYOUT_MATCHES || s->version < 4 || s->item_size != sizeof(frz_record) || s->count == 0)
    return 1;
  frz_record *recs = malloc((size_t)s->raw);
  if (!recs) {
    *st = fail(d->err, FRZ_E_NOMEM, d->name, s->offset,
               "out of memory for %" PRIu64 " records", s->count);
    return 0;
  }
  *st = inflate_into(d, s, recs);
  if (*st != FRZ_OK) {
    free(recs);
    return 0;
  }
  out->records = recs;
  out->nrecords = s->count;
  return 0;
}

/* Decode a section's items with `get` into a new array of `elem`-byte
 * structures (*arr). */
static frz_status load_array(decoder *d, const dec_section *s, const uint8_t *raw, size_t elem,
                             void **arr, void (*get)(const uint8_t *, void *))
{
  uint8_t *v = calloc((size_t)s->count, elem);
  *arr = v;
  if (!v)
    return fail(d->err, FRZ_E_NOMEM, d->name, s->offset, "out of memory for the %" PRIu64 " items of the %s",
                s->count, section_label(s->type));
  for (uint64_t i = 0; i < s->count; i++)
    get(raw + i * s->item_size, v + i * elem);
  return FRZ_OK;
}

/* The STACKS or PYFRAMES section's items into the dump (since 1.2). */
static frz_status load_threads(decoder *d, const dec_section *s, const uint8_t *raw,
                               frz_dump *out)
{
  int stacks = s->type == FRZ_SEC_STACKS;
  void *v = calloc((size_t)s->count, stacks ? sizeof(frz_stack) : sizeof(frz_pyframe));
  if (!v)
    return fail(d->err, FRZ_E_NOMEM, d->name, s->offset, "out of memory for %" PRIu64 " %s",
                s->count, stacks ? "thread stacks" : "python frames");
  for (uint64_t i = 0; i < s->count; i++) {
    if (stacks)
      get_stack(raw + i * s->item_size, (frz_stack *)v + i);
    else
      get_pyframe(raw + i * s->item_size, (frz_pyframe *)v + i);
  }
  if (stacks) {
    out->stacks = v;
    out->nstacks = (uint32_t)s->count;
  } else {
    out->pyframes = v;
    out->npyframes = (uint32_t)s->count;
  }
  return FRZ_OK;
}

/* Convert a known section's raw items into the dump's structures. */
static frz_status load_items(decoder *d, const dec_section *s, const uint8_t *raw,
                             frz_dump *out)
{
  if (s->type == FRZ_SEC_PROCESS) {
    get_process(raw, &out->process);
    return FRZ_OK;
  }
  if (s->count == 0)
    return FRZ_OK;
  if (s->type == FRZ_SEC_COMMS) {
    out->comms = calloc((size_t)s->count, sizeof *out->comms);
    if (!out->comms)
      return fail(d->err, FRZ_E_NOMEM, d->name, s->offset, "out of memory for %" PRIu64 " comms",
                  s->count);
    out->ncomms = (uint32_t)s->count;
    for (uint64_t i = 0; i < s->count; i++)
      get_comm(raw + i * s->item_size, &out->comms[i]);
    return FRZ_OK;
  }
  if (s->type == FRZ_SEC_BACKTRACES) {
    out->backtraces = calloc((size_t)s->count, sizeof *out->backtraces);
    if (!out->backtraces)
      return fail(d->err, FRZ_E_NOMEM, d->name, s->offset,
                  "out of memory for %" PRIu64 " backtraces", s->count);
    out->nbacktraces = s->count;
    for (uint64_t i = 0; i < s->count; i++)
      get_backtrace(raw + i * s->item_size, &out->backtraces[i]);
    qsort(out->backtraces, (size_t)out->nbacktraces, sizeof *out->backtraces, cmp_bt);
    return FRZ_OK;
  }
  if (s->type == FRZ_SEC_PROXY) {
    out->nproxy = s->count;
    return load_array(d, s, raw, sizeof *out->proxy, (void **)&out->proxy, get_proxy);
  }
  if (s->type == FRZ_SEC_KERNELCH) {
    out->nkernel_ch = (uint32_t)s->count;
    return load_array(d, s, raw, sizeof *out->kernel_ch, (void **)&out->kernel_ch, get_kernel_ch);
  }
  if (s->type == FRZ_SEC_STACKS || s->type == FRZ_SEC_PYFRAMES)
    return load_threads(d, s, raw, out);
  if (s->type == FRZ_SEC_CALLSITES) {
    out->callsites = calloc((size_t)s->count, sizeof *out->callsites);
    if (!out->callsites)
      return fail(d->err, FRZ_E_NOMEM, d->name, s->offset,
                  "out of memory for %" PRIu64 " call sites", s->count);
    out->ncallsites = (uint32_t)s->count;
    for (uint64_t i = 0; i < s->count; i++)
      get_callsite(raw + i * s->item_size, &out->callsites[i]);
    qsort(out->callsites, out->ncallsites, sizeof *out->callsites, cmp_site);
    return FRZ_OK;
  }
  out->records = calloc((size_t)s->count, sizeof *out->records);
  if (!out->records)
    return fail(d->err, FRZ_E_NOMEM, d->name, s->offset,
                "out of memory for %" PRIu64 " records", s->count);
  out->nrecords = s->count;
  int v2 = s->version >= 2 && s->item_size >= FRZ_RECORD_ITEM_SIZE_V2;
  int v3 = v2 && s->version >= 3;
  int v4 = v3 && s->version >= 4 && s->item_size >= FRZ_RECORD_ITEM_SIZE_V4;
  for (uint64_t i = 0; i < s->count; i++) {
    get_record(raw + i * s->item_size, &out->records[i]);
    if (v2)
      get_record_v2(raw + i * s->item_size, &out->records[i]);
    if (v3)
      get_record_v3(raw + i * s->item_size, &out->records[i]);
    if (v4)
      get_record_v4(raw + i * s->item_size, &out->records[i]);
  }
  return FRZ_OK;
}

/* Verify one section's CRC and, if its type is known, decode it. */
static frz_status read_section(decoder *d, const dec_section *s, frz_dump *out)
{
  uint32_t crc = frz_crc32(0, d->buf + s->offset, (size_t)s->stored);
  if (crc != s->crc)
    return fail(d->err, FRZ_E_CORRUPT, d->name, s->offset,
                "%s (type %" PRIu32 ") checksum mismatch (stored 0x%08" PRIx32
                ", computed 0x%08" PRIx32 ")",
                section_label(s->type), s->type, s->crc, crc);
  if (!is_known_type(s->type)) {
    out->unknown_sections++;
    return FRZ_OK;
  }
  if (d->seen[s->type])
    return fail(d->err, FRZ_E_CORRUPT, d->name, s->entry_off, "duplicate %s",
                section_label(s->type));
  d->seen[s->type] = 1;
  frz_status st = check_section_sizes(d, s);
  if (st == FRZ_OK)
    st = check_frame(d, s);
  uint8_t *raw = NULL;
  if (st == FRZ_OK && s->type == FRZ_SEC_RECORDS && !inflate_records_direct(d, s, out, &st))
    return st;
  if (st == FRZ_OK)
    st = inflate_section(d, s, &raw);
  if (st == FRZ_OK)
    st = load_items(d, s, raw, out);
  free(raw);
  return st;
}

static int cmp_record_id(const void *a, const void *b)
{
  uint64_t x = ((const frz_record *)a)->id, y = ((const frz_record *)b)->id;
  return (x > y) - (x < y);
}

/* Present records in id order whatever order the writer used. */
static void sort_records(frz_dump *out)
{
  for (uint64_t i = 1; i < out->nrecords; i++) {
    if (out->records[i].id < out->records[i - 1].id) {
      qsort(out->records, (size_t)out->nrecords, sizeof *out->records, cmp_record_id);
      return;
    }
  }
}

/* The body of frz_decode once the arguments are known to be sane. */
static frz_status decode_image(decoder *d, frz_dump *out)
{
  if (d->len == 0)
    return fail(d->err, FRZ_E_EMPTY, d->name, 0, "empty file (0 bytes)");
  frz_status st = check_magic_version(d);
  if (st == FRZ_OK)
    st = read_header(d);
  if (st == FRZ_OK)
    st = read_table(d);
  for (uint32_t i = 0; st == FRZ_OK && i < d->nsections; i++)
    st = read_section(d, &d->secs[i], out);
  if (st != FRZ_OK)
    return st;
  for (uint32_t t = FRZ_SEC_PROCESS; t <= FRZ_SEC_RECORDS; t++)
    if (!d->seen[t])
      return fail(d->err, FRZ_E_CORRUPT, d->name, d->header_size, "no %s in the file",
                  section_label(t));
  out->version_major = d->major;
  out->version_minor = d->minor;
  sort_records(out);
  return FRZ_OK;
}

frz_status frz_decode(const void *buf, size_t len, const char *name, frz_dump *out,
                      frz_error *err)
{
  if (!out)
    return fail(err, FRZ_E_INVALID, name, 0, "frz_decode: NULL output");
  memset(out, 0, sizeof *out);
  if (!buf && len)
    return fail(err, FRZ_E_INVALID, name, 0, "frz_decode: NULL buffer");
  decoder d = {.buf = buf, .len = len, .name = name ? name : MEMORY_NAME, .err = err};
  frz_status st = decode_image(&d, out);
  free(d.secs);
  if (st != FRZ_OK)
    frz_dump_free(out);
  else
    set_ok(err);
  return st;
}

/* ---- files --------------------------------------------------------------- */

/* Read up to `size` bytes from fd into buf; returns the count read (short at
 * end of file) or -1 with errno set. */
static ssize_t read_full(int fd, uint8_t *buf, size_t size)
{
  size_t got = 0;
  while (got < size) {
    ssize_t n = read(fd, buf + got, size - got);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return -1;
    if (n == 0)
      break;
    got += (size_t)n;
  }
  return (ssize_t)got;
}

frz_status frz_read_file(const char *path, frz_dump *out, frz_error *err)
{
  if (!path || !out)
    return fail(err, FRZ_E_INVALID, path, 0, "frz_read_file: NULL argument");
  memset(out, 0, sizeof *out);
  char eb[128];
  /* O_NONBLOCK: opening a FIFO must not wait for a writer (it is then
   * refused as not a regular file); it has no effect on regular files. */
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0)
    return fail(err, FRZ_E_IO, path, FRZ_NO_OFFSET, "cannot open: %s", errstr(errno, eb, sizeof eb));
  struct stat st;
  frz_status rc;
  uint8_t *buf = NULL;
  if (fstat(fd, &st) != 0) {
    rc = fail(err, FRZ_E_IO, path, FRZ_NO_OFFSET, "cannot stat: %s", errstr(errno, eb, sizeof eb));
    goto out;
  }
  if (!S_ISREG(st.st_mode)) {
    rc = fail(err, FRZ_E_IO, path, FRZ_NO_OFFSET, "not a regular file");
    goto out;
  }
  if ((uint64_t)st.st_size > SIZE_MAX / 2) {
    rc = fail(err, FRZ_E_IO, path, FRZ_NO_OFFSET, "file too large (%jd bytes)", (intmax_t)st.st_size);
    goto out;
  }
  size_t size = (size_t)st.st_size;
  buf = malloc(size ? size : 1);
  if (!buf) {
    rc = fail(err, FRZ_E_NOMEM, path, 0, "out of memory reading %zu bytes", size);
    goto out;
  }
  ssize_t got = read_full(fd, buf, size);
  if (got < 0) {
    rc = fail(err, FRZ_E_IO, path, 0, "read failed: %s", errstr(errno, eb, sizeof eb));
    goto out;
  }
  rc = frz_decode(buf, (size_t)got, path, out, err);
out:
  free(buf);
  close(fd);
  return rc;
}
