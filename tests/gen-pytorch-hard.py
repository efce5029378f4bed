#!/usr/bin/env python3
"""gen-pytorch-hard.py — hang kinds the PyTorch import was not tuned on, as
PyTorch Flight Recorder dumps, each with its ground truth built in.

    tests/gen-pytorch-hard.py OUTDIR   # OUTDIR/NAME/ per case, OUTDIR/truth.json

Written by a break-it pass over fr-analyze (the cases it got wrong then are
regressions now), on tests/gen-pytorch-kinds.py's model of ProcessGroupNCCL:
CPU hangs in tensor, expert and pipeline groups, inside coalesced groups and
at a group's first collective; GPU errors (the faulty rank's work never
finishes while its peers complete the same seqs); dead ranks; healthy jobs
dumped in flight, with uneven MoE all-to-alls, coalesced all-gathers and
batched p2p; mismatches; deadlocks with bystanders; pg_ids that cannot be
told from the entries; the situations of PyTorch's own flight recorder
tests (test_fr_analysis.py, test_c10d_nccl.py).  truth.json gives per case
the expected status, root-cause ranks (and an acceptable alternative) and
lagging ranks; tests/e2e/pytorch-hard.sh checks fr-analyze against it."""
import importlib.util, json, os, pickle, shutil, sys
spec = importlib.util.spec_from_file_location(
    "gk", os.path.join(os.path.dirname(os.path.abspath(__file__)), "gen-pytorch-kinds.py"))
gk = importlib.util.module_from_spec(spec); spec.loader.exec_module(gk)
Job, PG = gk.Job, gk.PG
OUT = sys.argv[1] if len(sys.argv) > 1 else "pytorch-hard"
TRUTH = {}

def write(name, job, form="pickle", fmt="nccl_trace_rank_%d", truth=None, missing=(), mutate=None, **kw):
    d = os.path.join(OUT, name)
    shutil.rmtree(d, ignore_errors=True); os.makedirs(d)
    for p in job.procs:
        if p.rank in missing:
            continue
        doc = p.document(form == "json", **kw)
        if mutate:
            doc = mutate(p.rank, doc)
        path = os.path.join(d, fmt % p.rank)
        if form == "json":
            with open(path, "w") as f:
                json.dump(doc, f, sort_keys=True, separators=(",", ":")); f.write("\n")
        else:
            with open(path, "wb") as f:
                pickle.dump(doc, f, protocol=2)
    TRUTH[name] = truth

def T(status, root, lag=None, alt_root=None, note=""):
    return {"status": status, "root": sorted(root), "lag": None if lag is None else sorted(lag),
            "alt_root": alt_root, "note": note}

# ---------------------------------------------------------------- layouts
def megatron(n, tp, version="2.10", timing=False, gloo=True):
    """n ranks, TP groups of size tp (contiguous), DP groups strided."""
    job = Job(n, version=version, timing=timing)
    if gloo: job.gloo()
    tps = [job.group(range(i, i + tp), "TENSOR_MODEL_PARALLEL_GROUP") for i in range(0, n, tp)]
    if gloo: job.gloo(2)
    dps = [job.group(range(i, n, tp), "DATA_PARALLEL_GROUP") for i in range(tp)]
    job.coll(job.world, "all_reduce_barrier", 1, dtype="Float")
    return job, tps, dps

def tp_ops(job, g, skip=(), state="completed", over=None):
    job.coll(g, "all_reduce", [[4096, 1024]], skip=skip, state=state, over=over)

def full_step(job, tps, dps):
    for g in tps:
        for _ in range(3): tp_ops(job, g)
    for g in dps:
        job.coll(g, "all_reduce", 16777216, dtype="Float")

def grp_of(groups, job, r):
    for g in groups:
        if r in job.members(g): return g

# ---------------------------------------------------------------- 1. CPU hangs
def cpu_tp_blocking(name, n, tp, bad, form="pickle", version="2.10", only_active=False):
    """bad stops before the first TP all-reduce of the last step; its TP peers
    wait there; the other TP groups finish and their DP all-reduce waits for
    the stuck TP group's members (which never enqueued it)."""
    job, tps, dps = megatron(n, tp, version)
    for s in range(5): full_step(job, tps, dps)
    gbad = grp_of(tps, job, bad)
    for g in tps:
        if g == gbad:
            tp_ops(job, g, skip={bad}, state="scheduled")
        else:
            for _ in range(3): tp_ops(job, g)
    stuck = set(job.members(gbad))
    for g in dps:
        job.coll(g, "all_reduce", 16777216, dtype="Float", state="scheduled", skip=stuck)
    write(name, job, form, "nccl_trace_rank_%d" + (".json" if form == "json" else ""),
          T("hang", [bad], [bad]), only_active=only_active)

def cpu_tp_async(name, n, tp, bad, form="pickle", version="2.10", only_active=False):
    """CPU runs ahead (async ops): bad's TP peers enqueue the whole step (TP
    ops then DP) which stays scheduled; the other TP groups complete TP and
    enqueue DP: DP groups with a stuck-group member other than bad are all
    joined (blocked by stream order), the one with bad waits for bad."""
    job, tps, dps = megatron(n, tp, version)
    for s in range(5): full_step(job, tps, dps)
    gbad = grp_of(tps, job, bad)
    for g in tps:
        st = "scheduled" if g == gbad else "completed"
        for _ in range(3): tp_ops(job, g, skip={bad}, state=st)
    for g in dps:
        job.coll(g, "all_reduce", 16777216, dtype="Float", state="scheduled", skip={bad})
    write(name, job, form, "nccl_trace_rank_%d" + (".json" if form == "json" else ""),
          T("hang", [bad], [bad]), only_active=only_active)

def ep_job(n, version="2.10", timing=False):
    job = Job(n, version=version, timing=timing)
    job.gloo()
    ep = job.group(range(n), "EXPERT_MODEL_PARALLEL_GROUP")
    job.coll(job.world, "all_reduce_barrier", 1, dtype="Float")
    return job, ep

def a2a_step(job, ep, W, step, H=2048, skip=(), state="completed", zero=False):
    a = gk.splits(step, W)
    if zero:
        a = [[0 if (i + j + step) % 3 == 0 else x for j, x in enumerate(row)] for i, row in enumerate(a)]
    members = job.members(ep)
    idx = {r: k for k, r in enumerate(members)}
    job.coll(ep, "all_to_all_single", lambda r: [[sum(a[idx[r]]), H]],
             lambda r: [[sum(a[i][idx[r]] for i in range(W)), H]], skip=skip, state=state)
    return a

def cpu_ep(name, n, bad, form="pickle", version="2.10", only_active=False):
    job, ep = ep_job(n, version)
    for s in range(6):
        a2a_step(job, ep, n, s)
        job.coll(ep, "all_to_all", lambda r, s=s: [[gk.splits(s, n)[i][r], 2048] for i in range(n)],
                 lambda r, s=s: [[gk.splits(s, n)[r][j], 2048] for j in range(n)])
    a2a_step(job, ep, n, 6, skip={bad}, state="scheduled")
    write(name, job, form, "moe_rank_%d" + (".json" if form == "json" else ".pkl"),
          T("hang", [bad], [bad]), only_active=only_active)

