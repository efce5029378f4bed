/* stacks_text.c — thread stacks in the human report: the top frames of the
 * lagging and root-cause ranks in the verdict block (at most two lines, so
 * the block stays short), and the stack classes after the communicators. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define RANKSET_LEN 256
#define VERDICT_LINES 2     /* stack lines in the verdict block at most */
#define CLASS_FRAMES 12     /* frames shown per class at most */
#define CLASSES_SHOWN 32    /* classes listed at most (the largest; JSON has all) */
#define WIDTH 80

/* A frame named only by module and offset (or address): not worth a place
 * among the few top frames of the verdict. */
static int unnamed(const char *f)
{
  return !strncmp(f, "0x", 2) || strstr(f, "+0x") != NULL;
}

/* Frames of class c from `from` on, " <- " between them, wrapped at WIDTH
 * columns (continuation lines indented by `indent`), at most `max` frames,
 * starting at column `col`, and none beyond `main` (the C runtime's start
 * code below it is the same everywhere).  With `one_line`, stop at the end
 * of the line. */
static void frames_text(FILE *o, const fa_stack_class *c, uint32_t from, uint32_t max, int col,
                        int indent, int one_line)
{
  uint32_t shown = 0, end = c->nframes;
  for (uint32_t k = from; k < c->nframes; k++)
    if (!strcmp(c->frames[k], "main")) {
      end = k + 1;
      break;
    }
  for (uint32_t k = from; k < end && shown < max; k++, shown++) {
    int len = (int)strlen(c->frames[k]) + (shown ? 4 : 0);
    if (shown && col + len > WIDTH) {
      if (one_line) break;
      fprintf(o, "\n%*s", indent, "");
      col = indent;
      len -= 1; /* "<- f" at the start of a line */
      fputs("<- ", o);
    } else if (shown) {
      fputs(" <- ", o);
    }
    fputs(c->frames[k], o);
    col += len;
  }
  if (!one_line && end - from > shown)
    fprintf(o, "%s<- ... (%u more)", col + 20 > WIDTH ? "\n      " : " ", end - from - shown);
  fputc('\n', o);
}

int fa_stacks_verdict_text(FILE *o, const fa_analysis *a)
{
  const fa_verdict *v = &a->verdict;
  if (!a->rank_stacks) return 0;
  fa_ranks who = {NULL, 0}, grp = {NULL, 0};
  uint32_t cap = 0, gcap = 0, lines = 0, more = 0;
  for (uint32_t i = 0; i < v->lagging.n; i++)
    if (fa_ranks_push(&who, &cap, v->lagging.v[i])) goto oom;
  for (uint32_t i = 0; i < v->root_cause.n; i++)
    if (fa_ranks_push(&who, &cap, v->root_cause.v[i])) goto oom;
  fa_ranks_sort(&who);
  char *done = calloc(a->nstack_classes + 1, 1);
  if (!done) goto oom;
  for (uint32_t i = 0; i < who.n; i++) {
    int32_t c = fa_verdict_stack_class(a, who.v[i]);
    if (c < 0 || done[c]) continue;
    done[c] = 1;
    if (lines == VERDICT_LINES) {
      more++;
      continue;
    }
    grp.n = 0; /* the ranks of `who` in this class */
    for (uint32_t k = i; k < who.n; k++)
      if (fa_verdict_stack_class(a, who.v[k]) == c && fa_ranks_push(&grp, &gcap, who.v[k])) {
        free(done);
        goto oom;
      }
    char rs[RANKSET_LEN], label[RANKSET_LEN + 16];
    snprintf(label, sizeof label, "  stack of %s:", fa_format_ranks(grp.v, grp.n, rs, sizeof rs));
    int col = fprintf(o, "%-18s", label);
    const fa_stack_class *sc = &a->stack_classes[c];
    uint32_t from = 0; /* from the first named frame (unnamed ones only when all are) */
    while (from < sc->nframes && unnamed(sc->frames[from])) from++;
    if (from == sc->nframes) from = 0;
    frames_text(o, sc, from, UINT32_MAX, col, 18, 1);
    lines++;
  }
  if (more) fprintf(o, "  %-16s%u more (see the stack classes)\n", "stacks:", more);
  free(done);
  fa_ranks_free(&who);
  fa_ranks_free(&grp);
  return 0;
oom:
  fa_ranks_free(&who);
  fa_ranks_free(&grp);
  return -1;
}

int fa_stacks_classes_text(FILE *o, const fa_analysis *a)
{
  if (!a->rank_stacks) return 0;
  char rs[RANKSET_LEN];
  uint32_t with = 0;
  fa_ranks none = {NULL, 0};
  uint32_t cap = 0;
  for (uint32_t r = 0; r < a->nranks; r++) {
    if (a->rank_stacks[r].thread >= 0) with++;
    else if (fa_ranks_push(&none, &cap, a->ranks[r].global_rank)) return -1;
  }
  fprintf(o, "\nstack classes: %u, of the most relevant thread of %u rank%s (innermost frame first)\n",
          a->nstack_classes, with, with == 1 ? "" : "s");
  uint32_t shown = a->nstack_classes < CLASSES_SHOWN ? a->nstack_classes : CLASSES_SHOWN, rest = 0;
  for (uint32_t i = 0; i < shown; i++) {
    const fa_stack_class *c = &a->stack_classes[i];
    int col = fprintf(o, "  %u rank%s (%s): ", c->ranks.n, c->ranks.n == 1 ? "" : "s",
                      fa_format_ranks(c->ranks.v, c->ranks.n, rs, sizeof rs));
    frames_text(o, c, 0, CLASS_FRAMES, col, 6, 0);
  }
  for (uint32_t i = shown; i < a->nstack_classes; i++) rest += a->stack_classes[i].ranks.n;
  if (shown < a->nstack_classes)
    fprintf(o, "  ... %u more classes of %u rank%s (the JSON report lists every class)\n",
            a->nstack_classes - shown, rest, rest == 1 ? "" : "s");
  if (none.n) fprintf(o, "  no stacks in the dumps of ranks %s\n", fa_format_ranks(none.v, none.n, rs, sizeof rs));
  fa_ranks_free(&none);
  return 0;
}
