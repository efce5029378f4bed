/* check_recorder.c — the recorder inside a process, on the simulator.
 *
 * Run by tests/e2e/recorder-api.sh with librecorder.so preloaded, the
 * simulator's libnccl/libcuda, FR_DUMP_DIR set and FR_DUMP_SIGNAL=SIGUSR2.
 * Every test makes 1-rank communicators, calls NCCL through the recorder's
 * wrappers, asks for a dump with the signal, reads it back with the codec
 * and checks the records: the right op, seq, count, dtype, redop, root or
 * peer, group, state and flags, and that NCCL's own result came back.
 * Checks run in this one process (CK_NOFORK): a forked child of a recorded
 * process is inert by design.
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "recorder_probe.h"
#include "sim.h"

START_TEST(every_collective_and_p2p_is_recorded_once) {
  ncclComm_t c = one_rank_comm();
  float *a = calloc(64, sizeof *a), *b = calloc(64, sizeof *b);
  ck_assert_int_eq(ncclAllReduce(a, b, 11, ncclFloat32, ncclMax, c, stream), ncclSuccess);
  ck_assert_int_eq(ncclBroadcast(a, b, 12, ncclInt32, 0, c, stream), ncclSuccess);
  ck_assert_int_eq(ncclBcast(a, 13, ncclInt8, 0, c, stream), ncclSuccess);
  ck_assert_int_eq(ncclReduce(a, b, 14, ncclFloat64, ncclProd, 0, c, stream), ncclSuccess);
  ck_assert_int_eq(ncclAllGather(a, b, 15, ncclUint8, c, stream), ncclSuccess);
  ck_assert_int_eq(ncclReduceScatter(a, b, 16, ncclFloat32, ncclSum, c, stream), ncclSuccess);
  ck_assert_int_eq(ncclAlltoAll(a, b, 17, ncclFloat32, c, stream), ncclSuccess);
  ck_assert_int_eq(ncclGather(a, b, 18, ncclFloat32, 0, c, stream), ncclSuccess);
  ck_assert_int_eq(ncclScatter(a, b, 19, ncclFloat32, 0, c, stream), ncclSuccess);
  ck_assert_int_eq(ncclGroupStart(), ncclSuccess);
  ck_assert_int_eq(ncclSend(a, 20, ncclFloat32, 0, c, stream), ncclSuccess);
  ck_assert_int_eq(ncclRecv(b, 20, ncclFloat32, 0, c, stream), ncclSuccess);
  ck_assert_int_eq(ncclGroupEnd(), ncclSuccess);
  frz_dump d;
  dump_now(&d);
  const frz_comm *fc = comm_of(&d, c);
  ck_assert_ptr_nonnull(fc);
  ck_assert_int_eq(fc->nranks, 1);
  ck_assert_int_eq(fc->rank, 0);
  ck_assert_uint_eq(fc->next_seq, 10);
  ck_assert_int_eq(fc->last_completed_seq, 9);
  const frz_record *r[32];
  uint32_t n = records_of(&d, fc->comm_id, r, 32);
  ck_assert_uint_eq(n, 12); /* init, 9 collectives (Bcast once), send, recv */
  static const struct { unsigned op; uint64_t count; int dtype, redop, root; } want[] = {
      {FRZ_OP_CommInitRank, 0, 255, 255, -1}, {FRZ_OP_AllReduce, 11, 7, 2, -1},
      {FRZ_OP_Broadcast, 12, 2, 255, 0},      {FRZ_OP_Broadcast, 13, 0, 255, 0},
      {FRZ_OP_Reduce, 14, 8, 1, 0},           {FRZ_OP_AllGather, 15, 1, 255, -1},
      {FRZ_OP_ReduceScatter, 16, 7, 0, -1},   {FRZ_OP_AlltoAll, 17, 7, 255, -1},
      {FRZ_OP_Gather, 18, 7, 255, 0},         {FRZ_OP_Scatter, 19, 7, 255, 0}};
  for (uint32_t i = 0; i < 10; i++) {
    ck_assert_msg(r[i]->op == want[i].op, "record %u: op %s", i, frz_op_name(r[i]->op));
    ck_assert_uint_eq(r[i]->seq, i);
    ck_assert_uint_eq(r[i]->count, want[i].count);
    ck_assert_int_eq(r[i]->dtype, want[i].dtype);
    ck_assert_int_eq(r[i]->redop, want[i].redop);
    ck_assert_int_eq(r[i]->peer, want[i].root);
    ck_assert_int_eq(r[i]->state, FRZ_STATE_COMPLETED);
    ck_assert_int_eq(r[i]->result, ncclSuccess);
    ck_assert_uint_eq(r[i]->group_id, 0);
  }
  ck_assert_uint_eq(r[1]->kind, FRZ_KIND_COLL);
  ck_assert(r[1]->t_enqueue_ns <= r[1]->t_start_ns && r[1]->t_start_ns <= r[1]->t_complete_ns);
  ck_assert_uint_eq(r[1]->stream, (uint64_t)(uintptr_t)stream);
  ck_assert_uint_ne(r[1]->call_site, 0);
  /* grouped p2p: per-direction seq 0 each, one group, completed after GroupEnd */
  ck_assert_int_eq(r[10]->op, FRZ_OP_Send);
  ck_assert_int_eq(r[11]->op, FRZ_OP_Recv);
  for (int k = 10; k < 12; k++) {
    ck_assert_uint_eq(r[k]->kind, FRZ_KIND_P2P);
    ck_assert_uint_eq(r[k]->seq, 0);
    ck_assert_int_eq(r[k]->peer, 0);
    ck_assert_uint_eq(r[k]->count, 20);
    ck_assert(r[k]->flags & FRZ_RF_IN_GROUP);
    ck_assert_uint_ne(r[k]->group_id, 0);
    ck_assert_int_eq(r[k]->state, FRZ_STATE_COMPLETED);
  }
  ck_assert_int_eq(r[10]->dir, FRZ_DIR_SEND);
  ck_assert_int_eq(r[11]->dir, FRZ_DIR_RECV);
  ck_assert_uint_eq(r[10]->group_id, r[11]->group_id);
  ck_assert_int_eq(d.process.trigger, FRZ_TRIGGER_SIGNAL);
  frz_dump_free(&d);
  ck_assert_int_eq(ncclCommDestroy(c), ncclSuccess);
  free(a);
  free(b);
}
END_TEST

