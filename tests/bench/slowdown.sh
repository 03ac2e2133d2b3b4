#!/bin/sh
# tests/bench/slowdown.sh [PYTHON...] — what sampling at 1 kHz, non-blocking
# (`perf -r 1000`, threads never stopped), costs the target (issue 11:
# <= 1 %).  One target process per interpreter does the same fixed amount of
# pure-Python work in short phases, alternately alone and sampled
# (FP_BENCH_RUNS pairs, default 61): the same process, heap and CPU
# placement on both sides.
#
# One sampler runs for the whole run and is stopped (SIGSTOP) during the
# phases alone and continued (SIGCONT) for the sampled ones: no attach, no
# start-up and no exit inside or between phases, so pairs can be short and
# many.  (A non-blocking sampler holds nothing of the target while it is
# stopped; after SIGCONT it starts its ticks again from now.)  Pairs are
# ordered ABBA (alone first in one, sampled first in the next) so that a
# drift of the machine's speed through the run does not lean on one side.
#
# Prints the median of the sampled/alone ratios, in wall time and in the
# target's own CPU time (on a loaded 2-core machine the wall time also
# counts the CPU the sampler takes from everything else), each with its
# 95 % confidence interval (the order statistics around the median: no
# assumption about the noise's shape).  The verdict is on the target's
# CPU time: within budget when the interval's upper end is <= 1 %, over
# when its lower end is above, else undecided (too noisy: more pairs).
# Not a pass/fail test: it prints numbers.
set -eu
builddir=${FP_BUILDDIR:-$(pwd)}
srcdir=${FP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
bin="$builddir/flight_profiler"
tgt="$srcdir/tests/bench/sampler_target.py"
runs=${FP_BENCH_RUNS:-61}
work=${FP_BENCH_WORK:-16000}
out=$(mktemp -d)
target= sampler=
cleanup() {
	if [ -n "$sampler" ]; then
		kill -CONT "$sampler" 2>/dev/null || true
		kill "$sampler" 2>/dev/null || true
	fi
	[ -z "$target" ] || kill "$target" 2>/dev/null || true
	rm -rf "$out"
}
trap cleanup EXIT
[ -x "$bin" ] || { echo "build first: make" >&2; exit 1; }
if [ $# -eq 0 ]; then
	set -- $(cut -d' ' -f5 "$builddir/pythons.list")
fi

pct() {	# ratios, one a line -> "+m.mm% (+lo..+hi)": median and its 95 % interval
	sort -n | awk '
	    { v[NR] = $1 }
	    END {
		m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		# ranks n/2 -+ 1.96 sqrt(n)/2 (the binomial around the median)
		lo = int(NR / 2 - 0.98 * sqrt(NR)); hi = int(NR / 2 + 1 + 0.98 * sqrt(NR) + 0.999)
		if (lo < 1) lo = 1; if (hi > NR) hi = NR
		printf "%+.2f%% (%+.2f..%+.2f)", (m - 1) * 100, (v[lo] - 1) * 100, (v[hi] - 1) * 100 }'
}

phase() {	# one phase of work; prints "wall cpu"
	echo go >&4
	read -r line <&5
	echo "$line"
}

echo "machine: $(uname -srm), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "budget: target slowdown <= 1 % when sampled at 1 kHz without stopping it"
echo "median of sampled/alone per pair (its 95 % confidence interval)"
printf '%-8s %5s %24s %24s %s\n' python pairs "wall" "target cpu" verdict
for py in "$@"; do
	version=$("$py" -c 'import platform; print(platform.python_version())')
	mkfifo "$out/ready" "$out/in" "$out/out"
	# opened read-write first: no open blocks waiting for the other end
	exec 4<>"$out/in" 5<>"$out/out" 6<>"$out/ready"
	FP_READY_FD=3 "$py" "$tgt" phases "$work" 3>"$out/ready" <"$out/in" >"$out/out" \
	    4>&- 5<&- 6<&- &
	target=$!
	read -r _ <&6
	"$bin" "$target" --cmd "perf -r 1000 -d 3600 -f $out/s.collapsed" >"$out/perf.log" 2>&1 \
	    4>&- 5<&- 6<&- &
	sampler=$!
	sleep 0.5	# attached and sampling
	kill -STOP "$sampler"
	phase >/dev/null	# warm-up
	: >"$out/wall"; : >"$out/cpu"; : >"$out/spans"
	i=0
	while [ $i -lt "$runs" ]; do
		if [ $((i % 2)) -eq 0 ]; then
			alone=$(phase)
			kill -CONT "$sampler"; sampled=$(phase); kill -STOP "$sampler"
		else
			kill -CONT "$sampler"; sampled=$(phase); kill -STOP "$sampler"
			alone=$(phase)
		fi
		echo "$sampled" | cut -d' ' -f1 >>"$out/spans"
		echo "$alone $sampled" | awk '{ printf "%.5f\n", $3 / $1 }' >>"$out/wall"
		echo "$alone $sampled" | awk '{ printf "%.5f\n", $4 / $2 }' >>"$out/cpu"
		i=$((i + 1))
	done
	kill -CONT "$sampler"
	kill -INT "$sampler" 2>/dev/null || true
	wait "$sampler" 2>/dev/null || true
	sampler=
	exec 4>&- 5<&- 6<&-
	wait "$target" 2>/dev/null || true
	target=
	rm -f "$out/ready" "$out/in" "$out/out"
	wall=$(pct <"$out/wall")
	cpu=$(pct <"$out/cpu")
	verdict=$(echo "$cpu" | sed 's/.*(\(.*\)\.\.\(.*\)).*/\1 \2/' | awk '{ lo = $1 + 0; hi = $2 + 0 }
	    END { print (hi <= 1.0 ? "within budget" : lo > 1.0 ? "OVER budget" : "undecided") }')
	printf '%-8s %5s %24s %24s %s (target cpu)\n' "$version" "$runs" "$wall" "$cpu" "$verdict"
	# The samples over the sampled phases' wall time: the rate they had.
	reads=$(sed -n 's/.* samples from \([0-9][0-9]*\) reads.*/\1/p' "$out/perf.log" | head -1)
	awk -v n="${reads:-0}" '{ s += $1 } END {
	    printf "         %d reads: %.1f s of sampled phases, and 0.5 s before them\n",
		n, s }' "$out/spans"
done
