"""watch's capture of every shape of call, on every configured interpreter:
3.12+ takes the agent's C callbacks (inject/agent/monfast.c) for watch's
common case, older versions the __code__ trampoline, and both must give
the records the Python callbacks give: every kind of parameter, a
parameter an inner function closes over, exceptions, recursion, the cost
of a generator and a coroutine over their whole run, calls from two
threads; and after the watch no tool id, no swapped code and nothing of a
call still in flight is kept.  Target: tests/agent/targets/calls_target.py."""

import json
import math
import os
import re
import signal
import subprocess
import time

import pytest

from conftest import AGENT_TESTS, BINARY
from test_watch import ok, records, start_watch

CALLS_TARGET = os.path.join(AGENT_TESTS, "targets", "calls_target.py")
EXECUTE = 'execute "import __main__; print(__main__.%s())"'


@pytest.fixture
def target(python, launch):
    return launch(CALLS_TARGET, python)


def watch(profiler, pid, what):
    return records(ok(profiler.cmd(pid, "watch __main__ " + what)))


def cost_ms(rec):
    return float(re.search(r"  cost=(\d+\.\d+) ms  ", rec["head"]).group(1))


def test_watch_parameters_of_every_kind(profiler, target):
    pid = target.pid
    for r in watch(profiler, pid, "sig -n 3 --expr args,kwargs,return_obj"):
        a = int(re.match(r"^\((\d+), 2, 3, 4\)$", r["args"]).group(1))
        assert r["kwargs"] == "{'k': 6, 'kk': 5, 'z': 7}", r
        assert r["return_obj"] == str(a + 2 + 2 + 6 + 5 + 1)
    for r in watch(profiler, pid, "posonly -n 2 --expr args,kwargs,return_obj"):
        x = int(re.match(r"^\((\d+), 10\)$", r["args"]).group(1))
        assert r["kwargs"] == "{}" and r["return_obj"] == str(x + 10)
    for r in watch(profiler, pid, "cell -n 2 --expr args,return_obj"):
        assert r["args"] == "(%s,)" % r["return_obj"], r


def test_watch_exceptions_and_recursion(profiler, target):
    pid = target.pid
    for r in watch(profiler, pid, "boom -n 2 --expr args,return_obj"):
        n = re.match(r"^\((\d+),\)$", r["args"]).group(1)
        assert r["head"].endswith("raised KeyError: %s" % n) and r["return_obj"] == "None"
    # Each frame of a recursion pairs its own arguments with its own result.
    recs = watch(profiler, pid, "fact -n 8 --expr args,return_obj")
    assert len(recs) == 8
    for r in recs:
        n = int(re.match(r"^\((\d+),\)$", r["args"]).group(1))
        assert r["return_obj"] == str(math.factorial(n)), r


def test_watch_generator_and_coroutine_cost_their_whole_run(profiler, target):
    """slow_gen sleeps 2 x 20 ms between its first and last resumption,
    slow_coro awaits 30 ms: a cost measured at creation would be ~0."""
    pid = target.pid
    for r in watch(profiler, pid, "slow_gen -n 2 --expr args,return_obj"):
        assert cost_ms(r) >= 40.0 and r["return_obj"] == "None", r
    for r in watch(profiler, pid, "slow_coro -n 2 --expr args,return_obj"):
        assert cost_ms(r) >= 30.0 and r["return_obj"] == "'coro-done'", r


def test_watch_two_threads_in_lock_step(profiler, target):
    """Threads a and b call tagged(who) in turn: consecutive records
    alternate, each with its own argument as its result."""
    recs = watch(profiler, target.pid, "tagged -n 6 --expr args,return_obj")
    assert len(recs) == 6
    for r in recs:
        assert r["args"] == "(%s,)" % r["return_obj"], r
    whos = [r["return_obj"] for r in recs]
    assert set(whos) == {"'a'", "'b'"} and all(x != y for x, y in zip(whos, whos[1:])), whos


def test_watch_keeps_nothing_of_a_call_in_flight(profiler, target):
    """A call started while watched and still running when the watch ends
    (a parked generator): once the program drops it, its argument is freed,
    and neither a tool id nor a swapped code is left."""
    pid = target.pid
    proc = start_watch(pid, "watch __main__ parked -n 1000000")
    ok(profiler.cmd(pid, EXECUTE % "park"))
    proc.send_signal(signal.SIGINT)
    proc.communicate(timeout=10)
    assert ok(profiler.cmd(pid, EXECUTE % "hooks_left")) == "[]\n"
    assert ok(profiler.cmd(pid, EXECUTE % "release")) == "freed\n"


