"""Target of the mem tests: BASE instances of MemBlob held in a list, and
more of them on request.  The test controls the points: when the file
named by MEM_GROW_FILE appears, the main thread removes it and appends
GROW more instances; when MEM_EXIT_FILE appears, the process exits with
status 0.  The main thread parks in time.sleep between looks."""

import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "targets"))
from _fptarget import signal_ready  # noqa: E402

BASE = 1234
GROW = 777


class MemBlob:
    # Twenty slots: each instance outweighs the list slot that holds it.
    __slots__ = tuple("f%d" % i for i in range(20))


HELD = [MemBlob() for _ in range(BASE)]


def grow():
    HELD.extend(MemBlob() for _ in range(GROW))  # the allocating line


def main():
    grow_file = os.environ.get("MEM_GROW_FILE", "")
    exit_file = os.environ.get("MEM_EXIT_FILE", "")
    signal_ready()
    while True:
        time.sleep(0.02)
        if grow_file and os.path.exists(grow_file):
            os.unlink(grow_file)
            grow()
        if exit_file and os.path.exists(exit_file):
            os._exit(0)


main()
