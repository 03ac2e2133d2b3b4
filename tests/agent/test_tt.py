"""tt (time tunnel) against real processes, every configured interpreter:
the guide's examples (tt -t, tt -l, tt -i 1000 -p giving the next index,
-m filtering), -i/-w/-s/-d/-da, replay of coroutines, raising calls and
arguments changed since recording, the store's bounds and its eviction
message, expressions that raise (reported per record, the program goes
on), replay of a deleted or evicted index, and the hooks gone after -n,
Ctrl-C and SIGKILL of the client while the store stays for the next
client.  Target: tests/agent/targets/tt_target.py (a driver thread calls
every kind of function every few milliseconds)."""

import os
import re
import signal
import subprocess
import time

import pytest

from conftest import AGENT_TESTS, BINARY, EXIT_OK, EXIT_OTHER, EXIT_USAGE
from test_watch import observing

TT_TARGET = os.path.join(AGENT_TESTS, "targets", "tt_target.py")
ROW = re.compile(r"^(\d{4,})\s+\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}\s+(\d+\.\d{3})\s+"
                 r"(true|false)\s+(true|false)\s+(.+?)\s+(\S+)(?:  \(replay of (\d+)\))?$")


@pytest.fixture
def target(python, launch):
    t = launch(TT_TARGET, python)
    yield t
    import shutil
    shutil.rmtree("/tmp/.flight_profiler-%d" % t.pid, ignore_errors=True)


def ok(result):
    assert result.code == EXIT_OK, result.describe()
    return result.stdout


def rows(stdout):
    """[(index, is_ret, thread, method, replay_of)] of the record table lines."""
    out = []
    for line in stdout.splitlines():
        m = ROW.match(line)
        if m:
            out.append((int(m.group(1)), m.group(3) == "true", m.group(5), m.group(6),
                        int(m.group(7)) if m.group(7) else None))
    return out


def values(stdout):
    """The EXPR -> VALUE lines of a record shown in detail."""
    out = {}
    for line in stdout.splitlines():
        m = re.match(r"^    (\S+)\s+(.*)$", line)
        if m and m.group(1) != "EXPR":
            out[m.group(1)] = m.group(2)
    return out


def inside(profiler, pid, expr):
    return ok(profiler.cmd(pid, 'execute "import __main__; print(%s)"' % expr)).strip()


