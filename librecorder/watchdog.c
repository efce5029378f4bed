/* watchdog.c — the recorder's one thread per process.
 *
 * Every FR_POLL_MS it: stamps start/completion of tracked ops from their device
 * events (CUDA or HIP); declares a hang when the oldest incomplete op is older than
 * FR_TIMEOUT_SEC (and creates the shared trigger file so every rank dumps);
 * watches the trigger file (once a second: it may sit on a shared
 * filesystem) and dump requests from the signal handler or ncclCommAbort;
 * writes frame 0 on a trigger, then a frame every FR_FRAME_INTERVAL_SEC up to
 * FR_MAX_FRAMES.  It never touches the application's threads.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "recorder.h"
#include "relay.h"

#define TRIGGER_POLL_NS UINT64_C(1000000000)

/* Stamp a time into a time field of the record `id` in slot s: `gpu` (when
 * the GPU passed the event) if known and not after `now`, else `now`; but
 * never earlier than its enqueue or start (it may have been enqueued after
 * `now` was read); taken back if the slot was reused meanwhile, since the
 * new record in it is not ours to stamp. */
static void stamp(fr_slot *s, uint64_t id, uint64_t *field, uint64_t now, uint64_t gpu) {
  uint64_t t = gpu && gpu <= now ? gpu : now, t0 = __atomic_load_n(&s->rec.t_enqueue_ns, __ATOMIC_RELAXED);
  uint64_t t1 = __atomic_load_n(&s->rec.t_start_ns, __ATOMIC_RELAXED);
  if (t0 > t) t = t0;
  if (field != &s->rec.t_start_ns && t1 > t) t = t1;
  __atomic_store_n(field, t, __ATOMIC_RELAXED);
  atomic_thread_fence(memory_order_seq_cst);
  if (fr_ring_get(&fr_g.ring, id) != s) __atomic_compare_exchange_n(field, &t, 0, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
}

/* Move record `id` in slot s on to what its device events show (started, then
 * completed), stamping `now`, or with `scan` (the watchdog's scan number,
 * 0 elsewhere) the GPU's time of the events; returns its state then.  Only
 * what the events showed: the profiler plugin may move it too.  GPU_TIMED
 * says both times are the GPU's. */
uint8_t fr_stamp_from_events(fr_slot *s, uint64_t id, uint64_t now, uint64_t scan) {
  frz_record *r = &s->rec;
  uint8_t state = __atomic_load_n(&r->state, __ATOMIC_ACQUIRE), seen = state;
  uint32_t flags = __atomic_load_n(&r->flags, __ATOMIC_ACQUIRE);
  const fr_device *d = fr_device_active();
  if ((flags & FRZ_RF_NO_TRACKING) || !d) return state;
  if (FR_UNLIKELY(flags & FRZ_RF_GRAPH_REPLAY)) {
    uint64_t lead = __atomic_load_n(&s->ev_lead, __ATOMIC_ACQUIRE);
    if (lead == UINT64_MAX) return state; /* its launch is still filling the replay in */
    if (lead != id) return fr_graph_stamp_follower(s, id);
  }
  if (state == FRZ_STATE_ENQUEUED && d->passed(s, 0) == 1) {
    uint64_t g = scan ? d->gpu_time(s, 0, scan) : 0;
    stamp(s, id, &r->t_start_ns, now, g);
    if (g && g <= now) fr_rec_flags_set(s, FRZ_RF_GPU_TIMED, 0);
    state = FRZ_STATE_STARTED;
  }
  if (state == FRZ_STATE_STARTED && d->passed(s, 1) == 1) {
    uint64_t g = scan ? d->gpu_time(s, 1, scan) : 0;
    stamp(s, id, &r->t_complete_ns, now, g);
    if (!g || g > now) fr_rec_flags_set(s, 0, FRZ_RF_GPU_TIMED);
    state = FRZ_STATE_COMPLETED;
  }
  if (fr_ring_get(&fr_g.ring, id) == s && state != seen) fr_rec_state_advance(s, state);
  return state;
}

/* Stamp start/completion of pending records; find the oldest pending one. */
void fr_scan_completion(scan_state *st, uint64_t now, int gpu) {
  static _Atomic uint64_t scans; /* one GPU reference per context per scan */
  uint64_t scan = gpu ? atomic_fetch_add(&scans, 1) + 1 : 0;
  fr_ring *ring = &fr_g.ring;
  uint64_t head = fr_ring_head(ring);
  if (head > ring->capacity && st->from < head - ring->capacity) st->from = head - ring->capacity;
  int contiguous = 1;
  st->have_oldest = 0;
  for (uint64_t id = st->from; id < head; id++) {
    fr_slot *s = fr_ring_get(ring, id);
    if (!s) {
      uint64_t v = atomic_load_explicit(&__atomic_load_n(&ring->slots, __ATOMIC_RELAXED)[id & ring->mask].ver, memory_order_acquire);
      if (v == 2 * id + 1) contiguous = 0; /* still being written: look again */
      if (contiguous) st->from = id + 1;
      continue;
    }
    frz_record *r = &s->rec;
    uint8_t state, seen = __atomic_load_n(&r->state, __ATOMIC_ACQUIRE);
    uint32_t flags = __atomic_load_n(&r->flags, __ATOMIC_ACQUIRE);
    if (flags & FRZ_RF_ABORTED) { /* abandoned by ncclCommAbort: neither tracked nor waited for */
      if (contiguous) st->from = id + 1;
      continue;
    }
    state = fr_stamp_from_events(s, id, now, scan);
    if (state == FRZ_STATE_COMPLETED && seen != FRZ_STATE_COMPLETED) st->completed++;
    int done = state == FRZ_STATE_COMPLETED || state == FRZ_STATE_FAILED ||
               ((flags & FRZ_RF_NO_TRACKING) && !(flags & FRZ_RF_IN_CALL));
    if (done) {
      if (contiguous) st->from = id + 1;
      continue;
    }
    contiguous = 0;
    if (!st->have_oldest) {
      st->oldest_id = id;
      st->have_oldest = 1;
    }
  }
  (void)now;
}

/* The end of the last stretch of time in which this thread did not run at
 * all (the process stopped by SIGSTOP, a scheduler's suspend, or starved):
 * an op is not blamed for that time (watchdog thread only). */
static uint64_t stall_end_ns;

/* Text for a timeout trigger: which op waited how long. */
static int describe_timeout(uint64_t id, uint64_t now, char *text, size_t len) {
  fr_slot *s = fr_ring_get(&fr_g.ring, id);
  if (!s) return 0;
  const frz_record *r = &s->rec;
  uint64_t t0 = __atomic_load_n(&r->t_enqueue_ns, __ATOMIC_RELAXED);
  /* an op enqueued after `now` was read (during the scan) has not waited */
  if (t0 >= now) return 0;
  uint64_t waited = now - t0;
  /* its wait counts from the end of a stall: a whole job stopped and
   * continued (SIGSTOP/SIGCONT, Slurm's suspend) is not hung */
  uint64_t counted = now - (t0 > stall_end_ns ? t0 : stall_end_ns);
  if (counted < (uint64_t)fr_g.cfg.timeout_sec * 1000000000ull) return 0;
  snprintf(text, len, "%s seq %llu on comm %016llx not complete after %.1f s", frz_op_name(r->op),
           (unsigned long long)r->seq, (unsigned long long)r->comm_id, (double)waited / 1e9);
  return 1;
}

/* One trigger and the frames after it, until progress resumes. */
typedef struct episode {
  int active;
  int trigger_rank;
  uint32_t latency_us;          /* another rank's trigger: how long it took to reach us */
  uint32_t frames;              /* frames written in this episode */
  uint64_t trigger_time, next_frame;
  uint64_t completed_at_trigger; /* scan_state.completed when it began */
  char text[FRZ_TEXT_MAX];
} episode;

static uint64_t frame_interval_ns(void) {
  return (uint64_t)fr_g.cfg.frame_interval_sec * 1000000000ull;
}

/* Microseconds from wall-clock time `then` (another rank's) to now; 0 unknown. */
static uint32_t latency_since(uint64_t then) {
  uint64_t now = fr_realtime_ns();
  if (!then || now <= then) return 0;
  uint64_t us = (now - then) / 1000;
  return us > UINT32_MAX ? UINT32_MAX : (uint32_t)us;
}

/* A trigger, if any: a request from a wrapper or the signal handler, this
 * process's timeout, the shared trigger file, or another rank's hang
 * relayed by PMIx or the TCPStore. */
static int find_trigger(int req, const scan_state *st, uint64_t now, uint64_t *next_poll,
                        episode *ep) {
  ep->latency_us = 0;
  if (req) {
    ep->trigger_rank = fr_g.proc.global_rank;
    snprintf(ep->text, sizeof ep->text, "%s", frz_trigger_name((unsigned)req));
    return req;
  }
  if (fr_g.cfg.timeout_sec && st->have_oldest &&
      describe_timeout(st->oldest_id, now, ep->text, sizeof ep->text)) {
    ep->trigger_rank = fr_g.proc.global_rank;
    if (fr_g.cfg.trigger_file) fr_trigger_file_create(ep->text);
    fr_relay_post(ep->text, fr_realtime_ns());
    fr_log("hang: %s; dumping to %s", ep->text, fr_g.cfg.dump_dir);
    return FRZ_TRIGGER_TIMEOUT;
  }
  fr_relay_trigger rt;
  if (fr_relay_take(&rt)) {
    ep->trigger_rank = rt.rank;
    ep->latency_us = rt.latency_us > UINT32_MAX ? UINT32_MAX : (uint32_t)rt.latency_us;
    snprintf(ep->text, sizeof ep->text, "%s", rt.text);
    return rt.trigger;
  }
  if (fr_g.cfg.trigger_file && now >= *next_poll) {
    *next_poll = now + TRIGGER_POLL_NS;
    uint64_t then = 0;
    if (fr_trigger_file_seen(&ep->trigger_rank, &then, ep->text, sizeof ep->text)) {
      ep->latency_us = latency_since(then);
      return FRZ_TRIGGER_FILE;
    }
  }
  return 0;
}

static void dump_frame(int trigger, const episode *ep) {
  fr_dump_write(trigger, atomic_fetch_add(&fr_g.next_frame, 1), ep->trigger_time,
                ep->trigger_rank, ep->latency_us, ep->text);
}

/* One poll's worth of episode logic: start, next frame, or recovery. */
static void step_episode(episode *ep, const scan_state *st, int req, uint64_t now,
                         uint64_t *next_poll) {
  if (!ep->active) {
    int trigger = find_trigger(req, st, now, next_poll, ep);
    if (!trigger) return;
    uint64_t wall = fr_realtime_ns(); /* what came before this is answered by this episode */
    fr_relay_handled(wall);
    fr_trigger_file_answered(wall);
    ep->active = 1;
    ep->frames = 1;
    ep->trigger_time = now;
    ep->next_frame = now + frame_interval_ns();
    ep->completed_at_trigger = st->completed;
    dump_frame(trigger, ep);
    return;
  }
  if (st->completed > ep->completed_at_trigger) {
    /* progress resumed: say so in one last frame and re-arm */
    snprintf(ep->text, sizeof ep->text, "progress resumed: %llu ops completed %.1f s after the trigger",
             (unsigned long long)(st->completed - ep->completed_at_trigger),
             (double)(now - ep->trigger_time) / 1e9);
    dump_frame(FRZ_TRIGGER_RECOVERY, ep);
    ep->active = 0;
    /* what other ranks sent during the episode was about this hang */
    fr_relay_handled(fr_realtime_ns());
    /* a request that came with the progress gets a dump of its own, with
     * its own trigger, at the next poll (unless another came meanwhile) */
    if (req) atomic_fetch_or(&fr_g.dump_request, 1u << req);
    return;
  }
  if (req) { /* an explicit request (signal, abort, async error) is always honoured */
    ep->frames++;
    dump_frame(req, ep);
  } else if (ep->frames < fr_g.cfg.max_frames && now >= ep->next_frame) {
    ep->frames++;
    ep->next_frame = now + frame_interval_ns();
    dump_frame(FRZ_TRIGGER_FRAME, ep);
  }
}

static __thread int watchdog_thread; /* set on the watchdog thread alone */

int fr_on_watchdog_thread(void) { return watchdog_thread; }

static void *watchdog_main(void *arg) {
  (void)arg;
  watchdog_thread = 1;
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, NULL);
  prctl(PR_SET_NAME, "fr-watchdog", 0, 0, 0);
  scan_state st = {0};
  episode ep = {0};
  uint64_t next_trigger_poll = 0, last_poll = 0;
  int announced = 0;
  /* a poll this much later than due means the thread was not running */
  uint64_t stall_ns = 1000000000ull + 4 * (uint64_t)fr_g.cfg.poll_ms * 1000000ull;
  while (!atomic_load(&fr_g.stopping)) {
    struct pollfd p = {fr_g.wake_pipe[0], POLLIN, 0};
    if (poll(&p, fr_g.wake_pipe[0] >= 0 ? 1 : 0, (int)fr_g.cfg.poll_ms) > 0) {
      char buf[64];
      while (read(fr_g.wake_pipe[0], buf, sizeof buf) > 0) {
      }
    }
    if (!atomic_load_explicit(&fr_g.enabled, memory_order_relaxed)) continue;
    uint64_t now = fr_now_ns();
    if (last_poll && now - last_poll > stall_ns) stall_end_ns = now;
    last_poll = now;
    fr_scan_completion(&st, now, 1);
    fr_ringfile_heartbeat(now);
    uint32_t pending = atomic_exchange(&fr_g.dump_request, 0);
    if (pending & (1u << FRZ_TRIGGER_CRASH)) { /* first, whatever the episode */
      episode crash = ep;
      crash.trigger_rank = fr_g.proc.global_rank;
      crash.latency_us = 0;
      crash.trigger_time = now;
      snprintf(crash.text, sizeof crash.text, "fatal signal %d", atomic_load(&fr_g.crash_signal));
      dump_frame(FRZ_TRIGGER_CRASH, &crash);
      atomic_fetch_add(&fr_g.crash_dumps_done, 1);
      pending &= ~(1u << FRZ_TRIGGER_CRASH);
    }
    /* every request that came since the last poll, each its own frame, in
     * trigger order; none: the episode's own timeline */
    int served = 0;
    for (int t = 1; t < 32; t++)
      if (pending & (1u << t)) {
        step_episode(&ep, &st, t, now, &next_trigger_poll);
        served = 1;
      }
    if (!served) step_episode(&ep, &st, 0, now, &next_trigger_poll);
    /* once, when nothing asks for a dump: never ahead of one */
    if (!announced && !ep.active && !atomic_load(&fr_g.dump_request)) announced = fr_announce();
  }
  return NULL;
}

