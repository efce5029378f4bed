/* util.c — small helpers of the analyzer: arrays, rank sets, names, text. */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

int fa_grow(void *arr, uint32_t *cap, uint32_t need, size_t elem)
{
  void **p = arr;
  if (need <= *cap) return 0;
  uint64_t ncap = *cap ? (uint64_t)*cap * 2 : 16;
  while (ncap < need) ncap *= 2;
  if (ncap > UINT32_MAX) ncap = UINT32_MAX;
  if (ncap < need) return -1;
  void *np = realloc(*p, (size_t)ncap * elem);
  if (!np) return -1;
  *p = np;
  *cap = (uint32_t)ncap;
  return 0;
}

char *fa_strdup(const char *s)
{
  size_t n = strlen(s) + 1;
  char *d = malloc(n);
  if (d) memcpy(d, s, n);
  return d;
}

int fa_ranks_push(fa_ranks *r, uint32_t *cap, int32_t g)
{
  if (fa_grow(&r->v, cap, r->n + 1, sizeof *r->v)) return -1;
  r->v[r->n++] = g;
  return 0;
}

static int cmp_i32(const void *x, const void *y)
{
  int32_t a = *(const int32_t *)x, b = *(const int32_t *)y;
  return (a > b) - (a < b);
}

int fa_ranks_has(const fa_ranks *r, int32_t g)
{
  return r->n && bsearch(&g, r->v, r->n, sizeof *r->v, cmp_i32) != NULL;
}

void fa_ranks_sort(fa_ranks *r)
{
  if (r->n < 2) return;
  qsort(r->v, r->n, sizeof *r->v, cmp_i32);
  uint32_t w = 1;
  for (uint32_t i = 1; i < r->n; i++)
    if (r->v[i] != r->v[w - 1]) r->v[w++] = r->v[i];
  r->n = w;
}

void fa_ranks_free(fa_ranks *r)
{
  free(r->v);
  r->v = NULL;
  r->n = 0;
}

char *fa_printf(const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0) return NULL;
  char *s = malloc((size_t)n + 1);
  if (!s) return NULL;
  va_start(ap, fmt);
  vsnprintf(s, (size_t)n + 1, fmt, ap);
  va_end(ap);
  return s;
}

char *fa_hex(uint64_t id, char *buf)
{
  snprintf(buf, 17, "%016llx", (unsigned long long)id);
  return buf;
}

/* Append text to buf at *pos if it fits entirely; returns 0 when it did. */
static int put(char *buf, size_t len, size_t *pos, const char *text)
{
  size_t n = strlen(text);
  if (*pos + n + 1 > len) return -1;
  memcpy(buf + *pos, text, n + 1);
  *pos += n;
  return 0;
}

char *fa_format_ranks(const int32_t *ranks, uint32_t n, char *buf, size_t len)
{
  if (!len) return buf;
  buf[0] = '\0';
  char tail[48];
  snprintf(tail, sizeof tail, "... (%u ranks)", n);
  size_t reserve = strlen(tail) + 1;
  size_t pos = 0;
  for (uint32_t i = 0; i < n;) {
    uint32_t j = i;
    while (j + 1 < n && ranks[j + 1] == ranks[j] + 1) j++;
    char item[40];
    if (j > i)
      snprintf(item, sizeof item, "%s%d-%d", i ? "," : "", ranks[i], ranks[j]);
    else
      snprintf(item, sizeof item, "%s%d", i ? "," : "", ranks[i]);
    int last = j + 1 >= n;
    size_t room = last ? len : (len > reserve ? len - reserve : 0);
    if (pos + strlen(item) + 1 > room) {
      if (pos + reserve + 1 <= len) {
        put(buf, len, &pos, pos ? "," : "");
        put(buf, len, &pos, tail);
      }
      return buf;
    }
    put(buf, len, &pos, item);
    i = j + 1;
  }
  return buf;
}

char *fa_sanitize(const char *in, char *out, size_t len)
{
  return frz_sanitize(in, SIZE_MAX, out, len);
}

const char *fa_field_name(unsigned i)
{
  static const char *const names[FA_NFIELDS] = {"op", "count", "dtype", "redop", "root", "algorithm", "protocol"};
  return i < FA_NFIELDS ? names[i] : "?";
}

const char *fa_field_names(unsigned f, char *buf, size_t len)
{
  buf[0] = '\0';
  for (unsigned i = 0; i < FA_NFIELDS; i++)
    if (f & (1u << i)) {
      size_t n = strlen(buf);
      snprintf(buf + n, len - n, "%s%s", n ? ", " : "", fa_field_name(i));
    }
  return buf;
}