/* Exported (the program is linked -rdynamic) so dladdr can name it. */
ncclResult_t fr_test_call_allreduce(ncclComm_t c, float *x);
__attribute__((noinline)) ncclResult_t fr_test_call_allreduce(ncclComm_t c, float *x) {
  ncclResult_t r = ncclAllReduce(x, x, 5, ncclFloat32, ncclSum, c, stream);
  __asm__ volatile("" ::: "memory"); /* keep the call a call, not a tail jump */
  return r;
}

START_TEST(call_sites_are_symbolised_in_the_dump) {
  ncclComm_t c = one_rank_comm();
  float x = 0;
  ck_assert_int_eq(fr_test_call_allreduce(c, &x), ncclSuccess);
  frz_dump d;
  dump_now(&d);
  const frz_record *r[4];
  ck_assert_uint_eq(records_of(&d, comm_of(&d, c)->comm_id, r, 4), 2);
  const frz_callsite *site = frz_find_callsite(&d, r[1]->call_site);
  ck_assert_ptr_nonnull(site);
  ck_assert_str_eq(site->symbol, "fr_test_call_allreduce");
  ck_assert_str_eq(site->module, "check_recorder");
  ck_assert_uint_gt(site->offset, 0);
  ck_assert_uint_lt(site->offset, 256);
  if (getenv("FR_BACKTRACE")) { /* the stack above the wrapper, innermost first */
    const frz_backtrace *b = frz_find_backtrace(&d, r[1]->id);
    ck_assert_ptr_nonnull(b);
    ck_assert_uint_ge(b->depth, 2);
    ck_assert_uint_le(b->depth, (uint32_t)atoi(getenv("FR_BACKTRACE")));
    ck_assert_uint_eq(b->frames[0], r[1]->call_site);
    const frz_callsite *top = frz_find_callsite(&d, b->frames[0]);
    ck_assert_ptr_nonnull(top);
    ck_assert_str_eq(top->symbol, "fr_test_call_allreduce");
    ck_assert_ptr_nonnull(frz_find_callsite(&d, b->frames[1]));
  } else {
    ck_assert_uint_eq(d.nbacktraces, 0);
  }
  frz_dump_free(&d);
  ck_assert_int_eq(ncclCommDestroy(c), ncclSuccess);
}
END_TEST

