/* pyval.c — the value tree shared by the pickle and JSON readers: an arena
 * with a byte limit, and the few lookups the importer needs. */
#include "config.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pyval.h"

void pv_arena_init(pv_arena *a, size_t limit)
{
  memset(a, 0, sizeof *a);
  a->limit = limit;
}

void pv_arena_free(pv_arena *a)
{
  pv *n = a->nodes;
  while (n) {
    pv *next = n->next_alloc;
    free(n->items);
    free(n);
    n = next;
  }
  for (size_t i = 0; i < a->nstrs; i++) free(a->strs[i]);
  free(a->strs);
  memset(a, 0, sizeof *a);
}

/* Account for `n` more bytes; -1 when that passes the limit. */
static int charge(pv_arena *a, size_t n)
{
  if (n > a->limit || a->bytes > a->limit - n) return -1;
  a->bytes += n;
  return 0;
}

pv *pv_new(pv_arena *a, pv_type t)
{
  if (charge(a, sizeof(pv))) return NULL;
  pv *v = calloc(1, sizeof *v);
  if (!v) return NULL;
  v->type = t;
  v->next_alloc = a->nodes;
  a->nodes = v;
  return v;
}

int pv_push(pv_arena *a, pv *c, pv *item)
{
  if (item->depth + 1 > c->depth) {
    if (item->depth + 1 > PV_MAX_DEPTH) return -2;
    c->depth = item->depth + 1;
  }
  if (c->n == c->cap) {
    if (c->cap >= UINT32_MAX / 2) return -1;
    uint32_t ncap = c->cap ? c->cap * 2 : 4;
    if (charge(a, (size_t)(ncap - c->cap) * sizeof(pv *))) return -1;
    pv **p = realloc(c->items, (size_t)ncap * sizeof *p);
    if (!p) return -1;
    c->items = p;
    c->cap = ncap;
  }
  c->items[c->n++] = item;
  return 0;
}

char *pv_strdup(pv_arena *a, const char *s, size_t len)
{
  if (a->nstrs == a->capstrs) {
    size_t ncap = a->capstrs ? a->capstrs * 2 : 16;
    if (charge(a, (ncap - a->capstrs) * sizeof(char *))) return NULL;
    char **p = realloc(a->strs, ncap * sizeof *p);
    if (!p) return NULL;
    a->strs = p;
    a->capstrs = ncap;
  }
  if (charge(a, len + 1)) return NULL;
  char *d = malloc(len + 1);
  if (!d) return NULL;
  memcpy(d, s, len);
  d[len] = '\0';
  a->strs[a->nstrs++] = d;
  return d;
}

int pv_str_is(const pv *v, const char *s)
{
  size_t n = strlen(s);
  return v && v->type == PV_STR && v->slen == n && memcmp(v->s, s, n) == 0;
}

const pv *pv_get(const pv *d, const char *key)
{
  if (!d || d->type != PV_DICT) return NULL;
  for (uint32_t k = 0; k + 1 < d->n; k += 2)
    if (pv_str_is(d->items[k], key)) return d->items[k + 1];
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
