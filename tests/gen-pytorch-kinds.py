#!/usr/bin/env python3
"""gen-pytorch-kinds.py — write PyTorch Flight Recorder dumps of the kinds of
situation real jobs dump (cases k1 ... k9), for flightrec's importer tests.

    tests/gen-pytorch-kinds.py OUTDIR      # writes OUTDIR/k1-pgid-healthy ...

Unlike tests/gen-pytorch-fr.py (cases c1 ... c10, whose output is frozen),
this model follows what ProcessGroupNCCL and its Flight Recorder
(torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp, FlightRecorderDetail.hpp)
really write:

  - group names are a job-wide counter ("0" for the default group, then one
    per new_group call on every rank, gloo groups included), while pg_id is
    the process's own counter of the NCCL groups it is a member of (0, 1, ...
    in creation order): the two differ, and pg_id differs between ranks;
  - pg_config (keyed by name, in std::map order) lists this process's NCCL
    groups; pg_status is keyed by str(pg_id) and lists only the groups that
    recorded at least one entry; its counters are the seq of the last work:
    the collective seq for collectives, the group's p2p counter for p2p
    works (last_started_collective stays -1 without timing);
  - collective_seq_id starts at 1 per group; p2p_seq_id counts the group's
    p2p ops from 1; a p2p entry carries the group's current collective seq;
  - coalesced groups (format >= 2.7): the members are recorded at the one
    seq of the group, without events (they stay "scheduled", never retired);
    the closing record ("nccl:ALLGATHER_coalesced",
    "nccl:REDUCE_SCATTER_coalesced", "nccl:coalesced" for p2p batches) holds
    the group's state;
  - without TORCH_NCCL_ENABLE_TIMING states are scheduled or completed and
    time_discovered_started_ns is None (0 in JSON); with it, started too;
  - the ring keeps the newest TORCH_NCCL_TRACE_BUFFER_SIZE entries;
    onlyActive dumps leave completed entries out; JSON dumps without
    collectives (or with nothing to list) have no "entries" key;
  - the JSON form: pg_status values as strings, lists for tuples, 0 for no
    time, no frames, keys sorted (nlohmann's std::map).

tests/fixtures/pytorch-fr/README.md says what each case shows and the
verdict expected; tests/e2e/pytorch-kinds.sh checks those verdicts and that
the committed fixtures are this script's output (it is deterministic).
"""
import json
import os
import pickle
import sys

T0 = 1796400000000000000  # wall clock, ns (as PyTorch records it)
STEP_NS = 3000000          # between one job-wide op and the next
DUR_NS = 400000            # how long a completed op ran
TIMEOUT_MS = 600000
C10D = "/usr/local/lib/python3.12/dist-packages/torch/distributed/distributed_c10d.py"
LOGGER = "/usr/local/lib/python3.12/dist-packages/torch/distributed/c10d_logger.py"


class PG:
    """One NCCL process group as one process sees it."""

    def __init__(self, name, desc, ranks, pg_id):
        self.name, self.desc, self.ranks, self.pg_id = name, desc, list(ranks), pg_id
        self.coll = 0      # seqCollective_
        self.p2p = 0       # seqP2P_
        self.op = 0        # op_id_
        self.recorded = False
        self.enq = self.started = self.done = -1  # pgStatus_


def shapes(x):
    """A list of shapes from an element count or a list of shapes."""
    if x is None:
        return []
    if isinstance(x, int):
        return [[x]]
    return [list(s) for s in x]


