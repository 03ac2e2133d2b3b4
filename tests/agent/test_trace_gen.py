"""trace of a generator and of a coroutine, every configured interpreter:
one tree per call covering its whole execution, across every yield and
await -- the calls made inside after the first suspension are there with
exact counts, none of the consumer's calls between resumes are, and the
cost is the time it ran, not the time it waited.  Afterwards no hook is
left.  Target: tests/agent/targets/trace_gen_target.py."""

import os
import re
import time

from conftest import AGENT_TESTS
from test_trace import children, ok, py, trees
from _fptarget import marker_lines

import pytest

TARGET = os.path.join(AGENT_TESTS, "targets", "trace_gen_target.py")
LINES = marker_lines(TARGET)


@pytest.fixture
def target(python, launch):
    t = launch(TARGET, python)
    yield t
    import shutil
    shutil.rmtree("/tmp/.flight_profiler-%d" % t.pid, ignore_errors=True)


def assert_clean(profiler, pid, counter):
    """Nothing replaced, and no thread saw a profile hook while it went
    round its loop twice more."""
    assert py(profiler, pid, "hooks_left()") == "[]"
    py(profiler, pid, "seen_hooks()")
    loops = int(py(profiler, pid, counter))
    deadline = time.monotonic() + 20
    while int(py(profiler, pid, counter)) < loops + 2:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert py(profiler, pid, "seen_hooks()") == "[]"


def kids_of(out, root):
    got = trees(out)
    assert len(got) == 2, out
    for head, nodes in got:
        assert nodes[0][0] == 0 and nodes[0][1].group("name") == root, out
        assert "consumer_work" not in [m.group("name") for d, m in nodes], out
        assert "other" not in [m.group("name") for d, m in nodes], out
        yield head, nodes, children(nodes, 0)


def test_trace_generator_whole_execution(profiler, target):
    pid = target.pid
    out = ok(profiler.cmd(pid, "trace __main__ gen -i 0 -n 2"))
    for head, nodes, kids in kids_of(out, "gen"):
        assert [(m.group("name"), m.group("line")) for m in kids] == \
            [("inner", str(LINES["gen_inner"])), ("inner", str(LINES["gen_tail"]))], out
        assert "[count=3 min=" in kids[0].group("rest"), out
        assert "[count=" not in kids[1].group("rest"), out
        # The consumer slept 3 x 100 ms between items: not the generator's time.
        assert float(re.search(r"cost=([\d.]+) ms$", head).group(1)) < 300, head
    assert py(profiler, pid, "STATE['gen_wrong']") == "0"
    # 3.12+: no hook on the consumer's thread between two items.
    assert py(profiler, pid, "STATE['hooked_between']") == "0"
    assert_clean(profiler, pid, "STATE['gen_loops']")


def test_trace_coroutine_whole_execution(profiler, target):
    pid = target.pid
    out = ok(profiler.cmd(pid, "trace __main__ coro -i 0 -n 2"))
    for head, nodes, kids in kids_of(out, "coro"):
        assert [(m.group("name"), m.group("line")) for m in kids] == \
            [("inner", str(LINES["coro_inner"])), ("sleep", str(LINES["coro_await"])),
             ("inner", str(LINES["coro_tail"]))], out
        assert "[count=3 min=" in kids[0].group("rest"), out
        # Each await of asyncio.sleep(0) is one call, across its suspension.
        assert "[count=3 min=" in kids[1].group("rest"), out
    assert py(profiler, pid, "STATE['aio_wrong']") == "0"
    assert_clean(profiler, pid, "STATE['aio_loops']")


@pytest.mark.parametrize("c_calls", [False, True], ids=["default", "c-calls"])
def test_trace_generator_resumed_on_another_thread(profiler, target, python, c_calls):
    """handed(4) yields two items on the "starter" thread, two more on the
    "finisher": its tree ends with it, on the finisher.  The frame
    evaluator (3.10, 3.11) and 3.12+'s PY_RESUME record the resume on the
    other thread, all four calls of inner(); a profile hook (3.8, 3.9,
    --c-calls before 3.12) is on the starting thread only, and records its
    two."""
    pid = target.pid
    if c_calls and python.version_info[:2] < (3, 10):
        pytest.skip("3.8 and 3.9 have the profile hook alone")
    out = ok(profiler.cmd(pid, "trace __main__ handed -i 0 -n 2" + (" --c-calls" if c_calls else "")))
    whole = python.version_info[:2] >= (3, 12) or \
        (python.version_info[:2] >= (3, 10) and not c_calls)
    got = trees(out)
    assert len(got) == 2, out
    for head, nodes in got:
        assert nodes[0][1].group("name") == "handed", out
        kids = children(nodes, 0)
        assert [(m.group("name"), m.group("line")) for m in kids] == \
            [("inner", str(LINES["handed_inner"]))], out
        assert "[count=%d min=" % (4 if whole else 2) in kids[0].group("rest"), out
        assert "  thread=finisher  " in head, head
    assert py(profiler, pid, "STATE['handed_wrong']") == "0"
    assert_clean(profiler, pid, "STATE['handed_loops']")
