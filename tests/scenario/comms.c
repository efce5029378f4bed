/* comms.c — the scenario lines that are not body ops or faults: the
 * communicators (comm NAME split|init|shrink|initall ...), the ranks'
 * environment (env), what run-scenario does to the dumps after the run
 * (post) and how ranks react to a hang (watchdog).  Format:
 * tests/scenarios/README.md. */
#include "config.h"

#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse.h"

#define SC_COMM_USAGE \
  "usage: comm NAME split PARENT color=EXPR [key=EXPR] [late] | comm NAME init [color=EXPR] " \
  "[key=EXPR] [uid=shared] [late] | comm NAME shrink PARENT exclude=SEL [late] | " \
  "comm NAME initall devices=N [late]"

static const char *sc_how_name(enum sc_comm_how how)
{
  static const char *names[] = { "world", "split", "init", "shrink", "initall" };
  return names[how];
}

/* One KEY=VALUE setting of a comm line. */
static int sc_comm_setting(struct sc_ctx *c, struct sc_comm *cm, const char *k, const char *v)
{
  int colored = cm->how == SC_COMM_SPLIT || cm->how == SC_COMM_INIT;
  if (colored && !strcmp(k, "color"))
    return sc_expr_copy(c, k, v, cm->color);
  if (colored && !strcmp(k, "key"))
    return sc_expr_copy(c, k, v, cm->key);
  if (cm->how == SC_COMM_INIT && !strcmp(k, "uid")) {
    if (strcmp(v, "shared"))
      return sc_error(c, "uid=%s: the only value is uid=shared (every instance uses one unique id)", v);
    cm->uid_shared = 1;
    return 0;
  }
  if (cm->how == SC_COMM_SHRINK && !strcmp(k, "exclude"))
    return sc_set_parse(c, k, v, SC_MAX_WORLD, &cm->exclude);
  if (cm->how == SC_COMM_INITALL && !strcmp(k, "devices")) {
    long d;
    if (sc_long_parse(c, k, v, 1, SC_MAX_DEVICES, &d) != 0)
      return -1;
    cm->devices = (int)d;
    return 0;
  }
  static const char *known[] = { "color", "key", "uid", "exclude", "devices" };
  for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
    if (!strcmp(k, known[i]))
      return sc_error(c, "'%s' does not apply to %s %s comm", k, cm->how == SC_COMM_INIT || cm->how == SC_COMM_INITALL
                      ? "an" : "a", sc_how_name(cm->how));
  return sc_error(c, "unknown setting '%s' (color, key, uid, exclude, devices, late)", k);
}

/* comm NAME split PARENT color=E [key=E] [late]
 * comm NAME init [color=E] [key=E] [uid=shared] [late]
 * comm NAME shrink PARENT exclude=SEL [late]
 * comm NAME initall devices=N [late] */
int sc_parse_comm(struct sc_ctx *c, char **tok, int n)
{
  struct scenario *sc = c->sc;
  if (n < 3)
    return sc_error(c, SC_COMM_USAGE);
  if (!sc_name_ok(tok[1]))
    return sc_error(c, "bad communicator name '%s'", tok[1]);
  if (sc_comm_find(sc, tok[1]) >= 0)
    return sc_error(c, "communicator '%s' defined twice", tok[1]);
  struct sc_comm cm;
  memset(&cm, 0, sizeof cm);
  snprintf(cm.name, sizeof cm.name, "%s", tok[1]);
  cm.line = c->line;
  int first = 3;
  if (!strcmp(tok[2], "split") || !strcmp(tok[2], "shrink")) {
    cm.how = tok[2][1] == 'p' ? SC_COMM_SPLIT : SC_COMM_SHRINK;
    if (n < 4 || strchr(tok[3], '=') || !strcmp(tok[3], "late"))
      return sc_error(c, "comm %s %s: missing the parent communicator", tok[1], tok[2]);
    cm.parent = sc_comm_find(sc, tok[3]);
    if (cm.parent < 0)
      return sc_error(c, "unknown communicator '%s' (define it before this line)", tok[3]);
    if (sc->comms[cm.parent].how == SC_COMM_INITALL)
      return sc_error(c, "comm %s %s: %s is an initall comm (several devices per process); split and "
                      "shrink take a comm of one device per process", tok[1], tok[2], tok[3]);
    first = 4;
  } else if (!strcmp(tok[2], "init")) {
    cm.how = SC_COMM_INIT;
  } else if (!strcmp(tok[2], "initall")) {
    cm.how = SC_COMM_INITALL;
  } else {
    return sc_error(c, "comm %s: expected 'split', 'init', 'shrink' or 'initall', not '%s'", tok[1], tok[2]);
  }
  for (int i = first; i < n; i++) {
    char *k, *v;
    if (!sc_kv(tok[i], &k, &v)) {
      if (strcmp(tok[i], "late"))
        return sc_error(c, "unexpected '%s' (settings are KEY=VALUE, or the word 'late')", tok[i]);
      if (cm.late)
        return sc_error(c, "'late' given twice");
      cm.late = 1;
    } else if (sc_comm_setting(c, &cm, k, v) != 0) {
      return -1;
    }
  }
  if (cm.how == SC_COMM_SPLIT && !cm.color[0])
    return sc_error(c, "comm %s split: color=EXPR is required", cm.name);
  if (cm.how == SC_COMM_SHRINK && cm.exclude.n == 0)
    return sc_error(c, "comm %s shrink: exclude=SEL (comm ranks of %s) is required", cm.name,
                    sc->comms[cm.parent].name);
  if (cm.how == SC_COMM_INITALL && cm.devices == 0)
    return sc_error(c, "comm %s initall: devices=N is required", cm.name);
  if (cm.devices > sc->max_devices)
    sc->max_devices = cm.devices;
  *(struct sc_comm *)sc_push(&sc->comms, &sc->ncomms, sizeof cm) = cm;
  return 0;
}

