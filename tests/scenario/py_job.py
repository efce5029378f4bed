#!/usr/bin/env python3
"""py_job.py - a Python "training job" on the simulator's libnccl, through
ctypes, for the recorder's Python stacks (FR_PY_STACKS=1).  Run with
librecorder.so preloaded and LD_LIBRARY_PATH on the simulator.

  py_job.py hang DIR      one rank of a 2-rank job (RANK, WORLD_SIZE): a loop
                          of all-reduces; rank 1 stops for good in
                          load_batch() before step 5 (a data loader that never
                          delivers); DIR passes the unique id from rank 0.
  py_job.py stress N      one process: Python threads busy computing and
                          allocating, the main thread all-reducing, and N
                          dumps asked for one after the other (FR_DUMP_SIGNAL);
                          exits 0 when every dump arrived and every thread
                          still runs.

Calls go through the recorder's wrappers: libnccl is loaded RTLD_GLOBAL and
the functions are looked up in the process's global scope, where the
preloaded recorder comes first.
"""
import ctypes
import os
import signal
import sys
import threading
import time

NCCL_FLOAT, NCCL_SUM = 7, 0


class UniqueId(ctypes.Structure):
    _fields_ = [("internal", ctypes.c_char * 128)]


def nccl():
    ctypes.CDLL("libcuda.so.1", mode=ctypes.RTLD_GLOBAL)
    ctypes.CDLL("libnccl.so.2", mode=ctypes.RTLD_GLOBAL)
    lib = ctypes.CDLL(None)  # the global scope: the recorder's wrappers first
    for name in ("ncclAllReduce", "ncclCommInitRank", "ncclGetUniqueId", "cuStreamCreate",
                 "cuStreamSynchronize"):
        getattr(lib, name).restype = ctypes.c_int
    return lib


def check(rc, what):
    if rc != 0:
        sys.exit("py_job: %s returned %d" % (what, rc))


class Job:
    def __init__(self, lib, nranks, rank, uid):
        self.lib = lib
        self.comm = ctypes.c_void_p()
        check(lib.ncclCommInitRank(ctypes.byref(self.comm), nranks, uid, rank), "ncclCommInitRank")
        self.stream = ctypes.c_void_p()
        check(lib.cuStreamCreate(ctypes.byref(self.stream), 0), "cuStreamCreate")
        self.buf = (ctypes.c_float * 1024)()

    def all_reduce(self):
        check(self.lib.ncclAllReduce(self.buf, self.buf, ctypes.c_size_t(1024), NCCL_FLOAT, NCCL_SUM,
                                     self.comm, self.stream), "ncclAllReduce")
        check(self.lib.cuStreamSynchronize(self.stream), "cuStreamSynchronize")


def unique_id(lib, rank, directory):
    uid = UniqueId()
    path = os.path.join(directory, "py.id")
    if rank == 0:
        check(lib.ncclGetUniqueId(ctypes.byref(uid)), "ncclGetUniqueId")
        with open(path + ".tmp", "wb") as f:
            f.write(ctypes.string_at(ctypes.byref(uid), 128))  # all 128 bytes, NULs too
        os.rename(path + ".tmp", path)
        return uid
    while not os.path.exists(path):
        time.sleep(0.01)
    with open(path, "rb") as f:
        data = f.read(128)
    if len(data) != 128:
        sys.exit("py_job: %s holds %d bytes, not a unique id" % (path, len(data)))
    ctypes.memmove(ctypes.byref(uid), data, 128)
    return uid


def load_batch(step, rank):
    """The data loader: rank 1 never gets its batch of step 5."""
    if rank == 1 and step == 5:
        while True:
            time.sleep(1)
    return step


def train(job, rank):
    for step in range(1, 100):
        load_batch(step, rank)
        job.all_reduce()


def hang(directory):
    rank, size = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    lib = nccl()
    job = Job(lib, size, rank, unique_id(lib, rank, directory))
    train(job, rank)


def busy_worker(stop, counter, k):
    while not stop.is_set():
        data = [i * i for i in range(2000)]
        counter[k] += sum(data) & 1 or 1


def count_dumps(directory):
    try:
        return sum(1 for n in os.listdir(directory) if n.endswith(".frz"))
    except FileNotFoundError:
        return 0


def stress(n):
    directory = os.environ["FR_DUMP_DIR"]
    lib = nccl()
    uid = UniqueId()
    check(lib.ncclGetUniqueId(ctypes.byref(uid)), "ncclGetUniqueId")
    job = Job(lib, 1, 0, uid)
    stop, counter = threading.Event(), [0] * 8
    # the GIL passes every 0.5 ms, not 5: the main thread, which waits for
    # each dump, then gets it ten times as often among 8 busy workers
    sys.setswitchinterval(0.0005)
    threads = [threading.Thread(target=busy_worker, args=(stop, counter, k), name="busy-%d" % k)
               for k in range(8)]
    for t in threads:
        t.start()
    t0 = time.monotonic()
    for _ in range(n):
        had = count_dumps(directory)
        os.kill(os.getpid(), signal.SIGUSR2)
        deadline = time.monotonic() + 60
        while count_dumps(directory) == had:
            job.all_reduce()
            if time.monotonic() > deadline:
                sys.exit("py_job: a dump did not arrive within 60 s")
    before = list(counter)
    time.sleep(0.5)
    stop.set()
    for t in threads:
        t.join(30)
        if t.is_alive():
            sys.exit("py_job: a worker thread is stuck")
    if any(c == b for c, b in zip(counter, before)):
        sys.exit("py_job: a worker made no progress after the dumps")
    print("%d dumps in %.1f s during a busy Python loop with %d threads" %
          (n, time.monotonic() - t0, len(threads)))


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "hang":
        hang(sys.argv[2])
    elif len(sys.argv) == 3 and sys.argv[1] == "stress":
        stress(int(sys.argv[2]))
    else:
        sys.exit(__doc__)
