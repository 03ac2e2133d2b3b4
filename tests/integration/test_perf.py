"""perf: our own sampler, from outside, on real targets (tests/targets/hot.py).

Shares are asserted on what the target does by count of work, with room
for sampling noise; nothing here asserts a duration.  The launch fixture
checks afterwards that no thread was left stopped or traced and that the
target wrote nothing.
"""

import json
import os
import re
import signal
import subprocess
import time
import xml.etree.ElementTree as ET

import pytest

from conftest import (BINARY, EXIT_NOT_PYTHON, EXIT_OK, EXIT_OTHER, EXIT_USAGE)

SUMMARY = re.compile(r"(\d+) samples from (\d+) reads in ")


def collapsed(path):
    """[(frames list, count)] of a collapsed-stacks file."""
    stacks = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            stack, count = line.rstrip("\n").rsplit(" ", 1)
            stacks.append((stack.split(";"), int(count)))
    return stacks


def fname(frame):
    """The function part of a frame label "name (file)"."""
    return frame.split(" (", 1)[0]


def has(frames, python, qualname):
    want = python.function_name(qualname)
    return any(fname(f) == want for f in frames)


def perf(profiler, pid, tmp_path, options, name="out.collapsed"):
    out = str(tmp_path / name)
    result = profiler.cmd(pid, "perf -f %s %s" % (out, options))
    assert result.code == EXIT_OK, result.describe()
    assert "successfully" in result.stdout, result.describe()
    return out, result


def test_shares_70_30(launch, profiler, python, tmp_path):
    target = launch("hot.py", python, env={"FP_HOT": "split"})
    # cpu mode: a thread preempted while runnable is not sampled, so the
    # shares follow CPU time (work done) even on a loaded machine.  Runs of
    # 1 s until 800 samples: then one standard deviation is 1.6 points.
    stacks = []
    for run in range(8):
        out, _ = perf(profiler, target.pid, tmp_path, "-d 1 -r 1000 --mode cpu",
                      "run%d.collapsed" % run)
        stacks += [(s, n) for s, n in collapsed(out) if has(s, python, "busy")]
        total = sum(n for _, n in stacks)
        if total >= 800:
            break
    assert total >= 800, total
    a = sum(n for s, n in stacks if has(s, python, "make_ab.<locals>.a"))
    b = sum(n for s, n in stacks if has(s, python, "make_ab.<locals>.b"))
    assert abs(100.0 * a / total - 70) <= 5, (a, b, total)
    assert abs(100.0 * b / total - 30) <= 5, (a, b, total)


def test_recursion_200_deep_intact(launch, profiler, python, tmp_path):
    target = launch("hot.py", python, env={"FP_HOT": "deep"})
    out, _ = perf(profiler, target.pid, tmp_path, "-d 0.5 -r 300")
    stacks = [(s, n) for s, n in collapsed(out) if has(s, python, "deep")]
    total = sum(n for _, n in stacks)
    assert total >= 50, stacks
    want = python.function_name("rec")
    depths = {}
    for s, n in stacks:
        d = sum(1 for f in s if fname(f) == want)
        depths[d] = depths.get(d, 0) + n
        # the recursion is one run of rec frames, nothing in between
        i = [k for k, f in enumerate(s) if fname(f) == want]
        assert i == list(range(i[0], i[0] + len(i))), s
    # rec(200) .. rec(0): torn reads are dropped, never cut short
    assert depths == {201: total}, depths


def test_rate_beyond_reach_reads_back_to_back(launch, profiler, python, tmp_path):
    """-r goes to 1,000,000: a rate no machine here reaches is read back
    to back, the summary says so, and the stacks are as whole as at 300 Hz
    (the 200-deep recursion, torn reads dropped)."""
    target = launch("hot.py", python, env={"FP_HOT": "deep"})
    out, result = perf(profiler, target.pid, tmp_path, "-d 0.3 -r 1000000")
    assert "of 1000000 asked" in result.stdout and "saturated" in result.stdout, result.stdout
    samples, reads = map(int, SUMMARY.search(result.stdout).groups())
    assert reads > 300 * 0.3, result.stdout
    want = python.function_name("rec")
    depths = {}
    for s, n in collapsed(out):
        if has(s, python, "deep"):
            d = sum(1 for f in s if fname(f) == want)
            depths[d] = depths.get(d, 0) + n
    assert depths and set(depths) == {201}, depths


