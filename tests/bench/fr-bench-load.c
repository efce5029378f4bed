/* fr-bench-load — time the analyzer's load phase alone (read, decompress
 * and decode every dump of a directory into the analysis: fa_add_paths), for
 * `make bench-analyze`:
 *
 *   fr-bench-load DIR [REPS]
 *   fr-bench-load --zstd DIR [REPS]
 *
 * Each repetition loads DIR into a fresh analysis and frees it.  Prints
 * "load files=F records=R bytes=B threads=T wall_s_med=W wall_s_min=W
 * cpu_s_med=C rec_per_s=X rec_per_cpu_s=Y", where rec_per_s is R over the
 * median wall time and rec_per_cpu_s R over the median CPU time of the
 * process (all threads: the rate per core).  Exits 1 when a file could not
 * be used.
 *
 * With --zstd, only zstd: every file of DIR is read into memory first, then
 * each repetition decompresses their RECORDS sections (located through the
 * section table, formats/frz.md) into one reused buffer on one thread —
 * the most any decoder of the format could do here.  Prints "zstd ..."
 * with the same fields.
 *
 * With --keep=B (B in 8..120, a multiple of 8), what a decoder that keeps
 * only B bytes of each record would cost: each RECORDS section is
 * decompressed in 64 KiB pieces into one reused buffer (ZSTD_decompressStream)
 * and the first B bytes of every record are copied into fresh memory, one
 * array per file, kept until the repetition ends — as the real load keeps
 * its records.  Run it with REPS 1 in a fresh process beside --zstd and the
 * load: a repetition after the first reuses the memory the one before freed.
 * Prints "keepB ..." with the same fields.
 */
#include "config.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <zstd.h>

#include "analyze.h"

