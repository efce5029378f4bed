#!/usr/bin/env python3
"""gen-pytorch-hard2.py — a second break-it pass's hang kinds as PyTorch
Flight Recorder dumps, each with its ground truth built in.

    tests/gen-pytorch-hard2.py OUTDIR   # OUTDIR/NAME/ per case, OUTDIR/truth.json

On top of gen-pytorch-hard.py's kinds: cascades through tensor, pipeline
and data parallel groups; two faults at once (a CPU hang and a GPU error, a
dead rank and a CPU hang, in one group and in two); 1F1B and interleaved
pipelines with batched isend/irecv (nccl:coalesced) where a stage stops;
stragglers; groups created in different orders on different ranks; one-
member groups, odd ranks strings, seqs near 2^40, empty entries, mixed
PyTorch versions and forms across ranks, entries missing fields; barrier,
split, gather and scatter with their root-only sizes, uneven *_v and
all-to-all with zero-sized parts.  tests/e2e/pytorch-hard.sh checks
fr-analyze against truth.json."""
import importlib.util, json, os, pickle, shutil, sys, copy
HERE = os.path.dirname(os.path.abspath(__file__))
def load(n, p):
    s = importlib.util.spec_from_file_location(n, p); m = importlib.util.module_from_spec(s); s.loader.exec_module(m); return m
gk = load("gk", os.path.join(HERE, "gen-pytorch-kinds.py"))
_argv = sys.argv
sys.argv = [sys.argv[0], os.devnull]
gh = load("gh", os.path.join(HERE, "gen-pytorch-hard.py"))
sys.argv = _argv
Job = gk.Job
OUT = sys.argv[1] if len(sys.argv) > 1 else "pytorch-hard2"
TRUTH = {}

def T(status, root, lag=None, alt_root=None, note=""):
    return {"status": status, "root": sorted(root), "lag": None if lag is None else sorted(lag),
            "alt_root": alt_root, "note": note}

def write(name, job, form="pickle", fmt="nccl_trace_rank_%d", truth=None, missing=(), mutate=None, perrank=None, **kw):
    d = os.path.join(OUT, name)
    shutil.rmtree(d, ignore_errors=True); os.makedirs(d)
    for p in job.procs:
        if p.rank in missing: continue
        k = dict(kw)
        if perrank: k.update(perrank(p.rank))
        f_ = k.pop("form", form)
        doc = p.document(f_ == "json", **k)
        if mutate: doc = mutate(p.rank, doc)
        path = os.path.join(d, fmt % p.rank + (".json" if f_ == "json" and not fmt.endswith(".json") else ""))
        if f_ == "json":
            with open(path, "w") as f: json.dump(doc, f, sort_keys=True, separators=(",", ":")); f.write("\n")
        else:
            with open(path, "wb") as f: pickle.dump(doc, f, protocol=2)
    TRUTH[name] = truth

# ------------------------------------------------------------ 3D layout
def three_d(t, p, d, version="2.10", timing=False):
    """rank = stage*(t*d) + dp*t + tp."""
    n = t * p * d
    job = Job(n, version=version, timing=timing)
    R = lambda s, j, k: s * t * d + j * t + k
    job.gloo()
    tps = {(s, j): job.group([R(s, j, k) for k in range(t)], "TENSOR_MODEL_PARALLEL_GROUP") for s in range(p) for j in range(d)}
    job.gloo()
    pps = {(j, k): job.group([R(s, j, k) for s in range(p)], "PIPELINE_MODEL_PARALLEL_GROUP") for j in range(d) for k in range(t)}
    job.gloo(2)
    dps = {(s, k): job.group([R(s, j, k) for j in range(d)], "DATA_PARALLEL_GROUP") for s in range(p) for k in range(t)}
    job.coll(job.world, "all_reduce_barrier", 1, dtype="Float")
    return job, R, tps, pps, dps

ACT = 4096 * 1024

