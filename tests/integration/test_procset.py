"""`stack` over a set of processes (issue 13), every configured interpreter:
a multiprocessing job (tests/targets/pool.py) of 8 workers where 7 wait
for the same event and 1 sleeps elsewhere.  `--tree --cmd "stack --group"`
must show one group of exactly the 7 waiting workers and the odd one out
with its pid; `PID,PID` and `--match` pick members; a member that is not
Python is listed with the reason and the rest still shown; every member
is healthy afterwards (not stopped, not traced)."""

import json
import os
import re
import signal
import subprocess
import threading
import time

from conftest import EXIT_NO_PROCESS, EXIT_NOT_PYTHON, EXIT_OK, EXIT_USAGE

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
        # Popen returns once exec has begun; the kernel sets the new
        # command line a moment later (a CI run read it empty).
        deadline = time.monotonic() + 10
        while not open("/proc/%d/cmdline" % sleeper.pid, "rb").read() and \
                time.monotonic() < deadline:
            time.sleep(0.01)
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
    assert r.code == EXIT_USAGE and "bad --match pattern at offset 1" in r.stderr, r.describe()
    r = profiler.run(t.pid, "--tree", "--cmd", "getglobal __main__ x")
    assert r.code == EXIT_USAGE and "add --all" in r.stderr, r.describe()
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


# ---- perf over a set ---------------------------------------------------------

def collapsed(path):
    """[(root frame, [frames], count)] of a collapsed-stacks file."""
    out = []
    with open(path) as f:
        for line in f:
            stack, _, count = line.rstrip("\n").rpartition(" ")
            frames = stack.split(";")
            out.append((frames[0], frames[1:], int(count)))
    return out


def pool_root(pid):
    """The root frame of a pool.py process: its pid and short command line."""
    return re.compile(r"^pid %d python\S* pool\.py$" % pid)


def test_perf_tree_has_every_process_as_root(python, launch, profiler, tmp_path):
    t = launch("pool.py", python)
    workers = children(t.pid)
    ranked = launch("idle.py", python, env={"RANK": "3"})
    sleeper = subprocess.Popen(["sleep", "300"])
    out = tmp_path / "job.collapsed"
    try:
        r = profiler.run("%d,%d,%d" % (t.pid, ranked.pid, sleeper.pid), "--tree",
                         "--cmd", "perf -d 0.5 --idle -f %s" % out)
    finally:
        sleeper.kill()
        sleeper.wait()
    assert r.code == EXIT_OK, r.describe()
    assert r.stdout.startswith("Write collapsed to %s successfully! " % out), r.describe()
    # The one that is not Python is listed with the reason, and only it.
    assert re.findall(r"^  skipped pid (\d+) \(sleep 300\): .*not a Python process", r.stdout,
                      re.M) == [str(sleeper.pid)], r.describe()
    stacks = collapsed(out)
    roots = {s[0] for s in stacks}
    job = [t.pid] + workers
    for pid in job:
        assert sum(1 for root in roots if pool_root(pid).match(root)) == 1, (pid, roots)
    assert "rank 3 (pid %d)" % ranked.pid in roots, roots
    # Every stack starts with one of the 10 process roots, and nothing else.
    assert len(roots) == len(job) + 1, roots
    # Each worker's stacks are its own: 7 wait for work, the odd one is elsewhere.
    def functions_under(pid):
        return {f.split(" (")[0] for s in stacks if pool_root(pid).match(s[0]) for f in s[1]}
    waiting = [w for w in workers if "wait_for_work" in functions_under(w)]
    odd = [w for w in workers if "elsewhere" in functions_under(w)]
    assert len(waiting) == 7 and len(odd) == 1 and sorted(waiting + odd) == workers, stacks
    # The samples per process in the summary are those in the file.
    for pid in job:
        m = re.search(r"^  pid %d python\S* pool\.py: (\d+) samples$" % pid, r.stdout, re.M)
        assert m, r.describe()
        assert int(m.group(1)) == sum(s[2] for s in stacks if pool_root(pid).match(s[0]))
    assert all(healthy(p) for p in job + [ranked.pid])


