/* alive.c — what the recorders' announcements say of the ranks that left
 * no dump (frz.md, "Announcements").  A recording process keeps one in its
 * dump directory from its first communicator to its clean exit, so a rank
 * without a dump whose announcement is there was running and ended without
 * a clean exit (killed, or hung where it could not write); one without,
 * in a directory where others of its job announced themselves, never
 * created a communicator with the recorder loaded, or exited cleanly. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "internal.h"

/* Is x of the job analysed?  (Its job id is written with some characters
 * replaced: compare it with the dumps' one written alike.) */
static int of_job(const fa_analysis *a, const frz_alive *x)
{
  char job[FRZ_JOB_MAX];
  frz_alive_job(job, sizeof job, a->job_id);
  return strcmp(x->job_id, job) == 0;
}

const frz_alive *fa_alive_of(const fa_analysis *a, int32_t g)
{
  const frz_alive *best = NULL;
  for (uint32_t i = 0; i < a->nalive; i++) {
    const frz_alive *x = &a->alive[i];
    if (x->global_rank != g || !of_job(a, x)) continue;
    if (!best || x->time_ns > best->time_ns) best = x;
  }
  return best;
}

int fa_alive_any(const fa_analysis *a)
{
  for (uint32_t i = 0; i < a->nalive; i++)
    if (of_job(a, &a->alive[i])) return 1;
  return 0;
}

int fa_alive_split(const fa_analysis *a, const fa_ranks *r, fa_ranks *announced, fa_ranks *silent)
{
  uint32_t c1 = 0, c2 = 0;
  memset(announced, 0, sizeof *announced);
  memset(silent, 0, sizeof *silent);
  if (!fa_alive_any(a)) return 0;
  for (uint32_t i = 0; i < r->n; i++)
    if (fa_ranks_push(fa_alive_of(a, r->v[i]) ? announced : silent, fa_alive_of(a, r->v[i]) ? &c1 : &c2,
                      r->v[i])) {
      fa_ranks_free(announced);
      fa_ranks_free(silent);
      return -1;
    }
  return 0;
}

/* Did an input file of global rank g (by the recorder's name, "-rNNNNN-f")
 * fail to read (an empty or damaged dump: it began one)? */
static int unread_of(const fa_analysis *a, int32_t g)
{
  char tag[24];
  snprintf(tag, sizeof tag, "-r%05d-f", g);
  for (uint32_t i = 0; i < a->nproblems; i++) {
    const char *f = a->problems[i].file;
    const char *base = f ? strrchr(f, '/') : NULL;
    if (f && strstr(base ? base + 1 : f, tag)) return 1;
  }
  return 0;
}

/* Are every dump analysed in one directory (the job's shared dump
 * directory, where every process announced itself: not one node's of
 * several gathered, where another node's announcements are not seen)? */
static int one_directory(const fa_analysis *a)
{
  const char *d0 = NULL;
  size_t n0 = 0;
  for (uint32_t i = 0; i < a->nframes; i++) {
    const char *f = a->frames[i].name, *sl = f ? strrchr(f, '/') : NULL;
    size_t n = sl ? (size_t)(sl - f) : 0;
    if (!f) return 0;
    if (!d0) {
      d0 = f;
      n0 = n;
    } else if (n != n0 || strncmp(f, d0, n)) {
      return 0;
    }
  }
  return d0 != NULL;
}

int fa_ended_cleanly(const fa_analysis *a, const fa_comm *c, const fa_member *m)
{
  if (m->rank >= 0 || m->global_rank < 0 || fa_find_rank(a, m->global_rank) >= 0 || !fa_alive_any(a) ||
      fa_alive_of(a, m->global_rank) || unread_of(a, m->global_rank) || !one_directory(a))
    return 0;
  /* it took part in the comm: a member with a dump completed, after the
   * creation, a collective that needs every member (tracked) */
  for (int32_t r = 0; r < c->size; r++) {
    const fa_member *o = &c->members[r];
    if (o->rank < 0 || o->counters_unknown) continue;
    const fa_frame *f = &a->frames[o->frame];
    if (f->dump.pt) continue;
    const fa_slice *sl = &f->coll[o->entry];
    for (uint32_t k = 0; k < sl->len; k++) {
      const frz_record *x = &f->dump.records[f->idx[sl->start + k]];
      if (x->seq >= 1 && x->state == FRZ_STATE_COMPLETED && !(x->flags & FRZ_RF_NO_TRACKING) &&
          (x->op == FRZ_OP_AllReduce || x->op == FRZ_OP_AllGather || x->op == FRZ_OP_ReduceScatter ||
           x->op == FRZ_OP_AlltoAll))
        return 1;
    }
  }
  return 0;
}