def step3d(job, R, tps, pps, dps, t, p, d, fault=None, mode="blocking"):
    """fwd over stages, bwd, DP all-reduce.  fault=(s,j,k): that rank stops
    before its fwd TP all-reduce.  blocking: every op blocks its rank's CPU
    (a rank that has an incomplete op does nothing after it)."""
    blocked = set()   # ranks whose CPU is stuck (in NCCL wait or outside)
    if fault:
        X = R(*fault); blocked_out = {X}
    else:
        X = None; blocked_out = set()
    st = lambda ok: "completed" if ok else "scheduled"
    # track per rank if it can still proceed
    def can(r): return r not in blocked and r not in blocked_out
    for j in range(d):
        # forward
        for s in range(p):
            ranks = [R(s, j, k) for k in range(t)]
            if s > 0:
                for k in range(t):
                    src, dst = R(s - 1, j, k), R(s, j, k)
                    sp, dp_ = can(src), can(dst)
                    if not sp and not dp_: continue
                    ok = sp and dp_
                    tk = job.tick(); g = pps[(j, k)]; gr = job.members(g)
                    if sp: job.procs[src].p2p(g, "send", gr.index(dst), ACT, "BFloat16", st(ok), tk)
                    if dp_: job.procs[dst].p2p(g, "recv", gr.index(src), ACT, "BFloat16", st(ok), tk)
                    if not ok:
                        if sp: blocked.add(src)
                        if dp_: blocked.add(dst)
            # TP all-reduce (fault point)
            live = [r for r in ranks if can(r)]
            if live:
                ok = len(live) == len(ranks)
                job.coll(tps[(s, j)], "all_reduce", [[4096, 1024]], skip=set(ranks) - set(live), state=st(ok))
                if not ok: blocked.update(live)
        # backward
        for s in range(p - 1, -1, -1):
            ranks = [R(s, j, k) for k in range(t)]
            if s < p - 1:
                for k in range(t):
                    src, dst = R(s + 1, j, k), R(s, j, k)
                    sp, dp_ = can(src), can(dst)
                    if not sp and not dp_: continue
                    ok = sp and dp_
                    tk = job.tick(); g = pps[(j, k)]; gr = job.members(g)
                    if sp: job.procs[src].p2p(g, "send", gr.index(dst), ACT, "BFloat16", st(ok), tk)
                    if dp_: job.procs[dst].p2p(g, "recv", gr.index(src), ACT, "BFloat16", st(ok), tk)
                    if not ok:
                        if sp: blocked.add(src)
                        if dp_: blocked.add(dst)
            live = [r for r in ranks if can(r)]
            if live:
                ok = len(live) == len(ranks)
                job.coll(tps[(s, j)], "all_reduce", [[4096, 1024]], skip=set(ranks) - set(live), state=st(ok))
                if not ok: blocked.update(live)
    # DP
    for (s, k), g in dps.items():
        ranks = job.members(g)
        live = [r for r in ranks if can(r)]
        if live:
            ok = len(live) == len(ranks)
            job.coll(g, "all_reduce", 16777216, dtype="Float", skip=set(ranks) - set(live), state=st(ok))
            if not ok: blocked.update(live)

def cascade(name, t, p, d, fault, steps=3, form="pickle", version="2.10", **kw):
    job, R, tps, pps, dps = three_d(t, p, d, version)
    for _ in range(steps): step3d(job, R, tps, pps, dps, t, p, d)
    step3d(job, R, tps, pps, dps, t, p, d, fault=fault)
    X = R(*fault)
    write(name, job, form, truth=T("hang", [X], [X], note="cascade TP->PP->DP, fault %s" % (fault,)), **kw)

# ------------------------------------------------------------ two faults
def megatron(n, tp, version="2.10", timing=False):
    return gh.megatron(n, tp, version, timing)

def two_cpu_gpu_diff(name, n=16, tp=4, a=5, b=10, form="pickle", **kw):
    """a CPU-hangs in its TP group; b's GPU stops in another TP group."""
    job, tps, dps = megatron(n, tp, timing=True)
    for s in range(3): gh.full_step(job, tps, dps)
    ga, gb = gh.grp_of(tps, job, a), gh.grp_of(tps, job, b)
    gh.gpu_err(job, gb, [b], n=2)
    job.coll(ga, "all_reduce", [[4096, 1024]], skip={a}, state="started")
    for g in tps:
        if g not in (ga, gb):
            for _ in range(3): gh.tp_ops(job, g)
    write(name, job, form, truth=T("hang", [a, b], note="CPU hang %d + GPU error %d" % (a, b)), **kw)

def two_cpu_gpu_same(name, n=8, tp=8, a=2, b=5, form="pickle", **kw):
    """same TP group: b's GPU stops at seq s (s, s+1 scheduled, others done);
    a then never enqueues s+2 (CPU hang), the others wait at s+2."""
    job, tps, dps = megatron(n, tp, timing=True)
    for s in range(3): gh.full_step(job, tps, dps)
    g = gh.grp_of(tps, job, a); assert g == gh.grp_of(tps, job, b)
    for i in range(2): job.coll(g, "all_reduce", [[8192, 1024]])
    ov = {b: {"state": "scheduled"}}
    job.coll(g, "all_reduce", [[8192, 1024]], over=ov)
    job.coll(g, "all_reduce", [[8192, 1024]], over=ov)
    job.coll(g, "all_reduce", [[8192, 1024]], state="started", skip={a, b})
    write(name, job, form, truth=T("hang", [a, b], alt_root=None, note="GPU err %d then CPU hang %d, same group" % (b, a)), **kw)

def two_dead_cpu(name, n=16, tp=4, a=1, b=13, form="pickle", same=False, **kw):
    job, tps, dps = megatron(n, tp)
    for s in range(3): gh.full_step(job, tps, dps)
    ga, gb = gh.grp_of(tps, job, a), gh.grp_of(tps, job, b)
    if same:
        assert ga == gb
        job.coll(ga, "all_reduce", [[4096, 1024]], skip={a, b}, state="scheduled")
    else:
        job.coll(ga, "all_reduce", [[4096, 1024]], skip={a}, state="scheduled")
        job.coll(gb, "all_reduce", [[4096, 1024]], skip={b}, state="scheduled")
    for g in tps:
        if g not in (ga, gb):
            for _ in range(3): gh.tp_ops(job, g)
    stuck = set(job.members(ga)) | set(job.members(gb))
    for g in dps:
        job.coll(g, "all_reduce", 16777216, dtype="Float", state="scheduled", skip=stuck)
    write(name, job, form, truth=T("hang", [a, b], note="dead %d + CPU hang %d" % (a, b)), missing={a}, **kw)

