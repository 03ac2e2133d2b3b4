"""Harness of the agent suite: the integration suite's fixtures (real
interpreters, real targets, the real binary, after-test checks: target
alive, not traced, not stopped, output unchanged) plus what the inside
view needs: the agent's directory and socket, a raw protocol client for
the bad-input tests, and a look at the target's mappings.

Fixtures added here:
    agent_target  agent_target(python, **env) -> Target: starts
                  tests/agent/targets/agent_target.py, and afterwards checks
                  the agent is mapped at most once and removes its directory
"""

import importlib.util
import json
import os
import shutil
import socket
import struct
import sys

import pytest

AGENT_TESTS = os.path.dirname(os.path.abspath(__file__))
INTEGRATION = os.path.join(os.path.dirname(AGENT_TESTS), "integration")

# Reuse the integration suite's conftest: its fixtures and hooks become ours.
sys.path.insert(0, INTEGRATION)
_spec = importlib.util.spec_from_file_location("fp_integration_conftest",
                                               os.path.join(INTEGRATION, "conftest.py"))
_base = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_base)
for _name in dir(_base):
    if not _name.startswith("_") and _name not in ("HERE", "os", "sys", "pytest"):
        globals()[_name] = getattr(_base, _name)

TARGET = os.path.join(AGENT_TESTS, "targets", "agent_target.py")
NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]


def agent_dir(pid):
    """The agent's directory as this (host) process reaches it."""
    return "/proc/%d/root/tmp/.flight_profiler-%d" % (pid, pid)


def agent_socket(pid):
    return os.path.join(agent_dir(pid), "agent.sock")


def agent_mappings(pid):
    """{(device, inode)} of the agent libraries mapped in pid."""
    found = set()
    with open("/proc/%d/maps" % pid) as f:
        for line in f:
            fields = line.split()
            if len(fields) >= 6 and os.path.basename(fields[5]).startswith("fpagent-cp"):
                found.add((fields[3], fields[4]))
    return found


def native_stacks(*pids):
    """Every thread's C stack of each pid, for a hang's failure message:
    gdb when installed, else each thread's kernel wait channel."""
    out = []
    for pid in pids:
        if shutil.which("gdb"):
            import subprocess
            try:
                # 12 frames a thread and the head kept: every thread must
                # show (a cut tail lost the first threads of a hang once).
                r = subprocess.run(["gdb", "-p", str(pid), "-batch", "-nx",
                                    "-ex", "thread apply all bt 12"],
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                   text=True, timeout=60)
                out.append("== pid %d (gdb)\n%s" % (pid, r.stdout[:40000]))
                continue
            except (OSError, subprocess.TimeoutExpired) as e:
                out.append("== pid %d: gdb: %s" % (pid, e))
        try:
            for tid in sorted(os.listdir("/proc/%d/task" % pid), key=int):
                with open("/proc/%d/task/%s/comm" % (pid, tid)) as f:
                    comm = f.read().strip()
                with open("/proc/%d/task/%s/wchan" % (pid, tid)) as f:
                    out.append("== %d/%s %s: %s" % (pid, tid, comm, f.read()))
        except OSError as e:
            out.append("== pid %d: %s" % (pid, e))
    return "\n".join(out)


class RawClient:
    """A client speaking the frames of doc/protocol.md by hand."""

    def __init__(self, pid, timeout=10):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        self.sock.connect(agent_socket(pid))

    def send_raw(self, data):
        self.sock.sendall(data)

    def send(self, obj):
        body = json.dumps(obj).encode()
        self.sock.sendall(struct.pack(">I", len(body)) + body)

    def recv(self):
        """The next message, or None at EOF."""
        head = self._read(4)
        if head is None:
            return None
        body = self._read(struct.unpack(">I", head)[0])
        return None if body is None else json.loads(body.decode("utf-8"))

    def _read(self, n):
        data = b""
        while len(data) < n:
            try:
                chunk = self.sock.recv(n - len(data))
            except ConnectionResetError:
                return None
            if not chunk:
                return None
            data += chunk
        return data

    def hello(self):
        self.send({"t": "hello", "proto": 1, "client": "tests"})
        reply = self.recv()
        assert reply is not None and reply["t"] == "hello", reply
        return reply

    def request(self, rid, cmd, **args):
        """Send a request, return (events, end)."""
        self.send({"t": "req", "id": rid, "cmd": cmd, "args": args})
        events = []
        while True:
            m = self.recv()
            assert m is not None, "the agent closed the connection"
            if m.get("id") != rid:
                continue
            if m["t"] == "end":
                return events, m
            events.append(m)

    def close(self):
        self.sock.close()


@pytest.fixture
def agent_target(launch):
    """agent_target(python, allow_output=False, **env) -> Target running
    tests/agent/targets/agent_target.py (extra environment: env)."""
    started = []

    def start(python, allow_output=False, **env):
        old = {k: os.environ.get(k) for k in env}
        os.environ.update(env)
        try:
            target = launch(TARGET, python, allow_output=allow_output)
        finally:
            for k, v in old.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
        started.append(target)
        return target

    yield start
    problems = []
    for target in started:
        if target.proc.poll() is None:
            maps = agent_mappings(target.pid)
            if len(maps) > 1:
                problems.append("agent mapped %d times in %d" % (len(maps), target.pid))
        shutil.rmtree("/tmp/.flight_profiler-%d" % target.pid, ignore_errors=True)
    assert not problems, problems
