"""--json for the streaming commands (issue 13): one "event" record per
event the agent sent, printed as it arrives, then one "end" record saying
how the command ended; and `help --json`: every command of the table says
what --json gives for it, and every one that gives nothing refuses in one
line.  The target (tests/agent/targets/watch_target.py) calls add() from a
"driver" thread every few milliseconds."""

import json
import os
import re
import signal
import subprocess

import pytest

from conftest import AGENT_TESTS, BINARY, EXIT_OK, EXIT_USAGE

WATCH_TARGET = os.path.join(AGENT_TESTS, "targets", "watch_target.py")

# What --json gives for each command of the table: a command added without
# a decision fails test_every_command_decided.
DECIDED = {
    "help": "command", "stack": "stack",
    "getglobal": "answer", "vmtool": "answer", "module": "answer", "execute": "answer",
    "reset": "answer", "mem summary": "answer", "mem diff": "answer", "mem sites": "answer",
    "mem rss": "answer",
    "watch": "stream", "trace": "stream", "tt": "stream", "monitor": "stream",
    "torch profile": "stream", "torch memory": "stream", "torch modules": "stream",
    "console": "refused", "perf": "perf", "gilstat on": "gilstat", "gilstat off": "refused",
    "quit": "refused", "save": "refused", "theme": "refused", "delay": "refused",
    "flame": "refused",
}


@pytest.fixture
def target(python, launch):
    t = launch(WATCH_TARGET, python)
    yield t
    import shutil
    shutil.rmtree("/tmp/.flight_profiler-%d" % t.pid, ignore_errors=True)


def version():
    out = subprocess.run([BINARY, "--version"], stdout=subprocess.PIPE, check=True).stdout
    return out.decode().split()[1]


def records(result, command, pid):
    assert result.code == EXIT_OK and result.stderr == "", result.describe()
    recs = [json.loads(line) for line in result.stdout.splitlines()]
    v = version()
    for r in recs:
        assert r["version"] == v and r["command"] == command and r["pid"] == pid, r
        assert r["type"] in ("event", "end"), r
    assert [r["type"] for r in recs].count("end") == 1 and recs[-1]["type"] == "end", recs
    assert recs[-1]["events"] == len(recs) - 1, recs
    return recs[:-1], recs[-1]