def two_cpu_diff_groups_world(name, form="pickle", **kw):
    """64 ranks TP8 x DP8: rank 9 stops in TP1, rank 50 stops in TP6; DP waits."""
    job, tps, dps = megatron(64, 8)
    for s in range(2): gh.full_step(job, tps, dps)
    bads = {9, 50}
    stuck = set()
    for g in tps:
        m = set(job.members(g)); bb = m & bads
        if bb:
            gh.tp_ops(job, g, skip=bb, state="scheduled"); stuck |= m
        else:
            for _ in range(3): gh.tp_ops(job, g)
    for g in dps:
        job.coll(g, "all_reduce", 16777216, dtype="Float", state="scheduled", skip=stuck)
    write(name, job, form, truth=T("hang", sorted(bads)), **kw)

# ------------------------------------------------------------ p2p pipelines
def one_f1b(name, S, M, bad=None, stop_mb=None, form="pickle", size_bad=None, interleave=False, **kw):
    """1F1B on one PP group of S ranks with batched isend/irecv
    (nccl:coalesced). Each 'slot' every rank posts one batch.  In a slot,
    rank r's batch: fwd recv from r-1 + send to r+1 (stage ends drop one),
    then a bwd batch: recv from r+1, send to r-1.  interleave: ring (last
    sends to first in fwd, first to last in bwd), virtual stages.
    bad stops before its batch of microbatch stop_mb (fwd)."""
    job = Job(S)
    job.gloo()
    pp = job.group(range(S), "PIPELINE_MODEL_PARALLEL_GROUP")
    job.coll(job.world, "all_reduce_barrier", 1, dtype="Float")
    act = 1024 * 2048
    def fwd(r):
        m = []
        if r > 0 or interleave: m.append(("recv", (r - 1) % S, act, "BFloat16"))
        if r < S - 1 or interleave: m.append(("send", (r + 1) % S, act, "BFloat16"))
        return m
    def bwd(r):
        m = []
        if r < S - 1 or interleave: m.append(("recv", (r + 1) % S, act, "BFloat16"))
        if r > 0 or interleave: m.append(("send", (r - 1) % S, act, "BFloat16"))
        return m
    stopped = False
    for mb in range(M):
        for kind, fn in (("f", fwd), ("b", bwd)):
            tk = job.tick()
            if bad is not None and mb == stop_mb and kind == "f":
                # bad never posts; its neighbours' batches that touch bad stay scheduled; others complete only if they don't touch bad
                nb = {(bad - 1) % S, (bad + 1) % S}
                for r in range(S):
                    if r == bad: continue
                    ms = fn(r)
                    touches = any(x[1] == bad for x in ms)
                    job.procs[r].coalesced(pp, ms, "coalesced", "scheduled" if touches else "completed", tk, p2p=True) if ms else None
                stopped = True
                break
            for r in range(S):
                ms = fn(r)
                if not ms: continue
                if size_bad and mb == size_bad[0] and kind == "f":
                    ms = [(o, pe, size_bad[2] if (r == size_bad[1] and o == "send") else n_, dt) for (o, pe, n_, dt) in ms]
                st = "scheduled" if (size_bad and mb == size_bad[0] and kind == "f") else "completed"
                job.procs[r].coalesced(pp, ms, "coalesced", st, tk, p2p=True)
            if size_bad and mb == size_bad[0]:
                stopped = True; break
        if stopped: break
    if not stopped:
        job.coll(job.world, "all_reduce", 1, dtype="Float")
    if bad is not None:
        tr = T("hang", [bad], note="1F1B batched p2p, stage %d stops" % bad)
    elif size_bad:
        tr = T("mismatch", [], alt_root=sorted({size_bad[1], (size_bad[1] + 1) % S}), note="send size differs inside batch")
    else:
        tr = T("healthy", [])
    write(name, job, form, truth=tr, **kw)

def pp_multi_tp(name, t, p, bad_stage, bad_k, form="pickle", **kw):
    """PP with TP: per (tp k) a PP group; each mb: fwd p2p (individual), TP AR.
    rank at (bad_stage, bad_k) stops before its fwd send at last mb: its
    next stage's same-k rank waits in recv; bad's TP peers' ... bad did its TP AR."""
    job, R, tps, pps, dps = three_d(t, p, 1)
    for mb in range(4):
        for s in range(p):
            if s > 0:
                for k in range(t): job.p2p(pps[(0, k)], R(s - 1, 0, k), R(s, 0, k), ACT)
            job.coll(tps[(s, 0)], "all_reduce", [[4096, 1024]])
    # last mb: up to bad_stage ok, then bad doesn't send
    X = R(bad_stage, 0, bad_k)
    for s in range(bad_stage + 1):
        if s > 0:
            for k in range(t): job.p2p(pps[(0, k)], R(s - 1, 0, k), R(s, 0, k), ACT)
        job.coll(tps[(s, 0)], "all_reduce", [[4096, 1024]])
    s = bad_stage + 1
    for k in range(t):
        if k == bad_k:
            tk = job.tick(); g = pps[(0, k)]
            job.procs[R(s, 0, k)].p2p(g, "recv", s - 1, ACT, "BFloat16", "scheduled", tk)
        else:
            job.p2p(pps[(0, k)], R(s - 1, 0, k), R(s, 0, k), ACT)
    job.coll(tps[(s, 0)], "all_reduce", [[4096, 1024]], skip={R(s, 0, bad_k)}, state="scheduled")
    write(name, job, form, truth=T("hang", [X], note="PP+TP: stage %d rank %d never sends" % (bad_stage, X)), **kw)

