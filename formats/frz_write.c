/* frz_write.c — the dump codec's writer: the encoder and the atomic file
 * write.
 *
 * formats/frz.md is the contract this file implements.  Every field is
 * serialised explicitly, little-endian, at the offsets the spec's tables
 * give; C structs are never copied to disk.  Nothing here prints: problems
 * are reported through frz_error as "NAME: at byte N: what".
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
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zstd.h>

#define NSECTIONS_V1 3
#define NSECTIONS_MAX 9   /* with the optional CALLSITES, BACKTRACES, PROXY, KERNELCH, STACKS, PYFRAMES */
#define DEFAULT_LEVEL 3
#define MAX_LEVEL 19

/* ---- little-endian put --------------------------------------------------- */

static void put8(uint8_t *p, size_t off, uint8_t v) { p[off] = v; }

static void put16(uint8_t *p, size_t off, uint16_t v)
{
  p[off] = (uint8_t)v;
  p[off + 1] = (uint8_t)(v >> 8);
}

static void put32(uint8_t *p, size_t off, uint32_t v)
{
  for (int i = 0; i < 4; i++)
    p[off + (size_t)i] = (uint8_t)(v >> (8 * i));
}

static void put64(uint8_t *p, size_t off, uint64_t v)
{
  for (int i = 0; i < 8; i++)
    p[off + (size_t)i] = (uint8_t)(v >> (8 * i));
}

/* Store a C string into a fixed NUL-padded field of `size` bytes: at most
 * size-1 characters, the rest zero. */
static void put_str(uint8_t *p, size_t off, const char *s, size_t size)
{
  size_t n = strnlen(s, size - 1);
  memcpy(p + off, s, n);
  memset(p + off + n, 0, size - n);
}

/* ---- item layouts (frz.md, "Section payloads") ---------------------------- */

static void put_process(uint8_t *p, const frz_process *s)
{
  put32(p, 0, (uint32_t)s->global_rank);
  put32(p, 4, (uint32_t)s->world_size);
  put32(p, 8, (uint32_t)s->local_rank);
  put32(p, 12, s->pid);
  put_str(p, 16, s->host, FRZ_HOST_MAX);
  put_str(p, 80, s->job_id, FRZ_JOB_MAX);
  put32(p, 144, (uint32_t)s->nccl_version);
  put32(p, 148, s->recorder_version);
  put64(p, 152, s->anchor_realtime_ns);
  put64(p, 160, s->anchor_monotonic_ns);
  put32(p, 168, s->trigger);
  put32(p, 172, s->frame);
  put64(p, 176, s->frame_time_ns);
  put64(p, 184, s->trigger_time_ns);
  put32(p, 192, (uint32_t)s->trigger_rank);
  put32(p, 196, s->flags);
  put64(p, 200, s->records_total);
  put64(p, 208, s->records_dropped);
  put32(p, 216, s->ring_capacity);
  put32(p, 220, s->trigger_latency_us);
  put_str(p, 224, s->trigger_text, FRZ_TEXT_MAX);
}

static void put_comm(uint8_t *p, const frz_comm *c)
{
  put64(p, 0, c->comm_id);
  put64(p, 8, c->nccl_comm_hash);
  put64(p, 16, c->parent_id);
  put64(p, 24, c->handle);
  put32(p, 32, (uint32_t)c->nranks);
  put32(p, 36, (uint32_t)c->rank);
  put32(p, 40, (uint32_t)c->split_color);
  put32(p, 44, (uint32_t)c->split_key);
  put32(p, 48, c->flags);
  put32(p, 52, (uint32_t)c->cuda_device);
  put64(p, 56, c->next_seq);
  put64(p, 64, c->first_retained_seq);
  put64(p, 72, (uint64_t)c->last_enqueued_seq);
  put64(p, 80, (uint64_t)c->last_started_seq);
  put64(p, 88, (uint64_t)c->last_completed_seq);
  put64(p, 96, c->dropped_records);
}