START_TEST(errors_come_back_unchanged_and_are_recorded) {
  ncclComm_t c = one_rank_comm();
  float x = 0;
  ncclResult_t direct = pncclAllReduce(&x, &x, 1, (ncclDataType_t)99, ncclSum, c, stream);
  ncclResult_t viarec = ncclAllReduce(&x, &x, 1, (ncclDataType_t)99, ncclSum, c, stream);
  ck_assert_int_ne(direct, ncclSuccess);
  ck_assert_int_eq(viarec, direct);
  /* NCCL 2.29's CommGrow, missing from this (2.28-like) NCCL: an error, no crash */
  typedef ncclResult_t (*grow_fn)(ncclComm_t, int, const ncclUniqueId *, int, ncclComm_t *,
                                  ncclConfig_t *);
  grow_fn grow = (grow_fn)dlsym(RTLD_DEFAULT, "ncclCommGrow");
  ck_assert_ptr_nonnull(grow); /* the recorder's wrapper */
  ncclComm_t grown = NULL;
  ck_assert_int_eq(grow(c, 2, NULL, -1, &grown, NULL), ncclInvalidUsage);
  ck_assert_ptr_null(grown);
  frz_dump d;
  dump_now(&d);
  const frz_comm *fc = comm_of(&d, c);
  const frz_record *r[16];
  uint32_t n = records_of(&d, fc->comm_id, r, 16);
  ck_assert_uint_eq(n, 2);
  ck_assert_int_eq(r[1]->op, FRZ_OP_AllReduce);
  ck_assert_int_eq(r[1]->state, FRZ_STATE_FAILED);
  ck_assert_int_eq(r[1]->result, direct);
  ck_assert_uint_eq(r[1]->seq, 1);
  frz_dump_free(&d);
  ck_assert_int_eq(ncclCommDestroy(c), ncclSuccess);
}
END_TEST

START_TEST(inits_from_ids_clique_and_shrink_are_lifecycle_records) {
  ncclComm_t all[3];
  ck_assert_int_eq(ncclCommInitAll(all, 3, NULL), ncclSuccess);
  ncclUniqueId ids[2];
  ck_assert_int_eq(ncclGetUniqueId(&ids[0]), ncclSuccess);
  ck_assert_int_eq(ncclGetUniqueId(&ids[1]), ncclSuccess);
  ncclComm_t sc = NULL, shr = NULL;
  ck_assert_int_eq(ncclCommInitRankScalable(&sc, 1, 0, 2, ids, NULL), ncclSuccess);
  ck_assert_int_eq(ncclCommShrink(sc, NULL, 0, &shr, NULL, 0), ncclSuccess);
  ck_assert_ptr_nonnull(shr);
  ck_assert_int_eq(ncclCommRevoke(sc, 0), ncclSuccess);
  frz_dump d;
  dump_now(&d);
  /* the clique: one comm, three comm ranks in this process */
  const frz_comm *c0 = comm_of(&d, all[0]);
  ck_assert_ptr_nonnull(c0);
  for (int i = 0; i < 3; i++) {
    const frz_comm *ci = comm_of(&d, all[i]);
    ck_assert_ptr_nonnull(ci);
    ck_assert_uint_eq(ci->comm_id, c0->comm_id);
    ck_assert_int_eq(ci->rank, i);
    ck_assert_int_eq(ci->nranks, 3);
  }
  const frz_record *r[8];
  ck_assert_uint_eq(records_of(&d, c0->comm_id, r, 8), 3);
  for (int i = 0; i < 3; i++) {
    ck_assert_int_eq(r[i]->op, FRZ_OP_CommInitAll);
    ck_assert_uint_eq(r[i]->seq, 0);
    ck_assert_int_eq(r[i]->state, FRZ_STATE_COMPLETED);
  }
  /* scalable init, then a shrink in its sequence and a local revoke */
  const frz_comm *sfc = comm_of(&d, sc);
  ck_assert_ptr_nonnull(sfc);
  ck_assert(sfc->flags & FRZ_CF_REVOKED);
  ck_assert_uint_eq(records_of(&d, sfc->comm_id, r, 8), 3);
  ck_assert_int_eq(r[0]->op, FRZ_OP_CommInitRankScalable);
  /* only the survivors call a shrink: unsequenced on the parent */
  ck_assert_int_eq(r[1]->op, FRZ_OP_CommShrink);
  ck_assert_uint_eq(r[1]->kind, FRZ_KIND_NONE);
  ck_assert_int_eq(r[1]->state, FRZ_STATE_COMPLETED);
  ck_assert_int_eq(r[2]->op, FRZ_OP_CommRevoke);
  ck_assert_uint_eq(r[2]->kind, FRZ_KIND_NONE);
  const frz_comm *child = comm_of(&d, shr);
  ck_assert_ptr_nonnull(child);
  ck_assert_uint_eq(child->parent_id, sfc->comm_id);
  ck_assert(child->flags & FRZ_CF_SHRINK);
  ck_assert(!(child->flags & FRZ_CF_PENDING));
  ck_assert_int_eq(child->nranks, 1);
  /* ... and the child's creation, seq 0 */
  ck_assert_uint_eq(records_of(&d, child->comm_id, r, 8), 1);
  ck_assert_int_eq(r[0]->op, FRZ_OP_CommShrink);
  ck_assert_uint_eq(r[0]->seq, 0);
  ck_assert_uint_eq(r[0]->kind, FRZ_KIND_LIFE);
  ck_assert_int_eq(r[0]->state, FRZ_STATE_COMPLETED);
  frz_dump_free(&d);
  ck_assert_int_eq(ncclCommDestroy(shr), ncclSuccess);
  ck_assert_int_eq(ncclCommDestroy(sc), ncclSuccess);
  for (int i = 0; i < 3; i++) ck_assert_int_eq(ncclCommDestroy(all[i]), ncclSuccess);
}
END_TEST