char *fa_sig_text(const fa_sig *s, char *buf, size_t len)
{
  char nm[FRZ_PT_NAME_MAX];
  if (s->name) { /* PyTorch: its op name, input and output elements */
    fa_sanitize(s->name, nm, sizeof nm);
    if (s->op == FRZ_OP_NONE && strcmp(s->name, "nothing") == 0) {
      snprintf(buf, len, "nothing");
    } else if (s->out_count != s->count || s->out_dtype != s->dtype) {
      snprintf(buf, len, "%s(%llu x %s in, %llu x %s out)", nm, (unsigned long long)s->count,
               frz_dtype_name(s->dtype), (unsigned long long)s->out_count,
               frz_dtype_name(s->out_dtype));
    } else {
      snprintf(buf, len, "%s(%llu x %s)", nm, (unsigned long long)s->count, frz_dtype_name(s->dtype));
    }
    return buf;
  }
  if (frz_op_kind(s->op) == FRZ_KIND_LIFE) {
    snprintf(buf, len, "%s", frz_op_name(s->op));
    return buf;
  }
  char redop[32] = "", root[32] = "";
  if (s->redop != 255) snprintf(redop, sizeof redop, ", %s", frz_redop_name(s->redop));
  if (s->root >= 0) snprintf(root, sizeof root, ", root %d", s->root);
  snprintf(buf, len, "%s(%llu x %s%s%s)", frz_op_name(s->op), (unsigned long long)s->count,
           frz_dtype_name(s->dtype), redop, root);
  return buf;
}

char *fa_sig_text_fields(const fa_sig *s, unsigned fields, char *buf, size_t len)
{
  fa_sig_text(s, buf, len);
  size_t n = strlen(buf);
  if ((fields & (FA_FIELD_ALGO | FA_FIELD_PROTO)) && n < len)
    snprintf(buf + n, len - n, " as %s/%s", s->algo != 255 ? frz_algo_name(s->algo) : "?",
             s->proto != 255 ? frz_proto_name(s->proto) : "?");
  return buf;
}

const char *fa_link_ends(const fa_link *l, const char *arrow, char *buf, size_t size)
{
  if (l->src >= 0 && l->src == l->dst && l->src_comm_rank >= 0 && l->dst_comm_rank >= 0 &&
      l->src_comm_rank != l->dst_comm_rank)
    snprintf(buf, size, "comm rank %d%s%d of rank %d", l->src_comm_rank, arrow, l->dst_comm_rank, l->src);
  else if (l->src >= 0 && l->dst >= 0)
    snprintf(buf, size, "%d%s%d", l->src, arrow, l->dst);
  else if (l->src >= 0)
    snprintf(buf, size, "%d%s?", l->src, arrow);
  else if (l->dst >= 0)
    snprintf(buf, size, "?%s%d", arrow, l->dst);
  else
    snprintf(buf, size, "?%s?", arrow);
  return buf;
}

const char *fa_status_name(fa_status s)
{
  switch (s) {
  case FA_STATUS_HEALTHY: return "healthy";
  case FA_STATUS_HANG: return "hang";
  case FA_STATUS_MISMATCH: return "mismatch";
  case FA_STATUS_DEADLOCK: return "deadlock";
  case FA_STATUS_STRAGGLER: return "straggler";
  case FA_STATUS_INCONCLUSIVE: return "inconclusive";
  }
  return "inconclusive";
}

const char *fa_member_state_name(fa_member_state s)
{
  switch (s) {
  case FA_MEMBER_NO_DUMP: return "no_dump";
  case FA_MEMBER_IDLE: return "idle";
  case FA_MEMBER_WAITING: return "waiting";
  case FA_MEMBER_LAGGING: return "lagging";
  case FA_MEMBER_PASSED: return "passed";
  case FA_MEMBER_AHEAD: return "ahead";
  case FA_MEMBER_UNFINISHED: return "unfinished";
  }
  return "unknown";
}

int fa_counters_unknown(const fa_analysis *a, const fa_comm *c)
{
  for (int32_t r = 0; r < c->size; r++) {
    const fa_member *m = &c->members[r];
    if (m->rank < 0 || !m->counters_unknown) continue;
    /* (its last work, whatever it was, completed: nothing of it pending) */
    const frz_comm *fc = fa_member_comm(a, m);
    if (fc && fc->last_enqueued_seq != fc->last_completed_seq) return 1;
  }
  return 0;
}
