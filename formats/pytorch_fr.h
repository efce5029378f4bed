/* pytorch_fr.h — read PyTorch Flight Recorder dumps (one file per rank, as
 * written by ProcessGroupNCCL on a watchdog timeout or through its dump API)
 * into flightrec's model: one frz_dump per file.
 *
 * Both forms are read: the pickle (protocol 2, plain containers only,
 * nothing executed) and the JSON form, for Flight Recorder format versions
 * 2.0 up to 2.10 (fields a version lacks get "unknown" values).  Mapping
 * (frz(5), "PyTorch Flight Recorder import"):
 *   - the file is one process: its global rank comes from the content where
 *     possible (a "rank" field; a p2p profiling name "nccl:send A->B" gives
 *     comm rank A of a process group whose ranks are listed in pg_config; a
 *     one-member group), else from the trailing integer of the file name;
 *   - each process group (pg_config) is a communicator whose comm_id hashes
 *     the group's name and rank list, so it is equal on every member;
 *   - collective_seq_id is the collective seq; Send/Recv get a per (comm,
 *     peer, direction) seq counted in record order, from 0;
 *   - states scheduled/started/completed become enqueued/started/completed;
 *     times are wall clock, so the clock anchors map realtime 1:1.
 */
#ifndef FR_PYTORCH_FR_H
#define FR_PYTORCH_FR_H

#include <stddef.h>

#include "frz.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What a file looks like from its first bytes. */
typedef enum {
  FRZ_PT_NONE = 0,   /* neither */
  FRZ_PT_PICKLE = 1, /* starts with a pickle PROTO opcode */
  FRZ_PT_JSON = 2    /* starts (after blanks) with '{' */
} frz_pt_form;

frz_pt_form frz_pytorch_sniff(const void *buf, size_t len);

/* Oldest and newest Flight Recorder format versions this importer knows. */
#define FRZ_PT_VERSION_MIN_MINOR 0
#define FRZ_PT_VERSION_MAX_MINOR 10

/* p2p seqs of imported records are aligned at this value: the first op of
 * a (comm, peer, direction) that did not complete gets it (pytorch_ops.c). */
#define FRZ_PT_P2P_BASE ((uint64_t)1 << 32)

/* Convert one PyTorch FR file image into *out.  `name` is used in error
 * messages and, when the content does not say, for the rank (the trailing
 * integer of its last path component).  Errors name the file and the byte
 * offset: FRZ_E_MAGIC (not a pickle or JSON), FRZ_E_TRUNCATED, FRZ_E_CORRUPT
 * (malformed, or not a Flight Recorder dump), FRZ_E_VERSION (a format
 * version newer than 2.10), FRZ_E_NOMEM.  On error *out is left empty. */
frz_status frz_import_pytorch(const void *buf, size_t len, const char *name, frz_dump *out,
                              frz_error *err);

/* Read the file at `path` and convert it. */
frz_status frz_import_pytorch_file(const char *path, frz_dump *out, frz_error *err);

/* The trailing decimal integer of the last component of `path`, after
 * dropping one extension without digits ("host12-rank7.pickle" -> 7,
 * "node13-gpu7.nccl_trace_rank_5" -> 5); -1 when there is none. */
long frz_pytorch_rank_from_name(const char *path);

/* Which readers a tool tries on a file. */
typedef enum {
  FRZ_INPUT_AUTO = 0,   /* frz; a file that is not frz (bad magic) but looks like a
                           pickle or JSON is read as a PyTorch FR dump */
  FRZ_INPUT_FRZ = 1,    /* frz only */
  FRZ_INPUT_PYTORCH = 2 /* PyTorch FR only */
} frz_input_format;

/* Parse "auto", "frz" or "pytorch"; -1 if none of them. */
int frz_input_format_from_name(const char *name);

/* Read the file at `path` in format `f`, like frz_read_file.  In auto mode
 * a file that is neither keeps frz_read_file's error (FRZ_E_MAGIC). */
frz_status frz_read_any_file(const char *path, frz_input_format f, frz_dump *out, frz_error *err);

/* Read a whole file into a new buffer (at most `max` bytes; larger files
 * are refused).  Used by both dump readers' file front ends. */
frz_status frz_slurp_file(const char *path, size_t max, void **buf, size_t *len, frz_error *err);

#ifdef __cplusplus
}
#endif
#endif /* FR_PYTORCH_FR_H */
