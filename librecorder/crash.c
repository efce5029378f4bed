/* crash.c — a best-effort dump when the process dies of SIGSEGV, SIGABRT or
 * SIGBUS (FR_DUMP_ON_CRASH, default on).
 *
 * The handler does not dump itself (nothing of a dump is async-signal-safe):
 * it asks the watchdog thread, waits for that dump at most 2 s, then puts the
 * previous handler back and hands the signal on: calls it, or, for the
 * default action, returns so that the fault happens again (or abort() raises
 * again) and kills the process as it would have without us.
 */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "recorder.h"

static const int fatal_signals[] = {SIGSEGV, SIGABRT, SIGBUS};
#define NFATAL (sizeof fatal_signals / sizeof fatal_signals[0])
static struct sigaction previous[NFATAL];
static _Atomic int in_crash;

static int slot_of(int sig) {
  for (unsigned i = 0; i < NFATAL; i++)
    if (fatal_signals[i] == sig) return (int)i;
  return -1;
}

static void on_fatal(int sig, siginfo_t *info, void *uctx) {
  int saved = errno;
  int k = slot_of(sig);
  if (!atomic_exchange(&in_crash, 1) && atomic_load(&fr_g.enabled)) {
    /* the crash dump's own count: a dump written meanwhile for another
     * request (an abort's, a frame) is not the one waited for */
    uint32_t before = atomic_load(&fr_g.crash_dumps_done);
    atomic_store(&fr_g.crash_signal, sig);
    fr_ringfile_crash(sig);
    atomic_fetch_or(&fr_g.dump_request, 1u << FRZ_TRIGGER_CRASH); /* served before any other request */
    if (fr_g.wake_pipe[1] >= 0) {
      ssize_t w = write(fr_g.wake_pipe[1], "c", 1);
      (void)w;
    }
    struct timespec tick = {0, 10 * 1000 * 1000};
    for (int i = 0; i < 200 && atomic_load(&fr_g.crash_dumps_done) == before; i++) nanosleep(&tick, NULL);
  }
  if (k >= 0) {
    sigaction(sig, &previous[k], NULL);
    if (previous[k].sa_flags & SA_SIGINFO) {
      if (previous[k].sa_sigaction) previous[k].sa_sigaction(sig, info, uctx);
    } else if (previous[k].sa_handler != SIG_DFL && previous[k].sa_handler != SIG_IGN) {
      previous[k].sa_handler(sig);
    }
  }
  errno = saved;
}

void fr_crash_handlers_install(void) {
  if (!fr_g.cfg.dump_on_crash) return;
  for (unsigned i = 0; i < NFATAL; i++) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_fatal;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    sigaction(fatal_signals[i], &sa, &previous[i]);
  }
}
