"""Clear answers when the target cannot answer (issue 7): a target that
exits while we attach, one that is stopped, a request that runs long.
Each drives the real binary against a real interpreter."""

import os
import re
import signal
import tempfile
import threading
import time

import pytest

from conftest import EXIT_EXITED, EXIT_OK, EXIT_OTHER


def failed(result, code=EXIT_OTHER):
    assert result.code == code, result.describe()
    return result.error_line()


def wait_state(pid, want, timeout=10):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with open("/proc/%d/stat" % pid) as f:
            if f.read().rsplit(")", 1)[1].split()[0] == want:
                return
        time.sleep(0.005)
    pytest.fail("process %d did not reach state %s" % (pid, want))


@pytest.mark.skipif(bool(os.environ.get("FP_SANITIZED")),
                    reason="a race on wording, run by the normal build; the sanitizer build "
                           "shifts its timing")
@pytest.mark.parametrize("delay_ms", [0, 5, 30])
def test_exit_while_attaching_is_process_exited(python, launch, profiler, delay_ms):
    """The target exits as soon as (or a little after) a thread of it is
    traced, so in the middle of the injection or of the connection after
    it: whatever step that breaks, the answer is "process N exited" (7),
    never a replaced libc, a thread, or a handshake."""
    target = launch("exits_when_traced.py", python, expect_exit=True,
                    env={"EXIT_DELAY_MS": str(delay_ms)})
    # Reap it as soon as it exits: the binary meets no zombie, only a gone pid.
    reaper = threading.Thread(target=target.proc.wait, daemon=True)
    reaper.start()
    result = profiler.cmd(target.pid, "execute 1")
    assert result.code in (EXIT_OK, EXIT_EXITED), result.describe()
    if result.code == EXIT_EXITED:
        assert result.error_line() == "flight_profiler: process %d exited" % target.pid


def test_stopped_target_says_it_is_stopped(any_python, agent_target, profiler):
    """The agent is loaded, then the target gets SIGSTOP: not "did not
    answer the handshake", but that it is stopped and how to resume it."""
    t = agent_target(any_python)
    assert profiler.cmd(t.pid, "getglobal __main__ G_LIST").code == EXIT_OK
    os.kill(t.pid, signal.SIGSTOP)
    try:
        wait_state(t.pid, "T")
        line = failed(profiler.cmd(t.pid, "getglobal __main__ G_LIST"))
    finally:
        os.kill(t.pid, signal.SIGCONT)
    assert line == ("flight_profiler: process %d is stopped (state T): resume it with "
                    "kill -CONT %d" % (t.pid, t.pid))


SLOW_REPR = """\
import __main__, time

class SlowRepr(object):
    def __repr__(self):
        end = time.monotonic() + 120
        while time.monotonic() < end:
            time.sleep(0.01)
        return "slow"

__main__.G_SLOW = SlowRepr()
"""


def test_slow_repr_is_still_running_not_the_gil(any_python, agent_target, profiler):
    """A __repr__ that takes longer than the request may: the agent answers
    pings and runs it, so the request is reported as still running and
    cancelled after the seconds waited (not "a GIL held in a C call"); the
    agent then serves the next request."""
    t = agent_target(any_python)
    with tempfile.NamedTemporaryFile("w", suffix=".py") as script:
        script.write(SLOW_REPR)
        script.flush()
        assert profiler.cmd(t.pid, "execute " + script.name).code == EXIT_OK
    line = failed(profiler.cmd(t.pid, "getglobal __main__ G_SLOW -r"))
    m = re.match(r"flight_profiler: getglobal: the request was still running in process %d "
                 r"\(slow Python code in the target, e.g. a slow __repr__ or property\); it was "
                 r"cancelled after (\d+\.\d) s$" % t.pid, line)
    assert m, line
    assert float(m.group(1)) >= 10.0, line
    assert profiler.cmd(t.pid, "getglobal __main__ G_LIST").code == EXIT_OK