def cpu_pp(name, stages, bad, form="pickle", version="2.10", only_active=False):
    """one PP group of `stages` ranks; microbatches flow 0->1->...; at the
    last microbatch `bad` never posts its recv from bad-1 nor sends to bad+1."""
    job = Job(stages, version=version)
    job.gloo()
    pp = job.group(range(stages), "PIPELINE_MODEL_PARALLEL_GROUP")
    job.coll(job.world, "all_reduce_barrier", 1, dtype="Float")
    act = 2048 * 4096
    for mb in range(8):
        for s in range(stages - 1):
            job.p2p(pp, s, s + 1, act)
        for s in range(stages - 1, 0, -1):
            job.p2p(pp, s, s - 1, act)
    # last microbatch
    for s in range(stages - 1):
        if s + 1 == bad:
            job.p2p(pp, s, s + 1, act, state="scheduled", skip={bad})
        elif s == bad:
            t = job.tick()
            job.procs[s + 1].p2p(pp, "recv", s, act, "BFloat16", "scheduled", t)
            break
        else:
            job.p2p(pp, s, s + 1, act)
    write(name, job, form, "pp_rank_%d" + (".json" if form == "json" else ""),
          T("hang", [bad]), only_active=only_active)

def cpu_coalesced_partial(name, n, bad, k, version="2.10", form="pickle"):
    """bad records k of the n member _broadcast_oop ops of an uneven
    all-gather and stops (no closing record); the others scheduled it all."""
    job = Job(n, version=version)
    job.gloo()
    sh = job.group(range(n), "FSDP_SHARD")
    job.coll(job.world, "all_reduce_barrier", 1, dtype="Float")
    parts = [4000 + 100 * ((i * 7) % 5) for i in range(n)]
    for s in range(3):
        job.coll(sh, "all_reduce", 1024, dtype="Float")
        job.coalesced(sh, gk.uneven_all_gather(parts), "ALLGATHER_coalesced")
    job.coll(sh, "all_reduce", 1024, dtype="Float")
    t = job.tick()
    for r in range(n):
        p = job.procs[r]
        if r != bad:
            p.coalesced(sh, gk.uneven_all_gather(parts)(r), "ALLGATHER_coalesced", "scheduled", t)
        else:
            g = p.pgs[sh]; g.coll += 1
            for part in parts[:k]:
                p._record(g, "nccl:_broadcast_oop", part, "BFloat16", part, "BFloat16", False, "scheduled", t, events=False)
    write(name, job, form, "nccl_trace_rank_%d" + (".json" if form == "json" else ""),
          T("hang", [bad]))

def cpu_first(name, n, bad, form="json", version="2.6", only_active=True):
    job = Job(n, version=version)
    for i in range(4):
        job.coll(job.world, "all_reduce", 1048576, dtype="Float")
    job.gloo(3)
    cp = job.group(range(n), "CONTEXT_PARALLEL_GROUP")
    job.coll(cp, "_all_gather_base", [[1024, 128]], [[1024 * n, 128]], state="scheduled", skip={bad})
    write(name, job, form, "nccl_trace_rank_%d" + (".json" if form == "json" else ""),
          T("hang", [bad], [bad]), only_active=only_active)

# ---------------------------------------------------------------- 2. GPU errors
def gpu_err(job, g, bads, n=6, shape=[[8192, 1024]]):
    for i in range(n): job.coll(g, "all_reduce", shape)
    ov = {b: {"state": "scheduled"} for b in bads}
    job.coll(g, "all_reduce", shape, over=ov)
    job.coll(g, "all_reduce", shape, over=ov)
    job.coll(g, "all_reduce", shape, state="started" if job.timing else "scheduled", skip=set(bads))

def gpu_tp8(name, only_active, form, version):
    job, tps, dps = megatron(16, 8, version, timing=True)
    for s in range(3): full_step(job, tps, dps)
    gpu_err(job, tps[0], [3])
    for _ in range(3): tp_ops(job, tps[1])
    write(name, job, form, "nccl_trace_rank_%d" + (".json" if form == "json" else ""),
          T("hang", [3]), only_active=only_active)

def gpu_pair(name, timing=True):
    job = Job(2, timing=timing)
    g = job.world
    gpu_err(job, g, [1])
    write(name, job, "pickle", "nccl_trace_rank_%d", T("hang", [1]))

def gpu_majority(name):
    job = Job(3, timing=True)
    gpu_err(job, job.world, [1, 2])
    write(name, job, "pickle", "nccl_trace_rank_%d", T("hang", [1, 2], note="physically odd: 2 of 3 unfinished"))

def gpu_two_groups(name):
    """16 ranks: TP8 x DP2 and EP over all 16; rank 2's GPU stops in TP0;
    rank 9's GPU stops in the EP all-to-all."""
    job, tps, dps = megatron(16, 8, "2.5", timing=True)
    ep = job.group(range(16), "EXPERT_MODEL_PARALLEL_GROUP")
    for s in range(2): full_step(job, tps, dps)
    for s in range(3): a2a_step(job, ep, 16, s)
    gpu_err(job, tps[0], [2])
    a = gk.splits(9, 16)
    ins = lambda r: [[sum(a[r]), 2048]]; outs = lambda r: [[sum(a[i][r] for i in range(16)), 2048]]
    st = "started"
    job.coll(ep, "all_to_all_single", ins, outs, over={9: {"state": "scheduled"}, 2: {"state": "scheduled"}},
             skip=())
    job.coll(ep, "all_to_all_single", ins, outs, state=st, skip={9, 2})
    write(name, job, "json", "nccl_trace_rank_%d.json", T("hang", [2, 9], alt_root=[2], note="rank 9 stopped with one EP op in flight: a split one seq deep is no evidence (fr-analyze(1)), so naming 2 alone is not wrong"), only_active=True)

def gpu_also_behind(name):
    """rank 2's GPU stops in TP0 (seqs stay scheduled) and its CPU then blocks
    (a .item()), so it never enqueues the DP all-reduce its DP peer 6 waits in."""
    job, tps, dps = megatron(8, 4, "2.10", timing=True)
    for s in range(3): full_step(job, tps, dps)
    for _ in range(3): tp_ops(job, tps[1])
    for g in dps:
        if 2 in job.members(g):
            job.coll(g, "all_reduce", 16777216, dtype="Float", state="started", skip={2})
        else:
            pass
    gpu_err(job, tps[0], [2], n=2)
    write(name, job, "pickle", "nccl_trace_rank_%d", T("hang", [2]))

