"""trace against real processes, every configured interpreter: the call
tree beneath each call with call-site lines, repeats merged with exact
counts, -i / -d / -et, a standard-library function traced while the
program uses it (its results unchanged), and the hooks gone afterwards --
after -n, Ctrl-C and SIGKILL of the client, checked from inside the
target: every attribute is the very object it was and no thread has a
profile hook set.  Target: tests/agent/targets/trace_target.py."""

import os
import re
import signal
import subprocess
import sys
import time

import pytest

from conftest import AGENT_TESTS, BINARY, EXIT_OK

sys.path.insert(0, os.path.join(AGENT_TESTS, "..", "targets"))
from _fptarget import marker_lines  # noqa: E402

TRACE_TARGET = os.path.join(AGENT_TESTS, "targets", "trace_target.py")
LINES = marker_lines(TRACE_TARGET)
NODE = re.compile(r"^(?P<prefix>[ |]*)[`+]---\[\s*(?P<share>[\d.]+)% +(?P<cost>[\d.]+)(?P<unit>ms|us)\] "
                  r"(?P<name>\S+)(?: #(?P<line>\d+))?(?P<rest>.*)$")


@pytest.fixture
def target(python, launch):
    t = launch(TRACE_TARGET, python)
    yield t
    import shutil
    shutil.rmtree("/tmp/.flight_profiler-%d" % t.pid, ignore_errors=True)


def ok(result):
    assert result.code == EXIT_OK, result.describe()
    return result.stdout


def py(profiler, pid, expr):
    return ok(profiler.cmd(pid, 'execute "import __main__; print(__main__.%s)"' % expr)).strip()


