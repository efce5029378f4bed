/* salvage.c — fr-dump --salvage and --snapshot: the ring files recording
 * processes keep in FR_RING_DIR (default /dev/shm) made into ordinary
 * dumps, from outside.  --salvage takes those whose process is gone (killed,
 * torn down by a launcher, crashed); --snapshot those of processes that
 * still run (stopped, wedged in the kernel, not answering), without
 * signalling them. */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fr_dump.h"
#include "frz_ring.h"

const char *fd_ring_dir(void)
{
  const char *d = getenv("FR_RING_DIR");
  return d && *d && strcmp(d, "none") && strcmp(d, "off") && strcmp(d, "0") ? d : "/dev/shm";
}

/* The ring files a path stands for: itself, or a directory's ring files
 * (by name), sorted.  NULL with *n 0 when none. */
static char **ring_files(const char *path, size_t *n)
{
  struct stat st;
  char **v = NULL;
  *n = 0;
  if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode)) {
    v = malloc(sizeof *v);
    if (v && (v[0] = strdup(path))) *n = 1;
    return v;
  }
  char **all = NULL;
  size_t na = 0;
  if (fd_list_dir(path, &all, &na) != 0) return NULL;
  for (size_t i = 0; i < na; i++) {
    const char *base = strrchr(all[i], '/');
    base = base ? base + 1 : all[i];
    if (frz_ring_is_name(base)) {
      char **nv = realloc(v, (*n + 1) * sizeof *nv);
      if (nv) {
        v = nv;
        v[(*n)++] = all[i];
        continue;
      }
    }
    free(all[i]);
  }
  free(all);
  return v;
}

/* One ring file's salvage, done by a worker, said by the main thread in
 * the files' order. */
typedef struct salvage_job {
  char *path;
  frz_status st;
  int32_t rank;
  uint32_t pid;
  char text[FRZ_TEXT_MAX];
  char written[4300];
  char msg[1100];
} salvage_job;

typedef struct salvage_pool {
  salvage_job *jobs;
  size_t n;
  atomic_size_t next;
  const char *outdir;
  int keep;
} salvage_pool;

static void *salvage_worker(void *arg)
{
  salvage_pool *pool = arg;
  for (size_t i; (i = atomic_fetch_add(&pool->next, 1)) < pool->n;) {
    salvage_job *j = &pool->jobs[i];
    frz_dump d;
    frz_error e;
    memset(&e, 0, sizeof e);
    j->st = frz_ring_salvage(j->path, pool->outdir, pool->keep, j->written, sizeof j->written, &d, &e);
    j->rank = d.process.global_rank;
    j->pid = d.process.pid;
    snprintf(j->text, sizeof j->text, "%.*s", (int)strnlen(d.process.trigger_text, FRZ_TEXT_MAX),
             d.process.trigger_text);
    snprintf(j->msg, sizeof j->msg, "%s", e.msg[0] ? e.msg : frz_status_name(j->st));
    frz_dump_free(&d);
  }
  return NULL;
}

int fd_salvage(char **args, int nargs, const char *outdir, int keep)
{
  int rc = 0, done = 0, running = 0;
  const char *dflt[1];
  if (nargs == 0) {
    dflt[0] = fd_ring_dir();
    args = (char **)dflt;
    nargs = 1;
  }
  /* every ring file first, then the salvages on every core (each file is
   * decoded, compressed and fsync'd on its own) */
  salvage_pool pool = {.outdir = outdir, .keep = keep};
  for (int a = 0; a < nargs; a++) {
    size_t n;
    char **v = ring_files(args[a], &n);
    salvage_job *nj = n ? realloc(pool.jobs, (pool.n + n) * sizeof *nj) : pool.jobs;
    if (!nj) {
      fputs("fr-dump: out of memory\n", stderr);
      return 2;
    }
    pool.jobs = nj;
    for (size_t i = 0; i < n; i++) pool.jobs[pool.n++] = (salvage_job){.path = v[i]};
    free(v);
    if (n == 0) {
      char sp[512];
      fprintf(stderr, "fr-dump: %s: no ring file\n", fd_sanitize(args[a], strlen(args[a]), sp, sizeof sp));
    }
  }
  long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
  size_t nth = ncpu < 1 ? 1 : ncpu > 16 ? 16 : (size_t)ncpu;
  if (nth > pool.n) nth = pool.n ? pool.n : 1;
  pthread_t th[16];
  size_t started = 0;
  for (; started + 1 < nth; started++)
    if (pthread_create(&th[started], NULL, salvage_worker, &pool) != 0) break;
  salvage_worker(&pool);
  for (size_t t = 0; t < started; t++) pthread_join(th[t], NULL);
  for (size_t i = 0; i < pool.n; i++) {
    salvage_job *j = &pool.jobs[i];
    char sp[512], m[1100], w[512];
    fd_sanitize(j->path, strlen(j->path), sp, sizeof sp);
    if (j->st == FRZ_OK) {
      printf("fr-dump: rank %d (pid %u): %s -> %s\n", j->rank, j->pid,
             fd_sanitize(j->text, strlen(j->text), m, sizeof m),
             fd_sanitize(j->written, strlen(j->written), w, sizeof w));
      done++;
    } else if (j->st == FRZ_E_INVALID && j->pid) {
      printf("fr-dump: %s: pid %u still runs: left as it is (fr-dump --snapshot reads it)\n", sp, j->pid);
      running++;
    } else {
      fprintf(stderr, "fr-dump: %s\n", fd_sanitize(j->msg, strlen(j->msg), m, sizeof m));
      rc = 2;
    }
    free(j->path);
  }
  free(pool.jobs);
  if (!done && !running && rc == 0) rc = 1;
  return rc;
}

