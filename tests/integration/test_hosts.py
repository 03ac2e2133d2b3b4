"""--json records and `--hosts` over ssh (issue 13), against a real sshd
this test starts on a loopback port with throwaway keys (Debian's
openssh-server; nothing leaves this machine).  Two "hosts" are this
machine under two names (127.0.0.1 and localhost): `stack --group` over
them must give the local groups of tests/targets/pool.py, each member
named once per host; a host with no sshd (127.0.0.2: nothing listens
there) is reported in one line and the other still shown; a remote
flight_profiler of another version is refused; every member is healthy
afterwards and sshd is stopped at the end.

The ssh part hardly depends on the target's Python: it runs on the two
interpreters below (a static and a shared libpython) when they are
configured; the --json records of a local set run on all of them."""

import json
import os
import re
import socket
import subprocess
import time

import pytest

from conftest import BINARY, EXIT_OK, EXIT_OTHER, EXIT_USAGE
from test_procset import children, healthy, pids_of

SSHD = "/usr/sbin/sshd"
SSH_VERSIONS = ("3.11.2", "3.12.1")
READY_TIMEOUT = 20

# "16 threads in 16 processes — 127.0.0.1: pids 4101–4108; localhost: pids 4101–4108, thread X:"
HOSTS_HEADER = re.compile(r"^(\d+) threads?(?: in (\d+) processes)? \u2014 (.+), "
                          r"threads? (.+?)( \[partial\])?:$")
LOCAL_HEADER = re.compile(r"^(\d+) threads?(?: in (\d+) processes)? \u2014 pids? ([\d, \u2013]+), "
                          r"threads? (.+?)( \[partial\])?:$")

needs_sshd = pytest.mark.skipif(not os.access(SSHD, os.X_OK),
                                reason="no %s: install Debian's openssh-server" % SSHD)


def ssh_python(python):
    if python.version not in SSH_VERSIONS:
        pytest.skip("the ssh part runs on %s only" % ", ".join(SSH_VERSIONS))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_sshd(d):
    """sshd -D on a free loopback port; returns (Popen, port) once it listens."""
    for _ in range(3):   # another process may take the free port first
        port = free_port()
        conf = os.path.join(d, "sshd_config")
        with open(conf, "w") as f:
            f.write("\n".join([
                "Port %d" % port, "ListenAddress 127.0.0.1",
                "HostKey %s/host_key" % d, "AuthorizedKeysFile %s/authorized_keys" % d,
                "PidFile %s/sshd.pid" % d, "StrictModes no", "UsePAM no",
                "PasswordAuthentication no", "KbdInteractiveAuthentication no",
                "PermitRootLogin prohibit-password", "MaxStartups 50", "LogLevel ERROR", ""]))
        proc = subprocess.Popen([SSHD, "-D", "-e", "-f", conf], stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=open(os.path.join(d, "sshd.log"), "w"))
        deadline = time.monotonic() + READY_TIMEOUT
        while proc.poll() is None and time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                return proc, port
            except OSError:
                time.sleep(0.05)
        if proc.poll() is None:
            proc.kill()
        proc.wait()
    with open(os.path.join(d, "sshd.log")) as f:
        pytest.fail("sshd did not start listening:\n" + f.read(), pytrace=False)


@pytest.fixture(scope="module")
def sshd(tmp_path_factory):
    """(the --ssh command, the sshd process); sshd is killed at the end."""
    d = str(tmp_path_factory.mktemp("sshd"))
    for key in ("host_key", "user_key"):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", os.path.join(d, key)],
                       check=True, stdin=subprocess.DEVNULL)
    with open(os.path.join(d, "user_key.pub")) as src, open(os.path.join(d, "authorized_keys"), "w") as dst:
        dst.write(src.read())
    try:
        os.makedirs("/run/sshd", mode=0o755, exist_ok=True)   # sshd's privilege-separation directory
    except OSError as e:
        pytest.skip("sshd needs /run/sshd: %s" % e)
    proc, port = start_sshd(d)
    ssh = ("ssh -F /dev/null -i %s -p %d -o IdentitiesOnly=yes -o StrictHostKeyChecking=no "
           "-o UserKnownHostsFile=/dev/null -o LogLevel=ERROR -o KexAlgorithms=curve25519-sha256" % (os.path.join(d, "user_key"), port))
    yield ssh, proc
    proc.kill()
    proc.wait()


def over_hosts(profiler, ssh, hosts, *args, remote=BINARY):
    return profiler.run("--hosts", hosts, "--ssh", ssh, "--remote-binary", remote, *args, timeout=60)