def live(pid, command, n, then=None, env=None):
    """Run `--json --cmd command` and read its first n records from the
    pipe while it still runs; then then() (default: Ctrl-C, SIGINT) ends
    it.  -> (the n records, the records after them, exit status, stderr)."""
    proc = subprocess.Popen([BINARY, str(pid), "--json", "--cmd", command],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    try:
        first = [json.loads(proc.stdout.readline()) for _ in range(n)]
        assert proc.poll() is None
        if then is None:
            proc.send_signal(signal.SIGINT)
        else:
            then()
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    return first, [json.loads(line) for line in out.decode().splitlines()], proc.returncode, err


def hooks_left(profiler, pid):
    r = profiler.cmd(pid, 'execute "import __main__; print(__main__.hooks_left())"')
    assert r.code == EXIT_OK, r.describe()
    return r.stdout.strip()


def test_watch_trace_monitor_tt_records(profiler, target):
    pid = target.pid
    events, end = records(profiler.run(pid, "--json", "--cmd", "watch __main__ add -n 3"),
                          "watch", pid)
    assert events[0]["data"]["started"] is True, events
    assert [e["data"]["index"] for e in events[1:]] == [1, 2, 3], events
    assert all(e["data"]["method"] == "__main__.add" for e in events[1:]), events
    assert end["how"] == "done" and end["error"] is None and end["data"]["shown"] == 3, end
    events, end = records(profiler.run(pid, "--json", "--cmd", "trace __main__ add -n 2"),
                          "trace", pid)
    assert len(events) == 3 and events[1]["data"]["tree"]["name"] == "add", events
    assert end["how"] == "done", end
    events, end = records(profiler.run(pid, "--json", "--cmd", "monitor __main__ add -c 0.1 -n 2"),
                          "monitor", pid)
    assert [e["data"]["cycle"] for e in events[1:]] == [1, 2], events
    assert end["how"] == "done" and end["data"]["cycles"] == 2, end
    events, end = records(profiler.run(pid, "--json", "--cmd", "tt -t __main__ add -n 2"),
                          "tt", pid)
    first = events[1]["data"]["index"]
    assert [e["data"]["index"] for e in events[1:]] == [first, first + 1], events
    assert end["how"] == "done" and end["data"]["recorded"] == 2, end
    events, end = records(profiler.run(pid, "--json", "--cmd", "tt -l"), "tt", pid)
    assert events == [] and [row["index"] for row in end["data"]["rows"]] == [first, first + 1]
    events, end = records(profiler.run(pid, "--json", "--cmd", "tt -i %d" % first), "tt", pid)
    assert len(events) == 1 and events[0]["data"]["index"] == first, events
    assert hooks_left(profiler, pid) == "[]"
    # A bad name: its one line, no records, as without --json.
    r = profiler.run(pid, "--json", "--cmd", "watch __main__ nosuch -n 3")
    assert r.code != EXIT_OK and r.stdout == "" and "'nosuch' not found" in r.error_line(), \
        r.describe()


def test_records_arrive_live_and_ctrl_c_ends_them(profiler, target):
    """A filter no call passes: the watch can only end by Ctrl-C, so the
    started record read from the pipe came while it ran."""
    pid = target.pid
    (started,), rest, code, err = live(pid, "watch __main__ add -n 3 -f False", 1)
    assert started["type"] == "event" and started["data"]["started"] is True, started
    assert code == EXIT_OK, err
    assert len(rest) == 1, rest
    end = rest[0]
    assert end["type"] == "end" and end["how"] == "cancelled" and end["events"] == 1, end
    assert hooks_left(profiler, pid) == "[]"


def test_every_command_decided(profiler, target):
    r = profiler.run("--json", "--cmd", "help")
    assert r.code == EXIT_OK and r.stderr == "", r.describe()
    recs = [json.loads(line) for line in r.stdout.splitlines()]
    assert all(rec["type"] == "command" and rec["version"] == version() for rec in recs)
    got = {rec["name"]: rec["json"] for rec in recs}
    assert got == DECIDED, got
    for rec in recs:
        if rec["json"] != "refused":
            continue
        r = profiler.run(target.pid, "--json", "--cmd", rec["name"])
        assert r.code == EXIT_USAGE and r.stdout == "" and len(r.stderr.splitlines()) == 1, \
            r.describe()


def test_perf_records(profiler, target, python, tmp_path):
    """perf -d 1: a perf_stack record per distinct stack, root first, whose
    counts sum to the perf record's samples, which are the sampler's own
    count (its summary line); no file without -f, the file with it."""
    if python.version_info[:2] not in ((3, 8), (3, 12), (3, 13)):
        pytest.skip("perf --json: on 3.8, 3.12 and 3.13 (one second each)")
    r = profiler.run(target.pid, "--json", "--cmd", "perf -d 1 --threads", cwd=str(tmp_path))
    assert r.code == EXIT_OK and r.stderr == "", r.describe()
    recs = [json.loads(line) for line in r.stdout.splitlines()]
    assert all(rec["version"] == version() and rec["pid"] == target.pid for rec in recs)
    stacks, summary = recs[:-1], recs[-1]
    assert summary["type"] == "perf" and summary["file"] is None, summary
    assert all(s["type"] == "perf_stack" and s["count"] > 0 for s in stacks), stacks
    assert sum(s["count"] for s in stacks) == summary["samples"] > 0, recs
    assert summary["summary"].startswith("%d samples " % summary["samples"]), summary
    assert summary["stacks"] == len(stacks) and summary["mode"] == "wall", summary
    drive = [s for s in stacks if any(f["function"] == "drive" for f in s["frames"])]
    assert drive and all(s["thread"].startswith("thread driver") for s in drive), stacks
    assert all(s["frames"][0]["function"].endswith("_bootstrap") for s in drive), drive
    assert os.listdir(str(tmp_path)) == [], "perf --json without -f wrote a file"
    out = tmp_path / "p.collapsed"
    r = profiler.run(target.pid, "--json", "--cmd", "perf -d 0.3 -f %s" % out)
    assert r.code == EXIT_OK, r.describe()
    assert json.loads(r.stdout.splitlines()[-1])["file"] == str(out)
    assert "drive" in out.read_text()


def test_target_exit_ends_the_stream(profiler, launch, python):
    """The target exits (by itself, status 0) while watched: the records so
    far, then an end record saying so, and a failure status."""
    if python.version_info[:2] not in ((3, 8), (3, 12), (3, 13)):
        pytest.skip("on 3.8, 3.12 and 3.13")
    t = launch(WATCH_TARGET, python, expect_exit=True)

    def exit_soon():
        r = profiler.cmd(t.pid, 'execute "import os, threading; '
                         'threading.Timer(0.2, os._exit, (0,)).start()"')
        assert r.code == EXIT_OK, r.describe()

    (started,), rest, code, err = live(t.pid, "watch __main__ add -f False", 1, exit_soon)
    assert started["data"]["started"] is True, started
    assert code not in (EXIT_OK, EXIT_USAGE), err
    (end,) = rest
    assert end["type"] == "end" and end["how"] == "exited" and end["events"] == 1, end
    assert ("process %d exited" % t.pid) in end["error"], end


def test_mem_and_reset_answer(profiler, target):
    """mem diff, mem sites diff -i, mem rss and reset: one answer record
    each, the agent's data (mem sites diff -i: the diff's, the last)."""
    pid = target.pid

    def answer(command):
        r = profiler.run(pid, "--json", "--cmd", command)
        assert r.code == EXIT_OK and r.stderr == "", r.describe()
        (rec,) = [json.loads(line) for line in r.stdout.splitlines()]
        assert rec["type"] == "answer" and rec["pid"] == pid and rec["version"] == version()
        return rec

    rec = answer("mem rss")
    assert rec["command"] == "mem rss" and rec["data"]["rss"] > 0, rec
    rec = answer("mem diff --interval 0.1 --limit 2")
    assert rec["command"] == "mem diff" and rec["data"]["action"] == "diff", rec
    rec = answer("mem sites diff -i 0.2")
    assert rec["command"] == "mem sites" and isinstance(rec["data"]["rows"], list), rec
    rec = answer("reset")
    assert rec["command"] == "reset" and rec["data"]["removed"] == [], rec


@pytest.mark.parametrize("statistical", [False, True], ids=["exact", "statistical"])
def test_gilstat_records_live(target, python, statistical):
    """gilstat on --json: its start record, a gilstat record per interval
    while it runs (read from the pipe before Ctrl-C), then an end record."""
    if python.version_info[:2] not in ((3, 8), (3, 12)):
        pytest.skip("gilstat --json: on 3.8 and 3.12")
    env = dict(os.environ)
    if statistical:
        env["FP_GILSTAT_STATISTICAL"] = "1"
    (start, report), recs, code, err = live(target.pid, "gilstat on 0 0 0.5", 2, env=env)
    assert code == EXIT_OK, err
    assert start["type"] == "gilstat_on" and start["pid"] == target.pid, start
    assert report["type"] == "gilstat" and report["exact"] is start["exact"], report
    assert not (statistical and start["exact"]), start
    driver = [t for t in report["threads"] if t["name"] == "driver"]
    assert len(driver) == 1, report
    assert driver[0]["samples" if not report["exact"] else "takecnt"] > 0, report
    assert all(r["type"] == "gilstat" for r in recs[:-1]), recs
    assert recs[-1]["type"] == "end" and recs[-1]["how"] == "cancelled", recs


def test_perf_records_over_a_set(profiler, launch, python):
    """perf --tree --json of the 8-worker pool: every process's stacks
    under its process root (pid and command line), counts summing to the
    samples; --merge folds them, without process roots."""
    if python.version_info[:2] not in ((3, 8), (3, 12)):
        pytest.skip("perf --json over a set: on 3.8 and 3.12")
    t = launch("pool.py", python)
    job = {t.pid} | {int(p) for p in os.listdir("/proc") if p.isdigit() and parent(p) == t.pid}
    assert len(job) == 9, job
    r = profiler.run(t.pid, "--tree", "--json", "--cmd", "perf -d 0.5 --idle")
    assert r.code == EXIT_OK and r.stderr == "", r.describe()
    recs = [json.loads(line) for line in r.stdout.splitlines()]
    stacks, summary = recs[:-1], recs[-1]
    assert summary["type"] == "perf" and summary["processes"] == 9, summary
    assert sum(s["count"] for s in stacks) == summary["samples"] > 0, recs
    assert summary["summary"].startswith("%d samples " % summary["samples"]), summary
    assert {s["pid"] for s in stacks} == job, recs
    for s in stacks:
        assert re.match(r"^pid %d python\S* pool\.py$" % s["pid"], s["process"]), s
    r = profiler.run(t.pid, "--tree", "--json", "--cmd", "perf -d 0.3 --idle --merge")
    assert r.code == EXIT_OK, r.describe()
    recs = [json.loads(line) for line in r.stdout.splitlines()]
    assert recs[-1]["merged"] is True and recs[-1]["samples"] > 0, recs[-1]
    assert all(s["process"] is None and s["pid"] is None for s in recs[:-1]), recs


def parent(pid):
    try:
        with open("/proc/%s/stat" % pid) as f:
            stat = f.read()
    except OSError:
        return None
    return int(stat[stat.rindex(")") + 2:].split()[1])
