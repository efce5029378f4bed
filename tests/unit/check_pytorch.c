/* check_pytorch.c — unit tests of the PyTorch Flight Recorder importer
 * (formats/pytorch_fr.h): the real PyTorch 2.11 dump in both forms, the
 * mapping of fields, ranks from content and from file names, versions, and
 * hostile input (truncated, huge lengths, unknown opcodes, deep nesting,
 * memo abuse) that must give an error naming the offset, never a crash. */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frz.h"
#include "pytorch_fr.h"
#include "pyval.h"

static const char *srcdir(void)
{
  const char *s = getenv("FR_SRCDIR");
  return s ? s : ".";
}

static char *fixture(const char *rel)
{
  static char buf[4096];
  snprintf(buf, sizeof buf, "%s/tests/fixtures/pytorch-fr/%s", srcdir(), rel);
  return buf;
}

static void *slurp(const char *rel, size_t *len)
{
  void *b;
  frz_error e;
  ck_assert_int_eq(frz_slurp_file(fixture(rel), (size_t)1 << 24, &b, len, &e), FRZ_OK);
  return b;
}

/* The real dump: 20 collectives on the default group, all completed. */
static void check_real(const frz_dump *d)
{
  ck_assert_int_eq(d->process.global_rank, 0);
  ck_assert_int_eq(d->process.world_size, 1);
  ck_assert_int_eq(d->process.nccl_version, 22809);
  ck_assert_uint_eq(d->ncomms, 1);
  ck_assert_int_eq(d->comms[0].nranks, 1);
  ck_assert_int_eq(d->comms[0].rank, 0);
  ck_assert_uint_eq(d->comms[0].first_retained_seq, 1);
  ck_assert_int_eq(d->comms[0].last_enqueued_seq, 20);
  ck_assert_int_eq(d->comms[0].last_completed_seq, 20);
  ck_assert_uint_eq(d->nrecords, 20);
  static const unsigned ops[4] = {FRZ_OP_AllReduce, FRZ_OP_Broadcast, FRZ_OP_AllGather,
                                  FRZ_OP_ReduceScatter};
  for (unsigned i = 0; i < 20; i++) {
    const frz_record *r = &d->records[i];
    ck_assert_uint_eq(r->id, i);
    ck_assert_uint_eq(r->seq, i + 1);
    ck_assert_uint_eq(r->op, ops[i % 4]);
    ck_assert_uint_eq(r->kind, FRZ_KIND_COLL);
    ck_assert_uint_eq(r->count, 1048576);
    ck_assert_uint_eq(r->dtype, 7); /* Float */
    ck_assert_uint_eq(r->state, FRZ_STATE_COMPLETED);
    ck_assert_uint_eq(r->comm_id, d->comms[0].comm_id);
    ck_assert_uint_gt(r->t_complete_ns, r->t_enqueue_ns);
  }
  ck_assert_uint_eq(d->records[0].t_enqueue_ns, 1795989674813068232ull);
  ck_assert_uint_eq(d->process.anchor_realtime_ns, d->process.anchor_monotonic_ns);
}

START_TEST(test_real_pickle_and_json)
{
  frz_dump p, j;
  frz_error e;
  ck_assert_int_eq(frz_import_pytorch_file(fixture("h200-1rank/torch-fr.pickle"), &p, &e), FRZ_OK);
  check_real(&p);
  ck_assert_int_eq(frz_import_pytorch_file(fixture("h200-1rank/torch-fr.json"), &j, &e), FRZ_OK);
  check_real(&j);
  /* both forms give the same communicator identity */
  ck_assert_uint_eq(p.comms[0].comm_id, j.comms[0].comm_id);
  ck_assert(strstr(p.process.trigger_text, "pickle") != NULL);
  ck_assert(strstr(j.process.trigger_text, "JSON") != NULL);
  frz_dump_free(&p);
  frz_dump_free(&j);
}
END_TEST

/* Written by PyTorch's watchdog on a real timeout (one H200): seq 7 could
 * not start behind a busy stream; a second group; start times (timing on). */