static void put_record(uint8_t *p, const frz_record *r)
{
  put64(p, 0, r->id);
  put64(p, 8, r->comm_id);
  put64(p, 16, r->seq);
  put64(p, 24, r->count);
  put64(p, 32, r->stream);
  put64(p, 40, r->call_site);
  put64(p, 48, r->group_id);
  put64(p, 56, r->t_enqueue_ns);
  put64(p, 64, r->t_start_ns);
  put64(p, 72, r->t_complete_ns);
  put32(p, 80, r->tid);
  put32(p, 84, (uint32_t)r->peer);
  put16(p, 88, r->op);
  put8(p, 90, r->kind);
  put8(p, 91, r->dir);
  put8(p, 92, r->dtype);
  put8(p, 93, r->redop);
  put8(p, 94, r->state);
  put8(p, 95, r->graph_ops); /* version 4; reserved (0) before */
  put32(p, 96, r->flags);
  put32(p, 100, (uint32_t)r->result);
  put64(p, 104, r->nccl_seq); /* version 2 */
  put8(p, 112, r->algo);
  put8(p, 113, r->proto);
  put8(p, 114, r->nchannels);
  put8(p, 115, r->cuda_device); /* version 3 */
  put32(p, 116, (uint32_t)r->comm_rank);
  put32(p, 120, r->replay); /* version 4 */
  put16(p, 124, r->graph_id);
  put16(p, 126, r->graph_op);
}

static void put_proxy(uint8_t *p, const frz_proxy *x)
{
  memset(p, 0, FRZ_PROXY_ITEM_SIZE);
  put64(p, 0, x->comm_id);
  put64(p, 8, x->seq);
  put64(p, 16, x->steps_posted);
  put64(p, 24, x->steps_done);
  put64(p, 32, x->t_last_ns);
  put32(p, 40, (uint32_t)x->peer);
  put8(p, 44, x->channel);
  put8(p, 45, x->dir);
  put8(p, 46, x->kind);
  put32(p, 48, x->state);
  put32(p, 52, x->ops_posted);
  put32(p, 56, x->ops_done);
  put32(p, 60, (uint32_t)x->rank);
}

static void put_kernel_ch(uint8_t *p, const frz_kernel_ch *k)
{
  memset(p, 0, FRZ_KERNEL_CH_ITEM_SIZE);
  put64(p, 0, k->comm_id);
  put64(p, 8, (uint64_t)k->started_seq);
  put64(p, 16, (uint64_t)k->stopped_seq);
  put64(p, 24, k->t_last_ns);
  put32(p, 32, k->channel);
  put32(p, 36, k->started);
  put32(p, 40, k->stopped);
  put32(p, 44, (uint32_t)k->rank);
}

static void put_callsite(uint8_t *p, const frz_callsite *c)
{
  put64(p, 0, c->address);
  put64(p, 8, c->offset);
  put_str(p, 16, c->module, FRZ_MODULE_MAX);
  put_str(p, 80, c->symbol, FRZ_SYMBOL_MAX);
}

static void put_backtrace(uint8_t *p, const frz_backtrace *b)
{
  uint32_t depth = b->depth > FRZ_BACKTRACE_MAX ? FRZ_BACKTRACE_MAX : b->depth;
  put64(p, 0, b->record_id);
  put32(p, 8, depth);
  put32(p, 12, 0); /* reserved */
  for (uint32_t i = 0; i < FRZ_BACKTRACE_MAX; i++)
    put64(p, 16 + 8 * (size_t)i, i < depth ? b->frames[i] : 0);
}

static void put_stack(uint8_t *p, const frz_stack *t)
{
  uint32_t depth = t->depth > FRZ_STACK_MAX ? FRZ_STACK_MAX : t->depth;
  put32(p, 0, t->tid);
  put32(p, 4, t->status);
  put32(p, 8, t->flags);
  put32(p, 12, depth);
  put64(p, 16, t->record_id);
  put64(p, 24, t->thread_handle);
  put_str(p, 32, t->name, FRZ_THREAD_NAME_MAX);
  for (uint32_t i = 0; i < FRZ_STACK_MAX; i++)
    put64(p, 48 + 8 * (size_t)i, i < depth ? t->frames[i] : 0);
}

