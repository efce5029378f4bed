#!/usr/bin/env python3
"""gen-pytorch-fr.py — write PyTorch Flight Recorder style dumps of hang
cases C1 (also as a ROCm job's, RCCL in comm_lib_version), C2, C5, C9 and C10
(tests/scenarios/README.md) for flightrec's importer tests.

    tests/gen-pytorch-fr.py OUTDIR      # writes OUTDIR/c1 ... OUTDIR/c10

Each case directory holds one file per rank with the structures PyTorch's
Flight Recorder dumps hold (top level: version, pg_config, pg_status,
comm_lib_version, entries; per entry: record_id, pg_id, process_group,
collective_seq_id, p2p_seq_id, op_id, profiling_name, time_created_ns,
time_discovered_started_ns/completed_ns, input/output sizes and dtypes,
state, is_p2p, retired, timeout_ms, frames, thread fields), built from the
public field lists; older format versions leave out the fields they did not
have yet.  The files are named the way a real job names them, with host
names full of digits, so only the trailing integer is the rank.

The cases mirror tests/scenarios/*.scn, so fr-analyze must give the verdict
of our own dumps of those scenarios.  The output is deterministic: the
committed fixtures in tests/fixtures/pytorch-fr/ are this script's output.
"""
import json
import os
import pickle
import sys

T0 = 1795989600000000000  # wall clock, ns (as PyTorch records it)
STEP_NS = 2000000
TIMEOUT_MS = 600000


def version_tuple(v):
    major, minor = v.split(".")
    return int(major), int(minor)


class Rank:
    """One rank's Flight Recorder ring."""

    def __init__(self, rank, version, pgs, lib="2.21.5"):
        self.rank = rank
        self.lib = lib  # comm_lib_version
        self.version = version
        self.pgs = pgs  # name -> (desc, ranks)
        self.entries = []
        self.coll_seq = {name: 0 for name in pgs}
        self.p2p_seq = {name: 0 for name in pgs}
        self.op_id = {name: 0 for name in pgs}
        self.clock = T0 + rank * 1000

    def group_rank(self, pg):
        return self.pgs[pg][1].index(self.rank)

    def op(self, pg, name, numel, dtype="Float", state="completed", peer=None, out_numel=None):
        v = version_tuple(self.version)
        p2p = name in ("send", "recv")
        self.op_id[pg] += 1
        if p2p:
            self.p2p_seq[pg] += 1
            me = self.group_rank(pg)
            arrow = "->" if name == "send" else "<-"
            pname = "nccl:%s %d%s%d" % (name, me, arrow, peer)
        else:
            self.coll_seq[pg] += 1
            pname = "nccl:" + name
        self.clock += STEP_NS
        created = self.clock
        started = created + 1000 if state in ("started", "completed") else None
        completed = created + 50000 if state == "completed" else None
        out = numel if out_numel is None else out_numel
        e = {
            "frames": [{"name": name, "filename": "train.py", "line": 40 + len(self.entries) % 7}],
            "record_id": len(self.entries),
            "pg_id": int(pg),
            "process_group": (pg, self.pgs[pg][0]),
            "collective_seq_id": self.coll_seq[pg],
            "p2p_seq_id": self.p2p_seq[pg],
            "op_id": self.op_id[pg],
            "profiling_name": pname,
            "time_created_ns": created,
            "input_sizes": [[numel]],
            "input_dtypes": [dtype],
            "output_sizes": [[out]],
            "output_dtypes": [dtype],
            "state": state,
            "time_discovered_started_ns": started,
            "time_discovered_completed_ns": completed,
            "retired": state == "completed",
            "timeout_ms": TIMEOUT_MS,
            "is_p2p": p2p,
            "thread_id": str(140000000000000 + self.rank),
            "thread_name": "pt_main_thread",
        }
        if v < (2, 8):
            del e["thread_id"], e["thread_name"]
        if v < (2, 5):
            del e["is_p2p"]
        if v < (2, 3):
            del e["op_id"]
        self.entries.append(e)

    def document(self, as_json):
        status = {}
        for pg in self.pgs:
            seqs = [e for e in self.entries if e["process_group"][0] == pg and not e["profiling_name"].split()[0].endswith(("send", "recv"))]
            enq = max([e["collective_seq_id"] for e in seqs], default=-1)
            started = max([e["collective_seq_id"] for e in seqs if e["state"] != "scheduled"], default=-1)
            done = max([e["collective_seq_id"] for e in seqs if e["state"] == "completed"], default=-1)
            status[pg] = {"last_enqueued_collective": enq, "last_started_collective": started,
                          "last_completed_collective": done}
            if as_json:
                status[pg] = {k: str(x) for k, x in status[pg].items()}
        entries = self.entries
        if as_json:  # the JSON form writes tuples as lists and no times as 0
            entries = []
            for e in self.entries:
                e = dict(e)
                e["process_group"] = list(e["process_group"])
                for k in ("time_discovered_started_ns", "time_discovered_completed_ns"):
                    if e[k] is None:
                        e[k] = 0
                del e["frames"]
                entries.append(e)
        doc = {
            "version": self.version,
            "pg_config": {pg: {"name": pg, "desc": d, "ranks": str(r)} for pg, (d, r) in self.pgs.items()},
            "pg_status": status,
            "comm_lib_version": self.lib,
            "entries": entries,
        }
        if as_json:
            doc["nccl_comm_state"] = {}
        return doc


