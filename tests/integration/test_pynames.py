"""Python's thread names read from outside, without the agent (issue 9).

CPython before 3.14 leaves every OS thread named after the program
("python3.12"); the targets here name their threads only in Python.  The
binary must find the names in threading's registry (sys.modules →
threading._active → Thread._name), match them by ident, and leave every
other thread its OS name — without loading the agent, and without an error
when the registry is damaged.
"""

import json
import os

import pytest

import stackdump

PYTHON_314 = (3, 14)   # names its OS threads itself: nothing to read there


def os_names(pid):
    """{tid: /proc comm} of every thread of pid."""
    names = {}
    for tid in os.listdir("/proc/%d/task" % pid):
        with open("/proc/%d/task/%s/comm" % (pid, tid), encoding="utf-8", errors="replace") as f:
            names[int(tid)] = f.read().rstrip("\n")
    return names


def assert_no_agent(pid):
    with open("/proc/%d/maps" % pid) as f:
        maps = f.read()
    assert "fpagent" not in maps, "the agent was loaded"
    assert not os.path.exists("/proc/%d/root/tmp/.flight_profiler-%d" % (pid, pid)), \
        "the agent's directory exists"


def expected_names(target):
    """{tid: name}: the Python name the target gave, else the OS name."""
    out, _ = target.output()
    given = {int(tid): name for tid, name in json.loads(out.splitlines()[0]).items()}
    comm = os_names(target.pid)
    return {tid: name if name is not None else comm[tid] for tid, name in given.items()}


def test_python_names_without_the_agent(python, launch, profiler):
    if python.version_info >= PYTHON_314:
        pytest.skip("3.14+ names its OS threads itself")
    target = launch("pynames.py", python, allow_output=True)
    want = expected_names(target)
    for command in ("stack", "stack --native"):
        result = profiler.cmd(target.pid, command)
        assert result.code == 0 and result.stderr == "", result.describe()
        dump = stackdump.parse(result.stdout)
        got = {t.tid: t.name for t in dump.threads if t.tid in want}
        assert got == want, command
    # The registry's threads all have OS names the program never set.
    comm = os_names(target.pid)
    assert "MainThread" not in comm.values() and "数据" not in comm.values()
    assert_no_agent(target.pid)


@pytest.mark.parametrize("damage", ["keys", "nentries", "notdict", "nomodule"])
def test_damaged_registry_leaves_os_names(python, launch, profiler, damage):
    if python.version_info >= PYTHON_314:
        pytest.skip("3.14+ names its OS threads itself")
    target = launch("pynames_damaged.py", python, env={"FP_DAMAGE": damage})
    result = profiler.cmd(target.pid, "stack")
    assert result.code == 0 and result.stderr == "", result.describe()
    dump = stackdump.parse(result.stdout)
    comm = os_names(target.pid)
    assert {t.tid: t.name for t in dump.threads} == {t.tid: comm[t.tid] for t in dump.threads}
    assert len(dump.threads) == 3
    assert_no_agent(target.pid)


def test_tids_when_a_tid_looks_like_a_pointer(python, launch, profiler):
    """3.8–3.10 find each thread's tid in glibc's struct pthread.  With a
    tid equal to the upper half of the struct's own address (common once
    pids wrap at 32768), every thread once got that one tid: the TUI's
    list lost its order, and `stack` named the wrong threads."""
    target = launch("tid_collides.py", python, allow_output=True)
    out, _ = target.output()
    told = json.loads(out.splitlines()[0])
    if not told["collided"]:
        pytest.skip("no collision could be made: " + told["why"])
    want = {int(tid): name for tid, name in told["threads"].items()}
    for command in ("stack", "stack --native"):
        result = profiler.cmd(target.pid, command)
        assert result.code == 0 and result.stderr == "", result.describe()
        dump = stackdump.parse(result.stdout)
        got = {t.tid: t.name for t in dump.threads if t.tid in want}
        assert got == want, "%s (%s)\n%s" % (command, told["why"], result.stdout)
        assert dump.threads[0].name == "MainThread", command
