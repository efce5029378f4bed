/* pyval.h — a small tree of Python-like values (None, bool, int, float,
 * str, list, tuple, dict) decoded from a PyTorch Flight Recorder file,
 * pickle or JSON.  Internal to formats/; the importer (pytorch_fr.c) walks it.
 *
 * Every node is owned by one pv_arena and freed with it, never one by one,
 * so shared nodes (pickle memo references) and even cycles are harmless.
 * The arena hands out nodes, item arrays and copied strings from large
 * chunks (no malloc per node: a dump holds millions of them).
 * Strings point into the decoded file buffer when they need no unescaping,
 * so the buffer must outlive the tree.
 */
#ifndef FR_PYVAL_H
#define FR_PYVAL_H

#include <stddef.h>
#include <stdint.h>

#include "frz.h"

typedef enum {
  PV_NONE = 0,
  PV_BOOL,
  PV_INT,    /* fits int64_t */
  PV_BIGINT, /* an integer outside int64_t: only its sign is kept (i = -1 or 1) */
  PV_FLOAT,
  PV_STR,    /* UTF-8 bytes (pickle byte strings land here too), not NUL-terminated */
  PV_LIST,
  PV_TUPLE,
  PV_DICT,   /* items[2k] is a key, items[2k+1] its value */
  PV_GLOBAL  /* a pickle GLOBAL reference (only allowed ones survive decoding) */
} pv_type;

/* 32 bytes: a dump holds millions of them.  Scalars use num or s/slen,
 * containers n/cap/depth/items; the unions overlay what a type never uses. */
typedef struct pv pv;
struct pv {
  uint8_t type;     /* a pv_type */
  uint8_t pad_[3];
  uint32_t n;       /* containers: items used (a dict counts keys and values) */
  uint32_t cap;     /* containers: items allocated */
  uint32_t depth;   /* containers: nesting below this node, as seen when items were added */
  union {
    union {
      int64_t i;
      double f;
    } num;          /* PV_INT, PV_BIGINT (sign), PV_BOOL, PV_FLOAT */
    const char *s;  /* PV_STR / PV_GLOBAL text */
  };
  union {
    size_t slen;    /* PV_STR / PV_GLOBAL: its length in bytes */
    pv **items;     /* containers */
  };
};

typedef struct pv_chunk pv_chunk;
typedef struct pv_arena {
  pv_chunk *chunks; /* newest first; everything lives in them */
  char *cur, *end;  /* the free room of the newest chunk, cut to what the limit leaves */
  size_t bytes;     /* bytes allocated so far (nodes, item arrays, copied strings) */
  size_t limit;     /* allocation refused beyond this */
} pv_arena;

/* An empty arena that allocates at most `limit` bytes. */
void pv_arena_init(pv_arena *a, size_t limit);
void pv_arena_free(pv_arena *a);

/* Arena allocations are rounded up to this (the alignment of any type). */
#define PV_ALIGN ((size_t)16)

/* n bytes from a new chunk (pv_alloc's slow path); NULL when out of
 * memory or over the limit. */
void *pv_alloc_slow(pv_arena *a, size_t n);

/* n bytes (n a multiple of PV_ALIGN) aligned for any type, or NULL when
 * out of memory or over the limit.  Inline: a decoder calls it per value. */
static inline void *pv_alloc(pv_arena *a, size_t n)
{
  if ((size_t)(a->end - a->cur) >= n) { /* (end never lies beyond the limit) */
    void *p = a->cur;
    a->cur += n;
    a->bytes += n;
    return p;
  }
  return pv_alloc_slow(a, n);
}

/* A new node of type t (all else zero), or NULL when out of memory or over
 * the limit. */
static inline pv *pv_new(pv_arena *a, pv_type t)
{
  pv *v = pv_alloc(a, (sizeof(pv) + PV_ALIGN - 1) & ~(PV_ALIGN - 1));
  if (v) *v = (pv){.type = t};
  return v;
}
/* Append `item` to container c; -1 when out of memory or over the limit,
 * -2 when that nests containers deeper than PV_MAX_DEPTH. */
