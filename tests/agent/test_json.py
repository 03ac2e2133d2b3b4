"""--json for the agent's inspection commands (issue 13): one "answer"
record each, with its type, flight_profiler's version, the command, the
pid and the agent's JSON; what `execute` prints is in the record, not on
the terminal; a failure is one line on stderr and nothing on stdout."""

import json
import subprocess

from conftest import EXIT_OK, EXIT_USAGE


def record(result):
    assert result.code == EXIT_OK, result.describe()
    lines = result.stdout.splitlines()
    assert len(lines) == 1 and result.stderr == "", result.describe()
    rec = json.loads(lines[0])
    version = subprocess.run([result.argv[0], "--version"], stdout=subprocess.PIPE,
                             check=True).stdout.decode().split()[1]
    assert rec["type"] == "answer" and rec["version"] == version, result.describe()
    return rec


def test_answer_records(python, agent_target, profiler):
    t = agent_target(python)
    rec = record(profiler.run(t.pid, "--json", "--cmd", "getglobal __main__ G_NESTED -x 3"))
    assert rec["command"] == "getglobal" and rec["pid"] == t.pid
    assert rec["data"]["expr"] == "__main__.G_NESTED" and rec["data"]["type"] == "dict", rec
    plain = profiler.cmd(t.pid, "getglobal __main__ G_NESTED -x 3")
    assert "'deep'" in plain.stdout and "'deep'" in json.dumps(rec["data"]), rec
    rec = record(profiler.run(t.pid, "--json", "--cmd", "execute import __main__; print(len(__main__.G_LIST))"))
    assert rec["command"] == "execute" and rec["output"] == "25\n", rec
    rec = record(profiler.run(t.pid, "--json", "--cmd", "vmtool -a getInstances -c __main__ Base"))
    assert rec["command"] == "vmtool" and rec["pid"] == t.pid, rec
    assert "Child" in json.dumps(rec["data"]), rec
    rec = record(profiler.run(t.pid, "--json", "--cmd", "mem summary --limit 3"))
    assert rec["command"] == "mem summary" and len(rec["data"]["rows"]) == 3, rec
    # A failure: its one line, nothing on stdout.
    r = profiler.run(t.pid, "--json", "--cmd", "getglobal __main__ NO_SUCH_NAME")
    assert r.code != EXIT_OK and r.stdout == "" and len(r.stderr.splitlines()) == 1, r.describe()
    r = profiler.run(t.pid, "--json", "--cmd", "gilstat off")
    assert r.code == EXIT_USAGE and r.stdout == "" and "no --json records" in r.error_line(), \
        r.describe()
