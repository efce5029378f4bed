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

typedef struct pv pv;
struct pv {
  pv_type type;
  uint32_t n, cap;  /* containers: items used / allocated (a dict counts keys and values) */
  uint32_t depth;   /* containers: nesting below this node, as seen when items were added */
  union {
    int64_t i;
    double f;
  } num;
  const char *s;    /* PV_STR / PV_GLOBAL text */
  size_t slen;
  pv **items;       /* containers */
};

typedef struct pv_chunk pv_chunk;
typedef struct pv_arena {
  pv_chunk *chunks; /* newest first; everything lives in them */
  size_t bytes;     /* bytes allocated so far (nodes, item arrays, copied strings) */
  size_t limit;     /* allocation refused beyond this */
} pv_arena;

/* An empty arena that allocates at most `limit` bytes. */
void pv_arena_init(pv_arena *a, size_t limit);
void pv_arena_free(pv_arena *a);

/* A new node of type t, or NULL when out of memory or over the limit. */
pv *pv_new(pv_arena *a, pv_type t);
/* Append `item` to container c; -1 when out of memory or over the limit,
 * -2 when that nests containers deeper than PV_MAX_DEPTH. */
int pv_push(pv_arena *a, pv *c, pv *item);
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
