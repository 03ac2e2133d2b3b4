"""Harness for the integration tests: real interpreters, real targets, the
real binary.

Environment (set by `make check`; the fallbacks suit a run from the source
tree after an in-tree build):

    FP_BINARY   the flight_profiler binary       (default: <repo>/flight_profiler)
    FP_PYTHONS  configure's list of interpreters (default: <repo>/pythons.list),
                one per line: IDENT VERSION HEXVERSION INCLUDEDIR EXE
    FP_SRCDIR   the source tree                  (default: two folders up from here)

Fixtures:
    python    one configured interpreter; every test that takes it runs once
              per interpreter, with the version as its id ("3.12.1")
    launch    launch(script, python) starts tests/targets/<script> and waits
              until it says it is ready; afterwards checks it was left alive,
              untraced and not stopped, then kills it
    profiler  runs the binary: profiler.run(...), profiler.stack(pid, ...)
"""

import ctypes
import os
import re
import select
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass

import pytest

import stackdump

HERE = os.path.dirname(os.path.abspath(__file__))
SRCDIR = os.environ.get("FP_SRCDIR") or os.path.dirname(os.path.dirname(HERE))
TARGETS = os.path.join(SRCDIR, "tests", "targets")
BINARY = os.environ.get("FP_BINARY") or os.path.join(SRCDIR, "flight_profiler")
PYTHONS_LIST = os.environ.get("FP_PYTHONS") or os.path.join(SRCDIR, "pythons.list")

READY_TIMEOUT = 30      # seconds for a target to say "ready"
RUN_TIMEOUT = 30        # seconds for one run of the binary
MARKER = re.compile(r"#(?:.*\s)?@([A-Za-z0-9_-]+)\s*$")   # as in targets/_fptarget.py

# The exit codes of flight_profiler (see its --help).
EXIT_OK, EXIT_OTHER, EXIT_USAGE, EXIT_NO_PROCESS, EXIT_PERMISSION, \
    EXIT_NOT_PYTHON, EXIT_UNSUPPORTED, EXIT_EXITED = range(8)


# ---- interpreters ------------------------------------------------------------

@dataclass(frozen=True)
class Interpreter:
    ident: str          # cp312_1
    version: str        # 3.12.1
    hexversion: int     # 0x030c01f0
    includedir: str
    exe: str

    @property
    def version_info(self):
        return (self.hexversion >> 24, (self.hexversion >> 16) & 0xFF)

    def function_name(self, qualname):
        """How the binary names a function: the qualified name on 3.11+
        (co_qualname), the plain co_name before."""
        return qualname if self.version_info >= (3, 11) else qualname.rsplit(".", 1)[-1]

    def __str__(self):
        return "CPython %s (%s)" % (self.version, self.exe)


def read_pythons_list(path):
    interpreters = []
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if not line.strip():
                continue
            fields = line.rstrip("\n").split(" ", 4)
            if len(fields) != 5:
                raise pytest.UsageError("%s:%d: expected 'IDENT VERSION HEXVERSION INCLUDEDIR EXE'"
                                        % (path, number))
            ident, version, hexversion, includedir, exe = fields
            interpreters.append(Interpreter(ident, version, int(hexversion, 16), includedir, exe))
    return interpreters


def pytest_configure(config):
    if not os.path.isfile(PYTHONS_LIST):
        raise pytest.UsageError("no list of interpreters at %s: run ./configure, or set FP_PYTHONS"
                                % PYTHONS_LIST)
    config.fp_interpreters = read_pythons_list(PYTHONS_LIST)
    if not config.fp_interpreters:
        raise pytest.UsageError("%s lists no interpreter" % PYTHONS_LIST)


def pytest_generate_tests(metafunc):
    """Every configured interpreter; @pytest.mark.min_python((3, 13)) keeps
    the ones a test is about instead of skipping the others."""
    if "python" in metafunc.fixturenames:
        interpreters = metafunc.config.fp_interpreters
        marker = metafunc.definition.get_closest_marker("min_python")
        if marker is not None:
            interpreters = [i for i in interpreters if i.version_info >= marker.args[0]]
        metafunc.parametrize("python", interpreters, ids=[i.version for i in interpreters])


@pytest.fixture
def any_python(request):
    """One configured interpreter, for the tests that need just one."""
    return request.config.fp_interpreters[-1]


# ---- targets -----------------------------------------------------------------

_marker_cache = {}


def marker_lines(path):
    """{name: line number} of the `# @name` markers in a file."""
    if path not in _marker_cache:
        lines = {}
        with open(path, encoding="utf-8") as f:
            for number, text in enumerate(f, 1):
                m = MARKER.search(text)
                if m:
                    assert m.group(1) not in lines, "%s: marker @%s twice" % (path, m.group(1))
                    lines[m.group(1)] = number
        _marker_cache[path] = lines
    return _marker_cache[path]


