"""Target of the fork tests: a single-threaded program that imports nothing
special and calls os.fork() from __main__ when told to, with warnings at
their defaults (so CPython 3.12+ would print its "multi-threaded, use of
fork()" DeprecationWarning on stderr if it found a thread of ours).

Driven through files in the folder $FORK_DIR, never by signals:
    fork        appears: fork ($FORK_MODE "thread": from a new thread;
                "multiprocessing": a Process of the "fork" start method;
                "tick": from inside a call of tick(), which main makes
                every 10 ms until then: a trace of tick is running then)
    child.pid   written by the child once it runs (VALUE is "child" there)
    stop-child  appears: the child exits (status 0)
    stop        appears: the parent reaps the child, writes child.status
                (the child's exit status) and exits 0
With FORK_HOOKS=1, hooks_left() says what a watch of add() (or a trace
of tick()) left, frame evaluator included.
Prints nothing.  Runs on CPython 3.8 and later.
"""

import os
import sys
import time

VALUE = "parent"
HERE = os.environ["FORK_DIR"]
MODE = os.environ.get("FORK_MODE", "main")


def add(a, b):
    """Nothing calls it: a watch of it is only its hooks."""
    return a + b


def tick():
    """One look for "fork" (FORK_MODE=tick): the fork, if it is there."""
    if os.path.exists(os.path.join(HERE, "fork")):
        return fork()
    time.sleep(0.01)
    return None


# FORK_HOOKS=1: the originals, for hooks_left() (the watch test only, so the
# other tests' program stays one that imports nothing special).
if os.environ.get("FORK_HOOKS"):
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                    "targets"))
    from _fptarget import hooks_snapshot, hooks_left as _hooks_left
    ORIGINALS = hooks_snapshot(globals(), ["add", "tick"])

    def hooks_left():
        return _hooks_left(globals(), ORIGINALS)


def wait_for(name):
    path = os.path.join(HERE, name)
    while not os.path.exists(path):
        time.sleep(0.01)  # @wait


def put(name, text):
    path = os.path.join(HERE, name)
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.rename(path + ".tmp", path)


def child():
    global VALUE
    VALUE = "child"
    put("child.pid", str(os.getpid()))
    wait_for("stop-child")


def fork():
    pid = os.fork()
    if pid == 0:
        child()
        os._exit(0)
    return pid


def main():
    fd = int(os.environ["FP_READY_FD"])
    os.write(fd, b"ready\n")
    os.close(fd)
    pid = None
    while MODE == "tick" and pid is None:
        pid = tick()
    if MODE != "tick":
        wait_for("fork")
    if MODE == "tick":
        pass
    elif MODE == "thread":
        import threading
        box = []
        t = threading.Thread(target=lambda: box.append(fork()), name="forker")
        t.start()
        t.join()
        pid = box[0]
    elif MODE == "multiprocessing":
        import multiprocessing
        process = multiprocessing.get_context("fork").Process(target=child)
        process.start()
        wait_for("stop")
        process.join()
        put("child.status", str(process.exitcode))
        return
    else:
        pid = fork()
    wait_for("stop")
    put("child.status", str(os.waitpid(pid, 0)[1]))


if __name__ == "__main__":
    main()
