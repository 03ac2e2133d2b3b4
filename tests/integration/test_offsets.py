"""The offsets read from a live target's _Py_DebugOffsets (3.13+) against
the ones generated from the same interpreter's headers: every field equal.

FP_DUMP_OFFSETS=1 makes the binary print the offsets it uses to stderr;
FP_OFFSETS=debug|headers chooses where they come from (3.13 only)."""

import re

import pytest

from conftest import EXIT_OK

LINE = re.compile(r"^offsets\[(\d+)\]: (\w+) = (.*)$")


def dumped_offsets(profiler, pid, source):
    result = profiler.cmd(pid, "stack",
                          prefix=("env", "FP_DUMP_OFFSETS=1", "FP_OFFSETS=%s" % source))
    assert result.code == EXIT_OK, result.describe()
    offsets = {}
    for line in result.stderr.splitlines():
        m = LINE.match(line)
        if m and int(m.group(1)) == pid:
            offsets[m.group(2)] = m.group(3)
    assert offsets, "no offsets dumped\n" + result.describe()
    return offsets


@pytest.mark.min_python((3, 13))
def test_debug_offsets_equal_headers(python, launch, profiler):
    target = launch("threads.py", python)
    debug = dumped_offsets(profiler, target.pid, "debug")
    headers = dumped_offsets(profiler, target.pid, "headers")
    assert debug.pop("source") == "_Py_DebugOffsets"
    assert headers.pop("source") == "headers"
    assert debug.keys() == headers.keys()
    differ = {name: (debug[name], headers[name]) for name in debug if debug[name] != headers[name]}
    assert not differ, "offsets (from _Py_DebugOffsets, from headers) that differ: %r" % differ
    # Nothing of 3.14 on older versions: no stackref tags, no PEP 768.
    if python.version_info < (3, 14):
        assert debug["frame_code_tags"] == "0"
        assert debug["frame_owned_by_interpreter"] == "none"
        assert debug["remote_debug"] == "0"
