/* check_frz.c — unit tests of the dump format codec (formats/frz_*.c) and its
 * names (formats/frz_names.c).
 *
 * Besides round trips through the codec, the tests parse and build files
 * with their own small implementation of frz.md's layout (t_parse/t_build),
 * so the byte layout, forward compatibility (larger headers, entries and
 * items from a newer minor; unknown sections) and the structural checks are
 * tested against the spec rather than against the codec itself.
 */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include "frz.h"

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#define DATA_START_V1 (FRZ_HEADER_SIZE + 3 * FRZ_SECTION_ENTRY_SIZE + 4)

/* ---- deterministic test data ----------------------------------------------- */

static uint64_t rng_state;

static uint64_t rnd(void)
{
  uint64_t x = rng_state;
  x ^= x << 13;
  x ^= x >> 7;
  x ^= x << 17;
  return rng_state = x;
}

static void fill_process(frz_process *p)
{
  memset(p, 0, sizeof *p);
  p->global_rank = 1234;
  p->world_size = 4096;
  p->local_rank = -1;
  p->pid = 0xDEADBEEFu;
  snprintf(p->host, sizeof p->host, "node-%03d.cluster.example", 17);
  snprintf(p->job_id, sizeof p->job_id, "slurm-99887766");
  p->nccl_version = 22809;
  p->recorder_version = 100;
  p->anchor_realtime_ns = 1732900000123456789ull;
  p->anchor_monotonic_ns = 987654321012ull;
  p->trigger = FRZ_TRIGGER_TIMEOUT;
  p->frame = 3;
  p->frame_time_ns = UINT64_MAX - 5;
  p->trigger_time_ns = 0x0102030405060708ull;
  p->trigger_rank = INT32_MIN;
  p->flags = 0x80000001u;
  p->records_total = 1ull << 40;
  p->records_dropped = 77;
  p->ring_capacity = 16384;
  p->trigger_latency_us = 0xFEDCBA98u;
  snprintf(p->trigger_text, sizeof p->trigger_text, "seq 37 AllReduce waited 60 s");
}

static void fill_comm(frz_comm *c, int i)
{
  memset(c, 0, sizeof *c);
  c->comm_id = rnd();
  c->nccl_comm_hash = rnd();
  c->parent_id = i ? rnd() : 0;
  c->handle = rnd();
  c->nranks = 8 << i;
  c->rank = i - 1;
  c->split_color = i == 2 ? INT32_MIN : -1;
  c->split_key = INT32_MAX - i;
  c->flags = FRZ_CF_SPLIT | (uint32_t)i << 8;
  c->cuda_device = i - 1;
  c->next_seq = rnd();
  c->first_retained_seq = rnd();
  c->last_enqueued_seq = (int64_t)rnd();
  c->last_started_seq = -1;
  c->last_completed_seq = INT64_MIN + i;
  c->dropped_records = rnd();
}

static void fill_record(frz_record *r, uint64_t id)
{
  memset(r, 0, sizeof *r);
  r->id = id;
  r->comm_id = rnd();
  r->seq = rnd();
  r->count = rnd();
  r->stream = rnd();
  r->call_site = rnd();
  r->group_id = rnd();
  r->t_enqueue_ns = rnd();
  r->t_start_ns = rnd();
  r->t_complete_ns = rnd();
  r->tid = (uint32_t)rnd();
  r->peer = (int32_t)rnd();
  r->op = (uint16_t)rnd();
  r->kind = (uint8_t)rnd();
  r->dir = (uint8_t)rnd();
  r->dtype = (uint8_t)rnd();
  r->redop = (uint8_t)rnd();
  r->state = (uint8_t)rnd();
  r->flags = (uint32_t)rnd();
  r->result = (int32_t)rnd();
  r->nccl_seq = rnd();
  r->algo = (uint8_t)rnd();
  r->proto = (uint8_t)rnd();
  r->nchannels = (uint8_t)rnd();
  r->cuda_device = (uint8_t)(rnd() | 1); /* never 0: version-2 padding tests need non-zero bytes */
  r->comm_rank = (int32_t)(rnd() | 1);
  r->replay = (uint32_t)(rnd() | 1); /* never 0: older sections must read them as 0 */
  r->graph_id = (uint16_t)(rnd() | 1);
  r->graph_op = (uint16_t)(rnd() | 1);
  r->graph_ops = (uint8_t)(rnd() | 1);
}

static frz_record *make_records(uint64_t n)
{
  frz_record *r = calloc(n ? n : 1, sizeof *r);
  ck_assert_ptr_nonnull(r);
  for (uint64_t i = 0; i < n; i++)
    fill_record(&r[i], 1000 + i);
  return r;
}

/* ---- comparisons -------------------------------------------------------------- */

static void assert_process_eq(const frz_process *a, const frz_process *b)
{
  ck_assert_int_eq(a->global_rank, b->global_rank);
  ck_assert_int_eq(a->world_size, b->world_size);
  ck_assert_int_eq(a->local_rank, b->local_rank);
  ck_assert_uint_eq(a->pid, b->pid);
  ck_assert_str_eq(a->host, b->host);
  ck_assert_str_eq(a->job_id, b->job_id);
  ck_assert_int_eq(a->nccl_version, b->nccl_version);
  ck_assert_uint_eq(a->recorder_version, b->recorder_version);
  ck_assert_uint_eq(a->anchor_realtime_ns, b->anchor_realtime_ns);
  ck_assert_uint_eq(a->anchor_monotonic_ns, b->anchor_monotonic_ns);
  ck_assert_uint_eq(a->trigger, b->trigger);
  ck_assert_uint_eq(a->frame, b->frame);
  ck_assert_uint_eq(a->frame_time_ns, b->frame_time_ns);
  ck_assert_uint_eq(a->trigger_time_ns, b->trigger_time_ns);
  ck_assert_int_eq(a->trigger_rank, b->trigger_rank);
  ck_assert_uint_eq(a->flags, b->flags);
  ck_assert_uint_eq(a->records_total, b->records_total);
  ck_assert_uint_eq(a->records_dropped, b->records_dropped);
  ck_assert_uint_eq(a->ring_capacity, b->ring_capacity);
  ck_assert_uint_eq(a->trigger_latency_us, b->trigger_latency_us);
  ck_assert_str_eq(a->trigger_text, b->trigger_text);
}

static void assert_comm_eq(const frz_comm *a, const frz_comm *b)
{
  ck_assert_uint_eq(a->comm_id, b->comm_id);
  ck_assert_uint_eq(a->nccl_comm_hash, b->nccl_comm_hash);
  ck_assert_uint_eq(a->parent_id, b->parent_id);
  ck_assert_uint_eq(a->handle, b->handle);
  ck_assert_int_eq(a->nranks, b->nranks);
  ck_assert_int_eq(a->rank, b->rank);
  ck_assert_int_eq(a->split_color, b->split_color);
  ck_assert_int_eq(a->split_key, b->split_key);
  ck_assert_uint_eq(a->flags, b->flags);
  ck_assert_int_eq(a->cuda_device, b->cuda_device);
  ck_assert_uint_eq(a->next_seq, b->next_seq);
  ck_assert_uint_eq(a->first_retained_seq, b->first_retained_seq);
  ck_assert_int_eq(a->last_enqueued_seq, b->last_enqueued_seq);
  ck_assert_int_eq(a->last_started_seq, b->last_started_seq);
  ck_assert_int_eq(a->last_completed_seq, b->last_completed_seq);
  ck_assert_uint_eq(a->dropped_records, b->dropped_records);
}

static void assert_record_eq(const frz_record *a, const frz_record *b)
{
  ck_assert_uint_eq(a->id, b->id);
  ck_assert_uint_eq(a->comm_id, b->comm_id);
  ck_assert_uint_eq(a->seq, b->seq);
  ck_assert_uint_eq(a->count, b->count);
  ck_assert_uint_eq(a->stream, b->stream);
  ck_assert_uint_eq(a->call_site, b->call_site);
  ck_assert_uint_eq(a->group_id, b->group_id);
  ck_assert_uint_eq(a->t_enqueue_ns, b->t_enqueue_ns);
  ck_assert_uint_eq(a->t_start_ns, b->t_start_ns);
  ck_assert_uint_eq(a->t_complete_ns, b->t_complete_ns);
  ck_assert_uint_eq(a->tid, b->tid);
  ck_assert_int_eq(a->peer, b->peer);
  ck_assert_uint_eq(a->op, b->op);
  ck_assert_uint_eq(a->kind, b->kind);
  ck_assert_uint_eq(a->dir, b->dir);
  ck_assert_uint_eq(a->dtype, b->dtype);
  ck_assert_uint_eq(a->redop, b->redop);
  ck_assert_uint_eq(a->state, b->state);
  ck_assert_uint_eq(a->flags, b->flags);
  ck_assert_int_eq(a->result, b->result);
  ck_assert_uint_eq(a->nccl_seq, b->nccl_seq);
  ck_assert_uint_eq(a->algo, b->algo);
  ck_assert_uint_eq(a->proto, b->proto);
  ck_assert_uint_eq(a->nchannels, b->nchannels);
  ck_assert_uint_eq(a->cuda_device, b->cuda_device);
  ck_assert_int_eq(a->comm_rank, b->comm_rank);
  ck_assert_uint_eq(a->replay, b->replay);
  ck_assert_uint_eq(a->graph_id, b->graph_id);
  ck_assert_uint_eq(a->graph_op, b->graph_op);
  ck_assert_uint_eq(a->graph_ops, b->graph_ops);
}

/* A record as a reader of a RECORDS section older than version 4 sees it:
 * no CUDA graph fields. */
static frz_record without_graph(frz_record r)
{
  r.replay = 0;
  r.graph_id = 0;
  r.graph_op = r.graph_ops = 0;
  return r;
}

/* ---- a standard small dump and helpers ------------------------------------------- */

typedef struct {
  frz_process proc;
  frz_comm comms[3];
  frz_record *recs;
  uint64_t nrecs;
  uint8_t *buf;
  size_t len;
} sample;

/* Build and encode a dump with `nrecs` records and 3 comms. */
static void sample_make(sample *s, uint64_t nrecs, int level)
{
  rng_state = 0x9E3779B97F4A7C15ull ^ nrecs;
  fill_process(&s->proc);
  for (int i = 0; i < 3; i++)
    fill_comm(&s->comms[i], i);
  s->nrecs = nrecs;
  s->recs = make_records(nrecs);
  frz_error err;
  void *out = NULL;
  ck_assert_int_eq(frz_encode(&s->proc, s->comms, 3, s->recs, nrecs, level, &out, &s->len, &err),
                   FRZ_OK);
  ck_assert_int_eq(err.status, FRZ_OK);
  ck_assert_ptr_nonnull(out);
  s->buf = out;
}

static void sample_free(sample *s)
{
  free(s->recs);
  free(s->buf);
}

/* Decode and check that the result equals the sample's input. */
static void assert_decodes_to(const uint8_t *buf, size_t len, const sample *s)
{
  frz_dump d;
  frz_error err;
  frz_status st = frz_decode(buf, len, "t.frz", &d, &err);
  ck_assert_msg(st == FRZ_OK, "decode failed: %s", err.msg);
  assert_process_eq(&d.process, &s->proc);
  ck_assert_uint_eq(d.ncomms, 3);
  for (int i = 0; i < 3; i++)
    assert_comm_eq(&d.comms[i], &s->comms[i]);
  ck_assert_uint_eq(d.nrecords, s->nrecs);
  for (uint64_t i = 0; i < s->nrecs; i++)
    assert_record_eq(&d.records[i], &s->recs[i]);
  frz_dump_free(&d);
}

/* Decode, expecting status `want`; checks the message names the file and the
 * reported offset lies within the image; returns the reported offset. */
static uint64_t expect_error(const uint8_t *buf, size_t len, frz_status want)
{
  frz_dump d;
  frz_error err;
  memset(&err, 0, sizeof err);
  frz_status st = frz_decode(buf, len, "dumps/x.frz", &d, &err);
  ck_assert_msg(st == want, "status %s (want %s): %s", frz_status_name(st),
                frz_status_name(want), err.msg);
  ck_assert_int_eq(err.status, want);
  ck_assert_msg(strncmp(err.msg, "dumps/x.frz: at byte ", 21) == 0, "message: %s", err.msg);
  if (len)
    ck_assert_msg(err.offset < len, "offset %llu outside %zu-byte file: %s",
                  (unsigned long long)err.offset, len, err.msg);
  ck_assert_ptr_null(d.comms);
  ck_assert_ptr_null(d.records);
  ck_assert_uint_eq(d.nrecords, 0);
  return err.offset;
}

/* ---- the test's own reader/writer of frz.md's layout ------------------------------- */

static void tput16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); }
static void tput32(uint8_t *p, uint32_t v) { for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> 8 * i); }
static void tput64(uint8_t *p, uint64_t v) { for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> 8 * i); }
static uint16_t tget16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }

