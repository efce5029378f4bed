#!/usr/bin/env python3
"""torch-store.py - a real PyTorch TCPStore for the recorder's FR_TRIGGER_STORE
tests (needs PyTorch: Debian's python3-torch).

  torch-store.py serve --port-file FILE
      Starts torch.distributed.TCPStore as the server (is_master) on a free
      port of 127.0.0.1, writes the port to FILE, and serves until killed.
  torch-store.py get --port PORT KEY
      As a client of that store: prints KEY's value and exits 0, or exits 1
      when the key is not there.  KEY as Python names it (no leading "/").
"""
import argparse
import os
import signal
import sys
from datetime import timedelta

import torch.distributed as dist


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("serve")
    s.add_argument("--port-file", required=True)
    g = sub.add_parser("get")
    g.add_argument("--port", type=int, required=True)
    g.add_argument("key")
    a = ap.parse_args()
    if a.cmd == "serve":
        store = dist.TCPStore("127.0.0.1", 0, None, True, timedelta(seconds=60), wait_for_workers=False)
        with open(a.port_file + ".tmp", "w") as f:
            f.write("%d\n" % store.port)
        os.replace(a.port_file + ".tmp", a.port_file)
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
        while True:
            signal.pause()
    # PyTorch 1.13's Python store has no check(): a get waits for the key,
    # here at most 2 s
    store = dist.TCPStore("127.0.0.1", a.port, None, False, timedelta(seconds=2))
    try:
        value = store.get(a.key)
    except RuntimeError:
        return 1
    print(value.decode(errors="replace"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
