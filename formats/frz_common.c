/* frz_common.c — the dump codec's shared parts: CRC-32, error messages,
 * the lookups in a decoded dump and freeing it.
 *
 * formats/frz.md is the contract the codec implements (frz_write.c encodes,
 * frz_read.c decodes).  Nothing here prints: problems are reported through
 * frz_error as "NAME: at byte N: what".
 */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif

#include "frz_internal.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

/* ---- CRC-32 --------------------------------------------------------------
 * The 256-entry table is built by the preprocessor, so it is a constant:
 * no run-time initialisation and nothing to race on between threads. */
#define CRC_POLY 0xEDB88320u
#define CRC_BIT(c) (((c) >> 1) ^ (CRC_POLY & (0u - ((c) & 1u))))
#define CRC_BYTE(n)                                                                      \
  CRC_BIT(CRC_BIT(CRC_BIT(CRC_BIT(CRC_BIT(CRC_BIT(CRC_BIT(CRC_BIT((uint32_t)(n)))))))))
#define CRC_ROW4(n) CRC_BYTE(n), CRC_BYTE((n) + 1), CRC_BYTE((n) + 2), CRC_BYTE((n) + 3)
#define CRC_ROW16(n) CRC_ROW4(n), CRC_ROW4((n) + 4), CRC_ROW4((n) + 8), CRC_ROW4((n) + 12)
#define CRC_ROW64(n) CRC_ROW16(n), CRC_ROW16((n) + 16), CRC_ROW16((n) + 32), CRC_ROW16((n) + 48)

static const uint32_t crc_table[256] = {CRC_ROW64(0), CRC_ROW64(64), CRC_ROW64(128),
                                        CRC_ROW64(192)};

/* Slicing by 8 (eight bytes per step) for long inputs: crc_slice[k][n] is
 * the CRC register after byte n followed by k zero bytes.  Built once, on
 * first use, from crc_table. */
static uint32_t crc_slice[8][256];
static pthread_once_t crc_slice_once = PTHREAD_ONCE_INIT;

static void crc_slice_init(void)
{
  for (unsigned n = 0; n < 256; n++) {
    uint32_t c = crc_table[n];
    crc_slice[0][n] = c;
    for (unsigned k = 1; k < 8; k++) {
      c = (c >> 8) ^ crc_table[c & 0xffu];
      crc_slice[k][n] = c;
    }
  }
}

uint32_t frz_crc32(uint32_t crc, const void *buf, size_t len)
{
  const uint8_t *p = buf;
  crc = ~crc;
  if (len >= 64) {
    pthread_once(&crc_slice_once, crc_slice_init);
    for (; len >= 8; len -= 8, p += 8) {
      uint32_t lo = crc ^ ((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
                           (uint32_t)p[3] << 24);
      crc = crc_slice[7][lo & 0xffu] ^ crc_slice[6][(lo >> 8) & 0xffu] ^
            crc_slice[5][(lo >> 16) & 0xffu] ^ crc_slice[4][lo >> 24] ^ crc_slice[3][p[4]] ^
            crc_slice[2][p[5]] ^ crc_slice[1][p[6]] ^ crc_slice[0][p[7]];
    }
  }
  while (len--)
    crc = (crc >> 8) ^ crc_table[(crc ^ *p++) & 0xffu];
  return ~crc;
}

/* ---- errors -------------------------------------------------------------- */

/* Fill `err` (when given) with "NAME: at byte OFF: WHAT" (or "NAME: WHAT"
 * for FRZ_NO_OFFSET: the file as a whole, e.g. it cannot be opened) and
 * return `st`. */
frz_status frz_error_vset(frz_error *err, frz_status st, const char *name, uint64_t off,
                          const char *fmt, va_list ap)
{
  if (!err)
    return st;
  char what[400];
  vsnprintf(what, sizeof what, fmt, ap);
  err->status = st;
  err->offset = off;
  if (off == FRZ_NO_OFFSET) {
    err->offset = 0;
    snprintf(err->msg, sizeof err->msg, "%s: %s", name ? name : MEMORY_NAME, what);
  } else {
    snprintf(err->msg, sizeof err->msg, "%s: at byte %" PRIu64 ": %s", name ? name : MEMORY_NAME, off, what);
  }
  return st;
}

/* ---- lookups in a decoded dump ------------------------------------------- */

const frz_backtrace *frz_find_backtrace(const frz_dump *d, uint64_t record_id)
{
  if (!d || !d->nbacktraces)
    return NULL;
  frz_backtrace key;
  key.record_id = record_id;
  return bsearch(&key, d->backtraces, (size_t)d->nbacktraces, sizeof key, cmp_bt);
}

const frz_callsite *frz_find_callsite(const frz_dump *d, uint64_t address)
{
  if (!d || !d->ncallsites)
    return NULL;
  frz_callsite key;
  key.address = address;
  return bsearch(&key, d->callsites, d->ncallsites, sizeof key, cmp_site);
}

/* Every reader's dump (frz, ring file, PyTorch) is freed the same way. */
void frz_dump_free(frz_dump *d)
{
  if (!d)
    return;
  free(d->comms);
  free(d->records);
  free(d->callsites);
  free(d->backtraces);
  free(d->proxy);
  free(d->kernel_ch);
  free(d->stacks);
  free(d->pyframes);
  if (d->pt) {
    for (uint32_t i = 0; i < d->pt->nnames; i++) free(d->pt->names[i]);
    free(d->pt->names);
    for (uint32_t i = 0; d->pt->comms && i < d->ncomms; i++) free(d->pt->comms[i].ranks);
    free(d->pt->comms);
    free(d->pt->records);
    free(d->pt);
  }
  memset(d, 0, sizeof *d);
}
