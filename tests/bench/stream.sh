#!/bin/sh
# tests/bench/stream.sh [PYTHON] — live streams, on a real target:
#
#   events/s     100,000 small events from the agent into the client's
#                output model (tests/bench/eventrate), next to the target's
#                loop alone and the client's decode+model alone, measured
#                in the same run.  Budget: >= 50,000 events/s.
#   key latency  p99 key-to-screen latency of the TUI on a pty while a
#                statement streams events, next to the same TUI idle
#                (tests/bench/keylat.py).  Budget: p99 <= 50 ms.
#
# Not pass/fail: prints the numbers and the budgets.
set -eu
builddir=${FP_BUILDDIR:-$(pwd)}
srcdir=${FP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
bin="$builddir/flight_profiler"
py=${1:-$(grep ' 3\.12\.' "$builddir/pythons.list" | head -1 | cut -d' ' -f5)}
[ -n "$py" ] || py=$(tail -1 "$builddir/pythons.list" | cut -d' ' -f5)
[ -x "$bin" ] && [ -x "$builddir/tests/bench/eventrate" ] || {
	echo "build first: make && make tests/bench/eventrate" >&2; exit 1; }
work=$(mktemp -d)
targets=""
cleanup() {
	for p in $targets; do kill "$p" 2>/dev/null || true; done
	rm -rf "$work"
}
trap cleanup EXIT INT TERM
export FP_AGENT_DIR="$builddir"

# start_target: a sleeping target, its pid in $target once it runs.
start_target() {
	"$py" -c 'import sys, time
sys.stdout.write("ready\n"); sys.stdout.flush()
time.sleep(3600)' >"$work/target.out" 2>&1 &
	target=$!
	targets="$targets $target"
	while ! grep -q ready "$work/target.out" 2>/dev/null; do sleep 0.05; done
}

echo "machine: $(uname -srm), $(nproc) cores; target: $("$py" -c 'import sys; print(sys.version.split()[0])')"
start_target
"$bin" "$target" --cmd "execute pass" >/dev/null	# loads the agent
"$builddir/tests/bench/eventrate" "$target" 100000
echo
/usr/bin/python3 "$srcdir/tests/bench/keylat.py" "$bin" "$target" "${FP_BENCH_KEYS:-300}"
