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
#include "pytorch_fr.h"

/* The file every rank polls to know that a dump was requested; not a dump. */
#define TRIGGER_NAME "TRIGGER"

fa_analysis *fa_new(void)
{
  fa_analysis *a = calloc(1, sizeof *a);
  if (!a) return NULL;
  a->world_size = -1;
  a->conflict_rank = -1;
  a->verdict.comm = -1;
  a->verdict.mismatch_comm = -1;
  a->verdict.astray = -1;
  a->verdict.changed = -1;
  a->verdict.p2p_hub = a->verdict.p2p_hub_comm = -1;
  a->verdict.shifted_comm = -1;
  a->verdict.status = FA_STATUS_INCONCLUSIVE;
  return a;
}

static void free_comm(fa_comm *c)
{
  for (int32_t r = 0; c->members && r < c->size; r++) free(c->members[r].cand);
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
  free(a->note);
  for (uint32_t i = 0; i < a->nframes; i++) {
    fa_frame *f = &a->frames[i];
    free(f->name);
    frz_dump_free(&f->dump);
    free(f->idx);
    free(f->coll);
    free(f->p2p);
  }
  free(a->frames);
  free(a->settled);
  free(a->alive);
  free(a->ranks);
  fa_ranks_free(&a->ranks_missing);
  fa_ranks_free(&a->beside);
  free(a->beside_dir);
  for (uint32_t i = 0; i < a->ncomms; i++) free_comm(&a->comms[i]);
  free(a->comms);
  fa_verdict *v = &a->verdict;
  free(v->summary);
  fa_ranks_free(&v->lagging);
  fa_ranks_free(&v->unfinished);
  fa_ranks_free(&v->late);
  fa_ranks_free(&v->left_out_too);
  fa_ranks_free(&v->outside);
  fa_ranks_free(&v->late_left);
  free(v->roots);
  free(v->faults);
  free(v->obs);
  fa_ranks_free(&v->root_cause);
  fa_ranks_free(&v->ahead);
  free(v->links);
  free(v->cycle);
  free(v->shared);
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
  const frz_pt_info *pt = f->dump.pt;
  if (pt && pt->skipped_fields) {
    char msg[256];
    snprintf(msg, sizeof msg,
             "PyTorch Flight Recorder format %s is newer than 2.%d: read with the fields 2.%d has, "
             "%u newer field(s) skipped",
             pt->version, FRZ_PT_VERSION_MAX_MINOR, FRZ_PT_VERSION_MAX_MINOR, pt->skipped_fields);
    if (fa_add_problem(a, f->name, 0, 0, msg)) return -1;
  }
  return 0;
}

/* One input of fa_add_paths, in reading order: a file to decode, or a path
 * that cannot be used and its problem. */
typedef struct item {
  char *path;          /* owned */
  char *problem;       /* owned; NULL: a file to decode */
  uint8_t named;       /* goes into a->files */
  frz_status st;
  frz_dump d;
  frz_error e;
} item;

typedef struct item_list {
  item *v;
  uint32_t n, cap;
} item_list;

/* Append an item; path is copied (or taken over when own is set). */
static int push_item(item_list *l, char *path, int own, const char *problem, int named)
{
  if (fa_grow(&l->v, &l->cap, l->n + 1, sizeof *l->v)) {
    if (own) free(path);
    return -1;
  }
  item *it = &l->v[l->n];
  memset(it, 0, sizeof *it);
  it->path = own ? path : fa_strdup(path);
  it->problem = problem ? fa_strdup(problem) : NULL;
  it->named = (uint8_t)named;
  if (!it->path || (problem && !it->problem)) {
    free(it->path);
    free(it->problem);
    return -1;
  }
  l->n++;
  return 0;
}

static int cmp_str(const void *x, const void *y)
{
  return strcmp(*(char *const *)x, *(char *const *)y);
}

