#!/usr/bin/python3
"""Headless tests of the real flight_profiler binary against real targets.

    tuitest.py screens    the TUI in tmux: golden screens, keys, resize,
                          themes, signals, target exit, terminal restored;
                          with the agent: locals, Python thread names,
                          completion of names, the console
    tuitest.py linemode   line mode and --cmd print the same text
    tuitest.py hostile    only the screens of a target whose names hold
                          terminal controls, on every interpreter
    tuitest.py mem        only the mem pane's scenario (mem VERSION...)
    tuitest.py streams    only the live-stream checks (execute in the
                          background, 200,000 lines); streams-all: on
                          every interpreter

Prints TAP for automake's tap-driver.sh (plan at the end).  Standard library
only; run with Debian's /usr/bin/python3.  make check sets FP_BINARY,
FP_PYTHONS, FP_SRCDIR and FP_BUILDDIR; run by hand from the build directory
it finds them.  FP_UPDATE_GOLDEN=1 rewrites the golden screens instead of
comparing (review the diff before committing them).

The screens run with TERM=screen-256color, LANG=C.UTF-8, a fixed size, in a
tmux server of their own (-L, -f /dev/null).  Every wait polls the screen
with a deadline; nothing sleeps a fixed time.  Before a screen is compared,
what changes from run to run is masked: pids and tids, CPU%, the target's
command line and temporary paths, addresses.
"""

import contextlib
import difflib
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
# Normalized: the ASan build's FP_SRCDIR is build-asan/.., and a target run
# by that path has co_filename with the "..", which abspath(__file__) has not.
SRC = os.path.realpath(os.environ.get("FP_SRCDIR") or os.path.dirname(os.path.dirname(HERE)))
BUILD = os.environ.get("FP_BUILDDIR") or os.getcwd()
BIN = os.environ.get("FP_BINARY") or os.path.join(BUILD, "flight_profiler")
PYTHONS = os.environ.get("FP_PYTHONS") or os.path.join(BUILD, "pythons.list")
GOLDEN = os.path.join(HERE, "golden")
UPDATE = os.environ.get("FP_UPDATE_GOLDEN") == "1"
TARGETS = os.path.join(SRC, "tests", "targets")
TERM = "screen-256color"
DEADLINE = 15.0
RUNNER_CANCEL_GRACE_S = 3  # core/runner.h's RUNNER_CANCEL_GRACE_MS


# ---- TAP --------------------------------------------------------------------

class Tap:
    def __init__(self):
        self.n = 0

    def ok(self, cond, name, why=None):
        self.n += 1
        print("%s %d - %s" % ("ok" if cond else "not ok", self.n, name.replace("#", "\\#")))
        if not cond and why:
            for line in str(why).rstrip("\n").split("\n"):
                print("# " + line)
        sys.stdout.flush()
        return cond

    def skip(self, name, why):
        self.n += 1
        print("ok %d - %s # SKIP %s" % (self.n, name, why))
        sys.stdout.flush()

    def diag(self, text):
        for line in str(text).rstrip("\n").split("\n"):
            print("# " + line)
        sys.stdout.flush()

    def done(self):
        print("1..%d" % self.n)
        sys.stdout.flush()


TAP = Tap()


def pythons():
    """(version, exe) of every configured interpreter."""
    out = []
    try:
        with open(PYTHONS) as f:
            for line in f:
                parts = line.split()
                if len(parts) >= 5:
                    out.append((parts[1], parts[4]))
    except OSError:
        pass
    return out


# ---- a target ---------------------------------------------------------------

