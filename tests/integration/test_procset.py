"""`stack` over a set of processes (issue 13), every configured interpreter:
a multiprocessing job (tests/targets/pool.py) of 8 workers where 7 wait
for the same event and 1 sleeps elsewhere.  `--tree --cmd "stack --group"`
must show one group of exactly the 7 waiting workers and the odd one out
with its pid; `PID,PID` and `--match` pick members; a member that is not
Python is listed with the reason and the rest still shown; every member
is healthy afterwards (not stopped, not traced)."""

import os
import re
import subprocess

from conftest import EXIT_NO_PROCESS, EXIT_OK, EXIT_USAGE

HEADER = re.compile(r"^(\d+) threads?(?: in (\d+) processes)? \u2014 pids? ([\d, \u2013]+), "
                    r"threads? (.+?)( \[partial\])?:$")


def children(pid):
    out = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open("/proc/%s/stat" % d) as f:
                    stat = f.read()
            except OSError:
                continue
            if int(stat[stat.rindex(")") + 2:].split()[1]) == pid:
                out.append(int(d))
    return sorted(out)


def pids_of(text):
    """'4101\u20134103, 4110' -> [4101, 4102, 4103, 4110]."""
    out = []
    for part in text.split(", "):
        lo, _, hi = part.partition("\u2013")
        out += list(range(int(lo), int(hi or lo) + 1))
    return out


def groups(stdout):
    """[(nthreads, [pids], role, [frame lines])] in the order printed."""
    out = []
    for line in stdout.splitlines():
        m = HEADER.match(line)
        if m:
            out.append((int(m.group(1)), pids_of(m.group(3)), m.group(4), []))
        elif out and line.startswith("    File "):
            out[-1][3].append(line)
    return out


def healthy(pid):
    with open("/proc/%d/status" % pid) as f:
        status = f.read()
    state = re.search(r"^State:\s+(\S)", status, re.M).group(1)
    tracer = int(re.search(r"^TracerPid:\s+(\d+)", status, re.M).group(1))
    return state not in "Tt" and tracer == 0


def in_function(group, name):
    return any(line.endswith(", in " + name) for line in group[3])


def test_group_finds_the_odd_worker(python, launch, profiler):
    t = launch("pool.py", python)
    workers = children(t.pid)
    assert len(workers) == 8, workers
    r = profiler.run(t.pid, "--tree", "--cmd", "stack --group")
    assert r.code == EXIT_OK, r.describe()
    assert r.stdout.startswith("Process set: 9 processes, 9 Python ("), r.describe()
    found = groups(r.stdout)
    waiting = [g for g in found if in_function(g, "wait_for_work")]
    assert len(waiting) == 1, r.describe()
    assert waiting[0][0] == 7 and waiting[0][2] == "MainThread", r.describe()
    # Largest group first: nothing before it has more threads.
    assert all(g[0] >= 7 for g in found[:found.index(waiting[0])]), r.describe()
    odd = [g for g in found if in_function(g, "elsewhere")]
    assert len(odd) == 1 and odd[0][0] == 1, r.describe()
    assert "Odd ones out" in r.stdout.split("elsewhere")[0], r.describe()
    assert sorted(waiting[0][1] + odd[0][1]) == workers, r.describe()
    # --group=function ignores lines: the same groups here.
    r2 = profiler.run(t.pid, "--tree", "--cmd", "stack --group=function")
    assert r2.code == EXIT_OK, r2.describe()
    again = [g for g in groups(r2.stdout) if in_function(g, "wait_for_work")]
    assert [(g[0], g[1]) for g in again] == [(7, waiting[0][1])], r2.describe()
    assert all(healthy(p) for p in workers + [t.pid])


def test_pid_list_match_and_a_member_that_is_not_python(python, launch, profiler):
    t = launch("pool.py", python)
    workers = children(t.pid)
    sleeper = subprocess.Popen(["sleep", "300"])
    try:
        r = profiler.run("%d,%d,%d" % (workers[0], sleeper.pid, workers[1]), "--cmd", "stack")
        assert r.code == EXIT_OK, r.describe()
        assert r.stdout.startswith("Process set: 3 processes, 2 Python ("), r.describe()
        assert re.findall(r"^Process (\d+): ", r.stdout, re.M) == [str(workers[0]), str(workers[1])]
        skipped = r.stdout.split("\nSkipped:\n")[1]
        assert re.match(r"  pid %d \(sleep 300\): \S" % sleeper.pid, skipped), r.describe()
        # --match on command lines: the job's 9 processes (and any other
        # run of the script on this machine), never flight_profiler itself.
        r = profiler.run("--match", re.escape(t.path), "--cmd", "stack")
        assert r.code == EXIT_OK, r.describe()
        shown = {int(p) for p in re.findall(r"^Process (\d+): ", r.stdout, re.M)}
        assert shown >= set(workers + [t.pid]), r.describe()
        assert "flight_profiler" not in r.stdout.split("\nSkipped:\n")[-1], r.describe()
    finally:
        sleeper.kill()
        sleeper.wait()
    assert all(healthy(p) for p in workers + [t.pid])


def test_bad_sets(python, launch, profiler):
    t = launch("pool.py", python)
    r = profiler.run("--match", "no such command line 8d1c2f", "--cmd", "stack")
    assert r.code == EXIT_NO_PROCESS and "no process matches --match" in r.stderr, r.describe()
    r = profiler.run("--match", "(", "--cmd", "stack")
    assert r.code == EXIT_USAGE and "bad pattern" in r.stderr, r.describe()
    r = profiler.run(t.pid, "--tree", "--cmd", "getglobal __main__ x")
    assert r.code == EXIT_USAGE and "only `stack` and `perf` run so far" in r.stderr, r.describe()
    r = profiler.run(t.pid, "--tree", "--cmd", "stack --native")
    assert r.code == EXIT_USAGE, r.describe()
    r = profiler.run(t.pid, "--tree", "--cmd", "stack --group=lines")
    assert r.code == EXIT_USAGE and "unknown --group value 'lines'" in r.stderr, r.describe()
    r = profiler.cmd(t.pid, "stack --group")
    assert r.code == EXIT_USAGE and "process set" in r.stderr, r.describe()
    r = profiler.run("%d,x" % t.pid, "--cmd", "stack")
    assert r.code == EXIT_USAGE and "not a process id" in r.stderr, r.describe()
    r = profiler.run(t.pid, "--tree")
    assert r.code == EXIT_USAGE and "works with --cmd" in r.stderr, r.describe()