static uint32_t tget32(const uint8_t *p)
{
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t tget64(const uint8_t *p) { return tget32(p) | (uint64_t)tget32(p + 4) << 32; }

typedef struct {
  uint32_t type, version, item_size;
  uint64_t count;
  uint8_t *raw;
  size_t raw_len;
} tsec;

typedef struct {
  uint16_t major, minor;
  uint32_t flags;
  uint32_t header_extra, entry_extra;
  size_t trailing;
  unsigned n;
  tsec secs[8];
} tfile;

/* Parse a valid v1 file image into sections of raw (uncompressed) items. */
static void t_parse(const uint8_t *buf, size_t len, tfile *f)
{
  memset(f, 0, sizeof *f);
  ck_assert_uint_ge(len, FRZ_HEADER_SIZE);
  ck_assert_mem_eq(buf, FRZ_MAGIC, FRZ_MAGIC_LEN);
  f->major = tget16(buf + 8);
  f->minor = tget16(buf + 10);
  uint32_t hsize = tget32(buf + 12), esize = tget32(buf + 20);
  f->n = tget32(buf + 16);
  f->flags = tget32(buf + 24);
  ck_assert_uint_le(f->n, 8);
  for (unsigned i = 0; i < f->n; i++) {
    const uint8_t *e = buf + hsize + i * esize;
    tsec *s = &f->secs[i];
    s->type = tget32(e);
    s->version = tget32(e + 4);
    uint64_t off = tget64(e + 8), stored = tget64(e + 16);
    s->raw_len = tget64(e + 24);
    s->count = tget64(e + 32);
    s->item_size = tget32(e + 40);
    ck_assert_uint_le(off + stored, len);
    s->raw = malloc(s->raw_len ? s->raw_len : 1);
    size_t got = ZSTD_decompress(s->raw, s->raw_len, buf + off, stored);
    ck_assert(!ZSTD_isError(got));
    ck_assert_uint_eq(got, s->raw_len);
  }
}

/* Lay out a file from `f` per frz.md: header (+extra), table (+extra per
 * entry), header CRC, one zstd frame per section, optional trailing bytes. */
static uint8_t *t_build(const tfile *f, size_t *len)
{
  size_t hsize = FRZ_HEADER_SIZE + f->header_extra, esize = FRZ_SECTION_ENTRY_SIZE + f->entry_extra;
  size_t table_end = hsize + f->n * esize, cap = table_end + 4 + f->trailing;
  for (unsigned i = 0; i < f->n; i++)
    cap += ZSTD_compressBound(f->secs[i].raw_len);
  uint8_t *b = calloc(1, cap);
  ck_assert_ptr_nonnull(b);
  memcpy(b, FRZ_MAGIC, FRZ_MAGIC_LEN);
  tput16(b + 8, f->major);
  tput16(b + 10, f->minor);
  tput32(b + 12, (uint32_t)hsize);
  tput32(b + 16, f->n);
  tput32(b + 20, (uint32_t)esize);
  tput32(b + 24, f->flags);
  memset(b + FRZ_HEADER_SIZE, 0xAB, f->header_extra);
  size_t pos = table_end + 4;
  for (unsigned i = 0; i < f->n; i++) {
    const tsec *s = &f->secs[i];
    size_t n = ZSTD_compress(b + pos, cap - pos, s->raw, s->raw_len, 1);
    ck_assert(!ZSTD_isError(n));
    uint8_t *e = b + hsize + i * esize;
    tput32(e, s->type);
    tput32(e + 4, s->version);
    tput64(e + 8, pos);
    tput64(e + 16, n);
    tput64(e + 24, s->raw_len);
    tput64(e + 32, s->count);
    tput32(e + 40, s->item_size);
    tput32(e + 44, frz_crc32(0, b + pos, n));
    memset(e + FRZ_SECTION_ENTRY_SIZE, 0xCD, f->entry_extra);
    pos += n;
  }
  tput32(b + table_end, frz_crc32(0, b, table_end));
  memset(b + pos, 0xEE, f->trailing);
  *len = pos + f->trailing;
  return b;
}

static void t_free(tfile *f)
{
  for (unsigned i = 0; i < f->n; i++)
    free(f->secs[i].raw);
}

/* Append `extra` junk bytes to every item of a section (a newer minor's
 * larger items). */
static void t_widen(tsec *s, uint32_t extra)
{
  uint32_t nsize = s->item_size + extra;
  uint8_t *raw = malloc(s->count * nsize + 1);
  for (uint64_t i = 0; i < s->count; i++) {
    memcpy(raw + i * nsize, s->raw + i * s->item_size, s->item_size);
    memset(raw + i * nsize + s->item_size, 0x5A, extra);
  }
  free(s->raw);
  s->raw = raw;
  s->item_size = nsize;
  s->raw_len = s->count * nsize;
}

/* Insert a section of unknown type at index `at`. */
static void t_insert_unknown(tfile *f, unsigned at, uint32_t type)
{
  ck_assert_uint_lt(f->n, 8);
  memmove(&f->secs[at + 1], &f->secs[at], (f->n - at) * sizeof f->secs[0]);
  tsec *s = &f->secs[at];
  s->type = type;
  s->version = 7;
  s->item_size = 16;
  s->count = 4;
  s->raw_len = 64;
  s->raw = malloc(64);
  for (int i = 0; i < 64; i++)
    s->raw[i] = (uint8_t)(i * 3);
  f->n++;
}

/* Overwrite a u32/u64 of section entry `idx` of a v1-layout image and
 * recompute the header CRC so only the patched meaning is wrong. */
static void patch_entry32(uint8_t *b, unsigned idx, unsigned field, uint32_t v)
{
  tput32(b + FRZ_HEADER_SIZE + idx * FRZ_SECTION_ENTRY_SIZE + field, v);
}

static void patch_entry64(uint8_t *b, unsigned idx, unsigned field, uint64_t v)
{
  tput64(b + FRZ_HEADER_SIZE + idx * FRZ_SECTION_ENTRY_SIZE + field, v);
}

static void fix_header_crc(uint8_t *b)
{
  size_t table_end = tget32(b + 12) + (size_t)tget32(b + 16) * tget32(b + 20);
  tput32(b + table_end, frz_crc32(0, b, table_end));
}

/* ---- temporary directories ----------------------------------------------------------- */

static void make_tmpdir(char *dir, size_t size)
{
  const char *base = getenv("TMPDIR");
  snprintf(dir, size, "%s/check_frz.XXXXXX", base && *base ? base : "/tmp");
  ck_assert_ptr_nonnull(mkdtemp(dir));
}

/* Number of entries in dir other than . and ..; the first one's name goes
 * into first (when not NULL). */
static int count_entries(const char *dir, char *first, size_t size)
{
  DIR *d = opendir(dir);
  ck_assert_ptr_nonnull(d);
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
      continue;
    if (n++ == 0 && first)
      snprintf(first, size, "%s", e->d_name);
  }
  closedir(d);
  return n;
}

static void remove_tmpdir(const char *dir)
{
  DIR *d = opendir(dir);
  if (!d)
    return;
  struct dirent *e;
  char p[PATH_MAX];
  while ((e = readdir(d))) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
      continue;
    snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
    unlink(p);
  }
  closedir(d);
  rmdir(dir);
}

static void write_plain(const char *path, const void *buf, size_t len)
{
  FILE *f = fopen(path, "wb");
  ck_assert_ptr_nonnull(f);
  ck_assert_uint_eq(fwrite(buf, 1, len, f), len);
  ck_assert_int_eq(fclose(f), 0);
}

static size_t read_plain(const char *path, char *buf, size_t size)
{
  FILE *f = fopen(path, "rb");
  ck_assert_ptr_nonnull(f);
  size_t n = fread(buf, 1, size, f);
  fclose(f);
  return n;
}

/* ---- tests: CRC ------------------------------------------------------------------------- */

START_TEST(test_crc32)
{
  ck_assert_uint_eq(frz_crc32(0, "123456789", 9), 0xCBF43926u);
  ck_assert_uint_eq(frz_crc32(0, "", 0), 0);
  ck_assert_uint_eq(frz_crc32(0, "The quick brown fox jumps over the lazy dog", 43), 0x414FA339u);
  uint32_t part = frz_crc32(0, "12345", 5);
  ck_assert_uint_eq(frz_crc32(part, "6789", 4), 0xCBF43926u);
}
END_TEST

/* ---- tests: round trips -------------------------------------------------------------------- */

START_TEST(test_roundtrip_every_field)
{
  sample s;
  sample_make(&s, 5000, 0);
  assert_decodes_to(s.buf, s.len, &s);
  frz_dump d;
  frz_error err;
  ck_assert_int_eq(frz_decode(s.buf, s.len, NULL, &d, &err), FRZ_OK);
  ck_assert_uint_eq(d.version_major, FRZ_VERSION_MAJOR);
  ck_assert_uint_eq(d.version_minor, FRZ_VERSION_MINOR);
  ck_assert_uint_eq(d.unknown_sections, 0);
  frz_dump_free(&d);
  ck_assert_ptr_null(d.records);
  sample_free(&s);
}
END_TEST

START_TEST(test_roundtrip_levels)
{
  static const int levels[] = {1, 3, 9, 19};
  for (unsigned i = 0; i < sizeof levels / sizeof levels[0]; i++) {
    sample s;
    sample_make(&s, 300, levels[i]);
    assert_decodes_to(s.buf, s.len, &s);
    sample_free(&s);
  }
}
END_TEST

START_TEST(test_compresses_repetitive_records)
{
  frz_process p;
  fill_process(&p);
  frz_record *r = calloc(4000, sizeof *r);
  for (int i = 0; i < 4000; i++) {
    r[i].id = (uint64_t)i;
    r[i].seq = (uint64_t)i;
    r[i].op = FRZ_OP_AllReduce;
    r[i].state = FRZ_STATE_COMPLETED;
  }
  void *out;
  size_t len;
  ck_assert_int_eq(frz_encode(&p, NULL, 0, r, 4000, 0, &out, &len, NULL), FRZ_OK);
  ck_assert_uint_lt(len, 4000 * FRZ_RECORD_ITEM_SIZE / 10);
  frz_dump d;
  ck_assert_int_eq(frz_decode(out, len, NULL, &d, NULL), FRZ_OK);
  ck_assert_uint_eq(d.nrecords, 4000);
  ck_assert_uint_eq(d.records[3999].seq, 3999);
  frz_dump_free(&d);
  free(out);
  free(r);
}
END_TEST

START_TEST(test_empty_record_set)
{
  frz_process p;
  fill_process(&p);
  void *out = NULL;
  size_t len = 0;
  frz_error err;
  ck_assert_int_eq(frz_encode(&p, NULL, 0, NULL, 0, 0, &out, &len, &err), FRZ_OK);
  frz_dump d;
  ck_assert_int_eq(frz_decode(out, len, "e.frz", &d, &err), FRZ_OK);
  assert_process_eq(&d.process, &p);
  ck_assert_uint_eq(d.ncomms, 0);
  ck_assert_ptr_null(d.comms);
  ck_assert_uint_eq(d.nrecords, 0);
  ck_assert_ptr_null(d.records);
  frz_dump_free(&d);
  free(out);
}
END_TEST

START_TEST(test_strings_forced_nul)
{
  sample s;
  sample_make(&s, 2, 0);
  free(s.buf);
  memset(s.proc.host, 'h', sizeof s.proc.host); /* no NUL at all */
  memset(s.proc.trigger_text, 't', sizeof s.proc.trigger_text);
  memset(s.proc.job_id, 'X', sizeof s.proc.job_id);
  memcpy(s.proc.job_id, "job\0", 4); /* garbage after the NUL */
  void *out;
  ck_assert_int_eq(frz_encode(&s.proc, s.comms, 3, s.recs, 2, 0, &out, &s.len, NULL), FRZ_OK);
  s.buf = out;
  /* On disk: the fields are NUL-padded. */
  tfile f;
  t_parse(s.buf, s.len, &f);
  ck_assert_uint_eq(f.secs[0].raw[16 + FRZ_HOST_MAX - 1], 0);
  for (int i = 3; i < FRZ_JOB_MAX; i++)
    ck_assert_uint_eq(f.secs[0].raw[80 + i], 0);
  t_free(&f);
  frz_dump d;
  ck_assert_int_eq(frz_decode(s.buf, s.len, NULL, &d, NULL), FRZ_OK);
  ck_assert_uint_eq(strlen(d.process.host), FRZ_HOST_MAX - 1);
  ck_assert_uint_eq(strlen(d.process.trigger_text), FRZ_TEXT_MAX - 1);
  ck_assert_str_eq(d.process.job_id, "job");
  frz_dump_free(&d);
  /* A hand-built file whose strings lack a NUL must still decode terminated. */
  t_parse(s.buf, s.len, &f);
  memset(f.secs[0].raw + 16, 'Q', FRZ_HOST_MAX);
  size_t len;
  uint8_t *b = t_build(&f, &len);
  ck_assert_int_eq(frz_decode(b, len, NULL, &d, NULL), FRZ_OK);
  ck_assert_uint_eq(strlen(d.process.host), FRZ_HOST_MAX - 1);
  ck_assert_uint_eq((unsigned char)d.process.host[0], 'Q');
  frz_dump_free(&d);
  free(b);
  t_free(&f);
  sample_free(&s);
}
END_TEST

