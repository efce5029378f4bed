/* keys.c — the key table: every key, what it does, and its help line. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "tui.h"

typedef void (*action_fn)(view *v);

/* Move the selection by rows. */
static void move_rows(view *v, int64_t d)
{
  int64_t r = (int64_t)v->sel_row + d;
  if (r >= (int64_t)v->nrows)
    r = (int64_t)v->nrows - 1;
  if (r < 0)
    r = 0;
  v->sel_row = (uint32_t)r;
}

static void act_up(view *v) { move_rows(v, -1); }
static void act_down(view *v) { move_rows(v, 1); }
static void act_pgup(view *v) { move_rows(v, -(v->page_rows > 1 ? v->page_rows - 1 : 1)); }
static void act_pgdn(view *v) { move_rows(v, v->page_rows > 1 ? v->page_rows - 1 : 1); }
static void act_left(view *v) { if (v->sel_seq > v->seq_lo) v->sel_seq--; }
static void act_right(view *v) { if (v->sel_seq < v->seq_hi) v->sel_seq++; }
static void act_home(view *v) { v->sel_seq = v->seq_lo; }
static void act_end(view *v) { v->sel_seq = v->seq_hi; }

/* Step to frame k (each rank shows its frame k, or its latest). */
static void set_frame(view *v, uint32_t k)
{
  v->frame = k;
  view_rebuild(v);
  if (k + 1 == v->nframes) snprintf(v->msg, sizeof v->msg, "frame %u (latest)", k);
  else snprintf(v->msg, sizeof v->msg, "frame %u of 0-%u", k, v->nframes - 1);
}

/* `[`: the previous frame step. */
static void act_prev_frame(view *v)
{
  if (v->frame > 0)
    set_frame(v, v->frame - 1);
  else
    snprintf(v->msg, sizeof v->msg, "already at the first frame");
}

/* `]`: the next frame step (ranks with fewer frames keep their latest). */
static void act_next_frame(view *v)
{
  if (v->frame + 1 < v->nframes)
    set_frame(v, v->frame + 1);
  else
    snprintf(v->msg, sizeof v->msg, "frame %u is the latest", v->frame);
}

/* `g`: select the stuck op's column. */
static void act_stuck(view *v)
{
  if (v->comm < 0)
    return;
  const fa_comm *c = &v->a->comms[v->comm];
  if (c->stuck) {
    v->sel_seq = (int64_t)c->stuck_seq;
    snprintf(v->msg, sizeof v->msg, "stuck op: seq %" PRIu64, c->stuck_seq);
  } else {
    snprintf(v->msg, sizeof v->msg, "this communicator is not stuck");
  }
}

/* `r`: select the root-cause rank, in the verdict's comm, at the stuck op. */
static void act_root(view *v)
{
  int32_t ri = view_culprit(v);
  if (ri < 0) {
    snprintf(v->msg, sizeof v->msg, "no root-cause rank in the verdict");
    return;
  }
  int32_t vc = v->a->verdict.comm >= 0 ? v->a->verdict.comm : v->a->verdict.mismatch_comm;
  if (vc >= 0 && vc != v->comm) {
    view_set_comm(v, vc);
    view_rebuild(v);
  }
  view_select_rank(v, ri);
  if (v->comm >= 0 && v->a->comms[v->comm].stuck)
    v->sel_seq = (int64_t)v->a->comms[v->comm].stuck_seq;
  snprintf(v->msg, sizeof v->msg, "root cause: rank %d", view_global(v, ri));
}

void keys_show_links(view *v)
{
  const fa_verdict *vd = &v->a->verdict;
  v->stacks = 0;
  if (!vd->nlinks) {
    view_info(v, NULL);
    snprintf(v->msg, sizeof v->msg, "no missing link in the verdict");
    return;
  }
  char *s = NULL;
  size_t len = 0;
  FILE *m = open_memstream(&s, &len);
  if (!m)
    return;
  for (uint32_t i = 0; i < vd->nlinks; i++) {
    const fa_link *l = &vd->links[i];
    char ends[64];
    fprintf(m, "missing link %s  comm %016" PRIx64 " seq %" PRIu64, fa_link_ends(l, " -> ", ends, sizeof ends),
            v->a->comms[l->comm].id, l->seq);
    if (l->channel >= 0)
      fprintf(m, " channel %d", l->channel);
    if (l->evidence)
      fprintf(m, " stopped in %s for %.1f s (proxy progress)",
              l->state ? frz_proxy_state_name(l->state) : "?", (double)l->stalled_ns / 1e9);
    fprintf(m, "%s%s\n", l->inferred ? " (inferred from ring order)" : "", l->p2p ? " (p2p)" : "");
  }
  fclose(m);
  view_info(v, "%s", s);
  free(s);
  snprintf(v->msg, sizeof v->msg, "%u missing link(s); Esc clears", vd->nlinks);
}

