/* fr-bench-dump — time the recorder's dump of a full ring, for `make bench`.
 *
 *   fr-bench-dump DUMPDIR NOPS NDUMPS
 *
 * Runs the benchmark job (bench.c: three communicators, collectives and
 * grouped p2p calls of a training step, varied compute gaps between calls)
 * for NOPS recorded calls, so the ring (FR_BUFFER_ENTRIES) is full, waits for
 * the streams and for the watchdog to stamp completions, then NDUMPS times
 * sends itself the dump signal (SIGUSR2; the first dump is frame 0, the next
 * ones further frames of the same trigger: set FR_MAX_FRAMES >= NDUMPS and a
 * long FR_FRAME_INTERVAL_SEC) and measures the time from the signal to the
 * dump file's rename into DUMPDIR (inotify), which covers waking the
 * watchdog, the completion scan, the ring snapshot, compression, writing,
 * fsync and rename.  Each file is read back to count its records.  Prints
 * one line per dump, "dump ms=T bytes=B records=N", and
 * "dumps ms_med=T ms_min=T ms_max=T bytes_per_record=X records=N".
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "bench.h"
#include "frz.h"

int main(int argc, char **argv)
{
  setvbuf(stdout, NULL, _IOLBF, 0);
  if (argc != 4) {
    fprintf(stderr, "usage: fr-bench-dump DUMPDIR NOPS NDUMPS\n");
    return 2;
  }
  const char *dir = argv[1];
  long nops = atol(argv[2]);
  int ndumps = atoi(argv[3]);
  if (nops < 1 || ndumps < 1 || ndumps > 100) {
    fprintf(stderr, "fr-bench-dump: bad NOPS or NDUMPS\n");
    return 2;
  }
  if (!bench_recorder_present()) {
    fprintf(stderr, "fr-bench-dump: librecorder.so is not preloaded\n");
    return 2;
  }
  struct bench_job j;
  if (bench_job_init(&j, 2026) != 0)
    return 1;
  bench_job_run(&j, (uint64_t)nops, 1);
  bench_job_sync(&j);
  struct timespec settle = {0, 300000000}; /* > FR_POLL_MS: completions stamped */
  nanosleep(&settle, NULL);

  double *ms = calloc((size_t)ndumps, sizeof *ms);
  if (!ms)
    return 1;
  long long bytes = 0;
  unsigned long long records = 0;
  for (int k = 0; k < ndumps; k++) {
    char name[256], path[4096];
    uint64_t ns;
    if (bench_dump_and_wait(dir, 60000, name, sizeof name, &ns) != 0)
      return 1;
    ms[k] = (double)ns / 1e6;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    struct stat sb;
    frz_dump d;
    frz_error err;
    if (stat(path, &sb) != 0 || frz_read_file(path, &d, &err) != FRZ_OK) {
      fprintf(stderr, "fr-bench-dump: cannot read %s back\n", path);
      return 1;
    }
    bytes = (long long)sb.st_size;
    records = (unsigned long long)d.nrecords;
    frz_dump_free(&d);
    printf("dump ms=%.3f bytes=%lld records=%llu file=%s\n", ms[k], bytes, records, name);
  }
  double mn = bench_min(ms, ndumps), mx = ms[0];
  for (int k = 1; k < ndumps; k++)
    if (ms[k] > mx)
      mx = ms[k];
  printf("dumps ms_med=%.3f ms_min=%.3f ms_max=%.3f bytes=%lld bytes_per_record=%.2f records=%llu\n",
         bench_median(ms, ndumps), mn, mx, bytes, records ? (double)bytes / (double)records : 0.0,
         records);
  free(ms);
  bench_job_fini(&j);
  return 0;
}
