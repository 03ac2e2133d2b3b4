#!/bin/sh
# The automake TESTS entry for the integration suite (driven by
# build-aux/tap-driver.sh): runs tests/run-pytest.py, which prints TAP.
# make check sets FP_SRCDIR, FP_BINARY and FP_PYTHONS; run by hand, the
# source tree is the folder above this script.
srcdir=${FP_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
python=/usr/bin/python3
[ -x "$python" ] || python=$(command -v python3) || {
	echo "1..1"
	echo "not ok 1 - integration suite"
	echo "# no python3 to run pytest: apt-get install python3-pytest"
	exit 0
}
exec "$python" "$srcdir/tests/run-pytest.py" "$@"
