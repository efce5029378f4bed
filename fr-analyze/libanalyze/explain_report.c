/* explain_report.c — the next steps and the evidence in the reports
 * (explain.h): the text report's "what to do:" and "why:" sections, within
 * 80 columns, and their JSON arrays (formats/analysis-json.md). */
#include "config.h"

#include <cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "explain.h"
#include "internal.h"

/* Records of a rule shown in the text (the JSON lists up to 8). */
#define TEXT_RECS 3

/* text after `first` (a prefix of `indent` columns), wrapped within 80
 * columns, the other lines `indent` columns in. */
static void wrap(FILE *o, const char *first, const char *text, int indent)
{
  char buf[4096];
  int n = (int)strlen(first);
  snprintf(buf, sizeof buf, "%s%s", first + strspn(first, " "), text);
  fa_wrap_text(o, buf, n - (int)strlen(first + strspn(first, " ")), indent);
}

static void place_line(FILE *o, const fa_place *p)
{
  char h[FRZ_HOST_MAX * 4], f[512];
  fprintf(o, "  rank %d: ", p->rank);
  if (p->pid) fprintf(o, "pid %u", p->pid);
  else fputs("pid unknown", o);
  fprintf(o, " on host %s", p->host[0] ? fa_sanitize(p->host, h, sizeof h) : "unknown");
  if (p->gpu >= 0) fprintf(o, ", GPU %d", p->gpu);
  if (p->from_announcement) fputs(" (its announcement)", o);
  else if (p->pytorch && p->file) {
    const char *slash = strrchr(p->file, '/');
    fprintf(o, " (dump %s)", fa_sanitize(slash ? slash + 1 : p->file, f, sizeof f));
  }
  fputc('\n', o);
}

int fa_next_steps_text(FILE *o, const fa_analysis *a)
{
  fa_next_step *s;
  uint32_t n;
  char safe[2048], h[FRZ_HOST_MAX * 4];
  if (fa_next_steps(a, NULL, &s, &n)) return -1;
  if (!n) {
    fa_next_steps_free(s, n);
    return 0;
  }
  fputs("\nwhat to do:\n", o);
  int32_t last = -1;
  for (uint32_t i = 0; i < n; i++) {
    const fa_next_step *x = &s[i];
    if (x->rank >= 0 && x->rank != last) place_line(o, &x->where);
    last = x->rank;
    const char *lead = x->rank >= 0 ? "    - " : "  - ";
    wrap(o, lead, fa_sanitize(x->text, safe, sizeof safe), (int)strlen(lead));
    if (x->command) {
      int at = (int)strlen(lead) + 2;
      fa_sanitize(x->command, safe, sizeof safe);
      if (x->host) {
        fa_sanitize(x->host, h, sizeof h);
        if (at + (int)strlen(h) + 5 + (int)strlen(safe) > 80) {
          fprintf(o, "%*son %s:\n%*s%s\n", at, "", h, at + 2, "", safe);
          continue;
        }
        fprintf(o, "%*son %s: %s\n", at, "", h, safe);
      } else {
        fprintf(o, "%*s$ %s\n", at, "", safe);
      }
    }
  }
  fa_next_steps_free(s, n);
  return 0;
}

int fa_evidence_text(FILE *o, const fa_analysis *a)
{
  fa_evidence *e;
  uint32_t n;
  char safe[2048], line[1024], lead[64];
  if (fa_evidence_list(a, &e, &n)) return -1;
  fputs("\nwhy (each rule: fr-analyze(1), RULES):\n", o);
  if (!n) fputs("  no rule decided: nothing to analyse\n", o);
  for (uint32_t i = 0; i < n; i++) {
    snprintf(lead, sizeof lead, "  %s: ", e[i].rule);
    /* the text under its rule name, 4 columns in after the first line */
    fputs(lead, o);
    int first = 80 - (int)strlen(lead);
    const char *t = fa_sanitize(e[i].text, safe, sizeof safe);
    int len = (int)strlen(t), cut = len;
    if (len > first) {
      cut = first;
      while (cut > 0 && t[cut] != ' ') cut--;
      if (cut == 0) cut = (int)strcspn(t, " ");
    }
    fprintf(o, "%.*s\n", cut, t);
    t += cut;
    while (*t == ' ') t++;
    if (*t) wrap(o, "    ", t, 4);
    for (uint32_t k = 0; k < e[i].nrecs && k < TEXT_RECS; k++)
      wrap(o, "      ", fa_evidence_rec_text(a, &e[i].recs[k], line, sizeof line), 8);
    uint32_t more = e[i].more + (e[i].nrecs > TEXT_RECS ? e[i].nrecs - TEXT_RECS : 0);
    if (more) fprintf(o, "      and %u more record%s (--json lists up to 8)\n", more, more == 1 ? "" : "s");
  }
  fa_evidence_free(e, n);
  return 0;
}