def local_groups(stdout):
    """[(nthreads, {None: [pids]}, role, [frame lines])]."""
    out = []
    for line in stdout.splitlines():
        m = LOCAL_HEADER.match(line)
        if m:
            out.append((int(m.group(1)), {None: pids_of(m.group(3))}, m.group(4), []))
        elif out and line.startswith("    "):
            out[-1][3].append(line)
    return out


def host_groups(stdout):
    """[(nthreads, {host: [pids]}, role, [frame lines])]."""
    out = []
    for line in stdout.splitlines():
        m = HOSTS_HEADER.match(line)
        if m:
            members = {}
            for part in m.group(3).split("; "):
                host, _, pids = part.partition(": ")
                members[host] = pids_of(pids.split(" ", 1)[1])
            out.append((int(m.group(1)), members, m.group(4), []))
        elif out and line.startswith("    "):
            out[-1][3].append(line)
    return out


@needs_sshd
def test_hosts_group_as_the_local_group(python, launch, profiler, sshd):
    ssh_python(python)
    ssh, proc = sshd
    t = launch("pool.py", python)
    members = children(t.pid) + [t.pid]
    local = profiler.run(t.pid, "--tree", "--cmd", "stack --group")
    assert local.code == EXIT_OK, local.describe()
    expect = local_groups(local.stdout)
    assert expect and sum(g[0] for g in expect) >= 9, local.describe()
    # The same machine twice: each group twice as large, its pids under
    # each name; a third host with no sshd is one line.  The pattern has a
    # quote and a space in it: quoted for the remote shell.
    pattern = re.escape(t.path) + "(?:'x| |$)"
    r = over_hosts(profiler, ssh, "127.0.0.1,localhost,127.0.0.2", "--match", pattern,
                   "--cmd", "stack --group")
    assert r.code == EXIT_OK, r.describe()
    assert r.stdout.startswith("Hosts: 3, 2 answered: 18 Python processes"), r.describe()
    got = host_groups(r.stdout)
    assert got == [(2 * n, {"127.0.0.1": m[None], "localhost": m[None]}, role, frames)
                   for n, m, role, frames in expect], r.describe() + local.describe()
    failed = r.stdout.split("\nHosts that failed:\n")[1].splitlines()
    assert len(failed) == 1 and re.match(r"  127\.0\.0\.2: .*(refused|connect)", failed[0]), r.describe()
    # --json over hosts: the hosts' stack records, each with its host.
    r = over_hosts(profiler, ssh, "127.0.0.1", "%d,%d" % (t.pid, members[0]), "--json", "--cmd", "stack")
    assert r.code == EXIT_OK, r.describe()
    recs = [json.loads(line) for line in r.stdout.splitlines()]
    assert [(x["type"], x["host"], x["pid"]) for x in recs] == \
        [("stack", "127.0.0.1", p) for p in sorted([t.pid, members[0]])], r.describe()
    assert proc.poll() is None
    assert all(healthy(p) for p in members)


@needs_sshd
def test_bad_hosts(profiler, sshd, tmp_path):
    """Once, not per interpreter: no target is read here."""
    ssh, proc = sshd
    # A remote flight_profiler of another version is refused, in one line.
    other = tmp_path / "old_flight_profiler"
    other.write_text("#!/bin/sh\necho '{\"type\":\"stack\",\"version\":\"0.0.1\",\"pid\":1,\"threads\":[]}'\n")
    other.chmod(0o755)
    r = over_hosts(profiler, ssh, "127.0.0.1", "1", "--tree", "--cmd", "stack --group", remote=str(other))
    assert r.code == EXIT_OTHER, r.describe()
    assert re.search(r"^  127\.0\.0\.1: its flight_profiler is version 0\.0\.1, this one \S+: ",
                     r.stdout, re.M), r.describe()
    assert r.error_line() == "flight_profiler: --hosts: no host answered", r.describe()
    # A host that does not answer in time: its ssh is killed, it is one line.
    slow = tmp_path / "slow_ssh"
    slow.write_text("#!/bin/sh\necho $$ > %s/slow.pid\nexec sleep 60\n" % tmp_path)
    slow.chmod(0o755)
    r = profiler.run("--hosts", "slowhost", "--ssh", str(slow), "--ssh-timeout", "1", "1",
                     "--tree", "--cmd", "stack --group")
    assert r.code == EXIT_OTHER and "  slowhost: no answer in time (--ssh-timeout)\n" in r.stdout, \
        r.describe()
    assert not os.path.exists("/proc/%s" % (tmp_path / "slow.pid").read_text().strip()), "not killed"
    # What --hosts does not take says so before any ssh.
    for args, text in [(("--hosts", "-oProxyCommand=x", "1", "--cmd", "stack"), "not a host name"),
                       (("--hosts", "h1", "--cmd", "stack"), "which processes?"),
                       (("--hosts", "h1", "1", "--cmd", "getglobal __main__ x"), "runs `stack` so far"),
                       (("--hosts", "h1", "1"), "go with --cmd"),
                       (("--ssh", "ssh -p 2", "1", "--cmd", "stack"), "go with --hosts")]:
        r = profiler.run(*args)
        assert r.code == EXIT_USAGE and text in r.error_line(), r.describe()
    assert proc.poll() is None