START_TEST(test_real_watchdog_dump)
{
  frz_dump d;
  frz_error e;
  ck_assert_int_eq(frz_import_pytorch_file(fixture("h200-timeout/nccl_trace_rank_0"), &d, &e), FRZ_OK);
  ck_assert_int_eq(d.process.global_rank, 0);
  ck_assert_uint_eq(d.ncomms, 2);
  ck_assert_uint_eq(d.nrecords, 8);
  const frz_record *last = &d.records[7];
  ck_assert_uint_eq(last->seq, 7);
  ck_assert_uint_eq(last->op, FRZ_OP_AllReduce);
  ck_assert_uint_eq(last->state, FRZ_STATE_ENQUEUED);
  ck_assert_uint_eq(last->t_start_ns, 0);
  ck_assert_uint_eq(last->t_complete_ns, 0);
  ck_assert_uint_gt(d.records[0].t_start_ns, d.records[0].t_enqueue_ns);
  ck_assert_uint_ne(d.records[6].comm_id, d.records[5].comm_id); /* the second group */
  ck_assert_uint_eq(d.records[6].seq, 1);
  for (unsigned c = 0; c < 2; c++) {
    const frz_comm *m = &d.comms[c];
    if (m->comm_id == last->comm_id) {
      ck_assert_int_eq(m->last_enqueued_seq, 7);
      ck_assert_int_eq(m->last_completed_seq, 6);
    } else {
      ck_assert_int_eq(m->last_completed_seq, 1);
    }
  }
  frz_dump_free(&d);
}
END_TEST

START_TEST(test_generated_cases)
{
  frz_dump d;
  frz_error e;
  /* C9: p2p from profiling names; per (peer, direction) seq aligned at the
   * first op that did not complete (FRZ_PT_P2P_BASE), PyTorch's own
   * p2p_seq_id kept beside it */
  ck_assert_int_eq(frz_import_pytorch_file(fixture("c9/pp-stage-node2_0"), &d, &e), FRZ_OK);
  ck_assert_int_eq(d.process.global_rank, 0);
  ck_assert_int_eq(d.process.world_size, 3);
  ck_assert_uint_eq(d.nrecords, 2);
  ck_assert_uint_eq(d.records[0].op, FRZ_OP_Send);
  ck_assert_uint_eq(d.records[0].kind, FRZ_KIND_P2P);
  ck_assert_uint_eq(d.records[0].dir, FRZ_DIR_SEND);
  ck_assert_int_eq(d.records[0].peer, 1);
  ck_assert_uint_eq(d.records[0].seq, FRZ_PT_P2P_BASE - 1); /* completed, nothing pending after it */
  ck_assert_ptr_nonnull(d.pt);
  ck_assert_uint_eq(d.pt->records[0].p2p_seq_id, 1);
  ck_assert_uint_eq(d.records[1].op, FRZ_OP_Recv);
  ck_assert_uint_eq(d.records[1].dir, FRZ_DIR_RECV);
  ck_assert_uint_eq(d.records[1].seq, FRZ_PT_P2P_BASE); /* the first pending Recv from 1 */
  ck_assert_uint_eq(d.pt->records[1].p2p_seq_id, 2);
  ck_assert_uint_eq(d.records[1].state, FRZ_STATE_STARTED);
  uint64_t world = d.comms[0].comm_id;
  frz_dump_free(&d);
  /* the same group has the same id on another rank */
  ck_assert_int_eq(frz_import_pytorch_file(fixture("c9/pp-stage-node2_2"), &d, &e), FRZ_OK);
  ck_assert_int_eq(d.process.global_rank, 2);
  ck_assert_uint_eq(d.comms[0].comm_id, world);
  ck_assert_uint_eq(d.records[1].state, FRZ_STATE_ENQUEUED);
  frz_dump_free(&d);
  /* C10 (JSON, 4 groups): distinct ids for groups with equal members */
  ck_assert_int_eq(frz_import_pytorch_file(fixture("c10/worker-1.json"), &d, &e), FRZ_OK);
  ck_assert_int_eq(d.process.global_rank, 1);
  ck_assert_uint_eq(d.ncomms, 4);
  for (unsigned i = 0; i < 4; i++) {
    ck_assert_int_eq(d.comms[i].rank, 1);
    ck_assert_int_eq(d.comms[i].nranks, 2);
    for (unsigned k = 0; k < i; k++) ck_assert_uint_ne(d.comms[i].comm_id, d.comms[k].comm_id);
  }
  ck_assert_uint_eq(d.records[0].op, FRZ_OP_AllGather);
  ck_assert_uint_eq(d.records[0].count, 64); /* AllGather counts its input */
  frz_dump_free(&d);
  /* C1: host names with digits; the rank is the trailing integer */
  ck_assert_int_eq(frz_import_pytorch_file(fixture("c1/trn-node13-gpu7.nccl_trace_rank_5"), &d, &e),
                   FRZ_OK);
  ck_assert_int_eq(d.process.global_rank, 5);
  ck_assert_int_eq(d.comms[0].rank, 5);
  ck_assert_int_eq(d.comms[0].last_completed_seq, 72);
  frz_dump_free(&d);
}
END_TEST