def test_tt_guide_examples(profiler, target):
    pid = target.pid
    out = ok(profiler.cmd(pid, "tt -t __main__ func -n 3"))
    assert out.startswith("Recording __main__.func (Ctrl-C to stop).\n"), out
    assert [r[0] for r in rows(out)] == [1000, 1001, 1002]
    assert all(r[1] and r[2] == "driver" and r[3] == "__main__.func" for r in rows(out))
    assert "tt: recorded 3 calls; the hooks are removed\n" in out
    out = ok(profiler.cmd(pid, "tt -t __main__ A func -n 2"))
    assert [(r[0], r[3]) for r in rows(out)] == [(1003, "__main__.A.func"), (1004, "__main__.A.func")]
    assert inside(profiler, pid, "__main__.hooks_left()") == "[]"
    assert [r[0] for r in rows(ok(profiler.cmd(pid, "tt -l")))] == list(range(1000, 1005))
    # -m module.class.method, class None for a module function.
    assert [r[0] for r in rows(ok(profiler.cmd(pid, "tt -l -m __main__.None.func")))] == \
        [1000, 1001, 1002]
    assert [r[0] for r in rows(ok(profiler.cmd(pid, "tt -l -m __main__.A.func")))] == [1003, 1004]
    # -i: the call in detail; -x 2 expands the dict argument.
    v = values(ok(profiler.cmd(pid, "tt -i 1000 -x 2")))
    n = int(re.search(r"'n': (\d+)", v["args"]).group(1))
    assert v["kwargs"] == "{}" and v["thread"] == "driver"
    assert v["return_obj"] == "{'success': %s, 'echo': %s}" % (
        n % 2 == 0, "'hello'" if n % 3 == 0 else "'other'")
    # -p: the current function called again, recorded as the next index.
    before = int(inside(profiler, pid, "__main__.counts['func']"))
    out = ok(profiler.cmd(pid, "tt -i 1000 -p"))
    assert out.startswith("[1005] "), out
    r = values(out)
    assert r["return_obj"] == v["return_obj"] and r["replay"] == "of   1000"
    assert r["thread"] == "flight_profiler replay"
    assert int(inside(profiler, pid, "__main__.counts['func']")) > before
    assert rows(ok(profiler.cmd(pid, "tt -l -m __main__.None.func")))[-1] == \
        (1005, True, "flight_profiler replay", "__main__.func", 1000)
    # --replay-times: K replays, K new indexes, with self as recorded.
    # args are the parameters as bound (watch's code-level observation):
    # a.func(i, scale=3) records (i, 3).
    x = int(re.match(r"^\((\d+), 3\)$", values(ok(profiler.cmd(pid, "tt -i 1003")))["args"]).group(1))
    out = ok(profiler.cmd(pid, "tt -i 1003 -p --replay-times 2 --replay-interval 1"))
    assert re.findall(r"^\[(\d+)\] ", out, re.M) == ["1006", "1007"]
    assert re.findall(r"^    return_obj\s+(\d+)$", out, re.M) == [str(3 * x)] * 2
    # -f on the return value and the cost, as in the guide.
    out = ok(profiler.cmd(pid, "tt -t __main__ func -n 2 -f \"return_obj['success']==True and cost>=0\""))
    for index, *_ in rows(out):
        assert "'success': True" in values(ok(profiler.cmd(pid, "tt -i %d" % index)))["return_obj"]
    assert inside(profiler, pid, "__main__.hooks_left()") == "[]"


def test_tt_search_eval_delete_and_their_errors(profiler, target):
    pid = target.pid
    ok(profiler.cmd(pid, "tt -t __main__ boom -n 4"))
    ok(profiler.cmd(pid, "tt -t __main__ func -n 2"))
    # -s over every record: boom's args[0] is an int, func's a dict: the
    # expression raises on func's records, reported one by one.
    out = ok(profiler.cmd(pid, "tt -s \"args[0] % 2 == 1\""))
    odd = [r for r in rows(out)]
    assert odd and all(not r[1] and r[3] == "__main__.boom" for r in odd), out
    assert re.findall(r"^tt: record (\d+): the expression raised TypeError", out, re.M) == \
        ["1004", "1005"]
    assert "%d records matched; store: 6 records" % len(odd) in out
    out = ok(profiler.cmd(pid, "tt -s \"cost >= 0\" -m __main__.None.func"))
    assert [r[0] for r in rows(out)] == [1004, 1005]
    # -w: an expression on one record; one that raises says so, exit 0.
    v = values(ok(profiler.cmd(pid, "tt -i 1004 -w \"(args[0]['query'],cost>=0)\"")))
    assert re.match(r"^\('(hello|other)', True\)$", v["(args[0]['query'],cost>=0)"]), v
    v = values(ok(profiler.cmd(pid, "tt -i 1004 -w 1/0")))
    assert v["1/0"] == "(raised ZeroDivisionError: division by zero)"
    # A filter that raises on some calls: reported per call, the others recorded.
    out = ok(profiler.cmd(pid, "tt -t __main__ func -n 2 -f \"1/(args[0]['n'] % 2)\""))
    assert "the filter raised ZeroDivisionError: division by zero: call not recorded" in out
    assert len(rows(out)) == 2
    # -d, -da, and replaying what is gone.
    assert ok(profiler.cmd(pid, "tt -d 1000")).startswith("tt: deleted 1 record; store: 7 records")
    r = profiler.cmd(pid, "tt -i 1000 -p")
    assert r.code == EXIT_OTHER and r.error_line() == "flight_profiler: tt: record 1000 was deleted"
    r = profiler.cmd(pid, "tt -i 4000")
    assert r.code == EXIT_OTHER and r.error_line() == \
        "flight_profiler: tt: no record 4000: indexes so far are 1000 to 1007"
    r = profiler.cmd(pid, "tt -i 1001 -p -w args")
    assert r.code == EXIT_USAGE
    assert ok(profiler.cmd(pid, "tt -da")).startswith("tt: deleted 7 records; store: 0 records")
    assert rows(ok(profiler.cmd(pid, "tt -l"))) == []
    r = profiler.cmd(pid, "tt -t __main__ nothere")
    assert r.code != EXIT_OK and "nothere" in r.error_line()
    assert inside(profiler, pid, "__main__.hooks_left()") == "[]"