def test_replaced_code_named_anew(launch, profiler, python, tmp_path):
    """A code object freed and another made at its address is named as
    the new one: the sampler trusts a cached code object unread for 10 ms
    at most (core/pycode.c), so each of three functions compiled by turns
    for rounds of the same work (~0.1 s each) keeps about its third of the
    samples.  A cache never checked again names them all by the first."""
    target = launch("hot.py", python, env={"FP_HOT": "renamed"})
    counts = {"round_a": 0, "round_b": 0, "round_c": 0}
    for run in range(4):
        out, _ = perf(profiler, target.pid, tmp_path, "-d 1 -r 1000 --mode cpu",
                      "run%d.collapsed" % run)
        for s, n in collapsed(out):
            for name in counts:
                if any(fname(f) == name for f in s):
                    counts[name] += n
        if sum(counts.values()) >= 1500:
            break
    total = sum(counts.values())
    assert total >= 600, counts
    for name, n in counts.items():
        assert 100.0 * n / total >= 20, counts


def thread_names(stacks):
    return {s[0].split(" ")[1] for s, _ in stacks}


def test_sleeper_only_with_idle(launch, profiler, python, tmp_path):
    target = launch("hot.py", python, env={"FP_HOT": "threads"})
    out, _ = perf(profiler, target.pid, tmp_path, "-d 0.6 -r 300 --threads")
    names = thread_names(collapsed(out))
    assert {"busy-0", "busy-1", "busy-2"} <= names, names
    assert "sleeper" not in names, names
    out, _ = perf(profiler, target.pid, tmp_path, "-d 0.4 -r 300 --threads --idle", "idle.collapsed")
    stacks = collapsed(out)
    names = thread_names(stacks)
    assert {"busy-0", "busy-1", "busy-2", "sleeper", "MainThread"} <= names, names
    sleeping = [s for s, _ in stacks if s[0].startswith("thread sleeper ")]
    assert all(has(s, python, "sleeper") for s in sleeping), sleeping


def test_gil_mode_keeps_gil_holders(launch, profiler, python, tmp_path):
    target = launch("hot.py", python, env={"FP_HOT": "gil"})
    out, result = perf(profiler, target.pid, tmp_path, "-d 1 -r 300 --threads --mode gil")
    samples, reads = map(int, SUMMARY.search(result.stdout).groups())
    # one holder at a time: never more samples than reads
    assert 0 < samples <= reads, result.stdout
    stacks = collapsed(out)
    per = {}
    for s, n in stacks:
        per[s[0].split(" ")[1]] = per.get(s[0].split(" ")[1], 0) + n
    # "nogil" hashes without the GIL nearly all the time; "py" holds it
    assert per.get("py", 0) >= 0.8 * samples, per
    assert per.get("nogil", 0) <= 0.1 * samples, per
    assert "MainThread" not in per, per
    # on a CPU, the hasher is there (it runs without the GIL)
    out, _ = perf(profiler, target.pid, tmp_path, "-d 0.6 -r 300 --threads --mode cpu", "cpu.collapsed")
    names = thread_names(collapsed(out))
    assert "nogil" in names and "MainThread" not in names, names


def test_svg_and_speedscope_structure(launch, profiler, any_python, tmp_path):
    python = any_python
    target = launch("hot.py", python, env={"FP_HOT": "split"})
    svg, result = perf(profiler, target.pid, tmp_path, "-d 0.5 -r 200", "prof.svg")
    samples = int(SUMMARY.search(result.stdout).group(1))
    root = ET.parse(svg).getroot()
    ns = "{http://www.w3.org/2000/svg}"
    assert root.tag == ns + "svg"
    assert int(root.get("data-total")) == samples
    script = root.find(ns + "script").text
    assert "function zoom" in script and "Matched" in script and "http" not in script
    frames = root.findall(ns + "g")
    names = [g.get("n") for g in frames]
    # escaped on the way out, read back intact by the XML parser
    assert any(n.startswith(python.function_name("make_ab.<locals>.a") + " (") for n in names), names
    for g in frames:
        assert g.find(ns + "title").text.startswith(g.get("n"))
        assert float(g.find(ns + "rect").get("width")) > 0

    js, result = perf(profiler, target.pid, tmp_path, "-d 0.5 -r 200 --format speedscope", "p.json")
    samples = int(SUMMARY.search(result.stdout).group(1))
    with open(js, encoding="utf-8") as f:
        doc = json.load(f)
    assert doc["$schema"] == "https://www.speedscope.app/file-format-schema.json"
    nframes = len(doc["shared"]["frames"])
    prof = doc["profiles"][0]
    assert prof["type"] == "sampled" and len(prof["samples"]) == len(prof["weights"])
    assert sum(prof["weights"]) == samples == prof["endValue"]
    assert all(0 <= i < nframes for s in prof["samples"] for i in s)
    assert any(f["name"] == python.function_name("make_ab.<locals>.b")
               for f in doc["shared"]["frames"])