class Proc:
    """One process: its NCCL groups and its Flight Recorder ring."""

    def __init__(self, job, rank):
        self.job = job
        self.rank = rank
        self.pgs = {}
        self.records = []

    def _record(self, g, pname, ins, idt, outs, odt, p2p, state, t, events=True):
        g.recorded = True
        g.op += 1
        timing = self.job.timing
        if state == "started":
            assert timing, "a started state needs timing"
        if not events:
            state = "scheduled"
        created = t + self.rank * 1000
        started = created + 1000 if timing and state in ("started", "completed") else None
        completed = created + DUR_NS + self.rank * 500 if state == "completed" else None
        func = pname.split(":")[1].split()[0].lstrip("_")
        e = {
            "frames": [
                {"name": func, "filename": C10D, "line": 2900 + len(func) * 7},
                {"name": "wrapper", "filename": LOGGER, "line": 83},
                {"name": "train_step", "filename": "/workspace/train.py", "line": 120 + len(self.records) % 9},
            ],
            "record_id": len(self.records),
            "pg_id": g.pg_id,
            "process_group": (g.name, g.desc),
            "thread_name": "pt_main_thread",
            "thread_id": str(139900000000000 + self.rank * 4096),
            "collective_seq_id": g.coll,
            "p2p_seq_id": g.p2p,
            "op_id": g.op,
            "profiling_name": pname,
            "time_created_ns": created,
        }
        if timing and completed is not None:
            e["duration_ms"] = DUR_NS / 1e6
        e.update({
            "input_sizes": shapes(ins),
            "input_dtypes": [idt] * len(shapes(ins)),
            "output_sizes": shapes(outs),
            "output_dtypes": [odt] * len(shapes(outs)),
            "state": state,
            "time_discovered_started_ns": started,
            "time_discovered_completed_ns": completed,
            "retired": completed is not None,
            "timeout_ms": TIMEOUT_MS,
            "is_p2p": p2p,
        })
        self.records.append(e)

    def _work(self, g, seq, state):
        """pgStatus_ after a work of seq: enqueued now, then what the watchdog saw."""
        g.enq = seq
        if self.job.timing and state in ("started", "completed"):
            g.started = seq
        if state == "completed":
            g.done = seq

    def coll(self, name, op, ins, outs, idt, odt, state, t):
        g = self.pgs[name]
        g.coll += 1
        self._record(g, "nccl:" + op, ins, idt, outs, odt, False, state, t)
        self._work(g, g.coll, state)

    def p2p(self, name, op, peer, numel, dt, state, t):
        g = self.pgs[name]
        g.p2p += 1
        me = g.ranks.index(self.rank)
        pname = "nccl:%s %d%s%d" % (op, me, "->" if op == "send" else "<-", peer)
        self._record(g, pname, numel, dt, numel, dt, True, state, t)
        self._work(g, g.p2p, state)

    def coalesced(self, name, members, close, state, t, p2p=False, closing=None):
        """members: (op, ins, outs, dtype) or, for p2p, (op, peer, numel, dtype)."""
        g = self.pgs[name]
        if p2p:
            g.p2p += 1
        else:
            g.coll += 1
        me = g.ranks.index(self.rank) if p2p else None
        for m in members:
            if p2p:
                op, peer, n, dt = m
                pname = "nccl:%s %d%s%d" % (op, me, "->" if op == "send" else "<-", peer)
                self._record(g, pname, n, dt, n, dt, True, "scheduled", t, events=False)
            else:
                op, ins, outs, dt = m
                self._record(g, "nccl:" + op, ins, dt, outs, dt, False, "scheduled", t, events=False)
        g.op -= 1  # the closing record shares the last member's op_id
        ins, outs, dt = closing or (None, None, "Float")
        self._record(g, "nccl:" + close, ins, dt, outs, dt, p2p, state, t)
        self._work(g, g.p2p if p2p else g.coll, state)

    def document(self, as_json, only_active=False, ring=None, entries=True,
                 version=None, extra_top=None, extra_entry=None):
        version = version or self.job.version
        recs = self.records[-ring:] if ring else list(self.records)
        if only_active:
            recs = [e for e in recs if e["time_discovered_completed_ns"] is None]
        if extra_entry:
            recs = [dict(e, **extra_entry) for e in recs]
        byname = sorted(self.pgs.values(), key=lambda g: g.name)  # std::map<string>
        byid = sorted(self.pgs.values(), key=lambda g: g.pg_id)
        pg_config = {g.name: {"name": g.name, "desc": g.desc, "ranks": str(g.ranks)} for g in byname}
        status = {}
        for g in byid:
            if not g.recorded:
                continue
            s = {"last_enqueued_collective": g.enq, "last_started_collective": g.started,
                 "last_completed_collective": g.done}
            if as_json:
                s = {k: str(v) for k, v in s.items()}
            status[str(g.pg_id)] = s
        doc = {"version": version, "pg_config": pg_config, "comm_lib_version": "2.27.5",
               "pg_status": status}
        if as_json:
            out = []
            for e in recs:
                e = dict(e)
                del e["frames"]
                e["process_group"] = list(e["process_group"])
                for k in ("time_discovered_started_ns", "time_discovered_completed_ns"):
                    if e[k] is None:
                        e[k] = 0
                out.append(e)
            doc["nccl_comm_state"] = {}
            if entries and out:
                doc["entries"] = out
        elif entries:
            doc["entries"] = recs
        if extra_top:
            doc.update(extra_top)
        return doc


