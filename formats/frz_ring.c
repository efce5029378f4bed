/* frz_ring.c — the reader of ring files (frz.md, "Ring files"): a
 * recording process's live ring, comm table and process header, read from
 * outside while it runs (a snapshot) or after it died (salvage), into the
 * same frz_dump a dump file decodes to.  Also the comm summary that the
 * recorder's own dumps share.
 *
 * Nothing here trusts the file: every size and offset is checked before
 * use, the header's fixed part carries a CRC-32, and a slot is kept only if
 * its `ver` says it holds the record of that id both before and after the
 * copy (the writer's seqlock, ring.h) and its coded fields are in range.
 */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif

#include "frz_internal.h"
#include "frz_ring.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int frz_ring_is_magic(const void *buf, size_t len)
{
  return buf && len >= 8 && memcmp(buf, FRZ_RING_MAGIC, 8) == 0;
}

/* An aligned u64/u32 of the live block, read once (the writer changes it). */
static uint64_t live64(const uint8_t *p, size_t off)
{
  uint64_t v = __atomic_load_n((const uint64_t *)(const void *)(p + off), __ATOMIC_ACQUIRE);
  uint8_t b[8];
  memcpy(b, &v, 8);
  return get64(b, 0);
}

static uint32_t live32(const uint8_t *p, size_t off)
{
  uint32_t v = __atomic_load_n((const uint32_t *)(const void *)(p + off), __ATOMIC_ACQUIRE);
  uint8_t b[4];
  memcpy(b, &v, 4);
  return get32(b, 0);
}

/* A comm entry (frz.md, "Ring comm table") into a dump's comm. */
static void get_ring_comm(const uint8_t *p, frz_comm *c)
{
  memset(c, 0, sizeof *c);
  c->handle = get64(p, 0);
  c->comm_id = get64(p, 8);
  c->parent_id = get64(p, 16);
  c->nccl_comm_hash = get64(p, 24);
  c->nranks = (int32_t)get32(p, 32);
  c->rank = (int32_t)get32(p, 36);
  c->split_color = (int32_t)get32(p, 40);
  c->split_key = (int32_t)get32(p, 44);
  c->cuda_device = (int32_t)get32(p, 48);
  c->flags = get32(p, 52);
  c->next_seq = get64(p, 56);
  c->dropped_records = get64(p, 80); /* records ever written for it, until summarised */
}

/* Are a record's coded fields possible values of a record of id `id`? */
static int record_plausible(const frz_record *r, uint64_t id)
{
  return r->id == id && r->kind <= FRZ_KIND_LIFE && r->dir <= FRZ_DIR_RECV &&
         r->state <= FRZ_STATE_FAILED && r->op < FRZ_OP_MAX_;
}

/* The header checks: layout sizes in range and inside `len`. */
static frz_status check_layout(const uint8_t *p, size_t len, const char *name, frz_error *err)
{
  uint32_t hsize = get32(p, FRZ_RING_OFF_HEADER_SIZE);
  uint64_t fsize = get64(p, FRZ_RING_OFF_FILE_SIZE);
  uint64_t so = get64(p, FRZ_RING_OFF_SLOTS), cap = get64(p, FRZ_RING_OFF_CAPACITY);
  uint32_t ss = get32(p, FRZ_RING_OFF_SLOT_SIZE), cs = get32(p, FRZ_RING_OFF_COMM_SIZE);
  uint64_t co = get64(p, FRZ_RING_OFF_COMMS);
  uint32_t ccap = get32(p, FRZ_RING_OFF_COMM_CAPACITY);
  if (hsize < FRZ_RING_HEADER_SIZE || hsize > len)
    return fail(err, hsize > len ? FRZ_E_TRUNCATED : FRZ_E_CORRUPT, name, FRZ_RING_OFF_HEADER_SIZE,
                "ring header size %u (the file has %zu bytes)", hsize, len);
  if (fsize > len)
    return fail(err, FRZ_E_TRUNCATED, name, len, "ring file truncated: %zu of its %llu bytes",
                len, (unsigned long long)fsize);
  if (cap == 0 || (cap & (cap - 1)) || cap > (UINT64_C(1) << 30) || ss < FRZ_RING_SLOT_MIN ||
      ss % 8 || ss > 65536)
    return fail(err, FRZ_E_CORRUPT, name, FRZ_RING_OFF_CAPACITY,
                "ring of %llu slots of %u bytes: not a power of two of at least %d-byte slots",
                (unsigned long long)cap, ss, FRZ_RING_SLOT_MIN);
  if (cs < FRZ_RING_COMM_MIN || cs % 8 || cs > 65536 || ccap > (1u << 20))
    return fail(err, FRZ_E_CORRUPT, name, FRZ_RING_OFF_COMM_SIZE,
                "comm table of %u entries of %u bytes", ccap, cs);
  if (so % 8 || co % 8 || so < hsize || co < hsize || so > fsize || co > fsize ||
      (fsize - so) / ss < cap || (fsize - co) / cs < ccap ||
      (co < so ? co + (uint64_t)ccap * cs > so : so + cap * ss > co))
    return fail(err, FRZ_E_CORRUPT, name, FRZ_RING_OFF_SLOTS,
                "slots at %llu and comms at %llu do not fit in %llu bytes",
                (unsigned long long)so, (unsigned long long)co, (unsigned long long)fsize);
  return FRZ_OK;
}