# ---------------------------------------------------------------- 3. dead rank
def dead(name, n, tp, bad, form="pickle", only_active=False, version="2.10"):
    job, tps, dps = megatron(n, tp, version)
    for s in range(4): full_step(job, tps, dps)
    gbad = grp_of(tps, job, bad)
    for g in tps:
        if g == gbad:
            tp_ops(job, g, skip={bad}, state="scheduled")
        else:
            for _ in range(3): tp_ops(job, g)
    for g in dps:
        job.coll(g, "all_reduce", 16777216, dtype="Float", state="scheduled", skip=set(job.members(gbad)))
    write(name, job, form, "nccl_trace_rank_%d" + (".json" if form == "json" else ""),
          T("hang", [bad]), missing={bad}, only_active=only_active)

# ---------------------------------------------------------------- 4. healthy
def healthy_midflight(name, variant):
    """4 ranks, timing on.  a: last seq completed on 0,1, started on 2,3.
    b: same and 0,1 already started the next one, 2,3 scheduled it.
    c: no timing: completed on 0,1, scheduled on 2,3."""
    timing = variant != "c"
    job = Job(4, timing=timing)
    for i in range(10): job.coll(job.world, "all_reduce", [[4096, 1024]])
    lag = "started" if timing else "scheduled"
    job.coll(job.world, "all_reduce", [[4096, 1024]], over={2: {"state": lag}, 3: {"state": lag}})
    if variant == "b":
        job.coll(job.world, "all_reduce", [[4096, 1024]], state="started", over={2: {"state": "scheduled"}, 3: {"state": "scheduled"}})
    write(name, job, "pickle", "nccl_trace_rank_%d", T("healthy", [], note="mid-flight dump: nobody to blame; status healthy or a non-blaming hang"))

def healthy_midflight_multi(name):
    """8 ranks TP4xDP2, timing on, dumped mid-step: TP0's last all-reduce
    completed on 0,1 and started on 2,3; DP all-reduces started on some."""
    job, tps, dps = megatron(8, 4, "2.10", timing=True)
    for s in range(4): full_step(job, tps, dps)
    tp_ops(job, tps[0], over={2: {"state": "started"}, 3: {"state": "started"}})
    tp_ops(job, tps[1])
    for g in dps:
        m = job.members(g)
        job.coll(g, "all_reduce", 16777216, dtype="Float", state="started", over={m[0]: {"state": "completed"}})
    write(name, job, "pickle", "nccl_trace_rank_%d", T("healthy", [], note="mid-flight"))

def healthy_moe(name, n, form, version):
    job, ep = ep_job(n, version)
    for s in range(5):
        a = a2a_step(job, ep, n, s, zero=True)
        # all_to_all list form with empty tensors where a is 0
        job.coll(ep, "all_to_all", lambda r, a=a: [[a[i][r], 2048] for i in range(n)],
                 lambda r, a=a: [[a[r][j], 2048] for j in range(n)])
        job.coll(ep, "all_reduce", 8192, dtype="Float")
    write(name, job, form, "nccl_trace_rank_%d" + (".json" if form == "json" else ""), T("healthy", []))

def healthy_coalesced(name, n, form, version):
    job = Job(n, version=version)
    job.gloo()
    sh = job.group(range(n), "FSDP_SHARD")
    parts = [3000 + 37 * i for i in range(n)]
    for s in range(3):
        job.coalesced(sh, gk.uneven_all_gather(parts), "ALLGATHER_coalesced")
        job.coll(sh, "all_gather_into_tensor_coalesced", [[1024], [333]], [[1024 * n], [333 * n]])
        job.coalesced(sh, gk.uneven_reduce_scatter(parts), "REDUCE_SCATTER_coalesced")
        job.coll(sh, "reduce_scatter_tensor_coalesced", [[1024 * n], [7 * n]], [[1024], [7]])
    job.coll(job.world, "all_reduce", 1, dtype="Float")
    write(name, job, form, "nccl_trace_rank_%d" + (".json" if form == "json" else ""), T("healthy", []))

def healthy_batched_p2p(name, stages, form, version):
    """1F1B-ish batched p2p on one PP group: stage 0 sends only, the last
    stage receives only, the middle send+recv in one batch (nccl:coalesced)."""
    job = Job(stages, version=version)
    job.gloo()
    pp = job.group(range(stages), "PIPELINE_MODEL_PARALLEL_GROUP")
    job.coll(job.world, "all_reduce_barrier", 1, dtype="Float")
    act = 1024 * 512
    for mb in range(6):
        t = job.tick()
        for r in range(stages):
            m = []
            if r > 0: m.append(("recv", r - 1, act, "BFloat16"))
            if r < stages - 1: m.append(("send", r + 1, act, "BFloat16"))
            job.procs[r].coalesced(pp, m, "coalesced", "completed", t, p2p=True)
        t = job.tick()
        for r in range(stages):
            m = []
            if r < stages - 1: m.append(("recv", r + 1, act, "BFloat16"))
            if r > 0: m.append(("send", r - 1, act, "BFloat16"))
            job.procs[r].coalesced(pp, m, "coalesced", "completed", t, p2p=True)
    job.coll(job.world, "all_reduce", 1, dtype="Float")
    write(name, job, form, "nccl_trace_rank_%d" + (".json" if form == "json" else ""), T("healthy", []))

def pt_batched_send_recv(name, sizes, timing):
    """PyTorch test_batched_send_recv: rank 0 irecv from 1, rank 1 isend to 0,
    20 batches of len(sizes) ops; the test asserts members scheduled,
    closing 'nccl:coalesced' completed, collective_seq_id 0."""
    job = Job(2, timing=timing)
    g = job.world
    for i in range(20):
        t = job.tick()
        job.procs[0].coalesced(g, [("recv", 1, [s], "Float") for s in sizes], "coalesced", "completed", t, p2p=True)
        job.procs[1].coalesced(g, [("send", 0, [s], "Float") for s in sizes], "coalesced", "completed", t, p2p=True)
    def mut(r, doc):
        for e in doc.get("entries", []):
            if e["profiling_name"] == "nccl:coalesced":
                e["input_sizes"] = []; e["output_sizes"] = []; e["input_dtypes"] = []; e["output_dtypes"] = []
        return doc
    write(name, job, "pickle", "trace_%d", T("healthy", []), mutate=mut)

def pt_individual_send_recv(name, sizes):
    job = Job(2)
    g = job.world
    for i in range(10):
        for s in sizes:
            job.p2p(g, 1, 0, [s], dtype="Float")
    write(name, job, "pickle", "trace_%d", T("healthy", []))

def pt_allgather_uneven(name, timing):
    W = 2
    job = Job(W, timing=timing)
    job.coalesced(job.world, lambda r: [("_broadcast_oop", [[i + 1, 2]], [[i + 1, 2]], "Float") for i in range(W)],
                  "ALLGATHER_coalesced")
    write(name, job, "pickle", "trace_%d", T("inconclusive", [], note="a trailing coalesced group: its closing record is no evidence of completion (real PyTorch 2.11 dumps)"))

def pt_coalescing_manager(name):
    job = Job(2)
    job.coll(job.world, "reduce_scatter_tensor_coalesced", [[2, 2], [2, 2]], [[2], [2]], dtype="Float")
    write(name, job, "pickle", "trace_%d", T("healthy", []))

