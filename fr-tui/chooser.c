/* chooser.c — the communicator chooser (`c`): a list of every communicator
 * with its size, parent and state; Up/Down move, Enter shows the chosen one
 * at its stuck op, Esc or `c` closes the list unchanged. */
#include <inttypes.h>
#include <string.h>

#include "tui.h"

void chooser_open(view *v)
{
  if (!v->a->ncomms) {
    snprintf(v->msg, sizeof v->msg, "no communicator in the dumps");
    return;
  }
  v->choose = 1;
  v->choose_sel = v->comm >= 0 ? (uint32_t)v->comm : 0;
}

/* One line of state for comm `c`: stuck, mismatch or how far it completed. */
static void comm_state(const fa_comm *c, char *buf, size_t len)
{
  if (c->stuck)
    snprintf(buf, len, "stuck at seq %" PRIu64 " (%u lagging, %u waiting, %u without a dump)",
             c->stuck_seq, c->nlagging, c->nwaiting, c->nno_dump);
  else if (c->has_mismatch)
    snprintf(buf, len, "mismatch at seq %" PRIu64, c->mismatch.seq);
  else if (fa_shown_completed(c) >= 0)
    snprintf(buf, len, "completed through seq %" PRId64, c->last_completed);
  else
    snprintf(buf, len, "nothing completed");
}

/* Draw the list from row r0 to the row before `last`; keeps the selection
 * visible. */
void chooser_draw(view *v, tgrid *g, int r0, int last)
{
  const fa_analysis *a = v->a;
  grid_printf(g, r0, 0, TA_HEAD, "-- choose a communicator (%u): Up/Down, Enter shows it, Esc keeps comm %u",
              a->ncomms, v->comm >= 0 ? (unsigned)v->comm + 1 : 0u);
  int rows = last - r0 - 1;
  if (rows < 1)
    return;
  if (v->choose_sel < v->choose_top)
    v->choose_top = v->choose_sel;
  if (v->choose_sel >= v->choose_top + (uint32_t)rows)
    v->choose_top = v->choose_sel - (uint32_t)rows + 1;
  for (int i = 0; i < rows && v->choose_top + (uint32_t)i < a->ncomms; i++) {
    uint32_t ci = v->choose_top + (uint32_t)i;
    const fa_comm *c = &a->comms[ci];
    char state[160], parent[40] = "";
    comm_state(c, state, sizeof state);
    if (c->parent_id)
      snprintf(parent, sizeof parent, "  split of %016" PRIx64, c->parent_id);
    uint16_t at = (c->stuck || c->has_mismatch) ? TA_MISMATCH : TA_NONE;
    if (ci == v->choose_sel)
      at |= TA_SELECT;
    grid_printf(g, r0 + 1 + i, 0, at, "%c%3u  comm %016" PRIx64 "  %6d ranks%s  %s%s",
                ci == v->choose_sel ? '>' : ' ', ci + 1, c->id, c->size, parent, state,
                (int32_t)ci == v->comm ? "  (shown)" : "");
  }
}

/* A key while the list is open. */
void chooser_key(view *v, int key)
{
  uint32_t n = v->a->ncomms;
  uint32_t page = v->page_rows > 1 ? (uint32_t)v->page_rows - 1 : 1;
  switch (key) {
  case K_UP: case 'k': if (v->choose_sel > 0) v->choose_sel--; break;
  case K_DOWN: case 'j': if (v->choose_sel + 1 < n) v->choose_sel++; break;
  case K_PGUP: v->choose_sel = v->choose_sel > page ? v->choose_sel - page : 0; break;
  case K_PGDN: v->choose_sel = v->choose_sel + page < n ? v->choose_sel + page : n - 1; break;
  case K_HOME: v->choose_sel = 0; break;
  case K_END: v->choose_sel = n - 1; break;
  case K_ENTER: {
    int32_t keep = view_sel_rank(v);
    v->choose = 0;
    view_set_comm(v, (int32_t)v->choose_sel);
    view_rebuild(v);
    if (keep >= 0)
      view_select_rank(v, keep);
    const fa_comm *c = &v->a->comms[v->comm];
    snprintf(v->msg, sizeof v->msg, "comm %016" PRIx64 "%s", c->id,
             c->stuck ? ": at its stuck op" : "");
    break;
  }
  case K_ESC: case 'c': v->choose = 0; break;
  case 'q': v->quit = 1; break;
  default: break;
  }
}
