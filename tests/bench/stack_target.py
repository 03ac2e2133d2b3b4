# Benchmark target: 20 threads, each parked 30 frames deep.
# Writes "ready" to the fd in FP_READY_FD (or stdout) once all are parked.
import os
import threading

N_THREADS = 20
DEPTH = 30
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
    threading.Thread(target=worker, name="bench-%02d" % i, daemon=True).start()
parked.wait()
fd = int(os.environ.get("FP_READY_FD", "1"))
os.write(fd, b"ready\n")
forever.wait()
