"""One rank of a 4-rank PyTorch NCCL job on a machine with ONE GPU.

Every rank runs on cuda:0.  NCCL refuses two ranks on one device of one host
("Duplicate GPU detected"), so run-multirank.sh gives each rank its own
NCCL_HOSTID: NCCL then takes them for four hosts and moves data over its
socket transport on the loopback interface (proxy threads, network proxy
steps: what a multi-node job has).  The GPU time-slices the four contexts.

Process groups: the world, and two tensor-parallel groups tp0 = [0, 1] and
tp1 = [2, 3].  Each step calls the kinds of collectives real jobs write into
PyTorch's Flight Recorder: all_reduce, an uneven all_gather and an uneven
reduce_scatter (both coalesced: _broadcast_oop / _reduce_oop members), the
_allgather_base and _reduce_scatter_base forms, all_to_all_single with
per-rank splits, all_to_all with lists, batch_isend_irecv around a ring,
broadcast, and every other step an all_reduce inside _coalescing_manager.

  python3 torch_multirank.py OUTDIR MODE
MODE:
  kinds           4 healthy steps, then PyTorch's dumps through its API
  a2a-hang        at step 3 rank 3 never calls world's all_to_all_single
  coalesced-hang  at step 3 rank 1 never calls tp0's uneven all_gather
  gpu-stall       at step 3 rank 2's stream runs a 60 s kernel before world's
                  all_reduce: its ops are enqueued behind it, never started
  pp-hang         a 4-stage pipeline (send/recv between neighbours, forward
                  and backward, then a world all_reduce); at step 3 rank 2
                  stops before its forward send to rank 3
In the hang modes every rank dumps through the API DUMP_DELAY s after the
hang (full pickle, JSON, only-active pickle, pickle and JSON without
entries), then the waiting ranks block until the process group's timeout,
whose watchdog writes its own dump (TORCH_NCCL_DEBUG_INFO_TEMP_FILE).
Rank, world size and store address come from RANK, WORLD_SIZE, MASTER_*.
"""
import datetime
import os
import sys
import time

import torch
import torch.distributed as dist

out, mode = sys.argv[1], sys.argv[2]
rank = int(os.environ["RANK"])
world = int(os.environ["WORLD_SIZE"])
dump_delay = float(os.environ.get("DUMP_DELAY", "4"))
pg_timeout = float(os.environ.get("PG_TIMEOUT", "15"))
dev = torch.device("cuda", 0)
torch.cuda.set_device(dev)


def log(*a):
    print("[rank %d %.2f]" % (rank, time.time()), *a, flush=True)


dist.init_process_group("nccl", rank=rank, world_size=world, device_id=dev,
                        timeout=datetime.timedelta(seconds=pg_timeout))
tp0 = dist.new_group([0, 1])
tp1 = dist.new_group([2, 3])
tp = tp0 if rank < 2 else tp1
tp_rank = rank % 2
log("groups made")


def stop_here(step, op):
    """True where this rank is the one that never calls op at step."""
    return ((mode == "a2a-hang" and rank == 3 and step == 3 and op == "a2a") or
            (mode == "coalesced-hang" and rank == 1 and step == 3 and op == "ag_uneven"))


def pp_ops(step):
    """One pipeline step: forward recv/send, backward recv/send, then the
    world's all_reduce; returns the op it stopped before, or None."""
    act = torch.ones(4096, device=dev)
    if rank > 0:
        dist.recv(act, rank - 1)
    if mode == "pp-hang" and rank == 2 and step == 3:
        return "fwd_send"
    if rank < world - 1:
        dist.send(act, rank + 1)
        dist.recv(act, rank + 1)
    if rank > 0:
        dist.send(act, rank - 1)
    dist.all_reduce(torch.ones(1024, device=dev))
    return None


