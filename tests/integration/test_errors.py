"""Errors: each has its exit code and a one-line message.  Not run per
interpreter."""

import os
import re
import shutil
import subprocess

import pytest

from conftest import (EXIT_NO_PROCESS, EXIT_NOT_PYTHON, EXIT_OK, EXIT_PERMISSION,
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