/* The dump signal's handler: only wakes the watchdog (async-signal-safe). */
static void on_dump_signal(int sig) {
  (void)sig;
  int saved = errno;
  fr_request_dump(FRZ_TRIGGER_SIGNAL);
  errno = saved;
}

/* Install the dump signal handler unless the application has its own. */
static void install_signal(void) {
  int sig = fr_g.cfg.dump_signal;
  if (sig <= 0) return;
  struct sigaction old;
  if (sigaction(sig, NULL, &old) != 0) return;
  if (old.sa_handler != SIG_DFL && old.sa_handler != SIG_IGN) {
    fr_log("signal %d already has a handler; FR_DUMP_SIGNAL not installed", sig);
    return;
  }
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_dump_signal;
  sa.sa_flags = SA_RESTART;
  sigemptyset(&sa.sa_mask);
  sigaction(sig, &sa, NULL);
}

int fr_watchdog_start(void) {
  int expect = 0;
  if (!atomic_compare_exchange_strong(&fr_g.watchdog_started, &expect, 1)) return 0;
  install_signal();
  fr_crash_handlers_install();
  pthread_attr_t a;
  pthread_attr_init(&a);
  pthread_attr_setstacksize(&a, 256 * 1024);
  pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED); /* never joined: it ends with the process */
  int e = pthread_create(&fr_g.watchdog, &a, watchdog_main, NULL);
  pthread_attr_destroy(&a);
  if (e != 0) {
    fr_log("cannot start the watchdog thread (%s); no hang detection", strerror(e));
    atomic_store(&fr_g.watchdog_started, 0);
    return -1;
  }
  return 0;
}

void fr_watchdog_stop(void) { atomic_store(&fr_g.stopping, 1); }