def pt_trace_while_active(name, timing, only_active):
    """rank 0: allreduce seq 1 completed; ranks != 0: seq 1 completed, seq 2
    started/scheduled (rank 0 has not called it yet).  Truth: rank 0 lagging
    (at dump time it is held back by the test)."""
    job = Job(2, timing=timing)
    job.coll(job.world, "all_reduce", [[3, 4]], dtype="Float")
    job.coll(job.world, "all_reduce", [[3, 4]], dtype="Float", skip={0}, state="started" if timing else "scheduled")
    write(name, job, "pickle", "trace_%d", T("hang", [0], [0]), only_active=only_active)

def pt_timeout_dumps(name, timing):
    """test_timeout_dumps: rank 0 allreduce twice (second never completes),
    rank 1 only once then exits: only rank 0's dump exists."""
    job = Job(2, timing=timing)
    job.coll(job.world, "all_reduce", [[3, 4]], dtype="Float")
    job.coll(job.world, "all_reduce", [[3, 4]], dtype="Float", skip={1}, state="started" if timing else "scheduled")
    write(name, job, "pickle", "trace_%d", T("hang", [1]), missing={1})

def pt_timeout_stuck_ranks(name):
    """test_timeout_dumps_on_stuck_ranks: both dump; rank 1 has 1 entry
    (completed), rank 0 2 entries (second pending)."""
    job = Job(2)
    job.coll(job.world, "all_reduce", [[3, 4]], dtype="Float")
    job.coll(job.world, "all_reduce", [[3, 4]], dtype="Float", skip={1}, state="scheduled")
    write(name, job, "pickle", "trace_%d", T("hang", [1], [1]))

# ---------------------------------------------------------------- 5. mismatches
def mm_type(name):
    job = Job(8, version="2.8")
    for i in range(6): job.coll(job.world, "all_reduce", 4096)
    job.coll(job.world, "all_reduce", 4096, state="scheduled", over={5: {"op": "all_gather", "outs": [[8, 4096]]}})
    write(name, job, "json", "rank%d.json", T("mismatch", [5]))

def mm_size3(name):
    job = Job(3)
    for i in range(4): job.coll(job.world, "broadcast", 4096)
    job.coll(job.world, "broadcast", 4096, state="scheduled", over={1: {"ins": 2048, "outs": 2048}})
    write(name, job, "pickle", "nccl_trace_rank_%d", T("mismatch", [1]))

def mm_size2(name):
    job = Job(2)
    for i in range(4): job.coll(job.world, "all_reduce", 4096)
    job.coll(job.world, "all_reduce", 4096, state="scheduled", over={1: {"ins": 2048, "outs": 2048}})
    write(name, job, "pickle", "nccl_trace_rank_%d", T("mismatch", [], note="2 ranks: no unique minority, no culprit"))

def mm_dtype_in(name):
    job, tps, dps = megatron(8, 4, "2.7")
    full_step(job, tps, dps)
    tp_ops(job, tps[1], over={6: {"dtype": "Float"}})
    full_step(job, tps, dps)
    write(name, job, "pickle", "nccl_trace_rank_%d", T("mismatch", [6]))

def mm_coalesced_count(name):
    """rank 3 has 3 members in the uneven all-gather where the others have 4."""
    job = Job(4)
    job.gloo()
    sh = job.group(range(4), "FSDP_SHARD")
    P = [4100, 3900, 4000, 4200]
    for s in range(2):
        job.coll(sh, "all_reduce", 1024, dtype="Float")
        job.coalesced(sh, gk.uneven_all_gather(P), "ALLGATHER_coalesced")
    job.coalesced(sh, gk.uneven_all_gather(P), "ALLGATHER_coalesced", state="scheduled",
                  over={3: {"members": gk.uneven_all_gather(P[:3])}})
    write(name, job, "pickle", "nccl_trace_rank_%d", T("mismatch", [3]))

def mm_coalesced_op(name):
    """inside an ALLGATHER_coalesced, rank 1's second member is a _reduce_oop."""
    job = Job(4)
    job.gloo()
    sh = job.group(range(4), "FSDP_SHARD")
    P = [4100, 3900, 4000, 4200]
    job.coalesced(sh, gk.uneven_all_gather(P), "ALLGATHER_coalesced")
    bad = lambda r: [("_broadcast_oop", P[0], P[0], "BFloat16"), ("_reduce_oop", P[1], P[1], "BFloat16")] + \
        [("_broadcast_oop", p, p, "BFloat16") for p in P[2:]]
    job.coalesced(sh, gk.uneven_all_gather(P), "ALLGATHER_coalesced", state="scheduled", over={1: {"members": bad}})
    write(name, job, "pickle", "nccl_trace_rank_%d", T("mismatch", [1]))

def mm_a2a_totals(name, n=8, bad=2):
    job, ep = ep_job(n)
    for s in range(3): a2a_step(job, ep, n, s)
    a = gk.splits(5, n)
    job.coll(ep, "all_to_all_single", lambda r: [[sum(a[r]) + (64 if r == bad else 0), 2048]],
             lambda r: [[sum(a[i][r] for i in range(n)), 2048]], state="scheduled")
    write(name, job, "pickle", "nccl_trace_rank_%d", T("mismatch", [], alt_root=[bad], note="totals disagree; culprit not identifiable (2 acceptable)"))

def mm_p2p_size(name):
    job = Job(8)
    job.gloo()
    pps = [job.group([i, i + 4], "PIPELINE_MODEL_PARALLEL_GROUP") for i in range(4)]
    for mb in range(3):
        for i, g in enumerate(pps): job.p2p(g, i, i + 4, 4096)
    for i, g in enumerate(pps):
        if i == 2: job.p2p(g, 2, 6, 4096, rnumel=2048, state="scheduled")
        else: job.p2p(g, i, i + 4, 4096)
    write(name, job, "json", "nccl_trace_rank_%d.json", T("mismatch", [], alt_root=[2, 6], note="no single culprit"))

def pt_uneven_ag_mismatch(name):
    """test_fr_analysis testBuildDB case 4: rank 0's second _broadcast_oop is
    [5,5], rank 1's [4,4]; all completed, seq 0.  PyTorch: pass_check False."""
    docs = {}
    def entry(rid, pname, ins, outs, seq=0, state="completed", pg=("0", "default")):
        return {"profiling_name": "nccl:" + pname, "state": state, "process_group": pg, "input_sizes": ins,
                "output_sizes": outs, "input_dtypes": "float32", "output_dtypes": "float32",
                "collective_seq_id": str(seq), "p2p_seq_id": "0", "time_created_ns": 0, "frames": [],
                "record_id": rid, "is_p2p": False}
    return entry

E = pt_uneven_ag_mismatch(None)

