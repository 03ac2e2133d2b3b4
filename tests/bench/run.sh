#!/bin/sh
# tests/bench/run.sh [PYTHON...] — time `stack` and `stack --native` on a
# 20-thread, 30-deep target, next to fork+exec of /bin/true measured in the
# same run.  Median/min/max of 20 runs each.  Not a pass/fail test.
#
# Budgets (this 2-core machine): stack <= 5 ms, stack --native <= 100 ms.
set -eu
builddir=${FP_BUILDDIR:-$(pwd)}
srcdir=${FP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
bin="$builddir/flight_profiler"
spawn="$builddir/tests/bench/spawntime"
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
done