static void put_pyframe(uint8_t *p, const frz_pyframe *f)
{
  put64(p, 0, f->thread_handle);
  put32(p, 8, f->tid);
  put32(p, 12, f->index);
  put32(p, 16, f->line);
  put32(p, 20, 0); /* reserved */
  put_str(p, 24, f->func, FRZ_PYFUNC_MAX);
  put_str(p, 96, f->file, FRZ_PYFILE_MAX);
}

/* ---- encoder ------------------------------------------------------------- */

/* One section as the encoder lays it out. */
typedef struct {
  uint32_t type;
  uint32_t version;
  uint32_t item_size;
  uint64_t count;
  uint64_t offset, stored, raw;
  uint32_t crc;
} enc_section;

/* Serialise items [0, count) of section `s` into `raw`. */
static void encode_items(const enc_section *s, uint8_t *raw, const frz_process *proc,
                         const frz_comm *comms, const frz_record *records,
                         const frz_callsite *sites, const frz_extras *x)
{
  for (uint64_t i = 0; i < s->count; i++) {
    uint8_t *p = raw + i * s->item_size;
    if (s->type == FRZ_SEC_PROCESS)
      put_process(p, proc);
    else if (s->type == FRZ_SEC_COMMS)
      put_comm(p, &comms[i]);
    else if (s->type == FRZ_SEC_CALLSITES)
      put_callsite(p, &sites[i]);
    else if (s->type == FRZ_SEC_BACKTRACES)
      put_backtrace(p, &x->backtraces[i]);
    else if (s->type == FRZ_SEC_PROXY)
      put_proxy(p, &x->proxy[i]);
    else if (s->type == FRZ_SEC_KERNELCH)
      put_kernel_ch(p, &x->kernel_ch[i]);
    else if (s->type == FRZ_SEC_STACKS)
      put_stack(p, &x->stacks[i]);
    else if (s->type == FRZ_SEC_PYFRAMES)
      put_pyframe(p, &x->pyframes[i]);
    else
      put_record(p, &records[i]);
  }
}

/* Write the file header, the section table and its CRC at the start of out. */
static void encode_header(uint8_t *out, const enc_section *secs, uint32_t n)
{
  memcpy(out, FRZ_MAGIC, FRZ_MAGIC_LEN);
  put16(out, 8, FRZ_VERSION_MAJOR);
  put16(out, 10, FRZ_VERSION_MINOR);
  put32(out, 12, FRZ_HEADER_SIZE);
  put32(out, 16, n);
  put32(out, 20, FRZ_SECTION_ENTRY_SIZE);
  put32(out, 24, 0); /* flags */
  put32(out, 28, 0); /* reserved */
  for (uint32_t i = 0; i < n; i++) {
    uint8_t *e = out + FRZ_HEADER_SIZE + (size_t)i * FRZ_SECTION_ENTRY_SIZE;
    put32(e, 0, secs[i].type);
    put32(e, 4, secs[i].version);
    put64(e, 8, secs[i].offset);
    put64(e, 16, secs[i].stored);
    put64(e, 24, secs[i].raw);
    put64(e, 32, secs[i].count);
    put32(e, 40, secs[i].item_size);
    put32(e, 44, secs[i].crc);
  }
  size_t table_end = FRZ_HEADER_SIZE + (size_t)n * FRZ_SECTION_ENTRY_SIZE;
  put32(out, table_end, frz_crc32(0, out, table_end));
}

/* Make a compression context with the level and the frame options frz.md
 * requires (content size and content checksum in every frame). */
static ZSTD_CCtx *make_cctx(int level)
{
  ZSTD_CCtx *cctx = ZSTD_createCCtx();
  if (!cctx)
    return NULL;
  if (ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, level)) ||
      ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1)) ||
      ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_contentSizeFlag, 1))) {
    ZSTD_freeCCtx(cctx);
    return NULL;
  }
  return cctx;
}

