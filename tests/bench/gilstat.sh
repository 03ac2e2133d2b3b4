#!/bin/sh
# tests/bench/gilstat.sh [PYTHON...] — what exact `gilstat on` costs the
# target, per configured interpreter, measured in one run: a fixed amount
# of GIL-switching work (tests/bench/gilstat_target.py: three threads, each
# round one take_gil and one drop_gil) timed alone and with `gilstat on`
# attached, alternating, FP_BENCH_RUNS pairs (default 3); prints the median
# of the per-pair ratios, and the GIL takes per second gilstat counted.
# Where the interpreter is stripped, gilstat samples instead and the mode
# column says so.  Not a pass/fail test: it prints numbers.
set -eu
builddir=${FP_BUILDDIR:-$(pwd)}
srcdir=${FP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
bin="$builddir/flight_profiler"
tgt="$srcdir/tests/bench/gilstat_target.py"
runs=${FP_BENCH_RUNS:-3}
out=$(mktemp -d)
gs=
target=
cleanup() {
	[ -n "$gs" ] && kill "$gs" 2>/dev/null
	[ -n "$target" ] && kill "$target" 2>/dev/null
	rm -rf "$out"
}
trap cleanup EXIT
[ -x "$bin" ] || { echo "build first: make" >&2; exit 1; }
if [ $# -eq 0 ]; then
	set -- $(cut -d' ' -f5 "$builddir/pythons.list")
fi

# One timed run of the work; $2 = on: with gilstat attached.  Prints seconds.
timed() {
	py=$1
	rm -f "$out/ready" "$out/go" "$out/gs.out"
	mkfifo "$out/ready" "$out/go"
	exec 4<>"$out/go"	# read-write: opening does not wait for the target
	FP_READY_FD=3 "$py" "$tgt" 3>"$out/ready" <"$out/go" >"$out/secs" &
	target=$!
	read -r _ <"$out/ready"
	if [ "$2" = on ]; then
		"$bin" "$target" --cmd "gilstat on 0 0 3600" >"$out/gs.out" 2>&1 &
		gs=$!
		while ! grep -q "^gilstat on:" "$out/gs.out" 2>/dev/null; do
			kill -0 "$gs" 2>/dev/null || { cat "$out/gs.out" >&2; exit 1; }
			sleep 0.05
		done
	fi
	echo go >&4
	exec 4>&-
	wait "$target"
	target=
	if [ -n "$gs" ]; then
		kill -INT "$gs" 2>/dev/null || true	# it may have seen the target exit first
		wait "$gs" || true
		gs=
	fi
	cat "$out/secs"
}

median() { tr ' ' '\n' | grep . | sort -n | awk '{ v[NR] = $1 } END {
	printf "%.3f", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "machine: $(uname -srm), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-34s %-12s %9s %9s %8s %10s\n' python mode "off s" "on s" "on/off" "takes/s"
for py in "$@"; do
	ratios= offs= ons= mode=? rate=?
	i=0
	while [ $i -lt "$runs" ]; do
		off=$(timed "$py" off)
		on=$(timed "$py" on)
		ratios="$ratios $(echo "$on $off" | awk '{ printf "%.4f", $1 / $2 }')"
		offs="$offs $off" ons="$ons $on"
		if grep -q "exact: uprobes" "$out/gs.out"; then mode=exact; else mode=statistical; fi
		rate=$(awk -v s="$on" '/^gil statistics report/ { n = 0; next }
			$3 ~ /^[0-9]+$/ && $2 ~ /^[0-9]+$/ { n += $3 } END { printf "%.0f", n / s }' "$out/gs.out")
		i=$((i + 1))
	done
	printf '%-34s %-12s %9s %9s %8s %10s\n' "$py" "$mode" "$(echo "$offs" | median)" \
	    "$(echo "$ons" | median)" "$(echo "$ratios" | median)" \
	    "$([ "$mode" = exact ] && echo "$rate" || echo -)"
done
