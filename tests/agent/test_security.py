"""Who may talk to the agent, and what it survives: another uid is
refused (by the directory's permissions and by SO_PEERCRED), garbage,
truncated and oversized frames and clients killed mid-command leave it
serving the next client; a second flight_profiler never loads it twice;
a target that exits during a command is reported as such."""

import os
import signal
import socket
import struct
import subprocess
import sys
import time

import pytest

from conftest import (BINARY, EXIT_EXITED, EXIT_OK, EXIT_PERMISSION, NOBODY, TARGET, RawClient,
                      agent_dir, agent_mappings, agent_socket, target_env)


def healthy(profiler, pid):
    r = profiler.cmd(pid, "getglobal __main__ Config name")
    assert r.code == EXIT_OK and r.stdout.endswith("VALUE: 'cfg'\n"), r.describe()


def test_other_uid_is_refused(python, agent_target, profiler):
    t = agent_target(python)
    healthy(profiler, t.pid)
    r = profiler.run(t.pid, "--cmd", "getglobal __main__ Config name", prefix=NOBODY)
    assert r.code == EXIT_PERMISSION, r.describe()
    assert "permission denied" in r.error_line()
    healthy(profiler, t.pid)


PEER_CLIENT = r"""
import json, socket, struct, sys
s = socket.socket(socket.AF_UNIX)
s.settimeout(10)
s.connect(sys.argv[1])
body = json.dumps({"t": "hello", "proto": 1}).encode()
try:
    s.sendall(struct.pack(">I", len(body)) + body)
except OSError:
    pass
head = s.recv(4)
n = struct.unpack(">I", head)[0]
data = b""
while len(data) < n:
    data += s.recv(n - len(data))
print(json.loads(data)["t"], json.loads(data).get("error", ""))
"""


def test_peercred_refuses_other_uid_even_when_reachable(python, agent_target, profiler):
    """Open the directory and the socket to everyone: the agent itself must
    still refuse uid 65534 (SO_PEERCRED)."""
    t = agent_target(python)
    healthy(profiler, t.pid)
    d, sock = agent_dir(t.pid), agent_socket(t.pid)
    direct = "/tmp/.flight_profiler-%d/agent.sock" % t.pid    # /proc/PID/root is closed to uid 65534
    os.chmod(d, 0o755)
    os.chmod(sock, 0o666)
    try:
        out = subprocess.run(NOBODY + ["/usr/bin/python3", "-c", PEER_CLIENT, direct],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=30)
    finally:
        os.chmod(d, 0o700)
        os.chmod(sock, 0o600)
    text = out.stdout.decode()
    assert text.startswith("error permission denied: uid 65534 may not use this agent"), \
        (text, out.stderr.decode())
    healthy(profiler, t.pid)


def test_garbage_truncated_and_oversized_frames(python, agent_target, profiler):
    t = agent_target(python)
    healthy(profiler, t.pid)
    cases = [
        b"GET / HTTP/1.1\r\nHost: x\r\n\r\n",                        # not our protocol
        struct.pack(">I", 0x7FFFFFFF) + b"{",                         # oversized header
        struct.pack(">I", 0),                                          # empty frame
        struct.pack(">I", 10) + b'{"t":"he',                          # truncated, then EOF
        struct.pack(">I", 5) + b"\xff\xfe\xfd\xfc\xfb",               # not UTF-8, not JSON
        struct.pack(">I", 2) + b"[]",                                  # JSON, not an object
        os.urandom(4096),
    ]
    for data in cases:
        c = RawClient(t.pid)
        c.send_raw(data)
        c.sock.shutdown(socket.SHUT_WR)
        reply = c.recv()
        assert reply is None or reply["t"] == "error", (data[:20], reply)
        c.close()
    # After a good handshake: a request before hello, a bad message, then more.
    c = RawClient(t.pid)
    c.hello()
    events, end = c.request(1, "getglobal", module="__main__", field="INTERRUPTED")
    assert end["ok"] and end["data"]["value"] == {"r": "False"}
    events, end = c.request(2, "nosuchcommand")
    assert not end["ok"] and end["kind"] == "usage"
    c.send({"t": "end", "id": 3, "ok": True})          # clients may not send ends
    assert c.recv()["t"] == "error"
    c.close()
    c = RawClient(t.pid)
    c.send({"t": "req", "id": 1, "cmd": "getglobal", "args": {}})   # no hello first
    assert c.recv()["t"] == "error"
    c.close()
    c = RawClient(t.pid)
    c.send({"t": "hello", "proto": 99})
    reply = c.recv()
    assert reply["t"] == "error" and "protocol version mismatch" in reply["error"]
    c.close()
    # Many clients at once, one after the other half-open.
    clients = [RawClient(t.pid) for _ in range(8)]
    for i, c in enumerate(clients):
        c.hello()
        events, end = c.request(1, "getglobal", module="__main__", field="G_UNICODE")
        assert end["ok"], end
    for c in clients:
        c.close()
    healthy(profiler, t.pid)