/* The ring file of process `pid` in the ring directory, into buf. */
static int ring_of_pid(unsigned pid, char *buf, size_t len)
{
  size_t n;
  char **v = ring_files(fd_ring_dir(), &n);
  char pat[32];
  snprintf(pat, sizeof pat, "-p%u@", pid);
  int found = -1;
  for (size_t i = 0; i < n; i++) {
    if (found < 0 && strstr(v[i], pat)) {
      snprintf(buf, len, "%s", v[i]);
      found = 0;
    }
    free(v[i]);
  }
  free(v);
  return found;
}

int fd_snapshot(const char *what, const char *outdir, char *written, size_t wlen)
{
  char path[4200], sp[512], m[1100];
  char *end;
  unsigned long pid = strtoul(what, &end, 10);
  if (*what && !*end) {
    if (ring_of_pid((unsigned)pid, path, sizeof path) != 0) {
      fprintf(stderr, "fr-dump: no ring file of pid %lu in %s (FR_RING_DIR)\n", pid, fd_ring_dir());
      return 1;
    }
  } else {
    snprintf(path, sizeof path, "%s", what);
  }
  frz_dump d;
  frz_ring_info info;
  frz_error e;
  int gone = 0;
  memset(&e, 0, sizeof e);
  fd_sanitize(path, strlen(path), sp, sizeof sp);
  if (frz_ring_read_file(path, &d, &info, &gone, &e) != FRZ_OK) {
    const char *msg = e.msg[0] ? e.msg : frz_status_name(e.status);
    fprintf(stderr, "fr-dump: %s\n", fd_sanitize(msg, strlen(msg), m, sizeof m));
    return 2;
  }
  const char *dir = outdir ? outdir : info.dump_dir;
  char name[256];
  void *buf = NULL;
  size_t len = 0;
  int rc = 2;
  const frz_process *p = &d.process;
  if (frz_dump_filename(name, sizeof name, p->job_id[0] ? p->job_id : "job", p->global_rank, p->pid,
                        p->frame) >= 0 &&
      frz_encode(p, d.comms, d.ncomms, d.records, d.nrecords, 3, &buf, &len, &e) == FRZ_OK) {
    (void)mkdir(dir, 0700);
    if (frz_write_file_atomic(dir, name, buf, len, &e) == FRZ_OK) {
      snprintf(written, wlen, "%s/%s", dir, name);
      printf("fr-dump: rank %d (pid %u): %s -> %s\n", p->global_rank, p->pid,
             fd_sanitize(p->trigger_text, strnlen(p->trigger_text, FRZ_TEXT_MAX), m, sizeof m),
             fd_sanitize(written, strlen(written), sp, sizeof sp));
      rc = 0;
    }
  }
  if (rc) {
    const char *msg = e.msg[0] ? e.msg : "cannot write the dump";
    fprintf(stderr, "fr-dump: %s\n", fd_sanitize(msg, strlen(msg), m, sizeof m));
  }
  free(buf);
  frz_dump_free(&d);
  return rc;
}

int fd_snapshot_stuck(const char *dumpdir)
{
  char *real = realpath(dumpdir, NULL);
  size_t n;
  char **v = ring_files(fd_ring_dir(), &n);
  int k = 0;
  for (size_t i = 0; i < n; i++) {
    frz_dump d;
    frz_ring_info info;
    frz_error e;
    int gone = 1;
    if (real && frz_ring_read_file(v[i], &d, &info, &gone, &e) == FRZ_OK) {
      unsigned pid = d.process.pid;
      int mine = strcmp(info.dump_dir, real) == 0;
      frz_dump_free(&d);
      char w[4300];
      if (mine && !gone && frz_ring_watchdog_stuck(pid) && fd_snapshot(v[i], dumpdir, w, sizeof w) == 0) k++;
    }
    free(v[i]);
  }
  free(v);
  free(real);
  return k;
}
