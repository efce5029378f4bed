/* idmap.c — open addressing with linear probing, grown at half full. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "idmap.h"

static uint32_t slot_of(uint64_t key, uint32_t cap)
{
  key ^= key >> 33;
  key *= 0xff51afd7ed558ccdull;
  key ^= key >> 33;
  return (uint32_t)(key & (cap - 1));
}

static void insert(uint64_t *keys, uint32_t *vals, uint32_t cap, uint64_t key, uint32_t val)
{
  uint32_t s = slot_of(key, cap);
  while (vals[s] != UINT32_MAX) s = (s + 1) & (cap - 1);
  keys[s] = key;
  vals[s] = val;
}

int idmap_put(idmap *m, uint64_t key, uint32_t val)
{
  if ((m->n + 1) * 2 > m->cap) {
    if (m->cap >= (1u << 31)) return -1;
    uint32_t ncap = m->cap ? m->cap * 2 : 64;
    uint64_t *k = malloc((size_t)ncap * sizeof *k);
    uint32_t *v = malloc((size_t)ncap * sizeof *v);
    if (!k || !v) {
      free(k);
      free(v);
      return -1;
    }
    memset(v, 0xff, (size_t)ncap * sizeof *v);
    for (uint32_t i = 0; i < m->cap; i++)
      if (m->vals[i] != UINT32_MAX) insert(k, v, ncap, m->keys[i], m->vals[i]);
    free(m->keys);
    free(m->vals);
    m->keys = k;
    m->vals = v;
    m->cap = ncap;
  }
  insert(m->keys, m->vals, m->cap, key, val);
  m->n++;
  return 0;
}

uint32_t idmap_next(const idmap *m, uint64_t key, uint32_t *pos)
{
  if (!m->cap) return UINT32_MAX;
  /* *pos counts the probes made so far from the key's home slot */
  for (uint32_t s = (slot_of(key, m->cap) + *pos) & (m->cap - 1); m->vals[s] != UINT32_MAX;
       s = (s + 1) & (m->cap - 1)) {
    (*pos)++;
    if (m->keys[s] == key) return m->vals[s];
  }
  return UINT32_MAX;
}

void idmap_free(idmap *m)
{
  free(m->keys);
  free(m->vals);
  memset(m, 0, sizeof *m);
}
