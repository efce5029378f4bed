/* synth_job.c: synthetic jobs for the analyzer's unit tests (synth_job.h). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "synth_job.h"

job *job_new(int n)
{
  job *j = calloc(1, sizeof *j);
  ck_assert_ptr_nonnull(j);
  j->n = n;
  for (int r = 0; r < n; r++) {
    frz_process *p = &j->proc[r];
    p->global_rank = r;
    p->world_size = n;
    p->local_rank = r % 4;
    p->pid = 4000 + (uint32_t)r;
    snprintf(p->host, sizeof p->host, "node%02d", r / 4);
    snprintf(p->job_id, sizeof p->job_id, "job-42");
    p->nccl_version = 22809;
    p->recorder_version = 100;
    p->anchor_realtime_ns = 1764452160000000000ull;
    p->anchor_monotonic_ns = T0 - 1000 * DT;
    p->trigger = FRZ_TRIGGER_TIMEOUT;
    p->frame = 0;
    p->trigger_time_ns = T0 + 60000 * DT;
    p->frame_time_ns = T0 + 60000 * DT + 5 * DT;
    p->trigger_rank = 0;
    p->ring_capacity = 16384;
    snprintf(p->trigger_text, sizeof p->trigger_text, "oldest op waited 60 s");
  }
  return j;
}

void job_free(job *j)
{
  for (int r = 0; r < MAXR; r++) free(j->rec[r]);
  free(j);
}

/* Give rank r comm rank `cr` of comm `id` (nranks members). */
void job_comm(job *j, int r, uint64_t id, int nranks, int cr)
{
  ck_assert_uint_lt(j->ncomm[r], MAXC);
  frz_comm *c = &j->comm[r][j->ncomm[r]++];
  memset(c, 0, sizeof *c);
  c->comm_id = id;
  c->nccl_comm_hash = id ^ 0x5a5a5a5a00000000ull;
  c->handle = 0x7f0000001000ull + (uint64_t)j->ncomm[r] * 0x100;
  c->nranks = nranks;
  c->rank = cr;
  c->split_color = -1;
  c->cuda_device = r % 4;
  c->last_enqueued_seq = c->last_started_seq = c->last_completed_seq = -1;
}

/* Every rank of the job joins comm `id` with comm rank = global rank. */
void job_world(job *j, uint64_t id)
{
  for (int r = 0; r < j->n; r++) job_comm(j, r, id, j->n, r);
}

frz_comm *find_comm(job *j, int r, uint64_t id)
{
  for (uint32_t i = 0; i < j->ncomm[r]; i++)
    if (j->comm[r][i].comm_id == id) return &j->comm[r][i];
  ck_abort_msg("rank %d has no comm %llx", r, (unsigned long long)id);
  return NULL;
}

frz_record *push_rec(job *j, int r)
{
  if (j->nrec[r] == j->cap[r]) {
    j->cap[r] = j->cap[r] ? j->cap[r] * 2 : 64;
    j->rec[r] = realloc(j->rec[r], j->cap[r] * sizeof *j->rec[r]);
    ck_assert_ptr_nonnull(j->rec[r]);
  }
  frz_record *x = &j->rec[r][j->nrec[r]];
  memset(x, 0, sizeof *x);
  x->id = j->proc[r].records_total++;
  x->nccl_seq = UINT64_MAX; /* no profiler plugin */
  x->algo = FRZ_ALGO_UNKNOWN;
  x->proto = FRZ_PROTO_UNKNOWN;
  x->cuda_device = FRZ_CUDA_DEVICE_UNKNOWN; /* until a comm's entry says */
  x->comm_rank = -1;
  j->nrec[r]++;
  return x;
}

/* A record of rank r made by the comm rank of entry c (frz 1.3). */
frz_record *push_rec_of(job *j, int r, const frz_comm *c)
{
  frz_record *x = push_rec(j, r);
  x->comm_id = c->comm_id;
  x->comm_rank = c->rank;
  x->cuda_device = c->cuda_device >= 0 && c->cuda_device < 255 ? (uint8_t)c->cuda_device
                                                               : FRZ_CUDA_DEVICE_UNKNOWN;
  return x;
}