class Job:
    """A job: its ranks, its groups (names counted job-wide) and a clock."""

    def __init__(self, n, version="2.10", timing=False):
        self.n = n
        self.version = version
        self.timing = timing
        self.t = T0
        self.names = 0
        self.procs = [Proc(self, r) for r in range(n)]
        self.world = self.group(range(n), "default_pg")

    def group(self, ranks, desc="undefined", backend="nccl"):
        """new_group on every rank: a name for all, an NCCL group (and a
        pg_id) on the members only."""
        name = str(self.names)
        self.names += 1
        if backend == "nccl":
            for r in ranks:
                p = self.procs[r]
                p.pgs[name] = PG(name, desc, ranks, len(p.pgs))
        return name

    def gloo(self, count=1):
        """Gloo groups: names taken, nothing in NCCL's Flight Recorder."""
        for _ in range(count):
            self.group([], "gloo", backend="gloo")

    def members(self, name):
        for p in self.procs:
            if name in p.pgs:
                return p.pgs[name].ranks
        raise KeyError(name)

    def tick(self):
        self.t += STEP_NS
        return self.t

    def coll(self, name, op, ins, outs=None, dtype="BFloat16", odtype=None, state="completed",
             skip=(), over=None):
        """A collective on group `name`: every member but `skip` enqueues it;
        ins/outs are counts, shape lists or functions of the global rank;
        over[rank] overrides op/ins/outs/dtype/odtype/state for one rank."""
        t = self.tick()
        for r in self.members(name):
            if r in skip:
                continue
            a = {"op": op, "ins": ins, "outs": ins if outs is None else outs, "dtype": dtype,
                 "odtype": odtype or dtype, "state": state}
            a.update((over or {}).get(r, {}))
            f = lambda x: x(r) if callable(x) else x
            self.procs[r].coll(name, a["op"], f(a["ins"]), f(a["outs"]), a["dtype"], a["odtype"],
                               a["state"], t)

    def p2p(self, name, src, dst, numel, dtype="BFloat16", state="completed", rstate=None,
            rnumel=None, skip=()):
        """A send from global rank src to dst on group `name`, and its recv."""
        t = self.tick()
        ranks = self.members(name)
        gs, gd = ranks.index(src), ranks.index(dst)
        if src not in skip:
            self.procs[src].p2p(name, "send", gd, numel, dtype, state, t)
        if dst not in skip:
            self.procs[dst].p2p(name, "recv", gs, numel if rnumel is None else rnumel, dtype,
                                rstate or state, t)

    def coalesced(self, name, members, close, state="completed", skip=(), over=None, p2p=False,
                  closing=None):
        """A coalesced group: members(global rank) gives that rank's member
        list; over[rank] overrides state or members."""
        t = self.tick()
        for r in self.members(name):
            if r in skip:
                continue
            a = {"members": members, "state": state}
            a.update((over or {}).get(r, {}))
            self.procs[r].coalesced(name, a["members"](r), close, a["state"], t, p2p=p2p,
                                    closing=closing)


def write_case(out, case, job, form, name_fmt, **kw):
    d = os.path.join(out, case)
    os.makedirs(d, exist_ok=True)
    for p in job.procs:
        path = os.path.join(d, name_fmt % p.rank)
        if form == "json":
            with open(path, "w") as f:
                json.dump(p.document(True, **kw), f, sort_keys=True, separators=(",", ":"))
                f.write("\n")
        else:
            with open(path, "wb") as f:
                pickle.dump(p.document(False, **kw), f, protocol=2)


# ---- layouts ----------------------------------------------------------------

def layout_tp_dp(job):
    """8 ranks, Megatron style: TP 4 x DP 2, an embedding group of the first
    and last rank, an expert group that is never used, gloo twins in between.
    Names: world 0, embedding 2, TP 4 and 5, DP 10-13, EP 14; so rank 0 has
    pg_ids 0-4 = names 0, 2, 4, 10, 14 and rank 1 has 0-3 = 0, 4, 11, 14."""
    job.gloo()                                                  # 1
    emb = job.group([0, 7], "EMBEDDING_GROUP")                  # 2
    job.gloo()                                                  # 3
    tp = [job.group([0, 1, 2, 3], "TENSOR_MODEL_PARALLEL_GROUP"),  # 4
          job.group([4, 5, 6, 7], "TENSOR_MODEL_PARALLEL_GROUP")]  # 5
    job.gloo(4)                                                 # 6-9
    dp = [job.group([i, i + 4], "DATA_PARALLEL_GROUP") for i in range(4)]  # 10-13
    ep = job.group(range(8), "EXPERT_MODEL_PARALLEL_GROUP")     # 14, never used
    return emb, tp, dp, ep


