"""Target: a thread whose kernel tid equals the upper half of the address
of its own struct pthread (the pthread_t that 3.8–3.10 keep).

Once the pid counter wraps (pid_max 32768), tids near 32,5xx are common,
and the upper 32 bits of a pointer into the mappings near the top of the
address space are 0x7fxx: the same numbers.  struct pthread opens with
pointers to itself, so a reader that takes the first offset holding "one
of the process's tids" for every thread gives all threads that one tid.
The target makes the collision happen: it sets the pid namespace's last
pid (root only) so that the next thread gets exactly that tid, retrying
while other processes take it first.

Before saying ready it prints one JSON line on stdout:
{"collided": true/false, "why": reason, "threads": {native id: name}}.
"""

import json
import os
import threading

from _fptarget import Spot, announce_when_parked

NEVER = threading.Event()
ATTEMPTS = 200


def worker(until=NEVER):
    until.wait()  # @worker


def set_last_pid(pid):
    with open("/proc/sys/kernel/ns_last_pid", "w") as f:
        f.write(str(pid))


def collide():
    """Start the colliding thread: (thread or None, why)."""
    high = threading.get_ident() >> 32     # pthread_self() of the main thread
    with open("/proc/sys/kernel/pid_max") as f:
        if high < 300 or high >= int(f.read()):
            return None, "upper half %d is not a possible pid" % high
    for _ in range(ATTEMPTS):
        if os.path.exists("/proc/%d" % high):
            return None, "pid %d is in use" % high
        try:
            set_last_pid(high - 1)
        except OSError as e:
            return None, "cannot set ns_last_pid: %s" % e
        until = threading.Event()
        thread = threading.Thread(target=worker, args=(until,), name="colliding", daemon=True)
        thread.start()
        if thread.native_id == high:
            return thread, "tid %d" % high
        # another process took that pid first: let this thread go, try again
        until.set()
        thread.join()
    return None, "another process took pid %d %d times" % (high, ATTEMPTS)


def main():
    hit, why = collide()
    workers = [threading.Thread(target=worker, name="worker-%d" % i, daemon=True)
               for i in range(3)]
    for thread in workers:
        thread.start()
    if hit is not None:
        workers.append(hit)
    threads = {t.native_id: t.name for t in workers}
    threads[threading.main_thread().native_id] = "MainThread"
    print(json.dumps({"collided": hit is not None, "why": why, "threads": threads}), flush=True)
    spots = [Spot(t, __file__, "worker") for t in workers]
    announce_when_parked(spots)
    NEVER.wait()


if __name__ == "__main__":
    main()
