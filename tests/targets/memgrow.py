"""Target of the mem pane's TUI scenario: 1234 instances of MemBlob held in
a list, and 3 of a class whose name holds terminal controls; when the file named by MEM_GROW_FILE appears, the main thread
removes it and appends 777 more (one allocating line).  The main thread
parks in time.sleep between looks."""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _fptarget import signal_ready  # noqa: E402


class MemBlob:
    __slots__ = tuple("f%d" % i for i in range(20))


HELD = [MemBlob() for _ in range(1234)]
# A type whose name would clear the screen and ring the bell if drawn raw.
Evil = type("Evil\x1b[2J\x07", (), {})
EVIL = [Evil() for _ in range(3)]


def grow():
    HELD.extend(MemBlob() for _ in range(777))  # the allocating line


def main():
    grow_file = os.environ.get("MEM_GROW_FILE", "")
    signal_ready()
    while True:
        time.sleep(0.02)
        if grow_file and os.path.exists(grow_file):
            os.unlink(grow_file)
            grow()


main()
