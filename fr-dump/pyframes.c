/* pyframes.c — a thread's Python frames in a dump, found by binary search.
 * PYFRAMES items are grouped by thread and in index order (frz.md), so a
 * thread's frames are one run of consecutive items; runs are sorted by
 * thread handle once per dump, which keeps printing linear in the dump's
 * size even when every thread or every frame is hostile. */
#include "config.h"

#include <stdlib.h>

#include "fr_dump.h"

static int cmp_run(const void *x, const void *y)
{
  const fd_pyrun *a = x, *b = y;
  if (a->handle != b->handle) return a->handle < b->handle ? -1 : 1;
  return (a->start > b->start) - (a->start < b->start);
}

int fd_pyindex_build(const frz_dump *d, fd_pyindex *ix)
{
  ix->runs = NULL;
  ix->n = 0;
  if (!d->npyframes) return 0;
  ix->runs = malloc((size_t)d->npyframes * sizeof *ix->runs);
  if (!ix->runs) return -1;
  for (uint32_t k = 0; k < d->npyframes; k++) {
    uint64_t h = d->pyframes[k].thread_handle;
    if (ix->n && ix->runs[ix->n - 1].handle == h && ix->runs[ix->n - 1].start + ix->runs[ix->n - 1].len == k) {
      ix->runs[ix->n - 1].len++;
      continue;
    }
    ix->runs[ix->n++] = (fd_pyrun){h, k, 1};
  }
  qsort(ix->runs, ix->n, sizeof *ix->runs, cmp_run);
  return 0;
}

const fd_pyrun *fd_pyindex_find(const fd_pyindex *ix, uint64_t handle)
{
  uint32_t lo = 0, hi = ix->n;
  if (!handle) return NULL;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (ix->runs[mid].handle < handle) lo = mid + 1;
    else hi = mid;
  }
  return lo < ix->n && ix->runs[lo].handle == handle ? &ix->runs[lo] : NULL;
}

void fd_pyindex_free(fd_pyindex *ix)
{
  free(ix->runs);
  ix->runs = NULL;
  ix->n = 0;
}
