"""Many clients at once: requests wait for one of the agent's 8 workers in
a bounded queue, served round-robin between connections; a queued request
that is cancelled, or whose client leaves, never runs; "busy" is the
answer when every worker is taken by a statement (execute, console: code
that may never return) or the queue is full."""

import os
import subprocess
import time

from conftest import BINARY, EXIT_OK, RawClient

WORKERS = 8
PER_CONN = 64       # JOBS_MAX_QUEUED_PER_CONN in inject/agent/jobs.h

# An execute that keeps the GIL for a moment (a long switch interval, a loop
# that calls nothing releasing it), so that the 20 clients below find every
# worker taken and must queue, however slowly they start.
HOLD_GIL = """import sys, time
old = sys.getswitchinterval()
sys.setswitchinterval(60)
try:
    end = time.monotonic() + 1
    while time.monotonic() < end:
        pass
finally:
    sys.setswitchinterval(old)
"""


def test_twenty_concurrent_large_reads(python, agent_target, profiler):
    t = agent_target(python)
    command = "getglobal __main__ G_BIGSTR -r"
    ref = profiler.cmd(t.pid, command)
    assert ref.code == EXIT_OK and len(ref.stdout) > 1000000, ref.describe()[:2000]
    holder = RawClient(t.pid)
    holder.hello()
    holder.send({"t": "req", "id": 1, "cmd": "execute", "args": {"code": HOLD_GIL}})
    procs = [subprocess.Popen([BINARY, str(t.pid), "--cmd", command], stdin=subprocess.DEVNULL,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in range(20)]
    results = [p.communicate(timeout=60) for p in procs]
    for p, (out, err) in zip(procs, results):
        assert p.returncode == 0, err.decode()
        assert out.decode() == ref.stdout
    while True:
        m = holder.recv()
        if m["t"] == "end":
            assert m["ok"], m
            break
    holder.close()


def gate_expr(gate, mark=None):
    """An expression that waits (polling, so that a cancel interrupts it)
    until the file gate exists; it first creates the file mark."""
    first = "[open(%r, 'w').close()] + " % mark if mark else ""
    return (first + "[__import__('time').sleep(0.01) for _ in "
            "iter(lambda: __import__('os').path.exists(%r), True)]" % gate)


def statement(gate):
    return "import os, time\nwhile not os.path.exists(%r):\n    time.sleep(0.01)\n" % gate


def wait_files(paths, timeout=30):
    deadline = time.monotonic() + timeout
    while not all(os.path.exists(p) for p in paths):
        assert time.monotonic() < deadline, "not started: %r" % [p for p in paths if not os.path.exists(p)]
        time.sleep(0.01)


def ends(client, count):
    """The next `count` end messages of a client, by request id."""
    got = {}
    while len(got) < count:
        m = client.recv()
        assert m is not None, "the agent closed the connection"
        if m["t"] == "end":
            got[m["id"]] = m
    return got


def sync(client, rid):
    """Ping and wait for the pong: the agent has read all sent before."""
    client.send({"t": "ping", "id": rid})
    while True:
        m = client.recv()
        if m["t"] == "pong" and m["id"] == rid:
            return


def log_read(rid, name):
    return {"t": "req", "id": rid, "cmd": "getglobal",
            "args": {"module": "__main__", "field": "QLOG", "expr": "target.append(%r)" % name}}


def test_queue_is_fair_cancel_and_disconnect_drop_requests(python, agent_target, profiler, tmp_path):
    t = agent_target(python)
    r = profiler.cmd(t.pid, "execute 'import __main__; __main__.QLOG = []'")
    assert r.code == EXIT_OK, r.describe()
    g1, g2 = str(tmp_path / "g1"), str(tmp_path / "g2")
    marks = [str(tmp_path / ("ran%d" % i)) for i in range(WORKERS)]
    x, a, b, c, d = (RawClient(t.pid) for _ in range(5))     # connected in this order
    try:
        for cl in (x, a, b, c, d):
            cl.hello()
        # Every worker waits on a gate: 7 on g1, 1 on g2.
        for i in range(WORKERS):
            x.send({"t": "req", "id": i + 1, "cmd": "getglobal",
                    "args": {"module": "__main__", "field": "G_LIST",
                             "expr": gate_expr(g2 if i == 0 else g1, marks[i])}})
        wait_files(marks)
        # Client a queues 10 reads, then b one; each appends its name to QLOG.
        for i in range(1, 11):
            a.send(log_read(i, "a%d" % i))
        sync(a, 100)
        b.send(log_read(1, "b1"))
        sync(b, 100)
        # A queued request cancelled ends at once and never runs.
        a.send({"t": "cancel", "id": 5})
        e = ends(a, 1)[5]
        assert not e["ok"] and e["kind"] == "cancelled", e
        # A client that leaves drops what it queued.
        for i in range(1, 4):
            c.send(log_read(i, "c%d" % i))
        sync(c, 100)
        c.close()
        # The queue is bounded per client.
        for i in range(1, PER_CONN + 2):
            d.send({"t": "req", "id": i, "cmd": "getglobal",
                    "args": {"module": "__main__", "field": "G_LIST"}})
        e = ends(d, 1)[PER_CONN + 1]
        assert not e["ok"] and e["kind"] == "busy" and "%d requests" % PER_CONN in e["error"], e
        d.close()
        # One worker frees: it serves a and b in turn, not a's ten first.
        open(g2, "w").close()
        got = ends(a, 9)
        assert all(m["ok"] for m in got.values()), got
        assert ends(b, 1)[1]["ok"]
        open(g1, "w").close()
        assert all(m["ok"] for m in ends(x, WORKERS).values())
        _, end = a.request(50, "getglobal", module="__main__", field="QLOG", expr="','.join(target)")
        order = end["data"]["value"]["r"].strip("'").split(",")
        assert order == ["a1", "b1", "a2", "a3", "a4", "a6", "a7", "a8", "a9", "a10"], order
    finally:
        for cl in (x, a, b, c, d):
            cl.close()


def test_busy_when_every_worker_runs_a_statement(python, agent_target, profiler, tmp_path):
    """7 statements that do not return leave one worker, which serves the
    reads that queue for it; the 8th statement takes it: a read then, or a
    9th statement, is refused at once with "busy"."""
    t = agent_target(python)
    r = profiler.cmd(t.pid, "getglobal __main__ Config name")
    assert r.code == EXIT_OK, r.describe()
    gate = str(tmp_path / "gate")
    s, q = RawClient(t.pid), RawClient(t.pid)
    try:
        s.hello()
        q.hello()
        for i in range(1, WORKERS):
            s.send({"t": "req", "id": i, "cmd": "execute", "args": {"code": statement(gate)}})
        sync(s, 100)
        for i in range(1, 6):
            q.send({"t": "req", "id": i, "cmd": "getglobal",
                    "args": {"module": "__main__", "field": "Config", "expr": "target.name"}})
        got = ends(q, 5)
        assert all(m["ok"] and m["data"]["value"] == {"r": "'cfg'"} for m in got.values()), got
        s.send({"t": "req", "id": WORKERS, "cmd": "execute", "args": {"code": statement(gate)}})
        s.send({"t": "req", "id": WORKERS + 1, "cmd": "execute", "args": {"code": "pass"}})
        e = ends(s, 1)[WORKERS + 1]
        assert not e["ok"] and e["kind"] == "busy", e
        assert "all %d agent workers are busy with statements" % WORKERS in e["error"], e
        _, e = q.request(10, "getglobal", module="__main__", field="Config")
        assert not e["ok"] and e["kind"] == "busy", e
        open(gate, "w").close()
        assert all(m["ok"] for m in ends(s, WORKERS).values())
        _, e = q.request(11, "getglobal", module="__main__", field="Config", expr="target.name")
        assert e["ok"] and e["data"]["value"] == {"r": "'cfg'"}, e
    finally:
        s.close()
        q.close()


def test_caps_are_the_commands_it_runs(python, agent_target, profiler, tmp_path):
    """One table in the agent: the hello's caps are exactly what it runs
    (cancel is answered by the server, not run as a request), and a name
    not in it is refused at once, before any worker: with every worker
    taken by a statement, the answer is "no such command", not "busy"."""
    t = agent_target(python)
    r = profiler.cmd(t.pid, "getglobal __main__ Config name")
    assert r.code == EXIT_OK, r.describe()
    gate = str(tmp_path / "gate")
    s = RawClient(t.pid)
    try:
        caps = s.hello()["caps"]
        assert caps == ["getglobal", "vmtool", "module", "execute", "console", "threads",
                        "mem", "watch", "torch", "trace", "names", "monitor", "reset",
                        "tt", "cancel"], caps
        for rid, cmd in enumerate(caps, 1):
            if cmd == "cancel":
                continue
            _, e = s.request(rid, cmd)
            assert "has no command" not in e.get("error", ""), (cmd, e)
        for i in range(1, WORKERS + 1):
            s.send({"t": "req", "id": 100 + i, "cmd": "execute", "args": {"code": statement(gate)}})
        sync(s, 200)
        for rid, cmd in ((300, "cancel"), (301, "nosuch"), (302, "x" * 500)):
            s.send({"t": "req", "id": rid, "cmd": cmd, "args": {}})
            e = ends(s, 1)[rid]
            assert not e["ok"] and e["kind"] == "usage", e
            assert e["error"] == ("this agent has no command '%s'" % cmd if len(cmd) < 80 else
                                  "this agent has no command of that name"), e
        open(gate, "w").close()
        assert all(m["ok"] for m in ends(s, WORKERS).values())
    finally:
        s.close()
