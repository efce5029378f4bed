/* view.c — the browsing state over an analysis: communicator, frame step,
 * rows (folded or not) and the selected cell.  No drawing here. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "tui.h"

uint32_t view_nranks(const view *v)
{
  return v->a->nranks + v->a->ranks_missing.n;
}

int32_t view_global(const view *v, int32_t ri)
{
  if (ri < 0 || (uint32_t)ri >= view_nranks(v))
    return -1;
  if ((uint32_t)ri < v->a->nranks)
    return v->a->ranks[ri].global_rank;
  return v->a->ranks_missing.v[(uint32_t)ri - v->a->nranks];
}

int32_t view_find(const view *v, int32_t g)
{
  int32_t ri = fa_find_rank(v->a, g);
  if (ri >= 0)
    return ri;
  for (uint32_t i = 0; i < v->a->ranks_missing.n; i++)
    if (v->a->ranks_missing.v[i] == g)
      return (int32_t)(v->a->nranks + i);
  return -1;
}

const fa_member *view_member(const view *v, int32_t ri)
{
  if (v->comm < 0 || ri < 0)
    return NULL;
  const fa_comm *c = &v->a->comms[v->comm];
  int32_t g = view_global(v, ri);
  for (int32_t m = 0; m < c->size; m++) {
    const fa_member *x = &c->members[m];
    if ((uint32_t)ri < v->a->nranks ? x->rank == ri : (x->rank < 0 && x->global_rank == g))
      return x;
  }
  return NULL;
}

const fa_frame *view_frame(const view *v, int32_t ri)
{
  if (ri < 0 || (uint32_t)ri >= v->a->nranks)
    return NULL;
  const fa_rank *r = &v->a->ranks[ri];
  if (r->nframes == 0)
    return NULL;
  uint32_t k = v->frame < r->nframes ? v->frame : r->nframes - 1;
  return &v->a->frames[r->first_frame + k];
}

int32_t view_entry(const view *v, const fa_frame *f)
{
  if (!f || v->comm < 0)
    return -1;
  uint64_t id = v->a->comms[v->comm].id;
  for (uint32_t i = 0; i < f->dump.ncomms; i++)
    if (f->dump.comms[i].comm_id == id)
      return (int32_t)i;
  return -1;
}

/* Whether comm rank `cr` is outside the largest signature group at the
 * comm's first divergence. */
static int in_minority(const fa_comm *c, int32_t cr)
{
  for (uint32_t g = 1; g < c->mismatch.ngroups; g++) {
    const fa_group *gr = &c->mismatch.groups[g];
    for (uint32_t i = 0; i < gr->n; i++)
      if (c->mismatch.members[gr->first + i] == cr)
        return 1;
  }
  return 0;
}

char view_cell(const view *v, int32_t ri, int64_t seq, uint16_t *at)
{
  *at = TA_NONE;
  if (ri >= 0 && (uint32_t)ri >= v->a->nranks) {
    /* expected but no dump: a member of this comm is shown as unknown */
    if (!view_member(v, ri))
      return ' ';
    *at = TA_NEVER;
    return '?';
  }
  const fa_frame *f = view_frame(v, ri);
  int32_t e = view_entry(v, f);
  if (e < 0 || seq < 0)
    return ' ';
  const fa_comm *c = &v->a->comms[v->comm];
  const frz_comm *fc = &f->dump.comms[e];
  const frz_record *rec = fa_frame_record(f, (uint32_t)e, (uint64_t)seq);
  if (c->has_mismatch && (uint64_t)seq == c->mismatch.seq && in_minority(c, fc->rank)) {
    *at = TA_MISMATCH;
    return '!';
  }
  if (rec) {
    switch (rec->state) {
    case FRZ_STATE_COMPLETED: *at = TA_DONE; return 'C';
    case FRZ_STATE_STARTED: *at = TA_STARTED; return 'S';
    case FRZ_STATE_FAILED: *at = TA_MISMATCH; return 'F';
    default: *at = TA_ENQUEUED; return 'E';
    }
  }
  if (seq > fc->last_enqueued_seq) {
    *at = TA_NEVER;
    return '.';
  }
  return '-'; /* issued, but no longer in the ring */
}

#define VIEW_SEQ_MAX ((int64_t)1 << 62)

