/* pyval.c — the value tree shared by the pickle and JSON readers: an arena
 * with a byte limit, and the few lookups the importer needs. */
#include "config.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pyval.h"

/* A chunk of the arena: `size` bytes of storage after the header. */
struct pv_chunk {
  pv_chunk *next;
  size_t size;
  max_align_t data[];
};

#define PV_CHUNK_BYTES ((size_t)1 << 20)

_Static_assert(PV_ALIGN % _Alignof(max_align_t) == 0, "PV_ALIGN must align any type");

void pv_arena_init(pv_arena *a, size_t limit)
{
  memset(a, 0, sizeof *a);
  a->limit = limit;
}

void pv_arena_free(pv_arena *a)
{
  pv_chunk *c = a->chunks;
  while (c) {
    pv_chunk *next = c->next;
    free(c);
    c = next;
  }
  memset(a, 0, sizeof *a);
}

static void *alloc_chunk(pv_arena *a, size_t n);

void *pv_alloc_slow(pv_arena *a, size_t n)
{
  if (n > SIZE_MAX - PV_ALIGN) return NULL;
  n = (n + PV_ALIGN - 1) & ~(PV_ALIGN - 1);
  if (n > a->limit || a->bytes > a->limit - n) return NULL;
  if ((size_t)(a->end - a->cur) >= n) { /* room after all (n was not rounded) */
    void *p = a->cur;
    a->cur += n;
    a->bytes += n;
    return p;
  }
  void *p = alloc_chunk(a, n);
  if (p && (size_t)(a->end - a->cur) > a->limit - a->bytes) /* pv_alloc checks end alone */
    a->end = a->cur + (a->limit - a->bytes);
  return p;
}

/* n bytes (rounded, within the limit) from a new chunk, or NULL. */
static void *alloc_chunk(pv_arena *a, size_t n)
{
  size_t size = n > PV_CHUNK_BYTES / 4 ? n : PV_CHUNK_BYTES; /* a big one alone */
  pv_chunk *c = malloc(sizeof *c + size);
  if (!c) return NULL;
  c->size = size;
  a->bytes += n;
  if (size == PV_CHUNK_BYTES || !a->chunks) { /* the new room to allocate from */
    c->next = a->chunks;
    a->chunks = c;
    a->cur = (char *)c->data + n;
    a->end = (char *)c->data + size;
  } else { /* behind the newest, which keeps its free room */
    c->next = a->chunks->next;
    a->chunks->next = c;
  }
  return c->data;
}

/* Room for k more items in c, growing its array (the old one stays in
 * its chunk): to exactly n + k when c is empty, else doubling. */
static int grow(pv_arena *a, pv *c, size_t k)
{
  if (k <= c->cap - c->n) return 0;
  if (k > UINT32_MAX / 2 - c->n) return -1;
  uint32_t ncap = c->n ? c->cap * 2 : (uint32_t)k;
  if (ncap < c->n + k) ncap = (uint32_t)(c->n + k);
  if (ncap < 4 && !c->n && k == 1) ncap = 4;
  pv **p = pv_alloc(a, ((size_t)ncap * sizeof *p + PV_ALIGN - 1) & ~(PV_ALIGN - 1));
  if (!p) return -1;
  if (c->n) memcpy(p, c->items, (size_t)c->n * sizeof *p);
  c->items = p;
  c->cap = ncap;
  return 0;
}

int pv_push(pv_arena *a, pv *c, pv *item)
{
  if (item->depth + 1 > c->depth) {
    if (item->depth + 1 > PV_MAX_DEPTH) return -2;
    c->depth = item->depth + 1;
  }
  if (c->n == c->cap && grow(a, c, 1)) return -1;
  c->items[c->n++] = item;
  return 0;
}

int pv_push_n(pv_arena *a, pv *c, pv *const *items, size_t k)
{
  uint32_t d = c->depth;
  for (size_t i = 0; i < k; i++)
    if (items[i]->depth + 1 > d) d = items[i]->depth + 1;
  if (d > PV_MAX_DEPTH) return -2;
  if (!k) return 0;
  if (grow(a, c, k)) return -1;
  c->depth = d;
  memcpy(c->items + c->n, items, k * sizeof *items);
  c->n += (uint32_t)k;
  return 0;
}

char *pv_strdup(pv_arena *a, const char *s, size_t len)
{
  if (len == SIZE_MAX) return NULL;
  char *d = len < SIZE_MAX - PV_ALIGN ? pv_alloc(a, (len + PV_ALIGN) & ~(PV_ALIGN - 1)) : NULL;
  if (!d) return NULL;
  memcpy(d, s, len);
  d[len] = '\0';
  return d;
}

int pv_str_is(const pv *v, const char *s)
{
  size_t n = strlen(s);
  return v && v->type == PV_STR && v->slen == n && memcmp(v->s, s, n) == 0;
}

