/* ringfile.c — the ring, the comm table and the process header in a shared
 * file mapping (frz.md, "Ring files"), so that they outlive the process: a
 * rank killed by SIGKILL, torn down by its launcher or stopped leaves its
 * last records in FR_RING_DIR (default /dev/shm), where fr-dump --salvage
 * and --snapshot read them from outside.
 *
 * Made once, when the process creates its first communicator (processes
 * that never use NCCL make none), by the thread that creates it: the file
 * is created 0600 without following a symlink, its pages reserved with
 * posix_fallocate (a full tmpfs fails here, never later as a SIGBUS in the
 * job), mapped, filled with the header, and the ring and the comm table
 * move into it (fr_ring_adopt, fr_comms_adopt).  The writes after that are
 * those of private memory: the same stores, the same cost per call.  Any
 * failure leaves the ring in private memory with one line on stderr.
 *
 * Removed at a clean exit (status 0); kept, with the state said in its
 * header, when the process exits with another status or a fatal signal
 * reaches the recorder, and of course when it is killed.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "frz_ring.h"
#include "recorder.h"

/* The layout this writer's structures give the file, checked against the
 * spec's offsets: a slot is ver + the RECORDS item; a comm entry is
 * fr_comm; the process block is frz_process. */
_Static_assert(offsetof(fr_slot, rec) == 8, "slot: record at 8");
_Static_assert(sizeof(frz_record) == FRZ_RECORD_ITEM_SIZE_V4, "record item: 128 bytes");
_Static_assert(offsetof(frz_record, flags) == 96 && offsetof(frz_record, comm_rank) == 116 &&
                   offsetof(frz_record, replay) == 120 && offsetof(frz_record, graph_ops) == 95,
               "record item offsets");
_Static_assert(sizeof(fr_slot) % 8 == 0 && sizeof(fr_slot) >= FRZ_RING_SLOT_MIN_V4, "slot size");
_Static_assert(offsetof(fr_comm, comm_id) == 8 && offsetof(fr_comm, nccl_hash) == 24 &&
                   offsetof(fr_comm, nranks) == 32 && offsetof(fr_comm, cuda_device) == 48 &&
                   offsetof(fr_comm, flags) == 52 && offsetof(fr_comm, next_seq) == 56 &&
                   offsetof(fr_comm, nrecords) == 80 && sizeof(fr_comm) == 96,
               "comm entry offsets");
_Static_assert(sizeof(frz_process) == FRZ_RING_PROCESS_SIZE &&
                   offsetof(frz_process, trigger_text) == 224,
               "process block");

#define HEADER FRZ_RING_HEADER_SIZE

static uint8_t *map;          /* the mapping; NULL: private memory */
static size_t map_len;
static char path[720];
static uint32_t owner_pid;    /* a forked child shares the mapping: it writes nothing */
static int exit_status = -1;  /* from on_exit; -1: not seen */

static void put32(size_t off, uint32_t v) { __atomic_store_n((uint32_t *)(void *)(map + off), v, __ATOMIC_RELEASE); }
static void put64(size_t off, uint64_t v) { __atomic_store_n((uint64_t *)(void *)(map + off), v, __ATOMIC_RELEASE); }

static int mine(void) { return map && owner_pid == (uint32_t)getpid(); }

