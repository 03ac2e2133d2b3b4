"""Target: a thread that holds the GIL for good inside one long C call.

The "gil-hog" thread runs a catastrophically backtracking regular
expression: (a+)+$ against forty a's and a b tries about 2**40 ways to
split the a's, and the regex engine never lets go of the GIL while it does.
The main thread parks in join() first; the hog checks that, writes the
ready line without letting go of the GIL, and goes straight into the match
(so a reader may, for a very short moment, still see it on the line before,
but never without the GIL).

The pattern is compiled beforehand so that the innermost Python frame of the
hog is this file's @regex line, not re.match() inside the re module.
"""

import re
import threading

from _fptarget import Spot, name_os_thread, signal_ready, wait_until_parked

BACKTRACKER = re.compile(r"(a+)+$")
SUBJECT = "a" * 40 + "b"


def hog():
    name_os_thread()
    wait_until_parked([Spot(threading.main_thread(), __file__, "join")])
    signal_ready(keep_gil=True)
    BACKTRACKER.match(SUBJECT)  # @regex


def main():
    thread = threading.Thread(target=hog, name="gil-hog", daemon=True)
    thread.start()
    thread.join()  # @join


if __name__ == "__main__":
    main()
