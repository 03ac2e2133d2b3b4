"""Benchmark target for gilstat: fixed work that switches the GIL often.
Three threads each do FP_BENCH_ROUNDS rounds of a short pure-Python loop
followed by time.sleep(0), which drops and takes the GIL again: every
round is one take_gil and one drop_gil.  Says "ready" on FP_READY_FD,
starts on a line from stdin, prints the seconds the work took, exits."""

import os
import sys
import threading
import time

ROUNDS = int(os.environ.get("FP_BENCH_ROUNDS", "20000"))


def work():
    for _ in range(ROUNDS):
        x = 0
        for i in range(200):
            x += i
        time.sleep(0)


def main():
    fd = os.environ.get("FP_READY_FD")
    if fd is not None:
        os.write(int(fd), b"ready\n")
        os.close(int(fd))
    sys.stdin.readline()
    threads = [threading.Thread(target=work) for _ in range(3)]
    start = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    print("%.6f" % (time.perf_counter() - start), flush=True)


if __name__ == "__main__":
    main()