# ------------------------------------------------------------ straggler
def straggler(name, n=8, tp=4, slow=6, lag_tp=2, lag_dp=1, late_ns=40_000_000, form="pickle", **kw):
    """rank slow is late ~40 ms at every op and, at dump time, has not yet
    enqueued its TP group's last lag_tp ops and its DP group's last lag_dp;
    the others enqueued them (started).  Timing on."""
    old = gk.STEP_NS; gk.STEP_NS = 100_000_000
    job, tps, dps = megatron(n, tp, timing=True)
    for s in range(6): gh.full_step(job, tps, dps)
    gs = gh.grp_of(tps, job, slow)
    for g in tps:
        for i in range(3):
            if g == gs and i >= 3 - lag_tp:
                gh.tp_ops(job, g, skip={slow}, state="started")
            else:
                gh.tp_ops(job, g)
    for g in dps:
        if slow in job.members(g) and lag_dp:
            job.coll(g, "all_reduce", 16777216, dtype="Float", skip={slow}, state="started")
        elif set(job.members(g)) & set(job.members(gs)):
            job.coll(g, "all_reduce", 16777216, dtype="Float", skip=set(job.members(gs)), state="started")
        else:
            job.coll(g, "all_reduce", 16777216, dtype="Float")
    gk.STEP_NS = old
    def mut(r, doc):
        for e in doc.get("entries", []):
            if r == slow:
                e["time_created_ns"] += late_ns
                if e["time_discovered_started_ns"]: e["time_discovered_started_ns"] += late_ns
            if e["time_discovered_completed_ns"]:
                e["time_discovered_completed_ns"] += late_ns
        return doc
    write(name, job, form, truth=T("straggler", [slow], note="straggler %d; a hang verdict blaming only %d is acceptable" % (slow, slow)), mutate=mut, **kw)

