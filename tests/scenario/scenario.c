/* scenario.c — parses and checks a scenario file (tests/scenarios/README.md)
 * and computes, for every world rank, its place in every communicator, so
 * that a bad file is rejected as a whole before any rank starts. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse.h"

#define SC_MAX_TOKENS 32

int sc_error(const struct sc_ctx *c, const char *fmt, ...)
{
  va_list ap;
  fprintf(stderr, "%s:%d: ", c->sc->file, c->line);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  return -1;
}

int sc_dtype_parse(const struct sc_ctx *c, const char *s, ncclDataType_t *out)
{
  if (sc_dtype_lookup(s, out) == 0)
    return 0;
  return sc_error(c, "unknown dtype '%s' (int8 uint8 int32 uint32 int64 uint64 float16 float32 "
                  "float64 bfloat16 float8e4m3 float8e5m2)", s);
}

int sc_redop_parse(const struct sc_ctx *c, const char *s, ncclRedOp_t *out)
{
  if (sc_redop_lookup(s, out) == 0)
    return 0;
  return sc_error(c, "unknown redop '%s' (sum prod max min avg)", s);
}

int sc_long_parse(const struct sc_ctx *c, const char *what, const char *s, long lo, long hi, long *out)
{
  char *end;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (errno || end == s || *end || v < lo || v > hi)
    return sc_error(c, "%s: '%s' is not an integer in [%ld, %ld]", what, s, lo, hi);
  *out = v;
  return 0;
}

int sc_expr_copy(const struct sc_ctx *c, const char *what, const char *s, char *dst)
{
  char err[128];
  if (strlen(s) >= SC_EXPR_MAX)
    return sc_error(c, "%s: expression too long", what);
  if (sc_expr_check(s, err, sizeof err) != 0)
    return sc_error(c, "%s=%s: %s", what, s, err);
  strcpy(dst, s);
  return 0;
}

int sc_name_ok(const char *s)
{
  if (!isalpha((unsigned char)*s) || strlen(s) >= SC_NAME_MAX)
    return 0;
  for (; *s; s++)
    if (!isalnum((unsigned char)*s) && *s != '_' && *s != '-')
      return 0;
  return 1;
}

/* "5", "3-7", "0,2,4-6", "all", "*", "even", "odd"; values in [0, max). */
int sc_set_parse(const struct sc_ctx *c, const char *what, const char *s, long max, struct sc_set *set)
{
  char buf[256];
  if (strlen(s) >= sizeof buf)
    return sc_error(c, "%s: list too long", what);
  strcpy(buf, s);
  memset(set, 0, sizeof *set);
  char *save = NULL;
  for (char *item = strtok_r(buf, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
    if (set->n == SC_MAX_RANGES)
      return sc_error(c, "%s: more than %d items", what, SC_MAX_RANGES);
    int i = set->n++;
    set->stride[i] = 1;
    if (!strcmp(item, "all") || !strcmp(item, "*")) {
      set->lo[i] = 0;
      set->hi[i] = INT_MAX;
    } else if (!strcmp(item, "even") || !strcmp(item, "odd")) {
      set->lo[i] = item[0] == 'o';
      set->hi[i] = INT_MAX;
      set->stride[i] = 2;
    } else {
      char *dash = strchr(item, '-');
      long lo, hi;
      if (dash)
        *dash = '\0';
      if (sc_long_parse(c, what, item, 0, max - 1, &lo) != 0)
        return -1;
      hi = lo;
      if (dash && sc_long_parse(c, what, dash + 1, lo, max - 1, &hi) != 0)
        return -1;
      set->lo[i] = (int)lo;
      set->hi[i] = (int)hi;
    }
  }
  if (set->n == 0)
    return sc_error(c, "%s: empty list", what);
  return 0;
}

/* Splits key=value; returns 0 for a bare word. */
int sc_kv(char *tok, char **key, char **val)
{
  char *eq = strchr(tok, '=');
  if (!eq)
    return 0;
  *eq = '\0';
  *key = tok;
  *val = eq + 1;
  return 1;
}

int sc_comm_find(const struct scenario *sc, const char *name)
{
  for (int i = 0; i < sc->ncomms; i++)
    if (!strcmp(sc->comms[i].name, name))
      return i;
  return -1;
}

/* Grows an array of n elements to n+1; returns the new element, zeroed. */
void *sc_push(void *arrayp, int *n, size_t size)
{
  void **array = arrayp;
  void *grown = realloc(*array, (size_t)(*n + 1) * size);
  if (!grown) {
    fprintf(stderr, "fr-scenario-job: out of memory\n");
    exit(2);
  }
  *array = grown;
  void *elem = (char *)grown + (size_t)(*n)++ * size;
  memset(elem, 0, size);
  return elem;
}

/* site=NAME: the number of its call site (1.., in order of first use). */
static int sc_site(struct sc_ctx *c, const char *name, int *out)
{
  struct scenario *sc = c->sc;
  if (!sc_name_ok(name))
    return sc_error(c, "bad site name '%s'", name);
  for (int i = 0; i < sc->nsites; i++) {
    if (!strcmp(sc->sites[i], name)) {
      *out = i + 1;
      return 0;
    }
  }
  if (sc->nsites == SC_MAX_SITES)
    return sc_error(c, "site=%s: more than %d call sites (job_site_1 .. job_site_%d)", name, SC_MAX_SITES,
                    SC_MAX_SITES);
  strcpy(sc->sites[sc->nsites++], name);
  *out = sc->nsites;
  return 0;
}

/* graph=NAME: the number of its graph (1.., in order of first use); its
 * ops must be one run of body lines. */
static int sc_graph(struct sc_ctx *c, const char *name, int *out)
{
  struct scenario *sc = c->sc;
  if (!sc_name_ok(name))
    return sc_error(c, "bad graph name '%s'", name);
  int g = 0;
  for (int i = 0; i < sc->ngraphs && !g; i++)
    if (!strcmp(sc->graphs[i], name))
      g = i + 1;
  if (g && (sc->nops == 0 || sc->ops[sc->nops - 1].graph != g))
    return sc_error(c, "graph=%s: its ops must be consecutive body lines (a graph is captured in one go)", name);
  if (!g && sc->ngraphs == SC_MAX_GRAPHS)
    return sc_error(c, "graph=%s: more than %d graphs", name, SC_MAX_GRAPHS);
  if (!g) {
    strcpy(sc->graphs[sc->ngraphs++], name);
    g = sc->ngraphs;
  }
  *out = g;
  return 0;
}

/* create|destroy|finalize|abort NAME: the comm must exist, and be late
 * for create. */
static int sc_check_life(struct sc_ctx *c, const struct sc_op *op, int has_comm)
{
  const struct sc_comm *cm = &c->sc->comms[op->comm];
  if (!has_comm)
    return sc_error(c, "usage: %s COMM [ranks=SEL] [id=NAME] [site=NAME]", sc_kind_name(op->kind));
  if (op->kind == SC_CREATE && !cm->late)
    return cm->how == SC_COMM_WORLD
               ? sc_error(c, "create world: world is created before the loop, never late")
               : sc_error(c, "create %s: %s is created before the loop (add 'late' to its comm line, line %d)",
                          cm->name, cm->name, cm->line);
  return 0;
}

/* algo=NAME or proto=NAME: NCCL's spelling into dst (SC_NAME_MAX). */
static int sc_algo_copy(const struct sc_ctx *c, const char *what, const char *v, char *dst)
{
  const char *name = what[0] == 'a' ? sc_algo_lookup(v) : sc_proto_lookup(v);
  if (!name)
    return sc_error(c, "unknown %s '%s' (%s)", what, v, what[0] == 'a' ? SC_ALGO_NAMES : SC_PROTO_NAMES);
  strcpy(dst, name);
  return 0;
}

/* An op line of the loop body. */
static int sc_parse_op(struct sc_ctx *c, enum sc_kind kind, char **tok, int n)
{
  struct scenario *sc = c->sc;
  struct sc_op op;
  memset(&op, 0, sizeof op);
  op.kind = kind;
  op.line = c->line;
  op.dtype = ncclFloat32;
  op.redop = ncclSum;
  strcpy(op.count, "1024");
  strcpy(op.root, "0");
  op.ranks.n = 1;
  op.ranks.hi[0] = INT_MAX;
  op.ranks.stride[0] = 1;
  int first = 1;
  if (kind == SC_GROUP_BEGIN) {
    if (n < 2 || (strcmp(tok[1], "begin") && strcmp(tok[1], "end")))
      return sc_error(c, "expected 'group begin' or 'group end'");
    if (!strcmp(tok[1], "end")) {
      op.kind = kind = SC_GROUP_END;
      if (--c->group_depth < 0)
        return sc_error(c, "'group end' without 'group begin'");
    } else if (c->group_depth++ == 0) {
      c->group_line = c->line;
    }
    first = 2;
  } else if (kind == SC_SLEEP) {
    if (n < 2 || sc_long_parse(c, "sleep", tok[1], 0, 3600L * 1000, &op.sleep_ms) != 0)
      return n < 2 ? sc_error(c, "usage: sleep MILLISECONDS") : -1;
    first = 2;
  }
  int nccl = sc_kind_is_nccl(kind), life = sc_kind_is_life(kind), has_comm = 0;
  if ((nccl || life) && n > 1 && !strchr(tok[1], '=')) {
    op.comm = sc_comm_find(sc, tok[1]);
    if (op.comm < 0)
      return sc_error(c, "unknown communicator '%s'", tok[1]);
    first = 2;
    has_comm = 1;
  }
  int has_peer = 0;
  for (int i = first; i < n; i++) {
    char *k, *v;
    if (!sc_kv(tok[i], &k, &v))
      return sc_error(c, "unexpected '%s' (settings are KEY=VALUE)", tok[i]);
    if (!strcmp(k, "ranks") || !strcmp(k, "rank")) {
      if (sc_set_parse(c, k, v, sc->world ? sc->world : SC_MAX_WORLD, &op.ranks) != 0)
        return -1;
    } else if (!strcmp(k, "id")) {
      if (!sc_name_ok(v))
        return sc_error(c, "bad id '%s'", v);
      for (int j = 0; j < sc->nops; j++)
        if (!strcmp(sc->ops[j].id, v))
          return sc_error(c, "id '%s' already used on line %d", v, sc->ops[j].line);
      strcpy(op.id, v);
    } else if (kind != SC_SLEEP && kind != SC_SYNC && !strcmp(k, "site")) {
      if (sc_site(c, v, &op.site) != 0)
        return -1;
    } else if ((nccl || life) && !strcmp(k, "comm")) {
      op.comm = sc_comm_find(sc, v);
      if (op.comm < 0)
        return sc_error(c, "unknown communicator '%s'", v);
      has_comm = 1;
    } else if (nccl && !strcmp(k, "count")) {
      if (sc_expr_copy(c, k, v, op.count) != 0)
        return -1;
    } else if (nccl && !strcmp(k, "dtype")) {
      if (sc_dtype_parse(c, v, &op.dtype) != 0)
        return -1;
    } else if (sc_kind_has_redop(kind) && (!strcmp(k, "redop") || !strcmp(k, "op"))) {
      if (sc_redop_parse(c, v, &op.redop) != 0)
        return -1;
    } else if (sc_kind_has_root(kind) && !strcmp(k, "root")) {
      if (sc_expr_copy(c, k, v, op.root) != 0)
        return -1;
    } else if (sc_kind_has_peer(kind) && !strcmp(k, "peer")) {
      if (sc_expr_copy(c, k, v, op.peer) != 0)
        return -1;
      has_peer = 1;
    } else if (kind == SC_ALLTOALLV && !strcmp(k, "counts")) {
      if (sc_expr_copy(c, k, v, op.counts) != 0)
        return -1;
    } else if (sc_kind_has_algo(kind) && (!strcmp(k, "algo") || !strcmp(k, "proto"))) {
      if (sc_algo_copy(c, k, v, k[0] == 'a' ? op.algo : op.proto) != 0)
        return -1;
    } else if (nccl && kind != SC_ALLTOALLV && !strcmp(k, "graph")) {
      if (c->group_depth > 0)
        return sc_error(c, "graph=%s: not inside 'group begin' .. 'group end'", v);
      if (sc_graph(c, v, &op.graph) != 0)
        return -1;
    } else {
      return sc_error(c, "'%s' does not apply to %s", k, sc_kind_name(kind));
    }
  }
  if (sc_kind_has_peer(kind) && !has_peer)
    return sc_error(c, "%s needs peer=EXPR", sc_kind_name(kind));
  if (kind == SC_ALLTOALLV && !op.counts[0])
    return sc_error(c, "alltoallv needs counts=EXPR (elements comm rank 'rank' sends to 'peer')");
  if (life && sc_check_life(c, &op, has_comm) != 0)
    return -1;
  if (op.graph && sc->comms[op.comm].how == SC_COMM_INITALL)
    return sc_error(c, "graph=: an initall comm's op runs on every device's stream; not modelled");
  *(struct sc_op *)sc_push(&sc->ops, &sc->nops, sizeof op) = op;
  return 0;
}

/* "stall link I->J [channel C]" or "stall kernel" at tok[0..]; returns the
 * tokens used, or -1 after an error. */
static int sc_parse_stall(struct sc_ctx *c, char **tok, int n, struct sc_fault *f)
{
  if (n >= 2 && !strcmp(tok[1], "kernel")) {
    f->actions |= SC_F_STALL_KERNEL;
    return 2;
  }
  char tail;
  if (n < 3 || strcmp(tok[1], "link") ||
      sscanf(tok[2], "%d->%d%c", &f->stall_src, &f->stall_dst, &tail) != 2 || f->stall_src < 0 ||
      f->stall_dst < 0 || f->stall_src == f->stall_dst)
    return sc_error(c, "usage: stall link SRC->DST [channel C] | stall kernel");
  f->stall_channel = 0;
  int used = 3;
  if (n >= 5 && !strcmp(tok[3], "channel")) {
    long ch;
    if (sc_long_parse(c, "channel", tok[4], 0, 63, &ch) != 0)
      return -1;
    f->stall_channel = (int)ch;
    used = 5;
  }
  f->actions |= SC_F_STALL_LINK;
  return used;
}

/* fault rank=SEL step=SEL op=N|ID ACTION... */
static int sc_parse_fault(struct sc_ctx *c, char **tok, int n)
{
  struct scenario *sc = c->sc;
  struct sc_fault f;
  memset(&f, 0, sizeof f);
  f.line = c->line;
  f.op = -1;
  f.swap = -1;
  char opref[SC_NAME_MAX] = "", swapref[SC_NAME_MAX] = "";
  int has_rank = 0, has_step = 0, has_comm = 0;
  f.init_comm = -1;
  for (int i = 1; i < n; i++) {
    char *k, *v;
    if (!sc_kv(tok[i], &k, &v)) {
      if (!strcmp(tok[i], "stop")) f.actions |= SC_F_STOP;
      else if (!strcmp(tok[i], "skip")) f.actions |= SC_F_SKIP;
      else if (!strcmp(tok[i], "exit")) f.actions |= SC_F_EXIT;
      else if (!strcmp(tok[i], "crash")) f.actions |= SC_F_CRASH;
      else if (!strcmp(tok[i], "extra")) f.actions |= SC_F_EXTRA;
      else if (!strcmp(tok[i], "trigger")) f.actions |= SC_F_TRIGGER;
      else if (!strcmp(tok[i], "block-read")) f.actions |= SC_F_BLOCK_READ;
      else if (!strcmp(tok[i], "busy-stream")) f.actions |= SC_F_BUSY_STREAM;
      else if (!strcmp(tok[i], "async-error")) f.actions |= SC_F_ASYNC_ERROR;
      else if (!strcmp(tok[i], "init-fail")) f.actions |= SC_F_INIT_FAIL;
      else if (!strcmp(tok[i], "no-return")) f.actions |= SC_F_NO_RETURN;
      else if (!strcmp(tok[i], "capture")) f.actions |= SC_F_CAPTURE;
      else if (!strcmp(tok[i], "no-group-end")) f.actions |= SC_F_NO_GROUP_END;
      else if (!strcmp(tok[i], "stall")) {
        int used = sc_parse_stall(c, tok + i, n - i, &f);
        if (used < 0)
          return -1;
        i += used - 1;
      } else
        return sc_error(c, "unknown fault action '%s'", tok[i]);
      continue;
    }
    if (!strcmp(k, "rank") || !strcmp(k, "ranks")) {
      if (!sc->world)
        return sc_error(c, "'world N' must come before faults");
      if (sc_set_parse(c, k, v, sc->world, &f.ranks) != 0)
        return -1;
      has_rank = 1;
    } else if (!strcmp(k, "step") || !strcmp(k, "steps")) {
      if (sc_set_parse(c, k, v, INT_MAX, &f.steps) != 0)
        return -1;
      for (int j = 0; j < f.steps.n; j++)
        if (f.steps.lo[j] == 0 && f.steps.hi[j] != INT_MAX)
          return sc_error(c, "steps are numbered from 1");
      has_step = 1;
    } else if (!strcmp(k, "dev") || !strcmp(k, "devs")) {
      if (sc_set_parse(c, k, v, SC_MAX_DEVICES, &f.devs) != 0)
        return -1;
      f.has_dev = 1;
    } else if (!strcmp(k, "op")) {
      snprintf(opref, sizeof opref, "%s", v);
    } else if (!strcmp(k, "swap")) {
      snprintf(swapref, sizeof swapref, "%s", v);
      f.actions |= SC_F_SWAP;
    } else if (!strcmp(k, "sleep")) {
      if (sc_long_parse(c, k, v, 0, 3600L * 1000, &f.sleep_ms) != 0)
        return -1;
      f.actions |= SC_F_SLEEP;
    } else if (!strcmp(k, "count")) {
      if (sc_expr_copy(c, k, v, f.count) != 0)
        return -1;
      f.actions |= SC_F_COUNT;
    } else if (!strcmp(k, "dtype")) {
      if (sc_dtype_parse(c, v, &f.dtype) != 0)
        return -1;
      f.actions |= SC_F_DTYPE;
    } else if (!strcmp(k, "redop")) {
      if (sc_redop_parse(c, v, &f.redop) != 0)
        return -1;
      f.actions |= SC_F_REDOP;
    } else if (!strcmp(k, "root")) {
      if (sc_expr_copy(c, k, v, f.root) != 0)
        return -1;
      f.actions |= SC_F_ROOT;
    } else if (!strcmp(k, "peer")) {
      if (sc_expr_copy(c, k, v, f.peer) != 0)
        return -1;
      f.actions |= SC_F_PEER;
    } else if (!strcmp(k, "async-error")) {
      long e;
      if (sc_long_parse(c, k, v, ncclUnhandledCudaError, ncclRemoteError, &e) != 0)
        return -1;
      f.async_error = (ncclResult_t)e;
      f.actions |= SC_F_ASYNC_ERROR;
    } else if (!strcmp(k, "init-fail")) {
      long e;
      if (sc_long_parse(c, k, v, ncclUnhandledCudaError, ncclRemoteError, &e) != 0)
        return -1;
      f.init_error = (ncclResult_t)e;
      f.actions |= SC_F_INIT_FAIL;
    } else if (!strcmp(k, "comm")) {
      if ((f.init_comm = sc_comm_find(sc, v)) < 0)
        return sc_error(c, "unknown communicator '%s'", v);
      has_comm = 1;
    } else if (!strcmp(k, "algo") || !strcmp(k, "proto")) {
      if (sc_algo_copy(c, k, v, k[0] == 'a' ? f.algo : f.proto) != 0)
        return -1;
      f.actions |= k[0] == 'a' ? SC_F_ALGO : SC_F_PROTO;
    } else if (!strcmp(k, "splits")) {
      if (sc_expr_copy(c, k, v, f.splits) != 0)
        return -1;
      f.actions |= SC_F_SPLITS;
    } else if (!strcmp(k, "coll")) {
      if (sc_kind_lookup(v, &f.coll) != 0 || !sc_kind_is_nccl(f.coll))
        return sc_error(c, "coll=%s: not a collective or p2p op", v);
      f.actions |= SC_F_COLL;
    } else {
      return sc_error(c, "unknown fault setting '%s'", k);
    }
  }
  if ((f.actions & SC_F_ASYNC_ERROR) && f.async_error == ncclSuccess)
    f.async_error = ncclRemoteError;
  if ((f.actions & SC_F_INIT_FAIL) && f.init_error == ncclSuccess)
    f.init_error = ncclUnhandledCudaError;
  if (has_comm != ((f.actions & SC_F_INIT_FAIL) != 0))
    return sc_error(c, has_comm ? "comm= goes with init-fail only" : "init-fail needs comm=NAME");
  if ((f.actions & SC_F_INIT_FAIL) && (f.actions != SC_F_INIT_FAIL || has_step || opref[0] || f.has_dev))
    return sc_error(c, "init-fail is a fault line of its own: fault rank=SEL comm=NAME init-fail[=N]");
  if (!f.actions)
    return sc_error(c, "fault without an action (stop skip exit crash extra trigger stall async-error busy-stream "
                    "init-fail no-return capture no-group-end sleep= count= dtype= redop= root= peer= coll= swap= "
                    "algo= proto= splits=)");
  if (!has_rank)
    return sc_error(c, "fault needs rank=SEL");
  if (f.actions != SC_F_EXTRA && f.actions != SC_F_INIT_FAIL && (!has_step || !opref[0]))
    return sc_error(c, "fault needs step=SEL and op=N|ID (only 'extra' and 'init-fail' need neither)");
  if ((f.actions & SC_F_EXTRA) && f.actions != SC_F_EXTRA)
    return sc_error(c, "'extra' is a fault line of its own");
  if (f.has_dev && (f.actions & (SC_F_EXTRA | SC_F_SWAP)))
    return sc_error(c, "dev= does not apply to '%s': it moves the whole op, every device's call",
                    (f.actions & SC_F_EXTRA) ? "extra" : "swap=");
  struct sc_fault *slot = sc_push(&sc->faults, &sc->nfaults, sizeof f);
  *slot = f;
  int nf = sc->nfaults;
  c->fault_op = realloc(c->fault_op, (size_t)nf * sizeof *c->fault_op);
  c->fault_swap = realloc(c->fault_swap, (size_t)nf * sizeof *c->fault_swap);
  if (!c->fault_op || !c->fault_swap) {
    fprintf(stderr, "fr-scenario-job: out of memory\n");
    exit(2);
  }
  strcpy(c->fault_op[nf - 1], opref);
  strcpy(c->fault_swap[nf - 1], swapref);
  return 0;
}

/* Splits a line into tokens, dropping a '#' comment. */
static int sc_tokenize(char *line, char **tok)
{
  int n = 0;
  char *p = line;
  for (;;) {
    while (isspace((unsigned char)*p))
      p++;
    if (!*p || *p == '#')
      break;
    if (n == SC_MAX_TOKENS)
      return -1;
    tok[n++] = p;
    while (*p && !isspace((unsigned char)*p))
      p++;
    if (*p)
      *p++ = '\0';
  }
  return n;
}

static int sc_parse_line(struct sc_ctx *c, char **tok, int n)
{
  struct scenario *sc = c->sc;
  const char *d = tok[0];
  long v;
  enum sc_kind kind;
  if (!strcmp(d, "world")) {
    if (sc->world)
      return sc_error(c, "'world' given twice");
    if (n != 2 || sc_long_parse(c, "world", tok[1], 1, SC_MAX_WORLD, &v) != 0)
      return n != 2 ? sc_error(c, "usage: world N") : -1;
    if (sc->nops || sc->nfaults)
      return sc_error(c, "'world N' must come before ops and faults");
    sc->world = (int)v;
    return 0;
  }
  if (!strcmp(d, "steps")) {
    if (n != 2 || sc_long_parse(c, "steps", tok[1], 0, 100000000L, &v) != 0)
      return n != 2 ? sc_error(c, "usage: steps N") : -1;
    sc->steps = (int)v;
    return 0;
  }
  if (!strcmp(d, "step-sync")) {
    if (n != 2 || (strcmp(tok[1], "on") && strcmp(tok[1], "off")))
      return sc_error(c, "usage: step-sync on|off");
    sc->step_sync = !strcmp(tok[1], "on");
    return 0;
  }
  if (!strcmp(d, "time-limit")) {
    if (n != 2 || sc_long_parse(c, "time-limit", tok[1], 1, 86400, &v) != 0)
      return n != 2 ? sc_error(c, "usage: time-limit SECONDS") : -1;
    sc->time_limit = v;
    return 0;
  }
  if (!strcmp(d, "env"))
    return sc_parse_env(c, tok, n);
  if (!strcmp(d, "post"))
    return sc_parse_post(c, tok, n);
  if (!strcmp(d, "wait")) {
    if (n != 2 || strcmp(tok[1], "exit"))
      return sc_error(c, "usage: wait exit");
    sc->wait_exit = 1;
    return 0;
  }
  if (!strcmp(d, "comm"))
    return sc_parse_comm(c, tok, n);
  if (!strcmp(d, "watchdog"))
    return sc_parse_watchdog(c, tok, n);
  if (!strcmp(d, "fault"))
    return sc_parse_fault(c, tok, n);
  if (sc_kind_lookup(d, &kind) == 0)
    return sc_parse_op(c, kind, tok, n);
  return sc_error(c, "unknown directive '%s'", d);
}

/* An op reference of a fault: 1-based position in the body, or an id. */
static int sc_resolve_op(struct sc_ctx *c, const char *ref, int *out)
{
  struct scenario *sc = c->sc;
  char *end;
  long v = strtol(ref, &end, 10);
  if (end != ref && !*end) {
    if (v < 1 || v > sc->nops)
      return sc_error(c, "op=%s: the body has ops 1..%d", ref, sc->nops);
    *out = (int)v - 1;
    return 0;
  }
  for (int i = 0; i < sc->nops; i++) {
    if (!strcmp(sc->ops[i].id, ref)) {
      *out = i;
      return 0;
    }
  }
  return sc_error(c, "op=%s: no op has id=%s", ref, ref);
}

/* dev=SEL needs an op on an initall comm, and names its devices only. */
static int sc_check_dev(struct sc_ctx *c, const struct sc_fault *f, const struct sc_op *op)
{
  const struct sc_comm *cm = (sc_kind_is_nccl(op->kind) || sc_kind_is_life(op->kind)) ? &c->sc->comms[op->comm]
                                                                                       : NULL;
  if (!cm || cm->how != SC_COMM_INITALL)
    return sc_error(c, "dev= applies to ops on an initall comm; op %d (line %d) is '%s'%s%s", f->op + 1,
                    op->line, sc_kind_name(op->kind), cm ? " on " : "", cm ? cm->name : "");
  if (op->kind == SC_CREATE)
    return sc_error(c, "dev= does not apply to create: %s is made by one ncclCommInitAll call", cm->name);
  for (int i = 0; i < f->devs.n; i++)
    if (f->devs.lo[i] >= cm->devices || (f->devs.hi[i] != INT_MAX && f->devs.hi[i] >= cm->devices))
      return sc_error(c, "dev=: %s has devices 0-%d", cm->name, cm->devices - 1);
  return 0;
}

static int sc_resolve_faults(struct sc_ctx *c)
{
  struct scenario *sc = c->sc;
  for (int i = 0; i < sc->nfaults; i++) {
    struct sc_fault *f = &sc->faults[i];
    c->line = f->line;
    if (c->fault_op[i][0] && sc_resolve_op(c, c->fault_op[i], &f->op) != 0)
      return -1;
    if (c->fault_swap[i][0] && sc_resolve_op(c, c->fault_swap[i], &f->swap) != 0)
      return -1;
    if (f->op < 0)
      continue;
    const struct sc_op *op = &sc->ops[f->op];
    unsigned callmods = SC_F_COUNT | SC_F_DTYPE | SC_F_REDOP | SC_F_ROOT | SC_F_PEER | SC_F_COLL;
    if ((f->actions & callmods) && !sc_kind_is_nccl(op->kind))
      return sc_error(c, "op %d (line %d) is '%s': only collectives and p2p take count/dtype/"
                      "redop/root/peer/coll faults", f->op + 1, op->line, sc_kind_name(op->kind));
    if ((f->actions & (SC_F_STALL_LINK | SC_F_STALL_KERNEL | SC_F_BUSY_STREAM)) && !sc_kind_is_nccl(op->kind))
      return sc_error(c, "op %d (line %d) is '%s': a stall needs a collective or p2p op", f->op + 1, op->line,
                      sc_kind_name(op->kind));
    unsigned callfaults = SC_F_NO_RETURN | SC_F_CAPTURE | SC_F_NO_GROUP_END;
    if ((f->actions & callfaults) && !sc_kind_is_nccl(op->kind))
      return sc_error(c, "op %d (line %d) is '%s': no-return, capture and no-group-end need a collective or p2p op",
                      f->op + 1, op->line, sc_kind_name(op->kind));
    if ((f->actions & (SC_F_ALGO | SC_F_PROTO)) && !sc_kind_has_algo(op->kind))
      return sc_error(c, "op %d (line %d) is '%s': algo= and proto= apply to collectives", f->op + 1, op->line,
                      sc_kind_name(op->kind));
    if ((f->actions & SC_F_SPLITS) && op->kind != SC_ALLTOALLV)
      return sc_error(c, "op %d (line %d) is '%s': splits= applies to alltoallv", f->op + 1, op->line,
                      sc_kind_name(op->kind));
    if ((f->actions & SC_F_COLL) && (op->kind == SC_ALLTOALLV || f->coll == SC_ALLTOALLV))
      return sc_error(c, "coll= does not go with alltoallv (a group of its own)");
    if ((f->actions & (SC_F_CAPTURE | SC_F_NO_GROUP_END | SC_F_NO_RETURN)) && op->graph)
      return sc_error(c, "capture, no-group-end and no-return do not apply to an op of graph=%s",
                      sc->graphs[op->graph - 1]);
    if ((f->actions & SC_F_CAPTURE) && sc->comms[op->comm].how == SC_COMM_INITALL)
      return sc_error(c, "capture: an initall comm's op runs on every device's stream; not modelled");
    if ((f->actions & SC_F_ASYNC_ERROR) && !sc_kind_is_nccl(op->kind))
      return sc_error(c, "op %d (line %d) is '%s': async-error needs a collective or p2p op", f->op + 1,
                      op->line, sc_kind_name(op->kind));
    if (f->has_dev && sc_check_dev(c, f, op) != 0)
      return -1;
    enum sc_kind k = (f->actions & SC_F_COLL) ? f->coll : op->kind;
    if ((f->actions & SC_F_PEER) && !sc_kind_has_peer(k))
      return sc_error(c, "peer= applies to send and recv only");
    if (sc_kind_has_peer(k) && !sc_kind_has_peer(op->kind) && !(f->actions & SC_F_PEER))
      return sc_error(c, "coll=%s needs peer=EXPR", sc_kind_name(k));
  }
  return 0;
}

static void sc_init(struct scenario *sc, const char *file)
{
  memset(sc, 0, sizeof *sc);
  sc->file = file;
  sc->steps = 1;
  sc->step_sync = 1;
  sc->max_devices = 1;
  struct sc_comm *world = sc_push(&sc->comms, &sc->ncomms, sizeof *world);
  strcpy(world->name, "world");
  world->how = SC_COMM_WORLD;
}

int sc_load(const char *file, struct scenario *sc)
{
  sc_init(sc, file);
  FILE *fp = fopen(file, "r");
  if (!fp) {
    fprintf(stderr, "%s: %s\n", file, strerror(errno));
    return -1;
  }
  struct sc_ctx c = { sc, 0, 0, 0, NULL, NULL };
  char *line = NULL;
  size_t cap = 0;
  int rc = 0;
  while (rc == 0 && getline(&line, &cap, fp) >= 0) {
    c.line++;
    char *tok[SC_MAX_TOKENS];
    int n = sc_tokenize(line, tok);
    if (n < 0)
      rc = sc_error(&c, "more than %d words", SC_MAX_TOKENS);
    else if (n > 0)
      rc = sc_parse_line(&c, tok, n);
  }
  free(line);
  fclose(fp);
  if (rc == 0 && !sc->world) {
    c.line = 1;
    rc = sc_error(&c, "no 'world N' line");
  }
  if (rc == 0 && c.group_depth != 0) {
    c.line = c.group_line;
    rc = sc_error(&c, "'group begin' without 'group end' in the body");
  }
  if (rc == 0)
    rc = sc_resolve_faults(&c);
  for (int i = 0; rc == 0 && i < sc->ncomms; i++)
    rc = sc_plan_comm(sc, &sc->comms[i]);
  free(c.fault_op);
  free(c.fault_swap);
  return rc;
}

void sc_free(struct scenario *sc)
{
  for (int i = 0; i < sc->nenv; i++)
    free(sc->env[i].assign);
  for (int i = 0; i < sc->ncomms; i++) {
    struct sc_comm *cm = &sc->comms[i];
    free(cm->rank_of);
    free(cm->size_of);
    free(cm->inst_of);
    free(cm->color_of);
    free(cm->key_of);
  }
  free(sc->env);
  free(sc->posts);
  free(sc->watchdogs);
  free(sc->comms);
  free(sc->ops);
  free(sc->faults);
  memset(sc, 0, sizeof *sc);
}
