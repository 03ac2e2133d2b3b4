"""Target: the simplest one — the main thread parked in Event.wait.

Kept free of anything newer than Python 3.7, so that the test for an
unsupported interpreter version can start it on 3.7.
"""

import threading

from _fptarget import Spot, announce_when_parked

NEVER = threading.Event()


def idle():
    NEVER.wait()  # @idle


if __name__ == "__main__":
    announce_when_parked([Spot(threading.main_thread(), __file__, "idle")])
    idle()