/* Check frz_encode's arguments; FRZ_OK or FRZ_E_INVALID. */
static frz_status check_encode_args(const frz_process *proc, const frz_comm *comms,
                                    uint32_t ncomms, const frz_record *records,
                                    uint64_t nrecords, int level, void **out,
                                    size_t *out_len, frz_error *err)
{
  if (!proc || !out || !out_len)
    return fail(err, FRZ_E_INVALID, NULL, 0, "frz_encode: NULL argument");
  if ((ncomms && !comms) || (nrecords && !records))
    return fail(err, FRZ_E_INVALID, NULL, 0, "frz_encode: NULL array with a nonzero count");
  if (level < 0 || level > MAX_LEVEL)
    return fail(err, FRZ_E_INVALID, NULL, 0,
                "frz_encode: compression level %d out of range (0..%d)", level, MAX_LEVEL);
  if (nrecords > FRZ_SECTION_RAW_MAX / FRZ_RECORD_ITEM_SIZE_V4 ||
      nrecords > (SIZE_MAX / 2) / FRZ_RECORD_ITEM_SIZE_V4)
    return fail(err, FRZ_E_INVALID, NULL, 0,
                "frz_encode: %" PRIu64 " records exceed the section size limit", nrecords);
  return FRZ_OK;
}

frz_status frz_encode(const frz_process *proc, const frz_comm *comms, uint32_t ncomms,
                      const frz_record *records, uint64_t nrecords, int level, void **out,
                      size_t *out_len, frz_error *err)
{
  return frz_encode_ex(proc, comms, ncomms, records, nrecords, NULL, level, out, out_len, err);
}

