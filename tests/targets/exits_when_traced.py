"""Target: exits by itself (status 0) the moment any of its threads is traced
(or the agent's threads appear).

Watcher threads look at every thread's TracerPid; when the injector seizes
one of them, another calls os._exit(0), so the process goes away in the
middle of the injection (or of the connection that follows it).  Used to
check that such a race is reported as "process N exited", whatever step it
broke.
"""

import os
import threading
import time

from _fptarget import name_os_thread, signal_ready


def traced():
    """A thread is traced now, or the agent's threads are there: an
    injection too quick for the watchers still ends in an exit."""
    for tid in os.listdir("/proc/self/task"):
        try:
            with open("/proc/self/task/%s/comm" % tid) as f:
                if f.read().startswith("fp-agent"):
                    return True
            with open("/proc/self/task/%s/status" % tid) as f:
                for line in f:
                    if line.startswith("TracerPid:"):
                        if line.split()[1] != "0":
                            return True
                        break
        except OSError:
            pass
    return False


# How long after it sees a tracer the process exits (EXIT_DELAY_MS, default
# 0): later delays let the injection go further before the process goes.
DELAY = float(os.environ.get("EXIT_DELAY_MS", "0")) / 1000.0


def watch():
    name_os_thread()
    while True:
        if traced():
            time.sleep(DELAY)
            os._exit(0)
        time.sleep(0.0002)


def main():
    for i in range(3):
        threading.Thread(target=watch, name="watch-%d" % i, daemon=True).start()
    signal_ready()
    while True:
        time.sleep(0.1)


if __name__ == "__main__":
    main()
