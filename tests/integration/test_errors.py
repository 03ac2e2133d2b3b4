"""Errors: each has its exit code and a one-line message.  Not run per
interpreter."""

import os
import re
import shutil
import subprocess
import time

import pytest

from conftest import (EXIT_EXITED, EXIT_NO_PROCESS, EXIT_NOT_PYTHON, EXIT_OK, EXIT_PERMISSION,
                      EXIT_UNSUPPORTED, EXIT_USAGE, die_with_parent, left_alone_problems)

NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]


def unused_pid():
    with open("/proc/sys/kernel/pid_max") as f:
        pid_max = int(f.read())
    for pid in range(pid_max - 1, 1, -1):
        if not os.path.exists("/proc/%d" % pid):
            return pid
    pytest.skip("no free pid")


def test_no_such_process(profiler):
    result = profiler.cmd(unused_pid(), "stack")
    assert result.code == EXIT_NO_PROCESS, result.describe()
    result.error_line()


def test_not_a_python_process(profiler):
    sleeper = subprocess.Popen(["sleep", "1000"], preexec_fn=die_with_parent)
    try:
        result = profiler.cmd(sleeper.pid, "stack")
        assert sleeper.poll() is None, "sleep died"
        assert left_alone_problems(sleeper.pid) == []
    finally:
        sleeper.kill()
        sleeper.wait()
    assert result.code == EXIT_NOT_PYTHON, result.describe()
    result.error_line()


def test_permission_denied(any_python, launch, profiler):
    if shutil.which("setpriv") is None:
        pytest.skip("setpriv (util-linux) is not installed")
    if os.geteuid() != 0:
        pytest.skip("needs root to run a target another user may not read")
    can_run = subprocess.run(NOBODY + ["test", "-x", profiler.binary], cwd="/")
    if can_run.returncode != 0:
        pytest.skip("uid 65534 cannot reach %s" % profiler.binary)
    target = launch("idle.py", any_python)
    result = profiler.cmd(target.pid, "stack", prefix=NOBODY, cwd="/")
    assert result.code == EXIT_PERMISSION, result.describe()
    assert "uid" in result.error_line().lower(), result.describe()


def test_unsupported_version(launch, profiler):
    pyenv = os.environ.get("PYENV_ROOT") or os.path.expanduser("~/.pyenv")
    python37 = os.path.join(pyenv, "versions", "3.7.16", "bin", "python3")
    if not os.access(python37, os.X_OK):
        pytest.skip("no CPython 3.7 at %s" % python37)
    target = launch("idle.py", None, exe=python37)
    result = profiler.cmd(target.pid, "stack")
    assert result.code == EXIT_UNSUPPORTED, result.describe()
    assert "3.7" in result.error_line(), result.describe()


def test_bad_command(any_python, launch, profiler):
    target = launch("idle.py", any_python)
    result = profiler.cmd(target.pid, "stack --bogus")
    assert result.code == EXIT_USAGE, result.describe()
    result.error_line()


def test_help_lists_every_exit_code(profiler):
    result = profiler.run("--help")
    assert result.code == EXIT_OK, result.describe()
    missing = [code for code in range(8)
               if not re.search(r"(?<![\w.-])%d(?![\w.])" % code, result.stdout)]
    assert not missing, "--help does not mention exit codes %s\n%s" % (missing, result.describe())


# ---- clear answers (issue 7) --------------------------------------------------

HINT = " (try flight_profiler --help)"


@pytest.mark.parametrize("argv, line", [
    (["--bogus"], "unknown option --bogus"),
    (["--bogus=3", "1"], "unknown option --bogus"),
    (["-1"], "unknown option -1"),
    (["1", "-x"], "unknown option -x"),
    (["--cmd"], "option --cmd needs a value"),
    (["1", "-c"], "option -c needs a value"),
])
def test_bad_option_is_one_line_and_a_hint(profiler, argv, line):
    """Not getopt's message under the binary's full path followed by the
    whole usage: one line, and where to read more."""
    result = profiler.run(*argv)
    assert result.code == EXIT_USAGE, result.describe()
    assert result.error_line() == "flight_profiler: " + line + HINT, result.describe()
    assert result.stdout == "", result.describe()


