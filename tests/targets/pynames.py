"""Target: threads named only in Python, never as OS threads (CPython before
3.14 does not name them, and nothing here writes /proc/.../comm):

    загрузчик-1    threading.Thread(name=...), Cyrillic (2-byte str)
    数据            threading.Thread(name=...), CJK (2-byte str)
    café-ü         threading.Thread(name=...), Latin-1 (1-byte, not ASCII)
    after-rename   started as "before-rename", renamed once running
    Dummy-N        a _thread thread that asked threading.current_thread()
    (OS name)      a _thread thread threading never heard of
    (OS name)      a Thread whose _name is not a str (an int)
    (OS name)      a Thread whose _name is 100,000 characters long
    MainThread
    держатель-GIL  holds the GIL for good once the others are parked (as
                   gil_hog.py does), so the GIL holder has a Python name

Before saying ready the target prints one JSON line on stdout: {native
thread id: the Python name a reader should show, or null for "its OS name"}.
"""

import _thread
import json
import re
import sys
import threading

from _fptarget import Spot, signal_ready, wait_until_parked

NEVER = threading.Event()
RAW_LOCK = _thread.allocate_lock()
RAW_LOCK.acquire()  # never released: raw threads block on it for good
BACKTRACKER = re.compile(r"(a+)+$")
SUBJECT = "a" * 40 + "b"


class RawThread:
    """What Spot needs of a thread threading may not know."""

    def __init__(self):
        self.ident = None
        self.native_id = None
        self.name = "raw"
        self.started = _thread.allocate_lock()
        self.started.acquire()


def worker():
    NEVER.wait()  # @worker


def raw_plain(me):
    me.ident = _thread.get_ident()
    me.native_id = threading.get_native_id()
    me.started.release()
    RAW_LOCK.acquire()  # @raw


def raw_dummy(me):
    me.ident = _thread.get_ident()
    me.native_id = threading.get_native_id()
    me.name = threading.current_thread().name  # registers a _DummyThread
    me.started.release()
    RAW_LOCK.acquire()  # @dummy


def hog(spots):
    wait_until_parked(spots)
    signal_ready(keep_gil=True)
    BACKTRACKER.match(SUBJECT)  # @regex


def main():
    names = ["загрузчик-1", "数据", "café-ü", "before-rename", "bad-int", "bad-long"]
    threads = [threading.Thread(target=worker, name=n, daemon=True) for n in names]
    for t in threads:
        t.start()
    threads[3].name = "after-rename"
    threads[4]._name = 12345
    threads[5].name = "y" * 100000
    plain, dummy = RawThread(), RawThread()
    _thread.start_new_thread(raw_plain, (plain,))
    _thread.start_new_thread(raw_dummy, (dummy,))
    plain.started.acquire()
    dummy.started.acquire()
    spots = [Spot(t, __file__, "worker") for t in threads]
    spots += [Spot(plain, __file__, "raw"), Spot(dummy, __file__, "dummy"),
              Spot(threading.main_thread(), __file__, "main")]
    holder = threading.Thread(target=hog, args=(spots,), name="держатель-GIL", daemon=True)
    holder.start()
    expect = {t.native_id: t.name for t in threads[:4]}
    expect.update({t.native_id: None for t in threads[4:]})
    expect[threading.main_thread().native_id] = "MainThread"
    expect[dummy.native_id] = dummy.name
    expect[plain.native_id] = None
    expect[holder.native_id] = holder.name
    sys.stdout.write(json.dumps(expect) + "\n")
    sys.stdout.flush()
    NEVER.wait()  # @main


if __name__ == "__main__":
    main()
