#!/bin/sh
# tests/bench/slowdown.sh [PYTHON...] — what sampling at 1 kHz, non-blocking
# (`perf -r 1000`, threads never stopped), costs the target (issue 11:
# <= 1 %).  One target process per interpreter does the same fixed amount of
# pure-Python work in phases, alternately alone and sampled (FP_BENCH_RUNS
# pairs, default 7): the same process, heap and CPU placement on both sides.
# Prints the median of the sampled/alone ratios, in wall time and in the
# target's own CPU time (on a loaded 2-core machine the wall time also
# counts the CPU the sampler takes from everything else).  Not a pass/fail
# test: it prints numbers and whether they are within the budget.
set -eu
builddir=${FP_BUILDDIR:-$(pwd)}
srcdir=${FP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
bin="$builddir/flight_profiler"
tgt="$srcdir/tests/bench/sampler_target.py"
runs=${FP_BENCH_RUNS:-7}
work=${FP_BENCH_WORK:-30000}
out=$(mktemp -d)
target= sampler=
cleanup() {
	[ -z "$sampler" ] || kill "$sampler" 2>/dev/null || true
	[ -z "$target" ] || kill "$target" 2>/dev/null || true
	rm -rf "$out"
}
trap cleanup EXIT
[ -x "$bin" ] || { echo "build first: make" >&2; exit 1; }
if [ $# -eq 0 ]; then
	set -- $(cut -d' ' -f5 "$builddir/pythons.list")
fi

median_pct() {	# ratios, one a line -> "+x.x%" of the median
	sort -n | awk '{ v[NR] = $1 } END {
		m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		printf "%+.2f%%", (m - 1) * 100 }'
}

phase() {	# one phase of work; prints "wall cpu"
	echo go >&4
	read -r line <&5
	echo "$line"
}

echo "machine: $(uname -srm), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "budget: target slowdown <= 1 % when sampled at 1 kHz without stopping it"
printf '%-8s %6s %12s %12s %s\n' python pairs "wall" "target cpu" verdict
for py in "$@"; do
	version=$("$py" -c 'import platform; print(platform.python_version())')
	mkfifo "$out/ready" "$out/in" "$out/out"
	# opened read-write first: no open blocks waiting for the other end
	exec 4<>"$out/in" 5<>"$out/out" 6<>"$out/ready"
	FP_READY_FD=3 "$py" "$tgt" phases "$work" 3>"$out/ready" <"$out/in" >"$out/out" \
	    4>&- 5<&- 6<&- &
	target=$!
	read -r _ <&6
	phase >/dev/null	# warm-up
	: >"$out/wall"; : >"$out/cpu"
	i=0
	while [ $i -lt "$runs" ]; do
		alone=$(phase)
		"$bin" "$target" --cmd "perf -r 1000 -d 600 -f $out/s.collapsed" >"$out/perf.log" 2>&1 \
		    4>&- 5<&- 6<&- &
		sampler=$!
		sleep 0.5	# attached and sampling before the phase starts
		sampled=$(phase)
		kill -INT "$sampler" 2>/dev/null || true
		wait "$sampler" 2>/dev/null || true
		sampler=
		echo "$alone $sampled" | awk '{ printf "%.5f\n", $3 / $1 }' >>"$out/wall"
		echo "$alone $sampled" | awk '{ printf "%.5f\n", $4 / $2 }' >>"$out/cpu"
		i=$((i + 1))
	done
	exec 4>&- 5<&- 6<&-
	wait "$target" 2>/dev/null || true
	target=
	rm -f "$out/ready" "$out/in" "$out/out"
	wall=$(median_pct <"$out/wall")
	cpu=$(median_pct <"$out/cpu")
	verdict=$(echo "$cpu" | awk '{ v = $1 + 0; print (v <= 1.0 ? "within budget" : "OVER budget") }')
	printf '%-8s %6s %12s %12s %s (target cpu)\n' "$version" "$runs" "$wall" "$cpu" "$verdict"
	grep -o '[0-9.]* Hz of 1000.*' "$out/perf.log" | sed 's/^/         last sampled phase: /' || true
done
