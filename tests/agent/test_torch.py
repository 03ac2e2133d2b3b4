"""torch profile / memory / modules on a real CPU training loop
(tests/agent/targets/torch_target.py) under an interpreter that has torch
(Debian's python3-torch for /usr/bin/python3.11; the tests skip, saying
so, where no configured interpreter has it), and `torch` on a process that
never imported torch.  After each test the target is alive (or exited by
itself), untraced, not stopped, silent, and without any hook of ours."""

import json
import os
import re
import subprocess
import time

import pytest

from conftest import BINARY, EXIT_OK

HERE = os.path.dirname(os.path.abspath(__file__))
TORCH_TARGET = os.path.join(HERE, "targets", "torch_target.py")
HOOKS_LEFT = 'execute "import __main__; print(__main__.hooks_left())"'
ROW = re.compile(r"^\s*(\S+) \| (forward|backward)\s*\|\s+(\d+) \|")

_has_torch = {}


def has_torch(python):
    """True when python can import torch (asked without importing it)."""
    if python.exe not in _has_torch:
        r = subprocess.run([python.exe, "-c", "import importlib.util, sys; "
                            "sys.exit(importlib.util.find_spec('torch') is None)"],
                           capture_output=True, timeout=60)
        _has_torch[python.exe] = r.returncode == 0
    return _has_torch[python.exe]


@pytest.fixture
def torch_python(request):
    for p in request.config.fp_interpreters:
        if has_torch(p):
            return p
    pytest.skip("no configured interpreter has torch (Debian: apt-get install python3-torch, "
                "for /usr/bin/python3.11)")


def wait_for_lines(path, n, timeout=60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if os.path.exists(path):
            with open(path) as f:
                if len(f.readlines()) >= n:
                    return
        time.sleep(0.05)
    raise AssertionError("the training loop wrote fewer than %d losses in %d s" % (n, timeout))


def hooks_left(profiler, pid):
    r = profiler.cmd(pid, HOOKS_LEFT)
    assert r.code == EXIT_OK, r.describe()
    return int(r.stdout.strip())


def check_modules(profiler, pid):
    r = profiler.cmd(pid, "torch modules -n 3")
    assert r.code == EXIT_OK, r.describe()
    assert "3 steps of Model" in r.stdout, r.stdout
    rows = {(m, stage): int(calls) for m, stage, calls in
            (x.groups() for x in map(ROW.match, r.stdout.splitlines()) if x)}
    for layer in ("Model.fc1", "Model.act", "Model.fc2", "Model.head", "Model", "MSELoss"):
        assert rows.get((layer, "forward")) == 3, r.stdout
        assert rows.get((layer, "backward")) == 3, r.stdout
    assert "malloc's bytes in use" in r.stdout, r.stdout
    f = profiler.cmd(pid, "torch modules -n 1 --filter fc[12]")
    assert f.code == EXIT_OK, f.describe()
    names = {x.group(1) for x in map(ROW.match, f.stdout.splitlines()) if x}
    assert names == {"Model.fc1", "Model.fc2"}, f.stdout
    assert hooks_left(profiler, pid) == 0


def check_profile(profiler, pid, tmp_path):
    trace = tmp_path / "trace.json"
    r = profiler.cmd(pid, "torch profile __main__ Model forward -f %s" % trace)
    assert r.code == EXIT_OK, r.describe()
    assert "written to %s" % trace in r.stdout, r.stdout
    with open(trace) as f:
        events = json.load(f)
    if isinstance(events, dict):
        events = events["traceEvents"]
    names = {e.get("name") for e in events}
    assert {"aten::linear", "aten::addmm", "aten::relu_"} <= names, sorted(names)
    r = profiler.cmd(pid, "torch profile __main__ Model never_called --timeout 1")
    assert r.code != EXIT_OK
    assert "was not called within 1 s" in r.error_line(), r.describe()
    r = profiler.cmd(pid, "torch profile __main__ Model forward -f /nonexistent/dir/t.json")
    assert r.code != EXIT_OK and "does not exist" in r.error_line(), r.describe()
    assert hooks_left(profiler, pid) == 0


def check_client_killed(profiler, pid):
    """A client killed while torch modules waits: the agent removes the hooks."""
    p = subprocess.Popen([BINARY, str(pid), "--cmd", "torch modules -n 100000"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert "modules hooked" in p.stdout.readline()
        assert hooks_left(profiler, pid) > 0
    finally:
        p.kill()
        p.communicate()
    for _ in range(100):
        if hooks_left(profiler, pid) == 0:
            break
        time.sleep(0.1)
    assert hooks_left(profiler, pid) == 0


def test_torch_on_a_training_loop(torch_python, launch, profiler, tmp_path):
    losses, stop = tmp_path / "losses", tmp_path / "stop"
    t = launch(TORCH_TARGET, torch_python, expect_exit=True,
               env={"TORCH_LOSS_FILE": str(losses), "TORCH_STOP_FILE": str(stop)})
    wait_for_lines(losses, 1)
    snap = tmp_path / "snapshot.pickle"
    r = profiler.cmd(t.pid, "torch memory -s -f %s" % snap)
    assert r.code != EXIT_OK
    assert "without CUDA" in r.error_line() and "nothing was written" in r.error_line(), \
        r.describe()
    assert not snap.exists()
    check_modules(profiler, t.pid)
    check_profile(profiler, t.pid, tmp_path)
    check_client_killed(profiler, t.pid)
    stop.touch()
    assert t.proc.wait(timeout=60) == 0
    with open(losses) as f:
        seen = f.read().splitlines()
    # The same loop without us: every loss the same, to the last bit.
    ref = tmp_path / "reference"
    subprocess.run([torch_python.exe, TORCH_TARGET], check=True, timeout=120, capture_output=True,
                   env=dict(os.environ, TORCH_LOSS_FILE=str(ref), TORCH_STEPS=str(len(seen))))
    with open(ref) as f:
        assert f.read().splitlines() == seen


def test_torch_not_loaded(python, agent_target, profiler):
    t = agent_target(python)
    for cmd in ("torch modules", "torch profile __main__ main", "torch memory -s"):
        r = profiler.cmd(t.pid, cmd)
        assert r.code != EXIT_OK
        assert "torch is not loaded in this process" in r.error_line(), r.describe()
    r = profiler.cmd(t.pid, 'execute "import sys; print(\'torch\' in sys.modules)"')
    assert r.code == EXIT_OK and r.stdout.strip() == "False", r.describe()
