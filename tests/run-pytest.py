#!/usr/bin/python3
"""Run the integration suite (tests/integration) under pytest and report it
as TAP on stdout, for automake's tap-driver.sh:

    1..N
    ok K - test_file.py::test_name[3.12.1]
    not ok K - test_file.py::test_other[3.8.18]
    # <why it failed, one comment line per line>
    ok K - test_file.py::test_skipped # SKIP <reason>

Extra arguments go to pytest (e.g. -k gil, -x); `--suite DIR` first runs
the suite in DIR instead of tests/integration (tests/agent.sh does).
pytest's own output goes to stderr, which the driver keeps in the test's
.log file.  A run that produced
no test results (no tests collected, a usage or internal error, no pytest)
is reported as a failing TAP line, never as a pass.  Exits 0 whenever it
could write TAP: the driver decides pass or fail from the TAP lines.

Run with Debian's /usr/bin/python3 (python3-pytest); standard library only.
"""

import importlib.util
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
SUITE = os.path.join(HERE, "integration")
# A suite takes minutes (the agent suite under ASan the longest); this only
# stops a hang, well within CI's budget for two builds.  (The targets die
# with pytest.)
SUITE_TIMEOUT = 40 * 60

PYTEST_EXIT = {
    2: "pytest was interrupted",
    3: "pytest hit an internal error",
    4: "pytest was called wrongly (usage error)",
    5: "pytest collected no tests",
}


def tap_comment(text):
    return "".join("# %s\n" % line for line in text.rstrip("\n").split("\n"))


def tap_description(text):
    # '#' would start a TAP directive: escape it as TAP allows.
    return text.replace("#", "\\#")


def node_name(case):
    """pytest's node id, "test_file.py::test_name[param]", from a <testcase>
    (xunit1 gives the file; classname is the dotted module, plus a class)."""
    path = case.get("file", "")
    classname = case.get("classname", "")
    parts = [os.path.basename(path)] if path else [classname]
    module = path[:-3].replace("/", ".") if path.endswith(".py") else None
    if module and classname.startswith(module + "."):
        parts.append(classname[len(module) + 1:])
    return "::".join(parts + [case.get("name", "?")])


def results_from_junit(path):
    """[(name, outcome, detail)], outcome in ok / fail / skip / xfail, in run
    order; a test reported twice (a failed call and a failed teardown) is
    merged into one result."""
    results = {}
    for case in ET.parse(path).getroot().iter("testcase"):
        name = node_name(case)
        outcome, detail = "ok", ""
        for child in case:
            if child.tag in ("failure", "error"):
                outcome = "fail"
                detail += "%s: %s\n%s\n" % (child.tag, child.get("message", ""), child.text or "")
            elif child.tag == "skipped" and outcome == "ok":
                kind = "xfail" if child.get("type") == "pytest.xfail" else "skip"
                outcome, detail = kind, child.get("message", "") or ""
        previous = results.get(name)
        if previous and previous[0] == "fail":
            outcome, detail = "fail", previous[1] + (detail if outcome == "fail" else "")
        results[name] = (outcome, detail)
    return [(name, outcome, detail) for name, (outcome, detail) in results.items()]


def write_tap(results, out):
    out.write("1..%d\n" % len(results))
    for number, (name, outcome, detail) in enumerate(results, 1):
        name = tap_description(name)
        if outcome == "ok":
            out.write("ok %d - %s\n" % (number, name))
        elif outcome == "skip":
            reason = " ".join(detail.split()) or "skipped"
            out.write("ok %d - %s # SKIP %s\n" % (number, name, reason))
        elif outcome == "xfail":
            reason = " ".join(detail.split()) or "expected failure"
            out.write("not ok %d - %s # TODO %s\n" % (number, name, reason))
        else:
            out.write("not ok %d - %s\n" % (number, name))
            out.write(tap_comment(detail or "failed"))
    out.flush()


def run_pytest(args, junit):
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    argv = [sys.executable, "-B", "-m", "pytest", "-p", "no:cacheprovider",
            "--rootdir", SUITE, "--junitxml", junit, "-o", "junit_family=xunit1",
            "-q", "--tb=short", "-rfEs", SUITE] + args
    sys.stderr.write("$ %s\n" % " ".join(argv))
    sys.stderr.flush()
    try:
        # pytest's report goes to our stderr: stdout is for TAP only.
        return subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=sys.stderr,
                              env=env, timeout=SUITE_TIMEOUT).returncode, None
    except subprocess.TimeoutExpired:
        return None, "the suite did not finish within %d s" % SUITE_TIMEOUT


def main(args):
    global SUITE
    # `--suite DIR` runs another pytest suite the same way (tests/agent).
    if len(args) >= 2 and args[0] == "--suite":
        SUITE = os.path.abspath(args[1])
        args = args[2:]
    if importlib.util.find_spec("pytest") is None:
        write_tap([("integration suite", "fail",
                    "%s cannot import pytest: apt-get install python3-pytest" % sys.executable)],
                  sys.stdout)
        return 0
    fd, junit = tempfile.mkstemp(prefix="fp-pytest-", suffix=".xml")
    os.close(fd)
    try:
        code, problem = run_pytest(args, junit)
        results = []
        if os.path.getsize(junit) > 0:
            try:
                results = results_from_junit(junit)
            except ET.ParseError as e:
                problem = "cannot read pytest's JUnit XML report: %s" % e
        if code in PYTEST_EXIT:
            problem = PYTEST_EXIT[code]
        elif code not in (0, 1, None) and problem is None:
            problem = "pytest exited with status %d" % code
        elif code == 1 and not any(outcome == "fail" for _, outcome, _ in results):
            problem = "pytest reported failures that are not in its XML report"
        if problem is not None:
            results.append(("integration suite", "fail",
                            problem + " (see this test's .log for pytest's output)"))
        write_tap(results, sys.stdout)
    finally:
        os.unlink(junit)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
