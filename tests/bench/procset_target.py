# Benchmark target of tests/bench/procset.sh: a job of N processes
# (default 32: this one and N-1 forked children), each with T threads
# (default 8: the main one and T-1 more) parked DEPTH frames deep (default
# 20).  Prints "ready PID PID ..." (every process of the job) once all are
# parked.  Children die with the parent.  Usage: procset_target.py [N] [T] [DEPTH]
import ctypes
import os
import signal
import sys
import threading

N_PROCS = int(sys.argv[1]) if len(sys.argv) > 1 else 32
N_THREADS = int(sys.argv[2]) if len(sys.argv) > 2 else 8
DEPTH = int(sys.argv[3]) if len(sys.argv) > 3 else 20
forever = threading.Event()


def descend(n, parked):
    if n > 1:
        return descend(n - 1, parked)
    parked.wait()
    forever.wait()


def park():
    """T threads parked DEPTH deep, the main one among them."""
    threading.stack_size(256 * 1024)
    parked = threading.Barrier(N_THREADS)
    for _ in range(N_THREADS - 1):
        threading.Thread(target=descend, args=(DEPTH, parked), daemon=True).start()
    return parked


def child(w):
    ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    parked = park()
    threading.Thread(target=lambda: (parked.wait(), os.write(w, b"."))).start()
    descend(DEPTH, parked)


def main():
    r, w = os.pipe()
    pids = [os.getpid()]
    for _ in range(N_PROCS - 1):
        pid = os.fork()
        if pid == 0:
            os.close(r)
            child(w)
            os._exit(0)
        pids.append(pid)
    os.close(w)
    got = 0
    while got < N_PROCS - 1:
        got += len(os.read(r, 64))
    parked = park()
    threading.Thread(target=lambda: (parked.wait(), print("ready", *pids, flush=True))).start()
    descend(DEPTH, parked)


if __name__ == "__main__":
    main()
