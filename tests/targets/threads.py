"""Target: three named worker threads and the main thread, each parked at a
known line in its own function.

    worker-a  sleeper()    in time.sleep
    worker-b  waiter()     in threading.Event.wait
    worker-c  receiver()   in socket.recv on a socketpair
    MainThread main_wait() in threading.Event.wait
    fp-ready  the announcer (see _fptarget.py)

Each worker also names its OS thread, so the outside view shows the name.
"""

import socket
import threading
import time

from _fptarget import Spot, announce_when_parked, name_os_thread

NEVER = threading.Event()
SOCKETS = socket.socketpair()  # nothing is ever sent: recv blocks for good


def sleeper():
    name_os_thread()
    time.sleep(3600)  # @sleep


def waiter():
    name_os_thread()
    NEVER.wait()  # @wait


def receiver():
    name_os_thread()
    SOCKETS[1].recv(1)  # @recv


def main_wait():
    NEVER.wait()  # @main


def main():
    workers = [
        threading.Thread(target=sleeper, name="worker-a", daemon=True),
        threading.Thread(target=waiter, name="worker-b", daemon=True),
        threading.Thread(target=receiver, name="worker-c", daemon=True),
    ]
    for thread in workers:
        thread.start()
    spots = [Spot(workers[0], __file__, "sleep"),
             Spot(workers[1], __file__, "wait"),
             Spot(workers[2], __file__, "recv"),
             Spot(threading.main_thread(), __file__, "main")]
    announce_when_parked(spots)
    main_wait()


if __name__ == "__main__":
    main()
