"""Several requests in flight per connection, several clients on one agent.

tests/agent/multireq (C, core/session's API) keeps two long statements
running (each waits for a file only it creates, so "long" is a fact, not a
duration) and starts rounds of short requests all at once meanwhile: each
asks for a value computed in the target that only it should get.  Two
such clients run on one agent at the same time; every answer must reach
its own request in both, the cancel of one long statement must end only
that one, and the other must end with its own output."""

import os
import subprocess

from conftest import EXIT_OK

BUILDDIR = os.environ.get("FP_BUILDDIR", ".")
MULTIREQ = os.path.join(BUILDDIR, "tests/agent/multireq")
ROUNDS = 4          # before the cancel; two more after it
PER_ROUND = 8       # 6 handled getglobal + 1 execute + 1 queued getglobal


def test_two_clients_each_with_long_and_short_requests(python, agent_target, profiler, tmp_path):
    t = agent_target(python)
    loaded = profiler.cmd(t.pid, "getglobal __main__ G_LIST")
    assert loaded.code == EXIT_OK, loaded.describe()
    os.chmod(str(tmp_path), 0o755)
    procs = [subprocess.Popen([MULTIREQ, str(t.pid), str(tag), str(tmp_path), str(ROUNDS)],
                              stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, universal_newlines=True)
             for tag in (1, 2)]
    outs = []
    for p in procs:
        try:
            out, _ = p.communicate(timeout=180)
        except subprocess.TimeoutExpired:
            p.kill()
            out, _ = p.communicate()
        outs.append((p.returncode, out))
    total = (ROUNDS + 2) * PER_ROUND
    for tag, (code, out) in zip((1, 2), outs):
        assert code == 0 and out.rstrip().endswith("PASS"), out
        assert ("client %d: %d/%d short answers reached their own request" % (tag, total, total)
                in out), out
        assert "client %d: cancel: long 2 ended cancelled, long 1 still running: yes" % tag in out, out
        assert "client %d: long 1 ended ok with its own output: yes" % tag in out, out
    # The agent serves a new client as before.
    after = profiler.cmd(t.pid, "getglobal __main__ G_LIST -e 'target[3]'")
    assert after.code == EXIT_OK and "3" in after.stdout, after.describe()