def tp_step(job, tp, skip=(), pending=None):
    """One step's TP ops on group tp: 2 all-reduces, an all-gather, a
    reduce-scatter (4 seqs).  pending: (ranks, state) of the first op only,
    the others then not enqueued."""
    h = 1024
    if pending is not None:
        job.coll(tp, "all_reduce", [[4096, h]], skip=skip, state=pending)
        return
    job.coll(tp, "all_reduce", [[4096, h]])
    job.coll(tp, "all_reduce", [[4096, h]])
    job.coll(tp, "_all_gather_base", [[2048, h]], [[8192, h]])
    job.coll(tp, "_reduce_scatter_base", [[8192, h]], [[2048, h]])


def k1_run(job, steps, hang_step=None):
    emb, tp, dp, ep = layout_tp_dp(job)
    job.coll(job.world, "all_reduce_barrier", 1, dtype="Float")
    for step in range(1, steps + 1):
        if step == hang_step:
            # rank 3 never enters TP0's first all-reduce; ranks 4-7 finish
            # their TP part, then wait outside NCCL (a DP gloo collective)
            tp_step(job, tp[0], skip={3}, pending="scheduled")
            tp_step(job, tp[1])
            break
        for g in tp:
            tp_step(job, g)
        for g in dp:
            job.coll(g, "all_reduce", 16777216, dtype="Float")
        job.coll(emb, "all_reduce", [[50304, 1024]])
        if step % 10 == 0:
            job.coll(job.world, "all_reduce", 1, dtype="Float")


def k1_pgid_healthy(out):
    """Names differ from pg_ids (and pg_ids between ranks); the world's last
    op (seq 3) was pushed out of the 28-entry ring on ranks 0 and 7 (they
    record the embedding all-reduce too) but not on the others; the expert
    group never recorded anything (in pg_config only).  All completed."""
    job = Job(8)
    k1_run(job, 25)
    write_case(out, "k1-pgid-healthy", job, "pickle", "nccl_trace_rank_%d", ring=28)


def k1_pgid_hang(out):
    """The same layout; at step 25 rank 3 never enters TP0's all-reduce
    (seq 97) where ranks 0-2 wait; the other groups are idle."""
    job = Job(8, version="2.9")
    k1_run(job, 25, hang_step=25)
    write_case(out, "k1-pgid-hang", job, "pickle", "megatron-7b-node1.nccl_trace_rank_%d", ring=28)


# ---- coalesced groups -----------------------------------------------------------

PARTS = [4100, 3900, 4000, 4200]  # uneven shards of an FSDP flat parameter


def uneven_all_gather(parts):
    """allgather with uneven outputs: one _broadcast_oop per rank (root i),
    of part i, in one coalesced group closed by ALLGATHER_coalesced."""
    return lambda r: [("_broadcast_oop", p, p, "BFloat16") for p in parts]


def uneven_reduce_scatter(parts):
    """reduce_scatter with uneven inputs: one _reduce_oop per rank (root i)."""
    return lambda r: [("_reduce_oop", p, p, "BFloat16") for p in parts]


def fsdp_job(version="2.10", timing=False):
    job = Job(4, version=version, timing=timing)
    job.gloo()
    shard = job.group([0, 1, 2, 3], "FSDP_SHARD")  # name 2, pg_id 1
    job.coll(job.world, "all_reduce_barrier", 1, dtype="Float")
    return job, shard


def k2_coalesced_healthy(out):
    """Uneven all-gathers: 4 _broadcast_oop members of different sizes at one
    seq (scheduled forever), closing ALLGATHER_coalesced completed; then an
    all_gather-member group of different sizes; later ops completed."""
    job, shard = fsdp_job()
    for step in range(3):
        job.coll(shard, "all_reduce", 1024, dtype="Float")
        job.coalesced(shard, uneven_all_gather(PARTS), "ALLGATHER_coalesced")
        job.coalesced(shard, lambda r: [("all_gather", n, [[4, n]], "BFloat16") for n in (2048, 512, 96)],
                      "ALLGATHER_coalesced")
    job.coll(shard, "all_reduce", 1024, dtype="Float")
    job.coll(job.world, "all_reduce", 1, dtype="Float")
    write_case(out, "k2-coalesced-healthy", job, "pickle", "nccl_trace_rank_%d")


def k2_coalesced_rs_healthy(out):
    """Uneven reduce-scatters: _reduce_oop members, REDUCE_SCATTER_coalesced
    completed (JSON, 2.9)."""
    job, shard = fsdp_job(version="2.9")
    for step in range(3):
        job.coalesced(shard, uneven_all_gather(PARTS), "ALLGATHER_coalesced")
        job.coll(shard, "all_reduce", 1024, dtype="Float")
        job.coalesced(shard, uneven_reduce_scatter(PARTS), "REDUCE_SCATTER_coalesced")
    job.coll(job.world, "all_reduce", 1, dtype="Float")
    write_case(out, "k2-coalesced-rs-healthy", job, "json", "nccl_trace_rank_%d.json")