/* One process driving three devices (ncclCommInitAll): every record says
 * which comm rank made it and on which device (frz 1.3); records without a
 * comm (the group's) say neither. */
START_TEST(clique_records_name_their_comm_rank_and_device) {
  enum { ND = 3 };
  static const int devs[ND] = {2, 0, 1};
  ncclComm_t all[ND];
  ck_assert_int_eq(ncclCommInitAll(all, ND, devs), ncclSuccess);
  float x[ND] = {0};
  ck_assert_int_eq(ncclGroupStart(), ncclSuccess);
  for (int i = 0; i < ND; i++)
    ck_assert_int_eq(ncclAllReduce(&x[i], &x[i], 1, ncclFloat32, ncclSum, all[i], stream), ncclSuccess);
  ck_assert_int_eq(ncclGroupEnd(), ncclSuccess);
  ck_assert_int_eq(cuStreamSynchronize(stream), CUDA_SUCCESS);
  frz_dump d;
  dump_now(&d);
  const frz_comm *c0 = comm_of(&d, all[0]);
  ck_assert_ptr_nonnull(c0);
  const frz_record *r[16];
  ck_assert_uint_eq(records_of(&d, c0->comm_id, r, 16), 2 * ND);
  for (int i = 0; i < ND; i++) {
    ck_assert_int_eq(r[i]->op, FRZ_OP_CommInitAll); /* in comm-rank order */
    ck_assert_int_eq(r[i]->comm_rank, i);
    ck_assert_int_eq(r[ND + i]->op, FRZ_OP_AllReduce);
    ck_assert_int_eq(r[ND + i]->comm_rank, i);
    ck_assert_uint_eq(r[ND + i]->cuda_device, (unsigned)devs[i]);
    ck_assert_int_eq(comm_of(&d, all[i])->cuda_device, devs[i]);
  }
  for (uint64_t k = 0; k < d.nrecords; k++)
    if (d.records[k].comm_id == 0) {
      ck_assert_int_eq(d.records[k].comm_rank, -1);
      ck_assert_uint_eq(d.records[k].cuda_device, FRZ_CUDA_DEVICE_UNKNOWN);
    }
  frz_dump_free(&d);
  for (int i = 0; i < ND; i++) ck_assert_int_eq(ncclCommDestroy(all[i]), ncclSuccess);
}
END_TEST

