/* pickle.c — a strict reader of the pickle subset that PyTorch's Flight
 * Recorder writes (protocol 2; the framing and short-string opcodes of
 * protocols 4 and 5 are accepted too).  It builds a pv tree and executes
 * nothing: the only GLOBALs accepted are torch's list builders
 * (torch.jit._pickle.build_*list), whose REDUCE yields the list argument.
 *
 * Bounds: every length is checked against the bytes left; the value stack,
 * the memo and the tree grow at most linearly with the input; MARKs and
 * container nesting are limited to PV_MAX_DEPTH.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "pyval.h"

#define PK_SMALL 256

typedef struct rd {
  const uint8_t *p;
  size_t len, pos;      /* pos: next byte to read */
  size_t op;            /* offset of the opcode being executed */
  const char *name;
  frz_error *err;
  pv_arena *a;
  pv **stack;
  size_t nstack, capstack;
  size_t marks[PV_MAX_DEPTH];
  size_t nmarks;
  pv **memo;
  size_t capmemo;
  size_t nmemo;         /* memo slots set (MEMOIZE stores at this index) */
  pv *small[PK_SMALL];  /* the ints 0..PK_SMALL-1, None, True, False: made once, shared */
  pv *none, *truth[2];
} rd;

static frz_status trunc_err(rd *r, size_t need)
{
  return pv_fail(r->err, FRZ_E_TRUNCATED, r->name, r->op,
                 "pickle truncated: opcode 0x%02x needs %zu more byte(s), %zu left", r->p[r->op],
                 need, r->len - r->pos);
}

static frz_status corrupt(rd *r, const char *what)
{
  return pv_fail(r->err, FRZ_E_CORRUPT, r->name, r->op, "bad pickle: %s (opcode 0x%02x)", what,
                 r->p[r->op]);
}

static frz_status nomem(rd *r)
{
  return pv_fail(r->err, FRZ_E_NOMEM, r->name, r->op,
                 "pickle needs more memory than allowed (%zu bytes used)", r->a->bytes);
}

/* Read n bytes (little-endian unsigned) into *v. */
static inline frz_status le(rd *r, size_t n, uint64_t *v)
{
  if (r->len - r->pos < n) return trunc_err(r, n);
  uint64_t x = 0;
  for (size_t i = 0; i < n; i++) x |= (uint64_t)r->p[r->pos + i] << (8 * i);
  r->pos += n;
  *v = x;
  return FRZ_OK;
}

/* The stack grows to hold one more value (push's slow path). */
static frz_status grow_stack(rd *r, pv *v)
{
  {
    size_t ncap = r->capstack ? r->capstack * 2 : 64;
    pv **s = realloc(r->stack, ncap * sizeof *s);
    if (!s) return nomem(r);
    r->stack = s;
    r->capstack = ncap;
  }
  r->stack[r->nstack++] = v;
  return FRZ_OK;
}

static inline frz_status push(rd *r, pv *v)
{
  if (!v) return nomem(r);
  if (r->nstack == r->capstack) return grow_stack(r, v);
  r->stack[r->nstack++] = v;
  return FRZ_OK;
}

/* The bottom of the current MARK frame (values above a MARK belong to it). */
static size_t floor_of(const rd *r)
{
  return r->nmarks ? r->marks[r->nmarks - 1] : 0;
}

static frz_status pop(rd *r, pv **v)
{
  if (r->nstack <= floor_of(r)) return corrupt(r, "stack underflow");
  *v = r->stack[--r->nstack];
  return FRZ_OK;
}

static frz_status add_item(rd *r, pv *c, pv *item)
{
  int rc = pv_push(r->a, c, item);
  if (rc == -2) return corrupt(r, "containers nested too deeply");
  return rc ? nomem(r) : FRZ_OK;
}

/* Move the values above the last MARK into container c (pairs for dicts)
 * and drop the MARK. */