START_TEST(test_rank_from_name)
{
  ck_assert_int_eq(frz_pytorch_rank_from_name("/d/nccl_trace_rank_12"), 12);
  ck_assert_int_eq(frz_pytorch_rank_from_name("node13-gpu7.nccl_trace_rank_5"), 5);
  ck_assert_int_eq(frz_pytorch_rank_from_name("/x9/host-10-0-3-17_rank3.pickle"), 3);
  ck_assert_int_eq(frz_pytorch_rank_from_name("gpu-a100-2x8-node3.rank0.json"), 0);
  ck_assert_int_eq(frz_pytorch_rank_from_name("node12/trace.json"), -1);
  ck_assert_int_eq(frz_pytorch_rank_from_name("rank"), -1);
}
END_TEST

/* Import a document given as text; returns the status, *d freed by caller. */
static frz_status import_text(const char *text, const char *name, frz_dump *d, frz_error *e)
{
  return frz_import_pytorch(text, strlen(text), name, d, e);
}

START_TEST(test_rank_from_content)
{
  frz_dump d;
  frz_error e;
  /* a "rank" field wins over the file name */
  const char *doc = "{\"version\":\"2.10\",\"rank\":6,\"pg_config\":{\"0\":{\"name\":\"0\","
                    "\"desc\":\"default_pg\",\"ranks\":\"[0, 1, 2, 3, 4, 5, 6, 7]\"}},\"entries\":[]}";
  ck_assert_int_eq(import_text(doc, "host1_rank3.json", &d, &e), FRZ_OK);
  ck_assert_int_eq(d.process.global_rank, 6);
  ck_assert_int_eq(d.comms[0].rank, 6);
  ck_assert_int_eq(d.process.world_size, 8);
  frz_dump_free(&d);
  /* a p2p profiling name in a group whose ranks are listed */
  doc = "{\"version\":\"2.4\",\"pg_config\":{\"3\":{\"name\":\"3\",\"desc\":\"pp\",\"ranks\":[4, 9]}},"
        "\"entries\":[{\"record_id\":0,\"pg_id\":3,\"process_group\":[\"3\",\"pp\"],"
        "\"collective_seq_id\":0,\"p2p_seq_id\":1,\"profiling_name\":\"nccl:recv 1<-0\","
        "\"input_sizes\":[[8]],\"input_dtypes\":[\"BFloat16\"],\"state\":\"scheduled\","
        "\"time_created_ns\":5}]}";
  ck_assert_int_eq(import_text(doc, "worker-0", &d, &e), FRZ_OK);
  ck_assert_int_eq(d.process.global_rank, 9);
  ck_assert_int_eq(d.comms[0].rank, 1);
  ck_assert_uint_eq(d.records[0].dtype, 9);
  ck_assert_int_eq(d.records[0].peer, 0);
  frz_dump_free(&d);
}
END_TEST