def test_text_table(launch, profiler, any_python, tmp_path):
    target = launch("hot.py", any_python, env={"FP_HOT": "split"})
    out, _ = perf(profiler, target.pid, tmp_path, "-d 0.5 -r 200 --format text", "t.txt")
    with open(out, encoding="utf-8") as f:
        lines = f.read().splitlines()
    header = [i for i, l in enumerate(lines) if l.split()[:2] == ["OWN%", "TOTAL%"]]
    assert header, lines
    rows = lines[header[0] + 1:-1]
    work = [r for r in rows if r.split()[-2] == "work"]
    assert work, rows
    own, total = (float(x.rstrip("%")) for x in work[0].split()[:2])
    assert own >= 80 and total >= own, work


BAD_OPTIONS = [
    ("-r 0", "-r wants a rate"), ("-r 1000001", "-r wants a rate"), ("-r x", "-r wants a rate"),
    ("-d 0", "-d wants seconds"), ("-d -1", "-d"), ("--mode fast", "unknown mode"),
    ("--format png", "unknown format"),
]


def test_bad_options(launch, profiler, any_python, tmp_path):
    target = launch("hot.py", any_python, env={"FP_HOT": "split"})
    out = tmp_path / "never.svg"
    for options, message in BAD_OPTIONS:
        result = profiler.cmd(target.pid, "perf -f %s %s" % (out, options))
        assert result.code == EXIT_USAGE, result.describe()
        assert message in result.error_line(), result.describe()
        assert not out.exists()


def test_unwritable_path_before_sampling(launch, profiler, any_python, tmp_path):
    target = launch("hot.py", any_python, env={"FP_HOT": "split"})
    # -d 600: the error must come before any sampling, or this times out
    result = profiler.cmd(target.pid, "perf -d 600 -f %s" % (tmp_path / "no" / "such" / "x.svg"))
    assert result.code == EXIT_OTHER, result.describe()
    assert "cannot write" in result.error_line()


def test_not_python(profiler, tmp_path):
    proc = subprocess.Popen(["sleep", "60"])
    try:
        result = profiler.cmd(proc.pid, "perf -d 1 -f %s" % (tmp_path / "x.svg"))
    finally:
        proc.kill()
        proc.wait()
    assert result.code == EXIT_NOT_PYTHON, result.describe()
    result.error_line()
    assert not (tmp_path / "x.svg").exists()


def test_target_exits_while_sampled(launch, profiler, any_python, tmp_path):
    target = launch("exits.py", any_python, expect_exit=True)
    out = tmp_path / "gone.collapsed"
    result = profiler.cmd(target.pid, "perf -d 60 -r 200 -f %s" % out)
    assert result.code == EXIT_OK, result.describe()
    assert "exited while sampled" in result.stdout
    assert sum(n for _, n in collapsed(str(out))) > 0


def test_sigint_writes_what_was_collected(launch, any_python, tmp_path):
    target = launch("hot.py", any_python, env={"FP_HOT": "split"})
    out = tmp_path / "int.collapsed"
    proc = subprocess.Popen([BINARY, str(target.pid), "--cmd", "perf -r 200 -f %s" % out],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 20
    # sampling has begun once the file exists (checked, then written at the end)
    while not out.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.5)
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=20)
    assert proc.returncode == EXIT_OK, (stdout, stderr)
    assert b"successfully" in stdout
    assert sum(n for _, n in collapsed(str(out))) > 0


def test_native_merged_in_order(launch, profiler, any_python, tmp_path):
    python = any_python
    target = launch("hot.py", python, env={"FP_HOT": "threads"})
    out, _ = perf(profiler, target.pid, tmp_path, "-d 1 -r 20 --native --threads")
    stacks = collapsed(out)
    # stopping a thread to unwind it must not make the sleeper look busy
    assert "sleeper" not in thread_names(stacks), stacks
    busy = [s for s, _ in stacks if s[0].startswith("thread busy-")]
    assert busy, stacks
    for s in busy:
        py = [fname(f) for f in s if " (" in f and not f.startswith("thread ")]
        # Python frames keep their order between the native ones
        assert python.function_name("busy") in py, s
        if "work" in py:
            assert py.index(python.function_name("busy")) < py.index("work"), s
        assert any(f.endswith("]") for f in s), s   # native frames: "name [module]"