/* Every regular file of a directory, in name order. */
static int list_dir(item_list *l, const char *dir)
{
  DIR *dp = opendir(dir);
  if (!dp) {
    char msg[256];
    snprintf(msg, sizeof msg, "cannot open directory: %s", strerror(errno));
    return push_item(l, (char *)dir, 0, msg, 0);
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
  if (rc == 0 && n) qsort(names, n, sizeof *names, cmp_str);
  uint32_t i = 0;
  for (; i < n && rc == 0; i++) rc = push_item(l, names[i], 1, NULL, 1);
  for (; i < n; i++) free(names[i]);
  free(names);
  return rc;
}

/* The announcements in `dir` (or in the directory of the file `dir`) into
 * a->alive, each once.  Reading none is no problem. */
static int read_alive(fa_analysis *a, const char *path)
{
  struct stat st;
  char *dir = NULL;
  if (stat(path, &st) == 0 && !S_ISDIR(st.st_mode)) {
    const char *slash = strrchr(path, '/');
    dir = slash ? fa_printf("%.*s", (int)(slash - path) + (slash == path), path) : fa_printf(".");
    if (!dir) return -1;
  }
  frz_alive *v = NULL;
  size_t n = 0;
  frz_status fs = frz_alive_list(dir ? dir : path, &v, &n);
  free(dir);
  int rc = fs == FRZ_E_NOMEM ? -1 : 0;
  uint32_t cap = a->nalive;
  for (size_t i = 0; i < n && rc == 0; i++) {
    uint32_t k = 0;
    while (k < a->nalive && memcmp(&a->alive[k], &v[i], sizeof v[i]) != 0) k++;
    if (k < a->nalive) continue;
    if (fa_grow(&a->alive, &cap, a->nalive + 1, sizeof *a->alive)) rc = -1;
    else a->alive[a->nalive++] = v[i];
  }
  free(v);
  return rc;
}

/* The files a path stands for (a directory's, or itself), or its problem. */
static int list_path(item_list *l, const char *path)
{
  struct stat st;
  if (stat(path, &st) != 0) {
    char msg[256];
    snprintf(msg, sizeof msg, "cannot open: %s", strerror(errno));
    return push_item(l, (char *)path, 0, msg, 1);
  }
  if (S_ISDIR(st.st_mode)) {
    uint32_t from = l->n;
    int rc = list_dir(l, path);
    if (rc == 0 && l->n == from) {
      /* a trigger file alone: a dump was asked for and none written yet */
      char *t = fa_printf("%s/%s", path, TRIGGER_NAME);
      int trig = t && stat(t, &st) == 0;
      free(t);
      frz_alive *al = NULL;
      size_t nal = 0;
      if (frz_alive_list(path, &al, &nal) == FRZ_E_NOMEM) return -1;
      free(al);
      char msg[256];
      snprintf(msg, sizeof msg, "the directory holds no dump but the announcements of %zu running process%s "
               "(.fr-alive-*)%s", nal, nal == 1 ? "" : "es",
               trig ? " and " TRIGGER_NAME " (a dump was asked for)" : "");
      rc = push_item(l, (char *)path, 0,
                     nal ? msg
                     : trig ? "the directory holds no file but " TRIGGER_NAME
                              " (a dump was asked for; no rank has written one here)"
                            : "the directory holds no file",
                     0);
    }
    return rc;
  }
  return push_item(l, (char *)path, 0, NULL, 1);
}

/* Read and decode one file of the list (on a worker thread). */
static void decode_item(void *ctx, uint32_t i)
{
  item *it = &((item *)ctx)[i];
  if (it->problem) return;
  it->st = fa_read_dump_file(it->path, &it->d, &it->e); /* frz, or PyTorch FR (input.c) */
}

/* Into the analysis, in list order: file names, dumps and problems. */
static int take_item(fa_analysis *a, item *it)
{
  if (it->named && add_file_name(a, it->path)) return -1;
  if (it->problem) return fa_add_problem(a, it->path, 0, 0, it->problem);
  if (it->st == FRZ_E_NOMEM) return -1;
  if (it->st != FRZ_OK) {
    int has_off = it->st != FRZ_E_IO && it->st != FRZ_E_INVALID;
    return fa_add_problem(a, it->path, has_off, it->e.offset, bare_message(&it->e, it->path));
  }
  return fa_add_dump(a, &it->d, it->path);
}

static void free_items(item_list *l, uint32_t from)
{
  for (uint32_t i = from; i < l->n; i++) {
    frz_dump_free(&l->v[i].d);
    free(l->v[i].path);
    free(l->v[i].problem);
  }
  l->n = from;
}

/* Items [from, n) of l that decoded. */
static uint32_t decoded(const item_list *l, uint32_t from)
{
  uint32_t k = 0;
  for (uint32_t i = from; i < l->n; i++) k += !l->v[i].problem && l->v[i].st == FRZ_OK;
  return k;
}

/* A directory that holds no dump, but whose subdirectories do (a job's
 * output directory, its dumps in dumps/): its files (logs) are dropped and
 * those subdirectories' read instead, said in a->note.  0 when it was not
 * so, 1 when it was, -1 out of memory. */
static int look_below(fa_analysis *a, item_list *l, uint32_t from, const char *dir)
{
  struct stat st;
  if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode) || decoded(l, from)) return 0;
  DIR *dp = opendir(dir);
  if (!dp) return 0;
  char **subs = NULL;
  uint32_t n = 0, cap = 0;
  int rc = 0;
  struct dirent *de;
  while ((de = readdir(dp)) != NULL && rc == 0) {
    if (de->d_name[0] == '.') continue;
    char *p = fa_printf("%s/%s", dir, de->d_name);
    if (!p || fa_grow(&subs, &cap, n + 1, sizeof *subs)) {
      free(p);
      rc = -1;
      break;
    }
    if (stat(p, &st) == 0 && S_ISDIR(st.st_mode)) subs[n++] = p;
    else free(p);
  }
  closedir(dp);
  if (rc == 0 && n) qsort(subs, n, sizeof *subs, cmp_str);
  item_list below = {NULL, 0, 0};
  char said[512];
  size_t used = 0;
  said[0] = 0;
  for (uint32_t i = 0; i < n && rc == 0; i++) {
    uint32_t at = below.n;
    rc = list_dir(&below, subs[i]);
    if (rc == 0) fa_parallel_for(below.n - at, decode_item, below.v + at);
    if (rc == 0 && !decoded(&below, at)) free_items(&below, at);
    else if (rc == 0 && (rc = read_alive(a, subs[i])) == 0 && used < sizeof said)
      used += (size_t)snprintf(said + used, sizeof said - used, "%s%s", used ? ", " : "", subs[i]);
  }
  for (uint32_t i = 0; i < n; i++) free(subs[i]);
  free(subs);
  if (rc == 0 && below.n) {
    free_items(l, from);
    for (uint32_t i = 0; i < below.n && rc == 0; i++) {
      if (fa_grow(&l->v, &l->cap, l->n + 1, sizeof *l->v)) rc = -1;
      else l->v[l->n++] = below.v[i];
    }
    if (rc) free_items(&below, 0); /* (those not moved yet) */
    free(below.v);
    if (rc == 0) {
      char *note = fa_printf("%s%s%s holds no dump; read the dumps below it: %s", a->note ? a->note : "",
                             a->note ? "; " : "", dir, said);
      if (!note) rc = -1;
      else {
        free(a->note);
        a->note = note;
      }
    }
    return rc ? -1 : 1;
  }
  free_items(&below, 0);
  free(below.v);
  return rc;
}