# ------------------------------------------------------------ pg_id order differs
def pgorder(name, n=8, missing_op=None, form="pickle", **kw):
    """groups A (all), B (evens), C (odds), D ([0..n/2)) created in name
    order but pg_ids assigned in a different order on odd ranks."""
    job = Job(n)
    job.gloo()
    A = job.group(range(n), "GROUP_A")
    B = job.group(range(0, n, 2), "GROUP_B")
    C = job.group(range(1, n, 2), "GROUP_C")
    D = job.group(range(n // 2), "GROUP_D")
    for p in job.procs:
        if p.rank % 2:
            names = [nm for nm in p.pgs if nm != "0"]
            ids = sorted(p.pgs[nm].pg_id for nm in names)
            for nm, i in zip(reversed(names), ids): p.pgs[nm].pg_id = i
    for i in range(5):
        for g in (A, B, C, D): job.coll(g, "all_reduce", 2048 * (1 + i % 2))
        job.coll(job.world, "broadcast", 16)
    if missing_op is not None:
        g = {"A": A, "B": B, "C": C, "D": D}[missing_op[0]]
        job.coll(g, "all_reduce", 2048, skip={missing_op[1]}, state="scheduled")
        tr = T("hang", [missing_op[1]], [missing_op[1]])
    else:
        tr = T("healthy", [])
    write(name, job, form, truth=tr, **kw)

# ------------------------------------------------------------ odd groups/fields
def singleton_groups(name, form="pickle", **kw):
    """TP size 1 groups ([r]) used a lot, DP over all; rank 3 lags in DP."""
    job, tps, dps = megatron(4, 1)
    for s in range(4): gh.full_step(job, tps, dps)
    for g in tps: gh.tp_ops(job, g)
    job.coll(dps[0], "all_reduce", 16777216, dtype="Float", skip={3}, state="scheduled")
    write(name, job, form, truth=T("hang", [3], [3]), **kw)

def singleton_healthy(name, **kw):
    job, tps, dps = megatron(4, 1)
    for s in range(4): gh.full_step(job, tps, dps)
    write(name, job, "pickle", truth=T("healthy", []), **kw)

def ranks_all(name, hang=True):
    job = Job(4); job.gloo()
    tp = job.group(range(4), "TENSOR_MODEL_PARALLEL_GROUP")
    for i in range(5): job.coll(job.world, "all_reduce", 4096); job.coll(tp, "all_reduce", 4096)
    if hang: job.coll(job.world, "all_reduce", 4096, skip={2}, state="scheduled")
    def mut(r, doc):
        doc["pg_config"]["0"]["ranks"] = "all"
        return doc
    write(name, job, "pickle", truth=T("hang", [2], [2]) if hang else T("healthy", []), mutate=mut)

def ranks_odd(name):
    """ranks strings with odd spacing/formats: '[0,1, 2 ,3]' and '(0, 1, 2, 3)'."""
    job = Job(4); job.gloo()
    tp = job.group(range(4), "TENSOR_MODEL_PARALLEL_GROUP")
    for i in range(5): job.coll(tp, "all_reduce", 4096)
    job.coll(tp, "all_reduce", 4096, skip={1}, state="scheduled")
    def mut(r, doc):
        doc["pg_config"]["2"]["ranks"] = "[0,1, 2 ,3]" if r % 2 else "[0, 1, 2, 3]"
        return doc
    write(name, job, "pickle", truth=T("hang", [1], [1], note="ranks string spacing differs between ranks"), mutate=mut)

def dup_names(name):
    """two groups with the same name '5' but different desc on different ranks
    (ranks 0-1 call it TP, 2-3 call it DP; same member list [0..3])?  Use
    distinct member lists: ranks 0,1 group name '2' desc TP ranks [0,1];
    ranks 2,3 group name '2' desc DP ranks [2,3].  Rank 3 lags in its '2'."""
    job = Job(4); job.gloo()
    a = job.group([0, 1], "TENSOR_MODEL_PARALLEL_GROUP")
    for r in (2, 3):
        job.procs[r].pgs[a] = gk.PG(a, "DATA_PARALLEL_GROUP", [2, 3], len(job.procs[r].pgs))
    for i in range(4):
        job.coll(job.world, "all_reduce", 16)
        t_ = job.tick()
        for r in range(4): job.procs[r].coll(a, "all_reduce", 4096, 4096, "BFloat16", "BFloat16", "completed", t_)
    t_ = job.tick()
    for r in (0, 1, 2): job.procs[r].coll(a, "all_reduce", 4096, 4096, "BFloat16", "BFloat16", "completed" if r < 2 else "scheduled", t_)
    write(name, job, "pickle", truth=T("hang", [3], [3], note="same name, different members/desc"))

def big_seq(name, hang=True):
    """collective_seq_id near 2^40."""
    job = Job(4); job.gloo()
    tp = job.group(range(4), "TENSOR_MODEL_PARALLEL_GROUP")
    for p in job.procs:
        p.pgs[tp].coll = 2 ** 40; p.pgs["0"].coll = 2 ** 40 + 7
    for i in range(5): job.coll(tp, "all_reduce", 4096); job.coll(job.world, "all_reduce", 8)
    if hang: job.coll(tp, "all_reduce", 4096, skip={0}, state="scheduled")
    write(name, job, "pickle", truth=T("hang", [0], [0]) if hang else T("healthy", []), ring=6)

def empty_entries(name):
    """rank 2's dump has entries: [] and pg_status says it completed all 5;
    others enqueued a 6th (scheduled): rank 2 lags."""
    job = Job(4); job.gloo()
    tp = job.group(range(4), "TENSOR_MODEL_PARALLEL_GROUP")
    for i in range(5): job.coll(tp, "all_reduce", 4096)
    job.coll(tp, "all_reduce", 4096, skip={2}, state="scheduled")
    def mut(r, doc):
        if r == 2: doc["entries"] = []
        return doc
    write(name, job, "pickle", truth=T("hang", [2], [2]), mutate=mut)

def empty_entries_all_healthy(name):
    job = Job(4); job.gloo()
    tp = job.group(range(4), "TENSOR_MODEL_PARALLEL_GROUP")
    for i in range(5): job.coll(tp, "all_reduce", 4096)
    def mut(r, doc):
        doc["entries"] = []
        return doc
    write(name, job, "pickle", truth=T("healthy", []), mutate=mut)

def missing_fields(name):
    """entries lose input_dtypes/output_sizes/time_* on rank 1, frames on all."""
    job = Job(4)
    for i in range(5): job.coll(job.world, "all_reduce", 4096)
    job.coll(job.world, "all_reduce", 4096, skip={3}, state="scheduled")
    def mut(r, doc):
        for e in doc["entries"]:
            e.pop("frames", None)
            if r == 1:
                for k in ("input_dtypes", "output_sizes", "output_dtypes", "time_discovered_started_ns", "thread_id", "duration_ms"):
                    e.pop(k, None)
        return doc
    write(name, job, "pickle", truth=T("hang", [3], [3]), mutate=mut)

def mixed_versions(name, hang=True, form_mix=False):
    """ranks 0-3 write 2.4 (JSON), 4-7 write 2.10 (pickle)."""
    job, tps, dps = megatron(8, 4)
    for s in range(3): gh.full_step(job, tps, dps)
    if hang:
        gh.tp_ops(job, tps[1], skip={6}, state="scheduled")
        for _ in range(3): gh.tp_ops(job, tps[0])
        for g in dps: job.coll(g, "all_reduce", 16777216, dtype="Float", state="scheduled", skip={4, 5, 6, 7})
    pr = (lambda r: {"version": "2.4", "form": "json"} if r < 4 else {"version": "2.10"}) if form_mix else \
         (lambda r: {"version": "2.4"} if r < 4 else {"version": "2.10"})
    write(name, job, "pickle", truth=T("hang", [6], [6]) if hang else T("healthy", []), perrank=pr)

# ------------------------------------------------------------ op kinds
def barrier_hang(name, op="barrier", bad=2, n=4):
    job = Job(n)
    for i in range(5):
        job.coll(job.world, "all_reduce", 4096)
        job.coll(job.world, op, 1, dtype="Float")
    job.coll(job.world, op, 1, dtype="Float", skip={bad}, state="scheduled")
    write(name, job, "pickle", truth=T("hang", [bad], [bad]))

def split_hang(name, bad=1, n=4):
    """a new_group via nccl:split on the world: bad never calls it."""
    job = Job(n)
    for i in range(3): job.coll(job.world, "all_reduce", 4096)
    job.coll(job.world, "split", None, None)
    job.coll(job.world, "all_reduce", 4096)
    job.coll(job.world, "split", None, None, skip={bad}, state="scheduled")
    write(name, job, "pickle", truth=T("hang", [bad], [bad]))

def split_healthy(name, n=8):
    job = Job(n)
    job.coll(job.world, "all_reduce", 4096)
    job.coll(job.world, "split", None, None)
    g = job.group(range(0, n, 2), "SPLIT_EVEN"); g2 = job.group(range(1, n, 2), "SPLIT_ODD")
    for i in range(3): job.coll(g, "all_reduce", 1024); job.coll(g2, "all_reduce", 1024)
    job.coll(job.world, "split", None, None)
    job.coll(job.world, "all_reduce", 4096)
    write(name, job, "json", truth=T("healthy", []))

def gather_scatter(name, root_local=0, n=8, hang_bad=None):
    job = Job(n); job.gloo()
    g = job.group(range(n), "GATHER_GROUP")
    N = 1000
    for i in range(4):
        job.coll(g, "gather", N, lambda r: [[n, N]] if r == root_local else [])
        job.coll(g, "scatter", lambda r: [[n, N]] if r == root_local else [], N)
        job.coll(g, "all_gather_v", lambda r: 100 + 17 * r, sum(100 + 17 * x for x in range(n)))
        job.coll(g, "reduce_scatter_v", sum(100 + 17 * x for x in range(n)), lambda r: 100 + 17 * r)
    if hang_bad is not None:
        job.coll(g, "gather", N, lambda r: [[n, N]] if r == root_local else [], skip={hang_bad}, state="scheduled")
        tr = T("hang", [hang_bad], [hang_bad])
    else:
        tr = T("healthy", [])
    write(name, job, "pickle", truth=tr)

def gather_root_nonzero_mismatch_free(name):
    """gather where the root's input is [N] and output [[n,N]], others output
    [] -- but a different root on one call (root 3): still no mismatch."""
    n = 4; N = 512
    job = Job(n)
    for i, root in enumerate([0, 3, 1, 2]):
        job.coll(job.world, "gather", N, lambda r, root=root: [[n, N]] if r == root else [])
        job.coll(job.world, "scatter", lambda r, root=root: [[n, N]] if r == root else [], N)
    write(name, job, "json", truth=T("healthy", []))

def v_uneven_zero(name, n=6):
    """all_gather_v / reduce_scatter_v with a zero part on one rank."""
    job = Job(n)
    parts = [0 if r == 2 else 300 + 11 * r for r in range(n)]
    for i in range(3):
        job.coll(job.world, "all_gather_v", lambda r: parts[r], sum(parts))
        job.coll(job.world, "reduce_scatter_v", sum(parts), lambda r: parts[r])
        job.coll(job.world, "all_to_all_v_single", lambda r: parts[r], lambda r: parts[(r + 1) % n])
    write(name, job, "pickle", truth=T("healthy", []))

# ------------------------------------------------------------ rings
def cascade_ring(name, **kw):
    job, R, tps, pps, dps = three_d(2, 4, 2)
    for _ in range(60): step3d(job, R, tps, pps, dps, 2, 4, 2)
    step3d(job, R, tps, pps, dps, 2, 4, 2, fault=(2, 1, 0))
    X = R(2, 1, 0)
    write(name, job, "pickle", truth=T("hang", [X], [X]), **kw)

def main():
    os.makedirs(OUT, exist_ok=True)
    # cascades
    cascade("casc-t2p4d2-s1", 2, 4, 2, (1, 0, 1))
    cascade("casc-t2p4d2-s0", 2, 4, 2, (0, 1, 0))
    cascade("casc-t2p4d2-slast", 2, 4, 2, (3, 0, 0))
    cascade("casc-t4p2d2-active", 4, 2, 2, (1, 1, 2), only_active=True)
    cascade("casc-t2p2d4-json24", 2, 2, 4, (0, 3, 1), form="json", version="2.4")
    cascade("casc-t4p4d4-64", 4, 4, 4, (2, 1, 3))
    cascade("casc-t1p4d2", 1, 4, 2, (2, 0, 0))
    cascade("casc-t2p3d2-active-json", 2, 3, 2, (1, 1, 1), form="json", only_active=True)
    cascade_ring("casc-ring2000-t2p4d2", ring=2000)
    cascade_ring("casc-ring40-t2p4d2", ring=40)
    # two faults
    two_cpu_gpu_diff("two-cpu-gpu-diff-16")
    two_cpu_gpu_diff("two-cpu-gpu-diff-16-active", only_active=True)
    two_cpu_gpu_diff("two-cpu-gpu-diff-8-json", n=8, tp=4, a=1, b=6, form="json")
    two_cpu_gpu_same("two-cpu-gpu-same-8")
    two_cpu_gpu_same("two-cpu-gpu-same-8-active", only_active=True)
    two_dead_cpu("two-dead-cpu-diff-16")
    two_dead_cpu("two-dead-cpu-diff-16-active-json", form="json", only_active=True)
    two_dead_cpu("two-dead-cpu-same-8", n=8, tp=4, a=1, b=2, same=True)
    two_cpu_diff_groups_world("two-cpu-64")
    # p2p pipelines
    one_f1b("pp1f1b-healthy-4", 4, 6)
    one_f1b("pp1f1b-stop2-4", 4, 6, bad=2, stop_mb=4)
    one_f1b("pp1f1b-stop0-4", 4, 6, bad=0, stop_mb=3)
    one_f1b("pp1f1b-stop3-4-active", 4, 6, bad=3, stop_mb=3, only_active=True)
    one_f1b("pp1f1b-stop5-8-json", 8, 6, bad=5, stop_mb=2, form="json")
    one_f1b("ppinter-healthy-4", 4, 6, interleave=True)
    one_f1b("ppinter-stop1-4", 4, 6, bad=1, stop_mb=4, interleave=True)
    one_f1b("ppinter-stop3-8-active", 8, 6, bad=3, stop_mb=4, interleave=True, only_active=True)
    one_f1b("pp1f1b-size-4", 4, 6, size_bad=(3, 1, 2048 * 512))
    one_f1b("ppinter-size-4", 4, 6, size_bad=(3, 2, 1000), interleave=True)
    pp_multi_tp("pptp-t2p4-s1", 2, 4, 1, 1)
    pp_multi_tp("pptp-t4p2-s0-active", 4, 2, 0, 3, only_active=True)
    # stragglers
    straggler("strag-8")
    straggler("strag-8-lag1", lag_tp=1, lag_dp=0)
    straggler("strag-16-json", n=16, tp=4, slow=9, lag_tp=3, lag_dp=1, form="json")
    straggler("strag-8-active", only_active=True)
    # pg order
    pgorder("pgorder-healthy-8")
    pgorder("pgorder-miss-C-5", missing_op=("C", 5))
    pgorder("pgorder-miss-A-3-json", missing_op=("A", 3), form="json")
    pgorder("pgorder-miss-D-1-active", missing_op=("D", 1), only_active=True)
    pgorder("pgorder-miss-B-4-16", n=16, missing_op=("B", 4))
    # odd
    singleton_groups("singleton-tp1-lag3")
    singleton_groups("singleton-tp1-lag3-active", only_active=True)
    singleton_healthy("singleton-healthy")
    ranks_all("ranks-all-hang")
    ranks_all("ranks-all-healthy", hang=False)
    ranks_odd("ranks-odd-spacing")
    dup_names("dup-names-desc")
    big_seq("bigseq-hang")
    big_seq("bigseq-healthy", hang=False)
    empty_entries("empty-entries-r2")
    empty_entries_all_healthy("empty-entries-all-healthy")
    missing_fields("missing-fields")
    mixed_versions("mixver-hang")
    mixed_versions("mixver-healthy", hang=False)
    mixed_versions("mixver-json-pickle-hang", form_mix=True)
    # ops
    barrier_hang("barrier-hang")
    barrier_hang("ar-barrier-hang-8", "all_reduce_barrier", 7, 8)
    split_hang("split-hang")
    split_healthy("split-healthy-json")
    gather_scatter("gather-scatter-healthy")
    gather_scatter("gather-scatter-root3-healthy", root_local=3)
    gather_scatter("gather-hang-r5", hang_bad=5)
    gather_scatter("gather-hang-root-missing", root_local=2, hang_bad=2)
    gather_root_nonzero_mismatch_free("gather-rotating-root")
    v_uneven_zero("v-uneven-zero")

def one_f1b_next(name, S, M, bad, stop_mb, form="pickle", **kw):
    """as one_f1b, but ranks whose fault-slot batch completed go on and post
    their bwd batch of the same microbatch, which waits (scheduled)."""
    job = Job(S); job.gloo()
    pp = job.group(range(S), "PIPELINE_MODEL_PARALLEL_GROUP")
    job.coll(job.world, "all_reduce_barrier", 1, dtype="Float")
    act = 1024 * 2048
    fwd = lambda r: ([("recv", r - 1, act, "BFloat16")] if r > 0 else []) + ([("send", r + 1, act, "BFloat16")] if r < S - 1 else [])
    bwd = lambda r: ([("recv", r + 1, act, "BFloat16")] if r < S - 1 else []) + ([("send", r - 1, act, "BFloat16")] if r > 0 else [])
    for mb in range(M):
        for fn in (fwd, bwd):
            if mb == stop_mb and fn is fwd:
                tk = job.tick(); done = []
                for r in range(S):
                    if r == bad: continue
                    ms = fn(r); touches = any(x[1] == bad for x in ms)
                    job.procs[r].coalesced(pp, ms, "coalesced", "scheduled" if touches else "completed", tk, p2p=True)
                    if not touches: done.append(r)
                tk = job.tick()
                for r in done:
                    job.procs[r].coalesced(pp, bwd(r), "coalesced", "scheduled", tk, p2p=True)
                write(name, job, form, truth=T("hang", [bad], note="1F1B batched, others post next batch"), **kw)
                return
            tk = job.tick()
            for r in range(S):
                job.procs[r].coalesced(pp, fn(r), "coalesced", "completed", tk, p2p=True)

def pp_individual(name, S, bad, form="pickle", **kw):
    """individual isend/irecv chain (not batched): rank bad never posts its
    recv from bad-1 nor later ops; bad-1's send scheduled; others before
    completed and idle; after bad: recv from bad scheduled on bad+1."""
    job = Job(S); job.gloo()
    pp = job.group(range(S), "PIPELINE_MODEL_PARALLEL_GROUP")
    job.coll(job.world, "all_reduce_barrier", 1, dtype="Float")
    for mb in range(5):
        for s in range(S - 1): job.p2p(pp, s, s + 1, 4096)
    for s in range(S - 1):
        if s + 1 == bad: job.p2p(pp, s, s + 1, 4096, state="scheduled", skip={bad})
        elif s == bad:
            tk = job.tick(); job.procs[s + 1].p2p(pp, "recv", s, 4096, "BFloat16", "scheduled", tk); break
        else: job.p2p(pp, s, s + 1, 4096)
    write(name, job, form, truth=T("hang", [bad]), **kw)

def a2a_zero_input(name, n=4, z=2):
    """MoE all_to_all_single: rank z sends no tokens at all (input 0 x H) but
    receives some; group totals agree; all completed."""
    job = Job(n); job.gloo(); ep = job.group(range(n), "EXPERT_MODEL_PARALLEL_GROUP")
    H = 1024
    for s in range(4):
        a = [[0 if i == z else 64 * (1 + (i + j + s) % 3) for j in range(n)] for i in range(n)]
        job.coll(ep, "all_to_all_single", lambda r, a=a: [[sum(a[r]), H]], lambda r, a=a: [[sum(a[i][r] for i in range(n)), H]])
    job.coll(job.world, "all_reduce", 1, dtype="Float")
    write(name, job, "pickle", truth=T("healthy", [], note="a rank routing zero tokens"))

def mixver_real(name, hang=True):
    """ranks 0-3 write 2.2-style entries (no input_dtypes/output_dtypes, no
    pg_status), ranks 4-7 2.10."""
    job, tps, dps = megatron(8, 4)
    for s in range(3): gh.full_step(job, tps, dps)
    if hang:
        gh.tp_ops(job, tps[1], skip={6}, state="scheduled")
        for _ in range(3): gh.tp_ops(job, tps[0])
        for g in dps: job.coll(g, "all_reduce", 16777216, dtype="Float", state="scheduled", skip={4, 5, 6, 7})
    def mut(r, doc):
        if r < 4:
            doc["version"] = "2.2"; doc.pop("pg_status", None)
            for e in doc.get("entries", []):
                e.pop("input_dtypes", None); e.pop("output_dtypes", None)
        return doc
    write(name, job, "pickle", truth=T("hang", [6], [6]) if hang else T("healthy", []), mutate=mut)

def missing_one_field(name, field, hang_rank=3):
    job = Job(4)
    for i in range(5): job.coll(job.world, "all_reduce", 4096)
    job.coll(job.world, "all_reduce", 4096, skip={hang_rank}, state="scheduled")
    def mut(r, doc):
        if r == 1:
            for e in doc["entries"]: e.pop(field, None)
        return doc
    write(name, job, "pickle", truth=T("hang", [hang_rank], [hang_rank], note="rank 1 lacks %s" % field), mutate=mut)

def ranks_empty(name):
    job = Job(4); job.gloo()
    tp = job.group(range(4), "TENSOR_MODEL_PARALLEL_GROUP")
    for i in range(5): job.coll(job.world, "all_reduce", 4096); job.coll(tp, "all_reduce", 4096)
    job.coll(job.world, "all_reduce", 4096, skip={2}, state="scheduled")
    def mut(r, doc):
        doc["pg_config"]["0"]["ranks"] = "[]"
        return doc
    write(name, job, "pickle", truth=T("hang", [2], [2]), mutate=mut)

def main2():
    one_f1b_next("pp1f1b-stop2-4-next", 4, 6, 2, 4)
    one_f1b_next("pp1f1b-stop1-6-next-json", 6, 6, 1, 3, form="json")
    one_f1b("pp1f1b-stop3-4-full", 4, 6, bad=3, stop_mb=3)
    one_f1b("pp1f1b-stop2-4-active", 4, 6, bad=2, stop_mb=4, only_active=True)
    one_f1b("pp1f1b-stop2-4-ring", 4, 60, bad=2, stop_mb=50, ring=2000)
    pp_individual("pp-indiv-stop2-4", 4, 2)
    pp_individual("pp-indiv-stop3-6", 6, 3)
    a2a_zero_input("a2a-zero-input-4")
    mixver_real("mixver22-hang")
    mixver_real("mixver22-healthy", hang=False)
    missing_one_field("missing-output-dtypes", "output_dtypes")
    missing_one_field("missing-output-sizes", "output_sizes")
    missing_one_field("missing-time-started", "time_discovered_started_ns")
    ranks_empty("ranks-empty-hang")

if __name__ == "__main__":
    main(); main2()
    with open(os.path.join(OUT, "truth.json"), "w") as f:
        json.dump(TRUTH, f, indent=1)
