#!/bin/sh
# tests/bench/watch.sh [PYTHON] — what `watch` costs the watched function:
# ns per call of tiny() before, while and after it is watched (default
# --expr), next to the same body never watched (plain) and under a plain
# Python decorator doing the same capture (decorated), all measured by the
# target itself in the same run (tests/bench/watch_target.py).
#
# Then the mechanism alone (tests/bench/observe_cost.py, run inside the
# target by `execute`: the agent's own hooks, no worker formatting records
# on the target's GIL; on 3.12+ its C callbacks and the Python ones).
#
# Not pass/fail: prints the numbers and the ratios.  The issue's budget:
# watch's added cost <= 1/2 of the decorator's; after the watch, tiny() is
# back to plain's cost.
set -eu
. "$(dirname "$0")/lib.sh"
# No interpreter named: the issue's two, 3.11 (__code__ swap) and 3.13
# (sys.monitoring), one after the other.
if [ $# -eq 0 ]; then
	for v in 3.11 3.13; do
		p=$(grep " $v\." "$builddir/pythons.list" | tail -1 | cut -d' ' -f5)
		if [ -n "$p" ]; then "$0" "$p"; else echo "no CPython $v in pythons.list"; fi
	done
	exit 0
fi
py=$1
bench_start watch_target.py rounds

# median of column $1 (2: tiny, 4: plain, 6: decorated) over the last $2 rounds.
median() {
	tail -n "$2" "$work/rounds" | awk -v c="$1" '{ print $(c + 2) }' | sort -n |
	    awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

bench_machine
wait_rounds 5
"$bin" "$target" --cmd "getglobal __main__ CALLS" >/dev/null	# load the agent first
wait_rounds 5
before_tiny=$(median 2 5) before_plain=$(median 4 5) deco=$(median 6 5)
client_start "watch __main__ tiny -n 1000000000"
wait_rounds 5
during_tiny=$(median 2 5) during_plain=$(median 4 5)
client_stop
shown=$(grep -c '^\[' "$work/client.out" || true)
wait_rounds 5
after_tiny=$(median 2 5) after_plain=$(median 4 5)

awk -v bt="$before_tiny" -v bp="$before_plain" -v d="$deco" -v dt="$during_tiny" \
    -v dp="$during_plain" -v at="$after_tiny" -v ap="$after_plain" -v shown="$shown" 'BEGIN {
	printf "ns per call (median of 5 rounds of 100,000 calls each)\n"
	printf "  %-28s %8s %8s\n", "", "tiny", "plain"
	printf "  %-28s %8.1f %8.1f\n", "before watch", bt, bp
	printf "  %-28s %8.1f %8.1f   (%d records shown)\n", "while watched", dt, dp, shown
	printf "  %-28s %8.1f %8.1f\n", "after watch (Ctrl-C)", at, ap
	printf "  %-28s %8.1f\n", "plain decorator, same capture", d
	printf "watched / unwatched:        %.2fx\n", dt / dp
	printf "added cost: watch %.1f ns, decorator %.1f ns: ratio %.2f (budget <= 0.50)\n",
	    dt - dp, d - bp, (dt - dp) / (d - bp)
	printf "after the watch / before:   %.2fx (plain: %.2fx)\n", at / bt, ap / bp
}'
echo "mechanism alone (best of 7 rounds of 100,000 calls, every call queues a record):"
"$bin" "$target" --cmd "execute $srcdir/tests/bench/observe_cost.py -t 300" | sed 's/^/  /'
