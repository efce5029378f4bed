#!/usr/bin/env python3
"""store-server.py - a small key-value server that speaks PyTorch's TCPStore
wire protocol, for the recorder's FR_TRIGGER_STORE tests (no PyTorch here).

Written from PyTorch's torch/csrc/distributed/c10d/TCPStore.cpp (the client)
and TCPStoreBackend.hpp (query types, validation magic): a query is a u8
type and its arguments, integers in little-endian byte order, a string or a
byte vector a u64 length and the bytes.  Two numberings (--protocol):
  validate (default; PyTorch 2.2 and later): VALIDATE (0), SET (1),
    COMPARE_SET (2), GET (3), ADD (4), CHECK (5), GETNUMKEYS (7),
    DELETE_KEY (8), PING (13); a connection whose first query is not
    VALIDATE with the magic 0x3C85F7CE is closed, as PyTorch's servers do.
  older (PyTorch 2.1 and before, e.g. 1.13): the same queries one lower
    (SET 0 ... GETNUMKEYS 6, DELETE_KEY 8), no VALIDATE; a key or value
    longer than 4 GiB closes the connection, as the real server's failed
    allocation does.
WAIT and the multi-key queries are not needed here.  An unknown query, or
a GET of a missing key, closes the connection (PyTorch's client waits for
the key first).

  store-server.py --port-file FILE [--protocol validate|older]
                  [--refuse | --dribble | --mute] [--preset KEY=VALUE]...
Listens on 127.0.0.1 at a free port, writes the port to FILE, logs one line
per SET, COMPARE_SET and GET ("SET key value", "COMPARE_SET key value
(set|kept)"), and one per connection it closes for a bad query ("closed:
WHY"), on stdout.  --refuse: close every connection at once (a store that
refuses us).  --dribble: every key exists, and a GET's answer comes one
byte every 1.9 s (a store that is alive but hopelessly slow).  --mute:
read everything, answer nothing (a server that is not a TCPStore and says
so by silence).  --preset: a key set before anyone connects.
"""
import argparse
import socket
import socketserver
import struct
import sys
import threading
import time

MAGIC = 0x3C85F7CE
DATA = {}
LOCK = threading.Lock()


def log(line):
    with LOCK:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


class BadQuery(Exception):
    pass


class Handler(socketserver.BaseRequestHandler):
    def read(self, n):
        buf = b""
        while len(buf) < n:
            chunk = self.request.recv(n - len(buf))
            if not chunk:
                raise EOFError
            buf += chunk
        return buf

    def u64(self):
        return struct.unpack("<Q", self.read(8))[0]

    def blob(self):
        n = self.u64()
        if n > 1 << 32:
            raise BadQuery("key or value length %d" % n)
        return self.read(n)

    def send_blob(self, b):
        self.request.sendall(struct.pack("<Q", len(b)) + b)

    def handle(self):
        if self.server.refuse:
            return
        dribble = self.server.dribble
        # off: what to add to a query type to get the current numbering
        off = 0 if self.server.protocol == "validate" else 1
        try:
            if self.server.mute:
                log("connection")
                while self.request.recv(4096):
                    pass
                return
            if off == 0:
                first = self.read(1)[0]
                if first != 0:
                    raise BadQuery("first query %d is not VALIDATE" % first)
                if struct.unpack("<I", self.read(4))[0] != MAGIC:
                    raise BadQuery("VALIDATE with a wrong magic")
            while True:
                q = self.read(1)[0] + off
                if q == 1:  # SET
                    k, v = self.blob(), self.blob()
                    with LOCK:
                        DATA[k] = v
                    log("SET %s %s" % (k.decode(errors="replace"), v.decode(errors="replace").strip()))
                elif q == 2:  # COMPARE_SET
                    k, exp, new = self.blob(), self.blob(), self.blob()
                    with LOCK:
                        cur = DATA.get(k)
                        done = (cur is None and exp == b"") or cur == exp
                        if done:
                            DATA[k] = new
                            cur = new
                        elif cur is None:
                            cur = exp
                    log("COMPARE_SET %s %s (%s)" % (k.decode(errors="replace"), new.decode(errors="replace").strip(),
                                                    "set" if done else "kept"))
                    self.send_blob(cur)
                elif q == 3:  # GET
                    k = self.blob()
                    with LOCK:
                        v = DATA.get(k)
                    if dribble:
                        for b in struct.pack("<Q", 64) + b"x" * 64:
                            self.request.sendall(bytes([b]))
                            time.sleep(1.9)
                        continue
                    if v is None:
                        raise BadQuery("GET of a missing key")
                    log("GET %s" % k.decode(errors="replace"))
                    self.send_blob(v)
                elif q == 4:  # ADD
                    k = self.blob()
                    d = struct.unpack("<q", self.read(8))[0]
                    with LOCK:
                        v = int(DATA.get(k, b"0")) + d
                        DATA[k] = str(v).encode()
                    self.request.sendall(struct.pack("<q", v))
                elif q == 5:  # CHECK
                    keys = [self.blob() for _ in range(self.u64())]
                    with LOCK:
                        ready = dribble or all(k in DATA for k in keys)
                    self.request.sendall(bytes([0 if ready else 1]))
                elif q == 7:  # GETNUMKEYS
                    with LOCK:
                        n = len(DATA)
                    self.request.sendall(struct.pack("<q", n))
                elif q == 8 + off:  # DELETE_KEY (8 in both numberings)
                    k = self.blob()
                    with LOCK:
                        n = 1 if DATA.pop(k, None) is not None else 0
                    self.request.sendall(struct.pack("<q", n))
                elif q == 13 and off == 0:  # PING
                    self.request.sendall(self.read(4))
                else:
                    raise BadQuery("unknown query %d" % (q - off))
        except BadQuery as e:
            log("closed: %s" % e)
        except (EOFError, ConnectionError):
            return


class Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--refuse", action="store_true")
    ap.add_argument("--dribble", action="store_true")
    ap.add_argument("--mute", action="store_true")
    ap.add_argument("--protocol", choices=("validate", "older"), default="validate")
    ap.add_argument("--preset", action="append", default=[])
    a = ap.parse_args()
    for kv in a.preset:
        k, _, v = kv.partition("=")
        DATA[k.encode()] = v.encode()
    srv = Server(("127.0.0.1", 0), Handler)
    srv.refuse = a.refuse
    srv.dribble = a.dribble
    srv.mute = a.mute
    srv.protocol = a.protocol
    with open(a.port_file + ".tmp", "w") as f:
        f.write("%d\n" % srv.server_address[1])
    import os
    os.replace(a.port_file + ".tmp", a.port_file)
    srv.serve_forever()


if __name__ == "__main__":
    main()