/* A collective on rank r by its comm entry c, at the entry's next seq. */
void coll_on(job *j, int r, frz_comm *c, unsigned op, uint64_t count, unsigned dtype,
                    unsigned redop, int root, unsigned state)
{
  frz_record *x = push_rec_of(j, r, c);
  x->seq = c->next_seq++;
  x->op = (uint16_t)op;
  x->kind = FRZ_KIND_COLL;
  x->count = count;
  x->dtype = (uint8_t)dtype;
  x->redop = (uint8_t)redop;
  x->peer = root;
  x->stream = 0x5000 + (uint64_t)r;
  x->call_site = 0x401000;
  x->tid = 7000 + (uint32_t)r;
  x->t_enqueue_ns = T0 + x->id * DT;
  x->state = (uint8_t)state;
  x->result = 0;
  if (state >= FRZ_STATE_STARTED) x->t_start_ns = x->t_enqueue_ns + DT / 10;
  if (state == FRZ_STATE_COMPLETED) x->t_complete_ns = x->t_enqueue_ns + DT / 2;
  c->last_enqueued_seq = (int64_t)x->seq;
  if (state >= FRZ_STATE_STARTED) c->last_started_seq = (int64_t)x->seq;
  if (state == FRZ_STATE_COMPLETED && c->last_completed_seq + 1 == (int64_t)x->seq)
    c->last_completed_seq = (int64_t)x->seq;
}

/* A collective on rank r, comm id, at the comm's next seq. */
void coll(job *j, int r, uint64_t id, unsigned op, uint64_t count, unsigned dtype,
                 unsigned redop, int root, unsigned state)
{
  coll_on(j, r, find_comm(j, r, id), op, count, dtype, redop, root, state);
}

/* The usual op: AllReduce of 1M float32 (sum), a Broadcast every 4th seq. */
void step(job *j, int r, uint64_t id, unsigned state)
{
  frz_comm *c = find_comm(j, r, id);
  if (c->next_seq % 4 == 3) coll(j, r, id, FRZ_OP_Broadcast, 4096, 7, 255, 0, state);
  else coll(j, r, id, FRZ_OP_AllReduce, 1048576, 7, 0, -1, state);
}

/* Ranks [lo, hi] run `nops` completed ops on comm id. */
void run(job *j, int lo, int hi, uint64_t id, int nops)
{
  for (int r = lo; r <= hi; r++)
    for (int k = 0; k < nops; k++) step(j, r, id, FRZ_STATE_COMPLETED);
}

/* A p2p op of rank r (comm rank = r on comm id) with its own pair seq. */
void p2p(job *j, int r, uint64_t id, unsigned op, int peer, uint64_t seq, unsigned state)
{
  const frz_comm *c = NULL; /* its comm entry, when r is in the comm */
  for (uint32_t i = 0; i < j->ncomm[r] && !c; i++)
    if (j->comm[r][i].comm_id == id) c = &j->comm[r][i];
  frz_record *x = c ? push_rec_of(j, r, c) : push_rec(j, r);
  x->comm_id = id;
  x->seq = seq;
  x->op = (uint16_t)op;
  x->kind = FRZ_KIND_P2P;
  x->dir = op == FRZ_OP_Send ? FRZ_DIR_SEND : FRZ_DIR_RECV;
  x->peer = peer;
  x->count = 1024;
  x->dtype = 7;
  x->redop = 255;
  x->state = (uint8_t)state;
  x->t_enqueue_ns = T0 + x->id * DT;
  if (state == FRZ_STATE_COMPLETED) x->t_complete_ns = x->t_enqueue_ns + DT / 2;
  x->result = 0;
}

/* A lifecycle op of rank r on comm id at the comm's next seq; `arg` stands
 * for what differs by design between ranks (a split color). */
void life(job *j, int r, uint64_t id, unsigned op, uint64_t arg)
{
  frz_comm *c = find_comm(j, r, id);
  frz_record *x = push_rec_of(j, r, c);
  x->seq = c->next_seq++;
  x->op = (uint16_t)op;
  x->kind = FRZ_KIND_LIFE;
  x->count = arg;
  x->dtype = 255;
  x->redop = 255;
  x->peer = -1;
  x->state = FRZ_STATE_COMPLETED;
  x->t_enqueue_ns = T0 + x->id * DT;
  x->t_complete_ns = x->t_enqueue_ns + DT / 2;
  c->last_enqueued_seq = c->last_started_seq = c->last_completed_seq = (int64_t)x->seq;
}

/* Drop the oldest records of rank r so that comm id retains seqs >= first. */
void wrap(job *j, int r, uint64_t id, uint64_t first)
{
  uint64_t w = 0, dropped = 0;
  for (uint64_t i = 0; i < j->nrec[r]; i++) {
    const frz_record *x = &j->rec[r][i];
    if (x->comm_id == id && x->seq < first) {
      dropped++;
      continue;
    }
    j->rec[r][w++] = *x;
  }
  j->nrec[r] = w;
  frz_comm *c = find_comm(j, r, id);
  c->first_retained_seq = first;
  c->dropped_records = dropped;
  j->proc[r].records_dropped = dropped;
}

