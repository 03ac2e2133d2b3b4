# Benchmark target: N threads (default 20), each parked DEPTH frames deep
# (default 30).  Writes "ready" to the fd in FP_READY_FD (or stdout) once
# all are parked.  Usage: python stack_target.py [N] [DEPTH]
#
# With FP_CLOCK_LOG=path, one more thread waits in select(1.0) again and
# again and appends to path, in microseconds, by how much each wait
# overran its second: the target's own view of how long a stop held it.
import os
import select
import sys
import threading
import time

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


def clock(path):
    while True:
        t = time.monotonic()
        select.select([], [], [], 1.0)
        over = time.monotonic() - t - 1.0
        with open(path, "a") as f:
            f.write("%d\n" % max(0, over * 1e6))


if os.environ.get("FP_CLOCK_LOG"):
    threading.Thread(target=clock, args=(os.environ["FP_CLOCK_LOG"],),
                     name="bench-clock", daemon=True).start()
for i in range(N_THREADS):
    threading.Thread(target=worker, name="bench-%04d" % i, daemon=True).start()
parked.wait()
fd = int(os.environ.get("FP_READY_FD", "1"))
os.write(fd, b"ready\n")
forever.wait()
