#!/bin/sh
# The agent under ASan/UBSan (DESIGN.md 9): runs tests/agent_asan/harness.t,
# a program that embeds CPython and dlopens the sanitizer build of the agent
# next to it, with sanitizer options that make any report fatal.  Its TAP
# goes to automake's driver; a report aborts the run, which fails the test.
# Built and run only by a tree configured with --enable-sanitizers.
set -u
build=${FP_BUILDDIR:-.}
src=${FP_SRCDIR:-$(dirname "$0")/../..}
harness=$build/tests/agent_asan/harness.t
agent=
for a in "$build"/tests/agent_asan/fpagent-cp3*.so; do
	[ -f "$a" ] && agent=$a
done
if [ -z "$agent" ] || [ ! -x "$harness" ]; then
	echo "1..0 # SKIP no sanitizer build of the agent (configure --enable-sanitizers)"
	exit 0
fi
# halt_on_error / abort: the first report ends the run with a failure.
# Full (slow) stacks for allocations, so a report through libpython still
# shows the agent frames.  Leaks: CPython's own never-freed allocations are suppressed by
# lsan.supp (frames in libpython only); anything the agent leaks is not.
ASAN_OPTIONS="detect_leaks=1:fast_unwind_on_malloc=0:halt_on_error=1:abort_on_error=0:strict_string_checks=1:detect_stack_use_after_return=1:check_initialization_order=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
LSAN_OPTIONS="suppressions=$src/tests/agent_asan/lsan.supp:print_suppressions=1${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
export ASAN_OPTIONS LSAN_OPTIONS UBSAN_OPTIONS
# The interpreter must not pick up the user's site or startup files.
PYTHONNOUSERSITE=1
export PYTHONNOUSERSITE
unset PYTHONSTARTUP PYTHONPATH PYTHONHOME
exec "$harness" "$agent"