/* Fill the header: layout, identity (CRC'd), live block. */
static void fill_header(uint64_t cap, uint64_t comms_off, uint64_t slots_off) {
  memcpy(map, FRZ_RING_MAGIC, 8);
  uint16_t v[2] = {FRZ_RING_VERSION_MAJOR, FRZ_RING_VERSION_MINOR};
  memcpy(map + FRZ_RING_OFF_MAJOR, v, sizeof v);
  uint32_t hs = HEADER, ss = sizeof(fr_slot), cs = sizeof(fr_comm), ccap = FR_MAX_COMMS;
  uint64_t fs = map_len;
  memcpy(map + FRZ_RING_OFF_HEADER_SIZE, &hs, 4);
  memcpy(map + FRZ_RING_OFF_FILE_SIZE, &fs, 8);
  memcpy(map + FRZ_RING_OFF_SLOTS, &slots_off, 8);
  memcpy(map + FRZ_RING_OFF_CAPACITY, &cap, 8);
  memcpy(map + FRZ_RING_OFF_SLOT_SIZE, &ss, 4);
  memcpy(map + FRZ_RING_OFF_COMM_SIZE, &cs, 4);
  memcpy(map + FRZ_RING_OFF_COMMS, &comms_off, 8);
  memcpy(map + FRZ_RING_OFF_COMM_CAPACITY, &ccap, 4);
  uint64_t ticks = frz_process_start_ticks((uint32_t)getpid());
  memcpy(map + FRZ_RING_OFF_START_TICKS, &ticks, 8);
  frz_boot_id(map + FRZ_RING_OFF_BOOT_ID);
  frz_process p = fr_g.proc;
  p.anchor_monotonic_ns = fr_now_ns();
  p.anchor_realtime_ns = fr_realtime_ns();
  memcpy(map + FRZ_RING_OFF_PROCESS, &p, sizeof p);
  uint32_t crc = frz_crc32(0, map, FRZ_RING_OFF_CRC);
  char *dd = realpath(fr_g.cfg.dump_dir, NULL); /* the salvager may run elsewhere */
  snprintf((char *)map + FRZ_RING_OFF_DUMP_DIR, FRZ_RING_DUMP_DIR_SIZE, "%s", dd ? dd : fr_g.cfg.dump_dir);
  free(dd);
  crc = frz_crc32(crc, map + FRZ_RING_OFF_PROCESS, FRZ_RING_CHECKED_END - FRZ_RING_OFF_PROCESS);
  memcpy(map + FRZ_RING_OFF_CRC, &crc, 4);
  put32(FRZ_RING_OFF_STATE, FRZ_RING_RUNNING);
}

/* One line, and the ring stays where it is. */
static void give_up(const char *what, int err) {
  fr_log("ring file %s: %s: %s; the ring stays in private memory (a killed process leaves no "
         "records to salvage)", path, what, strerror(err));
}

void fr_ringfile_open(void) {
  if (fr_g.cfg.ring_dir[0] == '\0') return; /* FR_RING_DIR=none */
#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
  return; /* the file is little-endian: its layout is the writer's memory */
#endif
  const char *dir = fr_g.cfg.ring_dir;
  char name[300];
  if (frz_ring_filename(name, sizeof name, fr_g.proc.job_id, fr_g.proc.global_rank,
                        fr_g.proc.pid, fr_g.proc.host) < 0)
    return;
  if (snprintf(path, sizeof path, "%s/%s", dir, name) >= (int)sizeof path - 8) return;
  if (fr_ensure_dump_dir(dir) != 0) {
    give_up("cannot create or open its directory", errno);
    return;
  }
  /* a leftover of an earlier process with the same pid is evidence: keep
   * it, and take the next free name */
  int fd = -1;
  for (int k = 0; k < 10 && fd < 0; k++) {
    if (k) {
      size_t n = strlen(path) - strlen(FRZ_RING_SUFFIX);
      snprintf(path + n, sizeof path - n, ".%d" FRZ_RING_SUFFIX, k);
    }
    fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0 && errno != EEXIST) break;
  }
  if (fd < 0) {
    give_up("cannot create it", errno);
    return;
  }
  uint64_t cap = fr_g.ring.capacity;
  uint64_t comms_off = HEADER, slots_off = comms_off + (uint64_t)FR_MAX_COMMS * sizeof(fr_comm);
  slots_off = (slots_off + 4095) & ~(uint64_t)4095;
  map_len = (size_t)(slots_off + cap * sizeof(fr_slot));
  int e = posix_fallocate(fd, 0, (off_t)map_len); /* every page now, or an error now */
  void *m = e ? MAP_FAILED : mmap(NULL, map_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (m == MAP_FAILED) {
    if (!e) e = errno;
    close(fd);
    unlink(path);
    give_up(e == ENOSPC ? "no room for its pages" : "cannot reserve or map its pages", e);
    return;
  }
  close(fd);
  map = m;
  owner_pid = (uint32_t)getpid();
  fill_header(cap, comms_off, slots_off);
  fr_comms_adopt((fr_comm *)(void *)(map + comms_off), (_Atomic uint32_t *)(void *)(map + FRZ_RING_OFF_NCOMMS));
  fr_ring_adopt(&fr_g.ring, (fr_slot *)(void *)(map + slots_off), (_Atomic uint64_t *)(void *)(map + FRZ_RING_OFF_HEAD));
}