def pt_builddb(name, per_rank, truth, version="2.8"):
    d = os.path.join(OUT, name); shutil.rmtree(d, ignore_errors=True); os.makedirs(d)
    for r, entries in per_rank.items():
        doc = {"entries": entries, "version": version, "rank": r,
               "pg_config": {"0": {"name": "0", "desc": "default_pg", "ranks": "[0, 1]"},
                             "1": {"name": "1", "desc": "sub_pg", "ranks": "[%d]" % r}}}
        with open(os.path.join(d, "dump_file_rank_%d" % r), "wb") as f:
            pickle.dump(doc, f, protocol=2)
    TRUTH[name] = truth

def pt_cases():
    pt_builddb("pt-builddb1-allreduce", {
        0: [E(0, "all_reduce", [[4, 4]], [[4, 4]]), E(1, "all_reduce", [[5, 5]], [[5, 5]], pg=("1", "sub_pg"))],
        1: [E(0, "all_reduce", [[4, 4]], [[4, 4]]), E(1, "all_reduce", [[5, 5]], [[5, 5]], pg=("1", "sub_pg"))]},
        T("healthy", [], note="PyTorch: 3 collectives, all pass_check"))
    pt_builddb("pt-builddb2-allreduce-coalesced", {
        r: [E(0, "allreduce_coalesced", [[4, 4]], [[4, 4]])] for r in (0, 1)}, T("healthy", []))
    pt_builddb("pt-builddb3-broadcast-coalesced", {
        r: [E(0, "broadcast", [[4, 4]], [[4, 4]]), E(1, "broadcast", [[4, 4]], [[4, 4]]), E(2, "coalesced", [[]], [[]])]
        for r in (0, 1)}, T("inconclusive", [], note="the closing record of a coalesced group is no evidence of completion (real PyTorch 2.11 dumps: its events bracket no kernel); nothing after it"))
    pt_builddb("pt-builddb4-uneven-ag-mismatch", {
        0: [E(0, "_broadcast_oop", [[4, 4]], [[4, 4]]), E(1, "_broadcast_oop", [[5, 5]], [[5, 5]]), E(2, "ALLGATHER_coalesced", [[]], [[]])],
        1: [E(0, "_broadcast_oop", [[4, 4]], [[4, 4]]), E(1, "_broadcast_oop", [[4, 4]], [[4, 4]]), E(2, "ALLGATHER_coalesced", [[]], [[]])]},
        T("mismatch", [], note="PyTorch: pass_check False at record 1; 2 ranks: no culprit"))
    pt_builddb("pt-builddb5-uneven-rs", {
        r: [E(0, "_reduce_oop", [[4, 4]], [[4, 4]]), E(1, "_reduce_oop", [[4, 4]], [[4, 4]]), E(2, "REDUCE_SCATTER_coalesced", [[]], [[]])]
        for r in (0, 1)}, T("inconclusive", [], note="the closing record of a coalesced group is no evidence of completion (real PyTorch 2.11 dumps: its events bracket no kernel); nothing after it"))
    pt_builddb("pt-builddb6-empty-coalesced-rank0", {
        0: [E(0, "all_reduce", [[4, 4]], [[4, 4]])],
        1: [E(0, "all_reduce", [[4, 4]], [[4, 4]]), E(1, "_reduce_oop", [[4, 4]], [[4, 4]]), E(2, "_reduce_oop", [[4, 4]], [[4, 4]]), E(3, "REDUCE_SCATTER_coalesced", [[]], [[]])]},
        T("any", [], note="PyTorch: 2 collectives, record 1 pass_check True; synthetic (all seq 0)"))

# ---------------------------------------------------------------- 6. deadlocks
def dl_pair(name):
    """two groups of the same two ranks, A then B each round; in round 4
    rank 1 enters B without A, while rank 0 still enters A first: rank 1 is
    named (its rounds make A every time before B, this time not; rank 0
    keeps to its rounds), as in C10."""
    job = Job(2, version="2.8")
    a = job.group([0, 1], "GROUP_A"); b = job.group([0, 1], "GROUP_B")
    for i in range(3):
        job.coll(a, "all_reduce", 1024); job.coll(b, "all_reduce", 1024)
    job.coll(a, "all_reduce", 1024, skip={1}, state="scheduled")
    job.coll(b, "all_reduce", 1024, skip={0}, state="scheduled")
    write(name, job, "json", "worker-%d.json", T("deadlock", [1]))

def dl_tp_emb(name):
    """TP0 [0-3] and EMB [0,3]: rank 0 enters EMB first, rank 3 TP first.
    Rank 0 left out calls of two comms (TP's and DP's), not only of the
    one rank 3 waits for it in: the rule of a call left out does not
    blame it, and both are named."""
    job, tps, dps = megatron(8, 4, "2.10")
    emb = job.group([0, 3], "EMBEDDING_GROUP")
    for s in range(3):
        full_step(job, tps, dps); job.coll(emb, "all_reduce", [[50304, 1024]])
    tp_ops(job, tps[0], skip={0}, state="scheduled")
    job.coll(emb, "all_reduce", [[50304, 1024]], skip={3}, state="scheduled")
    for _ in range(3): tp_ops(job, tps[1])
    write(name, job, "pickle", "nccl_trace_rank_%d", T("deadlock", [0, 3]))

def dl_three(name):
    job = Job(4)
    g01 = job.group([0, 1], "G01"); g12 = job.group([1, 2], "G12"); g20 = job.group([0, 2], "G20")
    for i in range(2):
        for g in (g01, g12, g20): job.coll(g, "all_reduce", 1024)
    job.coll(g01, "all_reduce", 1024, skip={1}, state="scheduled")   # 0 waits for 1
    job.coll(g12, "all_reduce", 1024, skip={2}, state="scheduled")   # 1 waits for 2
    job.coll(g20, "all_reduce", 1024, skip={0}, state="scheduled")   # 2 waits for 0
    job.coll(job.world, "all_reduce", 1024, skip={0, 1, 2}, state="scheduled")  # 3 waits in world
    write(name, job, "pickle", "nccl_trace_rank_%d", T("deadlock", [0, 1, 2]))

# ---------------------------------------------------------------- 7. pg_id puzzles
def pg_extra_status(name):
    """8 ranks, k1 hang pattern; pg_status gains gloo-like ids (e.g. '7', '8')
    with large counters on every rank."""
    job, tps, dps = megatron(8, 4, "2.10")
    for s in range(4): full_step(job, tps, dps)
    tp_ops(job, tps[0], skip={3}, state="scheduled")
    for _ in range(3): tp_ops(job, tps[1])
    def mut(r, doc):
        base = len(doc["pg_config"])
        for k in range(2):
            doc["pg_status"][str(base + 3 + k)] = {"last_enqueued_collective": 500 + k, "last_started_collective": -1,
                                                  "last_completed_collective": 499 + k}
        return doc
    write(name, job, "pickle", "nccl_trace_rank_%d", T("hang", [3], [3]), mutate=mut)

