"""Parse the text that `flight_profiler <pid> --cmd "stack ..."` prints.

    Process 4242: python3 threads.py
    Python v3.12.1 (/root/.pyenv/versions/3.12.1/lib/libpython3.12.so.1.0)

    Traceback for thread 4243 (worker-a) [Idle] (most recent call last):
        File "/abs/path/threads.py", line 20, in run_a
            time.sleep(3600)  # @sleep

With --native every frame line starts with "(Python) " or "(C) ", and C
frames end with "(<module basename>)".  A thread may also carry notes, lines
in parentheses at frame indentation, such as "    (no Python frames)" or
"    (stack cut short: <why>)".  The parser is strict otherwise: a line it
does not expect is an error, because the format is part of the interface.
"""

import re
from dataclasses import dataclass, field
from typing import List, Optional

STATUSES = ("Has the GIL", "Waiting for the GIL", "Idle", "Running")

_PROCESS = re.compile(r"^Process (\d+): (.*)$")
_PYTHON = re.compile(r"^Python v(\S+) \((.*)\)$")
_THREAD = re.compile(
    r"^Traceback for thread (\d+|0x[0-9a-f]+) \((.*)\) \[(%s)\]( \[partial\])? \(most recent call last\):$"
    % "|".join(re.escape(s) for s in STATUSES))
_PY_FRAME = re.compile(r'^    (\(Python\) )?File "(.*)", line (\d+), in (.+)$')
_C_FRAME = re.compile(r'^    \(C\) File "(.*)", line (\d+), in (.+) \(([^()]*)\)$')
_SOURCE = re.compile(r"^        (\S.*)$")
_NOTE = re.compile(r"^    \(((?!Python\) |C\) ).*)\)$")


class StackFormatError(AssertionError):
    """The output does not follow the documented format."""


@dataclass
class Frame:
    kind: str            # "py" for a Python frame, "c" for a native one
    file: str
    line: int
    function: str
    module: Optional[str] = None   # C frames: basename of the ELF module
    source: Optional[str] = None   # the source line, when it was shown
    tagged: bool = False           # written with a "(Python) " or "(C) " prefix

    @property
    def where(self):
        """(function, line): what the tests usually compare."""
        return (self.function, self.line)


@dataclass
class Thread:
    tid: int
    name: str
    status: str
    frames: List[Frame] = field(default_factory=list)
    notes: List[str] = field(default_factory=list)   # "(...)" lines, unwrapped
    partial: bool = False          # "[partial]": the stack changed while read

    @property
    def python_frames(self):
        return [f for f in self.frames if f.kind == "py"]

    @property
    def native_frames(self):
        return [f for f in self.frames if f.kind == "c"]

    def frames_in(self, path):
        """Python frames whose file is path, outermost first."""
        return [f for f in self.python_frames if f.file == path]


@dataclass
class StackDump:
    pid: int
    command_line: str
    python_version: str
    python_library: str
    threads: List[Thread]

    def thread(self, tid=None, name=None):
        """The one thread with this tid or name (an AssertionError otherwise)."""
        found = [t for t in self.threads
                 if (tid is None or t.tid == tid) and (name is None or t.name == name)]
        if len(found) != 1:
            raise AssertionError(
                "expected one thread with tid=%s name=%s, found %d among: %s"
                % (tid, name, len(found),
                   ", ".join("%d (%s)" % (t.tid, t.name) for t in self.threads)))
        return found[0]


def parse(text):
    """Parse a whole `stack` dump into a StackDump."""
    lines = text.split("\n")
    while lines and lines[-1] == "":
        lines.pop()

    def fail(number, why):
        raise StackFormatError("stack output line %d: %s: %r\n--- full output ---\n%s"
                               % (number + 1, why, lines[number] if number < len(lines) else "",
                                  text))

    if len(lines) < 2:
        fail(len(lines), "too short for the two header lines")
    process = _PROCESS.match(lines[0]) or fail(0, "expected 'Process <pid>: <command line>'")
    python = _PYTHON.match(lines[1]) or fail(1, "expected 'Python v<version> (<library>)'")
    dump = StackDump(int(process.group(1)), process.group(2),
                     python.group(1), python.group(2), [])

    thread = None
    previous_blank = False
    for number in range(2, len(lines)):
        line = lines[number]
        if line == "":
            previous_blank = True
            continue
        m = _THREAD.match(line)
        if m:
            if not previous_blank:
                fail(number, "a thread must follow a blank line")
            # A Python thread matched to no OS thread shows its pthread_t in hex.
            thread = Thread(int(m.group(1), 0), m.group(2), m.group(3), partial=bool(m.group(4)))
            dump.threads.append(thread)
            previous_blank = False
            continue
        if previous_blank or thread is None:
            fail(number, "expected 'Traceback for thread <tid> (<name>) [<status>] "
                         "(most recent call last):'")
        m = _C_FRAME.match(line)
        if m:
            thread.frames.append(Frame("c", m.group(1), int(m.group(2)), m.group(3),
                                       module=m.group(4), tagged=True))
            continue
        m = _PY_FRAME.match(line)
        if m:
            thread.frames.append(Frame("py", m.group(2), int(m.group(3)), m.group(4),
                                       tagged=m.group(1) is not None))
            continue
        m = _NOTE.match(line)
        if m:
            thread.notes.append(m.group(1))
            continue
        m = _SOURCE.match(line)
        if m:
            if not thread.frames or thread.frames[-1].source is not None:
                fail(number, "a source line must follow a frame line")
            thread.frames[-1].source = m.group(1)
            continue
        fail(number, "not a frame, source or thread line")
    return dump

