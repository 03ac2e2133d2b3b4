"""A small busy Python program to point flight_profiler at.

    python3 tests/targets/demo.py &
    flight_profiler $!

It runs until it is killed (Ctrl-C or SIGTERM), standard library only, with
a few threads doing realistic work, each named both in Python and for the
OS (so that their names show even without an agent in the process):

    http-server   an HTTP server on a loopback port (port 0: the kernel picks)
    http-client   fetches from that server, a few requests a second
    trainer       fits a small linear model with pure-Python gradient descent
    loader        writes, reads back and checksums files in a temporary folder
    heartbeat     wakes once a second and counts
    MainThread    waits for a signal to stop

Runs on CPython 3.8 to 3.13.  When FP_READY_FD is set (the test harness
does that), it writes "ready" to that descriptor once every thread has started
and been named.
"""

import hashlib
import http.server
import json
import os
import random
import shutil
import signal
import sys
import tempfile
import threading
import time
import urllib.request

STOP = threading.Event()


def name_os_thread(thread):
    """Give a started thread's OS thread its Python name (CPython leaves the
    OS name unset; any thread of the process may write it)."""
    try:
        with open("/proc/self/task/%d/comm" % thread.native_id, "wb") as f:
            f.write(thread.name.encode("utf-8")[:15])
    except OSError:
        pass


# ---- http-server and http-client ------------------------------------------

class StatsHandler(http.server.BaseHTTPRequestHandler):
    """Answers /stats with a JSON document and /prime/N with the N-th prime."""

    def do_GET(self):
        if self.path == "/stats":
            body = json.dumps(STATS.snapshot()).encode()
        elif self.path.startswith("/prime/"):
            body = str(nth_prime(int(self.path[len("/prime/"):]))).encode()
        else:
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format, *args):
        pass  # keep the demo's terminal quiet


def nth_prime(n):
    primes = []
    candidate = 2
    while len(primes) < n:
        if all(candidate % p for p in primes if p * p <= candidate):
            primes.append(candidate)
        candidate += 1
    return primes[-1]


def serve(server):
    server.serve_forever(poll_interval=0.5)


def fetch_forever(port):
    base = "http://127.0.0.1:%d" % port
    while not STOP.is_set():
        path = random.choice(["/stats", "/prime/%d" % random.randint(100, 2000)])
        with urllib.request.urlopen(base + path, timeout=10) as response:
            response.read()
        STATS.add("requests")
        STOP.wait(0.2)


# ---- trainer ---------------------------------------------------------------

def make_dataset(n, weights, bias):
    rows = []
    for _ in range(n):
        x = [random.uniform(-1.0, 1.0) for _ in weights]
        y = sum(w * xi for w, xi in zip(weights, x)) + bias + random.gauss(0.0, 0.05)
        rows.append((x, y))
    return rows


def train_epoch(rows, weights, bias, rate):
    grad_w = [0.0] * len(weights)
    grad_b = 0.0
    loss = 0.0
    for x, y in rows:
        error = sum(w * xi for w, xi in zip(weights, x)) + bias - y
        loss += error * error
        for i, xi in enumerate(x):
            grad_w[i] += error * xi
        grad_b += error
    n = len(rows)
    weights = [w - rate * g / n for w, g in zip(weights, grad_w)]
    return weights, bias - rate * grad_b / n, loss / n


def train_forever():
    truth = [random.uniform(-2.0, 2.0) for _ in range(8)]
    while not STOP.is_set():
        rows = make_dataset(2000, truth, 0.5)
        weights, bias = [0.0] * len(truth), 0.0
        for epoch in range(200):
            if STOP.is_set():
                return
            weights, bias, loss = train_epoch(rows, weights, bias, 0.1)
            STATS.set("loss", round(loss, 6))
        STATS.add("models")


# ---- loader ----------------------------------------------------------------

def load_forever(folder):
    index = 0
    while not STOP.is_set():
        path = os.path.join(folder, "shard-%03d.bin" % (index % 16))
        with open(path, "wb") as f:
            for _ in range(64):
                f.write(os.urandom(4096))
        digest = hashlib.sha256()
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(65536), b""):
                digest.update(block)
        STATS.set("last_shard", digest.hexdigest()[:12])
        STATS.add("shards")
        index += 1
        STOP.wait(0.05)


# ---- heartbeat and shared counters -----------------------------------------

def heartbeat_forever():
    while not STOP.is_set():
        time.sleep(1.0)
        STATS.add("beats")


class Stats:
    def __init__(self):
        self._lock = threading.Lock()
        self._values = {}

    def add(self, key, amount=1):
        with self._lock:
            self._values[key] = self._values.get(key, 0) + amount

    def set(self, key, value):
        with self._lock:
            self._values[key] = value

    def snapshot(self):
        with self._lock:
            return dict(self._values)


STATS = Stats()


def main():
    signal.signal(signal.SIGTERM, lambda signum, frame: STOP.set())
    folder = tempfile.mkdtemp(prefix="fp-demo-")
    server = http.server.HTTPServer(("127.0.0.1", 0), StatsHandler)
    port = server.server_address[1]
    threads = [
        threading.Thread(target=serve, args=(server,), name="http-server", daemon=True),
        threading.Thread(target=fetch_forever, args=(port,), name="http-client", daemon=True),
        threading.Thread(target=train_forever, name="trainer", daemon=True),
        threading.Thread(target=load_forever, args=(folder,), name="loader", daemon=True),
        threading.Thread(target=heartbeat_forever, name="heartbeat", daemon=True),
    ]
    for thread in threads:
        thread.start()
        name_os_thread(thread)
    print("demo: pid %d, HTTP on 127.0.0.1:%d, files in %s; stop with Ctrl-C"
          % (os.getpid(), port, folder), flush=True)
    ready_fd = os.environ.get("FP_READY_FD")
    if ready_fd is not None:
        os.write(int(ready_fd), b"ready\n")
        os.close(int(ready_fd))
    try:
        while not STOP.wait(0.5):
            pass
    except KeyboardInterrupt:
        STOP.set()
    finally:
        server.shutdown()
        server.server_close()
        shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
