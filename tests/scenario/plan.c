/* plan.c — where every world rank sits in every communicator of a
 * scenario, computed without communication (the expressions depend on the
 * rank only), so that the whole file is checked before any rank starts and
 * each rank knows its comm ranks in advance. */
#include "config.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "scenario.h"

static int sc_plan_error(const struct scenario *sc, const struct sc_comm *cm, const char *fmt, ...)
  __attribute__((format(printf, 3, 4)));

static int sc_plan_error(const struct scenario *sc, const struct sc_comm *cm, const char *fmt, ...)
{
  va_list ap;
  fprintf(stderr, "%s:%d: ", sc->file, cm->line);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  return -1;
}

/* Excluded comm ranks below r (r itself not counted). */
static int sc_excluded_below(const struct sc_set *ex, int r)
{
  int n = 0;
  for (int i = 0; i < r; i++)
    n += sc_set_has(ex, i);
  return n;
}

/* shrink: the parent's members not excluded, renumbered in order within
 * each parent instance; initall: every process is an instance of its own
 * (its devices are comm ranks 0..devices-1). */
static int sc_plan_derived(const struct scenario *sc, struct sc_comm *cm)
{
  int w = sc->world;
  if (cm->how == SC_COMM_INITALL) {
    for (int g = 0; g < w; g++) {
      cm->rank_of[g] = 0;
      cm->size_of[g] = cm->devices;
      cm->inst_of[g] = g;
      cm->color_of[g] = g;
      cm->key_of[g] = 0;
    }
    return 0;
  }
  const struct sc_comm *p = &sc->comms[cm->parent];
  int biggest = 0;
  for (int g = 0; g < w; g++)
    if (p->size_of[g] > biggest)
      biggest = p->size_of[g];
  for (int i = 0; i < cm->exclude.n; i++)
    if (cm->exclude.lo[i] >= biggest || (cm->exclude.hi[i] != INT_MAX && cm->exclude.hi[i] >= biggest))
      return sc_plan_error(sc, cm, "exclude=: the comm ranks of %s are 0-%d", p->name, biggest - 1);
  for (int g = 0; g < w; g++) {
    cm->rank_of[g] = cm->inst_of[g] = -1;
    cm->size_of[g] = 0;
    cm->color_of[g] = -1;
    cm->key_of[g] = 0;
    int pr = p->rank_of[g];
    if (pr < 0 || sc_set_has(&cm->exclude, pr))
      continue;
    cm->rank_of[g] = pr - sc_excluded_below(&cm->exclude, pr);
    cm->size_of[g] = p->size_of[g] - sc_excluded_below(&cm->exclude, p->size_of[g]);
    cm->inst_of[g] = p->inst_of[g];
    cm->color_of[g] = 0;
    cm->key_of[g] = pr;
  }
  for (int g = 0; g < w; g++)
    if (p->rank_of[g] >= 0 && p->size_of[g] == sc_excluded_below(&cm->exclude, p->size_of[g]))
      return sc_plan_error(sc, cm, "exclude= leaves no rank of %s (the instance of world rank %d)", p->name, g);
  return 0;
}

/* Fills a comm's membership tables for every world rank. */
int sc_plan_comm(const struct scenario *sc, struct sc_comm *cm)
{
  int w = sc->world;
  cm->rank_of = malloc((size_t)w * sizeof(int));
  cm->size_of = malloc((size_t)w * sizeof(int));
  cm->inst_of = malloc((size_t)w * sizeof(int));
  cm->color_of = malloc((size_t)w * sizeof(long));
  cm->key_of = malloc((size_t)w * sizeof(long));
  if (!cm->rank_of || !cm->size_of || !cm->inst_of || !cm->color_of || !cm->key_of) {
    fprintf(stderr, "fr-scenario-job: out of memory\n");
    exit(2);
  }
  if (cm->how == SC_COMM_SHRINK || cm->how == SC_COMM_INITALL)
    return sc_plan_derived(sc, cm);
  const struct sc_comm *parent = cm->how == SC_COMM_SPLIT ? &sc->comms[cm->parent] : NULL;
  for (int g = 0; g < w; g++) {
    cm->rank_of[g] = -1;
    cm->inst_of[g] = -1;
    cm->color_of[g] = -1;
    cm->key_of[g] = 0;
    if (cm->how == SC_COMM_WORLD) {
      cm->rank_of[g] = g;
      cm->inst_of[g] = 0;
      cm->color_of[g] = 0;
      continue;
    }
    if (parent && parent->rank_of[g] < 0)
      continue;
    struct sc_vars v = { parent ? parent->rank_of[g] : g, parent ? parent->size_of[g] : w, g, w, 0, 0 };
    char err[128];
    long color = 0, key = v.rank;
    if (cm->color[0] && sc_expr_eval(cm->color, &v, &color, err, sizeof err) != 0)
      return sc_plan_error(sc, cm, "color=%s for rank %d: %s", cm->color, g, err);
    if (cm->key[0] && sc_expr_eval(cm->key, &v, &key, err, sizeof err) != 0)
      return sc_plan_error(sc, cm, "key=%s for rank %d: %s", cm->key, g, err);
    if (color < -1 || color > INT_MAX)
      return sc_plan_error(sc, cm, "color=%s is %ld for rank %d: colors are >= 0, or none", cm->color, color, g);
    if (key < INT_MIN || key > INT_MAX)
      return sc_plan_error(sc, cm, "key=%s is out of range for rank %d", cm->key, g);
    cm->color_of[g] = color;
    cm->key_of[g] = key;
  }
  if (cm->how != SC_COMM_WORLD) {
    /* instances: equal (parent instance, color); order by (key, parent rank or global rank) */
    int ninst = 0;
    for (int g = 0; g < w; g++) {
      if (cm->color_of[g] < 0 || (parent && parent->rank_of[g] < 0))
        continue;
      int pinst = parent ? parent->inst_of[g] : 0;
      for (int h = 0; h < g && cm->inst_of[g] < 0; h++)
        if (cm->inst_of[h] >= 0 && cm->color_of[h] == cm->color_of[g] && (parent ? parent->inst_of[h] : 0) == pinst)
          cm->inst_of[g] = cm->inst_of[h];
      if (cm->inst_of[g] < 0)
        cm->inst_of[g] = ninst++;
    }
    for (int g = 0; g < w; g++) {
      if (cm->inst_of[g] < 0)
        continue;
      int r = 0;
      long gpos = parent ? parent->rank_of[g] : g;
      for (int h = 0; h < w; h++) {
        if (h == g || cm->inst_of[h] != cm->inst_of[g])
          continue;
        long hpos = parent ? parent->rank_of[h] : h;
        if (cm->key_of[h] < cm->key_of[g] || (cm->key_of[h] == cm->key_of[g] && hpos < gpos))
          r++;
      }
      cm->rank_of[g] = r;
    }
  }
  for (int g = 0; g < w; g++) {
    int size = 0;
    for (int h = 0; h < w && cm->inst_of[g] >= 0; h++)
      size += cm->inst_of[h] == cm->inst_of[g];
    cm->size_of[g] = cm->inst_of[g] >= 0 ? size : 0;
  }
  return 0;
}
