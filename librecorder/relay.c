/* relay.c — the relay thread (relay.h): PMIx and TCPStore, off the
 * watchdog.  It sleeps on a condition variable; it wakes to send a posted
 * hang, and about once a second (FR_TRIGGER_STORE_POLL_MS) to look at the
 * store.  Received triggers wait in a one-entry inbox for the watchdog,
 * which it wakes through its pipe. */
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
static pthread_t thread;
static int started, running, stopping, forgotten; /* set before the watchdog starts, or under lock */
static _Atomic int use_pmix, use_store;  /* the relay thread drops a mechanism that fails */
static char outbox[FRZ_TRIGGER_LINE_MAX]; /* a hang of ours to send; "" none */
static int have_inbox;
static fr_relay_trigger inbox;
static uint64_t handled_ns; /* triggers from before this (wall clock) are acted on */
static _Atomic int inbox_flag;

/* The relay thread's clock for its waits. */
static void deadline_in(struct timespec *ts, uint64_t ns) {
  clock_gettime(CLOCK_MONOTONIC, ts);
  uint64_t t = (uint64_t)ts->tv_nsec + ns;
  ts->tv_sec += (time_t)(t / 1000000000ull);
  ts->tv_nsec = (long)(t % 1000000000ull);
}

static void *relay_main(void *arg) {
  (void)arg;
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, NULL);
  prctl(PR_SET_NAME, "fr-relay", 0, 0, 0);
  if (atomic_load(&use_pmix) && fr_pmix_open() != 0) atomic_store(&use_pmix, 0);
  uint64_t poll_ns = (uint64_t)fr_g.cfg.store_poll_ms * 1000000ull;
  pthread_mutex_lock(&lock);
  while (!stopping) {
    if (outbox[0]) {
      char line[FRZ_TRIGGER_LINE_MAX];
      memcpy(line, outbox, sizeof line);
      outbox[0] = '\0';
      pthread_mutex_unlock(&lock);
      if (use_pmix) fr_pmix_notify(line);
      if (use_store) fr_store_publish(line);
      pthread_mutex_lock(&lock);
      continue;
    }
    if (use_store) {
      pthread_mutex_unlock(&lock);
      fr_store_poll(fr_realtime_ns());
      pthread_mutex_lock(&lock);
    }
    if (stopping || outbox[0]) continue;
    struct timespec ts;
    deadline_in(&ts, use_store ? poll_ns : 3600ull * 1000000000ull);
    pthread_cond_timedwait(&wake, &lock, &ts);
  }
  pthread_mutex_unlock(&lock);
  return NULL;
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
  pthread_attr_t a;
  pthread_attr_init(&a);
  pthread_attr_setstacksize(&a, 256 * 1024);
  int e = pthread_create(&thread, &a, relay_main, NULL);
  pthread_attr_destroy(&a);
  running = e == 0;
  if (e != 0) {
    fr_log("cannot start the relay thread (%s); a hang reaches other ranks by the trigger file only",
           strerror(e));
    atomic_store(&use_pmix, 0);
    atomic_store(&use_store, 0);
    return -1;
  }
  return 0;
}

void fr_relay_post(const char *reason, uint64_t time_ns) {
  if (!started || forgotten || (!use_pmix && !use_store)) return;
  pthread_mutex_lock(&lock);
  if (frz_trigger_line_format(outbox, sizeof outbox, fr_g.proc.global_rank, time_ns, reason) < 0)
    outbox[0] = '\0';
  pthread_cond_signal(&wake);
  pthread_mutex_unlock(&lock);
}

void fr_relay_deliver(int via, const char *line, size_t len) {
  frz_trigger_line t;
  if (frz_trigger_line_parse(line, len, &t) != 0) return; /* not ours: someone else's key or event */
  uint64_t now = fr_realtime_ns();
  /* a second of slack for clock skew between hosts, as for the trigger file */
  if (t.time_ns && t.time_ns + 1000000000ull < fr_g.start_realtime_ns) return; /* an earlier job's */
  pthread_mutex_lock(&lock);
  /* a line without a time: fresh when it differs from the last one taken */
  static char last[FRZ_TRIGGER_LINE_MAX];
  int fresh = t.time_ns ? t.time_ns > handled_ns : strncmp(last, line, len < sizeof last ? len : sizeof last - 1) != 0;
  int take = fresh && (t.rank < 0 || t.rank != fr_g.proc.global_rank);
  if (take) {
    snprintf(last, sizeof last, "%.*s", (int)(len < sizeof last ? len : sizeof last - 1), line);
    if (t.time_ns > handled_ns) handled_ns = t.time_ns;
    inbox.trigger = via;
    inbox.rank = t.rank;
    inbox.latency_us = t.time_ns && now > t.time_ns ? (now - t.time_ns) / 1000 : 0;
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
  if (got) *t = inbox;
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
  if (!running || forgotten) return;
  pthread_mutex_lock(&lock);
  stopping = 1;
  pthread_cond_signal(&wake);
  pthread_mutex_unlock(&lock);
  if (use_store) fr_store_interrupt();
  /* a store or launcher that does not answer must not hold up the exit */
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until);
  until.tv_sec += 2;
  if (pthread_timedjoin_np(thread, NULL, &until) != 0) return;
  if (use_store) fr_store_close();
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