def pg_unknown_lagging(name):
    """onlyActive: rank 5 lags in TP1 (no active entry); the unused groups
    and extra pg_status ids make rank 5's TP1 pg_id undeterminable."""
    job = Job(8)
    job.gloo()
    tps = [job.group(range(0, 4), "TENSOR_MODEL_PARALLEL_GROUP"), job.group(range(4, 8), "TENSOR_MODEL_PARALLEL_GROUP")]
    job.group(range(8), "UNUSED_A"); job.group([1, 5], "UNUSED_B")
    job.coll(job.world, "all_reduce_barrier", 1, dtype="Float")
    for i in range(20):
        for g in tps: tp_ops(job, g)
    tp_ops(job, tps[1], skip={5}, state="scheduled")
    def mut(r, doc):
        doc["pg_status"]["9"] = {"last_enqueued_collective": 3, "last_started_collective": -1, "last_completed_collective": 3}
        return doc
    write(name, job, "pickle", "nccl_trace_rank_%d", T("hang", [5], [5], note="if pg_id unknown, not blaming 5 is a miss"),
          only_active=True, mutate=mut)

def pg_unknown_config(name):
    """pg_config has groups whose names are not decimal and never used; hang
    elsewhere (rank 1 lagging in world at seq 6)."""
    job = Job(4)
    job.gloo()
    for i in range(5): job.coll(job.world, "all_reduce", 4096)
    job.coll(job.world, "all_reduce", 4096, skip={1}, state="scheduled")
    def mut(r, doc):
        doc["pg_config"]["custom_tp"] = {"name": "custom_tp", "desc": "undefined", "ranks": "[0, 1, 2, 3]"}
        doc["pg_config"]["custom_dp_%d" % (r % 2)] = {"name": "custom_dp_%d" % (r % 2), "desc": "undefined", "ranks": str([r % 2, r % 2 + 2])}
        doc["pg_status"]["1"] = {"last_enqueued_collective": 40 + r, "last_started_collective": -1, "last_completed_collective": 40 + r}
        return doc
    write(name, job, "pickle", "nccl_trace_rank_%d", T("hang", [1], [1]), mutate=mut)

def pg_status_only_diff(name):
    """onlyActive; a group with no entries on anyone, but pg_status differs:
    rank 2 last_enqueued = last_completed = 30, others enqueued 31 and
    completed 30 -- rank 2 lagging, learned from pg_status alone (pg_ids
    inferable)."""
    job = Job(4)
    job.gloo()
    g = job.group(range(4), "TENSOR_MODEL_PARALLEL_GROUP")
    for i in range(30): job.coll(g, "all_reduce", 4096)
    job.coll(g, "all_reduce", 4096, skip={2}, state="scheduled")
    write(name, job, "pickle", "nccl_trace_rank_%d", T("hang", [2], [2]), only_active=True)

def old_format(name, version):
    """oldest forms: no pg_status, seq_id instead of collective_seq_id, no
    is_p2p / thread fields; CPU hang of rank 2 in a 4-rank TP group."""
    job = Job(4, version=version)
    job.gloo()
    g = job.group(range(4), "TENSOR_MODEL_PARALLEL_GROUP")
    for i in range(8): job.coll(g, "all_reduce", 4096); job.coll(job.world, "broadcast", 16)
    job.coll(g, "all_reduce", 4096, skip={2}, state="scheduled")
    def mut(r, doc):
        doc.pop("pg_status", None); doc.pop("comm_lib_version", None)
        for e in doc["entries"]:
            e["seq_id"] = e.pop("collective_seq_id")
            for k in ("p2p_seq_id", "is_p2p", "thread_id", "thread_name", "timeout_ms", "pg_id", "op_id"):
                e.pop(k, None)
        return doc
    write(name, job, "pickle", "nccl_trace_rank_%d", T("hang", [2], [2]), mutate=mut)


def dl_three_nobystander(name):
    job = Job(3)
    g01 = job.group([0, 1], "G01"); g12 = job.group([1, 2], "G12"); g20 = job.group([0, 2], "G20")
    for i in range(2):
        for g in (g01, g12, g20): job.coll(g, "all_reduce", 1024)
    job.coll(g01, "all_reduce", 1024, skip={1}, state="scheduled")
    job.coll(g12, "all_reduce", 1024, skip={2}, state="scheduled")
    job.coll(g20, "all_reduce", 1024, skip={0}, state="scheduled")
    write(name, job, "pickle", "nccl_trace_rank_%d", T("deadlock", [0, 1, 2]))

def dl_pair_bystanders(name):
    """ranks 0,1 deadlock on A/B; ranks 2,3 (world only) wait in the world's
    next all-reduce (seq 4, after 3 completed world ops)."""
    job = Job(4, version="2.8")
    a = job.group([0, 1], "GROUP_A"); b = job.group([0, 1], "GROUP_B")
    for i in range(3):
        job.coll(job.world, "all_reduce", 1024)
        job.coll(a, "all_reduce", 1024); job.coll(b, "all_reduce", 1024)
    job.coll(a, "all_reduce", 1024, skip={1}, state="scheduled")
    job.coll(b, "all_reduce", 1024, skip={0}, state="scheduled")
    job.coll(job.world, "all_reduce", 1024, skip={0, 1}, state="scheduled")
    write(name, job, "json", "worker-%d.json", T("deadlock", [0, 1]))

def dl_pair_one_bystander(name):
    """as dl-pair-bystanders with one bystander (rank 2 alone in the world op)."""
    job = Job(3, version="2.8")
    a = job.group([0, 1], "GROUP_A"); b = job.group([0, 1], "GROUP_B")
    for i in range(3):
        job.coll(job.world, "all_reduce", 1024)
        job.coll(a, "all_reduce", 1024); job.coll(b, "all_reduce", 1024)
    job.coll(a, "all_reduce", 1024, skip={1}, state="scheduled")
    job.coll(b, "all_reduce", 1024, skip={0}, state="scheduled")
    job.coll(job.world, "all_reduce", 1024, skip={0, 1}, state="scheduled")
    write(name, job, "pickle", "nccl_trace_rank_%d", T("deadlock", [0, 1]))

def cpu_bystander_ahead(name):
    """world [0-3], TP [0,1,2]: rank 1 CPU-hangs before TP's all-reduce
    (0, 2 wait in it); rank 3 (not in TP) enters the world's next all-reduce
    alone -- it is not ahead, the others are busy in TP."""
    job = Job(4)
    job.gloo()
    tp = job.group([0, 1, 2], "TENSOR_MODEL_PARALLEL_GROUP")
    for i in range(5):
        job.coll(tp, "all_reduce", 4096); job.coll(job.world, "all_reduce", 16, dtype="Float")
    job.coll(tp, "all_reduce", 4096, skip={1}, state="scheduled")
    job.coll(job.world, "all_reduce", 16, dtype="Float", skip={0, 1, 2}, state="scheduled")
    write(name, job, "pickle", "nccl_trace_rank_%d", T("hang", [1], [1]))

