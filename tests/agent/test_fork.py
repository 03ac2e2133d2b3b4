"""The agent and the program's fork(): a program we attached to forks
exactly as it would without us (CPython 3.12+ prints no "multi-threaded"
DeprecationWarning on our account), its parent keeps answering, and the
forked child can be attached on its own, with its own values."""

import os
import shutil
import signal
import subprocess
import time

import pytest

from conftest import BINARY, EXIT_OK, AGENT_TESTS, RawClient, agent_mappings

FORK_TARGET = os.path.join(AGENT_TESTS, "targets", "fork_target.py")
WAIT = 30


class Forker:
    """tests/agent/targets/fork_target.py, driven through its folder."""

    def __init__(self, launch, python, folder, mode="main", allow_output=False, env=None):
        self.dir = str(folder)
        os.makedirs(self.dir)
        env = dict(env or {}, FORK_DIR=self.dir, FORK_MODE=mode)
        self.target = launch(FORK_TARGET, python, expect_exit=True, allow_output=allow_output,
                             env=env)
        self.pid = self.target.pid
        self.child = None

    def touch(self, name):
        open(os.path.join(self.dir, name), "w").close()

    def read(self, name):
        path = os.path.join(self.dir, name)
        deadline = time.monotonic() + WAIT
        while not os.path.exists(path):
            assert time.monotonic() < deadline, "the target did not write %s" % name
            assert self.target.proc.poll() is None, "the target exited: %r" % (self.target.output(),)
            time.sleep(0.01)
        with open(path) as f:
            return f.read()

    def fork(self):
        self.touch("fork")
        self.child = int(self.read("child.pid"))
        return self.child

    def finish(self):
        """Let the child and the parent exit; the child's exit status and
        the parent's stderr."""
        self.touch("stop-child")
        self.touch("stop")
        status = int(self.read("child.status"))
        self.target.proc.wait(timeout=WAIT)
        for pid in (self.pid, self.child):
            if pid is not None:
                shutil.rmtree("/tmp/.flight_profiler-%d" % pid, ignore_errors=True)
        return status, self.target.output()[1]


def value(profiler, pid):
    r = profiler.cmd(pid, "getglobal __main__ VALUE")
    assert r.code == EXIT_OK, r.describe()
    return r.stdout.splitlines()[-1]


def test_fork_after_attach_leaves_stderr_alone(python, launch, profiler, tmp_path):
    """Byte for byte the stderr of the same run without us: on 3.12 and
    3.13 the agent's threads made os.fork() warn."""
    plain = Forker(launch, python, tmp_path / "plain")
    plain.fork()
    status, alone = plain.finish()
    assert status == 0

    attached = Forker(launch, python, tmp_path / "attached")
    assert value(profiler, attached.pid) == "VALUE: 'parent'"
    attached.fork()
    status, ours = attached.finish()
    assert status == 0
    assert ours == alone


def test_forked_child_is_attachable(python, launch, profiler, tmp_path):
    """The child's inherited copy of the agent is dormant; attaching to the
    child re-arms it in the child (never a second copy), and the parent
    keeps serving."""
    f = Forker(launch, python, tmp_path / "f")
    assert value(profiler, f.pid) == "VALUE: 'parent'"
    child = f.fork()
    assert value(profiler, child) == "VALUE: 'child'"
    assert value(profiler, f.pid) == "VALUE: 'parent'"
    assert value(profiler, child) == "VALUE: 'child'"      # the re-armed agent, reused
    assert len(agent_mappings(child)) == 1
    assert len(agent_mappings(f.pid)) == 1
    status, _ = f.finish()
    assert status == 0


