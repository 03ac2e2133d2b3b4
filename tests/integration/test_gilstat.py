"""gilstat on/off against real targets: exact counts from uprobes on
take_gil/drop_gil where the interpreter's image has them, the labelled
statistical mode where it is stripped (Debian's /usr/bin/python3.11), the
guide's own `gilstat on 1 1 2` warnings, and nothing of ours left behind."""

import glob
import os
import re
import select
import shutil
import signal
import subprocess
import time

import pytest

from conftest import (BINARY, EXIT_NOT_PYTHON, EXIT_OK, EXIT_USAGE, die_with_parent,
                      left_alone_problems)

NO_PERFMON = ["setpriv", "--bounding-set", "-perfmon,-sys_admin"]
NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
REPORT = "gil statistics report:"
WARNINGS = "gil warning report:"
TIMEOUT = 40
THREADS = ("gil-0", "gil-1", "gil-2")
UPROBE_EVENTS = ("/sys/kernel/tracing/uprobe_events", "/sys/kernel/debug/tracing/uprobe_events")


def gil_image(python):
    """The ELF file holding the interpreter: its libpython if it has one."""
    libs = glob.glob(os.path.join(os.path.dirname(os.path.dirname(python.exe)), "lib",
                                  "libpython%d.%d*.so.1.0" % python.version_info))
    return libs[0] if libs else os.path.realpath(python.exe)


def has_gil_symbols(python):
    """Whether take_gil/drop_gil are in the image's .symtab (readelf, not us)."""
    if shutil.which("readelf") is None:
        pytest.skip("readelf (binutils) is not installed")
    out = subprocess.run(["readelf", "-Ws", gil_image(python)], stdout=subprocess.PIPE,
                         check=True).stdout.decode()
    names = {line.split()[-1] for line in out.splitlines() if " FUNC " in line}
    return "take_gil" in names and "drop_gil" in names


def perf_fds(pid):
    """perf_event fds held by pid and its descendants (line mode runs each
    command in a child)."""
    n = 0
    for fd in glob.glob("/proc/%d/fd/*" % pid):
        try:
            n += os.readlink(fd) == "anon_inode:[perf_event]"
        except OSError:
            pass
    try:
        with open("/proc/%d/task/%d/children" % (pid, pid)) as f:
            children = [int(c) for c in f.read().split()]
    except OSError:
        children = []
    return n + sum(perf_fds(c) for c in children)


def uprobe_events():
    for path in UPROBE_EVENTS:
        try:
            with open(path) as f:
                return f.read()
        except OSError:
            pass
    return None


