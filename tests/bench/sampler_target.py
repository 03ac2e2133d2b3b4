"""Benchmark target for tests/bench/sampler.sh (standard library only).

    sampler_target.py deep N    the main thread works forever N frames deep
    sampler_target.py fixed W   W units of pure-Python work (after 0.5 s of
                                warm-up), then prints the wall and CPU
                                seconds they took and exits
    sampler_target.py phases W  one process, many phases: for each line
                                read on stdin, W units of work, then the
                                wall and CPU seconds they took on stdout
                                (tests/bench/slowdown.sh samples every
                                other phase: with and without, same process)

Says "ready" on the file descriptor FP_READY_FD once it is about to work.
"""

import os
import sys
import time


def ready():
    fd = os.environ.get("FP_READY_FD")
    if fd is not None:
        os.write(int(fd), b"ready\n")
        os.close(int(fd))


def spin():
    x = 0
    for i in range(200):
        x += i
    return x


def rec(n):
    if n == 0:
        ready()
        while True:
            spin()
    rec(n - 1)


def fixed(units):
    ready()
    # Half a second of the same work first: the sampler starts meanwhile,
    # so its own start-up is not in the time measured.
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < 0.5:
        spin()
    t0, c0 = time.perf_counter(), time.process_time()
    for _ in range(units):
        spin()
    print("%.6f %.6f" % (time.perf_counter() - t0, time.process_time() - c0), flush=True)


def phases(units):
    ready()
    for _ in sys.stdin:
        t0, c0 = time.perf_counter(), time.process_time()
        for _ in range(units):
            spin()
        print("%.6f %.6f" % (time.perf_counter() - t0, time.process_time() - c0), flush=True)


def main():
    sys.setrecursionlimit(10000)
    if sys.argv[1] == "deep":
        rec(int(sys.argv[2]) - 3)   # <module>, main, rec ... rec, spin
    elif sys.argv[1] == "phases":
        phases(int(sys.argv[2]))
    else:
        fixed(int(sys.argv[2]))


if __name__ == "__main__":
    main()