START_TEST(test_records_sorted_by_id)
{
  frz_process p;
  fill_process(&p);
  rng_state = 42;
  frz_record r[64];
  for (int i = 0; i < 64; i++)
    fill_record(&r[i], (uint64_t)((i * 37) % 64)); /* a permutation of 0..63 */
  void *out;
  size_t len;
  ck_assert_int_eq(frz_encode(&p, NULL, 0, r, 64, 0, &out, &len, NULL), FRZ_OK);
  frz_dump d;
  ck_assert_int_eq(frz_decode(out, len, NULL, &d, NULL), FRZ_OK);
  for (int i = 0; i < 64; i++) {
    ck_assert_uint_eq(d.records[i].id, (uint64_t)i);
    for (int k = 0; k < 64; k++)
      if (r[k].id == (uint64_t)i)
        assert_record_eq(&d.records[i], &r[k]);
  }
  frz_dump_free(&d);
  free(out);
}
END_TEST

/* The optional CALLSITES and BACKTRACES sections (1.1): written sorted, read
 * back, looked up; a dump without them has none; truncation still detected. */
/* Thread stacks and Python frames (1.2): the items at the offsets of
 * frz.md, read back with depth clamped and strings terminated. */
START_TEST(test_stacks_roundtrip)
{
  frz_process p;
  fill_process(&p);
  frz_stack st[2];
  memset(st, 0, sizeof st);
  st[0].tid = 4242;
  st[0].status = FRZ_STACK_OK;
  st[0].flags = FRZ_TF_MAIN | FRZ_TF_IN_NCCL;
  st[0].record_id = 77;
  st[0].thread_handle = 0x7f00aa00bb00ull;
  strcpy(st[0].name, "python3");
  st[0].depth = 3;
  for (int i = 0; i < 3; i++) st[0].frames[i] = 0x401000u + (uint64_t)i;
  st[1].tid = 4243;
  st[1].status = FRZ_STACK_MASKED;
  st[1].depth = FRZ_STACK_MAX + 9; /* clamped */
  for (int i = 0; i < FRZ_STACK_MAX; i++) st[1].frames[i] = 9000 + (uint64_t)i;
  memset(st[1].name, 'n', sizeof st[1].name); /* no NUL */
  frz_pyframe py[1];
  memset(py, 0, sizeof py);
  py[0].thread_handle = st[0].thread_handle;
  py[0].tid = 4242;
  py[0].index = 0;
  py[0].line = 42;
  strcpy(py[0].func, "load_batch");
  strcpy(py[0].file, "/app/train.py");
  frz_extras x = {0};
  x.stacks = st;
  x.nstacks = 2;
  x.pyframes = py;
  x.npyframes = 1;
  void *out;
  size_t len;
  ck_assert_int_eq(frz_encode_ex(&p, NULL, 0, NULL, 0, &x, 0, &out, &len, NULL), FRZ_OK);
  tfile f;
  t_parse(out, len, &f);
  ck_assert_uint_eq(f.minor, FRZ_VERSION_MINOR);
  ck_assert_uint_eq(f.n, 5);
  ck_assert_uint_eq(f.secs[3].type, 7);
  ck_assert_uint_eq(f.secs[3].item_size, 432);
  ck_assert_uint_eq(f.secs[4].type, 10);
  ck_assert_uint_eq(f.secs[4].item_size, 256);
  const uint8_t *s0 = f.secs[3].raw, *s1 = s0 + 432, *q = f.secs[4].raw;
  ck_assert_uint_eq(tget32(s0), 4242);
  ck_assert_uint_eq(tget32(s0 + 8), FRZ_TF_MAIN | FRZ_TF_IN_NCCL);
  ck_assert_uint_eq(tget32(s0 + 12), 3);
  ck_assert_uint_eq(tget64(s0 + 16), 77);
  ck_assert_uint_eq(tget64(s0 + 24), 0x7f00aa00bb00ull);
  ck_assert_str_eq((const char *)s0 + 32, "python3");
  ck_assert_uint_eq(tget64(s0 + 48 + 16), 0x401002u);
  ck_assert_uint_eq(tget64(s0 + 48 + 24), 0); /* unused frames zero */
  ck_assert_uint_eq(tget32(s1 + 4), FRZ_STACK_MASKED);
  ck_assert_uint_eq(tget32(s1 + 12), FRZ_STACK_MAX);
  ck_assert_uint_eq(tget32(q + 16), 42);
  ck_assert_str_eq((const char *)q + 24, "load_batch");
  ck_assert_str_eq((const char *)q + 96, "/app/train.py");
  t_free(&f);
  frz_dump d;
  ck_assert_int_eq(frz_decode(out, len, NULL, &d, NULL), FRZ_OK);
  ck_assert_uint_eq(d.nstacks, 2);
  ck_assert_uint_eq(d.stacks[0].depth, 3);
  ck_assert_uint_eq(d.stacks[0].frames[2], 0x401002u);
  ck_assert_uint_eq(d.stacks[1].depth, FRZ_STACK_MAX);
  ck_assert_uint_eq(strlen(d.stacks[1].name), FRZ_THREAD_NAME_MAX - 1);
  ck_assert_uint_eq(d.npyframes, 1);
  ck_assert_uint_eq(d.pyframes[0].thread_handle, d.stacks[0].thread_handle);
  ck_assert_str_eq(d.pyframes[0].func, "load_batch");
  ck_assert_str_eq(frz_stack_status_name(FRZ_STACK_MASKED), "masked");
  frz_dump_free(&d);
  free(out);
}
END_TEST

START_TEST(test_callsites_roundtrip)
{
  frz_process p;
  fill_process(&p);
  rng_state = 7;
  frz_record r[3];
  for (int i = 0; i < 3; i++) {
    fill_record(&r[i], (uint64_t)i);
    r[i].call_site = 0x7f0000001000ull + (uint64_t)(2 - i) * 0x40;
  }
  frz_callsite cs[3];
  memset(cs, 0, sizeof cs);
  for (int i = 0; i < 3; i++) {
    cs[i].address = r[i].call_site;
    cs[i].offset = 0x10 + (uint64_t)i;
    snprintf(cs[i].module, sizeof cs[i].module, "libtorch_cuda.so");
    snprintf(cs[i].symbol, sizeof cs[i].symbol, "fn_%d", i);
  }
  memset(cs[2].symbol, 'x', sizeof cs[2].symbol); /* no NUL: must come back terminated */
  void *out;
  size_t len;
  frz_backtrace bt[2];
  memset(bt, 0, sizeof bt);
  bt[0].record_id = 2; /* given out of order: read back sorted */
  bt[0].depth = 2;
  bt[0].frames[0] = r[2].call_site;
  bt[0].frames[1] = 0x99;
  bt[1].record_id = 0;
  bt[1].depth = FRZ_BACKTRACE_MAX + 5; /* clamped */
  for (int i = 0; i < FRZ_BACKTRACE_MAX; i++) bt[1].frames[i] = 100 + (uint64_t)i;
  frz_extras x = {.callsites = cs, .ncallsites = 3, .backtraces = bt, .nbacktraces = 2};
  ck_assert_int_eq(frz_encode_ex(&p, NULL, 0, r, 3, &x, 0, &out, &len, NULL), FRZ_OK);
  ck_assert_uint_eq(tget32((const uint8_t *)out + 16), 5); /* five sections */
  frz_dump d;
  ck_assert_int_eq(frz_decode(out, len, NULL, &d, NULL), FRZ_OK);
  ck_assert_uint_eq(d.ncallsites, 3);
  ck_assert_uint_eq(d.unknown_sections, 0);
  for (uint32_t i = 1; i < d.ncallsites; i++)
    ck_assert_uint_lt(d.callsites[i - 1].address, d.callsites[i].address);
  const frz_callsite *f = frz_find_callsite(&d, r[1].call_site);
  ck_assert_ptr_nonnull(f);
  ck_assert_str_eq(f->symbol, "fn_1");
  ck_assert_str_eq(f->module, "libtorch_cuda.so");
  ck_assert_uint_eq(f->offset, 0x11);
  f = frz_find_callsite(&d, r[2].call_site);
  ck_assert_uint_eq(strlen(f->symbol), FRZ_SYMBOL_MAX - 1);
  ck_assert_ptr_null(frz_find_callsite(&d, 0x1234));
  ck_assert_uint_eq(d.nbacktraces, 2);
  const frz_backtrace *b = frz_find_backtrace(&d, 2);
  ck_assert_ptr_nonnull(b);
  ck_assert_uint_eq(b->depth, 2);
  ck_assert_uint_eq(b->frames[0], r[2].call_site);
  ck_assert_uint_eq(b->frames[1], 0x99);
  ck_assert_uint_eq(b->frames[2], 0);
  b = frz_find_backtrace(&d, 0);
  ck_assert_uint_eq(b->depth, FRZ_BACKTRACE_MAX);
  ck_assert_uint_eq(b->frames[FRZ_BACKTRACE_MAX - 1], 100 + FRZ_BACKTRACE_MAX - 1);
  ck_assert_ptr_null(frz_find_backtrace(&d, 1));
  frz_dump_free(&d);
  for (size_t cut = 0; cut < len; cut += 7) {
    frz_error err;
    ck_assert_int_ne(frz_decode(out, cut, "cut", &d, &err), FRZ_OK);
    ck_assert_uint_le(err.offset, len);
  }
  free(out);
  ck_assert_int_eq(frz_encode(&p, NULL, 0, r, 3, 0, &out, &len, NULL), FRZ_OK);
  ck_assert_int_eq(frz_decode(out, len, NULL, &d, NULL), FRZ_OK);
  ck_assert_uint_eq(d.ncallsites, 0);
  ck_assert_ptr_null(frz_find_callsite(&d, r[0].call_site));
  frz_dump_free(&d);
  free(out);
}
END_TEST

/* ---- tests: the byte layout (frz.md) -------------------------------------------------------- */

