/* boot.c — hands a communicator's ncclUniqueId from its maker (the rank 0
 * of an instance) to the other members through files in
 * $FR_SIM_BOOTSTRAP_DIR (created by fr-launch).  The maker writes
 * NAME.INSTANCE.id atomically (temporary file + rename); the others poll
 * for it.  A comm of one member needs no directory.  With uid=shared every
 * instance of a comm reads the id of instance 0. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "scenario.h"

#define BOOT_TIMEOUT_SEC 300

static int boot_write(const char *dir, const char *path, const ncclUniqueId *id)
{
  char tmp[PATH_MAX];
  snprintf(tmp, sizeof tmp, "%s/.id.%ld.tmp", dir, (long)getpid());
  int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0)
    return -1;
  ssize_t n = write(fd, id->internal, sizeof id->internal);
  int ok = n == (ssize_t)sizeof id->internal && fsync(fd) == 0;
  if (close(fd) != 0 || !ok || rename(tmp, path) != 0) {
    unlink(tmp);
    return -1;
  }
  return 0;
}

/* 1 when the file holds a whole id, 0 when it is not there yet. */
static int boot_read(const char *path, ncclUniqueId *id)
{
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return 0;
  ssize_t n = read(fd, id->internal, sizeof id->internal);
  close(fd);
  return n == (ssize_t)sizeof id->internal;
}

int boot_unique_id(const char *comm, int instance, int make, int local, ncclUniqueId *id)
{
  if (local)
    return ncclGetUniqueId(id) == ncclSuccess ? 0 : -1;
  const char *dir = getenv("FR_SIM_BOOTSTRAP_DIR");
  if (!dir || !*dir) {
    fprintf(stderr, "fr-scenario-job: FR_SIM_BOOTSTRAP_DIR is not set (start the ranks with fr-launch)\n");
    return -1;
  }
  char path[PATH_MAX];
  snprintf(path, sizeof path, "%s/%s.%d.id", dir, comm, instance);
  if (make) {
    if (ncclGetUniqueId(id) != ncclSuccess)
      return -1;
    if (boot_write(dir, path, id) != 0) {
      fprintf(stderr, "fr-scenario-job: cannot write %s: %s\n", path, strerror(errno));
      return -1;
    }
    return 0;
  }
  for (long waited_ms = 0; waited_ms < BOOT_TIMEOUT_SEC * 1000L;) {
    if (boot_read(path, id))
      return 0;
    long step = waited_ms < 1000 ? 5 : 50;
    struct timespec ts = { 0, step * 1000000L };
    nanosleep(&ts, NULL);
    waited_ms += step;
  }
  fprintf(stderr, "fr-scenario-job: no unique id in %s after %d s\n", path, BOOT_TIMEOUT_SEC);
  return -1;
}