def test_tt_replay_coroutine_exception_and_mutated_arguments(profiler, target):
    pid = target.pid
    ok(profiler.cmd(pid, "tt -t __main__ acoro -n 1"))
    ok(profiler.cmd(pid, "tt -t __main__ boom -n 2 -f \"args[0] % 2 == 1\""))
    ok(profiler.cmd(pid, "tt -t __main__ keep -n 1"))
    x = int(re.match(r"^\((\d+),\)$", values(ok(profiler.cmd(pid, "tt -i 1000")))["args"]).group(1))
    # A coroutine runs to its end on a fresh event loop.
    out = ok(profiler.cmd(pid, "tt -i 1000 -p"))
    assert out.startswith("[1004] ") and values(out)["return_obj"] == str(10 * x)
    # A call that raises again: the replay records the exception.
    out = ok(profiler.cmd(pid, "tt -i 1001 -p"))
    assert re.match(r"^\[1005\] .* raised ValueError: odd \d+$", out.splitlines()[0]), out
    # keep's list is changed by the caller after the call: flagged.
    out = ok(profiler.cmd(pid, "tt -i 1003"))
    assert "warning     the arguments were changed since record 1003 was taken" in out
    out = ok(profiler.cmd(pid, "tt -i 1003 -p"))
    assert values(out)["return_obj"] == "2" and "this replay used them as they are now" in out
    # Not flagged where nothing changed (boom's int).
    assert "warning" not in ok(profiler.cmd(pid, "tt -i 1001"))


def test_tt_store_bounds_and_eviction(profiler, target):
    pid = target.pid
    out = ok(profiler.cmd(pid, "tt -t __main__ func -n 5 --store-records 3"))
    assert "store: 0 records (at most 3)" in out
    assert re.findall(r"^tt: the store is full: evicted 1 oldest record \((\d+)\)", out, re.M) == \
        ["1000", "1001"]
    assert [r[0] for r in rows(ok(profiler.cmd(pid, "tt -l")))] == [1002, 1003, 1004]
    r = profiler.cmd(pid, "tt -i 1000 -p")
    assert r.code == EXIT_OTHER and "tt: record 1000 was evicted: the store keeps at most 3 " \
        "records" in r.error_line()
    # Bytes: big() returns 200 kB; 1 MiB holds four of them.
    out = ok(profiler.cmd(pid, "tt -t __main__ big -n 8 --store-mib 1"))
    kept = rows(ok(profiler.cmd(pid, "tt -l")))
    assert 1 <= len(kept) <= 5 and kept[-1][0] == 1012, kept
    assert "tt: the store is full: evicted" in out
    m = re.search(r"store: (\d+) records \(at most 1000\), ([\d.]+) (KiB|MiB|B) kept alive "
                  r"\(at most 1024\.0 KiB\)", ok(profiler.cmd(pid, "tt -l")))
    assert m and int(m.group(1)) == len(kept)
    # The defaults come back with the next recording that does not set them.
    assert "(at most 1000), " in ok(profiler.cmd(pid, "tt -t __main__ func -n 1"))


