"""monitor and reset against real processes, every configured interpreter:
per-cycle figures that add up (calls = successes + failures, min <= avg <=
max, p99 between min and max), -n cycles, -E; reset of this client on the
same connection, reset without an agent (loads none), reset --all of every client; after each, nothing of ours
is left in the target (tests/agent/targets/watch_target.py's hooks_left:
code objects and attributes the originals, no sys.monitoring tool id)."""

import json
import os
import re
import signal
import subprocess

from conftest import BINARY, EXIT_OK, RawClient, agent_dir, agent_mappings
from test_watch import WATCH_TARGET, hooks_left, ok

ROW = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d) +(\d+) +(\d+) +(\d+) +(\d+\.\d)% +"
                 r"(\d+\.\d{3}) +(\d+\.\d{3}) +(\d+\.\d{3}) +(\d+\.\d{3}) +(\S+)$")


def rows(stdout):
    out = []
    for line in stdout.splitlines():
        m = ROW.match(line)
        if m:
            calls, good, bad = (int(x) for x in m.group(2, 3, 4))
            rate, avg, low, high, p99 = (float(x) for x in m.group(5, 6, 7, 8, 9))
            out.append(dict(calls=calls, ok=good, fail=bad, rate=rate, avg=avg, min=low,
                            max=high, p99=p99, method=m.group(10)))
    return out


def test_monitor_cycles_add_up(profiler, launch, python):
    t = launch(WATCH_TARGET, python)
    out = ok(profiler.cmd(t.pid, "monitor __main__ maybe_fail -c 0.3 -n 2"))
    assert out.startswith("Monitoring __main__.maybe_fail every 0.3 s (Ctrl-C to stop).\n"
                          "TIME  "), out
    rs = rows(out)
    assert len(rs) == 2, out
    for r in rs:
        # The driver alternates odd (raises) and even (returns) arguments.
        assert r["calls"] == r["ok"] + r["fail"] and r["calls"] > 0, r
        assert abs(r["ok"] - r["fail"]) <= 1, r
        assert abs(r["rate"] - 100.0 * r["fail"] / r["calls"]) <= 0.05, r
        assert r["min"] <= r["avg"] <= r["max"] and r["min"] <= r["p99"] <= r["max"], r
        assert r["method"] == "__main__.maybe_fail"
    out = ok(profiler.cmd(t.pid, "monitor __main__ Calc 'ne.|tick' -E -c 0.2 -n 1"))
    assert out.startswith("Pattern matched 2 methods; monitoring 2 every 0.2 s (Ctrl-C to "
                          "stop):\n  __main__.Calc.neg\n  __main__.Calc.tick\n"), out
    assert [r["method"] for r in rows(out)] == ["__main__.Calc.neg", "__main__.Calc.tick"]
    assert profiler.cmd(t.pid, "monitor __main__ Calc nope").error_line().startswith(
        "flight_profiler: monitor: method 'nope' not found in class 'Calc' of module '__main__'")
    assert hooks_left(profiler, t.pid) == "[]"


def test_reset_never_loads_the_agent(profiler, launch, python):
    """With no agent in the process nothing is observed: reset says so,
    in text and in JSON, and loads nothing to find it out."""
    t = launch(WATCH_TARGET, python)
    for args in (["reset"], ["reset", "-a"]):
        out = ok(profiler.cmd(t.pid, " ".join(args)))
        assert out == "reset: nothing was observed (no agent runs in process %d)\n" % t.pid, out
    r = profiler.run(t.pid, "--json", "--cmd", "reset")
    assert r.code == EXIT_OK, r.describe()
    rec = json.loads(r.stdout)
    assert rec["type"] == "answer" and rec["data"] == {"removed": [], "agent": False}, rec
    assert not os.path.exists(agent_dir(t.pid)) and not agent_mappings(t.pid)


def test_reset_this_client_and_every_client(profiler, launch, python):
    t = launch(WATCH_TARGET, python)
    assert hooks_left(profiler, t.pid) == "[]"   # loads the agent
    # This client: a monitor and a reset on one connection.
    c = RawClient(t.pid)
    try:
        c.hello()
        c.send({"t": "req", "id": 1, "cmd": "monitor",
                "args": {"module": "__main__", "method": "add", "cycle": 60}})
        started = c.recv()
        assert started["t"] == "ev" and started["data"]["started"], started
        c.send({"t": "req", "id": 2, "cmd": "reset", "args": {}})
        got = {}
        while len(got) < 2:
            m = c.recv()
            if m["t"] == "end":
                got[m["id"]] = m
        assert got[2]["ok"] and got[2]["data"]["removed"] == ["monitor __main__.add"], got
        assert got[1]["ok"] and got[1]["data"]["reset"] is True, got
    finally:
        c.close()
    assert hooks_left(profiler, t.pid) == "[]"
    # Every client: a watch and a monitor of two other clients.
    procs = [subprocess.Popen([BINARY, str(t.pid), "--cmd", cmd], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE)
             for cmd in ("watch __main__ Calc mul -n 1000000", "monitor __main__ add -c 0.1")]
    for p, first in zip(procs, (b"Watching ", b"Monitoring ")):
        assert p.stdout.readline().startswith(first)
    assert ok(profiler.cmd(t.pid, "reset")) == "reset: nothing was observed\n"
    out = ok(profiler.cmd(t.pid, "reset -a"))
    assert out.startswith("reset: removed 2 instrumentations:\n"), out
    assert sorted(out.splitlines()[1:]) == ["  monitor __main__.add", "  watch __main__.Calc.mul"]
    for p, last in zip(procs, (rb"(^|\n)watch: removed by reset after \d+ calls?\n$",
                               rb"(^|\n)monitor: removed by reset after \d+ cycles?\n$")):
        out, err = p.communicate(timeout=10)
        assert p.returncode == EXIT_OK and re.search(last, out), (out, err)
    assert hooks_left(profiler, t.pid) == "[]"
    # Ctrl-C of a monitor removes it too.
    p = subprocess.Popen([BINARY, str(t.pid), "--cmd", "monitor __main__ add -c 0.1"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert p.stdout.readline().startswith(b"Monitoring ")
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=10)
    assert p.returncode == EXIT_OK and re.search(
        rb"(^|\n)monitor: stopped after \d+ cycles?; the hooks are removed\n$", out), (out, err)
    assert hooks_left(profiler, t.pid) == "[]"
