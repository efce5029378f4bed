/* term.c — the only module that talks to the terminal (ncursesw): paints
 * the grid, reads keys, follows resizes (SIGWINCH, seen as KEY_RESIZE). */
#include <errno.h>
#include <curses.h>
#include <locale.h>

#include "tui.h"

/* Colour pairs, one per attribute class. */
static void init_colors(void)
{
  if (!has_colors())
    return;
  start_color();
  use_default_colors();
  init_pair(TA_DONE, COLOR_GREEN, -1);
  init_pair(TA_STARTED, COLOR_YELLOW, -1);
  init_pair(TA_ENQUEUED, COLOR_CYAN, -1);
  init_pair(TA_NEVER, COLOR_RED, -1);
  init_pair(TA_MISMATCH, COLOR_MAGENTA, -1);
  init_pair(TA_BAR, COLOR_BLACK, COLOR_GREEN);
  init_pair(TA_BAR_BAD, COLOR_WHITE, COLOR_RED);
  init_pair(TA_HEAD, COLOR_BLUE, -1);
  init_pair(TA_PROBLEM, COLOR_RED, -1);
}

/* The curses attributes of a grid attribute. */
static attr_t curses_attr(uint16_t at)
{
  unsigned cls = at & 0xff;
  attr_t x = A_NORMAL;
  if (cls && has_colors())
    x |= COLOR_PAIR(cls);
  if (cls == TA_BAR || cls == TA_BAR_BAD)
    x |= A_BOLD | (has_colors() ? 0 : A_REVERSE);
  if (cls == TA_MISMATCH || cls == TA_NEVER)
    x |= A_BOLD;
  if (at & TA_SELECT)
    x |= A_REVERSE;
  return x;
}

/* Copy the grid to the screen. */
static void paint(const tgrid *g)
{
  erase();
  for (int r = 0; r < g->rows; r++)
    for (int c = 0; c < g->cols; c++) {
      size_t i = (size_t)r * (size_t)g->cols + (size_t)c;
      mvaddch(r, c, (chtype)(unsigned char)g->ch[i] | curses_attr(g->at[i]));
    }
  refresh();
}

/* A curses key as one of ours. */
static int map_key(int ch)
{
  switch (ch) {
  case KEY_UP: return K_UP;
  case KEY_DOWN: return K_DOWN;
  case KEY_LEFT: return K_LEFT;
  case KEY_RIGHT: return K_RIGHT;
  case KEY_PPAGE: return K_PGUP;
  case KEY_NPAGE: return K_PGDN;
  case KEY_HOME: return K_HOME;
  case KEY_END: return K_END;
  case KEY_ENTER: case '\n': case '\r': return K_ENTER;
  case KEY_BACKSPACE: case 127: case 8: return K_BACKSPACE;
  case 27: return K_ESC;
  default: return ch;
  }
}

int term_run(view *v)
{
  setlocale(LC_ALL, "");
  if (!initscr())
    return 2;
  cbreak();
  noecho();
  keypad(stdscr, TRUE);
  set_escdelay(25);
  curs_set(0);
  init_colors();
  tgrid g = {0};
  int rc = 0;
  while (!v->quit) {
    int rows, cols;
    getmaxyx(stdscr, rows, cols);
    if (g.rows != rows || g.cols != cols || !g.ch) {
      grid_free(&g);
      if (grid_init(&g, rows, cols) < 0) {
        rc = 2;
        break;
      }
    }
    render(v, &g);
    paint(&g);
    errno = 0;
    int ch = getch();
    if (ch == KEY_RESIZE || (ch == ERR && errno == EINTR))
      continue;
    if (ch == ERR) /* end of input (or no input to read): nothing more will come */
      break;
    keys_handle(v, map_key(ch));
  }
  grid_free(&g);
  endwin();
  return rc;
}
