/* fr-synth — write the dumps of a synthetic hung job (synth.h) for the
 * analyzer benchmarks, without running a job:
 *
 *   fr-synth [-n RANKS] [-m RECORDS] [-f lag|mismatch|cycle] [-c CULPRIT]
 *            [--tp N] [--pp N] [--pytorch | --ring] [-j THREADS] DIR
 *
 * Writes DIR/<job>-r<rank>-f0000.frz for every rank (frz_encode at the
 * recorder's default zstd level), or with --pytorch DIR/nccl_trace_rank_<rank>
 * PyTorch Flight Recorder pickles of the same job, or with --ring the ring
 * files (fr-<job>-r<rank>-p<pid>@<host>.ring) that killed recorders would
 * have left (synth_ring.c: what fr-dump --salvage reads).  Defaults: 1024 ranks,
 * 4096 records, lag, tp 8, pp 4, threads = online CPUs.  Prints one line:
 * "synth ranks=N records=R bytes=B fault=F culprit=C [partner=P] [entries=E]"
 * (E: with --pytorch, the Flight Recorder entries written; PyTorch writes
 * none for a group's start and end, which R counts).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "synth.h"

typedef struct worker {
  const synth_job *job;
  const char *dir;
  int pytorch, ring;
  atomic_int *next;        /* next rank to write */
  unsigned long long records, bytes;
  unsigned long long entries; /* with --pytorch: the Flight Recorder entries written */
  int failed;
} worker;

/* Write buf to DIR/NAME (a benchmark input: no fsync, no temp file). */
static int put(const char *dir, const char *name, const void *buf, size_t len)
{
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return -1;
  const char *p = buf;
  while (len) {
    ssize_t n = write(fd, p, len);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      close(fd);
      return -1;
    }
    p += n;
    len -= (size_t)n;
  }
  return close(fd);
}

/* Build, encode and write one rank. */
static int write_rank(worker *w, int32_t r)
{
  synth_rank sr;
  if (synth_rank_build(w->job, r, &sr)) return -1;
  char name[256];
  int rc = -1;
  if (w->ring) {
    uint64_t b = 0;
    rc = synth_write_ring(w->job, &sr, w->dir, &b);
    w->bytes += b;
  } else if (w->pytorch) {
    char path[4096];
    snprintf(path, sizeof path, "%s/nccl_trace_rank_%d", w->dir, r);
    rc = synth_write_pytorch(w->job, &sr, path);
    for (uint32_t i = 0; i < sr.nrec; i++) /* (as synth_write_pytorch: no entry for group brackets) */
      w->entries += sr.rec[i].kind == FRZ_KIND_COLL || sr.rec[i].kind == FRZ_KIND_P2P;
    struct stat st;
    if (rc == 0 && stat(path, &st) == 0) w->bytes += (unsigned long long)st.st_size;
  } else {
    void *buf = NULL;
    size_t len = 0;
    frz_error e;
    if (frz_encode(&sr.proc, sr.comms, sr.ncomms, sr.rec, sr.nrec, 0, &buf, &len, &e) != FRZ_OK) {
      fprintf(stderr, "fr-synth: rank %d: %s\n", r, e.msg);
    } else if (frz_dump_filename(name, sizeof name, sr.proc.job_id, r, sr.proc.pid, 0) < 0) {
      fprintf(stderr, "fr-synth: rank %d: file name too long\n", r);
    } else {
      rc = put(w->dir, name, buf, len);
      w->bytes += len;
    }
    free(buf);
  }
  if (rc != 0 && errno) fprintf(stderr, "fr-synth: %s: rank %d: %s\n", w->dir, r, strerror(errno));
  w->records += sr.nrec;
  synth_rank_free(&sr);
  return rc;
}

static void *run_worker(void *arg)
{
  worker *w = arg;
  for (;;) {
    int r = atomic_fetch_add(w->next, 1);
    if (r >= w->job->nranks) break;
    if (write_rank(w, r)) {
      w->failed = 1;
      break;
    }
  }
  return NULL;
}

static void usage(void)
{
  fprintf(stderr, "usage: fr-synth [-n RANKS] [-m RECORDS] [-f lag|mismatch|cycle] [-c CULPRIT]\n"
                  "                [--tp N] [--pp N] [--pytorch | --ring] [-j THREADS] DIR\n");
}

int main(int argc, char **argv)
{
  static const struct option longopts[] = {
      {"tp", required_argument, NULL, 't'}, {"pp", required_argument, NULL, 'p'},
      {"pytorch", no_argument, NULL, 'P'},  {"ring", no_argument, NULL, 'R'},
      {"help", no_argument, NULL, 'h'},
      {NULL, 0, NULL, 0}};
  long n = 1024, m = 4096, tp = 8, pp = 4, culprit = -1, threads = sysconf(_SC_NPROCESSORS_ONLN);
  int fault = SYNTH_LAG, pytorch = 0, ring = 0, c;
  while ((c = getopt_long(argc, argv, "n:m:f:c:j:h", longopts, NULL)) != -1) {
    switch (c) {
    case 'n': n = atol(optarg); break;
    case 'm': m = atol(optarg); break;
    case 'c': culprit = atol(optarg); break;
    case 'j': threads = atol(optarg); break;
    case 't': tp = atol(optarg); break;
    case 'p': pp = atol(optarg); break;
    case 'P': pytorch = 1; break;
    case 'R': ring = 1; break;
    case 'f':
      fault = synth_fault_from_name(optarg);
      if (fault < 0) {
        fprintf(stderr, "fr-synth: unknown fault '%s' (lag, mismatch, cycle)\n", optarg);
        return 2;
      }
      break;
    default: usage(); return c == 'h' ? 0 : 2;
    }
  }
  if (optind != argc - 1 || n < 1 || n > (1 << 22) || m < 1 || m > (1 << 24) || tp < 1 ||
      pp < 1 || tp > n || pp > n || (pytorch && ring)) {
    usage();
    return 2;
  }
  if (threads < 1) threads = 1;
  if (threads > 64) threads = 64;
  synth_job job;
  char err[256];
  if (synth_init(&job, (int32_t)n, (int32_t)tp, (int32_t)pp, (uint32_t)m, (synth_fault)fault,
                 (int32_t)culprit, err, sizeof err)) {
    fprintf(stderr, "fr-synth: %s\n", err);
    return 2;
  }
  const char *dir = argv[optind];
  if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
    fprintf(stderr, "fr-synth: %s: %s\n", dir, strerror(errno));
    return 1;
  }
  atomic_int next = 0;
  worker w[64];
  pthread_t th[64];
  for (long i = 0; i < threads; i++) {
    w[i] = (worker){.job = &job, .dir = dir, .pytorch = pytorch, .ring = ring, .next = &next};
    if (pthread_create(&th[i], NULL, run_worker, &w[i]) != 0) {
      fprintf(stderr, "fr-synth: cannot start a thread\n");
      return 1;
    }
  }
  unsigned long long records = 0, bytes = 0, entries = 0;
  int failed = 0;
  for (long i = 0; i < threads; i++) {
    pthread_join(th[i], NULL);
    records += w[i].records;
    entries += w[i].entries;
    bytes += w[i].bytes;
    failed |= w[i].failed;
  }
  if (failed) return 1;
  printf("synth ranks=%ld records=%llu bytes=%llu fault=%s culprit=%d", n, records, bytes,
         synth_fault_name(job.fault), job.culprit);
  if (job.partner >= 0) printf(" partner=%d", job.partner);
  if (pytorch) printf(" entries=%llu", entries);
  printf("\n");
  return 0;
}
