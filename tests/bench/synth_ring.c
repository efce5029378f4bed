/* synth_ring.c — one rank of the synthetic job (synth.h) as the ring file
 * its recorder would have left (frz.md, "Ring files"), for the salvage
 * benchmark: fr-synth --ring writes a ring file per rank without running a
 * process per rank.
 *
 * The layout is the recorder's (librecorder/ringfile.c): a 4096-byte
 * header, a comm table of 4096 entries of 96 bytes, then, from the next
 * page, `capacity` slots of 160 bytes (ver, the 120-byte record, 32 bytes
 * private to the writer), capacity the retained records rounded up to a
 * power of two.  The file is written whole, like a recorder's reserved
 * pages; every retained record published (ver = 2 id + 2), head the next
 * id.  The process is gone: it is marked as killed (state 1, no exit seen)
 * and its header carries a boot id no host has (sixteen 0xff bytes), so a
 * reader on any host takes it as gone, as after a reboot or on another
 * node.  The last heartbeat is the synthetic dump's frame time, so the
 * salvaged dump reads like the one fr-synth writes for the same rank. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "frz_ring.h"
#include "synth.h"

/* The records and process header are stored as their C structures, which
 * are the format's items on a little-endian host (as the recorder does). */
_Static_assert(sizeof(frz_record) == FRZ_RECORD_ITEM_SIZE_V4, "record item: 136 bytes");
_Static_assert(sizeof(frz_process) == FRZ_RING_PROCESS_SIZE, "process item: 352 bytes");

#define COMM_CAP 4096u
#define COMM_SIZE 96u
#define SLOT_SIZE 160u

static void put(uint8_t *p, size_t off, uint64_t v, int n)
{
  for (int i = 0; i < n; i++) p[off + (size_t)i] = (uint8_t)(v >> (8 * i));
}

int synth_write_ring(const synth_job *j, const synth_rank *r, const char *dir, uint64_t *bytes)
{
  (void)j;
  uint64_t cap = 1;
  while (cap < r->nrec) cap <<= 1;
  uint64_t comms_off = FRZ_RING_HEADER_SIZE;
  uint64_t slots_off = (comms_off + COMM_CAP * COMM_SIZE + 4095) & ~(uint64_t)4095;
  size_t len = (size_t)(slots_off + cap * SLOT_SIZE);
  uint8_t *p = calloc(1, len);
  if (!p) return -1;

  memcpy(p, FRZ_RING_MAGIC, 8);
  put(p, FRZ_RING_OFF_MAJOR, FRZ_RING_VERSION_MAJOR, 2);
  put(p, FRZ_RING_OFF_MINOR, FRZ_RING_VERSION_MINOR, 2);
  put(p, FRZ_RING_OFF_HEADER_SIZE, FRZ_RING_HEADER_SIZE, 4);
  put(p, FRZ_RING_OFF_FILE_SIZE, len, 8);
  put(p, FRZ_RING_OFF_SLOTS, slots_off, 8);
  put(p, FRZ_RING_OFF_CAPACITY, cap, 8);
  put(p, FRZ_RING_OFF_SLOT_SIZE, SLOT_SIZE, 4);
  put(p, FRZ_RING_OFF_COMM_SIZE, COMM_SIZE, 4);
  put(p, FRZ_RING_OFF_COMMS, comms_off, 8);
  put(p, FRZ_RING_OFF_COMM_CAPACITY, COMM_CAP, 4);
  put(p, FRZ_RING_OFF_START_TICKS, 1000 + (uint64_t)r->proc.global_rank, 8);
  memset(p + FRZ_RING_OFF_BOOT_ID, 0xff, 16);
  frz_process proc = r->proc; /* identity and anchor; trigger fields 0 */
  proc.trigger = 0;
  proc.frame = 0;
  proc.frame_time_ns = proc.trigger_time_ns = 0;
  proc.trigger_rank = 0;
  proc.trigger_latency_us = 0;
  proc.records_total = proc.records_dropped = 0;
  memset(proc.trigger_text, 0, sizeof proc.trigger_text);
  memcpy(p + FRZ_RING_OFF_PROCESS, &proc, sizeof proc);
  snprintf((char *)p + FRZ_RING_OFF_DUMP_DIR, FRZ_RING_DUMP_DIR_SIZE, "%s", dir);
  uint32_t crc = frz_crc32(0, p, FRZ_RING_OFF_CRC);
  crc = frz_crc32(crc, p + FRZ_RING_OFF_PROCESS, FRZ_RING_CHECKED_END - FRZ_RING_OFF_PROCESS);
  put(p, FRZ_RING_OFF_CRC, crc, 4);

  /* the live block: killed while running */
  uint64_t head = r->nrec ? r->rec[r->nrec - 1].id + 1 : 0;
  put(p, FRZ_RING_OFF_HEAD, head, 8);
  put(p, FRZ_RING_OFF_NCOMMS, r->ncomms, 4);
  put(p, FRZ_RING_OFF_STATE, FRZ_RING_RUNNING, 4);
  put(p, FRZ_RING_OFF_HEARTBEAT, r->proc.frame_time_ns, 8);

  for (uint32_t c = 0; c < r->ncomms; c++) {
    const frz_comm *x = &r->comms[c];
    uint8_t *e = p + comms_off + c * COMM_SIZE;
    uint64_t kept = 0; /* records ever written for it: retained + dropped */
    for (uint32_t i = 0; i < r->nrec; i++) kept += r->rec[i].comm_id == x->comm_id;
    put(e, 0, x->handle, 8);
    put(e, 8, x->comm_id, 8);
    put(e, 16, x->parent_id, 8);
    put(e, 24, x->nccl_comm_hash, 8);
    put(e, 32, (uint32_t)x->nranks, 4);
    put(e, 36, (uint32_t)x->rank, 4);
    put(e, 40, (uint32_t)x->split_color, 4);
    put(e, 44, (uint32_t)x->split_key, 4);
    put(e, 48, (uint32_t)x->cuda_device, 4);
    put(e, 52, x->flags, 4);
    put(e, 56, x->next_seq, 8);
    put(e, 80, kept + x->dropped_records, 8);
  }
  for (uint32_t i = 0; i < r->nrec; i++) {
    const frz_record *x = &r->rec[i];
    uint8_t *s = p + slots_off + (x->id & (cap - 1)) * SLOT_SIZE;
    put(s, 0, 2 * x->id + 2, 8);
    memcpy(s + 8, x, sizeof *x);
  }

  char name[300], path[4400];
  int rc = -1;
  if (frz_ring_filename(name, sizeof name, r->proc.job_id, r->proc.global_rank, r->proc.pid,
                        r->proc.host) >= 0 &&
      snprintf(path, sizeof path, "%s/%s", dir, name) < (int)sizeof path) {
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd >= 0) {
      const uint8_t *q = p;
      size_t left = len;
      while (left) {
        ssize_t n = write(fd, q, left);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        q += n;
        left -= (size_t)n;
      }
      rc = close(fd) == 0 && left == 0 ? 0 : -1;
    }
  }
  if (rc == 0 && bytes) *bytes += len;
  free(p);
  return rc;
}