def target_env(**extra):
    """The environment for a target: ours, less what could redirect its
    interpreter, and no .pyc files written into the source tree."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("PYTHON") and not k.startswith("FP_")}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env.update(extra)
    return env


def left_alone_problems(pid):
    """Why the process pid is not as a reader must leave it: a thread still
    traced (TracerPid not 0) or stopped (state T or t).  Empty when fine."""
    problems = []
    for tid, (name, state, tracer) in sorted(_task_states(pid).items()):
        if tracer != 0:
            problems.append("thread %d (%s) is still traced by pid %d (TracerPid)"
                            % (tid, name, tracer))
        if state in ("T", "t"):
            problems.append("thread %d (%s) was left stopped (state %s)" % (tid, name, state))
    return problems


_libc = ctypes.CDLL(None, use_errno=True)
PR_SET_PDEATHSIG = 1


def die_with_parent():
    """preexec_fn: the child gets SIGKILL when pytest dies, so that no
    target (a GIL hog spins for good) outlives a killed or crashed run."""
    _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def _task_states(pid):
    """{tid: (comm, state, tracer pid)} for every thread of pid."""
    states = {}
    try:
        tids = os.listdir("/proc/%d/task" % pid)
    except OSError:
        return states
    for tid in tids:
        try:
            with open("/proc/%d/task/%s/status" % (pid, tid)) as f:
                status = dict(line.rstrip("\n").split(":\t", 1) for line in f if ":\t" in line)
        except OSError:
            continue
        states[int(tid)] = (status.get("Name", "?"), status.get("State", "?")[:1],
                            int(status.get("TracerPid", "0")))
    return states


class Target:
    """A running target program."""

    def __init__(self, script, python, exe, expect_exit=False, allow_output=False, env=None):
        self.path = os.path.join(TARGETS, script)
        self.python = python or exe
        self.expect_exit = expect_exit
        self.allow_output = allow_output
        self.stdout = tempfile.TemporaryFile()
        self.stderr = tempfile.TemporaryFile()
        read_fd, write_fd = os.pipe()
        try:
            self.proc = subprocess.Popen(
                [exe, self.path], stdin=subprocess.DEVNULL, stdout=self.stdout,
                stderr=self.stderr, pass_fds=[write_fd], cwd=TARGETS,
                env=target_env(FP_READY_FD=str(write_fd), **(env or {})),
                preexec_fn=die_with_parent)
        finally:
            os.close(write_fd)
        try:
            self._wait_ready(read_fd)
        except BaseException:
            self.kill()
            raise
        finally:
            os.close(read_fd)
        self.pid = self.proc.pid

    def line(self, name):
        """The line number of the `# @name` marker in the target's file."""
        lines = marker_lines(self.path)
        assert name in lines, "%s has no marker @%s" % (self.path, name)
        return lines[name]

    def source(self, name):
        """The text of the marked line as the binary shows it (stripped)."""
        with open(self.path, encoding="utf-8") as f:
            return f.read().split("\n")[self.line(name) - 1].strip()

    def output(self):
        """What the target wrote so far: (stdout, stderr) as text."""
        def read(f):
            # Through a file description of our own: the target writes
            # through one that shares f's offset, and seeking f back to 0
            # would make its next line overwrite the first.
            with open("/proc/self/fd/%d" % f.fileno(), "rb") as g:
                return g.read().decode("utf-8", "replace")
        return read(self.stdout), read(self.stderr)

    def _wait_ready(self, fd):
        deadline = time.monotonic() + READY_TIMEOUT
        received = b""
        while not received.endswith(b"\n"):
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                self._fail_start("did not say ready within %d s" % READY_TIMEOUT)
            chunk = os.read(fd, 64)
            if not chunk:
                self._fail_start("closed the ready pipe without saying ready")
            received += chunk
        if received != b"ready\n":
            self._fail_start("wrote %r instead of 'ready'" % received)
        self._wait_announcer_parked(deadline)

    def _wait_announcer_parked(self, deadline):
        # The "fp-ready" thread of _fptarget writes the ready line and only
        # then parks itself; wait for that, so that no reader sees it move.
        while time.monotonic() < deadline:
            moving = [tid for tid, (name, state, _) in _task_states(self.proc.pid).items()
                      if name == "fp-ready" and state != "S"]
            if not moving:
                return
            time.sleep(0.001)
        self._fail_start("its fp-ready thread did not park")

    def _fail_start(self, why):
        self.kill()
        out, err = self.output()
        pytest.fail("target %s under %s %s (exit status %s)\n--- its stderr ---\n%s%s"
                    % (os.path.basename(self.path), self.python, why, self.proc.returncode,
                       err, "--- its stdout ---\n" + out if out else ""), pytrace=False)

    def kill(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()

    def check_and_stop(self):
        """After a test: the target must have been left as it was found."""
        problems = []
        if self.expect_exit:
            try:
                code = self.proc.wait(timeout=READY_TIMEOUT)
            except subprocess.TimeoutExpired:
                problems.append("was expected to exit by itself but still runs")
            else:
                if code != 0:
                    problems.append("exited with status %d, not 0" % code)
        elif self.proc.poll() is not None:
            problems.append("died during the test (exit status %d)" % self.proc.returncode)
        else:
            problems += left_alone_problems(self.proc.pid)
        self.kill()
        out, err = self.output()
        if (out or err) and not self.allow_output:
            problems.append("wrote output:\n--- stdout ---\n%s--- stderr ---\n%s" % (out, err))
        if problems:
            pytest.fail("target %s under %s: %s" % (os.path.basename(self.path), self.python,
                                                     "; ".join(problems)), pytrace=False)


@pytest.fixture
def launch():
    """launch(script, python, exe=None, expect_exit=False, allow_output=False,
    env=None) -> Target.

    Starts tests/targets/<script> (or the script at an absolute path) under
    the interpreter, or the executable exe, with env added to its
    environment, and returns once it has said it is ready.  After the test,
    checks every launched target: alive (or, with expect_exit, exited by
    itself with status 0), no thread traced (TracerPid 0) or stopped,
    nothing written on stdout or stderr (unless allow_output); then kills
    and reaps it.
    """
    targets = []

    def start(script, python, exe=None, expect_exit=False, allow_output=False, env=None):
        target = Target(script, python, exe or python.exe, expect_exit, allow_output, env)
        # An agent directory left by an earlier process with this pid (a
        # forked child, a target that exited mid-attach: pids wrap at
        # 32768 in a suite this size) is not this target's.
        shutil.rmtree("/tmp/.flight_profiler-%d" % target.pid, ignore_errors=True)
        targets.append(target)
        return target

    yield start
    failures = []
    for target in targets:
        try:
            target.check_and_stop()
        except pytest.fail.Exception as e:
            failures.append(str(e))
    if failures:
        pytest.fail("\n".join(failures), pytrace=False)


# ---- the binary --------------------------------------------------------------

@dataclass
class Result:
    code: int
    stdout: str
    stderr: str
    argv: list

    def describe(self):
        return ("$ %s\nexit code %d\n--- stdout ---\n%s--- stderr ---\n%s"
                % (" ".join(self.argv), self.code, self.stdout, self.stderr))

    def error_line(self):
        """The one-line error message; asserts there is exactly one, in the
        documented form."""
        lines = self.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith("flight_profiler: "), \
            "expected one line 'flight_profiler: ...' on stderr\n" + self.describe()
        return lines[0]


class Profiler:
    """Runs the flight_profiler binary."""

    # After this many runs that hung, the others fail at once rather than
    # each waiting out its timeout.
    MAX_HANGS = 3

    def __init__(self, binary):
        self.binary = binary
        self.hangs = 0

    def run(self, *args, timeout=RUN_TIMEOUT, prefix=(), cwd=None):
        argv = list(prefix) + [self.binary] + [str(a) for a in args]
        if self.hangs >= self.MAX_HANGS:
            pytest.fail("not run: flight_profiler already hung %d times in this session"
                        % self.hangs, pytrace=False)
        try:
            proc = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, timeout=timeout, cwd=cwd)
        except subprocess.TimeoutExpired as e:
            self.hangs += 1
            so_far = (e.stdout or b"").decode("utf-8", "replace")
            # the verdict last: a CI log keeps the tail of a failure
            pytest.fail("--- stdout so far ---\n%s\n%s did not finish within %d s (%d lines "
                        "written)" % (so_far, " ".join(argv), timeout, so_far.count("\n")),
                        pytrace=False)
        try:
            out, err = proc.stdout.decode("utf-8"), proc.stderr.decode("utf-8")
        except UnicodeDecodeError as e:
            pytest.fail("%s wrote invalid UTF-8 (%s)\nstdout: %r\nstderr: %r"
                        % (" ".join(argv), e, proc.stdout, proc.stderr), pytrace=False)
        return Result(proc.returncode, out, err, argv)

    def cmd(self, pid, command, **kw):
        """flight_profiler <pid> --cmd "<command>" -> Result."""
        return self.run(pid, "--cmd", command, **kw)

    def stack_text(self, pid, *options):
        """Run `stack [options]`, assert it succeeded, return its stdout."""
        result = self.cmd(pid, " ".join(["stack"] + list(options)))
        assert result.code == EXIT_OK, result.describe()
        return result.stdout

    def stack(self, pid, *options):
        """Run `stack [options]` and parse its output into a StackDump."""
        return stackdump.parse(self.stack_text(pid, *options))


@pytest.fixture(scope="session")
def profiler():
    if not os.access(BINARY, os.X_OK):
        pytest.fail("the flight_profiler binary %s does not exist or is not executable: "
                    "build it (make), or set FP_BINARY" % BINARY, pytrace=False)
    return Profiler(BINARY)