/* Column range of the view's comm over every frame of every rank. */
static void seq_range(view *v)
{
  const fa_comm *c = &v->a->comms[v->comm];
  int64_t lo = c->seq_lo, hi = c->seq_hi;
  for (uint32_t i = 0; i < v->a->nframes; i++) {
    const fa_frame *f = &v->a->frames[i];
    int32_t e = view_entry(v, f);
    if (e < 0)
      continue;
    const frz_comm *fc = &f->dump.comms[e];
    if (fc->last_enqueued_seq < 0)
      continue;
    if (lo < 0 || (int64_t)fc->first_retained_seq < lo)
      lo = (int64_t)fc->first_retained_seq;
    if (fc->last_enqueued_seq > hi)
      hi = fc->last_enqueued_seq;
  }
  if (c->stuck && (int64_t)c->stuck_seq > hi)
    hi = (int64_t)c->stuck_seq;
  if (lo < 0)
    lo = 0;
  /* bounded like the analyzer's seqs, so that column arithmetic
   * (first_seq + page_cols, seq_hi + 1) cannot overflow on hostile dumps */
  if (hi > VIEW_SEQ_MAX)
    hi = VIEW_SEQ_MAX;
  if (lo > hi && hi >= 0)
    lo = hi;
  v->seq_lo = lo;
  v->seq_hi = hi;
}

void view_set_comm(view *v, int32_t comm)
{
  v->comm = comm;
  if (comm < 0) {
    v->seq_lo = 0;
    v->seq_hi = -1;
    v->sel_seq = v->first_seq = 0;
    return;
  }
  seq_range(v);
  const fa_comm *c = &v->a->comms[comm];
  if (c->stuck)
    v->sel_seq = (int64_t)c->stuck_seq;
  else if (c->has_mismatch)
    v->sel_seq = (int64_t)c->mismatch.seq;
  else
    v->sel_seq = v->seq_hi >= v->seq_lo ? v->seq_hi : 0;
  v->first_seq = v->seq_lo;
  v->page_cols = 0; /* recentre on the next render */
}

int32_t view_sel_rank(const view *v)
{
  if (v->sel_row >= v->nrows)
    return -1;
  return (int32_t)v->rowranks[v->rows[v->sel_row].first];
}

int view_select_rank(view *v, int32_t ri)
{
  for (uint32_t r = 0; r < v->nrows; r++)
    for (uint32_t i = 0; i < v->rows[r].n; i++)
      if ((int32_t)v->rowranks[v->rows[r].first + i] == ri) {
        v->sel_row = r;
        return 0;
      }
  return -1;
}

/* Whether ranks x and y show the same cells over the comm's whole range. */
static int same_cells(const view *v, int32_t x, int32_t y)
{
  for (int64_t s = v->seq_lo; s <= v->seq_hi; s++) {
    uint16_t ax, ay;
    if (view_cell(v, x, s, &ax) != view_cell(v, y, s, &ay) || ax != ay)
      return 0;
  }
  return 1;
}

int view_rebuild(view *v)
{
  int32_t keep = view_sel_rank(v);
  uint32_t n = view_nranks(v);
  free(v->rows);
  free(v->rowranks);
  v->rows = calloc(n ? n : 1, sizeof *v->rows);
  v->rowranks = calloc(n ? n : 1, sizeof *v->rowranks);
  if (!v->rows || !v->rowranks)
    return -1;
  v->nrows = 0;
  /* global rank order: merge the ranks with dumps and the missing ones */
  uint32_t *order = malloc((n ? n : 1) * sizeof *order);
  if (!order)
    return -1;
  for (uint32_t i = 0, d = 0, m = v->a->nranks; i < n; i++)
    order[i] = (m >= n || (d < v->a->nranks && view_global(v, (int32_t)d) < view_global(v, (int32_t)m)))
                   ? d++ : m++;
  if (!v->fold) {
    for (uint32_t i = 0; i < n; i++) {
      v->rowranks[i] = order[i];
      v->rows[v->nrows++] = (trow){i, 1};
    }
  } else {
    /* group[i]: the row of rank i; ranks are placed row by row after. */
    uint32_t *group = malloc((n ? n : 1) * sizeof *group), *rep = malloc((n ? n : 1) * sizeof *rep);
    if (!group || !rep) {
      free(group);
      free(rep);
      free(order);
      return -1;
    }
    for (uint32_t i = 0; i < n; i++) {
      uint32_t g = 0;
      while (g < v->nrows && !same_cells(v, (int32_t)rep[g], (int32_t)order[i]))
        g++;
      if (g == v->nrows) {
        rep[g] = order[i];
        v->rows[v->nrows++] = (trow){0, 0};
      }
      group[i] = g;
      v->rows[g].n++;
    }
    uint32_t at = 0;
    for (uint32_t g = 0; g < v->nrows; g++) {
      v->rows[g].first = at;
      uint32_t k = 0;
      for (uint32_t i = 0; i < n; i++)
        if (group[i] == g)
          v->rowranks[at + k++] = order[i];
      at += k;
    }
    free(group);
    free(rep);
  }
  free(order);
  v->sel_row = 0;
  if (keep >= 0)
    view_select_rank(v, keep);
  return 0;
}