class Run:
    """flight_profiler running `gilstat on ...`, read as it reports."""

    def __init__(self, argv, stdin=subprocess.DEVNULL, cwd=None):
        self.proc = subprocess.Popen(argv, stdin=stdin, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, cwd=cwd, preexec_fn=die_with_parent)
        self.out = b""

    def wait_for(self, text, count=1):
        deadline = time.monotonic() + TIMEOUT
        while self.out.decode("utf-8", "replace").count(text) < count:
            left = deadline - time.monotonic()
            if left <= 0 or self.proc.poll() is not None:
                self.stop()
                pytest.fail("no %d x %r within %d s\n--- stdout ---\n%s--- stderr ---\n%s"
                            % (count, text, TIMEOUT, self.text(), self.err), pytrace=False)
            if select.select([self.proc.stdout], [], [], min(left, 0.5))[0]:
                self.out += os.read(self.proc.stdout.fileno(), 65536)

    def stop(self, interrupt=True):
        """Ctrl-C, as a user ends it (or just wait); returns the exit code."""
        if interrupt and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
        try:
            out, err = self.proc.communicate(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            out, err = self.proc.communicate()
        self.out += out
        self.err = err.decode("utf-8", "replace")
        return self.proc.returncode

    def text(self):
        return self.out.decode("utf-8", "replace")


def last_report(text):
    """{thread name: [numbers...]} of the last statistics report."""
    lines = text[text.rindex(REPORT):].splitlines()
    rows = {}
    for line in lines[2:]:
        m = re.match(r"^(\S+)\s+(\d+)((?:\s+[\d.]+)+)$", line)
        if m is None:
            break
        rows[m.group(1)] = [float(v) for v in m.group(3).split()]
    return lines[0], lines[1].split(), rows


def gilstat(target, command, reports=2):
    run = Run([BINARY, str(target.pid), "--cmd", command])
    run.wait_for(REPORT, reports)
    fds = perf_fds(run.proc.pid)
    code = run.stop()
    return run, code, fds


def test_statistics_report(python, launch):
    before = uprobe_events()
    exact = has_gil_symbols(python)
    target = launch("gilswitch.py", python)
    run, code, fds = gilstat(target, "gilstat on 0 0 1")
    text = run.text()
    assert code == EXIT_OK, text + run.err
    assert text.rstrip().endswith("gilstat off: probes removed"), text
    header, columns, rows = last_report(text)
    for name in THREADS:
        assert name in rows, "%s missing from the report\n%s" % (name, text)
    if exact:
        assert "exact: uprobes on take_gil and drop_gil" in header, text
        assert fds > 0, "no perf_event fd while gilstat ran\n" + text
        assert columns == ["thread_name", "tid", "takecnt", "hold_all", "holdavg", "take_all",
                           "takeavg", "dropcnt", "drop_all", "dropavg"], text
        for name in THREADS:
            takecnt, hold_all, holdavg, _, _, dropcnt, _, _ = rows[name]
            # Each round takes and drops the GIL around its sleep; a round is
            # at least 2 ms of holding, so ~1 s shows several of them.
            assert takecnt >= 3 and abs(takecnt - dropcnt) <= 1, text
            assert holdavg > 0 and hold_all >= holdavg, text
    else:
        assert "STATISTICAL" in header and "take_gil/drop_gil symbols" in header, text
        assert fds == 0, text
        assert columns[2:] == ["samples", "hold%", "wait%", "hold_all", "wait_all",
                               "longest_hold"], text
        assert sum(rows[name][1] for name in THREADS) > 0, text
    assert uprobe_events() == before, "gilstat changed uprobe_events"
    assert left_alone_problems(target.pid) == []


def test_warnings_of_the_guides_example(python, launch):
    target = launch("gilswitch.py", python)
    run, code, _ = gilstat(target, "gilstat on 1 1 2", reports=1)
    text = run.text()
    assert code == EXIT_OK, text + run.err
    assert WARNINGS in text, text
    warned = re.findall(r"^\d\d:\d\d:\d\d\.\d{3} (gil-\d)\s+\d+ held the GIL ([\d.]+) ms "
                        r"\(over 1\.000 ms\)", text, re.M)
    assert warned, text
    assert all(float(ms) > 1.0 for _, ms in warned), text


def exact_python(config):
    for python in config.fp_interpreters:
        if has_gil_symbols(python):
            return python
    pytest.skip("no configured interpreter keeps take_gil/drop_gil in .symtab")


def test_ctrl_c_removes_the_probes_and_keeps_the_client(request, launch):
    """Line mode: Ctrl-C ends `gilstat on` with its last report, and the
    client (still at its prompt) holds no perf_event fd any more."""
    python = exact_python(request.config)
    target = launch("gilswitch.py", python)
    run = Run([BINARY, str(target.pid)], stdin=subprocess.PIPE)
    run.proc.stdin.write(b"gilstat on 0 0 1\n")
    run.proc.stdin.flush()
    run.wait_for(REPORT)
    assert perf_fds(run.proc.pid) > 0, run.text()
    run.proc.send_signal(signal.SIGINT)
    run.wait_for("gilstat off: probes removed")
    assert run.proc.poll() is None, run.text()
    deadline = time.monotonic() + TIMEOUT   # the command's child may still be exiting
    while perf_fds(run.proc.pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert perf_fds(run.proc.pid) == 0, run.text()
    assert run.text().count(REPORT) >= 2, run.text()   # the last report, at Ctrl-C
    run.proc.stdin.close()
    run.proc.stdin = None
    assert run.stop(interrupt=False) == EXIT_OK, run.text() + run.err


def test_bad_input(any_python, launch, profiler):
    target = launch("gilswitch.py", any_python)
    result = profiler.cmd(target.pid, "gilstat on -1")
    assert result.code == EXIT_USAGE, result.describe()
    assert "take_ms" in result.error_line(), result.describe()
    result = profiler.cmd(target.pid, "gilstat on 1 1 0.01")
    assert result.code == EXIT_USAGE, result.describe()
    assert "interval_s" in result.error_line(), result.describe()
    result = profiler.cmd(target.pid, "gilstat off")
    assert result.code == EXIT_OK and "not on" in result.stdout, result.describe()
    sleeper = subprocess.Popen(["sleep", "60"], preexec_fn=die_with_parent)
    try:
        result = profiler.cmd(sleeper.pid, "gilstat on")
    finally:
        sleeper.kill()
        sleeper.wait()
    assert result.code == EXIT_NOT_PYTHON, result.describe()
    result.error_line()


def test_off_from_another_client(any_python, launch, profiler):
    """`gilstat off` in another flight_profiler ends the `gilstat on` that one
    runs (its probes are its file descriptors: only it can close them), with
    that one's last report; a second `on` meanwhile is refused; another
    user's `off` reaches nothing of ours."""
    target = launch("gilswitch.py", any_python)
    run = Run([BINARY, str(target.pid), "--cmd", "gilstat on 0 0 1"])
    run.wait_for("gilstat on:")
    second = profiler.cmd(target.pid, "gilstat on")
    assert second.code != EXIT_OK and "already on" in second.error_line(), second.describe()
    if shutil.which("setpriv") is not None and os.geteuid() == 0:
        other = subprocess.run(NOBODY + [BINARY, str(target.pid), "--cmd", "gilstat off"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=TIMEOUT)
        assert run.proc.poll() is None, other
    result = profiler.cmd(target.pid, "gilstat off")
    assert result.code == EXIT_OK and ") ended, its probes removed" in result.stdout, \
        result.describe()
    assert run.stop(interrupt=False) == EXIT_OK, run.text() + run.err
    assert REPORT in run.text(), run.text()
    assert run.text().rstrip().endswith("gilstat off: probes removed"), run.text()
    result = profiler.cmd(target.pid, "gilstat off")
    assert result.code == EXIT_OK and "not on" in result.stdout, result.describe()
    assert left_alone_problems(target.pid) == []


def test_no_perf_permission_falls_back_to_statistical(request, launch):
    """Without CAP_PERFMON and CAP_SYS_ADMIN (root with both dropped from
    its bounding set: it still reads the target), perf_event_open of a
    uprobe is refused: the report is statistical and says why."""
    python = exact_python(request.config)
    if shutil.which("setpriv") is None or os.geteuid() != 0:
        pytest.skip("needs root and setpriv to drop capabilities")
    target = launch("gilswitch.py", python)
    run = Run(NO_PERFMON + [BINARY, str(target.pid), "--cmd", "gilstat on 0 0 1"])
    run.wait_for(REPORT)
    code = run.stop()
    text = run.text()
    assert code == EXIT_OK, text + run.err
    assert "STATISTICAL" in text and "perf_event_open refused" in text, text
    assert all(name in last_report(text)[2] for name in THREADS), text
