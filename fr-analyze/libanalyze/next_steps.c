/* next_steps.c — what to do after the verdict (explain.h): for each
 * culprit, where its process ran (host, pid, GPU) and the concrete step
 * its state calls for; then the steps about the data (ranks without a
 * dump, dumps not given, PyTorch dumps without entries).  The kinds are
 * fr-analyze(1)'s WHAT TO DO. */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "explain.h"
#include "internal.h"
#include "summary.h"

/* At most this many culprits get steps of their own (the JSON's
 * root_causes lists every one). */
#define MAX_CULPRITS 4

void fa_rank_place(const fa_analysis *a, int32_t g, int32_t comm, fa_place *p)
{
  memset(p, 0, sizeof *p);
  p->rank = g;
  p->gpu = -1;
  int32_t k = fa_find_rank(a, g);
  if (k >= 0) {
    const fa_frame *f = fa_rank_latest(a, &a->ranks[k]);
    const frz_dump *d = &f->dump;
    p->file = f->name;
    p->pytorch = d->pt != NULL;
    p->python = p->pytorch || d->npyframes > 0;
    if (!p->pytorch) { /* (PyTorch's dump names neither) */
      snprintf(p->host, sizeof p->host, "%s", d->process.host);
      p->pid = d->process.pid;
      p->from_dump = p->pid != 0 || p->host[0];
    }
    for (uint32_t i = 0; i < d->ncomms && p->gpu < 0; i++)
      if (comm < 0 || d->comms[i].comm_id == a->comms[comm].id) p->gpu = d->comms[i].cuda_device;
    if (p->gpu < 0 && comm >= 0) /* not in that comm: its first device */
      for (uint32_t i = 0; i < d->ncomms && p->gpu < 0; i++) p->gpu = d->comms[i].cuda_device;
    return;
  }
  const frz_alive *x = fa_alive_of(a, g);
  if (x) {
    snprintf(p->host, sizeof p->host, "%s", x->host);
    p->pid = x->pid;
    p->from_announcement = 1;
  }
}

/* ---- building the list ------------------------------------------------------------- */

typedef struct steps {
  fa_next_step *v;
  uint32_t n, cap;
  int oom;
} steps;

static char *dup_or_null(const char *s, int *oom)
{
  if (!s) return NULL;
  char *d = fa_strdup(s);
  if (!d) *oom = 1;
  return d;
}

/* Adds one step; text and command are printf'd by the caller. */
static void add_step(steps *s, const char *kind, const fa_place *where, const char *text, const char *cmd,
                     const char *host)
{
  if (s->oom) return;
  if (fa_grow(&s->v, &s->cap, s->n + 1, sizeof *s->v)) {
    s->oom = 1;
    return;
  }
  fa_next_step *x = &s->v[s->n++];
  memset(x, 0, sizeof *x);
  x->kind = kind;
  x->rank = where ? where->rank : -1;
  if (where) x->where = *where;
  x->text = dup_or_null(text, &s->oom);
  x->command = dup_or_null(cmd, &s->oom);
  x->host = host && host[0] ? dup_or_null(host, &s->oom) : NULL;
}

/* The directory the commands name. */
static void dump_dir(const fa_analysis *a, const char *dir, char *buf, size_t len)
{
  const char *f = dir ? dir : a->nframes ? a->frames[0].name : a->nproblems ? a->problems[0].file : NULL;
  if (!f) {
    snprintf(buf, len, "DIR");
    return;
  }
  struct stat st;
  if (dir || (stat(f, &st) == 0 && S_ISDIR(st.st_mode))) {
    fa_sanitize(f, buf, len);
    return;
  }
  const char *slash = strrchr(f, '/');
  char tmp[1024];
  if (!slash) snprintf(tmp, sizeof tmp, ".");
  else snprintf(tmp, sizeof tmp, "%.*s", (int)(slash - f) + (slash == f), f);
  fa_sanitize(tmp, buf, len);
}

/* Is member m of comm c global rank g?  The member, or NULL. */
static const fa_member *member_of(const fa_comm *c, int32_t g)
{
  for (int32_t q = 0; c && q < c->size; q++)
    if (c->members[q].global_rank == g) return &c->members[q];
  return NULL;
}

