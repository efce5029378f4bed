/* comms.c — the scenario lines that are not body ops or faults: the
 * communicators (comm NAME split|init|shrink|initall ...), the ranks'
 * environment (env) and what run-scenario does to the dumps after the run
 * (post).  Format: tests/scenarios/README.md. */
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
