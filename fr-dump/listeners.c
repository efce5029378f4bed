/* listeners.c — who watches a dump directory: the announcements the
 * recording processes keep there (frz.md, "Announcements"), summed up in one
 * sentence for fr-dump --trigger. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fr_dump.h"

/* Is the process of announcement `a` gone?  Known only on this host: 1 gone,
 * 0 running or unknown. */
static int gone_here(const frz_alive *a, const char *here)
{
  if (!a->host[0] || strcmp(a->host, here) != 0 || a->pid == 0) return 0;
  return kill((pid_t)a->pid, 0) != 0 && errno == ESRCH;
}

static int cmp_str(const void *x, const void *y) { return strcmp(*(const char *const *)x, *(const char *const *)y); }

/* Ranks (sorted) as fr-analyze writes them, "0-3,5,7-8", into out. */
static void rank_ranges(const int32_t *r, size_t n, char *out, size_t len)
{
  size_t o = 0;
  out[0] = '\0';
  for (size_t i = 0; i < n && o + 24 < len;) {
    size_t j = i;
    while (j + 1 < n && r[j + 1] == r[j] + 1) j++;
    o += (size_t)snprintf(out + o, len - o, "%s%d", i ? "," : "", (int)r[i]);
    if (j > i) o += (size_t)snprintf(out + o, len - o, "-%d", (int)r[j]);
    i = j + 1;
  }
  if (o + 24 >= len) snprintf(out + (o < len - 5 ? o : len - 5), 5, "...");
}