static frz_status take_marked(rd *r, pv *c)
{
  if (!r->nmarks) return corrupt(r, "no MARK before this opcode");
  size_t m = r->marks[--r->nmarks];
  if (c->type == PV_DICT && (r->nstack - m) % 2) return corrupt(r, "odd number of dict items");
  /* (no stack yet when nothing was ever pushed: nothing to move) */
  int rc = r->nstack > m ? pv_push_n(r->a, c, r->stack + m, r->nstack - m) : 0;
  if (rc == -2) return corrupt(r, "containers nested too deeply");
  if (rc) return nomem(r);
  r->nstack = m;
  return FRZ_OK;
}

static inline frz_status new_string(rd *r, size_t n, pv_type t)
{
  if (r->len - r->pos < n) return trunc_err(r, n);
  pv *v = pv_new(r->a, t);
  if (!v) return nomem(r);
  v->s = (const char *)r->p + r->pos;
  v->slen = n;
  r->pos += n;
  return push(r, v);
}

static inline frz_status new_int(rd *r, int64_t x)
{
  if (x >= 0 && x < PK_SMALL) { /* one shared node per small value: nodes are never changed */
    if (!r->small[x]) {
      if (!(r->small[x] = pv_new(r->a, PV_INT))) return nomem(r);
      r->small[x]->num.i = x;
    }
    return push(r, r->small[x]);
  }
  pv *v = pv_new(r->a, PV_INT);
  if (!v) return nomem(r);
  v->num.i = x;
  return push(r, v);
}

/* LONG1/LONG4: n bytes of little-endian two's complement. */
static frz_status new_long(rd *r, uint64_t n)
{
  if (r->len - r->pos < n) return trunc_err(r, (size_t)n);
  const uint8_t *b = r->p + r->pos;
  r->pos += (size_t)n;
  if (n == 0) return new_int(r, 0);
  int neg = (b[n - 1] & 0x80) != 0;
  /* beyond 8 bytes, the value fits int64 only if the extra bytes are sign fill */
  for (uint64_t i = 8; i < n; i++)
    if (b[i] != (neg ? 0xff : 0x00)) {
      pv *v = pv_new(r->a, PV_BIGINT);
      if (!v) return nomem(r);
      v->num.i = neg ? -1 : 1;
      return push(r, v);
    }
  uint64_t x = neg ? UINT64_MAX : 0;
  for (uint64_t i = 0; i < n && i < 8; i++) {
    x &= ~((uint64_t)0xff << (8 * i));
    x |= (uint64_t)b[i] << (8 * i);
  }
  if (n >= 8 && ((x >> 63) != 0) != neg) {
    pv *v = pv_new(r->a, PV_BIGINT);
    if (!v) return nomem(r);
    v->num.i = neg ? -1 : 1;
    return push(r, v);
  }
  return new_int(r, (int64_t)x);
}

static frz_status memo_put(rd *r, uint64_t idx)
{
  if (r->nstack <= floor_of(r)) return corrupt(r, "memo store with an empty stack");
  if (idx > r->len) return corrupt(r, "memo index larger than the file");
  if (idx >= r->capmemo) {
    size_t ncap = r->capmemo ? r->capmemo : 64;
    while (ncap <= idx) ncap *= 2;
    pv **m = realloc(r->memo, ncap * sizeof *m);
    if (!m) return nomem(r);
    memset(m + r->capmemo, 0, (ncap - r->capmemo) * sizeof *m);
    r->memo = m;
    r->capmemo = ncap;
  }
  if (!r->memo[idx]) r->nmemo++;
  r->memo[idx] = r->stack[r->nstack - 1];
  return FRZ_OK;
}

static frz_status memo_get(rd *r, uint64_t idx)
{
  if (idx >= r->capmemo || !r->memo[idx]) return corrupt(r, "memo reference to an unset slot");
  return push(r, r->memo[idx]);
}

