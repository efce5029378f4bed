/* tui.h — fr-tui's screen model, shared by the batch and interactive paths.
 *
 * view.c holds the browsing state over an analysis (communicator, frame,
 * rows, selected cell); render.c draws that state into a grid of ASCII
 * cells with attributes; batch.c prints the grid, term.c (the only module
 * that talks to ncursesw) paints it; keys.c maps keys to view actions.
 */
#ifndef FR_TUI_H
#define FR_TUI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "analyze.h"

/* Attributes of a grid cell: a colour class plus flags. */
enum {
  TA_NONE = 0,
  TA_DONE,      /* completed */
  TA_STARTED,
  TA_ENQUEUED,
  TA_NEVER,     /* never reached */
  TA_MISMATCH,
  TA_BAR,       /* verdict bar */
  TA_BAR_BAD,   /* verdict bar of a problem verdict */
  TA_HEAD,      /* headers, separators */
  TA_PROBLEM,   /* an input problem */
  TA_NCLASS,
  TA_SELECT = 0x100 /* flag: the selection (reverse video) */
};

/* A screen: rows x cols ASCII characters with attributes. */
typedef struct tgrid {
  int rows, cols;
  char *ch;
  uint16_t *at;
} tgrid;

int grid_init(tgrid *g, int rows, int cols);
void grid_free(tgrid *g);
void grid_clear(tgrid *g);
/* Write `s` at (r, c), clipped to the row; returns the column after it. */
int grid_put(tgrid *g, int r, int c, const char *s, uint16_t at);
/* grid_put, but a text longer than the row is cut at a word boundary and
 * ends in " ..." (never mid-word, unless one word fills half the row), and
 * then the row counts as full (the column returned is the row's width). */
int grid_put_words(tgrid *g, int r, int c, const char *s, uint16_t at);
/* printf into the grid at (r, c), clipped; returns the column after it. */
int grid_printf(tgrid *g, int r, int c, uint16_t at, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/* Print the grid as text, trailing blanks removed. */
void grid_print(const tgrid *g, FILE *out);

/* One row of the timeline: one rank, or several folded identical ranks. */
typedef struct trow {
  uint32_t first, n;   /* view.rowranks[first .. first+n): rank indices */
} trow;

/* The browsing state. */
typedef struct view {
  const fa_analysis *a;
  int32_t comm;          /* index into a->comms; -1 none */
  uint32_t frame;        /* frame step k: each rank shows its frame k, or its latest */
  uint32_t nframes;      /* most frames of any rank */
  int64_t seq_lo, seq_hi;/* column range of the comm (every frame); seq_hi < seq_lo: none */
  int64_t sel_seq;       /* selected column */
  int64_t first_seq;     /* leftmost visible column */
  uint32_t sel_row, top_row;
  int fold;
  trow *rows;
  uint32_t nrows;
  uint32_t *rowranks;
  int help;              /* the help screen is shown */
  int stacks;            /* info lines: 1 the selected rank's stack, 2 the stack classes */
  int quit;
  int prompt;            /* reading a rank number for `/` */
  int choose;            /* the communicator chooser is open */
  uint32_t choose_sel, choose_top; /* its selected and first visible comm */
  char input[16];
  char msg[256];         /* one-line message (status line) */
  char *info;            /* extra lines (links, wait-for chain), malloc'd; NULL none */
  int page_rows, page_cols; /* visible timeline rows / columns, set by render */
  int info_max;          /* lines the info area may hold now (at least 8), set by render */
} view;

int view_init(view *v, const fa_analysis *a);
void view_free(view *v);
/* Rebuild the rows (after fold, comm or frame change); keeps the selected rank. */
int view_rebuild(view *v);
void view_set_comm(view *v, int32_t comm);
/* Keep the selection visible. */
void view_scroll(view *v);
/* Rank indices: 0 .. a->nranks-1 index a->ranks (ranks with dumps), then
 * a->nranks + i is a->ranks_missing.v[i] (expected, no dump). */
uint32_t view_nranks(const view *v);
int32_t view_global(const view *v, int32_t ri);
/* The rank index of global rank g; -1 none. */
int32_t view_find(const view *v, int32_t g);
/* The member of the view's comm that rank index ri is; NULL none. */
const fa_member *view_member(const view *v, int32_t ri);
/* The rank index of the selected row; -1 none. */
int32_t view_sel_rank(const view *v);
/* Select the row holding rank index `ri`; returns 0 or -1 when absent. */
int view_select_rank(view *v, int32_t ri);
/* The frame shown for rank index `ri`. */
const fa_frame *view_frame(const view *v, int32_t ri);
/* The state letter of rank index `ri` at `seq` in the view's comm, with its
 * attribute; ' ' when the rank is not a member. */
char view_cell(const view *v, int32_t ri, int64_t seq, uint16_t *at);
/* The comm entry of the view's comm in frame f; -1 none. */
int32_t view_entry(const view *v, const fa_frame *f);
/* The root-cause rank index; -1 none. */
int32_t view_culprit(const view *v);
/* Set the info lines (printf style); NULL clears. */
void view_info(view *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Draw the whole screen. */
void render(view *v, tgrid *g);

/* Keys: a KEY_* code of curses or a character; returns 1 when handled. */
enum { K_UP = 0x1001, K_DOWN, K_LEFT, K_RIGHT, K_PGUP, K_PGDN, K_HOME, K_END, K_ENTER,
       K_BACKSPACE, K_ESC };
int keys_handle(view *v, int key);
/* Show the verdict's missing links / wait-for chain or cycle in the info
 * lines (keys l and w). */
void keys_show_links(view *v);
void keys_show_waitfor(view *v);
/* The communicator chooser (chooser.c): open it, handle a key while it is
 * open, draw it between rows r0 and last. */
void chooser_open(view *v);
void chooser_key(view *v, int key);
void chooser_draw(view *v, tgrid *g, int r0, int last);
/* The stack pane and stack-classes view (stacks.c): keys t and T toggle
 * them; stacks_info fills the info lines for v->stacks at each render. */
void keys_stack_pane(view *v);
void keys_stack_classes(view *v);
void stacks_info(view *v);
/* The help lines: NULL-terminated. */
extern const char *const keys_help[];

/* Sanitize a dump string for the grid: ASCII only, controls replaced. */
char *tui_clean(const char *in, char *out, size_t len);

/* Run the interactive UI; returns an exit status. */
int term_run(view *v);

#endif /* FR_TUI_H */