START_TEST(test_unknown_rank_and_batches)
{
  frz_dump d;
  frz_error e;
  /* no rank anywhere: the comms and records are kept, the rank is -1; the
   * world is the group named "0" when none is described as default_pg */
  const char *doc = "{\"version\":\"2.7\",\"pg_config\":{\"0\":{\"name\":\"0\",\"desc\":\"undefined\","
                    "\"ranks\":\"[0, 1, 2, 3]\"}},\"entries\":[{\"record_id\":3,\"pg_id\":0,"
                    "\"process_group\":[\"0\",\"undefined\"],\"collective_seq_id\":9,"
                    "\"profiling_name\":\"nccl:coalesced\",\"is_p2p\":true,\"state\":\"scheduled\"},"
                    "{\"record_id\":4,\"pg_id\":0,\"process_group\":[\"0\",\"undefined\"],"
                    "\"collective_seq_id\":9,\"profiling_name\":\"nccl:all_reduce\",\"is_p2p\":false,"
                    "\"state\":\"completed\",\"input_sizes\":[[2,3],[4]]}]}";
  ck_assert_int_eq(import_text(doc, "trace.json", &d, &e), FRZ_OK);
  ck_assert_int_eq(d.process.global_rank, -1);
  ck_assert_int_eq(d.process.world_size, 4);
  ck_assert_uint_eq(d.ncomms, 1);
  ck_assert_int_eq(d.comms[0].rank, -1);
  ck_assert_uint_eq(d.nrecords, 2);
  /* a batch of p2p calls has no pair: a group record, left out of matching */
  ck_assert_uint_eq(d.records[0].kind, FRZ_KIND_GROUP);
  ck_assert_uint_eq(d.records[1].kind, FRZ_KIND_COLL);
  ck_assert_uint_eq(d.records[1].count, 10); /* two inputs: 2x3 + 4 */
  ck_assert_uint_eq(d.process.records_dropped, 3);
  /* seqs before the first retained one are taken as completed */
  ck_assert_uint_eq(d.comms[0].first_retained_seq, 9);
  ck_assert_int_eq(d.comms[0].last_completed_seq, 9);
  frz_dump_free(&d);
}
END_TEST

START_TEST(test_versions)
{
  frz_dump d;
  frz_error e;
  /* a newer minor is read (PyTorch adds fields in minors), its new fields noted */
  ck_assert_int_eq(import_text("{\"version\":\"2.11\",\"entries\":[],\"new_thing\":1}", "f", &d, &e), FRZ_OK);
  ck_assert_uint_eq(d.pt->skipped_fields, 1);
  ck_assert_str_eq(d.pt->version, "2.11");
  frz_dump_free(&d);
  ck_assert_int_eq(import_text("{\"version\":\"2.10\",\"entries\":[],\"new_thing\":1}", "f", &d, &e), FRZ_OK);
  ck_assert_uint_eq(d.pt->skipped_fields, 0);
  frz_dump_free(&d);
  /* a new major is refused */
  ck_assert_int_eq(import_text("{\"version\":\"3.0\",\"entries\":[]}", "f", &d, &e), FRZ_E_VERSION);
  ck_assert(strstr(e.msg, "3.0") != NULL);
  /* the oldest form: no version, seq_id instead of collective_seq_id */
  ck_assert_int_eq(import_text("{\"entries\":[{\"seq_id\":4,\"pg_id\":0,\"profiling_name\":"
                               "\"nccl:all_reduce\",\"state\":\"completed\"}]}",
                               "r2", &d, &e),
                   FRZ_OK);
  ck_assert_uint_eq(d.records[0].seq, 4);
  ck_assert_int_eq(d.process.global_rank, 2);
  frz_dump_free(&d);
  ck_assert_int_eq(import_text("{\"version\":\"2.10\"}", "f", &d, &e), FRZ_E_CORRUPT);
  ck_assert(strstr(e.msg, "entries") != NULL);
  ck_assert_int_eq(import_text("hello", "f", &d, &e), FRZ_E_MAGIC);
  ck_assert_int_eq(import_text("", "f", &d, &e), FRZ_E_EMPTY);
}
END_TEST

/* Every prefix of the real pickle and JSON is refused cleanly. */
START_TEST(test_truncated_everywhere)
{
  const char *files[2] = {"h200-1rank/torch-fr.pickle", "h200-1rank/torch-fr.json"};
  for (int f = 0; f < 2; f++) {
    size_t len;
    unsigned char *b = slurp(files[f], &len);
    for (size_t n = 1; n < len; n++) {
      unsigned char *cut = malloc(n);
      ck_assert_ptr_nonnull(cut);
      memcpy(cut, b, n);
      frz_dump d;
      frz_error e;
      frz_status st = frz_import_pytorch(cut, n, "cut", &d, &e);
      ck_assert_msg(st != FRZ_OK, "%s cut at %zu accepted", files[f], n);
      ck_assert_msg(strncmp(e.msg, "cut: at byte ", 13) == 0, "message: %s", e.msg);
      ck_assert_uint_le(e.offset, n);
      free(cut);
    }
    free(b);
  }
}
END_TEST

static frz_status import_bytes(const unsigned char *b, size_t n, frz_error *e)
{
  frz_dump d;
  frz_status st = frz_import_pytorch(b, n, "bad.pickle", &d, e);
  if (st == FRZ_OK) frz_dump_free(&d);
  return st;
}

