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


def test_mem_diff_shows_growth_at_the_top(python, launch, profiler, tmp_path):
    flag = tmp_path / "grow"
    t = start(launch, python, tmp_path, MEM_GROW_FILE=str(flag))
    assert profiler.cmd(t.pid, "mem summary --limit 1").code == EXIT_OK  # the agent is loaded
    diff = subprocess.Popen([BINARY, str(t.pid), "--cmd", "mem diff --interval 4 --limit 5"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(2)  # the first snapshot is taken at once; the second after 4 s
    flag.touch()
    out, err = diff.communicate(timeout=RUN_TIMEOUT)
    assert diff.returncode == EXIT_OK, err
    assert not flag.exists(), "the target did not grow"
    top = rows(out, DIFF_ROW)[0]
    assert top[0] == "__main__.MemBlob" and top[1] == "2011" and top[2] == "+777", out


def test_mem_bad_input(python, launch, profiler, tmp_path):
    t = start(launch, python, tmp_path)
    for cmd, words in [("mem diff --interval 0", "--interval"),
                       ("mem summary --order sideways", "unknown order"),
                       ("mem summary --limit 0", "--limit"),
                       ("mem summary --limit -3", "--limit"),
                       ("mem diff --interval -1", "--interval")]:
        r = profiler.cmd(t.pid, cmd)
        assert r.code == EXIT_USAGE, r.describe()
        assert words in r.error_line(), r.describe()


def test_mem_diff_target_exits(python, launch, profiler, tmp_path):
    flag = tmp_path / "exit"
    t = start(launch, python, tmp_path, MEM_EXIT_FILE=str(flag))
    assert profiler.cmd(t.pid, "mem summary --limit 1").code == EXIT_OK
    diff = subprocess.Popen([BINARY, str(t.pid), "--cmd", "mem diff --interval 3"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(1)
    flag.touch()
    out, err = diff.communicate(timeout=RUN_TIMEOUT)
    assert diff.returncode != EXIT_OK
    assert "process %d exited" % t.pid in err, err
    assert err.count("\n") == 1, err