def k2_coalesced_hang(out):
    """Step 4's uneven all-gather (seq 8 of the shard group): ranks 0, 2, 3
    recorded its members and its closing record, scheduled; rank 1 never
    reached it."""
    job, shard = fsdp_job()
    for step in range(1, 5):
        job.coll(shard, "all_reduce", 1024, dtype="Float")
        if step == 4:
            job.coalesced(shard, uneven_all_gather(PARTS), "ALLGATHER_coalesced", state="scheduled",
                          skip={1})
            break
        job.coalesced(shard, uneven_all_gather(PARTS), "ALLGATHER_coalesced")
    write_case(out, "k2-coalesced-hang", job, "pickle", "fsdp-h100-node0.nccl_trace_rank_%d")


# ---- first op of a group ------------------------------------------------------------

def k3_first_pending(out):
    """A context-parallel group created late (name 3, pg_id 1): its first
    collective (seq 1, an all-gather) is scheduled on ranks 0, 1, 3; rank 2
    never called it.  The world is idle."""
    job = Job(4)
    for i in range(5):
        job.coll(job.world, "all_reduce", 1048576, dtype="Float")
    job.gloo(2)
    cp = job.group([0, 1, 2, 3], "CONTEXT_PARALLEL_GROUP")
    job.coll(cp, "_all_gather_base", [[1024, 128]], [[4096, 128]], state="scheduled", skip={2})
    write_case(out, "k3-first-pending", job, "pickle", "nccl_trace_rank_%d")


# ---- op names -------------------------------------------------------------------------

def k4_names(out):
    """Every op name PyTorch writes, once, with sensible sizes; all completed."""
    W, N = 4, 1024
    job = Job(4)
    job.gloo()
    pp = job.group([0, 1, 2, 3], "PIPELINE_MODEL_PARALLEL_GROUP")  # name 2, pg_id 1
    g = job.world
    vpart = lambda r: 1000 + 100 * r
    vsum = sum(vpart(r) for r in range(W))
    job.coll(g, "all_reduce_barrier", 1, dtype="Float")
    job.coll(g, "barrier", 1, dtype="Float")
    job.coll(g, "broadcast", N)
    job.coll(g, "reduce", N)
    job.coll(g, "all_reduce", N)
    job.coll(g, "all_gather", N, [[W, N]])
    job.coll(g, "all_gather_single", N, W * N)
    job.coll(g, "all_gather_v", lambda r: vpart(r), vsum)
    job.coll(g, "_all_gather_base", N, W * N)
    job.coll(g, "all_gather_into_tensor_coalesced", [[N], [2 * N]], [[W * N], [W * 2 * N]])
    job.coll(g, "reduce_scatter", [[W, N]], N)
    job.coll(g, "reduce_scatter_single", W * N, N)
    job.coll(g, "reduce_scatter_v", vsum, lambda r: vpart(r))
    job.coll(g, "reduce_scatter_tensor_coalesced", [[W * N], [W * 2 * N]], [[N], [2 * N]])
    job.coll(g, "_reduce_scatter_base", W * N, N)
    job.coll(g, "gather", N, lambda r: [[W, N]] if r == 0 else [])
    job.coll(g, "scatter", lambda r: [[W, N]] if r == 0 else [], N)
    job.coll(g, "all_to_all", [[N]] * W, [[N]] * W)
    job.coll(g, "all_to_all_single", W * N, W * N)
    a2a = [[100 * (1 + (i * 3 + j) % 4) for j in range(W)] for i in range(W)]  # a2a[i][j]: i sends j
    job.coll(g, "all_to_all_v_single", lambda r: sum(a2a[r]), lambda r: sum(a2a[i][r] for i in range(W)))
    job.coll(g, "split", None, None)
    job.coll(g, "new_window", N, N)
    job.coll(g, "allreduce_coalesced", [[N], [2 * N]], [[N], [2 * N]])
    job.coalesced(g, uneven_all_gather(PARTS), "ALLGATHER_coalesced")
    job.coalesced(g, uneven_reduce_scatter(PARTS), "REDUCE_SCATTER_coalesced")
    job.p2p(pp, 0, 1, N)
    job.p2p(pp, 2, 3, N)
    job.coalesced(pp, lambda r: [("send", (r + 1) % W, N, "BFloat16"), ("recv", (r - 1) % W, N, "BFloat16")],
                  "coalesced", p2p=True)
    job.coll(g, "all_reduce", 1, dtype="Float")
    write_case(out, "k4-names", job, "pickle", "nccl_trace_rank_%d")


