/* frz_ring.h — the recorder's ring file (frz.md, "Ring files"): the live
 * ring, communicator table and process header of one recording process,
 * kept in a shared file mapping on a RAM-backed filesystem so that it
 * outlives the process and can be read while it runs.
 *
 * Layout (all little-endian, offsets in bytes from the file's start): a
 * 4096-byte header, the comm table at comms_offset (comm_capacity entries
 * of comm_size bytes), the slots at slots_offset (capacity slots of
 * slot_size bytes).  A slot is a u64 `ver` (0 empty, 2*id+1 being written,
 * 2*id+2 holding record `id`) then the RECORDS item of frz.md (version 3,
 * 120 bytes; since ring minor 1 version 4, 128 bytes), then bytes private to the writer.  The writer is the recorder
 * (librecorder/ring.c, comms.c, ringfile.c); this reader is the one every
 * tool uses.
 */
#ifndef FRZ_RING_H
#define FRZ_RING_H

#include <stddef.h>
#include <stdint.h>

#include "frz.h"

#ifdef __cplusplus
extern "C" {
#endif

#define FRZ_RING_MAGIC "\x89" "FRR\r\n\x1a\n"
#define FRZ_RING_VERSION_MAJOR 1
#define FRZ_RING_VERSION_MINOR 1 /* 1: slots hold RECORDS items of version 4 */
#define FRZ_RING_HEADER_SIZE 4096
#define FRZ_RING_SLOT_MIN 128     /* ver + the 120-byte record (minor 0) */
#define FRZ_RING_SLOT_MIN_V4 136  /* ver + the 128-byte record (minor 1) */
#define FRZ_RING_COMM_MIN 88      /* the public part of a comm entry */
#define FRZ_RING_SUFFIX ".ring"   /* fr-<job>-r<rank:05>-p<pid>@<host>.ring */
#define FRZ_RING_PREFIX "fr-"

/* Header offsets (frz.md, "Ring file header"). */
enum {
  FRZ_RING_OFF_MAJOR = 8, FRZ_RING_OFF_MINOR = 10, FRZ_RING_OFF_HEADER_SIZE = 12,
  FRZ_RING_OFF_FILE_SIZE = 16, FRZ_RING_OFF_SLOTS = 24, FRZ_RING_OFF_CAPACITY = 32,
  FRZ_RING_OFF_SLOT_SIZE = 40, FRZ_RING_OFF_COMM_SIZE = 44, FRZ_RING_OFF_COMMS = 48,
  FRZ_RING_OFF_COMM_CAPACITY = 56, FRZ_RING_OFF_START_TICKS = 64, FRZ_RING_OFF_BOOT_ID = 72,
  FRZ_RING_OFF_CRC = 124,
  /* the live block, written by the process while it runs */
  FRZ_RING_OFF_HEAD = 128, FRZ_RING_OFF_NCOMMS = 192, FRZ_RING_OFF_STATE = 196,
  FRZ_RING_OFF_EXIT_STATUS = 200, FRZ_RING_OFF_SIGNAL = 204, FRZ_RING_OFF_FRAMES = 208,
  FRZ_RING_OFF_FLAGS = 212, FRZ_RING_OFF_HEARTBEAT = 216, FRZ_RING_OFF_END = 224,
  FRZ_RING_OFF_PROCESS = 256, FRZ_RING_PROCESS_SIZE = 352,
  FRZ_RING_OFF_DUMP_DIR = 608, FRZ_RING_DUMP_DIR_SIZE = 512, /* the process's FR_DUMP_DIR */
  FRZ_RING_CHECKED_END = 1120 /* the CRC covers [0, 124) and [256, 1120) */
};

/* The process's state as it last wrote it (header `state`). */
enum {
  FRZ_RING_RUNNING = 1, /* recording; a file in this state whose process is gone was killed */
  FRZ_RING_EXITED = 2,  /* exit() called with a non-zero status (exit_status) */
  FRZ_RING_CRASHED = 3  /* a fatal signal reached the recorder's handler (fatal_signal) */
};

/* What a ring file says beyond the dump it decodes to. */
typedef struct frz_ring_info {
  uint16_t version_major, version_minor;
  uint32_t state;            /* FRZ_RING_* */
  int32_t exit_status;       /* with EXITED */
  int32_t fatal_signal;      /* with CRASHED */
  uint32_t frames;           /* dumps the process wrote itself */
  uint64_t heartbeat_ns;     /* CLOCK_MONOTONIC of the watchdog's last poll; 0 none */
  uint64_t end_ns;           /* CLOCK_MONOTONIC of the exit or fatal signal; 0 none */
  uint64_t start_ticks;      /* the process's start time (/proc/PID/stat field 22) */
  uint8_t boot_id[16];       /* the host's boot id when the file was made */
  uint64_t capacity, head;   /* slots; next record id */
  uint64_t skipped;          /* slots of the window not read: torn, half-written or implausible */
  char dump_dir[FRZ_RING_DUMP_DIR_SIZE]; /* the process's FR_DUMP_DIR (absolute when known) */
} frz_ring_info;

/* Is buf the start of a ring file (its magic)? */
int frz_ring_is_magic(const void *buf, size_t len);

/* Decode a ring file image of `len` bytes (a read-only mapping of a live
 * file, or a copy) into `out` as a dump: the process header (trigger NONE,
 * frame_time_ns = the last sign of life), the comms with their
 * seqs summarised from the records, the records still in the ring in id
 * order (a slot changed while it was copied is skipped, never torn).  The
 * header's checked part (CRC-32) and every size and offset are validated:
 * a file truncated, damaged or of a newer major is refused with `name` and
 * the offset in err.  buf must be 8-byte aligned. */
frz_status frz_ring_decode(const void *buf, size_t len, const char *name, frz_dump *out,
                           frz_ring_info *info, frz_error *err);

/* Open `path` (no symlink followed, a regular file owned by the caller's
 * user only), map it read-only and decode it.  Then make it a dump of
 * trigger `salvaged` when its process is gone (frz_ring_gone) or
 * `snapshot` when it still runs, with frame = the frames it wrote itself
 * and a text that says which; the process flag STATES_STALE when its
 * records were not stamped as it ended or stopped (killed, a fatal signal,
 * a watchdog that cannot run).  *gone (may be NULL) gets 1 or 0. */
frz_status frz_ring_read_file(const char *path, frz_dump *out, frz_ring_info *info, int *gone,
                              frz_error *err);

/* Has the process of a decoded ring gone (pid absent, a reused pid with
 * another start time, or another boot)?  1 gone, 0 running. */
int frz_ring_gone(const frz_process *p, const frz_ring_info *info);

/* Can the recorder's watchdog thread of process `pid` (the thread named
 * "fr-watchdog") not run: stopped (/proc state T or t), in the kernel
 * uninterruptibly (D), or a zombie (Z)?  1 yes, 0 no or not known. */
int frz_ring_watchdog_stuck(uint32_t pid);

/* "killed, no exit seen (SIGKILL, the OOM killer or a launcher)", "exited
 * with status 1", "fatal signal 11 (SIGSEGV)" into buf. */
void frz_ring_death_text(const frz_ring_info *info, char *buf, size_t size);

/* Salvage the ring file at `path` whose process is gone: decode it and
 * write it as the dump <job>-r<rank>-f<frame>.frz (trigger `salvaged`) into
 * `outdir`, or, when outdir is NULL, into the dump directory its header
 * names; then remove the ring file unless `keep`.  The dump's path goes to
 * `written`.  Returns FRZ_OK; FRZ_E_INVALID (err says so) when the process
 * still runs: nothing is written; another status when the file cannot be
 * read or the dump written. */
frz_status frz_ring_salvage(const char *path, const char *outdir, int keep, char *written,
                            size_t wlen, frz_dump *out, frz_error *err);

/* frz_ring_salvage for a process whose parent saw it die by signal `sig`
 * (fr-record): when the ring says it was killed with no exit seen, the
 * dump's text names the signal.  sig 0: frz_ring_salvage. */
frz_status frz_ring_salvage_signal(const char *path, const char *outdir, int keep, int sig,
                                   char *written, size_t wlen, frz_dump *out, frz_error *err);

/* The ring file name "fr-<job>-r<rank:05>-p<pid>@<host>.ring" (job and
 * host characters outside [A-Za-z0-9._+-] become '_').  Length, or -1. */
int frz_ring_filename(char *buf, size_t size, const char *job_id, int32_t global_rank,
                      uint32_t pid, const char *host);
int frz_ring_is_name(const char *name);

/* This host's boot id (/proc/sys/kernel/random/boot_id) as 16 bytes, and
 * the start time of process `pid` in clock ticks since boot (/proc/PID/stat
 * field 22); 0 / -1 when unknown. */
int frz_boot_id(uint8_t out[16]);
uint64_t frz_process_start_ticks(uint32_t pid);

/* The comms' derived seqs (first_retained_seq, last_*_seq, dropped_records)
 * from the retained records, as a dump holds them: on entry each comm has
 * comm_id, rank, next_seq, and dropped_records = records ever written for
 * it.  Shared by the recorder's dumps and the ring reader.  0, or -1 when
 * memory is short. */
int frz_comms_summarize(frz_comm *comms, uint32_t nc, const frz_record *recs, uint64_t n);

#ifdef __cplusplus
}
#endif
#endif /* FRZ_RING_H */
