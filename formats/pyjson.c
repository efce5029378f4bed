/* pyjson.c — a strict JSON reader into the pv tree, for PyTorch Flight
 * Recorder dumps in their JSON form.  Integers stay exact (int64_t; the
 * nanosecond times do not fit a double), nesting is limited to
 * PV_MAX_DEPTH, errors name the byte offset. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pyval.h"

typedef struct jr {
  const char *p;
  size_t len, pos;
  const char *name;
  frz_error *err;
  pv_arena *a;
} jr;

static frz_status bad(jr *r, const char *what)
{
  if (r->pos >= r->len)
    return pv_fail(r->err, FRZ_E_TRUNCATED, r->name, r->len, "JSON truncated: %s", what);
  return pv_fail(r->err, FRZ_E_CORRUPT, r->name, r->pos, "bad JSON: %s", what);
}

static frz_status nomem(jr *r)
{
  return pv_fail(r->err, FRZ_E_NOMEM, r->name, r->pos, "JSON needs more memory than allowed");
}

static void ws(jr *r)
{
  while (r->pos < r->len && (r->p[r->pos] == ' ' || r->p[r->pos] == '\t' ||
                             r->p[r->pos] == '\n' || r->p[r->pos] == '\r'))
    r->pos++;
}

static int lit(jr *r, const char *s)
{
  size_t n = strlen(s);
  if (r->len - r->pos < n || memcmp(r->p + r->pos, s, n) != 0) return 0;
  r->pos += n;
  return 1;
}

static int hex4(const char *s, unsigned *out)
{
  unsigned v = 0;
  for (int i = 0; i < 4; i++) {
    char c = s[i];
    v <<= 4;
    if (c >= '0' && c <= '9') v |= (unsigned)(c - '0');
    else if (c >= 'a' && c <= 'f') v |= (unsigned)(c - 'a' + 10);
    else if (c >= 'A' && c <= 'F') v |= (unsigned)(c - 'A' + 10);
    else return -1;
  }
  *out = v;
  return 0;
}

static size_t utf8(unsigned cp, char *o)
{
  if (cp < 0x80) { o[0] = (char)cp; return 1; }
  if (cp < 0x800) { o[0] = (char)(0xc0 | (cp >> 6)); o[1] = (char)(0x80 | (cp & 0x3f)); return 2; }
  if (cp < 0x10000) {
    o[0] = (char)(0xe0 | (cp >> 12));
    o[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
    o[2] = (char)(0x80 | (cp & 0x3f));
    return 3;
  }
  o[0] = (char)(0xf0 | (cp >> 18));
  o[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
  o[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
  o[3] = (char)(0x80 | (cp & 0x3f));
  return 4;
}

/* A string at r->pos (the opening quote). */
static frz_status string(jr *r, pv **out)
{
  size_t start = ++r->pos, esc = 0;
  while (r->pos < r->len && r->p[r->pos] != '"') {
    unsigned char c = (unsigned char)r->p[r->pos];
    if (c < 0x20) return bad(r, "control character in a string");
    if (c == '\\') {
      esc = 1;
      r->pos++;
    }
    r->pos++;
  }
  if (r->pos >= r->len) return bad(r, "unterminated string");
  size_t end = r->pos++;
  pv *v = pv_new(r->a, PV_STR);
  if (!v) return nomem(r);
  if (!esc) {
    v->s = r->p + start;
    v->slen = end - start;
    *out = v;
    return FRZ_OK;
  }
  char *d = pv_strdup(r->a, r->p + start, end - start); /* unescaped is never longer */
  if (!d) return nomem(r);
  size_t o = 0;
  for (size_t i = start; i < end; i++) {
    char c = r->p[i];
    if (c != '\\') {
      d[o++] = c;
      continue;
    }
    char e = r->p[++i];
    switch (e) {
    case '"': case '\\': case '/': d[o++] = e; break;
    case 'b': d[o++] = '\b'; break;
    case 'f': d[o++] = '\f'; break;
    case 'n': d[o++] = '\n'; break;
    case 'r': d[o++] = '\r'; break;
    case 't': d[o++] = '\t'; break;
    case 'u': {
      unsigned cp, lo;
      r->pos = i - 1;
      if (end - i < 5 || hex4(r->p + i + 1, &cp)) return bad(r, "bad \\u escape");
      i += 4;
      if (cp >= 0xd800 && cp < 0xdc00 && end - i >= 7 && r->p[i + 1] == '\\' && r->p[i + 2] == 'u' &&
          hex4(r->p + i + 3, &lo) == 0 && lo >= 0xdc00 && lo < 0xe000) {
        cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
        i += 6;
      } else if (cp >= 0xd800 && cp < 0xe000) {
        cp = 0xfffd;
      }
      o += utf8(cp, d + o);
      break;
    }
    default:
      r->pos = i - 1;
      return bad(r, "bad escape in a string");
    }
  }
  r->pos = end + 1;
  v->s = d;
  v->slen = o;
  *out = v;
  return FRZ_OK;
}

