"""Target: three threads waiting in the epoll system calls through ctypes,
as C code does, each in a loop of one-second waits on an empty epoll set,
with no retry on EINTR.  Every wait that fails is written to the file named
by FP_EPOLL_LOG as "CALL ERRNO"; a stop by a debugger must add nothing.

    ep-wait    epoll_wait(epfd, buf, 10, 1000)
    ep-pwait   epoll_pwait(epfd, buf, 10, 1000, NULL)
    ep-pwait2  epoll_pwait2(epfd, buf, 10, {1, 0}, NULL)   (glibc 2.35+)
"""

import ctypes
import os
import select
import threading

from _fptarget import Spot, announce_when_parked, name_os_thread

LIBC = ctypes.CDLL(None, use_errno=True)
LOG = os.environ["FP_EPOLL_LOG"]


class Timespec(ctypes.Structure):
    _fields_ = [("tv_sec", ctypes.c_long), ("tv_nsec", ctypes.c_long)]


def waits(call):
    ep = select.epoll()
    events = ctypes.create_string_buffer(12 * 10)   # struct epoll_event, packed
    one_second = Timespec(1, 0)
    while True:
        if call == "epoll_wait":
            r = LIBC.epoll_wait(ep.fileno(), events, 10, 1000)  # @epoll_wait
        elif call == "epoll_pwait":
            r = LIBC.epoll_pwait(ep.fileno(), events, 10, 1000, None)  # @epoll_pwait
        else:
            r = LIBC.epoll_pwait2(ep.fileno(), events, 10, ctypes.byref(one_second), None)  # @epoll_pwait2
        if r < 0:
            with open(LOG, "a") as f:
                f.write("%s %d\n" % (call, ctypes.get_errno()))


def run(call):
    name_os_thread()
    waits(call)


def main():
    calls = ["epoll_wait", "epoll_pwait"]
    if hasattr(LIBC, "epoll_pwait2"):
        calls.append("epoll_pwait2")
    threads = [threading.Thread(target=run, args=(c,), name=c.replace("epoll_", "ep-"),
                                daemon=True) for c in calls]
    for t in threads:
        t.start()
    announce_when_parked([Spot(t, __file__, c) for t, c in zip(threads, calls)])
    threading.Event().wait()


if __name__ == "__main__":
    main()
