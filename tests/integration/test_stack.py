"""`stack` read from outside the process (no agent), on every interpreter."""

import os
import time

# The threads of targets/threads.py: name -> (function, marker of its line).
WORKERS = {
    "worker-a": ("sleeper", "sleep"),
    "worker-b": ("waiter", "wait"),
    "worker-c": ("receiver", "recv"),
}


def innermost_in(thread, target):
    """The most recent frame of the thread that runs code of the target's file."""
    frames = thread.frames_in(target.path)
    assert frames, "thread %d (%s) shows no frame of %s: %s" % (
        thread.tid, thread.name, target.path, thread.frames)
    return frames[-1]


def test_header_and_one_block_per_thread(python, launch, profiler):
    target = launch("threads.py", python)
    dump = profiler.stack(target.pid)
    assert dump.pid == target.pid
    assert "threads.py" in dump.command_line
    assert dump.python_version == python.version
    tids = sorted(int(tid) for tid in os.listdir("/proc/%d/task" % target.pid))
    assert sorted(t.tid for t in dump.threads) == tids
    without_frames = [(t.name, t.status, t.notes) for t in dump.threads if not t.python_frames]
    assert not without_frames, "threads without Python frames"
    assert not any(t.notes for t in dump.threads), [t.notes for t in dump.threads]
    assert not any(f.tagged for t in dump.threads for f in t.frames), \
        "plain stack must not tag frames (Python)/(C)"


def test_named_threads_at_their_lines(python, launch, profiler):
    target = launch("threads.py", python)
    dump = profiler.stack(target.pid)
    for name, (function, marker) in WORKERS.items():
        frame = innermost_in(dump.thread(name=name), target)
        assert frame.where == (function, target.line(marker)), name
        assert frame.source == target.source(marker), name
    main = innermost_in(dump.thread(tid=target.pid), target)
    assert main.where == ("main_wait", target.line("main"))
    assert main.source == target.source("main")


def test_blocked_threads_are_idle(python, launch, profiler):
    target = launch("threads.py", python)
    dump = profiler.stack(target.pid)
    for name in ("worker-a", "worker-c"):  # in time.sleep, in socket.recv
        thread = dump.thread(name=name)
        marker = WORKERS[name][1]
        assert innermost_in(thread, target).line == target.line(marker), name
        assert thread.status == "Idle", name


def test_recursion_200_deep(python, launch, profiler):
    target = launch("recursion.py", python)
    frames = profiler.stack(target.pid).thread(tid=target.pid).frames_in(target.path)
    recursive = [f for f in frames if f.function == "recurse"]
    assert len(recursive) == 200
    assert frames[-200:] == recursive, "the recursive frames must be the innermost, in a row"
    assert [f.line for f in recursive] == \
        [target.line("recurse")] * 199 + [target.line("bottom")]


def test_non_ascii_file_and_function_names(python, launch, profiler):
    target = launch("ünïcödé_目标.py", python)
    thread = profiler.stack(target.pid).thread(tid=target.pid)
    frames = thread.frames_in(target.path)
    assert [f.where for f in frames[-2:]] == [
        ("función_λ", target.line("funcion")),
        (python.function_name("Ñandú.método_π"), target.line("metodo")),
    ]
    assert [f.source for f in frames[-2:]] == [target.source("funcion"), target.source("metodo")]


def test_gil_holder_in_a_long_c_call(python, launch, profiler):
    target = launch("gil_hog.py", python)
    # The hog says ready just before it enters the match: give it a moment.
    deadline = time.monotonic() + 10
    while True:
        dump = profiler.stack(target.pid)
        hog = dump.thread(name="gil-hog")
        frame = innermost_in(hog, target)
        if frame.line == target.line("regex") or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert frame.where == ("hog", target.line("regex"))
    assert hog.status == "Has the GIL"
    holders = [t.name for t in dump.threads if t.status == "Has the GIL"]
    assert holders == ["gil-hog"]


def test_stack_to_file(python, launch, profiler, tmp_path):
    target = launch("threads.py", python)
    path = tmp_path / "stack.txt"
    result = profiler.cmd(target.pid, "stack -f %s" % path)
    assert result.code == 0, result.describe()
    message = "Write stack to %s successfully!" % path
    assert result.stdout in (message, message + "\n"), result.describe()
    written = path.read_text(encoding="utf-8")
    assert written.rstrip("\n") == profiler.stack_text(target.pid).rstrip("\n")


def test_block_gives_the_same_stacks(python, launch, profiler):
    target = launch("threads.py", python)
    plain = profiler.stack(target.pid)
    blocked = profiler.stack(target.pid, "--block")
    assert blocked.threads == plain.threads
    # the launch fixture then checks that no thread was left stopped or traced


def test_busy_demo(python, launch, profiler):
    demo = launch("demo.py", python, allow_output=True)
    # Without --block the read races the running threads: a stack may come
    # out cut short (with a note saying so), but every thread is listed.
    names = {t.name for t in profiler.stack(demo.pid).threads}
    assert {"http-server", "http-client", "trainer", "loader", "heartbeat"} <= names
    # With --block the process stands still while read: whole stacks only.
    dump = profiler.stack(demo.pid, "--block")
    incomplete = [(t.name, t.status, t.notes) for t in dump.threads
                  if not t.python_frames or t.notes]
    assert not incomplete, "threads with no or cut-short stacks under --block"