START_TEST(split_finalize_destroy_abort_are_lifecycle_records) {
  ncclComm_t c = one_rank_comm(), child = NULL, other = one_rank_comm();
  ck_assert_int_eq(ncclCommSplit(c, 3, 0, &child, NULL), ncclSuccess);
  ck_assert_ptr_nonnull(child);
  float x = 0;
  ck_assert_int_eq(ncclAllReduce(&x, &x, 1, ncclFloat32, ncclSum, child, stream), ncclSuccess);
  ck_assert_int_eq(cuStreamSynchronize(stream), CUDA_SUCCESS);
  ck_assert_int_eq(ncclCommFinalize(child), ncclSuccess);
  ck_assert_int_eq(ncclCommDestroy(child), ncclSuccess);
  ck_assert_int_eq(ncclCommAbort(other), ncclSuccess);
  frz_dump d;
  dump_now(&d);
  const frz_comm *pc = comm_of(&d, c);
  ck_assert_ptr_nonnull(pc);
  const frz_comm *cc = NULL;
  for (uint32_t i = 0; i < d.ncomms; i++)
    if (d.comms[i].parent_id == pc->comm_id) cc = &d.comms[i];
  ck_assert_ptr_nonnull(cc);
  ck_assert(cc->flags & FRZ_CF_SPLIT);
  ck_assert(cc->flags & FRZ_CF_DESTROYED);
  ck_assert(cc->flags & FRZ_CF_FINALIZED);
  ck_assert_int_eq(cc->split_color, 3);
  const frz_record *r[8];
  ck_assert_uint_eq(records_of(&d, pc->comm_id, r, 8), 2);
  ck_assert_int_eq(r[1]->op, FRZ_OP_CommSplit);
  ck_assert_uint_eq(r[1]->seq, 1);
  ck_assert_int_eq(r[1]->state, FRZ_STATE_COMPLETED);
  ck_assert_uint_eq(records_of(&d, cc->comm_id, r, 8), 3);
  ck_assert_int_eq(r[0]->op, FRZ_OP_AllReduce); /* a split child starts at seq 0 */
  ck_assert_uint_eq(r[0]->seq, 0);
  ck_assert_int_eq(r[1]->op, FRZ_OP_CommFinalize);
  ck_assert_uint_eq(r[1]->seq, 1);
  ck_assert_int_eq(r[2]->op, FRZ_OP_CommDestroy);
  ck_assert_uint_eq(r[2]->seq, 2);
  /* abort: local record, comm flagged, and it asked for a dump */
  const frz_comm *oc = NULL;
  for (uint32_t i = 0; i < d.ncomms; i++)
    if (d.comms[i].flags & FRZ_CF_ABORTED) oc = &d.comms[i];
  ck_assert_ptr_nonnull(oc);
  ck_assert_uint_eq(records_of(&d, oc->comm_id, r, 8), 2);
  ck_assert_int_eq(r[1]->op, FRZ_OP_CommAbort);
  ck_assert_uint_eq(r[1]->kind, FRZ_KIND_NONE);
  ck_assert_ptr_nonnull(comm_in(&d, pc->comm_id));
  frz_dump_free(&d);
  ck_assert_int_eq(ncclCommDestroy(c), ncclSuccess);
}
END_TEST

START_TEST(simulated_group_gives_its_seq_back) {
  ncclComm_t c = one_rank_comm();
  float x = 0;
  ncclSimInfo_t info = {sizeof info, 0x74685283, 22809, -1.0f};
  ck_assert_int_eq(ncclGroupStart(), ncclSuccess);
  ck_assert_int_eq(ncclAllReduce(&x, &x, 1, ncclFloat32, ncclSum, c, stream), ncclSuccess);
  ck_assert_int_eq(ncclGroupSimulateEnd(&info), pncclGroupSimulateEnd(&info));
  ck_assert_int_eq(ncclAllReduce(&x, &x, 7, ncclFloat32, ncclSum, c, stream), ncclSuccess);
  frz_dump d;
  dump_now(&d);
  const frz_record *r[8];
  ck_assert_uint_eq(records_of(&d, comm_of(&d, c)->comm_id, r, 8), 3);
  ck_assert(r[1]->flags & FRZ_RF_SIMULATED);
  ck_assert_uint_eq(r[1]->kind, FRZ_KIND_NONE);
  ck_assert_uint_eq(r[2]->seq, 1); /* the seq the simulated op had taken */
  ck_assert_uint_eq(r[2]->count, 7);
  ck_assert_int_eq(r[2]->state, FRZ_STATE_COMPLETED);
  frz_dump_free(&d);
  ck_assert_int_eq(ncclCommDestroy(c), ncclSuccess);
}
END_TEST

#define NTHREADS 64
#define NOPS 300

static void *thread_body(void *arg) {
  ncclComm_t *out = arg;
  ncclUniqueId id;
  CUstream s;
  float x = 0;
  if (ncclGetUniqueId(&id) != ncclSuccess || ncclCommInitRank(out, 1, id, 0) != ncclSuccess)
    return (void *)1;
  if (cuStreamCreate(&s, CU_STREAM_DEFAULT) != CUDA_SUCCESS) return (void *)1;
  for (int i = 0; i < NOPS; i++)
    if (ncclAllReduce(&x, &x, (size_t)i + 1, ncclFloat32, ncclSum, *out, s) != ncclSuccess)
      return (void *)1;
  if (cuStreamSynchronize(s) != CUDA_SUCCESS) return (void *)1;
  /* gone before the fork test: the simulator locks every live stream
   * around fork(), and ThreadSanitizer allows a thread 64 locks at once */
  return cuStreamDestroy_v2(s) == CUDA_SUCCESS ? NULL : (void *)1;
}

