"""The agent libraries as built: one per configured minor version, one
exported symbol, nothing linked but libc and jansson (found next to the
agent: $ORIGIN), and no constructor that does anything."""

import os
import re
import subprocess

import pytest

from conftest import BINARY

BUILDDIR = os.environ.get("FP_BUILDDIR") or os.path.dirname(BINARY)


def agent_path(python):
    path = os.path.join(BUILDDIR, "fpagent-cp3%d.so" % python.version_info[1])
    if not os.path.exists(path):
        pytest.fail("no agent built for %s at %s" % (python, path), pytrace=False)
    return path


def readelf(*args):
    return subprocess.run(["readelf", "-W"] + list(args), stdout=subprocess.PIPE,
                          check=True).stdout.decode()


def test_one_exported_symbol(python):
    path = agent_path(python)
    syms = readelf("--dyn-syms", path)
    defined = set()
    for line in syms.splitlines():
        fields = line.split()
        if len(fields) >= 8 and fields[6] != "UND" and fields[4] in ("GLOBAL", "WEAK") \
                and fields[3] in ("FUNC", "OBJECT"):
            defined.add(fields[7].split("@")[0])
    assert defined == {"fp_agent_start"}, defined


def test_links_only_libc_and_jansson(python):
    dyn = readelf("-d", agent_path(python))
    needed = set(re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", dyn))
    assert needed <= {"libc.so.6", "libjansson.so.4", "libpthread.so.0"}, needed
    assert "libjansson.so.4" in needed
    assert re.search(r"\((RUNPATH|RPATH)\)\s+Library r(un)?path: \[\$ORIGIN\]", dyn), dyn
    for lib in ("ncurses", "unwind", "libdw", "libelf", "python"):
        assert not any(lib in n for n in needed), needed


def test_no_init_code(python):
    """A constructor would run under the loader lock: there is none but the
    compiler's own (frame_dummy and the like)."""
    dyn = readelf("-d", agent_path(python))
    size = re.search(r"\(INIT_ARRAYSZ\)\s+(\d+)", dyn)
    assert size is None or int(size.group(1)) <= 8, dyn