def test_perf_merge_and_the_other_formats(python, launch, profiler, tmp_path):
    t = launch("pool.py", python)
    workers = children(t.pid)
    merged = tmp_path / "merged.collapsed"
    r = profiler.run(t.pid, "--tree", "--cmd", "perf -d 0.3 --idle --merge -f %s" % merged)
    assert r.code == EXIT_OK, r.describe()
    stacks = collapsed(merged)
    assert stacks and not any(re.match(r"(pid|rank|local rank) \d", s[0]) for s in stacks), stacks
    assert any("wait_for_work" in f for s in stacks for f in s[1]), stacks
    # text, speedscope and svg carry the process roots too.
    for name in ("job.txt", "job.json", "job.svg"):
        path = tmp_path / name
        r = profiler.run(t.pid, "--tree", "--cmd", "perf -d 0.2 --idle -f %s" % path)
        assert r.code == EXIT_OK, r.describe()
        text = path.read_text()
        for pid in [t.pid] + workers:
            assert re.search(r"pid %d python\S* pool\.py" % pid, text), (name, pid)
    with open(tmp_path / "job.json") as f:
        assert json.load(f)["profiles"], "speedscope JSON without a profile"
    r = profiler.cmd(t.pid, "perf -d 0.1 --merge -f %s" % merged)
    assert r.code == EXIT_USAGE and "--merge folds the processes of a set" in r.stderr, r.describe()
    # A set with no Python member: one line, nothing written.
    sleepers = [subprocess.Popen(["sleep", "300"]) for _ in range(2)]
    try:
        r = profiler.run(",".join(str(p.pid) for p in sleepers), "--cmd",
                         "perf -d 0.1 -f %s" % (tmp_path / "none.svg"))
    finally:
        for p in sleepers:
            p.kill()
            p.wait()
    assert r.code == EXIT_NOT_PYTHON, r.describe()
    assert "none of the 2 processes of the set is Python" in r.error_line(), r.describe()
    assert not (tmp_path / "none.svg").exists()
    assert all(healthy(p) for p in workers + [t.pid])


def test_perf_follows_the_tree_a_member_comes_and_one_goes(python, launch, profiler, tmp_path):
    t = launch("forks_late.py", python)
    first = children(t.pid)
    assert len(first) == 1, first
    out = tmp_path / "comego.collapsed"
    done = []
    run = threading.Thread(target=lambda: done.append(
        profiler.run(t.pid, "--tree", "--cmd", "perf -d 3 --idle -f %s" % out)))
    run.start()
    try:
        # The file is opened once every member's sampler is: sampling is on.
        deadline = time.monotonic() + 20
        while not out.exists() and run.is_alive() and time.monotonic() < deadline:
            time.sleep(0.02)
        time.sleep(0.3)
        os.kill(first[0], signal.SIGKILL)
        os.kill(t.pid, signal.SIGUSR1)
    finally:
        run.join()
    r = done[0]
    assert r.code == EXIT_OK, r.describe()
    late = [p for p in children(t.pid) if p not in first]
    assert len(late) == 1, (late, r.describe())
    root = {pid: re.compile(r"^pid %d python\S* forks_late\.py$" % pid)
            for pid in [t.pid, first[0], late[0]]}
    stacks = collapsed(out)
    # The one that went keeps its samples, and the summary says it exited.
    m = re.search(r"^  pid %d python\S* forks_late\.py: (\d+) samples \(exited while sampled: "
                  r"kept what it had\)$" % first[0], r.stdout, re.M)
    assert m, r.describe()
    assert int(m.group(1)) == sum(s[2] for s in stacks if root[first[0]].match(s[0]))
    assert r.stdout.count("exited while sampled") == 1, r.describe()
    # The one that came joined, under its own root, where it is.
    assert re.search(r"^  pid %d python\S* forks_late\.py: [1-9]\d* samples \(joined after "
                     r"\d+\.\d s\)$" % late[0], r.stdout, re.M), r.describe()
    assert any(root[late[0]].match(s[0]) and any(f.startswith("joined_late ") for f in s[1])
               for s in stacks), stacks
    assert any(root[t.pid].match(s[0]) for s in stacks), stacks
    assert all(healthy(p) for p in late + [t.pid])
