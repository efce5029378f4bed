/* stacks.c — what each rank was doing at dump time: its most relevant
 * thread (the one inside an NCCL call, else the one that called NCCL last,
 * else the main thread) and the stack classes.  Every rank's stack of that
 * thread goes into one prefix tree, outermost frame at the root (as LLNL's
 * STAT merges the stacks of many processes); each leaf is a class with the
 * set of ranks that end there, so the odd rank out stands alone. */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define NAME_MAX_LEN 320
/* Python frames taken per thread: CPython's traceback dumper lists at most
 * 100; a dump claiming more is cut to its innermost ones (the stack classes'
 * tree is as deep as the longest stack). */
#define PY_FRAMES_MAX 256

void fa_strings_free(char **v, uint32_t n)
{
  for (uint32_t i = 0; v && i < n; i++) free(v[i]);
  free(v);
}

/* Is this the interpreter's own code (the python executable or libpython)? */
static int is_interpreter(const frz_callsite *c)
{
  return c && (!strncmp(c->module, "libpython", 9) || !strncmp(c->module, "python", 6));
}

/* A native frame's name into buf. */
static void native_name(const frz_dump *d, uint64_t addr, int offsets, char *buf, size_t len)
{
  const frz_callsite *c = frz_find_callsite(d, addr);
  if (!c || (!c->module[0] && !c->symbol[0]))
    snprintf(buf, len, "0x%" PRIx64, addr);
  else if (c->symbol[0] && offsets)
    snprintf(buf, len, "%s!%s+0x%" PRIx64, c->module, c->symbol, c->offset);
  else if (c->symbol[0])
    snprintf(buf, len, "%s", c->symbol);
  else
    snprintf(buf, len, "%s+0x%" PRIx64, c->module, c->offset);
}

/* A Python frame's name into buf: "func (file.py:42)", the file without
 * its directory. */
static void python_name(const frz_pyframe *f, char *buf, size_t len)
{
  const char *base = strrchr(f->file, '/');
  snprintf(buf, len, "%s (%s:%u)", f->func, base ? base + 1 : f->file, f->line);
}

/* The Python frames of thread t: [*first, *first + return) of d->pyframes. */
static uint32_t python_frames(const frz_dump *d, const frz_stack *t, uint32_t *first)
{
  uint32_t n = 0;
  *first = 0;
  for (uint32_t i = 0; t->thread_handle && i < d->npyframes; i++) {
    if (d->pyframes[i].thread_handle != t->thread_handle) {
      if (n) break;
      continue;
    }
    if (!n) *first = i;
    n++;
  }
  return n;
}

int fa_thread_frames(const frz_dump *d, const frz_stack *t, int offsets, char ***out, uint32_t *n)
{
  uint32_t py0, npy = python_frames(d, t, &py0), cut = t->depth, more = 0;
  if (npy > PY_FRAMES_MAX) {
    more = npy - PY_FRAMES_MAX;
    npy = PY_FRAMES_MAX;
  }
  if (npy) /* the interpreter's native frames give way to the Python ones */
    for (uint32_t k = 0; k < t->depth; k++)
      if (is_interpreter(frz_find_callsite(d, t->frames[k]))) {
        cut = k;
        break;
      }
  *n = 0;
  *out = calloc((size_t)cut + npy + 2, sizeof **out);
  if (!*out) return -1;
  char raw[NAME_MAX_LEN], safe[NAME_MAX_LEN];
  for (uint32_t k = 0; k < cut + npy + (more ? 1 : 0); k++) {
    if (k < cut) native_name(d, t->frames[k], offsets, raw, sizeof raw);
    else if (k < cut + npy) python_name(&d->pyframes[py0 + k - cut], raw, sizeof raw);
    else snprintf(raw, sizeof raw, "(%u outer Python frames cut)", more);
    (*out)[k] = fa_strdup(fa_sanitize(raw, safe, sizeof safe));
    if (!(*out)[k]) {
      fa_strings_free(*out, k);
      *out = NULL;
      return -1;
    }
    *n = k + 1;
  }
  return 0;
}

/* How relevant a thread is: inside an NCCL call (the newest such call
 * first), then the newest NCCL caller, then the main thread. */
static uint64_t relevance(const frz_stack *t)
{
  if (t->flags & FRZ_TF_IN_NCCL) return (UINT64_C(1) << 62) + t->record_id;
  if (t->flags & FRZ_TF_LAST_NCCL) return 3;
  if (t->flags & FRZ_TF_MAIN) return 2;
  return 1;
}

static int32_t relevant_thread(const frz_dump *d)
{
  int32_t best = -1;
  for (uint32_t i = 0; i < d->nstacks; i++)
    if (best < 0 || relevance(&d->stacks[i]) > relevance(&d->stacks[best])) best = (int32_t)i;
  return best;
}