def gpu_bystander_ahead(name):
    """world [0-3], TP [0,1,2], timing on: rank 1's GPU stops (TP seqs
    scheduled, completed on 0 and 2 which then wait at the next); rank 3
    enters the world's next all-reduce alone."""
    job = Job(4, timing=True)
    job.gloo()
    tp = job.group([0, 1, 2], "TENSOR_MODEL_PARALLEL_GROUP")
    for i in range(5):
        job.coll(tp, "all_reduce", 4096); job.coll(job.world, "all_reduce", 16, dtype="Float")
    gpu_err(job, tp, [1], n=0, shape=4096)
    job.coll(job.world, "all_reduce", 16, dtype="Float", skip={0, 1, 2}, state="started")
    write(name, job, "pickle", "nccl_trace_rank_%d", T("hang", [1]))

def pg_status_only_world_used(name):
    """as pg-status-only-active but the world did record ops (so pg_ids pair)."""
    job = Job(4)
    job.gloo()
    g = job.group(range(4), "TENSOR_MODEL_PARALLEL_GROUP")
    job.coll(job.world, "all_reduce_barrier", 1, dtype="Float")
    for i in range(30): job.coll(g, "all_reduce", 4096)
    job.coll(g, "all_reduce", 4096, skip={2}, state="scheduled")
    write(name, job, "pickle", "nccl_trace_rank_%d", T("hang", [2], [2]), only_active=True)

def pg_status_only_full(name):
    """world never used; full dump (rank 2 has completed entries naming pg_id)."""
    job = Job(4)
    job.gloo()
    g = job.group(range(4), "TENSOR_MODEL_PARALLEL_GROUP")
    for i in range(30): job.coll(g, "all_reduce", 4096)
    job.coll(g, "all_reduce", 4096, skip={2}, state="scheduled")
    write(name, job, "pickle", "nccl_trace_rank_%d", T("hang", [2], [2]), ring=5)

def pg_unknown_lagging_noextra(name):
    job = Job(8)
    job.gloo()
    tps = [job.group(range(0, 4), "TENSOR_MODEL_PARALLEL_GROUP"), job.group(range(4, 8), "TENSOR_MODEL_PARALLEL_GROUP")]
    job.group(range(8), "UNUSED_A"); job.group([1, 5], "UNUSED_B")
    job.coll(job.world, "all_reduce_barrier", 1, dtype="Float")
    for i in range(20):
        for g in tps: tp_ops(job, g)
    tp_ops(job, tps[1], skip={5}, state="scheduled")
    write(name, job, "pickle", "nccl_trace_rank_%d", T("hang", [5], [5]), only_active=True)

def cpu_first_variants():
    cpu_first("cpu-first-coll-8-active-pickle", 8, 5, "pickle", "2.10", only_active=True)
    cpu_first("cpu-first-coll-8-full-r5", 8, 5, "pickle", "2.10", only_active=False)
    cpu_first("cpu-first-coll-8-full-json26", 8, 5, "json", "2.6", only_active=False)
    cpu_first("cpu-first-coll-4-active", 4, 2, "pickle", "2.10", only_active=True)

def healthy_midflight_active(name):
    job = Job(4, timing=True)
    for i in range(10): job.coll(job.world, "all_reduce", [[4096, 1024]])
    job.coll(job.world, "all_reduce", [[4096, 1024]], over={2: {"state": "started"}, 3: {"state": "started"}})
    write(name, job, "pickle", "nccl_trace_rank_%d", T("healthy", [], note="mid-flight"), only_active=True)

def cpu_two_tp(name):
    job, tps, dps = megatron(8, 4, "2.10")
    for s in range(3): full_step(job, tps, dps)
    tp_ops(job, tps[0], skip={1}, state="scheduled")
    tp_ops(job, tps[1], skip={6}, state="scheduled")
    write(name, job, "pickle", "nccl_trace_rank_%d", T("hang", [1, 6]))

def cpu_chain(name):
    """rank 2 CPU-hangs (idle, TP0 finished); rank 6 waits in DP [2,6] for 2;
    ranks 4,5,7 wait in TP1 for 6."""
    job, tps, dps = megatron(8, 4, "2.10")
    for s in range(3): full_step(job, tps, dps)
    for g in dps:
        if 2 in job.members(g):
            job.coll(g, "all_reduce", 16777216, dtype="Float", skip={2}, state="scheduled")
        else:
            job.coll(g, "all_reduce", 16777216, dtype="Float")
    tp_ops(job, tps[1], skip={6}, state="scheduled")
    write(name, job, "pickle", "nccl_trace_rank_%d", T("hang", [2], [2]))

def pp_dead(name):
    job = Job(4)
    job.gloo()
    pp = job.group(range(4), "PIPELINE_MODEL_PARALLEL_GROUP")
    job.coll(job.world, "all_reduce_barrier", 1, dtype="Float")
    for mb in range(4):
        for s in range(3): job.p2p(pp, s, s + 1, 4096)
    job.p2p(pp, 0, 1, 4096)
    job.p2p(pp, 1, 2, 4096, state="scheduled", skip={2})
    t = job.tick(); job.procs[3].p2p(pp, "recv", 2, 4096, "BFloat16", "scheduled", t)
    write(name, job, "pickle", "nccl_trace_rank_%d", T("hang", [2]), missing={2})

def mm_split(name):
    job = Job(4)
    for i in range(3): job.coll(job.world, "all_reduce", 4096)
    job.coll(job.world, "all_reduce", 4096, state="scheduled", over={2: {"ins": 2048, "outs": 2048}, 3: {"ins": 2048, "outs": 2048}})
    write(name, job, "pickle", "nccl_trace_rank_%d", T("mismatch", [], note="2 vs 2"))

def pp_counters(job, pp, W, steps):
    for st in range(steps):
        for s in range(W - 1): job.p2p(pp, s, s + 1, 4096)
        for s in range(W - 1, 0, -1): job.p2p(pp, s, s - 1, 4096)

def healthy_pp_active_counters(name, form, entries=True):
    """3-stage PP group: p2p counters differ per rank by design (middle stage
    does twice the p2p works); all completed; onlyActive / no entries."""
    job = Job(3)
    job.gloo()
    pp = job.group(range(3), "PIPELINE_MODEL_PARALLEL_GROUP")
    job.coll(job.world, "all_reduce_barrier", 1, dtype="Float")
    job.coll(pp, "broadcast", 16, dtype="Long")
    pp_counters(job, pp, 3, 5)
    job.coll(job.world, "all_reduce", 1, dtype="Float")
    write(name, job, form, "nccl_trace_rank_%d" + (".json" if form == "json" else ""), T("healthy", []),
          only_active=True, entries=entries)

