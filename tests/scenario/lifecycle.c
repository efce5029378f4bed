/* lifecycle.c — the communicators of fr-scenario-job on this rank: created
 * before the loop (in file order) or, for a late comm, by `create NAME` or
 * by the first op on it that the rank runs (as PyTorch creates a process
 * group's NCCL comm at its first collective); ended by destroy, finalize
 * or abort, by the body or by the watchdog (every held comm, in reverse
 * creation order); the ones still held destroyed at the end.  A split or
 * shrink of a late parent creates the parent first; one whose parent this
 * rank no longer holds is never created.  A comm, once created or ended,
 * is never created again. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "job.h"
#include "sim.h"

static const char *job_life_name(enum sc_kind kind)
{
  return kind == SC_DESTROY ? "ncclCommDestroy" : kind == SC_FINALIZE ? "ncclCommFinalize" : "ncclCommAbort";
}

/* The instance whose unique id a uid=shared comm uses: the one of the
 * lowest color. */
static int job_shared_instance(const struct sc_comm *cm, int world, int *members)
{
  int inst = -1;
  long low = -1;
  *members = 0;
  for (int g = 0; g < world; g++) {
    if (cm->rank_of[g] < 0)
      continue;
    (*members)++;
    if (inst < 0 || cm->color_of[g] < low) {
      low = cm->color_of[g];
      inst = cm->inst_of[g];
    }
  }
  return inst;
}

/* init-fail: the result this rank's creation of comm i is to fail with
 * (set as the simulator's knob before the call), ncclSuccess if none. */
static ncclResult_t job_init_fault(const struct job *j, int i)
{
  ncclResult_t err = ncclSuccess;
  for (int k = 0; k < j->sc.nfaults; k++) {
    const struct sc_fault *f = &j->sc.faults[k];
    if ((f->actions & SC_F_INIT_FAIL) && f->init_comm == i && sc_set_has(&f->ranks, j->grank))
      err = f->init_error;
  }
  if (err != ncclSuccess)
    sim_fail_next_init(err);
  return err;
}

/* The result of a creation: the injected failure is expected (the rank
 * goes on without the comm, as a program that checks the result and
 * carries on: its later ops on it are skipped); anything else must be
 * success. */
static void job_create_check(const struct job *j, int i, ncclResult_t want, ncclResult_t rc, const char *what)
{
  const struct sc_comm *cm = &j->sc.comms[i];
  if (want != ncclSuccess && rc == want) {
    if (j->verbose)
      fprintf(stderr, "rank %d: %s of %s failed as injected (%s); going on without it\n", j->grank, what,
              cm->name, ncclGetErrorString(rc));
    return;
  }
  job_nccl_check(j, rc, what, cm->line);
}

/* ncclCommInitRank of this rank's instance of a world or init comm. */
static void job_create_init(struct job *j, int i, int site)
{
  const struct sc_comm *cm = &j->sc.comms[i];
  int g = j->grank;
  struct job_ncall c = { .what = JN_INIT_RANK, .out = &j->comms[i].h[0] };
  c.nranks = cm->size_of[g];
  c.rank = cm->rank_of[g];
  int inst = cm->inst_of[g], make = cm->rank_of[g] == 0, local = cm->size_of[g] == 1;
  if (cm->uid_shared) {
    int members;
    inst = job_shared_instance(cm, j->sc.world, &members);
    make = make && cm->inst_of[g] == inst;
    local = members == 1;
  }
  if (boot_unique_id(cm->name, inst, make, local, &c.id) != 0)
    job_fatal(1, "rank %d: no unique id for communicator %s", g, cm->name);
  ncclResult_t want = job_init_fault(j, i);
  job_create_check(j, i, want, job_ncall(site, &c), "ncclCommInitRank");
}

/* ncclCommSplit or ncclCommShrink on the parent: the split by every member
 * of the parent (NCCL_SPLIT_NOCOLOR without a color), the shrink by the
 * members not excluded. */