def k4_unknown_mismatch(out):
    """Two op names PyTorch does not know at seq 4: nccl:foo_op on ranks 0-2,
    nccl:bar_op on rank 3, same sizes, scheduled (JSON)."""
    job = Job(4)
    for i in range(3):
        job.coll(job.world, "all_reduce", 4096)
    job.coll(job.world, "foo_op", 4096, state="scheduled", over={3: {"op": "bar_op"}})
    write_case(out, "k4-unknown-mismatch", job, "json", "nccl_trace_rank_%d.json")


# ---- all-to-all and the v collectives --------------------------------------------------

def splits(step, W, base=64):
    """Deterministic MoE routing: tokens rank i sends rank j at a step."""
    return [[base * (1 + (7 * i + 5 * j + 3 * step) % 5) for j in range(W)] for i in range(W)]


def ep_job(version="2.10"):
    job = Job(4, version=version)
    job.gloo()
    ep = job.group([0, 1, 2, 3], "EXPERT_MODEL_PARALLEL_GROUP")  # name 2, pg_id 1
    job.coll(job.world, "all_reduce_barrier", 1, dtype="Float")
    return job, ep


def k5_alltoall_healthy(out):
    """MoE dispatch/combine: all_to_all_single and all_to_all with per-rank
    sizes whose group totals agree; 4 steps, completed."""
    W, H = 4, 2048
    job, ep = ep_job()
    for step in range(4):
        a = splits(step, W)
        job.coll(ep, "all_to_all_single", lambda r: [[sum(a[r]), H]],
                 lambda r: [[sum(a[i][r] for i in range(W)), H]])
        job.coll(ep, "all_to_all", lambda r: [[a[i][r], H] for i in range(W)],
                 lambda r: [[a[r][j], H] for j in range(W)])
        job.coll(ep, "all_reduce", 8192, dtype="Float")
    job.coll(job.world, "all_reduce", 1, dtype="Float")
    write_case(out, "k5-alltoall-healthy", job, "pickle", "moe-node3.nccl_trace_rank_%d")


def k5_alltoall_v_healthy(out):
    """all_to_all_v_single, all_gather_v, reduce_scatter_v with per-rank
    sizes whose group totals agree; 3 steps, completed (JSON, 2.9)."""
    W, H = 4, 1024
    job, ep = ep_job(version="2.9")
    for step in range(3):
        a = splits(step, W, base=32)
        n = [sum(a[r]) for r in range(W)]
        job.coll(ep, "all_to_all_v_single", lambda r: [[sum(a[r]), H]],
                 lambda r: [[sum(a[i][r] for i in range(W)), H]])
        job.coll(ep, "all_gather_v", lambda r: [[n[r], H]], [[sum(n), H]])
        job.coll(ep, "reduce_scatter_v", [[sum(n), H]], lambda r: [[n[r], H]])
    job.coll(job.world, "all_reduce", 1, dtype="Float")
    write_case(out, "k5-alltoall-v-healthy", job, "json", "nccl_trace_rank_%d.json")


# ---- mismatches ---------------------------------------------------------------------------

def k6_coalesced_size_mismatch(out):
    """Step 3's uneven all-gather (seq 6): the second member is 3900 elements
    everywhere but on rank 2 (3800); the first member agrees; scheduled."""
    job, shard = fsdp_job()
    for step in range(1, 4):
        job.coll(shard, "all_reduce", 1024, dtype="Float")
        if step == 3:
            bad = [PARTS[0], 3800] + PARTS[2:]
            job.coalesced(shard, uneven_all_gather(PARTS), "ALLGATHER_coalesced", state="scheduled",
                          over={2: {"members": uneven_all_gather(bad)}})
            break
        job.coalesced(shard, uneven_all_gather(PARTS), "ALLGATHER_coalesced")
    write_case(out, "k6-coalesced-size-mismatch", job, "pickle", "nccl_trace_rank_%d")


def k6_output_mismatch(out):
    """An all_gather at seq 3 whose output is [4, 1024] but [3, 1024] on
    rank 1 (inputs equal); it and what follows completed."""
    job = Job(4)
    job.coll(job.world, "all_reduce", 1024)
    job.coll(job.world, "all_reduce", 1024)
    job.coll(job.world, "all_gather", 1024, [[4, 1024]], over={1: {"outs": [[3, 1024]]}})
    job.coll(job.world, "all_reduce", 1024)
    write_case(out, "k6-output-mismatch", job, "pickle", "nccl_trace_rank_%d")


