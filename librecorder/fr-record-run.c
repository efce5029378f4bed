/* fr-record-run — the process fr-record(1) leaves in front of the command
 * it runs (installed in pkglibexecdir; fr-record execs it):
 *
 *   FR_RECORD_PRELOAD=LIST fr-record-run COMMAND [ARG...]
 *
 * Forks; the child sets LD_PRELOAD to LIST (the recorder, then what was
 * there: this process itself runs without the recorder) and execs COMMAND.
 * The parent passes the signals a launcher or a person sends it (SIGHUP,
 * SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGALRM, SIGWINCH, SIGCONT)
 * on to the child — except those the terminal sent to the whole
 * foreground process group (si_code SI_KERNEL), which the child got
 * already — waits for it, and ends as it ended: with its exit status, or,
 * when it died by a signal, first salvaging its ring file(s) (frz.md, "Ring
 * files": those of the child's pid in FR_RING_DIR, default /dev/shm) into
 * the dump directory each names (the child's FR_DUMP_DIR), then dying by
 * the same signal (no core file of its own), so that a shell sees 128 + N.
 *
 * Exit status: the command's; 126 when COMMAND cannot be run, 127 when it
 * is not found (as a shell); 2 on a usage error. */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "frz_ring.h"

static volatile pid_t child;

static const int passed[] = {SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGALRM, SIGWINCH, SIGCONT};
#define NPASSED (sizeof passed / sizeof passed[0])

static void pass_on(int sig, siginfo_t *si, void *uc)
{
  (void)uc;
  /* a key on the terminal signals the whole foreground group: the child
   * has it already */
  if (si && si->si_code == SI_KERNEL) return;
  if (child > 0) kill(child, sig);
}

/* The ring directory as the recorder takes it (librecorder(7),
 * FR_RING_DIR); NULL when ring files are off. */
static const char *ring_dir(void)
{
  const char *d = getenv("FR_RING_DIR");
  if (!d || !*d) return "/dev/shm";
  if (!strcmp(d, "none") || !strcmp(d, "off") || !strcmp(d, "0")) return NULL;
  return d;
}

/* Salvage the ring files of process `pid` into their dump directories.
 * Returns the number of dumps written. */
static int salvage(pid_t pid, int sig)
{
  const char *dir = ring_dir();
  if (!dir) return 0;
  DIR *dp = opendir(dir);
  if (!dp) return 0;
  char pat[32];
  snprintf(pat, sizeof pat, "-p%ld@", (long)pid);
  int k = 0;
  struct dirent *de;
  while ((de = readdir(dp)) != NULL) {
    if (!frz_ring_is_name(de->d_name) || !strstr(de->d_name, pat)) continue;
    char path[4400], written[4400];
    snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
    frz_dump d;
    frz_error e;
    memset(&e, 0, sizeof e);
    if (frz_ring_salvage_signal(path, NULL, 0, sig, written, sizeof written, &d, &e) == FRZ_OK) {
      fprintf(stderr, "fr-record: the command died by signal %d (SIG%s); rank %d salvaged into %s\n", sig,
              sigabbrev_np(sig) ? sigabbrev_np(sig) : "?", d.process.global_rank, written);
      k++;
    } else {
      fprintf(stderr, "fr-record: %s: not salvaged: %s\n", path, e.msg[0] ? e.msg : frz_status_name(e.status));
    }
    frz_dump_free(&d);
  }
  closedir(dp);
  return k;
}

int main(int argc, char **argv)
{
  if (argc < 2) {
    fputs("usage: FR_RECORD_PRELOAD=LIST fr-record-run COMMAND [ARG...] (run by fr-record)\n", stderr);
    return 2;
  }
  sigset_t all, old;
  sigemptyset(&all);
  for (size_t i = 0; i < NPASSED; i++) sigaddset(&all, passed[i]);
  sigprocmask(SIG_BLOCK, &all, &old); /* none lost between the fork and the handlers */
  pid_t pid = fork();
  if (pid < 0) {
    perror("fr-record: fork");
    return 126;
  }
  if (pid == 0) {
    sigprocmask(SIG_SETMASK, &old, NULL);
    const char *pre = getenv("FR_RECORD_PRELOAD");
    if (pre && *pre) setenv("LD_PRELOAD", pre, 1);
    unsetenv("FR_RECORD_PRELOAD");
    execvp(argv[1], argv + 1);
    int e = errno;
    fprintf(stderr, "fr-record: %s: %s\n", argv[1], strerror(e));
    _exit(e == ENOENT ? 127 : 126);
  }
  child = pid;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = pass_on;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigfillset(&sa.sa_mask);
  for (size_t i = 0; i < NPASSED; i++) sigaction(passed[i], &sa, NULL);
  sigprocmask(SIG_SETMASK, &old, NULL);

  int status;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      perror("fr-record: waitpid");
      return 126;
    }
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  int sig = WTERMSIG(status);
  salvage(pid, sig);
  /* end as the child ended: by its signal, without a core of our own */
  struct rlimit nocore = {0, 0};
  setrlimit(RLIMIT_CORE, &nocore);
  signal(sig, SIG_DFL);
  sigset_t one;
  sigemptyset(&one);
  sigaddset(&one, sig);
  sigprocmask(SIG_UNBLOCK, &one, NULL);
  raise(sig);
  return 128 + sig; /* a signal that does not end a process */
}