/* The command that shows where process p is now. */
static void stack_cmd(const fa_place *p, char *buf, size_t len)
{
  char pid[16] = "PID"; /* (unknown: the step before says where to find it) */
  if (p->pid) snprintf(pid, sizeof pid, "%u", p->pid);
  if (p->python) snprintf(buf, len, "py-spy dump --pid %s", pid);
  else snprintf(buf, len, "gdb -p %s -batch -ex 'thread apply all bt'", pid);
}

/* "pid 4242 on host node03" or what is known of it. */
static const char *where_phrase(const fa_place *p, char *buf, size_t len)
{
  char h[FRZ_HOST_MAX * 4];
  if (p->pid && p->host[0])
    snprintf(buf, len, "pid %u on host %s", p->pid, fa_sanitize(p->host, h, sizeof h));
  else if (p->host[0]) snprintf(buf, len, "host %s", fa_sanitize(p->host, h, sizeof h));
  else if (p->pid) snprintf(buf, len, "pid %u", p->pid);
  else snprintf(buf, len, "host and pid unknown");
  return buf;
}

/* The steps for one culprit. */
/* The comm whose first divergence global rank g is the culprit of (its
 * group the minority); -1 none. */
static int32_t culprit_comm(const fa_analysis *a, int32_t g)
{
  for (uint32_t ci = 0; ci < a->ncomms; ci++) {
    const fa_comm *c = &a->comms[ci];
    if (!c->has_mismatch || c->mismatch.culprit < 0) continue;
    const fa_group *gr = &c->mismatch.groups[c->mismatch.culprit];
    for (uint32_t i = 0; i < gr->n; i++)
      if (fa_global_of(c, c->mismatch.members[gr->first + i]) == g) return (int32_t)ci;
  }
  return -1;
}