static void job_create_child(struct job *j, int i, int site)
{
  const struct sc_comm *cm = &j->sc.comms[i];
  const struct sc_comm *pc = &j->sc.comms[cm->parent];
  int g = j->grank;
  if (!j->comms[cm->parent].created)
    job_comm_create(j, cm->parent, 0);
  ncclComm_t parent = j->comms[cm->parent].h[0];
  if (!parent) {
    if (j->verbose && pc->rank_of[g] >= 0)
      fprintf(stderr, "rank %d: %s: its parent %s is gone, not created\n", g, cm->name, pc->name);
    return;
  }
  struct job_ncall c = { .what = JN_SPLIT, .comm = parent, .out = &j->comms[i].h[0] };
  if (cm->how == SC_COMM_SPLIT) {
    c.color = cm->rank_of[g] >= 0 ? (int)cm->color_of[g] : NCCL_SPLIT_NOCOLOR;
    c.key = (int)cm->key_of[g];
    ncclResult_t want = cm->rank_of[g] >= 0 ? job_init_fault(j, i) : ncclSuccess;
    job_create_check(j, i, want, job_ncall(site, &c), "ncclCommSplit");
    return;
  }
  if (cm->rank_of[g] < 0)
    return;                     /* excluded: does not call ncclCommShrink */
  int excl[SC_MAX_WORLD], n = 0;
  for (int r = 0; r < pc->size_of[g]; r++)
    if (sc_set_has(&cm->exclude, r))
      excl[n++] = r;
  c.what = JN_SHRINK;
  c.excl = excl;
  c.nexcl = n;
  ncclResult_t want = job_init_fault(j, i);
  job_create_check(j, i, want, job_ncall(site, &c), "ncclCommShrink");
}

/* Each handle against the plan: rank and size (an initall comm's device d
 * is comm rank d). */
static void job_check_plan(const struct job *j, int i)
{
  const struct sc_comm *cm = &j->sc.comms[i];
  const struct job_comm *jc = &j->comms[i];
  int g = j->grank;
  int want = cm->how == SC_COMM_INITALL || cm->rank_of[g] >= 0;
  for (int d = 0; d < jc->ndev; d++) {
    if ((jc->h[d] != NULL) != want)
      job_fatal(1, "rank %d: communicator %s: membership differs from the plan", g, cm->name);
    if (!jc->h[d])
      continue;
    int r = -1, n = -1, wr = cm->how == SC_COMM_INITALL ? d : cm->rank_of[g];
    ncclCommUserRank(jc->h[d], &r);
    ncclCommCount(jc->h[d], &n);
    if (r != wr || n != cm->size_of[g])
      job_fatal(1, "rank %d: communicator %s: rank %d of %d, the plan says %d of %d", g, cm->name, r, n, wr,
                cm->size_of[g]);
  }
}

void job_comm_create(struct job *j, int i, int site)
{
  const struct sc_comm *cm = &j->sc.comms[i];
  struct job_comm *jc = &j->comms[i];
  if (jc->created)
    return;
  jc->created = 1;
  int g = j->grank;
  switch (cm->how) {
  case SC_COMM_WORLD:
  case SC_COMM_INIT:
    if (cm->rank_of[g] >= 0)
      job_create_init(j, i, site);
    break;
  case SC_COMM_SPLIT:
  case SC_COMM_SHRINK:
    job_create_child(j, i, site);
    if (!jc->h[0] && cm->rank_of[g] >= 0 && !j->comms[cm->parent].h[0])
      return;                   /* the parent is gone: never created */
    if (!jc->h[0] && cm->rank_of[g] >= 0)
      return;                   /* its creation failed (init-fail) */
    break;
  case SC_COMM_INITALL: {
    struct job_ncall c = { .what = JN_INIT_ALL, .out = jc->h, .nranks = cm->devices };
    ncclResult_t want = job_init_fault(j, i);
    job_create_check(j, i, want, job_ncall(site, &c), "ncclCommInitAll");
    if (want != ncclSuccess && !jc->h[0]) {
      jc->ndev = 1;             /* nothing held */
      return;
    }
    break;
  }
  }
  if (!jc->h[0] && (cm->how == SC_COMM_WORLD || cm->how == SC_COMM_INIT) && cm->rank_of[g] >= 0)
    return;                     /* its creation failed (init-fail) */
  if (jc->h[0])
    jc->order = ++j->ncreated;
  if (j->verbose && cm->line)
    fprintf(stderr, jc->h[0] ? "rank %d: created %s\n" : "rank %d: %s: no communicator on this rank\n", g,
            cm->name);
  job_check_plan(j, i);
}