def k6_dtype_out(out):
    """A reduce-scatter at seq 3: BFloat16 in, BFloat16 out, but Float out on
    rank 3; scheduled everywhere (JSON)."""
    job = Job(4)
    job.coll(job.world, "all_reduce", 1024)
    job.coll(job.world, "all_reduce", 1024)
    job.coll(job.world, "_reduce_scatter_base", 4096, 1024, state="scheduled",
             over={3: {"odtype": "Float"}})
    write_case(out, "k6-dtype-out", job, "json", "nccl_trace_rank_%d.json")


def k6_p2p_size(out):
    """Pipeline groups [0, 1] and [2, 3]; at step 4 rank 0 sends 1024
    elements to rank 1, which receives 512; both started, timing on."""
    job = Job(4, timing=True)
    job.gloo()
    pp = [job.group([0, 1], "PIPELINE_MODEL_PARALLEL_GROUP"),
          job.group([2, 3], "PIPELINE_MODEL_PARALLEL_GROUP")]
    job.coll(job.world, "all_reduce_barrier", 1, dtype="Float")
    for step in range(1, 5):
        for i, g in enumerate(pp):
            a, b = 2 * i, 2 * i + 1
            if step == 4 and i == 0:
                job.p2p(g, a, b, 1024, state="started", rnumel=512)
                continue
            job.p2p(g, a, b, 1024)
            job.p2p(g, b, a, 1024)
        if step < 4:
            job.coll(job.world, "all_reduce", 1, dtype="Float")
    write_case(out, "k6-p2p-size", job, "pickle", "pp-node0.nccl_trace_rank_%d")


# ---- a GPU that stops -------------------------------------------------------------------------

def gpu_error(job, g, bad, s, n=10):
    """n completed all-reduces, then from seq s=n+1 rank `bad`'s records stay
    scheduled (s, s+1), while the others completed s, s+1 and wait (started)
    at s+2, which `bad` never enqueued."""
    for i in range(n):
        job.coll(g, "all_reduce", [[8192, 1024]])
    job.coll(g, "all_reduce", [[8192, 1024]], over={bad: {"state": "scheduled"}})
    job.coll(g, "all_reduce", [[8192, 1024]], over={bad: {"state": "scheduled"}})
    job.coll(g, "all_reduce", [[8192, 1024]], state="started", skip={bad})


def k7_gpu_error(out):
    """Rank 2's GPU stops: its TP records from seq 11 stay scheduled (11, 12),
    the others completed 11 and 12 and wait at 13 (timing on)."""
    job = Job(4, timing=True)
    job.gloo()
    tp = job.group([0, 1, 2, 3], "TENSOR_MODEL_PARALLEL_GROUP")
    job.coll(job.world, "all_reduce_barrier", 1, dtype="Float")
    gpu_error(job, tp, 2, 11)
    write_case(out, "k7-gpu-error", job, "pickle", "nccl_trace_rank_%d")


def k7_two_faults(out):
    """8 ranks, TP groups [0-3] and [4-7] and the world: rank 1 and rank 6
    show the pattern of k7-gpu-error, each in its group."""
    job = Job(8, timing=True)
    job.gloo()
    tp = [job.group([0, 1, 2, 3], "TENSOR_MODEL_PARALLEL_GROUP"),
          job.group([4, 5, 6, 7], "TENSOR_MODEL_PARALLEL_GROUP")]
    job.coll(job.world, "all_reduce_barrier", 1, dtype="Float")
    job.coll(job.world, "all_reduce", 1, dtype="Float")
    gpu_error(job, tp[0], 1, 11)
    gpu_error(job, tp[1], 6, 11)
    write_case(out, "k7-two-faults", job, "pickle", "nccl_trace_rank_%d")


# ---- onlyActive dumps and dumps without entries -------------------------------------------

