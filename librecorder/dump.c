/* dump.c — one snapshot of this process to FR_DUMP_DIR, and the shared
 * trigger file.
 *
 * A dump is written to a temporary name in the dump directory, fsync'd and
 * renamed (frz_write_file_atomic), so readers never see a partial file under
 * the final name `<job>-r<rank:05>-f<frame:04>.frz`.  The directory is
 * created 0700, files are 0600, and neither the directory's nor the file's
 * last component is followed through a symlink.  On failure one line goes to
 * stderr and the job carries on.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "frz_ring.h"
#include "identity.h"
#include "profiler.h"
#include "recorder.h"
#include "stacks.h"

#define TRIGGER_NAME "TRIGGER"
#define TRIGGER_MAX 512

#define MAX_SITES 8192
#define STACK_ADDRS ((uint64_t)FR_STACK_OUT * FRZ_STACK_MAX)

static frz_record *snap;   /* capacity records, allocated at first dump */
static uint64_t *addrs;    /* capacity call-site addresses, for symbolising */
static frz_callsite *sites; /* MAX_SITES symbolised call sites */
static frz_backtrace *bts; /* FR_BACKTRACE: one per retained record */
static frz_comm *csnap;    /* FR_MAX_COMMS comms */
static frz_proxy *psnap;   /* proxy progress of pctx contexts (NCCL loaded the plugin) */
static frz_kernel_ch *ksnap;
static int pctx;
static int failed_once;
static uint64_t handled_mtime; /* the newest trigger file already acted on (watchdog thread) */

/* Create the dump directory (0700) if needed; refuse a symlink as its last
 * component (ELOOP: said plainly by the caller). */
int fr_ensure_dump_dir(const char *dir) {
  if (mkdir(dir, 0700) != 0 && errno != EEXIST) return -1;
  struct stat sb;
  if (lstat(dir, &sb) == 0 && S_ISLNK(sb.st_mode)) {
    errno = ELOOP;
    return -1;
  }
  int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return -1;
  close(fd);
  return 0;
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return (x > y) - (x < y);
}

/* Symbolise the distinct call sites of the retained records, their
 * backtraces and the threads' stacks with dladdr: module file name, nearest
 * exported symbol, offset.  Returns how many. */
static uint32_t symbolize(const frz_record *recs, uint64_t n, const frz_backtrace *b, uint64_t nb,
                          const frz_stack *t, uint32_t nt) {
  uint64_t m = 0;
  for (uint64_t k = 0; k < n; k++)
    if (recs[k].call_site) addrs[m++] = recs[k].call_site;
  for (uint64_t k = 0; k < nb; k++)
    for (uint32_t i = 0; i < b[k].depth; i++) addrs[m++] = b[k].frames[i];
  for (uint32_t k = 0; k < nt; k++)
    for (uint32_t i = 0; i < t[k].depth; i++) addrs[m++] = t[k].frames[i];
  qsort(addrs, (size_t)m, sizeof *addrs, cmp_u64);
  uint32_t ns = 0;
  for (uint64_t k = 0; k < m && ns < MAX_SITES; k++) {
    if (k && addrs[k] == addrs[k - 1]) continue;
    frz_callsite *c = &sites[ns++];
    memset(c, 0, sizeof *c);
    c->address = addrs[k];
    Dl_info info;
    /* a return address points after the call: look up the byte before it */
    if (!dladdr((void *)(uintptr_t)(addrs[k] - 1), &info)) continue;
    const char *base = info.dli_fname ? strrchr(info.dli_fname, '/') : NULL;
    snprintf(c->module, sizeof c->module, "%s",
             base ? base + 1 : (info.dli_fname ? info.dli_fname : ""));
    if (info.dli_sname) snprintf(c->symbol, sizeof c->symbol, "%s", info.dli_sname);
    uintptr_t start = info.dli_sname ? (uintptr_t)info.dli_saddr : (uintptr_t)info.dli_fbase;
    c->offset = addrs[k] - start;
  }
  return ns;
}

/* The backtraces of the retained records (FR_BACKTRACE), dropping any whose
 * slot was reused while copying.  Returns how many. */
