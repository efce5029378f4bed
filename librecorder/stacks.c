/* stacks.c — the stack of every thread of the process, taken at dump time
 * (FR_STACKS, default on).
 *
 * The dumping thread lists /proc/self/task, gives each thread a preallocated
 * slot (state ASKED), sends it FR_STACK_SIGNAL with tgkill and waits at most
 * FR_STACK_TIMEOUT_MS for all of them together.  The handler, on the thread
 * itself, only claims its slot and fills it with backtrace() (primed at
 * start, so it does not allocate) from the interrupted instruction outwards;
 * it takes no lock and calls nothing that is not safe in a signal handler
 * once the unwinder is loaded.  A thread that does not answer in time is
 * recorded as such (masked, when /proc says it blocks the signal) and its
 * slot is given up: a late answer finds no request and changes nothing.
 * Frames are symbolised later, with the records' call sites, off the signal
 * path.
 */
#include <dirent.h>
#include <errno.h>
#include <execinfo.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include "recorder.h"
#include "stacks.h"

/* Slot states, in the low byte of a slot's word; the thread id above it, so
 * that "is this request for me" and "claim it" are one compare-and-swap. */
enum { SLOT_FREE = 0, SLOT_ASKED = 1, SLOT_WRITING = 2, SLOT_DONE = 3 };
#define WORD(tid, st) (((uint64_t)(tid) << 8) | (st))
#define WORD_STATE(w) ((unsigned)((w) & 0xff))
#define WORD_TID(w) ((uint32_t)((w) >> 8))

#define SKIP_MAX 8 /* handler and trampoline frames above the interrupted one */

typedef struct st_slot {
  _Atomic uint64_t word;          /* (tid << 8) | SLOT_* */
  uint32_t depth, truncated;
  uint64_t handle;                /* pthread_self() of the answering thread */
  uint64_t frames[FRZ_STACK_MAX];
} st_slot;

static st_slot *slots;            /* FR_STACK_THREADS, allocated at init */
static frz_stack *out;            /* the last collection, FR_STACK_OUT threads */
static _Atomic int ready;         /* handler installed, buffers allocated */

/* The interrupted instruction of a signal's context; 0 when unknown. */
static uintptr_t context_pc(const void *uc) {
  const ucontext_t *u = uc;
#if defined(__x86_64__)
  return (uintptr_t)u->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
  return (uintptr_t)u->uc_mcontext.pc;
#else
  (void)u;
  return 0;
#endif
}

static int in_self(uintptr_t a) { return a >= fr_g.self_lo && a < fr_g.self_hi; }

/* The calling thread's stack into frames[], outermost frames cut at
 * FRZ_STACK_MAX.  With a signal context, start at the interrupted
 * instruction; without, skip this library's frames.  Async-signal-safe once
 * fr_stacks_init has primed backtrace(). */
static uint32_t capture(uint64_t *frames, uint32_t *truncated, uintptr_t pc) {
  void *buf[FRZ_STACK_MAX + SKIP_MAX + 1];
  int cap = (int)(sizeof buf / sizeof buf[0]);
  int n = backtrace(buf, cap);
  int k = 0;
  if (pc) { /* the frame of the interrupted instruction, if the unwinder crossed the signal frame */
    while (k < n && k < SKIP_MAX && (uintptr_t)buf[k] != pc) k++;
    if (k == n || k == SKIP_MAX) pc = 0, k = 0;
  }
  if (!pc) { /* our frames, then (in a handler) the signal trampoline */
    while (k < n && in_self((uintptr_t)buf[k])) k++;
  }
  uint32_t got = 0;
  for (; k < n && got < FRZ_STACK_MAX; k++) frames[got++] = (uint64_t)(uintptr_t)buf[k];
  *truncated = k < n || n == cap;
  return got;
}