START_TEST(threads_on_their_own_comms_lose_nothing) {
  pthread_t th[NTHREADS];
  ncclComm_t comms[NTHREADS];
  for (int t = 0; t < NTHREADS; t++) ck_assert_int_eq(pthread_create(&th[t], NULL, thread_body, &comms[t]), 0);
  for (int t = 0; t < NTHREADS; t++) {
    void *rv;
    pthread_join(th[t], &rv);
    ck_assert_ptr_null(rv);
  }
  frz_dump d;
  dump_now(&d);
  const frz_record **r = malloc((NOPS + 8) * sizeof *r);
  for (int t = 0; t < NTHREADS; t++) {
    const frz_comm *fc = comm_of(&d, comms[t]);
    ck_assert_ptr_nonnull(fc);
    uint32_t n = records_of(&d, fc->comm_id, r, NOPS + 8);
    ck_assert_uint_eq(n, NOPS + 1);
    for (uint32_t i = 1; i < n; i++) {
      ck_assert_uint_eq(r[i]->seq, i);
      ck_assert_uint_eq(r[i]->count, i);
      ck_assert_uint_eq(r[i]->tid, r[1]->tid);
    }
    ck_assert_int_eq(fc->last_completed_seq, NOPS);
  }
  free(r);
  frz_dump_free(&d);
  for (int t = 0; t < NTHREADS; t++) ck_assert_int_eq(ncclCommDestroy(comms[t]), ncclSuccess);
}
END_TEST

START_TEST(captured_streams_are_flagged_and_not_tracked) {
  ncclComm_t c = one_rank_comm();
  CUstream cap;
  float x = 0;
  ck_assert_int_eq(cuStreamCreate(&cap, CU_STREAM_DEFAULT), CUDA_SUCCESS);
  ck_assert_int_eq(sim_stream_set_capturing(cap, 1), CUDA_SUCCESS);
  ck_assert_int_eq(ncclAllReduce(&x, &x, 3, ncclFloat32, ncclSum, c, cap), ncclSuccess);
  ck_assert_int_eq(cuStreamSynchronize(cap), CUDA_SUCCESS);
  ck_assert_int_eq(sim_stream_set_capturing(cap, 0), CUDA_SUCCESS);
  frz_dump d;
  dump_now(&d);
  const frz_record *r[4];
  ck_assert_uint_eq(records_of(&d, comm_of(&d, c)->comm_id, r, 4), 2);
  ck_assert(r[1]->flags & FRZ_RF_GRAPH_CAPTURED);
  ck_assert(r[1]->flags & FRZ_RF_NO_TRACKING);
  ck_assert_int_eq(r[1]->state, FRZ_STATE_ENQUEUED); /* no event: its completion is unknown */
  ck_assert_uint_eq(r[1]->t_start_ns, 0);
  ck_assert_int_eq(comm_of(&d, c)->last_completed_seq, 0); /* nothing completed after it */
  frz_dump_free(&d);
  /* a tracked op completing after it says it is done (a comm runs in order) */
  ck_assert_int_eq(ncclAllReduce(&x, &x, 3, ncclFloat32, ncclSum, c, stream), ncclSuccess);
  dump_now(&d);
  ck_assert_uint_eq(records_of(&d, comm_of(&d, c)->comm_id, r, 4), 3);
  ck_assert_int_eq(r[1]->state, FRZ_STATE_ENQUEUED);
  ck_assert_int_eq(r[2]->state, FRZ_STATE_COMPLETED);
  ck_assert_int_eq(comm_of(&d, c)->last_completed_seq, 2);
  frz_dump_free(&d);
  ck_assert_int_eq(ncclCommDestroy(c), ncclSuccess);
}
END_TEST