static void culprit_steps(steps *s, const fa_analysis *a, const fa_root *w, const char *dir)
{
  const fa_verdict *v = &a->verdict;
  const fa_comm *c = w->comm >= 0 ? &a->comms[w->comm] : NULL;
  const fa_member *m = member_of(c, w->rank);
  if (w->state == FA_MEMBER_NO_DUMP && fa_ranks_has(&a->beside, w->rank)) return; /* (data_steps) */
  fa_place p;
  fa_rank_place(a, w->rank, w->comm, &p);
  char text[768], cmd[1200], op[160] = "the op the others wait in", wh[160];
  if (c && w->state != FA_MEMBER_IDLE) op_phrase(a, c, w->seq, op, sizeof op);
  where_phrase(&p, wh, sizeof wh);
  int known = p.pid != 0;
  if (p.pytorch) { /* first: the other steps need its host */
    char f[512];
    snprintf(text, sizeof text,
             "PyTorch's dump (%s) names no host, pid or GPU: find rank %d's node first (srun -l prefixes "
             "each line of the job's log with the rank; torchrun numbers ranks node by node, so the "
             "node is rank / nproc-per-node), then its pid there (ps, nvidia-smi)",
             p.file ? fa_sanitize(p.file, f, sizeof f) : "?", w->rank);
    add_step(s, "inputs", &p, text, NULL, NULL);
  }
  /* the comm whose first divergence it is the culprit of (where it waits now may be later) */
  int32_t mc = culprit_comm(a, w->rank);
  int mismatch = mc >= 0;
  unsigned how = mismatch ? a->comms[mc].mismatch.fields : 0;
  char mop[160] = "";
  if (mismatch) op_phrase(a, &a->comms[mc], a->comms[mc].mismatch.seq, mop, sizeof mop);
  const frz_record *at = m && m->rank >= 0 && w->state == FA_MEMBER_LAGGING ? fa_member_record(a, m, w->seq) : NULL;
  char res[32];
  if (mismatch && (how & (FA_FIELD_ALGO | FA_FIELD_PROTO)) && !(how & ~(unsigned)(FA_FIELD_ALGO | FA_FIELD_PROTO))) {
    snprintf(text, sizeof text,
             "rank %d ran %s with another NCCL algorithm or protocol than the others: compare "
             "NCCL_ALGO, NCCL_PROTO, the NCCL version and any tuner plugin on its host with the "
             "others'", w->rank, mop);
    add_step(s, "config", &p, text, "env | grep '^NCCL_'; ldconfig -p | grep libnccl", p.host);
  } else if (w->rank == v->p2p_hub) {
    snprintf(text, sizeof text,
             "rank %d's sends and receives disagree with its peers' (every transfer left without a "
             "counterpart touches it): check how it computes its all-to-all-v split sizes",
             w->rank);
    snprintf(cmd, sizeof cmd, "fr-dump %s", p.file ? p.file : dir);
    add_step(s, "code", &p, text, p.file ? cmd : NULL, NULL);
  } else if (m && m->failed_seq >= 0 && w->state == FA_MEMBER_LAGGING) {
    nccl_result_phrase(m->failed_result, res, sizeof res);
    snprintf(text, sizeof text,
             "rank %d's %s failed (%s) and it never took part: read its log for NCCL's WARN line "
             "(rerun with NCCL_DEBUG=INFO) and the error behind it (out of memory, a bad device)",
             w->rank, m->failed_seq == 0 ? "creation of the comm" : op, m->failed_result > 0 ? res : "an error");
    add_step(s, "nccl-error", &p, text, "dmesg -T | grep -i -e xid -e nvrm", p.host);
  } else if (w->state == FA_MEMBER_UNFINISHED && m && m->not_returned) {
    snprintf(text, sizeof text,
             "rank %d's call of %s never returned: take its native stack to see where it is stuck "
             "inside NCCL (%s)", w->rank, op, wh);
    snprintf(cmd, sizeof cmd, "gdb -p %u -batch -ex 'thread apply all bt'", p.pid);
    add_step(s, "stack", &p, text, known ? cmd : NULL, p.host);
  } else if (m && (m->not_run || (at && (at->flags & FRZ_RF_GROUP_OPEN)))) {
    snprintf(text, sizeof text,
             m->not_run ? "rank %d captured its call into a CUDA graph that never launched, where the "
                          "others called it eagerly: find the capture or replay path that differs"
                        : "rank %d issued %s in an NCCL group it never ended (ncclGroupStart without "
                          "ncclGroupEnd): find the early return or exception inside the group",
             w->rank, op);
    stack_cmd(&p, cmd, sizeof cmd);
    add_step(s, "code", &p, text, known ? cmd : NULL, p.host);
  } else if (mismatch) {
    char fields[96];
    fa_field_names(how, fields, sizeof fields);
    if (how & FA_FIELD_OP)
      snprintf(text, sizeof text,
               "rank %d called another op than the others at %s: find the code path that differs "
               "(its records and their call sites are in its dump)", w->rank, mop);
    else
      snprintf(text, sizeof text,
               "rank %d called %s with another %s than the others: find where it computes them "
               "(its records and their call sites are in its dump)", w->rank, mop, fields);
    snprintf(cmd, sizeof cmd, "fr-dump %s", p.file ? p.file : dir);
    add_step(s, "code", &p, text, p.file ? cmd : NULL, NULL);
  } else if (w->rank == v->astray || fa_ranks_has(&v->left_out_too, w->rank)) {
    snprintf(text, sizeof text,
             "rank %d changed the order of its calls (its rounds say so): find the branch that "
             "skips or reorders a call; see where it is now on %s", w->rank, wh);
    stack_cmd(&p, cmd, sizeof cmd);
    add_step(s, "code", &p, text, known ? cmd : NULL, p.host);
  } else if (fa_ranks_has(&v->late, w->rank)) {
    snprintf(text, sizeof text,
             "rank %d entered %s after the others had given up on it: see why it was slow (its "
             "stack, its log) or raise the watchdog's timeout", w->rank, op);
    add_step(s, "timeout", &p, text, NULL, NULL);
  } else if (w->state == FA_MEMBER_UNFINISHED && m && m->async_error) {
    snprintf(text, sizeof text,
             "NCCL reported an asynchronous error on rank %d's comm with %s in flight: read its log "
             "(NCCL WARN lines) and the kernel log on %s for NIC or GPU errors", w->rank, op, wh);
    add_step(s, "nccl-error", &p, text, "dmesg -T | grep -i -e xid -e mlx5 -e nvrm", p.host);
  } else if (w->state == FA_MEMBER_UNFINISHED) {
    if (p.gpu >= 0)
      snprintf(text, sizeof text,
               "rank %d's GPU work never finished (%s, GPU %d): check that GPU for Xid errors in "
               "the kernel log, then its state", w->rank, wh, p.gpu);
    else
      snprintf(text, sizeof text,
               "rank %d's GPU work never finished (%s): check its GPU for Xid errors in the kernel "
               "log, then its state", w->rank, wh);
    add_step(s, "gpu", &p, text, "dmesg -T | grep -i xid", p.host);
    if (p.gpu >= 0) snprintf(cmd, sizeof cmd, "nvidia-smi -q -i %d -d ECC,PERFORMANCE", p.gpu);
    else snprintf(cmd, sizeof cmd, "nvidia-smi -q -d ECC,PERFORMANCE");
    add_step(s, "gpu", &p, "the GPU's errors and throttling", cmd, p.host);
  } else if (w->state == FA_MEMBER_LAGGING && m && m->gone) {
    snprintf(text, sizeof text,
             "rank %d's process ended with %s in flight: read its log and exit status, and the "
             "kernel log on %s (the OOM killer?)", w->rank, op, wh);
    add_step(s, "process-end", &p, text, "dmesg -T | grep -i -e 'killed process' -e oom", p.host);
  } else if (w->state == FA_MEMBER_LAGGING && m && m->left) {
    snprintf(text, sizeof text,
             "rank %d tore its comm down while the others wait in %s: find in its log why it "
             "gave up (an exception before the teardown?)", w->rank, op);
    add_step(s, "teardown", &p, text, NULL, NULL);
  } else if (w->state == FA_MEMBER_NO_DUMP) {
    if (p.from_announcement)
      snprintf(text, sizeof text,
               "rank %d left no dump; it was running as %s: check whether that process still "
               "runs, and read its log", w->rank, wh);
    else
      snprintf(text, sizeof text,
               "rank %d left no dump and no announcement: find it in the launcher's log (did it "
               "start? did it die?)", w->rank);
    snprintf(cmd, sizeof cmd, "ps -o pid,stat,etime,cmd -p %u", p.pid);
    add_step(s, "no-dump", &p, text, p.from_announcement && p.pid ? cmd : NULL, p.host);
    if (p.from_announcement)
      add_step(s, "process-end", &p, "if it is gone: the kernel log (the OOM killer?)",
               "dmesg -T | grep -i -e 'killed process' -e oom", p.host);
  } else if (w->state == FA_MEMBER_AHEAD) {
    snprintf(text, sizeof text,
             "rank %d went on alone past the point where every other member is done (%s, which no "
             "other member called): find the extra call, or why the others stopped (%s)", w->rank, op, wh);
    stack_cmd(&p, cmd, sizeof cmd);
    add_step(s, "code", &p, text, known ? cmd : NULL, p.host);
  } else {
    /* alive, never entered (or never posted its p2p op): where is it? */
    snprintf(text, sizeof text, "rank %d never entered %s: see where it is now (%s)", w->rank,
             w->state == FA_MEMBER_IDLE ? "the p2p op its peer waits for" : op, wh);
    stack_cmd(&p, cmd, sizeof cmd);
    add_step(s, "stack", &p, text, cmd, p.host);
  }
}

