/* expr.c — integer expressions of scenario files: color=rank/2,
 * peer=rank+1, count=1024*(rank+1), color=rank<4?0:none ...
 *
 * Grammar (no spaces inside, since a value is one token):
 *   expr  := or [ '?' expr ':' expr ]
 *   or    := and { '||' and }        and := cmp { '&&' cmp }
 *   cmp   := sum [ ('<'|'<='|'>'|'>='|'=='|'!=') sum ]
 *   sum   := prod { ('+'|'-') prod } prod := unary { ('*'|'/'|'%') unary }
 *   unary := ('-'|'!') unary | number | name | '(' expr ')'
 * Names: rank, size (in the communicator), grank, wsize (world), next,
 * prev (rank+1 and rank-1 modulo size), none (-1, "no color"), peer (the
 * receiving comm rank, in alltoallv's counts= and splits= only).  '%' is
 * the floor modulo (never negative for a positive divisor); '/' rounds
 * toward minus infinity likewise.
 */
#include "config.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "scenario.h"

struct sc_parser {
  const char *p;
  const struct sc_vars *v;
  char *err;
  size_t errsize;
  int failed;
  int dead;                     /* >0 inside a branch whose value is unused */
};

static long sc_fail(struct sc_parser *ps, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static long sc_fail(struct sc_parser *ps, const char *fmt, ...)
{
  if (!ps->failed) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ps->err, ps->errsize, fmt, ap);
    va_end(ap);
  }
  ps->failed = 1;
  return 0;
}

static int sc_accept(struct sc_parser *ps, const char *tok)
{
  size_t n = strlen(tok);
  if (strncmp(ps->p, tok, n) != 0)
    return 0;
  ps->p += n;
  return 1;
}

