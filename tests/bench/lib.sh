# tests/bench/lib.sh — what the benchmarks that drive a target share;
# sourced (after `set -eu`) by tt.sh, trace.sh, mem.sh and watch.sh:
#
#   builddir srcdir bin     the build (FP_BUILDDIR, FP_SRCDIR) and its binary
#   bench_python V [head]   pythons.list's CPython V.x (its last, or first
#                           with head), else the list's last interpreter
#   work                    a scratch directory, removed on exit
#   bench_start SCRIPT OUT  runs tests/bench/SCRIPT under $py, its output
#                           in $work/OUT; $target is its pid, killed on exit
#   wait_rounds N           until the target printed N more rounds
#                           ($work/rounds)
#   client_start CMD        `flight_profiler $target --cmd CMD` in the
#                           background, until its first record; its output
#                           in $work/client.out, $client its pid
#   client_stop             Ctrl-C to it, and wait for its end
#   bench_machine           the machine and the target's version, one line
builddir=${FP_BUILDDIR:-$(pwd)}
srcdir=${FP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
bin="$builddir/flight_profiler"
[ -x "$bin" ] || { echo "build first: make" >&2; exit 1; }
export FP_AGENT_DIR="$builddir"

bench_python() {
	p=$(grep " $(echo "$1" | sed 's/\./\\./g')\." "$builddir/pythons.list" | "${2:-tail}" -1 |
	    cut -d' ' -f5)
	[ -n "$p" ] || p=$(tail -1 "$builddir/pythons.list" | cut -d' ' -f5)
	echo "$p"
}

work=$(mktemp -d)
target="" client=""
bench_cleanup() {
	[ -z "$client" ] || kill "$client" 2>/dev/null || true
	[ -z "$target" ] || kill "$target" 2>/dev/null || true
	rm -rf "$work"
}
trap bench_cleanup EXIT INT TERM

bench_start() {
	"$py" "$srcdir/tests/bench/$1" >"$work/$2" 2>&1 &
	target=$!
}

wait_rounds() {
	want=$(($(wc -l <"$work/rounds") + $1))
	while [ "$(wc -l <"$work/rounds")" -lt "$want" ]; do
		kill -0 "$target" 2>/dev/null || { echo "the target exited:" >&2; tail -5 "$work/rounds" >&2; exit 1; }
		sleep 0.05
	done
}

client_start() {
	"$bin" "$target" --cmd "$1" >"$work/client.out" 2>&1 &
	client=$!
	while ! grep -q '^\[1\]' "$work/client.out" 2>/dev/null; do sleep 0.05; done
}

client_stop() {
	kill -INT "$client"
	wait "$client" || true
	client=""
}

bench_machine() {
	echo "machine: $(uname -srm), $(nproc) cores; target: $("$py" -c 'import sys; print(sys.version.split()[0])')"
}
