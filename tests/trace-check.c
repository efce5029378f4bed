/* trace-check — check a Chrome Trace Event Format document from
 * `fr-dump --format=chrome-trace`:
 *
 *   trace-check [--timed] TRACE.json NRANKS OPNAME RANKS
 *
 * It must parse as JSON with a traceEvents array; name NRANKS processes
 * (ranks), each with at least one named track; every event must be a
 * metadata (M), complete (X), begin (B) or instant (i) event with a time;
 * the complete slices of each track must nest (no partial overlap); and the
 * unfinished slices (B without E) named OPNAME must be on exactly the ranks
 * listed in RANKS (comma-separated, e.g. 0,1,2,3,4,6,7).  --timed: the
 * slices whose times are the GPU's (args.gpu_timed) last more than zero,
 * follow each other on their track in seq order (the order one stream ran
 * them), and every rank has some.
 * Exit status: 0 ok, 1 a check failed (each failure printed), 2 bad usage
 * or unreadable input. */
#include "config.h"

#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct slice {
  double pid, tid, ts, end, seq;
  int timed;
} slice;

static int failures;

static void fail(const char *what, const char *detail)
{
  printf("trace-check: %s%s\n", what, detail ? detail : "");
  failures++;
}

static char *read_all(const char *path)
{
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  size_t cap = 1 << 16, n = 0, k;
  char *b = malloc(cap);
  while (b && (k = fread(b + n, 1, cap - n - 1, f)) > 0) {
    n += k;
    if (n + 1 < cap) continue;
    char *nb = realloc(b, cap *= 2);
    if (!nb) free(b);
    b = nb;
  }
  fclose(f);
  if (b) b[n] = '\0';
  return b;
}

static int cmp_slice(const void *x, const void *y)
{
  const slice *a = x, *b = y;
  if (a->pid != b->pid) return a->pid < b->pid ? -1 : 1;
  if (a->tid != b->tid) return a->tid < b->tid ? -1 : 1;
  if (a->ts != b->ts) return a->ts < b->ts ? -1 : 1;
  return (a->end < b->end) - (a->end > b->end); /* longer first */
}

/* Slices of one track must nest: a stack of open ends. */
static void check_nesting(slice *s, size_t n)
{
  qsort(s, n, sizeof *s, cmp_slice);
  double stack[256];
  size_t depth = 0;
  for (size_t i = 0; i < n; i++) {
    if (i && (s[i].pid != s[i - 1].pid || s[i].tid != s[i - 1].tid)) depth = 0;
    while (depth && stack[depth - 1] <= s[i].ts + 1e-9) depth--;
    if (depth && s[i].end > stack[depth - 1] + 1e-9) {
      char d[128];
      snprintf(d, sizeof d, "rank %.0f track %.0f at %.3f us", s[i].pid, s[i].tid, s[i].ts);
      fail("slices overlap without nesting: ", d);
      return;
    }
    if (depth < 256) stack[depth++] = s[i].end;
  }
}

/* --timed: GPU-timed slices non-empty, in seq order on each track (sorted by
 * check_nesting), on every one of nranks ranks. */
static void check_timed(const slice *s, size_t n, int nranks)
{
  int ranks[4096] = {0};
  double last_seq = -1, lp = -1, lt = -1;
  for (size_t i = 0; i < n; i++) {
    if (!s[i].timed) continue;
    char d[160];
    snprintf(d, sizeof d, "rank %.0f track %.0f seq %.0f at %.3f us", s[i].pid, s[i].tid, s[i].seq, s[i].ts);
    if (s[i].end <= s[i].ts) fail("a GPU-timed slice of zero length: ", d);
    if (s[i].pid == lp && s[i].tid == lt && s[i].seq <= last_seq) fail("GPU-timed slices out of seq order: ", d);
    lp = s[i].pid, lt = s[i].tid, last_seq = s[i].seq;
    if (s[i].pid >= 0 && s[i].pid < 4096) ranks[(int)s[i].pid] = 1;
  }
  for (int r = 0; r < nranks && r < 4096; r++)
    if (!ranks[r]) {
      char d[32];
      snprintf(d, sizeof d, "%d", r);
      fail("no GPU-timed slice on rank ", d);
    }
}

