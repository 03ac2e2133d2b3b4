"""Target of the process-set tests: a job of N worker processes
(multiprocessing, fork) where all but the last wait for the same event
(at one line: a queue's get would put one of them in recv and the rest
on its lock), and the last sleeps somewhere else -- the odd one out.  The parent
joins them.  Each process has its own pid in the global WORKER_ID (a value
that differs per member, for `getglobal --all`).  Ready (FP_READY_FD) once
every worker is parked.  Usage: pool.py [N] (default 8).  CPython 3.8+."""

import multiprocessing
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _fptarget import signal_ready  # noqa: E402


def die_with_parent(parent):
    """A worker must not outlive the job when the tests kill the parent."""
    import ctypes
    import signal
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    if os.getppid() != parent:
        os._exit(1)


def own_id():
    """Each process's own value of a global (what `getglobal --all` shows)."""
    global WORKER_ID
    WORKER_ID = os.getpid()


def wait_for_work(go, parked, parent):
    die_with_parent(parent)
    own_id()
    parked.put(os.getpid())
    go.wait()  # @waiting


def elsewhere(parked, parent):
    die_with_parent(parent)
    own_id()
    parked.put(os.getpid())
    while True:
        time.sleep(3600)  # @elsewhere


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 8
    own_id()
    ctx = multiprocessing.get_context("fork")
    go, parked = ctx.Event(), ctx.Queue()
    workers = [ctx.Process(target=wait_for_work, args=(go, parked, os.getpid())) for _ in range(n - 1)]
    workers.append(ctx.Process(target=elsewhere, args=(parked, os.getpid())))
    for w in workers:
        w.start()
    for _ in workers:
        parked.get()
    time.sleep(0.3)  # from put() to the blocking get() / sleep
    signal_ready()
    for w in workers:
        w.join()


if __name__ == "__main__":
    main()