START_TEST(test_hostile_pickles)
{
  frz_error e;
  /* a string that claims 4 GiB */
  static const unsigned char huge[] = {0x80, 2, 'X', 0xff, 0xff, 0xff, 0xff, 'a', '.'};
  ck_assert_int_eq(import_bytes(huge, sizeof huge, &e), FRZ_E_TRUNCATED);
  ck_assert_uint_eq(e.offset, 2);
  ck_assert(strstr(e.msg, "bad.pickle: at byte 2: pickle truncated") != NULL);
  /* BINUNICODE8 with a 2^63 length */
  static const unsigned char huge8[] = {0x80, 4, 0x8d, 0, 0, 0, 0, 0, 0, 0, 0x80, '.'};
  ck_assert_int_eq(import_bytes(huge8, sizeof huge8, &e), FRZ_E_TRUNCATED);
  /* a LONG4 of 2 GiB */
  static const unsigned char long4[] = {0x80, 2, 0x8b, 0xff, 0xff, 0xff, 0x7f, '.'};
  ck_assert_int_eq(import_bytes(long4, sizeof long4, &e), FRZ_E_TRUNCATED);
  /* unknown opcode (REDUCE-free code execution attempts are unknown too) */
  static const unsigned char unk[] = {0x80, 2, '}', 0xfe, '.'};
  ck_assert_int_eq(import_bytes(unk, sizeof unk, &e), FRZ_E_CORRUPT);
  ck_assert_uint_eq(e.offset, 3);
  ck_assert(strstr(e.msg, "unknown or unsupported opcode") != NULL);
  static const char evil[] = "\x80\x02" "cos\nsystem\n" "X\x02\x00\x00\x00id\x85R.";
  ck_assert_int_eq(import_bytes((const unsigned char *)evil, sizeof evil - 1, &e), FRZ_E_CORRUPT);
  ck_assert(strstr(e.msg, "GLOBAL") != NULL);
  /* memo index beyond the file; BINGET of an unset slot */
  static const unsigned char memo[] = {0x80, 2, '}', 'r', 0xff, 0xff, 0xff, 0xff, '.'};
  ck_assert_int_eq(import_bytes(memo, sizeof memo, &e), FRZ_E_CORRUPT);
  static const unsigned char get[] = {0x80, 2, 'h', 9, '.'};
  ck_assert_int_eq(import_bytes(get, sizeof get, &e), FRZ_E_CORRUPT);
  /* stack underflow, unbalanced stack, no STOP */
  static const unsigned char under[] = {0x80, 2, 's', '.'};
  ck_assert_int_eq(import_bytes(under, sizeof under, &e), FRZ_E_CORRUPT);
  static const unsigned char two[] = {0x80, 2, 'N', 'N', '.'};
  ck_assert_int_eq(import_bytes(two, sizeof two, &e), FRZ_E_CORRUPT);
  static const unsigned char nostop[] = {0x80, 2, '}'};
  ck_assert_int_eq(import_bytes(nostop, sizeof nostop, &e), FRZ_E_TRUNCATED);
  /* a valid pickle that is not a Flight Recorder dump */
  static const unsigned char list[] = {0x80, 2, ']', '.'};
  ck_assert_int_eq(import_bytes(list, sizeof list, &e), FRZ_E_CORRUPT);
  ck_assert(strstr(e.msg, "not a PyTorch Flight Recorder dump") != NULL);
}
END_TEST

/* Python's own pickler at protocol 4 (FRAME, MEMOIZE, SHORT_BINUNICODE,
 * SETITEM, APPEND): read too. */
