/* given.c — the dumps of the run that lie beside the inputs but were not
 * given (fa_analysis.beside): one file of a complete run analysed alone
 * must say that the other ranks' files are outside the inputs, not that
 * those ranks left no dump.
 *
 * Files are matched by name only (nothing else is read): a file of the
 * directory of an analysed dump, not analysed, whose name has the same
 * shape (every run of digits alike) and, for flightrec's names
 * "<job>-r<rank>-f<frame>.frz" (frz.md), the same job.  Its rank is the
 * one its name carries (flightrec's r<rank>; otherwise its last number, as
 * PyTorch's "<prefix><rank>" names). */
#include "config.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "internal.h"
#include "summary.h"

/* The name with every run of digits made one '#', into buf. */
static void shape(const char *name, char *buf, size_t len)
{
  size_t n = 0;
  for (const char *p = name; *p && n + 1 < len; p++) {
    if (*p >= '0' && *p <= '9') {
      if (n == 0 || buf[n - 1] != '#') buf[n++] = '#';
    } else {
      buf[n++] = *p;
    }
  }
  buf[n] = '\0';
}

/* The job part of a flightrec dump name ("<job>-r00005-f0000.frz": its
 * length), or -1 when the name is not one. */
static int frz_job_len(const char *name)
{
  size_t n = strlen(name);
  if (n < 4 || strcmp(name + n - 4, ".frz") != 0) return -1;
  const char *r = NULL;
  for (const char *p = name; (p = strstr(p, "-r")) != NULL; p++) r = p;
  return r ? (int)(r - name) : -1;
}

/* The rank a dump's file name carries, or -1. */
static int32_t name_rank(const char *name)
{
  int jl = frz_job_len(name);
  if (jl >= 0) return (int32_t)strtol(name + jl + 2, NULL, 10);
  const char *last = NULL;
  for (const char *p = name; *p; p++)
    if (*p >= '0' && *p <= '9' && (p == name || p[-1] < '0' || p[-1] > '9')) last = p;
  if (!last) return -1;
  long v = strtol(last, NULL, 10);
  return v >= 0 && v <= INT32_MAX ? (int32_t)v : -1;
}

/* Is `name` (in directory dir) among the analysed files? */
static int analysed(const fa_analysis *a, const char *dir, const char *name)
{
  size_t dl = strlen(dir);
  for (uint32_t i = 0; i < a->nfiles; i++) {
    const char *f = a->files[i], *slash = strrchr(f, '/');
    const char *base = slash ? slash + 1 : f;
    size_t fl = slash ? (size_t)(slash - f) : 0;
    if (strcmp(base, name) != 0) continue;
    if (!slash ? (dl == 1 && dir[0] == '.') : (fl == dl && !strncmp(f, dir, dl))) return 1;
  }
  return 0;
}


/* The beside files of one analysed dump's directory into a->beside. */
static int scan(fa_analysis *a, const fa_ranks *have, const char *dir, const char *like, uint32_t *cap)
{
  char want[512], got[512];
  shape(like, want, sizeof want);
  int jl = frz_job_len(like);
  DIR *dp = opendir(dir);
  if (!dp) return 0;
  int rc = 0, any = 0;
  struct dirent *de;
  while ((de = readdir(dp)) != NULL && rc == 0) {
    const char *nm = de->d_name;
    if (nm[0] == '.' || !strcmp(nm, "TRIGGER")) continue;
    shape(nm, got, sizeof got);
    if (strcmp(got, want) != 0) continue;
    if (jl >= 0 && (frz_job_len(nm) != jl || strncmp(nm, like, (size_t)jl) != 0)) continue;
    int32_t g = name_rank(nm);
    if (g < 0 || fa_ranks_has(have, g) || fa_ranks_has(&a->beside, g) || analysed(a, dir, nm)) continue;
    char *p = fa_printf("%s/%s", dir, nm);
    struct stat st;
    int reg = p && stat(p, &st) == 0 && S_ISREG(st.st_mode);
    free(p);
    if (!reg) continue;
    rc = fa_ranks_push(&a->beside, cap, g);
    if (rc == 0) fa_ranks_sort(&a->beside); /* (kept sorted for fa_ranks_has) */
    any = 1;
  }
  closedir(dp);
  if (rc == 0 && any && !a->beside_dir && !(a->beside_dir = fa_strdup(dir))) rc = -1;
  return rc;
}

int fa_find_beside(fa_analysis *a)
{
  fa_ranks_free(&a->beside);
  free(a->beside_dir);
  a->beside_dir = NULL;
  uint32_t cap = 0, hcap = 0;
  char *seen = NULL; /* the last directory scanned */
  int rc = 0;
  fa_ranks have = {NULL, 0}; /* the global ranks of the dumps read */
  for (uint32_t i = 0; i < a->nframes && rc == 0; i++)
    rc = fa_ranks_push(&have, &hcap, a->frames[i].dump.process.global_rank);
  fa_ranks_sort(&have);
  for (uint32_t i = 0; i < a->nframes && rc == 0; i++) {
    const char *f = a->frames[i].name, *slash = f ? strrchr(f, '/') : NULL;
    if (!f) continue;
    char *dir = slash ? fa_printf("%.*s", (int)(slash - f) + (slash == f), f) : fa_strdup(".");
    if (!dir) {
      rc = -1;
      break;
    }
    if (!seen || strcmp(seen, dir) != 0) rc = scan(a, &have, dir, slash ? slash + 1 : f, &cap);
    free(seen);
    seen = dir;
  }
  free(seen);
  fa_ranks_free(&have);
  return rc;
}

void say_beside(const fa_analysis *a, sbuf *b)
{
  char p[200], q[200], dir[512];
  fa_ranks rest = {NULL, 0};
  uint32_t cap = 0;
  for (uint32_t i = 0; i < a->ranks_missing.n; i++)
    if (!fa_ranks_has(&a->beside, a->ranks_missing.v[i]) && fa_ranks_push(&rest, &cap, a->ranks_missing.v[i])) {
      b->oom = 1;
      return;
    }
  sb_printf(b, "no hang among the ranks given, but %s %s outside the inputs: %s dumps lie beside "
            "them in %s, not given (analyse the whole directory)", ranks_phrase(&a->beside, p, sizeof p),
            a->beside.n == 1 ? "is" : "are", a->beside.n == 1 ? "its" : "their",
            fa_sanitize(a->beside_dir ? a->beside_dir : "?", dir, sizeof dir));
  if (rest.n) sb_printf(b, "; %s left no dump", ranks_phrase(&rest, q, sizeof q));
  fa_ranks_free(&rest);
}

void say_alive_only(const fa_analysis *a, sbuf *b)
{
  char h[FRZ_HOST_MAX * 4];
  sb_printf(b, "no dump: only the announcements of %u running process%s, none of which has "
            "dumped here (killed before a dump, or still running):", a->nalive, a->nalive == 1 ? "" : "es");
  for (uint32_t i = 0; i < a->nalive && i < 4; i++)
    sb_printf(b, "%s rank %d as pid %u on host %s", i ? "," : "", a->alive[i].global_rank, a->alive[i].pid,
              fa_sanitize(a->alive[i].host[0] ? a->alive[i].host : "?", h, sizeof h));
  if (a->nalive > 4) sb_printf(b, ", and %u more (input, below)", a->nalive - 4);
  sb_printf(b, "; a dump of each rank would tell why: fr-dump --trigger DIR while the job runs, or "
            "FR_DUMP_DIR pointed here on the next run");
}
