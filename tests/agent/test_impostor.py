"""The client proves the agent before it sends a byte (doc/security.md).

Another user who squats /tmp/.flight_profiler-PID before the agent is
there (a directory or a symlink of their own, holding a socket that
answers like the agent) gets no connection and no byte, and no agent is
loaded over their files: flight_profiler refuses in one line naming the
path and the owner found, whoever runs it.  A listener that passes every
look at the files but is not the target process itself is refused by its
SO_PEERCRED, before the handshake.  A plain `stack` still reads from
outside, silently without the agent's names.
"""

import os
import shutil
import subprocess

import pytest

from conftest import (AGENT_TESTS, EXIT_OK, EXIT_PERMISSION, NOBODY, TARGET, agent_mappings)

IMPOSTOR = os.path.join(AGENT_TESTS, "impostor.py")
# Any uid can run it (pyenv's interpreters live under /root, which is closed).
SYSTEM_PYTHON = "/usr/bin/python3"
VICTIM_UID = 1234


def as_uid(uid):
    return ["setpriv", "--reuid=%d" % uid, "--regid=%d" % uid, "--clear-groups"]


class Impostor:
    """impostor.py squatting the agent's place of pid (see there)."""

    def __init__(self, how, pid, prefix):
        self.place = "/tmp/.flight_profiler-%d" % pid
        self.real = "/tmp/.fp-impostor-%d" % pid if how == "symlink" else self.place
        self.seen = None
        self.proc = subprocess.Popen(prefix + [SYSTEM_PYTHON, IMPOSTOR, how, str(pid)],
                                     stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE)
        if self.proc.stdout.readline() != b"listening\n":
            self.proc.kill()
            _, err = self.proc.communicate(timeout=30)
            pytest.fail("the impostor did not start: %s" % err.decode(), pytrace=False)

    def log(self):
        """Stop it; every connection it accepted and every byte it received."""
        if self.seen is None:
            self.proc.kill()
            self.seen = self.proc.communicate(timeout=30)[0].decode().splitlines()
        return self.seen

    def files(self):
        return sorted(os.listdir(self.real))

    def remove(self):
        self.log()
        for path in (self.place, self.real):
            if os.path.islink(path):
                os.unlink(path)
            elif os.path.isdir(path):
                shutil.rmtree(path)


@pytest.fixture
def impostor():
    """impostor(how, pid, prefix=NOBODY) -> Impostor; removed afterwards."""
    started = []

    def start(how, pid, prefix=NOBODY):
        started.append(Impostor(how, pid, prefix))
        return started[-1]

    yield start
    for fake in started:
        fake.remove()


def refusal(result, pid, path=None):
    """The one line of a refusal of `path` (the agent directory by default)."""
    assert result.code == EXIT_PERMISSION, result.describe()
    line = result.error_line()
    path = path or "/tmp/.flight_profiler-%d" % pid
    assert line.startswith("flight_profiler: refusing %s of process %d: " % (path, pid)), line
    assert line.endswith("another user may be impersonating the agent; remove it (as root) "
                         "and retry"), line
    return line


def untouched(fake, pid):
    """The impostor saw nothing, and nothing was loaded over its files."""
    assert fake.log() == [], "the impostor was contacted"
    assert fake.files() == ["agent.sock"]
    assert not agent_mappings(pid)


@pytest.mark.parametrize("how, found", [
    ("dir", "a directory of uid 65534, mode 0755"),
    ("symlink", "a symlink of uid 65534"),
])
def test_squatted_place_is_refused(any_python, agent_target, profiler, impostor, how, found):
    """Refused before anything that depends on the interpreter: one is enough."""
    t = agent_target(any_python)
    fake = impostor(how, t.pid)
    for command in ("getglobal __main__ Config name", "execute 'print(1)'"):
        line = refusal(profiler.cmd(t.pid, command), t.pid)
        assert ": %s (expected a 0700 directory of root):" % found in line, line
    untouched(fake, t.pid)


def test_plain_stack_says_nothing_to_an_impostor(python, agent_target, profiler, impostor):
    """`stack` asks a running agent for thread names: it must not ask this
    one.  No agent of ours can run where the place is squatted, so the
    stack is what it is without an agent: complete, Python's thread names
    read from outside, no word on stderr.  Asking for locals needs the agent and says why it cannot."""
    t = agent_target(python)
    fake = impostor("dir", t.pid)
    r = profiler.cmd(t.pid, "stack")
    assert r.code == EXIT_OK and r.stderr == "", r.describe()
    assert "agent_target.py" in r.stdout and "(py-worker)" in r.stdout, r.stdout
    assert fake.log() == [], "stack contacted the impostor"
    # Stopped now: its directory alone is refused.
    r = profiler.cmd(t.pid, "stack --locals")
    assert r.code == EXIT_PERMISSION, r.describe()
    assert r.error_line().startswith("flight_profiler: stack: locals unavailable: refusing "
                                     "/tmp/.flight_profiler-%d of process %d: " % (t.pid, t.pid))
    untouched(fake, t.pid)


