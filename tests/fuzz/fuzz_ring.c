/* tests/fuzz/fuzz_ring.c: the ring file reader (frz_ring_decode) on
 * arbitrary bytes, three ways: as given; laid over a small valid ring file
 * (16 slots, 4 comms, records of every kind) from its first byte; and laid
 * over it with the header's CRC made right again, so that mutations reach
 * the layout checks, the comm table and the slots behind the checksum. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "frz_ring.h"
#include "fuzz.h"

#define CAP 16u
#define NCOMM 4u
#define SLOT 160u
#define COMM 96u
#define COMMS_OFF FRZ_RING_HEADER_SIZE
#define SLOTS_OFF (COMMS_OFF + NCOMM * COMM)
#define LEN (SLOTS_OFF + CAP * SLOT)

static void put(uint8_t *p, size_t off, uint64_t v, int n)
{
  for (int i = 0; i < n; i++) p[off + (size_t)i] = (uint8_t)(v >> (8 * i));
}

static void set_crc(uint8_t *p)
{
  uint32_t crc = frz_crc32(0, p, FRZ_RING_OFF_CRC);
  crc = frz_crc32(crc, p + FRZ_RING_OFF_PROCESS, FRZ_RING_CHECKED_END - FRZ_RING_OFF_PROCESS);
  put(p, FRZ_RING_OFF_CRC, crc, 4);
}

/* A valid ring file: 20 records written (4 overwritten), 4 comms. */
static void make_ring(uint8_t *p)
{
  memset(p, 0, LEN);
  memcpy(p, FRZ_RING_MAGIC, 8);
  put(p, FRZ_RING_OFF_MAJOR, FRZ_RING_VERSION_MAJOR, 2);
  put(p, FRZ_RING_OFF_HEADER_SIZE, FRZ_RING_HEADER_SIZE, 4);
  put(p, FRZ_RING_OFF_FILE_SIZE, LEN, 8);
  put(p, FRZ_RING_OFF_SLOTS, SLOTS_OFF, 8);
  put(p, FRZ_RING_OFF_CAPACITY, CAP, 8);
  put(p, FRZ_RING_OFF_SLOT_SIZE, SLOT, 4);
  put(p, FRZ_RING_OFF_COMM_SIZE, COMM, 4);
  put(p, FRZ_RING_OFF_COMMS, COMMS_OFF, 8);
  put(p, FRZ_RING_OFF_COMM_CAPACITY, NCOMM, 4);
  put(p, FRZ_RING_OFF_HEAD, 20, 8);
  put(p, FRZ_RING_OFF_NCOMMS, NCOMM, 4);
  put(p, FRZ_RING_OFF_STATE, FRZ_RING_RUNNING, 4);
  put(p, FRZ_RING_OFF_PROCESS + 4, 4, 4);  /* world_size */
  for (uint32_t c = 0; c < NCOMM; c++) {
    uint8_t *e = p + COMMS_OFF + c * COMM;
    put(e, 8, 0x1000 + c, 8);               /* comm_id */
    put(e, 32, 4, 4);                       /* nranks */
    put(e, 36, c, 4);                       /* rank */
    put(e, 56, 6, 8);                       /* next_seq */
    put(e, 80, 5, 8);                       /* records */
  }
  for (uint64_t id = 4; id < 20; id++) {
    uint8_t *s = p + SLOTS_OFF + (id % CAP) * SLOT;
    put(s, 0, 2 * id + 2, 8);
    put(s, 8, id, 8);
    put(s, 16, 0x1000 + id % NCOMM, 8);
    put(s, 24, id / NCOMM, 8);              /* seq */
    put(s, 8 + 88, 1 + id % 8, 2);          /* op */
    put(s, 8 + 90, id % 5, 1);              /* kind */
    put(s, 8 + 94, id % 4, 1);              /* state */
    put(s, 8 + 100, id == 19 ? 0xffffffffu : 0, 4);
    put(s, 8 + 116, id % NCOMM, 4);         /* comm_rank */
  }
  set_crc(p);
}

static int decode(const uint8_t *p, size_t len)
{
  frz_dump d;
  frz_ring_info info;
  frz_error err;
  if (frz_ring_decode(p, len, "fuzz.ring", &d, &info, &err) == FRZ_OK) {
    char t[128];
    frz_ring_death_text(&info, t, sizeof t);
    int ok = d.nrecords == 16 && d.ncomms == NCOMM;
    frz_dump_free(&d);
    return ok;
  }
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  uint64_t *raw = malloc(size / 8 + 1 > LEN / 8 ? (size / 8 + 1) * 8 : LEN);
  if (!raw) return 0;
  uint8_t *p = (uint8_t *)raw;
  memcpy(p, data, size);
  decode(p, size);
  make_ring(p);
  size_t n = size < LEN ? size : LEN;
  for (size_t i = 0; i < n; i++) p[i] ^= data[i];
  /* the seed of one zero byte leaves the valid ring as it is: it must
   * decode whole, or the other runs only reach the refusals */
  if (!decode(p, LEN) && size == 1 && data[0] == 0) abort();
  set_crc(p);
  decode(p, LEN);
  free(raw);
  return 0;
}