const frz_stack *fa_rank_thread(const fa_analysis *a, int32_t g)
{
  int32_t r = fa_find_rank(a, g);
  if (r < 0 || !a->rank_stacks || a->rank_stacks[r].thread < 0) return NULL;
  return &fa_rank_latest(a, &a->ranks[r])->dump.stacks[a->rank_stacks[r].thread];
}

int32_t fa_verdict_stack_class(const fa_analysis *a, int32_t g)
{
  int32_t r = fa_find_rank(a, g);
  if (r < 0 || !a->rank_stacks) return -1;
  if (fa_rank_latest(a, &a->ranks[r])->dump.process.trigger == FRZ_TRIGGER_EXIT) return -1;
  return a->rank_stacks[r].cls;
}

/* ---- the prefix tree ----------------------------------------------------------- */

typedef struct node {
  char *name;
  uint32_t *kids;       /* indices into tree.nodes */
  uint32_t nkids, capkids;
  int32_t cls;          /* class of the stacks that end here; -1 none */
} node;

typedef struct tree {
  node *nodes;
  uint32_t n, cap;
  fa_stack_class *cls;  /* in order of creation */
  uint32_t *rcap;       /* capacity of each class's rank array */
  uint32_t ncls, capcls, caprcap;
} tree;

/* The child of `parent` named `name`, created when missing; -1 on no memory. */
static int64_t child(tree *t, uint32_t parent, const char *name)
{
  for (uint32_t i = 0; i < t->nodes[parent].nkids; i++)
    if (!strcmp(t->nodes[t->nodes[parent].kids[i]].name, name)) return t->nodes[parent].kids[i];
  if (fa_grow(&t->nodes, &t->cap, t->n + 1, sizeof *t->nodes)) return -1;
  node *p = &t->nodes[parent];
  if (fa_grow(&p->kids, &p->capkids, p->nkids + 1, sizeof *p->kids)) return -1;
  node *k = &t->nodes[t->n];
  memset(k, 0, sizeof *k);
  k->cls = -1;
  if (!(k->name = fa_strdup(name))) return -1;
  p->kids[p->nkids++] = t->n;
  return t->n++;
}

/* Add rank g's stack (frames innermost first) to the tree; its class in *cls. */
static int insert(tree *t, int32_t g, char **frames, uint32_t n, uint32_t status, int32_t *cls)
{
  uint32_t at = 0;
  for (uint32_t k = n; k-- > 0;) {
    int64_t c = child(t, at, frames[k]);
    if (c < 0) return -1;
    at = (uint32_t)c;
  }
  if (t->nodes[at].cls < 0) {
    if (fa_grow(&t->cls, &t->capcls, t->ncls + 1, sizeof *t->cls) ||
        fa_grow(&t->rcap, &t->caprcap, t->ncls + 1, sizeof *t->rcap))
      return -1;
    t->rcap[t->ncls] = 0;
    fa_stack_class *c = &t->cls[t->ncls];
    memset(c, 0, sizeof *c);
    c->status = status;
    c->frames = calloc(n + 1, sizeof *c->frames);
    if (!c->frames) return -1;
    for (uint32_t k = 0; k < n; k++)
      if (!(c->frames[k] = fa_strdup(frames[k]))) return -1;
    c->nframes = n;
    t->nodes[at].cls = (int32_t)t->ncls++;
  }
  *cls = t->nodes[at].cls;
  return fa_ranks_push(&t->cls[*cls].ranks, &t->rcap[*cls], g);
}

static int cmp_kid(const void *x, const void *y, void *nodes)
{
  const node *ns = nodes;
  return strcmp(ns[*(const uint32_t *)x].name, ns[*(const uint32_t *)y].name);
}

/* Classes in depth-first order of the tree (children by name): similar
 * stacks end up next to each other. */
static void walk(tree *t, uint32_t at, uint32_t *order, uint32_t *n)
{
  node *p = &t->nodes[at];
  if (p->cls >= 0) order[(*n)++] = (uint32_t)p->cls;
  if (p->nkids > 1) qsort_r(p->kids, p->nkids, sizeof *p->kids, cmp_kid, t->nodes);
  for (uint32_t i = 0; i < p->nkids; i++) walk(t, p->kids[i], order, n);
}

static void tree_free(tree *t)
{
  for (uint32_t i = 0; i < t->n; i++) {
    free(t->nodes[i].name);
    free(t->nodes[i].kids);
  }
  free(t->nodes);
}

/* The frames a rank's relevant thread contributes: its stack, or the
 * reason it has none ("(no answer)"). */
