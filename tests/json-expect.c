/* json-expect — does a JSON document contain an expected subset?
 *
 *   json-expect EXPECTED.json ACTUAL.json
 *   json-expect --no-waiting-roots ANALYSIS.json
 *
 * Objects match when every key of EXPECTED is in ACTUAL with a matching
 * value (ACTUAL may have more keys); arrays when they have the same length
 * and match element by element; numbers, strings, booleans and null when
 * equal.  Every difference is printed with its path, e.g.
 *   verdict.lagging_ranks: expected [5], got [4,5]
 * The second form checks one rule of every verdict on an analysis document
 * (formats/analysis-json.md): in a hang, no root-cause rank waits inside an
 * NCCL call on a peer (a member "waiting" in some communicator's stuck op,
 * or the side of a missing p2p link that posted and waits), except the
 * ahead ranks and a mismatch's culprits, whose own calls are the cause, and
 * ranks whose own work never finished somewhere (they wait on their device),
 * ranks one of whose own comm ranks never entered the op they wait in
 * (several comm ranks in one process), ranks whose process ended with an
 * op in flight, ranks that tore down a comm their peers wait in, and ranks
 * whose rounds say they left out a call others wait for (left_out_ranks), and
 * ranks whose fault is a call of their own made wrong (verdict.faults:
 * init-failed, not-launched, other-args, config-split).
 * An analysis whose verdict.unexplained is not empty matches only an
 * expected document whose verdict lists its own "unexplained" (compared as
 * any key): an observation no fault explains never passes unnoticed.
 * Exit status: 0 match, 1 differences, 2 a file cannot be read or parsed.
 */
#include "config.h"

#include <cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A path being built while descending, "verdict.stuck.waiting_ranks[3]". */
typedef struct path {
  char buf[4096];
  size_t len;
} path;

static size_t path_push_key(path *p, const char *key)
{
  size_t old = p->len;
  int n = snprintf(p->buf + p->len, sizeof p->buf - p->len, "%s%s", p->len ? "." : "", key);
  if (n > 0) p->len = p->len + (size_t)n < sizeof p->buf ? p->len + (size_t)n : sizeof p->buf - 1;
  return old;
}

static size_t path_push_index(path *p, int i)
{
  size_t old = p->len;
  int n = snprintf(p->buf + p->len, sizeof p->buf - p->len, "[%d]", i);
  if (n > 0) p->len = p->len + (size_t)n < sizeof p->buf ? p->len + (size_t)n : sizeof p->buf - 1;
  return old;
}

static void path_pop(path *p, size_t old)
{
  p->len = old;
  p->buf[old] = '\0';
}

#define SHOW_MAX 200

/* A value as compact JSON for a message, cut at SHOW_MAX characters;
 * arrays that are cut say how many elements they have. */
static void show(const cJSON *v, const char *none)
{
  if (!v) {
    fputs(none, stdout);
    return;
  }
  char *s = cJSON_PrintUnformatted(v);
  if (!s) {
    fputs("(unprintable)", stdout);
    return;
  }
  if (strlen(s) <= SHOW_MAX) fputs(s, stdout);
  else if (cJSON_IsArray(v))
    printf("%.*s... (%d elements)", SHOW_MAX, s, cJSON_GetArraySize(v));
  else printf("%.*s...", SHOW_MAX, s);
  cJSON_free(s);
}

/* Print one difference: PATH: expected E, got G. */
static void differ(const path *p, const cJSON *e, const cJSON *g)
{
  printf("%s: expected ", p->len ? p->buf : "(top)");
  show(e, "(nothing)");
  fputs(", got ", stdout);
  show(g, "(missing)");
  putchar('\n');
}

/* The kind of a JSON value, with true/false as one kind. */
static int kind(const cJSON *v)
{
  if (cJSON_IsBool(v)) return cJSON_True;
  return v->type & 0xff;
}

/* Compare e (expected) with g (actual) at path p; returns the number of
 * differences printed. */