START_TEST(test_protocol4)
{
  static const char p4[] =
      "\x80\x04\x95\xe3\x00\x00\x00\x00\x00\x00\x00\x7d\x94\x28\x8c\x07"
      "\x76\x65\x72\x73\x69\x6f\x6e\x94\x8c\x04\x32\x2e\x31\x30\x94\x8c"
      "\x07\x65\x6e\x74\x72\x69\x65\x73\x94\x5d\x94\x7d\x94\x28\x8c\x09"
      "\x72\x65\x63\x6f\x72\x64\x5f\x69\x64\x94\x4b\x00\x8c\x0e\x70\x72"
      "\x6f\x66\x69\x6c\x69\x6e\x67\x5f\x6e\x61\x6d\x65\x94\x8c\x0e\x6e"
      "\x63\x63\x6c\x3a\x62\x72\x6f\x61\x64\x63\x61\x73\x74\x94\x8c\x11"
      "\x63\x6f\x6c\x6c\x65\x63\x74\x69\x76\x65\x5f\x73\x65\x71\x5f\x69"
      "\x64\x94\x4b\x01\x8c\x05\x73\x74\x61\x74\x65\x94\x8c\x07\x73\x74"
      "\x61\x72\x74\x65\x64\x94\x8c\x0d\x70\x72\x6f\x63\x65\x73\x73\x5f"
      "\x67\x72\x6f\x75\x70\x94\x8c\x01\x30\x94\x8c\x0a\x64\x65\x66\x61"
      "\x75\x6c\x74\x5f\x70\x67\x94\x86\x94\x75\x61\x8c\x09\x70\x67\x5f"
      "\x63\x6f\x6e\x66\x69\x67\x94\x7d\x94\x68\x0d\x7d\x94\x28\x8c\x04"
      "\x6e\x61\x6d\x65\x94\x68\x0d\x8c\x04\x64\x65\x73\x63\x94\x68\x0e"
      "\x8c\x05\x72\x61\x6e\x6b\x73\x94\x8c\x06\x5b\x30\x2c\x20\x31\x5d"
      "\x94\x75\x73\x8c\x04\x72\x61\x6e\x6b\x94\x4b\x01\x75\x2e";
  frz_dump d;
  frz_error e;
  ck_assert_int_eq(frz_import_pytorch(p4, sizeof p4 - 1, "p4.pickle", &d, &e), FRZ_OK);
  ck_assert_int_eq(d.process.global_rank, 1);
  ck_assert_int_eq(d.comms[0].rank, 1);
  ck_assert_int_eq(d.comms[0].nranks, 2);
  ck_assert_uint_eq(d.nrecords, 1);
  ck_assert_uint_eq(d.records[0].op, FRZ_OP_Broadcast);
  ck_assert_uint_eq(d.records[0].state, FRZ_STATE_STARTED);
  frz_dump_free(&d);
}
END_TEST

START_TEST(test_deep_nesting)
{
  /* 100000 nested lists by MARK ... LIST, and by EMPTY_LIST ... APPEND */
  size_t n = 100000;
  unsigned char *b = malloc(2 * n + 4);
  ck_assert_ptr_nonnull(b);
  size_t k = 0;
  b[k++] = 0x80;
  b[k++] = 2;
  for (size_t i = 0; i < n; i++) b[k++] = '(';
  for (size_t i = 0; i < n; i++) b[k++] = 'l';
  b[k++] = '.';
  frz_error e;
  ck_assert_int_eq(import_bytes(b, k, &e), FRZ_E_CORRUPT);
  ck_assert(strstr(e.msg, "nested too deeply") != NULL);
  k = 2;
  for (size_t i = 0; i < n; i++) b[k++] = ']';
  for (size_t i = 0; i + 1 < n; i++) b[k++] = 'a';
  b[k++] = '.';
  ck_assert_int_eq(import_bytes(b, k, &e), FRZ_E_CORRUPT);
  ck_assert(strstr(e.msg, "nested too deeply") != NULL);
  free(b);
  /* JSON: deep arrays */
  char *j = malloc(n + 6);
  ck_assert_ptr_nonnull(j);
  memcpy(j, "{\"a\":", 5);
  memset(j + 5, '[', n);
  frz_dump d;
  ck_assert_int_eq(frz_import_pytorch(j, n + 5, "deep.json", &d, &e), FRZ_E_CORRUPT);
  ck_assert(strstr(e.msg, "nested too deeply") != NULL);
  free(j);
  ck_assert_int_eq(frz_import_pytorch("[", 1, "x.json", &d, &e), FRZ_E_MAGIC);
  ck_assert_int_eq(frz_import_pytorch("{\"a\":[1,2", 9, "x.json", &d, &e), FRZ_E_TRUNCATED);
  ck_assert_int_eq(frz_import_pytorch("{\"a\":tru}", 9, "x.json", &d, &e), FRZ_E_CORRUPT);
}
END_TEST

/* Random byte flips in the real pickle and JSON: never a crash, a leak or
 * a hang; every error names the file and an offset. */
