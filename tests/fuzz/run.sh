#!/bin/sh
# tests/fuzz/run.sh — build the protocol decoder's libFuzzer target with
# clang (AddressSanitizer + UndefinedBehaviorSanitizer) and run it for
# FUZZ_SECONDS (default 10: the short run `make check` does; `make fuzz`
# runs 60 s, or what FUZZ_SECONDS says).  Prints TAP.  The corpus grows in
# the build tree (tests/fuzz/corpus-work), seeded from tests/fuzz/corpus;
# crashes are saved there as crash-* and make the test fail.
set -u
srcdir=${FP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
builddir=${FP_BUILDDIR:-$(pwd)}
seconds=${FUZZ_SECONDS:-10}
clang=${CLANG:-clang}
out=$builddir/tests/fuzz
echo "1..1"
if ! command -v "$clang" >/dev/null 2>&1; then
	echo "ok 1 - protocol decoder fuzzing # SKIP no clang (apt-get install clang)"
	exit 0
fi
mkdir -p "$out/corpus-work"
cflags=$(pkg-config --cflags jansson 2>/dev/null)
libs=$(pkg-config --libs jansson 2>/dev/null || echo -ljansson)
if ! "$clang" -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	-I"$builddir" -I"$srcdir" $cflags -o "$out/protocol_fuzz" \
	"$srcdir/tests/fuzz/protocol_fuzz.c" "$srcdir/core/protocol.c" $libs \
	>"$out/build.log" 2>&1; then
	if grep -q 'fuzzer' "$out/build.log" && ! ls "$("$clang" -print-resource-dir)"/lib/linux/libclang_rt.fuzzer-x86_64.a >/dev/null 2>&1; then
		echo "ok 1 - protocol decoder fuzzing # SKIP clang has no libFuzzer (apt-get install libclang-rt-dev)"
		exit 0
	fi
	echo "not ok 1 - protocol decoder fuzzing: the fuzzer did not build"
	sed 's/^/# /' "$out/build.log"
	exit 0
fi
cd "$out" || exit 0
rm -f crash-* leak-* timeout-* oom-*
./protocol_fuzz -max_total_time="$seconds" -max_len=65536 -timeout=10 -rss_limit_mb=1024 \
	-print_final_stats=1 corpus-work "$srcdir/tests/fuzz/corpus" >fuzz.log 2>&1
rc=$?
runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' fuzz.log | grep -o '[0-9]*$')
if [ $rc -eq 0 ] && ! ls crash-* leak-* timeout-* oom-* >/dev/null 2>&1; then
	echo "ok 1 - protocol decoder fuzzed for ${seconds}s, ${runs:-?} inputs, no crash"
else
	echo "not ok 1 - protocol decoder fuzzing found a problem (status $rc); inputs saved in $out"
	tail -n 40 fuzz.log | sed 's/^/# /'
fi
exit 0
