# Benchmark target: N threads (default 20), each parked DEPTH frames deep
# (default 30).  Writes "ready" to the fd in FP_READY_FD (or stdout) once
# all are parked.  Usage: python stack_target.py [N] [DEPTH]
import os
import sys
import threading

N_THREADS = int(sys.argv[1]) if len(sys.argv) > 1 else 20
DEPTH = int(sys.argv[2]) if len(sys.argv) > 2 else 30
threading.stack_size(256 * 1024)
parked = threading.Barrier(N_THREADS + 1)
forever = threading.Event()


def descend(n):
    if n > 1:
        return descend(n - 1)
    parked.wait()
    forever.wait()


def worker():
    descend(DEPTH - 3)   # threading's own frames make up the rest


for i in range(N_THREADS):
    threading.Thread(target=worker, name="bench-%04d" % i, daemon=True).start()
parked.wait()
fd = int(os.environ.get("FP_READY_FD", "1"))
os.write(fd, b"ready\n")
forever.wait()