/* Ranks named in a's files beside the inputs, or announced alive: said. */
static void data_steps(steps *s, const fa_analysis *a, const char *dir)
{
  char text[768], cmd[1200], p[200];
  if (a->beside.n) {
    snprintf(text, sizeof text,
             "the dumps of %s lie beside the input, not given: analyse the whole directory",
             ranks_phrase(&a->beside, p, sizeof p));
    snprintf(cmd, sizeof cmd, "fr-analyze %s", a->beside_dir ? a->beside_dir : dir);
    add_step(s, "inputs", NULL, text, cmd, NULL);
    return;
  }
  fa_ranks yes = {NULL, 0}, no = {NULL, 0};
  if (a->ranks_missing.n && fa_alive_split(a, &a->ranks_missing, &yes, &no)) {
    s->oom = 1;
    return;
  }
  if (yes.n) {
    snprintf(text, sizeof text,
             "%s announced %s running and left no dump: while the job is alive, ask every "
             "rank to dump, then analyse again", ranks_phrase(&yes, p, sizeof p),
             yes.n == 1 ? "itself" : "themselves");
    snprintf(cmd, sizeof cmd, "fr-dump --trigger %s", dir);
    add_step(s, "trigger", NULL, text, cmd, NULL);
  }
  fa_ranks_free(&yes);
  fa_ranks_free(&no);
}

/* PyTorch dumps whose counters or completions cannot be read: dump with
 * the entries. */
