"""watch against real processes, every configured interpreter: each call's
arguments, result, exception and cost; -n, -e, -s, -b, --expr, -f, -E,
--stack; clear errors for bad names and raising expressions; and the hooks
gone after -n, after Ctrl-C and after SIGKILL of the client, checked from
inside the target (every attribute is the very object it was).  The
target (tests/agent/targets/watch_target.py) calls every kind of function
from a "driver" thread every few milliseconds."""

import os
import re
import signal
import subprocess
import time

import pytest

from conftest import AGENT_TESTS, BINARY, EXIT_OK, EXIT_USAGE, EXIT_OTHER

WATCH_TARGET = os.path.join(AGENT_TESTS, "targets", "watch_target.py")
HOOKS_LEFT = 'execute "import __main__; print(__main__.hooks_left())"'


@pytest.fixture
def target(python, launch):
    t = launch(WATCH_TARGET, python)
    yield t
    import shutil
    shutil.rmtree("/tmp/.flight_profiler-%d" % t.pid, ignore_errors=True)


def ok(result):
    assert result.code == EXIT_OK, result.describe()
    return result.stdout


def records(stdout):
    """[{"head": header line, "EXPR": VALUE text, ..., "at": [stack lines]}]"""
    out = []
    for line in stdout.splitlines():
        if re.match(r"^\[\d+\] ", line):
            out.append({"head": line, "at": []})
        elif out and line.startswith("    at "):
            out[-1]["at"].append(line[7:])
        elif out and line.startswith("    ") and not line.startswith("    EXPR "):
            m = re.match(r"^    (\S+)\s+(.*)$", line)
            if m:
                out[-1][m.group(1)] = m.group(2)
    return out


def hooks_left(profiler, pid):
    return ok(profiler.cmd(pid, HOOKS_LEFT)).strip()


def test_watch_arguments_return_exception_cost(profiler, target):
    pid = target.pid
    out = ok(profiler.cmd(pid, "watch __main__ add -n 2"))
    assert out.startswith("Watching __main__.add (Ctrl-C to stop).\n")
    recs = records(out)
    assert len(recs) == 2
    for i, r in enumerate(recs, 1):
        assert re.match(r"^\[%d\] \d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}  __main__\.add  "
                        r"cost=\d+\.\d{3} ms  returned$" % i, r["head"]), r
        a, b = re.match(r"^\((\d+), (\d+)\)$", r["args"]).groups()
        assert b == "1" and r["kwargs"] == "{}"
    # -e: only raising calls, with the exception; -s: only returning calls.
    recs = records(ok(profiler.cmd(pid, "watch __main__ maybe_fail -e -n 3 --expr args,return_obj")))
    assert len(recs) == 3
    for r in recs:
        n = int(re.match(r"^\((\d+),\)$", r["args"]).group(1))
        assert r["head"].endswith("raised ValueError: odd %d" % n) and n % 2 == 1
        assert r["return_obj"] == "None"
    recs = records(ok(profiler.cmd(pid, "watch __main__ maybe_fail -s -n 3 --expr args,return_obj")))
    assert len(recs) == 3
    for r in recs:
        assert r["head"].endswith("returned") and int(r["return_obj"]) % 2 == 0
        assert r["args"] == "(%s,)" % r["return_obj"]
    assert hooks_left(profiler, pid) == "[]"