/* GLOBAL "module\nname\n": only torch's list builders are allowed. */
static frz_status global(rd *r, const char *mod, size_t ml, const char *nm, size_t nl)
{
  static const char *const allowed[] = {"build_intlist", "build_doublelist", "build_boollist",
                                        "build_genericlist", "build_tensorlist"};
  int ok = ml == 17 && memcmp(mod, "torch.jit._pickle", 17) == 0;
  int found = 0;
  for (size_t i = 0; ok && i < sizeof allowed / sizeof *allowed; i++)
    if (strlen(allowed[i]) == nl && memcmp(allowed[i], nm, nl) == 0) found = 1;
  if (!found) return corrupt(r, "GLOBAL names an object this reader does not accept");
  pv *v = pv_new(r->a, PV_GLOBAL);
  if (!v) return nomem(r);
  v->s = nm;
  v->slen = nl;
  return push(r, v);
}

/* One text line of a GLOBAL operand. */
static frz_status line(rd *r, const char **s, size_t *n)
{
  const uint8_t *nl = memchr(r->p + r->pos, '\n', r->len - r->pos);
  if (!nl) return trunc_err(r, 1);
  *s = (const char *)r->p + r->pos;
  *n = (size_t)(nl - (r->p + r->pos));
  r->pos = (size_t)(nl - r->p) + 1;
  return FRZ_OK;
}

static frz_status tuple_of(rd *r, size_t k)
{
  if (r->nstack - floor_of(r) < k) return corrupt(r, "stack underflow");
  pv *t = pv_new(r->a, PV_TUPLE);
  if (!t) return nomem(r);
  int rc = pv_push_n(r->a, t, r->stack + r->nstack - k, k);
  if (rc == -2) return corrupt(r, "containers nested too deeply");
  if (rc) return nomem(r);
  r->nstack -= k;
  return push(r, t);
}

