/* render.c — draws the view into a grid: verdict bar, comm line, timeline,
 * problems, info lines, detail pane and status line. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "tui.h"

#define LABEL_W 12 /* ">rank-label " before the cells */
#define CELL_W 2
#define DETAIL_H 6 /* rows of the detail pane; one more with proxy progress */

/* Signed milliseconds from `base` to `t` (both CLOCK_MONOTONIC ns). */
static double rel_ms(uint64_t t, uint64_t base)
{
  return (double)(int64_t)(t - base) / 1e6;
}

/* The verdict bar: status and summary over the first two rows. */
static int draw_bar(const view *v, tgrid *g)
{
  const fa_verdict *vd = &v->a->verdict;
  uint16_t at = vd->status == FA_STATUS_HEALTHY ? TA_BAR : TA_BAR_BAD;
  char sum[512], head[64];
  tui_clean(vd->summary ? vd->summary : "no verdict", sum, sizeof sum);
  snprintf(head, sizeof head, " %s: ", fa_status_name(vd->status));
  for (char *p = head; *p; p++)
    if (*p >= 'a' && *p <= 'z')
      *p = (char)(*p - 'a' + 'A');
  int rows = 0;
  const char *s = sum;
  for (int r = 0; r < 2 && r < g->rows; r++) {
    for (int c = 0; c < g->cols; c++)
      g->at[r * g->cols + c] = at;
    int c = grid_put(g, r, 0, r == 0 ? head : "   ", at);
    int room = g->cols - c;
    if (room <= 0)
      break;
    size_t len = strlen(s);
    if (r == 1 && (int)len > room) { /* the last row: what does not fit ends in " ..." */
      grid_put_words(g, r, c, s, at);
      rows = 2;
      break;
    }
    if ((int)len > room) {
      /* break at the last blank that fits */
      int cut = room;
      while (cut > 0 && s[cut] != ' ')
        cut--;
      if (cut == 0)
        cut = room;
      char part[512];
      snprintf(part, sizeof part, "%.*s", cut, s);
      grid_put(g, r, c, part, at);
      s += cut;
      while (*s == ' ')
        s++;
    } else {
      grid_put(g, r, c, s, at);
      s += len;
    }
    rows = r + 1;
    if (!*s)
      break;
  }
  return rows;
}

/* The comm line: which comm, its range and stuck op, and the frame shown. */
static void draw_comm_line(const view *v, tgrid *g, int r)
{
  if (v->comm < 0) {
    grid_put(g, r, 0, "no communicator in the dumps", TA_HEAD);
    return;
  }
  const fa_comm *c = &v->a->comms[v->comm];
  /* one line, put at once: cut at a word with " ..." when it does not fit */
  char line[1024];
  size_t n = 0;
#define ADD_(...) (n += (size_t)snprintf(line + n, n < sizeof line ? sizeof line - n : 0, __VA_ARGS__))
  ADD_("comm %016" PRIx64 " (%d/%u)  %d rank%s  seqs %" PRId64 "..%" PRId64, c->id, v->comm + 1, v->a->ncomms,
       c->size, c->size == 1 ? "" : "s", v->seq_lo, v->seq_hi);
  if (c->stuck)
    ADD_("  stuck seq %" PRIu64, c->stuck_seq);
  if (c->has_mismatch && n < sizeof line)
    ADD_("  mismatch seq %" PRIu64, c->mismatch.seq);
  const fa_frame *f = view_frame(v, view_sel_rank(v));
  /* frames numbered from 0, as in the dumps' names (f0000), fr-dump and --frame */
  if (n < sizeof line && v->frame + 1 == v->nframes)
    ADD_("  frame %u (latest)", v->frame);
  else if (n < sizeof line)
    ADD_("  frame %u of 0-%u", v->frame, v->nframes - 1);
  if (n < sizeof line && f && f->dump.process.trigger_time_ns) /* PyTorch dumps know no trigger time */
    ADD_(" at +%.3f s", rel_ms(f->dump.process.frame_time_ns, f->dump.process.trigger_time_ns) / 1e3);
  if (n < sizeof line && c->pt) { /* a PyTorch process group: its desc and name, last */
    char desc[FRZ_PT_NAME_MAX], name[FRZ_PT_NAME_MAX];
    fa_pt_desc(c, desc, sizeof desc);
    ADD_("  %s%spg %s", desc, desc[0] ? " " : "", fa_sanitize(c->pt->name, name, sizeof name));
  }
#undef ADD_
  grid_put_words(g, r, 0, line, TA_HEAD);
}

