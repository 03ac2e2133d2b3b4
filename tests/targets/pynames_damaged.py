"""Target: threading's registry damaged as FP_DAMAGE says, with two
threads named only in Python ("erster", "zweiter") parked for good:

    keys       _active's keys pointer aims at unmapped memory
    nentries   _active's keys object claims 2**40 entries
    notdict    threading._active is a list
    nomodule   sys.modules has no 'threading'

The damage to memory is done with ctypes after every thread has started
and nothing of threading runs any more (the garbage collector is off), so
the target lives on; a reader must show the OS names and say nothing.
"""

import _thread
import ctypes
import gc
import os
import sys
import threading

from _fptarget import signal_ready

RAW_LOCK = _thread.allocate_lock()
RAW_LOCK.acquire()
WORD = ctypes.sizeof(ctypes.c_void_p)
# PyDictObject: PyObject_HEAD, ma_used, a 64-bit version/watcher tag, then
# ma_keys (every version 3.8–3.13); checked below before any write.
MA_KEYS = 2 * WORD + 8 + 8


def worker(started):
    started.release()
    RAW_LOCK.acquire()


def keys_of(d):
    return ctypes.c_void_p.from_address(id(d) + MA_KEYS)


def check_layout():
    """Empty dicts share one static keys object; a full one has its own."""
    a, b, c = {}, {}, {1: 2}
    if not (keys_of(a).value == keys_of(b).value != keys_of(c).value):
        sys.stderr.write("pynames_damaged: unexpected dict layout\n")
        os._exit(3)


def nentries_of(keys):
    """dk_nentries: after dk_refcnt, dk_size and dk_lookup (3.8–3.10), or
    after dk_refcnt, the byte fields and dk_usable (3.11+)."""
    index = 4 if sys.version_info < (3, 11) else 3
    return ctypes.c_ssize_t.from_address(keys + index * WORD)


def main():
    damage = os.environ["FP_DAMAGE"]
    for name in ("erster", "zweiter"):
        started = _thread.allocate_lock()
        started.acquire()
        threading.Thread(target=worker, args=(started,), name=name, daemon=True).start()
        started.acquire()
    gc.disable()
    check_layout()
    active = threading._active
    if damage == "keys":
        keys_of(active).value = 0x100000000000
    elif damage == "nentries":
        count = nentries_of(keys_of(active).value)
        if count.value != len(active):
            sys.stderr.write("pynames_damaged: dk_nentries not where expected\n")
            os._exit(3)
        count.value = 1 << 40
    elif damage == "notdict":
        threading._active = [1, 2, 3]
    elif damage == "nomodule":
        del sys.modules["threading"]
    signal_ready()
    RAW_LOCK.acquire()


if __name__ == "__main__":
    main()
