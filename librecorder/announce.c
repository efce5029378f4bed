/* announce.c — this process's announcement in its dump directory
 * (frz.md, "Announcements"): written by the watchdog thread at its first
 * poll that sees a communicator, never on an application thread, and
 * removed at a clean exit, so that fr-dump --trigger can say who listens
 * and fr-analyze can tell a rank that was alive and never dumped from one
 * that never started.  Failing to write it changes nothing else. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "recorder.h"

static pthread_mutex_t announce_lock = PTHREAD_MUTEX_INITIALIZER;
static char announced_path[720]; /* "" until written */
static uint32_t announced_pid;
static int gone;                 /* removed at exit: never write again */
static int made_dir;             /* the dump directory was created for it */

int fr_announce(void) {
  if (fr_comm_count() == 0) return 0; /* again at the next poll */
  fr_comm *c = fr_comm_at(0);
  frz_alive a;
  memset(&a, 0, sizeof a);
  if (fr_g.cfg.job_id[0]) snprintf(a.job_id, sizeof a.job_id, "%s", fr_g.cfg.job_id);
  else if (c) snprintf(a.job_id, sizeof a.job_id, "%016llx", (unsigned long long)c->comm_id);
  a.global_rank = fr_g.proc.global_rank;
  a.world_size = fr_g.proc.world_size;
  a.local_rank = fr_g.proc.local_rank;
  a.pid = (uint32_t)getpid();
  a.time_ns = fr_realtime_ns();
  a.watches_trigger = fr_g.cfg.trigger_file ? 1 : 0;
  snprintf(a.host, sizeof a.host, "%s", fr_g.proc.host);
  char name[200], line[FRZ_ALIVE_MAX];
  int len = frz_alive_format(&a, line, sizeof line);
  if (len < 0 || frz_alive_filename(name, sizeof name, a.job_id, a.global_rank, a.pid) < 0) return 1;
  pthread_mutex_lock(&announce_lock);
  int made = mkdir(fr_g.cfg.dump_dir, 0700) == 0;
  if (!gone && fr_ensure_dump_dir(fr_g.cfg.dump_dir) == 0) {
    /* a temporary file renamed into place, without the dumps' fsync: the
     * watchdog must not wait on the disk for this (a lost announcement
     * costs nothing but a sentence) */
    char tmp[760], final[720];
    snprintf(final, sizeof final, "%s/%s", fr_g.cfg.dump_dir, name);
    snprintf(tmp, sizeof tmp, "%s/.%s.tmp", fr_g.cfg.dump_dir, name);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd >= 0) {
      int ok = write(fd, line, (size_t)len) == len;
      if (close(fd) != 0) ok = 0;
      if (ok && rename(tmp, final) == 0) {
        memcpy(announced_path, final, sizeof final);
        announced_pid = a.pid;
        made_dir = made;
      } else {
        unlink(tmp);
      }
    }
  }
  pthread_mutex_unlock(&announce_lock);
  return 1; /* written or not: once */
}

void fr_announce_remove(void) {
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until);
  until.tv_sec += 1;
  if (pthread_mutex_timedlock(&announce_lock, &until) != 0) return;
  gone = 1;
  /* a forked child never removes its parent's announcement */
  if (announced_path[0] && announced_pid == (uint32_t)getpid()) {
    unlink(announced_path);
    /* a directory made only for the announcement goes too: a job that never
     * dumped leaves nothing behind (rmdir fails, harmlessly, if anything
     * else is in it) */
    if (made_dir && fr_g.cfg.dump_dir[0]) rmdir(fr_g.cfg.dump_dir);
  }
  announced_path[0] = '\0';
  pthread_mutex_unlock(&announce_lock);
}
