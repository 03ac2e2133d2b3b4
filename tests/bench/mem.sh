#!/bin/sh
# tests/bench/mem.sh [PYTHON] — `mem summary` on a target holding
# 1,000,000 objects (tests/bench/mem_target.py), measured in the same run:
#
#   wall time    of `mem summary`, next to a pure-Python gc.get_objects() +
#                sys.getsizeof pass in the target (its best of 3).
#                Budget: <= 1/3 of it.
#   GIL hold     the longest single GIL hold of the scan, as the agent
#                measured it.  Budget: <= 50 ms.
#   other thread a ticker thread of the target (sleep 1 ms, tick): its
#                ticks during the scan and its longest gap between two
#                ticks, seen from inside the program.
#
# Not pass/fail: prints the numbers and the budgets.
set -eu
. "$(dirname "$0")/lib.sh"
py=${1:-$(bench_python 3.12 head)}

now_ms() { date +%s%3N; }
global() { "$bin" "$target" --cmd "getglobal __main__ $1 -r" | sed -n 's/^VALUE: *//p'; }

bench_machine
bench_start mem_target.py target.out
while ! grep -q ready "$work/target.out" 2>/dev/null; do sleep 0.1; done
base=$(sed -n 's/^ready //p' "$work/target.out")
global TICKS >/dev/null		# load the agent outside the measurement
"$bin" "$target" --cmd "execute import __main__; __main__.MAX_GAP_MS = 0.0" >/dev/null
t0=$(global TICKS)
start=$(now_ms)
"$bin" "$target" --cmd "mem summary --limit 5" >"$work/summary.txt"
end=$(now_ms)
t1=$(global TICKS)
gap=$(global MAX_GAP_MS)
wall=$((end - start))
sed -n '1,4p' "$work/summary.txt"
hold=$(sed -n 's/.*longest GIL hold \([0-9.]*\) ms.*/\1/p' "$work/summary.txt")
awk -v w="$wall" -v b="$base" -v h="$hold" -v t="$((t1 - t0))" -v g="$gap" 'BEGIN {
	printf "mem summary wall time     %8.0f ms (the client, attach excluded)\n", w
	printf "pure-Python pass          %8.0f ms (gc.get_objects + sys.getsizeof, in the target)\n", b
	printf "ratio                     %8.2f    budget <= 0.33\n", w / b
	printf "longest GIL hold          %8.1f ms budget <= 50 ms\n", h
	printf "ticker during the scan    %8d ticks, longest gap %.1f ms (sleeps 1 ms per tick)\n", t, g
}'
