/* synth.c — the synthetic hung job of synth.h: one rank's records and comm
 * table from its rank number. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "synth.h"

#define NOCOMM 255
#define OPS_PER_STEP 16
#define OP_GAP_NS UINT64_C(20000000)   /* between the calls of a step */
#define JITTER_NS 2000000u             /* arrival spread of one call over the ranks */
#define START_NS 3000                  /* enqueue to start, when the stream is free */
#define HANG_WAIT_NS UINT64_C(600000000000) /* the watchdog's timeout (600 s) */
#define RECORDS_BEFORE 4               /* CommInitRank and 3 CommSplits, long dropped */
#define TAIL_MAX 4

/* One call of a training step. */
typedef struct step_op {
  uint8_t comm;        /* SYNTH_* or NOCOMM (group brackets) */
  uint16_t op;
  uint8_t dtype, redop;
  int32_t root;        /* comm rank, -1 none */
  uint64_t count;      /* elements */
  uint64_t dur_ns;     /* on the device */
} step_op;

#define BF16 9
#define F32 7
#define I64 4
#define NONE 255
static const step_op step_ops[OPS_PER_STEP] = {
    {NOCOMM, FRZ_OP_GroupStart, NONE, NONE, -1, 0, 0},
    {SYNTH_PP, FRZ_OP_Recv, BF16, NONE, -1, 4194304, 1000000},
    {NOCOMM, FRZ_OP_GroupEnd, NONE, NONE, -1, 0, 0},
    {SYNTH_TP, FRZ_OP_AllReduce, BF16, 0, -1, 16777216, 4000000},
    {SYNTH_TP, FRZ_OP_AllReduce, BF16, 0, -1, 16777216, 4000000},
    {NOCOMM, FRZ_OP_GroupStart, NONE, NONE, -1, 0, 0},
    {SYNTH_PP, FRZ_OP_Send, BF16, NONE, -1, 4194304, 1000000},
    {NOCOMM, FRZ_OP_GroupEnd, NONE, NONE, -1, 0, 0},
    {SYNTH_TP, FRZ_OP_AllReduce, BF16, 0, -1, 16777216, 4000000},
    {SYNTH_TP, FRZ_OP_AllReduce, BF16, 0, -1, 16777216, 4000000},
    {SYNTH_DP, FRZ_OP_ReduceScatter, BF16, 0, -1, 8388608, 6000000},
    {SYNTH_DP, FRZ_OP_ReduceScatter, BF16, 0, -1, 8388608, 6000000},
    {SYNTH_DP, FRZ_OP_AllGather, BF16, NONE, -1, 8388608, 6000000},
    {SYNTH_DP, FRZ_OP_AllGather, BF16, NONE, -1, 8388608, 6000000},
    {SYNTH_WORLD, FRZ_OP_AllReduce, F32, 0, -1, 1, 100000},
    {SYNTH_WORLD, FRZ_OP_Broadcast, I64, NONE, 0, 2, 100000},
};
/* The hung step's calls: the first 14 as usual, then the fault's. */
#define HUNG_AT 14
#define TP_PER_STEP 4
#define WORLD_PER_STEP 2
#define DP_PER_STEP 4