def test_help_still_prints_the_usage(profiler):
    result = profiler.run("--help")
    assert result.code == EXIT_OK and result.stderr == "", result.describe()
    assert result.stdout.startswith("usage: flight_profiler") and len(result.stdout.splitlines()) > 20


@pytest.mark.parametrize("command", ["", "   "])
def test_empty_command_is_a_usage_error(any_python, launch, profiler, command):
    target = launch("idle.py", any_python)
    for argv in ([target.pid, "--cmd", command], ["--cmd", command]):
        result = profiler.run(*argv)
        assert result.code == EXIT_USAGE, result.describe()
        assert result.error_line() == "flight_profiler: --cmd: the command is empty" + HINT, \
            result.describe()


def test_execute_of_a_missing_file(any_python, launch, profiler):
    """A path that names no file is not sent as code (a SyntaxError from the
    target); nothing is loaded into the target for it."""
    target = launch("idle.py", any_python)
    for path in ("/nonexistent/x.py", "missing_script.py", "./nope"):
        result = profiler.cmd(target.pid, "execute " + path)
        assert result.code == EXIT_USAGE, result.describe()
        assert result.error_line() == "flight_profiler: execute: no such file: " + path, \
            result.describe()
    assert not os.path.exists("/tmp/.flight_profiler-%d" % target.pid)


def test_limits_have_one_wording(any_python, launch, profiler):
    """-n 0, -n -5, a huge -n and a word: the same sentence, only the value differs."""
    target = launch("idle.py", any_python)
    lines = {}
    for value in ("0", "-5", "99999999999999999999", "ten"):
        result = profiler.cmd(target.pid, "vmtool -a getInstances -c __main__ X -n " + value)
        assert result.code == EXIT_USAGE, result.describe()
        lines[value] = result.error_line()
    assert len({line.replace("'%s'" % v, "'V'") for v, line in lines.items()}) == 1, lines
    assert lines["0"] == ("flight_profiler: vmtool: -n wants a number of instances from 1 up, "
                          "or -1 for all, not '0'"), lines


def zombie(python):
    """A child of ours that exited and is not reaped: a zombie, until the
    returned Popen is waited for."""
    child = subprocess.Popen([python.exe, "-c", "pass"], preexec_fn=die_with_parent)
    for _ in range(500):
        with open("/proc/%d/stat" % child.pid) as f:
            if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                return child
        time.sleep(0.01)
    child.kill()
    child.wait()
    pytest.fail("the child did not turn into a zombie")


def test_zombie_is_one_answer(any_python, profiler):
    """Every command on a zombie: it has exited (7), in the same words."""
    child = zombie(any_python)
    try:
        for command in ("stack", "getglobal __main__ x", "execute 1", "vmtool -a forceGc",
                        "stack %d" % child.pid):
            result = profiler.cmd(child.pid, command)
            assert result.code == EXIT_EXITED, result.describe()
            assert result.error_line() == "flight_profiler: process %d exited" % child.pid, \
                result.describe()
    finally:
        child.wait()


def test_unreadable_pid1_says_why(profiler):
    """As root, PID 1 may still be out of reach (capabilities it holds and
    we lack, a sandbox): the message says which, not just "uid 0"."""
    if os.geteuid() != 0:
        pytest.skip("about root being refused")
    try:
        open("/proc/1/maps").close()
        pytest.skip("PID 1 is readable here")
    except PermissionError:
        pass
    for command in ("stack", "getglobal __main__ x"):
        result = profiler.cmd(1, command)
        assert result.code == EXIT_PERMISSION, result.describe()
        line = result.error_line()
        assert re.match(r"flight_profiler: cannot read process 1: permission denied "
                        r"\(process 1 (runs as uid 0 like you|is not dumpable)", line), line


def test_long_words_are_not_echoed_whole(any_python, launch, profiler):
    """A 100 KB word in a command line's error comes back cut, with '...'."""
    target = launch("idle.py", any_python)
    word = "a" * 100000
    for command in ("vmtool -a " + word, "getglobal " + word, "execute /" + word,
                    "vmtool -a getInstances -c __main__ X -n " + word, "stack " + word):
        result = profiler.cmd(target.pid, command)
        assert result.code == EXIT_USAGE, result.describe()[:2000]
        line = result.error_line()
        assert len(line) < 1000 and "a" * 150 in line and "a..." in line, line[:2000]
