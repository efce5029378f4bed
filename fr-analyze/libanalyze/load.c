/* load.c — input: dump files and directories (or decoded dumps) into the
 * analysis, unusable files into its list of problems. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "input.h"
#include "internal.h"

/* The file every rank polls to know that a dump was requested; not a dump. */
#define TRIGGER_NAME "TRIGGER"

fa_analysis *fa_new(void)
{
  fa_analysis *a = calloc(1, sizeof *a);
  if (!a) return NULL;
  a->world_size = -1;
  a->verdict.comm = -1;
  a->verdict.mismatch_comm = -1;
  a->verdict.status = FA_STATUS_INCONCLUSIVE;
  return a;
}

static void free_comm(fa_comm *c)
{
  free(c->members);
  free(c->mismatch.groups);
  free(c->mismatch.members);
  free(c->links);
}

void fa_free(fa_analysis *a)
{
  if (!a) return;
  for (uint32_t i = 0; i < a->nfiles; i++) free(a->files[i]);
  free(a->files);
  for (uint32_t i = 0; i < a->nproblems; i++) {
    free(a->problems[i].file);
    free(a->problems[i].message);
  }
  free(a->problems);
  for (uint32_t i = 0; i < a->nframes; i++) {
    fa_frame *f = &a->frames[i];
    free(f->name);
    frz_dump_free(&f->dump);
    free(f->idx);
    free(f->coll);
    free(f->p2p);
  }
  free(a->frames);
  free(a->ranks);
  fa_ranks_free(&a->ranks_missing);
  for (uint32_t i = 0; i < a->ncomms; i++) free_comm(&a->comms[i]);
  free(a->comms);
  fa_verdict *v = &a->verdict;
  free(v->summary);
  fa_ranks_free(&v->lagging);
  fa_ranks_free(&v->root_cause);
  fa_ranks_free(&v->ahead);
  free(v->links);
  free(v->cycle);
  free(v->stragglers);
  fa_ranks_free(&v->progressed);
  free(a->hosts);
  fa_stacks_free(a);
  free(a);
}

/* Is an array grown by doubling from 4 full at count n? */
static int need_room(uint32_t n)
{
  return n == 0 || (n >= 4 && (n & (n - 1)) == 0);
}

int fa_add_problem(fa_analysis *a, const char *file, int has_offset, uint64_t offset,
                   const char *message)
{
  if (need_room(a->nproblems)) {
    size_t ncap = a->nproblems ? (size_t)a->nproblems * 2 : 4;
    fa_problem *p = realloc(a->problems, ncap * sizeof *p);
    if (!p) return -1;
    a->problems = p;
  }
  fa_problem *n = &a->problems[a->nproblems];
  n->file = file ? fa_strdup(file) : NULL;
  n->message = fa_strdup(message ? message : "");
  n->has_offset = has_offset;
  n->offset = offset;
  if ((file && !n->file) || !n->message) {
    free(n->file);
    free(n->message);
    return -1;
  }
  a->nproblems++;
  return 0;
}

/* Remember a file name in input.files. */
static int add_file_name(fa_analysis *a, const char *name)
{
  if (need_room(a->nfiles)) {
    size_t ncap = a->nfiles ? (size_t)a->nfiles * 2 : 4;
    char **p = realloc(a->files, ncap * sizeof *p);
    if (!p) return -1;
    a->files = p;
  }
  char *d = fa_strdup(name);
  if (!d) return -1;
  a->files[a->nfiles++] = d;
  return 0;
}

/* The message of a codec error without the "NAME: " and "at byte N: "
 * prefixes that the problem's own fields carry. */
static const char *bare_message(const frz_error *e, const char *name)
{
  const char *m = e->msg;
  size_t n = strlen(name);
  if (strncmp(m, name, n) == 0 && m[n] == ':' && m[n + 1] == ' ') m += n + 2;
  if (strncmp(m, "at byte ", 8) == 0) {
    const char *p = m + 8;
    while (*p >= '0' && *p <= '9') p++;
    if (p > m + 8 && p[0] == ':' && p[1] == ' ') m = p + 2;
  }
  return *m ? m : frz_status_name(e->status);
}