def test_watch_expression_variables_and_filter(profiler, target):
    pid = target.pid
    out = ok(profiler.cmd(pid, "watch __main__ Calc mul -n 2 "
                               "--expr target,args,kwargs,return_obj,cost,cost>=0"))
    for r in records(out):
        assert re.match(r"^<__main__\.Calc object at 0x[0-9a-f]+>$", r["target"]), r
        # The code's parameters, however the caller spelt them (mul(i, y=3)).
        x = int(re.match(r"^\((\d+), 3\)$", r["args"]).group(1))
        assert r["kwargs"] == "{}"
        assert r["return_obj"] == str(3 * x)
        assert float(r["cost"]) >= 0 and r["cost>=0"] == "True"
    # classmethod: target is the class; staticmethod: no target.
    r = records(ok(profiler.cmd(pid, "watch __main__ Calc named -n 1 --expr target,return_obj")))[0]
    assert r["target"] == "<class '__main__.Calc'>" and r["return_obj"].startswith("'Calc")
    r = records(ok(profiler.cmd(pid, "watch __main__ Calc neg -n 1 --expr target,args,return_obj")))[0]
    assert r["target"] == "None"
    assert r["return_obj"] == "-" + re.match(r"^\((\d+),\)$", r["args"]).group(1)
    # -f: only calls whose first argument is a multiple of 5.
    recs = records(ok(profiler.cmd(pid, "watch __main__ add -n 3 -f args[0]%5==0 --expr args")))
    assert len(recs) == 3
    assert all(int(re.match(r"^\((\d+), 1\)$", r["args"]).group(1)) % 5 == 0 for r in recs)
    # Coroutines and generators: the value they finally return.
    r = records(ok(profiler.cmd(pid, "watch __main__ acoro -n 1 --expr args,return_obj")))[0]
    assert r["return_obj"] == str(10 * int(re.match(r"^\((\d+),\)$", r["args"]).group(1)))
    r = records(ok(profiler.cmd(pid, "watch __main__ gen -n 1 --expr return_obj")))[0]
    assert r["return_obj"] == "'gen-done'"
    assert hooks_left(profiler, pid) == "[]"


def test_watch_before_stack_regex_and_truncation(profiler, target):
    pid = target.pid
    # -b: the list as passed; without it, as the body left it.
    r = records(ok(profiler.cmd(pid, "watch __main__ mutate -b -n 1 -x 2")))[0]
    assert r["head"].endswith("at entry") and "mutated" not in r["args"], r
    assert re.match(r"^\(\[\d+\],\)$", r["args"]), r
    r = records(ok(profiler.cmd(pid, "watch __main__ mutate -n 1 -x 2")))[0]
    assert re.match(r"^\(\[\d+, 'mutated'\],\)$", r["args"]), r
    r = records(ok(profiler.cmd(pid, "watch __main__ add -n 1 --stack")))[0]
    assert r["at"][0].startswith("drive (%s:" % WATCH_TARGET), r
    out = ok(profiler.cmd(pid, "watch __main__ Calc n.* -E -n 2"))
    assert out.startswith("Pattern matched 2 methods; watching 2 (Ctrl-C to stop):\n"
                          "  __main__.Calc.named\n  __main__.Calc.neg\n"), out
    # PCRE2 on the client: its syntax, whole names, bad patterns as usage errors.
    out = ok(profiler.cmd(pid, r"watch __main__ (?i)CALC '(?:mu|ne)\w' -E -n 1"))
    assert out.startswith("Pattern matched 2 methods; watching 2 (Ctrl-C to stop):\n"
                          "  __main__.Calc.mul\n  __main__.Calc.neg\n"), out
    out = ok(profiler.cmd(pid, r"watch __main__ '\w+' -E -n 1"))
    m = re.match(r"^Pattern matched (\d+) methods; watching (\d+) ", out)
    assert m and m.group(1) == m.group(2) and "\n  __main__.hooks_left\n" in out, out
    r = profiler.cmd(pid, "watch __main__ Calc mu -E -n 1")
    assert r.code == EXIT_OTHER and r.error_line() == (
        "flight_profiler: watch: no function of module '__main__' matches class pattern "
        "'Calc' and method pattern 'mu'"), r.describe()
    r = profiler.cmd(pid, "watch __main__ Calc 'mu(' -E -n 1")
    assert r.code == EXIT_USAGE and "bad method pattern at offset 3" in r.error_line(), \
        r.describe()
    out = ok(profiler.cmd(pid, "watch __main__ huge -n 1 -x 4 --expr return_obj"))
    assert "... 4990 more items]" in out and "<recursive dict at 0x" in out
    assert len(out) < 20000
    assert hooks_left(profiler, pid) == "[]"