def start_tt(pid, command):
    proc = subprocess.Popen([BINARY, str(pid), "--cmd", command], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    assert proc.stdout.readline().startswith(b"Recording ")
    proc.stdout.readline()      # the store
    proc.stdout.readline()      # the column titles
    assert ROW.match(proc.stdout.readline().decode())
    return proc


def test_tt_hooks_end_with_the_client_and_the_store_stays(profiler, target, python):
    pid = target.pid
    proc = start_tt(pid, "tt -t __main__ A func -n 1000000")
    assert inside(profiler, pid, "__main__.hooks_left()") == \
        observing(python, "A.func", slot=True)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=10)
    assert proc.returncode == EXIT_OK, err
    assert re.search(rb"\ntt: stopped after \d+ records; the hooks are removed\n$", out)
    assert inside(profiler, pid, "__main__.hooks_left()") == "[]"
    proc = start_tt(pid, "tt -t __main__ func -n 1000000")
    proc.kill()
    proc.communicate(timeout=10)
    deadline = time.monotonic() + 2
    while inside(profiler, pid, "__main__.hooks_left()") != "[]":
        assert time.monotonic() < deadline, "the hook outlived the client by 2 s"
        time.sleep(0.1)
    # The records stay for a later client, and replay still works.
    kept = rows(ok(profiler.cmd(pid, "tt -l -m __main__.None.func")))
    assert kept and kept[0][3] == "__main__.func"
    out = ok(profiler.cmd(pid, "tt -i %d -p" % kept[0][0]))
    assert re.match(r"^\[\d+\] .*__main__\.func  cost=\d+\.\d{3} ms  returned$", out.splitlines()[0])
    # The program goes on.
    n = int(inside(profiler, pid, "__main__.counts['boom']"))
    time.sleep(0.1)
    assert int(inside(profiler, pid, "__main__.counts['boom']")) > n


def test_tt_replay_is_not_recorded_again_by_a_live_recording(python, profiler, target):
    """A replay while another client records the same function live: the
    replay is one record (its own, `replay of`), never a second one taken
    by the live recorder from the replaying thread."""
    pid = target.pid
    first = rows(ok(profiler.cmd(pid, "tt -t __main__ func -n 1")))[0][0]
    n = int(re.search(r"'n': (\d+)", values(ok(profiler.cmd(pid, "tt -i %d -x 2" % first)))["args"])
            .group(1))
    # Only calls with that old argument pass the filter: the driver's never do.
    proc = subprocess.Popen([BINARY, str(pid), "--cmd",
                             "tt -t __main__ func -n 1000000 -f \"args[0]['n'] == %d\"" % n],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout.readline().startswith(b"Recording ")
    deadline = time.monotonic() + 10
    while inside(profiler, pid, "__main__.hooks_left()") != observing(python, "func", slot=True):
        assert time.monotonic() < deadline, "the live recording never hooked func"
        time.sleep(0.05)
    out = ok(profiler.cmd(pid, "tt -i %d -p --replay-times 2" % first))
    replays = [int(i) for i in re.findall(r"^\[(\d+)\] ", out, re.M)]
    assert len(replays) == 2, out
    proc.send_signal(signal.SIGINT)
    live, err = proc.communicate(timeout=10)
    assert proc.returncode == EXIT_OK, err
    assert rows(live.decode()) == [], live.decode()
    assert b"tt: stopped after 0 records" in live, live.decode()
    listed = rows(ok(profiler.cmd(pid, "tt -l -m __main__.None.func")))
    assert [r[0] for r in listed if r[2] == "flight_profiler replay"] == replays
    assert all(r[4] == first for r in listed if r[2] == "flight_profiler replay")
    assert inside(profiler, pid, "__main__.hooks_left()") == "[]"