/* FR_STACK_SIGNAL's handler: fill this thread's slot if one asks for it. */
static void on_stack_signal(int sig, siginfo_t *si, void *uc) {
  (void)sig;
  int saved = errno;
  if (si && si->si_code == SI_TKILL && si->si_pid == getpid() && slots) {
    uint32_t me = (uint32_t)syscall(SYS_gettid);
    for (uint32_t i = 0; i < FR_STACK_THREADS; i++) {
      st_slot *s = &slots[i];
      uint64_t want = WORD(me, SLOT_ASKED);
      if (atomic_load_explicit(&s->word, memory_order_relaxed) != want) continue;
      if (!atomic_compare_exchange_strong(&s->word, &want, WORD(me, SLOT_WRITING))) continue;
      s->handle = (uint64_t)pthread_self();
      s->depth = capture(s->frames, &s->truncated, context_pc(uc));
      atomic_store_explicit(&s->word, WORD(me, SLOT_DONE), memory_order_release);
      break;
    }
  }
  errno = saved;
}

int fr_stacks_init(void) {
  if (!fr_g.cfg.stacks || atomic_load(&ready)) return 0;
  int sig = fr_g.cfg.stack_signal;
  struct sigaction old;
  if (sigaction(sig, NULL, &old) != 0) return -1;
  if ((old.sa_flags & SA_SIGINFO) ? old.sa_sigaction != NULL
                                  : (old.sa_handler != SIG_DFL && old.sa_handler != SIG_IGN)) {
    fr_log("signal %d (FR_STACK_SIGNAL) already has a handler; no thread stacks in dumps", sig);
    return -1;
  }
  slots = calloc(FR_STACK_THREADS, sizeof *slots);
  out = calloc(FR_STACK_OUT, sizeof *out);
  if (!slots || !out) {
    free(slots);
    free(out);
    slots = NULL;
    out = NULL;
    return -1;
  }
  fr_locate_self();
  void *prime[4]; /* the first backtrace() loads the unwinder (libgcc_s): not in a handler */
  backtrace(prime, 4);
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_stack_signal;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&sa.sa_mask);
  if (sigaction(sig, &sa, NULL) != 0) return -1;
  atomic_store(&ready, 1);
  return 0;
}

/* Read /proc/self/task/TID/FILE into buf (NUL-terminated); length or -1. */
static ssize_t read_task_file(uint32_t tid, const char *file, char *buf, size_t size) {
  char path[64];
  snprintf(path, sizeof path, "/proc/self/task/%u/%s", tid, file);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  ssize_t n = read(fd, buf, size - 1);
  close(fd);
  if (n < 0) return -1;
  buf[n] = '\0';
  return n;
}

/* Is signal sig in the mask of line `key` ("SigBlk", "SigPnd") of thread
 * tid's /proc status? */
static int sig_in(uint32_t tid, const char *key, int sig) {
  char buf[2048], k[16];
  if (read_task_file(tid, "status", buf, sizeof buf) < 0) return 0;
  snprintf(k, sizeof k, "\n%s:", key);
  const char *p = strstr(buf, k);
  if (!p) return 0;
  unsigned long long mask = strtoull(p + strlen(k), NULL, 16);
  return sig >= 1 && sig <= 64 && (mask >> (sig - 1)) & 1;
}

/* Does thread tid block the stack signal?  Then it cannot answer. */
static int blocks_signal(uint32_t tid) { return sig_in(tid, "SigBlk", fr_g.cfg.stack_signal); }

/* Is our signal held back in thread tid: blocked, and still pending there?
 * A thread running our handler blocks the signal too (the kernel blocks a
 * signal during its own handler) but has nothing pending: it is answering,
 * perhaps preempted before its first store, and is waited for. */
static int holds_signal(uint32_t tid) {
  return blocks_signal(tid) && sig_in(tid, "SigPnd", fr_g.cfg.stack_signal);
}

/* Threads that did not answer last time: asked again only when our signal
 * is no longer pending there (a real-time signal queues: never pile them up). */
static uint32_t silent[FR_STACK_OUT], nsilent;

static int was_silent(uint32_t tid) {
  for (uint32_t i = 0; i < nsilent; i++)
    if (silent[i] == tid) return 1;
  return 0;
}

static void thread_name(uint32_t tid, char *name) {
  char buf[64];
  ssize_t n = read_task_file(tid, "comm", buf, sizeof buf);
  if (n <= 0) return;
  size_t len = strcspn(buf, "\n");
  if (len >= FRZ_THREAD_NAME_MAX) len = FRZ_THREAD_NAME_MAX - 1;
  memcpy(name, buf, len);
  name[len] = '\0';
}

