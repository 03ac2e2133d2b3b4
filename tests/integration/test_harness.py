"""The harness itself: the stack-output parser and the targets.  None of
these tests runs flight_profiler, so they tell a broken harness or target
apart from a broken binary."""

import os

import pytest

import stackdump
from conftest import TARGETS, marker_lines

SAMPLE = '''\
Process 4242: python3 threads.py
Python v3.12.1 (/root/.pyenv/versions/3.12.1/lib/libpython3.12.so.1.0)

Traceback for thread 4243 (worker-a) [Idle] (most recent call last):
    File "/usr/lib/python3.12/threading.py", line 1030, in Thread._bootstrap
        self._bootstrap_inner()
    File "/abs/path/threads.py", line 20, in run_a
        time.sleep(3600)  # @sleep

Traceback for thread 4242 (python 3 (main)) [Has the GIL] (most recent call last):
    File "<frozen importlib._bootstrap>", line 7, in <module>
'''

NATIVE_SAMPLE = '''\
Process 4242: python3 threads.py
Python v3.8.18 (/usr/bin/python3.8)

Traceback for thread 4243 (worker-a) [Waiting for the GIL] (most recent call last):
    (C) File "???", line 0, in clone3 (libc.so.6)
    (Python) File "/abs/path/threads.py", line 20, in run_a
        time.sleep(3600)  # @sleep
    (C) File "Python/ceval.c", line 1234, in _PyEval_EvalFrameDefault (libpython3.8.so.1.0)
    (C) File "???", line 0, in ??? (python3.8)

Traceback for thread 4244 (fp-ready) [Running] (most recent call last):
    (native frames unavailable: no unwind info)
    (Python) File "/abs/path/_fptarget.py", line 9, in announcer
    (stack cut short: stack deeper than 4096 frames: cut)
'''


def test_parser_reads_the_documented_format():
    dump = stackdump.parse(SAMPLE)
    assert (dump.pid, dump.command_line, dump.python_version) == (4242, "python3 threads.py", "3.12.1")
    worker = dump.thread(name="worker-a")
    assert (worker.tid, worker.status) == (4243, "Idle")
    assert [f.where for f in worker.frames] == [("Thread._bootstrap", 1030), ("run_a", 20)]
    assert worker.frames[-1].source == "time.sleep(3600)  # @sleep"
    main = dump.thread(tid=4242)
    assert (main.name, main.status) == ("python 3 (main)", "Has the GIL")
    assert main.frames[0].source is None
    assert not any(f.tagged for t in dump.threads for f in t.frames)


def test_parser_reads_native_frames():
    worker = stackdump.parse(NATIVE_SAMPLE).thread(tid=4243)
    assert worker.status == "Waiting for the GIL"
    assert [f.kind for f in worker.frames] == ["c", "py", "c", "c"]
    assert all(f.tagged for f in worker.frames)
    assert worker.frames[0].where == ("clone3", 0)
    assert worker.frames[0].module == "libc.so.6"
    assert worker.frames[1].source == "time.sleep(3600)  # @sleep"
    assert worker.frames[2].file == "Python/ceval.c"
    assert worker.frames[3].function == "???"
    assert not worker.notes
    other = stackdump.parse(NATIVE_SAMPLE).thread(name="fp-ready")
    assert other.notes == ["native frames unavailable: no unwind info",
                           "stack cut short: stack deeper than 4096 frames: cut"]
    assert [f.function for f in other.frames] == ["announcer"]


BROKEN_SAMPLES = {
    "empty": "",
    "no-pid": SAMPLE.replace("Process 4242:", "Process:"),
    "unknown-status": SAMPLE.replace("[Idle]", "[Sleeping]"),
    "no-blank-line": SAMPLE.replace("\n\nTraceback for thread 4242", "\nTraceback for thread 4242"),
    "frame-not-indented": SAMPLE.replace('    File "/abs', 'File "/abs'),
    "source-badly-indented": SAMPLE.replace("        time.sleep", "      time.sleep"),
    "two-source-lines": SAMPLE + "        one\n        two\n",
    "note-before-thread": SAMPLE.replace("\nTraceback for thread 4243", "    (a note)\nTraceback for thread 4243"),
}


@pytest.mark.parametrize("broken", BROKEN_SAMPLES.values(), ids=BROKEN_SAMPLES.keys())
def test_parser_rejects_other_formats(broken):
    with pytest.raises(stackdump.StackFormatError):
        stackdump.parse(broken)


def test_every_target_has_unique_markers():
    scripts = [name for name in os.listdir(TARGETS) if name.endswith(".py")]
    assert "threads.py" in scripts
    for name in scripts:
        marker_lines(os.path.join(TARGETS, name))  # asserts uniqueness


PARKING_TARGETS = {
    "threads": "threads.py",
    "recursion": "recursion.py",
    "unicode": "ünïcödé_目标.py",
    "gil_hog": "gil_hog.py",
    "idle": "idle.py",
}


@pytest.mark.parametrize("script", PARKING_TARGETS.values(), ids=PARKING_TARGETS.keys())
def test_target_gets_ready_and_stays(python, launch, script):
    target = launch(script, python)
    assert target.proc.poll() is None


def test_exiting_target_exits_by_itself(python, launch):
    launch("exits.py", python, expect_exit=True)


def test_demo_names_its_threads(python, launch):
    demo = launch("demo.py", python, allow_output=True)
    names = set()
    for tid in os.listdir("/proc/%d/task" % demo.pid):
        with open("/proc/%d/task/%s/comm" % (demo.pid, tid)) as f:
            names.add(f.read().strip())
    assert {"http-server", "http-client", "trainer", "loader", "heartbeat"} <= names
