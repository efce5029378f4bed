/* trigger.c — ask every rank of a live job to dump: create DIR/TRIGGER, the
 * file each rank's watchdog polls, atomically and never over an existing one. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "fr_dump.h"

#define TRIGGER_NAME "TRIGGER"
#define TRIGGER_MAX 512

void fd_trigger_reason(const char *reason, char *out, size_t outlen)
{
  const unsigned char *s = (const unsigned char *)(reason ? reason : "");
  size_t o = 0, lim = outlen ? outlen - 1 : 0;
  if (lim > FD_REASON_MAX) lim = FD_REASON_MAX;
  for (; *s; s++) {
    unsigned char c = *s;
    if (c == '\n' || c == '\r' || c == '\t') c = ' '; /* line breaks become spaces */
    else if (c < 0x20 || c == 0x7f) continue;        /* other controls are stripped */
    if (o >= lim) break;
    out[o++] = (char)c;
  }
  /* do not end in the middle of a UTF-8 character */
  size_t k = o;
  while (k > 0 && ((unsigned char)out[k - 1] & 0xc0) == 0x80) k--;
  if (k > 0 && (unsigned char)out[k - 1] >= 0xc0) {
    unsigned lead = (unsigned char)out[k - 1];
    size_t need = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : 2;
    if (o - (k - 1) < need) o = k - 1;
  }
  if (outlen) out[o] = '\0';
}

/* Write all of buf to fd. */
static int write_all(int fd, const char *buf, size_t len)
{
  while (len) {
    ssize_t n = write(fd, buf, len);
    if (n < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    buf += n;
    len -= (size_t)n;
  }
  return 0;
}

/* Move tmp to final unless final exists: 0 moved, 1 final exists, -1 error. */
static int publish(const char *tmp, const char *final)
{
#ifdef SYS_renameat2
  if (syscall(SYS_renameat2, AT_FDCWD, tmp, AT_FDCWD, final, 1 /* RENAME_NOREPLACE */) == 0)
    return 0;
  if (errno == EEXIST) return 1;
  if (errno != EINVAL && errno != ENOSYS && errno != ENOTSUP && errno != EOPNOTSUPP) return -1;
#endif
  /* a hard link fails atomically when the name is taken */
  if (link(tmp, final) == 0) {
    unlink(tmp);
    return 0;
  }
  if (errno == EEXIST) return 1;
  /* filesystems without hard links: check, then rename (a small window) */
  struct stat st;
  if (lstat(final, &st) == 0) return 1;
  return rename(tmp, final) == 0 ? 0 : -1;
}

int fd_trigger(const char *dir, const char *reason, char *err, size_t errlen)
{
  char final[4096], tmp[4096], line[TRIGGER_MAX + 1], why[FD_REASON_MAX + 1];
  struct stat st;
  if (snprintf(final, sizeof final, "%s/%s", dir, TRIGGER_NAME) >= (int)sizeof final ||
      snprintf(tmp, sizeof tmp, "%s/.%s.%ld.tmp", dir, TRIGGER_NAME, (long)getpid()) >=
          (int)sizeof tmp) {
    snprintf(err, errlen, "%s: path too long", dir);
    return FD_TRIGGER_ERROR;
  }
  if (stat(dir, &st) != 0) {
    snprintf(err, errlen, "%s: %s", dir, strerror(errno));
    return FD_TRIGGER_ERROR;
  }
  if (!S_ISDIR(st.st_mode)) {
    snprintf(err, errlen, "%s: not a directory", dir);
    return FD_TRIGGER_ERROR;
  }
  /* An existing trigger (an earlier request, or a reused directory) is
   * replaced: its newer time is what asks the recorders to dump again.  A
   * symlink or anything but a plain file there is refused, never followed. */
  int existed = 0;
  if (lstat(final, &st) == 0) {
    if (!S_ISREG(st.st_mode)) {
      snprintf(err, errlen, "%s exists and is not a plain file; not replaced", final);
      return FD_TRIGGER_ERROR;
    }
    existed = 1;
  }
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  uint64_t now = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
  fd_trigger_reason(reason, why, sizeof why);
  int n = frz_trigger_line_format(line, sizeof line, -1, now, why);
  if (n < 0) {
    snprintf(err, errlen, "trigger line too long");
    return FD_TRIGGER_ERROR;
  }
  int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) {
    snprintf(err, errlen, "%s: %s", tmp, strerror(errno));
    return FD_TRIGGER_ERROR;
  }
  if (write_all(fd, line, (size_t)n) != 0 || fsync(fd) != 0) {
    snprintf(err, errlen, "%s: %s", tmp, strerror(errno));
    close(fd);
    unlink(tmp);
    return FD_TRIGGER_ERROR;
  }
  if (close(fd) != 0) {
    snprintf(err, errlen, "%s: %s", tmp, strerror(errno));
    unlink(tmp);
    return FD_TRIGGER_ERROR;
  }
  int rc = existed ? (rename(tmp, final) == 0 ? 0 : -1) : publish(tmp, final);
  if (rc == 1 && lstat(final, &st) == 0 && S_ISREG(st.st_mode)) { /* raced with a recorder */
    existed = 1;
    rc = rename(tmp, final) == 0 ? 0 : -1;
  }
  int saved = errno;
  if (rc != 0) unlink(tmp);
  if (rc < 0) {
    snprintf(err, errlen, "%s: %s", final, strerror(saved));
    return FD_TRIGGER_ERROR;
  }
  int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    fsync(dfd); /* make the new name durable; failure here changes nothing */
    close(dfd);
  }
  return existed ? FD_TRIGGER_EXISTS : FD_TRIGGER_CREATED;
}