def test_watch_counts_the_calls_it_drops(profiler, target):
    """3,000 calls while no other thread may run: the queue (1,024 records)
    fills and the rest are counted as dropped, and said so at the end."""
    pid = target.pid
    proc = subprocess.Popen([BINARY, str(pid), "--cmd", "watch __main__ flood -n 1000"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout.readline().startswith(b"Watching ")
    assert ok(profiler.cmd(pid, 'execute "import __main__; print(__main__.burst(3000))"')) \
        == "%d\n" % sum(range(3000))
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    dropped = int(re.search(rb"\nwatch: (\d+) calls were dropped \(they came faster", out).group(1))
    assert 0 < dropped <= 3000 - 1000, out[-300:]
    assert ok(profiler.cmd(pid, EXECUTE % "hooks_left")) == "[]\n"


def test_watch_ends_while_a_call_runs(profiler, target):
    """A call that began while watched and returns after the watch ended:
    it returns its value, the program lives on, nothing is left (the C
    hook once queued into a freed queue here: the record held the last
    reference to the watch's fast spec)."""
    pid = target.pid
    proc = subprocess.Popen([BINARY, str(pid), "--cmd", "watch __main__ held -n 1000000"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout.readline().startswith(b"Watching ")
    assert ok(profiler.cmd(pid, EXECUTE % "hold")) == "held\n"
    proc.send_signal(signal.SIGINT)
    proc.communicate(timeout=10)
    assert ok(profiler.cmd(pid, 'execute "import gc; gc.collect()"')) == ""
    assert ok(profiler.cmd(pid, EXECUTE % "unhold")) == "[7]\n"
    assert ok(profiler.cmd(pid, EXECUTE % "hooks_left")) == "[]\n"


def ms(value, unit):
    return float(value) * {"s": 1000.0, "ms": 1.0, "us": 0.001}[unit]


@pytest.mark.parametrize("clock", ["counter", "kernel"])
def test_costs_are_on_the_programs_clock(profiler, launch, python, clock):
    """The agent times calls with the CPU's counter where the kernel keeps
    time with it (inject/agent/clock.c), on a line it tunes back onto
    CLOCK_MONOTONIC once a second: its costs must agree with the program's
    own time.monotonic_ns().  nap() sleeps 100 ms, so it costs at least
    that, and no more than the longest nap the program timed around it: a
    rate 0.3 % off, or a jump at a tuning, falls outside.  Watched, and
    naps() (two sleeps of 100 ms in rest()) traced, before and after the agent's line
    was tuned (more than a second later).  Also with FP_AGENT_CLOCK=kernel
    in the program's environment: clock_gettime, as on a machine whose
    kernel keeps time with another clocksource."""
    env = {"FP_AGENT_CLOCK": "kernel"} if clock == "kernel" else None
    pid = launch(CALLS_TARGET, python, env=env).pid
    for _ in range(2):
        costs = [cost_ms(r) for r in watch(profiler, pid, "nap -n 3")]
        out = ok(profiler.cmd(pid, "trace __main__ naps -n 1"))
        span = float(ok(profiler.cmd(pid, EXECUTE.replace("()", "('nap')") % "nap_span")))
        spans = float(ok(profiler.cmd(pid, EXECUTE.replace("()", "('naps')") % "nap_span")))
        assert len(costs) == 3 and all(100.0 <= c <= span for c in costs), (costs, span)
        cost = float(re.search(r"  cost=(\d+\.\d+) ms", out).group(1))
        assert 200.0 <= cost <= spans, (out, spans)
        # Two lines, one per call site of rest() (100 ms) in naps().
        rests = [ms(v, u) for v, u in re.findall(r"---\[\s*[\d.]+%\s+([\d.]+)(us|ms|s)\] rest #", out)]
        assert len(rests) == 2 and all(c >= 100.0 for c in rests), out
        assert sum(rests) <= cost, out
        time.sleep(1.2)


def test_calls_from_execute_are_named_ours(profiler, target):
    """A call the user makes with `execute` runs on an agent thread that
    threading does not know: the record names it flight_profiler
    execute, not a bare thread ident."""
    pid = target.pid
    proc = subprocess.Popen([BINARY, str(pid), "--json", "--cmd",
                             "watch __main__ cell -n 1 -f args[0]==424242"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    first = json.loads(proc.stdout.readline())
    assert first["data"].get("started") is True, first
    ok(profiler.cmd(pid, 'execute "import __main__; __main__.cell(424242)"'))
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    events = [e for e in map(json.loads, out.decode().splitlines()) if e["type"] == "event"]
    assert [e["data"]["thread"] for e in events] == ["flight_profiler execute"], events