/* A key's slot hash: its length and its first and last bytes. */
static uint32_t key_hash(const char *s, size_t len)
{
  return len ? (uint32_t)(len * 7u + (unsigned char)s[0] * 3u + (unsigned char)s[len - 1]) : 0;
}

void pv_keyset_init(pv_keyset *ks, const char *const *keys, uint32_t n)
{
  memset(ks, 0, sizeof *ks);
  ks->keys = keys;
  ks->n = n > PV_KEYSET_MAX ? PV_KEYSET_MAX : n;
  for (uint32_t i = 0; i < ks->n; i++) {
    size_t len = strlen(keys[i]);
    ks->len[i] = (uint8_t)(len > 255 ? 255 : len);
    uint32_t h = key_hash(keys[i], len) & 63;
    while (ks->slot[h]) h = (h + 1) & 63;
    ks->slot[h] = (uint8_t)(i + 1);
  }
}

void pv_fields(const pv *d, const pv_keyset *ks, const pv **out)
{
  for (uint32_t i = 0; i < ks->n; i++) out[i] = NULL;
  if (!d || d->type != PV_DICT) return;
  for (uint32_t k = 0; k + 1 < d->n; k += 2) {
    const pv *v = d->items[k];
    if (v->type != PV_STR || v->slen == 0 || v->slen > 255) continue;
    for (uint32_t h = key_hash(v->s, v->slen) & 63; ks->slot[h]; h = (h + 1) & 63) {
      uint32_t i = ks->slot[h] - 1u;
      if (ks->len[i] == v->slen && memcmp(ks->keys[i], v->s, v->slen) == 0) {
        if (!out[i]) out[i] = d->items[k + 1]; /* the first of equal keys */
        break;
      }
    }
  }
}

void pv_fields_cached(const pv *d, const pv_keyset *ks, pv_layout *lay, const pv **out)
{
  if (!d || d->type != PV_DICT || d->n < 2 || d->n / 2 > PV_LAYOUT_MAX) {
    pv_fields(d, ks, out); /* (lay keeps the layout before) */
    return;
  }
  uint32_t nk = d->n / 2, k = 0;
  if (lay->n == d->n)
    while (k < nk && d->items[2 * k] == lay->key[k]) k++;
  if (lay->n != d->n || k < nk) { /* another layout: look its keys up and keep it */
    for (uint32_t i = 0; i < ks->n; i++) lay->pos[i] = -1;
    for (k = 0; k < nk; k++) {
      const pv *v = d->items[2 * k];
      lay->key[k] = v;
      if (v->type != PV_STR || v->slen == 0 || v->slen > 255) continue;
      for (uint32_t h = key_hash(v->s, v->slen) & 63; ks->slot[h]; h = (h + 1) & 63) {
        uint32_t i = ks->slot[h] - 1u;
        if (ks->len[i] == v->slen && memcmp(ks->keys[i], v->s, v->slen) == 0) {
          if (lay->pos[i] < 0) lay->pos[i] = (int16_t)(2 * k + 1); /* the first of equal keys */
          break;
        }
      }
    }
    lay->n = d->n;
  }
  for (uint32_t i = 0; i < ks->n; i++) out[i] = lay->pos[i] >= 0 ? d->items[lay->pos[i]] : NULL;
}

const pv *pv_get(const pv *d, const char *key)
{
  if (!d || d->type != PV_DICT) return NULL;
  size_t len = strlen(key);
  for (uint32_t k = 0; k + 1 < d->n; k += 2) { /* the first of equal keys */
    const pv *v = d->items[k];
    if (v->type == PV_STR && v->slen == len && (len == 0 || (v->s[0] == key[0] && memcmp(v->s, key, len) == 0)))
      return d->items[k + 1];
  }
  return NULL;
}

int pv_int(const pv *v, int64_t *out)
{
  if (!v) return -1;
  if (v->type == PV_INT || v->type == PV_BOOL) {
    *out = v->num.i;
    return 0;
  }
  if (v->type != PV_STR || v->slen == 0 || v->slen > 20) return -1;
  char b[24];
  memcpy(b, v->s, v->slen);
  b[v->slen] = '\0';
  char *end;
  const char *p = b[0] == '-' ? b + 1 : b;
  if (*p < '0' || *p > '9') return -1;
  long long x = strtoll(b, &end, 10);
  if (*end) return -1;
  *out = x;
  return 0;
}

const char *pv_cstr(const pv *v, char *buf, size_t size)
{
  if (!size) return buf;
  buf[0] = '\0';
  if (!v || v->type != PV_STR) return buf;
  size_t n = v->slen < size - 1 ? v->slen : size - 1;
  memcpy(buf, v->s, n);
  buf[n] = '\0';
  return buf;
}

frz_status pv_fail(frz_error *err, frz_status st, const char *name, uint64_t off,
                   const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  frz_error_vset(err, st, name, off, fmt, ap);
  va_end(ap);
  return st;
}