void fr_ringfile_salvage_neighbours(void) {
  if (!mine()) return;
  const char *dir = fr_g.cfg.ring_dir;
  char prefix[200];
  const char *base = strrchr(path, '/') + 1;
  /* the job's files: "fr-<job>-r" */
  int n = frz_ring_filename(prefix, sizeof prefix, fr_g.proc.job_id, 0, 0, "x");
  if (n < 0) return;
  prefix[n - (int)strlen("00000-p0@x" FRZ_RING_SUFFIX)] = '\0';
  DIR *dp = opendir(dir);
  if (!dp) return;
  struct dirent *de;
  while ((de = readdir(dp)) != NULL) {
    if (strncmp(de->d_name, prefix, strlen(prefix)) != 0 || !strcmp(de->d_name, base) ||
        !frz_ring_is_name(de->d_name))
      continue;
    char p[1200], written[1200];
    snprintf(p, sizeof p, "%s/%s", dir, de->d_name);
    frz_dump d;
    frz_error e;
    if (frz_ring_salvage(p, NULL, 0, written, sizeof written, &d, &e) == FRZ_OK)
      fr_log("salvaged the ring file of rank %d (pid %u, %s) into %s", d.process.global_rank,
             d.process.pid, d.process.trigger_text, written);
    frz_dump_free(&d);
  }
  closedir(dp);
}

const char *fr_ringfile_path(void) { return map ? path : NULL; }

void fr_ringfile_heartbeat(uint64_t now) {
  if (mine()) put64(FRZ_RING_OFF_HEARTBEAT, now);
}

void fr_ringfile_frames(uint32_t frames) {
  if (!mine()) return;
  uint32_t old = __atomic_load_n((uint32_t *)(void *)(map + FRZ_RING_OFF_FRAMES), __ATOMIC_RELAXED);
  if (frames > old) put32(FRZ_RING_OFF_FRAMES, frames);
  put32(FRZ_RING_OFF_FLAGS, atomic_load_explicit(&fr_g.late_flags, memory_order_relaxed));
}

void fr_ringfile_crash(int sig) { /* async-signal-safe: stores only */
  if (!mine()) return;
  put32(FRZ_RING_OFF_SIGNAL, (uint32_t)sig);
  put64(FRZ_RING_OFF_END, fr_now_ns());
  put32(FRZ_RING_OFF_STATE, FRZ_RING_CRASHED);
}

void fr_ringfile_exit(int status) {
  exit_status = status;
  if (!mine() || status == 0) return;
  put32(FRZ_RING_OFF_EXIT_STATUS, (uint32_t)status);
  put64(FRZ_RING_OFF_END, fr_now_ns());
  put32(FRZ_RING_OFF_STATE, FRZ_RING_EXITED);
}

void fr_ringfile_close(void) {
  if (!mine()) return;
  /* a clean exit (status 0, or the library unloaded without exit): no
   * longer needed; after a failure it stays for salvage */
  if (exit_status <= 0 &&
      __atomic_load_n((uint32_t *)(void *)(map + FRZ_RING_OFF_STATE), __ATOMIC_ACQUIRE) == FRZ_RING_RUNNING)
    unlink(path);
}