void view_scroll(view *v)
{
  if (v->sel_seq < v->seq_lo)
    v->sel_seq = v->seq_lo;
  if (v->sel_seq > v->seq_hi && v->seq_hi >= v->seq_lo)
    v->sel_seq = v->seq_hi;
  if (v->nrows && v->sel_row >= v->nrows)
    v->sel_row = v->nrows - 1;
  if (v->page_rows > 0) {
    /* no blank rows at the bottom while there are rows above */
    if (v->top_row + (uint32_t)v->page_rows > v->nrows)
      v->top_row = v->nrows > (uint32_t)v->page_rows ? v->nrows - (uint32_t)v->page_rows : 0;
    if (v->sel_row < v->top_row)
      v->top_row = v->sel_row;
    if (v->sel_row >= v->top_row + (uint32_t)v->page_rows)
      v->top_row = v->sel_row - (uint32_t)v->page_rows + 1;
  }
  if (v->page_cols > 0) {
    /* no blank columns on the right while there are seqs to the left (after a resize) */
    if (v->first_seq + v->page_cols > v->seq_hi + 1)
      v->first_seq = v->seq_hi + 1 - v->page_cols < v->seq_lo ? v->seq_lo : v->seq_hi + 1 - v->page_cols;
    if (v->sel_seq < v->first_seq || v->sel_seq >= v->first_seq + v->page_cols) {
      /* the selected column two thirds of the way across */
      v->first_seq = v->sel_seq - (v->page_cols * 2) / 3;
      if (v->first_seq + v->page_cols > v->seq_hi + 1)
        v->first_seq = v->seq_hi + 1 - v->page_cols;
      if (v->first_seq < v->seq_lo)
        v->first_seq = v->seq_lo;
    }
  }
}

void view_info(view *v, const char *fmt, ...)
{
  free(v->info);
  v->info = NULL;
  if (!fmt)
    return;
  va_list ap;
  va_start(ap, fmt);
  if (vasprintf(&v->info, fmt, ap) < 0)
    v->info = NULL;
  va_end(ap);
}

/* The first root-cause rank as a rank index (lagging, cycle and
 * stragglers as fallbacks); -1 none. */
static int32_t culprit(const view *v)
{
  const fa_verdict *vd = &v->a->verdict;
  if (vd->root_cause.n)
    return view_find(v, vd->root_cause.v[0]);
  if (vd->lagging.n)
    return view_find(v, vd->lagging.v[0]);
  if (vd->ncycle)
    return view_find(v, vd->cycle[0].rank);
  if (vd->nstragglers)
    return view_find(v, vd->stragglers[0].rank);
  return -1;
}

int view_init(view *v, const fa_analysis *a)
{
  memset(v, 0, sizeof *v);
  v->a = a;
  v->info_max = 8;
  for (uint32_t i = 0; i < a->nranks; i++)
    if (a->ranks[i].nframes > v->nframes)
      v->nframes = a->ranks[i].nframes;
  v->frame = v->nframes ? v->nframes - 1 : 0;
  int32_t comm = a->verdict.comm >= 0 ? a->verdict.comm : a->verdict.mismatch_comm;
  if (comm < 0)
    comm = a->ncomms ? 0 : -1;
  view_set_comm(v, comm);
  if (view_rebuild(v) < 0)
    return -1;
  int32_t ri = culprit(v);
  if (ri >= 0)
    view_select_rank(v, ri);
  return 0;
}

/* The rank index that `r` and the first screen select. */
int32_t view_culprit(const view *v)
{
  return culprit(v);
}

void view_free(view *v)
{
  free(v->rows);
  free(v->rowranks);
  free(v->info);
  v->rows = NULL;
  v->rowranks = NULL;
  v->info = NULL;
}
