"""PyTorch Flight Recorder dumps of an operation that cannot start, from a
1-rank NCCL job on a machine with one GPU (fixtures for flightrec's importer).

  python3 torch_fr_hang.py OUTDIR api       # dump through PyTorch's API (pickle
                                            # and JSON) while an all-reduce waits
                                            # behind a busy stream
  python3 torch_fr_hang.py OUTDIR timeout   # let the process group's watchdog
                                            # time out and write its own dump
                                            # (TORCH_NCCL_DEBUG_INFO_TEMP_FILE)
"""
import datetime
import os
import sys
import time

import torch
import torch.distributed as dist

out, mode = sys.argv[1], sys.argv[2]
os.makedirs(out, exist_ok=True)
dist.init_process_group("nccl", rank=0, world_size=1, device_id=torch.device("cuda", 0),
                        timeout=datetime.timedelta(seconds=6))
x = torch.ones(1 << 20, device="cuda")
for _ in range(3):
    dist.all_reduce(x)
    dist.broadcast(x, src=0)
side = dist.new_group([0])
dist.all_reduce(x, group=side)
torch.cuda.synchronize()
print("collectives done", flush=True)

busy_s = 4 if mode == "api" else 25
torch.cuda._sleep(int(busy_s * 2.0e9))      # the stream is busy for a while
work = dist.all_reduce(x, async_op=True)   # enqueued behind it: cannot start
if mode == "api":
    c10d = torch._C._distributed_c10d
    for name, fn in (("inflight.pickle", "_dump_nccl_trace"), ("inflight.json", "_dump_nccl_trace_json")):
        data = getattr(c10d, fn)()
        with open(os.path.join(out, name), "wb") as fh:
            fh.write(data.encode() if isinstance(data, str) else data)
        print("saved", name, len(data), flush=True)
    torch.cuda.synchronize()
    dist.destroy_process_group()
else:
    t0 = time.time()
    try:
        work.wait()
        torch.cuda.synchronize()
    except Exception as e:  # the watchdog's timeout error, after its dump
        print("wait failed after %.1f s: %s" % (time.time() - t0, str(e)[:200]), flush=True)
print("done", flush=True)