/* The records of the window [head - capacity, head), in id order. */
static frz_status read_records(const uint8_t *p, const char *name, frz_dump *out,
                               frz_ring_info *info, frz_error *err)
{
  uint64_t so = get64(p, FRZ_RING_OFF_SLOTS), cap = info->capacity;
  uint32_t ss = get32(p, FRZ_RING_OFF_SLOT_SIZE);
  /* the highest published id bounds head from below: a head that
   * disagrees with the slots was damaged */
  uint64_t top = 0;
  int any = 0;
  for (uint64_t i = 0; i < cap; i++) {
    uint64_t v = live64(p, so + i * ss);
    if (v && !(v & 1) && (v / 2 - 1) % cap == i && v / 2 > top) top = v / 2, any = 1;
  }
  uint64_t head = live64(p, FRZ_RING_OFF_HEAD);
  if (any && (head < top || head - top > cap))
    return fail(err, FRZ_E_CORRUPT, name, FRZ_RING_OFF_HEAD,
                "ring head %llu disagrees with its slots (highest record %llu)",
                (unsigned long long)head, (unsigned long long)(top - 1));
  info->head = head;
  uint64_t lo = head > cap ? head - cap : 0;
  out->records = malloc((size_t)(head - lo ? head - lo : 1) * sizeof *out->records);
  if (!out->records) return fail(err, FRZ_E_NOMEM, name, FRZ_NO_OFFSET, "out of memory");
  /* minor 1 slots hold version-4 items (the CUDA graph fields) */
  int v4 = get16(p, FRZ_RING_OFF_MINOR) >= 1 && ss >= FRZ_RING_SLOT_MIN_V4;
  uint8_t item[FRZ_RECORD_ITEM_SIZE_V4];
  size_t item_len = v4 ? FRZ_RECORD_ITEM_SIZE_V4 : FRZ_RECORD_ITEM_SIZE_V2;
  for (uint64_t id = lo; id < head; id++) {
    size_t off = (size_t)(so + (id & (cap - 1)) * ss);
    uint64_t v1 = live64(p, off);
    if (v1 != 2 * id + 2) {
      info->skipped++;
      continue;
    }
    /* a seqlock read: each word of the slot an acquire load, so the second
     * read of the version cannot pass them (an acquire fence would order the
     * same, but ThreadSanitizer does not model fences) */
    for (size_t w = 0; w < item_len; w += 8) {
      uint64_t word = __atomic_load_n((const uint64_t *)(const void *)(p + off + 8 + w), __ATOMIC_ACQUIRE);
      memcpy(item + w, &word, 8);
    }
    frz_record *r = &out->records[out->nrecords];
    if (v4)
      frz_item_record_v4(item, r);
    else
      frz_item_record(item, r);
    if (live64(p, off) != v1 || !record_plausible(r, id)) {
      info->skipped++;
      continue;
    }
    if (r->result == -1) r->flags |= FRZ_RF_IN_CALL; /* the call had not returned */
    out->nrecords++;
  }
  return FRZ_OK;
}