static unsigned compare(const cJSON *e, const cJSON *g, path *p)
{
  if (kind(e) != kind(g)) {
    differ(p, e, g);
    return 1;
  }
  if (cJSON_IsObject(e)) {
    unsigned n = 0;
    for (const cJSON *c = e->child; c; c = c->next) {
      size_t old = path_push_key(p, c->string ? c->string : "");
      const cJSON *gc = cJSON_GetObjectItemCaseSensitive(g, c->string);
      if (!gc) {
        differ(p, c, NULL);
        n++;
      } else {
        n += compare(c, gc, p);
      }
      path_pop(p, old);
    }
    return n;
  }
  if (cJSON_IsArray(e)) {
    if (cJSON_GetArraySize(e) != cJSON_GetArraySize(g)) {
      differ(p, e, g);
      return 1;
    }
    unsigned n = 0;
    int i = 0;
    for (const cJSON *c = e->child, *d = g->child; c && d; c = c->next, d = d->next, i++) {
      size_t old = path_push_index(p, i);
      n += compare(c, d, p);
      path_pop(p, old);
    }
    return n;
  }
  int same;
  if (cJSON_IsNumber(e)) {
    double a = e->valuedouble, b = g->valuedouble;
    double m = (a < 0 ? -a : a) > (b < 0 ? -b : b) ? (a < 0 ? -a : a) : (b < 0 ? -b : b);
    double d = a > b ? a - b : b - a;
    same = a == b || d <= 1e-9 * m;
  } else if (cJSON_IsString(e)) {
    same = strcmp(e->valuestring, g->valuestring) == 0;
  } else if (cJSON_IsBool(e)) {
    same = cJSON_IsTrue(e) == cJSON_IsTrue(g);
  } else {
    same = 1; /* null */
  }
  if (!same) differ(p, e, g);
  return same ? 0 : 1;
}

/* Read and parse a JSON file; NULL (after a message) when it cannot. */
static cJSON *load(const char *file)
{
  FILE *f = fopen(file, "rb");
  if (!f) {
    fprintf(stderr, "json-expect: %s: %s\n", file, strerror(errno));
    return NULL;
  }
  char *buf = NULL;
  size_t len = 0, cap = 0;
  for (;;) {
    if (len + 4096 + 1 > cap) {
      cap = cap ? cap * 2 : 65536;
      char *nb = realloc(buf, cap);
      if (!nb) {
        fprintf(stderr, "json-expect: %s: out of memory\n", file);
        free(buf);
        fclose(f);
        return NULL;
      }
      buf = nb;
    }
    size_t n = fread(buf + len, 1, cap - len - 1, f);
    len += n;
    if (n == 0) break;
  }
  int bad = ferror(f);
  fclose(f);
  if (bad) {
    fprintf(stderr, "json-expect: %s: read error\n", file);
    free(buf);
    return NULL;
  }
  buf[len] = '\0';
  const char *end = NULL;
  cJSON *j = cJSON_ParseWithLengthOpts(buf, len + 1, &end, 1);
  if (!j) {
    size_t off = end && end >= buf ? (size_t)(end - buf) : 0;
    fprintf(stderr, "json-expect: %s: not valid JSON (near byte %zu)\n", file, off);
  }
  free(buf);
  return j;
}

/* Is rank g in JSON array of numbers arr? */
static int in_ranks(const cJSON *arr, int g)
{
  const cJSON *x;
  cJSON_ArrayForEach(x, arr)
    if (cJSON_IsNumber(x) && (int)x->valuedouble == g) return 1;
  return 0;
}

/* Is rank g a member in state `state` of some communicator of analysis a? */
static int member_in_state(const cJSON *a, int g, const char *state)
{
  const cJSON *c, *m;
  cJSON_ArrayForEach(c, cJSON_GetObjectItem(a, "comms"))
    cJSON_ArrayForEach(m, cJSON_GetObjectItem(c, "members")) {
      const cJSON *gr = cJSON_GetObjectItem(m, "global_rank"), *st = cJSON_GetObjectItem(m, "state");
      if (cJSON_IsNumber(gr) && (int)gr->valuedouble == g && cJSON_IsString(st) &&
          strcmp(st->valuestring, state) == 0)
        return 1;
    }
  return 0;
}