/* The label of a timeline row: a rank, or a folded set of ranks. */
static void row_label(const view *v, const trow *row, char *buf, size_t len)
{
  int32_t *gr = malloc(row->n * sizeof *gr);
  if (!gr) {
    snprintf(buf, len, "?");
    return;
  }
  for (uint32_t i = 0; i < row->n; i++)
    gr[i] = view_global(v, (int32_t)v->rowranks[row->first + i]);
  /* fa_format_ranks wants them sorted (missing ranks come after the others) */
  for (uint32_t i = 1; i < row->n; i++)
    for (uint32_t k = i; k > 0 && gr[k - 1] > gr[k]; k--) {
      int32_t t = gr[k];
      gr[k] = gr[k - 1];
      gr[k - 1] = t;
    }
  fa_format_ranks(gr, row->n, buf, len);
  free(gr);
}

/* The short label of a row: its ranks when they fit the label column,
 * else how many. */
static void row_short_label(const view *v, const trow *row, char *buf, size_t len)
{
  row_label(v, row, buf, len);
  if (strlen(buf) > LABEL_W - 2)
    snprintf(buf, len, "%u ranks", row->n);
}

/* Seq labels and the column markers above the cells. */
static void draw_columns(const view *v, tgrid *g, int r)
{
  grid_put(g, r, 0, "  rank", TA_HEAD);
  const fa_comm *c = v->comm >= 0 ? &v->a->comms[v->comm] : NULL;
  int64_t next_label = v->first_seq;
  for (int j = 0; j < v->page_cols; j++) {
    int64_t s = v->first_seq + j;
    if (s > v->seq_hi)
      break;
    int x = LABEL_W + j * CELL_W;
    if (s >= next_label && (s % 5 == 0 || j == 0)) {
      char lab[24];
      snprintf(lab, sizeof lab, "%" PRId64, s);
      grid_put(g, r, x, lab, TA_HEAD);
      next_label = s + (int64_t)(strlen(lab) + 1 + CELL_W - 1) / CELL_W;
    }
    if (s == v->sel_seq)
      grid_put(g, r + 1, x, "v", TA_HEAD);
    else if (c && c->stuck && (uint64_t)s == c->stuck_seq)
      grid_put(g, r + 1, x, "*", TA_HEAD);
  }
}

/* Timeline rows from r0 for n rows. */
static void draw_rows(const view *v, tgrid *g, int r0, int n)
{
  for (int i = 0; i < n; i++) {
    uint32_t ri = v->top_row + (uint32_t)i;
    if (ri >= v->nrows)
      break;
    const trow *row = &v->rows[ri];
    char lab[64];
    row_short_label(v, row, lab, sizeof lab);
    int sel = ri == v->sel_row;
    grid_printf(g, r0 + i, 0, sel ? TA_SELECT : TA_NONE, "%c%10.10s", sel ? '>' : ' ', lab);
    int32_t rank = (int32_t)v->rowranks[row->first];
    for (int j = 0; j < v->page_cols; j++) {
      int64_t s = v->first_seq + j;
      if (s > v->seq_hi)
        break;
      uint16_t at;
      char ch[2] = {view_cell(v, rank, s, &at), 0};
      if (sel && s == v->sel_seq)
        at |= TA_SELECT;
      grid_put(g, r0 + i, LABEL_W + j * CELL_W, ch, at);
    }
  }
}

/* The selected rank's proxy progress on the view's comm (frz 1.2 PROXY,
 * from NCCL's profiler plugin), one line: each connection with steps in
 * flight as "ch C send->P STATE for T s (done/posted steps)", then how many
 * are idle.  Empty when the frame has no proxy data for that comm. */