START_TEST(test_layout_matches_spec)
{
  sample s;
  sample_make(&s, 10, 0);
  const uint8_t *b = s.buf;
  ck_assert_mem_eq(b, "\x89" "FRZ\r\n\x1a\n", 8);
  ck_assert_uint_eq(tget16(b + 8), 1);
  ck_assert_uint_eq(tget16(b + 10), FRZ_VERSION_MINOR);
  ck_assert_uint_eq(tget32(b + 12), 32);
  ck_assert_uint_eq(tget32(b + 16), 3);
  ck_assert_uint_eq(tget32(b + 20), 48);
  ck_assert_uint_eq(tget32(b + 24), 0);
  ck_assert_uint_eq(tget32(b + 28), 0);
  ck_assert_uint_eq(tget32(b + 176), frz_crc32(0, b, 176));
  static const uint32_t types[3] = {1, 2, 3}, sizes[3] = {352, 104, 128}, versions[3] = {1, 1, 4};
  const uint64_t counts[3] = {1, 3, 10};
  uint64_t pos = 180;
  for (int i = 0; i < 3; i++) {
    const uint8_t *e = b + 32 + 48 * i;
    ck_assert_uint_eq(tget32(e), types[i]);
    ck_assert_uint_eq(tget32(e + 4), versions[i]);
    ck_assert_uint_eq(tget64(e + 8), pos);
    uint64_t stored = tget64(e + 16);
    ck_assert_uint_eq(tget64(e + 24), counts[i] * sizes[i]);
    ck_assert_uint_eq(tget64(e + 32), counts[i]);
    ck_assert_uint_eq(tget32(e + 40), sizes[i]);
    ck_assert_uint_eq(tget32(e + 44), frz_crc32(0, b + pos, stored));
    /* one zstd frame declaring its size, with a content checksum (FHD bit 2) */
    ck_assert_uint_eq(tget32(b + pos), 0xFD2FB528u);
    ck_assert_uint_eq(ZSTD_getFrameContentSize(b + pos, stored), counts[i] * sizes[i]);
    ck_assert_uint_eq(ZSTD_findFrameCompressedSize(b + pos, stored), stored);
    ck_assert_uint_ne(b[pos + 4] & 0x04, 0);
    pos += stored;
  }
  ck_assert_uint_eq(pos, s.len);

  tfile f;
  t_parse(s.buf, s.len, &f);
  const uint8_t *p = f.secs[0].raw;
  ck_assert_uint_eq(tget32(p + 0), 1234);
  ck_assert_uint_eq(tget32(p + 8), 0xFFFFFFFFu); /* local_rank -1 */
  ck_assert_uint_eq(tget32(p + 12), 0xDEADBEEFu);
  ck_assert_str_eq((const char *)p + 16, s.proc.host);
  ck_assert_str_eq((const char *)p + 80, s.proc.job_id);
  ck_assert_uint_eq(tget32(p + 144), 22809);
  ck_assert_uint_eq(tget64(p + 152), s.proc.anchor_realtime_ns);
  ck_assert_uint_eq(tget32(p + 168), FRZ_TRIGGER_TIMEOUT);
  ck_assert_uint_eq(tget64(p + 184), 0x0102030405060708ull);
  ck_assert_uint_eq(tget32(p + 192), 0x80000000u);
  ck_assert_uint_eq(tget32(p + 216), 16384);
  ck_assert_str_eq((const char *)p + 224, s.proc.trigger_text);
  const uint8_t *c = f.secs[1].raw + 104; /* comm 1 */
  ck_assert_uint_eq(tget64(c + 0), s.comms[1].comm_id);
  ck_assert_uint_eq(tget32(c + 32), 16);
  ck_assert_uint_eq(tget32(c + 36), 0);
  ck_assert_uint_eq(tget64(c + 88), (uint64_t)s.comms[1].last_completed_seq);
  ck_assert_uint_eq(tget64(c + 96), s.comms[1].dropped_records);
  const uint8_t *r = f.secs[2].raw + 128 * 4; /* record 4 */
  ck_assert_uint_eq(tget64(r + 0), 1004);
  ck_assert_uint_eq(tget64(r + 72), s.recs[4].t_complete_ns);
  ck_assert_uint_eq(tget32(r + 84), (uint32_t)s.recs[4].peer);
  ck_assert_uint_eq(tget16(r + 88), s.recs[4].op);
  ck_assert_uint_eq(r[90], s.recs[4].kind);
  ck_assert_uint_eq(r[94], s.recs[4].state);
  ck_assert_uint_eq(tget32(r + 96), s.recs[4].flags);
  ck_assert_uint_eq(tget32(r + 100), (uint32_t)s.recs[4].result);
  ck_assert_uint_eq(tget64(r + 104), s.recs[4].nccl_seq); /* 1.2: RECORDS version 2 */
  ck_assert_uint_eq(r[112], s.recs[4].algo);
  ck_assert_uint_eq(r[113], s.recs[4].proto);
  ck_assert_uint_eq(r[114], s.recs[4].nchannels);
  ck_assert_uint_eq(r[115], s.recs[4].cuda_device); /* 1.3: RECORDS version 3 */
  ck_assert_uint_eq(tget32(r + 116), (uint32_t)s.recs[4].comm_rank);
  ck_assert_uint_eq(r[95], s.recs[4].graph_ops); /* 1.5: RECORDS version 4 */
  ck_assert_uint_eq(tget32(r + 120), s.recs[4].replay);
  ck_assert_uint_eq(tget16(r + 124), s.recs[4].graph_id);
  ck_assert_uint_eq(tget16(r + 126), s.recs[4].graph_op);
  t_free(&f);
  sample_free(&s);
}
END_TEST

START_TEST(test_independent_builder_decodes)
{
  sample s;
  sample_make(&s, 50, 0);
  tfile f;
  t_parse(s.buf, s.len, &f);
  size_t len;
  uint8_t *b = t_build(&f, &len); /* frames without content checksum */
  assert_decodes_to(b, len, &s);
  free(b);
  t_free(&f);
  sample_free(&s);
}
END_TEST

/* ---- tests: versions --------------------------------------------------------------------------- */

START_TEST(test_bad_magic)
{
  sample s;
  sample_make(&s, 3, 0);
  uint8_t *b = malloc(s.len);
  memcpy(b, s.buf, s.len);
  memcpy(b, "FRZDUMP\0", 8);
  expect_error(b, s.len, FRZ_E_MAGIC);
  memcpy(b, s.buf, s.len);
  b[4] = '\n'; /* CRLF -> LF damage by a text-mode transfer */
  expect_error(b, s.len, FRZ_E_MAGIC);
  expect_error((const uint8_t *)"hello world, not a dump at all, no sir", 38, FRZ_E_MAGIC);
  expect_error((const uint8_t *)"PK", 2, FRZ_E_MAGIC);
  free(b);
  sample_free(&s);
}
END_TEST

START_TEST(test_newer_major_rejected)
{
  sample s;
  sample_make(&s, 3, 0);
  static const uint16_t majors[] = {FRZ_VERSION_MAJOR + 1, 0x7FFF, 0xFFFF};
  for (unsigned i = 0; i < 3; i++) {
    uint8_t *b = malloc(s.len);
    memcpy(b, s.buf, s.len);
    tput16(b + 8, majors[i]);
    tput16(b + 10, 3);
    memset(b + 12, 0xFF, 20); /* a future header need not look like ours */
    frz_dump d;
    frz_error err;
    ck_assert_int_eq(frz_decode(b, s.len, "new.frz", &d, &err), FRZ_E_VERSION);
    ck_assert_uint_eq(err.offset, 8);
    char want[64];
    snprintf(want, sizeof want, "format version %u.3 is newer", majors[i]);
    ck_assert_msg(strstr(err.msg, want) != NULL, "message: %s", err.msg);
    ck_assert_msg(strncmp(err.msg, "new.frz: at byte 8: ", 20) == 0, "message: %s", err.msg);
    /* even a file cut right after the version is a version error */
    ck_assert_int_eq(frz_decode(b, 12, "new.frz", &d, &err), FRZ_E_VERSION);
    free(b);
  }
  uint8_t *b = malloc(s.len);
  memcpy(b, s.buf, s.len);
  tput16(b + 8, 0);
  fix_header_crc(b);
  expect_error(b, s.len, FRZ_E_CORRUPT); /* major 0 never existed */
  free(b);
  sample_free(&s);
}
END_TEST

START_TEST(test_minor_versions_accepted)
{
  sample s;
  sample_make(&s, 20, 0);
  unsigned minors[8], n = 0;
  for (unsigned m = 0; m <= FRZ_VERSION_MINOR; m++) /* older and current */
    minors[n++] = m;
  minors[n++] = FRZ_VERSION_MINOR + 1;
  minors[n++] = 0xFFFF;
  for (unsigned i = 0; i < n; i++) {
    uint8_t *b = malloc(s.len);
    memcpy(b, s.buf, s.len);
    tput16(b + 10, (uint16_t)minors[i]);
    fix_header_crc(b);
    assert_decodes_to(b, s.len, &s);
    frz_dump d;
    ck_assert_int_eq(frz_decode(b, s.len, NULL, &d, NULL), FRZ_OK);
    ck_assert_uint_eq(d.version_minor, minors[i]);
    frz_dump_free(&d);
    free(b);
  }
  sample_free(&s);
}
END_TEST

START_TEST(test_future_minor_layout)
{
  /* What a 1.1 writer may do: grow the header, the entries and every item,
   * raise section versions, set flags, add sections. */
  sample s;
  sample_make(&s, 200, 0);
  tfile f;
  t_parse(s.buf, s.len, &f);
  f.minor = 1;
  f.flags = 0x10;
  f.header_extra = 16;
  f.entry_extra = 8;
  t_widen(&f.secs[0], 40);
  t_widen(&f.secs[1], 24);
  t_widen(&f.secs[2], 16);
  for (unsigned i = 0; i < f.n; i++)
    f.secs[i].version++;
  t_insert_unknown(&f, 3, 0x7E);
  size_t len;
  uint8_t *b = t_build(&f, &len);
  assert_decodes_to(b, len, &s);
  frz_dump d;
  ck_assert_int_eq(frz_decode(b, len, NULL, &d, NULL), FRZ_OK);
  ck_assert_uint_eq(d.version_minor, 1);
  ck_assert_uint_eq(d.unknown_sections, 1);
  frz_dump_free(&d);
  free(b);
  t_free(&f);
  sample_free(&s);
}
END_TEST

/* A 1.1 file: RECORDS version 1, 104-byte items without NCCL's fields. */
START_TEST(test_records_v1_still_read)
{
  sample s;
  sample_make(&s, 20, 0);
  tfile f;
  t_parse(s.buf, s.len, &f);
  tsec *r = &f.secs[2];
  for (uint64_t i = 0; i < r->count; i++)
    memmove(r->raw + i * 104, r->raw + i * FRZ_RECORD_ITEM_SIZE_V4, 104);
  r->item_size = 104;
  r->raw_len = r->count * 104;
  r->version = 1;
  f.minor = 1;
  size_t len;
  uint8_t *b = t_build(&f, &len);
  frz_dump d;
  frz_error err;
  ck_assert_msg(frz_decode(b, len, "v11.frz", &d, &err) == FRZ_OK, "%s", err.msg);
  ck_assert_uint_eq(d.nrecords, 20);
  for (uint64_t i = 0; i < d.nrecords; i++) {
    ck_assert_uint_eq(d.records[i].id, s.recs[i].id);
    ck_assert_uint_eq(d.records[i].result, s.recs[i].result);
    ck_assert_uint_eq(d.records[i].nccl_seq, UINT64_MAX); /* unknown, not garbage */
    ck_assert_uint_eq(d.records[i].algo, FRZ_ALGO_UNKNOWN);
    ck_assert_uint_eq(d.records[i].proto, FRZ_PROTO_UNKNOWN);
    ck_assert_uint_eq(d.records[i].nchannels, 0);
    ck_assert_uint_eq(d.records[i].cuda_device, FRZ_CUDA_DEVICE_UNKNOWN);
    ck_assert_int_eq(d.records[i].comm_rank, -1);
    ck_assert_uint_eq(d.records[i].graph_id, 0);
    ck_assert_uint_eq(d.records[i].replay, 0);
  }
  frz_dump_free(&d);
  /* a version 1 item with extra bytes is not read as version 2 */
  t_widen(r, 16);
  free(b);
  b = t_build(&f, &len);
  ck_assert_int_eq(frz_decode(b, len, NULL, &d, NULL), FRZ_OK);
  ck_assert_uint_eq(d.records[0].nccl_seq, UINT64_MAX);
  frz_dump_free(&d);
  free(b);
  t_free(&f);
  sample_free(&s);
}
END_TEST

/* A 1.2 file: RECORDS version 2, whose bytes 115..119 were reserved.  A
 * reader takes cuda_device and comm_rank as unknown whatever they hold,
 * both from 120-byte items (read in place) and from larger ones. */
START_TEST(test_records_v2_reserved_unknown)
{
  sample s;
  sample_make(&s, 20, 0);
  tfile f;
  t_parse(s.buf, s.len, &f);
  tsec *r = &f.secs[2];
  ck_assert_uint_eq(r->version, FRZ_RECORDS_VERSION);
  r->version = 2;
  f.minor = 2;
  for (int wide = 0; wide < 2; wide++) {
    if (wide) t_widen(r, 8);
    int nonzero = 0;
    for (uint64_t i = 0; i < r->count; i++)
      nonzero |= r->raw[i * r->item_size + 115] | r->raw[i * r->item_size + 116];
    ck_assert_int_ne(nonzero, 0); /* the "reserved" bytes are not zero */
    size_t len;
    uint8_t *b = t_build(&f, &len);
    frz_dump d;
    frz_error err;
    ck_assert_msg(frz_decode(b, len, "v12.frz", &d, &err) == FRZ_OK, "%s", err.msg);
    ck_assert_uint_eq(d.nrecords, 20);
    for (uint64_t i = 0; i < d.nrecords; i++) {
      frz_record want = without_graph(s.recs[i]);
      want.cuda_device = FRZ_CUDA_DEVICE_UNKNOWN;
      want.comm_rank = -1;
      assert_record_eq(&d.records[i], &want); /* the version-2 fields are read */
    }
    frz_dump_free(&d);
    free(b);
  }
  /* version 3 in a larger item: read, without the graph fields of version 4 */
  r->version = 3;
  size_t len;
  uint8_t *b = t_build(&f, &len);
  frz_dump d;
  ck_assert_int_eq(frz_decode(b, len, NULL, &d, NULL), FRZ_OK);
  for (uint64_t i = 0; i < d.nrecords; i++) {
    frz_record want = without_graph(s.recs[i]);
    assert_record_eq(&d.records[i], &want);
  }
  frz_dump_free(&d);
  free(b);
  t_free(&f);
  sample_free(&s);
}
END_TEST

/* A 1.4 file: RECORDS version 3, 120-byte items without the CUDA graph
 * fields; everything else is read, the graph fields are 0 (none). */