/* env [rank=SEL] NAME=VALUE */
int sc_parse_env(struct sc_ctx *c, char **tok, int n)
{
  static const char *reserved[] = {
    "RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "FR_DUMP_DIR", "FR_SIM_BOOTSTRAP_DIR",
    "FR_JOB_ID", "LD_PRELOAD", "LD_LIBRARY_PATH",
  };
  struct sc_env e;
  memset(&e, 0, sizeof e);
  char *k, *v;
  if (n == 3 && sc_kv(tok[1], &k, &v) && (!strcmp(k, "rank") || !strcmp(k, "ranks"))) {
    if (!c->sc->world)
      return sc_error(c, "'world N' must come before a per-rank env line");
    if (sc_set_parse(c, k, v, c->sc->world, &e.ranks) != 0)
      return -1;
    e.per_rank = 1;
    tok[1] = tok[2];
    n = 2;
  }
  if (n != 2 || !strchr(tok[1], '=') || tok[1][0] == '=')
    return sc_error(c, "usage: env [rank=SEL] NAME=VALUE");
  size_t len = strcspn(tok[1], "=");
  for (size_t i = 0; i < len; i++)
    if (!(isalnum((unsigned char)tok[1][i]) || tok[1][i] == '_') || isdigit((unsigned char)tok[1][0]))
      return sc_error(c, "bad variable name in '%s'", tok[1]);
  for (size_t i = 0; i < sizeof reserved / sizeof reserved[0]; i++)
    if (strlen(reserved[i]) == len && !strncmp(tok[1], reserved[i], len))
      return sc_error(c, "%s is set by the launcher, not by the scenario", reserved[i]);
  e.assign = strdup(tok[1]);
  *(struct sc_env *)sc_push(&c->sc->env, &c->sc->nenv, sizeof e) = e;
  return 0;
}

/* The one world rank of a selector, or -1 (none, or several). */
static int sc_set_single(const struct sc_set *s, int world)
{
  int found = -1;
  for (int r = 0; r < world; r++) {
    if (!sc_set_has(s, r))
      continue;
    if (found >= 0)
      return -1;
    found = r;
  }
  return found;
}

/* post rank=SEL empty-dump|remove-dump  |  post rank=R copy-dump|rename-dump as=R2 */
int sc_parse_post(struct sc_ctx *c, char **tok, int n)
{
  static const char *usage = "usage: post rank=SEL empty-dump|remove-dump | post rank=R copy-dump|rename-dump as=R";
  struct sc_post p;
  memset(&p, 0, sizeof p);
  char *k, *v;
  if (n < 3 || n > 4 || !sc_kv(tok[1], &k, &v) || (strcmp(k, "rank") && strcmp(k, "ranks")))
    return sc_error(c, "%s", usage);
  if (!c->sc->world)
    return sc_error(c, "'world N' must come before 'post'");
  if (sc_set_parse(c, k, v, c->sc->world, &p.ranks) != 0)
    return -1;
  const char *sel = v;
  int found = 0;
  for (int a = SC_POST_EMPTY_DUMP; a <= SC_POST_RENAME_DUMP; a++)
    if (!strcmp(tok[2], sc_post_name((enum sc_post_action)a))) {
      p.action = (enum sc_post_action)a;
      found = 1;
    }
  if (!found)
    return sc_error(c, "unknown post action '%s' (empty-dump, remove-dump, copy-dump, rename-dump)", tok[2]);
  int moves = p.action == SC_POST_COPY_DUMP || p.action == SC_POST_RENAME_DUMP;
  if (!moves && n != 3)
    return sc_error(c, "%s takes no setting", tok[2]);
  if (moves) {
    long as;
    if (n != 4 || !sc_kv(tok[3], &k, &v) || strcmp(k, "as"))
      return sc_error(c, "%s needs as=R (the rank the file names are to say)", tok[2]);
    if (sc_long_parse(c, "as", v, 0, c->sc->world - 1, &as) != 0)
      return -1;
    int from = sc_set_single(&p.ranks, c->sc->world);
    if (from < 0)
      return sc_error(c, "%s: rank=%s must select exactly one rank", tok[2], sel);
    if (from == as)
      return sc_error(c, "%s: rank %d as=%ld names the same rank", tok[2], from, as);
    p.as_rank = (int)as;
  }
  *(struct sc_post *)sc_push(&c->sc->posts, &c->sc->nposts, sizeof p) = p;
  return 0;
}