int fd_listeners(const char *dir, char *out, size_t len, int *all_gone)
{
  *all_gone = 0;
  frz_alive *a = NULL;
  size_t n = 0;
  char here[FRZ_HOST_MAX] = "";
  gethostname(here, sizeof here - 1);
  if (frz_alive_list(dir, &a, &n) == FRZ_E_NOMEM) n = 0;
  /* each process's liveness once (a signal 0 each, where it can be told) */
  uint8_t *dead = calloc(n ? n : 1, 1);
  const char **hostv = calloc(n ? n : 1, sizeof *hostv);
  if (!dead || !hostv) {
    free(dead);
    free(hostv);
    free(a);
    snprintf(out, len, "out of memory while reading the announcements");
    return 0;
  }
  for (size_t i = 0; i < n; i++) dead[i] = (uint8_t)gone_here(&a[i], here);
  /* the job of the newest announcement of a process that watches */
  const frz_alive *newest = NULL;
  for (size_t i = 0; i < n; i++)
    if (a[i].watches_trigger && !dead[i] && (!newest || a[i].time_ns > newest->time_ns)) newest = &a[i];
  if (!newest) {
    size_t gone = 0;
    for (size_t i = 0; i < n; i++) gone += dead[i];
    *all_gone = gone > 0;
    free(dead);
    free(hostv);
    if (gone == 1)
      snprintf(out, len, "no recorder listens: the one process that announced itself here is no longer "
               "running (killed or crashed)");
    else if (gone)
      snprintf(out, len, "no recorder listens: the %zu processes that announced themselves here are no "
               "longer running (killed or crashed)", gone);
    else if (n)
      snprintf(out, len, "no recorder listens: the processes that announced themselves here do not "
               "watch the trigger file (FR_TRIGGER_FILE=0)");
    else
      snprintf(out, len, "no recorder has announced itself in this directory: no job writes its dumps "
               "here (check the job's FR_DUMP_DIR)");
    free(a);
    return 0;
  }
  char job[FRZ_JOB_MAX];
  snprintf(job, sizeof job, "%s", newest->job_id);
  int32_t *ranks = calloc(n ? n : 1, sizeof *ranks), *gone_r = calloc(n ? n : 1, sizeof *gone_r);
  size_t ngone = 0;
  if (!ranks || !gone_r) {
    free(ranks);
    free(gone_r);
    free(dead);
    free(hostv);
    free(a);
    snprintf(out, len, "out of memory while reading the announcements");
    return 0;
  }
  size_t nr = 0, hosts = 0, other_jobs = 0, gone = 0;
  int32_t world = -1;
  for (size_t i = 0; i < n; i++) {
    const frz_alive *x = &a[i];
    if (strcmp(x->job_id, job) != 0) {
      other_jobs += i == 0 || strcmp(a[i - 1].job_id, x->job_id) != 0;
      continue;
    }
    if (!x->watches_trigger) continue;
    if (dead[i]) {
      gone++;
      if (ngone == 0 || gone_r[ngone - 1] != x->global_rank) gone_r[ngone++] = x->global_rank;
      continue;
    }
    if (x->world_size > world) world = x->world_size;
    if ((nr == 0 || ranks[nr - 1] != x->global_rank)) ranks[nr++] = x->global_rank;
    hostv[hosts++] = x->host; /* (counted distinct below) */
  }
  if (hosts > 1) { /* distinct host names: sorted, then the changes */
    qsort(hostv, hosts, sizeof *hostv, cmp_str);
    size_t d = 1;
    for (size_t i = 1; i < hosts; i++) d += strcmp(hostv[i], hostv[i - 1]) != 0;
    hosts = d;
  }
  char rr[200], extra[200] = "";
  rank_ranges(ranks, nr, rr, sizeof rr);
  size_t o = 0;
  if (ngone) {
    char gr[120];
    rank_ranges(gone_r, ngone, gr, sizeof gr);
    o += (size_t)snprintf(extra + o, sizeof extra - o, "; rank%s %s announced %s on this host but %s no longer "
                          "running", ngone == 1 ? "" : "s", gr, ngone == 1 ? "itself" : "themselves",
                          ngone == 1 ? "is" : "are");
  }
  if (other_jobs && o < sizeof extra)
    snprintf(extra + o, sizeof extra - o, "; older announcements of %zu other job%s", other_jobs,
             other_jobs == 1 ? "" : "s");
  char safe[FRZ_JOB_MAX * 4], where[300];
  fd_sanitize(job, strlen(job), safe, sizeof safe);
  snprintf(where, sizeof where, "rank%s %s, on %zu host%s", nr == 1 ? "" : "s", rr, hosts, hosts == 1 ? "" : "s");
  if (world > 0 && nr == (size_t)world)
    snprintf(out, len, "%s %d rank%s of job %s watch%s this directory (%s)%s", world == 1 ? "the" : "all",
             (int)world, world == 1 ? "" : "s", safe, world == 1 ? "es" : "", where, extra);
  else if (world > 0) {
    char miss[200] = "the others";
    int32_t *m = malloc((size_t)world * sizeof *m);
    size_t nm = 0, k = 0;
    size_t kg = 0;
    for (int32_t r = 0; m && r < world; r++) {
      while (k < nr && ranks[k] < r) k++;
      while (kg < ngone && gone_r[kg] < r) kg++;
      if ((k == nr || ranks[k] != r) && (kg == ngone || gone_r[kg] != r)) m[nm++] = r;
    }
    if (m && nm) {
      char mr[180];
      rank_ranges(m, nm, mr, sizeof mr);
      snprintf(miss, sizeof miss, "rank%s %s", nm == 1 ? "" : "s", mr);
    }
    free(m);
    if (nm)
      snprintf(out, len, "%zu of the %d ranks of job %s watch%s this directory (%s; %s %s not announced "
               "%s)%s", nr, (int)world, safe, nr == 1 ? "es" : "", where, miss, nm == 1 ? "has" : "have",
               nm == 1 ? "itself" : "themselves", extra);
    else
      snprintf(out, len, "%zu of the %d ranks of job %s watch%s this directory (%s)%s", nr, (int)world, safe,
               nr == 1 ? "es" : "", where, extra);
  }
  else
    snprintf(out, len, "%zu rank%s of job %s watch%s this directory (%s)%s", nr, nr == 1 ? "" : "s", safe,
             nr == 1 ? "es" : "", where, extra);
  free(ranks);
  free(gone_r);
  free(dead);
  free(hostv);
  free(a);
  return (int)nr;
}

int fd_listeners_below(const char *dir, char *sub, size_t len)
{
  frz_alive *a = NULL;
  size_t n = 0;
  if (frz_alive_list(dir, &a, &n) == FRZ_OK && n) { /* the directory itself is watched */
    free(a);
    return 0;
  }
  free(a);
  DIR *d = opendir(dir);
  if (!d) return 0;
  size_t best = 0;
  struct dirent *de;
  while ((de = readdir(d)) != NULL) {
    if (de->d_name[0] == '.') continue;
    char path[4096];
    struct stat st;
    if (snprintf(path, sizeof path, "%s/%s", dir, de->d_name) >= (int)sizeof path) continue;
    if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode)) continue;
    a = NULL;
    n = 0;
    if (frz_alive_list(path, &a, &n) == FRZ_OK && n > best) {
      best = n;
      snprintf(sub, len, "%s", path);
    }
    free(a);
  }
  closedir(d);
  return (int)best;
}