frz_status frz_encode_ex(const frz_process *proc, const frz_comm *comms, uint32_t ncomms,
                         const frz_record *records, uint64_t nrecords, const frz_extras *x,
                         int level, void **out, size_t *out_len, frz_error *err)
{
  frz_status st = check_encode_args(proc, comms, ncomms, records, nrecords, level, out,
                                    out_len, err);
  if (st != FRZ_OK)
    return st;
  static const frz_extras none;
  if (!x)
    x = &none;
  const frz_callsite *sites_in = x->callsites;
  uint32_t nsites = x->ncallsites;
  uint64_t nbts = x->nbacktraces;
  uint64_t nproxy = x->nproxy;
  uint32_t nkch = x->nkernel_ch;
  if ((nsites && !sites_in) || (nbts && !x->backtraces) || (nproxy && !x->proxy) ||
      (nkch && !x->kernel_ch) || (x->nstacks && !x->stacks) || (x->npyframes && !x->pyframes))
    return fail(err, FRZ_E_INVALID, NULL, 0, "frz_encode: NULL extras with a nonzero count");
  if (nbts > FRZ_SECTION_RAW_MAX / FRZ_BACKTRACE_ITEM_SIZE ||
      nproxy > FRZ_SECTION_RAW_MAX / FRZ_PROXY_ITEM_SIZE)
    return fail(err, FRZ_E_INVALID, NULL, 0, "frz_encode: too many backtraces or proxy items");
  *out = NULL;
  *out_len = 0;
  frz_callsite *sites = NULL; /* written sorted, so readers can bsearch */
  if (nsites) {
    sites = malloc((size_t)nsites * sizeof *sites);
    if (!sites)
      return fail(err, FRZ_E_NOMEM, NULL, 0, "out of memory for %" PRIu32 " call sites", nsites);
    memcpy(sites, sites_in, (size_t)nsites * sizeof *sites);
    qsort(sites, nsites, sizeof *sites, cmp_site);
  }
  const enc_section all[NSECTIONS_MAX] = {
      {FRZ_SEC_PROCESS, FRZ_SECTION_VERSION, FRZ_PROCESS_ITEM_SIZE, 1, 0, 0, 0, 0},
      {FRZ_SEC_COMMS, FRZ_SECTION_VERSION, FRZ_COMM_ITEM_SIZE, ncomms, 0, 0, 0, 0},
      {FRZ_SEC_RECORDS, FRZ_RECORDS_VERSION, FRZ_RECORD_ITEM_SIZE_V4, nrecords, 0, 0, 0, 0},
      {FRZ_SEC_CALLSITES, FRZ_SECTION_VERSION, FRZ_CALLSITE_ITEM_SIZE, nsites, 0, 0, 0, 0},
      {FRZ_SEC_BACKTRACES, FRZ_SECTION_VERSION, FRZ_BACKTRACE_ITEM_SIZE, nbts, 0, 0, 0, 0},
      {FRZ_SEC_PROXY, FRZ_SECTION_VERSION, FRZ_PROXY_ITEM_SIZE, nproxy, 0, 0, 0, 0},
      {FRZ_SEC_KERNELCH, FRZ_SECTION_VERSION, FRZ_KERNEL_CH_ITEM_SIZE, nkch, 0, 0, 0, 0},
      {FRZ_SEC_STACKS, FRZ_SECTION_VERSION, FRZ_STACK_ITEM_SIZE, x->nstacks, 0, 0, 0, 0},
      {FRZ_SEC_PYFRAMES, FRZ_SECTION_VERSION, FRZ_PYFRAME_ITEM_SIZE, x->npyframes, 0, 0, 0, 0},
  };
  /* the three required sections, then the optional ones that hold something */
  enc_section secs[NSECTIONS_MAX];
  int nsec = 0;
  for (int i = 0; i < NSECTIONS_MAX; i++)
    if (i < NSECTIONS_V1 || all[i].count)
      secs[nsec++] = all[i];
  size_t table_end = FRZ_HEADER_SIZE + (size_t)nsec * FRZ_SECTION_ENTRY_SIZE;
  size_t cap = table_end + 4, max_raw = 0;
  for (int i = 0; i < nsec; i++) {
    secs[i].raw = secs[i].count * secs[i].item_size;
    cap += ZSTD_compressBound((size_t)secs[i].raw);
    if (secs[i].raw > max_raw)
      max_raw = (size_t)secs[i].raw;
  }
  uint8_t *buf = malloc(cap);
  uint8_t *raw = malloc(max_raw);
  ZSTD_CCtx *cctx = make_cctx(level ? level : DEFAULT_LEVEL);
  if (!buf || !raw || !cctx) {
    st = fail(err, FRZ_E_NOMEM, NULL, 0, "out of memory encoding a dump (%zu bytes)", cap);
    goto out;
  }
  size_t pos = table_end + 4;
  for (int i = 0; i < nsec; i++) {
    encode_items(&secs[i], raw, proc, comms, records, sites, x);
    size_t n = ZSTD_compress2(cctx, buf + pos, cap - pos, raw, (size_t)secs[i].raw);
    if (ZSTD_isError(n)) {
      st = fail(err, FRZ_E_NOMEM, NULL, pos, "zstd compression failed: %s",
                ZSTD_getErrorName(n));
      goto out;
    }
    secs[i].offset = pos;
    secs[i].stored = n;
    secs[i].crc = frz_crc32(0, buf + pos, n);
    pos += n;
  }
  encode_header(buf, secs, (uint32_t)nsec);
  uint8_t *shrunk = realloc(buf, pos);
  *out = shrunk ? shrunk : buf;
  *out_len = pos;
  buf = NULL;
  set_ok(err);
out:
  ZSTD_freeCCtx(cctx);
  free(raw);
  free(buf);
  free(sites);
  return st;
}

/* ---- files --------------------------------------------------------------- */

/* Write all of buf to fd, retrying EINTR and short writes.  Returns 0, or -1
 * with errno set and *done the bytes written before the failure. */
