/* recorder_probe.c — helpers of the tests that run with the recorder
 * preloaded (recorder_probe.h). */
#include <check.h>
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "recorder_probe.h"

const char *dump_dir;
CUstream stream;


/* A 1-rank communicator of its own. */
ncclComm_t one_rank_comm(void) {
  ncclUniqueId id;
  ncclComm_t c = NULL;
  ck_assert_int_eq(ncclGetUniqueId(&id), ncclSuccess);
  ck_assert_int_eq(ncclCommInitRank(&c, 1, id, 0), ncclSuccess);
  ck_assert_ptr_nonnull(c);
  return c;
}

/* Highest frame number among this process's dumps in dump_dir (those of
 * its $RANK: other processes may dump there too); -1 when none. */
int newest_frame(char *path, size_t len) {
  DIR *d = opendir(dump_dir);
  int best = -1;
  char mine[32];
  snprintf(mine, sizeof mine, "-r%05d-f", getenv("RANK") ? atoi(getenv("RANK")) : 0);
  if (!d) return -1;
  struct dirent *e;
  while ((e = readdir(d))) {
    const char *f = strstr(e->d_name, mine);
    int frame;
    if (e->d_name[0] == '.' || !f || !strstr(e->d_name, ".frz")) continue;
    f += strlen(mine) - 2;
    if (sscanf(f, "-f%d.frz", &frame) == 1 && frame > best) {
      best = frame;
      snprintf(path, len, "%s/%s", dump_dir, e->d_name);
    }
  }
  closedir(d);
  return best;
}

/* The dump that answers a request must have begun after it.  The recorder
 * writes one dump at a time: one already being written when we asked
 * (a frame of an earlier trigger, or another test's request) lands first,
 * with frame before+1 and records from before the request; the dump after
 * it began after the request.  So ask, and ask again whenever a frame lands
 * short of before+2 (a request pending already is joined, not doubled). */
int request_dump(frz_dump *out, char *why, size_t whylen) {
  char path[1024] = "";
  if (cuStreamSynchronize(stream) != CUDA_SUCCESS) {
    snprintf(why, whylen, "cuStreamSynchronize failed");
    return -1;
  }
  struct timespec settle = {0, 60 * 1000 * 1000}; /* a few watchdog polls: events seen */
  nanosleep(&settle, NULL);
  int before = newest_frame(path, sizeof path);
  raise(SIGUSR2);
  int now = before, seen = before;
  for (int i = 0; i < 1000 && now < before + 2; i++) {
    struct timespec t = {0, 10 * 1000 * 1000};
    nanosleep(&t, NULL);
    now = newest_frame(path, sizeof path);
    /* again when a frame landed, and each second: a request that came while
     * an earlier dump was being written joins that one, which may fail */
    if (now < before + 2 && (now != seen || i % 100 == 99)) raise(SIGUSR2);
    seen = now;
  }
  if (now < before + 2) {
    snprintf(why, whylen, "no new dump in %s", dump_dir);
    return -1;
  }
  frz_error err;
  if (frz_read_file(path, out, &err) != FRZ_OK) {
    snprintf(why, whylen, "%s", err.msg);
    return -1;
  }
  return 0;
}

void dump_now(frz_dump *out) {
  char why[512];
  ck_assert_msg(request_dump(out, why, sizeof why) == 0, "%s", why);
}

const frz_comm *comm_in(const frz_dump *d, uint64_t id) {
  for (uint32_t i = 0; i < d->ncomms; i++)
    if (d->comms[i].comm_id == id) return &d->comms[i];
  return NULL;
}

/* The comm entry of handle `c` in dump `d`. */
const frz_comm *comm_of(const frz_dump *d, ncclComm_t c) {
  for (uint32_t i = d->ncomms; i-- > 0;) /* newest first: handles are reused */
    if (d->comms[i].handle == (uint64_t)(uintptr_t)c) return &d->comms[i];
  return NULL;
}

/* The records of comm `id`, in order, into out[]; returns how many. */
uint32_t records_of(const frz_dump *d, uint64_t id, const frz_record **out, uint32_t max) {
  uint32_t n = 0;
  for (uint64_t i = 0; i < d->nrecords && n < max; i++)
    if (d->records[i].comm_id == id) out[n++] = &d->records[i];
  return n;
}

long vm_hwm_kb(void) {
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  long kb = 0;
  if (!f) return 0;
  while (fgets(line, sizeof line, f))
    if (sscanf(line, "VmHWM: %ld kB", &kb) == 1) break;
  fclose(f);
  return kb;
}
