"""Target for gilstat: three threads "gil-0".."gil-2", each doing 2 ms busy
loops in pure Python (holding the GIL) and then sleeping 5 ms (without it),
as the guide's own gilstat example does.  The main thread waits on an
Event.  Every thread names its OS thread, so the outside view shows the
Python names.  FP_GIL_ROUNDS=N makes each thread stop after N rounds and
the program exit (for the benchmark: fixed work, timed by the caller).
"""

import os
import threading
import time

from _fptarget import name_os_thread, signal_ready

BUSY_S = 0.002
SLEEP_S = 0.005


def spin(rounds):
    name_os_thread()
    done = 0
    while rounds == 0 or done < rounds:
        end = time.perf_counter() + BUSY_S
        while time.perf_counter() < end:
            pass
        time.sleep(SLEEP_S)
        done += 1


def main():
    rounds = int(os.environ.get("FP_GIL_ROUNDS", "0"))
    threads = [threading.Thread(target=spin, args=(rounds,), name="gil-%d" % i, daemon=True)
               for i in range(3)]
    for thread in threads:
        thread.start()
    signal_ready()
    if rounds:
        for thread in threads:
            thread.join()
        return
    threading.Event().wait()


if __name__ == "__main__":
    main()