static void redump_step(steps *s, const fa_analysis *a)
{
  for (uint32_t i = 0; i < a->ncomms; i++) {
    const fa_comm *c = &a->comms[i];
    if (!c->pt) continue;
    if (!fa_counters_unknown(a, c) && c->unknown_from < 0 && (c->tracked || c->seq_hi < 0)) continue;
    add_step(s, "redump", NULL,
             "re-dump with every entry: PyTorch's Flight Recorder keeps entries when "
             "TORCH_NCCL_TRACE_BUFFER_SIZE is above 0 (e.g. 2000), and its dump on timeout "
             "holds them (TORCH_NCCL_DUMP_ON_TIMEOUT=1)", NULL, NULL);
    return;
  }
}

/* The steps of an announcement-only directory: who was alive. */
static void alive_only_steps(steps *s, const fa_analysis *a, const char *dir)
{
  char text[512], cmd[1200], h[FRZ_HOST_MAX * 4];
  uint32_t shown = 0;
  for (uint32_t i = 0; i < a->nalive; i++) {
    const frz_alive *x = &a->alive[i];
    if (shown++ == MAX_CULPRITS) break;
    fa_place p;
    memset(&p, 0, sizeof p);
    p.rank = x->global_rank;
    p.gpu = -1;
    p.pid = x->pid;
    p.from_announcement = 1;
    snprintf(p.host, sizeof p.host, "%s", x->host);
    snprintf(text, sizeof text, "rank %d was running as pid %u on host %s: see where it is now",
             x->global_rank, x->pid, fa_sanitize(x->host[0] ? x->host : "?", h, sizeof h));
    snprintf(cmd, sizeof cmd, "py-spy dump --pid %u", x->pid);
    add_step(s, "stack", &p, text, cmd, x->host);
  }
  snprintf(text, sizeof text,
           "the directory holds announcements only: no rank has dumped there; while the job is "
           "alive, ask every rank to dump");
  snprintf(cmd, sizeof cmd, "fr-dump --trigger %s", dir);
  add_step(s, "trigger", NULL, text, cmd, NULL);
}