def k8_only_active(out):
    """TP 4 x PP 2 (GPipe, 4 microbatches), 299 steps done, dumped
    onlyActive: at step 300 stage 1's first TP all-reduce (TP [4-7] seq
    4785) waits on ranks 4, 6, 7 for rank 5, which never enqueued it (its
    dump has no entry at all); stage 0 waits in its second send.  The
    pipeline groups' pg_status counts p2p works (2394) while their
    collective seq is 2."""
    M, S = 4, 300
    job = Job(8)
    job.gloo()                                                       # 1
    tp = [job.group([0, 1, 2, 3], "TENSOR_MODEL_PARALLEL_GROUP"),    # 2
          job.group([4, 5, 6, 7], "TENSOR_MODEL_PARALLEL_GROUP")]    # 3
    job.gloo(2)                                                      # 4, 5
    pp = [job.group([i, i + 4], "PIPELINE_MODEL_PARALLEL_GROUP") for i in range(4)]  # 6-9
    job.gloo(4)                                                      # 10-13
    job.group([0, 4], "POSITION_EMBEDDING_GROUP")                    # 14, never used
    job.coll(job.world, "all_reduce_barrier", 1, dtype="Float")
    for g in pp:
        job.coll(g, "broadcast", 16, dtype="Long")
        job.coll(g, "broadcast", 16, dtype="Long")
    act = 4096 * 1024
    for step in range(1, S + 1):
        last = step == S
        for mb in range(M):
            job.coll(tp[0], "all_reduce", [[4096, 1024]])
            job.coll(tp[0], "all_reduce", [[4096, 1024]])
            if last and mb == 1:
                for i, g in enumerate(pp):  # stage 1 never posts the recv
                    job.p2p(g, i, i + 4, act, state="scheduled", skip={i + 4})
                break
            for i, g in enumerate(pp):
                job.p2p(g, i, i + 4, act)
            if last:
                job.coll(tp[1], "all_reduce", [[4096, 1024]], state="scheduled", skip={5})
                continue
            job.coll(tp[1], "all_reduce", [[4096, 1024]])
            job.coll(tp[1], "all_reduce", [[4096, 1024]])
        if last:
            break
        for mb in range(M):
            job.coll(tp[1], "all_reduce", [[4096, 1024]])
            job.coll(tp[1], "all_reduce", [[4096, 1024]])
            for i, g in enumerate(pp):
                job.p2p(g, i + 4, i, act)
            job.coll(tp[0], "all_reduce", [[4096, 1024]])
            job.coll(tp[0], "all_reduce", [[4096, 1024]])
        job.coll(job.world, "all_reduce", 1, dtype="Float")
    write_case(out, "k8-only-active", job, "pickle", "nccl_trace_rank_%d", only_active=True)


def no_entries_job(stuck):
    job = Job(4)
    job.gloo()
    tp = job.group([0, 1, 2, 3], "TENSOR_MODEL_PARALLEL_GROUP")  # name 2, pg_id 1
    job.coll(job.world, "all_reduce_barrier", 1, dtype="Float")
    for i in range(40):
        job.coll(tp, "all_reduce", [[4096, 1024]])
        if i % 10 == 9:
            job.coll(job.world, "all_reduce", 1, dtype="Float")
    if stuck:
        job.coll(tp, "all_reduce", [[4096, 1024]], state="scheduled", skip={2})
    else:
        job.coll(tp, "all_reduce", [[4096, 1024]])
    return job


def k8_no_entries(out):
    """JSON dumps without collectives (no "entries" key): TP group (name 2,
    pg_id 1) at last_enqueued 41, last_completed 40 on ranks 0, 1, 3; rank 2
    at 40 and 40."""
    write_case(out, "k8-no-entries", no_entries_job(True), "json", "nccl_trace_rank_%d.json",
               entries=False)


def k8_no_entries_healthy(out):
    """The same, every rank at 41 and 41."""
    write_case(out, "k8-no-entries-healthy", no_entries_job(False), "json",
               "nccl_trace_rank_%d.json", entries=False)


# ---- format versions ---------------------------------------------------------------------------

def small_job():
    job = Job(2)
    job.gloo()
    g = job.group([0, 1])
    for i in range(5):
        job.coll(g, "all_reduce", 1024)
    job.coll(job.world, "broadcast", 1024)
    return job


def k9_minor(out):
    """Format 2.11 with a top-level key and an entry key this reader does not
    know: read, noted, healthy."""
    write_case(out, "k9-minor-2.11", small_job(), "pickle", "nccl_trace_rank_%d", version="2.11",
               extra_top={"comm_lib_config": {"NCCL_ALGO": "Ring"}},
               extra_entry={"stream_id": 7})


def k9_major(out):
    """Format 3.0: every file refused (JSON)."""
    write_case(out, "k9-major-3.0", small_job(), "json", "nccl_trace_rank_%d.json", version="3.0")


CASES = (k1_pgid_healthy, k1_pgid_hang, k2_coalesced_healthy, k2_coalesced_rs_healthy,
         k2_coalesced_hang, k3_first_pending, k4_names, k4_unknown_mismatch, k5_alltoall_healthy,
         k5_alltoall_v_healthy, k6_coalesced_size_mismatch, k6_output_mismatch, k6_dtype_out,
         k6_p2p_size, k7_gpu_error, k7_two_faults, k8_only_active, k8_no_entries,
         k8_no_entries_healthy, k9_minor, k9_major)


def main():
    if len(sys.argv) != 2:
        sys.stderr.write("usage: gen-pytorch-kinds.py OUTDIR\n")
        return 2
    for case in CASES:
        case(sys.argv[1])
    return 0


if __name__ == "__main__":
    sys.exit(main())