static uint64_t collect_backtraces(const frz_record *recs, uint64_t n) {
  uint64_t nb = 0;
  uint32_t want = fr_g.cfg.backtrace_depth;
  for (uint64_t k = 0; k < n; k++) {
    uint64_t slot = recs[k].id & fr_g.ring.mask;
    frz_backtrace *b = &bts[nb];
    memset(b, 0, sizeof *b);
    b->record_id = recs[k].id;
    b->depth = fr_g.bt_depth[slot] < want ? fr_g.bt_depth[slot] : want;
    memcpy(b->frames, &fr_g.bt[slot * want], b->depth * sizeof b->frames[0]);
    if (b->depth && fr_ring_get(&fr_g.ring, recs[k].id)) nb++;
  }
  return nb;
}

/* Per-comm summary: the registry's fields, then the seqs the retained
 * records give (frz_comms_summarize, shared with the ring reader). */
static uint32_t summarize_comms(const frz_record *recs, uint64_t n) {
  uint32_t nc = fr_comm_count();
  for (uint32_t i = 0; i < nc; i++) {
    fr_comm *c = fr_comm_at(i);
    frz_comm *o = &csnap[i];
    memset(o, 0, sizeof *o);
    o->comm_id = c->comm_id;
    o->nccl_comm_hash = __atomic_load_n(&c->nccl_hash, __ATOMIC_RELAXED); /* bound with the profiler context */
    o->parent_id = __atomic_load_n(&c->parent_id, __ATOMIC_RELAXED); /* a shrink's, set just after registration */
    o->handle = __atomic_load_n(&c->handle, __ATOMIC_RELAXED); /* bound when an init returns */
    o->nranks = c->nranks;
    o->rank = c->rank;
    o->split_color = __atomic_load_n(&c->split_color, __ATOMIC_RELAXED); /* a split's, set just after registration */
    o->split_key = __atomic_load_n(&c->split_key, __ATOMIC_RELAXED);
    o->flags = atomic_load(&c->flags);
    o->cuda_device = __atomic_load_n(&c->cuda_device, __ATOMIC_RELAXED); /* set just after registration */
    o->next_seq = atomic_load(&c->next_seq);
    o->dropped_records = atomic_load(&c->nrecords);
  }
  return frz_comms_summarize(csnap, nc, recs, n) == 0 ? nc : 0;
}