/* Execute the opcode at r->pos. 1 = STOP reached. */
static frz_status step(rd *r, int *stop)
{
  r->op = r->pos;
  uint8_t c = r->p[r->pos++];
  uint64_t n = 0;
  frz_status st = FRZ_OK;
  pv *v, *k, *t;
  switch (c) {
  case 0x80: /* PROTO */
    if ((st = le(r, 1, &n))) return st;
    if (n < 2 || n > 5) return corrupt(r, "unsupported pickle protocol");
    return FRZ_OK;
  case 0x95: /* FRAME: a length hint only */
    return le(r, 8, &n);
  case '.': *stop = 1; return FRZ_OK;
  case '}': return push(r, pv_new(r->a, PV_DICT));
  case ']': return push(r, pv_new(r->a, PV_LIST));
  case ')': return push(r, pv_new(r->a, PV_TUPLE));
  case 'N':
    if (!r->none && !(r->none = pv_new(r->a, PV_NONE))) return nomem(r);
    return push(r, r->none);
  case 0x88: case 0x89: { /* NEWTRUE, NEWFALSE */
    int b = c == 0x88;
    if (!r->truth[b]) {
      if (!(r->truth[b] = pv_new(r->a, PV_BOOL))) return nomem(r);
      r->truth[b]->num.i = b;
    }
    return push(r, r->truth[b]);
  }
  case '(': /* MARK */
    if (r->nmarks == PV_MAX_DEPTH) return corrupt(r, "MARKs nested too deeply");
    r->marks[r->nmarks++] = r->nstack;
    return FRZ_OK;
  case '1': /* POP_MARK */
    if (!r->nmarks) return corrupt(r, "no MARK before this opcode");
    r->nstack = r->marks[--r->nmarks];
    return FRZ_OK;
  case '0': return pop(r, &v);
  case '2': /* DUP */
    if (r->nstack <= floor_of(r)) return corrupt(r, "stack underflow");
    return push(r, r->stack[r->nstack - 1]);
  case 's': /* SETITEM */
    if ((st = pop(r, &v)) || (st = pop(r, &k))) return st;
    if (r->nstack <= floor_of(r) || r->stack[r->nstack - 1]->type != PV_DICT)
      return corrupt(r, "SETITEM without a dict");
    if ((st = add_item(r, r->stack[r->nstack - 1], k))) return st;
    return add_item(r, r->stack[r->nstack - 1], v);
  case 'a': /* APPEND */
    if ((st = pop(r, &v))) return st;
    if (r->nstack <= floor_of(r) || r->stack[r->nstack - 1]->type != PV_LIST)
      return corrupt(r, "APPEND without a list");
    return add_item(r, r->stack[r->nstack - 1], v);
  case 'u': case 'e': { /* SETITEMS, APPENDS: the container is just below the MARK */
    if (!r->nmarks) return corrupt(r, "no MARK before this opcode");
    size_t m = r->marks[r->nmarks - 1];
    size_t below = r->nmarks > 1 ? r->marks[r->nmarks - 2] : 0;
    if (m <= below) return corrupt(r, "no container below the MARK");
    t = r->stack[m - 1];
    if (t->type != (c == 'u' ? PV_DICT : PV_LIST))
      return corrupt(r, c == 'u' ? "SETITEMS without a dict" : "APPENDS without a list");
    return take_marked(r, t);
  }
  case 't': case 'l': case 'd': /* TUPLE, LIST, DICT from the MARK */
    if (!(t = pv_new(r->a, c == 't' ? PV_TUPLE : c == 'l' ? PV_LIST : PV_DICT))) return nomem(r);
    if ((st = take_marked(r, t))) return st;
    return push(r, t);
  case 0x85: return tuple_of(r, 1);
  case 0x86: return tuple_of(r, 2);
  case 0x87: return tuple_of(r, 3);
  case 'K': if ((st = le(r, 1, &n))) return st; return new_int(r, (int64_t)n);
  case 'M': if ((st = le(r, 2, &n))) return st; return new_int(r, (int64_t)n);
  case 'J': if ((st = le(r, 4, &n))) return st; return new_int(r, (int32_t)(uint32_t)n);
  case 0x8a: if ((st = le(r, 1, &n))) return st; return new_long(r, n);
  case 0x8b:
    if ((st = le(r, 4, &n))) return st;
    if ((int32_t)(uint32_t)n < 0) return corrupt(r, "negative length");
    return new_long(r, n);
  case 'G': { /* BINFLOAT: big-endian IEEE double */
    if (r->len - r->pos < 8) return trunc_err(r, 8);
    uint64_t b = 0;
    for (int i = 0; i < 8; i++) b = (b << 8) | r->p[r->pos + i];
    r->pos += 8;
    if (!(v = pv_new(r->a, PV_FLOAT))) return nomem(r);
    memcpy(&v->num.f, &b, sizeof b);
    return push(r, v);
  }
  case 'X': case 'B': if ((st = le(r, 4, &n))) return st; return new_string(r, (size_t)n, PV_STR);
  case 'T':
    if ((st = le(r, 4, &n))) return st;
    if ((int32_t)(uint32_t)n < 0) return corrupt(r, "negative length");
    return new_string(r, (size_t)n, PV_STR);
  case 0x8c: case 'U': case 'C': if ((st = le(r, 1, &n))) return st; return new_string(r, (size_t)n, PV_STR);
  case 0x8d: case 0x8e:
    if ((st = le(r, 8, &n))) return st;
    if (n > r->len - r->pos) return trunc_err(r, n > SIZE_MAX ? SIZE_MAX : (size_t)n);
    return new_string(r, (size_t)n, PV_STR);
  case 'q': if ((st = le(r, 1, &n))) return st; return memo_put(r, n);
  case 'r': if ((st = le(r, 4, &n))) return st; return memo_put(r, n);
  case 0x94: /* MEMOIZE: at the index len(memo), as Python's unpickler does */
    return memo_put(r, r->nmemo);
  case 'h': if ((st = le(r, 1, &n))) return st; return memo_get(r, n);
  case 'j': if ((st = le(r, 4, &n))) return st; return memo_get(r, n);
  case 'c': { /* GLOBAL */
    const char *ms = NULL, *ns = NULL;
    size_t ml = 0, nl = 0;
    if ((st = line(r, &ms, &ml)) || (st = line(r, &ns, &nl))) return st;
    return global(r, ms, ml, ns, nl);
  }
  case 0x93: /* STACK_GLOBAL */
    if ((st = pop(r, &v)) || (st = pop(r, &k))) return st;
    if (v->type != PV_STR || k->type != PV_STR) return corrupt(r, "STACK_GLOBAL needs two strings");
    return global(r, k->s, k->slen, v->s, v->slen);
  case 'R': /* REDUCE: build_*list(list) is the list */
    if ((st = pop(r, &v)) || (st = pop(r, &k))) return st;
    if (k->type != PV_GLOBAL || v->type != PV_TUPLE || v->n != 1 || v->items[0]->type != PV_LIST)
      return corrupt(r, "REDUCE of something other than a list builder");
    return push(r, v->items[0]);
  default:
    return corrupt(r, "unknown or unsupported opcode");
  }
}