void job_comms_init(struct job *j)
{
  struct scenario *sc = &j->sc;
  j->comms = calloc((size_t)sc->ncomms, sizeof *j->comms);
  if (!j->comms)
    job_fatal(1, "out of memory");
  for (int i = 0; i < sc->ncomms; i++) {
    struct job_comm *jc = &j->comms[i];
    jc->ndev = sc->comms[i].how == SC_COMM_INITALL ? sc->comms[i].devices : 1;
    jc->h = calloc((size_t)jc->ndev, sizeof *jc->h);
    if (!jc->h)
      job_fatal(1, "out of memory");
  }
  for (int i = 0; i < sc->ncomms; i++)
    if (!sc->comms[i].late)
      job_comm_create(j, i, 0);
}

int job_comm_takes_part(const struct job *j, const struct sc_op *op)
{
  const struct sc_comm *cm = &j->sc.comms[op->comm];
  int g = j->grank;
  if (op->kind == SC_CREATE && cm->how == SC_COMM_SPLIT)
    return j->sc.comms[cm->parent].rank_of[g] >= 0;
  return cm->rank_of[g] >= 0;
}

int job_comm_gone(const struct job *j, int i)
{
  const struct job_comm *jc = &j->comms[i];
  if (!jc->created)
    return 0;
  for (int d = 0; d < jc->ndev; d++)
    if (jc->h[d])
      return 0;
  return 1;
}

void job_comm_end(struct job *j, int i, int d, enum sc_kind kind, int site, int line)
{
  struct job_comm *jc = &j->comms[i];
  if (!jc->created) {
    if (kind != SC_FINALIZE)
      jc->created = 1;          /* never to be created */
    return;
  }
  if (!jc->h[d])
    return;
  struct job_ncall c = { .comm = jc->h[d] };
  c.what = kind == SC_DESTROY ? JN_DESTROY : kind == SC_FINALIZE ? JN_FINALIZE : JN_ABORT;
  job_nccl_check(j, job_ncall(site, &c), job_life_name(kind), line);
  if (kind != SC_FINALIZE)
    jc->h[d] = NULL;
  if (j->verbose && jc->ndev > 1)
    fprintf(stderr, "rank %d: %s %s (device %d)\n", j->grank, job_life_name(kind), j->sc.comms[i].name, d);
  else if (j->verbose)
    fprintf(stderr, "rank %d: %s %s\n", j->grank, job_life_name(kind), j->sc.comms[i].name);
}

void job_comm_end_all(struct job *j, int i, enum sc_kind kind, int line)
{
  struct job_comm *jc = &j->comms[i];
  struct job_ncall group = { .what = JN_GROUP_START };
  if (jc->ndev > 1)
    job_nccl_check(j, job_ncall(0, &group), "ncclGroupStart", line);
  for (int d = 0; d < jc->ndev; d++)
    job_comm_end(j, i, d, kind, 0, line);
  group.what = JN_GROUP_END;
  if (jc->ndev > 1)
    job_nccl_check(j, job_ncall(0, &group), "ncclGroupEnd", line);
}

void job_comms_end_held(struct job *j, enum sc_kind kind, int line)
{
  for (;;) {
    int last = -1;
    for (int i = 0; i < j->sc.ncomms; i++)
      if (j->comms[i].order && !job_comm_gone(j, i) && (last < 0 || j->comms[i].order > j->comms[last].order))
        last = i;
    if (last < 0)
      return;
    job_comm_end_all(j, last, kind, line);
  }
}

ncclResult_t job_comms_async_error(struct job *j, int *comm)
{
  for (int i = 0; i < j->sc.ncomms; i++) {
    const struct job_comm *jc = &j->comms[i];
    for (int d = 0; d < jc->ndev; d++) {
      ncclResult_t err = ncclSuccess;
      struct job_ncall c = { .what = JN_ASYNC_ERROR, .comm = jc->h[d], .async = &err };
      if (!jc->h[d])
        continue;
      job_nccl_check(j, job_ncall(0, &c), "ncclCommGetAsyncError", j->sc.comms[i].line);
      if (err != ncclSuccess && err != ncclInProgress) {
        *comm = i;
        return err;
      }
    }
  }
  return ncclSuccess;
}

void job_comms_teardown(struct job *j)
{
  for (int i = j->sc.ncomms - 1; i >= 0; i--) {
    job_comm_end_all(j, i, SC_DESTROY, j->sc.comms[i].line);
    free(j->comms[i].h);
  }
  free(j->comms);
  j->comms = NULL;
}
