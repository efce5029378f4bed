/* relay.c — the relay threads (relay.h): PMIx and the TCPStore, off the
 * watchdog, one thread each.  They sleep on a condition variable; they wake
 * to send a posted hang, and the store's about once a second
 * (FR_TRIGGER_STORE_POLL_MS) to look at the key.  A received trigger waits
 * in a one-entry inbox for the watchdog, which they wake through its pipe. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "recorder.h"
#include "relay.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake = PTHREAD_COND_INITIALIZER;
static int started, stopping, forgotten; /* set before the watchdog starts, or under lock */
static _Atomic int use_pmix, use_store;  /* a thread drops its mechanism when it fails */
static int have_inbox;
static fr_relay_trigger inbox;
static uint64_t inbox_time_ns; /* the inbox's line's time: an earlier line replaces it (the first rank) */
static uint64_t handled_ns; /* triggers from before this (wall clock) are acted on */
static _Atomic int inbox_flag;

/* One thread per mechanism, so that a slow store never holds up a PMIx
 * event, nor PMIx the store. */
typedef struct relay_thread {
  pthread_t t;
  int running;
  char outbox[FRZ_TRIGGER_LINE_MAX]; /* a hang of ours to send; "" none */
} relay_thread;
static relay_thread pmix_th, store_th;

/* A deadline `ns` from now on CLOCK_MONOTONIC (the condition's clock). */
static void deadline_in(struct timespec *ts, uint64_t ns) {
  clock_gettime(CLOCK_MONOTONIC, ts);
  uint64_t t = (uint64_t)ts->tv_nsec + ns;
  ts->tv_sec += (time_t)(t / 1000000000ull);
  ts->tv_nsec = (long)(t % 1000000000ull);
}

static void thread_setup(const char *name) {
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, NULL);
  prctl(PR_SET_NAME, name, 0, 0, 0);
}

/* Take the thread's outbox into `line` (lock held): 1 when there was one. */
static int take_outbox(relay_thread *th, char *line) {
  if (!th->outbox[0]) return 0;
  memcpy(line, th->outbox, FRZ_TRIGGER_LINE_MAX);
  th->outbox[0] = '\0';
  return 1;
}

static void *pmix_main(void *arg) {
  (void)arg;
  thread_setup("fr-relay-pmix");
  if (fr_pmix_open() != 0) {
    atomic_store(&use_pmix, 0);
    return NULL;
  }
  char line[FRZ_TRIGGER_LINE_MAX];
  pthread_mutex_lock(&lock);
  while (!stopping) {
    if (take_outbox(&pmix_th, line)) {
      pthread_mutex_unlock(&lock);
      fr_pmix_notify(line);
      pthread_mutex_lock(&lock);
      continue;
    }
    pthread_cond_wait(&wake, &lock);
  }
  pthread_mutex_unlock(&lock);
  return NULL;
}

static void *store_main(void *arg) {
  (void)arg;
  thread_setup("fr-relay-store");
  uint64_t poll_ns = (uint64_t)fr_g.cfg.store_poll_ms * 1000000ull;
  char line[FRZ_TRIGGER_LINE_MAX];
  pthread_mutex_lock(&lock);
  while (!stopping) {
    if (take_outbox(&store_th, line)) {
      pthread_mutex_unlock(&lock);
      fr_store_publish(line);
      pthread_mutex_lock(&lock);
      continue;
    }
    pthread_mutex_unlock(&lock);
    fr_store_poll(fr_realtime_ns());
    pthread_mutex_lock(&lock);
    if (stopping || store_th.outbox[0]) continue;
    struct timespec ts;
    deadline_in(&ts, poll_ns);
    pthread_cond_timedwait(&wake, &lock, &ts);
  }
  pthread_mutex_unlock(&lock);
  return NULL;
}

static int spawn(relay_thread *th, void *(*fn)(void *), const char *what) {
  pthread_attr_t a;
  pthread_attr_init(&a);
  pthread_attr_setstacksize(&a, 256 * 1024);
  int e = pthread_create(&th->t, &a, fn, NULL);
  pthread_attr_destroy(&a);
  th->running = e == 0;
  if (e != 0)
    fr_log("cannot start the %s relay thread (%s); a hang does not travel that way", what, strerror(e));
  return e == 0 ? 0 : -1;
}

int fr_relay_start(void) {
  if (started || forgotten) return started ? 0 : -1;
  started = 1;
  atomic_store(&use_pmix, fr_pmix_wanted());
  atomic_store(&use_store, fr_store_wanted());
  if (!use_pmix && !use_store) return -1;
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_cond_init(&wake, &ca);
  pthread_condattr_destroy(&ca);
  if (use_pmix && spawn(&pmix_th, pmix_main, "PMIx") != 0) atomic_store(&use_pmix, 0);
  if (use_store && spawn(&store_th, store_main, "TCPStore") != 0) atomic_store(&use_store, 0);
  return use_pmix || use_store ? 0 : -1;
}