frz_status frz_ring_decode(const void *buf, size_t len, const char *name, frz_dump *out,
                           frz_ring_info *info, frz_error *err)
{
  const uint8_t *p = buf;
  frz_ring_info dummy;
  if (!info) info = &dummy;
  memset(out, 0, sizeof *out);
  memset(info, 0, sizeof *info);
  set_ok(err);
  if (!name) name = MEMORY_NAME;
  if (!buf || ((uintptr_t)buf & 7))
    return fail(err, FRZ_E_INVALID, name, FRZ_NO_OFFSET, "ring image not 8-byte aligned");
  if (len == 0) return fail(err, FRZ_E_EMPTY, name, 0, "empty file");
  if (!frz_ring_is_magic(buf, len))
    return fail(err, len < 8 ? FRZ_E_TRUNCATED : FRZ_E_MAGIC, name, 0, "not a flightrec ring file");
  if (len < 12) return fail(err, FRZ_E_TRUNCATED, name, len, "ring file truncated in its header");
  info->version_major = get16(p, FRZ_RING_OFF_MAJOR);
  info->version_minor = get16(p, FRZ_RING_OFF_MINOR);
  if (info->version_major != FRZ_RING_VERSION_MAJOR)
    return fail(err, FRZ_E_VERSION, name, FRZ_RING_OFF_MAJOR,
                "ring file version %u.%u: this reader reads version %d only",
                info->version_major, info->version_minor, FRZ_RING_VERSION_MAJOR);
  if (len < FRZ_RING_HEADER_SIZE)
    return fail(err, FRZ_E_TRUNCATED, name, len, "ring file truncated: %zu bytes, its header has %d",
                len, FRZ_RING_HEADER_SIZE);
  uint32_t crc = frz_crc32(0, p, FRZ_RING_OFF_CRC);
  crc = frz_crc32(crc, p + FRZ_RING_OFF_PROCESS, FRZ_RING_CHECKED_END - FRZ_RING_OFF_PROCESS);
  if (crc != get32(p, FRZ_RING_OFF_CRC))
    return fail(err, FRZ_E_CORRUPT, name, FRZ_RING_OFF_CRC,
                "ring header checksum mismatch (stored 0x%08x, computed 0x%08x)",
                get32(p, FRZ_RING_OFF_CRC), crc);
  frz_status st = check_layout(p, len, name, err);
  if (st != FRZ_OK) return st;
  info->capacity = get64(p, FRZ_RING_OFF_CAPACITY);
  info->start_ticks = get64(p, FRZ_RING_OFF_START_TICKS);
  memcpy(info->boot_id, p + FRZ_RING_OFF_BOOT_ID, 16);
  get_str(info->dump_dir, p, FRZ_RING_OFF_DUMP_DIR, FRZ_RING_DUMP_DIR_SIZE);
  info->state = live32(p, FRZ_RING_OFF_STATE);
  info->exit_status = (int32_t)live32(p, FRZ_RING_OFF_EXIT_STATUS);
  info->fatal_signal = (int32_t)live32(p, FRZ_RING_OFF_SIGNAL);
  info->frames = live32(p, FRZ_RING_OFF_FRAMES);
  info->heartbeat_ns = live64(p, FRZ_RING_OFF_HEARTBEAT);
  info->end_ns = live64(p, FRZ_RING_OFF_END);
  out->version_major = FRZ_VERSION_MAJOR;
  out->version_minor = FRZ_VERSION_MINOR;
  frz_item_process(p + FRZ_RING_OFF_PROCESS, &out->process);
  frz_process *pr = &out->process;
  pr->flags |= live32(p, FRZ_RING_OFF_FLAGS);
  pr->trigger = FRZ_TRIGGER_NONE;
  pr->trigger_rank = -1;
  pr->ring_capacity = (uint32_t)info->capacity;
  /* comms: those registered when we looked */
  uint32_t nc = live32(p, FRZ_RING_OFF_NCOMMS), ccap = get32(p, FRZ_RING_OFF_COMM_CAPACITY);
  uint32_t cs = get32(p, FRZ_RING_OFF_COMM_SIZE);
  uint64_t co = get64(p, FRZ_RING_OFF_COMMS);
  if (nc > ccap) {
    frz_dump_free(out);
    return fail(err, FRZ_E_CORRUPT, name, FRZ_RING_OFF_NCOMMS, "%u comms in a table of %u", nc, ccap);
  }
  out->comms = calloc(nc ? nc : 1, sizeof *out->comms);
  if (!out->comms) {
    frz_dump_free(out);
    return fail(err, FRZ_E_NOMEM, name, FRZ_NO_OFFSET, "out of memory");
  }
  for (uint32_t i = 0; i < nc; i++) {
    frz_comm *c = &out->comms[i];
    get_ring_comm(p + co + (uint64_t)i * cs, c);
    if (c->nranks < -1 || c->nranks > (1 << 24) || c->rank < -1 ||
        (c->nranks > 0 && c->rank >= c->nranks)) {
      int32_t rank = c->rank, nranks = c->nranks; /* c dies with out */
      frz_dump_free(out);
      return fail(err, FRZ_E_CORRUPT, name, co + (uint64_t)i * cs + 32,
                  "comm %u: rank %d of %d", i, rank, nranks);
    }
  }
  out->ncomms = nc;
  st = read_records(p, name, out, info, err);
  if (st == FRZ_OK && frz_comms_summarize(out->comms, nc, out->records, out->nrecords) != 0)
    st = fail(err, FRZ_E_NOMEM, name, FRZ_NO_OFFSET, "out of memory");
  if (st != FRZ_OK) {
    frz_dump_free(out);
    return st;
  }
  pr->records_total = info->head;
  pr->records_dropped = info->head - out->nrecords;
  /* as of the last sign of life: the end, else the watchdog's last poll,
   * else the newest record */
  uint64_t t = info->end_ns ? info->end_ns : info->heartbeat_ns;
  for (uint64_t k = 0; k < out->nrecords; k++) {
    const frz_record *r = &out->records[k];
    uint64_t m = r->t_complete_ns > r->t_enqueue_ns ? r->t_complete_ns : r->t_enqueue_ns;
    if (m > t) t = m;
  }
  pr->frame_time_ns = pr->trigger_time_ns = t;
  if (!pr->job_id[0] && nc > 0) /* as the recorder names a dump without a job id */
    snprintf(pr->job_id, sizeof pr->job_id, "%016llx", (unsigned long long)out->comms[0].comm_id);
  return FRZ_OK;
}

