/* frz_internal.h — what the parts of the dump codec share (private, not
 * installed): frz_common.c (CRC-32, error messages, lookups), frz_write.c
 * (encoder, atomic file write) and frz_read.c (decoder, file reading).
 * Include it after defining _GNU_SOURCE (errstr uses the GNU strerror_r).
 */
#ifndef FRZ_INTERNAL_H
#define FRZ_INTERNAL_H

#include "frz.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define MEMORY_NAME "<memory>"

__attribute__((format(printf, 5, 6))) static inline frz_status
fail(frz_error *err, frz_status st, const char *name, uint64_t off, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  frz_error_vset(err, st, name, off, fmt, ap);
  va_end(ap);
  return st;
}

static inline void set_ok(frz_error *err)
{
  if (err) {
    err->status = FRZ_OK;
    err->offset = 0;
    err->msg[0] = '\0';
  }
}

/* Thread-safe strerror into a caller buffer (GNU strerror_r). */
static inline const char *errstr(int e, char *buf, size_t size)
{
  return strerror_r(e, buf, size);
}

/* qsort and bsearch orders: backtraces by record id, call sites by address. */
static inline int cmp_bt(const void *a, const void *b)
{
  uint64_t x = ((const frz_backtrace *)a)->record_id, y = ((const frz_backtrace *)b)->record_id;
  return (x > y) - (x < y);
}

static inline int cmp_site(const void *a, const void *b)
{
  uint64_t x = ((const frz_callsite *)a)->address, y = ((const frz_callsite *)b)->address;
  return (x > y) - (x < y);
}

/* ---- little-endian get --------------------------------------------------- */

static inline uint8_t get8(const uint8_t *p, size_t off) { return p[off]; }

static inline uint16_t get16(const uint8_t *p, size_t off)
{
  return (uint16_t)(p[off] | (uint16_t)p[off + 1] << 8);
}

static inline uint32_t get32(const uint8_t *p, size_t off)
{
  uint32_t v = 0;
  for (int i = 3; i >= 0; i--)
    v = v << 8 | p[off + (size_t)i];
  return v;
}

static inline uint64_t get64(const uint8_t *p, size_t off)
{
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--)
    v = v << 8 | p[off + (size_t)i];
  return v;
}

/* Load a fixed NUL-padded field, forcing termination and zeroing the tail. */
static inline void get_str(char *dst, const uint8_t *p, size_t off, size_t size)
{
  size_t n = strnlen((const char *)p + off, size - 1);
  memcpy(dst, p + off, n);
  memset(dst + n, 0, size - n);
}

/* The PROCESS item (352 bytes) and the RECORDS item of version 3 (120
 * bytes) or 4 (136 bytes) of frz.md at p; the ring file holds the same
 * items (version 4 since ring minor 1). */
void frz_item_process(const uint8_t *p, frz_process *s);
void frz_item_record(const uint8_t *p, frz_record *r);
void frz_item_record_v4(const uint8_t *p, frz_record *r);

#endif /* FRZ_INTERNAL_H */