/* A free slot for a request, from `*next` on; NULL when none is left (a
 * slot still WRITING from an earlier, abandoned request is never reused). */
static st_slot *free_slot(uint32_t *next) {
  for (; *next < FR_STACK_THREADS; (*next)++) {
    st_slot *s = &slots[*next];
    uint64_t w = atomic_load(&s->word);
    if (WORD_STATE(w) == SLOT_WRITING) continue;
    if (WORD_STATE(w) == SLOT_ASKED && !atomic_compare_exchange_strong(&s->word, &w, SLOT_FREE))
      continue;
    return &slots[(*next)++];
  }
  return NULL;
}

static uint64_t elapsed_ns(uint64_t t0) { return fr_now_ns() - t0; }

#define MASK_CHECK_NS 200000ull /* after 0.2 ms, stop waiting for threads that block the signal */

/* Wait until every asked slot answered or the deadline passed; threads
 * found blocking the signal are flagged in masked[] and not waited for. */
static void wait_answers(const uint32_t *slot_of, uint8_t *masked, uint32_t n, uint64_t t0,
                         uint64_t limit_ns) {
  struct timespec tick = {0, 20 * 1000};
  int checked = 0;
  for (;;) {
    uint32_t pending = 0;
    int check = !checked && elapsed_ns(t0) >= MASK_CHECK_NS;
    for (uint32_t i = 0; i < n; i++) {
      if (slot_of[i] == UINT32_MAX || masked[i] ||
          WORD_STATE(atomic_load_explicit(&slots[slot_of[i]].word, memory_order_acquire)) == SLOT_DONE)
        continue;
      if (check && holds_signal(out[i].tid)) masked[i] = 1;
      else pending++;
    }
    checked |= check;
    if (!pending || elapsed_ns(t0) >= limit_ns) return;
    nanosleep(&tick, NULL);
  }
}

/* The outcome of a thread's request into t; gives the slot up. */
static void take_answer(frz_stack *t, uint32_t slot, int masked) {
  st_slot *s = &slots[slot];
  uint64_t w = atomic_load_explicit(&s->word, memory_order_acquire);
  if (WORD_STATE(w) == SLOT_ASKED && atomic_compare_exchange_strong(&s->word, &w, SLOT_FREE)) {
    t->status = masked || holds_signal(t->tid) ? FRZ_STACK_MASKED : FRZ_STACK_NO_ANSWER;
    return;
  }
  if (WORD_STATE(w) == SLOT_WRITING) { /* answering right now: a short grace */
    uint64_t t0 = fr_now_ns();
    while (WORD_STATE(atomic_load(&s->word)) == SLOT_WRITING && elapsed_ns(t0) < 10000000ull)
      sched_yield();
    w = atomic_load_explicit(&s->word, memory_order_acquire);
  }
  if (WORD_STATE(w) != SLOT_DONE) { /* still writing: abandoned, the slot stays out of use */
    t->status = FRZ_STACK_NO_ANSWER;
    return;
  }
  t->status = FRZ_STACK_OK;
  t->depth = s->depth;
  t->thread_handle = s->handle;
  if (s->truncated) t->flags |= FRZ_TF_TRUNCATED;
  memcpy(t->frames, s->frames, s->depth * sizeof s->frames[0]);
  atomic_store(&s->word, SLOT_FREE);
}

/* This thread's name ("fr-watchdog" for the recorder's own thread). */
static int self_is_watchdog(void) {
  char me[17] = {0};
  prctl(PR_GET_NAME, me, 0, 0, 0);
  return strcmp(me, "fr-watchdog") == 0;
}

/* Ask thread `tid` for its stack (t is its entry); the slot used, or
 * UINT32_MAX when it was not asked (t->status says why). */