START_TEST(an_async_error_is_recorded_once_and_dumped) {
  ncclComm_t c = one_rank_comm();
  char path[1024];
  int before = newest_frame(path, sizeof path);
  ncclResult_t e = ncclSuccess;
  ck_assert_int_eq(ncclCommGetAsyncError(c, &e), ncclSuccess);
  ck_assert_int_eq(e, ncclSuccess);
  ck_assert_int_eq(sim_comm_set_async_error(c, ncclRemoteError), ncclSuccess);
  for (int i = 0; i < 3; i++) { /* polled again and again, as PyTorch's watchdog does */
    ck_assert_int_eq(ncclCommGetAsyncError(c, &e), ncclSuccess);
    ck_assert_int_eq(e, ncclRemoteError);
  }
  /* the error asked for a dump by itself (frames of an earlier request may
   * land first: the dump wanted is the first with its trigger) */
  int now = before, found = 0;
  frz_dump d;
  frz_error err;
  for (int i = 0; i < 300 && !found; i++) {
    struct timespec t = {0, 10 * 1000 * 1000};
    nanosleep(&t, NULL);
    int latest = newest_frame(path, sizeof path);
    if (latest == now) continue;
    now = latest;
    ck_assert_msg(frz_read_file(path, &d, &err) == FRZ_OK, "%s", err.msg);
    found = d.process.trigger == FRZ_TRIGGER_ASYNC_ERROR;
    if (!found) frz_dump_free(&d);
  }
  ck_assert_msg(found, "no dump with the async_error trigger after frame %d", before);
  const frz_comm *fc = comm_of(&d, c);
  ck_assert(fc->flags & FRZ_CF_ASYNC_ERROR);
  const frz_record *r[8];
  ck_assert_uint_eq(records_of(&d, fc->comm_id, r, 8), 2); /* once, not per poll */
  ck_assert_int_eq(r[1]->op, FRZ_OP_CommGetAsyncError);
  ck_assert_uint_eq(r[1]->kind, FRZ_KIND_NONE);
  ck_assert_int_eq(r[1]->result, ncclRemoteError);
  ck_assert_int_eq(r[1]->state, FRZ_STATE_FAILED);
  frz_dump_free(&d);
  ck_assert_int_eq(sim_comm_set_async_error(c, ncclSuccess), ncclSuccess);
  ck_assert_int_eq(ncclCommDestroy(c), ncclSuccess);
}
END_TEST

START_TEST(forked_child_is_inert) {
  ncclComm_t c = one_rank_comm();
  char before[1024] = "", after[1024] = "";
  int fb = newest_frame(before, sizeof before);
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) { /* child: the signal and NCCL calls must do nothing of ours */
    int v = 0;
    raise(SIGUSR2);
    if (ncclGetVersion(&v) != ncclSuccess || v != 22809) _exit(3);
    struct timespec t = {0, 300 * 1000 * 1000};
    nanosleep(&t, NULL);
    _exit(0);
  }
  int status;
  ck_assert_int_eq(waitpid(pid, &status, 0), pid);
  ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  /* frames may still land from the parent's earlier requests; none is the
   * child's (it would carry the child's pid) */
  ck_assert_int_ge(newest_frame(after, sizeof after), fb);
  DIR *dir = opendir(dump_dir);
  ck_assert_ptr_nonnull(dir);
  struct dirent *e;
  while ((e = readdir(dir))) {
    char path[1024];
    frz_dump d;
    frz_error err;
    if (e->d_name[0] == '.' || !strstr(e->d_name, ".frz")) continue;
    snprintf(path, sizeof path, "%s/%s", dump_dir, e->d_name);
    ck_assert_msg(frz_read_file(path, &d, &err) == FRZ_OK, "%s", err.msg);
    ck_assert_msg(d.process.pid == (uint64_t)getpid(), "%s was written by pid %llu, the child", path,
                  (unsigned long long)d.process.pid);
    frz_dump_free(&d);
  }
  closedir(dir);
  ck_assert_int_eq(ncclCommDestroy(c), ncclSuccess);
}
END_TEST

/* --crash: a recorded process that dies of SIGABRT; the shell test checks
 * that it still died of it and left a crash dump. */
static int crash_mode(void) {
  ncclUniqueId id;
  ncclComm_t c;
  float x = 0;
  if (ncclGetUniqueId(&id) != ncclSuccess || ncclCommInitRank(&c, 1, id, 0) != ncclSuccess) return 1;
  if (ncclAllReduce(&x, &x, 1, ncclFloat32, ncclSum, c, stream) != ncclSuccess) return 1;
  cuStreamSynchronize(stream);
  abort();
}

/* Sleep the whole of t, going back to sleep after a signal (the recorder's
 * stack signal at each dump interrupts nanosleep, as a profiler's would). */
static void sleep_fully(struct timespec t) {
  while (nanosleep(&t, &t) != 0 && errno == EINTR) {
  }
}