/* splitmix64: deterministic per-(rank, step, op) noise. */
static uint64_t mix(uint64_t x)
{
  x += UINT64_C(0x9e3779b97f4a7c15);
  x = (x ^ (x >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
  x = (x ^ (x >> 27)) * UINT64_C(0x94d049bb133111eb);
  return x ^ (x >> 31);
}

int synth_fault_from_name(const char *s)
{
  if (strcmp(s, "lag") == 0) return SYNTH_LAG;
  if (strcmp(s, "mismatch") == 0) return SYNTH_MISMATCH;
  if (strcmp(s, "cycle") == 0) return SYNTH_CYCLE;
  return -1;
}

const char *synth_fault_name(synth_fault f)
{
  return f == SYNTH_LAG ? "lag" : f == SYNTH_MISMATCH ? "mismatch" : "cycle";
}

int synth_init(synth_job *j, int32_t nranks, int32_t tp, int32_t pp, uint32_t records,
               synth_fault fault, int32_t culprit, char *err, size_t errlen)
{
  memset(j, 0, sizeof *j);
  if (tp < 2 || pp < 2 || nranks < tp * pp || nranks % (tp * pp)) {
    snprintf(err, errlen, "%d ranks are not tp (%d, >= 2) x pp (%d, >= 2) x dp", nranks, tp, pp);
    return -1;
  }
  if (records < 64) {
    snprintf(err, errlen, "at least 64 records per rank");
    return -1;
  }
  if (culprit >= nranks) {
    snprintf(err, errlen, "culprit %d outside 0..%d", culprit, nranks - 1);
    return -1;
  }
  j->nranks = nranks;
  j->tp = tp;
  j->pp = pp;
  j->dp = nranks / (tp * pp);
  j->records = records;
  j->fault = fault;
  j->culprit = culprit >= 0 ? culprit : (nranks / 2 + 3) % nranks;
  j->partner = -1;
  if (fault == SYNTH_CYCLE) /* its TP neighbour */
    j->partner = j->culprit % tp == tp - 1 ? j->culprit - 1 : j->culprit + 1;
  /* enough steps that the ring is full and older records were dropped */
  j->full_steps = records / OPS_PER_STEP + 2;
  snprintf(j->job_id, sizeof j->job_id, "synth-%d", nranks);
  return 0;
}

uint64_t synth_comm_id(const synth_job *j, int32_t r, int which)
{
  int32_t t = r % j->tp, s = (r / j->tp) % j->pp, d = r / (j->tp * j->pp);
  switch (which) {
  case SYNTH_TP: return UINT64_C(0x5450000000000000) | ((uint64_t)d * (uint64_t)j->pp + (uint64_t)s);
  case SYNTH_PP: return UINT64_C(0x5050000000000000) | ((uint64_t)d * (uint64_t)j->tp + (uint64_t)t);
  case SYNTH_DP: return UINT64_C(0x4450000000000000) | ((uint64_t)s * (uint64_t)j->tp + (uint64_t)t);
  default: return UINT64_C(0x574f524c44000001);
  }
}

void synth_host(int32_t rank, char *buf, size_t len)
{
  snprintf(buf, len, "node%05d", rank / SYNTH_RANKS_PER_HOST);
}

int64_t synth_host_offset_ns(int32_t rank)
{
  uint64_t h = (uint64_t)(rank / SYNTH_RANKS_PER_HOST);
  return (int64_t)(mix(h ^ UINT64_C(0x686f7374)) % 1000) * 1000000; /* 0..999 ms */
}

/* One call of a rank's stream, before the stream is placed in time. */
typedef struct call {
  step_op o;
  uint64_t step;
  uint32_t k;          /* index in the step (the time slot) */
  uint64_t seq;
  uint8_t state;
} call;

/* Collective seqs of `comm` issued before slot k of a step. */
static uint64_t seq_before(uint8_t comm, uint32_t k)
{
  uint64_t n = 0;
  for (uint32_t i = 0; i < k; i++) n += step_ops[i].comm == comm;
  return n;
}

static uint64_t per_step(uint8_t comm)
{
  return comm == SYNTH_TP ? TP_PER_STEP : comm == SYNTH_DP ? DP_PER_STEP : WORLD_PER_STEP;
}

/* The regular call at slot k of `step`. */
static call regular(uint64_t step, uint32_t k)
{
  call c = {step_ops[k], step, k, 0, FRZ_STATE_COMPLETED};
  uint8_t cm = c.o.comm;
  if (c.o.op == FRZ_OP_Send || c.o.op == FRZ_OP_Recv) c.seq = step; /* one per step and peer */
  else if (cm != NOCOMM) c.seq = step * per_step(cm) + seq_before(cm, k);
  return c;
}

/* The calls of a rank after the hung step's first HUNG_AT ones. */
static uint32_t tail(const synth_job *j, int32_t r, call *out)
{
  uint64_t S = j->full_steps;
  call w = regular(S, HUNG_AT); /* the world AllReduce */
  w.state = FRZ_STATE_STARTED;
  switch (j->fault) {
  case SYNTH_LAG:
    if (r == j->culprit) return 0;
    out[0] = w;
    return 1;
  case SYNTH_MISMATCH:
    if (r == j->culprit) w.o.count = 2;
    out[0] = w;
    return 1;
  case SYNTH_CYCLE:
    break;
  }
  /* an extra TP AllReduce, then the world AllReduce */
  call x = regular(S, 3);
  x.k = HUNG_AT;
  x.seq = S * TP_PER_STEP + TP_PER_STEP;
  w.k = HUNG_AT + 1;
  int32_t group = j->culprit / j->tp;
  if (r == j->partner) {
    out[0] = w; /* world first, then blocked on the host */
    return 1;
  }
  if (r / j->tp != group) {
    x.state = FRZ_STATE_COMPLETED;
    out[0] = x;
    out[1] = w;
    return 2;
  }
  x.state = FRZ_STATE_STARTED;
  out[0] = x;
  if (r == j->culprit) return 1;
  w.state = FRZ_STATE_ENQUEUED; /* behind the TP AllReduce on the stream */
  out[1] = w;
  return 2;
}

/* Comm rank of `r` in comm `which`, its size, and the peer's comm rank. */
static void comm_pos(const synth_job *j, int32_t r, int which, int32_t *rank, int32_t *size)
{
  int32_t t = r % j->tp, s = (r / j->tp) % j->pp, d = r / (j->tp * j->pp);
  switch (which) {
  case SYNTH_TP: *rank = t; *size = j->tp; break;
  case SYNTH_PP: *rank = s; *size = j->pp; break;
  case SYNTH_DP: *rank = d; *size = j->dp; break;
  default: *rank = r; *size = j->nranks; break;
  }
}

/* The record of call c, made by rank r as its stream entry i. */
static void fill_record(const synth_job *j, int32_t r, const call *c, uint64_t i, frz_record *o)
{
  uint64_t tau = SYNTH_T0_NS + c->step * SYNTH_STEP_NS + c->k * OP_GAP_NS; /* true time */
  uint64_t noise = mix(((uint64_t)r << 40) ^ (c->step << 8) ^ c->k);
  uint64_t off = (uint64_t)synth_host_offset_ns(r);
  memset(o, 0, sizeof *o);
  o->id = RECORDS_BEFORE + i;
  o->nccl_seq = UINT64_MAX; /* no profiler plugin */
  o->algo = FRZ_ALGO_UNKNOWN;
  o->proto = FRZ_PROTO_UNKNOWN;
  o->seq = c->seq;
  o->count = c->o.count;
  o->stream = UINT64_C(0x5600a000) + (c->o.comm == SYNTH_PP ? 0x100 : 0);
  o->call_site = UINT64_C(0x7f3a12000000) + 0x40 * c->k;
  o->t_enqueue_ns = tau + off + noise % JITTER_NS;
  o->tid = 4000 + (uint32_t)r;
  o->op = c->o.op;
  o->kind = (uint8_t)frz_op_kind(c->o.op);
  o->dtype = c->o.dtype;
  o->redop = c->o.redop;
  o->state = c->state;
  o->peer = c->o.root;
  o->result = 0;
  o->comm_rank = -1;
  o->cuda_device = FRZ_CUDA_DEVICE_UNKNOWN;
  if (c->o.comm != NOCOMM) {
    int32_t cr, size;
    comm_pos(j, r, c->o.comm, &cr, &size);
    o->comm_id = synth_comm_id(j, r, c->o.comm);
    o->comm_rank = cr;
    o->cuda_device = (uint8_t)(r % SYNTH_RANKS_PER_HOST);
  }
  if (c->k < 8 && (c->k < 3 || c->k >= 5)) { /* the two groups of a step */
    o->group_id = 2 * c->step + 1 + (c->k >= 5);
    o->flags |= FRZ_RF_IN_GROUP;
  }
  if (c->o.op == FRZ_OP_Send || c->o.op == FRZ_OP_Recv) {
    int32_t s, pp;
    comm_pos(j, r, SYNTH_PP, &s, &pp);
    o->dir = c->o.op == FRZ_OP_Send ? FRZ_DIR_SEND : FRZ_DIR_RECV;
    o->peer = c->o.op == FRZ_OP_Send ? (s + 1) % pp : (s + pp - 1) % pp;
  }
  if (c->state != FRZ_STATE_ENQUEUED) o->t_start_ns = o->t_enqueue_ns + START_NS;
  if (c->state == FRZ_STATE_COMPLETED)
    o->t_complete_ns = tau + off + JITTER_NS + START_NS + c->o.dur_ns;
}

/* Comm counters from the rank's stream: its retained records rec[0..n),
 * and `dropped` records of each comm before them. */
static void fill_comms(const synth_job *j, int32_t r, synth_rank *out, const uint64_t *dropped)
{
  for (int w = 0; w < 4; w++) {
    frz_comm *c = &out->comms[w];
    memset(c, 0, sizeof *c);
    c->comm_id = synth_comm_id(j, r, w);
    comm_pos(j, r, w, &c->rank, &c->nranks);
    c->handle = UINT64_C(0x55d0c0000000) + 0x1000 * (uint64_t)w;
    c->cuda_device = r % SYNTH_RANKS_PER_HOST;
    c->split_color = c->split_key = -1;
    c->nccl_comm_hash = mix(c->comm_id);
    if (w != SYNTH_WORLD) {
      c->parent_id = synth_comm_id(j, r, SYNTH_WORLD);
      c->flags = FRZ_CF_SPLIT;
      c->split_key = r;
      c->split_color = (int32_t)(c->comm_id & 0xffffff);
    }
    c->last_enqueued_seq = c->last_started_seq = c->last_completed_seq = -1;
    c->first_retained_seq = UINT64_MAX;
    c->dropped_records = dropped[w];
    int done = 1; /* every seq so far completed */
    for (uint32_t i = 0; i < out->nrec; i++) {
      const frz_record *x = &out->rec[i];
      if (x->comm_id != c->comm_id || x->kind != FRZ_KIND_COLL) continue;
      if (c->first_retained_seq == UINT64_MAX) c->first_retained_seq = x->seq;
      c->last_enqueued_seq = (int64_t)x->seq;
      if (x->state != FRZ_STATE_ENQUEUED) c->last_started_seq = (int64_t)x->seq;
      if (x->state != FRZ_STATE_COMPLETED) done = 0;
      if (done) c->last_completed_seq = (int64_t)x->seq;
    }
    c->next_seq = (uint64_t)(c->last_enqueued_seq + 1);
    if (c->first_retained_seq == UINT64_MAX) c->first_retained_seq = c->next_seq;
  }
}

int synth_rank_build(const synth_job *j, int32_t r, synth_rank *out)
{
  memset(out, 0, sizeof *out);
  call t[TAIL_MAX];
  uint32_t nt = tail(j, r, t);
  uint64_t nreg = j->full_steps * OPS_PER_STEP + HUNG_AT;
  uint64_t len = nreg + nt;
  uint64_t first = len > j->records ? len - j->records : 0;
  out->nrec = (uint32_t)(len - first);
  out->rec = malloc((size_t)out->nrec * sizeof *out->rec);
  if (!out->rec) return -1;
  uint64_t dropped[4] = {0, 0, 0, 0};
  for (uint64_t i = 0; i < first; i++) {
    uint8_t cm = step_ops[i % OPS_PER_STEP].comm; /* first < nreg: regular calls */
    if (cm != NOCOMM) dropped[cm]++;
  }
  for (uint64_t i = first; i < len; i++) {
    call c = i < nreg ? regular(i / OPS_PER_STEP, (uint32_t)(i % OPS_PER_STEP)) : t[i - nreg];
    fill_record(j, r, &c, i, &out->rec[i - first]);
  }
  out->ncomms = 4;
  fill_comms(j, r, out, dropped);

  frz_process *p = &out->proc;
  memset(p, 0, sizeof *p);
  p->global_rank = r;
  p->world_size = j->nranks;
  p->local_rank = r % SYNTH_RANKS_PER_HOST;
  p->pid = 10000 + (uint32_t)r;
  synth_host(r, p->host, sizeof p->host);
  memcpy(p->job_id, j->job_id, sizeof p->job_id);
  p->nccl_version = 22809;
  p->recorder_version = 100;
  int64_t off = synth_host_offset_ns(r);
  p->anchor_monotonic_ns = SYNTH_T0_NS + (uint64_t)off;
  p->anchor_realtime_ns = SYNTH_REAL0_NS;
  uint64_t hang = SYNTH_T0_NS + j->full_steps * SYNTH_STEP_NS + HUNG_AT * OP_GAP_NS;
  p->trigger_time_ns = hang + HANG_WAIT_NS + (uint64_t)off;
  p->frame_time_ns = p->trigger_time_ns + 100000000;
  int32_t first_waiting = j->culprit == 0 ? 1 : 0;
  p->trigger = r == first_waiting ? FRZ_TRIGGER_TIMEOUT : FRZ_TRIGGER_FILE;
  p->trigger_rank = r == first_waiting ? -1 : first_waiting;
  p->records_total = RECORDS_BEFORE + len;
  p->records_dropped = p->records_total - out->nrec;
  p->ring_capacity = j->records;
  snprintf(p->trigger_text, sizeof p->trigger_text, "seq %llu AllReduce waited 600 s",
           (unsigned long long)(j->full_steps * WORLD_PER_STEP));
  return 0;
}

void synth_rank_free(synth_rank *r)
{
  free(r->rec);
  memset(r, 0, sizeof *r);
}
