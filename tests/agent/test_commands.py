"""The inside-view commands against real processes, every configured
interpreter: getglobal, vmtool, module, execute, console, and what the
agent adds to stack.  The first command of each test loads the agent with
the real injector; after each test the target must be alive, untraced,
not stopped, its output unchanged, the agent mapped once."""

import os
import re
import subprocess
import time

from conftest import (BINARY, EXIT_OK, EXIT_OTHER, EXIT_USAGE, RUN_TIMEOUT, agent_dir,
                      agent_mappings, TARGET)


def ok(result):
    assert result.code == EXIT_OK, result.describe()
    return result.stdout


def failed(result, code=EXIT_OTHER):
    assert result.code == code, result.describe()
    return result.error_line()


def block(stdout):
    """{"EXPR": ..., "TYPE": ..., "VALUE": ...} of one EXPR/TYPE/VALUE block."""
    fields, key = {}, None
    for line in stdout.splitlines():
        m = re.match(r"^(EXPR|TYPE|VALUE|COUNT):\s*(.*)$", line)
        if m:
            key = m.group(1)
            fields[key] = m.group(2)
        elif key is not None:
            fields[key] += "\n" + line
    return fields


def run_input(pid, command, text, timeout=RUN_TIMEOUT):
    proc = subprocess.run([BINARY, str(pid), "--cmd", command], input=text.encode(),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
    return proc.returncode, proc.stdout.decode("utf-8"), proc.stderr.decode("utf-8")


# ---- getglobal ---------------------------------------------------------------

def test_getglobal_loads_once_and_reuses(python, agent_target, profiler):
    t = agent_target(python)
    assert not os.path.exists(agent_dir(t.pid))
    out = ok(profiler.cmd(t.pid, "getglobal __main__ G_NESTED"))
    b = block(out)
    assert b["EXPR"] == "__main__.G_NESTED"
    assert b["TYPE"] == "dict"
    assert b["VALUE"] == "{'a': <list, 3 items>, 'b': <tuple, 1 item>, 'c': 'text'}"
    st = os.stat(agent_dir(t.pid))
    assert st.st_mode & 0o777 == 0o700
    assert os.stat(os.path.join(agent_dir(t.pid), "agent.sock")).st_mode & 0o777 == 0o600
    # A second flight_profiler finds the running agent: same answer, no second load.
    assert ok(profiler.cmd(t.pid, "getglobal __main__ G_NESTED")) == out
    assert len(agent_mappings(t.pid)) == 1


def test_getglobal_depth_raw_verbose(python, agent_target, profiler):
    t = agent_target(python)
    b = block(ok(profiler.cmd(t.pid, "getglobal __main__ G_NESTED -x 3")))
    assert "{'deep': <list, 2 items>}" in b["VALUE"]
    b = block(ok(profiler.cmd(t.pid, "getglobal __main__ G_NESTED -x 4")))
    assert "'deep': [3, 4]" in b["VALUE"]
    b = block(ok(profiler.cmd(t.pid, "getglobal __main__ G_NESTED -r")))
    assert b["VALUE"] == repr({"a": [1, 2, {"deep": [3, 4]}], "b": (5,), "c": "text"})
    b = block(ok(profiler.cmd(t.pid, "getglobal __main__ G_LIST")))
    assert "... 15 more items" in b["VALUE"]
    assert "24" not in b["VALUE"]
    b = block(ok(profiler.cmd(t.pid, "getglobal __main__ G_LIST -v")))
    assert "24" in b["VALUE"]
    assert "more items" not in b["VALUE"]
    assert failed(profiler.cmd(t.pid, "getglobal __main__ G_LIST -x 9"), EXIT_USAGE).endswith(
        "getglobal: -x wants a depth from 0 to 4, not '9'")


def test_getglobal_class_fields_and_expressions(python, agent_target, profiler):
    t = agent_target(python)
    b = block(ok(profiler.cmd(t.pid, "getglobal __main__ Config settings")))
    assert (b["EXPR"], b["TYPE"], b["VALUE"]) == ("__main__.Config.settings", "dict",
                                                  "{'debug': True, 'level': 3}")
    b = block(ok(profiler.cmd(t.pid, "getglobal __main__ Config.Inner value")))
    assert b["VALUE"] == "'inner-value'"
    b = block(ok(profiler.cmd(t.pid, "getglobal __main__ Config settings -e \"target['level'] * 10\"")))
    assert (b["EXPR"], b["TYPE"], b["VALUE"]) == ("target['level'] * 10", "int", "30")
    b = block(ok(profiler.cmd(t.pid, "getglobal __main__ G_SLOTTED -x 1")))
    assert b["TYPE"] == "__main__.Slotted"
    assert "x=1" in b["VALUE"] and "__y=2" in b["VALUE"]


def test_getglobal_says_which_part_is_missing(python, agent_target, profiler):
    t = agent_target(python)
    assert failed(profiler.cmd(t.pid, "getglobal nosuchmod x")).endswith(
        "getglobal: module 'nosuchmod' is not imported in process %d" % t.pid)
    assert failed(profiler.cmd(t.pid, "getglobal __main__ Nope x")).endswith(
        "getglobal: class 'Nope' not found in module '__main__'")
    assert failed(profiler.cmd(t.pid, "getglobal __main__ Config nope")).endswith(
        "getglobal: field 'nope' not found in class 'Config' of module '__main__'")
    assert failed(profiler.cmd(t.pid, "getglobal __main__ nope")).endswith(
        "getglobal: field 'nope' not found in module '__main__'")
    assert "missing the field after module '__main__'" in failed(
        profiler.cmd(t.pid, "getglobal __main__"), EXIT_USAGE)
    assert "unknown option '--expnad': did you mean '--expand'?" in failed(
        profiler.cmd(t.pid, "getglobal __main__ G_LIST --expnad 2"), EXIT_USAGE)
    assert "did you mean 'getglobal'?" in failed(profiler.cmd(t.pid, "getglobl __main__ x"), EXIT_USAGE)


def test_expressions_that_raise(python, agent_target, profiler):
    t = agent_target(python)
    line = failed(profiler.cmd(t.pid, "getglobal __main__ Config settings -e target.nope"))
    assert "the expression raised AttributeError" in line and "nope" in line
    line = failed(profiler.cmd(t.pid, "getglobal __main__ Config settings -e 'target[[['"))
    assert "the expression is not valid Python: SyntaxError" in line
    line = failed(profiler.cmd(t.pid, "getglobal __main__ G_LIST -e '1/0'"))
    assert "ZeroDivisionError" in line
    # The application never saw any of it.
    assert ok(profiler.cmd(t.pid, "getglobal __main__ INTERRUPTED")).endswith("VALUE: False\n")


def test_awkward_values_are_bounded(python, agent_target, profiler):
    t = agent_target(python)
    b = block(ok(profiler.cmd(t.pid, "getglobal __main__ G_BAD")))
    assert b["VALUE"] == "<repr failed: ValueError: repr is broken>"
    b = block(ok(profiler.cmd(t.pid, "getglobal __main__ G_BAD_LIST")))
    assert b["VALUE"] == "[<repr failed: ValueError: repr is broken>, 1]"
    b = block(ok(profiler.cmd(t.pid, "getglobal __main__ G_RECURSIVE -x 4")))
    assert b["VALUE"].startswith("[1, 2, <recursive list at 0x")
    b = block(ok(profiler.cmd(t.pid, "getglobal __main__ G_RECURSIVE_DICT -x 4")))
    assert "'self': <recursive dict at 0x" in b["VALUE"]
    start = time.monotonic()
    r = profiler.cmd(t.pid, "getglobal __main__ G_HUGE")
    assert time.monotonic() - start < 5
    b = block(ok(r))
    assert "... 999990 more items" in b["VALUE"] and len(r.stdout) < 2000
    r = profiler.cmd(t.pid, "getglobal __main__ G_HUGE -v")
    assert ok(r) and len(r.stdout) < 16 << 20
    r = profiler.cmd(t.pid, "getglobal __main__ G_BIGSTR -r")
    assert len(ok(r)) < (2 << 20) and r.stdout.rstrip().endswith("...")
    b = block(ok(profiler.cmd(t.pid, "getglobal __main__ G_SURROGATE")))
    assert b["VALUE"] == "'caf\\udce9 \\udcff'"
    b = block(ok(profiler.cmd(t.pid, "getglobal __main__ G_UNICODE")))
    assert b["VALUE"] == "'h\u00e9llo w\u00f6rld \u2713'"


# ---- vmtool ------------------------------------------------------------------

def test_vmtool_get_instances(python, agent_target, profiler):
    t = agent_target(python)
    b = block(ok(profiler.cmd(t.pid, "vmtool -a getInstances -c __main__ Base")))
    assert b["COUNT"].startswith("3 instances (subclasses included), 3 shown")
    assert b["TYPE"] == "list"
    assert "<__main__.Child object at 0x" in b["VALUE"]
    b = block(ok(profiler.cmd(t.pid, "vmtool -a getInstances -c __main__ Base -x 2")))
    assert "__main__.Child(v=3, tag='t3')" in b["VALUE"]
    b = block(ok(profiler.cmd(t.pid, "vmtool -a getInstances -c __main__ Child -n 1")))
    assert b["COUNT"].startswith("1 instance ")
    b = block(ok(profiler.cmd(t.pid, "vmtool -a getInstances -c __main__ Base -n 1")))
    assert b["COUNT"].endswith("1 shown") and b["VALUE"].count("__main__.") == 1
    b = block(ok(profiler.cmd(t.pid, "vmtool -a getInstances -c __main__ Base -e 'sorted(i.v for i in instances)'")))
    assert b["VALUE"] == "[1, 2, 3]"
    assert "missing the class after module '__main__'" in failed(
        profiler.cmd(t.pid, "vmtool -a getInstances -c __main__"), EXIT_USAGE)
    assert "did you mean 'getInstances'?" in failed(
        profiler.cmd(t.pid, "vmtool -a getInstance -c __main__ Base"), EXIT_USAGE)
    assert "is not a class" in failed(profiler.cmd(t.pid, "vmtool -a getInstances -c __main__ G_LIST"),
                                      EXIT_USAGE)
    assert re.match(r"forceGc: the garbage collector found \d+ unreachable objects? \(\d+\.\d ms\)\n$",
                    ok(profiler.cmd(t.pid, "vmtool -a forceGc")))


# ---- module ------------------------------------------------------------------

def test_module(python, agent_target, profiler):
    t = agent_target(python)
    assert ok(profiler.cmd(t.pid, "module %s" % TARGET)) == "__main__\n"
    threading_py = subprocess.run([python.exe, "-c", "import threading; print(threading.__file__)"],
                                  stdout=subprocess.PIPE, check=True).stdout.decode().strip()
    assert ok(profiler.cmd(t.pid, "module %s" % threading_py)) == "threading\n"
    line = failed(profiler.cmd(t.pid, "module /no/such/file.py"))
    assert "'/no/such/file.py' is not imported in process %d" % t.pid in line


# ---- execute and console -----------------------------------------------------

def test_execute_output_and_traceback(python, agent_target, profiler, tmp_path):
    t = agent_target(python)
    r = profiler.cmd(t.pid, "execute 'import __main__; print(len(__main__.G_LIST)); print(\"h\\u00e9\")'")
    assert ok(r) == "25\nh\u00e9\n"
    r = profiler.cmd(t.pid, "execute 'x = 1\nprint(x)\n1/0'")
    assert r.code == EXIT_OTHER, r.describe()
    assert r.stdout.startswith("1\nTraceback (most recent call last):\n")
    assert r.stdout.endswith("ZeroDivisionError: division by zero\n")
    assert "helper" not in r.stdout and "flight_profiler agent" not in r.stdout
    assert r.error_line() == "flight_profiler: execute: ZeroDivisionError: division by zero"
    script = tmp_path / "script.py"
    script.write_text("import sys\nprint('from a file', file=sys.stderr)\nraise SystemExit(3)\n")
    r = profiler.cmd(t.pid, "execute %s" % script)
    assert r.stdout.startswith("from a file\nTraceback")
    assert "SystemExit: 3" in r.stdout and r.code == EXIT_OTHER
    # Non-UTF-8 output of the code arrives escaped, never as invalid bytes.
    r = profiler.cmd(t.pid, "execute 'import __main__; print(__main__.G_SURROGATE)'")
    assert ok(r) == "caf\\udce9 \\udcff\n"
    r = profiler.cmd(t.pid, "execute 'while True: pass' -t 1")
    assert r.code == EXIT_OTHER and "KeyboardInterrupt" in r.stdout, r.describe()
    assert ok(profiler.cmd(t.pid, "getglobal __main__ G_UNICODE"))
    assert "missing the file or the code" in failed(profiler.cmd(t.pid, "execute"), EXIT_USAGE)


def test_console_reads_statements_from_stdin(python, agent_target, profiler):
    t = agent_target(python)
    code, out, err = run_input(t.pid, "console", "x = 6\nx * 7\nfor i in range(2):\n    print(i)\n\n"
                               "import __main__\n__main__.Config.name\nundefined_name\nprint('after')\n")
    assert out.startswith("42\n0\n1\n'cfg'\nTraceback (most recent call last):\n"), out + err
    assert "NameError: name 'undefined_name' is not defined" in out
    assert out.endswith("after\n")
    assert code == EXIT_OTHER and err == "flight_profiler: console: 1 statement failed\n"
    code, out, err = run_input(t.pid, "console", "y = [1, 2]\ny\nexit()\nprint('never')\n")
    assert (code, out, err) == (0, "[1, 2]\n", "")
    # The console's names are its own: the program's globals are untouched.
    assert failed(profiler.cmd(t.pid, "getglobal __main__ x")).endswith("field 'x' not found in module '__main__'")


def test_console_blocks_end_as_in_a_script(python, agent_target, profiler):
    """Piped input has no blank line after a block: a line back at column 0
    ends it, except the else/except/finally that continue it; the whole body
    of a block runs once, not line by line."""
    t = agent_target(python)
    script = ("for i in range(2):\n    print('a', i)\n    print('b', i)\nprint('after')\n"
              "try:\n    1/0\nexcept ZeroDivisionError:\n    print('caught')\n"
              "@staticmethod\ndef f():\n    return 5\ntype(f).__name__\n")
    code, out, err = run_input(t.pid, "console", script)
    assert (code, err) == (0, ""), out + err
    assert out == "a 0\nb 0\na 1\nb 1\nafter\ncaught\n'staticmethod'\n", out


def test_capture_leaves_other_threads_prints_alone(python, agent_target, profiler):
    t = agent_target(python, allow_output=True, AGENT_TARGET_TICKS="1")
    r = profiler.cmd(t.pid, "execute 'import time\nfor i in range(5):\n    print(\"FROM-EXECUTE\", i)\n"
                     "    time.sleep(0.03)'")
    assert ok(r) == "".join("FROM-EXECUTE %d\n" % i for i in range(5))
    time.sleep(0.1)
    out, err = t.output()
    assert "FROM-EXECUTE" not in out and "tick" in out and err == ""
    ticks = [int(line.split()[1]) for line in out.splitlines()]
    assert ticks == list(range(1, len(ticks) + 1)), "the ticker's lines were lost or reordered"
    # sys.stdout is the program's own again.
    b = block(ok(profiler.cmd(t.pid, "getglobal sys stdout -r")))
    assert b["TYPE"] == "_io.TextIOWrapper", b


def test_never_returning_statement_blocks_nothing(python, agent_target, profiler):
    t = agent_target(python)
    ok(profiler.cmd(t.pid, "execute 'import __main__; __main__.COUNTER = 0'"))
    stuck = subprocess.Popen([BINARY, str(t.pid), "--cmd",
                              "execute 'import __main__\nwhile True:\n    __main__.COUNTER += 1'"],
                             stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)

    def counter():
        return int(block(ok(profiler.cmd(t.pid, "getglobal __main__ COUNTER")))["VALUE"])

    try:
        time.sleep(0.5)
        assert stuck.poll() is None
        start = time.monotonic()
        assert block(ok(profiler.cmd(t.pid, "getglobal __main__ Config name")))["VALUE"] == "'cfg'"
        assert time.monotonic() - start < 5
        assert counter() > 0
    finally:
        stuck.kill()   # SIGKILL mid-command: the agent interrupts what it ran for it
        stuck.wait()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        before = counter()
        time.sleep(0.3)
        if counter() == before:
            break
    else:
        raise AssertionError("the statement of the killed client was not interrupted")


# ---- stack -------------------------------------------------------------------

def test_stack_gains_names_locals_and_tasks(python, agent_target, profiler):
    t = agent_target(python)
    plain = profiler.stack_text(t.pid)
    # No agent yet: Python's names all the same, read from threading's registry.
    assert "(py-worker)" in plain and "(loop-thread)" in plain
    assert not agent_mappings(t.pid) and not os.path.exists(agent_dir(t.pid))
    text = profiler.stack_text(t.pid, "--locals")
    assert "(py-worker)" in text and "(loop-thread)" in text
    assert "        secret = 'locals-visible'\n        count = 42\n" in text
    # Once the agent is there, a plain stack names the threads too.
    assert "(py-worker)" in profiler.stack_text(t.pid)
    text = profiler.stack_text(t.pid, "-a")
    assert "Asyncio tasks of the event loop in thread" in text
    assert re.search(r"Task 'fp-task-a' sleeper\(\) \[pending\]", text), text
    assert re.search(r"Task 'fp-task-b' waiter\(\) \[pending\]", text), text
    assert 'line %d, in sleeper' % t.line("task-a") in text
    assert 'line %d, in waiter' % t.line("task-b") in text
