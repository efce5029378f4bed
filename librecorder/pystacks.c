/* pystacks.c — the Python frames of every thread, when the process hosts
 * CPython (FR_PY_STACKS=1; the usual PyTorch case).
 *
 * Best effort, the way Python's faulthandler does it from its watchdog
 * thread: the interpreter's own _Py_DumpTracebackThreads(fd, interp, NULL)
 * (exported by libpython and the python executable; found with dlsym at run
 * time, never linked) writes every thread's traceback as text into a memfd,
 * without taking the GIL; we parse that text.  Its lines, in CPython 3.8 to
 * 3.13:
 *
 *   Thread 0x00007f1c2a1fe640 (most recent call first):
 *     File "/app/train.py", line 42 in load_batch
 *
 * ("Current thread 0x..." for the calling thread).  The hex number is the
 * thread's pthread_t, which the stack signal's handler recorded for each
 * native thread: that ties Python frames to Linux thread ids.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "recorder.h"
#include "stacks.h"

#define PY_TEXT_MAX (4u << 20) /* bytes of traceback text read at most */
#define PY_FRAMES_MAX 4096     /* frames kept per dump */

typedef const char *(*dump_threads_fn)(int fd, void *interp, void *tstate);
typedef int (*int_fn)(void);
typedef void *(*ptr_fn)(void);

static frz_pyframe *frames; /* PY_FRAMES_MAX, allocated at first use */
static char *text;          /* PY_TEXT_MAX + 1 */

/* The interpreter's traceback text in `text`; its length, or -1. */
static ssize_t dump_text(void) {
  static dump_threads_fn dump;
  static int_fn initialized;
  static ptr_fn main_interp;
  static int looked;
  if (!looked) {
    looked = 1;
    dump = (dump_threads_fn)dlsym(RTLD_DEFAULT, "_Py_DumpTracebackThreads");
    initialized = (int_fn)dlsym(RTLD_DEFAULT, "Py_IsInitialized");
    main_interp = (ptr_fn)dlsym(RTLD_DEFAULT, "PyInterpreterState_Main");
  }
  if (!dump || !initialized || !initialized()) return -1;
  int fd = memfd_create("fr-pystacks", MFD_CLOEXEC);
  if (fd < 0) return -1;
  const char *why = dump(fd, main_interp ? main_interp() : NULL, NULL);
  ssize_t n = -1;
  if (!why && lseek(fd, 0, SEEK_SET) == 0) {
    size_t got = 0;
    ssize_t r;
    while (got < PY_TEXT_MAX && (r = read(fd, text + got, PY_TEXT_MAX - got)) > 0) got += (size_t)r;
    text[got] = '\0';
    n = (ssize_t)got;
  }
  close(fd);
  return n;
}

/* The Linux tid of the native thread whose pthread handle is h; 0 unknown. */
static uint32_t tid_of(const frz_stack *t, uint32_t nt, uint64_t h) {
  for (uint32_t i = 0; i < nt; i++)
    if (t[i].thread_handle == h) return t[i].tid;
  return 0;
}

/* One "  File "F", line N in FUNC" line into *f; 0 ok, -1 not such a line. */
static int parse_frame(const char *line, frz_pyframe *f) {
  const char *p = strstr(line, "File \"");
  if (!p) return -1;
  p += 6;
  const char *q = strstr(p, "\", line ");
  if (!q) return -1;
  size_t flen = (size_t)(q - p);
  if (flen >= sizeof f->file) flen = sizeof f->file - 1;
  memcpy(f->file, p, flen);
  f->file[flen] = '\0';
  char *end;
  unsigned long ln = strtoul(q + 8, &end, 10);
  f->line = end != q + 8 ? (uint32_t)ln : 0;
  const char *in = strstr(end, " in ");
  snprintf(f->func, sizeof f->func, "%s", in ? in + 4 : "?");
  return 0;
}

frz_pyframe *fr_pystacks_collect(const frz_stack *t, uint32_t nt, uint32_t *n) {
  *n = 0;
  if (!text) text = malloc(PY_TEXT_MAX + 1);
  if (!frames) frames = malloc(PY_FRAMES_MAX * sizeof *frames);
  if (!text || !frames || dump_text() <= 0) return NULL;
  uint64_t handle = 0;
  uint32_t tid = 0, index = 0, count = 0;
  int in_thread = 0;
  for (char *line = text, *next; line && *line && count < PY_FRAMES_MAX; line = next) {
    next = strchr(line, '\n');
    if (next) *next++ = '\0';
    const char *h = strstr(line, "hread 0x"); /* "Thread 0x..." or "Current thread 0x..." */
    if (h && (line[0] == 'T' || line[0] == 'C')) {
      handle = strtoull(h + 8, NULL, 16);
      tid = tid_of(t, nt, handle);
      index = 0;
      in_thread = 1;
      continue;
    }
    frz_pyframe *f = &frames[count];
    memset(f, 0, sizeof *f);
    if (!in_thread || parse_frame(line, f) != 0) continue;
    f->thread_handle = handle;
    f->tid = tid;
    f->index = index++;
    count++;
  }
  *n = count;
  return frames;
}