START_TEST(test_records_v3_still_read)
{
  sample s;
  sample_make(&s, 20, 0);
  tfile f;
  t_parse(s.buf, s.len, &f);
  tsec *r = &f.secs[2];
  for (uint64_t i = 0; i < r->count; i++)
    memmove(r->raw + i * 120, r->raw + i * FRZ_RECORD_ITEM_SIZE_V4, 120);
  r->item_size = 120;
  r->raw_len = r->count * 120;
  r->version = 3;
  f.minor = 4;
  size_t len;
  uint8_t *b = t_build(&f, &len);
  frz_dump d;
  frz_error err;
  ck_assert_msg(frz_decode(b, len, "v14.frz", &d, &err) == FRZ_OK, "%s", err.msg);
  ck_assert_uint_eq(d.nrecords, 20);
  for (uint64_t i = 0; i < d.nrecords; i++) {
    frz_record want = without_graph(s.recs[i]);
    assert_record_eq(&d.records[i], &want);
  }
  frz_dump_free(&d);
  free(b);
  t_free(&f);
  sample_free(&s);
}
END_TEST

/* cuda_device and comm_rank (1.3) round trip at their limits. */
START_TEST(test_record_rank_device_limits)
{
  frz_process p;
  fill_process(&p);
  static const struct { uint8_t dev; int32_t rank; } v[] = {
      {FRZ_CUDA_DEVICE_UNKNOWN, -1}, {0, 0}, {7, 3}, {254, INT32_MAX}, {1, INT32_MIN}};
  frz_record r[5];
  for (int i = 0; i < 5; i++) {
    fill_record(&r[i], (uint64_t)i);
    r[i].cuda_device = v[i].dev;
    r[i].comm_rank = v[i].rank;
  }
  void *out;
  size_t len;
  frz_dump d;
  ck_assert_int_eq(frz_encode(&p, NULL, 0, r, 5, 0, &out, &len, NULL), FRZ_OK);
  ck_assert_int_eq(frz_decode(out, len, NULL, &d, NULL), FRZ_OK);
  ck_assert_uint_eq(d.nrecords, 5);
  for (int i = 0; i < 5; i++) {
    ck_assert_uint_eq(d.records[i].cuda_device, v[i].dev);
    ck_assert_int_eq(d.records[i].comm_rank, v[i].rank);
    assert_record_eq(&d.records[i], &r[i]);
  }
  frz_dump_free(&d);
  free(out);
}
END_TEST

/* PROXY (type 4) and KERNELCH (type 8) sections: layout and round trip. */
START_TEST(test_proxy_sections)
{
  sample s;
  sample_make(&s, 5, 0);
  frz_proxy px[3];
  frz_kernel_ch kc[2];
  for (int i = 0; i < 3; i++) {
    px[i] = (frz_proxy){.comm_id = rnd(), .seq = rnd(), .steps_posted = rnd(), .steps_done = rnd(),
                        .t_last_ns = rnd(), .peer = (int32_t)rnd(), .channel = (uint8_t)rnd(),
                        .dir = (uint8_t)(1 + i % 2), .kind = FRZ_KIND_COLL, .state = 20u + (uint32_t)i,
                        .ops_posted = (uint32_t)rnd(), .ops_done = (uint32_t)rnd(), .rank = i - 1};
  }
  for (int i = 0; i < 2; i++)
    kc[i] = (frz_kernel_ch){.comm_id = rnd(), .started_seq = (int64_t)rnd(), .stopped_seq = -1,
                            .t_last_ns = rnd(), .channel = (uint32_t)i, .started = 7, .stopped = 6,
                            .rank = 3};
  frz_extras x = {.proxy = px, .nproxy = 3, .kernel_ch = kc, .nkernel_ch = 2};
  void *out;
  size_t len;
  frz_error err;
  ck_assert_int_eq(frz_encode_ex(&s.proc, s.comms, 3, s.recs, 5, &x, 0, &out, &len, &err), FRZ_OK);
  tfile f;
  t_parse(out, len, &f);
  ck_assert_uint_eq(f.n, 5);
  ck_assert_uint_eq(f.secs[3].type, 4);
  ck_assert_uint_eq(f.secs[3].item_size, 64);
  ck_assert_uint_eq(f.secs[4].type, 8);
  ck_assert_uint_eq(f.secs[4].item_size, 48);
  const uint8_t *p = f.secs[3].raw + 64; /* proxy item 1 */
  ck_assert_uint_eq(tget64(p), px[1].comm_id);
  ck_assert_uint_eq(tget64(p + 8), px[1].seq);
  ck_assert_uint_eq(tget64(p + 16), px[1].steps_posted);
  ck_assert_uint_eq(tget64(p + 24), px[1].steps_done);
  ck_assert_uint_eq(tget64(p + 32), px[1].t_last_ns);
  ck_assert_uint_eq(tget32(p + 40), (uint32_t)px[1].peer);
  ck_assert_uint_eq(p[44], px[1].channel);
  ck_assert_uint_eq(p[45], FRZ_DIR_RECV);
  ck_assert_uint_eq(p[46], FRZ_KIND_COLL);
  ck_assert_uint_eq(tget32(p + 48), 21);
  ck_assert_uint_eq(tget32(p + 52), px[1].ops_posted);
  ck_assert_uint_eq(tget32(p + 56), px[1].ops_done);
  ck_assert_uint_eq(tget32(p + 60), 0);
  const uint8_t *k = f.secs[4].raw + 48;
  ck_assert_uint_eq(tget64(k), kc[1].comm_id);
  ck_assert_uint_eq(tget64(k + 16), UINT64_MAX); /* stopped_seq -1 */
  ck_assert_uint_eq(tget32(k + 32), 1);
  ck_assert_uint_eq(tget32(k + 44), 3);
  frz_dump d;
  ck_assert_int_eq(frz_decode(out, len, NULL, &d, &err), FRZ_OK);
  ck_assert_uint_eq(d.nproxy, 3);
  ck_assert_uint_eq(d.nkernel_ch, 2);
  ck_assert_mem_eq(&d.proxy[2].comm_id, &px[2].comm_id, 8);
  ck_assert_int_eq(d.proxy[0].rank, -1);
  ck_assert_uint_eq(d.proxy[2].state, 22);
  ck_assert_uint_eq(d.proxy[2].dir, FRZ_DIR_SEND);
  ck_assert_int_eq(d.kernel_ch[0].stopped_seq, -1);
  ck_assert_int_eq(d.kernel_ch[1].started_seq, kc[1].started_seq);
  ck_assert_uint_eq(d.unknown_sections, 0);
  frz_dump_free(&d);
  t_free(&f);
  free(out);
  sample_free(&s);
}
END_TEST

/* ---- tests: sections ----------------------------------------------------------------------------- */

START_TEST(test_unknown_sections_skipped)
{
  sample s;
  sample_make(&s, 100, 0);
  tfile f;
  t_parse(s.buf, s.len, &f);
  t_insert_unknown(&f, 0, 0x7F000001u);
  t_insert_unknown(&f, 2, 11); /* 5..7 and 10 are known since 1.1 and 1.2 */
  t_insert_unknown(&f, 5, 0xFFFFFFFFu);
  size_t len;
  uint8_t *b = t_build(&f, &len);
  assert_decodes_to(b, len, &s);
  frz_dump d;
  ck_assert_int_eq(frz_decode(b, len, NULL, &d, NULL), FRZ_OK);
  ck_assert_uint_eq(d.unknown_sections, 3);
  frz_dump_free(&d);
  /* an unknown section's bytes are still covered by its CRC */
  uint64_t off = tget64(b + FRZ_HEADER_SIZE + 8);
  b[off + 3] ^= 0x20;
  ck_assert_uint_eq(expect_error(b, len, FRZ_E_CORRUPT), off);
  free(b);
  t_free(&f);
  sample_free(&s);
}
END_TEST

/* A table entry whose item count is false (the frame holds 30 items, the
 * entry claims nearly 4 GiB of them) is corrupt, and is found so before a
 * buffer of the claimed size is allocated: under an address-space limit
 * the reader said "out of memory" (and fr-analyze gave up on every file). */
START_TEST(test_false_count_not_allocated)
{
  sample s;
  sample_make(&s, 30, 0);
#if !defined(__SANITIZE_ADDRESS__) /* ASan reserves terabytes of shadow memory */
  long pages = 0;
  FILE *statm = fopen("/proc/self/statm", "r");
  ck_assert_ptr_nonnull(statm);
  ck_assert_int_eq(fscanf(statm, "%ld", &pages), 1);
  fclose(statm);
  struct rlimit lim = {(rlim_t)pages * (rlim_t)sysconf(_SC_PAGESIZE) + (256u << 20), RLIM_INFINITY};
  lim.rlim_max = lim.rlim_cur;
  ck_assert_int_eq(setrlimit(RLIMIT_AS, &lim), 0); /* this test runs in its own process */
#endif
  static const struct { unsigned idx, item; } secs[] = {{1, FRZ_COMM_ITEM_SIZE}, {2, FRZ_RECORD_ITEM_SIZE_V4}};
  for (unsigned i = 0; i < 2; i++) {
    uint8_t *b = malloc(s.len);
    ck_assert_ptr_nonnull(b);
    memcpy(b, s.buf, s.len);
    uint64_t count = (UINT64_C(4) << 30) / secs[i].item;
    patch_entry64(b, secs[i].idx, 24, count * secs[i].item);
    patch_entry64(b, secs[i].idx, 32, count);
    fix_header_crc(b);
    frz_dump d;
    frz_error err;
    ck_assert_int_eq(frz_decode(b, s.len, "x.frz", &d, &err), FRZ_E_CORRUPT);
    ck_assert_msg(strstr(err.msg, "frame content size does not match") != NULL, "%s", err.msg);
    free(b);
  }
  sample_free(&s);
}
END_TEST

/* Build a file from f with one modification and expect `want`. */
static void expect_built_error(tfile *f, frz_status want)
{
  size_t len;
  uint8_t *b = t_build(f, &len);
  expect_error(b, len, want);
  free(b);
}

START_TEST(test_structural_errors)
{
  sample s;
  sample_make(&s, 30, 0);
  tfile f;

  /* items smaller than v1's are corrupt */
  t_parse(s.buf, s.len, &f);
  f.secs[2].item_size = 100;
  f.secs[2].raw_len = 30 * 100;
  expect_built_error(&f, FRZ_E_CORRUPT);
  t_free(&f);

  /* a missing required section */
  t_parse(s.buf, s.len, &f);
  free(f.secs[2].raw);
  f.n = 2;
  expect_built_error(&f, FRZ_E_CORRUPT);
  t_free(&f);

  /* a duplicated known section */
  t_parse(s.buf, s.len, &f);
  f.secs[3] = f.secs[1];
  f.secs[3].raw = malloc(f.secs[1].raw_len);
  memcpy(f.secs[3].raw, f.secs[1].raw, f.secs[1].raw_len);
  f.n = 4;
  expect_built_error(&f, FRZ_E_CORRUPT);
  t_free(&f);

  /* two process items */
  t_parse(s.buf, s.len, &f);
  f.secs[0].raw = realloc(f.secs[0].raw, 2 * 352);
  memcpy(f.secs[0].raw + 352, f.secs[0].raw, 352);
  f.secs[0].count = 2;
  f.secs[0].raw_len = 704;
  expect_built_error(&f, FRZ_E_CORRUPT);
  t_free(&f);

  /* bytes after the last section */
  t_parse(s.buf, s.len, &f);
  f.trailing = 1;
  expect_built_error(&f, FRZ_E_CORRUPT);
  t_free(&f);

  /* header and entry sizes below v1's */
  uint8_t *b = malloc(s.len);
  memcpy(b, s.buf, s.len);
  tput32(b + 12, 31);
  ck_assert_uint_eq(expect_error(b, s.len, FRZ_E_CORRUPT), 12);
  memcpy(b, s.buf, s.len);
  tput32(b + 20, 47);
  ck_assert_uint_eq(expect_error(b, s.len, FRZ_E_CORRUPT), 20);

  /* raw length != count * item size */
  memcpy(b, s.buf, s.len);
  patch_entry64(b, 2, 24, 30 * 104 + 1);
  fix_header_crc(b);
  ck_assert_uint_eq(expect_error(b, s.len, FRZ_E_CORRUPT), 32 + 2 * 48 + 24);

  /* a section version of 0 */
  memcpy(b, s.buf, s.len);
  patch_entry32(b, 1, 4, 0);
  fix_header_crc(b);
  expect_error(b, s.len, FRZ_E_CORRUPT);

  /* a section that claims to start inside the header */
  memcpy(b, s.buf, s.len);
  patch_entry64(b, 0, 8, 100);
  fix_header_crc(b);
  expect_error(b, s.len, FRZ_E_CORRUPT);

  /* a huge declared raw length is refused before any allocation */
  memcpy(b, s.buf, s.len);
  patch_entry32(b, 2, 40, 128);
  patch_entry64(b, 2, 32, 1ull << 27);
  patch_entry64(b, 2, 24, 1ull << 34);
  fix_header_crc(b);
  ck_assert_uint_eq(expect_error(b, s.len, FRZ_E_CORRUPT), 32 + 2 * 48 + 24);

  /* count * item size overflowing 64 bits */
  memcpy(b, s.buf, s.len);
  patch_entry32(b, 2, 40, 0x80000000u);
  patch_entry64(b, 2, 32, 1ull << 33);
  patch_entry64(b, 2, 24, 0);
  fix_header_crc(b);
  expect_error(b, s.len, FRZ_E_CORRUPT);

  /* declared raw length larger than the frame's content (count adjusted) */
  memcpy(b, s.buf, s.len);
  patch_entry64(b, 2, 32, 31);
  patch_entry64(b, 2, 24, 31 * 104);
  fix_header_crc(b);
  expect_error(b, s.len, FRZ_E_CORRUPT);
  free(b);

  /* a section payload that is not a zstd frame, with a valid CRC */
  t_parse(s.buf, s.len, &f);
  size_t len;
  b = t_build(&f, &len);
  uint64_t off = tget64(b + FRZ_HEADER_SIZE + 8), stored = tget64(b + FRZ_HEADER_SIZE + 16);
  memset(b + off, 0x42, stored);
  patch_entry32(b, 0, 44, frz_crc32(0, b + off, stored));
  fix_header_crc(b);
  ck_assert_uint_eq(expect_error(b, len, FRZ_E_CORRUPT), off);
  free(b);
  t_free(&f);
  sample_free(&s);
}
END_TEST