void fr_relay_post(const char *reason, uint64_t time_ns) {
  if (!started || forgotten || (!use_pmix && !use_store)) return;
  char line[FRZ_TRIGGER_LINE_MAX];
  if (frz_trigger_line_format(line, sizeof line, fr_g.proc.global_rank, time_ns, reason) < 0) return;
  pthread_mutex_lock(&lock);
  if (use_pmix) memcpy(pmix_th.outbox, line, sizeof line);
  if (use_store) memcpy(store_th.outbox, line, sizeof line);
  pthread_cond_broadcast(&wake);
  pthread_mutex_unlock(&lock);
}

/* How far ahead of our clock a line's time may be (clock skew between
 * hosts); a line further ahead is refused: taking it would make us deaf
 * to everything before its time. */
#define FUTURE_SLACK_NS (10ull * 1000000000ull)

void fr_relay_deliver(int via, const char *line, size_t len) {
  frz_trigger_line t;
  if (frz_trigger_line_parse(line, len, &t) != 0) return; /* not ours: someone else's key or event */
  uint64_t now = fr_realtime_ns();
  /* no time, or one we cannot trust: it cannot be told from an earlier job's */
  if (!t.time_ns || t.time_ns > now + FUTURE_SLACK_NS) return;
  /* a second of slack for clock skew between hosts, as for the trigger file */
  if (t.time_ns + 1000000000ull < fr_g.start_realtime_ns) return; /* an earlier job's */
  pthread_mutex_lock(&lock);
  int take = t.time_ns > handled_ns && (t.rank < 0 || t.rank != fr_g.proc.global_rank) &&
             (!have_inbox || t.time_ns < inbox_time_ns);
  if (take) {
    inbox_time_ns = t.time_ns;
    inbox.trigger = via;
    inbox.rank = t.rank;
    inbox.latency_us = now > t.time_ns ? (now - t.time_ns) / 1000 : 0;
    snprintf(inbox.text, sizeof inbox.text, "%s", t.reason[0] ? t.reason : frz_trigger_name((unsigned)via));
    have_inbox = 1;
    atomic_store(&inbox_flag, 1);
  }
  pthread_mutex_unlock(&lock);
  if (take && fr_g.wake_pipe[1] >= 0) {
    ssize_t w = write(fr_g.wake_pipe[1], "r", 1);
    (void)w;
  }
}

int fr_relay_take(fr_relay_trigger *t) {
  if (!atomic_load(&inbox_flag)) return 0;
  pthread_mutex_lock(&lock);
  int got = have_inbox;
  if (got) {
    *t = inbox;
    if (inbox_time_ns > handled_ns) handled_ns = inbox_time_ns;
  }
  have_inbox = 0;
  atomic_store(&inbox_flag, 0);
  pthread_mutex_unlock(&lock);
  return got;
}

void fr_relay_handled(uint64_t now_ns) {
  if (!started) return;
  pthread_mutex_lock(&lock);
  if (now_ns > handled_ns) handled_ns = now_ns;
  have_inbox = 0;
  atomic_store(&inbox_flag, 0);
  pthread_mutex_unlock(&lock);
}

void fr_relay_stop(void) {
  if (!started || forgotten || (!pmix_th.running && !store_th.running)) return;
  pthread_mutex_lock(&lock);
  stopping = 1;
  pthread_cond_broadcast(&wake);
  pthread_mutex_unlock(&lock);
  if (store_th.running) fr_store_interrupt();
  /* a store that does not answer may not hold up the exit: its I/O was
   * cut short.  PMIx is waited for, up to 2 s, even inside PMIx_Init: a
   * process that exits while it joins is one the launcher saw join and
   * never leave (seen under TSan: mpirun called it "exiting improperly") */
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until);
  until.tv_sec += 2;
  if (store_th.running && pthread_timedjoin_np(store_th.t, NULL, &until) == 0) fr_store_close();
  if (pmix_th.running && pthread_timedjoin_np(pmix_th.t, NULL, &until) == 0)
    fr_pmix_close(); /* also when PMIx failed after the join: a join is always left */
}

void fr_relay_forget(void) {
  forgotten = 1;
  pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
  memcpy(&lock, &fresh, sizeof fresh);
  fr_pmix_forget();
  atomic_store(&use_pmix, 0);
  atomic_store(&use_store, 0);
}