static void proxy_line(const view *v, const fa_frame *f, const frz_comm *fc, char *buf, size_t len)
{
  size_t n = 0, idle = 0, total = 0;
  buf[0] = 0;
  uint64_t now = f->dump.process.frame_time_ns;
  for (uint64_t i = 0; i < f->dump.nproxy; i++) {
    const frz_proxy *x = &f->dump.proxy[i];
    if (x->comm_id != fc->comm_id || (x->rank >= 0 && x->rank != fc->rank))
      continue;
    total++;
    if (x->steps_posted <= x->steps_done) {
      idle++;
      continue;
    }
    double secs = x->t_last_ns && now > x->t_last_ns ? (double)(now - x->t_last_ns) / 1e9 : 0;
    int k = snprintf(buf + n, len - n, "%sch %u %s%d %s for %.1f s (%" PRIu64 "/%" PRIu64 " steps)",
                     n ? "; " : "proxy: ", x->channel, frz_dir_arrow(x->dir), x->peer,
                     frz_proxy_state_name(x->state), secs, x->steps_done, x->steps_posted);
    if (k < 0 || (size_t)k >= len - n)
      return;
    n += (size_t)k;
  }
  if (total)
    snprintf(buf + n, len - n, "%s%zu of %zu connections idle", n ? "; " : "proxy: ", idle, total);
  (void)v;
}

/* Rows of the detail pane: one more when the selected rank's frame has
 * proxy progress. */
static int detail_rows(const view *v)
{
  const fa_frame *f = view_frame(v, view_sel_rank(v));
  return f && f->dump.nproxy ? DETAIL_H + 1 : DETAIL_H;
}

