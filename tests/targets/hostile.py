"""A target whose every name, value and message tries to drive the terminal
of whoever looks at it: ESC ] 0 (retitle), ESC [ 2 J (clear), BEL, the C1
control U+009B (CSI on some terminals), U+202E (bidi override), and a line
break that would forge a line of the dump.

- G_EVIL (a __repr__ returning it), G_EVIL_LIST (nested, for -x), G_TEXT
  (a str with a backslash: Python's repr escapes it, and so must we show
  exactly that repr), RAISES (module __getattr__ raising it);
- Hostile: a class whose __qualname__ and attribute names hold it, with
  two instances (vmtool);
- a module in sys.modules named with it, whose __file__ is this file;
- thread "py-EVIL" (Python name, read from outside as threading holds
  it), parked in a function whose co_name, co_qualname and co_filename
  hold EVIL (code.replace), with a local `payload`;
- a thread started by _thread (threading does not know it, so its OS
  name shows) whose OS name (/proc comm) holds ESC, BEL and UTF-8 U+009B;
- an asyncio loop with a task named with it.

Nothing is printed.  Runs on CPython 3.8 and later (code.replace,
create_task(name=)).
"""

import _thread
import asyncio
import os
import sys
import threading
import time
import types

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _fptarget import Spot, announce_when_parked  # noqa: E402

EVIL = "\x1b]0;PWNED\x07\x1b[2J\u009b31m\u202eevil"
FORGED = EVIL + "\nTraceback for thread 1 (forged)"
OS_NAME = b"\x1b]0;PWN\x07\xc2\x9b"  # 10 of the 15 bytes a comm holds


class Evil(object):
    def __repr__(self):
        return "<" + EVIL + ">"


G_EVIL = Evil()
G_EVIL_LIST = [Evil(), {"k": Evil()}]
G_TEXT = "back\\slash \x1b[2J tab\t \u009b"

Hostile = type("Hostile" + EVIL, (object,), {})
INSTANCES = [Hostile(), Hostile()]
for _obj in INSTANCES:
    setattr(_obj, "attr" + EVIL, Evil())

_mod = types.ModuleType("evil")
_mod.__file__ = os.path.abspath(__file__)
sys.modules["mod" + EVIL] = _mod


def __getattr__(name):  # PEP 562: getglobal __main__ RAISES
    if name == "RAISES":
        raise ValueError("raised " + FORGED)
    raise AttributeError(name)


def parked():
    payload = Evil()
    while True:
        time.sleep(3600)  # @evil
    return payload


_renames = {"co_name": "fn" + EVIL, "co_filename": "/nonexistent/" + EVIL + ".py"}
if sys.version_info >= (3, 11):
    _renames["co_qualname"] = "qn" + EVIL
evil_function = types.FunctionType(parked.__code__.replace(**_renames), globals())
EVIL_LINE = Spot(threading.main_thread(), os.path.abspath(__file__), "evil").line


class EvilSpot(object):
    """A Spot for the thread parked in evil_function (its file does not exist)."""

    def __init__(self, thread):
        self.thread = thread

    def problem(self):
        frame = sys._current_frames().get(self.thread.ident)
        if frame is None or frame.f_code.co_filename != _renames["co_filename"]:
            return "the evil thread has not reached its function"
        if frame.f_lineno != EVIL_LINE:
            return "the evil thread is at line %d" % frame.f_lineno
        with open("/proc/self/task/%d/stat" % self.thread.native_id) as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
        return None if state == "S" else "the evil thread is in state %s" % state


def evil_thread():
    evil_function()


raw = {}


def os_named_thread():
    """Not a threading.Thread: no Python name, so its OS name is shown."""
    raw["ident"], raw["tid"] = _thread.get_ident(), threading.get_native_id()
    with open("/proc/self/task/%d/comm" % raw["tid"], "wb") as f:
        f.write(OS_NAME)
    while True:
        time.sleep(3600)  # @raw


class RawSpot(object):
    """The _thread thread, parked at @raw."""

    line = Spot(threading.main_thread(), os.path.abspath(__file__), "raw").line

    def problem(self):
        frame = sys._current_frames().get(raw.get("ident"))
        if frame is None or frame.f_lineno != self.line:
            return "the _thread thread has not reached @raw"
        with open("/proc/self/task/%d/stat" % raw["tid"]) as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
        return None if state == "S" else "the _thread thread is in state %s" % state


async def sleeper():
    await asyncio.sleep(3600)  # @task


def run_loop():
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    loop.create_task(sleeper(), name="task" + EVIL)
    loop.run_forever()  # @loop


def main():
    here = os.path.abspath(__file__)
    t = threading.Thread(target=evil_thread, name="py-" + FORGED, daemon=True)
    t.start()
    lt = threading.Thread(target=run_loop, name="loop-thread", daemon=True)
    lt.start()
    _thread.start_new_thread(os_named_thread, ())
    announce_when_parked([Spot(threading.main_thread(), here, "main"), EvilSpot(t),
                          Spot(lt, here, "loop"), RawSpot()])
    while True:
        time.sleep(3600)  # @main


if __name__ == "__main__":
    main()
