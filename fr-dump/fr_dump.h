/* fr_dump.h — the parts of fr-dump: text, JSON and Chrome-trace renderings
 * of decoded dumps, their validation, the expansion of directories into
 * files, and the trigger file that asks a live job to dump. */
#ifndef FR_DUMP_H
#define FR_DUMP_H

#include <stddef.h>
#include <stdio.h>

#include "frz.h"

/* Print dump `d` (read from file `name`) as readable text.  Returns 0, or -1
 * on a write error. */
int fd_print_text(FILE *out, const char *name, const frz_dump *d);

/* Dump `d` (from file `name`) as a JSON object (a cJSON *, returned as void *
 * so this header needs no cJSON), or NULL when out of memory. */
void *fd_dump_json(const char *name, const frz_dump *d);

/* Copy `in` (at most `inlen` bytes, stopping at a NUL) into `out` with
 * control characters, invalid UTF-8 and bidirectional controls replaced by
 * '?' (frz_sanitize).  Returns out. */
char *fd_sanitize(const char *in, size_t inlen, char *out, size_t outlen);

/* Names of the flag bits of comms (FRZ_CF_*), records (FRZ_RF_*) and
 * threads (FRZ_TF_*), bit 0 first. */
#define FD_NCOMM_FLAGS 10
#define FD_NREC_FLAGS 10
#define FD_NTHREAD_FLAGS 5
extern const char *const fd_comm_flag_names[FD_NCOMM_FLAGS];
extern const char *const fd_rec_flag_names[FD_NREC_FLAGS];
extern const char *const fd_thread_flag_names[FD_NTHREAD_FLAGS];

/* The call-site table's name of address `addr`: "module!symbol+0xOFF",
 * "module+0xOFF", or "0xADDR" when the dump has no name for it; sanitised,
 * in buf.  Returns buf. */
const char *fd_site_name(const frz_dump *d, uint64_t addr, char *buf, size_t len);

/* "send", "recv", "none", or "unknown" for a value this reader does not know. */
const char *fd_dir_name(unsigned dir);

/* A thread's Python frames: items [start, start + len) of the dump's
 * PYFRAMES, all of one thread handle. */
typedef struct fd_pyrun {
  uint64_t handle;
  uint32_t start, len;
} fd_pyrun;
typedef struct fd_pyindex {
  fd_pyrun *runs; /* sorted by handle, then start */
  uint32_t n;
} fd_pyindex;
/* At most this many Python frames are shown per thread. */
#define FD_PY_MAX 256

/* Index the runs of d's PYFRAMES.  Returns 0, or -1 when out of memory. */
int fd_pyindex_build(const frz_dump *d, fd_pyindex *ix);
/* The first run of thread `handle`; NULL for none (or handle 0). */
const fd_pyrun *fd_pyindex_find(const fd_pyindex *ix, uint64_t handle);
void fd_pyindex_free(fd_pyindex *ix);

/* Ring files (salvage.c): FR_RING_DIR or /dev/shm; --salvage of the ring
 * files of args (files or directories; none: the ring directory) whose
 * process is gone, into outdir (NULL: each one's dump directory), removed
 * unless keep: 0 some salvaged, 1 none, 2 an unreadable file; --snapshot
 * of a pid or ring file; and the snapshots of the processes writing into
 * dumpdir whose watchdog cannot run (stopped): how many. */
const char *fd_ring_dir(void);
int fd_salvage(char **args, int nargs, const char *outdir, int keep);
int fd_snapshot(const char *what, const char *outdir, char *written, size_t wlen);
int fd_snapshot_stuck(const char *dumpdir);

/* Result of fd_trigger. */
enum { FD_TRIGGER_CREATED = 0, FD_TRIGGER_EXISTS = 1 /* replaced an earlier one */, FD_TRIGGER_ERROR = -1 };

/* The reason text as it goes into the trigger file: line breaks and tabs
 * turned into spaces, other control characters removed, at most
 * FD_REASON_MAX bytes (cut at a character boundary). */
#define FD_REASON_MAX 200
void fd_trigger_reason(const char *reason, char *out, size_t outlen);

/* Create DIR/TRIGGER atomically (never replacing an existing one) with the
 * line "flightrec-trigger v1 rank=-1 time_ns=... reason=...".  On error,
 * `err` receives a message.  Returns an FD_TRIGGER_* value. */
int fd_trigger(const char *dir, const char *reason, char *err, size_t errlen);

/* Who watches `dir`, from the recorders' announcements in it: one sentence
 * in `out` ("4 ranks of job J (8 ranks in all) watch this directory: ...",
 * or why nobody does).  Returns how many ranks of the newest job that
 * watches the trigger file are listening (0: nobody); *all_gone is 1 when
 * nobody does because every process that announced itself here and can be
 * checked is no longer running (a job that died: its dumps are its last). */
int fd_listeners(const char *dir, char *out, size_t len, int *all_gone);
/* When `dir` holds no announcement but a subdirectory does (a job's output
 * directory, its dumps in dumps/): the one with the most, in sub, and how
 * many; 0 otherwise. */
int fd_listeners_below(const char *dir, char *sub, size_t len);

/* One decoded input file. */
typedef struct fd_input {
  const char *name; /* as given, or DIR/NAME for a directory's file */
  frz_dump dump;
} fd_input;

/* Every regular file of a directory (names starting with '.' and the
 * trigger file left out), sorted, as malloc'd "DIR/NAME" strings appended
 * to *paths (*n entries, grown with realloc).  Returns 0, or -1 with errno
 * set (opendir or out of memory). */
int fd_list_dir(const char *dir, char ***paths, size_t *n);

/* Problems that make a decoded dump unusable (records out of order or naming
 * a comm missing from the comm table, values out of range, times out of
 * order): their number; the first one is described in msg. */
unsigned fd_check(const frz_dump *d, char *msg, size_t len);

/* All of in[0..n) as one Chrome Trace Event Format document (one process
 * per rank, one track per communicator, wall-clock aligned).  Returns 0, or
 * -1 on a write error or when out of memory. */
int fd_chrome_trace(FILE *out, const fd_input *in, size_t n);

#endif /* FR_DUMP_H */