static int rank_path(const frz_dump *d, const frz_stack *s, char ***frames, uint32_t *n)
{
  if (s->status == FRZ_STACK_OK) return fa_thread_frames(d, s, 0, frames, n);
  char buf[64];
  snprintf(buf, sizeof buf, "(not sampled: %s)", frz_stack_status_name(s->status));
  *frames = calloc(1, sizeof **frames);
  if (!*frames || !((*frames)[0] = fa_strdup(buf))) {
    free(*frames);
    return -1;
  }
  *n = 1;
  return 0;
}

/* Largest rank set first; equal ones in tree order (the array is in it). */
static int cmp_class(const void *x, const void *y)
{
  const fa_stack_class *a = x, *b = y;
  if (a->ranks.n != b->ranks.n) return a->ranks.n > b->ranks.n ? -1 : 1;
  return (a->nframes > b->nframes) - (a->nframes < b->nframes);
}

/* Move the classes into a->stack_classes in tree order, then by size, and
 * renumber the ranks' classes (creation order until now). */
static int publish(fa_analysis *a, tree *t)
{
  uint32_t *order = malloc((t->ncls + 1) * sizeof *order), *where = malloc((t->ncls + 1) * sizeof *where);
  a->stack_classes = calloc(t->ncls + 1, sizeof *a->stack_classes);
  if (!order || !where || !a->stack_classes) {
    free(order);
    free(where);
    return -1;
  }
  uint32_t n = 0;
  walk(t, 0, order, &n);
  /* a stable order by size: insertion sort keeps the tree order of ties */
  for (uint32_t i = 1; i < n; i++)
    for (uint32_t k = i; k > 0 && cmp_class(&t->cls[order[k - 1]], &t->cls[order[k]]) > 0; k--) {
      uint32_t tmp = order[k];
      order[k] = order[k - 1];
      order[k - 1] = tmp;
    }
  for (uint32_t i = 0; i < n; i++) {
    a->stack_classes[i] = t->cls[order[i]];
    where[order[i]] = i;
  }
  a->nstack_classes = n;
  for (uint32_t r = 0; r < a->nranks; r++)
    if (a->rank_stacks[r].cls >= 0) a->rank_stacks[r].cls = (int32_t)where[a->rank_stacks[r].cls];
  free(order);
  free(where);
  t->ncls = 0; /* owned by a now */
  return 0;
}

int fa_stacks_build(fa_analysis *a)
{
  uint32_t with = 0;
  a->rank_stacks = calloc(a->nranks + 1, sizeof *a->rank_stacks);
  if (!a->rank_stacks) return -1;
  for (uint32_t r = 0; r < a->nranks; r++) {
    a->rank_stacks[r].thread = relevant_thread(&fa_rank_latest(a, &a->ranks[r])->dump);
    a->rank_stacks[r].cls = -1;
    if (a->rank_stacks[r].thread >= 0) with++;
  }
  if (!with) {
    free(a->rank_stacks);
    a->rank_stacks = NULL;
    return 0;
  }
  tree t = {0};
  int rc = -1;
  if (fa_grow(&t.nodes, &t.cap, 1, sizeof *t.nodes)) goto out;
  memset(&t.nodes[0], 0, sizeof t.nodes[0]);
  t.nodes[0].cls = -1;
  t.n = 1;
  for (uint32_t r = 0; r < a->nranks; r++) {
    if (a->rank_stacks[r].thread < 0) continue;
    const frz_dump *d = &fa_rank_latest(a, &a->ranks[r])->dump;
    const frz_stack *s = &d->stacks[a->rank_stacks[r].thread];
    char **frames;
    uint32_t n;
    int32_t cls;
    if (rank_path(d, s, &frames, &n)) goto out;
    int e = insert(&t, a->ranks[r].global_rank, frames, n, s->status, &cls);
    fa_strings_free(frames, n);
    if (e) goto out;
    a->rank_stacks[r].cls = cls;
  }
  rc = publish(a, &t);
out:
  for (uint32_t i = 0; i < t.ncls; i++) {
    fa_strings_free(t.cls[i].frames, t.cls[i].nframes);
    fa_ranks_free(&t.cls[i].ranks);
  }
  free(t.cls);
  free(t.rcap);
  tree_free(&t);
  return rc;
}

void fa_stacks_free(fa_analysis *a)
{
  for (uint32_t i = 0; i < a->nstack_classes; i++) {
    fa_strings_free(a->stack_classes[i].frames, a->stack_classes[i].nframes);
    fa_ranks_free(&a->stack_classes[i].ranks);
  }
  free(a->stack_classes);
  free(a->rank_stacks);
}
