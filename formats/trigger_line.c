/* trigger_line.c — the one-line trigger message (frz.md, "Trigger
 * messages"): the content of DIR/TRIGGER, of the PMIx event and of the
 * TCPStore key by which one rank's hang reaches the others. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frz.h"

#define TRIGGER_MAGIC "flightrec-trigger v1 "

/* Copy `in` to `out` (size > 0) with every byte outside printable ASCII
 * made '?', stopping at a newline or NUL or after `max` bytes. */
static void printable(char *out, size_t size, const char *in, size_t max) {
  size_t k = 0;
  for (; k < max && in[k] && in[k] != '\n' && k + 1 < size; k++)
    out[k] = (in[k] >= 0x20 && in[k] < 0x7f) ? in[k] : '?';
  out[k] = '\0';
}

int frz_trigger_line_format(char *buf, size_t size, int32_t rank, uint64_t time_ns, const char *reason) {
  char clean[FRZ_TRIGGER_REASON_MAX + 1];
  printable(clean, sizeof clean, reason ? reason : "", FRZ_TRIGGER_REASON_MAX);
  int n = snprintf(buf, size, TRIGGER_MAGIC "rank=%d time_ns=%llu reason=%s\n", (int)rank,
                   (unsigned long long)time_ns, clean);
  return n < 0 || (size_t)n >= size ? -1 : n;
}

/* The value after " name=" in buf[0..len), or NULL. */
static const char *field(const char *buf, const char *name) {
  char pat[24];
  snprintf(pat, sizeof pat, " %s=", name);
  const char *p = strstr(buf, pat);
  return p ? p + strlen(pat) : NULL;
}

int frz_trigger_line_parse(const char *text, size_t len, frz_trigger_line *out) {
  char buf[FRZ_TRIGGER_LINE_MAX + 1];
  if (len > FRZ_TRIGGER_LINE_MAX) len = FRZ_TRIGGER_LINE_MAX;
  memcpy(buf, text, len);
  buf[len] = '\0';
  char *nl = strchr(buf, '\n');
  if (nl) *nl = '\0';
  out->rank = -1;
  out->time_ns = 0;
  out->reason[0] = '\0';
  if (strncmp(buf, TRIGGER_MAGIC, strlen(TRIGGER_MAGIC)) != 0) return -1;
  /* reason= comes last and may hold anything: cut it off before the others are looked for */
  char *why = strstr(buf, " reason=");
  if (why) {
    printable(out->reason, sizeof out->reason, why + 8, FRZ_TRIGGER_REASON_MAX);
    *why = '\0';
  }
  const char *r = field(buf, "rank"), *t = field(buf, "time_ns");
  if (r) out->rank = (int32_t)strtol(r, NULL, 10);
  if (t) out->time_ns = strtoull(t, NULL, 10);
  return 0;
}