static int write_full(int fd, const uint8_t *buf, size_t len, size_t *done)
{
  *done = 0;
  while (*done < len) {
    ssize_t n = write(fd, buf + *done, len - *done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return -1;
    if (n == 0) {
      errno = EIO;
      return -1;
    }
    *done += (size_t)n;
  }
  return 0;
}

/* Create a fresh temporary file ".NAME.tmp.<pid>.<random>" in dfd (mode
 * 0600, exclusive, never through a symlink); returns the fd or -1. */
static int create_temp(int dfd, const char *name, char *tmp, size_t tmpsize)
{
  static unsigned long counter;
  for (int attempt = 0; attempt < 32; attempt++) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    unsigned long c = __atomic_fetch_add(&counter, 1, __ATOMIC_RELAXED);
    uint32_t rnd = (uint32_t)(((uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 20) ^
                               (c * 0x9E3779B97F4A7C15ull)) >> 7);
    snprintf(tmp, tmpsize, ".%s.tmp.%ld.%08" PRIx32, name, (long)getpid(), rnd);
    int fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd >= 0 || errno != EEXIST)
      return fd;
  }
  return -1;
}

/* Check the name given to frz_write_file_atomic: one plain path component
 * short enough to carry the temporary suffix. */
static int valid_file_name(const char *name)
{
  return name[0] && !strchr(name, '/') && strcmp(name, ".") && strcmp(name, "..") &&
         strlen(name) + 40 <= NAME_MAX;
}

/* Write into the temporary file, fsync and close it; on failure fill err. */
static frz_status fill_temp(int fd, const char *path, const void *buf, size_t len,
                            frz_error *err)
{
  char eb[128];
  size_t done = 0;
  frz_status st = FRZ_OK;
  if (fchmod(fd, 0600) != 0)
    st = fail(err, FRZ_E_IO, path, 0, "cannot set mode 0600 on the temporary file: %s",
              errstr(errno, eb, sizeof eb));
  else if (write_full(fd, buf, len, &done) != 0)
    st = fail(err, FRZ_E_IO, path, done, "write failed: %s", errstr(errno, eb, sizeof eb));
  else if (fsync(fd) != 0)
    st = fail(err, FRZ_E_IO, path, len, "fsync failed: %s", errstr(errno, eb, sizeof eb));
  if (close(fd) != 0 && errno != EINTR && st == FRZ_OK)
    st = fail(err, FRZ_E_IO, path, len, "close failed: %s", errstr(errno, eb, sizeof eb));
  return st;
}

frz_status frz_write_file_atomic(const char *dir, const char *name, const void *buf,
                                 size_t len, frz_error *err)
{
  if (!dir || !name || (!buf && len))
    return fail(err, FRZ_E_INVALID, name, 0, "frz_write_file_atomic: NULL argument");
  char path[PATH_MAX], tmp[NAME_MAX + 1], eb[128];
  int pn = snprintf(path, sizeof path, "%s/%s", dir, name);
  if (pn < 0 || (size_t)pn >= sizeof path || !valid_file_name(name))
    return fail(err, FRZ_E_INVALID, pn >= 0 && (size_t)pn < sizeof path ? path : name, 0,
                "invalid dump file name (one path component, at most %d bytes)",
                NAME_MAX - 40);
  int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0)
    return fail(err, FRZ_E_IO, path, 0, "cannot open directory %s: %s", dir,
                errstr(errno, eb, sizeof eb));
  frz_status st = FRZ_OK;
  struct stat sb;
  if (fstatat(dfd, name, &sb, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(sb.st_mode)) {
    st = fail(err, FRZ_E_IO, path, 0, "refusing to replace a symbolic link");
    goto out;
  }
  int fd = create_temp(dfd, name, tmp, sizeof tmp);
  if (fd < 0) {
    st = fail(err, FRZ_E_IO, path, 0, "cannot create a temporary file in %s: %s", dir,
              errstr(errno, eb, sizeof eb));
    goto out;
  }
  st = fill_temp(fd, path, buf, len, err);
  if (st == FRZ_OK && renameat(dfd, tmp, dfd, name) != 0)
    st = fail(err, FRZ_E_IO, path, len, "cannot rename the temporary file into place: %s",
              errstr(errno, eb, sizeof eb));
  if (st != FRZ_OK)
    unlinkat(dfd, tmp, 0);
  else
    fsync(dfd); /* make the rename durable; not every filesystem supports it */
out:
  close(dfd);
  if (st == FRZ_OK)
    set_ok(err);
  return st;
}
