/* outside.c — ranks that wait for another rank outside NCCL (fr-analyze(1),
 * "waits outside NCCL"): a lagging rank is a root cause because it is in no
 * NCCL call, but a rank blocked in a unique id's exchange or a host-side
 * barrier is in none either, and it waits for a peer.  Its stack says so. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* Frames (substrings of a frame's name, mangled C++ included) of a thread
 * that waits for another rank outside NCCL.  Each says whose code it is. */
static const char *const outside_frames[] = {
    "broadcastUniqueNCCLID", /* PyTorch ProcessGroupNCCL: a lazily made comm's unique id, which its
                                rank 0 makes and the others fetch from the store */
    "TCPStore",              /* PyTorch c10d's store client: get or wait on a key another rank sets */
    "BlockingKeyValueGet",   /* XLA's distributed runtime client (JAX): a key another process sets */
    "MPI_Bcast",             /* MPI: how NCCL+MPI programs (nccl-tests) hand out the unique id */
    "MPI_Barrier",           /* MPI: a host-side barrier */
    "boot_unique_id",        /* the NCCL simulator's stand-in for a unique id's exchange */
};

/* Only the innermost frames of a stack count: a thread blocked in one of
 * these is deep inside it. */
#define OUTSIDE_DEPTH 24

const char *fa_waits_outside(const fa_analysis *a, int32_t g)
{
  int32_t k = fa_find_rank(a, g);
  const frz_stack *t = fa_rank_thread(a, g);
  if (k < 0 || !t || t->status != FRZ_STACK_OK) return NULL;
  const frz_dump *d = &fa_rank_latest(a, &a->ranks[k])->dump;
  if (d->process.trigger == FRZ_TRIGGER_EXIT) return NULL; /* its last stack was taken as it ended */
  char **frames = NULL;
  uint32_t n = 0;
  if (fa_thread_frames(d, t, 0, &frames, &n)) return NULL;
  const char *hit = NULL;
  for (uint32_t i = 0; i < n && i < OUTSIDE_DEPTH && !hit; i++)
    for (size_t f = 0; f < sizeof outside_frames / sizeof *outside_frames && !hit; f++)
      if (strstr(frames[i], outside_frames[f])) hit = outside_frames[f];
  fa_strings_free(frames, n);
  return hit;
}

/* Did rank g's own NCCL call fail (a record FAILED with an error, as a
 * creation that NCCL refused)?  A fault of its own wherever it waits now. */
static int own_call_failed(const fa_analysis *a, int32_t g)
{
  int32_t k = fa_find_rank(a, g);
  if (k < 0) return 0;
  const frz_dump *d = &fa_rank_latest(a, &a->ranks[k])->dump;
  for (uint64_t i = 0; i < d->nrecords; i++)
    if (d->records[i].state == FRZ_STATE_FAILED && d->records[i].result > 0) return 1;
  return 0;
}

int fa_drop_outside_waiters(const fa_analysis *a, fa_ranks *roots, fa_ranks *out, const char **frame)
{
  uint32_t cap = 0, keep = 0, others = 0;
  const char **hits = calloc(roots->n ? roots->n : 1, sizeof *hits);
  if (!hits) return -1;
  for (uint32_t i = 0; i < roots->n; i++)
    others += !(hits[i] = own_call_failed(a, roots->v[i]) ? NULL : fa_waits_outside(a, roots->v[i]));
  for (uint32_t i = 0; others && i < roots->n; i++) { /* (none: nobody else to wait for, they stay) */
    const char *hit = hits[i];
    if (!hit) {
      roots->v[keep++] = roots->v[i];
      continue;
    }
    if (!*frame) *frame = hit;
    if (fa_ranks_push(out, &cap, roots->v[i])) {
      free(hits);
      return -1;
    }
  }
  free(hits);
  if (!others) return 0;
  roots->n = keep;
  fa_ranks_sort(out);
  return 0;
}
