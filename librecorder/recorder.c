/* recorder.c — load-time set-up of librecorder.so, the fork-child reset,
 * exit handling, clocks and resolution of the real NCCL functions.
 *
 * The constructor only reads the environment and allocates the ring; it
 * prints nothing and starts no thread.  The watchdog starts when the process
 * first creates a communicator, so processes that never use NCCL (a shell,
 * a data-loader worker) see nothing of the recorder.
 */
#include <dlfcn.h>
#include <execinfo.h>
#include <link.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "identity.h"
#include "recorder.h"
#include "relay.h"
#include "stacks.h"

fr_global fr_g = {.dump_lock = PTHREAD_MUTEX_INITIALIZER, .wake_pipe = {-1, -1}};

uint64_t fr_now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

uint64_t fr_realtime_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_REALTIME, &t);
  return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* dl_iterate_phdr callback: the first loaded object whose path names NCCL
 * (libnccl*) or RCCL (librccl*, ROCm's NCCL: the same API). */
static int find_nccl_object(struct dl_phdr_info *info, size_t size, void *out) {
  (void)size;
  const char *base = info->dlpi_name ? strrchr(info->dlpi_name, '/') : NULL;
  base = base ? base + 1 : info->dlpi_name;
  if (!base || (strncmp(base, "libnccl", 7) != 0 && strncmp(base, "librccl", 7) != 0)) return 0;
  void *h = dlopen(info->dlpi_name, RTLD_LAZY | RTLD_NOLOAD);
  if (h && dlsym(h, "pncclGetVersion")) {
    *(void **)out = h;
    return 1;
  }
  return 0;
}

/* dl_iterate_phdr callback: the executable segments of the object whose
 * load address is *(uintptr_t *)data, i.e. this library. */
static int find_self(struct dl_phdr_info *info, size_t size, void *data) {
  (void)size;
  if (info->dlpi_addr != *(uintptr_t *)data) return 0;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X)) continue;
    uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
    if (!fr_g.self_lo || lo < fr_g.self_lo) fr_g.self_lo = lo;
    if (hi > fr_g.self_hi) fr_g.self_hi = hi;
  }
  return 1;
}

void fr_locate_self(void) {
  if (fr_g.self_hi) return;
  Dl_info info;
  if (!dladdr((void *)&fr_on_first_comm, &info)) return;
  uintptr_t base = (uintptr_t)info.dli_fbase;
  /* dlpi_addr is the load bias: 0 for non-PIE objects, the base otherwise */
  dl_iterate_phdr(find_self, &base);
}

/* NCCL loaded in a local scope (a Python extension dlopen()ed with
 * RTLD_LOCAL, as PyTorch's libtorch_cuda.so or libtorch_hip.so is) is not found by
 * dlsym(RTLD_NEXT): look for the loaded library itself. */
static void *loaded_nccl(void) {
  static void *_Atomic handle;
  void *h = atomic_load(&handle);
  if (h) return h;
  h = dlopen("libnccl.so.2", RTLD_LAZY | RTLD_NOLOAD);
  if (!h) h = dlopen("libnccl.so", RTLD_LAZY | RTLD_NOLOAD);
  if (!h) h = dlopen("librccl.so.1", RTLD_LAZY | RTLD_NOLOAD);
  if (!h) dl_iterate_phdr(find_nccl_object, &h);
  if (h) atomic_store(&handle, h);
  return h;
}

void *fr_resolve(const char *pname, const char *name) {
  void *p = dlsym(RTLD_NEXT, pname);
  if (!p) p = dlsym(RTLD_NEXT, name);
  if (p) return p;
  void *h = loaded_nccl();
  if (!h) return NULL;
  p = dlsym(h, pname);
  if (!p) p = dlsym(h, name);
  return p;
}

void fr_note_missing(const char *name) {
  static _Atomic int said;
  if (!atomic_exchange(&said, 1))
    fr_log("%s is not in the loaded NCCL (too old, or NCCL not loaded); returning ncclInvalidUsage",
           name);
}

void fr_request_dump(int trigger) {
  if (trigger > 0 && trigger < 32) atomic_fetch_or(&fr_g.dump_request, 1u << trigger);
  if (fr_g.wake_pipe[1] >= 0) {
    ssize_t w = write(fr_g.wake_pipe[1], "d", 1);
    (void)w;
  }
}

void fr_watchdog_wake(void) {
  if (fr_g.wake_pipe[1] >= 0) {
    ssize_t w = write(fr_g.wake_pipe[1], "a", 1);
    (void)w;
  }
}

/* NCCL's version code through the real ncclGetVersion; 0 when unknown. */
static int32_t nccl_version(void) {
  typedef ncclResult_t (*ver_fn)(int *);
  ver_fn f = (ver_fn)fr_resolve("pncclGetVersion", "ncclGetVersion");
  int v = 0;
  if (!f || f(&v) != ncclSuccess) return 0;
  return v;
}

