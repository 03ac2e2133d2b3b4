#!/bin/sh
# tests/bench/agent.sh [PYTHON...] — the inside view's costs, whole command
# (flight_profiler PID --cmd "getglobal __main__ CONFIG") next to fork+exec
# of /bin/true measured in the same run:
#   first attach   a fresh target each run: inject + handshake + getglobal
#   re-attach      the agent is already loaded: connect + handshake + getglobal
#   footprint      the target's RSS growth from the first attach
# Median/min/max of FP_BENCH_RUNS (20) runs.  Not a pass/fail test.
# Budgets (this 2-core machine): first attach <= 100 ms, re-attach <= 5 ms,
# RSS growth <= 5 MB.
set -eu
builddir=${FP_BUILDDIR:-$(pwd)}
srcdir=${FP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
bin="$builddir/flight_profiler"
spawn="$builddir/tests/bench/spawntime"
runs=${FP_BENCH_RUNS:-20}
cmd="getglobal __main__ CONFIG"
[ -x "$bin" ] && [ -x "$spawn" ] || { echo "build first: make && make tests/bench/spawntime" >&2; exit 1; }
if [ $# -eq 0 ]; then
	set -- $(cut -d' ' -f5 "$builddir/pythons.list")
fi

stats() {	# numbers on stdin -> "median min max"
	sort -n | awk '{ v[NR] = $1 } END {
		m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		printf "%.3f %.3f %.3f", m, v[1], v[NR] }'
}

start_target() {	# $1 = python; sets $target
	fifo=$(mktemp -u)
	mkfifo "$fifo"
	FP_READY_FD=3 "$1" "$srcdir/tests/bench/agent_target.py" 3>"$fifo" &
	target=$!
	read -r _ <"$fifo"
	rm -f "$fifo"
}

stop_target() {
	kill "$target" 2>/dev/null || true
	wait "$target" 2>/dev/null || true
	rm -rf "/tmp/.flight_profiler-$target"
}

rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"; }

echo "machine: $(uname -srm), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "runs: $runs each; times in ms (median min max); command: $cmd"
base=$("$spawn" "$runs" /bin/true)
base_med=$(echo "$base" | cut -d' ' -f1)
echo "fork+exec /bin/true:            $(echo "$base" | cut -d' ' -f1-3)"

for py in "$@"; do
	version=$("$py" -c 'import platform; print(platform.python_version())')
	first="" growth="" fails=0 i=0
	while [ $i -lt "$runs" ]; do
		start_target "$py"
		before=$(rss_kb "$target")
		r=$("$spawn" 1 "$bin" "$target" --cmd "$cmd")
		after=$(rss_kb "$target")
		[ "$(echo "$r" | cut -d' ' -f4)" = 0 ] || fails=$((fails + 1))
		first="$first $(echo "$r" | cut -d' ' -f1)"
		growth="$growth $(( after - before ))"
		if [ $i -eq 0 ]; then
			re=$("$spawn" "$runs" "$bin" "$target" --cmd "$cmd")
		fi
		stop_target
		i=$((i + 1))
	done
	f=$(echo "$first" | tr ' ' '\n' | grep . | stats)
	g=$(echo "$growth" | tr ' ' '\n' | grep . | stats)
	printf 'CPython %-8s first attach:  %s  = %5.1fx /bin/true%s\n' "$version" "$f" \
	    "$(echo "$f $base_med" | awk '{print $1/$4}')" "$([ $fails = 0 ] || echo "  ($fails runs FAILED)")"
	printf 'CPython %-8s re-attach:     %s  = %5.1fx /bin/true%s\n' "$version" "$(echo "$re" | cut -d' ' -f1-3)" \
	    "$(echo "$re $base_med" | awk '{print $1/$5}')" "$([ "$(echo "$re" | cut -d' ' -f4)" = 0 ] || echo "  (FAILED runs)")"
	printf 'CPython %-8s RSS growth:    %s KiB (median min max)\n' "$version" "$(echo "$g" | awk '{printf "%d %d %d", $1, $2, $3}')"
done