void keys_show_waitfor(view *v)
{
  v->stacks = 0;
  const fa_analysis *a = v->a;
  const fa_verdict *vd = &a->verdict;
  char *s = NULL;
  size_t len = 0;
  FILE *m = open_memstream(&s, &len);
  if (!m)
    return;
  if (vd->ncycle) {
    fprintf(m, "wait-for cycle:\n");
    for (uint32_t i = 0; i < vd->ncycle; i++) {
      const fa_wait_step *w = &vd->cycle[i];
      fprintf(m, "  rank %d waits in comm %016" PRIx64 " seq %" PRIu64 " for rank %d\n", w->rank,
              a->comms[w->comm].id, w->seq, w->waits_for);
    }
  } else if (vd->comm >= 0 && a->comms[vd->comm].stuck) {
    const fa_comm *c = &a->comms[vd->comm];
    fa_ranks wait = {0}, miss = {0};
    char bw[128], bm[128];
    if (fa_comm_ranks(c, FA_MEMBER_WAITING, &wait) == 0 && fa_comm_missing(c, &miss) == 0)
      fprintf(m, "wait-for chain: rank%s %s wait%s in comm %016" PRIx64 " seq %" PRIu64 " for rank%s %s\n",
              wait.n == 1 ? "" : "s", fa_format_ranks(wait.v, wait.n, bw, sizeof bw), wait.n == 1 ? "s" : "",
              c->id, c->stuck_seq, miss.n == 1 ? "" : "s", fa_format_ranks(miss.v, miss.n, bm, sizeof bm));
    fa_ranks_free(&wait);
    fa_ranks_free(&miss);
  }
  fclose(m);
  if (s && *s) {
    view_info(v, "%s", s);
    snprintf(v->msg, sizeof v->msg, "wait-for shown; Esc clears");
  } else {
    view_info(v, NULL);
    snprintf(v->msg, sizeof v->msg, "no wait-for chain in the verdict");
  }
  free(s);
}

/* `/`: start reading a rank number (prompt_key). */
static void act_find(view *v)
{
  v->prompt = 1;
  v->input[0] = 0;
}

/* `f`: fold rows with identical cells over the comm's whole range, or unfold. */
static void act_fold(view *v)
{
  v->fold = !v->fold;
  view_rebuild(v);
  snprintf(v->msg, sizeof v->msg, v->fold ? "identical rows folded: %u rows" : "unfolded: %u rows", v->nrows);
}

static void act_help(view *v) { v->help = !v->help; }
static void act_quit(view *v) { v->quit = 1; }

/* Esc: clear the info lines and the message. */
static void act_clear(view *v)
{
  v->stacks = 0;
  view_info(v, NULL);
  v->msg[0] = 0;
}

/* The key table. */
static const struct key {
  int key, alt;
  action_fn fn;
} key_table[] = {
  {K_UP, 'k', act_up},         {K_DOWN, 'j', act_down},      {K_LEFT, 'h', act_left},
  {K_RIGHT, 'L', act_right},   {K_PGUP, 0, act_pgup},         {K_PGDN, 0, act_pgdn},
  {K_HOME, 0, act_home},       {K_END, 0, act_end},           {'[', 0, act_prev_frame},
  {']', 0, act_next_frame},    {'c', 0, chooser_open},            {'g', 0, act_stuck},
  {'r', 0, act_root},          {'l', 0, keys_show_links},           {'w', 0, keys_show_waitfor},
  {'/', 0, act_find},          {'f', 0, act_fold},            {'?', 0, act_help},
  {'q', 0, act_quit},          {K_ESC, 0, act_clear},         {'t', 0, keys_stack_pane},
  {'T', 0, keys_stack_classes},
};

const char *const keys_help[] = {
  "Up/k Down/j     select the previous / next row (rank)",
  "Left/h Right/L  select the previous / next seq (l is taken by links)",
  "PgUp PgDn       a page of rows up / down",
  "Home End        the first / last seq of the communicator",
  "[ ]             previous / next frame (each rank shows its frame k, or its latest)",
  "c               choose the communicator (list: Up/Down, Enter, Esc)",
  "g               jump to the stuck op",
  "r               jump to the root-cause rank",
  "l               show the missing link(s)",
  "w               show the wait-for chain or cycle",
  "/               find a rank (type its number, Enter)",
  "f               fold identical rows together / unfold",
  "t               the selected rank's thread stack (most relevant thread) / off",
  "T               the stack classes: ranks grouped by stack / off",
  "Esc             clear the message and info lines",
  "?               this help",
  "q               quit",
  "",
  "cells: C completed  S started  E enqueued  . never reached  ! mismatch",
  "       F failed  - issued but no longer in the ring  ? no dump (blank: not a member)",
  "over the columns: v the selected seq, * the stuck seq; > starts the selected row",
  NULL,
};

/* A key while reading a rank number for `/`. */
static void prompt_key(view *v, int key)
{
  size_t n = strlen(v->input);
  if (key >= '0' && key <= '9' && n + 1 < sizeof v->input) {
    v->input[n] = (char)key;
    v->input[n + 1] = 0;
  } else if (key == K_BACKSPACE && n) {
    v->input[n - 1] = 0;
  } else if (key == K_ENTER) {
    v->prompt = 0;
    if (!n)
      return;
    int32_t g = (int32_t)strtol(v->input, NULL, 10);
    int32_t ri = view_find(v, g);
    if (ri >= 0 && view_select_rank(v, ri) == 0)
      snprintf(v->msg, sizeof v->msg, "rank %d", g);
    else
      snprintf(v->msg, sizeof v->msg, "rank %d is not in the job", g);
  } else if (key == K_ESC) {
    v->prompt = 0;
  }
}

int keys_handle(view *v, int key)
{
  if (v->prompt) {
    prompt_key(v, key);
    return 1;
  }
  if (v->choose) {
    chooser_key(v, key);
    view_scroll(v);
    return 1;
  }
  if (v->help && key != 'q') {
    v->help = 0;
    return 1;
  }
  for (size_t i = 0; i < sizeof key_table / sizeof key_table[0]; i++)
    if (key_table[i].key == key || (key_table[i].alt && key_table[i].alt == key)) {
      v->msg[0] = 0;
      key_table[i].fn(v);
      view_scroll(v);
      return 1;
    }
  return 0;
}