def trees(stdout):
    """[(header, [(depth, match)])] of each traced call."""
    out = []
    for line in stdout.splitlines():
        if re.match(r"^\[\d+\] ", line):
            out.append((line, []))
            continue
        m = NODE.match(line)
        if m and out:
            out[-1][1].append((len(m.group("prefix")) // 4, m))
    return out


def children(nodes, i):
    """The nodes directly beneath nodes[i]."""
    depth, out = nodes[i][0], []
    for d, m in nodes[i + 1:]:
        if d <= depth:
            break
        if d == depth + 1:
            out.append(m)
    return out


def assert_clean(profiler, pid):
    """No attribute replaced, and no thread saw a profile hook while it
    looped three more times."""
    assert py(profiler, pid, "hooks_left()") == "[]"
    py(profiler, pid, "seen_hooks()")
    loops = int(py(profiler, pid, "STATE['loops']"))
    deadline = time.monotonic() + 10
    while int(py(profiler, pid, "STATE['loops']")) < loops + 3:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert py(profiler, pid, "seen_hooks()") == "[]"


def eval_path(python, c_calls):
    """Does trace record with the frame evaluator (inject/agent/evalhook.c)
    by default on this interpreter, and was it not asked for --c-calls?"""
    return python.version_info >= (3, 10) and not c_calls


EVAL_NOTE = ("(Python calls only: time in builtins is their caller's own; --c-calls shows "
             "them, at a higher cost.)\n")


@pytest.mark.parametrize("c_calls", [False, True], ids=["default", "c-calls"])
def test_trace_tree_lines_and_merged_repeats(profiler, target, python, c_calls):
    """The same tree from both mechanisms, but for the builtin: the eval
    path (3.10+ by default) sees Python calls only, time.sleep's 2 ms stay
    in func's own time; the profile hook (--c-calls, 3.8/3.9) shows it."""
    pid = target.pid
    out = ok(profiler.cmd(pid, "trace __main__ func -i 0 -n 2" + (" --c-calls" if c_calls else "")))
    head = "Tracing __main__.func (Ctrl-C to stop).\n"
    assert out.startswith(head + EVAL_NOTE if eval_path(python, c_calls) else head), out
    assert eval_path(python, c_calls) or EVAL_NOTE not in out, out
    builtin = not eval_path(python, c_calls)
    got = trees(out)
    assert len(got) == 2, out
    for i, (head, nodes) in enumerate(got, 1):
        assert re.match(r"^\[%d\] \d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}  __main__\.func  "
                        r"thread=drive  cost=\d+\.\d{3} ms$" % i, head), head
        assert nodes[0][0] == 0 and nodes[0][1].group("name") == "func"
        assert nodes[0][1].group("share") == "100.0"
        kids = children(nodes, 0)
        names = [(m.group("name"), m.group("line")) for m in kids]
        assert names == [("work", str(LINES["work"]))] + \
            ([("time.sleep", str(LINES["sleep"]))] if builtin else []) + \
            [("leaf", str(LINES["leaf3"]))], out
        # leaf(1) three times at one site: one line, count exact.
        assert "[count=3 min=" in kids[-1].group("rest"), out
        work = [j for j, (d, m) in enumerate(nodes) if m.group("name") == "work"][0]
        inner = children(nodes, work)
        assert [(m.group("name"), m.group("line")) for m in inner] == \
            [("leaf", str(LINES["leaf5"]))], out
        assert "[count=5 min=" in inner[0].group("rest")
        # Shares of the parent: the sleep dominates func, as a line of its
        # own or as func's own time (what its callees leave).
        if builtin:
            assert float(kids[1].group("share")) > 50.0
        else:
            assert sum(float(k.group("share")) for k in kids) < 50.0, out
    assert_clean(profiler, pid)


def test_trace_nested_method(profiler, target):
    """-nm: the tree of each call of the function defined inside the
    method, rooted at it (not at the method that defined it), its cost the
    nested call's."""
    pid = target.pid
    out = ok(profiler.cmd(pid, "trace __main__ outer -nm inner -i 0 -n 2"))
    assert out.startswith("Tracing __main__.outer.inner (Ctrl-C to stop).\n"), out
    got = trees(out)
    assert len(got) == 2, out
    for head, nodes in got:
        assert "  __main__.outer.inner  thread=drive" in head, head
        # a qualified name where the code has one (3.11+)
        assert nodes[0][0] == 0 and nodes[0][1].group("name") in ("inner", "outer.<locals>.inner"), out
        kids = children(nodes, 0)
        assert [(m.group("name"), m.group("line")) for m in kids] == \
            [("work", str(LINES["nestedwork"]))], out
        assert [m.group("name") for m in children(nodes, 1)] == ["leaf"], out
        assert "[count=3 min=" in children(nodes, 1)[0].group("rest"), out
    assert_clean(profiler, pid)


def test_trace_leaves_another_profiler_alone(profiler, target):
    """Thread "own" calls func() under its own sys.setprofile: its calls
    are not traced, and its profiler stays set and keeps getting events."""
    pid = target.pid
    before = int(py(profiler, pid, "OWN['events']"))
    got = trees(ok(profiler.cmd(pid, "trace __main__ func -n 6")))
    assert len(got) == 6
    assert all("  thread=drive  " in head for head, nodes in got), [h for h, n in got]
    assert py(profiler, pid, "OWN['kept']") == "True"
    assert int(py(profiler, pid, "OWN['events']")) > before
    assert_clean(profiler, pid)


def test_trace_interval_and_depth(profiler, target):
    pid = target.pid
    # -i 1: only time.sleep (2 ms) is slower than 1 ms; the rest is counted.
    # --c-calls: the profile hook, which shows the builtin (time.sleep).
    out = ok(profiler.cmd(pid, "trace __main__ func -i 1 -n 1 --c-calls"))
    head, nodes = trees(out)[0]
    assert [m.group("name") for d, m in nodes] == ["func", "time.sleep"]
    # work once and leaf three times at func's level are left out, and said so.
    assert re.search(r"\n {8}\(4 more calls, [\d.]+(us|ms): under -i, below -d or importing\)\n",
                     out), out
    # -d 1 -i 0: func's own callees, nothing beneath them.
    out = ok(profiler.cmd(pid, "trace __main__ func -d 1 -i 0 -n 1 --c-calls"))
    head, nodes = trees(out)[0]
    assert [(d, m.group("name")) for d, m in nodes] == \
        [(0, "func"), (1, "work"), (1, "time.sleep"), (1, "leaf")], out
    # -d 3 -i 0: the whole path (func > work > leaf).
    head, nodes = trees(ok(profiler.cmd(pid, "trace __main__ func -d 3 -i 0 -n 1")))[0]
    assert (2, "leaf") in [(d, m.group("name")) for d, m in nodes]
    # -et 3: only the calls of slowish that slept (4 ms), never the quick ones.
    got = trees(ok(profiler.cmd(pid, "trace __main__ slowish -et 3 -n 2")))
    assert len(got) == 2
    for head, nodes in got:
        assert float(re.search(r"cost=([\d.]+) ms", head).group(1)) >= 3.0
    assert_clean(profiler, pid)


def test_trace_stdlib_function_in_use(profiler, target):
    pid = target.pid
    before = int(py(profiler, pid, "STATE['json_calls']"))
    out = ok(profiler.cmd(pid, "trace json dumps -i 0 -n 3"))
    got = trees(out)
    assert len(got) == 3, out
    for head, nodes in got:
        assert nodes[0][1].group("name") == "dumps"
        assert "JSONEncoder.encode" in [m.group("name") for d, m in nodes] or \
            "encode" in [m.group("name") for d, m in nodes], out
    assert int(py(profiler, pid, "STATE['json_calls']")) > before
    assert py(profiler, pid, "STATE['json_wrong']") == "0"
    assert_clean(profiler, pid)


def start_trace(pid, command):
    proc = subprocess.Popen([BINARY, str(pid), "--cmd", command], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    first = proc.stdout.readline()
    assert first.startswith(b"Tracing "), first + proc.stderr.read()
    return proc


def wait_for(profiler, pid, expr, want, seconds):
    deadline = time.monotonic() + seconds
    while py(profiler, pid, expr) != want:
        assert time.monotonic() < deadline, "%s never became %s" % (expr, want)
        time.sleep(0.05)


def test_trace_hooks_removed_on_ctrl_c_and_sigkill(profiler, target):
    pid = target.pid
    # Ctrl-C while a call is being traced: the hook leaves that very call.
    started = int(py(profiler, pid, "STATE['long_started']"))
    proc = start_trace(pid, "trace __main__ long_call -n 5")
    wait_for(profiler, pid, "STATE['in_long']", "True", 15)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=10)
    assert proc.returncode == EXIT_OK, err
    assert out.endswith(b"trace: stopped after 0 calls; the hooks are removed\n"), out
    wait_for(profiler, pid, "STATE['in_long']", "False", 2)
    assert_clean(profiler, pid)
    # SIGKILL of the client: within 2 s no thread pays for the trace.
    proc = start_trace(pid, "trace __main__ long_call -n 5")
    wait_for(profiler, pid, "STATE['in_long']", "True", 15)
    mid = int(py(profiler, pid, "STATE['long_started']"))
    proc.kill()
    proc.communicate(timeout=10)
    wait_for(profiler, pid, "STATE['in_long']", "False", 2)
    # Unhooked in the middle of the call, not by its end.
    assert int(py(profiler, pid, "STATE['long_started']")) == mid
    assert mid > started
    assert_clean(profiler, pid)


def test_trace_program_exits_mid_trace(profiler, launch, python):
    """The program ends normally (SIGUSR1: its main thread exits with
    status 0) while a daemon thread is inside a traced call, 3.10+ with
    trace's frame evaluator installed: the interpreter finalizes with it
    and exits promptly with status 0 (the launch fixture checks it), and
    the client says the process exited."""
    t = launch(TRACE_TARGET, python, expect_exit=True)
    pid = t.pid
    proc = start_trace(pid, "trace __main__ long_call -n 5")
    wait_for(profiler, pid, "STATE['in_long']", "True", 15)
    if python.version_info[:2] >= (3, 10):
        assert py(profiler, pid, "STATE['long_eval']") == "True"
    os.kill(pid, signal.SIGUSR1)
    out, err = proc.communicate(timeout=10)
    assert proc.returncode != EXIT_OK, (out, err)
    assert (b"process %d exited" % pid) in err, (out, err)
    t.proc.wait(timeout=5)


@pytest.mark.parametrize("c_calls", [False, True], ids=["default", "c-calls"])
def test_trace_mechanism_seen_from_inside(profiler, target, python, c_calls):
    """While long_call is traced, its thread has a profile hook (3.8/3.9,
    --c-calls) or, the eval path, none but the interpreter runs trace's
    frame evaluator; either is gone when the trace is cancelled."""
    pid = target.pid
    py(profiler, pid, "STATE.update(long_profile=False, long_eval=False)")
    proc = start_trace(pid, "trace __main__ long_call -n 5" + (" --c-calls" if c_calls else ""))
    wait_for(profiler, pid, "STATE['in_long']", "True", 15)
    ev = eval_path(python, c_calls)
    assert py(profiler, pid, "STATE['long_profile']") == str(not ev)
    assert py(profiler, pid, "STATE['long_eval']") == str(ev)
    proc.send_signal(signal.SIGINT)
    proc.communicate(timeout=10)
    wait_for(profiler, pid, "STATE['in_long']", "False", 2)
    assert py(profiler, pid, "STATE['long_eval']") == "False"
    assert_clean(profiler, pid)


@pytest.mark.min_python((3, 10))
def test_trace_evaluator_out_at_once(profiler, target):
    """The client killed while the traced call sits in one builtin (nap's
    3 s sleep): trace's frame evaluator is out within a second, before
    that call returns -- not at the thread's next Python call."""
    pid = target.pid
    proc = start_trace(pid, "trace __main__ nap -n 5")
    wait_for(profiler, pid, "default_frame_evaluator()", "False", 10)
    naps = py(profiler, pid, "STATE['naps']")
    proc.kill()
    proc.communicate(timeout=10)
    wait_for(profiler, pid, "default_frame_evaluator()", "True", 1)
    assert py(profiler, pid, "STATE['naps']") == naps   # the same call still sleeps
    assert_clean(profiler, pid)


FOREIGN_EVAL = os.path.join(AGENT_TESTS, "targets", "foreign_eval.c")


@pytest.mark.min_python((3, 10))
def test_trace_another_frame_evaluator_kept(profiler, target, python, tmp_path):
    """Another tool's frame evaluator (as PyTorch dynamo's or pydevd's) is
    installed: trace records with the profile hook instead, says so, and
    leaves that evaluator in place and working."""
    lib = str(tmp_path / "foreign_eval.so")
    subprocess.run(["cc", "-shared", "-fPIC", "-I", python.includedir, "-o", lib, FOREIGN_EVAL],
                   check=True)
    pid = target.pid
    ok(profiler.cmd(pid, 'execute "import ctypes, __main__; __main__.FOREIGN = '
                         'ctypes.PyDLL(%r); __main__.FOREIGN.foreign_install()"' % lib))
    try:
        out = ok(profiler.cmd(pid, "trace __main__ func -i 0 -n 1"))
        assert out.startswith("Tracing __main__.func (Ctrl-C to stop).\n(With the profile hook, "
                              "builtins included: another tool's frame evaluator (PEP 523) is "
                              "installed.)\n"), out
        head, nodes = trees(out)[0]
        assert "time.sleep" in [m.group("name") for d, m in nodes], out
        # Still the foreign one, and still evaluating the program's frames.
        before = int(py(profiler, pid, "FOREIGN.foreign_frames()"))
        assert py(profiler, pid, "default_frame_evaluator()") == "False"
        time.sleep(0.1)
        assert int(py(profiler, pid, "FOREIGN.foreign_frames()")) > before
    finally:
        ok(profiler.cmd(pid, 'execute "import __main__; __main__.FOREIGN.foreign_remove()"'))
    assert py(profiler, pid, "default_frame_evaluator()") == "True"
    assert_clean(profiler, pid)


def test_trace_bad_names(profiler, target):
    pid = target.pid
    r = profiler.cmd(pid, "trace __main__ nosuch")
    assert r.code != EXIT_OK
    assert "method 'nosuch' not found in module '__main__'" in r.stderr, r.describe()
    r = profiler.cmd(pid, "trace time sleep")
    assert "written in C" in r.stderr, r.describe()
    assert_clean(profiler, pid)
