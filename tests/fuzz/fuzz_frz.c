/* tests/fuzz/fuzz_frz.c: the frz codec's reader (frz_decode) on arbitrary
 * bytes, twice: as given (header, section table, checksums, zstd frames),
 * and repacked, so that mutations reach the item parsers behind the
 * checksums: each section's stored bytes (decompressed when they are a
 * valid zstd frame, else taken as they are, then fitted to the table's item
 * count and size) are compressed again, and the offsets, lengths and
 * checksums of the table are made consistent. */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "frz.h"
#include "fuzz.h"

#define HDR_MIN 32u
#define ENTRY_MIN 48u
#define MAX_SECTIONS 64u
#define MAX_RAW (4u << 20)

/* Little-endian accessors on a byte buffer. */
static uint32_t get32(const uint8_t *p)
{
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t get64(const uint8_t *p)
{
  return (uint64_t)get32(p) | (uint64_t)get32(p + 4) << 32;
}

static void put32(uint8_t *p, uint32_t v)
{
  for (int i = 0; i < 4; i++)
    p[i] = (uint8_t)(v >> (8 * i));
}

static void put64(uint8_t *p, uint64_t v)
{
  put32(p, (uint32_t)v);
  put32(p + 4, (uint32_t)(v >> 32));
}

/* Decode, then make every lookup a tool makes on the result. */
static void decode_and_walk(const uint8_t *data, size_t size)
{
  frz_dump d;
  frz_error err;
  if (frz_decode(data, size, "fuzz.frz", &d, &err) != FRZ_OK)
    return;
  for (uint64_t r = 0; r < d.nrecords; r++) {
    const frz_record *rec = &d.records[r];
    (void)frz_find_backtrace(&d, rec->id);
    (void)frz_find_callsite(&d, rec->call_site);
    (void)frz_op_name(rec->op);
    (void)frz_dtype_name(rec->dtype);
    (void)frz_redop_name(rec->redop);
    (void)frz_state_name(rec->state);
  }
  frz_dump_free(&d);
}

/* The repacked image of `data` (see the top of the file) in a new buffer,
 * or NULL when its header or table is not plausible enough to repack. */
static uint8_t *repack(const uint8_t *data, size_t size, size_t *out_len)
{
  if (size < HDR_MIN || memcmp(data, "\x89" "FRZ\r\n\x1a\n", 8) != 0)
    return NULL;
  uint32_t hs = get32(data + 12), n = get32(data + 16), es = get32(data + 20);
  if (hs < HDR_MIN || es < ENTRY_MIN || n > MAX_SECTIONS)
    return NULL;
  uint64_t table_end = (uint64_t)hs + (uint64_t)n * es;
  if (table_end + 4 > size)
    return NULL;
  size_t cap = (size_t)table_end + 4, len = cap;
  uint8_t *out = malloc(cap);
  if (!out)
    return NULL;
  memcpy(out, data, (size_t)table_end);
  static ZSTD_CCtx *cc; /* one for the process: creating it per input is slow */
  if (!cc) {
    cc = ZSTD_createCCtx();
    if (!cc || ZSTD_isError(ZSTD_CCtx_setParameter(cc, ZSTD_c_checksumFlag, 1)) ||
        ZSTD_isError(ZSTD_CCtx_setParameter(cc, ZSTD_c_compressionLevel, 1))) {
      ZSTD_freeCCtx(cc);
      cc = NULL;
      free(out);
      return NULL;
    }
  }
  for (uint32_t i = 0; i < n; i++) {
    uint8_t *e = out + hs + (size_t)i * es;
    uint64_t off = get64(e + 8), stored = get64(e + 16);
    /* The stored bytes, clamped to the input. */
    const uint8_t *src = data;
    size_t slen = 0;
    if (off < size) {
      src = data + off;
      slen = stored < size - off ? (size_t)stored : size - (size_t)off;
    }
    void *raw = NULL;
    size_t rlen = slen;
    unsigned long long want = ZSTD_getFrameContentSize(src, slen);
    if (want != ZSTD_CONTENTSIZE_ERROR && want != ZSTD_CONTENTSIZE_UNKNOWN && want <= MAX_RAW) {
      raw = malloc(want ? (size_t)want : 1);
      size_t got = raw ? ZSTD_decompress(raw, (size_t)want, src, slen) : 0;
      if (raw && !ZSTD_isError(got) && got == want)
        rlen = got;
      else {
        free(raw);
        raw = NULL;
      }
    }
    /* Fit the content to the table's item_count x item_size (cut or padded
     * with zeros) so that the items themselves get parsed. */
    uint64_t items = get64(e + 32) * get32(e + 40);
    if (get32(e + 40) && items / get32(e + 40) == get64(e + 32) && items <= MAX_RAW &&
        items != rlen) {
      uint8_t *fit = calloc(1, items ? (size_t)items : 1);
      if (fit) {
        memcpy(fit, raw ? raw : src, rlen < items ? rlen : (size_t)items);
        free(raw);
        raw = fit;
        rlen = (size_t)items;
      }
    }
    const void *plain = raw ? raw : src;
    size_t bound = ZSTD_compressBound(rlen);
    uint8_t *p = realloc(out, len + bound);
    if (!p) {
      free(raw);
      free(out);
      return NULL;
    }
    out = p;
    e = out + hs + (size_t)i * es;
    size_t clen = ZSTD_compress2(cc, out + len, bound, plain, rlen);
    free(raw);
    if (ZSTD_isError(clen)) {
      free(out);
      return NULL;
    }
    put64(e + 8, len);
    put64(e + 16, clen);
    put64(e + 24, rlen);
    put32(e + 44, frz_crc32(0, out + len, clen));
    len += clen;
  }
  put32(out + table_end, frz_crc32(0, out, (size_t)table_end));
  *out_len = len;
  return out;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  decode_and_walk(data, size);
  size_t len;
  uint8_t *fixed = repack(data, size, &len);
  if (fixed) {
    decode_and_walk(fixed, len);
    free(fixed);
  }
  return 0;
}