#define SC_WATCHDOG_USAGE "usage: watchdog MS [abort|destroy|none] [then=exit|crash|stay] [dump[=MS]] [ranks=SEL]"

/* One word or KEY=VALUE of a watchdog line after MS; *end_word: the
 * abort/destroy/none word seen so far. */
static int sc_watchdog_word(struct sc_ctx *c, struct sc_watchdog *w, char *tok, const char **end_word)
{
  static const char *ends[] = { "abort", "destroy", "none" };
  static const char *thens[] = { "exit", "crash", "stay" };
  char *k, *v;
  if (!sc_kv(tok, &k, &v)) {
    for (int e = 0; e < 3; e++) {
      if (strcmp(tok, ends[e]))
        continue;
      if (*end_word)
        return sc_error(c, "watchdog: '%s' and '%s' both given", *end_word, tok);
      *end_word = ends[e];
      w->end = (enum sc_wd_end)e;
      return 0;
    }
    if (!strcmp(tok, "dump")) {
      w->dump = 1;
      return 0;
    }
    return sc_error(c, "watchdog: unexpected '%s' (abort, destroy, none, then=, dump, ranks=)", tok);
  }
  if (!strcmp(k, "then")) {
    for (int t = 0; t < 3; t++) {
      if (!strcmp(v, thens[t])) {
        w->then = (enum sc_wd_then)t;
        return 0;
      }
    }
    return sc_error(c, "then=%s: expected then=exit, then=crash or then=stay", v);
  }
  if (!strcmp(k, "dump")) {
    w->dump = 1;
    return sc_long_parse(c, k, v, 0, 3600L * 1000, &w->dump_wait_ms);
  }
  if (!strcmp(k, "ranks") || !strcmp(k, "rank"))
    return sc_set_parse(c, k, v, c->sc->world, &w->ranks);
  return sc_error(c, "watchdog: unknown setting '%s' (then, dump, ranks)", k);
}

/* watchdog MS [abort|destroy|none] [then=exit|crash|stay] [dump[=MS]] [ranks=SEL];
 * a rank has one watchdog at most. */
int sc_parse_watchdog(struct sc_ctx *c, char **tok, int n)
{
  struct scenario *sc = c->sc;
  struct sc_watchdog w;
  memset(&w, 0, sizeof w);
  w.line = c->line;
  w.ranks.n = 1;
  w.ranks.hi[0] = INT_MAX;
  w.ranks.stride[0] = 1;
  if (n < 2 || strchr(tok[1], '='))
    return sc_error(c, SC_WATCHDOG_USAGE);
  if (!sc->world)
    return sc_error(c, "'world N' must come before 'watchdog'");
  if (sc_long_parse(c, "watchdog", tok[1], 1, 3600L * 1000, &w.ms) != 0)
    return -1;
  const char *end_word = NULL;
  for (int i = 2; i < n; i++)
    if (sc_watchdog_word(c, &w, tok[i], &end_word) != 0)
      return -1;
  if (w.end == SC_WD_NONE && w.then == SC_WD_STAY)
    return sc_error(c, "watchdog: 'none' with then=stay does nothing (the rank keeps its hung comms); "
                    "use abort or destroy");
  for (int i = 0; i < sc->nwatchdogs; i++)
    for (int r = 0; r < sc->world; r++)
      if (sc_set_has(&w.ranks, r) && sc_set_has(&sc->watchdogs[i].ranks, r))
        return sc_error(c, "watchdog: rank %d already has one (line %d)", r, sc->watchdogs[i].line);
  *(struct sc_watchdog *)sc_push(&sc->watchdogs, &sc->nwatchdogs, sizeof w) = w;
  return 0;
}