START_TEST(test_mutations)
{
  size_t len;
  unsigned char *b = slurp(_i ? "h200-1rank/torch-fr.json" : "h200-1rank/torch-fr.pickle", &len);
  unsigned seed = 12345u + (unsigned)_i;
  for (int round = 0; round < 3000; round++) {
    unsigned char *m = malloc(len);
    ck_assert_ptr_nonnull(m);
    memcpy(m, b, len);
    for (int f = 0; f < 1 + round % 4; f++) {
      seed = seed * 1103515245u + 12345u;
      size_t at = 2 + (seed >> 8) % (len - 2);
      seed = seed * 1103515245u + 12345u;
      m[at] = (unsigned char)(seed >> 16);
    }
    frz_error e;
    frz_status st = import_bytes(m, len, &e);
    if (st != FRZ_OK) ck_assert(strncmp(e.msg, "bad.pickle: at byte ", 20) == 0);
    free(m);
  }
  free(b);
}
END_TEST

/* Many groups and many peers stay linear: 40000 entries, each in a group
 * of its own, p2p to a different peer; imported well within the timeout. */
/* pv_fields: every asked key's value in one pass, the first of equal
 * keys, NULL for a missing key or a non-dict; the same as pv_get. */
START_TEST(test_pv_fields)
{
  static const char *const keys[] = {"a", "zz", "missing", "state", "time_created_ns", "b"};
  pv_keyset ks;
  pv_keyset_init(&ks, keys, 6);
  const char j[] = "{\"b\":2,\"a\":1,\"zz\":\"x\",\"a\":3,\"\":5,\"ab\":7,\"time_created_ns\":9,"
                   "\"state\":\"completed\",\"stat\":0}";
  pv_arena a;
  pv_arena_init(&a, 1 << 20);
  const pv *root;
  frz_error e;
  ck_assert_int_eq(pv_from_json(j, sizeof j - 1, "t.json", &a, &root, &e), FRZ_OK);
  const pv *f[6];
  pv_fields(root, &ks, f);
  for (int i = 0; i < 6; i++) ck_assert_ptr_eq(f[i], pv_get(root, keys[i]));
  int64_t v;
  ck_assert_int_eq(pv_int(f[0], &v), 0);
  ck_assert_int_eq(v, 1); /* the first "a" */
  ck_assert(pv_str_is(f[1], "x"));
  ck_assert_ptr_null(f[2]);
  ck_assert(pv_str_is(f[3], "completed"));
  ck_assert_int_eq(pv_int(f[4], &v), 0);
  ck_assert_int_eq(v, 9);
  ck_assert_int_eq(pv_int(f[5], &v), 0);
  ck_assert_int_eq(v, 2);
  pv_fields(root->items[1], &ks, f); /* an int, not a dict */
  for (int i = 0; i < 6; i++) ck_assert_ptr_null(f[i]);
  pv_arena_free(&a);
}
END_TEST

/* pv_fields_cached: the same values as pv_fields, dict after dict, when
 * dicts share key nodes (keys memoized, as torch's pickler writes them),
 * reorder them, repeat a key, are empty, add a key, use a fresh node of
 * an equal key, or are not dicts at all. */