/* The detail pane of the selected cell, rows r0 .. r0+detail_rows()-1. */
static void draw_detail(const view *v, tgrid *g, int r0)
{
  int32_t ri = view_sel_rank(v);
  if (ri < 0) {
    grid_put(g, r0, 0, "-- no rank selected", TA_HEAD);
    return;
  }
  const fa_frame *f = view_frame(v, ri);
  int32_t e = view_entry(v, f);
  int32_t gr = view_global(v, ri);
  const fa_member *mem = view_member(v, ri);
  int x = grid_printf(g, r0, 0, TA_HEAD, "-- rank %d", gr);
  if (e >= 0)
    x = grid_printf(g, r0, x, TA_HEAD, " (comm rank %d)", f->dump.comms[e].rank);
  x = grid_printf(g, r0, x, TA_HEAD, ", seq %" PRId64 " ", v->sel_seq);
  if (v->rows[v->sel_row].n > 1) {
    char all[128];
    row_label(v, &v->rows[v->sel_row], all, sizeof all);
    x = grid_printf(g, r0, x, TA_HEAD, "(folded with the same cells: %s) ", all);
  }
  for (; x < g->cols; x++)
    grid_put(g, r0, x, "-", TA_HEAD);
  if (!f) {
    if (mem)
      grid_printf(g, r0 + 1, 0, TA_NEVER, "no dump from this rank: comm rank %d, member: %s", mem->comm_rank,
                  fa_member_state_name(mem->state));
    else
      grid_put(g, r0 + 1, 0, "no dump from this rank; not a member of the communicator", TA_NEVER);
    return;
  }
  const frz_process *p = &f->dump.process;
  char host[FRZ_HOST_MAX], trig[FRZ_TEXT_MAX];
  tui_clean(p->host, host, sizeof host);
  tui_clean(p->trigger_text, trig, sizeof trig);
  const char *mstate = mem ? fa_member_state_name(mem->state) : "not a member";
  grid_printf(g, r0 + 1, 0, TA_NONE, "host %s  pid %u  frame %u (%s)  member: %s", host, p->pid,
              p->frame, frz_trigger_name(p->trigger), mstate);
  if (e < 0) {
    grid_put(g, r0 + 2, 0, "this rank is not a member of the communicator", TA_NONE);
    return;
  }
  const frz_comm *fc = &f->dump.comms[e];
  const frz_record *rec = v->sel_seq >= 0 ? fa_frame_record(f, (uint32_t)e, (uint64_t)v->sel_seq) : NULL;
  if (!rec) {
    if (v->sel_seq > fc->last_enqueued_seq)
      grid_printf(g, r0 + 2, 0, TA_NEVER, "never reached: last enqueued seq %" PRId64, fc->last_enqueued_seq);
    else
      grid_printf(g, r0 + 2, 0, TA_NONE, "not retained: the ring starts at seq %" PRIu64,
                  fc->first_retained_seq);
    /* what the other members called there */
    const frz_dump *od = NULL;
    const frz_record *o = v->sel_seq >= 0 ? fa_comm_record_in(v->a, &v->a->comms[v->comm], (uint64_t)v->sel_seq, &od)
                                          : NULL;
    char onm[FRZ_PT_NAME_MAX];
    if (o) {
      char said[512];
      snprintf(said, sizeof said, "the others called %s  count %" PRIu64 "  %s%s%s there",
               fa_sanitize(fa_record_op_name(od, o), onm, sizeof onm), o->count, frz_dtype_name(o->dtype),
               o->redop == 255 ? "" : "  ", o->redop == 255 ? "" : frz_redop_name(o->redop));
      grid_put_words(g, r0 + 3, 0, said, TA_NONE);
    }
  } else {
    char root[32] = "-";
    if (rec->peer >= 0)
      snprintf(root, sizeof root, "%d", rec->peer);
    char nm[FRZ_PT_NAME_MAX];
    grid_printf(g, r0 + 2, 0, TA_NONE, "%s  count %" PRIu64 "  %s  %s  root/peer %s  group %" PRIu64 "  state %s",
                fa_sanitize(fa_record_op_name(&f->dump, rec), nm, sizeof nm), rec->count, frz_dtype_name(rec->dtype),
                frz_redop_name(rec->redop), root, rec->group_id, frz_state_name(rec->state));

    x = grid_printf(g, r0 + 3, 0, TA_NONE, "enqueued %+.3f ms", rel_ms(rec->t_enqueue_ns, p->frame_time_ns));
    x = rec->t_start_ns ? grid_printf(g, r0 + 3, x, TA_NONE, "  started %+.3f ms",
                                      rel_ms(rec->t_start_ns, p->frame_time_ns))
                        : grid_put(g, r0 + 3, x, "  not started", TA_NONE);
    x = rec->t_complete_ns ? grid_printf(g, r0 + 3, x, TA_NONE, "  completed %+.3f ms",
                                         rel_ms(rec->t_complete_ns, p->frame_time_ns))
                           : grid_put(g, r0 + 3, x, "  not completed", TA_NONE);
    x = grid_put(g, r0 + 3, x, "  (relative to the frame)", TA_NONE);
    if (rec->graph_id && (rec->flags & FRZ_RF_GRAPH_REPLAY)) /* one launch of a CUDA graph (frz 1.5) */
      grid_printf(g, r0 + 3, x, TA_NONE, "  replay %" PRIu32 " of graph %u", rec->replay, (unsigned)rec->graph_id);
    else if (rec->graph_id)
      grid_printf(g, r0 + 3, x, TA_NONE, "  captured into graph %u", (unsigned)rec->graph_id);
    const frz_callsite *cs = rec->call_site ? frz_find_callsite(&f->dump, rec->call_site) : NULL;
    x = 0;
    if (cs) {
      char mod[FRZ_MODULE_MAX], sym[FRZ_SYMBOL_MAX];
      tui_clean(cs->module, mod, sizeof mod);
      tui_clean(cs->symbol, sym, sizeof sym);
      x = grid_printf(g, r0 + 4, 0, TA_NONE, "call site %s%s%s+0x%" PRIx64 "  ", mod[0] ? mod : "?",
                      sym[0] ? " " : "", sym, cs->offset);
    } else if (rec->call_site) {
      x = grid_printf(g, r0 + 4, 0, TA_NONE, "call site 0x%" PRIx64 " (not symbolised)  ", rec->call_site);
    }
    if (rec->nccl_seq != UINT64_MAX && rec->nchannels) /* what NCCL's profiler plugin said of it */
      grid_printf(g, r0 + 4, x, TA_NONE, "NCCL seq %" PRIu64 " %s/%s %u channels", rec->nccl_seq,
                  frz_algo_name(rec->algo), frz_proto_name(rec->proto), rec->nchannels);
  }
  char line[1024];
  snprintf(line, sizeof line, "last enqueued %" PRId64 "  started %" PRId64 "  completed %" PRId64
           "  retained from %" PRIu64 "  trigger: %s",
           fc->last_enqueued_seq, fc->last_started_seq, fc->last_completed_seq, fc->first_retained_seq, trig);
  grid_put_words(g, r0 + 5, 0, line, TA_NONE);
  if (f->dump.nproxy) {
    proxy_line(v, f, fc, line, sizeof line);
    grid_put_words(g, r0 + 6, 0, line[0] ? line : "proxy: no progress recorded on this communicator", TA_NONE);
  }
}

