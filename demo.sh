#!/bin/sh
# demo.sh — set up, build, start the bundled demo target and attach
# flight_profiler to it.  Run from the source tree on Debian bookworm:
#     sudo ./demo.sh            (root: it installs Debian packages if missing)
set -e
cd "$(dirname "$0")"
sh build-aux/install-deps.sh
if [ ! -x ./flight_profiler ] || [ -n "$(find core tui inject -newer ./flight_profiler -name '*.[ch]' 2>/dev/null | head -1)" ]; then
	[ -x ./configure ] || ./autogen.sh >/dev/null
	[ -f Makefile ] || ./configure -q
	make -s -j"$(nproc)"
fi
python=${PYTHON:-/usr/bin/python3}
fifo=$(mktemp -u)
mkfifo "$fifo"
FP_READY_FD=3 "$python" tests/targets/demo.py 3>"$fifo" >/dev/null 2>&1 &
demo=$!
trap 'kill $demo 2>/dev/null; rm -f "$fifo"' EXIT INT TERM
read -r _ <"$fifo"
echo "demo target: pid $demo ($("$python" -V 2>&1))"
./flight_profiler "$demo" "$@"