/* ---- comm summary (shared with the recorder's dumps) ---------------------- */

static uint32_t comm_index(const frz_comm *cs, const uint32_t *map, uint32_t msize, uint64_t id,
                           int32_t rank)
{
  if (!id) return 0;
  for (uint32_t h = (uint32_t)id & (msize - 1); map[h]; h = (h + 1) & (msize - 1))
    if (cs[map[h] - 1].comm_id == id && (rank < 0 || cs[map[h] - 1].rank == rank)) return map[h];
  return 0;
}

int frz_comms_summarize(frz_comm *cs, uint32_t nc, const frz_record *recs, uint64_t n)
{
  for (uint32_t i = 0; i < nc; i++) {
    frz_comm *o = &cs[i];
    o->first_retained_seq = o->next_seq;
    o->last_enqueued_seq = (int64_t)o->next_seq - 1;
    o->last_started_seq = -1;
    o->last_completed_seq = INT64_MAX; /* lowered below: min incomplete seq - 1 */
  }
  uint32_t msize = 16;
  while (msize < nc * 2) msize <<= 1;
  uint32_t *map = calloc(msize, sizeof *map);
  int64_t *done_max = malloc((nc ? nc : 1) * sizeof *done_max);
  if (!map || !done_max) {
    free(map);
    free(done_max);
    return -1;
  }
  for (uint32_t i = 0; i < nc; i++) {
    uint32_t h = (uint32_t)cs[i].comm_id & (msize - 1);
    while (map[h]) h = (h + 1) & (msize - 1);
    map[h] = i + 1;
    done_max[i] = -1;
  }
  for (int pass = 0; pass < 2; pass++)
    for (uint64_t k = 0; k < n; k++) {
      const frz_record *r = &recs[k];
      uint32_t idx = comm_index(cs, map, msize, r->comm_id, r->comm_rank);
      if (!idx || (r->kind != FRZ_KIND_COLL && r->kind != FRZ_KIND_LIFE)) {
        if (idx && pass == 0 && cs[idx - 1].dropped_records) cs[idx - 1].dropped_records--;
        continue;
      }
      frz_comm *o = &cs[idx - 1];
      int done = r->state == FRZ_STATE_COMPLETED || r->state == FRZ_STATE_FAILED;
      if (pass == 0) {
        if (o->dropped_records) o->dropped_records--;
        if (r->seq < o->first_retained_seq) o->first_retained_seq = r->seq;
        if (r->state >= FRZ_STATE_STARTED && r->state != FRZ_STATE_FAILED &&
            (int64_t)r->seq > o->last_started_seq)
          o->last_started_seq = (int64_t)r->seq;
        if (done && (int64_t)r->seq > done_max[idx - 1]) done_max[idx - 1] = (int64_t)r->seq;
        continue;
      }
      /* an untracked record (captured into a CUDA graph: no events) never
       * completes; one that a later op of the comm completed after is done
       * (NCCL runs a comm's operations in order) */
      int untracked = (r->flags & FRZ_RF_NO_TRACKING) && !(r->flags & FRZ_RF_IN_CALL);
      if (done || (untracked && (int64_t)r->seq < done_max[idx - 1])) continue;
      if ((int64_t)r->seq - 1 < o->last_completed_seq) o->last_completed_seq = (int64_t)r->seq - 1;
    }
  for (uint32_t i = 0; i < nc; i++)
    if (cs[i].last_completed_seq == INT64_MAX) cs[i].last_completed_seq = cs[i].last_enqueued_seq;
  free(done_max);
  free(map);
  return 0;
}

