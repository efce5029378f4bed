"""A 1-rank PyTorch NCCL job for a machine with one GPU.

Run with the flightrec recorder preloaded.  It (1) runs a few real NCCL
collectives, (2) saves PyTorch's own Flight Recorder dump (pickle and, where
available, JSON) as a fixture, and (3) makes the GPU stream busy for longer
than FR_TIMEOUT_SEC before one more all-reduce, so the recorder's watchdog sees
an op that was enqueued but not started, declares a hang and dumps.

Usage: python3 torch_job.py OUTDIR
"""
import os
import sys
import time

import torch
import torch.distributed as dist

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
dist.init_process_group("nccl", rank=0, world_size=1,
                        device_id=torch.device("cuda", 0))
dev = torch.device("cuda", 0)
x = torch.ones(1 << 20, device=dev)
for step in range(5):
    dist.all_reduce(x)
    dist.broadcast(x, src=0)
    ys = [torch.empty_like(x)]
    dist.all_gather(ys, x)
    dist.reduce_scatter_tensor(torch.empty_like(x), x)
torch.cuda.synchronize()
print("collectives done", flush=True)

# PyTorch's own Flight Recorder, dumped through its API.
c10d = torch._C._distributed_c10d
for name, fn in (("torch-fr.pickle", "_dump_nccl_trace"),
                 ("torch-fr.json", "_dump_nccl_trace_json")):
    f = getattr(c10d, fn, None)
    if f is None:
        print("no", fn, flush=True)
        continue
    try:
        data = f()
    except Exception as e:  # report and go on: the fixture is best effort
        print(fn, "failed:", e, flush=True)
        continue
    if isinstance(data, str):
        data = data.encode()
    with open(os.path.join(out, name), "wb") as fh:
        fh.write(data)
    print("saved", name, len(data), flush=True)

# A stream kept busy past the recorder's timeout: the next all-reduce is
# enqueued but cannot start.
timeout = float(os.environ.get("FR_TIMEOUT_SEC", "5"))
torch.cuda._sleep(int((timeout + 4) * 2.0e9))
dist.all_reduce(x)
t0 = time.time()
torch.cuda.synchronize()
print("busy stream drained after %.1f s" % (time.time() - t0), flush=True)
dist.destroy_process_group()
print("done", flush=True)
