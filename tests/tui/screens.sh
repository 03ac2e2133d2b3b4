#!/bin/sh
# The automake TESTS entry for tests/tui/tuitest.py screens (TAP on stdout).
# make check sets FP_SRCDIR, FP_BINARY, FP_PYTHONS and FP_BUILDDIR.
srcdir=${FP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
python=/usr/bin/python3
[ -x "$python" ] || python=$(command -v python3) || {
	echo "1..1"
	echo "not ok 1 - tui screens: no python3 to run the harness (apt-get install python3)"
	exit 0
}
exec "$python" "$srcdir/tests/tui/tuitest.py" screens