int fa_add_dump(fa_analysis *a, frz_dump *d, const char *name)
{
  char label[32];
  if (a->ran) { /* the model is built: frames are no longer appended */
    frz_dump_free(d);
    return -1;
  }
  if (!name) {
    snprintf(label, sizeof label, "dump#%u", a->next_unnamed++);
    name = label;
  }
  if (need_room(a->nframes)) {
    size_t ncap = a->nframes ? (size_t)a->nframes * 2 : 4;
    fa_frame *p = realloc(a->frames, ncap * sizeof *p);
    if (!p) {
      frz_dump_free(d);
      return -1;
    }
    a->frames = p;
  }
  fa_frame *f = &a->frames[a->nframes];
  memset(f, 0, sizeof *f);
  f->name = fa_strdup(name);
  if (!f->name) {
    frz_dump_free(d);
    return -1;
  }
  f->rank = -1;
  f->dump = *d;
  memset(d, 0, sizeof *d);
  a->nframes++;
  return 0;
}

/* Read and decode one file; a failure becomes a problem. */
static int add_file(fa_analysis *a, const char *path)
{
  if (add_file_name(a, path)) return -1;
  frz_dump d;
  frz_error e;
  memset(&d, 0, sizeof d);
  memset(&e, 0, sizeof e);
  frz_status st = fa_read_dump_file(path, &d, &e); /* frz, or PyTorch FR (input.c) */
  if (st == FRZ_E_NOMEM) return -1;
  if (st != FRZ_OK) {
    int has_off = st != FRZ_E_IO && st != FRZ_E_INVALID;
    return fa_add_problem(a, path, has_off, e.offset, bare_message(&e, path));
  }
  return fa_add_dump(a, &d, path);
}

static int cmp_str(const void *x, const void *y)
{
  return strcmp(*(char *const *)x, *(char *const *)y);
}

/* Every regular file of a directory, in name order. */
static int add_dir(fa_analysis *a, const char *dir)
{
  DIR *dp = opendir(dir);
  if (!dp) {
    char msg[256];
    snprintf(msg, sizeof msg, "cannot open directory: %s", strerror(errno));
    return fa_add_problem(a, dir, 0, 0, msg);
  }
  char **names = NULL;
  uint32_t n = 0, cap = 0;
  int rc = 0;
  size_t dl = strlen(dir);
  int slash = dl > 0 && dir[dl - 1] == '/';
  struct dirent *de;
  while ((de = readdir(dp)) != NULL) {
    if (de->d_name[0] == '.' || strcmp(de->d_name, TRIGGER_NAME) == 0) continue;
    char *p = fa_printf("%s%s%s", dir, slash ? "" : "/", de->d_name);
    if (!p || fa_grow(&names, &cap, n + 1, sizeof *names)) {
      free(p);
      rc = -1;
      break;
    }
    struct stat st;
    if (stat(p, &st) != 0 || !S_ISREG(st.st_mode)) {
      free(p);
      continue;
    }
    names[n++] = p;
  }
  closedir(dp);
  if (rc == 0) {
    if (n) qsort(names, n, sizeof *names, cmp_str);
    for (uint32_t i = 0; i < n && rc == 0; i++) rc = add_file(a, names[i]);
  }
  for (uint32_t i = 0; i < n; i++) free(names[i]);
  free(names);
  return rc;
}

int fa_add_path(fa_analysis *a, const char *path)
{
  struct stat st;
  char msg[256];
  if (stat(path, &st) != 0) {
    snprintf(msg, sizeof msg, "cannot open: %s", strerror(errno));
    if (add_file_name(a, path)) return -1;
    return fa_add_problem(a, path, 0, 0, msg);
  }
  if (S_ISDIR(st.st_mode)) return add_dir(a, path);
  return add_file(a, path);
}