START_TEST(test_two_frames_in_a_section)
{
  /* A section holding two zstd frames (each half the items) is corrupt even
   * though zstd itself would decode the concatenation. */
  sample s;
  sample_make(&s, 4, 0);
  tfile f;
  t_parse(s.buf, s.len, &f);
  size_t len;
  uint8_t *b = t_build(&f, &len);
  const uint8_t *raw = f.secs[2].raw;
  size_t half = 2 * 104, cap = 2 * ZSTD_compressBound(half);
  uint8_t *frames = malloc(cap);
  size_t n1 = ZSTD_compress(frames, cap, raw, half, 1);
  size_t n2 = ZSTD_compress(frames + n1, cap - n1, raw + half, half, 1);
  uint64_t off = tget64(b + FRZ_HEADER_SIZE + 2 * 48 + 8);
  b = realloc(b, off + n1 + n2);
  memcpy(b + off, frames, n1 + n2);
  patch_entry64(b, 2, 16, n1 + n2);
  patch_entry32(b, 2, 44, frz_crc32(0, b + off, n1 + n2));
  fix_header_crc(b);
  expect_error(b, off + n1 + n2, FRZ_E_CORRUPT);
  free(frames);
  free(b);
  t_free(&f);
  sample_free(&s);
}
END_TEST

/* ---- tests: truncation and corruption ---------------------------------------------------------- */

START_TEST(test_truncation_every_offset)
{
  sample s;
  sample_make(&s, 40, 0);
  for (size_t l = 0; l < s.len; l++) {
    uint8_t *b = malloc(l ? l : 1); /* exact size: valgrind sees any overread */
    memcpy(b, s.buf, l);
    expect_error(b, l, l == 0 ? FRZ_E_EMPTY : FRZ_E_TRUNCATED);
    free(b);
  }
  sample_free(&s);
}
END_TEST

START_TEST(test_truncation_large)
{
  sample s;
  sample_make(&s, 5000, 0);
  ck_assert_uint_gt(s.len, 100000);
  for (size_t l = 1; l < s.len; l += (l < 4096 || l > s.len - 4096) ? 7 : 997) {
    uint8_t *b = malloc(l);
    memcpy(b, s.buf, l);
    expect_error(b, l, FRZ_E_TRUNCATED);
    free(b);
  }
  frz_dump d;
  frz_error err;
  ck_assert_int_eq(frz_decode(s.buf, s.len - 1, "dumps/r5.frz", &d, &err), FRZ_E_TRUNCATED);
  ck_assert_msg(strstr(err.msg, "records section truncated") != NULL, "message: %s", err.msg);
  char want[64];
  snprintf(want, sizeof want, "file ends at %zu", s.len - 1);
  ck_assert_msg(strstr(err.msg, want) != NULL, "message: %s", err.msg);
  sample_free(&s);
}
END_TEST

START_TEST(test_single_byte_corruption)
{
  sample s;
  sample_make(&s, 12, 0);
  static const uint8_t masks[] = {0x01, 0x10, 0x80, 0xFF};
  uint8_t *b = malloc(s.len);
  for (size_t off = 0; off < s.len; off++) {
    for (unsigned m = 0; m < sizeof masks; m++) {
      memcpy(b, s.buf, s.len);
      b[off] ^= masks[m];
      frz_dump d;
      frz_error err;
      frz_status st = frz_decode(b, s.len, "c.frz", &d, &err);
      ck_assert_msg(st != FRZ_OK, "flip 0x%02x at %zu not detected", masks[m], off);
      ck_assert_uint_lt(err.offset, s.len);
      if (off < 8)
        ck_assert_int_eq(st, FRZ_E_MAGIC);
      else if (off < 10)
        ck_assert(st == FRZ_E_VERSION || st == FRZ_E_CORRUPT);
      else if (off < 12 || off >= FRZ_HEADER_SIZE)
        ck_assert_msg(st == FRZ_E_CORRUPT, "flip at %zu: %s", off, err.msg);
      else
        ck_assert(st == FRZ_E_CORRUPT || st == FRZ_E_TRUNCATED);
      if (off >= DATA_START_V1)
        ck_assert_msg(strstr(err.msg, "checksum mismatch") != NULL, "%s", err.msg);
    }
  }
  free(b);
  sample_free(&s);
}
END_TEST

START_TEST(test_zero_length)
{
  frz_dump d;
  frz_error err;
  ck_assert_int_eq(frz_decode("", 0, "z.frz", &d, &err), FRZ_E_EMPTY);
  ck_assert_str_eq(err.msg, "z.frz: at byte 0: empty file (0 bytes)");
  ck_assert_int_eq(frz_decode(NULL, 0, NULL, &d, &err), FRZ_E_EMPTY);
  ck_assert_str_eq(err.msg, "<memory>: at byte 0: empty file (0 bytes)");
  char dir[PATH_MAX], path[PATH_MAX + 16];
  make_tmpdir(dir, sizeof dir);
  snprintf(path, sizeof path, "%s/empty.frz", dir);
  write_plain(path, "", 0);
  ck_assert_int_eq(frz_read_file(path, &d, &err), FRZ_E_EMPTY);
  ck_assert_ptr_nonnull(strstr(err.msg, path));
  remove_tmpdir(dir);
}
END_TEST

/* ---- tests: arguments ---------------------------------------------------------------------------- */

START_TEST(test_invalid_arguments)
{
  frz_process p;
  fill_process(&p);
  frz_comm c;
  void *out = (void *)1;
  size_t len = 1;
  frz_error err;
  ck_assert_int_eq(frz_encode(NULL, NULL, 0, NULL, 0, 0, &out, &len, &err), FRZ_E_INVALID);
  ck_assert_int_eq(frz_encode(&p, NULL, 2, NULL, 0, 0, &out, &len, &err), FRZ_E_INVALID);
  ck_assert_int_eq(frz_encode(&p, &c, 0, NULL, 5, 0, &out, &len, &err), FRZ_E_INVALID);
  ck_assert_int_eq(frz_encode(&p, NULL, 0, NULL, 0, 20, &out, &len, &err), FRZ_E_INVALID);
  ck_assert_int_eq(frz_encode(&p, NULL, 0, NULL, 0, -1, &out, &len, &err), FRZ_E_INVALID);
  ck_assert_int_eq(frz_encode(&p, NULL, 0, NULL, 0, 0, NULL, &len, &err), FRZ_E_INVALID);
  ck_assert_int_eq(frz_encode(&p, &c, 0, (frz_record *)&c, UINT64_MAX / 2, 0, &out, &len, &err),
                   FRZ_E_INVALID);
  frz_dump d;
  ck_assert_int_eq(frz_decode("x", 1, NULL, NULL, &err), FRZ_E_INVALID);
  ck_assert_int_eq(frz_decode(NULL, 10, NULL, &d, &err), FRZ_E_INVALID);
  ck_assert_int_eq(frz_read_file(NULL, &d, &err), FRZ_E_INVALID);
  /* a NULL error pointer is allowed everywhere */
  ck_assert_int_eq(frz_decode("garbage!", 8, NULL, &d, NULL), FRZ_E_MAGIC);
  ck_assert_int_eq(frz_write_file_atomic("/nonexistent-dir-frz", "a.frz", "x", 1, NULL),
                   FRZ_E_IO);
  frz_dump_free(NULL);
}
END_TEST

/* ---- tests: files ------------------------------------------------------------------------------------ */

START_TEST(test_write_atomic_basic)
{
  char dir[PATH_MAX], path[PATH_MAX + 32], first[256];
  make_tmpdir(dir, sizeof dir);
  sample s;
  sample_make(&s, 100, 0);
  static const mode_t masks[] = {022, 077, 0, 0277};
  for (unsigned i = 0; i < sizeof masks / sizeof masks[0]; i++) {
    mode_t old = umask(masks[i]);
    frz_error err;
    ck_assert_int_eq(frz_write_file_atomic(dir, "job-r00001-f0000.frz", s.buf, s.len, &err),
                     FRZ_OK);
    umask(old);
    snprintf(path, sizeof path, "%s/job-r00001-f0000.frz", dir);
    struct stat st;
    ck_assert_int_eq(lstat(path, &st), 0);
    ck_assert(S_ISREG(st.st_mode));
    ck_assert_uint_eq(st.st_mode & 07777, 0600);
    ck_assert_uint_eq((size_t)st.st_size, s.len);
    ck_assert_int_eq(count_entries(dir, first, sizeof first), 1);
    ck_assert_str_eq(first, "job-r00001-f0000.frz");
  }
  frz_dump d;
  frz_error err;
  ck_assert_int_eq(frz_read_file(path, &d, &err), FRZ_OK);
  ck_assert_uint_eq(d.nrecords, 100);
  assert_record_eq(&d.records[99], &s.recs[99]);
  frz_dump_free(&d);
  sample_free(&s);
  remove_tmpdir(dir);
}
END_TEST

START_TEST(test_write_atomic_replaces)
{
  char dir[PATH_MAX], path[PATH_MAX + 16], buf[64];
  make_tmpdir(dir, sizeof dir);
  snprintf(path, sizeof path, "%s/a.frz", dir);
  write_plain(path, "old contents that are longer", 28);
  ck_assert_int_eq(frz_write_file_atomic(dir, "a.frz", "new", 3, NULL), FRZ_OK);
  ck_assert_uint_eq(read_plain(path, buf, sizeof buf), 3);
  ck_assert_mem_eq(buf, "new", 3);
  ck_assert_int_eq(frz_write_file_atomic(dir, "a.frz", NULL, 0, NULL), FRZ_OK);
  ck_assert_uint_eq(read_plain(path, buf, sizeof buf), 0);
  ck_assert_int_eq(count_entries(dir, NULL, 0), 1);
  remove_tmpdir(dir);
}
END_TEST

START_TEST(test_write_atomic_refuses_symlink)
{
  char dir[PATH_MAX], victim[PATH_MAX + 16], link[PATH_MAX + 16], buf[64], tgt[PATH_MAX];
  make_tmpdir(dir, sizeof dir);
  snprintf(victim, sizeof victim, "%s/victim", dir);
  snprintf(link, sizeof link, "%s/b.frz", dir);
  write_plain(victim, "original", 8);
  ck_assert_int_eq(symlink(victim, link), 0);
  frz_error err;
  ck_assert_int_eq(frz_write_file_atomic(dir, "b.frz", "EVIL", 4, &err), FRZ_E_IO);
  ck_assert_ptr_nonnull(strstr(err.msg, "symbolic link"));
  ck_assert_ptr_nonnull(strstr(err.msg, link));
  ck_assert_uint_eq(read_plain(victim, buf, sizeof buf), 8);
  ck_assert_mem_eq(buf, "original", 8);
  struct stat st;
  ck_assert_int_eq(lstat(link, &st), 0);
  ck_assert(S_ISLNK(st.st_mode));
  ssize_t n = readlink(link, tgt, sizeof tgt - 1);
  ck_assert_int_gt(n, 0);
  tgt[n] = '\0';
  ck_assert_str_eq(tgt, victim);
  ck_assert_int_eq(count_entries(dir, NULL, 0), 2); /* no temporary left */
  /* a dangling symlink is refused too, and its target is not created */
  char dangling[PATH_MAX + 16], c_link[PATH_MAX + 16];
  snprintf(dangling, sizeof dangling, "%s/nothing-here", dir);
  snprintf(c_link, sizeof c_link, "%s/c.frz", dir);
  ck_assert_int_eq(symlink(dangling, c_link), 0);
  ck_assert_int_eq(frz_write_file_atomic(dir, "c.frz", "EVIL", 4, &err), FRZ_E_IO);
  ck_assert_int_eq(access(dangling, F_OK), -1);
  ck_assert_int_eq(count_entries(dir, NULL, 0), 3);
  remove_tmpdir(dir);
}
END_TEST

