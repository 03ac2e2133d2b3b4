# Benchmark target for the agent: a few globals, a main thread asleep in
# time.sleep (a safe point for the injector), 4 idle worker threads.
# Writes "ready" to the fd in FP_READY_FD (or stdout) once started.
import os
import threading
import time

CONFIG = {"name": "bench", "workers": 4, "limits": [1, 2, 3]}
stop = threading.Event()
for i in range(4):
    threading.Thread(target=stop.wait, name="bench-%d" % i, daemon=True).start()
os.write(int(os.environ.get("FP_READY_FD", "1")), b"ready\n")
while True:
    time.sleep(3600)
