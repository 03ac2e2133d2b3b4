#!/usr/bin/python3
"""Key-to-screen latency of the real TUI while a statement streams events.

    keylat.py BINARY PID [KEYS]

Runs `BINARY PID` on a pseudo-terminal (200x50), opens the `:` prompt and
types KEYS (default 300) `~` characters one at a time, each after the
screen has settled from the one before plus a short random gap; the
latency of a key is the time from writing it to the first `~` the TUI
writes back (the echo on the prompt line; nothing else on the screen
draws a `~`).  Measured twice in the same run: idle (baseline), and while
a statement in the target emits small events into the output as fast as
the agent sends them.  Prints p50/p99/max and the budget (p99 <= 50 ms).
Standard library only; not pass/fail.  The agent must be loaded already.
"""

import fcntl
import os
import pty
import random
import select
import struct
import sys
import termios
import time

BUDGET_MS = 50.0
STREAM = ('execute "import sys, _thread; '
          'emit = sys.stdout.write.__globals__[\'_captures\'][_thread.get_ident()].emit; '
          '[emit(\'event %d\' % i + chr(10)) for i in range(3000000)]"')


class Tui:
    def __init__(self, binary, pid):
        self.pid, self.fd = pty.fork()
        if self.pid == 0:
            os.environ.update(TERM="xterm-256color", LANG="C.UTF-8")
            os.environ.pop("NO_COLOR", None)
            os.execv(binary, [binary, "-d", "1", str(pid)])
        fcntl.ioctl(self.fd, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 200, 0, 0))
        self.seen = b""

    def read(self, timeout):
        """What the TUI wrote within timeout seconds (b"" if nothing)."""
        r, _, _ = select.select([self.fd], [], [], timeout)
        if not r:
            return b""
        try:
            return os.read(self.fd, 1 << 16)
        except OSError:
            return b""

    def drain(self, quiet=0.05, limit=2.0):
        """Read until the screen has been quiet for `quiet` s (or limit s passed)."""
        end = time.monotonic() + limit
        while time.monotonic() < end:
            chunk = self.read(quiet)
            if not chunk:
                return
            self.seen = (self.seen + chunk)[-200000:]

    def wait_for(self, text, limit=20.0):
        end = time.monotonic() + limit
        buf = b""
        while time.monotonic() < end:
            buf = (buf + self.read(0.1))[-1000000:]
            if text in buf:
                return True
        return False

    def send(self, data):
        os.write(self.fd, data)

    def key_latency(self):
        """Write one `~`, return the ms until a `~` comes back (None: not within 2 s)."""
        t0 = time.monotonic()
        self.send(b"~")
        end = t0 + 2.0
        while time.monotonic() < end:
            chunk = self.read(end - time.monotonic())
            self.seen = (self.seen + chunk)[-20000:]
            if b"~" in chunk:
                return (time.monotonic() - t0) * 1000.0
        return None

    def close(self):
        try:
            os.kill(self.pid, 9)
        except OSError:
            pass
        os.waitpid(self.pid, 0)
        os.close(self.fd)


def measure(tui, keys, streaming):
    """Latencies of `keys` keystrokes on an open prompt (which it opens and closes)."""
    tui.send(b":")
    tui.drain(0.2)
    lat, lost = [], 0
    for i in range(keys):
        if i % 50 == 0:
            tui.send(b"\x15")  # Ctrl-U: keep the prompt line short
            tui.drain(0.02, 0.5)
        if not streaming:
            tui.drain(0.01, 0.5)
        ms = tui.key_latency()
        if ms is None:
            lost += 1
            if os.environ.get("FP_KEYLAT_DEBUG"):
                sys.stderr.write("key %d: no echo; the TUI wrote: %r\n" % (i, tui.seen[-300:]))
        else:
            lat.append(ms)
        time.sleep(random.uniform(0.005, 0.02))
    tui.send(b"\x15\x1b")  # clear, close the prompt
    tui.drain(0.1)
    return sorted(lat), lost


def pct(sorted_ms, p):
    if not sorted_ms:
        return float("nan")
    return sorted_ms[min(len(sorted_ms) - 1, int(round(p / 100.0 * (len(sorted_ms) - 1))))]


def report(name, lat, lost):
    print("  %-30s p50 %6.1f ms  p99 %6.1f ms  max %6.1f ms  (%d keys%s)" % (
        name, pct(lat, 50), pct(lat, 99), lat[-1] if lat else float("nan"), len(lat),
        ", %d without an echo within 2 s" % lost if lost else ""))


def main():
    binary, pid = sys.argv[1], int(sys.argv[2])
    keys = int(sys.argv[3]) if len(sys.argv) > 3 else 300
    tui = Tui(binary, pid)
    try:
        if not tui.wait_for(b"agent"):
            print("keylat: the TUI did not start")
            return 1
        tui.drain(0.3)
        idle, idle_lost = measure(tui, keys, False)
        tui.send((":" + STREAM + "\r").encode())
        if not tui.wait_for(b"event 1", 20):
            print("keylat: the stream did not start")
            return 1
        busy, busy_lost = measure(tui, keys, True)
        still = tui.wait_for(b"event", 0.5)
        print("key-to-screen latency, TUI on a pty 200x50, `~` typed on the `:` prompt:")
        report("idle:", idle, idle_lost)
        report("while events stream:", busy, busy_lost)
        print("  the stream was still running at the end: %s" % ("yes" if still else "NO"))
        print("  p99 while streaming / idle: x%.1f;  budget p99 <= %.0f ms: %s" % (
            pct(busy, 99) / max(pct(idle, 99), 0.001), BUDGET_MS,
            "within" if pct(busy, 99) <= BUDGET_MS and not busy_lost else "OVER"))
        tui.send(b"\x1b")  # interrupt the statement
        tui.drain(0.2)
        tui.send(b"q")
        tui.drain(0.2)
    finally:
        tui.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
