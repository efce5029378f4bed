/* grid.c — the character grid both outputs share. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "tui.h"

int grid_init(tgrid *g, int rows, int cols)
{
  g->rows = rows > 0 ? rows : 1;
  g->cols = cols > 0 ? cols : 1;
  size_t n = (size_t)g->rows * (size_t)g->cols;
  g->ch = malloc(n);
  g->at = malloc(n * sizeof *g->at);
  if (!g->ch || !g->at) {
    grid_free(g);
    return -1;
  }
  grid_clear(g);
  return 0;
}

void grid_free(tgrid *g)
{
  free(g->ch);
  free(g->at);
  g->ch = NULL;
  g->at = NULL;
}

void grid_clear(tgrid *g)
{
  size_t n = (size_t)g->rows * (size_t)g->cols;
  memset(g->ch, ' ', n);
  memset(g->at, 0, n * sizeof *g->at);
}

int grid_put(tgrid *g, int r, int c, const char *s, uint16_t at)
{
  if (r < 0 || r >= g->rows)
    return c;
  for (; *s && c < g->cols; s++, c++) {
    if (c < 0)
      continue;
    unsigned char x = (unsigned char)*s;
    g->ch[r * g->cols + c] = (x < 0x20 || x >= 0x7f) ? '?' : (char)x;
    g->at[r * g->cols + c] = at;
  }
  return c;
}

int grid_put_words(tgrid *g, int r, int c, const char *s, uint16_t at)
{
  size_t room = c < g->cols ? (size_t)(g->cols - c) : 0;
  size_t len = strlen(s);
  if (len <= room)
    return grid_put(g, r, c, s, at);
  if (room < 4)
    return grid_put(g, r, c, s, at);
  /* the last space that leaves room for " ...", if it keeps most of the row */
  size_t cut = room - 4;
  while (cut > 0 && s[cut] != ' ')
    cut--;
  if (cut < (room - 4) / 2)
    cut = room - 4;
  while (cut > 0 && (s[cut - 1] == ' ' || s[cut - 1] == ';' || s[cut - 1] == ','))
    cut--;
  char buf[1024];
  snprintf(buf, sizeof buf, "%.*s ...", (int)(cut < sizeof buf - 5 ? cut : sizeof buf - 5), s);
  grid_put(g, r, c, buf, at);
  return g->cols; /* the row is full: what a caller appends is cut off too */
}

int grid_printf(tgrid *g, int r, int c, uint16_t at, const char *fmt, ...)
{
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  /* a line of its own (from column 0) ends at a word when cut */
  return c == 0 ? grid_put_words(g, r, c, buf, at) : grid_put(g, r, c, buf, at);
}

void grid_print(const tgrid *g, FILE *out)
{
  for (int r = 0; r < g->rows; r++) {
    const char *line = g->ch + (size_t)r * (size_t)g->cols;
    int n = g->cols;
    while (n > 0 && line[n - 1] == ' ')
      n--;
    fwrite(line, 1, (size_t)n, out);
    fputc('\n', out);
  }
}

/* fa_sanitize, then anything outside printable ASCII becomes '?' so that a
 * grid cell is always one byte and one column. */
char *tui_clean(const char *in, char *out, size_t len)
{
  fa_sanitize(in ? in : "", out, len);
  for (char *p = out; *p; p++)
    if ((unsigned char)*p < 0x20 || (unsigned char)*p >= 0x7f)
      *p = '?';
  return out;
}
