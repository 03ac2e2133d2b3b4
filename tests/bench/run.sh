#!/bin/sh
# tests/bench/run.sh [PYTHON...] — time `stack` and `stack --native` on a
# 20-thread, 30-deep target, next to fork+exec of /bin/true measured in the
# same run.  Median/min/max of 20 runs each.  Not a pass/fail test.
#
# Then how long a thread is held: the longest single ptrace-stop of any
# thread during `stack --native` and during an injection (tests/inject/
# injtool loading copies of testlib.so), as the tool measures it
# (FP_STOP_STATS: from the moment it sees a thread stopped to the moment it
# resumes it), and, as a cross-check, the target's own view: by how much a
# thread waiting in select(1.0) overran its second meanwhile.
#
# Budgets (this 2-core machine): stack <= 5 ms, stack --native <= 100 ms;
# longest stop of one thread <= 10 ms for --native and for an injection.
set -eu
builddir=${FP_BUILDDIR:-$(pwd)}
srcdir=${FP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
bin="$builddir/flight_profiler"
spawn="$builddir/tests/bench/spawntime"
injtool="$builddir/tests/inject/injtool"
testlib="$builddir/tests/inject/testlib.so"
runs=${FP_BENCH_RUNS:-20}
[ -x "$bin" ] && [ -x "$spawn" ] || { echo "build first: make && make tests/bench/spawntime" >&2; exit 1; }

if [ $# -eq 0 ]; then
	set -- $(cut -d' ' -f5 "$builddir/pythons.list")
fi

echo "machine: $(uname -srm), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "runs: $runs each; times in ms (median min max)"
base=$("$spawn" "$runs" /bin/true)
echo "fork+exec /bin/true:                 $(echo "$base" | cut -d' ' -f1-3)"
base_med=$(echo "$base" | cut -d' ' -f1)

# The largest number of a column in a file, / 1000 (us -> ms, ns -> us).
colmax() {
	awk -v c="$2" 'BEGIN { m = 0 } $c > m { m = $c } END { printf "%.2f", m / 1000 }' "$1"
}

# stops PYTHON VERSION: the stop lines for one interpreter.
stops() {
	tmp=$(mktemp -d)
	mkfifo "$tmp/fifo"
	FP_CLOCK_LOG="$tmp/clock" FP_READY_FD=3 "$1" "$srcdir/tests/bench/stack_target.py" 3>"$tmp/fifo" &
	target=$!
	read -r _ <"$tmp/fifo"
	sleep 1.1; : >"$tmp/clock"
	r=$(FP_STOP_STATS="$tmp/native" "$spawn" "$runs" "$bin" "$target" --cmd "stack --native")
	sleep 1.1
	printf 'CPython %-8s %-16s %s  longest stop of one thread %s ms (budget 10); select(1.0) overran by <= %s ms\n' \
	    "$2" "--native stops:" "$(echo "$r" | cut -d' ' -f1-3)" \
	    "$(colmax "$tmp/native" 4 | awk '{ printf "%.2f", $1 / 1000 }')" "$(colmax "$tmp/clock" 1)"
	if [ -x "$injtool" ] && [ -f "$testlib" ]; then
		: >"$tmp/clock"
		i=0
		while [ $i -lt 5 ]; do
			cp "$testlib" "$tmp/lib$i.so"
			FP_STOP_STATS="$tmp/inject" "$injtool" "$target" "$tmp/lib$i.so" bootstrap "$tmp/out$i" >>"$tmp/injtimes" || true
			i=$((i + 1))
		done
		sleep 1.1
		printf 'CPython %-8s %-16s %s ms median of 5  longest stop of the thread %s ms (budget 10); the thread it ran on (in select(1.0)) late by <= %s ms\n' \
		    "$2" "injection:" "$(awk '$1 == "ok" { print $2 / 1000 }' "$tmp/injtimes" | sort -n | sed -n 3p)" \
		    "$(colmax "$tmp/inject" 4 | awk '{ printf "%.2f", $1 / 1000 }')" "$(colmax "$tmp/clock" 1)"
	fi
	kill "$target"
	wait "$target" 2>/dev/null || true
	rm -rf "$tmp"
}

for py in "$@"; do
	fifo=$(mktemp -u)
	mkfifo "$fifo"
	FP_READY_FD=3 "$py" "$srcdir/tests/bench/stack_target.py" 3>"$fifo" &
	target=$!
	read -r _ <"$fifo"
	rm -f "$fifo"
	version=$("$py" -c 'import platform; print(platform.python_version())')
	for cmd in "stack" "stack --native"; do
		r=$("$spawn" "$runs" "$bin" "$target" --cmd "$cmd")
		med=$(echo "$r" | cut -d' ' -f1)
		fails=$(echo "$r" | cut -d' ' -f4)
		printf 'CPython %-8s %-16s %s  = %5.1fx /bin/true%s\n' "$version" "$cmd:" \
		    "$(echo "$r" | cut -d' ' -f1-3)" "$(echo "$med $base_med" | awk '{print $1/$2}')" \
		    "$([ "$fails" = 0 ] || echo "  ($fails runs FAILED)")"
	done
	kill "$target"
	wait "$target" 2>/dev/null || true
	stops "$py" "$version"
done