int fr_dump_write(int trigger, uint32_t frame, uint64_t trigger_time_ns, int trigger_rank,
                  uint32_t trigger_latency_us, const char *trigger_text) {
  pthread_mutex_lock(&fr_g.dump_lock);
  int rc = -1;
  void *buf = NULL;
  size_t len = 0;
  frz_error err;
  if (!snap) snap = malloc(fr_g.ring.capacity * sizeof *snap);
  if (!csnap) csnap = malloc(FR_MAX_COMMS * sizeof *csnap);
  if (!addrs)
    addrs = malloc((fr_g.ring.capacity * (1 + fr_g.cfg.backtrace_depth) + STACK_ADDRS) * sizeof *addrs);
  if (!sites) sites = malloc(MAX_SITES * sizeof *sites);
  if (fr_g.bt && !bts) bts = malloc(fr_g.ring.capacity * sizeof *bts);
  if (!snap || !csnap || !addrs || !sites || (fr_g.bt && !bts)) {
    snprintf(err.msg, sizeof err.msg, "out of memory");
    goto out;
  }
  uint32_t nst = 0, npy = 0; /* every thread's stack first: the state the records end in */
  frz_stack *stk = fr_g.cfg.stacks ? fr_stacks_collect(&nst) : NULL;
  scan_state st = {0}; /* the latest word from the events, e.g. at exit */
  /* GPU times only on the watchdog thread: the reference makes a context
   * current on the calling thread, never to be done on the job's own */
  fr_scan_completion(&st, fr_now_ns(), fr_on_watchdog_thread());
  uint64_t first = 0;
  uint64_t n = fr_ring_snapshot(&fr_g.ring, snap, &first);
  for (uint64_t k = 0; k < n; k++) /* unstamped records were cut short by the dump */
    if (snap[k].result == -1) snap[k].flags |= FRZ_RF_IN_CALL;
  fr_stacks_mark(stk, nst, snap, n);
  frz_pyframe *py = fr_g.cfg.py_stacks ? fr_pystacks_collect(stk, nst, &npy) : NULL;
  uint32_t nc = summarize_comms(snap, n);
  frz_process p = fr_g.proc;
  p.anchor_monotonic_ns = fr_now_ns();
  p.anchor_realtime_ns = fr_realtime_ns();
  p.trigger = (uint32_t)trigger;
  p.frame = frame;
  p.frame_time_ns = p.anchor_monotonic_ns;
  p.trigger_time_ns = trigger_time_ns;
  p.trigger_rank = trigger_rank;
  p.trigger_latency_us = trigger_latency_us;
  p.records_total = fr_ring_head(&fr_g.ring);
  p.records_dropped = p.records_total - n;
  snprintf(p.trigger_text, sizeof p.trigger_text, "%s", trigger_text ? trigger_text : "");
  if (!p.job_id[0] && nc > 0)
    snprintf(p.job_id, sizeof p.job_id, "%016llx", (unsigned long long)csnap[0].comm_id);
  uint64_t nb = fr_g.bt ? collect_backtraces(snap, n) : 0;
  frz_extras x = {.callsites = sites, .ncallsites = symbolize(snap, n, bts, nb, stk, nst),
                  .backtraces = bts, .nbacktraces = nb, .stacks = stk, .nstacks = nst,
                  .pyframes = py, .npyframes = npy};
  int nctx = fr_prof_ctx_count();
  if (nctx > pctx) { /* more comms profiled since the last dump */
    free(psnap);
    free(ksnap);
    psnap = malloc((size_t)nctx * FR_PROF_LINKS * sizeof *psnap);
    ksnap = malloc((size_t)nctx * FR_PROF_CHANNELS * sizeof *ksnap);
    pctx = psnap && ksnap ? nctx : 0;
  }
  if (nctx && pctx >= nctx) { /* without the memory, a dump without progress */
    x.proxy = psnap;
    x.nproxy = fr_prof_snapshot_proxy(psnap, (uint64_t)nctx * FR_PROF_LINKS);
    x.kernel_ch = ksnap;
    x.nkernel_ch = fr_prof_snapshot_kernel(ksnap, (uint32_t)nctx * FR_PROF_CHANNELS);
  }
  p.flags |= atomic_load_explicit(&fr_g.late_flags, memory_order_relaxed);
  if (frz_encode_ex(&p, csnap, nc, snap, n, &x, 3, &buf, &len, &err) != FRZ_OK) goto out;
  if (fr_ensure_dump_dir(fr_g.cfg.dump_dir) != 0) {
    if (errno == ELOOP)
      snprintf(err.msg, sizeof err.msg, "%.300s: the dump directory is a symbolic link, which the "
               "recorder does not follow; give FR_DUMP_DIR its real path", fr_g.cfg.dump_dir);
    else
      snprintf(err.msg, sizeof err.msg, "%.300s: cannot create or open the dump directory: %s",
               fr_g.cfg.dump_dir, strerror(errno));
    goto out;
  }
  char name[160];
  frz_dump_filename(name, sizeof name, p.job_id[0] ? p.job_id : "job", p.global_rank, p.pid, frame);
  /* a file-size limit must fail the write (EFBIG), not kill the job with
   * SIGXFSZ: the exit dump runs on an application thread */
  sigset_t xfsz, old;
  sigemptyset(&xfsz);
  sigaddset(&xfsz, SIGXFSZ);
  pthread_sigmask(SIG_BLOCK, &xfsz, &old);
  frz_status ws = frz_write_file_atomic(fr_g.cfg.dump_dir, name, buf, len, &err);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (ws != FRZ_OK) goto out;
  rc = 0;
  fr_ringfile_frames(frame + 1);
  if (fr_on_watchdog_thread()) fr_ringfile_salvage_neighbours(); /* dead ranks of this node */
out:
  if (rc != 0 && !failed_once) {
    failed_once = 1;
    fr_log("dump failed: %s (the job continues)", err.msg);
  }
  free(buf);
  atomic_fetch_add(&fr_g.dumps_done, 1);
  pthread_mutex_unlock(&fr_g.dump_lock);
  return rc;
}

/* Was the trigger file at `path` written before this process started
 * (left by an earlier job)?  A second of slack covers clock skew between
 * the nodes of a shared filesystem. */
