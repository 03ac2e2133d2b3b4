#!/bin/sh
# The automake TESTS entry for the agent suite (tests/agent): the inside
# view against real interpreters, reported as TAP by tests/run-pytest.py.
srcdir=${FP_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
python=/usr/bin/python3
[ -x "$python" ] || python=$(command -v python3) || {
	echo "1..1"
	echo "not ok 1 - agent suite"
	echo "# no python3 to run pytest: apt-get install python3-pytest"
	exit 0
}
exec "$python" "$srcdir/tests/run-pytest.py" --suite "$srcdir/tests/agent" "$@"