static frz_status number(jr *r, pv **out)
{
  size_t s = r->pos;
  int isf = 0;
  if (r->pos < r->len && r->p[r->pos] == '-') r->pos++;
  size_t digits = r->pos;
  while (r->pos < r->len && r->p[r->pos] >= '0' && r->p[r->pos] <= '9') r->pos++;
  if (r->pos == digits) return bad(r, "unexpected character");
  while (r->pos < r->len && strchr(".eE+-0123456789", r->p[r->pos])) {
    if (strchr(".eE", r->p[r->pos])) isf = 1;
    r->pos++;
  }
  char b[64];
  size_t n = r->pos - s;
  if (n >= sizeof b) {
    r->pos = s;
    return bad(r, "number too long");
  }
  memcpy(b, r->p + s, n);
  b[n] = '\0';
  char *end;
  pv *v;
  if (!isf) {
    errno = 0;
    long long x = strtoll(b, &end, 10);
    if (*end) {
      r->pos = s;
      return bad(r, "bad number");
    }
    if (errno == ERANGE) {
      if (!(v = pv_new(r->a, PV_BIGINT))) return nomem(r);
      v->num.i = b[0] == '-' ? -1 : 1;
    } else {
      if (!(v = pv_new(r->a, PV_INT))) return nomem(r);
      v->num.i = x;
    }
  } else {
    double f = strtod(b, &end);
    if (*end) {
      r->pos = s;
      return bad(r, "bad number");
    }
    if (!(v = pv_new(r->a, PV_FLOAT))) return nomem(r);
    v->num.f = f;
  }
  *out = v;
  return FRZ_OK;
}

static frz_status value(jr *r, pv **out, unsigned depth);

static frz_status push_item(jr *r, pv *c, pv *item)
{
  int rc = pv_push(r->a, c, item);
  if (rc == -2) return bad(r, "containers nested too deeply");
  return rc ? nomem(r) : FRZ_OK;
}

/* An array or an object at r->pos. */
static frz_status container(jr *r, pv **out, unsigned depth)
{
  int obj = r->p[r->pos] == '{';
  char close = obj ? '}' : ']';
  if (depth >= PV_MAX_DEPTH) return bad(r, "containers nested too deeply");
  pv *c = pv_new(r->a, obj ? PV_DICT : PV_LIST);
  if (!c) return nomem(r);
  r->pos++;
  ws(r);
  if (r->pos < r->len && r->p[r->pos] == close) {
    r->pos++;
    *out = c;
    return FRZ_OK;
  }
  for (;;) {
    pv *k = NULL, *v = NULL;
    frz_status st;
    ws(r);
    if (obj) {
      if (r->pos >= r->len || r->p[r->pos] != '"') return bad(r, "expected a string key");
      if ((st = string(r, &k))) return st;
      ws(r);
      if (r->pos >= r->len || r->p[r->pos] != ':') return bad(r, "expected ':'");
      r->pos++;
      if ((st = push_item(r, c, k))) return st;
    }
    if ((st = value(r, &v, depth + 1))) return st;
    if ((st = push_item(r, c, v))) return st;
    ws(r);
    if (r->pos >= r->len) return bad(r, "unterminated container");
    if (r->p[r->pos] == close) {
      r->pos++;
      *out = c;
      return FRZ_OK;
    }
    if (r->p[r->pos] != ',') return bad(r, "expected ',' or the end of the container");
    r->pos++;
  }
}

static frz_status value(jr *r, pv **out, unsigned depth)
{
  ws(r);
  if (r->pos >= r->len) return bad(r, "expected a value");
  char c = r->p[r->pos];
  pv *v;
  if (c == '{' || c == '[') return container(r, out, depth);
  if (c == '"') return string(r, out);
  if (lit(r, "null")) {
    if (!(v = pv_new(r->a, PV_NONE))) return nomem(r);
  } else if (lit(r, "true") || lit(r, "false")) {
    if (!(v = pv_new(r->a, PV_BOOL))) return nomem(r);
    v->num.i = r->p[r->pos - 1] == 'e' && r->p[r->pos - 2] == 'u';
  } else {
    return number(r, out);
  }
  *out = v;
  return FRZ_OK;
}

frz_status pv_from_json(const void *buf, size_t len, const char *name, pv_arena *a,
                        const pv **root, frz_error *err)
{
  jr r = {buf, len, 0, name, err, a};
  pv *v = NULL;
  *root = NULL;
  frz_status st = value(&r, &v, 0);
  if (st) return st;
  ws(&r);
  if (r.pos != r.len) return bad(&r, "trailing data after the document");
  *root = v;
  return FRZ_OK;
}
