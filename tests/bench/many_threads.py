# Benchmark target for the TUI: N threads (default 1000), each parked 50
# frames deep.  Writes "ready" to the fd in FP_READY_FD (or stdout) once all
# are parked.  Usage: python many_threads.py [N] [DEPTH]
import os
import sys
import threading

N_THREADS = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
DEPTH = int(sys.argv[2]) if len(sys.argv) > 2 else 50
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
    threading.Thread(target=worker, name="w-%04d" % i, daemon=True).start()
parked.wait()
fd = int(os.environ.get("FP_READY_FD", "1"))
os.write(fd, b"ready\n")
forever.wait()
