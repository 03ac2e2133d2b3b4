#!/bin/sh
# tests/bench/tui.sh [PYTHON] — what the live TUI costs, measured on the real
# binary in a tmux pane (200x50, TERM=screen-256color):
#
#   idle CPU    the TUI refreshing every second (-d 1) on a 20-thread,
#               30-deep target, over 10 s; baseline: the same TUI paused
#               (-d 3600: no reads), so the ratio is what refreshing costs.
#               Budget: <= 1% of one core.
#   memory      RSS (VmHWM: the peak) of the TUI showing 1,000 threads x 50
#               frames; baseline: the 20-thread target.  Budget: <= 30 MB.
#
# Then tests/bench/tuidraw (draw cost of 1,000 x 50).  Not pass/fail.
set -eu
builddir=${FP_BUILDDIR:-$(pwd)}
srcdir=${FP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
bin="$builddir/flight_profiler"
secs=${FP_BENCH_SECONDS:-10}
py=${1:-$(grep ' 3\.12\.' "$builddir/pythons.list" | head -1 | cut -d' ' -f5)}
[ -n "$py" ] || py=$(tail -1 "$builddir/pythons.list" | cut -d' ' -f5)
command -v tmux >/dev/null || { echo "tmux is needed (apt-get install tmux)" >&2; exit 1; }
[ -x "$bin" ] || { echo "build first: make" >&2; exit 1; }
work=$(mktemp -d)
sock=fpbench-$$
targets=""
cleanup() {
	tmux -L "$sock" kill-server 2>/dev/null || true
	for p in $targets; do kill "$p" 2>/dev/null || true; done
	rm -rf "$work"
}
trap cleanup EXIT INT TERM

start_target() {	# script args... -> sets $target
	mkfifo "$work/ready"
	FP_READY_FD=3 "$py" "$@" 3>"$work/ready" &
	target=$!
	targets="$targets $target"
	read -r _ <"$work/ready"
	rm -f "$work/ready"
}

# run_tui DELAY TARGET -> sets $tui (pid of the TUI), waits for its screen
run_tui() {
	rm -f "$work/pid"
	tmux -L "$sock" -f /dev/null kill-server 2>/dev/null || true
	LANG=C.UTF-8 tmux -u -L "$sock" -f /dev/null new-session -d -x 200 -y 50 \
	    "env TERM=screen-256color LANG=C.UTF-8 XDG_STATE_HOME=$work sh -c 'echo \$\$ >$work/pid; exec $bin -d $1 $2'"
	tmux -L "$sock" set-option -g status off
	i=0
	while ! tmux -L "$sock" capture-pane -p 2>/dev/null | grep -q "Threads $3"; do
		i=$((i + 1)); [ $i -lt 600 ] || { echo "the TUI never showed $3 threads" >&2; exit 1; }
		sleep 0.05
	done
	tui=$(cat "$work/pid")
}

ticks() {	# utime + stime of a process, in clock ticks
	sed 's/^.*) //' "/proc/$1/stat" | awk '{ print $12 + $13 }'
}

cpu_percent() {	# PID SECONDS
	t0=$(ticks "$1"); s0=$(date +%s.%N)
	sleep "$2"
	t1=$(ticks "$1"); s1=$(date +%s.%N)
	echo "$t0 $t1 $s0 $s1 $(getconf CLK_TCK)" | awk '{ printf "%.2f", ($2 - $1) * 100 / $5 / ($4 - $3) }'
}

kb() { awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/status"; }

echo "machine: $(uname -srm), $(nproc) cores; CPython: $("$py" -c 'import platform; print(platform.python_version())')"

start_target "$srcdir/tests/bench/stack_target.py"
small=$target
run_tui 3600 "$small" 21
paused=$(cpu_percent "$tui" "$secs")
run_tui 1 "$small" 21
live=$(cpu_percent "$tui" "$secs")
rss_small=$(kb "$tui" VmHWM)
echo "idle CPU, 20 threads, -d 1, ${secs}s:    ${live}% of one core   (baseline, no refresh: ${paused}%)   budget 1%"

start_target "$srcdir/tests/bench/stack_target.py" 1000 50
big=$target
run_tui 1 "$big" 1001
sleep 3	# a few refreshes: the peak includes two snapshots at once
rss_big=$(kb "$tui" VmHWM)
big_cpu=$(cpu_percent "$tui" "$secs")
echo "memory, 1000 threads x 50 frames:     $(awk -v k="$rss_big" 'BEGIN { printf "%.1f", k / 1024 }') MB peak RSS   (baseline, 20 threads: $(awk -v k="$rss_small" 'BEGIN { printf "%.1f", k / 1024 }') MB)   budget 30 MB"
echo "idle CPU, 1000 threads x 50, -d 1:    ${big_cpu}% of one core"
tmux -L "$sock" kill-server 2>/dev/null || true

if [ -x "$builddir/tests/bench/tuidraw" ]; then
	"$builddir/tests/bench/tuidraw"
else
	echo "(make tests/bench/tuidraw for the draw cost)"
fi