def test_watch_bad_names_and_raising_expressions(profiler, target):
    pid = target.pid

    def error(command, code=EXIT_OTHER):
        result = profiler.cmd(pid, command)
        assert result.code == code, result.describe()
        return result.error_line()

    assert error("watch __main__ ad") == \
        "flight_profiler: watch: method 'ad' not found in module '__main__' (closest: add)"
    assert error("watch __main__ Calk mul") == \
        "flight_profiler: watch: class 'Calk' not found in module '__main__' (closest: Calc)"
    assert error("watch __mian__ add").startswith(
        "flight_profiler: watch: module '__mian__' is not imported in this process (closest: __main__")
    assert "written in C: only Python functions can be watched" in error("watch time sleep")
    assert error("watch __main__ add --expr 'args,'(") .startswith(
        "flight_profiler: watch: --expr is not a valid Python expression")
    assert "exclude each other" in error("watch __main__ add -e -s", EXIT_USAGE)
    # An expression that raises: its error in each record, the watch goes on.
    recs = records(ok(profiler.cmd(pid, "watch __main__ add -n 2 --expr 1/0,args")))
    assert len(recs) == 2
    for r in recs:
        assert r["1/0"] == "(raised ZeroDivisionError: division by zero)"
        assert r["args"].endswith(", 1)")
    assert hooks_left(profiler, pid) == "[]"


def start_watch(pid, command):
    proc = subprocess.Popen([BINARY, str(pid), "--cmd", command], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    first = proc.stdout.readline()
    assert first.startswith(b"Watching "), first
    assert proc.stdout.readline().startswith(b"[1] ")
    return proc


def observing(python, name, slot=False):
    """What hooks_left says while `name` is observed: its code swapped
    before 3.12, our sys.monitoring tool id held since; slot: watch's
    common case (no -b, no --stack, a plain function of positional
    parameters), which has the function's vectorcall slot instead except
    on 3.11 (the agent's vcall.c)."""
    if slot and python.version_info[:2] != (3, 11):
        return "['vectorcall %s']" % name
    return "['tool 4=flight_profiler']" if python.version_info >= (3, 12) else "['code %s']" % name


def kill_and_wait_for_no_hooks(profiler, pid, proc):
    """SIGKILL the client: the agent sees the connection close and removes
    the hook within 2 s."""
    proc.kill()
    proc.communicate(timeout=10)
    deadline = time.monotonic() + 2
    while hooks_left(profiler, pid) != "[]":
        assert time.monotonic() < deadline, "the hook outlived the client by 2 s"
        time.sleep(0.1)


def test_watch_hooks_removed_on_ctrl_c_and_sigkill(profiler, target, python):
    pid = target.pid
    proc = start_watch(pid, "watch __main__ Calc mul -n 1000000")
    assert hooks_left(profiler, pid) == observing(python, "Calc.mul", slot=True)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=10)
    assert proc.returncode == EXIT_OK, err
    assert re.search(rb"\nwatch: stopped after \d+ calls; the hooks are removed\n$", out)
    assert hooks_left(profiler, pid) == "[]"
    # SIGKILL: the agent sees the connection close and removes the hook.
    proc = start_watch(pid, "watch __main__ add -n 1000000")
    kill_and_wait_for_no_hooks(profiler, pid, proc)


def test_watch_every_reference_and_the_code_restored(profiler, target, python):
    """Calls through references taken before the watch (a stored callback, a
    bound method, a functools.partial) are observed, a decorated function is
    observed in the function it wraps, a nested one with -nm; afterwards
    every code object is the original and no sys.monitoring tool id is held."""
    pid = target.pid
    recs = records(ok(profiler.cmd(pid, "watch __main__ hit -n 6 --expr args,kwargs,return_obj")))
    seen = set()
    for r in recs:
        x, via = re.match(r"^\((\d+), '(\w+)'\)$", r["args"]).groups()
        assert r["kwargs"] == "{}" and r["return_obj"] == "'%s'" % via
        seen.add(via)
    assert seen == {"callback", "partial"}, recs
    r = records(ok(profiler.cmd(pid, "watch __main__ Calc tick -n 1 --expr target,args")))[0]
    assert r["target"].startswith("<__main__.Calc object at ") and r["args"] == "('bound',)"
    recs = records(ok(profiler.cmd(pid, "watch __main__ decorated -n 2 --expr args,return_obj")))
    for r in recs:
        assert int(r["return_obj"]) == int(re.match(r"^\((\d+),\)$", r["args"]).group(1)) + 100
    out = ok(profiler.cmd(pid, "watch __main__ outer -nm inner -n 2 --expr args,return_obj"))
    assert out.startswith("Watching __main__.outer.inner (Ctrl-C to stop).\n"), out
    for r in records(out):
        assert r["args"] == "(1,)" and int(r["return_obj"]) > 1
        assert "__main__.outer.inner" in r["head"]
    assert "no function 'nope' is defined in outer" in \
        profiler.cmd(pid, "watch __main__ outer -nm nope").error_line()
    # Two watches of one function at once: both see its calls (the second
    # by the code-level mechanism, the slot being the first one's).
    proc = start_watch(pid, "watch __main__ add -n 1000000")
    assert len(records(ok(profiler.cmd(pid, "watch __main__ add -n 2")))) == 2
    assert hooks_left(profiler, pid) == observing(python, "add", slot=True)
    kill_and_wait_for_no_hooks(profiler, pid, proc)


