/* fr_dump.h — the parts of fr-dump: text and JSON renderings of one decoded
 * dump, and the trigger file that asks a live job to dump. */
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
 * control characters and invalid UTF-8 replaced by '?'.  Returns out. */
char *fd_sanitize(const char *in, size_t inlen, char *out, size_t outlen);

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

#endif /* FR_DUMP_H */