/* ---- JSON ----------------------------------------------------------------------- */

static cJSON *jstr(const char *s)
{
  char buf[2048];
  return s ? cJSON_CreateString(fa_sanitize(s, buf, sizeof buf)) : cJSON_CreateNull();
}

/* Adds item to obj; on failure *ok = 0. */
static void put(cJSON *obj, const char *key, cJSON *item, int *ok)
{
  if (!item || !obj) {
    *ok = 0;
    cJSON_Delete(item);
    return;
  }
  cJSON_AddItemToObject(obj, key, item);
}

static cJSON *num_or_null(int64_t v, int known)
{
  return known ? cJSON_CreateNumber((double)v) : cJSON_CreateNull();
}

cJSON *fa_next_steps_json(const fa_analysis *a)
{
  fa_next_step *s;
  uint32_t n;
  if (fa_next_steps(a, NULL, &s, &n)) return NULL;
  cJSON *arr = cJSON_CreateArray();
  int ok = arr != NULL;
  for (uint32_t i = 0; ok && i < n; i++) {
    const fa_next_step *x = &s[i];
    cJSON *o = cJSON_CreateObject();
    put(o, "kind", jstr(x->kind), &ok);
    put(o, "rank", num_or_null(x->rank, x->rank >= 0), &ok);
    put(o, "host", jstr(x->rank >= 0 && x->where.host[0] ? x->where.host : NULL), &ok);
    put(o, "pid", num_or_null(x->where.pid, x->rank >= 0 && x->where.pid), &ok);
    put(o, "gpu", num_or_null(x->where.gpu, x->rank >= 0 && x->where.gpu >= 0), &ok);
    put(o, "text", jstr(x->text), &ok);
    put(o, "command", jstr(x->command), &ok);
    put(o, "run_on", jstr(x->host), &ok);
    if (o) cJSON_AddItemToArray(arr, o);
    else ok = 0;
  }
  fa_next_steps_free(s, n);
  if (!ok) {
    cJSON_Delete(arr);
    return NULL;
  }
  return arr;
}

cJSON *fa_evidence_json(const fa_analysis *a)
{
  fa_evidence *e;
  uint32_t n;
  char hex[17];
  if (fa_evidence_list(a, &e, &n)) return NULL;
  cJSON *arr = cJSON_CreateArray();
  int ok = arr != NULL;
  for (uint32_t i = 0; ok && i < n; i++) {
    cJSON *o = cJSON_CreateObject(), *recs = cJSON_CreateArray();
    put(o, "rule", jstr(e[i].rule), &ok);
    put(o, "text", jstr(e[i].text), &ok);
    for (uint32_t k = 0; recs && k < e[i].nrecs; k++) {
      const fa_evidence_rec *r = &e[i].recs[k];
      cJSON *ro = cJSON_CreateObject();
      put(ro, "rank", num_or_null(r->rank, r->rank >= 0), &ok);
      put(ro, "comm", r->comm >= 0 ? cJSON_CreateString(fa_hex(a->comms[r->comm].id, hex)) : cJSON_CreateNull(), &ok);
      put(ro, "seq", num_or_null(r->seq, r->seq >= 0), &ok);
      put(ro, "state", jstr(r->state), &ok);
      put(ro, "file", jstr(r->frame >= 0 ? a->frames[r->frame].name : NULL), &ok);
      put(ro, "frame", num_or_null(r->frame >= 0 ? a->frames[r->frame].dump.process.frame : 0, r->frame >= 0), &ok);
      if (ro) cJSON_AddItemToArray(recs, ro);
      else ok = 0;
    }
    put(o, "records", recs, &ok);
    put(o, "more_records", cJSON_CreateNumber(e[i].more), &ok);
    if (o) cJSON_AddItemToArray(arr, o);
    else ok = 0;
  }
  fa_evidence_free(e, n);
  if (!ok) {
    cJSON_Delete(arr);
    return NULL;
  }
  return arr;
}
