"""The inside commands over a set of processes with --all (issue 13), every
configured interpreter: getglobal, execute, vmtool and mem summary run in
each member of a multiprocessing job (tests/targets/pool.py, 8 workers,
each with its own pid in the global WORKER_ID), loading the agent in each;
every member's result is under its own header, then one summary line.  A
member that is not Python, one whose code raises and one that exits while
the command runs are reported in their sections while the rest are still
shown, and the exit status says so; every member is healthy afterwards."""

import json
import re
import subprocess

from conftest import EXIT_OK, EXIT_OTHER, EXIT_USAGE
from test_procset import children, healthy

HEADER = re.compile(r"^== pid (\d+) (.*) ==$")


def sections(stdout):
    """{pid: [lines but blank ones]} of each member's section, and the pids in
    the order printed; the summary line after them is no section's."""
    out, order, current = {}, [], None
    for line in stdout.splitlines()[:-1]:
        m = HEADER.match(line)
        if m:
            current = int(m.group(1))
            order.append(current)
            out[current] = []
        elif current is not None and line != "":
            out[current].append(line)
    return out, order


def summary(stdout):
    """The last line: '9 processes: 8 ok, 1 failed'."""
    return stdout.rstrip("\n").splitlines()[-1]


def test_getglobal_all_shows_each_members_own_value(python, launch, profiler):
    t = launch("pool.py", python)
    job = sorted([t.pid] + children(t.pid))
    assert len(job) == 9, job
    r = profiler.run(t.pid, "--tree", "--cmd", "getglobal __main__ WORKER_ID --all")
    assert r.code == EXIT_OK and r.stderr == "", r.describe()
    found, order = sections(r.stdout)
    assert order == job, r.describe()
    for pid in job:
        assert re.search(r"^== pid %d python\S* pool\.py ==$" % pid, r.stdout, re.M), r.describe()
        # Each process's own global, not the first one's seen nine times.
        assert "VALUE: %d" % pid in found[pid], r.describe()
    assert summary(r.stdout) == "9 processes: 9 ok", r.describe()
    # An expression that raises in one member only: said there, the rest shown.
    odd = job[4]
    r = profiler.run(t.pid, "--tree", "--cmd", "getglobal __main__ WORKER_ID -e "
                     "'1 / (target - %d) and target' --all" % odd)
    assert r.code == EXIT_OTHER, r.describe()
    assert "getglobal --all: failed in 1 of 9 processes (the first: pid %d)" % odd \
        in r.error_line(), r.describe()
    found, order = sections(r.stdout)
    assert order == job, r.describe()
    assert found[odd] == ["failed: getglobal: the expression raised ZeroDivisionError: "
                          "division by zero"], r.describe()
    assert all("VALUE: %d" % pid in found[pid] for pid in job if pid != odd), r.describe()
    assert summary(r.stdout) == "9 processes: 8 ok, 1 failed", r.describe()
    # --json: one answer record per member, each with its own value; the
    # member whose expression raises is an error record, the rest still there.
    r = profiler.run(t.pid, "--tree", "--json", "--cmd", "getglobal __main__ WORKER_ID -e "
                     "'1 / (target - %d) and target' --all" % odd)
    assert r.code == EXIT_OTHER, r.describe()
    recs = [json.loads(line) for line in r.stdout.splitlines()]
    assert [x["pid"] for x in recs] == job, r.describe()
    for x in recs:
        if x["pid"] == odd:
            assert x["type"] == "error" and "ZeroDivisionError" in x["error"], r.describe()
        else:
            assert x["type"] == "answer" and x["command"] == "getglobal" and \
                x["data"]["value"]["r"] == str(x["pid"]), r.describe()
    # A set without --all: one line saying to add it.  One pid with --all: that process.
    r = profiler.run(t.pid, "--tree", "--cmd", "getglobal __main__ WORKER_ID")
    assert r.code == EXIT_USAGE and "add --all" in r.error_line() and r.stdout == "", \
        r.describe()
    r = profiler.cmd(t.pid, "getglobal __main__ WORKER_ID --all")
    assert r.code == EXIT_OK and "VALUE: %d" % t.pid in r.stdout, r.describe()
    assert "== pid" not in r.stdout, r.describe()
    # A command that runs in no set says which ones do.
    r = profiler.run(t.pid, "--tree", "--cmd", "module pool.py")
    assert r.code == EXIT_USAGE, r.describe()
    assert "does not run over a process set (stack, perf do, and with --all getglobal, " \
        "vmtool, execute, mem summary)" in r.error_line(), r.describe()
    assert all(healthy(p) for p in job)


def test_execute_all_a_member_raises_one_exits_one_is_not_python(python, launch, profiler):
    t = launch("pool.py", python)
    workers = children(t.pid)
    raises, exits = workers[2], workers[5]
    sleeper = subprocess.Popen(["sleep", "300"])
    code = ("import os; print('in', os.getpid()); assert os.getpid() != %d; "
            "os.getpid() == %d and os._exit(0)" % (raises, exits))
    try:
        r = profiler.run("%d,%d" % (t.pid, sleeper.pid), "--tree", "--cmd",
                         "execute \"%s\" --all" % code)
    finally:
        sleeper.kill()
        sleeper.wait()
    assert r.code == EXIT_OTHER, r.describe()
    assert "execute --all: failed in 3 of 10 processes" in r.error_line(), r.describe()
    found, order = sections(r.stdout)
    assert order == sorted([t.pid, sleeper.pid] + workers), r.describe()
    for pid in [t.pid] + workers:
        # What the one that exits printed may die with it.
        assert found[pid][0] == "in %d" % pid or pid == exits, r.describe()
        failed = [line for line in found[pid] if line.startswith("failed: ")]
        if pid == raises:
            assert "AssertionError" in found[pid] and failed == ["failed: execute: AssertionError"], \
                r.describe()
        elif pid == exits:
            assert len(failed) == 1 and "exited" in failed[0], r.describe()
        else:
            assert failed == [], r.describe()
    assert len(found[sleeper.pid]) == 1 and re.match(
        r"failed: process %d .*is not a Python process" % sleeper.pid, found[sleeper.pid][0]), \
        r.describe()
    assert summary(r.stdout) == "10 processes: 7 ok, 3 failed", r.describe()
    assert all(healthy(p) for p in [t.pid] + workers if p != exits)


def test_vmtool_and_mem_summary_all_give_a_section_per_member(python, launch, profiler):
    t = launch("pool.py", python)
    job = sorted([t.pid] + children(t.pid))
    r = profiler.run(t.pid, "--tree", "--cmd", "vmtool -a forceGc --all")
    assert r.code == EXIT_OK, r.describe()
    found, order = sections(r.stdout)
    assert order == job, r.describe()
    for pid in job:
        assert len(found[pid]) == 1 and found[pid][0].startswith(
            "forceGc: the garbage collector found "), r.describe()
    assert summary(r.stdout) == "9 processes: 9 ok", r.describe()
    r = profiler.run(t.pid, "--tree", "--cmd", "mem summary --limit 2 --all")
    assert r.code == EXIT_OK, r.describe()
    found, order = sections(r.stdout)
    assert order == job, r.describe()
    for pid in job:
        assert re.match(r"\d+ objects, ", found[pid][0]), r.describe()
        assert sum(1 for line in found[pid] if re.match(r"^ +\S+ \| +\d+ \| ", line)) == 2, \
            r.describe()
    assert summary(r.stdout) == "9 processes: 9 ok", r.describe()
    assert all(healthy(p) for p in job)