static uint32_t ask(frz_stack *t, uint32_t *next) {
  if (was_silent(t->tid) && sig_in(t->tid, "SigPnd", fr_g.cfg.stack_signal)) {
    t->status = blocks_signal(t->tid) ? FRZ_STACK_MASKED : FRZ_STACK_NO_ANSWER;
    return UINT32_MAX; /* last time's signal is still pending there */
  }
  st_slot *s = free_slot(next);
  if (!s) {
    t->status = FRZ_STACK_SKIPPED;
    return UINT32_MAX;
  }
  s->depth = 0;
  atomic_store_explicit(&s->word, WORD(t->tid, SLOT_ASKED), memory_order_release);
  if (syscall(SYS_tgkill, (pid_t)getpid(), (pid_t)t->tid, fr_g.cfg.stack_signal) != 0) {
    t->status = errno == ESRCH ? FRZ_STACK_GONE : FRZ_STACK_NO_ANSWER;
    uint64_t w = WORD(t->tid, SLOT_ASKED);
    atomic_compare_exchange_strong(&s->word, &w, SLOT_FREE);
    return UINT32_MAX;
  }
  return (uint32_t)(s - slots);
}

frz_stack *fr_stacks_collect(uint32_t *nout) {
  *nout = 0;
  if (!atomic_load(&ready)) return NULL;
  uint64_t t0 = fr_now_ns();
  uint32_t self = (uint32_t)syscall(SYS_gettid), pid = (uint32_t)getpid();
  int skip_self = self_is_watchdog();
  DIR *d = opendir("/proc/self/task");
  if (!d) return NULL;
  static uint32_t slot_of[FR_STACK_OUT]; /* under the dump lock */
  static uint8_t masked[FR_STACK_OUT];
  uint32_t n = 0, next = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL && n < FR_STACK_OUT) {
    char *end;
    unsigned long tid = strtoul(e->d_name, &end, 10);
    if (e->d_name[0] < '0' || e->d_name[0] > '9' || *end || tid == 0) continue;
    if (tid == self && skip_self) continue; /* the recorder's own thread */
    frz_stack *t = &out[n];
    memset(t, 0, sizeof *t);
    t->tid = (uint32_t)tid;
    if (t->tid == pid) t->flags |= FRZ_TF_MAIN;
    slot_of[n] = UINT32_MAX;
    masked[n] = 0;
    if (t->tid == self) { /* a dump on an application thread (exit): its own stack, directly */
      uint32_t trunc;
      t->flags |= FRZ_TF_DUMPER;
      t->depth = capture(t->frames, &trunc, 0);
      if (trunc) t->flags |= FRZ_TF_TRUNCATED;
      t->thread_handle = (uint64_t)pthread_self();
    } else {
      slot_of[n] = ask(t, &next);
    }
    n++;
  }
  closedir(d);
  for (uint32_t i = 0; i < n; i++) thread_name(out[i].tid, out[i].name); /* while they answer */
  wait_answers(slot_of, masked, n, t0, (uint64_t)fr_g.cfg.stack_timeout_ms * 1000000ull);
  nsilent = 0;
  for (uint32_t i = 0; i < n; i++) {
    if (slot_of[i] != UINT32_MAX) take_answer(&out[i], slot_of[i], masked[i]);
    if (out[i].status == FRZ_STACK_MASKED || out[i].status == FRZ_STACK_NO_ANSWER)
      silent[nsilent++] = out[i].tid;
  }
  *nout = n;
  return out;
}

void fr_stacks_mark(frz_stack *t, uint32_t n, const frz_record *recs, uint64_t nrec) {
  if (!n || !nrec) return;
  uint32_t last = recs[nrec - 1].tid; /* records are in id order: the newest last */
  for (uint32_t i = 0; i < n; i++)
    if (t[i].tid == last) t[i].flags |= FRZ_TF_LAST_NCCL;
  for (uint64_t k = nrec; k-- > 0;) {
    if (!(recs[k].flags & FRZ_RF_IN_CALL)) continue;
    for (uint32_t i = 0; i < n; i++)
      if (t[i].tid == recs[k].tid && !(t[i].flags & FRZ_TF_IN_NCCL)) {
        t[i].flags |= FRZ_TF_IN_NCCL;
        t[i].record_id = recs[k].id;
      }
  }
}