/* exit()'s status: a ring file stays after a failure (ringfile.c). */
static void at_exit_status(int status, void *arg) {
  (void)arg;
  if (status != 0 && atomic_load(&fr_g.enabled) && fr_g.cfg.track_completion) {
    /* the ring file is the last word: what the events say now, not at the
     * watchdog's last poll (no GPU times off the watchdog's thread) */
    scan_state st = {0};
    fr_scan_completion(&st, fr_now_ns(), 0);
  }
  fr_ringfile_exit(status);
}

/* The set-up the first communicator needs, run once (pthread_once: a
 * thread that races the first init waits until it is complete, so no
 * wrapper sees libcuda half resolved). */
static void first_comm_setup(void) {
  atomic_store(&fr_g.log_ready, 1);
  fr_log_flush();
  fr_g.proc.nccl_version = nccl_version();
  fr_ringfile_open(); /* before the first comm is registered: the table moves into it */
  /* registered here, in main's time, not at load: the handlers run in
   * reverse order, and the libraries' destructors (which remove the file
   * after a clean exit) were registered by then, so this runs before them */
  on_exit(at_exit_status, NULL);
  if (fr_g.cfg.backtrace_depth) { /* the first backtrace() loads libgcc_s: not on an op */
    void *prime[2];
    fr_locate_self();
    backtrace(prime, 2);
  }
  if (fr_g.cfg.stacks && fr_stacks_init() != 0) fr_g.cfg.stacks = 0;
  if (fr_g.cfg.track_completion) fr_device_init(); /* CUDA or HIP; says once when neither works */
  fr_relay_start(); /* first: the watchdog reads what it set */
  fr_watchdog_start();
}

static pthread_once_t first_comm_once = PTHREAD_ONCE_INIT;

void fr_on_first_comm(void) { pthread_once(&first_comm_once, first_comm_setup); }

/* In a forked child: no watchdog thread exists there; stay inert. */
static void child_after_fork(void) {
  atomic_store(&fr_g.enabled, 0);
  atomic_store(&fr_g.watchdog_started, 1); /* never start one */
  pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
  memcpy(&fr_g.dump_lock, &fresh, sizeof fresh);
  fr_comms_reset();
  fr_relay_forget();
}

static void at_exit_dump(void) {
  if (!atomic_load(&fr_g.enabled) || fr_comm_count() == 0) return;
  fr_dump_write(FRZ_TRIGGER_EXIT, atomic_fetch_add(&fr_g.next_frame, 1), fr_now_ns(),
                fr_g.proc.global_rank, 0, "process exit");
}

__attribute__((constructor)) static void fr_load(void) {
  fr_g.proc.pid = (uint32_t)getpid();
  fr_g.proc.global_rank = fr_env_global_rank();
  fr_config_load(&fr_g.cfg);
  if (fr_g.cfg.disable) return;
  if (fr_ring_init(&fr_g.ring, fr_g.cfg.buffer_entries) != 0) return;
  if (fr_g.cfg.backtrace_depth) {
    fr_g.bt = calloc(fr_g.ring.capacity * fr_g.cfg.backtrace_depth, sizeof *fr_g.bt);
    fr_g.bt_depth = calloc(fr_g.ring.capacity, 1);
    if (!fr_g.bt || !fr_g.bt_depth) { /* go on without backtraces */
      free(fr_g.bt);
      free(fr_g.bt_depth);
      fr_g.bt = NULL;
      fr_g.bt_depth = NULL;
      fr_g.cfg.backtrace_depth = 0;
    }
  }
  frz_process *p = &fr_g.proc;
  p->world_size = fr_env_world_size();
  p->local_rank = fr_env_local_rank();
  if (gethostname(p->host, sizeof p->host - 1) != 0) strcpy(p->host, "unknown");
  memcpy(p->job_id, fr_g.cfg.job_id, sizeof p->job_id);
  p->recorder_version = FR_RECORDER_VERSION;
  p->ring_capacity = (uint32_t)fr_g.ring.capacity;
  p->trigger_rank = -1;
  fr_g.start_realtime_ns = fr_realtime_ns();
  if (pipe2(fr_g.wake_pipe, O_CLOEXEC | O_NONBLOCK) != 0) fr_g.wake_pipe[0] = fr_g.wake_pipe[1] = -1;
  pthread_atfork(NULL, NULL, child_after_fork);
  if (fr_g.cfg.dump_on_exit) atexit(at_exit_dump);
  fr_prof_setup_env();
  fr_g.initialized = 1;
  atomic_store(&fr_g.enabled, 1);
}

/* At process exit: stop the watchdog, and let a dump in progress finish
 * (up to 2 s) rather than cut it off, which would lose it and leave its
 * temporary file behind.  (The FR_DUMP_ON_EXIT dump may still come after
 * this: atexit handlers of a library run at its unloading.) */
__attribute__((destructor)) static void fr_unload(void) {
  fr_watchdog_stop();
  if (!fr_g.initialized) return;
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until);
  until.tv_sec += 2;
  if (pthread_mutex_timedlock(&fr_g.dump_lock, &until) == 0) pthread_mutex_unlock(&fr_g.dump_lock);
  fr_relay_stop();      /* leaves PMIx if it joined: a launcher counts a join without a leave as a failure */
  fr_announce_remove(); /* a clean exit: no longer alive */
  fr_ringfile_close();
}