/* A hard link planted at the final name: the write replaces the name (a
 * new inode, 0600) and leaves the linked file's content alone. */
START_TEST(test_write_atomic_hard_link)
{
  char dir[PATH_MAX], victim[PATH_MAX + 16], final[PATH_MAX + 16], buf[64];
  make_tmpdir(dir, sizeof dir);
  snprintf(victim, sizeof victim, "%s/victim", dir);
  snprintf(final, sizeof final, "%s/h.frz", dir);
  write_plain(victim, "original", 8);
  ck_assert_int_eq(chmod(victim, 0644), 0);
  ck_assert_int_eq(link(victim, final), 0);
  struct stat vs, fs;
  ck_assert_int_eq(stat(victim, &vs), 0);
  frz_error err;
  ck_assert_int_eq(frz_write_file_atomic(dir, "h.frz", "NEWDUMP", 7, &err), FRZ_OK);
  ck_assert_uint_eq(read_plain(victim, buf, sizeof buf), 8);
  ck_assert_mem_eq(buf, "original", 8);
  ck_assert_int_eq(stat(victim, &vs), 0);
  ck_assert_uint_eq(vs.st_nlink, 1);
  ck_assert_uint_eq(vs.st_mode & 07777, 0644);
  ck_assert_int_eq(lstat(final, &fs), 0);
  ck_assert(S_ISREG(fs.st_mode));
  ck_assert(fs.st_ino != vs.st_ino);
  ck_assert_uint_eq(fs.st_mode & 07777, 0600);
  ck_assert_uint_eq(read_plain(final, buf, sizeof buf), 7);
  ck_assert_mem_eq(buf, "NEWDUMP", 7);
  ck_assert_int_eq(count_entries(dir, NULL, 0), 2); /* no temporary left */
  remove_tmpdir(dir);
}
END_TEST

START_TEST(test_write_atomic_bad_names)
{
  char dir[PATH_MAX];
  make_tmpdir(dir, sizeof dir);
  frz_error err;
  ck_assert_int_eq(frz_write_file_atomic(dir, "a/b.frz", "x", 1, &err), FRZ_E_INVALID);
  ck_assert_int_eq(frz_write_file_atomic(dir, "", "x", 1, &err), FRZ_E_INVALID);
  ck_assert_int_eq(frz_write_file_atomic(dir, ".", "x", 1, &err), FRZ_E_INVALID);
  ck_assert_int_eq(frz_write_file_atomic(dir, "..", "x", 1, &err), FRZ_E_INVALID);
  char longname[300];
  memset(longname, 'n', sizeof longname - 1);
  longname[sizeof longname - 1] = '\0';
  ck_assert_int_eq(frz_write_file_atomic(dir, longname, "x", 1, &err), FRZ_E_INVALID);
  ck_assert_int_eq(frz_write_file_atomic(dir, "a.frz", NULL, 1, &err), FRZ_E_INVALID);
  char missing[PATH_MAX + 16];
  snprintf(missing, sizeof missing, "%s/no/such/dir", dir);
  ck_assert_int_eq(frz_write_file_atomic(missing, "a.frz", "x", 1, &err), FRZ_E_IO);
  ck_assert_ptr_nonnull(strstr(err.msg, missing));
  ck_assert_ptr_nonnull(strstr(err.msg, "No such file"));
  ck_assert_int_eq(count_entries(dir, NULL, 0), 0);
  remove_tmpdir(dir);
}
END_TEST

START_TEST(test_write_atomic_failure_leaves_nothing)
{
  /* A write that fails half way (file size limit) must leave neither the
   * final name nor a temporary file.  Check runs each test in a child. */
  char dir[PATH_MAX];
  make_tmpdir(dir, sizeof dir);
  signal(SIGXFSZ, SIG_IGN);
  struct rlimit old, lim;
  ck_assert_int_eq(getrlimit(RLIMIT_FSIZE, &old), 0);
  lim = old;
  lim.rlim_cur = 4096;
  ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &lim), 0);
  size_t len = 100000;
  char *big = calloc(1, len);
  frz_error err;
  frz_status st = frz_write_file_atomic(dir, "big.frz", big, len, &err);
  setrlimit(RLIMIT_FSIZE, &old);
  ck_assert_int_eq(st, FRZ_E_IO);
  ck_assert_msg(strstr(err.msg, "write failed") != NULL, "message: %s", err.msg);
  ck_assert_uint_eq(err.offset, 4096);
  ck_assert_int_eq(count_entries(dir, NULL, 0), 0);
  free(big);
  remove_tmpdir(dir);
}
END_TEST

START_TEST(test_read_file_errors)
{
  char dir[PATH_MAX], path[PATH_MAX + 16];
  make_tmpdir(dir, sizeof dir);
  frz_dump d;
  frz_error err;
  snprintf(path, sizeof path, "%s/missing.frz", dir);
  ck_assert_int_eq(frz_read_file(path, &d, &err), FRZ_E_IO);
  ck_assert_ptr_nonnull(strstr(err.msg, path));
  ck_assert_ptr_nonnull(strstr(err.msg, "No such file"));
  ck_assert_int_eq(frz_read_file(dir, &d, &err), FRZ_E_IO);
  ck_assert_ptr_nonnull(strstr(err.msg, "not a regular file"));
  snprintf(path, sizeof path, "%s/fifo.frz", dir);
  ck_assert_int_eq(mkfifo(path, 0600), 0);
  ck_assert_int_eq(frz_read_file(path, &d, &err), FRZ_E_IO); /* must not block */
  ck_assert_ptr_nonnull(strstr(err.msg, "not a regular file"));
  /* a truncated file on disk is reported with its path and offset */
  sample s;
  sample_make(&s, 500, 0);
  snprintf(path, sizeof path, "%s/r5.frz", dir);
  write_plain(path, s.buf, s.len - 100);
  ck_assert_int_eq(frz_read_file(path, &d, &err), FRZ_E_TRUNCATED);
  ck_assert_msg(strncmp(err.msg, path, strlen(path)) == 0, "message: %s", err.msg);
  ck_assert_uint_lt(err.offset, s.len - 100);
  sample_free(&s);
  remove_tmpdir(dir);
}
END_TEST

/* ---- tests: names --------------------------------------------------------------------------------------- */

START_TEST(test_op_names)
{
  ck_assert_str_eq(frz_op_name(FRZ_OP_AllReduce), "AllReduce");
  ck_assert_str_eq(frz_op_name(FRZ_OP_Bcast), "Bcast");
  ck_assert_str_eq(frz_op_name(FRZ_OP_Recv), "Recv");
  ck_assert_str_eq(frz_op_name(FRZ_OP_GroupEnd), "GroupEnd");
  ck_assert_str_eq(frz_op_name(FRZ_OP_CommAbort), "CommAbort");
  ck_assert_str_eq(frz_op_name(0), "none");
  ck_assert_str_eq(frz_op_name(77), "op#77");
  ck_assert_str_eq(frz_op_name(65535), "op#65535");
  char two[64];
  snprintf(two, sizeof two, "%s %s", frz_op_name(200), frz_op_name(201));
  ck_assert_str_eq(two, "op#200 op#201");

  ck_assert_int_eq(frz_op_kind(FRZ_OP_AllReduce), FRZ_KIND_COLL);
  ck_assert_int_eq(frz_op_kind(FRZ_OP_Scatter), FRZ_KIND_COLL);
  ck_assert_int_eq(frz_op_kind(FRZ_OP_Send), FRZ_KIND_P2P);
  ck_assert_int_eq(frz_op_kind(FRZ_OP_Recv), FRZ_KIND_P2P);
  ck_assert_int_eq(frz_op_kind(FRZ_OP_GroupStart), FRZ_KIND_GROUP);
  ck_assert_int_eq(frz_op_kind(FRZ_OP_GroupEnd), FRZ_KIND_GROUP);
  ck_assert_int_eq(frz_op_kind(FRZ_OP_CommInitRank), FRZ_KIND_LIFE);
  ck_assert_int_eq(frz_op_kind(FRZ_OP_CommSplit), FRZ_KIND_LIFE);
  ck_assert_int_eq(frz_op_kind(FRZ_OP_CommDestroy), FRZ_KIND_LIFE);
  ck_assert_int_eq(frz_op_kind(0), FRZ_KIND_NONE);
  ck_assert_int_eq(frz_op_kind(77), FRZ_KIND_NONE);

  /* every op of the table round-trips through its name */
  unsigned n = 0;
  for (unsigned op = 1; op < 256; op++) {
    if (frz_op_kind(op) == FRZ_KIND_NONE)
      continue;
    n++;
    ck_assert_uint_eq(frz_op_from_name(frz_op_name(op)), op);
  }
  ck_assert_uint_eq(n, 27); /* 9 collectives, 2 p2p, 3 group, 13 lifecycle */
  ck_assert_uint_eq(frz_op_from_name("allreduce"), FRZ_OP_AllReduce);
  ck_assert_uint_eq(frz_op_from_name("ncclAllGather"), FRZ_OP_AllGather);
  ck_assert_uint_eq(frz_op_from_name("REDUCESCATTER"), FRZ_OP_ReduceScatter);
  ck_assert_uint_eq(frz_op_from_name("AllReduceX"), FRZ_OP_NONE);
  ck_assert_uint_eq(frz_op_from_name(""), FRZ_OP_NONE);
  ck_assert_uint_eq(frz_op_from_name(NULL), FRZ_OP_NONE);
}
END_TEST

START_TEST(test_dtype_names)
{
  static const char *const names[12] = {"int8",    "uint8",   "int32",   "uint32",
                                        "int64",   "uint64",  "float16", "float32",
                                        "float64", "bfloat16", "float8e4m3", "float8e5m2"};
  static const size_t sizes[12] = {1, 1, 4, 4, 8, 8, 2, 4, 8, 2, 1, 1};
  for (int i = 0; i < 12; i++) {
    ck_assert_str_eq(frz_dtype_name((unsigned)i), names[i]);
    ck_assert_int_eq(frz_dtype_from_name(names[i]), i);
    ck_assert_uint_eq(frz_dtype_size((unsigned)i), sizes[i]);
  }
  ck_assert_str_eq(frz_dtype_name(255), "none");
  ck_assert_str_eq(frz_dtype_name(12), "dtype#12");
  ck_assert_uint_eq(frz_dtype_size(12), 0);
  ck_assert_uint_eq(frz_dtype_size(255), 0);
  static const struct {
    const char *name;
    int v;
  } alias[] = {{"f32", 7},  {"f16", 6},   {"bf16", 9},  {"f64", 8},    {"i32", 2},
               {"i64", 4},  {"u8", 1},    {"i8", 0},    {"u32", 3},    {"u64", 5},
               {"float", 7}, {"half", 6}, {"double", 8}, {"int", 2},   {"FLOAT32", 7},
               {"ncclFloat32", 7}, {"ncclBfloat16", 9}, {"none", 255}};
  for (unsigned i = 0; i < sizeof alias / sizeof alias[0]; i++)
    ck_assert_msg(frz_dtype_from_name(alias[i].name) == alias[i].v, "%s", alias[i].name);
  ck_assert_int_eq(frz_dtype_from_name("f128"), -1);
  ck_assert_int_eq(frz_dtype_from_name(""), -1);
  ck_assert_int_eq(frz_dtype_from_name(NULL), -1);
}
END_TEST