/* Rank 1 of a 2-rank comm in this process: arrives late to the all-reduce. */
struct late_arg {
  ncclUniqueId id;
  int delay_ms;
};
static void *late_rank(void *p) {
  struct late_arg *a = p;
  ncclComm_t c;
  CUstream s;
  float x = 0;
  if (cuStreamCreate(&s, CU_STREAM_DEFAULT) != CUDA_SUCCESS) return (void *)1;
  if (ncclCommInitRank(&c, 2, a->id, 1) != ncclSuccess) return (void *)1;
  struct timespec t = {a->delay_ms / 1000, (a->delay_ms % 1000) * 1000000L};
  sleep_fully(t);
  if (ncclAllReduce(&x, &x, 1, ncclFloat32, ncclSum, c, s) != ncclSuccess) return (void *)1;
  return cuStreamSynchronize(s) == CUDA_SUCCESS ? NULL : (void *)1;
}

/* --late MS: rank 0 waits MS ms in an all-reduce for rank 1 (a thread), so
 * the recorder declares a hang, writes frames, then sees progress resume. */
static int late_mode(int delay_ms) {
  struct late_arg a = {.delay_ms = delay_ms};
  ncclComm_t c;
  float x = 0;
  pthread_t th;
  if (ncclGetUniqueId(&a.id) != ncclSuccess) return 1;
  if (pthread_create(&th, NULL, late_rank, &a) != 0) return 1;
  if (ncclCommInitRank(&c, 2, a.id, 0) != ncclSuccess) return 1;
  if (ncclAllReduce(&x, &x, 1, ncclFloat32, ncclSum, c, stream) != ncclSuccess) return 1;
  if (cuStreamSynchronize(stream) != CUDA_SUCCESS) return 1;
  void *rv;
  pthread_join(th, &rv);
  struct timespec t = {0, 500 * 1000 * 1000}; /* the watchdog sees the progress */
  sleep_fully(t);
  return rv ? 1 : 0;
}

/* --fill N SLEEP_MS: N all-reduces, ask for a dump, linger, exit 0 (dump
 * failure and kill -9 tests in tests/e2e/recorder-dump-failures.sh). */
static int fill_mode(int n, int sleep_ms) {
  ncclUniqueId id;
  ncclComm_t c;
  float x = 0;
  if (ncclGetUniqueId(&id) != ncclSuccess || ncclCommInitRank(&c, 1, id, 0) != ncclSuccess) return 1;
  for (int i = 0; i < n; i++)
    if (ncclAllReduce(&x, &x, (size_t)i % 1000 + 1, ncclFloat32, ncclSum, c, stream) != ncclSuccess)
      return 1;
  if (cuStreamSynchronize(stream) != CUDA_SUCCESS) return 1;
  raise(SIGUSR2);
  struct timespec t = {sleep_ms / 1000, (sleep_ms % 1000) * 1000000L};
  sleep_fully(t);
  return ncclCommDestroy(c) == ncclSuccess ? 0 : 1;
}

int main(int argc, char **argv) {
  dump_dir = getenv("FR_DUMP_DIR");
  if (!dump_dir || !getenv("LD_PRELOAD")) {
    fprintf(stderr, "check_recorder: run me through tests/e2e/recorder-api.sh\n");
    return 77;
  }
  if (cuStreamCreate(&stream, CU_STREAM_DEFAULT) != CUDA_SUCCESS) return 1;
  if (argc > 1 && !strcmp(argv[1], "--crash")) return crash_mode();
  if (argc > 2 && !strcmp(argv[1], "--late")) return late_mode(atoi(argv[2]));
  if (argc > 3 && !strcmp(argv[1], "--fill")) return fill_mode(atoi(argv[2]), atoi(argv[3]));
  Suite *s = suite_create("recorder");
  TCase *tc = tcase_create("wrappers");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, every_collective_and_p2p_is_recorded_once);
  tcase_add_test(tc, call_sites_are_symbolised_in_the_dump);
  tcase_add_test(tc, errors_come_back_unchanged_and_are_recorded);
  tcase_add_test(tc, inits_from_ids_clique_and_shrink_are_lifecycle_records);
  tcase_add_test(tc, clique_records_name_their_comm_rank_and_device);
  tcase_add_test(tc, split_finalize_destroy_abort_are_lifecycle_records);
  tcase_add_test(tc, simulated_group_gives_its_seq_back);
  tcase_add_test(tc, threads_on_their_own_comms_lose_nothing);
  tcase_add_test(tc, captured_streams_are_flagged_and_not_tracked);
  tcase_add_test(tc, an_async_error_is_recorded_once_and_dumped);
  tcase_add_test(tc, forked_child_is_inert);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_set_fork_status(sr, CK_NOFORK);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
