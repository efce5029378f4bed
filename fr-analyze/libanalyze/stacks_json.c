/* stacks_json.c — thread stacks in the analysis JSON (formats/analysis-json.md):
 * verdict.stacks (the lagging and root-cause ranks' most relevant thread)
 * and stack_classes.  Each builder returns NULL when out of memory. */
#include "config.h"

#include <cJSON.h>
#include <stdlib.h>

#include "internal.h"

/* Names as a JSON array; NULL on no memory. */
static cJSON *names_arr(char *const *v, uint32_t n)
{
  char buf[1024];
  cJSON *arr = cJSON_CreateArray();
  for (uint32_t i = 0; arr && i < n; i++) {
    cJSON *s = cJSON_CreateString(fa_sanitize(v[i], buf, sizeof buf));
    if (!s) {
      cJSON_Delete(arr);
      return NULL;
    }
    cJSON_AddItemToArray(arr, s);
  }
  return arr;
}

static cJSON *ranks_arr(const fa_ranks *r)
{
  cJSON *arr = cJSON_CreateArray();
  for (uint32_t i = 0; arr && i < r->n; i++) {
    cJSON *x = cJSON_CreateNumber(r->v[i]);
    if (!x) {
      cJSON_Delete(arr);
      return NULL;
    }
    cJSON_AddItemToArray(arr, x);
  }
  return arr;
}

/* The object of one rank's most relevant thread; NULL on no memory. */
static cJSON *rank_stack(const fa_analysis *a, int32_t g, int32_t cls)
{
  const frz_stack *t = fa_rank_thread(a, g);
  char buf[64];
  cJSON *o = cJSON_CreateObject();
  if (!o || !t) return o;
  int ok = cJSON_AddNumberToObject(o, "rank", g) && cJSON_AddNumberToObject(o, "tid", t->tid) &&
           cJSON_AddStringToObject(o, "thread_name", fa_sanitize(t->name, buf, sizeof buf)) &&
           cJSON_AddStringToObject(o, "status", frz_stack_status_name(t->status)) &&
           cJSON_AddBoolToObject(o, "main", (t->flags & FRZ_TF_MAIN) != 0) &&
           (t->flags & FRZ_TF_IN_NCCL ? cJSON_AddNumberToObject(o, "in_nccl_record", (double)t->record_id)
                                      : cJSON_AddNullToObject(o, "in_nccl_record")) &&
           cJSON_AddNumberToObject(o, "class", cls);
  cJSON *fr = ok ? names_arr(a->stack_classes[cls].frames, a->stack_classes[cls].nframes) : NULL;
  if (!fr) {
    cJSON_Delete(o);
    return NULL;
  }
  cJSON_AddItemToObject(o, "frames", fr);
  return o;
}

cJSON *fa_stacks_verdict_json(const fa_analysis *a)
{
  const fa_verdict *v = &a->verdict;
  fa_ranks who = {NULL, 0};
  uint32_t cap = 0;
  cJSON *arr = cJSON_CreateArray();
  for (uint32_t i = 0; arr && i < v->lagging.n + v->root_cause.n; i++)
    if (fa_ranks_push(&who, &cap, i < v->lagging.n ? v->lagging.v[i] : v->root_cause.v[i - v->lagging.n])) {
      cJSON_Delete(arr);
      arr = NULL;
    }
  fa_ranks_sort(&who);
  for (uint32_t i = 0; arr && a->rank_stacks && i < who.n; i++) {
    int32_t c = fa_verdict_stack_class(a, who.v[i]);
    if (c < 0) continue;
    cJSON *o = rank_stack(a, who.v[i], c);
    if (!o) {
      cJSON_Delete(arr);
      arr = NULL;
      break;
    }
    cJSON_AddItemToArray(arr, o);
  }
  fa_ranks_free(&who);
  return arr;
}

cJSON *fa_stacks_classes_json(const fa_analysis *a)
{
  cJSON *arr = cJSON_CreateArray();
  for (uint32_t i = 0; arr && i < a->nstack_classes; i++) {
    const fa_stack_class *c = &a->stack_classes[i];
    cJSON *o = cJSON_CreateObject(), *rs = ranks_arr(&c->ranks), *fr = names_arr(c->frames, c->nframes);
    if (!o || !rs || !fr || !cJSON_AddStringToObject(o, "status", frz_stack_status_name(c->status))) {
      cJSON_Delete(o);
      cJSON_Delete(rs);
      cJSON_Delete(fr);
      cJSON_Delete(arr);
      return NULL;
    }
    cJSON_AddItemToObject(o, "ranks", rs);
    cJSON_AddItemToObject(o, "frames", fr);
    cJSON_AddItemToArray(arr, o);
  }
  return arr;
}