int pv_push(pv_arena *a, pv *c, pv *item);
/* Append items[0..k) to container c in one go (room for exactly them when
 * c is full); the same errors as pv_push. */
int pv_push_n(pv_arena *a, pv *c, pv *const *items, size_t k);
/* A copy of `len` bytes kept by the arena, or NULL. */
char *pv_strdup(pv_arena *a, const char *s, size_t len);

/* Value of key `key` in dict d (string keys only; the first of equal
 * keys), or NULL. */
const pv *pv_get(const pv *d, const char *key);
/* A fixed set of up to PV_KEYSET_MAX string keys, hashed once, for
 * pv_fields: the values of all of them in one pass over a dict. */
#define PV_KEYSET_MAX 32
typedef struct pv_keyset {
  const char *const *keys;
  uint32_t n;
  uint8_t slot[64];   /* (hash of a key) & 63 -> 1 + its index, open addressing; 0 empty */
  uint8_t len[PV_KEYSET_MAX];
} pv_keyset;
/* Build ks for keys[0..n) (n <= PV_KEYSET_MAX, distinct, non-empty; the
 * array must outlive ks). */
void pv_keyset_init(pv_keyset *ks, const char *const *keys, uint32_t n);
/* out[i] = the value of keys[i] in dict d (the first of equal keys), or
 * NULL; all NULL when d is not a dict.  One pass over d's items. */
void pv_fields(const pv *d, const pv_keyset *ks, const pv **out);
/* The key layout of the last dict pv_fields_cached read: its key nodes in
 * order and where each key of the set was.  A PyTorch dump writes the keys
 * of every entry as memo references to one string each (torch's pickler
 * memoizes strings by content), so the next entry's keys are the same
 * nodes in the same order and its fields are found by pointer compares. */
#define PV_LAYOUT_MAX 48
typedef struct pv_layout {
  uint32_t n;                    /* items of that dict; 0: nothing cached */
  const pv *key[PV_LAYOUT_MAX];  /* its key nodes */
  int16_t pos[PV_KEYSET_MAX];    /* item index of the value of keys[i], -1 none */
} pv_layout;
/* pv_fields, faster when d's key nodes are those of the dict read before
 * with the same lay (start it zeroed); the same results in every case. */
void pv_fields_cached(const pv *d, const pv_keyset *ks, pv_layout *lay, const pv **out);
/* Does string value v equal the C string s? */
int pv_str_is(const pv *v, const char *s);
/* v as an integer: ints, bools, and strings of decimal digits (JSON dumps
 * write some counters as strings).  Returns 0 and sets *out, or -1. */
int pv_int(const pv *v, int64_t *out);
/* Copy string v into buf (NUL-terminated, cut to size); "" when not a string. */
const char *pv_cstr(const pv *v, char *buf, size_t size);

/* Decode a pickle (protocols 2 to 5, the subset of opcodes that plain
 * dicts/lists/tuples/strings/numbers/bools/None use; torch's specialised
 * list builders are read as plain lists).  Nothing is executed.  Errors
 * name the file and the byte offset (FRZ_E_TRUNCATED, FRZ_E_CORRUPT,
 * FRZ_E_NOMEM). */
frz_status pv_from_pickle(const void *buf, size_t len, const char *name, pv_arena *a,
                          const pv **root, frz_error *err);

/* Decode a JSON document (RFC 8259), integers kept exact in int64_t. */
frz_status pv_from_json(const void *buf, size_t len, const char *name, pv_arena *a,
                        const pv **root, frz_error *err);

/* Fill `err` with "NAME: at byte OFF: WHAT" and return st (for the decoders). */
frz_status pv_fail(frz_error *err, frz_status st, const char *name, uint64_t off,
                   const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* Largest container nesting the decoders accept. */
#define PV_MAX_DEPTH 256

#endif /* FR_PYVAL_H */
