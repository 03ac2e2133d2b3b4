"""A fake agent for test_impostor.py, run as another user: it squats the
agent's place of a target, then serves like an agent would (answers hello,
ping and every request with a value of its own) and logs on stdout each
connection and every byte it receives.

    impostor.py HOW PID

HOW is how it squats /tmp/.flight_profiler-PID:
    dir       a 0755 directory of its own holding a 0777 socket
    symlink   a symlink to such a directory (/tmp/.fp-impostor-PID)
    private   a 0700 directory holding a 0600 socket: as the agent's own look
              (run as root, to show that only the listener gives it away)

It prints "listening" once the socket is there, then serves until killed.
Standard library only; runs on any Python 3.
"""

import json
import os
import socket
import struct
import sys


def squat(how, pid):
    place = "/tmp/.flight_profiler-%d" % pid
    if how == "symlink":
        real = "/tmp/.fp-impostor-%d" % pid
        os.mkdir(real)
        os.chmod(real, 0o755)
        os.symlink(real, place)
    else:
        os.mkdir(place)
        os.chmod(place, 0o700 if how == "private" else 0o755)
    path = os.path.join(place, "agent.sock")
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    os.chmod(path, 0o600 if how == "private" else 0o777)
    server.listen(8)
    return server


def answer(msg, pid):
    t = msg.get("t")
    if t == "hello":
        return {"t": "hello", "proto": 1, "agent": "0.1.0", "build": "impostor", "python": "3",
                "pid": pid, "host_pid": pid, "workers": 1,
                "caps": ["getglobal", "vmtool", "module", "execute", "console", "threads"]}
    if t == "ping":
        return {"t": "pong", "id": msg["id"]}
    if t == "req":
        return {"t": "end", "id": msg["id"], "ok": True,
                "data": {"value": {"r": "'impostor'"}, "threads": []}}
    return None


def serve(conn, pid):
    conn.settimeout(30)
    pending = b""
    while True:
        try:
            data = conn.recv(65536)
        except OSError:
            data = b""
        if not data:
            break
        print("bytes " + data.hex(), flush=True)
        pending += data
        while len(pending) >= 4 and len(pending) >= 4 + struct.unpack(">I", pending[:4])[0]:
            n = struct.unpack(">I", pending[:4])[0]
            reply = answer(json.loads(pending[4:4 + n].decode()), pid)
            pending = pending[4 + n:]
            if reply is not None:
                body = json.dumps(reply).encode()
                conn.sendall(struct.pack(">I", len(body)) + body)
    conn.close()


def main():
    how, pid = sys.argv[1], int(sys.argv[2])
    server = squat(how, pid)
    print("listening", flush=True)
    while True:
        conn, _ = server.accept()
        print("connect", flush=True)
        serve(conn, pid)


if __name__ == "__main__":
    main()
