#!/bin/sh
# tests/bench/vs_sampler.sh [PYTHON...] — `flight_profiler PID --cmd stack`
# beside a one-shot dump of an established C sampler, austin (Debian's
# package: apt-get install austin), on the same 20-thread, 30-deep target,
# in the same run.  austin has no one-shot mode: its one shot is attaching
# and writing its first full sample (one line per thread), timed as
# `sh -c 'austin -i 100 -p PID | head -n THREADS'` — the shell's start
# (~1 ms) and at most one 0.1 ms interval are in its time.  Median/min/max
# of RUNS each, and the ratio of the medians.  Budget: ours <= 1.5 x
# austin's.  Not pass/fail.  austin 1.0.1 (bookworm) predates CPython
# 3.11's layouts: an interpreter it cannot read in a second is reported,
# not timed.
set -eu
builddir=${FP_BUILDDIR:-$(pwd)}
srcdir=${FP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
bin="$builddir/flight_profiler"
spawn="$builddir/tests/bench/spawntime"
runs=${FP_BENCH_RUNS:-20}
threads=21	# stack_target.py's 20 and its main thread
[ -x "$bin" ] && [ -x "$spawn" ] || { echo "build first: make && make tests/bench/spawntime" >&2; exit 1; }
command -v austin >/dev/null || { echo "austin is not installed: apt-get install austin" >&2; exit 1; }

if [ $# -eq 0 ]; then
	set -- $(cut -d' ' -f5 "$builddir/pythons.list")
fi

echo "machine: $(uname -srm), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "$(austin --version 2>&1 | head -1); runs: $runs each; ms (median min max); budget: ours <= 1.5 x austin"
for py in "$@"; do
	version=$("$py" -c 'import platform; print(platform.python_version())')
	fifo=$(mktemp -u)
	mkfifo "$fifo"
	FP_READY_FD=3 "$py" "$srcdir/tests/bench/stack_target.py" 3>"$fifo" >/dev/null 2>&1 &
	target=$!
	read -r _ <"$fifo"
	rm -f "$fifo"
	oneshot="austin -i 100 -p $target 2>/dev/null | head -n $threads"
	t0=$(date +%s%N)
	lines=$(timeout 5 sh -c "$oneshot" | wc -l)
	probe_ms=$((($(date +%s%N) - t0) / 1000000))
	if [ "$lines" -lt $threads ]; then
		printf 'CPython %-7s austin cannot read it (no full sample in 5 s)\n' "$version"
	elif [ "$probe_ms" -gt 1000 ]; then
		printf 'CPython %-7s austin took %d ms to find its state (its layouts predate it): not compared\n' \
		    "$version" "$probe_ms"
	else
		ours=$("$spawn" "$runs" "$bin" "$target" --cmd stack)
		theirs=$("$spawn" "$runs" /bin/sh -c "$oneshot")
		printf 'CPython %-7s flight_profiler %s   austin %s   ratio %s\n' "$version" \
		    "$(echo "$ours" | cut -d' ' -f1-3)" "$(echo "$theirs" | cut -d' ' -f1-3)" \
		    "$(echo "$ours $theirs" | awk '{ printf "%.2f", $1 / $5 }')"
	fi
	kill "$target"
	wait "$target" 2>/dev/null || true
done
