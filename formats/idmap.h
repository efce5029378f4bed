/* idmap.h — a small open-addressing multimap from 64-bit keys to indices,
 * so that the PyTorch importer stays linear in the size of its input even
 * for hostile files (many process groups, many p2p peers).  Internal to
 * formats/. */
#ifndef FR_IDMAP_H
#define FR_IDMAP_H

#include <stdint.h>

typedef struct idmap {
  uint64_t *keys;
  uint32_t *vals; /* UINT32_MAX: empty slot */
  uint32_t cap, n;
} idmap;

/* Add (key, val); a key may be added several times.  -1 when out of memory. */
int idmap_put(idmap *m, uint64_t key, uint32_t val);
/* The values stored under key, one by one: start with *pos = 0; UINT32_MAX
 * when there are no more. */
uint32_t idmap_next(const idmap *m, uint64_t key, uint32_t *pos);
void idmap_free(idmap *m);

#endif /* FR_IDMAP_H */
