"""Target: the main thread recurses exactly DEPTH frames deep into recurse()
and blocks in the innermost one.

The stack then holds DEPTH frames of recurse(): DEPTH - 1 at @recurse and
the innermost at @bottom.
"""

import threading

from _fptarget import Spot, announce_when_parked

DEPTH = 200
NEVER = threading.Event()


def recurse(depth):
    if depth > 1:
        return recurse(depth - 1)  # @recurse
    NEVER.wait()  # @bottom


def main():
    bottom = Spot(threading.main_thread(), __file__, "bottom")

    def full_depth():
        depth = sum(1 for f in bottom.frames() if f.f_code.co_name == "recurse")
        if depth != DEPTH:
            return "recursion is %d deep, not %d" % (depth, DEPTH)
        return None

    announce_when_parked([bottom], full_depth)
    recurse(DEPTH)


if __name__ == "__main__":
    main()