START_TEST(test_other_names)
{
  ck_assert_str_eq(frz_redop_name(0), "sum");
  ck_assert_str_eq(frz_redop_name(1), "prod");
  ck_assert_str_eq(frz_redop_name(2), "max");
  ck_assert_str_eq(frz_redop_name(3), "min");
  ck_assert_str_eq(frz_redop_name(4), "avg");
  ck_assert_str_eq(frz_redop_name(255), "none");
  ck_assert_str_eq(frz_redop_name(9), "redop#9");
  ck_assert_str_eq(frz_state_name(FRZ_STATE_ENQUEUED), "enqueued");
  ck_assert_str_eq(frz_state_name(FRZ_STATE_STARTED), "started");
  ck_assert_str_eq(frz_state_name(FRZ_STATE_COMPLETED), "completed");
  ck_assert_str_eq(frz_state_name(FRZ_STATE_FAILED), "failed");
  ck_assert_str_eq(frz_state_name(4), "state#4");
  ck_assert_str_eq(frz_trigger_name(FRZ_TRIGGER_NONE), "none");
  ck_assert_str_eq(frz_trigger_name(FRZ_TRIGGER_TIMEOUT), "timeout");
  ck_assert_str_eq(frz_trigger_name(FRZ_TRIGGER_FILE), "file");
  ck_assert_str_eq(frz_trigger_name(FRZ_TRIGGER_SIGNAL), "signal");
  ck_assert_str_eq(frz_trigger_name(FRZ_TRIGGER_ABORT), "abort");
  ck_assert_str_eq(frz_trigger_name(FRZ_TRIGGER_ASYNC_ERROR), "async_error");
  ck_assert_str_eq(frz_trigger_name(FRZ_TRIGGER_EXIT), "exit");
  ck_assert_str_eq(frz_trigger_name(FRZ_TRIGGER_FRAME), "frame");
  ck_assert_str_eq(frz_trigger_name(FRZ_TRIGGER_CRASH), "crash");
  ck_assert_str_eq(frz_trigger_name(FRZ_TRIGGER_RECOVERY), "recovery");
  ck_assert_str_eq(frz_trigger_name(FRZ_TRIGGER_PMIX), "pmix");
  ck_assert_str_eq(frz_trigger_name(FRZ_TRIGGER_STORE), "store");
  ck_assert_str_eq(frz_trigger_name(FRZ_TRIGGER_SALVAGED), "salvaged");
  ck_assert_str_eq(frz_trigger_name(FRZ_TRIGGER_SNAPSHOT), "snapshot");
  ck_assert_str_eq(frz_trigger_name(14), "trigger#14");
  ck_assert_str_eq(frz_status_name(FRZ_OK), "ok");
  ck_assert_str_eq(frz_status_name(FRZ_E_TRUNCATED), "truncated");
  ck_assert_str_eq(frz_status_name(FRZ_E_VERSION), "unsupported_version");
  ck_assert_str_eq(frz_status_name((frz_status)99), "status#99");
  for (unsigned s = 0; s <= FRZ_E_INVALID; s++)
    ck_assert_ptr_nonnull(frz_status_name((frz_status)s));
}
END_TEST

START_TEST(test_dump_filename)
{
  char b[128];
  ck_assert_int_eq(frz_dump_filename(b, sizeof b, "slurm-1234", 5, 99, 0), 27);
  ck_assert_str_eq(b, "slurm-1234-r00005-f0000.frz");
  ck_assert_int_gt(frz_dump_filename(b, sizeof b, "job", 123456, 1, 12345), 0);
  ck_assert_str_eq(b, "job-r123456-f12345.frz");
  ck_assert_int_gt(frz_dump_filename(b, sizeof b, "../a b/c", 0, 1, 2), 0);
  ck_assert_str_eq(b, "_._a_b_c-r00000-f0002.frz");
  ck_assert_int_gt(frz_dump_filename(b, sizeof b, ".hidden", 1, 1, 1), 0);
  ck_assert_str_eq(b, "_hidden-r00001-f0001.frz");
  ck_assert_int_gt(frz_dump_filename(b, sizeof b, "", -1, 4242, 3), 0);
  ck_assert_str_eq(b, "job-p4242-f0003.frz");
  ck_assert_int_gt(frz_dump_filename(b, sizeof b, NULL, 7, 1, 1), 0);
  ck_assert_str_eq(b, "job-r00007-f0001.frz");
  ck_assert_int_eq(frz_dump_filename(b, 10, "slurm-1234", 5, 99, 0), -1);
  ck_assert_int_eq(frz_dump_filename(b, 28, "slurm-1234", 5, 99, 0), 27);
}
END_TEST

/* Announcements (frz.md, "Announcements"): name, line, parse and refusals. */
/* The trigger line: what one rank writes, another reads back; odd input is
 * never taken for a rank or a time. */
START_TEST(test_trigger_line)
{
  char buf[FRZ_TRIGGER_LINE_MAX];
  frz_trigger_line t;
  int n = frz_trigger_line_format(buf, sizeof buf, 3, 1796171926794787221ull, "AllReduce seq 9\nstuck\x01");
  ck_assert_int_gt(n, 0);
  ck_assert_str_eq(buf, "flightrec-trigger v1 rank=3 time_ns=1796171926794787221 reason=AllReduce seq 9\n");
  ck_assert_int_eq(frz_trigger_line_parse(buf, (size_t)n, &t), 0);
  ck_assert_int_eq(t.rank, 3);
  ck_assert_uint_eq(t.time_ns, 1796171926794787221ull);
  ck_assert_str_eq(t.reason, "AllReduce seq 9");
  /* a reason that mentions " rank=" does not change the rank */
  n = frz_trigger_line_format(buf, sizeof buf, -1, 5, "user says rank=7 time_ns=9 is stuck\x7f");
  ck_assert_int_eq(frz_trigger_line_parse(buf, (size_t)n, &t), 0);
  ck_assert_int_eq(t.rank, -1);
  ck_assert_uint_eq(t.time_ns, 5);
  ck_assert_str_eq(t.reason, "user says rank=7 time_ns=9 is stuck?");
  /* not NUL-terminated, cut short: what is there */
  const char cut[] = "flightrec-trigger v1 rank=12 time_ns=44 reason=abcdef";
  ck_assert_int_eq(frz_trigger_line_parse(cut, 38, &t), 0); /* ends in "time_ns=4" */
  ck_assert_int_eq(t.rank, 12);
  ck_assert_uint_eq(t.time_ns, 4);
  ck_assert_str_eq(t.reason, "");
  /* not ours */
  ck_assert_int_eq(frz_trigger_line_parse("hello rank=1 time_ns=2", 22, &t), -1);
  ck_assert_int_eq(t.rank, -1);
  ck_assert_uint_eq(t.time_ns, 0);
  ck_assert_int_eq(frz_trigger_line_parse("", 0, &t), -1);
  /* a long reason is cut at FRZ_TRIGGER_REASON_MAX bytes, and does not fit a small buffer */
  char longr[600];
  memset(longr, 'x', sizeof longr - 1);
  longr[sizeof longr - 1] = '\0';
  n = frz_trigger_line_format(buf, sizeof buf, 0, 1, longr);
  ck_assert_int_eq(n, (int)strlen("flightrec-trigger v1 rank=0 time_ns=1 reason=\n") + FRZ_TRIGGER_REASON_MAX);
  ck_assert_int_eq(frz_trigger_line_format(buf, 40, 0, 1, "x"), -1);
}
END_TEST

START_TEST(test_alive_roundtrip)
{
  frz_alive a = {.global_rank = 5, .world_size = 8, .local_rank = 1, .pid = 4242,
                 .time_ns = 1796159094511299370ull, .watches_trigger = 1};
  strcpy(a.job_id, "slurm 17/x");
  strcpy(a.host, "node-3");
  char line[FRZ_ALIVE_MAX], name[128];
  int n = frz_alive_format(&a, line, sizeof line);
  ck_assert_int_gt(n, 0);
  ck_assert_str_eq(line, "flightrec-alive v1 job=slurm_17_x rank=5 world=8 local_rank=1 pid=4242 "
                         "time_ns=1796159094511299370 trigger=1 host=node-3\n");
  ck_assert_int_gt(frz_alive_filename(name, sizeof name, "slurm:17", 5, 4242), 0);
  ck_assert_str_eq(name, ".fr-alive-slurm_17-r00005-p4242");
  ck_assert(frz_alive_is_name(name));
  ck_assert(!frz_alive_is_name("..fr-alive-x.tmp.1.2"));
  ck_assert(!frz_alive_is_name("slurm-r00005-f0000.frz"));
  frz_alive b;
  frz_error e;
  ck_assert_int_eq(frz_alive_parse(line, (size_t)n, "f", &b, &e), FRZ_OK);
  ck_assert_str_eq(b.job_id, "slurm_17_x");
  ck_assert_str_eq(b.host, "node-3");
  ck_assert_int_eq(b.global_rank, 5);
  ck_assert_int_eq(b.world_size, 8);
  ck_assert_int_eq(b.local_rank, 1);
  ck_assert_uint_eq(b.pid, 4242);
  ck_assert(b.time_ns == 1796159094511299370ull);
  ck_assert_int_eq(b.watches_trigger, 1);
  char job[FRZ_JOB_MAX];
  frz_alive_job(job, sizeof job, "slurm 17/x");
  ck_assert_str_eq(job, b.job_id);
  /* unknown rank, no trigger field (read as watching) */
  const char *old = "flightrec-alive v1 job=- rank=-1 world=-1 local_rank=-1 pid=1 time_ns=0 host=-\n";
  ck_assert_int_eq(frz_alive_parse(old, strlen(old), "f", &b, &e), FRZ_OK);
  ck_assert_int_eq(b.global_rank, -1);
  ck_assert_str_eq(b.job_id, "");
  ck_assert_int_eq(b.watches_trigger, 1);
  const char *bad[] = {
    "flightrec-alive v1 job=j rank=1 world=2 local_rank=0 pid=1 time_ns=5 host=h",   /* no newline */
    "flightrec-alive v2 job=j rank=1 world=2 local_rank=0 pid=1 time_ns=5 host=h\n", /* version */
    "flightrec-alive v1 job=j rank=x world=2 local_rank=0 pid=1 time_ns=5 host=h\n", /* rank */
    "flightrec-alive v1 job=j rank=1 world=2 local_rank=0 pid=-1 time_ns=5 host=h\n",/* pid */
    "flightrec-alive v1 job=j rank=1 world=2 local_rank=0 time_ns=5 host=h\n",       /* no pid */
    "flightrec-alive v1 rank=1 world=2 local_rank=0 pid=1 time_ns=5 host=h\n",       /* no job */
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    ck_assert_int_eq(frz_alive_parse(bad[i], strlen(bad[i]), "dir/.fr-alive-x", &b, &e), FRZ_E_CORRUPT);
    ck_assert_msg(strncmp(e.msg, "dir/.fr-alive-x: at byte 0: ", 28) == 0, "%s", e.msg);
  }
}
END_TEST

/* ---- the suite ---------------------------------------------------------------------------------------------- */

static Suite *frz_suite(void)
{
  Suite *s = suite_create("frz");
  TCase *t = tcase_create("codec");
  tcase_set_timeout(t, 300);
  tcase_add_test(t, test_crc32);
  tcase_add_test(t, test_roundtrip_every_field);
  tcase_add_test(t, test_roundtrip_levels);
  tcase_add_test(t, test_compresses_repetitive_records);
  tcase_add_test(t, test_empty_record_set);
  tcase_add_test(t, test_strings_forced_nul);
  tcase_add_test(t, test_records_sorted_by_id);
  tcase_add_test(t, test_callsites_roundtrip);
  tcase_add_test(t, test_stacks_roundtrip);
  tcase_add_test(t, test_layout_matches_spec);
  tcase_add_test(t, test_independent_builder_decodes);
  tcase_add_test(t, test_bad_magic);
  tcase_add_test(t, test_newer_major_rejected);
  tcase_add_test(t, test_minor_versions_accepted);
  tcase_add_test(t, test_future_minor_layout);
  tcase_add_test(t, test_records_v1_still_read);
  tcase_add_test(t, test_records_v3_still_read);
  tcase_add_test(t, test_records_v2_reserved_unknown);
  tcase_add_test(t, test_record_rank_device_limits);
  tcase_add_test(t, test_proxy_sections);
  tcase_add_test(t, test_unknown_sections_skipped);
  tcase_add_test(t, test_structural_errors);
  tcase_add_test(t, test_two_frames_in_a_section);
  tcase_add_test(t, test_false_count_not_allocated);
  tcase_add_test(t, test_truncation_every_offset);
  tcase_add_test(t, test_truncation_large);
  tcase_add_test(t, test_single_byte_corruption);
  tcase_add_test(t, test_zero_length);
  tcase_add_test(t, test_invalid_arguments);
  suite_add_tcase(s, t);
  TCase *f = tcase_create("files");
  tcase_set_timeout(f, 60); /* each write fsyncs: seconds on a disk busy with a parallel build (Check's default is 4 s) */
  tcase_add_test(f, test_write_atomic_basic);
  tcase_add_test(f, test_write_atomic_replaces);
  tcase_add_test(f, test_write_atomic_refuses_symlink);
  tcase_add_test(f, test_write_atomic_hard_link);
  tcase_add_test(f, test_write_atomic_bad_names);
  tcase_add_test(f, test_write_atomic_failure_leaves_nothing);
  tcase_add_test(f, test_read_file_errors);
  suite_add_tcase(s, f);
  TCase *n = tcase_create("names");
  tcase_add_test(n, test_op_names);
  tcase_add_test(n, test_dtype_names);
  tcase_add_test(n, test_other_names);
  tcase_add_test(n, test_dump_filename);
  tcase_add_test(n, test_alive_roundtrip);
  tcase_add_test(n, test_trigger_line);
  suite_add_tcase(s, n);
  return s;
}

int main(void)
{
  SRunner *sr = srunner_create(frz_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