def test_fork_from_a_thread_with_a_client_connected(python, launch, profiler, tmp_path):
    """os.fork() from a thread of the program while a client stays
    connected: that client's connection keeps working in the parent, the
    child is attachable.  (The program has two threads then: CPython 3.12+
    warns on its own account, so its stderr is not checked.)"""
    f = Forker(launch, python, tmp_path / "f", mode="thread", allow_output=True)
    assert value(profiler, f.pid) == "VALUE: 'parent'"
    c = RawClient(f.pid)
    try:
        c.hello()
        _, end = c.request(1, "getglobal", module="__main__", field="VALUE")
        assert end["ok"] and end["data"]["value"] == {"r": "'parent'"}, end
        child = f.fork()
        _, end = c.request(2, "getglobal", module="__main__", field="VALUE")
        assert end["ok"] and end["data"]["value"] == {"r": "'parent'"}, end
        assert value(profiler, child) == "VALUE: 'child'"
        _, end = c.request(3, "getglobal", module="__main__", field="VALUE")
        assert end["ok"] and end["data"]["value"] == {"r": "'parent'"}, end
    finally:
        c.close()
    status, _ = f.finish()
    assert status == 0


def test_multiprocessing_fork_child_is_attachable(python, launch, profiler, tmp_path):
    """multiprocessing's "fork" start method goes through os.fork() from
    the standard library: no warning either (the target must write
    nothing), and its child is attachable."""
    f = Forker(launch, python, tmp_path / "f", mode="multiprocessing")
    assert value(profiler, f.pid) == "VALUE: 'parent'"
    child = f.fork()
    assert value(profiler, child) == "VALUE: 'child'"
    assert value(profiler, f.pid) == "VALUE: 'parent'"
    status, err = f.finish()
    assert status == 0 and err == ""


def stop_and_check_parent(profiler, f, proc, hooks):
    """Ctrl-C to the parent's client: nothing is left in the parent then,
    and both processes exit cleanly."""
    proc.send_signal(signal.SIGINT)
    proc.communicate(timeout=WAIT)
    r = profiler.cmd(f.pid, hooks)
    assert r.code == EXIT_OK and r.stdout == "[]\n", r.describe()
    status, _ = f.finish()
    assert status == 0


@pytest.mark.min_python((3, 10))
def test_forked_child_drops_the_parents_trace_evaluator(python, launch, profiler, tmp_path):
    """A fork from inside a traced call (tick()), trace's frame evaluator
    installed (the eval path, 3.10+): the child has the interpreter's own
    evaluator back and no hook; the parent's trace goes on until stopped,
    then nothing is left there either."""
    f = Forker(launch, python, tmp_path / "f", mode="tick", allow_output=True,
               env={"FORK_HOOKS": "1"})
    hooks = 'execute "import __main__; print(__main__.hooks_left())"'
    proc = subprocess.Popen([BINARY, str(f.pid), "--cmd", "trace __main__ tick -n 1000000"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout.readline().startswith(b"Tracing ")
    assert proc.stdout.readline().startswith(b"(Python calls only: ")   # the eval path
    assert proc.stdout.readline().startswith(b"[1] ")   # tick() calls are traced
    child = f.fork()
    r = profiler.cmd(child, hooks)
    assert r.code == EXIT_OK and r.stdout == "[]\n", r.describe()
    stop_and_check_parent(profiler, f, proc, hooks)


def test_forked_child_drops_the_parents_watch(python, launch, profiler, tmp_path):
    """A watch running in the parent when it forks: the child has none of
    its hooks (its client is the parent's; nothing would read what they
    queue, and the child's calls would pay for them for good), and the
    parent's watch goes on until its client stops it."""
    # allow_output: 3.12+ warns, the watch being a request in progress (README).
    f = Forker(launch, python, tmp_path / "f", allow_output=True, env={"FORK_HOOKS": "1"})
    hooks = 'execute "import __main__; print(__main__.hooks_left())"'
    proc = subprocess.Popen([BINARY, str(f.pid), "--cmd", "watch __main__ add -n 1000000"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout.readline().startswith(b"Watching ")
    watched = profiler.cmd(f.pid, hooks)
    assert watched.code == EXIT_OK and watched.stdout != "[]\n", watched.describe()
    child = f.fork()
    r = profiler.cmd(child, hooks)
    assert r.code == EXIT_OK and r.stdout == "[]\n", r.describe()
    r = profiler.cmd(f.pid, hooks)
    assert r.code == EXIT_OK and r.stdout == watched.stdout, r.describe()
    stop_and_check_parent(profiler, f, proc, hooks)