/* Is rank g both a lagging and a waiting member of one communicator (a
 * process holding several comm ranks, CommInitAll: one of its own calls is
 * missing, and its other comm ranks wait for that one)? */
static int lags_itself(const cJSON *a, int g)
{
  const cJSON *c, *m;
  cJSON_ArrayForEach(c, cJSON_GetObjectItem(a, "comms")) {
    int lag = 0, wait = 0;
    cJSON_ArrayForEach(m, cJSON_GetObjectItem(c, "members")) {
      const cJSON *gr = cJSON_GetObjectItem(m, "global_rank"), *st = cJSON_GetObjectItem(m, "state");
      if (!cJSON_IsNumber(gr) || (int)gr->valuedouble != g || !cJSON_IsString(st)) continue;
      lag |= strcmp(st->valuestring, "lagging") == 0;
      wait |= strcmp(st->valuestring, "waiting") == 0;
    }
    if (lag && wait) return 1;
  }
  return 0;
}

/* Is rank g a member with `key` true somewhere: "process_ended" (its
 * process ended with an op in flight: it waits for nobody any more), or
 * "tore_down" (it left a comm its peers wait in: its own doing)? */
static int member_flag(const cJSON *a, int g, const char *key)
{
  const cJSON *c, *m;
  cJSON_ArrayForEach(c, cJSON_GetObjectItem(a, "comms"))
    cJSON_ArrayForEach(m, cJSON_GetObjectItem(c, "members")) {
      const cJSON *gr = cJSON_GetObjectItem(m, "global_rank");
      if (cJSON_IsNumber(gr) && (int)gr->valuedouble == g && cJSON_IsTrue(cJSON_GetObjectItem(m, key)))
        return 1;
    }
  return 0;
}

/* Does rank g wait inside an NCCL call on a peer according to analysis a?
 * A rank whose own work never finished somewhere waits on its own device;
 * one whose own call is missing where it waits waits on itself. */
static int waits(const cJSON *a, int g)
{
  const cJSON *c, *m, *l;
  if (member_in_state(a, g, "unfinished") || lags_itself(a, g) || member_flag(a, g, "process_ended") ||
      member_flag(a, g, "tore_down"))
    return 0;
  cJSON_ArrayForEach(c, cJSON_GetObjectItem(a, "comms")) {
    if (!cJSON_IsObject(cJSON_GetObjectItem(c, "stuck"))) goto links;
    cJSON_ArrayForEach(m, cJSON_GetObjectItem(c, "members")) {
      const cJSON *gr = cJSON_GetObjectItem(m, "global_rank"), *st = cJSON_GetObjectItem(m, "state");
      if (cJSON_IsNumber(gr) && (int)gr->valuedouble == g && cJSON_IsString(st) &&
          strcmp(st->valuestring, "waiting") == 0)
        return 1;
    }
  links:
    cJSON_ArrayForEach(l, cJSON_GetObjectItem(c, "missing_links")) {
      const cJSON *p2p = cJSON_GetObjectItem(l, "p2p"), *pend = cJSON_GetObjectItem(l, "pending");
      if (!cJSON_IsTrue(p2p) || !cJSON_IsString(pend)) continue;
      const cJSON *w = cJSON_GetObjectItem(l, strcmp(pend->valuestring, "send") == 0 ? "src" : "dst");
      if (cJSON_IsNumber(w) && (int)w->valuedouble == g) return 1;
    }
  }
  return 0;
}

/* The second form: 0 when the rule holds, 1 with every rank that breaks it. */
/* Is rank g's fault in verdict v (verdict.faults) one of its own call, which
 * it made wrong and then went on to wait elsewhere: a creation or a call
 * that failed, a capture never launched or a group never ended, a call with
 * other arguments (an all-to-all-v's splits)? */