int main(int argc, char **argv)
{
  int timed = argc > 1 && !strcmp(argv[1], "--timed");
  if (timed) argc--, argv++;
  if (argc != 5) {
    fputs("usage: trace-check [--timed] TRACE.json NRANKS OPNAME RANKS\n", stderr);
    return 2;
  }
  char *text = read_all(argv[1]);
  cJSON *doc = text ? cJSON_Parse(text) : NULL;
  free(text);
  if (!doc) {
    fprintf(stderr, "trace-check: %s: cannot read or parse\n", argv[1]);
    return 2;
  }
  cJSON *ev = cJSON_GetObjectItemCaseSensitive(doc, "traceEvents");
  if (!cJSON_IsArray(ev)) {
    fail("no traceEvents array", NULL);
    cJSON_Delete(doc);
    return 1;
  }
  int nranks = atoi(argv[2]);
  int want[4096] = {0}, got[4096] = {0}, procs[4096] = {0}, tracks[4096] = {0};
  for (char *p = argv[4]; *p;) {
    long r = strtol(p, &p, 10);
    if (r >= 0 && r < 4096) want[r] = 1;
    if (*p == ',') p++;
    else if (*p) break;
  }
  size_t n = (size_t)cJSON_GetArraySize(ev), ns = 0;
  slice *sl = calloc(n ? n : 1, sizeof *sl);
  cJSON *e;
  cJSON_ArrayForEach(e, ev) {
    const char *ph = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "ph"));
    const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "name"));
    cJSON *pid = cJSON_GetObjectItemCaseSensitive(e, "pid"), *tid = cJSON_GetObjectItemCaseSensitive(e, "tid");
    cJSON *ts = cJSON_GetObjectItemCaseSensitive(e, "ts"), *dur = cJSON_GetObjectItemCaseSensitive(e, "dur");
    if (!ph || !name || !cJSON_IsNumber(pid) || !cJSON_IsNumber(tid)) {
      fail("event without ph, name, pid or tid", NULL);
      continue;
    }
    int rank = pid->valuedouble >= 0 && pid->valuedouble < 4096 ? (int)pid->valuedouble : -1;
    if (!strcmp(ph, "M")) {
      if (rank >= 0 && !strcmp(name, "process_name")) procs[rank] = 1;
      if (rank >= 0 && !strcmp(name, "thread_name")) tracks[rank]++;
      continue;
    }
    if (!cJSON_IsNumber(ts) || ts->valuedouble < 0) {
      fail("event without a time: ", name);
      continue;
    }
    if (!strcmp(ph, "X")) {
      if (!cJSON_IsNumber(dur) || dur->valuedouble < 0) fail("complete event without a duration: ", name);
      else {
        cJSON *args = cJSON_GetObjectItemCaseSensitive(e, "args");
        cJSON *seq = cJSON_GetObjectItemCaseSensitive(args, "seq");
        sl[ns++] = (slice){pid->valuedouble, tid->valuedouble, ts->valuedouble, ts->valuedouble + dur->valuedouble,
                           cJSON_IsNumber(seq) ? seq->valuedouble : -1,
                           cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(args, "gpu_timed"))};
      }
    } else if (!strcmp(ph, "B")) {
      if (!strcmp(name, argv[3]) && rank >= 0) got[rank]++;
    } else if (strcmp(ph, "i") != 0) {
      fail("unexpected event phase: ", ph);
    }
  }
  int nprocs = 0;
  for (int r = 0; r < 4096; r++) {
    nprocs += procs[r];
    if (procs[r] && !tracks[r]) fail("a rank without a named track", NULL);
    char d[64];
    snprintf(d, sizeof d, "%d", r);
    if (want[r] && got[r] != 1) fail("no single unfinished slice of the stuck op on rank ", d);
    if (!want[r] && got[r]) fail("an unfinished slice of the stuck op on rank ", d);
  }
  if (nprocs != nranks) {
    char d[64];
    snprintf(d, sizeof d, "%d, expected %d", nprocs, nranks);
    fail("ranks in the trace: ", d);
  }
  check_nesting(sl, ns);
  if (timed) check_timed(sl, ns, nranks);
  free(sl);
  cJSON_Delete(doc);
  return failures ? 1 : 0;
}
