/* alive.c — the announcement a recording process keeps in its dump
 * directory while it runs (frz.md, "Announcements"): one text line, written
 * atomically when the process's first communicator is created, removed at a
 * clean exit.  The readers (fr-dump --trigger, fr-analyze) list them to say
 * who listens for the trigger file and which absent rank was alive. */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frz.h"

/* A character kept as is in a job id or host of an announcement. */
static int word_char_ok(char c)
{
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '_' || c == '+' || c == '-' || c == ':';
}

/* in, at most max-1 bytes, with every other character as '_'. */
static void copy_word(char *out, size_t max, const char *in)
{
  size_t n = 0;
  for (; in && in[n] && n + 1 < max; n++) out[n] = word_char_ok(in[n]) ? in[n] : '_';
  out[n] = '\0';
}

void frz_alive_job(char *out, size_t size, const char *job_id)
{
  copy_word(out, size, job_id);
}

int frz_alive_filename(char *buf, size_t size, const char *job_id, int32_t global_rank, uint32_t pid)
{
  char job[FRZ_JOB_MAX];
  copy_word(job, sizeof job, job_id);
  for (char *p = job; *p; p++)
    if (*p == ':') *p = '_';
  if (!job[0]) strcpy(job, "job");
  int len = snprintf(buf, size, FRZ_ALIVE_PREFIX "%s-r%05d-p%u", job, global_rank < 0 ? 0 : (int)global_rank,
                     pid);
  return len < 0 || (size_t)len >= size ? -1 : len;
}

int frz_alive_is_name(const char *name)
{
  return name && strncmp(name, FRZ_ALIVE_PREFIX, strlen(FRZ_ALIVE_PREFIX)) == 0;
}

int frz_alive_format(const frz_alive *a, char *buf, size_t size)
{
  char job[FRZ_JOB_MAX], host[FRZ_HOST_MAX];
  copy_word(job, sizeof job, a->job_id);
  copy_word(host, sizeof host, a->host);
  int len = snprintf(buf, size,
                     "flightrec-alive v1 job=%s rank=%" PRId32 " world=%" PRId32 " local_rank=%" PRId32
                     " pid=%" PRIu32 " time_ns=%" PRIu64 " trigger=%d host=%s\n",
                     job[0] ? job : "-", a->global_rank, a->world_size, a->local_rank, a->pid, a->time_ns,
                     a->watches_trigger ? 1 : 0, host[0] ? host : "-");
  return len < 0 || (size_t)len >= size ? -1 : len;
}

/* The value of " key=" in line (up to the next space or end), into out. */
static int field(const char *line, const char *key, char *out, size_t max)
{
  char pat[32];
  snprintf(pat, sizeof pat, " %s=", key);
  const char *p = strstr(line, pat);
  if (!p) return -1;
  p += strlen(pat);
  size_t n = 0;
  while (p[n] && p[n] != ' ' && p[n] != '\n' && n + 1 < max) {
    out[n] = p[n];
    n++;
  }
  out[n] = '\0';
  return 0;
}

/* A decimal integer field in [lo, hi]. */
static int int_field(const char *line, const char *key, int64_t lo, uint64_t hi, uint64_t *out, int neg_ok)
{
  char v[32], *end;
  if (field(line, key, v, sizeof v) != 0 || !v[0]) return -1;
  errno = 0;
  if (neg_ok && v[0] == '-') {
    long long x = strtoll(v, &end, 10);
    if (errno || *end || x < lo) return -1;
    *out = (uint64_t)x;
    return 0;
  }
  if (v[0] < '0' || v[0] > '9') return -1;
  unsigned long long x = strtoull(v, &end, 10);
  if (errno || *end || x > hi) return -1;
  *out = x;
  return 0;
}

frz_status frz_alive_parse(const char *text, size_t len, const char *name, frz_alive *out, frz_error *err)
{
  char line[FRZ_ALIVE_MAX + 1];
  memset(out, 0, sizeof *out);
  const char *what = NULL;
  if (len > FRZ_ALIVE_MAX) len = FRZ_ALIVE_MAX;
  memcpy(line, text, len);
  line[len] = '\0';
  char *nl = memchr(line, '\n', len);
  if (!nl) what = "no complete line";
  else *nl = '\0';
  uint64_t v[6];
  if (!what && strncmp(line, "flightrec-alive v1 ", 19) != 0) what = "not a flightrec announcement";
  else if (!what && (field(line, "job", out->job_id, sizeof out->job_id) ||
                     field(line, "host", out->host, sizeof out->host)))
    what = "no job or host";
  else if (!what && (int_field(line, "rank", -1, INT32_MAX, &v[0], 1) ||
                     int_field(line, "world", -1, INT32_MAX, &v[1], 1) ||
                     int_field(line, "local_rank", -1, INT32_MAX, &v[2], 1) ||
                     int_field(line, "pid", 0, UINT32_MAX, &v[3], 0) ||
                     int_field(line, "time_ns", 0, UINT64_MAX, &v[4], 0)))
    what = "a field is missing or out of range";
  if (what) {
    if (err) {
      err->status = FRZ_E_CORRUPT;
      err->offset = 0;
      snprintf(err->msg, sizeof err->msg, "%s: at byte 0: %s", name ? name : "announcement", what);
    }
    return FRZ_E_CORRUPT;
  }
  out->global_rank = (int32_t)(int64_t)v[0];
  out->world_size = (int32_t)(int64_t)v[1];
  out->local_rank = (int32_t)(int64_t)v[2];
  out->pid = (uint32_t)v[3];
  out->time_ns = v[4];
  out->watches_trigger = int_field(line, "trigger", 0, 1, &v[5], 0) == 0 ? (int32_t)v[5] : 1;
  if (!strcmp(out->job_id, "-")) out->job_id[0] = '\0';
  if (!strcmp(out->host, "-")) out->host[0] = '\0';
  return FRZ_OK;
}

/* Order: job, then rank, then the newest first. */
static int cmp_alive(const void *x, const void *y)
{
  const frz_alive *a = x, *b = y;
  int c = strcmp(a->job_id, b->job_id);
  if (c) return c;
  if (a->global_rank != b->global_rank) return a->global_rank < b->global_rank ? -1 : 1;
  return (a->time_ns < b->time_ns) - (a->time_ns > b->time_ns);
}

frz_status frz_alive_list(const char *dir, frz_alive **out, size_t *n)
{
  *out = NULL;
  *n = 0;
  DIR *d = opendir(dir);
  if (!d) return FRZ_E_IO;
  size_t cap = 0;
  struct dirent *de;
  frz_status st = FRZ_OK;
  while ((de = readdir(d)) != NULL) {
    if (!frz_alive_is_name(de->d_name)) continue;
    char path[4096], buf[FRZ_ALIVE_MAX];
    if (snprintf(path, sizeof path, "%s/%s", dir, de->d_name) >= (int)sizeof path) continue;
    FILE *f = fopen(path, "re");
    if (!f) continue; /* removed meanwhile: its process exited */
    size_t len = fread(buf, 1, sizeof buf, f);
    fclose(f);
    frz_alive a;
    if (frz_alive_parse(buf, len, path, &a, NULL) != FRZ_OK) continue;
    if (*n == cap) {
      size_t nc = cap ? cap * 2 : 16;
      frz_alive *m = realloc(*out, nc * sizeof *m);
      if (!m) {
        st = FRZ_E_NOMEM;
        break;
      }
      *out = m;
      cap = nc;
    }
    (*out)[(*n)++] = a;
  }
  closedir(d);
  if (*n > 1) qsort(*out, *n, sizeof **out, cmp_alive);
  return st;
}