static uint64_t mtime_ns(const struct stat *sb) {
  return (uint64_t)sb->st_mtim.tv_sec * 1000000000ull + (uint64_t)sb->st_mtim.tv_nsec;
}

/* Is a trigger file last modified at `mtime` one we need not act on: written
 * before this process started (left by an earlier job; a second of slack
 * covers clock skew between the nodes of a shared filesystem), or already
 * acted on? */
static int stale_mtime(uint64_t mtime) {
  return mtime + 1000000000ull < fr_g.start_realtime_ns || (handled_mtime && mtime <= handled_mtime);
}

/* The same for the regular file at `path` (0 for anything else). */
static int trigger_is_stale(const char *path) {
  struct stat sb;
  if (lstat(path, &sb) != 0 || !S_ISREG(sb.st_mode)) return 0;
  return stale_mtime(mtime_ns(&sb));
}

/* Remember the trigger file now at `path` as acted on. */
static void trigger_handled(const char *path) {
  struct stat sb;
  if (lstat(path, &sb) == 0 && mtime_ns(&sb) > handled_mtime) handled_mtime = mtime_ns(&sb);
}

void fr_trigger_file_answered(uint64_t realtime_ns) {
  if (realtime_ns > handled_mtime) handled_mtime = realtime_ns;
}

int fr_trigger_file_create(const char *reason) {
  char path[600], tmp[640], line[TRIGGER_MAX];
  if (fr_ensure_dump_dir(fr_g.cfg.dump_dir) != 0) return -1;
  snprintf(path, sizeof path, "%s/" TRIGGER_NAME, fr_g.cfg.dump_dir);
  snprintf(tmp, sizeof tmp, "%s/.TRIGGER.tmp.%u", fr_g.cfg.dump_dir, (unsigned)getpid());
  int n = frz_trigger_line_format(line, sizeof line, fr_g.proc.global_rank, fr_realtime_ns(), reason);
  if (n < 0) return -1;
  int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return -1;
  int ok = write(fd, line, (size_t)n) == n;
  close(fd);
  /* link() never replaces an existing trigger: the first one wins; but one
   * left by an earlier job in a reused directory is replaced */
  if (ok && link(tmp, path) != 0) {
    if (errno != EEXIST) {
      ok = 0;
    } else if (trigger_is_stale(path) && rename(tmp, path) == 0) {
      trigger_handled(path);
      return 0;
    }
  }
  unlink(tmp);
  if (ok) trigger_handled(path);
  return ok ? 0 : -1;
}

/* Act on the file at TRIGGER?  It is opened before anything else is
 * looked at, non-blocking and without following a symlink, and fstat'd:
 * only a regular file can be a trigger, so a FIFO, socket or device planted
 * there can neither block the watchdog nor be read.  At most TRIGGER_MAX
 * bytes of it are read. */
int fr_trigger_file_seen(int *rank, uint64_t *time_ns, char *text, size_t textlen) {
  char path[600], buf[TRIGGER_MAX];
  struct stat sb;
  snprintf(path, sizeof path, "%s/" TRIGGER_NAME, fr_g.cfg.dump_dir);
  int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd >= 0 ? fstat(fd, &sb) != 0 : lstat(path, &sb) != 0) sb.st_mode = 0;
  /* a regular file we may not read is still a trigger, without a text */
  if (!S_ISREG(sb.st_mode) || stale_mtime(mtime_ns(&sb))) {
    if (fd >= 0) close(fd);
    return 0; /* not a trigger; or an earlier job's, or acted on already */
  }
  if (mtime_ns(&sb) > handled_mtime) handled_mtime = mtime_ns(&sb);
  *rank = -1;
  *time_ns = 0;
  snprintf(text, textlen, "trigger file");
  if (fd < 0) return 1;
  ssize_t n = read(fd, buf, TRIGGER_MAX);
  close(fd);
  if (n <= 0) return 1;
  frz_trigger_line t;
  if (frz_trigger_line_parse(buf, (size_t)n, &t) != 0) return 1; /* garbage: still a trigger */
  *rank = t.rank;
  *time_ns = t.time_ns;
  if (t.reason[0]) snprintf(text, textlen, "%s", t.reason);
  return 1;
}