frz_dump dump_of(job *j, int r)
{
  frz_dump d;
  memset(&d, 0, sizeof d);
  d.version_major = FRZ_VERSION_MAJOR;
  d.version_minor = FRZ_VERSION_MINOR;
  d.process = j->proc[r];
  d.ncomms = j->ncomm[r];
  d.comms = malloc((d.ncomms ? d.ncomms : 1) * sizeof *d.comms);
  ck_assert_ptr_nonnull(d.comms);
  memcpy(d.comms, j->comm[r], d.ncomms * sizeof *d.comms);
  d.nrecords = j->nrec[r];
  d.records = malloc((d.nrecords ? d.nrecords : 1) * sizeof *d.records);
  ck_assert_ptr_nonnull(d.records);
  if (d.nrecords) memcpy(d.records, j->rec[r], d.nrecords * sizeof *d.records);
  return d;
}

/* Analyse the job in memory. */
fa_analysis *analyse_opt(job *j, int stragglers_if_needed)
{
  fa_analysis *a = fa_new();
  ck_assert_ptr_nonnull(a);
  a->stragglers_if_needed = stragglers_if_needed;
  for (int r = 0; r < j->n; r++) {
    if (j->absent[r]) continue;
    frz_dump d = dump_of(j, r);
    char name[32];
    snprintf(name, sizeof name, "rank%d", r);
    ck_assert_int_eq(fa_add_dump(a, &d, name), 0);
  }
  ck_assert_int_eq(fa_run(a), 0);
  if (getenv("FR_CHECK_SHOW")) { /* to look at the reports while writing tests */
    fa_report_text(a, stdout);
    fputs("----\n", stdout);
  }
  return a;
}

fa_analysis *analyse(job *j) { return analyse_opt(j, 0); }

/* Write rank r's dump as DIR/NAME. */
void write_rank(job *j, int r, const char *dir, const char *name)
{
  void *buf;
  size_t len;
  frz_error e;
  ck_assert_int_eq(frz_encode(&j->proc[r], j->comm[r], j->ncomm[r], j->rec[r], j->nrec[r], 0,
                              &buf, &len, &e),
                   FRZ_OK);
  ck_assert_int_eq(frz_write_file_atomic(dir, name, buf, len, &e), FRZ_OK);
  free(buf);
}

void write_job(job *j, const char *dir)
{
  for (int r = 0; r < j->n; r++) {
    if (j->absent[r]) continue;
    char name[128];
    ck_assert_int_gt(frz_dump_filename(name, sizeof name, j->proc[r].job_id, j->proc[r].global_rank,
                                       j->proc[r].pid, j->proc[r].frame),
                     0);
    write_rank(j, r, dir, name);
  }
}

int ranks_are(const fa_ranks *r, const int32_t *want, uint32_t n)
{
  if (r->n != n) return 0;
  for (uint32_t i = 0; i < n; i++)
    if (r->v[i] != want[i]) return 0;
  return 1;
}

const fa_comm *comm_of(const fa_analysis *a, uint64_t id)
{
  int32_t i = fa_find_comm(a, id);
  ck_assert_int_ge(i, 0);
  return &a->comms[i];
}

cJSON *json_of(const fa_analysis *a)
{
  char *s = fa_report_json(a);
  ck_assert_ptr_nonnull(s);
  cJSON *j = cJSON_Parse(s);
  ck_assert_msg(j != NULL, "analysis JSON does not parse");
  free(s);
  return j;
}

/* The JSON value at a dotted path ("verdict.stuck.seq"). */
cJSON *jget(cJSON *root, const char *path)
{
  char buf[256];
  snprintf(buf, sizeof buf, "%s", path);
  cJSON *cur = root;
  for (char *save = NULL, *k = strtok_r(buf, ".", &save); k && cur; k = strtok_r(NULL, ".", &save))
    cur = cJSON_GetObjectItemCaseSensitive(cur, k);
  ck_assert_msg(cur != NULL, "no %s in the JSON", path);
  return cur;
}

/* A JSON array of numbers printed compactly, for comparisons. */
char *jtext(cJSON *root, const char *path)
{
  return cJSON_PrintUnformatted(jget(root, path));
}

char *text_of(const fa_analysis *a)
{
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  ck_assert_ptr_nonnull(f);
  ck_assert_int_eq(fa_report_text(a, f), 0);
  fclose(f);
  return buf;
}
