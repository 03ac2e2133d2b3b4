#!/bin/sh
# tests/bench/procset.sh [PYTHON] — `stack --group` over a process tree
# (issue 13) next to one `stack` per process, measured in the same run:
# a job of 32 processes x 8 threads (tests/bench/procset_target.py), the
# wall time of `flight_profiler ROOT --tree --cmd "stack --group"` against
# that of 32 single-process `flight_profiler PID --cmd stack` calls, each
# the median of FP_BENCH_RUNS runs (default 3).  Budget: the set at most a
# third of the 32 calls.  Prints numbers and the verdict; fails only when
# the grouped output is not the whole job.
set -eu
. "$(dirname "$0")/lib.sh"
py=${1:-$(bench_python 3.12)}
runs=${FP_BENCH_RUNS:-3}

ms() { echo $(($(date +%s%N) / 1000000)); }
median() { tr ' ' '\n' | grep . | sort -n | awk '{ v[NR] = $1 } END {
	printf "%d", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

bench_start procset_target.py target.out	# 32 processes x 8 threads
while ! grep -q '^ready' "$work/target.out" 2>/dev/null; do
	kill -0 "$target" 2>/dev/null || { cat "$work/target.out" >&2; exit 1; }
	sleep 0.05
done
pids=$(sed -n 's/^ready //p' "$work/target.out")
nprocs=$(echo "$pids" | wc -w)
bench_machine
echo "job: $nprocs processes x 8 threads, load $(cut -d' ' -f1-3 /proc/loadavg)"

sets= singles=
i=0
while [ $i -lt "$runs" ]; do
	t0=$(ms)
	"$bin" "$target" --tree --cmd "stack --group" >"$work/group.out"
	t1=$(ms)
	for p in $pids; do
		"$bin" "$p" --cmd stack >/dev/null
	done
	t2=$(ms)
	sets="$sets $((t1 - t0))" singles="$singles $((t2 - t1))"
	i=$((i + 1))
done
head -1 "$work/group.out"
grep -q "^Process set: $nprocs processes, $nprocs Python ($((nprocs * 8)) threads)" "$work/group.out" ||
    { echo "stack --group did not read the whole job" >&2; cat "$work/group.out" >&2; exit 1; }
set_ms=$(echo "$sets" | median)
one_ms=$(echo "$singles" | median)
awk -v s="$set_ms" -v o="$one_ms" -v n="$nprocs" 'BEGIN {
	r = o > 0 ? s / o : 0
	printf "stack --tree --group: %d ms; %d single stack calls: %d ms; ratio %.3f (budget <= 0.333): %s\n",
	    s, n, o, r, r <= 1 / 3 ? "within budget" : "OVER budget"
}'
