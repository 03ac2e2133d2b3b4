"""mem summary and mem diff against real targets on every configured
interpreter: a known class with a known number of instances is counted
exactly, growth between two points shows at the top of a diff with its
exact count delta, bad input is refused by the grammar, and a target that
exits during a diff gets a clear message.  After each test the target is
alive (unless it was asked to exit), untraced, not stopped."""

import os
import re
import subprocess
import time

from conftest import BINARY, EXIT_OK, EXIT_USAGE, RUN_TIMEOUT

HERE = os.path.dirname(os.path.abspath(__file__))
MEM_TARGET = os.path.join(HERE, "targets", "mem_target.py")
ROW = re.compile(r"^\s*(\S+) \|\s+(\d+) \|")
DIFF_ROW = re.compile(r"^\s*(\S+) \|\s+(\d+) \|\s+([+-]\d+) \|")


def rows(stdout, pattern=ROW):
    return [m.groups() for m in map(pattern.match, stdout.splitlines()) if m]


def start(launch, python, tmp_path, **env):
    return launch(MEM_TARGET, python, env=dict(env), expect_exit="MEM_EXIT_FILE" in env)


def test_mem_summary_counts_a_known_class(python, launch, profiler, tmp_path):
    t = start(launch, python, tmp_path)
    r = profiler.cmd(t.pid, "mem summary --limit 1000")
    assert r.code == EXIT_OK, r.describe()
    counts = {name: int(n) for name, n in rows(r.stdout)}
    assert counts.get("__main__.MemBlob") == 1234, r.stdout
    assert "counted: objects the garbage collector tracks" in r.stdout
    # Untracked objects are counted through their containers: ints and strs appear.
    assert counts.get("str", 0) > 0 and counts.get("int", 0) > 0, r.stdout
    top = profiler.cmd(t.pid, "mem summary --limit 3 --order ascending")
    assert top.code == EXIT_OK, top.describe()
    assert len(rows(top.stdout)) == 3
    check_bad_input(profiler, t.pid)
    check_rss(profiler, t.pid)


def test_mem_diff_shows_growth_at_the_top(python, launch, profiler, tmp_path):
    flag = tmp_path / "grow"
    t = start(launch, python, tmp_path, MEM_GROW_FILE=str(flag))
    assert profiler.cmd(t.pid, "mem summary --limit 1").code == EXIT_OK  # the agent is loaded
    diff = subprocess.Popen([BINARY, str(t.pid), "--cmd", "mem diff --interval 3 --limit 5"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(1.5)  # the first snapshot is taken at once (ms); the second after 3 s
    flag.touch()
    out, err = diff.communicate(timeout=RUN_TIMEOUT)
    assert diff.returncode == EXIT_OK, err
    assert not flag.exists(), "the target did not grow"
    top = rows(out, DIFF_ROW)[0]
    assert top[0] == "__main__.MemBlob" and top[1] == "2011" and top[2] == "+777", out


def check_bad_input(profiler, pid):
    for cmd, words in [("mem diff --interval 0", "--interval"),
                       ("mem summary --order sideways", "unknown order"),
                       ("mem summary --limit 0", "--limit"),
                       ("mem summary --limit -3", "--limit"),
                       ("mem diff --interval -1", "--interval")]:
        r = profiler.cmd(pid, cmd)
        assert r.code == EXIT_USAGE, r.describe()
        assert words in r.error_line(), r.describe()


def test_mem_diff_target_exits(python, launch, profiler, tmp_path):
    flag = tmp_path / "exit"
    t = start(launch, python, tmp_path, MEM_EXIT_FILE=str(flag))
    assert profiler.cmd(t.pid, "mem summary --limit 1").code == EXIT_OK
    diff = subprocess.Popen([BINARY, str(t.pid), "--cmd", "mem diff --interval 2"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(0.5)  # before or during the diff: either way it must say so
    flag.touch()
    out, err = diff.communicate(timeout=RUN_TIMEOUT)
    assert diff.returncode != EXIT_OK
    assert "process %d exited" % t.pid in err, err
    assert err.count("\n") == 1, err


def allocating_line():
    with open(MEM_TARGET) as f:
        return next(i for i, line in enumerate(f, 1) if "# the allocating line" in line)


def tracemalloc_state(profiler, pid):
    r = profiler.cmd(pid, "execute import tracemalloc; "
                          "print(tracemalloc.is_tracing(), tracemalloc.get_traceback_limit())")
    assert r.code == EXIT_OK, r.describe()
    return r.stdout.strip()


def test_mem_sites_diff_names_the_allocating_line(python, launch, profiler, tmp_path):
    flag = tmp_path / "grow"
    t = start(launch, python, tmp_path, MEM_GROW_FILE=str(flag))
    check_sites_out_of_order(profiler, t)
    before = tracemalloc_state(profiler, t.pid)
    assert before.startswith("False"), before
    r = profiler.cmd(t.pid, "mem sites start -f 2")
    assert r.code == EXIT_OK and "tracemalloc started (2 frames" in r.stdout, r.describe()
    flag.touch()
    for _ in range(500):
        if not flag.exists():
            break
        time.sleep(0.02)
    r = profiler.cmd(t.pid, "mem sites diff")
    assert r.code == EXIT_OK, r.describe()
    first = [line for line in r.stdout.splitlines() if " | " in line][1]
    cells = [c.strip() for c in first.split(" | ")]
    assert cells[1] == "+777", r.stdout
    assert cells[4] == "%s:%d" % (MEM_TARGET, allocating_line()), r.stdout
    r = profiler.cmd(t.pid, "mem sites stop")
    assert r.code == EXIT_OK and "tracemalloc stopped" in r.stdout, r.describe()
    assert tracemalloc_state(profiler, t.pid) == before


def test_mem_sites_leaves_the_programs_tracemalloc(python, launch, profiler, tmp_path):
    t = start(launch, python, tmp_path, PYTHONTRACEMALLOC="4")
    assert tracemalloc_state(profiler, t.pid) == "True 4"
    r = profiler.cmd(t.pid, "mem sites start -f 9")
    assert r.code == EXIT_OK and "already running (4 frames)" in r.stdout, r.describe()
    assert profiler.cmd(t.pid, "mem sites diff").code == EXIT_OK
    r = profiler.cmd(t.pid, "mem sites stop")
    assert r.code == EXIT_OK and "left running" in r.stdout, r.describe()
    assert tracemalloc_state(profiler, t.pid) == "True 4"


def check_sites_out_of_order(profiler, t):
    r = profiler.cmd(t.pid, "mem sites diff")
    assert r.code == EXIT_USAGE and "run `mem sites start` first" in r.error_line(), r.describe()
    r = profiler.cmd(t.pid, "mem sites stop")
    assert r.code == EXIT_USAGE and "not started" in r.error_line(), r.describe()
    assert profiler.cmd(t.pid, "mem sites start").code == EXIT_OK
    r = profiler.cmd(t.pid, "mem sites start")
    assert r.code == EXIT_USAGE and "already started" in r.error_line(), r.describe()
    assert profiler.cmd(t.pid, "mem sites stop").code == EXIT_OK
    assert tracemalloc_state(profiler, t.pid).startswith("False")


def check_rss(profiler, pid):
    r = profiler.cmd(pid, "mem rss")
    assert r.code == EXIT_OK, r.describe()
    lines = r.stdout.splitlines()
    assert lines[0].startswith("RSS ") and lines[1].startswith("pymalloc arenas "), r.stdout
    arenas = int(re.search(r"\((\d+) arenas", lines[1]).group(1))
    assert arenas > 0, r.stdout
    assert lines[2].startswith("gap "), r.stdout