/* ---- files, processes ----------------------------------------------------- */

int frz_boot_id(uint8_t out[16])
{
  memset(out, 0, 16);
  int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  char b[64];
  ssize_t n = read(fd, b, sizeof b - 1);
  close(fd);
  if (n <= 0) return -1;
  int k = 0;
  for (ssize_t i = 0; i < n && k < 32; i++) {
    char c = b[i];
    int v = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    if (v < 0) continue;
    out[k / 2] = (uint8_t)(out[k / 2] << 4 | v);
    k++;
  }
  return k == 32 ? 0 : -1;
}

uint64_t frz_process_start_ticks(uint32_t pid)
{
  char path[64], b[1024];
  snprintf(path, sizeof path, "/proc/%u/stat", pid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  ssize_t n = read(fd, b, sizeof b - 1);
  close(fd);
  if (n <= 0) return 0;
  b[n] = 0;
  char *s = strrchr(b, ')'); /* the command name may hold anything */
  if (!s) return 0;
  /* field 3 (state) follows ") "; field 22 is starttime */
  int field = 2;
  for (char *q = s + 1; *q; q++)
    if (*q == ' ' && ++field == 22) return strtoull(q + 1, NULL, 10);
  return 0;
}

int frz_ring_gone(const frz_process *p, const frz_ring_info *info)
{
  uint8_t boot[16], zero[16] = {0};
  if (frz_boot_id(boot) == 0 && memcmp(info->boot_id, zero, 16) && memcmp(boot, info->boot_id, 16))
    return 1; /* another boot: nothing of it runs */
  if (kill((pid_t)p->pid, 0) != 0 && errno == ESRCH) return 1;
  uint64_t t = frz_process_start_ticks(p->pid);
  if (t && info->start_ticks && t != info->start_ticks) return 1; /* the pid was reused */
  /* a zombie (exited, not yet reaped by its parent) is gone too */
  char path[64], b[512];
  snprintf(path, sizeof path, "/proc/%u/stat", p->pid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    ssize_t n = read(fd, b, sizeof b - 1);
    close(fd);
    if (n > 0) {
      b[n] = 0;
      char *s = strrchr(b, ')');
      if (s && (s[2] == 'Z' || s[2] == 'X')) return 1;
    }
  }
  return 0;
}

int frz_ring_watchdog_stuck(uint32_t pid)
{
  char dir[64];
  snprintf(dir, sizeof dir, "/proc/%u/task", pid);
  DIR *dp = opendir(dir);
  if (!dp) return 0;
  int stuck = 0;
  struct dirent *de;
  while ((de = readdir(dp)) != NULL) {
    if (de->d_name[0] == '.') continue;
    char p[400], b[512];
    snprintf(p, sizeof p, "%s/%s/stat", dir, de->d_name);
    int fd = open(p, O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    ssize_t n = read(fd, b, sizeof b - 1);
    close(fd);
    if (n <= 0) continue;
    b[n] = 0;
    char *lp = strchr(b, '('), *rp = strrchr(b, ')');
    if (!lp || !rp || rp < lp || strncmp(lp + 1, "fr-watchdog", 11) != 0) continue;
    char st = rp[1] == ' ' ? rp[2] : 0;
    stuck = st == 'T' || st == 't' || st == 'D' || st == 'Z';
    break;
  }
  closedir(dp);
  return stuck;
}

void frz_ring_death_text(const frz_ring_info *info, char *buf, size_t size)
{
  if (info->state == FRZ_RING_EXITED)
    snprintf(buf, size, "exited with status %d", info->exit_status);
  else if (info->state == FRZ_RING_CRASHED)
    snprintf(buf, size, "fatal signal %d (%s)", info->fatal_signal,
             sigabbrev_np(info->fatal_signal) ? sigabbrev_np(info->fatal_signal) : "?");
  else
    snprintf(buf, size, "killed, no exit seen (SIGKILL, the OOM killer or a launcher)");
}

frz_status frz_ring_read_file(const char *path, frz_dump *out, frz_ring_info *info, int *gone,
                              frz_error *err)
{
  char eb[128];
  frz_ring_info dummy;
  if (!info) info = &dummy;
  memset(out, 0, sizeof *out);
  set_ok(err);
  int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0)
    return fail(err, FRZ_E_IO, path, FRZ_NO_OFFSET, "cannot open: %s", errstr(errno, eb, sizeof eb));
  struct stat sb;
  frz_status st = FRZ_OK;
  if (fstat(fd, &sb) != 0)
    st = fail(err, FRZ_E_IO, path, FRZ_NO_OFFSET, "cannot stat: %s", errstr(errno, eb, sizeof eb));
  else if (!S_ISREG(sb.st_mode))
    st = fail(err, FRZ_E_IO, path, FRZ_NO_OFFSET, "not a regular file");
  else if (sb.st_uid != geteuid())
    st = fail(err, FRZ_E_IO, path, FRZ_NO_OFFSET,
              "ring file owned by uid %u, not by this user (%u): refused", (unsigned)sb.st_uid,
              (unsigned)geteuid());
  else if (sb.st_size == 0)
    st = fail(err, FRZ_E_EMPTY, path, 0, "empty file");
  if (st != FRZ_OK) {
    close(fd);
    return st;
  }
  size_t len = (size_t)sb.st_size;
  void *m = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
  close(fd);
  if (m == MAP_FAILED)
    return fail(err, FRZ_E_IO, path, FRZ_NO_OFFSET, "cannot map: %s", errstr(errno, eb, sizeof eb));
  st = frz_ring_decode(m, len, path, out, info, err);
  munmap(m, len);
  if (st != FRZ_OK) return st;
  frz_process *p = &out->process;
  int g = frz_ring_gone(p, info);
  if (gone) *gone = g;
  p->frame = info->frames;
  char why[96];
  if (g) {
    frz_ring_death_text(info, why, sizeof why);
    p->trigger = FRZ_TRIGGER_SALVAGED;
    snprintf(p->trigger_text, sizeof p->trigger_text, "salvaged: pid %u %.80s", p->pid, why);
    /* only an exit stamps the records from their events as it goes */
    if (info->state != FRZ_RING_EXITED) p->flags |= FRZ_PF_STATES_STALE;
  } else {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    p->frame_time_ns = p->trigger_time_ns = (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
    p->trigger = FRZ_TRIGGER_SNAPSHOT;
    int stuck = frz_ring_watchdog_stuck(p->pid);
    snprintf(p->trigger_text, sizeof p->trigger_text,
             "snapshot of its ring file taken from outside (pid %u %s)", p->pid,
             stuck ? "stopped: its watchdog cannot run" : "running");
    if (stuck) p->flags |= FRZ_PF_STATES_STALE;
  }
  return FRZ_OK;
}

frz_status frz_ring_salvage(const char *path, const char *outdir, int keep, char *written,
                            size_t wlen, frz_dump *out, frz_error *err)
{
  return frz_ring_salvage_signal(path, outdir, keep, 0, written, wlen, out, err);
}

frz_status frz_ring_salvage_signal(const char *path, const char *outdir, int keep, int sig,
                                   char *written, size_t wlen, frz_dump *out, frz_error *err)
{
  frz_ring_info info;
  int gone = 0;
  if (written && wlen) written[0] = 0;
  frz_status st = frz_ring_read_file(path, out, &info, &gone, err);
  if (st != FRZ_OK) return st;
  if (!gone)
    return fail(err, FRZ_E_INVALID, path, FRZ_NO_OFFSET, "process %u still runs: not salvaged",
                out->process.pid);
  if (sig > 0 && info.state == FRZ_RING_RUNNING) /* its parent saw the signal the ring could not */
    snprintf(out->process.trigger_text, sizeof out->process.trigger_text,
             "salvaged: pid %u killed by signal %d (SIG%s), seen by its parent", out->process.pid, sig,
             sigabbrev_np(sig) ? sigabbrev_np(sig) : "?");
  const char *dir = outdir ? outdir : info.dump_dir;
  if (!dir[0]) return fail(err, FRZ_E_INVALID, path, FRZ_NO_OFFSET, "no dump directory named");
  const frz_process *p = &out->process;
  char name[256];
  if (frz_dump_filename(name, sizeof name, p->job_id[0] ? p->job_id : "job", p->global_rank,
                        p->pid, p->frame) < 0)
    return fail(err, FRZ_E_INVALID, path, FRZ_NO_OFFSET, "no file name for its dump");
  void *buf = NULL;
  size_t len = 0;
  st = frz_encode(p, out->comms, out->ncomms, out->records, out->nrecords, 3, &buf, &len, err);
  if (st == FRZ_OK) {
    (void)mkdir(dir, 0700);
    st = frz_write_file_atomic(dir, name, buf, len, err);
  }
  free(buf);
  if (st != FRZ_OK) return st;
  if (written) snprintf(written, wlen, "%s/%s", dir, name);
  if (!keep) unlink(path);
  return FRZ_OK;
}

/* ---- names ----------------------------------------------------------------- */

/* in, at most max-1 bytes, with characters outside [A-Za-z0-9._+-] as '_'. */
static void ring_word(char *out, size_t max, const char *in)
{
  size_t n = 0;
  for (; in && in[n] && n + 1 < max; n++) {
    char c = in[n];
    int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
             c == '.' || c == '_' || c == '+' || c == '-';
    out[n] = ok ? c : '_';
  }
  out[n] = '\0';
}

int frz_ring_filename(char *buf, size_t size, const char *job_id, int32_t global_rank,
                      uint32_t pid, const char *host)
{
  char job[FRZ_JOB_MAX], h[FRZ_HOST_MAX];
  ring_word(job, sizeof job, job_id);
  ring_word(h, sizeof h, host);
  int len = snprintf(buf, size, FRZ_RING_PREFIX "%s-r%05d-p%u@%s" FRZ_RING_SUFFIX,
                     job[0] ? job : "job", global_rank < 0 ? 0 : (int)global_rank, pid,
                     h[0] ? h : "host");
  return len < 0 || (size_t)len >= size ? -1 : len;
}

int frz_ring_is_name(const char *name)
{
  size_t n = name ? strlen(name) : 0, s = strlen(FRZ_RING_SUFFIX);
  return n > s + 3 && strncmp(name, FRZ_RING_PREFIX, 3) == 0 &&
         strcmp(name + n - s, FRZ_RING_SUFFIX) == 0 && strchr(name, '@') != NULL;
}