class Target:
    """tests/targets/threads.py (or `script`) copied into `workdir` (a path
    of fixed length, so masking it keeps columns) and started; ready when it
    says so."""

    started = []

    def __init__(self, exe, workdir, script="threads.py", env=None, srcdir=TARGETS):
        shutil.copy(os.path.join(srcdir, script), workdir)
        shutil.copy(os.path.join(TARGETS, "_fptarget.py"), workdir)
        r, w = os.pipe()
        env = dict(os.environ, FP_READY_FD=str(w), PYTHONDONTWRITEBYTECODE="1", **(env or {}))
        self.proc = subprocess.Popen([exe, os.path.join(workdir, script)], cwd=workdir,
                                     env=env, pass_fds=(w,), stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        os.close(w)
        ready, closed = b"", False
        start = time.monotonic()
        while b"\n" not in ready and time.monotonic() < start + 30:
            rl, _, _ = select.select([r], [], [], 0.5)
            if rl:
                chunk = os.read(r, 64)
                if not chunk:
                    closed = True
                    break
                ready += chunk
        os.close(r)
        if not ready.startswith(b"ready"):
            waited = time.monotonic() - start
            alive = self.proc.poll() is None
            if alive:
                self.proc.kill()
            err = self.proc.stderr.read().decode(errors="replace")
            self.stop()
            raise RuntimeError("target %s %s did not become ready: after %.1f s %s, exit %s, "
                               "stderr: %r" % (exe, script, waited,
                                               "its ready pipe closed" if closed else "still waiting",
                                               "(killed by us)" if alive else self.proc.returncode,
                                               err))
        self.pid = self.proc.pid
        Target.started.append(self)     # torn_down stops it
        # An agent directory left by an earlier process of this pid is not ours.
        shutil.rmtree("/tmp/.flight_profiler-%d" % self.pid, ignore_errors=True)

    def tids(self):
        try:
            return sorted(int(t) for t in os.listdir("/proc/%d/task" % self.pid))
        except OSError:
            return []

    def stop(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        self.proc.stderr.close()


# ---- masking ----------------------------------------------------------------

STATES = r"(?:idle|running|has GIL|wait GIL|blocked|stopped|exiting|no OS thr)"
# Where the screens show a pid or a thread id: the header's "pid N", a
# message's "process N", the stack's title "( N )" and a thread row's first
# column.  Only there: a fresh machine gives small pids, and a pid masked by
# its value alone also masks the source pane's line number 350 or a
# "threading.py:355".
ID_AFTER = r"(\bpid|\bprocess|\(|^\u2502\u25b6?)"


def mask(screen, ids, workdir):
    out = []
    for line in screen.split("\n"):
        line = line.replace(workdir, "/tmp/fptui.XXXXXXXX")
        for i in sorted(ids, key=lambda v: -len(str(v))):
            line = re.sub(r"%s *\b%d\b *" % (ID_AFTER, i), r"\1 <ID> ", line)
        line = re.sub(r"(pid <ID> \S ).*?( \S CPython)", r"\1<CMD>\2", line)
        line = re.sub(r"(%s) +(?:-|\d+\.\d)(?= )" % STATES, r"\1 <CPU>", line)
        line = re.sub(r"0x[0-9a-f]{4,}", "0xADDR", line)
        line = re.sub(r"(flight_profiler agent )\d+\.\d+\.\d+\S*?(?=\))", r"\1<VER>", line)
        if "<ID>" in line:
            # the length of an id moves the borders and padding after it
            line = re.sub("\u2500{3,}", "\u2500" * 3, line)
            line = re.sub(" +\u2502$", " \u2502", line.rstrip())
            if not out:
                line = re.sub(" {2,}", "  ", line)
        out.append(line.rstrip())
    while out and out[-1] == "":
        out.pop()
    return "\n".join(out) + "\n"


def compare(name, screen):
    path = os.path.join(GOLDEN, name + ".txt")
    if UPDATE:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(screen)
        return TAP.ok(True, "screen %s (golden written)" % name)
    try:
        with open(path, encoding="utf-8") as f:
            want = f.read()
    except OSError:
        return TAP.ok(False, "screen %s" % name,
                      "no golden %s: run FP_UPDATE_GOLDEN=1 make check\n%s" % (path, screen))
    diff = "".join(difflib.unified_diff(want.splitlines(True), screen.splitlines(True),
                                        "golden/" + name, "screen"))
    return TAP.ok(not diff, "screen %s" % name, diff)


# ---- tmux -------------------------------------------------------------------

class Tmux:
    def __init__(self, cols, rows):
        self.sock = "fptui-%d-%d" % (os.getpid(), int(time.monotonic() * 1000) % 100000)
        self.env = dict(os.environ, LANG="C.UTF-8", LC_ALL="C.UTF-8")
        self.env.pop("TMUX", None)
        self.run("new-session", "-d", "-x", str(cols), "-y", str(rows), "env PS1='$ ' sh")
        self.run("set-option", "-g", "status", "off")
        self.run("set-option", "-g", "set-clipboard", "off")

    def run(self, *args):
        return subprocess.run(["tmux", "-u", "-L", self.sock, "-f", "/dev/null"] + list(args),
                              env=self.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              universal_newlines=True, timeout=30)

    def keys(self, *keys):
        self.run("send-keys", *keys)

    def type(self, text):
        self.run("send-keys", "-l", "--", text)

    def capture(self, escapes=False):
        return self.run("capture-pane", "-p", *(["-e"] if escapes else [])).stdout

    def alternate(self):
        return self.run("display-message", "-p", "#{alternate_on}").stdout.strip()

    def size(self):
        return self.run("display-message", "-p", "#{pane_width}x#{pane_height}").stdout.strip()

    def resize(self, cols, rows):
        self.run("resize-window", "-x", str(cols), "-y", str(rows))

    def kill(self):
        try:
            self.run("kill-server")
        except (OSError, subprocess.SubprocessError):
            pass


class Session:
    """flight_profiler running in a tmux pane's shell, with the terminal
    modes recorded before and after, and its exit status."""

    def __init__(self, tmux, target, workdir, extra="", ids=None, theme_path=True):
        self.tmux, self.target, self.workdir = tmux, target, workdir
        self.ids = ids if ids is not None else [target.pid] + target.tids()
        for name in ("pid", "rc", "before", "after", "sh"):
            try:
                os.unlink(self.file(name))
            except OSError:
                pass
        # A non-interactive sh runs it, so that the binary dying of SIGINT
        # does not abort the rest of the line as an interactive shell would.
        # theme_path=False: only what the binary has built in, as when it
        # runs from the build tree by hand.
        themes = ("FLIGHT_PROFILER_THEME_PATH=%s/themes" % SRC if theme_path
                  else "FLIGHT_PROFILER_THEME_PATH=")
        script = ("export TERM=%s LANG=C.UTF-8 XDG_STATE_HOME=%s/state XDG_CONFIG_HOME=%s/config "
                  "%s; unset NO_COLOR LC_ALL; "
                  "stty -a >%s; sh -c 'echo $$ >%s; exec %s -d 0.5 %s %d'; echo $? >%s.tmp; "
                  "stty -a >%s; mv %s.tmp %s; echo DONE"
                  % (TERM, workdir, workdir, themes, self.file("before"), self.file("pid"), BIN, extra,
                     target.pid, self.file("rc"), self.file("after"), self.file("rc"),
                     self.file("rc")))
        with open(self.file("sh"), "w") as f:
            f.write(script + "\n")
        cmd = "clear; sh %s" % self.file("sh")
        tmux.type(cmd)
        tmux.keys("Enter")

    def file(self, name):
        return os.path.join(self.workdir, "session." + name)

    def masked(self, screen=None):
        return mask(self.tmux.capture() if screen is None else screen, self.ids, self.workdir)

    def wait(self, pred, what, deadline=DEADLINE):
        """The masked screen once pred(screen) holds and it is steady."""
        end = time.monotonic() + deadline
        last = None
        while time.monotonic() < end:
            screen = self.masked()
            if pred(screen) and screen == last:
                return screen
            last = screen
            time.sleep(0.05)
        TAP.diag("timed out waiting for %s; the screen:\n%s" % (what, last))
        return None

    def pid(self):
        end = time.monotonic() + DEADLINE
        while time.monotonic() < end:
            try:
                with open(self.file("pid")) as f:
                    return int(f.read())
            except (OSError, ValueError):
                time.sleep(0.05)
        return None

    def finished(self):
        """(exit status, terminal modes unchanged) once the binary has exited."""
        end = time.monotonic() + DEADLINE
        while time.monotonic() < end:
            if os.path.exists(self.file("rc")):
                with open(self.file("rc")) as f:
                    rc = int(f.read().strip() or "-1")
                with open(self.file("before")) as f:
                    before = f.read()
                with open(self.file("after")) as f:
                    after = f.read()
                return rc, before == after, "\n".join(difflib.unified_diff(
                    before.splitlines(), after.splitlines(), "before", "after", lineterm=""))
            time.sleep(0.05)
        return None, False, "the binary did not exit"


def check_restored(s, name, want_rc):
    rc, same, diff = s.finished()
    TAP.ok(rc == want_rc, "%s: exit status %s" % (name, want_rc), "got %s" % rc)
    TAP.ok(same, "%s: terminal modes restored (stty -a)" % name, diff)
    TAP.ok(s.tmux.alternate() == "0", "%s: alternate screen left" % name)
    screen = s.tmux.capture()
    TAP.ok("Threads" not in screen and "DONE" in screen,
           "%s: the shell's screen is back" % name, screen)


# ---- the screens --------------------------------------------------------------

def has(*words):
    return lambda s: all(w in s for w in words)


def golden_run(exe, workdir, cols, rows, other):
    tag = "%dx%d" % (cols, rows)
    tmux = Tmux(cols, rows)
    with torn_down("%s: golden run" % tag, tmux):
        target = Target(exe, workdir)
        s = Session(tmux, target, workdir)
        steps = [
            ("01-open", [], has("Threads 5", "worker-c", "Stack")),
            ("02-move", ["j", "j"], has("Stack \u00b7 worker-b")),
            ("03-stack", ["Enter"], has("Enter Source")),
            ("04-source", ["Enter"], has("locals: press L to attach the agent")),
            ("05-back", ["Escape", "Escape"], has("Enter Stack")),
        ]
        for name, keys, pred in steps:
            if keys:
                s.tmux.keys(*keys)
            compare("%s/%s" % (tag, name), s.wait(pred, name) or "(timed out)\n")
        s.tmux.keys("/")
        s.tmux.type("receiver")
        s.tmux.keys("Enter")
        compare(tag + "/06-search", s.wait(has("Stack \u00b7 worker-c", "/receiver"), "search") or "")
        s.tmux.keys("n")
        TAP.ok(s.wait(has("Stack \u00b7 worker-c"), "n") is not None,
               "%s: n finds the only match again" % tag)
        s.tmux.keys("?")
        compare(tag + "/07-help", s.wait(has("Help ", "q or Esc closes", "Everywhere"), "help") or "")
        s.tmux.keys("Escape")
        s.wait(has("Enter Stack"), "help closed")
        tmux.resize(*other)
        compare(tag + "/08-resize", s.wait(
            lambda sc: has("Threads 5", "worker-c")(sc) and len(sc.split("\n")) >= other[1] - 2,
            "resize") or "")
        tmux.resize(30, 8)
        compare(tag + "/09-too-small", s.wait(has("terminal too small"), "too small") or "")
        tmux.resize(cols, rows)
        s.wait(has("Threads 5", "worker-c"), "size back")
        s.tmux.keys(":")
        s.tmux.type("theme monochrome")
        s.tmux.keys("Enter")
        compare(tag + "/10-theme", s.wait(has("theme monochrome"), "theme") or "")
        colours = tmux.capture(escapes=True)
        TAP.ok(re.search(r"\x1b\[[0-9;]*(?:38|48);5;", colours) is None and "\x1b[" in colours,
               "%s: monochrome has attributes and no colours" % tag, colours[:400])
        s.tmux.keys(":")
        s.tmux.type("theme default")
        s.tmux.keys("Enter")
        colours = ""
        if s.wait(has("theme default"), "default theme"):
            colours = tmux.capture(escapes=True)
        TAP.ok(re.search(r"\x1b\[[0-9;]*38;5;", colours) is not None,
               "%s: the default theme has 256 colours again" % tag, colours[:400])
        s.tmux.keys("q")
        check_restored(s, "%s quit" % tag, 0)
        check_target(target, "%s without the agent" % tag, False)


def more_keys(exe, workdir):
    """Sorting, filter, pause, maximise, native toggle, copy, save, a bad
    command, a bad theme line, the output pane: they work and never break
    the screen."""
    tmux = Tmux(100, 30)
    with torn_down("more keys", tmux):
        target = Target(exe, workdir)
        bad = os.path.join(workdir, "config", "flight_profiler", "themes")
        os.makedirs(bad, exist_ok=True)
        with open(os.path.join(bad, "broken.theme"), "w") as f:
            f.write("color title red blue\ncolor no.such red blue\ncolor bar white black\n")
        s = Session(tmux, target, workdir)
        s.wait(has("Threads 5", "worker-c"), "open")
        s.tmux.keys(">")
        TAP.ok(s.wait(has("sorted by NAME", "NAME\u25b2"), "sort") is not None, "> sorts by the next column")
        s.tmux.keys("I")
        sc = s.wait(has("reversed", "NAME\u25bc"), "invert")
        TAP.ok(sc is not None and sc.index("worker-c") < sc.index("worker-a"), "I inverts the order", sc)
        s.tmux.keys("\\")
        s.tmux.type("worker-[ab]")
        s.tmux.keys("Enter")
        sc = s.wait(has("Threads 2/5"), "filter")
        TAP.ok(sc is not None and "worker-c" not in sc, "\\ filters threads by a regex", sc)
        s.tmux.keys("\\")
        s.tmux.type("(")
        s.tmux.keys("Enter")
        TAP.ok(s.wait(has("bad filter at offset", "Threads 2/5"), "bad filter") is not None,
               "a bad regex is reported in the status line; the screen stays")
        s.tmux.keys("Escape")
        TAP.ok(s.wait(has("Threads 5", "filter cleared"), "clear filter") is not None, "Esc clears the filter")
        s.tmux.keys("Space")
        TAP.ok(s.wait(has("PAUSED"), "pause") is not None, "Space pauses")
        s.tmux.keys("Space")
        TAP.ok(s.wait(has("live 0.5s"), "resume") is not None, "Space resumes")
        s.tmux.keys("z")
        sc = s.wait(lambda x: "Threads 5" in x and "Stack \u00b7" not in x, "maximise")
        TAP.ok(sc is not None, "z maximises the focused pane", sc)
        s.tmux.keys("z")
        TAP.ok(s.wait(has("Threads 5", "Stack"), "restore") is not None, "z again restores the layout")
        s.tmux.keys("Tab")
        s.wait(has("x Native"), "focus stack")
        s.tmux.keys("x")
        sc = s.wait(has("native frames shown", "(C) "), "native")
        TAP.ok(sc is not None, "x shows native frames", sc)
        s.tmux.keys("x")
        TAP.ok(s.wait(has("native frames hidden"), "native off") is not None, "x hides them again")
        s.tmux.keys("y")
        TAP.ok(s.wait(has("copied", "OSC 52"), "copy") is not None, "y copies the stack")
        saved = os.path.join(workdir, "saved.txt")
        s.tmux.keys(":")
        s.tmux.type("save " + saved)
        s.tmux.keys("Enter")
        s.wait(has("wrote the stack"), "save")
        text = open(saved).read() if os.path.exists(saved) else ""
        TAP.ok(text.startswith("Traceback for thread") and "most recent call last" in text,
               ":save FILE writes the stack as text", text)
        s.tmux.keys(":")
        s.tmux.type("bogus")
        s.tmux.keys("Enter")
        TAP.ok(s.wait(has("unknown command 'bogus'", "Threads 5"), "bad command") is not None,
               "a bad command shows its error in the status line")
        s.tmux.keys(":")
        s.tmux.type("sta")
        s.tmux.keys("Tab")
        TAP.ok(s.wait(has(":stack\n"), "complete") is not None, "Tab completes a command name")
        s.tmux.type("--n")
        s.tmux.keys("Tab")
        TAP.ok(s.wait(has(":stack --native\n"), "complete option") is not None, "Tab completes an option")
        s.tmux.keys("C-u")
        s.tmux.type("help")
        s.tmux.keys("Enter")
        sc = s.wait(has("Output \u00b7 help", "Commands:"), "output")
        TAP.ok(sc is not None, "a command's text goes to the output pane", sc)
        s.tmux.keys("Escape")
        s.tmux.keys(":")
        s.tmux.keys("Up")
        TAP.ok(s.wait(has(":help"), "history") is not None, "Up recalls the last command")
        s.tmux.keys("Escape")
        hist = os.path.join(workdir, "state", "flight_profiler", "history")
        TAP.ok(os.path.exists(hist) and "help" in open(hist).read().split("\n"),
               "history is kept in $XDG_STATE_HOME/flight_profiler/history")
        s.tmux.keys(":")
        s.tmux.type("theme broken")
        s.tmux.keys("Enter")
        sc = s.wait(has("broken.theme:2: unknown element 'no.such'"), "bad theme")
        TAP.ok(sc is not None, "a bad theme line is reported as file:line: message", sc)
        colours = tmux.capture(escapes=True).split("\n")[0]
        TAP.ok("\x1b[31m" in colours or "\x1b[31;44m" in colours or "38;5;" not in colours,
               "the rest of the bad theme still loads (red title)", repr(colours[:200]))
        s.tmux.keys("C-c")
        check_restored(s, "Ctrl-C", 0)
        check_target(target, "more keys (native frames too)", False)


def signals(exe, workdir):
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGSEGV):
        tmux = Tmux(80, 24)
        with torn_down("signal %s" % sig.name, tmux):
            target = Target(exe, workdir)
            s = Session(tmux, target, workdir)
            s.wait(has("Threads 5", "worker-c"), "open")
            pid = s.pid()
            os.kill(pid, sig)
            check_restored(s, "killed by %s" % sig.name, 128 + sig)
            TAP.ok(target.proc.poll() is None, "%s: the target lives on" % sig.name)


def tt_pane(exe, workdir):
    """The tt pane (issue 10) on tests/agent/targets/tt_target.py: calls
    recorded from the command line are listed by :tt -l; Enter shows one
    in the output pane, p replays it after a y (the next index), d
    deletes it."""
    tmux = Tmux(140, 40)
    with torn_down("tt pane", tmux):
        target = Target(exe, workdir, os.path.join(SRC, "tests", "agent", "targets",
                                                   "tt_target.py"))
        run([BIN, str(target.proc.pid), "--cmd", "tt -t __main__ func -n 3"])
        s = Session(tmux, target, workdir)
        s.wait(has("Threads", "driver"), "open")

        def command(line):
            s.tmux.keys(":")
            s.tmux.type(line)
            s.tmux.keys("Enter")
        command("tt -l")
        sc = s.wait(has("tt: 3 records", "1002 "), "tt -l")
        TAP.ok(sc is not None and "__main__.func" in sc, "tt pane: :tt -l lists the records",
               tmux.capture())
        s.tmux.keys("Enter")
        sc = s.wait(has("Output \u00b7 tt -i 1000 -x 2", "return_obj"), "tt Enter")
        TAP.ok(sc is not None, "tt pane: Enter shows the record in the output pane", tmux.capture())
        command("tt -l")
        s.wait(has("tt: 3 records"), "tt -l again")
        s.tmux.keys("p")
        asked = s.wait(has("with the arguments of record 1000? [y/N]"), "tt p")
        s.tmux.keys("y")
        sc = s.wait(has("[1003] ", "replay of   1000"), "tt replay")
        TAP.ok(asked is not None and sc is not None,
               "tt pane: p asks, then replays record 1000 as 1003", tmux.capture())
        command("tt -l")
        s.wait(has("tt: 4 records"), "tt -l after replay")
        s.tmux.keys("d")
        command("tt -l")
        sc = s.wait(has("tt: 3 records", "1003 "), "tt d")
        TAP.ok(sc is not None and "1000 " not in sc.split("tt: 3 records")[1],
               "tt pane: d deletes the record under the cursor", tmux.capture())
        s.tmux.keys("q")


def target_exits(exe, workdir):
    tmux = Tmux(80, 24)
    with torn_down("target exit", tmux):
        target = Target(exe, workdir)
        s = Session(tmux, target, workdir)
        s.wait(has("Threads 5", "worker-c"), "open")
        target.proc.kill()
        compare("80x24/11-exited", s.wait(has("TARGET EXITED"), "target exit") or "")
        s.tmux.keys("j")
        TAP.ok(s.wait(has("TARGET EXITED", "Stack \u00b7 worker-a"), "move after exit") is not None,
               "the last snapshot can still be browsed")
        s.tmux.keys("q")
        check_restored(s, "after the target exited", 0)


def smoke(version, exe, workdir):
    tmux = Tmux(80, 24)
    with torn_down("CPython %s smoke" % version, tmux):
        target = Target(exe, workdir)
        s = Session(tmux, target, workdir)
        TAP.ok(s.wait(has("Threads 5", "worker-c", "CPython " + version), "open") is not None,
               "CPython %s: the TUI opens on the target" % version)
        s.tmux.keys("j", "Enter", "Enter")
        TAP.ok(s.wait(has("sleeper", "locals: press L to attach the agent", "time.sleep(3600)"), "source")
               is not None, "CPython %s: stack and source of worker-a" % version)
        s.tmux.keys("q")
        rc, same, diff = s.finished()
        TAP.ok(rc == 0 and same and tmux.alternate() == "0",
               "CPython %s: quit restores the terminal" % version, "rc %s\n%s" % (rc, diff))


# ---- the flame pane (issue 11) -------------------------------------------------

def flame_lines(screen):
    """The flame pane's part of the screen: from its title to its frame's end."""
    lines = screen.split("\n")
    start = next((i for i, l in enumerate(lines) if "Flame" in l and "\u250c" in l), None)
    if start is None:
        return []
    end = next((i for i in range(start + 1, len(lines)) if "\u2514" in lines[i]), len(lines))
    return lines[start:end + 1]


def flame_samples(screen):
    m = re.search(r"Hz of 100, [0-9.]+% errors, (\d+) samples", screen)
    return int(m.group(1)) if m else 0


def flame_share(screen, name):
    """X and Y of the status line's `name — N samples, X% of all, Y% of zoom`."""
    m = re.search(re.escape(name) + r"[^\n]* \u2014 \d+ samples, ([0-9.]+)% of all, "
                  r"([0-9.]+)% of zoom", screen)
    return (float(m.group(1)), float(m.group(2))) if m else None


def flame_open(s, samples, need="Flame"):
    """F, then the screen once the pane has `samples` and shows `need`
    (polled without waiting for a steady screen: a live one may never hold
    still); None if never."""
    s.tmux.keys("F")
    return live_wait(s, lambda x: flame_samples(x) >= samples and need in x, "flame pane")


def flame_save(s, out):
    """:save OUT (collapsed) in the flame pane; its lines."""
    s.tmux.keys(":")
    s.tmux.type("save " + out)
    s.tmux.keys("Enter")
    s.wait(has("wrote the flamegraph (collapsed)"), "save")
    return open(out).read().splitlines() if os.path.exists(out) else []


def flame(version, exe, workdir, full):
    """The flame pane on tests/targets/hot.py (a() does 70 % of the busy
    thread's work, b() 30 %): it opens with F, grows, shows the hot
    function with its share, zooms in and out, searches with the share
    matched, freezes, shows the top table, saves collapsed stacks."""
    tmux = Tmux(160, 48)
    name = "CPython %s flame" % version
    with torn_down(name, tmux):
        target = Target(exe, workdir, "hot.py", env={"FP_HOT": "split"})
        s = Session(tmux, target, workdir)
        if s.wait(has("Threads 2", "busy"), "open") is None:
            TAP.ok(False, "%s: the TUI opens on hot.py" % name)
            return
        screen = flame_open(s, 300, "work (hot.py)")
        TAP.ok(screen is not None and "Flame \u2014 all threads" in screen,
               "%s: F opens the live flamegraph, which grows to 300 samples" % name, screen)
        # frozen from here on, so that every wait sees a steady screen
        s.tmux.keys("z")
        frozen = s.wait(has("frozen: z resumes"), "frozen")
        time.sleep(1.2)     # two refreshes: a frozen view must not change
        later = s.masked()
        TAP.ok(frozen is not None and flame_lines(frozen) == flame_lines(later),
               "%s: z freezes: the flame pane does not change" % name,
               "\n".join(flame_lines(frozen or "")) + "\n---\n" + "\n".join(flame_lines(later)))
        # down the widest children: all, the thread's frames, busy, a, work
        s.tmux.keys(*["Down"] * 9)
        screen = s.wait(lambda x: flame_share(x, "work (") is not None, "status")
        share = flame_share(screen or "", "work (")
        TAP.ok(share is not None and 60 <= share[0] <= 80 and share[0] == share[1],
               "%s: the status line shows work() under a() at 70%% of all and of zoom" % name,
               "%s\n%s" % (share, screen))
        s.tmux.keys("Enter")
        screen = s.wait(has("zoom: work ("), "zoom")
        share = flame_share(screen or "", "work (")
        TAP.ok(share is not None and share[1] == 100.0,
               "%s: Enter zooms into work(): the title says so, 100%% of zoom" % name, screen)
        s.tmux.keys("Escape")
        # 3.8-3.10 have no qualified names: a() is "a" there
        screen = s.wait(lambda x: re.search(r"zoom: (make_ab\.<locals>\.)?a \(", x), "zoom out")
        TAP.ok(screen is not None, "%s: Esc zooms out one level, to a()" % name, screen)
        for _ in range(12):     # out to the root, one level a time (one more closes)
            if screen is None or "zoom: " not in screen:
                break
            title = flame_lines(screen)[0]
            s.tmux.keys("Escape")
            screen = s.wait(lambda x: flame_lines(x)[:1] != [title], "zoom out")
        TAP.ok(screen is not None and "Flame \u2014 all threads \u2500" in screen,
               "%s: Esc after Esc zooms out to the root, the pane still open" % name, screen)
        s.tmux.keys("/")
        s.tmux.type(r"(^|\.)b \(")
        s.tmux.keys("Enter")
        screen = s.wait(lambda x: re.search(r"matches cover ([0-9.]+)%", x) is not None, "search")
        m = re.search(r"matches cover ([0-9.]+)% of the zoom", screen or "")
        TAP.ok(m is not None and 20 <= float(m.group(1)) <= 40,
               "%s: / finds b() and shows the 30%% share its frames cover" % name, screen)
        s.tmux.keys("Escape")
        if full:
            s.tmux.keys("t")
            screen = s.wait(has("OWN%", "TOTAL%", "sorted by own %"), "top")
            row = re.search(r"([0-9.]+)%\s+([0-9.]+)%\s+\S+\s+\S+\s+work \(", screen or "")
            TAP.ok(row is not None and float(row.group(1)) >= 90,
                   "%s: t shows the top table, work() first with its own share" % name, screen)
            s.tmux.keys(">")
            TAP.ok(s.wait(has("sorted by total %"), "sort") is not None,
                   "%s: > sorts the top table by the next column" % name)
            s.tmux.keys("t")
        lines = flame_save(s, os.path.join(workdir, "flame.collapsed"))
        counts = {}
        good = lines and all(re.match(r"^\S.* \d+$", l) for l in lines)
        for l in lines:
            stack, n = l.rsplit(" ", 1)
            leaf = stack.split(";")[-1].split(" (")[0]
            counts[leaf] = counts.get(leaf, 0) + int(n)
        total = sum(counts.values()) or 1
        TAP.ok(good and 0.6 <= counts.get("work", 0) / total and
               any(re.search(r";(make_ab\.<locals>\.)?a \(", l) for l in lines),
               "%s: :save FILE.collapsed writes valid collapsed stacks, work() hot" % name,
               "\n".join(lines[:10]))
        before = flame_samples(s.masked())
        s.tmux.keys("z")
        TAP.ok(s.wait(lambda x: flame_samples(x) > before + 20, "thawed") is not None,
               "%s: z again: sampling goes on, the graph grows" % name)
        if full:
            s.tmux.keys("?", "/")
            s.tmux.type("Flame pane")     # a PCRE2 pattern: no parentheses
            s.tmux.keys("Enter")
            screen = s.wait(has("Flame pane (F)", "freeze"), "help")
            TAP.ok(screen is not None,
                   "%s: ? lists the flame pane's keys" % name, screen)
            s.tmux.keys("Escape")
        s.tmux.keys("q")
        check_restored(s, name, 0)
        check_target(target, name, False)


def flame_modes(version, exe, workdir):
    """The flame pane's header and modes (issue 11): with three threads
    fighting for the GIL, each shows a share waiting for it (the sampler
    reads no /proc for its snapshots: waiting is asked of each non-holder
    separately); m switches wall -> cpu -> gil, the header says which, and
    in gil mode the thread that hashes without the GIL drops out."""
    name = "CPython %s flame modes" % version
    for mode in ("threads", "gil"):
        tmux = Tmux(160, 48)
        with torn_down(name, tmux):
            target = Target(exe, workdir, "hot.py", env={"FP_HOT": mode})
            s = Session(tmux, target, workdir)
            if s.wait(has("Threads"), "open") is None:
                TAP.ok(False, "%s: the TUI opens on hot.py %s" % (name, mode))
                continue
            screen = flame_open(s, 300)
            if mode == "threads":
                waits = [float(w) for w in
                         re.findall(r"busy-\d[^\n]*wait\s+([0-9.]+)%", screen or "")]
                TAP.ok(len(waits) == 3 and sum(1 for w in waits if w >= 5) >= 2 and
                       "mode wall" in (screen or ""),
                       "%s: three busy threads each show a GIL-waiting share" % name, screen)
            else:
                s.tmux.keys("m")
                cpu = s.wait(has("mode cpu", "on-CPU samples only"), "mode cpu")
                s.tmux.keys("m")
                gil = s.wait(has("mode gil", "holding the GIL only"), "mode gil")
                TAP.ok(cpu is not None and gil is not None,
                       "%s: m switches the flame pane to cpu, then gil mode" % name, gil or cpu)
                before = flame_samples(s.masked())
                s.wait(lambda x: flame_samples(x) > before + 200, "gil samples")
                lines = flame_save(s, os.path.join(workdir, "modes.collapsed"))
                total = sum(int(l.rsplit(" ", 1)[1]) for l in lines) or 1
                hashing = sum(int(l.rsplit(" ", 1)[1]) for l in lines if ";nogil (" in l)
                TAP.ok(lines and hashing <= 0.1 * total,
                       "%s: gil mode keeps the GIL holder, not the thread hashing "
                       "without it (%d of %d)" % (name, hashing, total), "\n".join(lines[:10]))
            s.tmux.keys("q")
            check_restored(s, name, 0)
            check_target(target, name, False)


def names_smoke(version, exe, workdir):
    """Threads named only in Python (pynames.py): the threads pane and the
    title bar's GIL holder show their names, and the agent stays out."""
    tmux = Tmux(120, 30)
    name = "CPython %s Python-only names" % version
    with torn_down(name, tmux):
        target = Target(exe, workdir, "pynames.py")
        s = Session(tmux, target, workdir)
        TAP.ok(s.wait(has("\u0437\u0430\u0433\u0440\u0443\u0437\u0447\u0438\u043a-1",
                          "\u6570\u636e", "caf\u00e9-\u00fc", "after-rename", "Dummy-1",
                          "MainThread",
                          "GIL: \u0434\u0435\u0440\u0436\u0430\u0442\u0435\u043b\u044c-GIL"),
                      "names") is not None,
               "%s: the threads pane and the GIL holder show them" % name)
        s.tmux.keys("q")
        rc, same, diff = s.finished()
        TAP.ok(rc == 0 and same, "%s: quit restores the terminal" % name,
               "rc %s\n%s" % (rc, diff))
        check_target(target, name, False)
        TAP.ok(not os.path.exists("/tmp/.flight_profiler-%d" % target.pid),
               "%s: no agent directory" % name)


# ---- with the agent -----------------------------------------------------------

def agent_libraries(pid):
    """The distinct fpagent libraries mapped in the process."""
    found = set()
    try:
        with open("/proc/%d/maps" % pid) as f:
            for line in f:
                m = re.search(r"(/\S*fpagent-cp\d+\.so)", line)
                if m:
                    found.add(m.group(1))
    except OSError:
        pass
    return found


def check_target(target, name, agent):
    """After a test: the target runs on, nobody traces it, no thread is
    stopped, and the agent is mapped once (or not at all)."""
    pid = target.pid
    why = []
    if target.proc.poll() is not None:
        why.append("the target exited with %s" % target.proc.returncode)
    else:
        with open("/proc/%d/status" % pid) as f:
            status = f.read()
        tracer = re.search(r"TracerPid:\s+(\d+)", status)
        if tracer is None or tracer.group(1) != "0":
            why.append("traced: %s" % (tracer.group(0) if tracer else "no TracerPid"))
        for tid in target.tids():
            try:
                with open("/proc/%d/task/%d/stat" % (pid, tid)) as f:
                    state = f.read().rsplit(")", 1)[1].split()[0]
            except (OSError, IndexError):
                continue
            if state in ("t", "T"):
                why.append("thread %d is stopped (%s)" % (tid, state))
        libs = agent_libraries(pid)
        if len(libs) != (1 if agent else 0):
            why.append("agent libraries mapped: %s" % (sorted(libs) or "none"))
    TAP.ok(not why, "%s: the target runs on, untraced, not stopped, agent mapped %s" % (
        name, "once" if agent else "never"), "\n".join(why))


def console_open(s):
    """c, and y if the agent is not loaded yet: the console's prompt (the
    masked screen, or None)."""
    s.tmux.keys("c")
    sc = s.wait(lambda x: "[y/N]" in x or ">>>" in x, "console or the question")
    if sc and "[y/N]" in sc:
        s.tmux.keys("y")
    return s.wait(has(">>>", "Console \u00b7", "console inside process"), "console")


def console_line(text):
    """A console pane line that is exactly `text` (masked screens)."""
    return lambda sc: re.search("^\u2502%s *\u2502$" % re.escape(text), sc, re.M) is not None


def agent_run(exe, workdir, cols, rows):
    """Locals after L in the source view, Python thread names, completion
    of module and global names, the console: golden screens on the
    CPython the goldens are made with."""
    tag = "%dx%d" % (cols, rows)
    tmux = Tmux(cols, rows)
    with torn_down("%s: agent run" % tag, tmux):
        target = Target(exe, workdir)
        s = Session(tmux, target, workdir)
        s.wait(has("Threads 5", "worker-c", "agent \u25cb"), "open")
        TAP.ok(not agent_libraries(target.pid), "%s: the TUI does not load the agent by itself" % tag)
        s.tmux.keys("j", "j", "Enter", "Enter")
        TAP.ok(s.wait(has("Condition.wait", "locals: press L to attach the agent"), "source")
               is not None, "%s: without the agent, the source view says L attaches it" % tag)
        s.tmux.keys("L")
        s.wait(has("[y/N]"), "load question")
        s.tmux.keys("y")
        # worker-a (nanosleep) may be the thread the load just ran: as
        # for 13-names below, wait for the refresh that shows it idle.
        compare(tag + "/12-locals", s.wait(
            lambda sc: has("agent \u25cf", "Locals \u00b7 Condition.wait", "waiter",
                           "saved_state", "Threads 5", "GIL: none")(sc)
            and ("worker-a" not in sc or "worker-a        idle" in sc),
            "locals") or "(timed out)\n")
        s.tmux.keys("Escape", "Escape")
        # worker-a sleeps in nanosleep, where loading the agent may have run
        # it a moment ago: wait for the refresh that shows it idle again.
        compare(tag + "/13-names", s.wait(has("Threads 5", "GIL: none", "MainThread", "Enter Stack",
                                              "Stack \u00b7 worker-b", "worker-a        idle"),
                                          "names") or "(timed out)\n")
        s.tmux.keys(":")
        s.tmux.type("getglobal thr")
        s.tmux.keys("Tab")
        compare(tag + "/14-complete", s.wait(has("Threads 5", "GIL: none", ":getglobal threading\n"),
                                             "complete a module")
                or "(timed out)\n")
        s.tmux.type("Ev")
        s.tmux.keys("Tab")
        TAP.ok(s.wait(has(":getglobal threading Event\n"), "complete a class") is not None,
               "%s: Tab completes a name in a module" % tag)
        s.tmux.keys("C-u")
        s.tmux.type("vmtool -a getInstances -c threading Ev")
        s.tmux.keys("Tab")
        TAP.ok(s.wait(has(":vmtool -a getInstances -c threading Event\n"), "complete vmtool")
               is not None, "%s: Tab completes a class after vmtool -c" % tag)
        s.tmux.keys("C-u")
        s.tmux.type("getglobal nosuchmodule x")
        s.tmux.keys("Tab")
        TAP.ok(s.wait(has("no module 'nosuchmodule' is imported"), "complete nothing") is not None,
               "%s: completing in a module that is not imported says so" % tag)
        s.tmux.keys("Escape")
        s.tmux.keys("c")
        s.wait(has(">>>", "console inside process"), "console")
        s.tmux.type("print(6*7)")
        s.tmux.keys("Enter")
        compare(tag + "/15-console", s.wait(lambda sc: console_line("42")(sc) and
                                            has("Threads 5", "GIL: none")(sc),
                                            "console output") or "(timed out)\n")
        # As in Python's own console, a compound statement runs after a blank line.
        s.tmux.type("while True: pass")
        s.tmux.keys("Enter")
        s.tmux.keys("Enter")
        TAP.ok(s.wait(has("running (Ctrl-C interrupts)"), "statement running") is not None,
               "%s: a running statement shows in the console's title" % tag)
        s.tmux.keys("C-c")
        TAP.ok(s.wait(console_line("KeyboardInterrupt"), "interrupted") is not None,
               "%s: Ctrl-C interrupts the statement, the console stays" % tag)
        s.tmux.type("1/0")
        s.tmux.keys("Enter")
        TAP.ok(s.wait(console_line("ZeroDivisionError: division by zero"), "traceback") is not None,
               "%s: an exception shows its traceback" % tag)
        s.tmux.keys("Escape")
        TAP.ok(s.wait(has("left the console", "agent \u25cf"), "leave") is not None,
               "%s: Esc leaves the console; the agent stays attached" % tag)
        s.tmux.keys("q")
        check_restored(s, "%s with the agent" % tag, 0)
        check_target(target, "%s with the agent" % tag, True)


def agent_smoke(version, exe, workdir):
    """The console round trip and Python thread names on one interpreter."""
    tmux = Tmux(80, 24)
    with torn_down("CPython %s console smoke" % version, tmux):
        target = Target(exe, workdir)
        s = Session(tmux, target, workdir)
        s.wait(has("Threads 5", "worker-c"), "open")
        s.tmux.keys("c")
        s.wait(has("[y/N]"), "load question")
        s.tmux.keys("y")
        TAP.ok(s.wait(has("Python %s console" % version, ">>>"), "console") is not None,
               "CPython %s: c opens the console (the agent loads)" % version)
        s.tmux.type("print(6*7)")
        s.tmux.keys("Enter")
        TAP.ok(s.wait(console_line("42"), "console output") is not None,
               "CPython %s: print(6*7) in the console shows 42" % version)
        s.tmux.keys("Escape")
        TAP.ok(s.wait(has("left the console", "MainThread", "agent \u25cf"), "names") is not None,
               "CPython %s: the threads pane shows Python thread names" % version)
        s.tmux.keys("q")
        rc, same, diff = s.finished()
        TAP.ok(rc == 0 and same and tmux.alternate() == "0",
               "CPython %s: quit with the agent restores the terminal" % version,
               "rc %s\n%s" % (rc, diff))
        check_target(target, "CPython %s console" % version, True)


def py_only(version):
    """What the trace pane's title adds where trace records with the frame
    evaluator (3.10+): builtins are not in the tree."""
    return ", Python calls only" if tuple(int(x) for x in version.split(".")[:2]) >= (3, 10) else ""


def trace_pane(version, exe, workdir):
    """:trace on tests/targets/hot.py's work(): the trace pane opens with
    the traced calls, each a line of 100 % with its cost; Enter on a call
    folds it (work() has no callees: nothing to fold, the line stays);
    the pane's title says when the trace is done and the hooks removed."""
    tmux = Tmux(120, 40)
    name = "CPython %s trace pane" % version
    with torn_down(name, tmux):
        target = Target(exe, workdir, "hot.py", env={"FP_HOT": "split"})
        s = Session(tmux, target, workdir)
        s.wait(has("Threads 2", "busy"), "open")
        s.tmux.keys(":")
        s.tmux.type("trace __main__ work -n 3 -i 0")
        s.tmux.keys("Enter")
        sc = s.wait(lambda sc: "[y/N]" in sc or "done after 3 calls" in sc, "trace or question")
        if sc is not None and "[y/N]" in sc:
            s.tmux.keys("y")
            sc = s.wait(has("done after 3 calls"), "trace")
        # Calls beyond the three shown may be dropped (said in the title);
        # 3.10+ trace with the frame evaluator, which the title says.
        TAP.ok(sc is not None and re.search(r"Trace \u00b7 __main__\.work \u00b7 3 calls%s "
                                            r"\(done after 3 calls(, some dropped)?\)"
                                            % py_only(version), sc)
               and len(re.findall(r"\[100\.0% +[\d.]+(?:ms|us)\] work", sc)) == 3,
               "%s: :trace fills the trace pane with 3 calls of work, then says it is done" % name,
               tmux.capture())
        s.tmux.keys("q")
        check_target(target, name, True)


def trace_background(version, exe, workdir):
    """:trace runs in the TUI's background.  On watch_target.py's
    on_demand(), which nothing calls, the trace pane says it waits for a
    call; meanwhile a : command answers in the output pane and the console
    opens; a call made from the console shows its tree in the pane; Esc
    stops the trace, closes the pane, and the target keeps no hook."""
    name = "CPython %s trace in the background" % version
    waiting = ("Trace \u00b7 __main__.on_demand \u00b7 0 calls%s \u00b7 waiting for a call (q stops)"
               % py_only(version))
    with watch_target_tui(exe, workdir, name) as (target, s, tmux):
        tui_command(s, "trace __main__ on_demand -i 0")
        sc = s.wait(lambda x: "[y/N]" in x or waiting in x, "the trace or the question")
        if sc is not None and "[y/N]" in sc:
            s.tmux.keys("y")
        TAP.ok(s.wait(has(waiting), "waiting") is not None,
               "%s: the trace pane says it waits for a call" % name, tmux.capture())
        tui_command(s, "getglobal __main__ TAKEN")
        sc = s.wait(has(":getglobal __main__ TAKEN", "TYPE:  list"), "getglobal answer")
        TAP.ok(sc is not None and "Trace \u00b7" not in sc,
               "%s: while the trace waits, :getglobal answers in the output pane" % name,
               tmux.capture())
        s.tmux.keys("Escape")
        s.wait(has(waiting), "the trace pane back")
        TAP.ok(console_open(s) is not None,
               "%s: the console opens while the trace waits" % name, tmux.capture())
        s.tmux.type("print(__import__('__main__').on_demand(20))")
        s.tmux.keys("Enter")
        TAP.ok(s.wait(console_line("21"), "the call's result") is not None,
               "%s: a call from the console runs while the trace waits" % name, tmux.capture())
        s.tmux.keys("Escape")
        sc = s.wait(has("left the console", "on_demand \u00b7 1 call%s \u00b7 running (q stops)"
                        % py_only(version)), "the traced call")
        TAP.ok(sc is not None and re.search(r"\[100\.0% +[\d.]+(?:ms|us)\] on_demand", sc)
               and re.search(r"\[ *[\d.]+% +[\d.]+(?:ms|us)\] add", sc),
               "%s: the call made from the console shows its tree" % name, tmux.capture())
        s.tmux.keys("Escape")
        sc = s.wait(lambda x: "Trace \u00b7" not in x and "trace: stopped after 1 call" in x,
                    "Esc")
        TAP.ok(sc is not None and "the hooks are removed" in sc,
               "%s: Esc stops the trace and closes the pane" % name, tmux.capture())
        left = hooks_left(target)
        TAP.ok(left == "[]", "%s: no hook is left in the target" % name, left)


def live_wait(s, pred, what, deadline=DEADLINE):
    """The masked screen once pred(screen) holds, steady or not (a live
    watch changes the screen all the time). It must hold on two captures
    in a row: tmux can be captured in the middle of a redraw (the pane's
    title already new, its rows still old), and a torn screen does not
    last."""
    end = time.monotonic() + deadline
    screen = None
    held = 0
    while time.monotonic() < end:
        screen = s.masked()
        held = held + 1 if pred(screen) else 0
        if held == 2:
            return screen
        time.sleep(0.05)
    TAP.diag("timed out waiting for %s; the screen:\n%s" % (what, screen))
    return None


def hooks_left(target):
    """What tests/agent/targets/watch_target.py says an observation left
    behind ("[]": nothing), asked from another client."""
    rc, out, err = run([BIN, str(target.pid), "--cmd",
                        'execute "import __main__; print(__main__.hooks_left())"'])
    return out.decode(errors="replace").strip() if rc == 0 else "rc %d: %s" % (
        rc, err.decode(errors="replace"))


def tui_command(s, line, load=False):
    """:line; load: it loads the agent, so the TUI asks first: y.  True
    when it asked (or was not to)."""
    s.tmux.keys(":")
    s.tmux.type(line)
    s.tmux.keys("Enter")
    if not load:
        return True
    asked = s.wait(has("[y/N]"), "the question before loading the agent") is not None
    if asked:
        s.tmux.keys("y")
    return asked


@contextlib.contextmanager
def watch_target_tui(exe, workdir, name, alive=True):
    """(target, session, tmux) on tests/agent/targets/watch_target.py, in a
    160x40 terminal; afterwards (alive: the target should be) q quits and
    the target is checked."""
    tmux = Tmux(160, 40)
    with torn_down(name, tmux):
        target = Target(exe, workdir, os.path.join(SRC, "tests", "agent", "targets",
                                                   "watch_target.py"))
        s = Session(tmux, target, workdir)
        s.wait(has("Threads", "driver"), "open")
        yield target, s, tmux
        if alive:
            s.tmux.keys("q")
            rc = s.finished()[0]
            TAP.ok(rc == 0, "%s: flight_profiler quits with status 0" % name, "got %s" % rc)
            check_target(target, name, True)


WATCH_SEEN = re.compile(r"Watch \u00b7 __main__\.add \u00b7 (\d+) seen")
WATCH_ADD = re.compile(r"__main__\.add +args=\((\d+), 1\)  return_obj=(\d+)")


def watch_seen(s_or_screen):
    """The watch pane's "N seen" on a screen (or the session's screen now), or None."""
    screen = s_or_screen if isinstance(s_or_screen, str) else s_or_screen.masked()
    m = WATCH_SEEN.search(screen or "")
    return int(m.group(1)) if m else None


def watch_pane(version, exe, workdir):
    """:watch on tests/agent/targets/watch_target.py's add(i, 1): -n 3 fills
    the watch pane with 3 calls and says it is done; a running watch lists
    the calls with their real arguments and results, Space pauses, Enter
    shows a call in full, C clears (c is the console, as everywhere), q
    stops it and closes the pane, and the target keeps no hook.  The watch
    runs in the background: while it runs, c opens the console and a :
    command answers in the output pane; Esc from either brings the watch
    pane back, still counting.  The console opened over an ended watch
    gives its pane back on Esc too."""
    name = "CPython %s watch pane" % version
    with watch_target_tui(exe, workdir, name) as (target, s, tmux):
        # The agent is not there yet: :reset loads none and says so; :getglobal
        # asks, as :watch does below; n loads nothing.
        tui_command(s, "reset")
        sc = s.wait(has("reset: nothing was observed (no agent runs in process"), ":reset")
        tui_command(s, "getglobal __main__ TAKEN")
        asked = s.wait(has("Load the agent", "[y/N]"), "the question") is not None
        s.tmux.keys("n")
        sc2 = s.wait(has("getglobal: not run, the agent was not loaded"), "no")
        TAP.ok(sc is not None and asked and sc2 is not None
               and not os.path.exists("/tmp/.flight_profiler-%d" % target.pid)
               and not agent_libraries(target.pid),
               "%s: :reset loads no agent to find nothing observed; :getglobal asks first, "
               "n loads nothing" % name, tmux.capture())
        tui_command(s, "watch __main__ add --expr args,return_obj -n 3")
        asked = s.wait(has("Load the agent", "/tmp/.flight_profiler-", "[y/N]"), "the question")
        asked = asked and "/tmp/.flight_profiler-%d " % target.pid in tmux.capture()
        s.tmux.keys("n")
        sc = s.wait(has("watch: not run, the agent was not loaded"), "no")
        TAP.ok(asked is not None and sc is not None and "Watch \u00b7" not in sc
               and not os.path.exists("/tmp/.flight_profiler-%d" % target.pid)
               and not agent_libraries(target.pid),
               "%s: :watch asks before loading the agent; n loads nothing and says so" % name,
               tmux.capture())
        asked = tui_command(s, "watch __main__ add --expr args,return_obj -n 3", load=True)
        sc = s.wait(has("done after 3 calls"), "watch -n 3")
        rows = WATCH_ADD.findall(sc or "")
        TAP.ok(asked and sc is not None and "Watch \u00b7 __main__.add \u00b7 3 seen" in sc
               and len(rows) == 3 and all(int(r) == int(a) + 1 for a, r in rows),
               "%s: asked again, y loads the agent; -n 3 lists 3 calls of add with their "
               "arguments and results, then done" % name,
               tmux.capture())
        # Once it has ended the TUI waits for nothing: the bar is the pane's again.
        TAP.ok(sc is not None and "Enter Expand" in sc and "Interrupt" not in sc,
               "%s: after the watch the function bar is the pane's" % name, tmux.capture())
        # The console takes the pane's slot; leaving it brings the pane back.
        console_open(s)
        s.tmux.keys("Escape")
        sc = s.wait(has("left the console", "Watch \u00b7 __main__.add \u00b7 3 seen",
                        "done after 3 calls"), "the watch pane back")
        TAP.ok(sc is not None and len(WATCH_ADD.findall(sc)) == 3,
               "%s: Esc leaves the console and the watch pane it covered is back" % name,
               tmux.capture())
        s.tmux.keys("q")
        TAP.ok(s.wait(lambda sc: "Watch \u00b7" not in sc, "q after the end") is not None,
               "%s: q closes a watch that has ended" % name, tmux.capture())
        # A repr with terminal controls is shown escaped, on the line and in full.
        tui_command(s, """watch __main__ add --expr 'type("H", (), {"__repr__": lambda s: """
                    """"\\x1b]0;pwned\\x07\\x1b[2J"})()' -n 1""")
        s.wait(has("done after 1 call"), "hostile repr")
        s.tmux.keys("Enter")
        sc = s.wait(has("done after 1 call", "VALUE"), "hostile repr in full")
        raw = tmux.capture(escapes=True)
        TAP.ok(sc is not None and ')()=\\x1b]0;pwned\\x07\\x1b[2J ' in sc
               and re.search(r"^\u2502 +\\x1b\]0;pwned\\x07\\x1b\[2J +\u2502$", sc, re.M)
               and "\x1b]0;pwned" not in raw and "\x07" not in raw,
               "%s: a hostile repr is escaped in the list and in full" % name, tmux.capture())
        s.tmux.keys("q")
        s.wait(lambda sc: "Watch \u00b7" not in sc, "q after the hostile watch")
        tui_command(s, "watch __main__ add --expr args,return_obj -n 100000")
        sc = live_wait(s, lambda sc: "running (q stops)" in sc and len(WATCH_ADD.findall(sc)) >= 3,
                       "running watch")
        TAP.ok(sc is not None
               and re.search(r"Enter Expand +Space Pause +C Clear +\\ Filter +q Stop", sc),
               "%s: a running watch lists the calls as they come; the bar shows the pane's keys"
               % name, tmux.capture())
        # The console opens beside the running watch; Esc brings the watch back, counting on.
        seen = watch_seen(s)
        s.tmux.keys("c")
        sc = live_wait(s, has(">>>", "Console \u00b7"), "the console beside the watch")
        TAP.ok(sc is not None and "Watch \u00b7" not in sc,
               "%s: c while the watch runs opens the console" % name, tmux.capture())
        s.tmux.keys("Escape")
        sc = live_wait(s, lambda x: "left the console" in x and "running (q stops)" in x and
                       seen is not None and (watch_seen(x) or 0) > seen, "the watch back, counting")
        TAP.ok(sc is not None and ">>>" not in sc,
               "%s: Esc leaves the console and the watch pane is back, still counting" % name,
               tmux.capture())
        running = "running (q stops)" in s.masked()
        s.tmux.keys("?")
        sc = live_wait(s, has("Help 1-", "Everywhere", "show this help"), "help beside the watch")
        TAP.ok(running and sc is not None, "%s: ? shows the help while the watch runs" % name,
               tmux.capture())
        s.tmux.keys("?")
        sc = live_wait(s, lambda x: "Help 1-" not in x and "running (q stops)" in x,
                       "help closed")
        TAP.ok(sc is not None, "%s: ? again closes it; the watch runs on" % name, tmux.capture())
        # Moved up from the newest: the list stays, the title counts the new calls.
        s.tmux.keys("k", "k")
        sc = live_wait(s, lambda sc: re.search(r"running \(q stops\) \u00b7 [1-9]\d* new", sc),
                       "N new")
        TAP.ok(sc is not None, "%s: moved up, the title counts the calls that came" % name,
               tmux.capture())
        s.tmux.keys("G")
        sc = live_wait(s, lambda sc: "running (q stops) \u2500" in sc, "following again")
        TAP.ok(sc is not None, "%s: at the last line again, it follows the newest" % name,
               tmux.capture())
        # \\ keeps the calls whose values match; an empty pattern shows all again.
        s.tmux.keys("\\")
        s.tmux.type("return_obj=\\d*7$")
        s.tmux.keys("Enter")
        sc = live_wait(s, lambda sc: "matching /return_obj=\\d*7$/" in sc and
                       len(WATCH_ADD.findall(sc)) >= 2, "filtered")
        rows = WATCH_ADD.findall(sc or "")
        TAP.ok(sc is not None and all(r.endswith("7") for _, r in rows),
               "%s: \\ filters the calls by their values while the watch runs" % name,
               tmux.capture())
        s.tmux.keys("\\", "C-u", "Enter")
        sc = live_wait(s, lambda sc: "matching" not in sc and
                       len(set(r[-1] for _, r in WATCH_ADD.findall(sc))) > 1, "unfiltered")
        TAP.ok(sc is not None, "%s: an empty filter shows every call again" % name,
               tmux.capture())
        s.tmux.keys("Space")
        sc = live_wait(s, has("paused, "), "paused")
        before = WATCH_ADD.findall(sc or "")
        time.sleep(0.3)
        later = s.masked()
        TAP.ok(sc is not None and before and WATCH_ADD.findall(later) == before
               and re.search(r"paused, [1-9]\d* waiting", later),
               "%s: Space pauses the list; the calls that come wait" % name, later)
        # A : command answers in the output pane while the watch runs (paused or not).
        seen = watch_seen(s)
        tui_command(s, "getglobal __main__ TAKEN")
        sc = live_wait(s, has(":getglobal __main__ TAKEN", "TYPE:  list"), "getglobal answer")
        TAP.ok(seen is not None and sc is not None and "Watch \u00b7" not in sc,
               "%s: :getglobal answers in the output pane while the watch runs" % name,
               tmux.capture())
        s.tmux.keys("Escape")
        sc = live_wait(s, lambda x: "paused, " in x and seen is not None and
                       (watch_seen(x) or 0) > seen and WATCH_ADD.findall(x) == before,
                       "the paused watch back")
        TAP.ok(sc is not None, "%s: Esc closes the answer and the watch pane is back, paused "
               "with the same calls, still counting" % name, tmux.capture())
        s.tmux.keys("Enter")
        sc = live_wait(s, has("EXPR", "VALUE"), "Enter")
        last = before[-1] if before else ("?", "?")
        TAP.ok(sc is not None and re.search(r"^\u2502 +return_obj +%s *\u2502" % last[1], sc, re.M)
               and re.search(r"^\u2502 +args +\(%s, 1\)" % last[0], sc, re.M),
               "%s: Enter shows the call in full: its arguments and return value" % name,
               tmux.capture())
        s.tmux.keys("C")
        sc = live_wait(s, lambda sc: "paused, " in sc and not WATCH_ADD.search(sc),
                       "clear")
        TAP.ok(sc is not None, "%s: C clears the list" % name, tmux.capture())
        s.tmux.keys("Space")
        sc = live_wait(s, lambda sc: "running (q stops)" in sc and WATCH_ADD.search(sc),
                       "resumed")
        TAP.ok(sc is not None, "%s: Space resumes" % name, tmux.capture())
        s.tmux.keys("q")
        sc = s.wait(lambda sc: "Watch \u00b7" not in sc and "watch: stopped after" in sc, "q")
        TAP.ok(sc is not None and "the hooks are removed" in sc,
               "%s: q stops the watch and closes the pane" % name, tmux.capture())
        TAP.ok(sc is not None and ">>>" not in sc and "Console \u00b7" not in sc,
               "%s: stopping the watch leaves the console closed" % name, tmux.capture())
        left = hooks_left(target)
        TAP.ok(left == "[]", "%s: no hook is left in the target" % name, left)


def watch_target_exits(exe, workdir):
    """The target exits while a watch runs: the pane keeps the calls it
    showed and says the watch ended; q then leaves the pane and quits."""
    name = "watch pane, target exits"
    with watch_target_tui(exe, workdir, name, alive=False) as (target, s, tmux):
        tui_command(s, "watch __main__ add --expr args,return_obj -n 100000", load=True)
        live_wait(s, lambda sc: len(WATCH_ADD.findall(sc)) >= 3, "running watch")
        target.proc.kill()
        sc = s.wait(lambda sc: re.search(r"\d+ seen, \d+ dropped \u00b7 ended after \d+ calls", sc)
                    and "TARGET EXITED" in sc, "ended")
        TAP.ok(sc is not None and len(WATCH_ADD.findall(sc)) >= 3,
               "%s: the calls shown stay, the title says it ended" % name, tmux.capture())
        s.tmux.keys("q", "q")
        TAP.ok(s.finished()[0] == 0, "%s: q closes the pane, q quits with status 0" % name)


def gil_held_in_read(pid):
    """Does a thread of pid sleep in a pipe's read (the kernel's wchan)?"""
    for tid in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/wchan" % (pid, tid)) as f:
                if "pipe_read" in f.read():
                    return True
        except OSError:
            pass
    return False


def watch_give_up(version, exe, workdir):
    """The agent cannot confirm a stop while the target's GIL is held in a
    long C call: another client's execute blocks in read() on a FIFO
    through ctypes.PyDLL, which keeps the GIL.  Esc on the running watch
    then says, after RUNNER_CANCEL_GRACE_MS, that the agent did not confirm
    the stop, and closes the pane; the TUI stays usable (? shows the
    help).  Once the test writes a byte, the GIL is free again and the
    agent removes the hooks, while flight_profiler is still attached, and
    the session goes on (:getglobal answers)."""
    name = "CPython %s watch, stop not confirmed" % version
    fifo = os.path.join(workdir, "gil.%d.fifo" % os.getpid())
    with watch_target_tui(exe, workdir, name) as (target, s, tmux):
        tui_command(s, "watch __main__ add --expr args,return_obj -n 100000", load=True)
        live_wait(s, lambda sc: "running (q stops)" in sc and len(WATCH_ADD.findall(sc)) >= 3,
                  "running watch")
        os.mkfifo(fifo)
        writer = os.open(fifo, os.O_RDWR)  # the reader's open does not wait; read() does
        holder = subprocess.Popen(
            [BIN, str(target.pid), "--cmd", 'execute "import ctypes, os; print(ctypes.PyDLL(None)'
             '.read(os.open(%r, os.O_RDONLY), ctypes.create_string_buffer(1), 1))"' % fifo],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            end = time.monotonic() + DEADLINE
            while not gil_held_in_read(target.pid) and time.monotonic() < end:
                time.sleep(0.05)
            held = gil_held_in_read(target.pid)
            s.tmux.keys("Escape")
            sc = s.wait(has("did not confirm the stop"), "the give-up",
                        DEADLINE + RUNNER_CANCEL_GRACE_S)
            TAP.ok(held and sc is not None and "Watch \u00b7" not in sc
                   and "watch: the agent did not confirm the stop within" in sc,
                   "%s: with the GIL held, Esc gives up after the grace and says so" % name,
                   tmux.capture())
            s.tmux.keys("?")
            sc = s.wait(has("Help 1-", "Everywhere"), "help")
            s.tmux.keys("?")
            TAP.ok(sc is not None and s.wait(lambda x: "Help 1-" not in x, "help closed"),
                   "%s: the TUI stays usable: ? shows the help and closes it" % name,
                   tmux.capture())
        finally:
            os.write(writer, b"x")
            os.close(writer)
            out, err = holder.communicate(timeout=60)
            os.unlink(fifo)
        TAP.ok(holder.returncode == 0 and out.strip() == b"1", "%s: the C call ended" % name,
               "rc %s: %s %s" % (holder.returncode, out, err))
        end = time.monotonic() + DEADLINE
        left = hooks_left(target)
        while left != "[]" and time.monotonic() < end:
            time.sleep(0.1)
            left = hooks_left(target)
        TAP.ok(left == "[]", "%s: once the GIL is free, the agent removes the hooks while "
               "flight_profiler is still attached" % name, left)
        tui_command(s, "getglobal __main__ TAKEN")
        TAP.ok(s.wait(has(":getglobal __main__ TAKEN", "TYPE:  list"), "getglobal") is not None,
               "%s: the session goes on: :getglobal answers" % name, tmux.capture())


MONITOR_ROW = re.compile(r"(\d\d:\d\d:\d\d) +(\d+) +(\d+) +(\d+) +([\d.]+)% +([\d.]+) +([\d.]+) "
                         r"+(\S+) +([\u2581-\u2588]+) +([\u2581-\u2588]+) +__main__\.maybe_fail")


def monitor_pane(version, exe, workdir):
    """:monitor on watch_target.py's maybe_fail (raises on odd numbers):
    the monitor pane keeps one row, updated each cycle, with calls, the
    failures of half of them and the change since the cycle before; q
    stops it and closes the pane, and the target keeps no hook."""
    name = "CPython %s monitor pane" % version
    with watch_target_tui(exe, workdir, name) as (target, s, tmux):
        tui_command(s, "monitor __main__ maybe_fail -c 0.5", load=True)
        sc = live_wait(s, lambda sc: re.search(r"cycle [2-9]", sc) is not None and
                       MONITOR_ROW.search(sc) is not None, "two cycles")
        rows = MONITOR_ROW.findall(sc or "")
        ok = len(rows) == 1
        if ok:
            _, total, success, fail, _, _, _, change, calls, p99 = rows[0]
            ok = (int(total) > 0 and int(success) + int(fail) == int(total)
                  and abs(int(success) - int(fail)) <= 1 and change not in ("new", "-")
                  and len(calls) >= 2 and len(calls) == len(p99))
        TAP.ok(ok and "Monitor \u00b7 __main__.maybe_fail every 0.5 s" in sc,
               "%s: one row per method, with its calls, failures, the change since "
               "the cycle before and sparklines of the cycles" % name, tmux.capture())
        s.tmux.keys("Escape")
        sc = s.wait(lambda sc: "Monitor \u00b7" not in sc and "monitor: stopped after" in sc, "Esc")
        TAP.ok(sc is not None, "%s: Esc stops the monitor and closes the pane" % name,
               tmux.capture())
        left = hooks_left(target)
        TAP.ok(left == "[]", "%s: no hook is left in the target" % name, left)


def watch_only():
    """tuitest.py watch [VERSION...]: only the watch and monitor panes' scenarios."""
    only(lambda version, exe, workdir, golden: watch_pane(version, exe, workdir),
         lambda version, exe, workdir, golden: monitor_pane(version, exe, workdir),
         lambda version, exe, workdir, golden: golden and watch_target_exits(exe, workdir),
         lambda version, exe, workdir, golden: watch_give_up(version, exe, workdir))


# ---- a process set (issue 13) ------------------------------------------------

def children(pid):
    """The pids of pid's children, from /proc (every thread's list)."""
    found = set()
    for tid in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/children" % (pid, tid)) as f:
                found.update(int(c) for c in f.read().split())
        except OSError:
            pass
    return sorted(found)


def pid_ranges(text):
    """[4102, 4104, 4105, 4106] from "4102, 4104–4106" (stack --group's pids)."""
    out = []
    for part in text.split(", "):
        lo, _, hi = part.partition("\u2013")
        out.extend(range(int(lo), int(hi or lo) + 1))
    return out


def member_healthy(pid):
    """Why process pid is not healthy (gone, traced, a thread stopped), or ""."""
    try:
        with open("/proc/%d/status" % pid) as f:
            status = f.read()
        if re.search(r"TracerPid:\s+0\b", status) is None:
            return "%d is traced" % pid
        for tid in os.listdir("/proc/%d/task" % pid):
            with open("/proc/%d/task/%s/stat" % (pid, tid)) as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
            if state in ("t", "T", "Z", "X"):
                return "%d: thread %s is %s" % (pid, tid, state)
    except (OSError, IndexError) as e:
        return "%d: %s" % (pid, e)
    return ""


def procs_pane(version, exe, workdir):
    """flight_profiler PID --tree on tests/targets/pool.py (8 workers, 7
    waiting for the same event, one sleeping elsewhere): the processes
    pane lists the 9 processes; moving onto a worker shows its threads and
    its stack; g groups the stacks (a group of the 7 waiting workers, the
    odd one out after) and Enter on the odd one's group looks at it; q
    quits with status 0 and every process runs on, untraced."""
    name = "CPython %s processes pane" % version
    tmux = Tmux(160, 50)
    with torn_down(name, tmux):
        target = Target(exe, workdir, "pool.py")
        workers = children(target.pid)
        members = sorted([target.pid] + workers)
        TAP.ok(len(workers) == 8, "%s: pool.py runs 8 workers" % name, str(workers))
        s = Session(tmux, target, workdir, extra="--tree", ids=[])

        def header_pid(pid):
            return lambda sc: re.search(r"^ .*tree of %d \u00b7 pid %d \u00b7" % (target.pid, pid),
                                        sc) is not None

        sc = s.wait(lambda sc: "Processes 9 \u00b7 tree of %d \u00b7 9 Python" % target.pid in sc
                    and all(re.search(r"^\u2502.. +%d +- +%s " % (m, re.escape(version)), sc, re.M)
                            for m in members) and header_pid(members[0])(sc), "the processes")
        TAP.ok(sc is not None, "%s: the processes pane lists the 9 processes, their pids "
               "and versions; the first is looked at" % name, tmux.capture())
        # Down to the first worker: the threads, stack and header are its.
        w = workers[0]
        s.tmux.keys(*["j"] * members.index(w))
        sc = s.wait(lambda sc: header_pid(w)(sc) and "Stack \u00b7 MainThread (%d)" % w in sc
                    and re.search(r"^\u2502\u25b6 +%d MainThread " % w, sc, re.M)
                    and ("wait_for_work" in sc or "elsewhere" in sc), "worker %d" % w)
        TAP.ok(sc is not None, "%s: moving onto a worker shows its threads and its stack"
               % name, tmux.capture())
        first_waits = sc is not None and "wait_for_work" in sc
        # Enter: over to that process's threads (the bar is the threads pane's), BTab back.
        s.tmux.keys("Enter")
        sc = s.wait(lambda sc: re.search(r"Enter Stack +\\ Filter", sc.splitlines()[-1]), "Enter")
        TAP.ok(sc is not None and header_pid(w)(sc),
               "%s: Enter on a process goes over to its threads" % name, tmux.capture())
        s.tmux.keys("BTab")
        s.wait(lambda sc: "g Group" in sc.splitlines()[-1], "back to the processes")
        s.tmux.keys("g")
        sc = s.wait(has("stacks grouped (g: the list)", "Process set: 9 processes, 9 Python"),
                    "grouped")
        s.tmux.keys("/")
        s.tmux.type("7 threads in 7 processes")
        s.tmux.keys("Enter")
        sc = s.wait(lambda sc: re.search(r"\u25b6 7 threads in 7 processes \u2014 pids ([\d\u2013, ]+), "
                                         r"threads? MainThread:", sc), "the group of 7")
        m = re.search(r"7 threads in 7 processes \u2014 pids ([\d\u2013, ]+), threads? MainThread",
                      sc or "")
        seven = pid_ranges(m.group(1)) if m else []
        TAP.ok(len(seven) == 7 and set(seven) < set(workers),
               "%s: g groups the stacks: 7 workers in one group" % name, tmux.capture())
        s.tmux.keys("/")
        s.tmux.type("in elsewhere")
        s.tmux.keys("Enter")
        s.wait(has("\u25b6     File"), "the odd one's frame")
        s.tmux.keys("Enter")
        odd = [p for p in workers if p not in seven]
        sc = s.wait(lambda sc: len(odd) == 1 and header_pid(odd[0])(sc) and
                    "stacks grouped" not in sc and "Stack \u00b7 MainThread (%d)" % odd[0] in sc
                    and re.search(r"pool\.py:\d+ +elsewhere +time\.sleep", sc), "the odd one")
        TAP.ok(sc is not None and (w in seven) == first_waits,
               "%s: Enter on the odd one out's group looks at that worker: its stack is "
               "elsewhere's" % name, tmux.capture())
        s.tmux.keys("q")
        rc = s.finished()[0]
        TAP.ok(rc == 0, "%s: q quits with status 0" % name, "got %s" % rc)
        why = [w for w in (member_healthy(p) for p in members) if w]
        TAP.ok(not why and target.proc.poll() is None,
               "%s: every process of the set runs on, untraced, not stopped" % name, "\n".join(why))


def procs_changes(version, exe, workdir):
    """A set by PID and --match, one of them not Python: that one is listed
    with why it is skipped and moving onto it keeps the Python process in
    view (whose LOCAL_RANK shows as its rank); a process that comes to
    match joins the pane, one that goes is shown as exited, the rest
    kept."""
    name = "CPython %s processes pane, members come and go" % version
    tmux = Tmux(160, 40)
    target = None
    sleeps = []
    try:
        target = Target(exe, workdir, env={"LOCAL_RANK": "5"})
        sleeps.append(subprocess.Popen(["sleep", "3601.25"]))
        # [0]: the pattern does not match the command line that carries it
        # (double quotes: Session runs the line inside single ones)
        s = Session(tmux, target, workdir, extra='--match "sleep 36[0]1[.]25"', ids=[])

        def row(pid, rest):
            return lambda sc: re.search(r"^\u2502.. +%d .*%s" % (pid, rest), sc, re.M) is not None

        a = sleeps[0].pid
        sc = s.wait(lambda sc: "Processes 2 \u00b7 match" in sc and "1 Python" in sc
                    and row(a, r"\[skipped: ")(sc) and row(target.pid, "local 5 +" + re.escape(version))(sc)
                    and " \u00b7 pid %d \u00b7" % target.pid in sc, "the set")
        TAP.ok(sc is not None, "%s: a member that is not Python is listed with the reason; "
               "LOCAL_RANK is the rank" % name, tmux.capture())
        s.tmux.keys("j" if a > target.pid else "k")
        sc = s.wait(has("process %d is not looked at: " % a), "moved onto sleep")
        TAP.ok(sc is not None and " \u00b7 pid %d \u00b7" % target.pid in sc,
               "%s: it cannot be selected: the Python process stays in view" % name,
               tmux.capture())
        sleeps.append(subprocess.Popen(["sleep", "3601.25"]))
        b = sleeps[1].pid
        sc = s.wait(lambda sc: "Processes 3 \u00b7" in sc and row(b, r"\[skipped: ")(sc), "joined")
        TAP.ok(sc is not None, "%s: a process that comes to match joins the pane" % name,
               tmux.capture())
        sleeps[0].kill()
        sleeps[0].wait()
        sc = s.wait(lambda sc: "Processes 3 \u00b7" in sc and "1 exited" in sc and
                    row(a, " exited ")(sc) and row(b, " idle ")(sc), "exited")
        TAP.ok(sc is not None, "%s: a process that goes is shown as exited, the rest kept" % name,
               tmux.capture())
        s.tmux.keys("q")
        rc = s.finished()[0]
        TAP.ok(rc == 0, "%s: q quits with status 0" % name, "got %s" % rc)
        check_target(target, name, False)
    except RuntimeError as e:
        TAP.ok(False, name, str(e))
    finally:
        tmux.kill()
        for p in sleeps:
            p.kill()
            p.wait()
        if target:
            target.stop()


def procs_only():
    """tuitest.py procs [VERSION...]: only the processes pane's scenario."""
    only(lambda version, exe, workdir, golden: procs_pane(version, exe, workdir),
         lambda version, exe, workdir, golden: golden and procs_changes(version, exe, workdir))


# ---- as a new user finds it (issue 8) ------------------------------------------

def builtin_themes(target, workdir):
    """Every bundled theme is found with no theme directory at all (the
    binary run from its build tree); a user theme of the same name wins."""
    for name in ("light", "monochrome", "high-contrast"):
        tmux = Tmux(80, 24)
        try:
            s = Session(tmux, target, workdir, extra="--theme " + name, theme_path=False)
            TAP.ok(s.wait(has("Threads 5", "worker-c"), "open") is not None,
                   "--theme %s opens with no theme directory (built in)" % name, tmux.capture())
            s.tmux.keys("q")
            TAP.ok(s.finished()[0] == 0, "--theme %s: exit status 0" % name)
        finally:
            tmux.kill()
    user = os.path.join(workdir, "config", "flight_profiler", "themes")
    os.makedirs(user, exist_ok=True)
    with open(os.path.join(user, "light.theme"), "w") as f:
        f.write("color title red blue\n")
    tmux = Tmux(80, 24)
    try:
        s = Session(tmux, target, workdir, extra="--theme light", theme_path=False)
        s.wait(has("Threads 5", "worker-c"), "open")
        first = tmux.capture(escapes=True).split("\n")[0]
        TAP.ok("\x1b[31m" in first or "\x1b[31;44m" in first,
               "a user theme of the same name overrides the built-in one", repr(first[:200]))
        s.tmux.keys("q")
        s.finished()
    finally:
        os.unlink(os.path.join(user, "light.theme"))
        tmux.kill()


def output_has(*words):
    return has("Output \u00b7", *words)


def help_and_keys(target, workdir):
    """`:help` knows the TUI's own commands; the ? overlay wraps its long
    lines, says it scrolls, and names each key once; the filter prompt has
    a history; sort arrows mean the same on every column; the bar says
    Resume while paused."""
    tmux = Tmux(120, 40)
    try:
        s = Session(tmux, target, workdir)
        s.wait(has("Threads 5", "worker-c"), "open")
        for cmd, usage in (("save", "save FILE"), ("theme", "theme [NAME]"), ("delay", "delay SECONDS")):
            s.tmux.keys(":")
            s.tmux.type("help " + cmd)
            s.tmux.keys("Enter")
            sc = s.wait(output_has("help " + cmd, "USAGE", usage), ":help " + cmd)
            TAP.ok(sc is not None and "unknown command" not in sc,
                   ":help %s shows its usage" % cmd, tmux.capture())
            s.tmux.keys("Escape")
        s.tmux.keys(":")
        s.tmux.type("help")
        s.tmux.keys("Enter", "z")
        sc = s.wait(output_has("Commands:", "In the TUI too:", "delay"), ":help")
        TAP.ok(sc is not None and all(re.search(r"^\u2502  %s +\S" % c, sc, re.M)
                                      for c in ("stack", "console", "quit", "save", "theme", "delay")),
               ":help lists every command, the TUI's own ones too", tmux.capture())
        s.tmux.keys("z", "Escape")
        # The TUI's own commands go through the command table: its
        # grammar, its answers.  (Every command of the guide is built now;
        # tests/unit/grammar.c checks how one not built would answer.)
        for cmd, said in (("delay 0", "delay: seconds wants seconds from 0.1 to 3600, not '0'"),
                          ("theme a b", "theme: expected at most 1 argument, got 2")):
            s.tmux.keys(":")
            s.tmux.type(cmd)
            s.tmux.keys("Enter")
            TAP.ok(s.wait(has(said), ":" + cmd) is not None, ":%s says %s" % (cmd, said),
                   tmux.capture())
        s.tmux.keys(":")
        s.tmux.type("delay 2")
        s.tmux.keys("Enter")
        TAP.ok(s.wait(has("refreshing every 2s"), ":delay 2") is not None,
               ":delay 2 runs the TUI's handler", tmux.capture())
        s.tmux.keys("Tab", "?")
        sc = s.wait(has("Help 1-", "scroll"), "help")
        TAP.ok(sc is not None, "the help overlay's title says it scrolls and where it is", tmux.capture())
        s.tmux.keys("j")
        TAP.ok(s.wait(has("Help 2-"), "help scrolls") is not None, "j scrolls the help by a line",
               tmux.capture())
        s.tmux.keys("G")
        end = s.wait(lambda x: re.search(r"Help (\d+)-(\d+) of \2 ", x), "help end")
        s.tmux.keys("/")
        s.tmux.type("unwound")
        s.tmux.keys("Enter")
        sc = s.wait(has("show native (C) frames", "is unwound)"), "the x line")
        TAP.ok(end is not None and sc is not None and "Enter Enter" not in end + sc,
               "the help wraps the x line instead of cutting it; Enter is listed once",
               tmux.capture())
        s.tmux.keys("Escape", "Escape", "Escape")  # the help, the search, the stack pane
        for pattern in ("worker-a", "worker-b"):
            s.tmux.keys("\\")
            s.tmux.keys("C-u")
            s.tmux.type(pattern)
            s.tmux.keys("Enter")
            s.wait(has("Threads 1/5 \u00b7 " + pattern), "filter " + pattern)
        s.tmux.keys("\\", "C-u", "Up", "Up")
        TAP.ok(s.wait(has("\\worker-a\n"), "filter history") is not None,
               "the filter prompt's history goes back past the newest entry", tmux.capture())
        s.tmux.keys("C-u", "Enter")
        s.wait(has("Threads 5"), "no filter")
        s.tmux.keys(">")
        sc = s.wait(has("NAME\u25b2", "ascending"), "sort by name")
        TAP.ok(sc is not None and sc.index("worker-a") < sc.index("worker-c"),
               "NAME\u25b2: names ascending", sc)
        s.tmux.keys("P")
        TAP.ok(s.wait(has("CPU%\u25bc", "descending"), "sort by cpu") is not None,
               "CPU%\u25bc: busiest first, the arrow means descending as on every column",
               tmux.capture())
        s.tmux.keys("Space")
        TAP.ok(s.wait(has("PAUSED", "Space Resume"), "pause") is not None,
               "paused, the function bar says Space Resume", tmux.capture())
        s.tmux.keys("Space")
        TAP.ok(s.wait(has("Space Pause"), "resume") is not None, "live again, it says Pause")
        s.tmux.keys(":")
        s.tmux.type("exit")
        s.tmux.keys("Enter")
        TAP.ok(s.finished()[0] == 0, "help and keys: :exit (quit's alias) leaves, exit status 0")
    finally:
        tmux.kill()


def layout_sizes(target, workdir):
    """At 40x10 the threads pane shows a thread before the stack pane gets
    more; at 160 columns TOP is whole; the stack pane shows each frame's
    source line when it has room."""
    for cols, rows in ((40, 10), (160, 30), (80, 24)):
        tmux = Tmux(cols, rows)
        try:
            s = Session(tmux, target, workdir)
            sc = s.wait(has("Threads 5", "Stack \u00b7"), "open") or ""
            threads = sc.split("Stack \u00b7")[0] if cols < 110 else sc
            if cols == 40:
                TAP.ok(re.search(r"^\u2502\u25b6 <ID> MainThread ", threads, re.M) is not None,
                       "40x10: the threads pane shows a thread row", sc)
            elif cols == 160:
                TAP.ok("Condition.wait (threading.py:355)\u2502" in sc,
                       "160x30: the TOP column keeps its line number", sc)
            if cols >= 80:
                TAP.ok("Condition.wait  waiter.acquire()" in sc and "main_wait       NEVER.wait()" in sc,
                       "%dx%d: the stack pane shows each frame's source line" % (cols, rows), sc)
            s.tmux.keys("q")
            TAP.ok(s.finished()[0] == 0, "%dx%d: exit status 0" % (cols, rows))
        finally:
            tmux.kill()


def load_question(target, workdir):
    """c asks before it loads the agent and says what loading does; no
    leaves the process alone; yes loads it, and nothing asks again in this
    session or in a later one that finds the agent there."""
    tmux = Tmux(200, 30)
    try:
        s = Session(tmux, target, workdir)
        s.wait(has("Threads 5", "worker-c"), "open")
        s.tmux.keys("c")
        s.wait(has("[y/N]"), "question")
        sc = tmux.capture()
        TAP.ok("runs inside the process" in sc and "reused by later sessions" in sc and
               "/tmp/.flight_profiler-%d" % target.pid in sc,
               "c asks before loading the agent and says what loading does", tmux.capture())
        s.tmux.keys("n")
        TAP.ok(s.wait(has("the agent was not loaded"), "no") is not None and
               not agent_libraries(target.pid), "n: the agent is not loaded", tmux.capture())
        s.tmux.keys("L")
        s.wait(has("[y/N]"), "question again")
        s.tmux.keys("y")
        TAP.ok(s.wait(has("agent \u25cf"), "yes") is not None and len(agent_libraries(target.pid)) == 1,
               "y: the agent is loaded", tmux.capture())
        s.tmux.keys("c")
        TAP.ok(s.wait(has(">>>", "console inside process"), "console") is not None,
               "c then opens the console without asking again", tmux.capture())
        s.tmux.keys("Escape")
        s.wait(has("left the console"), "leave")
        s.tmux.keys("q")
        s.finished()
        tmux.kill()
        tmux = Tmux(200, 30)
        s = Session(tmux, target, workdir)
        s.wait(has("Threads 5", "worker-c"), "open again")
        s.tmux.keys("c")
        sc = s.wait(has(">>>", "console inside process"), "console in a new session")
        TAP.ok(sc is not None and "[y/N]" not in sc,
               "a later session uses the agent it finds without asking", tmux.capture())
        s.tmux.keys("Escape")
        s.wait(has("left the console"), "leave")
        s.tmux.keys("q")
        TAP.ok(s.finished()[0] == 0, "load question: exit status 0")
    finally:
        tmux.kill()


def console_safety(target, workdir):
    """The console as Python's own: `x=5; x` echoes 5, a syntax error shows
    no codeop frames, the banner is said once.  After an interrupt that
    times out, its pane stays with the whole message and keeps the keys:
    letters open a new prompt, Ctrl-C closes the pane, not the TUI."""
    tmux = Tmux(200, 40)
    try:
        s = Session(tmux, target, workdir)
        s.wait(has("Threads 5", "worker-c"), "open")
        console_open(s)
        s.tmux.keys("Escape")
        s.wait(has("left the console"), "leave")
        s.tmux.keys("c")
        sc = s.wait(has(">>>", "Console \u00b7"), "reopen")
        TAP.ok(sc is not None and sc.count("console inside process") == 1,
               "console: the banner is not repeated when it opens again", tmux.capture())
        s.tmux.type("x=5; x")
        s.tmux.keys("Enter")
        TAP.ok(s.wait(console_line("5"), "x=5; x") is not None,
               "console: x=5; x echoes 5 as Python's console does", tmux.capture())
        s.tmux.type("1+")
        s.tmux.keys("Enter")
        sc = s.wait(console_line("SyntaxError: invalid syntax"), "syntax error")
        TAP.ok(sc is not None and "codeop" not in sc, "console: a syntax error shows no codeop frames",
               tmux.capture())
        s.tmux.type("import time; time.sleep(30)")
        s.tmux.keys("Enter")
        s.wait(has("running (Ctrl-C interrupts)"), "sleeping")
        s.tmux.keys("C-c")
        sc = s.wait(has("[flight_profiler]", "did not stop within", "Esc closes this pane"),
                    "interrupt timed out")
        text = " ".join(m.group(1).rstrip() for m in re.finditer("^\u2502(.*)\u2502$", sc or "", re.M))
        TAP.ok("other requests are not affected" in text,
               "console: after an interrupt that times out, the pane stays with the "
               "whole message", tmux.capture())
        s.tmux.type("q")
        sc = s.wait(has(">>> q\n"), "q goes to python")
        TAP.ok(sc is not None, "console: a typed letter opens a new prompt instead of reaching the TUI",
               tmux.capture())
        s.tmux.keys("C-u")
        s.tmux.type("6*7")
        s.tmux.keys("Enter")
        TAP.ok(s.wait(console_line("42"), "42") is not None, "console: the new prompt runs code",
               tmux.capture())
        s.tmux.type("import time; time.sleep(30)")
        s.tmux.keys("Enter")
        s.wait(has("running (Ctrl-C interrupts)"), "sleeping again")
        s.tmux.keys("C-c")
        s.wait(lambda sc: sc.count("Esc closes this pane") == 2, "broken again")
        s.tmux.keys("C-c")
        sc = s.wait(has("console closed", "Threads "), "ctrl-c closes")
        TAP.ok(sc is not None and s.pid() is not None and not os.path.exists(s.file("rc")),
               "console: Ctrl-C then closes the pane; the TUI stays", tmux.capture())
        s.tmux.keys("q")
        TAP.ok(s.finished()[0] == 0, "console safety: exit status 0")
    finally:
        tmux.kill()


def output_history(target, workdir):
    """The output pane keeps every command's output under its heading
    ([ and ] go between them), y copies one of them through OSC 52,
    escaped as shown, Left and Right scroll a long line, and `execute`
    writes there too (the agent is loaded by load_question)."""
    tmux = Tmux(120, 40)
    try:
        tmux.run("set-option", "-g", "set-clipboard", "on")
        s = Session(tmux, target, workdir)
        s.wait(has("Threads ", "worker-c"), "open")  # console_safety left statements running
        s.tmux.keys("Enter", "Enter")
        s.wait(has("Condition.wait", "y Copy"), "source")
        s.tmux.keys("y")
        s.wait(has("copied", "OSC 52"), "copy in the source pane")
        buf = tmux.run("show-buffer").stdout
        TAP.ok(buf.startswith("Traceback for thread"),
               "y in the source pane copies the stack, as its bar says", buf[:200])
        s.tmux.keys("Escape")
        for cmd in ("help theme", "help delay"):
            s.tmux.keys(":")
            s.tmux.type(cmd)
            s.tmux.keys("Enter")
        sc = s.wait(output_has("help delay \u00b7 2 of 2", ":help delay", "delay SECONDS"), "two entries")
        TAP.ok(sc is not None, "output: a second command's output comes under its own heading",
               tmux.capture())
        s.tmux.keys("[")
        sc = s.wait(output_has("help theme \u00b7 1 of 2", ":help theme", ":help delay"), "older")
        TAP.ok(sc is not None and sc.index(":help theme") < sc.index(":help delay"),
               "output: [ goes back to the previous command's output, still there", tmux.capture())
        s.tmux.keys("]")
        TAP.ok(s.wait(output_has("help delay \u00b7 2 of 2"), "newer") is not None,
               "output: ] goes to the next command's output", tmux.capture())
        s.tmux.keys("y")
        s.wait(has("copied", "lines of :help delay", "OSC 52"), "copy")
        buf = tmux.run("show-buffer").stdout
        TAP.ok("delay SECONDS" in buf and "save FILE" not in buf,
               "output: y copies the output under the cursor, and only it, to the clipboard", buf)
        s.tmux.keys(":")
        s.tmux.type("execute \"print('A' * 250 + chr(27) + '[2J' + 'END')\"")
        s.tmux.keys("Enter")
        sc = s.wait(output_has("execute \"print", "3 of 3", "AAAAAAAA"), "execute")
        TAP.ok(sc is not None and "Console \u00b7" not in sc,
               "output: execute's output goes to the output pane's history", tmux.capture())
        s.tmux.keys("j")
        s.tmux.keys(*(["l"] * 24))
        sc = s.wait(output_has("from column 193", r"A\x1b[2JEND"), "scrolled")
        TAP.ok(sc is not None, "output: l scrolls a long line to the right; its escape stays escaped",
               tmux.capture())
        s.tmux.keys("y")
        s.wait(has("copied 1 line of :execute"), "copy execute")
        buf = tmux.run("show-buffer").stdout
        TAP.ok(r"A\x1b[2JEND" in buf and "\x1b" not in buf,
               "output: what y copies is escaped as shown", repr(buf[-40:]))
        s.tmux.keys(*(["h"] * 24))
        TAP.ok(s.wait(lambda sc: output_has("3 of 3")(sc) and "from column" not in sc, "left")
               is not None, "output: h scrolls back to the first column", tmux.capture())
        s.tmux.keys(":")
        s.tmux.type('execute "import time; time.sleep(30)"')
        s.tmux.keys("Enter")
        sc = s.wait(output_has("time.sleep(30)", "running (Esc interrupts)"), "a long statement")
        TAP.ok(sc is not None, "output: a statement still running says so in the title", tmux.capture())
        s.tmux.keys("Escape")
        sc = s.wait(lambda sc: output_has("time.sleep(30)")(sc) and "running (" not in sc and
                    "KeyboardInterrupt" in sc, "interrupted")
        TAP.ok(sc is not None, "output: Esc interrupts it; the traceback ends its output",
               tmux.capture())
        s.tmux.keys(":")
        s.tmux.type('execute "for i in range(120000): print(i)"')
        s.tmux.keys("Enter")
        s.wait(has("execute: done"), "a long output")
        s.tmux.keys("G")
        sc = s.wait(lambda sc: output_has("older lines dropped")(sc) and console_line("119999")(sc),
                    "its end")
        TAP.ok(sc is not None, "output: past its bound the oldest lines go and the title counts them",
               tmux.capture())
        s.tmux.keys("q")
        TAP.ok(s.finished()[0] == 0, "output history: exit status 0")
    finally:
        tmux.kill()


def newuser(exe, workdir):
    """What a new user trying the TUI found (issue 8)."""
    with torn_down("new user"):
        target = Target(exe, workdir)
        builtin_themes(target, workdir)
        help_and_keys(target, workdir)
        layout_sizes(target, workdir)
        check_target(target, "new user", False)
        load_question(target, workdir)
        console_safety(target, workdir)
        output_history(target, workdir)
        check_target(target, "new user with the agent", True)


# What a terminal acts on: C0 but \t and \n, DEL, C1, bidi controls, separators.
CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e"
                      "\u2066-\u2069\u2028\u2029]")


def hostile(version, exe, workdir):
    """tests/targets/hostile.py names its threads, functions and files with
    ESC ] 0 (retitle), ESC [ 2 J (clear), BEL, U+009B and U+202E, and prints
    them in the console: the panes show them escaped (\\x1b, \\u009b), the
    terminal's title and screen stay ours."""
    name = "hostile names, CPython %s" % version
    evil = r"\x1b]0;PWNED\x07\x1b[2J\u009b31m\u202eevil"
    tmux = Tmux(200, 50)
    with torn_down(name, tmux):
        target = Target(exe, workdir, "hostile.py")
        title = tmux.run("display-message", "-p", "#{pane_title}").stdout

        def clean(where):
            screen = tmux.capture(escapes=True)
            bad = sorted(set(CONTROLS.findall(re.sub(r"\x1b\[[0-9;]*m", "", screen))))
            now = tmux.run("display-message", "-p", "#{pane_title}").stdout
            TAP.ok(not bad and now == title,
                   "%s: %s: no control reaches the terminal, its title stays" % (name, where),
                   "controls on the screen: %r; title %r, was %r" % (bad, now, title))

        s = Session(tmux, target, workdir)
        TAP.ok(s.wait(has("Threads 5", r"\x1b]0;PWN\x07"), "open") is not None,
               name + ": an OS thread name shows escaped in the threads pane")
        clean("threads pane")
        s.tmux.keys("\\")
        s.tmux.type("py-")
        s.tmux.keys("Enter")
        qualname = tuple(int(v) for v in version.split(".")[:2]) >= (3, 11)
        TAP.ok(s.wait(has("Threads 1/5", "Stack \u00b7 py-" + evil + r"\nTraceback fo",
                          # the threads pane widens for the long TOP: names may be cut
                          ("qn" if qualname else "fn") + r"\x1b]0;PWNED\x07",
                          r"\u009b31m\u202eevil.py:"), "stack") is not None,
               name + ": function and file names show escaped in the stack pane")
        clean("stack pane")
        s.tmux.keys("c")
        s.wait(has("[y/N]"), "load question")
        s.tmux.keys("y")
        s.wait(has(">>>", "console inside process"), "console")
        s.tmux.type("import __main__; print(__main__.EVIL)")
        s.tmux.keys("Enter")
        s.tmux.type("__main__.G_EVIL")
        s.tmux.keys("Enter")
        TAP.ok(s.wait(lambda sc: console_line(evil)(sc) and console_line("<%s>" % evil)(sc),
                      "console output") is not None,
               name + ": console output and reprs show escaped")
        clean("console")
        s.tmux.keys("Escape")
        TAP.ok(s.wait(has("left the console", "py-" + evil + r"\nTraceback for thread 1"),
                      "python names") is not None,
               name + ": a Python thread name shows escaped, its line break too")
        clean("Python thread names")
        # the flame pane: its threads are asleep, so with their idle samples
        def named(sc):
            lines = flame_lines(sc)[2:]
            return (any(r"\x1b]0;PWN" in l for l in lines) and
                    any(r"n\x1b]0;PWNED\x07\x1b[2J\u009b31m" in l for l in lines))
        s.tmux.keys("F", "i")
        end = time.monotonic() + DEADLINE
        while time.monotonic() < end and not named(s.masked()):
            time.sleep(0.05)
        s.tmux.keys("z")    # frozen: a live screen may never hold still under load
        TAP.ok(s.wait(named, "flame") is not None,
               name + ": the flame pane shows thread and frame names escaped")
        clean("flame pane")
        s.tmux.keys("q")
        check_restored(s, name, 0)
        check_target(target, name, True)


# ---- live streams (issue 8): statements in the background -----------------

LATE_THREAD = ('execute "import threading, time; threading.Thread(target=time.sleep, args=(60,), '
               'name=\'fp-late\', daemon=True).start(); time.sleep(20)"')


def live_statement(target, workdir):
    """While `execute` sleeps 20 s in the target, the threads pane still
    refreshes (a thread the statement started shows up), `:getglobal`
    answers in its own output, and Esc interrupts only the statement."""
    tmux = Tmux(200, 40)
    try:
        s = Session(tmux, target, workdir)
        s.wait(has("Threads 5", "worker-c"), "open")
        s.tmux.keys("L")
        sc = s.wait(lambda x: "[y/N]" in x or "agent \u25cf" in x, "load question or agent")
        if sc and "[y/N]" in sc:
            s.tmux.keys("y")
        s.wait(has("agent \u25cf"), "agent loaded")
        s.tmux.type(":" + LATE_THREAD)
        s.tmux.keys("Enter")
        sc = s.wait(has("fp-late", "running in process"), "the statement's thread in the threads pane")
        TAP.ok(sc is not None, "live: while a statement runs, the threads pane refreshes "
               "(a thread it started appears)", tmux.capture())
        s.tmux.type(":getglobal __main__ NEVER")
        s.tmux.keys("Enter")
        sc = s.wait(has("TYPE:  threading.Event"), "getglobal answer")
        TAP.ok(sc is not None and "KeyboardInterrupt" not in sc,
               "live: :getglobal answers while the statement runs, which goes on", tmux.capture())
        s.tmux.keys("Escape")
        sc = s.wait(has("interrupting the statement"), "interrupting")
        TAP.ok(sc is not None and "TYPE:  threading.Event" in sc,
               "live: Esc interrupts the statement, not the TUI or the answer shown", tmux.capture())
        # KeyboardInterrupt waits for the sleep (a C call) to return: after 3 s
        # the TUI stops waiting for it, and says so; the rest goes on.
        sc = s.wait(has("did not stop within 3 s of KeyboardInterrupt"), "given up")
        TAP.ok(sc is not None and "TYPE:  threading.Event" in sc and "running (" not in sc,
               "live: a statement stuck in a C call is given up on after 3 s, the answer stays",
               tmux.capture())
        s.tmux.type(":getglobal __main__ NEVER -e target.is_set()")
        s.tmux.keys("Enter")
        TAP.ok(s.wait(has("False"), "after") is not None,
               "live: the session goes on after the interrupt", tmux.capture())
        s.tmux.keys("q")
        TAP.ok(s.finished()[0] == 0, "live statement: exit status 0")
    finally:
        tmux.kill()


def rss_kb(pid, field):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def big_output(target, workdir):
    """A statement printing 200,000 lines streams into the output pane,
    which keeps the newest 100,000 and says how many went; the client's
    memory stays bounded and keys still answer."""
    tmux = Tmux(200, 40)
    try:
        s = Session(tmux, target, workdir)
        s.wait(has("Threads", "agent \u25cf"), "open with the agent")
        pid = s.pid()
        before = rss_kb(pid, "VmRSS")
        s.tmux.type(':execute "for i in range(200000): print(i % 10)"')
        s.tmux.keys("Enter")
        sc = s.wait(has("execute: done"), "200,000 lines", deadline=60)
        # 1 heading + 200,000 lines in a store of 100,000 records
        TAP.ok(sc is not None and "100001 older lines dropped" in sc,
               "live: 200,000 lines: the output pane keeps 100,000 and says how many it dropped",
               tmux.capture())
        peak = rss_kb(pid, "VmHWM")
        TAP.ok(before is not None and peak is not None and peak - before < 64 * 1024,
               "live: client memory stays bounded (peak RSS grew %s kB)" % (
                   peak - before if peak and before else "?"))
        s.tmux.keys("G")
        sc = s.wait(has("100001 older lines dropped"), "G")
        rows = [m.group(1).strip() for m in re.finditer("^\u2502(.*)\u2502$", sc or "", re.M)]
        TAP.ok(rows[-3:] == ["7", "8", "9"],
               "live: keys answer after the stream (G shows the last lines 7 8 9)", tmux.capture())
        s.tmux.keys("q")
        TAP.ok(s.finished()[0] == 0, "big output: exit status 0")
    finally:
        tmux.kill()


def streams(exe, workdir):
    with torn_down("live streams"):
        target = Target(exe, workdir)
        live_statement(target, workdir)
        big_output(target, workdir)
        check_target(target, "live streams", True)


def mem_mask(screen):
    """The mem pane and the bars under it, with what varies from run to
    run masked: the sample count, the heap's totals and the trend's length
    (how many samples came).  The panes above show the agent's workers,
    whose number and state vary."""
    lines = screen.split("\n")
    top = [i for i, l in enumerate(lines)
           if re.match("\u250c\u2500 (Mem|Instances|Allocation)", l)]
    screen = "\n".join(lines[top[0]:]) if top else screen
    screen = re.sub(r"(Mem diff \(D: summary\) \u00b7 1 shown \u00b7 MemBlob \u00b7 ).*?(\u00b7 every)", r"\1<SAMPLES> \2",
                    screen)
    screen = re.sub(r"(Mem sites \u00b7 ).*?(\u00b7 every)", r"\1<SAMPLES> \2", screen)
    return re.sub(r" [\u2581-\u2588 ]{8} (__main__\.MemBlob)", r" <TREND>  \1", screen)


def executed(pid, code):
    """What `code` prints in the target (flight_profiler --cmd "execute ...")."""
    p = subprocess.run([BIN, str(pid), "--cmd", "execute " + code],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                       timeout=60)
    return p.stdout.strip()


def tracemalloc_tracing(pid):
    return executed(pid, "import tracemalloc; print(tracemalloc.is_tracing())")


def mem(version, exe, workdir, golden):
    """The mem pane on tests/targets/memgrow.py (1234 MemBlob, 777 more on
    request): M opens it (after the load question), \\ filters the types,
    the growth of MemBlob shows as +777 after the target grows, Enter shows
    instances as vmtool does, S shows the allocation site with its
    traceback and Enter opens its source; Esc closes the pane and with it
    tracemalloc; ? lists the pane's keys."""
    tmux = Tmux(120, 40)
    name = "CPython %s mem" % version
    grow = os.path.join(workdir, "grow")
    with torn_down(name, tmux):
        target = Target(exe, workdir, "memgrow.py", env={"MEM_GROW_FILE": grow})
        s = Session(tmux, target, workdir)
        s.wait(has("Threads 1"), "open")
        s.tmux.keys("M")
        s.wait(has("[y/N]"), "load question")
        s.tmux.keys("y")
        screen = s.wait(has("__main__.MemBlob", "sample 1,"), "first sample")
        row = re.search(r"\s(\d+)\s+\+0\s.*__main__\.MemBlob", screen or "")
        TAP.ok(row is not None and row.group(1) == "1234",
               "%s: M opens the mem pane: MemBlob counted exactly (1234)" % name, screen)
        mem_views(s, name)
        s.tmux.keys("+", "+", "+")      # every 0.625 s: the test's pace
        # a type named with terminal controls is drawn escaped, never raw
        s.tmux.keys("\\")
        s.tmux.type("Evil")
        s.tmux.keys("Enter")
        screen = s.wait(has("1 shown", "__main__.Evil\\x1b[2J\\x07 "), "hostile type")
        raw = s.tmux.capture(escapes=True)
        TAP.ok(screen is not None and "\x1b[2J" not in raw and "\x07" not in raw,
               "%s: a type name with terminal controls is shown escaped" % name, screen)
        s.tmux.keys("\\", "C-u")       # the prompt opens with the filter in force
        s.tmux.type("MemBlob")
        s.tmux.keys("Enter")
        s.wait(has("1 shown"), "filter")
        open(grow, "w").close()
        screen = s.wait(has("2011", "+777"), "growth")
        TAP.ok(screen is not None and re.search(r"2011\s+\+777\s", screen) is not None,
               "%s: after the target grows, MemBlob shows 2011 (+777) in the live diff" % name,
               screen)
        if golden:
            compare("mem/01-growth", mem_mask(screen or "(timed out)\n"))
        s.tmux.keys("Enter")
        screen = s.wait(has("Instances of __main__.MemBlob", "5 shown"), "instances")
        TAP.ok(screen is not None and screen.count("<__main__.MemBlob object at 0xADDR>") == 5,
               "%s: Enter on a type shows 5 instances as vmtool getInstances" % name, screen)
        if golden:
            compare("mem/02-instances", mem_mask(screen or "(timed out)\n"))
        s.tmux.keys("Escape", "S")
        s.wait(has("tracemalloc started"), "sites start")
        TAP.ok(tracemalloc_tracing(target.pid) == "True",
               "%s: S starts tracemalloc on the pane's connection" % name)
        open(grow, "w").close()
        with open(os.path.join(TARGETS, "memgrow.py")) as f:
            line = next(i for i, l in enumerate(f, 1) if "# the allocating line" in l)
        # 777 instances, with the generator's frame at the same line on 3.8-3.10
        screen = s.wait(lambda x: re.search(r"\+77[789] .*memgrow\.py:%d" % line, x)
                        is not None, "sites")
        TAP.ok(screen is not None, "%s: the sites view names the allocating line, +777" % name,
               screen)
        s.tmux.keys("Enter")
        screen = s.wait(has("Allocation site: traceback", "from /tmp/fptui.XXXXXXXX/memgrow.py:",
                            "memgrow.py:%d " % line, "HELD.extend"), "site")
        TAP.ok(screen is not None, "%s: Enter on a site: its traceback, and its source line "
               "in the source pane" % name, screen)
        if golden:
            compare("mem/03-site", mem_mask(screen or "(timed out)\n"))
        s.tmux.keys("?", "/")
        s.tmux.type("Mem pane")     # wherever its section is in the help
        s.tmux.keys("Enter")
        screen = s.wait(has("Mem pane (M)", "allocation sites (tracemalloc"), "help")
        TAP.ok(screen is not None, "%s: ? lists the mem pane's keys" % name, screen)
        s.tmux.keys("q")    # closes the help
        s.wait(lambda x: "q or Esc closes" not in x, "help closed")
        s.tmux.keys("Escape")   # ends the search the help left behind
        # M focuses the open pane; Esc goes back to the sites, then closes the
        # pane, and tracemalloc and the sampling with it
        s.tmux.keys("M", "Escape")
        s.wait(has("Mem sites", "FILE:LINE"), "back to the sites")
        s.tmux.keys("Escape")
        TAP.ok(s.wait(lambda x: "Mem sites" not in x and "Allocation site" not in x, "closed")
               is not None, "%s: M focuses the pane, Esc back to the sites, Esc closes it" % name,
               tmux.capture())
        end = time.monotonic() + DEADLINE
        while time.monotonic() < end and tracemalloc_tracing(target.pid) != "False":
            time.sleep(0.2)
        TAP.ok(tracemalloc_tracing(target.pid) == "False",
               "%s: closing the pane stops the tracemalloc it started" % name)
        s.tmux.keys("q")
        check_restored(s, name, 0)
        check_target(target, name, True)


def mem_views(s, name):
    """D: the summary (no growth columns) and back to the diff, each named in
    the title; T where torch is not imported: one line says so."""
    s.tmux.keys("D")
    screen = s.wait(has("Mem summary (D: diff)", "__main__.MemBlob"), "summary")
    row = re.search(r"\s(\d+)\s+[\d.]+ [KMG]?B\s+__main__\.MemBlob", screen or "")
    TAP.ok(screen is not None and row is not None and row.group(1) == "1234" and
           "GROWTH" not in screen and "TREND" not in screen,
           "%s: D shows the summary: counts and sizes, no growth columns" % name, screen)
    s.tmux.keys("D")
    screen = s.wait(has("Mem diff (D: summary)", "GROWTH", "TREND"), "diff")
    TAP.ok(screen is not None and re.search(r"1234\s+\+0\s.*__main__\.MemBlob", screen),
           "%s: D again: the diff, with its growth columns" % name, screen)
    s.tmux.keys("T")
    screen = s.wait(has("Torch modules", "torch is not loaded in this process"), "no torch")
    TAP.ok(screen is not None and "recording" not in screen,
           "%s: T without torch imported says so in one line" % name, screen)
    s.tmux.keys("T")
    s.wait(has("Mem diff (D: summary)", "__main__.MemBlob"), "back from torch")


def torch_hooks_left(pid):
    return executed(pid, "import __main__; print(__main__.hooks_left())")


def mem_torch(version, exe, workdir, golden):
    """T in the mem pane on tests/agent/targets/torch_target.py (a CPU
    training loop): `torch modules -n 3` recorded in the background, its
    table names the model's layers with forward and backward rows, > sorts
    it, the hooks are gone afterwards and T returns to the types.  While
    the loop is paused the recording waits: Esc cancels it (the hooks go,
    the pane is back on the types), and D then T leave it running."""
    name = "CPython %s mem torch" % version
    if subprocess.run([exe, "-c", "import torch"], stdout=subprocess.DEVNULL,
                      stderr=subprocess.DEVNULL).returncode != 0:
        TAP.skip(name, "torch is not importable by %s" % exe)
        return
    tmux = Tmux(120, 40)
    pause = os.path.join(workdir, "pause")
    with torn_down(name, tmux):
        target = Target(exe, workdir, "torch_target.py", srcdir=os.path.join(
            SRC, "tests", "agent", "targets"), env={
                "TORCH_LOSS_FILE": os.path.join(workdir, "loss"),
                "TORCH_STOP_FILE": os.path.join(workdir, "stop"), "TORCH_PAUSE_FILE": pause})
        s = Session(tmux, target, workdir)
        s.wait(has("Threads"), "open")
        s.tmux.keys("M")
        s.wait(has("[y/N]"), "load question")
        s.tmux.keys("y")
        s.wait(has("Mem diff", "sample 1,"), "first sample")
        open(pause, "w").close()
        s.tmux.keys("T")
        screen = s.wait(has("Torch modules · recording 3 steps…", "modules hooked; Esc cancels"),
                        "recording")
        hooked = torch_hooks_left(target.pid)
        TAP.ok(screen is not None and hooked not in ("", "0"),
               "%s: T records in the background: the pane says so, the hooks are in (%s)" % (
                   name, hooked), screen)
        s.tmux.keys("Escape")
        screen = s.wait(has("Mem diff (D: summary)", "torch modules: cancelled"), "cancelled")
        end = time.monotonic() + DEADLINE   # the agent sees the cancel within 20 ms
        while time.monotonic() < end and torch_hooks_left(target.pid) != "0":
            time.sleep(0.2)
        TAP.ok(screen is not None and torch_hooks_left(target.pid) == "0",
               "%s: Esc cancels the recording: the hooks are removed" % name, screen)
        s.tmux.keys("T")
        s.wait(has("Torch modules · recording 3 steps…", "modules hooked"), "recording again")
        s.tmux.keys("D")    # the types while it records; T goes back to the same recording
        s.wait(has("Mem summary (D: diff)"), "summary while recording")
        s.tmux.keys("T")
        screen = s.wait(has("Torch modules · recording 3 steps…", "modules hooked"), "again")
        TAP.ok(screen is not None and "still waiting" not in screen,
               "%s: D leaves the recording running, T shows it again" % name, screen)
        os.unlink(pause)
        screen = s.wait(has("Torch modules · 3 steps of Model", "MODULE", "Model.head"),
                        "torch table", deadline=60)
        rows = set(re.findall(r"\s(forward|backward)\s+(\S+)\s", screen or ""))
        want = {(st, m) for st in ("forward", "backward")
                for m in ("Model.fc1", "Model.fc2", "Model.head", "Model")}
        TAP.ok(want <= rows, "%s: T shows torch modules: the layers' forward and backward "
               "rows" % name, screen)
        calls = re.search(r"\s(\d+)\s+[\d.]+\s+[\d.]+\s+[\d.]+%.*forward\s+Model\.fc1\s",
                          screen or "")
        TAP.ok(calls is not None and calls.group(1) == "3",
               "%s: each layer ran once a step: 3 forward calls of fc1" % name, screen)
        TAP.ok(torch_hooks_left(target.pid) == "0",
               "%s: the hooks are removed once the table is shown" % name)
        s.tmux.keys(">")
        screen = s.wait(has("sorted by TOTAL ms", "TOTAL ms\u25bc"), "sorted")
        totals = [float(x) for x in re.findall(r"\s\d+\s+[\d.]+\s+([\d.]+)\s+[\d.]+%",
                                                screen or "")]
        TAP.ok(screen is not None and len(totals) >= 8 and totals == sorted(totals, reverse=True),
               "%s: > sorts the torch table by total time" % name, screen)
        s.tmux.keys("T")
        screen = s.wait(has("Mem summary (D: diff)", "COUNT"), "back to the types")
        TAP.ok(screen is not None and "Torch modules" not in screen,
               "%s: T again returns to the types" % name, screen)
        s.tmux.keys("q")
        check_restored(s, name, 0)
        check_target(target, name, True)


def golden_version():
    with open(os.path.join(GOLDEN, "PYTHON")) as f:
        return f.read().strip()


@contextlib.contextmanager
def torn_down(name, tmux=None):
    """A scenario's body: a RuntimeError (a target that never got ready, a
    session that never opened) fails `name`; whatever happens, the tmux is
    killed and every Target started inside is stopped, its agent directory
    removed."""
    first = len(Target.started)
    try:
        yield
    except RuntimeError as e:
        TAP.ok(False, name, str(e))
    finally:
        if tmux is not None:
            tmux.kill()
        for target in Target.started[first:]:
            target.stop()
            shutil.rmtree("/tmp/.flight_profiler-%d" % target.pid, ignore_errors=True)
        del Target.started[first:]


def scenario(fn, *args):
    """Run one scenario: an unexpected exception in it (a harness bug, or
    a target that never became ready) fails that scenario, not the run."""
    try:
        fn(*args)
    except Exception as e:
        TAP.ok(False, "%s: harness" % fn.__name__,
               "%s: %s\n%s" % (type(e).__name__, e, traceback.format_exc()))


def only(*fns):
    """tuitest.py NAME [VERSION...]: only these scenarios, on the given
    interpreters (all by default); each is called (version, exe, workdir,
    on_golden_version)."""
    golden, want = golden_version(), sys.argv[2:]
    workdir = tempfile.mkdtemp(prefix="fptui.", dir="/tmp")
    try:
        for version, exe in pythons():
            if not want or version in want:
                for fn in fns:
                    scenario(fn, version, exe, workdir, version == golden)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def screens():
    if shutil.which("tmux") is None:
        TAP.skip("TUI screens", "tmux is not installed (apt-get install tmux)")
        return
    if not os.access(BIN, os.X_OK):
        TAP.ok(False, "binary", "%s is not built" % BIN)
        return
    with open(os.path.join(GOLDEN, "PYTHON")) as f:
        want = f.read().strip()
    found = [exe for version, exe in pythons() if version == want]
    # /tmp/fptui.XXXXXXXX: a fixed length, so masking keeps the columns
    workdir = tempfile.mkdtemp(prefix="fptui.", dir="/tmp")
    try:
        if found:
            exe = found[0]
            scenario(golden_run, exe, workdir, 80, 24, (100, 30))
            scenario(golden_run, exe, workdir, 200, 50, (120, 40))
            scenario(agent_run, exe, workdir, 80, 24)
            scenario(agent_run, exe, workdir, 200, 50)
            for fn in (more_keys, newuser, streams, signals, target_exits, tt_pane,
                       watch_target_exits):
                scenario(fn, exe, workdir)
            scenario(watch_give_up, want, exe, workdir)
            scenario(hostile, want, exe, workdir)
            scenario(procs_changes, want, exe, workdir)
            scenario(flame, want, exe, workdir, True)
            scenario(mem, want, exe, workdir, True)
            for version, exe in pythons():
                if exe == "/usr/bin/python3.11":   # Debian's, with python3-torch
                    scenario(mem_torch, version, exe, workdir, False)
        else:
            TAP.skip("golden screens", "CPython %s is not configured (goldens are made with it)" % want)
        for version, exe in pythons():
            for fn in (smoke, names_smoke, agent_smoke, trace_pane, trace_background, watch_pane,
                       monitor_pane):
                scenario(fn, version, exe, workdir)
            if version != want:
                scenario(flame, version, exe, workdir, False)
            scenario(flame_modes, version, exe, workdir)
        # the processes pane on the oldest, the goldens' and the newest CPython
        found = pythons()
        for version, exe in found:
            if version in (found[0][0], want, found[-1][0]):
                scenario(procs_pane, version, exe, workdir)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def hostile_only():
    """tuitest.py hostile: only the hostile-names screens, on every interpreter."""
    if shutil.which("tmux") is None:
        TAP.skip("hostile names", "tmux is not installed")
        return
    workdir = tempfile.mkdtemp(prefix="fptui.", dir="/tmp")
    try:
        for version, exe in pythons():
            hostile(version, exe, workdir)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


# ---- line mode and --cmd ------------------------------------------------------

def run(argv, stdin=None, env=None):
    p = subprocess.run(argv, input=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       env=env, timeout=60)
    return p.returncode, p.stdout, p.stderr


def linemode():
    found = pythons()
    if not found:
        TAP.ok(False, "line mode", "no interpreter in %s" % PYTHONS)
        return
    version, exe = found[-1]
    workdir = tempfile.mkdtemp(prefix="fptui.", dir="/tmp")
    env = dict(os.environ, XDG_STATE_HOME=os.path.join(workdir, "state"), TERM="xterm")
    target = None
    try:
        target = Target(exe, workdir)
        pid = str(target.pid)
        saved = os.path.join(workdir, "saved.txt")
        commands = ["help", "help stack", "stack", "bogus", "stack --nope", "help nope",
                    "stack -f " + saved, "stack 1"]
        for cmd in commands:
            c_rc, c_out, c_err = run([BIN, pid, "--cmd", cmd], env=env)
            l_rc, l_out, l_err = run([BIN, pid], stdin=(cmd + "\n").encode(), env=env)
            TAP.ok((c_rc, c_out, c_err) == (l_rc, l_out, l_err),
                   "line mode prints what --cmd prints: %r" % cmd,
                   "--cmd: rc %d\n%s%s\nline mode: rc %d\n%s%s" % (
                       c_rc, c_out.decode(errors="replace"), c_err.decode(errors="replace"),
                       l_rc, l_out.decode(errors="replace"), l_err.decode(errors="replace")))
        # An empty line at the prompt does nothing; an empty --cmd is a mistake.
        TAP.ok(run([BIN, pid], stdin=b"\n", env=env) == (0, b"", b""),
               "line mode: an empty line does nothing")
        TAP.ok(run([BIN, pid, "--cmd", ""], env=env)[:2] == (2, b""),
               "an empty --cmd is a usage error")
        # several commands: the concatenation, and the last one's status
        script = "help\nstack\nbogus\n"
        outs, errs, rc = b"", b"", 0
        for cmd in script.split("\n")[:-1]:
            rc, o, e = run([BIN, pid, "--cmd", cmd], env=env)
            outs, errs = outs + o, errs + e
        got = run([BIN, pid], stdin=script.encode(), env=env)
        TAP.ok(got == (rc, outs, errs), "a script in line mode = the same --cmd runs in a row")
        # TERM=dumb on a terminal: line mode with the prompt
        if shutil.which("tmux"):
            tmux = Tmux(250, 60)
            try:
                tmux.type("export XDG_STATE_HOME=%s/state; clear; TERM=dumb %s %s; echo rc=$?"
                          % (workdir, BIN, pid))
                tmux.keys("Enter")
                end = time.monotonic() + DEADLINE
                while time.monotonic() < end and "flight_profiler %s> " % pid not in tmux.capture():
                    time.sleep(0.05)
                tmux.type("help")
                tmux.keys("Enter")
                _, want, _ = run([BIN, pid, "--cmd", "help"], env=env)
                end = time.monotonic() + DEADLINE
                screen = ""
                while time.monotonic() < end:
                    screen = tmux.capture()
                    if screen.count("flight_profiler %s> " % pid) >= 2:
                        break
                    time.sleep(0.05)
                lines = [ln.rstrip() for ln in screen.split("\n")]
                body = lines[lines.index("flight_profiler %s> help" % pid) + 1:] \
                    if "flight_profiler %s> help" % pid in lines else []
                TAP.ok("\n".join(body).startswith(want.decode().rstrip("\n")),
                       "TERM=dumb on a terminal: a prompt, and the same text", screen)
                tmux.keys("Up")
                time.sleep(0)
                end = time.monotonic() + DEADLINE
                while time.monotonic() < end and not tmux.capture().rstrip().endswith("> help"):
                    time.sleep(0.05)
                TAP.ok(tmux.capture().rstrip().endswith("> help"), "Up recalls history in line mode",
                       tmux.capture())
                tmux.keys("C-u", "C-d")
                end = time.monotonic() + DEADLINE
                while time.monotonic() < end and "rc=0" not in tmux.capture():
                    time.sleep(0.05)
                TAP.ok("rc=0" in tmux.capture(), "Ctrl-D leaves line mode", tmux.capture())
            finally:
                tmux.kill()
    except RuntimeError as e:
        TAP.ok(False, "line mode", str(e))
    finally:
        if target:
            target.stop()
        shutil.rmtree(workdir, ignore_errors=True)


def newuser_only():
    """The issue-8 checks alone, on the goldens' CPython (for iterating)."""
    with open(os.path.join(GOLDEN, "PYTHON")) as f:
        want = f.read().strip()
    found = [exe for version, exe in pythons() if version == want]
    workdir = tempfile.mkdtemp(prefix="fptui.", dir="/tmp")
    try:
        newuser(found[0], workdir)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def streams_only(every=False):
    """The live-stream checks alone, on the goldens' CPython (for
    iterating), or with `streams-all` on every configured one."""
    with open(os.path.join(GOLDEN, "PYTHON")) as f:
        want = f.read().strip()
    found = [exe for version, exe in pythons() if every or version == want]
    workdir = tempfile.mkdtemp(prefix="fptui.", dir="/tmp")
    try:
        for exe in found:
            streams(exe, workdir)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def main():
    what = sys.argv[1] if len(sys.argv) > 1 else "screens"
    try:
        {"screens": screens, "linemode": linemode, "newuser": newuser_only,
         "hostile": hostile_only, "streams": streams_only,
         "trace": lambda: only(lambda v, exe, wd, g: trace_pane(v, exe, wd),
                               lambda v, exe, wd, g: trace_background(v, exe, wd)),
         "streams-all": lambda: streams_only(True),
         "flame": lambda: only(lambda v, exe, wd, g: flame(v, exe, wd, True),
                               lambda v, exe, wd, g: flame_modes(v, exe, wd)),
         "mem": lambda: only(mem, mem_torch), "watch": watch_only,
         "procs": procs_only}[what]()
    except Exception as e:  # a harness bug must show as a failure, not a pass
        TAP.ok(False, "harness", "%s: %s" % (type(e).__name__, e))
    TAP.done()
    return 0


if __name__ == "__main__":
    sys.exit(main())