def test_json_records_of_a_set_and_of_one_process(python, launch, profiler):
    t = launch("pool.py", python)
    workers = children(t.pid)
    text = profiler.run(t.pid, "--tree", "--cmd", "stack --group")
    r = profiler.run(t.pid, "--tree", "--json", "--cmd", "stack --group")
    assert r.code == EXIT_OK, r.describe()
    recs = [json.loads(line) for line in r.stdout.splitlines()]
    assert all(x["version"] == recs[0]["version"] and x["version"] for x in recs), r.describe()
    assert recs[0] == {"type": "set", "version": recs[0]["version"], "processes": 9, "python": 9,
                       "threads": recs[0]["threads"], "skipped": 0}, r.describe()
    groups = [x for x in recs if x["type"] == "group"]
    assert len(groups) == len(recs) - 1, r.describe()
    # The records' groups are the text's: sizes, pids, roles, frames.
    assert [(g["threads"], sorted({m["pid"] for m in g["members"]}), g["role"]) for g in groups] == \
        [(n, m[None], role) for n, m, role, _ in local_groups(text.stdout)]
    waiting = [g for g in groups if g["frames"] and g["frames"][0]["function"] == "wait_for_work"
               or any(f["function"] == "wait_for_work" for f in g["frames"])]
    assert len(waiting) == 1 and waiting[0]["threads"] == 7, r.describe()
    frame = [f for f in waiting[0]["frames"] if f["function"] == "wait_for_work"][0]
    assert frame["line"] == t.line("waiting") and frame["code"] == "go.wait()  # @waiting", r.describe()
    # One process: its threads, frames innermost first.
    r = profiler.run(workers[-1], "--json", "--cmd", "stack")
    assert r.code == EXIT_OK, r.describe()
    (rec,) = [json.loads(line) for line in r.stdout.splitlines()]
    assert rec["type"] == "stack" and rec["pid"] == workers[-1] and "pool.py" in rec["cmdline"]
    main = [th for th in rec["threads"] if th["main"]][0]
    assert main["tid"] == workers[-1] and main["partial"] is False, r.describe()
    assert [f["function"] for f in main["frames"]][:1] == ["elsewhere"], r.describe()
    # A command without records: one line, nothing on stdout.
    r = profiler.run(t.pid, "--json", "--cmd", "gilstat off")
    assert r.code == EXIT_USAGE and r.stdout == "", r.describe()
    assert "no --json records" in r.error_line(), r.describe()
    assert all(healthy(p) for p in workers + [t.pid])


def test_group_names_ranks(python, launch, profiler):
    """Processes started with RANK are named by rank in a group (and in
    its record), their pids after; LOCAL_RANK (one per host) is not."""
    ranked = [launch("idle.py", python, env={"RANK": str(rank)}) for rank in (1, 0)]
    pids = sorted(t.pid for t in ranked)
    r = profiler.run("%d,%d" % (ranked[0].pid, ranked[1].pid), "--cmd", "stack --group")
    assert r.code == EXIT_OK, r.describe()
    assert "\n2 threads in 2 processes \u2014 ranks 0, 1 (pids %d, %d), threads MainThread:\n" \
        % tuple(pids) in r.stdout, r.describe()
    r = profiler.run("%d,%d" % (ranked[0].pid, ranked[1].pid), "--json", "--cmd", "stack --group")
    assert r.code == EXIT_OK, r.describe()
    (group,) = [g for g in map(json.loads, r.stdout.splitlines()) if g.get("role") == "MainThread"]
    assert sorted((m["pid"], m["rank"]) for m in group["members"]) == \
        sorted([(ranked[0].pid, 1), (ranked[1].pid, 0)]), r.describe()
    local = launch("idle.py", python, env={"LOCAL_RANK": "2"})
    r = profiler.run("%d,%d" % (ranked[0].pid, local.pid), "--cmd", "stack --group")
    assert r.code == EXIT_OK, r.describe()
    assert "\n2 threads in 2 processes \u2014 pids %d, %d, threads MainThread:\n" \
        % tuple(sorted([ranked[0].pid, local.pid])) in r.stdout, r.describe()