static double now(clockid_t c)
{
  struct timespec ts;
  clock_gettime(c, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_d(const void *x, const void *y)
{
  double a = *(const double *)x, b = *(const double *)y;
  return (a > b) - (a < b);
}

/* Print the result line: WHAT files=... from the repetitions' times. */
static void report(const char *what, uint32_t files, unsigned long long records,
                   unsigned long long bytes, const char *threads, double *wall, double *cpu,
                   int reps)
{
  double wmin = wall[0];
  for (int k = 1; k < reps; k++)
    if (wall[k] < wmin) wmin = wall[k];
  qsort(wall, (size_t)reps, sizeof *wall, cmp_d);
  qsort(cpu, (size_t)reps, sizeof *cpu, cmp_d);
  double wmed = wall[reps / 2], cmed = cpu[reps / 2];
  printf("%s files=%u records=%llu bytes=%llu threads=%s wall_s_med=%.3f wall_s_min=%.3f "
         "cpu_s_med=%.3f rec_per_s=%.0f rec_per_cpu_s=%.0f\n",
         what, files, records, bytes, threads, wmed, wmin, cmed,
         wmed > 0 ? (double)records / wmed : 0, cmed > 0 ? (double)records / cmed : 0);
}

/* Little-endian fields of the file header and section table. */
static uint64_t le(const uint8_t *p, int n)
{
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; i--) v = v << 8 | p[i];
  return v;
}

typedef struct image {
  uint8_t *buf;
  size_t len;
} image;

/* Every regular file of dir, read into memory. */
static image *read_all(const char *dir, uint32_t *n)
{
  DIR *dp = opendir(dir);
  if (!dp) return NULL;
  image *v = NULL;
  uint32_t cap = 0;
  *n = 0;
  struct dirent *de;
  while ((de = readdir(dp)) != NULL) {
    if (de->d_name[0] == '.') continue;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
    FILE *f = fopen(path, "rb");
    struct stat st;
    if (!f || fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
      if (f) fclose(f);
      continue;
    }
    if (*n == cap) {
      cap = cap ? 2 * cap : 1024;
      v = realloc(v, cap * sizeof *v);
      if (!v) exit(2);
    }
    image *im = &v[(*n)++];
    im->len = (size_t)st.st_size;
    im->buf = malloc(im->len ? im->len : 1);
    if (!im->buf || fread(im->buf, 1, im->len, f) != im->len) exit(2);
    fclose(f);
  }
  closedir(dp);
  return v;
}

/* The RECORDS section of one file image (the section table: formats/frz.md):
 * its frame at *frame, *stored bytes, *raw decompressed, *count records.
 * Returns 1 when found, 0 when the file has none, -1 on a bad file. */
static int records_section(const image *im, const uint8_t **frame, size_t *stored, size_t *raw,
                           uint64_t *count)
{
  const uint8_t *p = im->buf;
  if (im->len < 32) return -1;
  uint64_t hs = le(p + 12, 4), ns = le(p + 16, 4), es = le(p + 20, 4);
  if (hs + ns * es > im->len) return -1;
  for (uint64_t k = 0; k < ns; k++) {
    const uint8_t *e = p + hs + k * es;
    if (le(e, 4) != FRZ_SEC_RECORDS) continue;
    uint64_t off = le(e + 8, 8), st = le(e + 16, 8);
    if (off > im->len || st > im->len - off) return -1;
    *frame = p + off;
    *stored = (size_t)st;
    *raw = (size_t)le(e + 24, 8);
    *count = le(e + 32, 8);
    return 1;
  }
  return 0;
}

/* Decompress every RECORDS section; the records seen, or -1 on a bad file. */
static long long inflate_all(const image *v, uint32_t n, ZSTD_DCtx *dc, uint8_t **dst, size_t *cap)
{
  long long records = 0;
  for (uint32_t i = 0; i < n; i++) {
    const uint8_t *frame;
    size_t stored, raw;
    uint64_t count;
    int has = records_section(&v[i], &frame, &stored, &raw, &count);
    if (has < 0) return -1;
    if (!has) continue;
    if (raw > *cap) {
      free(*dst);
      *cap = raw;
      *dst = malloc(*cap);
      if (!*dst) exit(2);
    }
    size_t got = ZSTD_decompressDCtx(dc, *dst, raw, frame, stored);
    if (ZSTD_isError(got) || got != raw) return -1;
    records += (long long)count;
  }
  return records;
}

/* --keep=B: decompress each RECORDS frame in pieces through a 64 KiB buffer
 * and keep B bytes of each record in fresh memory; the records, or -1. */
static long long keep_all(const image *v, uint32_t n, ZSTD_DCtx *dc, size_t keep, uint8_t **kept)
{
  enum { PIECE = 65536 - 65536 % sizeof(frz_record) };
  static uint8_t buf[PIECE];
  long long records = 0;
  for (uint32_t i = 0; i < n; i++) {
    const uint8_t *frame;
    size_t stored, raw;
    uint64_t count;
    kept[i] = NULL;
    int has = records_section(&v[i], &frame, &stored, &raw, &count);
    if (has < 0) return -1;
    if (!has) continue;
    uint8_t *out = malloc(count * keep + 1);
    if (!out) exit(2);
    kept[i] = out;
    ZSTD_DCtx_reset(dc, ZSTD_reset_session_only);
    ZSTD_inBuffer in = {frame, stored, 0};
    uint64_t done = 0;
    while (done < count) {
      ZSTD_outBuffer o = {buf, PIECE, 0};
      size_t r = ZSTD_decompressStream(dc, &o, &in);
      if (ZSTD_isError(r) || o.pos % sizeof(frz_record) || (o.pos == 0 && r == 0)) return -1;
      for (size_t at = 0; at < o.pos && done < count; at += sizeof(frz_record), done++)
        memcpy(out + done * keep, buf + at, keep);
    }
    records += (long long)count;
  }
  return records;
}

/* --zstd: zstd's speed on the RECORDS frames of dir. */
static int zstd_only(const char *dir, int reps, size_t keep)
{
  uint32_t n = 0;
  image *v = read_all(dir, &n);
  if (!v) {
    fprintf(stderr, "fr-bench-load: %s: cannot read\n", dir);
    return 1;
  }
  ZSTD_DCtx *dc = ZSTD_createDCtx();
  uint8_t *dst = NULL;
  size_t cap = 0;
  double wall[100], cpu[100];
  long long records = 0;
  unsigned long long bytes = 0;
  for (uint32_t i = 0; i < n; i++) bytes += v[i].len;
  for (int k = 0; k < reps; k++) {
    double w0 = now(CLOCK_MONOTONIC), c0 = now(CLOCK_PROCESS_CPUTIME_ID);
    uint8_t **kept = keep ? calloc(n ? n : 1, sizeof *kept) : NULL;
    if (keep && !kept) exit(2);
    records = keep ? keep_all(v, n, dc, keep, kept) : inflate_all(v, n, dc, &dst, &cap);
    wall[k] = now(CLOCK_MONOTONIC) - w0;
    cpu[k] = now(CLOCK_PROCESS_CPUTIME_ID) - c0;
    if (records < 0) {
      fprintf(stderr, "fr-bench-load: %s: a file that is not a frz dump\n", dir);
      return 1;
    }
    for (uint32_t i = 0; keep && i < n; i++) free(kept[i]);
    free(kept);
  }
  char what[16];
  snprintf(what, sizeof what, keep ? "keep%zu" : "zstd", keep);
  report(what, n, (unsigned long long)records, bytes, "1", wall, cpu, reps);
  for (uint32_t i = 0; i < n; i++) free(v[i].buf);
  free(v);
  free(dst);
  ZSTD_freeDCtx(dc);
  return 0;
}

int main(int argc, char **argv)
{
  size_t keep = 0;
  int zstd = argc > 1 && strcmp(argv[1], "--zstd") == 0;
  if (argc > 1 && strncmp(argv[1], "--keep=", 7) == 0) {
    keep = (size_t)atoi(argv[1] + 7);
    if (keep < 8 || keep > sizeof(frz_record) || keep % 8) {
      fprintf(stderr, "fr-bench-load: --keep=B: B is 8..%zu, a multiple of 8\n", sizeof(frz_record));
      return 2;
    }
    zstd = 1;
  }
  if (zstd) {
    argv++;
    argc--;
  }
  if (argc < 2 || argc > 3) {
    fprintf(stderr, "usage: fr-bench-load [--zstd | --keep=B] DIR [REPS]\n");
    return 2;
  }
  int reps = argc == 3 ? atoi(argv[2]) : 3;
  if (reps < 1 || reps > 100) reps = 3;
  if (zstd) return zstd_only(argv[1], reps, keep);
  double wall[100], cpu[100];
  unsigned long long records = 0, bytes = 0;
  uint32_t files = 0;
  for (int k = 0; k < reps; k++) {
    fa_analysis *a = fa_new();
    if (!a) return 2;
    const char *path = argv[1];
    double w0 = now(CLOCK_MONOTONIC), c0 = now(CLOCK_PROCESS_CPUTIME_ID);
    if (fa_add_paths(a, &path, 1)) {
      fprintf(stderr, "fr-bench-load: out of memory\n");
      return 2;
    }
    wall[k] = now(CLOCK_MONOTONIC) - w0;
    cpu[k] = now(CLOCK_PROCESS_CPUTIME_ID) - c0;
    if (a->nproblems) {
      fprintf(stderr, "fr-bench-load: %s: %s\n", a->problems[0].file ? a->problems[0].file : "",
              a->problems[0].message);
      return 1;
    }
    records = bytes = 0;
    files = a->nframes;
    for (uint32_t i = 0; i < a->nframes; i++) {
      records += a->frames[i].dump.nrecords;
      struct stat st;
      if (stat(a->frames[i].name, &st) == 0) bytes += (unsigned long long)st.st_size;
    }
    fa_free(a);
  }
  const char *th = getenv("FR_ANALYZE_THREADS");
  report("load", files, records, bytes, th && *th ? th : "auto", wall, cpu, reps);
  return 0;
}