static int own_call(const cJSON *v, int g)
{
  static const char *const kinds[] = {"init-failed", "not-launched", "other-args", "config-split"};
  const cJSON *f;
  cJSON_ArrayForEach(f, cJSON_GetObjectItem(v, "faults")) {
    const cJSON *r = cJSON_GetObjectItem(f, "rank"), *k = cJSON_GetObjectItem(f, "kind");
    if (!cJSON_IsNumber(r) || (int)r->valuedouble != g || !cJSON_IsString(k)) continue;
    for (unsigned i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
      if (!strcmp(k->valuestring, kinds[i])) return 1;
  }
  return 0;
}

static int no_waiting_roots(const cJSON *a)
{
  const cJSON *v = cJSON_GetObjectItem(a, "verdict");
  const cJSON *st = cJSON_GetObjectItem(v, "status");
  if (!cJSON_IsString(st) || strcmp(st->valuestring, "hang") != 0) return 0;
  const cJSON *mm = cJSON_GetObjectItem(v, "mismatch"), *r;
  const cJSON *culprits = cJSON_IsObject(mm) ? cJSON_GetObjectItem(mm, "culprit_ranks") : NULL;
  int bad = 0;
  cJSON_ArrayForEach(r, cJSON_GetObjectItem(v, "root_cause_ranks")) {
    int g = (int)r->valuedouble;
    /* one that came too late waits in its call only because the others had
     * given up on it and left (verdict.late_ranks) */
    if (in_ranks(cJSON_GetObjectItem(v, "ahead_ranks"), g) || in_ranks(cJSON_GetObjectItem(v, "late_ranks"), g) ||
        in_ranks(cJSON_GetObjectItem(v, "left_out_ranks"), g) || in_ranks(culprits, g) || own_call(v, g) ||
        !waits(a, g))
      continue;
    printf("verdict.root_cause_ranks: rank %d waits inside an NCCL call, yet is named a root cause\n", g);
    bad = 1;
  }
  return bad;
}

/* An analysis whose verdict leaves observations unexplained
 * (verdict.unexplained, formats/analysis-json.md) matches only an expected
 * document that lists them (its verdict.unexplained is then compared like
 * any other key): nothing the verdict cannot explain passes unnoticed. */
static unsigned unexplained_unlisted(const cJSON *e, const cJSON *g)
{
  const cJSON *gv = cJSON_GetObjectItemCaseSensitive(g, "verdict");
  const cJSON *u = cJSON_GetObjectItemCaseSensitive(gv, "unexplained");
  if (!cJSON_IsArray(u) || !cJSON_GetArraySize(u)) return 0;
  const cJSON *ev = cJSON_GetObjectItemCaseSensitive(e, "verdict");
  if (cJSON_GetObjectItemCaseSensitive(ev, "unexplained")) return 0;
  char *t = cJSON_PrintUnformatted(u);
  printf("verdict.unexplained: %d observation(s) no fault of the verdict explains, not listed in the "
         "expected file: %.*s\n", cJSON_GetArraySize(u), SHOW_MAX, t ? t : "?");
  free(t);
  return 1;
}

int main(int argc, char **argv)
{
  if (argc == 3 && strcmp(argv[1], "--no-waiting-roots") == 0) {
    cJSON *a = load(argv[2]);
    if (!a) return 2;
    int bad = no_waiting_roots(a);
    cJSON_Delete(a);
    return bad;
  }
  if (argc == 2 && strcmp(argv[1], "--help") == 0) {
    puts("Usage: json-expect EXPECTED.json ACTUAL.json\n"
         "       json-expect --no-waiting-roots ANALYSIS.json\n"
         "Exit 0 when ACTUAL contains EXPECTED as a subset (or, in the second form,\n"
         "when no root cause of a hang waits inside an NCCL call), 1 with the\n"
         "differences printed, 2 when a file cannot be read or parsed.");
    return 0;
  }
  if (argc != 3) {
    fputs("Usage: json-expect EXPECTED.json ACTUAL.json\n", stderr);
    return 2;
  }
  cJSON *e = load(argv[1]);
  cJSON *g = e ? load(argv[2]) : NULL;
  if (!e || !g) {
    cJSON_Delete(e);
    return 2;
  }
  path p;
  p.len = 0;
  p.buf[0] = '\0';
  unsigned n = compare(e, g, &p) + unexplained_unlisted(e, g);
  cJSON_Delete(e);
  cJSON_Delete(g);
  return n ? 1 : 0;
}