START_TEST(test_pv_fields_cached)
{
  /* [{a:1,b:2}, {a:3,b:4}, {b:5,a:6}, {a:7,a:8}, {}, {a:9,b:10,zz:11},
   *  {a(a fresh node):12,b:13}, 14, {a:15,b:16}] */
  static const uint8_t pk[] = {
      0x80, 2, ']', '(',
      '}', '(', 'X', 1, 0, 0, 0, 'a', 'q', 0, 'K', 1, 'X', 1, 0, 0, 0, 'b', 'q', 1, 'K', 2, 'u',
      '}', '(', 'h', 0, 'K', 3, 'h', 1, 'K', 4, 'u',
      '}', '(', 'h', 1, 'K', 5, 'h', 0, 'K', 6, 'u',
      '}', '(', 'h', 0, 'K', 7, 'h', 0, 'K', 8, 'u',
      '}',
      '}', '(', 'h', 0, 'K', 9, 'h', 1, 'K', 10, 'X', 2, 0, 0, 0, 'z', 'z', 'q', 2, 'K', 11, 'u',
      '}', '(', 'X', 1, 0, 0, 0, 'a', 'K', 12, 'h', 1, 'K', 13, 'u',
      'K', 14,
      '}', '(', 'h', 0, 'K', 15, 'h', 1, 'K', 16, 'u',
      'e', '.'};
  static const char *const keys[] = {"a", "b", "zz", "missing"};
  static const int64_t want_a[] = {1, 3, 6, 7, -1, 9, 12, -1, 15};
  pv_keyset ks;
  pv_keyset_init(&ks, keys, 4);
  pv_arena a;
  pv_arena_init(&a, 1 << 20);
  const pv *root;
  frz_error e;
  ck_assert_int_eq(pv_from_pickle(pk, sizeof pk, "t.pkl", &a, &root, &e), FRZ_OK);
  ck_assert_int_eq(root->type, PV_LIST);
  ck_assert_uint_eq(root->n, 9);
  pv_layout lay;
  memset(&lay, 0, sizeof lay);
  for (uint32_t k = 0; k < root->n; k++) {
    const pv *got[4], *want[4];
    pv_fields_cached(root->items[k], &ks, &lay, got);
    pv_fields(root->items[k], &ks, want);
    for (int i = 0; i < 4; i++) ck_assert_ptr_eq(got[i], want[i]);
    int64_t v = -1;
    if (got[0]) ck_assert_int_eq(pv_int(got[0], &v), 0);
    ck_assert_int_eq(v, want_a[k]);
    ck_assert_ptr_null(got[3]);
  }
  pv_arena_free(&a);
}
END_TEST

START_TEST(test_scale)
{
  size_t n = 40000, cap = n * 200 + 4096, k = 0;
  char *j = malloc(cap);
  ck_assert_ptr_nonnull(j);
  k += (size_t)snprintf(j + k, cap - k, "{\"version\":\"2.10\",\"rank\":1,\"pg_config\":{");
  for (size_t i = 0; i < n; i++)
    k += (size_t)snprintf(j + k, cap - k, "%s\"g%zu\":{\"name\":\"g%zu\",\"desc\":\"x\",\"ranks\":\"[0, 1]\"}",
                          i ? "," : "", i, i);
  k += (size_t)snprintf(j + k, cap - k, "},\"entries\":[");
  for (size_t i = 0; i < n; i++)
    k += (size_t)snprintf(j + k, cap - k,
                          "%s{\"record_id\":%zu,\"process_group\":[\"g%zu\",\"x\"],"
                          "\"profiling_name\":\"nccl:send 1->%zu\",\"state\":\"completed\"}",
                          i ? "," : "", i, i, i + 2);
  k += (size_t)snprintf(j + k, cap - k, "]}");
  ck_assert_uint_lt(k, cap);
  frz_dump d;
  frz_error e;
  ck_assert_int_eq(frz_import_pytorch(j, k, "big.json", &d, &e), FRZ_OK);
  ck_assert_uint_eq(d.ncomms, n);
  ck_assert_uint_eq(d.nrecords, n);
  ck_assert_int_eq(d.records[n - 1].peer, (int32_t)(n + 1));
  ck_assert_uint_eq(d.records[n - 1].seq, FRZ_PT_P2P_BASE - 1);
  frz_dump_free(&d);
  free(j);
}
END_TEST

static Suite *suite(void)
{
  Suite *s = suite_create("pytorch_fr");
  TCase *t = tcase_create("import");
  tcase_set_timeout(t, 60);
  tcase_add_test(t, test_real_pickle_and_json);
  tcase_add_test(t, test_real_watchdog_dump);
  tcase_add_test(t, test_generated_cases);
  tcase_add_test(t, test_rank_from_name);
  tcase_add_test(t, test_rank_from_content);
  tcase_add_test(t, test_unknown_rank_and_batches);
  tcase_add_test(t, test_versions);
  tcase_add_test(t, test_truncated_everywhere);
  tcase_add_test(t, test_hostile_pickles);
  tcase_add_test(t, test_protocol4);
  tcase_add_test(t, test_deep_nesting);
  tcase_add_loop_test(t, test_mutations, 0, 2);
  tcase_add_test(t, test_scale);
  tcase_add_test(t, test_pv_fields);
  tcase_add_test(t, test_pv_fields_cached);
  suite_add_tcase(s, t);
  return s;
}

int main(void)
{
  SRunner *r = srunner_create(suite());
  srunner_run_all(r, CK_NORMAL);
  int failed = srunner_ntests_failed(r);
  srunner_free(r);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
