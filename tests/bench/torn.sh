#!/bin/sh
# tests/bench/torn.sh [PYTHON...] — what the consistency check of `stack`
# costs and what it catches, with the check on and off (FP_STACK_CHECK=0)
# in the same run, on two targets:
#
#   genexpr  tests/targets/churn.py: one thread in sum(x * x for x in xs)
#            three calls deep, changing its stack all the time
#   20x30    tests/bench/stack_target.py: 20 threads parked 30 frames deep
#
# For each: READS reads in one process (FP_STACK_REPEAT) — time per read,
# thread reads done again (retries) and reads left [partial] — and, for
# 20x30, `--cmd stack` as a whole process (median/min/max of RUNS, as
# run.sh measures it against the ~5 ms budget).  Check "on" is the
# default: up to 36 reads, then one read with the thread stopped
# ("stopped" counts those); "nostop" is what a sampler gets (the 36 reads
# alone, the rest partial); "once" checks but never reads again (its
# partial rate is how often a single read tears); "off" neither checks nor
# marks (partial 0 by construction: what is torn goes unseen).  Also the
# recursion mode of churn.py, the fastest-changing stack.  Not pass/fail.
set -eu
builddir=${FP_BUILDDIR:-$(pwd)}
srcdir=${FP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
bin="$builddir/flight_profiler"
spawn="$builddir/tests/bench/spawntime"
reads=${FP_BENCH_READS:-1000}
runs=${FP_BENCH_RUNS:-20}
[ -x "$bin" ] && [ -x "$spawn" ] || { echo "build first: make && make tests/bench/spawntime" >&2; exit 1; }

if [ $# -eq 0 ]; then
	set -- $(cut -d' ' -f5 "$builddir/pythons.list")
fi

# start_target SCRIPT [ENV=VALUE]: start it, wait for its ready line, set $target.
start_target() {
	fifo=$(mktemp -u)
	mkfifo "$fifo"
	script=$1
	shift
	env "$@" FP_READY_FD=3 "$py" "$script" 3>"$fifo" >/dev/null &
	target=$!
	read -r _ <"$fifo"
	rm -f "$fifo"
}

# repeated NAME CHECK: $reads reads in one process; prints one line.
repeated() {
	stats=$(mktemp)
	t0=$(date +%s%N)
	FP_STACK_CHECK=$2 FP_STACK_STATS=1 FP_STACK_REPEAT=$reads \
	    "$bin" "$target" --cmd stack 2>"$stats" >/dev/null || true
	t1=$(date +%s%N)
	awk -v name="$1" -v check="$2" -v reads="$reads" -v ns=$((t1 - t0)) \
	    '/^stack-stats:/ { r += $5; s += $7; p += $9; n++ }
	     END { printf "  %-9s check %-6s %5d reads  %6.3f ms/read  retries %5d  stopped %3d  partial %4d (%.2f%%)\n",
	         name, check == "0" ? "off" : check == "1" ? "on" : check, n, ns / 1e6 / reads,
	         r, s, p, n ? 100 * p / n : 0 }' "$stats"
	rm -f "$stats"
}

echo "machine: $(uname -srm), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "$reads reads per line in one process; --cmd stack: $runs runs, ms (median min max)"
for py in "$@"; do
	version=$("$py" -c 'import platform; print(platform.python_version())')
	echo "CPython $version"
	for mode in genexpr recursion; do
		start_target "$srcdir/tests/targets/churn.py" CHURN=$mode
		for check in 1 nostop once 0; do
			repeated $mode $check
		done
		kill "$target"
		wait "$target" 2>/dev/null || true
	done

	start_target "$srcdir/tests/bench/stack_target.py"
	repeated 20x30 1
	repeated 20x30 once
	repeated 20x30 0
	for check in 1 0; do
		r=$(FP_STACK_CHECK=$check "$spawn" "$runs" "$bin" "$target" --cmd stack)
		printf '  %-8s check %-4s --cmd stack  %s\n' 20x30 "$([ $check = 0 ] && echo off || echo on)" \
		    "$(echo "$r" | cut -d' ' -f1-3)"
	done
	kill "$target"
	wait "$target" 2>/dev/null || true
done
