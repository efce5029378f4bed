/* stacks.c — fr-tui's stack pane (key t: the selected rank's most relevant
 * thread, frame by frame, followed as the selection moves) and stack-classes
 * view (key T: every class with its ranks), in the info lines. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tui.h"

/* The lines under the pane's header: what the info area holds now (at
 * least 8 lines, more where the timeline leaves rows empty). */
static uint32_t pane_lines(const view *v) { return v->info_max > 1 ? (uint32_t)v->info_max - 1 : 1; }

/* The selected rank's stack into m. */
static void rank_pane(const view *v, FILE *m)
{
  int32_t ri = view_sel_rank(v);
  int32_t g = ri >= 0 ? view_global(v, ri) : -1;
  const frz_stack *t = g >= 0 ? fa_rank_thread(v->a, g) : NULL;
  if (!t) {
    fprintf(m, "-- stack of rank %d: none in its dump", g);
    return;
  }
  const frz_dump *d = &fa_rank_latest(v->a, &v->a->ranks[fa_find_rank(v->a, g)])->dump;
  char name[FRZ_THREAD_NAME_MAX * 4];
  fprintf(m, "-- stack of rank %d: thread %u \"%s\"%s%s, %s; %u thread%s in the dump", g, t->tid,
          tui_clean(t->name, name, sizeof name), t->flags & FRZ_TF_MAIN ? " (main)" : "",
          t->flags & FRZ_TF_IN_NCCL ? " in NCCL" : "", frz_stack_status_name(t->status), d->nstacks,
          d->nstacks == 1 ? "" : "s");
  char **f;
  uint32_t n;
  if (t->status != FRZ_STACK_OK || fa_thread_frames(d, t, 1, &f, &n) != 0) return;
  uint32_t lines = pane_lines(v);
  for (uint32_t k = 0; k < n && k < lines; k++) {
    char clean[512];
    if (k == lines - 1 && n > lines)
      fprintf(m, "\n  ... %u more frames", n - k);
    else
      fprintf(m, "\n  #%-2u %s", k, tui_clean(f[k], clean, sizeof clean));
  }
  fa_strings_free(f, n);
}

/* Every stack class, largest first, one a line. */
static void classes_view(const view *v, FILE *m)
{
  const fa_analysis *a = v->a;
  fprintf(m, "-- stack classes: %u (the most relevant thread of each rank, innermost frame first)",
          a->nstack_classes);
  uint32_t lines = pane_lines(v);
  for (uint32_t i = 0; i < a->nstack_classes && i < lines; i++) {
    const fa_stack_class *c = &a->stack_classes[i];
    char rs[128], clean[512];
    if (i == lines - 1 && a->nstack_classes > lines) {
      fprintf(m, "\n  ... %u more classes", a->nstack_classes - i);
      break;
    }
    fprintf(m, "\n  %u rank%s (%s):", c->ranks.n, c->ranks.n == 1 ? "" : "s",
            fa_format_ranks(c->ranks.v, c->ranks.n, rs, sizeof rs));
    for (uint32_t k = 0; k < c->nframes; k++)
      fprintf(m, "%s%s", k ? " <- " : " ", tui_clean(c->frames[k], clean, sizeof clean));
  }
}

void stacks_info(view *v)
{
  char *s = NULL;
  size_t len = 0;
  FILE *m = open_memstream(&s, &len);
  if (!m) return;
  if (!v->a->rank_stacks) fputs("-- no thread stacks in these dumps (frz 1.2, FR_STACKS)", m);
  else if (v->stacks == 1) rank_pane(v, m);
  else classes_view(v, m);
  fclose(m);
  view_info(v, "%s", s);
  free(s);
}

/* Key t: the selected rank's stack pane on / off. */
void keys_stack_pane(view *v)
{
  v->stacks = v->stacks == 1 ? 0 : 1;
  if (!v->stacks) view_info(v, NULL);
}

/* Key T: the stack classes on / off. */
void keys_stack_classes(view *v)
{
  v->stacks = v->stacks == 2 ? 0 : 2;
  if (!v->stacks) view_info(v, NULL);
}