static long sc_floor_div(long a, long b)
{
  long q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

static long sc_floor_mod(long a, long b)
{
  return a - sc_floor_div(a, b) * b;
}

static long sc_expr(struct sc_parser *ps);

static long sc_primary(struct sc_parser *ps)
{
  if (sc_accept(ps, "(")) {
    long v = sc_expr(ps);
    if (!sc_accept(ps, ")"))
      return sc_fail(ps, "missing ')'");
    return v;
  }
  if (isdigit((unsigned char)*ps->p)) {
    long v = 0;
    while (isdigit((unsigned char)*ps->p)) {
      if (v > (1L << 40))
        return sc_fail(ps, "number too large");
      v = v * 10 + (*ps->p++ - '0');
    }
    return v;
  }
  if (isalpha((unsigned char)*ps->p)) {
    char name[16];
    size_t n = 0;
    while (isalnum((unsigned char)*ps->p) || *ps->p == '_') {
      if (n + 1 < sizeof name)
        name[n++] = *ps->p;
      ps->p++;
    }
    name[n] = '\0';
    const struct sc_vars *v = ps->v;
    if (!strcmp(name, "rank")) return v->rank;
    if (!strcmp(name, "size")) return v->size;
    if (!strcmp(name, "grank")) return v->grank;
    if (!strcmp(name, "wsize")) return v->wsize;
    if (!strcmp(name, "next")) return v->size > 0 ? sc_floor_mod(v->rank + 1, v->size) : 0;
    if (!strcmp(name, "prev")) return v->size > 0 ? sc_floor_mod(v->rank - 1, v->size) : 0;
    if (!strcmp(name, "none")) return -1;
    if (!strcmp(name, "peer"))
      return v->has_peer ? v->peer : sc_fail(ps, "'peer' is defined only in alltoallv's counts= and splits=");
    return sc_fail(ps, "unknown name '%s' (rank, size, grank, wsize, next, prev, none, peer)", name);
  }
  if (*ps->p == '\0')
    return sc_fail(ps, "unexpected end of expression");
  return sc_fail(ps, "unexpected '%c'", *ps->p);
}

static long sc_unary(struct sc_parser *ps)
{
  if (sc_accept(ps, "-"))
    return -sc_unary(ps);
  if (sc_accept(ps, "!"))
    return !sc_unary(ps);
  return sc_primary(ps);
}

static long sc_prod(struct sc_parser *ps)
{
  long v = sc_unary(ps);
  for (;;) {
    char op = *ps->p;
    if (op != '*' && op != '/' && op != '%')
      return v;
    ps->p++;
    long r = sc_unary(ps);
    if (op == '*') {
      if (__builtin_mul_overflow(v, r, &v))
        return sc_fail(ps, "overflow");
    } else if (r == 0 && ps->dead)
      v = 0;
    else if (r == 0)
      return sc_fail(ps, "division by zero");
    else
      v = op == '/' ? sc_floor_div(v, r) : sc_floor_mod(v, r);
  }
}

static long sc_sum(struct sc_parser *ps)
{
  long v = sc_prod(ps);
  for (;;) {
    int plus = sc_accept(ps, "+");
    if (!plus && !sc_accept(ps, "-"))
      return v;
    long r = sc_prod(ps);
    if (plus ? __builtin_add_overflow(v, r, &v) : __builtin_sub_overflow(v, r, &v))
      return sc_fail(ps, "overflow");
  }
}

static long sc_cmp(struct sc_parser *ps)
{
  long a = sc_sum(ps);
  if (sc_accept(ps, "<=")) return a <= sc_sum(ps);
  if (sc_accept(ps, ">=")) return a >= sc_sum(ps);
  if (sc_accept(ps, "==")) return a == sc_sum(ps);
  if (sc_accept(ps, "!=")) return a != sc_sum(ps);
  if (sc_accept(ps, "<")) return a < sc_sum(ps);
  if (sc_accept(ps, ">")) return a > sc_sum(ps);
  return a;
}

static long sc_and(struct sc_parser *ps)
{
  long v = sc_cmp(ps);
  while (sc_accept(ps, "&&")) {
    ps->dead += !v;
    long r = sc_cmp(ps);
    ps->dead -= !v;
    v = v && r;
  }
  return v;
}

static long sc_or(struct sc_parser *ps)
{
  long v = sc_and(ps);
  while (sc_accept(ps, "||")) {
    ps->dead += !!v;
    long r = sc_and(ps);
    ps->dead -= !!v;
    v = v || r;
  }
  return v;
}

/* Both branches are parsed (to report syntax errors); the unused one may
 * divide by zero. */
static long sc_expr(struct sc_parser *ps)
{
  long c = sc_or(ps);
  if (!sc_accept(ps, "?"))
    return c;
  ps->dead += !c;
  long a = sc_expr(ps);
  ps->dead -= !c;
  if (!sc_accept(ps, ":"))
    return sc_fail(ps, "missing ':' after '?'");
  ps->dead += !!c;
  long b = sc_expr(ps);
  ps->dead -= !!c;
  return c ? a : b;
}

/* dead > 0 checks syntax only: arithmetic errors are not reported. */
static int sc_expr_run(const char *text, const struct sc_vars *v, int dead, long *out, char *err,
                       size_t errsize)
{
  struct sc_parser ps = { text, v, err, errsize, 0, dead };
  long r = sc_expr(&ps);
  if (!ps.failed && *ps.p)
    sc_fail(&ps, "unexpected '%c'", *ps.p);
  if (ps.failed)
    return -1;
  *out = r;
  return 0;
}

int sc_expr_eval(const char *text, const struct sc_vars *v, long *out, char *err, size_t errsize)
{
  return sc_expr_run(text, v, 0, out, err, errsize);
}

int sc_expr_check(const char *text, char *err, size_t errsize)
{
  struct sc_vars v = { 0, 1, 0, 1, 0, 1 };
  long out;
  return sc_expr_run(text, &v, 1, &out, err, errsize);
}
