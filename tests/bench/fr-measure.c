/* fr-measure — run a command and say what it cost, for the analyzer
 * benchmarks (tests/bench/run-bench-analyze.sh):
 *
 *   fr-measure [-o FILE] CMD [ARG...]
 *
 * Runs CMD with its standard output sent to FILE (default /dev/null) and
 * prints one line: "measure wall_s=W cpu_s=C user_s=U sys_s=S peak_kib=K
 * rc=R", where wall_s is the elapsed time (CLOCK_MONOTONIC), cpu_s user plus
 * system time of the command and its children (wait4), peak_kib its peak
 * resident set (ru_maxrss) and rc its exit status (128+N when killed by
 * signal N).  Exits 0 when the command could be run.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double secs(struct timeval tv) { return (double)tv.tv_sec + (double)tv.tv_usec / 1e6; }

int main(int argc, char **argv)
{
  const char *out = "/dev/null";
  int first = 1;
  if (argc > 2 && strcmp(argv[1], "-o") == 0) {
    out = argv[2];
    first = 3;
  }
  if (first >= argc) {
    fprintf(stderr, "usage: fr-measure [-o FILE] CMD [ARG...]\n");
    return 2;
  }
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  pid_t pid = fork();
  if (pid < 0) {
    fprintf(stderr, "fr-measure: fork: %s\n", strerror(errno));
    return 1;
  }
  if (pid == 0) {
    int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0 || dup2(fd, 1) < 0) {
      fprintf(stderr, "fr-measure: %s: %s\n", out, strerror(errno));
      _exit(127);
    }
    execvp(argv[first], argv + first);
    fprintf(stderr, "fr-measure: %s: %s\n", argv[first], strerror(errno));
    _exit(127);
  }
  int status;
  struct rusage ru;
  while (wait4(pid, &status, 0, &ru) < 0) {
    if (errno != EINTR) {
      fprintf(stderr, "fr-measure: wait4: %s\n", strerror(errno));
      return 1;
    }
  }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  double wall = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
  int rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  printf("measure wall_s=%.3f cpu_s=%.3f user_s=%.3f sys_s=%.3f peak_kib=%ld rc=%d\n", wall,
         secs(ru.ru_utime) + secs(ru.ru_stime), secs(ru.ru_utime), secs(ru.ru_stime),
         ru.ru_maxrss, rc);
  return rc == 127 ? 1 : 0;
}
