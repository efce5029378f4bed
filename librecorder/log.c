/* log.c — the recorder's only output: one line on stderr per message,
 * formatted on the stack and written with write(2), so it neither allocates
 * nor re-enters anything we intercept.  Until the process first uses NCCL,
 * messages (bad FR_* values) are held back, so processes that never touch
 * NCCL print nothing at all. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "recorder.h"

static char held[1024];
static size_t nheld;

static void emit(const char *s, size_t len) {
  ssize_t w = write(2, s, len);
  (void)w;
}

void fr_log(const char *fmt, ...) {
  if (fr_g.cfg.quiet) return;
  char line[512];
  int n = snprintf(line, sizeof line, "flightrec[rank %d pid %u]: ", (int)fr_g.proc.global_rank,
                   (unsigned)fr_g.proc.pid);
  if (n < 0 || (size_t)n >= sizeof line) n = 0;
  va_list ap;
  va_start(ap, fmt);
  int m = vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
  va_end(ap);
  if (m < 0) return;
  size_t room = sizeof line - (size_t)n - 2;
  size_t len = (size_t)n + ((size_t)m < room ? (size_t)m : room);
  line[len++] = '\n';
  if (atomic_load(&fr_g.log_ready)) {
    if (nheld) {
      emit(held, nheld);
      nheld = 0;
    }
    emit(line, len);
  } else if (nheld + len <= sizeof held) {
    memcpy(held + nheld, line, len);
    nheld += len;
  }
}

/* Print what was held back before NCCL was first used. */
void fr_log_flush(void) {
  if (nheld) {
    emit(held, nheld);
    nheld = 0;
  }
}
