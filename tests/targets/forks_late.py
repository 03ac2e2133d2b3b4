"""Target of the perf-over-a-set tests: a parent with one child from the
start (first_child), and one more child forked on SIGUSR1 (joined_late),
so a --tree followed while sampled sees a process come; the test kills the
first child to see one go.  Children die with the parent; the parent
reaps them (SIGCHLD ignored).  Ready (FP_READY_FD) once the first child
is parked.  CPython 3.8+."""

import ctypes
import os
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _fptarget import signal_ready  # noqa: E402


def child(park, parent, w):
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    if os.getppid() != parent:
        os._exit(1)
    os.write(w, b".")
    park()
    os._exit(0)


def first_child():
    while True:
        time.sleep(3600)  # @first


def joined_late():
    while True:
        time.sleep(3600)  # @late


def fork(park):
    r, w = os.pipe()
    parent = os.getpid()
    if os.fork() == 0:
        os.close(r)
        child(park, parent, w)
    os.close(w)
    os.read(r, 1)  # it has run its first line: parked a moment later
    os.close(r)


def main():
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGUSR1])
    fork(first_child)
    time.sleep(0.2)  # from the write to the sleep
    signal_ready()
    signal.sigwait([signal.SIGUSR1])
    fork(joined_late)
    signal.sigwait([signal.SIGUSR1])  # @parent


if __name__ == "__main__":
    main()