def ops(step):
    """One step's collectives; returns the op it stopped before, or None."""
    if mode == "pp-hang":
        return pp_ops(step)
    if mode == "gpu-stall" and rank == 2 and step == 3:
        torch.cuda._sleep(int(60 * 2.0e9))  # the stream is busy for a minute
    x = torch.full((1 << 14,), float(rank + step), device=dev)
    dist.all_reduce(x)
    dist.all_reduce(x, group=tp)
    if stop_here(step, "ag_uneven"):
        return "ag_uneven"
    # uneven all_gather: tp rank j contributes 1000 + 100 j elements
    outs = [torch.empty(1000 + 100 * j, device=dev) for j in range(2)]
    dist.all_gather(outs, torch.full((1000 + 100 * tp_rank,), 1.0, device=dev), group=tp)
    big = torch.empty(world * 4096, device=dev)
    dist.all_gather_into_tensor(big, torch.ones(4096, device=dev))
    rs = torch.empty(4096, device=dev)
    dist.reduce_scatter_tensor(rs, big)
    # uneven reduce_scatter: output j is 512 + 64 j elements
    ins = [torch.ones(512 + 64 * j, device=dev) for j in range(2)]
    dist.reduce_scatter(torch.empty(512 + 64 * tp_rank, device=dev), ins, group=tp)
    if stop_here(step, "a2a"):
        return "a2a"
    # all_to_all_single: rank r sends 16 (r + 1)(j + 1) elements to rank j
    ins_split = [16 * (rank + 1) * (j + 1) for j in range(world)]
    outs_split = [16 * (r + 1) * (rank + 1) for r in range(world)]
    a_out = torch.empty(sum(outs_split), device=dev)
    dist.all_to_all_single(a_out, torch.ones(sum(ins_split), device=dev), outs_split, ins_split)
    a_outs = [torch.empty(256, device=dev) for _ in range(2)]
    dist.all_to_all(a_outs, [torch.ones(256, device=dev) for _ in range(2)], group=tp)
    # a ring of sends and receives in one batch
    recv = torch.empty(2048, device=dev)
    reqs = dist.batch_isend_irecv([
        dist.P2POp(dist.isend, torch.ones(2048, device=dev), (rank + 1) % world),
        dist.P2POp(dist.irecv, recv, (rank - 1) % world)])
    for r in reqs:
        r.wait()
    dist.broadcast(x, src=0)
    if step % 2 == 0:
        a, b = torch.ones(300, device=dev), torch.ones(700, device=dev)
        with dist._coalescing_manager(async_ops=False):
            dist.all_reduce(a)
            dist.all_reduce(b)
    return None


def save(sub, name, data):
    d = os.path.join(out, sub)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as fh:
        fh.write(data.encode() if isinstance(data, str) else data)
    log("saved", sub + "/" + name, len(data))


def api_dumps():
    """PyTorch's dumps through its API, one directory per kind."""
    c10d = torch._C._distributed_c10d
    kinds = (
        ("api-full", "nccl_trace_rank_%d" % rank, "_dump_nccl_trace", {}),
        ("api-json", "nccl_trace_rank_%d.json" % rank, "_dump_nccl_trace_json", {}),
        ("api-active", "nccl_trace_rank_%d" % rank, "_dump_nccl_trace", {"onlyActive": True}),
        ("api-noentries", "nccl_trace_rank_%d" % rank, "_dump_nccl_trace", {"includeCollectives": False}),
        ("api-noentries-json", "nccl_trace_rank_%d.json" % rank, "_dump_nccl_trace_json",
         {"includeCollectives": False}),
    )
    for sub, name, fn, kw in kinds:
        try:
            save(sub, name, getattr(c10d, fn)(**kw))
        except Exception as e:  # best effort: say so and go on
            log(sub, "failed:", repr(e)[:300])


steps = 4
stopped = None
for step in range(steps):
    stopped = ops(step)
    if stopped:
        log("stops before", stopped, "at step", step)
        break
log("enqueued all it will")
if mode == "kinds":
    torch.cuda.synchronize()
    dist.barrier()
    torch.cuda.synchronize()
    api_dumps()
    dist.barrier()
    dist.destroy_process_group()
    log("done")
    sys.exit(0)

time.sleep(dump_delay)
api_dumps()
if stopped:
    # the culprit: stuck outside NCCL (a data loader, a host-side wait)
    time.sleep(pg_timeout + 15)
    log("culprit leaves")
    os._exit(0)
t0 = time.time()
try:
    torch.cuda.synchronize()
    log("synchronize returned after %.1f s" % (time.time() - t0))
except Exception as e:
    log("wait failed after %.1f s: %s" % (time.time() - t0, str(e)[:200]))
time.sleep(10)
log("end")