/* Little-endian 32 bits at b. */
static inline uint32_t le32(const uint8_t *b)
{
  return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

/* SETITEMS / APPENDS into an empty container t of the k > 0 values from
 * items, as take_marked does (the same array size, depth and checks);
 * 0 when it cannot here (step() then does it, or reports the error). */
static inline int fill_fast(pv_arena *a, pv *t, pv *const *items, size_t k)
{
  if (t->n || k > 4096) return 0;
  size_t cap = k == 1 ? 4 : k; /* (grow's size for a first item) */
  pv **it = pv_alloc(a, (cap * sizeof *it + PV_ALIGN - 1) & ~(PV_ALIGN - 1));
  if (!it) return 0;
  uint32_t d = t->depth;
  for (size_t i = 0; i < k; i++) {
    pv *x = items[i];
    it[i] = x;
    if (x->depth >= d) d = x->depth + 1;
  }
  if (d > PV_MAX_DEPTH) return 0; /* (the array stays unused in the arena) */
  t->items = it;
  t->n = (uint32_t)k;
  t->cap = (uint32_t)cap;
  t->depth = d;
  return 1;
}

/* GCC merges the threaded dispatch's jumps back into one unless told not
 * to (its manual advises -fno-gcse for computed gotos); clang keeps them. */
#if defined(__GNUC__) && !defined(__clang__)
#define RUN_ATTRS __attribute__((optimize("no-gcse", "no-crossjumping")))
#else
#define RUN_ATTRS
#endif

/* Run the pickle from r->pos to its STOP.  The opcodes a Flight Recorder
 * dump is made of (strings, small ints, 8-byte longs, MARK, empty
 * containers filled by SETITEMS / APPENDS, memo references) are executed
 * here, with the stack and position in locals, when their operands are in
 * bounds and the stack has room; everything else, and every error, goes
 * through step(), which executes the same opcode again from the same
 * state. */
RUN_ATTRS static frz_status run(rd *r)
{
  const uint8_t *p = r->p;
  const size_t len = r->len;
  pv_arena *a = r->a;
  pv **stk = r->stack, **memo = r->memo;
  size_t ns = r->nstack, cap = r->capstack, pos = r->pos, capmemo = r->capmemo;
#if defined(__GNUC__)
  /* Threaded dispatch (GNU C's label addresses): each fast opcode jumps
   * straight to the next one's code, one indirect branch per opcode, which
   * the CPU predicts far better than the switch's single shared one. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Woverride-init" /* the default first, then each fast opcode */
  static const void *const fast[256] = {
      [0 ... 255] = &&slow, ['h'] = &&op_binget, ['j'] = &&op_long_binget, ['X'] = &&op_binunicode,
      [0x8c] = &&op_short_binunicode, ['K'] = &&op_binint1, ['M'] = &&op_binint2, ['J'] = &&op_binint,
      [0x8a] = &&op_long1, ['('] = &&op_mark, [0x88] = &&op_bool, [0x89] = &&op_bool, ['N'] = &&op_none,
      [0x86] = &&op_tuple2, [']'] = &&op_empty, ['}'] = &&op_empty, [')'] = &&op_empty,
      ['u'] = &&op_fill, ['e'] = &&op_fill};
#pragma GCC diagnostic pop
#define NEXT                                                                                       \
  do {                                                                                             \
    left = len - pos;                                                                              \
    if (left && ns != cap) {                                                                       \
      b = p + pos;                                                                                 \
      goto *fast[b[0]];                                                                            \
    }                                                                                              \
    goto top;                                                                                      \
  } while (0)
#else
#define NEXT goto top
#endif
  for (;;) {
  top:;
    size_t left = len - pos;
    if (!left) {
      r->nstack = ns;
      r->pos = r->op = len;
      return pv_fail(r->err, FRZ_E_TRUNCATED, r->name, len, "pickle truncated: no STOP opcode");
    }
    const uint8_t *b = p + pos;
    pv *v;
    if (ns == cap) goto slow; /* every opcode here pushes at most one value */
    switch (b[0]) {
    case 'h': /* BINGET */
    op_binget:
      if (left >= 2 && b[1] < capmemo && (v = memo[b[1]])) {
        stk[ns++] = v;
        pos += 2;
        NEXT;
      }
      break;
    case 'j': /* LONG_BINGET */
    op_long_binget:
      if (left >= 5) {
        uint32_t x = le32(b + 1);
        if (x < capmemo && (v = memo[x])) {
          stk[ns++] = v;
          pos += 5;
          NEXT;
        }
      }
      break;
    case 'X': /* BINUNICODE */
    op_binunicode:
      if (left >= 5) {
        uint32_t n = le32(b + 1);
        if (left - 5 >= n && (v = pv_new(a, PV_STR))) {
          v->s = (const char *)b + 5;
          v->slen = n;
          stk[ns++] = v;
          pos += 5 + (size_t)n;
          NEXT;
        }
      }
      break;
    case 0x8c: /* SHORT_BINUNICODE */
    op_short_binunicode:
      if (left >= 2 && left - 2 >= b[1] && (v = pv_new(a, PV_STR))) {
        v->s = (const char *)b + 2;
        v->slen = b[1];
        stk[ns++] = v;
        pos += 2 + (size_t)b[1];
        NEXT;
      }
      break;
    case 'K': /* BININT1 */
    op_binint1:
      if (left >= 2 && (v = r->small[b[1]])) {
        stk[ns++] = v;
        pos += 2;
        NEXT;
      }
      break;
    case 'M': /* BININT2 */
    op_binint2:
      if (left >= 3) {
        uint32_t x = (uint32_t)b[1] | (uint32_t)b[2] << 8;
        if (x < PK_SMALL ? (v = r->small[x]) != NULL : (v = pv_new(a, PV_INT)) != NULL) {
          v->num.i = x; /* (a small one already holds x) */
          stk[ns++] = v;
          pos += 3;
          NEXT;
        }
      }
      break;
    case 'J': /* BININT */
    op_binint:
      if (left >= 5) {
        int32_t x = (int32_t)le32(b + 1);
        if (x >= 0 && x < PK_SMALL ? (v = r->small[x]) != NULL : (v = pv_new(a, PV_INT)) != NULL) {
          v->num.i = x;
          stk[ns++] = v;
          pos += 5;
          NEXT;
        }
      }
      break;
    case 0x8a: /* LONG1 of 8 bytes (PyTorch's writer for any int beyond int32): always an int64 */
    op_long1:
      if (left >= 10 && b[1] == 8) {
        uint64_t u = 0;
        for (int i = 7; i >= 0; i--) u = u << 8 | b[2 + i];
        int64_t x = (int64_t)u;
        if (x >= 0 && x < PK_SMALL ? (v = r->small[x]) != NULL : (v = pv_new(a, PV_INT)) != NULL) {
          v->num.i = x;
          stk[ns++] = v;
          pos += 10;
          NEXT;
        }
      }
      break;
    case '(': /* MARK */
    op_mark:
      if (r->nmarks < PV_MAX_DEPTH) {
        r->marks[r->nmarks++] = ns;
        pos += 1;
        NEXT;
      }
      break;
    case 0x88: case 0x89: /* NEWTRUE, NEWFALSE: the shared node, once step() made it */
    op_bool:
      if ((v = r->truth[b[0] == 0x88])) {
        stk[ns++] = v;
        pos += 1;
        NEXT;
      }
      break;
    case 'N': /* NONE: likewise */
    op_none:
      if ((v = r->none)) {
        stk[ns++] = v;
        pos += 1;
        NEXT;
      }
      break;
    case 0x86: { /* TUPLE2, as tuple_of(r, 2) makes it */
    op_tuple2:;
      size_t bottom = r->nmarks ? r->marks[r->nmarks - 1] : 0;
      if (ns - bottom >= 2 && (v = pv_new(a, PV_TUPLE)) && fill_fast(a, v, stk + ns - 2, 2)) {
        ns -= 2;
        stk[ns++] = v;
        pos += 1;
        NEXT;
      }
      break; /* (a node made here stays unused in the arena) */
    }
    case ']': case '}': case ')': /* EMPTY_LIST, EMPTY_DICT, EMPTY_TUPLE */
    op_empty:
      if ((v = pv_new(a, b[0] == ']' ? PV_LIST : b[0] == '}' ? PV_DICT : PV_TUPLE))) {
        stk[ns++] = v;
        pos += 1;
        NEXT;
      }
      break;
    case 'u': case 'e': /* SETITEMS, APPENDS: the container is just below the MARK */
    op_fill:
      if (r->nmarks) {
        size_t m = r->marks[r->nmarks - 1];
        size_t below = r->nmarks > 1 ? r->marks[r->nmarks - 2] : 0;
        if (m > below && ns > m) {
          pv *t = stk[m - 1];
          if (t->type == (b[0] == 'u' ? PV_DICT : PV_LIST) && (t->type != PV_DICT || (ns - m) % 2 == 0) &&
              fill_fast(a, t, stk + m, ns - m)) {
            ns = m;
            r->nmarks--;
            pos += 1;
            NEXT;
          }
        }
      }
      break;
    default:
      break;
    }
  slow:
    r->nstack = ns;
    r->pos = pos;
    int stop = 0;
    frz_status st = step(r, &stop);
    if (st || stop) return st;
    stk = r->stack;
    ns = r->nstack;
    cap = r->capstack;
    pos = r->pos;
    memo = r->memo;
    capmemo = r->capmemo;
  }
}

#undef NEXT

frz_status pv_from_pickle(const void *buf, size_t len, const char *name, pv_arena *a,
                          const pv **root, frz_error *err)
{
  rd r;
  memset(&r, 0, sizeof r);
  r.p = buf;
  r.len = len;
  r.name = name;
  r.err = err;
  r.a = a;
  *root = NULL;
  frz_status st = FRZ_OK;
  if (len < 2 || r.p[0] != 0x80) {
    st = pv_fail(err, len ? FRZ_E_MAGIC : FRZ_E_EMPTY, name, 0, "not a pickle (no PROTO opcode)");
    goto out;
  }
  st = run(&r);
  if (!st) {
    if (r.nmarks || r.nstack != 1) st = corrupt(&r, "STOP with an unbalanced stack");
    else *root = r.stack[0];
  }
out:
  free(r.stack);
  free(r.memo);
  return st;
}