/* Lines of text (info or help) from r0, at most n; returns rows used. */
static int draw_lines(tgrid *g, int r0, int n, const char *text, uint16_t at)
{
  int used = 0;
  while (text && *text && used < n) {
    const char *nl = strchr(text, '\n');
    size_t len = nl ? (size_t)(nl - text) : strlen(text);
    char line[512];
    snprintf(line, sizeof line, "%.*s", (int)(len < sizeof line ? len : sizeof line - 1), text);
    grid_put_words(g, r0 + used++, 0, line, at);
    text = nl ? nl + 1 : text + len;
  }
  return used;
}

/* Count the lines of a text. */
static int count_lines(const char *s)
{
  if (!s || !*s)
    return 0;
  int n = 1;
  for (; *s; s++)
    if (*s == '\n' && s[1])
      n++;
  return n;
}

void render(view *v, tgrid *g)
{
  grid_clear(g);
  int r = draw_bar(v, g);
  int last = g->rows - 1; /* status line */
  if (v->help) {
    grid_put(g, r, 0, "-- keys (any key closes this help) ", TA_HEAD);
    for (int i = 0; keys_help[i] && r + 1 + i < last; i++)
      grid_put(g, r + 1 + i, 2, keys_help[i], TA_NONE);
    grid_put(g, last, 0, "?: close help  q: quit", TA_HEAD);
    return;
  }
  if (v->choose) {
    chooser_draw(v, g, r, last);
    grid_put(g, last, 0, "Enter: show this communicator  Esc: keep the current one  q: quit", TA_HEAD);
    return;
  }
  draw_comm_line(v, g, r++);
  /* problems and info lines sit between the timeline and the detail pane;
   * the info lines get 8 rows, and the rows the timeline leaves empty */
  int nprob = (int)(v->a->nproblems > 3 ? 3 : v->a->nproblems);
  int detail_top = last - detail_rows(v);
  int room = detail_top - nprob - (r + 2) - 1; /* keep one timeline row */
  v->info_max = room - (int)v->nrows > 8 ? room - (int)v->nrows : 8;
  if (v->info_max > room)
    v->info_max = room > 1 ? room : 1;
  if (v->stacks)
    stacks_info(v); /* follows the selected rank */
  int ninfo = count_lines(v->info);
  if (ninfo > v->info_max)
    ninfo = v->info_max;
  int info_top = detail_top - ninfo;
  int prob_top = info_top - nprob;
  int rows_top = r + 2;
  v->page_rows = prob_top - rows_top;
  if (v->page_rows < 1)
    v->page_rows = 1;
  v->page_cols = (g->cols - LABEL_W) / CELL_W;
  if (v->page_cols < 1)
    v->page_cols = 1;
  view_scroll(v);
  draw_columns(v, g, r);
  draw_rows(v, g, rows_top, prob_top - rows_top);
  for (int i = 0; i < nprob; i++) {
    const fa_problem *p = &v->a->problems[i];
    char file[256], msg[256];
    tui_clean(p->file ? p->file : "-", file, sizeof file);
    tui_clean(p->message, msg, sizeof msg);
    if (i == 2 && v->a->nproblems > 3)
      grid_printf(g, prob_top + i, 0, TA_PROBLEM, "problem: ... and %u more", v->a->nproblems - 2);
    else {
      char line[600];
      snprintf(line, sizeof line, "problem: %s: %s", file, msg);
      grid_put_words(g, prob_top + i, 0, line, TA_PROBLEM);
    }
  }
  draw_lines(g, info_top, ninfo, v->info, TA_HEAD);
  draw_detail(v, g, detail_top);
  if (v->prompt)
    grid_printf(g, last, 0, TA_HEAD, "find rank: %s_", v->input);
  else if (v->msg[0])
    grid_put(g, last, 0, v->msg, TA_HEAD);
  else { /* the legend; the keys' hint goes first when the row is short */
    static const char legend[] = "C completed S started E enqueued . never reached ! mismatch";
    static const char hint[] = "  |  ? keys  q quit";
    int full = (int)(sizeof legend + sizeof hint - 2) <= g->cols;
    grid_put_words(g, last, 0, full ? "C completed S started E enqueued . never reached ! mismatch  |  ? keys  q quit"
                                    : legend, TA_HEAD);
  }
}