/* A directory that holds no file but announcements (a job killed before
 * its timeout): the ring files they point to on this host in place of its
 * "holds no file", and where the others are.  0, or -1 out of memory. */
static int alive_rings(item_list *l, uint32_t from, const char *dir)
{
  if (l->n != from + 1 || !l->v[from].problem) return 0; /* (list_path's "holds no file") */
  char **v = NULL, *pointer = NULL;
  uint32_t n = 0;
  if (fa_alive_rings(dir, &v, &n, &pointer)) return -1;
  if (!n && !pointer) return 0;
  free_items(l, from);
  int rc = 0;
  for (uint32_t i = 0; i < n; i++)
    if (rc == 0) rc = push_item(l, v[i], 1, NULL, 1);
    else free(v[i]);
  free(v);
  if (rc == 0) fa_parallel_for(l->n - from, decode_item, l->v + from);
  if (rc == 0 && pointer) rc = push_item(l, (char *)dir, 0, pointer, 0);
  free(pointer);
  return rc;
}

int fa_add_paths(fa_analysis *a, const char *const *paths, uint32_t npaths)
{
  item_list l = {NULL, 0, 0};
  int rc = 0;
  for (uint32_t i = 0; i < npaths && rc == 0; i++) {
    uint32_t from = l.n;
    rc = list_path(&l, paths[i]);
    if (rc == 0) rc = read_alive(a, paths[i]);
    if (rc == 0) fa_parallel_for(l.n - from, decode_item, l.v + from);
    if (rc == 0 && look_below(a, &l, from, paths[i]) < 0) rc = -1;
    if (rc == 0 && !decoded(&l, from) && alive_rings(&l, from, paths[i]) < 0) rc = -1;
  }
  for (uint32_t i = 0; i < l.n; i++) {
    if (rc == 0) rc = take_item(a, &l.v[i]);
    frz_dump_free(&l.v[i].d); /* taken over by fa_add_dump, else left over */
    free(l.v[i].path);
    free(l.v[i].problem);
  }
  free(l.v);
  if (rc == 0) rc = fa_find_beside(a);
  return rc;
}

int fa_add_path(fa_analysis *a, const char *path)
{
  return fa_add_paths(a, &path, 1);
}
