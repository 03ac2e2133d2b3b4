"""`stack --native`: Python frames merged with the native (C) ones."""


def test_native_merges_c_frames_around_python_frames(python, launch, profiler):
    target = launch("threads.py", python)
    plain = profiler.stack(target.pid).thread(name="worker-a")
    native = profiler.stack(target.pid, "--native").thread(name="worker-a")
    assert all(f.tagged for f in native.frames), "every frame needs (Python) or (C)"

    def python_view(frames):
        return [(f.file, f.line, f.function, f.source) for f in frames]

    assert python_view(native.python_frames) == python_view(plain.python_frames)

    kinds = [f.kind for f in native.frames]
    first_py = kinds.index("py")
    last_py = len(kinds) - 1 - kinds[::-1].index("py")
    assert "c" in kinds[:first_py], "no C frame outside the Python ones (thread start)"
    assert "c" in kinds[last_py + 1:], "no C frame inside the last Python one (time.sleep)"

    # Each evaluation-loop C frame is replaced by the Python frames it ran:
    # none may be left over (a mismatch would print both stacks unmerged).
    symbols = [f.function for f in native.native_frames]
    assert not any(s.startswith("_PyEval_EvalFrameDefault") for s in symbols), \
        "an evaluation-loop frame was not merged: %s" % symbols
    assert "unmerged" not in profiler.stack_text(target.pid, "--native")
    # The sleeping thread is in the C implementation of time.sleep.
    inner = [f.function for f in native.frames[last_py + 1:]]
    assert any("sleep" in s for s in inner), inner


def test_native_does_not_break_epoll_waits(python, launch, profiler, tmp_path):
    """`stack --native` stops every thread; a thread in epoll_wait,
    epoll_pwait or epoll_pwait2 (through ctypes, as C code calls them: no
    EINTR retry) must not see EINTR for it, as it sees none for select or
    poll: the kernel returns EINTR from the epoll waits where others get a
    restart code, and the stop must not show."""
    log = tmp_path / "epoll.log"
    log.write_text("")
    target = launch("epoll_wait.py", python, env={"FP_EPOLL_LOG": str(log)})
    for _ in range(3):
        stack = profiler.stack(target.pid, "--native")
        names = [t.name for t in stack.threads]
        assert "ep-wait" in names and "ep-pwait" in names, names
    # Every wait the stops broke off would have failed at once.
    assert log.read_text() == "", "EINTR reached the program: %s" % log.read_text()