def healthy_pp_mixed_last(name, form, entries=True):
    """PP group [0,1,2]: broadcast (coll seq 1..2), then only 0->1 p2p: rank 2's
    pg_status counts a collective, ranks 0 and 1 their p2p counter."""
    job = Job(3)
    job.gloo()
    pp = job.group(range(3), "PIPELINE_MODEL_PARALLEL_GROUP")
    job.coll(job.world, "all_reduce_barrier", 1, dtype="Float")
    job.coll(pp, "broadcast", 16, dtype="Long"); job.coll(pp, "broadcast", 16, dtype="Long")
    for i in range(7): job.p2p(pp, 0, 1, 4096)
    job.coll(job.world, "all_reduce", 1, dtype="Float")
    write(name, job, form, "nccl_trace_rank_%d" + (".json" if form == "json" else ""), T("healthy", []),
          only_active=True, entries=entries)

def healthy_pp_mixed_last_full(name):
    job = Job(3)
    job.gloo()
    pp = job.group(range(3), "PIPELINE_MODEL_PARALLEL_GROUP")
    job.coll(job.world, "all_reduce_barrier", 1, dtype="Float")
    job.coll(pp, "broadcast", 16, dtype="Long"); job.coll(pp, "broadcast", 16, dtype="Long")
    for i in range(7): job.p2p(pp, 0, 1, 4096)
    for i in range(30): job.coll(job.world, "all_reduce", 1, dtype="Float")
    write(name, job, "pickle", "nccl_trace_rank_%d", T("healthy", []), ring=20)

def main():
    os.makedirs(OUT, exist_ok=True)
    cpu_tp_blocking("cpu-tp-blocking-8", 8, 4, 6)
    cpu_tp_blocking("cpu-tp-blocking-16-json24", 16, 8, 11, "json", "2.4")
    cpu_tp_blocking("cpu-tp-blocking-32-active", 32, 8, 17, "pickle", "2.9", only_active=True)
    cpu_tp_async("cpu-tp-async-8", 8, 4, 6)
    cpu_tp_async("cpu-tp-async-16-active-json", 16, 4, 13, "json", "2.10", only_active=True)
    cpu_tp_async("cpu-tp-async-4x2-tp2", 8, 2, 0)
    cpu_ep("cpu-ep-a2a-8", 8, 3)
    cpu_ep("cpu-ep-a2a-16-active-json", 16, 12, "json", "2.9", only_active=True)
    cpu_pp("cpu-pp-recv-4", 4, 2)
    cpu_pp("cpu-pp-recv-8-active", 8, 5, only_active=True)
    cpu_pp("cpu-pp-recv-2-json", 2, 1, "json", "2.6")
    cpu_coalesced_partial("cpu-coalesced-partial-4", 4, 2, 2)
    cpu_coalesced_partial("cpu-coalesced-partial-8-k0", 8, 6, 0, "2.7", "json")
    cpu_coalesced_partial("cpu-coalesced-partial-8-klast", 8, 1, 7)
    cpu_first("cpu-first-coll-8-active", 8, 5)
    cpu_first("cpu-first-coll-8-full", 8, 0, "pickle", "2.10", only_active=False)
    gpu_tp8("gpu-tp8-full", False, "pickle", "2.10")
    gpu_tp8("gpu-tp8-active-json", True, "json", "2.8")
    gpu_pair("gpu-pair-2")
    gpu_pair("gpu-pair-2-notiming", timing=False)
    gpu_majority("gpu-majority-3")
    gpu_two_groups("gpu-two-groups-16-active")
    gpu_also_behind("gpu-also-behind-dp")
    dead("dead-rank5-8", 8, 4, 5)
    dead("dead-rank0-16-active-json", 16, 4, 0, "json", True, "2.9")
    healthy_midflight("healthy-midflight-a", "a")
    healthy_midflight("healthy-midflight-b", "b")
    healthy_midflight("healthy-midflight-c-notiming", "c")
    healthy_midflight_multi("healthy-midflight-multi-8")
    healthy_moe("healthy-moe-8", 8, "pickle", "2.10")
    healthy_moe("healthy-moe-32-json", 32, "json", "2.9")
    healthy_coalesced("healthy-coalesced-8", 8, "pickle", "2.10")
    healthy_coalesced("healthy-coalesced-3-json", 3, "json", "2.7")
    healthy_batched_p2p("healthy-batched-p2p-4", 4, "pickle", "2.10")
    healthy_batched_p2p("healthy-batched-p2p-8-json", 8, "json", "2.8")
    pt_batched_send_recv("pt-batched-send-recv-1", [[2, 3]], True)
    pt_batched_send_recv("pt-batched-send-recv-3", [[2, 3], [5, 5], [1]], False)
    pt_individual_send_recv("pt-individual-send-recv", [[2, 3], [5, 5], [1]])
    pt_allgather_uneven("pt-allgather-uneven", True)
    pt_coalescing_manager("pt-coalescing-manager")
    pt_trace_while_active("pt-trace-while-active-full", True, False)
    pt_trace_while_active("pt-trace-while-active-only", False, True)
    pt_timeout_dumps("pt-timeout-dumps", True)
    pt_timeout_stuck_ranks("pt-timeout-stuck-ranks")
    pt_cases()
    mm_type("mm-type-8")
    mm_size3("mm-size-3")
    mm_size2("mm-size-2")
    mm_dtype_in("mm-dtype-in-8")
    mm_coalesced_count("mm-coalesced-count")
    mm_coalesced_op("mm-coalesced-op")
    mm_a2a_totals("mm-a2a-totals")
    mm_p2p_size("mm-p2p-size-8")
    dl_pair("dl-pair")
    dl_tp_emb("dl-tp-emb")
    dl_three("dl-three")
    pg_extra_status("pg-extra-status")
    pg_unknown_lagging("pg-unknown-lagging-active")
    pg_unknown_config("pg-unknown-config")
    pg_status_only_diff("pg-status-only-active")
    old_format("old-format-2.2", "2.2")
    old_format("old-format-2.3", "2.3")
    dl_three_nobystander("dl-three-nobystander")
    dl_pair_bystanders("dl-pair-bystanders")
    dl_pair_one_bystander("dl-pair-one-bystander")
    cpu_bystander_ahead("cpu-bystander-ahead")
    gpu_bystander_ahead("gpu-bystander-ahead")
    pg_status_only_world_used("pg-status-only-active-world-used")
    pg_status_only_full("pg-status-only-ring5")
    pg_unknown_lagging_noextra("pg-unknown-lagging-active-noextra")
    cpu_first_variants()
    healthy_midflight_active("healthy-midflight-active")
    cpu_two_tp("cpu-two-tp")
    cpu_chain("cpu-chain")
    pp_dead("pp-dead-stage2")
    mm_split("mm-split-2v2")
    healthy_pp_active_counters("healthy-pp-active-counters", "pickle")
    healthy_pp_active_counters("healthy-pp-noentries-counters", "json", entries=False)
    healthy_pp_mixed_last("healthy-pp-mixed-last-active", "pickle")
    healthy_pp_mixed_last("healthy-pp-mixed-last-noentries", "json", entries=False)
    healthy_pp_mixed_last_full("healthy-pp-mixed-last-ring")
    with open(os.path.join(OUT, "truth.json"), "w") as f:
        json.dump(TRUTH, f, indent=1)

if __name__ == "__main__":
    main()
