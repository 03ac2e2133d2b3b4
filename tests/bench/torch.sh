#!/bin/sh
# tests/bench/torch.sh [PYTHON] — what `torch modules` costs a CPU training
# loop (tests/bench/torch_target.py), in one run: the median step time of
# the steps under `torch modules -n 300` against the median of the steps
# just before and after it (the target records each step's own time and
# whether our hooks were on).  Budget: <= 5 % (ratio <= 1.05).
#
# Needs an interpreter with torch: by default the first of pythons.list
# that has it (Debian's python3-torch is for /usr/bin/python3.11).
# Not pass/fail: prints the numbers and the budget.
set -eu
builddir=${FP_BUILDDIR:-$(pwd)}
srcdir=${FP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
bin="$builddir/flight_profiler"
[ -x "$bin" ] || { echo "build first: make" >&2; exit 1; }
py=${1:-}
if [ -z "$py" ]; then
	for exe in $(cut -d' ' -f5 "$builddir/pythons.list"); do
		if "$exe" -c "import importlib.util, sys; sys.exit(importlib.util.find_spec('torch') is None)" \
		    2>/dev/null; then
			py=$exe
			break
		fi
	done
fi
[ -n "$py" ] || { echo "bench-torch: no configured interpreter has torch (apt-get install python3-torch)"; exit 0; }
work=$(mktemp -d)
target=""
cleanup() {
	[ -z "$target" ] || kill "$target" 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT INT TERM
export FP_AGENT_DIR="$builddir"

echo "machine: $(uname -srm), $(nproc) cores; target: $py ($("$py" -c 'import sys, torch; print(sys.version.split()[0], "torch", torch.__version__)'))"
"$py" "$srcdir/tests/bench/torch_target.py" >"$work/target.out" 2>&1 &
target=$!
while ! grep -q ready "$work/target.out" 2>/dev/null; do
	kill -0 "$target" 2>/dev/null || { cat "$work/target.out"; exit 1; }
	sleep 0.2
done
"$bin" "$target" --cmd "getglobal __main__ STEPS -x 0" >/dev/null	# load the agent first
sleep 2
"$bin" "$target" --cmd "torch modules -n 300" >"$work/modules.txt"
sleep 2
sed -n '2p' "$work/modules.txt"
res=$("$bin" "$target" --cmd 'execute "import __main__; print(__main__.summary(1500))"')
echo "$res" | awk '{
	if (NF != 5) { print "bench-torch: " $0; exit }
	printf "steps without hooks       %8d, median %.3f ms\n", $1, $3
	printf "steps under torch modules %8d, median %.3f ms\n", $2, $4
	printf "ratio                     %8.3f    budget <= 1.05\n", $5
}'
