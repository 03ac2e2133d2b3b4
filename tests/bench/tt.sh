#!/bin/sh
# tests/bench/tt.sh [PYTHON] — what `tt` costs: ns per call of rec() while
# it is recorded next to plain() (same body, never recorded) in the same
# rounds, and what the store keeps per record: its own estimate (tt -l)
# and the target's RSS growth, over a 10,000-call recording
# (tests/bench/tt_target.py), then the RSS after tt -da.
#
# Not pass/fail: prints the numbers and the ratios.
set -eu
. "$(dirname "$0")/lib.sh"
py=${1:-$(bench_python 3.11)}
bench_start tt_target.py rounds

# mean of column $1 (2: rec, 4: plain) over rounds $2..$3 (line numbers): a
# mean, not a median, so that the rounds where the agent's worker stored
# records (holding the GIL) count as they cost.
median() {
	sed -n "$2,$3p" "$work/rounds" | awk -v c="$1" '{ s += $(c + 2); n++ } END { print s / n }'
}
rss() { awk '/^VmRSS:/ { print $2 * 1024 }' "/proc/$target/status"; }
# Python's allocated memory blocks in the target (sys.getallocatedblocks).
blocks() { "$bin" "$target" --cmd 'execute "import sys; print(sys.getallocatedblocks())"'; }

bench_machine
wait_rounds 5
"$bin" "$target" --cmd "getglobal __main__ CALLS" >/dev/null	# load the agent first
wait_rounds 10
n0=$(wc -l <"$work/rounds")
before_rec=$(median 2 $((n0 - 9)) "$n0") before_plain=$(median 4 $((n0 - 9)) "$n0")
rss0=$(rss) blocks0=$(blocks)
s=$(wc -l <"$work/rounds")
"$bin" "$target" --cmd "tt -t __main__ rec -n 10000 --store-records 10000" >"$work/tt.out"
e=$(wc -l <"$work/rounds")
rss1=$(rss) blocks1=$(blocks)
during_rec=$(median 2 $((s + 1)) "$e") during_plain=$(median 4 $((s + 1)) "$e")
"$bin" "$target" --cmd "tt -l" >"$work/list.out"
store=$(grep '^store:\|records listed' "$work/list.out" | tail -1)
bytes=$(echo "$store" | sed -n 's/.*, \([0-9.]*\) \(B\|KiB\|MiB\) kept alive.*/\1 \2/p')
recorded=$(sed -n 's/^tt: recorded \([0-9]*\) calls.*/\1/p' "$work/tt.out")
dropped=$(sed -n 's/^tt: \([0-9]*\) calls were not recorded.*/\1/p' "$work/tt.out" | tail -1)
"$bin" "$target" --cmd "tt -da" >/dev/null
"$bin" "$target" --cmd "vmtool --action forceGc" >/dev/null 2>&1 || true
rss2=$(rss) blocks2=$(blocks)

awk -v br="$before_rec" -v bp="$before_plain" -v dr="$during_rec" -v dp="$during_plain" \
    -v rec="${recorded:-0}" -v drop="${dropped:-0}" -v bytes="$bytes" -v r0="$rss0" \
    -v r1="$rss1" -v r2="$rss2" -v b0="$blocks0" -v b1="$blocks1" -v b2="$blocks2" \
    -v rounds=$((e - s)) 'BEGIN {
	split(bytes, b, " ")
	est = b[1] * (b[2] == "MiB" ? 1048576 : b[2] == "KiB" ? 1024 : 1)
	printf "ns per call (mean of rounds of 500 calls, 3 small arguments)\n"
	printf "  %-26s %8s %8s\n", "", "rec", "plain"
	printf "  %-26s %8.1f %8.1f\n", "before tt -t", br, bp
	printf "  %-26s %8.1f %8.1f   (%d rounds)\n", "while recorded", dr, dp, rounds
	printf "recorded %d calls, %d dropped\n", rec, drop
	printf "recording: %.2fx an unrecorded call; %.0f ns added per call (against the same\n", \
	    (dr / dp) / (br / bp), (dr - dp) - (br - bp)
	printf "  rec/plain gap before tt -t: the worker storing records included)\n"
	if (rec > 0) {
		printf "store estimate: %.0f bytes per record (tt -l: %s)\n", est / rec, bytes
		printf "target RSS: +%.0f bytes per record while stored (%.1f MiB for %d)\n",
		    (r1 - r0) / rec, (r1 - r0) / 1048576, rec
		printf "Python memory blocks: +%.1f per record while stored\n", (b1 - b0) / rec
	}
	printf "after tt -da: %+d blocks against before tt -t (RSS %+.1f MiB: freed\n", b2 - b0,
	    (r2 - r0) / 1048576
	printf "  pymalloc arenas are not always given back to the system)\n"
}'