def test_watch_leaves_the_programs_tool_ids_alone(profiler, launch, python):
    """3.12+: the program holds tool ids 0-4 (a debugger, coverage, its own
    profiler): a watch that needs sys.monitoring (--stack) takes the free
    one, 5, gives it back, and never touches the others; with all six
    taken it says so and observes nothing, while watch's common case,
    which needs no tool id, still works."""
    if python.version_info < (3, 12):
        pytest.skip("sys.monitoring is 3.12+")
    t = launch(WATCH_TARGET, python, env={"FP_TAKE_TOOLS": "0,1,2,3,4"})
    proc = start_watch(t.pid, "watch __main__ add -n 1000000 --stack")
    assert hooks_left(profiler, t.pid) == "['tool 5=flight_profiler']"
    proc.send_signal(signal.SIGINT)
    proc.communicate(timeout=10)
    assert hooks_left(profiler, t.pid) == "[]"
    ok(profiler.cmd(t.pid, 'execute "import sys; sys.monitoring.use_tool_id(5, \'late\')"'))
    err = profiler.cmd(t.pid, "watch __main__ add -n 1 --stack").error_line()
    assert "every sys.monitoring tool id is taken by other tools" in err, err
    assert len(records(ok(profiler.cmd(t.pid, "watch __main__ add -n 2")))) == 2
    assert hooks_left(profiler, t.pid) == "['tool 5=late']"   # the program's own
    assert ok(profiler.cmd(t.pid, 'execute "import sys; print(sys.monitoring.get_tool(5))"')) \
        == "late\n"


# Run inside the target by `execute`: does a call site of add() specialize
# to the interpreter's inlined call of a Python function (3.11+'s adaptive
# interpreter), as it did before any watch?  A fresh function each time, so
# no earlier deoptimization weighs on it.
SPECIALIZES = r'''
import dis, io, __main__
def call_site(f):
    for i in range(64):
        f(i, 1)
for _ in range(8):
    call_site(__main__.add)
text = io.StringIO()
dis.dis(call_site, adaptive=True, file=text)
print("CALL_PY_EXACT_ARGS" in text.getvalue())
'''


def test_watch_gives_back_the_inlined_call(profiler, target, python, tmp_path):
    """The call cost after a watch, as the interpreter sees it: a call site
    of the watched function specializes again.  3.12+ watches add through
    its vectorcall slot, which keeps call sites generic while watched; on
    3.13 a function whose version was cleared never specializes again
    unless the agent gives the version back (vcall.c)."""
    if python.version_info < (3, 11):
        pytest.skip("no adaptive interpreter before 3.11")
    probe = tmp_path / "specializes.py"
    probe.write_text(SPECIALIZES)
    os.chmod(str(tmp_path), 0o755)
    pid = target.pid
    specializes = 'execute %s' % probe
    assert ok(profiler.cmd(pid, specializes)) == "True\n"
    proc = start_watch(pid, "watch __main__ add -n 1000000")
    if python.version_info >= (3, 12):
        assert ok(profiler.cmd(pid, specializes)) == "False\n"
    proc.send_signal(signal.SIGINT)
    proc.communicate(timeout=10)
    assert hooks_left(profiler, pid) == "[]"
    assert ok(profiler.cmd(pid, specializes)) == "True\n"