def wait_state(pid, letter, timeout=5.0):
    """Wait until /proc/PID/stat shows the process in state `letter`."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with open("/proc/%d/stat" % pid) as f:
            if f.read().rsplit(")", 1)[1].split()[0] == letter:
                return
        time.sleep(0.005)
    raise AssertionError("process %d never reached state %s" % (pid, letter))


def test_half_closed_client_still_gets_its_answers(python, agent_target, profiler):
    """A client that sends, then shuts its writing side, still reads what the
    agent answered at once."""
    t = agent_target(python)
    healthy(profiler, t.pid)
    c = RawClient(t.pid)
    # The agent must find the frames and the end of input in one read: hold
    # the whole process while they are sent.
    os.kill(t.pid, signal.SIGSTOP)
    try:
        wait_state(t.pid, "T")
        c.send({"t": "hello", "proto": 1, "client": "tests"})
        c.send({"t": "ping", "id": 7})
        c.sock.shutdown(socket.SHUT_WR)
    finally:
        os.kill(t.pid, signal.SIGCONT)
    replies = []
    while True:
        m = c.recv()
        if m is None:
            break
        replies.append(m)
    c.close()
    assert [m["t"] for m in replies] == ["hello", "pong"], replies
    assert replies[1]["id"] == 7
    healthy(profiler, t.pid)


def test_client_killed_mid_command(python, agent_target, profiler):
    t = agent_target(python)
    healthy(profiler, t.pid)
    for command in ("execute 'import time; time.sleep(0.3); print(1)'",
                    "vmtool -a getInstances -c __main__ Base -v"):
        for delay in (0.0, 0.05, 0.2):
            p = subprocess.Popen([BINARY, str(t.pid), "--cmd", command], stdin=subprocess.DEVNULL,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(delay)
            p.send_signal(signal.SIGKILL)
            p.wait()
    healthy(profiler, t.pid)
    # A raw client that asks and disappears without reading.
    c = RawClient(t.pid)
    c.hello()
    c.send({"t": "req", "id": 1, "cmd": "getglobal", "args": {"module": "__main__", "field": "G_HUGE",
                                                                "verbose": True}})
    c.close()
    healthy(profiler, t.pid)


def test_concurrent_first_attaches_load_once(python, agent_target, profiler):
    t = agent_target(python)
    procs = [subprocess.Popen([BINARY, str(t.pid), "--cmd", "getglobal __main__ Config name"],
                              stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
             for _ in range(3)]
    for p in procs:
        out, err = p.communicate(timeout=60)
        assert p.returncode == 0, (out, err)
        assert out.decode().endswith("VALUE: 'cfg'\n")
    assert len(agent_mappings(t.pid)) == 1


def test_target_exiting_during_a_command(python, profiler, tmp_path):
    """Started by hand: this target is meant to die."""
    read_fd, write_fd = os.pipe()
    proc = subprocess.Popen([python.exe, TARGET], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, pass_fds=[write_fd],
                            env=target_env(FP_READY_FD=str(write_fd)))
    os.close(write_fd)
    try:
        assert os.read(read_fd, 64) == b"ready\n"
        os.close(read_fd)
        healthy(profiler, proc.pid)
        killer = subprocess.Popen(["sh", "-c", "sleep 0.5; kill -9 %d" % proc.pid])
        r = profiler.cmd(proc.pid, "execute 'import time; time.sleep(30)'")
        killer.wait()
        assert r.code == EXIT_EXITED, r.describe()
        assert r.error_line() == "flight_profiler: process %d exited" % proc.pid
    finally:
        proc.kill()
        proc.wait()
        subprocess.run(["rm", "-rf", "/tmp/.flight_profiler-%d" % proc.pid])