@pytest.fixture
def victim_python(request):
    """A configured interpreter uid VICTIM_UID may run."""
    for python in request.config.fp_interpreters:
        if subprocess.run(as_uid(VICTIM_UID) + ["test", "-x", python.exe]).returncode == 0:
            return python
    pytest.skip("no configured interpreter can be run by uid %d" % VICTIM_UID)


def test_non_root_victim_is_not_fooled(victim_python, launch, profiler, impostor, tmp_path):
    """Target and flight_profiler run as uid 1234, the impostor as 65534."""
    wrapper = tmp_path / "as-victim"
    wrapper.write_text('#!/bin/sh\nexec %s %s "$@"\n' % (" ".join(as_uid(VICTIM_UID)),
                                                        victim_python.exe))
    wrapper.chmod(0o755)
    t = launch(TARGET, victim_python, exe=str(wrapper))
    with open("/proc/%d/status" % t.pid) as f:
        assert "\nUid:\t%d\t" % VICTIM_UID in f.read()
    fake = impostor("dir", t.pid)
    r = profiler.cmd(t.pid, "getglobal __main__ Config name", prefix=as_uid(VICTIM_UID))
    line = refusal(r, t.pid)
    assert (": a directory of uid 65534, mode 0755 (expected a 0700 directory of uid %d or "
            "root):" % VICTIM_UID) in line, line
    untouched(fake, t.pid)
    # Once root removed it, the victim loads the agent as itself: its own
    # directory passes the checks.
    fake.remove()
    r = profiler.cmd(t.pid, "getglobal __main__ Config name", prefix=as_uid(VICTIM_UID))
    assert r.code == EXIT_OK and r.stdout.endswith("VALUE: 'cfg'\n"), r.describe()
    assert os.stat(fake.place).st_uid == VICTIM_UID and len(agent_mappings(t.pid)) == 1


def test_listener_must_be_the_target(any_python, agent_target, profiler, impostor):
    """A directory and socket that pass every look (root's, 0700, 0600),
    served by another process: refused on its SO_PEERCRED, before hello."""
    t = agent_target(any_python)
    fake = impostor("private", t.pid, prefix=[])
    path = "/tmp/.flight_profiler-%d/agent.sock" % t.pid
    line = refusal(profiler.cmd(t.pid, "getglobal __main__ Config name"), t.pid, path)
    assert ": it is served by process %d of uid 0, not by process %d:" % (fake.proc.pid, t.pid) \
        in line, line
    assert fake.log() == ["connect"], "the impostor received bytes"
    assert fake.files() == ["agent.sock"] and not agent_mappings(t.pid)


def test_tmp_others_may_rename_in_is_refused(any_python, launch, profiler, tmp_path):
    """A target whose /tmp (its own mount namespace) is 0777 without the
    sticky bit: anyone could swap the agent's directory after our checks."""
    loose = tmp_path / "tmp"
    loose.mkdir()
    loose.chmod(0o777)
    wrapper = tmp_path / "loose-tmp"
    wrapper.write_text('#!/bin/sh\nexec unshare --mount --propagation private sh -c '
                       '\'mount --bind "$0" /tmp && exec "$@"\' %s %s "$@"\n'
                       % (loose, any_python.exe))
    wrapper.chmod(0o755)
    if subprocess.run([str(wrapper), "-c", "import os; assert os.stat('/tmp').st_mode & 0o1777 "
                       "== 0o777"]).returncode != 0:
        pytest.skip("cannot give a target a /tmp of its own here (unshare --mount)")
    t = launch(TARGET, any_python, exe=str(wrapper))
    r = profiler.cmd(t.pid, "getglobal __main__ Config name")
    assert r.code == EXIT_PERMISSION, r.describe()
    assert r.error_line() == (
        "flight_profiler: refusing /tmp of process %d: a directory of uid 0, mode 0777 (expected "
        "a sticky directory of root): others could rename the agent's files there; make it "
        "sticky (chmod +t) and retry" % t.pid)
    assert os.listdir(str(loose)) == [] and not agent_mappings(t.pid)