int fa_next_steps(const fa_analysis *a, const char *dir, fa_next_step **out, uint32_t *n)
{
  steps s = {NULL, 0, 0, 0};
  char d[1024], text[768], cmd[1200], h1[FRZ_HOST_MAX * 4], h2[FRZ_HOST_MAX * 4], p1[200];
  const fa_verdict *v = &a->verdict;
  dump_dir(a, dir, d, sizeof d);
  *out = NULL;
  *n = 0;
  if (!a->nframes && a->nalive) {
    alive_only_steps(&s, a, d);
    goto done;
  }
  switch (v->status) {
  case FA_STATUS_HANG:
  case FA_STATUS_MISMATCH:
  case FA_STATUS_DEADLOCK:
    for (uint32_t i = 0; i < v->root_cause.n && i < MAX_CULPRITS; i++) culprit_steps(&s, a, &v->roots[i], d);
    if (v->root_cause.n > MAX_CULPRITS) {
      snprintf(text, sizeof text, "%u more culprits: each with its state in the JSON report",
               v->root_cause.n - MAX_CULPRITS);
      snprintf(cmd, sizeof cmd, "fr-analyze --json %s", d);
      add_step(&s, "inputs", NULL, text, cmd, NULL);
    }
    if (!v->root_cause.n && v->mismatch_comm >= 0) { /* calls that differ, no minority */
      unsigned f = a->comms[v->mismatch_comm].mismatch.fields;
      if ((f & (FA_FIELD_ALGO | FA_FIELD_PROTO)) && !(f & ~(unsigned)(FA_FIELD_ALGO | FA_FIELD_PROTO)))
        add_step(&s, "config", NULL,
                 "the members ran one op with different NCCL algorithms or protocols and no side is a "
                 "minority: compare NCCL_ALGO, NCCL_PROTO, the NCCL version and any tuner plugin "
                 "across the hosts of the groups above", "env | grep '^NCCL_'; ldconfig -p | grep libnccl",
                 NULL);
      else
        add_step(&s, "code", NULL,
                 "the members called one op with different arguments and no side is a minority: find "
                 "where the groups above take different code paths (their dumps hold the call sites)",
                 NULL, NULL);
    }
    if (!v->root_cause.n && v->mismatch_comm < 0) { /* nobody to blame: the device or network side */
      const fa_link *l = NULL;
      for (uint32_t i = 0; i < v->nlinks && !l; i++)
        if (v->links[i].evidence || (v->links[i].p2p && v->links[i].joined)) l = &v->links[i];
      if (l) {
        fa_place ps, pd;
        fa_rank_place(a, l->src, l->comm, &ps);
        fa_rank_place(a, l->dst, l->comm, &pd);
        char ends[64];
        snprintf(text, sizeof text,
                 "link %s%s stopped moving data: check the network path between host %s "
                 "(rank %d) and host %s (rank %d): its NICs' state and the kernel logs",
                 fa_link_ends(l, "->", ends, sizeof ends), l->channel >= 0 ? "" : "",
                 fa_sanitize(ps.host[0] ? ps.host : "?", h1, sizeof h1), l->src,
                 fa_sanitize(pd.host[0] ? pd.host : "?", h2, sizeof h2), l->dst);
        add_step(&s, "network", &ps, text, "ibstat; dmesg -T | grep -i -e mlx5 -e xid", ps.host);
        if (strcmp(ps.host, pd.host))
          add_step(&s, "network", &pd, "the same on the other end",
                   "ibstat; dmesg -T | grep -i -e mlx5 -e xid", pd.host);
      } else if (v->all_joined || (v->comm >= 0 && a->comms[v->comm].stuck)) {
        add_step(&s, "gpu", NULL,
                 "every member joined and nothing completes: check the GPUs and NICs of the "
                 "comm's hosts for errors (Xid, link down); NCCL_DEBUG=INFO on a rerun names "
                 "the transport", "dmesg -T | grep -i -e xid -e mlx5", NULL);
      }
    }
    break;
  case FA_STATUS_STRAGGLER:
    for (uint32_t i = 0; i < v->nstragglers && i < MAX_CULPRITS; i++) {
      fa_place p;
      fa_rank_place(a, v->stragglers[i].rank, -1, &p);
      snprintf(text, sizeof text,
               "rank %d is late at %u of %u ops (%s): check its GPU's clocks and throttling, and "
               "what else runs there", p.rank, v->stragglers[i].late_ops, v->stragglers[i].ops,
               where_phrase(&p, h1, sizeof h1));
      if (p.gpu >= 0) snprintf(cmd, sizeof cmd, "nvidia-smi -q -i %d -d PERFORMANCE,CLOCK", p.gpu);
      else snprintf(cmd, sizeof cmd, "nvidia-smi -q -d PERFORMANCE,CLOCK");
      add_step(&s, "node", &p, text, cmd, p.host);
    }
    snprintf(cmd, sizeof cmd, "fr-analyze --exclude-list %s", d);
    add_step(&s, "evict", NULL, "the ranks an orchestrator could leave out, one a line", cmd, NULL);
    break;
  case FA_STATUS_HEALTHY:
    add_step(&s, "none", NULL,
             "nothing is stuck in these dumps; if the job still seems stuck, dump it again "
             "while it runs and compare", NULL, NULL);
    break;
  case FA_STATUS_INCONCLUSIVE:
    if (!a->nframes) {
      add_step(&s, "inputs", NULL,
               "no usable dump: check that the path is the job's dump directory (FR_DUMP_DIR) "
               "and the input problems below", NULL, NULL);
    } else if (a->conflict_rank >= 0) {
      snprintf(text, sizeof text,
               "two dumps claim rank %d: put each run's dumps in a directory of its own and "
               "analyse one run", a->conflict_rank);
      add_step(&s, "inputs", NULL, text, NULL, NULL);
    } else if (a->ranks_missing.n && !a->beside.n && !fa_alive_any(a)) {
      snprintf(text, sizeof text,
               "%s left no dump: give their dumps too, or, if the job still runs, ask every "
               "rank to dump", ranks_phrase(&a->ranks_missing, p1, sizeof p1));
      snprintf(cmd, sizeof cmd, "fr-dump --trigger %s", d);
      add_step(&s, "trigger", NULL, text, cmd, NULL);
    }
    break;
  }
  data_steps(&s, a, d);
  redump_step(&s, a);
done:
  if (s.oom) {
    fa_next_steps_free(s.v, s.n);
    return -1;
  }
  *out = s.v;
  *n = s.n;
  return 0;
}

void fa_next_steps_free(fa_next_step *s, uint32_t n)
{
  for (uint32_t i = 0; s && i < n; i++) {
    free(s[i].text);
    free(s[i].command);
    free(s[i].host);
  }
  free(s);
}