def write_case(out, case, ranks, form, name_fmt):
    d = os.path.join(out, case)
    os.makedirs(d, exist_ok=True)
    for r in ranks:
        path = os.path.join(d, name_fmt % r.rank)
        if form == "json":
            with open(path, "w") as f:
                json.dump(r.document(True), f, sort_keys=True, separators=(",", ":"))
                f.write("\n")
        else:
            with open(path, "wb") as f:
                pickle.dump(r.document(False), f, protocol=2)


def world(n):
    return {"0": ("default_pg", list(range(n)))}


def c1(out, case="c1", lib="2.21.5"):
    """W=8, all-reduce then broadcast per step; rank 5 stops before step 37's all-reduce."""
    ranks = []
    for g in range(8):
        r = Rank(g, "2.10", world(8), lib)
        for step in range(1, 37):
            r.op("0", "all_reduce", 1024)
            r.op("0", "broadcast", 1024)
        if g != 5:
            r.op("0", "all_reduce", 1024, state="started")
        ranks.append(r)
    write_case(out, case, ranks, "pickle", "trn-node13-gpu7.nccl_trace_rank_%d")


def c1_rocm(out):
    """C1 on ROCm: the same ring, written by a ROCm build whose communication
    library is RCCL (named in comm_lib_version before its version)."""
    c1(out, "c1-rocm", "RCCL 2.22.3")


def c2(out):
    """W=8; ranks 3-7 stop before step 25's all-reduce (seq 49), ranks 0-2 enqueue it."""
    ranks = []
    for g in range(8):
        r = Rank(g, "2.6", world(8))
        for step in range(1, 25):
            r.op("0", "all_reduce", 1024)
            r.op("0", "broadcast", 1024)
        if g < 3:
            r.op("0", "all_reduce", 1024, state="scheduled")
        ranks.append(r)
    write_case(out, "c2", ranks, "pickle", "host-10-0-3-17_rank%d.pickle")


def c5(out):
    """W=8; at seq 5 rank 7 broadcasts 5056 elements, the others all-reduce 2,106,881."""
    ranks = []
    for g in range(8):
        r = Rank(g, "2.4", world(8))
        for step in range(1, 4):
            if step == 3:
                if g == 7:
                    r.op("0", "broadcast", 5056, state="started")
                else:
                    r.op("0", "all_reduce", 2106881, state="started")
                break
            r.op("0", "all_reduce", 2106881)
            r.op("0", "all_reduce", 64)
        ranks.append(r)
    write_case(out, "c5", ranks, "json", "gpu-a100-2x8-node3.rank%d.json")


def c9(out):
    """W=3 pipeline: 0 sends to 1 then receives from 1; 1 receives from 0, sends to 2,
    exits; 2 receives from 1 then sends to 1."""
    r0, r1, r2 = (Rank(g, "2.2", world(3)) for g in range(3))
    r0.op("0", "send", 256, peer=1)
    r0.op("0", "recv", 256, peer=1, state="started")
    r1.op("0", "recv", 256, peer=0)
    r1.op("0", "send", 256, peer=2)
    r2.op("0", "recv", 256, peer=1)
    r2.op("0", "send", 256, peer=1, state="scheduled")
    write_case(out, "c9", [r0, r1, r2], "pickle", "pp-stage-node2_%d")


def c10(out):
    """W=2, groups A, B, C; rank 0 calls all-gather A, all-reduce B, all-reduce C;
    rank 1 all-gather A, all-reduce C, all-reduce B (each blocking)."""
    pgs = {"0": ("default_pg", [0, 1]), "1": ("A", [0, 1]), "2": ("B", [0, 1]), "3": ("C", [0, 1])}
    ranks = []
    for g in range(2):
        r = Rank(g, "2.8", pgs)
        for step in range(1, 4):
            r.op("1", "_allgather_base", 64, out_numel=128)
            order = ["2", "3"] if (g == 0 or step < 3) else ["3", "2"]
            if step == 3:
                r.op(order[0], "all_reduce", 64, state="started")
                break
            for pg in order:
                r.op(pg, "all_reduce", 64)
        ranks.append(r)
    write_case(out, "c10", ranks, "json", "worker-%d.json")


def main():
    if len(sys.argv) != 2:
        sys.stderr.write("usage: gen-pytorch-fr.py OUTDIR\n")
        return 2
    out = sys.argv[1]
    for case in (c1, c1_rocm, c2, c5, c9, c10):
        case(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
